/* attnlab embed and attnlab search: sentence embeddings from a BERT-style model in Hugging Face's
   layout (sentence-transformers' all-MiniLM-L6-v2: its directory holds config.json,
   model.safetensors, vocab.txt and the tokenizer's configs), tokenised by attn.h's WordPiece,
   mean-pooled over the tokens and L2-normalised as sentence-transformers does.

     attnlab embed MODEL_DIR [FILE] [--format csv|bin] [--out F] [--batch N] [--threads N]
     attnlab search MODEL_DIR --query TEXT [FILE] [--top K] [--batch N] [--threads N] */
#include "../attn.h"
#include "attnlab.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    attn_transformer m;
    attn_wordpiece wp;
    int batch, cut; /* sentences per forward call; how many were cut at the model's length */
} embedder;

/* Every line of f (without its '\n' or "\r\n") into *lines; returns their number, -1 on error. */
static int read_lines(FILE *f, char ***lines)
{
    char *buf = NULL, **l = NULL;
    size_t cap = 0, len = 0, lcap = 0;
    int c, count = 0;
    for (;;) {
        c = getc(f);
        if (c != EOF && c != '\n') {
            if (len + 2 > cap && !(buf = (char *)realloc(buf, cap = cap ? 2 * cap : 256))) return -1;
            buf[len++] = (char)c;
            continue;
        }
        if (c == EOF && len == 0) break;
        if (len && buf[len - 1] == '\r') len--;
        if ((size_t)count + 1 > lcap && !(l = (char **)realloc(l, sizeof *l * (lcap = lcap ? 2 * lcap : 64)))) return -1;
        if (!(l[count] = (char *)malloc(len + 1))) return -1;
        if (len) memcpy(l[count], buf, len);
        l[count++][len] = 0;
        len = 0;
        if (c == EOF || count == 1 << 24) break;
    }
    free(buf);
    *lines = l;
    return ferror(f) ? -1 : count;
}

/* qsort's order of indices: by key[] descending, then by index (line order). */
static const double *sort_key;
static int by_key_desc(const void *a, const void *b)
{
    int i = *(const int *)a, j = *(const int *)b;
    return sort_key[i] != sort_key[j] ? (sort_key[i] < sort_key[j] ? 1 : -1) : (i > j) - (i < j);
}

/* The embeddings e [n, d] of the texts: tokenised, sorted by length, run in padded batches. */
static int embed_all(embedder *E, char **text, int n, attn_float *e, int progress)
{
    int d = E->m.cfg.d, T = E->wp.max_len, i, b, j, rc = 0, pieces;
    int *ids = (int *)malloc(sizeof(int) * (size_t)n * T), *len = (int *)malloc(sizeof(int) * (size_t)(n ? n : 1));
    int *order = (int *)malloc(sizeof(int) * (size_t)(n ? n : 1)), *tok = (int *)malloc(sizeof(int) * (size_t)E->batch * T);
    unsigned char *mask = (unsigned char *)malloc((size_t)E->batch * T);
    attn_float *h = (attn_float *)malloc(sizeof(attn_float) * (size_t)E->batch * T * d), *cache, *pooled;
    double *key = (double *)malloc(sizeof(double) * (size_t)(n ? n : 1));
    size_t wb = attn_transformer_work_bytes(&E->m, E->batch, T), cf = attn_transformer_cache_floats(&E->m, E->batch, T);
    void *work = malloc(wb ? wb : 1);
    time_t start = time(NULL), last = start;
    cache = (attn_float *)malloc(sizeof(attn_float) * cf);
    pooled = (attn_float *)malloc(sizeof(attn_float) * (size_t)E->batch * d);
    if (!ids || !len || !order || !tok || !mask || !h || !work || !cache || !pooled || !wb || !key) {
        fprintf(stderr, "attnlab embed: out of memory for %d sentences (%s)\n", n, attn_last_error());
        rc = 1;
    }
    for (i = 0; !rc && i < n; i++) {
        len[i] = attn_wordpiece_encode(&E->wp, text[i], strlen(text[i]), ids + (size_t)i * T, T, &pieces);
        E->cut += pieces > T - 2;
        order[i] = i, key[i] = len[i];
    }
    sort_key = key;
    if (!rc) qsort(order, (size_t)n, sizeof *order, by_key_desc);
    for (b = 0; !rc && b < n; b += E->batch) { /* the longest first: a batch is as long as its first */
        int B = n - b < E->batch ? n - b : E->batch, Tb = len[order[b]];
        for (i = 0; i < B; i++)
            for (j = 0; j < Tb; j++) {
                int in = j < len[order[b + i]];
                tok[i * Tb + j] = in ? ids[(size_t)order[b + i] * T + j] : -1; /* pad_mask 2's padding */
                mask[i * Tb + j] = (unsigned char)in;
            }
        if (attn_transformer_forward(&E->m, h, cache, cf, tok, NULL, B, Tb, work, wb) != ATTN_OK ||
            attn_mean_pool(pooled, h, mask, B, Tb, d, 1) != ATTN_OK) {
            fprintf(stderr, "attnlab embed: %s\n", attn_last_error());
            rc = 1;
            break;
        }
        for (i = 0; i < B; i++) memcpy(e + (size_t)order[b + i] * d, pooled + (size_t)i * d, sizeof(attn_float) * d);
        if (progress && (time(NULL) - last >= 2 || b + B == n) && time(NULL) > start) {
            last = time(NULL);
            fprintf(stderr, "\rattnlab embed: %d of %d sentences, %.0f s", b + B, n, difftime(last, start));
            if (b + B == n) fputc('\n', stderr);
        }
    }
    free(ids); free(len); free(order); free(tok); free(mask); free(h); free(work); free(cache); free(pooled); free(key);
    return rc;
}

