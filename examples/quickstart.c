/* quickstart: fit a linear layer to a linear target with AdamW, the 30-second tour of attn.h.
   Usage: quickstart [--steps N] [--help] */
#define ATTN_IMPLEMENTATION
#include "../attn.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 32, C = 8, OC = 4 };

int main(int argc, char **argv)
{
    attn_param_desc desc[2] = {{"W", 2, {OC, C}, -1, ATTN_PARAM_FAN_NORMAL, 0}, /* N(0, 1 / C) */
                               {"b", 1, {OC}, -1, ATTN_PARAM_ZERO, 0}};
    attn_params p;
    attn_rng rng;
    attn_schedule lr;
    attn_float x[N * C], target[N * OC], y[N * OC], dy[N * OC], loss = 0, *m, *v;
    long steps = 300, t;
    int i;
    for (i = 1; i < argc; i++) {
        char *end = NULL;
        if (!strcmp(argv[i], "--steps") && i + 1 < argc) {
            steps = strtol(argv[++i], &end, 10);
            if (*end || end == argv[i] || steps < 1 || steps > 100000000) {
                fprintf(stderr, "quickstart: --steps takes a whole number from 1 to 1e8, not '%s'\n", argv[i]);
                return 1;
            }
        } else {
            printf("usage: quickstart [--steps N]\n  fits y = x A^T with one linear layer and AdamW; prints the loss\n");
            return strcmp(argv[i], "--help") ? 1 : 0;
        }
    }
    if (attn_params_init(&p, desc, 2) != ATTN_OK) { fprintf(stderr, "%s\n", attn_last_error()); return 1; }
    m = (attn_float *)calloc(p.total, sizeof *m);
    v = (attn_float *)calloc(p.total, sizeof *v);
    attn_rng_seed(&rng, 42, 0);
    attn_params_draw(&p, desc, 2, &rng); /* each tensor as its description says */
    for (i = 0; i < N * C; i++) x[i] = (attn_float)attn_rng_normal(&rng, 0, 1);
    for (i = 0; i < N * OC; i++) /* the target: a fixed linear map of x */
        target[i] = attn_dot(C, x + (i / OC) * C, x + ((i % OC) * 7 % N) * C) / C;
    attn_schedule_warmup_cosine(&lr, 0, 0.05, 20, steps, 0.005);

    for (t = 0; t < steps; t++) {
        attn_linear_forward(y, x, p.value[0].data, p.value[1].data, N, C, OC); /* y = x W^T + b */
        attn_mse_forward(&loss, y, target, N * OC, ATTN_REDUCE_MEAN);
        memset(dy, 0, sizeof dy);
        attn_mse_backward(dy, y, target, N * OC, ATTN_REDUCE_MEAN, 1);
        attn_params_zero_grad(&p);
        attn_linear_backward(NULL, p.grad[0].data, p.grad[1].data, dy, x, p.value[0].data, N, C, OC);
        attn_adamw_step(&p, m, v, t + 1, (attn_float)attn_schedule_lr(&lr, t), 0.9f, 0.999f, 1e-8f, 0.0f);
        if (t % 100 == 0 || t == steps - 1) printf("step %4ld  lr %.4f  loss %.6f\n", t, attn_schedule_lr(&lr, t), (double)loss);
    }
    free(m);
    free(v);
    attn_params_free(&p);
    return loss < 1e-3 ? 0 : 1; /* the fit must succeed: this is also a test */
}
