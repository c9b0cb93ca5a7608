#!/usr/bin/env bash
# Issue 18, acceptance 3: clang sample PGO from an edgeprof profile, measured on lua5.4 (`make
# check-pgo`; slow, not part of make test). lua5.4 from its Debian 12 sources (corpus/src, as
# scripts/corpus.sh fetches them; the same recipe: -O2 -g -std=gnu99 -fno-pie -DLUA_COMPAT_5_3
# -DLUA_USE_LINUX, pinned string seed and sort pivot, -no-pie -lm -ldl) is built with
# clang-19 five ways into build/pgo/:
#   plain      -O2 -g                                      the baseline
#   afdo       -O2 -g -fdebug-info-for-profiling            the same code, with discriminators
#   sample     afdo + -fprofile-sample-use=<edgeprof run of afdo, export --format llvm-sample>
#   sample-g   plain + -fprofile-sample-use=<the same from a profile of plain (no discriminators)>
#   instr      -O2 -g -fprofile-instr-use=<llvm-profdata merge of a -fprofile-instr-generate run>
# Both profiles come from the same training run, `workload.lua TRAIN` (scripts/workloads/
# workload.lua, default TRAIN 25, the corpus "check" size); the timed runs are `workload.lua
# SIZE` (default 100, the "bench" size), REPS (default 5) interleaved rounds of every binary,
# the order rotated each round, stdout compared with the plain build's; wall and CPU time
# (user + system, from wait4). Writes the table, the commands and the medians to RESULTS (default
# build/pgo/results.md) and prints it.
#   usage: scripts/pgo-lua.sh [RESULTS]      (env: REPS, SIZE, TRAIN, EDGEPROF, CLANG;
#                                             REUSE=1 times the binaries of an earlier run)
# Needs root (edgeprof run), clang-19 and llvm-19 (llvm-profdata-19).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$ROOT/build/pgo
RESULTS=${1:-$OUT/results.md}
REPS=${REPS:-5}
SIZE=${SIZE:-100}
TRAIN=${TRAIN:-25}
CLANG=${CLANG:-clang-19}
PROFDATA=${PROFDATA:-llvm-profdata-19}
EDGEPROF=${EDGEPROF:-$ROOT/build/edgeprof}
WORKLOAD=$ROOT/scripts/workloads/workload.lua

die() {
	echo "pgo-lua: error: $*" >&2
	exit 1
}
for c in "$CLANG" "$PROFDATA" python3; do
	command -v "$c" >/dev/null || die "'$c' not found (apt-get install clang-19 llvm-19)"
done
[ -x "$EDGEPROF" ] || die "$EDGEPROF not built (run make)"
[ "$(id -u)" = 0 ] || die "edgeprof run needs root"
marker=$ROOT/corpus/src/.lua5.4.fetched
[ -f "$marker" ] || die "no lua5.4 sources in corpus/src (run scripts/corpus.sh)"
SRCDIR=$ROOT/corpus/src/$(cat "$marker")
[ -d "$SRCDIR/src" ] || die "$SRCDIR/src missing (run scripts/corpus.sh)"

LUA_CFLAGS=(-O2 -g -std=gnu99 -Wall -fno-pie -DLUA_COMPAT_5_3 -DLUA_USE_LINUX
	"-Dluai_makeseed(L)=0" "-Dl_randomizePivot()=(~0u)")
LUA_LIBS=(-no-pie -lm -ldl)
mkdir -p "$OUT"
unset LUA_INIT LUA_INIT_5_4 LUA_PATH LUA_PATH_5_4 LUA_CPATH LUA_CPATH_5_4

