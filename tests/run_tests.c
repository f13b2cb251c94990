/* The test runner: one binary per build flavour (float, double, scalar, -ffast-math, sanitizers). */
#define ATTN_IMPLEMENTATION
#include "test.h"

int t_pass = 0, t_fail = 0;

void t_randn(attn_float *x, size_t n, attn_rng *r, double std)
{
    size_t i;
    for (i = 0; i < n; i++) x[i] = (attn_float)attn_rng_normal(r, 0, std);
}

attn_float *t_alloc(size_t n)
{
    attn_float *p = (attn_float *)calloc(n ? n : 1, sizeof(attn_float));
    if (!p) {
        printf("out of memory allocating %lu floats\n", (unsigned long)n);
        exit(2);
    }
    return p;
}

double t_max_diff(const attn_float *a, const attn_float *b, size_t n)
{
    double m = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (t_isnan(a[i]) || t_isnan(b[i])) return INFINITY;
        if (d > m) m = d;
    }
    return m;
}

int t_params_equal(const attn_params *a, const attn_params *b)
{
    int k;
    if (a->count != b->count) return 0;
    for (k = 0; k < a->count; k++) {
        size_t n = attn_tensor_numel(&a->value[k]);
        if (n != attn_tensor_numel(&b->value[k]) || memcmp(a->value[k].data, b->value[k].data, n * sizeof(attn_float)) != 0) return 0;
    }
    return 1;
}

void t_linear(double *out, const attn_float *W, const attn_float *b, const double *x, int n, int k)
{
    int i, j;
    for (i = 0; i < n; i++) {
        out[i] = b ? b[i] : 0;
        for (j = 0; j < k; j++) out[i] += W[(size_t)i * k + j] * x[j];
    }
}

static double t_loss(const attn_float *out, const attn_float *w, size_t n)
{
    double s = 0;
    size_t k;
    for (k = 0; k < n; k++) s += (double)w[k] * out[k];
    return s;
}

/* Step and tolerance: in double, h = 1e-6 leaves O(h^2) ~ 1e-12 truncation and O(eps / h) ~ 1e-10
   rounding, so 1e-6 is tight. In float, h = 1e-2 balances O(h^2) ~ 1e-4 truncation against
   O(eps / h) ~ 1e-5 rounding (times the size of the loss), so 1e-2 is what float can promise.
   The error measure is |fd - analytic| / max(1, |fd| + |analytic|). */
void t_gradcheck(const char *what, void (*fwd)(void *), void (*bwd)(void *, const attn_float *),
                 void *ctx, attn_float *out, size_t nout, t_var *vars, int nvars)
{
    double h = T_DOUBLE ? 1e-6 : 1e-2, tol = T_DOUBLE ? 1e-6 : 1e-2;
    attn_float *w = t_alloc(nout);
    attn_rng r;
    int v;
    size_t i;
    attn_rng_seed(&r, 99, 7);
    t_randn(w, nout, &r, 1.0);
    for (v = 0; v < nvars; v++)
        for (i = 0; i < vars[v].n; i++) vars[v].g[i] = 0.25;
    fwd(ctx);
    bwd(ctx, w);
    for (v = 0; v < nvars; v++) {
        double worst = 0, wfd = 0, wan = 0;
        size_t wi = 0;
        for (i = 0; i < vars[v].n; i++) {
            attn_float keep = vars[v].x[i];
            double lp, lm, fd, an = (double)vars[v].g[i] - 0.25, err;
            vars[v].x[i] = (attn_float)(keep + h);
            fwd(ctx);
            lp = t_loss(out, w, nout);
            vars[v].x[i] = (attn_float)(keep - h);
            fwd(ctx);
            lm = t_loss(out, w, nout);
            vars[v].x[i] = keep;
            fd = (lp - lm) / (2 * h);
            err = fabs(fd - an) / fmax(1.0, fabs(fd) + fabs(an));
            if (err > worst) { worst = err; wi = i; wfd = fd; wan = an; }
        }
        CHECK(worst <= tol, "%s: d/d%s[%lu]: finite difference %.9g, backward %.9g (error %.2e > %.0e)",
              what, vars[v].name, (unsigned long)wi, wfd, wan, worst, tol);
    }
    fwd(ctx);
    free(w);
}

/* run_tests [GROUP ...]: every group, or the named ones (core, gemm, ..., hardening). */
int main(int argc, char **argv)
{
    static const struct { const char *name; void (*fn)(void); } groups[] = {
        {"core", test_core}, {"gemm", test_gemm}, {"ops", test_ops}, {"optim", test_optim},
        {"attention", test_attention}, {"golden", test_golden}, {"tasks", test_tasks},
        {"models", test_models}, {"seq2seq", test_seq2seq}, {"errors", test_errors},
        {"faults", test_faults}, {"badinput", test_badinput}, {"hardening", test_hardening}};
    int g, a;
    printf("attn.h %s tests: attn_float = %s, SIMD %s, %d thread(s)\n", ATTN_VERSION_STRING,
           T_DOUBLE ? "double" : "float", attn_simd_name(), attn_get_threads());
    for (a = 1; a < argc; a++) {
        for (g = 0; g < (int)(sizeof groups / sizeof groups[0]) && strcmp(groups[g].name, argv[a]); g++) {}
        if (g == (int)(sizeof groups / sizeof groups[0])) {
            printf("run_tests: no group %s\n", argv[a]);
            return 2;
        }
    }
    for (g = 0; g < (int)(sizeof groups / sizeof groups[0]); g++) {
        int want = argc == 1;
        for (a = 1; a < argc; a++) want = want || !strcmp(groups[g].name, argv[a]);
        if (want) groups[g].fn();
    }
    printf("%d passed, %d failed\n", t_pass, t_fail);
    return t_fail ? 1 : 0;
}
