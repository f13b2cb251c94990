/* Nothing allocates after warm-up, and with the caller's memory nothing allocates at all: a
   transformer's training steps (forward, backward, AdamW) and decoding with the key-value cache run
   with an allocator that refuses every call (1) after the first step, and (2) from before
   attn_transformer_init_in, with the model, attn_gemm's packing buffer and the optimizer's moments
   in memory the program allocated first, on one thread (attn_gemm_scratch lends the calling
   thread's buffer; the library's worker threads keep their own); both give the same bits as a run
   whose allocator never refuses (tests/run.sh builds and runs this). */
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
enum { NEVER, AFTER_WARMUP, CALLER_MEMORY };

/* Trains `steps` steps, then decodes T tokens, refusing as `mode` says; the final parameters and
   logits, and in *refused the allocation calls made while refusing. Returns the parameter block's
   floats, 0 on failure. */
static int run(int mode, int steps, attn_float *params, attn_float *logits, long *refused)
{
    attn_transformer_config c = attn_transformer_config_default();
    attn_transformer m;
    attn_transformer_kv kv;
    attn_optim opt;
    attn_rng r;
    int x[B * T], y[B * T], i, s, n;
    attn_float out[B * T * V], probs[B * T * V], dl[B * T * V], nll[B * T], *cache, *mom = NULL, *vel = NULL;
    void *work, *kvmem, *dw, *mem = NULL, *scratch = NULL;
    size_t wb, kb, db, mb = 0, sb = attn_gemm_scratch_bytes(attn_get_threads());
    long before = 0;
    c.vocab = c.out = V; c.d = 48; c.layers = 2; c.heads = 4; c.dk = c.dv = 12; c.mlp = 96; c.max_T = T;
    c.kinds[0] = ATTN_SOFTMAX; c.kinds[1] = ATTN_COG; c.pos = ATTN_POS_ROPE; c.t5 = 1; c.window = 5;
    refuse = 0;
    attn_rng_seed(&r, 3, 0);
    if (mode == CALLER_MEMORY) { /* the program's own memory first (malloc, not the library's) */
        attn_set_threads(1); /* products inside the library's parallel regions use their threads' buffers */
        mem = malloc(mb = attn_transformer_bytes(&c));
        scratch = malloc(sb);
        refuse = 1;
        before = calls;
        if (!mem || !scratch || attn_transformer_init_in(&m, &c, &r, mem, mb) != ATTN_OK ||
            attn_gemm_scratch(scratch, sb) != ATTN_OK)
            return 0;
        mom = (attn_float *)calloc(m.p.total, sizeof(attn_float));
        vel = (attn_float *)calloc(m.p.total, sizeof(attn_float));
    } else if (attn_transformer_init(&m, &c, &r) != ATTN_OK || attn_optim_adamw(&opt, &m.p, 0.9, 0.95, 1e-8, 0.1)) {
        return 0;
    }
    cache = (attn_float *)malloc(sizeof(attn_float) * attn_transformer_cache_floats(&m, B, T));
    work = malloc(wb = attn_transformer_work_bytes(&m, B, T));
    kvmem = malloc(kb = attn_transformer_kv_bytes(&m, T));
    dw = malloc(db = attn_transformer_decode_work_bytes(&m, 1, T));
    if (!cache || !work || !kvmem || !dw || (mode == CALLER_MEMORY && (!mom || !vel)) ||
        attn_transformer_kv_init(&kv, &m, T, kvmem, kb) != ATTN_OK)
        return 0;
    for (s = 0; s < steps; s++) {
        if (s == 1) { /* after the first step, one decoded token: the warm-up */
            if (attn_transformer_decode(&m, &kv, logits, x, 1, dw, db) != ATTN_OK) return 0;
            kv.len = 0;
            if (mode == AFTER_WARMUP) {
                refuse = 1;
                before = calls;
            }
        }
        for (i = 0; i < B * T; i++) x[i] = (int)attn_rng_int(&r, V), y[i] = i % T ? x[i - 1] : -1;
        if (attn_transformer_forward(&m, out, cache, attn_transformer_cache_floats(&m, B, T), x, NULL, B, T, work, wb) != ATTN_OK ||
            attn_cross_entropy_forward(nll, probs, out, y, B * T, V) != ATTN_OK)
            return 0;
        memset(dl, 0, sizeof dl);
        attn_cross_entropy_backward(dl, NULL, (attn_float)1 / (B * T), probs, y, B * T, V);
        attn_params_zero_grad(&m.p);
        if (attn_transformer_backward(&m, dl, cache, attn_transformer_cache_floats(&m, B, T), x, NULL, B, T, work, wb) != ATTN_OK ||
            (mode == CALLER_MEMORY ? attn_adamw_step(&m.p, mom, vel, s + 1, (attn_float)1e-3, (attn_float)0.9,
                                                     (attn_float)0.95, (attn_float)1e-8, (attn_float)0.1)
                                   : attn_optim_step(&opt, &m.p, 1e-3)) != ATTN_OK)
            return 0;
    }
    for (i = 0; i < T; i++)
        if (attn_transformer_decode(&m, &kv, logits + i * V, x + i, 1, dw, db) != ATTN_OK) return 0;
    *refused = refuse ? calls - before : 0;
    memcpy(params, m.p.data, sizeof(attn_float) * m.p.total);
    n = (int)m.p.total;
    attn_transformer_free(&m); /* with the caller's memory: releases nothing */
    refuse = 0;
    if (mode == CALLER_MEMORY) {
        attn_gemm_scratch(NULL, 0);
        attn_set_threads(0);
    } else {
        attn_optim_free(&opt);
    }
    free(cache); free(work); free(kvmem); free(dw); free(mem); free(scratch); free(mom); free(vel);
    attn_gemm_release(); /* every run starts cold */
    return n;
}

