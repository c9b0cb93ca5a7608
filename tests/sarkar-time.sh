#!/bin/bash
# End-to-end test of `edgeprof report --time` (Sarkar 1989): for test programs built with
# gcc -O2, `edgeprof run`, then `report --time --cost insns --json`, against callgrind:
#  - every function the report marks "exact_expected" (exact counts, no calls by pointer or out
#    of the binary, no rep string instruction, not recursive, callees exact and either called
#    only from it or of constant cost) must predict callgrind's inclusive Ir per call exactly;
#    calls out of the binary are costed with callgrind's mean per callee (a --cost FILE that
#    build/tests/time_oracle derives), and every non-recursive function's relative error is
#    listed in build/tests/sarkar-time/NAME.tsv;
#  - every function of every program: a share of at most 100% and a standard deviation that
#    N calls of that mean allow (at most mean x sqrt(N - 1)), never negative;
#  - recursion (tests/programs/recursion.c: fib, a tree build and walk, is_even/is_odd, a
#    recursive-descent parser): no mean or stddev per call for a recursive function; each
#    call cycle's entries and time per entry (time_oracle cycles) equal callgrind's calls into
#    the cycle from outside it and their inclusive Ir;
#  - tests/sarkar/irreducible.c: an irreducible loop, timed through a dispatch block;
#  - tests/sarkar/distribution.c: work()'s mean must equal, and its standard deviation be
#    within 1% of, the per-call distribution callgrind measures (--dump-after=work), given
#    the loop's trip-count moments with --loop-stats; without them the report must say that
#    loop variance is assumed 0;
#  - bad input: a build-id mismatch, an unknown --cost, --fcdg of a missing function, --dot
#    without --fcdg: one line on stderr and the documented exit status;
#  - --fcdg text and DOT output for work().
# Exit 0 pass, 1 fail, 77 skip (valgrind or BPF missing).
set -uo pipefail
cd "$(dirname "$0")/.."

EDGEPROF=${EDGEPROF:-build/edgeprof}
ORACLE=build/tests/time_oracle
OUT=build/tests/sarkar-time
INPUT=tests/programs/stdin.c
# NAME:SOURCE:OPTIMISATION
PROGRAMS="loops:tests/programs/loops.c:O2 switch:tests/programs/switch.c:O2
	tailcall:tests/programs/tailcall.c:O2 callbacks:tests/programs/callbacks.c:O2
	recursion:tests/programs/recursion.c:O2 computed_goto:tests/programs/computed_goto.c:O2
	example:tests/programs/example.c:O2 rep_string:tests/programs/rep_string.c:O2
	irreducible:tests/sarkar/irreducible.c:O1"
fail=0

