#!/bin/sh
# Runs the compile matrix (unless --no-compile), then each test program given as an argument, and
# ends with one line "N passed, N failed" summing everything. Exit status 1 on any failure.
pass=0
fail=0
CC=${CC:-cc}
ARCH=${ARCH:--march=native}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -s "$tmp/log" ] && head -20 "$tmp/log"; }

# try NAME COMMAND...: one compile (or run) check
try() {
    name=$1
    shift
    if "$@" >"$tmp/log" 2>&1; then ok; else bad "$name: $*"; fi
}

if [ "$1" = "--no-compile" ]; then
    shift
else
    W="-O2 -Wall -Wextra -Wpedantic -Wshadow -Wcast-qual -Werror" # -O2: some warnings (maybe-uninitialized) need the optimiser
    for cc in gcc clang; do
        command -v $cc >/dev/null 2>&1 || { echo "skip: $cc not installed"; continue; }
        for std in c99 c11; do
            try "$cc $std two units" $cc -std=$std $W -I. tests/compile_a.c tests/compile_b.c -o "$tmp/a.out" -lm
            try "$cc $std two units, ATTN_STATIC" $cc -std=$std $W -I. -DATTN_STATIC -DBOTH_IMPLEMENT \
                tests/compile_a.c tests/compile_b.c -o "$tmp/a.out" -lm
        done
        try "$cc options" $cc -std=c99 $W -I. -DATTN_NO_STDIO -DATTN_NO_SIMD -DCUSTOM_ALLOC -DATTN_NO_OPENMP -fopenmp \
            tests/compile_a.c tests/compile_b.c -o "$tmp/a.out" -lm
        try "$cc double" $cc -std=c99 $W -I. -DATTN_DOUBLE tests/compile_a.c tests/compile_b.c -o "$tmp/a.out" -lm
        try "$cc -std=c89: a clear #error, not a parse error" sh -c \
            "! $cc -std=c89 -I. -c tests/compile_a.c -o $tmp/a.o 2>$tmp/c89 && grep -q 'needs C99' $tmp/c89"
        if [ "$(uname -m)" = x86_64 ]; then
            printf '#define ATTN_IMPLEMENTATION\n#include "attn.h"\n#include <stdio.h>\nint main(void) { puts(attn_simd_name()); return 0; }\n' \
                >"$tmp/simd.c"
            try "$cc -mavx2 without -mfma: the AVX2 kernels" sh -c \
                "$cc -std=c99 $W -mavx2 -I. $tmp/simd.c -o $tmp/simd -lm && $tmp/simd | grep -qx avx2"
            # kernels chosen at run time: the best the CPU has, and each ISA's bits those of a build for it
            best=sse2
            grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && best=avx2
            grep -qw avx512f /proc/cpuinfo && best=avx512
            try "$cc -O2 with no -m flag: the $best kernels, chosen at run time" sh -c \
                "$cc -std=c99 $W -O2 -I. $tmp/simd.c -o $tmp/simd -lm && $tmp/simd | grep -qx $best"
            $cc -O2 -I. tests/isa_bits.c -o "$tmp/bits" -lm
            for isa in sse2:-DATTN_NO_DISPATCH avx2:"-mavx2 -mfma" avx512:"-mavx512f -mfma"; do
                name=${isa%%:*}
                if ! ATTN_SIMD=$name "$tmp/bits" | grep -q "^$name "; then
                    echo "skip: $cc's $name bits (this CPU lacks $name)"
                    continue
                fi
                try "$cc: $name chosen at run time gives a $name build's bits (attn_gemm, vector primitives, attention forward and backward, norms, activations, RoPE, AdamW)" \
                    sh -c "$cc -O2 ${isa#*:} -I. tests/isa_bits.c -o $tmp/bits1 -lm && \
                           test \"\$(ATTN_SIMD=$name $tmp/bits)\" = \"\$($tmp/bits1)\""
            done
        fi
    done
    for cxx in g++ clang++; do
        command -v $cxx >/dev/null 2>&1 || { echo "skip: $cxx not installed"; continue; }
        try "$cxx c++11 two units" $cxx -std=c++11 $W -I. -x c++ tests/compile_a.c -x c++ tests/compile_b.c -o "$tmp/a.out"
        try "$cxx c++11 ATTN_STATIC" $cxx -std=c++11 $W -I. -DATTN_STATIC -DBOTH_IMPLEMENT -x c++ tests/compile_a.c \
            -x c++ tests/compile_b.c -o "$tmp/a.out"
    done
    # packaging: make install, then a program built through pkg-config and through CMake (both ways)
    try "make install into a prefix" make -s install PREFIX="$tmp/prefix"
    if command -v pkg-config >/dev/null 2>&1; then
        try "pkg-config: a program built against the installed header" sh -c "PKG_CONFIG_PATH=$tmp/prefix/share/pkgconfig; \
            export PKG_CONFIG_PATH; $CC \$(pkg-config --cflags attn) tests/package/consumer.c \$(pkg-config --libs attn) \
            -o $tmp/consumer && $tmp/consumer"
    else echo "skip: pkg-config not installed (the packaging check through it)"; fi
    if command -v cmake >/dev/null 2>&1; then
        try "CMake: add_subdirectory(attn.h)" sh -c "cmake -S tests/package -B $tmp/cm1 -DATTN_FROM=subdirectory \
            -DATTN_SOURCE=$PWD && cmake --build $tmp/cm1 && $tmp/cm1/consumer"
        try "CMake: find_package(attn 0.2) after make install" sh -c "cmake -S tests/package -B $tmp/cm2 \
            -DCMAKE_PREFIX_PATH=$tmp/prefix && cmake --build $tmp/cm2 && $tmp/cm2/consumer"
    else echo "skip: cmake not installed (the packaging checks through it)"; fi
    try "nothing allocates after warm-up (training steps and decoding with a refusing allocator)" sh -c \
        "$CC -O2 $ARCH -fopenmp -Wall -Wextra -Werror tests/noalloc.c -o $tmp/noalloc -lm && $tmp/noalloc"
    try "quickstart example runs" ./build/quickstart
    try "bench_gemm builds with the SGEMM libraries that are installed and names them" sh -c \
        "${MAKE:-make} -s build/bench_gemm >/dev/null && ./build/bench_gemm --help | grep -q libxsmm"
    if [ -x ./build/tiny_lm ]; then
        try "tiny_lm trains a little and prints a sample" sh -c "./build/tiny_lm --steps 40 >/dev/null"
        try "tiny_lm refuses --steps abc and --seconds -1 with a message" sh -c "! ./build/tiny_lm --steps abc \
            2>$tmp/err && grep -q 'bad value' $tmp/err && ! ./build/tiny_lm --seconds -1 2>/dev/null"
    fi
    try "docs/api.md documents every public function as attn.h declares it (tools/api_doc.c --check)" sh -c \
        "$CC -O2 -Wall -Wextra -Werror tools/api_doc.c -o $tmp/api_doc && $tmp/api_doc --check attn.h docs/api.md"
    try "make help lists every target" sh -c 'for t in $(sed -n "s/^\.PHONY: //p" Makefile); do \
        ${MAKE:-make} -s help | grep -q "^  $t " || { echo "make help lacks $t"; exit 1; }; done'

    try "tiny_lm's backward pass against central differences (float64)" sh -c \
        "$CC -O2 -DATTN_DOUBLE examples/tiny_lm.c -o $tmp/tiny_d -lm && $tmp/tiny_d --gradcheck --steps 2 >/dev/null"
    try "custom kind example: gradient check passes and the loss falls" ./build/custom_kind
    if [ -x ./build/alibi ]; then
        try "alibi example: trains the three schemes briefly and decodes over the KV cache" sh -c \
            "./build/alibi --seeds 1 --steps 20 --test-T 40 2>/dev/null | grep -q 'within .* of the full pass'"
        try "alibi example refuses --seeds 0 with a message" sh -c "! ./build/alibi --seeds 0 2>$tmp/err && \
            grep -q 'bad value' $tmp/err"
    fi
    # the README's 30-second example: its first ```c block, compiled as C99 with -Werror and run
    awk '/^```c$/ {f = 1; next} /^```$/ {if (f) exit} f' README.md >"$tmp/readme.c"
    try "README example compiles and trains" sh -c "$CC -std=c99 -Wall -Wextra -Wpedantic -Werror -I. $tmp/readme.c -o $tmp/readme -lm && $tmp/readme"
    # the driver: bad input is one line on stderr and a non-zero exit; tiny runs work
    refuse() {
        name=$1
        shift
        if "$@" >"$tmp/log" 2>"$tmp/err"; then bad "attnlab accepted $name: $*"
        elif [ "$(wc -l <"$tmp/err")" -ge 1 ]; then ok
        else bad "attnlab refused $name without a message: $*"; fi
    }
    if [ -x ./build/attnlab ]; then
        refuse "an unknown task" ./build/attnlab train --task bogus
        refuse "N < 2" ./build/attnlab train --N 1
        refuse "a non-numeric flag" ./build/attnlab train --epochs many
        refuse "a held-out fraction of 1.5" ./build/attnlab train --task fuzzy --frac 1.5
        refuse "a missing corpus" ./build/attnlab lm --corpus /nonexistent/corpus
        refuse "an empty corpus" ./build/attnlab lm --corpus /dev/null
        refuse "a beam width of 0" ./build/attnlab seq2seq --beam 0
        refuse "an analysis of a matrix larger than the model reads" ./build/attnlab seq2seq --analysis --analysis-len 40
        refuse "a missing checkpoint" ./build/attnlab seq2seq --load /nonexistent/model.ckpt
        refuse "an unwritable CSV (before training)" ./build/attnlab train --csv /nonexistent/dir/run.csv
        refuse "an infinite learning rate" ./build/attnlab train --lr inf
        refuse "a billion seeds" ./build/attnlab train --seeds 1000000000
        refuse "a model that cannot be built" ./build/attnlab train --N 5000 --epochs 2
        refuse "a fuzzy model that cannot be built" ./build/attnlab train --task fuzzy --width 16 --layers 64 --N 100000000 --steps 1
        refuse "an unwritable --save" ./build/attnlab seq2seq --save /nonexistent/dir/m.ckpt
        refuse "an unwritable --save (fuzzy)" ./build/attnlab train --task fuzzy --save /nonexistent/dir/m.ckpt
        refuse "100,000 threads" ./build/attnlab train --threads 100000
        # past_limits NAME CMD...: refused with the estimate's message, before any run
        past_limits() {
            name=$1
            shift
            if "$@" >"$tmp/log" 2>"$tmp/err"; then bad "attnlab accepted $name: $*"
            elif grep -q "48 hours a run" "$tmp/err"; then ok
            else bad "attnlab refused $name without the estimate: $(cat "$tmp/err")"; fi
        }
        past_limits "a grid estimated past 48 hours a run, before any model is built (N_con 65536)" \
            ./build/attnlab train --ncon 65536 --seeds 1 --attn softmax
        past_limits "a language model estimated past 48 hours a run" ./build/attnlab lm --steps 100000000 --seeds 1
        past_limits "a fuzzy-logic grid estimated past 48 hours a run" ./build/attnlab train --task fuzzy \
            --steps 1000000000 --seeds 1
        past_limits "an encoder-decoder estimated past 48 hours a run" ./build/attnlab seq2seq --steps 100000000 \
            --dmodel 512
        past_limits "runs estimated past half this machine's memory (their caches)" ./build/attnlab lm --batch 4096 \
            --ctx 4096 --steps 1 --seeds 1
        try "--force goes on past the estimate (stopped by SIGTERM)" sh -c "timeout -s TERM 10 ./build/attnlab lm \
            --steps 100000000 --seeds 1 --threads 1 --force >/dev/null 2>$tmp/err; grep -q 'going on (--force)' $tmp/err"
        refuse "a Cog placement without a Cog layer (cog keeps softmax in layers 0 and L-1)" ./build/attnlab lm --variants cog \
            --layers 2
        if [ -w /dev/full ]; then
            refuse "a CSV on a full disk (/dev/full)" ./build/attnlab train --seeds 1 --epochs 10 --final-test 20 --threads 1 \
                --csv /dev/full
            refuse "a report to a full disk (/dev/full)" sh -c "./build/attnlab train --seeds 1 --epochs 10 --final-test 20 \
                --threads 1 >/dev/full"
        fi
        try "saves survive a kill: a checkpoint, attnlab's journal and snapshots, 100 moments each (tests/kill_saves.sh)" \
            sh -c "$CC -O2 -Wall -Wextra tests/save_loop.c -o build/save_loop -lm && sh tests/kill_saves.sh build"
        try "attnlab train compares two kinds (Welch) and draws the paper's plateau" sh -c \
            "./build/attnlab train --seeds 2 --epochs 20 --eval-every 10 --eval-early 20 --plateau 0.55 --final-test 50 \
             --threads 1 --svg $tmp/cmp.svg 2>/dev/null | grep -q 'final accuracy: .* t = ' && grep -q 'paper.s plateau' $tmp/cmp.svg"
        try "attnlab lm --save, then attnlab sample: the same seed gives the same text" sh -c \
            "./build/attnlab lm --variants softmax --seeds 1 --steps 40 --layers 1 --dmodel 32 --heads 2 --ctx 32 \
             --eval-every 20 --threads 1 --save $tmp/lm.ckpt >/dev/null 2>&1 && \
             ./build/attnlab sample --load $tmp/lm.ckpt --prompt 'The ' --tokens 20 --top-k 5 --seed 3 >$tmp/s1 2>/dev/null && \
             ./build/attnlab sample --load $tmp/lm.ckpt --prompt 'The ' --tokens 20 --top-k 5 --seed 3 >$tmp/s2 2>/dev/null && \
             cmp -s $tmp/s1 $tmp/s2 && [ \$(wc -c <$tmp/s1) -gt 4 ]"
        refuse "sampling without a model" ./build/attnlab sample --prompt x
        try "attnlab convert: the checkpoint to Llama's layout and back, the same text sampled from all three" sh -c \
            "./build/attnlab convert --no-doc-mask $tmp/lm.ckpt $tmp/lm_hf >/dev/null && \
             ./build/attnlab convert $tmp/lm_hf $tmp/lm_back.ckpt >/dev/null && \
             ./build/attnlab sample --load $tmp/lm_hf --prompt 'The ' --tokens 20 --top-k 5 --seed 3 >$tmp/s3 2>/dev/null && \
             ./build/attnlab sample --load $tmp/lm_back.ckpt --prompt 'The ' --tokens 20 --top-k 5 --seed 3 >$tmp/s4 \
                 2>/dev/null && cmp -s $tmp/s1 $tmp/s3 && cmp -s $tmp/s1 $tmp/s4"
        try "attnlab convert refuses document masking by name and leaves no directory" sh -c \
            "! ./build/attnlab convert $tmp/lm.ckpt $tmp/lm_hf2 2>$tmp/cv_err && grep -q 'document masking' $tmp/cv_err && \
             [ ! -e $tmp/lm_hf2 ]"
        refuse "attnlab convert without OUT" ./build/attnlab convert $tmp/lm.ckpt
        try "attnlab --version and attnlab help COMMAND" sh -c \
            "./build/attnlab --version | grep -q 'attn.h' && ./build/attnlab help lm | grep -q 'usage: attnlab lm'"
        try "every preset takes --out DIR (checked by --dry-run)" sh -c "for p in hyla-fuzzy hyla-sraven cog-lm cog-probes \
            seq2seq thesis E1; do ./build/attnlab preset \$p --quick --out $tmp/preset_out --dry-run >/dev/null 2>&1 || exit 1; done"
        refuse "--sources without --analysis" ./build/attnlab seq2seq --sources 3
        try "the thesis' analysis over 2 models x 2 sources: every distance kept, the first source's as alone" sh -c \
            "S='seq2seq --steps 20 --dmodel 32 --heads 8 --test 20 --eval-every 20 --threads 1 --analysis --candidates 4' && \
             ./build/attnlab \$S --seeds 2 --sources 2 --analysis-csv $tmp/an2.csv >/dev/null 2>&1 && \
             ./build/attnlab \$S --seeds 1 --analysis-csv $tmp/an1.csv >/dev/null 2>&1 && \
             test \$(wc -l < $tmp/an2.csv) = 65 && test \$(wc -l < $tmp/an1.csv) = 17 && \
             grep '^softmax,0,0,' $tmp/an1.csv > $tmp/an1.rows && grep '^softmax,0,0,' $tmp/an2.csv | cmp -s - $tmp/an1.rows"
        try "attnlab lm's probes over 3 prompts: a CSV row per model, task and n; the first prompt alone is the default" \
            sh -c "L='lm --corpus examples/data/sample.txt --variants softmax,cog-all --layers 2 --dmodel 32 --heads 2 \
             --ctx 64 --batch 4 --steps 20 --eval-every 10 --seeds 3 --threads 1' && \
             ./build/attnlab \$L --probe-prompts 3 --probe-csv $tmp/pp3.csv >$tmp/pp3.out 2>/dev/null && \
             ./build/attnlab \$L --probe-csv $tmp/pp1.csv >/dev/null 2>&1 && \
             ./build/attnlab \$L --probe-prompts 1 --probe-csv $tmp/pp1b.csv >/dev/null 2>&1 && \
             test \$(wc -l < $tmp/pp3.csv) = 61 && cmp -s $tmp/pp1.csv $tmp/pp1b.csv && ! cmp -s $tmp/pp1.csv $tmp/pp3.csv && \
             grep -q 'zero n [0-9]*, cog-all - softmax: .*paired t over 3 seeds' $tmp/pp3.out"
        if command -v python3 >/dev/null 2>&1; then
            try "attnlab lm's paired test of the probes is tools/stats.py's on its CSV" sh -c "python3 -c \"
