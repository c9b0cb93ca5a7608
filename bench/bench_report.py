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
COLUMNS = ("native", "edgeprof", "cold", "uprobe", "callgrind", "gcov", "bolt", "naive")
SLOW = ("edgeprof", "cold", "uprobe", "callgrind", "gcov", "bolt", "naive")  # with a slowdown
GOAL_TRAP_VS_ORACLE = 1.1
GOAL_NAIVE_VS_EDGEPROF = 20.0
GOAL_EDGEPROF_VS_NATIVE = 2.0  # issue 14, on each corpus program
UPROBE_CLASSES = ("stepped", "emulated", "nop5")  # a kernel uprobe, a trap per hit
PATCH_CLASSES = ("patch", "patch-flags")  # an in-process counter (the latter saving flags)


def cost_key(cls):
    """The key of a site class in the profile's placement.costs ("patch-flags" -> "patch_flags")."""
    return cls.replace("-", "_")


def mechanism(cls):
    return "uprobe" if cls in UPROBE_CLASSES else "in-process" if cls in PATCH_CLASSES else cls


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
    progs.append({"name": f[0], "group": f[1], "gcov": f[2] != "-", "bolt": f[3] != "-",
                  "argv": f[4:]})
have_valgrind = E.get("M_VALGRIND", "missing") != "missing"
have_probes = E.get("M_PROBES_OPTION", "missing") != "missing"
have_bolt = E.get("M_BOLT", "missing") != "missing"

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
            missing = ((c == "callgrind" and not have_valgrind) or (c == "gcov" and not p["gcov"])
                       or (c == "uprobe" and not have_probes) or (c == "bolt" and not p["bolt"]))
            col["status"] = "missing" if missing else "not run"
            if c == "bolt" and not p["bolt"]:
                col["why"] = ("no llvm-bolt-19 or its runtime (bench/setup.sh)" if not have_bolt
                              else "the BOLT build failed (build/bench/bolt-bin/NAME.log)")
        elif ok:
            col["status"] = "ok"
            col["median_s"] = statistics.median(ok)
        else:
            col["status"] = rs[0][2]
            col["lower_bound_s"] = max(r[1] for r in rs)
        col["timeout_s"] = {"edgeprof": int(E["EDGEPROF_TIMEOUT"]), "cold": int(E["EDGEPROF_TIMEOUT"]),
                            "uprobe": int(E["UPROBE_TIMEOUT"]),
                            "naive": int(E["NAIVE_TIMEOUT"]),
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
    bo = res["columns"]["bolt"]
    # lines of the fdata file each bolt run wrote (none: the run wrote no counts)
    bo["fdata_lines"] = []
    for r in runs.get((name, "bolt"), []):
        try:
            bo["fdata_lines"].append(int(open(f"{W}/runs/{name}.bolt.{r[0]}.fdata-lines").read()))
        except (OSError, ValueError):
            bo["fdata_lines"].append(None)
    try:  # what BOLT instrumented ("BOLT-INSTRUMENTER: Total number of counters: 92")
        for line in open(f"{W}/bolt-bin/{name}.log"):
            for key, label in (("counters", "Total number of counters:"),
                               ("functions", "Number of function descriptors:")):
                if label in line:
                    bo["instrumented_" + key] = int(line.split(label)[1].split()[0])
            # functions BOLT leaves as they are, uncounted ("BOLT-WARNING: skipped 8 functions
            # due to cold fragments": gcc's .cold splits)
            if line.startswith("BOLT-WARNING: skipped ") and " functions" in line:
                bo["skipped_functions"] = bo.get("skipped_functions", 0) + int(line.split()[2])
    except (OSError, ValueError, IndexError):
        pass
    for c in ("cold", "edgeprof"):  # profs: edgeprof's, below
        ch = res["columns"][c]
        profs = {r[0]: load(f"{W}/runs/{name}.{c}.{r[0]}.prof")
                 for r in runs.get((name, c), []) if r[2] == "ok"}
        analysis = [p.get("run", {}).get("analysis_s") for p in profs.values() if p]
        analysis = [a for a in analysis if a is not None]
        if analysis:
            ch["analysis_median_s"] = statistics.median(analysis)
    # the first profile, even of a run stopped by its timeout (the probes it has)
    prof = profs[1] if 1 in profs else load(f"{W}/runs/{name}.edgeprof.1.prof")
    if prof:
        pr = prof.get("probes", {})
        pl = prof.get("placement", {})
        costs = pl.get("costs") or {}
        ch["probes"] = pr
        ch["costs"] = costs
        by_class, hit_sites_class, hits_class, trap_class, trap_func = (
            collections.Counter() for _ in range(5))
        funcs = prof.get("functions", [])
        for s in pl.get("sites", []):
            k = s.get("class", "?")
            h = s.get("hits", 0) or 0
            by_class[k] += 1
            hit_sites_class[k] += 1 if h else 0
            hits_class[k] += h
            t = h * (costs.get(cost_key(k)) or 0)
            trap_class[k] += t
            fi = s.get("func")
            fn = funcs[fi]["name"] if isinstance(fi, int) and fi < len(funcs) else "?"
            trap_func[(fn, s.get("kind", "?"))] += t
        tot = sum(trap_class.values()) or 1
        ch["sites_by_class"] = dict(by_class)
        ch["hits_by_class"] = dict(hits_class)
        ch["trap_share_by_class"] = {k: v / tot for k, v in trap_class.items()}
        # Where the remaining overhead goes: per class sites, hits and estimated time (hits x the
        # profile's cost of the class), and the share of the hits that uprobe fallbacks counted.
        all_hits = sum(hits_class.values())
        ch["by_class"] = {k: {"mechanism": mechanism(k), "sites": by_class[k],
                              "sites_hit": hit_sites_class[k], "hits": hits_class[k],
                              "ns_per_hit": costs.get(cost_key(k)),
                              "est_s": trap_class[k] / 1e9,
                              "share_of_hits": hits_class[k] / all_hits if all_hits else None}
                          for k in by_class}
        up_hits = sum(v for k, v in hits_class.items() if k in UPROBE_CLASSES)
        ch["uprobe_share_of_hits"] = up_hits / all_hits if all_hits else None
        ch["est_counting_s"] = sum(trap_class.values()) / 1e9
        per_func = collections.Counter()
        for (fn, _), v in trap_func.items():
            per_func[fn] += v
        ch["top_functions_by_trap"] = [
            {"function": fn, "est_trap_ns": int(v), "share": v / tot,
             "by_site_kind": {k: trap_func[(f2, k)] / tot for (f2, k) in trap_func if f2 == fn}}
            for fn, v in per_func.most_common(5)]
    cmp = load(f"{W}/runs/{name}.edgeprof.1.prof.compare.json")
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
L.append("| program | " + " | ".join(f"{k} s" for k in COLUMNS) + " | "
         + " | ".join(f"{k}/native" for k in SLOW) + " | edgeprof/callgrind | analysis s | cold analysis s |")
L.append("|---|" + "---:|" * (len(COLUMNS) + len(SLOW) + 3))
for r in results:
    c = r["columns"]
    sd = {k: slowdown(c, k) for k in SLOW}
    r["slowdown"] = {k: v[0] for k, v in sd.items()}
    r["slowdown_lower_bound"] = {k: v[1] for k, v in sd.items()}
    r["edgeprof_vs_callgrind"] = ratio(secs(c["edgeprof"]), secs(c["callgrind"]))
    L.append(f"| {r['program']} | " + " | ".join(cell(c[k]) for k in COLUMNS) + " | "
             + " | ".join(fmt_r(*sd[k]) for k in SLOW)
             + f" | {fmt_r(r['edgeprof_vs_callgrind'])} | {fmt_s(c['edgeprof'].get('analysis_median_s'))}"
             + f" | {fmt_s(c['cold'].get('analysis_median_s'))} |")
T["wall"] = "\n".join(L)

L = []
L.append("| program | sites attached | sites hit | counter hits | est. counting s | oracle hits | "
         "oracle counting s | counting/oracle | naive sites | naive hits | naive counting s | "
         "naive/edgeprof counting |")
L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in results:
    ch = r["columns"]["edgeprof"]
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
L.append(f"| program | edgeprof at most {GOAL_EDGEPROF_VS_NATIVE:.1f}x native (issue 14, corpus) | "
         "gcov/native | edgeprof slowdown below callgrind's | "
         "counting cost within 1.1x of the oracle | counting cost at least 20x below naive |")
L.append("|---|---|---:|---|---|---|")
goals = collections.Counter()


def verdict(x, ok, fmt, what):
    if x is None:
        return "not measured"
    goals[what + (" met" if ok else " not met")] += 1
    return ("met" if ok else "**not met**") + f": {fmt(x)}"


for r in results:
    if r["group"] == "missing":
        L.append(f"| {r['program']} | missing | - | missing | missing | missing |")
        continue
    evc, tvo, nve = r.get("edgeprof_vs_callgrind"), r.get("trap_vs_oracle"), r.get("naive_vs_edgeprof_trap")
    evn, evn_lb = r["slowdown"]["edgeprof"], r["slowdown_lower_bound"]["edgeprof"]
    gvn = r["slowdown"]["gcov"]
    r["goals"] = {"below_callgrind": None if evc is None else evc < 1,
                  "within_1_1_of_oracle": None if tvo is None else tvo <= GOAL_TRAP_VS_ORACLE,
                  "20x_below_naive": None if nve is None else nve >= GOAL_NAIVE_VS_EDGEPROF}
    if r["group"] == "corpus":
        ok = evn is not None and not evn_lb and evn <= GOAL_EDGEPROF_VS_NATIVE
        r["goals"]["edgeprof_at_most_2x_native"] = None if evn is None else ok
        g14 = verdict(evn, ok, lambda x: fmt_r(x, evn_lb) + " native", "edgeprof at most 2x native")
        cold, cold_lb = r["slowdown"]["cold"], r["slowdown_lower_bound"]["cold"]
        if cold is not None:
            r["goals"]["first_run_at_most_2x_native"] = not cold_lb and cold <= GOAL_EDGEPROF_VS_NATIVE
            g14 += f" (a first run: {fmt_r(cold, cold_lb)})"
    else:  # the goal is the corpus's: the test programs are the densest code, shown only
        g14 = "(not a corpus program) " + fmt_r(evn, evn_lb)
    L.append(f"| {r['program']} | {g14} | {fmt_r(gvn)} | "
             + verdict(evc, evc is not None and evc < 1,
                       lambda x: f"edgeprof takes {x:.2f}x callgrind's time", "callgrind")
             + " | " + verdict(tvo, tvo is not None and tvo <= GOAL_TRAP_VS_ORACLE,
                               lambda x: f"{x:.2f}x the oracle's cost", "oracle")
             + " | " + verdict(nve, nve is not None and nve >= GOAL_NAIVE_VS_EDGEPROF,
                               lambda x: f"naive pays {x:.1f}x", "naive") + " |")
T["goals"] = "\n".join(L)

# Where the remaining overhead goes: the measured overhead (edgeprof - native) next to the parts
# that can be named: the analysis, and each site class's estimated counting time.
L = []
L.append("| program | edgeprof - native s | analysis s | est. in-process counting s | "
         "est. uprobe counting s | rest s | counter hits | hits by uprobe fallbacks |")
L.append("|---|---:|---:|---:|---:|---:|---:|---:|")
C = []
C.append("| program | class | mechanism | ns per hit | sites | sites hit | hits | share of hits | "
         "est. s | share of est. |")
C.append("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
TOPS = []
for r in results:
    ch = r["columns"]["edgeprof"]
    if "by_class" not in ch:
        continue
    ep, nat = secs(ch), secs(r["columns"]["native"])
    over = ep - nat if ep is not None and nat is not None else None
    ana = ch.get("analysis_median_s")
    bc = ch["by_class"]
    est_in = sum(v["est_s"] for k, v in bc.items() if k in PATCH_CLASSES)
    est_up = sum(v["est_s"] for k, v in bc.items() if k in UPROBE_CLASSES)
    rest = over - (ana or 0) - est_in - est_up if over is not None else None
    ch["overhead"] = {"measured_s": over, "analysis_s": ana, "est_in_process_s": est_in,
                      "est_uprobe_s": est_up, "rest_s": rest}
    hits = sum(v["hits"] for v in bc.values())
    ups = ch.get("uprobe_share_of_hits")
    L.append(f"| {r['program']} | {fmt_s(over)} | {fmt_s(ana)} | {fmt_s(est_in)} | {fmt_s(est_up)} | "
             f"{fmt_s(rest)} | {fmt_n(hits)} | "
             f"{'-' if ups is None else f'{ups:.1%}'} |")
    tot = ch["est_counting_s"] or None
    order = [k for k in UPROBE_CLASSES + PATCH_CLASSES if k in bc] + sorted(
        k for k in bc if k not in UPROBE_CLASSES + PATCH_CLASSES)
    for k in order:
        v = bc[k]
        ns = v["ns_per_hit"]
        C.append(f"| {r['program']} | {k} | {v['mechanism']} | {'-' if ns is None else f'{ns:.0f}'} | "
                 f"{fmt_n(v['sites'])} | {fmt_n(v['sites_hit'])} | {fmt_n(v['hits'])} | "
                 f"{'-' if v['share_of_hits'] is None else format(v['share_of_hits'], '.1%')} | "
                 f"{fmt_s(v['est_s'])} | {'-' if not tot else format(v['est_s'] / tot, '.0%')} |")
    tops = []
    for t in ch["top_functions_by_trap"]:
        kinds = ", ".join(f"{k} {v:.0%}" for k, v in sorted(t["by_site_kind"].items(), key=lambda kv: -kv[1]) if v >= 0.005)
        tops.append(f"{t['function']} {t['share']:.0%} ({kinds})")
    TOPS.append(f"- **{r['program']}**: top functions by estimated counting time (by site kind): "
                f"{'; '.join(tops) or '-'}.")
    gap = [g for g in r.get("oracle_gap", []) if g["trap_ns"] - g["exact_trap_ns"] >= 1e6][:5]
    pc = r.get("placements_on_true_counts")
    extra = pc["profile_sites"]["trap_ns"] - pc["exact"]["trap_ns"] if pc else 0
    if gap and extra > 0:
        TOPS.append("  Where it pays more than the oracle (edgeprof / oracle counting s): "
                    + "; ".join(f"{g['function']} {g['trap_ns'] / 1e9:.2f} / {g['exact_trap_ns'] / 1e9:.2f}"
                                + f" ({(g['trap_ns'] - g['exact_trap_ns']) / extra:.0%} of the excess)"
                                for g in gap) + ".")
T["where"] = "\n".join(L) if len(L) > 2 else "No edgeprof profile."
T["classes"] = "\n".join(C) if len(C) > 2 else ""
T["tops"] = "\n".join(TOPS)

L = []
L.append("| program | edgeprof output | uprobe output | callgrind output | gcov output (.gcda files) | "
         "bolt output (fdata lines) | naive output |")
L.append("|---|---|---|---|---|---|---|")
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
    for col in COLUMNS:
        for rep, _, st, rc in runs.get((r["program"], col), []):
            if st == "failed":
                problems.append(f"{r['program']}: {col} run {rep} was killed by signal {rc - 128}"
                                + (" (SIGTRAP: an int3 it did not expect, such as another "
                                   "session's uprobe in a shared library under valgrind)"
                                   if rc - 128 == 5 else ""))
    g = oc("gcov") + (f", {c['gcov']['gcda_files']}" if "gcda_files" in c.get("gcov", {}) else "")
    fl = c["bolt"].get("fdata_lines") or []
    b = oc("bolt")
    if fl:
        b += ", " + ("none" if None in fl or 0 in fl else str(fl[0]))
        if None in fl or 0 in fl:
            problems.append(f"{r['program']}: a bolt run wrote no fdata counts")
    L.append(f"| {r['program']} | {oc('edgeprof')} | {oc('uprobe')} | {oc('callgrind')} | {g} | {b} | "
             f"{oc('naive')} |")
T["correct"] = "\n".join(L)

costs = next((r["columns"]["edgeprof"].get("costs") for r in results
              if r["columns"].get("edgeprof", {}).get("costs")), None)


def fmt_cost(k):
    v = costs.get(k)
    return "-" if v is None else f"{v:.0f}"


cost_s = ("-" if not costs else
          f"single-stepped {fmt_cost('stepped')} ns, emulated {fmt_cost('emulated')} ns, "
          f"optimized nop5 {fmt_cost('nop5')} ns per uprobe hit; in-process counter "
          f"{fmt_cost('patch')} ns, saving flags {fmt_cost('patch_flags')} ns per hit")
bolt_progs = [r for r in results if "instrumented_counters" in r["columns"].get("bolt", {})]
bolt_s = "; ".join(f"{r['program']} {r['columns']['bolt']['instrumented_counters']:,} counters in "
                   f"{r['columns']['bolt'].get('instrumented_functions', 0):,} functions"
                   + (f" ({r['columns']['bolt']['skipped_functions']:,} functions skipped, uncounted)"
                      if r['columns']['bolt'].get('skipped_functions') else "")
                   for r in bolt_progs)
commands = "\n".join(
    f"- {r['program']}: `{' '.join(os.path.basename(a) if i == 0 else a.replace(os.getcwd() + '/', '') for i, a in enumerate(r['argv']))}`"
    for r in results if r["argv"])
md = f"""# Benchmark: edgeprof against native, uprobes, callgrind, gcov, BOLT and a counter on every block

Generated by `make bench` (`bench/bench.sh`) on {E['M_DATE']}.

## Machine and settings

- {E['M_NPROC']} vCPUs ({E['M_CPU']}), {E['M_MEM']}, {E['M_OS']}, Linux {E['M_KERNEL']}; a shared VM
  without hardware performance counters. Load average at start {E['M_LOAD_START']}, at the end
  {E['M_LOAD_END']}; {E['M_OTHERS']} other edgeprof processes running at the start.
- edgeprof at commit {E['M_COMMIT']} (`run --probes`: {E['M_PROBES_OPTION']}); gcc {E['M_GCC']};
  libbpf {E['M_LIBBPF']}; {E['M_VALGRIND']}; BOLT: {E['M_BOLT']}.
- Site costs: {cost_s} ({E['M_CALIB']}).
- Columns: native; edgeprof = `edgeprof run`, its default mechanism (in-process counters where
  proven safe, uprobes elsewhere), a later run of the binary (an untimed run first fills
  edgeprof's decode and analysis caches: the analysis is read back); cold = the same with
  `EDGEPROF_NO_DECODE_CACHE=1`, a first run of the binary (capstone decodes every instruction,
  the CFGs and the plan are made); uprobe = `edgeprof run --probes uprobe` (every counter a
  kernel uprobe; "missing" when this edgeprof has no `--probes`); callgrind = `valgrind
  --tool=callgrind`; gcov = the same sources and flags plus `-fprofile-arcs`, each run writing its
  .gcda files into a fresh directory; bolt = `llvm-bolt-19 -instrument` of the same sources linked
  with `-Wl,--emit-relocs` (runtime `libbolt_rt_instr.a`), each run writing its counts to its
  `-instrumentation-file` at exit (included in its time{'; ' + bolt_s if bolt_s else ''});
  naive = `edgeprof run --placement naive` (a counter on every block).
- Programs: edgeprof's test programs (tests/programs/*.c, `gcc -O2 -g`, with a rounds argument,
  scale {E['TEST_SCALE']}; scale 1 is about 0.05 s natively, a tenth of the corpus's time, since
  under uprobes these densest of programs take over 10 minutes per 0.5 s run) and the corpus
  (scripts/corpus.sh: Debian 12 source packages, `-O2 -g`, workload size `{E['CORPUS_KIND']}`).
  Binaries run from private copies.
- Interleaved repetitions per program (native, edgeprof, cold, uprobe, callgrind, gcov, bolt,
  naive, then again): {E['REPS']} of native, gcov and bolt, {E['REPS_SLOW']} of edgeprof, cold,
  uprobe and callgrind; medians of wall-clock seconds. Every edgeprof run includes CFG recovery, placement,
  attaching, tracing and writing the profile; "analysis s" is the CFG recovery and placement part
  of it (the profile's `run.analysis_s`). Naive runs are stopped after {E['NAIVE_TIMEOUT']} s (then
  one run, shown as a lower bound).
- Counter figures come from the first edgeprof profile. The counting cost of a placement is the
  sum over its sites of executions x the cost of the site's class; `edgeprof compare` prices, on
  that run's true counts, the sites edgeprof attached, the naive placement (one counter on every
  block) and the oracle: Exact-Max, the chord placement planned with this very run's counts as
  weights.

## Wall time

{T['wall']}

## Counters and their cost

{T['probes']}

## Performance goals

{T['goals']}

## Where the remaining overhead goes

From the first edgeprof (default mechanism) profile: the measured overhead (edgeprof's median
minus native's) against what can be named in it: the analysis (CFG recovery and placement), and
per site class the estimated counting time, hits x the profile's cost for that class (uprobe
classes stepped, emulated, nop5: a kernel trap per hit; in-process classes patch and
patch-flags, the latter saving flags). "rest" is what these leave: starting and tracing the
process, attaching, patching, reading the counters and writing the profile, and the error of the
per-hit costs (measured in a tight loop). "hits by uprobe fallbacks": the share of all counter
hits counted by uprobes.

{T['where']}

{T['classes']}

{T['tops']}

## Correctness

Every completed run's stdout and exit status against the native run's.

{T['correct']}

{"Differences and failed runs:" + chr(10) + chr(10) + chr(10).join("- " + x for x in problems) if problems else "No output differs from the native run's."}

## Commands

{commands}
"""
with open(E["OUT"] + ".md.tmp", "w") as fh:
    fh.write(md)
os.replace(E["OUT"] + ".md.tmp", E["OUT"] + ".md")
meta = {k[2:].lower(): v for k, v in E.items() if k.startswith("M_")}
settings = {k.lower(): E[k] for k in ("REPS", "REPS_SLOW", "CORPUS_KIND", "EDGEPROF_TIMEOUT",
                                      "UPROBE_TIMEOUT", "CALLGRIND_TIMEOUT", "NAIVE_TIMEOUT",
                                      "TEST_SCALE")}
with open(E["OUT"] + ".json.tmp", "w") as fh:
    json.dump({"machine": meta, "settings": settings, "site_costs": costs, "goals": dict(goals),
               "results": results}, fh, indent=1)
os.replace(E["OUT"] + ".json.tmp", E["OUT"] + ".json")
print(md)
