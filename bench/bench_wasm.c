/* bench_wasm.c: what the browser demo runs on, timed the same way natively, under node and in
   Chromium (make bench-web): attn_gemm on square and attention shapes (GFLOP/s), a causal softmax
   attention forward + backward and a longer forward alone (ms), and training steps of the demo's
   byte-level model (steps/s).
   One thread, medians of 7 repeats after a warm-up; natively it prints the FMA peak first, against
   which the wasm figures are read too (the same core runs them).
   Lines are "NAME VALUE UNIT" for bench/web/bench_web.mjs to put side by side. */
#include "../examples/web/demo.c"
#include "bench.h"

#define REPEATS 7

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof t[0], cmp_double);
    return t[n / 2];
}

/* Median seconds of fn(ctx) over REPEATS runs after one warm-up. */
static double timed(void (*fn)(void *), void *ctx)
{
    double t[REPEATS];
    int r;
    fn(ctx);
    for (r = 0; r < REPEATS; r++) {
        double t0 = now();
        fn(ctx);
        t[r] = now() - t0;
    }
    return median(t, REPEATS);
}

typedef struct {
    int tb, M, N, K;
    attn_float *A, *B, *C;
} gemm_case;

static void run_gemm(void *ctx)
{
    gemm_case *g = (gemm_case *)ctx;
    attn_gemm(0, g->tb, g->M, g->N, g->K, 1, g->A, g->K, g->B, g->tb ? g->K : g->N, 0, g->C, g->N);
}

typedef struct {
    attn_attention_desc d;
    attn_attention_grads g;
    attn_float *Q, *K, *V, *O, *st, *dO;
    void *work;
    size_t wb;
    int bwd; /* forward + backward, or the forward alone */
} attn_case;

static void run_attention(void *ctx)
{
    attn_case *a = (attn_case *)ctx;
    attn_attention_forward(&a->d, a->O, a->st, NULL, a->Q, a->K, a->V, a->work, a->wb);
    if (a->bwd) attn_attention_backward(&a->d, &a->g, a->dO, a->Q, a->K, a->V, a->O, a->st, a->work, a->wb);
}

static void run_lm(void *ctx) { lm_train((lm_run *)ctx, 5); }

static attn_float *filled(size_t n)
{
    attn_float *x = (attn_float *)malloc(sizeof(attn_float) * n);
    size_t i;
    if (!x) { fprintf(stderr, "bench_wasm: out of memory\n"); exit(1); }
    for (i = 0; i < n; i++) x[i] = (attn_float)((double)((i * 2654435761u) % 1000) / 1000 - 0.5);
    return x;
}

/* Softmax attention, B 1, H heads, T, dh 64: its time in ms. */
static double attention_ms(int H, int T, int causal, int bwd)
{
    attn_case a;
    size_t n = (size_t)H * T * 64;
    double s;
    memset(&a, 0, sizeof a);
    a.d.kind = ATTN_SOFTMAX; a.d.B = 1; a.d.H = H; a.d.Tq = a.d.Tk = T; a.d.dk = a.d.dv = 64; a.d.causal = causal;
    a.bwd = bwd;
    a.Q = filled(n); a.K = filled(n); a.V = filled(n); a.O = filled(n); a.dO = filled(n);
    a.g.dQ = filled(n); a.g.dK = filled(n); a.g.dV = filled(n);
    a.st = filled(attn_attention_stats_floats(&a.d));
    a.wb = attn_attention_workspace(&a.d);
    a.work = malloc(a.wb);
    if (!a.work) { fprintf(stderr, "bench_wasm: out of memory\n"); exit(1); }
    s = timed(run_attention, &a);
    free(a.Q); free(a.K); free(a.V); free(a.O); free(a.dO); free(a.g.dQ); free(a.g.dK); free(a.g.dV);
    free(a.st); free(a.work);
    return 1e3 * s;
}

/* The engines compile a hot function again, optimised (V8: Liftoff first, TurboFan later, in the
   background): a second of products before the first measurement, so that no shape is timed on the
   baseline code (the first shape read 14-28 GFLOP/s without it). */
static void warm_up(void)
{
    gemm_case g;
    double t0 = now();
    g.M = g.N = g.K = 256;
    g.A = filled((size_t)256 * 256); g.B = filled((size_t)256 * 256); g.C = filled((size_t)256 * 256);
    do {
        for (g.tb = 0; g.tb < 2; g.tb++) run_gemm(&g);
    } while (now() - t0 < 1.0);
    free(g.A); free(g.B); free(g.C);
}

int main(int argc, char **argv)
{
    static const int shapes[][4] = {{0, 256, 256, 256}, {1, 256, 256, 256}, {0, 1024, 1024, 1024},
                                    {1, 1024, 1024, 1024}, {1, 512, 512, 64}, {0, 512, 64, 512}};
    static unsigned char text[4096];
    int i;
    (void)argv;
    if (argc > 1) {
        printf("usage: bench_wasm\n  attn_gemm, attention and the browser demo's training step, one thread, "
               "as \"NAME VALUE UNIT\" lines\n");
        return 0;
    }
    attn_set_threads(1);
    printf("build %s\n", demo_build());
#if defined(__EMSCRIPTEN__)
    (void)fma_peak_gflops; /* SIMD128 has no FMA, and V8 does not keep bench.h's 12 chains in
                              registers (it measured less than the GEMM reaches): no peak */
    (void)cpu_model;
#else
    printf("cpu %s\n", cpu_model());
    printf("fma_peak %.1f GFLOP/s\n", fma_peak_gflops());
#endif
    warm_up();
    for (i = 0; i < (int)(sizeof shapes / sizeof shapes[0]); i++) {
        gemm_case g;
        double s;
        g.tb = shapes[i][0]; g.M = shapes[i][1]; g.N = shapes[i][2]; g.K = shapes[i][3];
        g.A = filled((size_t)g.M * g.K); g.B = filled((size_t)g.K * g.N); g.C = filled((size_t)g.M * g.N);
        s = timed(run_gemm, &g);
        printf("gemm_%s_%dx%dx%d %.2f GFLOP/s\n", g.tb ? "NT" : "NN", g.M, g.N, g.K, 2.0 * g.M * g.N * g.K / s * 1e-9);
        free(g.A); free(g.B); free(g.C);
    }
    printf("attention_softmax_causal_T256_H4_dh64_fwd_bwd %.3f ms\n", attention_ms(4, 256, 1, 1));
    printf("attention_softmax_T1024_H8_dh64_fwd %.3f ms\n", attention_ms(8, 1024, 0, 0));
    {
        lm_run *lm;
        for (i = 0; i < (int)sizeof text; i++) text[i] = (unsigned char)("the demo's text "[i % 16]);
        if (!(lm = lm_new(text, (int)sizeof text, 0))) { fprintf(stderr, "bench_wasm: %s\n", demo_error()); return 1; }
        printf("demo_lm_train %.1f steps/s\n", 5 / timed(run_lm, lm));
        lm_free(lm);
    }
    printf("done\n");
    return 0;
}
