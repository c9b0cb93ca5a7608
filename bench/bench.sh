#!/usr/bin/env bash
# The benchmark suite (`make bench`): what profiling costs on real programs, side by side in
# one run. For each program (edgeprof's test programs and the corpus built from Debian source
# packages by scripts/corpus.sh: lua5.4, bzip2, sqlite3), interleaved repetitions
# (native edgeprof cold uprobe callgrind gcov bolt naive native edgeprof ...), medians of
# wall-clock seconds:
#   native     the program as built (-O2 -g)
#   edgeprof   `edgeprof run`, its default mechanism (`--probes auto`: in-process counters
#              where proven safe, uprobes elsewhere; default placement: spanning-tree chords),
#              a later run of the binary (an untimed one first fills the decode and
#              analysis caches)
#   cold       the same with EDGEPROF_NO_DECODE_CACHE=1: a first run of the binary
#   uprobe     `edgeprof run --probes uprobe` (every counter a kernel uprobe); "missing" when
#              this edgeprof has no `run --probes` (detected from `edgeprof run --help`)
#   callgrind  `valgrind --tool=callgrind`
#   gcov       the same source built with -fprofile-arcs (writing its .gcda files included)
#   bolt       `llvm-bolt-19 -instrument` of the same source linked with -Wl,--emit-relocs
#              (scripts/corpus.sh --relocs for the corpus), its runtime libbolt_rt_instr.a
#              writing the counts to runs/NAME.bolt.fdata at exit (included); bench/setup.sh
#              installs bolt-19 and libbolt-19-dev, without them the column is "missing"
#   naive      `edgeprof run --placement naive` (a probe on every block), stopped after
#              NAIVE_TIMEOUT s: its time is then a lower bound
# and, from the first edgeprof profile (`edgeprof compare --json` prices placements on that
# run's true counts): sites attached and hit, counter hits, estimated counting time (hits x
# the calibrated cost of each site's class), the analysis time (CFG recovery + placement, the
# profile's run.analysis_s), the naive placement's hits and counting time, and the oracle's:
# Exact-Max, the chords placement planned with this very run's counts as weights. Ratios:
# slowdown vs native (the goal: edgeprof at most 2.0x native on each corpus program, gcov's
# ratio next to it), edgeprof vs callgrind, counting vs oracle, naive vs edgeprof; and where
# the remaining overhead goes: per site class (uprobe: stepped, emulated, nop5; in-process:
# patch, patch-flags) sites, hits, ns per hit, estimated seconds, the share of hits counted by
# uprobes; BOLT's counters and the lines of its fdata files.
# Prints the table and writes bench/results.md and bench/results.json. A missing tool or
# program gives "missing" in its cells; the run still ends with the rest of the figures.
#
# Environment:
#   REPS (5)             repetitions of native, gcov and bolt
#   REPS_SLOW (2)        repetitions of edgeprof, cold, uprobe and callgrind (and naive)
#   NAIVE_TIMEOUT (60)   seconds before a naive run is stopped (one run once it times out)
#   EDGEPROF_TIMEOUT (1800), UPROBE_TIMEOUT (1800), CALLGRIND_TIMEOUT (600)  a stopped run is
#                        reported as a timeout (and not repeated); CHORDS_TIMEOUT, the old
#                        name of EDGEPROF_TIMEOUT, is still read
#   TEST_PROGRAMS (loops switch recursion callbacks)  tests/programs/NAME.c, run with a
#                        rounds argument (TEST_ROUNDS_NAME, see below)
#   TEST_SCALE (1)       multiplies the test programs' rounds (1: ~0.05 s natively each)
#   CORPUS_PROGRAMS (lua5.4 bzip2 sqlite3)  corpus workloads (also: bzip2-d), "bench" size
#                        of scripts/workloads/workloads.sh (~0.5-2 s natively)
#   CORPUS_KIND (bench)  or "check" (the smaller sizes, for a quick trial of this script)
#   CALIBRATE (auto)     auto: the user's saved site costs (edgeprof calibrate) if any, else
#                        calibrate privately for this run; 1: always privately; 0: never
#   OUT (bench/results)  writes OUT.md and OUT.json
#   VALGRIND (valgrind)  the valgrind command (a name not found: the callgrind column is missing)
#   BOLT (llvm-bolt-19)  the llvm-bolt command (a name not found: the bolt column is missing)
#   BOLT_RT (llvm-19/lib/libbolt_rt_instr.a)  its -runtime-instrumentation-lib: absolute, or
#                        relative to /usr/lib (where llvm-bolt-19 looks, from /usr/bin)
#   BENCH_WORK (build/bench)  the work directory (emptied first): binaries, runs, profiles.
#                        Refused unless it lies below this checkout's build/ or inside a
#                        `mktemp -d` directory (directly in $TMPDIR or /tmp, yours, mode 700),
#                        and, if it exists, is empty or an earlier bench work directory
# Binaries run from private copies (build/bench/bin): uprobes are per inode, so another
# session's probes on corpus/bin/* would otherwise fire in these runs too.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
EDGEPROF_SRC=${EDGEPROF:-build/edgeprof}
REPS=${REPS:-5}
REPS_SLOW=${REPS_SLOW:-2}
NAIVE_TIMEOUT=${NAIVE_TIMEOUT:-60}
EDGEPROF_TIMEOUT=${EDGEPROF_TIMEOUT:-${CHORDS_TIMEOUT:-1800}}
UPROBE_TIMEOUT=${UPROBE_TIMEOUT:-1800}
CALLGRIND_TIMEOUT=${CALLGRIND_TIMEOUT:-600}
CALIBRATE=${CALIBRATE:-auto}
CORPUS_KIND=${CORPUS_KIND:-bench}
TEST_SCALE=${TEST_SCALE:-1}
OUT=${OUT:-bench/results}
WORK=${BENCH_WORK:-$ROOT/build/bench}
read -r -a TEST_PROGRAMS <<<"${TEST_PROGRAMS-loops switch recursion callbacks}"
read -r -a CORPUS <<<"${CORPUS_PROGRAMS-lua5.4 bzip2 sqlite3}"
# Rounds of each test program's main loop: ~0.05 s natively here. A tenth of the corpus's
# time: these are the densest code edgeprof meets (a probe hit every few instructions), so a
# 0.5 s run takes over 10 minutes under edgeprof; TEST_SCALE=10 gives the 0.5 s runs.
declare -A TEST_ROUNDS=([loops]=8000 [switch]=80000 [recursion]=20000 [callbacks]=70000)

