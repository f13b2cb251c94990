#!/bin/sh
# Regenerates the outputs the docs show: the ``` block right after a line
#   <!-- output of: COMMAND -->
# is replaced by what COMMAND prints (sh -c, from the repository root, after make). --check: exit
# 1 and name the blocks that differ instead of writing (the values are this machine's: another ISA
# rounds differently). --help: this text.
#
#   sh tools/doc_outputs.sh [--check] [FILE...]      (default: README.md docs/*.md)
set -u
case "${1:-}" in -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
check=0
[ "${1:-}" = "--check" ] && { check=1; shift; }
[ $# -gt 0 ] || set -- README.md docs/*.md
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
rc=0
for f in "$@"; do
    grep -q '^<!-- output of: ' "$f" || continue
    awk -v tmp="$tmp" '
        /^<!-- output of: .* -->$/ { print; cmd = $0; sub(/^<!-- output of: /, "", cmd); sub(/ -->$/, "", cmd)
            if ((getline line) <= 0 || line != "```") { print "doc_outputs: no ``` block after: " cmd > "/dev/stderr"; exit 2 }
            print line
            while ((getline line) > 0 && line != "```") ;
            n = 0
            while (((cmd " 2>&1") | getline out) > 0) { print out; n++ }
            st = close(cmd " 2>&1")
            if (n == 0) { print "doc_outputs: no output from: " cmd > "/dev/stderr"; exit 2 }
            print "```"
            next }
        { print }' "$f" >"$tmp/new" || { rc=1; continue; }
    if cmp -s "$f" "$tmp/new"; then continue; fi
    if [ $check = 1 ]; then echo "doc_outputs: $f shows outputs its commands no longer print"; diff "$f" "$tmp/new" | head -20; rc=1
    else cp "$tmp/new" "$f" && echo "doc_outputs: rewrote $f"; fi
done
exit $rc
