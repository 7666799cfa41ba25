#!/bin/bash
# Device call 4 of session 7 (issues 35, 33): CSR-Vector a thread a row on clustered short rows.
# Build (sm_90), every GPU test, spmv_bench --reorder auto on the five families (double), the
# shared matrices with the kernels Auto picks among (both precisions), cg_bench --reorder auto on
# a k-mer of 2e7 rows. Outputs in one tar.
set -u
export KSPMV_MATRICES=$PWD/build-run/matrices
R=$PWD/build-run/c7-out; rm -rf $R; mkdir -p $R
nvidia-smi -L > $R/gpu.txt; date -u +%FT%TZ > $R/date.txt
t0=$SECONDS
CUDA_ARCHS=90 SUITE_STEPS=configure bash perf_tests/run_gpu_suite.sh $R/suite > $R/build.log 2>&1
export LD_LIBRARY_PATH=$PWD/.prefix/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
cmake --build build-gpu --target kspmv_tests spmv_bench cg_bench -j 16 >> $R/build.log 2>&1
echo "build rc=$? $((SECONDS-t0)) s" | tee -a $R/times.txt
B=build-gpu/perf_tests/spmv_bench
run() {  # run NAME LIMIT ARGS...
  local name=$1 limit=$2; shift 2; local t0=$SECONDS
  mkdir -p $R/$name
  timeout $limit $B "$@" --out $R/$name > $R/$name/stdout.txt 2> $R/$name/stderr.txt
  echo "$name rc=$? $((SECONDS-t0)) s" | tee -a $R/times.txt
}
run reorder 150 --precision double --reorder auto --kernels cusparse,auto --no-autotune --no-default-gen --gen uniform:rows=2e7,k=8 --gen kron:scale=21 --gen rgg:scale=23 --gen fullchip:rows=3e6 --gen kmer:rows=6e7
mkdir -p $R/cg; t1=$SECONDS
timeout 60 build-gpu/perf_tests/cg_bench --devices 0 --tol 1e-8 --reorder auto --shift 0.01 --gen kmer:rows=2e7 --out $R/cg > $R/cg/stdout.txt 2> $R/cg/stderr.txt
echo "cg rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
t1=$SECONDS
timeout 200 build-gpu/unit_tests/kspmv_tests --gtest_color=no --gtest_filter='-CudaHuge*' > $R/tests.txt 2>&1
echo "tests rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
tail -4 $R/tests.txt; grep -E "^\[  FAILED|exception" $R/tests.txt | head -20
run shared 80 --matrices $KSPMV_MATRICES --no-default-gen --precision both --kernels cusparse,csr-vector,cusparse-alg2,partial-overlap,seg,seg-r,auto
tar -C $PWD/build-run -czf $OUT/c7.tar.gz c7-out
for d in reorder cg; do echo "== $d"; grep -E "reorder|ERROR|1gpu" $R/$d/stderr.txt | head -12; done
grep -o '"[a-z_]*geomean[a-z_]*":[0-9.]*\|"auto[a-z_]*":[0-9.]*' $R/reorder/summary.json $R/shared/summary.json
