#!/usr/bin/env bash
# Sets up and builds kspmv (scripts/setup.sh), then runs `kspmv demo`.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${BUILD_DIR:-$repo/build}"
bash "$repo/scripts/setup.sh"
echo "==> $build_dir/kspmv demo"
"$build_dir/kspmv" demo
