#!/usr/bin/env bash
# The GPU suite: build with CUDA, unit tests (GPU tests must run, not skip), compute-sanitizer
# memcheck and racecheck over the CUDA tests on small matrices, spmv_bench and its plot, hbp_bench,
# on a machine with several GPUs multi_gpu_bench and cg_bench, the runs beyond 2^31 non-zeros
# and beyond the device's memory, and the build and tests against a Kokkos built with CUDA.
#
#   perf_tests/run_gpu_suite.sh RESULTS_DIR
#
# Environment:
#   SUITE_STEPS      comma list of configure,build,test,sanitize,racecheck,stress,bench,hbp,
#                    hbp-profile,hbp-sweep,interop,multi,scaling,trace,tpetra,distributed,large,beyond,hugetest,gen,read,compare,reorder,
#                    kokkos-cuda-build,kokkos-cuda,kokkos-interop,kokkos-bench (default:
#                    build,test,sanitize,racecheck,bench,hbp; build implies configure). Split the
#                    suite over several calls with e.g. SUITE_STEPS=build, then test,sanitize, then
#                    racecheck, then bench
#                    (each well under 10 minutes but racecheck: RACECHECK_PART=ring, then =rest,
#                    splits it in two calls; RACECHECK_FILTER replaces its test filter). "multi" runs multi_gpu_bench and cg_bench on
#                    every GPU; on a machine of one GPU, on two virtual devices of it (--devices
#                    0,0, which MULTI_ARGS / CG_ARGS may override): multi_gpu_bench's rows carry
#                    the set-up in single-GPU SpMVs and the cost model's prediction for two GPUs,
#                    cg_bench's the CG iteration over one SpMV (iteration_over_spmv).
#                    "scaling" (two GPUs or more) runs multi_gpu_bench --reps 5 on every GPU
#                    (scaling/all), on the first two (CUDA_VISIBLE_DEVICES=0,1: scaling/two) and
#                    cg_bench on every GPU (scaling/cg), the parts SCALING_PARTS names (default
#                    all,two,cg), then scaling_summary.py into scaling/summary.json once all three
#                    are there. SCALING_PARTS may add nographs and nosignals: laplace2d
#                    and stencil27 with --graphs off / --signals off, the baselines of the
#                    replayed and the signalled applies. "trace" records one apply's timeline with Nsight Systems where
#                    nsys is installed (trace/: steps enqueued one by one, then replayed).
#                    "distributed" runs perf_tests/run_distributed.sh into distributed/ (CG
#                    over 1, 2 and 4 MPI ranks, one GPU each, on device-resident vectors).
#                    "tpetra" runs tpetra_bench on one MPI rank (no mpiexec: MPI singleton), the
#                    kspmv CUDA and host applies against Tpetra::CrsMatrix::apply (needs the
#                    Tpetra .debs below; TPETRA_ARGS adds arguments).
#                    "interop" runs interop_bench (interop/).
#                    "hbp-sweep" runs hbp_bench --spmv-only --precision both with every variant
#                    of HBP_SWEEP (space-separated hbp_bench --variant specs; default: the
#                    launch-plan and block-size sweep below) into hbp-sweep/ (hbp_bench.json:
#                    each variant's geomean speedup over cuSPARSE; hbp_variants.csv).
#                    "hbp-profile" profiles the HBP SpMV and combine kernels with Nsight Compute
#                    (the full section set) on HBP_PROFILE_GENS (default: laplace2d:n=2048
#                    kron:scale=20 fullchip:rows=300000), hbp/ncu_hbp.csv.
#                    "stress" runs stress_check (every CUDA kernel STRESS_RUNS times, default
#                    1000, on every matrix, each result checked), then once per kernel and matrix
#                    under compute-sanitizer synccheck and initcheck (stress_sanitizer.log).
#                    "test" leaves out CudaHuge (2^31 non-zeros, minutes): "hugetest" runs it.
#                    "large": spmv_bench --large on LARGE_RESIDENT (default a band of 2.15e9
#                    non-zeros, 25.8 GB in double; kernels LARGE_KERNELS, default
#                    auto,csr-vector,cusparse) into large/resident, and on LARGE_STREAMED (default
#                    stencil27:n=498, 3.3e9 non-zeros, 39.8 GB in double) under a device memory
#                    cap of LARGE_CAP_GB (default 16) into large/streamed (over_h2d: streamed time
#                    over the bare pinned copy). "beyond": BEYOND (default stencil27:n=640, 84.7 GB
#                    in double) uncapped, larger than an 80 GB GPU, into beyond/ (10 rounds), when
#                    the host has the memory (the log says so otherwise). "gen": gen_bench
#                    GEN_ARGS (default --nnz 1e9) into gen/. "read": mm_read_bench on a READ_MB
#                    (default 4000) MB file, one thread then all, into gen/. "reorder":
#                    spmv_bench --reorder auto (double, cuSPARSE and Auto) on REORDER_GENS
#                    (default the five families of the reordering bars: uniform 2e7 x 8, kron 21,
#                    rgg 23, FullChip-like 3e6, k-mer 6e7) into reorder/, cg_bench --reorder auto
#                    at 1e-8 on k-mer 2e7 and stencil7 256^3 into reorder/cg/, permute_bench into
#                    reorder/permute/. "compare": spmv_bench
#                    of this tree with BENCH_ARGS into compare/new, against BASE_JSON (a
#                    spmv_bench.json recorded before: perf_tests/results/GPU/DATE/bench/), or
#                    else against spmv_bench of the sources in BASE_SRC (a directory; or
#                    BASE_REF, a git ref exported when the repository has its history) built in
#                    BUILD_DIR-base and run first into compare/base; perf_tests/compare_bench.py
#                    lists every row's time over the base's (compare/compare.txt).
#                    "kokkos-cuda-build" builds Kokkos 4.6.01 with CUDA (sm_90) by the
#                    build-kokkos.sh beside the release tarball in KOKKOS_TARBALL_DIR (once, into
#                    KOKKOS_CUDA_BUILD/kokkos), Kokkos Kernels 4.6.01 against it by
#                    build-kokkos-kernels.sh (once, KOKKOS_CUDA_BUILD/kokkos-kernels; its default
#                    CUDA TPLs), then kspmv with its nvcc_wrapper
#                    (KOKKOS_CUDA_BUILD/kspmv). "kokkos-cuda" does that (incrementally) and runs
#                    every test with ctest, the GPU present: kokkos_cuda_tests.log and
#                    kokkos_cuda.json (kokkos_cuda_tests_passed, _total, _failed, _skipped).
#                    "kokkos-interop" runs interop_bench of that build (CudaSpace Views on
#                    Kokkos::Cuda instances, the Kokkos CSR kernel on the GPU against cuSPARSE;
#                    the KokkosSparse figures also over KSPMV_MATRICES' files) with
#                    kokkos_cuda.json when present, into kokkos-interop/. "kokkos-bench" runs
#                    spmv_bench of that build: cuSPARSE against kokkos-csr (the Kokkos CSR kernel
#                    on the GPU), double, on the shared matrices and KOKKOS_BENCH_ARGS (default
#                    "--no-default-gen --gen laplace2d:n=2048 --gen stencil27:n=100"), into
#                    kokkos/.
#   KOKKOS_TARBALL_DIR  the directory of kokkos-4.6.01.tar.gz and build-kokkos.sh (default:
#                    shared/third_party in the repository)
#   KOKKOS_CUDA_BUILD   the kokkos-cuda build directory (default: build-kokkos-cuda)
#   KOKKOS_CUDA_TARGET  build only this target there (e.g. kspmv_cli; default: everything)
#   KSPMV_MATRICES   Matrix Market directory for the benchmarks and the tests that take the
#                    shared matrices (default: shared/matrices in the repository if present)
#   BENCH_ARGS       extra spmv_bench arguments (e.g. "--quick" or "--no-default-gen --gen
#                    kron:scale=21"); HBP_ARGS, MULTI_ARGS, CG_ARGS, TPETRA_ARGS the same for
#                    hbp_bench, multi_gpu_bench, cg_bench and tpetra_bench
#   RACECHECK_FILTER the gtest filter of the racecheck run (default: the memcheck set without the
#                    multi-device tests), to fit a time limit
#   BUILD_DIR        build directory (default: build-gpu in the repository)
#   CUDA_ARCHS       CMAKE_CUDA_ARCHITECTURES (default "80;90")
# Kokkos and zlib headers come from the system or, when .debs/ holds Debian packages of them,
# from those packages unpacked (dpkg -x) into .prefix/ (each .deb once; a new one is unpacked on
# the next call; the kokkos-cuda build takes only zlib there). The Tpetra adapter (tpetra step,
# and the MPI tests of the test step) needs Debian 12's Trilinos and OpenMPI there too
# (`apt-get download` on Debian 12): libtrilinos-X-13.2 and libtrilinos-X-dev for X in tpetra,
# teuchos, epetra, belos, kokkos-kernels; libopenmpi3, libopenmpi-dev, openmpi-bin,
# openmpi-common, libpmix2, libevent-core-2.1-7, libevent-pthreads-2.1-7, libhwloc15, libblas3,
# liblapack3, libgfortran5, libquadmath0. OpenMPI then runs from the prefix (OPAL_PREFIX); of the
# general libraries (hwloc, libevent, BLAS, LAPACK, gfortran) the system's copy is used where it
# has one. Results (at most 7 files) go flat into RESULTS_DIR: suite.log, sanitizer.log,
# spmv_bench.{csv,json}, summary.json, speedup.png; hbp/ (hbp_bench.{csv,json}); multi/
# (multi_gpu_bench outputs, multi_gpu.png), cg/ (cg_bench); tpetra/ (tpetra_bench.{csv,json},
# summary.json); large/{resident,streamed}/ and beyond/ (spmv_bench --large:
# spmv_bench.{csv,json}, summary.json); gen/ (gen_bench.json, mm_read_*.json); compare/ (base/,
# new/, compare.txt). The kokkos-cuda steps add kokkos_cuda.json and kokkos_cuda_tests.log. The
# last line of suite.log is "SUITE PASS" or "SUITE FAIL: reason".
set -euo pipefail

