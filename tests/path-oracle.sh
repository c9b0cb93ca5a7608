#!/bin/bash
# Self-test of the Ball-Larus path oracle (build/tests/step_trace + build/tests/path_oracle),
# which will check `edgeprof run --paths`. Builds a few tests/programs/* with gcc -O0, gcc -O2
# and clang -O2 (all -g -fPIE -pie); runs each natively, under step_trace (single-stepping
# every thread) and under callgrind (tests/support/callgrind-run.sh), with the same arguments
# and stdin (tests/programs/stdin.c, as tests/oracle-run.sh does): both must exit and print
# as the native run. Then replays the trace against `edgeprof cfg PROG --json` and checks the
# oracle itself:
#   (a) every block and edge count the replay derives (path_oracle --report, in the shape of
#       `edgeprof report --json`) equals callgrind's, by build/tests/count_oracle unchanged;
#   (b) the paths add up (tests below, in python): each edge's occurrences in the paths (pairs
#       of consecutive blocks) plus the retreating edges that ended paths equal the derived
#       edge counts; each block's occurrences equal its count; every path follows CFG edges
#       (non-retreating inside, retreating where it ends or starts "back"; a path started
#       "resume" by a longjmp adds the setjmp call's edge it names), starts "entry" at
#       the function's entry; paths started and ended by each back edge pair up; starts
#       "entry" = activations; ends = activations + longjmp resumes.
# One line per build, then a total; exit 1 on any failure (a missing tool is a failure).
# Not in the default list, as (a) cannot hold for them: fork_child (step_trace leaves forked
# children untraced, callgrind counts them) and signal_death or longjmp_mix (callgrind drops
# the counts of a superblock whose execution faults; the trace has the instructions that ran).
# Usage: tests/path-oracle.sh [NAME-FILTER]   (e.g. "threads" or "-clang-")
#        PATH_ORACLE_PROGRAMS="rep_string callbacks" tests/path-oracle.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=tests/support/callgrind-run.sh
source tests/support/callgrind-run.sh
# shellcheck source=tests/support/build-jobs.sh
source tests/support/build-jobs.sh

OUT=build/tests/path-oracle
STEP=build/tests/step_trace
PATHS=build/tests/path_oracle
COUNT=build/tests/count_oracle
EDGEPROF=${EDGEPROF:-build/edgeprof}
INPUT=tests/programs/stdin.c # stdin of every run
JOBS=2                       # builds in parallel
FILTER=${1:-}
RUN_TIMEOUT=300 # seconds per traced run (status 124 when it hangs)
# The programs checked (tests/programs/NAME.c or .cpp); PATH_ORACLE_PROGRAMS overrides.
PROGRAMS=${PATH_ORACLE_PROGRAMS:-loops recursion switch threads longjmp exit_deep tailcall rep_string
	callbacks}
# Arguments per program (default none), as tests/oracle-run.sh gives them.
declare -A RUN_ARGS=([exit_deep]="5" [signal_death]="segv" [fork_child]="100"
	[exec_deep]="--fork /bin/true" [exec_kill]="8 /bin/sleep")

for tool in valgrind python3 gcc clang timeout; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "path-oracle: FAIL: $tool not found"
		exit 1
	fi
done
if ! make -s "$STEP" "$PATHS" "$COUNT" "$EDGEPROF"; then
	echo "path-oracle: FAIL: cannot build $STEP, $PATHS, $COUNT or $EDGEPROF"
	exit 1
fi
mkdir -p "$OUT"

# check_paths CFG PATHS-JSON: the path sums of (b); prints a summary or the first problems.
check_paths() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
from collections import Counter

