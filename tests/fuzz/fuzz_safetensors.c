/* Fuzz target: the safetensors reader. The input is a file's bytes: attn_safetensors_parse must read
   it or refuse it with a message, never touch a byte outside it (ASan), and what it reads must hold
   together: each tensor's bytes inside the data, its dtype known, its shape its element count, and
   every tensor converted by attn_safetensors_get at its own shape (F8, kept as bytes, refused). */
#define ATTN_IMPLEMENTATION
#include "../../attn.h"
#include "fuzz.h"
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char *copy = (unsigned char *)malloc(size ? size : 1); /* its own buffer: ASan sees any over-read */
    attn_safetensors st;
    int i, d;
    if (!copy) return 0;
    memcpy(copy, data, size);
    if (attn_safetensors_parse(&st, copy, size) != ATTN_OK) {
        if (!attn_last_error()[0]) abort(); /* a refusal says why */
        free(copy);
        return 0;
    }
    for (i = 0; i < st.count; i++) {
        const attn_st_tensor *t = &st.tensors[i];
        size_t count = 1;
        attn_float *out;
        if ((unsigned)t->dtype > ATTN_ST_F8_E5M2 || t->ndim < 0 || t->ndim > ATTN_MAX_DIMS || t->data < copy ||
            t->data > copy + size || attn_safetensors_find(&st, t->name) == NULL)
            abort();
        for (d = 0; d < t->ndim; d++) count *= (size_t)t->shape[d];
        if (count != t->count) abort();
        if (count <= (1u << 20) && (out = (attn_float *)malloc(sizeof(attn_float) * (count ? count : 1))) != NULL) {
            int f8 = t->dtype == ATTN_ST_F8_E4M3 || t->dtype == ATTN_ST_F8_E5M2; /* kept as bytes: refused */
            if ((attn_safetensors_get(&st, t->name, out, t->ndim, t->shape) == ATTN_OK) == f8) abort();
            free(out);
        }
    }
    for (i = 0; i < st.nmeta; i++)
        if (attn_safetensors_meta(&st, st.meta[i][0]) == NULL) abort();
    attn_safetensors_free(&st);
    free(copy);
    return 0;
}