RESULTS=${1:?usage: run_gpu_suite.sh RESULTS_DIR}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$RESULTS"
RESULTS=$(cd "$RESULTS" && pwd)
STEPS=",${SUITE_STEPS:-build,test,sanitize,racecheck,bench,hbp},"
BUILD=${BUILD_DIR:-$REPO/build-gpu}
PREFIX=$REPO/.prefix
LOG=$RESULTS/suite.log
JOBS=$(nproc)
STEP=setup

log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$LOG" >&2; }
fail() {
  log "SUITE FAIL: $*"
  exit 1
}
trap 'fail "step ${STEP} failed (line ${LINENO})"' ERR
want() { [[ $STEPS == *",$1,"* ]]; }
# Runs a command with its output appended to $LOG.
run() {
  log "+ $*"
  "$@" >>"$LOG" 2>&1
}

log "kspmv GPU suite: steps ${STEPS//,/ } in $REPO, results in $RESULTS"

# ---- dependencies from .debs when the system lacks them ------------------------------------------
CMAKE_ARGS=(-DKSPMV_ENABLE_CUDA=ON "-DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHS:-80;90}"
            -DCMAKE_BUILD_TYPE=Release)
ZLIB_ARGS=()
if compgen -G "$REPO/.debs/*.deb" >/dev/null; then
  STEP=unpack
  LIBDIR=$PREFIX/usr/lib/x86_64-linux-gnu
  mkdir -p "$PREFIX/.unpacked"
  for deb in "$REPO"/.debs/*.deb; do
    stamp=$PREFIX/.unpacked/$(basename "$deb")
    [[ -e $stamp ]] && continue
    run dpkg -x "$deb" "$PREFIX"
    # General libraries stay the system's where it has them (newer than Debian 12's).
    for soname in libhwloc.so.15 libevent_core-2.1.so.7 libevent_pthreads-2.1.so.7 \
                  libgfortran.so.5 libquadmath.so.0 libblas.so.3 liblapack.so.3; do
      if ldconfig -p | grep -q "^[[:space:]]*$soname "; then
        find "$LIBDIR" -name "$soname*" -delete
      fi
    done
    touch "$stamp"
  done
  CMAKE_ARGS+=("-DCMAKE_PREFIX_PATH=$PREFIX/usr"
               "-DKokkos_DIR=$LIBDIR/cmake/Kokkos")
  export LD_LIBRARY_PATH="$LIBDIR:$LIBDIR/blas:$LIBDIR/lapack${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  if [[ -x $PREFIX/usr/bin/mpicxx.openmpi ]]; then
    # OpenMPI unpacked into the prefix: its wrapper, mpiexec and orted (a one-rank run without
    # mpiexec starts orted) find their files through OPAL_PREFIX.
    export OPAL_PREFIX=$PREFIX/usr OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_MCA_mca_base_component_show_load_errors=0
    CMAKE_ARGS+=("-DMPI_CXX_COMPILER=$PREFIX/usr/bin/mpicxx.openmpi"
                 "-DMPIEXEC_EXECUTABLE=$PREFIX/usr/bin/mpiexec.openmpi")
  fi
  if [[ ! -e /usr/include/zlib.h && -e $PREFIX/usr/include/zlib.h ]]; then
    # The package's libz.so points at its own libz.so.1.2.13; link the system's libz.so.1.
    libz=$(ldconfig -p | awk '/libz\.so\.1 .*x86-64/ {print $NF; exit}')
    ZLIB_ARGS=("-DZLIB_INCLUDE_DIR=$PREFIX/usr/include" "-DZLIB_LIBRARY=${libz:?no libz.so.1}")
    CMAKE_ARGS+=("${ZLIB_ARGS[@]}")
  fi
fi

MATRICES=${KSPMV_MATRICES:-}
if [[ -z $MATRICES && -d $REPO/shared/matrices ]]; then MATRICES=$REPO/shared/matrices; fi
[[ -n $MATRICES ]] && export KSPMV_MATRICES=$MATRICES

# configure DIR ARGS...: cmake, retried with CMAKE_POLICY_VERSION_MINIMUM=3.5 when a package
# config predates CMake 3.5 (CMake 4 refuses it).
configure() {
  if ! run cmake -S "$REPO" -B "$@"; then
    if grep -q "Compatibility with CMake < 3.5" "$LOG"; then
      log "retrying with CMAKE_POLICY_VERSION_MINIMUM=3.5 (a package config predates CMake 3.5)"
      run cmake -S "$REPO" -B "$@" -DCMAKE_POLICY_VERSION_MINIMUM=3.5
    else
      fail "configure"
    fi
  fi
}

if want configure || want build; then
  STEP=configure
  configure "$BUILD" "${CMAKE_ARGS[@]}"
fi

if want build; then
  STEP=build
  run cmake --build "$BUILD" -j "$JOBS"
  # Registers, shared memory and spills of every kernel, for the record.
  log "resource usage of the CUDA kernels (cuobjdump -res-usage):"
  for obj in "$BUILD"/CMakeFiles/kspmv_cuda.dir/backends/cuda/*.cu.o; do
    cuobjdump -res-usage "$obj" 2>/dev/null | grep -E "Function|REG" >>"$LOG" || true
  done
fi

TESTS=$BUILD/unit_tests/kspmv_tests
if want test || want sanitize || want racecheck; then
  STEP=gpu-check
  run nvidia-smi
  run nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem \
      --format=csv
  nvidia-smi -L | grep -q GPU || fail "no GPU visible: the GPU tests would only skip"
  [[ -x $TESTS ]] || fail "$TESTS not built (run the build step first)"
fi

if want test; then
  STEP=test
  run "$TESTS" --gtest_color=no --gtest_filter='-CudaHuge*'  # the hugetest step runs those
  if grep -q "no CUDA device" "$LOG"; then fail "GPU tests skipped although a GPU is present"; fi
  grep "not built yet" "$LOG" | sort -u | sed 's/^/  skipped: /' | tee -a "$LOG" >&2 || true
  STEP=ctest
  run ctest --test-dir "$BUILD" --output-on-failure -j "$JOBS" -E '\.'  # non-gtest tests
fi

# memcheck (step sanitize, about 2 minutes on an H100) and racecheck (step racecheck, over 10
# minutes there: the ring test took 4 minutes in float alone) are separate steps, so that
# each fits one call of the device; both write sanitizer.log (racecheck appends).
if want sanitize || want racecheck; then
  STEP=sanitize
  SAN=$RESULTS/sanitizer.log
  want sanitize && : >"$SAN"
  FILTER='Registry/Conformance.Zoo*/cuda_*:CudaOperatorErrors.*:CudaReorder*:CudaInterop*:CudaRefresh*:CudaOverlap*:CudaSeg*:CudaHbp*:CudaSpmm*:CudaTranspose*:CudaWideOffsets*:CudaRing*:CudaResidency*:CudaDeviceStats*:CudaMemory*:CudaUploadThread*'
  tools=()
  want sanitize && tools+=(memcheck)
  want racecheck && tools+=(racecheck)
  for tool in "${tools[@]}"; do
    # The multi-device tests (CG: thousands of small launches) are too slow under racecheck;
    # memcheck covers them.
    [[ $tool == memcheck ]] && FILTER+=':CudaMultiDevice*:*MultiDeviceOperator*'
    [[ $tool == racecheck ]] && FILTER=${FILTER%:CudaMultiDevice\*:\*MultiDeviceOperator\*}
    # The HBP baselines' CUB block sort takes minutes under racecheck on the whole test set:
    # racecheck checks it in the float test only, memcheck in both.
    [[ $tool == racecheck ]] && FILTER+='-CudaHbp/1.GpuBaselinesEqualHostBaselines'
    [[ $tool == racecheck && ${RACECHECK_PART:-} == ring ]] && FILTER='CudaRing*'
    [[ $tool == racecheck && ${RACECHECK_PART:-} == rest ]] && FILTER+=':CudaRing*'  # excluded
    [[ $tool == racecheck && -n ${RACECHECK_FILTER:-} ]] && FILTER=$RACECHECK_FILTER
    # cuSPARSE's own csrmv kernel reports shared-memory hazards under racecheck; they are the
    # library's, not ours, so racecheck looks at kspmv's kernels only (memcheck checks all).
    exclude=()
    [[ $tool == racecheck ]] && exclude=(--kernel-name-exclude kns=cusparse)
    log "+ compute-sanitizer --tool $tool ${exclude[*]:-} (filter $FILTER) >> sanitizer.log"
    compute-sanitizer --tool "$tool" "${exclude[@]}" --error-exitcode 99 "$TESTS" \
      --gtest_color=no --gtest_filter="$FILTER" >>"$SAN" 2>&1 ||
      fail "compute-sanitizer $tool (see sanitizer.log)"
  done
  grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$SAN" | tee -a "$LOG" >&2 || true
