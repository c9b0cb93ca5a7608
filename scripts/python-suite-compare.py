#!/usr/bin/env python3
# Compares two runs of CPython's regression tests (`python3 -m test -v --junit-xml FILE
# MODULES...`), a native one and one under `edgeprof run`, test by test, and reads the
# profile figures of the edgeprof run: flow-conservation violations (the "violations" of
# `edgeprof report --json`) and the probe sites per class in the profile (in process: "patch",
# "patch-flags"; uprobes: "stepped", "emulated", "nop5", "never"). Used by
# scripts/check-python-suite.sh; prints one "key value" line per figure and one "diff" line
# per test whose result differs. Exit status: 0 the runs agree and the profile has no
# violations, 1 they differ (or violations), 2 bad input.
import collections
import json
import re
import sys
import xml.etree.ElementTree as ET

RESULT_RE = re.compile(r"^== Tests result: (.*) ==$", re.M)
TOTAL_RE = re.compile(r"^Total tests: run=(\d+)(?: failures=(\d+))?(?: skipped=(\d+))?", re.M)


def usage():
    sys.stderr.write("usage: python-suite-compare.py NATIVE.xml NATIVE.log EP.xml EP.log "
                     "REPORT.json PROFILE EP.err\n")
    sys.exit(2)


def tests_of(xml_path):
    """Maps "classname.name" to pass|failure|error|skipped, for every test case; {} (and a
    "missing" line) when the run wrote no XML (it crashed or was killed)."""
    try:
        root = ET.parse(xml_path).getroot()
    except (OSError, ET.ParseError) as e:
        print("missing %s (%s)" % (xml_path, str(e).replace(" ", "_")))
        return {}
    out = {}
    for tc in root.iter("testcase"):
        key = "%s.%s" % (tc.get("classname", "?"), tc.get("name", "?"))
        res = "pass"
        for child in tc:
            if child.tag in ("failure", "error", "skipped"):
                res = child.tag
                break
        if key in out and out[key] != res:
            res = out[key] + "+" + res
        out[key] = res
    return out


def summary_of(log_path):
    with open(log_path, errors="replace") as f:
        text = f.read()
    m = RESULT_RE.findall(text)
    return (m[-1] if m else "none"), text


def main():
    if len(sys.argv) != 8:
        usage()
    nxml, nlog, exml, elog, rjson, pfile, eerr = sys.argv[1:]
    native, eprof = tests_of(nxml), tests_of(exml)
    nres, _ = summary_of(nlog)
    eres, _ = summary_of(elog)
    ok = True

    counts = collections.Counter(native.values())
    print("tests %d" % len(native))
    for k in ("pass", "skipped", "failure", "error"):
        print("native_%s %d" % (k, counts.get(k, 0)))
    ecounts = collections.Counter(eprof.values())
    for k in ("pass", "skipped", "failure", "error"):
        print("edgeprof_%s %d" % (k, ecounts.get(k, 0)))
    print("native_result %s" % nres.replace(" ", "_"))
    print("edgeprof_result %s" % eres.replace(" ", "_"))
    if nres != eres or nres == "none":
        ok = False

    ndiff = 0
    for key in sorted(set(native) | set(eprof)):
        a, b = native.get(key, "absent"), eprof.get(key, "absent")
        if a != b:
            ndiff += 1
            print("diff %s native=%s edgeprof=%s" % (key, a, b))
    print("differences %d" % ndiff)
    # Per module (test.test_json.test_decode.X.y -> test_json): passed/skipped/failed+errors
    # natively and under edgeprof, and the tests whose result differs.
    def module_of(key):
        parts = key.split(".")
        for i, part in enumerate(parts[:-1]):
            if part == "test" and parts[i + 1].startswith("test_"):
                return parts[i + 1]
        return parts[0]
    per = collections.defaultdict(lambda: collections.Counter())
    for key in set(native) | set(eprof):
        m = module_of(key)
        a, b = native.get(key, "absent"), eprof.get(key, "absent")
        for side, r in (("n", a), ("e", b)):
            per[m][side + ("_pass" if r == "pass" else "_skip" if r == "skipped" else
                           "_absent" if r == "absent" else "_fail")] += 1
        per[m]["diff"] += a != b
    for m in sorted(per):
        c = per[m]
        print("module %s %d/%d/%d %d/%d/%d%s %d" % (
            m, c["n_pass"], c["n_skip"], c["n_fail"], c["e_pass"], c["e_skip"], c["e_fail"],
            ("+%d_absent" % c["e_absent"]) if c["e_absent"] else "", c["diff"]))
    if ndiff or not native:
        ok = False

    try:
        with open(rjson) as f:
            report = json.load(f)
        with open(pfile) as f:
            prof = json.load(f)
    except (OSError, ValueError) as e:
        sys.stderr.write("python-suite-compare: %s\n" % e)
        sys.exit(2)
    viol = report.get("violations")
    print("violations %s" % viol)
    if viol != 0:
        ok = False
    classes = collections.Counter(s.get("class") for s in prof["placement"]["sites"])
    inproc = classes.get("patch", 0) + classes.get("patch-flags", 0)
    print("sites %d" % sum(classes.values()))
    print("sites_patched %d" % inproc)
    for c in ("patch", "patch-flags", "stepped", "emulated", "nop5", "never"):
        print("class_%s %d" % (c.replace("-", "_"), classes.get(c, 0)))
    print("sites_uprobe %d" % (sum(classes.values()) - inproc))
    print("hits %s" % prof.get("probes", {}).get("hits"))
    hits = collections.Counter()
    for s in prof["placement"]["sites"]:
        hits["patch" if s.get("class", "").startswith("patch") else "uprobe"] += s.get("hits", 0)
    print("hits_patched %d" % hits["patch"])
    print("hits_uprobe %d" % hits["uprobe"])

    refused = 0
    with open(eerr, errors="replace") as f:
        for line in f:
            m = re.search(r"refuse (\d+) sites", line)
            if m:
                refused += int(m.group(1))
    print("sites_refused %d" % refused)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
