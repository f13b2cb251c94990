"""The papers' verdicts, re-derived from the runs' CSVs by the rule of docs/methods.md, as the tables
of docs/verdicts.md (`make verdicts`): the expressive-attention controls, then HYLA, Cog and the
thesis.

    python3 tools/verdicts.py [DATA_DIR] [OUT]     (defaults: docs/data, docs/verdicts.md)

Each grid NAME in DATA_DIR/ea_runs (NAME.csv: attention, seed, epoch, teacher-forced accuracy, loss
per evaluation; NAME.cmd: its command line; NAME.done: finished) is one comparison of EA against
softmax. Per kind: runs at 100% (teacher-forced accuracy 1 at some evaluation) of n, runs that
diverged (a NaN loss), the Kaplan-Meier median and the restricted mean of the epochs to 100% (runs
that do not reach it, diverged ones included, censored at the budget), and the last evaluation's
accuracy. Tests: log-rank on the times, Fisher on the counts, Welch on the last
accuracy; Holm within each family of grids, per outcome.

HYLA (DATA_DIR/hyla_runs, hyla_fuzzy_50000) and Cog (DATA_DIR/cog_runs): the last evaluation's
held-out metric per run, Welch's test against softmax, Holm within each table; a Cog grid with
NAME.probes.csv (attnlab lm --probe-csv) adds its collapse probes, each variant against softmax
paired by seed (the paired t test), Holm over the variants and the two tasks. The thesis
(DATA_DIR/thesis_runs/*.analysis.csv): each model's mean Min_distance over sources and heads with
w 10 and w 3, the paired t-test of their difference over the models. Standard library only
(tools/stats.py)."""
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


def finals(paths, kind_col, metric):
    """{kind: [the metric at each run's last step, in seed order]} from CSVs with a seed and a step."""
    last = {}
    for path in paths:
        with open(path) as f:
            for r in csv.DictReader(f):
                key = (r[kind_col], int(r["seed"]))
                if key not in last or int(r["step"]) >= last[key][0]:
                    last[key] = (int(r["step"]), float(r[metric]))
    out = {}
    for (k, _), (_, v) in sorted(last.items()):
        out.setdefault(k, []).append(v)
    return out


def ms(x):
    m, sd = stats.mean_sd(x)
    return "%.4f ± %.4f (n = %d)" % (m, sd, len(x))


def welch_rows(title, cols, rows, lower_better, claim):
    """A table of Welch tests of each (name, softmax sample, other sample, kind) row, Holm within it.
    claim(difference sign, significant): the verdict text."""
    tests = [stats.welch(a, b) for _, a, b, _ in rows]
    adj = stats.holm([w[4] for w in tests])
    lines = ["## " + title, "", "| " + " | ".join(cols) + " |", "|---|---|---|---|---|---|"]
    for (name, a, b, kind), w, pa in zip(rows, tests, adj):
        small = min(len(a), len(b)) < 3
        sig = pa is not None and pa < ALPHA and not small
        better = (w[0] < 0) == lower_better
        verdict = "pilot (n < 3): no verdict" if small else claim(name, better, sig)
        lines.append("| %s | %s | %s: %s | %+.4f [%+.4f, %+.4f] | %s (%s) | %s |" % (
            name, ms(a), kind, ms(b), w[0], w[1][0], w[1][1], fmt_p(pa), fmt_p(w[4]), verdict))
    return lines + [""]


