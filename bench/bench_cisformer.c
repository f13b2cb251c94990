/* bench_cisformer: training throughput of the expressive-attention paper's cisformer (Gros 2024) in
   predictions per second, beside PyTorch training the same model in the same run
   (bench/torch_cisformer.py through Debian's /usr/bin/python3; skipped with a message without
   torch). Both sides train on NT series with the same update rules:

     sample   one SGD step per prediction (forward and backward of one window, then the step);
              PyTorch's side is the straightforward per-prediction loop
     batched  the 40 windows of an epoch in one forward/backward, one step per epoch

   for softmax and EA at N16T2 / N_con 32 and N16T5 / N_con 128, one thread; then two independent
   runs (two seeds) on two cores against one, the way attnlab spreads seeds over cores.
   Usage: bench_cisformer [--repeats N] [--seconds S] */
#define ATTN_IMPLEMENTATION
#include "../attn.h"
#include "bench.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define NBATCH 40

typedef struct {
    attn_cisformer m;
    attn_float *vel, *y, *target, *dy, *cache;
    void *work;
    size_t wb;
    int *series, nb;
    attn_rng rng;
    long step;
} trainer;

static void trainer_init(trainer *t, attn_kind kind, int N, int ncon, int batched, int seed)
{
    attn_cisformer_config cf;
    memset(&cf, 0, sizeof cf);
    memset(t, 0, sizeof *t);
    cf.d = N; cf.ncon = ncon; cf.kind = kind; cf.scale = 1; cf.init_uniform = 1;
    attn_rng_seed(&t->rng, (uint64_t)seed, 1);
    if (attn_cisformer_init(&t->m, &cf, &t->rng) != ATTN_OK) { fprintf(stderr, "bench_cisformer: %s\n", attn_last_error()); exit(1); }
    t->nb = batched ? NBATCH : 1;
    t->vel = (attn_float *)calloc(t->m.p.total, sizeof(attn_float));
    t->y = (attn_float *)malloc(sizeof(attn_float) * (size_t)t->nb * N);
    t->target = (attn_float *)malloc(sizeof(attn_float) * (size_t)t->nb * N);
    t->dy = (attn_float *)malloc(sizeof(attn_float) * (size_t)t->nb * N);
    t->cache = (attn_float *)malloc(sizeof(attn_float) * attn_cisformer_cache_floats(&t->m, t->nb));
    t->wb = attn_cisformer_work_bytes(&t->m, t->nb);
    t->work = malloc(t->wb);
    t->series = (int *)malloc(sizeof(int) * (size_t)(ncon + NBATCH));
    if (!t->vel || !t->y || !t->target || !t->dy || !t->cache || !t->work || !t->series) { fprintf(stderr, "bench_cisformer: out of memory\n"); exit(1); }
}

static void trainer_free(trainer *t)
{
    attn_cisformer_free(&t->m);
    free(t->vel); free(t->y); free(t->target); free(t->dy); free(t->cache); free(t->work); free(t->series);
}

/* One epoch: a fresh NT series of ncon + 40 symbols, its 40 predictions, 40 steps or one. */
static void trainer_epoch(trainer *t, int tau)
{
    int d = t->m.cfg.d, n = t->m.cfg.ncon, j;
    attn_nt_series(t->series, n + NBATCH, ATTN_NT, d, tau, NULL, &t->rng, NULL);
    for (j = 0; j < NBATCH; j += t->nb) { /* loss: the mean over the nb predictions of sum_e (y_e - onehot_e)^2 */
        attn_cisformer_forward(&t->m, t->y, t->cache, attn_cisformer_cache_floats(&t->m, t->nb), t->series + j, 1, t->nb, t->work, t->wb);
        attn_one_hot(t->target, t->series + j + n, t->nb, d);
        memset(t->dy, 0, sizeof(attn_float) * (size_t)t->nb * d);
        attn_mse_backward(t->dy, t->y, t->target, (size_t)t->nb * d, ATTN_REDUCE_SUM, (attn_float)(1.0 / t->nb));
        attn_cisformer_backward_sgd(&t->m, t->dy, t->cache, attn_cisformer_cache_floats(&t->m, t->nb), t->nb, t->vel, 0.02f, 0.8f, t->step++, t->work, t->wb);
    }
}

/* Predictions per second of `runs` trainers side by side (one per thread), median of repeats. */
static double measure(attn_kind kind, int N, int tau, int ncon, int batched, int runs, int repeats, double seconds)
{
    double rate[16];
    int r;
    for (r = 0; r < repeats; r++) {
        long epochs = 0;
        double t0 = now(), el;
        int k;
#ifdef _OPENMP
#pragma omp parallel for num_threads(runs) reduction(+ : epochs) if (runs > 1)
#endif
        for (k = 0; k < runs; k++) {
            trainer t;
            trainer_init(&t, kind, N, ncon, batched, k);
            trainer_epoch(&t, tau); /* warm-up */
            while (now() - t0 < seconds) {
                trainer_epoch(&t, tau);
                epochs++;
            }
            trainer_free(&t);
        }
        el = now() - t0;
        rate[r] = (double)NBATCH * (double)epochs / el;
    }
    qsort(rate, (size_t)repeats, sizeof rate[0], cmp_double);
    return rate[repeats / 2];
}

