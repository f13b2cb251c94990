"""The verdicts of the expressive-attention controls, re-derived from the runs' CSVs by the rule of
docs/methods.md, as the tables of docs/verdicts.md (`make verdicts`).

    python3 tools/verdicts.py [DATA_DIR] [OUT]     (defaults: docs/data, docs/verdicts.md)

Each grid NAME in DATA_DIR/ea_runs (NAME.csv: attention, seed, epoch, teacher-forced accuracy, loss
per evaluation; NAME.cmd: its command line; NAME.done: finished) is one comparison of EA against
softmax. Per kind: runs at 100% (teacher-forced accuracy 1 at some evaluation) of n, runs that
diverged (a NaN loss), the Kaplan-Meier median and the restricted mean of the epochs to 100% (runs
that do not reach it, diverged ones included, censored at the budget), and the last evaluation's
accuracy. Tests: log-rank on the times, Fisher on the counts, Welch on the last
accuracy; Holm within each family of grids, per outcome. Standard library only (tools/stats.py)."""
import csv
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stats  # noqa: E402

DATA = sys.argv[1] if len(sys.argv) > 1 else "docs/data"
OUT = sys.argv[2] if len(sys.argv) > 2 else "docs/verdicts.md"
RUNS = os.path.join(DATA, "ea_runs")
ALPHA = 0.05

# The families: grids whose tests are corrected together (Holm), in the order shown.
FAMILIES = [
    ("The initialisation grid (2,000 epochs, 16 seeds per kind)", r"init-(uniform|normal|gain0\.5|gain2)-lr0\.0[12]-n(32|52)$"),
    ("The two initialisations with the most censored runs, at 10,000 epochs (N_con 32)", r"init-.*-e10000$"),
    ("The settings that favoured softmax in the 4-seed screen, at 16 seeds", r"(lr0\.05|mom0\.9|scale4|lnbias)-n(32|52)$"),
    ("E3 and its shortcut control (N_con 55, 56, 57; evaluated every 5 epochs)", r"E3-n\d+-every5$"),
    ("E5 with q, k from the raw input, and E10 (evaluated every 5 epochs)", r"(E5-qkraw|E10)-every5$"),
    ("E11 at N_con 128, the paper's 20,000 epochs (evaluated every 200 epochs)", r"E11-n128-curves$"),
    # the paper's own experiments at 16 seeds, each its own family (a headline claim)
    ("E1: N16T2, N_con 32, 10,000 epochs", r"^E1-rule$"),
    ("E2: N16T2, N_con 52, 2,000 epochs", r"^E2-rule$"),
    ("E4: N16T2, N_con 16, 5,000 epochs", r"^E4-rule$"),
    ("E6: N16T5, N_con 128, 10,000 epochs", r"^E6-rule$"),
    ("E9: NT + NT-S, N_con 32, 5,000 epochs (lr / 4 after 2,500)", r"^E9-rule$"),
    ("E11: NT-R, N_con 64, 20,000 epochs", r"^E11-n64-rule$"),
]


def runs_of(path):
    """{(kind, seed): [(epoch, acc, loss), ...]} in epoch order."""
    out = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            loss = float(r["loss"]) if r["loss"] not in ("nan", "-nan") else math.nan
            out.setdefault((r["attention"], int(r["seed"])), []).append((int(r["epoch"]), float(r["acc_tf"]), loss))
    for v in out.values():
        v.sort()
    return out


def outcomes(curve, budget):
    """(time, event, diverged, last accuracy): the first epoch at 100% (event 1), or the budget
    (event 0: known not to reach 100% in it; a diverged run never can)."""
    for epoch, acc, loss in curve:
        if math.isnan(loss):
            return budget, 0, 1, acc
        if acc >= 0.9999995:
            return epoch, 1, 0, curve[-1][1]
    return budget, 0, 0, curve[-1][1]


def fmt_p(p):
    if p is None:
        return "–"
    return "%.2g" % p if p >= 1e-4 else "%.1e" % p


def summarise(name):
    runs = runs_of(os.path.join(RUNS, name + ".csv"))
    cmd = open(os.path.join(RUNS, name + ".cmd")).read().strip() if os.path.exists(os.path.join(RUNS, name + ".cmd")) else ""
    budget = int(re.search(r"--epochs (\d+)", cmd).group(1)) if "--epochs" in cmd else max(c[-1][0] for c in runs.values())
    kinds = {}
    for (k, _), curve in sorted(runs.items()):
        kinds.setdefault(k, []).append(outcomes(curve, budget))
    s, e = kinds.get("softmax", []), kinds.get("ea", [])
    row = {"name": name, "budget": budget, "n": (len(s), len(e))}
    for key, o in (("softmax", s), ("ea", e)):
        t, ev = [x[0] for x in o], [x[1] for x in o]
        area, se = stats.rmst(t, ev, budget)
        row[key] = {"reached": sum(ev), "diverged": sum(x[2] for x in o), "median": stats.km_median(t, ev),
                    "rmst": (area, se), "acc": stats.mean_sd([x[3] for x in o])}
    row["logrank"] = stats.logrank([x[0] for x in s], [x[1] for x in s], [x[0] for x in e], [x[1] for x in e])[1]
    row["fisher_reach"] = stats.fisher(row["softmax"]["reached"], len(s), row["ea"]["reached"], len(e))
    row["fisher_div"] = stats.fisher(row["softmax"]["diverged"], len(s), row["ea"]["diverged"], len(e))
    row["welch"] = stats.welch([x[3] for x in s], [x[3] for x in e])
    (a, sa), (b, sb) = row["softmax"]["rmst"], row["ea"]["rmst"]
    d, sd = b - a, math.sqrt(sa * sa + sb * sb)
    row["rmst_diff"] = (d, d - 1.96 * sd, d + 1.96 * sd)
    return row


