#!/usr/bin/env python3
"""Checks an LLVM text sample profile (edgeprof export --format llvm-sample) against an
independent oracle: callgrind's per-instruction counts of the same run, mapped to sample
profile keys by llvm-symbolizer (LLVM's own DWARF reader, not libdw).

  sample_vs_callgrind.py SAMPLE BINARY CALLGRIND_OUT...

The oracle rebuilds the whole profile from scratch: every instruction of BINARY's code
(objdump -d) is symbolized with its inline frames (llvm-symbolizer --inlining, innermost
first: function linkage name, line, discriminator, the function's DW_AT_decl_line); its
key is the inline path (outermost function, then each call site's line offset and base
discriminator and the function inlined there) and the innermost line's offset and base
discriminator; its count is callgrind's execution count (Ir of the instruction) times the
duplication factor of its discriminator, a line's count the largest over its instructions.
Heads are the calls callgrind saw into each function's entry (calls= lines, from any
object); call targets the calls= of direct `call` instructions to functions of BINARY. Then the
parsed SAMPLE must equal the oracle's profile exactly: the same functions with the same
TOTAL and HEAD, lines, counts, call targets and nested inlined call sites (nodes whose
total is 0 are left out of both; lines that never ran count 0, except lines held only by
never-run padding nops, which the oracle does not require). Prints one summary line; exits 1
with the differences otherwise.
"""
import json
import os
import subprocess
import sys

# The callgrind reader and objdump lister of the count oracle's self-test generator, which
# owe nothing to edgeprof.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "oracle"))
from fake_profile import Callgrind, objdump_insns  # noqa: E402


def prefix_decode(u):
    """LLVM's DILocation::getUnsignedFromPrefixEncoding."""
    if u & 1:
        return 0
    u >>= 1
    if u & 0x40:
        return (u >> 7 & 0xfe0) | (u & 0x1f)
    return u & 0x3f


def next_component(d):
    if d & 1 == 0:
        return d >> (14 if d & 0x40 else 7)
    return d >> 1


def base_disc(d):
    return prefix_decode(d)


def dup_factor(d):
    return prefix_decode(next_component(d)) or 1


def instructions(binary):
    """{addr: (mnemonic, operands)} of the code sections, from objdump."""
    out = {}
    for a, t in objdump_insns(binary).items():
        f = t.split(None, 1)
        out[a] = (f[0], f[1] if len(f) > 1 else "")
    return out


def symbolize(binary, addrs):
    """{addr: [(name, line, disc, decl_line), ...] innermost first}."""
    tool = os.environ.get("LLVM_SYMBOLIZER", "llvm-symbolizer-19")
    inp = "".join("0x%x\n" % a for a in addrs)
    out = subprocess.run([tool, "--obj=" + binary, "--inlining", "--output-style=JSON",
                          "--no-demangle", "--functions=linkage"],
                         input=inp, capture_output=True, text=True, check=True).stdout
    frames = {}
    for line in out.splitlines():
        if not line.strip():
            continue
        for rec in json.loads(line) if line.startswith("[") else [json.loads(line)]:
            a = int(rec["Address"], 16)
            frames[a] = [(s["FunctionName"], s["Line"], s.get("Discriminator", 0),
                          s.get("StartLine", 0)) for s in rec.get("Symbol", [])]
    return frames


def path_of(fr):
    """(path, off, disc) of inline frames FR (innermost first), or None without lines."""
    if not fr or any(f[1] <= 0 or f[0] in ("", "??") for f in fr):
        return None
    out = list(reversed(fr))
    path = [out[0][0]]
    for k in range(1, len(out)):
        caller = out[k - 1]
        path.append(((caller[1] - caller[3]) & 0xffff, base_disc(caller[2]), out[k][0]))
    leaf = out[-1]
    return tuple(path), (leaf[1] - leaf[3]) & 0xffff, base_disc(leaf[2])


# ---- profiles as trees ----------------------------------------------------------------------
def new_node():
    return {"total": 0, "head": 0, "body": {}, "calls": {}, "kids": {}}


def parse_text(path):
    """The text sample profile at PATH as {name: node}."""
    top, stack = {}, []
    for raw in open(path):
        line = raw.rstrip("\n")
        if not line.strip():
            continue
        depth = len(line) - len(line.lstrip(" "))
        if depth == 0:
            name, total, head = line.rsplit(":", 2)
            node = top.setdefault(name, new_node())
            node["total"] += int(total)
            node["head"] += int(head)
            stack = [node]
            continue
        del stack[depth:]
        loc, rest = line.strip().split(": ", 1)
        off, _, disc = loc.partition(".")
        key = (int(off), int(disc or 0))
        if rest[0].isdigit():
            f = rest.split()
            stack[-1]["body"][key] = int(f[0])
            for t in f[1:]:
                callee, n = t.rsplit(":", 1)
                stack[-1]["calls"][key + (callee,)] = int(n)
        else:
            callee, total = rest.rsplit(":", 1)
            node = stack[-1]["kids"].setdefault(key + (callee,), new_node())
            node["total"] += int(total)
            stack.append(node)
    return top