fi

if want stress; then
  STEP=stress
  [[ -n $MATRICES ]] || fail "stress needs KSPMV_MATRICES"
  log "+ stress_check --matrices $MATRICES --runs ${STRESS_RUNS:-1000} ${STRESS_ARGS:-}"
  # shellcheck disable=SC2086  # STRESS_ARGS is a list of words
  "$BUILD/perf_tests/stress_check" --matrices "$MATRICES" --runs "${STRESS_RUNS:-1000}" \
    --out "$RESULTS" ${STRESS_ARGS:-} 2>>"$LOG" | tee -a "$LOG"
  SAN=$RESULTS/stress_sanitizer.log
  : >"$SAN"
  for tool in synccheck initcheck; do
    log "+ compute-sanitizer --tool $tool stress_check --runs 1 >> stress_sanitizer.log"
    # shellcheck disable=SC2086
    compute-sanitizer --tool "$tool" --error-exitcode 99 "$BUILD/perf_tests/stress_check" \
      --matrices "$MATRICES" --runs 1 --vectors 1 --out /tmp ${STRESS_ARGS:-} >>"$SAN" 2>&1 ||
      fail "compute-sanitizer $tool on stress_check (see stress_sanitizer.log)"
  done
  grep -h "ERROR SUMMARY" "$SAN" | tee -a "$LOG" >&2 || true
