#!/usr/bin/env python3
"""Compares two spmv_bench.json files of the same matrices (a base build and a new one): for every
(matrix, precision, kernel) row both hold, the new time over the base's, then the geometric mean
per kernel and overall, and the rows more than 5% slower.

    perf_tests/compare_bench.py BASE/spmv_bench.json NEW/spmv_bench.json
"""
import json
import math
import sys


def rows(path):
    with open(path) as f:
        data = json.load(f)
    out = {}
    for r in data["results"]:
        if r.get("ms") is not None and r.get("ok", True):
            out[(r["matrix"], r["precision"], r["kernel"])] = r["ms"]
    return data.get("device", "?"), out


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    base_device, base = rows(sys.argv[1])
    new_device, new = rows(sys.argv[2])
    common = sorted(set(base) & set(new))
    print(f"base: {sys.argv[1]} ({base_device}), new: {sys.argv[2]} ({new_device})")
    print(f"{'matrix':28} {'prec':6} {'kernel':16} {'base ms':>10} {'new ms':>10} {'new/base':>9}")
    by_kernel = {}
    for key in common:
        ratio = new[key] / base[key]
        by_kernel.setdefault(key[2], []).append(ratio)
        print(f"{key[0][:28]:28} {key[1]:6} {key[2]:16} {base[key]:10.4f} {new[key]:10.4f} "
              f"{ratio:9.3f}{'  SLOWER' if ratio > 1.05 else ''}")
    print()
    print(f"{'kernel':16} {'rows':>5} {'geomean new/base':>17} {'worst':>7}")
    for kernel, ratios in sorted(by_kernel.items()):
        print(f"{kernel:16} {len(ratios):5d} {geomean(ratios):17.3f} {max(ratios):7.3f}")
    everything = [r for ratios in by_kernel.values() for r in ratios]
    slower = sum(r > 1.05 for r in everything)
    print(f"{'all':16} {len(everything):5d} {geomean(everything):17.3f} "
          f"{max(everything, default=float('nan')):7.3f}")
    print(f"{slower} of {len(everything)} rows more than 5% slower; rows in one file only: "
          f"{len(set(base) ^ set(new))}")


if __name__ == "__main__":
    main()
