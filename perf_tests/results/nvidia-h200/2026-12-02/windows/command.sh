#!/bin/bash
# Device call 3 of session 9 (issue 35): four entries a thread in the windows, stripes
# costed at twice their bytes. A scratch timing of direct and windowed permutations (build-run/perm.cu), the
# build (sm_90), the reorder tests, memcheck over the window/BFS/CG reorder tests, spmv_bench
# --reorder auto on the five families (double), --reorder auto on k-mer 2e7, then every GPU test.
set -u
R=$PWD/build-run/c17-out; rm -rf $R; mkdir -p $R
nvidia-smi -L > $R/gpu.txt; date -u +%FT%TZ > $R/date.txt
t0=$SECONDS
nvcc -O3 -arch=sm_90 -std=c++17 build-run/perm.cu -o build-run/perm > $R/perm.txt 2>&1 && build-run/perm 60000000 >> $R/perm.txt 2>&1
cat $R/perm.txt; echo "perm $((SECONDS-t0)) s" | tee -a $R/times.txt
t0=$SECONDS
CUDA_ARCHS=90 SUITE_STEPS=configure bash perf_tests/run_gpu_suite.sh $R/suite > $R/build.log 2>&1
export LD_LIBRARY_PATH=$PWD/.prefix/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
cmake --build build-gpu --target kspmv_tests spmv_bench cg_bench -j 16 >> $R/build.log 2>&1
echo "build rc=$? $((SECONDS-t0)) s" | tee -a $R/times.txt
grep -E "error" $R/build.log | head
T=build-gpu/unit_tests/kspmv_tests
t1=$SECONDS
timeout 120 $T --gtest_color=no --gtest_filter='CudaReorder*:Reorder*' > $R/reorder-tests.txt 2>&1
echo "reorder tests rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
tail -3 $R/reorder-tests.txt; grep -E "^\[  FAILED|Failure|Expected|actual|Which" $R/reorder-tests.txt | head -20
B=build-gpu/perf_tests/spmv_bench
mkdir -p $R/reorder $R/bfs $R/cg; t1=$SECONDS
timeout 150 $B --precision double --reorder auto --kernels cusparse,auto --no-autotune --no-default-gen --gen uniform:rows=2e7,k=8 --gen kron:scale=21 --gen rgg:scale=23 --gen fullchip:rows=3e6 --gen kmer:rows=6e7 --out $R/reorder > $R/reorder/stdout.txt 2> $R/reorder/stderr.txt
echo "reorder rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
t1=$SECONDS
timeout 60 $B --precision double --reorder auto --kernels cusparse,auto --no-autotune --no-default-gen --gen kmer:rows=2e7 --out $R/bfs > $R/bfs/stdout.txt 2> $R/bfs/stderr.txt
echo "bfs rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
t1=$SECONDS
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 1 $T --gtest_color=no --gtest_filter='CudaReorderTest.VectorsMoved*:CudaReorderTest.Every*' > $R/memcheck.txt 2>&1
echo "memcheck rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
tail -3 $R/memcheck.txt
tar -C $PWD/build-run -czf $OUT/c17.tar.gz c17-out
for d in reorder bfs; do echo "== $d"; grep -E "ERROR|1gpu|reorder " $R/$d/stderr.txt | head -20; done
grep -o '"[a-z_]*geomean[a-z_]*":[0-9.]*\|"auto[a-z_]*":[0-9.]*' $R/reorder/summary.json
t1=$SECONDS
mkdir -p $R/cg
timeout 90 build-gpu/perf_tests/cg_bench --devices 0 --tol 1e-8 --reorder auto --shift 0.01 --gen kmer:rows=2e7 --gen stencil7:n=256 --out $R/cg > $R/cg/stdout.txt 2> $R/cg/stderr.txt
echo "cg rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
grep -E "1gpu" $R/cg/stderr.txt
python3 -c "
import json;d=json.load(open('$R/cg/cg_bench.json'))
for r in d['results']:
  if r['variant'].startswith('1gpu'): print(r['matrix'],r['variant'],r['iterations'],round(r['ms_per_iteration'],4),round(r['setup_ms'],1),r['reorder'],round(r['reorder_ms'],1),round(r['end_to_end_ms'],1))"
t1=$SECONDS
timeout 170 $T --gtest_color=no --gtest_filter='-CudaHuge*' > $R/tests.txt 2>&1
echo "tests rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
tail -4 $R/tests.txt; grep -E "^\[  FAILED|exception" $R/tests.txt | head -20
gzip -f $R/tests.txt
tar -C $PWD/build-run -czf $OUT/c17.tar.gz c17-out
