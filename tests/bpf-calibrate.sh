#!/usr/bin/env bash
# End-to-end test of `edgeprof calibrate`: runs it with 50000 iterations and 3 repetitions
# (--json) in a temporary XDG_CACHE_HOME and checks that every probe class counted exactly
# 50000 hits with a positive cost, that site-costs.json was written with the same costs, and
# that calibration__load reads it back (measured costs), falls back to the defaults silently
# when it is absent, and with a warning when it is invalid or from another kernel. Then the
# automatic calibration: `edgeprof run` with an empty XDG_CACHE_HOME measures the costs once
# (quickly: at most 5000 iterations and 2 rounds, about 1 s), stores site-costs.json (a second
# run reuses it), and `report` says "measured on DATE" (--json: "source":"measured"); with
# EDGEPROF_NO_CALIBRATE=1 nothing is stored and the report says "defaults".
# Needs root (or CAP_BPF + CAP_PERFMON): exit 77 (skip) when BPF is unavailable; tests/run.sh
# makes that a failure with CI=true.
set -u
cd "$(dirname "$0")/.." || exit 1
EDGEPROF=${EDGEPROF:-build/edgeprof}
N=50000

fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

command -v gcc >/dev/null || { echo "SKIP: gcc not found"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
[ -x "$EDGEPROF" ] || { echo "FAIL: $EDGEPROF not built (run make)"; exit 1; }
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: BPF unavailable: needs root (uprobes and BPF programs)"
	exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cache=$tmp/cache
file=$cache/edgeprof/site-costs.json

XDG_CACHE_HOME=$cache "$EDGEPROF" calibrate --iterations $N --repeat 3 --json \
	>"$tmp/out.json" 2>"$tmp/err"
rc=$?
cat "$tmp/err"
if [ $rc -ne 0 ]; then
	if grep -q "cannot load the BPF program\|kernel BTF" "$tmp/err"; then
		echo "SKIP: BPF unavailable (see the message above)"
		exit 77
	fi
	echo "FAIL: edgeprof calibrate exited with $rc"
	exit 1
fi
cat "$tmp/out.json"

python3 - "$tmp/out.json" "$file" $N <<'PY' || fail "calibration output or file"
import json, sys
out = json.load(open(sys.argv[1]))
saved = json.load(open(sys.argv[2]))
n = int(sys.argv[3])
bad = []
names = [c["class"] for c in out["classes"]]
if names != ["nop5", "jcc", "push", "mov", "patch", "patch-flags"]:
    bad.append("classes %s" % names)
# The in-process counters run 100 N iterations (at least 2000000): a hit costs a few ns.
pn = max(100 * n, 2000000)
if out["patch_iterations"] != pn:
    bad.append("patch_iterations %s, expected %d" % (out["patch_iterations"], pn))
for c in out["classes"]:
    want = pn if c["class"].startswith("patch") else n
    if c["hits"] != want:
        bad.append("%s: %s hits, expected %d" % (c["class"], c["hits"], want))
    if not c["ns_per_hit"] > 0:
        bad.append("%s: cost %s not positive" % (c["class"], c["ns_per_hit"]))
    if c["runs"] != 3:
        bad.append("%s: %s runs" % (c["class"], c["runs"]))
for k in ("stepped", "emulated", "nop5", "patch", "patch_flags"):
    if not out["site_costs"][k] > 0:
        bad.append("site cost %s" % k)
if out["file"] != sys.argv[2]:
    bad.append("file %s, expected %s" % (out["file"], sys.argv[2]))
del out["file"]
if saved != out:
    bad.append("the saved file differs from the printed JSON")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
ls "$cache/edgeprof" | grep -v '^site-costs.json$' && fail "temporary files left behind"

# calibration__load, through a small driver linked with edgeprof's objects.
cat >"$tmp/load.c" <<'C'
#include <stdio.h>
#include "user/count/calibration.h"
int main(void)
{
	struct site_costs c;
	int ret = calibration__load(&c);

	printf("%d %d %.1f %.1f %.1f %.1f %.1f\n", ret, c.measured, c.ns[PROBE_STEPPED],
	       c.ns[PROBE_EMULATED], c.ns[PROBE_NOP5], c.ns[PROBE_PATCH],
	       c.ns[PROBE_PATCH_FLAGS]);
	return 0;
}
C
gcc -std=gnu11 -D_GNU_SOURCE -I. -Ibuild/bpf "$tmp/load.c" build/libuser.a \
	build/libestimators.a build/libcfg.a -o "$tmp/load" -lbpf -lelf -ldw -lcapstone \
	-ljansson -lm || { echo "FAIL: cannot build the calibration__load driver"; exit 1; }

want=$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["site_costs"]
print("0 1 %.1f %.1f %.1f %.1f %.1f" % (c["stepped"], c["emulated"], c["nop5"], c["patch"],
      c["patch_flags"]))' "$file")
got=$(XDG_CACHE_HOME=$cache "$tmp/load" 2>"$tmp/err")
[ "$got" = "$want" ] || fail "load: got '$got', expected '$want'"
[ -s "$tmp/err" ] && fail "load printed: $(cat "$tmp/err")"

got=$(XDG_CACHE_HOME=$tmp/none "$tmp/load" 2>"$tmp/err")
[ "$got" = "0 0 9500.0 500.0 380.0 10.0 20.0" ] || fail "absent file: got '$got'"
[ -s "$tmp/err" ] && fail "absent file printed: $(cat "$tmp/err")"

# A file from before the in-process classes were measured: its uprobe costs, the defaults of
# the patched ones.
mkdir -p "$tmp/old/edgeprof"
python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))
del c["site_costs"]["patch"], c["site_costs"]["patch_flags"]
json.dump(c, open(sys.argv[2], "w"))' "$file" "$tmp/old/edgeprof/site-costs.json"
want=$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["site_costs"]
print("0 1 %.1f %.1f %.1f 10.0 20.0" % (c["stepped"], c["emulated"], c["nop5"]))' "$file")
got=$(XDG_CACHE_HOME=$tmp/old "$tmp/load" 2>"$tmp/err")
[ "$got" = "$want" ] || fail "file without patch costs: got '$got', expected '$want'"

