/* Compile test, unit B: declarations only (or a second private implementation under ATTN_STATIC). */
#ifdef BOTH_IMPLEMENT
#define ATTN_IMPLEMENTATION
#endif
#include "attn.h"

int unit_b(void)
{
    attn_float x[3] = {1, 2, 3}, y[3];
    return attn_softmax_forward(y, x, 1, 3) == ATTN_OK && y[2] > y[1] ? 0 : 1;
}