def oracle(binary, cg_paths):
    insns = instructions(binary)
    cg = Callgrind(binary)
    for path in cg_paths:
        cg.load(path)
    counts = cg.count
    reps = [a for a in counts if a in insns and insns[a][0].startswith("rep")]
    if reps:
        sys.exit("oracle: rep-prefixed instructions ran (%s): callgrind counts their "
                 "iterations, not their executions" % ", ".join(hex(a) for a in reps[:3]))
    call_targets = [(site, target, n) for (site, target), n in cg.calls.items()
                    if site is not None and target is not None and
                    site in insns and insns[site][0].startswith("call") and
                    not insns[site][1].startswith("*")]
    entries = {}
    for (site, target), n in cg.calls.items():
        if target is not None:
            entries[target] = entries.get(target, 0) + n
    addrs = sorted(set(insns) | set(entries) | {t for _, t, _ in call_targets})
    frames = symbolize(binary, addrs)

    top = {}

    def node_at(path):
        node = top.setdefault(path[0], new_node())
        for site in path[1:]:
            node = node["kids"].setdefault(site, new_node())
        return node

    optional = set()  # (path, off, disc) held only by never-run padding nops
    held = set()
    for a in sorted(insns):
        k = path_of(frames.get(a))
        if not k:
            continue
        path, off, disc = k
        n = counts.get(a, 0)
        if n == 0 and insns[a][0] in ("nop", "nopw", "nopl", "xchg", "data16", "cs"):
            optional.add(k)
            continue
        held.add(k)
        body = node_at(path)["body"]
        body[(off, disc)] = max(body.get((off, disc), 0), n * dup_factor(frames[a][0][2]))
    optional -= held
    for site, target, n in call_targets:
        k, t = path_of(frames.get(site)), frames.get(target)
        if k and t:
            path, off, disc = k
            calls_ = node_at(path)["calls"]
            key = (off, disc, t[-1][0])
            calls_[key] = calls_.get(key, 0) + n
    for a, n in entries.items():
        t = frames.get(a)
        if t and t[-1][0] not in ("", "??"):
            top.setdefault(t[-1][0], new_node())["head"] += n

    def finish(node):
        node["kids"] = {k: v for k, v in node["kids"].items() if finish(v)}
        node["total"] = sum(node["body"].values()) + sum(v["total"] for v in node["kids"].values())
        return node["total"] > 0

    return {k: v for k, v in top.items() if finish(v)}, optional


def compare(want, got, optional, path, diffs):
    for name in sorted(set(want) | set(got)):
        w, g = want.get(name), got.get(name)
        here = path + (name,)
        where = "/".join(x if isinstance(x, str) else "%d.%d:%s" % x for x in here)
        if w is None or g is None:
            diffs.append("%s: %s" % (where, "missing" if g is None else "not expected"))
            continue
        for k in ("total", "head"):
            if w[k] != g[k]:
                diffs.append("%s: %s %d, oracle %d" % (where, k, g[k], w[k]))
        for loc in sorted(set(w["body"]) | set(g["body"])):
            if w["body"].get(loc) == g["body"].get(loc):
                continue
            if loc not in w["body"] and g["body"][loc] == 0 and (here,) + loc in optional:
                continue
            diffs.append("%s %d.%d: count %s, oracle %s" % (
                where, loc[0], loc[1], g["body"].get(loc), w["body"].get(loc)))
        for c in sorted(set(w["calls"]) | set(g["calls"])):
            if w["calls"].get(c) != g["calls"].get(c):
                diffs.append("%s %d.%d: calls to %s %s, oracle %s" % (
                    where, c[0], c[1], c[2], g["calls"].get(c), w["calls"].get(c)))
        compare(w["kids"], g["kids"], optional, here, diffs)


def count(tree):
    """Lines, inlined call sites and call targets of TREE, at every depth."""
    t = [0, 0, 0]
    for n in tree.values():
        sub = count(n["kids"])
        t = [t[0] + len(n["body"]) + sub[0], t[1] + len(n["kids"]) + sub[1],
             t[2] + len(n["calls"]) + sub[2]]
    return t


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    sample, binary, cgs = sys.argv[1], sys.argv[2], sys.argv[3:]
    want, optional = oracle(binary, cgs)
    got = parse_text(sample)
    diffs = []
    compare(want, got, optional, (), diffs)
    lines, sites, targets = count(got)
    if diffs:
        print("%d differences from callgrind + llvm-symbolizer:" % len(diffs))
        for d in diffs[:40]:
            print("  " + d)
        sys.exit(1)
    print("%d functions, %d lines, %d inlined call sites, %d call targets: equal to "
          "callgrind's counts through llvm-symbolizer" % (
              len(got), lines, sites, targets))


if __name__ == "__main__":
    main()