log() { echo "bench: $*" >&2; }

# --- the work directory -------------------------------------------------------------------
# It is emptied with rm -rf, so it must be one this script may own: never /work, /, $HOME or
# a repository. check_work PATH sets WORK to PATH resolved (symlinks too) or exits: accepted
# are a path strictly below $ROOT/build/ and a path in a `mktemp -d` directory (a directory
# directly in $TMPDIR or /tmp, owned by this user, mode 700); an existing directory only if
# it is empty or holds this script's marker (or, from before the marker, programs.tsv and
# times.tsv).
WORK_MARK=.edgeprof-bench-work
refuse_work() {
	log "refusing BENCH_WORK='$1': $2"
	exit 1
}
check_work() {
	local w=$1 real build tmpd top=
	[ -n "$w" ] || refuse_work "$w" "empty"
	real=$(realpath -m -- "$w") || refuse_work "$w" "cannot resolve it"
	[ -n "$real" ] || refuse_work "$w" "cannot resolve it"
	build=$(realpath -m -- "$ROOT/build")
	case $real in
	"$build"/?*) ;;
	*)
		for tmpd in "${TMPDIR:-/tmp}" /tmp; do
			tmpd=$(realpath -m -- "$tmpd")
			if [ -z "$tmpd" ] || [ "$tmpd" = / ]; then continue; fi
			case $real in
			"$tmpd"/?*)
				top=${real#"$tmpd"/}
				top=$tmpd/${top%%/*}
				break
				;;
			esac
		done
		[ -n "$top" ] || refuse_work "$w" "neither below $build/ nor in a mktemp -d directory"
		{ [ -d "$top" ] && [ ! -L "$top" ] && [ -O "$top" ] &&
			[ "$(stat -c %a -- "$top")" = 700 ]; } ||
			refuse_work "$w" "$top is not a mktemp -d directory (yours, mode 700)"
		;;
	esac
	if [ -e "$real" ]; then
		[ -d "$real" ] || refuse_work "$w" "not a directory"
		if [ -n "$(ls -A -- "$real")" ] && [ ! -f "$real/$WORK_MARK" ] &&
			! { [ -f "$real/programs.tsv" ] && [ -f "$real/times.tsv" ]; }; then
			refuse_work "$w" "$real is not empty and not a bench work directory"
		fi
	fi
	WORK=$real
}
check_work "$WORK"

[ -x "$EDGEPROF_SRC" ] || { log "$EDGEPROF_SRC not found (make)"; exit 1; }
command -v python3 >/dev/null || { log "python3 not found"; exit 1; }
rm -rf -- "${WORK:?}"
mkdir -p "$WORK/bin" "$WORK/gcov-bin" "$WORK/relocs-bin" "$WORK/bolt-bin" "$WORK/runs" "$WORK/gcda"
: >"$WORK/$WORK_MARK"
cp "$EDGEPROF_SRC" "$WORK/edgeprof"
EP=$WORK/edgeprof
TIMES=$WORK/times.tsv    # program column rep seconds status(ok|timeout|failed) rc
PROGS=$WORK/programs.tsv # program group gcov-binary|- bolt-binary|- argv... (tab separated)
: >"$TIMES"
: >"$PROGS"
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
others=$(pgrep -c -x edgeprof || true)
# The commit measured (taken now: the tree may move on during a long run).
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD -- user cfg estimators bpf 2>/dev/null ||
	commit="$commit (with uncommitted changes to the profiler)"

# --- site costs -------------------------------------------------------------------------
user_costs=${XDG_CACHE_HOME:-$HOME/.cache}/edgeprof/site-costs.json
EP_ENV=()
if [ "$CALIBRATE" = 1 ] || { [ "$CALIBRATE" = auto ] && [ ! -s "$user_costs" ]; }; then
	log "calibrating probe costs into a private cache ($WORK/cache)"
	mkdir -p "$WORK/cache"
	if XDG_CACHE_HOME=$WORK/cache "$EP" -q calibrate >"$WORK/calibrate.out" 2>&1; then
		EP_ENV=(env "XDG_CACHE_HOME=$WORK/cache")
	else
		log "calibration failed, using default costs: $(tail -1 "$WORK/calibrate.out")"
	fi
fi

# --- the uprobe column: does this edgeprof have `run --probes`? -------------------------------
# (Captured first, then searched: grep -q closing the pipe early would fail it under pipefail.)
ep_help=$("$EP" run --help 2>&1 || true)
if grep -q -- --probes <<<"$ep_help"; then
	have_probes=1
	M_PROBES_OPTION=$(grep -o -- '--probes [^] ]*' <<<"$ep_help" | head -1)
	M_PROBES_OPTION=${M_PROBES_OPTION:---probes}
else
	have_probes=0
	M_PROBES_OPTION=missing
	log "this edgeprof has no 'run --probes': the uprobe column is missing"
fi

# --- BOLT -----------------------------------------------------------------------------------
BOLT=${BOLT:-llvm-bolt-19}
BOLT_RT=${BOLT_RT:-llvm-19/lib/libbolt_rt_instr.a}
case $BOLT_RT in
/*) bolt_rt_file=$BOLT_RT ;;
*) bolt_rt_file=/usr/lib/$BOLT_RT ;;
esac
have_bolt=0
M_BOLT=missing
if ! command -v "$BOLT" >/dev/null; then
	log "$BOLT not found (bench/setup.sh installs bolt-19): the bolt column is missing"
elif [ ! -f "$bolt_rt_file" ]; then
	log "$bolt_rt_file not found (bench/setup.sh installs libbolt-19-dev): the bolt column is missing"
else
	have_bolt=1
	bolt_ver=$("$BOLT" --version 2>/dev/null | sed -n 's/.*LLVM version \([0-9][0-9.]*\).*/\1/p' | head -1)
	M_BOLT="${bolt_ver:-unknown version} ($BOLT, runtime $bolt_rt_file)"
fi
# bolt_build NAME INPUT: instruments INPUT (linked with --emit-relocs) into bolt-bin/NAME,
# its counts going to runs/NAME.bolt.fdata at exit; log in bolt-bin/NAME.log. Prints the
# binary's path, or "-" when there is no BOLT or the rewrite failed.
bolt_build() {
	local name=$1 in=$2 out=$WORK/bolt-bin/$1
	if [ "$have_bolt" = 1 ] &&
		"$BOLT" "$in" -instrument -o "$out" "-instrumentation-file=$WORK/runs/$name.bolt.fdata" \
			"-runtime-instrumentation-lib=$BOLT_RT" >"$out.log" 2>&1 && [ -x "$out" ]; then
		echo "$out"
	else
		[ "$have_bolt" = 1 ] && log "$name: llvm-bolt -instrument failed: $(tail -1 "$out.log")"
		echo -
	fi
}

# --- programs -----------------------------------------------------------------------------
# add_prog NAME GROUP GCOV-BINARY|- BOLT-BINARY|- ARGV...: registers a program (argv[0] a
# private copy).
add_prog() {
	local name=$1 group=$2 gcov=$3 bolt=$4
	shift 4
	(IFS=$'\t'; echo "$name"$'\t'"$group"$'\t'"$gcov"$'\t'"$bolt"$'\t'"$*") >>"$PROGS"
}
for p in "${TEST_PROGRAMS[@]}"; do
	src=tests/programs/$p.c
	rounds=${TEST_ROUNDS[$p]:-}
	if [ -z "$rounds" ] || [ ! -e "$src" ] ||
		! gcc -O2 -g -o "$WORK/bin/$p" "$src" 2>"$WORK/bin/$p.log"; then
		log "$p: missing, without a rounds count here, or does not build"
		add_prog "$p" missing - -
		continue
	fi
	rounds=$(awk -v r="$rounds" -v s="$TEST_SCALE" 'BEGIN { printf "%d", r * s + 0.5 }')
	gc=-
	if gcc -O2 -g -fprofile-arcs -o "$WORK/gcov-bin/$p" "$src" 2>>"$WORK/bin/$p.log"; then
		gc=$WORK/gcov-bin/$p
	fi
	bo=-
	if [ "$have_bolt" = 1 ]; then
		if gcc -O2 -g -Wl,--emit-relocs -o "$WORK/relocs-bin/$p" "$src" 2>>"$WORK/bin/$p.log"; then
			bo=$(bolt_build "$p" "$WORK/relocs-bin/$p")
		else
			log "$p: the --emit-relocs build failed (see $WORK/bin/$p.log)"
		fi
	fi
	add_prog "$p" test "$gc" "$bo" "$WORK/bin/$p" "$rounds"
done

corpus_ok=0
gcov_corpus=0
relocs_corpus=0
if [ ${#CORPUS[@]} -gt 0 ]; then
	# shellcheck source=bench/corpus-env.sh
	source bench/corpus-env.sh && corpus_ok=1
fi
if [ "$corpus_ok" = 1 ]; then
	if scripts/corpus.sh --quiet --gcov >"$WORK/corpus-gcov.log" 2>&1; then
		gcov_corpus=1
	else
		log "the corpus's gcov builds failed: $(tail -1 "$WORK/corpus-gcov.log")"
	fi
	if [ "$have_bolt" = 1 ]; then
		if scripts/corpus.sh --quiet --relocs >"$WORK/corpus-relocs.log" 2>&1; then
			relocs_corpus=1
		else
			log "the corpus's --emit-relocs builds failed: $(tail -1 "$WORK/corpus-relocs.log")"
		fi
	fi
	for c in "${CORPUS[@]}"; do
		if ! corpus_workload "$c" "$CORPUS_KIND" >/dev/null || [ ! -x "$CORPUS_WL_BIN" ]; then
			log "$c: corpus binary or workload missing"
			add_prog "$c" missing - -
			continue
		fi
		b=$(basename "$CORPUS_WL_BIN")
		cp "$CORPUS_WL_BIN" "$WORK/bin/$c"
		gc=-
		if [ "$gcov_corpus" = 1 ] && [ -x "corpus/gcov/bin/$b" ]; then
			cp "corpus/gcov/bin/$b" "$WORK/gcov-bin/$c"
			gc=$WORK/gcov-bin/$c
		fi
		bo=-
		if [ "$relocs_corpus" = 1 ] && [ -x "corpus/relocs/bin/$b" ]; then
			cp "corpus/relocs/bin/$b" "$WORK/relocs-bin/$c"
			bo=$(bolt_build "$c" "$WORK/relocs-bin/$c")
		fi
		add_prog "$c" corpus "$gc" "$bo" "$WORK/bin/$c" "${CORPUS_WL_CMD[@]:1}"
	done
else
	for c in "${CORPUS[@]}"; do add_prog "$c" missing - -; done
fi

VALGRIND=${VALGRIND:-valgrind}
have_valgrind=0
command -v "$VALGRIND" >/dev/null && have_valgrind=1

# --- running ------------------------------------------------------------------------------
# timed PROGRAM COLUMN REP LIMIT CMD...: runs CMD (stdin /dev/null, stdout and stderr to
# files under runs/), stopped after LIMIT s with SIGTERM (edgeprof forwards it to the program
# and writes what it has) then SIGKILL 30 s later; appends a line to times.tsv (status
# timeout when stopped, failed when killed by another signal).
timed() {
	local prog=$1 col=$2 rep=$3 limit=$4 t0 t1 rc=0 status=ok
	shift 4
	local base=$WORK/runs/$prog.$col.$rep
	t0=$(date +%s%N)
	timeout -k 30 "$limit" "$@" </dev/null >"$base.out" 2>"$base.err" || rc=$?
	t1=$(date +%s%N)
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		status=timeout
	elif [ "$rc" -gt 128 ]; then
		# Killed by signal rc - 128 (no workload here dies of one): its time is not the
		# program's. Seen: valgrind's guest hitting the int3 of another session's uprobe in
		# libc (SIGTRAP in longjmp), since edgeprof run attaches for every process.
		status=failed
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$prog" "$col" "$rep" \
		"$(awk -v n=$((t1 - t0)) 'BEGIN { printf "%.4f", n / 1e9 }')" "$status" "$rc" >>"$TIMES"
	log "$prog $col #$rep: $(tail -1 "$TIMES" | cut -f4) s ($status, rc $rc)"
}
last_ok() { [ "$(tail -1 "$TIMES" | cut -f5)" = ok ]; }

while IFS=$'\t' read -r -a row; do
	prog=${row[0]} group=${row[1]} gcov=${row[2]} bolt=${row[3]}
	[ "$group" = missing ] && continue
	cmd=("${row[@]:4}")
	# Warm-up, untimed: page cache, and the native output the others are compared with.
	"${cmd[@]}" </dev/null >"$WORK/runs/$prog.native.ref" 2>/dev/null || true
	# ... and edgeprof's decode and analysis caches: every timed edgeprof run is a later run
	# of the binary (the cold column is a first one: EDGEPROF_NO_DECODE_CACHE=1).
	"${EP_ENV[@]}" "$EP" -q run -o "$WORK/runs/$prog.warmup.prof" -- "${cmd[@]}" </dev/null \
		>/dev/null 2>&1 || true
	rounds=$((REPS > REPS_SLOW ? REPS : REPS_SLOW))
	declare -A dead=()
	for ((i = 1; i <= rounds; i++)); do
		((i <= REPS)) && timed "$prog" native "$i" 600 "${cmd[@]}"
		if ((i <= REPS_SLOW)) && [ -z "${dead[edgeprof]:-}" ]; then
			timed "$prog" edgeprof "$i" "$EDGEPROF_TIMEOUT" "${EP_ENV[@]}" "$EP" -q run \
				-o "$WORK/runs/$prog.edgeprof.$i.prof" -- "${cmd[@]}"
			last_ok || dead[edgeprof]=1
		fi
		if ((i <= REPS_SLOW)) && [ -z "${dead[cold]:-}" ]; then
			timed "$prog" cold "$i" "$EDGEPROF_TIMEOUT" "${EP_ENV[@]}" env EDGEPROF_NO_DECODE_CACHE=1 \
				"$EP" -q run -o "$WORK/runs/$prog.cold.$i.prof" -- "${cmd[@]}"
			last_ok || dead[cold]=1
		fi
		if ((i <= REPS_SLOW)) && [ "$have_probes" = 1 ] && [ -z "${dead[uprobe]:-}" ]; then
			timed "$prog" uprobe "$i" "$UPROBE_TIMEOUT" "${EP_ENV[@]}" "$EP" -q run \
				--probes uprobe -o "$WORK/runs/$prog.uprobe.$i.prof" -- "${cmd[@]}"
			last_ok || dead[uprobe]=1
		fi
		if ((i <= REPS_SLOW)) && [ "$have_valgrind" = 1 ] && [ -z "${dead[callgrind]:-}" ]; then
			timed "$prog" callgrind "$i" "$CALLGRIND_TIMEOUT" "$VALGRIND" --tool=callgrind \
				"--callgrind-out-file=$WORK/runs/$prog.callgrind.$i.cg" "${cmd[@]}"
			last_ok || dead[callgrind]=1
			rm -f "$WORK/runs/$prog.callgrind.$i.cg"
		fi
		if ((i <= REPS)) && [ "$gcov" != - ]; then
			# A fresh .gcda tree per run: no merging with an earlier run's counts.
			rm -rf -- "${WORK:?}/gcda/${prog:?}"
			timed "$prog" gcov "$i" 600 env "GCOV_PREFIX=$WORK/gcda/$prog" "$gcov" "${cmd[@]:1}"
		fi
		if ((i <= REPS)) && [ "$bolt" != - ]; then
			# The runtime writes runs/NAME.bolt.fdata at exit: kept per run (the first one
			# whole, the others as their line count; no file is 0 lines).
			fd=$WORK/runs/$prog.bolt.fdata
			rm -f -- "$fd"
			timed "$prog" bolt "$i" 600 "$bolt" "${cmd[@]:1}"
			if [ -f "$fd" ]; then
				wc -l <"$fd" | tr -d ' ' >"$WORK/runs/$prog.bolt.$i.fdata-lines"
				if ((i == 1)); then mv -f -- "$fd" "$WORK/runs/$prog.bolt.1.fdata"; else rm -f -- "$fd"; fi
			else
				echo 0 >"$WORK/runs/$prog.bolt.$i.fdata-lines"
			fi
		fi
		if ((i <= REPS_SLOW)) && [ -z "${dead[naive]:-}" ]; then
			timed "$prog" naive "$i" "$NAIVE_TIMEOUT" "${EP_ENV[@]}" "$EP" -q run \
				--placement naive -o "$WORK/runs/$prog.naive.$i.prof" -- "${cmd[@]}"
			last_ok || dead[naive]=1
		fi
	done
	unset dead
	# The placements priced on the first edgeprof profile's true counts.
	f=$WORK/runs/$prog.edgeprof.1.prof
	if [ -s "$f" ]; then
		"$EP" -q compare --json "$f" >"$f.compare.json" 2>"$f.compare.err" ||
			{ log "$prog: edgeprof compare failed: $(tail -1 "$f.compare.err")"; rm -f "$f.compare.json"; }
	fi
	gcda=$(find "$WORK/gcda/$prog" -name '*.gcda' 2>/dev/null | wc -l)
	echo "$gcda" >"$WORK/runs/$prog.gcov.gcda-files"
done <"$PROGS"

# --- figures ------------------------------------------------------------------------------
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
export WORK OUT REPS REPS_SLOW CORPUS_KIND EDGEPROF_TIMEOUT UPROBE_TIMEOUT CALLGRIND_TIMEOUT \
	NAIVE_TIMEOUT TEST_SCALE
M_NPROC=$(nproc) M_KERNEL=$(uname -r) M_CPU=${cpu:-unknown} M_DATE=$(date -u '+%Y-%m-%d %H:%M UTC')
M_MEM=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
M_OS=$(sed -n 's/^PRETTY_NAME="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' /etc/os-release 2>/dev/null || true)
M_OS=${M_OS:-unknown OS}
M_COMMIT=$commit M_LOAD_START=$load_start M_OTHERS=$others
M_VALGRIND=$( ((have_valgrind)) && "$VALGRIND" --version || echo missing)
M_GCC=$(gcc -dumpfullversion 2>/dev/null || echo unknown)
M_LIBBPF=$(dpkg-query -W -f '${Version}' libbpf1 2>/dev/null || echo unknown)
M_LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
if [ ${#EP_ENV[@]} -gt 0 ]; then
	M_CALIB="measured by edgeprof calibrate for this run"
elif [ -s "$user_costs" ]; then
	M_CALIB="the user's saved calibration ($user_costs)"
else
	M_CALIB="built-in defaults (calibration failed)"
fi
export M_NPROC M_KERNEL M_CPU M_DATE M_MEM M_OS M_COMMIT M_LOAD_START M_OTHERS M_VALGRIND M_GCC \
	M_LIBBPF M_LOAD_END M_CALIB M_PROBES_OPTION M_BOLT
exec python3 bench/bench_report.py
