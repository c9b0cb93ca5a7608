#!/usr/bin/env bash
# `--lib`: shared libraries profiled with the binary, each with its own CFG, probes and
# section of the profile (tests/lib_programs/zlib_user.c, whose work is mostly in libz):
#  - `edgeprof run --lib libz`, gcc -O2 and clang -O2 builds: the program's output is the
#    native one, and both sections (`edgeprof report --json` and `report --lib libz --json`)
#    match valgrind callgrind exactly (build/tests/count_oracle, 0 differences), library
#    constructors and destructors included; at least 90% of the library's sites are counted
#    in process (patched at the loader's rendezvous), and with --probes uprobe (gcc build)
#    none is, with the same exactness; with each round in a forked child that exits through
#    exit(), both sections equal the sum of callgrind's processes;
#  - `edgeprof -p PID --lib libz -d 1` on a running copy: both sections conserve flow (0
#    violations), the process runs on; `edgeprof report` shows the library's section;
#  - a name that matches no library: one line, exit status 1, for run, record and report.
# Needs root and BPF (CI=true turns a skip into a failure). Exit 0 pass, 77 skip, else fail.
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

[ -x "$EDGEPROF" ] && [ -x "$ORACLE" ] || { echo "FAIL: build first (make all build/tests/count_oracle)"; exit 1; }
EDGEPROF=$(realpath "$EDGEPROF")
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
for c in gcc clang python3 valgrind; do
	command -v "$c" >/dev/null || { echo "SKIP: $c not found"; exit 77; }
done

tmp=$(mktemp -d)
cleanup() {
	kill_started
	rm -rf "$tmp"
}
trap cleanup EXIT

# "PERCENT text": the percentage of a section's (report --json) probe sites counted in
# process, and a line saying how many sites each mechanism counted.
lib_mechanisms() {
	python3 - "$1" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["probes"]
by = {}
for c in p["classes"].values():
    by[c["mechanism"]] = by.get(c["mechanism"], 0) + c["sites"]
inproc = by.get("in-process", 0)
print(f"{100 * inproc // max(p['sites'], 1)} {inproc} of {p['sites']} library sites in process, {by.get('uprobe', 0)} uprobes")
PY
}

