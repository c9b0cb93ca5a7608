#!/usr/bin/env bash
# Test of the benchmark harness (bench/bench.sh, bench/bench_report.py) on two tiny test
# programs, no corpus: not a measurement (no time is asserted), but the figures it reports
# must be consistent with each other and with the counts:
#  - bench.sh refuses a work directory outside build/ or a mktemp -d directory, or a
#    non-empty one that is not its own (decoys keep their files);
#  - every column ran and produced the native output (cold too: edgeprof without its decode
#    cache); the gcov build wrote its .gcda file;
#    the uprobe column ran if this edgeprof has `run --probes` (else it says missing), with
#    uprobe sites only and the same edge counts as the default mechanism; the bolt column
#    ran if llvm-bolt-19 and its runtime are installed (else missing), each run wrote an
#    fdata file with the same number of lines, naming main;
#  - the probe hits the counters measured at edgeprof's sites equal those sites' executions
#    derived from the propagated counts (compare's "profile_sites" row);
#  - the naive placement priced on the true counts has no more hits than block executions
#    (the profile's naive_hits) and never fewer than edgeprof's;
#  - where the overhead goes: the site classes' sites and hits add up to the profile's, each
#    priced at the profile's cost of its class, the uprobe share is the uprobe classes' hits;
#  - results.md and results.json are written, with the goal verdicts;
#  - a valgrind and a BOLT that are not there give "missing" callgrind and bolt columns, and
#    the run still ends with the other figures.
# Exit 0 pass, 77 skip (no BPF), anything else fail.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=tests/support/bpf-checks.sh
source tests/support/bpf-checks.sh

fail() {
	echo "FAIL: $*"
	exit 1
}
# Everything this test writes goes below its own mktemp -d directory: refuse to run without it.
tmp=$(mktemp -d) || fail "mktemp -d failed"
[ -d "${tmp:?mktemp -d gave no directory}" ] || fail "mktemp -d gave no directory"
trap 'rm -rf -- "${tmp:?}"' EXIT

# bench.sh empties its work directory: it refuses one that is not below build/ nor in a
# mktemp -d directory, and a non-empty one that is not a bench work directory. Probed with
# EDGEPROF=$tmp/no-edgeprof (a path nothing creates; /nonexistent may exist on a machine), so
# that a work directory it accepted would still not be emptied (the script stops at the missing
# edgeprof first); the decoys must keep their files.
mkdir -p "$tmp/decoy" && echo keep >"$tmp/decoy/file"
outside=$(mktemp -d "${TMPDIR:-/tmp}/bench-decoy.XXXXXX") && chmod 755 "${outside:?}" &&
	echo keep >"$outside/file"
trap 'rm -rf -- "${tmp:?}" "${outside:?}"' EXIT
for w in "$tmp/decoy" "$outside" "$outside/work" build "$PWD"; do
	rc=0
	EDGEPROF=$tmp/no-edgeprof BENCH_WORK=$w bench/bench.sh >"$tmp/out" 2>"$tmp/err" || rc=$?
	{ [ "$rc" != 0 ] && grep -q "refusing BENCH_WORK='$w'" "$tmp/err"; } ||
		fail "bench.sh did not refuse BENCH_WORK=$w (rc $rc): $(tail -1 "$tmp/err")"
done
EDGEPROF=$tmp/no-edgeprof BENCH_WORK="$tmp/decoy/new" bench/bench.sh >"$tmp/out" 2>"$tmp/err" || true
grep -q 'no-edgeprof not found' "$tmp/err" || fail "bench.sh refused a new directory in its mktemp dir"
[ "$(cat "$tmp/decoy/file" "$outside/file")" = "keep"$'\n'"keep" ] || fail "a decoy lost its file"
echo "ok: bench.sh refuses work directories outside build/ or a mktemp -d directory, or not its own"

build/edgeprof -q run -o "$tmp/true.prof" -- /bin/true 2>"$tmp/err" ||
	{ skip_if_no_bpf "$tmp/err"; fail "edgeprof run /bin/true: $(head -n 1 "$tmp/err")"; }