mkdir -p "$tmp/bad/edgeprof"
echo '{"version": 1, "site_costs": {"stepped": 5' >"$tmp/bad/edgeprof/site-costs.json"
got=$(XDG_CACHE_HOME=$tmp/bad "$tmp/load" 2>"$tmp/err")
[ "$got" = "-22 0 9500.0 500.0 380.0 10.0 20.0" ] || fail "invalid file: got '$got'"
grep -q "ignoring the calibration file" "$tmp/err" || fail "invalid file: no warning"

sed 's/"kernel": "[^"]*"/"kernel": "0.0-other"/' "$file" >"$tmp/bad/edgeprof/site-costs.json"
got=$(XDG_CACHE_HOME=$tmp/bad "$tmp/load" 2>"$tmp/err")
[ "$got" = "-22 0 9500.0 500.0 380.0 10.0 20.0" ] || fail "other kernel: got '$got'"
grep -q "made on kernel 0.0-other" "$tmp/err" || fail "other kernel: no warning"

# Automatic calibration by `run` when there is none (tests/run.sh opts out for the others).
auto=$tmp/auto
gcc -O1 -o "$tmp/loops" tests/programs/loops.c || fail "cannot build tests/programs/loops.c"
env -u EDGEPROF_NO_CALIBRATE XDG_CACHE_HOME=$auto "$EDGEPROF" -v run -o "$tmp/auto.data" \
	-- "$tmp/loops" >/dev/null 2>"$tmp/auto.err" || fail "run with auto calibration failed"
