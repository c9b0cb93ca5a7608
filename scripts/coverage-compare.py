#!/usr/bin/env python3
"""coverage-compare.py NAME WORKDIR SRCDIR PLAIN_BIN MDOUT CALLGRIND_OUT...: compares edgeprof's lcov tracefile
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
  The oracle classes below use callgrind's instruction counts of the plain binary on the same
  workload (CALLGRIND_OUT files; tests/oracle/fake_profile.py's reader; a line's callgrind count
  is the largest execution count of the instructions objdump finds in its code, a rep-prefixed
  instruction counted once per execution) and objdump's disassembly; each requires callgrind's
  count of the line to equal edgeprof's, so the difference is in the compiled code, not a miscount:
  executed for gcov only (callgrind: none of the line's -O2 instructions ran)
    after-noreturn edgeprof lists no count (never decoded the code): each of the line's ranges
                  follows a call and is no jump's target (dead code after a call that does not
                  return, e.g. lauxlib.c:448's jmp after luaL_typeerror; padding follows)
    copy-not-called the out-of-line copy holding the line's code never ran at all (no
                  instruction of its symbol ran), the function having run for gcov: its calls
                  were inlined, the copies' code attributed to the line holding none of it
    exit-copy-not-run the function ran, and every range of the line's code ends in a jmp or ret
                  (or padding): a duplicated exit / jump block (tail duplication, jump threading,
                  shared epilogues) of which the run took another copy, attributed to another line
    path-not-run  the function ran, the line's code did not: the statement's work on the path
                  that ran is done by code DWARF attributes to other lines (merged, hoisted, sunk)
  executed for edgeprof only (callgrind: the line's -O2 instructions ran as often as edgeprof says)
    if-converted  an executed instruction of the line is a cmovCC or setCC: the branch gcov
                  counts was replaced by a conditional move run whether or not the statement runs
    shared-block  an executed instruction of the line is in the same basic block (objdump's
                  direct targets and callgrind's jump targets split blocks) as an instruction, run
                  as often, of a line gcov counts executed: hoisted / scheduled into that block
    merged-target the line's executed block is reached, through at most 3 executed blocks, from
                  the code of a line gcov counts executed (callgrind's jumps, or falling through):
                  tail-merged code shared by several source paths, attributed to this line
Anything else is unexplained: listed, and the exit status is 1. Also checks edgeprof's count of
every line against callgrind's (lines that differ are listed but do not fail the check: the two
are separate runs, and lua's string hash seed depends on time and addresses). Also compares, on the lines where
edgeprof sees one conditional jump and gcov lists two branches, the sum and the pair of the
counts. Writes a markdown section to MDOUT and prints a summary."""
import bisect, collections, glob, gzip, json, os, re, subprocess, sys

name, work, srcdir, plain_bin, mdout = sys.argv[1:6]
cg_files = sys.argv[6:]


def linetab(path):
    """(file, line) -> [bytes, ranges, row addresses, [(start, end)]], and the set of (file, line) with any row."""
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
                    e = code.setdefault((fn, ln), [0, 0, set(), []])
                    e[0] += n
                    if prev_end.get((fn, ln)) != a:
                        e[1] += 1
                    prev_end[(fn, ln)] = seq[i + 1][0]
                    e[2].add(a)
                    e[3].append((a, seq[i + 1][0]))
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

# The oracle: callgrind's instruction counts of the plain binary on the same workload
# (tests/oracle/fake_profile.py's reader, which owes nothing to edgeprof), and objdump's
# instructions. A line's callgrind count is the largest count of the instructions in its code.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "oracle"))
from fake_profile import Callgrind, objdump_insns  # noqa: E402

cg = Callgrind(plain_bin)
for f in cg_files:
    cg.load(f)
insns = objdump_insns(plain_bin)
iaddrs = sorted(insns)
# Every row's code, sorted, for the owner of an address.
spans = sorted((a, b, k) for k, e in pcode.items() for a, b in e[3])
span_starts = [x[0] for x in spans]


def owner(a):
    """The (file, line) whose code holds address a, or None."""
    i = bisect.bisect_right(span_starts, a) - 1
    return spans[i][2] if i >= 0 and spans[i][0] <= a < spans[i][1] else None


cgline = collections.Counter()
for a, c in cg.count.items():
    if insns.get(a, "").startswith("rep"):
        # A rep-prefixed instruction counts n + 1 Ir for n iterations, written as n jumps to
        # itself (tests/support/callgrind.c): its executions are the Ir less those jumps.
        c -= cg.jumps.get((a, a), 0)
    k = owner(a)
    if k is not None and c > cgline[k]:
        cgline[k] = c


def line_insns(k):
    """The instruction addresses in line k's -O2 code."""
    out = []
    for a, b in pcode.get(k, [0, 0, set(), []])[3]:
        i = bisect.bisect_left(iaddrs, a)
        while i < len(iaddrs) and iaddrs[i] < b:
            out.append(iaddrs[i])
            i += 1
    return sorted(out)


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


# Basic blocks of the -O2 code for the oracle classes: a block starts at a direct jump or call
# target (objdump), a jump target callgrind saw (indirect jumps), or after a jump, call or ret.
BR = re.compile(r"(j\w+|call\w*|ret\w*|bnd jmp|notrack jmp)\s")
targets = {a for (f, a) in cg.jumps}
for a, m in insns.items():
    t = re.search(r"\s([0-9a-f]+) <", m)
    if BR.match(m + " ") and t:
        targets.add(int(t.group(1), 16))
sym_sorted = sorted((a, n) for n, v in syms.items() for a in v)
sym_starts = [a for a, n in sym_sorted]


