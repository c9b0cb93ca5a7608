#!/usr/bin/env python3
"""coverage-compare.py NAME WORKDIR SRCDIR PLAIN_BIN MDOUT: compares edgeprof's lcov tracefile
(WORKDIR/p.info, of the plain -O2 -g corpus binary PLAIN_BIN) with gcov's JSON reports
(WORKDIR/gcov/*.gcov.json.gz, of the same sources built with --coverage and run on the same
workload), source file by source file (by base name; counts of a file seen by several units
are added up). The sets of executed lines are compared and every difference gets the first
reason below whose mechanical check passes, checked against the DWARF line tables of both
binaries (WORKDIR/plain.lines and WORKDIR/cov.lines, `objdump --dwarf=decodedline --wide`; a
row's code is the bytes up to the next row of its sequence, so a row followed by another at the
same address holds none, which is how libdw, hence edgeprof, attributes an address):
  executed for gcov only
    no-row        the -O2 binary's line table has no row for the line: no machine code
    empty-rows    its rows there all hold no bytes (another row follows at the same address)
    start-moved   a function's start line (gcov counts the function's entry there) whose code
                  in the -O2 binary does not include the function's entry address (the entry
                  is attributed to another line; the start line's code is a prologue part on a
                  path that did not run, as with shrink-wrapping), the function having run
    start-inlined a function's start line, the function having no symbol in the -O2 binary
                  (inlined everywhere): its code there is in inlined copies that did not run
  executed for edgeprof only
    brace-unlisted a closing-brace line gcov lists no count for, to which the -O2 binary's
                  DWARF gives code (the epilogue / return)
    open-unlisted the line holding a function's opening brace (its header's last line), which
                  gcov does not list (it counts the entry on the start line): DWARF gives it
                  the prologue
    gcov-unlisted gcov lists no count for the line although the --coverage binary's own DWARF
                  gives it code (gcov's lines come from the block graph before optimisation,
                  the line table from the final code)
  either way
    codegen       the line's code has another shape in the two binaries: a different number
                  of separate address ranges (code duplicated, merged, specialised: jump
                  threading, tail merging, inlining decisions that --coverage's counters change)
Anything else is unexplained: listed, and the exit status is 1. Also compares, on the lines where
edgeprof sees one conditional jump and gcov lists two branches, the sum and the pair of the
counts. Writes a markdown section to MDOUT and prints a summary."""
import collections, glob, gzip, json, os, re, subprocess, sys

name, work, srcdir, plain_bin, mdout = sys.argv[1:6]


def linetab(path):
    """(file, line) -> [bytes, ranges], and the set of (file, line) with any row."""
    code, rows, seq = {}, set(), []
    for l in open(path):
        f = l.split()
        if len(f) < 3 or not f[2].startswith("0x"):
            continue
        if f[1] == "-":
            seq.append((int(f[2], 16), None, None))
            prev_end = {}
            for i in range(len(seq) - 1):
                a, fn, ln = seq[i]
                rows.add((fn, ln))
                n = seq[i + 1][0] - a
                if n > 0:
                    e = code.setdefault((fn, ln), [0, 0, set()])
                    e[0] += n
                    if prev_end.get((fn, ln)) != a:
                        e[1] += 1
                    prev_end[(fn, ln)] = seq[i + 1][0]
                    e[2].add(a)
            seq = []
        elif f[1].isdigit():
            seq.append((int(f[2], 16), os.path.basename(f[0]), int(f[1])))
    return code, rows


pcode, prows = linetab(os.path.join(work, "plain.lines"))
ccode, crows = linetab(os.path.join(work, "cov.lines"))

ours, fn_line, fn_count, brda, cur = {}, {}, {}, collections.defaultdict(list), None
for l in open(os.path.join(work, "p.info")):
    l = l.strip()
    if l.startswith("SF:"):
        cur = os.path.basename(l[3:])
    elif l.startswith("DA:"):
        a, b = l[3:].split(",")[:2]
        ours[(cur, int(a))] = int(b)
    elif l.startswith("FN:"):
        a, b = l[3:].split(",", 1)
        fn_line[b] = (cur, int(a))
    elif l.startswith("FNDA:"):
        a, b = l[5:].split(",", 1)
        fn_count[b] = fn_count.get(b, 0) + int(a)
    elif l.startswith("BRDA:"):
        f = l[5:].split(",")
        brda[(cur, int(f[0]))].append((f[1], int(f[2]), 0 if f[3] == "-" else int(f[3])))

theirs, tlisted, starts, their_br = collections.Counter(), set(), {}, collections.defaultdict(list)
fn_ranges = collections.defaultdict(list)
for j in sorted(glob.glob(os.path.join(work, "gcov", "*.gcov.json.gz"))):
    for f in json.load(gzip.open(j))["files"]:
        b = os.path.basename(f["file"])
        for fn in f["functions"]:
            starts[(b, fn["start_line"])] = fn
            fn_ranges[b].append((fn["start_line"], fn["end_line"], fn))
        for ln in f["lines"]:
            k = (b, ln["line_number"])
            theirs[k] += ln["count"]
            tlisted.add(k)
            their_br[k] += [x["count"] for x in ln.get("branches", []) if not x["throw"]]