[ -s "$auto/edgeprof/site-costs.json" ] ||
	fail "run did not store a calibration in an empty XDG_CACHE_HOME: $(cat "$tmp/auto.err")"
secs=$(grep -o "probe costs measured in [0-9.]* s" "$tmp/auto.err" | grep -o "[0-9.]* s")
echo "auto calibration: ${secs:-?}"
# Quick: the reduced iterations (a full calibration takes 10-30 s here). Its time is about 1 s on
# this 2-vCPU VM when idle, but 2-9 s at load averages of 13-18 (BPF loads and process
# starts): the time is printed, not asserted.
python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))
sys.exit(0 if c["iterations"] <= 5000 and c["repeat"] <= 2 else 1)' \
	"$auto/edgeprof/site-costs.json" || fail "the automatic calibration is not the quick one"
date=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["date"])' \
	"$auto/edgeprof/site-costs.json")
"$EDGEPROF" report "$tmp/auto.data" >"$tmp/auto.txt" || fail "report failed"
grep -q "^placement: .*site costs (measured on $date)" "$tmp/auto.txt" ||
	fail "report does not say 'measured on $date': $(grep placement: "$tmp/auto.txt")"
"$EDGEPROF" report --json "$tmp/auto.data" | python3 -c '
import json, sys
c = json.load(sys.stdin)["placement"]["site_costs"]
f = json.load(open(sys.argv[1]))["site_costs"]
assert c["source"] == "measured" and c["date"] == sys.argv[2], c
assert all(abs(c[k] - f[k]) < 0.1 for k in ("stepped", "emulated", "nop5")), (c, f)
' "$auto/edgeprof/site-costs.json" "$date" || fail "report --json: not the stored costs"
cp "$auto/edgeprof/site-costs.json" "$tmp/first.json"
env -u EDGEPROF_NO_CALIBRATE XDG_CACHE_HOME=$auto "$EDGEPROF" -v run -o "$tmp/auto2.data" \
	-- "$tmp/loops" >/dev/null 2>"$tmp/auto2.err" || fail "second run failed"
grep -q "measuring probe costs" "$tmp/auto2.err" && fail "the second run calibrated again"
cmp -s "$tmp/first.json" "$auto/edgeprof/site-costs.json" || fail "the calibration changed"
EDGEPROF_NO_CALIBRATE=1 XDG_CACHE_HOME=$tmp/optout "$EDGEPROF" run -o "$tmp/optout.data" \
	-- "$tmp/loops" >/dev/null 2>&1 || fail "run with EDGEPROF_NO_CALIBRATE=1 failed"
[ -e "$tmp/optout/edgeprof/site-costs.json" ] && fail "EDGEPROF_NO_CALIBRATE=1 calibrated"
"$EDGEPROF" report "$tmp/optout.data" | grep -q "site costs (defaults, not calibrated)" ||
	fail "opt-out: report does not say defaults"
# A home directory that does not exist (HOME=/nonexistent, as system users have) is never
# created: the run uses the default costs and says so.
env -u EDGEPROF_NO_CALIBRATE -u XDG_CACHE_HOME HOME="$tmp/nohome" "$EDGEPROF" -v run \
	-o "$tmp/nohome.data" -- "$tmp/loops" >/dev/null 2>"$tmp/nohome.err" ||
	fail "run with a missing HOME failed: $(head -n 1 "$tmp/nohome.err")"
[ -e "$tmp/nohome" ] && fail "run created the missing home directory $tmp/nohome"
grep -q "no cache directory" "$tmp/nohome.err" || fail "missing HOME: no note on stderr"
"$EDGEPROF" report "$tmp/nohome.data" | grep -q "site costs (defaults, not calibrated)" ||
	fail "missing HOME: report does not say defaults"

if [ $fails -gt 0 ]; then
	echo "$fails failures"
	exit 1
fi
echo "PASS: calibrate counted $N hits per class exactly; file written and loaded;" \
	"run calibrated once automatically in $secs"
