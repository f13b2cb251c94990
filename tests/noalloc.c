/* After warm-up nothing allocates: a transformer's training steps (forward, backward, AdamW) and
   decoding with the key-value cache run with an allocator that refuses every call, and give the
   same bits as with one that does not (tests/run.sh builds and runs this). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int refuse = 0;
static long calls = 0;
static void *counted_malloc(size_t n) { calls++; return refuse ? NULL : malloc(n); }
#define ATTN_MALLOC(n) counted_malloc(n)
#define ATTN_FREE(p) free(p)
#define ATTN_IMPLEMENTATION
#include "../attn.h"

enum { B = 4, T = 16, V = 11 };

/* Trains `steps` steps, then decodes T tokens; refuse becomes 1 after `warm` steps and one decode. */
static int run(int warm, int steps, attn_float *params, attn_float *logits, long *after)
{
    attn_transformer_config c = attn_transformer_config_default();
    attn_transformer m;
    attn_transformer_kv kv;
    attn_optim opt;
    attn_rng r;
    int x[B * T], y[B * T], i, s;
    attn_float out[B * T * V], probs[B * T * V], dl[B * T * V], nll[B * T], *cache;
    void *work, *kvmem, *dw;
    size_t wb, kb, db;
    c.vocab = c.out = V; c.d = 48; c.layers = 2; c.heads = 4; c.dk = c.dv = 12; c.mlp = 96; c.max_T = T;
    c.kinds[0] = ATTN_SOFTMAX; c.kinds[1] = ATTN_COG; c.pos = ATTN_POS_ROPE; c.t5 = 1;
    refuse = 0;
    attn_rng_seed(&r, 3, 0);
    if (attn_transformer_init(&m, &c, &r) != ATTN_OK || attn_optim_adamw(&opt, &m.p, 0.9, 0.95, 1e-8, 0.1) != ATTN_OK)
        return 0;
    cache = (attn_float *)malloc(sizeof(attn_float) * attn_transformer_cache_floats(&m, B, T));
    work = malloc(wb = attn_transformer_work_bytes(&m, B, T));
    kvmem = malloc(kb = attn_transformer_kv_bytes(&m, T));
    dw = malloc(db = attn_transformer_decode_work_bytes(&m, 1, T));
    if (!cache || !work || !kvmem || !dw || attn_transformer_kv_init(&kv, &m, T, kvmem, kb) != ATTN_OK) return 0;
    for (s = 0; s < steps; s++) {
        if (s == warm) {
            if (attn_transformer_decode(&m, &kv, logits, x, 1, dw, db) != ATTN_OK) return 0;
            kv.len = 0;
            refuse = 1;
            *after = calls;
        }
        for (i = 0; i < B * T; i++) x[i] = (int)attn_rng_int(&r, V), y[i] = i % T ? x[i - 1] : -1;
        if (attn_transformer_forward(&m, out, cache, x, NULL, B, T, work, wb) != ATTN_OK ||
            attn_cross_entropy_forward(nll, probs, out, y, B * T, V) != ATTN_OK)
            return 0;
        memset(dl, 0, sizeof dl);
        attn_cross_entropy_backward(dl, NULL, (attn_float)1 / (B * T), probs, y, B * T, V);
        attn_params_zero_grad(&m.p);
        if (attn_transformer_backward(&m, dl, cache, x, NULL, B, T, work, wb) != ATTN_OK ||
            attn_optim_step(&opt, &m.p, 1e-3) != ATTN_OK)
            return 0;
    }
    for (i = 0; i < T; i++)
        if (attn_transformer_decode(&m, &kv, logits + i * V, x + i, 1, dw, db) != ATTN_OK) return 0;
    *after = calls - *after;
    memcpy(params, m.p.data, sizeof(attn_float) * m.p.total);
    refuse = 0;
    free(cache); free(work); free(kvmem); free(dw);
    attn_optim_free(&opt);
    i = (int)m.p.total;
    attn_transformer_free(&m);
    return i;
}

int main(void)
{
    static attn_float p1[1 << 17], p2[1 << 17], l1[T * V], l2[T * V];
    long a1 = 0, a2 = 0;
    int n1 = run(1, 4, p1, l1, &a1), n2;
    attn_gemm_release(); /* the second run starts cold: its first step must allocate again */
    n2 = run(1, 4, p2, l2, &a2);
    if (!n1 || n1 != n2) { printf("noalloc: a run failed: %s\n", attn_last_error()); return 1; }
    printf("noalloc: %ld and %ld allocation calls after warm-up; %s\n", a1, a2,
           memcmp(p1, p2, sizeof(attn_float) * n1) || memcmp(l1, l2, sizeof l1) ? "the runs differ" : "the same bits");
    return a1 || a2 || memcmp(p1, p2, sizeof(attn_float) * n1) || memcmp(l1, l2, sizeof l1);
}
