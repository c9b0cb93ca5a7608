#!/usr/bin/env python3
"""lcov_vs_gcov.py INFO GCOV_JSON_GZ SOURCE: compares edgeprof's lcov tracefile INFO of a
program built with -g with what gcov (gcov --json-format -b) says of the same source built with
--coverage and run on the same input, for the file named like SOURCE. Passes when the sets of
executed lines are equal but for these known differences of line attribution:
  - a function's entry: DWARF puts the prologue on the line of its opening brace, gcov counts
    the entry on the line where the function starts (its "start_line"): such a brace line
    only in edgeprof's set, such a start line only in gcov's;
  - a function's exit: DWARF puts the epilogue on the closing brace's line, which gcov does
    not count: such a line only in edgeprof's set;
and, on every line both list where edgeprof has at most one conditional jump, the sum of the
branch counts is the same (at -O0 such a condition is one jump, whose two outcomes are gcov's
two branches; a switch compiled to a tree of compares is several jumps where gcov counts its
case arcs). Prints one summary line,
then the differences."""
import collections, gzip, json, os, sys

info, gj, source = sys.argv[1:4]
name = os.path.basename(source)
text = open(source).read().split("\n")
ours, our_br, our_jumps, cur = {}, collections.Counter(), collections.defaultdict(set), None
for l in open(info):
    l = l.strip()
    if l.startswith("SF:"):
        cur = os.path.basename(l[3:])
    elif cur == name and l.startswith("DA:"):
        a, b = l[3:].split(",")[:2]
        ours[int(a)] = int(b)
    elif cur == name and l.startswith("BRDA:"):
        f = l[5:].split(",")
        our_br[int(f[0])] += 0 if f[3] == "-" else int(f[3])
        our_jumps[int(f[0])].add(f[1])
g = json.load(gzip.open(gj))
theirs, their_br, starts = {}, collections.Counter(), set()
for f in g["files"]:
    if os.path.basename(f["file"]) != name:
        continue
    for fn in f["functions"]:
        starts.add(fn["start_line"])
    for ln in f["lines"]:
        theirs[ln["line_number"]] = ln["count"]
        their_br[ln["line_number"]] += sum(b["count"] for b in ln.get("branches", []))
oe = {l for l, c in ours.items() if c > 0}
te = {l for l, c in theirs.items() if c > 0}
fails = []
brace = lambda l, ch: 0 < l <= len(text) and text[l - 1].strip().startswith(ch)
for l in sorted(oe - te):
    if not (brace(l, "{") or brace(l, "}")):
        fails.append("line %d executed for edgeprof only: %r" % (l, text[l - 1].strip()))
for l in sorted(te - oe):
    if l not in starts:
        fails.append("line %d executed for gcov only: %r" % (l, text[l - 1].strip()))
nbr = 0
for l in sorted(set(our_br) | set(their_br)):
    if l in ours and l in theirs and len(our_jumps[l]) <= 1 and (our_jumps[l] or their_br[l]):
        if our_br[l] == their_br[l]:
            nbr += 1
        else:
            fails.append("line %d: branch counts %d (edgeprof) and %d (gcov)" % (
                l, our_br[l], their_br[l]))
print("%s: %d lines executed for both, %d only for edgeprof (braces), %d only for gcov "
      "(function start lines), branch counts equal on %d lines" % (
          name, len(oe & te), len(oe - te), len(te - oe), nbr))
for f in fails:
    print(f)
sys.exit(1 if fails or not oe & te else 0)
