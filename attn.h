/* attn.h - attention, its backward passes, and the pieces to train with it, in one C header.
                                                                    no warranty; MIT or public domain

   Do this:
       #define ATTN_IMPLEMENTATION
   before you include this file in *one* C or C++ file to create the implementation.
   Every other file includes it without the define and sees only declarations.

   attn.h gives you tensors as plain views, a hand-written SIMD/OpenMP matrix multiply (optionally
   routed to CBLAS), forward/backward pairs for the layers transformers are built from, optimizers
   and schedules. Everything is plain C99, depends on libc and libm only, never allocates behind your
   back except where a function says so, and never prints, exits or aborts on a user mistake: every
   function that can fail returns an attn_status and leaves a message in attn_last_error().

   EXAMPLE: a two-layer causal transformer learns to continue sequences that repeat three random
   tokens (README.md has the same program; `make test` runs it)

       #define ATTN_IMPLEMENTATION
       #include "attn.h"
       #include <stdio.h>
       #include <stdlib.h>
       #include <string.h>

       enum { B = 16, T = 12, V = 8 };  // batch, sequence length, vocabulary

       int main(void) {
           attn_transformer_config c = attn_transformer_config_default();  // a causal token model
           attn_transformer m;
           attn_optim opt;
           attn_rng rng;
           int x[B * T], next[B * T], i, step;
           attn_float logits[B * T * V], probs[B * T * V], dlogits[B * T * V], nll[B * T], loss = 0, *cache;
           void *work;
           size_t cache_floats, work_bytes;
           c.vocab = c.out = V; c.max_T = T; c.d = 32; c.layers = 2; c.heads = 2; c.dk = c.dv = 16;
           c.mlp = 64;
           c.kinds[0] = c.kinds[1] = ATTN_SOFTMAX;  // or ATTN_EXPRESSIVE, ATTN_COG, ATTN_HYLA, ...
           attn_rng_seed(&rng, 1, 0);
           if (attn_transformer_init(&m, &c, &rng) != ATTN_OK ||
               attn_optim_adamw(&opt, &m.p, 0.9, 0.999, 1e-8, 0) != ATTN_OK) {  // AdamW, no decay
               puts(attn_last_error());
               return 1;
           }
           cache = malloc(sizeof(attn_float) * (cache_floats = attn_transformer_cache_floats(&m, B, T)));
           work = malloc(work_bytes = attn_transformer_work_bytes(&m, B, T));
           for (step = 0; step <= 200; step++) {
               for (i = 0; i < B * T; i++)  // each sequence repeats 3 random tokens: x[t] = x[t - 3]
                   x[i] = i % T < 3 ? (int)attn_rng_int(&rng, V) : x[i - 3];
               for (i = 0; i < B * T; i++)  // predict the next token where it is determined (-1: no loss)
                   next[i] = i % T >= 2 && i % T < T - 1 ? x[i + 1] : -1;
               attn_transformer_forward(&m, logits, cache, cache_floats, x, NULL, B, T, work, work_bytes);
               attn_cross_entropy_forward(nll, probs, logits, next, B * T, V);
               for (loss = 0, i = 0; i < B * T; i++) loss += nll[i] / (B * (T - 3));
               memset(dlogits, 0, sizeof dlogits);  // backward passes accumulate
               attn_cross_entropy_backward(dlogits, NULL, 1.0f / (B * (T - 3)), probs, next, B * T, V);
               attn_params_zero_grad(&m.p);
               attn_transformer_backward(&m, dlogits, cache, cache_floats, x, NULL, B, T, work, work_bytes);
               attn_optim_step(&opt, &m.p, 3e-3);
               if (step % 50 == 0) printf("step %3d  loss %.4f\n", step, loss);
           }
           free(cache);
           free(work);
           attn_optim_free(&opt);
           attn_transformer_free(&m);
           return loss < 0.05f ? 0 : 1;
       }

   TABLE OF CONTENTS (the same order in the declarations and in the implementation)
       1. config            ATTNDEF, allocator, assert, SIMD and OpenMP switches, versions, attn_float
       2. errors and RNG    attn_status, attn_last_error, log callback; PCG32 random numbers
       3. memory, tensors   attn_tensor views, attn_arena, attn_params (value block + gradient block)
       4. kernels           attn_gemm (+ its scalar reference), dot, axpy, scale, row max / sum
       5. ops               linear, layer/RMS norm, activations, SwiGLU, softmax, embedding, one-hot,
                            positional encodings (learned, sinusoidal, RoPE, T5 buckets), dropout, losses
       6. attention         the kind table (softmax, expressive, Cog, centered, sigmoid, linear_raw,
                            kernel, Taylor, differential, RMSHead, HYLA and its ablations, HYLA+),
                            dropout, sparse patterns (Longformer, BigBird), Linformer, the attention
                            layer; tiled forward/backward in O(T d) memory
       7. optimizers        SGD with momentum, Adam/AdamW (bare steps, or attn_optim with its state),
                            schedules, global-norm clipping
       8. models            the expressive-attention paper's cisformer; a pre-norm transformer (the
                            HYLA paper's model, the Cogformer); the thesis' post-LN encoder-decoder
                            with greedy and beam-search decoding
       9. tasks             the NT series (NT, NT-S, NT-R, the mixture) and their cycle census; fuzzy
                            logic; SRAVEN; digit strings to reverse or sort
      10. analysis and io   checkpoints (a self-checking record of a model's parameters); SVG line
                            plots, bar charts and heatmaps; probes (logistic regression, the Cog
                            paper's collapse probes); the thesis' band + sparse-error analysis

   CONVENTIONS
       Arrays are row-major; shapes are written as [rows, cols] in the comment of every function and
       follow PyTorch's order: (B, T, C) activations, (B, H, T, dh) inside attention, weights of a
       linear layer as [out, in]. A forward function writes its outputs first, then reads inputs,
       then takes dimensions. A backward function ACCUMULATES (+=) into its gradient buffers; pass
       NULL for a gradient you do not need. Call attn_params_zero_grad() between steps. Every buffer
       the caller provides comes with its size: a forward pass's cache [cache_floats] (what backward
       reads), its scratch work [work_bytes], each checked against the function's size query
       (attn_X_cache_floats, attn_X_work_bytes): too small is refused, with nothing written.

   COMPILE-TIME OPTIONS (define before including; "all files" = in every file that includes attn.h)
       ATTN_IMPLEMENTATION  one file: emit the implementation.
       ATTN_STATIC          implementation file: make every function static (private to that file).
       ATTN_DOUBLE          all files: attn_float is double instead of float. SIMD is then off (the
                            kernels run their scalar versions); meant for float64 gradient checks.
       ATTN_MALLOC(sz), ATTN_FREE(p)
                            implementation file: your allocator; define both or neither.
       ATTN_ASSERT(x)       implementation file: checks of the library's own invariants (default
                            assert()); user mistakes never reach it, they return a status.
       ATTN_NO_SIMD         implementation file: use the portable scalar kernels only.
       ATTN_NO_DISPATCH     implementation file: on x86-64 without -m flags, the SSE2 kernels only
                            (no AVX2 and AVX-512 kernels chosen at run time; see below).
       ATTN_SELF            implementation file: this header's file name if it is not "attn.h" (the
                            run-time build includes itself once per ISA).
       ATTN_NO_OPENMP       implementation file: ignore OpenMP even when compiled with -fopenmp.
       ATTN_USE_CBLAS       implementation file: attn_gemm calls cblas_sgemm (cblas_dgemm under
                            ATTN_DOUBLE); include <cblas.h> is done for you, link your BLAS.
       ATTN_NO_STDIO        implementation file: no <stdio.h>; error messages are then the fixed
                            text of the failing check, without the numbers.

   REFERENCES (cited below by authors and year; sections and equations are the papers')
       Vaswani et al. 2017        Attention is all you need, arXiv:1706.03762
       Gros 2024                  Reorganizing attention-space geometry with expressive attention,
                                  arXiv:2407.18601 (expressive attention, the cisformer, the NT tasks)
       Lv et al. 2024             More expressive attention with negative weights, arXiv:2411.07176 (Cog)
       Ali et al. 2023            Centered self-attention layers, arXiv:2306.01610
       Ye et al. 2024             Differential transformer, arXiv:2410.05258
       Schug et al. 2025          Attention as a hypernetwork, ICLR 2025, arXiv:2406.05816 (HYLA, RMSHead,
                                  fuzzy logic, SRAVEN)
       Katharopoulos et al. 2020  Transformers are RNNs, arXiv:2006.16236 (kernel linear attention)
       Wang et al. 2020           Linformer, arXiv:2006.04768
       Beltagy et al. 2020        Longformer, arXiv:2004.05150
       Zaheer et al. 2020         Big Bird, arXiv:2007.14062
       Raffel et al. 2020         T5, arXiv:1910.10683 (relative-position buckets)
       Su et al. 2021             RoFormer, arXiv:2104.09864 (RoPE)
       Conti 2024                 The math behind transformers, thesis, 2023/2024 (Taylor linear attention,
                                  the band + sparse-error analysis, the encoder-decoder)

   SIMD is chosen at compile time from the compiler's macros, first match wins: ATTN_NO_SIMD or
   ATTN_DOUBLE (scalar), WASM SIMD128 (-msimd128), AVX-512F, AVX2 (with FMA, or a multiply and an
   add under -mavx2 alone), SSE2, NEON (AArch64), scalar. On x86-64 with GCC or Clang and no -m
   flag (SSE2, the baseline) the AVX2 + FMA and AVX-512F kernels of attn_gemm, the vector
   primitives and attention's fused forward and panel products are built as well and the best the
   CPU runs is chosen at start-up (attn_simd_set; ATTN_SIMD in the environment); the other kernels
   are still SSE2 there. attn_simd_name() says
   which one runs. Threads come from OpenMP (-fopenmp); the results never depend on the number of
   threads.
*/

#ifndef ATTN_H_INCLUDED
#define ATTN_H_INCLUDED

/* C99 or C++11; MSVC's C mode sets __STDC_VERSION__ only with /std:c11, and compiles the header. */
#if !defined(__cplusplus) && !defined(_MSC_VER) && (!defined(__STDC_VERSION__) || __STDC_VERSION__ < 199901L)
#error "attn.h needs C99 or later (compile with -std=c99, -std=gnu99 or newer)"
#endif

#include <stddef.h>
#include <stdint.h>

/* ============================================================================================== */
/* 1. config                                                                                       */
/* ============================================================================================== */

#define ATTN_VERSION_MAJOR 0
#define ATTN_VERSION_MINOR 2
#define ATTN_VERSION_PATCH 0
#define ATTN_VERSION_STRING "0.2.0"

#ifndef ATTNDEF
#ifdef ATTN_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define ATTNDEF static __attribute__((unused)) /* a file need not use every function */
#else
#define ATTNDEF static
#endif
#else
#define ATTNDEF extern
#endif
#endif

#ifdef ATTN_DOUBLE
typedef double attn_float;
#else
typedef float attn_float;
#endif

#define ATTN_MAX_DIMS 4  /* a tensor view has at most this many dimensions */
#define ATTN_ALIGN 64    /* byte alignment of everything an arena or attn_params hands out */

#ifdef __cplusplus
extern "C" {
#endif

ATTNDEF const char *attn_simd_name(void); /* "avx512", "avx2", "sse2", "neon", "wasm128",
                                                   "wasm128-relaxed", "scalar" */
/* The kernels' ISA, by name (NULL: the best this machine runs). A build for x86-64's baseline (no
   -mavx2 or -march: `cc -O2`) carries SSE2, AVX2 + FMA and AVX-512F kernels (attn_gemm's, the
   vector primitives' and attention's fused forward so far) and starts with the best the CPU has, or
   with ATTN_SIMD from the environment when that names one it runs; other builds carry one. Not
   while another thread computes. Returns 0, or ATTN_ERR_ARG (the error message says what this build
   and machine run). Those kernels give the bits of a build for that ISA alone; ISAs may differ from
   each other in the last bits. */
ATTNDEF int attn_simd_set(const char *name);
/* Threads used by attn_gemm and the other parallel kernels. n <= 0 restores the OpenMP default.
   Builds without OpenMP always use one thread. */
ATTNDEF void attn_set_threads(int n);
ATTNDEF int attn_get_threads(void);

/* ============================================================================================== */
/* 2. errors and RNG                                                                               */
/* ============================================================================================== */

typedef enum attn_status {
    ATTN_OK = 0,
    ATTN_ERR_ARG,      /* a NULL pointer, an unknown enum value, a value out of its range, a workspace or
                          buffer of the caller's smaller than its size query asks */
    ATTN_ERR_SHAPE,    /* a dimension < 1, or shapes that do not fit together */
    ATTN_ERR_OVERFLOW, /* sizes whose product does not fit in memory addresses */
    ATTN_ERR_NOMEM,    /* an allocation failed, or an arena is full */
    ATTN_ERR_IO,       /* a file could not be opened, read or written */
    ATTN_ERR_FORMAT    /* a file is not what it claims to be (magic, version, size, checksum) */
} attn_status;

ATTNDEF const char *attn_status_string(attn_status s);
/* The message of the last failure in this thread ("" if none), and its status. Successful calls do
   not clear it; attn_clear_error() does. */
ATTNDEF const char *attn_last_error(void);
ATTNDEF attn_status attn_last_status(void);
ATTNDEF void attn_clear_error(void);
/* Raises an error of your own (an engine, a modifier or a callback of yours): sets this thread's
   message (printf's format) and status, tells the log, and returns s. */
ATTNDEF attn_status attn_set_error(attn_status s, const char *fmt, ...);
/* Called with every error message as it is raised (from any thread); NULL turns it off. */
typedef void (*attn_log_fn)(void *user, attn_status s, const char *message);
ATTNDEF void attn_set_log(attn_log_fn fn, void *user);

/* PCG32 (O'Neill 2014, "XSH RR" output, 64-bit LCG state): a 32-bit stream fixed by (seed, stream).
   Integer and uniform draws are bit-identical on every platform and compiler. Streams with different
   `stream` values are independent; attn_rng_split derives a child generator from a parent. */
typedef struct attn_rng {
    uint64_t state, inc;
} attn_rng;

ATTNDEF void attn_rng_seed(attn_rng *r, uint64_t seed, uint64_t stream);
ATTNDEF uint32_t attn_rng_u32(attn_rng *r);
/* Uniform in [0, n), unbiased (Lemire's multiply-and-reject); n >= 1. */
ATTNDEF uint32_t attn_rng_int(attn_rng *r, uint32_t n);
/* Uniform in [0, 1): 53 random bits from two u32 draws. */
ATTNDEF double attn_rng_uniform(attn_rng *r);
/* Normal(mean, std) by Box-Muller (cosine branch only): exactly four u32 draws per number. The value
   goes through libm's log and cos, so it matches across platforms to libm's rounding. */
ATTNDEF double attn_rng_normal(attn_rng *r, double mean, double std);
/* A child generator with its own seed and stream, both drawn from the parent (which advances). */
ATTNDEF attn_rng attn_rng_split(attn_rng *r);

/* ============================================================================================== */
/* 3. memory and tensors                                                                           */
/* ============================================================================================== */

/* A view: a pointer plus a row-major contiguous shape. Views never own memory. */
typedef struct attn_tensor {
    attn_float *data;
    int ndim;
    int shape[ATTN_MAX_DIMS];
} attn_tensor;

ATTNDEF size_t attn_tensor_numel(const attn_tensor *t);
/* Bytes an arena uses for a tensor of this shape (rounded up to ATTN_ALIGN); 0 if the shape is
   invalid (ndim outside 1..ATTN_MAX_DIMS, a dimension < 1) or its size overflows. */
ATTNDEF size_t attn_tensor_bytes(int ndim, const int *shape);

/* A bump allocator over one block: attn_arena_init allocates it (ATTN_MALLOC), attn_arena_use takes
   a block you own. To size one, add attn_tensor_bytes() of every tensor, plus ATTN_ALIGN - 1 when
   your block is not ATTN_ALIGN-aligned. */
typedef struct attn_arena {
    unsigned char *base; /* aligned start */
    size_t cap, used;
    void *owned; /* what attn_arena_init allocated, or NULL */
} attn_arena;

ATTNDEF attn_status attn_arena_init(attn_arena *a, size_t bytes);
ATTNDEF attn_status attn_arena_use(attn_arena *a, void *mem, size_t bytes);
/* A measuring arena, without a block: attn_arena_tensor hands out tensors with data NULL and only
   adds up a->used. One function that lays out its tensors then serves twice: called on a measuring
   arena it sizes the layout, on an arena over a block of that size it carves it (the library lays
   out its own caches and workspaces this way). */
ATTNDEF void attn_arena_measure(attn_arena *a);
ATTNDEF void attn_arena_reset(attn_arena *a);   /* forget every tensor; keep the block */
ATTNDEF void attn_arena_release(attn_arena *a); /* free the block if the arena owns it */
/* Hands out an uninitialised tensor of the given shape. On failure *t is left as it was. */
ATTNDEF attn_status attn_arena_tensor(attn_arena *a, attn_tensor *t, int ndim, const int *shape);

/* Parameters: the values of all of a model's tensors in one block, their gradients in a mirror
   block of the same layout, so an optimizer step or a checkpoint is one loop over one array. Each
   tensor's description says how attn_params_draw fills it (fan: `value`, or 0 for the last
   dimension, the inputs of a row-major [out, in] matrix):
     ZERO 0 (what attn_params_init leaves); CONST `value`; NORMAL N(0, value^2);
     FAN_NORMAL N(0, 1 / fan); FAN_UNIFORM U(+-1 / sqrt(fan)) (PyTorch's nn.Linear);
     FAN_LECUN flax's lecun_normal, N(0, 1) truncated to [-2, 2], scaled to variance 1 / fan. */
typedef enum attn_param_init {
    ATTN_PARAM_ZERO = 0,
    ATTN_PARAM_CONST,
    ATTN_PARAM_NORMAL,
    ATTN_PARAM_FAN_NORMAL, /* the FAN rules in the order of attn_init_kind's NORMAL, UNIFORM, LECUN */
    ATTN_PARAM_FAN_UNIFORM,
    ATTN_PARAM_FAN_LECUN
} attn_param_init;
typedef struct attn_param_desc {
    const char *name;
    int ndim;
    int shape[ATTN_MAX_DIMS];
    int decay;            /* weight decay applies: 1 yes, 0 no, -1 default (yes iff ndim >= 2) */
    attn_param_init init; /* how attn_params_draw fills it (0: zeros) */
    double value;         /* CONST: the value; NORMAL: the sd; FAN_*: the fan-in (0: the last dim) */
} attn_param_desc;

typedef struct attn_params {
    int count;            /* number of tensors */
    size_t total;         /* floats in each block */
    attn_float *data;     /* values, `total` floats */
    attn_float *gdata;    /* gradients, same layout */
    attn_tensor *value;   /* [count] views into data */
    attn_tensor *grad;    /* [count] views into gdata */
    size_t *offset;       /* [count + 1] start of each tensor in the blocks */
    unsigned char *decay; /* [count] 1 if weight decay applies (editable) */
    const char **name;    /* [count] the names given in the descriptors (not copied) */
    void *owned;          /* the block attn_params_init allocated, or NULL */
} attn_params;

/* Bytes attn_params_init_in needs for these descriptors; 0 if one is invalid or it overflows. */
ATTNDEF size_t attn_params_bytes(const attn_param_desc *desc, int count);
ATTNDEF attn_status attn_params_init(attn_params *p, const attn_param_desc *desc, int count);
ATTNDEF attn_status attn_params_init_in(attn_params *p, const attn_param_desc *desc, int count,
                                        void *mem, size_t bytes);
ATTNDEF void attn_params_free(attn_params *p);
ATTNDEF void attn_params_zero_grad(attn_params *p);
/* Every value drawn from Normal(mean, std), in block order. */
ATTNDEF void attn_params_init_normal(attn_params *p, attn_rng *r, attn_float mean, attn_float std);
/* Every tensor of p (made from these count descriptions) filled as its description's init says,
   tensor after tensor, element after element (one draw each for the random rules). ATTN_ERR_ARG
   (nothing written) for descriptions that do not match p or an unknown rule. */
ATTNDEF attn_status attn_params_draw(attn_params *p, const attn_param_desc *desc, int count, attn_rng *rng);
/* The index of the tensor with this name, or -1. */
ATTNDEF int attn_params_find(const attn_params *p, const char *name);
/* Any backward pass over a parameter block (a model's, a layer's, your own) against central finite
   differences of its loss. loss(ctx, backward) runs your forward pass at p's current values and
   returns the loss; with backward = 1 it also accumulates dL/dtheta into p->gdata, which is zeroed
   before that call. The loss must be deterministic (dropout off or its seed fixed). Each tensor's
   entries (all, or max_entries of them drawn from seed when max_entries > 0 is smaller) are moved by
   +-h; the error is |fd - analytic| / max(1, |fd| + |analytic|). h and tol 0 take this build's
   defaults: 1e-2 and 1e-2 in float, 1e-6 and 1e-6 in double. Returns 1 when the largest error (in
   *max_err, may be NULL) is at most tol, 0 when not, -1 (error set) for a loss that is not finite
   (at p's values or at a moved entry: the check cannot be made), a negative or non-finite h or tol,
   max_entries < 0, or no memory.
   Kinks (ReLU at 0, |x| at 0): where the central difference misses by more than tol but the
   one-sided difference on one side, (L(x + h) - L(x)) / h or (L(x) - L(x - h)) / h, is within tol,
   the entry's error is that side's and it counts as a kink; attn_gradcheck_kinks() gives the count
   of the last check in this thread. A wrong gradient misses on both sides.
   p->data is left as it was, bit for bit; p->gdata holds the analytic gradient. Allocates
   (ATTN_MALLOC) a copy of the gradient for the call. */
typedef double (*attn_loss_fn)(void *ctx, int backward);
ATTNDEF int attn_gradcheck_params(attn_params *p, attn_loss_fn loss, void *ctx, uint64_t seed, double h,
                                  double tol, int max_entries, double *max_err);
/* The entries the last gradient check in this thread (attn_gradcheck_params or _attention) judged
   by a one-sided difference, at a kink. */
ATTNDEF int attn_gradcheck_kinks(void);

/* ============================================================================================== */
/* 4. kernels                                                                                      */
/* ============================================================================================== */

/* C = alpha * op(A) op(B) + beta * C, row-major, op(X) = X or X^T (transX = 0 or 1).
   op(A) is [M, K], op(B) is [K, N], C is [M, N]; lda, ldb, ldc are the row strides of A, B, C as
   stored (A is [M, lda] when transA = 0 and [K, lda] when transA = 1). beta = 0 ignores what is in C
   (NaNs included). Invalid arguments set attn_last_error() and leave C untouched. Uses packed
   panels and a SIMD micro-kernel, threads above a size threshold; results do not depend on the
   thread count. Its packing buffer (ATTN_MALLOC) is kept between calls, one per calling thread:
   the first packed product of a thread allocates KC (NC + MC t) floats for t threads (the kernels'
   blocking: 9.6 MB + 0.2 MB t with AVX-512, 2.2 + 0.1 t with AVX2), enough for every later product
   with at most t threads, so no later call allocates. attn_gemm_release frees the calling
   thread's buffer (call it before a thread that used attn_gemm ends). Without thread-local
   storage in the compiler the buffer lives for one call. If allocating fails it falls back to the
   unpacked reference loop, so it cannot fail on memory. */
ATTNDEF void attn_gemm(int transA, int transB, int M, int N, int K, attn_float alpha,
                       const attn_float *A, int lda, const attn_float *B, int ldb, attn_float beta,
                       attn_float *C, int ldc);
ATTNDEF void attn_gemm_release(void);
/* The packing buffer from the caller instead: attn_gemm_scratch_bytes(t) bytes serve every product
   on up to t threads; attn_gemm_scratch(mem, bytes) lends them to the calling thread's products
   (NULL: back to its own buffer, allocated when needed), and nothing of the caller's is ever
   freed. A product that needs more (more threads) allocates its own buffer for that call, and the
   products the library runs on its worker threads (attention's tiles) use those threads' own
   buffers: a program that must never allocate runs on one thread (attn_set_threads(1)). With
   CBLAS there is no buffer (0 bytes). ATTN_ERR_ARG for fewer bytes than one thread needs, or a
   compiler without thread-local storage. */
ATTNDEF size_t attn_gemm_scratch_bytes(int threads);
ATTNDEF attn_status attn_gemm_scratch(void *mem, size_t bytes);
/* The same product by the plain triple loop with double accumulation: the oracle of the tests. */
ATTNDEF void attn_gemm_reference(int transA, int transB, int M, int N, int K, attn_float alpha,
                                 const attn_float *A, int lda, const attn_float *B, int ldb,
                                 attn_float beta, attn_float *C, int ldc);

ATTNDEF attn_float attn_dot(size_t n, const attn_float *x, const attn_float *y); /* sum x_i y_i */
ATTNDEF void attn_axpy(size_t n, attn_float a, const attn_float *x, attn_float *y); /* y += a x */
ATTNDEF void attn_scale(size_t n, attn_float a, attn_float *x);                    /* x *= a */
ATTNDEF attn_float attn_max(size_t n, const attn_float *x); /* max_i x_i; -INFINITY if n = 0 */
/* out[i] = exp(x[i]) by the SIMD exponential the kernels use: relative error below 4e-7 for x in
   [-87, 88], and x is clamped to that range in every build (scalar and double builds use libm's
   exp inside it). out may be x. */
ATTNDEF void attn_exp(size_t n, const attn_float *x, attn_float *out);
/* out[i] = tanh(x[i]), SIMD: an odd Taylor polynomial for |x| < 0.3, sign(x) (1 - e) / (1 + e) with
   e = exp(-2|x|) above, x clamped to [-9, 9] (tanh(9) rounds to 1 in float); absolute error below
   1e-6, odd to the bit. out may be x. */
ATTNDEF void attn_tanh(size_t n, const attn_float *x, attn_float *out);
ATTNDEF attn_float attn_sum(size_t n, const attn_float *x); /* sum_i x_i */
/* out[r] = max (or sum) of row r of x [rows, cols]. */
ATTNDEF void attn_row_max(attn_float *out, const attn_float *x, int rows, int cols);
ATTNDEF void attn_row_sum(attn_float *out, const attn_float *x, int rows, int cols);

/* ============================================================================================== */
/* 5. ops: forward/backward pairs. Backward functions ACCUMULATE into every non-NULL gradient.      */
/* ============================================================================================== */

/* Linear: out[N, OC] = inp[N, C] W[OC, C]^T + b[OC] (b may be NULL). */
ATTNDEF attn_status attn_linear_forward(attn_float *out, const attn_float *inp, const attn_float *W,
                                        const attn_float *b, int N, int C, int OC);
ATTNDEF attn_status attn_linear_backward(attn_float *dinp, attn_float *dW, attn_float *db,
                                         const attn_float *dout, const attn_float *inp,
                                         const attn_float *W, int N, int C, int OC);

/* Layer norm over the last dimension of inp[N, C], population variance v = mean((x - mu)^2):
     ATTN_LN_EPS_INSIDE   xhat = (x - mu) / sqrt(v + eps)        (PyTorch, flax; eps 1e-5 / 1e-6)
     ATTN_LN_EPS_OUTSIDE  xhat = (x - mu) / (sqrt(v) + eps)      (the thesis' form)
   out = gamma * xhat + beta; gamma, beta [C] may both be NULL (no affine parameters).
   Caches mean[N] and rstd[N] (the factor multiplying x - mu) for the backward pass. */
typedef enum attn_ln_eps { ATTN_LN_EPS_INSIDE = 0, ATTN_LN_EPS_OUTSIDE = 1 } attn_ln_eps;
ATTNDEF attn_status attn_layernorm_forward(attn_float *out, attn_float *mean, attn_float *rstd,
                                           const attn_float *inp, const attn_float *gamma,
                                           const attn_float *beta, int N, int C, attn_float eps,
                                           attn_ln_eps mode);
ATTNDEF attn_status attn_layernorm_backward(attn_float *dinp, attn_float *dgamma, attn_float *dbeta,
                                            const attn_float *dout, const attn_float *inp,
                                            const attn_float *gamma, const attn_float *mean,
                                            const attn_float *rstd, int N, int C, attn_float eps,
                                            attn_ln_eps mode);

/* RMS norm: out[N, C] = x * rstd * g, rstd = 1 / sqrt(mean(x^2) + eps); g [C] may be NULL.
   Caches rstd[N]. */
ATTNDEF attn_status attn_rmsnorm_forward(attn_float *out, attn_float *rstd, const attn_float *inp,
                                         const attn_float *g, int N, int C, attn_float eps);
ATTNDEF attn_status attn_rmsnorm_backward(attn_float *dinp, attn_float *dg, const attn_float *dout,
                                          const attn_float *inp, const attn_float *g,
                                          const attn_float *rstd, int N, int C);

/* Elementwise activations, out[n] = f(inp[n]); backward: dinp += f'(inp) dout. */
typedef enum attn_act {
    ATTN_ACT_IDENTITY = 0,
    ATTN_ACT_RELU,      /* max(x, 0) */
    ATTN_ACT_GELU_TANH, /* x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))  (flax nn.gelu default) */
    ATTN_ACT_GELU_ERF,  /* x/2 (1 + erf(x / sqrt 2))                       (PyTorch default) */
    ATTN_ACT_TANH,
    ATTN_ACT_SILU,      /* x sigmoid(x) */
    ATTN_ACT_SIGMOID,
    ATTN_ACT_COUNT
} attn_act;
ATTNDEF const char *attn_act_name(attn_act a);
ATTNDEF attn_status attn_act_forward(attn_float *out, const attn_float *inp, size_t n, attn_act a);
ATTNDEF attn_status attn_act_backward(attn_float *dinp, const attn_float *dout, const attn_float *inp,
                                      size_t n, attn_act a);

/* SwiGLU gate: out[n] = a[n] * silu(b[n])  (the Llama FFN is W_o (x W_g . silu(x W_p))). */
ATTNDEF attn_status attn_swiglu_forward(attn_float *out, const attn_float *a, const attn_float *b,
                                        size_t n);
ATTNDEF attn_status attn_swiglu_backward(attn_float *da, attn_float *db, const attn_float *dout,
                                         const attn_float *a, const attn_float *b, size_t n);

/* Softmax over each row of inp[N, C]: out = exp(x - max) / sum. -INFINITY entries get weight 0; a
   row with every entry -INFINITY becomes all zeros. Backward uses the output:
   dinp += y * (dy - sum_j dy_j y_j). out may alias inp. */
ATTNDEF attn_status attn_softmax_forward(attn_float *out, const attn_float *inp, int N, int C);
ATTNDEF attn_status attn_softmax_backward(attn_float *dinp, const attn_float *dout,
                                          const attn_float *out, int N, int C);
/* Sentence embeddings from hidden states h [B, T, d], sentence-transformers' mean pooling: e[b] [d]
   = the mean of h[b, t] over the positions with mask[b, t] nonzero (mask [B, T]; NULL: every one),
   L2-normalised when normalize is nonzero (a sentence with no position, or a zero mean, gives 0). */
ATTNDEF attn_status attn_mean_pool(attn_float *e, const attn_float *h, const unsigned char *mask, int B,
                                   int T, int d, int normalize);

/* Embedding: out[N, C] = table[ids[n], :] with table [V, C]. Ids outside [0, V) are an error
   (nothing written). Backward: dtable[ids[n]] += dout[n]. */
ATTNDEF attn_status attn_embedding_forward(attn_float *out, const int *ids, const attn_float *table,
                                           int N, int V, int C);
ATTNDEF attn_status attn_embedding_backward(attn_float *dtable, const attn_float *dout,
                                            const int *ids, int N, int V, int C);
/* out[N, V] = one-hot rows of ids. */
ATTNDEF attn_status attn_one_hot(attn_float *out, const int *ids, int N, int V);

/* Learned positions: out[B, T, C] = inp + table[t] with table [maxT, C], T <= maxT; out may alias
   inp. Backward: dinp += dout; dtable[t] += sum_b dout[b, t]. */
ATTNDEF attn_status attn_pos_learned_forward(attn_float *out, const attn_float *inp,
                                             const attn_float *table, int B, int T, int C, int maxT);
ATTNDEF attn_status attn_pos_learned_backward(attn_float *dinp, attn_float *dtable,
                                              const attn_float *dout, int B, int T, int C, int maxT);
/* Sinusoidal table pe[T, C] (Vaswani): pe[t, 2k] = sin(t / 10000^(2k/C)), pe[t, 2k+1] = cos(...).
   A constant: add it to the (scaled) embeddings; it has no gradient. */
ATTNDEF attn_status attn_pos_sinusoidal(attn_float *pe, int T, int C);
/* RoPE tables cos, sin [T, dh/2]: angle(t, i) = (t + offset) * theta^(-2i/dh); dh even. */
ATTNDEF attn_status attn_rope_tables(attn_float *cosv, attn_float *sinv, int T, int dh, int offset,
                                     attn_float theta);
/* Rotates the pairs (x[2i], x[2i+1]) of every row of inp[N, T, dh] by angle(t, i):
   out = (x0 c - x1 s, x0 s + x1 c). out may alias inp. Backward rotates back: dinp += R^T dout. */
ATTNDEF attn_status attn_rope_forward(attn_float *out, const attn_float *inp, const attn_float *cosv,
                                      const attn_float *sinv, int N, int T, int dh);
ATTNDEF attn_status attn_rope_backward(attn_float *dinp, const attn_float *dout,
                                       const attn_float *cosv, const attn_float *sinv, int N, int T,
                                       int dh);
/* T5 relative-position bucket, unidirectional, num_buckets = max_distance = nb (the HYLA models):
   n = max(i - j, 0), me = nb / 2; n < me -> n; else
   min(nb - 1, me + trunc(ln(n / me + eps_f32) / ln(nb / me) * (nb - me))); -1 (error set) for nb < 2. */
ATTNDEF int attn_t5_bucket(int i, int j, int nb);
/* bias[H, Tq, Tk] = table[h, bucket(i + Tk - Tq, j)] with table [H, nb] (query i sits at key
   position i + Tk - Tq, bottom-right aligned as in the attention); backward: dtable[h, b] += dbias. */
ATTNDEF attn_status attn_t5_bias_forward(attn_float *bias, const attn_float *table, int H, int Tq,
                                         int Tk, int nb);
ATTNDEF attn_status attn_t5_bias_backward(attn_float *dtable, const attn_float *dbias, int H, int Tq,
                                          int Tk, int nb);

/* Inverted dropout: keep[n] = (uniform >= p), out = inp * keep / (1 - p); 0 <= p < 1. keep [n]
   is the cache for the backward pass (dinp += dout * keep / (1 - p)). out may alias inp. */
ATTNDEF attn_status attn_dropout_forward(attn_float *out, unsigned char *keep, const attn_float *inp,
                                         size_t n, attn_float p, attn_rng *r);
ATTNDEF attn_status attn_dropout_backward(attn_float *dinp, const attn_float *dout,
                                          const unsigned char *keep, size_t n, attn_float p);

/* Squared error: loss = sum_n (pred - target)^2, or that / n with ATTN_REDUCE_MEAN.
   Backward: dpred += dloss * d loss / d pred. */
typedef enum attn_reduce { ATTN_REDUCE_SUM = 0, ATTN_REDUCE_MEAN = 1 } attn_reduce;
ATTNDEF attn_status attn_mse_forward(attn_float *loss, const attn_float *pred,
                                     const attn_float *target, size_t n, attn_reduce red);
ATTNDEF attn_status attn_mse_backward(attn_float *dpred, const attn_float *pred,
                                      const attn_float *target, size_t n, attn_reduce red,
                                      attn_float dloss);
/* Softmax cross-entropy over logits[N, V]: probs = softmax(logits) (cached), losses[n] =
   -log probs[n, targets[n]]; a target < 0 is ignored (loss 0, no gradient); targets >= V are an
   error. Backward: dlogits[n] += dlosses[n] (probs[n] - onehot(targets[n])); dlosses NULL means
   every dlosses[n] = scale. */
ATTNDEF attn_status attn_cross_entropy_forward(attn_float *losses, attn_float *probs,
                                               const attn_float *logits, const int *targets, int N,
                                               int V);
ATTNDEF attn_status attn_cross_entropy_backward(attn_float *dlogits, const attn_float *dlosses,
                                                attn_float scale, const attn_float *probs,
                                                const int *targets, int N, int V);

/* ============================================================================================== */
/* 6. attention                                                                                    */
/* ============================================================================================== */

/* Every attention variant is a row of one table (attn_kind_get), chosen at run time. Shapes (PyTorch
   order): Q [B, H, Tq, dk], K [B, H, Tk, dk], V [B, H, Tk, dv], O [B, H, Tq, dv]. Query i sees key j
   when j <= i + (Tk - Tq) (causal, bottom-right aligned; always when not causal), key_mask[b, j]
   is nonzero (NULL: every key) and, with segment ids, the two are in the same segment. A row that
   sees nothing outputs 0 and passes zero gradient. Scores are s = scale q.k + bias[h, i, j] (bias
   optional), normalised per row by the kind:
     ATTN_SOFTMAX     A = softmax(s) over the visible keys                     (Vaswani et al. 2017)
     ATTN_EXPRESSIVE  g = s^2 / (1 + s^2), A = g / sum g (0 when sum g < tiny)          (Gros 2024)
     ATTN_COG         A = sign(s) softmax(|s|): negative weights (the official form)
                                                                                   (Lv et al. 2024)
     ATTN_CENTERED    A = softmax(s) - 1/n_i on the n_i visible keys: rows sum to 0
                      (centered_literal: - 1/p, p = the query's key position, the Cog paper's
                      formula as printed; 1 at p = 0, where it is undefined)      (Ali et al. 2023)
     ATTN_SIGMOID     A = sigmoid(s - ln Tk), no normalisation (add +ln Tk through the bias to
                      remove the default shift)
     ATTN_LINEAR_RAW  A = s, no feature map, no normalisation (the HYLA paper's "linear")
                                                                                (Schug et al. 2025)
     ATTN_KERNEL      kernel linear attention, phi(x) = elu(x) + 1, eps 1e-6, no score scale:
                      o_i = sum_j (phi(q_i).phi(k_j)) v_j / (sum_j phi(q_i).phi(k_j) + eps), by
                      prefix sums in O(T dk dv) time, O(dk dv) memory; no bias, no weights
                                                                        (Katharopoulos et al. 2020)
     ATTN_TAYLOR      first-order Taylor: the same with phi(x) = [1, x / |x|], i.e. weights
                      1 + qh . kh normalised per row                      (Conti 2024, Sec. 2.1.2)
   O = A V (all but the kernel and taylor kinds). The kernels stream over key tiles with running row
   statistics, so memory is O(T d): the forward pass keeps one number per query row (stats: the
   log-sum-exp, or sum g; unused by the unnormalised kinds) from which the backward pass recomputes A
   tile by tile.
     ATTN_DIFFERENTIAL  differential attention (Ye et al. 2024): q, k hold two sub-heads [q1 | q2] of
                      width dh = dk / 2, v is [dv] = [2 dh] wide; A1, A2 = softmax(scale q_m.k_m)
                      (scale 0 means 1 / sqrt(dh)), lambda = exp(lq1.lk1) - exp(lq2.lk2) + lambda_init,
                      o = (1 - lambda_init) gain * RMSNorm((A1 - lambda A2) V), eps 1e-5
   The kinds below mix the heads, so each (i, j) needs all H scores s_hij (dk, dv shared by the heads;
   O(T^2 H dv) time, O(T H) memory per thread); a_hij is the "latent code" (Schug et al. 2025):
     ATTN_LINEAR_RMSHEAD  a = RMSHead(s): a_hij = s_hij / sqrt(mean_h s_hij^2 + 1e-6),  o = a V
     ATTN_HYLA          a = RMSHead(s), u_ij = sum_h a_hij v_jh, o_ih = sum_j a_hij ReLU(u_ij)
     ATTN_HYLA_NO_RMSHEAD, ATTN_HYLA_LINEAR (no ReLU), ATTN_HYLA_LINEAR_NO_RMSHEAD, ATTN_SOFTMAX_HYLA
                        (a = softmax over keys per head): HYLA's ablations
     ATTN_RMSHEAD_RELU_V  a = RMSHead(s), o_ih = sum_j a_hij ReLU(v_jh) (no head mixing)
     ATTN_HYLA_PLUS     HYLA with a deep value network: u1 = ReLU(sum_h a v), u2_ij = ReLU(sum_h
                        a_hij W2_h u1_ij), o_ih = sum_j a_hij u2_ij */
typedef enum attn_kind {
    ATTN_KIND_NONE = -1, /* no kind: attn_kind_register's failure (the enum is signed) */
    ATTN_SOFTMAX = 0,
    ATTN_EXPRESSIVE,
    ATTN_COG,
    ATTN_CENTERED,
    ATTN_SIGMOID,
    ATTN_LINEAR_RAW,
    ATTN_KERNEL,
    ATTN_TAYLOR,
    ATTN_DIFFERENTIAL,
    ATTN_LINEAR_RMSHEAD,
    ATTN_HYLA,
    ATTN_HYLA_NO_RMSHEAD,
    ATTN_HYLA_LINEAR,
    ATTN_HYLA_LINEAR_NO_RMSHEAD,
    ATTN_SOFTMAX_HYLA,
    ATTN_RMSHEAD_RELU_V,
    ATTN_HYLA_PLUS,
    ATTN_KIND_COUNT
} attn_kind;

/* Score and mask modifiers (as FlexAttention's score_mod and mask_mod, PyTorch 2.5): functions of
   the position that change the scores of the tiled engine's kinds (softmax, ea, cog, sigmoid,
   linear_raw, centered and the kinds registered on that engine) before they are normalised. p is
   the query's key position (i + Tk - Tq), j a key's; b the batch element, h the head. */
typedef struct attn_score_mod {
    /* s [n]: the scores of query p over keys j0 .. j0 + n - 1 (scale q.k plus the bias), changed in
       place; NULL: none. ALiBi (Press et al. 2022): s[c] -= slope_h (p - j0 - c). */
    void (*score)(void *ctx, int b, int h, int p, int j0, int n, attn_float *s);
    /* The backward of score: ds [n] holds dL/d(the changed s) and becomes dL/d(s), given the
       unchanged s [n]. NULL: the change does not depend on s (an added term, as ALiBi's). */
    void (*vjp)(void *ctx, int b, int h, int p, int j0, int n, const attn_float *s, attn_float *ds);
    /* Whether query p sees key j, on top of the descriptor's masks; NULL: every key. */
    int (*mask)(void *ctx, int b, int h, int p, int j);
    void *ctx;
    /* The gradient of the modifier's own parameters: accumulates dL/d(head h's parameters) given
       ds [n] = dL/d(the changed s), 0 where not visible, and the unchanged s [n]; NULL: none. With
       grad set, backward runs one head at a time: a call writes only head h's gradient, in a fixed
       order of b, p and j0 (the same bits for any thread count). */
    void (*grad)(void *ctx, int b, int h, int p, int j0, int n, const attn_float *s, const attn_float *ds);
    /* With mask, optional: what mask says of a block, queries at key positions p0 .. p1 and keys
       j0 .. j1 (both inclusive): ATTN_BLOCK_EMPTY (no pair visible: the tile is skipped),
       ATTN_BLOCK_FULL (every pair visible: mask is not asked) or ATTN_BLOCK_PARTIAL (mask is asked
       key by key), as FlexAttention's block masks. It must agree with mask; NULL: every block
       partial. A document mask answers from the block's first and last documents. */
    int (*block)(void *ctx, int b, int h, int p0, int p1, int j0, int j1);
} attn_score_mod;
enum { ATTN_BLOCK_EMPTY = 0, ATTN_BLOCK_PARTIAL = 1, ATTN_BLOCK_FULL = 2 };

/* A mask modifier's blocks computed once for a shape, as FlexAttention's create_block_mask: mask is
   asked for every (b, h, query, key) of B x H x Tq x Tk and each size x size block recorded as
   empty, full or partial, so that a mask without a block function still skips its empty tiles. B = 1
   (H = 1): the mask does not depend on the batch element (the head); it is asked with b = 0 (h = 0)
   and holds for every one. The descriptor takes d.mod = &bm.fn: the modifier's functions, with block
   answered from the table; attention refuses it for another Tq or Tk, or B, H other than 1 or its
   own. bm.fn points at bm, which must outlive the calls; the modifier's own block function, if
   any, is not used. */
typedef struct attn_block_mask {
    attn_score_mod fn;          /* the modifier with the table's block function, ctx = this struct */
    attn_score_mod mod;         /* the modifier's own functions */
    int B, H, Tq, Tk, size, nq, nk;
    unsigned char *state;       /* [B, H, nq, nk]: ATTN_BLOCK_EMPTY, _PARTIAL or _FULL */
} attn_block_mask;
/* Builds bm for mod (which needs a mask) and the shape; size >= 1 (16 matches the tiles' key
   granules). ATTN_ERR_ARG, _SHAPE or _NOMEM with bm untouched. attn_block_mask_free frees the table
   (a zeroed bm: nothing). */
ATTNDEF attn_status attn_block_mask_build(attn_block_mask *bm, const attn_score_mod *mod, int B, int H,
                                          int Tq, int Tk, int size);
ATTNDEF void attn_block_mask_free(attn_block_mask *bm);

/* Provided score modifiers (attn_mod_init makes one; a descriptor takes it as d.mod = &m.fn):
     ATTN_MOD_ALIBI        s -= m_h (p - j), the slopes m_h = 2^(-8 (h + 1) / H) for H a power of
                           two, else those of the power n below H, then every other one of 2n's
                                                                          (Press et al. 2022)
     ATTN_MOD_RELBIAS      s += w[h, bucket(j - p)], w [H, buckets] learned: T5's buckets (Raffel et
                           al. 2020), exact up to buckets / 2 (a quarter each way when
                           bidirectional), logarithmic up to max_distance, one bucket beyond
     ATTN_MOD_SOFTCAP      s = cap tanh(s / cap), cap > 0                     (Gemma Team 2024)
     ATTN_MOD_TEMPERATURE  s *= w[h], w [H] learned per-head temperatures (1: none)
   w is the caller's (attn_mod_params floats; NULL for ALiBi and the cap) and dw, when not NULL, gets
   dL/dw accumulated by backward. With buckets = max_distance = nb and bidirectional 0, RELBIAS is
   attn_t5_bias_forward's table as a modifier (nothing [H, T, T] materialised). */
typedef enum attn_mod_kind {
    ATTN_MOD_NONE = 0,
    ATTN_MOD_ALIBI,
    ATTN_MOD_RELBIAS,
    ATTN_MOD_SOFTCAP,
    ATTN_MOD_TEMPERATURE,
    ATTN_MOD_COUNT
} attn_mod_kind;
/* Provided mask modifiers (an attn_mod's mask, with its span >= 0), on top of the descriptor's masks:
     ATTN_MASK_WINDOW      query p sees key j when |p - j| <= span: a sliding window in one layer
                           (Beltagy et al. 2020; Gemma Team 2024's local layers alternate with
                           global ones); a causal descriptor keeps p - span .. p
     ATTN_MASK_PREFIX      query p sees key j when j <= p or j < span: a prefix LM (Raffel et al.
                           2020) on a descriptor that is not causal
   Both answer blocks (attn_score_mod's block), so the tiles they hide are skipped. */
typedef enum attn_mask_kind {
    ATTN_MASK_NONE = 0,
    ATTN_MASK_WINDOW,
    ATTN_MASK_PREFIX,
    ATTN_MASK_COUNT
} attn_mask_kind;
#define ATTN_MOD_MAX_DISTANCE 4096
#define ATTN_MOD_MAX_HEADS 1024 /* ALiBi's */
typedef struct attn_mod_config {
    attn_mod_kind kind;
    int H;                                    /* heads, >= 1 (ALiBi: <= ATTN_MOD_MAX_HEADS) */
    attn_float cap;                           /* SOFTCAP */
    int buckets, max_distance, bidirectional; /* RELBIAS: buckets >= 2 (4 when bidirectional), and
                                                 half a direction's buckets < max_distance <=
                                                 ATTN_MOD_MAX_DISTANCE */
    attn_mask_kind mask;                      /* a provided mask with the score modifier, or alone
                                                 (kind ATTN_MOD_NONE); ATTN_MASK_NONE: none */
    int span;                                 /* the mask's */
} attn_mod_config;
typedef struct attn_mod {
    attn_score_mod fn; /* its functions, ctx = this struct */
    attn_mod_config cfg;
    const attn_float *w;
    attn_float *dw;
    union { /* private: RELBIAS's bucket of each distance, ALiBi's slope of each head */
        unsigned short bucket[ATTN_MOD_MAX_DISTANCE + 1];
        attn_float slope[ATTN_MOD_MAX_HEADS];
    } own;
} attn_mod;
/* The floats of w a configuration needs (RELBIAS: H buckets, TEMPERATURE: H, else 0); 0 and the
   error set for an invalid one. */
ATTNDEF size_t attn_mod_params(const attn_mod_config *c);
/* Fills m (nothing allocated: m holds all it needs and must outlive the calls that use it);
   ATTN_ERR_ARG or _SHAPE for an invalid configuration or a missing w. */
ATTNDEF attn_status attn_mod_init(attn_mod *m, const attn_mod_config *c, const attn_float *w, attn_float *dw);
/* "alibi", "relbias", "softcap", "temperature" ("none" for ATTN_MOD_NONE), and back (-1: unknown). */
ATTNDEF const char *attn_mod_name(attn_mod_kind kind);
ATTNDEF int attn_mod_from_name(const char *name);
/* "window", "prefix" ("none" for ATTN_MASK_NONE), and back (-1: unknown). */
ATTNDEF const char *attn_mask_name(attn_mask_kind kind);
ATTNDEF int attn_mask_from_name(const char *name);

typedef struct attn_attention_desc {
    attn_kind kind;
    int B, H, Tq, Tk, dk, dv; /* all >= 1 */
    int causal;               /* nonzero: causal, bottom-right aligned */
    attn_float scale;         /* score scale; 0 means 1/sqrt(dk) (the EA paper's runs use 1) */
    const unsigned char *key_mask; /* [B, Tk], nonzero = visible; NULL: all visible */
    /* [B, Tk] segment ids (documents packed in one sequence, split at BOS tokens): query i sees
       key j only when segment[b, i + Tk - Tq] == segment[b, j]. NULL: one segment. Not for kernel
       and taylor. Key tiles whose ids' range misses the query tile's are skipped (documents packed
       in order cost their own T^2 each, not the row's). */
    const int *segment;
    const attn_float *bias;   /* [H, Tq, Tk] added to the scores before normalising; NULL: none */
    /* A sparse pattern (Beltagy et al. 2020), for every kind but kernel and taylor: with window
       w > 0, query i (at key position p = i + Tk - Tq) sees key j only when j = p + m dil_h for an
       integer m in [-w, w] (causal: [-w, 0]), or when j or p is a global token. Key tiles with
       nothing visible are skipped, so the cost grows with the pattern, not with Tk. */
    int window;               /* one-sided radius w; 0: no pattern */
    const int *dilation;      /* [H] per-head dilation >= 1; NULL: 1 */
    const unsigned char *global; /* [Tk] nonzero = global token (sees and is seen by all); NULL */
    /* A block-sparse layout (Zaheer et al. 2020; attn_bigbird_blocks and attn_bigbird_tokens build
       one), for the same kinds: with block b > 0, query i sees key j only if layout[h, i / b, j / b]
       is nonzero; layout [H, ceil(Tq / b), ceil(Tk / b)]. It narrows whatever else is visible. */
    int block;
    const unsigned char *layout;
    int centered_literal;     /* ATTN_CENTERED: subtract 1/p instead of 1/n_i (see above) */
    /* Grouped-query attention (the scored kinds without parameters or sub-heads): K, V (and dK, dV)
       have kv_heads heads, [B, kv_heads, Tk, d]; query head h reads key head h / (H / kv_heads).
       kv_heads divides H; 1 is multi-query attention; 0 means H (every head its own). */
    int kv_heads;
    /* Dropout on the normalised weights (the latent code a for the head-mixing kinds), for
       training: entry (i, j) is kept with probability 1 - dropout and then scaled by
       1 / (1 - dropout). One mask [Tq, Tk] serves the batch and the heads; it is a hash of
       (dropout_seed, i + Tk - Tq, j), so backward recomputes it (pass the same seed; change it
       every step), and the last Tq of Tk queries alone draw what they would draw among all.
       0: off. Not for centered, kernel and taylor. */
    attn_float dropout;
    uint64_t dropout_seed;
    /* Optional: the mask's multipliers [Tq, Tk] (0 or 1 / (1 - dropout)) computed beforehand.
       NULL: attn_attention_forward / _backward compute them once per call into the workspace when
       Tq Tk <= 65536 (and hash tile by tile beyond), instead of once per (b, h). */
    const attn_float *dropout_mask;
    /* Parameters inside some kinds (ignored by the others); their gradients go to attn_attention_grads:
       ATTN_DIFFERENTIAL  lambda [4, dk / 2] = lambda_q1, lambda_k1, lambda_q2, lambda_k2 (NULL: 0);
                          gain [dv] (NULL: 1); lambda_init (attn_diff_lambda_init gives the default)
       ATTN_HYLA_PLUS     w2 [H, dv, dv] (row-major [out, in]), required */
    const attn_float *lambda, *gain, *w2;
    attn_float lambda_init;
    const attn_score_mod *mod; /* score and mask modifiers (see attn_score_mod); NULL: none */
    /* Forward only: K and V may be a cache with room for more keys, kv_rows >= Tk rows per head
       ([B, KH, kv_rows, d]) of which the first Tk are read. 0: Tk. */
    int kv_rows;
} attn_attention_desc;

/* BigBird's block layout (ITC, Zaheer et al. 2020) for nb blocks: blocks 0 and nb - 1 are global (they see
   and are seen by every block); block i sees i - 1, i, i + 1 and, for i in [1, nb - 2], r random
   blocks drawn without replacement from [1, nb - 2] minus {i - 1, i, i + 1} (all of them if fewer
   remain), independently per head. layout [H, nb, nb]; use with block = T / nb. */
ATTNDEF attn_status attn_bigbird_blocks(unsigned char *layout, int H, int nb, int r, attn_rng *rng);
/* The thesis' token-level BigBird: tokens 0 .. g-1 are global, row i sees the window
   [i - w/2, i + w/2] and r random keys outside the window and the globals (fewer if fewer remain),
   per head. layout [H, T, T]; use with block = 1. */
ATTNDEF attn_status attn_bigbird_tokens(unsigned char *layout, int H, int T, int g, int w, int r,
                                        attn_rng *rng);

/* Backward outputs, all accumulated. dQ, dK, dV are required; the rest may be NULL (not wanted). */
typedef struct attn_attention_grads {
    attn_float *dQ, *dK, *dV;
    attn_float *dbias;          /* [H, Tq, Tk], summed over the batch */
    attn_float *dlambda, *dgain; /* differential: [4, dk / 2], [dv] */
    attn_float *dw2;            /* HYLA+: [H, dv, dv] */
} attn_attention_grads;

/* Forward: O, stats (the backward cache, attn_attention_stats_floats()) and, if weights is not
   NULL, the attention weights [B, H, Tq, Tk] (0 where not visible, before dropout; differential:
   A1 - lambda A2; head-mixing kinds: the latent code a; this materialises T x T).
   work: attn_attention_workspace() bytes, for the thread count set when both are called. */
typedef attn_status (*attn_attention_fwd_fn)(const attn_attention_desc *d, attn_float *O,
                                             attn_float *stats, attn_float *weights,
                                             const attn_float *Q, const attn_float *K,
                                             const attn_float *V, void *work, size_t work_bytes);
/* Backward: accumulates into the gradients g, given dO and the forward's inputs, O and stats. */
typedef attn_status (*attn_attention_bwd_fn)(const attn_attention_desc *d, const attn_attention_grads *g,
                                             const attn_float *dO, const attn_float *Q,
                                             const attn_float *K, const attn_float *V,
                                             const attn_float *O, const attn_float *stats,
                                             void *work, size_t work_bytes);

/* What a scored kind does with a row of scores s (the tiled engine streams them; n entries, vis the
   0/1 visibility of each). The weights are normalised by a row statistic:
     ATTN_STAT_NONE  A = f(s), unnormalised (sigmoid, linear_raw); the stats hold 0
     ATTN_STAT_SUM   A = g(s) / N with N = sum of g over the visible keys (EA), kept in the stats
     ATTN_STAT_LSE   A = sign(s) exp(x - lse) with x = exponent(s), lse the row's log-sum-exp of x,
                     kept online (softmax: x = s; Cog: x = |s| and a sign)
   With D_i = dO_i . O_i, the engine's backward gives vjp dL/dA and wants dL/ds. */
typedef enum attn_stat_kind { ATTN_STAT_NONE = 0, ATTN_STAT_SUM, ATTN_STAT_LSE } attn_stat_kind;
typedef struct attn_score_row {
    attn_stat_kind stat;
    /* A constant added to every score of a call with Tk keys (sigmoid: -ln Tk); NULL: none. */
    attn_float (*offset)(int Tk);
    /* NONE and SUM: p [n] holds vis on entry, p_i = vis_i f(s_i) scale on return (x [n] is
       scratch); returns the sum of p. */
    attn_float (*map)(size_t n, const attn_float *s, attn_float *p, attn_float *x, attn_float scale);
    /* LSE: x_i = the exponent of s_i where vis_i is 1, -3e38 where it is 0; vis NULL: every entry
       visible (a row that sees its whole tile). */
    void (*exponent)(size_t n, const attn_float *s, const attn_float *vis, attn_float *x);
    /* LSE, optional: p_i *= sign(s_i) (applied after the exponentials). */
    void (*sign)(size_t n, const attn_float *s, attn_float *p);
    /* ds [n] holds dL/dA on entry and dL/ds on return; a the weights, inv = 1 / N (SUM). */
    void (*vjp)(size_t n, const attn_float *s, const attn_float *a, const attn_float *vis, attn_float *ds,
                attn_float D, attn_float inv);
} attn_score_row;

/* A linear-time kind's feature map phi (F = features(dk) features) and its vector-Jacobian product
   (dx += dphi^T J_phi(x)). */
typedef struct attn_feature_row {
    int (*features)(int dk);
    void (*phi)(const attn_float *x, int dk, attn_float *out);
    void (*vjp)(const attn_float *x, int dk, const attn_float *dphi, attn_float *dx);
} attn_feature_row;

/* A head-mixing kind: how the scores become the latent code a (norm) and the value network. */
typedef enum attn_mix_norm {
    ATTN_MIX_NORM_NONE = 0,
    ATTN_MIX_NORM_RMSHEAD,
    ATTN_MIX_NORM_SOFTMAX
} attn_mix_norm;
typedef enum attn_mix_value {
    ATTN_MIX_VALUE_LINEAR = 0, /* o_h = a_h V_h */
    ATTN_MIX_VALUE_RELU_V,     /* o_h = a_h ReLU(V_h) */
    ATTN_MIX_VALUE_HYPER,      /* the two head sums (HYLA), ReLU in between if relu */
    ATTN_MIX_VALUE_DEEP        /* three head sums with W2 (HYLA+), ReLU */
} attn_mix_value;
typedef struct attn_mix_row {
    attn_mix_norm norm;
    attn_mix_value value;
    int relu;
} attn_mix_row;

/* What a kind can take (the checks and the models read these, never the enum's order). */
enum {
    ATTN_KF_LINEAR_TIME = 1 << 0, /* prefix sums: no segments, patterns, bias, weights or dropout */
    ATTN_KF_MIXES_HEADS = 1 << 1, /* every (i, j) needs all H scores */
    ATTN_KF_PARAMS = 1 << 2,      /* parameters of its own in the descriptor (lambda, gain, w2) */
    ATTN_KF_SUBHEADS = 1 << 3,    /* q, k hold two sub-heads (differential): dk even, RoPE by fours */
    ATTN_KF_NO_DROPOUT = 1 << 4,  /* no dropout on its weights */
    ATTN_KF_CENTERED = 1 << 5     /* the score map's weights minus the row's shift on the visible keys */
};

/* A kind's row: names, the engine that runs it (forward, backward, workspace; a row with a score
   row and NULL engine functions runs on the tiled scored engine), its flags and the part of its
   maths the engine asks for. */
typedef struct attn_kind_info {
    attn_kind kind;
    const char *name;      /* "softmax", "ea", "cog", ... */
    const char *code_name; /* the name in the paper's code (HYLA's ablations), or NULL */
    const char *formula;   /* one line */
    attn_attention_fwd_fn forward;
    attn_attention_bwd_fn backward;
    size_t (*workspace)(const attn_attention_desc *d); /* bytes */
    unsigned flags;                  /* ATTN_KF_* */
    const attn_score_row *score;     /* scored kinds */
    const attn_feature_row *feature; /* linear-time kinds */
    const attn_mix_row *mix;         /* head-mixing kinds */
} attn_kind_info;

/* The table row of a kind (NULL if there is none), and the kind with this name or code name (-1 if
   none). Registered kinds are found too. */
ATTNDEF const attn_kind_info *attn_kind_get(attn_kind kind);
ATTNDEF int attn_kind_from_name(const char *name);
/* Adds a kind defined outside the header (a row of your own, copied; its kind field is ignored):
   returns its kind, ATTN_KIND_COUNT or above, usable wherever a kind goes (descriptors, layers,
   models, checkpoints by name), or ATTN_KIND_NONE (-1, error set) when the name is empty, longer
   than 31 characters or taken, the table is full (ATTN_MAX_CUSTOM_KINDS) or the row lacks what its
   engine or its flags need (a built-in engine's three functions together, its flags and its sub-row).
   The names, the formula (at most ATTN_KIND_FORMULA_LEN - 1 characters) and the sub-rows are copied:
   the caller's may go away. Register before using it, from one thread. */
#define ATTN_MAX_CUSTOM_KINDS 16
#define ATTN_KIND_FORMULA_LEN 128
ATTNDEF attn_kind attn_kind_register(const attn_kind_info *row);
/* Differential attention's lambda_init for 0-based layer l: 0.8 - 0.6 exp(-0.3 l). */
ATTNDEF attn_float attn_diff_lambda_init(int layer);
/* The stats a forward call fills: B H Tq floats (differential: B H Tq (2 dv + 3)). */
ATTNDEF size_t attn_attention_stats_floats(const attn_attention_desc *d);
/* Dispatch through the table. Non-finite inputs (IEEE builds): a NaN or infinity in Q, K, V (in
   backward also dO, O, stats) reaches exactly the rows that read it: rows of O, stats, weights and
   dQ read their query, their dO and the keys and values they see; rows of dK and dV their own key
   and value and every row that sees them; head-mixing kinds' heads read each other at a position.
   Those rows get IEEE arithmetic's answer (NaN from a NaN); every other row is bit for bit what it
   would be with finite values there. Such a call runs twice and allocates copies (ATTN_MALLOC). */
ATTNDEF size_t attn_attention_workspace(const attn_attention_desc *d);
ATTNDEF attn_status attn_attention_forward(const attn_attention_desc *d, attn_float *O,
                                           attn_float *stats, attn_float *weights,
                                           const attn_float *Q, const attn_float *K,
                                           const attn_float *V, void *work, size_t work_bytes);
ATTNDEF attn_status attn_attention_backward(const attn_attention_desc *d, const attn_attention_grads *g,
                                            const attn_float *dO, const attn_float *Q,
                                            const attn_float *K, const attn_float *V,
                                            const attn_float *O, const attn_float *stats,
                                            void *work, size_t work_bytes);

/* A kind's backward pass against central finite differences of its forward pass, on inputs drawn
   from seed (Q, K, V normal, scale 1) in the descriptor's shapes and settings: with the loss
   L = sum w . O for fixed random w, every entry of Q, K and V (the first max_entries of each, 0: all)
   is moved by +-h, and the error is |fd - analytic| / max(1, |fd| + |analytic|). h and tol 0 take
   this build's defaults: 1e-2 and 1e-2 in float (what float can promise), 1e-6 and 1e-6 in double;
   kinks as in attn_gradcheck_params. Returns 1 when the largest error (in *max_err, may be NULL) is
   at most tol, 0 when not, -1 (error set) when the calls fail or h, tol or max_entries is negative
   or not finite. A kind whose weights jump (Cog's sign at s = 0) needs inputs away from the jump, or
   double. Allocates (ATTN_MALLOC) its buffers for the call. */
ATTNDEF int attn_gradcheck_attention(const attn_attention_desc *d, uint64_t seed, double h, double tol,
                                     int max_entries, double *max_err);

/* Linformer (Wang et al. 2020): keys and values compressed along the sequence by the layer's parameters
   E, F [kproj, n_max] (shared by the heads; only the first T columns are used): K' = E K, V' = F V
   per (b, h), then any kind but kernel/taylor over the kproj compressed keys, never causal (E mixes
   future positions: a causal request, a key mask or a window is refused). d->Tk is the sequence
   length T <= n_max. cache: attn_linformer_cache_floats() (K', V', the stats); work:
   attn_linformer_work_bytes(). Backward accumulates dQ, dK, dV, dE, dF (dE, dF may be NULL). */
ATTNDEF size_t attn_linformer_cache_floats(const attn_attention_desc *d, int kproj);
ATTNDEF size_t attn_linformer_work_bytes(const attn_attention_desc *d, int kproj);
ATTNDEF attn_status attn_linformer_forward(const attn_attention_desc *d, int kproj, int n_max,
                                           const attn_float *E, const attn_float *F, attn_float *O,
                                           attn_float *cache, size_t cache_floats, const attn_float *Q,
                                           const attn_float *K, const attn_float *V, void *work,
                                           size_t work_bytes);
ATTNDEF attn_status attn_linformer_backward(const attn_attention_desc *d, int kproj, int n_max,
                                            const attn_float *E, const attn_float *F, attn_float *dE,
                                            attn_float *dF, attn_float *dQ, attn_float *dK, attn_float *dV,
                                            const attn_float *dO, const attn_float *Q, const attn_float *K,
                                            const attn_float *V, const attn_float *O, const attn_float *cache,
                                            size_t cache_floats, void *work, size_t work_bytes);

/* The attention layer: y = concat_h(attention(q_h, k_h, v_h)) Wo^T + bo with q = x Wq^T + bq and
   k, v = m Wk^T + bk, m Wv^T + bv (m = x for self-attention), any kind of the table, optional RoPE
   on q and k (self-attention, theta 10000). Weights are [out, in] as in attn_linear_forward:
   Wq [H dk, C], Wk [KH dk, C], Wv [KH dv, C], Wo [Cout, H dv] with KH = att.kv_heads (grouped- or
   multi-query attention; 0: H); biases may be NULL. x [B, Tq, C], m [B, Tk, C], y [B, Tq, Cout].
   The cache (attn_layer_cache_floats) keeps what backward needs; work (attn_layer_work_bytes) is
   scratch for either pass. */
typedef struct attn_layer {
    attn_attention_desc att;  /* kind, H, dk, dv, causal, scale, key_mask, bias (B, Tq, Tk: per call) */
    int C, Cout;              /* input and output widths */
    int rope;                 /* nonzero: rotate q and k (positions 0 .. T-1) before the scores */
    attn_float rope_theta;    /* RoPE's base; 0: 10000 */
    const attn_float *Wq, *bq, *Wk, *bk, *Wv, *bv, *Wo, *bo;
    /* Longformer's separate global projections (Beltagy et al. 2020), optional: with Wqg, Wkg, Wvg set (self-
       attention, not causal, no RoPE, att.global given), each global row i is recomputed over every
       key, q = x_i Wqg^T + bqg, k, v = x Wkg^T + bkg, x Wvg^T + bvg (no window, layout or bias; the
       key mask applies), and that replaces its windowed output. Shapes as Wq, Wk, Wv. */
    const attn_float *Wqg, *bqg, *Wkg, *bkg, *Wvg, *bvg;
    /* Linformer (Wang et al. 2020), optional: with kproj > 0 the keys and values are compressed
       along the sequence by E, F [kproj, n_max] before the attention, as in attn_linformer_forward
       (a scored kind; never causal; no key mask, segments, pattern or bias; Tk <= n_max). The
       cache then holds K', V' and the stats; no global projections. */
    int kproj, n_max;
    const attn_float *E, *F;
    /* QK-norm (as in OLMo 2 and Gemma 3), optional: with qnorm and knorm [dk] set, each head's q and k
       rows are RMS-normalised (eps ATTN_QK_NORM_EPS) and scaled by them, before RoPE and the scores. */
    const attn_float *qnorm, *knorm;
    /* Wq, Wk, Wv, Wo packed by attn_transformer_pack for the kernels running now, or NULL (set by the
       transformer; the forward passes read them instead of the weights). */
    const attn_float *Pq, *Pk, *Pv, *Po;
} attn_layer;
#define ATTN_QK_NORM_EPS ((attn_float)1e-6)

typedef struct attn_layer_grads { /* any may be NULL; accumulated */
    attn_float *dWq, *dbq, *dWk, *dbk, *dWv, *dbv, *dWo, *dbo;
    attn_float *dbias, *dlambda, *dgain, *dw2; /* of att.bias and the kind's own parameters */
    attn_float *dWqg, *dbqg, *dWkg, *dbkg, *dWvg, *dbvg;
    attn_float *dE, *dF; /* Linformer's */
    attn_float *dqnorm, *dknorm;
} attn_layer_grads;

/* The cache and work a layer call of these sizes needs; 0 (error set) for L NULL, a size < 1 or a
   descriptor the attention would refuse. */
ATTNDEF size_t attn_layer_cache_floats(const attn_layer *L, int B, int Tq, int Tk);
ATTNDEF size_t attn_layer_work_bytes(const attn_layer *L, int B, int Tq, int Tk);
/* m = NULL: self-attention (Tk = Tq). */
ATTNDEF attn_status attn_layer_forward(const attn_layer *L, attn_float *y, attn_float *cache,
                                       size_t cache_floats, const attn_float *x, const attn_float *m, int B,
                                       int Tq, int Tk, void *work, size_t work_bytes);
/* Accumulates dx (and dm for cross-attention; NULL skips either) and the parameter gradients. */
ATTNDEF attn_status attn_layer_backward(const attn_layer *L, attn_float *dx, attn_float *dm,
                                        const attn_layer_grads *g, const attn_float *dy, const attn_float *x,
                                        const attn_float *m, const attn_float *cache, size_t cache_floats,
                                        int B, int Tq, int Tk, void *work, size_t work_bytes);

/* Step-wise attention over a cache of keys and values (decoding, batch 1): the rows x [n, C] at
   positions pos .. pos + n - 1 give y [n, Cout] as attn_layer_forward would for them at the end of
   the sequence the cache holds. With add nonzero their keys and values (RoPE at their positions)
   join the cache first (self-attention; with att.causal row i sees the cache and rows 0 .. i);
   with add 0 the queries read the cache as attn_layer_kv_add filled it (cross-attention). att's
   B, Tq, Tk are per call (Tk: the rows then held); its bias is [H, n, Tk], its key mask and
   segments [1, Tk]; no dropout (a step is inference). Not with Linformer, global projections, a
   block layout or a kind whose scores shift with the number of keys (tiled softmax's offset).
   The cache: rows > 0 holds keys [KH, rows, dk] and values [KH, rows, dv], rows 0 .. held - 1
   filled. rows = 0 (the linear-time kinds) holds their recurrence instead, S [H, F, dv] in k and
   z [H, F] in v (F the kind's feature count), zero before the first token: constant memory. */
typedef struct attn_layer_kv {
    attn_float *k, *v;
    int rows; /* capacity per head; 0: a recurrent state */
    int held; /* rows filled (tokens folded into a state) */
} attn_layer_kv;
/* The cache's floats for k (returned) and v (*v_floats); 0 (error set) for a layer the step refuses. */
ATTNDEF size_t attn_layer_kv_floats(const attn_layer *L, int rows, size_t *v_floats);
ATTNDEF size_t attn_layer_step_work_bytes(const attn_layer *L, int n, int rows);
/* The keys and values of m [n, C] (RoPE at positions pos ..) join the cache. */
ATTNDEF attn_status attn_layer_kv_add(const attn_layer *L, attn_layer_kv *kv, const attn_float *m, int n,
                                      int pos, void *work, size_t work_bytes);
ATTNDEF attn_status attn_layer_step(const attn_layer *L, attn_layer_kv *kv, attn_float *y,
                                    const attn_float *x, int n, int pos, int add, void *work,
                                    size_t work_bytes);

/* ============================================================================================== */
/* 7. optimizers                                                                                   */
/* ============================================================================================== */

/* SGD with momentum, PyTorch semantics (no dampening, no Nesterov):
   b = g on the first step (step == 0), else b = mu b + g;  theta -= lr b.
   velocity has p->total floats (any contents before step 0). ATTN_ERR_ARG (nothing written) unless
   lr and momentum are finite and >= 0 and step >= 0. */
ATTNDEF attn_status attn_sgd_step(attn_params *p, attn_float *velocity, attn_float lr, attn_float momentum,
                                  long step);
/* Adam/AdamW, optax semantics; t is the 1-based step count:
   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;  mh = m / (1 - b1^t);  vh = v / (1 - b2^t)
   theta -= lr (mh / (sqrt(vh) + eps) + wd theta [decay mask])
   wd = 0 is Adam. m, v have p->total floats, zero before t = 1. The mask is p->decay. ATTN_ERR_ARG
   (nothing written) unless t >= 1, lr, wd >= 0, beta1, beta2 in [0, 1) and eps > 0, all finite. */
ATTNDEF attn_status attn_adamw_step(attn_params *p, attn_float *m, attn_float *v, long t, attn_float lr,
                                    attn_float beta1, attn_float beta2, attn_float eps, attn_float wd);
/* An optimizer with its state, sized from the parameters it steps: attn_optim_sgd (PyTorch momentum)
   or attn_optim_adamw (optax; weight decay on the tensors p->decay marks, 0: Adam) allocate it
   (ATTN_MALLOC; attn_optim_free releases it); attn_optim_step takes one step of rate lr with the
   gradients in p->gdata. One step convention for both: o->step counts the steps taken (0 before the
   first), so SGD's first step is its velocity's first and AdamW's bias correction uses step + 1.
   Bad hyper-parameters are ATTN_ERR_ARG, with nothing written. */
typedef enum attn_optim_kind { ATTN_OPTIM_SGD = 0, ATTN_OPTIM_ADAMW } attn_optim_kind;
typedef struct attn_optim {
    attn_optim_kind kind;
    double momentum;                        /* SGD */
    double beta1, beta2, eps, weight_decay; /* AdamW */
    long step;                              /* steps taken */
    size_t total;                           /* the parameter block's floats it was made for */
    attn_float *m, *v;                      /* SGD: m is the velocity; AdamW: the two moments */
} attn_optim;
ATTNDEF attn_status attn_optim_sgd(attn_optim *o, const attn_params *p, double momentum);
ATTNDEF attn_status attn_optim_adamw(attn_optim *o, const attn_params *p, double beta1, double beta2,
                                     double eps, double weight_decay);
ATTNDEF attn_status attn_optim_step(attn_optim *o, attn_params *p, double lr);
ATTNDEF void attn_optim_free(attn_optim *o);
/* Global L2 norm of all gradients; if it exceeds max_norm, scales them by max_norm / (norm + 1e-6)
   (PyTorch clip_grad_norm_). Returns the norm before clipping; -1 (error set, nothing scaled) when p
   is NULL or max_norm is not finite and > 0. */
ATTNDEF double attn_clip_grad_norm(attn_params *p, double max_norm);

/* Learning-rate schedules; attn_schedule_lr(s, t) is the rate for 0-based step t. */
typedef enum attn_sched_kind {
    ATTN_SCHED_CONSTANT = 0, /* lr */
    ATTN_SCHED_STEP,         /* lr * factor^min(floor(t / every), max_drops) */
    ATTN_SCHED_WARMUP_COSINE /* optax.warmup_cosine_decay_schedule, see attn_schedule_warmup_cosine */
} attn_sched_kind;

typedef struct attn_schedule {
    attn_sched_kind kind;
    double lr;                /* constant and step: the base rate; warmup-cosine: the peak */
    double init_lr, end_lr;   /* warmup-cosine: start of the warmup, floor after the decay */
    long warmup, decay_steps; /* warmup-cosine, in optax's meaning (decay_steps counts the warmup) */
    long every, max_drops;    /* step */
    double factor;            /* step */
} attn_schedule;

ATTNDEF attn_status attn_schedule_constant(attn_schedule *s, double lr);
ATTNDEF attn_status attn_schedule_step(attn_schedule *s, double lr, long every, double factor,
                                       long max_drops);
/* Exactly optax.warmup_cosine_decay_schedule(init, peak, warmup, decay_steps, end):
     t < W:               init + (peak - init) t / W
     W <= t:              c = min(t - W, D) with D = decay_steps - W;
                          end + (peak - end) (1 + cos(pi c / D)) / 2
   Needs warmup >= 0 and decay_steps > warmup. (The HYLA runs pass decay_steps = S - W, so the
   cosine reaches its floor W steps before the end S; that quirk is reproduced, not corrected.) */
ATTNDEF attn_status attn_schedule_warmup_cosine(attn_schedule *s, double init_lr, double peak_lr,
                                                long warmup, long decay_steps, double end_lr);
/* The rate at step t (t < 0 counts as 0); NaN (error set) for s NULL. */
ATTNDEF double attn_schedule_lr(const attn_schedule *s, long t);

/* ============================================================================================== */
/* 8. models                                                                                       */
/* ============================================================================================== */

/* The expressive-attention paper's cisformer (Gros 2024): one bilayer over a window of ncon one-hot
   tokens x_c of width d (= the alphabet size N), every weight specific to its position c:
     xt_c = LN(x_c)                 LN without affine parameters, eps 1e-5, i.e. xh_c
                                    (ATTN_CIS_LN_BIAS: + u_c;  ATTN_CIS_LN_GAINS: * g1_c)
     q_c, k_c, v_c = Wq[c] xt_c, Wk[c] xt_c, Wv[c] xt_c
     h_m = x_m + sum_{k <= m} A_mk v_k          causal attention of the chosen kind, one head
     n_m = LN(h_m)                  (ATTN_CIS_LN_GAINS: * g2_m)
     f_m = h_m + W2[m] tanh(W1[m] n_m)   (ATTN_CIS_FFN_BIAS: + b_m)
     y = R vec(f) + r               vec(f) = f_1, ..., f_ncon (position-major)
   The prediction is argmax_i y_i; the paper's loss is sum_i (y_i - onehot(target)_i)^2.
   Parameters: N_con (12 d^2 + d) + d (802 at d = 2, ncon = 16), or N_con (12 d^2 + 2) + d with
   the two per-position LN gains. */
typedef enum attn_cis_vec {
    ATTN_CIS_FFN_BIAS = 0, /* the per-position d-vector is the FFN's output bias b_c (our default; the
                              paper leaves it open) */
    ATTN_CIS_LN_BIAS,      /* it is the attention LN's bias u_c (a shift after normalising the input) */
    ATTN_CIS_LN_GAINS      /* two per-position scalar LN gains g1_c, g2_c instead */
} attn_cis_vec;

typedef struct attn_cisformer_config {
    int d, ncon;       /* width (= alphabet size) >= 2 and window length >= 1 */
    attn_kind kind;    /* a one-head kind from softmax to taylor (the table's first eight) */
    attn_float scale;  /* score scale; the paper's runs use 1 (0 would mean 1/sqrt(d)) */
    attn_cis_vec vec;
    int qk_raw;        /* nonzero: q and k from the one-hot x_c itself, v from xt_c (the other reading
                          of the paper's "the same input"; 0: all three from xt_c) */
    int init_uniform;  /* 0: matrices N(0, 1 / fan_in) (our default: the paper gives no scheme);
                          1: U(-1/sqrt(fan_in), 1/sqrt(fan_in)), PyTorch's nn.Linear default, a
                          third of the variance */
} attn_cisformer_config;

/* params: Wq, Wk, Wv [ncon, d, d], W1 [ncon, 4d, d], W2 [ncon, d, 4d], vec ([ncon, d] "b" or "u",
   or [ncon, 2] "g"), R [d, ncon d], r [d], in that order. */
typedef struct attn_cisformer {
    attn_cisformer_config cfg;
    attn_params p;
} attn_cisformer;

/* The model's tensors by name, pointing into m->p's value block (grad 0) or gradient block (grad 1);
   vec is the per-position vector (b, u or g as cfg.vec says). */
typedef struct attn_cisformer_tensors {
    attn_float *Wq, *Wk, *Wv, *W1, *W2, *vec, *R, *r;
} attn_cisformer_tensors;
ATTNDEF attn_cisformer_tensors attn_cisformer_named(const attn_cisformer *m, int grad);

/* The paper's model (N16T2's alphabet, a window of 32): d 16, ncon 32, softmax, scale 1, the FFN bias
   vector, PyTorch's uniform initialisation. Change what differs. */
ATTNDEF attn_cisformer_config attn_cisformer_config_default(void);
/* The parameter count of a configuration; 0 (and the error set) if it is invalid. */
ATTNDEF size_t attn_cisformer_param_count(const attn_cisformer_config *cfg);
/* Allocates the parameters and draws them: matrices as cfg->init_uniform says, biases 0, gains 1. */
ATTNDEF attn_status attn_cisformer_init(attn_cisformer *m, const attn_cisformer_config *cfg, attn_rng *rng);
/* The same model in the caller's memory: mem [bytes], bytes >= attn_cisformer_bytes(cfg) (0 and the
   error set for an invalid configuration); nothing is allocated, and _free releases nothing of it
   (the same holds for attn_transformer_init_in and attn_seq2seq_init_in). */
ATTNDEF size_t attn_cisformer_bytes(const attn_cisformer_config *cfg);
ATTNDEF attn_status attn_cisformer_init_in(attn_cisformer *m, const attn_cisformer_config *cfg, attn_rng *rng,
                                           void *mem, size_t bytes);
ATTNDEF void attn_cisformer_free(attn_cisformer *m);
/* Sizes for nb windows at once: the cache forward fills for backward, and the scratch either uses. */
ATTNDEF size_t attn_cisformer_cache_floats(const attn_cisformer *m, int nb);
ATTNDEF size_t attn_cisformer_work_bytes(const attn_cisformer *m, int nb);
/* y [nb, d] for nb windows; window i is tokens[i stride .. i stride + ncon) (stride 1 slides along
   one series, stride ncon reads separate windows). Tokens must be in 0 .. d-1. */
ATTNDEF attn_status attn_cisformer_forward(const attn_cisformer *m, attn_float *y, attn_float *cache,
                                           size_t cache_floats, const int *tokens, int stride, int nb,
                                           void *work, size_t work_bytes);
/* Accumulates the gradient of the loss with dL/dy = dy [nb, d] into m->p's gradient block, from the
   cache of the forward call over the same nb windows (the one-hot inputs need no gradient). */
ATTNDEF attn_status attn_cisformer_backward(attn_cisformer *m, const attn_float *dy, const attn_float *cache,
                                            size_t cache_floats, int nb, void *work, size_t work_bytes);
/* The same backward pass fused with a step of SGD with momentum (attn_sgd_step's rule; velocity
   laid out like m->p, step counted the same way): each parameter tensor (per position for the
   position-specific ones) is stepped as soon as its gradient is known and no later part of the
   pass reads its old value. With one window (nb = 1) a weight's gradient is an outer product,
   applied row by row without being formed; with more, it goes through a small scratch in work.
   m->p's gradient block is neither read nor written (nor is velocity in the alignment padding
   between tensors). Equal to attn_params_zero_grad + attn_cisformer_backward + attn_sgd_step up to
   rounding, and about twice as fast when a step follows every prediction (the paper's protocol). */
ATTNDEF attn_status attn_cisformer_backward_sgd(attn_cisformer *m, const attn_float *dy,
                                                const attn_float *cache, size_t cache_floats, int nb,
                                                attn_float *velocity, attn_float lr, attn_float momentum,
                                                long step, void *work, size_t work_bytes);

/* A transformer of pre-norm blocks (Schug et al. 2025, the HYLA paper's model; in the expressive-attention
   experiments, the shared-weight baseline beside the cisformer):
     x_0[t] = E[tok_t], or Win in_t + bin with dense inputs;  + P[t] with learned positions
     per layer l:  h = x + Attn_l(Norm(x));   x = h + W2 act(W1 Norm(h) + b1) + b2
                 (glu: x = h + W2 ((W1 n + b1) . act(W3 n + b3)) + b2 with n = Norm(h); SiLU gives
                 the Llama / Cogformer SwiGLU, Lv et al. 2024, App. C)
     y[t] = Wout Norm(x_L[t]) + bout       for the last `readout` positions t (0: every position)
   Norm is LayerNorm with gain and bias, or RMSNorm with gain, eps cfg->eps. Attn_l is attn_layer
   with H heads of dk, dv, causal or not, of the layer's kind (differential attention carries its
   lambda [4, dk/2] and gain [dv], HYLA+ its w2 [H, dv, dv]); RoPE on q and k with ATTN_POS_ROPE;
   with t5, each layer adds its own T5 relative-position bias table[h, bucket(i, j)] (table
   [H, max_T], unidirectional, nb = max_T; Raffel et al. 2020) to the scores; with dropout > 0 and
   m->training set, attention dropout on the normalised weights (the latent code), masks drawn
   from m->seed (change it every step; backward needs the same value). With bias = 0 no
   projection, MLP or head has a bias (Llama style).
   With readout R < T (and no RoPE, BigBird or Linformer), the last layer computes only what the
   head reads: the last R positions' queries over all T keys, and its MLP over those R rows. y and
   every gradient are those of the full computation (dropout masks and T5 buckets follow the
   query's position). */
#define ATTN_MAX_LAYERS 64
#define ATTN__TF_MAX_SLOTS 28 /* private: parameter tensors per layer, at most */
typedef enum attn_pos_kind {
    ATTN_POS_NONE = 0,
    ATTN_POS_LEARNED,
    ATTN_POS_ROPE,
    ATTN_POS_COUNT
} attn_pos_kind;
typedef enum attn_norm_kind { ATTN_NORM_LAYER = 0, ATTN_NORM_RMS, ATTN_NORM_COUNT } attn_norm_kind;

typedef enum attn_init_kind {
    ATTN_INIT_NORMAL = 0, /* N(0, 1 / fan_in) */
    ATTN_INIT_UNIFORM,    /* U(+-1/sqrt(fan_in)), PyTorch's nn.Linear */
    ATTN_INIT_LECUN, /* flax's lecun_normal: N(0, 1) truncated to [-2, 2], scaled to variance 1 / fan_in */
    ATTN_INIT_COUNT
} attn_init_kind;

typedef struct attn_transformer_config {
    int vocab, in_dim;       /* token inputs 0 .. vocab-1, or (vocab 0) dense inputs of width in_dim */
    int d, layers;           /* model width, blocks in 1 .. ATTN_MAX_LAYERS */
    int heads, dk, dv, mlp;  /* attention heads and their widths; the MLP's hidden width */
    int kv_heads;            /* key and value heads (grouped-query attention, scored kinds; 1:
                                multi-query); 0: heads */
    int max_T;               /* longest sequence (the learned position table's rows) */
    int out, readout;        /* output width; positions read out (0: all, r: the last r) */
    int causal;
    attn_float scale;        /* score scale; 0: 1/sqrt(dk) */
    attn_pos_kind pos;
    attn_norm_kind norm;
    attn_float eps;          /* of every norm; PyTorch's LayerNorm uses 1e-5 */
    attn_act act;            /* the MLP's activation */
    int glu;                 /* nonzero: a gated MLP (a third matrix W3 [mlp, d] and bias b3) */
    int doc_mask, bos;       /* doc_mask: token inputs attend only within their document, the
                                segment id being the count of bos tokens up to them) */
    int bias;                /* nonzero: projections, MLP and head have biases */
    int t5;                  /* nonzero: T5 relative-position bias tables */
    int window, dilation;    /* a sliding window (Beltagy et al. 2020) in every layer: query i sees keys
                                i + m dilation, m in -window .. window (causal: .. 0); 0: none;
                                dilation 0 means 1 */
    int global;              /* with a window, the first `global` positions are global tokens */
    int bigbird_block, bigbird_random, bigbird_seed; /* BigBird blocks in every layer (Zaheer et al.
                                2020): block size b > 0 (0: none), r random blocks per block row;
                                the layout (attn_bigbird_blocks) is drawn for max_T from its own
                                seed (so a checkpoint restores it), and a shorter sequence uses its
                                first blocks; no step-wise decoding */
    int linformer_k;         /* > 0: Linformer in every layer (Wang et al. 2020): keys and values
                                compressed to linformer_k rows by the layer's Elin, Flin [k, max_T];
                                scored kinds, not causal, no T5, window, blocks or documents */
    attn_float dropout;      /* attention dropout rate (applied when m->training is set) */
    attn_init_kind init;     /* of the matrices */
    attn_kind kinds[ATTN_MAX_LAYERS]; /* the attention kind of each layer */
    int qk_norm;             /* nonzero: QK-norm in every layer (attn_layer's qnorm, knorm [dk]) */
    attn_float rope_theta;   /* RoPE's base (ATTN_POS_ROPE); 0: 10000 */
    /* Encoders (BERT, Devlin et al. 2019; sentence-transformers' all-MiniLM-L6-v2): post_norm makes
       the blocks x = Norm(x + Attn(x)), x = Norm(x + MLP(x)) without a final norm; emb_norm adds a
       norm (gain neg, bias neb) after the embeddings and positions; pad_mask 1 makes every token equal
       to pad a key no query sees (a padded batch), pad_mask 2 every token -1 (embedded as pad), pad
       then being a token like any other (Hugging Face's attention_mask: a "[PAD]" written in the text
       is seen); out 0 leaves the head out, y being the last
       block's rows [B, R, d]. Decoding refuses them (an encoder is not causal), and the attention
   weights pad_mask (their tokens are not given). */
    int post_norm, emb_norm, pad_mask, pad;
    /* Score modifiers (attn_mod_init): mods[l] is layer l's provided modifier (ATTN_MOD_NONE: none;
       for the tiled engine's kinds), every one with the settings in mod (cap; buckets,
       max_distance, bidirectional; its kind and H are mods[l] and heads). A RELBIAS layer learns
       its table relbias [H, buckets] (from 0), a TEMPERATURE layer temperature [H] (from 1).
       Mask modifiers: masks[l] is layer l's provided mask (ATTN_MASK_NONE: none), with mod.span
       (ATTN_MASK_PREFIX needs causal 0), on top of the masks above. */
    attn_mod_kind mods[ATTN_MAX_LAYERS];
    attn_mask_kind masks[ATTN_MAX_LAYERS];
    attn_mod_config mod;
} attn_transformer_config;

/* params: E [vocab, d] or Win [d, in_dim] and bin [d], P [max_T, d] (learned positions); per layer
   n1g, n1b [d] (n1b: LayerNorm only), Wq [H dk, d], bq, Wk [KH dk, d], bk, Wv [KH dv, d], bv (KH:
   kv_heads or H), qnorm, knorm [dk] (qk_norm), Wo [d, H dv], bo (the biases only with cfg.bias),
   lambda [4, dk/2] and gain [dv] (differential) or w2 [H, dv, dv] (HYLA+), t5 [H, max_T], Elin,
   Flin [linformer_k, max_T] (Linformer), n2g, n2b, W1 [mlp, d], b1, W3 [mlp, d], b3 (glu), W2
   [d, mlp], b2; then nfg, nfb, Wout [out, d], bout.
   at[] is private: the tensor index of each slot of each layer (-1: absent);
   attn_transformer_named and attn_transformer_layer_named give them by name. */
typedef struct attn_transformer {
    attn_transformer_config cfg;
    attn_params p;
    int training;      /* nonzero: attention dropout on */
    uint64_t seed;     /* the dropout masks' seed */
    short at[ATTN_MAX_LAYERS + 1][ATTN__TF_MAX_SLOTS];
    void *pattern;     /* private, with a window: the dilation of each head, the global tokens */
    void *packed;      /* private: the weights' panels (attn_transformer_pack), or NULL */
} attn_transformer;

/* The model's tensors by name (the shapes above), pointing into m->p's value block (grad 0) or its
   gradient block (grad 1); NULL where the configuration has no such tensor. The layer's fields are
   in block order; w2 is HYLA+'s value network, W2 the MLP's output matrix. */
typedef struct attn_transformer_tensors {
    attn_float *E, *Win, *bin, *P;    /* token embedding, or dense input projection; learned positions */
    attn_float *nfg, *nfb, *Wout, *bout; /* the final norm; the head */
    attn_float *neg, *neb;               /* the embeddings' norm (emb_norm) */
} attn_transformer_tensors;
typedef struct attn_transformer_layer_tensors {
    attn_float *n1g, *n1b;                             /* the norm before attention */
    attn_float *Wq, *bq, *Wk, *bk, *Wv, *bv, *Wo, *bo; /* the attention projections */
    attn_float *lambda, *gain, *w2;                    /* differential attention; HYLA+ */
    attn_float *t5;                                    /* the T5 bias table */
    attn_float *Elin, *Flin;                           /* Linformer's compressions */
    attn_float *n2g, *n2b;                             /* the norm before the MLP */
    attn_float *W1, *b1, *W3, *b3, *W2, *b2;           /* the MLP (W3, b3: glu) */
    attn_float *qnorm, *knorm;                         /* QK-norm's gains (qk_norm) */
    attn_float *relbias, *temperature;                 /* the score modifier's (mods[l]) */
} attn_transformer_layer_tensors;
ATTNDEF attn_transformer_tensors attn_transformer_named(const attn_transformer *m, int grad);
/* Layer 0 .. layers-1 (out of range: every field NULL, the error set). */
ATTNDEF attn_transformer_layer_tensors attn_transformer_layer_named(const attn_transformer *m, int layer,
                                                                    int grad);

/* A small byte-level causal language model, valid as it is: vocab = out = 256, d 128, 4 layers of
   4 heads of 32, MLP 512, max_T 256, learned positions, LayerNorm (eps 1e-5), GELU (tanh form),
   biases, N(0, 1/fan_in) matrices, softmax in every layer, every position read out. Change what
   differs (a zeroed configuration is not valid: eps 0 is refused). */
ATTNDEF attn_transformer_config attn_transformer_config_default(void);
/* The parameter count of a configuration; 0 (and the error set) if it is invalid. */
ATTNDEF size_t attn_transformer_param_count(const attn_transformer_config *cfg);
/* Allocates and draws the parameters: matrices (Win too) as cfg->init says, E and P N(0, 1), T5
   tables N(0, 1 / max_T) (flax's embedding default), biases 0, gains 1, differential lambda
   N(0, 0.1^2). training and seed start at 0. */
ATTNDEF attn_status attn_transformer_init(attn_transformer *m, const attn_transformer_config *cfg,
                                          attn_rng *rng);
/* In the caller's memory, mem [bytes >= attn_transformer_bytes(cfg)]: the parameters and a window's
   pattern (see attn_cisformer_init_in). */
ATTNDEF size_t attn_transformer_bytes(const attn_transformer_config *cfg);
ATTNDEF attn_status attn_transformer_init_in(attn_transformer *m, const attn_transformer_config *cfg,
                                             attn_rng *rng, void *mem, size_t bytes);
ATTNDEF void attn_transformer_free(attn_transformer *m);
/* For inference: packs each layer's Wq, Wk, Wv, Wo, W1, W3 and W2 once, in the layout the running
   kernels read (which attn_gemm otherwise makes on every call), for the forward passes and the
   decoder to read instead of the weights (memory: about the layers' weights again); on 0 frees
   them, as attn_transformer_free does. The weights must not change while packed: backward refuses,
   and a caller writing to m->p packs again. After attn_simd_set to other kernels the products read
   the weights as before (under ATTN_USE_CBLAS the packed form is the weights transposed). */
ATTNDEF attn_status attn_transformer_pack(attn_transformer *m, int on);
/* Sizes for B sequences of T tokens: the cache forward fills for backward, the scratch of either. */
ATTNDEF size_t attn_transformer_cache_floats(const attn_transformer *m, int B, int T);
ATTNDEF size_t attn_transformer_work_bytes(const attn_transformer *m, int B, int T);
/* y [B, R, out] with R = readout (or T when readout is 0) from tokens [B, T] in 0 .. vocab-1 (x
   NULL), or from dense inputs x [B, T, in_dim] (tokens NULL); 1 <= T <= max_T, R <= T. */
ATTNDEF attn_status attn_transformer_forward(const attn_transformer *m, attn_float *y, attn_float *cache,
                                             size_t cache_floats, const int *tokens, const attn_float *x,
                                             int B, int T, void *work, size_t work_bytes);
/* Accumulates the gradient for dL/dy = dy [B, R, out] into m->p's gradient block, from the cache
   of the forward call with the same inputs, B, T, training flag and seed. */
ATTNDEF attn_status attn_transformer_backward(attn_transformer *m, const attn_float *dy,
                                              const attn_float *cache, size_t cache_floats, const int *tokens,
                                              const attn_float *x, int B, int T, void *work,
                                              size_t work_bytes);
/* Gradient accumulation: the loss and gradient of B sequences, a chunk of them at a time, each
   chunk's forward pass, loss and backward pass in turn, so that the backward pass reads the
   chunk's activations back from the caches instead of from memory. The same gradient as one
   forward, loss and backward over the batch up to the order of the sums (the dropout masks do not
   depend on the batch index); it accumulates into m->p's gradient block (zero it first). chunk:
   sequences per chunk, 0 for ATTN_CHUNK_TOKENS / T (at least 1). loss(ctx, b0, nb, y, dy) gets the
   outputs y [nb, R, out] (out 0: d) of sequences b0 .. b0 + nb - 1, writes dL/dy (the same shape) to dy and
   returns their part of the loss; *total (may be NULL) is the sum of the parts. work:
   attn_transformer_grad_work_bytes(m, B, T, chunk) bytes (the cache of one chunk among them). */
#ifndef ATTN_CHUNK_TOKENS
#define ATTN_CHUNK_TOKENS 512
#endif
typedef double (*attn_transformer_loss_fn)(void *ctx, int b0, int nb, const attn_float *y, attn_float *dy);
ATTNDEF size_t attn_transformer_grad_work_bytes(const attn_transformer *m, int B, int T, int chunk);
ATTNDEF attn_status attn_transformer_grad(attn_transformer *m, attn_transformer_loss_fn loss, void *ctx,
                                          const int *tokens, const attn_float *x, int B, int T, int chunk,
                                          double *total, void *work, size_t work_bytes);
/* The normalised attention weights of one layer, weights [B, H, T, T] (as attn_attention_forward
   writes them: before dropout; for the head-mixing kinds the latent code a), recomputed from the
   cache of the last forward call over B sequences of length T (a last layer that computed only the
   read-out queries is run again in full from its cached input). work:
   attn_transformer_weights_work_bytes(). */
ATTNDEF size_t attn_transformer_weights_work_bytes(const attn_transformer *m, int B, int T);
ATTNDEF attn_status attn_transformer_weights(const attn_transformer *m, attn_float *weights,
                                             const attn_float *cache, size_t cache_floats, int B, int T,
                                             int layer, void *work, size_t work_bytes);
/* Step-wise decoding of a causal token model with a key-value cache (inference: no dropout): the
   cache holds each layer's keys and values, head by head (rotated with RoPE), for the len tokens
   seen so far. attn_transformer_decode appends n tokens (a prompt, or one token per
   step) at positions len .. len + n - 1 and writes their logits [n, out], every row (readout does
   not apply): row i equals the full forward pass' row len + i over all len + n tokens, for every
   kind, with learned positions, RoPE, T5 biases and document masks, in O((len + n) n) work instead
   of O((len + n)^2); the linear-time kinds (kernel, taylor) keep their recurrent state instead of
   the rows, O(F dv) memory and work per token and head. With a window (and its global tokens) the
   cache keeps only the rows a query can still see, the global tokens' and the last window x
   dilation + chunk positions' (chunk = max(window x dilation, 16); a longer call runs in chunks),
   so it stays O(window) however long the text. Setting kv->len = p (p <= len) forgets the tokens
   after p, but for the linear-time kinds only p = len, and for a window only while the rows p
   needs are still held (else ATTN_ERR_ARG). The cache and the
   work come from the caller (size queries first); nothing is allocated. Models with dense inputs,
   without causal attention, or with a kind whose scores shift with the number of keys in a call
   (sigmoid's -ln Tk: its rows depend on the sequence's length) are refused. */
typedef struct attn_transformer_kv {
    attn_float *k, *v; /* layer after layer: keys [H, rows, dk] and values [H, rows, dv]; for a
                          linear-time kind (kernel, taylor) the recurrent state instead,
                          S = sum phi(k) v^T [H, F, dv] and z = sum phi(k) [H, F] (F features) */
    int *seg;          /* [rows]: the segment (document) of each row, with doc_mask */
    int cap, len;      /* capacity (1 .. max_T) and the tokens seen */
    int at;            /* the tokens the recurrent states hold (they cannot rewind) */
    int rows;          /* key rows per head: cap, or fewer with a window */
    int first;         /* with a window: the rows hold positions 0 .. global-1 and first .. len-1 */
    uint64_t layout;   /* the model's cache layout it was set up for (decode refuses another's) */
} attn_transformer_kv;
ATTNDEF size_t attn_transformer_kv_bytes(const attn_transformer *m, int cap);
ATTNDEF attn_status attn_transformer_kv_init(attn_transformer_kv *kv, const attn_transformer *m, int cap,
                                             void *mem, size_t bytes);
/* Work for calls of up to n tokens into a cache of capacity cap. */
ATTNDEF size_t attn_transformer_decode_work_bytes(const attn_transformer *m, int n, int cap);
ATTNDEF attn_status attn_transformer_decode(const attn_transformer *m, attn_transformer_kv *kv,
                                            attn_float *logits, const int *tokens, int n, void *work,
                                            size_t work_bytes);
/* A token drawn from logits [V]: temperature 0 is greedy (the first largest logit); otherwise
   p_i ~ exp(logit_i / temperature) restricted to the top_k largest logits (0: all; ties at the
   k-th value are kept) and then to the nucleus, the most probable tokens whose mass reaches top_p
   (1: all), renormalised, one uniform draw of r. Reproducible from r's seed; no allocation.
   Returns the token, or -1 (error set) for V < 1, a negative or non-finite temperature, top_k < 0,
   top_p outside (0, 1], or logits that are not finite. */
ATTNDEF int attn_sample(const attn_float *logits, int V, double temperature, int top_k, double top_p,
                        attn_rng *r);

/* The thesis' encoder-decoder (Conti 2024, Sec. 1.2; Vaswani et al. 2017 with post-LN), token in, logits out:
     e_0 = Drop(sqrt(d) Es[src_t] + PE(t))                  PE sinusoidal (attn_pos_sinusoidal)
     encoder layer:  u = LN(e + Drop(SelfAttn(e)));  e' = LN(u + Drop(FFN(u)))
     y_0 = Drop(sqrt(d) Et[tgt_t] + PE(t))
     decoder layer:  u = LN(y + Drop(CausalSelfAttn(y)));  v = LN(u + Drop(CrossAttn(u, e_L)));
                     y' = LN(v + Drop(FFN(v)))
     logits[t] = Wout y_L[t] + bout
   FFN(x) = W2 ReLU(W1 x + b1) + b2; every attention is attn_layer with H heads of dk, dv and score
   scale 1/sqrt(dk), cross-attention taking q from the decoder and k, v from e_L by projections.
   LN has gain and bias, eps cfg->eps in the form cfg->ln_eps (the thesis: 1e-6, ATTN_LN_EPS_OUTSIDE).
   Source keys holding cfg->pad are masked in the encoder's self-attention and in the
   cross-attention (-1: no padding); the decoder is causal, so padding after a target's end
   changes nothing before it (give those positions target -1 in attn_cross_entropy_forward).
   Drop is inverted dropout with rate cfg->dropout while m->training is set (masks drawn from
   m->seed, kept in the cache for backward). A sublayer is one of the post-LN residual units above,
   numbered in order: encoder layer l has sublayers 2l (self) and 2l + 1 (FFN), decoder layer l
   has 2 Le + 3l (causal self), + 1 (cross), + 2 (FFN). */
typedef struct attn_seq2seq_config {
    int src_vocab, tgt_vocab;  /* token ids 0 .. vocab-1 */
    int pad;                   /* the source's padding id, or -1 */
    int d, heads, dk, dv, mlp; /* width; heads and their widths; the FFN's hidden width */
    int enc_layers, dec_layers; /* Le, Ld in 1 .. ATTN_MAX_LAYERS */
    int max_src, max_tgt;      /* longest source and decoder input */
    attn_kind kind;            /* of every attention; not one with parameters of its own
                                  (differential, HYLA+) */
    attn_float eps;
    attn_ln_eps ln_eps;
    attn_float dropout;        /* in [0, 1) */
    attn_init_kind init;       /* of the matrices; the embeddings are N(0, 1/d) (sqrt(d) E: unit scale) */
    /* Score modifiers (attn_mod_init) per layer: enc_mods[l] in encoder layer l's self-attention,
       dec_mods[l] and cross_mods[l] in decoder layer l's causal self- and cross-attention
       (ATTN_MOD_NONE: none), every one with the settings in mod (its kind and H are the sublayer's
       and heads); cross-attention takes SOFTCAP and TEMPERATURE only. A RELBIAS sublayer learns its
       table relbias [H, buckets] (from 0), a TEMPERATURE one temperature [H] (from 1).
       Mask modifiers: enc_masks[l] and dec_masks[l] in the self-attentions (ATTN_MASK_NONE: none),
       with mod.span; the decoder's is causal (no ATTN_MASK_PREFIX). */
    attn_mod_kind enc_mods[ATTN_MAX_LAYERS], dec_mods[ATTN_MAX_LAYERS], cross_mods[ATTN_MAX_LAYERS];
    attn_mask_kind enc_masks[ATTN_MAX_LAYERS], dec_masks[ATTN_MAX_LAYERS];
    attn_mod_config mod;
} attn_seq2seq_config;

/* params: Es [src_vocab, d], Et [tgt_vocab, d]; per attention sublayer Wq [H dk, d], bq, Wk [H dk, d],
   bk, Wv [H dv, d], bv, Wo [d, H dv], bo, then its LN's g, b [d], then its modifier's relbias
   [H, buckets] or temperature [H] (if it has one); per FFN sublayer W1 [mlp, d], b1, W2 [d, mlp],
   b2, g, b; then Wout [tgt_vocab, d], bout. */
typedef struct attn_seq2seq {
    attn_seq2seq_config cfg;
    attn_params p;
    int training;     /* nonzero: dropout on */
    uint64_t seed;    /* the dropout masks' seed (change it every step) */
} attn_seq2seq;

/* The model's tensors by name, pointing into m->p's value block (grad 0) or gradient block (grad 1).
   A sublayer (numbered as above) has Wq .. bo and its modifier's relbias or temperature (attention)
   or W1 .. b2 (FFN), the others NULL, and its LN's gain g and bias b. */
typedef struct attn_seq2seq_tensors {
    attn_float *Es, *Et, *Wout, *bout; /* the source and target embeddings; the head */
} attn_seq2seq_tensors;
typedef struct attn_seq2seq_sublayer_tensors {
    attn_float *Wq, *bq, *Wk, *bk, *Wv, *bv, *Wo, *bo; /* an attention sublayer's projections */
    attn_float *W1, *b1, *W2, *b2;                     /* an FFN sublayer's */
    attn_float *g, *b;                                 /* the LN after either */
    attn_float *relbias, *temperature;                 /* an attention's modifier's, or NULL */
} attn_seq2seq_sublayer_tensors;
ATTNDEF attn_seq2seq_tensors attn_seq2seq_named(const attn_seq2seq *m, int grad);
/* Sublayer 0 .. 2 Le + 3 Ld - 1 (out of range: every field NULL, the error set). */
ATTNDEF attn_seq2seq_sublayer_tensors attn_seq2seq_sublayer_named(const attn_seq2seq *m, int sub, int grad);

/* The thesis' model on the digit task: the digit vocabulary (pad ATTN_DIGITS_PAD), d 128, 8 heads of
   16, FFN 512, one layer a side, max 16 tokens a side, softmax, eps 1e-6 outside the root, dropout
   0.1, uniform initialisation. Change what differs. */
ATTNDEF attn_seq2seq_config attn_seq2seq_config_default(void);
/* The parameter count of a configuration; 0 (and the error set) if it is invalid. */
ATTNDEF size_t attn_seq2seq_param_count(const attn_seq2seq_config *cfg);
/* Allocates and draws the parameters (matrices as cfg->init says, biases 0, gains 1). */
ATTNDEF attn_status attn_seq2seq_init(attn_seq2seq *m, const attn_seq2seq_config *cfg, attn_rng *rng);
/* In the caller's memory, mem [bytes >= attn_seq2seq_bytes(cfg)] (see attn_cisformer_init_in; the
   list of parameter descriptors, one per tensor, is allocated during the call and freed). */
ATTNDEF size_t attn_seq2seq_bytes(const attn_seq2seq_config *cfg);
ATTNDEF attn_status attn_seq2seq_init_in(attn_seq2seq *m, const attn_seq2seq_config *cfg, attn_rng *rng,
                                         void *mem, size_t bytes);
ATTNDEF void attn_seq2seq_free(attn_seq2seq *m);
/* Sizes for B pairs of a source of Ts and a decoder input of Tt tokens. */
ATTNDEF size_t attn_seq2seq_cache_floats(const attn_seq2seq *m, int B, int Ts, int Tt);
ATTNDEF size_t attn_seq2seq_work_bytes(const attn_seq2seq *m, int B, int Ts, int Tt);
/* logits [B, Tt, tgt_vocab] from src [B, Ts] and the decoder's input tgt [B, Tt] (the target
   shifted right behind a start token: teacher forcing). */
ATTNDEF attn_status attn_seq2seq_forward(const attn_seq2seq *m, attn_float *logits, attn_float *cache,
                                         size_t cache_floats, const int *src, const int *tgt, int B, int Ts,
                                         int Tt, void *work, size_t work_bytes);
/* Accumulates the gradient for dL/dlogits = dlogits [B, Tt, tgt_vocab] into m->p's gradient block,
   from the cache of the forward call with the same inputs, training flag and seed. */
ATTNDEF attn_status attn_seq2seq_backward(attn_seq2seq *m, const attn_float *dlogits, const attn_float *cache,
                                          size_t cache_floats, const int *src, const int *tgt, int B, int Ts,
                                          int Tt, void *work, size_t work_bytes);
/* The attention weights [B, H, Tq, Tk] of attention sublayer `sub` (see above; Tq, Tk = Ts, Ts for
   the encoder, Tt, Tt for the decoder's self-attention, Tt, Ts for the cross-attention),
   recomputed from the cache of the last forward call. work: attn_seq2seq_work_bytes(). */
ATTNDEF attn_status attn_seq2seq_weights(const attn_seq2seq *m, attn_float *weights, const attn_float *cache,
                                         size_t cache_floats, int B, int Ts, int Tt, int sub, void *work,
                                         size_t work_bytes);
/* Beam search (beam = 1: greedy decoding) for each of the B sources src [B, Ts]: hypotheses start
   at bos and end at eos or after max_len tokens; each step keeps the `beam` best of the finished
   hypotheses and the one-token extensions of the others by log p / lp, lp = ((5 + len) / 6)^alpha
   (GNMT's length penalty; alpha 0: the plain log-likelihood), and stops when all kept are finished.
   out [B, max_len]: the best hypothesis' tokens after bos, eos included, then -1; score [B] (may
   be NULL): its log p / lp. Each step runs one position per hypothesis through the decoder, with the
   source's cross-attention keys and values computed once and each hypothesis' self-attention keys
   and values cached (the kinds whose scores shift with the number of keys, sigmoid, rerun the
   decoder over the prefix instead). Allocates (ATTN_MALLOC) the caches and work for one source;
   attn_seq2seq_decode_in takes them from the caller, work [work_bytes >=
   attn_seq2seq_decode_work_bytes(m, Ts, max_len, beam)], and allocates nothing. */
ATTNDEF attn_status attn_seq2seq_decode(const attn_seq2seq *m, int *out, attn_float *score, const int *src,
                                        int B, int Ts, int bos, int eos, int max_len, int beam,
                                        attn_float alpha);
ATTNDEF size_t attn_seq2seq_decode_work_bytes(const attn_seq2seq *m, int Ts, int max_len, int beam);
ATTNDEF attn_status attn_seq2seq_decode_in(const attn_seq2seq *m, int *out, attn_float *score, const int *src,
                                           int B, int Ts, int bos, int eos, int max_len, int beam,
                                           attn_float alpha, void *work, size_t work_bytes);

/* ============================================================================================== */
/* 9. tasks                                                                                        */
/* ============================================================================================== */

/* The expressive-attention paper's NT series (Gros 2024) over symbols 0 .. N-1 with delay tau:
     ATTN_NT    x(t) = (x(t - tau) + x(t - tau - 1)) mod N                       ("NxTy": N, tau)
     ATTN_NT_S  x(t) = (x(t - 1) + ... + x(t - tau - 1)) mod N
     ATTN_NT_R  the NT-S value when x(t - tau - 1) = 0, else the NT value
     ATTN_NT_MIX each series is NT or NT-S with probability 1/2 (no label; the choice is per series)
   for t >= tau + 1; x(0 .. tau) is the initial condition. */
typedef enum attn_nt_task { ATTN_NT = 0, ATTN_NT_S, ATTN_NT_R, ATTN_NT_MIX, ATTN_NT_TASK_COUNT } attn_nt_task;
ATTNDEF const char *attn_nt_name(attn_nt_task t); /* "nt", "nts", "ntr", "mix" */
ATTNDEF int attn_nt_from_name(const char *name);  /* the task, or -1 */
/* x(t) from x(t - tau - 1 .. t - 1) = prev[0 .. tau] (oldest first); task is NT, NT_S or NT_R.
   -1 (error set) for another task, N < 2, tau < 1 or prev NULL. */
ATTNDEF int attn_nt_next(attn_nt_task task, int N, int tau, const int *prev);
/* A series x [len]: the initial condition init [tau + 1] (NULL: uniform draws from r), then the
   rule. ATTN_NT_MIX draws the rule from r first; *rule (may be NULL) receives the rule used.
   Needs N >= 2, tau >= 1, len >= tau + 1 (r may be NULL only when init is given and the task is
   not the mixture). */
ATTNDEF attn_status attn_nt_series(int *x, int len, attn_nt_task task, int N, int tau, const int *init,
                                   attn_rng *r, attn_nt_task *rule);

/* The cycle census of the state map (x(t - tau - 1), ..., x(t - 1)) -> (x(t - tau), ..., x(t)) over
   all N^(tau + 1) states: cycle lengths with their multiplicities, longest first. NT and NT-S are
   bijections, so every state is on a cycle; NT-R is not, and the states off the cycles are counted
   as transient. The paper's "mean cycle length" is cycle_states / cycles. Needs N^(tau + 1) <= 2^27;
   it allocates (ATTN_MALLOC) one bit per state for NT and NT-S, 4 bytes per state for NT-R. */
#define ATTN_NT_MAX_LENGTHS 64
typedef struct attn_nt_census {
    int nlengths;                      /* distinct cycle lengths */
    long length[ATTN_NT_MAX_LENGTHS];  /* longest first */
    long count[ATTN_NT_MAX_LENGTHS];   /* cycles of that length */
    long states, cycles, cycle_states, transient;
} attn_nt_census;
ATTNDEF attn_status attn_nt_census_compute(attn_nt_census *c, attn_nt_task task, int N, int tau);

/* The HYLA paper's fuzzy-logic in-context regression (Schug et al. 2025, Sec. 3). Terms are the 2^L sign
   vectors c
   (index sum_i c_i 2^(L-1-i)); a term's value is min_i l_i with l_i = x_i (c_i = 1) or 1 - x_i; a
   function is the max of K distinct terms. The terms with index >= 2^L - num_ood (num_ood =
   floor(2^L frac_ood_terms)) are unseen; the K-subsets of the others (lexicographic) are shuffled
   with the seed, the first floor(n frac_heldout) are the held-out combinations (the paper's "OOD"
   split) and the rest train; the K-subsets of the unseen terms form the third split. A task: a
   combination drawn uniformly from its split, x_t ~ U[0, 1]^L for t < N, tokens [x_t, f(x_t)], the
   query [x_N, 0] and target f(x_N). */
typedef enum attn_fuzzy_split {
    ATTN_FUZZY_TRAIN = 0,
    ATTN_FUZZY_HELDOUT,
    ATTN_FUZZY_UNSEEN,
    ATTN_FUZZY_SPLITS
} attn_fuzzy_split;
typedef struct attn_fuzzy {
    int L, K, N;                     /* variables, terms per function, examples per task (query included) */
    int nterms, num_ood;             /* 2^L, unseen terms */
    int count[ATTN_FUZZY_SPLITS];    /* combinations in each split */
    int *combos[ATTN_FUZZY_SPLITS];  /* [count, K] term indices, ascending within a combination */
    void *owned;
} attn_fuzzy;
/* L in 1 .. 12, K >= 1, N >= 2, frac_heldout in (0, 1), frac_ood_terms in [0, 1); at most 2^24
   combinations in all; every split but the unseen one must be non-empty (ATTN_ERR_ARG). Allocates
   (ATTN_MALLOC) the combination lists; attn_fuzzy_free releases them. */
ATTNDEF attn_status attn_fuzzy_init(attn_fuzzy *f, int L, int K, int N, double frac_heldout,
                                    double frac_ood_terms, uint64_t seed);
ATTNDEF void attn_fuzzy_free(attn_fuzzy *f);
/* The function of the K terms terms[] at x [L] (in [0, 1]; -1, error set, for a NULL pointer). */
ATTNDEF double attn_fuzzy_value(const attn_fuzzy *f, const int *terms, const attn_float *x);
/* B tasks of a split: x [B, N, L + 1] (the tokens), y [B] (the query's target), var [B] (the
   population variance of the N targets, the query's included; the R^2 denominator), combo [B]
   (the combination's index in its split; may be NULL). */
ATTNDEF attn_status attn_fuzzy_batch(const attn_fuzzy *f, attn_fuzzy_split split, int B, attn_float *x,
                                     attn_float *y, attn_float *var, int *combo, attn_rng *r);
/* The metric: mean over the B tasks of 1 - (pred - y)^2 / var; NaN (error set) for NULL or B < 1. */
ATTNDEF double attn_fuzzy_r2(const attn_float *pred, const attn_float *y, const attn_float *var, int B);

/* The HYLA paper's symbolic Raven task, SRAVEN (Schug et al. 2025, Sec. 4, App. B.3): 3 x 3 panels of K
   features with values
   0 .. F-1; feature k of every panel follows one rule, each row drawn on its own:
     0 constant (v, v, v)    1..4 progression by +1, +2, -1, -2 (s, s+k, s+2k) mod F
     5 addition (a, b, a+b)  6 subtraction (a, b, a-b) mod F
     7 distribute three: 3 distinct symbols per grid, each row a permutation of them
   A task latent is a multiset of K rules (combinations with replacement, lexicographic: C(K+7, K),
   330 at K = 4), rule k for feature k; they are shuffled with the seed and the first
   floor(n frac_ood) are held out (OOD). With permute, each column c shows the features in its own
   random order pi_c. The sequence: panels 0..7 (row-major) as K one-hot tokens of width F each,
   then K zero query tokens (9K tokens); the targets are panel 8's K values. */
#define ATTN_SRAVEN_RULES 8
typedef struct attn_sraven {
    int K, F, permute;
    int nlatent, nood;          /* latents in all and held out (the first nood of latent[]) */
    unsigned char *latent;      /* [nlatent, K] rule indices, ascending within a latent */
    void *owned;
} attn_sraven;
/* K in 1 .. 8, F in 3 .. 32, frac_ood in (0, 1) leaving latents on both sides. Allocates
   (ATTN_MALLOC) the latents; attn_sraven_free releases them. */
ATTNDEF attn_status attn_sraven_init(attn_sraven *s, int K, int F, double frac_ood, int permute,
                                     uint64_t seed);
ATTNDEF void attn_sraven_free(attn_sraven *s);
/* One instance of latent index li: panels [9, K] values as shown (after the column permutations). */
ATTNDEF attn_status attn_sraven_panels(const attn_sraven *s, int li, int *panels, attn_rng *r);
/* B instances from the training latents (ood = 0) or the held-out ones: x [B, 9K, F] one-hot
   tokens, targets [B, K], latent [B] indices into latent[] (may be NULL). */
ATTNDEF attn_status attn_sraven_batch(const attn_sraven *s, int ood, int B, attn_float *x, int *targets,
                                      int *latent, attn_rng *r);
/* Whether the context (panels 0..7 of panels [9, K]) admits an answer other than panel 8, by one
   of two definitions. Both look for an assignment of features to columns (all (K!)^2 relative
   orders of columns 1 and 2) under which every feature follows one of the 8 rules: rows 0 and 1
   complete, row 2's first two cells consistent with it (constant: equal; progressions: the next
   step; distribute three: two distinct symbols of the set; addition and subtraction: any), the
   rule's value for row 2's third cell its prediction. every = 0 (the paper's wording, Schug et al.
   2025, App. B.3, Table A2): ambiguous when the predictions differ from panel 8 in some feature.
   every = 1 (our reading of the authors' released checker): only when every feature has a fitting
   rule whose prediction differs from panel 8's. 1 or 0; -1 (error set) for NULL or K outside 1 .. 6. */
ATTNDEF int attn_sraven_ambiguous(const attn_sraven *s, const int *panels, int every);

/* Digit strings to transform, the encoder-decoder's synthetic seq2seq task: a source is L digits
   (L uniform in min_len .. max_len), the target the same digits reversed (ATTN_DIGITS_REVERSE) or
   sorted ascending (ATTN_DIGITS_SORT). Tokens: ATTN_DIGITS_PAD, _BOS, _EOS, then digit k is
   ATTN_DIGITS_0 + k (ATTN_DIGITS_VOCAB in all). For T = max_len + 1: src [B, T] holds the digits,
   EOS, then PAD; tgt_in [B, T] BOS and the target, then PAD (the decoder's input); tgt_out [B, T]
   the target, EOS, then -1 (no loss). A string is held out when the FNV-1a hash of its digits
   ('0' + k bytes) is 0 mod 10: test = 1 draws only those, test = 0 never, so a test set is never
   trained on. 1 <= min_len <= max_len; ATTN_ERR_ARG if 10,000 draws find no string of the split.
   attn_digits_exact: the fraction of the B rows of out [B, To] (decoded tokens, EOS included, as
   attn_seq2seq_decode writes them) equal to tgt_out [B, Tt]'s through EOS; -1 (error set) for a NULL
   pointer or a size < 1. */
typedef enum attn_digits_task { ATTN_DIGITS_REVERSE = 0, ATTN_DIGITS_SORT } attn_digits_task;
enum {
    ATTN_DIGITS_PAD = 0,
    ATTN_DIGITS_BOS = 1,
    ATTN_DIGITS_EOS = 2,
    ATTN_DIGITS_0 = 3,
    ATTN_DIGITS_VOCAB = 13
};
ATTNDEF attn_status attn_digits_batch(attn_digits_task task, int min_len, int max_len, int test, int B,
                                      int *src, int *tgt_in, int *tgt_out, attn_rng *r);
ATTNDEF double attn_digits_exact(const int *out, int To, const int *tgt_out, int Tt, int B);

/* ============================================================================================== */
/* 10. analysis and io                                                                             */
/* ============================================================================================== */

/* Checkpoints: a model's name, its configuration, the names it refers to (attention kinds), its
   tensors' names, shapes and offsets, and its parameter block, in one self-checking record, every
   number little-endian (format 2):
     "ATTNCKPT" | u32 version (2) | model name, 16 bytes, NUL-padded | u32 nconfig (<= 96) |
     u32 nnames (<= 64) | u32 ntensors | u32 float bytes (4 or 8) | u64 count |
     i32 config[nconfig] | nnames names of 32 bytes, NUL-padded |
     ntensors x (name, 32 bytes, NUL-padded | u32 ndim | u32 shape[4], zeros after ndim | u64 offset) |
     count IEEE floats | u64 FNV-1a hash (64-bit) of every byte before it
   The model defines its configuration words; a kind is stored as an index into the names, so the
   enum's values never reach a file (a kind registered with attn_kind_register is saved by its name
   and loads once it is registered again). A record is written in this build's float width and read
   in either width (a float64 record read by a float build is rounded). Reading checks every field
   and the hash before it writes anything, and reads into parameters only of the record's tensors:
   the same names and shapes in the same order, so a different model with the same count is
   refused; each tensor is copied to its place (the padding between tensors depends on the float
   width). Format 1 (0.1.0: no names or tensors, kinds as 0.1.0's enum values, the fixed fields
   around the configuration) is read too. */
#define ATTN_CKPT_VERSION 2
#define ATTN_CKPT_MAX_CONFIG 256
#define ATTN_CKPT_MAX_NAMES 64
#define ATTN_CKPT_MAX_TENSORS 65536
#define ATTN_CKPT_NAME_LEN 32 /* bytes of a stored name, its NUL included */
typedef struct attn_checkpoint_header {
    int version;                          /* 1 or 2 */
    char model[17];                       /* NUL-terminated */
    int nconfig;
    int32_t config[ATTN_CKPT_MAX_CONFIG];
    int nnames;
    char names[ATTN_CKPT_MAX_NAMES][ATTN_CKPT_NAME_LEN];
    int ntensors;                         /* 0 in a format-1 record */
    int float_bytes;                      /* of the stored floats: 4 or 8 */
    uint64_t count;                       /* floats stored */
} attn_checkpoint_header;

/* Bytes of the record of nconfig words, nnames names and the parameters p in this build's floats;
   0 (error set) if a count is out of range or the size overflows. */
ATTNDEF size_t attn_checkpoint_bytes(int nconfig, int nnames, const attn_params *p);
/* Writes the record into buf [bytes >= attn_checkpoint_bytes()]: model is at most 16 characters,
   names[nnames] and p's tensor names 1 .. 31. */
ATTNDEF attn_status attn_checkpoint_write(void *buf, size_t bytes, const char *model, const int32_t *config,
                                          int nconfig, const char *const *names, int nnames,
                                          const attn_params *p);
/* Validates the record buf [bytes] and fills *h (ATTN_ERR_FORMAT: not a valid record); then, if p
   is not NULL, copies each tensor into p's, which must be the record's tensors (format 1: give the
   record's count in its float width) or the call is ATTN_ERR_SHAPE and writes nothing. */
ATTNDEF attn_status attn_checkpoint_read(attn_checkpoint_header *h, attn_params *p, const void *buf,
                                         size_t bytes);
/* The same through a file (ATTN_ERR_IO without stdio, or when the file cannot be written or read).
   attn_checkpoint_load_file allocates (ATTN_MALLOC) *buf with the whole file, validated; free it
   with ATTN_FREE (or free() with the default allocator) after attn_checkpoint_read. */
ATTNDEF attn_status attn_checkpoint_save(const char *path, const char *model, const int32_t *config,
                                         int nconfig, const char *const *names, int nnames,
                                         const attn_params *p);
ATTNDEF attn_status attn_checkpoint_load_file(const char *path, void **buf, size_t *bytes,
                                              attn_checkpoint_header *h);

/* Configuration floats are stored as two words, the low and high halves of their float64 bits;
   kinds as an index into the record's names. The last words are each name's fingerprint (2 words:
   for a kind, two sums of its output on a fixed probe as float32 bits, else 0): a kind registered
   under a saved name with another formula is refused on load (files written before fingerprints
   load as before).
   The cisformer's checkpoint: model "cisformer", config d, ncon, kind, vec, init_uniform, the
   score scale (2 words), qk_raw (not in format 1), then the parameter block (m->p.total floats, with the
   alignment padding between tensors). Load initialises *m (attn_cisformer_free releases it) with
   the configuration of the file. */
ATTNDEF attn_status attn_cisformer_save(const attn_cisformer *m, const char *path);
ATTNDEF attn_status attn_cisformer_load(attn_cisformer *m, const char *path);
/* The transformer's: model "transformer", config vocab, d, layers, heads, dk, dv, mlp, max_T, out,
   readout, causal, pos, norm, act, bias, init, scale (2 words), eps (2 words), in_dim, t5,
   dropout (2 words), glu, doc_mask, bos, window, dilation, global (format 1 ends at bos), then
   the kind of each layer, the words after it (see the implementation); the parameter block. */
ATTNDEF attn_status attn_transformer_save(const attn_transformer *m, const char *path);
ATTNDEF attn_status attn_transformer_load(attn_transformer *m, const char *path);
/* The encoder-decoder's: model "seq2seq", config src_vocab, tgt_vocab, pad, d, heads, dk, dv, mlp,
   enc_layers, dec_layers, max_src, max_tgt, kind, ln_eps, init, eps (2 words), dropout (2 words);
   with score or mask modifiers, then mod.buckets, .max_distance, .bidirectional, .cap (2 words) and
   each attention sublayer's modifier in order (-1: none); then the names' fingerprints; with masks,
   last mod.span and each attention sublayer's mask (as the modifiers). */
ATTNDEF attn_status attn_seq2seq_save(const attn_seq2seq *m, const char *path);
ATTNDEF attn_status attn_seq2seq_load(attn_seq2seq *m, const char *path);

/* safetensors (Hugging Face's format for models): an 8-byte little-endian length N, N bytes of
   JSON {"NAME": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ...,
   "__metadata__": {"key": "value", ...}}, then the tensors' bytes (row-major, little-endian),
   offsets counted from the end of the JSON. attn.h reads every dtype of the format (the floats and
   the integers converted to attn_float; F8 kept as bytes) and writes F32. */
#define ATTN_ST_NAME_LEN 256 /* bytes of a tensor name or a metadata key or value, NUL included */
typedef enum attn_st_dtype {
    ATTN_ST_F32, ATTN_ST_F16, ATTN_ST_BF16, ATTN_ST_F64, ATTN_ST_I64, ATTN_ST_I32, ATTN_ST_I16, ATTN_ST_I8,
    ATTN_ST_U64, ATTN_ST_U32, ATTN_ST_U16, ATTN_ST_U8, ATTN_ST_BOOL, ATTN_ST_F8_E4M3, ATTN_ST_F8_E5M2
} attn_st_dtype;
typedef struct attn_st_tensor {
    char name[ATTN_ST_NAME_LEN];
    attn_st_dtype dtype;
    int ndim;                      /* 0 (a scalar) .. ATTN_MAX_DIMS */
    int64_t shape[ATTN_MAX_DIMS];
    size_t count;                  /* elements: the product of the shape */
    const unsigned char *data;     /* its bytes in the file's buffer */
} attn_st_tensor;
typedef struct attn_safetensors {
    int count, nmeta;
    attn_st_tensor *tensors;       /* [count], in the file's order */
    char (*meta)[2][ATTN_ST_NAME_LEN]; /* [nmeta] key, value */
    void *owned, *file;            /* the table; the file's bytes (attn_safetensors_load) */
} attn_safetensors;
/* Parses the file's bytes buf [bytes] into *st, whose tensors point into buf (keep it). Everything
   is checked before the table is allocated: the length within the buffer and at most 100 MB,
   strict JSON (no duplicate or unknown keys), a known dtype, at most ATTN_MAX_DIMS dimensions,
   names and metadata shorter than ATTN_ST_NAME_LEN, each tensor's bytes its shape's, and the
   tensors covering the data exactly, without overlap or hole. ATTN_ERR_FORMAT names what is wrong
   (and the tensor); st is untouched on failure. attn_safetensors_free releases the table. */
ATTNDEF attn_status attn_safetensors_parse(attn_safetensors *st, const void *buf, size_t bytes);
/* The same from a file, read whole into memory that st owns (ATTN_MALLOC). */
ATTNDEF attn_status attn_safetensors_load(attn_safetensors *st, const char *path);
ATTNDEF void attn_safetensors_free(attn_safetensors *st);
/* The tensor called name, or NULL; the value of metadata key, or NULL. */
ATTNDEF const attn_st_tensor *attn_safetensors_find(const attn_safetensors *st, const char *name);
ATTNDEF const char *attn_safetensors_meta(const attn_safetensors *st, const char *key);
/* Tensor name into out, converted to attn_float, when its shape is shape [ndim] (ATTN_ERR_ARG when
   there is no such tensor or it is F8, ATTN_ERR_SHAPE when its shape differs: the message names it
   and gives both shapes; nothing written then). */
ATTNDEF attn_status attn_safetensors_get(const attn_safetensors *st, const char *name, attn_float *out,
                                         int ndim, const int64_t *shape);
/* Writes n tensors (names[i], unique, 1 .. ATTN_ST_NAME_LEN - 1 bytes; the views tensors[i]) as
   F32 in this order, and metadata pairs meta[2 nmeta] (key, value; NULL when nmeta is 0), to path
   through a temporary renamed over it. The JSON is padded with spaces to a multiple of 8 bytes. */
ATTNDEF attn_status attn_safetensors_save(const char *path, const char *const *names,
                                          const attn_tensor *tensors, int n, const char *const *meta,
                                          int nmeta);

/* Hugging Face's GPT-2 ("model_type": "gpt2": learned positions, LayerNorm with biases, GELU in its
   tanh form, the fused c_attn projection stored [in, out] as its Conv1D does, the head tied to the
   token embedding) and Llama ("llama": RMSNorm, RoPE with rope_theta, SwiGLU, no biases,
   grouped-query heads, the head tied or not) as an attn_transformer: dir holds config.json and
   model.safetensors. Load reads GPT-2's vocab_size, n_embd, n_layer, n_head, n_positions, n_inner,
   layer_norm_epsilon and activation_function ("gelu_new" or "gelu"), or Llama's vocab_size,
   hidden_size, intermediate_size, num_hidden_layers, num_attention_heads, num_key_value_heads,
   head_dim, max_position_embeddings, rms_norm_eps and rope_theta (refusing rope_scaling, biases
   and an activation other than silu), initialises *m and fills it (lm_head.weight, when there, is
   the head; Llama's q and k rows are reordered from rotate_half's pairs (i, i + hd/2) to attn.h's
   (2i, 2i + 1), which leaves every score as it was); a missing, unknown or misshapen tensor is
   refused with its name. BERT ("bert": BertModel, sentence-transformers' all-MiniLM-L6-v2) loads as
   an encoder without a head (post_norm, emb_norm, pad_mask on pad_token_id, out 0; GELU's erf form;
   every token of type 0, whose embedding joins the position table): y is the last block's hidden
   states [B, T, d], and attn_mean_pool gives the sentence embeddings. Save writes GPT-2's names
   for a configuration of GPT-2's shape, or Llama's (q and k rows back in rotate_half's order;
   rope_theta, num_key_value_heads) for Llama's (RoPE, RMSNorm, SwiGLU, no biases), with
   lm_head.weight and "tie_word_embeddings": false when the head is no longer the embedding; softmax
   and every position read out in both. PyTorch loads it back with GPT2LMHeadModel or
   LlamaForCausalLM's from_pretrained(dir). */
ATTNDEF attn_status attn_transformer_load_hf(attn_transformer *m, const char *dir);
ATTNDEF attn_status attn_transformer_save_hf(const attn_transformer *m, const char *dir);

/* BERT's WordPiece tokenizer (Devlin et al. 2019), as Hugging Face's BertTokenizer runs it: the
   text is cleaned (control and format characters dropped, white space read as a space), every CJK
   ideograph made a word of its own, and for an uncased vocabulary put in NFD with its non-spacing
   marks dropped and lower-cased; it is split into words at white space and around every punctuation
   mark; each word becomes the longest vocabulary piece from its start, then from where that ended
   ("##"-prefixed), and so on; a word of more than 100 characters, or one that does not split so,
   is [UNK]. [CLS] and [SEP] go around. The vocabulary's special tokens ([PAD] [UNK] [CLS] [SEP]
   [MASK]) are read as themselves wherever they stand in the text. Character classes are Unicode
   8.0's, as that tokenizer's are; invalid UTF-8 reads as U+FFFD (dropped). */
typedef struct attn_wordpiece {
    int count;                    /* tokens: token i is line i of vocab.txt (counting from 0) */
    int lowercase;                /* 1: lower-case and strip accents (an uncased vocabulary) */
    int max_len;                  /* tokens a sequence may have, [CLS] and [SEP] included */
    int unk, cls, sep, pad, mask; /* their ids; pad and mask are -1 when absent */
    char *text;                   /* the tokens, each NUL-terminated, one after another */
    int *start;                   /* [count]: token i at text + start[i] */
    int *slot, nslot;             /* open-addressing hash of the tokens: ids, -1 empty; nslot 2^k */
} attn_wordpiece;
/* The vocabulary vocab [bytes] (one token per line, '\n' or "\r\n"; max_len 512). Refused with the
   line named: a token longer than 1024 bytes or not valid UTF-8, a vocabulary of more than 2^24
   tokens, or one without [UNK], [CLS] and [SEP]. A token listed twice has the later id. */
ATTNDEF attn_status attn_wordpiece_parse(attn_wordpiece *w, const char *vocab, size_t bytes, int lowercase);
/* From a Hugging Face model directory: vocab.txt, lower case from tokenizer_config.json's
   do_lower_case (1 when the file or the key is absent), max_len from sentence_bert_config.json's
   max_seq_length, else tokenizer_config.json's model_max_length (when at most 2^20), else 512. */
ATTNDEF attn_status attn_wordpiece_load_hf(attn_wordpiece *w, const char *dir);
ATTNDEF void attn_wordpiece_free(attn_wordpiece *w);
/* The id of the token s [n] (bytes, no NUL needed), or -1; the token of id, or NULL. */
ATTNDEF int attn_wordpiece_id(const attn_wordpiece *w, const char *s, size_t n);
ATTNDEF const char *attn_wordpiece_token(const attn_wordpiece *w, int id);
/* The ids of text [bytes] (UTF-8) into ids [max] (max >= 2): [CLS], the pieces, [SEP], cut after
   max - 2 pieces. Returns how many it wrote, or -1 (error set) for bad arguments. *pieces (when
   not NULL) gets the number of pieces before the cut, to tell a cut text. */
ATTNDEF int attn_wordpiece_encode(const attn_wordpiece *w, const char *text, size_t bytes, int *ids, int max,
                                  int *pieces);

/* Line plots as SVG files (the examples' figures): each series is a polyline through (x[i], y[i]),
   with an optional shaded band lo[i] .. hi[i], drawn against the left axis, or (dashed by default)
   against a right axis that runs from 0 (or the least value, if negative) to the largest value of
   those series. Axes without an explicit range end on round ticks (1, 2 or 5 times a power of
   10). Points with a non-finite coordinate are left out. The legend, above the plot, lists the
   series that have a label, each with a sample of its line. ATTN_ERR_IO without stdio or when the
   file cannot be written. */
typedef enum attn_line_style {
    ATTN_LINE_DEFAULT = 0, /* solid on the left axis, dashed on the right */
    ATTN_LINE_SOLID,
    ATTN_LINE_DASHED,
    ATTN_LINE_DOTTED,
    ATTN_LINE_THIN         /* thin and solid: reference levels */
} attn_line_style;
typedef struct attn_plot_series {
    const char *label;              /* legend entry, or NULL */
    const double *x, *y, *lo, *hi;  /* [n] each; lo and hi may be NULL (no band) */
    int n;
    int right;                      /* nonzero: against the right axis */
    int colour;                     /* index into an 8-colour palette */
    const char *rgb;                /* "#rrggbb" instead of the palette's colour, or NULL */
    attn_line_style style;
} attn_plot_series;

typedef struct attn_plot {
    const char *title, *xlabel, *ylabel, *y2label; /* y2label: the right axis' name, or NULL */
    double ymin, ymax;              /* the left axis; equal values: from the data. Values outside an
                                       explicit range are drawn at its edge */
    int width, height;              /* pixels; 0: 640 x 400 */
} attn_plot;

ATTNDEF attn_status attn_plot_svg(const char *path, const attn_plot *p, const attn_plot_series *s, int ns);

/* Grouped bar charts as SVG files: ng groups along the x axis (labels group [ng]), in each one bar
   per series (legend labels series [ns], palette colours) of height v [s ng + g] from 0 (negative
   values go down); the axis spans min(0, min v) .. max(0, max v). Non-finite values draw no bar.
   ATTN_ERR_IO without stdio or when the file cannot be written. */
ATTNDEF attn_status attn_bars_svg(const char *path, const char *title, const char *ylabel,
                                  const char *const *group, int ng, const char *const *series, int ns,
                                  const double *v);

/* Heatmaps as SVG files (attention matrices, similarity matrices): M [rows, cols], one cell per
   entry, coloured by scale: ATTN_HEAT_LINEAR white (min(0, min M)) to blue (max M);
   ATTN_HEAT_SIGNED blue (-m) through white (0) to red (+m), m = max |M| (Cog's negative weights);
   ATTN_HEAT_LOG white (10^-4 m) to blue (m) on log10 |M|. Labels (may be NULL: the axes show
   indices) name the rows and columns; a colour bar gives the scale. ATTN_ERR_IO without stdio or
   when the file cannot be written. */
typedef enum attn_heat_scale { ATTN_HEAT_LINEAR = 0, ATTN_HEAT_SIGNED, ATTN_HEAT_LOG } attn_heat_scale;
ATTNDEF attn_status attn_heatmap_svg(const char *path, const char *title, const attn_float *M, int rows,
                                     int cols, const char *const *row_labels, const char *const *col_labels,
                                     attn_heat_scale scale);

/* Probes on representations (the HYLA paper's latent-code analysis, Schug et al. 2025, Sec. 3):
   attn_probe_fit fits a logistic regression p = sigmoid(w . z + w[dim]) to labels y [n] in {0, 1}
   from features X [n, dim], standardised by their mean and sd over the n rows (written to mu, sd
   [dim]), by `iters` full-batch gradient steps of size lr on the mean log loss + l2 |w|^2 / 2;
   w [dim + 1]. With balanced, each class weighs half (a row of class c counts n / (2 n_c), in the
   loss and in the standardisation), as for a rare label. attn_probe_f1 is the F1 score of the predictions p
   >= 1/2 on other rows (0 when
   nothing is positive or predicted). attn_probe_fit allocates (ATTN_MALLOC) dim + 1 doubles of
   scratch for the call. attn_cosine_matrix: S [n, n] = cosine similarities of the rows of M [n, dim]
   (0 for a zero row). A NULL pointer or a size < 1: attn_probe_f1 returns -1, attn_cosine_matrix
   writes nothing; the error is set. */
ATTNDEF attn_status attn_probe_fit(double *w, double *mu, double *sd, const attn_float *X, const int *y,
                                   int n, int dim, int iters, double lr, double l2, int balanced);
ATTNDEF double attn_probe_f1(const double *w, const double *mu, const double *sd, const attn_float *X,
                             const int *y, int n, int dim);
ATTNDEF void attn_cosine_matrix(attn_float *S, const attn_float *M, int n, int dim);

/* The thesis' band + sparse-error view of attention matrices (Conti 2024, Sec. 3), n x n matrices,
   distances in the entrywise 1-norm |M| = sum_ij |m_ij|:
     attn_band_dimension  the dimension (w + 1)(2n - w) - n of the w-band matrices (100 at n 16, w 3)
     attn_l1_distance     |A - B| (B NULL: the zero matrix, |A|)
     attn_band_project    P = A on the band |i - j| <= w, 0 off it; returns |A - P|, A's distance to
                          the band matrices
     attn_sigma_candidate a random candidate X of family 1 (positional heads: I), 2 (syntactic: a
                          binary w-band with each entry dropped with probability p) or 3 (rare-token:
                          the identity with num_pos w x w blocks at random places whose rows are all
                          the unit vector of one random column of the block), plus a sparse error
                          (each entry with probability density, uniform in [-eps, eps]), clamped at 0
                          and row-normalised (defaults: p 0.2, density 0.05, eps 0.05)
     attn_sigma_distances for each family, the minimum and the mean of |A - X| over count
                          candidates (the thesis' Min_distance; its Mean Error is min / n^2);
                          allocates (ATTN_MALLOC) one candidate for the call
   A NULL pointer, n < 1 or w < 0: attn_band_dimension returns 0, attn_l1_distance and
   attn_band_project -1 (nothing written); the error is set. */
ATTNDEF long attn_band_dimension(int n, int w);
ATTNDEF double attn_l1_distance(const attn_float *A, const attn_float *B, int n);
ATTNDEF double attn_band_project(attn_float *P, const attn_float *A, int n, int w);
ATTNDEF attn_status attn_sigma_candidate(attn_float *X, int n, int family, int w, int num_pos, double p,
                                         double density, double eps, attn_rng *r);
ATTNDEF attn_status attn_sigma_distances(double min_dist[3], double mean_dist[3], const attn_float *A, int n,
                                         int w, int num_pos, int count, double p, double density, double eps,
                                         attn_rng *r);

/* The Cog paper's representational-collapse probes (Lv et al. 2024, Sec. 3.2, App. B) on a token model
   (causal, read out
   at every position or the last): for each n of ns [count], two sequences after the prompt [plen]
     ATTN_PROBE_ZERO  s2 = prompt 0 1^n,  s1 = prompt 1 1^n   ("is there a zero?")
     ATTN_PROBE_ONES  s2 = prompt 1^(n+1), s1 = prompt 1^n    ("how many ones?")
   (0 and 1 the token ids zero and one), y = the final norm's output at the last position (before
   the head), and delta = y2 - y1. paper[k] = |delta_k|_inf / |delta_0|_inf; code[k] = the same
   ratio of the mean over chunks of `chunk` features of each chunk's max |delta| (the code's
   metric; d must be a multiple of chunk). Needs plen + max(ns) + 1 <= max_T; allocates
   (ATTN_MALLOC) one sequence's buffers. */
typedef enum attn_probe_task { ATTN_PROBE_ZERO = 0, ATTN_PROBE_ONES } attn_probe_task;
ATTNDEF attn_status attn_collapse_probe(const attn_transformer *m, attn_probe_task task, const int *prompt,
                                        int plen, int zero, int one, const int *ns, int count, int chunk,
                                        double *paper, double *code);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_H_INCLUDED */

/* ============================================================================================== */
/* ============================================================================================== */
/*                                      IMPLEMENTATION                                            */
/* ============================================================================================== */
/* ============================================================================================== */

#ifdef ATTN_IMPLEMENTATION
#ifndef ATTN__PASS /* shared code: compiled once (see "Run-time dispatch" in section 1) */

#include <math.h>
#include <string.h>
#include <stdarg.h>
#include <limits.h>
#include <float.h>
#ifndef ATTN_NO_STDIO
#include <stdio.h>
#if defined(_WIN32)
#include <io.h>
#include <fcntl.h>
#include <process.h>
#elif defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <unistd.h>
#endif
#endif

/* ---- 1. config -------------------------------------------------------------------------------- */

#if defined(ATTN_MALLOC) && defined(ATTN_FREE)
#elif !defined(ATTN_MALLOC) && !defined(ATTN_FREE)
#include <stdlib.h>
#define ATTN_MALLOC(sz) malloc(sz)
#define ATTN_FREE(p) free(p)
#else
#error "attn.h: define both ATTN_MALLOC and ATTN_FREE, or neither"
#endif

#ifndef ATTN_ASSERT
#include <assert.h>
#define ATTN_ASSERT(x) assert(x)
#endif

#if defined(_OPENMP) && !defined(ATTN_NO_OPENMP) && !defined(__EMSCRIPTEN__)
#define ATTN__OMP 1
#include <omp.h>
#endif

#ifdef ATTN_USE_CBLAS
#include <cblas.h>
#endif

/* SIMD: the first match wins. WASM is tested before x86 because Emscripten defines __SSE__ too. */
#if defined(ATTN_NO_SIMD) || defined(ATTN_DOUBLE)
#define ATTN__SCALAR 1
#elif defined(__wasm_simd128__)
#define ATTN__WASM 1
#include <wasm_simd128.h>
#elif defined(__AVX512F__)
#define ATTN__AVX512 1
#include <immintrin.h>
#elif defined(__AVX2__) /* without __FMA__ (-mavx2 alone) a multiply and an add stand in for it */
#define ATTN__AVX2 1
#include <immintrin.h>
#if defined(__FMA__) || defined(_MSC_VER) /* MSVC's /arch:AVX2 has FMA and does not say so */
#define ATTN__FMA 1
#endif
#elif defined(__SSE2__) || defined(_M_X64)
#define ATTN__SSE2 1
#include <emmintrin.h>
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(ATTN_NO_DISPATCH)
#define ATTN__DISPATCH 1 /* the baseline: AVX2 and AVX-512 kernels are chosen at run time as well */
#include <immintrin.h>
#endif
#elif defined(__ARM_NEON) && defined(__aarch64__)
#define ATTN__NEON 1
#include <arm_neon.h>
#else
#define ATTN__SCALAR 1
#endif

/* Run-time dispatch (ATTN__DISPATCH: x86-64 built for its baseline, SSE2, by GCC or Clang, without
   ATTN_NO_DISPATCH). The per-ISA code, between the "per-ISA code" markers (the SIMD vocabulary and
   the kernels written in it), is compiled once more for AVX2 + FMA and once for AVX-512F: at its end
   the file includes itself with ATTN__PASS set, that ISA's macros and a target pragma, and skips all
   but the per-ISA code. A pass's functions carry its suffix (each per-ISA name is a macro of
   ATTN__SFX: see "Per-ISA names" in section 4); the shared code calls them through ATTN__ISA's
   pointers, which are set when the program starts (attn_simd_set). A build for one ISA (-mavx2,
   -march=native, ATTN_NO_DISPATCH, any other compiler or machine) has no pointers: ATTN__ISA(f)
   is the function. */
#define ATTN__CAT2(a, b) a##b
#define ATTN__CAT(a, b) ATTN__CAT2(a, b)
#define ATTN__K(name) ATTN__CAT(name, ATTN__SFX)
#define ATTN__SFX /* the main pass's functions keep their names */
#ifdef ATTN__DISPATCH
#define ATTN__ISA(f) attn__isa_##f
#define ATTN__ISA_POINTER(f) static __typeof__(attn__##f) *attn__isa_##f = attn__##f;
#else
#define ATTN__ISA(f) attn__##f
#define ATTN__ISA_POINTER(f)
#endif

#if defined(__cplusplus) && __cplusplus >= 201103L
#define ATTN__TLS thread_local
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define ATTN__TLS _Thread_local
#elif defined(__GNUC__)
#define ATTN__TLS __thread
#elif defined(_MSC_VER)
#define ATTN__TLS __declspec(thread)
#else
#define ATTN__TLS /* no thread-local storage: the last error is shared between threads */
#define ATTN__NO_TLS 1
#endif

#if defined(__GNUC__)
#define ATTN__INLINE static inline __attribute__((always_inline))
#elif defined(_MSC_VER)
#define ATTN__INLINE static __forceinline
#else
#define ATTN__INLINE static inline
#endif
#if defined(__GNUC__) /* a request for the line at p into L2 or L1, for reading */
#define ATTN__PREFETCH_L2(p) __builtin_prefetch((p), 0, 2)
#define ATTN__PREFETCH_L1(p) __builtin_prefetch((p), 0, 3)
#else
#define ATTN__PREFETCH_L2(p) ((void)(p))
#define ATTN__PREFETCH_L1(p) ((void)(p))
#endif
#define ATTN__LINE (64 / (int)sizeof(attn_float)) /* values per cache line */

#ifdef ATTN_DOUBLE
#define ATTN__FLOAT_MIN DBL_MIN
#else
#define ATTN__FLOAT_MIN FLT_MIN
#endif
#define ATTN__MIN(a, b) ((a) < (b) ? (a) : (b))
#define ATTN__MAX(a, b) ((a) > (b) ? (a) : (b))

/* Finite, from the bits (isfinite may be folded to 1 under -ffast-math). */
static int attn__finite(double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    return (u >> 52 & 0x7ff) != 0x7ff;
}

static int attn__nthreads_set = 0; /* 0: the OpenMP default */

#ifdef ATTN__DISPATCH
static const char *attn__isa_name = "sse2"; /* the kernels' ISA (attn_simd_set) */
#endif

ATTNDEF const char *attn_simd_name(void)
{
#if defined(ATTN__DISPATCH)
    return attn__isa_name;
#elif defined(ATTN__WASM) && defined(__wasm_relaxed_simd__)
    return "wasm128-relaxed";
#elif defined(ATTN__WASM)
    return "wasm128";
#elif defined(ATTN__AVX512)
    return "avx512";
#elif defined(ATTN__AVX2)
    return "avx2";
#elif defined(ATTN__SSE2)
    return "sse2";
#elif defined(ATTN__NEON)
    return "neon";
#else
    return "scalar";
#endif
}

ATTNDEF void attn_set_threads(int n) { attn__nthreads_set = n > 0 ? n : 0; }

ATTNDEF int attn_get_threads(void)
{
#ifdef ATTN__OMP
    return attn__nthreads_set > 0 ? attn__nthreads_set : omp_get_max_threads();
#else
    return 1;
#endif
}

/* ---- 2. errors and RNG ------------------------------------------------------------------------ */

static ATTN__TLS char attn__errmsg[256];
static ATTN__TLS attn_status attn__errstat = ATTN_OK;
static attn_log_fn attn__logfn = NULL;
static void *attn__loguser = NULL;

ATTNDEF const char *attn_status_string(attn_status s)
{
    switch (s) {
    case ATTN_OK: return "ok";
    case ATTN_ERR_ARG: return "invalid argument";
    case ATTN_ERR_SHAPE: return "invalid shape";
    case ATTN_ERR_OVERFLOW: return "size overflow";
    case ATTN_ERR_NOMEM: return "out of memory";
    case ATTN_ERR_IO: return "i/o error";
    case ATTN_ERR_FORMAT: return "bad file format";
    }
    return "unknown status";
}

ATTNDEF const char *attn_last_error(void) { return attn__errmsg; }
ATTNDEF attn_status attn_last_status(void) { return attn__errstat; }
ATTNDEF void attn_clear_error(void) { attn__errmsg[0] = 0; attn__errstat = ATTN_OK; }
ATTNDEF void attn_set_log(attn_log_fn fn, void *user) { attn__logfn = fn; attn__loguser = user; }

/* Records a failure ("function: what went wrong") and returns its status. The message is formatted
   aside first, so an argument may be attn_last_error() itself (a caller adding its name). */
static attn_status attn__vfail(attn_status s, const char *fmt, va_list ap)
{
    char msg[sizeof attn__errmsg];
#ifndef ATTN_NO_STDIO
    vsnprintf(msg, sizeof msg, fmt, ap);
#else
    (void)ap;
    strncpy(msg, fmt, sizeof msg - 1);
    msg[sizeof msg - 1] = 0;
#endif
    memcpy(attn__errmsg, msg, sizeof msg);
    attn__errstat = s;
    if (attn__logfn) attn__logfn(attn__loguser, s, attn__errmsg);
    return s;
}

static attn_status attn__fail(attn_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    s = attn__vfail(s, fmt, ap);
    va_end(ap);
    return s;
}

ATTNDEF attn_status attn_set_error(attn_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    s = attn__vfail(s, fmt ? fmt : "", ap);
    va_end(ap);
    return s;
}

/* Argument checks shared by every public function: each returns from the caller on failure. */
#define ATTN__NEED(ptr) \
    do { if (!(ptr)) return attn__fail(ATTN_ERR_ARG, "%s: %s is NULL", __func__, #ptr); } while (0)
#define ATTN__DIM(n)                                                                                         \
    do {                                                                                                     \
        if ((n) < 1)                                                                                         \
            return attn__fail(ATTN_ERR_SHAPE, "%s: %s = %ld, must be >= 1", __func__, #n, (long)(n));        \
    } while (0)
#define ATTN__COUNT(a) (sizeof(a) / sizeof((a)[0])) /* the elements of array a */
#define ATTN__TRY(expr) do { attn_status attn__s = (expr); if (attn__s != ATTN_OK) return attn__s; } while (0)

/* *out = a * b * c floats, checked so that the byte count fits in size_t. */
static int attn__count3(size_t *out, size_t a, size_t b, size_t c)
{
    size_t lim = (size_t)-1 / sizeof(attn_float);
    if (a && b > lim / a) return 0;
    if (a && b && c > lim / (a * b)) return 0;
    *out = a * b * c;
    return 1;
}
#define ATTN__SIZE3(var, a, b, c)                                                                            \
    do {                                                                                                     \
        if (!attn__count3(&(var), (size_t)(a), (size_t)(b), (size_t)(c)))                                    \
            return attn__fail(ATTN_ERR_OVERFLOW, "%s: %ld x %ld x %ld elements overflow size_t", __func__,   \
                              (long)(a), (long)(b), (long)(c));                                              \
    } while (0)

/* A size query's arguments: a model, B >= 1 sequences, 1 <= T <= max_T (0, error set, if not). */
static int attn__sizes_ok(const char *fn, const void *m, int B, int T, int max_T)
{
    if (!m) return attn__fail(ATTN_ERR_ARG, "%s: the model is NULL", fn), 0;
    if (B < 1 || T < 1 || T > max_T)
        return attn__fail(ATTN_ERR_SHAPE, "%s: B = %d must be >= 1 and T = %d in 1 .. %d", fn, B, T, max_T),
               0;
    return 1;
}

/* A cache of have floats where the size query `query` asks for need (0: the query failed, its
   error set). */
#define ATTN__CACHE_OWN ((size_t)-1) /* the size a model passes for a cache it laid out itself */
static attn_status attn__cache_ok(const char *fn, size_t have, size_t need, const char *query)
{
    if (!need) return attn_last_status();
    if (have < need)
        return attn__fail(ATTN_ERR_ARG, "%s: the cache has %lu floats, %s() asks for %lu", fn,
                          (unsigned long)have, query, (unsigned long)need);
    return ATTN_OK;
}

ATTNDEF void attn_rng_seed(attn_rng *r, uint64_t seed, uint64_t stream)
{
    r->state = 0;
    r->inc = (stream << 1) | 1u;
    attn_rng_u32(r);
    r->state += seed;
    attn_rng_u32(r);
}

ATTNDEF uint32_t attn_rng_u32(attn_rng *r)
{
    uint64_t old = r->state;
    uint32_t xorshifted, rot;
    r->state = old * 6364136223846793005ull + r->inc;
    xorshifted = (uint32_t)(((old >> 18) ^ old) >> 27);
    rot = (uint32_t)(old >> 59);
    return (xorshifted >> rot) | (xorshifted << ((32 - rot) & 31));
}

ATTNDEF uint32_t attn_rng_int(attn_rng *r, uint32_t n)
{
    uint64_t m;
    uint32_t lo;
    if (n <= 1) return 0;
    m = (uint64_t)attn_rng_u32(r) * n;
    lo = (uint32_t)m;
    if (lo < n) {
        uint32_t t = (uint32_t)(-n) % n; /* 2^32 mod n: the biased low range to reject */
        while (lo < t) {
            m = (uint64_t)attn_rng_u32(r) * n;
            lo = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}

ATTNDEF double attn_rng_uniform(attn_rng *r)
{
    uint32_t hi = attn_rng_u32(r) >> 5, lo = attn_rng_u32(r) >> 6; /* 27 + 26 = 53 bits */
    return ((double)hi * 67108864.0 + (double)lo) * (1.0 / 9007199254740992.0);
}

ATTNDEF double attn_rng_normal(attn_rng *r, double mean, double std)
{
    double u1 = 1.0 - attn_rng_uniform(r); /* (0, 1]: log stays finite */
    double u2 = attn_rng_uniform(r);
    return mean + std * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

ATTNDEF attn_rng attn_rng_split(attn_rng *r)
{
    attn_rng c;
    uint64_t seed = ((uint64_t)attn_rng_u32(r) << 32) | attn_rng_u32(r);
    uint64_t stream = ((uint64_t)attn_rng_u32(r) << 32) | attn_rng_u32(r);
    attn_rng_seed(&c, seed, stream);
    return c;
}

/* The FNV-1a hash (64 bits) of n bytes. */
static uint64_t attn__fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 14695981039346656037ull;
    size_t i;
    for (i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

#ifndef ATTN_NO_STDIO
/* Files replaced whole or not at all: a save writes PATH.tmp-PID, makes it durable (fsync, where the
   platform has it) and renames it over PATH, so a kill at any moment leaves the old file or the new
   one. Windows' rename does not replace a file: there the old one is removed just before. */
typedef struct attn__save {
    FILE *f;
    char *tmp;
} attn__save;

/* Flushes the file at path (or, on POSIX, the directory) to the disk, where the platform can: 0 on
   success. Windows flushes only through a handle that may write. */
static int attn__sync_path(const char *path)
{
#if defined(_WIN32)
    int fd = _open(path, _O_RDWR), r;
    if (fd < 0) return -1;
    r = _commit(fd);
    _close(fd);
    return r;
#elif defined(__unix__) || defined(__APPLE__)
    int fd = open(path, O_RDONLY), r;
    if (fd < 0) return -1;
    r = fsync(fd);
    close(fd);
    return r;
#else
    (void)path;
    return 0;
#endif
}

static unsigned long attn__pid(void)
{
#if defined(_WIN32)
    return (unsigned long)_getpid();
#elif defined(__unix__) || defined(__APPLE__)
    return (unsigned long)getpid();
#else
    return 0;
#endif
}

/* Opens the temporary of path in mode ("w" or "wb"); 0 (error set) if it cannot be. */
static int attn__save_open(attn__save *s, const char *fn, const char *path, const char *mode)
{
    size_t n = strlen(path) + 32;
    s->f = NULL;
    if (!(s->tmp = (char *)ATTN_MALLOC(n))) return attn__fail(ATTN_ERR_NOMEM, "%s: no memory", fn), 0;
    snprintf(s->tmp, n, "%s.tmp-%lu", path, attn__pid());
    if (!(s->f = fopen(s->tmp, mode))) {
        ATTN_FREE(s->tmp);
        return attn__fail(ATTN_ERR_IO, "%s: cannot write %s", fn, path), 0;
    }
    return 1;
}

/* Closes the temporary and, if ok and every write went through, puts it in path's place (the old
   file stays otherwise, and the temporary goes); the status. */
static attn_status attn__save_close(attn__save *s, const char *fn, const char *path, int ok)
{
    char *slash;
    ok = !ferror(s->f) && ok;
    ok = fclose(s->f) == 0 && ok;
    ok = ok && attn__sync_path(s->tmp) == 0;
#if defined(_WIN32)
    if (ok) remove(path);
#endif
    ok = ok && rename(s->tmp, path) == 0;
    if (!ok) remove(s->tmp);
#if !defined(_WIN32)
    if (ok && (slash = strrchr(s->tmp, '/')) != NULL) { /* the rename itself, in the directory */
        *slash = 0;
        attn__sync_path(slash == s->tmp ? "/" : s->tmp);
    }
#else
    (void)slash;
#endif
    ATTN_FREE(s->tmp);
    return ok ? ATTN_OK : attn__fail(ATTN_ERR_IO, "%s: cannot write %s", fn, path);
}
#endif

/* ---- 3. memory and tensors -------------------------------------------------------------------- */

static size_t attn__align_up(size_t n) { return (n + (ATTN_ALIGN - 1)) & ~(size_t)(ATTN_ALIGN - 1); }

/* One map carves a cache (or the stats) for the forward pass, which writes it, and for the backward
   pass, which only reads it; and the T5 map gathers or scatters with one loop. They take the
   pointer without its const. */
static attn_float *attn__unconst(const attn_float *p)
{
    union { const attn_float *c; attn_float *m; } u;
    u.c = p;
    return u.m;
}
/* The first ATTN_ALIGN-aligned address at or after p + offset bytes (workspaces carry ATTN_ALIGN
   bytes of slack for it). */
static attn_float *attn__align_ptr(void *p, size_t offset)
{
    uintptr_t a = (uintptr_t)((unsigned char *)p + offset);
    return (attn_float *)((a + (ATTN_ALIGN - 1)) & ~(uintptr_t)(ATTN_ALIGN - 1));
}

/* Elements of a shape; 0 if invalid or too large to address in bytes (with alignment slack). */
static size_t attn__shape_numel(int ndim, const int *shape)
{
    size_t n = 1, lim = ((size_t)-1 - ATTN_ALIGN) / sizeof(attn_float);
    int i;
    if (!shape || ndim < 1 || ndim > ATTN_MAX_DIMS) return 0;
    for (i = 0; i < ndim; i++) {
        if (shape[i] < 1 || (size_t)shape[i] > lim / n) return 0;
        n *= (size_t)shape[i];
    }
    return n;
}

ATTNDEF size_t attn_tensor_numel(const attn_tensor *t) { return attn__shape_numel(t->ndim, t->shape); }

ATTNDEF size_t attn_tensor_bytes(int ndim, const int *shape)
{
    size_t n = attn__shape_numel(ndim, shape);
    if (!n) attn__fail(ATTN_ERR_SHAPE, "%s: ndim = %d, a dimension < 1, or an overflow", __func__, ndim);
    return n ? attn__align_up(n * sizeof(attn_float)) : 0;
}

ATTNDEF attn_status attn_arena_use(attn_arena *a, void *mem, size_t bytes)
{
    size_t skip;
    ATTN__NEED(a);
    ATTN__NEED(mem);
    skip = (size_t)(-(uintptr_t)mem & (ATTN_ALIGN - 1));
    if (bytes < skip)
        return attn__fail(ATTN_ERR_ARG,
                          "attn_arena_use: block of %lu bytes is smaller than its alignment padding",
                          (unsigned long)bytes);
    a->base = (unsigned char *)mem + skip;
    a->cap = bytes - skip;
    a->used = 0;
    a->owned = NULL;
    return ATTN_OK;
}

ATTNDEF attn_status attn_arena_init(attn_arena *a, size_t bytes)
{
    void *mem;
    ATTN__NEED(a);
    if (bytes > (size_t)-1 - ATTN_ALIGN)
        return attn__fail(ATTN_ERR_OVERFLOW, "attn_arena_init: %lu bytes overflow", (unsigned long)bytes);
    mem = ATTN_MALLOC(bytes + ATTN_ALIGN);
    if (!mem)
        return attn__fail(ATTN_ERR_NOMEM, "attn_arena_init: could not allocate %lu bytes",
                          (unsigned long)bytes);
    attn_arena_use(a, mem, bytes + ATTN_ALIGN);
    a->owned = mem;
    return ATTN_OK;
}

ATTNDEF void attn_arena_measure(attn_arena *a)
{
    if (!a) {
        attn__fail(ATTN_ERR_ARG, "%s: a is NULL", __func__);
        return;
    }
    memset(a, 0, sizeof *a);
    a->cap = (size_t)-1;
}

/* The next `bytes` (rounded up to ATTN_ALIGN) of a, or NULL on a measuring arena; the library's
   layouts are sized by the same code before they are carved, so they always fit. */
static void *attn__arena_take(attn_arena *a, size_t bytes)
{
    void *p = a->base ? a->base + a->used : NULL;
    a->used += attn__align_up(bytes);
    ATTN_ASSERT(a->used <= a->cap);
    return p;
}

static attn_float *attn__arena_floats(attn_arena *a, size_t n)
{
    return (attn_float *)attn__arena_take(a, sizeof(attn_float) * n);
}

/* An arena over block (aligned inside it; sized beforehand), or a measuring one for block NULL. */
static void attn__arena_plan(attn_arena *a, void *block)
{
    attn_arena_measure(a);
    if (block) a->base = (unsigned char *)attn__align_ptr(block, 0);
}

ATTNDEF void attn_arena_reset(attn_arena *a)
{
    if (a) a->used = 0;
}

ATTNDEF void attn_arena_release(attn_arena *a)
{
    if (!a) return;
    if (a->owned) ATTN_FREE(a->owned);
    memset(a, 0, sizeof *a);
}

ATTNDEF attn_status attn_arena_tensor(attn_arena *a, attn_tensor *t, int ndim, const int *shape)
{
    size_t bytes;
    int i;
    ATTN__NEED(a);
    ATTN__NEED(t);
    ATTN__NEED(shape);
    if (ndim < 1 || ndim > ATTN_MAX_DIMS)
        return attn__fail(ATTN_ERR_ARG, "attn_arena_tensor: ndim = %d, must be 1..%d", ndim, ATTN_MAX_DIMS);
    for (i = 0; i < ndim; i++)
        if (shape[i] < 1)
            return attn__fail(ATTN_ERR_SHAPE, "attn_arena_tensor: shape[%d] = %d, must be >= 1", i, shape[i]);
    bytes = attn_tensor_bytes(ndim, shape);
    if (!bytes) return attn__fail(ATTN_ERR_OVERFLOW, "attn_arena_tensor: the shape's size overflows size_t");
    if (bytes > a->cap - a->used && !a->base)
        return attn__fail(ATTN_ERR_OVERFLOW, "attn_arena_tensor: the measured size overflows size_t");
    if (bytes > a->cap - a->used)
        return attn__fail(ATTN_ERR_NOMEM,
                          "attn_arena_tensor: arena full (%lu of %lu bytes used, %lu more needed)",
                          (unsigned long)a->used, (unsigned long)a->cap, (unsigned long)bytes);
    ATTN_ASSERT(a->used % ATTN_ALIGN == 0); /* every hand-out keeps the next one aligned */
    t->data = a->base ? (attn_float *)(a->base + a->used) : NULL;
    t->ndim = ndim;
    for (i = 0; i < ATTN_MAX_DIMS; i++) t->shape[i] = i < ndim ? shape[i] : 1;
    a->used += bytes;
    return ATTN_OK;
}

/* Byte layout of an attn_params block: data, gdata, value[], grad[], offset[], decay[], name[]. */
/* The floats of fb bytes in a block of these tensors, each starting ATTN_ALIGN-aligned; 0 if one is
   invalid or the size overflows. */
static size_t attn__block_floats(const attn_param_desc *desc, int count, size_t fb)
{
    size_t total = 0, n;
    int i;
    if (!desc || count < 1 || count > INT_MAX / 2) return 0;
    for (i = 0; i < count; i++) {
        n = attn__shape_numel(desc[i].ndim, desc[i].shape);
        if (!n || desc[i].decay < -1 || desc[i].decay > 1 || n > ((size_t)-1 / 4) / fb) return 0;
        n = attn__align_up(n * fb) / fb;
        if (total > ((size_t)-1 / 4) / fb - n) return 0;
        total += n;
    }
    return total;
}

static size_t attn__params_layout(const attn_param_desc *desc, int count, size_t *floats)
{
    size_t total = attn__block_floats(desc, count, sizeof(attn_float)), bytes;
    if (!total) return 0;
    *floats = total;
    bytes = 2 * total * sizeof(attn_float);
    bytes += attn__align_up((size_t)count * (2 * sizeof(attn_tensor) + sizeof(size_t) + sizeof(char *)) +
                            sizeof(size_t) + (size_t)count);
    return bytes + ATTN_ALIGN;
}

ATTNDEF size_t attn_params_bytes(const attn_param_desc *desc, int count)
{
    size_t floats, n = attn__params_layout(desc, count, &floats);
    if (!n) attn__fail(ATTN_ERR_SHAPE, "%s: a description is invalid, or the block overflows", __func__);
    return n;
}

ATTNDEF attn_status attn_params_init_in(attn_params *p, const attn_param_desc *desc, int count,
                                        void *mem, size_t bytes)
{
    size_t total, need, off = 0;
    unsigned char *b;
    int i, k;
    ATTN__NEED(p);
    ATTN__NEED(desc);
    ATTN__NEED(mem);
    need = attn__params_layout(desc, count, &total);
    if (!need) {
        if (count < 1) return attn__fail(ATTN_ERR_ARG, "attn_params_init: count = %d, must be >= 1", count);
        for (i = 0; i < count; i++)
            if (!attn__shape_numel(desc[i].ndim, desc[i].shape) || desc[i].decay < -1 || desc[i].decay > 1)
                return attn__fail(ATTN_ERR_SHAPE,
                                  "attn_params_init: tensor %d (%s) has an invalid shape or decay flag", i,
                                  desc[i].name ? desc[i].name : "?");
        return attn__fail(ATTN_ERR_OVERFLOW, "attn_params_init: parameters overflow size_t");
    }
    if (bytes < need)
        return attn__fail(ATTN_ERR_ARG, "attn_params_init: block of %lu bytes, %lu needed",
                          (unsigned long)bytes, (unsigned long)need);
    b = (unsigned char *)mem + (size_t)(-(uintptr_t)mem & (ATTN_ALIGN - 1));
    memset(p, 0, sizeof *p);
    p->count = count;
    p->total = total;
    p->data = (attn_float *)b;
    p->gdata = p->data + total;
    b += 2 * total * sizeof(attn_float);
    p->value = (attn_tensor *)b;
    p->grad = p->value + count;
    p->offset = (size_t *)(p->grad + count);
    p->name = (const char **)(p->offset + count + 1);
    p->decay = (unsigned char *)(p->name + count);
    for (i = 0; i < count; i++) {
        attn_tensor *v = &p->value[i], *g = &p->grad[i];
        size_t n = attn__shape_numel(desc[i].ndim, desc[i].shape);
        p->offset[i] = off;
        v->ndim = g->ndim = desc[i].ndim;
        for (k = 0; k < ATTN_MAX_DIMS; k++)
            v->shape[k] = g->shape[k] = k < desc[i].ndim ? desc[i].shape[k] : 1;
        v->data = p->data + off;
        g->data = p->gdata + off;
        p->name[i] = desc[i].name;
        p->decay[i] = (unsigned char)(desc[i].decay == -1 ? desc[i].ndim >= 2 : desc[i].decay);
        off += attn__align_up(n * sizeof(attn_float)) / sizeof(attn_float);
    }
    p->offset[count] = off;
    memset(p->data, 0, 2 * total * sizeof(attn_float));
    return ATTN_OK;
}

ATTNDEF attn_status attn_params_init(attn_params *p, const attn_param_desc *desc, int count)
{
    size_t bytes = attn_params_bytes(desc, count);
    void *mem;
    attn_status s;
    ATTN__NEED(p);
    if (!bytes) return attn_params_init_in(p, desc, count, p, 0); /* reports what is wrong */
    mem = ATTN_MALLOC(bytes);
    if (!mem)
        return attn__fail(ATTN_ERR_NOMEM, "attn_params_init: could not allocate %lu bytes",
                          (unsigned long)bytes);
    s = attn_params_init_in(p, desc, count, mem, bytes);
    if (s != ATTN_OK) { ATTN_FREE(mem); return s; }
    p->owned = mem;
    return ATTN_OK;
}

/* A model's parameter block: in the caller's mem [bytes], or allocated when mem is NULL. */
static attn_status attn__params_place(attn_params *p, const attn_param_desc *desc, int count, void *mem,
                                      size_t bytes)
{
    return mem ? attn_params_init_in(p, desc, count, mem, bytes) : attn_params_init(p, desc, count);
}

ATTNDEF void attn_params_free(attn_params *p)
{
    if (!p) return;
    if (p->owned) ATTN_FREE(p->owned);
    memset(p, 0, sizeof *p);
}

ATTNDEF void attn_params_zero_grad(attn_params *p)
{
    if (!p || !p->gdata) attn__fail(ATTN_ERR_ARG, "%s: p or its gradients are NULL", __func__);
    else memset(p->gdata, 0, p->total * sizeof(attn_float));
}

ATTNDEF void attn_params_init_normal(attn_params *p, attn_rng *r, attn_float mean, attn_float std)
{
    int i;
    size_t j, n;
    if (!p || !r || !attn__finite((double)mean) || !attn__finite((double)std) || std < 0) {
        attn__fail(ATTN_ERR_ARG, "%s: p or r NULL, or mean = %g, std = %g (finite, std >= 0)", __func__,
                   (double)mean, (double)std);
        return;
    }
    for (i = 0; i < p->count; i++)
        for (j = 0, n = attn_tensor_numel(&p->value[i]); j < n; j++)
            p->value[i].data[j] = (attn_float)attn_rng_normal(r, mean, std);
}

/* One value of a FAN rule for a fan-in of fan. */
static attn_float attn__fan_draw(attn_param_init rule, double fan, attn_rng *rng)
{
    double z;
    if (rule == ATTN_PARAM_FAN_UNIFORM) return (attn_float)((2 * attn_rng_uniform(rng) - 1) / sqrt(fan));
    if (rule == ATTN_PARAM_FAN_NORMAL) return (attn_float)attn_rng_normal(rng, 0, 1 / sqrt(fan));
    do z = attn_rng_normal(rng, 0, 1);
    while (fabs(z) > 2); /* truncated to [-2, 2], whose sd is 0.8796: divided by it */
    return (attn_float)(z / (0.87962566103423978 * sqrt(fan)));
}

ATTNDEF attn_status attn_params_draw(attn_params *p, const attn_param_desc *desc, int count, attn_rng *rng)
{
    int i, k;
    size_t j, n;
    ATTN__NEED(p); ATTN__NEED(desc); ATTN__NEED(rng);
    if (count != p->count)
        return attn__fail(ATTN_ERR_ARG, "attn_params_draw: %d descriptions for %d tensors", count, p->count);
    for (i = 0; i < count; i++) {
        const attn_param_desc *d = &desc[i];
        int same = d->ndim == p->value[i].ndim;
        for (k = 0; same && k < d->ndim; k++) same = d->shape[k] == p->value[i].shape[k];
        if (!same || (int)d->init < ATTN_PARAM_ZERO || d->init > ATTN_PARAM_FAN_LECUN ||
            !attn__finite((double)d->value) || (d->init >= ATTN_PARAM_FAN_NORMAL && d->value < 0))
            return attn__fail(ATTN_ERR_ARG,
                              "attn_params_draw: tensor %d (%s): another shape, or rule %d with value %g", i,
                              d->name ? d->name : "?", (int)d->init, d->value);
    }
    for (i = 0; i < count; i++) {
        const attn_param_desc *d = &desc[i];
        attn_float *v = p->value[i].data;
        double fan = d->value > 0 ? d->value : d->shape[d->ndim - 1];
        for (j = 0, n = attn_tensor_numel(&p->value[i]); j < n; j++)
            v[j] = d->init == ATTN_PARAM_ZERO    ? 0
                   : d->init == ATTN_PARAM_CONST  ? (attn_float)d->value
                   : d->init == ATTN_PARAM_NORMAL ? (attn_float)attn_rng_normal(rng, 0, d->value)
                                                  : attn__fan_draw(d->init, fan, rng);
    }
    return ATTN_OK;
}

ATTNDEF int attn_params_find(const attn_params *p, const char *name)
{
    int i;
    for (i = 0; i < p->count; i++)
        if (p->name[i] && name && strcmp(p->name[i], name) == 0) return i;
    return -1;
}

static ATTN__TLS int attn__gc_kinks;
ATTNDEF int attn_gradcheck_kinks(void) { return attn__gc_kinks; }

/* The error of an analytic derivative g against the loss at x - h, x, x + h (down, mid, up):
   |fd - g| / max(1, |fd| + |g|) for the central difference fd, or at a kink (it misses by more than
   tol, a one-sided difference is within tol) the better side's, counted in attn__gc_kinks. */
static double attn__gc_error(double down, double mid, double up, double h, double g, double tol)
{
    double fd = (up - down) / (2 * h), e = fabs(fd - g) / ATTN__MAX(1, fabs(fd) + fabs(g)), r, l;
    if (!(e > tol)) return e;
    r = (up - mid) / h;
    l = (mid - down) / h;
    r = fabs(r - g) / ATTN__MAX(1, fabs(r) + fabs(g));
    l = fabs(l - g) / ATTN__MAX(1, fabs(l) + fabs(g));
    if (!(ATTN__MIN(r, l) <= tol)) return e;
    attn__gc_kinks++;
    return ATTN__MIN(r, l);
}

/* The gradient checkers' step, tolerance and count: finite and >= 0 (0: the defaults); 0 (error set)
   if not. */
static int attn__gc_args(const char *fn, double h, double tol, int max_entries)
{
    if (h >= 0 && tol >= 0 && attn__finite(h) && attn__finite(tol) && max_entries >= 0) return 1;
    attn__fail(ATTN_ERR_ARG, "%s: h = %g, tol = %g, max_entries = %d (finite and >= 0; 0: the defaults)", fn,
               h, tol, max_entries);
    return 0;
}

ATTNDEF int attn_gradcheck_params(attn_params *p, attn_loss_fn loss, void *ctx, uint64_t seed, double h,
                                  double tol, int max_entries, double *max_err)
{
    attn_float *an;
    double worst = 0, L;
    size_t n, k, i;
    attn_rng r;
    int t;
    if (!p || !loss || !p->data || !p->gdata) {
        attn__fail(ATTN_ERR_ARG, "attn_gradcheck_params: p, its blocks or loss is NULL");
        return -1;
    }
    if (!attn__gc_args(__func__, h, tol, max_entries)) return -1;
    h = h > 0 ? h : sizeof(attn_float) == 8 ? 1e-6 : 1e-2;
    tol = tol > 0 ? tol : sizeof(attn_float) == 8 ? 1e-6 : 1e-2;
    attn__gc_kinks = 0;
    if (!(an = (attn_float *)ATTN_MALLOC(sizeof(attn_float) * (p->total ? p->total : 1)))) {
        attn__fail(ATTN_ERR_NOMEM, "attn_gradcheck_params: no memory for %lu floats",
                   (unsigned long)p->total);
        return -1;
    }
    attn_params_zero_grad(p);
    L = loss(ctx, 1);
    memcpy(an, p->gdata, sizeof(attn_float) * p->total);
    attn_rng_seed(&r, seed, 13);
    for (t = 0; t < p->count && attn__finite(L); t++) {
        n = attn_tensor_numel(&p->value[t]);
        for (k = 0; k < (max_entries > 0 && (size_t)max_entries < n ? (size_t)max_entries : n); k++) {
            attn_float *x = p->data + p->offset[t], keep;
            double up, down, e;
            i = max_entries > 0 && (size_t)max_entries < n ? (size_t)attn_rng_int(&r, (uint32_t)n) : k;
            keep = x[i];
            x[i] = (attn_float)(keep + h); up = loss(ctx, 0);
            x[i] = (attn_float)(keep - h); down = loss(ctx, 0);
            x[i] = keep;
            if (!attn__finite(up) || !attn__finite(down)) {
                L = up + down; /* not finite: the check stops */
                break;
            }
            e = attn__gc_error(down, L, up, h, an[p->offset[t] + i], tol);
            worst = e > worst || !attn__finite(e) ? e : worst;
        }
    }
    ATTN_FREE(an);
    if (max_err) *max_err = worst;
    if (!attn__finite(L)) {
        attn__fail(ATTN_ERR_ARG, "attn_gradcheck_params: the loss is not finite%s",
                   t > 0 ? " at a moved entry" : "");
        return -1;
    }
    return worst <= tol;
}

/* A model's tensors by name: a struct of attn_float pointers, each field described by its tensor's
   name and its offset in the struct; a model whose tables declare its tensors (the transformer's)
   adds when a configuration has the tensor, its shape and its initialisation (codes of its own). */
typedef struct {
    const char *name;
    size_t off;
    unsigned char when, init, ndim, dim[3];
} attn__slot;
#define ATTN__SLOT(type, field) {#field, offsetof(type, field), 0, 0, 0, {0, 0, 0}}

/* Fills *out [size bytes] from p's tensors idx[0 .. n) (value or gradient; idx < 0: NULL); with p
   NULL (no model, or an index out of range) every field is NULL and the error is set for fn. */
static void attn__name_tensors(const char *fn, void *out, size_t size, const attn__slot *slot,
                               const short *idx, int n, const attn_params *p, int grad)
{
    int s;
    memset(out, 0, size);
    if (!p) attn__fail(ATTN_ERR_ARG, "%s: no model, or a layer or sublayer out of range", fn);
    for (s = 0; p && s < n; s++) {
        attn_float *t = idx[s] < 0 ? NULL : grad ? p->grad[idx[s]].data : p->value[idx[s]].data;
        memcpy((unsigned char *)out + slot[s].off, &t, sizeof t);
    }
}

/* ---- 4. kernels ------------------------------------------------------------------------------- */

/* Per-ISA names: the functions and types of the per-ISA code, each a macro that gives it its pass's
   suffix (attn__vexp is attn__vexp_avx2 in the AVX2 pass, itself in the main one). */
#define attn__v ATTN__K(attn__v)
#define attn__vload ATTN__K(attn__vload)
#define attn__vstore ATTN__K(attn__vstore)
#define attn__vset1 ATTN__K(attn__vset1)
#define attn__vmul ATTN__K(attn__vmul)
#define attn__vadd ATTN__K(attn__vadd)
#define attn__vsub ATTN__K(attn__vsub)
#define attn__vmax ATTN__K(attn__vmax)
#define attn__vmin ATTN__K(attn__vmin)
#define attn__vdiv ATTN__K(attn__vdiv)
#define attn__vsqrt ATTN__K(attn__vsqrt)
#define attn__vfma ATTN__K(attn__vfma)
#define attn__vabs ATTN__K(attn__vabs)
#define attn__vround ATTN__K(attn__vround)
#define attn__vpow2 ATTN__K(attn__vpow2)
#define attn__vswap2 ATTN__K(attn__vswap2)
#define attn__vspread4 ATTN__K(attn__vspread4)
#define attn__vsum4 ATTN__K(attn__vsum4)
#define attn__vbcast4 ATTN__K(attn__vbcast4)
#define attn__vtr4 ATTN__K(attn__vtr4)
#define attn__vload4x4 ATTN__K(attn__vload4x4)
#define attn__vstore4x4 ATTN__K(attn__vstore4x4)
#define attn__vhsum ATTN__K(attn__vhsum)
#define attn__vhmax ATTN__K(attn__vhmax)
#define attn__vstream ATTN__K(attn__vstream)
#define attn__vhsum4 ATTN__K(attn__vhsum4)
#define attn__vexp ATTN__K(attn__vexp)
#define attn__vexp_shifted ATTN__K(attn__vexp_shifted)
#define attn__isa_use ATTN__K(attn__isa_use)
#define attn__sgd_row ATTN__K(attn__sgd_row)
#define attn__sgd_apply ATTN__K(attn__sgd_apply)
#define attn__sgd_outer ATTN__K(attn__sgd_outer)
#define attn__dot ATTN__K(attn__dot)
#define attn__axpy ATTN__K(attn__axpy)
#define attn__scale ATTN__K(attn__scale)
#define attn__mul ATTN__K(attn__mul)
#define attn__rows_op ATTN__K(attn__rows_op)
#define attn__max ATTN__K(attn__max)
#define attn__vmap_tail ATTN__K(attn__vmap_tail)
#define attn__exp ATTN__K(attn__exp)
#define attn__vtanh ATTN__K(attn__vtanh)
#define attn__tanh ATTN__K(attn__tanh)
#define attn__sum ATTN__K(attn__sum)
#define attn__exp_weighted ATTN__K(attn__exp_weighted)
#define attn__shift_copy ATTN__K(attn__shift_copy)
#define attn__mul_add ATTN__K(attn__mul_add)
#define attn__scale_copy ATTN__K(attn__scale_copy)
#define attn__fill ATTN__K(attn__fill)
#define attn__exp_row ATTN__K(attn__exp_row)
#define attn__mul_tanh_grad ATTN__K(attn__mul_tanh_grad)
#define attn__ramp_sub ATTN__K(attn__ramp_sub)
#define attn__micro ATTN__K(attn__micro)
#define attn__tile_store ATTN__K(attn__tile_store)
#define attn__prefetch_tile ATTN__K(attn__prefetch_tile)
#define attn__transpose8 ATTN__K(attn__transpose8)
#define attn__transpose ATTN__K(attn__transpose)
#define attn__pack_a ATTN__K(attn__pack_a)
#define attn__pack_b ATTN__K(attn__pack_b)
#define attn__gemm_barrier ATTN__K(attn__gemm_barrier)
#define attn__div ATTN__K(attn__div)
#define attn__tile_micro ATTN__K(attn__tile_micro)
#define attn__gemm_tiles ATTN__K(attn__gemm_tiles)
#define attn__gemm_item ATTN__K(attn__gemm_item)
#define attn__gemm_thread ATTN__K(attn__gemm_thread)
#define attn__gemm_is_small ATTN__K(attn__gemm_is_small)
#define attn__small_ger ATTN__K(attn__small_ger)
#define attn__small_col ATTN__K(attn__small_col)
#define attn__small_row ATTN__K(attn__small_row)
#define attn__small_dots ATTN__K(attn__small_dots)
#define attn__gemm_small ATTN__K(attn__gemm_small)
#define attn__small_n4 ATTN__K(attn__small_n4)
#define attn__small_t4 ATTN__K(attn__small_t4)
#define attn__gemm_is_short ATTN__K(attn__gemm_is_short)
#define attn__store3 ATTN__K(attn__store3)
#define attn__small_k4 ATTN__K(attn__small_k4)
#define attn__small_ct4 ATTN__K(attn__small_ct4)
#define attn__gemm_opb_rows ATTN__K(attn__gemm_opb_rows)
#define attn__gemm_short ATTN__K(attn__gemm_short)
#define attn__gemm_need ATTN__K(attn__gemm_need)
#define attn__gemm_whole_tiles ATTN__K(attn__gemm_whole_tiles)
#define attn__depth_blocks ATTN__K(attn__depth_blocks)
#define attn__gemm_run ATTN__K(attn__gemm_run)
#define attn__gemm_threads ATTN__K(attn__gemm_threads)
#define attn__gemm_packed ATTN__K(attn__gemm_packed)
#define attn__gemm_is_few_rows ATTN__K(attn__gemm_is_few_rows)
#define attn__gemm_core ATTN__K(attn__gemm_core)
#define attn__gemm_few_rows ATTN__K(attn__gemm_few_rows)
#define attn__gemm_body ATTN__K(attn__gemm_body)
#define attn__micro_wide ATTN__K(attn__micro_wide)
#define attn__micro_wide_s ATTN__K(attn__micro_wide_s)
#define attn__micro_narrow_s ATTN__K(attn__micro_narrow_s)
#define attn__micro_narrow_t ATTN__K(attn__micro_narrow_t)
#define attn__micro_wide_t ATTN__K(attn__micro_wide_t)
#define attn__micro_wide_sb ATTN__K(attn__micro_wide_sb)
#define attn__micro_narrow_sb ATTN__K(attn__micro_narrow_sb)
#define attn__micro_narrow_p ATTN__K(attn__micro_narrow_p)
#define attn__panels_npad ATTN__K(attn__panels_npad)
#define attn__panels_pack ATTN__K(attn__panels_pack)
#define attn__gemm_panels ATTN__K(attn__gemm_panels)
#define attn__panels_pay ATTN__K(attn__panels_pay)
#define attn__ea_vg ATTN__K(attn__ea_vg)
#define attn__fusable ATTN__K(attn__fusable)
#define attn__fused_exponent ATTN__K(attn__fused_exponent)
#define attn__fused_max ATTN__K(attn__fused_max)
#define attn__fused_pv ATTN__K(attn__fused_pv)
#define attn__fused_pv_buffer ATTN__K(attn__fused_pv_buffer)
#define attn__fused_panel ATTN__K(attn__fused_panel)
#define attn__fused_alibi ATTN__K(attn__fused_alibi)
#define attn__fused_qk ATTN__K(attn__fused_qk)
#define attn__fused_rows_nv ATTN__K(attn__fused_rows_nv)
#define attn__fused_rows ATTN__K(attn__fused_rows)
#define attn__moments ATTN__K(attn__moments)
#define attn__ln_forward_rows ATTN__K(attn__ln_forward_rows)
#define attn__ln_backward_rows ATTN__K(attn__ln_backward_rows)
#define attn__rms_forward_rows ATTN__K(attn__rms_forward_rows)
#define attn__rms_backward_rows ATTN__K(attn__rms_backward_rows)
#define attn__gelu_erf_vec ATTN__K(attn__gelu_erf_vec)
#define attn__act_vec ATTN__K(attn__act_vec)
#define attn__act_simd ATTN__K(attn__act_simd)
#define attn__glu_forward ATTN__K(attn__glu_forward)
#define attn__glu_backward ATTN__K(attn__glu_backward)
#define attn__rope ATTN__K(attn__rope)
#define attn__adamw_block ATTN__K(attn__adamw_block)
#define attn__ea_map_v ATTN__K(attn__ea_map_v)
#define attn__ea_vjp_v ATTN__K(attn__ea_vjp_v)
#define attn__masked_exponent ATTN__K(attn__masked_exponent)
#define attn__softmax_dscores ATTN__K(attn__softmax_dscores)
#define attn__cog_sign_v ATTN__K(attn__cog_sign_v)
#define attn__sigmoid_map_v ATTN__K(attn__sigmoid_map_v)
#define attn__sigmoid_vjp_v ATTN__K(attn__sigmoid_vjp_v)

/* 0, 1, 2, ...: each lane's index (a vector's worth at most) */
static const attn_float attn__lanes[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
#endif /* shared code */

/* ---- per-ISA code ---- */
#ifdef ATTN__PASS /* the previous pass's constants make way for this one's */
#undef ATTN__VW
#undef ATTN__SPREAD4
#undef ATTN__STREAMS
#undef ATTN__SFENCE
#undef ATTN__VREGS
#undef ATTN__AT_DIRECT
#undef ATTN__MR
#undef ATTN__NV
#undef ATTN__MR_S
#undef ATTN__KC
#undef ATTN__MC
#undef ATTN__NC
#undef ATTN__RKC
#undef ATTN__RNC
#undef ATTN__BPF
#undef ATTN__PANEL
#endif

/* A small SIMD vocabulary: every vector kernel below is written once in these terms. attn__v holds
   ATTN__VW floats; the scalar "vector" is one attn_float, which makes the same kernels the portable
   fallback. fma(a, b, c) = a * b + c (fused where the ISA has it). */
#define ATTN__VOCAB(T, LOAD, STORE, SET1, MUL, ADD, SUB, MAX, MIN, DIV, SQRT)                     \
    typedef T attn__v;                                                                             \
    ATTN__INLINE attn__v attn__vload(const float *p) { return LOAD(p); }                           \
    ATTN__INLINE void attn__vstore(float *p, attn__v v) { STORE(p, v); }                           \
    ATTN__INLINE attn__v attn__vset1(float x) { return SET1(x); }                                  \
    ATTN__INLINE attn__v attn__vmul(attn__v a, attn__v b) { return MUL(a, b); }                    \
    ATTN__INLINE attn__v attn__vadd(attn__v a, attn__v b) { return ADD(a, b); }                    \
    ATTN__INLINE attn__v attn__vsub(attn__v a, attn__v b) { return SUB(a, b); }                    \
    ATTN__INLINE attn__v attn__vmax(attn__v a, attn__v b) { return MAX(a, b); }                    \
    ATTN__INLINE attn__v attn__vmin(attn__v a, attn__v b) { return MIN(a, b); }                    \
    ATTN__INLINE attn__v attn__vdiv(attn__v a, attn__v b) { return DIV(a, b); }                    \
    ATTN__INLINE attn__v attn__vsqrt(attn__v a) { return SQRT(a); }
/* vmax(a, b) and vmin(a, b) return b when a or b is NaN, as x86's maxps and minps do (NEON returns
   the NaN), so a clamp written vmin(hi, vmax(lo, x)) passes a NaN x through in every backend.
   Besides the table row, each ISA gives fma, vround (to the nearest integer, as floats) and
   vpow2 (2^n for integer-valued n in [-126, 127], built from the exponent bits) for attn__vexp, and
   vswap2 (lanes 2k and 2k + 1 exchanged: the pairs RoPE rotates) and vabs (|x|, the sign bit cleared). */
#if defined(ATTN__AVX512)
#define ATTN__VW 16
ATTN__VOCAB(__m512, _mm512_loadu_ps, _mm512_storeu_ps, _mm512_set1_ps, _mm512_mul_ps, _mm512_add_ps,
            _mm512_sub_ps, _mm512_max_ps, _mm512_min_ps, _mm512_div_ps, _mm512_sqrt_ps)
ATTN__INLINE attn__v attn__vfma(attn__v a, attn__v b, attn__v c) { return _mm512_fmadd_ps(a, b, c); }
ATTN__INLINE attn__v attn__vabs(attn__v x) { return _mm512_abs_ps(x); }
ATTN__INLINE attn__v attn__vround(attn__v x)
{
    return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
ATTN__INLINE attn__v attn__vpow2(attn__v n)
{
    return _mm512_castsi512_ps(
        _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23));
}
ATTN__INLINE attn__v attn__vswap2(attn__v v) { return _mm512_permute_ps(v, 0xB1); }
/* AVX-512 only (ATTN__SPREAD4, for products four columns wide): a[0..4) each repeated over four
   lanes, (a0 a0 a0 a0 a1 ... a3), and the sums of v's four groups of four lanes into t[0..4). */
#define ATTN__SPREAD4 1
ATTN__INLINE attn__v attn__vspread4(const float *a)
{
    return _mm512_permutexvar_ps(_mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0),
                                 _mm512_castps128_ps512(_mm_loadu_ps(a)));
}
ATTN__INLINE void attn__vsum4(float *t, attn__v v)
{
    __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v),
                             _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    _mm_storeu_ps(t, _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1)));
}
/* b[0..4) repeated four times, (b0 b1 b2 b3 b0 ... b3); v's lanes as a 4 x 4 matrix, transposed (lane
   4r + j <- lane 4j + r); four rows of four floats ld apart as one vector (row r in lanes 4r..4r+3),
   loaded and stored. */
ATTN__INLINE attn__v attn__vbcast4(const float *b) { return _mm512_broadcast_f32x4(_mm_loadu_ps(b)); }
ATTN__INLINE attn__v attn__vtr4(attn__v v)
{
    return _mm512_permutexvar_ps(_mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0), v);
}
ATTN__INLINE attn__v attn__vload4x4(const float *c, size_t ld)
{
    __m512 v = _mm512_castps128_ps512(_mm_loadu_ps(c));
    v = _mm512_insertf32x4(v, _mm_loadu_ps(c + ld), 1);
    v = _mm512_insertf32x4(v, _mm_loadu_ps(c + 2 * ld), 2);
    return _mm512_insertf32x4(v, _mm_loadu_ps(c + 3 * ld), 3);
}
ATTN__INLINE void attn__vstore4x4(float *c, size_t ld, attn__v v)
{
    _mm_storeu_ps(c, _mm512_castps512_ps128(v));
    _mm_storeu_ps(c + ld, _mm512_extractf32x4_ps(v, 1));
    _mm_storeu_ps(c + 2 * ld, _mm512_extractf32x4_ps(v, 2));
    _mm_storeu_ps(c + 3 * ld, _mm512_extractf32x4_ps(v, 3));
}
#elif defined(ATTN__AVX2)
#define ATTN__VW 8
ATTN__VOCAB(__m256, _mm256_loadu_ps, _mm256_storeu_ps, _mm256_set1_ps, _mm256_mul_ps, _mm256_add_ps,
            _mm256_sub_ps, _mm256_max_ps, _mm256_min_ps, _mm256_div_ps, _mm256_sqrt_ps)
#if defined(ATTN__FMA)
ATTN__INLINE attn__v attn__vfma(attn__v a, attn__v b, attn__v c) { return _mm256_fmadd_ps(a, b, c); }
#else
ATTN__INLINE attn__v attn__vfma(attn__v a, attn__v b, attn__v c)
{
    return _mm256_add_ps(_mm256_mul_ps(a, b), c);
}
#endif
ATTN__INLINE attn__v attn__vround(attn__v x)
{
    return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
ATTN__INLINE attn__v attn__vpow2(attn__v n)
{
    return _mm256_castsi256_ps(
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23));
}
ATTN__INLINE attn__v attn__vswap2(attn__v v) { return _mm256_permute_ps(v, 0xB1); }
ATTN__INLINE attn__v attn__vabs(attn__v x) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x); }
#elif defined(ATTN__SSE2)
#define ATTN__VW 4
ATTN__VOCAB(__m128, _mm_loadu_ps, _mm_storeu_ps, _mm_set1_ps, _mm_mul_ps, _mm_add_ps, _mm_sub_ps, _mm_max_ps,
            _mm_min_ps, _mm_div_ps, _mm_sqrt_ps)
ATTN__INLINE attn__v attn__vfma(attn__v a, attn__v b, attn__v c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
ATTN__INLINE attn__v attn__vround(attn__v x) { return _mm_cvtepi32_ps(_mm_cvtps_epi32(x)); } /* MXCSR */
ATTN__INLINE attn__v attn__vpow2(attn__v n)
{
    return _mm_castsi128_ps(_mm_slli_epi32(_mm_add_epi32(_mm_cvtps_epi32(n), _mm_set1_epi32(127)), 23));
}
ATTN__INLINE attn__v attn__vswap2(attn__v v) { return _mm_shuffle_ps(v, v, 0xB1); }
ATTN__INLINE attn__v attn__vabs(attn__v x) { return _mm_andnot_ps(_mm_set1_ps(-0.0f), x); }
#elif defined(ATTN__WASM)
#define ATTN__VW 4
#define ATTN__WASM_MAX(a, b) wasm_f32x4_pmax(b, a) /* b < a ? a : b: maxps's order */
#define ATTN__WASM_MIN(a, b) wasm_f32x4_pmin(b, a)
ATTN__VOCAB(v128_t, wasm_v128_load, wasm_v128_store, wasm_f32x4_splat, wasm_f32x4_mul, wasm_f32x4_add,
            wasm_f32x4_sub, ATTN__WASM_MAX, ATTN__WASM_MIN, wasm_f32x4_div, wasm_f32x4_sqrt)
/* a * b + c. With -mrelaxed-simd, relaxed_madd: one fused instruction where the machine has FMA
   (engines that ship relaxed SIMD: Chromium 114+, node with --experimental-wasm-relaxed-simd).
   clang < 16 has only the proposal's prototype, which emits an opcode engines reject: a build with
   it runs tools/wasm_relaxed.mjs, which renumbers it to relaxed_madd's, whose order this call uses. */
ATTN__INLINE attn__v attn__vfma(attn__v a, attn__v b, attn__v c)
{
#if defined(__wasm_relaxed_simd__) && __clang_major__ >= 16
    return __builtin_wasm_relaxed_madd_f32x4(a, b, c);
#elif defined(__wasm_relaxed_simd__)
    return __builtin_wasm_fma_f32x4(a, b, c);
#else
    return wasm_f32x4_add(wasm_f32x4_mul(a, b), c);
#endif
}
ATTN__INLINE attn__v attn__vround(attn__v x) { return wasm_f32x4_nearest(x); }
ATTN__INLINE attn__v attn__vpow2(attn__v n)
{
    return wasm_i32x4_shl(wasm_i32x4_add(wasm_i32x4_trunc_sat_f32x4(n), wasm_i32x4_splat(127)), 23);
}
ATTN__INLINE attn__v attn__vswap2(attn__v v) { return wasm_i32x4_shuffle(v, v, 1, 0, 3, 2); }
ATTN__INLINE attn__v attn__vabs(attn__v x) { return wasm_f32x4_abs(x); }
#elif defined(ATTN__NEON)
#define ATTN__VW 4
ATTN__VOCAB(float32x4_t, vld1q_f32, vst1q_f32, vdupq_n_f32, vmulq_f32, vaddq_f32, vsubq_f32, vmaxq_f32,
            vminq_f32, vdivq_f32, vsqrtq_f32)
ATTN__INLINE attn__v attn__vfma(attn__v a, attn__v b, attn__v c) { return vfmaq_f32(c, a, b); }
ATTN__INLINE attn__v attn__vround(attn__v x) { return vrndnq_f32(x); }
ATTN__INLINE attn__v attn__vpow2(attn__v n)
{
    return vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(vcvtnq_s32_f32(n), vdupq_n_s32(127)), 23));
}
ATTN__INLINE attn__v attn__vswap2(attn__v v) { return vrev64q_f32(v); }
ATTN__INLINE attn__v attn__vabs(attn__v x) { return vabsq_f32(x); }
#endif
#if defined(ATTN__AVX512)
ATTN__INLINE float attn__vhsum(attn__v v) { return _mm512_reduce_add_ps(v); }
ATTN__INLINE float attn__vhmax(attn__v v) { return _mm512_reduce_max_ps(v); }
#elif defined(ATTN__AVX2)
ATTN__INLINE float attn__vhsum(attn__v v)
{
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_add_ss(h, _mm_shuffle_ps(h, h, 1)));
}
ATTN__INLINE float attn__vhmax(attn__v v)
{
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_max_ss(h, _mm_shuffle_ps(h, h, 1)));
}
#elif !defined(ATTN__SCALAR)
/* Horizontal reductions through memory: short, portable, and off the hot loops. */
ATTN__INLINE float attn__vhsum(attn__v v)
{
    float t[ATTN__VW], s = 0;
    int i;
    attn__vstore(t, v);
    for (i = 0; i < ATTN__VW; i++) s += t[i];
    return s;
}
ATTN__INLINE float attn__vhmax(attn__v v)
{
    float t[ATTN__VW], m;
    int i;
    attn__vstore(t, v);
    for (m = t[0], i = 1; i < ATTN__VW; i++) m = t[i] > m ? t[i] : m;
    return m;
}
#else /* scalar */
typedef attn_float attn__v;
#define ATTN__VW 1
ATTN__INLINE attn__v attn__vload(const attn_float *p) { return *p; }
ATTN__INLINE void attn__vstore(attn_float *p, attn__v v) { *p = v; }
ATTN__INLINE attn__v attn__vset1(attn_float x) { return x; }
ATTN__INLINE attn__v attn__vfma(attn__v a, attn__v b, attn__v c) { return a * b + c; }
ATTN__INLINE attn__v attn__vmul(attn__v a, attn__v b) { return a * b; }
ATTN__INLINE attn__v attn__vadd(attn__v a, attn__v b) { return a + b; }
ATTN__INLINE attn__v attn__vsub(attn__v a, attn__v b) { return a - b; }
ATTN__INLINE attn__v attn__vmax(attn__v a, attn__v b) { return a > b ? a : b; }
ATTN__INLINE attn__v attn__vmin(attn__v a, attn__v b) { return a < b ? a : b; }
ATTN__INLINE attn__v attn__vdiv(attn__v a, attn__v b) { return a / b; }
ATTN__INLINE attn__v attn__vsqrt(attn__v a) { return (attn_float)sqrt(a); }
ATTN__INLINE attn__v attn__vabs(attn__v a) { return (attn_float)fabs(a); }
ATTN__INLINE attn_float attn__vhsum(attn__v v) { return v; }
ATTN__INLINE attn_float attn__vhmax(attn__v v) { return v; }
ATTN__INLINE attn__v attn__vswap2(attn__v v) { return v; } /* one lane: no pairs (RoPE's loop is scalar) */
#endif
/* A store past the caches (AVX-512: a non-temporal store, p aligned to the vector; a plain store
   elsewhere), and the fence after a run of them. ATTN__STREAMS: whether there are such stores
   (whose tile rows cover whole cache lines: two vectors of 16 floats, 128 bytes). Not on AVX2: on
   the AVX2 machine measured they were slower, also for C past the L3 (docs/benchmarks.md). */
#if defined(ATTN__AVX512)
ATTN__INLINE void attn__vstream(float *p, attn__v v) { _mm512_stream_ps(p, v); }
#define ATTN__STREAMS 1
#define ATTN__SFENCE() _mm_sfence()
#else
ATTN__INLINE void attn__vstream(attn_float *p, attn__v v) { attn__vstore(p, v); }
#define ATTN__STREAMS 0
#define ATTN__SFENCE() ((void)0)
#endif
/* t[0..3] = the horizontal sums of a, b, c, d, in one reduction tree where the ISA has the shuffles
   (the small products' dot products come in fours). */
#if defined(ATTN__AVX512)
ATTN__INLINE void attn__vhsum4(attn__v a, attn__v b, attn__v c, attn__v d, float *t)
{
    __m512 ab = _mm512_add_ps(_mm512_shuffle_f32x4(a, b, 0x44),
                              _mm512_shuffle_f32x4(a, b, 0xEE)); /* 128-bit lanes a0+a2 a1+a3 b0+b2 b1+b3 */
    __m512 cd = _mm512_add_ps(_mm512_shuffle_f32x4(c, d, 0x44), _mm512_shuffle_f32x4(c, d, 0xEE));
    __m512 s = _mm512_add_ps(_mm512_shuffle_f32x4(ab, cd, 0x88),
                             _mm512_shuffle_f32x4(ab, cd, 0xDD)); /* lanes a b c d */
    s = _mm512_add_ps(s, _mm512_permute_ps(s, 0x4E));
    s = _mm512_add_ps(s, _mm512_permute_ps(s, 0xB1)); /* every float of a lane holds its sum */
    _mm_storeu_ps(t, _mm512_castps512_ps128(_mm512_permutexvar_ps(
                         _mm512_setr_epi32(0, 4, 8, 12, 0, 4, 8, 12, 0, 4, 8, 12, 0, 4, 8, 12), s)));
}
#elif defined(ATTN__AVX2)
ATTN__INLINE void attn__vhsum4(attn__v a, attn__v b, attn__v c, attn__v d, float *t)
{
    __m256 s = _mm256_hadd_ps(_mm256_hadd_ps(a, b),
                              _mm256_hadd_ps(c, d)); /* each half: a b c d over its half */
    _mm_storeu_ps(t, _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1)));
}
#else
ATTN__INLINE void attn__vhsum4(attn__v a, attn__v b, attn__v c, attn__v d, attn_float *t)
{
    t[0] = attn__vhsum(a); t[1] = attn__vhsum(b); t[2] = attn__vhsum(c); t[3] = attn__vhsum(d);
}
#endif

/* exp(x) for every lane. SIMD: x = n ln2 + r with n = round(x / ln2) and |r| <= ln2 / 2, then
   e^r by its Taylor polynomial of degree 6 (truncation error r^7 / 7! < 1.3e-7, about an ulp) and
   2^n from the exponent bits. x is clamped to [-87, 88], so exp of very negative x gives ~1e-38
   rather than 0 and large x saturates instead of overflowing; callers subtract a row maximum
   first. NaN gives NaN, as libm's. The scalar build calls libm, on the same clamped range. */
#if defined(ATTN__SCALAR)
ATTN__INLINE attn__v attn__vexp(attn__v x) { return (attn_float)exp(x < -87 ? -87 : x > 88 ? 88 : x); }
#else
ATTN__INLINE attn__v attn__vexp(attn__v x)
{
    attn__v n, r, p;
    x = attn__vmin(attn__vset1(88.0f), attn__vmax(attn__vset1(-87.0f), x)); /* NaN passes */
    n = attn__vround(attn__vmul(x, attn__vset1(1.44269504088896341f)));
    r = attn__vfma(n, attn__vset1(-0.693145751953125f), x);   /* ln2 split in two parts, so that */
    r = attn__vfma(n, attn__vset1(-1.428606765330187e-06f), r); /* n ln2 is subtracted exactly */
    p = attn__vfma(attn__vset1(1.0f / 720), r, attn__vset1(1.0f / 120));
    p = attn__vfma(p, r, attn__vset1(1.0f / 24));
    p = attn__vfma(p, r, attn__vset1(1.0f / 6));
    p = attn__vfma(p, r, attn__vset1(0.5f));
    p = attn__vfma(p, r, attn__vset1(1.0f));
    p = attn__vfma(p, r, attn__vset1(1.0f));
    return attn__vmul(p, attn__vpow2(n));
}
#endif

/* e^(x - c) for every lane, x - c <= 88 (below -87 taken as -87: 1.6e-38 rather than 0, -Inf
   included; NaN gives NaN): 2^t with t = (x - c) log2(e) = n + f, n = round(t), |f| <= 1/2 exactly,
   and 2^f = e^(f ln2) by the Taylor polynomial of attn__vexp in f (the same truncation error). 12
   vector operations on AVX-512 (vscalefps puts 2^n in) against 17 for attn__vexp of a difference:
   the softmax weights' exponential. The scalar build calls libm, as attn__vexp. */
#if defined(ATTN__SCALAR)
ATTN__INLINE attn__v attn__vexp_shifted(attn__v x, attn__v c) { return attn__vexp(x - c); }
#else
ATTN__INLINE attn__v attn__vexp_shifted(attn__v x, attn__v c)
{
    attn__v t, n, f, p;
    t = attn__vmul(attn__vsub(x, c), attn__vset1(1.44269504088896341f));
    t = attn__vmax(attn__vset1(-125.5f), t); /* NaN passes */
    n = attn__vround(t);
    f = attn__vsub(t, n);
    p = attn__vfma(attn__vset1(1.540353039338161e-04f), f, attn__vset1(1.333355814642844e-03f));
    p = attn__vfma(p, f, attn__vset1(9.618129107628477e-03f));
    p = attn__vfma(p, f, attn__vset1(5.550410866482158e-02f));
    p = attn__vfma(p, f, attn__vset1(2.402265069591007e-01f));
    p = attn__vfma(p, f, attn__vset1(6.931471805599453e-01f));
    p = attn__vfma(p, f, attn__vset1(1.0f));
#if defined(ATTN__AVX512)
    return _mm512_scalef_ps(p, n);
#else
    return attn__vmul(p, attn__vpow2(n));
#endif
}
#endif

/* ---- end of per-ISA code ---- */
#ifndef ATTN__PASS

static int attn__gemm_bad_args(int transA, int transB, int M, int N, int K, const attn_float *A,
                               int lda, const attn_float *B, int ldb, const attn_float *C, int ldc)
{
    if ((transA != 0 && transA != 1) || (transB != 0 && transB != 1))
        return attn__fail(ATTN_ERR_ARG, "attn_gemm: transA = %d, transB = %d, each must be 0 or 1", transA,
                          transB);
    if (M < 0 || N < 0 || K < 0)
        return attn__fail(ATTN_ERR_SHAPE, "attn_gemm: M = %d, N = %d, K = %d must be >= 0", M, N, K);
    if (lda < ATTN__MAX(1, transA ? M : K))
        return attn__fail(ATTN_ERR_SHAPE, "attn_gemm: lda = %d < %d", lda, ATTN__MAX(1, transA ? M : K));
    if (ldb < ATTN__MAX(1, transB ? K : N))
        return attn__fail(ATTN_ERR_SHAPE, "attn_gemm: ldb = %d < %d", ldb, ATTN__MAX(1, transB ? K : N));
    if (ldc < ATTN__MAX(1, N))
        return attn__fail(ATTN_ERR_SHAPE, "attn_gemm: ldc = %d < %d", ldc, ATTN__MAX(1, N));
    if (M && N && !C) return attn__fail(ATTN_ERR_ARG, "attn_gemm: C is NULL");
    if (M && N && K && (!A || !B)) return attn__fail(ATTN_ERR_ARG, "attn_gemm: %s is NULL", A ? "B" : "A");
    return 0;
}

/* C = beta C for the products with nothing to add (K = 0 or alpha = 0). */
static void attn__gemm_scale_c(int M, int N, attn_float beta, attn_float *C, int ldc)
{
    int i, j;
    for (i = 0; i < M; i++) {
        attn_float *c = C + (size_t)i * ldc;
        if (beta == 0) memset(c, 0, sizeof(attn_float) * (size_t)N);
        else
            for (j = 0; j < N; j++) c[j] *= beta;
    }
}

ATTNDEF void attn_gemm_reference(int transA, int transB, int M, int N, int K, attn_float alpha,
                                 const attn_float *A, int lda, const attn_float *B, int ldb,
                                 attn_float beta, attn_float *C, int ldc)
{
    int i, j, p;
    if (attn__gemm_bad_args(transA, transB, M, N, K, A, lda, B, ldb, C, ldc)) return;
    for (i = 0; i < M; i++)
        for (j = 0; j < N; j++) {
            double s = 0;
            attn_float *c = C + (size_t)i * ldc + j;
            for (p = 0; p < K; p++)
                s += (double)(transA ? A[(size_t)p * lda + i] : A[(size_t)i * lda + p]) *
                     (double)(transB ? B[(size_t)j * ldb + p] : B[(size_t)p * ldb + j]);
            *c = (attn_float)(beta == 0 ? alpha * s : alpha * s + (double)beta * *c);
        }
}

#if !defined(ATTN_USE_CBLAS)
typedef void (*attn__micro_fn)(int kc, const attn_float *a, size_t rs, size_t cs, const attn_float *b,
                               size_t bs, attn_float *C, size_t ldc, attn_float alpha, attn_float beta,
                               int stream);

/* One product, cut into blocks: what every thread needs to know. */
typedef struct {
    int transA, transB, M, N, K, lda, ldb, ldc;
    const attn_float *A, *B;
    attn_float *C, alpha, beta;
    int mr, nr, direct, bdirect, KC, MC, NC, n_ic, nsplit; /* direct: A in place; bdirect: B */
    int tiles;          /* row tiles of mr rows */
    size_t rs, cs;      /* element (i, p) of op(A) is A[i rs + p cs] */
    attn__micro_fn micro, micro_b; /* micro_b: for the full B panels read in place */
    attn_float *bpack;  /* KC x NC, shared */
    attn_float *apack;  /* MC x KC per thread */
    const attn_float *panels; /* B packed before the call (attn__panels_pack), or NULL */
    size_t npad;        /* its floats per depth row */
    int pj0;            /* and the column op(B)'s first column is in it */
    int stream;         /* whole tiles of C stored past the caches (see attn__gemm_run) */
    int resident;       /* C's blocks kept in L2 over the depth blocks (see attn__gemm_run) */
} attn__gemm_job;

/* The calling thread's packing buffer, at least `bytes` long (ATTN_ALIGN-aligned), or NULL; *owned
   is set when it was allocated for this call only (the caller frees it). */
#ifndef ATTN__NO_TLS
static ATTN__TLS void *attn__gemm_scratch = NULL;
static ATTN__TLS size_t attn__gemm_scratch_bytes = 0; /* usable bytes after alignment */
static ATTN__TLS int attn__gemm_scratch_lent = 0;     /* 1: the caller's (attn_gemm_scratch) */
#endif
static attn_float *attn__gemm_buffer(size_t bytes, void **owned)
{
    *owned = NULL;
#ifndef ATTN__NO_TLS
    if (bytes <= attn__gemm_scratch_bytes) return attn__align_ptr(attn__gemm_scratch, 0);
    if (!attn__gemm_scratch_lent) {
        if (attn__gemm_scratch) ATTN_FREE(attn__gemm_scratch);
        attn__gemm_scratch_bytes = (attn__gemm_scratch = ATTN_MALLOC(bytes + ATTN_ALIGN)) ? bytes : 0;
        return attn__gemm_scratch ? attn__align_ptr(attn__gemm_scratch, 0) : NULL;
    }
#endif
    *owned = ATTN_MALLOC(bytes + ATTN_ALIGN);
    return *owned ? attn__align_ptr(*owned, 0) : NULL;
}
#endif
#endif /* shared code */

/* ---- per-ISA code ---- */

#if !defined(ATTN_USE_CBLAS) /* the hand-written GEMM */

/* GEMM, organised as in BLIS (Van Zee & van de Geijn 2015):
     for jc in N step NC:            B block  [KC, NC]  packed into NR-wide column panels (L3)
       for pc in K step KC:
         for ic in M step MC:        A block  [MC, KC]  packed into MR-tall row panels    (L2)
           for jr, ir:               MR x NR tile of C += A panel x B panel  (micro-kernel, L1)
   A packed panel holds op(A)[i0 .. i0+MR, p] for p = 0 .. kc as kc groups of MR values, a B panel
   kc groups of NR values; edges are padded with zeros so the micro-kernel always runs full tiles.
   The micro-kernel keeps the MR x NR tile in MR * NV vector registers (NR = NV * ATTN__VW), or
   MR_S x ATTN__VW ("narrow") when N <= ATTN__VW, the head-dimension-16 case of attention.
   Packing A is a transpose that costs about as much as the FLOPs it feeds when N is small, and it
   does not pay off for a row-major A (transA = 0): the "_s" kernels read A in place, MR_S rows at a
   time (one sequential stream per row). A transposed A is read in place while N <= ATTN__VW and,
   with ATTN__AT_DIRECT, while K <= 128 or M <= 256 (at any N), and up to N = 8 wide panels when A
   is within 2 MiB (K lda floats) or its rows are a page or more apart ("far"). The walk down A's
   columns lands on another row of A every depth step, where the hardware prefetchers find no
   stream; on far rows the "_t" kernels ask for the line to the right of each one they read (see
   attn__micro_narrow_t), and with that, in place beats packing. Shallow products, whose C traffic
   weighs most, run in 8-row tiles. The tile grid is fixed by M, N and the shapes, never by the
   number of threads, so every element is computed the same way whatever the thread count
   (docs/benchmarks.md has the measurements). */
/* Per ISA: MR x NV vectors for the packed kernel, MR_S rows for the in-place ones (each row needs an
   address, and MR_S * NV + NV + 1 vector registers must fit), cache blocks KC (depth), MC (rows of A
   per block), NC (columns of B per block). Tuned on AVX-512, KC and MC measured on AVX2 too (SSE2
   and WASM share AVX2's), NEON's sized to its 32 registers. Depth blocks of up to 1024 put 1024^3 in
   one block. ATTN__AT_DIRECT: a transposed A that is shallow, short or a few panels wide is read in
   place (AVX-512, NEON); the 16-register ISAs pack it unless N fits one panel, since their in-place
   tile reads its MR_S rows' values from a new row of A at every depth step (packed was faster on
   most shapes measured on AVX2 and SSE2, but not where packing A costs as much as the one panel of
   products that reads it; docs/benchmarks.md). */
#if defined(ATTN__AVX512)
#define ATTN__AT_DIRECT 1
#define ATTN__VREGS 32
#define ATTN__MR 14
#define ATTN__NV 2
#define ATTN__MR_S 8
#define ATTN__KC 1024
#define ATTN__MC 56
#define ATTN__NC 2048
#define ATTN__RKC 256
#define ATTN__RNC 256
#define ATTN__BPF 16
#elif defined(ATTN__NEON)
#define ATTN__AT_DIRECT 1
#define ATTN__VREGS 32
#define ATTN__MR 8
#define ATTN__NV 3
#define ATTN__MR_S 8
#define ATTN__KC 256
#define ATTN__MC 128
#define ATTN__NC 2040
#elif defined(ATTN__AVX2) || defined(ATTN__SSE2) || defined(ATTN__WASM)
#define ATTN__AT_DIRECT 0
#define ATTN__VREGS 16
#define ATTN__MR 6
#define ATTN__NV 2
#define ATTN__MR_S 6
#define ATTN__KC 384
#define ATTN__MC 120
#define ATTN__NC 2048
#else /* scalar */
#define ATTN__AT_DIRECT 1
#define ATTN__VREGS 16
#define ATTN__MR 4
#define ATTN__NV 2
#define ATTN__MR_S 4
#define ATTN__KC 256
#define ATTN__MC 128
#define ATTN__NC 2048
#endif
#ifndef ATTN__RNC /* tuned on AVX-512 only: elsewhere no C-resident blocking (attn__gemm_run) */
#define ATTN__RKC 256
#define ATTN__RNC 0
#endif
#ifndef ATTN__BPF /* tuned on AVX-512 only: elsewhere no requests for B's panel ahead (attn__micro) */
#define ATTN__BPF 0
#endif
#define ATTN__B_INPLACE (1 << 16) /* floats of a row-major B read in place (see g.bdirect) */
#define ATTN__A_INPLACE (1 << 19) /* floats of a transposed A (K lda) read in place at any M */
#define ATTN__MAXMR ATTN__MAX(ATTN__MR, ATTN__MR_S)
#define ATTN__MAXNR (ATTN__NV * ATTN__VW)
#define ATTN__PAR_FLOPS 4.0e6 /* a product smaller than this runs on one thread */
#define ATTN__STREAM_BYTES 4194304.0 /* a larger C written once is stored past the caches */

#if defined(__clang__)
#define ATTN__UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define ATTN__UNROLL _Pragma("GCC unroll 32")
#else
#define ATTN__UNROLL
#endif
/* The micro-kernel's depth loop, 4 times unrolled for WebAssembly: the engines do not unroll it
   (bench_wasm measures the difference). */
#if defined(ATTN__WASM) && defined(__clang__)
#define ATTN__KUNROLL _Pragma("clang loop unroll_count(4)")
#else
#define ATTN__KUNROLL
#endif

/* C[MR, NR] = alpha sum_p a[:, p] (outer) b[p, 0..NR] + beta C (beta = 0: C is not read; stream:
   beta = 0 and C's stores go past the caches), the sum over kc rank-1 updates of a tile held in
   MR * NV vector registers. Element (i, p) of the A panel
   is a[i * rs + p * cs]: (1, MR) for a packed panel, (lda, 1) or (1, lda) to read A in place; row p
   of the B panel starts at b + p * bs: bs = NR packed, ldb in place. pf > 0: each depth step also
   asks for a[pf + p * cs] into L2 (see attn__micro_narrow_t); bpf > 0: for B's row bpf steps ahead
   into L1 (see attn__micro_wide). mr, nv, pf and bpf are constants at
   every call site; the loops run to the largest values and test them, so that a compiler that
   optimises this function before inlining it (clang) still unrolls them and keeps acc in registers
   (with `i < mr` as the bound, clang 14 left acc in memory in the WebAssembly build). */
#define ATTN__FOR_ROWS(i) ATTN__UNROLL for (i = 0; i < ATTN__MAXMR; i++) if (i < mr)
#define ATTN__FOR_VECS(j) ATTN__UNROLL for (j = 0; j < ATTN__NV; j++) if (j < nv)
ATTN__INLINE void attn__micro(int mr, int nv, int kc, const attn_float *a, size_t rs, size_t cs,
                              const attn_float *b, size_t bs, attn_float *C, size_t ldc,
                              attn_float alpha, attn_float beta, int stream, int pf, int bpf)
{
    attn__v acc[ATTN__MAXMR][ATTN__NV], bv[ATTN__NV], va, vb;
    int p, i, j;
    ATTN__FOR_ROWS(i) ATTN__FOR_VECS(j) acc[i][j] = attn__vset1(0);
    ATTN__KUNROLL for (p = 0; p < kc; p++, a += cs, b += bs) {
        ATTN__FOR_VECS(j) bv[j] = attn__vload(b + j * ATTN__VW);
        if (pf) ATTN__PREFETCH_L2(a + pf);
        if (bpf) ATTN__FOR_VECS(j) ATTN__PREFETCH_L1(b + bpf * bs + j * ATTN__VW);
        ATTN__FOR_ROWS(i) {
            attn__v av = attn__vset1(a[i * rs]);
            ATTN__FOR_VECS(j) acc[i][j] = attn__vfma(av, bv[j], acc[i][j]);
        }
    }
    va = attn__vset1(alpha); /* only now: inside the loop every register holds the tile */
    vb = attn__vset1(beta);
    ATTN__FOR_ROWS(i) ATTN__FOR_VECS(j) { /* alpha = 1, as most calls: no multiply */
        attn_float *c = C + i * ldc + j * ATTN__VW;
        attn__v t = alpha == 1 ? acc[i][j] : attn__vmul(va, acc[i][j]);
        if (stream) attn__vstream(c, t); /* beta = 0 */
        else attn__vstore(c, beta == 0 ? t : attn__vfma(vb, attn__vload(c), t));
    }
}
#undef ATTN__FOR_ROWS
#undef ATTN__FOR_VECS

/* The micro-kernels of this ISA: packed A and B; A read in place ("_s", strided), wide or narrow;
   A and B in place ("_sb"); packed A with a last panel one vector wide ("narrow_p"). Separate
   instantiations keep the packed strides compile-time constants (a runtime B stride slows the
   packed loops). The "_t" kernels read a transposed A in place whose rows are a page or more apart:
   a depth step's row of A is a new page, where the hardware prefetchers see no stream, so each step
   asks for the line to the right of the one it reads, which the tiles after this one will read,
   into L2 (into L1 it did worse; on rows closer together the request only costs). The packed kernel
   asks for B's row ATTN__BPF depth steps ahead into L1: a panel 1024 deep is 128 KB, four times the
   L1, and every row tile reads it again (A's panel is not asked for: that cost more than it
   gave). */
#define ATTN__MICRO_DEF(name, MR_, NV_, RS, CS, BS, PF, BPF)                                      \
    static void name(int kc, const attn_float *a, size_t rs, size_t cs, const attn_float *b,      \
                     size_t bs, attn_float *C, size_t ldc, attn_float alpha, attn_float beta,    \
                     int stream)                                                                  \
    {                                                                                             \
        (void)rs; (void)cs; (void)bs;                                                             \
        attn__micro(MR_, NV_, kc, a, RS, CS, b, BS, C, ldc, alpha, beta, stream, PF, BPF);        \
    }
/*              name                  rows        vectors   A strides    B stride     A ahead     B ahead */
ATTN__MICRO_DEF(attn__micro_wide,      ATTN__MR,   ATTN__NV, 1, ATTN__MR, ATTN__MAXNR, 0,          ATTN__BPF)
ATTN__MICRO_DEF(attn__micro_wide_s,    ATTN__MR_S, ATTN__NV, rs, cs,      ATTN__MAXNR, 0,          0)
ATTN__MICRO_DEF(attn__micro_narrow_s,  ATTN__MR_S, 1,        rs, cs,      ATTN__VW,    0,          0)
ATTN__MICRO_DEF(attn__micro_narrow_t,  ATTN__MR_S, 1,        1, cs,       ATTN__VW,    ATTN__LINE, 0)
ATTN__MICRO_DEF(attn__micro_wide_t,    ATTN__MR_S, ATTN__NV, 1, cs,       ATTN__MAXNR, ATTN__LINE, 0)
ATTN__MICRO_DEF(attn__micro_wide_sb,   ATTN__MR_S, ATTN__NV, rs, cs,      bs,          0,          0)
ATTN__MICRO_DEF(attn__micro_narrow_sb, ATTN__MR_S, 1,        rs, cs,      bs,          0,          0)
ATTN__MICRO_DEF(attn__micro_narrow_p,  ATTN__MR,   1,        1, ATTN__MR, ATTN__MAXNR, 0,          0)

/* C[mr, nr] (row stride ldc) = alpha tile + beta C, tile with row stride nrp; beta = 0 reads no C. */
static void attn__tile_store(const attn_float *tile, int nrp, attn_float *C, int ldc, int mr, int nr,
                             attn_float alpha, attn_float beta)
{
    attn__v va = attn__vset1(alpha), vb = attn__vset1(beta);
    int i, j;
    for (i = 0; i < mr; i++, tile += nrp, C += ldc) {
        for (j = 0; j + ATTN__VW <= nr; j += ATTN__VW) {
            attn__v t = attn__vmul(va, attn__vload(tile + j));
            attn__vstore(C + j, beta == 0 ? t : attn__vfma(vb, attn__vload(C + j), t));
        }
        for (; j < nr; j++) C[j] = beta == 0 ? alpha * tile[j] : alpha * tile[j] + beta * C[j];
    }
}

/* Asks for the lines of a C tile before the micro-kernel needs them (rows are ldc apart, so the
   hardware prefetchers do not find them). */
static void attn__prefetch_tile(const attn_float *C, int ldc, int mr, int nr)
{
#if defined(__GNUC__)
    int i, j;
    for (i = 0; i < mr; i++, C += ldc)
        for (j = 0; j < nr; j += ATTN__LINE) __builtin_prefetch(C + j, 1, 3);
    __builtin_prefetch(C - ldc + nr - 1, 1, 3);
#else
    (void)C; (void)ldc; (void)mr; (void)nr;
#endif
}

/* dst[p * ldd + i] = src[i * lds + p] for i < m, p < n: a transposed copy. Where AVX is there, 8 x 8
   blocks go through registers (8 loads, 24 shuffles, 8 stores for 64 values read one by one and
   ldd apart otherwise; the loops unrolled, or gcc keeps the block on the stack): the small
   products with B transposed. */
#if defined(ATTN__AVX512) || defined(ATTN__AVX2)
ATTN__INLINE void attn__transpose8(const float *src, size_t lds, float *dst, size_t ldd)
{
    __m256 r[8], t[8];
    int k;
    ATTN__UNROLL for (k = 0; k < 8; k++) r[k] = _mm256_loadu_ps(src + k * lds);
    ATTN__UNROLL for (k = 0; k < 8; k += 2) { /* rows k, k+1 interleaved: lanes 0 1 | 4 5, then 2 3 | 6 7 */
        t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
        t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
    }
    ATTN__UNROLL for (k = 0; k < 8; k += 4) { /* columns 0, 1, 2, 3 of four rows, one per 128-bit half */
        r[k] = _mm256_shuffle_ps(t[k], t[k + 2], 0x44);
        r[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], 0xee);
        r[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0x44);
        r[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0xee);
    }
    ATTN__UNROLL for (k = 0; k < 4; k++) { /* low halves of rows 0-3 and 4-7: column k; high: k + 4 */
        _mm256_storeu_ps(dst + k * ldd, _mm256_permute2f128_ps(r[k], r[k + 4], 0x20));
        _mm256_storeu_ps(dst + (k + 4) * ldd, _mm256_permute2f128_ps(r[k], r[k + 4], 0x31));
    }
}
#endif
static void attn__transpose(int m, int n, const attn_float *src, size_t lds, attn_float *dst, size_t ldd)
{
    int i = 0, p;
#if defined(ATTN__AVX512) || defined(ATTN__AVX2)
    int k;
    for (; i + 8 <= m; i += 8) {
        for (p = 0; p + 8 <= n; p += 8) attn__transpose8(src + i * lds + p, lds, dst + p * ldd + i, ldd);
        for (; p < n; p++)
            for (k = 0; k < 8; k++) dst[p * ldd + i + k] = src[(i + k) * lds + p];
    }
    for (; i + 4 <= m; i += 4) { /* four rows (a head's dh = 4), 4 x 4 blocks */
        for (p = 0; p + 4 <= n; p += 4) {
            __m128 r0 = _mm_loadu_ps(src + i * lds + p), r1 = _mm_loadu_ps(src + (i + 1) * lds + p),
                   r2 = _mm_loadu_ps(src + (i + 2) * lds + p), r3 = _mm_loadu_ps(src + (i + 3) * lds + p);
            _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
            _mm_storeu_ps(dst + p * ldd + i, r0);
            _mm_storeu_ps(dst + (p + 1) * ldd + i, r1);
            _mm_storeu_ps(dst + (p + 2) * ldd + i, r2);
            _mm_storeu_ps(dst + (p + 3) * ldd + i, r3);
        }
        for (; p < n; p++)
            for (k = 0; k < 4; k++) dst[p * ldd + i + k] = src[(i + k) * lds + p];
    }
#endif
    for (; i < m; i++)
        for (p = 0; p < n; p++) dst[p * ldd + i] = src[i * lds + p];
}

/* Packs op(A)[i0 .. i0+mc, p0 .. p0+kc] into MR-row panels (see above). A transposed A is copied
   row by row, each row's mc values into all the panels (panel by panel, every line of a row was
   fetched once per panel), asking for the row ATTN__PACK_AHEAD rows on, which the hardware
   prefetchers do not find lda apart. */
#define ATTN__PACK_AHEAD 8
static void attn__pack_a(int trans, const attn_float *A, int lda, int i0, int mc, int p0, int kc,
                         int mr, attn_float *dst)
{
    int ip, i, p;
    for (ip = 0; ip < mc; ip += mr) /* the zero rows of a partial last panel */
        if (mc - ip < mr) memset(dst + (size_t)ip * kc, 0, sizeof(attn_float) * (size_t)mr * kc);
    if (!trans) { /* op(A)[i, p] = A[i * lda + p] */
        for (ip = 0; ip < mc; ip += mr)
            attn__transpose(ATTN__MIN(mr, mc - ip), kc, A + (size_t)(i0 + ip) * lda + p0, (size_t)lda,
                            dst + (size_t)ip * kc, (size_t)mr);
        return;
    }
    for (p = 0; p < kc; p++) { /* op(A)[i, p] = A[p * lda + i]: row p of A, mc values */
        const attn_float *src = A + (size_t)(p0 + p) * lda + i0;
        attn_float *d = dst + (size_t)p * mr;
#if defined(__GNUC__)
        if (p + ATTN__PACK_AHEAD < kc) {
            __builtin_prefetch(src + (size_t)ATTN__PACK_AHEAD * lda, 0, 3);
            __builtin_prefetch(src + (size_t)ATTN__PACK_AHEAD * lda + mc - 1, 0, 3);
        }
#endif
        for (ip = 0; ip + mr <= mc; ip += mr, d += (size_t)mr * kc) {
            if (mr == ATTN__MR) memcpy(d, src + ip, sizeof(attn_float) * ATTN__MR); /* inlined */
            else memcpy(d, src + ip, sizeof(attn_float) * (size_t)mr);
        }
        for (i = 0; ip + i < mc; i++) d[i] = src[ip + i];
    }
}

/* Packs op(B)[p0 .. p0+kc, j0 .. j0+nc] into NR-column panels. A row-major B is read row by row, each
   row once, whole, into all the panels (not panel by panel, which reads its rows in pieces once
   per panel). */
static void attn__pack_b(int trans, const attn_float *B, int ldb, int p0, int kc, int j0, int nc,
                         int nr, attn_float *dst)
{
    int jp, p, cols, full = nc / nr * nr;
    if (!trans) { /* op(B)[p, j] = B[p * ldb + j] */
        if (full < nc) memset(dst + (size_t)full * kc, 0, sizeof(attn_float) * (size_t)nr * kc);
        for (p = 0; p < kc; p++) {
            const attn_float *src = B + (size_t)(p0 + p) * ldb + j0;
            attn_float *d = dst + (size_t)p * nr;
            for (jp = 0; jp < full; jp += nr) { /* a constant size is inlined */
                attn_float *to = d + (size_t)jp * kc;
                if (nr == ATTN__MAXNR) memcpy(to, src + jp, sizeof(attn_float) * ATTN__MAXNR);
                else memcpy(to, src + jp, sizeof(attn_float) * (size_t)nr);
            }
            if (full < nc)
                memcpy(d + (size_t)full * kc, src + full, sizeof(attn_float) * (size_t)(nc - full));
        }
        return;
    }
    for (jp = 0; jp < nc; jp += nr, dst += (size_t)nr * kc) { /* op(B)[p, j] = B[j * ldb + p] */
        cols = ATTN__MIN(nr, nc - jp);
        if (cols < nr) memset(dst, 0, sizeof(attn_float) * (size_t)nr * kc);
        attn__transpose(cols, kc, B + (size_t)(j0 + jp) * ldb + p0, (size_t)ldb, dst, (size_t)nr);
    }
}

/* A barrier of attn_gemm's own team. With one thread there is no team, and no barrier: attn_gemm
   may be called from inside somebody else's parallel region, whose threads must not be waited for. */
static void attn__gemm_barrier(int nth)
{
#ifdef ATTN__OMP
    if (nth > 1) {
#pragma omp barrier
    }
#else
    (void)nth;
#endif
}

/* a / b, with no division instruction when b is 1 (one thread, one block: a small product's case,
   where the blocking's divisions would show) */
ATTN__INLINE long attn__div(long a, long b) { return b == 1 ? a : a / b; }

/* The kernel for a tile of rows x cols whose B rows are bs apart: the job's, except at the edges, where
   fewer rows or vectors do less wasted work: a last row tile of packed A of at most MR_S rows takes
   the in-place kernels' MR_S rows (reading the panel with strides 1, MR), and a last panel at most
   one vector wide takes a one-vector kernel. */
static attn__micro_fn attn__tile_micro(const attn__gemm_job *g, int rows, int cols, size_t bs)
{
    int few = !g->direct && ATTN__MR_S < ATTN__MR && rows <= ATTN__MR_S;
    int narrow = cols <= ATTN__VW && g->nr > ATTN__VW;
    if (narrow) return g->direct || few ? attn__micro_narrow_sb : attn__micro_narrow_p;
    if (few) return attn__micro_wide_s;
    return bs == (size_t)g->nr ? g->micro : g->micro_b;
}

/* The tiles of C's rows [ic, ic + mc) in panels [jr0, jr1) of the column block at jc (nc wide), over
   the depth block [pc, pc + kc): B's panels from bp (kc x nr each), A's from ap unless it is read in
   place, C = alpha op(A) op(B) + beta C. */
static void attn__gemm_tiles(const attn__gemm_job *g, int ic, int mc, int jc, int nc, int jr0, int jr1,
                             int pc, int kc, const attn_float *bp, attn_float *ap, attn_float beta)
{
    attn_float tile[ATTN__MAXMR * ATTN__MAXNR];
    int mr = g->mr, nr = g->nr, jr, ir;
    for (jr = jr0; jr < jr1; jr++)
        for (ir = 0; ir < mc; ir += mr) {
            int rows = ATTN__MIN(mr, mc - ir), cols = ATTN__MIN(nr, nc - jr * nr);
            const attn_float *at = ap + (size_t)ir * kc, *bt = bp + (size_t)jr * nr * kc;
            attn_float *c = g->C + (size_t)(ic + ir) * g->ldc + jc + jr * nr;
            size_t ars = 1, acs = (size_t)mr, bs = (size_t)nr;
            if (g->bdirect && cols == nr) { /* B read in place: op(B)[p, j] = B[p ldb + j] */
                bt = g->B + (size_t)pc * g->ldb + jc + jr * nr;
                bs = (size_t)g->ldb;
            }
            if (g->direct && rows == mr) { /* A read in place */
                at = g->A + (size_t)(ic + ir) * g->rs + (size_t)pc * g->cs;
                ars = g->rs;
                acs = g->cs;
            } else if (g->direct) { /* the last, partial row tile is packed */
                attn__pack_a(g->transA, g->A, g->lda, ic + ir, rows, pc, kc, mr, ap);
                at = ap;
            }
            attn__micro_fn micro = attn__tile_micro(g, rows, cols, bs);
            if (rows == mr && cols == nr) {
                if (!g->stream) attn__prefetch_tile(c, g->ldc, rows, cols);
                micro(kc, at, ars, acs, bt, bs, c, (size_t)g->ldc, g->alpha, beta, g->stream);
            } else { /* an edge tile: through a full-size buffer */
                micro(kc, at, ars, acs, bt, bs, tile, (size_t)nr, 1, 0, 0);
                attn__tile_store(tile, nr, c, g->ldc, rows, cols, g->alpha, beta);
            }
        }
}

/* Work item w: rows [*ic, *ic + *mc) of C and panels [*jr0, *jr1) of a column block of npan panels. */
static void attn__gemm_item(const attn__gemm_job *g, int w, int npan, int *ic, int *mc, int *jr0, int *jr1)
{
    int b = (int)attn__div(w, g->nsplit), s = w - b * g->nsplit, ic1;
    *ic = (int)attn__div((long)g->tiles * b, g->n_ic) * g->mr;
    ic1 = (int)attn__div((long)g->tiles * (b + 1), g->n_ic) * g->mr;
    *mc = ATTN__MIN(ic1, g->M) - *ic;
    *jr0 = (int)attn__div((long)npan * s, g->nsplit);
    *jr1 = (int)attn__div((long)npan * (s + 1), g->nsplit);
}

/* The block loops, run by thread tid of nth: column blocks of B (NC), depth blocks (KC), row blocks
   of A (MC), as BLIS does; with g->resident, each column block is packed at all its depths first,
   and each row block of C then takes the depth blocks in turn while it is in L2. B's panels are
   packed by all threads together; the (row block, column part) work items are split among them,
   in contiguous static chunks. */
static void attn__gemm_thread(const attn__gemm_job *g, int tid, int nth)
{
    attn_float *ap = g->apack + (size_t)g->MC * g->KC * tid;
    int nr = g->nr, jc, pc, w, ic, mc, jr0, jr1, nw = g->n_ic * g->nsplit;
    for (jc = 0; jc < g->N; jc += g->NC) {
        int nc = ATTN__MIN(g->NC, g->N - jc), npan = (nc + nr - 1) / nr;
        int jp = npan * tid / nth, jp1 = npan * (tid + 1) / nth; /* this thread's panels to pack */
        if (g->bdirect && jp < jp1) jp = nc % nr ? npan - 1 : npan; /* B in place: only a partial one */
        if (g->resident) {
            for (pc = 0; pc < g->K && jp < jp1; pc += g->KC) { /* depth block pc from pc npan nr on */
                int kc = ATTN__MIN(g->KC, g->K - pc);
                attn__pack_b(g->transB, g->B, g->ldb, pc, kc, jc + jp * nr, ATTN__MIN(nc, jp1 * nr) - jp * nr,
                             nr, g->bpack + (size_t)pc * npan * nr + (size_t)jp * nr * kc);
            }
            attn__gemm_barrier(nth);
            for (w = nw * tid / nth; w < nw * (tid + 1) / nth; w++) {
                attn__gemm_item(g, w, npan, &ic, &mc, &jr0, &jr1);
                for (pc = 0; pc < g->K; pc += g->KC)
                    attn__gemm_tiles(g, ic, mc, jc, nc, jr0, jr1, pc, ATTN__MIN(g->KC, g->K - pc),
                                     g->bpack + (size_t)pc * npan * nr, ap, pc == 0 ? g->beta : 1);
            }
            attn__gemm_barrier(nth); /* the B panels are about to be overwritten */
            continue;
        }
        for (pc = 0; pc < g->K; pc += g->KC) {
            int kc = ATTN__MIN(g->KC, g->K - pc);
            const attn_float *bp = g->panels ? g->panels + (size_t)pc * g->npad + (size_t)(g->pj0 + jc) * kc
                                             : g->bpack;
            if (jp < jp1 && !g->panels)
                attn__pack_b(g->transB, g->B, g->ldb, pc, kc, jc + jp * nr, ATTN__MIN(nc, jp1 * nr) - jp * nr,
                             nr, g->bpack + (size_t)jp * nr * kc);
            attn__gemm_barrier(nth);
            for (w = nw * tid / nth; w < nw * (tid + 1) / nth; w++) {
                attn__gemm_item(g, w, npan, &ic, &mc, &jr0, &jr1);
                if (jr0 < jr1 && !g->direct) attn__pack_a(g->transA, g->A, g->lda, ic, mc, pc, kc, g->mr, ap);
                attn__gemm_tiles(g, ic, mc, jc, nc, jr0, jr1, pc, kc, bp, ap, pc == 0 ? g->beta : 1);
            }
            attn__gemm_barrier(nth); /* the B panels are about to be overwritten */
        }
    }
    if (g->stream) ATTN__SFENCE(); /* this thread's streamed C before anything after the product */
}

/* Products too small to repay packing and a buffer (up to ATTN__SMALL_MACS with at most 4 rows, 8
   with B transposed: with more rows the packed kernels are faster), and
   matrix-vector products and rank-1 updates (M = 1 or K = 1: nothing to reuse, so packing only
   adds traffic) up to ATTN__THIN_MACS, whose rows are whole vectors: row by row
   C_i = beta C_i + alpha sum_p A_ip B_p (N >= ATTN__VW), or with B transposed (A not)
   C_ij = beta C_ij + alpha A_i . B_j (K >= ATTN__VW). Short rows (the head-mixing kinds' dh = 4)
   stay with the packed kernels. */
#define ATTN__SMALL_MACS 4096
#define ATTN__THIN_MACS (1 << 20)
static int attn__gemm_is_small(int transA, int transB, int M, int N, int K)
{
    size_t macs = (size_t)M * N * K;
    return ((macs <= ATTN__SMALL_MACS && M <= (transB ? 8 : 4)) ||
            ((M == 1 || K == 1) && macs <= ATTN__THIN_MACS)) &&
           (transB ? !transA && K >= ATTN__VW : N >= ATTN__VW);
}

/* The small products below read C (keep = 1, after C = beta C when beta is neither 0 nor 1) or
   ignore it (beta = 0, so whatever C holds, NaN included, is overwritten, as BLAS does). Every
   output keeps four independent chains of FMAs, so none waits on K dependent ones. */
#define ATTN__SMALL_C0(keep, p) ((keep) ? attn__vload(p) : attn__vset1(0))

/* C = keep C + alpha A op B for K = 1 (a rank-1 update): row i of C gains alpha a_i B[0, :]. */
static void attn__small_ger(int keep, int M, int N, attn_float alpha, const attn_float *a, size_t ars,
                            const attn_float *B, attn_float *C, int ldc)
{
    int i, j;
    for (i = 0; i < M; i++) {
        attn_float *c = C + (size_t)i * ldc, x = alpha * a[(size_t)i * ars];
        for (j = 0; j + ATTN__VW <= N; j += ATTN__VW)
            attn__vstore(c + j, attn__vfma(attn__vset1(x), attn__vload(B + j), ATTN__SMALL_C0(keep, c + j)));
        for (; j < N; j++) c[j] = x * B[j] + (keep ? c[j] : 0);
    }
}

/* sum_p alpha a_p B[p, 0 .. VW) for one vector of columns (B at its first), p split four ways. */
ATTN__INLINE attn__v attn__small_col(int K, attn_float alpha, const attn_float *a, size_t acs,
                                     const attn_float *b, int ldb)
{
    attn__v s0 = attn__vset1(0), s1 = s0, s2 = s0, s3 = s0;
    int p;
    for (p = 0; p + 4 <= K; p += 4, b += 4 * (size_t)ldb) {
        s0 = attn__vfma(attn__vset1(alpha * a[(size_t)p * acs]), attn__vload(b), s0);
        s1 = attn__vfma(attn__vset1(alpha * a[(size_t)(p + 1) * acs]), attn__vload(b + ldb), s1);
        s2 = attn__vfma(attn__vset1(alpha * a[(size_t)(p + 2) * acs]), attn__vload(b + 2 * (size_t)ldb), s2);
        s3 = attn__vfma(attn__vset1(alpha * a[(size_t)(p + 3) * acs]), attn__vload(b + 3 * (size_t)ldb), s3);
    }
    for (; p < K; p++, b += ldb) s0 = attn__vfma(attn__vset1(alpha * a[(size_t)p * acs]), attn__vload(b), s0);
    return attn__vadd(attn__vadd(s0, s1), attn__vadd(s2, s3));
}

/* One row of C, c = keep c + alpha sum_p a_p B[p, :] (N >= VW): four vectors of c share each
   broadcast a_p; a lone vector splits p four ways, and the columns after whole vectors come from
   one vector ending at N (each column's sum is formed the same way in any lane). */
static void attn__small_row(int keep, int N, int K, attn_float alpha, const attn_float *a, size_t acs,
                            const attn_float *B, int ldb, attn_float *c)
{
    attn_float t[ATTN__VW];
    int j, p;
    for (j = 0; j + 4 * ATTN__VW <= N; j += 4 * ATTN__VW) {
        attn__v c0 = ATTN__SMALL_C0(keep, c + j), c1 = ATTN__SMALL_C0(keep, c + j + ATTN__VW);
        attn__v c2 = ATTN__SMALL_C0(keep, c + j + 2 * ATTN__VW),
                c3 = ATTN__SMALL_C0(keep, c + j + 3 * ATTN__VW);
        for (p = 0; p < K; p++) {
            attn__v x = attn__vset1(alpha * a[(size_t)p * acs]);
            const attn_float *b = B + (size_t)p * ldb + j;
            c0 = attn__vfma(x, attn__vload(b), c0);
            c1 = attn__vfma(x, attn__vload(b + ATTN__VW), c1);
            c2 = attn__vfma(x, attn__vload(b + 2 * ATTN__VW), c2);
            c3 = attn__vfma(x, attn__vload(b + 3 * ATTN__VW), c3);
        }
        attn__vstore(c + j, c0);
        attn__vstore(c + j + ATTN__VW, c1);
        attn__vstore(c + j + 2 * ATTN__VW, c2);
        attn__vstore(c + j + 3 * ATTN__VW, c3);
    }
    for (; j + ATTN__VW <= N; j += ATTN__VW)
        attn__vstore(c + j,
                     attn__vadd(attn__small_col(K, alpha, a, acs, B + j, ldb), ATTN__SMALL_C0(keep, c + j)));
    if (j < N) { /* without keep, the overlap with the last whole vector is rewritten with the same values */
        attn__v last = attn__small_col(K, alpha, a, acs, B + N - ATTN__VW, ldb);
        if (!keep) {
            attn__vstore(c + N - ATTN__VW, last);
            return;
        }
        attn__vstore(t, last);
        for (; j < N; j++) c[j] += t[j - (N - ATTN__VW)];
    }
}

/* One row of C with B transposed, c_j = keep c_j + alpha a . B[j, :] (a contiguous): four dot
   products share each load of a. */
static void attn__small_dots(int keep, int N, int K, attn_float alpha, const attn_float *a,
                             const attn_float *B, int ldb, attn_float *c)
{
    int j, p;
    for (j = 0; j + 4 <= N; j += 4) {
        const attn_float *b0 = B + (size_t)j * ldb, *b1 = b0 + ldb, *b2 = b1 + ldb, *b3 = b2 + ldb;
        attn__v d0 = attn__vset1(0), d1 = d0, d2 = d0, d3 = d0;
        attn_float t[4];
        for (p = 0; p + ATTN__VW <= K; p += ATTN__VW) {
            attn__v x = attn__vload(a + p);
            d0 = attn__vfma(x, attn__vload(b0 + p), d0);
            d1 = attn__vfma(x, attn__vload(b1 + p), d1);
            d2 = attn__vfma(x, attn__vload(b2 + p), d2);
            d3 = attn__vfma(x, attn__vload(b3 + p), d3);
        }
        for (attn__vhsum4(d0, d1, d2, d3, t); p < K; p++) {
            t[0] += a[p] * b0[p]; t[1] += a[p] * b1[p]; t[2] += a[p] * b2[p]; t[3] += a[p] * b3[p];
        }
        c[j] = alpha * t[0] + (keep ? c[j] : 0);
        c[j + 1] = alpha * t[1] + (keep ? c[j + 1] : 0);
        c[j + 2] = alpha * t[2] + (keep ? c[j + 2] : 0);
        c[j + 3] = alpha * t[3] + (keep ? c[j + 3] : 0);
    }
    for (; j < N; j++) {
        const attn_float *b = B + (size_t)j * ldb;
        attn__v d = attn__vset1(0);
        attn_float t;
        for (p = 0; p + ATTN__VW <= K; p += ATTN__VW)
            d = attn__vfma(attn__vload(a + p), attn__vload(b + p), d);
        for (t = attn__vhsum(d); p < K; p++) t += a[p] * b[p];
        c[j] = alpha * t + (keep ? c[j] : 0);
    }
}

static void attn__gemm_small(int transA, int transB, int M, int N, int K, attn_float alpha,
                             const attn_float *A, int lda, const attn_float *B, int ldb,
                             attn_float beta, attn_float *C, int ldc)
{
    int i, keep = beta != 0;
    size_t ars = transA ? 1 : (size_t)lda, acs = transA ? (size_t)lda : 1;
    if (keep && beta != 1) attn__gemm_scale_c(M, N, beta, C, ldc);
    if (K == 1 && !transB) {
        attn__small_ger(keep, M, N, alpha, A, ars, B, C, ldc);
        return;
    }
    for (i = 0; i < M; i++)
        if (transB) attn__small_dots(keep, N, K, alpha, A + (size_t)i * ars, B, ldb, C + (size_t)i * ldc);
        else attn__small_row(keep, N, K, alpha, A + (size_t)i * ars, acs, B, ldb, C + (size_t)i * ldc);
}

#ifdef ATTN__SPREAD4
/* C = keep C + alpha A b for four columns (a head's P V at dh = 4), A [M, K] read in place by rows,
   b = op(B) [K, 4] contiguous: a vector holds four rows of b against A's four matching entries,
   each spread over four lanes; the lane groups are summed at the end of the row. */
static void attn__small_n4(int keep, int M, int K, attn_float alpha, const attn_float *A, int lda,
                           const attn_float *b, attn_float *C, int ldc)
{
    int i, j, p;
    for (i = 0; i < M; i++) {
        const attn_float *a = A + (size_t)i * lda;
        attn_float *c = C + (size_t)i * ldc, t[4];
        attn__v s0 = attn__vset1(0), s1 = s0;
        for (p = 0; p + 8 <= K; p += 8) {
            s0 = attn__vfma(attn__vspread4(a + p), attn__vload(b + 4 * p), s0);
            s1 = attn__vfma(attn__vspread4(a + p + 4), attn__vload(b + 4 * p + 16), s1);
        }
        for (; p + 4 <= K; p += 4) s0 = attn__vfma(attn__vspread4(a + p), attn__vload(b + 4 * p), s0);
        attn__vsum4(t, attn__vadd(s0, s1));
        for (; p < K; p++)
            for (j = 0; j < 4; j++) t[j] += a[p] * b[4 * p + j];
        for (j = 0; j < 4; j++) c[j] = alpha * t[j] + (keep ? c[j] : 0);
    }
}

/* C = keep C + alpha A^T b for four columns (a head's dV = P^T dO and dK = dS^T Q at dh = 4), A [K, M]
   read in place by rows, b = op(B) [K, 4] with row stride bs: a vector holds four rows of C, lane
   4j + r the sum over p of A[p, i + r] b[p, j] (A's four entries repeated, times b's row spread: one
   shuffle per p for all rows), transposed into rows at the end. 12 vectors (48 rows) stay in
   registers while p runs; the last M mod 4 rows are scalar (no C^T and scattered copy). */
static void attn__small_t4(int keep, int M, int K, attn_float alpha, const attn_float *A, int lda,
                           const attn_float *b, size_t bs, attn_float *C, int ldc)
{
    attn__v acc[12], va = attn__vset1(alpha);
    int i0, i, j, p, q, nq;
    for (i0 = 0; i0 + 4 <= M; i0 += 48) {
        nq = ATTN__MIN(12, (M - i0) / 4);
        for (q = 0; q < 12; q++) acc[q] = attn__vset1(0);
        for (p = 0; p < K; p++) {
            const attn_float *a = A + (size_t)p * lda + i0;
            attn__v x = attn__vspread4(b + p * bs);
            ATTN__UNROLL for (q = 0; q < 12; q++) if (q < nq)
                acc[q] = attn__vfma(attn__vbcast4(a + 4 * q), x, acc[q]);
        }
        ATTN__UNROLL for (q = 0; q < 12; q++) if (q < nq) {
            attn_float *c = C + (size_t)(i0 + 4 * q) * ldc;
            attn__v t = attn__vtr4(attn__vmul(va, acc[q]));
            attn__vstore4x4(c, (size_t)ldc, keep ? attn__vadd(t, attn__vload4x4(c, (size_t)ldc)) : t);
        }
    }
    for (i = M - M % 4; i < M; i++)
        for (j = 0; j < 4; j++) {
            attn_float t = 0;
            for (p = 0; p < K; p++) t += A[(size_t)p * lda + i] * b[p * bs + j];
            C[(size_t)i * ldc + j] = alpha * t + (keep ? C[(size_t)i * ldc + j] : 0);
        }
}
#endif

/* Short products, which packing would pad to whole panels and store through edge tiles: up to
   ATTN__SHORT_MACS, N < VW (a head's few columns: attention's dQ, dK, dV tiles), a transposed B
   with K < VW <= N (its dO V^T), or K <= 4 and N <= 3 VW (ATTN__K4: a narrow head's Q K^T). With
   N < VW, a transposed A (M >= VW) gives C^T = op(B)^T A row by row (attn__small_row reading A in
   place) into a scratch, added into C; a plain A (K >= VW) gives each C_ij as the dot product
   A_i . op(B)[:, j] (attn__small_dots, op(B) transposed into the scratch when B is not). With
   K < VW, op(B) (transposed into the scratch when B is) goes to attn__small_k4 or attn__small_row.
   Where AVX-512 spreads four floats over a vector, N = 4 goes to attn__small_n4 and _t4 instead. */
#define ATTN__SHORT_MACS 65536
#define ATTN__SHORT_FLOATS 4096
#define ATTN__K4(K, N) (ATTN__VREGS >= 32 && (K) <= 4 && (N) <= 3 * ATTN__VW) /* 4 x 3 vectors fit */
static int attn__gemm_is_short(int transA, int transB, int M, int N, int K)
{
    size_t macs = (size_t)M * N * K;
    if (macs > ATTN__SHORT_MACS) return 0;
    if (N < ATTN__VW)
        return transA ? M >= ATTN__VW && (size_t)M * N <= ATTN__SHORT_FLOATS
                      : K >= ATTN__VW && (size_t)N * K <= ATTN__SHORT_FLOATS;
    return K < ATTN__VW && (transB ? (size_t)K * N <= ATTN__SHORT_FLOATS : ATTN__K4(K, N));
}

/* One row of n columns, VW <= n <= 3 VW, held in one to three vectors: s0 at c, s1 at c + o1 (n > VW),
   s2 at c + o2 (n > 2 VW), with o1 = min(VW, n - VW) and o2 = n - VW (attn__small_k4, _ct4). */
ATTN__INLINE void attn__store3(attn_float *c, int n, attn__v s0, attn__v s1, attn__v s2)
{
    attn__vstore(c, s0);
    if (n > ATTN__VW) attn__vstore(c + ATTN__MIN(ATTN__VW, n - ATTN__VW), s1);
    if (n > 2 * ATTN__VW) attn__vstore(c + n - ATTN__VW, s2);
}

/* C = keep C + alpha op(A) B for K <= 4 and VW <= N <= 3 VW (ATTN__K4: a narrow head's Q K^T): B's K
   x N floats stay in 12 vector registers while the rows of A and C stream past. Columns [0, VW),
   then (N > VW) [o1, o1 + VW) with o1 = min(VW, N - VW), then (N > 2 VW) [N - VW, N): where they
   overlap, both vectors hold the same sums (each row's C is read before it is written), so the
   later store rewrites equal values. Rows p >= K are zero vectors and are never read from B. */
static void attn__small_k4(int keep, int M, int N, int K, attn_float alpha, const attn_float *A, size_t ars,
                           size_t acs, const attn_float *B, int ldb, attn_float *C, int ldc)
{
    int o1 = ATTN__MIN(ATTN__VW, N - ATTN__VW), o2 = N - ATTN__VW, i;
    const attn_float *B1 = B + (size_t)ldb, *B2 = B1 + ldb, *B3 = B2 + ldb;
    attn__v z = attn__vset1(0);
    attn__v b00 = attn__vload(B), b01 = attn__vload(B + o1), b02 = attn__vload(B + o2);
    attn__v b10 = K > 1 ? attn__vload(B1) : z, b11 = K > 1 ? attn__vload(B1 + o1) : z,
            b12 = K > 1 ? attn__vload(B1 + o2) : z;
    attn__v b20 = K > 2 ? attn__vload(B2) : z, b21 = K > 2 ? attn__vload(B2 + o1) : z,
            b22 = K > 2 ? attn__vload(B2 + o2) : z;
    attn__v b30 = K > 3 ? attn__vload(B3) : z, b31 = K > 3 ? attn__vload(B3 + o1) : z,
            b32 = K > 3 ? attn__vload(B3 + o2) : z;
    for (i = 0; i < M; i++) {
        const attn_float *a = A + (size_t)i * ars;
        attn_float *c = C + (size_t)i * ldc;
        attn__v x0 = attn__vset1(alpha * a[0]), x1 = attn__vset1(K > 1 ? alpha * a[acs] : 0);
        attn__v x2 = attn__vset1(K > 2 ? alpha * a[2 * acs] : 0);
        attn__v x3 = attn__vset1(K > 3 ? alpha * a[3 * acs] : 0);
        attn__v s0 = ATTN__SMALL_C0(keep, c), s1 = ATTN__SMALL_C0(keep, c + o1);
        attn__v s2 = ATTN__SMALL_C0(keep, c + o2);
        s0 = attn__vfma(x3, b30, attn__vfma(x2, b20, attn__vfma(x1, b10, attn__vfma(x0, b00, s0))));
        if (N > ATTN__VW)
            s1 = attn__vfma(x3, b31, attn__vfma(x2, b21, attn__vfma(x1, b11, attn__vfma(x0, b01, s1))));
        if (N > 2 * ATTN__VW)
            s2 = attn__vfma(x3, b32, attn__vfma(x2, b22, attn__vfma(x1, b12, attn__vfma(x0, b02, s2))));
        attn__store3(c, N, s0, s1, s2);
    }
}

/* Ct [n, M] = alpha op(B)^T A for n <= 4 and VW <= M <= 3 VW (ATTN__K4(n, M): a narrow head's dV =
   P^T dO and dK = dS^T Q), A [K, M] read by rows (lda), op(B)[p, j] = b[p bp + j bj]: each row of A
   is loaded once (three vectors as in attn__small_k4) for all four rows of Ct, whose 12 sums stay
   in registers; rows j >= n are computed from zero broadcasts and dropped. */
static void attn__small_ct4(int n, int M, int K, attn_float alpha, const attn_float *b, size_t bp,
                            size_t bj, const attn_float *A, int lda, attn_float *Ct)
{
    int o1 = ATTN__MIN(ATTN__VW, M - ATTN__VW), o2 = M - ATTN__VW, p;
    attn__v z = attn__vset1(0), va = attn__vset1(alpha);
    attn__v c00 = z, c01 = z, c02 = z, c10 = z, c11 = z, c12 = z, c20 = z, c21 = z, c22 = z, c30 = z, c31 = z,
            c32 = z;
    for (p = 0; p < K; p++) {
        const attn_float *a = A + (size_t)p * lda, *bb = b + (size_t)p * bp;
        attn__v a0 = attn__vload(a), a1 = attn__vload(a + o1), a2 = attn__vload(a + o2);
        attn__v x0 = attn__vset1(bb[0]), x1 = attn__vset1(n > 1 ? bb[bj] : 0);
        attn__v x2 = attn__vset1(n > 2 ? bb[2 * bj] : 0), x3 = attn__vset1(n > 3 ? bb[3 * bj] : 0);
        c00 = attn__vfma(x0, a0, c00); c10 = attn__vfma(x1, a0, c10);
        c20 = attn__vfma(x2, a0, c20); c30 = attn__vfma(x3, a0, c30);
        if (M > ATTN__VW) {
            c01 = attn__vfma(x0, a1, c01); c11 = attn__vfma(x1, a1, c11);
            c21 = attn__vfma(x2, a1, c21); c31 = attn__vfma(x3, a1, c31);
        }
        if (M > 2 * ATTN__VW) {
            c02 = attn__vfma(x0, a2, c02); c12 = attn__vfma(x1, a2, c12);
            c22 = attn__vfma(x2, a2, c22); c32 = attn__vfma(x3, a2, c32);
        }
    }
    attn__store3(Ct, M, attn__vmul(va, c00), attn__vmul(va, c01), attn__vmul(va, c02));
    if (n > 1) attn__store3(Ct + M, M, attn__vmul(va, c10), attn__vmul(va, c11), attn__vmul(va, c12));
    if (n > 2) attn__store3(Ct + 2 * M, M, attn__vmul(va, c20), attn__vmul(va, c21), attn__vmul(va, c22));
    if (n > 3) attn__store3(Ct + 3 * M, M, attn__vmul(va, c30), attn__vmul(va, c31), attn__vmul(va, c32));
}

/* op(B) [K, N] into dst with rows of N floats (one memcpy when B is plain and already so). */
static void attn__gemm_opb_rows(int transB, int K, int N, const attn_float *B, int ldb, attn_float *dst)
{
    int p;
    if (transB) attn__transpose(N, K, B, (size_t)ldb, dst, (size_t)N);
    else if (ldb == N) memcpy(dst, B, sizeof(attn_float) * (size_t)K * N);
    else
        for (p = 0; p < K; p++)
            memcpy(dst + (size_t)p * N, B + (size_t)p * ldb, sizeof(attn_float) * (size_t)N);
}

static void attn__gemm_short(int transA, int transB, int M, int N, int K, attn_float alpha,
                             const attn_float *A, int lda, const attn_float *B, int ldb,
                             attn_float beta, attn_float *C, int ldc)
{
    attn_float raw[ATTN__SHORT_FLOATS + ATTN_ALIGN / sizeof(attn_float)], *buf = attn__align_ptr(raw, 0);
    int i, j, keep = beta != 0;
    if (keep && beta != 1) attn__gemm_scale_c(M, N, beta, C, ldc);
#ifdef ATTN__SPREAD4
    if (N == 4) { /* op(B) [K, 4]: B itself (transA, B plain), else rows in the scratch (aligned: faster
                     than B in place for P V) */
        if (transA && !transB) attn__small_t4(keep, M, K, alpha, A, lda, B, (size_t)ldb, C, ldc);
        else {
            attn__gemm_opb_rows(transB, K, 4, B, ldb, buf);
            if (transA) attn__small_t4(keep, M, K, alpha, A, lda, buf, 4, C, ldc);
            else attn__small_n4(keep, M, K, alpha, A, lda, buf, C, ldc);
        }
        return;
    }
#endif
    if (N < ATTN__VW && transA) { /* Ct [N, M]: Ct[j, :] = alpha sum_p op(B)[p, j] A[p, :] */
        if (ATTN__K4(N, M))
            attn__small_ct4(N, M, K, alpha, B, transB ? 1 : (size_t)ldb, transB ? (size_t)ldb : 1, A, lda,
                            buf);
        else
            for (j = 0; j < N; j++)
                attn__small_row(0, M, K, alpha, transB ? B + (size_t)j * ldb : B + j,
                                transB ? 1 : (size_t)ldb, A, lda, buf + (size_t)j * M);
        for (i = 0; i < M; i++)
            for (j = 0; j < N; j++) {
                attn_float *c = C + (size_t)i * ldc + j;
                *c = buf[(size_t)j * M + i] + (keep ? *c : 0);
            }
        return;
    }
    if (N < ATTN__VW) { /* C_ij = alpha A_i . op(B)^T_j, op(B)^T [N, K] */
        const attn_float *Bt = B;
        int ldt = ldb;
        if (!transB) {
            attn__transpose(K, N, B, (size_t)ldb, buf, (size_t)K);
            Bt = buf; ldt = K;
        }
        for (i = 0; i < M; i++)
            attn__small_dots(keep, N, K, alpha, A + (size_t)i * lda, Bt, ldt, C + (size_t)i * ldc);
        return;
    }
    if (transB) { /* op(B) [K, N] = B^T */
        attn__gemm_opb_rows(1, K, N, B, ldb, buf);
        B = buf; ldb = N;
    }
    if (ATTN__K4(K, N)) {
        attn__small_k4(keep, M, N, K, alpha, A, transA ? 1 : (size_t)lda, transA ? (size_t)lda : 1, B, ldb, C,
                       ldc);
        return;
    }
    for (i = 0; i < M; i++)
        attn__small_row(keep, N, K, alpha, transA ? A + i : A + (size_t)i * lda, transA ? (size_t)lda : 1,
                        B, ldb, C + (size_t)i * ldc);
}

/* The packing buffer of a product on nth threads: the largest blocks' (see attn__gemm_packed). */
static size_t attn__gemm_need(int nth)
{
    size_t mc = (size_t)ATTN__MAX(ATTN__MC, ATTN__MAXMR);
    return sizeof(attn_float) * ATTN__KC * ((size_t)ATTN__NC + mc * (size_t)nth) + ATTN_ALIGN;
}

/* A small product (up to ATTN__SHORT_MACS) of whole tiles with A read in place, on one thread: the
   tiles one after the other over the whole depth, B in place or packed into a scratch on the stack;
   no blocking and no buffer. Returns 0, having done nothing, for any other product. */
static int attn__gemm_whole_tiles(const attn__gemm_job *g)
{
    attn_float raw[ATTN__SHORT_FLOATS + ATTN_ALIGN / sizeof(attn_float)], *bp = attn__align_ptr(raw, 0);
    size_t bs;
    attn__micro_fn micro;
    int i, j;
    if (!g->direct || (size_t)g->M * g->N * g->K > ATTN__SHORT_MACS || g->M % g->mr || g->N % g->nr ||
        (!g->bdirect && (size_t)g->K * g->N > ATTN__SHORT_FLOATS))
        return 0;
    bs = g->bdirect ? (size_t)g->ldb : (size_t)g->nr;
    micro = bs == (size_t)g->nr ? g->micro : g->micro_b;
    if (!g->bdirect) attn__pack_b(g->transB, g->B, g->ldb, 0, g->K, 0, g->N, g->nr, bp);
    for (i = 0; i < g->M; i += g->mr)
        for (j = 0; j < g->N; j += g->nr)
            micro(g->K, g->A + (size_t)i * g->rs, g->rs, g->cs, g->bdirect ? g->B + j : bp + (size_t)j * g->K,
                  bs, g->C + (size_t)i * g->ldc + j, (size_t)g->ldc, g->alpha, g->beta, 0);
    return 1;
}

/* Equal depth blocks of at most kc: their depth. */
static int attn__depth_blocks(int K, int kc)
{
    int nkc = (K + kc - 1) / kc;
    return (int)attn__div(K + nkc - 1, nkc);
}

/* The blocking of a job whose operands are set, and its run on nth threads. Returns 0, having done
   nothing, when there is no memory for the packing buffer. */
static int attn__gemm_run(attn__gemm_job *g, int nth)
{
    void *owned;
    /* Two depth blocks or more (K >= 2 KC) with A read in place: each column block of ATTN__RNC
       columns is packed at all depths at once, in blocks ATTN__RKC deep, and each row block of C
       takes them in turn, so that C stays in L2 over the depth and B's panel (32 KB) is L1-sized
       (BLIS's blocking for a small L2); otherwise a large C goes back to memory between depth blocks.
       Not below 2 KC (two blocks of 768 lost), and not with A packed (transposed), which would be
       repacked for every column block. */
    g->resident = ATTN__RNC && g->direct && !g->bdirect && !g->panels && g->K >= 2 * ATTN__KC &&
                  (size_t)g->K * ATTN__RNC <= (size_t)ATTN__KC * ATTN__NC;
    g->KC = attn__depth_blocks(g->K, g->resident ? ATTN__RKC : ATTN__KC);
    /* A large C written once (one depth block, beta 0) goes past the caches: it would only evict what
       they hold, and a store that misses first reads the line. Below ATTN__STREAM_BYTES C stays in
       cache for its reader. Only for C on cache lines (64 bytes, as arenas and attn_params hand out;
       rows too): streaming half-written lines is slower than not streaming. */
    g->stream = ATTN__STREAMS && g->beta == 0 && g->K <= ATTN__KC &&
                (double)g->M * g->N * sizeof(attn_float) > ATTN__STREAM_BYTES &&
                (uintptr_t)g->C % 64 == 0 && (size_t)g->ldc * sizeof(attn_float) % 64 == 0;
    g->NC = g->resident  ? ATTN__RNC
            : g->N >= ATTN__NC ? ATTN__NC
                               : ((g->N + g->nr - 1) / g->nr) * g->nr; /* no overflow at INT_MAX */
    {   /* row blocks: whole MR tiles, as equal as possible, their count a multiple of the threads */
        /* (divisions by the constants, not by g->mr: a division instruction is 10-20 cycles) */
        int tiles = g->direct ? (g->M + ATTN__MR_S - 1) / ATTN__MR_S : (g->M + ATTN__MR - 1) / ATTN__MR;
        int per = g->direct ? ATTN__MC / ATTN__MR_S : ATTN__MC / ATTN__MR;
        g->tiles = tiles;
        g->n_ic = tiles <= per ? 1 : (tiles + per - 1) / per;
        g->nsplit = g->n_ic < nth ? nth : 1; /* too few row blocks: split the columns too */
        if (g->nsplit == 1) g->n_ic = (int)attn__div(g->n_ic + nth - 1, nth) * nth;
        g->MC = (int)attn__div(tiles + g->n_ic - 1, g->n_ic) * g->mr; /* the largest: sizes the buffers */
        ATTN_ASSERT(g->MC >= g->mr && g->MC <= ATTN__MAX(ATTN__MC, g->mr));
    }
    /* the buffer for the largest blocks of nth threads, so that later products never grow it: the
       threads' A blocks first, then B's (a small product's packs stay close together) */
    g->apack = attn__gemm_buffer(attn__gemm_need(nth), &owned);
    if (!g->apack) return 0;
    g->bpack = attn__align_ptr(g->apack, sizeof(attn_float) * (size_t)g->MC * g->KC * nth);
#ifdef ATTN__OMP
    if (nth > 1) {
#pragma omp parallel num_threads(nth)
        attn__gemm_thread(g, omp_get_thread_num(), omp_get_num_threads());
    } else
#endif
        attn__gemm_thread(g, 0, 1);
    if (owned) ATTN_FREE(owned);
    return 1;
}

/* The threads for a product of M N K multiply-adds: one below ATTN__PAR_FLOPS. */
static int attn__gemm_threads(int M, int N, int K)
{
    return 2.0 * M * N * K >= ATTN__PAR_FLOPS ? attn_get_threads() : 1;
}

static void attn__gemm_packed(int transA, int transB, int M, int N, int K, attn_float alpha,
                              const attn_float *A, int lda, const attn_float *B, int ldb,
                              attn_float beta, attn_float *C, int ldc)
{
    attn__gemm_job g;
    int narrow = N <= ATTN__VW, nth = attn__gemm_threads(M, N, K);
    int far = transA && (size_t)lda * sizeof(attn_float) >= 4096; /* op(A)'s columns a page apart */
    int few_panels = (far || (size_t)K * lda <= ATTN__A_INPLACE) && N <= 8 * ATTN__NV * ATTN__VW;
    g.transA = transA; g.transB = transB; g.M = M; g.N = N; g.K = K;
    g.A = A; g.lda = lda; g.B = B; g.ldb = ldb; g.C = C; g.ldc = ldc; g.alpha = alpha; g.beta = beta;
    g.nr = narrow ? ATTN__VW : ATTN__NV * ATTN__VW;
    g.direct = narrow || !transA || (ATTN__AT_DIRECT && (K <= 128 || M <= 256 || few_panels)) ||
               (!ATTN__AT_DIRECT && N <= ATTN__NV * ATTN__VW); /* see ATTN__AT_DIRECT */
    g.mr = g.direct ? ATTN__MR_S : ATTN__MR;
    /* a small B with short rows is read in place: no packing at all. Long rows (ldb a large power of
       two) would put a panel's rows in the same few L1 sets, so the row stride is bounded too. */
    g.bdirect = g.direct && !transB && ldb <= 8 * g.nr && (size_t)K * ldb <= ATTN__B_INPLACE;
    g.micro = !g.direct ? attn__micro_wide : far ? (narrow ? attn__micro_narrow_t : attn__micro_wide_t)
                                           : narrow ? attn__micro_narrow_s : attn__micro_wide_s;
    g.micro_b = narrow ? attn__micro_narrow_sb : attn__micro_wide_sb;
    g.rs = transA ? 1 : (size_t)lda;
    g.cs = transA ? (size_t)lda : 1;
    g.panels = NULL;
    if (nth == 1 && attn__gemm_whole_tiles(&g)) return;
    if (!attn__gemm_run(&g, nth))
        attn_gemm_reference(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* A product of a few rows (below) and many columns, whose B is not small
   enough to be read in place: every packed element of B would serve only M / MR_S row tiles, so
   packing B costs about as much as the products. Computed transposed instead, C^T = op(B)^T op(A)^T,
   in chunks of columns: op(B) becomes the A of a product read in place and op(A) its narrow B; each
   chunk of C^T (on the stack) is transposed into C: the weight gradients of narrow heads (the HYLA
   paper's fuzzy model: eight heads of 2) and the linear layers of a short sentence (a transposed B
   of 384 x 384 packed for 15 rows). With 16-float vectors it takes one or two whole vectors of rows,
   or more than half of one (M = 8 gains nothing); with 4 and 8 floats any M up to 32. Small
   products (up to ATTN__SHORT_MACS) keep their whole tiles. */
static int attn__gemm_is_few_rows(int transB, int M, int N, int K, int ldb)
{
    int rows = ATTN__VW >= 16 ? (M % ATTN__VW == 0 && M <= 2 * ATTN__VW) || (2 * M > ATTN__VW && M < ATTN__VW)
                              : M <= 32;
    return rows && N >= 4 * ATTN__VW &&
           (size_t)M * N * K > ATTN__SHORT_MACS &&
           (transB || ldb > 8 * ATTN__NV * ATTN__VW || (size_t)K * ldb > ATTN__B_INPLACE);
}

/* The products that do not need few_rows' transposition: small, short, or packed. */
static void attn__gemm_core(int transA, int transB, int M, int N, int K, attn_float alpha,
                            const attn_float *A, int lda, const attn_float *B, int ldb, attn_float beta,
                            attn_float *C, int ldc)
{
    if (attn__gemm_is_small(transA, transB, M, N, K))
        attn__gemm_small(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    else if (attn__gemm_is_short(transA, transB, M, N, K))
        attn__gemm_short(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    else attn__gemm_packed(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

static void attn__gemm_few_rows(int transA, int transB, int M, int N, int K, attn_float alpha,
                                const attn_float *A, int lda, const attn_float *B, int ldb,
                                attn_float beta, attn_float *C, int ldc)
{
    attn_float raw[2 * ATTN__SHORT_FLOATS + ATTN_ALIGN / sizeof(attn_float)];
    attn_float *ct = attn__align_ptr(raw, 0), *c = ct + ATTN__SHORT_FLOATS; /* chunk x M, M x chunk */
    int j, n, chunk = ATTN__SHORT_FLOATS / M;
    for (j = 0; j < N; j += chunk) {
        n = ATTN__MIN(chunk, N - j);
        attn__gemm_core(!transB, !transA, n, M, K, 1, transB ? B + (size_t)j * ldb : B + j, ldb, A, lda, 0,
                        ct, M);
        attn__transpose(n, M, ct, (size_t)M, c, (size_t)n);
        attn__tile_store(c, n, C + j, ldc, M, n, alpha, beta);
    }
}

/* op(B) [K, N] packed once for products that all read it (a head's keys and values, read by every
   query tile): the panels attn_gemm packs on each call, for one depth block after the other (npad =
   N rounded up to whole panels floats per depth row; the last panel zero-padded). */
#define ATTN__PANEL (ATTN__NV * ATTN__VW) /* columns per panel */
static size_t attn__panels_npad(int N) { return (size_t)(N + ATTN__PANEL - 1) / ATTN__PANEL * ATTN__PANEL; }
static void attn__panels_pack(int transB, const attn_float *B, int ldb, int K, int N, attn_float *dst)
{
    int KC = attn__depth_blocks(K, ATTN__KC), pc;
    for (pc = 0; pc < K; pc += KC)
        attn__pack_b(transB, B, ldb, pc, ATTN__MIN(KC, K - pc), 0, N, ATTN__PANEL,
                     dst + (size_t)pc * attn__panels_npad(N));
}

/* C [M, n] = alpha A op(B)[:, j0 .. j0 + n) + beta C, op(B) [K, N] packed by attn__panels_pack,
   A [M, K] row-major read in place. Returns 0, having done nothing, when j0 does not start a panel
   (NEON's panels are 12 columns wide, attention's key tiles start at multiples of 64) or there is
   no memory for the packing buffer (a last partial row tile is packed there). */
static int attn__gemm_panels(int M, int n, int K, attn_float alpha, const attn_float *A, int lda,
                             const attn_float *panels, int N, int j0, attn_float beta, attn_float *C, int ldc)
{
    attn__gemm_job g;
    if (j0 % ATTN__PANEL) return 0;
    memset(&g, 0, sizeof g);
    g.M = M; g.N = n; g.K = K; g.A = A; g.lda = lda; g.C = C; g.ldc = ldc; g.alpha = alpha; g.beta = beta;
    g.nr = ATTN__PANEL;
    g.direct = 1;
    g.mr = ATTN__MR_S;
    g.micro = attn__micro_wide_s; /* B is packed: micro_b is never taken */
    g.rs = (size_t)lda;
    g.cs = 1;
    g.panels = panels;
    g.npad = attn__panels_npad(N);
    g.pj0 = j0;
    return attn__gemm_run(&g, attn__gemm_threads(M, n, K));
}

/* Whether a linear layer's M rows [M, K] times W^T [K, N] read W's panels (attn_transformer_pack)
   rather than W in place: always with 16-float vectors; with 4 and 8 floats not where the few-rows
   transposition runs (it reads W as its A, faster there: 16 rows in the WebAssembly build). */
static int attn__panels_pay(int M, int N, int K)
{
    return ATTN__VW >= 16 || !attn__gemm_is_few_rows(1, M, N, K, K);
}

/* The product attn_gemm runs once its arguments are checked and C is not only scaled. */
static void attn__gemm_body(int transA, int transB, int M, int N, int K, attn_float alpha,
                            const attn_float *A, int lda, const attn_float *B, int ldb, attn_float beta,
                            attn_float *C, int ldc)
{
    if (!attn__gemm_is_small(transA, transB, M, N, K) && !attn__gemm_is_short(transA, transB, M, N, K) &&
        attn__gemm_is_few_rows(transB, M, N, K, ldb))
        attn__gemm_few_rows(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    else attn__gemm_core(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}
#endif
/* ---- end of per-ISA code ---- */
#ifndef ATTN__PASS

#if !defined(ATTN_USE_CBLAS)
/* The hand-written GEMM's entries from the shared code, and the panels of the attention engines
   (packed and read by the same ISA's kernels). */
#define ATTN__GEMM_KERNELS(X) X(gemm_body) X(gemm_need) X(panels_pack) X(gemm_panels) X(panels_pay)
ATTN__GEMM_KERNELS(ATTN__ISA_POINTER)

/* The floats attn__panels_pack writes for op(B) [K, N]: K rows of N rounded up to whole panels;
   under run-time dispatch to AVX-512's 32 columns, which every x86 ISA's panels divide, so that a
   workspace sized under one ISA holds another's. */
#ifdef ATTN__DISPATCH
static size_t attn__panels_floats(int K, int N) { return (size_t)K * (size_t)((N + 31) / 32 * 32); }
#else
static size_t attn__panels_floats(int K, int N) { return (size_t)K * attn__panels_npad(N); }
#endif

ATTNDEF void attn_gemm_release(void)
{
#ifndef ATTN__NO_TLS
    if (attn__gemm_scratch && !attn__gemm_scratch_lent) ATTN_FREE(attn__gemm_scratch);
    attn__gemm_scratch = NULL;
    attn__gemm_scratch_bytes = 0;
    attn__gemm_scratch_lent = 0;
#endif
}

ATTNDEF size_t attn_gemm_scratch_bytes(int threads)
{
    return ATTN__ISA(gemm_need)(threads > 1 ? threads : 1) + ATTN_ALIGN;
}

ATTNDEF attn_status attn_gemm_scratch(void *mem, size_t bytes)
{
#ifndef ATTN__NO_TLS
    if (mem && bytes < attn_gemm_scratch_bytes(1))
        return attn__fail(ATTN_ERR_ARG, "attn_gemm_scratch: %lu bytes, at least %lu needed",
                          (unsigned long)bytes, (unsigned long)attn_gemm_scratch_bytes(1));
    attn_gemm_release();
    if (mem) {
        attn__gemm_scratch = mem;
        attn__gemm_scratch_bytes = bytes - ATTN_ALIGN;
        attn__gemm_scratch_lent = 1;
    }
    return ATTN_OK;
#else
    (void)mem; (void)bytes;
    return attn__fail(ATTN_ERR_ARG, "attn_gemm_scratch: this compiler has no thread-local storage");
#endif
}
#else /* CBLAS: no packing buffer of ours; the "panels" are op(B) itself, row-major */
ATTNDEF void attn_gemm_release(void) {}
ATTNDEF size_t attn_gemm_scratch_bytes(int threads) { (void)threads; return 0; }
ATTNDEF attn_status attn_gemm_scratch(void *mem, size_t bytes) { (void)mem; (void)bytes; return ATTN_OK; }
static size_t attn__panels_floats(int K, int N) { return (size_t)K * N; }
static void attn__panels_pack(int transB, const attn_float *B, int ldb, int K, int N, attn_float *dst)
{
    int p, j;
    for (p = 0; p < K; p++)
        for (j = 0; j < N; j++)
            dst[(size_t)p * N + j] = transB ? B[(size_t)j * ldb + p] : B[(size_t)p * ldb + j];
}
static int attn__gemm_panels(int M, int n, int K, attn_float alpha, const attn_float *A, int lda,
                             const attn_float *panels, int N, int j0, attn_float beta, attn_float *C, int ldc)
{
    attn_gemm(0, 0, M, n, K, alpha, A, lda, panels + j0, N, beta, C, ldc);
    return 1;
}
static int attn__panels_pay(int M, int N, int K) { return (void)M, (void)N, (void)K, 1; }
#define ATTN__GEMM_KERNELS(X)
#ifdef ATTN__DISPATCH /* one version of each: the entries are the functions */
#define attn__isa_panels_pack attn__panels_pack
#define attn__isa_gemm_panels attn__gemm_panels
#define attn__isa_panels_pay attn__panels_pay
#endif
#endif

ATTNDEF void attn_gemm(int transA, int transB, int M, int N, int K, attn_float alpha,
                       const attn_float *A, int lda, const attn_float *B, int ldb, attn_float beta,
                       attn_float *C, int ldc)
{
    if (attn__gemm_bad_args(transA, transB, M, N, K, A, lda, B, ldb, C, ldc)) return;
    if (M == 0 || N == 0) return;
    if (K == 0 || alpha == 0) { attn__gemm_scale_c(M, N, beta, C, ldc); return; }
#if defined(ATTN_USE_CBLAS) && defined(ATTN_DOUBLE)
    cblas_dgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans, M, N,
                K, alpha, A, lda, B, ldb, beta, C, ldc);
#elif defined(ATTN_USE_CBLAS)
    cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans, M, N,
                K, alpha, A, lda, B, ldb, beta, C, ldc);
#else
    ATTN__ISA(gemm_body)(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
#endif
}

#endif /* shared code */

/* ---- per-ISA code ---- */

/* One step of SGD with momentum over n floats with gradient x g: b = mu b + x g (b = x g when
   mu = 0, whatever b held); w -= lr b. */
ATTN__INLINE void attn__sgd_row(attn_float *w, attn_float *b, const attn_float *g, attn_float x, size_t n,
                                attn_float lr, attn_float mu)
{
    attn__v vmu = attn__vset1(mu), vlr = attn__vset1(-lr), vx = attn__vset1(x);
    size_t i = 0;
    for (; i + ATTN__VW <= n; i += ATTN__VW) {
        attn__v v = attn__vmul(vx, attn__vload(g + i));
        if (mu != 0) v = attn__vfma(vmu, attn__vload(b + i), v);
        attn__vstore(b + i, v);
        attn__vstore(w + i, attn__vfma(vlr, v, attn__vload(w + i)));
    }
    for (; i < n; i++) {
        b[i] = mu == 0 ? x * g[i] : mu * b[i] + x * g[i];
        w[i] -= lr * b[i];
    }
}

/* The step for gradient g [n] (attn_sgd_step), and for a rank-1 gradient a g^T [m, n] taken row by
   row without forming it (the cisformer's fused backward over one window). */
static void attn__sgd_apply(attn_float *w, attn_float *b, const attn_float *g, size_t n, attn_float lr,
                            attn_float mu)
{
    attn__sgd_row(w, b, g, 1, n, lr, mu);
}
static void attn__sgd_outer(attn_float *w, attn_float *b, const attn_float *a, const attn_float *g, int m,
                            int n, attn_float lr, attn_float mu)
{
    int i;
    for (i = 0; i < m; i++) attn__sgd_row(w + (size_t)i * n, b + (size_t)i * n, g, a[i], (size_t)n, lr, mu);
}

/* The vector primitives (attn_dot ...): a SIMD body over whole vectors, then a scalar tail. */
static attn_float attn__dot(size_t n, const attn_float *x, const attn_float *y)
{
    attn__v s0 = attn__vset1(0), s1 = attn__vset1(0);
    attn_float s;
    size_t i = 0;
    for (; i + 2 * ATTN__VW <= n; i += 2 * ATTN__VW) {
        s0 = attn__vfma(attn__vload(x + i), attn__vload(y + i), s0);
        s1 = attn__vfma(attn__vload(x + i + ATTN__VW), attn__vload(y + i + ATTN__VW), s1);
    }
    for (; i + ATTN__VW <= n; i += ATTN__VW) s0 = attn__vfma(attn__vload(x + i), attn__vload(y + i), s0);
    for (s = attn__vhsum(attn__vadd(s0, s1)); i < n; i++) s += x[i] * y[i];
    return s;
}

static void attn__axpy(size_t n, attn_float a, const attn_float *x, attn_float *y)
{
    attn__v va = attn__vset1(a);
    size_t i = 0;
    for (; i + ATTN__VW <= n; i += ATTN__VW)
        attn__vstore(y + i, attn__vfma(va, attn__vload(x + i), attn__vload(y + i)));
    for (; i < n; i++) y[i] += a * x[i];
}

static void attn__scale(size_t n, attn_float a, attn_float *x)
{
    attn__v va = attn__vset1(a);
    size_t i = 0;
    for (; i + ATTN__VW <= n; i += ATTN__VW) attn__vstore(x + i, attn__vmul(va, attn__vload(x + i)));
    for (; i < n; i++) x[i] *= a;
}

/* out = x y elementwise (out may be x or y: x y in place) */
static void attn__mul(size_t n, const attn_float *x, const attn_float *y, attn_float *out)
{
    size_t i = 0;
    for (; i + ATTN__VW <= n; i += ATTN__VW)
        attn__vstore(out + i, attn__vmul(attn__vload(x + i), attn__vload(y + i)));
    for (; i < n; i++) out[i] = x[i] * y[i];
}

/* A block of rows x cols with row strides ldx and ldy: y += x (mul 0) or y = x y (mul 1), row by
   row, or as one row when both are contiguous (a tile as wide as its rows: no tail per row). */
static void attn__rows_op(int mul, size_t rows, size_t cols, const attn_float *x, size_t ldx, attn_float *y,
                          size_t ldy)
{
    size_t r;
    if (ldx == cols && ldy == cols) {
        cols *= rows;
        rows = 1;
    }
    for (r = 0; r < rows; r++)
        if (mul) attn__mul(cols, x + r * ldx, y + r * ldy, y + r * ldy);
        else attn__axpy(cols, 1, x + r * ldx, y + r * ldy);
}

static attn_float attn__max(size_t n, const attn_float *x)
{
    attn_float m = -INFINITY;
    size_t i = 0;
    if (n >= ATTN__VW) {
        attn__v vm = attn__vload(x);
        for (i = ATTN__VW; i + ATTN__VW <= n; i += ATTN__VW) vm = attn__vmax(vm, attn__vload(x + i));
        if (i < n) vm = attn__vmax(vm, attn__vload(x + n - ATTN__VW)); /* the tail, overlapping */
        m = attn__vhmax(vm);
        i = n;
    }
    for (; i < n; i++) m = x[i] > m ? x[i] : m;
    return m;
}

/* out = f(x) over the last n - i (< VW) entries through a zero-padded vector, so that every entry of
   an array goes through the same function whatever its position (libm's differs in the last bits). */
static void attn__vmap_tail(attn__v (*f)(attn__v), const attn_float *x, attn_float *out, size_t i, size_t n)
{
    attn_float t[ATTN__VW] = {0};
    if (i >= n) return;
    memcpy(t, x + i, (n - i) * sizeof *t);
    attn__vstore(t, f(attn__vload(t)));
    memcpy(out + i, t, (n - i) * sizeof *t);
}

static void attn__exp(size_t n, const attn_float *x, attn_float *out)
{
    size_t i = 0;
    for (; i + ATTN__VW <= n; i += ATTN__VW) attn__vstore(out + i, attn__vexp(attn__vload(x + i)));
    attn__vmap_tail(attn__vexp, x, out, i, n);
}

#if defined(ATTN__SCALAR)
ATTN__INLINE attn__v attn__vtanh(attn__v x) { return (attn_float)tanh(x); }
#else
/* Both branches for every lane, then a 0/1 blend s = [|x| >= 0.3] built from min/max: the odd
   polynomial p of x clamped to [-0.3, 0.3], and q = sign(x) (1 - 2e / (1 + e)) with e = exp(-2|x|)
   and |x| clamped to 10. Both are odd to the bit, so the result is too; past |x| = 9.03, 2e / (1 + e)
   is below half an ulp of 1, so q is exactly +-1 however the division rounds (-ffast-math's
   reciprocal included). */
ATTN__INLINE attn__v attn__vtanh(attn__v x)
{
    attn__v ax, xp, x2, p, e, q, s, sgn, one = attn__vset1(1.0f), big = attn__vset1(1e30f),
                                         neg = attn__vset1(-1.0f);
    x = attn__vmin(attn__vset1(10.0f), attn__vmax(attn__vset1(-10.0f), x)); /* NaN passes, and reaches q */
    ax = attn__vmax(x, attn__vmul(x, neg));
    sgn = attn__vmin(attn__vmax(attn__vmul(x, big), neg), one); /* +-1 unless |x| < 1e-30 (then s = 0) */
    xp = attn__vmin(attn__vmax(x, attn__vset1(-0.3f)), attn__vset1(0.3f));
    x2 = attn__vmul(xp, xp);
    p = attn__vfma(attn__vset1(62.0f / 2835), x2, attn__vset1(-17.0f / 315)); /* x - x^3/3 + 2x^5/15 - ... */
    p = attn__vfma(p, x2, attn__vset1(2.0f / 15));
    p = attn__vfma(p, x2, attn__vset1(-1.0f / 3));
    p = attn__vmul(xp, attn__vfma(p, x2, one));
    e = attn__vexp(attn__vmul(ax, attn__vset1(-2.0f)));
    q = attn__vmul(sgn, attn__vfma(attn__vdiv(attn__vadd(e, e), attn__vadd(one, e)), neg, one));
    s = attn__vmin(attn__vmax(attn__vmul(attn__vadd(ax, attn__vset1(-0.3f)), big), attn__vset1(0.0f)), one);
    return attn__vfma(s, attn__vadd(q, attn__vmul(p, neg)), p);
}
#endif

static void attn__tanh(size_t n, const attn_float *x, attn_float *out)
{
    size_t i = 0;
    for (; i + ATTN__VW <= n; i += ATTN__VW) attn__vstore(out + i, attn__vtanh(attn__vload(x + i)));
    attn__vmap_tail(attn__vtanh, x, out, i, n);
}

static attn_float attn__sum(size_t n, const attn_float *x)
{
    attn__v s0 = attn__vset1(0);
    attn_float s;
    size_t i = 0;
    for (; i + ATTN__VW <= n; i += ATTN__VW) s0 = attn__vadd(s0, attn__vload(x + i));
    for (s = attn__vhsum(s0); i < n; i++) s += x[i];
    return s;
}

/* w[i] = w[i] exp(x[i] - shift) for a 0/1 (or any) weight w; returns sum_i w[i]. The masked
   exponential of softmax-like rows: entries with w = 0 stay exactly 0. ones: w is all ones (a row
   that sees the whole tile), so it is not read and the multiply is skipped (the same values). */
static attn_float attn__exp_weighted(size_t n, const attn_float *x, attn_float shift, attn_float *w, int ones)
{
    attn__v vs = attn__vset1(shift), acc = attn__vset1(0), last = acc;
    attn_float sum, t[ATTN__VW];
    size_t i = 0, m = n - n % ATTN__VW;
    int tail = m < n && n >= ATTN__VW; /* a tail after whole vectors */
    if (tail) { /* the last VW entries, before the loop overwrites their front */
        last = attn__vexp_shifted(attn__vload(x + n - ATTN__VW), vs);
        if (!ones) last = attn__vmul(attn__vload(w + n - ATTN__VW), last);
    }
    for (; i < m; i += ATTN__VW) {
        attn__v e = attn__vexp_shifted(attn__vload(x + i), vs);
        if (!ones) e = attn__vmul(attn__vload(w + i), e);
        attn__vstore(w + i, e);
        acc = attn__vadd(acc, e);
    }
    sum = attn__vhsum(acc);
    if (tail) { /* the tail from that vector (libm's exp would cost far more an element) */
        attn__vstore(t, last);
        for (; i < n; i++) sum += (w[i] = t[i - (n - ATTN__VW)]);
    }
    for (; i < n; i++) /* rows shorter than a vector */
        sum += (w[i] = (ones ? 1 : w[i]) * (attn_float)exp(x[i] - shift));
    return sum;
}

/* y[i] = x[i] - c for i < n (y may be x) */
static void attn__shift_copy(size_t n, const attn_float *x, attn_float c, attn_float *y)
{
    attn__v vc = attn__vset1(c);
    size_t i = 0;
    for (; i + ATTN__VW <= n; i += ATTN__VW) attn__vstore(y + i, attn__vsub(attn__vload(x + i), vc));
    for (; i < n; i++) y[i] = x[i] - c;
}

/* z[i] += x[i] y[i] */
static void attn__mul_add(size_t n, const attn_float *x, const attn_float *y, attn_float *z)
{
    size_t i = 0;
    for (; i + ATTN__VW <= n; i += ATTN__VW)
        attn__vstore(z + i, attn__vfma(attn__vload(x + i), attn__vload(y + i), attn__vload(z + i)));
    for (; i < n; i++) z[i] += x[i] * y[i];
}

/* y[i] = a x[i] for i < n */
static void attn__scale_copy(size_t n, attn_float a, const attn_float *x, attn_float *y)
{
    attn__v va = attn__vset1(a);
    size_t i = 0;
    for (; i + ATTN__VW <= n; i += ATTN__VW) attn__vstore(y + i, attn__vmul(va, attn__vload(x + i)));
    for (; i < n; i++) y[i] = a * x[i];
}

/* x[i] = value for i < n */
static void attn__fill(size_t n, attn_float value, attn_float *x)
{
    attn__v v = attn__vset1(value);
    size_t i = 0;
    for (; i + ATTN__VW <= n; i += ATTN__VW) attn__vstore(x + i, v);
    for (; i < n; i++) x[i] = value;
}

/* y[i] = e^(x[i] - m), exactly 0 at x[i] = -Inf (the vector exponential stops at 2^-125.5); returns
   their sum: a softmax's numerators. */
static attn_float attn__exp_row(size_t n, const attn_float *x, attn_float m, attn_float *y)
{
    size_t i;
    for (i = 0; i < n; i++) y[i] = x[i] == -(attn_float)INFINITY ? 0 : 1;
    return attn__exp_weighted(n, x, m, y, 0);
}

/* y[i] *= 1 - t[i]^2: back through t = tanh(x), from its output */
static void attn__mul_tanh_grad(size_t n, const attn_float *t, attn_float *y)
{
    size_t i = 0;
    for (; i + ATTN__VW <= n; i += ATTN__VW) {
        attn__v v = attn__vload(t + i);
        attn__vstore(y + i, attn__vmul(attn__vload(y + i),
                                       attn__vfma(v, attn__vsub(attn__vset1(0), v), attn__vset1(1))));
    }
    for (; i < n; i++) y[i] *= 1 - t[i] * t[i];
}

/* s[i] -= m (d - i) for i < n, d - i exact (a distance): ALiBi's term, rounded as m (d - i) itself. */
static void attn__ramp_sub(size_t n, attn_float m, attn_float d, attn_float *s)
{
    attn__v vm = attn__vset1(m), lane = attn__vload(attn__lanes);
    size_t i = 0;
    for (; i + ATTN__VW <= n; i += ATTN__VW) {
        attn__v x = attn__vsub(attn__vset1(d - (attn_float)i), lane);
        attn__vstore(s + i, attn__vsub(attn__vload(s + i), attn__vmul(vm, x)));
    }
    for (; i < n; i++) {
        attn_float x = m * (d - (attn_float)i);
        s[i] -= x;
    }
}

/* Expressive attention's g(z) = z^2 / (1 + z^2) for every lane (z^2 capped at 1e30 as attn__ea_g
   does; vmin passes a NaN z^2 through). */
ATTN__INLINE attn__v attn__ea_vg(attn__v z)
{
    attn__v zz = attn__vmin(attn__vset1((attn_float)1e30), attn__vmul(z, z));
    return attn__vdiv(zz, attn__vadd(attn__vset1(1), zz));
}

/* ---- end of per-ISA code ---- */
#ifndef ATTN__PASS

/* The vector kernels' entries from the shared code, and the public ones (attn_dot ...) through them. */
#define ATTN__VEC_KERNELS(X)                                                                              \
    X(dot) X(axpy) X(scale) X(max) X(exp) X(tanh) X(sum) X(mul) X(rows_op) X(sgd_apply) X(sgd_outer)      \
    X(exp_weighted) X(exp_row) X(shift_copy) X(mul_add) X(scale_copy) X(fill) X(mul_tanh_grad) X(ramp_sub)
ATTN__VEC_KERNELS(ATTN__ISA_POINTER)

/* The public vector primitives: the chosen ISA's kernels. */
ATTNDEF attn_float attn_dot(size_t n, const attn_float *x, const attn_float *y)
{
    return ATTN__ISA(dot)(n, x, y);
}
ATTNDEF void attn_axpy(size_t n, attn_float a, const attn_float *x, attn_float *y)
{
    ATTN__ISA(axpy)(n, a, x, y);
}
ATTNDEF void attn_scale(size_t n, attn_float a, attn_float *x) { ATTN__ISA(scale)(n, a, x); }
ATTNDEF attn_float attn_max(size_t n, const attn_float *x) { return ATTN__ISA(max)(n, x); }
ATTNDEF void attn_exp(size_t n, const attn_float *x, attn_float *out) { ATTN__ISA(exp)(n, x, out); }
ATTNDEF void attn_tanh(size_t n, const attn_float *x, attn_float *out) { ATTN__ISA(tanh)(n, x, out); }
ATTNDEF attn_float attn_sum(size_t n, const attn_float *x) { return ATTN__ISA(sum)(n, x); }

ATTNDEF void attn_row_max(attn_float *out, const attn_float *x, int rows, int cols)
{
    int r;
    for (r = 0; r < rows; r++) out[r] = attn_max((size_t)cols, x + (size_t)r * cols);
}

ATTNDEF void attn_row_sum(attn_float *out, const attn_float *x, int rows, int cols)
{
    int r;
    for (r = 0; r < rows; r++) out[r] = attn_sum((size_t)cols, x + (size_t)r * cols);
}

/* ---- 5. ops ----------------------------------------------------------------------------------- */

/* Checks shared by the row-wise ops: pointers given, dimensions >= 1, rows * cols addressable. */
static attn_status attn__rows(const char *fn, int N, int C)
{
    size_t n;
    if (N < 1 || C < 1) return attn__fail(ATTN_ERR_SHAPE, "%s: N = %d, C = %d, both must be >= 1", fn, N, C);
    if (!attn__count3(&n, (size_t)N, (size_t)C, 1))
        return attn__fail(ATTN_ERR_OVERFLOW, "%s: %d x %d elements overflow size_t", fn, N, C);
    return ATTN_OK;
}
static attn_status attn__count(const char *fn, size_t n)
{
    size_t m;
    if (n < 1) return attn__fail(ATTN_ERR_SHAPE, "%s: n = 0, must be >= 1", fn);
    if (!attn__count3(&m, n, 1, 1))
        return attn__fail(ATTN_ERR_OVERFLOW, "%s: n = %lu overflows", fn, (unsigned long)n);
    return ATTN_OK;
}

ATTNDEF attn_status attn_linear_forward(attn_float *out, const attn_float *inp, const attn_float *W,
                                        const attn_float *b, int N, int C, int OC)
{
    int n;
    ATTN__NEED(out); ATTN__NEED(inp); ATTN__NEED(W);
    ATTN__TRY(attn__rows(__func__, N, C));
    ATTN__TRY(attn__rows(__func__, N, OC));
    ATTN__TRY(attn__rows(__func__, OC, C));
    attn_gemm(0, 1, N, OC, C, 1, inp, C, W, C, 0, out, OC);
    if (b)
        for (n = 0; n < N; n++) attn_axpy((size_t)OC, 1, b, out + (size_t)n * OC);
    return ATTN_OK;
}

/* out [N, OC] (row stride ldo) = inp [N, C] W^T + b (b may be NULL), from W's panels P when given
   (attn_transformer_pack: packed by the kernels running now) where they pay, else reading W [OC, C];
   one row reads W in place either way (a matrix-vector product). */
static void attn__linear_p(attn_float *out, size_t ldo, const attn_float *inp, const attn_float *W,
                           const attn_float *P, const attn_float *b, int N, int C, int OC)
{
    int n;
    if (!P || N < 2 || !ATTN__ISA(panels_pay)(N, OC, C) ||
        !ATTN__ISA(gemm_panels)(N, OC, C, 1, inp, C, P, OC, 0, 0, out, (int)ldo))
        attn_gemm(0, 1, N, OC, C, 1, inp, C, W, C, 0, out, (int)ldo);
    for (n = 0; b && n < N; n++) attn_axpy((size_t)OC, 1, b, out + (size_t)n * ldo);
}

/* attn_linear_backward's products, with dinp = beta dinp + dout W (beta 0: dinp need not be zeroed
   first, which the models' backward passes use for a buffer they would otherwise clear). */
static void attn__linear_back(attn_float *dinp, attn_float *dW, attn_float *db, const attn_float *dout,
                              const attn_float *inp, const attn_float *W, int N, int C, int OC,
                              attn_float beta)
{
    int n;
    if (dinp) attn_gemm(0, 0, N, C, OC, 1, dout, OC, W, C, beta, dinp, C);
    if (dW) attn_gemm(1, 0, OC, C, N, 1, dout, OC, inp, C, 1, dW, C);
    if (db)
        for (n = 0; n < N; n++) attn_axpy((size_t)OC, 1, dout + (size_t)n * OC, db);
}

ATTNDEF attn_status attn_linear_backward(attn_float *dinp, attn_float *dW, attn_float *db,
                                         const attn_float *dout, const attn_float *inp,
                                         const attn_float *W, int N, int C, int OC)
{
    ATTN__NEED(dout);
    ATTN__TRY(attn__rows(__func__, N, C));
    ATTN__TRY(attn__rows(__func__, N, OC));
    ATTN__TRY(attn__rows(__func__, OC, C));
    if (dinp && !W) return attn__fail(ATTN_ERR_ARG, "attn_linear_backward: dinp needs W");
    if (dW && !inp) return attn__fail(ATTN_ERR_ARG, "attn_linear_backward: dW needs inp");
    /* out = inp W^T + b  =>  dinp += dout W,  dW += dout^T inp,  db += sum_n dout[n] */
    attn__linear_back(dinp, dW, db, dout, inp, W, N, C, OC, 1);
    return ATTN_OK;
}

/* mean and variance of one row, two passes (the variance never goes negative) */
/* A norm's r = 1 / sqrt(var + eps) (outside = 1: 1 / (sqrt(var) + eps); -1: RMSNorm's, with the
   mean square for var) and *mu (0 for RMSNorm) of a row whose moments under- or overflowed (|x|
   beyond 1e19 or below 1e-19 in float): the row is scaled by the power of two s that brings max |x|
   into [0.5, 1), which is exact, and the moments taken in double. A row of zeros, Inf or NaN keeps
   the plain formula's answer. */
static attn_float attn__rstd_scaled(const attn_float *x, int C, attn_float eps, int outside, attn_float *mu)
{
    double amax = 0, s, m = 0, v = 0, d;
    int i, e;
    for (i = 0; i < C; i++) amax = fabs((double)x[i]) > amax ? fabs((double)x[i]) : amax;
    if (!(amax > 0) || !attn__finite(amax)) {
        for (i = 0; i < C; i++) m += (double)x[i] / C;
        *mu = outside < 0 ? 0 : (attn_float)m;
        return (attn_float)(1 / sqrt(0 * m + eps));
    }
    frexp(amax, &e);
    s = ldexp(1, -e);
    for (i = 0; outside >= 0 && i < C; i++) m += (double)x[i] * s / C;
    for (i = 0; i < C; i++) d = (double)x[i] * s - m, v += d * d / C;
    *mu = (attn_float)(m / s);
    return (attn_float)(outside > 0 ? s / (sqrt(v) + eps * s) : s / sqrt(v + (double)eps * s * s));
}

/* The activation table: f(x) and f'(x) side by side, computed in double. */
static double attn__sigmoid(double x) { return x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x)); }

static double attn__act_f(attn_act a, double x, double *dfdx)
{
    const double k = 0.7978845608028654, c = 0.044715; /* sqrt(2/pi), the GELU cubic */
    double t, s;
    switch (a) {
    case ATTN_ACT_RELU: *dfdx = x > 0; return x > 0 || x != x ? x : 0; /* NaN stays (as PyTorch's) */
    case ATTN_ACT_GELU_TANH: /* (1 + tanh u) / 2 = sigmoid(2u): no cancellation in the left tail */
        t = 2 * k * (x + c * x * x * x);
        s = attn__sigmoid(t);
        *dfdx = s + 2 * x * s * attn__sigmoid(-t) * k * (1 + 3 * c * x * x);
        return x * s;
    case ATTN_ACT_GELU_ERF: /* 1 + erf(x / sqrt 2) as erfc(-x / sqrt 2): no cancellation in the left tail */
        t = erfc(-x * 0.7071067811865476);
        *dfdx = 0.5 * t + x * exp(-0.5 * x * x) * 0.3989422804014327;
        return 0.5 * x * t;
    case ATTN_ACT_TANH: t = tanh(x); *dfdx = 1 - t * t; return t;
    case ATTN_ACT_SILU: s = attn__sigmoid(x); *dfdx = s * (1 + x * (1 - s)); return x * s;
    case ATTN_ACT_SIGMOID: s = attn__sigmoid(x); *dfdx = s * (1 - s); return s;
    default: *dfdx = 1; return x;
    }
}

/* GELU-erf's vector form is float's (its fit's 1.2e-7 would show in double, which keeps libm's erf). */
static int attn__act_has_vec(attn_act a)
{
    return a == ATTN_ACT_TANH || a == ATTN_ACT_GELU_TANH || a == ATTN_ACT_SILU || a == ATTN_ACT_SIGMOID ||
           (a == ATTN_ACT_GELU_ERF && sizeof(attn_float) == 4);
}

#endif /* shared code */

/* ---- per-ISA code ---- */
/* The rows of the norms, activations (and gated ones) and RoPE, and AdamW's update. */
static void attn__moments(const attn_float *x, int C, attn_float *mu, attn_float *var)
{
    attn_float m = attn__sum((size_t)C, x) / C, v;
    attn__v vm = attn__vset1(m), acc = attn__vset1(0);
    int i = 0;
    for (; i + ATTN__VW <= C; i += ATTN__VW) {
        attn__v dx = attn__vsub(attn__vload(x + i), vm);
        acc = attn__vfma(dx, dx, acc);
    }
    for (v = attn__vhsum(acc); i < C; i++) v += (x[i] - m) * (x[i] - m);
    *mu = m;
    *var = v / C;
}

/* attn_layernorm_forward's rows, its arguments checked. */
static void attn__ln_forward_rows(attn_float *out, attn_float *mean, attn_float *rstd,
                                  const attn_float *inp, const attn_float *gamma, const attn_float *beta,
                                  int N, int C, attn_float eps, attn_ln_eps mode)
{
    int n, i;
    for (n = 0; n < N; n++) {
        const attn_float *x = inp + (size_t)n * C;
        attn_float *y = out + (size_t)n * C, mu, var, r;
        attn__moments(x, C, &mu, &var);
        r = mode == ATTN_LN_EPS_INSIDE ? 1 / (attn_float)sqrt(var + eps) : 1 / ((attn_float)sqrt(var) + eps);
        if (!(var >= ATTN__FLOAT_MIN) || !attn__finite(var))
            r = attn__rstd_scaled(x, C, eps, mode == ATTN_LN_EPS_OUTSIDE, &mu);
        for (i = 0; i + ATTN__VW <= C; i += ATTN__VW) { /* xh = (x - mu) r;  y = gamma xh + beta */
            attn__v xh = attn__vmul(attn__vsub(attn__vload(x + i), attn__vset1(mu)), attn__vset1(r));
            if (gamma) xh = attn__vmul(xh, attn__vload(gamma + i));
            if (beta) xh = attn__vadd(xh, attn__vload(beta + i));
            attn__vstore(y + i, xh);
        }
        for (; i < C; i++) {
            attn_float xh = (x[i] - mu) * r;
            y[i] = (gamma ? gamma[i] * xh : xh) + (beta ? beta[i] : 0);
        }
        if (mean) mean[n] = mu;
        if (rstd) rstd[n] = r;
    }
}

/* attn_layernorm_backward's rows, its arguments checked. */
static void attn__ln_backward_rows(attn_float *dinp, attn_float *dgamma, attn_float *dbeta,
                                   const attn_float *dout, const attn_float *inp, const attn_float *gamma,
                                   const attn_float *mean, const attn_float *rstd, int N, int C,
                                   attn_ln_eps mode)
{
    int n, i;
    /* y = gamma xhat + beta, xhat = (x - mu) r(v). With g = dy gamma:
         inside  (r = (v + eps)^-1/2):   dx = r (g - mean(g) - xhat mean(g xhat))
         outside (r = 1 / (sqrt v + eps)): dx = r (g - mean(g)) - xhat mean(g xhat) / sqrt(v)  */
    for (n = 0; n < N; n++) {
        const attn_float *x = inp + (size_t)n * C, *dy = dout + (size_t)n * C;
        attn_float mu = mean[n], r = rstd[n], mg, mgx, sd = 0;
        attn__v vmu = attn__vset1(mu), vr = attn__vset1(r), amg = attn__vset1(0), amgx = attn__vset1(0);
        for (i = 0; i + ATTN__VW <= C; i += ATTN__VW) { /* sums of g and g xh; dgamma += dy xh, dbeta += dy */
            attn__v xh = attn__vmul(attn__vsub(attn__vload(x + i), vmu), vr), d = attn__vload(dy + i),
                    g = gamma ? attn__vmul(d, attn__vload(gamma + i)) : d;
            amg = attn__vadd(amg, g);
            amgx = attn__vfma(g, xh, amgx);
            if (dgamma) attn__vstore(dgamma + i, attn__vfma(d, xh, attn__vload(dgamma + i)));
            if (dbeta) attn__vstore(dbeta + i, attn__vadd(d, attn__vload(dbeta + i)));
        }
        for (mg = attn__vhsum(amg), mgx = attn__vhsum(amgx); i < C; i++) {
            attn_float xh = (x[i] - mu) * r, g = gamma ? dy[i] * gamma[i] : dy[i];
            mg += g;
            mgx += g * xh;
            if (dgamma) dgamma[i] += dy[i] * xh;
            if (dbeta) dbeta[i] += dy[i];
        }
        mg /= C;
        mgx /= C;
        if (!dinp) continue;
        if (mode == ATTN_LN_EPS_OUTSIDE) { /* sqrt(v) from the row: 1/r - eps would cancel */
            attn_float m2, v2;
            attn__moments(x, C, &m2, &v2);
            sd = (attn_float)sqrt(v2);
        }
        for (i = 0; mode == ATTN_LN_EPS_INSIDE && i + ATTN__VW <= C;
             i += ATTN__VW) { /* dx += r (g - mg - xh mgx) */
            attn__v xh = attn__vmul(attn__vsub(attn__vload(x + i), vmu), vr), d = attn__vload(dy + i),
                    g = gamma ? attn__vmul(d, attn__vload(gamma + i)) : d;
            attn__v t = attn__vsub(attn__vsub(g, attn__vset1(mg)), attn__vmul(xh, attn__vset1(mgx)));
            attn__vstore(dinp + (size_t)n * C + i, attn__vfma(vr, t, attn__vload(dinp + (size_t)n * C + i)));
        }
        for (; i < C; i++) {
            attn_float xh = (x[i] - mu) * r, g = gamma ? dy[i] * gamma[i] : dy[i];
            if (mode == ATTN_LN_EPS_INSIDE) dinp[(size_t)n * C + i] += r * (g - mg - xh * mgx);
            else dinp[(size_t)n * C + i] += r * (g - mg) - (sd > 0 ? xh * mgx / sd : 0);
        }
    }
}

/* attn_rmsnorm_forward's rows, its arguments checked. */
static void attn__rms_forward_rows(attn_float *out, attn_float *rstd, const attn_float *inp,
                                   const attn_float *g, int N, int C, attn_float eps)
{
    int n, i;
    for (n = 0; n < N; n++) {
        const attn_float *x = inp + (size_t)n * C;
        attn_float ms = attn__dot((size_t)C, x, x) / C, r = 1 / (attn_float)sqrt(ms + eps), mu;
        if (!(ms >= ATTN__FLOAT_MIN) || !attn__finite(ms)) r = attn__rstd_scaled(x, C, eps, -1, &mu);
        for (i = 0; i + ATTN__VW <= C; i += ATTN__VW) { /* y = x r g */
            attn__v y = attn__vmul(attn__vload(x + i), attn__vset1(r));
            attn__vstore(out + (size_t)n * C + i, g ? attn__vmul(y, attn__vload(g + i)) : y);
        }
        for (; i < C; i++) out[(size_t)n * C + i] = x[i] * r * (g ? g[i] : 1);
        if (rstd) rstd[n] = r;
    }
}

/* attn_rmsnorm_backward's rows, its arguments checked. */
static void attn__rms_backward_rows(attn_float *dinp, attn_float *dg, const attn_float *dout,
                                    const attn_float *inp, const attn_float *g, const attn_float *rstd, int N,
                                    int C)
{
    int n, i;
    /* y = x r g, r = (mean(x^2) + eps)^-1/2  =>  dx = r (dy g) - x r^3 mean(dy g x),  dg += dy x r */
    for (n = 0; n < N; n++) {
        const attn_float *x = inp + (size_t)n * C, *dy = dout + (size_t)n * C;
        attn_float r = rstd[n], m, c, *dx = dinp ? dinp + (size_t)n * C : NULL;
        attn__v am = attn__vset1(0), vr = attn__vset1(r), vc;
        for (i = 0; i + ATTN__VW <= C; i += ATTN__VW) { /* m = sum dy g x; dg += dy x r */
            attn__v d = attn__vload(dy + i), vx = attn__vload(x + i);
            am = attn__vfma(g ? attn__vmul(d, attn__vload(g + i)) : d, vx, am);
            if (dg) attn__vstore(dg + i, attn__vfma(attn__vmul(d, vx), vr, attn__vload(dg + i)));
        }
        for (m = attn__vhsum(am); i < C; i++) {
            m += dy[i] * (g ? g[i] : 1) * x[i];
            if (dg) dg[i] += dy[i] * x[i] * r;
        }
        c = r * r * r * (m / C);
        vc = attn__vset1(-c);
        for (i = 0; dx && i + ATTN__VW <= C; i += ATTN__VW) { /* dx += r (dy g) - x c */
            attn__v d = attn__vload(dy + i);
            d = g ? attn__vmul(d, attn__vload(g + i)) : d;
            attn__vstore(dx + i, attn__vfma(attn__vload(x + i), vc, attn__vfma(d, vr, attn__vload(dx + i))));
        }
        for (; dx && i < C; i++) dx[i] += r * dy[i] * (g ? g[i] : 1) - x[i] * c;
    }
}

/* GELU's erf form, f = x Phi / 2 with Phi = 1 + erf(x / sqrt 2) = erfc(-x / sqrt 2), from erfc(z) at
   z = |x| / sqrt 2 >= 0 by Press et al.'s Chebyshev fit (Numerical Recipes, erfcc: fractional error
   below 1.2e-7), so that Phi = e in the left tail keeps that accuracy (no 1 - (1 - e)) and Phi =
   2 - e on the right; f' = Phi / 2 + x exp(-x^2 / 2) / sqrt(2 pi). */
ATTN__INLINE void attn__gelu_erf_vec(attn__v v, attn__v *f, attn__v *df)
{
    static const attn_float c[10] = {
        (attn_float)-1.26551223, (attn_float)1.00002368, (attn_float)0.37409196,  (attn_float)0.09678418,
        (attn_float)-0.18628806, (attn_float)0.27886807, (attn_float)-1.13520398, (attn_float)1.48851587,
        (attn_float)-0.82215223, (attn_float)0.17087277};
    const attn__v one = attn__vset1(1), half = attn__vset1((attn_float)0.5);
    attn__v z = attn__vmul(attn__vmax(v, attn__vsub(attn__vset1(0), v)),
                           attn__vset1((attn_float)0.7071067811865476)),
            t = attn__vdiv(one, attn__vfma(z, half, one)), p = attn__vset1(c[9]), e, phi, right;
    int k;
    for (k = 8; k >= 0; k--) p = attn__vfma(p, t, attn__vset1(c[k]));
    e = attn__vmul(t, attn__vexp(attn__vsub(p, attn__vmul(z, z)))); /* erfc(z) */
    /* right = 1 for x > 0 (x 2^100 >= 1 from x >= 2^-100, where 1 - e ~ 0 anyway), 0 for x <= 0 and NaN */
    right = attn__vmin(
        attn__vmax(attn__vmul(v, attn__vset1((attn_float)1.2676506002282294e30)), attn__vset1(0)), one);
    phi = attn__vfma(right, attn__vmul(attn__vset1(2), attn__vsub(one, e)), e);
    if (f) *f = attn__vmul(attn__vmul(half, v), phi);
    if (df)
        *df = attn__vfma(attn__vmul(v, attn__vset1((attn_float)0.3989422804014327)),
                         attn__vexp(attn__vmul(attn__vmul(z, z), attn__vset1(-1))), attn__vmul(half, phi));
}

/* f(x) into *f and f'(x) into *df for a vector x, for the activations with a vector form (tanh,
   GELU-tanh, GELU-erf in float builds, SiLU, sigmoid); either pointer may be NULL (inlined with a
   constant NULL, its work is dropped). */
ATTN__INLINE void attn__act_vec(attn_act a, attn__v v, attn__v *f, attn__v *df)
{
    const attn__v one = attn__vset1(1), neg = attn__vset1(-1), two = attn__vset1(2), four = attn__vset1(4);
    const attn__v k2 = attn__vset1((attn_float)(2 * 0.7978845608028654)),
                  kc2 = attn__vset1((attn_float)(2 * 0.7978845608028654 * 0.044715));
    attn__v e, s, u;
    if (a == ATTN_ACT_GELU_ERF) {
        attn__gelu_erf_vec(v, f, df);
        return;
    }
    if (a == ATTN_ACT_TANH) {
        if (f) *f = attn__vtanh(v);
        if (df) { /* f' = 1 - tanh^2 x = 4e / (1 + e)^2 with e = exp(-2|x|), exact in the tails */
            e = attn__vexp(attn__vmul(attn__vmax(v, attn__vmul(v, neg)), attn__vmul(two, neg)));
            u = attn__vadd(one, e);
            *df = attn__vdiv(attn__vmul(four, e), attn__vmul(u, u));
        }
        return;
    }
    /* s = sigmoid(u) = 1 / (1 + e), e = exp(-u), 1 - s = e s; u = x (sigmoid, SiLU) or 2 k (x + c x^3)
       (GELU-tanh: (1 + tanh(u / 2)) / 2 = sigmoid(u)) */
    u = a == ATTN_ACT_GELU_TANH ? attn__vmul(v, attn__vfma(kc2, attn__vmul(v, v), k2)) : v;
    e = attn__vexp(attn__vmul(u, neg));
    s = attn__vdiv(one, attn__vadd(one, e));
    e = attn__vmul(e, s); /* 1 - s */
    if (a == ATTN_ACT_SIGMOID) {
        if (f) *f = s;
        if (df) *df = attn__vmul(s, e);
    } else if (a == ATTN_ACT_SILU) {
        if (f) *f = attn__vmul(v, s);
        if (df) *df = attn__vmul(s, attn__vfma(v, e, one)); /* s (1 + x (1 - s)) */
    } else { /* f = x s, f' = s + x s (1 - s) u', u' = 2k (1 + 3c x^2) */
        if (f) *f = attn__vmul(v, s);
        if (df)
            *df = attn__vfma(attn__vmul(attn__vmul(v, s), e),
                             attn__vfma(attn__vmul(kc2, attn__vset1(3)), attn__vmul(v, v), k2), s);
    }
}

/* Over the whole vectors of x [n], for the activations with a vector form: out = f(x) when out is not
   NULL, else dinp += f'(x) dout (acc 1) or dinp = f'(x) dout (acc 0). Returns how many leading
   elements it did (0 for the others, which the scalar loop does). */
static size_t attn__act_simd(attn_act a, size_t n, const attn_float *x, attn_float *out,
                             const attn_float *dout, attn_float *dinp, int acc)
{
    size_t total = n;
    size_t i = 0;
    attn__v f, df;
    if (!attn__act_has_vec(a)) return 0;
    if (a == ATTN_ACT_GELU_ERF && n % ATTN__VW) { /* its tail too, which libm's erf would give otherwise */
        attn_float xt[ATTN__VW] = {0}, ot[ATTN__VW], dt[ATTN__VW] = {0}, it[ATTN__VW] = {0};
        size_t r = n % ATTN__VW, j = n - r;
        memcpy(xt, x + j, sizeof(attn_float) * r);
        if (!out) {
            memcpy(dt, dout + j, sizeof(attn_float) * r);
            if (acc) memcpy(it, dinp + j, sizeof(attn_float) * r);
        }
        attn__act_simd(a, ATTN__VW, xt, out ? ot : NULL, dt, it, acc);
        if (out) memcpy(out + j, ot, sizeof(attn_float) * r);
        else memcpy(dinp + j, it, sizeof(attn_float) * r);
        n = j;
    }
    for (; i + ATTN__VW <= n; i += ATTN__VW) {
        if (out) {
            attn__act_vec(a, attn__vload(x + i), &f, NULL);
            attn__vstore(out + i, f);
        } else {
            attn__act_vec(a, attn__vload(x + i), NULL, &df);
            attn__vstore(dinp + i,
                         attn__vfma(df, attn__vload(dout + i), acc ? attn__vload(dinp + i) : attn__vset1(0)));
        }
    }
    return a == ATTN_ACT_GELU_ERF ? i + (total - n) : i;
}

/* A gated activation (GLU; SwiGLU with SiLU) over n elements in one pass: out = a f(b). */
static void attn__glu_forward(attn_float *out, const attn_float *a, const attn_float *b, size_t n,
                              attn_act act)
{
    size_t i = 0;
    double d;
    attn__v f;
    if (attn__act_has_vec(act))
        for (; i + ATTN__VW <= n; i += ATTN__VW) {
            attn__act_vec(act, attn__vload(b + i), &f, NULL);
            attn__vstore(out + i, attn__vmul(attn__vload(a + i), f));
        }
    for (; i < n; i++) out[i] = a[i] * (attn_float)attn__act_f(act, b[i], &d);
}

/* Its backward in one pass: da = acc da + dout f(b) and db = acc db + dout a f'(b) (either may be
   NULL; db may be dout itself). */
static void attn__glu_backward(attn_float *da, attn_float *db, const attn_float *dout, const attn_float *a,
                               const attn_float *b, size_t n, attn_act act, int acc)
{
    size_t i = 0;
    double d, f;
    attn__v g, vf, vd, z = attn__vset1(0);
    if (attn__act_has_vec(act))
        for (; i + ATTN__VW <= n; i += ATTN__VW) {
            g = attn__vload(dout + i);
            attn__act_vec(act, attn__vload(b + i), &vf, &vd);
            if (da) attn__vstore(da + i, attn__vfma(g, vf, acc ? attn__vload(da + i) : z));
            if (db)
                attn__vstore(db + i, attn__vfma(attn__vmul(g, attn__vload(a + i)), vd,
                                                acc ? attn__vload(db + i) : z));
        }
    for (; i < n; i++) {
        attn_float g1 = dout[i];
        f = attn__act_f(act, b[i], &d);
        if (da) da[i] = (acc ? da[i] : 0) + g1 * (attn_float)f;
        if (db) db[i] = (acc ? db[i] : 0) + g1 * a[i] * (attn_float)d;
    }
}

/* out = R(sign * angle) x for each pair (x0, x1): (x0 c - x1 sn, x1 c + x0 sn), sn = sign * s; the
   forward rotates by +angle, the backward by -angle. Each of the N sequences is T dh / 2 pairs, pair
   k turned by cosv[k], sinv[k] ([T, dh / 2] as attn_rope_tables lays them out); the tables are
   spread over blocks of pairs, (c c) and (-sn sn) per pair, so that whole vectors of pairs take
   y = x (c c) + swap2(x) (-sn sn) (gcc -O2 left the pair loop scalar). */
#define ATTN__ROPE_BLOCK 256 /* pairs */
static void attn__rope(attn_float *out, const attn_float *inp, const attn_float *cosv,
                       const attn_float *sinv, int N, int T, int dh, attn_float sign, int accumulate)
{
    attn_float cc[2 * ATTN__ROPE_BLOCK], ss[2 * ATTN__ROPE_BLOCK];
    size_t P = (size_t)T * (dh / 2), k0, k, i;
    int n;
    for (k0 = 0; k0 < P; k0 += ATTN__ROPE_BLOCK) {
        size_t m = ATTN__MIN(ATTN__ROPE_BLOCK, P - k0);
        for (k = 0; k < m; k++) {
            cc[2 * k] = cc[2 * k + 1] = cosv[k0 + k];
            ss[2 * k + 1] = sign * sinv[k0 + k];
            ss[2 * k] = -ss[2 * k + 1];
        }
        for (n = 0; n < N; n++) {
            const attn_float *x = inp + (size_t)n * 2 * P + 2 * k0;
            attn_float *y = out + (size_t)n * 2 * P + 2 * k0;
            for (i = 0; ATTN__VW > 1 && i + ATTN__VW <= 2 * m; i += ATTN__VW) {
                attn__v v = attn__vload(x + i), r = attn__vmul(attn__vswap2(v), attn__vload(ss + i));
                r = attn__vfma(v, attn__vload(cc + i), r);
                attn__vstore(y + i, accumulate ? attn__vadd(attn__vload(y + i), r) : r);
            }
            for (; i < 2 * m; i += 2) {
                attn_float y0 = x[i] * cc[i] + x[i + 1] * ss[i], y1 = x[i + 1] * cc[i] + x[i] * ss[i + 1];
                if (accumulate) { y[i] += y0; y[i + 1] += y1; }
                else { y[i] = y0; y[i + 1] = y1; }
            }
        }
    }
}

/* AdamW on n parameters x with gradients g, moments m and v, ic1 = 1 / (1 - beta1^t), ic2 likewise
   and decay d: m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2, x -= lr (m ic1 / (sqrt(v ic2) + eps) + d x),
   in attn_float (not a loop in double with a division and a square root per parameter). */
static void attn__adamw_block(size_t n, attn_float *x, const attn_float *g, attn_float *m, attn_float *v,
                              attn_float lr, attn_float b1, attn_float b2, attn_float ic1, attn_float ic2,
                              attn_float eps, attn_float d)
{
    size_t i = 0;
    for (; i + ATTN__VW <= n; i += ATTN__VW) {
        attn__v vg = attn__vload(g + i), vx = attn__vload(x + i), u, vm, vv;
        vm = attn__vfma(attn__vset1(b1), attn__vload(m + i), attn__vmul(attn__vset1(1 - b1), vg));
        vv = attn__vfma(attn__vset1(b2), attn__vload(v + i),
                        attn__vmul(attn__vset1(1 - b2), attn__vmul(vg, vg)));
        u = attn__vdiv(attn__vmul(vm, attn__vset1(ic1)),
                       attn__vadd(attn__vsqrt(attn__vmul(vv, attn__vset1(ic2))), attn__vset1(eps)));
        attn__vstore(m + i, vm);
        attn__vstore(v + i, vv);
        attn__vstore(x + i, attn__vfma(attn__vset1(-lr), attn__vfma(attn__vset1(d), vx, u), vx));
    }
    for (; i < n; i++) {
        m[i] = b1 * m[i] + (1 - b1) * g[i];
        v[i] = b2 * v[i] + (1 - b2) * (g[i] * g[i]);
        x[i] -= lr * (m[i] * ic1 / ((attn_float)sqrt(v[i] * ic2) + eps) + d * x[i]);
    }
}

/* ---- end of per-ISA code ---- */
#ifndef ATTN__PASS

/* The row kernels' entries from the shared code. */
#define ATTN__ROW_KERNELS(X)                                                                       \
    X(ln_forward_rows) X(ln_backward_rows) X(rms_forward_rows) X(rms_backward_rows) X(act_simd)      \
    X(glu_forward) X(glu_backward) X(rope) X(adamw_block)
ATTN__ROW_KERNELS(ATTN__ISA_POINTER)

ATTNDEF attn_status attn_layernorm_forward(attn_float *out, attn_float *mean, attn_float *rstd,
                                           const attn_float *inp, const attn_float *gamma,
                                           const attn_float *beta, int N, int C, attn_float eps,
                                           attn_ln_eps mode)
{
    ATTN__NEED(out); ATTN__NEED(inp);
    ATTN__TRY(attn__rows(__func__, N, C));
    if (mode != ATTN_LN_EPS_INSIDE && mode != ATTN_LN_EPS_OUTSIDE)
        return attn__fail(ATTN_ERR_ARG, "attn_layernorm_forward: unknown eps mode %d", (int)mode);
    if (!(eps >= 0)) return attn__fail(ATTN_ERR_ARG, "attn_layernorm_forward: eps must be >= 0");
    ATTN__ISA(ln_forward_rows)(out, mean, rstd, inp, gamma, beta, N, C, eps, mode);
    return ATTN_OK;
}

ATTNDEF attn_status attn_layernorm_backward(attn_float *dinp, attn_float *dgamma, attn_float *dbeta,
                                            const attn_float *dout, const attn_float *inp,
                                            const attn_float *gamma, const attn_float *mean,
                                            const attn_float *rstd, int N, int C, attn_float eps,
                                            attn_ln_eps mode)
{
    (void)eps; /* kept for symmetry with the forward call: rstd already carries it */
    ATTN__NEED(dout); ATTN__NEED(inp); ATTN__NEED(mean); ATTN__NEED(rstd);
    ATTN__TRY(attn__rows(__func__, N, C));
    if (mode != ATTN_LN_EPS_INSIDE && mode != ATTN_LN_EPS_OUTSIDE)
        return attn__fail(ATTN_ERR_ARG, "attn_layernorm_backward: unknown eps mode %d", (int)mode);
    ATTN__ISA(ln_backward_rows)(dinp, dgamma, dbeta, dout, inp, gamma, mean, rstd, N, C, mode);
    return ATTN_OK;
}

ATTNDEF attn_status attn_rmsnorm_forward(attn_float *out, attn_float *rstd, const attn_float *inp,
                                         const attn_float *g, int N, int C, attn_float eps)
{
    ATTN__NEED(out); ATTN__NEED(inp);
    ATTN__TRY(attn__rows(__func__, N, C));
    if (!(eps >= 0)) return attn__fail(ATTN_ERR_ARG, "attn_rmsnorm_forward: eps must be >= 0");
    ATTN__ISA(rms_forward_rows)(out, rstd, inp, g, N, C, eps);
    return ATTN_OK;
}

ATTNDEF attn_status attn_rmsnorm_backward(attn_float *dinp, attn_float *dg, const attn_float *dout,
                                          const attn_float *inp, const attn_float *g,
                                          const attn_float *rstd, int N, int C)
{
    ATTN__NEED(dout); ATTN__NEED(inp); ATTN__NEED(rstd);
    ATTN__TRY(attn__rows(__func__, N, C));
    ATTN__ISA(rms_backward_rows)(dinp, dg, dout, inp, g, rstd, N, C);
    return ATTN_OK;
}

ATTNDEF const char *attn_act_name(attn_act a)
{
    static const char *names[ATTN_ACT_COUNT] = {"identity", "relu", "gelu_tanh", "gelu_erf",
                                                "tanh",     "silu", "sigmoid"};
    return (int)a >= 0 && a < ATTN_ACT_COUNT ? names[a] : "unknown";
}

ATTNDEF attn_status attn_act_forward(attn_float *out, const attn_float *inp, size_t n, attn_act a)
{
    size_t i;
    double d;
    ATTN__NEED(out); ATTN__NEED(inp);
    ATTN__TRY(attn__count(__func__, n));
    if ((int)a < 0 || a >= ATTN_ACT_COUNT)
        return attn__fail(ATTN_ERR_ARG, "attn_act_forward: unknown activation %d", (int)a);
    for (i = ATTN__ISA(act_simd)(a, n, inp, out, NULL, NULL, 0); i < n; i++)
        out[i] = (attn_float)attn__act_f(a, inp[i], &d);
    return ATTN_OK;
}

/* dinp = acc dinp + f'(inp) dout (acc 0: dinp need not be cleared first, which the models use). */
static void attn__act_back(attn_float *dinp, const attn_float *dout, const attn_float *inp, size_t n,
                           attn_act a, int acc)
{
    size_t i;
    double d;
    for (i = ATTN__ISA(act_simd)(a, n, inp, NULL, dout, dinp, acc); i < n; i++) {
        attn__act_f(a, inp[i], &d);
        dinp[i] = (acc ? dinp[i] : 0) + (attn_float)d * dout[i];
    }
}

ATTNDEF attn_status attn_act_backward(attn_float *dinp, const attn_float *dout, const attn_float *inp,
                                      size_t n, attn_act a)
{
    ATTN__NEED(dinp); ATTN__NEED(dout); ATTN__NEED(inp);
    ATTN__TRY(attn__count(__func__, n));
    if ((int)a < 0 || a >= ATTN_ACT_COUNT)
        return attn__fail(ATTN_ERR_ARG, "attn_act_backward: unknown activation %d", (int)a);
    attn__act_back(dinp, dout, inp, n, a, 1);
    return ATTN_OK;
}

ATTNDEF attn_status attn_swiglu_forward(attn_float *out, const attn_float *a, const attn_float *b,
                                        size_t n)
{
    ATTN__NEED(out); ATTN__NEED(a); ATTN__NEED(b);
    ATTN__TRY(attn__count(__func__, n));
    ATTN__ISA(glu_forward)(out, a, b, n, ATTN_ACT_SILU);
    return ATTN_OK;
}

ATTNDEF attn_status attn_swiglu_backward(attn_float *da, attn_float *db, const attn_float *dout,
                                         const attn_float *a, const attn_float *b, size_t n)
{
    ATTN__NEED(dout); ATTN__NEED(a); ATTN__NEED(b);
    ATTN__TRY(attn__count(__func__, n));
    ATTN__ISA(glu_backward)(da, db, dout, a, b, n, ATTN_ACT_SILU, 1); /* out = a silu(b) */
    return ATTN_OK;
}

ATTNDEF attn_status attn_softmax_forward(attn_float *out, const attn_float *inp, int N, int C)
{
    int n;
    ATTN__NEED(out); ATTN__NEED(inp);
    ATTN__TRY(attn__rows(__func__, N, C));
    for (n = 0; n < N; n++) {
        const attn_float *x = inp + (size_t)n * C;
        attn_float *y = out + (size_t)n * C, m = attn_max((size_t)C, x), s;
        if (m == -INFINITY) { /* nothing visible */
            memset(y, 0, sizeof(attn_float) * (size_t)C);
            continue;
        }
        s = ATTN__ISA(exp_row)((size_t)C, x, m, y);
        attn_scale((size_t)C, 1 / s, y);
    }
    return ATTN_OK;
}

ATTNDEF attn_status attn_softmax_backward(attn_float *dinp, const attn_float *dout,
                                          const attn_float *out, int N, int C)
{
    int n, i;
    ATTN__NEED(dinp); ATTN__NEED(dout); ATTN__NEED(out);
    ATTN__TRY(attn__rows(__func__, N, C));
    for (n = 0; n < N; n++) { /* y = softmax(x)  =>  dx += y (dy - sum_j dy_j y_j) */
        const attn_float *y = out + (size_t)n * C, *dy = dout + (size_t)n * C;
        attn_float d = attn_dot((size_t)C, dy, y);
        for (i = 0; i < C; i++) dinp[(size_t)n * C + i] += y[i] * (dy[i] - d);
    }
    return ATTN_OK;
}

ATTNDEF attn_status attn_mean_pool(attn_float *e, const attn_float *h, const unsigned char *mask, int B,
                                   int T, int d, int normalize)
{
    int b, t, n;
    double norm;
    ATTN__NEED(e); ATTN__NEED(h);
    if (B < 1 || T < 1 || d < 1 || (size_t)B * T > (size_t)INT_MAX / (size_t)d)
        return attn__fail(ATTN_ERR_SHAPE,
                          "attn_mean_pool: B = %d, T = %d, d = %d must be >= 1 (and B T d fit)", B, T, d);
    for (b = 0; b < B; b++) {
        attn_float *o = e + (size_t)b * d;
        memset(o, 0, sizeof(attn_float) * (size_t)d);
        for (n = 0, t = 0; t < T; t++)
            if (!mask || mask[(size_t)b * T + t])
                attn_axpy((size_t)d, 1, h + ((size_t)b * T + t) * d, o), n++;
        if (n) attn_scale((size_t)d, (attn_float)(1.0 / n), o);
        norm = sqrt((double)attn_dot((size_t)d, o, o));
        if (normalize) attn_scale((size_t)d, norm > 0 ? (attn_float)(1 / norm) : 0, o);
    }
    return ATTN_OK;
}

/* Every id in [0, V), or a failure naming the first that is not. */
static attn_status attn__ids(const char *fn, const int *ids, int N, int V)
{
    int n;
    for (n = 0; n < N; n++)
        if (ids[n] < 0 || ids[n] >= V)
            return attn__fail(ATTN_ERR_ARG, "%s: ids[%d] = %d is outside [0, %d)", fn, n, ids[n], V);
    return ATTN_OK;
}

ATTNDEF attn_status attn_embedding_forward(attn_float *out, const int *ids, const attn_float *table,
                                           int N, int V, int C)
{
    int n;
    ATTN__NEED(out); ATTN__NEED(ids); ATTN__NEED(table);
    ATTN__TRY(attn__rows(__func__, N, C));
    ATTN__TRY(attn__rows(__func__, V, C));
    ATTN__TRY(attn__ids(__func__, ids, N, V));
    for (n = 0; n < N; n++)
        memcpy(out + (size_t)n * C, table + (size_t)ids[n] * C, sizeof(attn_float) * (size_t)C);
    return ATTN_OK;
}

ATTNDEF attn_status attn_embedding_backward(attn_float *dtable, const attn_float *dout,
                                            const int *ids, int N, int V, int C)
{
    int n;
    ATTN__NEED(dtable); ATTN__NEED(dout); ATTN__NEED(ids);
    ATTN__TRY(attn__rows(__func__, N, C));
    ATTN__TRY(attn__rows(__func__, V, C));
    ATTN__TRY(attn__ids(__func__, ids, N, V));
    for (n = 0; n < N; n++) attn_axpy((size_t)C, 1, dout + (size_t)n * C, dtable + (size_t)ids[n] * C);
    return ATTN_OK;
}

ATTNDEF attn_status attn_one_hot(attn_float *out, const int *ids, int N, int V)
{
    int n;
    ATTN__NEED(out); ATTN__NEED(ids);
    ATTN__TRY(attn__rows(__func__, N, V));
    ATTN__TRY(attn__ids(__func__, ids, N, V));
    memset(out, 0, sizeof(attn_float) * (size_t)N * V);
    for (n = 0; n < N; n++) out[(size_t)n * V + ids[n]] = 1;
    return ATTN_OK;
}

static attn_status attn__pos_check(const char *fn, int B, int T, int C, int maxT)
{
    size_t n;
    if (B < 1 || T < 1 || C < 1)
        return attn__fail(ATTN_ERR_SHAPE, "%s: B = %d, T = %d, C = %d, each must be >= 1", fn, B, T, C);
    if (T > maxT)
        return attn__fail(ATTN_ERR_SHAPE, "%s: T = %d exceeds the table's %d positions", fn, T, maxT);
    if (!attn__count3(&n, (size_t)B, (size_t)T, (size_t)C) || !attn__count3(&n, (size_t)maxT, (size_t)C, 1))
        return attn__fail(ATTN_ERR_OVERFLOW, "%s: sizes overflow size_t", fn);
    return ATTN_OK;
}

ATTNDEF attn_status attn_pos_learned_forward(attn_float *out, const attn_float *inp,
                                             const attn_float *table, int B, int T, int C, int maxT)
{
    int b, t, i;
    ATTN__NEED(out); ATTN__NEED(inp); ATTN__NEED(table);
    ATTN__TRY(attn__pos_check(__func__, B, T, C, maxT));
    for (b = 0; b < B; b++)
        for (t = 0; t < T; t++)
            for (i = 0; i < C; i++) {
                size_t k = ((size_t)b * T + t) * C + i;
                out[k] = inp[k] + table[(size_t)t * C + i];
            }
    return ATTN_OK;
}

ATTNDEF attn_status attn_pos_learned_backward(attn_float *dinp, attn_float *dtable,
                                              const attn_float *dout, int B, int T, int C, int maxT)
{
    int b, t;
    ATTN__NEED(dout);
    ATTN__TRY(attn__pos_check(__func__, B, T, C, maxT));
    for (b = 0; b < B; b++)
        for (t = 0; t < T; t++) {
            const attn_float *g = dout + ((size_t)b * T + t) * C;
            if (dinp) attn_axpy((size_t)C, 1, g, dinp + ((size_t)b * T + t) * C);
            if (dtable) attn_axpy((size_t)C, 1, g, dtable + (size_t)t * C);
        }
    return ATTN_OK;
}

ATTNDEF attn_status attn_pos_sinusoidal(attn_float *pe, int T, int C)
{
    int t, k;
    ATTN__NEED(pe);
    ATTN__TRY(attn__rows(__func__, T, C));
    for (t = 0; t < T; t++)
        for (k = 0; 2 * k < C; k++) {
            double a = t / pow(10000.0, 2.0 * k / C);
            pe[(size_t)t * C + 2 * k] = (attn_float)sin(a);
            if (2 * k + 1 < C) pe[(size_t)t * C + 2 * k + 1] = (attn_float)cos(a);
        }
    return ATTN_OK;
}

ATTNDEF attn_status attn_rope_tables(attn_float *cosv, attn_float *sinv, int T, int dh, int offset,
                                     attn_float theta)
{
    double f;
    int t, i;
    ATTN__NEED(cosv); ATTN__NEED(sinv);
    ATTN__TRY(attn__rows(__func__, T, dh));
    if (dh % 2) return attn__fail(ATTN_ERR_SHAPE, "attn_rope_tables: dh = %d must be even", dh);
    if (offset < 0 || !(theta > 1))
        return attn__fail(ATTN_ERR_ARG, "attn_rope_tables: offset must be >= 0 and theta > 1");
    for (i = 0; i < dh / 2; i++) /* by columns: one power per frequency */
        for (t = 0, f = pow((double)theta, -2.0 * i / dh); t < T; t++) {
            double a = ((double)t + offset) * f;
            cosv[(size_t)t * (dh / 2) + i] = (attn_float)cos(a);
            sinv[(size_t)t * (dh / 2) + i] = (attn_float)sin(a);
        }
    return ATTN_OK;
}

static attn_status attn__rope_check(const char *fn, const attn_float *a, const attn_float *b,
                                    const attn_float *c, const attn_float *s, int N, int T, int dh)
{
    size_t n;
    if (!a || !b || !c || !s) return attn__fail(ATTN_ERR_ARG, "%s: a pointer argument is NULL", fn);
    if (N < 1 || T < 1 || dh < 2 || dh % 2)
        return attn__fail(ATTN_ERR_SHAPE, "%s: N = %d, T = %d must be >= 1, dh = %d even and >= 2", fn, N, T,
                          dh);
    if (!attn__count3(&n, (size_t)N, (size_t)T, (size_t)dh))
        return attn__fail(ATTN_ERR_OVERFLOW, "%s: sizes overflow size_t", fn);
    return ATTN_OK;
}

ATTNDEF attn_status attn_rope_forward(attn_float *out, const attn_float *inp, const attn_float *cosv,
                                      const attn_float *sinv, int N, int T, int dh)
{
    ATTN__TRY(attn__rope_check(__func__, out, inp, cosv, sinv, N, T, dh));
    ATTN__ISA(rope)(out, inp, cosv, sinv, N, T, dh, 1, 0);
    return ATTN_OK;
}

ATTNDEF attn_status attn_rope_backward(attn_float *dinp, const attn_float *dout,
                                       const attn_float *cosv, const attn_float *sinv, int N, int T,
                                       int dh)
{
    ATTN__TRY(attn__rope_check(__func__, dinp, dout, cosv, sinv, N, T, dh));
    ATTN__ISA(rope)(dinp, dout, cosv, sinv, N, T, dh, -1, 1); /* y = R x  =>  dx += R^T dy */
    return ATTN_OK;
}

/* T5's bucket of a distance n >= 0 among nb buckets, logarithmic from nb / 2 up to md > nb / 2;
   lmd = log(md / (nb / 2)). */
static int attn__t5_bucket_of(int n, int nb, double lmd)
{
    int me = nb / 2, b;
    if (n < me) return n;
    b = me + (int)(log((double)n / me + 1.1920928955078125e-7) / lmd * (nb - me));
    return b < nb - 1 ? b : nb - 1;
}

ATTNDEF int attn_t5_bucket(int i, int j, int nb)
{
    if (nb < 2) return attn__fail(ATTN_ERR_ARG, "%s: nb = %d buckets, at least 2", __func__, nb), -1;
    return attn__t5_bucket_of(i > j ? i - j : 0, nb, log((double)nb / (nb / 2)));
}

static attn_status attn__t5_check(const char *fn, int H, int Tq, int Tk, int nb)
{
    size_t n;
    if (H < 1 || Tq < 1 || Tk < 1 || nb < 2)
        return attn__fail(ATTN_ERR_SHAPE, "%s: H = %d, Tq = %d, Tk = %d must be >= 1 and nb = %d >= 2", fn, H,
                          Tq, Tk, nb);
    if (!attn__count3(&n, (size_t)H, (size_t)Tq, (size_t)Tk))
        return attn__fail(ATTN_ERR_OVERFLOW, "%s: sizes overflow size_t", fn);
    return ATTN_OK;
}

/* The bucket map between bias[H, Tq, Tk] and table[H, nb]: gather (forward) or scatter-add (backward). */
static void attn__t5_map(attn_float *table, attn_float *bias, int H, int Tq, int Tk, int nb, int scatter)
{
    int h, i, j;
    for (i = 0; i < Tq; i++)
        for (j = 0; j < Tk; j++) {
            int b = attn_t5_bucket(i + Tk - Tq, j, nb);
            for (h = 0; h < H; h++) {
                attn_float *t = table + (size_t)h * nb + b, *x = bias + ((size_t)h * Tq + i) * Tk + j;
                if (scatter) *t += *x;
                else *x = *t;
            }
        }
}

ATTNDEF attn_status attn_t5_bias_forward(attn_float *bias, const attn_float *table, int H, int Tq,
                                         int Tk, int nb)
{
    ATTN__NEED(bias); ATTN__NEED(table);
    ATTN__TRY(attn__t5_check(__func__, H, Tq, Tk, nb));
    attn__t5_map(attn__unconst(table), bias, H, Tq, Tk, nb, 0); /* gather: the table is only read */
    return ATTN_OK;
}

ATTNDEF attn_status attn_t5_bias_backward(attn_float *dtable, const attn_float *dbias, int H, int Tq,
                                          int Tk, int nb)
{
    ATTN__NEED(dtable); ATTN__NEED(dbias);
    ATTN__TRY(attn__t5_check(__func__, H, Tq, Tk, nb));
    attn__t5_map(dtable, attn__unconst(dbias), H, Tq, Tk, nb, 1); /* bias = table[bucket]: dtable += dbias */
    return ATTN_OK;
}

ATTNDEF attn_status attn_dropout_forward(attn_float *out, unsigned char *keep, const attn_float *inp,
                                         size_t n, attn_float p, attn_rng *r)
{
    size_t i;
    attn_float s;
    ATTN__NEED(out); ATTN__NEED(keep); ATTN__NEED(inp); ATTN__NEED(r);
    ATTN__TRY(attn__count(__func__, n));
    if (!(p >= 0 && p < 1)) return attn__fail(ATTN_ERR_ARG, "attn_dropout_forward: p must be in [0, 1)");
    s = 1 / (1 - p);
    for (i = 0; i < n; i++) {
        keep[i] = p == 0 || attn_rng_uniform(r) >= p;
        out[i] = keep[i] ? inp[i] * s : 0;
    }
    return ATTN_OK;
}

ATTNDEF attn_status attn_dropout_backward(attn_float *dinp, const attn_float *dout,
                                          const unsigned char *keep, size_t n, attn_float p)
{
    size_t i;
    attn_float s;
    ATTN__NEED(dinp); ATTN__NEED(dout); ATTN__NEED(keep);
    ATTN__TRY(attn__count(__func__, n));
    if (!(p >= 0 && p < 1)) return attn__fail(ATTN_ERR_ARG, "attn_dropout_backward: p must be in [0, 1)");
    s = 1 / (1 - p);
    for (i = 0; i < n; i++)
        if (keep[i]) dinp[i] += dout[i] * s;
    return ATTN_OK;
}

ATTNDEF attn_status attn_mse_forward(attn_float *loss, const attn_float *pred,
                                     const attn_float *target, size_t n, attn_reduce red)
{
    size_t i;
    double s = 0;
    ATTN__NEED(loss); ATTN__NEED(pred); ATTN__NEED(target);
    ATTN__TRY(attn__count(__func__, n));
    if (red != ATTN_REDUCE_SUM && red != ATTN_REDUCE_MEAN)
        return attn__fail(ATTN_ERR_ARG, "attn_mse_forward: unknown reduction %d", (int)red);
    for (i = 0; i < n; i++) s += ((double)pred[i] - target[i]) * ((double)pred[i] - target[i]);
    *loss = (attn_float)(red == ATTN_REDUCE_MEAN ? s / (double)n : s);
    return ATTN_OK;
}

ATTNDEF attn_status attn_mse_backward(attn_float *dpred, const attn_float *pred,
                                      const attn_float *target, size_t n, attn_reduce red,
                                      attn_float dloss)
{
    size_t i;
    attn_float k;
    ATTN__NEED(dpred); ATTN__NEED(pred); ATTN__NEED(target);
    ATTN__TRY(attn__count(__func__, n));
    if (red != ATTN_REDUCE_SUM && red != ATTN_REDUCE_MEAN)
        return attn__fail(ATTN_ERR_ARG, "attn_mse_backward: unknown reduction %d", (int)red);
    k = 2 * dloss / (red == ATTN_REDUCE_MEAN ? (attn_float)n : 1); /* loss = sum (p - t)^2 [/ n] */
    for (i = 0; i < n; i++) dpred[i] += k * (pred[i] - target[i]);
    return ATTN_OK;
}

static attn_status attn__targets(const char *fn, const int *targets, int N, int V)
{
    int n;
    for (n = 0; n < N; n++)
        if (targets[n] >= V)
            return attn__fail(ATTN_ERR_ARG, "%s: targets[%d] = %d is >= V = %d", fn, n, targets[n], V);
    return ATTN_OK;
}

ATTNDEF attn_status attn_cross_entropy_forward(attn_float *losses, attn_float *probs,
                                               const attn_float *logits, const int *targets, int N,
                                               int V)
{
    int n;
    ATTN__NEED(losses); ATTN__NEED(probs); ATTN__NEED(logits); ATTN__NEED(targets);
    ATTN__TRY(attn__rows(__func__, N, V));
    ATTN__TRY(attn__targets(__func__, targets, N, V));
    for (n = 0; n < N; n++) { /* loss = logsumexp(x) - x[target], exact where -log(prob) underflows */
        const attn_float *x = logits + (size_t)n * V;
        attn_float *p = probs + (size_t)n * V, m = attn_max((size_t)V, x), s;
        s = ATTN__ISA(exp_row)((size_t)V, x, m, p);
        attn_scale((size_t)V, 1 / s, p);
        losses[n] = targets[n] < 0 ? 0 : (attn_float)(m + log((double)s) - x[targets[n]]);
    }
    return ATTN_OK;
}

ATTNDEF attn_status attn_cross_entropy_backward(attn_float *dlogits, const attn_float *dlosses,
                                                attn_float scale, const attn_float *probs,
                                                const int *targets, int N, int V)
{
    int n, v;
    ATTN__NEED(dlogits); ATTN__NEED(probs); ATTN__NEED(targets);
    ATTN__TRY(attn__rows(__func__, N, V));
    ATTN__TRY(attn__targets(__func__, targets, N, V));
    for (n = 0; n < N; n++) { /* loss = -log softmax(x)[t]  =>  dx += dloss (p - onehot(t)) */
        attn_float d = dlosses ? dlosses[n] : scale, *g = dlogits + (size_t)n * V;
        const attn_float *p = probs + (size_t)n * V;
        if (targets[n] < 0) continue;
        for (v = 0; v < V; v++) g[v] += d * p[v];
        g[targets[n]] -= d;
    }
    return ATTN_OK;
}

/* ---- 6. attention ----------------------------------------------------------------------------- */

#ifdef ATTN_DOUBLE
#define ATTN__LOG log
#define ATTN__TINY 1e-300 /* EA: a normaliser below this counts as zero */
#else
#define ATTN__LOG logf
#define ATTN__TINY 1e-30f
#endif
#define ATTN__BR 64 /* query rows per tile */

/* Keys per tile: up to 256, in steps of 64 (the granule in which a window or block layout skips
   keys, see attn__next_keys). A quarter as many tiles per row as with 64 means a quarter of the
   partial sums of O stored and of the row bookkeeping. */
#define ATTN__BC 256
#define ATTN__BK 64

/* Scratch of one thread: tiles [BR, BC] of scores S, weights P, X (forward: the exponents; backward:
   dA) and visibility; [BR, dv] the output accumulator and (centered) the sum of the visible values;
   [BR] the running maximum m, the running sum l (backward: D) and (centered) the visible count n,
   then the shift; with dropout, the dropped weights [BR, BC] (backward); with several query tiles,
   the head's keys and values packed once for the products that read them (K^T and V^T panels). */
typedef struct {
    attn_float *S, *P, *X, *vis, *acc, *vsum, *m, *l, *n, *drop, *kpan, *vpan, *raw;
} attn__scored_ws;

/* The scratch's blocks in ws (NULL: only measured); its bytes, a multiple of ATTN_ALIGN. */
static size_t attn__scored_ws_map(const attn_attention_desc *d, attn_float *ws, attn__scored_ws *w)
{
    size_t tile = (size_t)ATTN__BR * ATTN__MIN(ATTN__BC, d->Tk), rows = (size_t)ATTN__BR * d->dv;
    attn_arena ar;
    attn__arena_plan(&ar, ws);
    w->S = attn__arena_floats(&ar, tile);
    w->P = attn__arena_floats(&ar, tile);
    w->X = attn__arena_floats(&ar, tile);
    w->vis = attn__arena_floats(&ar, tile);
    w->acc = attn__arena_floats(&ar, rows);
    w->vsum = attn__arena_floats(&ar, rows);
    w->m = attn__arena_floats(&ar, ATTN__BR);
    w->l = attn__arena_floats(&ar, ATTN__BR);
    w->n = attn__arena_floats(&ar, ATTN__BR);
    w->drop = attn__arena_floats(&ar, d->dropout > 0 ? tile : 0);
    /* the scores before the modifier's score() */
    w->raw = d->mod && (d->mod->vjp || d->mod->grad) ? attn__arena_floats(&ar, tile) : NULL;
    w->kpan = w->vpan = NULL;
    if (d->Tq > ATTN__BR) { /* several query tiles: the keys and values are packed once */
        w->kpan = attn__arena_floats(&ar, attn__panels_floats(d->dk, d->Tk));
        w->vpan = attn__arena_floats(&ar, attn__panels_floats(d->dv, d->Tk));
    }
    return ar.used;
}
static size_t attn__scored_floats(const attn_attention_desc *d)
{
    attn__scored_ws w;
    return attn__scored_ws_map(d, NULL, &w) / sizeof(attn_float);
}

/* Dropout's mask on a tile: X[r, c] *= 1 / (1 - p) if entry (i0 + r, j0 + c) is kept, else 0. The
   draw is a splitmix64 hash of (seed, p Tk + j) with p = i + Tk - Tq the query's key position: the
   same in forward and backward, for every batch element and head, independent of tiling and
   threads, and the same for a query whether all Tk or only the last Tq queries are computed. */
static void attn__tile_dropout(const attn_attention_desc *d, int i0, int br, int j0, int bc, attn_float *X)
{
    uint64_t keep = (uint64_t)((1 - (double)d->dropout) * 16777216.0); /* P(keep) in 24 bits */
    attn_float inv = (attn_float)(1 / (1 - (double)d->dropout));
    int r, c;
    if (d->dropout_mask) { /* the multipliers, computed once per call */
        const attn_float *mk = d->dropout_mask + (size_t)i0 * d->Tk + j0;
        ATTN__ISA(rows_op)(1, (size_t)br, (size_t)bc, mk, (size_t)d->Tk, X, (size_t)bc);
        return;
    }
    for (r = 0; r < br; r++)
        for (c = 0; c < bc; c++) {
            uint64_t z = d->dropout_seed +
                         0x9E3779B97F4A7C15ull *
                             ((uint64_t)(i0 + r + d->Tk - d->Tq) * (uint64_t)d->Tk + (uint64_t)(j0 + c) + 1);
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
            z ^= z >> 31;
            X[r * bc + c] *= (z >> 40) < keep ? inv : 0;
        }
}

/* The score scale: d->scale, or 1 / sqrt(dk) when it is 0. */
static attn_float attn__score_scale(const attn_attention_desc *d)
{
    return d->scale != 0 ? d->scale : 1 / (attn_float)sqrt((double)d->dk);
}

/* Whether every entry of n rows of w floats (row stride ld) is finite. The engines check each (b, h)
   slice of their inputs once; when one is not, they take the guarded path, in which a position a row
   cannot see never enters that row's products (a weight of 0 times an Inf value would be NaN). */
static int attn__all_finite(const attn_float *x, int n, int w, int ld)
{
    attn__v a0 = attn__vset1(0), a1 = a0, a2 = a0, a3 = a0, zero = a0;
    attn_float t = 0;
    int r, c;
    if (ld == w && (size_t)n * w <= INT_MAX) w *= n, n = 1; /* contiguous: one long row (dh < a vector) */
    for (r = 0; r < n; r++) {
        const attn_float *p = x + (size_t)r * ld;
        for (c = 0; c + 4 * ATTN__VW <= w; c += 4 * ATTN__VW) { /* four chains: one waits for its FMA */
            a0 = attn__vfma(attn__vload(p + c), zero, a0); /* Inf, NaN: NaN */
            a1 = attn__vfma(attn__vload(p + c + ATTN__VW), zero, a1);
            a2 = attn__vfma(attn__vload(p + c + 2 * ATTN__VW), zero, a2);
            a3 = attn__vfma(attn__vload(p + c + 3 * ATTN__VW), zero, a3);
        }
        for (; c + ATTN__VW <= w; c += ATTN__VW) a0 = attn__vfma(attn__vload(p + c), zero, a0);
        for (; c < w; c++) t += p[c] * 0;
    }
    return attn__finite((double)(attn__vhsum(attn__vadd(attn__vadd(a0, a1), attn__vadd(a2, a3))) + t));
}

/* The guarded form of a tile's product, over the pairs (r, c) with vis[r, c] != 0 only (A, vis
   [br, bc]; B and C rows of n floats with strides ldb, ldc):
     trans 0: C[r] += alpha sum_c A[r, c] B[c];   trans 1: C[c] += alpha sum_r A[r, c] B[r]. */
static void attn__guarded_product(int trans, int br, int bc, int n, attn_float alpha, const attn_float *A,
                                  const attn_float *vis, const attn_float *B, int ldb, attn_float *C, int ldc)
{
    int r, c;
    for (r = 0; r < br; r++)
        for (c = 0; c < bc; c++)
            if (vis[r * bc + c] != 0)
                attn_axpy((size_t)n, alpha * A[r * bc + c], B + (size_t)(trans ? r : c) * ldb,
                          C + (size_t)(trans ? c : r) * ldc);
}

/* x[i] = 0 where vis[i] is 0, for n entries (the guarded path: what a row cannot see is exactly 0). */
static void attn__zero_hidden(attn_float *x, const attn_float *vis, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) x[i] = vis[i] != 0 ? x[i] : 0;
}

/* Centered attention's extra sums over key tile [j0, j0 + bc): vsum[r] += vis[r] V, n[r] += sum vis[r]. */
static void attn__visible_sums(const attn_float *vis, const attn_float *Vt, int br, int bc, int dv,
                               attn_float *vsum, attn_float *n, int guard)
{
    int r;
    if (guard) attn__guarded_product(0, br, bc, dv, 1, vis, vis, Vt, dv, vsum, dv);
    else attn_gemm(0, 0, br, dv, bc, 1, vis, bc, Vt, dv, 1, vsum, dv);
    for (r = 0; r < br; r++) n[r] += attn_sum((size_t)bc, vis + r * bc);
}

static size_t attn__scored_workspace(const attn_attention_desc *d)
{
    return (attn__scored_floats(d) * (size_t)attn_get_threads()) * sizeof(attn_float) + ATTN_ALIGN;
}

/* The row of a descriptor's kind (the checks have made sure there is one). */
static const attn_kind_info *attn__row(const attn_attention_desc *d) { return attn_kind_get(d->kind); }

/* The flags of a kind's row (0 for a kind without one: the checks refuse it on their own). */
static unsigned attn__flags(attn_kind kind)
{
    const attn_kind_info *r = attn_kind_get(kind);
    return r ? r->flags : 0;
}

static attn_status attn__scored_forward(const attn_attention_desc *d, attn_float *O, attn_float *stats,
                                        attn_float *weights, const attn_float *Q, const attn_float *K,
                                        const attn_float *V, void *work, size_t work_bytes);
static int attn__bm_block(void *ctx, int b, int h, int p0, int p1, int j0, int j1);
static const attn_mod *attn__provided_mod(const attn_score_mod *f);

static attn_status attn__attention_check(const char *fn, const attn_attention_desc *d, size_t work_bytes)
{
    size_t n;
    if (!d) return attn__fail(ATTN_ERR_ARG, "%s: the descriptor is NULL", fn);
    if (!attn_kind_get(d->kind))
        return attn__fail(ATTN_ERR_ARG, "%s: unknown attention kind %d", fn, (int)d->kind);
    if (d->B < 1 || d->H < 1 || d->Tq < 1 || d->Tk < 1 || d->dk < 1 || d->dv < 1)
        return attn__fail(ATTN_ERR_SHAPE,
                          "%s: B = %d, H = %d, Tq = %d, Tk = %d, dk = %d, dv = %d must all be >= 1", fn, d->B,
                          d->H, d->Tq, d->Tk, d->dk, d->dv);
    if (!attn__count3(&n, (size_t)d->B * (size_t)d->H, (size_t)ATTN__MAX(d->Tq, d->Tk),
                      (size_t)ATTN__MAX(ATTN__MAX(d->dk, d->dv), ATTN__MAX(d->Tq, d->Tk))))
        return attn__fail(ATTN_ERR_OVERFLOW, "%s: sizes overflow size_t", fn);
    if (!attn__finite((double)d->scale)) /* from the bits: a NaN test may be folded away under -ffast-math */
        return attn__fail(ATTN_ERR_ARG, "%s: scale = %g must be finite", fn, (double)d->scale);
    if (d->window < 0) return attn__fail(ATTN_ERR_ARG, "%s: window = %d must be >= 0", fn, d->window);
    if (d->kv_rows && (d->kv_rows < d->Tk || !attn__count3(&n, (size_t)d->B * d->H, (size_t)d->kv_rows,
                                                            (size_t)ATTN__MAX(d->dk, d->dv))))
        return attn__fail(ATTN_ERR_SHAPE, "%s: kv_rows = %d must be 0 or >= Tk = %d (and its sizes fit)", fn,
                          d->kv_rows, d->Tk);
    if (d->mod &&
        (attn__row(d)->forward != attn__scored_forward || (attn__flags(d->kind) & ATTN_KF_SUBHEADS)))
        return attn__fail(ATTN_ERR_ARG,
                          "%s: score and mask modifiers are for the tiled engine's kinds (softmax, ea, cog, "
                          "sigmoid, linear_raw, centered), not %s", fn, attn_kind_get(d->kind)->name);
    if (d->mod && d->mod->block == attn__bm_block) {
        const attn_block_mask *bm = (const attn_block_mask *)d->mod->ctx;
        if (bm->Tq != d->Tq || bm->Tk != d->Tk || (bm->B != 1 && bm->B != d->B) ||
            (bm->H != 1 && bm->H != d->H))
            return attn__fail(ATTN_ERR_SHAPE, "%s: the block mask was built for B %d, H %d, Tq %d, Tk %d, "
                              "not B %d, H %d, Tq %d, Tk %d", fn, bm->B, bm->H, bm->Tq, bm->Tk, d->B, d->H,
                              d->Tq, d->Tk);
    }
    if (d->mod) { /* a provided modifier reads its parameters by head: no more heads than it was made for */
        const attn_score_mod *f = d->mod;
        const attn_mod *m;
        if (f->block == attn__bm_block) f = &((const attn_block_mask *)f->ctx)->mod;
        if ((m = attn__provided_mod(f)) != NULL && d->H > m->cfg.H)
            return attn__fail(ATTN_ERR_SHAPE, "%s: the modifier was made for H = %d heads, not %d", fn,
                              m->cfg.H, d->H);
    }
    if (d->segment && (attn__flags(d->kind) & ATTN_KF_LINEAR_TIME))
        return attn__fail(ATTN_ERR_ARG, "%s: the linear-time kinds (kernel, taylor) have no segments", fn);
    if (d->segment && d->Tq > d->Tk)
        return attn__fail(ATTN_ERR_SHAPE, "%s: segments need Tq <= Tk (got %d > %d)", fn, d->Tq, d->Tk);
    if (d->window > 0 && (attn__flags(d->kind) & ATTN_KF_LINEAR_TIME))
        return attn__fail(ATTN_ERR_ARG, "%s: the linear-time kinds (kernel, taylor) have no sparse pattern",
                          fn);
    if (d->block < 0 || (d->block > 0 && !d->layout))
        return attn__fail(ATTN_ERR_ARG, "%s: block = %d needs block >= 0 and a layout", fn, d->block);
    if (d->block > 0 && (attn__flags(d->kind) & ATTN_KF_LINEAR_TIME))
        return attn__fail(ATTN_ERR_ARG, "%s: the linear-time kinds (kernel, taylor) have no sparse pattern",
                          fn);
    if (!(d->dropout >= 0 && d->dropout < 1))
        return attn__fail(ATTN_ERR_ARG, "%s: dropout = %g must be in [0, 1)", fn, (double)d->dropout);
    if (d->dropout > 0 && (attn__flags(d->kind) & ATTN_KF_NO_DROPOUT))
        return attn__fail(ATTN_ERR_ARG, "%s: %s attention has no dropout", fn, attn_kind_get(d->kind)->name);
    if ((attn__flags(d->kind) & ATTN_KF_SUBHEADS) && d->dk % 2)
        return attn__fail(ATTN_ERR_SHAPE,
                          "%s: differential attention splits q, k into two sub-heads: dk = %d must be even",
                          fn, d->dk);
    if (d->kv_heads < 0 || (d->kv_heads && d->H % d->kv_heads))
        return attn__fail(ATTN_ERR_SHAPE, "%s: kv_heads = %d must divide H = %d (0: H)", fn, d->kv_heads,
                          d->H);
    if (d->kv_heads && d->kv_heads != d->H &&
        (!attn_kind_get(d->kind)->score || (attn__flags(d->kind) & (ATTN_KF_SUBHEADS | ATTN_KF_MIXES_HEADS |
                                                                    ATTN_KF_PARAMS | ATTN_KF_LINEAR_TIME))))
        return attn__fail(ATTN_ERR_ARG,
                          "%s: grouped-query attention is for the scored kinds (softmax, ea, cog, ...), "
                          "not %s",
                          fn, attn_kind_get(d->kind)->name);
    if (d->window > 0 && d->dilation) {
        int h;
        for (h = 0; h < d->H; h++)
            if (d->dilation[h] < 1)
                return attn__fail(ATTN_ERR_ARG, "%s: dilation[%d] = %d must be >= 1", fn, h, d->dilation[h]);
    }
    if (work_bytes != (size_t)-1 &&
        work_bytes < attn_attention_workspace(d)) /* (size_t)-1: the descriptor alone */
        return attn__fail(ATTN_ERR_ARG, "%s: work has %lu bytes, attn_attention_workspace() asks for %lu", fn,
                          (unsigned long)work_bytes, (unsigned long)attn_attention_workspace(d));
    return ATTN_OK;
}

/* 1 while attn_attention_forward / _backward run an engine on inputs it found finite: the engines
   then skip their own checks (attn__args.finite). */
static ATTN__TLS int attn__finite_call = 0;
/* While attn_attention_forward runs an engine that checks its slices as it goes: where the engines
   report a slice with a non-finite value (attn__args.seen). */
static ATTN__TLS int *attn__guard_report = NULL;

/* Every argument of a forward or backward call, handed to the per-(b, h) workers. */
typedef struct {
    const attn_attention_desc *d;
    attn_float *O, *stats, *weights;   /* forward outputs */
    attn_float *dQ, *dK, *dV, *dbias;  /* backward outputs */
    const attn_float *Q, *K, *V, *dO, *Oin, *stats_in;
    int ldk;    /* row stride of Q, K, dQ, dK: dk, or 2 dk for differential attention's sub-heads */
    int finite; /* Q, K, V (and dO, O, stats) are finite: no (b, h) takes the guarded path */
    int *seen;  /* set to 1 when a (b, h) takes the guarded path; NULL: not asked */
} attn__args;

/* Records that a slice took the guarded path (any worker thread may). */
static void attn__report_guard(const attn__args *a)
{
    if (!a->seen) return;
#ifdef _OPENMP
#pragma omp atomic write
#endif
    *a->seen = 1;
}
typedef void (*attn__head_fn)(const attn__args *a, int b, int h, attn_float *ws);

/* The key and value slice of query head h in batch b: b H + h, or with grouped-query attention
   b kv_heads + h / (H / kv_heads). */
static size_t attn__kv_slice(const attn_attention_desc *d, int b, int h)
{
    int kvh = d->kv_heads ? d->kv_heads : d->H;
    return (size_t)b * kvh + (size_t)(h / (d->H / kvh));
}

/* The rows per head slice of K and V: kv_rows for a cache, else Tk. */
static size_t attn__kv_rows(const attn_attention_desc *d)
{
    return (size_t)(d->kv_rows ? d->kv_rows : d->Tk);
}

/* Checks the arguments of a forward (backward) call and packs them into *a for the workers. */
static attn_status attn__forward_args(attn__args *a, const attn_attention_desc *d, attn_float *O,
                                      attn_float *stats, attn_float *weights, const attn_float *Q,
                                      const attn_float *K, const attn_float *V, const void *work,
                                      size_t work_bytes)
{
    memset(a, 0, sizeof *a);
    ATTN__TRY(attn__attention_check("attn_attention_forward", d, work_bytes));
    if (!O || !stats || !Q || !K || !V || !work)
        return attn__fail(ATTN_ERR_ARG,
                          "attn_attention_forward: O, stats, Q, K, V and work must not be NULL");
    a->d = d; a->O = O; a->stats = stats; a->weights = weights; a->Q = Q; a->K = K; a->V = V; a->ldk = d->dk;
    a->finite = attn__finite_call;
    a->seen = attn__guard_report;
    return ATTN_OK;
}

static attn_status attn__backward_args(attn__args *a, const attn_attention_desc *d,
                                       const attn_attention_grads *g, const attn_float *dO,
                                       const attn_float *Q, const attn_float *K, const attn_float *V,
                                       const attn_float *O, const attn_float *stats, const void *work,
                                       size_t work_bytes)
{
    memset(a, 0, sizeof *a);
    ATTN__TRY(attn__attention_check("attn_attention_backward", d, work_bytes));
    if (!g || !g->dQ || !g->dK || !g->dV || !dO || !Q || !K || !V || !O || !stats || !work)
        return attn__fail(
            ATTN_ERR_ARG,
            "attn_attention_backward: g, dQ, dK, dV, dO, Q, K, V, O, stats and work must not be NULL");
    a->d = d; a->dQ = g->dQ; a->dK = g->dK; a->dV = g->dV; a->dbias = g->dbias; a->dO = dO;
    a->Q = Q; a->K = K; a->V = V; a->Oin = O; a->stats_in = stats; a->ldk = d->dk;
    a->finite = attn__finite_call;
    return ATTN_OK;
}

/* body(ctx, i, tid) for i = 0 .. n-1, spread over the threads (tid = the thread's number, dynamic
   schedule) when more than one is set and n > 1; otherwise a plain loop with tid 0, since even an
   OpenMP region that runs on one thread costs about a microsecond (a visible share of a small
   model's step). */
typedef void (*attn__body_fn)(void *ctx, int i, int tid);
static void attn__par_for(int n, attn__body_fn body, void *ctx)
{
    int i;
#ifdef ATTN__OMP
    if (attn_get_threads() > 1 && n > 1) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(attn_get_threads())
        for (i = 0; i < n; i++) body(ctx, i, omp_get_thread_num());
        return;
    }
#endif
    for (i = 0; i < n; i++) body(ctx, i, 0);
}

/* Runs fn on every (b, h) pair, each thread with its own `floats` of work. Threads take whole
   units, so no two write the same rows: a unit is a pair, or with `group` > 1 (a backward pass of
   grouped-query attention, whose heads share dK and dV) the group's heads in order; with by_head
   (a dbias, which the batch shares) a unit is a head (or a group) over the whole batch in order.
   Either way the result does not depend on the threads. */
typedef struct {
    const attn__args *a;
    attn__head_fn fn;
    attn_float *ws;
    size_t floats;
    int by_head, group;
} attn__heads_job;

/* Job w: unit (w / U, w % U) of U = H / group units a batch, or with by_head unit w over the batch. */
static void attn__heads_body(void *ctx, int w, int tid)
{
    const attn__heads_job *j = (const attn__heads_job *)ctx;
    int U = j->a->d->H / j->group, u = j->by_head ? w : w % U, b, h;
    for (b = j->by_head ? 0 : w / U; b < (j->by_head ? j->a->d->B : w / U + 1); b++)
        for (h = u * j->group; h < (u + 1) * j->group; h++)
            j->fn(j->a, b, h, j->ws + j->floats * (size_t)tid);
}

static void attn__run_heads(const attn__args *a, attn__head_fn fn, void *work, size_t floats, int by_head,
                            int group)
{
    attn__heads_job j;
    j.a = a;
    j.fn = fn;
    j.ws = attn__align_ptr(work, 0);
    j.floats = floats;
    j.by_head = by_head;
    j.group = group;
    attn__par_for((by_head ? 1 : a->d->B) * (a->d->H / group), attn__heads_body, &j);
}

/* Whether the sparse pattern lets the query at key position p see key j (Beltagy et al. 2020; Zaheer et al.
   2020). */
static int attn__in_pattern(const attn_attention_desc *d, int h, int p, int j)
{
    int dil, m;
    if (d->window <= 0) return 1;
    if (d->global && ((p >= 0 && p < d->Tk && d->global[p]) || d->global[j])) return 1;
    dil = d->dilation ? d->dilation[h] : 1;
    if ((j - p) % dil) return 0;
    m = (j - p) / dil;
    return m >= -d->window && m <= (d->causal ? 0 : d->window);
}

/* Whether the block layout lets query i see key j. */
static int attn__in_layout(const attn_attention_desc *d, int h, int i, int j)
{
    int nq, nk;
    if (d->block <= 0) return 1;
    nq = (d->Tq + d->block - 1) / d->block;
    nk = (d->Tk + d->block - 1) / d->block;
    return d->layout[((size_t)h * nq + i / d->block) * nk + j / d->block] != 0;
}

/* Whether query i of batch element b sees key j in head h: the causal limit, the key mask, the
   segments, the sparse pattern and the block layout. */
static int attn__sees(const attn_attention_desc *d, int b, int h, int i, int j)
{
    int p = i + d->Tk - d->Tq; /* the query's key position */
    return (!d->causal || j <= p) && (!d->key_mask || d->key_mask[(size_t)b * d->Tk + j]) &&
           (!d->segment || d->segment[(size_t)b * d->Tk + p] == d->segment[(size_t)b * d->Tk + j]) &&
           attn__in_pattern(d, h, p, j) && attn__in_layout(d, h, i, j) &&
           (!d->mod || !d->mod->mask || d->mod->mask(d->mod->ctx, b, h, p, j));
}

/* What the mask modifier's block function says of the tile (ATTN_BLOCK_PARTIAL without one). */
static int attn__mod_block(const attn_attention_desc *d, int b, int h, int i0, int br, int j0, int bc)
{
    int shift = d->Tk - d->Tq;
    if (!d->mod || !d->mod->mask || !d->mod->block) return ATTN_BLOCK_PARTIAL;
    return d->mod->block(d->mod->ctx, b, h, i0 + shift, i0 + br - 1 + shift, j0, j0 + bc - 1);
}

/* The smallest and largest segment id of positions [p0, p1] of batch row b (clipped to the keys). */
static void attn__segment_range(const attn_attention_desc *d, int b, int p0, int p1, int *lo, int *hi)
{
    const int *s = d->segment + (size_t)b * d->Tk;
    int p;
    *lo = INT_MAX, *hi = INT_MIN;
    for (p = ATTN__MAX(p0, 0); p <= ATTN__MIN(p1, d->Tk - 1); p++) {
        *lo = ATTN__MIN(*lo, s[p]);
        *hi = ATTN__MAX(*hi, s[p]);
    }
}

/* Whether a key tile [j0, j0 + bc) can hold anything the query tile [i0, i0 + br) of batch row b
   sees: segment ids whose ranges meet (documents packed in order skip each other's tiles), some
   block of the layout set, and through the window pattern its reach, a global key in the tile, or a
   global query row. */
static int attn__tile_live(const attn_attention_desc *d, int b, int h, int i0, int br, int j0, int bc)
{
    int shift = d->Tk - d->Tq, reach, c, any = 0, qb, kb, qlo, qhi, klo, khi;
    if (attn__mod_block(d, b, h, i0, br, j0, bc) == ATTN_BLOCK_EMPTY) return 0;
    if (d->segment) {
        attn__segment_range(d, b, i0 + shift, i0 + br - 1 + shift, &qlo, &qhi);
        attn__segment_range(d, b, j0, j0 + bc - 1, &klo, &khi);
        if (qhi < klo || khi < qlo) return 0;
    }
    for (qb = i0 / ATTN__MAX(d->block, 1); d->block > 0 && !any && qb <= (i0 + br - 1) / d->block; qb++)
        for (kb = j0 / d->block; !any && kb <= (j0 + bc - 1) / d->block; kb++)
            any = attn__in_layout(d, h, qb * d->block, kb * d->block);
    if (d->block > 0 && !any) return 0;
    if (d->window <= 0) return 1;
    reach = d->window * (d->dilation ? d->dilation[h] : 1);
    if (j0 + bc - 1 >= i0 + shift - reach && j0 <= i0 + br - 1 + shift + reach) return 1;
    for (c = 0; d->global && c < bc; c++)
        if (d->global[j0 + c]) return 1;
    for (c = 0; d->global && c < br; c++)
        if (i0 + c + shift >= 0 && i0 + c + shift < d->Tk && d->global[i0 + c + shift]) return 1;
    return 0;
}

/* Whether anything but the causal limit hides keys: a key mask, segments, a sparse pattern, a block
   layout or a mask modifier. */
static int attn__masked(const attn_attention_desc *d)
{
    return d->key_mask || d->segment || d->window > 0 || d->block > 0 || (d->mod && d->mod->mask);
}

/* Whether every query of the tile [i0, i0 + br) of batch row b sees every key of [j0, j0 + bc) but
   for the causal limit: no key mask, window or block layout, one segment for both, and a mask
   modifier's block full. */
static int attn__tile_common(const attn_attention_desc *d, int b, int h, int i0, int br, int j0, int bc)
{
    int shift = d->Tk - d->Tq, qlo = 0, qhi = 0, klo = 0, khi = 0;
    if (!attn__masked(d)) return 1;
    if (d->segment) {
        attn__segment_range(d, b, i0 + shift, i0 + br - 1 + shift, &qlo, &qhi);
        attn__segment_range(d, b, j0, j0 + bc - 1, &klo, &khi);
    }
    return !d->key_mask && qlo == qhi && klo == khi && qlo == klo && d->window <= 0 && d->block <= 0 &&
           (!d->mod || !d->mod->mask || attn__mod_block(d, b, h, i0, br, j0, bc) == ATTN_BLOCK_FULL);
}

/* What the query tile [i0, i0 + br) sees of keys [j0, j0 + bc) but for the causal limit: nothing
   (ATTN_BLOCK_EMPTY), all of them (_FULL) or some (_PARTIAL). */
ATTN__INLINE int attn__keys_seen(const attn_attention_desc *d, int b, int h, int i0, int br, int j0, int bc)
{
    return !attn__tile_live(d, b, h, i0, br, j0, bc)    ? ATTN_BLOCK_EMPTY
           : attn__tile_common(d, b, h, i0, br, j0, bc) ? ATTN_BLOCK_FULL
                                                        : ATTN_BLOCK_PARTIAL;
}

/* The next keys [j0, j0 + *bc) from `from` on for the query tile [i0, i0 + br): whole granules
   of ATTN__BK keys it may see (attn__tile_live), up to ATTN__BC of them in a row, those it cannot
   see skipped; j0 = jend when none is left. Where nothing is skipped the tiles are the same with or
   without a pattern, and so are the results, bit for bit. */
static int attn__next_keys(const attn_attention_desc *d, int b, int h, int i0, int br, int from, int jend,
                           int *bc)
{
    int j0 = from, j1;
    while (j0 < jend && !attn__tile_live(d, b, h, i0, br, j0, ATTN__MIN(ATTN__BK, jend - j0))) j0 += ATTN__BK;
    for (j1 = j0; j1 < jend && j1 - j0 < ATTN__BC; j1 += ATTN__BK)
        if (!attn__tile_live(d, b, h, i0, br, j1, ATTN__MIN(ATTN__BK, jend - j1))) break;
    *bc = ATTN__MIN(j1, jend) - j0;
    return ATTN__MIN(j0, jend);
}

/* C [br, bc] = alpha X[i0 .. i0 + br) Y[j0 .. j0 + bc)^T + beta C for a tile, with X [., n] and
   Y [., n] row-major (row stride ld): from Y^T's panels Yt (attn__panels_pack, Tk columns) when the
   head has them, else reading Y in place. */
static void attn__tile_product(int br, int bc, int n, attn_float alpha, const attn_float *X,
                               const attn_float *Y, int ld, const attn_float *Yt, int Tk, int i0, int j0,
                               attn_float beta, attn_float *C)
{
    if (!Yt || !ATTN__ISA(gemm_panels)(br, bc, n, alpha, X + (size_t)i0 * ld, ld, Yt, Tk, j0, beta, C, bc))
        attn_gemm(0, 1, br, bc, n, alpha, X + (size_t)i0 * ld, ld, Y + (size_t)j0 * ld, ld, beta, C, bc);
}

/* Scores of one tile: S[r, c] = scale q_{i0+r} . k_{j0+c} + bias, and vis[r, c] whether key j0+c is
   visible to query i0+r (stored as 0/1 in P, which the caller overwrites); Kt: K^T's panels or
   NULL (attn__tile_product). guard: S is set to 0 where vis is 0, so that a non-finite key a row
   cannot see leaves no trace in it. Returns the first row from which every row sees the whole tile
   when no mask, segment, window or block layout applies (br otherwise): its callers skip the mask.
   lazy: those rows' visibility (all ones) is not written. */
static int attn__tile_scores(const attn_attention_desc *d, int b, int h, int i0, int br, int j0, int bc,
                             const attn_float *Qp, const attn_float *Kp, int ld, const attn_float *Kt,
                             attn_float scale, attn_float *S, attn_float *vis, int guard, int lazy,
                             attn_float *raw)
{
    int r, c, shift = d->Tk - d->Tq;
    int common = attn__tile_common(d, b, h, i0, br, j0, bc); /* ones up to the causal limit */
    const attn_score_row *k = attn__row(d)->score;
    attn_float off = k && k->offset ? k->offset(d->Tk) : 0; /* the kind's constant shift (sigmoid: -ln Tk) */
    attn__tile_product(br, bc, d->dk, scale, Qp, Kp, ld, Kt, d->Tk, i0, j0, 0, S);
    if (d->bias) /* S += the bias's tile */
        ATTN__ISA(rows_op)(0, (size_t)br, (size_t)bc, d->bias + ((size_t)h * d->Tq + i0) * d->Tk + j0,
                      (size_t)d->Tk, S, (size_t)bc);
    if (common && !d->causal && !lazy) ATTN__ISA(fill)((size_t)br * bc, 1, vis); /* all visible: one pass */
    for (r = 0; r < br; r++) {
        int last = d->causal ? ATTN__MIN(bc, i0 + r + shift - j0 + 1) : bc; /* columns [0, last) */
        attn_float *v = vis + r * bc;
        if (common && d->causal && !(lazy && last == bc)) {
            last = ATTN__MAX(last, 0);
            ATTN__ISA(fill)((size_t)last, 1, v);
            ATTN__ISA(fill)((size_t)(bc - last), 0, v + last);
        } else if (!common)
            for (c = 0; c < bc; c++) v[c] = (attn_float)attn__sees(d, b, h, i0 + r, j0 + c);
        if (d->mod && d->mod->score) { /* the modifier, on scale q.k + bias; raw keeps them for its vjp */
            if (raw) memcpy(raw + r * bc, S + r * bc, sizeof(attn_float) * (size_t)bc);
            d->mod->score(d->mod->ctx, b, h, i0 + r + shift, j0, bc, S + r * bc);
        }
        for (c = 0; c < bc && off != 0; c++) S[r * bc + c] += off;
        if (guard) attn__zero_hidden(S + r * bc, v, (size_t)bc);
    }
    return !common ? br : d->causal ? ATTN__MIN(ATTN__MAX(j0 + bc - 1 - i0 - shift, 0), br) : 0;
}

/* Draws up to r entries of cand[0 .. n) without replacement (a partial Fisher-Yates shuffle) and
   sets row[cand[k]] for each. */
static void attn__draw_set(unsigned char *row, int *cand, int n, int r, attn_rng *rng)
{
    int k;
    for (k = 0; k < r && k < n; k++) {
        int pick = k + (int)attn_rng_int(rng, (uint32_t)(n - k)), t = cand[pick];
        cand[pick] = cand[k];
        cand[k] = t;
        row[t] = 1;
    }
}

/* attn_bigbird_blocks with its scratch cand [nb] from the caller. */
static void attn__bigbird_draw(unsigned char *layout, int H, int nb, int r, attn_rng *rng, int *cand)
{
    int h, i, j, n;
    for (h = 0; h < H; h++)
        for (i = 0; i < nb; i++) {
            unsigned char *row = layout + ((size_t)h * nb + i) * nb;
            int global = i == 0 || i == nb - 1;
            for (j = 0; j < nb; j++)
                row[j] = (unsigned char)(global || j == 0 || j == nb - 1 || (j >= i - 1 && j <= i + 1));
            for (n = 0, j = 1; !global && j < nb - 1; j++)
                if (j < i - 1 || j > i + 1) cand[n++] = j;
            attn__draw_set(row, cand, n, r, rng);
        }
}

ATTNDEF attn_status attn_bigbird_blocks(unsigned char *layout, int H, int nb, int r, attn_rng *rng)
{
    int *cand;
    ATTN__NEED(layout); ATTN__NEED(rng);
    if (H < 1 || nb < 1 || r < 0)
        return attn__fail(ATTN_ERR_SHAPE, "attn_bigbird_blocks: H = %d, nb = %d must be >= 1 and r = %d >= 0",
                          H, nb, r);
    if (!(cand = (int *)ATTN_MALLOC(sizeof(int) * (size_t)nb)))
        return attn__fail(ATTN_ERR_NOMEM, "attn_bigbird_blocks: no memory");
    attn__bigbird_draw(layout, H, nb, r, rng, cand);
    ATTN_FREE(cand);
    return ATTN_OK;
}

ATTNDEF attn_status attn_bigbird_tokens(unsigned char *layout, int H, int T, int g, int w, int r,
                                        attn_rng *rng)
{
    int h, i, j, n, *cand;
    ATTN__NEED(layout); ATTN__NEED(rng);
    if (H < 1 || T < 1 || g < 0 || w < 0 || r < 0)
        return attn__fail(ATTN_ERR_SHAPE, "attn_bigbird_tokens: H = %d, T = %d must be >= 1 and g, w, r >= 0",
                          H, T);
    if (!(cand = (int *)ATTN_MALLOC(sizeof(int) * (size_t)T)))
        return attn__fail(ATTN_ERR_NOMEM, "attn_bigbird_tokens: no memory");
    for (h = 0; h < H; h++)
        for (i = 0; i < T; i++) {
            unsigned char *row = layout + ((size_t)h * T + i) * T;
            for (j = 0; j < T; j++)
                row[j] = (unsigned char)(i < g || j < g || (j >= i - w / 2 && j <= i + w / 2));
            for (n = 0, j = 0; j < T; j++)
                if (!row[j]) cand[n++] = j;
            attn__draw_set(row, cand, n, r, rng);
        }
    ATTN_FREE(cand);
    return ATTN_OK;
}

/* ALiBi's slope of head h of H (Press et al. 2022): 2^(-8 (h + 1) / n) with n the power of two up to H,
   then 2^(-8 (2 (h - n) + 1) / 2n) for the heads beyond it. */
static attn_float attn__alibi_slope(int h, int H)
{
    int n = 1;
    while (2 * n <= H) n *= 2;
    return (attn_float)(h < n ? exp2(-8.0 * (h + 1) / n) : exp2(-8.0 * (2 * (h - n) + 1) / (2 * n)));
}

static void attn__alibi_score(void *ctx, int b, int h, int p, int j0, int n, attn_float *s)
{
    (void)b;
    ATTN__ISA(ramp_sub)((size_t)n, ((const attn_mod *)ctx)->own.slope[h], (attn_float)(p - j0), s);
}

/* RELBIAS's bucket of key j0 + k seen from key position p: its column in w [H, buckets]. */
static int attn__relbias_bucket(const attn_mod *m, int rel)
{
    int half = m->cfg.bidirectional ? m->cfg.buckets / 2 : 0, n = half ? abs(rel) : ATTN__MAX(-rel, 0);
    return (half && rel > 0 ? half : 0) + m->own.bucket[ATTN__MIN(n, m->cfg.max_distance)];
}

static void attn__relbias_score(void *ctx, int b, int h, int p, int j0, int n, attn_float *s)
{
    const attn_mod *m = (const attn_mod *)ctx;
    const attn_float *w = m->w + (size_t)h * m->cfg.buckets;
    int k;
    (void)b;
    for (k = 0; k < n; k++) s[k] += w[attn__relbias_bucket(m, j0 + k - p)];
}

static void attn__relbias_grad(void *ctx, int b, int h, int p, int j0, int n, const attn_float *s,
                               const attn_float *ds)
{
    const attn_mod *m = (const attn_mod *)ctx;
    attn_float *dw = m->dw + (size_t)h * m->cfg.buckets;
    int k;
    (void)b; (void)s;
    for (k = 0; k < n; k++) dw[attn__relbias_bucket(m, j0 + k - p)] += ds[k];
}

static void attn__softcap_score(void *ctx, int b, int h, int p, int j0, int n, attn_float *s)
{
    attn_float cap = ((const attn_mod *)ctx)->cfg.cap;
    (void)b; (void)h; (void)p; (void)j0;
    ATTN__ISA(scale)((size_t)n, 1 / cap, s);
    ATTN__ISA(tanh)((size_t)n, s, s);
    ATTN__ISA(scale)((size_t)n, cap, s);
}

/* d(cap tanh(s / cap)) / ds = 1 - tanh(s / cap)^2, the tanh recomputed 256 scores at a time. */
static void attn__softcap_vjp(void *ctx, int b, int h, int p, int j0, int n, const attn_float *s,
                              attn_float *ds)
{
    attn_float cap = ((const attn_mod *)ctx)->cfg.cap, t[256];
    int k, c;
    (void)b; (void)h; (void)p; (void)j0;
    for (k = 0; k < n; k += c) {
        c = ATTN__MIN(n - k, 256);
        ATTN__ISA(scale_copy)((size_t)c, 1 / cap, s + k, t);
        ATTN__ISA(tanh)((size_t)c, t, t);
        ATTN__ISA(mul_tanh_grad)((size_t)c, t, ds + k);
    }
}

static void attn__temperature_score(void *ctx, int b, int h, int p, int j0, int n, attn_float *s)
{
    (void)b; (void)p; (void)j0;
    ATTN__ISA(scale)((size_t)n, ((const attn_mod *)ctx)->w[h], s);
}

static void attn__temperature_vjp(void *ctx, int b, int h, int p, int j0, int n, const attn_float *s,
                                  attn_float *ds)
{
    (void)b; (void)p; (void)j0; (void)s;
    ATTN__ISA(scale)((size_t)n, ((const attn_mod *)ctx)->w[h], ds);
}

static void attn__temperature_grad(void *ctx, int b, int h, int p, int j0, int n, const attn_float *s,
                                   const attn_float *ds)
{
    (void)b; (void)p; (void)j0;
    ((const attn_mod *)ctx)->dw[h] += ATTN__ISA(dot)((size_t)n, s, ds);
}

/* WINDOW: |p - j| <= span. A block of queries p0 .. p1 and keys j0 .. j1 is empty when its nearest
   pair is farther than span, full when its farthest pair is not. */
static int attn__window_mask(void *ctx, int b, int h, int p, int j)
{
    (void)b; (void)h;
    return (p > j ? p - j : j - p) <= ((const attn_mod *)ctx)->cfg.span;
}
static int attn__window_block(void *ctx, int b, int h, int p0, int p1, int j0, int j1)
{
    long long w = ((const attn_mod *)ctx)->cfg.span; /* any span: no int overflow */
    (void)b; (void)h;
    if (j1 < p0 - w || j0 > p1 + w) return ATTN_BLOCK_EMPTY;
    return j0 >= p1 - w && j1 <= p0 + w ? ATTN_BLOCK_FULL : ATTN_BLOCK_PARTIAL;
}

/* PREFIX: j <= p or j < span. */
static int attn__prefix_mask(void *ctx, int b, int h, int p, int j)
{
    (void)b; (void)h;
    return j <= p || j < ((const attn_mod *)ctx)->cfg.span;
}
static int attn__prefix_block(void *ctx, int b, int h, int p0, int p1, int j0, int j1)
{
    int w = ((const attn_mod *)ctx)->cfg.span;
    (void)b; (void)h;
    if (j1 <= p0 || j1 < w) return ATTN_BLOCK_FULL;
    return j0 > p1 && j0 >= w ? ATTN_BLOCK_EMPTY : ATTN_BLOCK_PARTIAL;
}

/* The provided masks' functions and names, by attn_mask_kind. */
static int (*const attn__mask_fns[ATTN_MASK_COUNT])(void *, int, int, int, int) = {
    NULL, attn__window_mask, attn__prefix_mask};
static int (*const attn__mask_blocks[ATTN_MASK_COUNT])(void *, int, int, int, int, int, int) = {
    NULL, attn__window_block, attn__prefix_block};
static const char *const attn__mask_names[ATTN_MASK_COUNT] = {"none", "window", "prefix"};

/* The provided modifiers' functions and names, by attn_mod_kind. */
static const attn_score_mod attn__mod_rows[ATTN_MOD_COUNT] = {
    {NULL, NULL, NULL, NULL, NULL, NULL},
    {attn__alibi_score, NULL, NULL, NULL, NULL, NULL},
    {attn__relbias_score, NULL, NULL, NULL, attn__relbias_grad, NULL},
    {attn__softcap_score, attn__softcap_vjp, NULL, NULL, NULL, NULL},
    {attn__temperature_score, attn__temperature_vjp, NULL, NULL, attn__temperature_grad, NULL}};
static const char *const attn__mod_names[ATTN_MOD_COUNT] = {"none", "alibi", "relbias", "softcap",
                                                            "temperature"};

/* The attn_mod behind f when f has a provided modifier's or mask's function (whose ctx is one),
   else NULL. */
static const attn_mod *attn__provided_mod(const attn_score_mod *f)
{
    int k, own = 0;
    for (k = 1; k < ATTN_MOD_COUNT; k++) own |= f->score && f->score == attn__mod_rows[k].score;
    for (k = 1; k < ATTN_MASK_COUNT; k++) own |= f->mask && f->mask == attn__mask_fns[k];
    return own ? (const attn_mod *)f->ctx : NULL;
}

ATTNDEF const char *attn_mod_name(attn_mod_kind kind)
{
    return (int)kind >= 0 && kind < ATTN_MOD_COUNT ? attn__mod_names[kind] : NULL;
}

/* The index of name in names [n], or -1. */
static int attn__name_index(const char *const *names, int n, const char *name)
{
    int k;
    for (k = 0; name && k < n; k++)
        if (!strcmp(name, names[k])) return k;
    return -1;
}

ATTNDEF int attn_mod_from_name(const char *name)
{
    return attn__name_index(attn__mod_names, ATTN_MOD_COUNT, name);
}

ATTNDEF const char *attn_mask_name(attn_mask_kind kind)
{
    return (int)kind >= 0 && kind < ATTN_MASK_COUNT ? attn__mask_names[kind] : NULL;
}

ATTNDEF int attn_mask_from_name(const char *name)
{
    return attn__name_index(attn__mask_names, ATTN_MASK_COUNT, name);
}

/* RELBIAS's buckets in one direction: all of them, or half when bidirectional. */
static int attn__relbias_side(const attn_mod_config *c)
{
    return c->bidirectional ? c->buckets / 2 : c->buckets;
}

/* The floats of a modifier's parameters: RELBIAS H buckets, TEMPERATURE H, the others none. */
static size_t attn__mod_floats(const attn_mod_config *c)
{
    return c->kind == ATTN_MOD_RELBIAS       ? (size_t)c->H * c->buckets
           : c->kind == ATTN_MOD_TEMPERATURE ? (size_t)c->H
                                             : 0;
}

/* Checks c for fn and gives the floats of its w in *np. */
static attn_status attn__mod_check(const char *fn, const attn_mod_config *c, size_t *np)
{
    int side;
    ATTN__NEED(c);
    side = attn__relbias_side(c);
    if ((int)c->kind < 0 || c->kind >= ATTN_MOD_COUNT)
        return attn__fail(ATTN_ERR_ARG, "%s: kind %d is not a provided modifier", fn, (int)c->kind);
    if (c->H < 1 || (c->kind == ATTN_MOD_ALIBI && c->H > ATTN_MOD_MAX_HEADS))
        return attn__fail(ATTN_ERR_SHAPE, "%s: H = %d must be >= 1 (ALiBi: <= %d)", fn, c->H,
                          ATTN_MOD_MAX_HEADS);
    if ((int)c->mask < 0 || c->mask >= ATTN_MASK_COUNT || (c->mask && c->span < 0))
        return attn__fail(ATTN_ERR_ARG, "%s: mask %d (span %d) is not a provided mask with a span >= 0", fn,
                          (int)c->mask, c->span);
    if (c->kind == ATTN_MOD_SOFTCAP && !(c->cap > 0 && attn__finite((double)c->cap)))
        return attn__fail(ATTN_ERR_ARG, "%s: softcap's cap = %g must be finite and > 0", fn, (double)c->cap);
    if (c->kind == ATTN_MOD_RELBIAS &&
        (side < 2 || c->max_distance <= side / 2 || c->max_distance > ATTN_MOD_MAX_DISTANCE ||
         c->buckets > 65535 / c->H))
        return attn__fail(ATTN_ERR_SHAPE,
                          "%s: relbias needs buckets >= 2 (4 bidirectional; got %d) and buckets / 2 < "
                          "max_distance = %d <= %d (per direction)", fn, c->buckets, c->max_distance,
                          ATTN_MOD_MAX_DISTANCE);
    *np = attn__mod_floats(c);
    return ATTN_OK;
}

ATTNDEF size_t attn_mod_params(const attn_mod_config *c)
{
    size_t np = 0;
    return attn__mod_check(__func__, c, &np) == ATTN_OK ? np : 0;
}

ATTNDEF attn_status attn_mod_init(attn_mod *m, const attn_mod_config *c, const attn_float *w, attn_float *dw)
{
    attn_mod_config cfg;
    size_t np = 0;
    double lmd;
    int n, side;
    ATTN__NEED(m);
    ATTN__TRY(attn__mod_check(__func__, c, &np));
    if (np && !w)
        return attn__fail(ATTN_ERR_ARG, "attn_mod_init: %s needs its parameters", attn__mod_names[c->kind]);
    cfg = *c; /* c may be m's own */
    side = attn__relbias_side(&cfg);
    lmd = cfg.kind == ATTN_MOD_RELBIAS ? log((double)cfg.max_distance / (side / 2)) : 0;
    memset(m, 0, sizeof *m);
    m->cfg = cfg;
    m->w = w;
    m->dw = np ? dw : NULL;
    m->fn = attn__mod_rows[cfg.kind];
    m->fn.ctx = m;
    m->fn.mask = attn__mask_fns[cfg.mask];
    m->fn.block = attn__mask_blocks[cfg.mask];
    if (!m->dw) m->fn.grad = NULL;
    for (n = 0; cfg.kind == ATTN_MOD_RELBIAS && n <= cfg.max_distance; n++)
        m->own.bucket[n] = (unsigned short)attn__t5_bucket_of(n, side, lmd);
    for (n = 0; cfg.kind == ATTN_MOD_ALIBI && n < cfg.H; n++) m->own.slope[n] = attn__alibi_slope(n, cfg.H);
    return ATTN_OK;
}

/* The block mask's functions: the modifier's, called with its own ctx, and block from the table. */
static void attn__bm_score(void *ctx, int b, int h, int p, int j0, int n, attn_float *s)
{
    const attn_score_mod *m = &((const attn_block_mask *)ctx)->mod;
    m->score(m->ctx, b, h, p, j0, n, s);
}
static void attn__bm_vjp(void *ctx, int b, int h, int p, int j0, int n, const attn_float *s,
                         attn_float *ds)
{
    const attn_score_mod *m = &((const attn_block_mask *)ctx)->mod;
    m->vjp(m->ctx, b, h, p, j0, n, s, ds);
}
static int attn__bm_mask(void *ctx, int b, int h, int p, int j)
{
    const attn_score_mod *m = &((const attn_block_mask *)ctx)->mod;
    return m->mask(m->ctx, b, h, p, j);
}
static void attn__bm_grad(void *ctx, int b, int h, int p, int j0, int n, const attn_float *s,
                          const attn_float *ds)
{
    const attn_score_mod *m = &((const attn_block_mask *)ctx)->mod;
    m->grad(m->ctx, b, h, p, j0, n, s, ds);
}

/* The blocks that the query positions p0 .. p1 and keys j0 .. j1 meet: empty or full if all of them
   are, else partial. */
static int attn__bm_block(void *ctx, int b, int h, int p0, int p1, int j0, int j1)
{
    const attn_block_mask *m = (const attn_block_mask *)ctx;
    size_t bh = (size_t)(m->B > 1 ? b : 0) * m->H + (m->H > 1 ? h : 0);
    const unsigned char *st = m->state + bh * m->nq * m->nk;
    int shift = m->Tk - m->Tq, i0 = ATTN__MAX(p0 - shift, 0), i1 = ATTN__MIN(p1 - shift, m->Tq - 1), qb, kb;
    int seen = 0, mixed = (1 << ATTN_BLOCK_EMPTY) | (1 << ATTN_BLOCK_FULL);
    j0 = ATTN__MAX(j0, 0), j1 = ATTN__MIN(j1, m->Tk - 1);
    for (qb = i0 / m->size; qb <= i1 / m->size; qb++)
        for (kb = j0 / m->size; kb <= j1 / m->size; kb++) {
            seen |= 1 << st[(size_t)qb * m->nk + kb];
            if (seen & (1 << ATTN_BLOCK_PARTIAL) || seen == mixed) return ATTN_BLOCK_PARTIAL;
        }
    return seen == 1 << ATTN_BLOCK_FULL ? ATTN_BLOCK_FULL : seen ? ATTN_BLOCK_EMPTY : ATTN_BLOCK_PARTIAL;
}

/* Block row qb of (b, h) = unit (b H + h) nq + qb: each block's visible and hidden pairs. */
static void attn__bm_fill(void *ctx, int u, int tid)
{
    attn_block_mask *m = (attn_block_mask *)ctx;
    int qb = u % m->nq, bh = u / m->nq, b = bh / m->H, h = bh % m->H, kb, i, j;
    unsigned char *row = m->state + (size_t)u * m->nk;
    (void)tid;
    for (kb = 0; kb < m->nk; kb++) {
        int seen = 0;
        for (i = qb * m->size; i < ATTN__MIN((qb + 1) * m->size, m->Tq); i++)
            for (j = kb * m->size; j < ATTN__MIN((kb + 1) * m->size, m->Tk); j++)
                seen |= m->mod.mask(m->mod.ctx, b, h, i + m->Tk - m->Tq, j) ? 2 : 1;
        row[kb] = (unsigned char)(seen == 2 ? ATTN_BLOCK_FULL : seen == 1 ? ATTN_BLOCK_EMPTY
                                                                          : ATTN_BLOCK_PARTIAL);
    }
}

ATTNDEF attn_status attn_block_mask_build(attn_block_mask *bm, const attn_score_mod *mod, int B, int H,
                                          int Tq, int Tk, int size)
{
    size_t n, nq, nk;
    unsigned char *state;
    ATTN__NEED(bm);
    ATTN__NEED(mod);
    if (!mod->mask) return attn__fail(ATTN_ERR_ARG, "attn_block_mask_build: the modifier has no mask");
    if (B < 1 || H < 1 || Tq < 1 || Tk < 1 || size < 1)
        return attn__fail(ATTN_ERR_SHAPE, "attn_block_mask_build: B = %d, H = %d, Tq = %d, Tk = %d, "
                          "size = %d must all be >= 1", B, H, Tq, Tk, size);
    nq = ((size_t)Tq + size - 1) / size, nk = ((size_t)Tk + size - 1) / size, n = (size_t)B * H * nq;
    if (n > INT_MAX || n * nk / nk != n || !(state = (unsigned char *)ATTN_MALLOC(n * nk)))
        return attn__fail(ATTN_ERR_NOMEM, "attn_block_mask_build: no memory for %d x %d x %lu x %lu blocks",
                          B, H, (unsigned long)nq, (unsigned long)nk);
    memset(bm, 0, sizeof *bm);
    bm->state = state;
    bm->mod = *mod;
    bm->B = B, bm->H = H, bm->Tq = Tq, bm->Tk = Tk, bm->size = size, bm->nq = (int)nq, bm->nk = (int)nk;
    attn__par_for(B * H * bm->nq, attn__bm_fill, bm);
    bm->fn.score = mod->score ? attn__bm_score : NULL;
    bm->fn.vjp = mod->vjp ? attn__bm_vjp : NULL;
    bm->fn.mask = attn__bm_mask;
    bm->fn.grad = mod->grad ? attn__bm_grad : NULL;
    bm->fn.block = attn__bm_block;
    bm->fn.ctx = bm;
    return ATTN_OK;
}

ATTNDEF void attn_block_mask_free(attn_block_mask *bm)
{
    if (!bm) return;
    ATTN_FREE(bm->state);
    memset(bm, 0, sizeof *bm);
}

/* EA's score map g(z) = z^2 / (1 + z^2): no cancellation at small z (no 1 - ...), and z^2 capped
   at 1e30 (where g rounds to 1 anyway) so it never overflows; NaN stays NaN. */
static attn_float attn__ea_g(attn_float z)
{
    attn_float zz = z * z > (attn_float)1e30 ? (attn_float)1e30 : z * z;
    return zz / (1 + zz);
}

#endif /* shared code */

/* ---- per-ISA code ---- */
/* The score rows' kernels (the kind table's entries below call the chosen ISA's). */

/* p[i] *= g(s[i]) scale for a row (p holds 0/1 visibility or weights); returns sum_i p[i]. */
static attn_float attn__ea_map_v(size_t n, const attn_float *s, attn_float *p, attn_float *x,
                                 attn_float scale)
{
    attn__v acc = attn__vset1(0), vs = attn__vset1(scale);
    attn_float sum;
    size_t i = 0;
    for (; i + ATTN__VW <= n; i += ATTN__VW) {
        attn__v w = attn__vmul(attn__vload(p + i), attn__vmul(vs, attn__ea_vg(attn__vload(s + i))));
        attn__vstore(p + i, w);
        acc = attn__vadd(acc, w);
    }
    for (sum = attn__vhsum(acc); i < n; i++) sum += (p[i] *= attn__ea_g(s[i]) * scale);
    (void)x;
    return sum;
}

/* EA's score gradient for a row: ds = vis (dA - D) inv 2 s (1 - g)^2 with 1 - g = 1 / (1 + s^2),
   inv = 1 / N (0 for a row that sees nothing); ds holds dA on entry. */
static void attn__ea_vjp_v(size_t n, const attn_float *s, const attn_float *a, const attn_float *vis,
                           attn_float *ds, attn_float D, attn_float inv)
{
    attn__v big = attn__vset1((attn_float)1e30), one = attn__vset1(1), vD = attn__vset1(-D),
            k = attn__vset1(2 * inv);
    size_t i = 0;
    (void)a;
    for (; i + ATTN__VW <= n; i += ATTN__VW) {
        attn__v z = attn__vload(s + i), q = attn__vadd(one, attn__vmin(big, attn__vmul(z, z)));
        attn__v t = attn__vmul(attn__vmul(attn__vload(vis + i), attn__vadd(attn__vload(ds + i), vD)),
                               attn__vmul(k, z));
        attn__vstore(ds + i, attn__vdiv(t, attn__vmul(q, q)));
    }
    for (; i < n; i++) {
        attn_float q = 1 + (s[i] * s[i] > (attn_float)1e30 ? (attn_float)1e30 : s[i] * s[i]);
        ds[i] = vis[i] * (ds[i] - D) * 2 * inv * s[i] / (q * q);
    }
}

/* x = s (abs: |s|) where visible, -3e38 elsewhere: the exponent of the masked entries is then
   exp(-huge) = 0, never exp(large score) = inf, which times the visibility 0 would be NaN. vis NULL:
   every entry visible. */
static void attn__masked_exponent(int abs, size_t n, const attn_float *s, const attn_float *vis,
                                  attn_float *x)
{
    attn__v low = attn__vset1((attn_float)3e38), one = attn__vset1(1);
    size_t c = 0;
    for (; c + ATTN__VW <= n; c += ATTN__VW) { /* x = s vis + (vis - 1) 3e38, vis in {0, 1} */
        attn__v z = attn__vload(s + c), v;
        if (abs) z = attn__vabs(z);
        if (vis) v = attn__vload(vis + c), z = attn__vfma(z, v, attn__vmul(attn__vsub(v, one), low));
        attn__vstore(x + c, z);
    }
    for (; c < n; c++)
        x[c] = !vis || vis[c] != 0 ? (abs ? (attn_float)fabs(s[c]) : s[c]) : (attn_float)-3e38;
}
/* The score gradients of the softmax family for a row, ds holding dA on entry:
   softmax (and centered, with a the softmax weights) ds = a (dA - D); Cog ds = |a| dA - a D. */
static void attn__softmax_dscores(int cog, size_t n, const attn_float *a, attn_float *ds, attn_float D)
{
    attn__v vD = attn__vset1(-D), neg = attn__vset1(-1);
    size_t i = 0;
    for (; i + ATTN__VW <= n; i += ATTN__VW) {
        attn__v va = attn__vload(a + i), g = attn__vload(ds + i);
        attn__vstore(ds + i, cog ? attn__vfma(va, vD, attn__vmul(attn__vmax(va, attn__vmul(neg, va)), g))
                                 : attn__vmul(va, attn__vadd(g, vD)));
    }
    for (; i < n; i++) ds[i] = cog ? (attn_float)fabs(a[i]) * ds[i] - a[i] * D : a[i] * (ds[i] - D);
}
/* Cog's sign on the weights: p = sign(s) p, so s = 0 gets weight 0 (but stays in the sum). The
   vector form is s 2^126 clamped to [-1, 1]: sign(s) but for denormal s, which scales p by s 2^126
   (safe under -ffast-math, where such s are 0 anyway); a NaN s passes through. A multiply and two
   clamps give the values of s / max(|s|, 2^-126) without its division. */
static void attn__cog_sign_v(size_t n, const attn_float *s, attn_float *p)
{
    attn__v big = attn__vset1((attn_float)8.50705917e37f), one = attn__vset1(1), neg = attn__vset1(-1);
    size_t c = 0;
    for (; ATTN__VW > 1 && c + ATTN__VW <= n; c += ATTN__VW) {
        attn__v x = attn__vmul(attn__vload(s + c), big);
        attn__vstore(p + c, attn__vmul(attn__vload(p + c), attn__vmin(one, attn__vmax(neg, x))));
    }
    for (; c < n; c++) p[c] *= (attn_float)((s[c] > 0) - (s[c] < 0)); /* branch-free: signs are random */
}

/* p[i] *= sigmoid(s[i]) = 1 / (1 + exp(-s[i])) for a row, through the SIMD exp; x is scratch. */
static attn_float attn__sigmoid_map_v(size_t n, const attn_float *s, attn_float *p, attn_float *x,
                                      attn_float scale)
{
    attn__v neg = attn__vset1(-1), one = attn__vset1(1);
    size_t i = 0;
    for (; i + ATTN__VW <= n; i += ATTN__VW) attn__vstore(x + i, attn__vmul(neg, attn__vload(s + i)));
    for (; i < n; i++) x[i] = -s[i];
    attn__exp(n, x, x);
    for (i = 0; i + ATTN__VW <= n; i += ATTN__VW)
        attn__vstore(p + i, attn__vdiv(attn__vload(p + i), attn__vadd(one, attn__vload(x + i))));
    for (; i < n; i++) p[i] /= 1 + x[i];
    (void)scale;
    return 0;
}
/* Sigmoid's score gradient for a row: ds *= a (1 - a), ds holding dA on entry. */
static void attn__sigmoid_vjp_v(size_t n, const attn_float *s, const attn_float *a, const attn_float *vis,
                                attn_float *ds, attn_float D, attn_float inv)
{
    attn__v one = attn__vset1(1), neg = attn__vset1(-1);
    size_t i = 0;
    (void)s; (void)vis; (void)D; (void)inv;
    for (; i + ATTN__VW <= n; i += ATTN__VW) {
        attn__v va = attn__vload(a + i);
        attn__vstore(ds + i,
                     attn__vmul(attn__vload(ds + i), attn__vmul(va, attn__vadd(one, attn__vmul(neg, va)))));
    }
    for (; i < n; i++) ds[i] *= a[i] * (1 - a[i]);
}

/* ---- end of per-ISA code ---- */
#ifndef ATTN__PASS
#define ATTN__SCORE_KERNELS(X)                                                                     \
    X(ea_map_v) X(ea_vjp_v) X(masked_exponent) X(softmax_dscores) X(cog_sign_v) X(sigmoid_map_v)      \
    X(sigmoid_vjp_v)
ATTN__SCORE_KERNELS(ATTN__ISA_POINTER)

/* The built-in score rows' functions: the chosen ISA's kernels. */
static attn_float attn__ea_map(size_t n, const attn_float *s, attn_float *p, attn_float *x, attn_float scale)
{
    return ATTN__ISA(ea_map_v)(n, s, p, x, scale);
}
static void attn__ea_vjp(size_t n, const attn_float *s, const attn_float *a, const attn_float *vis,
                         attn_float *ds, attn_float D, attn_float inv)
{
    ATTN__ISA(ea_vjp_v)(n, s, a, vis, ds, D, inv);
}
static void attn__cog_sign(size_t n, const attn_float *s, attn_float *p) { ATTN__ISA(cog_sign_v)(n, s, p); }
static attn_float attn__sigmoid_map(size_t n, const attn_float *s, attn_float *p, attn_float *x,
                                    attn_float scale)
{
    return ATTN__ISA(sigmoid_map_v)(n, s, p, x, scale);
}
static void attn__sigmoid_vjp(size_t n, const attn_float *s, const attn_float *a, const attn_float *vis,
                              attn_float *ds, attn_float D, attn_float inv)
{
    ATTN__ISA(sigmoid_vjp_v)(n, s, a, vis, ds, D, inv);
}
/* The keys any row of the tile [i0, i0 + br) can see end here (exclusive): causal tiles stop early. */
static int attn__key_end(const attn_attention_desc *d, int i0, int br)
{
    return d->causal ? ATTN__MAX(0, ATTN__MIN(d->Tk, i0 + br + d->Tk - d->Tq)) : d->Tk;
}

static void attn__exponent_s(size_t n, const attn_float *s, const attn_float *vis, attn_float *x)
{
    ATTN__ISA(masked_exponent)(0, n, s, vis, x);
}
static void attn__exponent_abs(size_t n, const attn_float *s, const attn_float *vis, attn_float *x)
{
    ATTN__ISA(masked_exponent)(1, n, s, vis, x);
}

static void attn__softmax_vjp(size_t n, const attn_float *s, const attn_float *a, const attn_float *vis,
                              attn_float *ds, attn_float D, attn_float inv)
{
    (void)s; (void)vis; (void)inv;
    ATTN__ISA(softmax_dscores)(0, n, a, ds, D);
}
static void attn__cog_vjp(size_t n, const attn_float *s, const attn_float *a, const attn_float *vis,
                          attn_float *ds, attn_float D, attn_float inv)
{
    (void)s; (void)vis; (void)inv;
    ATTN__ISA(softmax_dscores)(1, n, a, ds, D);
}

static attn_float attn__sigmoid_offset(int Tk) { return -(attn_float)log((double)Tk); }

/* linear_raw: A = s where visible, dS = dA where visible. */
static attn_float attn__linear_map(size_t n, const attn_float *s, attn_float *p, attn_float *x,
                                   attn_float scale)
{
    (void)x; (void)scale;
    ATTN__ISA(mul)(n, s, p, p);
    return 0;
}
static void attn__linear_vjp(size_t n, const attn_float *s, const attn_float *a, const attn_float *vis,
                             attn_float *ds, attn_float D, attn_float inv)
{
    (void)s; (void)a; (void)D; (void)inv;
    ATTN__ISA(mul)(n, vis, ds, ds);
}

/* The score rows of the built-in scored kinds. */
static const attn_score_row attn__score_softmax = {ATTN_STAT_LSE,    NULL, NULL,
                                                   attn__exponent_s, NULL, attn__softmax_vjp};
static const attn_score_row attn__score_ea = {ATTN_STAT_SUM, NULL, attn__ea_map, NULL, NULL, attn__ea_vjp};
static const attn_score_row attn__score_cog = {ATTN_STAT_LSE,      NULL,           NULL,
                                               attn__exponent_abs, attn__cog_sign, attn__cog_vjp};
static const attn_score_row attn__score_sigmoid = {
    ATTN_STAT_NONE, attn__sigmoid_offset, attn__sigmoid_map, NULL, NULL, attn__sigmoid_vjp};
static const attn_score_row attn__score_linear = {ATTN_STAT_NONE, NULL, attn__linear_map,
                                                  NULL,           NULL, attn__linear_vjp};

/* The exponents x of a softmax-family row: the kind's (s or |s| where visible, -3e38 elsewhere; X
   holds them), or S itself for a softmax row that sees every key of its tile (seen: the same values,
   the mask pass skipped). A seen row's visibility is not read. */
static const attn_float *attn__row_exponents(const attn_score_row *k, int seen, size_t n, const attn_float *s,
                                             const attn_float *vis, attn_float *x)
{
    if (seen && k->exponent == attn__exponent_s) return s;
    k->exponent(n, s, seen ? NULL : vis, x);
    return x;
}

/* P[r, c] = A of the tile from the final row statistics stat [br], where P holds the 0/1 visibility
   on entry; rows from `full` on see the whole tile (attn__tile_scores). X [BR, BC] is scratch. Rows
   that are not a whole number of vectors take their exponentials in one pass over the tile (as in
   attn__forward_tile; the same weights bit for bit). */
static void attn__tile_weights(const attn_score_row *k, const attn_float *S, attn_float *P, attn_float *X,
                               int br, int bc, const attn_float *stat, int full)
{
    int r, flat = bc % ATTN__VW != 0 && k->stat == ATTN_STAT_LSE;
    for (r = 0; r < br; r++) {
        const attn_float *s = S + r * bc, *x;
        attn_float *p = P + r * bc;
        if (k->stat != ATTN_STAT_LSE) {
            k->map((size_t)bc, s, p, X + r * bc,
                   k->stat == ATTN_STAT_NONE ? 1
                   : stat[r] < ATTN__TINY    ? 0
                                             : 1 / stat[r]);
            continue;
        }
        x = attn__row_exponents(k, r >= full, (size_t)bc, s, p, X + r * bc);
        if (flat) {
            ATTN__ISA(shift_copy)((size_t)bc, x, stat[r], X + r * bc);
            continue;
        }
        ATTN__ISA(exp_weighted)((size_t)bc, x, stat[r], p, r >= full);
        if (k->sign) k->sign((size_t)bc, s, p);
    }
    if (flat) {
        ATTN__ISA(exp_weighted)((size_t)br * bc, X, 0, P, full == 0);
        if (k->sign) k->sign((size_t)br * bc, S, P);
    }
}

/* The shift c of centered query i that sees n keys: 1 / n, or (centered_literal) 1 / p with p the
   query's key position (1 at p = 0); 0 for a row that sees nothing. */
static attn_float attn__center_shift(const attn_attention_desc *d, int i, attn_float n)
{
    int p = i + d->Tk - d->Tq;
    return n == 0 ? 0 : d->centered_literal ? 1 / (attn_float)ATTN__MAX(p, 1) : 1 / n;
}

/* Centered weights from softmax ones: P[r] -= c[r] vis[r]. */
static void attn__center(attn_float *P, const attn_float *vis, const attn_float *c, int br, int bc)
{
    int r;
    for (r = 0; r < br; r++) attn_axpy((size_t)bc, -c[r], vis + r * bc, P + r * bc);
}

/* One (b, h) of the tiled engine: its slices of the operands, the thread's scratch, and what every
   tile reads. guard: some input of the slice is not finite (attn__all_finite). */
typedef struct {
    const attn__args *a;
    const attn_attention_desc *d;
    const attn_score_row *k;
    const attn_float *Qp, *Kp, *Vp, *Op, *dOp, *st; /* Op, dOp, st: the backward's */
    attn_float *dQp, *dKp, *dVp, scale;
    attn__scored_ws w;
    int b, h, ld, guard, centered;
} attn__head;

static void attn__head_init(attn__head *t, const attn__args *a, int b, int h, attn_float *ws, int backward)
{
    const attn_attention_desc *d = a->d;
    size_t bh = (size_t)b * d->H + h, kh = attn__kv_slice(d, b, h);
    t->a = a; t->d = d; t->b = b; t->h = h; t->ld = a->ldk;
    t->k = attn__row(d)->score;
    t->centered = (attn__row(d)->flags & ATTN_KF_CENTERED) != 0;
    t->scale = attn__score_scale(d);
    t->Qp = a->Q + bh * d->Tq * t->ld;
    t->Kp = a->K + kh * attn__kv_rows(d) * t->ld;
    t->Vp = a->V + kh * attn__kv_rows(d) * d->dv;
    t->guard = !a->finite && (!attn__all_finite(t->Qp, d->Tq, d->dk, t->ld) ||
                              !attn__all_finite(t->Kp, d->Tk, d->dk, t->ld) ||
                              !attn__all_finite(t->Vp, d->Tk, d->dv, d->dv));
    if (backward) {
        t->Op = a->Oin + bh * d->Tq * d->dv;
        t->dOp = a->dO + bh * d->Tq * d->dv;
        t->st = a->stats_in + bh * d->Tq;
        t->dQp = a->dQ + bh * d->Tq * t->ld;
        t->dKp = a->dK + kh * d->Tk * t->ld;
        t->dVp = a->dV + kh * d->Tk * d->dv;
        t->guard = t->guard || (!a->finite && !attn__all_finite(t->dOp, d->Tq, d->dv, d->dv));
    }
    if (t->guard) attn__report_guard(a);
    attn__scored_ws_map(d, ws, &t->w);
    if (t->w.kpan) /* K^T, for all query tiles, and in backward V^T */
        ATTN__ISA(panels_pack)(1, t->Kp, t->ld, d->dk, d->Tk, t->w.kpan);
    if (t->w.kpan && backward) ATTN__ISA(panels_pack)(1, t->Vp, d->dv, d->dv, d->Tk, t->w.vpan);
}

/* Causal tiles in row bands: rows [i0, i0 + br) over keys [j0, j0 + bc) give the band from row i0
   on, *rb rows, and the keys its last row can see, at most bc. A band is ATTN__BAND rows where the
   tile's first rows cannot see its last keys (the diagonal), so that their products skip most of
   what the mask would zero; else the whole tile. Returns 0 when the band sees none of these keys. */
#define ATTN__BAND 32
static int attn__band(const attn_attention_desc *d, int i0, int br, int j0, int bc, int *rb)
{
    int shift = d->Tk - d->Tq;
    if (!d->causal || i0 + shift - j0 + 1 >= bc) { /* the first row sees every key of the tile */
        *rb = br;
        return bc;
    }
    *rb = ATTN__MIN(ATTN__BAND, br);
    return ATTN__MAX(0, ATTN__MIN(bc, i0 + *rb - 1 + shift - j0 + 1));
}

/* Whether exponents x [n] that attn_max finds below -1e38 hold a NaN (which max passes over) or a
   -Inf (where exp(x - max) is NaN): the guarded path's row is NaN then, not empty. */
static int attn__lost_row(size_t n, const attn_float *x)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (x[i] != x[i] || x[i] < (attn_float)-3e38) return 1;
    return 0;
}

/* The forward pass over one key tile [j0, j0 + bc) for query rows [i0, i0 + br), whose running
   state is acc [br, dv], vsum [br, dv], m, l, n [br] (see attn__scored_forward_bh). */
static void attn__forward_tile(const attn__head *t, int i0, int br, int j0, int bc, attn_float *acc,
                               attn_float *vsum, attn_float *m, attn_float *l, attn_float *n)
{
    const attn_attention_desc *d = t->d;
    const attn_score_row *k = t->k;
    attn_float *S = t->w.S, *P = t->w.P, *X = t->w.X, *hid = t->w.vis; /* the guarded path's visibility */
    attn_float shift[ATTN__BR], sums[ATTN__BR]; /* each row's new maximum and sum of its weights */
    /* rows not a whole number of vectors (36 keys: 3 vectors a row, 2.25 for the tile): the rows'
       exponents shifted one by one, their exponentials in one pass over the tile */
    int r, dv = d->dv, full, flat = bc % ATTN__VW != 0 && k->stat == ATTN_STAT_LSE;
    /* rows that see the whole tile need no visibility where nothing else reads it */
    int lazy = !flat && !t->guard && !t->centered && k->stat == ATTN_STAT_LSE;
    const attn_float *Vt = t->Vp + (size_t)j0 * dv;
    ATTN_ASSERT(br <= ATTN__BR);
    full = attn__tile_scores(d, t->b, t->h, i0, br, j0, bc, t->Qp, t->Kp, t->ld, t->w.kpan, t->scale, S, P,
                             t->guard, lazy, NULL);
    if (t->guard) memcpy(hid, P, sizeof(attn_float) * (size_t)br * bc);
    if (t->centered) attn__visible_sums(P, Vt, br, bc, dv, vsum, n, t->guard);
    if (k->stat == ATTN_STAT_NONE) attn__tile_weights(k, S, P, X, br, bc, NULL, full);
    for (r = 0; r < br && k->stat != ATTN_STAT_NONE; r++) {
        attn_float *s = S + r * bc, *p = P + r * bc, tmax;
        const attn_float *x;
        if (k->stat == ATTN_STAT_SUM) {
            l[r] += k->map((size_t)bc, s, p, X + r * bc, 1);
            continue;
        }
        x = attn__row_exponents(k, r >= full, (size_t)bc, s, p, X + r * bc);
        shift[r] = tmax = attn_max((size_t)bc, x);
        if (tmax < (attn_float)-1e38 && t->guard && attn__lost_row((size_t)bc, x)) /* NaN from here on */
            shift[r] = tmax = (attn_float)NAN;
        if (tmax < (attn_float)-1e38) { /* nothing visible in this tile row: p is 0 */
            if (flat) ATTN__ISA(shift_copy)((size_t)bc, x, 0, X + r * bc);
            continue;
        }
        if (l[r] > 0 && m[r] > tmax) shift[r] = tmax = m[r];
        if (flat) ATTN__ISA(shift_copy)((size_t)bc, x, tmax, X + r * bc);
        else sums[r] = ATTN__ISA(exp_weighted)((size_t)bc, x, tmax, p, r >= full);
    }
    if (flat) ATTN__ISA(exp_weighted)((size_t)br * bc, X, 0, P, full == 0);
    for (r = 0; r < br && k->stat == ATTN_STAT_LSE; r++) {
        attn_float *p = P + r * bc, alpha;
        if (shift[r] < (attn_float)-1e38) { /* its weights 0, not the visibility P held */
            ATTN__ISA(fill)((size_t)bc, 0, p);
            continue;
        }
        alpha = l[r] > 0 ? (attn_float)exp(m[r] - shift[r]) : 0;
        if (flat) sums[r] = attn_sum((size_t)bc, p);
        if (k->sign) k->sign((size_t)bc, S + r * bc, p);
        if (alpha != 1 && l[r] > 0) attn_scale((size_t)dv, alpha, acc + (size_t)r * dv); /* else acc is 0 */
        l[r] = l[r] * alpha + sums[r];
        m[r] = shift[r];
    }
    if (d->dropout > 0) attn__tile_dropout(d, i0, br, j0, bc, P); /* after the statistics */
    if (t->guard) attn__guarded_product(0, br, bc, dv, 1, P, hid, Vt, dv, acc, dv);
    else attn_gemm(0, 0, br, dv, bc, 1, P, bc, Vt, dv, 1, acc, dv); /* acc += P V */
}

/* Query rows [i0, i0 + br) of O and their stats, key tile after key tile (attn__forward_tile). */
static void attn__tiled_rows(const attn__head *t, int i0, int br, attn_float *Op, attn_float *st)
{
    const attn_attention_desc *d = t->d;
    const attn_score_row *k = t->k;
    attn_float *acc = t->w.acc, *vsum = t->w.vsum, *m = t->w.m, *l = t->w.l, *n = t->w.n;
    int jend = attn__key_end(d, i0, br), r, r0, rb, j0, bc, kb, dv = d->dv;
    memset(acc, 0, sizeof(attn_float) * (size_t)br * dv);
    memset(vsum, 0, sizeof(attn_float) * (size_t)br * dv);
    for (r = 0; r < br; r++) m[r] = l[r] = n[r] = 0;
    for (j0 = 0; (j0 = attn__next_keys(d, t->b, t->h, i0, br, j0, jend, &bc)) < jend; j0 += bc)
        for (r0 = 0; r0 < br; r0 += rb)
            if ((kb = attn__band(d, i0 + r0, br - r0, j0, bc, &rb)) > 0)
                attn__forward_tile(t, i0 + r0, rb, j0, kb, acc + (size_t)r0 * dv, vsum + (size_t)r0 * dv,
                                   m + r0, l + r0, n + r0);
    for (r = 0; r < br; r++) { /* O = acc / l; stats: lse (softmax, Cog) or N (EA) */
        int empty = k->stat == ATTN_STAT_SUM ? l[r] < ATTN__TINY : l[r] == 0;
        attn_float *o = Op + (size_t)(i0 + r) * dv;
        if (k->stat == ATTN_STAT_NONE) { /* O = acc */
            memcpy(o, acc + (size_t)r * dv, sizeof(attn_float) * (size_t)dv);
            st[i0 + r] = 0;
            continue;
        }
        ATTN__ISA(scale_copy)((size_t)dv, empty ? 0 : 1 / l[r], acc + (size_t)r * dv, o); /* 0 acc if empty */
        n[r] = attn__center_shift(d, i0 + r, n[r]); /* from here on n holds the shift c */
        if (t->centered && !empty) attn_axpy((size_t)dv, -n[r], vsum + (size_t)r * dv, o); /* -c_i sum v */
        st[i0 + r] = k->stat == ATTN_STAT_SUM ? l[r] : empty ? 0 : m[r] + ATTN__LOG(l[r]);
    }
}

#if !defined(ATTN_USE_CBLAS) && !defined(ATTN__SCALAR) /* the fused forward's edge panels' visibility */
#define ATTN__ONES8 1, 1, 1, 1, 1, 1, 1, 1
static const attn_float attn__ones_zeros[128] = {ATTN__ONES8, ATTN__ONES8, ATTN__ONES8, ATTN__ONES8,
                                                 ATTN__ONES8, ATTN__ONES8, ATTN__ONES8, ATTN__ONES8};
#endif
#endif /* shared code */

/* ---- per-ISA code ---- */
#ifdef ATTN__PASS /* the previous pass's constants make way for this one's */
#undef ATTN__FUSED
#undef ATTN__IN_REG
#undef ATTN__FR
#undef ATTN__FKEEP
#undef ATTN__FCH
#undef ATTN__FDK
#undef ATTN__FDV
#undef ATTN__FKEYS
#undef ATTN__FRV
#undef ATTN__FSLACK
#undef ATTN__FOR_FR
#undef ATTN__FOR_CH
#endif
/* Not in WebAssembly: there the engines (V8) compile the kernel to slower code than the tiled engine's
   (docs/inference.md). */
#if !defined(ATTN_USE_CBLAS) && !defined(ATTN__SCALAR) && !defined(ATTN__WASM)
/* The fused forward of softmax, Cog and EA (FlashAttention's loop, Dao et al. 2022,
   arXiv:2205.14135, with its tiles in vector registers): ATTN__FR query rows at a time against one
   panel of K^T (ATTN__PANEL keys, from the head's panels). The scores S [FR, PANEL], their running
   maximum m and weights stay in registers; P leaves them only to be broadcast against V's rows.
   O [FR, dv] stays in registers over all the keys where the register file holds it (ATTN__FKEEP:
   32 registers of 16 floats), else it is a buffer in L1 that each group of panels updates through
   the GEMM's micro-kernels (FR is their height), called rather than inlined so that their 12
   accumulators keep the 16 registers. Rows past the query
   tile repeat its last row and are not stored. Taken (attn__fusable) where nothing else acts on a
   tile: no bias, dropout, centering, non-finite input or mask modifier without a block function,
   dk <= ATTN__FDK and dv a whole number of vectors up to ATTN__FDV. */
#define ATTN__FUSED 1
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__)) /* a vector loaded once into */
#define ATTN__IN_REG(x) __asm__("" : "+v"(x)) /* a register, not again as each FMA's memory operand */
#elif defined(__GNUC__) && defined(__aarch64__)
#define ATTN__IN_REG(x) __asm__("" : "+w"(x))
#else
#define ATTN__IN_REG(x) (void)0
#endif
#if defined(ATTN__AVX512) /* FR x NV scores; O's rows in FKEEP vectors each, or (0) in a buffer */
#define ATTN__FR 4
#define ATTN__FKEEP 4
#else /* the rows of the GEMM's in-place micro-kernels, which update the buffer */
#define ATTN__FR ATTN__MR_S
#define ATTN__FKEEP 0
#endif
#define ATTN__FCH ATTN__MAX(ATTN__FKEEP, 1) /* vectors of O in registers, per row */
#define ATTN__FDK 256
#define ATTN__FDV (ATTN__FKEEP ? ATTN__FKEEP * ATTN__VW : 256)
#define ATTN__FKEYS (ATTN__MAX(1, 64 / ATTN__PANEL) * ATTN__PANEL) /* keys per product P V: whole panels */
#define ATTN__FRV ((ATTN__FR + ATTN__VW - 1) / ATTN__VW * ATTN__VW) /* FR in whole vectors */
#define ATTN__FGROUPS 1024 /* a query tile's groups of keys whose mask state is kept (Tk <= 65536) */
/* The running maximum m of a row is raised only when an exponent passes it by more than this, since
   softmax does not depend on the shift: the weights e^(x - m) stay below e^16 = 8.9e6, far from
   overflow, and after the first tile a row's maximum seldom moves that far, so the branch is
   predicted (a mispredicted branch throws away the work issued past it). */
#define ATTN__FSLACK 16
#define ATTN__FOR_FR(r) ATTN__UNROLL for (r = 0; r < ATTN__FR; r++)
#define ATTN__FOR_CH(c, nc) ATTN__UNROLL for (c = 0; c < ATTN__FCH; c++) if (c < (nc))

static int attn__fusable(const attn__head *t)
{
    const attn_attention_desc *d = t->d;
    const attn_score_row *k = t->k;
    int lse = k->stat == ATTN_STAT_LSE && !k->offset && k->exponent && /* Cog's sign, or a user's exponent */
              (k->exponent == attn__exponent_abs ? k->sign == attn__cog_sign : !k->sign);
    return t->w.kpan && !t->guard && !t->centered && !d->bias && d->dropout <= 0 &&
           (!d->mod || !d->mod->mask || d->mod->block) && /* a mask alone: the tiled engine asks it faster */
           (lse || k->map == attn__ea_map) && d->dk <= ATTN__FDK &&
           attn__depth_blocks(d->dk, ATTN__KC) == d->dk && d->dv % ATTN__VW == 0 && d->dv <= ATTN__FDV;
}

/* The exponent of a score vector: s or (Cog) |s|, -3e38 where vis is 0 (edge tiles only). */
ATTN__INLINE attn__v attn__fused_exponent(attn__v s, int cog, const attn_float *vis)
{
    attn__v v, x = cog ? attn__vabs(s) : s;
    if (!vis) return x;
    v = attn__vload(vis);
    return attn__vfma(x, v, attn__vmul(attn__vsub(v, attn__vset1(1)), attn__vset1((attn_float)3e38)));
}

/* The lane-wise maximum of a row's exponents over the panel. */
ATTN__INLINE attn__v attn__fused_max(const attn__v *s, int cog, const attn_float *vis)
{
    attn__v x = attn__fused_exponent(s[0], cog, vis);
    int v;
    ATTN__UNROLL for (v = 1; v < ATTN__NV; v++)
        x = attn__vmax(x, attn__fused_exponent(s[v], cog, vis ? vis + v * ATTN__VW : NULL));
    return x;
}

/* acc [FR, nc vectors] += P [FR, kb] V [kb, nc vectors] (P's rows FKEYS apart, V's dv). */
ATTN__INLINE void attn__fused_pv(attn__v acc[ATTN__FR][ATTN__FCH], const attn_float *pb, const attn_float *V,
                                 int dv, int kb, int nc)
{
    attn__v vv[ATTN__FCH];
    int j, r, c;
    for (j = 0; j < kb; j++) {
        ATTN__FOR_CH(c, nc) {
            vv[c] = attn__vload(V + (size_t)j * dv + c * ATTN__VW);
            ATTN__IN_REG(vv[c]);
        }
        ATTN__FOR_FR(r) {
            attn__v p = attn__vset1(pb[r * ATTN__FKEYS + j]);
            ATTN__FOR_CH(c, nc) acc[r][c] = attn__vfma(p, vv[c], acc[r][c]);
        }
    }
}

/* The same on O's buffer ob [FR, nv vectors] (rows dv apart), by the GEMM's micro-kernels. */
static void attn__fused_pv_buffer(attn_float *ob, const attn_float *pb, const attn_float *V, int dv, int kb,
                                  int nv)
{
    size_t ld = (size_t)dv;
    int c = 0;
    for (; c + ATTN__NV <= nv; c += ATTN__NV)
        attn__micro_wide_sb(kb, pb, ATTN__FKEYS, 1, V + c * ATTN__VW, ld, ob + c * ATTN__VW, ld, 1, 1, 0);
    for (; c < nv; c++)
        attn__micro_narrow_sb(kb, pb, ATTN__FKEYS, 1, V + c * ATTN__VW, ld, ob + c * ATTN__VW, ld, 1, 1, 0);
}

/* One panel's weights from its scores S: for softmax and Cog (form 0, 1) the rows' maxima m raised
   where an exponent passed them by more than the slack (l, O and the group's weights so far, the g
   entries of each pb row, times e^(m_old - m_new)), then P = e^(x - m) (Cog: times sign s) or (EA,
   form 2) s^2 / (1 + s^2), into pb's rows and its sums into l. vis: each row's visibility (edge
   panels only: a constant 0 otherwise); form and edge are constants where inlined. */
ATTN__INLINE void attn__fused_panel(attn__v S[ATTN__FR][ATTN__NV], const attn_float *const *vis, int form,
                                    int edge, attn_float *m, attn__v *l, attn__v acc[ATTN__FR][ATTN__FCH],
                                    int nv, attn_float *ob, int dv, attn_float *pb, int g)
{
    attn_float a[ATTN__FRV] = {0};
    attn__v up = attn__vset1(0);
    int r, c, v, cog = form == 1;
    ATTN__FOR_FR(r) /* the rows' largest exponents above their maxima */
        if (form != 2) up = attn__vmax(up, attn__vsub(attn__fused_max(S[r], cog, edge ? vis[r] : NULL),
                                                      attn__vset1(m[r])));
    if (form != 2 && attn__vhmax(up) > ATTN__FSLACK) { /* past the slack (one test for all rows) */
        ATTN__FOR_FR(r) { /* a[r] = m_old - m_new */
            attn_float top = attn__vhmax(attn__fused_max(S[r], cog, edge ? vis[r] : NULL));
            top = top > m[r] ? top : m[r];
            a[r] = m[r] - top;
            m[r] = top;
        }
        for (r = 0; r < ATTN__FRV; r += ATTN__VW) attn__vstore(a + r, attn__vexp(attn__vload(a + r)));
        ATTN__FOR_FR(r) {
            attn__v f = attn__vset1(a[r]);
            l[r] = attn__vmul(l[r], f);
            ATTN__FOR_CH(c, nv) acc[r][c] = attn__vmul(acc[r][c], f);
            if (!ATTN__FKEEP) attn_scale((size_t)dv, a[r], ob + r * dv);
            attn_scale((size_t)g, a[r], pb + r * ATTN__FKEYS);
        }
    }
    ATTN__FOR_FR(r)
        ATTN__UNROLL for (v = 0; v < ATTN__NV; v++) {
            const attn_float *w = edge && vis[r] ? vis[r] + v * ATTN__VW : NULL;
            attn__v p;
            p = form == 2 ? attn__ea_vg(S[r][v])
                          : attn__vexp_shifted(attn__fused_exponent(S[r][v], cog, w), attn__vset1(m[r]));
            if (w) p = attn__vmul(p, attn__vload(w));
            l[r] = attn__vadd(l[r], p);
            if (cog) { /* p sign s: s 2^126 clamped to [-p, p] (exact for |s| >= 2^-102: p < 2^24) */
                attn__v sg = attn__vmul(S[r][v], attn__vset1((attn_float)8.50705917e37f));
                p = attn__vmin(p, attn__vmax(attn__vsub(attn__vset1(0), p), sg));
            }
            attn__vstore(pb + r * ATTN__FKEYS + g + v * ATTN__VW, p);
        }
}

/* ALiBi on a panel's scores: S[r][c] -= m (d + r - c), d = the first row's distance to the panel's
   first key (rows past nr repeat row nr - 1), rounded as ramp_sub rounds it. */
ATTN__INLINE void attn__fused_alibi(attn__v S[ATTN__FR][ATTN__NV], attn_float m, int d, int nr)
{
    attn__v vm = attn__vset1(m), lane = attn__vload(attn__lanes);
    int r, v;
    ATTN__FOR_FR(r)
        ATTN__UNROLL for (v = 0; v < ATTN__NV; v++) {
            attn__v x = attn__vsub(attn__vset1((attn_float)(d + ATTN__MIN(r, nr - 1) - v * ATTN__VW)), lane);
            S[r][v] = attn__vsub(S[r][v], attn__vmul(vm, x));
        }
}

/* S = q K^T over one panel: FR rows of scaled queries qs [FR, dk], the panel's keys kt [dk, PANEL]. */
ATTN__INLINE void attn__fused_qk(attn__v S[ATTN__FR][ATTN__NV], const attn_float *qs, const attn_float *kt,
                                 int dk)
{
    attn__v kv[ATTN__NV];
    int r, c, v;
    ATTN__FOR_FR(r)
        ATTN__UNROLL for (v = 0; v < ATTN__NV; v++) S[r][v] = attn__vset1(0);
    for (c = 0; c < dk; c++) {
        ATTN__UNROLL for (v = 0; v < ATTN__NV; v++) {
            kv[v] = attn__vload(kt + c * ATTN__PANEL + v * ATTN__VW);
            ATTN__IN_REG(kv[v]);
        }
        ATTN__FOR_FR(r) {
            attn__v q = attn__vset1(qs[r * dk + c]);
            ATTN__UNROLL for (v = 0; v < ATTN__NV; v++) S[r][v] = attn__vfma(q, kv[v], S[r][v]);
        }
    }
}

/* Rows [i, i + nr) of O and their stats, nr <= FR, with nv = dv / VW (a constant where inlined).
   A score modifier takes a group's scores in memory (sm), row by row, before its weights (ALiBi's
   ramp is added in registers), and so does a registered kind's exponent (into sx, the rows'
   visibility given), whose x then takes softmax's place. Under masks (key mask, segments, a sparse
   pattern, a mask modifier) gs holds what the query tile sees of each group of keys
   (ATTN_BLOCK_EMPTY: skipped, _FULL, or _PARTIAL: asked again for these rows; NULL: all partial): a
   group these rows do not see is skipped, and one they see in part gets the rows' 0/1 visibility
   (vb) as its panels' edge. */
ATTN__INLINE void attn__fused_rows_nv(const attn__head *t, int i, int nr, attn_float *O, attn_float *st,
                                      const unsigned char *gs, int nv, int form)
{
    const attn_attention_desc *d = t->d;
    const attn_score_row *k = t->k;
    const attn_score_mod *mod = d->mod && d->mod->score ? d->mod : NULL;
    int ux = form == 0 && k->exponent != attn__exponent_s;     /* a registered kind's exponent */
    int alibi = mod && mod->score == attn__alibi_score && !ux; /* ALiBi's ramp added in registers */
    attn_float slope = alibi ? ((const attn_mod *)mod->ctx)->own.slope[t->h] : 0;
    const attn_score_mod *md = alibi ? NULL : mod;             /* a modifier through memory */
    int dk = d->dk, dv = d->dv, jend = attn__key_end(d, i, nr), r, c, v, j0, g, kg;
    attn_float qs[ATTN__FR * ATTN__FDK], pb[ATTN__FR * ATTN__FKEYS], m[ATTN__FR];
    attn_float ob[ATTN__FKEEP ? 1 : ATTN__FR * ATTN__FDV], sm[ATTN__FR * ATTN__FKEYS];
    attn_float vb[ATTN__FR * ATTN__FKEYS], sx[ATTN__FR * ATTN__FKEYS];
    attn__v S[ATTN__FR][ATTN__NV], acc[ATTN__FR][ATTN__FCH], l[ATTN__FR];
    int masked = attn__masked(d), part, seen;
    ATTN__FOR_FR(r) { /* q scaled once; empty accumulators */
        const attn_float *q = t->Qp + (size_t)(i + ATTN__MIN(r, nr - 1)) * t->ld;
        ATTN__ISA(scale_copy)((size_t)dk, t->scale, q, qs + r * dk);
        m[r] = (attn_float)-3e38;
        l[r] = attn__vset1(0);
        ATTN__FOR_CH(c, nv) acc[r][c] = attn__vset1(0);
    }
    if (!ATTN__FKEEP) ATTN__ISA(fill)((size_t)ATTN__FR * dv, 0, ob);
    for (j0 = 0; j0 < jend; j0 += kg) { /* a group of kg keys: P [FR, kg] panel by panel, then O += P V */
        kg = ATTN__MIN(ATTN__FKEYS, jend - j0);
        seen = !masked ? (int)ATTN_BLOCK_FULL : gs ? (int)gs[j0 / ATTN__FKEYS] : (int)ATTN_BLOCK_PARTIAL;
        if (seen == ATTN_BLOCK_PARTIAL) seen = attn__keys_seen(d, t->b, t->h, i, nr, j0, kg); /* these rows */
        if (seen == ATTN_BLOCK_EMPTY) continue;
        part = seen == ATTN_BLOCK_PARTIAL;
        if (part) /* rows past nr repeat row nr - 1; columns past kg are 0 to the panel's end */
            ATTN__FOR_FR(r)
                for (c = 0; c < (kg + ATTN__PANEL - 1) / ATTN__PANEL * ATTN__PANEL; c++)
                    vb[r * ATTN__FKEYS + c] =
                        (attn_float)(c < kg && attn__sees(d, t->b, t->h, i + ATTN__MIN(r, nr - 1), j0 + c));
        for (g = 0; (md || ux) && g < kg; g += ATTN__PANEL) { /* the group's scores into sm, row by row */
            attn__fused_qk(S, qs, t->w.kpan + (size_t)(j0 + g) * dk, dk);
            ATTN__FOR_FR(r)
                ATTN__UNROLL for (v = 0; v < ATTN__NV; v++)
                    attn__vstore(sm + r * ATTN__FKEYS + g + v * ATTN__VW, S[r][v]);
        }
        for (r = 0; md && r < nr; r++)
            md->score(md->ctx, t->b, t->h, i + r + d->Tk - d->Tq, j0, kg, sm + r * ATTN__FKEYS);
        if (ux && !part && kg == ATTN__FKEYS && (!d->causal || i + d->Tk - d->Tq + 1 - j0 >= kg))
            k->exponent((size_t)ATTN__FR * kg, sm, NULL, sx); /* every row sees every key: one call */
        else if (ux) ATTN__FOR_FR(r) { /* x = the kind's exponent of s (-3e38 where hidden) */
            int p = i + ATTN__MIN(r, nr - 1) + d->Tk - d->Tq;
            int see = d->causal ? ATTN__MAX(0, ATTN__MIN(kg, p + 1 - j0)) : kg;
            const attn_float *w = part ? vb + r * ATTN__FKEYS : see < kg ? attn__ones_zeros + 64 - see : NULL;
            k->exponent((size_t)kg, sm + r * ATTN__FKEYS, w, sx + r * ATTN__FKEYS);
            for (c = kg; c % ATTN__PANEL; c++) sx[r * ATTN__FKEYS + c] = (attn_float)-3e38; /* to the panel */
        }
        for (g = 0; g < kg; g += ATTN__PANEL) {
            const attn_float *kt = t->w.kpan + (size_t)(j0 + g) * dk, *vis[ATTN__FR];
            int kb = ATTN__MIN(ATTN__PANEL, kg - g), see = d->causal ? i + d->Tk - d->Tq + 1 - j0 - g : kb;
            ATTN__FOR_FR(r) /* the keys row r sees: an edge tile's 0/1 visibility, else NULL */
                vis[r] = part ? vb + r * ATTN__FKEYS + g
                         : ATTN__MIN(see + r, kb) >= ATTN__PANEL
                             ? NULL
                             : attn__ones_zeros + 64 - ATTN__MAX(0, ATTN__MIN(see + r, kb));
            if (md || ux)
                ATTN__FOR_FR(r)
                    ATTN__UNROLL for (v = 0; v < ATTN__NV; v++)
                        S[r][v] = attn__vload((ux ? sx : sm) + r * ATTN__FKEYS + g + v * ATTN__VW);
            else {
                attn__fused_qk(S, qs, kt, dk);
                if (alibi) attn__fused_alibi(S, slope, i + d->Tk - d->Tq - j0 - g, nr);
            }
            if (vis[0]) /* edge panels (the causal diagonal, the last keys) apart: vis a constant 0 */
                attn__fused_panel(S, vis, form, 1, m, l, acc, nv, ob, dv, pb, g);
            else
                attn__fused_panel(S, vis, form, 0, m, l, acc, nv, ob, dv, pb, g);
        }
        if (ATTN__FKEEP) attn__fused_pv(acc, pb, t->Vp + (size_t)j0 * dv, dv, kg, nv); /* O += P V */
        else attn__fused_pv_buffer(ob, pb, t->Vp + (size_t)j0 * dv, dv, kg, nv);
    }
    ATTN__FOR_FR(r) if (r < nr) { /* O = acc / l; stats m + log l or (EA) l (0: the row sees nothing) */
        attn_float sum = attn__vhsum(l[r]), *o = O + (size_t)(i + r) * dv;
        int empty = form == 2 ? sum < ATTN__TINY : !(sum > 0);
        attn__v f = attn__vset1(empty ? 0 : 1 / sum);
        if (ATTN__FKEEP) {
            ATTN__FOR_CH(c, nv) attn__vstore(o + c * ATTN__VW, attn__vmul(acc[r][c], f));
        } else
            ATTN__ISA(scale_copy)((size_t)dv, empty ? 0 : 1 / sum, ob + r * dv, o);
        st[i + r] = form == 2 ? sum : empty ? 0 : m[r] + ATTN__LOG(sum);
    }
}

/* Query rows [i0, i0 + br) fused, FR at a time (with O in registers, its vectors a constant; with O in a
   buffer, the kind's form). */
static void attn__fused_rows(const attn__head *t, int i0, int br, attn_float *O, attn_float *st)
{
    const attn_attention_desc *d = t->d;
    int i, nr, nv = d->dv / ATTN__VW, j0, jend = attn__key_end(d, i0, br);
    int form = t->k->stat == ATTN_STAT_SUM ? 2 : t->k->exponent == attn__exponent_abs;
    unsigned char gs[ATTN__FGROUPS], *g = attn__masked(d) && jend <= ATTN__FGROUPS * ATTN__FKEYS ? gs : NULL;
    for (j0 = 0; g && j0 < jend; j0 += ATTN__FKEYS) /* what the whole tile sees of each group of keys */
        g[j0 / ATTN__FKEYS] =
            (unsigned char)attn__keys_seen(d, t->b, t->h, i0, br, j0, ATTN__MIN(ATTN__FKEYS, jend - j0));
    for (i = i0; i < i0 + br; i += nr) {
        nr = ATTN__MIN(ATTN__FR, i0 + br - i);
        if (!ATTN__FKEEP) {
            if (form == 0) attn__fused_rows_nv(t, i, nr, O, st, g, nv, 0);
            else if (form == 1) attn__fused_rows_nv(t, i, nr, O, st, g, nv, 1);
            else attn__fused_rows_nv(t, i, nr, O, st, g, nv, 2);
        } else
            switch (nv) {
            case 1: attn__fused_rows_nv(t, i, nr, O, st, g, 1, form); break;
            case 2: attn__fused_rows_nv(t, i, nr, O, st, g, 2, form); break;
            case 3: attn__fused_rows_nv(t, i, nr, O, st, g, 3, form); break;
            default: attn__fused_rows_nv(t, i, nr, O, st, g, 4, form); break;
            }
    }
}
#endif
/* ---- end of per-ISA code ---- */
#ifndef ATTN__PASS
#ifdef ATTN__FUSED /* the fused forward's entries from the shared code */
#define ATTN__FUSED_KERNELS(X) X(fusable) X(fused_rows)
ATTN__FUSED_KERNELS(ATTN__ISA_POINTER)
#else
#define ATTN__FUSED_KERNELS(X)
#endif

/* Forward of one (b, h): streams key tiles per query tile. Softmax and Cog keep a running max m and
   sum l of exp(x - m) with x = s (or |s|), rescaling the accumulator when m grows; EA needs no max
   (g is bounded) and keeps only the running N = sum g. */
static void attn__scored_forward_bh(const attn__args *a, int b, int h, attn_float *ws)
{
    const attn_attention_desc *d = a->d;
    attn__head t;
    size_t bh = (size_t)b * d->H + h;
    attn_float *Op = a->O + bh * d->Tq * d->dv, *st = a->stats + bh * d->Tq, *weights = a->weights;
    attn_float *S, *P, *X, *n, *hid;
    int i0, j0, bc, r;
    attn__head_init(&t, a, b, h, ws, 0);
    S = t.w.S; P = t.w.P; X = t.w.X; n = t.w.n; hid = t.w.vis;
    for (i0 = 0; i0 < d->Tq; i0 += ATTN__BR) {
        int br = ATTN__MIN(ATTN__BR, d->Tq - i0);
#ifdef ATTN__FUSED
        if (ATTN__ISA(fusable)(&t)) ATTN__ISA(fused_rows)(&t, i0, br, Op, st);
        else
#endif
            attn__tiled_rows(&t, i0, br, Op, st);
        if (!weights) continue;
        for (j0 = 0; j0 < d->Tk; j0 += ATTN__BC) { /* A itself, recomputed from the final stats */
            attn_float *w = weights + (bh * d->Tq + i0) * d->Tk + j0;
            int full;
            bc = ATTN__MIN(ATTN__BC, d->Tk - j0);
            full = attn__tile_scores(d, b, h, i0, br, j0, bc, t.Qp, t.Kp, t.ld, t.w.kpan, t.scale, S, P,
                                     t.guard, 0, NULL);
            memcpy(hid, P, sizeof(attn_float) * (size_t)br * bc); /* visibility */
            attn__tile_weights(t.k, S, P, X, br, bc, st + i0, full);
            if (t.centered) attn__center(P, hid, n, br, bc);
            for (r = 0; r < br; r++)
                memcpy(w + (size_t)r * d->Tk, P + r * bc, sizeof(attn_float) * (size_t)bc);
        }
    }
}

/* Softmax's and Cog's dS for the key j whose weight a_j has |a_j| > 1/2 (a row has at most one):
   |a_j| dA_j - a_j D = |a_j| dO . (v_j - sign(a_j) o), the difference of the vectors taken first. As
   a row nears one-hot, o nears sign(a_j) v_j and dA_j - D cancels; computed from the two dot
   products it keeps their rounding errors, eps |dO| |v|, against a value (1 - |a_j|) times smaller.
   Query row i, keys [j0, j0 + bc), the row's weights a and its dS [bc] (updated in place). */
static void attn__sharp_dscore(const attn__head *t, int i, int j0, int bc, const attn_float *a,
                               attn_float *ds)
{
    const attn_float *dO = t->dOp + (size_t)i * t->d->dv, *o = t->Op + (size_t)i * t->d->dv, *v;
    attn__v vtop = attn__vset1(0);
    attn_float top;
    double u = 0, sg;
    int j = 0, c;
    for (; j + ATTN__VW <= bc; j += ATTN__VW) vtop = attn__vmax(vtop, attn__vabs(attn__vload(a + j)));
    for (top = attn__vhmax(vtop); j < bc; j++) top = ATTN__MAX(top, (attn_float)fabs(a[j]));
    if (top <= (attn_float)0.5) return; /* the common case: no dominant key in this tile */
    for (j = 0; (attn_float)fabs(a[j]) <= (attn_float)0.5; j++) {}
    v = t->Vp + (size_t)(j0 + j) * t->d->dv;
    sg = a[j] < 0 ? -1 : 1;
    for (c = 0; c < t->d->dv; c++) u += (double)dO[c] * ((double)v[c] - sg * (double)o[c]);
    ds[j] = (attn_float)(fabs((double)a[j]) * u);
}

/* A row's dS = ds [n] back through the modifier md at the unchanged scores s: its parameters' gradient
   from ds (made 0 where not visible), then ds through its vjp (0 there again). */
static void attn__mod_backward(const attn_score_mod *md, int b, int h, int p, int j0, int n,
                               const attn_float *s, attn_float *ds, const attn_float *vis)
{
    attn__zero_hidden(ds, vis, (size_t)n);
    if (md->grad) md->grad(md->ctx, b, h, p, j0, n, s, ds);
    if (!md->vjp) return;
    md->vjp(md->ctx, b, h, p, j0, n, s, ds);
    attn__zero_hidden(ds, vis, (size_t)n);
}

/* The backward pass over one key tile [j0, j0 + bc) for query rows [i0, i0 + br), with D and
   (centered) the shifts n [br] of these rows (see attn__scored_backward_bh). */
static void attn__backward_tile(const attn__head *t, int i0, int br, int j0, int bc, const attn_float *D,
                                const attn_float *n)
{
    const attn_attention_desc *d = t->d;
    const attn_score_row *k = t->k;
    attn_float *S = t->w.S, *P = t->w.P, *dA = t->w.X, *vis = t->w.vis, *Pd = d->dropout > 0 ? t->w.drop : P;
    attn_float *dbias = t->a->dbias, scale = t->scale;
    const attn_float *dOi = t->dOp + (size_t)i0 * d->dv, *Qi = t->Qp + (size_t)i0 * t->ld,
                     *Kj = t->Kp + (size_t)j0 * t->ld;
    attn_float *dVj = t->dVp + (size_t)j0 * d->dv, *dQi = t->dQp + (size_t)i0 * t->ld,
               *dKj = t->dKp + (size_t)j0 * t->ld;
    int r, dv = d->dv, dk = d->dk, ld = t->ld;
    int sharp = (k->vjp == attn__softmax_vjp || k->vjp == attn__cog_vjp) && !t->centered && !t->guard &&
                d->dropout <= 0;
    int full = attn__tile_scores(d, t->b, t->h, i0, br, j0, bc, t->Qp, t->Kp, ld, t->w.kpan, scale, S, vis,
                                 t->guard, 0, t->w.raw);
    memcpy(P, vis, sizeof(attn_float) * (size_t)br * bc);
    attn__tile_weights(k, S, P, dA, br, bc, t->st + i0, full); /* dA as scratch until it is computed */
    if (t->centered) attn__center(P, vis, n, br, bc); /* dV uses the centered A */
    if (d->dropout > 0) { /* dV with the dropped A; dA through the mask */
        memcpy(Pd, P, sizeof(attn_float) * (size_t)br * bc);
        attn__tile_dropout(d, i0, br, j0, bc, Pd);
    }
    if (t->guard) attn__guarded_product(1, br, bc, dv, 1, Pd, vis, dOi, dv, dVj, dv);
    else attn_gemm(1, 0, bc, dv, br, 1, Pd, bc, dOi, dv, 1, dVj, dv); /* dV += A^T dO */
    attn__tile_product(br, bc, dv, 1, t->dOp, t->Vp, dv, t->w.vpan, d->Tk, i0, j0, 0, dA); /* dA = dO V^T */
    if (d->dropout > 0) attn__tile_dropout(d, i0, br, j0, bc, dA);
    for (r = 0; r < br; r++) { /* A = 0 (not visible, empty row) gives dS = 0 in every form */
        attn_float *ds = dA + r * bc, *ar = P + r * bc, N = t->st[i0 + r];
        if (t->centered) attn_axpy((size_t)bc, n[r], vis + r * bc, ar); /* the score map's A = a + c vis */
        k->vjp((size_t)bc, S + r * bc, ar, vis + r * bc, ds, D[r],
               k->stat == ATTN_STAT_SUM && N >= ATTN__TINY ? 1 / N : 0);
        if (sharp) attn__sharp_dscore(t, i0 + r, j0, bc, ar, ds);
        if (t->w.raw) /* dS through the modifier (its parameters' gradient first), at the unchanged s */
            attn__mod_backward(d->mod, t->b, t->h, i0 + r + d->Tk - d->Tq, j0, bc, t->w.raw + r * bc, ds,
                               vis + r * bc);
        else if (t->guard) attn__zero_hidden(ds, vis + r * bc, (size_t)bc);
    }
    if (dbias) /* dbias += dS */
        ATTN__ISA(rows_op)(0, (size_t)br, (size_t)bc, dA, (size_t)bc,
                      dbias + ((size_t)t->h * d->Tq + i0) * d->Tk + j0, (size_t)d->Tk);
    if (t->guard) {
        attn__guarded_product(0, br, bc, dk, scale, dA, vis, Kj, ld, dQi, ld);
        attn__guarded_product(1, br, bc, dk, scale, dA, vis, Qi, ld, dKj, ld);
        return;
    }
    attn_gemm(0, 0, br, dk, bc, scale, dA, bc, Kj, ld, 1, dQi, ld); /* dQ += scale dS K */
    attn_gemm(1, 0, bc, dk, br, scale, dA, bc, Qi, ld, 1, dKj, ld); /* dK += scale dS^T Q */
}

/* Backward of one (b, h), tile by tile with A recomputed from the stats:
     dV += A^T dO,  dA = dO V^T,  D_i = dO_i . O_i,
     softmax dS = A (dA - D);  Cog dS = |A| dA - A D;  EA dS = (dA - D) / N * 2 s (1 - g)^2,
     sigmoid dS = dA A (1 - A);  linear_raw dS = dA where visible,
     centered: dV with the centered A, D_i = dO_i . (O_i + c_i sum_visible v), dS as softmax's,
     dbias += dS,  dQ += scale dS K,  dK += scale dS^T Q. */
static void attn__scored_backward_bh(const attn__args *a, int b, int h, attn_float *ws)
{
    const attn_attention_desc *d = a->d;
    attn__head t;
    attn_float *vsum, *D, *n;
    int i0, j0, bc, r, dv = d->dv;
    attn__head_init(&t, a, b, h, ws, 1);
    vsum = t.w.vsum; D = t.w.l; n = t.w.n;
    for (i0 = 0; i0 < d->Tq; i0 += ATTN__BR) {
        int br = ATTN__MIN(ATTN__BR, d->Tq - i0), jend = attn__key_end(d, i0, br), r0, rb, kb;
        for (r = 0; r < br; r++)
            D[r] = attn_dot((size_t)dv, t.dOp + (size_t)(i0 + r) * dv, t.Op + (size_t)(i0 + r) * dv);
        if (t.centered) { /* D_i = dO_i . (O_i + sum v / n): a pre-pass for the sums */
            memset(vsum, 0, sizeof(attn_float) * (size_t)br * dv);
            for (r = 0; r < br; r++) n[r] = 0;
            for (j0 = 0; (j0 = attn__next_keys(d, b, h, i0, br, j0, jend, &bc)) < jend; j0 += bc) {
                attn__tile_scores(d, b, h, i0, br, j0, bc, t.Qp, t.Kp, t.ld, t.w.kpan, t.scale, t.w.S,
                                  t.w.vis, t.guard, 0, NULL);
                attn__visible_sums(t.w.vis, t.Vp + (size_t)j0 * dv, br, bc, dv, vsum, n, t.guard);
            }
            for (r = 0; r < br; r++) {
                n[r] = attn__center_shift(d, i0 + r, n[r]); /* from here on n holds the shift c */
                D[r] += n[r] * attn_dot((size_t)dv, t.dOp + (size_t)(i0 + r) * dv, vsum + (size_t)r * dv);
            }
        }
        for (j0 = 0; (j0 = attn__next_keys(d, b, h, i0, br, j0, jend, &bc)) < jend; j0 += bc)
            for (r0 = 0; r0 < br; r0 += rb)
                if ((kb = attn__band(d, i0 + r0, br - r0, j0, bc, &rb)) > 0)
                    attn__backward_tile(&t, i0 + r0, rb, j0, kb, D + r0, n + r0);
    }
}

static attn_status attn__scored_forward(const attn_attention_desc *d, attn_float *O, attn_float *stats,
                                        attn_float *weights, const attn_float *Q, const attn_float *K,
                                        const attn_float *V, void *work, size_t work_bytes)
{
    attn__args a;
    ATTN__TRY(attn__forward_args(&a, d, O, stats, weights, Q, K, V, work, work_bytes));
    attn__run_heads(&a, attn__scored_forward_bh, work, attn__scored_floats(d), 0, 1);
    return ATTN_OK;
}

static attn_status attn__scored_backward(const attn_attention_desc *d, const attn_attention_grads *g,
                                         const attn_float *dO, const attn_float *Q, const attn_float *K,
                                         const attn_float *V, const attn_float *O, const attn_float *stats,
                                         void *work, size_t work_bytes)
{
    attn__args a;
    ATTN__TRY(attn__backward_args(&a, d, g, dO, Q, K, V, O, stats, work, work_bytes));
    attn__run_heads(&a, attn__scored_backward_bh, work, attn__scored_floats(d),
                    a.dbias != NULL || (d->mod && d->mod->grad), d->kv_heads ? d->H / d->kv_heads : 1);
    return ATTN_OK;
}

/* Linear-time attention by feature maps: o_i = S_i^T phi(q_i) / (phi(q_i) . z_i + eps) with
   S_i = sum_j phi(k_j) v_j^T and z_i = sum_j phi(k_j) over the keys query i sees (a prefix when
   causal), eps = 1e-6, no score scale. Kernel (Katharopoulos et al. 2020): phi = elu + 1.
   Taylor (Conti 2024, Sec. 2.1.2): phi(x) = [1, x / |x|], so phi(q) . phi(k) = 1 + qh . kh. A masked key has
   phi(k) = 0. Time O(T F dv) with F features, state O(F dv): nothing T x T, forward or backward.
   The stats are den_i. */
#define ATTN__KEPS 1e-6f

/* The feature maps of the linear-time kinds: phi of a row x [dk] into out [F], and the
   vector-Jacobian product dx += J_phi(x)^T dphi. Taylor: [1, x / |x|], x / |x| = 0 when
   |x| < 1e-12. Kernel: elu(x) + 1. */
static int attn__taylor_features(int dk) { return dk + 1; }
static void attn__taylor_phi(const attn_float *x, int dk, attn_float *out)
{
    attn_float n = (attn_float)sqrt((double)attn_dot((size_t)dk, x, x)),
               inv = n < (attn_float)1e-12 ? 0 : 1 / n;
    int c;
    out[0] = 1;
    for (c = 0; c < dk; c++) out[c + 1] = x[c] * inv;
}
static void attn__taylor_vjp(const attn_float *x, int dk, const attn_float *dphi, attn_float *dx)
{
    attn_float n = (attn_float)sqrt((double)attn_dot((size_t)dk, x, x)), xg = 0;
    int c;
    if (n < (attn_float)1e-12) return;
    for (c = 0; c < dk; c++)
        xg += x[c] / n * dphi[c + 1]; /* d(x/|x|) = (g - xh (xh . g)) / |x| with g = dphi[1..] */
    for (c = 0; c < dk; c++) dx[c] += (dphi[c + 1] - x[c] / n * xg) / n;
}

static int attn__elu_features(int dk) { return dk; }
/* elu(x) + 1 = max(x, 0) + min(exp(x), 1): the SIMD exp of the row, then branch-free (the signs are
   random: a branch here mispredicts half the time). */
static void attn__elu_phi(const attn_float *x, int dk, attn_float *out)
{
    int c;
    attn_exp((size_t)dk, x, out);
    for (c = 0; c < dk; c++) out[c] = (x[c] > 0 ? x[c] : 0) + (out[c] > 1 ? 1 : out[c]); /* NaN passes */
}
static void attn__elu_vjp(const attn_float *x, int dk, const attn_float *dphi, attn_float *dx)
{
    attn_float e[64];
    int c, c0, n;
    for (c0 = 0; c0 < dk; c0 += 64) { /* phi'(x) = 1 for x > 0, exp(x) otherwise, i.e. min(exp(x), 1) */
        n = ATTN__MIN(64, dk - c0);
        attn_exp((size_t)n, x + c0, e);
        for (c = 0; c < n; c++) dx[c0 + c] += dphi[c0 + c] * (e[c] < 1 ? e[c] : 1);
    }
}
static const attn_feature_row attn__feature_elu = {attn__elu_features, attn__elu_phi, attn__elu_vjp};
static const attn_feature_row attn__feature_taylor = {attn__taylor_features, attn__taylor_phi,
                                                      attn__taylor_vjp};

/* The last key query i sees (-1: none). */
static int attn__kernel_last(const attn_attention_desc *d, int i)
{
    return d->causal ? ATTN__MIN(d->Tk - 1, i + d->Tk - d->Tq) : d->Tk - 1;
}

/* Scratch of one thread: the running sums S and R [F, dv], z and rho [F], phi(q), phi(k) and dphi
   [F] (forward uses S, z and the features); its bytes, a multiple of ATTN_ALIGN. */
typedef struct {
    attn_float *S, *R, *z, *rho, *fq, *fk, *dphi;
} attn__kernel_ws;

static size_t attn__kernel_ws_map(const attn_attention_desc *d, attn_float *ws, attn__kernel_ws *w)
{
    size_t F = (size_t)attn__row(d)->feature->features(d->dk);
    attn_arena ar;
    attn__arena_plan(&ar, ws);
    w->S = attn__arena_floats(&ar, F * d->dv);
    w->R = attn__arena_floats(&ar, F * d->dv);
    w->z = attn__arena_floats(&ar, F);
    w->rho = attn__arena_floats(&ar, F);
    w->fq = attn__arena_floats(&ar, F);
    w->fk = attn__arena_floats(&ar, F);
    w->dphi = attn__arena_floats(&ar, F);
    return ar.used;
}
static size_t attn__kernel_floats(const attn_attention_desc *d)
{
    attn__kernel_ws w;
    return attn__kernel_ws_map(d, NULL, &w) / sizeof(attn_float);
}

static size_t attn__kernel_workspace(const attn_attention_desc *d)
{
    return attn__kernel_floats(d) * (size_t)attn_get_threads() * sizeof(attn_float) + ATTN_ALIGN;
}

/* The recurrence's two halves, shared by the engine and the layer's step: fold key k [dk] and value
   v [dv] into S [F, dv] and z [F] (S += phi(k) v^T, z += phi(k)); read query q into o [dv],
   o = phi(q)^T S / (phi(q) . z + eps), returning the denominator. f: [F] scratch. */
static void attn__kernel_fold(const attn_feature_row *fr, int dk, int dv, const attn_float *k,
                              const attn_float *v, attn_float *S, attn_float *z, attn_float *f)
{
    int c, F = fr->features(dk);
    fr->phi(k, dk, f);
    for (c = 0; c < F; c++) attn_axpy((size_t)dv, f[c], v, S + (size_t)c * dv);
    attn_axpy((size_t)F, 1, f, z);
}

static attn_float attn__kernel_read(const attn_feature_row *fr, int dk, int dv, const attn_float *q,
                                    const attn_float *S, const attn_float *z, attn_float *f, attn_float *o)
{
    int c, F = fr->features(dk);
    attn_float den;
    fr->phi(q, dk, f);
    den = attn_dot((size_t)F, f, z) + ATTN__KEPS;
    memset(o, 0, sizeof(attn_float) * (size_t)dv);
    for (c = 0; c < F; c++) attn_axpy((size_t)dv, f[c] / den, S + (size_t)c * dv, o);
    return den;
}

static void attn__kernel_forward_bh(const attn__args *a, int b, int h, attn_float *ws)
{
    const attn_attention_desc *d = a->d;
    const attn_float *Q = a->Q, *K = a->K, *V = a->V;
    attn_float *O = a->O, *stats = a->stats;
    size_t bh = (size_t)b * d->H + h;
    const attn_feature_row *fr = attn__row(d)->feature;
    int dk = d->dk, dv = d->dv, F = fr->features(dk), i, j = 0;
    const attn_float *Qp = Q + bh * d->Tq * dk, *Kp = K + bh * attn__kv_rows(d) * dk,
                     *Vp = V + bh * attn__kv_rows(d) * dv;
    attn__kernel_ws w;
    attn__kernel_ws_map(d, ws, &w);
    memset(w.S, 0, sizeof(attn_float) * (size_t)F * dv);
    memset(w.z, 0, sizeof(attn_float) * (size_t)F);
    for (i = 0; i < d->Tq; i++) {
        for (; j <= attn__kernel_last(d, i); j++) /* a masked key is left out */
            if (!d->key_mask || d->key_mask[(size_t)b * d->Tk + j])
                attn__kernel_fold(fr, dk, dv, Kp + (size_t)j * dk, Vp + (size_t)j * dv, w.S, w.z, w.fk);
        stats[bh * d->Tq + i] = attn__kernel_read(fr, dk, dv, Qp + (size_t)i * dk, w.S, w.z, w.fq,
                                                  O + (bh * d->Tq + i) * dv);
    }
}

/* Backward (Katharopoulos et al. 2020): dnum_i = dO_i / den_i, dden_i = -(dO_i . o_i) / den_i;
   forward pass: dphi(q_i) = S_i dnum_i + z_i dden_i;
   reverse pass with R_j = sum_{i sees j} phi(q_i) dnum_i^T, rho_j = sum_{i sees j} phi(q_i) dden_i:
   dphi(k_j) = R_j v_j + rho_j, dv_j += R_j^T phi(k_j); then through phi' (and the mask). */
static void attn__kernel_backward_bh(const attn__args *a, int b, int h, attn_float *ws)
{
    const attn_attention_desc *d = a->d;
    const attn_float *Q = a->Q, *K = a->K, *V = a->V, *O = a->Oin, *dO = a->dO, *stats = a->stats_in;
    attn_float *dQ = a->dQ, *dK = a->dK, *dV = a->dV;
    size_t bh = (size_t)b * d->H + h;
    const attn_feature_row *fr = attn__row(d)->feature;
    int dk = d->dk, dv = d->dv, F = fr->features(dk), i, j, c, iq;
    const attn_float *Qp = Q + bh * d->Tq * dk, *Kp = K + bh * d->Tk * dk, *Vp = V + bh * d->Tk * dv;
    attn__kernel_ws w;
    attn_float *S, *R, *z, *rho, *fq, *fk, *dphi;
    attn__kernel_ws_map(d, ws, &w);
    S = w.S; R = w.R; z = w.z; rho = w.rho; fq = w.fq; fk = w.fk; dphi = w.dphi;
    memset(S, 0, sizeof(attn_float) * (size_t)F * dv);
    memset(z, 0, sizeof(attn_float) * (size_t)F);
    for (i = 0, j = 0; i < d->Tq; i++) { /* forward pass: dQ */
        const attn_float *dOi = dO + (bh * d->Tq + i) * dv, *oi = O + (bh * d->Tq + i) * dv;
        attn_float den = stats[bh * d->Tq + i], dden = -attn_dot((size_t)dv, dOi, oi) / den;
        for (; j <= attn__kernel_last(d, i); j++)
            if (!d->key_mask || d->key_mask[(size_t)b * d->Tk + j])
                attn__kernel_fold(fr, dk, dv, Kp + (size_t)j * dk, Vp + (size_t)j * dv, S, z, fk);
        for (c = 0; c < F; c++) dphi[c] = attn_dot((size_t)dv, S + (size_t)c * dv, dOi) / den + z[c] * dden;
        fr->vjp(Qp + (size_t)i * dk, dk, dphi, dQ + (bh * d->Tq + i) * dk);
    }
    memset(R, 0, sizeof(attn_float) * (size_t)F * dv);
    memset(rho, 0, sizeof(attn_float) * (size_t)F);
    for (j = d->Tk - 1, iq = d->Tq - 1; j >= 0; j--) { /* reverse pass: dK, dV */
        for (; iq >= 0 && attn__kernel_last(d, iq) >= j; iq--) { /* queries that see key j join */
            const attn_float *dOi = dO + (bh * d->Tq + iq) * dv, *oi = O + (bh * d->Tq + iq) * dv;
            attn_float den = stats[bh * d->Tq + iq], dden = -attn_dot((size_t)dv, dOi, oi) / den;
            fr->phi(Qp + (size_t)iq * dk, dk, fq);
            for (c = 0; c < F; c++) attn_axpy((size_t)dv, fq[c] / den, dOi, R + (size_t)c * dv);
            attn_axpy((size_t)F, dden, fq, rho);
        }
        if (d->key_mask && !d->key_mask[(size_t)b * d->Tk + j]) continue; /* a masked key has no gradient */
        fr->phi(Kp + (size_t)j * dk, dk, fk);
        for (c = 0; c < F; c++) {
            dphi[c] = attn_dot((size_t)dv, R + (size_t)c * dv, Vp + (size_t)j * dv) + rho[c];
            attn_axpy((size_t)dv, fk[c], R + (size_t)c * dv, dV + (bh * d->Tk + j) * dv);
        }
        fr->vjp(Kp + (size_t)j * dk, dk, dphi, dK + (bh * d->Tk + j) * dk);
    }
}

static attn_status attn__kernel_forward(const attn_attention_desc *d, attn_float *O, attn_float *stats,
                                        attn_float *weights, const attn_float *Q, const attn_float *K,
                                        const attn_float *V, void *work, size_t work_bytes)
{
    attn__args a;
    ATTN__TRY(attn__forward_args(&a, d, O, stats, weights, Q, K, V, work, work_bytes));
    if (d->bias)
        return attn__fail(
            ATTN_ERR_ARG,
            "attn_attention_forward: the linear-time kinds have no additive bias (no linear-time form)");
    if (weights)
        return attn__fail(
            ATTN_ERR_ARG,
            "attn_attention_forward: the linear-time kinds never form the weights; pass weights = NULL");
    attn__run_heads(&a, attn__kernel_forward_bh, work, attn__kernel_floats(d), 0, 1);
    return ATTN_OK;
}

static attn_status attn__kernel_backward(const attn_attention_desc *d, const attn_attention_grads *g,
                                         const attn_float *dO, const attn_float *Q, const attn_float *K,
                                         const attn_float *V, const attn_float *O, const attn_float *stats,
                                         void *work, size_t work_bytes)
{
    attn__args a;
    ATTN__TRY(attn__backward_args(&a, d, g, dO, Q, K, V, O, stats, work, work_bytes));
    if (d->bias || a.dbias)
        return attn__fail(ATTN_ERR_ARG,
                          "attn_attention_backward: the linear-time kinds have no additive bias");
    attn__run_heads(&a, attn__kernel_backward_bh, work, attn__kernel_floats(d), 0, 1);
    return ATTN_OK;
}

/* ---- differential attention (Ye et al. 2024) ---- */

/* The two softmax maps: the same problem with the sub-heads of width dk / 2. */
static void attn__diff_desc(const attn_attention_desc *d, attn_attention_desc *c)
{
    *c = *d;
    c->kind = ATTN_SOFTMAX;
    c->dk = d->dk / 2;
    c->scale = attn__score_scale(c);
}

/* Work: the maps' workspace, then dx [B H Tq dv] (backward); its size. The maps read their sub-heads
   in place: q1 and q2 are the two halves of each q row (row stride dk), so nothing is copied. */
static size_t attn__diff_work_map(const attn_attention_desc *d, void *work, attn_float **dx)
{
    attn_attention_desc c;
    attn_arena ar;
    attn__diff_desc(d, &c);
    attn__arena_plan(&ar, work);
    attn__arena_take(&ar, attn__scored_workspace(&c)); /* the start of work */
    *dx = attn__arena_floats(&ar, (size_t)d->B * d->H * d->Tq * d->dv);
    return ar.used + ATTN_ALIGN;
}
static size_t attn__diff_workspace(const attn_attention_desc *d)
{
    attn_float *dx;
    return attn__diff_work_map(d, NULL, &dx);
}

/* The stats: O1, O2 [B H Tq dv] each, then lse1, lse2 and the RMSNorm's rstd [B H Tq] each. */
typedef struct {
    attn_float *O1, *O2, *lse1, *lse2, *rstd;
} attn__diff_stats;

static void attn__diff_stats_map(const attn_attention_desc *d, const attn_float *stats, attn__diff_stats *s)
{
    size_t rows = (size_t)d->B * d->H * d->Tq;
    s->O1 = attn__unconst(stats);
    s->O2 = s->O1 + rows * d->dv;
    s->lse1 = s->O2 + rows * d->dv;
    s->lse2 = s->lse1 + rows;
    s->rstd = s->lse2 + rows;
}

/* lambda = exp(lq1 . lk1) - exp(lq2 . lk2) + lambda_init; e[0], e[1] = the two exponentials. */
static attn_float attn__diff_lambda(const attn_attention_desc *d, attn_float *e)
{
    size_t h = (size_t)d->dk / 2;
    e[0] = d->lambda ? (attn_float)exp(attn_dot(h, d->lambda, d->lambda + h)) : 1;
    e[1] = d->lambda ? (attn_float)exp(attn_dot(h, d->lambda + 2 * h, d->lambda + 3 * h)) : 1;
    return e[0] - e[1] + d->lambda_init;
}

/* Runs the softmax engine on sub-head m (0 or 1) of q, k: a->Q, a->K (and a->dQ, a->dK) point at
   the full rows; the map sees columns [m dk/2, (m + 1) dk/2) of them with row stride dk. */
static void attn__diff_map(attn__args a, const attn_attention_desc *c, int m, attn__head_fn fn, void *work)
{
    size_t off = (size_t)m * c->dk;
    a.ldk = 2 * c->dk;
    a.d = c;
    a.Q += off; a.K += off;
    if (a.dQ) { a.dQ += off; a.dK += off; }
    attn__run_heads(&a, fn, work, attn__scored_floats(c), a.dbias != NULL, 1);
}

/* Forward: O1, O2 = A1 V, A2 V by the softmax kernel; x = O1 - lambda O2;
   o = (1 - lambda_init) gain x rstd with rstd = 1 / sqrt(mean x^2 + 1e-5). */
static attn_status attn__diff_forward(const attn_attention_desc *d, attn_float *O, attn_float *stats,
                                      attn_float *weights, const attn_float *Q, const attn_float *K,
                                      const attn_float *V, void *work, size_t work_bytes)
{
    attn__args a;
    attn_attention_desc c;
    attn__diff_stats st;
    attn_float e[2], lambda, *W2 = NULL;
    size_t nq = (size_t)d->B * d->H * d->Tq, r, k;
    int dv = d->dv;
    ATTN__TRY(attn__forward_args(&a, d, O, stats, weights, Q, K, V, work, work_bytes));
    attn__diff_desc(d, &c);
    attn__diff_stats_map(d, stats, &st);
    if (weights && !(W2 = (attn_float *)ATTN_MALLOC(sizeof(attn_float) * nq * d->Tk)))
        return attn__fail(ATTN_ERR_NOMEM, "attn_attention_forward: no memory for the second map's weights");
    a.O = st.O1; a.stats = st.lse1;
    attn__diff_map(a, &c, 0, attn__scored_forward_bh, work);
    a.O = st.O2; a.stats = st.lse2; a.weights = W2;
    attn__diff_map(a, &c, 1, attn__scored_forward_bh, work);
    lambda = attn__diff_lambda(d, e);
    for (r = 0; r < nq; r++) {
        attn_float *o = O + r * dv, ms;
        memcpy(o, st.O1 + r * dv, sizeof(attn_float) * dv);
        attn_axpy((size_t)dv, -lambda, st.O2 + r * dv, o);
        ms = attn_dot((size_t)dv, o, o) / dv;
        st.rstd[r] = 1 / (attn_float)sqrt((double)ms + 1e-5);
        for (k = 0; k < (size_t)dv; k++)
            o[k] *= (1 - d->lambda_init) * st.rstd[r] * (d->gain ? d->gain[k] : 1);
    }
    if (W2) {
        attn_axpy(nq * d->Tk, -lambda, W2, weights);
        ATTN_FREE(W2);
    }
    return ATTN_OK;
}

/* Backward, with c = 1 - lambda_init, g = gain and x, rstd from the forward pass:
     dgain += c dy x rstd,  dx = c rstd (g dy - x rstd^2 mean(x g dy)),
     the maps get dO1 = dx and dO2 = -lambda dx,  dlambda = -sum dx . O2,
     dlq1 = dlambda e1 lk1, dlk1 = dlambda e1 lq1, dlq2 = -dlambda e2 lk2, dlk2 = -dlambda e2 lq2. */
static attn_status attn__diff_backward(const attn_attention_desc *d, const attn_attention_grads *g,
                                       const attn_float *dO, const attn_float *Q, const attn_float *K,
                                       const attn_float *V, const attn_float *O, const attn_float *stats,
                                       void *work, size_t work_bytes)
{
    attn__args a;
    attn_attention_desc c;
    attn__diff_stats st;
    attn_float *dx, e[2], lambda, cf = 1 - d->lambda_init;
    double dlambda = 0;
    size_t nq = (size_t)d->B * d->H * d->Tq, r, k, h = (size_t)d->dk / 2;
    int dv = d->dv;
    ATTN__TRY(attn__backward_args(&a, d, g, dO, Q, K, V, O, stats, work, work_bytes));
    attn__diff_desc(d, &c);
    attn__diff_stats_map(d, stats, &st);
    attn__diff_work_map(d, work, &dx);
    lambda = attn__diff_lambda(d, e);
    for (r = 0; r < nq; r++) { /* through the scale and the RMSNorm, x = O1 - lambda O2 */
        const attn_float *dy = dO + r * dv, *o1 = st.O1 + r * dv, *o2 = st.O2 + r * dv;
        attn_float rs = st.rstd[r], *gx = dx + r * dv, t = 0;
        for (k = 0; k < (size_t)dv; k++) {
            attn_float x = o1[k] - lambda * o2[k], gk = d->gain ? d->gain[k] : 1;
            if (g->dgain) g->dgain[k] += cf * dy[k] * x * rs;
            t += x * gk * dy[k];
        }
        for (k = 0; k < (size_t)dv; k++) {
            attn_float x = o1[k] - lambda * o2[k], gk = d->gain ? d->gain[k] : 1;
            gx[k] = cf * rs * (gk * dy[k] - x * rs * rs * t / dv);
        }
        dlambda -= attn_dot((size_t)dv, gx, o2);
    }
    a.dO = dx; a.Oin = st.O1; a.stats_in = st.lse1;
    attn__diff_map(a, &c, 0, attn__scored_backward_bh, work);
    attn_scale(nq * dv, -lambda, dx);
    a.Oin = st.O2; a.stats_in = st.lse2;
    attn__diff_map(a, &c, 1, attn__scored_backward_bh, work);
    if (g->dlambda && d->lambda) {
        attn_axpy(h, (attn_float)dlambda * e[0], d->lambda + h, g->dlambda);
        attn_axpy(h, (attn_float)dlambda * e[0], d->lambda, g->dlambda + h);
        attn_axpy(h, -(attn_float)dlambda * e[1], d->lambda + 3 * h, g->dlambda + 2 * h);
        attn_axpy(h, -(attn_float)dlambda * e[1], d->lambda + 2 * h, g->dlambda + 3 * h);
    }
    return ATTN_OK;
}

/* ---- head-mixing kinds: RMSHead, HYLA and its ablations (Schug et al. 2025) ---- */

#define ATTN__MBR 8 /* query rows per tile */

/* The mix rows of the built-in head-mixing kinds. */
static const attn_mix_row attn__mix_linear_rmshead = {ATTN_MIX_NORM_RMSHEAD, ATTN_MIX_VALUE_LINEAR, 0};
static const attn_mix_row attn__mix_hyla = {ATTN_MIX_NORM_RMSHEAD, ATTN_MIX_VALUE_HYPER, 1};
static const attn_mix_row attn__mix_hyla_no_rmshead = {ATTN_MIX_NORM_NONE, ATTN_MIX_VALUE_HYPER, 1};
static const attn_mix_row attn__mix_hyla_linear = {ATTN_MIX_NORM_RMSHEAD, ATTN_MIX_VALUE_HYPER, 0};
static const attn_mix_row attn__mix_hyla_linear_no_rmshead = {ATTN_MIX_NORM_NONE, ATTN_MIX_VALUE_HYPER, 0};
static const attn_mix_row attn__mix_softmax_hyla = {ATTN_MIX_NORM_SOFTMAX, ATTN_MIX_VALUE_HYPER, 1};
static const attn_mix_row attn__mix_rmshead_relu_v = {ATTN_MIX_NORM_RMSHEAD, ATTN_MIX_VALUE_RELU_V, 1};
static const attn_mix_row attn__mix_hyla_plus = {ATTN_MIX_NORM_RMSHEAD, ATTN_MIX_VALUE_DEEP, 1};

/* Scratch of one thread, for a tile of MBR query rows against all Tk keys: scores S, visibility,
   latent code A, dropped code Ad and its gradient dA [H, MBR, Tk] each, irms [MBR, Tk], the values
   of one batch element Vt, their gradient dVt and the guarded path's values Vg [H, dv, Tk] each
   (transposed; relu_v: ReLU(V) [H, Tk, dv]), and the value network of one row: 6 [dv, Tk] and one
   [Tk]; its bytes, a multiple of ATTN_ALIGN. */
typedef struct {
    attn_float *S, *vis, *A, *Ad, *dA, *irms, *Vt, *dVt, *Vg, *row;
} attn__mix_ws;

static size_t attn__mix_ws_map(const attn_attention_desc *d, attn_float *ws, attn__mix_ws *w)
{
    size_t tile = (size_t)d->H * ATTN__MBR * d->Tk, kd = (size_t)d->dv * d->Tk;
    attn_arena ar;
    attn__arena_plan(&ar, ws);
    w->S = attn__arena_floats(&ar, tile);
    w->vis = attn__arena_floats(&ar, tile);
    w->A = attn__arena_floats(&ar, tile);
    w->Ad = attn__arena_floats(&ar, tile);
    w->dA = attn__arena_floats(&ar, tile);
    w->irms = attn__arena_floats(&ar, (size_t)ATTN__MBR * d->Tk);
    w->Vt = attn__arena_floats(&ar, d->H * kd);
    w->dVt = attn__arena_floats(&ar, d->H * kd);
    w->Vg = attn__arena_floats(&ar, d->H * kd);
    w->row = attn__arena_floats(&ar, 6 * kd + d->Tk);
    return ar.used;
}
static size_t attn__mix_floats(const attn_attention_desc *d)
{
    attn__mix_ws w;
    return attn__mix_ws_map(d, NULL, &w) / sizeof(attn_float);
}

/* One group's partial gradients: dbias (with a bias) and dW2 (HYLA+). */
static size_t attn__mix_part_floats(const attn_attention_desc *d)
{
    return (d->bias ? (size_t)d->H * d->Tq * d->Tk : 0) +
           (attn__row(d)->mix->value == ATTN_MIX_VALUE_DEEP ? (size_t)d->H * d->dv * d->dv : 0);
}

/* Backward runs the batch in a fixed number of groups (independent of the threads), each with its
   own partials, summed in group order. The count keeps the partials near 4M floats. */
static int attn__mix_groups(const attn_attention_desc *d)
{
    size_t part = attn__mix_part_floats(d), cap = part ? ATTN__MAX((size_t)1, ((size_t)1 << 22) / part) : 8;
    return (int)ATTN__MIN((size_t)d->B, ATTN__MIN((size_t)8, cap));
}

static size_t attn__mix_workspace(const attn_attention_desc *d)
{
    return sizeof(attn_float) * (attn__mix_floats(d) * (size_t)attn_get_threads() +
                                 attn__mix_part_floats(d) * attn__mix_groups(d)) +
           ATTN_ALIGN;
}

/* The latent code of rows [i0, i0 + br) of batch element b: S and vis by attn__tile_scores per head,
   then A = S vis (none), S vis irms with irms = 1 / sqrt(mean_h (S vis)^2 + 1e-6) (RMSHead, kept
   for the backward pass), or the softmax of each head's row over its visible keys. Layout
   [H, MBR, Tk]. */
static void attn__mix_code(const attn__args *a, attn_mix_row mx, int b, int i0, int br, attn_float *S,
                           attn_float *vis, attn_float *A, attn_float *irms, int guard)
{
    const attn_attention_desc *d = a->d;
    size_t ts = (size_t)ATTN__MBR * d->Tk, n = (size_t)br * d->Tk, x;
    attn_float scale = attn__score_scale(d);
    int h, r;
    for (h = 0; h < d->H; h++) {
        size_t bh = (size_t)b * d->H + h;
        attn__tile_scores(d, b, h, i0, br, 0, d->Tk, a->Q + bh * d->Tq * d->dk, a->K + bh * d->Tk * d->dk,
                          d->dk, NULL, scale, S + h * ts, vis + h * ts, guard, 0, NULL);
        if (mx.norm != ATTN_MIX_NORM_SOFTMAX) { /* A = S vis */
            memcpy(A + h * ts, S + h * ts, sizeof(attn_float) * n);
            ATTN__ISA(mul)(n, vis + h * ts, A + h * ts, A + h * ts);
        }
    }
    if (mx.norm == ATTN_MIX_NORM_RMSHEAD) {
        memset(irms, 0, sizeof(attn_float) * n);
        for (h = 0; h < d->H; h++) ATTN__ISA(mul_add)(n, A + h * ts, A + h * ts, irms);
        for (x = 0; x < n; x++) irms[x] = (attn_float)(1 / sqrt((double)irms[x] / d->H + 1e-6));
        for (h = 0; h < d->H; h++) ATTN__ISA(mul)(n, irms, A + h * ts, A + h * ts); /* A_h irms: H products */
    }
    for (h = 0; h < d->H && mx.norm == ATTN_MIX_NORM_SOFTMAX; h++)
        for (r = 0; r < br; r++) { /* irms as scratch for the masked scores */
            attn_float *p = A + h * ts + (size_t)r * d->Tk, *xs = irms + (size_t)r * d->Tk, sum;
            attn__exponent_s((size_t)d->Tk, S + h * ts + (size_t)r * d->Tk, vis + h * ts + (size_t)r * d->Tk,
                             xs);
            memcpy(p, vis + h * ts + (size_t)r * d->Tk, sizeof(attn_float) * d->Tk);
            sum = ATTN__ISA(exp_weighted)((size_t)d->Tk, xs, attn_max((size_t)d->Tk, xs), p, 0);
            if (sum > 0) attn_scale((size_t)d->Tk, 1 / sum, p);
        }
}

/* The values of batch element b as the value network reads them: Vt [H, dv, Tk] (transposed), or
   ReLU(V) [H, Tk, dv] for relu_v. */
static void attn__mix_values(const attn__args *a, attn_mix_row mx, int b, attn_float *Vt)
{
    const attn_attention_desc *d = a->d;
    const attn_float *V = a->V + (size_t)b * d->H * d->Tk * d->dv;
    size_t n = (size_t)d->H * d->Tk * d->dv, x;
    int h, j, e;
    if (mx.value == ATTN_MIX_VALUE_RELU_V) {
        for (x = 0; x < n; x++) Vt[x] = V[x] > 0 || V[x] != V[x] ? V[x] : 0; /* NaN stays */
        return;
    }
    for (h = 0; h < d->H; h++)
        for (j = 0; j < d->Tk; j++)
            for (e = 0; e < d->dv; e++)
                Vt[((size_t)h * d->dv + e) * d->Tk + j] = V[((size_t)h * d->Tk + j) * d->dv + e];
}

/* Whether batch element b's inputs (and dO, in backward) hold a non-finite value: then the guarded
   path, where what a row cannot see stays out of its products. */
/* Whether rows (queries) and keys of Q, K, V (and dO) from head row o on hold a non-finite value. */
static int attn__mix_guard_of(const attn__args *a, size_t o, int rows, int keys)
{
    const attn_attention_desc *d = a->d;
    return !attn__all_finite(a->Q + o * d->Tq * d->dk, rows, d->dk, d->dk) ||
           !attn__all_finite(a->K + o * d->Tk * d->dk, keys, d->dk, d->dk) ||
           !attn__all_finite(a->V + o * d->Tk * d->dv, keys, d->dv, d->dv) ||
           (a->dO && !attn__all_finite(a->dO + o * d->Tq * d->dv, rows, d->dv, d->dv));
}

/* Whether the whole call is finite: one scan, which spares every tile the scan of its batch element. */
static int attn__mix_finite(const attn__args *a)
{
    const attn_attention_desc *d = a->d;
    size_t rows = (size_t)d->B * d->H * d->Tq, keys = (size_t)d->B * d->H * d->Tk;
    return rows <= INT_MAX / 2 && keys <= INT_MAX / 2 && !attn__mix_guard_of(a, 0, (int)rows, (int)keys);
}

/* Whether batch element b takes the guarded path. */
static int attn__mix_guard(const attn__args *a, int b)
{
    const attn_attention_desc *d = a->d;
    size_t o = (size_t)b * d->H;
    int rows = d->H * d->Tq, keys = d->H * d->Tk, guard = !a->finite && attn__mix_guard_of(a, o, rows, keys);
    if (guard) attn__report_guard(a);
    return guard;
}

/* The guarded path's values for row r of a tile: Vg = Vt [H, dv, Tk] with 0 at the keys head h's row
   cannot see (vis [H, MBR, Tk], ts floats a head). */
static const attn_float *attn__mix_row_values(const attn_attention_desc *d, const attn_float *Vt,
                                              const attn_float *vis, size_t ts, int r, attn_float *Vg)
{
    size_t Tk = (size_t)d->Tk;
    int h, e;
    for (h = 0; h < d->H; h++)
        for (e = 0; e < d->dv; e++) {
            size_t o = ((size_t)h * d->dv + e) * Tk;
            memcpy(Vg + o, Vt + o, sizeof(attn_float) * Tk);
            attn__zero_hidden(Vg + o, vis + h * ts + (size_t)r * Tk, Tk);
        }
    return Vg;
}

/* x = max(x, 0) over n, if relu (NaN stays NaN) */
static void attn__relu_if(int relu, size_t n, attn_float *x)
{
    size_t i;
    for (i = 0; i < n && relu; i++) x[i] = x[i] > 0 || x[i] != x[i] ? x[i] : 0; /* NaN stays */
}

/* T[f] = sum_e W[f, e] U[e] over the keys: the second value layer of one head, [dv, Tk]. */
static void attn__deep_layer(const attn_float *W, const attn_float *U, attn_float *T, int dv, int Tk)
{
    int f, e;
    memset(T, 0, sizeof(attn_float) * (size_t)dv * Tk);
    for (f = 0; f < dv; f++)
        for (e = 0; e < dv; e++)
            attn_axpy((size_t)Tk, W[(size_t)f * dv + e], U + (size_t)e * Tk, T + (size_t)f * Tk);
}

/* The hypernetwork's hidden layers for one query row, given its code a_h = A + h ts over the keys:
   U1[e] = phi(sum_h a_h Vt_h[e]); deep: U2[f] = phi(sum_h a_h (W2_h U1)[f]) with T as scratch.
   Returns the last layer (U1, or U2 for deep), [dv, Tk]. */
static attn_float *attn__hyper_layers(const attn_attention_desc *d, attn_mix_row mx, const attn_float *A,
                                      size_t ts, const attn_float *Vt, attn_float *U1, attn_float *U2,
                                      attn_float *T)
{
    size_t kd = (size_t)d->dv * d->Tk;
    int h, f;
    memset(U1, 0, sizeof(attn_float) * kd);
    for (h = 0; h < d->H; h++)
        for (f = 0; f < d->dv; f++)
            ATTN__ISA(mul_add)((size_t)d->Tk, A + h * ts, Vt + h * kd + (size_t)f * d->Tk,
                               U1 + (size_t)f * d->Tk);
    attn__relu_if(mx.relu, kd, U1);
    if (mx.value != ATTN_MIX_VALUE_DEEP) return U1;
    memset(U2, 0, sizeof(attn_float) * kd);
    for (h = 0; h < d->H; h++) {
        attn__deep_layer(d->w2 + (size_t)h * d->dv * d->dv, U1, T, d->dv, d->Tk);
        for (f = 0; f < d->dv; f++)
            ATTN__ISA(mul_add)((size_t)d->Tk, A + h * ts, T + (size_t)f * d->Tk, U2 + (size_t)f * d->Tk);
    }
    attn__relu_if(1, kd, U2);
    return U2;
}

/* Backward of the hypernetwork for one query row, dz_h = dO + h os: with R the last layer,
     dR[e] = sum_h a_h dz_h[e];  dA_h = sum_e dz_h[e] R[e] (overwritten);
     deep: dP2 = dR 1[U2 > 0];  dA_h += sum_f dP2[f] (W2_h U1)[f];  dW2_h[f, e] += sum_j a_h dP2[f] U1[e];
           dU1[e] = sum_h sum_f W2_h[f, e] a_h dP2[f];
     dP1 = dU1 1[U1 > 0] (no ReLU: dU1);  dA_h += sum_e dP1[e] Vt_h[e];  dVt_h[e] += a_h dP1[e].
   buf: 6 [dv, Tk] + [Tk]. */
static void attn__hyper_backward_row(const attn_attention_desc *d, attn_mix_row mx, const attn_float *A,
                                     size_t ts, const attn_float *Vt, const attn_float *dz, size_t os,
                                     attn_float *dA, attn_float *dVt, attn_float *dW2, attn_float *buf)
{
    size_t kd = (size_t)d->dv * d->Tk, Tk = (size_t)d->Tk, j;
    attn_float *U1 = buf, *U2 = U1 + kd, *T = U2 + kd, *dR = T + kd, *dU1 = dR + kd, *G = dU1 + kd;
    attn_float *R = attn__hyper_layers(d, mx, A, ts, Vt, U1, U2, T);
    int h, e, f, dv = d->dv;
    memset(dR, 0, sizeof(attn_float) * kd);
    for (h = 0; h < d->H; h++) {
        memset(dA + h * ts, 0, sizeof(attn_float) * Tk);
        for (e = 0; e < dv; e++) {
            attn_axpy(Tk, dz[h * os + e], A + h * ts, dR + e * Tk);
            attn_axpy(Tk, dz[h * os + e], R + e * Tk, dA + h * ts);
        }
    }
    for (j = 0; j < kd; j++) dR[j] *= !mx.relu || R[j] > 0; /* dP of the last layer */
    if (mx.value == ATTN_MIX_VALUE_DEEP) {
        memset(dU1, 0, sizeof(attn_float) * kd);
        for (h = 0; h < d->H; h++) {
            const attn_float *W = d->w2 + (size_t)h * dv * dv;
            attn__deep_layer(W, U1, T, dv, d->Tk);
            for (f = 0; f < dv; f++) {
                ATTN__ISA(mul_add)(Tk, dR + f * Tk, T + f * Tk, dA + h * ts);
                memset(G, 0, sizeof(attn_float) * Tk);
                ATTN__ISA(mul_add)(Tk, A + h * ts, dR + f * Tk, G); /* G = a_h dP2[f] */
                for (e = 0; e < dv; e++) {
                    if (dW2) dW2[((size_t)h * dv + f) * dv + e] += attn_dot(Tk, G, U1 + e * Tk);
                    attn_axpy(Tk, W[(size_t)f * dv + e], G, dU1 + e * Tk);
                }
            }
        }
        for (j = 0; j < kd; j++) dR[j] = U1[j] > 0 ? dU1[j] : 0; /* dP1 */
    }
    for (h = 0; h < d->H; h++)
        for (e = 0; e < dv; e++) {
            ATTN__ISA(mul_add)(Tk, dR + e * Tk, Vt + h * kd + e * Tk, dA + h * ts);
            ATTN__ISA(mul_add)(Tk, A + h * ts, dR + e * Tk, dVt + h * kd + e * Tk);
        }
}

/* Rows [i0, i0 + br) of batch element b, forward: the code, its dropout, the value network. */
static void attn__mix_forward_tile(const attn__args *a, int b, int i0, attn_float *ws)
{
    const attn_attention_desc *d = a->d;
    attn_mix_row mx = *attn__row(d)->mix;
    size_t ts = (size_t)ATTN__MBR * d->Tk, kd = (size_t)d->dv * d->Tk;
    attn__mix_ws w;
    attn_float *S, *vis, *A, *Ad, *irms, *Vt, *Vg, *row;
    int br = ATTN__MIN(ATTN__MBR, d->Tq - i0), h, r, e, j, guard = attn__mix_guard(a, b);
    attn__mix_ws_map(d, ws, &w);
    S = w.S; vis = w.vis; A = w.A; Ad = w.Ad; irms = w.irms; Vt = w.Vt; Vg = w.Vg; row = w.row;
    attn__mix_code(a, mx, b, i0, br, S, vis, A, irms, guard);
    attn__mix_values(a, mx, b, Vt);
    if (a->weights)
        for (h = 0; h < d->H; h++)
            memcpy(a->weights + (((size_t)b * d->H + h) * d->Tq + i0) * d->Tk, A + h * ts,
                   sizeof(attn_float) * br * d->Tk);
    memcpy(Ad, A, sizeof(attn_float) * d->H * ts);
    for (h = 0; h < d->H && d->dropout > 0; h++) attn__tile_dropout(d, i0, br, 0, d->Tk, Ad + h * ts);
    for (h = 0; h < d->H; h++) {
        attn_float *o = a->O + (((size_t)b * d->H + h) * d->Tq + i0) * d->dv;
        const attn_float *Vh = mx.value == ATTN_MIX_VALUE_LINEAR
                                   ? a->V + ((size_t)b * d->H + h) * d->Tk * d->dv
                                   : Vt + (size_t)h * d->Tk * d->dv;
        if (mx.value > ATTN_MIX_VALUE_RELU_V) continue;
        if (guard) { /* o_h = a_h V_h (ReLU(V_h)) */
            for (j = 0; j < br * d->dv; j++) o[j] = 0;
            attn__guarded_product(0, br, d->Tk, d->dv, 1, Ad + h * ts, vis + h * ts, Vh, d->dv, o, d->dv);
        } else
            attn_gemm(0, 0, br, d->dv, d->Tk, 1, Ad + h * ts, d->Tk, Vh, d->dv, 0, o, d->dv);
    }
    if (mx.value == ATTN_MIX_VALUE_LINEAR || mx.value == ATTN_MIX_VALUE_RELU_V) return;
    for (r = 0; r < br; r++) { /* o_ih[e] = sum_j a_hij R_ij[e] */
        const attn_float *Vr = guard ? attn__mix_row_values(d, Vt, vis, ts, r, Vg) : Vt;
        attn_float *R = attn__hyper_layers(d, mx, Ad + (size_t)r * d->Tk, ts, Vr, row, row + kd,
                                           row + 2 * kd);
        for (h = 0; h < d->H; h++)
            for (e = 0; e < d->dv; e++)
                a->O[(((size_t)b * d->H + h) * d->Tq + i0 + r) * d->dv + e] = attn_dot(
                    (size_t)d->Tk, Ad + h * ts + (size_t)r * d->Tk, R + (size_t)e * d->Tk);
    }
}

/* Backward of batch element b, row tile by row tile (the code recomputed): dA through the value
   network and the dropout, then dS through the normalisation (none: dA vis; RMSHead:
   (dA_h - a_h mean_h' a_h' dA_h') / rms; softmax: a (dA - sum a dA)), then dQ += scale dS K,
   dK += scale dS^T Q. dbias and dW2 go to the caller's partials. */
static void attn__mix_backward_b(const attn__args *a, int b, attn_float *ws, attn_float *dbias,
                                 attn_float *dW2)
{
    const attn_attention_desc *d = a->d;
    attn_mix_row mx = *attn__row(d)->mix;
    size_t ts = (size_t)ATTN__MBR * d->Tk, kd = (size_t)d->dv * d->Tk, os = (size_t)d->Tq * d->dv, n;
    attn__mix_ws w;
    attn_float *S, *vis, *A, *Ad, *dA, *irms, *Vt, *dVt, *row, *Vg;
    attn_float scale = attn__score_scale(d);
    int i0, br, h, r, j, e, dk = d->dk, dv = d->dv, Tk = d->Tk, guard = attn__mix_guard(a, b);
    attn__mix_ws_map(d, ws, &w);
    S = w.S; vis = w.vis; A = w.A; Ad = w.Ad; dA = w.dA; irms = w.irms; Vt = w.Vt; dVt = w.dVt; row = w.row;
    Vg = w.Vg;
    attn__mix_values(a, mx, b, Vt);
    memset(dVt, 0, sizeof(attn_float) * d->H * kd);
    for (i0 = 0; i0 < d->Tq; i0 += ATTN__MBR) {
        br = ATTN__MIN(ATTN__MBR, d->Tq - i0);
        n = (size_t)br * Tk;
        attn__mix_code(a, mx, b, i0, br, S, vis, A, irms, guard);
        memcpy(Ad, A, sizeof(attn_float) * d->H * ts);
        for (h = 0; h < d->H && d->dropout > 0; h++) attn__tile_dropout(d, i0, br, 0, Tk, Ad + h * ts);
        for (h = 0; h < d->H && mx.value <= ATTN_MIX_VALUE_RELU_V;
             h++) { /* dA_h = dO_h V_h^T, dV_h += A_h^T dO_h */
            size_t bh = (size_t)b * d->H + h;
            const attn_float *dOh = a->dO + (bh * d->Tq + i0) * dv;
            int lin = mx.value == ATTN_MIX_VALUE_LINEAR;
            attn_gemm(0, 1, br, Tk, dv, 1, dOh, dv, lin ? a->V + bh * Tk * dv : Vt + (size_t)h * kd, dv, 0,
                      dA + h * ts, Tk);
            if (guard)
                attn__guarded_product(1, br, Tk, dv, 1, Ad + h * ts, vis + h * ts, dOh, dv,
                                      lin ? a->dV + bh * Tk * dv : dVt + (size_t)h * kd, dv);
            else
                attn_gemm(1, 0, Tk, dv, br, 1, Ad + h * ts, Tk, dOh, dv, 1,
                          lin ? a->dV + bh * Tk * dv : dVt + (size_t)h * kd, dv);
        }
        for (r = 0; r < br && mx.value >= ATTN_MIX_VALUE_HYPER; r++)
            attn__hyper_backward_row(
                d, mx, Ad + (size_t)r * Tk, ts, guard ? attn__mix_row_values(d, Vt, vis, ts, r, Vg) : Vt,
                a->dO + ((size_t)b * d->H * d->Tq + i0 + r) * dv, os, dA + (size_t)r * Tk, dVt, dW2, row);
        for (h = 0; h < d->H && d->dropout > 0; h++) attn__tile_dropout(d, i0, br, 0, Tk, dA + h * ts);
        if (guard) attn__zero_hidden(dA, vis, d->H * ts);
        if (mx.norm == ATTN_MIX_NORM_NONE) ATTN__ISA(mul)(d->H * ts, vis, dA, dA);
        if (mx.norm == ATTN_MIX_NORM_RMSHEAD) { /* S (no longer needed) holds -mean_h a_h dA_h */
            memset(S, 0, sizeof(attn_float) * n);
            for (h = 0; h < d->H; h++) ATTN__ISA(mul_add)(n, A + h * ts, dA + h * ts, S);
            attn_scale(n, -1 / (attn_float)d->H, S);
            for (h = 0; h < d->H; h++) { /* dA_h = (dA_h - a_h mean) irms vis_h */
                ATTN__ISA(mul_add)(n, A + h * ts, S, dA + h * ts);
                ATTN__ISA(mul)(n, irms, dA + h * ts, dA + h * ts);
                ATTN__ISA(mul)(n, vis + h * ts, dA + h * ts, dA + h * ts);
            }
        }
        for (h = 0; h < d->H && mx.norm == ATTN_MIX_NORM_SOFTMAX; h++)
            for (r = 0; r < br; r++) {
                attn_float *ar = A + h * ts + (size_t)r * Tk, *gr = dA + h * ts + (size_t)r * Tk;
                ATTN__ISA(softmax_dscores)(0, (size_t)Tk, ar, gr, attn_dot((size_t)Tk, ar, gr));
            }
        for (h = 0; h < d->H; h++) {
            size_t bh = (size_t)b * d->H + h;
            if (guard) attn__zero_hidden(dA + h * ts, vis + h * ts, n);
            if (dbias) attn_axpy(n, 1, dA + h * ts, dbias + ((size_t)h * d->Tq + i0) * Tk); /* br rows */
            if (guard) {
                attn__guarded_product(0, br, Tk, dk, scale, dA + h * ts, vis + h * ts, a->K + bh * Tk * dk,
                                      dk, a->dQ + (bh * d->Tq + i0) * dk, dk);
                attn__guarded_product(1, br, Tk, dk, scale, dA + h * ts, vis + h * ts,
                                      a->Q + (bh * d->Tq + i0) * dk, dk, a->dK + bh * Tk * dk, dk);
                continue;
            }
            attn_gemm(0, 0, br, dk, Tk, scale, dA + h * ts, Tk, a->K + bh * Tk * dk, dk, 1,
                      a->dQ + (bh * d->Tq + i0) * dk, dk);
            attn_gemm(1, 0, Tk, dk, br, scale, dA + h * ts, Tk, a->Q + (bh * d->Tq + i0) * dk, dk, 1,
                      a->dK + bh * Tk * dk, dk);
        }
    }
    for (h = 0; h < d->H && mx.value != ATTN_MIX_VALUE_LINEAR;
         h++) { /* the values' gradient back to [Tk, dv] */
        const attn_float *V = a->V + ((size_t)b * d->H + h) * Tk * dv;
        attn_float *dV = a->dV + ((size_t)b * d->H + h) * Tk * dv;
        for (j = 0; j < Tk; j++)
            for (e = 0; e < dv; e++)
                dV[(size_t)j * dv + e] += mx.value == ATTN_MIX_VALUE_RELU_V
                                              ? (V[(size_t)j * dv + e] > 0) *
                                                    dVt[(size_t)h * kd + (size_t)j * dv + e]
                                              : dVt[(size_t)h * kd + (size_t)e * Tk + j];
    }
}

static attn_status attn__mix_check(const char *fn, const attn_attention_desc *d)
{
    if (attn__row(d)->mix->value == ATTN_MIX_VALUE_DEEP && !d->w2)
        return attn__fail(ATTN_ERR_ARG, "%s: %s needs its second value layer w2 [H, dv, dv]", fn,
                          attn__row(d)->name);
    return ATTN_OK;
}

/* The head-mixing jobs: forward, row tile t % tiles of batch entry t / tiles; backward, the batch
   entries of group grp, their dbias and dW2 partials into part (summed in order afterwards). */
typedef struct {
    attn__args *a;
    const attn_attention_grads *g;
    attn_float *ws, *parts;
    size_t pf, nb;
    int tiles, groups;
} attn__mix_job;

static void attn__mix_forward_body(void *ctx, int t, int tid)
{
    const attn__mix_job *j = (const attn__mix_job *)ctx;
    attn__mix_forward_tile(j->a, t / j->tiles, (t % j->tiles) * ATTN__MBR,
                           j->ws + attn__mix_floats(j->a->d) * (size_t)tid);
}

static void attn__mix_backward_body(void *ctx, int grp, int tid)
{
    const attn__mix_job *j = (const attn__mix_job *)ctx;
    const attn_attention_desc *d = j->a->d;
    attn_float *part = j->parts + j->pf * grp;
    int b;
    for (b = (int)((long)d->B * grp / j->groups); b < (int)((long)d->B * (grp + 1) / j->groups); b++)
        attn__mix_backward_b(j->a, b, j->ws + attn__mix_floats(d) * (size_t)tid, j->g->dbias ? part : NULL,
                             attn__row(d)->mix->value == ATTN_MIX_VALUE_DEEP ? part + (d->bias ? j->nb : 0)
                                                                             : NULL);
}

static attn_status attn__mix_forward(const attn_attention_desc *d, attn_float *O, attn_float *stats,
                                     attn_float *weights, const attn_float *Q, const attn_float *K,
                                     const attn_float *V, void *work, size_t work_bytes)
{
    attn__args a;
    attn__mix_job j;
    attn_float *ws;
    int tiles;
    ATTN__TRY(attn__forward_args(&a, d, O, stats, weights, Q, K, V, work, work_bytes));
    ATTN__TRY(attn__mix_check("attn_attention_forward", d));
    a.finite = a.finite || attn__mix_finite(&a);
    ws = attn__align_ptr(work, 0);
    tiles = (d->Tq + ATTN__MBR - 1) / ATTN__MBR;
    memset(stats, 0, sizeof(attn_float) * d->B * d->H * d->Tq); /* nothing to keep: backward recomputes */
    memset(&j, 0, sizeof j);
    j.a = &a; j.ws = ws; j.tiles = tiles;
    attn__par_for(d->B * tiles, attn__mix_forward_body, &j);
    return ATTN_OK;
}

/* Threads take whole groups of the batch (attn__mix_groups); the group partials of dbias and dW2
   are then summed in order, so the result does not depend on the threads. */
static attn_status attn__mix_backward(const attn_attention_desc *d, const attn_attention_grads *g,
                                      const attn_float *dO, const attn_float *Q, const attn_float *K,
                                      const attn_float *V, const attn_float *O, const attn_float *stats,
                                      void *work, size_t work_bytes)
{
    attn__args a;
    attn__mix_job j;
    attn_float *ws, *parts;
    size_t pf = attn__mix_part_floats(d), nb = (size_t)d->H * d->Tq * d->Tk;
    int groups = attn__mix_groups(d), grp;
    ATTN__TRY(attn__backward_args(&a, d, g, dO, Q, K, V, O, stats, work, work_bytes));
    ATTN__TRY(attn__mix_check("attn_attention_backward", d));
    a.finite = a.finite || attn__mix_finite(&a);
    if (g->dbias && !d->bias)
        return attn__fail(
            ATTN_ERR_ARG,
            "attn_attention_backward: the head-mixing kinds give dbias only for a bias (pass d->bias)");
    ws = attn__align_ptr(work, 0);
    parts = ws + attn__mix_floats(d) * (size_t)attn_get_threads();
    memset(parts, 0, sizeof(attn_float) * pf * groups);
    memset(&j, 0, sizeof j);
    j.a = &a; j.g = g; j.ws = ws; j.parts = parts; j.pf = pf; j.nb = nb; j.groups = groups;
    attn__par_for(groups, attn__mix_backward_body, &j);
    for (grp = 0; grp < groups; grp++) {
        if (g->dbias) attn_axpy(nb, 1, parts + pf * grp, g->dbias);
        if (g->dw2 && attn__row(d)->mix->value == ATTN_MIX_VALUE_DEEP)
            attn_axpy((size_t)d->H * d->dv * d->dv, 1, parts + pf * grp + (d->bias ? nb : 0), g->dw2);
    }
    return ATTN_OK;
}

/* The engines, as the table's columns after the formula. */
#define ATTN__SCORED attn__scored_forward, attn__scored_backward, attn__scored_workspace
#define ATTN__LINEAR_TIME                                                                                    \
    attn__kernel_forward, attn__kernel_backward, attn__kernel_workspace,                                     \
        ATTN_KF_LINEAR_TIME | ATTN_KF_NO_DROPOUT, NULL
#define ATTN__DIFF                                                                                           \
    attn__diff_forward, attn__diff_backward, attn__diff_workspace, ATTN_KF_SUBHEADS | ATTN_KF_PARAMS, NULL,  \
        NULL, NULL
#define ATTN__MIXING                                                                                         \
    attn__mix_forward, attn__mix_backward, attn__mix_workspace, ATTN_KF_MIXES_HEADS, NULL, NULL
static const attn_kind_info attn__kinds[] = {
    {ATTN_SOFTMAX, "softmax", "softmax_attention", "A = softmax(s q.k + bias) over the visible keys",
     ATTN__SCORED, 0, &attn__score_softmax, NULL, NULL},
    {ATTN_EXPRESSIVE, "ea", NULL, "g = s^2 / (1 + s^2), A = g / sum g (expressive attention)", ATTN__SCORED,
     0, &attn__score_ea, NULL, NULL},
    {ATTN_COG, "cog", NULL, "A = sign(s) softmax(|s|) (Cog attention, negative weights)", ATTN__SCORED, 0,
     &attn__score_cog, NULL, NULL},
    {ATTN_CENTERED, "centered", NULL, "A = softmax(s) - 1/n_i on the visible keys (rows sum to 0)",
     ATTN__SCORED, ATTN_KF_CENTERED | ATTN_KF_NO_DROPOUT, &attn__score_softmax, NULL, NULL},
    {ATTN_SIGMOID, "sigmoid", NULL, "A = sigmoid(s - ln Tk), unnormalised", ATTN__SCORED, 0,
     &attn__score_sigmoid, NULL, NULL},
    {ATTN_LINEAR_RAW, "linear_raw", "linear_attention", "A = s, unnormalised (HYLA paper's linear attention)",
     ATTN__SCORED, 0, &attn__score_linear, NULL, NULL},
    {ATTN_KERNEL, "kernel", NULL,
     "o_i = phi(q_i)^T S_i / (phi(q_i) . z_i + eps), phi = elu + 1 (linear time)", ATTN__LINEAR_TIME,
     &attn__feature_elu, NULL},
    {ATTN_TAYLOR, "taylor", NULL, "weights 1 + qh . kh, row-normalised, by prefix sums (linear time)",
     ATTN__LINEAR_TIME, &attn__feature_taylor, NULL},
    {ATTN_DIFFERENTIAL, "diff", NULL,
     "o = (1 - l0) RMSNorm((A1 - lambda A2) V), A1, A2 softmax of two sub-heads", ATTN__DIFF},
    {ATTN_LINEAR_RMSHEAD, "linear_rmshead", "linear_attention_rms_head",
     "a = s / rms over the heads, o = a V", ATTN__MIXING, &attn__mix_linear_rmshead},
    {ATTN_HYLA, "hyla", "linear_hypatt", "a = RMSHead(s), o_ih = sum_j a_hij ReLU(sum_h' a_h'ij v_jh')",
     ATTN__MIXING, &attn__mix_hyla},
    {ATTN_HYLA_NO_RMSHEAD, "hyla_no_rmshead", "linear_hypatt_no_rms_head", "HYLA with a = s", ATTN__MIXING,
     &attn__mix_hyla_no_rmshead},
    {ATTN_HYLA_LINEAR, "hyla_linear", "linear_hypatt_mlp_linear", "HYLA without the ReLU", ATTN__MIXING,
     &attn__mix_hyla_linear},
    {ATTN_HYLA_LINEAR_NO_RMSHEAD, "hyla_linear_no_rmshead", "linear_hypatt_mlp_linear_no_rms_head",
     "HYLA without the ReLU, with a = s", ATTN__MIXING, &attn__mix_hyla_linear_no_rmshead},
    {ATTN_SOFTMAX_HYLA, "softmax_hyla", "softmax_hypatt", "HYLA with a = softmax(s) over the keys",
     ATTN__MIXING, &attn__mix_softmax_hyla},
    {ATTN_RMSHEAD_RELU_V, "linear_rmshead_relu_v", NULL, "a = RMSHead(s), o_h = a_h ReLU(V_h)", ATTN__MIXING,
     &attn__mix_rmshead_relu_v},
    {ATTN_HYLA_PLUS, "hyla_plus", NULL, "HYLA with a second value layer W2_h (deep value network)",
     attn__mix_forward, attn__mix_backward, attn__mix_workspace, ATTN_KF_MIXES_HEADS | ATTN_KF_PARAMS, NULL,
     NULL, &attn__mix_hyla_plus},
};
/* Every kind has its row (a C99 static assertion: an array of size -1 does not compile). */
typedef char attn__kinds_complete[ATTN__COUNT(attn__kinds) == ATTN_KIND_COUNT ? 1 : -1];
/* attn_kind_register's rows, each with its own copies of the names and the sub-rows. */
typedef struct attn__custom_kind {
    attn_kind_info row;
    attn_score_row score;
    attn_feature_row feature;
    attn_mix_row mix;
    char name[ATTN_CKPT_NAME_LEN], code_name[ATTN_CKPT_NAME_LEN], formula[ATTN_KIND_FORMULA_LEN];
} attn__custom_kind;
static attn__custom_kind attn__custom[ATTN_MAX_CUSTOM_KINDS];
static int attn__ncustom = 0;

ATTNDEF const attn_kind_info *attn_kind_get(attn_kind kind)
{
    int k = (int)kind;
    if (k >= 0 && k < ATTN_KIND_COUNT) return &attn__kinds[k];
    k -= ATTN_KIND_COUNT;
    return k >= 0 && k < attn__ncustom ? &attn__custom[k].row : NULL;
}

ATTNDEF int attn_kind_from_name(const char *name)
{
    int k;
    const attn_kind_info *r;
    for (k = 0; name && (r = attn_kind_get((attn_kind)k)) != NULL; k++)
        if (strcmp(r->name, name) == 0 || (r->code_name && strcmp(r->code_name, name) == 0)) return k;
    return -1;
}

/* The built-in engines a row may name, each with the flags and the sub-row its code relies on
   (sub: 's' score, 'f' feature, 'm' mix, 0 none), whether its forward reads kv_rows (else the
   dispatcher hands it compact copies) and whether it checks its inputs as it goes, reporting a
   non-finite one (attn__args.seen; else the dispatcher checks them first). */
static const struct attn__engine {
    attn_attention_fwd_fn forward;
    attn_attention_bwd_fn backward;
    size_t (*workspace)(const attn_attention_desc *d);
    unsigned flags;
    char sub, kv_rows, reports;
} attn__engines[] = {
    {ATTN__SCORED, 0, 's', 1, 1},
    {attn__kernel_forward, attn__kernel_backward, attn__kernel_workspace, ATTN_KF_LINEAR_TIME, 'f', 1, 0},
    {attn__diff_forward, attn__diff_backward, attn__diff_workspace, ATTN_KF_SUBHEADS | ATTN_KF_PARAMS, 0, 1,
     1},
    {attn__mix_forward, attn__mix_backward, attn__mix_workspace, ATTN_KF_MIXES_HEADS, 'm', 0, 1},
};

/* kind's built-in engine, NULL for a kind with its own functions. */
static const struct attn__engine *attn__engine_of(attn_kind kind)
{
    size_t e;
    for (e = 0; e < ATTN__COUNT(attn__engines); e++)
        if (attn_kind_get(kind)->forward == attn__engines[e].forward) return &attn__engines[e];
    return NULL;
}

/* What a row lacks for its engine and for the code that reads its flags, or NULL if nothing. */
static const char *attn__row_lacks(const attn_kind_info *r)
{
    const attn_score_row *s = r->score;
    const attn_feature_row *f = r->feature;
    size_t e;
    if (!r->name[0] || strlen(r->name) >= ATTN_CKPT_NAME_LEN ||
        (r->code_name && (!r->code_name[0] || strlen(r->code_name) >= ATTN_CKPT_NAME_LEN)))
        return "a name (and code name, if any) of 1 to 31 characters";
    if (r->formula && strlen(r->formula) >= ATTN_KIND_FORMULA_LEN)
        return "a formula of at most 127 characters";
    if (!r->forward || !r->backward || !r->workspace)
        return "an engine function (forward, backward, workspace)";
    for (e = 0; e < ATTN__COUNT(attn__engines); e++) {
        const struct attn__engine *g = &attn__engines[e];
        int any = r->forward == g->forward || r->backward == g->backward || r->workspace == g->workspace;
        if (!any) continue;
        if (r->forward != g->forward || r->backward != g->backward || r->workspace != g->workspace)
            return "the three functions of one engine";
        if ((r->flags & g->flags) != g->flags) return "the flags its engine relies on";
        if ((g->sub == 's' && !s) || (g->sub == 'f' && !f) || (g->sub == 'm' && !r->mix))
            return "the score, feature or mix row its engine reads";
    }
    if (((r->flags & ATTN_KF_LINEAR_TIME) && !f) || ((r->flags & ATTN_KF_MIXES_HEADS) && !r->mix))
        return "the feature or mix row its flags call for";
    if (s && ((unsigned)s->stat > ATTN_STAT_LSE || !s->vjp ||
              (s->stat == ATTN_STAT_LSE ? !s->exponent : !s->map)))
        return "a statistic and the functions of its score row (vjp; exponent or map)";
    if (f && (!f->features || !f->phi || !f->vjp)) return "the functions of its feature row";
    if (r->mix &&
        ((unsigned)r->mix->norm > ATTN_MIX_NORM_SOFTMAX || (unsigned)r->mix->value > ATTN_MIX_VALUE_DEEP))
        return "a known norm and value network in its mix row";
    return NULL;
}

ATTNDEF attn_kind attn_kind_register(const attn_kind_info *row)
{
    attn__custom_kind *c;
    attn_kind_info r;
    const char *lacks;
    if (!row || !row->name)
        return attn__fail(ATTN_ERR_ARG, "attn_kind_register: the row or its name is NULL"), ATTN_KIND_NONE;
    if (attn_kind_from_name(row->name) >= 0 || (row->code_name && attn_kind_from_name(row->code_name) >= 0))
        return attn__fail(ATTN_ERR_ARG, "attn_kind_register: a kind named %s is there already", row->name),
               ATTN_KIND_NONE;
    if (attn__ncustom == ATTN_MAX_CUSTOM_KINDS)
        return attn__fail(ATTN_ERR_ARG, "attn_kind_register: %d kinds registered, the most there can be",
                          ATTN_MAX_CUSTOM_KINDS),
               ATTN_KIND_NONE;
    r = *row;
    if (!r.forward && !r.backward && !r.workspace && r.score) { /* a scored kind: the tiled engine */
        r.forward = attn__scored_forward;
        r.backward = attn__scored_backward;
        r.workspace = attn__scored_workspace;
    }
    if ((lacks = attn__row_lacks(&r)) != NULL)
        return attn__fail(ATTN_ERR_ARG, "attn_kind_register: %.31s lacks %s", r.name, lacks), ATTN_KIND_NONE;
    c = &attn__custom[attn__ncustom];
    memset(c, 0, sizeof *c);
    strcpy(c->name, r.name);
    r.name = c->name;
    if (r.code_name) r.code_name = strcpy(c->code_name, r.code_name);
    r.formula = r.formula ? strcpy(c->formula, r.formula) : c->formula;
    if (r.score) c->score = *r.score, r.score = &c->score;
    if (r.feature) c->feature = *r.feature, r.feature = &c->feature;
    if (r.mix) c->mix = *r.mix, r.mix = &c->mix;
    r.kind = (attn_kind)(ATTN_KIND_COUNT + attn__ncustom++);
    c->row = r;
    return r.kind;
}

ATTNDEF attn_float attn_diff_lambda_init(int layer) { return (attn_float)(0.8 - 0.6 * exp(-0.3 * layer)); }

ATTNDEF size_t attn_attention_stats_floats(const attn_attention_desc *d)
{
    if (attn__attention_check(__func__, d, (size_t)-1) != ATTN_OK) return 0;
    return (size_t)d->B * d->H * d->Tq * (attn__row(d)->flags & ATTN_KF_SUBHEADS ? 2 * (size_t)d->dv + 3 : 1);
}

/* The bytes of the dropout multipliers the dispatcher computes (0 when it does not). */
static size_t attn__dmask_bytes(const attn_attention_desc *d)
{
    int own = d->dropout > 0 && !d->dropout_mask && (size_t)d->Tq * (size_t)d->Tk <= 65536 && d->Tq > 0 &&
              d->Tk > 0;
    return own ? attn__align_up(sizeof(attn_float) * (size_t)d->Tq * d->Tk) : 0;
}

/* When the dispatcher computes the dropout multipliers: fills them at the start of work into
   dd (a copy of d that points at them) and moves work past them. */
static void attn__dmask_fill(const attn_attention_desc *d, attn_attention_desc *dd, void **work,
                             size_t *work_bytes)
{
    size_t m = attn__dmask_bytes(d);
    attn_float *mask;
    int i;
    *dd = *d;
    if (!m) return;
    mask = attn__align_ptr(*work, 0);
    for (i = 0; i < d->Tq * d->Tk; i++) mask[i] = 1;
    dd->dropout_mask = NULL;
    attn__tile_dropout(dd, 0, d->Tq, 0, d->Tk, mask);
    dd->dropout_mask = mask;
    *work = (char *)*work + m;
    *work_bytes -= m;
}

/* ---- non-finite inputs ----
   The rule (IEEE builds: -ffast-math assumes there are none): a NaN or an infinity in Q, K, V (or,
   in backward, dO, O and the stats) reaches exactly the rows that read it. A row of O, the stats,
   the weights and dQ reads its query, its dO and the keys and values it sees; a row of dK and dV
   reads its own key and value and every row that sees it; in head-mixing kinds the heads of a
   position read each other. Those rows get IEEE arithmetic's answer (the engines' guarded path,
   where a position a row cannot see never enters its products): NaN from a NaN, and NaN or an
   infinity from an infinity unless the formula removes it (a score of -Inf has weight 0). Every
   other row is, bit for bit, what it would be with any finite values in their place. Such a call
   runs twice, once on the inputs for the rows that read them and once on copies with those entries
   0 for the others, and allocates the copies (ATTN_MALLOC). */

/* A call's tensors (floats of Q, K, V, O, the stats; rows of queries B H Tq and keys B KH Tk) and
   its taint: tq [B H Tq] the rows of O, stats, weights and dQ; tk [B KH Tk] those of dK and dV. */
typedef struct {
    size_t nq, nk, nv, no, nst, rq, rk;
    unsigned char *tq, *tk;
} attn__taint;

static void attn__taint_sizes(const attn_attention_desc *d, attn__taint *t)
{
    size_t kh = (size_t)(d->kv_heads ? d->kv_heads : d->H);
    t->rq = (size_t)d->B * d->H * d->Tq;
    t->rk = (size_t)d->B * kh * d->Tk;
    t->nq = t->rq * d->dk; t->no = t->rq * d->dv;
    t->nk = t->rk * d->dk; t->nv = t->rk * d->dv;
    t->nst = attn_attention_stats_floats(d);
}

/* The stats' sections, each [B H Tq, w[s]]: lse or N, or differential's O1, O2, lse1, lse2, rstd. */
static int attn__stats_widths(const attn_attention_desc *d, size_t *w)
{
    if (!(attn__flags(d->kind) & ATTN_KF_SUBHEADS)) return w[0] = 1, 1;
    w[0] = w[1] = (size_t)d->dv;
    w[2] = w[3] = w[4] = 1;
    return 5;
}

/* Whether n floats of x are all finite (NULL: yes). */
static int attn__finite_all(const attn_float *x, size_t n)
{
    size_t i, step = (size_t)INT_MAX / 2;
    for (i = 0; x && i < n; i += step)
        if (!attn__all_finite(x + i, 1, (int)ATTN__MIN(step, n - i), (int)ATTN__MIN(step, n - i))) return 0;
    return 1;
}

/* taint[r] = 1 for the rows r of x [rows, w] that hold a non-finite value (x NULL: none). */
static void attn__mark_rows(const attn_float *x, size_t rows, size_t w, unsigned char *taint)
{
    size_t r;
    for (r = 0; x && r < rows; r++) taint[r] |= !attn__finite_all(x + r * w, w);
}

/* The rows of a call that read its non-finite values (tq, tk hold the rows that hold them). Keys
   that hold one are 1 in tk, keys that a tainted query row reads 2. */
static void attn__taint_spread(const attn_attention_desc *d, attn__taint *t)
{
    int b, h, i, j, kh = d->kv_heads ? d->kv_heads : d->H, g = d->H / kh;
    int mix = (attn__flags(d->kind) & ATTN_KF_MIXES_HEADS) != 0;
    for (b = 0; b < d->B; b++)
        for (h = 0; h < d->H; h++)
            for (i = 0; i < d->Tq; i++) {
                unsigned char *q = t->tq + ((size_t)b * d->H + h) * d->Tq + i;
                const unsigned char *k = t->tk + ((size_t)b * kh + h / g) * d->Tk;
                for (j = 0; j < d->Tk && !*q; j++) *q = (k[j] & 1) && attn__sees(d, b, h, i, j);
            }
    for (b = 0; b < d->B && mix; b++) /* the heads of a position read each other */
        for (i = 0; i < d->Tq; i++) {
            int any = 0;
            for (h = 0; h < d->H; h++) any |= t->tq[((size_t)b * d->H + h) * d->Tq + i];
            for (h = 0; h < d->H; h++) t->tq[((size_t)b * d->H + h) * d->Tq + i] = (unsigned char)any;
        }
    for (b = 0; b < d->B; b++)
        for (h = 0; h < d->H; h++)
            for (i = 0; i < d->Tq; i++)
                for (j = 0; j < d->Tk && t->tq[((size_t)b * d->H + h) * d->Tq + i]; j++)
                    if (attn__sees(d, b, h, i, j)) t->tk[((size_t)b * kh + h / g) * d->Tk + j] |= 2;
    for (b = 0; b < d->B && mix; b++)
        for (j = 0; j < d->Tk; j++) {
            int any = 0;
            for (h = 0; h < d->H; h++) any |= t->tk[((size_t)b * d->H + h) * d->Tk + j];
            for (h = 0; h < d->H; h++) t->tk[((size_t)b * d->H + h) * d->Tk + j] = (unsigned char)any;
        }
}

/* dst = x with its non-finite entries 0, n floats (x NULL: nothing). */
static void attn__finite_copy(attn_float *dst, const attn_float *x, size_t n)
{
    size_t i;
    for (i = 0; x && i < n; i++) dst[i] = attn__finite((double)x[i]) ? x[i] : 0;
}

/* The rows r of dst [rows, w] with taint[r] set (taint NULL: all) copied from src (dst NULL: none). */
static void attn__take_rows(attn_float *dst, const attn_float *src, size_t rows, size_t w,
                            const unsigned char *taint)
{
    size_t r;
    for (r = 0; dst && r < rows; r++)
        if (!taint || taint[r]) memcpy(dst + r * w, src + r * w, sizeof(attn_float) * w);
}

/* The stats' tainted rows, section by section, from src to dst. */
static void attn__take_stats(const attn_attention_desc *d, attn_float *dst, const attn_float *src,
                             const attn__taint *t)
{
    size_t w[5], off = 0;
    int s, n = attn__stats_widths(d, w);
    for (s = 0; s < n; off += t->rq * w[s++]) attn__take_rows(dst + off, src + off, t->rq, w[s], t->tq);
}

/* The rows of a call whose inputs hold a non-finite value (attn__taint, sizes set): marked where
   they hold one, then spread to the rows that read them. */
static void attn__taint_mark(const attn_attention_desc *d, attn__taint *t, const attn_float *Q,
                             const attn_float *K, const attn_float *V, const attn_float *dO,
                             const attn_float *Oin, const attn_float *st)
{
    size_t w[5], off = 0;
    int s, n = attn__stats_widths(d, w);
    memset(t->tq, 0, t->rq + t->rk);
    attn__mark_rows(Q, t->rq, (size_t)d->dk, t->tq);
    attn__mark_rows(dO, t->rq, (size_t)d->dv, t->tq);
    attn__mark_rows(Oin, t->rq, (size_t)d->dv, t->tq);
    for (s = 0; st && s < n; off += t->rq * w[s++]) attn__mark_rows(st + off, t->rq, w[s], t->tq);
    attn__mark_rows(K, t->rk, (size_t)d->dk, t->tk);
    attn__mark_rows(V, t->rk, (size_t)d->dv, t->tk);
    attn__taint_spread(d, t);
}

/* A forward (g NULL) or backward call whose inputs hold a non-finite value, by the rule above:
   the engine runs on the inputs into copies of the outputs, then on finite copies of the inputs
   into the outputs, and the tainted rows are taken from the first run. */
static attn_status attn__nonfinite_call(const attn_attention_desc *d, const attn_attention_grads *g,
                                        attn_float *O, attn_float *stats, attn_float *weights,
                                        const attn_float *Q, const attn_float *K, const attn_float *V,
                                        const attn_float *dO, const attn_float *Oin, const attn_float *st,
                                        void *work, size_t wb)
{
    const attn_kind_info *row = attn__row(d);
    attn__taint t;
    attn_attention_grads g1;
    size_t nw = weights ? (size_t)d->B * d->H * d->Tq * d->Tk : 0, nb = (size_t)d->H * d->Tq * d->Tk;
    size_t np = (size_t)2 * d->dk + d->dv + (size_t)d->H * d->dv * d->dv, total, bytes, r;
    attn_float *m, *q, *k, *v, *o1, *o2, *s1, *w1, *gr;
    attn_status rc;
    int any = 0, was = attn__finite_call;
    attn__taint_sizes(d, &t);
    total = t.nq + t.nk + t.nv + 2 * t.no + t.nst + nw + (g ? t.nq + t.nk + t.nv + nb + np : 0);
    bytes = sizeof(attn_float) * total + t.rq + t.rk;
    if (!(m = (attn_float *)ATTN_MALLOC(bytes)))
        return attn__fail(ATTN_ERR_NOMEM, "attention: inputs with a NaN or infinity need %lu bytes of copies",
                          (unsigned long)bytes);
    q = m; k = q + t.nq; v = k + t.nk; /* the finite copies */
    o1 = v + t.nv; o2 = o1 + t.no; s1 = o2 + t.no; w1 = s1 + t.nst; gr = w1 + nw;
    t.tq = (unsigned char *)(m + total);
    t.tk = t.tq + t.rq;
    attn__taint_mark(d, &t, Q, K, V, dO, Oin, st);
    attn__finite_copy(q, Q, t.nq); attn__finite_copy(k, K, t.nk); attn__finite_copy(v, V, t.nv);
    if (!g) { /* forward: the first run's O, stats, weights in o1, s1, w1 */
        attn__finite_call = 0;
        rc = row->forward(d, o1, s1, weights ? w1 : NULL, Q, K, V, work, wb);
        attn__finite_call = 1;
        if (rc == ATTN_OK) rc = row->forward(d, O, stats, weights, q, k, v, work, wb);
        attn__finite_call = was;
        if (rc == ATTN_OK) {
            attn__take_rows(O, o1, t.rq, (size_t)d->dv, t.tq);
            attn__take_stats(d, stats, s1, &t);
            attn__take_rows(weights, w1, t.rq, (size_t)d->Tk, t.tq);
        }
        ATTN_FREE(m);
        return rc;
    }
    g1 = *g; /* backward: the first run accumulates into copies of the gradients */
    g1.dQ = (attn_float *)memcpy(gr, g->dQ, sizeof(attn_float) * t.nq);
    g1.dK = (attn_float *)memcpy(g1.dQ + t.nq, g->dK, sizeof(attn_float) * t.nk);
    g1.dV = (attn_float *)memcpy(g1.dK + t.nk, g->dV, sizeof(attn_float) * t.nv);
    gr = g1.dV + t.nv;
    if (g->dbias) g1.dbias = (attn_float *)memcpy(gr, g->dbias, sizeof(attn_float) * nb);
    if (g->dlambda) g1.dlambda = (attn_float *)memcpy(gr + nb, g->dlambda, sizeof(attn_float) * 2 * d->dk);
    if (g->dgain) g1.dgain = (attn_float *)memcpy(gr + nb + 2 * d->dk, g->dgain, sizeof(attn_float) * d->dv);
    if (g->dw2)
        g1.dw2 = (attn_float *)memcpy(gr + nb + 2 * d->dk + d->dv, g->dw2,
                                      sizeof(attn_float) * d->H * d->dv * d->dv);
    attn__finite_copy(o1, dO, t.no); attn__finite_copy(o2, Oin, t.no); attn__finite_copy(s1, st, t.nst);
    attn__finite_call = 0;
    rc = row->backward(d, &g1, dO, Q, K, V, Oin, st, work, wb);
    attn__finite_call = 1;
    if (rc == ATTN_OK) rc = row->backward(d, g, o1, q, k, v, o2, s1, work, wb);
    attn__finite_call = was;
    if (rc == ATTN_OK) {
        attn__take_rows(g->dQ, g1.dQ, t.rq, (size_t)d->dk, t.tq);
        attn__take_rows(g->dK, g1.dK, t.rk, (size_t)d->dk, t.tk);
        attn__take_rows(g->dV, g1.dV, t.rk, (size_t)d->dv, t.tk);
        for (r = 0; r < t.rq; r++) { /* row (h, i) of dbias sums the rows (b, h, i) */
            size_t hi = r % ((size_t)d->H * d->Tq) * d->Tk;
            any |= t.tq[r];
            if (t.tq[r] && g->dbias) attn__take_rows(g->dbias + hi, g1.dbias + hi, 1, (size_t)d->Tk, NULL);
        }
        if (any) { /* the kind's parameters read every row */
            attn__take_rows(g->dlambda, g1.dlambda, 1, (size_t)2 * d->dk, NULL);
            attn__take_rows(g->dgain, g1.dgain, 1, (size_t)d->dv, NULL);
            attn__take_rows(g->dw2, g1.dw2, 1, (size_t)d->H * d->dv * d->dv, NULL);
        }
    }
    ATTN_FREE(m);
    return rc;
}

/* Whether the Tk rows of every head slice of K and V are finite. */
static int attn__kv_finite(const attn_attention_desc *d, const attn_float *K, const attn_float *V)
{
    size_t s, n = (size_t)d->B * (d->kv_heads ? d->kv_heads : d->H), r = attn__kv_rows(d);
    for (s = 0; s < n; s++)
        if (!attn__finite_all(K + s * r * d->dk, (size_t)d->Tk * d->dk) ||
            !attn__finite_all(V + s * r * d->dv, (size_t)d->Tk * d->dv))
            return 0;
    return 1;
}

/* The bytes of compact copies of a cache's K and V (kv_rows set), 0 without one. */
static size_t attn__kv_compact_bytes(const attn_attention_desc *d)
{
    size_t n = (size_t)d->B * (d->kv_heads ? d->kv_heads : d->H) * d->Tk;
    return d->kv_rows ? attn__align_up(sizeof(attn_float) * n * (d->dk + d->dv)) : 0;
}

/* A cache's K and V, when its engine does not read them in place or the call's inputs are not all
   finite (the rule's copies are compact): copied into the start of work, and dd, *K, *V pointed at
   them. */
static void attn__kv_compact(attn_attention_desc *dd, const attn_float **K, const attn_float **V, void **work,
                             size_t *work_bytes, int finite)
{
    size_t m = attn__kv_compact_bytes(dd), n, s, r = attn__kv_rows(dd), kd = (size_t)dd->Tk * dd->dk,
           vd = (size_t)dd->Tk * dd->dv;
 attn_float *k, *v;
 if (!m || dd->kv_rows == dd->Tk ||
     (attn__engine_of(dd->kind) && attn__engine_of(dd->kind)->kv_rows && finite))
     return;
 k = attn__align_ptr(*work, 0);
 *work = (char *)*work + m;
 *work_bytes -= m;
 n = (size_t)dd->B * (dd->kv_heads ? dd->kv_heads : dd->H);
 v = k + n * kd;
 for (s = 0; s < n; s++) {
     memcpy(k + s * kd, *K + s * r * dd->dk, sizeof(attn_float) * kd);
     memcpy(v + s * vd, *V + s * r * dd->dv, sizeof(attn_float) * vd);
    }
    dd->kv_rows = 0;
    *K = k;
    *V = v;
}

/* Whether a call's inputs are all finite (the common case: one pass over them). */
static int attn__inputs_finite(const attn_attention_desc *d, const attn_float *Q, const attn_float *K,
                               const attn_float *V, const attn_float *dO, const attn_float *Oin,
                               const attn_float *st)
{
    attn__taint t;
    attn__taint_sizes(d, &t);
    return attn__finite_all(Q, t.nq) && attn__kv_finite(d, K, V) &&
           attn__finite_all(dO, t.no) && attn__finite_all(Oin, t.no) && attn__finite_all(st, t.nst);
}

ATTNDEF size_t attn_attention_workspace(const attn_attention_desc *d)
{
    if (attn__attention_check(__func__, d, (size_t)-1) != ATTN_OK) return 0;
    return attn__row(d)->workspace(d) + attn__dmask_bytes(d) + attn__kv_compact_bytes(d);
}

ATTNDEF attn_status attn_attention_forward(const attn_attention_desc *d, attn_float *O,
                                           attn_float *stats, attn_float *weights,
                                           const attn_float *Q, const attn_float *K,
                                           const attn_float *V, void *work, size_t work_bytes)
{
    const struct attn__engine *e;
    attn_attention_desc dd;
    attn_status rc;
    int was, finite = 1, seen = 0, *report;
    ATTN__TRY(attn__attention_check(__func__, d, work_bytes));
    ATTN__NEED(work);
    attn__dmask_fill(d, &dd, &work, &work_bytes);
    e = attn__engine_of(d->kind);
    if (!e || !e->reports) finite = attn__inputs_finite(&dd, Q, K, V, NULL, NULL, NULL);
    attn__kv_compact(&dd, &K, &V, &work, &work_bytes, finite);
    if (finite) { /* an engine that reports a slice with a non-finite value checks them as it goes */
        was = attn__finite_call;
        report = attn__guard_report;
        attn__finite_call = !e || !e->reports;
        attn__guard_report = attn__finite_call ? NULL : &seen;
        rc = attn__row(d)->forward(&dd, O, stats, weights, Q, K, V, work, work_bytes);
        attn__finite_call = was;
        attn__guard_report = report;
        if (rc != ATTN_OK || !seen) return rc;
        attn__kv_compact(&dd, &K, &V, &work, &work_bytes, 0); /* the rule's run reads compact copies */
    }
    return attn__nonfinite_call(&dd, NULL, O, stats, weights, Q, K, V, NULL, NULL, NULL, work, work_bytes);
}

ATTNDEF attn_status attn_attention_backward(const attn_attention_desc *d, const attn_attention_grads *g,
                                            const attn_float *dO, const attn_float *Q,
                                            const attn_float *K, const attn_float *V,
                                            const attn_float *O, const attn_float *stats,
                                            void *work, size_t work_bytes)
{
    attn_attention_desc dd;
    attn_status rc;
    int was;
    ATTN__TRY(attn__attention_check(__func__, d, work_bytes));
    ATTN__NEED(work);
    if (d->kv_rows && d->kv_rows != d->Tk)
        return attn__fail(ATTN_ERR_ARG, "%s: kv_rows (a cache) is for the forward pass; backward needs 0",
                          __func__);
    attn__dmask_fill(d, &dd, &work, &work_bytes);
    if (!attn__inputs_finite(d, Q, K, V, dO, O, stats))
        return attn__nonfinite_call(&dd, g, NULL, NULL, NULL, Q, K, V, dO, O, stats, work, work_bytes);
    was = attn__finite_call;
    attn__finite_call = 1;
    rc = attn__row(d)->backward(&dd, g, dO, Q, K, V, O, stats, work, work_bytes);
    attn__finite_call = was;
    return rc;
}

/* The gradient check's buffers: Q, K, V, O, the loss weights w [like O], the stats, then the
   analytic gradients dQ, dK, dV. */
typedef struct {
    size_t n[3], no, nst;
    attn_float *x[3], *O, *w, *st, *g[3];
} attn__gc_bufs;

/* L = sum w . O of the forward pass at the current inputs (in double); NAN if the call fails. */
static double attn__gc_loss(const attn_attention_desc *d, const attn__gc_bufs *b, void *work, size_t wb)
{
    double L = 0;
    size_t i;
    if (attn_attention_forward(d, b->O, b->st, NULL, b->x[0], b->x[1], b->x[2], work, wb) != ATTN_OK)
        return NAN;
    for (i = 0; i < b->no; i++) L += (double)b->w[i] * b->O[i];
    return L;
}

ATTNDEF int attn_gradcheck_attention(const attn_attention_desc *d, uint64_t seed, double h, double tol,
                                     int max_entries, double *max_err)
{
    attn__gc_bufs b;
    attn_attention_grads gr;
    attn_float *mem;
    void *work;
    size_t wb, i, total, lim;
    attn_rng r;
    double worst = 0, e, L0, Lp, Lm;
    int v, st = 1;
    if (attn__attention_check(__func__, d, (size_t)-1) != ATTN_OK ||
        !attn__gc_args(__func__, h, tol, max_entries))
        return -1;
    h = h > 0 ? h : sizeof(attn_float) == 8 ? 1e-6 : 1e-2;
    tol = tol > 0 ? tol : sizeof(attn_float) == 8 ? 1e-6 : 1e-2;
    attn__gc_kinks = 0;
    b.n[0] = (size_t)d->B * d->H * d->Tq * d->dk;
    b.n[1] = (size_t)d->B * d->H * d->Tk * d->dk;
    b.n[2] = (size_t)d->B * d->H * d->Tk * d->dv;
    b.no = (size_t)d->B * d->H * d->Tq * d->dv; b.nst = attn_attention_stats_floats(d);
    total = 2 * (b.n[0] + b.n[1] + b.n[2]) + 2 * b.no + b.nst;
    wb = attn_attention_workspace(d);
    mem = (attn_float *)ATTN_MALLOC(sizeof(attn_float) * total);
    work = ATTN_MALLOC(wb);
    if (!mem || !work) {
        ATTN_FREE(mem); ATTN_FREE(work);
        attn__fail(ATTN_ERR_NOMEM, "attn_gradcheck_attention: no memory for %lu floats",
                   (unsigned long)total);
        return -1;
    }
    b.x[0] = mem;
    b.x[1] = b.x[0] + b.n[0];
    b.x[2] = b.x[1] + b.n[1];
    b.O = b.x[2] + b.n[2];
    b.w = b.O + b.no;
    b.st = b.w + b.no;
    b.g[0] = b.st + b.nst; b.g[1] = b.g[0] + b.n[0]; b.g[2] = b.g[1] + b.n[1];
    attn_rng_seed(&r, seed, 11);
    for (i = 0; i < total; i++) mem[i] = (attn_float)attn_rng_normal(&r, 0, 1);
    memset(b.g[0], 0, sizeof(attn_float) * (b.n[0] + b.n[1] + b.n[2]));
    memset(&gr, 0, sizeof gr);
    gr.dQ = b.g[0]; gr.dK = b.g[1]; gr.dV = b.g[2];
    if ((L0 = attn__gc_loss(d, &b, work, wb)) != attn__gc_loss(d, &b, work, wb) || /* NaN: it failed */
        attn_attention_backward(d, &gr, b.w, b.x[0], b.x[1], b.x[2], b.O, b.st, work, wb) != ATTN_OK)
        st = -1;
    for (v = 0; v < 3 && st >= 0; v++) {
        lim = max_entries > 0 && (size_t)max_entries < b.n[v] ? (size_t)max_entries : b.n[v];
        for (i = 0; i < lim; i++) {
            attn_float x = b.x[v][i];
            b.x[v][i] = (attn_float)(x + h);
            Lp = attn__gc_loss(d, &b, work, wb);
            b.x[v][i] = (attn_float)(x - h);
            Lm = attn__gc_loss(d, &b, work, wb);
            b.x[v][i] = x;
            e = attn__gc_error(Lm, L0, Lp, h, b.g[v][i], tol);
            worst = e > worst || e != e ? e : worst;
        }
    }
    ATTN_FREE(mem);
    ATTN_FREE(work);
    if (max_err) *max_err = worst;
    return st < 0 ? -1 : worst <= tol;
}

/* ---- Linformer ---- */

/* The compressed problem: the same heads and kind over kproj keys, not causal. */
static void attn__linformer_desc(const attn_attention_desc *d, int kproj, attn_attention_desc *c)
{
    *c = *d;
    c->Tk = kproj;
}

ATTNDEF size_t attn_linformer_cache_floats(const attn_attention_desc *d, int kproj)
{
    if (!d || kproj < 1) return attn__fail(ATTN_ERR_ARG, "%s: d NULL or kproj = %d < 1", __func__, kproj), 0;
    if (attn__attention_check(__func__, d, (size_t)-1) != ATTN_OK) return 0;
    return (size_t)d->B * d->H * ((size_t)kproj * (d->dk + d->dv) + (size_t)d->Tq);
}

/* Work: the compressed attention's workspace, then dK' [B, H, kproj, dk] and dV' [B, H, kproj, dv];
   its size. */
static size_t attn__linformer_work_map(const attn_attention_desc *d, int kproj, void *work, attn_float **dKc,
                                       attn_float **dVc)
{
    attn_attention_desc c;
    attn_arena ar;
    attn__linformer_desc(d, kproj, &c);
    attn__arena_plan(&ar, work);
    attn__arena_take(&ar, attn_attention_workspace(&c)); /* the start of work */
    *dKc = attn__arena_floats(&ar, (size_t)d->B * d->H * kproj * d->dk);
    *dVc = attn__arena_floats(&ar, (size_t)d->B * d->H * kproj * d->dv);
    return ar.used + ATTN_ALIGN;
}

ATTNDEF size_t attn_linformer_work_bytes(const attn_attention_desc *d, int kproj)
{
    attn_float *dKc, *dVc;
    if (!d || kproj < 1) return attn__fail(ATTN_ERR_ARG, "%s: d NULL or kproj = %d < 1", __func__, kproj), 0;
    if (attn__attention_check(__func__, d, (size_t)-1) != ATTN_OK) return 0;
    return attn__linformer_work_map(d, kproj, NULL, &dKc, &dVc);
}

static attn_status attn__linformer_check(const char *fn, const attn_attention_desc *d, int kproj, int n_max,
                                         const attn_float *E, const attn_float *F, size_t work_bytes)
{
    attn_attention_desc c;
    ATTN__TRY(attn__attention_check(fn, d, (size_t)-1));
    if (d->causal || d->key_mask || d->segment || d->window || d->block || d->mod || d->kv_rows)
        return attn__fail(ATTN_ERR_ARG,
                          "%s: Linformer is non-causal only (E mixes future positions); no causal flag, key "
                          "mask, segments, pattern, modifiers or kv_rows",
                          fn);
    if (!attn__row(d)->score)
        return attn__fail(
            ATTN_ERR_ARG,
            "%s: Linformer takes a scored kind (softmax to linear_raw, or one of yours), not %s", fn,
            attn__row(d)->name);
    if (kproj < 1 || d->Tk > n_max)
        return attn__fail(ATTN_ERR_SHAPE, "%s: kproj = %d must be >= 1 and T = %d <= n_max = %d", fn, kproj,
                          d->Tk, n_max);
    if (!E || !F) return attn__fail(ATTN_ERR_ARG, "%s: E and F must not be NULL", fn);
    attn__linformer_desc(d, kproj, &c);
    ATTN__TRY(attn__attention_check(fn, &c, (size_t)-1));
    if (work_bytes < attn_linformer_work_bytes(d, kproj))
        return attn__fail(ATTN_ERR_ARG, "%s: work has %lu bytes, attn_linformer_work_bytes() asks for %lu",
                          fn, (unsigned long)work_bytes, (unsigned long)attn_linformer_work_bytes(d, kproj));
    return ATTN_OK;
}

ATTNDEF attn_status attn_linformer_forward(const attn_attention_desc *d, int kproj, int n_max,
                                           const attn_float *E, const attn_float *F, attn_float *O,
                                           attn_float *cache, size_t cache_floats, const attn_float *Q,
                                           const attn_float *K, const attn_float *V, void *work,
                                           size_t work_bytes)
{
    attn_attention_desc c;
    attn_float *Kc, *Vc;
    int bh, T;
    ATTN__TRY(attn__linformer_check(__func__, d, kproj, n_max, E, F, work_bytes));
    ATTN__NEED(O); ATTN__NEED(cache); ATTN__NEED(Q); ATTN__NEED(K); ATTN__NEED(V); ATTN__NEED(work);
    if (cache_floats != ATTN__CACHE_OWN) /* a model's own layout is not measured twice */
        ATTN__TRY(attn__cache_ok(__func__, cache_floats, attn_linformer_cache_floats(d, kproj),
                                 "attn_linformer_cache_floats"));
    attn__linformer_desc(d, kproj, &c);
    T = d->Tk;
    Kc = cache;
    Vc = Kc + (size_t)d->B * d->H * kproj * d->dk;
    for (bh = 0; bh < d->B * d->H; bh++) { /* K' = E[:, :T] K, V' = F[:, :T] V */
        attn_gemm(0, 0, kproj, d->dk, T, 1, E, n_max, K + (size_t)bh * T * d->dk, d->dk, 0,
                  Kc + (size_t)bh * kproj * d->dk, d->dk);
        attn_gemm(0, 0, kproj, d->dv, T, 1, F, n_max, V + (size_t)bh * T * d->dv, d->dv, 0,
                  Vc + (size_t)bh * kproj * d->dv, d->dv);
    }
    return attn_attention_forward(&c, O, Vc + (size_t)d->B * d->H * kproj * d->dv, NULL, Q, Kc, Vc, work,
                                  attn_attention_workspace(&c));
}

ATTNDEF attn_status attn_linformer_backward(const attn_attention_desc *d, int kproj, int n_max,
                                            const attn_float *E, const attn_float *F, attn_float *dE,
                                            attn_float *dF, attn_float *dQ, attn_float *dK, attn_float *dV,
                                            const attn_float *dO, const attn_float *Q, const attn_float *K,
                                            const attn_float *V, const attn_float *O, const attn_float *cache,
                                            size_t cache_floats, void *work, size_t work_bytes)
{
    attn_attention_desc c;
    const attn_float *Kc, *Vc;
    attn_float *dKc, *dVc;
    size_t nk, nv;
    int bh, T;
    ATTN__TRY(attn__linformer_check(__func__, d, kproj, n_max, E, F, work_bytes));
    ATTN__NEED(dQ); ATTN__NEED(dK); ATTN__NEED(dV); ATTN__NEED(dO); ATTN__NEED(Q); ATTN__NEED(K);
    ATTN__NEED(V); ATTN__NEED(O); ATTN__NEED(cache); ATTN__NEED(work);
    if (cache_floats != ATTN__CACHE_OWN) /* a model's own layout is not measured twice */
        ATTN__TRY(attn__cache_ok(__func__, cache_floats, attn_linformer_cache_floats(d, kproj),
                                 "attn_linformer_cache_floats"));
    attn__linformer_desc(d, kproj, &c);
    T = d->Tk;
    nk = (size_t)d->B * d->H * kproj * d->dk;
    nv = (size_t)d->B * d->H * kproj * d->dv;
    Kc = cache;
    Vc = Kc + nk;
    attn__linformer_work_map(d, kproj, work, &dKc, &dVc);
    memset(dKc, 0, sizeof(attn_float) * nk);
    memset(dVc, 0, sizeof(attn_float) * nv);
    {
        attn_attention_grads g = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
        g.dQ = dQ; g.dK = dKc; g.dV = dVc;
        ATTN__TRY(
            attn_attention_backward(&c, &g, dO, Q, Kc, Vc, O, Vc + nv, work, attn_attention_workspace(&c)));
    }
    for (bh = 0; bh < d->B * d->H; bh++) { /* K' = E K  =>  dE += dK' K^T, dK += E^T dK' (and F, V) */
        const attn_float *Kb = K + (size_t)bh * T * d->dk, *Vb = V + (size_t)bh * T * d->dv;
        attn_float *dKb = dKc + (size_t)bh * kproj * d->dk, *dVb = dVc + (size_t)bh * kproj * d->dv;
        if (dE) attn_gemm(0, 1, kproj, T, d->dk, 1, dKb, d->dk, Kb, d->dk, 1, dE, n_max);
        if (dF) attn_gemm(0, 1, kproj, T, d->dv, 1, dVb, d->dv, Vb, d->dv, 1, dF, n_max);
        attn_gemm(1, 0, T, d->dk, kproj, 1, E, n_max, dKb, d->dk, 1, dK + (size_t)bh * T * d->dk, d->dk);
        attn_gemm(1, 0, T, d->dv, kproj, 1, F, n_max, dVb, d->dv, 1, dV + (size_t)bh * T * d->dv, d->dv);
    }
    return ATTN_OK;
}

/* ---- the attention layer ---- */

/* [B, T, H d] (rows ld apart) <-> [B, H, T, d]: split the heads out of the channels, or merge them
   back. */
static void attn__heads_at(attn_float *dst, const attn_float *src, int B, int T, int H, int d, int split,
                           size_t ld)
{
    size_t hs = (size_t)T * d;
    int b, t, h, i;
    for (b = 0; b < B; b++)
        for (t = 0; t < T; t++) { /* token (b, t)'s H heads: d floats each, T d apart when split */
            size_t row = ((size_t)b * T + t) * ld, head = ((size_t)b * H * T + t) * d;
            for (h = 0; h < H; h++, row += d, head += hs) {
                attn_float *o = dst + (split ? head : row);
                const attn_float *x = src + (split ? row : head);
                /* heads are a few floats: loops, not a memcpy call (compilers kept a plain loop scalar);
                   below a vector, blocks of 4 by a fixed-size memcpy, one 16-byte move */
                for (i = 0; i + ATTN__VW <= d; i += ATTN__VW) attn__vstore(o + i, attn__vload(x + i));
                for (; i + 4 <= d; i += 4) memcpy(o + i, x + i, 4 * sizeof(attn_float));
                for (; i < d; i++) o[i] = x[i];
            }
        }
}
static void attn__heads(attn_float *dst, const attn_float *src, int B, int T, int H, int d, int split)
{
    attn__heads_at(dst, src, B, T, H, d, split, (size_t)H * d);
}

static void attn__layer_desc(const attn_layer *L, int B, int Tq, int Tk, attn_attention_desc *d)
{
    *d = L->att;
    d->B = B;
    d->Tq = Tq;
    d->Tk = Tk;
}

/* The global rows' problem: the ng global queries over every key, nothing but the key mask. */
static void attn__layer_global_desc(const attn_layer *L, const attn_attention_desc *d, attn_attention_desc *g)
{
    int t;
    *g = *d;
    g->window = 0; g->dilation = NULL; g->global = NULL; g->block = 0; g->layout = NULL; g->bias = NULL;
    for (g->Tq = 0, t = 0; L->Wqg && L->att.global && t < d->Tq; t++) g->Tq += L->att.global[t] != 0;
}

/* Cache layout (floats): Q [B H Tq dk], K [B H Tk dk], V [B H Tk dv], O [B H Tq dv], the stats
   (with Linformer its cache: K', V' and the stats), Ocat [B Tq H dv], rope cos and sin [Tk dk/2]
   each; with global projections Qg [B H ng dk], Kg [B H Tk dk], Vg [B H Tk dv], Og [B H ng dv]
   and their stats; with QK-norm the rows before it, Qr and Kr (as Q, K), and their rstd. */
typedef struct {
    attn_float *Q, *K, *V, *O, *stats, *Ocat, *cosv, *sinv, *Qg, *Kg, *Vg, *Og, *statsg, *Qr, *Kr, *qrstd,
        *krstd;
} attn__layer_cache;

static size_t attn__layer_cache_map(const attn_layer *L, int B, int Tq, int Tk, attn_float *base,
                                    attn__layer_cache *c)
{
    size_t H = (size_t)L->att.H, dk = (size_t)L->att.dk, dv = (size_t)L->att.dv, ng, rope, qk,
           KH = (size_t)(L->att.kv_heads ? L->att.kv_heads : L->att.H);
    attn__layer_cache t;
    attn_attention_desc d, g;
    attn_arena ar;
    attn__layer_desc(L, B, Tq, Tk, &d);
    attn__layer_global_desc(L, &d, &g);
    ng = (size_t)g.Tq;
    rope = L->rope ? (size_t)Tk * (dk / 2) : 0;
    attn_arena_measure(&ar); /* carved from base as it is (a size query passes no map) */
    ar.base = c ? (unsigned char *)base : NULL;
    if (!c) c = &t;
    c->Q = attn__arena_floats(&ar, B * H * Tq * dk);
    c->K = attn__arena_floats(&ar, B * KH * Tk * dk);
    c->V = attn__arena_floats(&ar, B * KH * Tk * dv);
    c->O = attn__arena_floats(&ar, B * H * Tq * dv);
    c->stats = attn__arena_floats(&ar, L->kproj > 0 ? attn_linformer_cache_floats(&d, L->kproj)
                                                    : attn_attention_stats_floats(&d));
    c->Ocat = attn__arena_floats(&ar, B * H * Tq * dv);
    c->cosv = attn__arena_floats(&ar, rope);
    c->sinv = attn__arena_floats(&ar, rope);
    c->Qg = attn__arena_floats(&ar, B * H * ng * dk); /* the global rows' own problem (Longformer) */
    c->Kg = attn__arena_floats(&ar, ng ? B * H * Tk * dk : 0);
    c->Vg = attn__arena_floats(&ar, ng ? B * H * Tk * dv : 0);
    c->Og = attn__arena_floats(&ar, B * H * ng * dv);
    c->statsg = attn__arena_floats(&ar, ng ? attn_attention_stats_floats(&g) : 0);
    qk = L->qnorm != NULL;
    c->Qr = attn__arena_floats(&ar, qk * B * H * Tq * dk);
    c->Kr = attn__arena_floats(&ar, qk * B * KH * Tk * dk);
    c->qrstd = attn__arena_floats(&ar, qk * B * H * Tq);
    c->krstd = attn__arena_floats(&ar, qk * B * KH * Tk);
    return ar.used / sizeof(attn_float);
}

/* The size queries' checks: L, its descriptor for these sizes; 0 (error set) if they fail. */
static int attn__layer_sizes_ok(const char *fn, const attn_layer *L, int B, int Tq, int Tk)
{
    attn_attention_desc d;
    if (!L) return attn__fail(ATTN_ERR_ARG, "%s: L is NULL", fn), 0;
    if (B < 1 || Tq < 1 || Tk < 1)
        return attn__fail(ATTN_ERR_SHAPE, "%s: B = %d, Tq = %d, Tk = %d must be >= 1", fn, B, Tq, Tk), 0;
    attn__layer_desc(L, B, Tq, Tk, &d);
    return attn__attention_check(fn, &d, (size_t)-1) == ATTN_OK;
}

ATTNDEF size_t attn_layer_cache_floats(const attn_layer *L, int B, int Tq, int Tk)
{
    return attn__layer_sizes_ok(__func__, L, B, Tq, Tk) ? attn__layer_cache_map(L, B, Tq, Tk, NULL, NULL) : 0;
}

/* The size of each of the layer's scratch buffers: B max(Tq, Tk) max(H max(dk, dv), C) floats. */
static size_t attn__layer_buf_floats(const attn_layer *L, const attn_attention_desc *d)
{
    return (size_t)d->B * ATTN__MAX(d->Tq, d->Tk) *
           ATTN__MAX((size_t)L->att.H * ATTN__MAX(L->att.dk, L->att.dv), (size_t)L->C);
}

/* The attention's workspace (Linformer's; enough for the global rows' problem too). */
static size_t attn__layer_att_work(const attn_layer *L, const attn_attention_desc *d)
{
    attn_attention_desc g;
    if (L->kproj > 0) return attn_linformer_work_bytes(d, L->kproj);
    attn__layer_global_desc(L, d, &g);
    return ATTN__MAX(attn_attention_workspace(d), g.Tq ? attn_attention_workspace(&g) : 0);
}

/* Self-attention's q, k, v projections side by side (see attn__layer_qkv_forward). */
typedef struct {
    int w[3], off[3], heads[3], dims[3], nw; /* q, k, v: widths, offsets in G, heads, head widths */
} attn__qkv;

static attn__qkv attn__layer_qkv(const attn_layer *L)
{
    attn__qkv q;
    int KH = L->att.kv_heads ? L->att.kv_heads : L->att.H, j;
    q.heads[0] = L->att.H; q.heads[1] = q.heads[2] = KH;
    q.dims[0] = q.dims[1] = L->att.dk; q.dims[2] = L->att.dv;
    for (q.nw = 0, j = 0; j < 3; j++) {
        q.w[j] = q.heads[j] * q.dims[j];
        q.off[j] = q.nw;
        q.nw += q.w[j];
    }
    return q;
}

/* Work: the attention's workspace, then six scratch buffers buf[0..5] (forward uses two), the three
   projections side by side buf[6] [B max(Tq, Tk), nw] and their weights stacked buf[7] [nw, C] (self-
   attention's, see attn__layer_qkv_forward; the size query does not know whether m will be given, so
   they are always there); its size. */
#define ATTN__LAYER_BUFS 8
static size_t attn__layer_work_map(const attn_layer *L, const attn_attention_desc *d, void *work,
                                   attn_float **buf)
{
    attn_arena ar;
    size_t nw = (size_t)attn__layer_qkv(L).nw;
    int i;
    attn__arena_plan(&ar, work);
    attn__arena_take(&ar, attn__layer_att_work(L, d)); /* the start of work */
    for (i = 0; i < 6; i++) buf[i] = attn__arena_floats(&ar, attn__layer_buf_floats(L, d));
    buf[6] = attn__arena_floats(&ar, (size_t)d->B * ATTN__MAX(d->Tq, d->Tk) * nw);
    buf[7] = attn__arena_floats(&ar, nw * (size_t)L->C);
    return ar.used + ATTN_ALIGN;
}

ATTNDEF size_t attn_layer_work_bytes(const attn_layer *L, int B, int Tq, int Tk)
{
    attn_attention_desc d;
    attn_float *buf[ATTN__LAYER_BUFS];
    if (!attn__layer_sizes_ok(__func__, L, B, Tq, Tk)) return 0;
    attn__layer_desc(L, B, Tq, Tk, &d);
    return attn__layer_work_map(L, &d, NULL, buf);
}

/* RoPE rotates pairs within each (sub-)head: dk must be a multiple of this. */
static int attn__rope_unit(const attn_layer *L)
{
    return attn__flags(L->att.kind) & ATTN_KF_SUBHEADS ? 4 : 2;
}

/* The RoPE tables for the layer's q, k rows [Tk, dk / 2]: differential attention rotates each
   sub-head of width dk / 2 on its own, so the table of width dk / 2 is repeated. */
static void attn__layer_rope_tables(const attn_layer *L, attn_float *cosv, attn_float *sinv, int Tk,
                                    int offset)
{
    int dk = L->att.dk, sub = attn__flags(L->att.kind) & ATTN_KF_SUBHEADS ? dk / 2 : dk, t, i;
    attn_rope_tables(cosv, sinv, Tk, sub, offset, L->rope_theta > 0 ? L->rope_theta : 10000);
    for (t = Tk - 1; sub < dk && t >= 0; t--) /* [Tk, sub / 2] -> [Tk, dk / 2], back to front */
        for (i = dk / 2 - 1; i >= 0; i--) {
            cosv[(size_t)t * (dk / 2) + i] = cosv[(size_t)t * (sub / 2) + i % (sub / 2)];
            sinv[(size_t)t * (dk / 2) + i] = sinv[(size_t)t * (sub / 2) + i % (sub / 2)];
        }
}

static attn_status attn__layer_check(const char *fn, const attn_layer *L, const attn_float *x,
                                     const attn_float *m, int B, int Tq, int Tk, size_t work_bytes)
{
    attn_attention_desc d;
    if (!L || !x) return attn__fail(ATTN_ERR_ARG, "%s: the layer or x is NULL", fn);
    if (!L->Wq || !L->Wk || !L->Wv || !L->Wo)
        return attn__fail(ATTN_ERR_ARG, "%s: Wq, Wk, Wv and Wo must be set", fn);
    if (L->C < 1 || L->Cout < 1)
        return attn__fail(ATTN_ERR_SHAPE, "%s: C = %d, Cout = %d must be >= 1", fn, L->C, L->Cout);
    if (!m && Tk != Tq)
        return attn__fail(ATTN_ERR_SHAPE, "%s: self-attention (m = NULL) needs Tk = Tq, got %d and %d", fn,
                          Tk, Tq);
    if (L->rope && (m || L->att.dk % attn__rope_unit(L)))
        return attn__fail(ATTN_ERR_ARG, "%s: RoPE needs self-attention and dk (%d) a multiple of %d", fn,
                          L->att.dk, attn__rope_unit(L));
    if ((L->Wqg || L->Wkg || L->Wvg) &&
        (!L->Wqg || !L->Wkg || !L->Wvg || m || L->att.causal || L->rope || !L->att.global || L->att.mod))
        return attn__fail(ATTN_ERR_ARG,
                          "%s: global projections need Wqg, Wkg and Wvg, global tokens, self-attention, no "
                          "causal flag, RoPE or modifiers",
                          fn);
    if (!L->qnorm != !L->knorm || (L->qnorm && L->Wqg))
        return attn__fail(ATTN_ERR_ARG, "%s: QK-norm needs qnorm and knorm, and no global projections", fn);
    if (L->kproj < 0 || ((L->kproj > 0 || L->att.kv_heads) && L->Wqg) || (L->kproj > 0 && L->att.kv_heads))
        return attn__fail(ATTN_ERR_ARG,
                          "%s: kproj = %d must be >= 0; Linformer, grouped-query attention and global "
                          "projections do not combine",
                          fn, L->kproj);
    attn__layer_desc(L, B, Tq, Tk, &d);
    ATTN__TRY(attn__attention_check(fn, &d, (size_t)-1));
    if (L->kproj > 0) ATTN__TRY(attn__linformer_check(fn, &d, L->kproj, L->n_max, L->E, L->F, (size_t)-1));
    if (work_bytes < attn_layer_work_bytes(L, B, Tq, Tk))
        return attn__fail(ATTN_ERR_ARG, "%s: work has %lu bytes, attn_layer_work_bytes() asks for %lu", fn,
                          (unsigned long)work_bytes, (unsigned long)attn_layer_work_bytes(L, B, Tq, Tk));
    return ATTN_OK;
}

/* The global rows of src [N, T, w] gathered into dst [N, ng, w] (T > 0), or with T < 0 those of
   src [N, ng, w] written (add = 0) or added (add = 1) into rows of dst [N, -T, w]. */
static void attn__layer_rows(const unsigned char *global, attn_float *dst, const attn_float *src, int N,
                             int T, int ng, int w, int add)
{
    int n, t, k, gather = T > 0, Tf = gather ? T : -T;
    for (n = 0; n < N; n++)
        for (k = 0, t = 0; t < Tf; t++) {
            size_t full = ((size_t)n * Tf + t) * w, part = ((size_t)n * ng + k) * w;
            if (!global[t]) continue;
            k++;
            if (gather) memcpy(dst + part, src + full, sizeof(attn_float) * (size_t)w);
            else if (add) attn_axpy((size_t)w, 1, src + part, dst + full);
            else memcpy(dst + full, src + part, sizeof(attn_float) * (size_t)w);
        }
}

/* Self-attention's three projections side by side in G [B T, nw]: forward G = x [Wq; Wk; Wv]^T +
   [bq; bk; bv], one product per projection into its columns (the weights read in place), split into
   q, k, v [B, H, T, d]; backward from dq, dk, dv, merged into G, as one product each way through the
   weights stacked, Wc = [Wq; Wk; Wv] [nw, C] in wc: dx += G Wc, [dWq; dWk; dWv] += G^T x, db += the
   column sums of G (x is read once and dx read and written once). */
static void attn__layer_qkv_stack(const attn_layer *L, const attn__qkv *q, attn_float *wc)
{
    const attn_float *W[3] = {L->Wq, L->Wk, L->Wv};
    int j;
    for (j = 0; j < 3; j++) memcpy(wc + (size_t)q->off[j] * L->C, W[j], sizeof(attn_float) * q->w[j] * L->C);
}

static void attn__layer_qkv_forward(const attn_layer *L, attn_float *const qkv[3], const attn_float *x,
                                    attn_float *G, int B, int T)
{
    attn__qkv q = attn__layer_qkv(L);
    const attn_float *W[3] = {L->Wq, L->Wk, L->Wv}, *P[3] = {L->Pq, L->Pk, L->Pv};
    const attn_float *bias[3] = {L->bq, L->bk, L->bv};
    int j;
    for (j = 0; j < 3; j++)
        attn__linear_p(G + q.off[j], (size_t)q.nw, x, W[j], P[j], bias[j], B * T, L->C, q.w[j]);
    for (j = 0; j < 3; j++)
        attn__heads_at(qkv[j], G + q.off[j], B, T, q.heads[j], q.dims[j], 1, (size_t)q.nw);
}

static void attn__layer_qkv_backward(const attn_layer *L, const attn_layer_grads *g, attn_float *dx,
                                     const attn_float *const dqkv[3], const attn_float *x, attn_float *G,
                                     attn_float *wc, int B, int T)
{
    attn__qkv q = attn__layer_qkv(L);
    attn_float *dW[3] = {g->dWq, g->dWk, g->dWv}, *db[3] = {g->dbq, g->dbk, g->dbv};
    int j, N = B * T, n;
    for (j = 0; j < 3; j++)
        attn__heads_at(G + q.off[j], dqkv[j], B, T, q.heads[j], q.dims[j], 0, (size_t)q.nw);
    if (dx) {
        attn__layer_qkv_stack(L, &q, wc);
        attn_gemm(0, 0, N, L->C, q.nw, 1, G, q.nw, wc, L->C, 1, dx, L->C);
    }
    if (dW[0] || dW[1] || dW[2]) {
        attn_gemm(1, 0, q.nw, L->C, N, 1, G, q.nw, x, L->C, 0, wc, L->C);
        for (j = 0; j < 3; j++)
            if (dW[j]) attn_axpy((size_t)q.w[j] * L->C, 1, wc + (size_t)q.off[j] * L->C, dW[j]);
    }
    for (j = 0; j < 3; j++)
        for (n = 0; db[j] && n < N; n++) attn_axpy((size_t)q.w[j], 1, G + (size_t)n * q.nw + q.off[j], db[j]);
}

ATTNDEF attn_status attn_layer_forward(const attn_layer *L, attn_float *y, attn_float *cache,
                                       size_t cache_floats, const attn_float *x, const attn_float *m, int B,
                                       int Tq, int Tk, void *work, size_t work_bytes)
{
    attn_attention_desc d, g;
    attn__layer_cache c;
    attn_float *b[ATTN__LAYER_BUFS], *buf;
    int H, KH, dk, dv;
    ATTN__TRY(attn__layer_check(__func__, L, x, m, B, Tq, Tk, work_bytes));
    ATTN__NEED(y); ATTN__NEED(cache); ATTN__NEED(work);
    if (cache_floats != ATTN__CACHE_OWN) /* a model's own layout is not measured twice */
        ATTN__TRY(attn__cache_ok(__func__, cache_floats, attn_layer_cache_floats(L, B, Tq, Tk),
                                 "attn_layer_cache_floats"));
    attn__layer_desc(L, B, Tq, Tk, &d);
    H = d.H; KH = d.kv_heads ? d.kv_heads : H; dk = d.dk; dv = d.dv;
    attn__layer_cache_map(L, B, Tq, Tk, cache, &c);
    attn__layer_work_map(L, &d, work, b);
    buf = b[0];
    /* q, k, v = projections, heads split out: [B, T, H d] -> [B, H, T, d] */
    if (!m) {
        attn_float *qkv[3];
        qkv[0] = c.Q; qkv[1] = c.K; qkv[2] = c.V;
        attn__layer_qkv_forward(L, qkv, x, b[6], B, Tq);
    } else {
        attn__linear_p(buf, (size_t)H * dk, x, L->Wq, L->Pq, L->bq, B * Tq, L->C, H * dk);
        attn__heads(c.Q, buf, B, Tq, H, dk, 1);
        attn__linear_p(buf, (size_t)KH * dk, m, L->Wk, L->Pk, L->bk, B * Tk, L->C, KH * dk);
        attn__heads(c.K, buf, B, Tk, KH, dk, 1);
        attn__linear_p(buf, (size_t)KH * dv, m, L->Wv, L->Pv, L->bv, B * Tk, L->C, KH * dv);
        attn__heads(c.V, buf, B, Tk, KH, dv, 1);
    }
    if (!m) m = x;
    if (L->qnorm) { /* each head's q, k rows RMS-normalised and scaled; the rows before kept */
        memcpy(c.Qr, c.Q, sizeof(attn_float) * B * H * Tq * dk);
        memcpy(c.Kr, c.K, sizeof(attn_float) * B * KH * Tk * dk);
        attn_rmsnorm_forward(c.Q, c.qrstd, c.Qr, L->qnorm, B * H * Tq, dk, ATTN_QK_NORM_EPS);
        attn_rmsnorm_forward(c.K, c.krstd, c.Kr, L->knorm, B * KH * Tk, dk, ATTN_QK_NORM_EPS);
    }
    if (L->rope) {
        attn__layer_rope_tables(L, c.cosv, c.sinv, Tk, 0);
        attn_rope_forward(c.Q, c.Q, c.cosv, c.sinv, B * H, Tq, dk);
        attn_rope_forward(c.K, c.K, c.cosv, c.sinv, B * KH, Tk, dk);
    }
    if (L->kproj > 0)
        ATTN__TRY(attn_linformer_forward(&d, L->kproj, L->n_max, L->E, L->F, c.O, c.stats, ATTN__CACHE_OWN,
                                         c.Q, c.K, c.V, work, attn__layer_att_work(L, &d)));
    else
        ATTN__TRY(attn_attention_forward(&d, c.O, c.stats, NULL, c.Q, c.K, c.V, work,
                                         attn_attention_workspace(&d)));
    attn__layer_global_desc(L, &d, &g);
    if (g.Tq) { /* the global rows again, with their own projections over every key */
        attn_float *xg = b[1];
        attn__layer_rows(L->att.global, xg, x, B, Tq, g.Tq, L->C, 0);
        attn_linear_forward(buf, xg, L->Wqg, L->bqg, B * g.Tq, L->C, H * dk);
        attn__heads(c.Qg, buf, B, g.Tq, H, dk, 1);
        attn_linear_forward(buf, x, L->Wkg, L->bkg, B * Tk, L->C, H * dk);
        attn__heads(c.Kg, buf, B, Tk, H, dk, 1);
        attn_linear_forward(buf, x, L->Wvg, L->bvg, B * Tk, L->C, H * dv);
        attn__heads(c.Vg, buf, B, Tk, H, dv, 1);
        ATTN__TRY(attn_attention_forward(&g, c.Og, c.statsg, NULL, c.Qg, c.Kg, c.Vg, work,
                                         attn__layer_att_work(L, &d)));
        attn__layer_rows(L->att.global, c.O, c.Og, B * H, -Tq, g.Tq, dv, 0);
    }
    attn__heads(c.Ocat, c.O, B, Tq, H, dv, 0);
    attn__linear_p(y, (size_t)L->Cout, c.Ocat, L->Wo, L->Po, L->bo, B * Tq, H * dv, L->Cout);
    return ATTN_OK;
}

/* The attention's gradients for the layer's backward pass: dQ, dK, dV and dbias given, the kind's own
   parameters' from the layer's. */
static void attn__layer_att_grads(attn_attention_grads *ag, const attn_layer_grads *g, attn_float *dQ,
                                  attn_float *dK, attn_float *dV, attn_float *dbias)
{
    ag->dQ = dQ; ag->dK = dK; ag->dV = dV; ag->dbias = dbias;
    ag->dlambda = g->dlambda; ag->dgain = g->dgain; ag->dw2 = g->dw2;
}

ATTNDEF attn_status attn_layer_backward(const attn_layer *L, attn_float *dx, attn_float *dm,
                                        const attn_layer_grads *g, const attn_float *dy, const attn_float *x,
                                        const attn_float *m, const attn_float *cache, size_t cache_floats,
                                        int B, int Tq, int Tk, void *work, size_t work_bytes)
{
    static const attn_layer_grads none = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                          NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    attn_attention_grads ag;
    attn_attention_desc d, gd;
    attn__layer_cache c;
    attn_float *b[ATTN__LAYER_BUFS], *b0, *b1, *b2, *b3;
    int H, KH, dk, dv, self = m == NULL;
    size_t nq, nk, nv;
    ATTN__TRY(attn__layer_check(__func__, L, x, m, B, Tq, Tk, work_bytes));
    ATTN__NEED(dy); ATTN__NEED(cache); ATTN__NEED(work);
    if (cache_floats != ATTN__CACHE_OWN) /* a model's own layout is not measured twice */
        ATTN__TRY(attn__cache_ok(__func__, cache_floats, attn_layer_cache_floats(L, B, Tq, Tk),
                                 "attn_layer_cache_floats"));
    if (!g) g = &none;
    attn__layer_desc(L, B, Tq, Tk, &d);
    H = d.H; KH = d.kv_heads ? d.kv_heads : H; dk = d.dk; dv = d.dv;
    nq = (size_t)B * H * Tq * dk; nk = (size_t)B * KH * Tk * dk; nv = (size_t)B * KH * Tk * dv;
    attn__layer_cache_map(L, B, Tq, Tk, attn__unconst(cache), &c);
    attn__layer_work_map(L, &d, work, b);
    b0 = b[0]; b1 = b[1]; b2 = b[2]; b3 = b[3];
    if (self) { m = x; dm = dx; }
    /* y = Ocat Wo^T + bo  =>  dOcat = dy Wo (b0), dWo, dbo; dO [B, H, Tq, dv] in b1 */
    attn__linear_back(b0, g->dWo, g->dbo, dy, c.Ocat, L->Wo, B * Tq, H * dv, L->Cout, 0);
    attn__heads(b1, b0, B, Tq, H, dv, 1);
    attn__layer_global_desc(L, &d, &gd);
    if (gd.Tq) { /* the global rows: their dO (b2) leaves dO (b1); dQg, dKg, dVg in b0, b3, b4 */
        attn_float *b4 = b[4], *b5 = b[5];
        size_t ng = (size_t)gd.Tq;
        attn__layer_rows(L->att.global, b2, b1, B * H, Tq, gd.Tq, dv, 0);
        memset(b0, 0, sizeof(attn_float) * B * H * ng * ATTN__MAX(dk, dv));
        attn__layer_rows(L->att.global, b1, b0, B * H, -Tq, gd.Tq, dv, 0);
        memset(b3, 0, sizeof(attn_float) * nk);
        memset(b4, 0, sizeof(attn_float) * nv);
        attn__layer_att_grads(&ag, g, b0, b3, b4, NULL);
        ATTN__TRY(attn_attention_backward(&gd, &ag, b2, c.Qg, c.Kg, c.Vg, c.Og, c.statsg, work,
                                          attn__layer_att_work(L, &d)));
        attn__layer_rows(L->att.global, b5, x, B, Tq, gd.Tq, L->C, 0); /* x of the global rows */
        attn__heads(b2, b0, B, gd.Tq, H, dk, 0);
        attn__linear_back(b0, g->dWqg, g->dbqg, b2, b5, L->Wqg, B * gd.Tq, L->C, H * dk, 0);
        if (dx) attn__layer_rows(L->att.global, dx, b0, B, -Tq, gd.Tq, L->C, 1);
        attn__heads(b2, b3, B, Tk, H, dk, 0);
        attn_linear_backward(dx, g->dWkg, g->dbkg, b2, x, L->Wkg, B * Tk, L->C, H * dk);
        attn__heads(b2, b4, B, Tk, H, dv, 0);
        attn_linear_backward(dx, g->dWvg, g->dbvg, b2, x, L->Wvg, B * Tk, L->C, H * dv);
    }
    /* the attention: dQ (b0), dK (b2), dV (b3) */
    memset(b0, 0, sizeof(attn_float) * nq);
    memset(b2, 0, sizeof(attn_float) * nk);
    memset(b3, 0, sizeof(attn_float) * nv);
    attn__layer_att_grads(&ag, g, b0, b2, b3, g->dbias);
    if (L->kproj > 0)
        ATTN__TRY(attn_linformer_backward(&d, L->kproj, L->n_max, L->E, L->F, g->dE, g->dF, b0, b2, b3, b1,
                                          c.Q, c.K, c.V, c.O, c.stats, ATTN__CACHE_OWN, work,
                                          attn__layer_att_work(L, &d)));
    else
        ATTN__TRY(attn_attention_backward(&d, &ag, b1, c.Q, c.K, c.V, c.O, c.stats, work,
                                          attn_attention_workspace(&d)));
    if (L->rope) { /* q = R q_lin  =>  dq_lin = R^T dq, in place (each pair is read before it is written) */
        ATTN__ISA(rope)(b0, b0, c.cosv, c.sinv, B * H, Tq, dk, -1, 0);
        ATTN__ISA(rope)(b2, b2, c.cosv, c.sinv, B * KH, Tk, dk, -1, 0);
    }
    if (L->qnorm) { /* through QK-norm: dq (b1, then b0), dk (b4, then b2), the gains' gradients */
        memset(b1, 0, sizeof(attn_float) * nq);
        memset(b[4], 0, sizeof(attn_float) * nk);
        attn_rmsnorm_backward(b1, g->dqnorm, b0, c.Qr, L->qnorm, c.qrstd, B * H * Tq, dk);
        attn_rmsnorm_backward(b[4], g->dknorm, b2, c.Kr, L->knorm, c.krstd, B * KH * Tk, dk);
        memcpy(b0, b1, sizeof(attn_float) * nq);
        memcpy(b2, b[4], sizeof(attn_float) * nk);
    }
    /* through the projections: heads merged back, then the linear backward of each */
    if (self) {
        const attn_float *dqkv[3];
        dqkv[0] = b0; dqkv[1] = b2; dqkv[2] = b3;
        attn__layer_qkv_backward(L, g, dx, dqkv, x, b[6], b[7], B, Tq);
        return ATTN_OK;
    }
    attn__heads(b1, b0, B, Tq, H, dk, 0);
    attn_linear_backward(dx, g->dWq, g->dbq, b1, x, L->Wq, B * Tq, L->C, H * dk);
    attn__heads(b1, b2, B, Tk, KH, dk, 0);
    attn_linear_backward(dm, g->dWk, g->dbk, b1, m, L->Wk, B * Tk, L->C, KH * dk);
    attn__heads(b1, b3, B, Tk, KH, dv, 0);
    return attn_linear_backward(dm, g->dWv, g->dbv, b1, m, L->Wv, B * Tk, L->C, KH * dv);
}

/* ---- step-wise attention over a cache ---- */

/* A step's work: the projections' scratch q [n, max(H dk, H dv)], the heads Q [H n dk], the new
   keys and values kn [KH n dk], vn [KH n dv], O [H n dv], Ocat [n H dv], the stats, RoPE's tables
   [n dk / 2] each, phi's scratch [2 F], QK-norm's rstd [H n] and the attention's workspace. */
typedef struct {
    attn_float *q, *Q, *kn, *vn, *O, *ocat, *stats, *cosv, *sinv, *phi, *rstd;
    void *att;
    size_t att_bytes;
} attn__step_work;

/* The feature row of a recurrent state's kind (rows = 0), NULL for a cache of rows. */
static const attn_feature_row *attn__step_state(const attn_layer *L, int rows)
{
    return rows ? NULL : attn_kind_get(L->att.kind)->feature;
}

static size_t attn__step_map(const attn_layer *L, int n, int rows, void *work, attn__step_work *w)
{
    const attn_attention_desc *a = &L->att;
    attn_attention_desc d;
    attn_arena ar;
    size_t H = (size_t)a->H, KH = (size_t)(a->kv_heads ? a->kv_heads : a->H), dk = (size_t)a->dk,
           dv = (size_t)a->dv, F = rows ? 0 : (size_t)attn__step_state(L, rows)->features(a->dk);
    attn__layer_desc(L, 1, n, ATTN__MAX(rows, n), &d);
    d.kv_rows = rows;
    d.dropout = 0;
    attn__arena_plan(&ar, work);
    w->q = attn__arena_floats(&ar, (size_t)n * H * ATTN__MAX(dk, dv));
    w->Q = attn__arena_floats(&ar, (size_t)n * H * dk);
    w->kn = attn__arena_floats(&ar, (size_t)n * KH * dk);
    w->vn = attn__arena_floats(&ar, (size_t)n * KH * dv);
    w->O = attn__arena_floats(&ar, (size_t)n * H * dv);
    w->ocat = attn__arena_floats(&ar, (size_t)n * H * dv);
    w->stats = attn__arena_floats(&ar, rows ? attn_attention_stats_floats(&d) : 0);
    w->cosv = attn__arena_floats(&ar, L->rope ? (size_t)n * (dk / 2) : 0);
    w->sinv = attn__arena_floats(&ar, L->rope ? (size_t)n * (dk / 2) : 0);
    w->phi = attn__arena_floats(&ar, 2 * F);
    w->rstd = attn__arena_floats(&ar, L->qnorm ? (size_t)n * H : 0);
    w->att_bytes = rows ? attn_attention_workspace(&d) : 0;
    w->att = attn__arena_take(&ar, w->att_bytes);
    return ar.used + ATTN_ALIGN;
}

/* The checks of the step's calls (n >= 1 new rows, or n = 0 for the size of the cache alone). */
static attn_status attn__step_check(const char *fn, const attn_layer *L, int n, int rows)
{
    attn_attention_desc d;
    const attn_kind_info *r;
    ATTN__NEED(L);
    if (n < 0 || rows < 0 || (rows && n > rows))
        return attn__fail(ATTN_ERR_SHAPE, "%s: n = %d and rows = %d must be >= 0 and n <= rows", fn, n, rows);
    if (!L->Wq || !L->Wk || !L->Wv || !L->Wo || L->C < 1 || L->Cout < 1)
        return attn__fail(ATTN_ERR_ARG, "%s: Wq, Wk, Wv, Wo and C, Cout >= 1 must be set", fn);
    attn__layer_desc(L, 1, ATTN__MAX(n, 1), ATTN__MAX(rows, ATTN__MAX(n, 1)), &d);
    d.dropout = 0;
    ATTN__TRY(attn__attention_check(fn, &d, (size_t)-1));
    r = attn_kind_get(d.kind);
    if (L->kproj || L->Wqg || L->Wkg || L->Wvg || d.block || !L->qnorm != !L->knorm)
        return attn__fail(ATTN_ERR_ARG, "%s: Linformer, global projections and block layouts have no step "
                          "(and QK-norm needs qnorm and knorm)", fn);
    if (r->score && r->score->offset)
        return attn__fail(ATTN_ERR_ARG,
                          "%s: %s shifts its scores by the number of keys of a call, so no step "
                          "equals the full pass",
                          fn, r->name);
    if (!rows && !(r->flags & ATTN_KF_LINEAR_TIME))
        return attn__fail(ATTN_ERR_ARG,
                          "%s: rows = 0 (a recurrent state) is for the linear-time kinds, not %s", fn,
                          r->name);
    if (L->rope && L->att.dk % attn__rope_unit(L))
        return attn__fail(ATTN_ERR_ARG, "%s: RoPE needs dk (%d) a multiple of %d", fn, L->att.dk,
                          attn__rope_unit(L));
    return ATTN_OK;
}

ATTNDEF size_t attn_layer_kv_floats(const attn_layer *L, int rows, size_t *v_floats)
{
    const attn_attention_desc *a;
    size_t KH, F;
    if (attn__step_check(__func__, L, 0, rows) != ATTN_OK) return 0;
    a = &L->att;
    KH = (size_t)(a->kv_heads ? a->kv_heads : a->H);
    F = rows ? 0 : (size_t)attn__step_state(L, rows)->features(a->dk);
    if (v_floats) *v_floats = rows ? KH * rows * a->dv : (size_t)a->H * F;
    return rows ? KH * rows * a->dk : (size_t)a->H * F * a->dv;
}

ATTNDEF size_t attn_layer_step_work_bytes(const attn_layer *L, int n, int rows)
{
    attn__step_work w;
    if (attn__step_check(__func__, L, n, rows) != ATTN_OK) return 0;
    if (n < 1) return attn__fail(ATTN_ERR_SHAPE, "%s: n = %d must be >= 1", __func__, n), 0;
    return attn__step_map(L, n, rows, NULL, &w);
}

/* The checks of a call with n rows over kv, and its work mapped. */
static attn_status attn__step_begin(const char *fn, const attn_layer *L, const attn_layer_kv *kv, int n,
                                    int pos, int add, void *work, size_t work_bytes, attn__step_work *w)
{
    size_t need;
    ATTN__NEED(kv); ATTN__NEED(work);
    ATTN__TRY(attn__step_check(fn, L, n, kv->rows));
    if (n < 1 || pos < 0 || kv->held < 0 || (kv->rows && kv->held + (add ? n : 0) > kv->rows) ||
        (!add && kv->held < 1) || !kv->k || !kv->v)
        return attn__fail(ATTN_ERR_SHAPE, "%s: %d rows at position %d%s a cache holding %d of %d rows", fn, n,
                          pos, add ? " added to" : " over", kv->held, kv->rows);
    if ((need = attn__step_map(L, n, kv->rows, NULL, w)) > work_bytes) /* checked above: sized once */
        return attn__fail(ATTN_ERR_ARG, "%s: work has %lu bytes, attn_layer_step_work_bytes() asks for %lu",
                          fn, (unsigned long)work_bytes, (unsigned long)need);
    attn__step_map(L, n, kv->rows, work, w);
    if (L->rope) attn__layer_rope_tables(L, w->cosv, w->sinv, n, pos); /* the rows' positions */
    return ATTN_OK;
}

/* Keys and values of m [n, C] into w->kn, w->vn [KH, n, d], RoPE by w's tables (positions pos ..);
   with a cache of rows also written to its rows held .. held + n - 1. */
static void attn__step_keys(const attn_layer *L, const attn_layer_kv *kv, const attn_float *m, int n,
                            const attn__step_work *w)
{
    int KH = L->att.kv_heads ? L->att.kv_heads : L->att.H, dk = L->att.dk, dv = L->att.dv, h;
    attn__linear_p(w->q, (size_t)KH * dk, m, L->Wk, L->Pk, L->bk, n, L->C, KH * dk);
    attn__heads(w->kn, w->q, 1, n, KH, dk, 1);
    attn__linear_p(w->q, (size_t)KH * dv, m, L->Wv, L->Pv, L->bv, n, L->C, KH * dv);
    attn__heads(w->vn, w->q, 1, n, KH, dv, 1);
    if (L->knorm) attn_rmsnorm_forward(w->kn, w->rstd, w->kn, L->knorm, KH * n, dk, ATTN_QK_NORM_EPS);
    if (L->rope) attn_rope_forward(w->kn, w->kn, w->cosv, w->sinv, KH, n, dk);
    for (h = 0; kv->rows && h < KH; h++) {
        memcpy(kv->k + ((size_t)h * kv->rows + kv->held) * dk, w->kn + (size_t)h * n * dk,
               sizeof(attn_float) * n * dk);
        memcpy(kv->v + ((size_t)h * kv->rows + kv->held) * dv, w->vn + (size_t)h * n * dv,
               sizeof(attn_float) * n * dv);
    }
}

/* Token t (0 .. n - 1) of the step in head h of a recurrent state: folded in (fold, unless its key
   is masked: key_mask[held + t]) and read (read) by the query of the same position. */
static void attn__step_recur(const attn_layer *L, const attn_layer_kv *kv, const attn__step_work *w, int n,
                             int fold, int read)
{
    const attn_feature_row *fr = attn__step_state(L, 0);
    int H = L->att.H, dk = L->att.dk, dv = L->att.dv, F = fr->features(dk), h, t;
    for (h = 0; h < H; h++) {
        attn_float *S = kv->k + (size_t)h * F * dv, *z = kv->v + (size_t)h * F;
        for (t = 0; t < n; t++) {
            if (fold && (!L->att.key_mask || L->att.key_mask[kv->held + t]))
                attn__kernel_fold(fr, dk, dv, w->kn + ((size_t)h * n + t) * dk,
                                  w->vn + ((size_t)h * n + t) * dv, S, z, w->phi);
            if (read)
                attn__kernel_read(fr, dk, dv, w->Q + ((size_t)h * n + t) * dk, S, z, w->phi + F,
                                  w->O + ((size_t)h * n + t) * dv);
        }
    }
}

ATTNDEF attn_status attn_layer_kv_add(const attn_layer *L, attn_layer_kv *kv, const attn_float *m, int n,
                                      int pos, void *work, size_t work_bytes)
{
    attn__step_work w;
    ATTN__NEED(m);
    ATTN__TRY(attn__step_begin(__func__, L, kv, n, pos, 1, work, work_bytes, &w));
    attn__step_keys(L, kv, m, n, &w);
    if (!kv->rows) attn__step_recur(L, kv, &w, n, 1, 0);
    kv->held += n;
    return ATTN_OK;
}

ATTNDEF attn_status attn_layer_step(const attn_layer *L, attn_layer_kv *kv, attn_float *y,
                                    const attn_float *x, int n, int pos, int add, void *work,
                                    size_t work_bytes)
{
    attn__step_work w;
    attn_attention_desc d;
    int H = L ? L->att.H : 0, dk = L ? L->att.dk : 0, dv = L ? L->att.dv : 0;
    ATTN__NEED(y); ATTN__NEED(x);
    ATTN__TRY(attn__step_begin(__func__, L, kv, n, pos, add, work, work_bytes, &w));
    attn__linear_p(w.q, (size_t)H * dk, x, L->Wq, L->Pq, L->bq, n, L->C, H * dk); /* -> Q [H, n, dk] */
    attn__heads(w.Q, w.q, 1, n, H, dk, 1);
    if (L->qnorm) attn_rmsnorm_forward(w.Q, w.rstd, w.Q, L->qnorm, H * n, dk, ATTN_QK_NORM_EPS);
    if (L->rope) attn_rope_forward(w.Q, w.Q, w.cosv, w.sinv, H, n, dk);
    if (add) attn__step_keys(L, kv, x, n, &w);
    if (kv->rows) { /* one call, every head, the keys read in place */
        attn__layer_desc(L, 1, n, kv->held + (add ? n : 0), &d);
        d.kv_rows = kv->rows;
        d.dropout = 0;
        ATTN__TRY(attn_attention_forward(&d, w.O, w.stats, NULL, w.Q, kv->k, kv->v, w.att, w.att_bytes));
    } else
        attn__step_recur(L, kv, &w, n, add, 1);
    if (add) kv->held += n;
    attn__heads(w.ocat, w.O, 1, n, H, dv, 0);
    attn__linear_p(y, (size_t)L->Cout, w.ocat, L->Wo, L->Po, L->bo, n, H * dv, L->Cout);
    return ATTN_OK;
}

/* ---- 7. optimizers ---------------------------------------------------------------------------- */

/* A hyper-parameter that must be finite and in [lo, hi) (hi_open) or [lo, hi]. */
static int attn__in_range(double x, double lo, double hi, int hi_open)
{
    return attn__finite(x) && x >= lo && (hi_open ? x < hi : x <= hi);
}

ATTNDEF attn_status attn_sgd_step(attn_params *p, attn_float *velocity, attn_float lr, attn_float momentum,
                                  long step)
{
    ATTN__NEED(p); ATTN__NEED(velocity);
    if (!attn__in_range(lr, 0, HUGE_VAL, 0) || !attn__in_range(momentum, 0, HUGE_VAL, 0) || step < 0)
        return attn__fail(ATTN_ERR_ARG,
                          "attn_sgd_step: lr = %g and momentum = %g must be finite and >= 0, step = %ld >= 0",
                          (double)lr, (double)momentum, step);
    ATTN__ISA(sgd_apply)(p->data, velocity, p->gdata, p->total, lr, step == 0 ? 0 : momentum);
    return ATTN_OK;
}

ATTNDEF attn_status attn_adamw_step(attn_params *p, attn_float *m, attn_float *v, long t, attn_float lr,
                                    attn_float beta1, attn_float beta2, attn_float eps, attn_float wd)
{
    double c1, c2;
    int k;
    ATTN__NEED(p); ATTN__NEED(m); ATTN__NEED(v);
    if (t < 1 || !attn__in_range(lr, 0, HUGE_VAL, 0) || !attn__in_range(wd, 0, HUGE_VAL, 0) ||
        !attn__in_range(beta1, 0, 1, 1) || !attn__in_range(beta2, 0, 1, 1) ||
        !attn__in_range(eps, 0, HUGE_VAL, 0) || !(eps > 0))
        return attn__fail(
            ATTN_ERR_ARG,
            "attn_adamw_step: t = %ld must be >= 1, lr = %g and wd = %g finite and >= 0, beta1 = %g and "
            "beta2 = %g in [0, 1), eps = %g finite and > 0",
            t, (double)lr, (double)wd, (double)beta1, (double)beta2, (double)eps);
    c1 = 1 - pow((double)beta1, (double)t); c2 = 1 - pow((double)beta2, (double)t);
    for (k = 0; k < p->count; k++) {
        size_t o = p->offset[k];
        ATTN__ISA(adamw_block)(p->offset[k + 1] - o, p->data + o, p->gdata + o, m + o, v + o, lr, beta1,
                               beta2, (attn_float)(1 / c1), (attn_float)(1 / c2), eps, p->decay[k] ? wd : 0);
    }
    return ATTN_OK;
}

/* Allocates the state of an optimizer for p (two blocks for AdamW, one for SGD), zeroed. */
static attn_status attn__optim_make(const char *fn, attn_optim *o, const attn_params *p, attn_optim_kind kind)
{
    size_t n = p->total * (kind == ATTN_OPTIM_ADAMW ? 2 : 1);
    attn_float *m;
    if (!p->total || n > (size_t)-1 / sizeof(attn_float))
        return attn__fail(ATTN_ERR_ARG, "%s: the parameters have no block", fn);
    if (!(m = (attn_float *)ATTN_MALLOC(sizeof(attn_float) * n)))
        return attn__fail(ATTN_ERR_NOMEM, "%s: no memory for %lu floats", fn, (unsigned long)n);
    memset(m, 0, sizeof(attn_float) * n);
    memset(o, 0, sizeof *o);
    o->kind = kind; o->total = p->total; o->m = m; o->v = kind == ATTN_OPTIM_ADAMW ? m + p->total : NULL;
    return ATTN_OK;
}

ATTNDEF attn_status attn_optim_sgd(attn_optim *o, const attn_params *p, double momentum)
{
    ATTN__NEED(o); ATTN__NEED(p);
    if (!attn__in_range(momentum, 0, HUGE_VAL, 0))
        return attn__fail(ATTN_ERR_ARG, "attn_optim_sgd: momentum = %g must be finite and >= 0", momentum);
    ATTN__TRY(attn__optim_make(__func__, o, p, ATTN_OPTIM_SGD));
    o->momentum = momentum;
    return ATTN_OK;
}

ATTNDEF attn_status attn_optim_adamw(attn_optim *o, const attn_params *p, double beta1, double beta2,
                                     double eps, double weight_decay)
{
    ATTN__NEED(o); ATTN__NEED(p);
    if (!attn__in_range(beta1, 0, 1, 1) || !attn__in_range(beta2, 0, 1, 1) ||
        !attn__in_range(eps, 0, HUGE_VAL, 0) || !(eps > 0) || !attn__in_range(weight_decay, 0, HUGE_VAL, 0))
        return attn__fail(
            ATTN_ERR_ARG,
            "attn_optim_adamw: beta1 = %g and beta2 = %g must be in [0, 1), eps = %g finite and > 0, "
            "weight_decay = %g finite and >= 0",
            beta1, beta2, eps, weight_decay);
    ATTN__TRY(attn__optim_make(__func__, o, p, ATTN_OPTIM_ADAMW));
    o->beta1 = beta1; o->beta2 = beta2; o->eps = eps; o->weight_decay = weight_decay;
    return ATTN_OK;
}

ATTNDEF attn_status attn_optim_step(attn_optim *o, attn_params *p, double lr)
{
    ATTN__NEED(o); ATTN__NEED(p); ATTN__NEED(o->m);
    if (p->total != o->total)
        return attn__fail(ATTN_ERR_SHAPE,
                          "attn_optim_step: the optimizer was made for %lu floats, the parameters have %lu",
                          (unsigned long)o->total, (unsigned long)p->total);
    ATTN__TRY(o->kind == ATTN_OPTIM_SGD
                  ? attn_sgd_step(p, o->m, (attn_float)lr, (attn_float)o->momentum, o->step)
                  : attn_adamw_step(p, o->m, o->v, o->step + 1, (attn_float)lr, (attn_float)o->beta1,
                                    (attn_float)o->beta2, (attn_float)o->eps, (attn_float)o->weight_decay));
    o->step++;
    return ATTN_OK;
}

ATTNDEF void attn_optim_free(attn_optim *o)
{
    if (!o) return;
    ATTN_FREE(o->m);
    memset(o, 0, sizeof *o);
}

ATTNDEF double attn_clip_grad_norm(attn_params *p, double max_norm)
{
    double s = 0, norm;
    size_t i;
    if (!p || !(max_norm > 0) || !attn__finite(max_norm))
        return attn__fail(ATTN_ERR_ARG,
                          "attn_clip_grad_norm: p is NULL or max_norm = %g is not finite and > 0", max_norm),
               -1;
    for (i = 0; i < p->total; i += 1024) { /* blocks summed in vectors, their sums in double */
        size_t j, n = ATTN__MIN(1024, p->total - i);
        attn_float b = attn_dot(n, p->gdata + i, p->gdata + i);
        if (b >= 1e-30f && b <= 1e30f) s += b;
        else /* under- or overflow (or NaN): the block again, in double */
            for (j = i; j < i + n; j++) s += (double)p->gdata[j] * p->gdata[j];
    }
    norm = sqrt(s);
    if (norm > max_norm) attn_scale(p->total, (attn_float)(max_norm / (norm + 1e-6)), p->gdata);
    return norm;
}

ATTNDEF attn_status attn_schedule_constant(attn_schedule *s, double lr)
{
    ATTN__NEED(s);
    if (!attn__in_range(lr, 0, HUGE_VAL, 0))
        return attn__fail(ATTN_ERR_ARG, "attn_schedule_constant: lr must be finite and >= 0");
    memset(s, 0, sizeof *s);
    s->kind = ATTN_SCHED_CONSTANT;
    s->lr = lr;
    return ATTN_OK;
}

ATTNDEF attn_status attn_schedule_step(attn_schedule *s, double lr, long every, double factor,
                                       long max_drops)
{
    ATTN__NEED(s);
    if (every < 1 || !(factor > 0) || !attn__finite(factor) || max_drops < 0)
        return attn__fail(
            ATTN_ERR_ARG,
            "attn_schedule_step: every = %ld must be >= 1, factor finite and > 0, max_drops = %ld >= 0",
            every, max_drops);
    ATTN__TRY(attn_schedule_constant(s, lr));
    s->kind = ATTN_SCHED_STEP;
    s->every = every;
    s->factor = factor;
    s->max_drops = max_drops;
    return ATTN_OK;
}

ATTNDEF attn_status attn_schedule_warmup_cosine(attn_schedule *s, double init_lr, double peak_lr,
                                                long warmup, long decay_steps, double end_lr)
{
    ATTN__NEED(s);
    if (warmup < 0 || decay_steps <= warmup)
        return attn__fail(ATTN_ERR_ARG,
                          "attn_schedule_warmup_cosine: need 0 <= warmup (%ld) < decay_steps (%ld)", warmup,
                          decay_steps);
    if (!attn__in_range(init_lr, 0, HUGE_VAL, 0) || !attn__in_range(end_lr, 0, HUGE_VAL, 0))
        return attn__fail(ATTN_ERR_ARG, "attn_schedule_warmup_cosine: rates must be finite and >= 0");
    ATTN__TRY(attn_schedule_constant(s, peak_lr));
    s->kind = ATTN_SCHED_WARMUP_COSINE;
    s->init_lr = init_lr;
    s->end_lr = end_lr;
    s->warmup = warmup;
    s->decay_steps = decay_steps;
    return ATTN_OK;
}

ATTNDEF double attn_schedule_lr(const attn_schedule *s, long t)
{
    if (!s) return attn__fail(ATTN_ERR_ARG, "%s: s is NULL", __func__), NAN;
    if (t < 0) t = 0;
    switch (s->kind) {
    case ATTN_SCHED_STEP: return s->lr * pow(s->factor, (double)ATTN__MIN(t / s->every, s->max_drops));
    case ATTN_SCHED_WARMUP_COSINE:
        if (t < s->warmup) /* optax linear_schedule(init, peak, W) */
            return (s->init_lr - s->lr) * (1 - (double)t / s->warmup) + s->lr;
        else { /* optax cosine_decay_schedule(peak, D, alpha = end / peak) at t - W */
            double D = (double)(s->decay_steps - s->warmup), c = ATTN__MIN((double)(t - s->warmup), D);
            double alpha = s->lr == 0 ? 0 : s->end_lr / s->lr;
            return s->lr * ((1 - alpha) * 0.5 * (1 + cos(3.141592653589793 * c / D)) + alpha);
        }
    default: return s->lr;
    }
}

/* ---- 8. models -------------------------------------------------------------------------------- */

#define ATTN__CIS_LN_EPS                                                                                     \
    ((attn_float)1e-5) /* both of the cisformer's layer norms (our default: the paper gives no scheme) */

static attn_status attn__cis_check(const char *fn, const attn_cisformer_config *c)
{
    if (!c) return attn__fail(ATTN_ERR_ARG, "%s: the configuration is NULL", fn);
    if (c->d < 2 || c->d > 4096 || c->ncon < 1 || c->ncon > 65536)
        return attn__fail(ATTN_ERR_SHAPE, "%s: d = %d must be in 2 .. 4096 and ncon = %d in 1 .. 65536", fn,
                          c->d, c->ncon);
    if (!attn_kind_get(c->kind) ||
        (attn__flags(c->kind) & (ATTN_KF_MIXES_HEADS | ATTN_KF_SUBHEADS | ATTN_KF_PARAMS)))
        return attn__fail(ATTN_ERR_ARG,
                          "%s: kind %d: the cisformer takes a one-head kind without parameters (softmax to "
                          "taylor, or yours)",
                          fn, (int)c->kind);
    if ((int)c->vec < 0 || c->vec > ATTN_CIS_LN_GAINS)
        return attn__fail(ATTN_ERR_ARG, "%s: unknown per-position vector choice %d", fn, (int)c->vec);
    if (!attn__finite(c->scale))
        return attn__fail(ATTN_ERR_ARG, "%s: scale = %g must be finite", fn, (double)c->scale);
    return ATTN_OK;
}

/* The eight parameter tensors of the cisformer in block order (the fields of attn_cisformer_tensors;
   the vector is named b, u or g in checkpoints). */
enum { ATTN__CIS_WQ, ATTN__CIS_WK, ATTN__CIS_WV, ATTN__CIS_W1, ATTN__CIS_W2, ATTN__CIS_VEC, ATTN__CIS_R,
       ATTN__CIS_RB, ATTN__CIS_TENSORS };
#define ATTN__CIS_T(f) ATTN__SLOT(attn_cisformer_tensors, f)
static const attn__slot attn__cis_slot[ATTN__CIS_TENSORS] = {
    ATTN__CIS_T(Wq), ATTN__CIS_T(Wk), ATTN__CIS_T(Wv),
    ATTN__CIS_T(W1), ATTN__CIS_T(W2), {"b", offsetof(attn_cisformer_tensors, vec), 0, 0, 0, {0, 0, 0}},
    ATTN__CIS_T(R),  ATTN__CIS_T(r)};

static void attn__cis_descs(const attn_cisformer_config *c, attn_param_desc *p)
{
    int d = c->d, n = c->ncon, i;
    const int shapes[ATTN__CIS_TENSORS][3] = {{n, d, d},     {n, d, d}, {n, d, d},     {n, 4 * d, d},
                                              {n, d, 4 * d}, {n, d, 0}, {d, n * d, 0}, {d, 0, 0}};
    const int ndims[ATTN__CIS_TENSORS] = {3, 3, 3, 3, 3, 2, 2, 1};
    /* the matrices' fan-in in units of d (-1: ncon d; 0: a vector, zeros or LN gains of 1) */
    static const int fan[ATTN__CIS_TENSORS] = {1, 1, 1, 1, 4, 0, -1, 0};
    for (i = 0; i < ATTN__CIS_TENSORS; i++) {
        memset(&p[i], 0, sizeof p[i]);
        p[i].name = attn__cis_slot[i].name;
        p[i].ndim = ndims[i];
        memcpy(p[i].shape, shapes[i], sizeof shapes[i]);
        p[i].decay = -1;
        p[i].init = !fan[i]           ? ATTN_PARAM_ZERO
                    : c->init_uniform ? ATTN_PARAM_FAN_UNIFORM
                                      : ATTN_PARAM_FAN_NORMAL;
        p[i].value = fan[i] < 0 ? (double)n * d : (double)fan[i] * d;
    }
    if (c->vec == ATTN_CIS_LN_BIAS) p[ATTN__CIS_VEC].name = "u";
    if (c->vec == ATTN_CIS_LN_GAINS) {
        p[ATTN__CIS_VEC].name = "g";
        p[ATTN__CIS_VEC].shape[1] = 2;
        p[ATTN__CIS_VEC].init = ATTN_PARAM_CONST;
        p[ATTN__CIS_VEC].value = 1;
    }
}

ATTNDEF attn_cisformer_config attn_cisformer_config_default(void)
{
    attn_cisformer_config c;
    memset(&c, 0, sizeof c);
    c.d = 16; c.ncon = 32; c.kind = ATTN_SOFTMAX; c.scale = 1; c.vec = ATTN_CIS_FFN_BIAS; c.init_uniform = 1;
    return c;
}

ATTNDEF size_t attn_cisformer_param_count(const attn_cisformer_config *cfg)
{
    size_t d, n;
    if (attn__cis_check(__func__, cfg) != ATTN_OK) return 0;
    d = (size_t)cfg->d; n = (size_t)cfg->ncon;
    return n * (12 * d * d + (cfg->vec == ATTN_CIS_LN_GAINS ? 2 : d)) + d;
}

/* The floats of a valid configuration's parameter block (with the alignment padding); 0 if invalid. */
/* The floats of fb bytes in the parameter block of c; 0 (error set) if c is invalid. */
static size_t attn__cis_block(const char *fn, const attn_cisformer_config *c, size_t fb)
{
    attn_param_desc pd[ATTN__CIS_TENSORS];
    if (attn__cis_check(fn, c) != ATTN_OK) return 0;
    attn__cis_descs(c, pd);
    return attn__block_floats(pd, ATTN__CIS_TENSORS, fb);
}

ATTNDEF size_t attn_cisformer_bytes(const attn_cisformer_config *cfg)
{
    attn_param_desc pd[ATTN__CIS_TENSORS];
    if (attn__cis_check(__func__, cfg) != ATTN_OK) return 0;
    attn__cis_descs(cfg, pd);
    return attn_params_bytes(pd, ATTN__CIS_TENSORS);
}

/* attn_cisformer_init, in mem [bytes] when mem is not NULL. */
static attn_status attn__cis_make(attn_cisformer *m, const attn_cisformer_config *cfg, attn_rng *rng,
                                  void *mem, size_t bytes)
{
    attn_param_desc pd[ATTN__CIS_TENSORS];
    attn_cisformer t; /* built here, copied to *m only when complete */
    ATTN__NEED(m); ATTN__NEED(rng);
    ATTN__TRY(attn__cis_check("attn_cisformer_init", cfg));
    attn__cis_descs(cfg, pd);
    memset(&t, 0, sizeof t);
    ATTN__TRY(attn__params_place(&t.p, pd, ATTN__CIS_TENSORS, mem, bytes));
    t.cfg = *cfg;
    attn_params_draw(&t.p, pd, ATTN__CIS_TENSORS, rng); /* the rules of attn__cis_descs */
    *m = t;
    return ATTN_OK;
}

ATTNDEF attn_status attn_cisformer_init(attn_cisformer *m, const attn_cisformer_config *cfg, attn_rng *rng)
{
    return attn__cis_make(m, cfg, rng, NULL, 0);
}

ATTNDEF attn_status attn_cisformer_init_in(attn_cisformer *m, const attn_cisformer_config *cfg, attn_rng *rng,
                                           void *mem, size_t bytes)
{
    ATTN__NEED(mem);
    return attn__cis_make(m, cfg, rng, mem, bytes);
}

ATTNDEF void attn_cisformer_free(attn_cisformer *m)
{
    if (m) attn_params_free(&m->p);
}

ATTNDEF attn_cisformer_tensors attn_cisformer_named(const attn_cisformer *m, int grad)
{
    static const short idx[ATTN__CIS_TENSORS] = {0, 1, 2, 3, 4, 5, 6, 7};
    attn_cisformer_tensors t;
    attn__name_tensors(__func__, &t, sizeof t, attn__cis_slot, idx, ATTN__CIS_TENSORS, m ? &m->p : NULL,
                       grad);
    return t;
}

/* The attention problem of nb windows: one head, causal, dk = dv = d. */
static void attn__cis_desc(const attn_cisformer *m, int nb, attn_attention_desc *a)
{
    memset(a, 0, sizeof *a);
    a->kind = m->cfg.kind; a->B = nb; a->H = 1; a->Tq = a->Tk = m->cfg.ncon; a->dk = a->dv = m->cfg.d;
    a->causal = 1; a->scale = m->cfg.scale;
}

/* Cache (per window, floats): xh, xt, q, k, v, o, h, nh (= LN(h)), nt (the FFN input), f [ncon d]
   each, t [ncon 4d], LN(h)'s mean and rstd [ncon] each; then the attention stats of all windows;
   with qk_raw, the one-hot x [ncon d] last. */
typedef struct {
    attn_float *xh, *xt, *q, *k, *v, *o, *h, *nh, *nt, *f, *t, *hmean, *hrstd, *stats, *x;
} attn__cis_cache;

static size_t attn__cis_cache_map(const attn_cisformer *m, int nb, attn_float *base, attn__cis_cache *c)
{
    size_t w = (size_t)nb * m->cfg.ncon * m->cfg.d, r = (size_t)nb * m->cfg.ncon;
    attn_attention_desc a;
    attn__cis_desc(m, nb, &a);
    if (c) {
        c->xh = base; c->xt = c->xh + w; c->q = c->xt + w; c->k = c->q + w; c->v = c->k + w; c->o = c->v + w;
        c->h = c->o + w; c->nh = c->h + w; c->nt = c->nh + w; c->f = c->nt + w; c->t = c->f + w;
        c->hmean = c->t + 4 * w; c->hrstd = c->hmean + r; c->stats = c->hrstd + r;
        c->x = m->cfg.qk_raw ? c->stats + attn_attention_stats_floats(&a) : NULL;
    }
    return (m->cfg.qk_raw ? 15 : 14) * w + 2 * r + attn_attention_stats_floats(&a);
}

ATTNDEF size_t attn_cisformer_cache_floats(const attn_cisformer *m, int nb)
{
    return attn__sizes_ok(__func__, m, nb, 1, 1) ? attn__cis_cache_map(m, nb, NULL, NULL) : 0;
}

/* The fused backward's matrix scratch: the larger of a position's, 4 d^2, and R's, ncon d^2 (used
   with more than one window). */
static size_t attn__cis_mat_floats(const attn_cisformer *m)
{
    return (size_t)ATTN__MAX(m->cfg.ncon, 4) * m->cfg.d * m->cfg.d;
}

/* Work: the attention's workspace, then the backward pass's gradients dF, dH, dN, dQ, dK, dV, dX
   [nb, ncon, d] and dT [nb, ncon, 4 d], and the fused SGD's gradient scratch (mat, then vec: the
   per-position vectors' gradient and r's). */
typedef struct {
    attn_float *dF, *dH, *dN, *dQ, *dK, *dV, *dX, *dT, *mat, *vec;
} attn__cis_work;

static size_t attn__cis_work_map(const attn_cisformer *m, int nb, void *work, attn__cis_work *w)
{
    size_t n = (size_t)nb * m->cfg.ncon * m->cfg.d;
    attn_attention_desc a;
    attn_arena ar;
    attn__cis_desc(m, nb, &a);
    attn__arena_plan(&ar, work);
    attn__arena_take(&ar, attn_attention_workspace(&a)); /* the start of work */
    w->dF = attn__arena_floats(&ar, n);
    w->dH = attn__arena_floats(&ar, n);
    w->dN = attn__arena_floats(&ar, n);
    w->dQ = attn__arena_floats(&ar, n);
    w->dK = attn__arena_floats(&ar, n);
    w->dV = attn__arena_floats(&ar, n);
    w->dX = attn__arena_floats(&ar, n);
    w->dT = attn__arena_floats(&ar, 4 * n);
    w->mat = attn__arena_floats(&ar, attn__cis_mat_floats(m));
    w->vec = attn__arena_floats(&ar, attn_tensor_numel(&m->p.value[ATTN__CIS_VEC]) + (size_t)m->cfg.d);
    return ar.used + ATTN_ALIGN;
}

ATTNDEF size_t attn_cisformer_work_bytes(const attn_cisformer *m, int nb)
{
    attn__cis_work w;
    if (!attn__sizes_ok(__func__, m, nb, 1, 1)) return 0;
    return attn__cis_work_map(m, nb, NULL, &w);
}

/* Checks shared by forward and backward: the model, nb >= 1, the workspace, the cache and work given. */
static attn_status attn__cis_args(const char *fn, const attn_cisformer *m, const attn_float *cache,
                                  size_t cache_floats, int nb, const void *work, size_t work_bytes)
{
    if (!m || !cache || !work) return attn__fail(ATTN_ERR_ARG, "%s: the model, cache or work is NULL", fn);
    ATTN__TRY(attn__cis_check(fn, &m->cfg));
    if (nb < 1) return attn__fail(ATTN_ERR_SHAPE, "%s: nb = %d must be >= 1", fn, nb);
    ATTN__TRY(attn__cache_ok(fn, cache_floats, attn_cisformer_cache_floats(m, nb),
                             "attn_cisformer_cache_floats"));
    if (work_bytes < attn_cisformer_work_bytes(m, nb))
        return attn__fail(ATTN_ERR_ARG, "%s: work has %lu bytes, attn_cisformer_work_bytes() asks for %lu",
                          fn, (unsigned long)work_bytes, (unsigned long)attn_cisformer_work_bytes(m, nb));
    return ATTN_OK;
}

/* Y[:, c, :] = X[:, c, :] op(W[c]) + beta Y[:, c, :] for every position c: X [nb, ncon, kin],
   Y [nb, ncon, kout]; trans = 1: W[c] is [kout, kin] and op is the transpose (y = W x, forward);
   trans = 0: W[c] is [kin, kout] (dx = W^T dy, backward through a [kin, kout] weight). */
static void attn__cis_per_position(int trans, int nb, int ncon, int kin, int kout, const attn_float *X,
                                   const attn_float *W, attn_float beta, attn_float *Y)
{
    int c;
    for (c = 0; c < ncon; c++)
        attn_gemm(0, trans, nb, kout, kin, 1, X + (size_t)c * kin, ncon * kin, W + (size_t)c * kin * kout,
                  trans ? kin : kout, beta, Y + (size_t)c * kout, ncon * kout);
}

/* Where the backward pass puts parameter tensor k's gradient: added to m->p's gradient block
   (sgd NULL), or, fused with an SGD step, applied to the weights at once, from scratch: mat holds
   one matrix block at a time (one window needs none, see attn__cis_linear_backward), vec the
   per-position vector's and r's gradients. */
typedef struct {
    attn_float *vel, *mat, *vec, lr, mu;
} attn__cis_sgd;

/* The gradient of tensor k's floats from off on; the matrices' go to mat (beta 0: overwritten). */
static attn_float *attn__cis_grad(attn_cisformer *m, const attn__cis_sgd *o, int k, size_t off)
{
    if (!o) return m->p.grad[k].data + off;
    return k == ATTN__CIS_VEC  ? o->vec + off
           : k == ATTN__CIS_RB ? o->vec + attn_tensor_numel(&m->p.value[ATTN__CIS_VEC]) + off
                               : o->mat;
}

/* Fused: tensor k's floats [off, off + n) take their SGD step from the gradient just computed. */
static void attn__cis_apply(attn_cisformer *m, const attn__cis_sgd *o, int k, size_t off, size_t n)
{
    size_t at = m->p.offset[k] + off;
    if (o) ATTN__ISA(sgd_apply)(m->p.data + at, o->vel + at, attn__cis_grad(m, o, k, off), n, o->lr, o->mu);
}

/* Backward through Y[:, c, :] = X[:, c, :] W[c]^T for each of the n positions c of tensor k (n = ncon;
   n = 1 for R): W[c] [kout, kin], dY [nb, n, kout], X [nb, n, kin]. dX = dY[:, c, :] W[c] + beta dX
   when dX is not NULL, from the old W; then the gradient dW[c] = dY[:, c, :]^T X[:, c, :] is
   accumulated, or stepped at once (fused). Fused with one window, dW[c] is the outer product
   dy_c x_c^T, stepped row by row without forming it. */
static void attn__cis_linear_backward(attn_cisformer *m, const attn__cis_sgd *o, int k, int n, int nb,
                                      int kin, int kout, const attn_float *dY, const attn_float *X,
                                      attn_float *dX, attn_float beta)
{
    int c;
    size_t sz = (size_t)kout * kin;
    if (dX) attn__cis_per_position(0, nb, n, kout, kin, dY, m->p.value[k].data, beta, dX);
    for (c = 0; c < n; c++) {
        const attn_float *dy = dY + (size_t)c * kout, *x = X + (size_t)c * kin;
        size_t at = m->p.offset[k] + c * sz;
        if (o && nb == 1) ATTN__ISA(sgd_outer)(m->p.data + at, o->vel + at, dy, x, kout, kin, o->lr, o->mu);
        else {
            attn_gemm(1, 0, kout, kin, nb, 1, dy, n * kout, x, n * kin, o ? 0 : 1,
                      attn__cis_grad(m, o, k, c * sz), kin);
            attn__cis_apply(m, o, k, c * sz, sz);
        }
    }
}

ATTNDEF attn_status attn_cisformer_forward(const attn_cisformer *m, attn_float *y, attn_float *cache,
                                           size_t cache_floats, const int *tokens, int stride, int nb,
                                           void *work, size_t work_bytes)
{
    const attn_cisformer_config *cf;
    attn__cis_cache c;
    attn_attention_desc a;
    attn_cisformer_tensors W;
    int d, n, i, p, e;
    size_t w;
    ATTN__TRY(attn__cis_args(__func__, m, cache, cache_floats, nb, work, work_bytes));
    ATTN__NEED(y); ATTN__NEED(tokens);
    if (stride < 1) return attn__fail(ATTN_ERR_SHAPE, "%s: stride = %d must be >= 1", __func__, stride);
    cf = &m->cfg; d = cf->d; n = cf->ncon; w = (size_t)nb * n * d;
    for (i = 0; i < nb; i++)
        for (p = 0; p < n; p++) {
            int x = tokens[(size_t)i * stride + p];
            if (x < 0 || x >= d)
                return attn__fail(ATTN_ERR_ARG, "%s: token %d of window %d is %d, not in 0 .. %d", __func__,
                                  p, i, x, d - 1);
        }
    W = attn_cisformer_named(m, 0);
    attn__cis_cache_map(m, nb, cache, &c);
    attn__cis_desc(m, nb, &a);
    /* x one-hot (kept in h for now), xh = LN(x), xt = xh (+ u_c or * g1_c); x is an input, so
       LN(x)'s statistics are not kept (hmean, hrstd are LN(h)'s, written below) */
    memset(c.h, 0, sizeof(attn_float) * w);
    for (i = 0; i < nb; i++)
        for (p = 0; p < n; p++) c.h[((size_t)i * n + p) * d + tokens[(size_t)i * stride + p]] = 1;
    if (c.x) memcpy(c.x, c.h, sizeof(attn_float) * w);
    attn_layernorm_forward(c.xh, c.hmean, c.hrstd, c.h, NULL, NULL, nb * n, d, ATTN__CIS_LN_EPS,
                           ATTN_LN_EPS_INSIDE);
    memcpy(c.xt, c.xh, sizeof(attn_float) * w);
    for (i = 0; i < nb && cf->vec != ATTN_CIS_FFN_BIAS; i++)
        for (p = 0; p < n; p++) {
            attn_float *r = c.xt + ((size_t)i * n + p) * d;
            if (cf->vec == ATTN_CIS_LN_BIAS) attn_axpy((size_t)d, 1, W.vec + (size_t)p * d, r);
            else attn_scale((size_t)d, W.vec[2 * p], r);
        }
    attn__cis_per_position(1, nb, n, d, d, c.x ? c.x : c.xt, W.Wq, 0, c.q);
    attn__cis_per_position(1, nb, n, d, d, c.x ? c.x : c.xt, W.Wk, 0, c.k);
    attn__cis_per_position(1, nb, n, d, d, c.xt, W.Wv, 0, c.v);
    ATTN__TRY(
        attn_attention_forward(&a, c.o, c.stats, NULL, c.q, c.k, c.v, work, attn_attention_workspace(&a)));
    attn_axpy(w, 1, c.o, c.h); /* h = x + attention */
    attn_layernorm_forward(c.nh, c.hmean, c.hrstd, c.h, NULL, NULL, nb * n, d, ATTN__CIS_LN_EPS,
                           ATTN_LN_EPS_INSIDE);
    memcpy(c.nt, c.nh, sizeof(attn_float) * w);
    for (i = 0; i < nb && cf->vec == ATTN_CIS_LN_GAINS; i++)
        for (p = 0; p < n; p++) attn_scale((size_t)d, W.vec[2 * p + 1], c.nt + ((size_t)i * n + p) * d);
    attn__cis_per_position(1, nb, n, d, 4 * d, c.nt, W.W1, 0, c.t);
    attn_act_forward(c.t, c.t, 4 * w, ATTN_ACT_TANH);
    memcpy(c.f, c.h, sizeof(attn_float) * w); /* f = h + W2 t (+ b) */
    attn__cis_per_position(1, nb, n, 4 * d, d, c.t, W.W2, 1, c.f);
    for (i = 0; i < nb && cf->vec == ATTN_CIS_FFN_BIAS; i++)
        attn_axpy((size_t)n * d, 1, W.vec, c.f + (size_t)i * n * d);
    attn_gemm(0, 1, nb, d, n * d, 1, c.f, n * d, W.R, n * d, 0, y, d); /* y = R vec(f) + r */
    for (i = 0; i < nb; i++)
        for (e = 0; e < d; e++) y[(size_t)i * d + e] += W.r[e];
    return ATTN_OK;
}

/* The backward pass, accumulating into the gradient block (sgd NULL) or fused with an SGD step. A
   weight is updated only after the last product that reads it: R after dF, W2 after dT, W1 after
   dN, Wq, Wk, Wv after dX, the per-position vector at the end. */
static attn_status attn__cis_backward(const char *fn, attn_cisformer *m, const attn_float *dy,
                                      const attn_float *cache, size_t cache_floats, int nb, attn__cis_sgd *o,
                                      void *work, size_t work_bytes)
{
    const attn_cisformer_config *cf;
    attn__cis_cache c;
    attn_attention_desc a;
    attn_attention_grads ag;
    attn_cisformer_tensors W;
    attn__cis_work wk;
    attn_float *dF, *dH, *dN, *dQ, *dK, *dV, *dX, *dT, *gv;
    int d, n, i, p;
    size_t w, nv;
    ATTN__TRY(attn__cis_args(fn, m, cache, cache_floats, nb, work, work_bytes));
    ATTN__NEED(dy);
    cf = &m->cfg; d = cf->d; n = cf->ncon; w = (size_t)nb * n * d;
    W = attn_cisformer_named(m, 0);
    attn__cis_cache_map(m, nb, attn__unconst(cache), &c);
    attn__cis_desc(m, nb, &a);
    attn__cis_work_map(m, nb, work, &wk);
    dF = wk.dF; dH = wk.dH; dN = wk.dN; dQ = wk.dQ; dK = wk.dK; dV = wk.dV; dX = wk.dX; dT = wk.dT;
    nv = attn_tensor_numel(&m->p.value[ATTN__CIS_VEC]);
    if (o) {
        o->mat = wk.mat; o->vec = wk.vec;
        memset(o->vec, 0, sizeof(attn_float) * (nv + (size_t)d));
    }
    gv = attn__cis_grad(m, o, ATTN__CIS_VEC, 0);
    /* y = R vec(f) + r */
    attn__cis_linear_backward(m, o, ATTN__CIS_R, 1, nb, n * d, d, dy, c.f, dF, 0);
    for (i = 0; i < nb; i++)
        attn_axpy((size_t)d, 1, dy + (size_t)i * d, attn__cis_grad(m, o, ATTN__CIS_RB, 0));
    attn__cis_apply(m, o, ATTN__CIS_RB, 0, (size_t)d);
    /* f = h + W2[c] t (+ b_c);  t = tanh(W1[c] nt) */
    memcpy(dH, dF, sizeof(attn_float) * w);
    for (i = 0; i < nb && cf->vec == ATTN_CIS_FFN_BIAS; i++)
        attn_axpy((size_t)n * d, 1, dF + (size_t)i * n * d, gv);
    attn__cis_linear_backward(m, o, ATTN__CIS_W2, n, nb, 4 * d, d, dF, c.t, dT, 0);
    ATTN__ISA(mul_tanh_grad)(4 * w, c.t, dT);
    attn__cis_linear_backward(m, o, ATTN__CIS_W1, n, nb, d, 4 * d, dT, c.nt, dN, 0);
    for (i = 0; i < nb && cf->vec == ATTN_CIS_LN_GAINS; i++) /* nt = g2_c nh */
        for (p = 0; p < n; p++) {
            attn_float *r = dN + ((size_t)i * n + p) * d;
            gv[2 * p + 1] += attn_dot((size_t)d, r, c.nh + ((size_t)i * n + p) * d);
            attn_scale((size_t)d, W.vec[2 * p + 1], r);
        }
    /* nh = LN(h) */
    attn_layernorm_backward(dH, NULL, NULL, dN, c.h, NULL, c.hmean, c.hrstd, nb * n, d, ATTN__CIS_LN_EPS,
                            ATTN_LN_EPS_INSIDE);
    /* h = x + attention(q, k, v) */
    memset(dQ, 0, sizeof(attn_float) * w);
    memset(dK, 0, sizeof(attn_float) * w);
    memset(dV, 0, sizeof(attn_float) * w);
    memset(&ag, 0, sizeof ag);
    ag.dQ = dQ; ag.dK = dK; ag.dV = dV;
    ATTN__TRY(attn_attention_backward(&a, &ag, dH, c.q, c.k, c.v, c.o, c.stats, work,
                                      attn_attention_workspace(&a)));
    /* q, k, v = W[c] xt (q, k = W[c] x with qk_raw: x is an input);  xt = xh + u_c, or g1_c xh */
    if (cf->vec == ATTN_CIS_FFN_BIAS) dX = NULL; /* no gradient to pass on */
    attn__cis_linear_backward(m, o, ATTN__CIS_WQ, n, nb, d, d, dQ, c.x ? c.x : c.xt, c.x ? NULL : dX, 0);
    attn__cis_linear_backward(m, o, ATTN__CIS_WK, n, nb, d, d, dK, c.x ? c.x : c.xt, c.x ? NULL : dX, 1);
    attn__cis_linear_backward(m, o, ATTN__CIS_WV, n, nb, d, d, dV, c.xt, dX, !c.x);
    if (dX) {
        for (i = 0; i < nb; i++)
            for (p = 0; p < n; p++) {
                const attn_float *r = dX + ((size_t)i * n + p) * d;
                if (cf->vec == ATTN_CIS_LN_BIAS) attn_axpy((size_t)d, 1, r, gv + (size_t)p * d);
                else gv[2 * p] += attn_dot((size_t)d, r, c.xh + ((size_t)i * n + p) * d);
            }
    }
    attn__cis_apply(m, o, ATTN__CIS_VEC, 0, nv);
    return ATTN_OK;
}

ATTNDEF attn_status attn_cisformer_backward(attn_cisformer *m, const attn_float *dy, const attn_float *cache,
                                            size_t cache_floats, int nb, void *work, size_t work_bytes)
{
    return attn__cis_backward(__func__, m, dy, cache, cache_floats, nb, NULL, work, work_bytes);
}

ATTNDEF attn_status attn_cisformer_backward_sgd(attn_cisformer *m, const attn_float *dy,
                                                const attn_float *cache, size_t cache_floats, int nb,
                                                attn_float *velocity, attn_float lr, attn_float momentum,
                                                long step, void *work, size_t work_bytes)
{
    attn__cis_sgd o;
    ATTN__NEED(velocity);
    memset(&o, 0, sizeof o);
    o.vel = velocity; o.lr = lr; o.mu = step == 0 ? 0 : momentum;
    return attn__cis_backward(__func__, m, dy, cache, cache_floats, nb, &o, work, work_bytes);
}

/* ---- the transformer ---- */



/* Every tensor of the transformer, declared once: a layer's (at[l][slot]) and the model's own
   (at[ATTN__TF_G][slot]) in block order, each with its field of attn_transformer_layer_tensors or
   attn_transformer_tensors (its name in checkpoints), when a configuration has it, its shape in the
   configuration's sizes and how attn_transformer_init draws it. The parameter block, the views,
   the names, the checkpoint layout and the initialisation all derive from these two tables. */
enum { /* when */
    ATTN__TW_ALWAYS, ATTN__TW_LN, ATTN__TW_BIAS, ATTN__TW_SUB, ATTN__TW_DEEP, ATTN__TW_T5, ATTN__TW_LIN,
    ATTN__TW_GLU, ATTN__TW_GLU_BIAS, ATTN__TW_QK, ATTN__TW_VOCAB, ATTN__TW_IN, ATTN__TW_IN_BIAS,
    ATTN__TW_EMB, ATTN__TW_EMB_LN, ATTN__TW_PRE, ATTN__TW_PRE_LN, ATTN__TW_HEAD, ATTN__TW_HEAD_BIAS,
    ATTN__TW_LEARNED, ATTN__TW_RELBIAS, ATTN__TW_TEMPERATURE
};
/* sizes: d, H dk, KH dk, KH dv, H dv, mlp, dk, dk / 2, dv, H, max_T, linformer_k, 4, vocab, in_dim,
   the modifiers' buckets, out */
enum {
    ATTN__TD_D, ATTN__TD_HK, ATTN__TD_KK, ATTN__TD_KV, ATTN__TD_HV, ATTN__TD_MLP, ATTN__TD_DK, ATTN__TD_DK2,
    ATTN__TD_DV, ATTN__TD_H, ATTN__TD_T, ATTN__TD_LK, ATTN__TD_4, ATTN__TD_V, ATTN__TD_IN, ATTN__TD_NB,
    ATTN__TD_OUT
};
enum { /* init: the configuration's fan-in rule, 1, 0, N(0, 1), N(0, 1 / max_T), N(0, 0.01) */
    ATTN__TI_FAN, ATTN__TI_ONE, ATTN__TI_ZERO, ATTN__TI_N1, ATTN__TI_NT5, ATTN__TI_N01
};
#define ATTN__TF_T(type, f, when, init, nd, a, b, c)                                                 \
    {#f, offsetof(type, f), ATTN__TW_##when, ATTN__TI_##init, nd, {ATTN__TD_##a, ATTN__TD_##b, ATTN__TD_##c}}
#define ATTN__TF_L(...) ATTN__TF_T(attn_transformer_layer_tensors, __VA_ARGS__)
#define ATTN__TF_M(...) ATTN__TF_T(attn_transformer_tensors, __VA_ARGS__)
static const attn__slot attn__tf_lslot[] = {
    ATTN__TF_L(n1g, ALWAYS, ONE, 1, D, D, D),      ATTN__TF_L(n1b, LN, ZERO, 1, D, D, D),
    ATTN__TF_L(Wq, ALWAYS, FAN, 2, HK, D, D),      ATTN__TF_L(bq, BIAS, ZERO, 1, HK, D, D),
    ATTN__TF_L(Wk, ALWAYS, FAN, 2, KK, D, D),      ATTN__TF_L(bk, BIAS, ZERO, 1, KK, D, D),
    ATTN__TF_L(Wv, ALWAYS, FAN, 2, KV, D, D),      ATTN__TF_L(bv, BIAS, ZERO, 1, KV, D, D),
    ATTN__TF_L(qnorm, QK, ONE, 1, DK, D, D),       ATTN__TF_L(knorm, QK, ONE, 1, DK, D, D),
    ATTN__TF_L(Wo, ALWAYS, FAN, 2, D, HV, D),      ATTN__TF_L(bo, BIAS, ZERO, 1, D, D, D),
    ATTN__TF_L(lambda, SUB, N01, 2, 4, DK2, D),    ATTN__TF_L(gain, SUB, ONE, 1, DV, D, D),
    ATTN__TF_L(w2, DEEP, FAN, 3, H, DV, DV),       ATTN__TF_L(t5, T5, NT5, 2, H, T, D),
    ATTN__TF_L(relbias, RELBIAS, ZERO, 2, H, NB, D), ATTN__TF_L(temperature, TEMPERATURE, ONE, 1, H, D, D),
    ATTN__TF_L(Elin, LIN, FAN, 2, LK, T, D),       ATTN__TF_L(Flin, LIN, FAN, 2, LK, T, D),
    ATTN__TF_L(n2g, ALWAYS, ONE, 1, D, D, D),      ATTN__TF_L(n2b, LN, ZERO, 1, D, D, D),
    ATTN__TF_L(W1, ALWAYS, FAN, 2, MLP, D, D),     ATTN__TF_L(b1, BIAS, ZERO, 1, MLP, D, D),
    ATTN__TF_L(W3, GLU, FAN, 2, MLP, D, D),        ATTN__TF_L(b3, GLU_BIAS, ZERO, 1, MLP, D, D),
    ATTN__TF_L(W2, ALWAYS, FAN, 2, D, MLP, D),     ATTN__TF_L(b2, BIAS, ZERO, 1, D, D, D)};
static const attn__slot attn__tf_gslot[] = {
    ATTN__TF_M(E, VOCAB, N1, 2, V, D, D),          ATTN__TF_M(Win, IN, FAN, 2, D, IN, D),
    ATTN__TF_M(bin, IN_BIAS, ZERO, 1, D, D, D),    ATTN__TF_M(P, LEARNED, N1, 2, T, D, D),
    ATTN__TF_M(neg, EMB, ONE, 1, D, D, D),         ATTN__TF_M(neb, EMB_LN, ZERO, 1, D, D, D),
    ATTN__TF_M(nfg, PRE, ONE, 1, D, D, D),         ATTN__TF_M(nfb, PRE_LN, ZERO, 1, D, D, D),
    ATTN__TF_M(Wout, HEAD, FAN, 2, OUT, D, D),     ATTN__TF_M(bout, HEAD_BIAS, ZERO, 1, OUT, D, D)};
#define ATTN__TF_SLOTS ((int)ATTN__COUNT(attn__tf_lslot))
typedef char attn__tf_slots_fit[ATTN__TF_SLOTS <= ATTN__TF_MAX_SLOTS ? 1 : -1]; /* at[][] holds them */
#define ATTN__TF_GLOBALS ((int)ATTN__COUNT(attn__tf_gslot))
#define ATTN__TF_NFG 6 /* the model's tensors from nfg on follow the layers */
#define ATTN__TF_G ATTN_MAX_LAYERS /* the row of at[] with the model's own tensors */

/* Layer l's modifier settings in *mc, checked. */
static attn_status attn__tf_mod_config(const char *fn, const attn_transformer_config *c, int l,
                                       attn_mod_config *mc)
{
    size_t np;
    *mc = c->mod;
    mc->kind = c->mods[l];
    mc->mask = c->masks[l];
    mc->H = c->heads;
    if (attn__mod_check(fn, mc, &np) != ATTN_OK)
        return attn__fail(attn_last_status(), "%s (layer %d)", attn_last_error(), l);
    if (c->linformer_k) return attn__fail(ATTN_ERR_ARG, "%s: Linformer takes no score or mask modifier", fn);
    if (mc->mask == ATTN_MASK_PREFIX && c->causal)
        return attn__fail(ATTN_ERR_ARG, "%s: a prefix mask needs causal 0 (it is causal after the prefix; "
                          "layer %d)", fn, l);
    return ATTN_OK;
}

static attn_status attn__tf_check(const char *fn, const attn_transformer_config *c)
{
    attn_attention_desc a;
    attn_mod_config mc;
    int l;
    if (!c) return attn__fail(ATTN_ERR_ARG, "%s: the configuration is NULL", fn);
    if ((c->vocab > 0) == (c->in_dim > 0) || c->vocab < 0 || c->in_dim < 0)
        return attn__fail(ATTN_ERR_SHAPE, "%s: exactly one of vocab (%d) and in_dim (%d) must be > 0", fn,
                          c->vocab, c->in_dim);
    if (c->d < 1 || c->layers < 1 || c->layers > ATTN_MAX_LAYERS || c->heads < 1 || c->dk < 1 || c->dv < 1 ||
        c->mlp < 1 || c->max_T < 1 || c->out < 0 || c->readout < 0 || c->readout > c->max_T)
        return attn__fail(ATTN_ERR_SHAPE,
                          "%s: d %d, heads %d, dk %d, dv %d, mlp %d, max_T %d, out %d must be >= 1, layers "
                          "%d in 1 .. %d, readout %d in 0 .. max_T",
                          fn, c->d, c->heads, c->dk, c->dv, c->mlp, c->max_T, c->out, c->layers,
                          ATTN_MAX_LAYERS, c->readout);
    if ((int)c->pos < 0 || c->pos >= ATTN_POS_COUNT || (int)c->norm < 0 || c->norm >= ATTN_NORM_COUNT ||
        (int)c->act < 0 || c->act >= ATTN_ACT_COUNT || (int)c->init < 0 || c->init >= ATTN_INIT_COUNT)
        return attn__fail(
            ATTN_ERR_ARG,
            "%s: unknown position (%d), norm (%d), activation (%d) or initialisation (%d) choice", fn,
            (int)c->pos, (int)c->norm, (int)c->act, (int)c->init);
    if ((long long)c->heads * c->dk > INT_MAX || (long long)c->heads * c->dv > INT_MAX)
        return attn__fail(ATTN_ERR_OVERFLOW, "%s: heads %d times dk %d or dv %d overflows int", fn, c->heads,
                          c->dk, c->dv);
    if (c->t5 && c->max_T < 2) return attn__fail(ATTN_ERR_SHAPE, "%s: T5 buckets need max_T >= 2", fn);
    if (c->window < 0 || c->dilation < 0 || c->global < 0 || c->global > c->max_T ||
        (!c->window && (c->dilation > 1 || c->global)))
        return attn__fail(ATTN_ERR_SHAPE,
                          "%s: window %d and dilation %d must be >= 0, global %d in 0 .. max_T; "
                          "dilation and global tokens need a window",
                          fn, c->window, c->dilation, c->global);
    if (c->bigbird_block < 0 || c->bigbird_random < 0 || c->linformer_k < 0)
        return attn__fail(ATTN_ERR_SHAPE,
                          "%s: bigbird_block %d, bigbird_random %d and linformer_k %d must be >= 0", fn,
                          c->bigbird_block, c->bigbird_random, c->linformer_k);
    if (c->linformer_k && (c->causal || c->t5 || c->window || c->bigbird_block || c->doc_mask || c->kv_heads))
        return attn__fail(ATTN_ERR_ARG,
                          "%s: Linformer mixes every position into its compressed keys: not causal, and no "
                          "T5 biases, window, BigBird blocks, documents or kv_heads",
                          fn);
    if (!(c->eps > 0) || !attn__finite(c->eps) || !(c->rope_theta >= 0) || !attn__finite(c->rope_theta))
        return attn__fail(ATTN_ERR_ARG,
                          "%s: eps = %g must be finite and > 0, rope_theta = %g finite and >= 0", fn,
                          (double)c->eps, (double)c->rope_theta);
    if (c->pad_mask < 0 || c->pad_mask > 2 ||
        (c->pad_mask && (!c->vocab || c->pad < 0 || c->pad >= c->vocab)))
        return attn__fail(ATTN_ERR_ARG, "%s: pad_mask (%d) is 0, 1 or 2, and needs token inputs and pad (%d) "
                          "in 0 .. vocab-1", fn, c->pad_mask, c->pad);
    if (c->doc_mask && (!c->vocab || c->bos < 0 || c->bos >= c->vocab))
        return attn__fail(ATTN_ERR_ARG,
                          "%s: document masking needs token inputs and bos (%d) in 0 .. vocab-1", fn, c->bos);
    for (l = 0; l < c->layers; l++) {
        memset(&a, 0, sizeof a);
        a.kind = c->kinds[l];
        a.B = a.H = a.Tq = a.Tk = 1;
        a.dk = c->dk;
        a.dv = c->dv;
        a.scale = c->scale;
        a.dropout = c->dropout;
        a.window = c->window;
        a.block = c->bigbird_block;
        a.kv_heads = c->kv_heads;
        if (c->kv_heads) a.H = c->heads; /* kv_heads divides it */
        a.layout = (const unsigned char *)c; /* any layout: the checks below look at the kind */
        if (attn__flags(a.kind) & ATTN_KF_LINEAR_TIME) a.H = c->heads; /* just the checks below */
        a.mod = c->mods[l] || c->masks[l] ? &attn__mod_rows[ATTN_MOD_ALIBI] : NULL; /* any: the checks
                                                                                       look at the kind */
        ATTN__TRY(attn__attention_check(fn, &a, (size_t)-1));
        if (c->mods[l] || c->masks[l]) ATTN__TRY(attn__tf_mod_config(fn, c, l, &mc));
        if (c->linformer_k && !attn_kind_get(a.kind)->score)
            return attn__fail(ATTN_ERR_ARG, "%s: Linformer takes scored kinds, not %s (layer %d)", fn,
                              attn_kind_get(a.kind)->name, l);
        if (c->pos == ATTN_POS_ROPE && c->dk % (attn__flags(c->kinds[l]) & ATTN_KF_SUBHEADS ? 4 : 2))
            return attn__fail(ATTN_ERR_SHAPE,
                              "%s: RoPE rotates pairs of each (sub-)head: dk = %d does not split (layer %d)",
                              fn, c->dk, l);
    }
    return ATTN_OK;
}

/* A size of the tensor table in configuration c. */
static int attn__tf_dim(const attn_transformer_config *c, int sym)
{
    int kh = c->kv_heads ? c->kv_heads : c->heads;
    switch (sym) {
    case ATTN__TD_D: return c->d;
    case ATTN__TD_HK: return c->heads * c->dk;
    case ATTN__TD_KK: return kh * c->dk;
    case ATTN__TD_KV: return kh * c->dv;
    case ATTN__TD_HV: return c->heads * c->dv;
    case ATTN__TD_MLP: return c->mlp;
    case ATTN__TD_DK: return c->dk;
    case ATTN__TD_DK2: return c->dk / 2;
    case ATTN__TD_DV: return c->dv;
    case ATTN__TD_H: return c->heads;
    case ATTN__TD_T: return c->max_T;
    case ATTN__TD_LK: return c->linformer_k;
    case ATTN__TD_4: return 4;
    case ATTN__TD_V: return c->vocab;
    case ATTN__TD_IN: return c->in_dim;
    case ATTN__TD_NB: return c->mod.buckets;
    default: return c->out;
    }
}

/* Whether configuration c has a tensor of condition `when` (in layer l's kind, for a layer's). */
static int attn__tf_has(const attn_transformer_config *c, int l, int when)
{
    const attn_kind_info *kr = l >= 0 && l < c->layers ? attn_kind_get(c->kinds[l]) : NULL;
    switch (when) {
    case ATTN__TW_ALWAYS: return 1;
    case ATTN__TW_LN: return c->norm == ATTN_NORM_LAYER;
    case ATTN__TW_BIAS: return c->bias != 0;
    case ATTN__TW_SUB: return kr && (kr->flags & ATTN_KF_SUBHEADS);
    case ATTN__TW_DEEP: return kr && kr->mix && kr->mix->value == ATTN_MIX_VALUE_DEEP;
    case ATTN__TW_T5: return c->t5 != 0;
    case ATTN__TW_RELBIAS: return kr && c->mods[l] == ATTN_MOD_RELBIAS;
    case ATTN__TW_TEMPERATURE: return kr && c->mods[l] == ATTN_MOD_TEMPERATURE;
    case ATTN__TW_LIN: return c->linformer_k > 0;
    case ATTN__TW_GLU: return c->glu != 0;
    case ATTN__TW_GLU_BIAS: return c->glu && c->bias;
    case ATTN__TW_QK: return c->qk_norm != 0;
    case ATTN__TW_VOCAB: return c->vocab > 0;
    case ATTN__TW_IN: return c->in_dim > 0;
    case ATTN__TW_IN_BIAS: return c->in_dim > 0 && c->bias;
    case ATTN__TW_EMB: return c->emb_norm != 0;
    case ATTN__TW_EMB_LN: return c->emb_norm && c->norm == ATTN_NORM_LAYER;
    case ATTN__TW_PRE: return !c->post_norm;
    case ATTN__TW_PRE_LN: return !c->post_norm && c->norm == ATTN_NORM_LAYER;
    case ATTN__TW_HEAD: return c->out > 0;
    case ATTN__TW_HEAD_BIAS: return c->out > 0 && c->bias;
    default: return c->pos == ATTN_POS_LEARNED;
    }
}

/* The parameter descriptors in block order (p may be NULL to count them), with their
   initialisation, and at[][] filled; returns the number of tensors. */
static int attn__tf_descs(const attn_transformer_config *c, attn_param_desc *p,
                          short at[][ATTN__TF_MAX_SLOTS])
{
    static const double sd[] = {0, 1, 0, 1, 0, 0.1}; /* by init code: the constant or the sd */
    int n = 0, l, s, k;
    for (l = -1; l <= c->layers; l++) { /* -1: E, Win, bin, P; the layers; then the final norm and head */
        int g = l < 0 || l == c->layers, ns = g ? ATTN__TF_GLOBALS : ATTN__TF_SLOTS;
        for (s = 0; s < ns; s++) {
            const attn__slot *t = g ? &attn__tf_gslot[s] : &attn__tf_lslot[s];
            short *slot = g ? &at[ATTN__TF_G][s] : &at[l][s];
            if (g && (l < 0) != (s < ATTN__TF_NFG)) continue; /* E .. neb before the layers */
            *slot = (short)(attn__tf_has(c, l, t->when) ? n : -1);
            if (*slot < 0) continue;
            if (p) {
                memset(&p[n], 0, sizeof p[n]);
                p[n].name = t->name;
                p[n].ndim = t->ndim;
                for (k = 0; k < t->ndim; k++) p[n].shape[k] = attn__tf_dim(c, t->dim[k]);
                p[n].decay = -1;
                p[n].init = t->init == ATTN__TI_FAN ? (attn_param_init)(ATTN_PARAM_FAN_NORMAL + (int)c->init)
                            : t->init == ATTN__TI_ONE  ? ATTN_PARAM_CONST
                            : t->init == ATTN__TI_ZERO ? ATTN_PARAM_ZERO
                                                       : ATTN_PARAM_NORMAL;
                p[n].value = t->init == ATTN__TI_NT5 ? 1 / sqrt((double)c->max_T) : sd[t->init];
            }
            n++;
        }
    }
    return n;
}

/* The descriptors of a valid configuration (p [ATTN__TF_MAX_DESCS]) and at[][]; the floats of its
   parameter block (with the alignment padding) in *floats and the parameter count in *count. Returns
   the number of tensors, or 0 (error set) for an invalid configuration or one whose sizes overflow. */
#define ATTN__TF_MAX_DESCS (ATTN__TF_GLOBALS + ATTN_MAX_LAYERS * ATTN__TF_SLOTS)
static int attn__tf_layout(const char *fn, const attn_transformer_config *c, attn_param_desc *p,
                           short at[][ATTN__TF_MAX_SLOTS], size_t *floats, size_t *count)
{
    int i, n;
    if (attn__tf_check(fn, c) != ATTN_OK) return 0;
    n = attn__tf_descs(c, p, at);
    if (!attn__params_layout(p, n, floats)) {
        attn__fail(ATTN_ERR_OVERFLOW, "%s: the parameter block overflows size_t", fn);
        return 0;
    }
    for (*count = 0, i = 0; i < n; i++) *count += attn__shape_numel(p[i].ndim, p[i].shape);
    return n;
}

ATTNDEF attn_transformer_config attn_transformer_config_default(void)
{
    attn_transformer_config c;
    int l;
    memset(&c, 0, sizeof c);
    c.vocab = c.out = 256;
    c.d = 128;
    c.layers = 4;
    c.heads = 4;
    c.dk = c.dv = 32;
    c.mlp = 512;
    c.max_T = 256;
    c.causal = 1;
    c.pos = ATTN_POS_LEARNED;
    c.norm = ATTN_NORM_LAYER;
    c.eps = (attn_float)1e-5;
    c.act = ATTN_ACT_GELU_TANH;
    c.bias = 1;
    c.init = ATTN_INIT_NORMAL;
    for (l = 0; l < ATTN_MAX_LAYERS; l++) c.kinds[l] = ATTN_SOFTMAX;
    return c;
}

ATTNDEF size_t attn_transformer_param_count(const attn_transformer_config *cfg)
{
    attn_param_desc p[ATTN__TF_MAX_DESCS];
    short at[ATTN_MAX_LAYERS + 1][ATTN__TF_MAX_SLOTS];
    size_t floats, count;
    return attn__tf_layout(__func__, cfg, p, at, &floats, &count) ? count : 0;
}

/* The attention pattern in m->pattern: with a window the dilation of each head [H] (ints) and the
   global tokens [max_T] (bytes); with BigBird blocks the layout [H, nb, nb] (bytes, nb = ceil(max_T /
   b)) and the draw's scratch [nb] (ints). Its bytes, and with base its arrays in *p (NULL: absent). */
typedef struct {
    int *dil, *cand;
    unsigned char *global, *layout;
} attn__tf_pat;

static int attn__tf_blocks(const attn_transformer_config *c, int T)
{
    return c->bigbird_block ? (T + c->bigbird_block - 1) / c->bigbird_block : 0;
}

static size_t attn__tf_pattern_map(const attn_transformer_config *c, void *base, attn__tf_pat *p)
{
    size_t H = (size_t)c->heads, nb = (size_t)attn__tf_blocks(c, c->max_T), w = c->window > 0;
    attn_arena ar;
    attn_arena_measure(&ar);
    ar.base = (unsigned char *)base;
    p->dil = (int *)attn__arena_take(&ar, w * sizeof(int) * H);
    p->global = (unsigned char *)attn__arena_take(&ar, w * (size_t)c->max_T);
    p->layout = (unsigned char *)attn__arena_take(&ar, H * nb * nb);
    p->cand = (int *)attn__arena_take(&ar, sizeof(int) * nb);
    if (!w) p->dil = NULL, p->global = NULL;
    if (!nb) p->layout = NULL, p->cand = NULL;
    return ar.used;
}

/* With a window or BigBird blocks: the pattern in mem (aligned; attn__tf_pattern_map's bytes +
   ATTN_ALIGN), or allocated (ATTN_MALLOC) when mem is NULL; the blocks drawn from bigbird_seed. */
static attn_status attn__tf_pattern(attn_transformer *m, void *mem)
{
    const attn_transformer_config *c = &m->cfg;
    attn__tf_pat p;
    attn_rng rng;
    size_t bytes = attn__tf_pattern_map(c, NULL, &p);
    int h;
    m->pattern = NULL;
    if (!bytes) return ATTN_OK;
    if (!(m->pattern = mem ? (void *)attn__align_ptr(mem, 0) : ATTN_MALLOC(bytes)))
        return attn__fail(ATTN_ERR_NOMEM, "attn_transformer_init: no memory for the attention pattern");
    memset(m->pattern, 0, bytes);
    attn__tf_pattern_map(c, m->pattern, &p);
    for (h = 0; p.dil && h < c->heads; h++) p.dil[h] = c->dilation > 0 ? c->dilation : 1;
    for (h = 0; p.global && h < c->max_T; h++) p.global[h] = h < c->global;
    attn_rng_seed(&rng, (uint64_t)(uint32_t)c->bigbird_seed, 0xB16B1Dull);
    if (p.layout)
        attn__bigbird_draw(p.layout, c->heads, attn__tf_blocks(c, c->max_T), c->bigbird_random, &rng, p.cand);
    return ATTN_OK;
}

ATTNDEF size_t attn_transformer_bytes(const attn_transformer_config *cfg)
{
    attn_param_desc p[ATTN__TF_MAX_DESCS];
    short at[ATTN_MAX_LAYERS + 1][ATTN__TF_MAX_SLOTS];
    size_t floats, count;
    int n = attn__tf_layout(__func__, cfg, p, at, &floats, &count);
    attn__tf_pat pt;
    size_t pb = n ? attn__tf_pattern_map(cfg, NULL, &pt) : 0;
    return n ? attn_params_bytes(p, n) + (pb ? pb + ATTN_ALIGN : 0) : 0;
}

/* attn_transformer_init, in mem [bytes] when mem is not NULL: the parameters (drawn from rng, or
   zeros with rng NULL, for the loaders), then the pattern. */
static attn_status attn__tf_make(attn_transformer *m, const attn_transformer_config *cfg, attn_rng *rng,
                                 void *mem, size_t bytes)
{
    attn_param_desc p[ATTN__TF_MAX_DESCS];
    attn_transformer t; /* built here, copied to *m only when complete */
    int n;
    size_t cnt, floats, pb;
    ATTN__NEED(m);
    memset(&t, 0, sizeof t);
    memset(p, 0, sizeof p); /* gcc 12 -O2 takes it for uninitialized where ATTN_STATIC inlines the layout */
    n = attn__tf_layout("attn_transformer_init", cfg, p, t.at, &floats, &cnt);
    if (!n) return attn_last_status();
    pb = attn_params_bytes(p, n);
    if (mem && bytes < attn_transformer_bytes(cfg))
        return attn__fail(ATTN_ERR_ARG, "attn_transformer_init_in: %lu bytes, %lu needed",
                          (unsigned long)bytes, (unsigned long)attn_transformer_bytes(cfg));
    ATTN__TRY(attn__params_place(&t.p, p, n, mem, pb));
    t.cfg = *cfg;
    if (rng) attn_params_draw(&t.p, p, n, rng); /* by the table's rules (attn__tf_descs) */
    else memset(t.p.data, 0, sizeof(attn_float) * t.p.total); /* a loader fills them */
    if (attn__tf_pattern(&t, mem ? (unsigned char *)mem + pb : NULL) != ATTN_OK) {
        attn_params_free(&t.p);
        return attn_last_status();
    }
    *m = t;
    return ATTN_OK;
}

ATTNDEF attn_status attn_transformer_init(attn_transformer *m, const attn_transformer_config *cfg,
                                          attn_rng *rng)
{
    ATTN__NEED(rng);
    return attn__tf_make(m, cfg, rng, NULL, 0);
}

ATTNDEF attn_status attn_transformer_init_in(attn_transformer *m, const attn_transformer_config *cfg,
                                             attn_rng *rng, void *mem, size_t bytes)
{
    ATTN__NEED(mem); ATTN__NEED(rng);
    return attn__tf_make(m, cfg, rng, mem, bytes);
}

ATTNDEF void attn_transformer_free(attn_transformer *m)
{
    if (!m) return;
    attn_transformer_pack(m, 0);
    if (m->pattern && m->p.owned) ATTN_FREE(m->pattern); /* in the caller's memory with the rest */
    attn_params_free(&m->p);
    m->pattern = NULL;
}



ATTNDEF attn_transformer_tensors attn_transformer_named(const attn_transformer *m, int grad)
{
    attn_transformer_tensors t;
    attn__name_tensors(__func__, &t, sizeof t, attn__tf_gslot, m ? m->at[ATTN__TF_G] : NULL, ATTN__TF_GLOBALS,
                       m ? &m->p : NULL, grad);
    return t;
}

ATTNDEF attn_transformer_layer_tensors attn_transformer_layer_named(const attn_transformer *m, int layer,
                                                                    int grad)
{
    attn_transformer_layer_tensors t;
    int ok = m && layer >= 0 && layer < m->cfg.layers;
    attn__name_tensors(__func__, &t, sizeof t, attn__tf_lslot, ok ? m->at[layer] : NULL, ATTN__TF_SLOTS,
                       ok ? &m->p : NULL, grad);
    return t;
}

/* attn_transformer_pack's panels (m->packed): each layer's Wq, Wk, Wv, Wo, W1, W3, W2 (NULL where the
   model has none) packed by the kernels named isa (attn_simd_name). */
#define ATTN__TF_PACKED 7
typedef struct {
    const char *isa;
    const attn_float *at[ATTN_MAX_LAYERS][ATTN__TF_PACKED];
} attn__tf_packed;

/* The matrices attn_transformer_pack packs, [OC, C] each (C: in, OC: out). */
static void attn__tf_pack_list(const attn_transformer *m, int l, const attn_float **W, int *C, int *OC)
{
    const attn_transformer_config *c = &m->cfg;
    const attn_transformer_layer_tensors T = attn_transformer_layer_named(m, l, 0);
    int KH = c->kv_heads ? c->kv_heads : c->heads, j;
    const attn_float *w[ATTN__TF_PACKED];
    int in[ATTN__TF_PACKED], out[ATTN__TF_PACKED];
    w[0] = T.Wq; in[0] = c->d; out[0] = c->heads * c->dk;
    w[1] = T.Wk; in[1] = c->d; out[1] = KH * c->dk;
    w[2] = T.Wv; in[2] = c->d; out[2] = KH * c->dv;
    w[3] = T.Wo; in[3] = c->heads * c->dv; out[3] = c->d;
    w[4] = T.W1; in[4] = c->d; out[4] = c->mlp;
    w[5] = T.W3; in[5] = c->d; out[5] = c->mlp;
    w[6] = T.W2; in[6] = c->mlp; out[6] = c->d;
    for (j = 0; j < ATTN__TF_PACKED; j++) W[j] = w[j], C[j] = in[j], OC[j] = out[j];
}

/* Layer l's panels for the kernels running now, or NULL. */
static const attn_float *const *attn__tf_panels(const attn_transformer *m, int l)
{
    const attn__tf_packed *k = (const attn__tf_packed *)m->packed;
    return k && !strcmp(k->isa, attn_simd_name()) ? k->at[l] : NULL;
}

ATTNDEF attn_status attn_transformer_pack(attn_transformer *m, int on)
{
    const attn_float *W[ATTN__TF_PACKED];
    int C[ATTN__TF_PACKED], OC[ATTN__TF_PACKED], l, j, pass;
    size_t total = 0, n, line = ATTN_ALIGN / sizeof(attn_float);
    attn__tf_packed *k = NULL;
    ATTN__NEED(m);
    if (m->packed) ATTN_FREE(m->packed);
    m->packed = NULL;
    if (!on) return ATTN_OK;
    for (pass = 0; pass < 2; pass++) { /* the size, then the panels */
        attn_float *dst = pass ? attn__align_ptr(k + 1, 0) : NULL;
        for (l = 0; l < m->cfg.layers; l++) {
            attn__tf_pack_list(m, l, W, C, OC);
            for (j = 0; j < ATTN__TF_PACKED; j++) { /* each aligned */
                n = W[j] ? (attn__panels_floats(C[j], OC[j]) + line - 1) / line * line : 0;
                if (!pass) total += n;
                else if ((k->at[l][j] = W[j] ? dst : NULL))
                    ATTN__ISA(panels_pack)(1, W[j], C[j], C[j], OC[j], dst), dst += n;
            }
        }
        n = sizeof *k + ATTN_ALIGN + sizeof(attn_float) * total;
        if (!pass && !(k = (attn__tf_packed *)ATTN_MALLOC(n)))
            return attn__fail(ATTN_ERR_NOMEM, "%s: no memory for %lu bytes", __func__, (unsigned long)n);
    }
    k->isa = attn_simd_name();
    m->packed = k;
    return ATTN_OK;
}

/* Layer l as an attn_layer over the model's parameters, with the T5 bias [H, T, T] (NULL without;
   the size queries pass any non-NULL pointer, as the bias' gradient needs work). */
static void attn__tf_layer(const attn_transformer *m, int l, const attn_float *bias, attn_layer *L,
                           attn_mod *mod)
{
    const attn_transformer_config *c = &m->cfg;
    const attn_transformer_layer_tensors W = attn_transformer_layer_named(m, l, 0);
    const attn_float *const *P;
    attn__tf_pat p;
    attn_mod_config mc;
    attn__tf_pattern_map(c, m->pattern, &p);
    memset(L, 0, sizeof *L);
    L->att.kind = c->kinds[l];
    L->att.H = c->heads;
    L->att.kv_heads = c->kv_heads;
    L->att.dk = c->dk;
    L->att.dv = c->dv;
    L->att.causal = c->causal;
    L->att.scale = c->scale;
    L->att.lambda = W.lambda; L->att.gain = W.gain; L->att.w2 = W.w2;
    L->att.lambda_init = attn_diff_lambda_init(l);
    L->att.bias = c->t5 ? bias : NULL;
    L->att.window = p.dil ? c->window : 0;
    L->att.dilation = p.dil;
    L->att.global = c->global ? p.global : NULL;
    L->att.block = p.layout ? c->bigbird_block : 0; /* the layout for max_T (see attn__tf_layout_T) */
    L->att.layout = p.layout;
    L->att.dropout = m->training ? c->dropout : 0;
    L->att.dropout_seed = m->seed + 0x9E3779B97F4A7C15ull * (uint64_t)(l + 1);
    L->C = L->Cout = c->d;
    L->rope = c->pos == ATTN_POS_ROPE;
    L->Wq = W.Wq; L->bq = W.bq; L->Wk = W.Wk; L->bk = W.bk;
    L->Wv = W.Wv; L->bv = W.bv; L->Wo = W.Wo; L->bo = W.bo;
    L->kproj = c->linformer_k; L->n_max = c->max_T; L->E = W.Elin; L->F = W.Flin;
    L->qnorm = W.qnorm; L->knorm = W.knorm;
    if ((P = attn__tf_panels(m, l)) != NULL) { L->Pq = P[0]; L->Pk = P[1]; L->Pv = P[2]; L->Po = P[3]; }
    L->rope_theta = c->rope_theta;
    if ((c->mods[l] || c->masks[l]) && !mod) L->att.mod = &attn__mod_rows[c->mods[l]]; /* the sizes */
    else if ((c->mods[l] || c->masks[l]) && attn__tf_mod_config(__func__, c, l, &mc) == ATTN_OK) {
        const attn_transformer_layer_tensors G = attn_transformer_layer_named(m, l, 1);
        attn_mod_init(mod, &mc, W.relbias ? W.relbias : W.temperature, G.relbias ? G.relbias : G.temperature);
        L->att.mod = &mod->fn;
    }
}

/* With BigBird blocks, the layout for sequences of T tokens, [H, n, n] with n = ceil(T / b): the
   model's own (drawn for max_T) when n is its block count, else its first n blocks copied into
   dst [H n n] (attn__tf_layout_bytes). */
static size_t attn__tf_layout_bytes(const attn_transformer *m, int T)
{
    size_t n = (size_t)attn__tf_blocks(&m->cfg, T);
    return (size_t)m->cfg.heads * n * n;
}

static void attn__tf_layout_T(const attn_transformer *m, int T, attn_layer *L, unsigned char *dst)
{
    int n = attn__tf_blocks(&m->cfg, T), nm = attn__tf_blocks(&m->cfg, m->cfg.max_T), h, i;
    if (!L->att.block || n == nm) return;
    for (h = 0; h < m->cfg.heads; h++)
        for (i = 0; i < n; i++)
            memcpy(dst + ((size_t)h * n + i) * n, L->att.layout + ((size_t)h * nm + i) * nm, (size_t)n);
    L->att.layout = dst;
}

static int attn__tf_rows(const attn_transformer *m, int T) { return m->cfg.readout ? m->cfg.readout : T; }

/* The queries layer l computes per sequence: T, or R for the last layer of a model that reads out
   R < T positions (nothing reads its other rows): its attention runs as the last R positions'
   queries over all T keys and its MLP over those R rows. Not with RoPE (attn_layer rotates
   self-attention only), BigBird blocks (the layout is indexed by query row) or Linformer (its
   dropout masks follow the compressed keys), where the last layer runs in full. */
static int attn__tf_q(const attn_transformer *m, int l, int T)
{
    int R = attn__tf_rows(m, T),
        full = m->cfg.pos == ATTN_POS_ROPE || m->cfg.bigbird_block || m->cfg.linformer_k || m->cfg.post_norm;
    return l == m->cfg.layers - 1 && R < T && !full ? R : T;
}

/* Cache, per layer, with N = B T and n = B Tq rows (Tq = attn__tf_q): x (the block's input) and
   a = Norm(x) [N d] each, that norm's mean and rstd [N] each, h and bn = Norm(h) [n d] each, its
   mean and rstd [n] each, u = W1 bn + b1 and g [n mlp] each (glu: then u2 = W3 bn + b3 and
   g = u act(u2); else g = act(u)), the T5 bias [H Tq T] (with t5), aq = a's last Tq rows
   [n d] (only when Tq < T), pn [N d] (post_norm: then a = x, h = x + Attn(a), pn = Norm(h), bn =
   pn + MLP(pn) and the next x = Norm(bn)), then the attention layer's cache (B, Tq, T); after the
   layers x_L [B Tq d] (the last layer's Tq), its read-out rows xr [B R d] (x_L itself when Tq = R)
   and f = Norm(xr) [B R d], its mean and rstd [B R] each. */
typedef struct {
    attn_float *x, *a, *m1, *r1, *h, *bn, *m2, *r2, *u, *g, *u2, *bias, *aq, *att, *pn,
        *next;                                                                /* layer l < layers */
    attn_float *xr, *f, *mf, *rf, *e0, *em, *er; /* l = layers: x is x_L; e0 the embeddings before emb_norm */
} attn__tf_cache;

/* The T5 bias of a layer, [H, Tq, Tk] (0 without t5). */
static size_t attn__tf_bias_floats(const attn_transformer *m, int Tq, int Tk)
{
    return m->cfg.t5 ? (size_t)m->cfg.heads * Tq * Tk : 0;
}

/* The cache of layer l in floats, and its slots when c is not NULL (each block ATTN_ALIGN-rounded). */
static size_t attn__tf_lcache_map(const attn_transformer *m, int l, int B, int T, attn_float *base,
                                  attn__tf_cache *c)
{
    attn__tf_cache t;
    attn_layer L;
    attn_arena ar;
    int Tq = attn__tf_q(m, l, T);
    size_t N = (size_t)B * T, n = (size_t)B * Tq, d = (size_t)m->cfg.d, mlp = (size_t)m->cfg.mlp,
           glu = m->cfg.glu != 0;
    attn__tf_layer(m, l, m->p.data, &L, NULL);
    attn_arena_measure(&ar); /* carved from base as it is: the layers' caches follow each other */
    ar.base = c ? (unsigned char *)base : NULL;
    if (!c) c = &t;
    c->x = attn__arena_floats(&ar, N * d);
    c->a = attn__arena_floats(&ar, N * d);
    c->m1 = attn__arena_floats(&ar, N);
    c->r1 = attn__arena_floats(&ar, N);
    c->h = attn__arena_floats(&ar, n * d);
    c->bn = attn__arena_floats(&ar, n * d);
    c->m2 = attn__arena_floats(&ar, n);
    c->r2 = attn__arena_floats(&ar, n);
    c->u = attn__arena_floats(&ar, n * mlp);
    c->g = attn__arena_floats(&ar, n * mlp);
    c->u2 = attn__arena_floats(&ar, glu * n * mlp);
    c->bias = attn__arena_floats(&ar, attn__tf_bias_floats(m, Tq, T));
    c->aq = attn__arena_floats(&ar, Tq < T ? n * d : 0);
    c->pn = attn__arena_floats(&ar, m->cfg.post_norm ? N * d : 0);
    c->att = attn__arena_floats(&ar, attn_layer_cache_floats(&L, B, Tq, T));
    c->next = ar.base ? (attn_float *)(ar.base + ar.used) : NULL;
    return ar.used / sizeof(attn_float);
}

/* Where each layer's cache starts (base[layers]: the final norm's), laid out once per model call. */
static void attn__tf_cache_bases(const attn_transformer *m, int B, int T, attn_float *cache,
                                 attn_float **base)
{
    int l;
    for (base[0] = cache, l = 0; l < m->cfg.layers; l++)
        base[l + 1] = base[l] + attn__tf_lcache_map(m, l, B, T, NULL, NULL);
}

/* Maps the cache of layer l, or with l = layers the final norm's, from its start base[l]. */
static void attn__tf_cache_map(const attn_transformer *m, int l, int B, int T, attn_float *const *bases,
                               attn__tf_cache *c)
{
    int R = attn__tf_rows(m, T), Tq = attn__tf_q(m, m->cfg.layers - 1, T);
    size_t Rd = (size_t)B * R * m->cfg.d;
    attn_float *base = bases[l];
    memset(c, 0, sizeof *c);
    if (l < m->cfg.layers) {
        attn__tf_lcache_map(m, l, B, T, base, c);
        return;
    }
    c->x = base;
    c->xr = c->x + (Tq == R ? 0 : (size_t)B * Tq * m->cfg.d);
    c->f = c->xr + Rd; c->mf = c->f + Rd; c->rf = c->mf + Rd / m->cfg.d;
    c->e0 = c->rf + Rd / m->cfg.d; c->em = c->e0 + (size_t)B * T * m->cfg.d; c->er = c->em + (size_t)B * T;
}

ATTNDEF size_t attn_transformer_cache_floats(const attn_transformer *m, int B, int T)
{
    size_t n = 0, R, Tq;
    int l;
    if (!attn__sizes_ok(__func__, m, B, T, m ? m->cfg.max_T : 0)) return 0;
    for (l = 0; l < m->cfg.layers; l++) n += attn__tf_lcache_map(m, l, B, T, NULL, NULL);
    R = (size_t)B * attn__tf_rows(m, T); Tq = (size_t)B * attn__tf_q(m, m->cfg.layers - 1, T);
    return n + (Tq + (Tq == R ? 0 : R) + R) * m->cfg.d + 2 * R +
           (m->cfg.emb_norm ? (size_t)B * T * (m->cfg.d + 2) : 0);
}

/* The largest attention layer's work. */
static size_t attn__tf_layer_work(const attn_transformer *m, int B, int T)
{
    attn_layer L;
    size_t w = 0;
    int l;
    for (l = 0; l < m->cfg.layers; l++) {
        attn__tf_layer(m, l, m->p.data, &L, NULL);
        L.att.dropout = m->cfg.dropout; /* sized for training, whatever m->training says now */
        w = ATTN__MAX(w, attn_layer_work_bytes(&L, B, attn__tf_q(m, l, T), T));
    }
    return w;
}

/* Work: the layers' work [lw bytes], then dX, dH, dA [N d], dG, dU [N mlp], the T5 bias' gradient
   [H T T], with a pruned last layer its queries' da [B Tq d], the segment ids [N] (ints, with
   doc_mask), BigBird's layout for T (attn__tf_layout_T), the keys pad_mask leaves visible [N] and (pad_mask
   2) the embedding's rows [N] (ints);
   its bytes, and with work the blocks in *w. */
typedef struct {
    void *layer;
    size_t lw;
    attn_float *dX, *dH, *dA, *dG, *dU, *dB, *dAq;
    int *seg, *ids;
    unsigned char *layout, *kmask;
} attn__tf_work;

static size_t attn__tf_work_map(const attn_transformer *m, int B, int T, void *work, attn__tf_work *w)
{
    size_t N = (size_t)B * T, Nd = N * m->cfg.d, Nm = N * m->cfg.mlp,
           Tq = (size_t)attn__tf_q(m, m->cfg.layers - 1, T);
    attn_arena ar;
    attn__arena_plan(&ar, work);
    w->lw = attn__tf_layer_work(m, B, T);
    w->layer = attn__arena_take(&ar, w->lw);
    w->dX = attn__arena_floats(&ar, Nd);
    w->dH = attn__arena_floats(&ar, Nd);
    w->dA = attn__arena_floats(&ar, Nd);
    w->dG = attn__arena_floats(&ar, Nm);
    w->dU = attn__arena_floats(&ar, Nm);
    w->dB = attn__arena_floats(&ar, attn__tf_bias_floats(m, T, T));
    w->dAq = attn__arena_floats(&ar, Tq < (size_t)T ? B * Tq * m->cfg.d : 0);
    w->seg = (int *)attn__arena_take(&ar, m->cfg.doc_mask ? sizeof(int) * N : 0);
    w->kmask = (unsigned char *)attn__arena_take(&ar, m->cfg.pad_mask ? N : 0);
    w->layout = (unsigned char *)attn__arena_take(&ar, attn__tf_layout_bytes(m, T));
    w->ids = (int *)attn__arena_take(&ar, m->cfg.pad_mask == 2 ? sizeof(int) * N : 0);
    return ar.used + ATTN_ALIGN;
}

ATTNDEF size_t attn_transformer_work_bytes(const attn_transformer *m, int B, int T)
{
    attn__tf_work w;
    if (!attn__sizes_ok(__func__, m, B, T, m ? m->cfg.max_T : 0)) return 0;
    return attn__tf_work_map(m, B, T, NULL, &w);
}

/* out = Norm(in) over rows [N, d] with the gain and bias of a slot pair (RMSNorm keeps no mean). */
static void attn__tf_norm(const attn_transformer *m, attn_float *out, attn_float *mean, attn_float *rstd,
                          const attn_float *in, const attn_float *g, const attn_float *b, size_t N)
{
    if (m->cfg.norm == ATTN_NORM_RMS) attn_rmsnorm_forward(out, rstd, in, g, (int)N, m->cfg.d, m->cfg.eps);
    else attn_layernorm_forward(out, mean, rstd, in, g, b, (int)N, m->cfg.d, m->cfg.eps, ATTN_LN_EPS_INSIDE);
}

/* din += Norm'(in) dout, dg (and db) accumulated. */
static void attn__tf_norm_back(const attn_transformer *m, attn_float *din, attn_float *dg, attn_float *db,
                               const attn_float *dout, const attn_float *in, const attn_float *g,
                               const attn_float *mean, const attn_float *rstd, size_t N)
{
    if (m->cfg.norm == ATTN_NORM_RMS) attn_rmsnorm_backward(din, dg, dout, in, g, rstd, (int)N, m->cfg.d);
    else
        attn_layernorm_backward(din, dg, db, dout, in, g, mean, rstd, (int)N, m->cfg.d, m->cfg.eps,
                                ATTN_LN_EPS_INSIDE);
}

/* The last R of every T rows of d floats, part [B, R, d] against full [B, T, d]. */
enum {
    ATTN__ROWS_GET,
    ATTN__ROWS_ADD_GET,
    ATTN__ROWS_ADD_PUT
}; /* part = full's; part += full's; full's += part */
static void attn__tf_lastrows(attn_float *part, attn_float *full, int B, int T, int R, int d, int op)
{
    int b;
    for (b = 0; b < B; b++) {
        attn_float *f = full + ((size_t)b * T + (T - R)) * d, *p = part + (size_t)b * R * d;
        if (op == ATTN__ROWS_GET) memcpy(p, f, sizeof(attn_float) * (size_t)R * d);
        else if (op == ATTN__ROWS_ADD_GET) attn_axpy((size_t)R * d, 1, f, p);
        else attn_axpy((size_t)R * d, 1, p, f);
    }
}

/* With doc_mask, the segment ids of tokens [B, T] (a running count of bos tokens per sequence),
   written after the float buffers of work; else NULL. */
static const int *attn__tf_segments(const attn_transformer *m, const int *tokens, int B, int T, int *seg)
{
    int b, t;
    if (!m->cfg.doc_mask) return NULL;
    for (b = 0; b < B; b++)
        for (t = 0; t < T; t++)
            seg[(size_t)b * T + t] = (t ? seg[(size_t)b * T + t - 1] : 0) +
                                     (tokens[(size_t)b * T + t] == m->cfg.bos);
    return seg;
}

/* With pad_mask, the keys a padded batch's tokens [N] leave visible (tokens other than pad, or with
   pad_mask 2 other than -1) in kmask, returned; NULL when every key is visible (the attention then
   takes its fastest path). */
static const unsigned char *attn__tf_pad_mask(const attn_transformer *m, const int *tokens, size_t N,
                                              unsigned char *kmask)
{
    size_t i;
    int any = 0, padding = m->cfg.pad_mask == 2 ? -1 : m->cfg.pad;
    for (i = 0; m->cfg.pad_mask && i < N; i++) any |= !(kmask[i] = tokens[i] != padding);
    return any ? kmask : NULL;
}

/* The embedding's rows for tokens [N]: the tokens, or with pad_mask 2 a copy in ids with -1 as pad. */
static const int *attn__tf_ids(const attn_transformer *m, const int *tokens, size_t N, int *ids)
{
    size_t i;
    if (m->cfg.pad_mask != 2 || !tokens) return tokens;
    for (i = 0; i < N; i++) ids[i] = tokens[i] == -1 ? m->cfg.pad : tokens[i];
    return ids;
}

static attn_status attn__tf_args(const char *fn, const attn_transformer *m, const attn_float *cache,
                                 size_t cache_floats, const int *tokens, const attn_float *x, int B, int T,
                                 const void *work, size_t work_bytes)
{
    if (!m || !cache || !work) return attn__fail(ATTN_ERR_ARG, "%s: the model, cache or work is NULL", fn);
    ATTN__TRY(attn__tf_check(fn, &m->cfg));
    if (m->cfg.vocab ? !tokens || x : !x || tokens)
        return attn__fail(ATTN_ERR_ARG, "%s: the model takes %s: pass them, and NULL for the other", fn,
                          m->cfg.vocab ? "tokens" : "dense inputs x");
    if (m->cfg.doc_mask && !m->cfg.vocab)
        return attn__fail(ATTN_ERR_ARG, "%s: document masking needs token inputs", fn);
    if (B < 1 || T < 1 || T > m->cfg.max_T || attn__tf_rows(m, T) > T)
        return attn__fail(ATTN_ERR_SHAPE, "%s: B = %d >= 1 and T = %d in max(1, readout %d) .. max_T %d", fn,
                          B, T, m->cfg.readout, m->cfg.max_T);
    if (work_bytes < attn_transformer_work_bytes(m, B, T))
        return attn__fail(ATTN_ERR_ARG, "%s: work has %lu bytes, attn_transformer_work_bytes() asks for %lu",
                          fn, (unsigned long)work_bytes, (unsigned long)attn_transformer_work_bytes(m, B, T));
    return attn__cache_ok(fn, cache_floats, attn_transformer_cache_floats(m, B, T),
                          "attn_transformer_cache_floats");
}

/* The MLP half of a block over n rows: x' = h + W2 g + b2 with a = Norm(h) (its mean and rstd [n]),
   u = W1 a + b1 and g = act(u), or with glu u2 = W3 a + b3 and g = u act(u2) ([n mlp] each). */
static void attn__tf_mlp_core(const attn_transformer *m, int l, const attn_transformer_layer_tensors *W,
                              attn_float *next, const attn_float *h, const attn_float *a, attn_float *u,
                              attn_float *u2, attn_float *g, size_t n);
static void attn__tf_mlp_forward(const attn_transformer *m, int l, const attn_transformer_layer_tensors *W,
                                 attn_float *next, const attn_float *h, attn_float *a, attn_float *mean,
                                 attn_float *rstd, attn_float *u, attn_float *u2, attn_float *g, size_t n)
{
    attn__tf_norm(m, a, mean, rstd, h, W->n2g, W->n2b, n);
    attn__tf_mlp_core(m, l, W, next, h, a, u, u2, g, n);
}

/* next = h + W2 g + b2 with g from a as above (post_norm: h = a, no norm before it); layer l. */
static void attn__tf_mlp_core(const attn_transformer *m, int l, const attn_transformer_layer_tensors *W,
                              attn_float *next, const attn_float *h, const attn_float *a, attn_float *u,
                              attn_float *u2, attn_float *g, size_t n)
{
    const attn_transformer_config *cf = &m->cfg;
    const attn_float *const *P = attn__tf_panels(m, l), *none[ATTN__TF_PACKED] = {NULL};
    size_t nm = n * cf->mlp;
    if (!P) P = none;
    attn__linear_p(u, (size_t)cf->mlp, a, W->W1, P[4], W->b1, (int)n, cf->d, cf->mlp);
    if (cf->glu) {
        attn__linear_p(u2, (size_t)cf->mlp, a, W->W3, P[5], W->b3, (int)n, cf->d, cf->mlp);
        ATTN__ISA(glu_forward)(g, u, u2, nm, cf->act);
    } else {
        attn_act_forward(g, u, nm, cf->act);
    }
    attn__linear_p(next, (size_t)cf->d, g, W->W2, P[6], W->b2, (int)n, cf->mlp, cf->d);
    attn_axpy(n * cf->d, 1, h, next);
}

ATTNDEF attn_status attn_transformer_forward(const attn_transformer *m, attn_float *y, attn_float *cache,
                                             size_t cache_floats, const int *tokens, const attn_float *x,
                                             int B, int T, void *work, size_t work_bytes)
{
    const attn_transformer_config *cf;
    attn_transformer_tensors M;
    attn__tf_cache c, f;
    attn_float *bases[ATTN_MAX_LAYERS + 1];
    attn__tf_work w;
    attn_layer L;
    attn_mod md; /* the layer's modifier, if any */
    const int *seg;
    const unsigned char *kmask;
    size_t N;
    int l, R;
    ATTN__TRY(attn__tf_args(__func__, m, cache, cache_floats, tokens, x, B, T, work, work_bytes));
    ATTN__NEED(y);
    M = attn_transformer_named(m, 0);
    attn__tf_work_map(m, B, T, work, &w);
    seg = attn__tf_segments(m, tokens, B, T, w.seg);
    cf = &m->cfg; N = (size_t)B * T; R = attn__tf_rows(m, T);
    attn__tf_cache_bases(m, B, T, cache, bases);
    attn__tf_cache_map(m, 0, B, T, bases, &c);
    if (tokens)
        ATTN__TRY(
            attn_embedding_forward(c.x, attn__tf_ids(m, tokens, N, w.ids), M.E, (int)N, cf->vocab, cf->d));
    else
        attn_linear_forward(c.x, x, M.Win, M.bin, (int)N, cf->in_dim, cf->d);
    if (cf->pos == ATTN_POS_LEARNED)
        attn_pos_learned_forward(c.x, c.x, M.P, B, T, cf->d, cf->max_T);
    if (cf->emb_norm) { /* x_0 = Norm(e0), e0 kept for backward */
        attn__tf_cache_map(m, cf->layers, B, T, bases, &f);
        memcpy(f.e0, c.x, sizeof(attn_float) * N * cf->d);
        attn__tf_norm(m, c.x, f.em, f.er, f.e0, M.neg, M.neb, N);
    }
    kmask = attn__tf_pad_mask(m, tokens, N, w.kmask);
    for (l = 0; l < cf->layers; l++) {
        const attn_transformer_layer_tensors W = attn_transformer_layer_named(m, l, 0);
        int Tq = attn__tf_q(m, l, T);
        size_t n = (size_t)B * Tq;
        attn__tf_cache_map(m, l, B, T, bases, &c);
        attn__tf_layer(m, l, c.bias, &L, &md);
        attn__tf_layout_T(m, T, &L, w.layout);
        L.att.segment = seg;
        L.att.key_mask = kmask;
        if (cf->post_norm) { /* x' = Norm2(pn + MLP(pn)), pn = Norm1(x + Attn(x)) */
            memcpy(c.a, c.x, sizeof(attn_float) * N * cf->d);
            ATTN__TRY(attn_layer_forward(&L, c.h, c.att, ATTN__CACHE_OWN, c.a, NULL, B, T, T, w.layer,
                                         w.lw));
            attn_axpy(N * cf->d, 1, c.x, c.h);
            attn__tf_norm(m, c.pn, c.m1, c.r1, c.h, W.n1g, W.n1b, N);
            attn__tf_mlp_core(m, l, &W, c.bn, c.pn, c.pn, c.u, c.u2, c.g, N);
            attn__tf_norm(m, c.next, c.m2, c.r2, c.bn, W.n2g, W.n2b, N);
            continue;
        }
        if (cf->t5)
            attn_t5_bias_forward(c.bias, W.t5, cf->heads, Tq, T, cf->max_T);
        /* h = x + Attn(Norm(x)) over the layer's Tq query rows (the last ones) */
        attn__tf_norm(m, c.a, c.m1, c.r1, c.x, W.n1g, W.n1b, N);
        if (Tq < T) attn__tf_lastrows(c.aq, c.a, B, T, Tq, cf->d, ATTN__ROWS_GET);
        ATTN__TRY(attn_layer_forward(&L, c.h, c.att, ATTN__CACHE_OWN, Tq < T ? c.aq : c.a,
                                     Tq < T ? c.a : NULL, B, Tq, T, w.layer, w.lw));
        attn__tf_lastrows(c.h, c.x, B, T, Tq, cf->d, ATTN__ROWS_ADD_GET);
        attn__tf_mlp_forward(m, l, &W, c.next, c.h, c.bn, c.m2, c.r2, c.u, c.u2, c.g, n);
    }
    /* y = Wout Norm(xr) + bout, xr the read-out rows of x_L */
    attn__tf_cache_map(m, cf->layers, B, T, bases, &c);
    if (c.xr != c.x)
        attn__tf_lastrows(c.xr, c.x, B, attn__tf_q(m, cf->layers - 1, T), R, cf->d, ATTN__ROWS_GET);
    if (cf->post_norm) memcpy(c.f, c.xr, sizeof(attn_float) * B * R * cf->d); /* no final norm */
    else attn__tf_norm(m, c.f, c.mf, c.rf, c.xr, M.nfg, M.nfb, (size_t)B * R);
    if (!cf->out) return memcpy(y, c.f, sizeof(attn_float) * B * R * cf->d), ATTN_OK; /* no head */
    return attn_linear_forward(y, c.f, M.Wout, M.bout, B * R, cf->d, cf->out);
}

ATTNDEF attn_status attn_transformer_backward(attn_transformer *m, const attn_float *dy,
                                              const attn_float *cache, size_t cache_floats, const int *tokens,
                                              const attn_float *x, int B, int T, void *work,
                                              size_t work_bytes)
{
    const attn_transformer_config *cf;
    attn__tf_cache c;
    attn_float *bases[ATTN_MAX_LAYERS + 1];
    attn_layer L;
    attn_mod md; /* the layer's modifier, if any */
    attn_layer_grads lg;
    attn_transformer_tensors M, MG;
    attn__tf_work w;
    attn_float *dX, *dH, *dA, *dG, *dU, *dB, *dAq;
    const attn_float *mi;
    const unsigned char *kmask;
    const int *seg;
    size_t N, Nd, Rd;
    int l, R, TqL;
    ATTN__TRY(attn__tf_args(__func__, m, cache, cache_floats, tokens, x, B, T, work, work_bytes));
    ATTN__NEED(dy);
    if (m->packed)
        return attn__fail(ATTN_ERR_ARG, "%s: the weights are packed for inference (unpack them first: "
                          "attn_transformer_pack(m, 0))", __func__);
    M = attn_transformer_named(m, 0); MG = attn_transformer_named(m, 1);
    attn__tf_work_map(m, B, T, work, &w);
    seg = attn__tf_segments(m, tokens, B, T, w.seg);
    cf = &m->cfg; N = (size_t)B * T; Nd = N * cf->d; R = attn__tf_rows(m, T); Rd = (size_t)B * R * cf->d;
    TqL = attn__tf_q(m, cf->layers - 1, T);
    dX = w.dX; dH = w.dH; dA = w.dA; dG = w.dG; dU = w.dU; dB = w.dB; dAq = w.dAq;
    kmask = attn__tf_pad_mask(m, tokens, N, w.kmask);
    /* y = Wout f + bout, f = Norm(xr), xr = read-out rows of x_L: df in dA, dxr in dH, dx_L [B TqL d] in dX
       */
    attn__tf_cache_bases(m, B, T, attn__unconst(cache), bases);
    attn__tf_cache_map(m, cf->layers, B, T, bases, &c);
    if (cf->out) attn__linear_back(dA, MG.Wout, MG.bout, dy, c.f, M.Wout, B * R, cf->d, cf->out, 0);
    else memcpy(dA, dy, sizeof(attn_float) * Rd); /* no head */
    if (cf->post_norm) memcpy(dH, dA, sizeof(attn_float) * Rd); /* no final norm */
    else {
        memset(dH, 0, sizeof(attn_float) * Rd);
        attn__tf_norm_back(m, dH, MG.nfg, MG.nfb, dA, c.xr, M.nfg, c.mf, c.rf, (size_t)B * R);
    }
    memset(dX, 0, sizeof(attn_float) * B * TqL * cf->d);
    attn__tf_lastrows(dH, dX, B, TqL, R, cf->d, ATTN__ROWS_ADD_PUT);
    for (l = cf->layers - 1; l >= 0; l--) {
        const attn_transformer_layer_tensors W = attn_transformer_layer_named(m, l, 0),
                                             G = attn_transformer_layer_named(m, l, 1);
        int Tq = attn__tf_q(m, l, T);
        size_t n = (size_t)B * Tq;
        attn__tf_cache_map(m, l, B, T, bases, &c);
        attn__tf_layer(m, l, c.bias, &L, &md);
        attn__tf_layout_T(m, T, &L, w.layout);
        L.att.segment = seg;
        L.att.key_mask = kmask;
        /* x' = h + W2 g + b2, g = act(u) or u act(u2), u = W1 bn + b1, u2 = W3 bn + b3, bn = Norm(h),
           over the layer's n rows: dx' in dX, dh in dH. post_norm: x' = Norm2(bn), bn = pn + MLP(pn):
           dbn in dH, and the MLP reads pn */
        if (cf->post_norm) {
            memset(dH, 0, sizeof(attn_float) * Nd);
            attn__tf_norm_back(m, dH, G.n2g, G.n2b, dX, c.bn, W.n2g, c.m2, c.r2, N);
        } else
            memcpy(dH, dX, sizeof(attn_float) * n * cf->d);
        mi = cf->post_norm ? c.pn : c.bn;
        attn__linear_back(dG, G.W2, G.b2, dH, c.g, W.W2, (int)n, cf->mlp, cf->d, 0);
        /* glu: g = u act(u2): du = dg act(u2) (dU) and du2 = dg u act'(u2) (dG), in one pass */
        if (cf->glu) {
            ATTN__ISA(glu_backward)(dU, dG, dG, c.u, c.u2, n * cf->mlp, cf->act, 0);
            attn__linear_back(dA, G.W1, G.b1, dU, mi, W.W1, (int)n, cf->d, cf->mlp, 0);
            attn_linear_backward(dA, G.W3, G.b3, dG, mi, W.W3, (int)n, cf->d, cf->mlp);
        } else {
            attn__act_back(dU, dG, c.u, n * cf->mlp, cf->act, 0);
            attn__linear_back(dA, G.W1, G.b1, dU, mi, W.W1, (int)n, cf->d, cf->mlp, 0);
        }
        if (cf->post_norm) { /* pn = Norm1(h): dpn = dbn + MLP'(dbn) into dh */
            attn_axpy(Nd, 1, dH, dA);
            memset(dH, 0, sizeof(attn_float) * Nd);
            attn__tf_norm_back(m, dH, G.n1g, G.n1b, dA, c.h, W.n1g, c.m1, c.r1, N);
        } else
            attn__tf_norm_back(m, dH, G.n2g, G.n2b, dA, c.h, W.n2g, c.m2, c.r2, n);
        /* h = x + Attn(a), a = Norm(x), h on the last Tq rows: dx in dX */
        if (Tq < T) {
            memset(dX, 0, sizeof(attn_float) * Nd);
            attn__tf_lastrows(dH, dX, B, T, Tq, cf->d, ATTN__ROWS_ADD_PUT);
        } else {
            memcpy(dX, dH, sizeof(attn_float) * Nd);
        }
        memset(dA, 0, sizeof(attn_float) * Nd);
        memset(&lg, 0, sizeof lg);
        lg.dWq = G.Wq; lg.dbq = G.bq; lg.dWk = G.Wk; lg.dbk = G.bk;
        lg.dWv = G.Wv; lg.dbv = G.bv; lg.dWo = G.Wo; lg.dbo = G.bo;
        lg.dlambda = G.lambda; lg.dgain = G.gain; lg.dw2 = G.w2; lg.dE = G.Elin; lg.dF = G.Flin;
        lg.dqnorm = G.qnorm; lg.dknorm = G.knorm;
        lg.dbias = cf->t5 ? dB : NULL;
        if (cf->t5) memset(dB, 0, sizeof(attn_float) * attn__tf_bias_floats(m, Tq, T));
        if (Tq < T) memset(dAq, 0, sizeof(attn_float) * n * cf->d);
        ATTN__TRY(attn_layer_backward(&L, Tq < T ? dAq : dA, Tq < T ? dA : NULL, &lg, dH, Tq < T ? c.aq : c.a,
                                      Tq < T ? c.a : NULL, c.att, ATTN__CACHE_OWN, B, Tq, T, w.layer, w.lw));
        if (Tq < T)
            attn__tf_lastrows(dAq, dA, B, T, Tq, cf->d,
                              ATTN__ROWS_ADD_PUT); /* the queries' da joins the keys' and values' */
        if (cf->t5) attn_t5_bias_backward(G.t5, dB, cf->heads, Tq, T, cf->max_T);
        if (cf->post_norm) attn_axpy(Nd, 1, dA, dX); /* post_norm: a = x */
        else attn__tf_norm_back(m, dX, G.n1g, G.n1b, dA, c.x, W.n1g, c.m1, c.r1, N);
    }
    if (cf->emb_norm) { /* x_0 = Norm(e0): de0 in dH, then dX */
        attn__tf_cache_map(m, cf->layers, B, T, bases, &c);
        memset(dH, 0, sizeof(attn_float) * Nd);
        attn__tf_norm_back(m, dH, MG.neg, MG.neb, dX, c.e0, M.neg, c.em, c.er, N);
        memcpy(dX, dH, sizeof(attn_float) * Nd);
    }
    /* x_0 = E[tok] or Win x + bin (+ P[t]) */
    if (cf->pos == ATTN_POS_LEARNED)
        attn_pos_learned_backward(NULL, MG.P, dX, B, T, cf->d, cf->max_T);
    if (x)
        return attn_linear_backward(NULL, MG.Win, MG.bin, dX, x, M.Win, (int)N, cf->in_dim, cf->d);
    return attn_embedding_backward(MG.E, dX, attn__tf_ids(m, tokens, N, w.ids), (int)N, cf->vocab, cf->d);
}

/* attn_transformer_grad's sequences per chunk, and its work: the chunk's cache, outputs, their
   gradient and the passes' work (of *np bytes); returns its bytes (with slack for alignment). */
static int attn__tf_grad_chunk(int B, int T, int chunk)
{
    return ATTN__MIN(B, chunk > 0 ? chunk : ATTN__MAX(1, ATTN_CHUNK_TOKENS / T));
}
static size_t attn__tf_grad_map(const attn_transformer *m, int nb, int T, void *work, attn_float **cache,
                                attn_float **y, attn_float **dy, void **pass, size_t *np)
{
    attn_arena ar;
    size_t ny = (size_t)nb * attn__tf_rows(m, T) * (m->cfg.out ? m->cfg.out : m->cfg.d); /* no head: d */
    *np = attn_transformer_work_bytes(m, nb, T);
    attn__arena_plan(&ar, work);
    *cache = attn__arena_floats(&ar, attn_transformer_cache_floats(m, nb, T));
    *y = attn__arena_floats(&ar, ny);
    *dy = attn__arena_floats(&ar, ny);
    *pass = attn__arena_take(&ar, *np);
    return ar.used + ATTN_ALIGN;
}

ATTNDEF size_t attn_transformer_grad_work_bytes(const attn_transformer *m, int B, int T, int chunk)
{
    attn_float *c, *y, *dy;
    void *pass;
    size_t np;
    if (!attn__sizes_ok(__func__, m, B, T, m ? m->cfg.max_T : 0)) return 0;
    if (chunk < 0) return attn__fail(ATTN_ERR_ARG, "%s: chunk = %d, must be >= 0", __func__, chunk), 0;
    return attn__tf_grad_map(m, attn__tf_grad_chunk(B, T, chunk), T, NULL, &c, &y, &dy, &pass, &np);
}

ATTNDEF attn_status attn_transformer_grad(attn_transformer *m, attn_transformer_loss_fn loss, void *ctx,
                                          const int *tokens, const attn_float *x, int B, int T, int chunk,
                                          double *total, void *work, size_t work_bytes)
{
    attn_float *cache, *y, *dy;
    void *pass;
    size_t need, np, nf, i;
    double sum = 0;
    int nc, b0, in;
    const char *fn = __func__;
    if (!m || !loss || !work) return attn__fail(ATTN_ERR_ARG, "%s: the model, loss or work is NULL", fn);
    need = attn_transformer_grad_work_bytes(m, B, T, chunk);
    if (!need) return attn_last_status();
    if (work_bytes < need)
        return attn__fail(ATTN_ERR_ARG, "%s: work has %lu bytes, %s_work_bytes() asks for %lu", fn,
                          (unsigned long)work_bytes, fn, (unsigned long)need);
    nc = attn__tf_grad_chunk(B, T, chunk);
    attn__tf_grad_map(m, nc, T, work, &cache, &y, &dy, &pass, &np);
    nf = attn_transformer_cache_floats(m, nc, T); /* a chunk's cache */
    in = m->cfg.vocab ? 1 : m->cfg.in_dim;
    for (i = 0; tokens && m->cfg.vocab && i < (size_t)B * T; i++) /* all of them, before any gradient */
        if (tokens[i] < (m->cfg.pad_mask == 2 ? -1 : 0) || tokens[i] >= m->cfg.vocab)
            return attn__fail(ATTN_ERR_ARG, "%s: tokens[%lu] = %d is outside [%d, %d)", fn, (unsigned long)i,
                              tokens[i], m->cfg.pad_mask == 2 ? -1 : 0, m->cfg.vocab);
    for (b0 = 0; b0 < B; b0 += nc) {
        int nb = ATTN__MIN(nc, B - b0);
        const int *tok = tokens ? tokens + (size_t)b0 * T : NULL;
        const attn_float *xs = x ? x + (size_t)b0 * T * in : NULL;
        ATTN__TRY(attn_transformer_forward(m, y, cache, nf, tok, xs, nb, T, pass, np));
        sum += loss(ctx, b0, nb, y, dy);
        ATTN__TRY(attn_transformer_backward(m, dy, cache, nf, tok, xs, nb, T, pass, np));
    }
    if (total) *total = sum;
    return ATTN_OK;
}

/* The weights [B, H, Tq, Tk] of attention layer L, recomputed from its cache (dropout off). Work:
   the attention's workspace, then its output O and stats, which nothing reads; its size. */
static size_t attn__layer_weights_map(const attn_layer *L, int B, int Tq, int Tk, void *work,
                                      attn_attention_desc *d, attn_float **O, attn_float **stats)
{
    attn_arena ar;
    attn__layer_desc(L, B, Tq, Tk, d);
    d->dropout = 0;
    attn__arena_plan(&ar, work);
    attn__arena_take(&ar, attn_attention_workspace(d)); /* the start of work */
    *O = attn__arena_floats(&ar, (size_t)B * d->H * Tq * d->dv);
    *stats = attn__arena_floats(&ar, attn_attention_stats_floats(d));
    return ar.used + ATTN_ALIGN;
}
static size_t attn__layer_weights_bytes(const attn_layer *L, int B, int Tq, int Tk)
{
    attn_attention_desc d;
    attn_float *O, *stats;
    return attn__layer_weights_map(L, B, Tq, Tk, NULL, &d, &O, &stats);
}

static attn_status attn__layer_weights(const attn_layer *L, attn_float *weights, const attn_float *lcache,
                                       int B, int Tq, int Tk, void *work)
{
    attn__layer_cache lc;
    attn_attention_desc d;
    attn_float *O, *stats;
    attn__layer_weights_map(L, B, Tq, Tk, work, &d, &O, &stats);
    attn__layer_cache_map(L, B, Tq, Tk, attn__unconst(lcache), &lc);
    return attn_attention_forward(&d, O, stats, weights, lc.Q, lc.K, lc.V, work,
                                  attn_attention_workspace(&d));
}

/* The weights query's work for layer l: BigBird's layout for T; for a layer that ran only its
   read-out queries (attn__tf_q), which is run again in full, its cache [B T], the T5 bias [H T T]
   and its output [B T d]; then the layer's work or the weights' (rest). Its size. */
typedef struct {
    unsigned char *layout;
    attn_float *lc, *bias, *y;
    void *rest;
    size_t rest_bytes;
} attn__tf_weights_work;

static size_t attn__tf_weights_map(const attn_transformer *m, int l, int B, int T, void *work,
                                   attn__tf_weights_work *w)
{
    int full = attn__tf_q(m, l, T) < T;
    attn_layer L;
    attn_arena ar;
    attn__tf_layer(m, l, m->p.data, &L, NULL);
    attn__arena_plan(&ar, work);
    w->layout = (unsigned char *)attn__arena_take(&ar, attn__tf_layout_bytes(m, T));
    w->lc = attn__arena_floats(&ar, full ? attn_layer_cache_floats(&L, B, T, T) : 0);
    w->bias = attn__arena_floats(&ar, full ? attn__tf_bias_floats(m, T, T) : 0);
    w->y = attn__arena_floats(&ar, full ? (size_t)B * T * m->cfg.d : 0);
    w->rest_bytes =
        ATTN__MAX(attn__layer_weights_bytes(&L, B, T, T), full ? attn_layer_work_bytes(&L, B, T, T) : 0);
    w->rest = attn__arena_take(&ar, w->rest_bytes);
    return ar.used + ATTN_ALIGN;
}

ATTNDEF size_t attn_transformer_weights_work_bytes(const attn_transformer *m, int B, int T)
{
    attn__tf_weights_work w;
    size_t bytes = 0;
    int l;
    if (!attn__sizes_ok(__func__, m, B, T, m ? m->cfg.max_T : 0)) return 0;
    for (l = 0; l < m->cfg.layers; l++)
        bytes = ATTN__MAX(bytes, attn__tf_weights_map(m, l, B, T, NULL, &w));
    return bytes;
}

ATTNDEF attn_status attn_transformer_weights(const attn_transformer *m, attn_float *weights,
                                             const attn_float *cache, size_t cache_floats, int B, int T,
                                             int layer, void *work, size_t work_bytes)
{
    attn__tf_cache c;
    attn_float *bases[ATTN_MAX_LAYERS + 1];
    attn__tf_weights_work w;
    attn_layer L;
    attn_mod md; /* the layer's modifier, if any */
    ATTN__NEED(m); ATTN__NEED(weights); ATTN__NEED(cache); ATTN__NEED(work);
    ATTN__TRY(attn__tf_check(__func__, &m->cfg));
    if (layer < 0 || layer >= m->cfg.layers || B < 1 || T < 1 || T > m->cfg.max_T)
        return attn__fail(ATTN_ERR_SHAPE, "%s: layer %d of %d, B = %d, T = %d (max_T %d)", __func__, layer,
                          m->cfg.layers, B, T, m->cfg.max_T);
    if (work_bytes < attn_transformer_weights_work_bytes(m, B, T))
        return attn__fail(
            ATTN_ERR_ARG, "%s: work has %lu bytes, attn_transformer_weights_work_bytes() asks for %lu",
            __func__, (unsigned long)work_bytes, (unsigned long)attn_transformer_weights_work_bytes(m, B, T));
    ATTN__TRY(attn__cache_ok(__func__, cache_floats, attn_transformer_cache_floats(m, B, T),
                             "attn_transformer_cache_floats"));
    if (m->cfg.pad_mask)
        return attn__fail(ATTN_ERR_ARG,
                          "%s: pad_mask's key mask is not rebuilt here (the tokens are not given)", __func__);
    if (m->cfg.linformer_k)
        return attn__fail(ATTN_ERR_ARG, "%s: a Linformer layer's weights are over its %d compressed keys",
                          __func__, m->cfg.linformer_k);
    attn__tf_cache_bases(m, B, T, attn__unconst(cache), bases);
    attn__tf_cache_map(m, layer, B, T, bases, &c);
    attn__tf_layer(m, layer, c.bias, &L, &md);
    attn__tf_weights_map(m, layer, B, T, work, &w);
    attn__tf_layout_T(m, T, &L, w.layout);
    if (attn__tf_q(m, layer, T) < T) { /* every query again, from the layer's cached input a */
        if (m->cfg.t5)
            attn_t5_bias_forward(w.bias, attn_transformer_layer_named(m, layer, 0).t5, m->cfg.heads, T, T,
                                 m->cfg.max_T);
        L.att.bias = m->cfg.t5 ? w.bias : NULL;
        L.att.dropout = 0;
        ATTN__TRY(attn_layer_forward(&L, w.y, w.lc, ATTN__CACHE_OWN, c.a, NULL, B, T, T, w.rest,
                                     w.rest_bytes));
        return attn__layer_weights(&L, weights, w.lc, B, T, T, w.rest);
    }
    return attn__layer_weights(&L, weights, c.att, B, T, T, w.rest);
}

/* ---- decoding with a key-value cache ---- */

/* Layer l's part of the cache (attn_layer_kv_floats): the keys' or S's floats in *nk, the values' or
   z's in *nv; returns 1 for a recurrent state (the linear-time kinds), 0 for rows. */
static int attn__tf_kv_sizes(const attn_transformer *m, int l, int rows, size_t *nk, size_t *nv)
{
    attn_layer L;
    int recur = (attn__flags(m->cfg.kinds[l]) & ATTN_KF_LINEAR_TIME) != 0;
    attn__tf_layer(m, l, NULL, &L, NULL);
    *nk = attn_layer_kv_floats(&L, recur ? 0 : rows, nv);
    return recur;
}

/* The blocks of decode's work for a step of n new tokens into a cache of `cap` key rows (Tk <= cap):
   the activations, the T5 bias [H, n, cap] and the layers' step work (the largest). */
typedef struct {
    attn_float *x, *a, *h, *mean, *rstd, *u, *g, *u2, *bias;
    void *step;
    size_t step_bytes;
} attn__tf_decode_work;

static size_t attn__tf_decode_map(const attn_transformer *m, int n, int cap, void *work,
                                  attn__tf_decode_work *w)
{
    const attn_transformer_config *c = &m->cfg;
    attn_arena ar;
    attn_layer L;
    size_t nd = (size_t)n * c->d, nm = (size_t)n * c->mlp, step = 0, nk, nv;
    int l, rows;
    for (l = 0; l < c->layers; l++) {
        rows = attn__tf_kv_sizes(m, l, cap, &nk, &nv) ? 0 : cap; /* a recurrent state: 0 */
        attn__tf_layer(m, l, c->t5 ? m->p.data : NULL, &L, NULL); /* any bias pointer: the sizes */
        step = ATTN__MAX(step, attn_layer_step_work_bytes(&L, n, rows));
    }
    attn__arena_plan(&ar, work);
    w->x = attn__arena_floats(&ar, nd);
    w->a = attn__arena_floats(&ar, nd);
    w->h = attn__arena_floats(&ar, nd);
    w->mean = attn__arena_floats(&ar, n);
    w->rstd = attn__arena_floats(&ar, n);
    w->u = attn__arena_floats(&ar, nm);
    w->g = attn__arena_floats(&ar, nm);
    w->u2 = attn__arena_floats(&ar, nm);
    w->bias = attn__arena_floats(&ar, c->t5 ? (size_t)c->heads * n * cap : 0);
    w->step = attn__arena_take(&ar, step);
    w->step_bytes = step;
    return ar.used + ATTN_ALIGN;
}

/* With a window W = window x dilation: the tokens a decode step takes at once (longer calls run in
   chunks), and the key rows a cache of capacity cap keeps (the global tokens, the W positions the
   chunk's first query sees and the chunk); without one, every position, in one step. */
static int attn__tf_chunk(const attn_transformer *m)
{
    const attn_transformer_config *c = &m->cfg;
    int W = c->window * (c->dilation > 1 ? c->dilation : 1);
    return c->window ? ATTN__MAX(W, 16) : c->max_T;
}

static int attn__tf_kv_rows(const attn_transformer *m, int cap)
{
    const attn_transformer_config *c = &m->cfg;
    long rows = (long)c->global + (long)c->window * (c->dilation > 1 ? c->dilation : 1) + attn__tf_chunk(m);
    return c->window && rows < cap ? (int)rows : cap;
}

/* The rows the cache holds now: positions 0 .. global-1 and first .. len-1. */
static int attn__tf_kv_held(const attn_transformer *m, const attn_transformer_kv *kv)
{
    int g = m->cfg.window ? m->cfg.global : 0;
    return ATTN__MIN(kv->len, g) + ATTN__MAX(kv->len - kv->first, 0);
}

/* A hash of the cache's layout for capacity cap: its rows and every layer's block sizes. */
static uint64_t attn__tf_kv_layout(const attn_transformer *m, int cap)
{
    uint64_t w[3 * ATTN_MAX_LAYERS + 2];
    size_t nk, nv;
    int l, n = 0, rows = attn__tf_kv_rows(m, cap);
    w[n++] = (uint64_t)cap;
    w[n++] = (uint64_t)rows;
    for (l = 0; l < m->cfg.layers; l++) {
        w[n++] = (uint64_t)attn__tf_kv_sizes(m, l, rows, &nk, &nv);
        w[n++] = nk;
        w[n++] = nv;
    }
    return attn__fnv1a((const unsigned char *)w, sizeof w[0] * (size_t)n);
}

static size_t attn__tf_kv_map(const attn_transformer *m, int cap, void *mem, attn_transformer_kv *kv)
{
    attn_arena ar;
    size_t nk, nv, tk = 0, tv = 0;
    int l, rows = attn__tf_kv_rows(m, cap);
    for (l = 0; l < m->cfg.layers; l++) attn__tf_kv_sizes(m, l, rows, &nk, &nv), tk += nk, tv += nv;
    attn__arena_plan(&ar, mem);
    kv->k = attn__arena_floats(&ar, tk);
    kv->v = attn__arena_floats(&ar, tv);
    kv->seg = (int *)attn__arena_take(&ar, sizeof(int) * rows);
    kv->cap = cap;
    kv->rows = rows;
    kv->first = m->cfg.window ? m->cfg.global : 0;
    kv->len = kv->at = 0;
    kv->layout = attn__tf_kv_layout(m, cap);
    if (mem)
        memset(kv->k, 0, sizeof(attn_float) * tk), memset(kv->v, 0, sizeof(attn_float) * tv); /* S, z = 0 */
    return ar.used + ATTN_ALIGN;
}

static attn_status attn__tf_decode_check(const char *fn, const attn_transformer *m, int cap)
{
    int l;
    ATTN__NEED(m);
    ATTN__TRY(attn__tf_check(fn, &m->cfg));
    if (!m->cfg.vocab || !m->cfg.causal || m->cfg.post_norm || m->cfg.emb_norm || m->cfg.pad_mask ||
        !m->cfg.out)
        return attn__fail(ATTN_ERR_ARG,
                          "%s: decoding needs a causal model of token inputs with a head, and no "
                          "encoder options (post_norm, emb_norm, pad_mask)",
                          fn);
    if (m->cfg.bigbird_block)
        return attn__fail(ATTN_ERR_ARG, "%s: BigBird's layout is indexed by query row, so a step's rows are "
                          "not the full pass' rows: no step-wise decoding", fn);
    for (l = 0; l < m->cfg.layers; l++) {
        const attn_kind_info *r = attn_kind_get(m->cfg.kinds[l]);
        if (r->score && r->score->offset)
            return attn__fail(ATTN_ERR_ARG,
                              "%s: layer %d's kind (%s) shifts its scores by the number of keys of a "
                              "call, so no step-wise decoding equals its full pass",
                              fn, l, r->name);
    }
    if (cap < 1 || cap > m->cfg.max_T)
        return attn__fail(ATTN_ERR_SHAPE, "%s: cap = %d must be in 1 .. max_T %d", fn, cap, m->cfg.max_T);
    return ATTN_OK;
}

ATTNDEF size_t attn_transformer_kv_bytes(const attn_transformer *m, int cap)
{
    attn_transformer_kv kv;
    if (attn__tf_decode_check(__func__, m, cap) != ATTN_OK) return 0;
    return attn__tf_kv_map(m, cap, NULL, &kv);
}

ATTNDEF attn_status attn_transformer_kv_init(attn_transformer_kv *kv, const attn_transformer *m, int cap,
                                             void *mem, size_t bytes)
{
    attn_transformer_kv t;
    ATTN__NEED(kv); ATTN__NEED(mem);
    ATTN__TRY(attn__tf_decode_check(__func__, m, cap));
    if (bytes < attn__tf_kv_map(m, cap, NULL, &t))
        return attn__fail(ATTN_ERR_ARG, "%s: %lu bytes, attn_transformer_kv_bytes() asks for %lu", __func__,
                          (unsigned long)bytes, (unsigned long)attn__tf_kv_map(m, cap, NULL, &t));
    attn__tf_kv_map(m, cap, mem, kv);
    return ATTN_OK;
}

ATTNDEF size_t attn_transformer_decode_work_bytes(const attn_transformer *m, int n, int cap)
{
    attn__tf_decode_work w;
    if (attn__tf_decode_check(__func__, m, cap) != ATTN_OK) return 0;
    if (n < 1 || n > cap)
        return attn__fail(ATTN_ERR_SHAPE, "%s: n = %d must be in 1 .. cap %d", __func__, n, cap), 0;
    return attn__tf_decode_map(m, ATTN__MIN(n, attn__tf_chunk(m)), attn__tf_kv_rows(m, cap), NULL, &w);
}

/* Makes room in the cache for n more rows: with a window, the oldest rows after the global tokens
   go, in every head of every layer (a step's first query sees none of them). */
static void attn__tf_kv_room(const attn_transformer *m, attn_transformer_kv *kv, int n)
{
    const attn_transformer_config *c = &m->cfg;
    int held = attn__tf_kv_held(m, kv), drop = held + n - kv->rows, g = c->window ? c->global : 0, l, h,
        KH = c->kv_heads ? c->kv_heads : c->heads;
    size_t keep = (size_t)(held - g - drop), nk, nv;
    attn_float *kc = kv->k, *vc = kv->v;
    if (drop <= 0) return;
    for (l = 0; l < c->layers; l++, kc += nk, vc += nv) {
        if (attn__tf_kv_sizes(m, l, kv->rows, &nk, &nv)) continue; /* a recurrent state */
        for (h = 0; h < KH; h++) {
            attn_float *k = kc + ((size_t)h * kv->rows + g) * c->dk,
                       *v = vc + ((size_t)h * kv->rows + g) * c->dv;
            memmove(k, k + (size_t)drop * c->dk, sizeof(attn_float) * keep * c->dk);
            memmove(v, v + (size_t)drop * c->dv, sizeof(attn_float) * keep * c->dv);
        }
    }
    memmove(kv->seg + g, kv->seg + g + drop, sizeof(int) * keep);
    kv->first += drop;
}

/* One step of decoding: n tokens (at most a chunk) at positions len .. len + n - 1, their logits
   [n, out]; the cache has room for their rows. Each layer's attention is its step call over the
   layer's part of the cache. */
static attn_status attn__tf_decode_step(const attn_transformer *m, attn_transformer_kv *kv,
                                        attn_float *logits, const int *tokens, int n,
                                        const attn__tf_decode_work *wp)
{
    const attn_transformer_config *c = &m->cfg;
    attn__tf_decode_work w = *wp;
    attn_layer L;
    attn_mod md; /* the layer's modifier, if any */
    attn_layer_kv lk;
    attn_transformer_tensors M;
    size_t nk, nv;
    int l, t, h, i, Tk, held = attn__tf_kv_held(m, kv), g = c->window ? c->global : 0;
    Tk = held + n;
    for (t = held; t < Tk; t++) /* the new rows' segments: a running count of bos tokens */
        kv->seg[t] = (t ? kv->seg[t - 1] : 0) + (tokens[t - held] == c->bos);
    M = attn_transformer_named(m, 0);
    attn_embedding_forward(w.x, tokens, M.E, n, c->vocab, c->d);
    if (c->pos == ATTN_POS_LEARNED) attn_axpy((size_t)n * c->d, 1, M.P + (size_t)kv->len * c->d, w.x);
    lk.k = kv->k; lk.v = kv->v;
    for (l = 0; l < c->layers; l++, lk.k += nk, lk.v += nv) {
        const attn_transformer_layer_tensors W = attn_transformer_layer_named(m, l, 0);
        lk.rows = attn__tf_kv_sizes(m, l, kv->rows, &nk, &nv) ? 0 : kv->rows; /* 0: a recurrent state */
        lk.held = lk.rows ? held : kv->len;
        attn__tf_layer(m, l, w.bias, &L, &md);
        L.att.segment = c->doc_mask ? kv->seg : NULL;
        if (c->t5) attn_t5_bias_forward(w.bias, W.t5, c->heads, n, Tk, c->max_T);
        for (h = 0; c->t5 && kv->first > g && h < c->heads; h++) /* the global rows' true distances */
            for (t = 0; t < n; t++)
                for (i = 0; i < g; i++)
                    w.bias[((size_t)h * n + t) * Tk + i] =
                        W.t5[(size_t)h * c->max_T + attn_t5_bucket(kv->len + t, i, c->max_T)];
        /* h = x + Wo Attn(q, K, V) + bo, q from Norm(x), the new keys and values joining the cache */
        attn__tf_norm(m, w.a, w.mean, w.rstd, w.x, W.n1g, W.n1b, (size_t)n);
        ATTN__TRY(attn_layer_step(&L, &lk, w.h, w.a, n, kv->len, 1, w.step, w.step_bytes));
        attn_axpy((size_t)n * c->d, 1, w.x, w.h);
        attn__tf_mlp_forward(m, l, &W, w.x, w.h, w.a, w.mean, w.rstd, w.u, w.u2, w.g, (size_t)n);
    }
    kv->at = kv->len += n;
    attn__tf_norm(m, w.a, w.mean, w.rstd, w.x, M.nfg, M.nfb, (size_t)n);
    return attn_linear_forward(logits, w.a, M.Wout, M.bout, n, c->d, c->out);
}

ATTNDEF attn_status attn_transformer_decode(const attn_transformer *m, attn_transformer_kv *kv,
                                            attn_float *logits, const int *tokens, int n, void *work,
                                            size_t work_bytes)
{
    const attn_transformer_config *c;
    attn__tf_decode_work w;
    size_t need;
    int l, t, nc, chunk, W, g;
    ATTN__NEED(kv); ATTN__NEED(logits); ATTN__NEED(tokens); ATTN__NEED(work);
    ATTN__TRY(attn__tf_decode_check(__func__, m, kv->cap));
    c = &m->cfg;
    chunk = attn__tf_chunk(m);
    g = c->window ? c->global : 0;
    if (!kv->k || !kv->v || !kv->seg || kv->layout != attn__tf_kv_layout(m, kv->cap) ||
        kv->rows != attn__tf_kv_rows(m, kv->cap) || kv->at < 0 || kv->at > kv->cap || kv->first < g ||
        kv->first > kv->cap)
        return attn__fail(ATTN_ERR_ARG,
                          "%s: the cache was not set up for this model (attn_transformer_kv_init)", __func__);
    if (kv->len < 0 || kv->len > kv->cap || n < 1 || n > kv->cap - kv->len)
        return attn__fail(ATTN_ERR_SHAPE, "%s: %d tokens after %d do not fit a cache of %d", __func__, n,
                          kv->len, kv->cap);
    for (l = 0; l < c->layers && kv->len != kv->at; l++)
        if (attn__flags(c->kinds[l]) & ATTN_KF_LINEAR_TIME)
            return attn__fail(ATTN_ERR_ARG,
                              "%s: layer %d's recurrent state (%s) holds %d tokens, not len = %d: it "
                              "cannot rewind",
                              __func__, l, attn_kind_get(c->kinds[l])->name, kv->at, kv->len);
    if ((need = attn_transformer_decode_work_bytes(m, n, kv->cap)) > work_bytes)
        return attn__fail(ATTN_ERR_ARG,
                          "%s: work has %lu bytes, attn_transformer_decode_work_bytes() asks for %lu",
                          __func__, (unsigned long)work_bytes, (unsigned long)need);
    for (t = 0; t < n; t++)
        if (tokens[t] < 0 || tokens[t] >= c->vocab)
            return attn__fail(ATTN_ERR_ARG, "%s: token %d is %d, outside 0 .. %d", __func__, t, tokens[t],
                              c->vocab - 1);
    W = c->window * (c->dilation > 1 ? c->dilation : 1);
    if (kv->first > g && kv->first > kv->len - W)
        return attn__fail(ATTN_ERR_ARG,
                          "%s: the window's cache dropped the rows before position %d, which position %d "
                          "still sees: it cannot rewind to len = %d",
                          __func__, kv->first, kv->len, kv->len);
    attn__tf_decode_map(m, ATTN__MIN(n, chunk), kv->rows, work, &w);
    for (t = 0; t < n; t += nc) { /* a step per chunk: a window's cache keeps its rows */
        nc = ATTN__MIN(n - t, chunk);
        attn__tf_kv_room(m, kv, nc);
        ATTN__TRY(attn__tf_decode_step(m, kv, logits + (size_t)t * c->out, tokens + t, nc, &w));
    }
    return ATTN_OK;
}

ATTNDEF int attn_sample(const attn_float *logits, int V, double temperature, int top_k, double top_p,
                        attn_rng *r)
{
    double mx, lo, hi, kcut, pcut = 0, total = 0, u;
    int i, it, best = 0;
    if (!logits || !r || V < 1 || !(temperature >= 0) || !attn__finite(temperature) || top_k < 0 ||
        !(top_p > 0) || top_p > 1)
        return attn__fail(ATTN_ERR_ARG,
                          "attn_sample: logits and rng needed, V = %d >= 1, temperature %g >= 0, "
                          "top_k %d >= 0, top_p %g in (0, 1]",
                          V, temperature, top_k, top_p),
               -1;
    for (i = 0; i < V; i++) {
        if (!attn__finite((double)logits[i]))
            return attn__fail(ATTN_ERR_ARG, "attn_sample: logit %d is not finite", i), -1;
        if (logits[i] > logits[best]) best = i;
    }
    mx = (double)logits[best];
    if (temperature == 0 || top_k == 1) return best;
    /* top-k: the k-th largest logit by bisection (count(l >= cut) >= k holds at lo throughout) */
    for (lo = mx, i = 0; i < V; i++) lo = fmin(lo, (double)logits[i]);
    for (hi = mx, it = 0; top_k && top_k < V && it < 200; it++) {
        double mid = 0.5 * (lo + hi);
        int n = 0;
        for (i = 0; i < V; i++) n += (double)logits[i] >= mid;
        if (n >= top_k) lo = mid; else hi = mid;
    }
    kcut = top_k && top_k < V ? lo : -INFINITY;
    for (i = 0; i < V; i++)
        total += (double)logits[i] >= kcut ? exp(((double)logits[i] - mx) / temperature) : 0;
    /* top-p: the largest weight cut whose kept mass still reaches top_p of the total */
    for (lo = 0, hi = 1, it = 0; top_p < 1 && it < 200; it++) {
        double mid = 0.5 * (lo + hi), mass = 0, w;
        for (i = 0; i < V; i++)
            if ((double)logits[i] >= kcut && (w = exp(((double)logits[i] - mx) / temperature)) >= mid)
                mass += w;
        if (mass >= top_p * total) lo = mid; else hi = mid;
    }
    pcut = top_p < 1 ? lo : 0;
    for (total = 0, i = 0; i < V; i++) {
        double w = exp(((double)logits[i] - mx) / temperature);
        total += (double)logits[i] >= kcut && w >= pcut ? w : 0;
    }
    u = attn_rng_uniform(r) * total;
    for (i = 0; i < V; i++) {
        double w = exp(((double)logits[i] - mx) / temperature);
        if ((double)logits[i] < kcut || w < pcut) continue;
        if ((u -= w) < 0) return i;
        best = i; /* the last kept token takes what rounding leaves */
    }
    return best;
}

/* ---- the encoder-decoder ---- */

enum { ATTN__S2S_SELF, ATTN__S2S_CAUSAL, ATTN__S2S_CROSS, ATTN__S2S_FFN }; /* sublayer types */
enum { ATTN__S2S_ATT_TENSORS = 10, ATTN__S2S_FFN_TENSORS = 6 };           /* the LN's g, b last */

static int attn__s2s_subs(const attn_seq2seq_config *c) { return 2 * c->enc_layers + 3 * c->dec_layers; }

static int attn__s2s_type(const attn_seq2seq_config *c, int s)
{
    if (s < 2 * c->enc_layers) return s % 2 ? ATTN__S2S_FFN : ATTN__S2S_SELF;
    s = (s - 2 * c->enc_layers) % 3;
    return s == 0 ? ATTN__S2S_CAUSAL : s == 1 ? ATTN__S2S_CROSS : ATTN__S2S_FFN;
}

/* The layer sublayer s belongs to (in the encoder or in the decoder). */
static int attn__s2s_layer_of(const attn_seq2seq_config *c, int s)
{
    return s < 2 * c->enc_layers ? s / 2 : (s - 2 * c->enc_layers) / 3;
}

/* Sublayer s's modifier settings (kind and mask NONE for an FFN or none) in *mc; the floats of its
   table. */
static size_t attn__s2s_mod(const attn_seq2seq_config *c, int s, attn_mod_config *mc)
{
    const attn_mod_kind *by_type[3] = {c->enc_mods, c->dec_mods, c->cross_mods}; /* SELF .. CROSS */
    const attn_mask_kind *masks[3] = {c->enc_masks, c->dec_masks, NULL};
    int t = attn__s2s_type(c, s), l = attn__s2s_layer_of(c, s);
    *mc = c->mod;
    mc->H = c->heads;
    mc->kind = t == ATTN__S2S_FFN ? ATTN_MOD_NONE : by_type[t][l];
    mc->mask = t < ATTN__S2S_CROSS ? masks[t][l] : ATTN_MASK_NONE;
    return attn__mod_floats(mc);
}

static int attn__s2s_ntensors(const attn_seq2seq_config *c, int s)
{
    attn_mod_config mc;
    return attn__s2s_type(c, s) == ATTN__S2S_FFN ? ATTN__S2S_FFN_TENSORS
                                                 : ATTN__S2S_ATT_TENSORS + (attn__s2s_mod(c, s, &mc) > 0);
}

/* A sublayer's tensors in block order (attention or FFN), named as in checkpoints, and the model's
   own (Es, Et first, Wout, bout last). */
#define ATTN__S2S_L(f) ATTN__SLOT(attn_seq2seq_sublayer_tensors, f)
static const attn__slot attn__s2s_aslot[ATTN__S2S_ATT_TENSORS + 2] = {
    ATTN__S2S_L(Wq), ATTN__S2S_L(bq), ATTN__S2S_L(Wk), ATTN__S2S_L(bk), ATTN__S2S_L(Wv),     ATTN__S2S_L(bv),
    ATTN__S2S_L(Wo), ATTN__S2S_L(bo), ATTN__S2S_L(g),  ATTN__S2S_L(b),  ATTN__S2S_L(relbias),
    ATTN__S2S_L(temperature)}; /* the last two: a modifier's table, one or none */
static const attn__slot attn__s2s_fslot[ATTN__S2S_FFN_TENSORS] = {
    ATTN__S2S_L(W1), ATTN__S2S_L(b1), ATTN__S2S_L(W2), ATTN__S2S_L(b2), ATTN__S2S_L(g), ATTN__S2S_L(b)};
#define ATTN__S2S_M(f) ATTN__SLOT(attn_seq2seq_tensors, f)
static const attn__slot attn__s2s_gslot[4] = {ATTN__S2S_M(Es), ATTN__S2S_M(Et), ATTN__S2S_M(Wout),
                                              ATTN__S2S_M(bout)};

/* The index of sublayer s's first tensor (s = the sublayer count: Wout's). */
static short attn__s2s_first(const attn_seq2seq_config *c, int s)
{
    int i, n = 2;
    for (i = 0; i < s; i++) n += attn__s2s_ntensors(c, i);
    return (short)n;
}

ATTNDEF attn_seq2seq_tensors attn_seq2seq_named(const attn_seq2seq *m, int grad)
{
    attn_seq2seq_tensors t;
    short idx[4] = {0, 1, 0, 0};
    if (m) idx[3] = (short)((idx[2] = attn__s2s_first(&m->cfg, attn__s2s_subs(&m->cfg))) + 1);
    attn__name_tensors(__func__, &t, sizeof t, attn__s2s_gslot, idx, 4, m ? &m->p : NULL, grad);
    return t;
}

ATTNDEF attn_seq2seq_sublayer_tensors attn_seq2seq_sublayer_named(const attn_seq2seq *m, int sub, int grad)
{
    attn_seq2seq_sublayer_tensors t;
    attn_mod_config mc;
    short idx[ATTN__S2S_ATT_TENSORS + 2];
    int k, ok = m && sub >= 0 && sub < attn__s2s_subs(&m->cfg), n = ok ? attn__s2s_ntensors(&m->cfg, sub) : 0;
    int ffn = ok && attn__s2s_type(&m->cfg, sub) == ATTN__S2S_FFN;
    for (k = 0; k < n; k++) idx[k] = (short)(attn__s2s_first(&m->cfg, sub) + k);
    if (ok && !ffn) { /* a modifier's table (the tensor after b) in its slot, the other slot NULL */
        int np = attn__s2s_mod(&m->cfg, sub, &mc) > 0, temp = mc.kind == ATTN_MOD_TEMPERATURE;
        short table = np ? idx[ATTN__S2S_ATT_TENSORS] : -1;
        idx[ATTN__S2S_ATT_TENSORS + temp] = table;
        idx[ATTN__S2S_ATT_TENSORS + !temp] = -1;
        n = ATTN__S2S_ATT_TENSORS + 2;
    }
    attn__name_tensors(__func__, &t, sizeof t, ffn ? attn__s2s_fslot : attn__s2s_aslot, idx, n,
                       ok ? &m->p : NULL, grad);
    return t;
}

/* The query and key lengths of sublayer s. */
static void attn__s2s_shape(const attn_seq2seq_config *c, int s, int Ts, int Tt, int *Tq, int *Tk)
{
    *Tq = s < 2 * c->enc_layers ? Ts : Tt;
    *Tk = attn__s2s_type(c, s) == ATTN__S2S_CROSS ? Ts : *Tq;
}

static attn_status attn__s2s_check(const char *fn, const attn_seq2seq_config *c)
{
    attn_attention_desc a;
    int s;
    if (!c) return attn__fail(ATTN_ERR_ARG, "%s: the configuration is NULL", fn);
    if (c->src_vocab < 1 || c->tgt_vocab < 1 || c->d < 1 || c->heads < 1 || c->dk < 1 || c->dv < 1 ||
        c->mlp < 1 || c->max_src < 1 || c->max_tgt < 1 || c->enc_layers < 1 ||
        c->enc_layers > ATTN_MAX_LAYERS || c->dec_layers < 1 || c->dec_layers > ATTN_MAX_LAYERS)
        return attn__fail(ATTN_ERR_SHAPE,
                          "%s: vocabularies %d, %d, d %d, heads %d, dk %d, dv %d, mlp %d, max_src %d, "
                          "max_tgt %d must be >= 1, layers %d, %d in 1 .. %d",
                          fn, c->src_vocab, c->tgt_vocab, c->d, c->heads, c->dk, c->dv, c->mlp, c->max_src,
                          c->max_tgt, c->enc_layers, c->dec_layers, ATTN_MAX_LAYERS);
    if ((long long)c->heads * c->dk > INT_MAX || (long long)c->heads * c->dv > INT_MAX)
        return attn__fail(ATTN_ERR_OVERFLOW, "%s: heads %d times dk %d or dv %d overflows int", fn, c->heads,
                          c->dk, c->dv);
    if (c->pad < -1 || c->pad >= c->src_vocab)
        return attn__fail(ATTN_ERR_ARG, "%s: pad %d is not -1 or a source token", fn, c->pad);
    if (attn__flags(c->kind) & ATTN_KF_PARAMS)
        return attn__fail(
            ATTN_ERR_ARG,
            "%s: %s attention carries parameters of its own; the encoder-decoder takes the other kinds", fn,
            attn_kind_get(c->kind)->name);
    if ((int)c->ln_eps < 0 || c->ln_eps > ATTN_LN_EPS_OUTSIDE || (int)c->init < 0 ||
        c->init >= ATTN_INIT_COUNT)
        return attn__fail(ATTN_ERR_ARG, "%s: unknown LN form (%d) or initialisation (%d)", fn, (int)c->ln_eps,
                          (int)c->init);
    if (!(c->eps > 0) || !attn__finite(c->eps) || !(c->dropout >= 0 && c->dropout < 1))
        return attn__fail(ATTN_ERR_ARG, "%s: eps = %g must be finite and > 0 and dropout = %g in [0, 1)", fn,
                          (double)c->eps, (double)c->dropout);
    memset(&a, 0, sizeof a);
    a.kind = c->kind; a.B = a.H = a.Tq = a.Tk = 1; a.dk = c->dk; a.dv = c->dv;
    if (attn__flags(a.kind) & ATTN_KF_LINEAR_TIME) a.H = c->heads;
    for (s = 0; s < attn__s2s_subs(c); s++) {
        attn_mod_config mc;
        size_t np;
        attn__s2s_mod(c, s, &mc);
        if (mc.kind == ATTN_MOD_NONE && mc.mask == ATTN_MASK_NONE) continue;
        if (attn__mod_check(fn, &mc, &np) != ATTN_OK)
            return attn__fail(attn_last_status(), "%s (sublayer %d)", attn_last_error(), s);
        if (attn__s2s_type(c, s) == ATTN__S2S_CAUSAL && mc.mask == ATTN_MASK_PREFIX)
            return attn__fail(ATTN_ERR_ARG, "%s: the decoder's self-attention is causal: no prefix mask "
                              "(sublayer %d)", fn, s);
        if (attn__s2s_type(c, s) == ATTN__S2S_CROSS && mc.kind != ATTN_MOD_SOFTCAP &&
            mc.kind != ATTN_MOD_TEMPERATURE)
            return attn__fail(ATTN_ERR_ARG, "%s: cross-attention takes softcap or temperature, not %s (a "
                              "target and a source position make no distance)", fn, attn_mod_name(mc.kind));
        a.mod = &attn__mod_rows[mc.kind]; /* the checks look at the kind */
    }
    return attn__attention_check(fn, &a, (size_t)-1);
}

static void attn__pdesc(attn_param_desc *p, const char *name, int ndim, int d0, int d1)
{
    if (!p) return;
    memset(p, 0, sizeof *p);
    p->name = name; p->ndim = ndim; p->shape[0] = d0; p->shape[1] = d1; p->decay = -1;
}

/* The parameter descriptors in block order (p may be NULL to count them); returns their number. */
static int attn__s2s_descs(const attn_seq2seq_config *c, attn_param_desc *p)
{
    int d = c->d, hk = c->heads * c->dk, hv = c->heads * c->dv, n = 0, s, k;
    int as[ATTN__S2S_ATT_TENSORS][3] = {{2, hk, d}, {1, hk},    {2, hk, d}, {1, hk}, {2, hv, d},
                                        {1, hv},    {2, d, hv}, {1, d},     {1, d},  {1, d}};
    int fs[ATTN__S2S_FFN_TENSORS][3] = {{2, c->mlp, d}, {1, c->mlp}, {2, d, c->mlp}, {1, d}, {1, d}, {1, d}};
    attn__pdesc(p ? p + n : NULL, "Es", 2, c->src_vocab, d); n++;
    attn__pdesc(p ? p + n : NULL, "Et", 2, c->tgt_vocab, d); n++;
    for (s = 0; s < attn__s2s_subs(c); s++) {
        attn_mod_config mc;
        int ffn = attn__s2s_type(c, s) == ATTN__S2S_FFN, mod = !ffn && attn__s2s_mod(c, s, &mc) > 0;
        for (k = 0; k < (ffn ? ATTN__S2S_FFN_TENSORS : ATTN__S2S_ATT_TENSORS); k++, n++) {
            const int *e = ffn ? fs[k] : as[k];
            const char *name = (ffn ? attn__s2s_fslot : attn__s2s_aslot)[k].name;
            attn__pdesc(p ? p + n : NULL, name, e[0], e[1], e[2]);
        }
        if (mod) { /* RELBIAS [H, buckets] or TEMPERATURE [H] */
            int rb = mc.kind == ATTN_MOD_RELBIAS;
            attn__pdesc(p ? p + n : NULL, rb ? "relbias" : "temperature", 1 + rb, c->heads,
                        rb ? mc.buckets : 0);
        }
        n += mod;
    }
    attn__pdesc(p ? p + n : NULL, "Wout", 2, c->tgt_vocab, d); n++;
    attn__pdesc(p ? p + n : NULL, "bout", 1, c->tgt_vocab, 0); n++;
    for (k = 0; p && k < n; k++) { /* Es, Et N(0, 1/d); the other matrices by c->init; gains and
                                      temperatures 1, biases and relative-bias tables 0 */
        int one = p[k].name[0] == 'g' || p[k].name[0] == 't', fan = p[k].ndim == 2 && p[k].name[0] != 'r';
        p[k].init = k < 2  ? ATTN_PARAM_NORMAL
                    : fan  ? (attn_param_init)(ATTN_PARAM_FAN_NORMAL + (int)c->init)
                    : one  ? ATTN_PARAM_CONST
                           : ATTN_PARAM_ZERO;
        p[k].value = k < 2 ? 1 / sqrt((double)d) : one;
    }
    return n;
}

/* The descriptors of a valid configuration in *p (ATTN_MALLOC; the caller frees); their number. */
static attn_status attn__s2s_alloc_descs(const char *fn, const attn_seq2seq_config *c, attn_param_desc **p,
                                         int *n)
{
    ATTN__TRY(attn__s2s_check(fn, c));
    *n = attn__s2s_descs(c, NULL);
    *p = (attn_param_desc *)ATTN_MALLOC(sizeof **p * (size_t)*n);
    if (!*p) return attn__fail(ATTN_ERR_NOMEM, "%s: no memory for %d parameter descriptors", fn, *n);
    attn__s2s_descs(c, *p);
    return ATTN_OK;
}

/* The parameter count of cfg, and in *floats the floats of fb bytes in its block (with the alignment
   padding); 0 (error set) if cfg is invalid or its sizes overflow. */
static size_t attn__s2s_block(const char *fn, const attn_seq2seq_config *cfg, size_t *floats, size_t fb)
{
    attn_param_desc *p;
    size_t total = 0;
    int i, n;
    if (attn__s2s_alloc_descs(fn, cfg, &p, &n) != ATTN_OK) return 0;
    for (i = 0; i < n; i++) total += attn__shape_numel(p[i].ndim, p[i].shape);
    if (!(*floats = attn__block_floats(p, n, fb)))
        total = 0, attn__fail(ATTN_ERR_OVERFLOW, "%s: the parameter block overflows size_t", fn);
    ATTN_FREE(p);
    return total;
}

ATTNDEF attn_seq2seq_config attn_seq2seq_config_default(void)
{
    attn_seq2seq_config c;
    memset(&c, 0, sizeof c);
    c.src_vocab = c.tgt_vocab = ATTN_DIGITS_VOCAB;
    c.pad = ATTN_DIGITS_PAD;
    c.d = 128;
    c.heads = 8;
    c.dk = c.dv = 16;
    c.mlp = 512;
    c.enc_layers = c.dec_layers = 1;
    c.max_src = c.max_tgt = 16;
    c.kind = ATTN_SOFTMAX;
    c.eps = (attn_float)1e-6;
    c.ln_eps = ATTN_LN_EPS_OUTSIDE; c.dropout = (attn_float)0.1; c.init = ATTN_INIT_UNIFORM;
    return c;
}

ATTNDEF size_t attn_seq2seq_param_count(const attn_seq2seq_config *cfg)
{
    size_t floats;
    return attn__s2s_block(__func__, cfg, &floats, sizeof(attn_float));
}

ATTNDEF size_t attn_seq2seq_bytes(const attn_seq2seq_config *cfg)
{
    attn_param_desc *p;
    size_t bytes;
    int n;
    if (attn__s2s_alloc_descs(__func__, cfg, &p, &n) != ATTN_OK) return 0;
    bytes = attn_params_bytes(p, n);
    ATTN_FREE(p);
    if (!bytes) attn__fail(ATTN_ERR_OVERFLOW, "attn_seq2seq_bytes: the parameter block overflows size_t");
    return bytes;
}

/* attn_seq2seq_init, in mem [bytes] when mem is not NULL. */
static attn_status attn__s2s_make(attn_seq2seq *m, const attn_seq2seq_config *cfg, attn_rng *rng, void *mem,
                                  size_t bytes)
{
    attn_param_desc *p;
    attn_seq2seq t; /* built here, copied to *m only when complete */
    attn_status s;
    size_t cnt;
    int n;
    ATTN__NEED(m); ATTN__NEED(rng);
    ATTN__TRY(attn__s2s_alloc_descs("attn_seq2seq_init", cfg, &p, &n));
    memset(&t, 0, sizeof t);
    s = attn__params_layout(p, n, &cnt) ? attn__params_place(&t.p, p, n, mem, bytes)
        : attn__fail(ATTN_ERR_OVERFLOW, "attn_seq2seq_init: the parameter block overflows size_t");
    if (s == ATTN_OK) attn_params_draw(&t.p, p, n, rng); /* the rules of attn__s2s_descs */
    ATTN_FREE(p);
    ATTN__TRY(s);
    t.cfg = *cfg;
    *m = t;
    return ATTN_OK;
}

ATTNDEF attn_status attn_seq2seq_init(attn_seq2seq *m, const attn_seq2seq_config *cfg, attn_rng *rng)
{
    return attn__s2s_make(m, cfg, rng, NULL, 0);
}

ATTNDEF attn_status attn_seq2seq_init_in(attn_seq2seq *m, const attn_seq2seq_config *cfg, attn_rng *rng,
                                         void *mem, size_t bytes)
{
    ATTN__NEED(mem);
    return attn__s2s_make(m, cfg, rng, mem, bytes);
}

ATTNDEF void attn_seq2seq_free(attn_seq2seq *m)
{
    if (m) attn_params_free(&m->p);
}

/* Attention sublayer s as an attn_layer over the model's parameters, masking keys with mask, its
   modifier in *mod (NULL: the sizes only). */
static void attn__s2s_layer(const attn_seq2seq *m, int s, const unsigned char *mask, attn_layer *L,
                            attn_mod *mod)
{
    const attn_seq2seq_config *c = &m->cfg;
    const attn_seq2seq_sublayer_tensors W = attn_seq2seq_sublayer_named(m, s, 0);
    int t = attn__s2s_type(c, s);
    attn_mod_config mc;
    memset(L, 0, sizeof *L);
    attn__s2s_mod(c, s, &mc);
    if ((mc.kind || mc.mask) && !mod) L->att.mod = &attn__mod_rows[mc.kind];
    else if (mc.kind || mc.mask) { /* checked with the model */
        const attn_seq2seq_sublayer_tensors G = attn_seq2seq_sublayer_named(m, s, 1);
        attn_mod_init(mod, &mc, W.relbias ? W.relbias : W.temperature, G.relbias ? G.relbias : G.temperature);
        L->att.mod = &mod->fn;
    }
    L->att.kind = c->kind; L->att.H = c->heads; L->att.dk = c->dk; L->att.dv = c->dv;
    L->Wq = W.Wq; L->bq = W.bq; L->Wk = W.Wk; L->bk = W.bk;
    L->Wv = W.Wv; L->bv = W.bv; L->Wo = W.Wo; L->bo = W.bo;
    L->att.causal = t == ATTN__S2S_CAUSAL;
    L->att.key_mask = t == ATTN__S2S_CAUSAL ? NULL : mask;
    L->C = L->Cout = c->d;
}

/* Floats holding n bytes. */
static size_t attn__bytes_floats(size_t n) { return (n + sizeof(attn_float) - 1) / sizeof(attn_float); }

/* The cache of sublayer s over N = B Tq rows: x (its input) and r = x + Drop(f(x)) [N d], the
   LN's mean and rstd [N], the dropout mask (N d bytes), then the attention layer's cache, or the
   FFN's u = W1 x + b1 and h = ReLU(u) [N mlp]. */
typedef struct {
    attn_float *x, *r, *mean, *rstd, *u, *h, *att;
    unsigned char *keep;
} attn__s2s_cache;

static size_t attn__s2s_sub_floats(const attn_seq2seq *m, int s, int B, int Ts, int Tt)
{
    attn_layer L;
    size_t N, Nd;
    int Tq, Tk;
    attn__s2s_shape(&m->cfg, s, Ts, Tt, &Tq, &Tk);
    N = (size_t)B * Tq; Nd = N * m->cfg.d;
    if (attn__s2s_type(&m->cfg, s) == ATTN__S2S_FFN)
        return 2 * Nd + 2 * N + attn__bytes_floats(Nd) + 2 * N * m->cfg.mlp;
    attn__s2s_layer(m, s, NULL, &L, NULL);
    return 2 * Nd + 2 * N + attn__bytes_floats(Nd) + attn_layer_cache_floats(&L, B, Tq, Tk);
}

/* Cache layout: the encoder's part, [source key mask (B Ts bytes) | embedding dropout mask
   (Ns d bytes) | sublayers 0 .. 2 Le - 1 | e_L [Ns d]], then the decoder's, [embedding dropout
   mask (Nt d bytes) | its sublayers | y_L [Nt d]], Ns = B Ts, Nt = B Tt. A sublayer's output is
   the next region's start, so the encoder's part does not depend on Tt. */
static size_t attn__s2s_enc_floats(const attn_seq2seq *m, int B, int Ts)
{
    size_t Nd = (size_t)B * Ts * m->cfg.d,
           n = attn__bytes_floats((size_t)B * Ts) + attn__bytes_floats(Nd) + Nd;
    int s;
    for (s = 0; s < 2 * m->cfg.enc_layers; s++) n += attn__s2s_sub_floats(m, s, B, Ts, 1);
    return n;
}

/* Maps sublayer s's cache into *c; returns its output (for the last sublayers: e_L, y_L). */
static attn_float *attn__s2s_map(const attn_seq2seq *m, int s, int B, int Ts, int Tt, const attn_float *cache,
                                 attn__s2s_cache *c)
{
    int Le2 = 2 * m->cfg.enc_layers, i, Tq, Tk;
    attn_float *base = attn__unconst(cache), *after;
    size_t N, Nd;
    base += s < Le2 ? attn__bytes_floats((size_t)B * Ts) + attn__bytes_floats((size_t)B * Ts * m->cfg.d)
                    : attn__s2s_enc_floats(m, B, Ts) + attn__bytes_floats((size_t)B * Tt * m->cfg.d);
    for (i = s < Le2 ? 0 : Le2; i < s; i++) base += attn__s2s_sub_floats(m, i, B, Ts, Tt);
    attn__s2s_shape(&m->cfg, s, Ts, Tt, &Tq, &Tk);
    N = (size_t)B * Tq; Nd = N * m->cfg.d;
    c->x = base;
    c->r = base + Nd;
    c->mean = c->r + Nd;
    c->rstd = c->mean + N;
    c->keep = (unsigned char *)(c->rstd + N);
    after = c->rstd + N + attn__bytes_floats(Nd);
    c->u = c->h = c->att = NULL;
    if (attn__s2s_type(&m->cfg, s) == ATTN__S2S_FFN) { c->u = after; c->h = after + N * m->cfg.mlp; }
    else c->att = after;
    return base + attn__s2s_sub_floats(m, s, B, Ts, Tt);
}

ATTNDEF size_t attn_seq2seq_cache_floats(const attn_seq2seq *m, int B, int Ts, int Tt)
{
    size_t n, Nd;
    int s;
    if (!attn__sizes_ok(__func__, m, B, Ts, m ? m->cfg.max_src : 0) ||
        !attn__sizes_ok(__func__, m, B, Tt, m->cfg.max_tgt))
        return 0;
    Nd = (size_t)B * Tt * m->cfg.d;
    n = attn__s2s_enc_floats(m, B, Ts) + attn__bytes_floats(Nd) + Nd;
    for (s = 2 * m->cfg.enc_layers; s < attn__s2s_subs(&m->cfg); s++)
        n += attn__s2s_sub_floats(m, s, B, Ts, Tt);
    return n;
}

/* Work: the largest attention layer's work, then dX, dR, dS [N d] (N = B max(Ts, Tt); the
   forward pass keeps the PE table in dS), dU, dH [N mlp] and dMem [B Ts d]. */
typedef struct {
    attn_float *dX, *dR, *dS, *dU, *dH, *dmem;
    size_t lw; /* the attention layers' part */
} attn__s2s_work;

static size_t attn__s2s_layer_work(const attn_seq2seq *m, int B, int Ts, int Tt)
{
    attn_layer L;
    size_t w = 0;
    int s, Tq, Tk;
    for (s = 0; s < attn__s2s_subs(&m->cfg); s++) /* every attention (their modifiers differ) */
        if (attn__s2s_type(&m->cfg, s) != ATTN__S2S_FFN) {
            attn__s2s_shape(&m->cfg, s, Ts, Tt, &Tq, &Tk);
            attn__s2s_layer(m, s, NULL, &L, NULL);
            w = ATTN__MAX(w, attn_layer_work_bytes(&L, B, Tq, Tk));
        }
    return w;
}

static size_t attn__s2s_work_map(const attn_seq2seq *m, int B, int Ts, int Tt, void *work, attn__s2s_work *w)
{
    size_t N = (size_t)B * ATTN__MAX(Ts, Tt), Nd = N * m->cfg.d, Nm = N * m->cfg.mlp;
    attn_arena ar;
    attn__arena_plan(&ar, work);
    w->lw = attn__s2s_layer_work(m, B, Ts, Tt);
    attn__arena_take(&ar, w->lw); /* the layers' work: the start of work */
    w->dX = attn__arena_floats(&ar, Nd);
    w->dR = attn__arena_floats(&ar, Nd);
    w->dS = attn__arena_floats(&ar, Nd);
    w->dU = attn__arena_floats(&ar, Nm);
    w->dH = attn__arena_floats(&ar, Nm);
    w->dmem = attn__arena_floats(&ar, (size_t)B * Ts * m->cfg.d);
    return ar.used + ATTN_ALIGN;
}

ATTNDEF size_t attn_seq2seq_work_bytes(const attn_seq2seq *m, int B, int Ts, int Tt)
{
    attn__s2s_work w;
    if (!attn__sizes_ok(__func__, m, B, Ts, m ? m->cfg.max_src : 0) ||
        !attn__sizes_ok(__func__, m, B, Tt, m->cfg.max_tgt))
        return 0;
    return attn__s2s_work_map(m, B, Ts, Tt, NULL, &w);
}

static attn_status attn__s2s_args(const char *fn, const attn_seq2seq *m, const attn_float *cache,
                                  size_t cache_floats, const int *src, const int *tgt, int B, int Ts, int Tt,
                                  const void *work, size_t work_bytes)
{
    size_t i;
    if (!m || !cache || !src || !tgt || !work)
        return attn__fail(ATTN_ERR_ARG, "%s: the model, cache, src, tgt or work is NULL", fn);
    ATTN__TRY(attn__s2s_check(fn, &m->cfg));
    if (B < 1 || Ts < 1 || Ts > m->cfg.max_src || Tt < 1 || Tt > m->cfg.max_tgt)
        return attn__fail(ATTN_ERR_SHAPE,
                          "%s: B = %d >= 1, Ts = %d in 1 .. max_src %d, Tt = %d in 1 .. max_tgt %d", fn, B,
                          Ts, m->cfg.max_src, Tt, m->cfg.max_tgt);
    for (i = 0; i < (size_t)B * Ts; i++)
        if (src[i] < 0 || src[i] >= m->cfg.src_vocab)
            return attn__fail(ATTN_ERR_ARG, "%s: src[%lu] = %d is not in 0 .. %d", fn, (unsigned long)i,
                              src[i], m->cfg.src_vocab - 1);
    for (i = 0; i < (size_t)B * Tt; i++)
        if (tgt[i] < 0 || tgt[i] >= m->cfg.tgt_vocab)
            return attn__fail(ATTN_ERR_ARG, "%s: tgt[%lu] = %d is not in 0 .. %d", fn, (unsigned long)i,
                              tgt[i], m->cfg.tgt_vocab - 1);
    if (work_bytes < attn_seq2seq_work_bytes(m, B, Ts, Tt))
        return attn__fail(ATTN_ERR_ARG, "%s: work has %lu bytes, attn_seq2seq_work_bytes() asks for %lu", fn,
                          (unsigned long)work_bytes, (unsigned long)attn_seq2seq_work_bytes(m, B, Ts, Tt));
    return attn__cache_ok(fn, cache_floats, attn_seq2seq_cache_floats(m, B, Ts, Tt),
                          "attn_seq2seq_cache_floats");
}

/* The source key mask in the cache (src[b, t] != pad), or NULL without padding. */
static const unsigned char *attn__s2s_mask(const attn_seq2seq *m, const attn_float *cache, const int *src,
                                           int B, int Ts)
{
    unsigned char *mask = (unsigned char *)attn__unconst(cache);
    size_t i;
    if (m->cfg.pad < 0) return NULL;
    for (i = 0; src && i < (size_t)B * Ts; i++) mask[i] = src[i] != m->cfg.pad;
    return mask;
}

/* x [B T d] = Drop(sqrt(d) E[tok] + PE(t)), with the PE table in pe [T d]. */
static void attn__s2s_embed(const attn_seq2seq *m, attn_float *x, unsigned char *keep, const attn_float *E,
                            int V, const int *tok, int B, int T, attn_float *pe, attn_rng *drop)
{
    size_t Td = (size_t)T * m->cfg.d;
    int b;
    attn_embedding_forward(x, tok, E, B * T, V, m->cfg.d);
    attn_scale((size_t)B * Td, (attn_float)sqrt((double)m->cfg.d), x);
    attn_pos_sinusoidal(pe, T, m->cfg.d);
    for (b = 0; b < B; b++) attn_axpy(Td, 1, pe, x + (size_t)b * Td);
    if (drop) attn_dropout_forward(x, keep, x, (size_t)B * Td, m->cfg.dropout, drop);
}

/* dE += the gradient through attn__s2s_embed for dx [B T d] (overwritten); scratch [B T d]. */
static void attn__s2s_embed_back(const attn_seq2seq *m, attn_float *dE, attn_float *dx,
                                 const unsigned char *keep, int V, const int *tok, int B, int T,
                                 attn_float *scratch, int drop)
{
    size_t Nd = (size_t)B * T * m->cfg.d;
    if (drop) {
        memset(scratch, 0, sizeof(attn_float) * Nd);
        attn_dropout_backward(scratch, dx, keep, Nd, m->cfg.dropout);
        memcpy(dx, scratch, sizeof(attn_float) * Nd);
    }
    attn_scale(Nd, (attn_float)sqrt((double)m->cfg.d), dx);
    attn_embedding_backward(dE, dx, tok, B * T, V, m->cfg.d);
}

/* Sublayer s forward: out = LN(x + Drop(f(x))), f the attention (over mem for cross-attention) or
   the FFN. */
static attn_status attn__s2s_sub_forward(const attn_seq2seq *m, int s, const unsigned char *mask,
                                         const attn_float *mem, int B, int Ts, int Tt, attn_float *cache,
                                         attn_rng *drop, void *work, size_t lw)
{
    const attn_seq2seq_config *cf = &m->cfg;
    attn__s2s_cache c;
    attn_layer L;
    attn_mod md;
    const attn_seq2seq_sublayer_tensors W = attn_seq2seq_sublayer_named(m, s, 0);
    attn_float *out = attn__s2s_map(m, s, B, Ts, Tt, cache, &c);
    int Tq, Tk, t = attn__s2s_type(cf, s);
    size_t N, Nd;
    attn__s2s_shape(cf, s, Ts, Tt, &Tq, &Tk);
    N = (size_t)B * Tq; Nd = N * cf->d;
    if (t == ATTN__S2S_FFN) { /* r = W2 ReLU(W1 x + b1) + b2 */
        attn_linear_forward(c.u, c.x, W.W1, W.b1, (int)N, cf->d, cf->mlp);
        attn_act_forward(c.h, c.u, N * cf->mlp, ATTN_ACT_RELU);
        attn_linear_forward(c.r, c.h, W.W2, W.b2, (int)N, cf->mlp, cf->d);
    } else {
        attn__s2s_layer(m, s, mask, &L, &md);
        ATTN__TRY(attn_layer_forward(&L, c.r, c.att, ATTN__CACHE_OWN, c.x, t == ATTN__S2S_CROSS ? mem : NULL,
                                     B, Tq, Tk, work, lw));
    }
    if (drop) attn_dropout_forward(c.r, c.keep, c.r, Nd, cf->dropout, drop);
    attn_axpy(Nd, 1, c.x, c.r);
    return attn_layernorm_forward(out, c.mean, c.rstd, c.r, W.g, W.b, (int)N, cf->d, cf->eps, cf->ln_eps);
}

/* Sublayer s backward: w->dX holds dL/dout on entry and dL/dx on return; cross-attention adds
   dL/dmem into w->dmem. */
static attn_status attn__s2s_sub_backward(attn_seq2seq *m, int s, const unsigned char *mask,
                                          const attn_float *mem, int B, int Ts, int Tt,
                                          const attn_float *cache, int drop, const attn__s2s_work *w,
                                          void *work)
{
    const attn_seq2seq_config *cf = &m->cfg;
    attn__s2s_cache c;
    attn_layer L;
    attn_mod md;
    attn_layer_grads lg;
    const attn_seq2seq_sublayer_tensors W = attn_seq2seq_sublayer_named(m, s, 0),
                                        G = attn_seq2seq_sublayer_named(m, s, 1);
    attn_float *df;
    int Tq, Tk, t = attn__s2s_type(cf, s), cross = t == ATTN__S2S_CROSS;
    size_t N, Nd;
    attn__s2s_map(m, s, B, Ts, Tt, cache, &c);
    attn__s2s_shape(cf, s, Ts, Tt, &Tq, &Tk);
    N = (size_t)B * Tq; Nd = N * cf->d;
    /* out = LN(r): dr in dR; r = x + Drop(f): dx = dr, df = Drop'(dr) */
    memset(w->dR, 0, sizeof(attn_float) * Nd);
    attn_layernorm_backward(w->dR, G.g, G.b, w->dX, c.r, W.g, c.mean, c.rstd, (int)N, cf->d, cf->eps,
                            cf->ln_eps);
    memcpy(w->dX, w->dR, sizeof(attn_float) * Nd);
    df = w->dR;
    if (drop) {
        memset(w->dS, 0, sizeof(attn_float) * Nd);
        attn_dropout_backward(w->dS, w->dR, c.keep, Nd, cf->dropout);
        df = w->dS;
    }
    if (t == ATTN__S2S_FFN) { /* f = W2 h + b2, h = ReLU(u), u = W1 x + b1 */
        memset(w->dH, 0, sizeof(attn_float) * N * cf->mlp);
        attn_linear_backward(w->dH, G.W2, G.b2, df, c.h, W.W2, (int)N, cf->mlp, cf->d);
        attn__act_back(w->dU, w->dH, c.u, N * cf->mlp, ATTN_ACT_RELU, 0);
        return attn_linear_backward(w->dX, G.W1, G.b1, w->dU, c.x, W.W1, (int)N, cf->d, cf->mlp);
    }
    attn__s2s_layer(m, s, mask, &L, &md);
    memset(&lg, 0, sizeof lg);
    lg.dWq = G.Wq; lg.dbq = G.bq; lg.dWk = G.Wk; lg.dbk = G.bk;
    lg.dWv = G.Wv; lg.dbv = G.bv; lg.dWo = G.Wo; lg.dbo = G.bo;
    return attn_layer_backward(&L, w->dX, cross ? w->dmem : NULL, &lg, df, c.x, cross ? mem : NULL, c.att,
                               ATTN__CACHE_OWN, B, Tq, Tk, work, w->lw);
}

/* The embeddings' dropout masks in the cache: the encoder's (dec = 0) or the decoder's. */
static unsigned char *attn__s2s_keep0(const attn_seq2seq *m, const attn_float *cache, int B, int Ts, int dec)
{
    return (unsigned char *)attn__unconst(cache +
                             (dec ? attn__s2s_enc_floats(m, B, Ts) : attn__bytes_floats((size_t)B * Ts)));
}

/* The encoder over src [B, Ts]: the key mask, then e_L, into the cache. */
static attn_status attn__s2s_encode(const attn_seq2seq *m, attn_float *cache, const int *src, int B, int Ts,
                                    attn_rng *drop, const attn__s2s_work *w, void *work)
{
    const unsigned char *mask = attn__s2s_mask(m, cache, src, B, Ts);
    attn__s2s_cache c;
    int s;
    attn__s2s_map(m, 0, B, Ts, 1, cache, &c);
    attn__s2s_embed(m, c.x, attn__s2s_keep0(m, cache, B, Ts, 0), attn_seq2seq_named(m, 0).Es,
                    m->cfg.src_vocab, src, B, Ts, w->dS, drop);
    for (s = 0; s < 2 * m->cfg.enc_layers; s++)
        ATTN__TRY(attn__s2s_sub_forward(m, s, mask, NULL, B, Ts, 1, cache, drop, work, w->lw));
    return ATTN_OK;
}

/* The decoder over tgt [B, Tt] after attn__s2s_encode: logits [B, Tt, tgt_vocab]. */
static attn_status attn__s2s_decoder(const attn_seq2seq *m, attn_float *logits, attn_float *cache,
                                     const int *tgt, int B, int Ts, int Tt, attn_rng *drop,
                                     const attn__s2s_work *w, void *work)
{
    const unsigned char *mask = attn__s2s_mask(m, cache, NULL, B, Ts);
    const attn_seq2seq_tensors M = attn_seq2seq_named(m, 0);
    attn__s2s_cache c;
    attn_float *mem = attn__s2s_map(m, 2 * m->cfg.enc_layers - 1, B, Ts, Tt, cache, &c), *y = NULL;
    int s, S = attn__s2s_subs(&m->cfg);
    attn__s2s_map(m, 2 * m->cfg.enc_layers, B, Ts, Tt, cache, &c);
    attn__s2s_embed(m, c.x, attn__s2s_keep0(m, cache, B, Ts, 1), M.Et, m->cfg.tgt_vocab, tgt, B, Tt, w->dS,
                    drop);
    for (s = 2 * m->cfg.enc_layers; s < S; s++)
        ATTN__TRY(attn__s2s_sub_forward(m, s, mask, mem, B, Ts, Tt, cache, drop, work, w->lw));
    y = attn__s2s_map(m, S - 1, B, Ts, Tt, cache, &c);
    return attn_linear_forward(logits, y, M.Wout, M.bout, B * Tt, m->cfg.d, m->cfg.tgt_vocab);
}

ATTNDEF attn_status attn_seq2seq_forward(const attn_seq2seq *m, attn_float *logits, attn_float *cache,
                                         size_t cache_floats, const int *src, const int *tgt, int B, int Ts,
                                         int Tt, void *work, size_t work_bytes)
{
    attn__s2s_work w;
    attn_rng r;
    attn_rng *drop;
    ATTN__TRY(attn__s2s_args(__func__, m, cache, cache_floats, src, tgt, B, Ts, Tt, work, work_bytes));
    ATTN__NEED(logits);
    attn__s2s_work_map(m, B, Ts, Tt, work, &w);
    attn_rng_seed(&r, m->seed, 0x5e95e9);
    drop = m->training && m->cfg.dropout > 0 ? &r : NULL;
    ATTN__TRY(attn__s2s_encode(m, cache, src, B, Ts, drop, &w, work));
    return attn__s2s_decoder(m, logits, cache, tgt, B, Ts, Tt, drop, &w, work);
}

ATTNDEF attn_status attn_seq2seq_backward(attn_seq2seq *m, const attn_float *dlogits, const attn_float *cache,
                                          size_t cache_floats, const int *src, const int *tgt, int B, int Ts,
                                          int Tt, void *work, size_t work_bytes)
{
    const unsigned char *mask;
    attn__s2s_work w;
    attn__s2s_cache c;
    attn_seq2seq_tensors M, MG;
    const attn_float *mem, *y;
    int s, S, Le2, drop;
    ATTN__TRY(attn__s2s_args(__func__, m, cache, cache_floats, src, tgt, B, Ts, Tt, work, work_bytes));
    ATTN__NEED(dlogits);
    M = attn_seq2seq_named(m, 0); MG = attn_seq2seq_named(m, 1);
    attn__s2s_work_map(m, B, Ts, Tt, work, &w);
    mask = attn__s2s_mask(m, cache, NULL, B, Ts);
    drop = m->training && m->cfg.dropout > 0;
    S = attn__s2s_subs(&m->cfg); Le2 = 2 * m->cfg.enc_layers;
    /* logits = Wout y_L + bout: dy_L in dX */
    y = attn__s2s_map(m, S - 1, B, Ts, Tt, cache, &c);
    memset(w.dX, 0, sizeof(attn_float) * (size_t)B * Tt * m->cfg.d);
    attn_linear_backward(w.dX, MG.Wout, MG.bout, dlogits, y, M.Wout, B * Tt, m->cfg.d, m->cfg.tgt_vocab);
    /* the decoder, top down; the cross-attentions gather dL/de_L in dmem */
    mem = attn__s2s_map(m, Le2 - 1, B, Ts, Tt, cache, &c);
    memset(w.dmem, 0, sizeof(attn_float) * (size_t)B * Ts * m->cfg.d);
    for (s = S - 1; s >= Le2; s--)
        ATTN__TRY(attn__s2s_sub_backward(m, s, mask, mem, B, Ts, Tt, cache, drop, &w, work));
    attn__s2s_embed_back(m, MG.Et, w.dX, attn__s2s_keep0(m, cache, B, Ts, 1), m->cfg.tgt_vocab,
                         tgt, B, Tt, w.dS, drop);
    /* the encoder, from dL/de_L */
    memcpy(w.dX, w.dmem, sizeof(attn_float) * (size_t)B * Ts * m->cfg.d);
    for (s = Le2 - 1; s >= 0; s--)
        ATTN__TRY(attn__s2s_sub_backward(m, s, mask, NULL, B, Ts, Tt, cache, drop, &w, work));
    attn__s2s_embed_back(m, MG.Es, w.dX, attn__s2s_keep0(m, cache, B, Ts, 0), m->cfg.src_vocab,
                         src, B, Ts, w.dS, drop);
    return ATTN_OK;
}

ATTNDEF attn_status attn_seq2seq_weights(const attn_seq2seq *m, attn_float *weights, const attn_float *cache,
                                         size_t cache_floats, int B, int Ts, int Tt, int sub, void *work,
                                         size_t work_bytes)
{
    attn__s2s_cache c;
    attn_layer L;
    attn_mod md;
    int Tq, Tk;
    ATTN__NEED(m); ATTN__NEED(weights); ATTN__NEED(cache); ATTN__NEED(work);
    ATTN__TRY(attn__s2s_check(__func__, &m->cfg));
    if (sub < 0 || sub >= attn__s2s_subs(&m->cfg) || attn__s2s_type(&m->cfg, sub) == ATTN__S2S_FFN)
        return attn__fail(ATTN_ERR_ARG, "%s: sublayer %d is not one of the %d sublayers' attentions",
                          __func__, sub, attn__s2s_subs(&m->cfg));
    if (B < 1 || Ts < 1 || Ts > m->cfg.max_src || Tt < 1 || Tt > m->cfg.max_tgt)
        return attn__fail(ATTN_ERR_SHAPE, "%s: B = %d, Ts = %d (max %d), Tt = %d (max %d)", __func__, B, Ts,
                          m->cfg.max_src, Tt, m->cfg.max_tgt);
    if (work_bytes < attn_seq2seq_work_bytes(m, B, Ts, Tt))
        return attn__fail(ATTN_ERR_ARG, "%s: work has %lu bytes, attn_seq2seq_work_bytes() asks for %lu",
                          __func__, (unsigned long)work_bytes,
                          (unsigned long)attn_seq2seq_work_bytes(m, B, Ts, Tt));
    ATTN__TRY(attn__cache_ok(__func__, cache_floats, attn_seq2seq_cache_floats(m, B, Ts, Tt),
                             "attn_seq2seq_cache_floats"));
    attn__s2s_map(m, sub, B, Ts, Tt, cache, &c);
    attn__s2s_shape(&m->cfg, sub, Ts, Tt, &Tq, &Tk);
    attn__s2s_layer(m, sub, attn__s2s_mask(m, cache, NULL, B, Ts), &L, &md);
    return attn__layer_weights(&L, weights, c.att, B, Tq, Tk, work);
}

/* GNMT's length-normalised score log p / ((5 + len) / 6)^alpha. */
static double attn__beam_score(double logp, int len, double alpha)
{
    return alpha == 0 ? logp : logp / pow((5.0 + len) / 6.0, alpha);
}

/* Cached decoding for attn_seq2seq_decode: the cross-attentions' keys and values [layers, H, Ts, d]
   once per source, and per hypothesis the self-attentions' [layers, H, L1, d] (L1 = max_len + 1
   rows), so a step runs one position through the decoder. */
typedef struct {
    int Ld, H, dk, dv, Ts, L1, beam;
    attn_float *pe, *Kc, *Vc, *Ks[2], *Vs[2], *x, *r, *u;
    void *work; /* the layers' step work */
    size_t work_bytes;
} attn__s2s_kv;

static size_t attn__s2s_kv_map(const attn_seq2seq *m, int Ts, int max_len, int beam, void *mem,
                               attn__s2s_kv *c)
{
    const attn_seq2seq_config *cf = &m->cfg;
    attn_arena ar;
    attn_layer L;
    size_t self, cross, work;
    int i;
    c->Ld = cf->dec_layers; c->H = cf->heads; c->dk = cf->dk; c->dv = cf->dv; c->Ts = Ts; c->L1 = max_len + 1;
    c->beam = beam;
    self = (size_t)c->Ld * c->H * c->L1;
    cross = (size_t)c->Ld * c->H * Ts;
    for (i = 0, work = 0; i < c->Ld; i++) { /* each layer's self-attention step, and its source's */
        attn__s2s_layer(m, 2 * cf->enc_layers + 3 * i, NULL, &L, NULL);
        work = ATTN__MAX(work, attn_layer_step_work_bytes(&L, 1, c->L1));
        attn__s2s_layer(m, 2 * cf->enc_layers + 3 * i + 1, NULL, &L, NULL);
        work = ATTN__MAX(work, attn_layer_step_work_bytes(&L, Ts, Ts));
    }
    attn__arena_plan(&ar, mem);
    c->pe = attn__arena_floats(&ar, max_len * cf->d);
    c->Kc = attn__arena_floats(&ar, cross * c->dk);
    c->Vc = attn__arena_floats(&ar, cross * c->dv);
    for (i = 0; i < 2; i++) {
        c->Ks[i] = attn__arena_floats(&ar, beam * self * c->dk);
        c->Vs[i] = attn__arena_floats(&ar, beam * self * c->dv);
    }
    c->x = attn__arena_floats(&ar, cf->d);
    c->r = attn__arena_floats(&ar, cf->d);
    c->u = attn__arena_floats(&ar, cf->mlp);
    c->work = attn__arena_take(&ar, work);
    c->work_bytes = work;
    return ar.used + ATTN_ALIGN;
}

/* Decoder layer l's cross-attention (j = 1) or hypothesis k's self-attention (j = 0, buffer buf) cache. */
static attn_layer_kv attn__s2s_kv_layer(const attn__s2s_kv *c, int l, int j, int buf, int k)
{
    attn_layer_kv kv;
    size_t at = j ? (size_t)l * c->H * c->Ts : (size_t)k * c->Ld * c->H * c->L1 + (size_t)l * c->H * c->L1;
    kv.k = (j ? c->Kc : c->Ks[buf]) + at * c->dk;
    kv.v = (j ? c->Vc : c->Vs[buf]) + at * c->dv;
    kv.rows = j ? c->Ts : c->L1;
    kv.held = 0;
    return kv;
}

/* The per-source part: positional rows and the cross-attentions' keys and values from mem [Ts, d]. */
static attn_status attn__s2s_kv_source(const attn_seq2seq *m, attn__s2s_kv *c, const attn_float *mem,
                                       const unsigned char *mask, int max_len)
{
    attn_layer L;
    attn_mod md;
    int l;
    attn_pos_sinusoidal(c->pe, max_len, m->cfg.d);
    for (l = 0; l < c->Ld; l++) {
        attn_layer_kv kv = attn__s2s_kv_layer(c, l, 1, 0, 0);
        attn__s2s_layer(m, 2 * m->cfg.enc_layers + 3 * l + 1, mask, &L, &md);
        ATTN__TRY(attn_layer_kv_add(&L, &kv, mem, c->Ts, 0, c->work, c->work_bytes));
    }
    return ATTN_OK;
}

/* logits [V] of hypothesis k (self-attention rows in buffer `buf`) for token tok at position p. */
static attn_status attn__s2s_kv_step(const attn_seq2seq *m, attn__s2s_kv *c, int buf, int k, int tok, int p,
                                     const unsigned char *mask, attn_float *logits)
{
    const attn_seq2seq_config *cf = &m->cfg;
    const attn_seq2seq_tensors M = attn_seq2seq_named(m, 0);
    int l, j;
    attn_layer L;
    attn_mod md;
    attn_embedding_forward(c->x, &tok, M.Et, 1, cf->tgt_vocab, cf->d);
    attn_scale((size_t)cf->d, (attn_float)sqrt((double)cf->d), c->x);
    attn_axpy((size_t)cf->d, 1, c->pe + (size_t)p * cf->d, c->x);
    for (l = 0; l < c->Ld; l++)
        for (j = 0; j < 3; j++) { /* self-attention, cross-attention, FFN: x = LN(x + f(x)) */
            int s = 2 * cf->enc_layers + 3 * l + j;
            const attn_seq2seq_sublayer_tensors W = attn_seq2seq_sublayer_named(m, s, 0);
            if (j == 2) {
                attn_linear_forward(c->u, c->x, W.W1, W.b1, 1, cf->d, cf->mlp);
                attn_act_forward(c->u, c->u, (size_t)cf->mlp, ATTN_ACT_RELU);
                attn_linear_forward(c->r, c->u, W.W2, W.b2, 1, cf->mlp, cf->d);
            } else { /* this position's key and value join hypothesis k's rows; the source's are there */
                attn_layer_kv kv = attn__s2s_kv_layer(c, l, j, buf, k);
                kv.held = j ? c->Ts : p;
                attn__s2s_layer(m, s, mask, &L, &md);
                ATTN__TRY(attn_layer_step(&L, &kv, c->r, c->x, 1, p, j == 0, c->work, c->work_bytes));
            }
            attn_axpy((size_t)cf->d, 1, c->x, c->r);
            attn_layernorm_forward(c->x, NULL, NULL, c->r, W.g, W.b, 1, cf->d, cf->eps, cf->ln_eps);
        }
    return attn_linear_forward(logits, c->x, M.Wout, M.bout, 1, cf->d, cf->tgt_vocab);
}

/* The decoding's block for one source: caches, logits, the beam's bookkeeping and work, then (when
   the keys and values are cached: *cached) the key-value caches from *kv_at on. */
/* Beam search's work for K = beam hypotheses: the model's cache and logits [K, max_len, V], the
   hypotheses' log-probabilities (logp, nlogp [K]) and the candidates' scores (cand_s, cand_l [K V]);
   tokens: srcK [K Ts], tok, ntok [K, max_len + 1], tgt [K max_len], done, ndone, len, nlen, from [K],
   cand_h, cand_v [K V]; the passes' work; and, when decoding steps with cached keys and values
   (cached: unless the kind's scores shift with the key count, as sigmoid's, or the beam is wider
   than 64), their cache. Its size. */
typedef struct {
    attn_float *cache, *logits;
    double *logp, *nlogp, *cand_s, *cand_l;
    int *srcK, *tok, *ntok, *tgt, *done, *ndone, *len, *nlen, *from, *cand_h, *cand_v, cached;
    void *work;
    attn__s2s_kv kc;
} attn__s2s_beam;

static size_t attn__s2s_beam_map(const attn_seq2seq *m, int Ts, int max_len, int beam, void *mem,
                                 attn__s2s_beam *w)
{
    size_t K = (size_t)beam, V = (size_t)m->cfg.tgt_vocab, L1 = (size_t)max_len + 1;
    const attn_score_row *sr = attn_kind_get(m->cfg.kind)->score;
    attn_arena ar;
    void *kv;
    attn__arena_plan(&ar, mem);
    w->cache = attn__arena_floats(&ar, attn_seq2seq_cache_floats(m, beam, Ts, max_len));
    w->logits = attn__arena_floats(&ar, K * max_len * V);
    w->logp = (double *)attn__arena_take(&ar, sizeof(double) * K);
    w->nlogp = (double *)attn__arena_take(&ar, sizeof(double) * K);
    w->cand_s = (double *)attn__arena_take(&ar, sizeof(double) * K * V);
    w->cand_l = (double *)attn__arena_take(&ar, sizeof(double) * K * V);
    w->srcK = (int *)attn__arena_take(&ar, sizeof(int) * K * Ts);
    w->tok = (int *)attn__arena_take(&ar, sizeof(int) * K * L1);
    w->ntok = (int *)attn__arena_take(&ar, sizeof(int) * K * L1);
    w->tgt = (int *)attn__arena_take(&ar, sizeof(int) * K * max_len);
    w->done = (int *)attn__arena_take(&ar, sizeof(int) * K);
    w->ndone = (int *)attn__arena_take(&ar, sizeof(int) * K);
    w->len = (int *)attn__arena_take(&ar, sizeof(int) * K);
    w->nlen = (int *)attn__arena_take(&ar, sizeof(int) * K);
    w->from = (int *)attn__arena_take(&ar, sizeof(int) * K);
    w->cand_h = (int *)attn__arena_take(&ar, sizeof(int) * K * V);
    w->cand_v = (int *)attn__arena_take(&ar, sizeof(int) * K * V);
    w->work = attn__arena_take(&ar, attn_seq2seq_work_bytes(m, beam, Ts, max_len));
    w->cached = beam <= 64 && !(sr && sr->offset);
    if (w->cached) {
        kv = attn__arena_take(&ar, attn__s2s_kv_map(m, Ts, max_len, beam, NULL, &w->kc));
        if (kv) attn__s2s_kv_map(m, Ts, max_len, beam, kv, &w->kc);
    }
    return ar.used + ATTN_ALIGN;
}

ATTNDEF size_t attn_seq2seq_decode_work_bytes(const attn_seq2seq *m, int Ts, int max_len, int beam)
{
    attn__s2s_beam w;
    if (!m) {
        attn__fail(ATTN_ERR_ARG, "%s: m is NULL", __func__);
        return 0;
    }
    if (attn__s2s_check(__func__, &m->cfg) != ATTN_OK) return 0;
    if (beam < 1 || Ts < 1 || Ts > m->cfg.max_src || max_len < 1 || max_len > m->cfg.max_tgt) {
        attn__fail(ATTN_ERR_SHAPE, "%s: Ts = %d in 1 .. %d, max_len = %d in 1 .. %d, beam = %d >= 1",
                   __func__, Ts, m->cfg.max_src, max_len, m->cfg.max_tgt, beam);
        return 0;
    }
    return attn__s2s_beam_map(m, Ts, max_len, beam, NULL, &w);
}

ATTNDEF attn_status attn_seq2seq_decode(const attn_seq2seq *m, int *out, attn_float *score, const int *src,
                                        int B, int Ts, int bos, int eos, int max_len, int beam,
                                        attn_float alpha)
{
    size_t bytes = attn_seq2seq_decode_work_bytes(m, Ts, max_len, beam);
    void *work;
    attn_status st;
    if (!bytes) /* the call reports what is wrong */
        return attn_seq2seq_decode_in(m, out, score, src, B, Ts, bos, eos, max_len, beam, alpha, NULL, 0);
    if (!(work = ATTN_MALLOC(bytes)))
        return attn__fail(ATTN_ERR_NOMEM, "%s: no memory for %lu bytes", __func__, (unsigned long)bytes);
    st = attn_seq2seq_decode_in(m, out, score, src, B, Ts, bos, eos, max_len, beam, alpha, work, bytes);
    ATTN_FREE(work);
    return st;
}

ATTNDEF attn_status attn_seq2seq_decode_in(const attn_seq2seq *m, int *out, attn_float *score, const int *src,
                                           int B, int Ts, int bos, int eos, int max_len, int beam,
                                           attn_float alpha, void *work_mem, size_t work_bytes)
{
    attn_seq2seq dm;
    attn__s2s_work w;
    attn__s2s_beam bw;
    attn_float *cache, *logits;
    size_t i, V, K, L1, need;
    int *srcK, *tok, *ntok, *tgt, *done, *ndone, *len, *nlen, *from, *cand_h, *cand_v, b, t, k, j, nh, nc, v,
        cur = 0, cached;
    double *logp, *nlogp, *cand_s, *cand_l;
    void *work;
    attn_status st = ATTN_OK;
    ATTN__NEED(m); ATTN__NEED(out); ATTN__NEED(src);
    ATTN__TRY(attn__s2s_check(__func__, &m->cfg));
    if (beam < 1)
        return attn__fail(ATTN_ERR_ARG, "%s: the beam width is %d; it must be >= 1 (1: greedy)", __func__,
                          beam);
    if (B < 1 || Ts < 1 || Ts > m->cfg.max_src || max_len < 1 || max_len > m->cfg.max_tgt)
        return attn__fail(ATTN_ERR_SHAPE,
                          "%s: B = %d >= 1, Ts = %d in 1 .. max_src %d, max_len = %d in 1 .. max_tgt %d",
                          __func__, B, Ts, m->cfg.max_src, max_len, m->cfg.max_tgt);
    if (bos < 0 || bos >= m->cfg.tgt_vocab || eos < 0 || eos >= m->cfg.tgt_vocab)
        return attn__fail(ATTN_ERR_ARG, "%s: bos %d and eos %d must be target tokens (0 .. %d)", __func__,
                          bos, eos, m->cfg.tgt_vocab - 1);
    for (i = 0; i < (size_t)B * Ts; i++)
        if (src[i] < 0 || src[i] >= m->cfg.src_vocab)
            return attn__fail(ATTN_ERR_ARG, "%s: src[%lu] = %d is not in 0 .. %d", __func__, (unsigned long)i,
                              src[i], m->cfg.src_vocab - 1);
    dm = *m;
    dm.training = 0;
    K = (size_t)beam; V = (size_t)m->cfg.tgt_vocab; L1 = (size_t)max_len + 1;
    ATTN__NEED(work_mem);
    need = attn__s2s_beam_map(m, Ts, max_len, beam, NULL, &bw);
    if (work_bytes < need)
        return attn__fail(ATTN_ERR_ARG, "%s: work of %lu bytes, %lu needed", __func__,
                          (unsigned long)work_bytes, (unsigned long)need);
    attn__s2s_beam_map(m, Ts, max_len, beam, work_mem, &bw);
    cache = bw.cache; logits = bw.logits; logp = bw.logp; nlogp = bw.nlogp; cand_s = bw.cand_s;
    cand_l = bw.cand_l; srcK = bw.srcK; tok = bw.tok; ntok = bw.ntok; tgt = bw.tgt; done = bw.done;
    ndone = bw.ndone; len = bw.len; nlen = bw.nlen; from = bw.from; cand_h = bw.cand_h; cand_v = bw.cand_v;
    cached = bw.cached; work = bw.work;
    {
        attn__s2s_work_map(&dm, beam, Ts, max_len, work, &w);
        for (b = 0; b < B && st == ATTN_OK; b++) {
            for (k = 0; k < (cached ? 1 : beam); k++)
                memcpy(srcK + (size_t)k * Ts, src + (size_t)b * Ts, sizeof(int) * (size_t)Ts);
            if ((st = attn__s2s_encode(&dm, cache, srcK, cached ? 1 : beam, Ts, NULL, &w, work)) != ATTN_OK)
                break;
            if (cached) {
                attn__s2s_cache ec;
                const attn_float *mem = attn__s2s_map(&dm, 2 * dm.cfg.enc_layers - 1, 1, Ts, 1, cache, &ec);
                st = attn__s2s_kv_source(&dm, &bw.kc, mem, attn__s2s_mask(&dm, cache, NULL, 1, Ts), max_len);
                if (st != ATTN_OK) break;
            }
            nh = 1; tok[0] = bos; logp[0] = 0; done[0] = 0; len[0] = 0;
            for (t = 1; t <= max_len; t++) {
                int all = 1;
                if (cached) { /* position t - 1 of each live hypothesis; logits where the rerun puts them */
                    for (k = 0; k < nh && st == ATTN_OK; k++)
                        if (!done[k])
                            st = attn__s2s_kv_step(&dm, &bw.kc, cur, k, tok[(size_t)k * L1 + t - 1], t - 1,
                                                   attn__s2s_mask(&dm, cache, NULL, 1, Ts),
                                                   logits + ((size_t)k * t + t - 1) * V);
                } else {
                    for (k = 0; k < beam; k++)
                        memcpy(tgt + (size_t)k * t, tok + (size_t)(k < nh ? k : 0) * L1,
                               sizeof(int) * (size_t)t);
                    st = attn__s2s_decoder(&dm, logits, cache, tgt, beam, Ts, t, NULL, &w, work);
                }
                if (st != ATTN_OK) break;
                for (nc = 0, k = 0; k < nh;
                     k++) { /* the candidates: finished hypotheses as they are, the others extended */
                    const attn_float *z = logits + ((size_t)k * t + t - 1) * V;
                    double mx = z[0], lse = 0;
                    if (done[k]) {
                        cand_s[nc] = attn__beam_score(logp[k], len[k], alpha);
                        cand_l[nc] = logp[k];
                        cand_h[nc] = k;
                        cand_v[nc++] = -1;
                        continue;
                    }
                    for (v = 1; v < (int)V; v++) mx = z[v] > mx ? z[v] : mx;
                    for (v = 0; v < (int)V; v++) lse += exp(z[v] - mx);
                    lse = mx + log(lse);
                    for (v = 0; v < (int)V; v++) {
                        cand_l[nc] = logp[k] + z[v] - lse;
                        cand_s[nc] = attn__beam_score(cand_l[nc], t, alpha); cand_h[nc] = k; cand_v[nc++] = v;
                    }
                }
                for (j = 0; j < beam && j < nc;
                     j++) { /* the best remaining candidate becomes hypothesis j (first on ties) */
                    int best = -1, c;
                    for (c = 0; c < nc; c++)
                        if (cand_h[c] >= 0 && (best < 0 || cand_s[c] > cand_s[best])) best = c;
                    k = from[j] = cand_h[best];
                    memcpy(ntok + (size_t)j * L1, tok + (size_t)k * L1, sizeof(int) * L1);
                    ntok[(size_t)j * L1 + t] = cand_v[best] >= 0
                                                   ? cand_v[best]
                                                   : eos; /* a finished one is padded with eos */
                    nlogp[j] = cand_l[best];
                    ndone[j] = done[k] || cand_v[best] == eos;
                    nlen[j] = done[k] ? len[k] : t;
                    all &= ndone[j];
                    cand_h[best] = -1;
                }
                nh = j;
                for (j = 0; cached && j < nh; j++) { /* hypothesis j takes its parent's rows 0 .. t - 1 */
                    size_t self = (size_t)bw.kc.Ld * bw.kc.H * bw.kc.L1, r;
                    for (r = 0; r < (size_t)bw.kc.Ld * bw.kc.H; r++) {
                        memcpy(bw.kc.Ks[1 - cur] + ((size_t)j * self + r * bw.kc.L1) * bw.kc.dk,
                               bw.kc.Ks[cur] + ((size_t)from[j] * self + r * bw.kc.L1) * bw.kc.dk,
                               sizeof(attn_float) * t * bw.kc.dk);
                        memcpy(bw.kc.Vs[1 - cur] + ((size_t)j * self + r * bw.kc.L1) * bw.kc.dv,
                               bw.kc.Vs[cur] + ((size_t)from[j] * self + r * bw.kc.L1) * bw.kc.dv,
                               sizeof(attn_float) * t * bw.kc.dv);
                    }
                }
                cur = cached ? 1 - cur : cur;
                memcpy(tok, ntok, sizeof(int) * K * L1); memcpy(logp, nlogp, sizeof(double) * K);
                memcpy(done, ndone, sizeof(int) * K); memcpy(len, nlen, sizeof(int) * K);
                if (all) break;
            }
            for (t = 0; t < max_len; t++) out[(size_t)b * max_len + t] = t < len[0] ? tok[t + 1] : -1;
            if (score) score[b] = (attn_float)attn__beam_score(logp[0], len[0], alpha);
        }
    }
    return st;
}

/* ---- 9. tasks --------------------------------------------------------------------------------- */

static const char *const attn__nt_names[ATTN_NT_TASK_COUNT] = {"nt", "nts", "ntr", "mix"};

ATTNDEF const char *attn_nt_name(attn_nt_task t)
{
    return t >= 0 && t < ATTN_NT_TASK_COUNT ? attn__nt_names[t] : "?";
}

ATTNDEF int attn_nt_from_name(const char *name)
{
    return attn__name_index(attn__nt_names, ATTN_NT_TASK_COUNT, name);
}

ATTNDEF int attn_nt_next(attn_nt_task task, int N, int tau, const int *prev)
{
    int nt, sum = 0, k;
    if ((int)task < 0 || task >= ATTN_NT_MIX || N < 2 || tau < 1 || !prev)
        return attn__fail(
                   ATTN_ERR_ARG,
                   "attn_nt_next: task %d must be nt, nts or ntr, N = %d >= 2, tau = %d >= 1, prev not NULL",
                   (int)task, N, tau),
               -1;
    nt = (prev[0] + prev[1]) % N; /* x(t - tau - 1) + x(t - tau) */
    if (task == ATTN_NT || (task == ATTN_NT_R && prev[0] != 0)) return nt;
    for (k = 0; k <= tau; k++) sum = (sum + prev[k]) % N;
    return sum;
}

ATTNDEF attn_status attn_nt_series(int *x, int len, attn_nt_task task, int N, int tau, const int *init,
                                   attn_rng *r, attn_nt_task *rule)
{
    int t;
    ATTN__NEED(x);
    if (task < 0 || task >= ATTN_NT_TASK_COUNT)
        return attn__fail(ATTN_ERR_ARG, "attn_nt_series: unknown task %d", (int)task);
    if (N < 2 || tau < 1 || len < tau + 1)
        return attn__fail(
            ATTN_ERR_ARG,
            "attn_nt_series: needs N >= 2 (got %d), tau >= 1 (got %d) and len >= tau + 1 (got %d)", N, tau,
            len);
    if (!r && (!init || task == ATTN_NT_MIX))
        return attn__fail(ATTN_ERR_ARG, "attn_nt_series: a random initial condition or mixture needs r");
    for (t = 0; init && t <= tau; t++)
        if (init[t] < 0 || init[t] >= N)
            return attn__fail(ATTN_ERR_ARG, "attn_nt_series: init[%d] = %d is not a symbol of 0 .. %d", t,
                              init[t], N - 1);
    if (task == ATTN_NT_MIX) task = attn_rng_int(r, 2) ? ATTN_NT_S : ATTN_NT;
    if (rule) *rule = task;
    for (t = 0; t <= tau; t++) x[t] = init ? init[t] : (int)attn_rng_int(r, (uint32_t)N);
    for (; t < len; t++) x[t] = attn_nt_next(task, N, tau, x + t - tau - 1);
    return ATTN_OK;
}

/* State s = sum_k x_k N^(tau - k) (oldest symbol most significant) decoded into x [tau + 1]. */
static void attn__nt_decode(int N, int tau, uint32_t s, int *x)
{
    int k;
    for (k = tau; k >= 0; k--) { x[k] = (int)(s % (uint32_t)N); s /= (uint32_t)N; }
}

/* The successor of state s, whose symbols x [tau + 1] are rolled along with it. */
static uint32_t attn__nt_step(attn_nt_task task, int N, int tau, uint32_t s, uint32_t top, int *x)
{
    int next = attn_nt_next(task, N, tau, x);
    memmove(x, x + 1, sizeof(int) * (size_t)tau);
    x[tau] = next;
    return (s % top) * (uint32_t)N + (uint32_t)next;
}

/* Adds one cycle of length len to the census; 0 if there are too many distinct lengths. */
static int attn__nt_add_cycle(attn_nt_census *c, long len)
{
    int k;
    for (k = 0; k < c->nlengths && c->length[k] != len; k++) {}
    if (k == ATTN_NT_MAX_LENGTHS) return 0;
    if (k == c->nlengths) c->length[c->nlengths++] = len;
    c->count[k]++;
    c->cycles++;
    c->cycle_states += len;
    return 1;
}

ATTNDEF attn_status attn_nt_census_compute(attn_nt_census *out, attn_nt_task task, int N, int tau)
{
    attn_nt_census census, *c = &census; /* written to *out only on success */
    uint32_t *mark, s, top, walk = 0, states;
    double n = 1;
    int k, bijection = task != ATTN_NT_R, ok = 1;
    size_t bytes;
    ATTN__NEED(out);
    if (task != ATTN_NT && task != ATTN_NT_S && task != ATTN_NT_R)
        return attn__fail(ATTN_ERR_ARG, "attn_nt_census_compute: the task must be nt, nts or ntr");
    if (N < 2 || tau < 1 || tau > 30)
        return attn__fail(ATTN_ERR_ARG,
                          "attn_nt_census_compute: needs N >= 2 and 1 <= tau <= 30 (got %d, %d)", N, tau);
    for (k = 0; k <= tau; k++) n *= N;
    if (n > (double)(1u << 27))
        return attn__fail(ATTN_ERR_ARG,
                          "attn_nt_census_compute: N^(tau+1) = %.0f states is over the 2^27 limit", n);
    states = (uint32_t)n;
    top = states / (uint32_t)N;
    /* A bijection's walks are its cycles, so one visited bit per state does (and stays in cache); NT-R
       marks each state with the walk that reached it, to tell a new cycle from a known path. */
    bytes = bijection ? (states + 31) / 32 * sizeof(uint32_t) : sizeof(uint32_t) * states;
    mark = (uint32_t *)ATTN_MALLOC(bytes);
    if (!mark)
        return attn__fail(ATTN_ERR_NOMEM, "attn_nt_census_compute: cannot allocate %lu bytes",
                          (unsigned long)bytes);
    memset(mark, 0, bytes);
    memset(c, 0, sizeof *c);
    c->states = (long)states;
    for (s = 0; s < states && ok; s++) {
        uint32_t u = s, len = 0;
        int x[32];
        if (bijection ? (mark[s >> 5] >> (s & 31)) & 1u : mark[s] != 0) continue;
        attn__nt_decode(N, tau, s, x);
        if (bijection) { /* around the cycle through s */
            do {
                mark[u >> 5] |= 1u << (u & 31);
                u = attn__nt_step(task, N, tau, u, top, x);
                len++;
            } while (u != s);
        } else { /* walk until a marked state; a cycle is new only if this walk marked it */
            uint32_t v;
            walk++;
            while (!mark[u]) { mark[u] = walk; u = attn__nt_step(task, N, tau, u, top, x); }
            if (mark[u] != walk) continue;
            v = u; /* x holds u's symbols */
            do { v = attn__nt_step(task, N, tau, v, top, x); len++; } while (v != u);
        }
        ok = attn__nt_add_cycle(c, (long)len);
    }
    ATTN_FREE(mark);
    if (!ok)
        return attn__fail(ATTN_ERR_ARG, "attn_nt_census_compute: more than %d distinct cycle lengths",
                          ATTN_NT_MAX_LENGTHS);
    c->transient = c->states - c->cycle_states;
    for (k = 1; k < c->nlengths; k++) { /* longest first (insertion sort of a short list) */
        long l = c->length[k], m = c->count[k];
        int j = k;
        for (; j > 0 && c->length[j - 1] < l; j--) {
            c->length[j] = c->length[j - 1];
            c->count[j] = c->count[j - 1];
        }
        c->length[j] = l;
        c->count[j] = m;
    }
    *out = census;
    return ATTN_OK;
}

/* ---- fuzzy logic ---- */

/* Fisher-Yates with r: a uniformly random order of idx [n]. */
static void attn__shuffle(int *idx, int n, attn_rng *r)
{
    int i;
    for (i = n - 1; i > 0; i--) {
        int j = (int)attn_rng_int(r, (uint32_t)i + 1), t = idx[i];
        idx[i] = idx[j];
        idx[j] = t;
    }
}

/* C(n, k) as a double (exact below 2^53). */
static double attn__choose(int n, int k)
{
    double c = 1;
    int i;
    if (k < 0 || k > n) return 0;
    for (i = 1; i <= k; i++) c = c * (n - k + i) / i;
    return c;
}

/* Writes the K-subsets of {first .. first + n - 1} in lexicographic order to out [C(n, K), K]. */
static void attn__subsets(int *out, int first, int n, int K)
{
    int c[32], i, j, m = 0;
    for (i = 0; i < K; i++) c[i] = i;
    while (K <= n) {
        for (i = 0; i < K; i++) out[(size_t)m * K + i] = first + c[i];
        m++;
        for (i = K - 1; i >= 0 && c[i] == n - K + i; i--) {}
        if (i < 0) break;
        c[i]++;
        for (j = i + 1; j < K; j++) c[j] = c[j - 1] + 1;
    }
}

ATTNDEF attn_status attn_fuzzy_init(attn_fuzzy *f, int L, int K, int N, double frac_heldout,
                                    double frac_ood_terms, uint64_t seed)
{
    int nt, seen, nin, nhold, i, *all, *order;
    double cin, cood;
    attn_rng r;
    ATTN__NEED(f);
    if (L < 1 || L > 12 || K < 1 || K > 32 || N < 2)
        return attn__fail(ATTN_ERR_ARG,
                          "attn_fuzzy_init: L = %d must be in 1 .. 12, K = %d in 1 .. 32, N = %d >= 2", L, K,
                          N);
    if (!(frac_heldout > 0 && frac_heldout < 1) || !(frac_ood_terms >= 0 && frac_ood_terms < 1))
        return attn__fail(ATTN_ERR_ARG,
                          "attn_fuzzy_init: the held-out fraction %g must be in (0, 1), the unseen-term "
                          "fraction %g in [0, 1)",
                          frac_heldout, frac_ood_terms);
    nt = 1 << L;
    f->num_ood = (int)(nt * frac_ood_terms);
    seen = nt - f->num_ood;
    cin = attn__choose(seen, K); cood = attn__choose(f->num_ood, K);
    if (cin + cood > (double)(1 << 24))
        return attn__fail(ATTN_ERR_ARG, "attn_fuzzy_init: %.0f combinations of %d terms; at most 2^24",
                          cin + cood, K);
    nin = (int)cin;
    nhold = (int)(nin * frac_heldout);
    if (nhold < 1 || nin - nhold < 1)
        return attn__fail(ATTN_ERR_ARG,
                          "attn_fuzzy_init: %d seen terms give %d combinations of %d; held out %d leaves %d "
                          "to train on (both must be >= 1)",
                          seen, nin, K, nhold, nin - nhold);
    all = (int *)ATTN_MALLOC(sizeof(int) * ((size_t)(nin + (int)cood) * K + (size_t)nin * (K + 1)));
    if (!all) return attn__fail(ATTN_ERR_NOMEM, "attn_fuzzy_init: out of memory");
    /* all: [held-out | train | unseen] combinations; order: the shuffled indices, then scratch */
    order = all + (size_t)(nin + (int)cood) * K;
    attn__subsets(order + nin, 0, seen, K);
    for (i = 0; i < nin; i++) order[i] = i;
    attn_rng_seed(&r, seed, 0x66757a7aull);
    attn__shuffle(order, nin, &r);
    for (i = 0; i < nin; i++)
        memcpy(all + (size_t)i * K, order + nin + (size_t)order[i] * K, sizeof(int) * (size_t)K);
    attn__subsets(all + (size_t)nin * K, seen, f->num_ood, K);
    f->L = L; f->K = K; f->N = N; f->nterms = nt; f->owned = all;
    f->combos[ATTN_FUZZY_HELDOUT] = all; f->count[ATTN_FUZZY_HELDOUT] = nhold;
    f->combos[ATTN_FUZZY_TRAIN] = all + (size_t)nhold * K; f->count[ATTN_FUZZY_TRAIN] = nin - nhold;
    f->combos[ATTN_FUZZY_UNSEEN] = all + (size_t)nin * K; f->count[ATTN_FUZZY_UNSEEN] = (int)cood;
    return ATTN_OK;
}

ATTNDEF void attn_fuzzy_free(attn_fuzzy *f)
{
    if (f && f->owned) ATTN_FREE(f->owned);
    if (f) f->owned = NULL;
}

ATTNDEF double attn_fuzzy_value(const attn_fuzzy *f, const int *terms, const attn_float *x)
{
    double best = 0;
    int k, i;
    if (!f || !terms || !x) return attn__fail(ATTN_ERR_ARG, "%s: f, terms or x is NULL", __func__), -1;
    for (k = 0; k < f->K; k++) { /* OR = max over the terms of AND = min over the literals */
        double t = 1;
        for (i = 0; i < f->L; i++) {
            double l = (terms[k] >> (f->L - 1 - i) & 1) ? x[i] : 1 - x[i];
            t = l < t ? l : t;
        }
        best = t > best ? t : best;
    }
    return best;
}

ATTNDEF attn_status attn_fuzzy_batch(const attn_fuzzy *f, attn_fuzzy_split split, int B, attn_float *x,
                                     attn_float *y, attn_float *var, int *combo, attn_rng *r)
{
    int b, t, i, w;
    ATTN__NEED(f); ATTN__NEED(x); ATTN__NEED(y); ATTN__NEED(var); ATTN__NEED(r);
    if ((int)split < 0 || split >= ATTN_FUZZY_SPLITS || B < 1)
        return attn__fail(ATTN_ERR_ARG, "attn_fuzzy_batch: split %d, B = %d", (int)split, B);
    if (f->count[split] < 1)
        return attn__fail(ATTN_ERR_ARG, "attn_fuzzy_batch: split %d has no combination", (int)split);
    w = f->L + 1;
    for (b = 0; b < B; b++) {
        int c = (int)attn_rng_int(r, (uint32_t)f->count[split]);
        const int *terms = f->combos[split] + (size_t)c * f->K;
        attn_float *s = x + (size_t)b * f->N * w;
        double mean = 0, v = 0;
        for (t = 0; t < f->N; t++) {
            attn_float *e = s + (size_t)t * w;
            for (i = 0; i < f->L; i++) e[i] = (attn_float)attn_rng_uniform(r);
            e[f->L] = (attn_float)attn_fuzzy_value(f, terms, e);
            mean += e[f->L] / f->N;
        }
        for (t = 0; t < f->N; t++)
            v += (s[(size_t)t * w + f->L] - mean) * (s[(size_t)t * w + f->L] - mean) / f->N;
        y[b] = s[(size_t)(f->N - 1) * w + f->L];
        s[(size_t)(f->N - 1) * w + f->L] = 0; /* the query */
        var[b] = (attn_float)v;
        if (combo) combo[b] = c;
    }
    return ATTN_OK;
}

ATTNDEF double attn_fuzzy_r2(const attn_float *pred, const attn_float *y, const attn_float *var, int B)
{
    double s = 0;
    int b;
    if (!pred || !y || !var || B < 1)
        return attn__fail(ATTN_ERR_ARG, "%s: pred, y, var NULL or B = %d (>= 1)", __func__, B), NAN;
    for (b = 0; b < B; b++) s += 1 - ((double)pred[b] - y[b]) * ((double)pred[b] - y[b]) / var[b];
    return s / B;
}

/* ---- SRAVEN ---- */

ATTNDEF attn_status attn_sraven_init(attn_sraven *s, int K, int F, double frac_ood, int permute,
                                     uint64_t seed)
{
    int n, i, k, *order, *tuples;
    unsigned char *lat;
    attn_rng r;
    ATTN__NEED(s);
    if (K < 1 || K > 8 || F < 3 || F > 32)
        return attn__fail(ATTN_ERR_ARG, "attn_sraven_init: K = %d must be in 1 .. 8 and F = %d in 3 .. 32", K,
                          F);
    if (!(frac_ood > 0 && frac_ood < 1))
        return attn__fail(ATTN_ERR_ARG, "attn_sraven_init: frac_ood = %g must be in (0, 1)", frac_ood);
    n = (int)attn__choose(ATTN_SRAVEN_RULES + K - 1, K);
    if ((int)(n * frac_ood) < 1 || (int)(n * frac_ood) >= n)
        return attn__fail(
            ATTN_ERR_ARG,
            "attn_sraven_init: frac_ood = %g holds out %d of %d latents; both sides must be non-empty",
            frac_ood, (int)(n * frac_ood), n);
    tuples = (int *)ATTN_MALLOC(sizeof(int) * (size_t)n * (K + 1));
    lat = (unsigned char *)ATTN_MALLOC((size_t)n * K);
    if (!tuples || !lat) {
        ATTN_FREE(tuples); ATTN_FREE(lat);
        return attn__fail(ATTN_ERR_NOMEM, "attn_sraven_init: out of memory");
    }
    /* multisets of K rules = K-subsets of {0 .. R+K-2} minus their positions (stars and bars),
       both in lexicographic order */
    attn__subsets(tuples, 0, ATTN_SRAVEN_RULES + K - 1, K);
    order = tuples + (size_t)n * K;
    for (i = 0; i < n; i++) order[i] = i;
    attn_rng_seed(&r, seed, 0x72617665ull);
    attn__shuffle(order, n, &r);
    for (i = 0; i < n; i++)
        for (k = 0; k < K; k++)
            lat[(size_t)i * K + k] = (unsigned char)(tuples[(size_t)order[i] * K + k] - k);
    ATTN_FREE(tuples);
    s->K = K;
    s->F = F;
    s->permute = permute != 0;
    s->nlatent = n;
    s->nood = (int)(n * frac_ood);
    s->latent = lat;
    s->owned = lat;
    return ATTN_OK;
}

ATTNDEF void attn_sraven_free(attn_sraven *s)
{
    if (s && s->owned) ATTN_FREE(s->owned);
    if (s) s->owned = NULL;
}

/* The 3 x 3 grid g [9] of one feature under rule `rule`, rows drawn independently. */
static void attn__sraven_grid(int rule, int F, int *g, attn_rng *r)
{
    static const int step[5] = {0, 1, 2, -1, -2};
    int row, sym[3] = {0, 0, 0}, i;
    if (rule == 7) { /* three distinct symbols, drawn once */
        sym[0] = (int)attn_rng_int(r, (uint32_t)F);
        do sym[1] = (int)attn_rng_int(r, (uint32_t)F); while (sym[1] == sym[0]);
        do sym[2] = (int)attn_rng_int(r, (uint32_t)F); while (sym[2] == sym[0] || sym[2] == sym[1]);
    }
    for (row = 0; row < 3; row++) {
        int *c = g + 3 * row, a = (int)attn_rng_int(r, (uint32_t)F), b;
        if (rule <= 4) for (i = 0; i < 3; i++) c[i] = ((a + i * step[rule]) % F + F) % F;
        else if (rule <= 6) {
            b = (int)attn_rng_int(r, (uint32_t)F);
            c[0] = a; c[1] = b; c[2] = ((rule == 5 ? a + b : a - b) % F + F) % F;
        } else {
            int p[3] = {0, 1, 2};
            attn__shuffle(p, 3, r);
            for (i = 0; i < 3; i++) c[i] = sym[p[i]];
        }
    }
}

ATTNDEF attn_status attn_sraven_panels(const attn_sraven *s, int li, int *panels, attn_rng *r)
{
    int g[8][9], pi[3][8], k, c, row;
    ATTN__NEED(s); ATTN__NEED(panels); ATTN__NEED(r);
    if (li < 0 || li >= s->nlatent)
        return attn__fail(ATTN_ERR_ARG, "attn_sraven_panels: latent %d of %d", li, s->nlatent);
    for (k = 0; k < s->K; k++) attn__sraven_grid(s->latent[(size_t)li * s->K + k], s->F, g[k], r);
    for (c = 0; c < 3; c++) {
        for (k = 0; k < s->K; k++) pi[c][k] = k;
        if (s->permute) attn__shuffle(pi[c], s->K, r);
    }
    for (row = 0; row < 3; row++)
        for (c = 0; c < 3; c++)
            for (k = 0; k < s->K; k++) panels[(3 * row + c) * s->K + k] = g[pi[c][k]][3 * row + c];
    return ATTN_OK;
}

ATTNDEF attn_status attn_sraven_batch(const attn_sraven *s, int ood, int B, attn_float *x, int *targets,
                                      int *latent, attn_rng *r)
{
    int b, p, k, panels[9 * 8], T;
    ATTN__NEED(s); ATTN__NEED(x); ATTN__NEED(targets); ATTN__NEED(r);
    if (B < 1) return attn__fail(ATTN_ERR_ARG, "attn_sraven_batch: B = %d", B);
    T = 9 * s->K;
    memset(x, 0, sizeof(attn_float) * (size_t)B * T * s->F);
    for (b = 0; b < B; b++) {
        int li = ood ? (int)attn_rng_int(r, (uint32_t)s->nood)
                     : s->nood + (int)attn_rng_int(r, (uint32_t)(s->nlatent - s->nood));
        attn_float *e = x + (size_t)b * T * s->F;
        attn_sraven_panels(s, li, panels, r);
        for (p = 0; p < 8; p++)
            for (k = 0; k < s->K; k++) e[((size_t)p * s->K + k) * s->F + panels[p * s->K + k]] = 1;
        for (k = 0; k < s->K; k++) targets[(size_t)b * s->K + k] = panels[8 * s->K + k];
        if (latent) latent[b] = li;
    }
    return ATTN_OK;
}

/* The values the 8 rules predict for cell (2, 2) of a feature's grid g [8] (row-major, the last
   cell missing), as a bit mask: a rule counts when rows 0 and 1 follow it and row 2 starts as it
   would. */
static uint32_t attn__sraven_predict(const int *g, int F)
{
    static const int step[5] = {0, 1, 2, -1, -2};
    uint32_t m = 0;
    int rule, row;
    for (rule = 0; rule < 7; rule++) {
        int ok = 1;
        for (row = 0; row < 3 && ok; row++) {
            const int *c = g + 3 * row;
            int want1 = rule <= 4 ? ((c[0] + step[rule]) % F + F) % F : c[1];
            int want2 = rule <= 4 ? ((c[0] + 2 * step[rule]) % F + F) % F
                                  : ((rule == 5 ? c[0] + c[1] : c[0] - c[1]) % F + F) % F;
            if (c[1] != want1) ok = 0;
            else if (row < 2 && c[2] != want2) ok = 0;
            else if (row == 2) m |= 1u << want2;
        }
    }
    { /* distribute three: rows 0 and 1 permutations of one set of 3 distinct symbols; row 2 two of them */
        uint32_t s0 = 1u << g[0] | 1u << g[1] | 1u << g[2], s1 = 1u << g[3] | 1u << g[4] | 1u << g[5],
                 two = 1u << g[6] | 1u << g[7];
        if (s0 == s1 && g[0] != g[1] && g[0] != g[2] && g[1] != g[2] && g[6] != g[7] && (two & s0) == two)
            m |= s0 & ~two;
    }
    return m;
}

ATTNDEF int attn_sraven_ambiguous(const attn_sraven *s, const int *panels, int every)
{
    int K = s ? s->K : 0, a, b, c, k, f, n, p[720][6], idx[6];
    uint32_t
        mask[6][6]
            [6]; /* mask[f][j][l]: feature at column-0 position f, column-1 position j, column-2 position l */
    int g[8];
    if (!panels || K < 1 || K > 6)
        return attn__fail(ATTN_ERR_ARG, "%s: panels NULL or K = %d outside 1 .. 6", __func__, K), -1;
    for (f = 0; f < K; f++)
        for (a = 0; a < K; a++)
            for (b = 0; b < K; b++) {
                for (k = 0; k < 3; k++) { /* the rows: columns 0, 1, 2 at positions f, a, b */
                    g[3 * k] = panels[(3 * k) * K + f];
                    g[3 * k + 1] = panels[(3 * k + 1) * K + a];
                    if (k < 2) g[3 * k + 2] = panels[(3 * k + 2) * K + b];
                }
                mask[f][a][b] = attn__sraven_predict(g, s->F);
            }
    /* every order of K positions, for columns 1 and 2 (column 0's order is the reference) */
    for (k = 0; k < K; k++) idx[k] = k;
    n = 0;
    for (;;) {
        memcpy(p[n++], idx, sizeof idx);
        for (k = K - 2; k >= 0 && idx[k] > idx[k + 1]; k--) {}
        if (k < 0) break;
        for (c = K - 1; idx[c] < idx[k]; c--) {}
        a = idx[k]; idx[k] = idx[c]; idx[c] = a;
        for (a = k + 1, b = K - 1; a < b; a++, b--) { c = idx[a]; idx[a] = idx[b]; idx[b] = c; }
    }
    for (a = 0; a < n; a++)
        for (b = 0; b < n; b++) {
            int all = 1, other = 0, others = 1;
            for (f = 0; f < K && all; f++) {
                uint32_t m = mask[f][p[a][f]][p[b][f]];
                int l = p[b][f], truth = panels[8 * K + l], differs = (m & ~(1u << truth)) != 0;
                all = m != 0;
                other |= differs;
                others &= differs;
            }
            if (all && (every ? others : other)) return 1;
        }
    return 0;
}

/* ---- digit strings ---- */

ATTNDEF attn_status attn_digits_batch(attn_digits_task task, int min_len, int max_len, int test, int B,
                                      int *src, int *tgt_in, int *tgt_out, attn_rng *r)
{
    unsigned char dig[256];
    int b, t, i, L, T, tries, cnt[10];
    ATTN__NEED(src); ATTN__NEED(tgt_in); ATTN__NEED(tgt_out); ATTN__NEED(r);
    if ((int)task < 0 || task > ATTN_DIGITS_SORT || min_len < 1 || max_len < min_len || max_len > 255 ||
        B < 1)
        return attn__fail(ATTN_ERR_ARG,
                          "attn_digits_batch: task %d, lengths %d .. %d (1 <= min <= max <= 255), B = %d",
                          (int)task, min_len, max_len, B);
    T = max_len + 1;
    for (b = 0; b < B; b++) {
        int *s = src + (size_t)b * T, *ti = tgt_in + (size_t)b * T, *to = tgt_out + (size_t)b * T;
        for (tries = 0;; tries++) { /* a string of the split */
            if (tries == 10000)
                return attn__fail(ATTN_ERR_ARG, "attn_digits_batch: no %s string of length %d .. %d found",
                                  test ? "held-out" : "training", min_len, max_len);
            L = min_len + (int)attn_rng_int(r, (uint32_t)(max_len - min_len + 1));
            for (i = 0; i < L; i++) dig[i] = (unsigned char)('0' + attn_rng_int(r, 10));
            if ((attn__fnv1a(dig, (size_t)L) % 10 == 0) == (test != 0)) break;
        }
        for (t = 0; t < T; t++) { s[t] = ATTN_DIGITS_PAD; ti[t] = ATTN_DIGITS_PAD; to[t] = -1; }
        for (i = 0; i < L; i++) s[i] = ATTN_DIGITS_0 + dig[i] - '0';
        s[L] = ATTN_DIGITS_EOS;
        if (task == ATTN_DIGITS_REVERSE) {
            for (i = 0; i < L; i++) to[i] = s[L - 1 - i];
        } else { /* counting sort */
            memset(cnt, 0, sizeof cnt);
            for (i = 0; i < L; i++) cnt[dig[i] - '0']++;
            for (i = 0, t = 0; t < 10; t++)
                while (cnt[t]-- > 0) to[i++] = ATTN_DIGITS_0 + t;
        }
        to[L] = ATTN_DIGITS_EOS;
        ti[0] = ATTN_DIGITS_BOS;
        for (i = 0; i < L; i++) ti[i + 1] = to[i];
    }
    return ATTN_OK;
}

ATTNDEF double attn_digits_exact(const int *out, int To, const int *tgt_out, int Tt, int B)
{
    int b, t, hit = 0;
    if (!out || !tgt_out || B < 1 || To < 1 || Tt < 1)
        return attn__fail(ATTN_ERR_ARG, "%s: out, tgt_out NULL or B = %d, To = %d, Tt = %d (>= 1)", __func__,
                          B, To, Tt), -1;
    for (b = 0; b < B; b++) {
        const int *o = out + (size_t)b * To, *g = tgt_out + (size_t)b * Tt;
        for (t = 0; t < To && t < Tt && o[t] == g[t] && g[t] != ATTN_DIGITS_EOS; t++) {}
        hit += t < To && t < Tt && o[t] == g[t]; /* both reached EOS together */
    }
    return (double)hit / B;
}

/* ---- 10. analysis and io --------------------------------------------------------------------- */

static void attn__put_le(unsigned char *p, uint64_t v, int bytes)
{
    int i;
    for (i = 0; i < bytes; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t attn__get_le(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    int i;
    for (i = bytes - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* Format 1 (0.1.0): magic 8, version 4, model 16, nconfig 4, config, float bytes 4, count 8, floats,
   hash 8. Format 2: magic 8, version 4, model 16, nconfig 4, nnames 4, ntensors 4, float bytes 4,
   count 8 (the fixed part: 52 bytes), config, names, tensors, floats, hash 8. */
#define ATTN__CKPT_FIXED 52
#define ATTN__CKPT_TENSOR (ATTN_CKPT_NAME_LEN + 4 + 4 * ATTN_MAX_DIMS + 8) /* name, ndim, shape, offset */

/* Record size: format 2 with nnames names and ntensors tensors (format 1: nnames < 0), count floats
   of fb bytes; 0 on overflow. */
static size_t attn__ckpt_size(int nconfig, int nnames, int ntensors, uint64_t count, int fb)
{
    size_t head = ATTN__CKPT_FIXED + 4 * (size_t)nconfig + 8;
    if (nnames >= 0) head += (size_t)nnames * ATTN_CKPT_NAME_LEN + (size_t)ntensors * ATTN__CKPT_TENSOR;
    else head -= 8; /* format 1's fixed part counts the hash */
    if (count > ((size_t)-1 - head) / (size_t)fb) return 0;
    return head + (size_t)count * (size_t)fb;
}

/* A kind's fingerprint: two sums of its output on a fixed probe (B 1, H 2, T 5, dk = dv = 4, not
   causal, inputs and parameters drawn from a fixed seed) as float32 bits in w[2]; 0, 0 when the
   probe fails. A checkpoint keeps it beside the kind's name, so that a kind registered under that
   name with another formula is refused on load. */
static void attn__kind_fingerprint(attn_kind kind, int32_t w[2])
{
    enum { T = 5, H = 2, D = 4, N = H * T * D };
    attn_attention_desc d;
    attn_float x[4 * N + 3 * D + H * D * D], *o = x + 3 * N;
    attn_rng r;
    size_t wb, sb;
    void *ws;
    double sum[2] = {0, 0};
    float f;
    int i;
    memset(&d, 0, sizeof d);
    d.kind = kind; d.B = 1; d.H = H; d.Tq = d.Tk = T; d.dk = d.dv = D;
    d.lambda = x + 4 * N; d.gain = x + 4 * N + 2 * D; d.w2 = x + 4 * N + 3 * D;
    d.lambda_init = (attn_float)0.5;
    attn_rng_seed(&r, 0xF1A9E5, 1);
    for (i = 0; i < (int)(sizeof x / sizeof *x); i++) x[i] = (attn_float)attn_rng_normal(&r, 0, 0.5);
    for (i = 0; i < D; i++) x[4 * N + 2 * D + i] += 1; /* gains near 1 */
    w[0] = w[1] = 0;
    if ((int)kind < 0) return;
    wb = attn_attention_workspace(&d);
    sb = attn_attention_stats_floats(&d);
    if (wb && sb && (ws = ATTN_MALLOC(wb + sizeof(attn_float) * sb)) != NULL) {
        attn_float *stats = (attn_float *)((char *)ws + wb);
        if (attn_attention_forward(&d, o, stats, NULL, x, x + N, x + 2 * N, ws, wb) == ATTN_OK) {
            for (i = 0; i < N; i++) sum[0] += (double)o[i] * (1 + i % 3), sum[1] += (double)o[i] * o[i];
            f = (float)sum[0]; memcpy(&w[0], &f, 4);
            f = (float)sum[1]; memcpy(&w[1], &f, 4);
        }
        ATTN_FREE(ws);
    }
    attn_clear_error();
}

/* The names' fingerprints after a record's n configuration words, 2 words per name (a kind's, else
   0, 0); the record's new word count. */
static int attn__ckpt_fingerprints(int32_t *w, int n, char names[][ATTN_CKPT_NAME_LEN], int nn)
{
    int i;
    for (i = 0; i < nn; i++) attn__kind_fingerprint((attn_kind)attn_kind_from_name(names[i]), w + n + 2 * i);
    return n + 2 * nn;
}

/* Whether the fingerprint w[2] read beside kind's name matches the kind registered here (to 1e-4
   relative: builds and ISAs differ by rounding); 1 when either is unknown (0, 0), else 0 with the
   error set. */
static int attn__kind_fingerprint_ok(attn_kind kind, const int32_t w[2])
{
    int32_t here[2];
    float a[2], b[2];
    int i;
    attn__kind_fingerprint(kind, here);
    if ((!w[0] && !w[1]) || (!here[0] && !here[1])) return 1;
    memcpy(a, w, 8); memcpy(b, here, 8);
    for (i = 0; i < 2; i++)
        if (!(fabs((double)a[i] - b[i]) <= 1e-4 * (1 + fabs((double)b[i]))))
            return attn__fail(ATTN_ERR_FORMAT, "the kind '%s' registered here computes something else than "
                              "the one saved under that name (fingerprint %.6g, %.6g; here %.6g, %.6g)",
                              attn_kind_get(kind)->name, a[0], a[1], b[0], b[1]), 0;
    return 1;
}

/* Kinds in format-1 configuration words: the enum values of 0.1.0, by name. */
static const char *const attn__ckpt_v1_kinds[] = {"softmax",      "ea",
                                                  "cog",          "centered",
                                                  "sigmoid",      "linear_raw",
                                                  "kernel",       "taylor",
                                                  "diff",         "linear_rmshead",
                                                  "hyla",         "hyla_no_rmshead",
                                                  "hyla_linear",  "hyla_linear_no_rmshead",
                                                  "softmax_hyla", "linear_rmshead_relu_v",
                                                  "hyla_plus"};

/* The kind a configuration word names in record h: a format-1 enum value or an index into
   h->names, checked against the names' fingerprints fp (2 words per name; NULL in files without
   them); -1 (error set) if it names none known here or one that computes something else. */
static int attn__ckpt_kind(const attn_checkpoint_header *h, int32_t word, const int32_t *fp)
{
    int v1 = h->version == 1,
        n = v1 ? (int)(sizeof attn__ckpt_v1_kinds / sizeof *attn__ckpt_v1_kinds) : h->nnames, k;
    const char *name;
    if (word < 0 || word >= n)
        return attn__fail(ATTN_ERR_FORMAT, "a kind word %ld out of 0 .. %d", (long)word, n - 1), -1;
    name = v1 ? attn__ckpt_v1_kinds[word] : h->names[word];
    if ((k = attn_kind_from_name(name)) < 0)
        attn__fail(ATTN_ERR_FORMAT, "the kind '%s' is not known here (register it before loading)", name);
    else if (fp && !v1 && !attn__kind_fingerprint_ok((attn_kind)k, fp + 2 * word))
        return -1;
    return k;
}

/* Appends name (shorter than ATTN_CKPT_NAME_LEN) to names [*n] unless it is there; its index. */
static int attn__ckpt_add(char names[][ATTN_CKPT_NAME_LEN], int *n, const char *name)
{
    int i;
    for (i = 0; i < *n; i++)
        if (!strcmp(names[i], name)) return i;
    memset(names[*n], 0, ATTN_CKPT_NAME_LEN);
    strcpy(names[*n], name);
    return (*n)++;
}

/* Appends kind's name to names [*n] unless it is there; its index, or -1 (error set). */
static int attn__ckpt_name(char names[][ATTN_CKPT_NAME_LEN], int *n, attn_kind kind)
{
    const attn_kind_info *r = attn_kind_get(kind);
    if (!r || strlen(r->name) >= ATTN_CKPT_NAME_LEN)
        return attn__fail(ATTN_ERR_ARG, "a kind %d without a name of at most %d characters", (int)kind,
                          ATTN_CKPT_NAME_LEN - 1), -1;
    return attn__ckpt_add(names, n, r->name);
}

/* The provided modifier a configuration word names in record h, looked up by from (attn_mod_from_name
   or attn_mask_from_name): 0 (none) for -1, else that of an index into h->names; -1 (error set) if
   out of range or not known here. */
static int attn__ckpt_mod(const attn_checkpoint_header *h, int32_t word, int (*from)(const char *),
                          const char *what)
{
    int k;
    if (word == -1) return 0;
    if (word < 0 || word >= h->nnames)
        return attn__fail(ATTN_ERR_FORMAT, "a %s word %ld out of -1 .. %d", what, (long)word, h->nnames - 1),
               -1;
    if ((k = from(h->names[word])) <= 0)
        return attn__fail(ATTN_ERR_FORMAT, "the %s '%s' is not known here", what, h->names[word]), -1;
    return k;
}

#ifndef ATTN_NO_STDIO
/* The size of the record whose first n bytes are b, as its header announces it; 0 if the header is
   not all there, or not a checkpoint's (attn_checkpoint_read says which). */
static size_t attn__ckpt_announced(const unsigned char *b, size_t n)
{
    uint64_t nconfig, fb, version;
    if (n < ATTN__CKPT_FIXED || memcmp(b, "ATTNCKPT", 8) != 0 ||
        (nconfig = attn__get_le(b + 28, 4)) > ATTN_CKPT_MAX_CONFIG)
        return 0;
    if ((version = attn__get_le(b + 8, 4)) == 2) {
        uint64_t nn = attn__get_le(b + 32, 4), nt = attn__get_le(b + 36, 4);
        fb = attn__get_le(b + 40, 4);
        if (nn > ATTN_CKPT_MAX_NAMES || nt > ATTN_CKPT_MAX_TENSORS || (fb != 4 && fb != 8)) return 0;
        return attn__ckpt_size((int)nconfig, (int)nn, (int)nt, attn__get_le(b + 44, 8), (int)fb);
    }
    if (version != 1 || n < 32 + 4 * nconfig + 12 ||
        ((fb = attn__get_le(b + 32 + 4 * nconfig, 4)) != 4 && fb != 8))
        return 0;
    return attn__ckpt_size((int)nconfig, -1, 0, attn__get_le(b + 36 + 4 * nconfig, 8), (int)fb);
}
#endif

/* The floats of fb bytes in a block of p's tensors (what a format-1 record of them holds). */
static size_t attn__params_record_floats(const attn_params *p, size_t fb)
{
    size_t total = 0;
    int i;
    for (i = 0; i < p->count; i++) total += attn__align_up(attn_tensor_numel(&p->value[i]) * fb) / fb;
    return total;
}

/* The tensor table's checks: names (NUL-padded, not empty), shapes, and offsets in order inside
   count floats; with p, the names and shapes of p's tensors. Returns the failing tensor's index, or
   -1. */
static int attn__ckpt_table_bad(const unsigned char *t, int ntensors, uint64_t count, const attn_params *p,
                                const char **why)
{
    uint64_t end = 0;
    int i, d;
    for (i = 0; i < ntensors; i++, t += ATTN__CKPT_TENSOR) {
        const unsigned char *s = t + ATTN_CKPT_NAME_LEN;
        uint64_t ndim = attn__get_le(s, 4), numel = 1, off = attn__get_le(s + 4 + 4 * ATTN_MAX_DIMS, 8);
        size_t len = 0;
        while (len < ATTN_CKPT_NAME_LEN && t[len]) len++;
        *why = "a name that is empty or not NUL-padded";
        for (d = (int)len; d < ATTN_CKPT_NAME_LEN; d++)
            if (t[d]) return i;
        if (len == 0 || len == ATTN_CKPT_NAME_LEN) return i;
        *why = "a shape outside 1 .. 4 dimensions of 1 .. 2^31 - 1, zeros after them";
        if (ndim < 1 || ndim > ATTN_MAX_DIMS) return i;
        for (d = 0; d < ATTN_MAX_DIMS; d++) {
            uint64_t n = attn__get_le(s + 4 + 4 * d, 4);
            if ((d < (int)ndim) != (n >= 1) || n > INT_MAX) return i;
            if (n) numel *= n; /* < 2^124: no overflow below the count checks */
        }
        *why = "an offset before the previous tensor's end, or a tensor past the block";
        if (off < end || off > count || numel > count - off) return i;
        end = off + numel;
        *why = "a name or shape other than the destination's";
        if (p && (strcmp((const char *)t, p->name[i]) != 0 || (int)ndim != p->value[i].ndim)) return i;
        for (d = 0; p && d < (int)ndim; d++)
            if (attn__get_le(s + 4 + 4 * d, 4) != (uint64_t)p->value[i].shape[d]) return i;
    }
    return -1;
}

ATTNDEF size_t attn_checkpoint_bytes(int nconfig, int nnames, const attn_params *p)
{
    if (nconfig < 0 || nconfig > ATTN_CKPT_MAX_CONFIG || nnames < 0 || nnames > ATTN_CKPT_MAX_NAMES || !p ||
        p->count < 0 || p->count > ATTN_CKPT_MAX_TENSORS)
        return attn__fail(ATTN_ERR_ARG,
                          "attn_checkpoint_bytes: nconfig = %d, nnames = %d or the parameters out of range",
                          nconfig, nnames),
               0;
    return attn__ckpt_size(nconfig, nnames, p->count, p->total, (int)sizeof(attn_float));
}

ATTNDEF attn_status attn_checkpoint_write(void *buf, size_t bytes, const char *model, const int32_t *config,
                                          int nconfig, const char *const *names, int nnames,
                                          const attn_params *p)
{
    unsigned char *b = (unsigned char *)buf, *o;
    size_t i, need, fb = sizeof(attn_float);
    int d;
    ATTN__NEED(buf); ATTN__NEED(model); ATTN__NEED(p);
    if (nconfig < 0 || nconfig > ATTN_CKPT_MAX_CONFIG || (nconfig && !config) || nnames < 0 ||
        nnames > ATTN_CKPT_MAX_NAMES || (nnames && !names))
        return attn__fail(
            ATTN_ERR_ARG,
            "attn_checkpoint_write: nconfig = %d in 0 .. %d (with config), nnames = %d in 0 .. %d "
            "(with names)",
            nconfig, ATTN_CKPT_MAX_CONFIG, nnames, ATTN_CKPT_MAX_NAMES);
    if (strlen(model) > 16)
        return attn__fail(ATTN_ERR_ARG, "attn_checkpoint_write: model name '%s' is longer than 16 characters",
                          model);
    for (i = 0; i < (size_t)nnames; i++)
        if (!names[i] || !names[i][0] || strlen(names[i]) >= ATTN_CKPT_NAME_LEN)
            return attn__fail(ATTN_ERR_ARG, "attn_checkpoint_write: names[%d] is not 1 .. %d characters",
                              (int)i, ATTN_CKPT_NAME_LEN - 1);
    for (i = 0; i < (size_t)p->count; i++)
        if (!p->name[i] || !p->name[i][0] || strlen(p->name[i]) >= ATTN_CKPT_NAME_LEN)
            return attn__fail(ATTN_ERR_ARG,
                              "attn_checkpoint_write: tensor %d's name is not 1 .. %d characters", (int)i,
                              ATTN_CKPT_NAME_LEN - 1);
    if (!(need = attn_checkpoint_bytes(nconfig, nnames, p)))
        return attn__fail(ATTN_ERR_OVERFLOW, "attn_checkpoint_write: %lu floats overflow",
                          (unsigned long)p->total);
    if (bytes < need)
        return attn__fail(ATTN_ERR_ARG, "attn_checkpoint_write: buffer of %lu bytes, %lu needed",
                          (unsigned long)bytes, (unsigned long)need);
    memset(b, 0, need);
    memcpy(b, "ATTNCKPT", 8);
    attn__put_le(b + 8, ATTN_CKPT_VERSION, 4);
    memcpy(b + 12, model, strlen(model));
    attn__put_le(b + 28, (uint64_t)nconfig, 4);
    attn__put_le(b + 32, (uint64_t)nnames, 4);
    attn__put_le(b + 36, (uint64_t)p->count, 4);
    attn__put_le(b + 40, fb, 4);
    attn__put_le(b + 44, p->total, 8);
    o = b + ATTN__CKPT_FIXED;
    for (i = 0; i < (size_t)nconfig; i++, o += 4) attn__put_le(o, (uint32_t)config[i], 4);
    for (i = 0; i < (size_t)nnames; i++, o += ATTN_CKPT_NAME_LEN) memcpy(o, names[i], strlen(names[i]));
    for (i = 0; i < (size_t)p->count; i++, o += ATTN__CKPT_TENSOR) {
        memcpy(o, p->name[i], strlen(p->name[i]));
        attn__put_le(o + ATTN_CKPT_NAME_LEN, (uint64_t)p->value[i].ndim, 4);
        for (d = 0; d < p->value[i].ndim; d++)
            attn__put_le(o + ATTN_CKPT_NAME_LEN + 4 + 4 * d, (uint64_t)p->value[i].shape[d], 4);
        attn__put_le(o + ATTN_CKPT_NAME_LEN + 4 + 4 * ATTN_MAX_DIMS, p->offset[i], 8);
    }
    for (i = 0; i < p->total; i++, o += fb) {
        uint64_t bits = 0;
        if (fb == 4) { float f = (float)p->data[i]; uint32_t u; memcpy(&u, &f, 4); bits = u; }
        else { double f = (double)p->data[i]; memcpy(&bits, &f, 8); }
        attn__put_le(o, bits, (int)fb);
    }
    attn__put_le(o, attn__fnv1a(b, need - 8), 8);
    return ATTN_OK;
}

ATTNDEF attn_status attn_checkpoint_read(attn_checkpoint_header *h, attn_params *p, const void *buf,
                                         size_t bytes)
{
    const unsigned char *b = (const unsigned char *)buf, *o, *table = NULL;
    attn_checkpoint_header t;
    uint64_t nconfig, fb, nn = 0, nt = 0;
    size_t i, need, at;
    const char *why = "";
    int bad, k;
    ATTN__NEED(h); ATTN__NEED(buf);
    memset(&t, 0, sizeof t);
    if (bytes < ATTN__CKPT_FIXED || memcmp(b, "ATTNCKPT", 8) != 0)
        return attn__fail(ATTN_ERR_FORMAT, "attn_checkpoint_read: not a checkpoint (%s)",
                          bytes < ATTN__CKPT_FIXED ? "too short" : "no ATTNCKPT magic");
    if ((t.version = (int)attn__get_le(b + 8, 4)) != 1 && t.version != 2)
        return attn__fail(ATTN_ERR_FORMAT,
                          "attn_checkpoint_read: format version %lu, this build reads 1 and 2",
                          (unsigned long)attn__get_le(b + 8, 4));
    memcpy(t.model, b + 12, 16);
    for (i = strlen(t.model); i < 16; i++)
        if (b[12 + i])
            return attn__fail(ATTN_ERR_FORMAT, "attn_checkpoint_read: the model name is not NUL-padded");
    if ((nconfig = attn__get_le(b + 28, 4)) > ATTN_CKPT_MAX_CONFIG)
        return attn__fail(ATTN_ERR_FORMAT, "attn_checkpoint_read: %lu configuration words, at most %d",
                          (unsigned long)nconfig, ATTN_CKPT_MAX_CONFIG);
    t.nconfig = (int)nconfig;
    if (t.version == 2) {
        nn = attn__get_le(b + 32, 4);
        nt = attn__get_le(b + 36, 4);
        fb = attn__get_le(b + 40, 4);
        t.count = attn__get_le(b + 44, 8);
        if (nn > ATTN_CKPT_MAX_NAMES || nt > ATTN_CKPT_MAX_TENSORS)
            return attn__fail(
                ATTN_ERR_FORMAT, "attn_checkpoint_read: %lu names (at most %d) or %lu tensors (at most %d)",
                (unsigned long)nn, ATTN_CKPT_MAX_NAMES, (unsigned long)nt, ATTN_CKPT_MAX_TENSORS);
        o = b + ATTN__CKPT_FIXED;
    } else {
        if (bytes < ATTN__CKPT_FIXED + 4 * nconfig)
            return attn__fail(ATTN_ERR_FORMAT, "attn_checkpoint_read: truncated in the configuration");
        o = b + 32 + 4 * nconfig;
        fb = attn__get_le(o, 4);
        t.count = attn__get_le(o + 4, 8);
        o = b + 32;
    }
    if (fb != 4 && fb != 8)
        return attn__fail(ATTN_ERR_FORMAT, "attn_checkpoint_read: floats of %lu bytes (4 or 8)",
                          (unsigned long)fb);
    t.float_bytes = (int)fb; t.nnames = (int)nn; t.ntensors = (int)nt;
    need = attn__ckpt_size(t.nconfig, t.version == 2 ? t.nnames : -1, t.ntensors, t.count, t.float_bytes);
    if (!need || bytes != need)
        return attn__fail(
            ATTN_ERR_FORMAT,
            "attn_checkpoint_read: %lu bytes, the header says %lu floats (%lu bytes in all): %s",
            (unsigned long)bytes, (unsigned long)t.count, (unsigned long)need,
            bytes < need ? "truncated" : "trailing bytes or a bad count");
    if (attn__get_le(b + need - 8, 8) != attn__fnv1a(b, need - 8))
        return attn__fail(ATTN_ERR_FORMAT, "attn_checkpoint_read: checksum mismatch (the file is corrupt)");
    for (i = 0; i < nconfig; i++, o += 4) t.config[i] = (int32_t)(uint32_t)attn__get_le(o, 4);
    if (t.version == 1) o += 12;
    for (i = 0; i < nn; i++, o += ATTN_CKPT_NAME_LEN) {
        memcpy(t.names[i], o, ATTN_CKPT_NAME_LEN);
        if (!t.names[i][0] || t.names[i][ATTN_CKPT_NAME_LEN - 1])
            return attn__fail(ATTN_ERR_FORMAT, "attn_checkpoint_read: name %d is empty or not NUL-terminated",
                              (int)i);
    }
    table = o;
    if ((bad = attn__ckpt_table_bad(table, t.ntensors, t.count, NULL, &why)) >= 0)
        return attn__fail(ATTN_ERR_FORMAT, "attn_checkpoint_read: tensor %d has %s", bad, why);
    /* format 1 has no table: its tensors are p's, aligned in the record's float width */
    if (p && (t.version == 2 ? t.ntensors != p->count : attn__params_record_floats(p, fb) != t.count))
        return attn__fail(
            ATTN_ERR_SHAPE,
            "attn_checkpoint_read: the record holds %lu floats in %d tensors, the destination %lu in %d",
            (unsigned long)t.count, t.ntensors, (unsigned long)p->total, p->count);
    if (p && (bad = attn__ckpt_table_bad(table, t.ntensors, t.count, p, &why)) >= 0)
        return attn__fail(
            ATTN_ERR_SHAPE,
            "attn_checkpoint_read: tensor %d ('%.31s' in the record, '%s' in the destination) has %s", bad,
            (const char *)table + (size_t)bad * ATTN__CKPT_TENSOR, p->name[bad], why);
    o = table + (size_t)t.ntensors * ATTN__CKPT_TENSOR; /* the floats */
    for (k = 0, at = 0; p && k < p->count; k++) {
        size_t numel = attn_tensor_numel(&p->value[k]);
        const unsigned char *v;
        if (t.version == 2)
            at = (size_t)attn__get_le(table + (size_t)k * ATTN__CKPT_TENSOR + ATTN__CKPT_TENSOR - 8, 8);
        for (v = o + at * fb, i = 0; i < numel; i++, v += fb) {
            uint64_t bits = attn__get_le(v, (int)fb);
            if (fb == 4) {
                uint32_t u = (uint32_t)bits;
                float f;
                memcpy(&f, &u, 4);
                p->value[k].data[i] = (attn_float)f;
            } else {
                double f;
                memcpy(&f, &bits, 8);
                p->value[k].data[i] = (attn_float)f;
            }
        }
        at += attn__align_up(numel * fb) / fb;
    }
    *h = t;
    return ATTN_OK;
}

ATTNDEF attn_status attn_checkpoint_save(const char *path, const char *model, const int32_t *config,
                                         int nconfig, const char *const *names, int nnames,
                                         const attn_params *p)
{
#ifndef ATTN_NO_STDIO
    size_t n;
    void *buf;
    attn__save sv;
    int ok;
    ATTN__NEED(path); ATTN__NEED(p);
    if (!(n = attn_checkpoint_bytes(nconfig, nnames, p)))
        return attn__fail(ATTN_ERR_ARG,
                          "attn_checkpoint_save: nconfig = %d, nnames = %d or %lu floats out of range",
                          nconfig, nnames, (unsigned long)p->total);
    if (!(buf = ATTN_MALLOC(n)))
        return attn__fail(ATTN_ERR_NOMEM, "attn_checkpoint_save: no memory for %lu bytes", (unsigned long)n);
    if (attn_checkpoint_write(buf, n, model, config, nconfig, names, nnames, p) != ATTN_OK) {
        ATTN_FREE(buf);
        return attn_last_status();
    }
    if (!attn__save_open(&sv, __func__, path, "wb")) {
        ATTN_FREE(buf);
        return attn_last_status();
    }
    ok = fwrite(buf, 1, n, sv.f) == n;
    ATTN_FREE(buf);
    return attn__save_close(&sv, __func__, path, ok);
#else
    (void)path; (void)model; (void)config; (void)nconfig; (void)names; (void)nnames; (void)p;
    return attn__fail(ATTN_ERR_IO, "attn_checkpoint_save: built with ATTN_NO_STDIO");
#endif
}

ATTNDEF attn_status attn_checkpoint_load_file(const char *path, void **buf, size_t *bytes,
                                              attn_checkpoint_header *h)
{
#ifndef ATTN_NO_STDIO
    FILE *f;
    size_t n = 0, cap = 4096, want = 4096, got, rec;
    unsigned char *b, *nb;
    attn_status s;
    ATTN__NEED(path); ATTN__NEED(buf); ATTN__NEED(bytes); ATTN__NEED(h);
    if (!(f = fopen(path, "rb")))
        return attn__fail(ATTN_ERR_IO, "attn_checkpoint_load_file: cannot open %s", path);
    /* No seek (a pipe works, a directory is a read error): the first 4 KB (the largest header), then
       up to one byte past the size the header announces, in doubling blocks. A stream that never
       ends or a header that lies costs at most twice what the file holds. */
    for (b = (unsigned char *)ATTN_MALLOC(cap); b;) {
        n += got = fread(b + n, 1, ATTN__MIN(cap, want) - n, f);
        if (got == 0 || n == want) {
            if (got == 0 || want > 4096 || !(rec = attn__ckpt_announced(b, n)) || rec < n)
                break; /* read() says what is wrong */
            want = rec + 1;
        }
        if (n == cap) {
            cap = ATTN__MIN(2 * cap, want);
            if ((nb = (unsigned char *)ATTN_MALLOC(cap)) != NULL) memcpy(nb, b, n);
            ATTN_FREE(b);
            b = nb;
        }
    }
    if (!b) {
        fclose(f);
        return attn__fail(ATTN_ERR_NOMEM, "attn_checkpoint_load_file: no memory for %lu bytes of %s",
                          (unsigned long)cap, path);
    }
    if (ferror(f)) {
        fclose(f);
        ATTN_FREE(b);
        return attn__fail(ATTN_ERR_IO, "attn_checkpoint_load_file: cannot read %s (a directory?)", path);
    }
    fclose(f);
    if ((s = attn_checkpoint_read(h, NULL, b, n)) != ATTN_OK) {
        char why[256];
        strncpy(why, attn_last_error(), sizeof why - 1);
        why[sizeof why - 1] = 0;
        ATTN_FREE(b);
        return attn__fail(s, "%s: %s", path, why);
    }
    *buf = b;
    *bytes = n;
    return ATTN_OK;
#else
    (void)path; (void)buf; (void)bytes; (void)h;
    return attn__fail(ATTN_ERR_IO, "attn_checkpoint_load_file: built with ATTN_NO_STDIO");
#endif
}

/* A float as two configuration words, the low and high halves of its float64 bits, and back. */
static void attn__f64_words(attn_float x, int32_t *w)
{
    double f = (double)x;
    uint64_t u;
    memcpy(&u, &f, 8);
    w[0] = (int32_t)(uint32_t)(u & 0xffffffffu);
    w[1] = (int32_t)(uint32_t)(u >> 32);
}

static attn_float attn__words_f64(const int32_t *w)
{
    uint64_t u = (uint64_t)(uint32_t)w[0] | (uint64_t)(uint32_t)w[1] << 32;
    double f;
    memcpy(&f, &u, 8);
    return (attn_float)f;
}

/* Reads path's record into *buf and *h; it must hold a `model` with at least `min` words. */
static attn_status attn__ckpt_open(const char *fn, const char *path, const char *model, int min, void **buf,
                                   size_t *n, attn_checkpoint_header *h)
{
    ATTN__TRY(attn_checkpoint_load_file(path, buf, n, h));
    if (strcmp(h->model, model) == 0 && h->nconfig >= min) return ATTN_OK;
    ATTN_FREE(*buf);
    return attn__fail(ATTN_ERR_FORMAT, "%s: %s holds a '%s' model with %d configuration words, not a %s", fn,
                      path, h->model, h->nconfig, model);
}

/* The loaders' check before anything is allocated: the record's configuration is valid (floats > 0:
   the floats of its parameter block) and the record holds exactly that many. Frees buf on failure. */
static attn_status attn__ckpt_match(const char *fn, const char *path, size_t floats,
                                    const attn_checkpoint_header *h, void *buf)
{
    char why[256];
    if (floats && floats == h->count) return ATTN_OK;
    ATTN_FREE(buf);
    if (floats)
        return attn__fail(ATTN_ERR_FORMAT,
                          "%s: %s: its configuration needs a block of %lu floats, it holds %lu", fn, path,
                          (unsigned long)floats, (unsigned long)h->count);
    strncpy(why, attn_last_error(), sizeof why - 1);
    why[sizeof why - 1] = 0;
    return attn__fail(ATTN_ERR_FORMAT, "%s: %s: its configuration is not a valid %s's (%s)", fn, path,
                      h->model, why);
}

/* After the model was initialised (status s) into a temporary: copies the record's floats into p
   (which the loader releases on failure). Frees buf. */
static attn_status attn__ckpt_fill(attn_status s, attn_params *p, attn_checkpoint_header *h, void *buf,
                                   size_t n)
{
    if (s == ATTN_OK) s = attn_checkpoint_read(h, p, buf, n);
    ATTN_FREE(buf);
    return s;
}

ATTNDEF attn_status attn_cisformer_save(const attn_cisformer *m, const char *path)
{
    int32_t cfg[10];
    char names[1][ATTN_CKPT_NAME_LEN];
    const char *np[1] = {names[0]};
    int nn = 0;
    ATTN__NEED(m);
    cfg[0] = m->cfg.d;
    cfg[1] = m->cfg.ncon;
    cfg[2] = attn__ckpt_name(names, &nn, m->cfg.kind);
    cfg[3] = (int32_t)m->cfg.vec;
    cfg[4] = m->cfg.init_uniform; attn__f64_words(m->cfg.scale, cfg + 5);
    cfg[7] = m->cfg.qk_raw;
    if (cfg[2] < 0) return attn__fail(ATTN_ERR_ARG, "%s: %s", __func__, attn_last_error());
    return attn_checkpoint_save(path, "cisformer", cfg, attn__ckpt_fingerprints(cfg, 8, names, nn), np, nn,
                                &m->p);
}

ATTNDEF attn_status attn_cisformer_load(attn_cisformer *m, const char *path)
{
    attn_checkpoint_header h;
    attn_cisformer_config c;
    attn_cisformer t;
    attn_rng r;
    void *buf = NULL;
    const int32_t *fp;
    size_t n = 0, floats;
    attn_status s;
    int made;
    ATTN__NEED(m);
    ATTN__TRY(attn__ckpt_open(__func__, path, "cisformer", 7, &buf, &n, &h));
    memset(&c, 0, sizeof c);
    c.d = h.config[0]; c.ncon = h.config[1]; c.vec = (attn_cis_vec)h.config[3];
    c.init_uniform = h.config[4]; c.scale = attn__words_f64(h.config + 5);
    c.qk_raw = h.version == 1 ? 0 : h.config[7];
    fp = h.nconfig > 8 ? h.config + 8 : NULL; /* the name's fingerprint */
    if (h.nconfig != (h.version == 1 ? 7 : 8) && h.nconfig != 8 + 2 * h.nnames)
        floats = 0, attn__fail(ATTN_ERR_FORMAT, "%d words", h.nconfig);
    else
        floats = (int)(c.kind = (attn_kind)attn__ckpt_kind(&h, h.config[2], fp)) < 0
                     ? 0
                     : attn__cis_block(__func__, &c, (size_t)h.float_bytes);
    ATTN__TRY(attn__ckpt_match(__func__, path, floats, &h, buf));
    attn_rng_seed(&r, 0, 0);
    made = (s = attn_cisformer_init(&t, &c, &r)) == ATTN_OK;
    if ((s = attn__ckpt_fill(s, &t.p, &h, buf, n)) != ATTN_OK && made) attn_cisformer_free(&t);
    if (s == ATTN_OK) *m = t;
    return s;
}

/* The transformer's configuration words, in order (then kinds[0 .. layers-1]). */
#define ATTN__TF_WORDS 30    /* format 2: window, dilation and global after bos */
#define ATTN__TF_WORDS_V1 27 /* format 1 */
/* format 2 since 0.2, last: bigbird_block, _random, _seed, linformer_k, kv_heads (5 words), then
   qk_norm, rope_theta (2 words), post_norm, emb_norm, pad_mask, pad; then, with score modifiers,
   mod.buckets, .max_distance, .bidirectional, .cap (2 words) and mods[0 .. layers-1] (-1: none,
   else the index of its name), now always, and then the names' fingerprints; with mask modifiers,
   last mod.span and masks[0 .. layers-1] (as mods) */
#define ATTN__TF_TAIL 12
#define ATTN__TF_TAIL_MOD 17

ATTNDEF attn_status attn_transformer_save(const attn_transformer *m, const char *path)
{
    const attn_transformer_config *c;
    int32_t w[ATTN__TF_WORDS + 5 * ATTN_MAX_LAYERS + ATTN__TF_TAIL_MOD + 1 +
              2 * (ATTN_MOD_COUNT + ATTN_MASK_COUNT)];
    int32_t mk[ATTN_MAX_LAYERS];
    char names[ATTN_MAX_LAYERS + ATTN_MOD_COUNT + ATTN_MASK_COUNT][ATTN_CKPT_NAME_LEN];
    const char *np[ATTN_MAX_LAYERS + ATTN_MOD_COUNT + ATTN_MASK_COUNT];
    int32_t *t;
    int l, nn = 0, nw, masked = 0;
    ATTN__NEED(m);
    c = &m->cfg;
    w[0] = c->vocab;
    w[1] = c->d;
    w[2] = c->layers;
    w[3] = c->heads;
    w[4] = c->dk;
    w[5] = c->dv;
    w[6] = c->mlp;
    w[7] = c->max_T;
    w[8] = c->out;
    w[9] = c->readout;
    w[10] = c->causal;
    w[11] = (int32_t)c->pos;
    w[12] = (int32_t)c->norm;
    w[13] = (int32_t)c->act;
    w[14] = c->bias;
    w[15] = (int32_t)c->init;
    attn__f64_words(c->scale, w + 16);
    attn__f64_words(c->eps, w + 18);
    w[20] = c->in_dim;
    w[21] = c->t5;
    attn__f64_words(c->dropout, w + 22);
    w[24] = c->glu;
    w[25] = c->doc_mask;
    w[26] = c->bos;
    w[27] = c->window;
    w[28] = c->dilation;
    w[29] = c->global;
    for (l = 0; l < c->layers; l++)
        if ((w[ATTN__TF_WORDS + l] = attn__ckpt_name(names, &nn, c->kinds[l])) < 0)
            return attn__fail(ATTN_ERR_ARG, "%s: layer %d: %s", __func__, l, attn_last_error());
    t = w + ATTN__TF_WORDS + c->layers; /* the tail: then each layer's modifier, each name's fingerprint */
    for (l = 0; l < c->layers; l++)
        t[ATTN__TF_TAIL_MOD + l] = c->mods[l] && attn_mod_name(c->mods[l])
                                       ? attn__ckpt_add(names, &nn, attn_mod_name(c->mods[l]))
                                       : -1;
    for (l = 0; l < c->layers; l++) {
        const char *mname = c->masks[l] ? attn_mask_name(c->masks[l]) : NULL;
        mk[l] = mname ? attn__ckpt_add(names, &nn, mname) : -1;
        masked |= mk[l] >= 0;
    }

    t[12] = c->mod.buckets;
    t[13] = c->mod.max_distance;
    t[14] = c->mod.bidirectional;
    attn__f64_words(c->mod.cap, t + 15);
    for (l = 0; l < nn; l++) np[l] = names[l];
    w[ATTN__TF_WORDS + c->layers] = c->bigbird_block;
    w[ATTN__TF_WORDS + c->layers + 1] = c->bigbird_random;
    w[ATTN__TF_WORDS + c->layers + 2] = c->bigbird_seed;
    w[ATTN__TF_WORDS + c->layers + 3] = c->linformer_k;
    w[ATTN__TF_WORDS + c->layers + 4] = c->kv_heads;
    w[ATTN__TF_WORDS + c->layers + 5] = c->qk_norm;
    attn__f64_words(c->rope_theta, w + ATTN__TF_WORDS + c->layers + 6);
    w[ATTN__TF_WORDS + c->layers + 8] = c->post_norm;
    w[ATTN__TF_WORDS + c->layers + 9] = c->emb_norm;
    w[ATTN__TF_WORDS + c->layers + 10] = c->pad_mask;
    w[ATTN__TF_WORDS + c->layers + 11] = c->pad;
    nw = attn__ckpt_fingerprints(w, ATTN__TF_WORDS + 2 * c->layers + ATTN__TF_TAIL_MOD, names, nn);
    if (masked) {
        w[nw++] = c->mod.span;
        for (l = 0; l < c->layers; l++) w[nw++] = mk[l];
    }
    return attn_checkpoint_save(path, "transformer", w, nw, np, nn, &m->p);
}

ATTNDEF attn_status attn_transformer_load(attn_transformer *m, const char *path)
{
    attn_checkpoint_header h;
    attn_transformer_config c;
    attn_transformer t;
    attn_param_desc pd[ATTN__TF_MAX_DESCS];
    const int32_t *w = h.config;
    void *buf = NULL;
    size_t n = 0, floats = 0, count = 0;
    const int32_t *fpw, *mkw, *mdw;
    attn_status s;
    int l, made, known, words, tail, fp, fpm;
    ATTN__NEED(m);
    ATTN__TRY(attn__ckpt_open(__func__, path, "transformer", ATTN__TF_WORDS_V1, &buf, &n, &h));
    words = h.version == 1 ? ATTN__TF_WORDS_V1 : ATTN__TF_WORDS;
    memset(&c, 0, sizeof c);
    c.vocab = w[0];
    c.d = w[1];
    c.layers = w[2];
    c.heads = w[3];
    c.dk = w[4];
    c.dv = w[5];
    c.mlp = w[6];
    c.max_T = w[7];
    c.out = w[8];
    c.readout = w[9];
    c.causal = w[10];
    c.pos = (attn_pos_kind)w[11];
    c.norm = (attn_norm_kind)w[12];
    c.act = (attn_act)w[13];
    c.bias = w[14];
    c.init = (attn_init_kind)w[15];
    c.scale = attn__words_f64(w + 16);
    c.eps = attn__words_f64(w + 18);
    c.in_dim = w[20];
    c.t5 = w[21];
    c.dropout = attn__words_f64(w + 22);
    c.glu = w[24];
    c.doc_mask = w[25];
    c.bos = w[26];
    if (words > ATTN__TF_WORDS_V1 && h.nconfig >= words) {
        c.window = w[27];
        c.dilation = w[28];
        c.global = w[29];
    }
    tail = h.version > 1 && c.layers >= 0 && c.layers <= ATTN_MAX_LAYERS ? h.nconfig - words - c.layers : 0;
    fp = tail ? ATTN__TF_TAIL_MOD + c.layers + 2 * h.nnames : -1; /* with the names' fingerprints */
    fpm = tail ? fp + 1 + c.layers : -1;                            /* and the masks */
    if (tail != 5 && tail != ATTN__TF_TAIL &&
        (!tail || (tail != ATTN__TF_TAIL_MOD + c.layers && tail != fp && tail != fpm)))
        tail = 0; /* 5: before qk_norm and what follows it; then the modifiers, the fingerprints, the masks;
                     tail is 0 for an out-of-range layer count */
    if (tail) {
        c.bigbird_block = w[words + c.layers];
        c.bigbird_random = w[words + c.layers + 1];
        c.bigbird_seed = w[words + c.layers + 2];
        c.linformer_k = w[words + c.layers + 3];
        c.kv_heads = w[words + c.layers + 4];
    }
    if (tail >= ATTN__TF_TAIL) {
        c.qk_norm = w[words + c.layers + 5];
        c.rope_theta = (attn_float)attn__words_f64(w + words + c.layers + 6);
        c.post_norm = w[words + c.layers + 8];
        c.emb_norm = w[words + c.layers + 9];
        c.pad_mask = w[words + c.layers + 10];
        c.pad = w[words + c.layers + 11];
    }
    if (tail > ATTN__TF_TAIL) {
        const int32_t *mw = w + words + c.layers;
        c.mod.buckets = mw[12];
        c.mod.max_distance = mw[13];
        c.mod.bidirectional = mw[14];
        c.mod.cap = (attn_float)attn__words_f64(mw + 15);
    }
    fpw = tail == fp || tail == fpm ? w + words + 2 * c.layers + ATTN__TF_TAIL_MOD : NULL; /* fingerprints */
    mkw = tail == fpm ? fpw + 2 * h.nnames + 1 : NULL; /* each layer's mask, after the span */
    if (mkw) c.mod.span = mkw[-1];
    mdw = w + words + c.layers + ATTN__TF_TAIL_MOD; /* each layer's modifier */
    for (l = 0, known = 1; l < c.layers && l < ATTN_MAX_LAYERS && l < h.nconfig - words && known; l++)
        known = (int)(c.kinds[l] = (attn_kind)attn__ckpt_kind(&h, w[words + l], fpw)) >= 0 &&
                (tail <= ATTN__TF_TAIL ||
                 (int)(c.mods[l] = (attn_mod_kind)attn__ckpt_mod(&h, mdw[l], attn_mod_from_name,
                                                                 "modifier")) >= 0) &&
                (!mkw || (int)(c.masks[l] = (attn_mask_kind)attn__ckpt_mod(&h, mkw[l], attn_mask_from_name,
                                                                           "mask")) >= 0);
    if (h.nconfig - words - tail != c.layers)
        attn__fail(ATTN_ERR_FORMAT, "%d words for %d layers", h.nconfig, c.layers);
    else if (!known || !(l = attn__tf_layout(__func__, &c, pd, t.at, &floats, &count))) floats = 0;
    else floats = attn__block_floats(pd, l, (size_t)h.float_bytes); /* in the record's float width */
    ATTN__TRY(attn__ckpt_match(__func__, path, floats, &h, buf));
    made = (s = attn__tf_make(&t, &c, NULL, NULL, 0)) == ATTN_OK; /* zeros: the file fills them */
    if ((s = attn__ckpt_fill(s, &t.p, &h, buf, n)) != ATTN_OK && made) attn_transformer_free(&t);
    if (s == ATTN_OK) *m = t;
    return s;
}

#define ATTN__S2S_WORDS 19
#define ATTN__S2S_MOD_WORDS 5 /* mod.buckets, .max_distance, .bidirectional, .cap (2 words) */

/* The attention sublayers of c (0 for layer counts out of range: a configuration read from a file),
   and in *mods whether one has a score modifier (1), a mask (2) or both (3). */
static int attn__s2s_atts(const attn_seq2seq_config *c, int *mods)
{
    int s, n = 0;
    *mods = 0;
    if (c->enc_layers < 1 || c->enc_layers > ATTN_MAX_LAYERS || c->dec_layers < 1 ||
        c->dec_layers > ATTN_MAX_LAYERS)
        return 0;
    for (s = 0; s < attn__s2s_subs(c); s++) {
        attn_mod_config mc;
        if (attn__s2s_type(c, s) == ATTN__S2S_FFN) continue;
        attn__s2s_mod(c, s, &mc);
        *mods |= (mc.kind != ATTN_MOD_NONE) | (mc.mask != ATTN_MASK_NONE) << 1;
        n++;
    }
    return n;
}

ATTNDEF attn_status attn_seq2seq_save(const attn_seq2seq *m, const char *path)
{
    const attn_seq2seq_config *c;
    int32_t w[ATTN__S2S_WORDS + ATTN__S2S_MOD_WORDS + 1 + 6 * ATTN_MAX_LAYERS +
              2 * (1 + ATTN_MOD_COUNT + ATTN_MASK_COUNT)];
    int32_t mk[3 * ATTN_MAX_LAYERS];
    char names[1 + ATTN_MOD_COUNT + ATTN_MASK_COUNT][ATTN_CKPT_NAME_LEN];
    const char *np[1 + ATTN_MOD_COUNT + ATTN_MASK_COUNT];
    int nn = 0, nw = ATTN__S2S_WORDS, mods, s, na = 0;
    ATTN__NEED(m);
    c = &m->cfg;
    w[0] = c->src_vocab;
    w[1] = c->tgt_vocab;
    w[2] = c->pad;
    w[3] = c->d;
    w[4] = c->heads;
    w[5] = c->dk;
    w[6] = c->dv;
    w[7] = c->mlp;
    w[8] = c->enc_layers;
    w[9] = c->dec_layers;
    w[10] = c->max_src;
    w[11] = c->max_tgt;
    w[12] = attn__ckpt_name(names, &nn, c->kind);
    w[13] = (int32_t)c->ln_eps;
    w[14] = (int32_t)c->init; attn__f64_words(c->eps, w + 15); attn__f64_words(c->dropout, w + 17);
    if (w[12] < 0) return attn__fail(ATTN_ERR_ARG, "%s: %s", __func__, attn_last_error());
    attn__s2s_atts(c, &mods);
    if (mods) { /* files without modifiers keep the words of 0.2.0 */
        w[nw++] = c->mod.buckets;
        w[nw++] = c->mod.max_distance;
        w[nw++] = c->mod.bidirectional;
        attn__f64_words(c->mod.cap, w + nw);
        nw += 2;
        for (s = 0; s < attn__s2s_subs(c); s++) {
            attn_mod_config mc;
            if (attn__s2s_type(c, s) == ATTN__S2S_FFN) continue;
            attn__s2s_mod(c, s, &mc);
            w[nw++] = mc.kind ? attn__ckpt_add(names, &nn, attn_mod_name(mc.kind)) : -1;
            mk[na++] = mc.mask ? attn__ckpt_add(names, &nn, attn_mask_name(mc.mask)) : -1;
        }
    }
    for (s = 0; s < nn; s++) np[s] = names[s];
    nw = attn__ckpt_fingerprints(w, nw, names, nn);
    if (mods & 2) { /* masks: the span, then each attention sublayer's */
        w[nw++] = c->mod.span;
        for (s = 0; s < na; s++) w[nw++] = mk[s];
    }
    return attn_checkpoint_save(path, "seq2seq", w, nw, np, nn, &m->p);
}

ATTNDEF attn_status attn_seq2seq_load(attn_seq2seq *m, const char *path)
{
    attn_checkpoint_header h;
    attn_seq2seq_config c;
    attn_seq2seq t;
    attn_rng r;
    const int32_t *w = h.config, *fp, *mw, *mk;
    void *buf = NULL;
    size_t n = 0, floats = 0;
    attn_status st;
    attn_mod_kind *by_type[3] = {c.enc_mods, c.dec_mods, c.cross_mods}; /* as attn__s2s_mod's */
    attn_mask_kind *masks[2] = {c.enc_masks, c.dec_masks};
    int made, na, nw, mods, known, s, i;
    ATTN__NEED(m);
    ATTN__TRY(attn__ckpt_open(__func__, path, "seq2seq", ATTN__S2S_WORDS, &buf, &n, &h));
    memset(&c, 0, sizeof c);
    c.src_vocab = w[0];
    c.tgt_vocab = w[1];
    c.pad = w[2];
    c.d = w[3];
    c.heads = w[4];
    c.dk = w[5];
    c.dv = w[6];
    c.mlp = w[7];
    c.enc_layers = w[8];
    c.dec_layers = w[9];
    c.max_src = w[10];
    c.max_tgt = w[11];
    c.ln_eps = (attn_ln_eps)w[13];
    c.init = (attn_init_kind)w[14]; c.eps = attn__words_f64(w + 15); c.dropout = attn__words_f64(w + 17);
    na = attn__s2s_atts(&c, &mods); /* with modifiers: their words, the names' fingerprints, the masks */
    nw = ATTN__S2S_WORDS + ATTN__S2S_MOD_WORDS + na + 2 * h.nnames;
    mw = na && (h.nconfig == nw || h.nconfig == nw + 1 + na) ? w + ATTN__S2S_WORDS : NULL;
    mk = mw && h.nconfig == nw + 1 + na ? w + nw + 1 : NULL; /* the span, then each sublayer's mask */
    fp = h.nconfig > ATTN__S2S_WORDS ? w + (mw ? nw : h.nconfig) - 2 * h.nnames : NULL; /* fingerprints */
    if (mw) {
        c.mod.buckets = mw[0];
        c.mod.max_distance = mw[1];
        c.mod.bidirectional = mw[2];
        c.mod.cap = (attn_float)attn__words_f64(mw + 3);
        c.mod.span = mk ? mk[-1] : 0;
    }
    for (s = 0, i = 0, known = 1; mw && s < attn__s2s_subs(&c) && known; s++) {
        int ty = attn__s2s_type(&c, s), l = attn__s2s_layer_of(&c, s), k;
        if (ty == ATTN__S2S_FFN) continue;
        k = attn__ckpt_mod(&h, mw[ATTN__S2S_MOD_WORDS + i], attn_mod_from_name, "modifier");
        by_type[ty][l] = (attn_mod_kind)k;
        known = k >= 0 && (k = mk ? attn__ckpt_mod(&h, mk[i], attn_mask_from_name, "mask") : 0) >= 0;
        if (k > 0 && ty == ATTN__S2S_CROSS) known = !attn__fail(ATTN_ERR_FORMAT, "a mask on cross-attention");
        else if (k > 0) masks[ty][l] = (attn_mask_kind)k;
        i++;
    }
    if (!mw && h.nconfig != ATTN__S2S_WORDS && h.nconfig != ATTN__S2S_WORDS + 2 * h.nnames)
        attn__fail(ATTN_ERR_FORMAT, "%d words", h.nconfig);
    else if (!known || (int)(c.kind = (attn_kind)attn__ckpt_kind(&h, w[12], fp)) < 0 ||
             !attn__s2s_block(__func__, &c, &floats, (size_t)h.float_bytes))
        floats = 0;
    ATTN__TRY(attn__ckpt_match(__func__, path, floats, &h, buf));
    attn_rng_seed(&r, 0, 0);
    made = (st = attn_seq2seq_init(&t, &c, &r)) == ATTN_OK;
    if ((st = attn__ckpt_fill(st, &t.p, &h, buf, n)) != ATTN_OK && made) attn_seq2seq_free(&t);
    if (st == ATTN_OK) *m = t;
    return st;
}

/* ---- safetensors ---- */

#define ATTN__ST_MAX_HEADER 100000000 /* bytes of JSON (the format's own limit) */
#define ATTN__ST_MAX_TENSORS 1000000

/* A JSON reader over [p, end); err: the first thing found wrong (NULL while well-formed). */
typedef struct {
    const char *p, *end, *err;
} attn__json;

static int attn__json_fail(attn__json *j, const char *why)
{
    if (!j->err) j->err = why;
    return 0;
}

static void attn__json_ws(attn__json *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++;
}

static int attn__json_at(attn__json *j, char c) /* past white space: 1, and past c, if c is next */
{
    attn__json_ws(j);
    if (j->p < j->end && *j->p == c) return j->p++, 1;
    return 0;
}

static int attn__json_hex4(attn__json *j, unsigned long *u)
{
    int k;
    for (*u = 0, k = 0; k < 4; k++, j->p++) {
        char c = j->p < j->end ? *j->p : 0;
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0) return attn__json_fail(j, "a bad \\u escape");
        *u = *u << 4 | (unsigned long)d;
    }
    return 1;
}

/* A string into out [ATTN_ST_NAME_LEN]: UTF-8, escapes decoded (a \u surrogate pair as one code
   point); no NUL, no raw control character. */
static int attn__json_string(attn__json *j, char *out)
{
    size_t n = 0;
    if (!attn__json_at(j, '"')) return attn__json_fail(j, "a string expected");
    while (j->p < j->end && *j->p != '"') {
        unsigned char c = (unsigned char)*j->p++, b[4];
        unsigned long u, lo;
        int m = 1;
        if (c < 0x20) return attn__json_fail(j, "a control character in a string");
        b[0] = c;
        if (c == '\\') {
            c = j->p < j->end ? (unsigned char)*j->p++ : 0;
            b[0] = c == 'b'   ? '\b'
                   : c == 'f' ? '\f'
                   : c == 'n' ? '\n'
                   : c == 'r' ? '\r'
                   : c == 't' ? '\t'
                              : c;
            if (c == 'u') {
                if (!attn__json_hex4(j, &u)) return 0;
                if (u >= 0xD800 && u < 0xDC00) { /* a high surrogate: its low half follows */
                    if (j->end - j->p < 2 || j->p[0] != '\\' || j->p[1] != 'u')
                        return attn__json_fail(j, "a lone surrogate");
                    j->p += 2;
                    if (!attn__json_hex4(j, &lo)) return 0;
                    if (lo < 0xDC00 || lo > 0xDFFF) return attn__json_fail(j, "a lone surrogate");
                    u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
                } else if (u >= 0xDC00 && u < 0xE000) return attn__json_fail(j, "a lone surrogate");
                if (u == 0) return attn__json_fail(j, "a NUL in a string");
                m = u < 0x80 ? 1 : u < 0x800 ? 2 : u < 0x10000 ? 3 : 4;
                b[0] = (unsigned char)(m == 1   ? u
                                       : m == 2 ? 0xC0 | u >> 6
                                       : m == 3 ? 0xE0 | u >> 12
                                                : 0xF0 | u >> 18);
                if (m > 1) b[m - 1] = (unsigned char)(0x80 | (u & 0x3F));
                if (m > 2) b[m - 2] = (unsigned char)(0x80 | (u >> 6 & 0x3F));
                if (m > 3) b[1] = (unsigned char)(0x80 | (u >> 12 & 0x3F));
            } else if (!strchr("\"\\/bfnrt", c) || !c) return attn__json_fail(j, "a bad escape in a string");
        }
        if (n + (size_t)m >= ATTN_ST_NAME_LEN)
            return attn__json_fail(j, "a string of ATTN_ST_NAME_LEN bytes or more");
        memcpy(out + n, b, (size_t)m);
        n += (size_t)m;
    }
    if (j->p >= j->end) return attn__json_fail(j, "an unterminated string");
    j->p++;
    out[n] = 0;
    return 1;
}

/* A whole number: digits only (no sign, fraction, exponent or leading zero), below 2^53. */
static int attn__json_uint(attn__json *j, uint64_t *v)
{
    attn__json_ws(j);
    if (j->p >= j->end || *j->p < '0' || *j->p > '9') return attn__json_fail(j, "a whole number expected");
    if (*j->p == '0' && j->p + 1 < j->end && j->p[1] >= '0' && j->p[1] <= '9')
        return attn__json_fail(j, "a number with a leading zero");
    for (*v = 0; j->p < j->end && *j->p >= '0' && *j->p <= '9'; j->p++) {
        if (*v > ((1ull << 53) - (uint64_t)(*j->p - '0')) / 10)
            return attn__json_fail(j, "a number of 2^53 or more");
        *v = *v * 10 + (uint64_t)(*j->p - '0');
    }
    if (j->p < j->end && (*j->p == '.' || *j->p == 'e' || *j->p == 'E'))
        return attn__json_fail(j, "a whole number expected");
    return 1;
}

/* [n0, n1, ..] into v [max] (its length in *n), at least min entries. */
static int attn__json_uints(attn__json *j, uint64_t *v, int min, int max, int *n)
{
    *n = 0;
    if (!attn__json_at(j, '[')) return attn__json_fail(j, "an array expected");
    if (attn__json_at(j, ']')) return *n >= min || attn__json_fail(j, "an array too short");
    do {
        if (*n == max) return attn__json_fail(j, "an array too long (more dimensions than ATTN_MAX_DIMS?)");
        if (!attn__json_uint(j, &v[(*n)++])) return 0;
    } while (attn__json_at(j, ','));
    if (!attn__json_at(j, ']')) return attn__json_fail(j, "',' or ']' expected");
    return *n >= min || attn__json_fail(j, "an array too short");
}

static const char *const attn__st_dtypes[] = {"F32", "F16", "BF16", "F64", "I64", "I32", "I16", "I8",
                                              "U64", "U32", "U16", "U8", "BOOL", "F8_E4M3", "F8_E5M2"};
static const int attn__st_bytes[] = {4, 2, 2, 8, 8, 4, 2, 1, 8, 4, 2, 1, 1, 1, 1};
#define ATTN__ST_DTYPES 15

/* One tensor's object {"dtype": .., "shape": [..], "data_offsets": [b, e]} (each key once) into t,
   its offsets into off [2]. */
static int attn__st_entry(attn__json *j, attn_st_tensor *t, uint64_t *off)
{
    char key[ATTN_ST_NAME_LEN], dt[ATTN_ST_NAME_LEN];
    uint64_t shape[ATTN_MAX_DIMS], count = 1;
    int seen = 0, k, n, d;
    if (!attn__json_at(j, '{')) return attn__json_fail(j, "a tensor's object expected");
    do {
        if (!attn__json_string(j, key) || !attn__json_at(j, ':')) return attn__json_fail(j, "':' expected");
        k = !strcmp(key, "dtype") ? 1 : !strcmp(key, "shape") ? 2 : !strcmp(key, "data_offsets") ? 4 : 0;
        if (!k || (seen & k))
            return attn__json_fail(j, k ? "a key twice in a tensor's object"
                                        : "an unknown key in a tensor's object");
        seen |= k;
        if (k == 1) {
            if (!attn__json_string(j, dt)) return 0;
            for (d = 0; d < ATTN__ST_DTYPES && strcmp(dt, attn__st_dtypes[d]); d++) continue;
            if (d == ATTN__ST_DTYPES) return attn__json_fail(j, "a dtype the format does not have");
            t->dtype = (attn_st_dtype)d;
        } else if (k == 2) {
            if (!attn__json_uints(j, shape, 0, ATTN_MAX_DIMS, &t->ndim)) return 0;
            for (n = 0; n < t->ndim; n++) {
                if (shape[n] && count > ((uint64_t)1 << 53) / shape[n])
                    return attn__json_fail(j, "a shape too large");
                count *= shape[n];
                t->shape[n] = (int64_t)shape[n];
            }
            t->count = (size_t)count;
        } else if (!attn__json_uints(j, off, 2, 2, &n)) return 0;
    } while (attn__json_at(j, ','));
    if (!attn__json_at(j, '}')) return attn__json_fail(j, "',' or '}' expected");
    if (seen != 7) return attn__json_fail(j, "a tensor without its dtype, shape or data_offsets");
    if (off[1] < off[0] || off[1] - off[0] != count * (uint64_t)attn__st_bytes[t->dtype])
        return attn__json_fail(j, "data_offsets that do not hold the shape");
    return 1;
}

/* The header's object, once to count (st NULL) and once to fill st (its tensors' bytes from data on,
   their offsets into ends [2 count]); name: the tensor or key being read (for the message);
   *data_end: the largest end offset. */
static int attn__st_header(attn__json *j, attn_safetensors *st, const unsigned char *data, uint64_t *ends,
                           char *name, uint64_t *data_end)
{
    attn_st_tensor t;
    uint64_t off[2];
    int meta_seen = 0, nt = 0, nm = 0;
    char value[ATTN_ST_NAME_LEN];
    *data_end = 0;
    if (!attn__json_at(j, '{')) return attn__json_fail(j, "the header is not a JSON object");
    if (!attn__json_at(j, '}')) do {
        if (!attn__json_string(j, name) || !attn__json_at(j, ':')) return attn__json_fail(j, "':' expected");
        if (!strcmp(name, "__metadata__")) {
            if (meta_seen++) return attn__json_fail(j, "__metadata__ twice");
            if (!attn__json_at(j, '{')) return attn__json_fail(j, "__metadata__ is not an object");
            if (attn__json_at(j, '}')) continue;
            do {
                if (!attn__json_string(j, st ? st->meta[nm][0] : name) || !attn__json_at(j, ':') ||
                    !attn__json_string(j, st ? st->meta[nm][1] : value))
                    return attn__json_fail(j, "__metadata__ holds strings only");
                nm++;
            } while (attn__json_at(j, ','));
            if (!attn__json_at(j, '}')) return attn__json_fail(j, "',' or '}' expected in __metadata__");
            continue;
        }
        if (nt == ATTN__ST_MAX_TENSORS) return attn__json_fail(j, "more than a million tensors");
        memset(&t, 0, sizeof t);
        if (!attn__st_entry(j, &t, off)) return 0;
        strcpy(t.name, name);
        if (st) {
            t.data = data + off[0];
            st->tensors[nt] = t;
            ends[2 * nt] = off[0];
            ends[2 * nt + 1] = off[1];
        }
        *data_end = off[1] > *data_end ? off[1] : *data_end;
        nt++;
    } while (attn__json_at(j, ','));
    if (!attn__json_at(j, '}')) return attn__json_fail(j, "',' or '}' expected");
    if (st) st->count = nt, st->nmeta = nm;
    else name[0] = 0, ends[0] = (uint64_t)nt, ends[1] = (uint64_t)nm;
    attn__json_ws(j);
    return j->p == j->end || attn__json_fail(j, "bytes after the header's object");
}

static int attn__st_by_begin(const void *a, const void *b)
{
    const uint64_t *x = (const uint64_t *)a, *y = (const uint64_t *)b;
    return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : (x[1] > y[1]) - (x[1] < y[1]);
}
static int attn__st_by_name(const void *a, const void *b)
{
    return strcmp((*(const attn_st_tensor *const *)a)->name, (*(const attn_st_tensor *const *)b)->name);
}

ATTNDEF attn_status attn_safetensors_parse(attn_safetensors *st, const void *buf, size_t bytes)
{
    const unsigned char *b = (const unsigned char *)buf;
    attn__json j;
    attn_safetensors s;
    uint64_t N, data_end, counts[2], *ends;
    const attn_st_tensor **by;
    char name[ATTN_ST_NAME_LEN] = "";
    const char *bad = NULL;
    int nt, i;
    size_t table;
    ATTN__NEED(st); ATTN__NEED(buf);
    if (bytes < 8 || (N = attn__get_le(b, 8)) > ATTN__ST_MAX_HEADER || N > bytes - 8)
        return attn__fail(ATTN_ERR_FORMAT,
                          "attn_safetensors_parse: %lu bytes: not a safetensors file (its header "
                          "length is missing, above 100 MB or past the end)",
                          (unsigned long)bytes);
    j.p = (const char *)b + 8; j.end = j.p + N; j.err = NULL;
    if (!attn__st_header(&j, NULL, NULL, counts, name, &data_end))
        return attn__fail(ATTN_ERR_FORMAT, "attn_safetensors_parse: %s (at byte %lu%s%s)", j.err,
                          (unsigned long)(j.p - (const char *)b), name[0] ? ", reading " : "", name);
    if (data_end != bytes - 8 - N)
        return attn__fail(ATTN_ERR_FORMAT,
                          "attn_safetensors_parse: the tensors hold %lu bytes, the file %lu after "
                          "its header",
                          (unsigned long)data_end, (unsigned long)(bytes - 8 - N));
    nt = (int)counts[0];
    table = sizeof(attn_st_tensor) * (size_t)nt + sizeof *s.meta * (size_t)counts[1];
    memset(&s, 0, sizeof s); /* the table, then scratch for the checks: the offsets and the names' order */
    if (!(s.owned = ATTN_MALLOC(table + 1)) ||
        !(ends = (uint64_t *)ATTN_MALLOC((sizeof(uint64_t) * 2 + sizeof *by) * (size_t)nt + 1))) {
        ATTN_FREE(s.owned);
        return attn__fail(ATTN_ERR_NOMEM, "attn_safetensors_parse: no memory for %d tensors", nt);
    }
    s.tensors = (attn_st_tensor *)s.owned;
    s.meta = (char (*)[2][ATTN_ST_NAME_LEN])(void *)(s.tensors + nt);
    by = (const attn_st_tensor **)(void *)(ends + 2 * nt);
    j.p = (const char *)b + 8;
    attn__st_header(&j, &s, b + 8 + N, ends, name, &data_end);
    qsort(ends, (size_t)nt, 2 * sizeof(uint64_t), attn__st_by_begin); /* the data covered once */
    for (i = 0; i < nt && !bad; i++)
        if (ends[2 * i] != (i ? ends[2 * i - 1] : 0)) bad = "the tensors' bytes overlap or leave a hole";
    for (i = 0; i < nt; i++) by[i] = &s.tensors[i];
    qsort(by, (size_t)nt, sizeof *by, attn__st_by_name); /* each name once */
    for (i = 1; i < nt && !bad; i++)
        if (!strcmp(by[i]->name, by[i - 1]->name)) bad = by[i]->name;
    if (bad)
        attn__fail(ATTN_ERR_FORMAT, "attn_safetensors_parse: %s%s",
                   bad == by[i - 1]->name ? "two tensors named " : "", bad);
    ATTN_FREE(ends);
    if (bad) {
        ATTN_FREE(s.owned);
        return ATTN_ERR_FORMAT;
    }
    *st = s;
    return ATTN_OK;
}

ATTNDEF void attn_safetensors_free(attn_safetensors *st)
{
    if (!st) return;
    ATTN_FREE(st->owned);
    ATTN_FREE(st->file);
    memset(st, 0, sizeof *st);
}

ATTNDEF const attn_st_tensor *attn_safetensors_find(const attn_safetensors *st, const char *name)
{
    int i;
    for (i = 0; st && name && i < st->count; i++)
        if (!strcmp(st->tensors[i].name, name)) return &st->tensors[i];
    return NULL;
}

ATTNDEF const char *attn_safetensors_meta(const attn_safetensors *st, const char *key)
{
    int i;
    for (i = 0; st && key && i < st->nmeta; i++)
        if (!strcmp(st->meta[i][0], key)) return st->meta[i][1];
    return NULL;
}

/* A half's bits as a float: sign, exponent 5 bits (bias 15), mantissa 10; subnormals, Inf, NaN. */
static float attn__half_float(unsigned h)
{
    unsigned e = h >> 10 & 0x1F, m = h & 0x3FF;
    float v = e == 0    ? ldexpf((float)m, -24)
              : e == 31 ? (m ? NAN : INFINITY)
                        : ldexpf((float)(m | 0x400), (int)e - 25);
    return h & 0x8000 ? -v : v;
}

/* x [n] of the tensor's dtype (little-endian) into out as attn_float. */
static void attn__st_convert(const attn_st_tensor *t, attn_float *out)
{
    size_t i;
    for (i = 0; i < t->count; i++) {
        const unsigned char *p = t->data + i * (size_t)attn__st_bytes[t->dtype];
        uint32_t u;
        uint64_t w;
        float f;
        double d;
        switch (t->dtype) {
        case ATTN_ST_F16: out[i] = (attn_float)attn__half_float((unsigned)attn__get_le(p, 2)); break;
        case ATTN_ST_BF16:
            u = (uint32_t)attn__get_le(p, 2) << 16;
            memcpy(&f, &u, 4);
            out[i] = (attn_float)f;
            break;
        case ATTN_ST_F64: w = attn__get_le(p, 8); memcpy(&d, &w, 8); out[i] = (attn_float)d; break;
        case ATTN_ST_F32: u = (uint32_t)attn__get_le(p, 4); memcpy(&f, &u, 4); out[i] = (attn_float)f; break;
        default: { /* the integers: unsigned as read, signed from their top bit */
            int b = attn__st_bytes[t->dtype];
            w = attn__get_le(p, b);
            if (t->dtype >= ATTN_ST_I64 && t->dtype <= ATTN_ST_I8 && b < 8 && (w >> (8 * b - 1)))
                out[i] = (attn_float)((double)w - ldexp(1.0, 8 * b));
            else if (t->dtype == ATTN_ST_I64) out[i] = (attn_float)(int64_t)w;
            else out[i] = (attn_float)w;
        }
        }
    }
}

/* The decimal digits of v at p (at most 20), their count. */
static size_t attn__uint_str(char *p, uint64_t v)
{
    char d[20];
    size_t n = 0, k;
    do d[n++] = (char)('0' + v % 10); while ((v /= 10) > 0);
    for (k = 0; k < n; k++) p[k] = d[n - 1 - k];
    return n;
}

/* "[a, b, c]" of a shape into buf [ATTN_MAX_DIMS * 24 + 4]. */
static const char *attn__st_shape_str(char *buf, int ndim, const int64_t *shape)
{
    size_t k = 1;
    int i;
    buf[0] = '[';
    for (i = 0; i < ndim; i++) {
        if (i) buf[k++] = ',', buf[k++] = ' ';
        k += attn__uint_str(buf + k, (uint64_t)shape[i]);
    }
    buf[k++] = ']';
    buf[k] = 0;
    return buf;
}

ATTNDEF attn_status attn_safetensors_get(const attn_safetensors *st, const char *name, attn_float *out,
                                         int ndim, const int64_t *shape)
{
    const attn_st_tensor *t;
    char a[ATTN_MAX_DIMS * 24 + 4], b[ATTN_MAX_DIMS * 24 + 4];
    int i, same;
    ATTN__NEED(st); ATTN__NEED(name); ATTN__NEED(out);
    if (ndim < 0 || ndim > ATTN_MAX_DIMS || (ndim && !shape))
        return attn__fail(ATTN_ERR_ARG, "attn_safetensors_get: %s: ndim = %d (0 .. %d, with a shape)", name,
                          ndim, ATTN_MAX_DIMS);
    if (!(t = attn_safetensors_find(st, name)))
        return attn__fail(ATTN_ERR_ARG, "attn_safetensors_get: no tensor named %s", name);
    if (t->dtype == ATTN_ST_F8_E4M3 || t->dtype == ATTN_ST_F8_E5M2)
        return attn__fail(ATTN_ERR_ARG, "attn_safetensors_get: %s is %s, which attn.h keeps as bytes", name,
                          attn__st_dtypes[t->dtype]);
    for (same = t->ndim == ndim, i = 0; same && i < ndim; i++) same = t->shape[i] == shape[i];
    if (!same)
        return attn__fail(ATTN_ERR_SHAPE, "attn_safetensors_get: %s is %s, wanted %s", name,
                          attn__st_shape_str(a, t->ndim, t->shape), attn__st_shape_str(b, ndim, shape));
    attn__st_convert(t, out);
    return ATTN_OK;
}

#ifndef ATTN_NO_STDIO
/* A text that grows (the JSON of a save); fail: a growth found no memory. */
typedef struct {
    char *p;
    size_t n, cap;
    int fail;
} attn__text;

static void attn__text_put(attn__text *t, const char *s, size_t n)
{
    if (t->fail) return;
    if (t->n + n + 1 > t->cap) {
        size_t cap = 2 * (t->n + n + 1) + 256;
        char *p = (char *)ATTN_MALLOC(cap);
        if (!p) {
            t->fail = 1;
            return;
        }
        if (t->n) memcpy(p, t->p, t->n);
        ATTN_FREE(t->p);
        t->p = p;
        t->cap = cap;
    }
    memcpy(t->p + t->n, s, n);
    t->p[t->n += n] = 0;
}
static void attn__text_str(attn__text *t, const char *s) { attn__text_put(t, s, strlen(s)); }
static void attn__text_uint(attn__text *t, uint64_t v)
{
    char d[20];
    attn__text_put(t, d, attn__uint_str(d, v));
}
/* s as a JSON string: quotes, backslashes and control characters escaped. */
static void attn__text_json(attn__text *t, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    attn__text_put(t, "\"", 1);
    for (; *s; s++) {
        char e[6] = {'\\', 'u', '0', '0', hex[(unsigned char)*s >> 4], hex[*s & 15]};
        if (*s == '"' || *s == '\\') e[1] = *s, attn__text_put(t, e, 2);
        else if ((unsigned char)*s < 0x20) attn__text_put(t, e, 6);
        else attn__text_put(t, s, 1);
    }
    attn__text_put(t, "\"", 1);
}

/* Why a save's arguments cannot be written (NULL: they can). */
static const char *attn__st_save_args(const char *const *names, const attn_tensor *tensors, int n,
                                      const char *const *meta, int nmeta)
{
    int i, k;
    if (n < 0 || nmeta < 0 || (n && (!names || !tensors)) || (nmeta && !meta))
        return "n, nmeta, names, tensors or meta";
    for (i = 0; i < 2 * nmeta; i++)
        if (!meta[i] || strlen(meta[i]) >= ATTN_ST_NAME_LEN)
            return "a metadata key or value (NULL or too long)";
    for (i = 0; i < n; i++) {
        if (!names[i] || !names[i][0] || strlen(names[i]) >= ATTN_ST_NAME_LEN ||
            !strcmp(names[i], "__metadata__"))
            return "a tensor's name (NULL, empty, __metadata__ or too long)";
        if (!tensors[i].data || !attn_tensor_numel(&tensors[i])) return "a tensor (no data, or a bad shape)";
        for (k = 0; k < i; k++)
            if (!strcmp(names[k], names[i])) return "two tensors of one name";
    }
    return NULL;
}

#endif

ATTNDEF attn_status attn_safetensors_save(const char *path, const char *const *names,
                                          const attn_tensor *tensors, int n, const char *const *meta,
                                          int nmeta)
{
#ifndef ATTN_NO_STDIO
    attn__text t = {NULL, 0, 0, 0};
    attn__save sv;
    unsigned char len[8], chunk[4096];
    const char *bad;
    uint64_t off = 0;
    size_t i, k, m;
    int d, ok = 1;
    ATTN__NEED(path);
    if ((bad = attn__st_save_args(names, tensors, n, meta, nmeta)) != NULL)
        return attn__fail(ATTN_ERR_ARG, "attn_safetensors_save: %s", bad);
    attn__text_str(&t, "{");
    if (nmeta) {
        attn__text_str(&t, "\"__metadata__\":{");
        for (d = 0; d < nmeta; d++) {
            if (d) attn__text_str(&t, ",");
            attn__text_json(&t, meta[2 * d]);
            attn__text_str(&t, ":");
            attn__text_json(&t, meta[2 * d + 1]);
        }
        attn__text_str(&t, n ? "}," : "}");
    }
    for (i = 0; i < (size_t)n; i++) {
        m = attn_tensor_numel(&tensors[i]);
        if (i) attn__text_str(&t, ",");
        attn__text_json(&t, names[i]);
        attn__text_str(&t, ":{\"dtype\":\"F32\",\"shape\":[");
        for (d = 0; d < tensors[i].ndim; d++) {
            if (d) attn__text_str(&t, ",");
            attn__text_uint(&t, (uint64_t)tensors[i].shape[d]);
        }
        attn__text_str(&t, "],\"data_offsets\":[");
        attn__text_uint(&t, off);
        attn__text_str(&t, ",");
        attn__text_uint(&t, off += 4 * (uint64_t)m);
        attn__text_str(&t, "]}");
    }
    attn__text_str(&t, "}");
    while (!t.fail && t.n % 8) attn__text_str(&t, " "); /* the data 8-byte aligned, as the reference writes */
    if (t.fail) {
        ATTN_FREE(t.p);
        return attn__fail(ATTN_ERR_NOMEM, "attn_safetensors_save: no memory for the header");
    }
    if (!attn__save_open(&sv, __func__, path, "wb")) {
        ATTN_FREE(t.p);
        return attn_last_status();
    }
    attn__put_le(len, (uint64_t)t.n, 8);
    ok = fwrite(len, 1, 8, sv.f) == 8 && fwrite(t.p, 1, t.n, sv.f) == t.n;
    ATTN_FREE(t.p);
    for (i = 0; ok && i < (size_t)n; i++) /* the floats as F32, little-endian, a chunk at a time */
        for (m = attn_tensor_numel(&tensors[i]), k = 0; ok && k < m; k += sizeof chunk / 4) {
            size_t c, nc = ATTN__MIN(m - k, sizeof chunk / 4);
            for (c = 0; c < nc; c++) {
                float f = (float)tensors[i].data[k + c];
                uint32_t u;
                memcpy(&u, &f, 4);
                attn__put_le(chunk + 4 * c, u, 4);
            }
            ok = fwrite(chunk, 4, nc, sv.f) == nc;
        }
    return attn__save_close(&sv, __func__, path, ok);
#else
    (void)path; (void)names; (void)tensors; (void)n; (void)meta; (void)nmeta;
    return attn__fail(ATTN_ERR_IO, "attn_safetensors_save: built with ATTN_NO_STDIO");
#endif
}

ATTNDEF attn_status attn_safetensors_load(attn_safetensors *st, const char *path)
{
#ifndef ATTN_NO_STDIO
    FILE *f;
    unsigned char len[8], *b = NULL, *nb;
    uint64_t N, data_end = 0, counts[2];
    char name[ATTN_ST_NAME_LEN];
    attn__json j;
    attn_status s = ATTN_ERR_FORMAT;
    ATTN__NEED(st); ATTN__NEED(path);
    if (!(f = fopen(path, "rb")))
        return attn__fail(ATTN_ERR_IO, "attn_safetensors_load: cannot open %s", path);
    /* the length, the header (validated), then exactly the bytes it announces: no seek, no more */
    if (fread(len, 1, 8, f) != 8 || (N = attn__get_le(len, 8)) > ATTN__ST_MAX_HEADER) {
        fclose(f);
        return attn__fail(ATTN_ERR_FORMAT,
                          "attn_safetensors_load: %s is not a safetensors file (its header length "
                          "is missing or above 100 MB)",
                          path);
    }
    if (!(b = (unsigned char *)ATTN_MALLOC(8 + (size_t)N))) {
        fclose(f);
        return attn__fail(ATTN_ERR_NOMEM, "attn_safetensors_load: no memory for the header of %s", path);
    }
    memcpy(b, len, 8);
    j.p = (const char *)b + 8; j.end = j.p + N; j.err = NULL;
    if (fread(b + 8, 1, (size_t)N, f) != N || !attn__st_header(&j, NULL, NULL, counts, name, &data_end)) {
        s = attn_safetensors_parse(st, b, 8 + (size_t)N); /* the header's own message */
        if (s == ATTN_OK) attn_safetensors_free(st), s = ATTN_ERR_FORMAT;
    } else if (data_end > (uint64_t)((size_t)-1) - 8 - N ||
               !(nb = (unsigned char *)ATTN_MALLOC(8 + (size_t)N + (size_t)data_end + 1))) {
        attn__fail(s = ATTN_ERR_NOMEM, "attn_safetensors_load: no memory for the tensors of %s", path);
    } else {
        memcpy(nb, b, 8 + (size_t)N);
        ATTN_FREE(b);
        b = nb;
        if (fread(b + 8 + N, 1, (size_t)data_end, f) != data_end || fread(b, 1, 1, f) != 0 || ferror(f))
            attn__fail(s = ATTN_ERR_FORMAT,
                       "attn_safetensors_load: %s does not hold the %lu bytes of tensors its "
                       "header announces (or holds more)",
                       path, (unsigned long)data_end);
        else if ((s = attn_safetensors_parse(st, b, 8 + (size_t)N + (size_t)data_end)) == ATTN_OK) {
            st->file = b;
            b = NULL;
        }
    }
    fclose(f);
    ATTN_FREE(b);
    return s;
#else
    (void)st; (void)path;
    return attn__fail(ATTN_ERR_IO, "attn_safetensors_load: built with ATTN_NO_STDIO");
#endif
}

/* ---- Hugging Face layouts ---- */

#ifndef ATTN_NO_STDIO /* the helpers of the loader and the writer, which need stdio */
/* Skips one JSON value of any kind (strings without a length limit), depth at most 64. */
static int attn__json_skip(attn__json *j, int depth)
{
    char c;
    attn__json_ws(j);
    if (j->p >= j->end) return attn__json_fail(j, "a value expected");
    if (depth > 64) return attn__json_fail(j, "values nested more than 64 deep");
    c = *j->p;
    if (c == '"') {
        for (j->p++; j->p < j->end && *j->p != '"'; j->p++)
            if (*j->p == '\\') j->p++;
        return j->p++ < j->end || attn__json_fail(j, "an unterminated string");
    }
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        j->p++;
        if (attn__json_at(j, close)) return 1;
        do {
            if (close == '}' && (!attn__json_skip(j, depth + 1) || !attn__json_at(j, ':')))
                return attn__json_fail(j, "a key and ':' expected");
            if (!attn__json_skip(j, depth + 1)) return 0;
        } while (attn__json_at(j, ','));
        return attn__json_at(j, close) || attn__json_fail(j, "',' or a closing bracket expected");
    }
    if (c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n') {
        while (j->p < j->end && ((*j->p >= '0' && *j->p <= '9') || (*j->p >= 'a' && *j->p <= 'z') ||
                                 (*j->p >= 'A' && *j->p <= 'Z') || strchr("+-.", *j->p)))
            j->p++;
        return 1;
    }
    return attn__json_fail(j, "a value expected");
}

/* A JSON number at [p, end) as a double (no locale: digits, '.', an exponent), 0 if it is not one. */
static int attn__json_double(const char *p, const char *end, double *v)
{
    double m = 0, sign = 1;
    int e = 0, es = 1, x = 0, digits = 0;
    if (p < end && *p == '-') sign = -1, p++;
    for (; p < end && *p >= '0' && *p <= '9'; p++, digits++) m = m * 10 + (*p - '0');
    if (p < end && *p == '.')
        for (p++; p < end && *p >= '0' && *p <= '9'; p++, digits++) m = m * 10 + (*p - '0'), e--;
    if (p < end && (*p == 'e' || *p == 'E')) {
        if (++p < end && (*p == '+' || *p == '-')) es = *p++ == '-' ? -1 : 1;
        for (; p < end && *p >= '0' && *p <= '9' && x < 10000; p++) x = x * 10 + (*p - '0');
    }
    *v = sign * m * pow(10.0, e + es * x);
    return digits > 0 && p == end;
}

/* A flat view of a JSON object's scalar members (config.json): up to 128 keys, each a number, a
   string (at most 63 bytes kept), true (1), false (0) or null. */
typedef struct {
    int n;
    char key[128][64], str[128][64];
    double num[128];
    int kind[128]; /* 0 number, 1 string, 2 null, 3 an object or array */
} attn__config;

static int attn__config_parse(const char *text, size_t len, attn__config *c)
{
    attn__json j;
    j.p = text; j.end = text + len; j.err = NULL;
    c->n = 0;
    if (!attn__json_at(&j, '{')) return 0;
    if (attn__json_at(&j, '}')) return 1;
    do {
        char key[ATTN_ST_NAME_LEN];
        const char *v;
        int k = c->n < 128 ? c->n : 127;
        if (!attn__json_string(&j, key) || !attn__json_at(&j, ':')) return 0;
        attn__json_ws(&j);
        v = j.p;
        if (!attn__json_skip(&j, 0)) return 0;
        snprintf(c->key[k], sizeof c->key[k], "%.63s", key);
        c->kind[k] = 2;
        if (*v == '"')
            c->kind[k] = 1, snprintf(c->str[k], sizeof c->str[k], "%.*s", (int)(j.p - v - 2), v + 1);
        else if (*v == 't' || *v == 'f') c->kind[k] = 0, c->num[k] = *v == 't';
        else if (*v == '{' || *v == '[') c->kind[k] = 3;
        else if (*v != 'n') c->kind[k] = attn__json_double(v, j.p, &c->num[k]) ? 0 : 2;
        c->n = k + 1;
    } while (attn__json_at(&j, ','));
    return attn__json_at(&j, '}');
}

/* The member key: its number (kind 0) or string (kind 1), or NULL. */
static const double *attn__config_num(const attn__config *c, const char *key)
{
    int i;
    for (i = 0; i < c->n; i++)
        if (!strcmp(c->key[i], key)) return c->kind[i] == 0 ? &c->num[i] : NULL;
    return NULL;
}
static const char *attn__config_str(const attn__config *c, const char *key)
{
    int i;
    for (i = 0; i < c->n; i++)
        if (!strcmp(c->key[i], key)) return c->kind[i] == 1 ? c->str[i] : NULL;
    return NULL;
}

/* dst [cols, rows] = src [rows, cols] (row stride lds) transposed. */
static void attn__st_transpose(attn_float *dst, const attn_float *src, int rows, int cols, size_t lds)
{
    int r, c;
    for (r = 0; r < rows; r++)
        for (c = 0; c < cols; c++) dst[(size_t)c * rows + r] = src[(size_t)r * lds + c];
}

/* What a transformer has that a Hugging Face layout has not: the first of a layout's misfits whose
   condition holds (NULL: none; its shape fits), after those the two layouts share. */
typedef struct {
    int bad;
    const char *what;
} attn__misfit;
static const char *attn__hf_misfit(const attn_transformer_config *c, const attn__misfit *own, int n)
{
    attn__misfit common[] = {
        {c->vocab < 1 || c->in_dim || c->out != c->vocab, "no token inputs and outputs"},
        {c->dv != c->dk, "dv != dk"}, {c->readout != 0, "a readout of some positions"},
        {!c->causal, "bidirectional attention"}, {c->scale != 0, "a scale of its own"},
        {c->t5 != 0, "T5 biases"}, {c->window || c->bigbird_block || c->linformer_k, "a sparse pattern"},
        {c->doc_mask != 0, "document masking"}, {c->qk_norm != 0, "QK-norm"},
        {c->post_norm || c->emb_norm || c->pad_mask, "BERT's norms or padding mask"}};
    int i, l;
    for (i = 0; i < (int)ATTN__COUNT(common); i++)
        if (common[i].bad) return common[i].what;
    for (i = 0; i < n; i++)
        if (own[i].bad) return own[i].what;
    for (l = 0; l < c->layers; l++)
        if (c->kinds[l] != ATTN_SOFTMAX) return "a kind other than softmax";
    for (l = 0; l < c->layers; l++)
        if (c->mods[l] || c->masks[l]) return "a score or mask modifier";
    return NULL;
}

/* Whether a transformer has GPT-2's shape (what attn_transformer_save_hf writes); why not. */
static const char *attn__gpt2_shape(const attn_transformer_config *c)
{
    attn__misfit own[] = {
        {c->dk * c->heads != c->d, "d != heads dk"},
        {c->kv_heads && c->kv_heads != c->heads, "grouped-query heads"},
        {c->pos != ATTN_POS_LEARNED, "positions other than learned ones"},
        {c->norm != ATTN_NORM_LAYER, "a norm other than LayerNorm"}, {c->glu != 0, "a gated MLP"},
        {!c->bias, "no biases"}, {c->act != ATTN_ACT_GELU_TANH && c->act != ATTN_ACT_GELU_ERF, "no GELU"}};
    return attn__hf_misfit(c, own, (int)ATTN__COUNT(own));
}

/* A whole small file (at most max bytes) into ATTN_MALLOC memory, NUL-terminated; NULL (error set). */
static char *attn__read_small(const char *fn, const char *path, size_t max, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *b;
    if (!f) return attn__fail(ATTN_ERR_IO, "%s: cannot open %s", fn, path), (char *)NULL;
    if (!(b = (char *)ATTN_MALLOC(max + 1))) {
        fclose(f);
        return attn__fail(ATTN_ERR_NOMEM, "%s: no memory", fn), (char *)NULL;
    }
    *len = fread(b, 1, max + 1, f);
    fclose(f);
    if (*len > max) {
        ATTN_FREE(b);
        return attn__fail(ATTN_ERR_FORMAT, "%s: %s is longer than %lu bytes", fn, path, (unsigned long)max),
               (char *)NULL;
    }
    b[*len] = 0;
    return b;
}

/* A Hugging Face tensor name: the file's prefix, then part, or for layer l >= 0 the blocks' name
   (GPT-2's "h.", Llama's "layers."), l and part. */
static const char *attn__hf_name(char *buf, size_t size, const char *prefix, const char *blocks, int l,
                                 const char *part)
{
    if (l < 0) snprintf(buf, size, "%s%s", prefix, part);
    else snprintf(buf, size, "%s%s%d.%s", prefix, blocks, l, part);
    return buf;
}
#define attn__gpt2_name(buf, size, prefix, l, part) attn__hf_name(buf, size, prefix, "h.", l, part)

/* A GPT-2 block's tensors in the order save writes them, then the attention's two buffers, which
   older exports hold and load skips. */
static const char *const attn__gpt2_parts[14] = {
    "ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias", "attn.c_proj.weight",
    "attn.c_proj.bias", "ln_2.weight", "ln_2.bias", "mlp.c_fc.weight", "mlp.c_fc.bias", "mlp.c_proj.weight",
    "mlp.c_proj.bias", "attn.bias", "attn.masked_bias"};

/* Llama's tensors (LlamaForCausalLM, after the prefix "model."): the model's own, then a block's
   (layers.L.), the last a buffer older exports hold and load skips. */
static const char *const attn__llama_top[2] = {"embed_tokens.weight", "norm.weight"};
static const char *const attn__llama_parts[10] = {
    "input_layernorm.weight",       "self_attn.q_proj.weight", "self_attn.k_proj.weight",
    "self_attn.v_proj.weight",      "self_attn.o_proj.weight", "post_attention_layernorm.weight",
    "mlp.gate_proj.weight",         "mlp.up_proj.weight",      "mlp.down_proj.weight",
    "self_attn.rotary_emb.inv_freq"};
static const char *const attn__gpt2_top[4] = {"wte.weight", "wpe.weight", "ln_f.weight", "ln_f.bias"};
/* BERT's (BertModel, after the prefix "bert." of the task models' files): the embeddings and the
   pooler (which sentence embeddings do not use), then a block's (encoder.layer.L.). */
static const char *const attn__bert_top[9] = {
    "embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",
    "embeddings.token_type_embeddings.weight", "embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias",
    "embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias", "embeddings.token_type_ids"};
static const char *const attn__bert_parts[16] = {
    "attention.self.query.weight", "attention.self.query.bias", "attention.self.key.weight",
    "attention.self.key.bias", "attention.self.value.weight", "attention.self.value.bias",
    "attention.output.dense.weight", "attention.output.dense.bias", "attention.output.LayerNorm.weight",
    "attention.output.LayerNorm.bias", "intermediate.dense.weight", "intermediate.dense.bias",
    "output.dense.weight", "output.dense.bias", "output.LayerNorm.weight", "output.LayerNorm.bias"};

/* The architectures load reads: GPT-2, Llama, BERT. */
enum { ATTN__HF_GPT2, ATTN__HF_LLAMA, ATTN__HF_BERT };
static const struct attn__hf_arch {
    const char *type, *blocks;
    const char *const *top, *const *parts;
    int ntop, nparts;
} attn__hf_archs[3] = {{"gpt2", "h.", attn__gpt2_top, attn__gpt2_parts, 4, 14},
                       {"llama", "layers.", attn__llama_top, attn__llama_parts, 2, 10},
                       {"bert", "encoder.layer.", attn__bert_top, attn__bert_parts, 9, 16}};

/* Whether name is one architecture a holds: the model's own tensors, lm_head.weight, the blocks'
   tensors and buffers. */
static int attn__hf_known(const char *name, const char *prefix, int layers, int a)
{
    const struct attn__hf_arch *r = &attn__hf_archs[a];
    char buf[ATTN_ST_NAME_LEN];
    int i, l;
    if (!strcmp(name, "lm_head.weight") && a != ATTN__HF_BERT) return 1;
    for (i = 0; i < r->ntop; i++)
        if (!strcmp(name, attn__hf_name(buf, sizeof buf, prefix, "", -1, r->top[i]))) return 1;
    for (l = 0; l < layers; l++)
        for (i = 0; i < r->nparts; i++)
            if (!strcmp(name, attn__hf_name(buf, sizeof buf, prefix, r->blocks, l, r->parts[i]))) return 1;
    return 0;
}

/* Tensor part of layer l (-1: none; blocks as attn__hf_name) into out, of shape [d0] (d1 = 0) or
   [d0, d1]. */
static attn_status attn__hf_get(const attn_safetensors *st, const char *prefix, const char *blocks, int l,
                                const char *part, attn_float *out, int64_t d0, int64_t d1)
{
    char b[ATTN_ST_NAME_LEN];
    int64_t shape[2];
    shape[0] = d0; shape[1] = d1;
    return attn_safetensors_get(st, attn__hf_name(b, sizeof b, prefix, blocks, l, part), out, d1 ? 2 : 1,
                                shape);
}
#define attn__gpt2_get(st, prefix, l, part, out, d0, d1) attn__hf_get(st, prefix, "h.", l, part, out, d0, d1)

/* The head: lm_head.weight when the file has it, else (tied) the embedding E [V, d]. */
static attn_status attn__hf_head(const attn_safetensors *st, attn_float *Wout, const attn_float *E, int64_t V,
                                 int64_t d)
{
    if (attn_safetensors_find(st, "lm_head.weight"))
        return attn__hf_get(st, "", "", -1, "lm_head.weight", Wout, V, d);
    memcpy(Wout, E, sizeof(attn_float) * (size_t)(V * d));
    return ATTN_OK;
}

/* Hugging Face's RoPE pairs each head's dimensions i and i + hd/2 (rotate_half); attn.h pairs 2i and
   2i + 1 at the same frequency. dst [heads hd, cols] = src's rows in that order per head: row 2i from
   row i, row 2i + 1 from row i + hd/2 (back: the other way, for a save). q . k is unchanged, as q and
   k move alike. */
static void attn__hf_rope_rows(attn_float *dst, const attn_float *src, int heads, int hd, int cols, int back)
{
    int h, i, k;
    for (h = 0; h < heads; h++)
        for (i = 0; i < hd / 2; i++)
            for (k = 0; k < 2; k++) {
                size_t ours = (size_t)h * hd + 2 * i + k, theirs = (size_t)h * hd + i + k * (hd / 2);
                memcpy(dst + (back ? theirs : ours) * cols, src + (back ? ours : theirs) * cols,
                       sizeof(attn_float) * (size_t)cols);
            }
}

/* Fills a Llama-shaped m from st (names with prefix); tmp [max(H, KH) hd, d] is scratch. The
   projections are [out, in] as in attn.h; q, k rows reordered for RoPE (attn__hf_rope_rows); the
   gated MLP down(silu(gate x) up x) is W2 ((W1 n) act(W3 n)) with W3 = gate, W1 = up. */
static attn_status attn__llama_fill(attn_transformer *m, const attn_safetensors *st, const char *prefix,
                                    attn_float *tmp)
{
    const attn_transformer_config *c = &m->cfg;
    attn_transformer_tensors M = attn_transformer_named(m, 0);
    int64_t d = c->d, mlp = c->mlp, V = c->vocab, hd = c->dk, H = c->heads,
            KH = c->kv_heads ? c->kv_heads : H;
    const char *b = "layers.";
    int l;
    ATTN__TRY(attn__hf_get(st, prefix, b, -1, "embed_tokens.weight", M.E, V, d));
    ATTN__TRY(attn__hf_get(st, prefix, b, -1, "norm.weight", M.nfg, d, 0));
    ATTN__TRY(attn__hf_head(st, M.Wout, M.E, V, d));
    for (l = 0; l < c->layers; l++) {
        attn_transformer_layer_tensors W = attn_transformer_layer_named(m, l, 0);
        ATTN__TRY(attn__hf_get(st, prefix, b, l, "input_layernorm.weight", W.n1g, d, 0));
        ATTN__TRY(attn__hf_get(st, prefix, b, l, "self_attn.q_proj.weight", tmp, H * hd, d));
        attn__hf_rope_rows(W.Wq, tmp, (int)H, (int)hd, (int)d, 0);
        ATTN__TRY(attn__hf_get(st, prefix, b, l, "self_attn.k_proj.weight", tmp, KH * hd, d));
        attn__hf_rope_rows(W.Wk, tmp, (int)KH, (int)hd, (int)d, 0);
        ATTN__TRY(attn__hf_get(st, prefix, b, l, "self_attn.v_proj.weight", W.Wv, KH * hd, d));
        ATTN__TRY(attn__hf_get(st, prefix, b, l, "self_attn.o_proj.weight", W.Wo, d, H * hd));
        ATTN__TRY(attn__hf_get(st, prefix, b, l, "post_attention_layernorm.weight", W.n2g, d, 0));
        ATTN__TRY(attn__hf_get(st, prefix, b, l, "mlp.gate_proj.weight", W.W3, mlp, d));
        ATTN__TRY(attn__hf_get(st, prefix, b, l, "mlp.up_proj.weight", W.W1, mlp, d));
        ATTN__TRY(attn__hf_get(st, prefix, b, l, "mlp.down_proj.weight", W.W2, d, mlp));
    }
    return ATTN_OK;
}

/* Fills a BERT-shaped m from st (names with prefix); tmp [types, d] is scratch. Every token is of
   type 0: its type embedding is added to the position table. */
static attn_status attn__bert_fill(attn_transformer *m, const attn_safetensors *st, const char *prefix,
                                   attn_float *tmp, int types)
{
    const attn_transformer_config *c = &m->cfg;
    attn_transformer_tensors M = attn_transformer_named(m, 0);
    int64_t d = c->d, mlp = c->mlp;
    const char *b = "encoder.layer.";
    int l, t, k;
    ATTN__TRY(attn__hf_get(st, prefix, b, -1, "embeddings.word_embeddings.weight", M.E, c->vocab, d));
    ATTN__TRY(attn__hf_get(st, prefix, b, -1, "embeddings.position_embeddings.weight", M.P, c->max_T, d));
    ATTN__TRY(attn__hf_get(st, prefix, b, -1, "embeddings.token_type_embeddings.weight", tmp, types, d));
    for (t = 0; t < c->max_T; t++) attn_axpy((size_t)d, 1, tmp, M.P + (size_t)t * d); /* type 0 */
    ATTN__TRY(attn__hf_get(st, prefix, b, -1, "embeddings.LayerNorm.weight", M.neg, d, 0));
    ATTN__TRY(attn__hf_get(st, prefix, b, -1, "embeddings.LayerNorm.bias", M.neb, d, 0));
    for (l = 0; l < c->layers; l++) {
        attn_transformer_layer_tensors W = attn_transformer_layer_named(m, l, 0);
        attn_float *dst[16] = {W.Wq, W.bq, W.Wk, W.bk, W.Wv, W.bv, W.Wo, W.bo,
                               W.n1g, W.n1b, W.W1, W.b1, W.W2, W.b2, W.n2g, W.n2b};
        int64_t rows[16] = {d, d, d, d, d, d, d, d, d, d, mlp, mlp, d, d, d, d};
        int64_t cols[16] = {d, 0, d, 0, d, 0, d, 0, 0, 0, d, 0, mlp, 0, 0, 0};
        for (k = 0; k < 16; k++) /* in attn__bert_parts' order; [out, in] as attn.h's */
            ATTN__TRY(attn__hf_get(st, prefix, b, l, attn__bert_parts[k], dst[k], rows[k], cols[k]));
    }
    return ATTN_OK;
}

/* Fills a GPT-2-shaped m from st (names with prefix); tmp [3 d max(d, mlp)] is scratch. Conv1D
   stores [in, out]: the matrices are transposed, c_attn split into Wq, Wk, Wv. */
static attn_status attn__gpt2_fill(attn_transformer *m, const attn_safetensors *st, const char *prefix,
                                   attn_float *tmp)
{
    const attn_transformer_config *c = &m->cfg;
    attn_transformer_tensors M = attn_transformer_named(m, 0);
    int64_t d = c->d, mlp = c->mlp, V = c->vocab;
    int l, k;
    ATTN__TRY(attn__gpt2_get(st, prefix, -1, "wte.weight", M.E, V, d));
    ATTN__TRY(attn__gpt2_get(st, prefix, -1, "wpe.weight", M.P, c->max_T, d));
    ATTN__TRY(attn__gpt2_get(st, prefix, -1, "ln_f.weight", M.nfg, d, 0));
    ATTN__TRY(attn__gpt2_get(st, prefix, -1, "ln_f.bias", M.nfb, d, 0));
    ATTN__TRY(attn__hf_head(st, M.Wout, M.E, V, d));
    memset(M.bout, 0, sizeof(attn_float) * (size_t)V);
    for (l = 0; l < c->layers; l++) {
        attn_transformer_layer_tensors W = attn_transformer_layer_named(m, l, 0);
        attn_float *wq[3] = {W.Wq, W.Wk, W.Wv}, *bq[3] = {W.bq, W.bk, W.bv};
        ATTN__TRY(attn__gpt2_get(st, prefix, l, "ln_1.weight", W.n1g, d, 0));
        ATTN__TRY(attn__gpt2_get(st, prefix, l, "ln_1.bias", W.n1b, d, 0));
        ATTN__TRY(attn__gpt2_get(st, prefix, l, "attn.c_attn.weight", tmp, d, 3 * d));
        for (k = 0; k < 3; k++) attn__st_transpose(wq[k], tmp + k * d, (int)d, (int)d, (size_t)(3 * d));
        ATTN__TRY(attn__gpt2_get(st, prefix, l, "attn.c_attn.bias", tmp, 3 * d, 0));
        for (k = 0; k < 3; k++) memcpy(bq[k], tmp + k * d, sizeof(attn_float) * (size_t)d);
        ATTN__TRY(attn__gpt2_get(st, prefix, l, "attn.c_proj.weight", tmp, d, d));
        attn__st_transpose(W.Wo, tmp, (int)d, (int)d, (size_t)d);
        ATTN__TRY(attn__gpt2_get(st, prefix, l, "attn.c_proj.bias", W.bo, d, 0));
        ATTN__TRY(attn__gpt2_get(st, prefix, l, "ln_2.weight", W.n2g, d, 0));
        ATTN__TRY(attn__gpt2_get(st, prefix, l, "ln_2.bias", W.n2b, d, 0));
        ATTN__TRY(attn__gpt2_get(st, prefix, l, "mlp.c_fc.weight", tmp, d, mlp));
        attn__st_transpose(W.W1, tmp, (int)d, (int)mlp, (size_t)mlp);
        ATTN__TRY(attn__gpt2_get(st, prefix, l, "mlp.c_fc.bias", W.b1, mlp, 0));
        ATTN__TRY(attn__gpt2_get(st, prefix, l, "mlp.c_proj.weight", tmp, mlp, d));
        attn__st_transpose(W.W2, tmp, (int)mlp, (int)d, (size_t)d);
        ATTN__TRY(attn__gpt2_get(st, prefix, l, "mlp.c_proj.bias", W.b2, d, 0));
    }
    return ATTN_OK;
}

#endif

#ifndef ATTN_NO_STDIO
/* A config.json number that must be whole and in 1 .. 1e7 (need: missing is an error, else *out stays). */
static int attn__hf_int(const attn__config *cj, const char *path, const char *key, int need, int *out)
{
    const double *v = attn__config_num(cj, key);
    if (!v && !need) return 1;
    if (!v || *v < 1 || *v > 1e7 || *v != floor(*v))
        return attn__fail(ATTN_ERR_FORMAT,
                          "attn_transformer_load_hf: %s: %s missing or not a whole number in "
                          "1 .. 1e7",
                          path, key),
               0;
    *out = (int)*v;
    return 1;
}

/* GPT-2's configuration from config.json. */
static attn_status attn__gpt2_config(const attn__config *cj, const char *path, attn_transformer_config *c)
{
    const char *act = attn__config_str(cj, "activation_function");
    const double *eps = attn__config_num(cj, "layer_norm_epsilon");
    if (!attn__hf_int(cj, path, "vocab_size", 1, &c->vocab) || !attn__hf_int(cj, path, "n_embd", 1, &c->d) ||
        !attn__hf_int(cj, path, "n_layer", 1, &c->layers) ||
        !attn__hf_int(cj, path, "n_head", 1, &c->heads) ||
        !attn__hf_int(cj, path, "n_positions", 1, &c->max_T))
        return attn_last_status();
    c->mlp = 4 * c->d;
    if (!attn__hf_int(cj, path, "n_inner", 0, &c->mlp)) return attn_last_status();
    if (c->d % c->heads)
        return attn__fail(ATTN_ERR_FORMAT, "attn_transformer_load_hf: %s: n_embd %d in %d heads", path, c->d,
                          c->heads);
    c->dk = c->dv = c->d / c->heads;
    c->eps = eps ? (attn_float)*eps : (attn_float)1e-5;
    if (act && strcmp(act, "gelu_new") && strcmp(act, "gelu") && strcmp(act, "gelu_pytorch_tanh"))
        return attn__fail(ATTN_ERR_FORMAT,
                          "attn_transformer_load_hf: %s: activation_function %s (gelu_new or "
                          "gelu)",
                          path, act);
    c->act = act && !strcmp(act, "gelu") ? ATTN_ACT_GELU_ERF : ATTN_ACT_GELU_TANH;
    c->pos = ATTN_POS_LEARNED; c->norm = ATTN_NORM_LAYER; c->glu = 0; c->bias = 1;
    return ATTN_OK;
}

/* Llama's configuration from config.json: RMSNorm, RoPE (rope_theta), SwiGLU, no biases, grouped-query
   heads, the head tied or not; anything that changes the formulas (rope_scaling, biases, another
   activation) refused. */
static attn_status attn__llama_config(const attn__config *cj, const char *path, attn_transformer_config *c)
{
    const char *act = attn__config_str(cj, "hidden_act");
    const double *eps = attn__config_num(cj, "rms_norm_eps"), *theta = attn__config_num(cj, "rope_theta"),
                 *ab = attn__config_num(cj, "attention_bias"), *mb = attn__config_num(cj, "mlp_bias");
    int i, scaled = 0;
    for (i = 0; i < cj->n; i++) scaled |= !strcmp(cj->key[i], "rope_scaling") && cj->kind[i] == 3;
    if (!attn__hf_int(cj, path, "vocab_size", 1, &c->vocab) ||
        !attn__hf_int(cj, path, "hidden_size", 1, &c->d) ||
        !attn__hf_int(cj, path, "num_hidden_layers", 1, &c->layers) ||
        !attn__hf_int(cj, path, "num_attention_heads", 1, &c->heads) ||
        !attn__hf_int(cj, path, "intermediate_size", 1, &c->mlp) ||
        !attn__hf_int(cj, path, "max_position_embeddings", 1, &c->max_T))
        return attn_last_status();
    c->kv_heads = c->heads;
    c->dk = c->d / c->heads;
    if (!attn__hf_int(cj, path, "num_key_value_heads", 0, &c->kv_heads) ||
        !attn__hf_int(cj, path, "head_dim", 0, &c->dk))
        return attn_last_status();
    if ((act && strcmp(act, "silu")) || scaled || (ab && *ab) || (mb && *mb) || c->dk % 2)
        return attn__fail(ATTN_ERR_FORMAT, "attn_transformer_load_hf: %s: attn.h reads Llama with hidden_act "
                          "silu, no rope_scaling, no biases and an even head_dim", path);
    c->dv = c->dk;
    c->eps = eps ? (attn_float)*eps : (attn_float)1e-6;
    c->rope_theta = theta ? (attn_float)*theta : 10000;
    c->act = ATTN_ACT_SILU;
    c->pos = ATTN_POS_ROPE; c->norm = ATTN_NORM_RMS; c->glu = 1; c->bias = 0;
    return ATTN_OK;
}

/* BERT's configuration from config.json: a post-norm encoder with learned positions, a normed
   embedding, GELU (erf; gelu_new: tanh) and a padding mask; *types the token types. */
static attn_status attn__bert_config(const attn__config *cj, const char *path, attn_transformer_config *c,
                                     int *types)
{
    const char *act = attn__config_str(cj, "hidden_act"),
               *pe = attn__config_str(cj, "position_embedding_type");
    const double *eps = attn__config_num(cj, "layer_norm_eps"), *pad = attn__config_num(cj, "pad_token_id");
    *types = 2;
    if (!attn__hf_int(cj, path, "vocab_size", 1, &c->vocab) ||
        !attn__hf_int(cj, path, "hidden_size", 1, &c->d) ||
        !attn__hf_int(cj, path, "num_hidden_layers", 1, &c->layers) ||
        !attn__hf_int(cj, path, "num_attention_heads", 1, &c->heads) ||
        !attn__hf_int(cj, path, "intermediate_size", 1, &c->mlp) ||
        !attn__hf_int(cj, path, "max_position_embeddings", 1, &c->max_T) ||
        !attn__hf_int(cj, path, "type_vocab_size", 0, types))
        return attn_last_status();
    if (c->d % c->heads || (act && strcmp(act, "gelu") && strcmp(act, "gelu_new")) ||
        (pe && strcmp(pe, "absolute")))
        return attn__fail(ATTN_ERR_FORMAT,
                          "attn_transformer_load_hf: %s: attn.h reads BERT with hidden_size a "
                          "multiple of num_attention_heads, hidden_act gelu and absolute positions",
                          path);
    c->dk = c->dv = c->d / c->heads;
    c->eps = eps ? (attn_float)*eps : (attn_float)1e-12;
    c->act = act && !strcmp(act, "gelu_new") ? ATTN_ACT_GELU_TANH : ATTN_ACT_GELU_ERF;
    c->pad = pad && *pad >= 0 && *pad < c->vocab ? (int)*pad : 0;
    c->pos = ATTN_POS_LEARNED; c->norm = ATTN_NORM_LAYER; c->glu = 0; c->bias = 1; c->causal = 0;
    c->post_norm = c->emb_norm = c->pad_mask = 1;
    return ATTN_OK;
}

#endif

ATTNDEF attn_status attn_transformer_load_hf(attn_transformer *m, const char *dir)
{
#ifndef ATTN_NO_STDIO
    attn__config cj;
    attn_transformer_config c = attn_transformer_config_default();
    attn_transformer t;
    attn_safetensors st;
    attn_status s;
    char path[4096], *text;
    const char *type, *prefix;
    size_t len, KH;
    int i, l, a, types = 0;
    attn_float *tmp;
    ATTN__NEED(m); ATTN__NEED(dir);
    snprintf(path, sizeof path, "%s/config.json", dir);
    if (!(text = attn__read_small(__func__, path, 1 << 20, &len))) return attn_last_status();
    i = attn__config_parse(text, len, &cj);
    ATTN_FREE(text);
    if (!i) return attn__fail(ATTN_ERR_FORMAT, "%s: %s is not a JSON object", __func__, path);
    type = attn__config_str(&cj, "model_type");
    for (a = 0; type && a < 3 && strcmp(type, attn__hf_archs[a].type); a++) continue;
    if (!type || a == 3)
        return attn__fail(ATTN_ERR_FORMAT, "%s: %s: model_type %s; attn.h reads gpt2, llama and bert",
                          __func__, path, type ? type : "(none)");
    c.causal = 1; c.scale = 0; c.readout = 0; c.in_dim = 0;
    ATTN__TRY(a == ATTN__HF_LLAMA  ? attn__llama_config(&cj, path, &c)
              : a == ATTN__HF_BERT ? attn__bert_config(&cj, path, &c, &types)
                                   : attn__gpt2_config(&cj, path, &c));
    if (c.layers > ATTN_MAX_LAYERS)
        return attn__fail(ATTN_ERR_FORMAT, "%s: %s: %d layers (at most %d)", __func__, path, c.layers,
                          ATTN_MAX_LAYERS);
    c.out = a == ATTN__HF_BERT ? 0 : c.vocab; /* BERT: the hidden states, no head */
    for (l = 0; l < c.layers; l++) c.kinds[l] = ATTN_SOFTMAX;
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    ATTN__TRY(attn_safetensors_load(&st, path));
    prefix = a == ATTN__HF_LLAMA ? (attn_safetensors_find(&st, "model.embed_tokens.weight") ? "model." : "")
             : a == ATTN__HF_BERT
                 ? (attn_safetensors_find(&st, "bert.embeddings.word_embeddings.weight") ? "bert." : "")
                 : (attn_safetensors_find(&st, "transformer.wte.weight") ? "transformer." : "");
    for (i = 0; i < st.count; i++)
        if (!attn__hf_known(st.tensors[i].name, prefix, c.layers, a)) {
            attn__fail(ATTN_ERR_FORMAT, "%s: %s holds %s, which is not %s's", __func__, path,
                       st.tensors[i].name, attn__hf_archs[a].type);
            attn_safetensors_free(&st);
            return ATTN_ERR_FORMAT;
        }
    if ((s = attn__tf_make(&t, &c, NULL, NULL, 0)) != ATTN_OK) { /* zeros: the file fills them */
        attn_safetensors_free(&st);
        return s;
    }
    KH = (size_t)ATTN__MAX(c.heads, c.kv_heads);
    if (!(tmp = (attn_float *)ATTN_MALLOC(
              sizeof(attn_float) *
              ATTN__MAX(3 * (size_t)c.d * ATTN__MAX(c.d, c.mlp), KH * c.dk * c.d + (size_t)types * c.d))))
        s = attn__fail(ATTN_ERR_NOMEM, "%s: no memory", __func__);
    else
        s = a == ATTN__HF_LLAMA  ? attn__llama_fill(&t, &st, prefix, tmp)
            : a == ATTN__HF_BERT ? attn__bert_fill(&t, &st, prefix, tmp, types)
                                 : attn__gpt2_fill(&t, &st, prefix, tmp);
    ATTN_FREE(tmp);
    attn_safetensors_free(&st);
    if (s != ATTN_OK) {
        attn_transformer_free(&t);
        return s;
    }
    *m = t;
    return ATTN_OK;
#else
    (void)m; (void)dir;
    return attn__fail(ATTN_ERR_IO, "attn_transformer_load_hf: built with ATTN_NO_STDIO");
#endif
}

#ifndef ATTN_NO_STDIO /* the writer's helpers */
/* Whether a transformer has Llama's shape (what attn_transformer_save_hf writes as "llama"); why not. */
static const char *attn__llama_shape(const attn_transformer_config *c)
{
    attn__misfit own[] = {{c->dk % 2 != 0, "an odd dk"},
                          {c->pos != ATTN_POS_ROPE, "positions other than RoPE"},
                          {c->norm != ATTN_NORM_RMS, "a norm other than RMSNorm"},
                          {!c->glu || c->act != ATTN_ACT_SILU, "an MLP other than SwiGLU"},
                          {c->bias != 0, "biases"}};
    return attn__hf_misfit(c, own, (int)ATTN__COUNT(own));
}

/* The tensors a save writes: names [48], views, in the file's order. */
typedef struct {
    int n;
    attn_tensor *ts;
    char (*names)[48];
    const char **np;
} attn__hf_list;

static void attn__hf_add(attn__hf_list *o, const char *name, attn_float *data, size_t rows, size_t cols)
{
    attn_tensor *t = &o->ts[o->n];
    snprintf(o->names[o->n], 48, "%s", name);
    t->data = data;
    t->ndim = cols ? 2 : 1;
    t->shape[0] = (int)rows;
    t->shape[1] = (int)cols;
    o->np[o->n] = o->names[o->n];
    o->n++;
}

/* GPT-2's tensors into o (mem: room for the transposed and joined ones). */
static void attn__gpt2_list(const attn_transformer *m, attn__hf_list *o, attn_float *mem, int tied)
{
    const attn_transformer_config *c = &m->cfg;
    attn_transformer_tensors M = attn_transformer_named(m, 0);
    size_t d = (size_t)c->d, mlp = (size_t)c->mlp;
    int l, k;
    attn__hf_add(o, "wte.weight", M.E, (size_t)c->vocab, d);
    attn__hf_add(o, "wpe.weight", M.P, (size_t)c->max_T, d);
    for (l = 0; l < c->layers; l++) {
        attn_transformer_layer_tensors W = attn_transformer_layer_named(m, l, 0);
        const attn_float *wq[3] = {W.Wq, W.Wk, W.Wv}, *bq[3] = {W.bq, W.bk, W.bv};
        char b[48];
        attn_float *ca = mem, *cb = ca + 3 * d * d, *cp = cb + 3 * d, *fc = cp + d * d, *fp = fc + d * mlp;
        for (k = 0; k < 3; k++) { /* c_attn [d, 3d] = [Wq^T | Wk^T | Wv^T], its bias [bq | bk | bv] */
            size_t r, q;
            for (r = 0; r < d; r++)
                for (q = 0; q < d; q++) ca[r * 3 * d + k * d + q] = wq[k][q * d + r];
            memcpy(cb + k * d, bq[k], sizeof(attn_float) * d);
        }
        attn__st_transpose(cp, W.Wo, (int)d, (int)d, d);
        attn__st_transpose(fc, W.W1, (int)mlp, (int)d, d);
        attn__st_transpose(fp, W.W2, (int)d, (int)mlp, mlp);
        mem = fp + mlp * d;
        {
            attn_float *p[12] = {W.n1g, W.n1b, ca, cb, cp, W.bo, W.n2g, W.n2b, fc, W.b1, fp, W.b2};
            size_t r[12] = {d, d, d, 3 * d, d, d, d, d, d, mlp, mlp, d},
                   q[12] = {0, 0, 3 * d, 0, d, 0, 0, 0, mlp, 0, d, 0};
            for (k = 0; k < 12; k++)
                attn__hf_add(o, attn__gpt2_name(b, sizeof b, "", l, attn__gpt2_parts[k]), p[k], r[k], q[k]);
        }
    }
    attn__hf_add(o, "ln_f.weight", M.nfg, d, 0);
    attn__hf_add(o, "ln_f.bias", M.nfb, d, 0);
    if (!tied) attn__hf_add(o, "lm_head.weight", M.Wout, (size_t)c->vocab, d);
}

/* Llama's tensors into o (mem: room for the reordered q and k projections). */
static void attn__llama_list(const attn_transformer *m, attn__hf_list *o, attn_float *mem, int tied)
{
    const attn_transformer_config *c = &m->cfg;
    attn_transformer_tensors M = attn_transformer_named(m, 0);
    size_t d = (size_t)c->d, mlp = (size_t)c->mlp, hd = (size_t)c->dk, H = (size_t)c->heads,
           KH = (size_t)(c->kv_heads ? c->kv_heads : c->heads);
    int l, k;
    attn__hf_add(o, "model.embed_tokens.weight", M.E, (size_t)c->vocab, d);
    for (l = 0; l < c->layers; l++) {
        attn_transformer_layer_tensors W = attn_transformer_layer_named(m, l, 0);
        attn_float *q = mem, *kk = q + H * hd * d;
        attn_float *p[9] = {W.n1g, q, kk, W.Wv, W.Wo, W.n2g, W.W3, W.W1, W.W2};
        size_t r[9] = {d, H * hd, KH * hd, KH * hd, d, d, mlp, mlp, d},
               cl[9] = {0, d, d, d, H * hd, 0, d, d, mlp};
        char b[ATTN_ST_NAME_LEN];
        attn__hf_rope_rows(q, W.Wq, (int)H, (int)hd, (int)d, 1);
        attn__hf_rope_rows(kk, W.Wk, (int)KH, (int)hd, (int)d, 1);
        mem = kk + KH * hd * d;
        for (k = 0; k < 9; k++) { /* attn__llama_parts' order */
            attn__hf_name(b, sizeof b, "model.", "layers.", l, attn__llama_parts[k]);
            attn__hf_add(o, b, p[k], r[k], cl[k]);
        }
    }
    attn__hf_add(o, "model.norm.weight", M.nfg, d, 0);
    if (!tied) attn__hf_add(o, "lm_head.weight", M.Wout, (size_t)c->vocab, d);
}

/* v in the fewest significant digits that read back as v (a config.json's 1e-06, not 9.99999997e-07). */
static const char *attn__num_text(char *buf, size_t n, attn_float v)
{
    int p;
    for (p = 6; p < 17; p++)
        if (snprintf(buf, n, "%.*g", p, (double)v) > 0 && (attn_float)strtod(buf, NULL) == v) break;
    return buf;
}
#endif

ATTNDEF attn_status attn_transformer_save_hf(const attn_transformer *m, const char *dir)
{
#ifndef ATTN_NO_STDIO
    const attn_transformer_config *c;
    attn_transformer_tensors M;
    attn__hf_list o;
    char path[4096], eps[32], theta[32];
    const char *meta[2] = {"format", "pt"}, *why_gpt2, *why_llama;
    attn_float *mem;
    attn__save sv;
    size_t d, mlp, need, most;
    int tied, ok, llama, kh;
    attn_status s;
    ATTN__NEED(m); ATTN__NEED(dir);
    c = &m->cfg;
    why_gpt2 = attn__gpt2_shape(c);
    why_llama = attn__llama_shape(c);
    if (why_gpt2 && why_llama)
        return attn__fail(ATTN_ERR_ARG, "%s: the model fits neither GPT-2's layout (it has %s) nor Llama's "
                          "(%s)", __func__, why_gpt2, why_llama);
    llama = !why_llama;
    M = attn_transformer_named(m, 0);
    d = (size_t)c->d; mlp = (size_t)c->mlp;
    tied = !memcmp(M.Wout, M.E, sizeof(attn_float) * (size_t)c->vocab * d);
    kh = c->kv_heads ? c->kv_heads : c->heads;
    need = (size_t)c->layers * (llama ? (size_t)(c->heads + kh) * c->dk * d
                                      : 4 * d * d + 3 * d + 2 * d * mlp); /* reordered, transposed, joined */
    most = (size_t)(5 + 12 * c->layers);
    mem = (attn_float *)ATTN_MALLOC(sizeof(attn_float) * need + 1);
    o.n = 0;
    o.ts = (attn_tensor *)ATTN_MALLOC(sizeof(attn_tensor) * most);
    o.names = (char (*)[48])ATTN_MALLOC(48 * most);
    o.np = (const char **)ATTN_MALLOC(sizeof(char *) * most);
    if (!mem || !o.ts || !o.names || !o.np) {
        ATTN_FREE(mem); ATTN_FREE(o.ts); ATTN_FREE(o.names); ATTN_FREE(o.np);
        return attn__fail(ATTN_ERR_NOMEM, "%s: no memory", __func__);
    }
    if (llama) attn__llama_list(m, &o, mem, tied);
    else attn__gpt2_list(m, &o, mem, tied);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    s = attn_safetensors_save(path, o.np, o.ts, o.n, meta, 1);
    ATTN_FREE(mem); ATTN_FREE(o.ts); ATTN_FREE(o.names); ATTN_FREE(o.np);
    ATTN__TRY(s);
    snprintf(path, sizeof path, "%s/config.json", dir);
    if (!attn__save_open(&sv, __func__, path, "w")) return attn_last_status();
    if (llama)
        ok = fprintf(sv.f,
                     "{\n  \"architectures\": [\"LlamaForCausalLM\"],\n  \"model_type\": \"llama\",\n"
                     "  \"vocab_size\": %d,\n  \"hidden_size\": %d,\n  \"intermediate_size\": %d,\n"
                     "  \"num_hidden_layers\": %d,\n  \"num_attention_heads\": %d,\n"
                     "  \"num_key_value_heads\": %d,\n"
                     "  \"head_dim\": %d,\n  \"max_position_embeddings\": %d,\n  \"rms_norm_eps\": %s,\n"
                     "  \"rope_theta\": %s,\n  \"hidden_act\": \"silu\",\n  \"attention_bias\": false,\n"
                     "  \"mlp_bias\": false,\n  \"tie_word_embeddings\": %s,\n"
                     "  \"torch_dtype\": \"float32\"\n}\n",
                     c->vocab, c->d, c->mlp, c->layers, c->heads, kh, c->dk,
                     c->max_T, attn__num_text(eps, sizeof eps, c->eps),
                     attn__num_text(theta, sizeof theta, c->rope_theta != 0 ? c->rope_theta : 10000),
                     tied ? "true" : "false") > 0;
    else
        ok = fprintf(sv.f,
                     "{\n  \"architectures\": [\"GPT2LMHeadModel\"],\n  \"model_type\": \"gpt2\",\n"
                     "  \"vocab_size\": %d,\n  \"n_embd\": %d,\n  \"n_layer\": %d,\n  \"n_head\": %d,\n"
                     "  \"n_positions\": %d,\n  \"n_ctx\": %d,\n  \"n_inner\": %d,\n"
                     "  \"layer_norm_epsilon\": %s,\n"
                     "  \"activation_function\": \"%s\",\n  \"tie_word_embeddings\": %s,\n"
                     "  \"resid_pdrop\": 0.0,\n  \"embd_pdrop\": 0.0,\n  \"attn_pdrop\": 0.0\n}\n",
                     c->vocab, c->d, c->layers, c->heads, c->max_T, c->max_T, c->mlp,
                     attn__num_text(eps, sizeof eps, c->eps),
                     c->act == ATTN_ACT_GELU_ERF ? "gelu" : "gelu_new", tied ? "true" : "false") > 0;
    return attn__save_close(&sv, __func__, path, ok);
#else
    (void)m; (void)dir;
    return attn__fail(ATTN_ERR_IO, "attn_transformer_save_hf: built with ATTN_NO_STDIO");
#endif
}

/* ---- WordPiece ---- */

/* ---- begin: tables written by tools/gen_unicode.py ---- */
/* From 15.0.0's Unicode Character Database: 864 class runs, 2043 decompositions, 183 lower-case
   runs. */
static const uint32_t attn__uc_class[] = {
    0x1, 0x4a, 0x59, 0x6a, 0x71, 0x102, 0x10b, 0x180, 0x1d3, 0x208, 0x2db, 0x308, 0x3db, 0x3f9, 0x502, 0x50b,
    0x510, 0x53b, 0x540, 0x55b, 0x560, 0x569, 0x570, 0x5b3, 0x5c0, 0x5db, 0x5e0, 0x5fb, 0x600, 0x1804, 0x1b80,
    0x1bf3, 0x1bf8, 0x1c3b, 0x1c40, 0x241c, 0x2440, 0x2ad3, 0x2b00, 0x2c4b, 0x2c58, 0x2c8c, 0x2df3, 0x2dfc,
    0x2e03, 0x2e0c, 0x2e1b, 0x2e24, 0x2e33, 0x2e3c, 0x2e40, 0x2f9b, 0x2fa8, 0x3001, 0x3030, 0x304b, 0x3058,
    0x3063, 0x3070, 0x3084, 0x30db, 0x30e1, 0x30e8, 0x30f3, 0x3100, 0x325c, 0x3300, 0x3353, 0x3370, 0x3384,
    0x3388, 0x36a3, 0x36a8, 0x36b4, 0x36e9, 0x36f0, 0x36fc, 0x3728, 0x373c, 0x3748, 0x3754, 0x3770, 0x3803,
    0x3870, 0x3879, 0x3880, 0x388c, 0x3890, 0x3984, 0x3a58, 0x3d34, 0x3d88, 0x3f5c, 0x3fa0, 0x3fbb, 0x3fd0,
    0x40b4, 0x40d0, 0x40dc, 0x4120, 0x412c, 0x4140, 0x414c, 0x4170, 0x4183, 0x41f8, 0x42cc, 0x42e0, 0x42f3,
    0x42f8, 0x471c, 0x4818, 0x49d4, 0x49d8, 0x49e4, 0x49e8, 0x4a0c, 0x4a48, 0x4a6c, 0x4a70, 0x4a8c, 0x4ac0,
    0x4b14, 0x4b23, 0x4b30, 0x4b83, 0x4b88, 0x4c0c, 0x4c10, 0x4de4, 0x4de8, 0x4e0c, 0x4e28, 0x4e6c, 0x4e70,
    0x4f14, 0x4f20, 0x500c, 0x5018, 0x51e4, 0x51e8, 0x520c, 0x5218, 0x523c, 0x5248, 0x525c, 0x5270, 0x528c,
    0x5290, 0x5384, 0x5390, 0x53ac, 0x53b0, 0x540c, 0x5418, 0x55e4, 0x55e8, 0x560c, 0x5630, 0x563c, 0x5648,
    0x566c, 0x5670, 0x5714, 0x5720, 0x5783, 0x5788, 0x580c, 0x5810, 0x59e4, 0x59e8, 0x59fc, 0x5a00, 0x5a0c,
    0x5a28, 0x5a6c, 0x5a70, 0x5ab4, 0x5ab8, 0x5b14, 0x5b20, 0x5c14, 0x5c18, 0x5e04, 0x5e08, 0x5e6c, 0x5e70,
    0x6004, 0x6008, 0x61f4, 0x6208, 0x6234, 0x6248, 0x6254, 0x6270, 0x62ac, 0x62b8, 0x6314, 0x6320, 0x640c,
    0x6410, 0x65e4, 0x65e8, 0x65fc, 0x6600, 0x6634, 0x6638, 0x6664, 0x6670, 0x6714, 0x6720, 0x680c, 0x6810,
    0x6a0c, 0x6a28, 0x6a6c, 0x6a70, 0x6b14, 0x6b20, 0x6e54, 0x6e58, 0x6e94, 0x6ea8, 0x6eb4, 0x6eb8, 0x6fa3,
    0x6fa8, 0x718c, 0x7190, 0x71a4, 0x71d8, 0x723c, 0x727b, 0x7280, 0x72d3, 0x72e0, 0x758c, 0x7590, 0x75a4,
    0x75d0, 0x75dc, 0x75e8, 0x7644, 0x7670, 0x7823, 0x7898, 0x78a3, 0x78a8, 0x78c4, 0x78d0, 0x79ac, 0x79b0,
    0x79bc, 0x79c0, 0x79cc, 0x79d3, 0x79f0, 0x7b8c, 0x7bf8, 0x7c04, 0x7c2b, 0x7c34, 0x7c40, 0x7c6c, 0x7cc0,
    0x7ccc, 0x7de8, 0x7e34, 0x7e38, 0x7e83, 0x7ea8, 0x7ecb, 0x7ed8, 0x816c, 0x8188, 0x8194, 0x81c0, 0x81cc,
    0x81d8, 0x81ec, 0x81f8, 0x8253, 0x8280, 0x82c4, 0x82d0, 0x82f4, 0x8308, 0x838c, 0x83a8, 0x8414, 0x8418,
    0x842c, 0x8438, 0x846c, 0x8470, 0x84ec, 0x84f0, 0x87db, 0x87e0, 0x9aec, 0x9b03, 0x9b48, 0xa003, 0xa008,
    0xb36b, 0xb378, 0xb402, 0xb408, 0xb4db, 0xb4e8, 0xb75b, 0xb770, 0xb894, 0xb8a8, 0xb994, 0xb9ab, 0xb9b8,
    0xba94, 0xbaa0, 0xbb94, 0xbba0, 0xbda4, 0xbdb0, 0xbdbc, 0xbdf0, 0xbe34, 0xbe38, 0xbe4c, 0xbea3, 0xbeb8,
    0xbec3, 0xbed8, 0xbeec, 0xbef0, 0xc003, 0xc05c, 0xc071, 0xc078, 0xc54c, 0xc550, 0xc904, 0xc918, 0xc93c,
    0xc948, 0xc994, 0xc998, 0xc9cc, 0xc9e0, 0xca23, 0xca30, 0xd0bc, 0xd0c8, 0xd0dc, 0xd0e0, 0xd0f3, 0xd100,
    0xd2b4, 0xd2b8, 0xd2c4, 0xd2f8, 0xd304, 0xd308, 0xd314, 0xd318, 0xd32c, 0xd368, 0xd39c, 0xd3e8, 0xd3fc,
    0xd400, 0xd503, 0xd538, 0xd543, 0xd570, 0xd584, 0xd5f0, 0xd804, 0xd820, 0xd9a4, 0xd9a8, 0xd9b4, 0xd9d8,
    0xd9e4, 0xd9e8, 0xda14, 0xda18, 0xdad3, 0xdb08, 0xdb5c, 0xdba0, 0xdc04, 0xdc10, 0xdd14, 0xdd30, 0xdd44,
    0xdd50, 0xdd5c, 0xdd70, 0xdf34, 0xdf38, 0xdf44, 0xdf50, 0xdf6c, 0xdf70, 0xdf7c, 0xdf90, 0xdfe3, 0xe000,
    0xe164, 0xe1a0, 0xe1b4, 0xe1c0, 0xe1db, 0xe200, 0xe3f3, 0xe400, 0xe603, 0xe640, 0xe684, 0xe69b, 0xe6a4,
    0xe708, 0xe714, 0xe748, 0xe76c, 0xe770, 0xe7a4, 0xe7a8, 0xe7c4, 0xe7d0, 0xee04, 0xefb0, 0xefe4, 0xf000,
    0x10002, 0x10059, 0x10083, 0x10142, 0x10151, 0x1017a, 0x10183, 0x10220, 0x1022b, 0x10290, 0x1029b,
    0x102fa, 0x10301, 0x10328, 0x10331, 0x10380, 0x103eb, 0x103f8, 0x1046b, 0x10478, 0x10684, 0x106e8,
    0x1070c, 0x10710, 0x1072c, 0x10788, 0x11843, 0x11860, 0x1194b, 0x11958, 0x13b43, 0x13bb0, 0x13e2b,
    0x13e38, 0x13f33, 0x13f80, 0x14c1b, 0x14cc8, 0x14ec3, 0x14ee0, 0x14fe3, 0x14ff0, 0x1677c, 0x16790,
    0x167cb, 0x167e8, 0x167f3, 0x16800, 0x16b83, 0x16b88, 0x16bfc, 0x16c00, 0x16f04, 0x17003, 0x17178,
    0x17183, 0x17218, 0x18002, 0x1800b, 0x18020, 0x18043, 0x18090, 0x180a3, 0x18100, 0x18154, 0x18170,
    0x18183, 0x18188, 0x181eb, 0x181f0, 0x184cc, 0x184d8, 0x18503, 0x18508, 0x187db, 0x187e0, 0x1a005,
    0x26e00, 0x27005, 0x50000, 0x527f3, 0x52800, 0x5306b, 0x53080, 0x5337c, 0x53380, 0x5339b, 0x533a4,
    0x533f3, 0x533f8, 0x534f4, 0x53500, 0x53784, 0x53793, 0x537c0, 0x54014, 0x54018, 0x54034, 0x54038,
    0x5405c, 0x54060, 0x5412c, 0x54138, 0x543a3, 0x543c0, 0x54624, 0x54628, 0x54673, 0x54680, 0x54704,
    0x54790, 0x547c3, 0x547d8, 0x547e3, 0x547e8, 0x54934, 0x54973, 0x54980, 0x54a3c, 0x54a90, 0x54afb,
    0x54b00, 0x54c04, 0x54c18, 0x54d9c, 0x54da0, 0x54db4, 0x54dd0, 0x54de4, 0x54de8, 0x54e0b, 0x54e70,
    0x54ef3, 0x54f00, 0x54f2c, 0x54f30, 0x5514c, 0x55178, 0x5518c, 0x55198, 0x551ac, 0x551b8, 0x5521c,
    0x55220, 0x55264, 0x55268, 0x552e3, 0x55300, 0x553e4, 0x553e8, 0x55584, 0x55588, 0x55594, 0x555a8,
    0x555bc, 0x555c8, 0x555f4, 0x55600, 0x5560c, 0x55610, 0x556f3, 0x55700, 0x55764, 0x55770, 0x55783,
    0x55790, 0x557b4, 0x557b8, 0x55f2c, 0x55f30, 0x55f44, 0x55f48, 0x55f5b, 0x55f60, 0x55f6c, 0x55f70,
    0x6c001, 0x7c805, 0x7d800, 0x7d8f4, 0x7d8f8, 0x7e9f3, 0x7ea00, 0x7f004, 0x7f083, 0x7f0d0, 0x7f104,
    0x7f183, 0x7f298, 0x7f2a3, 0x7f310, 0x7f31b, 0x7f320, 0x7f343, 0x7f348, 0x7f353, 0x7f360, 0x7f7f9,
    0x7f800, 0x7f80b, 0x7f820, 0x7f82b, 0x7f858, 0x7f863, 0x7f880, 0x7f8d3, 0x7f8e0, 0x7f8fb, 0x7f908,
    0x7f9db, 0x7f9f0, 0x7f9fb, 0x7fa00, 0x7fadb, 0x7fae0, 0x7faeb, 0x7faf0, 0x7fafb, 0x7fb30, 0x7ffc9,
    0x7ffe0, 0x7ffe9, 0x7fff0, 0x80803, 0x80818, 0x80fec, 0x80ff0, 0x81704, 0x81708, 0x81bb4, 0x81bd8,
    0x81cfb, 0x81d00, 0x81e83, 0x81e88, 0x82b7b, 0x82b80, 0x842bb, 0x842c0, 0x848fb, 0x84900, 0x849fb,
    0x84a00, 0x8500c, 0x85020, 0x8502c, 0x85038, 0x85064, 0x85080, 0x851c4, 0x851d8, 0x851fc, 0x85200,
    0x85283, 0x852c8, 0x853fb, 0x85400, 0x8572c, 0x85738, 0x85783, 0x857b8, 0x859cb, 0x85a00, 0x85ccb,
    0x85ce8, 0x8800c, 0x88010, 0x881c4, 0x8823b, 0x88270, 0x883fc, 0x88410, 0x8859c, 0x885b8, 0x885cc,
    0x885db, 0x885e9, 0x885f3, 0x88610, 0x88804, 0x88818, 0x8893c, 0x88960, 0x8896c, 0x889a8, 0x88a03,
    0x88a20, 0x88b9c, 0x88ba3, 0x88bb0, 0x88c04, 0x88c10, 0x88db4, 0x88df8, 0x88e2b, 0x88e54, 0x88e6b,
    0x88e70, 0x88edb, 0x88ee0, 0x88eeb, 0x88f00, 0x8917c, 0x89190, 0x891a4, 0x891a8, 0x891b4, 0x891c3,
    0x891f0, 0x8954b, 0x89550, 0x896fc, 0x89700, 0x8971c, 0x89758, 0x89804, 0x89810, 0x899e4, 0x899e8,
    0x89a04, 0x89a08, 0x89b34, 0x89b68, 0x89b84, 0x89ba8, 0x8a59c, 0x8a5c8, 0x8a5d4, 0x8a5d8, 0x8a5fc,
    0x8a608, 0x8a614, 0x8a620, 0x8a633, 0x8a638, 0x8ad94, 0x8adb0, 0x8ade4, 0x8adf0, 0x8adfc, 0x8ae0b,
    0x8aec0, 0x8aee4, 0x8aef0, 0x8b19c, 0x8b1d8, 0x8b1ec, 0x8b1f0, 0x8b1fc, 0x8b20b, 0x8b220, 0x8b55c,
    0x8b560, 0x8b56c, 0x8b570, 0x8b584, 0x8b5b0, 0x8b5bc, 0x8b5c0, 0x8b8ec, 0x8b900, 0x8b914, 0x8b930,
    0x8b93c, 0x8b960, 0x8b9e3, 0x8b9f8, 0x92383, 0x923a8, 0xb5373, 0xb5380, 0xb5784, 0xb57ab, 0xb57b0,
    0xb5984, 0xb59bb, 0xb59e0, 0xb5a23, 0xb5a28, 0xb7c7c, 0xb7c98, 0xde4ec, 0xde4fb, 0xde501, 0xde520,
    0xe8b3c, 0xe8b50, 0xe8b99, 0xe8bdc, 0xe8c18, 0xe8c2c, 0xe8c60, 0xe8d54, 0xe8d70, 0xe9214, 0xe9228,
    0xed004, 0xed1b8, 0xed1dc, 0xed368, 0xed3ac, 0xed3b0, 0xed424, 0xed428, 0xed43b, 0xed460, 0xed4dc,
    0xed500, 0xed50c, 0xed580, 0xf4684, 0xf46b8, 0x100005, 0x153700, 0x153805, 0x15c100, 0x15c905, 0x167580,
    0x17c005, 0x17d100, 0x700009, 0x700010, 0x700101, 0x700400, 0x700804, 0x700f80, 0x780001, 0x7ffff0,
    0x800001, 0x87fff0,
};
static const uint32_t attn__uc_decomp1[][2] = {
    {0xc0,0x41}, {0xc1,0x41}, {0xc2,0x41}, {0xc3,0x41}, {0xc4,0x41}, {0xc5,0x41}, {0xc7,0x43}, {0xc8,0x45},
    {0xc9,0x45}, {0xca,0x45}, {0xcb,0x45}, {0xcc,0x49}, {0xcd,0x49}, {0xce,0x49}, {0xcf,0x49}, {0xd1,0x4e},
    {0xd2,0x4f}, {0xd3,0x4f}, {0xd4,0x4f}, {0xd5,0x4f}, {0xd6,0x4f}, {0xd9,0x55}, {0xda,0x55}, {0xdb,0x55},
    {0xdc,0x55}, {0xdd,0x59}, {0xe0,0x61}, {0xe1,0x61}, {0xe2,0x61}, {0xe3,0x61}, {0xe4,0x61}, {0xe5,0x61},
    {0xe7,0x63}, {0xe8,0x65}, {0xe9,0x65}, {0xea,0x65}, {0xeb,0x65}, {0xec,0x69}, {0xed,0x69}, {0xee,0x69},
    {0xef,0x69}, {0xf1,0x6e}, {0xf2,0x6f}, {0xf3,0x6f}, {0xf4,0x6f}, {0xf5,0x6f}, {0xf6,0x6f}, {0xf9,0x75},
    {0xfa,0x75}, {0xfb,0x75}, {0xfc,0x75}, {0xfd,0x79}, {0xff,0x79}, {0x100,0x41}, {0x101,0x61}, {0x102,0x41},
    {0x103,0x61}, {0x104,0x41}, {0x105,0x61}, {0x106,0x43}, {0x107,0x63}, {0x108,0x43}, {0x109,0x63},
    {0x10a,0x43}, {0x10b,0x63}, {0x10c,0x43}, {0x10d,0x63}, {0x10e,0x44}, {0x10f,0x64}, {0x112,0x45},
    {0x113,0x65}, {0x114,0x45}, {0x115,0x65}, {0x116,0x45}, {0x117,0x65}, {0x118,0x45}, {0x119,0x65},
    {0x11a,0x45}, {0x11b,0x65}, {0x11c,0x47}, {0x11d,0x67}, {0x11e,0x47}, {0x11f,0x67}, {0x120,0x47},
    {0x121,0x67}, {0x122,0x47}, {0x123,0x67}, {0x124,0x48}, {0x125,0x68}, {0x128,0x49}, {0x129,0x69},
    {0x12a,0x49}, {0x12b,0x69}, {0x12c,0x49}, {0x12d,0x69}, {0x12e,0x49}, {0x12f,0x69}, {0x130,0x49},
    {0x134,0x4a}, {0x135,0x6a}, {0x136,0x4b}, {0x137,0x6b}, {0x139,0x4c}, {0x13a,0x6c}, {0x13b,0x4c},
    {0x13c,0x6c}, {0x13d,0x4c}, {0x13e,0x6c}, {0x143,0x4e}, {0x144,0x6e}, {0x145,0x4e}, {0x146,0x6e},
    {0x147,0x4e}, {0x148,0x6e}, {0x14c,0x4f}, {0x14d,0x6f}, {0x14e,0x4f}, {0x14f,0x6f}, {0x150,0x4f},
    {0x151,0x6f}, {0x154,0x52}, {0x155,0x72}, {0x156,0x52}, {0x157,0x72}, {0x158,0x52}, {0x159,0x72},
    {0x15a,0x53}, {0x15b,0x73}, {0x15c,0x53}, {0x15d,0x73}, {0x15e,0x53}, {0x15f,0x73}, {0x160,0x53},
    {0x161,0x73}, {0x162,0x54}, {0x163,0x74}, {0x164,0x54}, {0x165,0x74}, {0x168,0x55}, {0x169,0x75},
    {0x16a,0x55}, {0x16b,0x75}, {0x16c,0x55}, {0x16d,0x75}, {0x16e,0x55}, {0x16f,0x75}, {0x170,0x55},
    {0x171,0x75}, {0x172,0x55}, {0x173,0x75}, {0x174,0x57}, {0x175,0x77}, {0x176,0x59}, {0x177,0x79},
    {0x178,0x59}, {0x179,0x5a}, {0x17a,0x7a}, {0x17b,0x5a}, {0x17c,0x7a}, {0x17d,0x5a}, {0x17e,0x7a},
    {0x1a0,0x4f}, {0x1a1,0x6f}, {0x1af,0x55}, {0x1b0,0x75}, {0x1cd,0x41}, {0x1ce,0x61}, {0x1cf,0x49},
    {0x1d0,0x69}, {0x1d1,0x4f}, {0x1d2,0x6f}, {0x1d3,0x55}, {0x1d4,0x75}, {0x1d5,0x55}, {0x1d6,0x75},
    {0x1d7,0x55}, {0x1d8,0x75}, {0x1d9,0x55}, {0x1da,0x75}, {0x1db,0x55}, {0x1dc,0x75}, {0x1de,0x41},
    {0x1df,0x61}, {0x1e0,0x41}, {0x1e1,0x61}, {0x1e2,0xc6}, {0x1e3,0xe6}, {0x1e6,0x47}, {0x1e7,0x67},
    {0x1e8,0x4b}, {0x1e9,0x6b}, {0x1ea,0x4f}, {0x1eb,0x6f}, {0x1ec,0x4f}, {0x1ed,0x6f}, {0x1ee,0x1b7},
    {0x1ef,0x292}, {0x1f0,0x6a}, {0x1f4,0x47}, {0x1f5,0x67}, {0x1f8,0x4e}, {0x1f9,0x6e}, {0x1fa,0x41},
    {0x1fb,0x61}, {0x1fc,0xc6}, {0x1fd,0xe6}, {0x1fe,0xd8}, {0x1ff,0xf8}, {0x200,0x41}, {0x201,0x61},
    {0x202,0x41}, {0x203,0x61}, {0x204,0x45}, {0x205,0x65}, {0x206,0x45}, {0x207,0x65}, {0x208,0x49},
    {0x209,0x69}, {0x20a,0x49}, {0x20b,0x69}, {0x20c,0x4f}, {0x20d,0x6f}, {0x20e,0x4f}, {0x20f,0x6f},
    {0x210,0x52}, {0x211,0x72}, {0x212,0x52}, {0x213,0x72}, {0x214,0x55}, {0x215,0x75}, {0x216,0x55},
    {0x217,0x75}, {0x218,0x53}, {0x219,0x73}, {0x21a,0x54}, {0x21b,0x74}, {0x21e,0x48}, {0x21f,0x68},
    {0x226,0x41}, {0x227,0x61}, {0x228,0x45}, {0x229,0x65}, {0x22a,0x4f}, {0x22b,0x6f}, {0x22c,0x4f},
    {0x22d,0x6f}, {0x22e,0x4f}, {0x22f,0x6f}, {0x230,0x4f}, {0x231,0x6f}, {0x232,0x59}, {0x233,0x79},
    {0x374,0x2b9}, {0x37e,0x3b}, {0x385,0xa8}, {0x386,0x391}, {0x387,0xb7}, {0x388,0x395}, {0x389,0x397},
    {0x38a,0x399}, {0x38c,0x39f}, {0x38e,0x3a5}, {0x38f,0x3a9}, {0x390,0x3b9}, {0x3aa,0x399}, {0x3ab,0x3a5},
    {0x3ac,0x3b1}, {0x3ad,0x3b5}, {0x3ae,0x3b7}, {0x3af,0x3b9}, {0x3b0,0x3c5}, {0x3ca,0x3b9}, {0x3cb,0x3c5},
    {0x3cc,0x3bf}, {0x3cd,0x3c5}, {0x3ce,0x3c9}, {0x3d3,0x3d2}, {0x3d4,0x3d2}, {0x400,0x415}, {0x401,0x415},
    {0x403,0x413}, {0x407,0x406}, {0x40c,0x41a}, {0x40d,0x418}, {0x40e,0x423}, {0x419,0x418}, {0x439,0x438},
    {0x450,0x435}, {0x451,0x435}, {0x453,0x433}, {0x457,0x456}, {0x45c,0x43a}, {0x45d,0x438}, {0x45e,0x443},
    {0x476,0x474}, {0x477,0x475}, {0x4c1,0x416}, {0x4c2,0x436}, {0x4d0,0x410}, {0x4d1,0x430}, {0x4d2,0x410},
    {0x4d3,0x430}, {0x4d6,0x415}, {0x4d7,0x435}, {0x4da,0x4d8}, {0x4db,0x4d9}, {0x4dc,0x416}, {0x4dd,0x436},
    {0x4de,0x417}, {0x4df,0x437}, {0x4e2,0x418}, {0x4e3,0x438}, {0x4e4,0x418}, {0x4e5,0x438}, {0x4e6,0x41e},
    {0x4e7,0x43e}, {0x4ea,0x4e8}, {0x4eb,0x4e9}, {0x4ec,0x42d}, {0x4ed,0x44d}, {0x4ee,0x423}, {0x4ef,0x443},
    {0x4f0,0x423}, {0x4f1,0x443}, {0x4f2,0x423}, {0x4f3,0x443}, {0x4f4,0x427}, {0x4f5,0x447}, {0x4f8,0x42b},
    {0x4f9,0x44b}, {0x622,0x627}, {0x623,0x627}, {0x624,0x648}, {0x625,0x627}, {0x626,0x64a}, {0x6c0,0x6d5},
    {0x6c2,0x6c1}, {0x6d3,0x6d2}, {0x929,0x928}, {0x931,0x930}, {0x934,0x933}, {0x958,0x915}, {0x959,0x916},
    {0x95a,0x917}, {0x95b,0x91c}, {0x95c,0x921}, {0x95d,0x922}, {0x95e,0x92b}, {0x95f,0x92f}, {0x9dc,0x9a1},
    {0x9dd,0x9a2}, {0x9df,0x9af}, {0xa33,0xa32}, {0xa36,0xa38}, {0xa59,0xa16}, {0xa5a,0xa17}, {0xa5b,0xa1c},
    {0xa5e,0xa2b}, {0xb48,0xb47}, {0xb5c,0xb21}, {0xb5d,0xb22}, {0xcc0,0xcd5}, {0xcc7,0xcd5}, {0xcc8,0xcd6},
    {0xcca,0xcc2}, {0xdda,0xdd9}, {0xf43,0xf42}, {0xf4d,0xf4c}, {0xf52,0xf51}, {0xf57,0xf56}, {0xf5c,0xf5b},
    {0xf69,0xf40}, {0x1026,0x1025}, {0x1b3b,0x1b35}, {0x1b3d,0x1b35}, {0x1b43,0x1b35}, {0x1e00,0x41},
    {0x1e01,0x61}, {0x1e02,0x42}, {0x1e03,0x62}, {0x1e04,0x42}, {0x1e05,0x62}, {0x1e06,0x42}, {0x1e07,0x62},
    {0x1e08,0x43}, {0x1e09,0x63}, {0x1e0a,0x44}, {0x1e0b,0x64}, {0x1e0c,0x44}, {0x1e0d,0x64}, {0x1e0e,0x44},
    {0x1e0f,0x64}, {0x1e10,0x44}, {0x1e11,0x64}, {0x1e12,0x44}, {0x1e13,0x64}, {0x1e14,0x45}, {0x1e15,0x65},
    {0x1e16,0x45}, {0x1e17,0x65}, {0x1e18,0x45}, {0x1e19,0x65}, {0x1e1a,0x45}, {0x1e1b,0x65}, {0x1e1c,0x45},
    {0x1e1d,0x65}, {0x1e1e,0x46}, {0x1e1f,0x66}, {0x1e20,0x47}, {0x1e21,0x67}, {0x1e22,0x48}, {0x1e23,0x68},
    {0x1e24,0x48}, {0x1e25,0x68}, {0x1e26,0x48}, {0x1e27,0x68}, {0x1e28,0x48}, {0x1e29,0x68}, {0x1e2a,0x48},
    {0x1e2b,0x68}, {0x1e2c,0x49}, {0x1e2d,0x69}, {0x1e2e,0x49}, {0x1e2f,0x69}, {0x1e30,0x4b}, {0x1e31,0x6b},
    {0x1e32,0x4b}, {0x1e33,0x6b}, {0x1e34,0x4b}, {0x1e35,0x6b}, {0x1e36,0x4c}, {0x1e37,0x6c}, {0x1e38,0x4c},
    {0x1e39,0x6c}, {0x1e3a,0x4c}, {0x1e3b,0x6c}, {0x1e3c,0x4c}, {0x1e3d,0x6c}, {0x1e3e,0x4d}, {0x1e3f,0x6d},
    {0x1e40,0x4d}, {0x1e41,0x6d}, {0x1e42,0x4d}, {0x1e43,0x6d}, {0x1e44,0x4e}, {0x1e45,0x6e}, {0x1e46,0x4e},
    {0x1e47,0x6e}, {0x1e48,0x4e}, {0x1e49,0x6e}, {0x1e4a,0x4e}, {0x1e4b,0x6e}, {0x1e4c,0x4f}, {0x1e4d,0x6f},
    {0x1e4e,0x4f}, {0x1e4f,0x6f}, {0x1e50,0x4f}, {0x1e51,0x6f}, {0x1e52,0x4f}, {0x1e53,0x6f}, {0x1e54,0x50},
    {0x1e55,0x70}, {0x1e56,0x50}, {0x1e57,0x70}, {0x1e58,0x52}, {0x1e59,0x72}, {0x1e5a,0x52}, {0x1e5b,0x72},
    {0x1e5c,0x52}, {0x1e5d,0x72}, {0x1e5e,0x52}, {0x1e5f,0x72}, {0x1e60,0x53}, {0x1e61,0x73}, {0x1e62,0x53},
    {0x1e63,0x73}, {0x1e64,0x53}, {0x1e65,0x73}, {0x1e66,0x53}, {0x1e67,0x73}, {0x1e68,0x53}, {0x1e69,0x73},
    {0x1e6a,0x54}, {0x1e6b,0x74}, {0x1e6c,0x54}, {0x1e6d,0x74}, {0x1e6e,0x54}, {0x1e6f,0x74}, {0x1e70,0x54},
    {0x1e71,0x74}, {0x1e72,0x55}, {0x1e73,0x75}, {0x1e74,0x55}, {0x1e75,0x75}, {0x1e76,0x55}, {0x1e77,0x75},
    {0x1e78,0x55}, {0x1e79,0x75}, {0x1e7a,0x55}, {0x1e7b,0x75}, {0x1e7c,0x56}, {0x1e7d,0x76}, {0x1e7e,0x56},
    {0x1e7f,0x76}, {0x1e80,0x57}, {0x1e81,0x77}, {0x1e82,0x57}, {0x1e83,0x77}, {0x1e84,0x57}, {0x1e85,0x77},
    {0x1e86,0x57}, {0x1e87,0x77}, {0x1e88,0x57}, {0x1e89,0x77}, {0x1e8a,0x58}, {0x1e8b,0x78}, {0x1e8c,0x58},
    {0x1e8d,0x78}, {0x1e8e,0x59}, {0x1e8f,0x79}, {0x1e90,0x5a}, {0x1e91,0x7a}, {0x1e92,0x5a}, {0x1e93,0x7a},
    {0x1e94,0x5a}, {0x1e95,0x7a}, {0x1e96,0x68}, {0x1e97,0x74}, {0x1e98,0x77}, {0x1e99,0x79}, {0x1e9b,0x17f},
    {0x1ea0,0x41}, {0x1ea1,0x61}, {0x1ea2,0x41}, {0x1ea3,0x61}, {0x1ea4,0x41}, {0x1ea5,0x61}, {0x1ea6,0x41},
    {0x1ea7,0x61}, {0x1ea8,0x41}, {0x1ea9,0x61}, {0x1eaa,0x41}, {0x1eab,0x61}, {0x1eac,0x41}, {0x1ead,0x61},
    {0x1eae,0x41}, {0x1eaf,0x61}, {0x1eb0,0x41}, {0x1eb1,0x61}, {0x1eb2,0x41}, {0x1eb3,0x61}, {0x1eb4,0x41},
    {0x1eb5,0x61}, {0x1eb6,0x41}, {0x1eb7,0x61}, {0x1eb8,0x45}, {0x1eb9,0x65}, {0x1eba,0x45}, {0x1ebb,0x65},
    {0x1ebc,0x45}, {0x1ebd,0x65}, {0x1ebe,0x45}, {0x1ebf,0x65}, {0x1ec0,0x45}, {0x1ec1,0x65}, {0x1ec2,0x45},
    {0x1ec3,0x65}, {0x1ec4,0x45}, {0x1ec5,0x65}, {0x1ec6,0x45}, {0x1ec7,0x65}, {0x1ec8,0x49}, {0x1ec9,0x69},
    {0x1eca,0x49}, {0x1ecb,0x69}, {0x1ecc,0x4f}, {0x1ecd,0x6f}, {0x1ece,0x4f}, {0x1ecf,0x6f}, {0x1ed0,0x4f},
    {0x1ed1,0x6f}, {0x1ed2,0x4f}, {0x1ed3,0x6f}, {0x1ed4,0x4f}, {0x1ed5,0x6f}, {0x1ed6,0x4f}, {0x1ed7,0x6f},
    {0x1ed8,0x4f}, {0x1ed9,0x6f}, {0x1eda,0x4f}, {0x1edb,0x6f}, {0x1edc,0x4f}, {0x1edd,0x6f}, {0x1ede,0x4f},
    {0x1edf,0x6f}, {0x1ee0,0x4f}, {0x1ee1,0x6f}, {0x1ee2,0x4f}, {0x1ee3,0x6f}, {0x1ee4,0x55}, {0x1ee5,0x75},
    {0x1ee6,0x55}, {0x1ee7,0x75}, {0x1ee8,0x55}, {0x1ee9,0x75}, {0x1eea,0x55}, {0x1eeb,0x75}, {0x1eec,0x55},
    {0x1eed,0x75}, {0x1eee,0x55}, {0x1eef,0x75}, {0x1ef0,0x55}, {0x1ef1,0x75}, {0x1ef2,0x59}, {0x1ef3,0x79},
    {0x1ef4,0x59}, {0x1ef5,0x79}, {0x1ef6,0x59}, {0x1ef7,0x79}, {0x1ef8,0x59}, {0x1ef9,0x79}, {0x1f00,0x3b1},
    {0x1f01,0x3b1}, {0x1f02,0x3b1}, {0x1f03,0x3b1}, {0x1f04,0x3b1}, {0x1f05,0x3b1}, {0x1f06,0x3b1},
    {0x1f07,0x3b1}, {0x1f08,0x391}, {0x1f09,0x391}, {0x1f0a,0x391}, {0x1f0b,0x391}, {0x1f0c,0x391},
    {0x1f0d,0x391}, {0x1f0e,0x391}, {0x1f0f,0x391}, {0x1f10,0x3b5}, {0x1f11,0x3b5}, {0x1f12,0x3b5},
    {0x1f13,0x3b5}, {0x1f14,0x3b5}, {0x1f15,0x3b5}, {0x1f18,0x395}, {0x1f19,0x395}, {0x1f1a,0x395},
    {0x1f1b,0x395}, {0x1f1c,0x395}, {0x1f1d,0x395}, {0x1f20,0x3b7}, {0x1f21,0x3b7}, {0x1f22,0x3b7},
    {0x1f23,0x3b7}, {0x1f24,0x3b7}, {0x1f25,0x3b7}, {0x1f26,0x3b7}, {0x1f27,0x3b7}, {0x1f28,0x397},
    {0x1f29,0x397}, {0x1f2a,0x397}, {0x1f2b,0x397}, {0x1f2c,0x397}, {0x1f2d,0x397}, {0x1f2e,0x397},
    {0x1f2f,0x397}, {0x1f30,0x3b9}, {0x1f31,0x3b9}, {0x1f32,0x3b9}, {0x1f33,0x3b9}, {0x1f34,0x3b9},
    {0x1f35,0x3b9}, {0x1f36,0x3b9}, {0x1f37,0x3b9}, {0x1f38,0x399}, {0x1f39,0x399}, {0x1f3a,0x399},
    {0x1f3b,0x399}, {0x1f3c,0x399}, {0x1f3d,0x399}, {0x1f3e,0x399}, {0x1f3f,0x399}, {0x1f40,0x3bf},
    {0x1f41,0x3bf}, {0x1f42,0x3bf}, {0x1f43,0x3bf}, {0x1f44,0x3bf}, {0x1f45,0x3bf}, {0x1f48,0x39f},
    {0x1f49,0x39f}, {0x1f4a,0x39f}, {0x1f4b,0x39f}, {0x1f4c,0x39f}, {0x1f4d,0x39f}, {0x1f50,0x3c5},
    {0x1f51,0x3c5}, {0x1f52,0x3c5}, {0x1f53,0x3c5}, {0x1f54,0x3c5}, {0x1f55,0x3c5}, {0x1f56,0x3c5},
    {0x1f57,0x3c5}, {0x1f59,0x3a5}, {0x1f5b,0x3a5}, {0x1f5d,0x3a5}, {0x1f5f,0x3a5}, {0x1f60,0x3c9},
    {0x1f61,0x3c9}, {0x1f62,0x3c9}, {0x1f63,0x3c9}, {0x1f64,0x3c9}, {0x1f65,0x3c9}, {0x1f66,0x3c9},
    {0x1f67,0x3c9}, {0x1f68,0x3a9}, {0x1f69,0x3a9}, {0x1f6a,0x3a9}, {0x1f6b,0x3a9}, {0x1f6c,0x3a9},
    {0x1f6d,0x3a9}, {0x1f6e,0x3a9}, {0x1f6f,0x3a9}, {0x1f70,0x3b1}, {0x1f71,0x3b1}, {0x1f72,0x3b5},
    {0x1f73,0x3b5}, {0x1f74,0x3b7}, {0x1f75,0x3b7}, {0x1f76,0x3b9}, {0x1f77,0x3b9}, {0x1f78,0x3bf},
    {0x1f79,0x3bf}, {0x1f7a,0x3c5}, {0x1f7b,0x3c5}, {0x1f7c,0x3c9}, {0x1f7d,0x3c9}, {0x1f80,0x3b1},
    {0x1f81,0x3b1}, {0x1f82,0x3b1}, {0x1f83,0x3b1}, {0x1f84,0x3b1}, {0x1f85,0x3b1}, {0x1f86,0x3b1},
    {0x1f87,0x3b1}, {0x1f88,0x391}, {0x1f89,0x391}, {0x1f8a,0x391}, {0x1f8b,0x391}, {0x1f8c,0x391},
    {0x1f8d,0x391}, {0x1f8e,0x391}, {0x1f8f,0x391}, {0x1f90,0x3b7}, {0x1f91,0x3b7}, {0x1f92,0x3b7},
    {0x1f93,0x3b7}, {0x1f94,0x3b7}, {0x1f95,0x3b7}, {0x1f96,0x3b7}, {0x1f97,0x3b7}, {0x1f98,0x397},
    {0x1f99,0x397}, {0x1f9a,0x397}, {0x1f9b,0x397}, {0x1f9c,0x397}, {0x1f9d,0x397}, {0x1f9e,0x397},
    {0x1f9f,0x397}, {0x1fa0,0x3c9}, {0x1fa1,0x3c9}, {0x1fa2,0x3c9}, {0x1fa3,0x3c9}, {0x1fa4,0x3c9},
    {0x1fa5,0x3c9}, {0x1fa6,0x3c9}, {0x1fa7,0x3c9}, {0x1fa8,0x3a9}, {0x1fa9,0x3a9}, {0x1faa,0x3a9},
    {0x1fab,0x3a9}, {0x1fac,0x3a9}, {0x1fad,0x3a9}, {0x1fae,0x3a9}, {0x1faf,0x3a9}, {0x1fb0,0x3b1},
    {0x1fb1,0x3b1}, {0x1fb2,0x3b1}, {0x1fb3,0x3b1}, {0x1fb4,0x3b1}, {0x1fb6,0x3b1}, {0x1fb7,0x3b1},
    {0x1fb8,0x391}, {0x1fb9,0x391}, {0x1fba,0x391}, {0x1fbb,0x391}, {0x1fbc,0x391}, {0x1fbe,0x3b9},
    {0x1fc1,0xa8}, {0x1fc2,0x3b7}, {0x1fc3,0x3b7}, {0x1fc4,0x3b7}, {0x1fc6,0x3b7}, {0x1fc7,0x3b7},
    {0x1fc8,0x395}, {0x1fc9,0x395}, {0x1fca,0x397}, {0x1fcb,0x397}, {0x1fcc,0x397}, {0x1fcd,0x1fbf},
    {0x1fce,0x1fbf}, {0x1fcf,0x1fbf}, {0x1fd0,0x3b9}, {0x1fd1,0x3b9}, {0x1fd2,0x3b9}, {0x1fd3,0x3b9},
    {0x1fd6,0x3b9}, {0x1fd7,0x3b9}, {0x1fd8,0x399}, {0x1fd9,0x399}, {0x1fda,0x399}, {0x1fdb,0x399},
    {0x1fdd,0x1ffe}, {0x1fde,0x1ffe}, {0x1fdf,0x1ffe}, {0x1fe0,0x3c5}, {0x1fe1,0x3c5}, {0x1fe2,0x3c5},
    {0x1fe3,0x3c5}, {0x1fe4,0x3c1}, {0x1fe5,0x3c1}, {0x1fe6,0x3c5}, {0x1fe7,0x3c5}, {0x1fe8,0x3a5},
    {0x1fe9,0x3a5}, {0x1fea,0x3a5}, {0x1feb,0x3a5}, {0x1fec,0x3a1}, {0x1fed,0xa8}, {0x1fee,0xa8},
    {0x1fef,0x60}, {0x1ff2,0x3c9}, {0x1ff3,0x3c9}, {0x1ff4,0x3c9}, {0x1ff6,0x3c9}, {0x1ff7,0x3c9},
    {0x1ff8,0x39f}, {0x1ff9,0x39f}, {0x1ffa,0x3a9}, {0x1ffb,0x3a9}, {0x1ffc,0x3a9}, {0x1ffd,0xb4},
    {0x2000,0x2002}, {0x2001,0x2003}, {0x2126,0x3a9}, {0x212a,0x4b}, {0x212b,0x41}, {0x219a,0x2190},
    {0x219b,0x2192}, {0x21ae,0x2194}, {0x21cd,0x21d0}, {0x21ce,0x21d4}, {0x21cf,0x21d2}, {0x2204,0x2203},
    {0x2209,0x2208}, {0x220c,0x220b}, {0x2224,0x2223}, {0x2226,0x2225}, {0x2241,0x223c}, {0x2244,0x2243},
    {0x2247,0x2245}, {0x2249,0x2248}, {0x2260,0x3d}, {0x2262,0x2261}, {0x226d,0x224d}, {0x226e,0x3c},
    {0x226f,0x3e}, {0x2270,0x2264}, {0x2271,0x2265}, {0x2274,0x2272}, {0x2275,0x2273}, {0x2278,0x2276},
    {0x2279,0x2277}, {0x2280,0x227a}, {0x2281,0x227b}, {0x2284,0x2282}, {0x2285,0x2283}, {0x2288,0x2286},
    {0x2289,0x2287}, {0x22ac,0x22a2}, {0x22ad,0x22a8}, {0x22ae,0x22a9}, {0x22af,0x22ab}, {0x22e0,0x227c},
    {0x22e1,0x227d}, {0x22e2,0x2291}, {0x22e3,0x2292}, {0x22ea,0x22b2}, {0x22eb,0x22b3}, {0x22ec,0x22b4},
    {0x22ed,0x22b5}, {0x2329,0x3008}, {0x232a,0x3009}, {0x2adc,0x2add}, {0x304c,0x304b}, {0x304e,0x304d},
    {0x3050,0x304f}, {0x3052,0x3051}, {0x3054,0x3053}, {0x3056,0x3055}, {0x3058,0x3057}, {0x305a,0x3059},
    {0x305c,0x305b}, {0x305e,0x305d}, {0x3060,0x305f}, {0x3062,0x3061}, {0x3065,0x3064}, {0x3067,0x3066},
    {0x3069,0x3068}, {0x3070,0x306f}, {0x3071,0x306f}, {0x3073,0x3072}, {0x3074,0x3072}, {0x3076,0x3075},
    {0x3077,0x3075}, {0x3079,0x3078}, {0x307a,0x3078}, {0x307c,0x307b}, {0x307d,0x307b}, {0x3094,0x3046},
    {0x309e,0x309d}, {0x30ac,0x30ab}, {0x30ae,0x30ad}, {0x30b0,0x30af}, {0x30b2,0x30b1}, {0x30b4,0x30b3},
    {0x30b6,0x30b5}, {0x30b8,0x30b7}, {0x30ba,0x30b9}, {0x30bc,0x30bb}, {0x30be,0x30bd}, {0x30c0,0x30bf},
    {0x30c2,0x30c1}, {0x30c5,0x30c4}, {0x30c7,0x30c6}, {0x30c9,0x30c8}, {0x30d0,0x30cf}, {0x30d1,0x30cf},
    {0x30d3,0x30d2}, {0x30d4,0x30d2}, {0x30d6,0x30d5}, {0x30d7,0x30d5}, {0x30d9,0x30d8}, {0x30da,0x30d8},
    {0x30dc,0x30db}, {0x30dd,0x30db}, {0x30f4,0x30a6}, {0x30f7,0x30ef}, {0x30f8,0x30f0}, {0x30f9,0x30f1},
    {0x30fa,0x30f2}, {0x30fe,0x30fd}, {0xf900,0x8c48}, {0xf901,0x66f4}, {0xf902,0x8eca}, {0xf903,0x8cc8},
    {0xf904,0x6ed1}, {0xf905,0x4e32}, {0xf906,0x53e5}, {0xf907,0x9f9c}, {0xf908,0x9f9c}, {0xf909,0x5951},
    {0xf90a,0x91d1}, {0xf90b,0x5587}, {0xf90c,0x5948}, {0xf90d,0x61f6}, {0xf90e,0x7669}, {0xf90f,0x7f85},
    {0xf910,0x863f}, {0xf911,0x87ba}, {0xf912,0x88f8}, {0xf913,0x908f}, {0xf914,0x6a02}, {0xf915,0x6d1b},
    {0xf916,0x70d9}, {0xf917,0x73de}, {0xf918,0x843d}, {0xf919,0x916a}, {0xf91a,0x99f1}, {0xf91b,0x4e82},
    {0xf91c,0x5375}, {0xf91d,0x6b04}, {0xf91e,0x721b}, {0xf91f,0x862d}, {0xf920,0x9e1e}, {0xf921,0x5d50},
    {0xf922,0x6feb}, {0xf923,0x85cd}, {0xf924,0x8964}, {0xf925,0x62c9}, {0xf926,0x81d8}, {0xf927,0x881f},
    {0xf928,0x5eca}, {0xf929,0x6717}, {0xf92a,0x6d6a}, {0xf92b,0x72fc}, {0xf92c,0x90ce}, {0xf92d,0x4f86},
    {0xf92e,0x51b7}, {0xf92f,0x52de}, {0xf930,0x64c4}, {0xf931,0x6ad3}, {0xf932,0x7210}, {0xf933,0x76e7},
    {0xf934,0x8001}, {0xf935,0x8606}, {0xf936,0x865c}, {0xf937,0x8def}, {0xf938,0x9732}, {0xf939,0x9b6f},
    {0xf93a,0x9dfa}, {0xf93b,0x788c}, {0xf93c,0x797f}, {0xf93d,0x7da0}, {0xf93e,0x83c9}, {0xf93f,0x9304},
    {0xf940,0x9e7f}, {0xf941,0x8ad6}, {0xf942,0x58df}, {0xf943,0x5f04}, {0xf944,0x7c60}, {0xf945,0x807e},
    {0xf946,0x7262}, {0xf947,0x78ca}, {0xf948,0x8cc2}, {0xf949,0x96f7}, {0xf94a,0x58d8}, {0xf94b,0x5c62},
    {0xf94c,0x6a13}, {0xf94d,0x6dda}, {0xf94e,0x6f0f}, {0xf94f,0x7d2f}, {0xf950,0x7e37}, {0xf951,0x964b},
    {0xf952,0x52d2}, {0xf953,0x808b}, {0xf954,0x51dc}, {0xf955,0x51cc}, {0xf956,0x7a1c}, {0xf957,0x7dbe},
    {0xf958,0x83f1}, {0xf959,0x9675}, {0xf95a,0x8b80}, {0xf95b,0x62cf}, {0xf95c,0x6a02}, {0xf95d,0x8afe},
    {0xf95e,0x4e39}, {0xf95f,0x5be7}, {0xf960,0x6012}, {0xf961,0x7387}, {0xf962,0x7570}, {0xf963,0x5317},
    {0xf964,0x78fb}, {0xf965,0x4fbf}, {0xf966,0x5fa9}, {0xf967,0x4e0d}, {0xf968,0x6ccc}, {0xf969,0x6578},
    {0xf96a,0x7d22}, {0xf96b,0x53c3}, {0xf96c,0x585e}, {0xf96d,0x7701}, {0xf96e,0x8449}, {0xf96f,0x8aaa},
    {0xf970,0x6bba}, {0xf971,0x8fb0}, {0xf972,0x6c88}, {0xf973,0x62fe}, {0xf974,0x82e5}, {0xf975,0x63a0},
    {0xf976,0x7565}, {0xf977,0x4eae}, {0xf978,0x5169}, {0xf979,0x51c9}, {0xf97a,0x6881}, {0xf97b,0x7ce7},
    {0xf97c,0x826f}, {0xf97d,0x8ad2}, {0xf97e,0x91cf}, {0xf97f,0x52f5}, {0xf980,0x5442}, {0xf981,0x5973},
    {0xf982,0x5eec}, {0xf983,0x65c5}, {0xf984,0x6ffe}, {0xf985,0x792a}, {0xf986,0x95ad}, {0xf987,0x9a6a},
    {0xf988,0x9e97}, {0xf989,0x9ece}, {0xf98a,0x529b}, {0xf98b,0x66c6}, {0xf98c,0x6b77}, {0xf98d,0x8f62},
    {0xf98e,0x5e74}, {0xf98f,0x6190}, {0xf990,0x6200}, {0xf991,0x649a}, {0xf992,0x6f23}, {0xf993,0x7149},
    {0xf994,0x7489}, {0xf995,0x79ca}, {0xf996,0x7df4}, {0xf997,0x806f}, {0xf998,0x8f26}, {0xf999,0x84ee},
    {0xf99a,0x9023}, {0xf99b,0x934a}, {0xf99c,0x5217}, {0xf99d,0x52a3}, {0xf99e,0x54bd}, {0xf99f,0x70c8},
    {0xf9a0,0x88c2}, {0xf9a1,0x8aaa}, {0xf9a2,0x5ec9}, {0xf9a3,0x5ff5}, {0xf9a4,0x637b}, {0xf9a5,0x6bae},
    {0xf9a6,0x7c3e}, {0xf9a7,0x7375}, {0xf9a8,0x4ee4}, {0xf9a9,0x56f9}, {0xf9aa,0x5be7}, {0xf9ab,0x5dba},
    {0xf9ac,0x601c}, {0xf9ad,0x73b2}, {0xf9ae,0x7469}, {0xf9af,0x7f9a}, {0xf9b0,0x8046}, {0xf9b1,0x9234},
    {0xf9b2,0x96f6}, {0xf9b3,0x9748}, {0xf9b4,0x9818}, {0xf9b5,0x4f8b}, {0xf9b6,0x79ae}, {0xf9b7,0x91b4},
    {0xf9b8,0x96b8}, {0xf9b9,0x60e1}, {0xf9ba,0x4e86}, {0xf9bb,0x50da}, {0xf9bc,0x5bee}, {0xf9bd,0x5c3f},
    {0xf9be,0x6599}, {0xf9bf,0x6a02}, {0xf9c0,0x71ce}, {0xf9c1,0x7642}, {0xf9c2,0x84fc}, {0xf9c3,0x907c},
    {0xf9c4,0x9f8d}, {0xf9c5,0x6688}, {0xf9c6,0x962e}, {0xf9c7,0x5289}, {0xf9c8,0x677b}, {0xf9c9,0x67f3},
    {0xf9ca,0x6d41}, {0xf9cb,0x6e9c}, {0xf9cc,0x7409}, {0xf9cd,0x7559}, {0xf9ce,0x786b}, {0xf9cf,0x7d10},
    {0xf9d0,0x985e}, {0xf9d1,0x516d}, {0xf9d2,0x622e}, {0xf9d3,0x9678}, {0xf9d4,0x502b}, {0xf9d5,0x5d19},
    {0xf9d6,0x6dea}, {0xf9d7,0x8f2a}, {0xf9d8,0x5f8b}, {0xf9d9,0x6144}, {0xf9da,0x6817}, {0xf9db,0x7387},
    {0xf9dc,0x9686}, {0xf9dd,0x5229}, {0xf9de,0x540f}, {0xf9df,0x5c65}, {0xf9e0,0x6613}, {0xf9e1,0x674e},
    {0xf9e2,0x68a8}, {0xf9e3,0x6ce5}, {0xf9e4,0x7406}, {0xf9e5,0x75e2}, {0xf9e6,0x7f79}, {0xf9e7,0x88cf},
    {0xf9e8,0x88e1}, {0xf9e9,0x91cc}, {0xf9ea,0x96e2}, {0xf9eb,0x533f}, {0xf9ec,0x6eba}, {0xf9ed,0x541d},
    {0xf9ee,0x71d0}, {0xf9ef,0x7498}, {0xf9f0,0x85fa}, {0xf9f1,0x96a3}, {0xf9f2,0x9c57}, {0xf9f3,0x9e9f},
    {0xf9f4,0x6797}, {0xf9f5,0x6dcb}, {0xf9f6,0x81e8}, {0xf9f7,0x7acb}, {0xf9f8,0x7b20}, {0xf9f9,0x7c92},
    {0xf9fa,0x72c0}, {0xf9fb,0x7099}, {0xf9fc,0x8b58}, {0xf9fd,0x4ec0}, {0xf9fe,0x8336}, {0xf9ff,0x523a},
    {0xfa00,0x5207}, {0xfa01,0x5ea6}, {0xfa02,0x62d3}, {0xfa03,0x7cd6}, {0xfa04,0x5b85}, {0xfa05,0x6d1e},
    {0xfa06,0x66b4}, {0xfa07,0x8f3b}, {0xfa08,0x884c}, {0xfa09,0x964d}, {0xfa0a,0x898b}, {0xfa0b,0x5ed3},
    {0xfa0c,0x5140}, {0xfa0d,0x55c0}, {0xfa10,0x585a}, {0xfa12,0x6674}, {0xfa15,0x51de}, {0xfa16,0x732a},
    {0xfa17,0x76ca}, {0xfa18,0x793c}, {0xfa19,0x795e}, {0xfa1a,0x7965}, {0xfa1b,0x798f}, {0xfa1c,0x9756},
    {0xfa1d,0x7cbe}, {0xfa1e,0x7fbd}, {0xfa20,0x8612}, {0xfa22,0x8af8}, {0xfa25,0x9038}, {0xfa26,0x90fd},
    {0xfa2a,0x98ef}, {0xfa2b,0x98fc}, {0xfa2c,0x9928}, {0xfa2d,0x9db4}, {0xfa2e,0x90de}, {0xfa2f,0x96b7},
    {0xfa30,0x4fae}, {0xfa31,0x50e7}, {0xfa32,0x514d}, {0xfa33,0x52c9}, {0xfa34,0x52e4}, {0xfa35,0x5351},
    {0xfa36,0x559d}, {0xfa37,0x5606}, {0xfa38,0x5668}, {0xfa39,0x5840}, {0xfa3a,0x58a8}, {0xfa3b,0x5c64},
    {0xfa3c,0x5c6e}, {0xfa3d,0x6094}, {0xfa3e,0x6168}, {0xfa3f,0x618e}, {0xfa40,0x61f2}, {0xfa41,0x654f},
    {0xfa42,0x65e2}, {0xfa43,0x6691}, {0xfa44,0x6885}, {0xfa45,0x6d77}, {0xfa46,0x6e1a}, {0xfa47,0x6f22},
    {0xfa48,0x716e}, {0xfa49,0x722b}, {0xfa4a,0x7422}, {0xfa4b,0x7891}, {0xfa4c,0x793e}, {0xfa4d,0x7949},
    {0xfa4e,0x7948}, {0xfa4f,0x7950}, {0xfa50,0x7956}, {0xfa51,0x795d}, {0xfa52,0x798d}, {0xfa53,0x798e},
    {0xfa54,0x7a40}, {0xfa55,0x7a81}, {0xfa56,0x7bc0}, {0xfa57,0x7df4}, {0xfa58,0x7e09}, {0xfa59,0x7e41},
    {0xfa5a,0x7f72}, {0xfa5b,0x8005}, {0xfa5c,0x81ed}, {0xfa5d,0x8279}, {0xfa5e,0x8279}, {0xfa5f,0x8457},
    {0xfa60,0x8910}, {0xfa61,0x8996}, {0xfa62,0x8b01}, {0xfa63,0x8b39}, {0xfa64,0x8cd3}, {0xfa65,0x8d08},
    {0xfa66,0x8fb6}, {0xfa67,0x9038}, {0xfa68,0x96e3}, {0xfa69,0x97ff}, {0xfa6a,0x983b}, {0xfa6b,0x6075},
    {0xfa6c,0x242ee}, {0xfa6d,0x8218}, {0xfa70,0x4e26}, {0xfa71,0x51b5}, {0xfa72,0x5168}, {0xfa73,0x4f80},
    {0xfa74,0x5145}, {0xfa75,0x5180}, {0xfa76,0x52c7}, {0xfa77,0x52fa}, {0xfa78,0x559d}, {0xfa79,0x5555},
    {0xfa7a,0x5599}, {0xfa7b,0x55e2}, {0xfa7c,0x585a}, {0xfa7d,0x58b3}, {0xfa7e,0x5944}, {0xfa7f,0x5954},
    {0xfa80,0x5a62}, {0xfa81,0x5b28}, {0xfa82,0x5ed2}, {0xfa83,0x5ed9}, {0xfa84,0x5f69}, {0xfa85,0x5fad},
    {0xfa86,0x60d8}, {0xfa87,0x614e}, {0xfa88,0x6108}, {0xfa89,0x618e}, {0xfa8a,0x6160}, {0xfa8b,0x61f2},
    {0xfa8c,0x6234}, {0xfa8d,0x63c4}, {0xfa8e,0x641c}, {0xfa8f,0x6452}, {0xfa90,0x6556}, {0xfa91,0x6674},
    {0xfa92,0x6717}, {0xfa93,0x671b}, {0xfa94,0x6756}, {0xfa95,0x6b79}, {0xfa96,0x6bba}, {0xfa97,0x6d41},
    {0xfa98,0x6edb}, {0xfa99,0x6ecb}, {0xfa9a,0x6f22}, {0xfa9b,0x701e}, {0xfa9c,0x716e}, {0xfa9d,0x77a7},
    {0xfa9e,0x7235}, {0xfa9f,0x72af}, {0xfaa0,0x732a}, {0xfaa1,0x7471}, {0xfaa2,0x7506}, {0xfaa3,0x753b},
    {0xfaa4,0x761d}, {0xfaa5,0x761f}, {0xfaa6,0x76ca}, {0xfaa7,0x76db}, {0xfaa8,0x76f4}, {0xfaa9,0x774a},
    {0xfaaa,0x7740}, {0xfaab,0x78cc}, {0xfaac,0x7ab1}, {0xfaad,0x7bc0}, {0xfaae,0x7c7b}, {0xfaaf,0x7d5b},
    {0xfab0,0x7df4}, {0xfab1,0x7f3e}, {0xfab2,0x8005}, {0xfab3,0x8352}, {0xfab4,0x83ef}, {0xfab5,0x8779},
    {0xfab6,0x8941}, {0xfab7,0x8986}, {0xfab8,0x8996}, {0xfab9,0x8abf}, {0xfaba,0x8af8}, {0xfabb,0x8acb},
    {0xfabc,0x8b01}, {0xfabd,0x8afe}, {0xfabe,0x8aed}, {0xfabf,0x8b39}, {0xfac0,0x8b8a}, {0xfac1,0x8d08},
    {0xfac2,0x8f38}, {0xfac3,0x9072}, {0xfac4,0x9199}, {0xfac5,0x9276}, {0xfac6,0x967c}, {0xfac7,0x96e3},
    {0xfac8,0x9756}, {0xfac9,0x97db}, {0xfaca,0x97ff}, {0xfacb,0x980b}, {0xfacc,0x983b}, {0xfacd,0x9b12},
    {0xface,0x9f9c}, {0xfacf,0x2284a}, {0xfad0,0x22844}, {0xfad1,0x233d5}, {0xfad2,0x3b9d}, {0xfad3,0x4018},
    {0xfad4,0x4039}, {0xfad5,0x25249}, {0xfad6,0x25cd0}, {0xfad7,0x27ed3}, {0xfad8,0x9f43}, {0xfad9,0x9f8e},
    {0xfb1d,0x5d9}, {0xfb1f,0x5f2}, {0xfb2a,0x5e9}, {0xfb2b,0x5e9}, {0xfb2c,0x5e9}, {0xfb2d,0x5e9},
    {0xfb2e,0x5d0}, {0xfb2f,0x5d0}, {0xfb30,0x5d0}, {0xfb31,0x5d1}, {0xfb32,0x5d2}, {0xfb33,0x5d3},
    {0xfb34,0x5d4}, {0xfb35,0x5d5}, {0xfb36,0x5d6}, {0xfb38,0x5d8}, {0xfb39,0x5d9}, {0xfb3a,0x5da},
    {0xfb3b,0x5db}, {0xfb3c,0x5dc}, {0xfb3e,0x5de}, {0xfb40,0x5e0}, {0xfb41,0x5e1}, {0xfb43,0x5e3},
    {0xfb44,0x5e4}, {0xfb46,0x5e6}, {0xfb47,0x5e7}, {0xfb48,0x5e8}, {0xfb49,0x5e9}, {0xfb4a,0x5ea},
    {0xfb4b,0x5d5}, {0xfb4c,0x5d1}, {0xfb4d,0x5db}, {0xfb4e,0x5e4}, {0x1109a,0x11099}, {0x1109c,0x1109b},
    {0x110ab,0x110a5}, {0x114bb,0x114b9}, {0x2f800,0x4e3d}, {0x2f801,0x4e38}, {0x2f802,0x4e41},
    {0x2f803,0x20122}, {0x2f804,0x4f60}, {0x2f805,0x4fae}, {0x2f806,0x4fbb}, {0x2f807,0x5002},
    {0x2f808,0x507a}, {0x2f809,0x5099}, {0x2f80a,0x50e7}, {0x2f80b,0x50cf}, {0x2f80c,0x349e},
    {0x2f80d,0x2063a}, {0x2f80e,0x514d}, {0x2f80f,0x5154}, {0x2f810,0x5164}, {0x2f811,0x5177},
    {0x2f812,0x2051c}, {0x2f813,0x34b9}, {0x2f814,0x5167}, {0x2f815,0x518d}, {0x2f816,0x2054b},
    {0x2f817,0x5197}, {0x2f818,0x51a4}, {0x2f819,0x4ecc}, {0x2f81a,0x51ac}, {0x2f81b,0x51b5},
    {0x2f81c,0x291df}, {0x2f81d,0x51f5}, {0x2f81e,0x5203}, {0x2f81f,0x34df}, {0x2f820,0x523b},
    {0x2f821,0x5246}, {0x2f822,0x5272}, {0x2f823,0x5277}, {0x2f824,0x3515}, {0x2f825,0x52c7},
    {0x2f826,0x52c9}, {0x2f827,0x52e4}, {0x2f828,0x52fa}, {0x2f829,0x5305}, {0x2f82a,0x5306},
    {0x2f82b,0x5317}, {0x2f82c,0x5349}, {0x2f82d,0x5351}, {0x2f82e,0x535a}, {0x2f82f,0x5373},
    {0x2f830,0x537d}, {0x2f831,0x537f}, {0x2f832,0x537f}, {0x2f833,0x537f}, {0x2f834,0x20a2c},
    {0x2f835,0x7070}, {0x2f836,0x53ca}, {0x2f837,0x53df}, {0x2f838,0x20b63}, {0x2f839,0x53eb},
    {0x2f83a,0x53f1}, {0x2f83b,0x5406}, {0x2f83c,0x549e}, {0x2f83d,0x5438}, {0x2f83e,0x5448},
    {0x2f83f,0x5468}, {0x2f840,0x54a2}, {0x2f841,0x54f6}, {0x2f842,0x5510}, {0x2f843,0x5553},
    {0x2f844,0x5563}, {0x2f845,0x5584}, {0x2f846,0x5584}, {0x2f847,0x5599}, {0x2f848,0x55ab},
    {0x2f849,0x55b3}, {0x2f84a,0x55c2}, {0x2f84b,0x5716}, {0x2f84c,0x5606}, {0x2f84d,0x5717},
    {0x2f84e,0x5651}, {0x2f84f,0x5674}, {0x2f850,0x5207}, {0x2f851,0x58ee}, {0x2f852,0x57ce},
    {0x2f853,0x57f4}, {0x2f854,0x580d}, {0x2f855,0x578b}, {0x2f856,0x5832}, {0x2f857,0x5831},
    {0x2f858,0x58ac}, {0x2f859,0x214e4}, {0x2f85a,0x58f2}, {0x2f85b,0x58f7}, {0x2f85c,0x5906},
    {0x2f85d,0x591a}, {0x2f85e,0x5922}, {0x2f85f,0x5962}, {0x2f860,0x216a8}, {0x2f861,0x216ea},
    {0x2f862,0x59ec}, {0x2f863,0x5a1b}, {0x2f864,0x5a27}, {0x2f865,0x59d8}, {0x2f866,0x5a66},
    {0x2f867,0x36ee}, {0x2f868,0x36fc}, {0x2f869,0x5b08}, {0x2f86a,0x5b3e}, {0x2f86b,0x5b3e},
    {0x2f86c,0x219c8}, {0x2f86d,0x5bc3}, {0x2f86e,0x5bd8}, {0x2f86f,0x5be7}, {0x2f870,0x5bf3},
    {0x2f871,0x21b18}, {0x2f872,0x5bff}, {0x2f873,0x5c06}, {0x2f874,0x5f53}, {0x2f875,0x5c22},
    {0x2f876,0x3781}, {0x2f877,0x5c60}, {0x2f878,0x5c6e}, {0x2f879,0x5cc0}, {0x2f87a,0x5c8d},
    {0x2f87b,0x21de4}, {0x2f87c,0x5d43}, {0x2f87d,0x21de6}, {0x2f87e,0x5d6e}, {0x2f87f,0x5d6b},
    {0x2f880,0x5d7c}, {0x2f881,0x5de1}, {0x2f882,0x5de2}, {0x2f883,0x382f}, {0x2f884,0x5dfd},
    {0x2f885,0x5e28}, {0x2f886,0x5e3d}, {0x2f887,0x5e69}, {0x2f888,0x3862}, {0x2f889,0x22183},
    {0x2f88a,0x387c}, {0x2f88b,0x5eb0}, {0x2f88c,0x5eb3}, {0x2f88d,0x5eb6}, {0x2f88e,0x5eca},
    {0x2f88f,0x2a392}, {0x2f890,0x5efe}, {0x2f891,0x22331}, {0x2f892,0x22331}, {0x2f893,0x8201},
    {0x2f894,0x5f22}, {0x2f895,0x5f22}, {0x2f896,0x38c7}, {0x2f897,0x232b8}, {0x2f898,0x261da},
    {0x2f899,0x5f62}, {0x2f89a,0x5f6b}, {0x2f89b,0x38e3}, {0x2f89c,0x5f9a}, {0x2f89d,0x5fcd},
    {0x2f89e,0x5fd7}, {0x2f89f,0x5ff9}, {0x2f8a0,0x6081}, {0x2f8a1,0x393a}, {0x2f8a2,0x391c},
    {0x2f8a3,0x6094}, {0x2f8a4,0x226d4}, {0x2f8a5,0x60c7}, {0x2f8a6,0x6148}, {0x2f8a7,0x614c},
    {0x2f8a8,0x614e}, {0x2f8a9,0x614c}, {0x2f8aa,0x617a}, {0x2f8ab,0x618e}, {0x2f8ac,0x61b2},
    {0x2f8ad,0x61a4}, {0x2f8ae,0x61af}, {0x2f8af,0x61de}, {0x2f8b0,0x61f2}, {0x2f8b1,0x61f6},
    {0x2f8b2,0x6210}, {0x2f8b3,0x621b}, {0x2f8b4,0x625d}, {0x2f8b5,0x62b1}, {0x2f8b6,0x62d4},
    {0x2f8b7,0x6350}, {0x2f8b8,0x22b0c}, {0x2f8b9,0x633d}, {0x2f8ba,0x62fc}, {0x2f8bb,0x6368},
    {0x2f8bc,0x6383}, {0x2f8bd,0x63e4}, {0x2f8be,0x22bf1}, {0x2f8bf,0x6422}, {0x2f8c0,0x63c5},
    {0x2f8c1,0x63a9}, {0x2f8c2,0x3a2e}, {0x2f8c3,0x6469}, {0x2f8c4,0x647e}, {0x2f8c5,0x649d},
    {0x2f8c6,0x6477}, {0x2f8c7,0x3a6c}, {0x2f8c8,0x654f}, {0x2f8c9,0x656c}, {0x2f8ca,0x2300a},
    {0x2f8cb,0x65e3}, {0x2f8cc,0x66f8}, {0x2f8cd,0x6649}, {0x2f8ce,0x3b19}, {0x2f8cf,0x6691},
    {0x2f8d0,0x3b08}, {0x2f8d1,0x3ae4}, {0x2f8d2,0x5192}, {0x2f8d3,0x5195}, {0x2f8d4,0x6700},
    {0x2f8d5,0x669c}, {0x2f8d6,0x80ad}, {0x2f8d7,0x43d9}, {0x2f8d8,0x6717}, {0x2f8d9,0x671b},
    {0x2f8da,0x6721}, {0x2f8db,0x675e}, {0x2f8dc,0x6753}, {0x2f8dd,0x233c3}, {0x2f8de,0x3b49},
    {0x2f8df,0x67fa}, {0x2f8e0,0x6785}, {0x2f8e1,0x6852}, {0x2f8e2,0x6885}, {0x2f8e3,0x2346d},
    {0x2f8e4,0x688e}, {0x2f8e5,0x681f}, {0x2f8e6,0x6914}, {0x2f8e7,0x3b9d}, {0x2f8e8,0x6942},
    {0x2f8e9,0x69a3}, {0x2f8ea,0x69ea}, {0x2f8eb,0x6aa8}, {0x2f8ec,0x236a3}, {0x2f8ed,0x6adb},
    {0x2f8ee,0x3c18}, {0x2f8ef,0x6b21}, {0x2f8f0,0x238a7}, {0x2f8f1,0x6b54}, {0x2f8f2,0x3c4e},
    {0x2f8f3,0x6b72}, {0x2f8f4,0x6b9f}, {0x2f8f5,0x6bba}, {0x2f8f6,0x6bbb}, {0x2f8f7,0x23a8d},
    {0x2f8f8,0x21d0b}, {0x2f8f9,0x23afa}, {0x2f8fa,0x6c4e}, {0x2f8fb,0x23cbc}, {0x2f8fc,0x6cbf},
    {0x2f8fd,0x6ccd}, {0x2f8fe,0x6c67}, {0x2f8ff,0x6d16}, {0x2f900,0x6d3e}, {0x2f901,0x6d77},
    {0x2f902,0x6d41}, {0x2f903,0x6d69}, {0x2f904,0x6d78}, {0x2f905,0x6d85}, {0x2f906,0x23d1e},
    {0x2f907,0x6d34}, {0x2f908,0x6e2f}, {0x2f909,0x6e6e}, {0x2f90a,0x3d33}, {0x2f90b,0x6ecb},
    {0x2f90c,0x6ec7}, {0x2f90d,0x23ed1}, {0x2f90e,0x6df9}, {0x2f90f,0x6f6e}, {0x2f910,0x23f5e},
    {0x2f911,0x23f8e}, {0x2f912,0x6fc6}, {0x2f913,0x7039}, {0x2f914,0x701e}, {0x2f915,0x701b},
    {0x2f916,0x3d96}, {0x2f917,0x704a}, {0x2f918,0x707d}, {0x2f919,0x7077}, {0x2f91a,0x70ad},
    {0x2f91b,0x20525}, {0x2f91c,0x7145}, {0x2f91d,0x24263}, {0x2f91e,0x719c}, {0x2f91f,0x243ab},
    {0x2f920,0x7228}, {0x2f921,0x7235}, {0x2f922,0x7250}, {0x2f923,0x24608}, {0x2f924,0x7280},
    {0x2f925,0x7295}, {0x2f926,0x24735}, {0x2f927,0x24814}, {0x2f928,0x737a}, {0x2f929,0x738b},
    {0x2f92a,0x3eac}, {0x2f92b,0x73a5}, {0x2f92c,0x3eb8}, {0x2f92d,0x3eb8}, {0x2f92e,0x7447},
    {0x2f92f,0x745c}, {0x2f930,0x7471}, {0x2f931,0x7485}, {0x2f932,0x74ca}, {0x2f933,0x3f1b},
    {0x2f934,0x7524}, {0x2f935,0x24c36}, {0x2f936,0x753e}, {0x2f937,0x24c92}, {0x2f938,0x7570},
    {0x2f939,0x2219f}, {0x2f93a,0x7610}, {0x2f93b,0x24fa1}, {0x2f93c,0x24fb8}, {0x2f93d,0x25044},
    {0x2f93e,0x3ffc}, {0x2f93f,0x4008}, {0x2f940,0x76f4}, {0x2f941,0x250f3}, {0x2f942,0x250f2},
    {0x2f943,0x25119}, {0x2f944,0x25133}, {0x2f945,0x771e}, {0x2f946,0x771f}, {0x2f947,0x771f},
    {0x2f948,0x774a}, {0x2f949,0x4039}, {0x2f94a,0x778b}, {0x2f94b,0x4046}, {0x2f94c,0x4096},
    {0x2f94d,0x2541d}, {0x2f94e,0x784e}, {0x2f94f,0x788c}, {0x2f950,0x78cc}, {0x2f951,0x40e3},
    {0x2f952,0x25626}, {0x2f953,0x7956}, {0x2f954,0x2569a}, {0x2f955,0x256c5}, {0x2f956,0x798f},
    {0x2f957,0x79eb}, {0x2f958,0x412f}, {0x2f959,0x7a40}, {0x2f95a,0x7a4a}, {0x2f95b,0x7a4f},
    {0x2f95c,0x2597c}, {0x2f95d,0x25aa7}, {0x2f95e,0x25aa7}, {0x2f95f,0x7aee}, {0x2f960,0x4202},
    {0x2f961,0x25bab}, {0x2f962,0x7bc6}, {0x2f963,0x7bc9}, {0x2f964,0x4227}, {0x2f965,0x25c80},
    {0x2f966,0x7cd2}, {0x2f967,0x42a0}, {0x2f968,0x7ce8}, {0x2f969,0x7ce3}, {0x2f96a,0x7d00},
    {0x2f96b,0x25f86}, {0x2f96c,0x7d63}, {0x2f96d,0x4301}, {0x2f96e,0x7dc7}, {0x2f96f,0x7e02},
    {0x2f970,0x7e45}, {0x2f971,0x4334}, {0x2f972,0x26228}, {0x2f973,0x26247}, {0x2f974,0x4359},
    {0x2f975,0x262d9}, {0x2f976,0x7f7a}, {0x2f977,0x2633e}, {0x2f978,0x7f95}, {0x2f979,0x7ffa},
    {0x2f97a,0x8005}, {0x2f97b,0x264da}, {0x2f97c,0x26523}, {0x2f97d,0x8060}, {0x2f97e,0x265a8},
    {0x2f97f,0x8070}, {0x2f980,0x2335f}, {0x2f981,0x43d5}, {0x2f982,0x80b2}, {0x2f983,0x8103},
    {0x2f984,0x440b}, {0x2f985,0x813e}, {0x2f986,0x5ab5}, {0x2f987,0x267a7}, {0x2f988,0x267b5},
    {0x2f989,0x23393}, {0x2f98a,0x2339c}, {0x2f98b,0x8201}, {0x2f98c,0x8204}, {0x2f98d,0x8f9e},
    {0x2f98e,0x446b}, {0x2f98f,0x8291}, {0x2f990,0x828b}, {0x2f991,0x829d}, {0x2f992,0x52b3},
    {0x2f993,0x82b1}, {0x2f994,0x82b3}, {0x2f995,0x82bd}, {0x2f996,0x82e6}, {0x2f997,0x26b3c},
    {0x2f998,0x82e5}, {0x2f999,0x831d}, {0x2f99a,0x8363}, {0x2f99b,0x83ad}, {0x2f99c,0x8323},
    {0x2f99d,0x83bd}, {0x2f99e,0x83e7}, {0x2f99f,0x8457}, {0x2f9a0,0x8353}, {0x2f9a1,0x83ca},
    {0x2f9a2,0x83cc}, {0x2f9a3,0x83dc}, {0x2f9a4,0x26c36}, {0x2f9a5,0x26d6b}, {0x2f9a6,0x26cd5},
    {0x2f9a7,0x452b}, {0x2f9a8,0x84f1}, {0x2f9a9,0x84f3}, {0x2f9aa,0x8516}, {0x2f9ab,0x273ca},
    {0x2f9ac,0x8564}, {0x2f9ad,0x26f2c}, {0x2f9ae,0x455d}, {0x2f9af,0x4561}, {0x2f9b0,0x26fb1},
    {0x2f9b1,0x270d2}, {0x2f9b2,0x456b}, {0x2f9b3,0x8650}, {0x2f9b4,0x865c}, {0x2f9b5,0x8667},
    {0x2f9b6,0x8669}, {0x2f9b7,0x86a9}, {0x2f9b8,0x8688}, {0x2f9b9,0x870e}, {0x2f9ba,0x86e2},
    {0x2f9bb,0x8779}, {0x2f9bc,0x8728}, {0x2f9bd,0x876b}, {0x2f9be,0x8786}, {0x2f9bf,0x45d7},
    {0x2f9c0,0x87e1}, {0x2f9c1,0x8801}, {0x2f9c2,0x45f9}, {0x2f9c3,0x8860}, {0x2f9c4,0x8863},
    {0x2f9c5,0x27667}, {0x2f9c6,0x88d7}, {0x2f9c7,0x88de}, {0x2f9c8,0x4635}, {0x2f9c9,0x88fa},
    {0x2f9ca,0x34bb}, {0x2f9cb,0x278ae}, {0x2f9cc,0x27966}, {0x2f9cd,0x46be}, {0x2f9ce,0x46c7},
    {0x2f9cf,0x8aa0}, {0x2f9d0,0x8aed}, {0x2f9d1,0x8b8a}, {0x2f9d2,0x8c55}, {0x2f9d3,0x27ca8},
    {0x2f9d4,0x8cab}, {0x2f9d5,0x8cc1}, {0x2f9d6,0x8d1b}, {0x2f9d7,0x8d77}, {0x2f9d8,0x27f2f},
    {0x2f9d9,0x20804}, {0x2f9da,0x8dcb}, {0x2f9db,0x8dbc}, {0x2f9dc,0x8df0}, {0x2f9dd,0x208de},
    {0x2f9de,0x8ed4}, {0x2f9df,0x8f38}, {0x2f9e0,0x285d2}, {0x2f9e1,0x285ed}, {0x2f9e2,0x9094},
    {0x2f9e3,0x90f1}, {0x2f9e4,0x9111}, {0x2f9e5,0x2872e}, {0x2f9e6,0x911b}, {0x2f9e7,0x9238},
    {0x2f9e8,0x92d7}, {0x2f9e9,0x92d8}, {0x2f9ea,0x927c}, {0x2f9eb,0x93f9}, {0x2f9ec,0x9415},
    {0x2f9ed,0x28bfa}, {0x2f9ee,0x958b}, {0x2f9ef,0x4995}, {0x2f9f0,0x95b7}, {0x2f9f1,0x28d77},
    {0x2f9f2,0x49e6}, {0x2f9f3,0x96c3}, {0x2f9f4,0x5db2}, {0x2f9f5,0x9723}, {0x2f9f6,0x29145},
    {0x2f9f7,0x2921a}, {0x2f9f8,0x4a6e}, {0x2f9f9,0x4a76}, {0x2f9fa,0x97e0}, {0x2f9fb,0x2940a},
    {0x2f9fc,0x4ab2}, {0x2f9fd,0x29496}, {0x2f9fe,0x980b}, {0x2f9ff,0x980b}, {0x2fa00,0x9829},
    {0x2fa01,0x295b6}, {0x2fa02,0x98e2}, {0x2fa03,0x4b33}, {0x2fa04,0x9929}, {0x2fa05,0x99a7},
    {0x2fa06,0x99c2}, {0x2fa07,0x99fe}, {0x2fa08,0x4bce}, {0x2fa09,0x29b30}, {0x2fa0a,0x9b12},
    {0x2fa0b,0x9c40}, {0x2fa0c,0x9cfd}, {0x2fa0d,0x4cce}, {0x2fa0e,0x4ced}, {0x2fa0f,0x9d67},
    {0x2fa10,0x2a0ce}, {0x2fa11,0x4cf8}, {0x2fa12,0x2a105}, {0x2fa13,0x2a20e}, {0x2fa14,0x2a291},
    {0x2fa15,0x9ebb}, {0x2fa16,0x4d56}, {0x2fa17,0x9ef9}, {0x2fa18,0x9efe}, {0x2fa19,0x9f05},
    {0x2fa1a,0x9f0f}, {0x2fa1b,0x9f16}, {0x2fa1c,0x9f3b}, {0x2fa1d,0x2a600},
};
static const uint32_t attn__uc_decomp3[][4] = {
    {0x9cb,0x9c7,0x9be,0}, {0x9cc,0x9c7,0x9d7,0}, {0xb4b,0xb47,0xb3e,0}, {0xb4c,0xb47,0xb57,0},
    {0xb94,0xb92,0xbd7,0}, {0xbca,0xbc6,0xbbe,0}, {0xbcb,0xbc7,0xbbe,0}, {0xbcc,0xbc6,0xbd7,0},
    {0xccb,0xcc2,0xcd5,0}, {0xd4a,0xd46,0xd3e,0}, {0xd4b,0xd47,0xd3e,0}, {0xd4c,0xd46,0xd57,0},
    {0xddc,0xdd9,0xdcf,0}, {0xddd,0xdd9,0xdcf,0}, {0xdde,0xdd9,0xddf,0}, {0x1b06,0x1b05,0x1b35,0},
    {0x1b08,0x1b07,0x1b35,0}, {0x1b0a,0x1b09,0x1b35,0}, {0x1b0c,0x1b0b,0x1b35,0}, {0x1b0e,0x1b0d,0x1b35,0},
    {0x1b12,0x1b11,0x1b35,0}, {0x1b40,0x1b3e,0x1b35,0}, {0x1b41,0x1b3f,0x1b35,0}, {0x1134b,0x11347,0x1133e,0},
    {0x1134c,0x11347,0x11357,0}, {0x114bc,0x114b9,0x114b0,0}, {0x114be,0x114b9,0x114bd,0},
    {0x115ba,0x115b8,0x115af,0}, {0x115bb,0x115b9,0x115af,0}, {0x11938,0x11935,0x11930,0},
    {0x1d15e,0x1d157,0x1d165,0}, {0x1d15f,0x1d158,0x1d165,0}, {0x1d160,0x1d158,0x1d165,0x1d16e},
    {0x1d161,0x1d158,0x1d165,0x1d16f}, {0x1d162,0x1d158,0x1d165,0x1d170}, {0x1d163,0x1d158,0x1d165,0x1d171},
    {0x1d164,0x1d158,0x1d165,0x1d172}, {0x1d1bb,0x1d1b9,0x1d165,0}, {0x1d1bc,0x1d1ba,0x1d165,0},
    {0x1d1bd,0x1d1b9,0x1d165,0x1d16e}, {0x1d1be,0x1d1ba,0x1d165,0x1d16e}, {0x1d1bf,0x1d1b9,0x1d165,0x1d16f},
    {0x1d1c0,0x1d1ba,0x1d165,0x1d16f},
};
static const int32_t attn__uc_lower[][4] = {
    {0x41,26,1,32}, {0xc0,23,1,32}, {0xd8,7,1,32}, {0x100,24,2,1}, {0x130,1,2,-199}, {0x132,3,2,1},
    {0x139,8,2,1}, {0x14a,23,2,1}, {0x178,1,2,-121}, {0x179,3,2,1}, {0x181,1,2,210}, {0x182,2,2,1},
    {0x186,1,2,206}, {0x187,1,2,1}, {0x189,2,1,205}, {0x18b,1,2,1}, {0x18e,1,2,79}, {0x18f,1,2,202},
    {0x190,1,2,203}, {0x191,1,2,1}, {0x193,1,2,205}, {0x194,1,2,207}, {0x196,1,2,211}, {0x197,1,2,209},
    {0x198,1,2,1}, {0x19c,1,2,211}, {0x19d,1,2,213}, {0x19f,1,2,214}, {0x1a0,3,2,1}, {0x1a6,1,2,218},
    {0x1a7,1,2,1}, {0x1a9,1,2,218}, {0x1ac,1,2,1}, {0x1ae,1,2,218}, {0x1af,1,2,1}, {0x1b1,2,1,217},
    {0x1b3,2,2,1}, {0x1b7,1,2,219}, {0x1b8,1,2,1}, {0x1bc,1,2,1}, {0x1c4,1,2,2}, {0x1c5,1,2,1}, {0x1c7,1,2,2},
    {0x1c8,1,2,1}, {0x1ca,1,2,2}, {0x1cb,9,2,1}, {0x1de,9,2,1}, {0x1f1,1,2,2}, {0x1f2,2,2,1}, {0x1f6,1,2,-97},
    {0x1f7,1,2,-56}, {0x1f8,20,2,1}, {0x220,1,2,-130}, {0x222,9,2,1}, {0x23a,1,2,10795}, {0x23b,1,2,1},
    {0x23d,1,2,-163}, {0x23e,1,2,10792}, {0x241,1,2,1}, {0x243,1,2,-195}, {0x244,1,2,69}, {0x245,1,2,71},
    {0x246,5,2,1}, {0x370,2,2,1}, {0x376,1,2,1}, {0x37f,1,2,116}, {0x386,1,2,38}, {0x388,3,1,37},
    {0x38c,1,2,64}, {0x38e,2,1,63}, {0x391,17,1,32}, {0x3a3,9,1,32}, {0x3cf,1,2,8}, {0x3d8,12,2,1},
    {0x3f4,1,2,-60}, {0x3f7,1,2,1}, {0x3f9,1,2,-7}, {0x3fa,1,2,1}, {0x3fd,3,1,-130}, {0x400,16,1,80},
    {0x410,32,1,32}, {0x460,17,2,1}, {0x48a,27,2,1}, {0x4c0,1,2,15}, {0x4c1,7,2,1}, {0x4d0,48,2,1},
    {0x531,38,1,48}, {0x10a0,38,1,7264}, {0x10c7,1,2,7264}, {0x10cd,1,2,7264}, {0x13a0,80,1,38864},
    {0x13f0,6,1,8}, {0x1c90,43,1,-3008}, {0x1cbd,3,1,-3008}, {0x1e00,75,2,1}, {0x1e9e,1,2,-7615},
    {0x1ea0,48,2,1}, {0x1f08,8,1,-8}, {0x1f18,6,1,-8}, {0x1f28,8,1,-8}, {0x1f38,8,1,-8}, {0x1f48,6,1,-8},
    {0x1f59,4,2,-8}, {0x1f68,8,1,-8}, {0x1f88,8,1,-8}, {0x1f98,8,1,-8}, {0x1fa8,8,1,-8}, {0x1fb8,2,1,-8},
    {0x1fba,2,1,-74}, {0x1fbc,1,2,-9}, {0x1fc8,4,1,-86}, {0x1fcc,1,2,-9}, {0x1fd8,2,1,-8}, {0x1fda,2,1,-100},
    {0x1fe8,2,1,-8}, {0x1fea,2,1,-112}, {0x1fec,1,2,-7}, {0x1ff8,2,1,-128}, {0x1ffa,2,1,-126},
    {0x1ffc,1,2,-9}, {0x2126,1,2,-7517}, {0x212a,1,2,-8383}, {0x212b,1,2,-8262}, {0x2132,1,2,28},
    {0x2160,16,1,16}, {0x2183,1,2,1}, {0x24b6,26,1,26}, {0x2c00,48,1,48}, {0x2c60,1,2,1}, {0x2c62,1,2,-10743},
    {0x2c63,1,2,-3814}, {0x2c64,1,2,-10727}, {0x2c67,3,2,1}, {0x2c6d,1,2,-10780}, {0x2c6e,1,2,-10749},
    {0x2c6f,1,2,-10783}, {0x2c70,1,2,-10782}, {0x2c72,1,2,1}, {0x2c75,1,2,1}, {0x2c7e,2,1,-10815},
    {0x2c80,50,2,1}, {0x2ceb,2,2,1}, {0x2cf2,1,2,1}, {0xa640,23,2,1}, {0xa680,14,2,1}, {0xa722,7,2,1},
    {0xa732,31,2,1}, {0xa779,2,2,1}, {0xa77d,1,2,-35332}, {0xa77e,5,2,1}, {0xa78b,1,2,1}, {0xa78d,1,2,-42280},
    {0xa790,2,2,1}, {0xa796,10,2,1}, {0xa7aa,1,2,-42308}, {0xa7ab,1,2,-42319}, {0xa7ac,1,2,-42315},
    {0xa7ad,1,2,-42305}, {0xa7ae,1,2,-42308}, {0xa7b0,1,2,-42258}, {0xa7b1,1,2,-42282}, {0xa7b2,1,2,-42261},
    {0xa7b3,1,2,928}, {0xa7b4,8,2,1}, {0xa7c4,1,2,-48}, {0xa7c5,1,2,-42307}, {0xa7c6,1,2,-35384},
    {0xa7c7,2,2,1}, {0xa7d0,1,2,1}, {0xa7d6,2,2,1}, {0xa7f5,1,2,1}, {0xff21,26,1,32}, {0x10400,40,1,40},
    {0x104b0,36,1,40}, {0x10570,19,2,39}, {0x10571,5,2,39}, {0x1057d,7,2,39}, {0x1058d,3,2,39},
    {0x10595,1,2,39}, {0x10c80,51,1,64}, {0x118a0,32,1,32}, {0x16e40,32,1,32}, {0x1e900,34,1,34},
};
/* ---- end: tables written by tools/gen_unicode.py ---- */

enum { ATTN__UC_OTHER, ATTN__UC_DROP, ATTN__UC_SPACE, ATTN__UC_PUNCT, ATTN__UC_MN, ATTN__UC_CJK };

/* The class of code point c (attn__uc_class: the last run starting at or before c). */
static int attn__uc_class_of(uint32_t c)
{
    size_t lo = 0, hi = ATTN__COUNT(attn__uc_class);
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (attn__uc_class[mid] >> 3 <= c) lo = mid;
        else hi = mid;
    }
    return (int)(attn__uc_class[lo] & 7);
}

static uint32_t attn__uc_lower_of(uint32_t c)
{
    size_t i;
    if (c < 128) return c >= 'A' && c <= 'Z' ? c + 32 : c;
    for (i = 0; i < ATTN__COUNT(attn__uc_lower) && (uint32_t)attn__uc_lower[i][0] <= c; i++) {
        uint32_t off = c - (uint32_t)attn__uc_lower[i][0], step = (uint32_t)attn__uc_lower[i][2];
        if (off % step == 0 && off / step < (uint32_t)attn__uc_lower[i][1])
            return c + (uint32_t)attn__uc_lower[i][3];
    }
    return c;
}

/* Code point c as an uncased vocabulary reads it: NFD without its non-spacing marks, lower-cased,
   into out [3]; returns how many (0 for a mark). */
static int attn__uc_fold(uint32_t c, uint32_t *out)
{
    size_t lo = 0, hi = ATTN__COUNT(attn__uc_decomp1), i3 = ATTN__COUNT(attn__uc_decomp3);
    int n = 1, i;
    out[0] = c;
    if (c >= 0xAC00 && c <= 0xD7A3) { /* a Hangul syllable: leading, vowel and trailing jamo */
        uint32_t s = c - 0xAC00;
        out[0] = 0x1100 + s / 588, out[1] = 0x1161 + s % 588 / 28, out[2] = 0x11A7 + s % 28;
        n = s % 28 ? 3 : 2;
    } else if (attn__uc_class_of(c) == ATTN__UC_MN) {
        return 0;
    } else if (c >= 128) {
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (attn__uc_decomp1[mid][0] < c) lo = mid + 1;
            else hi = mid;
        }
        if (lo < ATTN__COUNT(attn__uc_decomp1) && attn__uc_decomp1[lo][0] == c)
            out[0] = attn__uc_decomp1[lo][1];
        else /* the few of two or three characters */
            for (i3 = 0; i3 < ATTN__COUNT(attn__uc_decomp3) && attn__uc_decomp3[i3][0] != c; i3++) continue;
        if (i3 < ATTN__COUNT(attn__uc_decomp3))
            for (n = 0; n < 3 && attn__uc_decomp3[i3][n + 1]; n++) out[n] = attn__uc_decomp3[i3][n + 1];
    }
    for (i = 0; i < n; i++) out[i] = attn__uc_lower_of(out[i]);
    return n;
}

/* One code point from s [n] (n >= 1) into *c; returns its bytes. Anything but a shortest-form UTF-8
   sequence of a scalar value is one byte read as U+FFFD. */
static size_t attn__utf8_next(const unsigned char *s, size_t n, uint32_t *c)
{
    size_t len = s[0] < 0x80 ? 1 : s[0] >= 0xC2 && s[0] < 0xE0 ? 2 : s[0] >= 0xE0 && s[0] < 0xF0 ? 3
                 : s[0] >= 0xF0 && s[0] < 0xF5 ? 4 : 0, i;
    uint32_t v = len == 1 ? s[0] : len ? s[0] & (0x7F >> len) : 0;
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
    *c = 0xFFFD;
    if (!len || len > n) return 1;
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 1;
        v = v << 6 | (s[i] & 0x3F);
    }
    if (v < least[len] || v > 0x10FFFF || (v >= 0xD800 && v < 0xE000)) return 1;
    *c = v;
    return len;
}

static int attn__utf8_put(unsigned char *s, uint32_t c)
{
    if (c < 0x80) return s[0] = (unsigned char)c, 1;
    if (c < 0x800) return s[0] = (unsigned char)(0xC0 | c >> 6), s[1] = (unsigned char)(0x80 | (c & 63)), 2;
    if (c < 0x10000) {
        s[0] = (unsigned char)(0xE0 | c >> 12), s[1] = (unsigned char)(0x80 | (c >> 6 & 63));
        return s[2] = (unsigned char)(0x80 | (c & 63)), 3;
    }
    s[0] = (unsigned char)(0xF0 | c >> 18), s[1] = (unsigned char)(0x80 | (c >> 12 & 63));
    s[2] = (unsigned char)(0x80 | (c >> 6 & 63)), s[3] = (unsigned char)(0x80 | (c & 63));
    return 4;
}

/* FNV-1a over prefix [np] then s [n]. */
static uint32_t attn__wp_hash(const char *prefix, size_t np, const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    size_t i;
    for (i = 0; i < np + n; i++) h = (h ^ (unsigned char)(i < np ? prefix[i] : s[i - np])) * 16777619u;
    return h;
}

/* The id of prefix [np] followed by s [n], or -1. */
static int attn__wp_find(const attn_wordpiece *w, const char *prefix, size_t np, const char *s, size_t n)
{
    uint32_t k = attn__wp_hash(prefix, np, s, n) & (uint32_t)(w->nslot - 1);
    for (; w->slot[k] >= 0; k = (k + 1) & (uint32_t)(w->nslot - 1)) {
        const char *t = w->text + w->start[w->slot[k]];
        if (!strncmp(t, prefix, np) && !strncmp(t + np, s, n) && !t[np + n]) return w->slot[k];
    }
    return -1;
}

ATTNDEF attn_status attn_wordpiece_parse(attn_wordpiece *w, const char *vocab, size_t bytes, int lowercase)
{
    attn_wordpiece v;
    size_t i, line = 0, len;
    ATTN__NEED(w);
    ATTN__NEED(vocab);
    memset(&v, 0, sizeof v);
    for (i = 0; i < bytes; i += len + 1, line++) { /* check every line, count them */
        const char *e = (const char *)memchr(vocab + i, '\n', bytes - i);
        size_t at;
        uint32_t c;
        size_t step;
        len = (e ? (size_t)(e - vocab) : bytes) - i;
        if (len > 1024 || line >= 1u << 24)
            return attn__fail(ATTN_ERR_FORMAT, "attn_wordpiece_parse: %s at line %lu",
                              len > 1024 ? "a token longer than 1024 bytes" : "more than 2^24 tokens",
                              (unsigned long)line + 1);
        for (at = 0; at < len; at += step) /* a one-byte step past a byte >= 0x80: not UTF-8 */
            if ((step = attn__utf8_next((const unsigned char *)vocab + i + at, len - at, &c)) == 1 &&
                (unsigned char)vocab[i + at] >= 0x80)
                return attn__fail(ATTN_ERR_FORMAT, "attn_wordpiece_parse: line %lu is not UTF-8",
                                  (unsigned long)line + 1);
    }
    v.count = (int)line;
    for (v.nslot = 16; v.nslot < 2 * v.count; v.nslot *= 2) continue;
    v.text = (char *)ATTN_MALLOC(bytes + 1);
    v.start = (int *)ATTN_MALLOC(sizeof(int) * (size_t)(v.count + 1));
    v.slot = (int *)ATTN_MALLOC(sizeof(int) * (size_t)v.nslot);
    if (!v.text || !v.start || !v.slot) {
        attn_wordpiece_free(&v);
        return attn__fail(ATTN_ERR_NOMEM, "attn_wordpiece_parse: no memory for %d tokens", v.count);
    }
    memcpy(v.text, vocab, bytes);
    v.text[bytes] = 0;
    memset(v.slot, -1, sizeof(int) * (size_t)v.nslot);
    for (i = 0, line = 0; line < (size_t)v.count; i += len + 1, line++) {
        char *t = v.text + i, *e = (char *)memchr(t, '\n', bytes - i);
        uint32_t k;
        len = (e ? (size_t)(e - t) : bytes - i);
        t[len] = 0;
        if (len && t[len - 1] == '\r') t[len - 1] = 0;
        v.start[line] = (int)i;
        k = attn__wp_hash("", 0, t, strlen(t)) & (uint32_t)(v.nslot - 1);
        while (v.slot[k] >= 0 && strcmp(v.text + v.start[v.slot[k]], t)) 
            k = (k + 1) & (uint32_t)(v.nslot - 1);
        v.slot[k] = (int)line;
    }
    v.lowercase = lowercase != 0;
    v.max_len = 512;
    v.unk = attn_wordpiece_id(&v, "[UNK]", 5), v.cls = attn_wordpiece_id(&v, "[CLS]", 5);
    v.sep = attn_wordpiece_id(&v, "[SEP]", 5), v.pad = attn_wordpiece_id(&v, "[PAD]", 5);
    v.mask = attn_wordpiece_id(&v, "[MASK]", 6);
    if (v.unk < 0 || v.cls < 0 || v.sep < 0) {
        attn_wordpiece_free(&v);
        return attn__fail(ATTN_ERR_FORMAT, "attn_wordpiece_parse: the vocabulary has no %s token",
                          v.unk < 0 ? "[UNK]" : v.cls < 0 ? "[CLS]" : "[SEP]");
    }
    *w = v;
    return ATTN_OK;
}

ATTNDEF void attn_wordpiece_free(attn_wordpiece *w)
{
    if (!w) return;
    ATTN_FREE(w->text); ATTN_FREE(w->start); ATTN_FREE(w->slot);
    memset(w, 0, sizeof *w);
}

ATTNDEF int attn_wordpiece_id(const attn_wordpiece *w, const char *s, size_t n)
{
    return w && s && w->slot ? attn__wp_find(w, "", 0, s, n) : -1;
}

ATTNDEF const char *attn_wordpiece_token(const attn_wordpiece *w, int id)
{
    return w && w->text && id >= 0 && id < w->count ? w->text + w->start[id] : NULL;
}

/* What attn_wordpiece_encode builds: the ids written, the pieces seen, the word being read (its
   normalised UTF-8 bytes and characters; over 100 characters it is [UNK]). */
typedef struct {
    int *ids, max, n, pieces, chars;
    size_t len;
    unsigned char word[4 * 101];
} attn__wp_out;

static void attn__wp_emit(attn__wp_out *o, int id)
{
    if (o->pieces++ < o->max - 2) o->ids[o->n++] = id;
}

/* The current word into pieces: the longest vocabulary token from each point, "##" after the first. */
static void attn__wp_word(const attn_wordpiece *w, attn__wp_out *o)
{
    size_t at = 0, end;
    int first = o->n, firstp = o->pieces;
    if (!o->chars) return;
    if (o->chars > 100) at = o->len, attn__wp_emit(o, w->unk);
    while (at < o->len) {
        int id = -1;
        for (end = o->len; end > at && id < 0;) {
            id = attn__wp_find(w, "##", at ? 2 : 0, (const char *)o->word + at, end - at);
            if (id < 0)
                do end--; while (end > at && (o->word[end] & 0xC0) == 0x80);
        }
        if (id < 0) { /* no piece fits: the whole word is [UNK] */
            o->n = first, o->pieces = firstp;
            attn__wp_emit(o, w->unk);
            break;
        }
        attn__wp_emit(o, id);
        at = end;
    }
    o->len = 0, o->chars = 0;
}

/* Normalised character c joins the word, or is a word of its own (split: punctuation, CJK). */
static void attn__wp_char(const attn_wordpiece *w, attn__wp_out *o, uint32_t c, int split)
{
    if (split) attn__wp_word(w, o);
    if (o->chars++ < 100) o->len += (size_t)attn__utf8_put(o->word + o->len, c);
    if (split) attn__wp_word(w, o);
}

ATTNDEF int attn_wordpiece_encode(const attn_wordpiece *w, const char *text, size_t bytes, int *ids, int max,
                                  int *pieces)
{
    const unsigned char *s = (const unsigned char *)text;
    const int special[5] = {w ? w->pad : -1, w ? w->unk : -1, w ? w->cls : -1, w ? w->sep : -1,
                            w ? w->mask : -1};
    attn__wp_out o;
    size_t i = 0, step;
    if (!w || !w->slot || (!text && bytes) || !ids || max < 2)
        return attn__fail(ATTN_ERR_ARG, "attn_wordpiece_encode: %s",
                          !w || !w->slot ? "no vocabulary" : max < 2 ? "max < 2" : "a NULL pointer"), -1;
    o.ids = ids, o.max = max, o.n = 1, o.pieces = 0, o.chars = 0, o.len = 0;
    ids[0] = w->cls;
    for (; i < bytes; i += step) {
        uint32_t c, f[3];
        int k, n, cls;
        step = attn__utf8_next(s + i, bytes - i, &c);
        for (k = 0; c == '[' && k < 5; k++) { /* a special token, read as itself */
            const char *t = attn_wordpiece_token(w, special[k]);
            size_t tn = t ? strlen(t) : 0;
            if (t && tn <= bytes - i && !memcmp(s + i, t, tn)) {
                attn__wp_word(w, &o);
                attn__wp_emit(&o, special[k]);
                step = tn, c = 0;
                break;
            }
        }
        cls = attn__uc_class_of(c);
        if (!c || cls == ATTN__UC_DROP) continue;
        if (cls == ATTN__UC_SPACE) {
            attn__wp_word(w, &o);
            continue;
        }
        n = w->lowercase ? attn__uc_fold(c, f) : (f[0] = c, 1);
        for (k = 0; k < n; k++)
            attn__wp_char(w, &o, f[k], cls == ATTN__UC_CJK || attn__uc_class_of(f[k]) == ATTN__UC_PUNCT);
    }
    attn__wp_word(w, &o);
    ids[o.n++] = w->sep;
    if (pieces) *pieces = o.pieces;
    return o.n;
}

#ifndef ATTN_NO_STDIO
/* A whole number from a JSON file's top-level member key, or dflt (a missing file or key). */
static double attn__json_file_num(const char *path, const char *key, double dflt)
{
    FILE *f = fopen(path, "rb");
    char *b;
    size_t len;
    attn__config cj;
    const double *v;
    if (!f) return dflt;
    fclose(f);
    if (!(b = attn__read_small("attn_wordpiece_load_hf", path, 1 << 20, &len))) return dflt;
    v = attn__config_parse(b, len, &cj) ? attn__config_num(&cj, key) : NULL;
    ATTN_FREE(b);
    return v ? *v : dflt;
}
#endif

ATTNDEF attn_status attn_wordpiece_load_hf(attn_wordpiece *w, const char *dir)
{
#ifndef ATTN_NO_STDIO
    char path[4096];
    char *b;
    size_t len;
    attn_status s;
    double lower, max;
    ATTN__NEED(w);
    ATTN__NEED(dir);
    snprintf(path, sizeof path, "%s/tokenizer_config.json", dir);
    lower = attn__json_file_num(path, "do_lower_case", 1);
    max = attn__json_file_num(path, "model_max_length", 512);
    snprintf(path, sizeof path, "%s/sentence_bert_config.json", dir);
    max = attn__json_file_num(path, "max_seq_length", max <= 1 << 20 ? max : 512);
    snprintf(path, sizeof path, "%s/vocab.txt", dir);
    if (!(b = attn__read_small(__func__, path, (size_t)1 << 30, &len))) return attn_last_status();
    s = attn_wordpiece_parse(w, b, len, lower != 0);
    ATTN_FREE(b);
    if (s == ATTN_OK) w->max_len = max >= 2 && max <= 1 << 20 ? (int)max : 512;
    return s;
#else
    (void)w; (void)dir;
    return attn__fail(ATTN_ERR_IO, "attn_wordpiece_load_hf: built with ATTN_NO_STDIO");
#endif
}

/* ---- plots ---- */

#ifndef ATTN_NO_STDIO

/* The range [lo, hi] of the finite values of the series on one side (and their bands), widened to
   a nonzero span; x: of the x values instead. */
static void attn__plot_range(const attn_plot_series *s, int ns, int right, int x, double *lo, double *hi)
{
    int k, i, j;
    *lo = INFINITY; *hi = -INFINITY;
    for (k = 0; k < ns; k++) {
        const double *v[3];
        if (!x && (s[k].right != 0) != (right != 0)) continue;
        v[0] = x ? s[k].x : s[k].y; v[1] = x ? NULL : s[k].lo; v[2] = x ? NULL : s[k].hi;
        for (j = 0; j < 3; j++)
            for (i = 0; v[j] && i < s[k].n; i++)
                if (attn__finite(v[j][i])) {
                    *lo = v[j][i] < *lo ? v[j][i] : *lo;
                    *hi = v[j][i] > *hi ? v[j][i] : *hi;
                }
    }
    if (!(*lo <= *hi)) { *lo = 0; *hi = 1; }
    if (*hi - *lo < 1e-12 * (fabs(*hi) + 1)) { *lo -= 0.5; *hi += 0.5; }
}

/* Text into an SVG element, with &, < and > escaped; then the closing tag. */
static void attn__svg_text(FILE *f, const char *t, const char *close)
{
    for (; *t; t++) {
        if (*t == '&') fputs("&amp;", f);
        else if (*t == '<') fputs("&lt;", f);
        else if (*t == '>') fputs("&gt;", f);
        else fputc(*t, f);
    }
    fputs(close, f);
}

/* Where the legend puts label k (x, and its row from 0) of n labels, label i being the string
   pointer at (char *)label + i stride (NULL: no entry): left to right from x = left, about 7.5 px
   per bold character apart, wrapping at right; returns the number of rows. */
static int attn__legend_at(const char *const *label, size_t stride, int n, int k, double left, double right,
                           double *x, int *row)
{
    double at = left;
    int i, r = 0;
    for (i = 0; i < n; i++) {
        const char *t = *(const char *const *)(const void *)((const char *)label + (size_t)i * stride);
        double w = t ? 7.5 * (double)strlen(t) + 42 : 0; /* the line sample, the label, a gap */
        if (!t) continue;
        if (at + w > right && at > left) { r++; at = left; }
        if (i == k) { *x = at; *row = r; }
        at += w;
    }
    return r + 1;
}

/* Okabe and Ito's colours, told apart with any colour vision (no red against green) */
static const char *const attn__palette[8] = {"#0072b2", "#e69f00", "#009e73", "#cc79a7",
                                             "#56b4e9", "#d55e00", "#7f7f7f", "#000000"};

/* Round ticks over [*lo, *hi]: a step of 1, 2 or 5 times a power of 10 giving 4 to 10 intervals;
   with widen, the range grows to the ticks around it. Returns the step; the ticks are the multiples
   of it in [*lo, *hi]. */
static double attn__nice_step(double *lo, double *hi, int widen)
{
    double span = *hi - *lo, mag = pow(10, floor(log10(span / 5))), step = mag;
    if (span / (2 * mag) >= 4) step = 2 * mag;
    if (span / (5 * mag) >= 4) step = 5 * mag;
    if (widen) { *lo = floor(*lo / step + 1e-9) * step; *hi = ceil(*hi / step - 1e-9) * step; }
    return step;
}

/* A line style's SVG attributes. */
static const char *attn__line_attrs(attn_line_style st, int right)
{
    if (st == ATTN_LINE_DEFAULT) st = right ? ATTN_LINE_DASHED : ATTN_LINE_SOLID;
    return st == ATTN_LINE_DASHED ? "stroke-width=\"1.5\" stroke-dasharray=\"6,3\""
           : st == ATTN_LINE_DOTTED ? "stroke-width=\"2\" stroke-dasharray=\"2,3\""
           : st == ATTN_LINE_THIN   ? "stroke-width=\"1\""
                                    : "stroke-width=\"2\"";
}
#endif

ATTNDEF attn_status attn_plot_svg(const char *path, const attn_plot *p, const attn_plot_series *s, int ns)
{
#ifndef ATTN_NO_STDIO
    double W, H, L = 64, R = 64, T = 44, B = 50, pw, ph, x0, x1, y0, y1, z0, z1, lx = 0, xs, ys, zs, tick;
    int k, i, j, rows, row = 0, has_right = 0;
    attn__save sv;
    FILE *f;
    if (!path || !p || !s || ns < 1)
        return attn__fail(ATTN_ERR_ARG, "attn_plot_svg: path, plot and at least one series are needed");
    for (k = 0; k < ns; k++) {
        if (!s[k].x || !s[k].y || s[k].n < 1 || (!s[k].lo) != (!s[k].hi) ||
            (unsigned)s[k].style > ATTN_LINE_THIN)
            return attn__fail(
                ATTN_ERR_ARG,
                "attn_plot_svg: series %d needs x, y with n >= 1 (n = %d), lo with hi, a line style", k,
                s[k].n);
        has_right |= s[k].right != 0;
    }
    W = p->width > 0 ? p->width : 640; H = p->height > 0 ? p->height : 400;
    rows = attn__legend_at(&s[0].label, sizeof *s, ns, -1, L, W - 8, &lx, &row);
    T += 16 * (rows - 1);
    pw = W - L - R; ph = H - T - B;
    attn__plot_range(s, ns, 0, 1, &x0, &x1);
    attn__plot_range(s, ns, 0, 0, &y0, &y1);
    if (p->ymin < p->ymax) { y0 = p->ymin; y1 = p->ymax; }
    attn__plot_range(s, ns, 1, 0, &z0, &z1);
    z0 = z0 < 0 ? z0 : 0;
    xs = attn__nice_step(&x0, &x1, 1);
    ys = attn__nice_step(&y0, &y1, !(p->ymin < p->ymax));
    zs = attn__nice_step(&z0, &z1, 1);
    if (!attn__save_open(&sv, __func__, path, "w")) return attn_last_status();
    f = sv.f;
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "font-family=\"sans-serif\" font-size=\"12\">\n",
            W, H);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    if (p->title) {
        fprintf(f, "<text x=\"%.0f\" y=\"18\" text-anchor=\"middle\" font-size=\"14\">", W / 2);
        attn__svg_text(f, p->title, "</text>\n");
    }
    /* the grid and the three axes' ticks, at the multiples of each step (rounded to print exactly) */
    for (tick = ceil(y0 / ys - 1e-9) * ys; tick <= y1 + 1e-9 * ys; tick += ys) {
        double y = T + ph - ph * (tick - y0) / (y1 - y0);
        fprintf(f, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", L, L + pw, y,
                y);
        fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%.6g</text>\n", L - 6, y + 4,
                fabs(tick) < 1e-9 * ys ? 0 : tick);
    }
    for (tick = ceil(z0 / zs - 1e-9) * zs; has_right && tick <= z1 + 1e-9 * zs; tick += zs)
        fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" fill=\"#555\">%.6g</text>\n", L + pw + 6,
                T + ph - ph * (tick - z0) / (z1 - z0) + 4, fabs(tick) < 1e-9 * zs ? 0 : tick);
    for (tick = ceil(x0 / xs - 1e-9) * xs; tick <= x1 + 1e-9 * xs; tick += xs)
        fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%.6g</text>\n",
                L + pw * (tick - x0) / (x1 - x0), T + ph + 18, fabs(tick) < 1e-9 * xs ? 0 : tick);
    fprintf(f,
            "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"black\"/>\n",
            L, T, pw, ph);
    if (p->xlabel) {
        fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">", L + pw / 2, H - 12);
        attn__svg_text(f, p->xlabel, "</text>\n");
    }
    if (p->ylabel) {
        fprintf(f, "<text transform=\"translate(14,%.0f) rotate(-90)\" text-anchor=\"middle\">", T + ph / 2);
        attn__svg_text(f, p->ylabel, "</text>\n");
    }
    if (p->y2label && has_right) {
        fprintf(f,
                "<text transform=\"translate(%.0f,%.0f) rotate(90)\" text-anchor=\"middle\" fill=\"#555\">",
                W - 12, T + ph / 2);
        attn__svg_text(f, p->y2label, "</text>\n");
    }
    for (k = 0; k < ns; k++) {
        const attn_plot_series *c = &s[k];
        const char *col = c->rgb ? c->rgb : attn__palette[(c->colour % 8 + 8) % 8];
        double lo = c->right ? z0 : y0, span = (c->right ? z1 : y1) - lo;
#define ATTN__PX(v) (L + pw * ((v) - x0) / (x1 - x0))
#define ATTN__PY(v) (T + ph - ph * (fmin(fmax((v), lo), lo + span) - lo) / span)
        if (c->lo) { /* the band: along hi, back along lo */
            fprintf(f, "<polygon fill=\"%s\" fill-opacity=\"0.18\" stroke=\"none\" points=\"", col);
            for (j = 0; j < 2 * c->n; j++) {
                int q = j < c->n ? j : 2 * c->n - 1 - j;
                double v = j < c->n ? c->hi[q] : c->lo[q];
                if (attn__finite(c->x[q]) && attn__finite(v))
                    fprintf(f, "%.1f,%.1f ", ATTN__PX(c->x[q]), ATTN__PY(v));
            }
            fprintf(f, "\"/>\n");
        }
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" %s points=\"", col,
                attn__line_attrs(c->style, c->right));
        for (i = 0; i < c->n; i++)
            if (attn__finite(c->x[i]) && attn__finite(c->y[i]))
                fprintf(f, "%.1f,%.1f ", ATTN__PX(c->x[i]), ATTN__PY(c->y[i]));
        fprintf(f, "\"/>\n");
#undef ATTN__PX
#undef ATTN__PY
        if (c->label) { /* a sample of the line, then the label */
            double ly;
            attn__legend_at(&s[0].label, sizeof *s, ns, k, L, W - 8, &lx, &row);
            ly = T - 8 - 16.0 * (rows - 1 - row);
            fprintf(f, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"%s\" %s/>\n", lx,
                    lx + 22, ly - 4, ly - 4, col, attn__line_attrs(c->style, c->right));
            fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" fill=\"%s\" font-weight=\"bold\">", lx + 26, ly, col);
            attn__svg_text(f, c->label, "</text>\n");
        }
    }
    fprintf(f, "</svg>\n");
    return attn__save_close(&sv, __func__, path, 1);
#else
    (void)path; (void)p; (void)s; (void)ns;
    return attn__fail(ATTN_ERR_IO, "attn_plot_svg: built with ATTN_NO_STDIO");
#endif
}

ATTNDEF attn_status attn_bars_svg(const char *path, const char *title, const char *ylabel,
                                  const char *const *group, int ng, const char *const *series, int ns,
                                  const double *v)
{
#ifndef ATTN_NO_STDIO
    double W = 640, H = 400, L = 64, R = 16, T = 44, B = 44, pw, ph, lo = 0, hi = 0, lx = 0, gw, bw, step;
    int g, k, rows, row = 0;
    attn__save sv;
    FILE *f;
    if (!path || !group || !series || !v || ng < 1 || ns < 1)
        return attn__fail(ATTN_ERR_ARG, "attn_bars_svg: path, labels, values and ng, ns >= 1 are needed");
    for (k = 0; k < ns * ng; k++)
        if (attn__finite(v[k])) { lo = v[k] < lo ? v[k] : lo; hi = v[k] > hi ? v[k] : hi; }
    if (hi - lo < 1e-12) hi = lo + 1;
    step = attn__nice_step(&lo, &hi, 1); /* the axis ends on round ticks */
    rows = attn__legend_at(series, sizeof *series, ns, -1, L, W - 8, &lx, &row);
    T += 16 * (rows - 1);
    pw = W - L - R; ph = H - T - B; gw = pw / ng; bw = 0.8 * gw / ns;
    if (!attn__save_open(&sv, __func__, path, "w")) return attn_last_status();
    f = sv.f;
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "font-family=\"sans-serif\" font-size=\"12\">\n",
            W, H);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    if (title) {
        fprintf(f, "<text x=\"%.0f\" y=\"18\" text-anchor=\"middle\" font-size=\"14\">", W / 2);
        attn__svg_text(f, title, "</text>\n");
    }
#define ATTN__BY(x) (T + ph - ph * ((x) - lo) / (hi - lo))
    for (k = 0; lo + k * step <= hi + 1e-9 * step; k++) {
        double t = lo + k * step, y = ATTN__BY(t);
        fprintf(f, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", L, L + pw, y,
                y);
        fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%.6g</text>\n", L - 6, y + 4,
                fabs(t) < 1e-9 * step ? 0 : t);
    }
    for (g = 0; g < ng; g++) {
        fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\" font-size=\"11\">", L + gw * (g + 0.5),
                T + ph + 16);
        attn__svg_text(f, group[g] ? group[g] : "", "</text>\n");
        for (k = 0; k < ns; k++) {
            double x = v[(size_t)k * ng + g], a = ATTN__BY(0), b = attn__finite(x) ? ATTN__BY(x) : a;
            fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n",
                    L + gw * g + 0.1 * gw + bw * k, a < b ? a : b, bw, fabs(b - a), attn__palette[k % 8]);
        }
    }
    fprintf(f, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", L, L + pw,
            ATTN__BY(0), ATTN__BY(0));
#undef ATTN__BY
    fprintf(f,
            "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"black\"/>\n",
            L, T, pw, ph);
    if (ylabel) {
        fprintf(f, "<text transform=\"translate(16,%.0f) rotate(-90)\" text-anchor=\"middle\">", T + ph / 2);
        attn__svg_text(f, ylabel, "</text>\n");
    }
    for (k = 0; k < ns; k++) {
        if (!series[k]) continue;
        attn__legend_at(series, sizeof *series, ns, k, L, W - 8, &lx, &row);
        fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" fill=\"%s\" font-weight=\"bold\">", lx,
                T - 8 - 16.0 * (rows - 1 - row), attn__palette[k % 8]);
        attn__svg_text(f, series[k], "</text>\n");
    }
    fprintf(f, "</svg>\n");
    return attn__save_close(&sv, __func__, path, 1);
#else
    (void)path; (void)title; (void)ylabel; (void)group; (void)ng; (void)series; (void)ns; (void)v;
    return attn__fail(ATTN_ERR_IO, "attn_bars_svg: built with ATTN_NO_STDIO");
#endif
}

#ifndef ATTN_NO_STDIO
/* The colour of value m on a heatmap's scale whose values run over lo .. hi (hi the largest |m| for
   the signed and log scales): white to blue, or white to red (positive) and blue (negative). */
static void attn__heat_rgb(attn_heat_scale scale, double m, double lo, double hi, int *r, int *g, int *b)
{
    double t;
    if (!attn__finite(m)) { *r = *g = *b = 128; return; } /* grey: not a number */
    if (scale == ATTN_HEAT_SIGNED) {
        t = fabs(m) / hi;
        t = t > 1 ? 1 : t;
        *r = m >= 0 ? 255 : (int)(255 * (1 - t));
        *g = (int)(255 * (1 - t));
        *b = m >= 0 ? (int)(255 * (1 - t)) : 255;
        return;
    }
    t = scale == ATTN_HEAT_LOG ? (fabs(m) > 0 ? (log10(fabs(m) / hi) + 4) / 4 : 0) : (m - lo) / (hi - lo);
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    *r = (int)(255 * (1 - t)); *g = (int)(255 * (1 - 0.6 * t)); *b = 255;
}
#endif

ATTNDEF attn_status attn_heatmap_svg(const char *path, const char *title, const attn_float *M, int rows,
                                     int cols, const char *const *row_labels, const char *const *col_labels,
                                     attn_heat_scale scale)
{
#ifndef ATTN_NO_STDIO
    double lo = 0, hi = 0, cell, L = row_labels ? 90 : 44, T = col_labels ? 110 : 56, W, H, v, bx, by, bh;
    int i, j, r, g, b, step;
    attn__save sv;
    FILE *f;
    if (!path || !M || rows < 1 || cols < 1 || (int)scale < 0 || scale > ATTN_HEAT_LOG)
        return attn__fail(
            ATTN_ERR_ARG,
            "attn_heatmap_svg: path, M, rows = %d >= 1, cols = %d >= 1 and a known scale are needed", rows,
            cols);
    for (i = 0; i < rows * cols; i++) {
        v = scale == ATTN_HEAT_LINEAR ? M[i] : fabs((double)M[i]);
        if (!attn__finite(v)) continue;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    if (hi <= lo) hi = lo + 1;
    cell = ATTN__MIN(560.0 / rows, 840.0 / cols); /* up to 840 wide for a row of maps */
    cell = cell > 40 ? 40 : cell;
    bh = rows * cell > 120 ? rows * cell : 120; /* the colour bar's height */
    W = L + cols * cell + 110; H = T + bh + 20;
    if (!attn__save_open(&sv, __func__, path, "w")) return attn_last_status();
    f = sv.f;
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "font-family=\"sans-serif\" font-size=\"11\">\n",
            W, H);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    if (title) {
        fprintf(f, "<text x=\"%.0f\" y=\"18\" text-anchor=\"middle\" font-size=\"13\">", W / 2);
        attn__svg_text(f, title, "</text>\n");
    }
    for (i = 0; i < rows; i++)
        for (j = 0; j < cols; j++) {
            double m = M[(size_t)i * cols + j];
            attn__heat_rgb(scale, m, lo, hi, &r, &g, &b);
            fprintf(f,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                    "fill=\"rgb(%d,%d,%d)\"><title>%.4g</title></rect>\n",
                    L + j * cell, T + i * cell, cell, cell, r, g, b, m);
        }
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#444\"/>\n",
            L, T, cols * cell, rows * cell);
    /* the axes: the labels, or every step-th index (row i, column j) */
    for (step = 1; (rows > cols ? rows : cols) / step > 12; step = step == 1   ? 2
                                                                   : step == 2 ? 5
                                                                               : step * 2) {}
    for (i = 0; i < rows; i++) {
        if (!row_labels && i % step) continue;
        fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">", L - 4, T + (i + 0.5) * cell + 4);
        if (row_labels) attn__svg_text(f, row_labels[i], "</text>\n");
        else fprintf(f, "%d</text>\n", i);
    }
    for (j = 0; j < cols; j++) {
        if (!col_labels && j % step) continue;
        if (col_labels) {
            fprintf(f, "<text transform=\"translate(%.1f,%.0f) rotate(-60)\">", L + (j + 0.5) * cell, T - 4);
            attn__svg_text(f, col_labels[j], "</text>\n");
        } else {
            fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%d</text>\n", L + (j + 0.5) * cell,
                    T - 6, j);
        }
    }
    if (!row_labels)
        fprintf(f, "<text transform=\"translate(12,%.0f) rotate(-90)\" text-anchor=\"middle\">row</text>\n",
                T + rows * cell / 2);
    if (!col_labels)
        fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">column</text>\n", L + cols * cell / 2,
                T - 22);
    /* the colour bar: 40 bands from the top value down, its ends (and 0 on the signed scale) labelled */
    bx = L + cols * cell + 18; by = T;
    for (i = 0; i < 40; i++) {
        double top = scale == ATTN_HEAT_SIGNED ? hi - 2 * hi * i / 39
                     : scale == ATTN_HEAT_LOG  ? hi * pow(10, -4.0 * i / 39)
                                               : hi - (hi - lo) * i / 39;
        attn__heat_rgb(scale, top, lo, hi, &r, &g, &b);
        fprintf(f, "<rect x=\"%.1f\" y=\"%.2f\" width=\"14\" height=\"%.2f\" fill=\"rgb(%d,%d,%d)\"/>\n", bx,
                by + bh * i / 40, bh / 40 + 0.5, r, g, b);
    }
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"%.1f\" fill=\"none\" stroke=\"#444\"/>\n",
            bx, by, bh);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%.3g</text>\n", bx + 18, by + 8, hi);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%.3g</text>\n", bx + 18, by + bh,
            scale == ATTN_HEAT_SIGNED ? -hi : scale == ATTN_HEAT_LOG ? 1e-4 * hi : lo);
    if (scale == ATTN_HEAT_SIGNED)
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">0</text>\n", bx + 18, by + bh / 2 + 4);
    if (scale == ATTN_HEAT_LOG)
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">(log)</text>\n", bx + 18, by + bh / 2 + 4);
    fprintf(f, "</svg>\n");
    return attn__save_close(&sv, __func__, path, 1);
#else
    (void)path; (void)title; (void)M; (void)rows; (void)cols; (void)row_labels; (void)col_labels; (void)scale;
    return attn__fail(ATTN_ERR_IO, "attn_heatmap_svg: built with ATTN_NO_STDIO");
#endif
}

/* ---- probes ---- */

ATTNDEF attn_status attn_probe_fit(double *w, double *mu, double *sd, const attn_float *X, const int *y,
                                   int n, int dim, int iters, double lr, double l2, int balanced)
{
    double *gw, c[2] = {1, 1}; /* the weight of a row of class 0 and of class 1, over n */
    int i, k, it, pos = 0;
    ATTN__NEED(w); ATTN__NEED(mu); ATTN__NEED(sd); ATTN__NEED(X); ATTN__NEED(y);
    if (n < 1 || dim < 1 || iters < 0 || !(lr > 0) || !(l2 >= 0))
        return attn__fail(ATTN_ERR_ARG,
                          "attn_probe_fit: n = %d, dim = %d >= 1, iters = %d >= 0, lr > 0, l2 >= 0", n, dim,
                          iters);
    for (i = 0; i < n; i++)
        if (y[i] != 0 && y[i] != 1)
            return attn__fail(ATTN_ERR_ARG, "attn_probe_fit: y[%d] = %d is not a label 0 or 1", i, y[i]);
    for (i = 0; i < n; i++) pos += y[i] != 0;
    if (balanced && pos > 0 && pos < n) { c[0] = 0.5 * n / (n - pos); c[1] = 0.5 * n / pos; }
    gw = (double *)ATTN_MALLOC(sizeof(double) * ((size_t)dim + 1));
    if (!gw) return attn__fail(ATTN_ERR_NOMEM, "attn_probe_fit: out of memory");
    for (k = 0; k < dim; k++) { /* standardise each feature (weighted mean and variance) */
        double m = 0, v = 0;
        for (i = 0; i < n; i++) m += c[y[i] != 0] * X[(size_t)i * dim + k] / (double)n;
        for (i = 0; i < n; i++)
            v += c[y[i] != 0] * (X[(size_t)i * dim + k] - m) * (X[(size_t)i * dim + k] - m) / n;
        mu[k] = m;
        sd[k] = v > 1e-24 ? sqrt(v) : 1;
    }
    for (k = 0; k <= dim; k++) w[k] = 0;
    for (it = 0; it < iters; it++) { /* d/dw of the weighted mean log loss: mean c (p - y) z, plus l2 w */
        for (k = 0; k <= dim; k++) gw[k] = k < dim ? l2 * w[k] : 0;
        for (i = 0; i < n; i++) {
            double z = w[dim], p;
            for (k = 0; k < dim; k++) z += w[k] * (X[(size_t)i * dim + k] - mu[k]) / sd[k];
            p = c[y[i] != 0] * (1 / (1 + exp(-z)) - (y[i] != 0));
            for (k = 0; k < dim; k++) gw[k] += p * (X[(size_t)i * dim + k] - mu[k]) / sd[k] / n;
            gw[dim] += p / n;
        }
        for (k = 0; k <= dim; k++) w[k] -= lr * gw[k];
    }
    ATTN_FREE(gw);
    return ATTN_OK;
}

ATTNDEF double attn_probe_f1(const double *w, const double *mu, const double *sd, const attn_float *X,
                             const int *y, int n, int dim)
{
    long tp = 0, fp = 0, fn = 0;
    int i, k;
    if (!w || !mu || !sd || !X || !y || n < 1 || dim < 1)
        return attn__fail(ATTN_ERR_ARG, "%s: a pointer NULL or n = %d, dim = %d (>= 1)", __func__, n, dim),
               -1;
    for (i = 0; i < n; i++) {
        double z = w[dim];
        int pred;
        for (k = 0; k < dim; k++) z += w[k] * (X[(size_t)i * dim + k] - mu[k]) / sd[k];
        pred = z >= 0;
        tp += pred && y[i];
        fp += pred && !y[i];
        fn += !pred && y[i];
    }
    return tp ? 2.0 * tp / (2.0 * tp + fp + fn) : 0;
}

ATTNDEF void attn_cosine_matrix(attn_float *S, const attn_float *M, int n, int dim)
{
    int i, j;
    if (!S || !M || n < 1 || dim < 1) {
        attn__fail(ATTN_ERR_ARG, "%s: S, M NULL or n = %d, dim = %d (>= 1)", __func__, n, dim);
        return;
    }
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++) {
            double a = attn_dot((size_t)dim, M + (size_t)i * dim, M + (size_t)i * dim),
                   b = attn_dot((size_t)dim, M + (size_t)j * dim, M + (size_t)j * dim);
            S[(size_t)i * n + j] = a > 0 && b > 0 ? (attn_float)(attn_dot((size_t)dim, M + (size_t)i * dim,
                                                                          M + (size_t)j * dim) /
                                                                 sqrt(a * b))
                                                  : 0;
        }
}

/* ---- band + sparse-error analysis ---- */

ATTNDEF long attn_band_dimension(int n, int w)
{
    if (n < 1 || w < 0)
        return attn__fail(ATTN_ERR_SHAPE, "%s: n = %d, w = %d (n >= 1, w >= 0)", __func__, n, w), 0;
    if (w > n - 1) w = n - 1;
    return (long)(w + 1) * (2L * n - w) - n;
}

ATTNDEF double attn_l1_distance(const attn_float *A, const attn_float *B, int n)
{
    double d = 0;
    size_t i;
    if (!A || n < 1) return attn__fail(ATTN_ERR_ARG, "%s: A NULL or n = %d (>= 1)", __func__, n), -1;
    for (i = 0; i < (size_t)n * n; i++) d += fabs((double)A[i] - (B ? B[i] : 0));
    return d;
}

ATTNDEF double attn_band_project(attn_float *P, const attn_float *A, int n, int w)
{
    double d = 0;
    int i, j;
    if (!P || !A || n < 1 || w < 0)
        return attn__fail(ATTN_ERR_ARG, "%s: P, A NULL or n = %d, w = %d (n >= 1, w >= 0)", __func__, n, w),
               -1;
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++) {
            int in = i - j <= w && j - i <= w;
            P[(size_t)i * n + j] = in ? A[(size_t)i * n + j] : 0;
            if (!in) d += fabs((double)A[(size_t)i * n + j]);
        }
    return d;
}

/* The arguments of a candidate of `family` (fn: the public function, for the message). */
static attn_status attn__sigma_check(const char *fn, int n, int family, int w, int num_pos, double p,
                                     double density, double eps)
{
    if (n < 1 || n > 46340 || family < 1 || family > 3 || w < 0 || num_pos < 0 ||
        !attn__in_range(p, 0, 1, 1) || !attn__in_range(density, 0, 1, 0) ||
        !attn__in_range(eps, 0, HUGE_VAL, 0))
        return attn__fail(
            ATTN_ERR_ARG,
            "%s: n = %d in 1 .. 46340, family 1 .. 3 (%d), w, num_pos >= 0, p in [0, 1), density in [0, 1], "
            "eps finite and >= 0",
            fn, n, family);
    if (family == 3 && (w < 1 || (long)num_pos * w > n))
        return attn__fail(ATTN_ERR_ARG, "%s: %d rare-token blocks of width %d do not fit in n = %d", fn,
                          num_pos, w, n);
    return ATTN_OK;
}

ATTNDEF attn_status attn_sigma_candidate(attn_float *X, int n, int family, int w, int num_pos, double p,
                                         double density, double eps, attn_rng *r)
{
    int i, j, k;
    ATTN__NEED(X); ATTN__NEED(r);
    ATTN__TRY(attn__sigma_check(__func__, n, family, w, num_pos, p, density, eps));
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++) {
            attn_float v = (attn_float)(i == j);
            if (family == 2) v = (attn_float)(i - j <= w && j - i <= w && attn_rng_uniform(r) >= p);
            X[(size_t)i * n + j] = v;
        }
    if (family == 3) { /* num_pos disjoint blocks: the free cells are split at random around them */
        int free_cells = n - num_pos * w, start = 0;
        for (k = 0; k < num_pos; k++) {
            int gap = (int)attn_rng_int(r, (uint32_t)(free_cells + 1)), t = (int)attn_rng_int(r, (uint32_t)w);
            free_cells -= gap;
            start += gap;
            for (i = start; i < start + w; i++)
                for (j = start; j < start + w; j++) X[(size_t)i * n + j] = (attn_float)(j == start + t);
            start += w;
        }
    }
    for (i = 0; i < n; i++) { /* the sparse error, clamped at 0, then rows summing to 1 */
        double sum = 0;
        for (j = 0; j < n; j++) {
            attn_float *x = &X[(size_t)i * n + j];
            if (attn_rng_uniform(r) < density) *x += (attn_float)(eps * (2 * attn_rng_uniform(r) - 1));
            if (*x < 0) *x = 0;
            sum += *x;
        }
        for (j = 0; j < n && sum > 0; j++) X[(size_t)i * n + j] = (attn_float)(X[(size_t)i * n + j] / sum);
    }
    return ATTN_OK;
}

ATTNDEF attn_status attn_sigma_distances(double min_dist[3], double mean_dist[3], const attn_float *A, int n,
                                         int w, int num_pos, int count, double p, double density, double eps,
                                         attn_rng *r)
{
    attn_float *X;
    double mn[3], me[3];
    int f, k;
    ATTN__NEED(min_dist); ATTN__NEED(mean_dist); ATTN__NEED(A); ATTN__NEED(r);
    if (count < 1) return attn__fail(ATTN_ERR_ARG, "attn_sigma_distances: count = %d must be >= 1", count);
    for (f = 1; f <= 3; f++) ATTN__TRY(attn__sigma_check(__func__, n, f, w, num_pos, p, density, eps));
    if (!(X = (attn_float *)ATTN_MALLOC(sizeof(attn_float) * (size_t)n * (size_t)n)))
        return attn__fail(ATTN_ERR_NOMEM, "attn_sigma_distances: out of memory");
    for (f = 0; f < 3; f++) {
        mn[f] = INFINITY;
        me[f] = 0;
        for (k = 0; k < count; k++) {
            double d;
            attn_sigma_candidate(X, n, f + 1, w, num_pos, p, density, eps, r); /* checked above */
            d = attn_l1_distance(A, X, n);
            mn[f] = d < mn[f] ? d : mn[f];
            me[f] += d / count;
        }
    }
    ATTN_FREE(X);
    memcpy(min_dist, mn, sizeof mn);
    memcpy(mean_dist, me, sizeof me);
    return ATTN_OK;
}

/* ---- collapse probes ---- */

ATTNDEF attn_status attn_collapse_probe(const attn_transformer *m, attn_probe_task task, const int *prompt,
                                        int plen, int zero, int one, const int *ns, int count, int chunk,
                                        double *paper, double *code)
{
    const attn_transformer_config *c;
    attn__tf_cache fc;
    attn_float *bases[ATTN_MAX_LAYERS + 1];
    attn_float *y, *cache, *h[2];
    int *seq, k, i, s, T, maxn = 0;
    void *work;
    size_t wb, cf;
    double base[2] = {0, 0};
    attn_status st = ATTN_OK;
    ATTN__NEED(m); ATTN__NEED(ns); ATTN__NEED(paper); ATTN__NEED(code);
    c = &m->cfg;
    for (k = 0; k < count; k++) maxn = ns[k] > maxn ? ns[k] : maxn;
    if (!c->vocab || (int)task < 0 || task > ATTN_PROBE_ONES || plen < 0 || (plen && !prompt) || count < 1 ||
        chunk < 1 || c->d % chunk || zero < 0 || zero >= c->vocab || one < 0 || one >= c->vocab ||
        c->readout > 1)
        return attn__fail(
            ATTN_ERR_ARG,
            "attn_collapse_probe: a token model read out at every (or the last) position, a known task, "
            "tokens in the vocabulary, count >= 1 and a chunk dividing d = %d are needed",
            c->d);
    if (plen + maxn + 1 > c->max_T)
        return attn__fail(ATTN_ERR_SHAPE, "attn_collapse_probe: %d + %d + 1 tokens exceed max_T = %d", plen,
                          maxn, c->max_T);
    for (k = 0; k < count; k++)
        if (ns[k] < 0) return attn__fail(ATTN_ERR_ARG, "attn_collapse_probe: n = %d < 0", ns[k]);
    T = plen + maxn + 1;
    wb = attn_transformer_work_bytes(m, 1, T);
    seq = (int *)ATTN_MALLOC(sizeof(int) * (size_t)T);
    y = (attn_float *)ATTN_MALLOC(sizeof(attn_float) * ((size_t)T * c->out + 2 * (size_t)c->d));
    cf = attn_transformer_cache_floats(m, 1, T);
    cache = (attn_float *)ATTN_MALLOC(sizeof(attn_float) * cf);
    work = ATTN_MALLOC(wb);
    if (!seq || !y || !cache || !work) {
        ATTN_FREE(seq); ATTN_FREE(y); ATTN_FREE(cache); ATTN_FREE(work);
        return attn__fail(ATTN_ERR_NOMEM, "attn_collapse_probe: out of memory");
    }
    h[0] = y + (size_t)T * c->out; h[1] = h[0] + c->d;
    for (k = 0; k < count && st == ATTN_OK; k++) {
        double inf = 0, chunked = 0;
        for (s = 0; s < 2 && st == ATTN_OK; s++) { /* s = 0: s2, s = 1: s1 */
            int len = plen + ns[k] + (task == ATTN_PROBE_ONES && s == 1 ? 0 : 1);
            for (i = 0; i < plen; i++) seq[i] = prompt[i];
            for (i = plen; i < len; i++) seq[i] = one;
            if (task == ATTN_PROBE_ZERO && s == 0) seq[plen] = zero;
            st = attn_transformer_forward(m, y, cache, cf, seq, NULL, 1, len, work, wb);
            attn__tf_cache_bases(m, 1, len, cache, bases);
            attn__tf_cache_map(m, c->layers, 1, len, bases, &fc);
            memcpy(h[s], fc.f + (size_t)(attn__tf_rows(m, len) - 1) * c->d,
                   sizeof(attn_float) * (size_t)c->d); /* the last row of Norm(x_L) */
        }
        for (i = 0; i < c->d; i += chunk) {
            double mx = 0;
            int e;
            for (e = i; e < i + chunk; e++) mx = fmax(mx, fabs((double)h[0][e] - h[1][e]));
            inf = fmax(inf, mx);
            chunked += mx / (c->d / chunk);
        }
        if (k == 0) { base[0] = inf; base[1] = chunked; }
        paper[k] = base[0] > 0 ? inf / base[0] : 0;
        code[k] = base[1] > 0 ? chunked / base[1] : 0;
    }
    ATTN_FREE(seq); ATTN_FREE(y); ATTN_FREE(cache); ATTN_FREE(work);
    return st;
}

/* ---- 11. run-time dispatch -------------------------------------------------------------------- */
#endif /* shared code */

/* ---- per-ISA code ---- */
#ifdef ATTN__DISPATCH
#define ATTN__ISA_SET(f) attn__isa_##f = attn__##f;
/* The shared code's pointers to this pass's kernels. */
static void attn__isa_use(void)
{
    ATTN__GEMM_KERNELS(ATTN__ISA_SET) ATTN__VEC_KERNELS(ATTN__ISA_SET) ATTN__FUSED_KERNELS(ATTN__ISA_SET)
    ATTN__ROW_KERNELS(ATTN__ISA_SET) ATTN__SCORE_KERNELS(ATTN__ISA_SET)
}
#endif
/* ---- end of per-ISA code ---- */

#ifndef ATTN__PASS
#ifdef ATTN__DISPATCH
/* The passes (see "Run-time dispatch" in section 1): the per-ISA code for AVX2 + FMA, then for
   AVX-512F, each function under a target attribute. The file includes itself by its name, "attn.h"
   (found first in its own directory); a copy under another name sets ATTN_SELF to that name. */
#define ATTN__PRAGMA(...) _Pragma(#__VA_ARGS__)
#if defined(__clang__)
#define ATTN__TARGET_PUSH(t)                                                                          \
    ATTN__PRAGMA(clang attribute push(__attribute__((target(t))), apply_to = function))
#define ATTN__TARGET_POP() ATTN__PRAGMA(clang attribute pop)
#else /* (g++ 12 takes its own AVX headers' _mm*_undefined_* for uninitialised reads) */
#define ATTN__TARGET_PUSH(t)                                                                          \
    ATTN__PRAGMA(GCC push_options) ATTN__PRAGMA(GCC target(t)) ATTN__PRAGMA(GCC diagnostic push)      \
    ATTN__PRAGMA(GCC diagnostic ignored "-Wmaybe-uninitialized")                                     \
    ATTN__PRAGMA(GCC diagnostic ignored "-Wuninitialized")
#define ATTN__TARGET_POP() ATTN__PRAGMA(GCC diagnostic pop) ATTN__PRAGMA(GCC pop_options)
#endif
#ifndef ATTN_SELF
#define ATTN_SELF "attn.h"
#endif
#define ATTN__PASS 1
#undef ATTN__SSE2
#undef ATTN__SFX
#define ATTN__AVX2 1
#define ATTN__FMA 1
#define ATTN__SFX _avx2
ATTN__TARGET_PUSH("avx2,fma")
#include ATTN_SELF
ATTN__TARGET_POP()
#undef ATTN__AVX2
#undef ATTN__SFX
#define ATTN__AVX512 1
#define ATTN__SFX _avx512
ATTN__TARGET_PUSH("avx512f,avx2,fma")
#include ATTN_SELF
ATTN__TARGET_POP()
#undef ATTN__PASS
#undef ATTN__AVX512
#undef ATTN__FMA
#undef ATTN__SFX
#define ATTN__SSE2 1
#define ATTN__SFX

/* Whether the CPU and the OS run ISA i (0 SSE2, 1 AVX2 + FMA, 2 AVX-512F): libgcc's and
   compiler-rt's CPUID checks include the OS's saving of the wider registers. */
static int attn__isa_runs(int i)
{
    __builtin_cpu_init();
    if (i == 2) return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
    if (i == 1) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return 1;
}
#endif

ATTNDEF int attn_simd_set(const char *name)
{
#ifdef ATTN__DISPATCH
    static const char *const names[3] = {"sse2", "avx2", "avx512"};
    static void (*const use[3])(void) = {attn__isa_use, attn__isa_use_avx2, attn__isa_use_avx512};
    int i;
    for (i = 2; i >= 0; i--)
        if (attn__isa_runs(i) && (!name || !strcmp(name, names[i]))) break;
    if (i < 0)
        return attn__fail(ATTN_ERR_ARG, "attn_simd_set: \"%s\" is not sse2, avx2 or avx512, or this CPU "
                          "lacks it (it runs %s)", name, attn__isa_runs(2)   ? "all three"
                                                   : attn__isa_runs(1) ? "sse2 and avx2"
                                                                       : "sse2");
    use[i]();
    attn__isa_name = names[i];
    return 0;
#else
    if (!name || !strcmp(name, attn_simd_name())) return 0;
    return attn__fail(ATTN_ERR_ARG, "attn_simd_set: \"%s\": this build runs %s only", name, attn_simd_name());
#endif
}

#ifdef ATTN__DISPATCH
/* At start-up: the best ISA, or ATTN_SIMD's when the machine runs it. */
__attribute__((constructor)) static void attn__isa_start(void)
{
    const char *env = getenv("ATTN_SIMD");
    if (!env || !*env || attn_simd_set(env)) attn_simd_set(NULL);
    attn_clear_error();
}
#endif
#endif /* shared code */
#endif /* ATTN_IMPLEMENTATION */

/*
------------------------------------------------------------------------------------------------------
This software is available under 2 licenses -- choose whichever you prefer.
------------------------------------------------------------------------------------------------------
ALTERNATIVE A - MIT License
Copyright (c) 2026 the attn.h authors
Permission is hereby granted, free of charge, to any person obtaining a copy of this software and
associated documentation files (the "Software"), to deal in the Software without restriction,
including without limitation the rights to use, copy, modify, merge, publish, distribute, sublicense,
and/or sell copies of the Software, and to permit persons to whom the Software is furnished to do so,
subject to the following conditions:
The above copyright notice and this permission notice shall be included in all copies or substantial
portions of the Software.
THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT NOT
LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN
NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY,
WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE
SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
------------------------------------------------------------------------------------------------------
ALTERNATIVE B - Public Domain (www.unlicense.org)
This is free and unencumbered software released into the public domain.
Anyone is free to copy, modify, publish, use, compile, sell, or distribute this software, either in
source code form or as a compiled binary, for any purpose, commercial or non-commercial, and by any
means.
In jurisdictions that recognize copyright laws, the author or authors of this software dedicate any
and all copyright interest in the software to the public domain. We make this dedication for the
benefit of the public at large and to the detriment of our heirs and successors. We intend this
dedication to be an overt act of relinquishment in perpetuity of all present and future rights to this
software under copyright law.
THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT NOT
LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN
NO EVENT SHALL THE AUTHORS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF
CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR
OTHER DEALINGS IN THE SOFTWARE.
------------------------------------------------------------------------------------------------------
*/