libz=""
for cc in gcc clang; do
	bin=$tmp/zlib_user-$cc
	if ! $cc -O2 -g -o "$bin" tests/lib_programs/zlib_user.c -lz; then
		bad "cannot build zlib_user with $cc (zlib1g-dev missing?)"
		continue
	fi
	"$bin" 4 >"$tmp/native" || { bad "$cc: zlib_user failed natively"; continue; }
	if ! "$EDGEPROF" -q run --lib libz -o "$tmp/p-$cc.data" -- "$bin" 4 >"$tmp/out" 2>"$tmp/err"; then
		skip_if_no_bpf "$tmp/err"
		bad "$cc: edgeprof run --lib libz failed: $(head -c 300 "$tmp/err")"
		continue
	fi
	cmp -s "$tmp/native" "$tmp/out" || bad "$cc: output under edgeprof differs from the native one"
	valgrind --tool=callgrind --dump-instr=yes --collect-jumps=yes --skip-plt=no \
		--callgrind-out-file="$tmp/cg-$cc.out" "$bin" 4 >/dev/null 2>"$tmp/vg.err" ||
		{ bad "$cc: callgrind failed: $(tail -n 2 "$tmp/vg.err")"; continue; }
	libz=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["libraries"][0]["binary"]["path"])' "$tmp/p-$cc.data" 2>/dev/null)
	if [ -z "$libz" ]; then
		bad "$cc: the profile has no library section"
		continue
	fi
	"$EDGEPROF" report --json "$tmp/p-$cc.data" >"$tmp/main.json" &&
		"$EDGEPROF" report --lib libz --json "$tmp/p-$cc.data" >"$tmp/lib.json" ||
		{ bad "$cc: edgeprof report failed"; continue; }
	for section in main:"$bin" lib:"$libz"; do
		json=$tmp/${section%%:*}.json
		if msg=$("$ORACLE" --profile "$json" --callgrind "$tmp/cg-$cc.out" --binary "${section#*:}" 2>&1); then
			ok "$cc run --lib libz, section ${section%%:*}: $(tail -n 1 <<<"$msg" | sed 's/^count_oracle [^:]*: //')"
		else
			bad "$cc run --lib libz, section ${section%%:*}: $(tail -n 5 <<<"$msg")"
		fi
	done
	# The library is patched at the loader's rendezvous (mapped, its constructors not run
	# yet): most of its sites are counted in process, the kernel's uprobes take the rest.
	if msg=$(lib_mechanisms "$tmp/lib.json") && [ "${msg%% *}" -ge 90 ]; then
		ok "$cc run --lib libz: ${msg#* }"
	else
		bad "$cc run --lib libz: not mostly in process: ${msg#* }"
	fi
	# The same with uprobes only: as exact, nothing in process.
	if [ "$cc" = gcc ]; then
		if "$EDGEPROF" -q run --probes uprobe --lib libz -o "$tmp/u.data" -- "$bin" 4 >"$tmp/out" 2>"$tmp/err" &&
			cmp -s "$tmp/native" "$tmp/out" &&
			"$EDGEPROF" report --json "$tmp/u.data" >"$tmp/umain.json" &&
			"$EDGEPROF" report --lib libz --json "$tmp/u.data" >"$tmp/ulib.json"; then
			msg=$(lib_mechanisms "$tmp/ulib.json")
			[ "${msg%% *}" = 0 ] && ok "run --probes uprobe --lib libz: ${msg#* }" ||
				bad "run --probes uprobe --lib libz: ${msg#* }"
			for section in main:"$bin" lib:"$libz"; do
				json=$tmp/u${section%%:*}.json
				if msg=$("$ORACLE" --profile "$json" --callgrind "$tmp/cg-$cc.out" --binary "${section#*:}" 2>&1); then
					ok "run --probes uprobe --lib libz, section ${section%%:*}: $(tail -n 1 <<<"$msg" | sed 's/^count_oracle [^:]*: //')"
				else
					bad "run --probes uprobe --lib libz, section ${section%%:*}: $(tail -n 5 <<<"$msg")"
				fi
			done
		else
			bad "run --probes uprobe --lib libz failed or changed the output: $(head -c 300 "$tmp/err")"
		fi
	fi
done

