#!/bin/bash
# `edgeprof report` says which mechanism counted what: a `probes:` line, then an `in process:`
# line (patched counters) and a `uprobes:` line, each with its sites per class, hits and
# estimated time; `report --json` gives the same under "probes": {"classes": {CLASS:
# {"mechanism", "sites", "hits", "est_ns"}}}. Checked on tests/programs/switch.c (gcc -O2,
# sites of both mechanisms when a jump table keeps a uprobe) run with the default
# mechanism and with --probes uprobe: the figures of both forms equal those computed here from
# the raw profile's site table (class, hits) and its site costs. Exit 0 pass, 1 fail, 77 skip
# (BPF unavailable).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. tests/support/checks.sh
. tests/support/bpf-checks.sh

EDGEPROF=${EDGEPROF:-build/edgeprof}
OUT=build/tests/report-mechanisms
mkdir -p "$OUT"
prog=$OUT/switch
gcc -O2 -g -o "$prog" tests/programs/switch.c || { echo "FAIL: cc"; exit 1; }

for mech in auto uprobe; do
	data=$OUT/$mech.data
	if ! "$EDGEPROF" run --probes "$mech" -o "$data" -- "$prog" 20000 >/dev/null \
		2>"$OUT/$mech.err"; then
		skip_if_no_bpf "$OUT/$mech.err"
		bad "edgeprof run --probes $mech: $(tail -n 1 "$OUT/$mech.err")"
		continue
	fi
	"$EDGEPROF" report "$data" >"$OUT/$mech.txt" 2>&1 || bad "report ($mech) failed"
	"$EDGEPROF" report --json "$data" >"$OUT/$mech.json" 2>&1 || bad "report --json ($mech) failed"
	if msg=$(python3 - "$data" "$OUT/$mech.txt" "$OUT/$mech.json" "$mech" <<'PYEOF_mech'
import json, re, sys
prof = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
rep = json.load(open(sys.argv[3]))
mech = sys.argv[4]
INP = {"patch", "patch-flags"}
costs = prof["placement"]["costs"]
cost_key = {"patch-flags": "patch_flags"}
want = {}
for s in prof["placement"]["sites"]:
    c = want.setdefault(s["class"], {"sites": 0, "hits": 0, "est_ns": 0.0})
    c["sites"] += 1
    c["hits"] += s["hits"]
    c["est_ns"] += s["hits"] * costs[cost_key.get(s["class"], s["class"])]
got = rep["probes"]["classes"]
errs = []
if set(got) != set(want):
    errs.append("json classes %s, profile %s" % (sorted(got), sorted(want)))
for k, w in want.items():
    g = got.get(k, {})
    if g.get("sites") != w["sites"] or g.get("hits") != w["hits"]:
        errs.append("json %s: %s, profile %s" % (k, g, w))
    if abs(g.get("est_ns", -1) - w["est_ns"]) > 1e-6 * max(1.0, w["est_ns"]):
        errs.append("json %s est_ns %s, profile %s" % (k, g.get("est_ns"), w["est_ns"]))
    if g.get("mechanism") != ("in-process" if k in INP else "uprobe"):
        errs.append("json %s mechanism %s" % (k, g.get("mechanism")))
for label, inproc in (("in process:", True), ("uprobes:", False)):
    cls = {k: w for k, w in want.items() if (k in INP) == inproc}
    m = re.search(r"^  %s +(\d+) sites? \(([^)]*)\), (\d+) hits, estimated" % re.escape(label),
                  text, re.M)
    if not cls:
        if m:
            errs.append("text has an '%s' line without such sites" % label)
        continue
    if not m:
        errs.append("text has no '%s' line" % label)
        continue
    per = dict((p.rsplit(" ", 1)[0], int(p.rsplit(" ", 1)[1])) for p in m.group(2).split(", "))
    if int(m.group(1)) != sum(w["sites"] for w in cls.values()) or \
            per != {k: w["sites"] for k, w in cls.items()} or \
            int(m.group(3)) != sum(w["hits"] for w in cls.values()):
        errs.append("text '%s' line %r, profile %s" % (label, m.group(0), cls))
if mech == "uprobe" and any(k in INP for k in want):
    errs.append("--probes uprobe has in-process sites")
if mech == "auto" and not any(k in INP and w["hits"] for k, w in want.items()):
    errs.append("the default mechanism patched no site that ran")
print("; ".join(errs) if errs else
      ", ".join("%s %d sites %d hits" % (k, w["sites"], w["hits"]) for k, w in sorted(want.items())))
sys.exit(1 if errs else 0)
PYEOF_mech
	); then
		ok "--probes $mech: text and JSON agree with the profile's sites ($msg)"
	else
		bad "--probes $mech: $msg"
	fi
done
checks_summary report-mechanisms
