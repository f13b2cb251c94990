/* bench_fused.c - what bounds the fused attention forward (attn.h's attn__fused_rows, AVX-512), one
   thread, against the FMA peak measured at the start:
   1. its two inner loops alone, as the kernel runs them: the scores of 4 query rows against a panel of
      32 keys over 64 depths (8 accumulators, each depth 2 vector loads of K^T and 4 broadcasts), and
      O += P V for 4 rows of 64 values over the panel's 32 keys (16 accumulators), with their panels
      in L1 (one panel) and in L2 (32 panels, 512 KB), each loop alone and the two in turn;
   2. the forward itself (softmax and Cog, not causal, T = 1024, H = 8, dv = 64) at dk = 32, 64,
      128 and 256: the time per score against dk + dv and its least-squares line, whose slope is
      the cost of one more depth of the products (as a % of the peak) and whose intercept the cost of
      a score outside them (its exponential, maximum and sum).
   Build: make build/bench_fused; run it on a quiet machine, several times. */
#define ATTN_IMPLEMENTATION
#include "../attn.h"
#include "bench.h"
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#if defined(__AVX512F__) && defined(__GNUC__)
#define NP 32 /* panels in the L2 case: 32 x 16 KB */
#define REG(x) __asm__("" : "+v"(x))
static float kt[NP * 64 * 32] __attribute__((aligned(64)));
static float vr[NP * 32 * 64] __attribute__((aligned(64)));
static float qs[4 * 64] __attribute__((aligned(64))), pb[4 * 32] __attribute__((aligned(64)));

/* reps panels (panel i % np): scores (s), O += P V (o), or both in turn; returns a sum to keep it */
static float loops(long reps, int np, int s, int o)
{
    __m512 S[8], A[16], x;
    int r, v, c, j;
    long i;
    for (r = 0; r < 8; r++) S[r] = _mm512_setzero_ps();
    for (r = 0; r < 16; r++) A[r] = _mm512_setzero_ps();
    for (i = 0; i < reps; i++) {
        const float *kp = kt + (i % np) * 2048, *vp = vr + (i % np) * 2048;
        if (s)
            for (c = 0; c < 64; c++) {
                __m512 k0 = _mm512_load_ps(kp + c * 32), k1 = _mm512_load_ps(kp + c * 32 + 16);
                REG(k0);
                REG(k1);
                _Pragma("GCC unroll 4") for (r = 0; r < 4; r++) {
                    __m512 q = _mm512_set1_ps(qs[r * 64 + c]);
                    S[2 * r] = _mm512_fmadd_ps(q, k0, S[2 * r]);
                    S[2 * r + 1] = _mm512_fmadd_ps(q, k1, S[2 * r + 1]);
                }
            }
        if (o)
            for (j = 0; j < 32; j++) {
                __m512 w[4];
                _Pragma("GCC unroll 4") for (v = 0; v < 4; v++) {
                    w[v] = _mm512_load_ps(vp + j * 64 + v * 16);
                    REG(w[v]);
                }
                _Pragma("GCC unroll 4") for (r = 0; r < 4; r++) {
                    __m512 p = _mm512_set1_ps(pb[r * 32 + j]);
                    _Pragma("GCC unroll 4") for (v = 0; v < 4; v++)
                        A[4 * r + v] = _mm512_fmadd_ps(p, w[v], A[4 * r + v]);
                }
            }
    }
    x = S[0];
    for (r = 1; r < 8; r++) x = _mm512_add_ps(x, S[r]);
    for (r = 0; r < 16; r++) x = _mm512_add_ps(x, A[r]);
    return _mm512_reduce_add_ps(x);
}

static void loops_report(double peak, int repeats)
{
    static const char *what[3] = {"scores alone", "O += P V alone", "the two in turn"};
    long reps = 400000;
    int np, k, r, i;
    for (i = 0; i < NP * 2048; i++) kt[i] = vr[i] = 1e-3f * (float)(i % 7);
    for (i = 0; i < 256; i++) qs[i] = 1e-3f;
    for (i = 0; i < 128; i++) pb[i] = 1e-3f;
    printf("1. the fused forward's inner loops alone (%% of the FMA peak, median of %d)\n", repeats);
    for (np = 1; np <= NP; np += NP - 1)
        for (k = 0; k < 3; k++) {
            double t[64];
            volatile float keep;
            for (r = 0; r < repeats; r++) {
                double t0 = now();
                keep = loops(reps, np, k != 1, k != 0);
                t[r] = now() - t0;
                (void)keep;
            }
            qsort(t, (size_t)repeats, sizeof t[0], cmp_double);
            printf("   panels in %s  %-16s %5.1f%%\n", np == 1 ? "L1" : "L2", what[k],
                   100 * (double)reps * 512 * (k == 2 ? 2 : 1) * 32 / t[repeats / 2] / 1e9 / peak);
        }
}
#else
static void loops_report(double peak, int repeats)
{
    (void)peak; (void)repeats;
    printf("1. the fused forward's inner loops: skipped (AVX-512 code; this build has no AVX-512)\n");
}
#endif

/* One forward problem: not causal, T 1024, H 8, inputs N(0, 1). */
typedef struct {
    attn_attention_desc d;
    attn_float *Q, *K, *V, *O, *st;
    void *w;
    size_t wb;
} problem;

