#!/usr/bin/env python3
"""Formats build/bench_gemm.csv as the Markdown tables of the README: one row per shape, one column
per transpose case, each cell "attn GFLOP/s (ratio to OpenBLAS)"."""
import csv
import sys

path = sys.argv[1] if len(sys.argv) > 1 else "build/bench_gemm.csv"
rows = list(csv.DictReader(open(path)))
for threads in sorted({r["threads"] for r in rows}):
    print(f"\n{threads} thread{'s' if threads != '1' else ''}: attn_gemm GFLOP/s (ratio to OpenBLAS)\n")
    print("| shape | M | N | K | NN | NT | TN | TT |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    seen = []
    for r in rows:
        key = (r["kind"], r["M"], r["N"], r["K"])
        if r["threads"] == threads and key not in seen:
            seen.append(key)
    for key in seen:
        cells = []
        for op in ("NN", "NT", "TN", "TT"):
            r = next(x for x in rows if x["threads"] == threads and (x["kind"], x["M"], x["N"], x["K"]) == key and x["trans"] == op)
            ratio = float(r["ratio"])
            cell = f"{float(r['attn_gflops']):.0f} ({ratio:.2f})"
            cells.append(f"**{cell}**" if ratio < 0.9 else cell)
        print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | " + " | ".join(cells) + " |")