fi

if want bench; then
  STEP=bench
  args=(--out "$RESULTS")
  [[ -n $MATRICES ]] && args+=(--matrices "$MATRICES")
  read -r -a extra <<<"${BENCH_ARGS:-}"
  log "+ spmv_bench ${args[*]} ${extra[*]:-}"
  "$BUILD/perf_tests/spmv_bench" "${args[@]}" "${extra[@]}" 2>>"$LOG" | tee -a "$LOG"
  STEP=plot
  if python3 -c "import matplotlib" 2>/dev/null; then
    run python3 "$REPO/perf_tests/plot_speedup.py" "$RESULTS/spmv_bench.csv" "$RESULTS/speedup.png"
  else
    log "matplotlib not installed: no speedup.png"
  fi
fi

if want hbp; then
  STEP=hbp
  mkdir -p "$RESULTS/hbp"
  args=(--out "$RESULTS/hbp")
  [[ -n $MATRICES ]] && args+=(--matrices "$MATRICES")
  read -r -a extra <<<"${HBP_ARGS:-}"
  log "+ hbp_bench ${args[*]} ${extra[*]:-}"
  "$BUILD/perf_tests/hbp_bench" "${args[@]}" "${extra[@]}" 2>>"$LOG" | tee -a "$LOG"
fi

