# shellcheck shell=bash
# Helpers of the tests of the files edgeprof keeps across runs (decode-cache.sh,
# analysis-cache.sh). A bash library meant to be SOURCED (it sets no shell options).
#
#   same_profiles A B     the profiles A and B are equal but for the run's timings
#   spoil_cache FILE HOW  changes a kept file: damaged (a payload byte in its middle flipped),
#                         truncated (its last 8 bytes gone) or tool (a byte of the edgeprof
#                         build ID in its header flipped: byte 16 is one in either format)
#   cache_files DIR       how many files named by 32 hex digits DIR holds
#   cache_test_setup      the tests' start: EDGEPROF and ORACLE set (built, else exit 1),
#                         root, gcc, python3 and valgrind there (else exit 77), $tmp made
#                         (removed at the exit unless KEEP is set) holding example
#                         (tests/programs/example.c built with gcc -O2) and its input
# With those, and the test's cache directory $dir and its one file $cache:
#   prof N [ENV...] [-- RUN-OPTIONS...]  runs the example under `edgeprof -vv run` into
#                         $tmp/pN.data (log $tmp/logN); a failure is a failed check
#   warm_counts N         the counts of run N equal callgrind's (build/tests/count_oracle)
#   check_spoiled N WHAT KEPT USED  for each way of spoiling $cache (spoil_cache), run N, N+1,
#                         ...: its log says the file was not used and why, KEPT N (a
#                         command) says it was written anew and USED N does not say it was
#                         read; its profile is run 1's (same_profiles); WHAT names the file
#                         in the messages; sets n to the next run's number
#   check_eviction N MAX FILL  with FILL old files in $dir (the oldest numbered FILL), run N
#                         leaves MAX, its own ($cache) in, the oldest out

same_profiles() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for p in (a, b):
    for k in ("seconds", "analysis_s"):
        p["run"].pop(k, None)
sys.exit(0 if a == b else 1)
EOF
}

spoil_cache() {
	python3 - "$1" "$2" <<'EOF'
import sys
path, how = sys.argv[1:3]
b = bytearray(open(path, "rb").read())
if how == "damaged":
    b[len(b) // 2] ^= 0xff
elif how == "truncated":
    b = b[:-8]
elif how == "tool":
    b[16] ^= 0xff
open(path, "wb").write(b)
EOF
}

cache_files() { find "$1" -maxdepth 1 -type f 2>/dev/null | grep -cE '/[0-9a-f]{32}$'; }

prof() {
	local n=$1 envs=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		envs+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift
	if ! env "${envs[@]}" "$EDGEPROF" -vv run -o "$tmp/p$n.data" "$@" -- "$tmp/example" \
		"$tmp/input" >"$tmp/out$n" 2>"$tmp/log$n"; then
		skip_if_no_bpf "$tmp/log$n"
		bad "run $n failed: $(grep -v debug "$tmp/log$n" | head -c 300)"
		return 1
	fi
}

warm_counts() {
	local msg
	valgrind --tool=callgrind --dump-instr=yes --collect-jumps=yes --skip-plt=no \
		--callgrind-out-file="$tmp/cg.out" "$tmp/example" "$tmp/input" >/dev/null \
		2>"$tmp/vg.err" || { bad "callgrind failed: $(tail -n 2 "$tmp/vg.err")"; }
	"$EDGEPROF" report --json "$tmp/p$1.data" >"$tmp/p$1.json" || bad "report failed"
	if msg=$("$ORACLE" --profile "$tmp/p$1.json" --callgrind "$tmp/cg.out" \
		--binary "$tmp/example" 2>&1); then
		ok "the warm run's counts: $(tail -n 1 <<<"$msg" | sed 's/^count_oracle [^:]*: //')"
	else
		bad "the warm run's counts: $(tail -n 5 <<<"$msg")"
	fi
}

cache_test_setup() {
	EDGEPROF=${EDGEPROF:-build/edgeprof}
	ORACLE=build/tests/count_oracle
	[ -x "$EDGEPROF" ] && [ -x "$ORACLE" ] || { echo "FAIL: build first (make all $ORACLE)"; exit 1; }
	[ "$(id -u)" = 0 ] || { echo "SKIP: edgeprof run needs root"; exit 77; }
	for c in gcc python3 valgrind; do
		command -v "$c" >/dev/null || { echo "SKIP: $c not found"; exit 77; }
	done
	tmp=$(mktemp -d)
	trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
	gcc -O2 -g -o "$tmp/example" tests/programs/example.c || { echo "FAIL: cannot build example"; exit 1; }
	printf 'the cat and the dog and the bird\nthe end\n' >"$tmp/input"
}

# shellcheck disable=SC2154 # $cache and $dir are the sourcing test's
check_spoiled() {
	local what=$2 kept=$3 used=$4 how why
	n=$1
	for how in damaged truncated tool; do
		spoil_cache "$cache" $how
		case $how in
		damaged) why="damaged" ;;
		truncated) why="truncated" ;;
		tool) why="written by another edgeprof build" ;;
		esac
		prof $n || exit 1
		if grep -q "not used: $why" "$tmp/log$n" && $kept $n && ! $used $n; then
			ok "a $how $what is not used and is written anew"
		else
			bad "a $how $what: $(grep -i 'analysis\|decod\|not used' "$tmp/log$n")"
		fi
		same_profiles "$tmp/p1.data" "$tmp/p$n.data" &&
			ok "the profile with a $how $what is the same" ||
			bad "the profile with a $how $what differs"
		n=$((n + 1))
	done
}

# shellcheck disable=SC2154 # $cache and $dir are the sourcing test's
check_eviction() {
	local n=$1 max=$2 fill=$3 i f
	rm -f "$dir"/*
	for i in $(seq 1 "$fill"); do
		f=$dir/$(printf '%032x' "$i")
		echo old >"$f"
		touch -d "2020-01-01 00:00:$((i % 60))" "$f"
	done
	touch -d "2019-01-01" "$dir/$(printf '%032x' "$fill")"
	prof $n || exit 1
	if [ "$(cache_files "$dir")" = "$max" ] && [ -s "$cache" ] &&
		[ ! -e "$dir/$(printf '%032x' "$fill")" ]; then
		ok "saving one more with $fill there keeps $max files, the new one in, the oldest out"
	else
		bad "eviction: $(cache_files "$dir") files left, new one $( [ -s "$cache" ] && echo kept || echo missing)"
	fi
}
