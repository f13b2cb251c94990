/* save_loop: the program tests/kill_saves.sh kills. `save_loop save PATH` saves two different models
   (1 MB of floats each) to PATH in turn until it is killed; `save_loop check PATH` exits 0 when
   PATH holds one of the two whole (any kill must leave the old file or the new one), 1 if not. */
#define ATTN_IMPLEMENTATION
#include "../attn.h"
#include <stdio.h>
#include <string.h>

static const attn_param_desc desc[2] = {{"W", 2, {512, 256}, -1, ATTN_PARAM_ZERO, 0},
                                        {"b", 1, {512}, -1, ATTN_PARAM_ZERO, 0}};

/* Model v (0 or 1): every float a function of its index and v. */
static void fill(attn_params *p, int v)
{
    size_t i;
    int k;
    for (k = 0; k < p->count; k++)
        for (i = 0; i < attn_tensor_numel(&p->value[k]); i++)
            p->value[k].data[i] = (attn_float)((double)(i % 1000) * (v ? -0.5 : 0.25) + k);
}

int main(int argc, char **argv)
{
    attn_params p, q;
    int32_t cfg[1] = {7};
    int v, which = -1;
    if (argc != 3 || (strcmp(argv[1], "save") && strcmp(argv[1], "check"))) {
        fprintf(stderr, "usage: save_loop save|check PATH\n");
        return 2;
    }
    if (attn_params_init(&p, desc, 2) != ATTN_OK || attn_params_init(&q, desc, 2) != ATTN_OK) return 2;
    if (!strcmp(argv[1], "save"))
        for (v = 0;; v ^= 1) {
            fill(&p, v);
            if (attn_checkpoint_save(argv[2], "loop", cfg, 1, NULL, 0, &p) != ATTN_OK) {
                fprintf(stderr, "save_loop: %s\n", attn_last_error());
                return 2;
            }
        }
    {
        void *buf;
        size_t n;
        attn_checkpoint_header h;
        if (attn_checkpoint_load_file(argv[2], &buf, &n, &h) != ATTN_OK ||
            attn_checkpoint_read(&h, &q, buf, n) != ATTN_OK) {
            fprintf(stderr, "save_loop: %s\n", attn_last_error());
            return 1;
        }
        ATTN_FREE(buf);
        for (v = 0; v < 2; v++) {
            fill(&p, v);
            if (!memcmp(p.value[0].data, q.value[0].data, sizeof(attn_float) * 512 * 256) &&
                !memcmp(p.value[1].data, q.value[1].data, sizeof(attn_float) * 512))
                which = v;
        }
    }
    attn_params_free(&p);
    attn_params_free(&q);
    return which >= 0 ? 0 : 1;
}