def verdict(r):
    """The time verdict by the rule: which kind reaches 100% first (Holm-adjusted log-rank), and
    whether one is trapped more often (Holm-adjusted Fisher on the counts)."""
    parts = []
    if r["logrank_adj"] is not None and r["logrank_adj"] < ALPHA:
        parts.append("**EA first**" if r["rmst_diff"][0] < 0 else "**softmax first**")
    else:
        parts.append("no difference in time")
    if r["fisher_reach_adj"] < ALPHA:
        parts.append("more EA runs at 100%" if r["ea"]["reached"] > r["softmax"]["reached"] else "more softmax runs at 100%")
    if r["fisher_div_adj"] < ALPHA:
        parts.append("EA diverges more" if r["ea"]["diverged"] > r["softmax"]["diverged"] else "softmax diverges more")
    return "; ".join(parts)


def cell(k):
    med = "never" if k["median"] is None else "%g" % k["median"]
    (m, s), (a, se) = k["acc"], k["rmst"]
    return "%d / %d / %s / %.0f ± %.0f / %.3f ± %.3f" % (k["reached"], k["diverged"], med, a, se, m, s)


def main():
    names = sorted(f[:-5] for f in os.listdir(RUNS) if f.endswith(".done"))
    lines = ["# Verdicts of the expressive-attention controls",
             "",
             "Generated by `make verdicts` (`python3 tools/verdicts.py`) from the runs in "
             "`docs/data/ea_runs` by the rule of [methods.md](methods.md); do not edit by hand.",
             "",
             "Each cell per kind: runs at 100% / runs diverged / Kaplan-Meier median epochs to 100% / "
             "restricted mean epochs to 100% up to the budget ± its standard error / the last "
             "evaluation's teacher-forced accuracy, mean ± sd. n = runs per kind. Tests: log-rank "
             "(time to 100%, non-reaching runs censored), Fisher (runs at 100%, runs diverged), Welch "
             "(last accuracy); p adjusted by Holm within the family and outcome (raw p in brackets).",
             ""]
    used = set()
    for title, pattern in FAMILIES:
        rows = [summarise(n) for n in names if re.search(pattern, n) and n not in used]
        if not rows:
            continue
        used.update(r["name"] for r in rows)
        for key in ("logrank", "fisher_reach", "fisher_div"):
            adj = stats.holm([r[key] if r[key] is not None else 1.0 for r in rows])
            for r, a in zip(rows, adj):
                r[key + "_adj"] = a
        adj = stats.holm([r["welch"][4] if r["welch"][4] is not None else 1.0 for r in rows])
        for r, a in zip(rows, adj):
            r["welch_adj"] = a if r["welch"][4] is not None else None
        lines += ["## " + title, "",
                  "| grid | n | budget | softmax | EA | EA − softmax, restricted mean epochs (95% CI) | log-rank p | "
                  "Fisher p, at 100% | Fisher p, diverged | EA − softmax, last accuracy (95% CI), p | verdict |",
                  "|---|---:|---:|---|---|---|---|---|---|---|---|"]
        for r in rows:
            d, lo, hi = r["rmst_diff"]
            w = r["welch"]
            lines.append("| %s | %d, %d | %d | %s | %s | %+.0f [%+.0f, %+.0f] | %s (%s) | %s (%s) | %s (%s) | %+.3f [%+.3f, %+.3f], %s | %s |" % (
                r["name"], r["n"][0], r["n"][1], r["budget"], cell(r["softmax"]), cell(r["ea"]), d, lo, hi,
                fmt_p(r["logrank_adj"]), fmt_p(r["logrank"]), fmt_p(r["fisher_reach_adj"]), fmt_p(r["fisher_reach"]),
                fmt_p(r["fisher_div_adj"]), fmt_p(r["fisher_div"]), w[0], w[1][0], w[1][1],
                fmt_p(r["welch_adj"]) + (" (%s)" % fmt_p(w[4]) if w[4] is not None else " (no spread)"), verdict(r)))
        lines.append("")
    rest = [n for n in names if n not in used]
    if rest:
        lines += ["Grids in the data that no family takes (one kind only: no comparison): " + ", ".join(rest), ""]
    open(OUT, "w").write("\n".join(lines))
    print("wrote %s (%d grids)" % (OUT, len(used)))


if __name__ == "__main__":
    main()
