#!/usr/bin/env python3
"""Formats bench_gemm CSVs as the Markdown tables of docs/benchmarks.md: one row per shape, one column
per transpose case, each cell "attn_gemm GFLOP/s (fraction of the FMA peak, ratio to the best of the
other libraries measured in the same run)". Given several CSVs (repeated runs), each number is the
median over the runs. Ratios below 0.9 are in bold.
Usage: bench/gemm_table.py build/bench_gemm.csv [more.csv ...]"""
import csv
import statistics
import sys

paths = sys.argv[1:] or ["build/bench_gemm.csv"]
runs = [list(csv.DictReader(open(p))) for p in paths]
cells = {}
order = []
for rows in runs:
    for r in rows:
        key = (r["threads"], r["kind"], int(r["M"]), int(r["N"]), int(r["K"]))
        if key not in order:
            order.append(key)
        cells.setdefault((key, r["trans"]), []).append(
            (float(r["attn_gflops"]), float(r["attn_peak"]), float(r["best_other"])))

print(f"Median of {len(runs)} run(s) of build/bench_gemm, one value per cell.")
for threads in sorted({k[0] for k in order}):
    other = "the best of OpenBLAS, BLIS, oneDNN and libxsmm" if threads == "1" else "OpenBLAS"
    print(f"\n{threads} thread{'s' if threads != '1' else ''}: attn_gemm GFLOP/s (% of the FMA peak"
          f"{' x 2' if threads != '1' else ''}, attn / {other})\n")
    print("| shape | M | N | K | NN | NT | TN | TT |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for key in (k for k in order if k[0] == threads):
        out = []
        for op in ("NN", "NT", "TN", "TT"):
            vals = cells[(key, op)]
            a = statistics.median(v[0] for v in vals)
            pk = statistics.median(v[1] for v in vals)
            rs = [v[0] / v[2] for v in vals if v[2] > 0]
            ratio = statistics.median(rs) if rs else 0
            cell = f"{a:.0f} ({100 * pk:.0f}%, {ratio:.2f})"
            out.append(f"**{cell}**" if 0 < ratio < 0.9 else cell)
        print(f"| {key[1]} | {key[2]} | {key[3]} | {key[4]} | " + " | ".join(out) + " |")
