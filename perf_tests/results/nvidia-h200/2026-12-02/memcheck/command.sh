#!/bin/bash
# Device call 5 of session 7: compute-sanitizer memcheck over the suite's filter (the reorder
# tests included) after b2871f8 and e63a77d. Build (sm_90), then SUITE_STEPS=sanitize.
set -u
R=$PWD/build-run/c8-out; rm -rf $R; mkdir -p $R
nvidia-smi -L > $R/gpu.txt; date -u +%FT%TZ > $R/date.txt
t0=$SECONDS
CUDA_ARCHS=90 SUITE_STEPS=configure bash perf_tests/run_gpu_suite.sh $R/suite > $R/build.log 2>&1
export LD_LIBRARY_PATH=$PWD/.prefix/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
cmake --build build-gpu --target kspmv_tests -j 16 >> $R/build.log 2>&1
echo "build rc=$? $((SECONDS-t0)) s" | tee -a $R/times.txt
t1=$SECONDS
CUDA_ARCHS=90 SUITE_STEPS=sanitize timeout 420 bash perf_tests/run_gpu_suite.sh $R/suite > $R/sanitize.log 2>&1
echo "sanitize rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
gzip -9n $R/suite/*.log 2>/dev/null
tar -C $PWD/build-run -czf $OUT/c8.tar.gz c8-out
tail -5 $R/sanitize.log; zcat $R/suite/sanitizer.log.gz 2>/dev/null | grep -E "ERROR SUMMARY|PASSED|FAILED" | head
