"""The expressive-attention control grid as a table: one row per (setting, N_con) from the reports
`attnlab train` printed into DIR/SETTING-nNCON.out (the final table and its Welch comparison).

    python3 tools/ea_grid.py DIR [SETTINGS_FILE]

SETTINGS_FILE lists "name|options" lines (the grid's order and each setting's options). Only
finished runs count (a NAME.done beside the report)."""
import os, re, sys

d = sys.argv[1]
settings = []
if len(sys.argv) > 2:
    for line in open(sys.argv[2]):
        if line.strip():
            name, opts = line.rstrip("\n").split("|", 1)
            settings.append((name, opts.strip() or "(the E1/E2 preset)"))
else:
    settings = sorted({(re.sub(r"-n\d+\.out$", "", f), "") for f in os.listdir(d) if f.endswith(".out")})
row = re.compile(r"^(softmax|ea)\s+([\d.]+) \+- ([\d.]+)\s+([\d.]+) \+- ([\d.]+)\s+(\d+) / (\d+)\s+(never|(\d+) \+- (\d+))")
print("| setting | options | N_con | softmax: final acc, runs at 100%, epochs to 100% | EA: the same | EA − softmax, final accuracy (95% CI, p) | EA − softmax, epochs to 100% | verdict |")
print("|---|---|---:|---|---|---|---|---|")
def num(m):
    return int(m.group(1)) if m and m.group(1) else 0
for name, opts in settings:
    for f in sorted(os.listdir(d), key=lambda f: num(re.search(r"-n(\d+)\.out$", f))):
        m = re.match(re.escape(name) + r"(?:-n(\d+))?\.out$", f)
        if not m or not os.path.exists(os.path.join(d, f[:-4] + ".done")):
            continue  # a run still going, or stopped (its report is partial)
        text = open(os.path.join(d, f)).read()
        cells = {}
        for line in text.splitlines():
            r = row.match(line)
            if r:
                k = r.group(1)
                ep = "never" if r.group(8) == "never" else "%s ± %s" % (r.group(9), r.group(10))
                cells[k] = "%.3f ± %.3f, %s/%s, %s" % (float(r.group(2)), float(r.group(3)), r.group(6), r.group(7), ep)
        text = text.replace("p = 0\n", "p < 1e-15\n")
        fin = re.search(r"final accuracy: (.*)", text)
        diff = re.search(r"epochs to 100%: (.*)", text)
        verdict = re.search(r"verdict: (.*)", text)
        print("| %s | %s | %s | %s | %s | %s | %s | %s |" % (name, opts, m.group(1) or "32", cells.get("softmax", "-"),
              cells.get("ea", "-"), fin.group(1).strip() if fin else "-", diff.group(1).strip() if diff else "-",
              verdict.group(1).strip() if verdict else "-"))
