/* Task generators against the exact test vectors of SPEC §6.1: the NT-family cycle censuses and
   example series, the mixture's rule draws, bad input. */
#include "test.h"

/* One census row of SPEC §6.1: task, N, tau, then "multiplicity x length" terms, longest first. */
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
              "census %s N%dT%d: got \"%s\" + %ld transient, SPEC has \"%s\" + %ld", attn_nt_name(cc->task), cc->N, cc->tau, got,
              c.transient, cc->census, cc->transient);
    }
    { /* the paper's mean cycle lengths: 47.6 (N16T2) and 23.8 (N16T2-S), unweighted over cycles */
        attn_nt_census a, b;
        attn_nt_census_compute(&a, ATTN_NT, 16, 2);
        attn_nt_census_compute(&b, ATTN_NT_S, 16, 2);
        CHECK(a.cycles == 86 && fabs((double)a.cycle_states / a.cycles - 47.63) < 0.005 && b.cycles == 172 &&
              fabs((double)b.cycle_states / b.cycles - 23.81) < 0.005, "mean cycle lengths %.2f / %.2f (SPEC 47.63 / 23.81)",
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

void test_tasks(void)
{
    test_nt_census();
    test_nt_series();
    test_nt_mixture_and_input();
}
