#!/usr/bin/env bash
# End-to-end test of the static profile commands (issue 5): `edgeprof static` on a test
# program (text, one function, JSON: every block's out-edge probabilities sum to 1, the
# heuristics named are known ones), `edgeprof run` then `edgeprof compare --json` (six
# analyses x five percentages with scores in [0, 1], heuristic counts consistent, the
# profile's own sites priced on its true counts equal to a fresh default plan's price, since
# the profile was recorded with the default weights), `edgeprof calibrate-heuristics` (writes
# a rates file that `compare --rates` then uses), `edgeprof run --weights static` (a different
# placement, the same exact counts), and bad input: each must fail with one line on stderr
# starting with "edgeprof: " and the right status (missing binary or profile, unknown
# function, invalid rates file, a profile of another build, no arguments).
# The static part needs nothing special; the rest needs root and BPF (skips otherwise; CI=true
# turns a skip into a failure). Exit 0 pass, 77 skip, else fail.
set -u
cd "$(dirname "$0")/.." || exit 1
EDGEPROF=${EDGEPROF:-build/edgeprof}
[ -x "$EDGEPROF" ] || { echo "FAIL: $EDGEPROF not built (run make)"; exit 1; }
EDGEPROF=$(realpath "$EDGEPROF")
for c in gcc python3; do
	command -v "$c" >/dev/null || { echo "SKIP: $c not found"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CONFIG_HOME=$tmp/config # never the user's stored rates
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# bad NAME STATUS CMD...: CMD must exit STATUS with nothing on stdout and one stderr line.
bad() {
	local name=$1 want=$2 rc=0
	shift 2
	"$@" >"$tmp/bad.out" 2>"$tmp/bad.err" || rc=$?
	if [ "$rc" != "$want" ]; then
		fail "$name: exit status $rc, expected $want"
	elif [ -s "$tmp/bad.out" ]; then
		fail "$name: wrote to stdout"
	elif [ "$(wc -l <"$tmp/bad.err")" != 1 ] || ! grep -q '^edgeprof: ' "$tmp/bad.err"; then
		fail "$name: stderr is not one 'edgeprof: ' line: $(head -c 300 "$tmp/bad.err")"
	fi
}

gcc -O2 -g -fPIE -pie -o "$tmp/loops" tests/programs/loops.c || { fail "cannot build loops.c"; exit 1; }
gcc -O2 -g -fPIE -pie -o "$tmp/other" tests/programs/switch.c || { fail "cannot build switch.c"; exit 1; }

# --- static ------------------------------------------------------------------------------
if ! "$EDGEPROF" static "$tmp/loops" >"$tmp/static.txt" 2>"$tmp/static.err"; then
	fail "static: exit status $? ($(head -n 1 "$tmp/static.err"))"
elif ! grep -q '^hottest predicted functions' "$tmp/static.txt" ||
	! grep -q ' main$' "$tmp/static.txt"; then
	fail "static: no hottest functions list with main"
fi
"$EDGEPROF" static "$tmp/loops" main >"$tmp/main.txt" 2>/dev/null || fail "static main: failed"
grep -q '^branches' "$tmp/main.txt" || fail "static main: no branch list"
if ! "$EDGEPROF" static --json "$tmp/loops" >"$tmp/static.json" 2>"$tmp/static.err"; then
	fail "static --json: failed ($(head -n 1 "$tmp/static.err"))"
else
	python3 - "$tmp/static.json" <<'PY' || fail "static --json: bad content (above)"
import json, sys, collections
d = json.load(open(sys.argv[1]))
H = {"LBH", "LEH", "LHH", "PH", "OH", "GH", "CH", "SH", "RH"}
assert set(d["rates"]) == H, d["rates"]
fs = {f["name"]: f for f in d["functions"]}
assert "main" in fs, "no main"
assert abs(fs["main"]["invocations"] - 1.0) < 1e-9 or fs["main"]["invocations"] > 1, fs["main"]["invocations"]
nbr = 0
for f in d["functions"]:
    out = collections.defaultdict(float)
    for e in f["edges"]:
        assert 0 <= e["prob"] <= 1, e
        assert e["local"] >= 0 and e["global"] >= 0, e
        out[e["from"]] += e["prob"]
    for b, s in out.items():
        assert abs(s - 1) < 1e-6, (f["name"], b, s)
    for br in f["branches"]:
        nbr += 1
        assert set(br["heuristics"]) <= H, br
        assert 0 < br["prob_taken"] < 1, br
        for h, to in br["heuristics"].items():
            assert to in (br["taken"], br["not_taken"]), br
assert nbr > 0, "no two-way branch found"
# A loop body is predicted hotter than main's entry.
assert max(b["local"] for f in d["functions"] for b in f["blocks"]) > 2
PY
fi
bad "static missing binary" 1 "$EDGEPROF" static "$tmp/nope"
bad "static unknown function" 1 "$EDGEPROF" static "$tmp/loops" no_such_function
bad "static no binary" 2 "$EDGEPROF" static
bad "static bad option" 2 "$EDGEPROF" static --bogus "$tmp/loops"
echo '{"format":"edgeprof-heuristics","version":1,"rates":{"OH":7}}' >"$tmp/badrates.json"
bad "static invalid rates" 1 "$EDGEPROF" static --rates "$tmp/badrates.json" "$tmp/loops"
echo 'not json' >"$tmp/garbage.json"
bad "static garbage rates" 1 "$EDGEPROF" static --rates "$tmp/garbage.json" "$tmp/loops"
bad "static missing rates" 1 "$EDGEPROF" static --rates "$tmp/none.json" "$tmp/loops"
bad "compare missing profile" 1 "$EDGEPROF" compare "$tmp/none.data"
bad "calibrate-heuristics no profile" 2 "$EDGEPROF" calibrate-heuristics

# --- with a profile ----------------------------------------------------------------------
if [ "$(id -u)" != 0 ]; then
	[ "$fails" = 0 ] || exit 1
	echo "SKIP: the rest needs root (edgeprof run)"
	[ "${CI:-}" = true ] && exit 1
	exit 77
fi
# Uprobes only: compare's placement table plans again with uprobe site classes (it does not
# redo the in-process counters' window analysis), and checks that the recorded plan is its own.
"$EDGEPROF" -q run --probes uprobe -o "$tmp/p.data" -- "$tmp/loops" >/dev/null 2>"$tmp/run.err"
if [ ! -s "$tmp/p.data" ]; then
	if grep -qi 'bpf' "$tmp/run.err"; then
		echo "SKIP: edgeprof run: $(head -n 1 "$tmp/run.err")"
		[ "${CI:-}" = true ] && exit 1
		exit 77
	fi
	fail "run: no profile ($(head -n 1 "$tmp/run.err"))"
	exit 1
fi
if ! "$EDGEPROF" compare --json "$tmp/p.data" >"$tmp/cmp.json" 2>"$tmp/cmp.err"; then
	fail "compare --json: failed ($(head -n 1 "$tmp/cmp.err"))"
else
	python3 - "$tmp/cmp.json" <<'PY' || fail "compare --json: bad content (above)"
import json, sys
d = json.load(open(sys.argv[1]))
K = ["LBK", "LBR", "FI", "FC", "GBK", "GBR"]
assert sorted(d["scores"]) == sorted(K), d["scores"].keys()
for k in K:
    assert sorted(d["scores"][k], key=int) == ["10", "20", "30", "40", "50"], d["scores"][k]
    for p, s in d["scores"][k].items():
        for x in ("u", "w"):
            v = s[x]
            assert v is None or 0 <= v <= 1 + 1e-12, (k, p, x, v)
        if d["items"][k]:
            assert s["u"] is not None and s["k"] <= s["m"], (k, p, s)
for k in ("LBK", "LBR", "GBK", "GBR", "FI"):
    assert d["items"][k] > 0, (k, d["items"])
for k in ("LBK", "LBR"):
    lf = d["local_per_function"][k]
    assert lf["functions"] > 0, lf
    for p in ("10", "20", "30", "40", "50"):
        assert 0 <= lf[p]["u"] <= 1 + 1e-12 and 0 <= lf[p]["w"] <= 1 + 1e-12, (k, p, lf[p])
# The paper's figures are beside them.
assert abs(d["paper"]["LBK"]["20"]["w"] - 0.82) < 1e-9
assert abs(d["paper"]["GBR"]["20"]["w"] - 0.78) < 1e-9
for h, x in d["heuristics"].items():
    assert x["ran"] <= x["branches"], (h, x)
    assert x["hit_rate"] is None or 0 <= x["hit_rate"] <= 1, (h, x)
assert sum(x["branches"] for x in d["heuristics"].values()) > 0
# OH's rules partition OH's branches.
oh = d["heuristics"]["OH"]
assert sorted(d["oh_rules"]) == ["eq_imm", "eq_zero", "sign"], d["oh_rules"]
for f in ("branches", "ran"):
    assert sum(x[f] for x in d["oh_rules"].values()) == oh[f], (f, oh, d["oh_rules"])
pl = d["placement"]
for k in ("recorded", "profile_sites", "default", "static", "exact"):
    assert pl[k]["trap_ns"] >= 0 and pl[k]["sites"] > 0, (k, pl[k])
# Recorded with the default weights and the same costs: the same plan, the same price.
a, b = pl["profile_sites"]["trap_ns"], pl["default"]["trap_ns"]
assert abs(a - b) <= 1e-9 * max(a, 1), (a, b)
assert pl["profile_sites"]["sites"] == pl["default"]["sites"], pl
PY
fi
# Counted in process (the default): the plans compare makes are priced with the same
# mechanisms as the profile's own sites. Priced as if every site trapped, Exact-Max cost 1000x
# the profile's sites; priced alike it is within 2x (not below: the spanning tree is optimal
# for costs that add up per edge, and a branch site pays for every execution of its block,
# both outcomes; on loops Exact-Max pays 1.18x the default weights' plan).
"$EDGEPROF" -q run -o "$tmp/ip.data" -- "$tmp/loops" >/dev/null 2>"$tmp/run-ip.err" ||
	fail "run (in process): $(head -n 1 "$tmp/run-ip.err")"
if ! "$EDGEPROF" compare --json "$tmp/ip.data" >"$tmp/cmp-ip.json" 2>"$tmp/cmp-ip.err"; then
	fail "compare --json (in process): failed ($(head -n 1 "$tmp/cmp-ip.err"))"
else
	python3 - "$tmp/cmp-ip.json" <<'PY_IP' || fail "compare --json (in process): Exact-Max priced apart (above)"
import json, sys
pl = json.load(open(sys.argv[1]))["placement"]
own, best = pl["profile_sites"]["trap_ns"], pl["exact"]["trap_ns"]
assert 0 < best <= 2 * own, (best, own, pl)
PY_IP
fi
"$EDGEPROF" compare "$tmp/p.data" "$tmp/loops" >"$tmp/cmp.txt" 2>/dev/null ||
	fail "compare with BINARY: failed"
grep -q '^LBK' "$tmp/cmp.txt" || fail "compare text: no LBK row"
bad "compare wrong build" 1 "$EDGEPROF" compare "$tmp/p.data" "$tmp/other"
bad "compare bad --branch-probs" 2 "$EDGEPROF" compare --branch-probs bogus "$tmp/p.data"

# With the profile's own branch probabilities, Algorithms 2 and 3 must give back the measured
# frequencies: loops.c has no calls through pointers and no recursion, so every score is 1
# (u and w, every percentage). The other sources must at least score.
for src in profile direction loops heuristics; do
	if ! "$EDGEPROF" compare --json --no-placement --branch-probs "$src" "$tmp/p.data" \
		>"$tmp/bp-$src.json" 2>"$tmp/bp.err"; then
		fail "compare --branch-probs $src: failed ($(head -n 1 "$tmp/bp.err"))"
	fi
done
# The placement table does not depend on the source: its static weights are the estimate's.
"$EDGEPROF" compare --json --branch-probs profile "$tmp/p.data" >"$tmp/bp-placement.json" \
	2>"$tmp/bp.err" || fail "compare --branch-probs profile (placement): failed"
python3 - "$tmp" <<'PY' || fail "compare --branch-probs: scores (above)"
import json, sys
t = sys.argv[1]
d = {s: json.load(open(f"{t}/bp-{s}.json")) for s in ("profile", "direction", "loops", "heuristics")}
for k, v in d["profile"]["scores"].items():
    for p, s in v.items():
        assert abs(s["u"] - 1) < 1e-12 and abs(s["w"] - 1) < 1e-12, ("profile", k, p, s)
for src in ("direction", "loops"):
    for k, v in d[src]["scores"].items():
        for p, s in v.items():
            assert 0 <= s["u"] <= 1 and 0 <= s["w"] <= 1 + 1e-12, (src, k, p, s)
# heuristics is the default; each output names its source.
with open(f"{t}/cmp.json") as f:
    c = json.load(f)
assert c["scores"] == d["heuristics"]["scores"] and c["branch_probs"] == "heuristics"
for src, x in d.items():
    assert x["branch_probs"] == src, (src, x["branch_probs"])
with open(f"{t}/bp-placement.json") as f:
    assert json.load(f)["placement"] == c["placement"], "placement depends on --branch-probs"
PY

# calibrate-heuristics writes a rates file that compare uses.
if ! "$EDGEPROF" calibrate-heuristics --rates "$tmp/rates.json" --min 1 "$tmp/p.data" \
	>"$tmp/cal.txt" 2>"$tmp/cal.err"; then
	fail "calibrate-heuristics: failed ($(head -n 1 "$tmp/cal.err"))"
elif ! python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "edgeprof-heuristics" and len(d["rates"]) == 9
assert all(0 < r < 1 for r in d["rates"].values())' "$tmp/rates.json"; then
	fail "calibrate-heuristics: bad rates file"
else
	"$EDGEPROF" compare --json --no-placement --rates "$tmp/rates.json" "$tmp/p.data" \
		>"$tmp/cmp2.json" 2>/dev/null || fail "compare --rates: failed"
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2]))
assert d["rates_file"] == sys.argv[2], d["rates_file"]
for h, x in d["heuristics"].items():
    assert abs(x["rate_used"] - r["rates"][h]) < 1e-6, h' "$tmp/cmp2.json" "$tmp/rates.json" ||
		fail "compare --rates: rates not used"