cfg = {f["addr"]: f for f in json.load(open(sys.argv[1]))["functions"]}
doc = json.load(open(sys.argv[2]))
errs = []
npaths = nexec = nedges = 0
for f in doc["functions"]:
    name, cf = f["name"], cfg.get(f["addr"])
    if cf is None:
        errs.append(f"{name}: not in the CFG")
        continue
    kinds = {}
    for e in cf["edges"]:
        if e["to"] != "exit" and e["from"] != "entry":
            kinds[(e["from"], e["to"])] = bool(e.get("retreating"))
    sums, bsums, back_in, back_out = Counter(), Counter(), Counter(), Counter()
    starts, ends = Counter(), Counter()
    for p in f["paths"]:
        bl, c = p["blocks"], p["count"]
        npaths += 1
        nexec += c
        starts[p["start"]] += c
        ends[p["end"]] += c
        if not bl:
            errs.append(f"{name}: empty path")
            continue
        if p["start"] == "entry" and bl[0] != f["addr"]:
            errs.append(f"{name}: path starts 'entry' at {bl[0]}")
        if p["start"] == "resume":
            if (p["start_from"], bl[0]) not in kinds:
                errs.append(f"{name}: path starts 'resume' by {p['start_from']} -> {bl[0]}, "
                            "not a CFG edge")
            sums[(p["start_from"], bl[0])] += c
        if p["start"] == "back":
            if kinds.get((p["start_from"], bl[0])) is not True:
                errs.append(f"{name}: path starts 'back' by {p['start_from']} -> {bl[0]}, "
                            "not a retreating edge")
            back_in[(p["start_from"], bl[0])] += c
        for a, b in zip(bl, bl[1:]):
            if kinds.get((a, b)) is not False:
                errs.append(f"{name}: path step {a} -> {b} is not a non-retreating CFG edge")
            sums[(a, b)] += c
        for b in bl:
            bsums[b] += c
        if p["end"] == "back":
            if kinds.get((bl[-1], p["end_to"])) is not True:
                errs.append(f"{name}: path ends 'back' by {bl[-1]} -> {p['end_to']}, "
                            "not a retreating edge")
            sums[(bl[-1], p["end_to"])] += c
            back_out[(bl[-1], p["end_to"])] += c
    derived = {(e["from"], e["to"]): e["count"] for e in f["edges"]}
    for e in f["edges"]:
        if e.get("cfg") is False:
            errs.append(f"{name}: transition {e['from']} -> {e['to']} is not a CFG edge")
    for k in set(sums) | set(derived):
        nedges += 1
        if sums[k] != derived.get(k, 0):
            errs.append(f"{name}: edge {k[0]} -> {k[1]}: paths {sums[k]}, "
                        f"derived {derived.get(k, 0)}")
    for b in f["blocks"]:
        if bsums[b["addr"]] != b["count"]:
            errs.append(f"{name}: block {b['addr']}: paths {bsums[b['addr']]}, "
                        f"derived {b['count']}")
    if back_in != back_out:
        errs.append(f"{name}: paths started and ended by back edges differ")
    resumes = sum(r["count"] for r in f["resumes"])
    if starts["entry"] != f["count"] or starts["resume"] != resumes:
        errs.append(f"{name}: {starts['entry']} paths start 'entry', {f['count']} "
                    f"activations; {starts['resume']} start 'resume', {resumes} resumes")
    if ends["exit"] + ends["cut"] != f["count"] + resumes:
        errs.append(f"{name}: {ends['exit'] + ends['cut']} paths end 'exit' or 'cut', "
                    f"{f['count']} activations + {resumes} resumes")
if doc["inconsistencies"]:
    errs.append(f"{doc['inconsistencies']} inconsistencies")
if errs:
    print(f"path sums: {len(errs)} problems: " + "; ".join(errs[:5]))
    sys.exit(1)
print(f"trace {doc['trace']['records']} records; paths {npaths} distinct ({nexec} executed), "
      f"path sums of {nedges} edges ok")
EOF
}

# same_as_native DIR WHAT RC OUTFILE: a run's status and stdout against the native run's.
same_as_native() {
	if [ "$3" != "$(cat "$1/native.rc")" ]; then
		echo "$2 exit status $3, natively $(cat "$1/native.rc")"
		return 1
	fi
	if ! cmp -s "$4" "$1/native.out"; then
		echo "$2 stdout differs from the native run ($4)"
		return 1
	fi
}

