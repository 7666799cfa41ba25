#!/usr/bin/env bash
# Builds kspmv against Kokkos 4 with the OpenMP backend and runs every test.
#   scripts/test-kokkos4.sh [KOKKOS_SOURCE]
# KOKKOS_SOURCE (or $KOKKOS_SOURCE): a Kokkos source tarball (the 4.6.01 release,
# kokkos-4.6.01.tar.gz from github.com/kokkos/kokkos) or source directory. Kokkos is built with
# OpenMP and Serial and installed in $KOKKOS_PREFIX (default: build-kokkos4/kokkos in the
# repository) unless that prefix holds an installed Kokkos already; then no source is needed.
# kspmv is built in $BUILD_DIR (default: build-kokkos4/kspmv); $CMAKE_ARGS adds CMake arguments
# (e.g. CMAKE_ARGS="-DKSPMV_ENABLE_CUDA=OFF"). Tests run with $OMP_NUM_THREADS threads each
# (default 2), as many at once as the cores allow.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source_path="${1:-${KOKKOS_SOURCE:-}}"
prefix="${KOKKOS_PREFIX:-$repo/build-kokkos4/kokkos}"
build_dir="${BUILD_DIR:-$repo/build-kokkos4/kspmv}"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

if ! compgen -G "$prefix/lib*/cmake/Kokkos/KokkosConfig.cmake" >/dev/null; then
  [[ -n "$source_path" ]] || {
    echo "test-kokkos4.sh: no Kokkos in $prefix; give the Kokkos source tarball or directory" >&2
    exit 2
  }
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  if [[ -d "$source_path" ]]; then
    src="$source_path"
  else
    echo "==> unpacking $source_path"
    mkdir "$work/src"
    tar xzf "$source_path" -C "$work/src" --strip-components=1
    src="$work/src"
  fi
  echo "==> building Kokkos (OpenMP, Serial) into $prefix"
  cmake -S "$src" -B "$work/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_STANDARD=17 -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_OPENMP=ON \
    "-DCMAKE_INSTALL_PREFIX=$prefix"
  cmake --build "$work/build" -j "$(nproc)"
  cmake --install "$work/build"
fi

echo "==> building kspmv in $build_dir against the Kokkos in $prefix"
# shellcheck disable=SC2086  # CMAKE_ARGS is a list of arguments
cmake -S "$repo" -B "$build_dir" "${generator[@]}" "-DCMAKE_PREFIX_PATH=$prefix" ${CMAKE_ARGS:-}
kokkos_dir="$(sed -n 's/^Kokkos_DIR:PATH=//p' "$build_dir/CMakeCache.txt")"
if [[ "$(cd "$kokkos_dir" && pwd -P)" != "$(cd "$prefix" && pwd -P)"/* ]]; then
  echo "test-kokkos4.sh: $build_dir uses the Kokkos in $kokkos_dir, not the one in $prefix" \
    "(remove $build_dir or set BUILD_DIR)" >&2
  exit 1
fi
cmake --build "$build_dir" -j "$(nproc)"

export OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}"
jobs=$(($(nproc) / OMP_NUM_THREADS))
((jobs > 0)) || jobs=1
echo "==> running the tests ($OMP_NUM_THREADS OpenMP threads each, $jobs at once)"
ctest --test-dir "$build_dir" --output-on-failure -j "$jobs" --timeout 900
