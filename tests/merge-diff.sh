#!/usr/bin/env bash
# `edgeprof merge` and `edgeprof diff` on a program whose work is one call per argument
# (words.c below, gcc -O0 and -O2):
# - merge: the per-word function's every block and edge count in merge(run(W1 W2 W3),
#   run(W4 W5)) equals its count in run(W1 W2 W3 W4 W5), the concatenated workload (main and
#   the start-up ran twice, not once); and every count of every function equals that of
#   merge(run(W1), run(W2 W3 W4 W5)), the same words split otherwise (two start-ups, two
#   loop entries in both). The merged profile of two runs also equals the sum of
#   callgrind's counts of the same two runs (build/tests/count_oracle with both callgrind
#   outputs), has 0 violations and lists both inputs under run.merged; merge of three
#   profiles to -o - (stdout) equals another split of the same words into three runs.
# - diff: diff of a profile with itself says 0 functions differ and --exit-code gives 0;
#   diff of run(W1 W2) with run(W1 W2 W3) lists the per-word function and its blocks, every
#   block listed in --json has the two profiles' counts, and --exit-code gives 3.
# - bad input, one "edgeprof: " line and exit 1, nothing written: profiles of different
#   builds (merge and diff), a truncated profile, a profile counted with another placement
#   (--placement naive), a missing file; usage errors exit 2.
# Needs root (skips otherwise) and BPF (CI=true turns the skip into a failure).
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/support/bpf-checks.sh
source tests/support/bpf-checks.sh
# shellcheck source=tests/support/checks.sh
source tests/support/checks.sh
# shellcheck source=tests/support/callgrind-run.sh
source tests/support/callgrind-run.sh
EDGEPROF=${EDGEPROF:-build/edgeprof}
ORACLE=build/tests/count_oracle

[ -x "$EDGEPROF" ] || { echo "FAIL: $EDGEPROF not built (run make)"; exit 1; }
EDGEPROF=$(realpath "$EDGEPROF")
[ "$(id -u)" = 0 ] || { echo "SKIP: edgeprof run needs root"; exit 77; }
for c in gcc python3 valgrind; do
	command -v "$c" >/dev/null || { echo "SKIP: $c not found"; exit 77; }
