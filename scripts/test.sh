#!/usr/bin/env bash
# Sets up and builds kspmv (scripts/setup.sh), then runs every test with ctest.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${BUILD_DIR:-$repo/build}"
bash "$repo/scripts/setup.sh"
echo "==> running the tests in $build_dir"
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" --timeout 900