if want hbp-sweep; then
  STEP=hbp-sweep
  mkdir -p "$RESULTS/hbp-sweep"
  args=(--out "$RESULTS/hbp-sweep" --spmv-only --precision both)
  [[ -n $MATRICES ]] && args+=(--matrices "$MATRICES")
  sweep=${HBP_SWEEP:-default warps=4 warps=16 slice=0 slice=512 fixed=0 fixed=1 ticket=1
    registers=64 rows=1024 cols=16384 cols=4096 cols=4096,shared_x=-1 cols=4096,shared_x=0
    cols=4096,shared_x=4}
  for v in $sweep; do args+=(--variant "$v"); done
  read -r -a extra <<<"${HBP_ARGS:-}"
  log "+ hbp_bench ${args[*]} ${extra[*]:-}"
  "$BUILD/perf_tests/hbp_bench" "${args[@]}" "${extra[@]}" 2>>"$LOG" | tee -a "$LOG"
fi

if want hbp-profile; then
  STEP=hbp-profile
  mkdir -p "$RESULTS/hbp"
  NCU=$RESULTS/hbp/ncu_hbp.csv
  : >"$NCU"
  for spec in ${HBP_PROFILE_GENS:-laplace2d:n=2048 kron:scale=20 fullchip:rows=300000}; do
    log "+ ncu --set full (hbp_spmv_kernel, hbp_combine_kernel) hbp_bench --gen $spec >> ncu_hbp.csv"
    echo "# matrix $spec" >>"$NCU"
    # Two launches of each kernel (the SpMV and its combine alternate) of a double-precision run.
    ncu --set full --kernel-name regex:'hbp_(spmv|combine)_kernel' --launch-count 4 --csv \
      --page details "$BUILD/perf_tests/hbp_bench" --no-default-gen --gen "$spec" --reps 2 \
      --prep-reps 1 --out "$RESULTS/hbp/profile-run" >>"$NCU" 2>>"$LOG"
  done
  rm -rf "$RESULTS/hbp/profile-run"
fi

if want interop; then
  STEP=interop
  args=(--out "$RESULTS/interop")
  [[ -f $RESULTS/kokkos_cuda.json ]] && args+=(--tests-json "$RESULTS/kokkos_cuda.json")
  [[ -n $MATRICES ]] && args+=(--matrices "$MATRICES")
  log "+ interop_bench ${args[*]}"
  "$BUILD/perf_tests/interop_bench" "${args[@]}" 2>>"$LOG" | tee -a "$LOG"
fi

if want multi; then
  STEP=multi
  gpus=$(nvidia-smi -L | grep -c GPU || true)
  devices=()
  if ((gpus < 2)); then
    log "only $gpus GPU: the multi-GPU runs use two virtual devices on device 0"
    devices=(--devices "0,0")
  fi
  mkdir -p "$RESULTS/multi" "$RESULTS/cg"
  read -r -a extra <<<"${MULTI_ARGS:-}"
  log "+ multi_gpu_bench --out $RESULTS/multi ${devices[*]:-} ${extra[*]:-}"
  "$BUILD/perf_tests/multi_gpu_bench" --out "$RESULTS/multi" "${devices[@]}" "${extra[@]}" \
    2>>"$LOG" | tee -a "$LOG"
  read -r -a extra <<<"${CG_ARGS:-}"
  log "+ cg_bench --out $RESULTS/cg ${devices[*]:-} ${extra[*]:-}"
  "$BUILD/perf_tests/cg_bench" --out "$RESULTS/cg" "${devices[@]}" "${extra[@]}" 2>>"$LOG" |
    tee -a "$LOG"
  if python3 -c "import matplotlib" 2>/dev/null; then
    run python3 "$REPO/perf_tests/plot_multi_gpu.py" "$RESULTS/multi/multi_gpu_bench.csv" \
      "$RESULTS/cg/cg_bench.csv" "$RESULTS/multi/multi_gpu.png"
  fi
fi

if want scaling; then
  STEP=scaling
  gpus=$(nvidia-smi -L | grep -c GPU || true)
  ((gpus >= 2)) || fail "scaling needs at least two GPUs ($gpus found)"
  out=$RESULTS/scaling
  parts=",${SCALING_PARTS:-all,two,cg},"
  mkdir -p "$out"
  read -r -a extra <<<"${MULTI_ARGS:-}"
  # A failed row is in the results (ok: false); the other runs still go on.
  if [[ $parts == *,all,* ]]; then
    log "+ multi_gpu_bench --reps 5 --time-limit 500 --out $out/all ${extra[*]:-}"
    "$BUILD/perf_tests/multi_gpu_bench" --reps 5 --time-limit 500 --out "$out/all" \
      "${extra[@]}" 2>>"$LOG" | tee -a "$LOG" || log "multi_gpu_bench (all GPUs): a row failed"
  fi
  if [[ $parts == *,two,* ]] && ((gpus == 2)) && [[ $parts == *,all,* ]]; then
    log "two GPUs on this machine: scaling/two is scaling/all"
    cp -r "$out/all" "$out/two"
  elif [[ $parts == *,two,* ]]; then
    log "+ CUDA_VISIBLE_DEVICES=0,1 multi_gpu_bench --reps 5 --time-limit 500 --out $out/two"
    CUDA_VISIBLE_DEVICES=0,1 "$BUILD/perf_tests/multi_gpu_bench" --reps 5 --time-limit 500 \
      --out "$out/two" "${extra[@]}" 2>>"$LOG" | tee -a "$LOG" ||
      log "multi_gpu_bench (two GPUs): a row failed"
  fi
  if [[ $parts == *,nographs,* ]]; then  # the baseline: every apply enqueued step by step
    log "+ multi_gpu_bench --graphs off --reps 5 --out $out/nographs (laplace2d, stencil27)"
    "$BUILD/perf_tests/multi_gpu_bench" --graphs off --reps 5 --time-limit 200 \
      --out "$out/nographs" --gen laplace2d:n=4096 --gen stencil27:n=160 2>>"$LOG" |
      tee -a "$LOG" || log "multi_gpu_bench --graphs off: a row failed"
  fi
  if [[ $parts == *,nosignals,* ]]; then  # the halo ordered by events across the devices
    log "+ multi_gpu_bench --signals off --reps 5 --out $out/nosignals (laplace2d, stencil27)"
    "$BUILD/perf_tests/multi_gpu_bench" --signals off --reps 5 --time-limit 200 \
      --out "$out/nosignals" --gen laplace2d:n=4096 --gen stencil27:n=160 2>>"$LOG" |
      tee -a "$LOG" || log "multi_gpu_bench --signals off: a row failed"
  fi
  if [[ $parts == *,cg,* ]]; then
    read -r -a extra <<<"${CG_ARGS:-}"
    log "+ cg_bench --out $out/cg ${extra[*]:-}"
    "$BUILD/perf_tests/cg_bench" --out "$out/cg" "${extra[@]}" 2>>"$LOG" | tee -a "$LOG" ||
      log "cg_bench: a row failed"
  fi
  if [[ -f $out/all/multi_gpu_bench.json && -f $out/two/multi_gpu_bench.json &&
        -f $out/cg/cg_bench.json ]]; then
    run python3 "$REPO/perf_tests/scaling_summary.py" "$out/all/multi_gpu_bench.json" \
      "$out/two/multi_gpu_bench.json" "$out/cg/cg_bench.json" "$out/summary.json"
    cat "$out/summary.json" >>"$LOG"
  fi
