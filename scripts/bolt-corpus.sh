#!/usr/bin/env bash
# `make check-bolt`: edgeprof's BOLT fdata on the corpus (lua5.4, bzip2, sqlite3 built from
# Debian sources by scripts/corpus.sh --relocs, -O2 -g -Wl,--emit-relocs), against BOLT's own:
# 1. Each program's check workload runs once as a binary instrumented by llvm-bolt -instrument
#    -conservative-instrumentation (BOLT's exact counts) and once under `edgeprof run`; the
#    two fdata files are compared record for record (tests/support/fdata_compare.py: equal
#    counts on every common record, every other record of an explained kind). Those two runs
#    are made without address randomisation (setarch -R); five more runs of each with it
#    tell the functions whose counts depend on data addresses, and an edgeprof run of the same
#    code linked at 0x800000 (scripts/corpus.sh --moved), where BOLT's instrumented binary
#    runs its code, those whose counts depend on code addresses (lua5.4: its string table);
#    their records are not compared.
# 2. llvm-bolt optimises the program twice, with the same options (block and function
#    reordering, splitting), from edgeprof's fdata and from BOLT's own; the bench workload then
#    runs RUNS times (default 5) on the original and on both optimised binaries, interleaved;
#    their outputs must equal the original's, and the medians are written to
#    bench/results-bolt.md (OUT=...).
# Needs root, BPF, bolt-19 and libbolt-19-dev. Exit 0 when every check passed.
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
BOLT=/usr/lib/llvm-19/bin/llvm-bolt
EDGEPROF=$ROOT/build/edgeprof
RUNS=${RUNS:-5}
OUT=${OUT:-bench/results-bolt.md}
WORK=${BOLT_WORK:-$ROOT/build/bolt-corpus}
PROGRAMS=(${CORPUS_PROGRAMS:-lua5.4 bzip2 sqlite3})
OPTS=(-reorder-blocks=ext-tsp -reorder-functions=hfsort -split-functions -split-all-cold
	-dyno-stats)

[ -x "$BOLT" ] || { echo "check-bolt: $BOLT missing (apt-get install bolt-19 libbolt-19-dev)"; exit 1; }
[ -x "$EDGEPROF" ] || { echo "check-bolt: $EDGEPROF not built"; exit 1; }
scripts/corpus.sh --quiet --relocs --moved >/dev/null ||
	{ echo "check-bolt: scripts/corpus.sh --relocs --moved failed"; exit 1; }
# shellcheck source=scripts/workloads/workloads.sh
source scripts/workloads/workloads.sh
rm -rf "$WORK"
mkdir -p "$WORK"
fails=0
rows=()