/* The encoder-decoder in the caller's memory (init_in allocates only its temporary descriptor
   list) and attn_gemm's buffer lent: beam search with attn_seq2seq_decode_in, the allocator
   refusing, allocates nothing and finds what attn_seq2seq_decode finds. */
static int seq2seq_in_caller_memory(long *refused)
{
    attn_seq2seq_config c = attn_seq2seq_config_default();
    attn_seq2seq m;
    attn_rng r;
    int src[2 * 6] = {3, 4, 5, 6, 7, 8, 8, 7, 6, 5, 4, 3}, out1[2 * 8], out2[2 * 8], ok;
    attn_float s1[2], s2[2];
    void *mem, *work, *scratch = malloc(attn_gemm_scratch_bytes(1));
    size_t mb, wb;
    long before;
    c.src_vocab = c.tgt_vocab = 12; c.d = 16; c.heads = 2; c.dk = c.dv = 8; c.mlp = 32; c.max_src = 6; c.max_tgt = 8;
    mem = malloc(mb = attn_seq2seq_bytes(&c));
    attn_rng_seed(&r, 9, 0);
    ok = mem && attn_seq2seq_init_in(&m, &c, &r, mem, mb) == ATTN_OK; /* allocates its descriptor list */
    work = malloc(wb = ok ? attn_seq2seq_decode_work_bytes(&m, 6, 8, 3) : 1);
    attn_set_threads(1);
    ok = ok && scratch && attn_gemm_scratch(scratch, attn_gemm_scratch_bytes(1)) == ATTN_OK;
    refuse = 1;
    before = calls;
    ok = ok && work && attn_seq2seq_decode_in(&m, out2, s2, src, 2, 6, 1, 2, 8, 3, (attn_float)0.6, work, wb) == ATTN_OK;
    *refused = calls - before;
    refuse = 0;
    ok = ok && attn_seq2seq_decode(&m, out1, s1, src, 2, 6, 1, 2, 8, 3, (attn_float)0.6) == ATTN_OK &&
         !memcmp(out1, out2, sizeof out1) && !memcmp(s1, s2, sizeof s1);
    attn_gemm_scratch(NULL, 0);
    attn_set_threads(0);
    free(mem); free(work); free(scratch);
    return ok;
}

int main(void)
{
    static attn_float p[3][1 << 17], l[3][T * V];
    static const char *what[3] = {"never refusing", "refusing after warm-up", "in the caller's memory, refusing"};
    long calls_refused[3] = {0, 0, 0};
    int n[3], k, bad = 0;
    for (k = 0; k < 3; k++) {
        n[k] = run(k, 4, p[k], l[k], &calls_refused[k]);
        if (!n[k]) { printf("noalloc: the run %s failed: %s\n", what[k], attn_last_error()); return 1; }
    }
    for (k = 1; k < 3; k++) {
        int same = n[k] == n[0] && !memcmp(p[k], p[0], sizeof(attn_float) * n[0]) && !memcmp(l[k], l[0], sizeof l[0]);
        printf("noalloc: %s: %ld allocation calls; %s\n", what[k], calls_refused[k], same ? "the same bits" : "the runs differ");
        bad |= calls_refused[k] != 0 || !same;
    }
    {
        long n_s2s = 0;
        int same = seq2seq_in_caller_memory(&n_s2s);
        printf("noalloc: encoder-decoder beam search in the caller's memory: %ld allocation calls; %s\n", n_s2s,
               same ? "the same tokens and scores" : "failed or differs");
        bad |= n_s2s != 0 || !same;
    }
    return bad;
}
