# shellcheck shell=bash
# Helpers of the tests of the files edgeprof keeps across runs (decode-cache.sh,
# analysis-cache.sh). A bash library meant to be SOURCED (it sets no shell options).
#
#   same_profiles A B     the profiles A and B are equal but for the run's timings
#   spoil_cache FILE HOW  changes a kept file: damaged (a payload byte in its middle flipped),
#                         truncated (its last 8 bytes gone) or tool (a byte of the edgeprof
#                         build ID in its header flipped: byte 16 is one in either format)
#   cache_files DIR       how many files named by 32 hex digits DIR holds
# With the test's $tmp holding example (tests/programs/example.c built) and its input, and
# EDGEPROF and ORACLE set:
#   prof N [ENV...] [-- RUN-OPTIONS...]  runs the example under `edgeprof -vv run` into
#                         $tmp/pN.data (log $tmp/logN); a failure is a failed check
#   warm_counts N         the counts of run N equal callgrind's (build/tests/count_oracle)

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
