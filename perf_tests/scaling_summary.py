#!/usr/bin/env python3
"""The multi-GPU scaling summary of one machine (issue 31's bars), from the outputs of one run:

    scaling_summary.py MULTI_ALL_JSON MULTI_2_JSON CG_JSON OUT_JSON

MULTI_ALL_JSON: multi_gpu_bench.json on every GPU of the machine; MULTI_2_JSON: the same on two
of them (CUDA_VISIBLE_DEVICES=0,1); CG_JSON: cg_bench.json on every GPU. '-' for MULTI_2_JSON or
CG_JSON: not run (their keys are null). Writes OUT_JSON with
the geomean of the best mode over the six large families (FullChip-like apart), each family's
best, the time beyond the kernels on laplace2d 4096^2, how far each partition's exchange 'auto'
row is from its best row, the largest set-up in single-GPU SpMVs, the cost model's error on each
family's best mode, and CG's speedups; prints it.
"""
import json
import math
import sys

FULLCHIP = "fullchip"


def load(path):
    with open(path) as f:
        return json.load(f)


def family(matrix):
    return matrix.split(":")[0]


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def multi_summary(bench):
    rows = [r for r in bench["results"] if r.get("gpus", 1) > 1 and r.get("ok")]
    rows = [r for r in rows if r.get("ms") is not None and r.get("speedup_vs_1gpu") is not None]
    fixed = [r for r in rows if not r.get("devices_chosen")]
    best = {}
    for r in fixed:
        f = family(r["matrix"])
        if f not in best or r["speedup_vs_1gpu"] > best[f]["speedup_vs_1gpu"]:
            best[f] = r
    large = {f: r for f, r in best.items() if f != FULLCHIP}
    auto_gap = {}  # per family and partition: the auto row's time over the partition's best
    for r in fixed:
        if r["exchange"] != "auto":
            continue
        same = [q for q in fixed if q["matrix"] == r["matrix"] and q["partition"] == r["partition"]]
        auto_gap[f'{family(r["matrix"])}/{r["partition"]}'] = r["ms"] / min(q["ms"] for q in same)
    lap = best.get("laplace2d")
    model = {f: (r["predicted_ms"] - r["ms"]) / r["ms"] for f, r in best.items()
             if r.get("predicted_ms") is not None}
    setups = [r["setup_cost_spmvs"] for r in fixed if r.get("setup_cost_spmvs") is not None]
    chosen = {family(r["matrix"]): r["gpus"] for r in rows if r.get("devices_chosen")}
    failed = [f'{r["matrix"]} {r["partition"]} {r["exchange"]}' for r in bench["results"]
              if not r.get("ok")]
    return {
        "gpus": bench["gpus"],
        "geomean_large": geomean([r["speedup_vs_1gpu"] for r in large.values()]),
        "best": {f: {"speedup": r["speedup_vs_1gpu"], "mode": f'{r["partition"]}/{r["exchange"]}',
                     "ms": r["ms"], "beyond_kernels_us": r.get("beyond_kernels_us")}
                 for f, r in best.items()},
        "laplace2d_beyond_kernels_us": lap.get("beyond_kernels_us") if lap else None,
        "laplace2d_beyond_kernels_us_min": min(
            (r["beyond_kernels_us"] for r in fixed
             if family(r["matrix"]) == "laplace2d" and r.get("beyond_kernels_us") is not None),
            default=None),
        "auto_over_partition_best_max": max(auto_gap.values(), default=None),
        "auto_over_partition_best": auto_gap,
        "setup_spmvs_max": max(setups, default=None),
        "model_error_on_best": model,
        "devices_chosen": chosen,
        "failed_rows": failed,
    }


def cg_summary(bench):
    best, chosen = {}, {}
    for r in bench["results"]:
        if not r.get("ok") or r.get("speedup_vs_1gpu") is None:
            continue
        f = family(r["matrix"])
        if r["variant"] == "halo-chosen":
            chosen[r["matrix"]] = {"gpus": r["gpus"], "speedup": r["speedup_vs_1gpu"]}
        elif r["gpus"] > 1 and r["speedup_vs_1gpu"] > best.get(f, {}).get("speedup", 0):
            best[f] = {"speedup": r["speedup_vs_1gpu"], "variant": r["variant"],
                       "ms_per_iteration": r["ms_per_iteration"]}
    return {"best": best, "chosen": chosen,
            "chosen_min_speedup": min((c["speedup"] for c in chosen.values()), default=None),
            "failed_rows": [f'{r["matrix"]} {r["variant"]}' for r in bench["results"]
                            if not r.get("ok")]}


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    everything, two, cg = (load(p) if p != "-" else None for p in sys.argv[1:4])
    m_all = multi_summary(everything)
    m_two = multi_summary(two) if two else {"geomean_large": None}
    c = cg_summary(cg) if cg else {"best": {}, "chosen": {}, "chosen_min_speedup": None}
    n = m_all["gpus"]
    word = {2: "two", 4: "four", 8: "eight"}.get(n, str(n))
    out = {
        "kspmv_version": everything.get("kspmv_version"),  # the kspmv that measured
        "kspmv_commit": everything.get("kspmv_commit"),
        "device": everything["device"],
        "date": everything["date"],
        "gpus": n,
        f"{word}_gpu_geomean": m_all["geomean_large"],
        "two_gpu_geomean": m_two["geomean_large"],
        f"overhead_us_laplace2d_{n}gpu": m_all["laplace2d_beyond_kernels_us"],
        f"cg_stencil27_{n}gpu": c["best"].get("stencil27", {}).get("speedup"),
        f"cg_stencil7_{n}gpu": c["best"].get("stencil7", {}).get("speedup"),
        "cg_chosen_min_speedup": c["chosen_min_speedup"],
        "multi": m_all,
        "multi_two": m_two,
        "cg": c,
    }
    with open(sys.argv[4], "w") as f:
        json.dump(out, f, indent=1)
    print(json.dumps({k: v for k, v in out.items() if not isinstance(v, dict)}, indent=1))
    for f, b in m_all["best"].items():
        print(f'{f:12s} {b["mode"]:22s} x{b["speedup"]:.2f}  beyond {b["beyond_kernels_us"]:.1f} us'
              f'  model {100 * m_all["model_error_on_best"].get(f, float("nan")):+.0f}%')


if __name__ == "__main__":
    main()
