/* Compile test, unit A: holds the implementation (both units do under BOTH_IMPLEMENT, which needs
   ATTN_STATIC). CUSTOM_ALLOC checks the ATTN_MALLOC/ATTN_FREE pair. */
#ifdef CUSTOM_ALLOC
#include <stdlib.h>
#define ATTN_MALLOC(sz) malloc(sz)
#define ATTN_FREE(p) free(p)
#endif
#define ATTN_IMPLEMENTATION
#include "attn.h"

int unit_b(void);

int main(void)
{
    attn_rng r;
    attn_float a[4] = {1, 2, 3, 4}, c[4];
    attn_transformer m; /* a model too: under ATTN_STATIC its code is inlined into this unit's */
    attn_transformer_config cfg = attn_transformer_config_default();
    int made;
    attn_rng_seed(&r, 1, 2);
    attn_gemm(0, 0, 2, 2, 2, 1, a, 2, a, 2, 0, c, 2);
    made = attn_transformer_init(&m, &cfg, &r) == ATTN_OK;
    if (made) attn_transformer_free(&m);
    return (c[0] == 7 && made && unit_b() == 0) ? 0 : 1;
}
