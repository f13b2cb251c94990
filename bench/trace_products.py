#!/usr/bin/env python3
"""trace_products.py: where a training step's matrix products lose their speed.

Builds bench_transformer against a copy of attn.h whose attn_gemm times every outermost call by shape
(build/attn_traced.h; attn.h itself is not touched), trains one preset and kind on one thread, and
prints, per product shape: calls, the share of all product time, GFLOP/s inside the step, and
GFLOP/s of the same product alone (fresh operands, warm caches, best of 5), then the time in products
against the wall time of the run. A product much slower in the step than alone is waiting on memory
that the operations before it left cold; time outside products is the step's other work (norms,
activations, the optimizer, layout changes, the attention's softmax).

Usage: python3 bench/trace_products.py [--preset fuzzy|sraven|cogformer] [--kind softmax] [--seconds 3]
       (from the repository's root; CC and CFLAGS from the environment, default gcc -O2 -march=native)
"""
import argparse
import os
import subprocess
import sys

WRAPPER = r'''
/* ---- inserted by bench/trace_products.py: each outermost attn_gemm timed by shape (one thread) ---- */
#include <time.h>
static void attn__gemm_untimed(int transA, int transB, int M, int N, int K, attn_float alpha,
                               const attn_float *A, int lda, const attn_float *B, int ldb, attn_float beta,
                               attn_float *C, int ldc);
typedef struct { int ta, tb, M, N, K; long calls; double sec; } attn__trace_row;
static attn__trace_row attn__trace[1024];
static int attn__trace_n, attn__trace_depth;
static double attn__trace_first, attn__trace_last;
static double attn__trace_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static int attn__trace_cmp(const void *a, const void *b)
{
    double x = ((const attn__trace_row *)a)->sec, y = ((const attn__trace_row *)b)->sec;
    return x < y ? 1 : x > y ? -1 : 0;
}
/* GFLOP/s of one shape alone: fresh operands, repeated for about 20 ms, best of 5. */
static double attn__trace_alone(const attn__trace_row *r)
{
    size_t na = (size_t)r->M * r->K, nb = (size_t)r->K * r->N, nc = (size_t)r->M * r->N, i;
    attn_float *A = (attn_float *)malloc(sizeof(attn_float) * na), *B = (attn_float *)malloc(sizeof(attn_float) * nb);
    attn_float *C = (attn_float *)calloc(nc, sizeof(attn_float));
    double fl = 2.0 * r->M * r->N * r->K, best = 1e30;
    long reps = (long)(2e9 / fl) + 1, k;
    int t;
    for (i = 0; i < na; i++) A[i] = (attn_float)((i % 7) * 0.1);
    for (i = 0; i < nb; i++) B[i] = (attn_float)((i % 5) * 0.1);
    for (t = 0; t < 6; t++) {
        double t0 = attn__trace_now();
        for (k = 0; k < reps; k++)
            attn__gemm_untimed(r->ta, r->tb, r->M, r->N, r->K, 1, A, r->ta ? r->M : r->K, B, r->tb ? r->K : r->N, 1, C, r->N);
        t0 = attn__trace_now() - t0;
        if (t > 0 && t0 < best) best = t0; /* the first run warms up */
    }
    free(A); free(B); free(C);
    return fl * reps / best * 1e-9;
}
static void attn__trace_report(void)
{
    double total = 0, fl = 0, wall = attn__trace_last - attn__trace_first;
    int i;
    qsort(attn__trace, (size_t)attn__trace_n, sizeof *attn__trace, attn__trace_cmp);
    for (i = 0; i < attn__trace_n; i++) {
        total += attn__trace[i].sec;
        fl += 2.0 * attn__trace[i].M * attn__trace[i].N * attn__trace[i].K * attn__trace[i].calls;
    }
    printf("\nproducts (op(A) M x K times op(B) K x N; N: as stored, T: transposed), by their share of product time:\n");
    printf("%-3s %6s %6s %6s %9s %7s %14s %14s\n", "op", "M", "N", "K", "calls", "share", "GFLOP/s step", "GFLOP/s alone");
    for (i = 0; i < attn__trace_n && i < 16; i++) {
        const attn__trace_row *r = attn__trace + i;
        printf("%c%c  %6d %6d %6d %9ld %6.1f%% %14.1f %14.1f\n", r->ta ? 'T' : 'N', r->tb ? 'T' : 'N', r->M, r->N, r->K,
               r->calls, 100 * r->sec / total, 2.0 * r->M * r->N * r->K * r->calls / r->sec * 1e-9, attn__trace_alone(r));
    }
    printf("all products: %.2f s of the %.2f s from the first to the last (%.0f%%), %.1f GFLOP/s inside them\n", total, wall,
           100 * total / wall, fl / total * 1e-9);
}
ATTNDEF void attn_gemm(int transA, int transB, int M, int N, int K, attn_float alpha,
                       const attn_float *A, int lda, const attn_float *B, int ldb, attn_float beta,
                       attn_float *C, int ldc)
{
    double t0;
    int i;
    if (attn__trace_depth) {
        attn__gemm_untimed(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    if (!attn__trace_n && !attn__trace_first) {
        atexit(attn__trace_report);
        attn__trace_first = attn__trace_now();
    }
    attn__trace_depth++;
    t0 = attn__trace_now();
    attn__gemm_untimed(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    attn__trace_last = attn__trace_now();
    attn__trace_depth--;
    for (i = 0; i < attn__trace_n; i++) {
        attn__trace_row *r = attn__trace + i;
        if (r->ta == transA && r->tb == transB && r->M == M && r->N == N && r->K == K) break;
    }
    if (i == attn__trace_n && i < 1024) {
        attn__trace_row z = {transA, transB, M, N, K, 0, 0};
        attn__trace[attn__trace_n++] = z;
    }
    if (i < 1024) {
        attn__trace[i].calls++;
        attn__trace[i].sec += attn__trace_last - t0;
    }
}
/* ---- end of the inserted timing ---- */
'''

