#!/usr/bin/env python3
"""Formats bench_gemm CSVs as the Markdown tables of the README: one row per shape, one column per
transpose case, each cell "attn GFLOP/s (ratio to OpenBLAS)". Given several CSVs (repeated runs), each
number is the median over the runs. Ratios below 0.9 are in bold.
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
        cells.setdefault((key, r["trans"]), []).append((float(r["attn_gflops"]), float(r["openblas_gflops"])))

print(f"Median of {len(runs)} run(s) of build/bench_gemm, one value per cell.")
for threads in sorted({k[0] for k in order}):
    print(f"\n{threads} thread{'s' if threads != '1' else ''}: attn_gemm GFLOP/s (attn / OpenBLAS)\n")
    print("| shape | M | N | K | NN | NT | TN | TT |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for key in (k for k in order if k[0] == threads):
        out = []
        for op in ("NN", "NT", "TN", "TT"):
            vals = cells[(key, op)]
            a = statistics.median(v[0] for v in vals)
            ratio = statistics.median(v[0] / v[1] for v in vals if v[1] > 0) if any(v[1] > 0 for v in vals) else 0
            cell = f"{a:.0f} ({ratio:.2f})"
            out.append(f"**{cell}**" if ratio < 0.9 else cell)
        print(f"| {key[1]} | {key[2]} | {key[3]} | {key[4]} | " + " | ".join(out) + " |")