def hyla_cog(lines):
    hd = os.path.join(DATA, "hyla_runs")
    cols = ["grid", "softmax", "other kind", "other − softmax (95% CI, Welch)", "Holm p (raw p)", "verdict"]
    rows = []
    od = os.path.join(DATA, "hyla_fuzzy_50000")  # one CSV per kind and seed; HYLA's seed 0 rerun in hyla_runs
    old = sorted(os.path.join(od, f) for f in os.listdir(od) if not f.startswith("linear")) if os.path.isdir(od) else []
    if os.path.exists(os.path.join(hd, "fuzzy-50000-lr0.001-hyla-s0.done")):
        old.append(os.path.join(hd, "fuzzy-50000-lr0.001-hyla-s0.csv"))
    if old:
        f = finals(old, "attention", "heldout")
        rows.append(("fuzzy, 50,000 steps, (lr, wd) (1e-3, 0.1)", f["softmax"], f["hyla"], "HYLA"))
    if os.path.exists(os.path.join(hd, "fuzzy-50000-lr0.003-wd0.1.done")):
        f = finals([os.path.join(hd, "fuzzy-50000-lr0.003-wd0.1.csv")], "attention", "heldout")
        rows.append(("fuzzy, 50,000 steps, (lr, wd) (3e-3, 0.1), picked by validation", f["softmax"], f["hyla"], "HYLA"))
    if rows:
        lines += welch_rows("HYLA (Schug et al.): held-out R² at the paper's 50,000 steps; the paper has HYLA ahead "
                            "by 0.178 (81.13 against 63.28)", cols, rows, False,
                            lambda n, better, sig: "**reproduced** (HYLA ahead)" if sig and better else
                            "**reversed** (softmax ahead)" if sig else "inconclusive")
    if os.path.exists(os.path.join(hd, "sraven-10000.done")):
        f = finals([os.path.join(hd, "sraven-10000.csv")], "attention", "heldout")
        lines += welch_rows("HYLA on SRAVEN: held-out accuracy at 10,000 of the paper's 156,250 steps", cols,
                            [("SRAVEN, 10,000 steps, lr 1e-3", f["softmax"], f["hyla"], "HYLA")], False,
                            lambda n, better, sig: "not run at the paper's budget (6.4%%); %s ahead%s" % (
                                "HYLA" if better else "softmax", "" if sig else ", not significant"))
    cd = os.path.join(DATA, "cog_runs")
    if not os.path.isdir(cd):
        return

    def cog_claim(name, better, sig):
        if not name.startswith("cog"):  # the baselines and EA: no claim of the paper
            return ("ahead of softmax" if better else "behind softmax") if sig else "no difference"
        return "**not reproduced** (behind softmax)" if sig and not better else \
            "ahead of softmax" if sig else "inconclusive"
    grids = sorted((f[:-5] for f in os.listdir(cd) if f.endswith(".done")), key=lambda g: ("5000" in g, g))
    for g in grids:
        f = finals([os.path.join(cd, g + ".csv")], "variant", "valid_loss")
        rows = [(v, f["softmax"], f[v], v) for v in f if v != "softmax"]
        cmd = open(os.path.join(cd, g + ".cmd")).read().strip()
        lines += welch_rows("Cog (Lv et al.): validation loss, %s (`%s`); the paper has the Cogformer level with "
                            "softmax" % (g, cmd), cols, rows, True, cog_claim)
        if os.path.exists(os.path.join(cd, g + ".probes.csv")):
            lines += cog_probes(os.path.join(cd, g + ".probes.csv"), g)


def cog_probes(path, g):
    """The collapse probes of a grid (variant, seed, task, n, paper, code per model): at the longest n
    of each task, each variant against softmax paired by seed (one initialisation and batch order),
    the paper's metric; Holm over the variants and tasks. The paper: Cog's outputs collapse less
    (a larger ratio)."""
    rows = list(csv.DictReader(open(path)))
    cols = ["variant", "task, n", "softmax", "variant", "− softmax, paired (95% CI)", "Holm p (raw)",
            "r of the pairs", "verdict"]
    tests = []
    for task in ("zero", "ones"):
        n = max(int(r["n"]) for r in rows if r["task"] == task)
        at = {(r["variant"], int(r["seed"])): float(r["paper"]) for r in rows if r["task"] == task and int(r["n"]) == n}
        seeds = sorted(s for v, s in at if v == "softmax")
        for v in sorted({v for v, _ in at if v != "softmax"}):
            a = [at["softmax", s] for s in seeds]
            b = [at[v, s] for s in seeds]
            tests.append((v, task, n, a, b, stats.paired([y - x for x, y in zip(a, b)])))
    adj = stats.holm([t[5][4] if t[5][4] is not None else 1.0 for t in tests])
    lines = ["## Cog (Lv et al.): collapse probes, %s (`%s`); the paper has Cog collapse less" % (
                 g, open(path[:-len(".probes.csv")] + ".cmd").read().strip()), "",
             "The last output's change with the zero (finding a zero) or with one more one (counting ones) at "
             "the longest n, relative to the shortest (the paper's ΔL∞ ratio; larger: less collapse), each "
             "model's mean over its prompts.", "",
             "| " + " | ".join(cols) + " |", "|---|---|---|---|---|---|---|---|"]
    for (v, task, n, a, b, (m, (lo, hi), _, _, p)), pa in zip(tests, adj):
        ma, sa = stats.mean_sd(a)
        mb, sb = stats.mean_sd(b)
        r = sum((x - ma) * (y - mb) for x, y in zip(a, b)) / ((len(a) - 1) * sa * sb) if sa > 0 and sb > 0 else 0
        sig = pa is not None and pa < ALPHA
        verdict = ("**reproduced** (collapses less)" if m > 0 else "**not reproduced** (collapses more)") if sig \
            else "inconclusive"
        lines.append("| %s | %s, %d | %.3f ± %.3f | %.3f ± %.3f (n = %d) | %+.3f [%+.3f, %+.3f] | %s (%s) | %.2f | %s |" % (
            v, task, n, ma, sa, mb, sb, len(b), m, lo, hi, fmt_p(pa), fmt_p(p), r, verdict))
    return lines + [""]


