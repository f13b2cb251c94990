/* Task generators against exact test vectors: the NT-family cycle censuses and example series of the
   EA paper (Gros 2024), the mixture's rule draws, bad input; the fuzzy-logic splits and functions of
   the HYLA paper (Schug et al. 2025, Sec. 3); SRAVEN's latents, rules and layout (its Sec. 4 and
   App. B.3) and Table A2's ambiguity rates. */
#include "test.h"

/* One census row of the EA paper's tasks: task, N, tau, then "multiplicity x length" terms, longest first. */
typedef struct {
    attn_nt_task task;
    int N, tau;
    const char *census;
    long transient;
} census_case;

static void census_string(const attn_nt_census *c, char *buf, size_t n)
{
    size_t used = 0;
    int k;
    buf[0] = 0;
    for (k = 0; k < c->nlengths && used < n; k++)
        used += (size_t)snprintf(buf + used, n - used, "%s%ldx%ld", k ? " " : "", c->count[k], c->length[k]);
}

static void test_nt_census(void)
{
    static const census_case cases[] = {
        {ATTN_NT, 2, 1, "1x3 1x1", 0},
        {ATTN_NT, 2, 2, "1x7 1x1", 0},
        {ATTN_NT, 2, 3, "1x15 1x1", 0},
        {ATTN_NT, 2, 4, "1x21 1x7 1x3 1x1", 0},
        {ATTN_NT, 2, 5, "1x63 1x1", 0},
        {ATTN_NT, 16, 1, "8x24 4x12 2x6 1x3 1x1", 0},
        {ATTN_NT, 16, 2, "64x56 16x28 4x14 1x7 1x1", 0},
        {ATTN_NT, 16, 3, "512x120 64x60 8x30 1x15 1x1", 0},
        {ATTN_NT, 16, 4, "6024x168 372x84 64x56 22x42 16x28 8x24 1x21 4x14 4x12 1x7 2x6 1x3 1x1", 0},
        {ATTN_NT, 16, 5, "32768x504 1024x252 32x126 1x63 1x1", 0},
        {ATTN_NT_S, 16, 2, "96x32 56x16 14x8 3x4 1x2 2x1", 0},
        {ATTN_NT_S, 16, 3, "1536x40 192x20 24x10 3x5 1x1", 0},
        {ATTN_NT_S, 16, 5, "294912x56 9216x28 288x14 9x7 1x1", 0},
        {ATTN_NT_S, 2, 5, "9x7 1x1", 0},
        {ATTN_NT_R, 16, 2, "2x788 2x420 2x196 4x108 2x90 2x76 4x48 1x20 3x14 1x10 1x4 1x1", 255},
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const census_case *cc = &cases[i];
        attn_nt_census c;
        char got[512];
        attn_status st = attn_nt_census_compute(&c, cc->task, cc->N, cc->tau);
        census_string(&c, got, sizeof got);
        CHECK(st == ATTN_OK && !strcmp(got, cc->census) && c.transient == cc->transient && c.cycle_states + c.transient == c.states,
              "census %s N%dT%d: got \"%s\" + %ld transient, want \"%s\" + %ld", attn_nt_name(cc->task), cc->N, cc->tau, got,
              c.transient, cc->census, cc->transient);
    }
    { /* the paper's mean cycle lengths: 47.6 (N16T2) and 23.8 (N16T2-S), unweighted over cycles */
        attn_nt_census a, b;
        attn_nt_census_compute(&a, ATTN_NT, 16, 2);
        attn_nt_census_compute(&b, ATTN_NT_S, 16, 2);
        CHECK(a.cycles == 86 && fabs((double)a.cycle_states / a.cycles - 47.63) < 0.005 && b.cycles == 172 &&
              fabs((double)b.cycle_states / b.cycles - 23.81) < 0.005, "mean cycle lengths %.2f / %.2f (want 47.63 / 23.81)",
              (double)a.cycle_states / a.cycles, (double)b.cycle_states / b.cycles);
    }
}

