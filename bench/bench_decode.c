/* bench_decode: tokens per second of step-wise decoding with attn.h's key-value cache
   (attn_transformer_decode), beside recomputing the whole prefix for every token
   (attn_transformer_forward) and beside bench/torch_decode.py decoding the same model with a
   key-value cache in PyTorch, in the same run (Debian's /usr/bin/python3; skipped with a message
   without torch). The model is the Cogformer of bench_transformer (257 byte tokens, 4 RMSNorm
   blocks of width 128, 4 heads of 32, RoPE, SwiGLU 344, no biases), with softmax attention, at
   contexts of 128, 512 and 2048 tokens: a prompt of context - 32 tokens, then 32 tokens one by one.
   Then the thesis' encoder-decoder (d 128, 8 heads of 16, 1 + 1 layers, the seq2seq preset's
   model): milliseconds per source of greedy decoding and beam search (beam 4) at source and target
   lengths 15 and 64. The FMA peak of one core is measured first; each figure is the median of the
   repeats.
   Usage: bench_decode [--repeats 5] [--threads 1] */
#define ATTN_IMPLEMENTATION
#include "../attn.h"
#include "bench.h"
#include <string.h>

enum { STEPS = 32 };

static double run_decode(attn_transformer *m, int ctx, int recompute, int repeats)
{
    int P = ctx - STEPS, *tok = (int *)malloc(sizeof(int) * (size_t)ctx), i, rep, s, n = recompute ? (ctx > 600 ? 4 : 8) : STEPS;
    double *t = (double *)malloc(sizeof(double) * (size_t)repeats), rate;
    attn_transformer_kv kv;
    size_t kb = attn_transformer_kv_bytes(m, ctx), db = attn_transformer_decode_work_bytes(m, P, ctx),
           cb = attn_transformer_cache_floats(m, 1, ctx), wb = attn_transformer_work_bytes(m, 1, ctx);
    void *kvmem = malloc(kb), *dw = malloc(db), *work = malloc(wb);
    attn_float *logits = (attn_float *)malloc(sizeof(attn_float) * (size_t)ctx * m->cfg.out),
               *cache = (attn_float *)malloc(sizeof(attn_float) * cb);
    attn_rng r;
    attn_rng_seed(&r, 7, 0);
    for (i = 0; i < ctx; i++) tok[i] = (int)attn_rng_int(&r, 256);
    for (rep = 0; rep < repeats; rep++) {
        double t0;
        if (!recompute) {
            attn_transformer_kv_init(&kv, m, ctx, kvmem, kb);
            attn_transformer_decode(m, &kv, logits, tok, P, dw, db); /* the prompt, not timed */
        }
        t0 = now();
        for (s = 0; s < n; s++) {
            if (recompute) attn_transformer_forward(m, logits, cache, attn_transformer_cache_floats(m, 1, P + s + 1), tok, NULL, 1, P + s + 1, work, wb);
            else attn_transformer_decode(m, &kv, logits, tok + P + s, 1, dw, db);
        }
        t[rep] = n / (now() - t0);
    }
    qsort(t, (size_t)repeats, sizeof *t, cmp_double);
    rate = t[repeats / 2];
    free(tok); free(t); free(kvmem); free(dw); free(work); free(logits); free(cache);
    return rate;
}

/* Milliseconds per source of attn_seq2seq_decode at source and target length len, beam width beam. */
static double run_seq2seq(int len, int beam, int repeats)
{
    attn_seq2seq_config c = attn_seq2seq_config_default();
    attn_seq2seq m;
    attn_rng r;
    int B = 4, *src = (int *)malloc(sizeof(int) * (size_t)B * len), *out = (int *)malloc(sizeof(int) * (size_t)B * len), i, rep;
    double *t = (double *)malloc(sizeof(double) * (size_t)repeats), ms;
    c.max_src = c.max_tgt = len;
    attn_rng_seed(&r, 2, 0);
    if (attn_seq2seq_init(&m, &c, &r) != ATTN_OK) { fprintf(stderr, "%s\n", attn_last_error()); exit(1); }
    for (i = 0; i < B * len; i++) src[i] = ATTN_DIGITS_0 + (int)attn_rng_int(&r, 10);
    m.p.value[m.p.count - 1].data[ATTN_DIGITS_EOS] = -100; /* the output bias: never eos, every step runs */
    for (rep = 0; rep < repeats; rep++) {
        double t0 = now();
        attn_seq2seq_decode(&m, out, NULL, src, B, len, ATTN_DIGITS_BOS, ATTN_DIGITS_EOS, len, beam, (attn_float)0.6);
        t[rep] = 1e3 * (now() - t0) / B;
    }
    qsort(t, (size_t)repeats, sizeof *t, cmp_double);
    ms = t[repeats / 2];
    attn_seq2seq_free(&m);
    free(src); free(out); free(t);
    return ms;
}

