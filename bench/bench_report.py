#!/usr/bin/env python3
"""Tables of bench/bench.sh: reads its work directory ($WORK: times.tsv, programs.tsv, runs/)
and the machine description from M_* environment variables; prints the report and writes
$OUT.md and $OUT.json. Run by bench/bench.sh, not by hand."""
import collections
import json
import os
import statistics

E = os.environ
W = E["WORK"]
COLUMNS = ("native", "chords", "callgrind", "gcov", "naive")
GOAL_TRAP_VS_ORACLE = 1.1
GOAL_NAIVE_VS_EDGEPROF = 20.0


def load(path):
    try:
        with open(path) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def fmt_s(x):
    return "-" if x is None else (f"{x:.3f}" if x < 10 else f"{x:.1f}")


def fmt_n(x):
    return "-" if x is None else f"{x:,}"


def ratio(a, b):
    return None if a is None or b in (None, 0) else a / b


def fmt_r(x, lower=False):
    if x is None:
        return "-"
    s = f"{x:.1f}" if x >= 10 else (f"{x:.2f}" if x >= 0.01 else f"{x:.4f}")
    return (">" if lower else "") + s + "x"


runs = collections.defaultdict(list)  # (prog, col) -> [(rep, secs, status, rc)]
for line in open(f"{W}/times.tsv"):
    p, c, r, s, st, rc = line.rstrip("\n").split("\t")
    runs[(p, c)].append((int(r), float(s), st, int(rc)))
progs = []
for line in open(f"{W}/programs.tsv"):
    f = line.rstrip("\n").split("\t")
    progs.append({"name": f[0], "group": f[1], "gcov": f[2] != "-", "argv": f[3:]})
have_valgrind = E.get("M_VALGRIND", "missing") != "missing"

results = []
for p in progs:
    name = p["name"]
    res = {"program": name, "group": p["group"], "argv": p["argv"], "columns": {}}
    results.append(res)
    if p["group"] == "missing":
        res["columns"] = {c: {"status": "missing"} for c in COLUMNS}
        continue
    ref = open(f"{W}/runs/{name}.native.ref", "rb").read()
    native_rc = runs[(name, "native")][0][3] if runs.get((name, "native")) else 0
    for c in COLUMNS:
        rs = runs.get((name, c), [])
        col = {"runs_s": [r[1] for r in rs], "statuses": [r[2] for r in rs]}
        ok = [r[1] for r in rs if r[2] == "ok"]
        if not rs:
            missing = (c == "callgrind" and not have_valgrind) or (c == "gcov" and not p["gcov"])
            col["status"] = "missing" if missing else "not run"
        elif ok:
            col["status"] = "ok"
            col["median_s"] = statistics.median(ok)
        else:
            col["status"] = rs[0][2]
            col["lower_bound_s"] = max(r[1] for r in rs)
        col["timeout_s"] = {"chords": int(E["CHORDS_TIMEOUT"]), "naive": int(E["NAIVE_TIMEOUT"]),
                            "callgrind": int(E["CALLGRIND_TIMEOUT"])}.get(c, 600)
        same = []  # stdout and exit status of every completed run equal the native run's
        for r in rs:
            if r[2] == "ok":
                out = open(f"{W}/runs/{name}.{c}.{r[0]}.out", "rb").read()
                same.append(out == ref and r[3] == native_rc)
        col["output_ok"] = None if not same else all(same)
        col["output_checked_runs"] = len(same)
        res["columns"][c] = col
    try:
        res["columns"]["gcov"]["gcda_files"] = int(open(f"{W}/runs/{name}.gcov.gcda-files").read())
    except (OSError, ValueError):
        pass
    ch = res["columns"]["chords"]
    profs = {r[0]: load(f"{W}/runs/{name}.chords.{r[0]}.prof")
             for r in runs.get((name, "chords"), []) if r[2] == "ok"}
    analysis = [p.get("run", {}).get("analysis_s") for p in profs.values() if p]
    analysis = [a for a in analysis if a is not None]
    if analysis:
        ch["analysis_median_s"] = statistics.median(analysis)
    # the first profile, even of a run stopped by its timeout (the probes it has)
    prof = profs[1] if 1 in profs else load(f"{W}/runs/{name}.chords.1.prof")
    if prof:
        pr = prof.get("probes", {})
        pl = prof.get("placement", {})
        costs = pl.get("costs") or {}
        ch["probes"] = pr
        ch["costs"] = costs
        by_class, hits_class, trap_class, trap_func = (collections.Counter() for _ in range(4))
        funcs = prof.get("functions", [])
        for s in pl.get("sites", []):
            k = s.get("class", "?")
            h = s.get("hits", 0) or 0
            by_class[k] += 1
            hits_class[k] += h
            t = h * costs.get(k, 0)
            trap_class[k] += t
            fi = s.get("func")
            fn = funcs[fi]["name"] if isinstance(fi, int) and fi < len(funcs) else "?"
            trap_func[(fn, s.get("kind", "?"))] += t
        tot = sum(trap_class.values()) or 1
        ch["sites_by_class"] = dict(by_class)
        ch["hits_by_class"] = dict(hits_class)
        ch["trap_share_by_class"] = {k: v / tot for k, v in trap_class.items()}
        per_func = collections.Counter()
        for (fn, _), v in trap_func.items():
            per_func[fn] += v
        ch["top_functions_by_trap"] = [
            {"function": fn, "est_trap_ns": int(v), "share": v / tot,
             "by_site_kind": {k: trap_func[(f2, k)] / tot for (f2, k) in trap_func if f2 == fn}}
            for fn, v in per_func.most_common(5)]
    cmp = load(f"{W}/runs/{name}.chords.1.prof.compare.json")
    if cmp and "placement" in cmp:
        res["placements_on_true_counts"] = cmp["placement"]
        res["oracle_gap"] = cmp.get("oracle_gap", [])

