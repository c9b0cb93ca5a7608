#!/usr/bin/env bash
# Bad input must fail cleanly: for each broken file or command line, `edgeprof` must exit
# non-zero without a signal (status 1..127), print nothing on stdout and exactly one line on
# stderr that starts with "edgeprof: " and names the problem. Files: text, empty, truncated
# ELFs, 32-bit, non-x86, relocatable object, corrupt section headers, a directory, a missing
# file; command lines: none, unknown command/option, bad combinations.
# Exit 0 pass, 77 skip, anything else fail.
set -u
cd "$(dirname "$0")/.." || exit 1
EDGEPROF=${EDGEPROF:-build/edgeprof}

fails=0
checks=0
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
[ -x "$EDGEPROF" ] || { echo "FAIL: $EDGEPROF not built (run make)"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A real x86-64 binary to damage: one we build, else /bin/true.
REAL=$tmp/real
if ! { command -v gcc >/dev/null &&
	printf 'int main(void) { return 0; }\n' >"$tmp/real.c" &&
	gcc -O2 -o "$REAL" "$tmp/real.c" 2>/dev/null; }; then
	cp /bin/true "$REAL" || { echo "SKIP: no x86-64 binary to damage"; exit 77; }
fi

# expect_fail NAME REGEX ARGS...: edgeprof ARGS must fail as described above, with a
# stderr line matching the extended regex REGEX (case-insensitive).
expect_fail() {
	local name=$1 re=$2 rc nlines
	shift 2
	checks=$((checks + 1))
	"$EDGEPROF" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	nlines=$(wc -l <"$tmp/err")
	local why=""
	if [ "$rc" = 0 ]; then
		why="exit status 0"
	elif [ "$rc" -ge 128 ]; then
		why="killed by a signal (exit $rc)"
	elif [ -s "$tmp/out" ]; then
		why="wrote to stdout: $(head -c 200 "$tmp/out")"
	elif [ "$nlines" != 1 ]; then
		why="$nlines lines on stderr: $(head -c 300 "$tmp/err")"
	elif ! grep -q '^edgeprof: ' "$tmp/err"; then
		why="stderr line lacks the 'edgeprof: ' prefix: $(cat "$tmp/err")"
	elif ! grep -qiE "$re" "$tmp/err"; then
		why="stderr does not match /$re/: $(cat "$tmp/err")"
	fi
	if [ -n "$why" ]; then
		echo "FAIL: $name (edgeprof $*): $why"
		fails=$((fails + 1))
	else
		echo "ok: $name: $(cat "$tmp/err")"
	fi
}

# patch FILE OFFSET FORMAT VALUE: writes VALUE packed with struct FORMAT ('<H', '<Q'...) at
# OFFSET of FILE, in place.
patch() {
	python3 - "$@" <<'PY'
import struct, sys
path, off, fmt, val = sys.argv[1], int(sys.argv[2], 0), sys.argv[3], int(sys.argv[4], 0)
with open(path, 'r+b') as fh:
    fh.seek(off)
    fh.write(struct.pack(fmt, val))
PY
}

# --- files that are not x86-64 ELF executables ---
printf 'hello, this is not an ELF file\n' >"$tmp/text"
expect_fail text-file 'not an ELF' cfg "$tmp/text"

: >"$tmp/empty"
expect_fail empty-file 'empty|not an ELF' cfg "$tmp/empty"

head -c 100 "$REAL" >"$tmp/trunc100"
expect_fail truncated-100 'truncat|corrupt' cfg "$tmp/trunc100"

head -c 2000 "$REAL" >"$tmp/trunc2000"
expect_fail truncated-2000 'truncat|corrupt|past the end' cfg "$tmp/trunc2000"

head -c 10 "$REAL" >"$tmp/trunc10"
expect_fail truncated-10 'truncat|not an ELF' cfg "$tmp/trunc10"

cp "$REAL" "$tmp/class32"
patch "$tmp/class32" 4 '<B' 1 # e_ident[EI_CLASS] = ELFCLASS32
expect_fail elfclass32 '32-bit|64-bit' cfg "$tmp/class32"

if printf 'int main(void) { return 0; }\n' >"$tmp/m32.c" &&
	gcc -m32 -o "$tmp/m32" "$tmp/m32.c" 2>/dev/null; then
	expect_fail real-32-bit '32-bit|64-bit' cfg "$tmp/m32"
else
	echo "note: gcc -m32 does not work here; only the patched 32-bit header is tested"
fi

cp "$REAL" "$tmp/aarch64"
patch "$tmp/aarch64" 0x12 '<H' 183 # e_machine = EM_AARCH64
expect_fail machine-aarch64 'machine|x86-64' cfg "$tmp/aarch64"

if command -v gcc >/dev/null && gcc -c -o "$tmp/obj.o" "$tmp/real.c" 2>/dev/null; then
	expect_fail relocatable-object 'not an executable|type' cfg "$tmp/obj.o"
fi

cp "$REAL" "$tmp/shoff"
patch "$tmp/shoff" 0x28 '<Q' $(($(stat -c %s "$REAL") + 4096)) # e_shoff past the end
expect_fail shoff-past-end 'section|truncat|corrupt' cfg "$tmp/shoff"

cp "$REAL" "$tmp/shnum"
patch "$tmp/shnum" 0x3c '<H' 0xfff0 # e_shnum huge
expect_fail shnum-huge 'section|truncat|corrupt' cfg "$tmp/shnum"

cp "$REAL" "$tmp/shstrndx"
patch "$tmp/shstrndx" 0x3e '<H' 0xfeff # e_shstrndx out of range
expect_fail shstrndx-out-of-range 'string table|section|corrupt' cfg "$tmp/shstrndx"

cp "$REAL" "$tmp/phoff"
patch "$tmp/phoff" 0x20 '<Q' 0x7fffffff0 # e_phoff past the end
expect_fail phoff-past-end 'program header|truncat|corrupt' cfg "$tmp/phoff"

mkdir "$tmp/dir"
expect_fail directory 'not a regular file|directory' cfg "$tmp/dir"

expect_fail missing-file 'no such file' cfg "$tmp/does-not-exist"

# --- command lines ---
expect_fail no-arguments 'no command' 
expect_fail cfg-no-arguments 'missing BINARY' cfg
expect_fail unknown-option "unknown option '--bogus'.*edgeprof cfg --help" cfg --bogus "$REAL"
expect_fail unknown-global-option "unknown option '--bogus'" --bogus cfg "$REAL"
expect_fail unknown-command "unknown command 'frobnicate'" frobnicate
expect_fail help-unknown-command "unknown command 'frobnicate'" help frobnicate
expect_fail dot-without-function 'needs a FUNCTION' cfg "$REAL" --dot
expect_fail too-many-arguments "unexpected argument 'extra'" cfg "$REAL" main extra
expect_fail no-such-function "no function 'no_such_function_here'" cfg "$REAL" no_such_function_here
expect_fail no-such-address "no function '0x1'" cfg "$REAL" 0x1

# Usage errors exit 2, input errors 1.
"$EDGEPROF" cfg --bogus >/dev/null 2>&1
[ $? = 2 ] || { echo "FAIL: unknown option does not exit 2"; fails=$((fails + 1)); }
"$EDGEPROF" cfg "$tmp/text" >/dev/null 2>&1
[ $? = 1 ] || { echo "FAIL: a non-ELF file does not exit 1"; fails=$((fails + 1)); }

if [ "$fails" != 0 ]; then
	echo "bad-input: $fails of $checks case(s) failed"
	exit 1
fi
echo "bad-input: all $checks cases ok"
exit 0
