#!/usr/bin/env python3
"""Speedup over cuSPARSE (CSR_ALG1) per matrix and kernel from spmv_bench.csv, one panel per
precision, as a PNG.

usage: plot_speedup.py spmv_bench.csv speedup.png
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    speedup = defaultdict(dict)  # (precision, matrix) -> kernel -> speedup
    kernels = []
    with open(argv[1], newline="") as f:
        for row in csv.DictReader(f):
            if not row["speedup_vs_cusparse"] or row["kernel"] == "cusparse":
                continue
            speedup[(row["precision"], row["matrix"])][row["kernel"]] = float(
                row["speedup_vs_cusparse"])
            if row["kernel"] not in kernels:
                kernels.append(row["kernel"])
    precisions = sorted({p for p, _ in speedup})
    if not precisions:
        sys.exit("no speedups in " + argv[1])
    fig, axes = plt.subplots(len(precisions), 1, squeeze=False,
                             figsize=(max(8, 0.9 * len(speedup)), 4.5 * len(precisions)))
    width = 0.8 / max(1, len(kernels))
    for ax, precision in zip(axes[:, 0], precisions):
        matrices = sorted(m for p, m in speedup if p == precision)
        for k, kernel in enumerate(kernels):
            xs = [i + (k - (len(kernels) - 1) / 2) * width for i in range(len(matrices))]
            ys = [speedup[(precision, m)].get(kernel, 0.0) for m in matrices]
            ax.bar(xs, ys, width, label=kernel)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(matrices)))
        ax.set_xticklabels(matrices, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("speedup over cuSPARSE ALG1")
        ax.set_title(f"SpMV speedup over cuSPARSE ({precision})")
        ax.legend(fontsize=8, ncol=4)
    fig.tight_layout()
    fig.savefig(argv[2], dpi=120)


if __name__ == "__main__":
    main(sys.argv)
