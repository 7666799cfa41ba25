#!/usr/bin/env python3
"""Multi-GPU speedup over one GPU per matrix and partition/exchange from multi_gpu_bench.csv
(left: SpMV time with the exchange, the speedup bound as a marker), and CG speedup per variant
from cg_bench.csv when given (right), as a PNG.

usage: plot_multi_gpu.py multi_gpu_bench.csv [cg_bench.csv] multi_gpu.png
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read(path, label_of, key="speedup_vs_1gpu"):
    """matrix -> label -> (speedup, bound); labels in first-seen order."""
    table, labels = defaultdict(dict), []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row["gpus"] == "1" or not row.get(key):
                continue
            label = label_of(row)
            bound = float(row["speedup_bound"]) if row.get("speedup_bound") else None
            table[row["matrix"]][label] = (float(row[key]), bound)
            if label not in labels:
                labels.append(label)
    return table, labels


def panel(ax, table, labels, title):
    matrices = list(table)
    width = 0.8 / max(1, len(labels))
    for k, label in enumerate(labels):
        xs = [i + k * width for i in range(len(matrices))]
        ys = [table[m].get(label, (0, None))[0] for m in matrices]
        ax.bar(xs, ys, width, label=label)
        bounds = [(x, table[m][label][1]) for x, m in zip(xs, matrices)
                  if label in table[m] and table[m][label][1]]
        if bounds:
            ax.scatter([b[0] for b in bounds], [b[1] for b in bounds], marker="_", color="k",
                       s=40, zorder=3)
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(matrices))])
    ax.set_xticklabels(matrices, rotation=30, ha="right", fontsize=7)
    ax.set_ylabel("speedup over 1 GPU")
    ax.set_title(title)
    ax.legend(fontsize=6, ncol=2)


def main(argv):
    if len(argv) not in (3, 4):
        sys.exit(__doc__)
    spmv, spmv_labels = read(argv[1], lambda r: r["partition"] + "/" + r["exchange"])
    panels = [(spmv, spmv_labels, "SpMV incl. exchange (black: bound)")]
    if len(argv) == 4:
        cg, cg_labels = read(argv[2], lambda r: r["variant"])
        panels.append((cg, cg_labels, "CG time per iteration"))
    fig, axes = plt.subplots(1, len(panels), figsize=(8 * len(panels), 5), squeeze=False)
    for ax, (table, labels, title) in zip(axes[0], panels):
        panel(ax, table, labels, title)
    fig.tight_layout()
    fig.savefig(argv[-1], dpi=130)
    print("wrote", argv[-1])


if __name__ == "__main__":
    main(sys.argv)