/* An example series: task, N, tau, the whole expected prefix (its first tau + 1 values are the
   initial condition), and the period to check (0: none). */
typedef struct {
    attn_nt_task task;
    int N, tau;
    const char *series;
    int period;
} series_case;

static void test_nt_series(void)
{
    static const series_case cases[] = {
        {ATTN_NT, 2, 1, "0 1 1 0 1 1 0 1 1", 3},
        {ATTN_NT, 2, 5, "0 0 0 0 0 1 0 0 0 0 1 1 0 0 0 1 0 1 0 0 1 1 1 1 0 1 0 0 0 1 1 1 0 0 1 0 0 1 0 1 1 0 1 1 1 0 1 1 0 0 1 1 "
                         "0 1 0 1 0 1 1 1 1 1 1 0 0 0 0 0 1 0", 63},
        {ATTN_NT, 16, 2, "0 0 1 0 1 1 1 2 2 3 4 5 7 9 12 0 5 12 5 1 1 6 2 7 8 9 15 1 8 0", 56},
        {ATTN_NT, 16, 2, "1 2 3 3 5 6 8 11 14 3 9 1 12 10 13 6 7 3 13 10", 56},
        {ATTN_NT_S, 16, 2, "0 0 1 1 2 4 7 13 8 12 1 5 2 8 15 9 0 8 1 9 2 12 7 5 8 4 1 13 2 0", 32},
        {ATTN_NT_R, 16, 2, "0 0 1 1 2 2 3 4 5 7 9 12 0 5 12 1 1 13 2 14 15 0 13 15 12 12 11 8 7 3", 0},
        {ATTN_NT_R, 16, 2, "1 2 3 3 5 6 8 11 14 3 9 1 12 10 13 6 7 3 13 10 0 7 10 1 1 11 2 12 13 14", 0},
        {ATTN_NT, 16, 3, "0 0 0 1 0 0 1 1 0 1 2 1 1 3 3 2 4 6 5 6 10 11 11 0 5", 120},
        {ATTN_NT, 16, 5, "0 0 0 0 0 1 0 0 0 0 1 1 0 0 0 1 2 1 0 0 1 3 3 1 0 1 4 6 4 1", 504},
        {ATTN_NT, 16, 5, "1 2 3 4 5 6", 504},
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const series_case *sc = &cases[i];
        int want[128], n = 0, len, t, ok = 1, period_ok = 1, *x;
        const char *p = sc->series;
        char *end;
        while (*p) {
            want[n++] = (int)strtol(p, &end, 10);
            p = end;
            while (*p == ' ') p++;
        }
        len = (sc->period ? 2 * sc->period : 0) + n + sc->tau + 1;
        x = (int *)malloc(sizeof(int) * (size_t)len);
        ok = attn_nt_series(x, len, sc->task, sc->N, sc->tau, want, NULL, NULL) == ATTN_OK;
        for (t = 0; ok && t < n; t++) ok = x[t] == want[t];
        if (sc->period) { /* x(t + P) = x(t) everywhere, and the state first returns at P */
            for (t = 0; t + sc->period < len; t++) period_ok = period_ok && x[t + sc->period] == x[t];
            for (t = 1; t < sc->period && period_ok; t++) {
                int k, same = 1;
                for (k = 0; k <= sc->tau && same; k++) same = x[t + k] == x[k];
                period_ok = !same;
            }
        }
        CHECK(ok && period_ok, "series %s N%dT%d from \"%.20s...\": %s", attn_nt_name(sc->task), sc->N, sc->tau, sc->series,
              ok ? "wrong period" : "wrong values");
        free(x);
    }
}

