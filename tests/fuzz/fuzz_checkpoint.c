/* Fuzz target: the in-memory checkpoint reader, attn_checkpoint_read, on any bytes. A record it
   accepts is read again into a buffer of exactly its count. */
#define ATTN_IMPLEMENTATION
#include "../../attn.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    attn_checkpoint_header h;
    attn_float *v;
    if (attn_checkpoint_read(&h, NULL, 0, data, size) != ATTN_OK) return 0;
    if (h.count > size) abort(); /* an accepted record holds its floats */
    v = (attn_float *)malloc(sizeof(attn_float) * (h.count ? h.count : 1));
    if (v && attn_checkpoint_read(&h, v, h.count, data, size) != ATTN_OK) abort();
    free(v);
    return 0;
}