# --- tables ----------------------------------------------------------------------------------


def secs(col):
    return col.get("median_s") if col.get("status") == "ok" else None


def cell(col):
    st = col.get("status")
    if st == "ok":
        return fmt_s(col["median_s"])
    if st == "timeout":
        return f"timeout (> {col.get('timeout_s', 0):.0f} s)"
    return st or "-"


def slowdown(c, col):
    x, nat = c[col], secs(c["native"])
    if x.get("status") == "ok":
        return ratio(secs(x), nat), False
    if x.get("status") == "timeout" and nat:
        return x.get("timeout_s", 0) / nat, True
    return None, False


T = {}
L = []
L.append("| program | native s | edgeprof s | callgrind s | gcov s | naive s | edgeprof/native | "
         "callgrind/native | gcov/native | naive/native | edgeprof/callgrind | analysis s |")
L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in results:
    c = r["columns"]
    sd = {k: slowdown(c, k) for k in ("chords", "callgrind", "gcov", "naive")}
    r["slowdown"] = {k: v[0] for k, v in sd.items()}
    r["slowdown_lower_bound"] = {k: v[1] for k, v in sd.items()}
    r["edgeprof_vs_callgrind"] = ratio(secs(c["chords"]), secs(c["callgrind"]))
    L.append(f"| {r['program']} | {cell(c['native'])} | {cell(c['chords'])} | {cell(c['callgrind'])} | "
             f"{cell(c['gcov'])} | {cell(c['naive'])} | "
             + " | ".join(fmt_r(*sd[k]) for k in ("chords", "callgrind", "gcov", "naive"))
             + f" | {fmt_r(r['edgeprof_vs_callgrind'])} | {fmt_s(c['chords'].get('analysis_median_s'))} |")
T["wall"] = "\n".join(L)

L = []
L.append("| program | sites attached | sites hit | probe hits | est. trap s | oracle hits | oracle trap s | "
         "trap/oracle | naive sites | naive hits | naive trap s | naive/edgeprof trap |")
L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in results:
    ch = r["columns"]["chords"]
    pr = ch.get("probes")
    pc = r.get("placements_on_true_counts")
    if not pr:
        L.append(f"| {r['program']} | {ch.get('status', '-')} |" + " |" * 11)
        continue
    trap = pr.get("est_trap_ns")
    ex = pc.get("exact") if pc else None
    nv = pc.get("naive") if pc else None
    r["trap_vs_oracle"] = ratio(trap, ex["trap_ns"]) if ex else None
    r["naive_vs_edgeprof_trap"] = ratio(nv["trap_ns"], trap) if nv else None
    r["naive_vs_edgeprof_hits"] = ratio(nv["hits"], pr.get("hits")) if nv else None
    L.append(f"| {r['program']} | {fmt_n(pr.get('sites'))} | {fmt_n(pr.get('sites_hit'))} | "
             f"{fmt_n(pr.get('hits'))} | {fmt_s(trap / 1e9 if trap is not None else None)} | "
             f"{fmt_n(ex['hits']) if ex else '-'} | {fmt_s(ex['trap_ns'] / 1e9) if ex else '-'} | "
             f"{fmt_r(r['trap_vs_oracle'])} | {fmt_n(nv['sites']) if nv else '-'} | "
             f"{fmt_n(nv['hits']) if nv else '-'} | {fmt_s(nv['trap_ns'] / 1e9) if nv else '-'} | "
             f"{fmt_r(r['naive_vs_edgeprof_trap'])} |")
