/* bench_attention: causal attention fwd+bwd of the per-head kinds of the table (softmax .. diff),
   B = 1, H = 8, dh = 64, T = 1024 and 2048, 1 and 2 threads, beside PyTorch running the same
   variants in the same run (bench/torch_attention.py through Debian's /usr/bin/python3; skipped with
   a message without torch). Prints: kind, T, threads, attn.h ms, PyTorch ms, speed-up, and the extra
   memory attn.h needs (its workspace plus the stats; nothing T x T). Then the head-mixing kinds
   (RMSHead, HYLA, ...) at the HYLA paper's SRAVEN shape, kernel attention's time ratio T = 4096 :
   1024, and the peak memory at T = 8192. Medians of repeats. */
#define _POSIX_C_SOURCE 200809L
#define ATTN_IMPLEMENTATION
#include "../attn.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define LAST_PER_HEAD ATTN_DIFFERENTIAL /* the kinds of the first table: 0 .. this */

/* PyTorch's ms for (kind, T, threads), or 0 when torch is not there */
static double torch_ms[ATTN_KIND_COUNT][2][2];

static void run_torch(int ti, int T, int threads, const char *kinds)
{
    char cmd[512], kind[32];
    FILE *f;
    int t, th, k;
    double ms;
    snprintf(cmd, sizeof cmd, "env -u OPENBLAS_CORETYPE /usr/bin/python3 bench/torch_attention.py --T %d --threads %d --kinds %s 2>/dev/null", T, threads, kinds);
    if (!(f = popen(cmd, "r"))) return;
    while (fscanf(f, "%31s %d %d %lf", kind, &t, &th, &ms) == 4)
        if ((k = attn_kind_from_name(kind)) >= 0) torch_ms[k][ti][threads - 1] = ms;
    pclose(f);
}

/* Peak resident memory (MiB) of a forward pass at T = 8192, H = 8, dh = 64, in a child process so
   that the peak is this kind's own (on one thread); -1 if the child failed. */
static double peak_forward_mib(int kind, size_t *io_bytes)
{
    int fd[2], status;
    double mib = -1;
    pid_t pid;
    *io_bytes = (size_t)8 * 8192 * 64 * 4 * sizeof(attn_float) + (size_t)8 * 8192 * sizeof(attn_float); /* Q K V O + stats */
    if (pipe(fd)) return -1;
    pid = fork();
    if (pid == 0) { /* one thread: libgomp's pool does not survive fork() */
        attn_attention_desc d;
        size_t n = (size_t)8 * 8192 * 64, i, wb;
        attn_float *Q, *K, *V, *O, *st;
        void *work;
        struct rusage ru;
        attn_set_threads(1);
        memset(&d, 0, sizeof d);
        d.kind = (attn_kind)kind; d.B = 1; d.H = 8; d.Tq = d.Tk = 8192; d.dk = d.dv = 64; d.causal = 1;
        Q = (attn_float *)malloc(n * sizeof *Q); K = (attn_float *)malloc(n * sizeof *K); V = (attn_float *)malloc(n * sizeof *V);
        O = (attn_float *)malloc(n * sizeof *O); st = (attn_float *)malloc(attn_attention_stats_floats(&d) * sizeof *st);
        wb = attn_attention_workspace(&d);
        work = malloc(wb);
        if (!Q || !K || !V || !O || !st || !work) _exit(1);
        for (i = 0; i < n; i++) Q[i] = K[i] = V[i] = (attn_float)((i % 7) * 0.1);
        attn_attention_forward(&d, O, st, NULL, Q, K, V, work, wb);
        getrusage(RUSAGE_SELF, &ru);
        mib = ru.ru_maxrss / 1024.0; /* Linux: kilobytes */
        if (write(fd[1], &mib, sizeof mib) != (ssize_t)sizeof mib) _exit(1);
        _exit(0);
    }
    close(fd[1]);
    if (pid > 0 && read(fd[0], &mib, sizeof mib) != (ssize_t)sizeof mib) mib = -1;
    close(fd[0]);
    if (pid > 0) waitpid(pid, &status, 0);
    return mib;
}

