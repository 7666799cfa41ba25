#!/usr/bin/env bash
# Sets up and builds kspmv (scripts/setup.sh), then runs every test with ctest; when clang++ is
# installed, builds and tests a second time with it (in $CLANG_BUILD_DIR, default build-clang/,
# CUDA off) so that the code stays standard C++17 for both compilers.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${BUILD_DIR:-$repo/build}"
bash "$repo/scripts/setup.sh"
echo "==> running the tests in $build_dir"
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" --timeout 900

if command -v clang++ >/dev/null; then
  clang_dir="${CLANG_BUILD_DIR:-$repo/build-clang}"
  echo "==> building with clang++ in $clang_dir"
  CXX=clang++ BUILD_DIR="$clang_dir" CMAKE_ARGS="${CMAKE_ARGS:-} -DKSPMV_ENABLE_CUDA=OFF" \
    bash "$repo/scripts/setup.sh"
  echo "==> running the tests in $clang_dir"
  ctest --test-dir "$clang_dir" --output-on-failure -j "$(nproc)" --timeout 900
fi