import csv, sys; sys.path.insert(0, 'tools'); import stats
r = list(csv.DictReader(open('$tmp/pp3.csv'))); n = max(int(x['n']) for x in r)
v = {(x['variant'], x['seed']): float(x['paper']) for x in r if x['task'] == 'zero' and int(x['n']) == n}
m, (lo, hi), t, df, p = stats.paired([v['cog-all', str(s)] - v['softmax', str(s)] for s in range(3)])
print('zero n %d, cog-all - softmax: %+.3f [%.3f, %.3f]' % (n, m, lo, hi))\" > $tmp/pp3.py && grep -qF -f $tmp/pp3.py $tmp/pp3.out"
        fi
        try "the latent-code probe finds the terms in its positive control (F1 above chance + 0.1)" sh -c \
            "./build/attnlab train --task fuzzy --attn softmax --steps 5 --seeds 1 --eval-every 5 --eval-tasks 512 \
             --threads 1 2>/dev/null | awk '/chance .* control/ { c = \$(NF - 2); k = \$NF; ok = k > c + 0.1 } END { exit !ok }'"
        try "the expressive-attention controls run: --qk-input raw --init-gain 0.5 --loss mean" sh -c \
            "./build/attnlab train --qk-input raw --init-gain 0.5 --loss mean --epochs 10 --seeds 1 --final-test 20 --threads 1 \
             >/dev/null 2>&1"
        try "the sparse patterns from attnlab: Linformer (fuzzy), BigBird (NT decoder, lm), multi-query (lm)" sh -c \
            "./build/attnlab train --task fuzzy --attn softmax --linformer-k 8 --steps 20 --seeds 1 --eval-every 10 \
             --eval-tasks 64 --threads 1 --csv $tmp/lin.csv >/dev/null 2>&1 && grep -q softmax $tmp/lin.csv && \
             ./build/attnlab train --model decoder --bigbird-block 4 --bigbird-random 1 --epochs 10 --seeds 1 \
             --final-test 20 --threads 1 >/dev/null 2>&1 && \
             ./build/attnlab lm --variants softmax --seeds 1 --steps 10 --layers 1 --dmodel 32 --heads 2 --ctx 32 \
             --bigbird-block 8 --bigbird-random 1 --threads 1 >/dev/null 2>&1 && \
             ./build/attnlab lm --variants softmax --seeds 1 --steps 10 --layers 1 --dmodel 32 --heads 4 --ctx 32 \
             --kv-heads 1 --threads 1 >/dev/null 2>&1"
        try "a diverged run (all parameters NaN) skips its steps and outputs: the same CSV and report as computing them" \
            sh -c "./build/attnlab train --N 16 --ncon 16 --lr 50 --epochs 300 --seeds 2 --eval-every 50 --final-test 100 \
             --threads 1 --csv $tmp/nan.csv >$tmp/nan0.out 2>/dev/null && grep -q nan $tmp/nan.csv && \
             mv $tmp/nan.csv $tmp/nan0.csv && ./build/attnlab train --N 16 --ncon 16 --lr 50 --epochs 300 --seeds 2 \
             --eval-every 50 --final-test 100 --threads 1 --full-nan 1 --csv $tmp/nan.csv >$tmp/nan1.out 2>/dev/null && \
             cmp -s $tmp/nan0.csv $tmp/nan.csv && cmp -s $tmp/nan0.out $tmp/nan1.out"
        refuse "Linformer in a causal model (the NT decoder)" ./build/attnlab train --model decoder --linformer-k 4 --epochs 2
        refuse "a negative BigBird block" ./build/attnlab train --model decoder --bigbird-block -1
        refuse "a qk input other than ln or raw" ./build/attnlab train --qk-input both
        refuse "an initial gain of 0" ./build/attnlab train --init-gain 0
        refuse "an ambiguity check with 9 features" ./build/attnlab ambiguity --K 9
        try "attnlab plot: a figure redrawn from a grid's CSV, mean and band over seeds, one curve per value" sh -c \
            "./build/attnlab plot --csv docs/data/hyla_fuzzy_grid_5000.csv --where lr=0.001 --where wd=0.1 --y heldout \
             --loss loss --svg $tmp/plot.svg | grep -q '3 curve(s), up to 3 run(s) per point' && grep -q 'hyla (n = 3)' $tmp/plot.svg"
        refuse "attnlab plot with a column the CSV lacks" ./build/attnlab plot --csv docs/data/hyla_fuzzy_grid_5000.csv \
            --y nosuch --svg $tmp/plot2.svg
        refuse "attnlab plot when no row matches" ./build/attnlab plot --csv docs/data/hyla_fuzzy_grid_5000.csv \
            --where lr=7 --y heldout --svg $tmp/plot3.svg
        try "attnlab ambiguity: both definitions beside Table A2" sh -c \
            "./build/attnlab ambiguity --runs 2 --samples 512 2>/dev/null | grep -q '| every feature | .* | 0.32% +- 0.09% |'"
        refuse "quickstart --steps abc" ./build/quickstart --steps abc
        try "attnlab train: longer final rollouts (--rollout-len, --rollout-series), the teacher-forced numbers unchanged" sh -c \
            "a=\$(./build/attnlab train --ncon 16 --seeds 1 --epochs 20 --final-test 50 --threads 1 2>/dev/null | grep '^ea ' | cut -c1-28) &&
             ./build/attnlab train --ncon 16 --seeds 1 --epochs 20 --final-test 50 --rollout-len 100 --rollout-series 20 --threads 1 \
                 2>/dev/null > $tmp/rollout.txt && grep -q 'rollouts of 100 tokens on up to 20' $tmp/rollout.txt &&
             [ \"\$(grep '^ea ' $tmp/rollout.txt | cut -c1-28)\" = \"\$a\" ] &&
             ! ./build/attnlab train --rollout-series 0 --dry-run 2>/dev/null"
        try "attnlab takes --opt=value" sh -c "./build/attnlab census --task=nt --N=16 --tau=2 | grep -q '64x56'"
        # an interrupted run leaves a well-formed CSV prefix: a line per evaluation as it happens
        ./build/attnlab train --attn softmax --seeds 1 --epochs 1000000 --eval-every 1 --threads 1 --csv "$tmp/int.csv" \
            >/dev/null 2>&1 &
        pid=$!
        sleep 2
        kill -TERM $pid 2>/dev/null
        wait $pid
        try "an interrupted run's CSV is a well-formed prefix" sh -c \
            "[ \$(wc -l <'$tmp/int.csv') -ge 3 ] && awk -F, 'NF != 7 { exit 1 }' '$tmp/int.csv'"
        # --resume: a run killed (-9) mid-grid, resumed, ends with the uninterrupted run's CSV and table; a
        # journal written by another command line is refused, and so is --resume without a CSV
        R="train --task nt --N 4 --tau 2 --ncon 8 --attn softmax,ea --seeds 3 --epochs 4000 --eval-every 500 --final-test 50"
        ./build/attnlab $R --threads 1 --csv "$tmp/full.csv" >"$tmp/full.out" 2>/dev/null
        ./build/attnlab $R --threads 1 --csv "$tmp/res.csv" >/dev/null 2>&1 &
        pid=$!
        i=0
        while [ $i -lt 200 ] && [ "$(cat "$tmp/res.csv.jobs" 2>/dev/null | wc -c)" -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
        kill -9 $pid 2>/dev/null
        wait $pid 2>/dev/null
        try "--resume after a kill -9: only the missing runs, then the uninterrupted run's CSV and table" sh -c \
            "./build/attnlab $R --threads 2 --csv '$tmp/res.csv' --resume >'$tmp/res.out' 2>'$tmp/res.err' &&
             grep -q -- '--resume: [1-5] of 6 runs were done already' '$tmp/res.err' && cmp '$tmp/full.csv' '$tmp/res.csv' &&
             [ \"\$(grep -v '^wrote' '$tmp/full.out')\" = \"\$(grep -v '^wrote' '$tmp/res.out')\" ]"
        try "--resume refuses another command line's journal (the CSV untouched), and needs --csv" sh -c \
            "! ./build/attnlab $R --seeds 2 --csv '$tmp/res.csv' --resume >/dev/null 2>'$tmp/res.err' &&
             grep -q 'written by another command line' '$tmp/res.err' && cmp '$tmp/full.csv' '$tmp/res.csv' &&
             ! ./build/attnlab $R --resume >/dev/null 2>'$tmp/res.err' && grep -q -- '--resume needs --csv' '$tmp/res.err'"
        # --snapshot-every: a run killed (-9) after its third evaluation (so after a snapshot) goes on from
        # it under --resume and ends with the uninterrupted run's bits (fuzzy, NT, lm: three snapshot codes)
        snapcheck() {
            ./build/attnlab "$@" --csv "$tmp/sfull.csv" >"$tmp/sfull.out" 2>/dev/null
            rm -f "$tmp/spart.csv"*
            ./build/attnlab "$@" --csv "$tmp/spart.csv" >/dev/null 2>&1 &
            pid=$!
            i=0
            while [ $i -lt 600 ] && [ "$(cat "$tmp/spart.csv" 2>/dev/null | wc -l)" -lt 4 ]; do sleep 0.02; i=$((i + 1)); done
            kill -9 $pid 2>/dev/null
            wait $pid 2>/dev/null
            try "--snapshot-every, a kill -9, --resume: on from the snapshot, the uninterrupted run's CSV and table: $1 $3" sh -c \
                "[ -f '$tmp/spart.csv.run-0' ] && ./build/attnlab $* --csv '$tmp/spart.csv' --resume >'$tmp/spart.out' 2>'$tmp/spart.err' &&
                 grep -q 'run 0 goes on from its snapshot at step [1-9]' '$tmp/spart.err' && cmp '$tmp/sfull.csv' '$tmp/spart.csv' &&
                 [ \"\$(grep -v '^wrote' '$tmp/sfull.out')\" = \"\$(grep -v '^wrote' '$tmp/spart.out')\" ] && [ ! -f '$tmp/spart.csv.run-0' ]"
        }
        snapcheck train --task fuzzy --attn softmax --steps 200 --seeds 1 --eval-every 50 --eval-tasks 32 --threads 1 --snapshot-every 40
        snapcheck train --task nt --N 4 --tau 2 --ncon 8 --attn softmax --seeds 1 --epochs 3000 --eval-every 250 --final-test 50 \
            --snapshot-every 200 --threads 1
        snapcheck lm --corpus examples/data/sample.txt --variants softmax --seeds 1 --steps 120 --layers 1 --dmodel 32 --heads 2 \
            --ctx 32 --eval-every 30 --snapshot-every 20 --threads 1
        # data-parallel training sums the chunks' gradients as scaled integers: without dropout (which
        # draws per chunk) its curve is the plain run's to float rounding
        D="train --task fuzzy --attn softmax --steps 40 --seeds 1 --eval-every 10 --eval-tasks 32 --dropout 0 --threads 1"
        try "--data-parallel (5 chunks): the plain run's curve within 1e-4" sh -c \
            "./build/attnlab $D --csv '$tmp/plain.csv' >/dev/null 2>&1 &&
             ./build/attnlab $D --data-parallel --dp-chunks 5 --csv '$tmp/dp.csv' >/dev/null 2>&1 &&
             paste -d, '$tmp/plain.csv' '$tmp/dp.csv' | awk -F, 'NR > 1 { for (i = 6; i <= 8; i++) { d = \$i - \$(i + 8);
                 if (d > 1e-4 || d < -1e-4) exit 1 } n++ } END { exit n != 5 }'"
        refuse "--data-parallel for a command without it" ./build/attnlab seq2seq --data-parallel
        refuse "--data-parallel with a step per prediction" ./build/attnlab train --update sample --data-parallel
        try "attnlab census" sh -c "./build/attnlab census --task nt --N 16 --tau 2 | grep -q '64x56 16x28 4x14 1x7 1x1'"
        try "attnlab seq2seq, a few steps" ./build/attnlab seq2seq --steps 4 --seeds 1 --test 8 --eval-every 2 --dmodel 16 --heads 2 --threads 1
    else
        echo "skip: build/attnlab not built"
    fi
    try "every public function has a bad-input row or a stated reason it has none (tests/public_coverage.sh)" \
        sh tests/public_coverage.sh
    try "docs/interop.md's C example decodes tests/data/gpt2_tiny and saves it (tests/interop_example.sh)" \
        sh tests/interop_example.sh "$CC" "$tmp"
    if command -v python3 >/dev/null 2>&1; then
        try "the papers' statistics (tools/stats.py) against values worked by hand" python3 tools/stats.py --self-test
        try "docs/verdicts.md is what make verdicts derives from docs/data" sh -c \
            "python3 tools/verdicts.py docs/data $tmp/verdicts.md >/dev/null && cmp -s $tmp/verdicts.md docs/verdicts.md"
    else echo "skip: python3 not installed (the check of tools/stats.py)"; fi
    if python3 -c "import safetensors.numpy" >/dev/null 2>&1; then
        try "safetensors: Hugging Face's library and attn.h read each other's files (tests/safetensors_check.py)" sh -c \
            "$CC -O2 -Wall -Wextra tests/st_tool.c -o $tmp/st_tool -lm && python3 tests/safetensors_check.py $tmp/st_tool"
        try "GPT-2 in Hugging Face's layout: attn.h's logits against a numpy GPT-2, its export exact (tests/gpt2_check.py)" \
            sh -c "$CC -O2 -Wall -Wextra tests/hf_tool.c -o $tmp/hf_tool -lm && python3 tests/gpt2_check.py check $tmp/hf_tool"
        try "Llama in Hugging Face's layout: attn.h's logits against a numpy Llama (tests/llama_check.py)" \
            sh -c "$CC -O2 -Wall -Wextra tests/hf_tool.c -o $tmp/hf_tool -lm && python3 tests/llama_check.py check $tmp/hf_tool"
        try "BERT in Hugging Face's layout: attn.h's sentence embeddings against a numpy BERT (tests/bert_check.py)" \
            sh -c "$CC -O2 -Wall -Wextra tests/hf_tool.c -o $tmp/hf_tool -lm && python3 tests/bert_check.py check $tmp/hf_tool"
    else echo "skip: python3 with safetensors and numpy not installed (the safetensors, GPT-2, Llama and BERT cross-checks)"; fi
    # the fuzz targets' committed corpora (seeds and every input a fuzzing run found), replayed
    for t in checkpoint loaders kinds mods kv safetensors wordpiece; do
        try "fuzz corpus replays: $t" sh -c "$CC -O1 -g -DFUZZ_REPLAY -DATTN_NO_DISPATCH tests/fuzz/fuzz_$t.c -o $tmp/replay_$t \
            -lm && $tmp/replay_$t tests/fuzz/corpus/$t/*"
    done
    try "fuzz corpus replays: options" sh -c "$CC -O1 -g -DFUZZ_REPLAY -DATTN_NO_DISPATCH -Dmain=attnlab_main \
        tests/fuzz/fuzz_options.c examples/attnlab.c \
        examples/hyla.c examples/lm.c examples/seq2seq.c examples/embed.c examples/jobs.c -o $tmp/replay_options -lm && $tmp/replay_options tests/fuzz/corpus/options/*"
    echo "compile matrix, example and driver: $pass passed, $fail failed"
fi

for prog in "$@"; do
    echo "== $prog"
    $prog >"$tmp/prog_out" 2>&1
    status=$?
    grep -v '^attn.h ' "$tmp/prog_out" | grep -v ' passed, ' | head -40
    head -1 "$tmp/prog_out"
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$tmp/prog_out" | tail -1)
    if [ -z "$line" ]; then
        bad "$prog: no result line (exit status $status)"
        tail -5 "$tmp/prog_out"
        continue
    fi
    echo "$line"
    p=$(echo "$line" | sed 's/ passed.*//')
    f=$(echo "$line" | sed 's/.*passed, //; s/ failed.*//')
    pass=$((pass + p))
    fail=$((fail + f))
    [ "$status" -ne 0 ] && [ "$f" -eq 0 ] && bad "$prog: exit status $status"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
