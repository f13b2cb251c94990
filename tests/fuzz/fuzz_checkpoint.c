/* Fuzz target: the in-memory checkpoint reader, attn_checkpoint_read, on any bytes. A record it
   accepts is read again into parameters of its count (one tensor): format 1 must load, format 2
   must load exactly when its table is that one tensor, and be refused on the layout otherwise. */
#define ATTN_IMPLEMENTATION
#include "../../attn.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    attn_checkpoint_header h;
    attn_param_desc desc[1] = {{"x", 1, {0}, 0, ATTN_PARAM_ZERO, 0}};
    attn_params p;
    attn_status s;
    if (attn_checkpoint_read(&h, NULL, data, size) != ATTN_OK) return 0;
    if (h.count > size) abort(); /* an accepted record holds its floats */
    if (h.count < 1 || h.count > (1u << 20)) return 0;
    desc[0].shape[0] = (int)h.count;
    if (attn_params_init(&p, desc, 1) != ATTN_OK) return 0;
    s = attn_checkpoint_read(&h, &p, data, size);
    if (p.total == h.count && h.version == 1 ? s != ATTN_OK : s != ATTN_OK && s != ATTN_ERR_SHAPE) abort();
    attn_params_free(&p);
    return 0;
}
