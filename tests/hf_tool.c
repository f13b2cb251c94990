/* hf_tool: attn_transformer_load_hf / _save_hf for tests/gpt2_check.py, llama_check.py, bert_check.py.
     hf_tool forward DIR TOKEN...     prints the logits [T, vocab] (%.9g) of the model in DIR
     hf_tool export DIR OUT           loads DIR and writes it again to OUT (an existing directory)
     hf_tool embed DIR T TOKEN...     a padded batch of sentences of T tokens each: prints their
                                      mean-pooled, L2-normalised embeddings [B, d]
     hf_tool tokenize DIR             each line of stdin (NUL-separated with -0) as WordPiece ids
                                      from DIR's vocab.txt, one line of ids each (cut at max_len) */
#define ATTN_IMPLEMENTATION
#include "../attn.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The embeddings of n tokens a[] in sentences of T, as sentence-transformers pools them. */
static int embed(attn_transformer *m, int T, int n, char **a)
{
    int B = T > 0 ? n / T : 0, i, d = m->cfg.d;
    int *tok = (int *)malloc(sizeof(int) * (size_t)(n ? n : 1));
    unsigned char *mask = (unsigned char *)malloc((size_t)(n ? n : 1));
    attn_float *h = (attn_float *)malloc(sizeof(attn_float) * (size_t)(n ? n : 1) * d), *e, *cache;
    size_t wb = B > 0 ? attn_transformer_work_bytes(m, B, T) : 0;
    void *work = malloc(wb ? wb : 1);
    if (B < 1 || B * T != n || !tok || !mask || !h || !work) return fprintf(stderr, "hf_tool embed: bad batch\n"), 2;
    for (i = 0; i < n; i++) tok[i] = atoi(a[i]), mask[i] = tok[i] != m->cfg.pad;
    e = (attn_float *)malloc(sizeof(attn_float) * (size_t)B * d);
    cache = (attn_float *)malloc(sizeof(attn_float) * attn_transformer_cache_floats(m, B, T));
    if (!e || !cache || attn_transformer_forward(m, h, cache, attn_transformer_cache_floats(m, B, T), tok, NULL, B, T, work, wb) != ATTN_OK ||
        attn_mean_pool(e, h, mask, B, T, d, 1) != ATTN_OK)
        return fprintf(stderr, "hf_tool: %s\n", attn_last_error()), 1;
    for (i = 0; i < B * d; i++) printf("%.9g%c", (double)e[i], (i + 1) % d ? ' ' : '\n');
    free(tok); free(mask); free(h); free(e); free(cache); free(work);
    attn_transformer_free(m);
    return 0;
}

/* Every line (or NUL-terminated record, sep 0) of stdin as attn_wordpiece_encode's ids. */
static int tokenize(const char *dir, int sep)
{
    attn_wordpiece w;
    size_t cap = 1 << 16, n = 0;
    char *text = (char *)malloc(cap);
    int *ids, c, i, k;
    if (!text || attn_wordpiece_load_hf(&w, dir) != ATTN_OK) return fprintf(stderr, "hf_tool: %s\n", attn_last_error()), 1;
    if (!(ids = (int *)malloc(sizeof(int) * (size_t)w.max_len))) return 1;
    while ((c = getchar()) != EOF) {
        if (c != sep) {
            if (n + 1 >= cap && !(text = (char *)realloc(text, cap *= 2))) return 1;
            text[n++] = (char)c;
            continue;
        }
        k = attn_wordpiece_encode(&w, text, n, ids, w.max_len, NULL);
        for (i = 0; i < k; i++) printf("%d%c", ids[i], i + 1 < k ? ' ' : '\n');
        n = 0;
    }
    free(text); free(ids);
    attn_wordpiece_free(&w);
    return 0;
}

int main(int argc, char **argv)
{
    attn_transformer m;
    int i, v, T = argc - 3, tok[256];
    if (argc >= 3 && !strcmp(argv[1], "tokenize")) return tokenize(argv[2], argc > 3 && !strcmp(argv[3], "-0") ? 0 : '\n');
    if (argc < 4 || (strcmp(argv[1], "forward") && strcmp(argv[1], "export") && strcmp(argv[1], "embed"))) {
        fprintf(stderr, "usage: hf_tool forward DIR TOKEN... | hf_tool export DIR OUT | hf_tool embed DIR T TOKEN...\n");
        return 2;
    }
    if (attn_transformer_load_hf(&m, argv[2]) != ATTN_OK) {
        fprintf(stderr, "hf_tool: %s\n", attn_last_error());
        return 1;
    }
    if (!strcmp(argv[1], "export")) {
        int rc = attn_transformer_save_hf(&m, argv[3]) != ATTN_OK;
        if (rc) fprintf(stderr, "hf_tool: %s\n", attn_last_error());
        attn_transformer_free(&m);
        return rc;
    }
    if (!strcmp(argv[1], "embed")) return embed(&m, atoi(argv[3]), argc - 4, argv + 4);
    if (T > 256) return 2;
    for (i = 0; i < T; i++) tok[i] = atoi(argv[3 + i]);
    {
        attn_float *y = (attn_float *)malloc(sizeof(attn_float) * (size_t)T * m.cfg.out);
        attn_float *cache = (attn_float *)malloc(sizeof(attn_float) * attn_transformer_cache_floats(&m, 1, T));
        size_t wb = attn_transformer_work_bytes(&m, 1, T);
        void *work = malloc(wb);
        if (!y || !cache || !work || attn_transformer_forward(&m, y, cache, attn_transformer_cache_floats(&m, 1, T), tok, NULL, 1, T, work, wb) != ATTN_OK) {
            fprintf(stderr, "hf_tool: %s\n", attn_last_error());
            return 1;
        }
        for (i = 0; i < T; i++)
            for (v = 0; v < m.cfg.out; v++) printf("%.9g%c", (double)y[(size_t)i * m.cfg.out + v], v + 1 < m.cfg.out ? ' ' : '\n');
        free(y); free(cache); free(work);
    }
    attn_transformer_free(&m);
    return 0;
}