# Symbols of the plain binary: name -> addresses (local functions keep their suffix-less name).
syms = collections.defaultdict(set)
for l in subprocess.run(["nm", plain_bin], capture_output=True, text=True).stdout.split("\n"):
    f = l.split()
    if len(f) == 3 and f[1] in "tTW":
        syms[f[2]].add(int(f[0], 16))

texts = {}


def text(k):
    if k[0] not in texts:
        hits = glob.glob(os.path.join(srcdir, "**", k[0]), recursive=True)
        texts[k[0]] = open(hits[0], errors="replace").read().split("\n") if hits else []
    t = texts[k[0]]
    return t[k[1] - 1].strip() if 0 < k[1] <= len(t) else "?"


def in_header_of(k):
    """True if line k lies between a function's start line and its first statement."""
    for s, e, fn in fn_ranges[k[0]]:
        if s < k[1] <= e and all(not text((k[0], x)).endswith(";") for x in range(s, k[1])):
            return True
    return False


def reason_gcov_only(k):
    if k not in prows:
        return "no-row"
    if k not in pcode:
        return "empty-rows"
    if k in starts:
        fn = starts[k]["name"]
        if fn not in syms and fn not in fn_count:
            return "start-inlined"
        if fn_count.get(fn, 0) > 0 and not (syms.get(fn, set()) & pcode[k][2]):
            return "start-moved"
    if k in ccode and pcode[k][1] != ccode[k][1]:
        return "codegen"
    return None


def reason_ours_only(k):
    t = text(k)
    if k not in tlisted:
        if t.startswith("}") and k in pcode:
            return "brace-unlisted"
        if t.endswith("{") and in_header_of(k):
            return "open-unlisted"
        if k in ccode:
            return "gcov-unlisted"
    if k in ccode and k in pcode and pcode[k][1] != ccode[k][1]:
        return "codegen"
    return None


oe = {k for k, v in ours.items() if v > 0}
te = {k for k, v in theirs.items() if v > 0}
files = sorted({k[0] for k in oe | te})
classes = collections.OrderedDict()
unexplained = []
for side, keys, fn in (("gcov only", te - oe, reason_gcov_only), ("edgeprof only", oe - te, reason_ours_only)):
    for k in sorted(keys):
        r = fn(k)
        if r is None:
            unexplained.append((side, k))
            continue
        classes.setdefault((side, r), []).append(k)

# Branches: one conditional jump for edgeprof, two branches for gcov.
nbr = neq_sum = neq_pair = 0
diff_br = []
for k in sorted(set(brda) & set(their_br)):
    # BRDA's block number is per function: two entries are one jump, more are several.
    if len(brda[k]) != 2 or len(their_br[k]) != 2:
        continue
    nbr += 1
    ep = sorted(b[2] for b in brda[k])
    gc = sorted(their_br[k])
    if sum(ep) == sum(gc):
        neq_sum += 1
    if ep == gc:
        neq_pair += 1
    elif len(diff_br) < 3:
        diff_br.append((k, ep, gc))

out = []
out.append("### %s\n" % name)
out.append("- lines executed in both: %d; executed for gcov only: %d; for edgeprof only: %d "
           "(%d source files)" % (len(oe & te), len(te - oe), len(oe - te), len(files)))
out.append("")
out.append("| side | reason | lines | examples |")
out.append("|---|---|---|---|")
for (side, r), ks in classes.items():
    ex = "; ".join("%s:%d `%s`" % (k[0], k[1], text(k)[:50].replace("|", "\\|")) for k in ks[:3])
    out.append("| %s | %s | %d | %s |" % (side, r, len(ks), ex))
out.append("| either | **unexplained** | %d | %s |" % (
    len(unexplained), "; ".join("%s %s:%d `%s`" % (s, k[0], k[1], text(k)[:40]) for s, k in unexplained[:3])))
out.append("")
out.append("- branches, on the %d lines where edgeprof sees one conditional jump and gcov lists two "
           "branches: equal sums (executions of the condition) on %d, equal (taken, not taken) pairs "
           "on %d%s" % (nbr, neq_sum, neq_pair, "; e.g. " + "; ".join(
               "%s:%d edgeprof %s gcov %s" % (k[0], k[1], e, g) for k, e, g in diff_br) if diff_br else ""))
open(mdout, "w").write("\n".join(out) + "\n")
print("coverage-compare: %s: %d lines executed in both, %d differences explained (%s), %d unexplained" % (
    name, len(oe & te), sum(len(v) for v in classes.values()),
    ", ".join("%s %s %d" % (s, r, len(v)) for (s, r), v in classes.items()), len(unexplained)))
for s, k in unexplained:
    print("coverage-compare: %s: unexplained: executed for %s: %s:%d %r (edgeprof %s, gcov %s)" % (
        name, s, k[0], k[1], text(k), ours.get(k, "unlisted"), theirs[k] if k in tlisted else "unlisted"))
sys.exit(1 if unexplained or not oe & te else 0)