fi

if want trace; then
  STEP=trace
  # One multi-device apply's timeline (host API time, each device's gaps) with Nsight Systems,
  # steps enqueued one by one against the replayed graph, on TRACE_GEN (default laplace2d 4096^2).
  if command -v nsys >/dev/null; then
    mkdir -p "$RESULTS/trace"
    for graphs in off on; do
      rep=$RESULTS/trace/apply-graphs-$graphs
      run nsys profile --trace=cuda,nvtx --force-overwrite=true -o "$rep" "$BUILD/kspmv" spmv \
        "gen:${TRACE_GEN:-laplace2d:n=4096}" --backend cuda --devices all --partition rows \
        --exchange halo --iters 20 --graphs "$graphs"
      run nsys stats --report cuda_api_sum,cuda_gpu_trace --format csv --output "$rep" \
        "$rep.nsys-rep"
    done
  else
    log "trace: nsys is not installed on this machine; nothing traced"
  fi
fi

if want tpetra; then
  STEP=tpetra
  [[ -x $BUILD/perf_tests/tpetra_bench ]] ||
    fail "tpetra_bench not built: Tpetra, Belos or MPI not found (see the .debs in the header)"
  mkdir -p "$RESULTS/tpetra"
  read -r -a extra <<<"${TPETRA_ARGS:-}"
  log "+ tpetra_bench --ranks 1 --out $RESULTS/tpetra ${extra[*]:-}"
  "$BUILD/perf_tests/tpetra_bench" --ranks 1 --out "$RESULTS/tpetra" "${extra[@]}" 2>>"$LOG" |
    tee -a "$LOG"
fi

if want distributed; then
  STEP=distributed
  # CG past one process on device-resident vectors (run_distributed.sh: 1, 2, 4 ranks, one GPU
  # each); its distributed.json joins scaling/summary.json as "distributed" where that exists.
  log "+ run_distributed.sh $RESULTS/distributed"
  BUILD_DIR=$BUILD "$REPO/perf_tests/run_distributed.sh" "$RESULTS/distributed" >>"$LOG" 2>&1 ||
    log "run_distributed.sh failed (see the log above)"
  if [[ -f $RESULTS/distributed/distributed.json && -f $RESULTS/scaling/summary.json ]]; then
    run python3 -c 'import json, sys
s = json.load(open(sys.argv[1])); s["distributed"] = json.load(open(sys.argv[2]))
json.dump(s, open(sys.argv[1], "w"), indent=1)' "$RESULTS/scaling/summary.json" \
      "$RESULTS/distributed/distributed.json"
  fi
fi

# Host memory available now, in GB.
available_gb() { awk '/MemAvailable/ {printf "%d", $2 / 1e6}' /proc/meminfo; }

# spmv_bench --large on one generated matrix in double: large_run OUT_SUBDIR SPEC [ARGS...]
large_run() {
  local out=$RESULTS/$1 spec=$2
  shift 2
  mkdir -p "$out"
  log "+ spmv_bench --large --gen $spec --precision double --no-default-gen $* --out $out"
  "$BUILD/perf_tests/spmv_bench" --large --gen "$spec" --precision double --no-default-gen \
    --no-autotune "$@" --out "$out" 2>>"$LOG" | tee -a "$LOG"
}

if want large; then
  STEP=large
  large_run large/resident "${LARGE_RESIDENT:-banded:n=16650000,bw=64}" \
    --kernels "${LARGE_KERNELS:-auto,csr-vector,cusparse}"
  large_run large/streamed "${LARGE_STREAMED:-stencil27:n=498}" \
    --device-memory-cap "${LARGE_CAP_GB:-16}"
fi

