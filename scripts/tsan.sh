#!/usr/bin/env bash
# The thread-safety tests (unit_tests/thread_safety_test.cpp, README "Reliability") under
# ThreadSanitizer: the host-only library (CUDA, Tpetra, the tool and the benchmarks off) and that
# one test target, built in $BUILD_DIR (default build-tsan/ in the repository) with
# -DKSPMV_SANITIZE=thread; $CMAKE_ARGS adds CMake arguments. A data race TSan sees in kspmv's
# code stops the run with its report and a non-zero exit. About 4 minutes of compilation (2
# minutes on 2 idle cores) and 20 seconds of tests.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${BUILD_DIR:-$repo/build-tsan}"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
[[ -f "$build_dir/CMakeCache.txt" ]] && generator=()

echo "==> building the thread-safety tests with ThreadSanitizer in $build_dir"
# shellcheck disable=SC2086  # CMAKE_ARGS is a list of words
cmake -S "$repo" -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DKSPMV_SANITIZE=thread -DKSPMV_ENABLE_CUDA=OFF -DKSPMV_ENABLE_TPETRA=OFF \
  -DKSPMV_BUILD_PERF_TESTS=OFF -DKSPMV_BUILD_CLI=OFF ${CMAKE_ARGS:-}
cmake --build "$build_dir" -j "$(nproc)" --target kspmv_thread_safety_tests
echo "==> running the thread-safety tests under ThreadSanitizer"
TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}" "$build_dir/unit_tests/kspmv_thread_safety_tests"
