#!/bin/sh
# Every public function of attn.h (an ATTNDEF declaration) must have a row in the bad-input table
# (tests/test_badinput.c: BAD, ZERO, NEG, VOID or bad_row) or be listed in its "No bad input" comment
# with the reason. Prints the ones that are in neither and exits 1 if there are any.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed -n '1,/^#ifdef ATTN_IMPLEMENTATION/p' attn.h | grep -v '#define ATTNDEF' | grep -oE 'ATTNDEF[^(]*\(' |
    sed 's/.*[ *]\([a-z_0-9]*\)($/\1/' | sort -u >"$tmp/public"
{
    grep -oE '(BAD|ZERO|NEG|VOID|bad_row)\(.*' tests/test_badinput.c | grep -oE 'attn_[a-z0-9_]+\('
    sed -n '/^\/\* No bad input:/,/\*\//p' tests/test_badinput.c | grep -oE 'attn_[a-z0-9_]+'
} | tr -d '(' | sort -u >"$tmp/covered"
missing=$(comm -23 "$tmp/public" "$tmp/covered")
echo "public functions: $(wc -l <"$tmp/public"), with a bad-input row or a reason: $(comm -12 "$tmp/public" "$tmp/covered" | wc -l)"
[ -z "$missing" ] || { echo "no bad-input row and no reason:" $missing; exit 1; }
