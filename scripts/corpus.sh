#!/usr/bin/env bash
# Fetches and builds the real-program corpus: lua5.4, bzip2 and sqlite3 from their Debian 12
# source packages (`apt-get source`, into corpus/src/), each built with `gcc -O2 -g` (PIE, the
# Debian gcc default) into ONE binary holding all of its code (objects linked directly, no
# shared library): corpus/bin/lua5.4, corpus/bin/bzip2, corpus/bin/sqlite3.
# --gcov: then also builds gcov variants of the same sources, by the same recipes plus
# -fprofile-arcs (compile and link): corpus/gcov/bin/{lua5.4,bzip2,sqlite3}, objects in
# corpus/gcov/obj/NAME/. A gcov binary writes its .gcda files next to those objects (absolute
# paths compiled in), so runs should set GCOV_PREFIX (and GCOV_PREFIX_STRIP) to redirect them.
# --relocs: then also builds the same sources by the same recipes, linked with
# -Wl,--emit-relocs (the input llvm-bolt -instrument needs; bench/bench.sh's bolt column):
# corpus/relocs/bin/{lua5.4,bzip2,sqlite3}, objects in corpus/relocs/obj/NAME/.
# Idempotent: sources already fetched are reused and a binary whose build recipe is unchanged
# is not rebuilt. See /work/shared/design/corpus-notes.md for why the flags are what they are.
# --moved: then also builds the --relocs variant's code with its text at 0x800000
#   (-Wl,-Ttext-segment=0x800000): the same code at other addresses, for make check-bolt
#   (whose BOLT-instrumented binaries run their code at 0x800000): corpus/moved/bin/NAME.
# --coverage: then also builds lua5.4 and bzip2 by the same recipes plus --coverage (compile and
#   link: .gcno notes next to the objects, for gcov -b; scripts/coverage-corpus.sh) into the
#   checkout's build/coverage/: bin/{lua5.4,bzip2}, objects in obj/NAME/.
#   usage: scripts/corpus.sh [--quiet] [--gcov] [--relocs] [--moved] [--coverage]
# On failure: one line "corpus: error: ..." on stderr and a non-zero exit.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CORPUS=$ROOT/corpus
SRC=$CORPUS/src
OBJ=$CORPUS/obj
BIN=$CORPUS/bin
CC=${CORPUS_CC:-gcc}
# Bump when a recipe below changes in a way that the stamp strings do not capture.
RECIPE_VERSION=1

QUIET=0
GCOV=0
RELOCS=0
MOVED=0
COVERAGE=0
for arg in "$@"; do
	case "$arg" in
	--quiet | -q) QUIET=1 ;;
	--gcov) GCOV=1 ;;
	--relocs) RELOCS=1 ;;
	--moved) MOVED=1 ;;
	--coverage) COVERAGE=1 ;;
	-h | --help)
		sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "corpus: error: unknown argument '$arg' (usage: scripts/corpus.sh [--quiet] [--gcov] [--relocs] [--moved] [--coverage])" >&2
		exit 2
		;;
	esac
done

log() { if [ "$QUIET" = 0 ]; then echo "corpus: $*"; fi; }
die() {
	echo "corpus: error: $*" >&2
	exit 1
}

for tool in "$CC" apt-get dpkg-source tclsh; do
	command -v "$tool" >/dev/null 2>&1 || die "'$tool' not found (run 'make deps' as root)"
done

mkdir -p "$SRC" "$OBJ" "$BIN"

