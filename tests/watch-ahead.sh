#!/bin/bash
# Library functions watched from the exec on: `edgeprof run` watches pthread_exit, execve and
# the others in the C library it finds in its own process before the program's first
# instruction (with the exec's other uprobes, so the loader's rendezvous waits for no second
# RCU grace period), and adopts those watches at the rendezvous. A library initialiser runs
# before that: tests/lib_programs/ctor_thread_lib.c's makes a thread that leaves by
# pthread_exit. This checks, for both counting mechanisms, that the program's output and
# status are the native ones, that the early watch was let go there ("before the program's
# start"), that the watches were adopted (pthread_exit watched in the program's process and
# its own thread's pthread_exit followed: 0 violations), and the counts against callgrind
# (build/tests/count_oracle, no difference allowed).
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/support/checks.sh
source tests/support/checks.sh
# shellcheck source=tests/support/callgrind-run.sh
source tests/support/callgrind-run.sh

need_root_and gcc valgrind
ORACLE=build/tests/count_oracle
make -s "$ORACLE" || { echo "FAIL: cannot build $ORACLE"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "${tmp:?}"' EXIT

gcc -O2 -g -shared -fPIC -o "$tmp/libctor_thread.so" tests/lib_programs/ctor_thread_lib.c -lpthread ||
	{ echo "FAIL: cannot build the library"; exit 1; }
gcc -O2 -g -o "$tmp/prog" tests/lib_programs/ctor_thread_main.c -L"$tmp" -lctor_thread \
	-Wl,-rpath,"$tmp" -lpthread || { echo "FAIL: cannot build the program"; exit 1; }
"$tmp/prog" >"$tmp/native.out" </dev/null
native_rc=$?
cg_run "$tmp" /dev/null "$tmp/callgrind.stdout" "$tmp/prog"
cgargs=()
for f in "${CG_FILES[@]}"; do cgargs+=(--callgrind "$f"); done

for probes in auto uprobe; do
	rc=0
	"$EDGEPROF" -vv run --probes "$probes" -o "$tmp/p.data" -- "$tmp/prog" \
		>"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
	[ "$rc" = "$native_rc" ] || bad "$probes: exit status $rc, natively $native_rc"
	if cmp -s "$tmp/out" "$tmp/native.out"; then
		ok "$probes: output and status are the native run's"
	else
		bad "$probes: output differs from the native run's"
	fi
	if grep -q "before the program's start" "$tmp/err"; then
		ok "$probes: the initialiser's pthread_exit met the early watch and was let go"
	else
		bad "$probes: no early watch met before the program's start"
	fi
	pid=$(sed -n 's/.*process \([0-9]*\) at its exec.*/\1/p' "$tmp/err" | head -n 1)
	if grep -q "process $pid: watching pthread_exit" "$tmp/err"; then
		ok "$probes: pthread_exit watched in the program's process from the rendezvous on"
	else
		bad "$probes: pthread_exit not watched in process $pid"
	fi
	if ! "$EDGEPROF" report --json "$tmp/p.data" >"$tmp/p.json" 2>>"$tmp/err"; then
		bad "$probes: edgeprof report --json failed"
		continue
	fi
	viol=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); print(sum(len(f.get("violations", [])) for f in p["functions"]))' "$tmp/p.json")
	[ "$viol" = 0 ] && ok "$probes: 0 violations" || bad "$probes: $viol violations"
	if "$ORACLE" --profile "$tmp/p.json" --binary "$tmp/prog" "${cgargs[@]}" >"$tmp/oracle" 2>&1; then
		ok "$probes: counts equal callgrind's: $(tail -n 1 "$tmp/oracle" | sed 's/^count_oracle [^:]*: //')"
	else
		bad "$probes: counts differ from callgrind's: $(tail -n 1 "$tmp/oracle")"
	fi
done
checks_summary watch-ahead