# Forked children (each round in one, which exits through exit()): the library's counters
# are inherited like the binary's (patched code, shared counters), its destructors run in
# each child; both sections equal the sum of callgrind's processes (cg_run).
bin=$tmp/zlib_user-gcc
if [ -x "$bin" ] && [ -n "$libz" ]; then
	mkdir -p "$tmp/cgf"
	cg_run "$tmp/cgf" /dev/null "$tmp/fnative" "$bin" 3 fork
	cgf=()
	for f in "${CG_FILES[@]}"; do cgf+=(--callgrind "$f"); done
	if [ "$CG_RC" != 0 ] || [ ${#CG_FILES[@]} -lt 4 ]; then
		bad "fork: callgrind failed ($CG_RC, ${#CG_FILES[@]} outputs)"
	elif ! "$EDGEPROF" -q run --lib libz -o "$tmp/f.data" -- "$bin" 3 fork >"$tmp/out" 2>"$tmp/err"; then
		bad "fork: edgeprof run --lib libz failed: $(head -c 300 "$tmp/err")"
	else
		cmp -s "$tmp/fnative" "$tmp/out" || bad "fork: output under edgeprof differs from the native one"
		"$EDGEPROF" report --json "$tmp/f.data" >"$tmp/fmain.json" &&
			"$EDGEPROF" report --lib libz --json "$tmp/f.data" >"$tmp/flib.json" ||
			bad "fork: edgeprof report failed"
		msg=$(lib_mechanisms "$tmp/flib.json")
		[ "${msg%% *}" -ge 90 ] && ok "fork: ${msg#* }" || bad "fork: not mostly in process: ${msg#* }"
		for section in main:"$bin" lib:"$libz"; do
			json=$tmp/f${section%%:*}.json
			if msg=$("$ORACLE" --profile "$json" "${cgf[@]}" --binary "${section#*:}" 2>&1); then
				ok "fork: run --lib libz, 3 children, section ${section%%:*}: $(tail -n 1 <<<"$msg" | sed 's/^count_oracle [^:]*: //')"
			else
				bad "fork: run --lib libz, section ${section%%:*}: $(tail -n 5 <<<"$msg")"
			fi
		done
	fi
fi

# Attached to a running copy.
bin=$tmp/zlib_user-gcc
"$bin" 0 >/dev/null 2>&1 &
tpid=$!
started+=("$tpid")
sleep 0.3
if "$EDGEPROF" -q -p "$tpid" --lib libz -d 1 -o "$tmp/a.data" 2>"$tmp/err"; then
	if msg=$(python3 - "$tmp/a.data" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
libs = p.get("libraries", [])
if len(libs) != 1:
    sys.exit(f"{len(libs)} library sections, not 1")
for name, s in (("main", p), ("libz", libs[0])):
    if s["violations"]:
        sys.exit(f"{name}: {s['violations']} violations")
if not libs[0]["probes"]["hits"]:
    sys.exit("no probe hit in libz")
print(f"libz {libs[0]['probes']['hits']} hits in {sum(1 for f in libs[0]['functions'] if f['count'])} functions, main {p['probes']['hits']}, 0 violations")
PY
	); then
		kill -0 "$tpid" 2>/dev/null && ok "record -p --lib libz: $msg; the process runs on" ||
			bad "record -p --lib libz: the process is gone"
	else
		bad "record -p --lib libz: $msg"
	fi
	"$EDGEPROF" report "$tmp/a.data" >"$tmp/report" 2>&1 && grep -q "^== library $libz ==" "$tmp/report" &&
		ok "report shows the library section" || bad "report does not show the library section"
else
	bad "record -p --lib libz failed: $(head -c 300 "$tmp/err")"
fi

# A name that matches nothing.
expect_one_line() {
	local name=$1 rc
	shift
	"$@" >/dev/null 2>"$tmp/err"
	rc=$?
	if [ $rc = 1 ] && [ "$(wc -l <"$tmp/err")" = 1 ]; then
		ok "$name: $(cat "$tmp/err")"
	else
		bad "$name: exit $rc, stderr: $(head -c 300 "$tmp/err")"
	fi
}
expect_one_line "run --lib nomatch" "$EDGEPROF" run --lib libnosuchthing -o "$tmp/x.data" -- "$bin" 1
expect_one_line "record --lib nomatch" "$EDGEPROF" -p "$tpid" --lib libnosuchthing -d 1 -o "$tmp/x.data"
expect_one_line "report --lib nomatch" "$EDGEPROF" report --lib libnosuchthing "$tmp/a.data"
kill -KILL "$tpid"
wait "$tpid" 2>/dev/null

# A python built with a shared libpython (pyenv, conda, Fedora): a launcher of a few functions
# around Py_BytesMain, built here against Debian's libpython3.11.so (libpython3.11-dev).
pyconf=/usr/bin/python3.11-config
if [ -x "$pyconf" ] && printf '#include <Python.h>\nint main(int c, char **v) { return Py_BytesMain(c, v); }\n' >"$tmp/launcher.c" &&
	gcc -O2 -o "$tmp/python3.11" "$tmp/launcher.c" $("$pyconf" --cflags --ldflags --embed) 2>"$tmp/err" &&
	"$tmp/python3.11" -S -c 'pass' 2>>"$tmp/err"; then
	libpy=$(ldd "$tmp/python3.11" | awk '/libpython3/ {print $3}')
	libpy=$(realpath "$libpy")
	# Without --lib: a hint names the library its code runs in.
	"$EDGEPROF" run -o "$tmp/py.data" -- "$tmp/python3.11" -S -c 'pass' >/dev/null 2>"$tmp/err"
	if grep -q "hint: python3.11 ran [0-9]* instructions' worth of its own code; its code is in ${libpy##*/}: use --lib libpython3\$" "$tmp/err"; then
		ok "run of a shared-libpython launcher: $(grep hint: "$tmp/err")"
	else
		bad "run of a shared-libpython launcher: no hint: $(head -c 300 "$tmp/err")"
	fi
	"$tmp/python3.11" -S -c 'import time
while True: time.sleep(0.01)' &
	ppid=$!
	started+=("$ppid")
	sleep 0.5
	"$EDGEPROF" -p "$ppid" -d 1 -o "$tmp/pyp.data" >/dev/null 2>"$tmp/err"
	grep -q "hint: python3.11 ran .*its code is in ${libpy##*/}: use --lib libpython3\$" "$tmp/err" &&
		ok "record -p of a shared-libpython launcher: the hint" ||
		bad "record -p of a shared-libpython launcher: no hint: $(head -c 300 "$tmp/err")"
	kill -KILL "$ppid"
	wait "$ppid" 2>/dev/null
	# With --lib libpython3: runs (it stopped at once with "too many jump-table sites in all":
	# ordinal slices were sized by counters, 205k in all, not by the 158 jump tables), counts
	# in the library, no hint, and the launcher's own section equals callgrind's.
	if PYTHONHASHSEED=0 "$EDGEPROF" -q run --lib libpython3 -o "$tmp/pyl.data" -- "$tmp/python3.11" -S -c 'print(sum(range(10)))' \
		>"$tmp/out" 2>"$tmp/err" && [ "$(cat "$tmp/out")" = 45 ]; then
		grep -q "hint:" "$tmp/err" && bad "run --lib libpython3: a hint although the library is profiled"
		if msg=$(python3 - "$tmp/pyl.data" "$libpy" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
libs = p.get("libraries", [])
if len(libs) != 1 or libs[0]["binary"]["path"] != sys.argv[2]:
    sys.exit(f"library sections: {[l['binary']['path'] for l in libs]}")
hits = libs[0]["probes"]["hits"]
ran = sum(1 for f in libs[0]["functions"] if f["count"])
if not hits or ran < 100:
    sys.exit(f"{hits} hits, {ran} functions ran in the library")
print(f"{hits} hits, {ran} functions ran in {sys.argv[2].rsplit('/', 1)[1]}")
PY
		); then
			ok "run --lib libpython3: $msg"
		else
			bad "run --lib libpython3: $msg"
		fi
		PYTHONHASHSEED=0 valgrind --tool=callgrind --dump-instr=yes --collect-jumps=yes --skip-plt=no \
			--callgrind-out-file="$tmp/cg-py.out" "$tmp/python3.11" -S -c 'print(sum(range(10)))' >/dev/null 2>"$tmp/vg.err"
		"$EDGEPROF" report --json "$tmp/pyl.data" >"$tmp/pymain.json" 2>/dev/null
		if msg=$("$ORACLE" --profile "$tmp/pymain.json" --callgrind "$tmp/cg-py.out" --binary "$tmp/python3.11" 2>&1); then
			ok "run --lib libpython3, the launcher's section: $(tail -n 1 <<<"$msg" | sed 's/^count_oracle [^:]*: //')"
		else
			bad "run --lib libpython3, the launcher's section: $(tail -n 5 <<<"$msg")"
		fi
	else
		bad "run --lib libpython3 failed: $(head -c 300 "$tmp/err")"
	fi
else
	echo "note: no shared-libpython launcher (libpython3.11-dev missing?): $(head -c 200 "$tmp/err")"
fi

checks_summary lib
