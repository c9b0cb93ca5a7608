#!/usr/bin/env python3
"""fdata_compare.py DIR: compares DIR/ep.fdata (edgeprof export --format bolt) with
DIR/bolt.fdata (what an llvm-bolt -instrument -conservative-instrumentation build wrote for the
same run), as sets of records, with DIR/cfg.txt (llvm-bolt -print-cfg of the binary: which
functions BOLT instruments, which entry blocks have no successors) and DIR/dis.txt (objdump -d
--no-show-raw-insn -w of the binary). Passes (exit 0) when every record both have has the same
count and every record only one has is of an explained kind (see tests/export-bolt.sh); prints
one summary line, then the failures. With DIR/ep2.fdata .. ep7.fdata and DIR/bolt2.fdata .. bolt6.fdata,
more runs of the same workload by each (with other data addresses; ep7: the same code linked
at another address), the records of functions that differ between those runs and each one's
first are explained (counts that depend on addresses: lua5.4's string table)."""
import collections, os, re, sys
d = sys.argv[1]

def records(path):
    out = {}
    for line in open(path):
        f = line.split()
        if len(f) != 8:
            sys.exit("bad record in %s: %r" % (path, line))
        out[tuple(f[:6])] = int(f[7])
    return out

bolt, ep = records(d + "/bolt.fdata"), records(d + "/ep.fdata")
# The functions whose records differ between a side's first run and its further runs (with
# other addresses) do not run the same way at other addresses; their records are not compared.
unstable = set()
for first, who in ((ep, "ep"), (bolt, "bolt")):
    for n in range(2, 8):
        path = "%s/%s%d.fdata" % (d, who, n)
        if not os.path.exists(path):
            continue
        again = records(path)
        for k in set(first) | set(again):
            if first.get(k) != again.get(k):
                unstable.add(k[1] if k[0] == "1" else k[4])
# BOLT's view: which functions it instruments, which have an entry block without successors.
simple, no_succ, cur, in_entry = {}, set(), None, False
for line in open(d + "/cfg.txt"):
    m = re.match(r'Binary Function "(.*?)(\(\*\d+\))?" after building cfg', line)
    if m:
        cur, in_entry = m.group(1), False
        continue
    m = re.match(r'\s+IsSimple\s+:\s+(\d)', line)
    if m and cur:
        simple[cur] = m.group(1) == "1"
    if re.match(r'^\.LBB', line):
        in_entry = False
    if cur and "Entry Point" in line:
        in_entry = True
        no_succ.add(cur)
    if in_entry and "Successors:" in line:
        no_succ.discard(cur)
# The instructions of the binary, by function symbol and offset, and the functions that call
# setjmp (their blocks after it run again at each longjmp).
insn, setjmps, base = {}, set(), None
for line in open(d + "/dis.txt"):
    m = re.match(r'([0-9a-f]+) <(.*)>:', line)
    if m:
        base = (m.group(2), int(m.group(1), 16))
        continue
    m = re.match(r'\s+([0-9a-f]+):\s+(.*)', line)
    if m and base:
        insn[(base[0], int(m.group(1), 16) - base[1])] = m.group(2)
        if re.search(r'call\s.*<(_setjmp|setjmp|__sigsetjmp|sigsetjmp)@plt>', m.group(2)):
            setjmps.add(base[0])
plain = lambda bolt_name: re.sub(r'/\d+$', '', bolt_name)

def text(func, off):
    return insn.get((plain(func), int(off, 16)), "")

def entries(recs):
    """Per function, the sum of the records into its start."""
    out = collections.Counter()
    for k, n in recs.items():
        if k[3] == "1" and k[5] == "0":
            out[k[4]] += n
    return out

into_bolt, into_ep = entries(bolt), entries(ep)
# Functions BOLT gives entries inside (around calls with landing pads): its own artifact.
inner_entries = {k[4] for k in bolt if k[0] == "0" and k[5] != "0"}
# Functions entered as often in both files (all records into their start): where the two
# attribute those entries differently (BOLT: calls from functions it does not instrument are
# entry records, indirect calls are calls; edgeprof the other way round), the records into
# their start may differ.
same_total = {f for f in set(into_bolt) | set(into_ep) if into_bolt[f] == into_ep[f]}
starts = lambda k: k[3] == "1" and k[5] == "0" and k[4] in same_total
same = only_bolt = 0
explained = collections.Counter()
fails = []
for k in sorted(set(bolt) | set(ep)):
    if (k[1] if k[0] == "1" else k[4]) in unstable and bolt.get(k) != ep.get(k):
        explained["function whose counts depend on addresses"] += 1
    elif k in bolt and k in ep:
        if bolt[k] == ep[k]:
            same += 1
        elif starts(k):
            explained["records into a function's start, its entries equal"] += 1
        else:
            fails.append("count differs: %s bolt %d edgeprof %d" % (" ".join(k), bolt[k], ep[k]))
    elif k in bolt:
        t = text(k[1], k[2])
        if k[0] == "1" and (re.search(r'call\s+\*', t) or
                            (re.search(r'jmp\s+\*', t) and k[5] == "0" and k[1] != k[4])):
            only_bolt += 1
        elif k[0] == "0" and k[4] in inner_entries:
            explained["BOLT's entries inside a function with landing pads"] += 1
        elif starts(k):
            explained["records into a function's start, its entries equal"] += 1
        elif k[0] == "0" and bolt[k] == sum(n for j, n in bolt.items() if j[1] == k[4] and
                                            j[4] == k[4] and j[5] == "0" and
                                            re.match(r'jmp', text(j[1], j[2]))):
            explained["BOLT's entry record of jumps to the function's own start"] += 1
        elif k[0] == "0" and plain(k[4]) in setjmps:
            explained["BOLT's entry record of a function calling setjmp (longjmps back)"] += 1
        else:
            fails.append("only BOLT: %s %d (%s)" % (" ".join(k), bolt[k], t))
    else:
        t = text(k[1], k[2])
        if (k[0] == "1" and not simple.get(k[1], True)) or \
                (k[0] == "0" and not simple.get(k[4], True)):
            explained["function BOLT does not instrument"] += 1
        elif k[0] == "0" and k[4] in inner_entries:
            explained["BOLT's entries inside a function with landing pads"] += 1
        elif starts(k):
            explained["records into a function's start, its entries equal"] += 1
        elif k[0] == "0" and k[4] in no_succ:
            explained["entry record of a function whose entry block has no successors (BOLT writes none)"] += 1
        elif k[0] == "1" and k[1] == k[4] and re.match(r'j(?!mp)', t) and \
                re.search(r'<([^>+]*)', t) and plain(k[1]) != re.search(r'<([^>+]*)', t).group(1):
            explained["fall-through of a jcc leaving the function"] += 1
        else:
            fails.append("only edgeprof: %s %d (%s)" % (" ".join(k), ep[k], t))
print("%d records equal, %d only BOLT's (indirect calls), %d explained (%s)" % (
    same, only_bolt, sum(explained.values()),
    "; ".join("%d %s" % (n, w) for w, n in sorted(explained.items())) or "none"))
for f in fails:
    print(f)
sys.exit(1 if fails or not same else 0)