static void test_nt_mixture_and_input(void)
{
    attn_rng r;
    int x[64], i, n_s = 0, init[3] = {0, 0, 1};
    attn_nt_task rule;
    attn_rng_seed(&r, 5, 0);
    for (i = 0; i < 2000; i++) { /* the mixture: NT or NT-S with probability 1/2, the series by that rule */
        int y[64], ok;
        attn_nt_series(x, 64, ATTN_NT_MIX, 16, 2, NULL, &r, &rule);
        attn_nt_series(y, 64, rule, 16, 2, x, NULL, NULL);
        ok = !memcmp(x, y, sizeof x);
        n_s += rule == ATTN_NT_S;
        if (!ok) { CHECK(0, "mixture series %d does not follow its own rule", i); break; }
    }
    CHECK(abs(n_s - 1000) < 120, "mixture drew NT-S %d times in 2000 (expected about 1000)", n_s);
    x[0] = -7;
    CHECK(attn_nt_series(x, 64, ATTN_NT, 1, 2, init, NULL, NULL) == ATTN_ERR_ARG && x[0] == -7, "N = 1 refused, nothing written");
    CHECK(attn_nt_series(x, 64, ATTN_NT, 16, 0, init, NULL, NULL) == ATTN_ERR_ARG, "tau = 0 refused");
    CHECK(attn_nt_series(x, 2, ATTN_NT, 16, 2, init, NULL, NULL) == ATTN_ERR_ARG, "len < tau + 1 refused");
    CHECK(attn_nt_series(x, 64, ATTN_NT, 16, 2, NULL, NULL, NULL) == ATTN_ERR_ARG, "no initial condition and no RNG refused");
    init[1] = 16;
    CHECK(attn_nt_series(x, 64, ATTN_NT, 16, 2, init, NULL, NULL) == ATTN_ERR_ARG && x[0] == -7, "an initial symbol out of range refused");
    CHECK(attn_nt_series(x, 64, (attn_nt_task)9, 16, 2, NULL, &r, NULL) == ATTN_ERR_ARG, "unknown task refused");
    {
        attn_nt_census c;
        CHECK(attn_nt_census_compute(&c, ATTN_NT_MIX, 16, 2) == ATTN_ERR_ARG, "the mixture has no state map");
        CHECK(attn_nt_census_compute(&c, ATTN_NT, 16, 8) == ATTN_ERR_ARG, "16^9 states refused");
    }
    CHECK(attn_nt_from_name("ntr") == ATTN_NT_R && attn_nt_from_name("mix") == ATTN_NT_MIX && attn_nt_from_name("x") == -1 &&
          !strcmp(attn_nt_name(ATTN_NT_S), "nts"), "task names");
}

/* The HYLA paper's fuzzy logic: L 4, K 2, unseen-term fraction 0.25: 16 terms, 66 + 6 combinations; held out
   19 / 33 / 46 of them at 0.3 / 0.5 / 0.7; the unseen terms are 12-15 (x1, x2 un-negated). */