/* Median ms of a causal forward + backward of `kind` at B = 1, H = 8, T, dh = 64 (after a warm-up),
   on buffers [8 T 64] (st: 8 T (2 64 + 3), differential's stats being the largest), with the score
   modifier mod (NULL: none); *bytes gets the workspace plus the stats, *fwd_ms (when not NULL) the
   median of the forward passes alone. */
static double fwd_bwd_ms(int kind, const attn_score_mod *mod, const int *segment, int T, const attn_float *Q,
                         const attn_float *K, const attn_float *V, attn_float *O, attn_float *st,
                         const attn_float *dO, attn_float *dQ, attn_float *dK, attn_float *dV, int repeats, size_t *bytes,
                         double *fwd_ms)
{
    attn_attention_desc d;
    attn_attention_grads g = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    double t[64], tf[64];
    size_t wb;
    void *work;
    int rep;
    memset(&d, 0, sizeof d);
    d.kind = (attn_kind)kind; d.B = 1; d.H = 8; d.Tq = d.Tk = T; d.dk = d.dv = 64; d.causal = 1; d.mod = mod;
    d.segment = segment;
    wb = attn_attention_workspace(&d);
    if (!(work = malloc(wb))) return 0;
    g.dQ = dQ; g.dK = dK; g.dV = dV;
    for (rep = 0; rep <= repeats; rep++) { /* the first is a warm-up */
        double t0 = now(), t1;
        attn_attention_forward(&d, O, st, NULL, Q, K, V, work, wb);
        t1 = now();
        attn_attention_backward(&d, &g, dO, Q, K, V, O, st, work, wb);
        if (rep) t[rep - 1] = now() - t0;
        if (rep) tf[rep - 1] = t1 - t0;
    }
    free(work);
    qsort(t, (size_t)repeats, sizeof t[0], cmp_double);
    qsort(tf, (size_t)repeats, sizeof tf[0], cmp_double);
    if (fwd_ms) *fwd_ms = 1e3 * tf[repeats / 2];
    *bytes = wb + attn_attention_stats_floats(&d) * sizeof(attn_float);
    return 1e3 * t[repeats / 2];
}

/* Kernel attention's time at T = 4096 against T = 1024, one thread: linear time means 4. */
static void bench_kernel_ratio(int repeats)
{
    size_t n = (size_t)8 * 4096 * 64, i, bytes;
    attn_float *buf = (attn_float *)malloc(sizeof(attn_float) * (8 * n + (size_t)8 * 4096 * (2 * 64 + 3)));
    attn_float *Q = buf, *K = Q + n, *V = K + n, *O = V + n, *dO = O + n, *dQ = dO + n, *dK = dQ + n, *dV = dK + n, *st = dV + n;
    double a, b;
    attn_rng r;
    if (!buf) { fprintf(stderr, "out of memory\n"); return; }
    attn_rng_seed(&r, 3, 3);
    for (i = 0; i < 8 * n; i++) buf[i] = (attn_float)attn_rng_normal(&r, 0, 1);
    attn_set_threads(1);
    a = fwd_bwd_ms(ATTN_KERNEL, NULL, NULL, 1024, Q, K, V, O, st, dO, dQ, dK, dV, repeats, &bytes, NULL);
    b = fwd_bwd_ms(ATTN_KERNEL, NULL, NULL, 4096, Q, K, V, O, st, dO, dQ, dK, dV, repeats, &bytes, NULL);
    printf("\nKernel attention, causal fwd+bwd, one thread, median of %d: T = 1024 %.1f ms, T = 4096 %.1f ms, ratio %.2f\n", repeats, a, b, b / a);
    free(buf);
}

/* The head-mixing kinds at the SRAVEN preset's attention shape (B = 128, H = 16, T = 36,
   dh = 4, non-causal, dropout 0.1 as in training), fwd+bwd, 1 and 2 threads; softmax for scale. */
