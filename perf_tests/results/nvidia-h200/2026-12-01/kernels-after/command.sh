#!/bin/bash
# Device call 4 (issue 35): call 3 again after the new Auto rule (05c19fb), float and double, on
# the shared matrices, the seven families and three more generated ones, with the kernels that
# were ever the fastest in call 3 or Auto's (not full-overlap, streamed, nor HBP: at most 0.82x
# cuSPARSE there). Outputs in one tar.
set -u
export KSPMV_MATRICES=$PWD/build-run/matrices
export LD_LIBRARY_PATH=$PWD/.prefix/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
R=$PWD/build-run/c4-out; rm -rf $R; mkdir -p $R
nvidia-smi -L > $R/gpu.txt; date -u +%FT%TZ > $R/date.txt
t0=$SECONDS
SUITE_STEPS=configure bash perf_tests/run_gpu_suite.sh $R/suite > $R/build.log 2>&1
cmake --build build-gpu --target spmv_bench -j 16 >> $R/build.log 2>&1
echo "build rc=$? $((SECONDS-t0)) s" | tee -a $R/times.txt
B=build-gpu/perf_tests/spmv_bench
run() {  # run NAME LIMIT ARGS...
  local name=$1 limit=$2; shift 2; local t0=$SECONDS
  mkdir -p $R/$name
  timeout $limit $B "$@" --out $R/$name > $R/$name/stdout.txt 2> $R/$name/stderr.txt
  echo "$name rc=$? $((SECONDS-t0)) s" | tee -a $R/times.txt
}
run shared 90 --matrices $KSPMV_MATRICES --no-default-gen --gen fullchip:rows=3e6 --gen uniform:rows=1e7,k=16 --gen uniform:rows=4e6,k=8 --precision both --kernels cusparse,csr-vector,cusparse-alg2,partial-overlap,seg,seg-r,auto
run families 250 --precision both --no-default-gen --gen laplace2d:n=4096 --gen stencil27:n=160 --gen kron:scale=21 --gen rgg:scale=23 --gen uniform:rows=2e7,k=8 --gen kmer:rows=6e7 --kernels cusparse,csr-vector,cusparse-alg2,partial-overlap,seg,seg-r,auto
tar -C $PWD/build-run -czf $OUT/c4.tar.gz c4-out
for d in shared families; do echo "== $d"; grep -E "rule chose|auto " $R/$d/stdout.txt | head -60; tail -2 $R/$d/stdout.txt; done
