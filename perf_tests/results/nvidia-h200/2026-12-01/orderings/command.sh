#!/bin/bash
# Device call 2 (issue 35): spmv_bench with batched timing of fast kernels; Auto's rule data
# (every kernel, float and double) and the degree / RCM orderings on the families that fit L2.
set -u
export KSPMV_MATRICES=$PWD/build-run/matrices
export LD_LIBRARY_PATH=$PWD/.prefix/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
nvidia-smi -L > $OUT/gpu.txt; date -u +%FT%TZ > $OUT/date.txt
t0=$SECONDS
SUITE_STEPS=configure bash perf_tests/run_gpu_suite.sh $OUT/suite > $OUT/build.log 2>&1
cmake --build build-gpu --target spmv_bench -j 16 >> $OUT/build.log 2>&1
echo "build rc=$? $((SECONDS-t0)) s" | tee -a $OUT/times.txt
B=build-gpu/perf_tests/spmv_bench
run() {  # run NAME LIMIT ARGS...
  local name=$1 limit=$2; shift 2; local t0=$SECONDS
  mkdir -p $OUT/$name
  timeout $limit $B "$@" --out $OUT/$name > $OUT/$name/stdout.txt 2> $OUT/$name/stderr.txt
  echo "$name rc=$? $((SECONDS-t0)) s" | tee -a $OUT/times.txt
}
run shared 120 --matrices $KSPMV_MATRICES --no-default-gen --gen fullchip:rows=3e6 --gen uniform:rows=1e7,k=16 --gen uniform:rows=4e6,k=8 --precision both
run degree 110 --precision double --reorder degree --kernels cusparse,auto --no-autotune --no-default-gen --gen kron:scale=21 --gen fullchip:rows=3e6 --gen rgg:scale=23
run rcm 60 --precision double --reorder rcm --kernels cusparse,auto --no-autotune --no-default-gen --gen fullchip:rows=3e6
run families-float 150 --precision float --no-default-gen --gen kron:scale=21 --gen rgg:scale=23 --gen stencil27:n=160 --gen uniform:rows=2e7,k=8
for d in shared degree rcm families-float; do echo "== $d"; tail -25 $OUT/$d/stdout.txt; tail -3 $OUT/$d/stderr.txt; done
