#!/usr/bin/env python3
"""gen_unicode.py: the Unicode tables of attn.h's WordPiece tokenizer, from the Unicode Character
Database (Debian's unicode-data: /usr/share/unicode), written into attn.h between its markers.

    python3 tools/gen_unicode.py [attn.h] [UCD directory]

BERT's tokenizer, as Hugging Face's tokenizers runs it, reads character classes from Unicode 8.0's
General_Category: characters assigned later count as unassigned (kept as letters), and six
characters recategorised since keep their 8.0 category (below). Decompositions and lower case come
from the database given. Three tables:
  attn__uc_class   (start << 3 | class): the class of every code point from start to the next entry:
                   0 other, 1 deleted (Cc, Cf, Co; not tab, newline, return), 2 white space
                   (White_Space), 3 punctuation (P*, and ASCII's symbols), 4 a non-spacing mark (Mn),
                   5 a CJK ideograph (the ranges BERT pads with spaces)
  attn__uc_decomp1 {code point, c}, attn__uc_decomp3 {code point, c1, c2, c3}: its full canonical
                   decomposition (NFD) with the non-spacing marks removed, when that differs from it,
                   of one character or of two or three (0 after the last); Hangul syllables are
                   computed, not listed
  attn__uc_lower   {start, count, step, delta}: code points start + i step (i < count) lower-case
                   to themselves + delta
"""
import os
import sys

UNICODE_8_CATEGORY = {0x166D: "Po", 0x1734: "Mn", 0x1885: "Lo", 0x1886: "Lo", 0xA9BD: "Mc", 0x111C9: "Po"}
CJK = [(0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
       (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)]
ASCII_PUNCT = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
BEGIN = "/* ---- begin: tables written by tools/gen_unicode.py ---- */\n"
END = "/* ---- end: tables written by tools/gen_unicode.py ---- */\n"


def ranges(path):
    """(lo, hi, value) from a UCD file of 'CODE[..CODE] ; VALUE' lines."""
    for line in open(path, encoding="utf-8"):
        line = line.split("#")[0].strip()
        if line:
            r, v = [x.strip() for x in line.split(";")[:2]]
            lo, hi = (r.split("..") + [r])[:2]
            yield int(lo, 16), int(hi, 16), v


def load(ucd):
    cat, decomp, lower, first = {}, {}, {}, None
    for line in open(os.path.join(ucd, "UnicodeData.txt"), encoding="utf-8"):
        f = line.split(";")
        c = int(f[0], 16)
        if f[1].endswith("First>"):
            first = c
            continue
        for x in range(first if f[1].endswith("Last>") else c, c + 1):
            cat[x] = f[2]
        if f[5] and not f[5].startswith("<"):
            decomp[c] = [int(x, 16) for x in f[5].split()]
        if f[13]:
            lower[c] = int(f[13], 16)
    age = {}
    for lo, hi, v in ranges(os.path.join(ucd, "DerivedAge.txt")):
        for x in range(lo, hi + 1):
            age[x] = tuple(int(n) for n in v.split("."))
    space = set()
    for lo, hi, v in ranges(os.path.join(ucd, "PropList.txt")):
        if v == "White_Space":
            space.update(range(lo, hi + 1))
    return cat, decomp, lower, age, space


def classes(cat, age, space):
    def category(c):
        if c in UNICODE_8_CATEGORY:
            return UNICODE_8_CATEGORY[c]
        return cat.get(c, "Cn") if age.get(c, (99,)) <= (8, 0) else "Cn"

    out = []
    for c in range(0x110000):
        g = category(c)
        if any(lo <= c <= hi for lo, hi in CJK):
            k = 5
        elif c in (9, 10, 13) or (c in space and g[0] != "C"):
            k = 2
        elif g in ("Cc", "Cf", "Co", "Cs") or c == 0xFFFD:
            k = 1
        elif g[0] == "P" or (c < 128 and chr(c) in ASCII_PUNCT):
            k = 3
        elif g == "Mn":
            k = 4
        else:
            k = 0
        out.append(k)
    return out


def nfd(c, decomp):
    if 0xAC00 <= c <= 0xD7A3:
        return [c]  # computed in attn.h
    return [y for x in decomp.get(c, [c]) for y in (nfd(x, decomp) if x != c else [x])]


def lower_runs(lower):
    runs, done = [], set()
    for c in sorted(lower):
        if c in done or lower[c] == c:
            continue
        d, best = lower[c] - c, (1, 1)
        for step in (1, 2):
            k = 1
            while lower.get(c + k * step) == c + k * step + d and c + k * step not in done:
                k += 1
            best = max(best, (k, step))
        done.update(c + i * best[1] for i in range(best[0]))
        runs.append((c, best[0], best[1], d))
    return runs


def rows(items):
    """C initialiser lines of at most 110 columns."""
    lines, cur = [], "   "
    for x in items:
        if len(cur) + len(x) + 2 > 110:
            lines.append(cur)
            cur = "   "
        cur += " " + x + ","
    return "\n".join(lines + [cur]) + "\n"


def main():
    a = sys.argv[1:]
    if a and a[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    header = a[0] if a else "attn.h"
    ucd = a[1] if len(a) > 1 else "/usr/share/unicode"
    cat, decomp, lower, age, space = load(ucd)
    cls = classes(cat, age, space)
    trans = [(c, k) for c, k in enumerate(cls) if c == 0 or cls[c - 1] != k]
    dec1, dec3 = [], []
    for c in range(0x110000):
        d = [x for x in nfd(c, decomp) if cls[x] != 4]
        if d != [c] and cls[c] != 4:
            assert 1 <= len(d) <= 3, (hex(c), d)
            (dec1 if len(d) == 1 else dec3).append([c] + d + [0] * (3 - len(d)))
    low = lower_runs(lower)
    version = open(os.path.join(ucd, "DerivedAge.txt"), encoding="utf-8").readline().strip("# \n")
    text = BEGIN
    text += "/* From %s's Unicode Character Database: %d class runs, %d decompositions, %d lower-case\n" \
            "   runs. */\n" % (version.replace("DerivedAge-", "").replace(".txt", ""), len(trans), len(dec1) + len(dec3), len(low))
    text += "static const uint32_t attn__uc_class[] = {\n"
    text += rows(["0x%x" % (c << 3 | k) for c, k in trans]) + "};\n"
    text += "static const uint32_t attn__uc_decomp1[][2] = {\n"
    text += rows(["{0x%x,0x%x}" % (e[0], e[1]) for e in dec1]) + "};\n"
    text += "static const uint32_t attn__uc_decomp3[][4] = {\n"
    text += rows(["{" + ",".join("0x%x" % x if x else "0" for x in e) + "}" for e in dec3]) + "};\n"
    text += "static const int32_t attn__uc_lower[][4] = {\n"
    text += rows(["{0x%x,%d,%d,%d}" % r for r in low]) + "};\n"
    text += END
    src = open(header, encoding="utf-8").read()
    i, j = src.find(BEGIN), src.find(END)
    if i < 0 or j < i:
        sys.exit("gen_unicode: %s has no '%s' and '%s' markers" % (header, BEGIN.strip(), END.strip()))
    open(header, "w", encoding="utf-8").write(src[:i] + text + src[j + len(END):])
    print("gen_unicode: %d class runs, %d decompositions, %d lower-case runs into %s"
          % (len(trans), len(dec1) + len(dec3), len(low), header))
    return 0


if __name__ == "__main__":
    sys.exit(main())
