/* quickstart: the 30-second tour of attn.h. One causal softmax attention head learns to copy each
   token's content from the token before it (a previous-token head; the first token copies itself):
   the projections q, k, v = x W^T are trained with AdamW through attn_attention_forward / _backward,
   and at the end the attention weights of the last row are printed.
   Usage: quickstart [--steps N] [--help] */
#define ATTN_IMPLEMENTATION
#include "../attn.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* B sequences of T tokens; a token is x = [its content (C numbers), its position (one-hot, T)] */
enum { B = 8, T = 12, C = 4, D = C + T, DK = 8 };

int main(int argc, char **argv)
{
    attn_param_desc desc[3] = {{"Wq", 2, {DK, D}, -1, ATTN_PARAM_FAN_NORMAL, 0},
                               {"Wk", 2, {DK, D}, -1, ATTN_PARAM_FAN_NORMAL, 0},
                               {"Wv", 2, {C, D}, -1, ATTN_PARAM_FAN_NORMAL, 0}};
    attn_attention_desc att;
    attn_params p;
    attn_rng rng;
    attn_schedule lr;
    static attn_float x[B * T * D], target[B * T * C], q[B * T * DK], k[B * T * DK], v[B * T * C];
    static attn_float o[B * T * C], st[B * T], w[B * T * T], dO[B * T * C], dq[B * T * DK], dk[B * T * DK],
        dv[B * T * C];
    attn_attention_grads g = {dq, dk, dv, NULL, NULL, NULL, NULL};
    attn_float loss = 0, *m, *s2;
    long steps = 400, step;
    int i, t, c;
    void *work;
    size_t wb;
    for (i = 1; i < argc; i++) {
        char *end = NULL;
        if (!strcmp(argv[i], "--steps") && i + 1 < argc) {
            steps = strtol(argv[++i], &end, 10);
            if (*end || end == argv[i] || steps < 1 || steps > 100000000) {
                fprintf(stderr, "quickstart: --steps takes a whole number from 1 to 1e8, not '%s'\n", argv[i]);
                return 1;
            }
        } else {
            printf("usage: quickstart [--steps N]\n  trains one causal softmax attention head to copy the previous "
                   "token's content;\n  prints the loss and the last row's attention weights\n");
            return strcmp(argv[i], "--help") ? 1 : 0;
        }
    }
    memset(&att, 0, sizeof att); /* B sequences, one head, T queries and keys, causal softmax */
    att.kind = ATTN_SOFTMAX; att.B = B; att.H = 1; att.Tq = att.Tk = T; att.dk = DK; att.dv = C; att.causal = 1;
    wb = attn_attention_workspace(&att);
    work = malloc(wb);
    if (!work || attn_params_init(&p, desc, 3) != ATTN_OK) { fprintf(stderr, "quickstart: %s\n", attn_last_error()); return 1; }
    m = (attn_float *)calloc(p.total, sizeof *m);
    s2 = (attn_float *)calloc(p.total, sizeof *s2);
    attn_rng_seed(&rng, 42, 0);
    attn_params_draw(&p, desc, 3, &rng); /* each tensor as its description says: N(0, 1 / D) */
    attn_schedule_warmup_cosine(&lr, 0, 0.05, 20, steps, 0.005);
    for (step = 0; step < steps; step++) {
        for (i = 0; i < B * T; i++) { /* fresh contents; the target: the previous token's */
            t = i % T;
            for (c = 0; c < D; c++) x[i * D + c] = c < C ? (attn_float)attn_rng_normal(&rng, 0, 1) : (attn_float)(c - C == t);
            for (c = 0; c < C; c++) target[i * C + c] = x[(t > 0 ? i - 1 : i) * D + c]; /* the first: its own */
        }
        attn_linear_forward(q, x, p.value[0].data, NULL, B * T, D, DK); /* q = x Wq^T */
        attn_linear_forward(k, x, p.value[1].data, NULL, B * T, D, DK);
        attn_linear_forward(v, x, p.value[2].data, NULL, B * T, D, C);
        if (attn_attention_forward(&att, o, st, w, q, k, v, work, wb) != ATTN_OK) break;
        attn_mse_forward(&loss, o, target, B * T * C, ATTN_REDUCE_MEAN);
        memset(dO, 0, sizeof dO); memset(dq, 0, sizeof dq); memset(dk, 0, sizeof dk); memset(dv, 0, sizeof dv);
        attn_mse_backward(dO, o, target, B * T * C, ATTN_REDUCE_MEAN, 1);
        if (attn_attention_backward(&att, &g, dO, q, k, v, o, st, work, wb) != ATTN_OK) break;
        attn_params_zero_grad(&p);
        attn_linear_backward(NULL, p.grad[0].data, NULL, dq, x, p.value[0].data, B * T, D, DK);
        attn_linear_backward(NULL, p.grad[1].data, NULL, dk, x, p.value[1].data, B * T, D, DK);
        attn_linear_backward(NULL, p.grad[2].data, NULL, dv, x, p.value[2].data, B * T, D, C);
        attn_adamw_step(&p, m, s2, step + 1, (attn_float)attn_schedule_lr(&lr, step), 0.9f, 0.999f, 1e-8f, 0.0f);
        if (step % 100 == 0 || step == steps - 1) printf("step %4ld  loss %.4f\n", step, (double)loss);
    }
    if (step < steps) fprintf(stderr, "quickstart: %s\n", attn_last_error());
    printf("the last token's attention over the %d tokens (it should look at token %d):\n", T, T - 2);
    for (t = 0; t < T; t++) printf(" %.2f", (double)w[(T - 1) * T + t]);
    printf("\n");
    free(m); free(s2); free(work);
    attn_params_free(&p);
    return step == steps && loss < 0.01 ? 0 : 1; /* the head must have learned: this is also a test */
}