static void test_fuzzy(void)
{
    static const double frac[3] = {0.3, 0.5, 0.7};
    static const int held[3] = {19, 33, 46};
    attn_fuzzy f;
    attn_rng r;
    int i, k, j;
    for (i = 0; i < 3; i++) {
        int seen[16][16] = {{0}}, dup = 0, bad = 0;
        CHECK(attn_fuzzy_init(&f, 4, 2, 32, frac[i], 0.25, 7) == ATTN_OK, "fuzzy init: %s", attn_last_error());
        CHECK(f.nterms == 16 && f.num_ood == 4 && f.count[ATTN_FUZZY_HELDOUT] == held[i] && f.count[ATTN_FUZZY_TRAIN] == 66 - held[i] &&
                  f.count[ATTN_FUZZY_UNSEEN] == 6,
              "fuzzy split at %.1f: held out %d, train %d, unseen %d (want %d, %d, 6)", frac[i], f.count[ATTN_FUZZY_HELDOUT], f.count[ATTN_FUZZY_TRAIN],
              f.count[ATTN_FUZZY_UNSEEN], held[i], 66 - held[i]);
        for (k = 0; k < 2; k++) /* train and held out: every pair of the 12 seen terms once */
            for (j = 0; j < f.count[k]; j++) {
                const int *c = f.combos[k] + 2 * j;
                bad += !(c[0] < c[1] && c[1] < 12);
                if (c[1] < 12) dup += seen[c[0]][c[1]]++ > 0;
            }
        for (j = 0; j < 6; j++) bad += !(f.combos[ATTN_FUZZY_UNSEEN][2 * j] >= 12 && f.combos[ATTN_FUZZY_UNSEEN][2 * j] < f.combos[ATTN_FUZZY_UNSEEN][2 * j + 1]);
        CHECK(!bad && !dup, "fuzzy split at %.1f: %d malformed and %d repeated combinations", frac[i], bad, dup);
        attn_fuzzy_free(&f);
    }
    {   /* another seed holds out another set; the values; a batch */
        attn_fuzzy g;
        attn_float x[2] = {(attn_float)0.2, (attn_float)0.7}, *tok, y[64], var[64], pred[64];
        int terms[2] = {3, 0}, combo[64], differ = 0, t, bad;
        double v;
        attn_fuzzy_init(&f, 4, 2, 32, 0.7, 0.25, 7);
        attn_fuzzy_init(&g, 4, 2, 32, 0.7, 0.25, 8);
        for (j = 0; j < 46; j++) differ |= memcmp(f.combos[ATTN_FUZZY_HELDOUT] + 2 * j, g.combos[ATTN_FUZZY_HELDOUT] + 2 * j, 2 * sizeof(int)) != 0;
        CHECK(differ, "seeds 7 and 8 hold out the same combinations");
        attn_fuzzy_free(&g);
        attn_fuzzy_init(&g, 2, 2, 4, 0.5, 0, 1);
        v = attn_fuzzy_value(&g, terms, x); /* max(min(x1, x2), min(1 - x1, 1 - x2)) = max(0.2, 0.3) */
        CHECK(fabs(v - 0.3) < 1e-6, "fuzzy value of terms {x1 x2, !x1 !x2} at (0.2, 0.7): %g, expected 0.3", v);
        attn_fuzzy_free(&g);
        tok = t_alloc(64 * 32 * 5);
        attn_rng_seed(&r, 5, 0);
        CHECK(attn_fuzzy_batch(&f, ATTN_FUZZY_HELDOUT, 64, tok, y, var, combo, &r) == ATTN_OK, "fuzzy batch: %s", attn_last_error());
        bad = 0;
        for (j = 0; j < 64; j++) {
            const attn_float *s = tok + (size_t)j * 32 * 5;
            double m = 0, vv = 0, q;
            for (t = 0; t < 32; t++) {
                q = t < 31 ? s[t * 5 + 4] : y[j];
                bad += t < 31 && fabs(q - attn_fuzzy_value(&f, f.combos[ATTN_FUZZY_HELDOUT] + 2 * combo[j], s + t * 5)) > 1e-6;
                m += q / 32;
            }
            for (t = 0; t < 32; t++) { q = t < 31 ? s[t * 5 + 4] : y[j]; vv += (q - m) * (q - m) / 32; }
            bad += s[31 * 5 + 4] != 0 || fabs(y[j] - attn_fuzzy_value(&f, f.combos[ATTN_FUZZY_HELDOUT] + 2 * combo[j], s + 31 * 5)) > 1e-6 ||
                   fabs(vv - var[j]) > 1e-5 || combo[j] < 0 || combo[j] >= 46;
            pred[j] = y[j];
        }
        CHECK(!bad, "fuzzy batch: %d tasks with a wrong token, target, variance or combination", bad);
        CHECK(fabs(attn_fuzzy_r2(pred, y, var, 64) - 1) < 1e-12, "R^2 of exact predictions is 1");
        free(tok);
        attn_fuzzy_free(&f);
    }
    CHECK(attn_fuzzy_init(&f, 4, 2, 32, 0, 0.25, 1) == ATTN_ERR_ARG, "held-out fraction 0 refused");
    CHECK(attn_fuzzy_init(&f, 4, 2, 32, 1, 0.25, 1) == ATTN_ERR_ARG, "held-out fraction 1 refused");
    CHECK(attn_fuzzy_init(&f, 4, 2, 32, 0.5, 1, 1) == ATTN_ERR_ARG, "unseen-term fraction 1 refused");
    CHECK(attn_fuzzy_init(&f, 2, 4, 32, 0.5, 0, 1) == ATTN_ERR_ARG, "a split with no training combination refused");
    CHECK(attn_fuzzy_init(&f, 0, 2, 32, 0.5, 0, 1) == ATTN_ERR_ARG, "L = 0 refused");
}