# run_one CC OPT NAME SRC: one build; prints one line.
run_one() {
	local cc=$1 opt=$2 name=$3 src=$4 dir=$OUT/$3 rc=0 args cgargs=() f l sums cnt
	rm -rf "$dir"
	mkdir -p "$dir"
	read -r -a args <<<"${RUN_ARGS[$(basename "${src%.*}")]:-}"
	if ! $cc "-$opt" -g -fPIE -pie -o "$dir/prog" "$src" >"$dir/build.log" 2>&1; then
		echo "FAIL $name: compile error (see $dir/build.log)"
		return 1
	fi
	{ "$dir/prog" "${args[@]}" <"$INPUT" >"$dir/native.out" 2>/dev/null; } 2>/dev/null || rc=$?
	echo "$rc" >"$dir/native.rc"

	rc=0
	{ timeout --kill-after=10 "$RUN_TIMEOUT" "$STEP" -o "$dir/trace" -- "$dir/prog" \
		"${args[@]}" <"$INPUT" >"$dir/trace.out" 2>"$dir/trace.log"; } 2>/dev/null || rc=$?
	if ! l=$(same_as_native "$dir" "step_trace:" "$rc" "$dir/trace.out"); then
		echo "FAIL $name: $l (see $dir/trace.log)"
		return 1
	fi
	if ! "$EDGEPROF" cfg "$dir/prog" --json >"$dir/cfg.json" 2>"$dir/cfg.log"; then
		echo "FAIL $name: edgeprof cfg failed (see $dir/cfg.log)"
		return 1
	fi
	rc=0
	"$PATHS" --cfg "$dir/cfg.json" --trace "$dir/trace" --json >"$dir/paths.json" \
		2>"$dir/paths.log" || rc=$?
	if [ $rc -ne 0 ]; then
		echo "FAIL $name: path_oracle exit $rc: $(head -n 1 "$dir/paths.log") (see $dir/paths.log)"
		return 1
	fi
	if ! "$PATHS" --cfg "$dir/cfg.json" --trace "$dir/trace" --report >"$dir/report.json" \
		2>>"$dir/paths.log"; then
		echo "FAIL $name: path_oracle --report failed (see $dir/paths.log)"
		return 1
	fi

	cg_run "$dir" "$INPUT" "$dir/callgrind.out" "$dir/prog" "${args[@]}"
	if [ ${#CG_FILES[@]} -eq 0 ]; then
		echo "FAIL $name: no callgrind output (see $dir/callgrind.log)"
		return 1
	fi
	if ! l=$(same_as_native "$dir" "callgrind:" "$CG_RC" "$dir/callgrind.out"); then
		echo "FAIL $name: $l"
		return 1
	fi
	for f in "${CG_FILES[@]}"; do cgargs+=(--callgrind "$f"); done
	rc=0
	"$COUNT" --profile "$dir/report.json" --binary "$dir/prog" "${cgargs[@]}" \
		>"$dir/count.oracle" 2>&1 || rc=$?
	if [ $rc -ne 0 ]; then
		l=$(tail -n 1 "$dir/count.oracle" | sed 's/^count_oracle [^:]*: //')
		echo "FAIL $name: count_oracle: $l"
		grep '^diff ' "$dir/count.oracle" | head -n 5 | sed 's/^/     /'
		return 1
	fi
	# "blocks 74, edges 106 (null 0/0), covers 100.0%"
	cnt=$(sed -n 's/^count_oracle .*: functions [0-9]*, blocks \([0-9]*\), edges \([0-9]*\) checked (null: functions [0-9]*, blocks \([0-9]*\), edges \([0-9]*\);.*covered \([0-9.]*%\)).*/blocks \1, edges \2 (null \3\/\4), covers \5/p' \
		"$dir/count.oracle")
	if ! grep -q 'executed instructions covered 100.0%' "$dir/count.oracle"; then
		echo "FAIL $name: executed instructions outside every block: $cnt"
		return 1
	fi
	if ! sums=$(check_paths "$dir/cfg.json" "$dir/paths.json"); then
		echo "FAIL $name: $sums"
		return 1
	fi
	echo "ok   $name: $sums; callgrind: $cnt"
}

start=$(date +%s)
jobs_begin
n=0
for prog in $PROGRAMS; do
	src=tests/programs/$prog.c
	builds=("gcc O0 $prog-O0" "gcc O2 $prog-O2" "clang O2 $prog-clang-O2")
	if [ -e "tests/programs/$prog.cpp" ]; then
		src=tests/programs/$prog.cpp
		builds=("g++ O0 $prog-O0" "g++ O2 $prog-O2" "clang++ O2 $prog-clang-O2")
	fi
	for build in "${builds[@]}"; do
		read -r cc opt name <<<"$build"
		case $name in *"$FILTER"*) ;; *) continue ;; esac
		n=$((n + 1))
		job_start $n run_one "$cc" "$opt" "$name" "$src"
	done
done
jobs_end $n
echo "path-oracle: $n builds, $jobs_pass ok, $jobs_fail failed in $(($(date +%s) - start))s"
[ $jobs_fail -eq 0 ] && [ $n -gt 0 ]
