/* e5_mechanism: why EA fails E5 with q and k from LN(x) (docs/expressive-attention.md). With d = 2 and
   an LN without affine parameters, a one-hot token becomes +-(1, -1), so q_c = Wq[c] LN(x_c) and k_c
   are a fixed vector times the token's sign, every score s = sigma_m sigma_k (a_m . b_k) only changes
   sign with the input, and EA's weights g = s^2 / (1 + s^2) are even in s: its attention matrix
   cannot depend on the input. Softmax's can. This measures both over random inputs and random
   position-specific weights (the cisformer's, N(0, 1/fan_in)), as the spread of each weight across
   inputs: the largest over the matrix, averaged over weight draws.

     cc -O2 tools/e5_mechanism.c -o build/e5_mechanism -lm && build/e5_mechanism [inputs] [draws] */
#define ATTN_IMPLEMENTATION
#include "../attn.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { D = 2, T = 16 };

/* The largest spread (max - min) of any weight A[m, k] over n random inputs, for one weight draw. */
static double spread(attn_kind kind, const attn_float *Wq, const attn_float *Wk, int n, attn_rng *r)
{
    attn_attention_desc d;
    attn_float q[T * D], k[T * D], v[T * D], o[T * D], st[T], A[T * T], lo[T * T], hi[T * T], x[D], xt[D];
    size_t wb;
    void *work;
    double worst = 0;
    int s, c, i, e;
    memset(&d, 0, sizeof d);
    d.kind = kind; d.B = d.H = 1; d.Tq = d.Tk = T; d.dk = d.dv = D; d.causal = 1; d.scale = 1;
    wb = attn_attention_workspace(&d);
    if (!(work = malloc(wb))) return -1;
    for (i = 0; i < T * T; i++) lo[i] = 1e30f, hi[i] = -1e30f;
    for (s = 0; s < n; s++) {
        for (c = 0; c < T; c++) { /* a random token at each position: q, k, v from LN(x) */
            attn_float mu, rs;
            x[0] = (attn_float)(attn_rng_int(r, 2) == 0);
            x[1] = 1 - x[0];
            attn_layernorm_forward(xt, &mu, &rs, x, NULL, NULL, 1, D, (attn_float)1e-5, ATTN_LN_EPS_INSIDE);
            for (e = 0; e < D; e++) {
                q[c * D + e] = Wq[(c * D + e) * D] * xt[0] + Wq[(c * D + e) * D + 1] * xt[1];
                k[c * D + e] = Wk[(c * D + e) * D] * xt[0] + Wk[(c * D + e) * D + 1] * xt[1];
                v[c * D + e] = xt[e];
            }
        }
        if (attn_attention_forward(&d, o, st, A, q, k, v, work, wb) != ATTN_OK) {
            fprintf(stderr, "e5_mechanism: %s\n", attn_last_error());
            exit(1);
        }
        for (i = 0; i < T * T; i++) lo[i] = A[i] < lo[i] ? A[i] : lo[i], hi[i] = A[i] > hi[i] ? A[i] : hi[i];
    }
    for (i = 0; i < T * T; i++) worst = hi[i] - lo[i] > worst ? hi[i] - lo[i] : worst;
    free(work);
    return worst;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000, draws = argc > 2 ? atoi(argv[2]) : 20, t, i;
    static const attn_kind kinds[2] = {ATTN_EXPRESSIVE, ATTN_SOFTMAX};
    attn_float Wq[T * D * D], Wk[T * D * D];
    attn_rng r;
    if (n < 2 || draws < 1) {
        fprintf(stderr, "usage: e5_mechanism [inputs >= 2] [weight draws >= 1]\n");
        return 2;
    }
    printf("E5 (d = 2, a window of %d, q and k from LN(x)): the largest spread of an attention weight over %d random\n"
           "inputs, mean (and largest) over %d draws of the position-specific weights:\n", T, n, draws);
    for (t = 0; t < 2; t++) {
        double sum = 0, top = 0;
        attn_rng_seed(&r, 1, 0);
        for (i = 0; i < draws; i++) {
            double sp;
            int j;
            for (j = 0; j < T * D * D; j++) Wq[j] = (attn_float)attn_rng_normal(&r, 0, sqrt(1.0 / D));
            for (j = 0; j < T * D * D; j++) Wk[j] = (attn_float)attn_rng_normal(&r, 0, sqrt(1.0 / D));
            sp = spread(kinds[t], Wq, Wk, n, &r);
            sum += sp;
            top = sp > top ? sp : top;
        }
        printf("  %-8s %.3g (%.3g)\n", attn_kind_get(kinds[t])->name, sum / draws, top);
    }
    return 0;
}