static void bench_mixing(int repeats)
{
    int B = 128, H = 16, T = 36, dh = 4, th, k, rep, i;
    size_t n = (size_t)B * H * T * dh;
    attn_float *buf = (attn_float *)calloc(8 * n + (size_t)B * H * T + (size_t)H * dh * dh * 2, sizeof(attn_float));
    attn_float *Q = buf, *K = Q + n, *V = K + n, *O = V + n, *dO = O + n, *dQ = dO + n, *dK = dQ + n, *dV = dK + n, *st = dV + n;
    attn_float *w2 = st + (size_t)B * H * T, *dw2 = w2 + (size_t)H * dh * dh;
    attn_rng r;
    if (!buf) { fprintf(stderr, "out of memory\n"); return; }
    attn_rng_seed(&r, 2, 2);
    for (i = 0; i < (int)(5 * n); i++) Q[i] = (attn_float)attn_rng_normal(&r, 0, 1); /* Q K V O dO */
    for (i = 0; i < H * dh * dh; i++) w2[i] = (attn_float)attn_rng_normal(&r, 0, 0.5);
    printf("\nHead-mixing kinds at the SRAVEN shape: B = %d, H = %d, T = %d, dh = %d, non-causal, dropout 0.1,\n"
           "forward + backward, median of %d:\n\n%-24s %3s %10s %14s\n", B, H, T, dh, repeats, "kind", "thr", "attn.h ms", "ms / softmax");
    for (th = 1; th <= 2; th++) {
        double soft = 0;
        attn_set_threads(th);
        for (k = 0; k < ATTN_KIND_COUNT; k++) {
            attn_attention_desc d;
            attn_attention_grads g = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
            double t[64], ms;
            size_t wb;
            void *work;
            if (k != ATTN_SOFTMAX && k <= LAST_PER_HEAD) continue;
            memset(&d, 0, sizeof d);
            d.kind = (attn_kind)k; d.B = B; d.H = H; d.Tq = d.Tk = T; d.dk = d.dv = dh; d.dropout = (attn_float)0.1; d.w2 = w2;
            wb = attn_attention_workspace(&d);
            if (!(work = malloc(wb))) continue;
            g.dQ = dQ; g.dK = dK; g.dV = dV; g.dw2 = dw2;
            for (rep = 0; rep <= repeats; rep++) {
                double t0 = now();
                d.dropout_seed = (uint64_t)rep;
                attn_attention_forward(&d, O, st, NULL, Q, K, V, work, wb);
                attn_attention_backward(&d, &g, dO, Q, K, V, O, st, work, wb);
                if (rep) t[rep - 1] = now() - t0;
            }
            qsort(t, (size_t)repeats, sizeof t[0], cmp_double);
            ms = 1e3 * t[repeats / 2];
            if (k == ATTN_SOFTMAX) soft = ms;
            printf("%-24s %3d %10.2f %14.2f\n", attn_kind_get((attn_kind)k)->name, th, ms, ms / soft);
            fflush(stdout);
            free(work);
        }
    }
    free(buf);
}

/* Whether query p and key j are in the same document (the ctx: each position's document). */
static int same_doc(void *ctx, int b, int h, int p, int j)
{
    const int *doc = (const int *)ctx;
    (void)b; (void)h;
    return doc[p] == doc[j];
}

/* What same_doc says of a block (documents in order: a range's first and last are its ends). */
static int same_doc_block(void *ctx, int b, int h, int p0, int p1, int j0, int j1)
{
    const int *doc = (const int *)ctx;
    (void)b; (void)h;
    if (doc[p1] < doc[j0] || doc[j1] < doc[p0]) return ATTN_BLOCK_EMPTY;
    return doc[p0] == doc[p1] && doc[j0] == doc[j1] && doc[p0] == doc[j0] ? ATTN_BLOCK_FULL : ATTN_BLOCK_PARTIAL;
}

/* Eight documents of 512 packed in T = 4096, causal softmax: through the descriptor's segments (whose
   tiles across documents are skipped), through a mask modifier with its block function, with the
   table attn_block_mask_build computes from the mask alone (its build timed apart), and without
   (tested key by key), against the causal pass over all keys. */
