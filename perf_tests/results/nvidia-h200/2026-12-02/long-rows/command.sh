#!/bin/bash
# Device call 2 of session 10 (issue 35): CSR-Vector's long-row chunks of sqrt(longest) (eac25ff).
# Build (sm_90); the long-row, ring and wide-offset tests; memcheck over the long-row tests;
# spmv_bench on the shared matrices (+ kron 21: a power law through csr-vector's long rows); the
# suite's reorder step (five families, cg, permute_bench); every GPU test.
set -u
export KSPMV_MATRICES=$PWD/build-run/matrices
R=$PWD/build-run/c20-out; rm -rf $R; mkdir -p $R
nvidia-smi -L > $R/gpu.txt; date -u +%FT%TZ > $R/date.txt
t0=$SECONDS
CUDA_ARCHS=90 SUITE_STEPS=configure bash perf_tests/run_gpu_suite.sh $R/suite > $R/build.log 2>&1
export LD_LIBRARY_PATH=$PWD/.prefix/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
cmake --build build-gpu --target kspmv_tests spmv_bench cg_bench permute_bench -j 16 >> $R/build.log 2>&1
echo "build rc=$? $((SECONDS-t0)) s" | tee -a $R/times.txt
grep -E "error" $R/build.log | head
T=build-gpu/unit_tests/kspmv_tests
t1=$SECONDS
F='CudaSpmm/*.CsrVectorFinishes*:CudaSpmm/*.LongRowPath*'
timeout 90 $T --gtest_color=no --gtest_filter="$F:CudaRing*:CudaWideOffsets*:CudaSpmm*" > $R/new-tests.txt 2>&1
echo "new tests rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
tail -3 $R/new-tests.txt; grep -E "^\[  FAILED|Failure|Expected|actual|Which" $R/new-tests.txt | head -20
t1=$SECONDS
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 1 $T --gtest_color=no --gtest_filter="$F" > $R/memcheck.txt 2>&1
echo "memcheck rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
tail -3 $R/memcheck.txt
mkdir -p $R/shared; t1=$SECONDS
timeout 120 build-gpu/perf_tests/spmv_bench --matrices $KSPMV_MATRICES --no-default-gen --gen fullchip:rows=3e6 --gen uniform:rows=1e7,k=16 --gen uniform:rows=4e6,k=8 --gen kron:scale=21 --precision both --kernels cusparse,csr-vector,cusparse-alg2,partial-overlap,seg,seg-r,auto --out $R/shared > $R/shared/stdout.txt 2> $R/shared/stderr.txt
echo "shared rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
grep -o '"auto[a-z_]*":[0-9.]*' $R/shared/summary.json
grep brainpc2 $R/shared/spmv_bench.csv | cut -d, -f5,6,10,14,22
tar -C $PWD/build-run -czf $OUT/c20.tar.gz c20-out
t1=$SECONDS
SUITE_STEPS=reorder timeout 200 bash perf_tests/run_gpu_suite.sh $R/suite > $R/reorder.log 2>&1
echo "reorder step rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
grep -o '"[a-z_]*geomean[a-z_]*":[0-9.]*\|"auto[a-z_]*":[0-9.]*' $R/suite/reorder/summary.json
grep -E "1gpu" $R/suite/reorder/cg/*.txt 2>/dev/null | head; ls $R/suite/reorder/cg
tar -C $PWD/build-run -czf $OUT/c20.tar.gz c20-out
t1=$SECONDS
timeout 170 $T --gtest_color=no --gtest_filter='-CudaHuge*' > $R/tests.txt 2>&1
echo "tests rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
tail -4 $R/tests.txt; grep -E "^\[  FAILED|exception" $R/tests.txt | head -20
gzip -f $R/tests.txt
tar -C $PWD/build-run -czf $OUT/c20.tar.gz c20-out
