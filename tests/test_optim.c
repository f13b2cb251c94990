/* Optimizers against steps written out by hand; schedules against their formulas (optax's, as the
   HYLA code uses them; the EA paper's SGD with momentum). */
#include "test.h"

#define CLOSE(a, b) (fabs((double)(a) - (double)(b)) <= 1e-6 * (1 + fabs((double)(b))))

static void test_sgd(void)
{
    attn_param_desc d[1] = {{"w", 1, {2}, -1, ATTN_PARAM_ZERO, 0}};
    attn_params p;
    attn_float vel[16];
    attn_params_init(&p, d, 1);
    p.data[0] = 1; p.data[1] = -2;
    p.gdata[0] = (attn_float)0.5; p.gdata[1] = 1;
    /* step 0: b = g; theta -= lr b */
    attn_sgd_step(&p, vel, (attn_float)0.1, (attn_float)0.9, 0);
    CHECK(CLOSE(p.data[0], 0.95) && CLOSE(p.data[1], -2.1), "sgd step 0: %g %g", (double)p.data[0], (double)p.data[1]);
    /* step 1: b = 0.9 * 0.5 + 0.5 = 0.95; theta = 0.95 - 0.095 */
    attn_sgd_step(&p, vel, (attn_float)0.1, (attn_float)0.9, 1);
    CHECK(CLOSE(p.data[0], 0.855) && CLOSE(p.data[1], -2.29), "sgd step 1: %g %g", (double)p.data[0], (double)p.data[1]);
    attn_params_free(&p);
}

static void test_adamw(void)
{
    /* W is 2-D (decayed), b is 1-D (not decayed): optax's mask in the HYLA code */
    attn_param_desc d[2] = {{"W", 2, {1, 1}, -1, ATTN_PARAM_ZERO, 0}, {"b", 1, {1}, -1, ATTN_PARAM_ZERO, 0}};
    attn_params p;
    attn_float m[64] = {0}, v[64] = {0};
    double lr = 0.1, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0.01, g1 = 0.5, g2 = -0.25;
    double mm, vv, th, tb, mb, vb;
    attn_params_init(&p, d, 2);
    p.value[0].data[0] = 1;
    p.value[1].data[0] = 1;
    p.grad[0].data[0] = (attn_float)g1;
    p.grad[1].data[0] = (attn_float)g1;
    attn_adamw_step(&p, m, v, 1, (attn_float)lr, (attn_float)b1, (attn_float)b2, (attn_float)eps, (attn_float)wd);
    /* t = 1: mh = g, vh = g^2, so the update is lr (g / (|g| + eps) + wd theta) */
    th = 1 - lr * (g1 / (fabs(g1) + eps) + wd * 1);
    tb = 1 - lr * (g1 / (fabs(g1) + eps));
    CHECK(CLOSE(p.value[0].data[0], th), "adamw t=1 decayed: %.9g, expected %.9g", (double)p.value[0].data[0], th);
    CHECK(CLOSE(p.value[1].data[0], tb), "adamw t=1 masked: %.9g, expected %.9g", (double)p.value[1].data[0], tb);
    /* t = 2 with g = -0.25 */
    p.grad[0].data[0] = (attn_float)g2;
    p.grad[1].data[0] = (attn_float)g2;
    attn_adamw_step(&p, m, v, 2, (attn_float)lr, (attn_float)b1, (attn_float)b2, (attn_float)eps, (attn_float)wd);
    mm = b1 * (1 - b1) * g1 + (1 - b1) * g2;
    vv = b2 * (1 - b2) * g1 * g1 + (1 - b2) * g2 * g2;
    mb = mm / (1 - b1 * b1);
    vb = vv / (1 - b2 * b2);
    th = th - lr * (mb / (sqrt(vb) + eps) + wd * th);
    tb = tb - lr * (mb / (sqrt(vb) + eps));
    CHECK(CLOSE(p.value[0].data[0], th), "adamw t=2 decayed: %.9g, expected %.9g", (double)p.value[0].data[0], th);
    CHECK(CLOSE(p.value[1].data[0], tb), "adamw t=2 masked: %.9g, expected %.9g", (double)p.value[1].data[0], tb);
    attn_params_free(&p);
}

/* Blocks of 37 and 21 (the vector loops and their tails) over three steps, each step against the
   update written in double from the same parameters: within lr 1e-5 plus a rounding of theta.
   Gradients span 1e-4 .. 1e2. */