# variant normal|gcov|relocs: selects the output variant that the build_* functions below build.
#   VOBJ, VBIN: where objects (NAME/ subdirectories, with the stamp) and binaries go;
#   VFLAGS: extra gcc flags, added to every compile and link of the variant's recipe;
#   VKEY: appended to the recipe key in the stamp (empty for the normal builds);
#   VDESC: prefix of the variant's names in messages.
# The normal variant's recipes, keys and paths are the plain ones (corpus/obj, corpus/bin).
variant() {
	case "$1" in
	normal)
		VOBJ=$OBJ VBIN=$BIN VFLAGS=() VKEY='' VDESC=''
		;;
	gcov)
		VOBJ=$CORPUS/gcov/obj VBIN=$CORPUS/gcov/bin VFLAGS=(-fprofile-arcs) VDESC='gcov '
		VKEY=" gcov ${VFLAGS[*]}"
		;;
	relocs)
		# A linker flag only (gcc ignores it when it only compiles): the same code as the
		# normal build, plus the relocations BOLT needs to rewrite it.
		VOBJ=$CORPUS/relocs/obj VBIN=$CORPUS/relocs/bin VFLAGS=(-Wl,--emit-relocs) VDESC='relocs '
		VKEY=" relocs ${VFLAGS[*]}"
		;;
	moved)
		# The relocs variant's code, its text segment at another address.
		VOBJ=$CORPUS/moved/obj VBIN=$CORPUS/moved/bin VDESC='moved '
		VFLAGS=(-Wl,--emit-relocs -Wl,-Ttext-segment=0x800000)
		VKEY=" moved ${VFLAGS[*]}"
		;;
	coverage)
		# In the checkout's build/, not in the corpus: only scripts/coverage-corpus.sh uses it.
		VOBJ=$ROOT/build/coverage/obj VBIN=$ROOT/build/coverage/bin VFLAGS=(--coverage)
		VDESC='coverage ' VKEY=" coverage ${VFLAGS[*]}"
		;;
	*) die "unknown variant '$1'" ;;
	esac
	mkdir -p "$VOBJ" "$VBIN"
}

