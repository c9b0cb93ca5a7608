#!/usr/bin/env bash
# The decode cache (user/session/decode_cache.c): the decoding of a binary kept across runs in
# $XDG_CACHE_HOME/edgeprof/decode/, named by the hash of the binary's bytes.
# tests/programs/example.c built with gcc -O2, profiled with `edgeprof run` under a cache
# directory of its own (EDGEPROF_NO_ANALYSIS_CACHE=1: the analysis is made each time):
#   - a first run keeps the decoding (one file, named by 32 hex digits); a second one
#     preloads it and keeps nothing; the two profiles are the same (everything but the run's
#     timings) and the second one's counts equal callgrind's (build/tests/count_oracle);
#   - a cache file with one payload byte changed, cut short, or stamped by another edgeprof
#     build (the header's build ID changed) is not used (-vv says why), the profile is the
#     same again, and the file is written anew;
#   - EDGEPROF_NO_DECODE_CACHE=1 neither reads nor writes (no decode directory made);
#   - at most 64 files stay: with 70 older ones there, saving one more drops the oldest.
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
# Default site costs: the same placement each run; the decoding only (the analysis cache,
# which a second run would read instead, has its test: tests/analysis-cache.sh).
export XDG_CACHE_HOME=$tmp/cache EDGEPROF_NO_CALIBRATE=1 EDGEPROF_NO_ANALYSIS_CACHE=1
dir=$XDG_CACHE_HOME/edgeprof/decode

# same A B: the profiles of runs A and B are equal but for the run's timings.
same() { same_profiles "$tmp/p$1.data" "$tmp/p$2.data"; }

files() { cache_files "$dir"; }

prof 1 || exit 1
if [ "$(files)" = 1 ] && grep -q 'decoded instructions kept in' "$tmp/log1"; then
	ok "a first run keeps the decoding: $(ls -s "$dir" | tail -n 1)"
else
	bad "a first run keeps no decoding ($(files) files): $(grep -i decod "$tmp/log1")"
fi
cache=$(find "$dir" -maxdepth 1 -type f | head -n 1)

prof 2 || exit 1
if grep -q 'decoded instructions from' "$tmp/log2" && ! grep -q 'kept in' "$tmp/log2"; then
	ok "a second run preloads it and keeps nothing: $(grep -o '[0-9]* decoded instructions from' "$tmp/log2")"
else
	bad "a second run does not preload: $(grep -i decod "$tmp/log2")"
fi
same 1 2 && ok "the two profiles are the same" || bad "the profiles of a cold and a warm run differ"
warm_counts 2

kept() { grep -q 'kept in' "$tmp/log$1"; }
check_spoiled 3 "cache file" kept false

XDG_CACHE_HOME=$tmp/off prof $n EDGEPROF_NO_DECODE_CACHE=1 || exit 1
if [ ! -e "$tmp/off/edgeprof/decode" ] && ! grep -qi 'decoded instructions' "$tmp/log$n"; then
	ok "EDGEPROF_NO_DECODE_CACHE=1 neither reads nor writes"
else
	bad "EDGEPROF_NO_DECODE_CACHE=1 still used the cache"
fi
n=$((n + 1))

check_eviction $n 64 70
checks_summary decode-cache
