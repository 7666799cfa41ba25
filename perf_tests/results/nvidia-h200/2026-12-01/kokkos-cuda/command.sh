#!/bin/bash
# The device call of this folder (run from the repository root, $OUT the results folder):
# Kokkos 4.6.01 CUDA + Kokkos Kernels build, cli_errors_and_help and the KokkosSparse tests,
# interop_bench. build-run/ (git-ignored) held copies of the Kokkos tarballs with their build
# scripts (third_party/) and of the shared SuiteSparse matrices (matrices/).
set -u
export KOKKOS_TARBALL_DIR=$PWD/build-run/third_party KSPMV_MATRICES=$PWD/build-run/matrices
export LD_LIBRARY_PATH=$PWD/.prefix/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
nvidia-smi -L > $OUT/gpu.txt
date -u +%FT%TZ > $OUT/date.txt
t0=$SECONDS
SUITE_STEPS=kokkos-cuda-build bash perf_tests/run_gpu_suite.sh $OUT/suite > $OUT/build.log 2>&1
echo "build rc=$? $((SECONDS-t0)) s" | tee -a $OUT/times.txt
t0=$SECONDS
ctest --test-dir build-kokkos-cuda/kspmv -R 'cli_errors_and_help|KokkosSparse' -j 6 --timeout 250 --output-on-failure > $OUT/ctest_subset.log 2>&1
echo "ctest rc=$? $((SECONDS-t0)) s" | tee -a $OUT/times.txt
tail -5 $OUT/ctest_subset.log
t0=$SECONDS
timeout 150 env SUITE_STEPS=kokkos-interop bash perf_tests/run_gpu_suite.sh $OUT/suite > $OUT/interop.log 2>&1
echo "interop rc=$? $((SECONDS-t0)) s" | tee -a $OUT/times.txt
tail -30 $OUT/interop.log