T["probes"] = "\n".join(L)

L = []
L.append("| program | edgeprof slowdown below callgrind's | trap cost within 1.1x of the oracle | "
         "trap cost at least 20x below naive |")
L.append("|---|---|---|---|")
goals = collections.Counter()


def verdict(x, ok, fmt, what):
    if x is None:
        return "not measured"
    goals[what + (" met" if ok else " not met")] += 1
    return ("met" if ok else "**not met**") + f": {fmt(x)}"


for r in results:
    if r["group"] == "missing":
        L.append(f"| {r['program']} | missing | missing | missing |")
        continue
    evc, tvo, nve = r.get("edgeprof_vs_callgrind"), r.get("trap_vs_oracle"), r.get("naive_vs_edgeprof_trap")
    r["goals"] = {"below_callgrind": None if evc is None else evc < 1,
                  "within_1_1_of_oracle": None if tvo is None else tvo <= GOAL_TRAP_VS_ORACLE,
                  "20x_below_naive": None if nve is None else nve >= GOAL_NAIVE_VS_EDGEPROF}
    L.append(f"| {r['program']} | "
             + verdict(evc, evc is not None and evc < 1,
                       lambda x: f"edgeprof takes {x:.2f}x callgrind's time", "callgrind")
             + " | " + verdict(tvo, tvo is not None and tvo <= GOAL_TRAP_VS_ORACLE,
                               lambda x: f"{x:.2f}x the oracle's trap time", "oracle")
             + " | " + verdict(nve, nve is not None and nve >= GOAL_NAIVE_VS_EDGEPROF,
                               lambda x: f"naive pays {x:.1f}x", "naive") + " |")
T["goals"] = "\n".join(L)

L = []
for r in results:
    ch = r["columns"]["chords"]
    if "top_functions_by_trap" not in ch:
        continue
    cls = ", ".join(f"{k} {v:.0%}" for k, v in sorted(ch["trap_share_by_class"].items(), key=lambda kv: -kv[1]))
    sc = ", ".join(f"{k} {v:,}" for k, v in sorted(ch["sites_by_class"].items()))
    hc = ", ".join(f"{k} {v:,}" for k, v in sorted(ch["hits_by_class"].items()))
    L.append(f"- **{r['program']}**: sites by class: {sc}; hits by class: {hc}; "
             f"estimated trap time by class: {cls}.")
    tops = []
    for t in ch["top_functions_by_trap"]:
        kinds = ", ".join(f"{k} {v:.0%}" for k, v in sorted(t["by_site_kind"].items(), key=lambda kv: -kv[1]) if v >= 0.005)
        tops.append(f"{t['function']} {t['share']:.0%} ({kinds})")
    L.append(f"  Top functions by trap time (by site kind): {'; '.join(tops)}.")
    gap = [g for g in r.get("oracle_gap", []) if g["trap_ns"] - g["exact_trap_ns"] >= 1e6][:5]
    pc = r.get("placements_on_true_counts")
    extra = pc["profile_sites"]["trap_ns"] - pc["exact"]["trap_ns"] if pc else 0
    if gap and extra > 0:
        L.append("  Where it pays more than the oracle (edgeprof / oracle trap s): "
                 + "; ".join(f"{g['function']} {g['trap_ns'] / 1e9:.2f} / {g['exact_trap_ns'] / 1e9:.2f}"
                             + f" ({(g['trap_ns'] - g['exact_trap_ns']) / extra:.0%} of the excess)"
                             for g in gap) + ".")
T["where"] = "\n".join(L)

L = []
L.append("| program | edgeprof output | callgrind output | gcov output (.gcda files) | naive output |")
L.append("|---|---|---|---|---|")
problems = []
for r in results:
    c = r["columns"]

    def oc(col):
        x = c[col]
        if x.get("output_ok") is None:
            return x.get("status", "-") if x.get("status") != "ok" else "-"
        if not x["output_ok"]:
            problems.append(f"{r['program']}: {col} output differs from native")
        n = x["output_checked_runs"]
        return ("same" if x["output_ok"] else "DIFFERENT") + f" ({n} run{'s' if n != 1 else ''})"
    g = oc("gcov") + (f", {c['gcov']['gcda_files']}" if "gcda_files" in c.get("gcov", {}) else "")
    L.append(f"| {r['program']} | {oc('chords')} | {oc('callgrind')} | {g} | {oc('naive')} |")