static void bench_docs(int repeats)
{
    enum { T = 4096 };
    size_t n = (size_t)8 * T * 64, i, bytes;
    attn_float *buf = (attn_float *)malloc(sizeof(attn_float) * (8 * n + (size_t)8 * T * (2 * 64 + 3)));
    attn_float *Q = buf, *K = Q + n, *V = K + n, *O = V + n, *dO = O + n, *dQ = dO + n, *dK = dQ + n, *dV = dK + n, *st = dV + n;
    static int seg[T];
    attn_score_mod mask = {NULL, NULL, same_doc, seg, NULL, NULL};
    attn_score_mod blocks = {NULL, NULL, same_doc, seg, NULL, same_doc_block};
    attn_block_mask bm;
    double f0, b0, f, b, t0;
    attn_rng r;
    if (!buf) { fprintf(stderr, "out of memory\n"); return; }
    attn_rng_seed(&r, 3, 5);
    for (i = 0; i < 8 * n; i++) buf[i] = (attn_float)attn_rng_normal(&r, 0, 1);
    for (i = 0; i < T; i++) seg[i] = (int)(i / 512);
    printf("\n8 documents of 512 tokens in T = %d, causal softmax, H = 8, dh = 64, one thread, median of %d\n\n"
           "%-28s %10s %10s %10s %12s\n", T, repeats, "", "fwd ms", "fwd+bwd ms", "fwd speed", "fwd+bwd speed");
    b0 = fwd_bwd_ms(ATTN_SOFTMAX, NULL, NULL, T, Q, K, V, O, st, dO, dQ, dK, dV, repeats, &bytes, &f0);
    printf("%-28s %10.1f %10.1f %10.2f %12.2f\n", "causal, all keys", f0, b0, 1.0, 1.0);
    b = fwd_bwd_ms(ATTN_SOFTMAX, NULL, seg, T, Q, K, V, O, st, dO, dQ, dK, dV, repeats, &bytes, &f);
    printf("%-28s %10.1f %10.1f %10.2f %12.2f\n", "documents (segments)", f, b, f0 / f, b0 / b);
    b = fwd_bwd_ms(ATTN_SOFTMAX, &blocks, NULL, T, Q, K, V, O, st, dO, dQ, dK, dV, repeats, &bytes, &f);
    printf("%-28s %10.1f %10.1f %10.2f %12.2f\n", "documents (mask and block)", f, b, f0 / f, b0 / b);
    t0 = now();
    if (attn_block_mask_build(&bm, &mask, 1, 1, T, T, 16) != ATTN_OK) { fprintf(stderr, "%s\n", attn_last_error()); return; }
    t0 = (now() - t0) * 1e3;
    b = fwd_bwd_ms(ATTN_SOFTMAX, &bm.fn, NULL, T, Q, K, V, O, st, dO, dQ, dK, dV, repeats, &bytes, &f);
    printf("%-28s %10.1f %10.1f %10.2f %12.2f   (the table built once in %.1f ms)\n", "documents (mask, block table)", f, b,
           f0 / f, b0 / b, t0);
    attn_block_mask_free(&bm);
    b = fwd_bwd_ms(ATTN_SOFTMAX, &mask, NULL, T, Q, K, V, O, st, dO, dQ, dK, dV, repeats, &bytes, &f);
    printf("%-28s %10.1f %10.1f %10.2f %12.2f\n", "documents (mask alone)", f, b, f0 / f, b0 / b);
    free(buf);
}

/* A registered kind that is softmax written as a user writes one: its exponent x = s and its vjp in
   plain C, written as docs/adding-a-variant.md advises: loops marked `omp simd` (taken here when built
   with -fopenmp; GCC 12 vectorises them at -O2 only so), every input read unconditionally.
   -DUSER_PLAIN leaves the marks out. */
#if defined(_OPENMP) && !defined(USER_PLAIN)
#define USER_SIMD _Pragma("omp simd")
#else
#define USER_SIMD
#endif
static void user_exponent(size_t n, const attn_float *s, const attn_float *vis, attn_float *x)
{
    size_t i;
    if (!vis) { /* every key visible; else the test per key, branch-free */
        USER_SIMD
        for (i = 0; i < n; i++) x[i] = s[i];
        return;
    }
    USER_SIMD
    for (i = 0; i < n; i++) {
        attn_float si = s[i]; /* read whatever vis says: no masked load */
        x[i] = vis[i] != 0 ? si : (attn_float)-3e38;
    }
}
static void user_vjp(size_t n, const attn_float *s, const attn_float *a, const attn_float *vis, attn_float *ds,
                     attn_float D, attn_float inv)
{
    size_t i;
    (void)s; (void)vis; (void)inv;
    USER_SIMD
    for (i = 0; i < n; i++) ds[i] = a[i] * (ds[i] - D);
}

