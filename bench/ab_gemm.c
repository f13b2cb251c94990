/* ab_gemm.c - a speed A/B of attn_gemm between two headers in one process, one thread.
   Built three times as a side (-DAB_SIDE=ab_a, ab_b or ab_c with -DAB_ATTN_H="path": A, B and A
   again, each with ATTN_STATIC) and once as the program. For each shape and transpose case the
   sides take turns call by call (the order swapped every round), rounds of at least 2 GFLOP each;
   it prints each side's median GFLOP/s, B/A's speed ratio (median and quartiles over the rounds)
   and A'/A's, the same header against itself: the bias and spread of the harness, which a change
   has to clear. Checks that A and B give C within 1e-3 relative (the same bits are not required:
   a change may sum in another order). make ab-gemm A=old/attn.h [B=attn.h] [SHAPES=...] */
#if defined(AB_SIDE)
#define ATTN_STATIC
#define ATTN_IMPLEMENTATION
#include AB_ATTN_H
#include "bench.h"
#define AB_CAT2(a, b) a##b
#define AB_CAT(a, b) AB_CAT2(a, b)
double AB_CAT(AB_SIDE, _gemm)(int ta, int tb, int M, int N, int K, const float *A, const float *B, float *C);
double AB_CAT(AB_SIDE, _gemm)(int ta, int tb, int M, int N, int K, const float *A, const float *B, float *C)
{
    double t0;
    attn_set_threads(1);
    t0 = now();
    attn_gemm(ta, tb, M, N, K, 1, A, ta ? M : K, B, tb ? K : N, 0, C, N);
    return now() - t0;
}
#else
#include "bench.h"
#include <math.h>

typedef double (*gemm_fn)(int, int, int, int, int, const float *, const float *, float *);
double ab_a_gemm(int, int, int, int, int, const float *, const float *, float *);
double ab_b_gemm(int, int, int, int, int, const float *, const float *, float *);
double ab_c_gemm(int, int, int, int, int, const float *, const float *, float *);

/* Median and quartiles of n values (sorted in place). */
static void quartiles(double *v, int n, double q[3])
{
    qsort(v, (size_t)n, sizeof v[0], cmp_double);
    q[0] = v[n / 4]; q[1] = v[n / 2]; q[2] = v[3 * n / 4];
}

int main(int argc, char **argv)
{
    static const char *ops[4] = {"NN", "NT", "TN", "TT"};
    const char *shapes = "2048x16x2048,1024x16x1024,1024x64x1024,1024x1024x1024", *p, *opt = "NN,NT,TN,TT";
    int rounds = 9, a, o;
    for (a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--shapes") && a + 1 < argc) shapes = argv[++a];
        else if (!strcmp(argv[a], "--ops") && a + 1 < argc) opt = argv[++a];
        else if (!strcmp(argv[a], "--rounds") && a + 1 < argc) rounds = arg_int("--rounds", argv[++a], 3, 64);
        else {
            printf("usage: ab_gemm [--shapes MxNxK,...] [--ops NN,NT,TN,TT] [--rounds R]\n"
                   "  attn_gemm of header A against B (and A against itself) in one process, one thread,\n"
                   "  the sides taking turns; medians over R rounds (default 9) of >= 2 GFLOP each.\n"
                   "  Build and run with make ab-gemm A=old/attn.h [B=attn.h] [SHAPES=...] [OPS=...]\n");
            return strcmp(argv[a], "--help") && strcmp(argv[a], "-h") ? 1 : 0;
        }
    }
    printf("shape (M x N x K)  op   A GF/s  B GF/s   B/A [quartiles]        A'/A [quartiles]\n");
    for (o = 0; o < 4; o++) {
        if (!strstr(opt, ops[o])) continue;
        for (p = shapes; *p;) {
            int M, N, K, n = 0, ta = o >> 1, tb = o & 1, r, q, s, reps;
            size_t na, nb, nc, i;
            float *A, *B, *C[3];
            double fl, t[3][64], ba[64], ca[64], qa[3], qb[3], qba[3], qca[3], worst = 0;
            gemm_fn fn[3] = {ab_a_gemm, ab_b_gemm, ab_c_gemm};
            if (sscanf(p, "%dx%dx%d%n", &M, &N, &K, &n) != 3 || M < 1 || N < 1 || K < 1 ||
                (p[n] && p[n] != ',')) {
                fprintf(stderr, "ab_gemm: bad shape list at '%s' (MxNxK,...)\n", p);
                return 1;
            }
            p += n + (p[n] == ',');
            na = (size_t)M * K; nb = (size_t)K * N; nc = (size_t)M * N;
            A = malloc(sizeof(float) * na); B = malloc(sizeof(float) * nb);
            for (s = 0; s < 3; s++) C[s] = malloc(sizeof(float) * nc);
            if (!A || !B || !C[0] || !C[1] || !C[2]) {
                fprintf(stderr, "ab_gemm: out of memory at %d x %d x %d\n", M, N, K);
                return 1;
            }
            for (i = 0; i < na; i++) A[i] = (float)(i % 13) * 0.01f - 0.05f;
            for (i = 0; i < nb; i++) B[i] = (float)(i % 7) * 0.02f - 0.06f;
            fl = 2.0 * M * N * K;
            reps = (int)(2e9 / fl) + 1; /* calls per round and side */
            for (s = 0; s < 3; s++) fn[s](ta, tb, M, N, K, A, B, C[s]); /* warm, and the results */
            for (i = 0; i < nc; i++)
                worst = fmax(worst, fabs((double)C[1][i] - C[0][i]) / (1e-3 + fabs((double)C[0][i])));
            for (r = 0; r < rounds; r++) {
                t[0][r] = t[1][r] = t[2][r] = 0;
                for (q = 0; q < reps; q++)
                    for (s = 0; s < 3; s++) {
                        int side = (s + r + q) % 3;
                        t[side][r] += fn[side](ta, tb, M, N, K, A, B, C[side]);
                    }
                ba[r] = t[0][r] / t[1][r];
                ca[r] = t[0][r] / t[2][r];
            }
            quartiles(t[0], rounds, qa); quartiles(t[1], rounds, qb);
            quartiles(ba, rounds, qba); quartiles(ca, rounds, qca);
            printf("%5d x %5d x %5d  %s  %6.1f  %6.1f   %.3f [%.3f, %.3f]   %.3f [%.3f, %.3f]%s\n", M, N, K,
                   ops[o], fl * reps / qa[1] / 1e9, fl * reps / qb[1] / 1e9,
                   qba[1], qba[0], qba[2], qca[1], qca[0], qca[2],
                   worst > 1e-3 ? "  (A and B differ)" : "");
            fflush(stdout);
            free(A); free(B);
            for (s = 0; s < 3; s++) free(C[s]);
        }
    }
    return 0;
}
#endif
