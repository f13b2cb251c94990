/* A program built against an installed or added attn.h: prints the version and the SIMD kernels,
   and runs one small attention call. */
#define ATTN_IMPLEMENTATION
#include <attn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    attn_attention_desc d;
    attn_float q[4] = {1, 0, 0, 1}, k[4] = {1, 0, 0, 1}, v[4] = {1, 2, 3, 4}, o[4], stats[2];
    size_t bytes;
    void *work;
    memset(&d, 0, sizeof d);
    d.kind = ATTN_SOFTMAX; d.B = d.H = 1; d.Tq = d.Tk = 2; d.dk = d.dv = 2; d.causal = 1;
    work = malloc(bytes = attn_attention_workspace(&d));
    if (!work || attn_attention_forward(&d, o, stats, NULL, q, k, v, work, bytes) != ATTN_OK) {
        puts(attn_last_error());
        return 1;
    }
    printf("attn.h %s, %s: o[0] = %.1f\n", ATTN_VERSION_STRING, attn_simd_name(), (double)o[0]);
    free(work);
    return o[0] == 1 ? 0 : 1;
}