/* The provided score modifiers on causal softmax at T 1024 and 2048 (B 1, H 8, dh 64), one thread:
   medians of the forward and of forward + backward, and their speed against no modifier; then
   softmax registered as a user's kind against the built-in one. */
static void bench_mods(int repeats)
{
    static const int Ts[2] = {1024, 2048};
    size_t n = (size_t)8 * 2048 * 64, i, bytes;
    attn_float *buf = (attn_float *)malloc(sizeof(attn_float) * (8 * n + (size_t)8 * 2048 * (2 * 64 + 3))), w[8];
    attn_float *Q = buf, *K = Q + n, *V = K + n, *O = V + n, *dO = O + n, *dQ = dO + n, *dK = dQ + n, *dV = dK + n, *st = dV + n;
    static const attn_score_row user_row = {ATTN_STAT_LSE, NULL, NULL, user_exponent, NULL, user_vjp};
    attn_kind_info info = {ATTN_SOFTMAX, "user_softmax", NULL, "softmax in plain C", NULL, NULL, NULL, 0, &user_row,
                           NULL, NULL};
    attn_kind user = attn_kind_register(&info);
    attn_rng r;
    int ti, k;
    if (!buf || (int)user < 0) { fprintf(stderr, "bench_attention: %s\n", buf ? attn_last_error() : "out of memory"); return; }
    attn_rng_seed(&r, 3, 4);
    for (i = 0; i < 8 * n; i++) buf[i] = (attn_float)attn_rng_normal(&r, 0, 1);
    for (k = 0; k < 8; k++) w[k] = (attn_float)(1 + 0.1 * k);
    attn_set_threads(1);
    printf("attn.h %s (%s kernels); causal softmax with a score modifier, B = 1, H = 8, dh = 64, one thread,\n"
           "median of %d (relbias: 32 buckets up to distance 128; softcap: cap 30; temperature: 1 + 0.1 h;\n"
           "relbias and temperature with their parameters' gradient, as in training)\n\n"
           "%-12s %5s %10s %10s %10s %12s\n", ATTN_VERSION_STRING, attn_simd_name(), repeats, "modifier", "T",
           "fwd ms", "fwd+bwd ms", "fwd speed", "fwd+bwd speed");
    for (ti = 0; ti < 2; ti++) {
        double f0 = 0, b0 = 0;
        for (k = 0; k < ATTN_MOD_COUNT; k++) {
            attn_mod_config c = {(attn_mod_kind)k, 8, 30, 32, 128, 0, ATTN_MASK_NONE, 0};
            attn_mod m;
            attn_float *tab = (attn_float *)calloc(2 * 8 * 32, sizeof(attn_float));
            double f, b;
            if (!tab || (k && attn_mod_init(&m, &c, k == ATTN_MOD_RELBIAS ? tab : w, tab + 8 * 32) != ATTN_OK)) {
                fprintf(stderr, "bench_attention: %s\n", attn_last_error());
                free(tab);
                continue;
            }
            b = fwd_bwd_ms(ATTN_SOFTMAX, k ? &m.fn : NULL, NULL, Ts[ti], Q, K, V, O, st, dO, dQ, dK, dV, repeats, &bytes, &f);
            if (!k) f0 = f, b0 = b;
            printf("%-12s %5d %10.2f %10.2f %10.2f %12.2f\n", attn_mod_name((attn_mod_kind)k), Ts[ti], f, b, f0 / f,
                   b0 / b);
            fflush(stdout);
            free(tab);
        }
    }
    printf("\nsoftmax registered as a user's kind (exponent and vjp in plain C) against the built-in softmax,\n"
           "the two taking turns, one call each (after a warm-up) per round: medians over %d rounds\n\n"
           "%-12s %5s %10s %10s %10s %12s\n", repeats, "kind", "T", "fwd ms", "fwd+bwd ms", "fwd speed",
           "fwd+bwd speed");
    for (ti = 0; ti < 2; ti++) {
        double t[6][64]; /* built-in forward, fwd+bwd; user's forward, fwd+bwd; their speed ratios */
        int rep, c, n = repeats < 64 ? repeats : 64;
        for (rep = 0; rep < n; rep++) {
            t[1][rep] = fwd_bwd_ms(ATTN_SOFTMAX, NULL, NULL, Ts[ti], Q, K, V, O, st, dO, dQ, dK, dV, 1, &bytes, &t[0][rep]);
            t[3][rep] = fwd_bwd_ms(user, NULL, NULL, Ts[ti], Q, K, V, O, st, dO, dQ, dK, dV, 1, &bytes, &t[2][rep]);
            t[4][rep] = t[0][rep] / t[2][rep];
            t[5][rep] = t[1][rep] / t[3][rep];
        }
        for (c = 0; c < 6; c++) qsort(t[c], (size_t)n, sizeof t[c][0], cmp_double);
        printf("%-12s %5d %10.2f %10.2f %10.2f %12.2f\n%-12s %5d %10.2f %10.2f %10.2f %12.2f\n", "softmax", Ts[ti],
               t[0][n / 2], t[1][n / 2], 1.0, 1.0, "user", Ts[ti], t[2][n / 2], t[3][n / 2], t[4][n / 2], t[5][n / 2]);
        fflush(stdout);
    }
    free(buf);
    bench_docs(repeats);
}