fi
# The default file: calibrate-heuristics without --rates stores it under XDG_CONFIG_HOME.
"$EDGEPROF" calibrate-heuristics "$tmp/p.data" >/dev/null 2>&1 ||
	fail "calibrate-heuristics (default file): failed"
[ -s "$XDG_CONFIG_HOME/edgeprof/heuristics.json" ] ||
	fail "calibrate-heuristics: no $XDG_CONFIG_HOME/edgeprof/heuristics.json"

# run --weights static: another placement, the same exact counts.
"$EDGEPROF" -q run --weights static -o "$tmp/s.data" -- "$tmp/loops" >/dev/null 2>"$tmp/runs.err" ||
	true
if [ ! -s "$tmp/s.data" ]; then
	fail "run --weights static: no profile ($(head -n 1 "$tmp/runs.err"))"
else
	"$EDGEPROF" report --json "$tmp/p.data" >"$tmp/p.json" 2>/dev/null
	"$EDGEPROF" report --json "$tmp/s.data" >"$tmp/s.json" 2>/dev/null
	python3 -c '
import json, sys
def counts(p):
    d = json.load(open(p))
    return {(f["name"], b["addr"]): b["count"] for f in d["functions"] for b in f["blocks"]}
a, b = counts(sys.argv[1]), counts(sys.argv[2])
assert a == b, [k for k in a if a[k] != b.get(k)][:5]
assert any(v for v in a.values())' "$tmp/p.json" "$tmp/s.json" ||
		fail "run --weights static: block counts differ from the default run"
fi

if [ "$fails" != 0 ]; then
	echo "static-compare: $fails failure(s)"
	exit 1
fi
echo "static-compare: ok"