T["correct"] = "\n".join(L)

costs = next((r["columns"]["chords"].get("costs") for r in results if r["columns"].get("chords", {}).get("costs")), None)
cost_s = ("-" if not costs else
          f"single-stepped {costs.get('stepped'):.0f} ns, emulated {costs.get('emulated'):.0f} ns, "
          f"optimized nop5 {costs.get('nop5'):.0f} ns per hit")
commands = "\n".join(
    f"- {r['program']}: `{' '.join(os.path.basename(a) if i == 0 else a.replace(os.getcwd() + '/', '') for i, a in enumerate(r['argv']))}`"
    for r in results if r["argv"])
md = f"""# Benchmark: edgeprof against native, callgrind, gcov and a probe on every block

Generated by `make bench` (`bench/bench.sh`) on {E['M_DATE']}.

## Machine and settings

- {E['M_NPROC']} vCPUs ({E['M_CPU']}), {E['M_MEM']}, {E['M_OS']}, Linux {E['M_KERNEL']}; a shared VM
  without hardware performance counters. Load average at start {E['M_LOAD_START']}, at the end
  {E['M_LOAD_END']}; {E['M_OTHERS']} other edgeprof processes running at the start.
- edgeprof at commit {E['M_COMMIT']}; gcc {E['M_GCC']}; libbpf {E['M_LIBBPF']}; {E['M_VALGRIND']}.
- Probe costs: {cost_s} ({E['M_CALIB']}).
- Programs: edgeprof's test programs (tests/programs/*.c, `gcc -O2 -g`, with a rounds argument,
  scale {E['TEST_SCALE']}; scale 1 is about 0.05 s natively, a tenth of the corpus's time, since
  under edgeprof these densest of programs take over 10 minutes per 0.5 s run) and the corpus (scripts/corpus.sh: Debian 12 source packages, `-O2 -g`,
  workload size `{E['CORPUS_KIND']}`). gcov: the same sources and flags plus `-fprofile-arcs`, each
  run writing its .gcda files into a fresh directory. Binaries run from private copies.
- Interleaved repetitions per program (native, edgeprof, callgrind, gcov, naive, then again):
  {E['REPS']} of native and gcov, {E['REPS_SLOW']} of edgeprof and callgrind; medians of wall-clock
  seconds. Every edgeprof run includes CFG recovery, placement, attaching, tracing and writing the
  profile; "analysis s" is the CFG recovery and placement part of it (the profile's
  `run.analysis_s`). Naive runs are stopped after {E['NAIVE_TIMEOUT']} s (then one run, shown as a
  lower bound).
- Probe figures come from the first edgeprof profile. The trap time of a placement is the sum
  over its sites of executions x the cost of the site's class; `edgeprof compare` prices, on
  that run's true counts, the sites edgeprof attached, the naive placement (one probe on every
  block) and the oracle: Exact-Max, the chord placement planned with this very run's counts as
  weights.

## Wall time

{T['wall']}

## Probes and trap cost

{T['probes']}

## Performance goals

{T['goals']}

## Where edgeprof's trap time goes

{T['where']}

## Correctness

Every completed run's stdout and exit status against the native run's.

{T['correct']}

{"Differences:" + chr(10) + chr(10) + chr(10).join("- " + x for x in problems) if problems else "No output differs from the native run's."}

## Commands

{commands}
"""
with open(E["OUT"] + ".md.tmp", "w") as fh:
    fh.write(md)
os.replace(E["OUT"] + ".md.tmp", E["OUT"] + ".md")
meta = {k[2:].lower(): v for k, v in E.items() if k.startswith("M_")}
settings = {k.lower(): E[k] for k in ("REPS", "REPS_SLOW", "CORPUS_KIND", "CHORDS_TIMEOUT",
                                      "CALLGRIND_TIMEOUT", "NAIVE_TIMEOUT", "TEST_SCALE")}
with open(E["OUT"] + ".json.tmp", "w") as fh:
    json.dump({"machine": meta, "settings": settings, "site_costs": costs, "goals": dict(goals),
               "results": results}, fh, indent=1)
os.replace(E["OUT"] + ".json.tmp", E["OUT"] + ".json")
print(md)