static double run_torch(int ctx, int threads, int repeats)
{
    char cmd[256];
    double v = 0;
    FILE *f;
    snprintf(cmd, sizeof cmd, "env -u OPENBLAS_CORETYPE /usr/bin/python3 bench/torch_decode.py --ctx %d --steps %d --threads %d "
             "--repeats %d 2>/dev/null", ctx, STEPS, threads, repeats);
    if (!(f = popen(cmd, "r"))) return 0;
    if (fscanf(f, "%*d %lf", &v) != 1) v = 0;
    pclose(f);
    return v;
}

int main(int argc, char **argv)
{
    static const int ctxs[3] = {128, 512, 2048};
    int repeats = 5, threads = 1, i, have_torch;
    attn_transformer_config c = attn_transformer_config_default();
    attn_transformer m;
    attn_rng r;
    double peak;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--repeats") && i + 1 < argc) repeats = arg_int("--repeats", argv[++i], 1, 1000);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = arg_int("--threads", argv[++i], 1, 1024);
        else {
            printf("usage: bench_decode [--repeats R] [--threads T]\n"
                   "  decoding tokens/s with the key-value cache, beside recomputing the prefix and beside PyTorch\n");
            return strcmp(argv[i], "--help") ? 1 : 0;
        }
    }
    c.vocab = c.out = 257; c.d = 128; c.layers = 4; c.heads = 4; c.dk = c.dv = 32; c.mlp = 344; c.max_T = 2048;
    c.pos = ATTN_POS_ROPE; c.norm = ATTN_NORM_RMS; c.eps = (attn_float)1e-6; c.act = ATTN_ACT_SILU; c.glu = 1; c.bias = 0;
    attn_set_threads(threads);
    attn_rng_seed(&r, 1, 0);
    if (attn_transformer_init(&m, &c, &r) != ATTN_OK) { fprintf(stderr, "%s\n", attn_last_error()); return 1; }
    peak = fma_peak_gflops();
    have_torch = system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0;
    printf("bench_decode: the Cogformer (%lu parameters), softmax, %s, %d thread(s); %s, FMA peak of one core %.1f GFLOP/s\n",
           (unsigned long)attn_transformer_param_count(&c), attn_simd_name(), threads, cpu_model(), peak);
    if (!have_torch) printf("PyTorch not found (apt-get install python3-torch): its column stays empty\n");
    printf("\n| context | decode, tokens/s | recompute the prefix, tokens/s | ratio | PyTorch with a KV cache, tokens/s | ratio |\n");
    printf("|---:|---:|---:|---:|---:|---:|\n");
    for (i = 0; i < 3; i++) {
        double dec = run_decode(&m, ctxs[i], 0, repeats), rec = run_decode(&m, ctxs[i], 1, repeats > 3 ? 3 : repeats),
               pt = have_torch ? run_torch(ctxs[i], threads, repeats) : 0;
        printf("| %d | %.0f | %.1f | %.0fx |", ctxs[i], dec, rec, dec / rec);
        if (pt > 0) printf(" %.0f | %.2fx |\n", pt, dec / pt);
        else printf(" - | - |\n");
        fflush(stdout);
    }
    attn_transformer_free(&m);
    printf("\nThe encoder-decoder (the seq2seq preset's model), milliseconds per source:\n\n"
           "| source and target length | greedy | beam 4 |\n|---:|---:|---:|\n");
    for (i = 0; i < 2; i++) {
        int len = i ? 64 : 15;
        printf("| %d | %.2f | %.2f |\n", len, run_seq2seq(len, 1, repeats), run_seq2seq(len, 4, repeats));
        fflush(stdout);
    }
    return 0;
}
