"""Welch's two-sample t test, for the reproduction reports in docs/: n, mean and sd of each sample,
the difference of the means with its 95% interval, t, the Welch-Satterthwaite degrees of freedom and
the two-sided p value (tools/stats.py computes them; a pair of samples with no spread has no t).

    python3 tools/welch.py A1,A2,A3 B1,B2,B3            # prints B - A
    python3 tools/welch.py --summary mA,sdA,nA mB,sdB,nB  # from means, sds and counts
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stats import mean_sd as ms, t_quantile, t_two_sided, welch  # noqa: E402


def welch_summary(ma, sa, na, mb, sb, nb):
    va, vb = sa * sa / na, sb * sb / nb
    d = mb - ma
    if va + vb == 0:
        return d, (d, d), None, None, None
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / ((va * va / (na - 1)) + (vb * vb / (nb - 1)))
    q = t_quantile(0.975, df)
    return d, (d - q * se, d + q * se), d / se, df, t_two_sided(d / se, df)


def report(d, ci, t, df, p):
    if t is None:
        return "B-A = %.4f; neither sample varies: no test" % d
    return "B-A = %.4f, 95%% CI [%.4f, %.4f], Welch t = %.2f, df = %.2f, p = %.2g" % (d, ci[0], ci[1], t, df, p)


if __name__ == '__main__':
    if len(sys.argv) < 3 or sys.argv[1] in ('-h', '--help'):
        print(__doc__)
        sys.exit(0 if len(sys.argv) > 1 else 2)
    if sys.argv[1] == '--summary':
        A = [float(v) for v in sys.argv[2].split(',')]
        B = [float(v) for v in sys.argv[3].split(',')]
        print(report(*welch_summary(A[0], A[1], int(A[2]), B[0], B[1], int(B[2]))))
        sys.exit(0)
    a = [float(v) for v in sys.argv[1].split(',')]
    b = [float(v) for v in sys.argv[2].split(',')]
    print("A: n=%d mean %.4f sd %.4f; B: n=%d mean %.4f sd %.4f" % (len(a), *ms(a), len(b), *ms(b)))
    print(report(*welch(a, b)))
