#!/usr/bin/env bash
# The analysis cache (user/session/analysis_cache.c): what a session makes of a binary before
# any process exists (CFGs, longjmp pseudo-edges, patch windows, the settled plan) kept across
# runs in $XDG_CACHE_HOME/edgeprof/analysis/, named by the hash of the binary's bytes and of
# the options the analysis depends on. tests/programs/example.c built with gcc -O2, profiled
# with `edgeprof run` under a cache directory of its own:
#   - a first run keeps the analysis (one file, named by 32 hex digits); a second one reads
#     it back (no CFG is built: no decoding is read or kept) and keeps nothing; the two
#     profiles are the same (everything but the run's timings: CFGs, sites, mechanisms,
#     counts) and the second one's counts equal callgrind's (build/tests/count_oracle);
#   - another placement (--placement naive) or mechanism (--probes uprobe) keeps a file of
#     its own, and its second run reads it back with the same profile again;
#   - --only (a selection the key does not hold) neither reads nor writes;
#   - a file with one payload byte changed, cut short, or stamped by another edgeprof build
#     is not used (-vv says why), the profile is the same again, and the file is written anew;
#   - EDGEPROF_NO_ANALYSIS_CACHE=1 neither reads nor writes it (the decode cache is still
#     kept), EDGEPROF_NO_DECODE_CACHE=1 neither;
#   - at most 32 files stay: with 40 older ones there, saving one more drops the oldest.
# Needs root (skips otherwise) and BPF: skips when BPF is unavailable (CI=true turns the skip
# into a failure). Exit 0 pass, 77 skip, else fail.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/support/bpf-checks.sh
source tests/support/bpf-checks.sh
# shellcheck source=tests/support/checks.sh
source tests/support/checks.sh
# shellcheck source=tests/support/cache-files.sh
source tests/support/cache-files.sh
cache_test_setup
export XDG_CACHE_HOME=$tmp/cache EDGEPROF_NO_CALIBRATE=1 # default site costs: the same key each run
dir=$XDG_CACHE_HOME/edgeprof/analysis

# same A B: the profiles of runs A and B are equal but for the run's timings.
same() { same_profiles "$tmp/p$1.data" "$tmp/p$2.data"; }

files() { cache_files "$dir"; }
kept() { grep -q "analysis ([0-9]* bytes) kept in" "$tmp/log$1"; }
read_back() { grep -q "analysis from '$dir/" "$tmp/log$1"; }

prof 1 || exit 1
if [ "$(files)" = 1 ] && kept 1; then
	ok "a first run keeps the analysis: $(ls -s "$dir" | tail -n 1)"
else
	bad "a first run keeps no analysis ($(files) files): $(grep -i analysis "$tmp/log1")"
fi
cache=$(find "$dir" -maxdepth 1 -type f | head -n 1)

prof 2 || exit 1
if read_back 2 && ! kept 2 && ! grep -q 'decoded instructions' "$tmp/log2"; then
	ok "a second run reads it back, builds no CFG and keeps nothing"
else
	bad "a second run does not read it back: $(grep -i 'analysis\|decoded' "$tmp/log2")"
fi
same 1 2 && ok "the two profiles are the same" || bad "the profiles of a cold and a warm run differ"
warm_counts 2

# Other options, other files: each kept once, then read back with the same profile.
n=3
for opt in "--placement naive" "--probes uprobe"; do
	before=$(files)
	# shellcheck disable=SC2086
	prof $n -- $opt || exit 1
	# shellcheck disable=SC2086
	prof $((n + 1)) -- $opt || exit 1
	if [ "$(files)" = $((before + 1)) ] && kept $n && read_back $((n + 1)) && same $n $((n + 1)); then
		ok "$opt keeps a file of its own and reads it back, the same profile"
	else
		bad "$opt: $(files) files (were $before), $(grep -h 'analysis' "$tmp/log$n" "$tmp/log$((n + 1))")"
	fi
	n=$((n + 2))
done

before=$(files)
prof $n -- --only 'main' || exit 1
if [ "$(files)" = "$before" ] && ! kept $n && ! read_back $n; then
	ok "--only neither reads nor writes"
else
	bad "--only used the cache: $(grep -i analysis "$tmp/log$n")"
fi
n=$((n + 1))

# spoil HOW: changes the first kept file (damaged: a payload byte; truncated: the last 8
# bytes gone; tool: a byte of the build ID in the header).
check_spoiled $n file kept read_back

XDG_CACHE_HOME=$tmp/off prof $n EDGEPROF_NO_ANALYSIS_CACHE=1 || exit 1
if [ ! -e "$tmp/off/edgeprof/analysis" ] && [ -d "$tmp/off/edgeprof/decode" ] &&
	! grep -q "analysis from '\|analysis ([0-9]* bytes) kept" "$tmp/log$n"; then
	ok "EDGEPROF_NO_ANALYSIS_CACHE=1 neither reads nor writes it (the decoding is kept)"
else
	bad "EDGEPROF_NO_ANALYSIS_CACHE=1 still used the cache: $(ls "$tmp/off/edgeprof")"
fi
n=$((n + 1))
XDG_CACHE_HOME=$tmp/off2 prof $n EDGEPROF_NO_DECODE_CACHE=1 || exit 1
if [ ! -e "$tmp/off2/edgeprof/analysis" ] && [ ! -e "$tmp/off2/edgeprof/decode" ]; then
	ok "EDGEPROF_NO_DECODE_CACHE=1 neither reads nor writes either cache"
else
	bad "EDGEPROF_NO_DECODE_CACHE=1 still used a cache: $(ls "$tmp/off2/edgeprof")"
fi
n=$((n + 1))

check_eviction $n 32 40
checks_summary analysis-cache
