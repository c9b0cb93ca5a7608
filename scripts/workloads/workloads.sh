# shellcheck shell=bash disable=SC2034
# Definitions of the corpus workloads, shared by scripts/check-corpus.sh (the "check" sizes, run
# under callgrind) and bench/corpus-env.sh (the "bench" sizes, run natively), so that both run
# exactly the same commands. A bash library meant to be SOURCED (it does not set shell options
# itself, so as not to change the sourcing shell's; it works under `set -euo pipefail`).
#
#   corpus_workload NAME KIND   NAME in "${CORPUS_WORKLOADS[@]}", KIND check|bench.
#       Generates the workload's input under build/corpus/inputs/ if missing or stale, and sets
#       CORPUS_WL_BIN (the corpus binary), CORPUS_WL_CMD (argv array, [0] is the binary) and
#       CORPUS_WL_INPUTS (array of the input files the command reads).
#   corpus_run NAME KIND        runs the workload natively, stdout discarded.
# Every workload is run with stdin from /dev/null and stdout sent to /dev/null (or a file);
# its stdout is deterministic and the same natively and under valgrind.
# Determinism: no clock, pid, random or address dependent control flow in any workload; the
# environment variables that change what the programs do (BZIP2, BZIP, LUA_INIT*) are unset
# when this file is sourced. Absolute paths appear in argv (lua hashes its script name), so
# compare counts only between runs of the same checkout.

CORPUS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CORPUS_BIN_DIR=$CORPUS_ROOT/corpus/bin
CORPUS_WORKLOAD_DIR=$CORPUS_ROOT/scripts/workloads
CORPUS_INPUT_DIR=$CORPUS_ROOT/build/corpus/inputs
CORPUS_LUA=$CORPUS_BIN_DIR/lua5.4
CORPUS_BZIP2=$CORPUS_BIN_DIR/bzip2
CORPUS_SQLITE3=$CORPUS_BIN_DIR/sqlite3
# bzip2 has two workloads: compression and decompression exercise different code.
CORPUS_WORKLOADS=(lua5.4 bzip2 bzip2-d sqlite3)
# Sizes. check: ~5-20 s under callgrind --dump-instr=yes --collect-jumps=yes; bench: ~0.5-2 s
# native, the low end (bench/bench.sh runs each under edgeprof, ~500x slower); bzip2 compresses
# 20 MiB, the smallest file the benchmark issue allows. Measured (seconds, 2-core x86-64 VM,
# 2026-11-21):
#            check native  check callgrind  bench native
#   lua5.4       0.13           8.7             0.51
#   bzip2        0.21           6.9             1.89
#   bzip2-d      0.35           6.7             0.99
#   sqlite3      0.17          10.4             0.48
declare -gA CORPUS_SIZE=(
	[lua5.4.check]=25 [lua5.4.bench]=100        # workload.lua SIZE
	[bzip2.check]=2048 [bzip2.bench]=20480      # KiB of generated input to compress
	[bzip2-d.check]=12288 [bzip2-d.bench]=32768 # KiB of generated input, compressed, to decompress
	[sqlite3.check]=30 [sqlite3.bench]=70       # gen-sqlite-sql.py SIZE (1000 * SIZE orders)
)
unset BZIP2 BZIP LUA_INIT LUA_INIT_5_4 LUA_PATH LUA_PATH_5_4 LUA_CPATH LUA_CPATH_5_4

# _corpus_fresh OUT SRC...: true if OUT exists and is newer than every SRC.
_corpus_fresh() {
	local out=$1 s
	shift
	[ -s "$out" ] || return 1
	for s in "$@"; do [ "$out" -nt "$s" ] || return 1; done
}

# Inputs are written to a temporary name and renamed, so a killed run leaves no half file.
_corpus_bzip2_input() { # KIB -> prints the path of the generated file
	local kib=$1 gen=$CORPUS_INPUT_DIR/gen-bzip2-input src=$CORPUS_WORKLOAD_DIR/gen-bzip2-input.c
	local out=$CORPUS_INPUT_DIR/bzip2-input-${kib}k.bin tag=$BASHPID
	mkdir -p "$CORPUS_INPUT_DIR"
	if ! _corpus_fresh "$gen" "$src"; then
		gcc -O2 -Wall -o "$gen.tmp.$tag" "$src" || return 1
		mv -f "$gen.tmp.$tag" "$gen"
	fi
	if ! _corpus_fresh "$out" "$gen"; then
		"$gen" "$kib" >"$out.tmp.$tag" || return 1
		mv -f "$out.tmp.$tag" "$out"
	fi
	echo "$out"
}

corpus_workload() {
	local name=${1:?corpus_workload NAME check|bench} kind=${2:?corpus_workload NAME check|bench}
	local size=${CORPUS_SIZE[$name.$kind]:-}
	if [ -z "$size" ]; then
		echo "corpus_workload: unknown workload '$name' or kind '$kind'" >&2
		return 2
	fi
	# A per-process suffix for temporary files ($BASHPID, read here: in a redirection it
	# would be expanded in the forked child).
	local in tag=$BASHPID
	case "$name" in
	lua5.4)
		CORPUS_WL_BIN=$CORPUS_LUA
		CORPUS_WL_INPUTS=("$CORPUS_WORKLOAD_DIR/workload.lua")
		CORPUS_WL_CMD=("$CORPUS_LUA" "$CORPUS_WORKLOAD_DIR/workload.lua" "$size")
		;;
	bzip2)
		in=$(_corpus_bzip2_input "$size") || return 1
		CORPUS_WL_BIN=$CORPUS_BZIP2
		CORPUS_WL_INPUTS=("$in")
		CORPUS_WL_CMD=("$CORPUS_BZIP2" -9 -c "$in")
		;;
	bzip2-d)
		in=$(_corpus_bzip2_input "$size") || return 1
		# Compressed by the corpus bzip2 itself (bzip2's output is deterministic).
		if ! _corpus_fresh "$in.bz2" "$in" "$CORPUS_BZIP2"; then
			"$CORPUS_BZIP2" -9 -c "$in" >"$in.bz2.tmp.$tag" || return 1
			mv -f "$in.bz2.tmp.$tag" "$in.bz2"
		fi
		CORPUS_WL_BIN=$CORPUS_BZIP2
		CORPUS_WL_INPUTS=("$in.bz2")
		CORPUS_WL_CMD=("$CORPUS_BZIP2" -d -c "$in.bz2")
		;;
	sqlite3)
		in=$CORPUS_INPUT_DIR/sqlite-$size.sql
		mkdir -p "$CORPUS_INPUT_DIR"
		if ! _corpus_fresh "$in" "$CORPUS_WORKLOAD_DIR/gen-sqlite-sql.py"; then
			python3 "$CORPUS_WORKLOAD_DIR/gen-sqlite-sql.py" "$size" >"$in.tmp.$tag" || return 1
			mv -f "$in.tmp.$tag" "$in"
		fi
		CORPUS_WL_BIN=$CORPUS_SQLITE3
		CORPUS_WL_INPUTS=("$in")
		# -init /dev/null: never read ~/.sqliterc; -bail: stop at the first error (exit 1).
		CORPUS_WL_CMD=("$CORPUS_SQLITE3" -batch -bail -init /dev/null :memory: ".read $in")
		;;
	*)
		echo "corpus_workload: unknown workload '$name'" >&2
		return 2
		;;
	esac
}

corpus_run() {
	corpus_workload "$1" "$2" || return
	"${CORPUS_WL_CMD[@]}" </dev/null >/dev/null
}