static void embed_usage(const char *cmd)
{
    if (!strcmp(cmd, "search"))
        printf("usage: attnlab search MODEL_DIR --query TEXT [FILE] [--top K] [--batch N] [--threads N]\n"
               "Ranks the lines of FILE (standard input when absent or -) by the cosine similarity of\n"
               "their sentence embeddings to the query's, and prints the best K (default 10) as\n"
               "'rank<TAB>similarity<TAB>line number<TAB>line'. See attnlab embed --help for the model.\n");
    else
        printf("usage: attnlab embed MODEL_DIR [FILE] [--format csv|bin] [--out F] [--batch N] [--threads N]\n"
               "Embeds each line of FILE (standard input when absent or -) as one sentence: WordPiece\n"
               "tokens from MODEL_DIR's vocab.txt (cut at sentence_bert_config.json's max_seq_length),\n"
               "the BERT encoder of MODEL_DIR (config.json, model.safetensors in Hugging Face's layout),\n"
               "the mean of its last hidden states over the sentence's tokens, L2-normalised (what\n"
               "sentence-transformers' all-MiniLM-L6-v2 computes). Output (--out, default standard\n"
               "output): csv, one sentence per row, its d values comma-separated (default), or bin,\n"
               "little-endian float32 [sentences, d] with nothing else. --batch: sentences per forward\n"
               "call (default 32; sentences of like length are batched together, and a sentence's\n"
               "embedding depends on its batch only by rounding). --threads: default all cores.\n");
    help_shown = 1;
}

