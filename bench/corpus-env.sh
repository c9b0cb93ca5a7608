# shellcheck shell=bash
# The real-program corpus for benchmark scripts: SOURCE this file (bash), do not run it.
#   source bench/corpus-env.sh        (builds the corpus with scripts/corpus.sh if needed)
# It does not set shell options (it would change the sourcing shell's); it works under
# `set -euo pipefail`. After sourcing:
#   CORPUS_LUA CORPUS_BZIP2 CORPUS_SQLITE3   exported paths of the corpus binaries
#   CORPUS_WORKLOADS                          (lua5.4 bzip2 bzip2-d sqlite3)
#   CORPUS_BENCH_lua5_4 CORPUS_BENCH_bzip2 CORPUS_BENCH_bzip2_d CORPUS_BENCH_sqlite3
#                                             argv arrays of the "bench" workloads, e.g.
#                                             "${CORPUS_BENCH_bzip2[@]}" </dev/null >/dev/null
#   corpus_bench_cmd NAME                     sets CORPUS_WL_CMD (argv array) and CORPUS_WL_BIN
#                                             to the bench workload NAME
#   corpus_bench_run NAME                     runs it natively, stdin </dev/null, stdout discarded
#   corpus_workload NAME check|bench          the same for either size (scripts/workloads/workloads.sh)
# Run every workload with stdin from /dev/null and stdout to /dev/null (or a file): these are
# exactly the commands scripts/check-corpus.sh runs under callgrind, at the "bench" size
# (about 1 s of CPU natively each). Inputs are generated once under build/corpus/inputs/.

# shellcheck source=scripts/workloads/workloads.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/scripts/workloads/workloads.sh"

if ! "$CORPUS_ROOT/scripts/corpus.sh" --quiet >/dev/null; then
	echo "corpus-env: building the corpus failed (scripts/corpus.sh)" >&2
	return 1
fi
export CORPUS_LUA CORPUS_BZIP2 CORPUS_SQLITE3

corpus_bench_cmd() { corpus_workload "${1:?corpus_bench_cmd NAME}" bench; }
corpus_bench_run() { corpus_run "${1:?corpus_bench_run NAME}" bench; }

# Pre-computed argv arrays (this also generates the bench inputs now, a few seconds once).
for _corpus_n in "${CORPUS_WORKLOADS[@]}"; do
	if ! corpus_workload "$_corpus_n" bench; then
		echo "corpus-env: preparing the $_corpus_n bench workload failed" >&2
		unset _corpus_n
		return 1
	fi
	_corpus_v=CORPUS_BENCH_${_corpus_n//[.-]/_}
	declare -ga "$_corpus_v"
	eval "$_corpus_v=(\"\${CORPUS_WL_CMD[@]}\")"
done
unset _corpus_n _corpus_v
