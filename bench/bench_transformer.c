/* bench_transformer: training throughput in tokens per second (a step = forward, loss, backward and
   AdamW) of the HYLA paper's transformer (Schug et al. 2025; batch 128) for the fuzzy preset (2 layers,
   E 128, 8 heads of 2, T 32) and SRAVEN width 1 (4 layers, 16 heads of 4, T 36), softmax and HYLA,
   with attention dropout 0.1; and of a small Cogformer (Lv et al. 2024: 257 byte tokens, 4 RMSNorm blocks
   of width 128 with RoPE, 4 heads of 32, SwiGLU 344, no biases, 16 windows of 128 tokens, every
   position predicted, clipping at 1.0), softmax and Cog; one and two threads, beside
   bench/torch_hyla.py training the same models in PyTorch in the same run (through Debian's
   /usr/bin/python3; skipped with a message without torch). Inputs are random.
   attn.h's transformer computes only what the head reads in its last layer (the read-out rows'
   queries and MLP); the PyTorch script runs the model as written (every position in every layer),
   and again with --prune, the same saving written into the PyTorch model by hand: the table gives
   both ratios. attn.h's step runs through attn_transformer_grad, in chunks of about 512 tokens (each
   chunk's backward pass after its forward pass); PyTorch's in one pass over the batch (torch_hyla.py
   --chunk N accumulates over chunks as well; on the project's machine that was not faster).
   --rounds R alternates the three measurements (attn.h, PyTorch, PyTorch pruned) R times and gives
   each ratio's mean, sd and 95% t-interval over the rounds: the machine's speed drifts by several
   percent within minutes, and the rounds pair each attn.h figure with the PyTorch ones beside it.
   Usage: bench_transformer [--repeats 3] [--seconds 2] [--rounds 1] [--preset fuzzy|sraven|cogformer]
                            [--kind K] [--threads 1|2] [--no-torch] */
#define ATTN_IMPLEMENTATION
#ifdef BENCH_ATTN_H /* another copy of the header: bench/trace_products.py's timed one */
#include BENCH_ATTN_H
#else
#include "../attn.h"
#endif
#include "bench.h"
#include "train_step.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* attn.h's tokens per second for a preset (0 fuzzy, 1 SRAVEN, 2 the Cogformer) and kind on
   `threads` threads; *flops: step_flops per token. */
static double run_attn(int preset, attn_kind kind, int threads, int repeats, double seconds, double *flops)
{
    train_step s;
    double rates[16];
    int rep;
    train_step_init(&s, preset, kind, threads);
    *flops = step_flops(&s.c) / s.c.max_T;
    for (rep = -1; rep < repeats; rep++) { /* rep -1 warms up */
        double t0 = now(), el;
        long steps = 0;
        do {
            train_step_run(&s);
            steps++;
            el = now() - t0;
        } while (el < (rep < 0 ? 0.5 : seconds));
        if (rep >= 0) rates[rep] = (double)steps * s.B * s.c.max_T / el;
    }
    qsort(rates, (size_t)repeats, sizeof(double), cmp_double);
    train_step_free(&s);
    return rates[repeats / 2];
}

static double run_torch(int preset, const char *kind, int prune, int threads, int repeats, double seconds)
{
    char cmd[512];
    FILE *f;
    double rate = 0;
    char k[32], pr[32];
    int t;
    snprintf(cmd, sizeof cmd,
             "env -u OPENBLAS_CORETYPE /usr/bin/python3 bench/torch_hyla.py --preset %s --kind %s%s --threads %d --repeats %d --seconds %g 2>/dev/null",
             preset == 2 ? "cogformer" : preset ? "sraven" : "fuzzy", kind, prune ? " --prune" : "", threads, repeats, seconds);
    if (!(f = popen(cmd, "r"))) return 0;
    if (fscanf(f, "%31s %31s %d %lf", k, pr, &t, &rate) != 4) rate = 0;
    pclose(f);
    return rate;
}

/* "mean +- sd (95% t-interval lo-hi)" of x[0 .. n) into out (n >= 2, at most 30). */
static void summary(char *out, size_t len, const double *x, int n)
{
    static const double t975[30] = {0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262,
                                    2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093,
                                    2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045};
    double m = 0, v = 0, h;
    int i;
    for (i = 0; i < n; i++) m += x[i] / n;
    for (i = 0; i < n; i++) v += (x[i] - m) * (x[i] - m) / (n - 1);
    h = t975[n - 1] * sqrt(v / n);
    snprintf(out, len, "%.2f +- %.2f (%.2f-%.2f)", m, sqrt(v), m - h, m + h);
}

