"""The (lr, wd) grid of an attnlab HYLA run from its CSV: per kind and setting, the final held-out and
validation metric (mean +- sd over seeds, n); the setting the validation metric picks and the one
the held-out metric picks (the paper's optimistic choice); Welch's test between two kinds at their
validation-picked settings.

    python3 tools/grid_table.py grid.csv [KIND_A KIND_B]
"""
import csv, sys, os
sys.path.insert(0, os.path.dirname(__file__))
from welch import ms, welch

rows = list(csv.DictReader(open(sys.argv[1])))
last = {}
for r in rows:
    k = (r["attention"], r["lr"], r["wd"], r["seed"])
    if k not in last or int(r["step"]) > int(last[k]["step"]):
        last[k] = r
cells = {}
for (kind, lr, wd, seed), r in last.items():
    cells.setdefault((kind, lr, wd), []).append((float(r["valid"]), float(r["heldout"])))
kinds = sorted({k[0] for k in cells})
print("| kind | lr | wd | n | validation R² | held-out R² |")
print("|---|---:|---:|---:|---:|---:|")
pick = {}
for kind in kinds:
    best_v = best_h = None
    for (k, lr, wd), v in sorted(cells.items()):
        if k != kind: continue
        mv, sv = ms([x[0] for x in v]); mh, sh = ms([x[1] for x in v])
        print("| %s | %s | %s | %d | %.3f ± %.3f | %.3f ± %.3f |" % (kind, lr, wd, len(v), mv, sv, mh, sh))
        if best_v is None or mv > best_v[0]: best_v = (mv, lr, wd, [x[1] for x in v])
        if best_h is None or mh > best_h[0]: best_h = (mh, lr, wd, [x[1] for x in v])
    pick[kind] = best_v
    mh, sh = ms(best_v[3])
    print("| %s: picked by validation | %s | %s | | | **%.3f ± %.3f** |" % (kind, best_v[1], best_v[2], mh, sh))
    mh, sh = ms(best_h[3])
    print("| %s: picked by held-out (optimistic) | %s | %s | | | %.3f ± %.3f |" % (kind, best_h[1], best_h[2], mh, sh))
if len(sys.argv) > 3:
    a, b = pick[sys.argv[2]], pick[sys.argv[3]]
    d, ci, t, df, p = welch(a[3], b[3])
    if t is None:
        print("\n%s - %s at their validation-picked settings: %+.3f, neither varies: no test" % (sys.argv[3], sys.argv[2], d))
    else:
        print("\n%s - %s at their validation-picked settings: %+.3f, 95%% CI [%+.3f, %+.3f], Welch t = %.2f, df = %.1f, p = %.3g"
              % (sys.argv[3], sys.argv[2], d, ci[0], ci[1], t, df, p))
