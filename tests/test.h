/* test.h - the few helpers every test file shares. */
#ifndef ATTN_TEST_H
#define ATTN_TEST_H
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../attn.h"

extern int t_pass, t_fail;

/* One check: counts it, and on failure prints where and why (printf-style message). */
#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (cond) t_pass++;                                                  \
        else {                                                               \
            t_fail++;                                                        \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                      \
            printf(__VA_ARGS__);                                             \
            printf("\n");                                                    \
        }                                                                    \
    } while (0)

/* Working precision of this build: eps of attn_float. */
#define T_EPS ((double)(sizeof(attn_float) == 8 ? DBL_EPSILON : FLT_EPSILON))
#define T_DOUBLE (sizeof(attn_float) == 8)

/* NaN test on the bits, which -ffast-math cannot fold away as it does isnan(). */
static inline int t_isnan(attn_float x)
{
    unsigned char b[sizeof x];
    memcpy(b, &x, sizeof x);
    if (sizeof x == 4) {
        uint32_t u;
        memcpy(&u, b, 4);
        return (u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu);
    } else {
        uint64_t u;
        memcpy(&u, b, 8);
        return (u & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (u & 0x000fffffffffffffull);
    }
}

/* n values drawn from Normal(0, std) */
void t_randn(attn_float *x, size_t n, attn_rng *r, double std);
attn_float *t_alloc(size_t n); /* zeroed; the test exits if memory runs out */
/* The largest |a_i - b_i| over n values; infinity if one is NaN. (A function, not a loop in each
   test: aarch64 gcc 12's vectoriser crashed on an fmax reduction inlined into a long test.) */
double t_max_diff(const attn_float *a, const attn_float *b, size_t n);
/* Whether a and b have the same tensors (count, shapes) with bitwise equal values; the alignment
   padding between them is not compared (a checkpoint does not hold it). */
int t_params_equal(const attn_params *a, const attn_params *b);

/* The naive references' linear map: out [n] = W [n, k] x [k] + b (b may be NULL), in double. */
void t_linear(double *out, const attn_float *W, const attn_float *b, const double *x, int n, int k);

/* Finite-difference check of a backward pass. The loss is L = sum_k w_k out_k with fixed random w,
   so dout = w. `fwd` recomputes `out` from the inputs in ctx; `bwd` accumulates the gradients for
   dout = w into the vars' g buffers, which t_gradcheck pre-fills with 0.25 to check that the
   backward pass accumulates rather than overwrites. Each var's x is perturbed by +-h. */
typedef struct {
    const char *name;
    attn_float *x, *g;
    size_t n;
} t_var;
void t_gradcheck(const char *what, void (*fwd)(void *), void (*bwd)(void *, const attn_float *),
                 void *ctx, attn_float *out, size_t nout, t_var *vars, int nvars);

void test_core(void);
void test_gemm(void);
void test_ops(void);
void test_optim(void);
void test_errors(void);
void test_faults(void);
void test_badinput(void);
void test_hardening(void);
void test_attention(void);
void test_golden(void);
void test_tasks(void);
void test_models(void);
void test_seq2seq(void);
#endif
