#!/bin/bash
# Device call 4 of session 9 (issue 35): permute_bench (direct and windowed permutations, the
# library's kernels), then Auto's kernel choice on the shared matrices at the current code (the
# 2026-12-01 kernels-after "shared" run again). Outputs in one tar.
set -u
export KSPMV_MATRICES=$PWD/build-run/matrices
R=$PWD/build-run/c18-out; rm -rf $R; mkdir -p $R
nvidia-smi -L > $R/gpu.txt; date -u +%FT%TZ > $R/date.txt
t0=$SECONDS
CUDA_ARCHS=90 SUITE_STEPS=configure bash perf_tests/run_gpu_suite.sh $R/suite > $R/build.log 2>&1
export LD_LIBRARY_PATH=$PWD/.prefix/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
cmake --build build-gpu --target spmv_bench permute_bench -j 16 >> $R/build.log 2>&1
echo "build rc=$? $((SECONDS-t0)) s" | tee -a $R/times.txt
mkdir -p $R/permute; t1=$SECONDS
timeout 60 build-gpu/perf_tests/permute_bench --out $R/permute > $R/permute/stdout.txt 2> $R/permute/stderr.txt
echo "permute rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
cat $R/permute/stdout.txt
tar -C $PWD/build-run -czf $OUT/c18.tar.gz c18-out
mkdir -p $R/shared; t1=$SECONDS
timeout 110 build-gpu/perf_tests/spmv_bench --matrices $KSPMV_MATRICES --no-default-gen --gen fullchip:rows=3e6 --gen uniform:rows=1e7,k=16 --gen uniform:rows=4e6,k=8 --precision both --kernels cusparse,csr-vector,cusparse-alg2,partial-overlap,seg,seg-r,auto --out $R/shared > $R/shared/stdout.txt 2> $R/shared/stderr.txt
echo "shared rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
grep -o '"auto[a-z_]*":[0-9.]*' $R/shared/summary.json
tar -C $PWD/build-run -czf $OUT/c18.tar.gz c18-out
