#!/bin/bash
# Device call 3 of session 7 (issue 35): stripes with a thread a row or cuSPARSE per stripe,
# auto for the permuted order. Build (sm_90 only), the reorder tests and memcheck over them,
# spmv_bench --reorder auto on the five families (double), stripes on uniform (both precisions),
# cg_bench --reorder auto on a k-mer of 2e7 rows. Outputs in one tar.
set -u
export KSPMV_MATRICES=$PWD/build-run/matrices
R=$PWD/build-run/c6-out; rm -rf $R; mkdir -p $R
nvidia-smi -L > $R/gpu.txt; date -u +%FT%TZ > $R/date.txt
t0=$SECONDS
CUDA_ARCHS=90 SUITE_STEPS=configure bash perf_tests/run_gpu_suite.sh $R/suite > $R/build.log 2>&1
export LD_LIBRARY_PATH=$PWD/.prefix/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
cmake --build build-gpu --target kspmv_tests spmv_bench cg_bench -j 16 >> $R/build.log 2>&1
echo "build rc=$? $((SECONDS-t0)) s" | tee -a $R/times.txt
t1=$SECONDS
timeout 150 build-gpu/unit_tests/kspmv_tests --gtest_color=no --gtest_filter='CudaReorder*:Reorder*' > $R/tests.txt 2>&1
echo "tests rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
tail -5 $R/tests.txt; grep -E "FAILED|Failure|exception" -A2 $R/tests.txt | head -30
t1=$SECONDS
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 99 build-gpu/unit_tests/kspmv_tests --gtest_color=no --gtest_filter='CudaReorder*' > $R/memcheck.txt 2>&1
echo "memcheck rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
grep -E "ERROR SUMMARY|PASSED|FAILED" $R/memcheck.txt | head -5
B=build-gpu/perf_tests/spmv_bench
run() {  # run NAME LIMIT ARGS...
  local name=$1 limit=$2; shift 2; local t0=$SECONDS
  mkdir -p $R/$name
  timeout $limit $B "$@" --out $R/$name > $R/$name/stdout.txt 2> $R/$name/stderr.txt
  echo "$name rc=$? $((SECONDS-t0)) s" | tee -a $R/times.txt
}
run reorder 240 --precision double --reorder auto --kernels cusparse,auto --no-autotune --no-default-gen --gen uniform:rows=2e7,k=8 --gen kron:scale=21 --gen rgg:scale=23 --gen fullchip:rows=3e6 --gen kmer:rows=6e7
run stripes 60 --precision both --reorder stripes --kernels cusparse,auto --no-autotune --no-default-gen --gen uniform:rows=2e7,k=8 --gen uniform:rows=1e7,k=16
mkdir -p $R/cg; t1=$SECONDS
timeout 120 build-gpu/perf_tests/cg_bench --devices 0 --tol 1e-8 --reorder auto --shift 0.01 --gen kmer:rows=2e7 --out $R/cg > $R/cg/stdout.txt 2> $R/cg/stderr.txt
echo "cg rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
tar -C $PWD/build-run -czf $OUT/c6.tar.gz c6-out
for d in reorder stripes cg; do echo "== $d"; grep -E "reorder|ERROR" $R/$d/stderr.txt | head -20; tail -3 $R/$d/stdout.txt; done