if want beyond; then
  STEP=beyond
  if (($(available_gb) >= ${BEYOND_HOST_GB:-100})); then
    large_run beyond "${BEYOND:-stencil27:n=640}" --reps 10
  else
    log "beyond: skipped, ${BEYOND:-stencil27:n=640} needs ${BEYOND_HOST_GB:-100} GB of host memory, $(available_gb) GB available"
  fi
fi

if want hugetest; then
  STEP=hugetest
  run "$TESTS" --gtest_color=no --gtest_filter='CudaHuge*'
  grep -A1 "CudaHuge.*" "$LOG" | grep -i "skipped\|needs" | sed 's/^/  /' | tee -a "$LOG" >&2 || true
fi

if want gen; then
  STEP=gen
  mkdir -p "$RESULTS/gen"
  read -r -a extra <<<"${GEN_ARGS:---nnz 1e9}"
  log "+ gen_bench ${extra[*]} --json > gen/gen_bench.json"
  "$BUILD/perf_tests/gen_bench" "${extra[@]}" --json >"$RESULTS/gen/gen_bench.json" 2>>"$LOG"
  cat "$RESULTS/gen/gen_bench.json" >>"$LOG"
fi

if want reorder; then
  STEP=reorder
  mkdir -p "$RESULTS/reorder/cg" "$RESULTS/reorder/permute"
  read -r -a gens <<<"${REORDER_GENS:-uniform:rows=2e7,k=8 kron:scale=21 rgg:scale=23 fullchip:rows=3e6 kmer:rows=6e7}"
  args=(--precision double --reorder auto --kernels cusparse,auto --no-autotune --no-default-gen)
  for g in "${gens[@]}"; do args+=(--gen "$g"); done
  log "+ spmv_bench ${args[*]}"
  "$BUILD/perf_tests/spmv_bench" "${args[@]}" --out "$RESULTS/reorder" 2>>"$LOG" | tee -a "$LOG"
  args=(--devices 0 --tol 1e-8 --reorder auto --shift 0.01 --gen kmer:rows=2e7 --gen stencil7:n=256)
  log "+ cg_bench ${args[*]}"
  "$BUILD/perf_tests/cg_bench" "${args[@]}" --out "$RESULTS/reorder/cg" 2>>"$LOG" | tee -a "$LOG"
  log "+ permute_bench"
  "$BUILD/perf_tests/permute_bench" --out "$RESULTS/reorder/permute" 2>>"$LOG" | tee -a "$LOG"
fi

if want read; then
  STEP="read"
  mkdir -p "$RESULTS/gen"
  for threads in 1 "$JOBS"; do
    log "+ KSPMV_THREADS=$threads mm_read_bench --mb ${READ_MB:-4000} --no-gzip --json"
    KSPMV_THREADS=$threads "$BUILD/perf_tests/mm_read_bench" --mb "${READ_MB:-4000}" --no-gzip \
      --json >"$RESULTS/gen/mm_read_$threads.json" 2>>"$LOG"
    cat "$RESULTS/gen/mm_read_$threads.json" >>"$LOG"
  done
fi

if want compare; then
  STEP=compare
  read -r -a extra <<<"${BENCH_ARGS:-}"
  args=()
  [[ -n $MATRICES ]] && args+=(--matrices "$MATRICES")
  sides=(new)
  BASE_JSON_FILE=${BASE_JSON:-$RESULTS/compare/base/spmv_bench.json}
  if [[ -z ${BASE_JSON:-} ]]; then
    BASE=${BASE_SRC:-}
    if [[ -z $BASE ]]; then
      git -C "$REPO" rev-parse --verify "${BASE_REF:-main}" >/dev/null 2>&1 ||
        fail "compare: no BASE_JSON or BASE_SRC, and no git ref ${BASE_REF:-main} in $REPO"
      BASE=$BUILD-base-src
      rm -rf "$BASE" && mkdir -p "$BASE"
      git -C "$REPO" archive "${BASE_REF:-main}" | tar -x -C "$BASE"
    fi
    run cmake -S "$BASE" -B "$BUILD-base" "${CMAKE_ARGS[@]}"
    run cmake --build "$BUILD-base" -j "$JOBS" --target spmv_bench
    sides=(base new)
  fi
  for side in "${sides[@]}"; do
    bin=$BUILD/perf_tests/spmv_bench
    [[ $side == base ]] && bin=$BUILD-base/perf_tests/spmv_bench
    mkdir -p "$RESULTS/compare/$side"
    log "+ ($side) spmv_bench ${args[*]} ${extra[*]:-} --out compare/$side"
    "$bin" "${args[@]}" "${extra[@]}" --out "$RESULTS/compare/$side" 2>>"$LOG" >/dev/null
  done
  log "+ compare_bench.py $BASE_JSON_FILE compare/new/spmv_bench.json > compare/compare.txt"
  python3 "$REPO/perf_tests/compare_bench.py" "$BASE_JSON_FILE" \
    "$RESULTS/compare/new/spmv_bench.json" >"$RESULTS/compare/compare.txt"
  tail -n 15 "$RESULTS/compare/compare.txt" | tee -a "$LOG" >&2
fi