static void test_adamw_vector(void)
{
    attn_param_desc d[2] = {{"W", 2, {37, 1}, -1, ATTN_PARAM_ZERO, 0}, {"b", 1, {21}, -1, ATTN_PARAM_ZERO, 0}};
    attn_params p;
    attn_float *m, *v;
    double x0[58], mm[58] = {0}, vv[58] = {0}, lr = 0.01, b1 = 0.9, b2 = 0.95, eps = 1e-6, wd = 0.1, worst = 0;
    attn_rng r;
    int t, i, bad = -1;
#define X(i) (i < 37 ? p.value[0].data + i : p.value[1].data + (i - 37))
#define G(i) (i < 37 ? p.grad[0].data + i : p.grad[1].data + (i - 37))
    attn_params_init(&p, d, 2);
    m = (attn_float *)calloc(p.total, sizeof *m); /* p.total: the blocks with their alignment padding */
    v = (attn_float *)calloc(p.total, sizeof *v);
    attn_rng_seed(&r, 58, 0);
    for (i = 0; i < 58; i++) *X(i) = (attn_float)attn_rng_normal(&r, 0, 1);
    for (t = 1; t <= 3; t++) {
        for (i = 0; i < 58; i++) {
            x0[i] = *X(i);
            *G(i) = (attn_float)(attn_rng_normal(&r, 0, 1) * pow(10, (i % 7) - 4));
        }
        attn_adamw_step(&p, m, v, t, (attn_float)lr, (attn_float)b1, (attn_float)b2, (attn_float)eps, (attn_float)wd);
        for (i = 0; i < 58; i++) {
            double g = *G(i), want, e;
            mm[i] = b1 * mm[i] + (1 - b1) * g;
            vv[i] = b2 * vv[i] + (1 - b2) * g * g;
            want = x0[i] - lr * (mm[i] / (1 - pow(b1, t)) / (sqrt(vv[i] / (1 - pow(b2, t))) + eps) + (i < 37 ? wd * x0[i] : 0));
            e = fabs(*X(i) - want) / (1e-5 * lr + 1.2e-7 * fabs(want));
            if (e > worst) { worst = e; bad = i; }
        }
    }
#undef X
#undef G
    CHECK(worst <= 1, "adamw over blocks of 37 and 21: worst error %.3g of the bound, at %d", worst, bad);
    free(m); free(v);
    attn_params_free(&p);
}

static void test_clip(void)
{
    attn_param_desc d[2] = {{"a", 1, {2}, -1, ATTN_PARAM_ZERO, 0}, {"b", 1, {1}, -1, ATTN_PARAM_ZERO, 0}};
    attn_params p;
    double n;
    attn_params_init(&p, d, 2);
    p.grad[0].data[0] = 3; p.grad[0].data[1] = 0; p.grad[1].data[0] = 4; /* norm 5 */
    n = attn_clip_grad_norm(&p, 10);
    CHECK(CLOSE(n, 5) && p.grad[1].data[0] == 4, "no clipping below the limit");
    n = attn_clip_grad_norm(&p, 1);
    CHECK(CLOSE(n, 5) && CLOSE(p.grad[0].data[0], 3 / (5 + 1e-6)) && CLOSE(p.grad[1].data[0], 4 / (5 + 1e-6)), "clipped to norm 1: %g %g",
          (double)p.grad[0].data[0], (double)p.grad[1].data[0]);
    attn_params_free(&p);
}

/* The norm over 3000 gradients (blocks of 1024 and a tail): ordinary ones, then ones whose squares
   overflow float (1e20) and ones whose squares underflow it (1e-25), against a sum in double. */
static void test_clip_range(void)
{
    attn_param_desc d[1] = {{"w", 1, {3000}, -1, ATTN_PARAM_ZERO, 0}};
    attn_params p;
    double s, n;
    int i, k;
    attn_params_init(&p, d, 1);
    for (k = 0; k < 3; k++) {
        double scale = k == 0 ? 1 : k == 1 ? 1e20 : 1e-25;
        for (i = 0, s = 0; i < 3000; i++) {
            double g = (i < 1024 || k == 0 ? 1 : scale) * (0.5 + (i * 7919 % 1000) / 1000.0);
            p.grad[0].data[i] = (attn_float)g;
            s += (double)p.grad[0].data[i] * p.grad[0].data[i];
        }
        n = attn_clip_grad_norm(&p, 1e300);
        CHECK(fabs(n - sqrt(s)) <= 1e-6 * sqrt(s), "gradient norm with blocks at scale %g: %.9g, want %.9g", scale, n, sqrt(s));
    }
    for (k = 0; k < 3; k++) { /* tiny gradients alone: the norm is not lost to float's underflow */
        for (i = 0, s = 0; i < 3000; i++) {
            p.grad[0].data[i] = (attn_float)(1e-25 * (k + 1));
            s += (double)p.grad[0].data[i] * p.grad[0].data[i];
        }
        n = attn_clip_grad_norm(&p, 1);
        CHECK(fabs(n - sqrt(s)) <= 1e-6 * sqrt(s), "gradient norm of tiny gradients: %.9g, want %.9g", n, sqrt(s));
    }
    p.grad[0].data[2500] = NAN;
    CHECK(t_isnan((attn_float)attn_clip_grad_norm(&p, 1)), "a NaN gradient gives a NaN norm");
    attn_params_free(&p);
}

