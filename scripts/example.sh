#!/usr/bin/env bash
# `make example`: builds the bundled example program (tests/programs/example.c, a word
# frequency counter) with gcc -O2 -g into build/example/ and shows what edgeprof recovers
# from it: the function table, then main and classify (a switch compiled to a jump table)
# in detail.
set -euo pipefail
cd "$(dirname "$0")/.."
EDGEPROF=${EDGEPROF:-build/edgeprof}
BIN=build/example/example

mkdir -p build/example
gcc -O2 -g -o "$BIN" tests/programs/example.c

run() {
	echo
	echo "\$ $*"
	"$@"
}

run "$EDGEPROF" cfg "$BIN"
run "$EDGEPROF" cfg "$BIN" main
run "$EDGEPROF" cfg "$BIN" classify
echo
echo "Try also: $EDGEPROF cfg $BIN insert --dot | dot -Tsvg > insert.svg"
echo "          $EDGEPROF cfg $BIN --json | python3 -m json.tool | less"
