/* search.c: the C side of the browser's semantic search (examples/web/search.html), built by
   `make web` with emcc -O2 -msimd128 into build/web/search.js and search.wasm and driven by
   search_worker.js. The worker writes the model's files (config.json, model.safetensors, vocab.txt
   and the tokenizer's configs of sentence-transformers' all-MiniLM-L6-v2) into the module's memory
   file system and calls search_load on that directory; search_embed then gives a sentence's
   embedding: WordPiece ids (attn_wordpiece_encode), the BERT encoder (attn_transformer_forward, one
   sentence, no padding), the mean over its tokens, L2-normalised (attn_mean_pool). It builds
   natively too: `cc -O2 -DSEARCH_MAIN search.c -lm` gives `search_native DIR` that prints the
   embedding of each line of its standard input, as the tests compare. */
#define ATTN_IMPLEMENTATION
#include "../../attn.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#define SEARCH_API EMSCRIPTEN_KEEPALIVE
#else
#define SEARCH_API
#endif

static attn_transformer model;
static attn_wordpiece vocab;
static int loaded, *ids;
static attn_float *hidden, *cache, *pooled;
static void *work;
static size_t work_bytes, cache_floats;
static char message[512];

/* The last failure's message ("" if none). */
SEARCH_API const char *search_error(void) { return message; }
SEARCH_API const char *search_build(void)
{
    static char b[128];
    snprintf(b, sizeof b, "attn.h %s, SIMD %s", ATTN_VERSION_STRING, attn_simd_name());
    return b;
}

static int fail(const char *what)
{
    snprintf(message, sizeof message, "%s: %s", what, attn_last_error());
    return 0;
}

/* Loads the model and tokenizer in dir and sizes the buffers for its longest sentence; 1, or 0. */
SEARCH_API int search_load(const char *dir)
{
    int T;
    if (loaded) return 1;
    if (attn_transformer_load_hf(&model, dir) != ATTN_OK) return fail("search_load");
    if (attn_wordpiece_load_hf(&vocab, dir) != ATTN_OK) return attn_transformer_free(&model), fail("search_load");
    T = vocab.max_len;
    model.cfg.pad_mask = 2; /* padding would be -1: a "[PAD]" written in the text is a token the model sees */
    if (model.cfg.out != 0 || T > model.cfg.max_T) {
        snprintf(message, sizeof message, "search_load: %s is not a sentence encoder for %d tokens", dir, T);
        return 0;
    }
    if (attn_transformer_pack(&model, 1) != ATTN_OK) /* the weights packed once for the kernels */
        return attn_transformer_free(&model), fail("search_load");
    work_bytes = attn_transformer_work_bytes(&model, 1, T);
    ids = (int *)malloc(sizeof(int) * (size_t)T);
    hidden = (attn_float *)malloc(sizeof(attn_float) * (size_t)T * model.cfg.d);
    cache = (attn_float *)malloc(sizeof(attn_float) * (cache_floats = attn_transformer_cache_floats(&model, 1, T)));
    work = malloc(work_bytes);
    pooled = (attn_float *)malloc(sizeof(attn_float) * (size_t)model.cfg.d);
    if (!ids || !hidden || !cache || !work || !pooled) {
        snprintf(message, sizeof message, "search_load: out of memory");
        return 0;
    }
    return loaded = 1;
}

SEARCH_API int search_dim(void) { return loaded ? model.cfg.d : 0; }

/* The embedding of text [bytes] (UTF-8) into out [d]: its number of tokens, or 0 on failure. */
SEARCH_API int search_embed(const char *text, int bytes, float *out)
{
    int n, i;
    if (!loaded) return snprintf(message, sizeof message, "search_embed: no model loaded"), 0;
    n = attn_wordpiece_encode(&vocab, text, (size_t)bytes, ids, vocab.max_len, NULL);
    if (n < 2 || attn_transformer_forward(&model, hidden, cache, cache_floats, ids, NULL, 1, n, work, work_bytes) != ATTN_OK ||
        attn_mean_pool(pooled, hidden, NULL, 1, n, model.cfg.d, 1) != ATTN_OK)
        return fail("search_embed");
    for (i = 0; i < model.cfg.d; i++) out[i] = (float)pooled[i];
    return n;
}

/* The token ids of the sentence search_embed read last (as many as it returned). */
SEARCH_API const int *search_ids(void) { return ids; }

#ifdef SEARCH_MAIN
int main(int argc, char **argv)
{
    char line[65536];
    float *e;
    int i;
    if (argc != 2 || !search_load(argv[1])) {
        fprintf(stderr, argc != 2 ? "usage: search_native MODEL_DIR < sentences\n" : "%s\n", message);
        return 1;
    }
    e = (float *)malloc(sizeof(float) * (size_t)search_dim());
    while (e && fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = 0;
        if (!search_embed(line, (int)strlen(line), e)) return fprintf(stderr, "%s\n", message), 1;
        for (i = 0; i < search_dim(); i++) printf("%.9g%c", (double)e[i], i + 1 < search_dim() ? ' ' : '\n');
    }
    return 0;
}
#endif