static void test_schedules(void)
{
    attn_schedule s;
    long t, S = 100, W = 10, bad = 0;
    double lr = 1e-3;
    CHECK(attn_schedule_constant(&s, 0.02) == ATTN_OK && attn_schedule_lr(&s, 12345) == 0.02, "constant");
    attn_schedule_step(&s, 0.02, 2500, 0.25, 1); /* the EA mixture run: lr / 4 after epoch 2500 */
    CHECK(attn_schedule_lr(&s, 2499) == 0.02 && attn_schedule_lr(&s, 2500) == 0.005 && attn_schedule_lr(&s, 9999) == 0.005, "step drop");
    attn_schedule_step(&s, 1, 10, 0.5, 100);
    CHECK(CLOSE(attn_schedule_lr(&s, 35), 0.125), "step halving every 10");
    /* HYLA: warmup_cosine_decay_schedule(0, lr, W, S - W, 0.1 lr), optax's closed form */
    attn_schedule_warmup_cosine(&s, 0, lr, W, S - W, 0.1 * lr);
    for (t = 0; t <= S + 5; t++) {
        double want = t < W ? lr * t / W : t < S - W ? 0.1 * lr + 0.9 * lr * 0.5 * (1 + cos(3.141592653589793 * (t - W) / (S - 2 * W))) : 0.1 * lr;
        if (!CLOSE(attn_schedule_lr(&s, t), want)) {
            bad++;
            printf("  t = %ld: %.9g, expected %.9g\n", t, attn_schedule_lr(&s, t), want);
        }
    }
    CHECK(bad == 0, "warmup-cosine differs from its closed form at %ld steps", bad);
    CHECK(CLOSE(attn_schedule_lr(&s, 50), 0.55 * lr), "warmup-cosine halfway: %g", attn_schedule_lr(&s, 50));
    /* optax with init > 0 and no warmup */
    attn_schedule_warmup_cosine(&s, 0.5, 2, 0, 8, 0);
    CHECK(attn_schedule_lr(&s, 0) == 2 && CLOSE(attn_schedule_lr(&s, 4), 1) && attn_schedule_lr(&s, 8) == 0, "cosine without warmup");
    attn_schedule_warmup_cosine(&s, 0.5, 2, 4, 8, 0);
    CHECK(CLOSE(attn_schedule_lr(&s, 2), 1.25), "warmup from init 0.5 to peak 2: %g at t = 2", attn_schedule_lr(&s, 2));
}

/* attn_optim: the same steps as the bare functions, one step count for both, refusals. */
static void test_optim_struct(void)
{
    attn_param_desc desc[2] = {{"W", 2, {3, 5}, -1, ATTN_PARAM_ZERO, 0}, {"b", 1, {3}, -1, ATTN_PARAM_ZERO, 0}};
    attn_params a, b;
    attn_optim o, bad;
    attn_float *m, *v;
    attn_rng r;
    int kind, t;
    size_t i;
    for (kind = 0; kind < 2; kind++) {
        attn_params_init(&a, desc, 2);
        attn_params_init(&b, desc, 2);
        attn_rng_seed(&r, 4, 4);
        attn_params_init_normal(&a, &r, 0, 1);
        memcpy(b.data, a.data, sizeof(attn_float) * a.total);
        m = (attn_float *)calloc(a.total, sizeof *m); v = (attn_float *)calloc(a.total, sizeof *v);
        CHECK((kind ? attn_optim_adamw(&o, &a, 0.9, 0.99, 1e-8, 0.1) : attn_optim_sgd(&o, &a, 0.9)) == ATTN_OK, "make");
        for (t = 0; t < 5; t++) {
            for (i = 0; i < a.total; i++) a.gdata[i] = b.gdata[i] = (attn_float)attn_rng_normal(&r, 0, 1);
            attn_optim_step(&o, &a, 0.01);
            if (kind) attn_adamw_step(&b, m, v, t + 1, (attn_float)0.01, (attn_float)0.9, (attn_float)0.99, (attn_float)1e-8, (attn_float)0.1);
            else attn_sgd_step(&b, m, (attn_float)0.01, (attn_float)0.9, t);
        }
        CHECK(o.step == 5 && memcmp(a.data, b.data, sizeof(attn_float) * a.total) == 0, "%s: attn_optim equals the bare steps",
              kind ? "AdamW" : "SGD");
        attn_optim_free(&o);
        free(m); free(v);
        attn_params_free(&b);
        attn_params_free(&a);
    }
    attn_params_init(&a, desc, 2);
    attn_params_init(&b, desc + 1, 1);
    memset(&bad, 0x5A, sizeof bad);
    CHECK(attn_optim_adamw(&bad, &a, 1, 0.99, 1e-8, 0) == ATTN_ERR_ARG, "beta1 = 1 refused");
    CHECK(attn_optim_sgd(&bad, &a, -1) == ATTN_ERR_ARG, "momentum -1 refused");
    CHECK(attn_optim_sgd(&o, &a, 0.9) == ATTN_OK && attn_optim_step(&o, &b, 0.1) == ATTN_ERR_SHAPE && o.step == 0,
          "a step on other parameters refused");
    CHECK(attn_optim_step(&o, &a, NAN) == ATTN_ERR_ARG && o.step == 0, "a NaN rate refused, no step counted");
    attn_optim_free(&o);
    attn_params_free(&b);
    attn_params_free(&a);
}

void test_optim(void)
{
    test_optim_struct();
    test_sgd();
    test_adamw();
    test_adamw_vector();
    test_clip();
    test_clip_range();
    test_schedules();
}
