#!/bin/bash
# Device call 1 of session 10 (issue 35): CSR-Vector's long rows in its own launch (3a5fae9).
# Build (sm_90); the long-row tests; memcheck over them and the window/reorder tests owed since
# 96edca6/fec8b62; every GPU test; spmv_bench on the shared matrices (float and double, the
# kernels of the auto comparison); ncu over permute_bench's passes (bytes against time).
set -u
export KSPMV_MATRICES=$PWD/build-run/matrices
R=$PWD/build-run/c19-out; rm -rf $R; mkdir -p $R
nvidia-smi -L > $R/gpu.txt; date -u +%FT%TZ > $R/date.txt
t0=$SECONDS
CUDA_ARCHS=90 SUITE_STEPS=configure bash perf_tests/run_gpu_suite.sh $R/suite > $R/build.log 2>&1
export LD_LIBRARY_PATH=$PWD/.prefix/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
cmake --build build-gpu --target kspmv_tests spmv_bench cg_bench permute_bench -j 16 >> $R/build.log 2>&1
echo "build rc=$? $((SECONDS-t0)) s" | tee -a $R/times.txt
grep -E "error" $R/build.log | head
T=build-gpu/unit_tests/kspmv_tests
t1=$SECONDS
F='CudaSpmm/*.CsrVectorFinishes*:CudaSpmm/*.LongRowPath*:CudaReorderTest.VectorsMoved*:CudaReorderTest.AutoOnTheDevice*'
timeout 60 $T --gtest_color=no --gtest_filter="$F" > $R/new-tests.txt 2>&1
echo "new tests rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
tail -3 $R/new-tests.txt; grep -E "^\[  FAILED|Failure|Expected|actual|Which" $R/new-tests.txt | head -20
t1=$SECONDS
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 1 $T --gtest_color=no --gtest_filter="$F" > $R/memcheck.txt 2>&1
echo "memcheck rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
tail -3 $R/memcheck.txt
tar -C $PWD/build-run -czf $OUT/c19.tar.gz c19-out
mkdir -p $R/shared; t1=$SECONDS
timeout 110 build-gpu/perf_tests/spmv_bench --matrices $KSPMV_MATRICES --no-default-gen --gen fullchip:rows=3e6 --gen uniform:rows=1e7,k=16 --gen uniform:rows=4e6,k=8 --precision both --kernels cusparse,csr-vector,cusparse-alg2,partial-overlap,seg,seg-r,auto --out $R/shared > $R/shared/stdout.txt 2> $R/shared/stderr.txt
echo "shared rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
grep -o '"auto[a-z_]*":[0-9.]*' $R/shared/summary.json
grep brainpc2 $R/shared/spmv_bench.csv | cut -d, -f5,6,10,14,22
tar -C $PWD/build-run -czf $OUT/c19.tar.gz c19-out
t1=$SECONDS
timeout 90 ncu --kernel-name regex:'pass_kernel|indexed_copy' --launch-skip 0 --launch-count 12 --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sector_hit_rate.pct,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed --csv build-gpu/perf_tests/permute_bench --rows 6e7 --reps 1 --out $R/ncu-bench > $R/ncu.csv 2> $R/ncu.err
echo "ncu rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
tail -3 $R/ncu.err
t1=$SECONDS
timeout 170 $T --gtest_color=no --gtest_filter='-CudaHuge*' > $R/tests.txt 2>&1
echo "tests rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
tail -4 $R/tests.txt; grep -E "^\[  FAILED|exception" $R/tests.txt | head -20
gzip -f $R/tests.txt
tar -C $PWD/build-run -czf $OUT/c19.tar.gz c19-out
