#!/usr/bin/env bash
# Sets up and builds kspmv once, in $BUILD_DIR (default build/), through scripts/setup.sh (which
# installs the Debian packages that are missing and passes $CMAKE_ARGS to CMake), then runs every
# test there with ctest, printing how long each took. About 20 minutes on 2 cores from a fresh
# clone.
# KSPMV_ALSO_CLANG=1 then builds and tests a second time with clang++ (installed by setup.sh), in
# $CLANG_BUILD_DIR (default build-clang/) with the CUDA backend off, so that the code stays
# standard C++17 for both compilers; that doubles the time.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${BUILD_DIR:-$repo/build}"
start=$SECONDS
bash "$repo/scripts/setup.sh"
echo "==> built in $((SECONDS - start)) s; running the tests in $build_dir"
start=$SECONDS
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" --timeout 900
echo "==> tests run in $((SECONDS - start)) s"

if [[ "${KSPMV_ALSO_CLANG:-0}" == 1 ]]; then
  clang_dir="${CLANG_BUILD_DIR:-$repo/build-clang}"
  echo "==> building with clang++ in $clang_dir"
  CXX=clang++ BUILD_DIR="$clang_dir" CMAKE_ARGS="${CMAKE_ARGS:-} -DKSPMV_ENABLE_CUDA=OFF" \
    bash "$repo/scripts/setup.sh"
  echo "==> running the tests in $clang_dir"
  ctest --test-dir "$clang_dir" --output-on-failure -j "$(nproc)" --timeout 900
fi
