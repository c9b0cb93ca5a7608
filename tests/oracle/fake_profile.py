#!/usr/bin/env python3
"""Builds a "perfect" edgeprof profile (the `edgeprof report --json` schema) from callgrind
output, for self-testing tests/oracle/count_oracle.c before `edgeprof run` exists.

  fake_profile.py --binary BIN --cfg CFG.json --callgrind OUT [--callgrind OUT...]
                  [--perturb KIND[:N]] [-o PROFILE.json]

CFG.json is `edgeprof cfg --json BIN`. Block and edge counts are computed from callgrind with
a parser and an instruction list (objdump -d) of its own, independent of tests/support/ and of
capstone, so that the oracle and this generator only agree when both read callgrind the same
way. It also checks flow conservation of the figures it computes (every block's count equals
what its out-edges carry, and what its in-edges plus its function's invocations bring) and
reports the blocks where it fails on stderr: those are runs where a figure's definition is not
exact (unwinding out of a frame, a process killed mid-block), not errors of this script.

--perturb KIND[:N] adds 1 to the count of the N-th (default first) item of KIND in a function
inside .text (the oracle leaves _init and _fini alone), where KIND is "block", "function", "violations" or an edge kind, so that a test can
check that the oracle rejects it. Exits 2 when KIND has no N-th item.
"""
import argparse
import json
import os
import re
import subprocess
import sys
from collections import defaultdict

EXIT = "exit"


class Callgrind:
    """Instruction counts, jumps and calls of one object, summed over several files."""

    def __init__(self, obj):
        self.obj = os.path.realpath(obj)
        self.count = defaultdict(int)  # addr -> Ir
        self.jumps = defaultdict(int)  # (from, to) -> taken
        self.calls = defaultdict(int)  # (site or None, target or None) -> count

    def matches(self, name):
        if name == "???":
            return False
        return name == self.obj or os.path.basename(name) == os.path.basename(self.obj)

    def load(self, path):
        obnames = {}
        ob_in = False
        cob = None  # None: no cob= for the next calls=
        npos, ipos, ir = 1, 0, 0
        last = [0] * 4
        pend = None  # ("call", target, target_in, count) or ("jump", target, taken)

        def resolve(val):
            m = re.match(r"\s*\((\d+)\)\s*(.*)$", val)
            if not m:
                return val.strip()
            if m.group(2):
                obnames[m.group(1)] = m.group(2)
            return obnames[m.group(1)]

        def subpos(tok, prev):
            if tok == "*":
                return prev
            if tok[0] in "+-":
                d = int(tok[1:], 0)
                return prev + d if tok[0] == "+" else prev - d
            return int(tok, 0)

        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line or line[0] == "#":
                    continue
                if line[0] in "0123456789+-*":
                    toks = line.split()
                    pos = [subpos(toks[i], last[i]) for i in range(npos)]
                    costs = toks[npos:]
                    last[:npos] = pos
                    addr = pos[ipos]
                    if pend is None:
                        if ob_in and len(costs) > ir and int(costs[ir]):
                            self.count[addr] += int(costs[ir])
                    elif pend[0] == "call":
                        site = addr if ob_in else None
                        tgt = pend[1] if pend[2] else None
                        if site is not None or tgt is not None:
                            self.calls[(site, tgt)] += pend[3]
                    elif ob_in:
                        self.jumps[(addr, pend[1])] += pend[2]
                    pend = None
                    continue
                m = re.match(r"(\w+)([:=])(.*)$", line)
                if not m:
                    raise SystemExit(f"{path}: cannot parse {line!r}")
                key, sep, val = m.groups()
                if sep == ":":
                    if key == "positions":
                        names = val.split()
                        npos, ipos = len(names), names.index("instr")
                    elif key == "events":
                        ir = val.split().index("Ir")
                    elif key == "part":
                        last = [0] * 4
                    continue
                if key == "ob":
                    ob_in = self.matches(resolve(val))
                elif key == "cob":
                    cob = self.matches(resolve(val))
                elif key in ("calls", "jump", "jcnd"):
                    cnt, tgt = val.split()[0], val.split()[1:1 + npos]
                    target = subpos(tgt[ipos], last[ipos])
                    if key == "calls":
                        tin = ob_in if cob is None else cob
                        pend = ("call", target, tin, int(cnt))
                        cob = None
                    else:
                        pend = ("jump", target, int(cnt.split("/")[0]))


def objdump_insns(binary):
    """{addr: mnemonic-with-prefix} from objdump -d (linear sweep of the code sections)."""
    out = subprocess.run(["objdump", "-d", "-w", "--no-show-raw-insn", binary],
                         check=True, capture_output=True, text=True).stdout
    insns = {}
    for line in out.splitlines():
        m = re.match(r"\s+([0-9a-f]+):\s+(\S.*)$", line)
        if m:
            insns[int(m.group(1), 16)] = m.group(2)
    return insns