/* The HYLA paper's SRAVEN: 330 latents, 82 held out; every grid follows its rules; 36 tokens of width 8 with
   the queries at 32..35; the ambiguity checker on a constructed case and over F (Table A2). */
static void test_sraven(void)
{
    attn_sraven s;
    attn_rng r;
    int i, k, bad = 0, panels[36], rules[8] = {0}, dup = 0;
    attn_float *x;
    int targets[16 * 4], lat[16];
    CHECK(attn_sraven_init(&s, 4, 8, 0.25, 0, 3) == ATTN_OK, "sraven init: %s", attn_last_error());
    CHECK(s.nlatent == 330 && s.nood == 82, "sraven: %d latents, %d held out (want 330, 82)", s.nlatent, s.nood);
    for (i = 0; i < s.nlatent; i++) {
        for (k = 0; k < 4; k++) { bad += s.latent[i * 4 + k] >= 8 || (k && s.latent[i * 4 + k] < s.latent[i * 4 + k - 1]); rules[s.latent[i * 4 + k]]++; }
        for (k = 0; k < i; k++) dup += !memcmp(s.latent + i * 4, s.latent + k * 4, 4);
    }
    CHECK(!bad && !dup && rules[0] && rules[7], "sraven latents: %d malformed, %d repeated", bad, dup);
    attn_rng_seed(&r, 9, 0);
    for (i = 0; i < 400; i++) { /* unpermuted: feature k follows rule latent[k] in every row */
        int li = i % s.nlatent;
        attn_sraven_panels(&s, li, panels, &r);
        for (k = 0; k < 4; k++) {
            int rule = s.latent[li * 4 + k], row, g[9], c;
            for (c = 0; c < 9; c++) g[c] = panels[c * 4 + k];
            for (row = 0; row < 3; row++) {
                int *v = g + 3 * row, d1 = (v[1] - v[0] + 8) % 8, d2 = (v[2] - v[1] + 8) % 8;
                static const int step[5] = {0, 1, 2, 7, 6};
                if (rule <= 4) bad += d1 != step[rule] || d2 != step[rule];
                else if (rule == 5) bad += v[2] != (v[0] + v[1]) % 8;
                else if (rule == 6) bad += v[2] != (v[0] - v[1] + 8) % 8;
                else bad += (1 << v[0] | 1 << v[1] | 1 << v[2]) != (1 << g[0] | 1 << g[1] | 1 << g[2]) || v[0] == v[1] || v[1] == v[2] || v[0] == v[2];
            }
        }
    }
    CHECK(!bad, "sraven: %d rows break their rule", bad);
    attn_sraven_free(&s);
    attn_sraven_init(&s, 4, 8, 0.25, 1, 3);
    x = t_alloc(16 * 36 * 8);
    CHECK(attn_sraven_batch(&s, 1, 16, x, targets, lat, &r) == ATTN_OK, "sraven batch: %s", attn_last_error());
    for (i = 0; i < 16; i++) {
        int t, ones = 0;
        for (t = 0; t < 36 * 8; t++) ones += x[i * 36 * 8 + t] == 1;
        for (t = 32 * 8; t < 36 * 8; t++) bad += x[i * 36 * 8 + t] != 0;
        bad += ones != 32 || lat[i] >= s.nood;
        for (k = 0; k < 4; k++) bad += targets[i * 4 + k] < 0 || targets[i * 4 + k] >= 8;
    }
    CHECK(!bad, "sraven batch: %d malformed instances (32 one-hot context tokens, 4 zero queries, OOD latents)", bad);
    free(x);
    {   /* an instance that is ambiguous by construction: feature 2's rows (5, 4, 1), (0, 0, 0) fit both
           addition and subtraction mod 8, and row 2's (3, 1) then predicts 4 or 2 */
        static const int grid[4][9] = {{4, 4, 4, 6, 6, 6, 7, 7, 7}, {3, 5, 0, 0, 5, 5, 6, 1, 7}, {5, 4, 1, 0, 0, 0, 3, 1, 4}, {4, 2, 2, 4, 3, 1, 2, 0, 2}};
        int c;
        for (k = 0; k < 4; k++)
            for (c = 0; c < 9; c++) panels[c * 4 + k] = grid[k][c];
        CHECK(attn_sraven_ambiguous(&s, panels, 0) == 1, "sraven: the addition/subtraction coincidence is not flagged as ambiguous");
        CHECK(attn_sraven_ambiguous(&s, panels, 1) == 0, "sraven: one ambiguous feature of four is not ambiguous by every feature");
        for (k = 0; k < 4; k++) /* every feature the same coincidence: ambiguous by both definitions */
            for (c = 0; c < 9; c++) panels[c * 4 + k] = grid[2][c];
        CHECK(attn_sraven_ambiguous(&s, panels, 0) == 1 && attn_sraven_ambiguous(&s, panels, 1) == 1,
              "sraven: four ambiguous features are ambiguous by both definitions");
    }
    {   /* Table A2's Monte-Carlo estimate: by the paper's definition (another assignment of rules and
           feature orders fits every context panel and gives another answer) our instances are far more
           often ambiguous than Table A2 says (the README discusses it); the fraction falls with F */
        static const int F[3] = {4, 8, 16};
        double frac[3];
        int f, subset = 1;
        for (f = 0; f < 3; f++) {
            int amb = 0, every = 0;
            attn_sraven t;
            attn_sraven_init(&t, 4, F[f], 0.25, 1, 4);
            for (i = 0; i < 4096; i++) {
                int a0, a1;
                attn_sraven_panels(&t, (int)attn_rng_int(&r, (uint32_t)t.nlatent), panels, &r);
                amb += a0 = attn_sraven_ambiguous(&t, panels, 0);
                every += a1 = attn_sraven_ambiguous(&t, panels, 1);
                subset &= a1 <= a0;
            }
            frac[f] = amb / 4096.0;
            printf("  sraven ambiguity, K 4, F %d: %.4f (some feature), %.4f (every feature) of 4096 instances (Table A2: %s)\n",
                   F[f], frac[f], every / 4096.0, f == 0 ? "0.0642 +- 0.0038" : f == 1 ? "0.0032 +- 0.0009" : "0.0005 +- 0.0003");
            attn_sraven_free(&t);
        }
        CHECK(subset, "sraven: an instance ambiguous in every feature is ambiguous in some feature");
        CHECK(frac[0] > frac[1] && frac[1] > frac[2] && frac[2] > 0, "sraven ambiguity should fall with F: %.4f, %.4f, %.4f", frac[0], frac[1], frac[2]);
    }
    CHECK(attn_sraven_init(&s, 4, 8, 1, 1, 3) == ATTN_ERR_ARG, "frac_ood 1 refused");
    CHECK(attn_sraven_init(&s, 0, 8, 0.25, 1, 3) == ATTN_ERR_ARG, "K = 0 refused");
    CHECK(attn_sraven_init(&s, 4, 2, 0.25, 1, 3) == ATTN_ERR_ARG, "F = 2 refused");
    attn_sraven_free(&s);
}

