#!/usr/bin/env bash
# Bad profiles must fail cleanly in `edgeprof report`: for each broken file, edgeprof must exit
# non-zero without a signal (status 1..127), print nothing on stdout and exactly one line on
# stderr that starts with "edgeprof: ", names the file and the problem. Files: truncated
# profiles, random bytes, empty, valid JSON of the wrong shape, wrong version, huge numbers,
# negative counts, dangling edges, a missing file and a directory; a valid profile (a
# committed fuzz seed) must still be reported. Exit 0 pass, 77 skip, anything else fail.
set -u
cd "$(dirname "$0")/.." || exit 1
EDGEPROF=${EDGEPROF:-build/edgeprof}
GOOD=tests/fuzz/corpus/profile/loop-chords.json

fails=0
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
[ -x "$EDGEPROF" ] || { echo "FAIL: $EDGEPROF not built (run make)"; exit 1; }
[ -f "$GOOD" ] || { echo "FAIL: $GOOD missing"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# expect_fail NAME REGEX FILE: `edgeprof report FILE` must fail as described above, with a
# stderr line naming FILE and matching the extended regex REGEX (case-insensitive).
expect_fail() {
	local name=$1 re=$2 file=$3 rc nlines why=""
	"$EDGEPROF" report "$file" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	nlines=$(wc -l <"$tmp/err")
	if [ "$rc" = 0 ]; then
		why="exit status 0"
	elif [ "$rc" -ge 128 ]; then
		why="killed by a signal (exit $rc)"
	elif [ -s "$tmp/out" ]; then
		why="wrote to stdout: $(head -c 200 "$tmp/out")"
	elif [ "$nlines" != 1 ]; then
		why="$nlines lines on stderr: $(head -c 300 "$tmp/err")"
	elif ! grep -q "^edgeprof: '$file'" "$tmp/err"; then
		why="stderr line does not start with \"edgeprof: '$file'\": $(cat "$tmp/err")"
	elif ! grep -qiE "$re" "$tmp/err"; then
		why="stderr does not match /$re/: $(cat "$tmp/err")"
	fi
	if [ -n "$why" ]; then
		echo "FAIL: $name: $why"
		fails=$((fails + 1))
	else
		echo "ok: $name: $(cat "$tmp/err")"
	fi
}

# mutate NAME PYTHON: writes $tmp/NAME from the good profile loaded as `d`, after PYTHON.
mutate() {
	python3 - "$GOOD" "$tmp/$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[3])
open(sys.argv[2], 'w').write(json.dumps(d) if not isinstance(d, str) else d)
PY
}

# The good profile itself is reported.
if ! "$EDGEPROF" report "$GOOD" >"$tmp/out" 2>"$tmp/err" || ! grep -q '^probes:' "$tmp/out"; then
	echo "FAIL: valid profile not reported: $(head -c 300 "$tmp/err")"
	fails=$((fails + 1))
else
	echo "ok: valid profile reported"
fi

size=$(stat -c %s "$GOOD")
for n in 1 20 $((size / 3)) $((size / 2)) $((size - 3)); do
	head -c "$n" "$GOOD" >"$tmp/trunc$n"
	expect_fail "truncated-$n" 'truncated or corrupt JSON at line [0-9]+|not an edgeprof' "$tmp/trunc$n"
done

: >"$tmp/empty"
expect_fail empty 'empty file' "$tmp/empty"
head -c 4096 /dev/urandom >"$tmp/random"
expect_fail random-bytes 'not an edgeprof profile|corrupt JSON' "$tmp/random"
printf '{\x01\xff\xfe garbage' >"$tmp/brace-garbage"
expect_fail brace-garbage 'corrupt JSON at line 1' "$tmp/brace-garbage"
cp /bin/true "$tmp/elf"
expect_fail elf-file 'not an edgeprof profile' "$tmp/elf"

mutate array 'd = [1, 2, 3]'
expect_fail json-array 'not an edgeprof profile' "$tmp/array"
mutate other-format 'd["format"] = "perf-data"'
expect_fail other-format 'not an edgeprof profile' "$tmp/other-format"
mutate version7 'd["version"] = 7'
expect_fail version-7 'profile version 7 is not supported' "$tmp/version7"
mutate version-str 'd["version"] = "1"'
expect_fail version-string 'no version' "$tmp/version-str"
mutate no-functions 'del d["functions"]'
expect_fail no-functions '"functions" is missing' "$tmp/no-functions"
mutate functions-object 'd["functions"] = {}'
expect_fail functions-object '"functions" is not an array' "$tmp/functions-object"
mutate bad-build-id 'd["binary"]["build_id"] = "not-hex!"'
expect_fail bad-build-id 'build-id is not a hex' "$tmp/bad-build-id"
mutate bad-addr 'd["functions"][0]["blocks"][0]["addr"] = "0xZZ"'
expect_fail bad-address 'not an address' "$tmp/bad-addr"
mutate neg-count 'd["functions"][0]["blocks"][1]["count"] = -4'
expect_fail negative-count '"count" is negative' "$tmp/neg-count"
mutate neg-counter 'd["counters"][0] = -1'
expect_fail negative-counter 'counter 0 is not a non-negative integer' "$tmp/neg-counter"
mutate float-count 'd["functions"][0]["edges"][0]["count"] = 2.5'
expect_fail float-count 'is not a count' "$tmp/float-count"
mutate huge 'd = json.dumps(d).replace("\"counters\": [", "\"counters\": [123456789012345678901234567890, ", 1)'
expect_fail huge-number 'corrupt JSON' "$tmp/huge"
mutate big-counter 'd["counters"][0] = 2**63 - 1'
expect_fail big-counter 'add up to more than|hits' "$tmp/big-counter"
mutate dangling 'd["functions"][0]["edges"][0]["to"] = "0x1234"'
expect_fail dangling-edge "function 'main': edge to 0x1234 which is not a block" "$tmp/dangling"
mutate bad-kind 'd["functions"][0]["edges"][0]["kind"] = "wormhole"'
expect_fail bad-kind 'unknown kind' "$tmp/bad-kind"
mutate hits 'd["probes"]["hits"] += 1'
expect_fail wrong-hits 'probes: [0-9]+ hits, but' "$tmp/hits"
mutate deep 'd = "{\"format\":\"edgeprof-profile\",\"version\":1,\"binary\":" + "[" * 100000 + "]" * 100000 + "}"'
expect_fail deep-nesting 'corrupt JSON|not an object' "$tmp/deep"

# Loop trip-count moments (`run --loop-stats`): header not a block, inconsistent moments, bad
# types, a malformed summary.
loop='h = d["functions"][0]["blocks"][0]["addr"]; '
mutate loop-header "$loop"'d["functions"][0]["loops"] = [{"header": "0x1234", "entries": 1, "sum": 2, "sumsq": 4}]'
expect_fail loop-header 'loop header 0x1234 is not a block' "$tmp/loop-header"
mutate loop-moments "$loop"'d["functions"][0]["loops"] = [{"header": h, "entries": 5, "sum": 2, "sumsq": 4}]'
expect_fail loop-moments 'inconsistent moments' "$tmp/loop-moments"
mutate loop-sumsq "$loop"'d["functions"][0]["loops"] = [{"header": h, "entries": 1, "sum": 3, "sumsq": 2}]'
expect_fail loop-sumsq 'inconsistent moments' "$tmp/loop-sumsq"
mutate loop-type "$loop"'d["functions"][0]["loops"] = [{"header": h, "entries": "1", "sum": 3, "sumsq": 9}]'
expect_fail loop-type '"entries" is not an integer' "$tmp/loop-type"
mutate loop-twice "$loop"'d["functions"][0]["loops"] = [{"header": h, "entries": 1, "sum": 3, "sumsq": 9}] * 2'
expect_fail loop-twice 'listed twice' "$tmp/loop-twice"
mutate loops-object 'd["functions"][0]["loops"] = {}'
expect_fail loops-object '"loops" is not an array' "$tmp/loops-object"
mutate loop-stats 'd["loop_stats"] = {"loops": 1, "measured": 2, "sites": 0, "hits": 0, "est_trap_ns": 0}'
expect_fail loop-stats 'loop_stats: "measured" is out of range' "$tmp/loop-stats"

expect_fail missing-file 'No such file' "$tmp/does-not-exist"
mkdir "$tmp/dir"
expect_fail directory 'is a directory' "$tmp/dir"

if [ $fails -gt 0 ]; then
	echo "$fails failed"
	exit 1
fi
echo "all bad profiles rejected cleanly"
