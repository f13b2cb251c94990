/* Fuzz target: the three model loaders on any file, and a forward pass of whatever they accept
   (one short sequence, when its buffers stay under 64 MB). A loader that refuses must leave the
   model as it was; one that accepts must give a model whose forward pass runs. */
#define ATTN_IMPLEMENTATION
#include "../../attn.h"
#include "fuzz.h"
#include <string.h>
#include <unistd.h>

static char path[64];

/* Writes the input where the loaders read it. */
static int put(const uint8_t *data, size_t size)
{
    FILE *f;
    if (!path[0]) {
        int fd;
        strcpy(path, "/tmp/attn-fuzz-XXXXXX");
        if ((fd = mkstemp(path)) < 0) abort();
        close(fd);
    }
    if (!(f = fopen(path, "wb"))) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);
    return 1;
}

#define LIMIT ((size_t)64 << 20)

static void run_transformer(const attn_transformer *m)
{
    int B = 1, T = m->cfg.max_T < 4 ? m->cfg.max_T : 4, *tok, i;
    size_t cf = attn_transformer_cache_floats(m, B, T), wb = attn_transformer_work_bytes(m, B, T);
    size_t out = (size_t)(m->cfg.readout ? m->cfg.readout : T) * (size_t)m->cfg.out, in = (size_t)T * (size_t)(m->cfg.in_dim ? m->cfg.in_dim : 1);
    attn_float *y, *cache, *x;
    void *work;
    if (m->cfg.readout > T) return;
    if (!cf || !wb || cf > LIMIT || wb > LIMIT || out > LIMIT || in > LIMIT) return;
    y = (attn_float *)calloc(out, sizeof *y); cache = (attn_float *)calloc(cf, sizeof *cache);
    x = (attn_float *)calloc(in, sizeof *x); work = malloc(wb); tok = (int *)calloc((size_t)T, sizeof *tok);
    for (i = 0; i < T; i++) tok[i] = m->cfg.vocab ? i % m->cfg.vocab : 0;
    if (y && cache && x && work && tok)
        attn_transformer_forward(m, y, cache, attn_transformer_cache_floats(m, B, T), m->cfg.vocab ? tok : NULL, m->cfg.vocab ? NULL : x, B, T, work, wb);
    free(y); free(cache); free(x); free(work); free(tok);
}

static void run_cisformer(const attn_cisformer *m)
{
    size_t cf = attn_cisformer_cache_floats(m, 1), wb = attn_cisformer_work_bytes(m, 1);
    attn_float *y, *cache;
    int *tok;
    void *work;
    if (!cf || !wb || cf > LIMIT || wb > LIMIT) return;
    y = (attn_float *)calloc((size_t)m->cfg.d, sizeof *y); cache = (attn_float *)calloc(cf, sizeof *cache);
    tok = (int *)calloc((size_t)m->cfg.ncon, sizeof *tok); work = malloc(wb);
    if (y && cache && tok && work) attn_cisformer_forward(m, y, cache, attn_cisformer_cache_floats(m, 1), tok, 1, 1, work, wb);
    free(y); free(cache); free(tok); free(work);
}

static void run_seq2seq(const attn_seq2seq *m)
{
    int Ts = m->cfg.max_src < 4 ? m->cfg.max_src : 4, Tt = m->cfg.max_tgt < 4 ? m->cfg.max_tgt : 4, *src, *tgt;
    size_t cf = attn_seq2seq_cache_floats(m, 1, Ts, Tt), wb = attn_seq2seq_work_bytes(m, 1, Ts, Tt);
    size_t lf = (size_t)Tt * (size_t)m->cfg.tgt_vocab;
    attn_float *logits, *cache;
    void *work;
    if (!cf || !wb || cf > LIMIT || wb > LIMIT || lf > LIMIT) return;
    logits = (attn_float *)calloc(lf, sizeof *logits); cache = (attn_float *)calloc(cf, sizeof *cache);
    src = (int *)calloc((size_t)Ts, sizeof *src); tgt = (int *)calloc((size_t)Tt, sizeof *tgt); work = malloc(wb);
    if (logits && cache && src && tgt && work) attn_seq2seq_forward(m, logits, cache, attn_seq2seq_cache_floats(m, 1, Ts, Tt), src, tgt, 1, Ts, Tt, work, wb);
    free(logits); free(cache); free(src); free(tgt); free(work);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    attn_transformer t, tk;
    attn_cisformer c, ck;
    attn_seq2seq s, sk;
    put(data, size);
    memset(&t, 0xA5, sizeof t); memcpy(&tk, &t, sizeof t);
    memset(&c, 0xA5, sizeof c); memcpy(&ck, &c, sizeof c);
    memset(&s, 0xA5, sizeof s); memcpy(&sk, &s, sizeof s);
    if (attn_transformer_load(&t, path) == ATTN_OK) { run_transformer(&t); attn_transformer_free(&t); }
    else if (memcmp(&t, &tk, sizeof t)) abort();
    if (attn_cisformer_load(&c, path) == ATTN_OK) { run_cisformer(&c); attn_cisformer_free(&c); }
    else if (memcmp(&c, &ck, sizeof c)) abort();
    if (attn_seq2seq_load(&s, path) == ATTN_OK) { run_seq2seq(&s); attn_seq2seq_free(&s); }
    else if (memcmp(&s, &sk, sizeof s)) abort();
    return 0;
}
