#!/usr/bin/env bash
# Builds kspmv against Kokkos 4 with the OpenMP backend and runs every test.
#   scripts/test-kokkos4.sh [KOKKOS_SOURCE]
# KOKKOS_SOURCE (or $KOKKOS_SOURCE): a Kokkos source tarball (the 4.6.01 release,
# kokkos-4.6.01.tar.gz from github.com/kokkos/kokkos), its URL, or a source directory: Kokkos is
# built with OpenMP and Serial as part of the kspmv build (the CMake option KSPMV_KOKKOS_SOURCE).
# $KOKKOS_PREFIX instead names an installed Kokkos to build against. kspmv is built in $BUILD_DIR
# (default: build-kokkos4 in the repository); $CMAKE_ARGS adds CMake arguments (e.g.
# CMAKE_ARGS="-DKSPMV_ENABLE_CUDA=OFF"). Tests run with $OMP_NUM_THREADS threads each (default
# 2), as many at once as the cores allow.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source_path="${1:-${KOKKOS_SOURCE:-}}"
build_dir="${BUILD_DIR:-$repo/build-kokkos4}"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
[[ -f "$build_dir/CMakeCache.txt" ]] && generator=()

kokkos=()
if [[ -n "${KOKKOS_PREFIX:-}" ]]; then
  kokkos=("-DCMAKE_PREFIX_PATH=$KOKKOS_PREFIX" -DKSPMV_KOKKOS_SOURCE=)
  echo "==> building kspmv in $build_dir against the Kokkos in $KOKKOS_PREFIX"
elif [[ -n "$source_path" ]]; then
  [[ "$source_path" == *://* ]] || source_path="$(cd "$(dirname "$source_path")" && pwd)/$(basename "$source_path")"
  kokkos=("-DKSPMV_KOKKOS_SOURCE=$source_path")
  echo "==> building Kokkos (OpenMP, Serial) from $source_path and kspmv in $build_dir"
else
  echo "test-kokkos4.sh: give the Kokkos source (tarball, URL or directory) or KOKKOS_PREFIX" >&2
  exit 2
fi
# shellcheck disable=SC2086  # CMAKE_ARGS is a list of arguments
cmake -S "$repo" -B "$build_dir" "${generator[@]}" "${kokkos[@]}" ${CMAKE_ARGS:-}
if [[ -n "${KOKKOS_PREFIX:-}" ]]; then
  kokkos_dir="$(sed -n 's/^Kokkos_DIR:PATH=//p' "$build_dir/CMakeCache.txt")"
  if [[ "$(cd "$kokkos_dir" && pwd -P)" != "$(cd "$KOKKOS_PREFIX" && pwd -P)"/* ]]; then
    echo "test-kokkos4.sh: $build_dir uses the Kokkos in $kokkos_dir, not the one in" \
      "$KOKKOS_PREFIX (remove $build_dir or set BUILD_DIR)" >&2
    exit 1
  fi
fi
cmake --build "$build_dir" -j "$(nproc)"

export OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}"
jobs=$(($(nproc) / OMP_NUM_THREADS))
((jobs > 0)) || jobs=1
echo "==> running the tests ($OMP_NUM_THREADS OpenMP threads each, $jobs at once)"
ctest --test-dir "$build_dir" --output-on-failure -j "$jobs" --timeout 900
