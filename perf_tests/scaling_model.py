#!/usr/bin/env python3
"""Predicted time of one SpMV of a TpetraOperator on 1 to 64 nodes (one GPU, one MPI rank a node)
from the structure scaling_halo measured and the single-GPU rate spmv_bench measured, for stated
network figures: a CSV, the Markdown tables of perf_tests/README.md (on stdout) and a plot (PNG,
when matplotlib is installed).

usage: scaling_model.py scaling_halo.csv spmv_bench.csv OUT_DIR
                        [--bandwidth 25,50] [--latency-us 2] [--floor-us 5] [--kernel auto]

Model, per rank r of N (the TpetraOperator imports the halo, then runs its local SpMV):
  t_spmv(r) = max(floor, bytes(r) / B), bytes(r) = 12 nnz_r + 4 (rows_r + 1)
                                                   + 8 (rows_r + owned_r + received_r)
      B: the effective bandwidth of the single-GPU run on the whole matrix (spmv_bench, double,
      --kernel), so that the model gives the measured time on one rank
  t_halo(r) = latency * max(sources_r, targets_r) + 8 max(received_r, sent_r) / bandwidth
      (a full-duplex link a node, GPU memory to GPU memory, one message per neighbour)
  t(N) = max over r of t_spmv(r) + t_halo(r); speedup = t(1) / t(N), t(1) the measured time.
"""
import argparse
import csv
import os
from collections import defaultdict


def read_rates(path, kernel):
    """matrix -> (ms, GB/s) of `kernel` in double."""
    rates = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row["precision"] == "double" and row["kernel"] == kernel and row["ok"] == "1":
                rates[row["matrix"]] = (float(row["ms"]), float(row["gbps"]))
    return rates


def read_structure(path):
    """(matrix, split, ranks) -> list of per-rank dicts, in rank order."""
    ranks = defaultdict(list)
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            key = (row["matrix"], row["split"], int(row["ranks"]))
            ranks[key].append({k: int(v) for k, v in row.items() if k not in ("matrix", "split")})
    return ranks


def predict(structure, rates, bandwidths, latency, floor):
    """Rows of predictions: matrix, split, bandwidth, ranks, spmv/halo/total us, speedup."""
    out = []
    for (matrix, split, n), ranks in structure.items():  # the order of scaling_halo.csv
        if matrix not in rates:
            continue
        ms1, gbps = rates[matrix]
        for bw in bandwidths:
            worst = spmv_max = halo_max = 0.0
            for r in ranks:
                nbytes = (12 * r["nnz"] + 4 * (r["rows"] + 1)
                          + 8 * (r["rows"] + r["owned"] + r["received"]))
                spmv = max(floor, nbytes / (gbps * 1e3))  # us: bytes / (GB/s * 1e3)
                halo = (latency * max(r["sources"], r["targets"])
                        + 8 * max(r["received"], r["sent"]) / (bw * 1e3))
                worst = max(worst, spmv + halo)
                spmv_max, halo_max = max(spmv_max, spmv), max(halo_max, halo)
            total = 1e3 * ms1 if n == 1 else worst
            out.append({"matrix": matrix, "split": split, "bandwidth_gbs": bw, "ranks": n,
                        "spmv_us": spmv_max, "halo_us": halo_max, "time_us": total,
                        "speedup": 1e3 * ms1 / total, "efficiency": 1e3 * ms1 / total / n,
                        "halo_bound": int(halo_max >= spmv_max and n > 1)})
    return out


