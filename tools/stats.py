"""The statistics of the papers' verdicts (docs/methods.md states the rule), standard library only.

    welch(a, b)              difference of means b - a, its 95% interval, t, df, two-sided p
    paired(d)                mean of paired differences d, its 95% interval, t, df, two-sided p
    fisher(ka, na, kb, nb)   two-sided exact test of the counts ka of na against kb of nb
    logrank(ta, ea, tb, eb)  times t with events e (1: reached, 0: censored at t); chi^2 (1 df), p
    km_median(t, e)          Kaplan-Meier median (None if the curve stays above 1/2)
    rmst(t, e, tau)          restricted mean time to the event up to tau (the area under the
                             Kaplan-Meier curve), with its standard error
    holm(ps)                 Holm's step-down adjusted p values, in the order given

    python3 tools/stats.py --self-test     checks each against values computed by hand
p values are computed from the upper tails directly (no 1 - cdf), so small ones are not floored at
the double's epsilon; a difference with no spread in either sample has no t (p None).
"""
import math
import sys


def _betacf(a, b, x):
    tiny, c, qab, qap, qam = 1e-300, 1.0, a + b, a + 1, a - 1
    d = 1 - qab * x / qap
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1 + aa * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1) < 1e-15:
            break
    return h


def ibeta(a, b, x):
    """The regularised incomplete beta function I_x(a, b)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    ln = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1) / (a + b + 2):
        return math.exp(ln) * _betacf(a, b, x) / a
    return 1 - math.exp(ln) * _betacf(b, a, 1 - x) / b


def t_two_sided(t, df):
    """P(|T| >= |t|) for Student's t with df degrees of freedom."""
    return ibeta(df / 2, 0.5, df / (df + t * t))


def t_quantile(p, df):
    lo, hi = 0.0, 1e4
    for _ in range(200):  # the upper quantile: P(T > q) = 1 - p
        mid = (lo + hi) / 2
        if t_two_sided(mid, df) / 2 > 1 - p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def mean_sd(x):
    m = sum(x) / len(x)
    return m, (math.sqrt(sum((v - m) ** 2 for v in x) / (len(x) - 1)) if len(x) > 1 else 0.0)


def welch(a, b):
    """b - a: (difference, (low, high), t, df, p); t, df, p are None when neither sample varies."""
    (ma, sa), (mb, sb) = mean_sd(a), mean_sd(b)
    va, vb = sa * sa / len(a), sb * sb / len(b)
    d = mb - ma
    if va + vb == 0:
        return d, (d, d), None, None, None
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / ((va * va / (len(a) - 1) if len(a) > 1 else 0) + (vb * vb / (len(b) - 1) if len(b) > 1 else 0))
    q = t_quantile(0.975, df)
    return d, (d - q * se, d + q * se), d / se, df, t_two_sided(d / se, df)


def paired(d):
    """The one-sample t-test of paired differences d against 0: (mean, (low, high), t, df, p); t and p
    are None when d does not vary."""
    m, sd = mean_sd(d)
    df = len(d) - 1
    if sd == 0 or df < 1:
        return m, (m, m), None, df, None
    se = sd / math.sqrt(len(d))
    q = t_quantile(0.975, df)
    return m, (m - q * se, m + q * se), m / se, df, t_two_sided(m / se, df)


def fisher(ka, na, kb, nb):
    """Two-sided exact p for ka of na against kb of nb: the tables with the same margins that are
    no more likely than the one observed."""
    k, n = ka + kb, na + nb

    def logp(x):
        return (math.lgamma(k + 1) - math.lgamma(x + 1) - math.lgamma(k - x + 1) + math.lgamma(n - k + 1)
                - math.lgamma(na - x + 1) - math.lgamma(n - k - na + x + 1) - math.lgamma(n + 1)
                + math.lgamma(na + 1) + math.lgamma(nb + 1))

    lo, hi = max(0, k - nb), min(k, na)
    obs = logp(ka)
    return min(1.0, sum(math.exp(logp(x)) for x in range(lo, hi + 1) if logp(x) <= obs + 1e-9))


def logrank(ta, ea, tb, eb):
    """Log-rank test of two samples of times with events (1) or censoring (0): (chi2, p)."""
    times = sorted({t for t, e in zip(ta + tb, ea + eb) if e})
    o_minus_e = var = 0.0
    for t in times:
        na = sum(1 for x in ta if x >= t)
        nb = sum(1 for x in tb if x >= t)
        da = sum(1 for x, e in zip(ta, ea) if x == t and e)
        db = sum(1 for x, e in zip(tb, eb) if x == t and e)
        n, d = na + nb, da + db
        if n < 2:
            continue
        o_minus_e += da - d * na / n
        var += d * (na / n) * (nb / n) * (n - d) / (n - 1)
    if var == 0:
        return 0.0, 1.0
    chi2 = o_minus_e * o_minus_e / var
    return chi2, math.erfc(math.sqrt(chi2 / 2))


def km(t, e):
    """The Kaplan-Meier curve: [(time, survival after it)] at the event times."""
    s, out = 1.0, []
    for x in sorted({x for x, ev in zip(t, e) if ev}):
        at_risk = sum(1 for y in t if y >= x)
        d = sum(1 for y, ev in zip(t, e) if y == x and ev)
        s *= 1 - d / at_risk
        out.append((x, s))
    return out


def km_median(t, e):
    for x, s in km(t, e):
        if s <= 0.5:
            return x
    return None