static void problem_init(problem *p, attn_kind kind, int dk, int dv)
{
    size_t nk = (size_t)8 * 1024 * dk, nv = (size_t)8 * 1024 * dv, i;
    attn_rng g;
    memset(p, 0, sizeof *p);
    p->d.kind = kind; p->d.B = 1; p->d.H = 8; p->d.Tq = p->d.Tk = 1024; p->d.dk = dk; p->d.dv = dv;
    p->Q = malloc(sizeof(attn_float) * nk); p->K = malloc(sizeof(attn_float) * nk);
    p->V = malloc(sizeof(attn_float) * nv); p->O = malloc(sizeof(attn_float) * nv);
    p->st = malloc(sizeof(attn_float) * attn_attention_stats_floats(&p->d));
    p->wb = attn_attention_workspace(&p->d);
    p->w = malloc(p->wb);
    if (!p->Q || !p->K || !p->V || !p->O || !p->st || !p->w) {
        fprintf(stderr, "bench_fused: out of memory\n");
        exit(1);
    }
    attn_rng_seed(&g, 1, 0);
    for (i = 0; i < nk; i++) {
        p->Q[i] = (attn_float)attn_rng_normal(&g, 0, 1);
        p->K[i] = (attn_float)attn_rng_normal(&g, 0, 1);
    }
    for (i = 0; i < nv; i++) p->V[i] = (attn_float)attn_rng_normal(&g, 0, 1);
}

static double problem_run(problem *p)
{
    double t0 = now();
    if (attn_attention_forward(&p->d, p->O, p->st, NULL, p->Q, p->K, p->V, p->w, p->wb) != ATTN_OK) {
        fprintf(stderr, "bench_fused: %s\n", attn_last_error());
        exit(1);
    }
    return now() - t0;
}

static void problem_free(problem *p)
{
    free(p->Q); free(p->K); free(p->V); free(p->O); free(p->st); free(p->w);
}

/* The four depths in turn, repeats times (so that the machine's drift falls on all of them alike),
   medians; then the line through them. */
static void sweep_report(double peak, int repeats)
{
    static const int dks[4] = {32, 64, 128, 256};
    static const attn_kind kinds[2] = {ATTN_SOFTMAX, ATTN_COG};
    const double scores = 1024.0 * 1024 * 8;
    problem p[4];
    double t[4][64];
    int k, i, r;
    printf("2. the forward, not causal, T 1024, H 8, dv 64: ns per score against dk + dv (median of %d)\n",
           repeats);
    for (k = 0; k < 2; k++) {
        double x[4], y[4], sx = 0, sy = 0, sxx = 0, sxy = 0, slope, icpt;
        for (i = 0; i < 4; i++) problem_init(&p[i], kinds[k], dks[i], 64);
        for (r = 0; r < repeats; r++)
            for (i = 0; i < 4; i++) t[i][r] = problem_run(&p[i]);
        for (i = 0; i < 4; i++) {
            double ms;
            qsort(t[i], (size_t)repeats, sizeof t[i][0], cmp_double);
            ms = 1e3 * t[i][repeats / 2];
            x[i] = dks[i] + 64;
            y[i] = 1e6 * ms / scores;
            printf("   %-8s dk %3d: %7.2f ms, %.3f ns per score, %4.1f%% of the peak\n",
                   attn_kind_get(kinds[k])->name, dks[i], ms, y[i], 2e-4 * x[i] * scores / ms / peak);
            sx += x[i]; sy += y[i]; sxx += x[i] * x[i]; sxy += x[i] * y[i];
            problem_free(&p[i]);
        }
        slope = (4 * sxy - sx * sy) / (4 * sxx - sx * sx);
        icpt = (sy - slope * sx) / 4;
        printf("   %-8s line: %.4f ns per depth (the products at %.1f%% of the peak), %.3f ns per score "
               "besides (%.1f%% of the time at dk = dv = 64)\n", attn_kind_get(kinds[k])->name, slope,
               100 * 2 / peak / slope, icpt, 100 * icpt / (icpt + 128 * slope));
    }
}

int main(int argc, char **argv)
{
    int repeats = 9, a;
    double peak;
    for (a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--repeats") && a + 1 < argc) repeats = arg_int("--repeats", argv[++a], 3, 64);
        else {
            printf("usage: bench_fused [--repeats R]\n"
                   "  what bounds the fused attention forward (AVX-512), one thread: its two inner loops\n"
                   "  alone from L1 and L2, and the forward's time per score against dk + dv (softmax,\n"
                   "  Cog; T 1024, H 8, dv 64, not causal), medians of R runs (default 9)\n");
            return strcmp(argv[a], "--help") && strcmp(argv[a], "-h") ? 1 : 0;
        }
    }
    attn_set_threads(1);
    peak = fma_peak_gflops();
    printf("attn.h %s (%s kernels); CPU: %s; FMA peak (one core) %.1f GFLOP/s\n", ATTN_VERSION_STRING,
           attn_simd_name(), cpu_model(), peak);
    loops_report(peak, repeats);
    sweep_report(peak, repeats);
    return 0;
}