# fetch PKG: sets SRCDIR to the unpacked, patched source tree of Debian source package PKG.
# A marker file records a completed `apt-get source` so an interrupted one is redone.
fetch() {
	local pkg=$1 marker=$SRC/.$1.fetched dir
	if [ -f "$marker" ]; then
		dir=$SRC/$(cat "$marker")
		if [ -d "$dir/debian" ]; then
			SRCDIR=$dir
			return 0
		fi
	fi
	log "fetching Debian source package $pkg"
	local flog=$OBJ/fetch-$pkg.log
	rm -rf "${SRC:?}/$pkg"-[0-9]*/
	if ! (cd "$SRC" && apt-get source "$pkg") >"$flog" 2>&1; then
		# Usually stale or missing Sources lists: update once and retry.
		{ apt-get update && (cd "$SRC" && apt-get source "$pkg"); } >>"$flog" 2>&1 ||
			die "apt-get source $pkg failed (see $flog; deb-src entries come from scripts/install-deps.sh)"
	fi
	# The directory apt-get made: PKG-UPSTREAMVERSION.
	dir=$(cd "$SRC" && find . -maxdepth 1 -type d -name "$pkg-[0-9]*" | sort | head -n 1)
	dir=${dir#./}
	{ [ -n "$dir" ] && [ -d "$SRC/$dir/debian" ]; } || die "apt-get source $pkg made no source tree in $SRC (see $flog)"
	echo "$dir" >"$marker"
	SRCDIR=$SRC/$dir
}

# debversion SRCDIR: the Debian version of an unpacked source tree (from debian/changelog).
debversion() {
	local v
	v=$(sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' "$1/debian/changelog")
	[ -n "$v" ] || die "no version in $1/debian/changelog"
	echo "$v"
}

# up_to_date NAME KEY: true if the variant's bin/NAME exists and was built by the recipe KEY.
up_to_date() {
	[ -x "$VBIN/$1" ] && [ -f "$VOBJ/$1/stamp" ] && [ "$(cat "$VOBJ/$1/stamp")" = "$2" ]
}

# run NAME LOG CMD...: runs CMD with output appended to LOG; dies with one line on failure.
run() {
	local name=$1 blog=$2
	shift 2
	echo "+ $*" >>"$blog"
	"$@" >>"$blog" 2>&1 || die "building $name failed: '$1' exited non-zero (see $blog)"
}

# finish NAME KEY BUILT: installs the freshly linked binary (in the variant's bin/) and records
# its recipe.
finish() {
	mv -f "$3" "$VBIN/$1"
	printf '%s' "$2" >"$VOBJ/$1/stamp"
	log "built $VBIN/$1"
}

# --- lua5.4 ----------------------------------------------------------------------------------
# All of src/*.c except luac.c (lua.c holds main); LUA_USE_LINUX as Debian's "linux" target but
# without readline. luai_makeseed and l_randomizePivot are pinned so that string hashes and
# table.sort pivots do not depend on time or addresses. Not PIE: luaS_new caches C strings
# by their address (point2uint(str) % STRCACHE_N), so with a randomised (or valgrind's) load
# address its cache hits, hence its counts, would differ from run to run and from callgrind.
LUA_CFLAGS=(-O2 -g -std=gnu99 -Wall -fno-pie -DLUA_COMPAT_5_3 -DLUA_USE_LINUX
	"-Dluai_makeseed(L)=0" "-Dl_randomizePivot()=(~0u)")
LUA_LIBS=(-no-pie -lm -ldl)
build_lua() {
	fetch lua5.4
	local s=$SRCDIR o=$VOBJ/lua5.4 n=${VDESC}lua5.4
	local ver key
	ver=$(debversion "$s")
	key="v$RECIPE_VERSION lua5.4 $ver $CC ${LUA_CFLAGS[*]} ${LUA_LIBS[*]}$VKEY"
	if up_to_date lua5.4 "$key"; then
		log "$n up to date ($VBIN/lua5.4)"
		return 0
	fi
	log "building $n $ver"
	rm -rf "$o" && mkdir -p "$o"
	local blog=$o/build.log
	# debian/rules generates this header (the multiarch triplet for module paths).
	printf '#ifndef _LUA_DEB_MULTIARCH_\n#define _LUA_DEB_MULTIARCH_\n#define DEB_HOST_MULTIARCH "%s"\n#endif\n' \
		"$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)" >"$o/lua5.4-deb-multiarch.h"
	local f objs=()
	for f in "$s"/src/*.c; do
		case "$(basename "$f")" in luac.c) continue ;; esac
		run "$n" "$blog" "$CC" "${LUA_CFLAGS[@]}" "${VFLAGS[@]}" -I"$o" -I"$s/src" -c "$f" -o "$o/$(basename "${f%.c}").o"
		objs+=("$o/$(basename "${f%.c}").o")
	done
	run "$n" "$blog" "$CC" -O2 -g "${VFLAGS[@]}" "${objs[@]}" -o "$o/lua5.4" "${LUA_LIBS[@]}"
	finish lua5.4 "$key" "$o/lua5.4"
}

# --- bzip2 -----------------------------------------------------------------------------------
# The library and the command line tool compiled together, as the upstream Makefile's bzip2
# target does (Debian's links bzip2 against libbz2.so instead).
BZ_CFLAGS=(-O2 -g -Wall -Winline -D_FILE_OFFSET_BITS=64)
BZ_SRCS=(blocksort huffman crctable randtable compress decompress bzlib bzip2)
build_bzip2() {
	fetch bzip2
	local s=$SRCDIR o=$VOBJ/bzip2 n=${VDESC}bzip2
	local ver key
	ver=$(debversion "$s")
	key="v$RECIPE_VERSION bzip2 $ver $CC ${BZ_CFLAGS[*]} ${BZ_SRCS[*]}$VKEY"
	if up_to_date bzip2 "$key"; then
		log "$n up to date ($VBIN/bzip2)"
		return 0
	fi
	log "building $n $ver"
	rm -rf "$o" && mkdir -p "$o"
	local blog=$o/build.log f objs=()
	for f in "${BZ_SRCS[@]}"; do
		run "$n" "$blog" "$CC" "${BZ_CFLAGS[@]}" "${VFLAGS[@]}" -I"$s" -c "$s/$f.c" -o "$o/$f.o"
		objs+=("$o/$f.o")
	done
	run "$n" "$blog" "$CC" -O2 -g "${VFLAGS[@]}" "${objs[@]}" -o "$o/bzip2"
	finish bzip2 "$key" "$o/bzip2"
}

# --- sqlite3 ---------------------------------------------------------------------------------
# The Debian source package holds the canonical source tree (src/*.c, parse.y, tool/*.tcl), not
# the amalgamation. Its own configure + make generate the amalgamation sqlite3.c and the shell's
# shell.c (this needs tclsh, and lemon/mkkeywordhash built with the host gcc); those two files
# are then compiled with Debian's feature options (debian/rules CFLAGS), except that
# SQLITE_THREADSAFE=0: the shell is single threaded and the mutex layer only adds indirect calls.
# The amalgamation is generated once, in corpus/obj/sqlite3/gen, by the normal build; the gcov
# variant compiles those same two files (it regenerates them there only if they are missing).
SQ_CONFIGURE=(--enable-fts4 --enable-fts5 --enable-json --disable-tcl --disable-readline
	--disable-editline)
SQ_CFLAGS=(-O2 -g -fno-strict-aliasing -DSQLITE_THREADSAFE=0
	-DSQLITE_SECURE_DELETE -DSQLITE_ENABLE_COLUMN_METADATA
	-DSQLITE_ENABLE_FTS3 -DSQLITE_ENABLE_FTS3_PARENTHESIS -DSQLITE_ENABLE_FTS4 -DSQLITE_ENABLE_FTS5
	-DSQLITE_ENABLE_RTREE=1 -DSQLITE_SOUNDEX=1 -DSQLITE_ENABLE_UNLOCK_NOTIFY
	-DSQLITE_OMIT_LOOKASIDE=1 -DSQLITE_ENABLE_DBSTAT_VTAB -DSQLITE_ALLOW_ROWID_IN_VIEW
	-DSQLITE_ENABLE_UPDATE_DELETE_LIMIT=1 -DSQLITE_ENABLE_LOAD_EXTENSION -DSQLITE_ENABLE_JSON1
	-DSQLITE_LIKE_DOESNT_MATCH_BLOBS -DSQLITE_ENABLE_FTS3_TOKENIZER=1 -DSQLITE_USE_URI=1
	-DSQLITE_MAX_SCHEMA_RETRY=25 -DSQLITE_ENABLE_PREUPDATE_HOOK -DSQLITE_ENABLE_SESSION
	-DSQLITE_ENABLE_STMTVTAB -DSQLITE_MAX_VARIABLE_NUMBER=250000)
SQ_LIBS=(-ldl -lm)
build_sqlite3() {
	fetch sqlite3
	local s=$SRCDIR o=$VOBJ/sqlite3 n=${VDESC}sqlite3 gen=$OBJ/sqlite3/gen
	local ver key
	ver=$(debversion "$s")
	key="v$RECIPE_VERSION sqlite3 $ver $CC ${SQ_CONFIGURE[*]} ${SQ_CFLAGS[*]} ${SQ_LIBS[*]}$VKEY"
	if up_to_date sqlite3 "$key"; then
		log "$n up to date ($VBIN/sqlite3)"
		return 0
	fi
	local blog=$o/build.log
	if [ "$o" = "$OBJ/sqlite3" ]; then
		log "building $n $ver (generating the amalgamation, then ~40 s of gcc)"
		rm -rf "$o" && mkdir -p "$gen"
	else
		log "building $n $ver (compiling the amalgamation of $gen)"
		rm -rf "$o" && mkdir -p "$o"
	fi
	if ! { [ -s "$gen/sqlite3.c" ] && [ -s "$gen/shell.c" ]; }; then
		rm -rf "$gen" && mkdir -p "$gen"
		# Out-of-tree configure so that the fetched tree stays pristine.
		run "$n" "$blog" env -C "$gen" "$s/configure" "${SQ_CONFIGURE[@]}"
		run "$n" "$blog" make -C "$gen" sqlite3.c shell.c
		{ [ -s "$gen/sqlite3.c" ] && [ -s "$gen/shell.c" ]; } || die "building $n failed: no sqlite3.c/shell.c generated (see $blog)"
	fi
	run "$n" "$blog" "$CC" "${SQ_CFLAGS[@]}" "${VFLAGS[@]}" -I"$gen" -c "$gen/sqlite3.c" -o "$o/sqlite3.o"
	run "$n" "$blog" "$CC" "${SQ_CFLAGS[@]}" "${VFLAGS[@]}" -I"$gen" -c "$gen/shell.c" -o "$o/shell.o"
	run "$n" "$blog" "$CC" -O2 -g "${VFLAGS[@]}" "$o/shell.o" "$o/sqlite3.o" -o "$o/sqlite3" "${SQ_LIBS[@]}"
	finish sqlite3 "$key" "$o/sqlite3"
}

# check_runs DIR: dies unless DIR/lua5.4, DIR/bzip2 and DIR/sqlite3 run.
# A binary that cannot run is a failed build, whatever gcc said.
check_runs() {
	local d=$1
	echo 'os.exit(0)' | "$d/lua5.4" - || die "$d/lua5.4 does not run"
	echo x | "$d/bzip2" -c | "$d/bzip2" -dc >/dev/null || die "$d/bzip2 does not run"
	"$d/sqlite3" -batch -init /dev/null :memory: 'select 1;' >/dev/null 2>&1 || die "$d/sqlite3 does not run"
}

variant normal
build_lua
build_bzip2
build_sqlite3
check_runs "$BIN"
echo "corpus: binaries: $BIN/lua5.4 $BIN/bzip2 $BIN/sqlite3"

if [ "$GCOV" = 1 ]; then
	variant gcov
	build_lua
	build_bzip2
	build_sqlite3
	# Each gcov binary must run and write .gcda files, here under a temporary GCOV_PREFIX (so
	# none lands in corpus/gcov/obj): proof that it is instrumented.
	GCOV_TMP=$(mktemp -d "${TMPDIR:-/tmp}/corpus-gcov.XXXXXX")
	trap 'rm -rf "$GCOV_TMP"' EXIT
	export GCOV_PREFIX=$GCOV_TMP GCOV_PREFIX_STRIP=0
	check_runs "$VBIN"
	for name in lua5.4 bzip2 sqlite3; do
		# Under GCOV_PREFIX the path compiled in (wherever the corpus was built) follows.
		[ -n "$(find "$GCOV_TMP" -path "*/gcov/obj/$name/*.gcda" -print -quit)" ] ||
			die "$VBIN/$name wrote no .gcda file (is it built with -fprofile-arcs?)"
	done
	unset GCOV_PREFIX GCOV_PREFIX_STRIP
	rm -rf "$GCOV_TMP"
	trap - EXIT
	echo "corpus: gcov binaries: $VBIN/lua5.4 $VBIN/bzip2 $VBIN/sqlite3"
fi

if [ "$RELOCS" = 1 ]; then
	variant relocs
	build_lua
	build_bzip2
	build_sqlite3
	check_runs "$VBIN"
	for name in lua5.4 bzip2 sqlite3; do
		# Not "readelf | grep -q": grep exits at the first match and, under pipefail,
		# readelf's SIGPIPE fails the test.
		[[ $(readelf -S "$VBIN/$name") == *.rela.text* ]] ||
			die "$VBIN/$name has no .rela.text (is it linked with --emit-relocs?)"
	done
	echo "corpus: --emit-relocs binaries: $VBIN/lua5.4 $VBIN/bzip2 $VBIN/sqlite3"
fi

if [ "$MOVED" = 1 ]; then
	variant moved
	build_lua
	build_bzip2
	build_sqlite3
	check_runs "$VBIN"
	echo "corpus: binaries with their text at 0x800000: $VBIN/lua5.4 $VBIN/bzip2 $VBIN/sqlite3"
fi

if [ "$COVERAGE" = 1 ]; then
	variant coverage
	build_lua
	build_bzip2
	echo "corpus: --coverage binaries: $VBIN/lua5.4 $VBIN/bzip2"
fi