def rmst(t, e, tau):
    """Restricted mean time to the event up to tau (the area under the Kaplan-Meier curve on [0, tau])
    and its standard error: Var = sum over event times t_j <= tau of A_j^2 d_j / (n_j (n_j - d_j)),
    A_j the area from t_j to tau."""
    steps = [(x, s) for x, s in km(t, e) if x <= tau]
    edges = [0.0] + [x for x, _ in steps] + [tau]
    levels = [1.0] + [s for _, s in steps]  # the curve on [edges[k], edges[k + 1])
    area_from = [0.0] * len(levels)  # the area from edges[k] to tau
    for k in range(len(levels) - 1, -1, -1):
        area_from[k] = levels[k] * (edges[k + 1] - edges[k]) + (area_from[k + 1] if k + 1 < len(levels) else 0.0)
    var = 0.0
    for k, (x, _) in enumerate(steps, start=1):
        n = sum(1 for y in t if y >= x)
        d = sum(1 for y, ev in zip(t, e) if y == x and ev)
        if n > d:
            var += area_from[k] ** 2 * d / (n * (n - d))
    return area_from[0], math.sqrt(var)


def holm(ps):
    """Holm's adjusted p values (the same order as ps; None stays None)."""
    idx = sorted((p, i) for i, p in enumerate(ps) if p is not None)
    m, out, run = len(idx), list(ps), 0.0
    for r, (p, i) in enumerate(idx):
        run = max(run, min(1.0, (m - r) * p))
        out[i] = run
    return out


def self_test():
    ok = True

    def check(cond, what):
        nonlocal ok
        ok = ok and cond
        print(("ok   " if cond else "FAIL ") + what)

    # 16/16 against 9/16: the two tables as unlikely as the one seen, x = 16 and x = 9 successes of
    # 25 in the first 16 of 32, each C(25, 16) / C(32, 16) = 2042975 / 601080390
    check(abs(fisher(16, 16, 9, 16) - 2 * 2042975 / 601080390) < 1e-12,
          "Fisher 16/16 against 9/16: p = %.6f (0.006798)" % fisher(16, 16, 9, 16))
    check(abs(fisher(3, 10, 3, 10) - 1.0) < 1e-12, "Fisher on equal counts: p = 1")
    d, ci, t, df, p = welch([1, 2, 3, 4], [2, 4, 6, 8])
    # t = 2.5 / sqrt(5 / 12 + 20 / 12), df = (25 / 12)^2 / ((5 / 12)^2 / 3 + (20 / 12)^2 / 3); p by
    # Simpson's rule on the t density (2,000,000 panels): 0.151580
    check(abs(t - math.sqrt(3)) < 1e-12 and abs(df - 75 / 17) < 1e-12 and abs(p - 0.151580) < 1e-6,
          "Welch [1..4] vs [2..8]: t %.4f df %.4f p %.6f (1.7321, 4.4118, 0.151580)" % (t, df, p))
    d, ci, t, df, p = welch([1.0, 1.0], [1.0, 1.0])
    check(p is None and d == 0, "Welch with no spread in either sample: no t, no crash")
    p = welch([0.0] * 16, [float(x) for x in range(16)])[4]
    check(p is not None and 0 < p < 1e-4, "Welch's small p from the tail (%.3g)" % p)
    p = t_two_sided(40.0, 30)
    check(0 < p < 1e-25, "t tail p at t = 40, df = 30 is %.3g, not floored at 2.2e-16" % p)
    m, ci, t, df, p = paired([1.0, 2.0, 3.0, 4.0, 5.0])
    # t = 3 / (sqrt(2.5) / sqrt(5)) = 3 sqrt(2), df 4; the 97.5% quantile at df 4 is 2.776445
    check(abs(t - 3 * math.sqrt(2)) < 1e-12 and df == 4 and abs(ci[0] - (3 - 2.776445 / math.sqrt(2))) < 1e-5,
          "paired t of 1..5: t %.4f (4.2426), interval [%.4f, %.4f]" % (t, ci[0], ci[1]))
    chi2, p = logrank([1, 2, 3, 4], [1, 1, 1, 1], [5, 6, 7, 8], [1, 1, 1, 1])
    # O - E = 1/2 + 4/7 + 2/3 + 4/5, V = 1/4 + 12/49 + 2/9 + 4/25 (the first sample's deaths at 1..4)
    oe, v = 0.5 + 4 / 7 + 2 / 3 + 0.8, 0.25 + 12 / 49 + 2 / 9 + 4 / 25
    check(abs(chi2 - oe * oe / v) < 1e-12, "log-rank of 1..4 against 5..8: chi2 %.4f (%.4f by hand)" % (chi2, oe * oe / v))
    check(holm([0.01, 0.04, 0.03]) == [0.03, 0.06, 0.06], "Holm of 0.01, 0.04, 0.03: %s" % holm([0.01, 0.04, 0.03]))
    a, se = rmst([2, 4, 6], [1, 1, 0], 10)
    # S = 1 on [0, 2), 2/3 on [2, 4), 1/3 on [4, 10]; the areas after 2 and 4: 10/3 and 2
    want = math.sqrt((10 / 3) ** 2 / (3 * 2) + 2 ** 2 / (2 * 1))
    check(abs(a - 16 / 3) < 1e-12 and abs(se - want) < 1e-12,
          "RMST of 2, 4, 6+ up to 10: %.4f +- %.4f (5.3333 +- %.4f)" % (a, se, want))
    check(km_median([2, 4, 6], [1, 1, 0]) == 4, "Kaplan-Meier median of 2, 4, 6+: 4")
    return ok


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(0 if self_test() else 1)
    print(__doc__)