# What this machine has, found here independently of bench.sh: an edgeprof with `run
# --probes` (then the uprobe column runs), llvm-bolt-19 and its runtime (then the bolt column).
help=$(build/edgeprof run --help 2>&1 || true)
have_probes=0
if grep -q -- --probes <<<"$help"; then have_probes=1; fi
have_bolt=0
if command -v llvm-bolt-19 >/dev/null && [ -f /usr/lib/llvm-19/lib/libbolt_rt_instr.a ]; then
	have_bolt=1
fi
echo "(run --probes: $have_probes, llvm-bolt-19: $have_bolt)"

common=(env REPS=2 REPS_SLOW=1 NAIVE_TIMEOUT=30 TEST_SCALE=0.0005 TEST_PROGRAMS="switch recursion"
	CORPUS_PROGRAMS="" CALIBRATE=0)
"${common[@]}" BENCH_WORK="${tmp:?}/work" OUT="$tmp/results" bench/bench.sh >"$tmp/out" 2>"$tmp/err" ||
	{ tail -5 "$tmp/err"; fail "bench/bench.sh exited non-zero"; }
{ [ -s "$tmp/results.md" ] && [ -s "$tmp/results.json" ]; } || fail "no results.md or results.json"
grep -q '^## Performance goals' "$tmp/results.md" || fail "results.md has no goals section"
grep -q '^## Where the remaining overhead goes' "$tmp/results.md" || fail "results.md has no overhead section"
python3 - "$tmp/results.json" "$tmp/work" "$have_probes" "$have_bolt" <<'PYEOF_harness_1'
import json, statistics, sys
d = json.load(open(sys.argv[1]))
work, have_probes, have_bolt = sys.argv[2], sys.argv[3] == "1", sys.argv[4] == "1"
UP, IN = {"stepped", "emulated", "nop5"}, {"patch", "patch-flags"}
res = {r["program"]: r for r in d["results"]}
assert set(res) == {"switch", "recursion"}, res.keys()


def edge_counts(path):
    p = json.load(open(path))
    return {(f["name"], e["from"], e["to"], e["kind"]): e["count"]
            for f in p["functions"] for e in f.get("edges", [])}


