#!/usr/bin/env bash
# Runs the other benchmarks (bench/*-*.sh: CFG recovery speed, --loop-stats overhead) in
# turn; each writes its bench/results-*.md. `make bench-extra` calls this after building
# (`make bench` runs the main suite, bench/bench.sh). Exits non-zero if any benchmark failed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
status=0
for b in bench/*-*.sh; do
	[ -e "$b" ] || continue
	echo "== $b"
	if ! "$b"; then
		echo "bench: $b failed" >&2
		status=1
	fi
done
exit $status