def thesis(lines):
    td = os.path.join(DATA, "thesis_runs")
    if not os.path.isdir(td):
        return
    for name in sorted(f[:-len(".analysis.csv")] for f in os.listdir(td) if f.endswith(".analysis.csv")):
        if not os.path.exists(os.path.join(td, name + ".done")):
            continue
        per = {}  # (kind, seed) -> {w: [min_distance per (source, head)], "below": {w: heads under |A - 0|}}
        with open(os.path.join(td, name + ".analysis.csv")) as f:
            for r in csv.DictReader(f):
                d = per.setdefault((r["kind"], int(r["seed"])), {3: [], 10: [], "below": {3: 0, 10: 0}})
                w, m = int(r["w"]), float(r["min_distance"])
                d[w].append(m)
                d["below"][w] += m < float(r["zero"])
        lines += ["## The thesis (Conti 2024), Tables 16 and 17: %s" % name, "",
                  "Per model (seed), the mean Min_distance over held-out sources and heads with w 3 (Table 16) "
                  "and w 10 (Table 17); the thesis has 7 of its 8 heads further with w 10. Paired t-test over "
                  "the models.", "",
                  "| kind | models | sources x heads | w 3 | w 10 | w 10 − w 3 (95% CI), p | heads closer with w 10 | "
                  "heads closer than the zero matrix (w 3, w 10) | verdict |",
                  "|---|---:|---:|---|---|---|---|---|---|"]
        for kind in sorted({k for k, _ in per}):
            runs = [per[k] for k in sorted(per) if k[0] == kind]
            m3 = [sum(r[3]) / len(r[3]) for r in runs]
            m10 = [sum(r[10]) / len(r[10]) for r in runs]
            diff = [b - a for a, b in zip(m3, m10)]
            m, ci, t, df, p = stats.paired(diff)
            closer = sum(sum(1 for a, b in zip(r[3], r[10]) if b < a) for r in runs)
            total = sum(len(r[3]) for r in runs)
            sig = p is not None and p < ALPHA and len(runs) >= 3
            verdict = "pilot (n < 3): no verdict" if len(runs) < 3 else \
                "**reproduced** (further with w 10)" if sig and m > 0 else \
                "**reversed** (closer with w 10)" if sig else "inconclusive"
            lines.append("| %s | %d | %d | %s | %s | %+.3f [%+.3f, %+.3f], %s | %d of %d | %d, %d of %d | %s |" % (
                kind, len(runs), len(runs[0][3]), ms(m3), ms(m10), m, ci[0], ci[1], fmt_p(p), closer, total,
                sum(r["below"][3] for r in runs), sum(r["below"][10] for r in runs), total, verdict))
        lines.append("")


def main():
    names = sorted(f[:-5] for f in os.listdir(RUNS) if f.endswith(".done"))
    lines = ["# Verdicts of the papers' experiments",
             "",
             "Generated by `make verdicts` (`python3 tools/verdicts.py`) from the runs in "
             "`docs/data` by the rule of [methods.md](methods.md); do not edit by hand. The expressive-attention "
             "controls first, then HYLA, Cog and the thesis.",
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
    hyla_cog(lines)
    thesis(lines)
    open(OUT, "w").write("\n".join(lines))
    print("wrote %s (%d grids)" % (OUT, len(used)))


if __name__ == "__main__":
    main()
