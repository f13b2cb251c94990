/* ab_step: is build B of attn.h faster than build A on a whole training step? The builds live in
   one program (bench/ab_side.c, compiled against each header: two instances of each, a and d of A,
   b and c of B, set up in the order a, b, c, d) and take turns, one step at a time, so that whatever
   else the machine is doing falls on both alike. Each round gives two ratios of step times, a / b
   (B set up after A) and d / c (B before A), and their geometric mean, B's speed relative to A's
   with the order of the set-ups cancelled. Prints the median of the rounds' means with a 95%
   interval for it (order statistics: a binomial interval, no assumption about the distribution),
   how many rounds B won, and the set-up order's own effect. Where each build's code lands in the
   program is not cancelled: on the project's machine, the same header as A and as B gave B / A of
   1.005 to 1.012 (fuzzy, SRAVEN, Cogformer, 30-60 rounds), so differences of 1% are not resolved;
   run it with B = A first to see that floor.
   Preset attention: instead of a step, the attention layer of one SRAVEN chunk alone, forward +
   backward (14 sequences, 16 heads of 4, T 36, a bias, dropout 0.1; bench/ab_side.c).
   Usage: make ab A=old/attn.h [B=attn.h] [PRESET=fuzzy|sraven|cogformer|attention] [KIND=softmax] [STEPS=40]
     or build/ab_step [--preset P] [--kind K] [--steps N] (N rounds of four steps) */
#include "bench.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *ab_a_init(int preset, const char *kind);
double ab_a_step(void *s);
void *ab_b_init(int preset, const char *kind);
double ab_b_step(void *s);
void *ab_c_init(int preset, const char *kind);
double ab_c_step(void *s);
void *ab_d_init(int preset, const char *kind);
double ab_d_step(void *s);
int ab_a_tokens(void *s);
const char *ab_a_version(void);
const char *ab_b_version(void);

int main(int argc, char **argv)
{
    static const char *names[4] = {"fuzzy", "sraven", "cogformer", "attention"};
    const char *kind = "softmax";
    int preset = 0, n = 40, i, won = 0, lo, hi, tokens;
    double *ta, *tb, *r, *place, half;
    void *a, *b, *c, *d;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help")) {
            printf("usage: ab_step [--preset fuzzy|sraven|cogformer|attention] [--kind softmax] [--steps 40]\n"
                   "  alternates training steps of two builds of attn.h (make ab A=old/attn.h B=attn.h) on one thread\n"
                   "  and prints B's speed relative to A's: the median over rounds and its 95%% interval\n");
            return 0;
        } else if (!strcmp(argv[i], "--kind") && i + 1 < argc) kind = argv[++i];
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc) n = arg_int("--steps", argv[++i], 6, 100000);
        else if (!strcmp(argv[i], "--preset") && i + 1 < argc) {
            for (++i, preset = 0; preset < 4 && strcmp(argv[i], names[preset]); preset++) {}
            if (preset == 4) {
                fprintf(stderr, "ab_step: unknown preset %s (fuzzy, sraven, cogformer or attention)\n", argv[i]);
                return 1;
            }
        } else { fprintf(stderr, "ab_step: unknown option %s (see --help)\n", argv[i]); return 1; }
    }
    a = ab_a_init(preset, kind);
    b = ab_b_init(preset, kind);
    c = ab_c_init(preset, kind);
    d = ab_d_init(preset, kind);
    if (!a || !b || !c || !d) { fprintf(stderr, "ab_step: build %s does not know the kind %s\n", a ? "B" : "A", kind); return 1; }
    ta = (double *)malloc(sizeof(double) * (size_t)n);
    tb = (double *)malloc(sizeof(double) * (size_t)n);
    r = (double *)malloc(sizeof(double) * (size_t)n);
    place = (double *)malloc(sizeof(double) * (size_t)n);
    if (!ta || !tb || !r || !place) { fprintf(stderr, "ab_step: out of memory\n"); return 1; }
    tokens = ab_a_tokens(a);
    printf("ab_step: %s, kind %s, one thread, A (%s kernels) against B (%s kernels), %d rounds of four steps\n",
           names[preset], kind, ab_a_version(), ab_b_version(), n);
    printf("CPU: %s; FMA peak (one core) %.1f GFLOP/s\n", cpu_model(), fma_peak_gflops());
    for (i = 0; i < 3; i++) { ab_a_step(a); ab_b_step(b); ab_c_step(c); ab_d_step(d); } /* warm-up */
    for (i = 0; i < n; i++) {
        double sa, sb, sc, sd;
        if (i & 1) { sb = ab_b_step(b); sa = ab_a_step(a); sd = ab_d_step(d); sc = ab_c_step(c); }
        else { sa = ab_a_step(a); sb = ab_b_step(b); sc = ab_c_step(c); sd = ab_d_step(d); }
        ta[i] = 0.5 * (sa + sd);
        tb[i] = 0.5 * (sb + sc);
        r[i] = sqrt(sa / sb * (sd / sc));
        place[i] = sqrt(sa / sb / (sd / sc)); /* > 1: the instance set up later runs faster */
        won += r[i] > 1;
        if ((i + 1) % 10 == 0 || i + 1 == n) { fprintf(stderr, "\r  %d / %d rounds", i + 1, n); fflush(stderr); }
    }
    fprintf(stderr, "\n");
    qsort(ta, (size_t)n, sizeof(double), cmp_double);
    qsort(tb, (size_t)n, sizeof(double), cmp_double);
    qsort(r, (size_t)n, sizeof(double), cmp_double);
    qsort(place, (size_t)n, sizeof(double), cmp_double);
    half = 0.98 * sqrt((double)n); /* 1.96 sd of a binomial(n, 1/2) count, in order statistics */
    lo = (int)floor(n / 2.0 - half);
    hi = (int)ceil(n / 2.0 + half);
    lo = lo < 0 ? 0 : lo;
    hi = hi > n - 1 ? n - 1 : hi;
    printf("A: %.0f tokens/s, B: %.0f tokens/s (medians)\n", tokens / ta[n / 2], tokens / tb[n / 2]);
    printf("B / A speed: median %.4f, 95%% interval %.4f-%.4f; B faster in %d of %d rounds\n", r[n / 2], r[lo], r[hi], won,
           n);
    printf("(placement: the instance set up later ran %.4fx as fast, median; cancelled above)\n", place[n / 2]);
    free(ta); free(tb); free(r); free(place);
    return 0;
}