done
make -s "$ORACLE" || { echo "FAIL: cannot build $ORACLE"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"

cat >"$tmp/words.c" <<'EOF'
#include <stdio.h>
#include <string.h>

/* Classifies each character of W; the branches taken depend on the word. */
static __attribute__((noinline)) unsigned word(const char *w)
{
	unsigned h = 0, vowels = 0, digits = 0;

	for (size_t i = 0; w[i]; i++) {
		if (strchr("aeiou", w[i]))
			vowels++;
		else if (w[i] >= '0' && w[i] <= '9')
			digits += w[i] - '0';
		else
			h = h * 31 + (unsigned char)w[i];
	}
	return h ^ vowels << 8 ^ digits << 16;
}

int main(int argc, char **argv)
{
	unsigned x = 0;

	for (int i = 1; i < argc; i++)
		x ^= word(argv[i]);
	printf("%u\n", x);
	return 0;
}
EOF

W12=(education 2026 rhythm)
W3=(aardvark 31337)
X1=(education)
X2=(2026 rhythm aardvark 31337)

run() { # run OUT PROG ARGS...: a profile of PROG ARGS at OUT
	local out=$1
	shift
	timeout -k 5 120 "$EDGEPROF" -q run -o "$out" -- "$@" >/dev/null 2>>"$tmp/err" </dev/null
}

# The function, block and edge counts of PROFILE as a canonical JSON text.
counts() {
	"$EDGEPROF" report --json "$1" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
out = {}
for f in d["functions"]:
    out[f["name"] + "@" + f["addr"]] = [f.get("count"),
        sorted((b["addr"], b["count"]) for b in f.get("blocks", [])),
        sorted((e["from"], str(e["to"]), e["kind"], e["count"]) for e in f.get("edges", []))]
print(json.dumps(out, sort_keys=True))'
}

for opt in O0 O2; do
	d=$tmp/$opt
	mkdir -p "$d"
	gcc "-$opt" -g -o "$d/words" "$tmp/words.c" || { bad "$opt: cannot build words"; continue; }
	if ! run "$d/a.data" "$d/words" "${W12[@]}" || ! run "$d/b.data" "$d/words" "${W3[@]}" ||
		! run "$d/all.data" "$d/words" "${W12[@]}" "${W3[@]}" ||
		! run "$d/x1.data" "$d/words" "${X1[@]}" || ! run "$d/x2.data" "$d/words" "${X2[@]}"; then
		skip_if_no_bpf "$tmp/err"
		bad "$opt: a run failed: $(tail -n 2 "$tmp/err")"
		continue
	fi
	if ! "$EDGEPROF" merge "$d/a.data" "$d/b.data" -o "$d/ab.data" 2>"$d/merge.err" ||
		! "$EDGEPROF" merge "$d/x1.data" "$d/x2.data" -o "$d/x12.data" 2>>"$d/merge.err"; then
		bad "$opt: merge failed: $(cat "$d/merge.err")"
		continue
	fi
	ab=$(counts "$d/ab.data")
	x12=$(counts "$d/x12.data")
	all=$(counts "$d/all.data")
	if [ -n "$ab" ] && [ "$ab" = "$x12" ]; then
		ok "$opt: merge(run(${W12[*]}), run(${W3[*]})) = merge(run(${X1[*]}), run(${X2[*]})): $(echo "$ab" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d), "functions,", sum(len(v[1]) for v in d.values()), "blocks,", sum(len(v[2]) for v in d.values()), "edges")')"
	else
		bad "$opt: merged counts differ between two splits of the same words"
	fi
	if python3 - "$ab" "$all" <<'PY'; then
import json, sys
ab, al = json.loads(sys.argv[1]), json.loads(sys.argv[2])
w = [k for k in ab if k.startswith("word@")]
assert len(w) == 1, w
assert ab[w[0]] == al[w[0]], (ab[w[0]], al[w[0]])
print(w[0], len(ab[w[0]][1]), "blocks")
PY
		ok "$opt: word's counts in merge(run(${W12[*]}), run(${W3[*]})) = in run(${W12[*]} ${W3[*]})"
	else
		bad "$opt: word's merged counts differ from the concatenated run's"
	fi
	# Independent: callgrind's counts of the same two runs, added up.
	cg_run "$d" /dev/null "$d/cg1.out" "$d/words" "${W12[@]}"
	cg1=("${CG_FILES[@]}")
	mkdir -p "$d/cg2"
	cg_run "$d/cg2" /dev/null "$d/cg2.out" "$d/words" "${W3[@]}"
	cgargs=()
	for f in "${cg1[@]}" "${CG_FILES[@]}"; do cgargs+=(--callgrind "$f"); done
	"$EDGEPROF" report --json "$d/ab.data" >"$d/ab.json" 2>/dev/null
	if "$ORACLE" --profile "$d/ab.json" --binary "$d/words" "${cgargs[@]}" >"$d/oracle" 2>&1; then
		ok "$opt: merged profile = callgrind of both runs added: $(tail -n 1 "$d/oracle" | sed 's/^count_oracle [^:]*: //')"
	else
		bad "$opt: merged counts differ from callgrind's sum: $(tail -n 1 "$d/oracle")"
	fi
	if python3 - "$d/ab.data" <<'PY'; then
import json, sys
d = json.load(open(sys.argv[1]))
m = d["run"].get("merged")
assert m and len(m) == 2, m
assert d["violations"] == 0, d["violations"]
PY
		ok "$opt: merged run lists both inputs, 0 violations"
	else
		bad "$opt: merged profile's run or violations"
	fi
	"$EDGEPROF" merge "$d/a.data" "$d/b.data" "$d/x1.data" -o - >"$d/abn.data" 2>"$d/err3"
	"$EDGEPROF" merge "$d/x1.data" "$d/x2.data" "$d/x1.data" -o "$d/x121.data" 2>>"$d/err3"
	if [ -s "$d/abn.data" ] && [ "$(counts "$d/abn.data")" = "$(counts "$d/x121.data")" ]; then
		ok "$opt: merge of three (-o -): merge(run(${W12[*]}), run(${W3[*]}), run(${X1[*]})) = merge(run(${X1[*]}), run(${X2[*]}), run(${X1[*]}))"
	else
		bad "$opt: merge of three: $(cat "$d/err3")"
	fi

	# diff
	"$EDGEPROF" diff --exit-code "$d/a.data" "$d/a.data" >"$d/same.txt" 2>&1
	rc=$?
	if [ "$rc" = 0 ] && grep -q ': 0 of [0-9]* functions differ, 0 blocks$' "$d/same.txt"; then
		ok "$opt: diff of a profile with itself: $(head -n 1 "$d/same.txt" | sed 's/.*: //')"
	else
		bad "$opt: diff with itself (exit $rc): $(head -n 3 "$d/same.txt")"
	fi
	"$EDGEPROF" diff --exit-code "$d/a.data" "$d/all.data" >"$d/diff.txt" 2>&1
	rc=$?
	"$EDGEPROF" diff --json "$d/a.data" "$d/all.data" >"$d/diff.json" 2>/dev/null
	if [ "$rc" = 3 ] && grep -q '^word ' "$d/diff.txt" &&
		python3 - "$d/diff.json" "$d/a.data" "$d/all.data" "$EDGEPROF" <<'PY'; then
import json, subprocess, sys
d = json.load(open(sys.argv[1]))
rep = lambda p: json.loads(subprocess.run([sys.argv[4], "report", "--json", p],
                                          capture_output=True, text=True).stdout)
a, b = rep(sys.argv[2]), rep(sys.argv[3])
blocks = lambda r: {(f["name"], x["addr"]): x["count"] for f in r["functions"]
                    for x in f.get("blocks", [])}
ba, bb = blocks(a), blocks(b)
listed = {(f["name"], x["addr"]): (x["a"], x["b"]) for f in d["functions"] for x in f["blocks"]}
changed = {k for k in ba if ba[k] != bb.get(k)}
assert set(listed) == changed, (set(listed) ^ changed)
assert all(listed[k] == (ba[k], bb[k]) for k in listed)
assert any(f["name"] == "word" for f in d["functions"])
print(len(listed), "blocks changed")
PY
		ok "$opt: diff run(${W12[*]}) run(+${W3[*]}): exit 3, word listed, --json lists exactly the changed blocks"
	else
		bad "$opt: diff (exit $rc): $(head -n 5 "$d/diff.txt")"
	fi
done

# Bad input: one line, exit 1, nothing written.
d=$tmp/O2
gcc -O1 -g -o "$tmp/words1" "$tmp/words.c"
run "$tmp/other.data" "$tmp/words1" x
"$EDGEPROF" -q run --placement naive -o "$tmp/naive.data" -- "$d/words" x >/dev/null 2>&1
head -c 300 "$d/a.data" >"$tmp/trunc.data"
bad_case() { # bad_case WHAT EXPECTED_RC COMMAND...
	local what=$1 want=$2 rc
	shift 2
	rm -f "$tmp/out.data"
	"$@" >"$tmp/bad.out" 2>"$tmp/bad.err"
	rc=$?
	if [ "$rc" = "$want" ] && [ "$(wc -l <"$tmp/bad.err")" = 1 ] && grep -q '^edgeprof: ' "$tmp/bad.err" &&
		[ ! -e "$tmp/out.data" ]; then
		ok "$what: exit $rc, $(cat "$tmp/bad.err")"
	else
		bad "$what: exit $rc (want $want), stderr: $(head -n 3 "$tmp/bad.err"), out: $(ls "$tmp/out.data" 2>/dev/null)"
	fi
}
bad_case "merge of different builds" 1 "$EDGEPROF" merge "$d/a.data" "$tmp/other.data" -o "$tmp/out.data"
bad_case "merge of a truncated profile" 1 "$EDGEPROF" merge "$d/a.data" "$tmp/trunc.data" -o "$tmp/out.data"
bad_case "merge of another placement" 1 "$EDGEPROF" merge "$d/a.data" "$tmp/naive.data" -o "$tmp/out.data"
bad_case "merge of a missing file" 1 "$EDGEPROF" merge "$d/a.data" "$tmp/missing.data" -o "$tmp/out.data"
bad_case "merge without -o" 2 "$EDGEPROF" merge "$d/a.data" "$d/b.data"
bad_case "merge of one profile" 2 "$EDGEPROF" merge "$d/a.data" -o "$tmp/out.data"
bad_case "diff of different builds" 1 "$EDGEPROF" diff "$d/a.data" "$tmp/other.data"
bad_case "diff of a truncated profile" 1 "$EDGEPROF" diff "$d/a.data" "$tmp/trunc.data"
bad_case "diff of one profile" 2 "$EDGEPROF" diff "$d/a.data"

checks_summary merge-diff
