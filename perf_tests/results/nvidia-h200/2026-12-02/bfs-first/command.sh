#!/bin/bash
# Device call 1 of session 8 (issue 35): Reorder::Bfs found on the GPU. Build (sm_90), every GPU
# test, memcheck over the reorder tests, spmv_bench --reorder auto on the five families (double),
# cg_bench --reorder auto on k-mer 2e7 and stencil7 at 1e-8. Outputs in one tar.
set -u
R=$PWD/build-run/c9-out; rm -rf $R; mkdir -p $R
nvidia-smi -L > $R/gpu.txt; date -u +%FT%TZ > $R/date.txt
t0=$SECONDS
CUDA_ARCHS=90 SUITE_STEPS=configure bash perf_tests/run_gpu_suite.sh $R/suite > $R/build.log 2>&1
export LD_LIBRARY_PATH=$PWD/.prefix/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
cmake --build build-gpu --target kspmv_tests spmv_bench cg_bench -j 16 >> $R/build.log 2>&1
echo "build rc=$? $((SECONDS-t0)) s" | tee -a $R/times.txt
tail -3 $R/build.log
T=build-gpu/unit_tests/kspmv_tests
t1=$SECONDS
timeout 100 $T --gtest_color=no --gtest_filter='CudaReorder*:Reorder*' > $R/reorder-tests.txt 2>&1
echo "reorder tests rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
tail -3 $R/reorder-tests.txt; grep -E "^\[  FAILED|Failure" -A6 $R/reorder-tests.txt | head -40
mkdir -p $R/cg; t1=$SECONDS
timeout 90 build-gpu/perf_tests/cg_bench --devices 0 --tol 1e-8 --reorder auto --shift 0.01 --gen kmer:rows=2e7 --gen stencil7:n=256 --out $R/cg > $R/cg/stdout.txt 2> $R/cg/stderr.txt
echo "cg rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
B=build-gpu/perf_tests/spmv_bench
mkdir -p $R/reorder; t1=$SECONDS
timeout 150 $B --precision double --reorder auto --kernels cusparse,auto --no-autotune --no-default-gen --gen uniform:rows=2e7,k=8 --gen kron:scale=21 --gen rgg:scale=23 --gen fullchip:rows=3e6 --gen kmer:rows=6e7 --out $R/reorder > $R/reorder/stdout.txt 2> $R/reorder/stderr.txt
echo "reorder rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
t1=$SECONDS
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 1 $T --gtest_color=no --gtest_filter='CudaReorderTest.Bfs*:CudaReorderTest.Cg*' > $R/memcheck.txt 2>&1
echo "memcheck rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
tail -4 $R/memcheck.txt
t1=$SECONDS
timeout 150 $T --gtest_color=no --gtest_filter='-CudaHuge*' > $R/tests.txt 2>&1
echo "tests rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
tail -4 $R/tests.txt; grep -E "^\[  FAILED|exception" $R/tests.txt | head -20
gzip -f $R/tests.txt
tar -C $PWD/build-run -czf $OUT/c9.tar.gz c9-out
for d in reorder cg; do echo "== $d"; grep -E "reorder|ERROR|1gpu|reordered" $R/$d/stderr.txt | head -14; done
grep -o '"[a-z_]*geomean[a-z_]*":[0-9.]*\|"auto[a-z_]*":[0-9.]*' $R/reorder/summary.json