def text_range(binary):
    """[start, end) of .text, the only code callgrind attributes to the object."""
    out = subprocess.run(["objdump", "-h", binary], check=True, capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) > 3 and f[1] == ".text":
            return int(f[3], 16), int(f[3], 16) + int(f[2], 16)
    raise SystemExit(f"{binary}: no .text")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--cfg", required=True)
    ap.add_argument("--callgrind", action="extend", nargs="+", required=True)
    ap.add_argument("--perturb")
    ap.add_argument("-o", "--output")
    args = ap.parse_args()

    cg = Callgrind(args.binary)
    for path in args.callgrind:
        cg.load(path)
    insns = objdump_insns(args.binary)
    addrs = sorted(insns)
    with open(args.cfg) as f:
        cfg = json.load(f)

    jumps_from = defaultdict(list)
    inflow = defaultdict(int)
    for (src, dst), n in cg.jumps.items():
        jumps_from[src].append((dst, n))
        if src != dst:
            inflow[dst] += n
    calls_from = defaultdict(list)
    for (site, tgt), n in cg.calls.items():
        if site is not None:
            calls_from[site].append((tgt, n))
        if tgt is not None:
            inflow[tgt] += n

    def mnem(a):
        return insns.get(a, "").split()

    def is_rep(a):
        m = mnem(a)
        return bool(m) and m[0] in ("rep", "repz", "repe", "repnz", "repne")

    def ex(a):
        n = cg.count.get(a, 0)
        if is_rep(a):
            n -= sum(k for d, k in jumps_from[a] if d == a)
        return n

    def outs(a, to=None):
        n = sum(k for d, k in jumps_from[a] if d != a and (to is None or d == to))
        n += sum(k for t, k in calls_from[a] if to is None or t == to)
        return n

    def last_insn(start, end):
        import bisect
        i = bisect.bisect_left(addrs, end) - 1
        if i < 0 or addrs[i] < start:
            # A jump over a lock prefix (`je 0f; lock; 0: cmpxchg`): the linear sweep has
            # the locked instruction one byte before START, and the next one at END; the
            # block is that instruction without its prefix.
            if (i >= 0 and addrs[i] == start - 1 and mnem(addrs[i])[:1] == ["lock"] and
                    i + 1 < len(addrs) and addrs[i + 1] == end):
                return start
            raise SystemExit(f"no instruction in [{start:#x}, {end:#x})")
        return addrs[i]

    def is_jcc(a):
        m = mnem(a)
        if not m:
            return False
        op = m[1] if m[0] in ("bnd", "notrack") and len(m) > 1 else m[0]
        return (op.startswith("j") and not op.startswith("jmp")) or op.startswith("loop")

    conserv_bad = 0
    funcs = []
    for f in cfg["functions"]:
        blocks = {int(b["addr"], 16): int(b["end"], 16) for b in f["blocks"]}
        last = {s: last_insn(s, e) for s, e in blocks.items()}
        edges = f["edges"]

        def fig(e, top=True):
            frm = int(e["from"], 16)
            to = None if e["to"] == EXIT else int(e["to"], 16)
            li = last[frm]
            k = e["kind"]
            same = [x for x in edges if x["from"] == e["from"] and x is not e]
            if k in ("fallthrough", "jump", "return"):
                return ex(li)
            if k in ("taken", "switch"):
                return outs(li, to)
            if k == "not_taken":
                return ex(li) - outs(li)
            if k == "call_return":
                return ex(to) - inflow[to]
            if k in ("tail_call", "noreturn"):
                v = outs(li) if is_jcc(li) else ex(li)
                if k == "noreturn" and top:
                    v -= sum(fig(x, False) for x in same if x["kind"] == "exception")
                return v
            if k == "exception":
                cr = [x for x in same if x["kind"] == "call_return"]
                return ex(li) - (fig(cr[0], False) if cr else 0)
            if k == "unresolved":
                return ex(li) - (sum(fig(x, False) for x in same) if top else 0)
            raise SystemExit(f"unknown edge kind {k}")

        entry = int(f["addr"], 16)
        ecounts = [fig(e) for e in edges]
        inv = ex(entry) - sum(c for e, c in zip(edges, ecounts) if e["to"] == f["addr"])
        out_sum, in_sum = defaultdict(int), defaultdict(int)
        for e, c in zip(edges, ecounts):
            out_sum[int(e["from"], 16)] += c
            if e["to"] != EXIT:
                in_sum[int(e["to"], 16)] += c
        in_sum[entry] += inv
        for s in blocks:
            c = ex(s)
            if out_sum[s] != c or in_sum[s] != c:
                conserv_bad += 1
                if conserv_bad <= 10:
                    print(f"fake_profile: conservation: {f['name']} block {s:#x} count {c},"
                          f" in {in_sum[s]}, out {out_sum[s]}", file=sys.stderr)
        funcs.append({
            "name": f["name"], "addr": f["addr"], "count": inv,
            "blocks": [{"addr": b["addr"], "end": b["end"], "count": ex(int(b["addr"], 16))}
                       for b in f["blocks"]],
            "edges": [{"from": e["from"], "to": e["to"], "kind": e["kind"], "count": c}
                      for e, c in zip(edges, ecounts)],
        })
    if conserv_bad:
        print(f"fake_profile: {conserv_bad} blocks where the figures are not conserved",
              file=sys.stderr)

    prof = {"binary": {"path": cfg["binary"]["path"], "build_id": cfg["binary"].get("build_id")},
            "functions": funcs, "probes": {"sites": 0, "hits": 0}, "violations": 0}
    if args.perturb:
        kind, _, nth = args.perturb.partition(":")
        nth = int(nth or 1)
        if kind == "violations":
            prof["violations"] = 1
        else:
            items = []
            lo, hi = text_range(args.binary)
            for fn in funcs:
                if any(int(b["addr"], 16) < lo or int(b["end"], 16) > hi for b in fn["blocks"]):
                    continue  # not checked: callgrind has no counts for it
                if kind == "function":
                    items.append(fn)
                elif kind == "block":
                    items += fn["blocks"]
                else:
                    items += [e for e in fn["edges"] if e["kind"] == kind]
            if len(items) < nth:
                print(f"fake_profile: no item {nth} of kind {kind}", file=sys.stderr)
                sys.exit(2)
            items[nth - 1]["count"] += 1
    text = json.dumps(prof, indent=1) + "\n"
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