KBUILD=${KOKKOS_CUDA_BUILD:-$REPO/build-kokkos-cuda}
if want kokkos-cuda-build || want kokkos-cuda; then
  STEP=kokkos-cuda-build
  tarballs=${KOKKOS_TARBALL_DIR:-$REPO/shared/third_party}
  [[ -f $tarballs/build-kokkos.sh && -f $tarballs/kokkos-4.6.01.tar.gz ]] ||
    fail "no build-kokkos.sh and kokkos-4.6.01.tar.gz in $tarballs (KOKKOS_TARBALL_DIR)"
  if [[ ! -x $KBUILD/kokkos/bin/nvcc_wrapper ]]; then
    run bash "$tarballs/build-kokkos.sh" "$KBUILD/kokkos" cuda
  fi
  # Kokkos Kernels 4.6.01 against it, with its default CUDA TPLs (KokkosSparse::spmv calls
  # cuSPARSE where it can, as an application's usual build does): the KokkosSparse adapter's
  # tests then run on a real KokkosSparse::CrsMatrix in CudaSpace.
  prefix_path=$KBUILD/kokkos
  if [[ -f $tarballs/build-kokkos-kernels.sh && -f $tarballs/kokkos-kernels-4.6.01.tar.gz ]]; then
    if [[ ! -d $KBUILD/kokkos-kernels/lib && ! -d $KBUILD/kokkos-kernels/lib64 ]]; then
      run bash "$tarballs/build-kokkos-kernels.sh" "$KBUILD/kokkos" "$KBUILD/kokkos-kernels"
    fi
    prefix_path="$KBUILD/kokkos;$KBUILD/kokkos-kernels"
  else
    log "no build-kokkos-kernels.sh and kokkos-kernels-4.6.01.tar.gz in $tarballs: kspmv is" \
      "built without Kokkos Kernels, the KokkosSparse adapter's tests are not built"
  fi
  export PATH="/usr/local/cuda/bin:$PATH"  # nvcc_wrapper calls nvcc
  configure "$KBUILD/kspmv" "-DCMAKE_CXX_COMPILER=$KBUILD/kokkos/bin/nvcc_wrapper" \
    "-DCMAKE_PREFIX_PATH=$prefix_path" -DKSPMV_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCMAKE_BUILD_TYPE=Release "${ZLIB_ARGS[@]}"
  targets=()
  [[ -n ${KOKKOS_CUDA_TARGET:-} ]] && targets=(--target "$KOKKOS_CUDA_TARGET")
  run cmake --build "$KBUILD/kspmv" -j "$JOBS" "${targets[@]}"
fi

if want kokkos-cuda; then
  STEP=kokkos-cuda
  nvidia-smi -L | grep -q GPU || fail "no GPU visible: the Kokkos CUDA tests cannot run"
  KLOG=$RESULTS/kokkos_cuda_tests.log
  log "+ ctest --test-dir $KBUILD/kspmv -j 4 > kokkos_cuda_tests.log"
  ctest --test-dir "$KBUILD/kspmv" --output-on-failure -j 4 --timeout 900 >"$KLOG" 2>&1 || true
  # "N% tests passed, F tests failed out of T", or "100% tests passed out of T" (CMake 4)
  summary=$(grep -E "tests passed(, [0-9]+ tests? failed)? out of [0-9]+" "$KLOG" | tail -1) ||
    fail "no ctest summary in kokkos_cuda_tests.log"
  failed=0
  [[ $summary =~ ([0-9]+)\ tests?\ failed ]] && failed=${BASH_REMATCH[1]}
  total=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$summary")
  skipped=$(grep -cE "\(Skipped\)$" "$KLOG" || true)
  printf '{"kokkos_cuda_tests_passed": %d, "kokkos_cuda_tests_total": %d, ' \
    $((total - failed - skipped)) "$total" >"$RESULTS/kokkos_cuda.json"
  printf '"kokkos_cuda_tests_failed": %d, "kokkos_cuda_tests_skipped": %d}\n' "$failed" \
    "$skipped" >>"$RESULTS/kokkos_cuda.json"
  log "Kokkos CUDA build: $summary, $skipped skipped"
  grep -A200 "The following tests FAILED" "$KLOG" | tee -a "$LOG" >&2 || true
  ((failed == 0)) || fail "$failed tests failed against the Kokkos CUDA build"
fi

if want kokkos-interop; then
  STEP=kokkos-interop
  [[ -x $KBUILD/kspmv/perf_tests/interop_bench ]] ||
    fail "$KBUILD/kspmv/perf_tests/interop_bench not built (run kokkos-cuda-build first)"
  args=(--out "$RESULTS/kokkos-interop")
  [[ -f $RESULTS/kokkos_cuda.json ]] && args+=(--tests-json "$RESULTS/kokkos_cuda.json")
  [[ -n $MATRICES ]] && args+=(--matrices "$MATRICES")
  log "+ interop_bench (Kokkos CUDA build) ${args[*]}"
  "$KBUILD/kspmv/perf_tests/interop_bench" "${args[@]}" 2>>"$LOG" | tee -a "$LOG"
fi

if want kokkos-bench; then
  STEP=kokkos-bench
  [[ -x $KBUILD/kspmv/perf_tests/spmv_bench ]] ||
    fail "$KBUILD/kspmv/perf_tests/spmv_bench not built (run kokkos-cuda-build first)"
  mkdir -p "$RESULTS/kokkos"
  args=(--out "$RESULTS/kokkos" --kernels cusparse,kokkos-csr --precision double --no-autotune)
  [[ -n $MATRICES ]] && args+=(--matrices "$MATRICES")
  read -r -a extra <<<"${KOKKOS_BENCH_ARGS:---no-default-gen --gen laplace2d:n=2048 --gen stencil27:n=100}"
  log "+ spmv_bench (Kokkos CUDA build) ${args[*]} ${extra[*]}"
  "$KBUILD/kspmv/perf_tests/spmv_bench" "${args[@]}" "${extra[@]}" 2>>"$LOG" | tee -a "$LOG"
fi

trap - ERR
log "SUITE PASS"