DEFINITION = '''ATTNDEF void attn_gemm(int transA, int transB, int M, int N, int K, attn_float alpha,
                       const attn_float *A, int lda, const attn_float *B, int ldb, attn_float beta,
                       attn_float *C, int ldc)
{
    if (attn__gemm_bad_args('''


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--preset", default="cogformer", choices=["fuzzy", "sraven", "cogformer"])
    ap.add_argument("--kind", default="softmax")
    ap.add_argument("--seconds", default="3")
    args = ap.parse_args()
    src = open("attn.h").read()
    if src.count(DEFINITION) != 1:
        sys.exit("trace_products.py: attn_gemm's definition in attn.h is not the one this script expects")
    renamed = DEFINITION.replace("ATTNDEF void attn_gemm(", "static void attn__gemm_untimed(")
    os.makedirs("build", exist_ok=True)
    with open("build/attn_traced.h", "w") as f:
        f.write(src.replace(DEFINITION, WRAPPER + renamed))
    cc = os.environ.get("CC", "gcc")
    cflags = os.environ.get("CFLAGS", "-O2 -march=native").split()
    cmd = [cc] + cflags + ["-fopenmp", '-DBENCH_ATTN_H="../build/attn_traced.h"', "bench/bench_transformer.c",
                           "-o", "build/bench_transformer_traced", "-lm"]
    subprocess.run(cmd, check=True)
    env = dict(os.environ)
    env.pop("OPENBLAS_CORETYPE", None)
    subprocess.run(["build/bench_transformer_traced", "--preset", args.preset, "--kind", args.kind, "--threads", "1",
                    "--no-torch", "--repeats", "1", "--seconds", args.seconds], check=True, env=env)


if __name__ == "__main__":
    main()