def block_of(a):
    """The instruction addresses of the block holding instruction a."""
    i = bisect.bisect_left(iaddrs, a)
    lo = i
    while lo > 0 and iaddrs[lo] not in targets and not BR.match(insns[iaddrs[lo - 1]] + " "):
        lo -= 1
    hi = i
    while hi + 1 < len(iaddrs) and not BR.match(insns[iaddrs[hi]] + " ") and iaddrs[hi + 1] not in targets:
        hi += 1
    return iaddrs[lo:hi + 1]


def sym_entry(a):
    """The entry address of the function symbol holding address a."""
    i = bisect.bisect_right(sym_starts, a) - 1
    return sym_sorted[i][0] if i >= 0 else None


def sym_ran(a):
    """True if some instruction between a's symbol's entry and the next symbol ran."""
    i = bisect.bisect_right(sym_starts, a) - 1
    lo, hi = sym_sorted[i][0], sym_sorted[i + 1][0] if i + 1 < len(sym_sorted) else 1 << 64
    j = bisect.bisect_left(iaddrs, lo)
    while j < len(iaddrs) and iaddrs[j] < hi:
        if cg.count.get(iaddrs[j], 0):
            return True
        j += 1
    return False


def oracle_gcov_only(k):
    """Reasons for a line gcov ran and edgeprof did not, callgrind agreeing with edgeprof."""
    li = line_insns(k)
    if not li or cgline[k] or ours.get(k, 0):
        return None
    if k not in ours:
        prev = [iaddrs[bisect.bisect_left(iaddrs, a) - 1] for a, b in pcode[k][3]]
        if all(insns[p].startswith("call") for p in prev) and not any(a in targets for a, b in pcode[k][3]):
            return "after-noreturn"
    entries = {sym_entry(a) for a in li}
    if all(e is not None and not cg.count.get(e, 0) and not sym_ran(e) for e in entries):
        return "copy-not-called"
    if all(sym_ran(a) for a in li):
        ends = [insns[iaddrs[bisect.bisect_left(iaddrs, b) - 1]] for a, b in pcode[k][3]]
        if all(re.match(r"(jmp|ret|nop|xchg|data16|cs nop)", e) for e in ends):
            return "exit-copy-not-run"
        return "path-not-run"
    return None


def oracle_ours_only(k):
    """Reasons for a line edgeprof ran and gcov did not, callgrind agreeing with edgeprof."""
    if not ours.get(k) or cgline[k] != ours[k]:
        return None
    ran = [a for a in line_insns(k) if cg.count.get(a, 0)]
    if any(re.match(r"(cmov|set)", insns[a]) for a in ran):
        return "if-converted"
    for a in ran:
        for b in block_of(a):
            o = owner(b)
            if o != k and o is not None and theirs.get(o, 0) > 0 and cg.count.get(b, 0) == cg.count[a]:
                return "shared-block"
    # Reached, through at most 3 executed blocks of lines gcov does not count, from the code of
    # a line gcov counts executed (by a jump callgrind saw or by falling through).
    todo, seen = [(block_of(a)[0], 0) for a in ran], set()
    while todo:
        first, d = todo.pop()
        if first in seen or d > 3:
            continue
        seen.add(first)
        srcs = [f for (f, t) in cg.jumps if t == first and cg.jumps[(f, t)] > 0]
        i = bisect.bisect_left(iaddrs, first)
        if i > 0 and cg.count.get(iaddrs[i - 1], 0) and not re.match(r"(jmp|ret)", insns[iaddrs[i - 1]]):
            srcs.append(iaddrs[i - 1])
        for f in srcs:
            o = owner(f)
            if o not in (None, k) and theirs.get(o, 0) > 0:
                return "merged-target"
            todo.append((block_of(f)[0], d + 1))
    return None


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
    return oracle_gcov_only(k)


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
    return oracle_ours_only(k)


# Exactness: edgeprof's count of every line against callgrind's on the same -O2 binary.
exact_keys = sorted(set(ours) | set(cgline))
inexact = [k for k in exact_keys if ours.get(k, 0) != cgline[k]]
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
out.append("- exactness against callgrind on the -O2 binary (same workload; a line's count the largest "
           "of its instructions' executions): edgeprof's line counts equal callgrind's for %d of %d lines "
           "(every line edgeprof lists or callgrind saw run)%s" % (
               len(exact_keys) - len(inexact), len(exact_keys), "; differing (not a failure, listed): " + "; ".join(
                   "%s:%d edgeprof %d callgrind %d" % (k[0], k[1], ours.get(k, 0), cgline[k]) for k in inexact[:20])
               + (" and %d more" % (len(inexact) - 20) if len(inexact) > 20 else "") if inexact else ""))
open(mdout, "w").write("\n".join(out) + "\n")
print("coverage-compare: %s: %d lines executed in both, %d differences explained (%s), %d unexplained" % (
    name, len(oe & te), sum(len(v) for v in classes.values()),
    ", ".join("%s %s %d" % (s, r, len(v)) for (s, r), v in classes.items()), len(unexplained)))
print("coverage-compare: %s: edgeprof's line counts equal callgrind's on %d of %d lines" % (
    name, len(exact_keys) - len(inexact), len(exact_keys)))
for k in inexact:
    print("coverage-compare: %s: count differs from callgrind: %s:%d (edgeprof %d, callgrind %d)" % (
        name, k[0], k[1], ours.get(k, 0), cgline[k]))
for s, k in unexplained:
    print("coverage-compare: %s: unexplained: executed for %s: %s:%d %r (edgeprof %s, gcov %s)" % (
        name, s, k[0], k[1], text(k), ours.get(k, "unlisted"), theirs[k] if k in tlisted else "unlisted"))
sys.exit(1 if unexplained or not oe & te else 0)
