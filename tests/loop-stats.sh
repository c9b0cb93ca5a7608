#!/bin/bash
# End-to-end test of `edgeprof run --loop-stats` (loop trip-count moments measured in BPF) and
# of `edgeprof report --time` using them from the profile. tests/sarkar/loop_distribution.c
# (gcc -O2) prints the exact moments (entries, sum and sum of squares of the trip counts) of
# the loops of work() (trip counts cycling through a fixed list), rwork() (the loop calls
# rwork recursively from its second trip: the same loop active in several frames at once),
# twork() (run by two threads at once), ework() (left by a return from inside the loop) and
# jwork() (left by a longjmp out of a callee). Checks:
#  - the profile's "loops" of those functions equal the printed moments exactly, and every
#    measured loop's trip sum is its header block's count; "loop_stats" states the cost;
#  - report --time --cost insns --json takes the moments from the profile: work()'s predicted
#    mean equals, and its standard deviation is within 1% of, callgrind's per-call
#    distribution (--dump-after=work; skipped without valgrind);
#  - `--loop-stats FILE` still works and overrides the profile's moments for its loops;
#  - a run without --loop-stats has no moments and the report says variance is assumed 0.
# Exit 0 pass, 1 fail, 77 skip (BPF unavailable).
set -uo pipefail
cd "$(dirname "$0")/.."

EDGEPROF=${EDGEPROF:-build/edgeprof}
ORACLE=build/tests/time_oracle
OUT=build/tests/loop-stats
PROG=$OUT/loop_distribution
# shellcheck source=tests/support/checks.sh
source tests/support/checks.sh
# shellcheck source=tests/support/bpf-checks.sh
source tests/support/bpf-checks.sh

command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
[ -x "$EDGEPROF" ] || { echo "FAIL: $EDGEPROF not built (run make)"; exit 1; }
mkdir -p "$OUT"
gcc -O2 -g -pthread -o "$PROG" tests/sarkar/loop_distribution.c ||
	{ echo "FAIL: cannot build $PROG"; exit 1; }

if ! "$EDGEPROF" -q run --loop-stats -o "$OUT/ld.data" -- "$PROG" 16 2 >/dev/null \
	2>"$OUT/ld.run.log"; then
	skip_if_no_bpf "$OUT/ld.run.log"
	echo "FAIL: edgeprof run --loop-stats failed: $(tail -n 2 "$OUT/ld.run.log")"
	exit 1
fi

# 1. The profile's moments against the program's own account.
if python3 - "$OUT/ld.data" "$OUT/ld.run.log" <<'EOF'; then
import json, sys
p = json.load(open(sys.argv[1]))
want = {}
for line in open(sys.argv[2]):
    name, e, s, q = line.split()
    want[name] = (int(e), int(s), int(q))
ok = True
for name, (e, s, q) in want.items():
    fs = [f for f in p["functions"] if f["name"] == name or f["name"].startswith(name + ".")]
    if len(fs) != 1 or len(fs[0].get("loops", [])) != 1:
        print(f"{name}: not one function with one measured loop"); ok = False; continue
    l = fs[0]["loops"][0]
    got = (l["entries"], l["sum"], l["sumsq"])
    print(f"{name}: measured entries/sum/sumsq {got}, exact {(e, s, q)}")
    ok &= got == (e, s, q)
# Every measured loop: its trip sum is its header's block count.
n = 0
for f in p["functions"]:
    blocks = {b["addr"]: b["count"] for b in f.get("blocks", [])}
    for l in f.get("loops", []):
        n += 1
        if blocks.get(l["header"]) != l["sum"]:
            print(f"{f['name']} loop {l['header']}: sum {l['sum']} != header count "
                  f"{blocks.get(l['header'])}"); ok = False
ls = p.get("loop_stats")
print(f"loop_stats: {ls}")
ok &= ls is not None and ls["measured"] >= 3 and ls["hits"] > 0 and ls["est_trap_ns"] > 0
ok &= n >= 3
sys.exit(0 if ok else 1)
EOF
	ok "measured moments exact (recursion, threads, return and longjmp out of a loop)"
else
	bad "measured loop moments differ from the exact ones"
fi

# 2. report --time takes them from the profile.
"$EDGEPROF" report --time --cost insns --json "$OUT/ld.data" >"$OUT/ld.json" ||
	bad "report --time failed"
python3 - "$OUT/ld.json" <<'EOF' || bad "report --time does not use the profile's moments"
import json, sys
r = json.load(open(sys.argv[1]))
w = [f for f in r["functions"] if f["name"] == "work"][0]
print(f"report: loops_with_moments {r['loops_with_moments']}, from profile "
      f"{r['loops_from_profile']}, loop probes {r.get('loop_probes')}")