for name, r in res.items():
    c = r["columns"]
    ran = ["native", "edgeprof", "cold", "callgrind", "gcov", "naive"]
    ran += ["uprobe"] if have_probes else []
    ran += ["bolt"] if have_bolt else []
    for col in ran:
        assert c[col]["status"] == "ok", (name, col, c[col])
        assert c[col]["output_ok"] is True, (name, col, "output differs from native")
    for col in set(("uprobe", "bolt")) - set(ran):
        assert c[col]["status"] == "missing", (name, col, c[col])
    assert c["gcov"].get("gcda_files", 0) >= 1, (name, "gcov wrote no .gcda")
    ep = c["edgeprof"]
    pr = ep["probes"]
    pc = r["placements_on_true_counts"]
    assert pc["profile_sites"]["hits"] == pr["hits"], (name, pc["profile_sites"], pr)
    # every block execution is a naive hit, except in blocks where no probe can go
    assert pc["naive"]["hits"] <= pr["naive_hits"], (name, pc["naive"], pr["naive_hits"])
    assert pc["naive"]["hits"] >= pr["hits"] > 0, (name, pc["naive"], pr)
    for g in ("below_callgrind", "within_1_1_of_oracle", "20x_below_naive"):
        assert r["goals"][g] in (True, False), (name, g, r["goals"])
    assert ep["analysis_median_s"] > 0, (name, "no analysis time")
    # Where the overhead goes: the site classes add up to the profile's sites and hits, each
    # priced at the profile's cost of its class; the uprobe share is the uprobe classes' hits.
    bc = ep["by_class"]
    assert sum(v["sites"] for v in bc.values()) == pr["sites"], (name, bc, pr)
    assert sum(v["hits"] for v in bc.values()) == pr["hits"], (name, bc, pr)
    for k, v in bc.items():
        assert v["mechanism"] == ("uprobe" if k in UP else "in-process" if k in IN else k), (k, v)
        assert v["ns_per_hit"] == ep["costs"][k.replace("-", "_")], (k, v, ep["costs"])
        assert abs(v["est_s"] - v["hits"] * v["ns_per_hit"] / 1e9) < 1e-9, (k, v)
    up = sum(v["hits"] for k, v in bc.items() if k in UP)
    assert abs(ep["uprobe_share_of_hits"] - up / pr["hits"]) < 1e-12, (name, ep["uprobe_share_of_hits"])
    if not have_probes:  # an edgeprof without --probes counts with uprobes only
        assert set(bc) <= UP and ep["uprobe_share_of_hits"] == 1.0, (name, bc)
    ov = ep["overhead"]
    assert abs(ov["measured_s"] - (ep["median_s"] - c["native"]["median_s"])) < 1e-9, (name, ov)
    assert abs(ov["est_uprobe_s"] - sum(v["est_s"] for k, v in bc.items() if k in UP)) < 1e-9, ov
    if have_probes:
        # --probes uprobe: kernel uprobes only, and the same exact counts as the default's
        u = json.load(open(f"{work}/runs/{name}.uprobe.1.prof"))
        classes = {s.get("class") for s in u["placement"]["sites"]}
        assert classes <= UP, (name, "uprobe run used", classes)
        a, b = edge_counts(f"{work}/runs/{name}.edgeprof.1.prof"), edge_counts(f"{work}/runs/{name}.uprobe.1.prof")
        diff = [k for k in set(a) | set(b) if a.get(k) != b.get(k)]
        assert not diff, (name, "edge counts differ between --probes auto and uprobe", diff[:5])
    if have_bolt:
        bo = c["bolt"]
        # BOLT wrote counts at each exit, and the same edges ran each time (same input)
        fl = bo["fdata_lines"]
        assert len(fl) == 2 and fl[0] > 0 and fl[0] == fl[1], (name, fl)
        assert bo["instrumented_counters"] > 0 and bo["instrumented_functions"] > 0, (name, bo)
        fd = open(f"{work}/runs/{name}.bolt.1.fdata").read().split("\n")
        assert any(l.split()[1] == "main" for l in fd if l.strip()), (name, "main not in the fdata")
        bolt_s = f", bolt {fl[0]} fdata lines of {bo['instrumented_counters']} counters"
    else:
        bolt_s = ""
    print(f"{name}: {pr['hits']} hits at {pr['sites']} sites ({ep['uprobe_share_of_hits']:.0%} by "
          f"uprobes), naive {pc['naive']['hits']}, oracle {pc['exact']['hits']}{bolt_s}")
PYEOF_harness_1
echo "ok: every column ran with the native output; hits, classes, naive, oracle and BOLT figures consistent"

"${common[@]}" TEST_PROGRAMS=switch VALGRIND=/nonexistent/valgrind BOLT=/nonexistent/llvm-bolt-19 \
	BENCH_WORK="${tmp:?}/work" OUT="$tmp/nv" bench/bench.sh >"$tmp/out" 2>"$tmp/err" ||
	fail "bench/bench.sh exited non-zero without valgrind and BOLT"
python3 - "$tmp/nv.json" <<'PYEOF_harness_2'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
assert r["columns"]["callgrind"]["status"] == "missing", r["columns"]["callgrind"]
assert r["columns"]["bolt"]["status"] == "missing", r["columns"]["bolt"]
assert "bench/setup.sh" in r["columns"]["bolt"]["why"], r["columns"]["bolt"]
assert r["columns"]["edgeprof"]["status"] == "ok", r["columns"]["edgeprof"]
assert r["columns"]["gcov"]["status"] == "ok", r["columns"]["gcov"]
PYEOF_harness_2
grep -q '^| switch | [0-9.]* | [0-9.]* | [0-9.]* | [a-z0-9.]* | missing | [0-9.]* | missing | [0-9.]* |' "$tmp/nv.md" ||
	fail "no 'missing' callgrind and bolt cells"
echo "ok: without valgrind and BOLT their columns say missing and the rest is measured"