int embed_main(int argc, char **argv)
{
    const char *cmd = argv[1], *dir = NULL, *file = NULL, *out = NULL, *format = "csv", *query = NULL;
    int i, n = 0, held = 0, top = 10, threads = 0, rc = 1; /* held: lines allocated */
    char **lines = NULL;
    embedder E;
    attn_float *e = NULL;
    FILE *in = stdin, *of = stdout;
    memset(&E, 0, sizeof E);
    E.batch = 32;
    for (i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = 1;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) return embed_usage(cmd), 0;
        if (a[0] != '-' || !strcmp(a, "-")) {
            if (!dir) dir = a;
            else if (!file) file = a;
            else { fprintf(stderr, "attnlab %s: one model directory and one file (see --help)\n", cmd); return 1; }
            continue;
        }
        if (!v) { fprintf(stderr, "attnlab %s: %s needs a value (or is unknown; see --help)\n", cmd, a); return 1; }
        if (!strcmp(a, "--batch")) ok = parse_int(v, 1, &E.batch) && E.batch <= 4096;
        else if (!strcmp(a, "--threads")) ok = parse_int(v, 1, &threads);
        else if (!strcmp(a, "--format") && !strcmp(cmd, "embed")) ok = !strcmp(v, "csv") || !strcmp(v, "bin"), format = v;
        else if (!strcmp(a, "--out") && !strcmp(cmd, "embed")) out = v;
        else if (!strcmp(a, "--query") && !strcmp(cmd, "search")) query = v;
        else if (!strcmp(a, "--top") && !strcmp(cmd, "search")) ok = parse_int(v, 1, &top);
        else { fprintf(stderr, "attnlab %s: unknown option %s (see attnlab %s --help)\n", cmd, a, cmd); return 1; }
        if (!ok) { fprintf(stderr, "attnlab %s: bad value '%s' for %s (see --help)\n", cmd, v, a); return 1; }
        i++;
    }
    if (!dir) { fprintf(stderr, "attnlab %s: MODEL_DIR names the model (see --help)\n", cmd); return 1; }
    if (!strcmp(cmd, "search") && !query) { fprintf(stderr, "attnlab search: --query TEXT is the query\n"); return 1; }
    if (threads) attn_set_threads(threads);
    if (attn_transformer_load_hf(&E.m, dir) != ATTN_OK || attn_wordpiece_load_hf(&E.wp, dir) != ATTN_OK) {
        fprintf(stderr, "attnlab %s: %s\n", cmd, attn_last_error());
        attn_transformer_free(&E.m);
        return 1;
    }
    if (E.m.cfg.pad_mask) E.m.cfg.pad_mask = 2; /* padding -1: a "[PAD]" in a sentence is seen, as in PyTorch */
    if (E.m.cfg.out != 0 || !E.m.cfg.pad_mask || E.wp.max_len > E.m.cfg.max_T) {
        fprintf(stderr, "attnlab %s: %s is not a sentence encoder (a BERT without a head) for %d tokens\n", cmd, dir,
                E.wp.max_len);
        goto done;
    }
    if (file && strcmp(file, "-") && !(in = fopen(file, "rb"))) {
        fprintf(stderr, "attnlab %s: cannot open %s\n", cmd, file);
        goto done;
    }
    if (attn_transformer_pack(&E.m, 1) != ATTN_OK) /* the weights packed once: faster, else read as they are */
        fprintf(stderr, "attnlab %s: note: %s\n", cmd, attn_last_error());
    if (out && !(of = fopen(out, "wb"))) { /* before the work: a bad path fails now */
        fprintf(stderr, "attnlab embed: cannot write %s\n", out);
        goto done;
    }
    if ((held = n = read_lines(in, &lines)) < 0) {
        fprintf(stderr, "attnlab %s: cannot read %s (or out of memory)\n", cmd, file ? file : "the standard input");
        held = 0;
        goto done;
    }
    if (query) { /* the query joins as sentence n */
        char **l = (char **)realloc(lines, sizeof *lines * (size_t)(n + 1));
        if (l) lines = l;
        if (!l || !(l[n] = (char *)malloc(strlen(query) + 1))) goto done;
        strcpy(l[n], query), held++;
    }
    if (!(e = (attn_float *)malloc(sizeof(attn_float) * (size_t)(n + 1) * E.m.cfg.d)) ||
        embed_all(&E, lines, n + (query != NULL), e, isatty(fileno(stderr)) && n > E.batch))
        goto done;
    if (E.cut) fprintf(stderr, "attnlab %s: %d sentence(s) cut at %d tokens\n", cmd, E.cut, E.wp.max_len);
    if (query) {
        int *order = (int *)malloc(sizeof(int) * (size_t)(n ? n : 1)), k, d = E.m.cfg.d;
        double *sim = (double *)malloc(sizeof(double) * (size_t)(n ? n : 1));
        if (!order || !sim) goto done;
        for (i = 0; i < n; i++) {
            double s = 0;
            for (k = 0; k < d; k++) s += (double)e[(size_t)i * d + k] * e[(size_t)n * d + k];
            sim[i] = s, order[i] = i;
        }
        sort_key = sim;
        qsort(order, (size_t)n, sizeof *order, by_key_desc);
        for (i = 0; i < n && i < top; i++) printf("%d\t%.4f\t%d\t%s\n", i + 1, sim[order[i]], order[i] + 1, lines[order[i]]);
        free(order); free(sim);
    } else {
        size_t k, count = (size_t)n * E.m.cfg.d;
        for (k = 0; k < count; k++) {
            if (format[0] == 'b') {
                float f = (float)e[k];
                unsigned char b[4];
                uint32_t u;
                memcpy(&u, &f, 4);
                b[0] = (unsigned char)u, b[1] = (unsigned char)(u >> 8), b[2] = (unsigned char)(u >> 16), b[3] = (unsigned char)(u >> 24);
                fwrite(b, 1, 4, of);
            } else fprintf(of, "%.8g%c", (double)e[k], (k + 1) % (size_t)E.m.cfg.d ? ',' : '\n');
        }
        if (of != stdout && fclose(of) != 0) {
            of = stdout;
            write_failure(out);
            goto done;
        }
        of = stdout;
    }
    rc = 0;
done:
    if (in != stdin && in) fclose(in);
    if (of != stdout) fclose(of);
    for (i = 0; i < held; i++) free(lines[i]);
    free(lines); free(e);
    attn_wordpiece_free(&E.wp);
    attn_transformer_free(&E.m);
    return rc;
}
