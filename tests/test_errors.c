/* Bad input: every failure returns a status, leaves a message, and writes nothing. */
#include "test.h"
#include <limits.h>

/* Runs `call`, expects status `want`, a message, and `buf` (n floats) untouched. */
#define EXPECT_FAIL(want, buf, n, call)                                                              \
    do {                                                                                             \
        attn_float keep_[64];                                                                        \
        attn_status s_;                                                                              \
        memcpy(keep_, buf, sizeof(attn_float) * (n));                                                \
        attn_clear_error();                                                                          \
        s_ = (call);                                                                                 \
        CHECK(s_ == (want) && attn_last_status() == (want) && attn_last_error()[0] != 0 &&           \
                  memcmp(keep_, buf, sizeof(attn_float) * (n)) == 0,                                 \
              "%s: status %d (%s), expected %d; message \"%s\"", #call, (int)s_,                      \
              attn_status_string(s_), (int)(want), attn_last_error());                               \
    } while (0)

static int logged = 0;
static void count_log(void *user, attn_status s, const char *msg)
{
    (void)user; (void)s; (void)msg;
    logged++;
}

void test_errors(void)
{
    attn_float out[64], in[64], w[64];
    int ids[4] = {0, 1, 5, 2}, shape[2] = {INT_MAX, INT_MAX};
    attn_rng r;
    attn_arena a;
    attn_tensor t;
    attn_schedule sch;
    attn_param_desc bad_desc[2] = {{"W", 2, {3, 0}, -1, ATTN_PARAM_ZERO, 0}, {"b", 1, {3}, -1, ATTN_PARAM_ZERO, 0}};
    attn_params p;
    unsigned char keep[64];
    int i;
    for (i = 0; i < 64; i++) { out[i] = (attn_float)i; in[i] = 1; w[i] = 1; }
    attn_rng_seed(&r, 1, 1);

    EXPECT_FAIL(ATTN_ERR_SHAPE, out, 64, attn_linear_forward(out, in, w, NULL, 0, 3, 2));
    EXPECT_FAIL(ATTN_ERR_ARG, out, 64, attn_linear_forward(out, NULL, w, NULL, 2, 3, 2));
    EXPECT_FAIL(ATTN_ERR_OVERFLOW, out, 64, attn_rope_forward(out, in, w, w, INT_MAX, INT_MAX, 4));
    EXPECT_FAIL(ATTN_ERR_OVERFLOW, out, 64, attn_t5_bias_forward(out, w, INT_MAX, INT_MAX, INT_MAX, 8));
    EXPECT_FAIL(ATTN_ERR_OVERFLOW, out, 64, attn_pos_learned_forward(out, in, w, INT_MAX, INT_MAX, 3, INT_MAX));
    EXPECT_FAIL(ATTN_ERR_SHAPE, out, 64, attn_layernorm_forward(out, NULL, NULL, in, NULL, NULL, 3, -1, 1e-5f, ATTN_LN_EPS_INSIDE));
    EXPECT_FAIL(ATTN_ERR_ARG, out, 64, attn_layernorm_forward(out, NULL, NULL, in, NULL, NULL, 3, 3, 1e-5f, (attn_ln_eps)7));
    EXPECT_FAIL(ATTN_ERR_ARG, out, 64, attn_act_forward(out, in, 8, (attn_act)99));
    EXPECT_FAIL(ATTN_ERR_SHAPE, out, 64, attn_act_forward(out, in, 0, ATTN_ACT_RELU));
    EXPECT_FAIL(ATTN_ERR_ARG, out, 64, attn_embedding_forward(out, ids, w, 4, 3, 2));  /* id 5 >= V = 3 */
    EXPECT_FAIL(ATTN_ERR_ARG, w, 64, attn_embedding_backward(w, in, ids, 4, 3, 2));
    EXPECT_FAIL(ATTN_ERR_ARG, out, 64, attn_one_hot(out, ids, 4, 3));
    EXPECT_FAIL(ATTN_ERR_ARG, out, 64, attn_cross_entropy_forward(out, out + 32, in, ids, 4, 3));
    EXPECT_FAIL(ATTN_ERR_SHAPE, out, 64, attn_pos_learned_forward(out, in, w, 1, 9, 2, 8)); /* T > maxT */
    EXPECT_FAIL(ATTN_ERR_SHAPE, out, 64, attn_rope_tables(out, out + 32, 4, 5, 0, 10000)); /* odd dh */
    EXPECT_FAIL(ATTN_ERR_SHAPE, out, 64, attn_t5_bias_forward(out, w, 2, 3, 3, 1));
    EXPECT_FAIL(ATTN_ERR_ARG, out, 64, attn_dropout_forward(out, keep, in, 8, 1, &r));
    EXPECT_FAIL(ATTN_ERR_ARG, out, 64, attn_mse_forward(out, in, NULL, 8, ATTN_REDUCE_SUM));
    EXPECT_FAIL(ATTN_ERR_SHAPE, out, 64, attn_softmax_forward(out, in, 2, 0));
    EXPECT_FAIL(ATTN_ERR_ARG, out, 64, attn_arena_tensor(NULL, &t, 2, shape));
    EXPECT_FAIL(ATTN_ERR_ARG, out, 64, attn_schedule_warmup_cosine(&sch, 0, 1, 10, 10, 0));
    EXPECT_FAIL(ATTN_ERR_ARG, out, 64, attn_schedule_step(&sch, 1, 0, 0.5, 1));
    EXPECT_FAIL(ATTN_ERR_SHAPE, out, 64, attn_params_init(&p, bad_desc, 2));

    attn_arena_init(&a, 256);
    {   /* INT_MAX^3 floats overflow size_t on every platform */
        int huge[3] = {INT_MAX, INT_MAX, INT_MAX};
        EXPECT_FAIL(ATTN_ERR_OVERFLOW, out, 64, attn_arena_tensor(&a, &t, 3, huge));
    }
    EXPECT_FAIL(ATTN_ERR_SHAPE, out, 64, attn_arena_tensor(&a, &t, 2, bad_desc[0].shape));
    {   /* 100 x 100 floats do not fit in 256 bytes */
        int sq[2] = {100, 100};
        EXPECT_FAIL(ATTN_ERR_NOMEM, out, 64, attn_arena_tensor(&a, &t, 2, sq));
    }
    attn_arena_release(&a);

    /* attn_gemm returns nothing: bad arguments set the last error and leave C alone */
    memcpy(w, out, sizeof w);
    attn_clear_error();
    attn_gemm(0, 0, 2, 2, 2, 1, in, 1, in, 2, 0, out, 2); /* lda = 1 < K = 2 */
    CHECK(attn_last_status() == ATTN_ERR_SHAPE && memcmp(w, out, sizeof w) == 0, "gemm with lda < K: status %d, message \"%s\"",
          (int)attn_last_status(), attn_last_error());
    attn_clear_error();
    attn_gemm(2, 0, 2, 2, 2, 1, in, 2, in, 2, 0, out, 2);
    CHECK(attn_last_status() == ATTN_ERR_ARG && memcmp(w, out, sizeof w) == 0, "gemm with transA = 2");
    attn_clear_error();
    attn_gemm(0, 0, -1, 2, 2, 1, in, 2, in, 2, 0, out, 2);
    CHECK(attn_last_status() == ATTN_ERR_SHAPE, "gemm with M = -1");

    /* the log callback sees every error */
    attn_set_log(count_log, NULL);
    attn_softmax_forward(out, in, 0, 0);
    /* an error of the caller's own (a user engine's): message, status, the log, the return value */
    CHECK(attn_set_error(ATTN_ERR_SHAPE, "my engine: dk = %d is odd", 7) == ATTN_ERR_SHAPE &&
              !strcmp(attn_last_error(), "my engine: dk = 7 is odd") && attn_last_status() == ATTN_ERR_SHAPE,
          "attn_set_error: \"%s\"", attn_last_error());
    attn_set_log(NULL, NULL);
    CHECK(logged == 2, "log callback called %d times, expected 2", logged);
    CHECK(strcmp(attn_status_string(ATTN_ERR_NOMEM), "out of memory") == 0, "status strings");
    attn_clear_error();
    CHECK(attn_last_error()[0] == 0 && attn_last_status() == ATTN_OK, "attn_clear_error");
}