/* The digit-string task: the layout of src, tgt_in and tgt_out, reversal and sorting, the
   held-out split by hash (checked with an FNV-1a written here), and the exact-match metric. */
static void test_digits(void)
{
    int src[64 * 9], ti[64 * 9], to[64 * 9], task, test, b, i, ok = 1, split = 1;
    attn_rng r;
    attn_rng_seed(&r, 41, 0);
    for (task = 0; task < 2; task++)
        for (test = 0; test < 2; test++) {
            CHECK(attn_digits_batch((attn_digits_task)task, 2, 8, test, 64, src, ti, to, &r) == ATTN_OK, "digits: %s", attn_last_error());
            for (b = 0; b < 64; b++) {
                const int *s = src + b * 9, *x = ti + b * 9, *y = to + b * 9;
                int L = 0, cnt[10] = {0}, k;
                uint64_t h = 14695981039346656037ull;
                while (L < 9 && s[L] >= ATTN_DIGITS_0) { cnt[s[L] - ATTN_DIGITS_0]++; h = (h ^ (uint64_t)('0' + s[L] - ATTN_DIGITS_0)) * 1099511628211ull; L++; }
                ok &= L >= 2 && L <= 8 && s[L] == ATTN_DIGITS_EOS && y[L] == ATTN_DIGITS_EOS && x[0] == ATTN_DIGITS_BOS;
                for (i = L + 1; i < 9; i++) ok &= s[i] == ATTN_DIGITS_PAD && y[i] == -1 && x[i] == ATTN_DIGITS_PAD;
                for (i = 0; i < L; i++) ok &= x[i + 1] == y[i] && (task == ATTN_DIGITS_REVERSE ? y[i] == s[L - 1 - i] : i == 0 || y[i] >= y[i - 1]);
                for (i = 0; task == ATTN_DIGITS_SORT && i < L; i++) cnt[y[i] - ATTN_DIGITS_0]--;
                for (k = 0; k < 10; k++) ok &= cnt[k] == 0 || task == ATTN_DIGITS_REVERSE;
                split &= (h % 10 == 0) == (test == 1);
            }
        }
    CHECK(ok, "digit strings: the layout, the reversal and the sort");
    CHECK(split, "digit strings: held-out strings are exactly those whose FNV-1a hash is 0 mod 10");
    {
        int good[2 * 4] = {5, 4, ATTN_DIGITS_EOS, -1, 5, 4, 3, ATTN_DIGITS_EOS}, out[2 * 5] = {5, 4, ATTN_DIGITS_EOS, -1, -1, 5, 4, ATTN_DIGITS_EOS, -1, -1};
        CHECK(attn_digits_exact(out, 5, good, 4, 2) == 0.5, "exact match: one of two rows (%g)", attn_digits_exact(out, 5, good, 4, 2));
        out[7] = 3;
        CHECK(attn_digits_exact(out, 5, good, 4, 2) == 0.5, "exact match needs EOS where the target has it (%g)", attn_digits_exact(out, 5, good, 4, 2));
        out[8] = ATTN_DIGITS_EOS;
        CHECK(attn_digits_exact(out, 5, good, 4, 2) == 1, "exact match: both rows (%g)", attn_digits_exact(out, 5, good, 4, 2));
    }
    CHECK(attn_digits_batch(ATTN_DIGITS_REVERSE, 1, 1, 1, 4, src, ti, to, &r) == ATTN_OK && src[0] == ATTN_DIGITS_0 + 3 && src[6] == ATTN_DIGITS_0 + 3,
          "the one held-out one-digit string is 3 (FNV-1a of '3' is 0 mod 10)");
    CHECK(attn_digits_batch(ATTN_DIGITS_REVERSE, 3, 2, 0, 4, src, ti, to, &r) == ATTN_ERR_ARG, "min_len > max_len refused");
}

void test_tasks(void)
{
    test_digits();
    test_nt_census();
    test_nt_series();
    test_nt_mixture_and_input();
    test_fuzzy();
    test_sraven();
}