median() { sort -g | awk '{a[NR]=$1} END{print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# timed OUTFILE CMD...: runs CMD, its stdout hashed into OUTFILE; prints the wall seconds.
timed() {
	local out=$1 s e
	shift
	s=$(date +%s.%N)
	"$@" 2>/dev/null | sha256sum >"$out"
	e=$(date +%s.%N)
	echo "$e - $s" | bc
}

for p in "${PROGRAMS[@]}"; do
	d=$WORK/$p
	mkdir -p "$d"
	cp "corpus/relocs/bin/$p" "$d/prog"
	corpus_workload "$p" check || { echo "check-bolt: $p: no workload"; fails=$((fails + 1)); continue; }
	check=("${CORPUS_WL_CMD[@]:1}")
	corpus_workload "$p" bench || { echo "check-bolt: $p: no workload"; fails=$((fails + 1)); continue; }
	bench=("${CORPUS_WL_CMD[@]:1}")
	# The instrumented binary's path as long as the original's: lua5.4's counts depend on
	# stack addresses, which the path (argv[0], AT_EXECFN) moves.
	(cd "$d" && "$BOLT" prog -instrument -conservative-instrumentation \
		-instrumentation-file="$d/bolt.fdata" -o inst >bolt-inst.log 2>&1) ||
		{ echo "check-bolt: $p: llvm-bolt -instrument failed"; fails=$((fails + 1)); continue; }
	"$BOLT" "$d/prog" -o "$d/prog.cfg" -print-cfg >"$d/cfg.txt" 2>&1
	objdump -d --no-show-raw-insn -w "$d/prog" >"$d/dis.txt"
	rm -f "$d/bolt.fdata"
	# Both without address randomisation (setarch -R): lua5.4's counts depend on addresses.
	setarch -R "$d/inst" "${check[@]}" 2>/dev/null | sha256sum >"$d/inst.sum"
	setarch -R "$EDGEPROF" -q run -o "$d/p.data" -- "$d/prog" "${check[@]}" 2>"$d/run.err" | sha256sum >"$d/ep.sum"
	"$d/prog" "${check[@]}" 2>/dev/null | sha256sum >"$d/native.sum"
	if ! cmp -s "$d/native.sum" "$d/inst.sum" || ! cmp -s "$d/native.sum" "$d/ep.sum"; then
		echo "check-bolt: $p: check workload output differs from the native run's"
		fails=$((fails + 1))
	fi
	"$EDGEPROF" export --format bolt -o "$d/ep.fdata" "$d/p.data" 2>"$d/export.err"
	# More runs, with address randomisation, tell which functions do not run the same way
	# with other addresses (as the instrumented binary's are).
	# (The instrumented binary always writes $d/bolt.fdata: the first run's waits aside.)
	mv "$d/bolt.fdata" "$d/bolt1.fdata"
	for k in 2 3 4 5 6; do
		"$EDGEPROF" -q run -o "$d/p$k.data" -- "$d/prog" "${check[@]}" >/dev/null 2>>"$d/run.err"
		"$EDGEPROF" export --format bolt -o "$d/ep$k.fdata" "$d/p$k.data" 2>>"$d/export.err"
		"$d/inst" "${check[@]}" >/dev/null 2>&1
		mv "$d/bolt.fdata" "$d/bolt$k.fdata"
	done
	mv "$d/bolt1.fdata" "$d/bolt.fdata"
	# The same code with its text at 0x800000 (where BOLT's instrumented binary runs its
	# code), profiled the same way: functions whose counts depend on code addresses.
	cp "corpus/moved/bin/$p" "$d/movd"
	setarch -R "$EDGEPROF" -q run -o "$d/p7.data" -- "$d/movd" "${check[@]}" >/dev/null 2>>"$d/run.err"
	"$EDGEPROF" export --format bolt -o "$d/ep7.fdata" "$d/p7.data" 2>>"$d/export.err"
	moved=$("$EDGEPROF" report --json "$d/p7.data" | python3 -c '
import json, subprocess, sys
a = json.load(sys.stdin)
b = json.loads(subprocess.run([sys.argv[1], "report", "--json", sys.argv[2]],
                              capture_output=True, text=True).stdout)
key = lambda d: {f["name"]: [x["count"] for x in f.get("blocks", [])] for f in d["functions"]}
ka, kb = key(a), key(b)
print(sum(1 for n in ka if n in kb and ka[n] != kb[n]), "of", len(ka), "functions differ")
' "$EDGEPROF" "$d/p.data")
	unstable=$(for k in 2 3 4 5 6; do "$EDGEPROF" diff "$d/p.data" "$d/p$k.data" | head -n 1 | sed 's/.*: //;s/ differ, / and /'; done | sort | uniq -c | sed 's/^ *\([0-9]*\) /\1x /' | paste -sd ';' -)
	if python3 tests/support/fdata_compare.py "$d" >"$d/cmp.txt" 2>&1; then
		cmpline="$(head -n 1 "$d/cmp.txt"); 5 more edgeprof runs with other addresses against the first: $unstable; the code at 0x800000: $moved"
		echo "check-bolt: $p: fdata: $cmpline"
	else
		cmpline="FAIL: $(head -n 1 "$d/cmp.txt")"
		echo "check-bolt: $p: fdata FAIL: $(head -n 8 "$d/cmp.txt")"
		fails=$((fails + 1))
	fi
	nbolt=$(wc -l <"$d/bolt.fdata")
	nep=$(wc -l <"$d/ep.fdata")
	# 2. Optimised from each profile.
	for who in ep bolt; do
		if ! "$BOLT" "$d/prog" -o "$d/prog.$who" -data="$d/$who.fdata" "${OPTS[@]}" \
			>"$d/opt-$who.log" 2>&1; then
			echo "check-bolt: $p: llvm-bolt -data=$who.fdata failed: $(tail -n 2 "$d/opt-$who.log")"
			fails=$((fails + 1))
		fi
	done
	[ -x "$d/prog.ep" ] && [ -x "$d/prog.bolt" ] || continue
	: >"$d/t.native"
	: >"$d/t.ep"
	: >"$d/t.bolt"
	same=yes
	for _ in $(seq "$RUNS"); do
		for who in native ep bolt; do
			bin=$d/prog.$who
			[ "$who" = native ] && bin=$d/prog
			timed "$d/b.$who.sum" "$bin" "${bench[@]}" >>"$d/t.$who"
			cmp -s "$d/b.native.sum" "$d/b.$who.sum" || same=no
		done
	done
	[ "$same" = yes ] || { echo "check-bolt: $p: an optimised binary's output differs"; fails=$((fails + 1)); }
	tn=$(median <"$d/t.native")
	te=$(median <"$d/t.ep")
	tb=$(median <"$d/t.bolt")
	stale_ep=$(grep -c 'stale' "$d/opt-ep.log")
	prof_ep=$(grep -m1 -o '[0-9]* out of [0-9]* functions in the binary ([0-9.]*%) have non-empty execution profile' "$d/opt-ep.log")
	prof_bolt=$(grep -m1 -o '[0-9]* out of [0-9]* functions in the binary ([0-9.]*%) have non-empty execution profile' "$d/opt-bolt.log")
	echo "check-bolt: $p: bench medians native $tn s, BOLT from edgeprof's fdata $te s, from BOLT's own $tb s (outputs same: $same)"
	rows+=("| $p | $nep | $nbolt | $cmpline | $tn | $te | $tb | $(echo "scale=3; $tn / $te" | bc) | $(echo "scale=3; $tn / $tb" | bc) | $same | $prof_ep / $prof_bolt |")
done

{
	echo "# BOLT from edgeprof's profiles (\`make check-bolt\`, scripts/bolt-corpus.sh)"
	echo
	echo "Generated on $(date -u '+%Y-%m-%d %H:%M UTC') at commit $(git rev-parse --short HEAD); $(nproc) vCPUs, load average at the end $(cut -d' ' -f1-3 /proc/loadavg)."
	echo "llvm-bolt: $("$BOLT" --version 2>/dev/null | grep -m1 -o 'LLVM version [0-9.]*')."
	echo
	echo "Training: each program's check workload, once instrumented by \`llvm-bolt -instrument"
	echo "-conservative-instrumentation\` (BOLT's exact counts) and once under \`edgeprof run\` on"
	echo "the uninstrumented binary, exported with \`edgeprof export --format bolt\`. Records are"
	echo "compared as sets (tests/support/fdata_compare.py). Then \`llvm-bolt -data=FDATA"
	echo "${OPTS[*]}\` from each profile; the bench workload timed $RUNS times on each binary,"
	echo "interleaved, medians of wall seconds; speedup = native / optimised."
	echo
	echo "| program | edgeprof records | BOLT records | comparison | native s | BOLT(edgeprof) s | BOLT(own) s | speedup (edgeprof) | speedup (own) | outputs same | profiled functions (edgeprof / own) |"
	echo "|---|---:|---:|---|---:|---:|---:|---:|---:|---|---|"
	printf '%s\n' "${rows[@]}"
	echo
	echo "## Records neither equal nor explained"
	echo
	for p in "${PROGRAMS[@]}"; do
		n=$(tail -n +2 "$WORK/$p/cmp.txt" 2>/dev/null | wc -l)
		echo "- $p: $n"
		tail -n +2 "$WORK/$p/cmp.txt" 2>/dev/null | sed 's/^/  - /'
	done
} >"$OUT"
echo "check-bolt: wrote $OUT; $fails failure(s)"
[ "$fails" = 0 ]