/* PyTorch's predictions per second for (mode, kind, N, tau, ncon) at one thread; 0 if not there. */
static void run_torch(const char *kind, int N, int tau, int ncon, int repeats, double seconds, double *loop, double *batched)
{
    char cmd[512], mode[32], k[32];
    int a, b, c, th;
    double rate;
    FILE *f;
    *loop = *batched = 0;
    snprintf(cmd, sizeof cmd,
             "env -u OPENBLAS_CORETYPE /usr/bin/python3 bench/torch_cisformer.py --kind %s --N %d --tau %d --ncon %d --threads 1 --repeats %d --seconds %g 2>/dev/null",
             kind, N, tau, ncon, repeats, seconds);
    if (!(f = popen(cmd, "r"))) return;
    while (fscanf(f, "%31s %31s %d %d %d %d %lf", mode, k, &a, &b, &c, &th, &rate) == 7) {
        if (!strcmp(mode, "loop")) *loop = rate;
        if (!strcmp(mode, "batched")) *batched = rate;
    }
    pclose(f);
}

int main(int argc, char **argv)
{
    static const int shapes[2][3] = {{16, 2, 32}, {16, 5, 128}};
    static const attn_kind kinds[2] = {ATTN_SOFTMAX, ATTN_EXPRESSIVE};
    int repeats = 3, i, s, k, have_torch;
    double seconds = 2;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--repeats") && i + 1 < argc) repeats = arg_int("--repeats", argv[++i], 1, 1000);
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = arg_double("--seconds", argv[++i], 0.01, 3600);
        else {
            printf("usage: bench_cisformer [--repeats N] [--seconds S]\n"
                   "  cisformer training throughput (predictions/s, one thread) with a step per prediction and\n"
                   "  a step per 40-prediction epoch, beside PyTorch; then two seeds on two cores. Run from the\n"
                   "  repository root.\n");
            return strcmp(argv[i], "--help") ? 1 : 0;
        }
    }
    if (repeats < 1 || repeats > 16 || !(seconds > 0)) { fprintf(stderr, "bench_cisformer: --repeats 1..16, --seconds > 0\n"); return 1; }
    attn_set_threads(1);
    have_torch = system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0;
    if (!have_torch) printf("PyTorch not found (apt-get install python3-torch): the PyTorch columns stay empty\n");
    printf("attn.h %s (%s kernels); cisformer training, predictions per second, one thread, median of %d x %gs\n", ATTN_VERSION_STRING,
           attn_simd_name(), repeats, seconds);
    printf("CPU: %s; FMA peak (one core) %.1f GFLOP/s (the cisformer's per-position products are bound by memory:\n"
           "docs/benchmarks.md)\n\n", cpu_model(), fma_peak_gflops());
    printf("%-8s %-6s %5s | %12s %12s %8s | %12s %12s %8s\n", "kind", "task", "N_con", "attn.h step", "torch loop", "ratio", "attn.h epoch",
           "torch batch", "ratio");
    for (s = 0; s < 2; s++)
        for (k = 0; k < 2; k++) {
            const int *sh = shapes[s];
            double cs = measure(kinds[k], sh[0], sh[1], sh[2], 0, 1, repeats, seconds);
            double cb = measure(kinds[k], sh[0], sh[1], sh[2], 1, 1, repeats, seconds), tl = 0, tb = 0;
            char task[16];
            if (have_torch) run_torch(attn_kind_get(kinds[k])->name, sh[0], sh[1], sh[2], repeats, seconds, &tl, &tb);
            snprintf(task, sizeof task, "N%dT%d", sh[0], sh[1]);
            printf("%-8s %-6s %5d | %12.0f %12.0f %7.1fx | %12.0f %12.0f %7.1fx\n", attn_kind_get(kinds[k])->name, task, sh[2], cs, tl,
                   tl > 0 ? cs / tl : 0, cb, tb, tb > 0 ? cb / tb : 0);
            fflush(stdout);
        }
    printf("\n(\"step\": a step per prediction, PyTorch's per-prediction loop; \"epoch\": a step per 40 predictions,\n"
           " PyTorch batched over the 40 windows. Both: SGD lr 0.02, momentum 0.8, squared error, NT series.)\n");
#ifdef _OPENMP
    printf("\nTwo independent runs on two cores against one (softmax, N16T2, N_con 32, a step per prediction):\n");
    {
        double one = measure(ATTN_SOFTMAX, 16, 2, 32, 0, 1, repeats, seconds), two = measure(ATTN_SOFTMAX, 16, 2, 32, 0, 2, repeats, seconds);
        printf("  one run %.0f predictions/s, two runs %.0f predictions/s together: %.2fx\n", one, two, two / one);
    }
#else
    printf("\n(built without OpenMP: no two-core row)\n");
#endif
    return 0;
}
