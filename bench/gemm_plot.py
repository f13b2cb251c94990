#!/usr/bin/env python3
"""Draws docs/gemm.svg from bench_gemm CSVs: one-thread GFLOP/s of attn_gemm and of the best other
library in the same run (medians over the runs given) for the small, square and attention shapes,
as paired bars, with the FMA peak the runs measured.
Usage: bench/gemm_plot.py out.svg run1.csv [run2.csv ...]"""
import csv
import statistics
import sys

out, paths = sys.argv[1], sys.argv[2:]
cells = {}
for p in paths:
    for r in csv.DictReader(open(p)):
        if r["threads"] == "1" and r["trans"] in ("NN", "NT"):
            key = (r["kind"], int(r["M"]), int(r["N"]), int(r["K"]), r["trans"])
            cells.setdefault(key, []).append((float(r["attn_gflops"]), float(r["best_other"]),
                                              float(r["attn_gflops"]) / float(r["attn_peak"])))
groups = []
for key in cells:
    kind, M, N, K, op = key
    if kind == "square" and M == 64:
        continue  # the small shapes have 64³ already
    if (kind in ("square", "small") and op == "NN") or (kind.startswith("head") and op == ("NT" if "QK" in kind else "NN")) or \
            (kind.startswith("T x") and M in (512, 2048) and op == ("NT" if kind == "T x T x d" else "NN")):
        label = f"{M}³" if M == N == K else f"{M}x{N}x{K} {op}"
        a = statistics.median(v[0] for v in cells[key])
        b = statistics.median(v[1] for v in cells[key])
        ratio = statistics.median(v[0] / v[1] for v in cells[key])  # as in gemm_table.py
        groups.append((label, a, b, ratio))
peak = statistics.median(v[2] for key in cells for v in cells[key])

W, H, left, bottom, top = 900, 360, 60, 90, 40
bw = (W - left - 20) / len(groups)
top_g = int(peak * 1.15 / 25 + 1) * 25
scale = (H - bottom - top) / float(top_g)
svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="11">',
       f'<rect width="{W}" height="{H}" fill="white"/>',
       f'<text x="{W/2}" y="20" text-anchor="middle" font-size="14">attn_gemm vs the best of OpenBLAS, BLIS, oneDNN and libxsmm, one thread, GFLOP/s</text>']
for g in range(0, top_g + 1, 25):
    y = H - bottom - g * scale
    svg.append(f'<line x1="{left}" x2="{W-20}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>')
    svg.append(f'<text x="{left-6}" y="{y+4:.1f}" text-anchor="end">{g}</text>')
peak_y = H - bottom - peak * scale
svg.append(f'<line x1="{left}" x2="{W-20}" y1="{peak_y:.1f}" y2="{peak_y:.1f}" stroke="#c33" stroke-dasharray="4 3"/>')
svg.append(f'<text x="{W-22}" y="{peak_y-4:.1f}" text-anchor="end" fill="#c33">FMA peak {peak:.0f}</text>')
for i, (label, a, b, ratio) in enumerate(groups):
    x = left + i * bw
    for j, (v, col) in enumerate(((a, "#2a6fb0"), (b, "#aaa"))):
        h = v * scale
        svg.append(f'<rect x="{x + 6 + j * (bw - 12) / 2:.1f}" y="{H - bottom - h:.1f}" width="{(bw - 12) / 2 - 2:.1f}" height="{h:.1f}" fill="{col}"/>')
    svg.append(f'<text x="{x + bw/2:.1f}" y="{H - bottom + 14}" text-anchor="end" transform="rotate(-35 {x + bw/2:.1f} {H - bottom + 14})">{label}</text>')
    svg.append(f'<text x="{x + bw/2:.1f}" y="{H - bottom - max(a, b) * scale - 4:.1f}" text-anchor="middle" font-size="10">{ratio:.2f}x</text>')
svg.append(f'<rect x="{left+10}" y="32" width="12" height="10" fill="#2a6fb0"/><text x="{left+26}" y="41">attn_gemm</text>')
svg.append(f'<rect x="{left+100}" y="32" width="12" height="10" fill="#aaa"/><text x="{left+116}" y="41">best other</text>')
svg.append("</svg>")
open(out, "w").write("\n".join(svg) + "\n")
