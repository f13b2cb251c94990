"""The cost model of docs/scaling.md: predicted wall time of the HYLA paper's Table A1 fuzzy column at
its full protocol and of one SRAVEN run at the paper's budget, on R ranks, from figures measured on
one machine (bench/scaling.sh, bench_mpi) and an assumed network.

    python3 tools/scaling_model.py FUZZY_STEP SRAVEN_STEP FUZZY_DP16,64,128 SRAVEN_DP16,64,128 [BW_GBS LATENCY_US]

FUZZY_STEP, SRAVEN_STEP: a plain training step on one thread (batch 128), seconds.
FUZZY_DP16,64,128 (and SRAVEN's): a data-parallel step on one rank with 16, 64 and 128 chunks
  (chunks of 8, 2 and 1 sequences), seconds; a chunk costs that step / C (the measured figure, so
  small chunks carry their own inefficiency).
BW_GBS, LATENCY_US: the network's all-reduce bandwidth and per-message latency [10 GB/s, 5 us: about
  100 Gb/s InfiniBand]. The all-reduce is a ring: 2 (R - 1) / R of the int64 block over the bandwidth
  plus 2 (R - 1) latencies; the step's two small reductions add 2 log2(R) latencies.

Grid mode (attnlab-mpi without --data-parallel): J runs of equal length on R ranks take
ceil(J / R) run lengths. Data-parallel mode: a run's step takes ceil(C / R) chunks plus the
all-reduce, with C = 16 chunks up to 16 ranks, 64 up to 64, 128 beyond (a batch of 128 has at most
128); the runs go one after another. Each configuration's faster mode is in bold."""
import math, sys

if len(sys.argv) < 5:
    sys.exit(__doc__)
fuzzy_step, sraven_step = float(sys.argv[1]), float(sys.argv[2])
dp1 = {"fuzzy": [float(x) for x in sys.argv[3].split(",")], "sraven": [float(x) for x in sys.argv[4].split(",")]}
bw = (float(sys.argv[5]) if len(sys.argv) > 5 else 10.0) * 1e9
lat = (float(sys.argv[6]) if len(sys.argv) > 6 else 5.0) * 1e-6
P = {"fuzzy": 151265, "sraven": 402824}
BATCH = 128


def allreduce(n, R):
    if R == 1:
        return 0.0
    return 2 * (R - 1) / R * 8 * n / bw + 2 * (R - 1) * lat + 2 * math.log2(R) * lat


def dp_step(task, R):
    i = 0 if R <= 16 else 1 if R <= 64 else 2  # 16, 64 or 128 chunks
    C = (16, 64, 128)[i]
    return math.ceil(C / R) * dp1[task][i] / C + allreduce(P[task], R)


def hours(s):
    return "%.1f h" % (s / 3600) if s >= 3600 else "%.0f min" % (s / 60)


print("| ranks | Table A1 fuzzy column (120 runs x 50,000 steps): grid | the same: data-parallel | "
      "one SRAVEN run (156,250 steps): data-parallel |")
print("|---:|---:|---:|---:|")
for R in (1, 2, 16, 64, 256):
    grid = math.ceil(120 / R) * 50000 * fuzzy_step
    dp = 120 * 50000 * dp_step("fuzzy", R)
    sr = 156250 * (sraven_step if R == 1 else dp_step("sraven", R))
    g, d = hours(grid), hours(dp)
    if grid <= dp:
        g = "**" + g + "**"
    else:
        d = "**" + d + "**"
    print("| %d | %s | %s | %s |" % (R, g, d, hours(sr)))
