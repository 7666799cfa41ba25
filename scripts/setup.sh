#!/usr/bin/env bash
# Installs what kspmv needs on Debian 12 (as root, skipped when already installed), then
# configures and builds it in $BUILD_DIR (default: build/ in the repository); with
# --packages-only, installs and stops. MPI and Trilinos' Tpetra, Teuchos, Epetra and Belos are
# for the optional Tpetra adapter (KSPMV_ENABLE_TPETRA=AUTO builds it when they are found).
# CUDA is used when nvcc is found (KSPMV_ENABLE_CUDA=AUTO); extra CMake arguments may be passed
# in $CMAKE_ARGS (e.g. CMAKE_ARGS="-DKSPMV_ENABLE_CUDA=OFF").
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${BUILD_DIR:-$repo/build}"
packages=(cmake g++ ninja-build pkg-config libtrilinos-kokkos-dev libtrilinos-kokkos-kernels-dev
          libgtest-dev zlib1g-dev libhwloc-dev
          # the Tpetra adapter and its MPI tests (KSPMV_ENABLE_TPETRA)
          libtrilinos-tpetra-dev libtrilinos-teuchos-dev libtrilinos-epetra-dev
          libtrilinos-belos-dev libopenmpi-dev openmpi-bin)
if [[ "${KSPMV_ALSO_CLANG:-0}" == 1 ]]; then
  packages+=(clang)  # the second build of scripts/test.sh
fi
if [[ "${CI:-}" == true ]]; then
  packages+=(clang-format ccache)  # scripts/check-format.sh; .ci/run's compiler launcher
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} > 0)); then
  echo "==> installing ${missing[*]}"
  sudo=()
  if ((EUID != 0)); then
    command -v sudo >/dev/null || { echo "setup.sh: run as root to install: ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update
  "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
else
  echo "==> build dependencies already installed"
fi

if [[ "${1:-}" == --packages-only ]]; then
  exit 0
fi

generator=()
if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
  generator=(-G Ninja)
fi
echo "==> configuring in $build_dir"
# shellcheck disable=SC2086  # CMAKE_ARGS is a list of words
cmake -S "$repo" -B "$build_dir" "${generator[@]}" ${CMAKE_ARGS:-}
echo "==> building with $(nproc) jobs"
cmake --build "$build_dir" -j "$(nproc)"
