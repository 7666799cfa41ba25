#!/bin/bash
# Device call 6 of session 8 (issue 35): reorder_ms without A's upload and, where the ordering is
# rejected, the operator's construction. Build, the reorder tests, spmv_bench on k-mer 6e7.
set -u
R=$PWD/build-run/c14-out; rm -rf $R; mkdir -p $R
nvidia-smi -L > $R/gpu.txt; date -u +%FT%TZ > $R/date.txt
t0=$SECONDS
CUDA_ARCHS=90 SUITE_STEPS=configure bash perf_tests/run_gpu_suite.sh $R/suite > $R/build.log 2>&1
export LD_LIBRARY_PATH=$PWD/.prefix/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
cmake --build build-gpu --target kspmv_tests spmv_bench -j 16 >> $R/build.log 2>&1
echo "build rc=$? $((SECONDS-t0)) s" | tee -a $R/times.txt
t1=$SECONDS
timeout 60 build-gpu/unit_tests/kspmv_tests --gtest_color=no --gtest_filter='CudaReorder*:Reorder*' > $R/reorder-tests.txt 2>&1
echo "reorder tests rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
tail -2 $R/reorder-tests.txt
mkdir -p $R/reorder; t1=$SECONDS
timeout 60 build-gpu/perf_tests/spmv_bench --precision double --reorder auto --kernels cusparse,auto --no-autotune --no-default-gen --gen kmer:rows=6e7 --out $R/reorder > $R/reorder/stdout.txt 2> $R/reorder/stderr.txt
echo "reorder rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
tar -C $PWD/build-run -czf $OUT/c14.tar.gz c14-out
grep -E "ERROR|reorder auto" $R/reorder/stderr.txt
