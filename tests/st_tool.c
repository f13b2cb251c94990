/* st_tool: attn.h's safetensors reader and writer for tests/safetensors_check.py.
     st_tool write PATH        writes tensors "a" [2, 3] = i / 4 - 1 and "b.c" [5] = 1 / (i + 1), metadata
                               "who" = "attn.h"
     st_tool read PATH         prints each tensor's name, shape and values (%.9g), in the file's order */
#define ATTN_IMPLEMENTATION
#include "../attn.h"
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    attn_safetensors st;
    int i, d;
    if (argc == 3 && !strcmp(argv[1], "write")) {
        attn_float a[6], b[5];
        attn_tensor t[2] = {{a, 2, {2, 3}}, {b, 1, {5}}};
        const char *names[2] = {"a", "b.c"}, *meta[2] = {"who", "attn.h"};
        for (i = 0; i < 6; i++) a[i] = (attn_float)(i / 4.0 - 1);
        for (i = 0; i < 5; i++) b[i] = (attn_float)(1.0 / (i + 1));
        if (attn_safetensors_save(argv[2], names, t, 2, meta, 1) == ATTN_OK) return 0;
    } else if (argc == 3 && !strcmp(argv[1], "read")) {
        if (attn_safetensors_load(&st, argv[2]) != ATTN_OK) {
            fprintf(stderr, "st_tool: %s\n", attn_last_error());
            return 1;
        }
        for (i = 0; i < st.count; i++) {
            const attn_st_tensor *t = &st.tensors[i];
            attn_float *x = (attn_float *)malloc(sizeof(attn_float) * (t->count + 1));
            size_t k;
            printf("%s %d", t->name, t->ndim);
            for (d = 0; d < t->ndim; d++) printf(" %lld", (long long)t->shape[d]);
            if (!x || attn_safetensors_get(&st, t->name, x, t->ndim, t->shape) != ATTN_OK) return 1;
            for (k = 0; k < t->count; k++) printf(" %.9g", (double)x[k]);
            printf("\n");
            free(x);
        }
        attn_safetensors_free(&st);
        return 0;
    } else {
        fprintf(stderr, "usage: st_tool write|read PATH\n");
        return 2;
    }
    fprintf(stderr, "st_tool: %s\n", attn_last_error());
    return 1;
}
