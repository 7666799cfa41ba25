#!/usr/bin/env bash
# CG past one process on device-resident vectors (issue 32): distributed_bench under mpiexec on
# 1, 2 and 4 ranks, one GPU each (picked by node-local rank), strong scaling on DISTRIBUTED_MATRIX
# and weak scaling (about DISTRIBUTED_WEAK_N^3 rows of stencil27 per rank, each rank generating
# its own block); the 1-rank launch also runs kspmv::cg in one process on one GPU and on every GPU.
#
#   BUILD_DIR=build-gpu perf_tests/run_distributed.sh RESULTS_DIR
#
# Environment:
#   BUILD_DIR             the build with distributed_bench (default: build-gpu in the repository)
#   MPIEXEC               mpiexec to use (default: the build's MPIEXEC_EXECUTABLE, else mpiexec)
#   DISTRIBUTED_RANKS     rank counts (default "1 2 4"; those above the GPUs present are skipped
#                         with the CUDA backend)
#   DISTRIBUTED_MATRIX    strong-scaling matrix (default stencil27:n=160)
#   DISTRIBUTED_WEAK_N    weak scaling: n^3 rows per rank (default 160)
#   DISTRIBUTED_ARGS      more distributed_bench arguments (e.g. "--backend host --runs 5")
# Results in RESULTS_DIR: np1/, np2/, np4/ (each launch's distributed_bench.{csv,json},
# summary.json and log), distributed.csv (every row, with over_one_process: ms per iteration over
# kspmv::cg in one process on one GPU) and distributed.json, whose ratios are times per iteration,
# X over Y:
#   belos_1rank_over_one_process       Belos CG on 1 rank / kspmv::cg, one process, one GPU
#   fused_4rank_over_one_process_4gpu  fused CG on 4 ranks / kspmv::cg, one process, every GPU
#   fused_4rank_over_1rank             fused CG on 4 ranks / on 1 rank (a 2.5x speedup is 0.4)
#   weak_4rank_over_1rank              fused CG, weak scaling, 4 ranks / 1 rank
# plus iterations_equal (every distributed strong-scaling solve took the one-process iterations).
set -euo pipefail

RESULTS=${1:?usage: run_distributed.sh RESULTS_DIR}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD_DIR:-$REPO/build-gpu}
BENCH=$BUILD/perf_tests/distributed_bench
[[ -x $BENCH ]] || { echo "run_distributed.sh: $BENCH not built (Tpetra, Belos, MPI?)" >&2; exit 1; }
if [[ -z ${MPIEXEC:-} ]]; then
  MPIEXEC=$(sed -n 's/^MPIEXEC_EXECUTABLE:FILEPATH=//p' "$BUILD/CMakeCache.txt" 2>/dev/null || true)
  MPIEXEC=${MPIEXEC:-mpiexec}
fi
mkdir -p "$RESULTS"
RESULTS=$(cd "$RESULTS" && pwd)
# OpenMPI: root is intended, more ranks than cores allowed, ranks not pinned to one core each.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_hwloc_base_binding_policy=none
read -r -a extra <<<"${DISTRIBUTED_ARGS:-}"
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)

csvs=()
for ranks in ${DISTRIBUTED_RANKS:-1 2 4}; do
  if [[ " ${extra[*]:-} " != *" host "* ]] && ((gpus > 0 && ranks > gpus)); then
    echo "run_distributed.sh: $ranks ranks: only $gpus GPU(s), skipped" >&2
    continue
  fi
  out=$RESULTS/np$ranks
  mkdir -p "$out"
  args=(--matrix "${DISTRIBUTED_MATRIX:-stencil27:n=160}" --weak-n "${DISTRIBUTED_WEAK_N:-160}"
        --out "$out")
  ((ranks == 1)) && args+=(--baselines)
  echo "+ $MPIEXEC -np $ranks $BENCH ${args[*]} ${extra[*]:-}" >&2
  "$MPIEXEC" -np "$ranks" "$BENCH" "${args[@]}" "${extra[@]}" 2>&1 | tee "$out/log.txt"
  csvs+=("$out/distributed_bench.csv")
done
((${#csvs[@]} > 0)) || { echo "run_distributed.sh: nothing ran" >&2; exit 1; }

# Every row, with over_one_process; then the ratios the issue asks for.
awk -F, -v OFS=, '
  FNR == 1 { if (NR == 1) { for (i = 1; i <= NF; ++i) col[$i] = i; header = $0 } next }
  { rows[++n] = $0
    if ($col["solver"] == "one-process" && $col["devices"] == 1) base = $col["ms_per_iteration"] }
  END {
    print header ",over_one_process"
    for (i = 1; i <= n; ++i) {
      split(rows[i], f, ",")
      print rows[i] "," (base > 0 ? f[col["ms_per_iteration"]] / base : "")
    }
  }' "${csvs[@]}" >"$RESULTS/distributed.csv"

awk -F, '
  NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
  { key = $col["scaling"] "/" $col["solver"] "/" $col["ranks"] "/" $col["devices"]
    ms[key] = $col["ms_per_iteration"]; it[key] = $col["iterations"]
    if ($col["solver"] == "one-process") {
      if ($col["devices"] == 1) { one = $col["ms_per_iteration"]; iters = $col["iterations"] }
      else all = $col["ms_per_iteration"]
    }
    if ($col["scaling"] == "strong" && $col["solver"] != "one-process") strong[key] = $col["iterations"]
  }
  function ratio(a, b) { return (a != "" && b != "" && b > 0) ? sprintf("%.4f", a / b) : "null" }
  END {
    equal = "true"
    for (k in strong) if (iters == "" || strong[k] != iters) equal = "false"
    printf "{\n"
    printf "  \"belos_1rank_over_one_process\": %s,\n", ratio(ms["strong/belos/1/1"], one)
    printf "  \"fused_4rank_over_one_process_4gpu\": %s,\n", ratio(ms["strong/fused/4/4"], all)
    printf "  \"fused_4rank_over_1rank\": %s,\n", ratio(ms["strong/fused/4/4"], ms["strong/fused/1/1"])
    printf "  \"weak_4rank_over_1rank\": %s,\n", ratio(ms["weak/fused/4/4"], ms["weak/fused/1/1"])
    printf "  \"iterations_equal\": %s\n", equal
    printf "}\n"
  }' "$RESULTS/distributed.csv" >"$RESULTS/distributed.json"
cat "$RESULTS/distributed.json"
