#!/bin/sh
# make test-mpi: attnlab-mpi against attnlab. Each grid (the four commands that run grids) on 1, 2
# and 3 ranks must write the CSV of the single process byte for byte and print the same report;
# data-parallel training (NT, fuzzy, SRAVEN, lm) on 1, 2 and 3 ranks must give the single process's bits, also when killed on
# 2 ranks and resumed from its snapshot on 3; a rank killed
# mid-grid is reported, its run is missing from no table silently, and --resume completes the table. Ends with "N passed, N failed"; exit status 1 on any failure.
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
A=./build/attnlab
M=./build/attnlab-mpi
MPIRUN="timeout 300 mpirun --oversubscribe --allow-run-as-root" # a hang fails the check

ok() { pass=$((pass + 1)); }
# The processes this test started under PID (its mpirun), by id: no other user's runs are touched.
descendants() { for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do echo "$c"; descendants "$c"; done; }
# rank_of PID: the MPI rank of one of them ("" if it is not a rank)
rank_of() { tr '\0' '\n' <"/proc/$1/environ" 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p'; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; for f in "$tmp/err" "$tmp/log"; do [ -s "$f" ] && tail -5 "$f"; done; }
check() { if eval "$2"; then ok; else bad "$1"; fi; }

# grid NAME ARGS: the single process's CSV and report, then 1, 2, 3 ranks
grid() {
    name=$1
    shift
    $A "$@" --threads 1 --csv "$tmp/one.csv" >"$tmp/one.out" 2>"$tmp/err" || { bad "$name: attnlab $*"; return; }
    grep -v '^wrote' "$tmp/one.out" >"$tmp/one.rep"
    for n in 1 2 3; do
        rm -f "$tmp/mpi.csv" "$tmp/mpi.csv.jobs"
        if ! $MPIRUN -n $n $M "$@" --csv "$tmp/mpi.csv" >"$tmp/mpi.out" 2>"$tmp/err"; then bad "$name on $n rank(s): exit status"; continue; fi
        check "$name on $n rank(s): the CSV equals the single process's" "cmp -s '$tmp/one.csv' '$tmp/mpi.csv'"
        grep -v '^wrote' "$tmp/mpi.out" >"$tmp/mpi.rep"
        check "$name on $n rank(s): the report equals the single process's" "cmp -s '$tmp/one.rep' '$tmp/mpi.rep'"
    done
}

if [ ! -x $M ] || [ ! -x $A ]; then
    echo "skip: make test-mpi needs build/attnlab and build/attnlab-mpi (mpicc: openmpi-bin, libopenmpi-dev)"
    exit 0
fi

NT="train --task nt --N 4 --tau 2 --ncon 8 --attn softmax,ea --seeds 3 --epochs 300 --eval-every 100 --final-test 50"
grid "train (NT)" $NT
grid "train --task fuzzy" train --task fuzzy --attn softmax,hyla --steps 30 --seeds 2 --eval-every 15 --eval-tasks 32
grid "seq2seq" seq2seq --attn softmax,ea --steps 40 --seeds 2 --eval-every 20 --test 20 --dmodel 32 --heads 2
grid "lm" lm --corpus examples/data/sample.txt --variants softmax,cog-all --seeds 2 --steps 30 --layers 1 --dmodel 32 --heads 2 \
    --ctx 32 --eval-every 15

# Data-parallel training: the batch's chunks spread over the ranks, the gradient summed exactly, so
# 1, 2 and 3 ranks give the single process's bits: every evaluation in the CSV, and the checkpoints
# that --save writes (rank 0), byte for byte
dp() {
    name=$1
    shift
    rm -rf "$tmp/c1" "$tmp/cn"
    mkdir "$tmp/c1"
    $A "$@" --data-parallel --csv "$tmp/one.csv" --save "$tmp/c1/m.ckpt" >"$tmp/one.out" 2>"$tmp/err" || { bad "$name: attnlab $*"; return; }
    for n in 1 2 3; do
        rm -rf "$tmp/mpi.csv" "$tmp/mpi.csv.jobs" "$tmp/cn"
        mkdir "$tmp/cn"
        if ! $MPIRUN -n $n $M "$@" --data-parallel --csv "$tmp/mpi.csv" --save "$tmp/cn/m.ckpt" >"$tmp/mpi.out" 2>"$tmp/err"; then
            bad "$name, data-parallel on $n rank(s): exit status"
            continue
        fi
        check "$name, data-parallel on $n rank(s): the single process's CSV and checkpoints" \
            "cmp -s '$tmp/one.csv' '$tmp/mpi.csv' && [ -n \"\$(ls '$tmp/cn')\" ] && diff -r '$tmp/c1' '$tmp/cn' >/dev/null"
    done
}
dp "train --task fuzzy" train --task fuzzy --attn softmax,hyla --steps 40 --seeds 2 --eval-every 10 --eval-tasks 32 --dp-chunks 5
dp "train --task sraven" train --task sraven --attn softmax,hyla --steps 20 --seeds 1 --eval-every 10 --eval-tasks 32 \
    --batch 12 --layers 2 --dp-chunks 3
dp "train (NT, the cisformer, a step per epoch)" train --task nt --N 4 --tau 2 --ncon 8 --attn softmax,ea --seeds 2 \
    --epochs 200 --eval-every 50 --final-test 50 --dp-chunks 6
dp "lm" lm --corpus examples/data/sample.txt --variants softmax,cog-all --seeds 1 --steps 30 --layers 1 --dmodel 32 --heads 2 \
    --ctx 32 --eval-every 15 --dp-chunks 4

# A data-parallel run killed on 2 ranks after a snapshot goes on from it on 3 ranks (--resume) and
# ends with the single process's bits
D="train --task fuzzy --attn softmax --steps 200 --seeds 1 --eval-every 50 --eval-tasks 32 --snapshot-every 40 --data-parallel"
$A $D --csv "$tmp/dfull.csv" >/dev/null 2>&1
$MPIRUN -n 2 $M $D --csv "$tmp/dpart.csv" >/dev/null 2>&1 &
mp=$!
i=0
while [ $i -lt 600 ] && ! grep -q '^softmax,.*,50,' "$tmp/dpart.csv" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
for p in $(descendants $mp); do [ -n "$(rank_of "$p")" ] && kill -9 "$p" 2>/dev/null; done
wait
check "a data-parallel run killed on 2 ranks left a snapshot" "[ -f '$tmp/dpart.csv.run-0' ]"
$MPIRUN -n 3 $M $D --csv "$tmp/dpart.csv" --resume >/dev/null 2>"$tmp/err"
check "--resume on 3 ranks: on from the snapshot, the single process's CSV" \
    "grep -aq 'run 0 goes on from its snapshot at step [1-9]' '$tmp/err' && cmp -s '$tmp/dfull.csv' '$tmp/dpart.csv'"

# A rank killed mid-grid (mpirun --enable-recovery keeps the others going): rank 0 reports the run it
# held as lost after --rank-timeout seconds and prints no table; --resume (on 2 ranks) runs only
# what is missing, and the CSV then equals the single process's.
LONG="train --task nt --N 4 --tau 2 --ncon 8 --attn softmax,ea --seeds 4 --epochs 6000 --eval-every 500 --final-test 50"
$A $LONG --threads 1 --csv "$tmp/one.csv" >/dev/null 2>&1
rm -f "$tmp/k.csv" "$tmp/k.csv.jobs"
$MPIRUN --enable-recovery -n 3 $M $LONG --csv "$tmp/k.csv" --rank-timeout 3 >"$tmp/k.out" 2>"$tmp/k.err" &
mp=$!
i=0 # until rank 0's first run has written three evaluations: every rank holds a run by then
while [ $i -lt 300 ] && [ "$(cat "$tmp/k.csv" 2>/dev/null | wc -l)" -lt 4 ]; do sleep 0.1; i=$((i + 1)); done
for p in $(descendants $mp); do [ "$(rank_of "$p")" = 1 ] && kill -9 "$p"; done
wait $mp
check "a killed rank: its run is reported lost" "grep -aq 'rank 1 has sent nothing for 3 s: run [0-9]* is lost' '$tmp/k.err'"
check "a killed rank: no table" "! grep -q '^ea ' '$tmp/k.out' && grep -aq 'failed or were lost' '$tmp/k.err'"
$MPIRUN -n 2 $M $LONG --csv "$tmp/k.csv" --resume >"$tmp/r.out" 2>"$tmp/r.err"
check "--resume after the kill: only the missing runs" "grep -aq -- '--resume: [1-7] of 8 runs were done already' '$tmp/r.err'"
check "--resume after the kill: the table, and the CSV of the single process" \
    "grep -q '^ea ' '$tmp/r.out' && cmp -s '$tmp/one.csv' '$tmp/k.csv'"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
