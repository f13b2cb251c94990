/* sq_row.h - a score row written outside the header, for the tests of registration: A = g / sum g
   with g = (1 + s^2) (times the call's scale), and its vector-Jacobian product. */
#ifndef ATTN_TEST_SQ_ROW_H
#define ATTN_TEST_SQ_ROW_H

static attn_float sq_map(size_t n, const attn_float *s, attn_float *p, attn_float *x, attn_float scale)
{
    attn_float sum = 0;
    size_t i;
    (void)x;
    for (i = 0; i < n; i++) sum += p[i] *= (1 + s[i] * s[i]) * scale;
    return sum;
}

static void sq_vjp(size_t n, const attn_float *s, const attn_float *a, const attn_float *vis, attn_float *ds,
                   attn_float D, attn_float inv)
{
    size_t i;
    (void)a;
    for (i = 0; i < n; i++) ds[i] = vis[i] * (ds[i] - D) * 2 * s[i] * inv;
}
#endif