command -v valgrind >/dev/null || { echo "SKIP: valgrind not found"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
mkdir -p "$OUT" build/tests
[ -x "$ORACLE" ] || { echo "FAIL: $ORACLE not built (make test builds it)"; exit 1; }

bad() {
	echo "FAIL: $*"
	fail=1
}

# profile NAME PROG ARGS...: edgeprof run into $OUT/NAME.data (skip the test without BPF).
profile() {
	local name=$1
	shift
	if ! "$EDGEPROF" -q run -o "$OUT/$name.data" -- "$@" <"$INPUT" >/dev/null \
		2>"$OUT/$name.run.log"; then
		if grep -qi "permission\|operation not permitted\|CAP_\|root" "$OUT/$name.run.log"; then
			echo "SKIP: edgeprof run cannot attach: $(head -n 1 "$OUT/$name.run.log")"
			exit 77
		fi
		bad "$name: edgeprof run failed: $(tail -n 1 "$OUT/$name.run.log")"
		return 1
	fi
}

# callgrind NAME PROG ARGS...: one callgrind output $OUT/NAME.cg (no forks in these programs).
callgrind() {
	local name=$1
	shift
	valgrind --tool=callgrind --dump-instr=yes --collect-jumps=yes --skip-plt=no \
		--callgrind-out-file="$OUT/$name.cg" -- "$@" <"$INPUT" >/dev/null \
		2>"$OUT/$name.cg.log"
}

for spec in $PROGRAMS; do
	IFS=: read -r name src opt <<<"$spec"
	prog=$OUT/$name
	gcc "-$opt" -g -o "$prog" "$src" -lpthread 2>"$OUT/$name.cc.log" ||
		{ bad "$name: does not compile"; continue; }
	profile "$name" "$prog" || continue
	callgrind "$name" "$prog"
	"$EDGEPROF" report --time --cost insns --json "$OUT/$name.data" >"$OUT/$name.r1.json" ||
		{ bad "$name: report --time failed"; continue; }
	"$ORACLE" ext "$OUT/$name.r1.json" "$(realpath "$prog")" "$OUT/$name.cg" \
		>"$OUT/$name.cost.json" || { bad "$name: time_oracle ext failed"; continue; }
	"$EDGEPROF" report --time --cost "$OUT/$name.cost.json" --json "$OUT/$name.data" \
		>"$OUT/$name.json" || { bad "$name: report --time --cost FILE failed"; continue; }
	if line=$("$ORACLE" compare "$OUT/$name.json" "$(realpath "$prog")" "$OUT/$name.cg" \
		--tsv "$OUT/$name.tsv" --check-expected 2>"$OUT/$name.oracle.log"); then
		echo "ok: $name: $line"
	else
		bad "$name: $line; $(head -n 3 "$OUT/$name.oracle.log" | tr '\n' ' ')"
	fi
	# Shares and standard deviations that the counts allow.
	if line=$(python3 - "$OUT/$name.json" "$OUT/$name.r1.json" <<'EOF'
import json, math, sys
bad = []
for path in sys.argv[1:]:
    for f in json.load(open(path))["functions"]:
        share, sd, mean, n = f.get("share"), f.get("stddev"), f.get("mean"), f["calls"]
        if share is not None and not 0 <= share <= 1 + 1e-9:
            bad.append(f"{f['name']}: share {share}")
        if sd is not None and (sd < 0 or sd > mean * math.sqrt(max(n - 1, 0)) * (1 + 1e-9)):
            bad.append(f"{f['name']}: stddev {sd} with {n} calls of mean {mean}")
print("; ".join(bad) if bad else "every share <= 100%, every stddev possible")
sys.exit(1 if bad else 0)
EOF
	); then
		echo "ok: $name: $line"
	else
		bad "$name: $line"
	fi
done

# Recursion: call cycles timed per entry, against callgrind's calls into them.
if [ -f "$OUT/recursion.json" ]; then
	if line=$("$ORACLE" cycles "$OUT/recursion.json" "$(realpath "$OUT/recursion")" \
		"$OUT/recursion.cg" 2>&1); then
		echo "$line" | sed 's/^/  /'
		echo "ok: recursion: every call cycle's entries and time per entry are callgrind's"
	else
		bad "recursion: call cycles: $line"
	fi
	grep -q '"not_computed":"recursive: call cycle fib -> fib"' "$OUT/recursion.json" ||
		bad "recursion: fib's mean per call is not stated as not computed"
	grep -q '"cycle":"is_even -> is_odd -> is_even"\|"cycle":"is_odd -> is_even -> is_odd"' \
		"$OUT/recursion.json" || bad "recursion: no is_even/is_odd cycle"
	"$EDGEPROF" report --time --cost insns "$OUT/recursion.data" >"$OUT/recursion.txt"
	grep -Eq "^ +[0-9]+ +[0-9]+ +[0-9.e+]+ +[0-9.]+%  fib +fib -> fib" "$OUT/recursion.txt" ||
		bad "recursion: the text report has no time per entry for fib ($OUT/recursion.txt)"
fi

# The irreducible program: made reducible by a dispatch block, every FCDG frequency right.
if [ -f "$OUT/irreducible.data" ]; then
	"$EDGEPROF" report --time --cost insns "$OUT/irreducible.data" >"$OUT/irreducible.txt"
	if grep -q "^irreducible: *1 functions made reducible by dispatch blocks" \
		"$OUT/irreducible.txt" && grep -q "irr .*irreducible(dispatch)" "$OUT/irreducible.txt" &&
		grep -Eq "^FCDG check: .* in ([0-9]+) of \1 functions" "$OUT/irreducible.txt"; then
		echo "ok: irreducible: irr() timed through a dispatch block"
	else
		bad "irreducible: no dispatch block or FCDG check failed ($OUT/irreducible.txt)"
	fi
fi

# The distribution program: mean exact, standard deviation within 1% with loop moments.
prog=$OUT/distribution
if gcc -O2 -g -o "$prog" tests/sarkar/distribution.c && profile distribution "$prog"; then
	read -r entries sum sumsq <"$OUT/distribution.run.log" || true
	"$EDGEPROF" report --time --cost insns --json "$OUT/distribution.data" \
		>"$OUT/distribution.nomom.json"
	python3 - "$OUT/distribution.nomom.json" "$entries" "$sum" "$sumsq" \
		>"$OUT/distribution.loops.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
w = [f for f in r["functions"] if f["name"] == "work"][0]
assert r["loop_variance"] == "assumed 0", r["loop_variance"]
(loop,) = w["loops"]
assert loop["entries"] == int(sys.argv[2]), (loop["entries"], sys.argv[2])
json.dump({"loops": [{"func": w["addr"], "header": loop["header"], "entries": int(sys.argv[2]),
                      "sum": int(sys.argv[3]), "sumsq": int(sys.argv[4])}]}, sys.stdout)
EOF
	[ -s "$OUT/distribution.loops.json" ] || bad "distribution: no loop or wrong loop entries"
	"$EDGEPROF" report --time --cost insns --loop-stats "$OUT/distribution.loops.json" --json \
		"$OUT/distribution.data" >"$OUT/distribution.json" || bad "distribution: report failed"
	rm -rf "$OUT/percall" && mkdir -p "$OUT/percall"
	valgrind --tool=callgrind --dump-instr=yes --dump-after=work \
		--callgrind-out-file="$OUT/percall/cg" "$prog" 2>/dev/null
	read -r n mean sd < <("$ORACLE" percall work "$OUT"/percall/cg*)
	if python3 - "$OUT/distribution.json" "$n" "$mean" "$sd" <<'EOF'; then
import json, sys
r = json.load(open(sys.argv[1]))
w = [f for f in r["functions"] if f["name"] == "work"][0]
n, mean, sd = int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
ok = w["calls"] == n and w["mean"] == mean and abs(w["stddev"] - sd) <= 0.01 * sd
print(f"work: {n} calls, predicted mean {w['mean']} sd {w['stddev']:.6g}, "
      f"callgrind per call mean {mean} sd {sd:.6g}, loop trip moments measured: "
      f"{w['loops'][0]['trips_var_measured']}")
sys.exit(0 if ok and w["loops"][0]["trips_var_measured"] else 1)
EOF
		echo "ok: distribution"
	else
		bad "distribution: mean or standard deviation off"
	fi
	"$EDGEPROF" report --time --cost insns --loop-model independent --json \
		"$OUT/distribution.data" >"$OUT/distribution.iid.json"
	grep -q '"loop_model":"independent"' "$OUT/distribution.iid.json" ||
		bad "--loop-model independent not reported"
	# --fcdg, text and DOT.
	"$EDGEPROF" report --time --cost insns --fcdg work "$OUT/distribution.data" \
		>"$OUT/work.fcdg" && grep -q "^start " "$OUT/work.fcdg" &&
		grep -q "^preheader" "$OUT/work.fcdg" || bad "--fcdg work: no START or PREHEADER"
	"$EDGEPROF" report --time --fcdg work --dot "$OUT/distribution.data" >"$OUT/work.dot" &&
		head -n 1 "$OUT/work.dot" | grep -q '^digraph' || bad "--fcdg work --dot"
fi

# The default cycles model and the text report.
if [ -f "$OUT/loops.data" ]; then
	if "$EDGEPROF" report --time "$OUT/loops.data" >"$OUT/loops.cycles.txt" &&
		grep -q "^cost model: *cycles" "$OUT/loops.cycles.txt" &&
		grep -q "collatz_steps" "$OUT/loops.cycles.txt"; then
		echo "ok: cycles model text report"
	else
		bad "report --time (cycles) on loops ($OUT/loops.cycles.txt)"
	fi
fi

# Bad input: one line on stderr, documented status.
expect() {
	local want=$1 what=$2 rc
	shift 2
	"$EDGEPROF" "$@" >/dev/null 2>"$OUT/err.txt"
	rc=$?
	if [ "$rc" != "$want" ] || [ "$(wc -l <"$OUT/err.txt")" != 1 ]; then
		bad "$what: exit $rc (want $want), stderr: $(head -c 300 "$OUT/err.txt")"
	else
		echo "ok: $what: $(cat "$OUT/err.txt")"
	fi
}
if [ -f "$OUT/loops.data" ]; then
	cp "$OUT/loops" "$OUT/loops.keep"
	gcc -O1 -g -o "$OUT/loops" tests/programs/loops.c
	expect 1 "rebuilt binary (build-id mismatch)" report --time "$OUT/loops.data"
	mv "$OUT/loops.keep" "$OUT/loops"
	expect 2 "unknown --cost" report --time --cost nosuchmodel "$OUT/loops.data"
	expect 1 "--fcdg of a missing function" report --time --fcdg no_such_fn "$OUT/loops.data"
	expect 2 "--dot without --fcdg" report --time --dot "$OUT/loops.data"
	expect 2 "--cost without --time" report --cost insns "$OUT/loops.data"
	echo '{"base":"insns","classes":{"alu":-1}}' >"$OUT/bad-cost.json"
	expect 1 "a cost file with a negative cost" report --time --cost "$OUT/bad-cost.json" \
		"$OUT/loops.data"
fi

[ "$fail" = 0 ] && echo "sarkar-time: all passed"
exit "$fail"
