#!/bin/sh
# Saves that survive a kill (run by make test): a checkpoint save, and attnlab's journal and run
# snapshots, each killed (SIGKILL) at 100 moments drawn from a fixed seed. After every kill the
# checkpoint must be the old model or the new one, whole; attnlab --resume must never find a
# snapshot it cannot use; and the run resumed after the last kill must end with the uninterrupted
# run's CSV, byte for byte; a journal torn in the middle keeps the records behind the tear. Ends with "N passed, N failed"; exit status 1 on any failure.
#   sh tests/kill_saves.sh [BUILD_DIR]
B=${1:-build}
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
# 100 delays in seconds, up to 80 ms
delays=$(awk 'BEGIN { srand(42); for (i = 0; i < 100; i++) printf "%.3f ", rand() * 0.08 }')
# killed_after D COMMAND...: runs COMMAND in the background and kills it after D seconds
killed_after() {
    d=$1
    shift
    "$@" 2>>"$tmp/err" >/dev/null &
    p=$!
    sleep "$d"
    kill -9 $p 2>/dev/null
    wait $p 2>/dev/null
}

# 1. attn_checkpoint_save, two models in turn into one path
killed_after 0.3 "$B/save_loop" save "$tmp/m.ckpt"
if "$B/save_loop" check "$tmp/m.ckpt"; then ok; else bad "checkpoint: no whole file to start from"; fi
n=0
for d in $delays; do
    killed_after "$d" "$B/save_loop" save "$tmp/m.ckpt"
    "$B/save_loop" check "$tmp/m.ckpt" 2>>"$tmp/err" || n=$((n + 1))
done
if [ $n -eq 0 ]; then ok; else bad "checkpoint: $n of 100 kills left neither the old nor the new model"; fi

# 2. attnlab's journal (a record per finished run) and snapshots (every 20 epochs of a run)
A="$B/attnlab train --task nt --N 4 --tau 2 --ncon 8 --attn softmax,ea --seeds 4 --epochs 400 --eval-every 50"
A="$A --final-test 50 --threads 1 --snapshot-every 20"
$A --csv "$tmp/full.csv" >/dev/null 2>&1 || bad "attnlab: the uninterrupted run"
: >"$tmp/err"
for d in $delays; do killed_after "$d" $A --csv "$tmp/k.csv" --resume; done
if grep -aq 'not a snapshot\|does not fit\|another command line' "$tmp/err"; then
    bad "attnlab: a kill left a snapshot or journal --resume could not use: $(grep -a 'not a snapshot\|does not fit\|another' "$tmp/err" | head -1)"
else ok; fi
if $A --csv "$tmp/k.csv" --resume >/dev/null 2>"$tmp/last" && cmp -s "$tmp/full.csv" "$tmp/k.csv"; then ok
else bad "attnlab: --resume after 100 kills did not give the uninterrupted run's CSV"; tail -3 "$tmp/last"; fi
# 3. a journal with a torn record in the middle (as an older attnlab left it, appending after a torn
#    record): the records behind it are still read, the torn one is skipped with a warning
mv "$tmp/full.csv" "$tmp/ref.csv" # the journal is kept for its own command line, --csv included
mv "$tmp/full.csv.jobs" "$tmp/ref.jobs"
S=$(wc -c <"$tmp/ref.jobs")
X=$((S / 3))
{ head -c $X "$tmp/ref.jobs"; tail -c +$((X + 51)) "$tmp/ref.jobs"; } >"$tmp/full.csv.jobs"
if $A --csv "$tmp/full.csv" --resume >/dev/null 2>"$tmp/last" && grep -aq 'torn records skipped' "$tmp/last" &&
    cmp -s "$tmp/full.csv" "$tmp/ref.csv"; then ok
else bad "attnlab: a journal with a torn record in the middle"; tail -3 "$tmp/last"; fi
echo "kill_saves: $(grep -ac 'goes on from its snapshot' "$tmp/err") resumes from a snapshot, $(grep -ac 'torn records' "$tmp/err") journals with a torn record"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