def summary(pred, structure, bandwidths):
    """The README's tables, as Markdown lines: the NZ split's predictions, and the halo of the
    busiest rank per owned row for both splits."""
    by = defaultdict(dict)
    for p in pred:
        by[(p["matrix"], p["split"], p["bandwidth_gbs"])][p["ranks"]] = p
    matrices = list(dict.fromkeys(p["matrix"] for p in pred))
    counts = sorted({p["ranks"] for p in pred})
    top = counts[-1]
    lines = ["| matrix | nnz | 1 GPU (us) | " + " | ".join(
        f"speedup at {n} ({bw:g} GB/s)" for bw in bandwidths for n in (8, top)) +
        " | halo >= SpMV from | best N (speedup) |",
        "|" + " --- |" * (5 + 2 * len(bandwidths))]
    for m in matrices:
        nnz = sum(r["nnz"] for r in structure[(m, "nz", 1)])
        for split in ("nz",):
            cells = []
            for bw in bandwidths:
                for n in (8, top):
                    cells.append(f"{by[(m, split, bw)][n]['speedup']:.1f}")
            halo_from, best = [], []
            for bw in bandwidths:
                t = by[(m, split, bw)]
                bound = [n for n in counts if t[n]["halo_bound"]]
                halo_from.append(str(bound[0]) if bound else f"> {top}")
                peak = max(counts, key=lambda n: t[n]["speedup"])
                best.append(f"{peak} ({t[peak]['speedup']:.1f})")
            lines.append(f"| {m} | {nnz / 1e6:.0f}M | {by[(m, split, bandwidths[0])][1]['time_us']:.0f}"
                         f" | " + " | ".join(cells) + f" | {' / '.join(halo_from)} | "
                         f"{' / '.join(best)} |")
    lines.append("")
    lines.append("| matrix | split | " + " | ".join(f"{n} ranks" for n in counts[1:]) + " |")
    lines.append("|" + " --- |" * (1 + len(counts)))
    for m in matrices:
        for split in ("rows", "nz"):
            cells = []
            for n in counts[1:]:
                ranks = structure[(m, split, n)]
                recv = max(r["received"] for r in ranks)
                rows = max(r["rows"] for r in ranks)
                cells.append(f"{recv / max(1, rows):.2f}")
            lines.append(f"| {m} | {split} | " + " | ".join(cells) + " |")
    return lines


def plot(pred, bandwidths, path):
    try:
        import matplotlib
    except ImportError:
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    matrices = list(dict.fromkeys(p["matrix"] for p in pred))
    cols = 4
    rows = (len(matrices) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3.4 * rows), squeeze=False)
    for ax, m in zip(axes.flat, matrices):
        counts = sorted({p["ranks"] for p in pred if p["matrix"] == m})
        ax.plot(counts, counts, color="0.8", label="ideal")
        for split, style in (("nz", "-"), ("rows", ":")):
            for bw, color in zip(bandwidths, ("tab:blue", "tab:orange", "tab:green", "tab:red")):
                ys = [p["speedup"] for n in counts for p in pred
                      if p["matrix"] == m and p["split"] == split and p["bandwidth_gbs"] == bw
                      and p["ranks"] == n]
                ax.plot(counts, ys, style, color=color, marker="o" if split == "nz" else None,
                        markersize=3, label=f"{split}, {bw:g} GB/s")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.set_title(m, fontsize=9)
        ax.set_xlabel("nodes (1 GPU, 1 rank each)", fontsize=8)
        ax.set_ylabel("speedup over 1 GPU", fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(matrices):]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower right", fontsize=8)
    fig.suptitle("TpetraOperator SpMV past one node: model from the H100 rate and the halo", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("halo_csv")
    ap.add_argument("spmv_csv")
    ap.add_argument("out_dir")
    ap.add_argument("--bandwidth", default="25,50", help="GB/s a node, comma-separated")
    ap.add_argument("--latency-us", type=float, default=2.0)
    ap.add_argument("--floor-us", type=float, default=5.0, help="least time of a local SpMV")
    ap.add_argument("--kernel", default="auto", help="the spmv_bench kernel whose rate is used")
    a = ap.parse_args()
    bandwidths = [float(b) for b in a.bandwidth.split(",")]
    structure = read_structure(a.halo_csv)
    pred = predict(structure, read_rates(a.spmv_csv, a.kernel), bandwidths, a.latency_us,
                   a.floor_us)
    os.makedirs(a.out_dir, exist_ok=True)
    with open(os.path.join(a.out_dir, "scaling_model.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(pred[0]))
        w.writeheader()
        for p in pred:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in p.items()})
    print("\n".join(summary(pred, structure, bandwidths)))
    if not plot(pred, bandwidths, os.path.join(a.out_dir, "scaling_model.png")):
        print("matplotlib not installed: no scaling_model.png")


if __name__ == "__main__":
    main()
