#!/usr/bin/env bash
# Checks that every tracked C++ and CUDA file is formatted as .clang-format says: prints where
# each file differs and exits 1 when any does. CLANG_FORMAT names the binary (default
# clang-format; CI uses Debian 12's, clang-format 14). The fix: clang-format -i FILE...
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
clang_format="${CLANG_FORMAT:-clang-format}"
command -v "$clang_format" >/dev/null || { echo "check-format.sh: $clang_format not found" >&2; exit 2; }
echo "==> checking the format of the C++ and CUDA files ($("$clang_format" --version))"
report="$(git ls-files -z '*.cpp' '*.hpp' '*.h' '*.cu' '*.cuh' |
          xargs -0 "$clang_format" --dry-run --Werror 2>&1)" || true
if [[ -n "$report" ]]; then
  echo "$report"
  files="$(grep -o '^[^:]*:[0-9]*:[0-9]*: error' <<<"$report" | cut -d: -f1 | sort -u | tr '\n' ' ')"
  echo "check-format.sh: not formatted: ${files% }; run: clang-format -i ${files% }" >&2
  exit 1
fi
echo "==> every file is formatted"
