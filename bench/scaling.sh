#!/bin/sh
# make bench-mpi: the figures of docs/scaling.md on this machine, 1 and 2 ranks (medians of 3 runs):
#   1. the all-reduce of each model's gradient block (build/bench_mpi);
#   2. grid throughput: a 4-run fuzzy grid (softmax, HYLA x 2 seeds) on 1 and 2 ranks;
#   3. data-parallel step time (fuzzy and SRAVEN, --dp-chunks 16): the time of 200 more steps, so
#      that start-up and evaluation cancel, on 1 and 2 ranks, beside the plain single-process step;
#   4. the data-parallel step on one rank with 64 and 128 chunks (of 2 and 1 sequences: what 64 and
#      128 ranks would each compute), for the cost model (tools/scaling_model.py); 60 more steps.
# Usage: sh bench/scaling.sh [BUILD]
B=${1:-build}
MPIRUN="mpirun --oversubscribe --allow-run-as-root"
set -e

med3() { sort -g | sed -n 2p; }
# wall NRANKS ARGS...: seconds of one run (NRANKS 0: plain attnlab)
wall() {
    n=$1
    shift
    t0=$(date +%s.%N)
    if [ "$n" = 0 ]; then $B/attnlab "$@" >/dev/null 2>&1; else $MPIRUN -n "$n" $B/attnlab-mpi "$@" >/dev/null 2>&1; fi
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc -l
}
# step NRANKS TASK-ARGS...: seconds per step (SB steps minus SA steps, / (SB - SA)), median of 3
SA=100
SB=300
step() {
    n=$1
    shift
    for r in 1 2 3; do
        a=$(wall "$n" "$@" --steps $SA --eval-every $SA)
        b=$(wall "$n" "$@" --steps $SB --eval-every $SB)
        echo "($b - $a) / ($SB - $SA)" | bc -l
    done | med3
}

echo "== 1. all-reduce"
$MPIRUN -n 1 $B/bench_mpi
echo
$MPIRUN -n 2 $B/bench_mpi | tail -n +3

echo
echo "== 2. grid throughput: train --task fuzzy --attn softmax,hyla --seeds 2 --steps 300 (4 runs)"
G="train --task fuzzy --attn softmax,hyla --seeds 2 --steps 300 --eval-every 300 --eval-tasks 256"
g1=$(for r in 1 2 3; do wall 1 $G; done | med3)
g2=$(for r in 1 2 3; do wall 2 $G; done | med3)
printf '1 rank: %.2f s, 2 ranks: %.2f s; speed-up %.2f, efficiency %.0f%%\n' "$g1" "$g2" "$(echo "$g1 / $g2" | bc -l)" \
    "$(echo "50 * $g1 / $g2" | bc -l)"

echo
echo "== 3. data-parallel step time (--dp-chunks 16, batch 128), ms per step"
for task in fuzzy sraven; do
    T="train --task $task --attn softmax --seeds 1 --eval-tasks 128 --threads 1"
    p=$(step 0 $T)
    d1=$(step 1 $T --data-parallel)
    d2=$(step 2 $T --data-parallel)
    printf '%s: plain %.1f, data-parallel 1 rank %.1f, 2 ranks %.1f; speed-up %.2f over 1 rank (efficiency %.0f%%), %.2f over plain\n' \
        "$task" "$(echo "1000 * $p" | bc -l)" "$(echo "1000 * $d1" | bc -l)" "$(echo "1000 * $d2" | bc -l)" \
        "$(echo "$d1 / $d2" | bc -l)" "$(echo "50 * $d1 / $d2" | bc -l)" "$(echo "$p / $d2" | bc -l)"
done

echo
echo "== 4. data-parallel step on 1 rank with 64 and 128 chunks, ms per step"
SA=30
SB=90
for task in fuzzy sraven; do
    T="train --task $task --attn softmax --seeds 1 --eval-tasks 128 --threads 1 --data-parallel"
    c64=$(step 0 $T --dp-chunks 64)
    c128=$(step 0 $T --dp-chunks 128)
    printf '%s: 64 chunks %.1f, 128 chunks %.1f\n' "$task" "$(echo "1000 * $c64" | bc -l)" "$(echo "1000 * $c128" | bc -l)"
done
