#!/bin/bash
# Device call 3 of session 10: Options::autotune interleaved (7ede478) after it kept seg-r on brainpc2 double (call 2:
# csr-vector 6.1 us, seg-r 9.5): spmv_bench with the tuner's medians in the auto-tuned row's note,
# three runs on brainpc2 and bcsstk38.
set -u
export KSPMV_MATRICES=$PWD/build-run/matrices
R=$PWD/build-run/c21-out; rm -rf $R; mkdir -p $R
nvidia-smi -L > $R/gpu.txt; date -u +%FT%TZ > $R/date.txt
t0=$SECONDS
CUDA_ARCHS=90 SUITE_STEPS=configure bash perf_tests/run_gpu_suite.sh $R/suite > $R/build.log 2>&1
export LD_LIBRARY_PATH=$PWD/.prefix/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
cmake --build build-gpu --target spmv_bench kspmv_tests -j 16 >> $R/build.log 2>&1
echo "build rc=$? $((SECONDS-t0)) s" | tee -a $R/times.txt
for i in 1 2 3; do
  mkdir -p $R/run$i
  timeout 60 build-gpu/perf_tests/spmv_bench --matrices $PWD/build-run/brain --no-default-gen --precision both --kernels cusparse,csr-vector,seg,seg-r,auto --out $R/run$i > $R/run$i/stdout.txt 2> $R/run$i/stderr.txt
  echo "run$i rc=$?" | tee -a $R/times.txt
  grep -E "auto-tuned|loading" $R/run$i/stderr.txt
done
tar -C $PWD/build-run -czf $OUT/c21.tar.gz c21-out
T=build-gpu/unit_tests/kspmv_tests
t1=$SECONDS
timeout 170 $T --gtest_color=no --gtest_filter='-CudaHuge*' > $R/tests.txt 2>&1
echo "tests rc=$? $((SECONDS-t1)) s" | tee -a $R/times.txt
tail -4 $R/tests.txt; grep -E "^\[  FAILED|exception" $R/tests.txt | head -20
gzip -f $R/tests.txt
tar -C $PWD/build-run -czf $OUT/c21.tar.gz c21-out
