#!/usr/bin/env bash
# `make example`: builds the bundled example program (tests/programs/example.c, a word
# frequency counter) with gcc -O2 -g into build/example/, profiles it with `edgeprof run` on
# edgeprof's own README as input, and prints the report; then shows the recovered CFG of one
# function. Needs root (BPF uprobes).
set -euo pipefail
cd "$(dirname "$0")/.."
EDGEPROF=${EDGEPROF:-build/edgeprof}
BIN=build/example/example
DATA=build/example/example.data

mkdir -p build/example
gcc -O2 -g -o "$BIN" tests/programs/example.c

run() {
	echo
	echo "\$ $*"
	"$@"
}

echo
echo "\$ $EDGEPROF run -o $DATA -- $BIN README.md > build/example/output.txt"
"$EDGEPROF" run -o "$DATA" -- "$BIN" README.md > build/example/output.txt
echo "(the program's output is in build/example/output.txt)"
run "$EDGEPROF" report --top 10 "$DATA"
run "$EDGEPROF" cfg "$BIN" classify
echo
echo "Try also: $EDGEPROF report --json $DATA | python3 -m json.tool | less"
echo "          $EDGEPROF cfg $BIN main --dot | dot -Tsvg > main.svg"