int main(int argc, char **argv)
{
    static const attn_kind kinds[3][2] = {{ATTN_SOFTMAX, ATTN_HYLA}, {ATTN_SOFTMAX, ATTN_HYLA}, {ATTN_SOFTMAX, ATTN_COG}};
    static const char *names[3] = {"fuzzy", "sraven", "cogformer"};
    int repeats = 3, rounds = 1, i, s, k, t, r, have_torch, only = -1, threads = 0, torch = 1, ran = 0;
    const char *kind = NULL;
    double seconds = 2, peak, fl, ours, theirs, pruned, pk[30], rt[30], rp[30];
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help")) {
            printf("usage: bench_transformer [--repeats R] [--seconds S] [--rounds N] [--preset fuzzy|sraven|cogformer]\n"
                   "                         [--kind K] [--threads 1|2] [--no-torch]\n"
                   "  training tokens/s of the HYLA paper's transformer and a Cogformer beside PyTorch (every preset, both\n"
                   "  of its kinds and 1 and 2 threads by default; --kind, --threads and --preset pick one);\n"
                   "  --rounds N (2-30) alternates attn.h and PyTorch N times and summarises the ratios over the rounds\n");
            return 0;
        } else if (!strcmp(argv[i], "--kind") && i + 1 < argc) kind = argv[++i];
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = arg_int("--threads", argv[++i], 1, 2);
        else if (!strcmp(argv[i], "--no-torch")) torch = 0;
        else if (!strcmp(argv[i], "--repeats") && i + 1 < argc) repeats = arg_int("--repeats", argv[++i], 1, 1000);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = arg_int("--rounds", argv[++i], 1, 30);
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = arg_double("--seconds", argv[++i], 0.01, 3600);
        else if (!strcmp(argv[i], "--preset") && i + 1 < argc) {
            for (++i, only = 0; only < 3 && strcmp(argv[i], names[only]); only++) {}
            if (only == 3) { fprintf(stderr, "bench_transformer: unknown preset %s (fuzzy, sraven or cogformer)\n", argv[i]); return 1; }
        }
        else { fprintf(stderr, "bench_transformer: unknown option %s (see --help)\n", argv[i]); return 1; }
    }
    if (repeats < 1 || repeats > 16 || !(seconds > 0)) { fprintf(stderr, "bench_transformer: --repeats in 1 .. 16, --seconds > 0\n"); return 1; }
    if (kind && strcmp(kind, "softmax") && strcmp(kind, "hyla") && strcmp(kind, "cog")) {
        fprintf(stderr, "bench_transformer: --kind %s: softmax, hyla (fuzzy, sraven) or cog (cogformer)\n", kind);
        return 1;
    }
    have_torch = torch && system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0;
    peak = fma_peak_gflops();
    printf("attn.h %s (%s kernels); HYLA-paper transformer training, tokens per second (batch 128), median of %d x %gs\n",
           ATTN_VERSION_STRING, attn_simd_name(), repeats, seconds);
    printf("CPU: %s; FMA peak (one core) %.1f GFLOP/s; %% peak: the step's product FLOPs per token (forward x 3,\n"
           "attention products x 3.5) times tokens/s, against the peak times the threads\n", cpu_model(), peak);
    if (!have_torch) printf("%s: the PyTorch columns stay empty\n", torch ? "PyTorch not found (apt-get install python3-torch)" : "--no-torch");
    printf("\n%-8s %-9s %7s | %12s %7s %12s %8s | %14s %8s\n", "kind", "preset", "threads", "attn.h", "% peak", "PyTorch", "ratio",
           "PyTorch pruned", "ratio");
    for (s = 0; s < 3; s++)
        for (k = 0; k < 2 && (only < 0 || only == s); k++)
            for (t = 1; t <= 2; t++) {
                const char *name = attn_kind_get(kinds[s][k])->name;
                if ((kind && strcmp(kind, name)) || (threads && t != threads)) continue;
                ran++;
                for (r = 0; r < rounds; r++) {
                    ours = run_attn(s, kinds[s][k], t, repeats, seconds, &fl);
                    theirs = have_torch ? run_torch(s, name, 0, t, repeats, seconds) : 0;
                    pruned = have_torch && s < 2 ? run_torch(s, name, 1, t, repeats, seconds) : 0;
                    pk[r] = peak > 0 ? 100 * ours * fl * 1e-9 / (peak * t) : 0;
                    rt[r] = theirs > 0 ? ours / theirs : 0;
                    rp[r] = pruned > 0 ? ours / pruned : 0;
                    printf("%-8s %-9s %7d | %12.0f %6.0f%% %12.0f %7.2fx | %14.0f %7.2fx\n", name, names[s], t, ours,
                           pk[r], theirs, rt[r], pruned, rp[r]);
                    fflush(stdout);
                }
                if (rounds > 1) {
                    char a[96], b[96], c[96];
                    summary(a, sizeof a, pk, rounds);
                    summary(b, sizeof b, rt, rounds);
                    summary(c, sizeof c, rp, rounds);
                    printf("  %s %s, threads %d, %d rounds, mean +- sd (95%% t-interval): %% peak %s;\n"
                           "  / PyTorch %s; / PyTorch pruned %s\n", name, names[s], t, rounds, a,
                           have_torch ? b : "-", have_torch && s < 2 ? c : "-");
                    fflush(stdout);
                }
            }
    if (!ran) printf("(nothing ran: the cogformer takes softmax and cog, fuzzy and sraven softmax and hyla)\n");
    printf("\n(fuzzy: 2 layers, E 128, 8 heads of 2, T 32, one output; sraven: width 1, 4 layers, 16 heads of 4,\n"
           " T 36, 4 x 8 logits; both with T5 biases, attention dropout 0.1, AdamW. cogformer: 4 layers, d 128,\n"
           " 4 heads of 32, RoPE, SwiGLU, 16 x 128 byte tokens, every position, AdamW with clipping.\n"
           " PyTorch pruned: the last block computes only the read-out rows, as attn.h does; not for the cogformer,\n"
           " which reads every position. attn.h: attn_transformer_grad, chunks of about 512 tokens; PyTorch: one pass.)\n");
    return 0;
}
