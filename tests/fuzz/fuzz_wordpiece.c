/* Fuzz target: the WordPiece tokenizer. The input's first byte chooses cased or uncased; up to the
   first NUL byte it is a vocabulary (after "[UNK]\n[CLS]\n[SEP]\n", so most inputs parse), after
   it a text. attn_wordpiece_parse reads the vocabulary or refuses it with a message;
   attn_wordpiece_encode, at a short and a long max, must give [CLS] ... [SEP] of valid ids, the
   short one a prefix of the long one's pieces, never reading outside the text (ASan). */
#define ATTN_IMPLEMENTATION
#include "../../attn.h"
#include "fuzz.h"
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char head[] = "[UNK]\n[CLS]\n[SEP]\n";
    const uint8_t *nul = size ? (const uint8_t *)memchr(data + 1, 0, size - 1) : NULL;
    size_t nv = nul ? (size_t)(nul - data - 1) : size ? size - 1 : 0, nt = nul ? size - nv - 2 : 0, i;
    char *vocab = (char *)malloc(sizeof head + nv), *text = (char *)malloc(nt ? nt : 1);
    int ids[512], few[6], n, m, pieces, p2;
    attn_wordpiece w;
    if (!vocab || !text || !size) return free(vocab), free(text), 0;
    memcpy(vocab, head, sizeof head - 1);
    memcpy(vocab + sizeof head - 1, data + 1, nv);
    memcpy(text, nul ? nul + 1 : data, nt);
    if (attn_wordpiece_parse(&w, vocab, sizeof head - 1 + nv, data[0] & 1) != ATTN_OK) {
        if (!attn_last_error()[0]) abort();
        return free(vocab), free(text), 0;
    }
    n = attn_wordpiece_encode(&w, text, nt, ids, 512, &pieces);
    m = attn_wordpiece_encode(&w, text, nt, few, 6, &p2);
    if (n < 2 || n > 512 || ids[0] != w.cls || ids[n - 1] != w.sep || pieces != p2 || n != (pieces < 510 ? pieces : 510) + 2)
        abort();
    if (m != (n < 6 ? n : 6) || few[m - 1] != w.sep || memcmp(few, ids, sizeof(int) * (size_t)(m - 1))) abort();
    for (i = 0; i < (size_t)n; i++)
        if (ids[i] < 0 || ids[i] >= w.count || !attn_wordpiece_token(&w, ids[i])) abort();
    attn_wordpiece_free(&w);
    free(vocab);
    free(text);
    return 0;
}
