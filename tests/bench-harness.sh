#!/usr/bin/env bash
# Test of the benchmark harness (bench/bench.sh, bench/bench_report.py) on one tiny test
# program, no corpus: not a measurement (no time is asserted), but the figures it reports
# must be consistent with each other and with the counts:
#  - every column ran and produced the native output; the gcov build wrote its .gcda file;
#  - the probe hits the BPF counters measured at edgeprof's sites equal those sites'
#    executions derived from the propagated counts (compare's "profile_sites" row);
#  - the naive placement priced on the true counts has no more hits than block executions
#    (the profile's naive_hits) and never fewer than edgeprof's;
#  - results.md and results.json are written, with the goal verdicts;
#  - a valgrind that is not there gives a "missing" callgrind column, and the run still ends
#    with the other figures.
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
# EDGEPROF=/nonexistent, so that a work directory it accepted would still not be emptied (the
# script stops at the missing edgeprof first); the decoys must keep their files.
mkdir -p "$tmp/decoy" && echo keep >"$tmp/decoy/file"
outside=$(mktemp -d "${TMPDIR:-/tmp}/bench-decoy.XXXXXX") && chmod 755 "${outside:?}" &&
	echo keep >"$outside/file"
trap 'rm -rf -- "${tmp:?}" "${outside:?}"' EXIT
for w in "$tmp/decoy" "$outside" "$outside/work" build "$PWD"; do
	rc=0
	EDGEPROF=/nonexistent BENCH_WORK=$w bench/bench.sh >"$tmp/out" 2>"$tmp/err" || rc=$?
	{ [ "$rc" != 0 ] && grep -q "refusing BENCH_WORK='$w'" "$tmp/err"; } ||
		fail "bench.sh did not refuse BENCH_WORK=$w (rc $rc): $(tail -1 "$tmp/err")"
done
EDGEPROF=/nonexistent BENCH_WORK="$tmp/decoy/new" bench/bench.sh >"$tmp/out" 2>"$tmp/err" || true
grep -q 'nonexistent not found' "$tmp/err" || fail "bench.sh refused a new directory in its mktemp dir"
[ "$(cat "$tmp/decoy/file" "$outside/file")" = "keep"$'\n'"keep" ] || fail "a decoy lost its file"
echo "ok: bench.sh refuses work directories outside build/ or a mktemp -d directory, or not its own"

build/edgeprof -q run -o "$tmp/true.prof" -- /bin/true 2>"$tmp/err" ||
	{ skip_if_no_bpf "$tmp/err"; fail "edgeprof run /bin/true: $(head -n 1 "$tmp/err")"; }

common=(env REPS=2 REPS_SLOW=1 NAIVE_TIMEOUT=30 TEST_SCALE=0.0005 TEST_PROGRAMS="switch recursion"
	CORPUS_PROGRAMS="" CALIBRATE=0)
"${common[@]}" BENCH_WORK="${tmp:?}/work" OUT="$tmp/results" bench/bench.sh >"$tmp/out" 2>"$tmp/err" ||
	{ tail -5 "$tmp/err"; fail "bench/bench.sh exited non-zero"; }
{ [ -s "$tmp/results.md" ] && [ -s "$tmp/results.json" ]; } || fail "no results.md or results.json"
grep -q '^## Performance goals' "$tmp/results.md" || fail "results.md has no goals section"
python3 - "$tmp/results.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
res = {r["program"]: r for r in d["results"]}
assert set(res) == {"switch", "recursion"}, res.keys()
for name, r in res.items():
    c = r["columns"]
    for col in ("native", "chords", "callgrind", "gcov", "naive"):
        assert c[col]["status"] == "ok", (name, col, c[col])
        assert c[col]["output_ok"] is True, (name, col, "output differs from native")
    assert c["gcov"].get("gcda_files", 0) >= 1, (name, "gcov wrote no .gcda")
    pr = c["chords"]["probes"]
    pc = r["placements_on_true_counts"]
    assert pc["profile_sites"]["hits"] == pr["hits"], (name, pc["profile_sites"], pr)
    # every block execution is a naive hit, except in blocks where no probe can go
    assert pc["naive"]["hits"] <= pr["naive_hits"], (name, pc["naive"], pr["naive_hits"])
    assert pc["naive"]["hits"] >= pr["hits"] > 0, (name, pc["naive"], pr)
    for g in ("below_callgrind", "within_1_1_of_oracle", "20x_below_naive"):
        assert r["goals"][g] in (True, False), (name, g, r["goals"])
    assert c["chords"]["analysis_median_s"] > 0, (name, "no analysis time")
    print(f"{name}: {pr['hits']} hits at {pr['sites']} sites, naive {pc['naive']['hits']}, "
          f"oracle {pc['exact']['hits']}")
EOF
echo "ok: every column ran with the native output; hits, naive and oracle figures consistent"

"${common[@]}" TEST_PROGRAMS=switch VALGRIND=/nonexistent/valgrind BENCH_WORK="${tmp:?}/work" \
	OUT="$tmp/nv" bench/bench.sh >"$tmp/out" 2>"$tmp/err" ||
	fail "bench/bench.sh exited non-zero without valgrind"
python3 - "$tmp/nv.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
assert r["columns"]["callgrind"]["status"] == "missing", r["columns"]["callgrind"]
assert r["columns"]["chords"]["status"] == "ok", r["columns"]["chords"]
EOF
grep -q '| switch | [0-9.]* | [0-9.]* | missing |' "$tmp/nv.md" || fail "no 'missing' callgrind cell"
echo "ok: without valgrind the callgrind column says missing and the rest is measured"
