/* hf_tool: attn_transformer_load_hf / _save_hf for tests/gpt2_check.py.
     hf_tool forward DIR TOKEN...     prints the logits [T, vocab] (%.9g) of the model in DIR
     hf_tool export DIR OUT           loads DIR and writes it again to OUT (an existing directory) */
#define ATTN_IMPLEMENTATION
#include "../attn.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    attn_transformer m;
    int i, v, T = argc - 3, tok[256];
    if (argc < 4 || (strcmp(argv[1], "forward") && strcmp(argv[1], "export")) || T > 256) {
        fprintf(stderr, "usage: hf_tool forward DIR TOKEN... | hf_tool export DIR OUT\n");
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
    for (i = 0; i < T; i++) tok[i] = atoi(argv[3 + i]);
    {
        attn_float *y = (attn_float *)malloc(sizeof(attn_float) * (size_t)T * m.cfg.out);
        attn_float *cache = (attn_float *)malloc(sizeof(attn_float) * attn_transformer_cache_floats(&m, 1, T));
        size_t wb = attn_transformer_work_bytes(&m, 1, T);
        void *work = malloc(wb);
        if (!y || !cache || !work || attn_transformer_forward(&m, y, cache, tok, NULL, 1, T, work, wb) != ATTN_OK) {
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