int main(int argc, char **argv)
{
    static const int Ts[2] = {1024, 2048};
    int ti, th, k, repeats = 5, have_torch, i, memory_only = 0, only = -1, mods_only = 0;
    char kinds[256] = "";
    double peak = 0;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--repeats") && i + 1 < argc) repeats = arg_int("--repeats", argv[++i], 1, 1000);
        else if (!strcmp(argv[i], "--memory")) memory_only = 1;
        else if (!strcmp(argv[i], "--mods")) mods_only = 1;
        else if (!strcmp(argv[i], "--peak")) {
            printf("%.1f\n", fma_peak_gflops());
            return 0;
        } else if (!strcmp(argv[i], "--kind") && i + 1 < argc && (only = attn_kind_from_name(argv[++i])) >= 0 &&
                 only <= LAST_PER_HEAD)
            continue;
        else {
            printf("usage: bench_attention [--repeats N] [--memory] [--kind NAME] [--mods] [--peak]\n  causal fwd+bwd of the per-head attention kinds beside PyTorch, the head-mixing kinds\n"
                   "  at the SRAVEN shape, kernel attention's time ratio T = 4096 : 1024, then the peak memory\n"
                   "  at T = 8192; --memory: only the memory table; --kind NAME: only that kind's rows, without\n"
                   "  PyTorch or the other tables (to profile it, e.g. under perf record); --mods: only the\n"
                   "  provided score modifiers' table (softmax with each, against none) and 8 packed documents\n"
                   "  at T = 4096 (segments, a mask modifier with and without its block function, against\n"
                   "  none); --peak: only the FMA peak of one core in GFLOP/s (for bench/python_attention.py).\n"
                   "  Run from the repository root.\n");
            return strcmp(argv[i], "--help") ? 1 : 0;
        }
    }
    if (repeats < 1 || repeats > 64) repeats = 5;
    if (mods_only) {
        bench_mods(repeats);
        return 0;
    }
    for (k = 0; k <= LAST_PER_HEAD; k++) {
        if (k) strcat(kinds, ",");
        strcat(kinds, attn_kind_get((attn_kind)k)->name);
    }
    have_torch = !memory_only && only < 0 && system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0;
    if (!have_torch && !memory_only && only < 0) printf("PyTorch not found (apt-get install python3-torch): the PyTorch column stays empty\n");
    if (!memory_only) {
        peak = fma_peak_gflops();
        printf("attn.h %s (%s kernels); causal forward + backward, B = 1, H = 8, dh = 64; median of %d\n", ATTN_VERSION_STRING, attn_simd_name(), repeats);
        printf("CPU: %s\n", cpu_model());
        printf("FMA peak (one core): %.1f GFLOP/s; %% peak counts the products of the quadratic kinds, 7 T^2 dh H flops\n"
               "(causal: QK^T and PV forward, five products backward, each over half the T x T scores), against\n"
               "the peak times the threads; fwd %%: the forward pass alone (its median), 2 T^2 dh H flops\n\n", peak);
        printf("%-8s %5s %3s %10s %10s %8s %10s %7s %7s\n", "kind", "T", "thr", "attn.h ms", "torch ms", "speed-up", "extra MiB",
               "% peak", "fwd %");
    }
    for (ti = 0; ti < 2 && !memory_only; ti++)
        for (th = 1; th <= 2; th++) {
            int T = Ts[ti];
            size_t n = (size_t)8 * T * 64;
            attn_float *Q = (attn_float *)malloc(n * sizeof(attn_float)), *K = (attn_float *)malloc(n * sizeof(attn_float));
            attn_float *V = (attn_float *)malloc(n * sizeof(attn_float)), *O = (attn_float *)malloc(n * sizeof(attn_float));
            attn_float *dO = (attn_float *)malloc(n * sizeof(attn_float)), *dQ = (attn_float *)calloc(n, sizeof(attn_float));
            attn_float *dK = (attn_float *)calloc(n, sizeof(attn_float)), *dV = (attn_float *)calloc(n, sizeof(attn_float));
            attn_float *st = (attn_float *)malloc((size_t)8 * T * (2 * 64 + 3) * sizeof(attn_float)); /* diff's stats are the largest */
            attn_rng r;
            if (!Q || !K || !V || !O || !dO || !dQ || !dK || !dV || !st) { fprintf(stderr, "out of memory\n"); return 1; }
            if (have_torch) run_torch(ti, T, th, kinds);
            attn_set_threads(th);
            attn_rng_seed(&r, 1, 1);
            for (i = 0; i < (int)n; i++) {
                Q[i] = (attn_float)attn_rng_normal(&r, 0, 1); K[i] = (attn_float)attn_rng_normal(&r, 0, 1);
                V[i] = (attn_float)attn_rng_normal(&r, 0, 1); dO[i] = (attn_float)attn_rng_normal(&r, 0, 1);
            }
            for (k = 0; k <= LAST_PER_HEAD; k++) {
                size_t bytes;
                double fms, ms, tm = torch_ms[k][ti][th - 1], gf, gff;
                if (only >= 0 && k != only) continue;
                ms = fwd_bwd_ms(k, NULL, NULL, T, Q, K, V, O, st, dO, dQ, dK, dV, repeats, &bytes, &fms);
                gf = 7.0 * T * T * 64 * 8 / (ms * 1e-3) / 1e9;  /* the products' rate, GFLOP/s */
                gff = 2.0 * T * T * 64 * 8 / (fms * 1e-3) / 1e9; /* the forward's */
                int linear = (attn_kind_get((attn_kind)k)->flags & ATTN_KF_LINEAR_TIME) != 0;
                printf("%-8s %5d %3d %10.1f %10.1f %8.2f %10.2f", attn_kind_get((attn_kind)k)->name, T, th, ms, tm, tm > 0 ? tm / ms : 0,
                       (double)bytes / (1 << 20));
                if (linear || peak <= 0) printf("%7s %7s\n", "-", "-");
                else printf("%6.0f%% %6.0f%%\n", 100 * gf / (peak * th), 100 * gff / (peak * th));
                fflush(stdout);
            }
            free(Q); free(K); free(V); free(O); free(dO); free(dQ); free(dK); free(dV); free(st);
        }
    if (only >= 0) return 0;
    if (!memory_only) bench_mixing(repeats);
    if (!memory_only) bench_kernel_ratio(repeats);
    printf("\nPeak resident memory of a causal forward pass at T = 8192, B = 1, H = 8, dh = 64 (a child process\n"
           "per kind, one thread; inputs + outputs are Q, K, V, O and the stats):\n\n%-10s %12s %14s %12s\n", "kind", "peak MiB", "in+out MiB", "extra MiB");
    fflush(stdout);
    for (k = 0; k <= LAST_PER_HEAD; k++) {
        size_t io;
        double mib = peak_forward_mib(k, &io);
        printf("%-10s %12.1f %14.1f %12.1f\n", attn_kind_get((attn_kind)k)->name, mib, io / 1048576.0, mib - io / 1048576.0);
        fflush(stdout);
    }
    return 0;
}