# build NAME EXTRA_FLAGS...: lua5.4 into $OUT/NAME/lua5.4 (EXTRA_FLAGS on compile and link).
build() {
	local name=$1 o=$OUT/$1 f objs=()
	shift
	rm -rf "$o" && mkdir -p "$o"
	printf '#ifndef _LUA_DEB_MULTIARCH_\n#define _LUA_DEB_MULTIARCH_\n#define DEB_HOST_MULTIARCH "x86_64-linux-gnu"\n#endif\n' \
		>"$o/lua5.4-deb-multiarch.h"
	echo "$CLANG ${LUA_CFLAGS[*]} $* -c src/*.c (but luac.c); link ${LUA_LIBS[*]}" >"$o/recipe"
	for f in "$SRCDIR"/src/*.c; do
		case "$(basename "$f")" in luac.c) continue ;; esac
		"$CLANG" "${LUA_CFLAGS[@]}" "$@" -I"$o" -I"$SRCDIR/src" -c "$f" \
			-o "$o/$(basename "${f%.c}").o" 2>>"$o/build.log" ||
			die "building $name: $(tail -n 3 "$o/build.log")"
		objs+=("$o/$(basename "${f%.c}").o")
	done
	"$CLANG" -O2 -g "$@" "${objs[@]}" -o "$o/lua5.4" "${LUA_LIBS[@]}" 2>>"$o/build.log" ||
		die "linking $name: $(tail -n 3 "$o/build.log")"
	echo "pgo-lua: built $o/lua5.4 ($*)" >&2
}

train() { "$1" "$WORKLOAD" "$TRAIN" </dev/null; }

if [ "${REUSE:-0}" = 1 ] && [ -x "$OUT/instr/lua5.4" ]; then
	echo "pgo-lua: REUSE=1: timing the binaries built before" >&2
else
	build plain
	build afdo -fdebug-info-for-profiling

	# edgeprof profiles of the training run, exported as sample profiles.
	for v in plain afdo; do
		want=$(train "$OUT/plain/lua5.4")
		got=$("$EDGEPROF" -q run -o "$OUT/$v/train.data" -- "$OUT/$v/lua5.4" "$WORKLOAD" "$TRAIN" </dev/null)
		[ "$got" = "$want" ] || die "$v: the profiled run printed '$got', not '$want'"
		"$EDGEPROF" -v export --format llvm-sample -o "$OUT/$v/lua.prof" "$OUT/$v/train.data" \
			2>"$OUT/$v/export.log" || die "export: $(cat "$OUT/$v/export.log")"
		"$PROFDATA" show --sample "$OUT/$v/lua.prof" >"$OUT/$v/show.txt" ||
			die "llvm-profdata rejects $OUT/$v/lua.prof"
	done
	# The coverage options only warn, per function, how many of its profile's records and
	# samples the compiler matched to its code (101: for every function).
	COVERAGE=(-mllvm -sample-profile-check-record-coverage=101
		-mllvm -sample-profile-check-sample-coverage=101)
	build sample -fdebug-info-for-profiling -fprofile-sample-use="$OUT/afdo/lua.prof" "${COVERAGE[@]}"
	build sample-g -fprofile-sample-use="$OUT/plain/lua.prof" "${COVERAGE[@]}"

	# clang's instrumentation PGO from the same training run.
	build instr-gen -fprofile-instr-generate
	rm -f "$OUT"/instr-gen/*.profraw
	LLVM_PROFILE_FILE=$OUT/instr-gen/lua-%p.profraw train "$OUT/instr-gen/lua5.4" >/dev/null
	"$PROFDATA" merge -o "$OUT/instr-gen/lua.profdata" "$OUT"/instr-gen/*.profraw
	build instr -fprofile-instr-use="$OUT/instr-gen/lua.profdata"
fi

# Timing: interleaved rounds, order rotated, outputs compared; wall time and the CPU time
# (user + system, microseconds, from wait4) of each run.
BINS=(plain sample-g sample instr)
"$OUT/plain/lua5.4" "$WORKLOAD" "$SIZE" </dev/null >"$OUT/expected.out"
python3 - "$OUT" "$REPS" "$WORKLOAD" "$SIZE" "${BINS[@]}" >"$OUT/times.txt" <<'EOF'
import os, sys, time
out, reps, workload, size, bins = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5:]
want = open(os.path.join(out, "expected.out"), "rb").read()
for r in range(reps):
    for k in range(len(bins)):
        v = bins[(k + r) % len(bins)]
        rd, wr = os.pipe()
        t0 = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            os.dup2(wr, 1)
            os.dup2(os.open("/dev/null", os.O_RDONLY), 0)
            os.execv(os.path.join(out, v, "lua5.4"), ["lua5.4", workload, size])
        os.close(wr)
        got = b""
        while True:
            chunk = os.read(rd, 65536)
            if not chunk:
                break
            got += chunk
        os.close(rd)
        _, status, ru = os.wait4(pid, 0)
        wall = time.perf_counter() - t0
        if status != 0 or got != want:
            sys.exit("pgo-lua: error: %s exited with %d or printed another output" % (v, status))
        print(v, r, "%.4f %.4f %.4f" % (wall, ru.ru_utime, ru.ru_stime))
EOF

python3 - "$OUT" "$RESULTS" "$REPS" "$SIZE" "$TRAIN" "$CLANG" <<'EOF'
import os, re, statistics, subprocess, sys
out, results, reps, size, train, clang = sys.argv[1:7]
times, cpu = {}, {}
for line in open(os.path.join(out, "times.txt")):
    v, r, t, u, s = line.split()
    times.setdefault(v, []).append(float(t))
    cpu.setdefault(v, []).append(float(u) + float(s))
med = {v: statistics.median(ts) for v, ts in times.items()}
cmed = {v: statistics.median(ts) for v, ts in cpu.items()}
desc = {
    "plain": "clang-19 -O2 -g (baseline)",
    "sample-g": "-fprofile-sample-use, edgeprof profile of the plain build",
    "sample": "-fdebug-info-for-profiling -fprofile-sample-use, edgeprof profile of that build",
    "instr": "-fprofile-instr-generate / -fprofile-instr-use",
}
def stat(v):
    p = os.path.join(out, v, "export.log")
    return "; ".join(l.replace("edgeprof: ", "").strip() for l in open(p) if l.strip())
size_of = {v: os.path.getsize(os.path.join(out, v, "lua5.4")) for v in med}
lines = [
    "# clang-19 PGO of lua5.4 from edgeprof's sample profile (scripts/pgo-lua.sh)",
    "",
    "lua5.4 (Debian 12 sources, corpus recipe) built with clang-19; training run "
    "`lua5.4 workload.lua %s`, timed run `lua5.4 workload.lua %s`, %s interleaved rounds "
    "(order rotated), medians of wall and of CPU (user + system) seconds; every output "
    "identical to the plain build's." % (train, size, reps),
    "",
    "| build | wall s | speedup | CPU s | speedup | wall runs (s) | CPU runs (s) |",
    "|---|---|---|---|---|---|---|",
]
for v in ["plain", "sample-g", "sample", "instr"]:
    lines.append("| %s | %.3f | %.3fx | %.3f | %.3fx | %s | %s |" % (
        desc[v], med[v], med["plain"] / med[v], cmed[v], cmed["plain"] / cmed[v],
        " ".join("%.3f" % t for t in times[v]), " ".join("%.3f" % t for t in cpu[v])))
def coverage(v):
    n = {}
    for m in re.finditer(r"(\d+) of (\d+) available profile (records|samples)",
                         open(os.path.join(out, v, "build.log")).read()):
        a, b = n.get(m.group(3), (0, 0))
        n[m.group(3)] = (a + int(m.group(1)), b + int(m.group(2)))
    return "; ".join("%d of %d %s (%.1f%%)" % (a, b, k, 100.0 * a / b)
                     for k, (a, b) in sorted(n.items()) if b)
lines += ["", "Speedup = plain median / build median (above 1: faster).", "",
          "What clang matched to its code (-sample-profile-check-*-coverage, summed over "
          "the functions with a profile): -fdebug-info-for-profiling build: %s; plain "
          "build: %s." % (coverage("sample"), coverage("sample-g")), "",
          "Exports (`edgeprof -v export --format llvm-sample`):", "",
          "- plain build: %s" % stat("plain"),
          "- -fdebug-info-for-profiling build: %s" % stat("afdo"), "",
          "Recipes:", ""]
for v in ["plain", "afdo", "sample-g", "sample", "instr-gen", "instr"]:
    lines.append("- %s: `%s`" % (v, open(os.path.join(out, v, "recipe")).read().strip()))
text = "\n".join(lines) + "\n"
open(results, "w").write(text)
print(text, end="")
EOF