sys.exit(0 if r["loops_from_profile"] >= 3 and r["loops_from_file"] == 0 and
         r["loop_variance"] != "assumed 0" and w["loops"][0]["trips_var_measured"] and
         r["loop_probes"]["hits"] > 0 else 1)
EOF
"$EDGEPROF" report --time --cost insns "$OUT/ld.data" >"$OUT/ld.txt"
grep -q "^loop probes: .* extra probe hits, est\. " "$OUT/ld.txt" ||
	bad "the text report does not state the cost of --loop-stats"

# 3. Predicted mean and standard deviation of work() against callgrind, per call.
if command -v valgrind >/dev/null; then
	[ -x "$ORACLE" ] || { echo "FAIL: $ORACLE not built (make test builds it)"; exit 1; }
	rm -rf "$OUT/percall" && mkdir -p "$OUT/percall"
	valgrind --tool=callgrind --dump-instr=yes --dump-after=work \
		--callgrind-out-file="$OUT/percall/cg" "$PROG" 16 2 >/dev/null 2>&1
	read -r n mean sd < <("$ORACLE" percall work "$OUT"/percall/cg*)
	if python3 - "$OUT/ld.json" "$n" "$mean" "$sd" <<'EOF'; then
import json, sys
r = json.load(open(sys.argv[1]))
w = [f for f in r["functions"] if f["name"] == "work"][0]
n, mean, sd = int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
print(f"work: {n} calls; predicted mean {w['mean']} sd {w['stddev']:.6g}; callgrind per call "
      f"mean {mean} sd {sd:.6g}")
sys.exit(0 if w["calls"] == n and abs(w["mean"] - mean) <= 1e-9 * mean and
         abs(w["stddev"] - sd) <= 0.01 * sd else 1)
EOF
		ok "work() mean and standard deviation from the profile's moments"
	else
		bad "work(): predicted mean or standard deviation off"
	fi
else
	echo "note: valgrind not found: per-call check against callgrind skipped"
fi

# 4. --loop-stats FILE overrides the profile for its loops (here: work's trip counts made
# constant, so its loop variance is 0 and the standard deviation drops).
python3 - "$OUT/ld.json" >"$OUT/override.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
w = [f for f in r["functions"] if f["name"] == "work"][0]
l = w["loops"][0]
e = int(l["entries"]); s = round(l["trips"] * e)
json.dump({"loops": [{"func": w["addr"], "header": l["header"], "entries": e, "sum": s,
                      "sumsq": s * s / e}]}, sys.stdout)
EOF
"$EDGEPROF" report --time --cost insns --loop-stats "$OUT/override.json" --json "$OUT/ld.data" \
	>"$OUT/override.out.json" || bad "report --time --loop-stats FILE failed"
python3 - "$OUT/ld.json" "$OUT/override.out.json" <<'EOF' || bad "--loop-stats FILE did not override"
import json, sys
a, b = (json.load(open(x)) for x in sys.argv[1:3])
wa = [f for f in a["functions"] if f["name"] == "work"][0]
wb = [f for f in b["functions"] if f["name"] == "work"][0]
print(f"override: from file {b['loops_from_file']}, work sd {wa['stddev']:.6g} -> "
      f"{wb['stddev']:.6g}, trips_var {wb['loops'][0]['trips_var']}")
sys.exit(0 if b["loops_from_file"] == 1 and wb["loops"][0]["trips_var"] == 0 and
         wb["stddev"] < wa["stddev"] and wb["mean"] == wa["mean"] else 1)
EOF

# 5. Without --loop-stats: no moments, variance assumed 0.
if "$EDGEPROF" -q run -o "$OUT/plain.data" -- "$PROG" 2 1 >/dev/null 2>"$OUT/plain.log" &&
	"$EDGEPROF" report --time --cost insns --json "$OUT/plain.data" >"$OUT/plain.json"; then
	python3 - "$OUT/plain.data" "$OUT/plain.json" <<'EOF' || bad "a plain run has loop moments"
import json, sys
p, r = (json.load(open(x)) for x in sys.argv[1:3])
sys.exit(0 if "loop_stats" not in p and not any("loops" in f for f in p["functions"]) and
         r["loop_variance"] == "assumed 0" and "loop_probes" not in r else 1)
EOF
else
	bad "plain run or report failed"
fi

[ "$fails" = 0 ] && echo "loop-stats: all passed"
[ "$fails" = 0 ]
