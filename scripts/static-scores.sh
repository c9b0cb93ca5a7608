#!/bin/bash
# Static against dynamic profiles (issue 5, Wu and Larus 1994): records a profile of every
# tests/programs/*.c (gcc -O2, PIE) and of the corpus workloads (lua5.4, bzip2, bzip2 -d,
# sqlite3 at the "check" size, built by scripts/corpus.sh), then for each one prints with
# `edgeprof compare --json` Wall's matching scores with the paper's Table 1 hit rates, with
# rates calibrated on all the profiles (`edgeprof calibrate-heuristics`), and with rates
# calibrated leaving the profile's own program out; the same with the branch probabilities
# taken from the profile (`compare --branch-probs`: direction, loops, profile), which splits the
# error between the heuristics and the propagation; the per-heuristic hit rates (OH's rules
# apart); and the placement efficiency table (trap cost of default / static / Exact-Max weights on the true
# counts). Writes bench/results-static.md (and the raw JSON under build/static-scores/).
# Profiles are kept and reused while the binary is unchanged; FORCE=1 records them again.
# Usage: scripts/static-scores.sh [--no-corpus]   (needs root for `edgeprof run`)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
EDGEPROF=$ROOT/build/edgeprof
OUT=${OUT:-$ROOT/build/static-scores}
RESULTS=${RESULTS:-$ROOT/bench/results-static.md}
INPUT=$ROOT/tests/programs/stdin.c
CORPUS=1
[ "${1:-}" = --no-corpus ] && CORPUS=0
declare -A RUN_ARGS=([exit_deep]="5" [signal_death]="segv" [fork_child]="100")
# Programs left out: signal_death dies by a signal on purpose (its profile is fine, but it
# measures nothing of interest); every other test program is used.
SKIP=" signal_death "

make -s all
mkdir -p "$OUT"
# Never read or write the user's stored rates.
export XDG_CONFIG_HOME=$OUT/config
rm -rf "$XDG_CONFIG_HOME"
mkdir -p "$XDG_CONFIG_HOME"

NAMES=()
# record NAME BINARY ARGS...: records $OUT/NAME.data unless it is newer than BINARY.
record() {
	local name=$1 bin=$2
	shift 2
	NAMES+=("$name")
	if [ -z "${FORCE:-}" ] && [ "$OUT/$name.data" -nt "$bin" ]; then
		return 0
	fi
	echo "static-scores: recording $name" >&2
	rm -f "$OUT/$name.data"
	# The program's exit status passes through (some test programs exit non-zero on
	# purpose): success is a profile written.
	"$EDGEPROF" -q run -o "$OUT/$name.data" -- "$bin" "$@" <"${STDIN:-$INPUT}" >/dev/null ||
		true
	[ -s "$OUT/$name.data" ] ||
		{ echo "static-scores: $name: edgeprof run wrote no profile" >&2; return 1; }
}

for src in tests/programs/*.c; do
	name=$(basename "${src%.c}")
	case $SKIP in *" $name "*) continue ;; esac
	bin=$OUT/bin/$name
	mkdir -p "$OUT/bin"
	if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
		gcc -O2 -g -fPIE -pie -pthread -o "$bin" "$src"
	fi
	read -r -a args <<<"${RUN_ARGS[$name]:-}"
	record "$name" "$bin" "${args[@]}"
done
NTESTS=${#NAMES[@]}
if [ "$CORPUS" = 1 ]; then
	# shellcheck source=scripts/workloads/workloads.sh
	source scripts/workloads/workloads.sh
	scripts/corpus.sh --quiet >/dev/null
	for wl in lua5.4 bzip2 bzip2-d sqlite3; do
		corpus_workload "$wl" check
		STDIN=/dev/null record "$wl" "$CORPUS_WL_BIN" "${CORPUS_WL_CMD[@]:1}"
	done
fi

# Scores: Table 1, calibrated on everything, calibrated leaving the program out.
PROFILES=()
for n in "${NAMES[@]}"; do PROFILES+=("$OUT/$n.data"); done
"$EDGEPROF" calibrate-heuristics --rates "$OUT/rates-all.json" "${PROFILES[@]}" \
	>"$OUT/calibrate-all.txt"
for n in "${NAMES[@]}"; do
	others=()
	prog=${n%-d} # bzip2-d and bzip2 are one program
	for m in "${NAMES[@]}"; do [ "${m%-d}" = "$prog" ] || others+=("$OUT/$m.data"); done
	"$EDGEPROF" calibrate-heuristics --rates "$OUT/rates-loo-$n.json" "${others[@]}" >/dev/null
	"$EDGEPROF" compare --json "$OUT/$n.data" >"$OUT/$n.table1.json"
	"$EDGEPROF" compare --json --no-placement --rates "$OUT/rates-all.json" "$OUT/$n.data" \
		>"$OUT/$n.calibrated.json"
	"$EDGEPROF" compare --json --no-placement --rates "$OUT/rates-loo-$n.json" "$OUT/$n.data" \
		>"$OUT/$n.loo.json"
	for src in direction loops profile; do
		"$EDGEPROF" compare --json --no-placement --branch-probs "$src" "$OUT/$n.data" \
			>"$OUT/$n.$src.json"
	done
done

python3 - "$OUT" "$RESULTS" "$NTESTS" "${NAMES[@]}" <<'PY'
import json, math, subprocess, sys, datetime
out, results, ntests, names = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
K = ["LBK", "LBR", "FI", "FC", "GBK", "GBR"]
PAPER = {"LBK": .82, "LBR": .69, "FI": .85, "FC": .72, "GBK": .77, "GBR": .78}
H = ["LBH", "LEH", "LHH", "PH", "OH", "GH", "CH", "SH", "RH"]
def load(n, kind):
    with open(f"{out}/{n}.{kind}.json") as f:
        return json.load(f)
def fmt(x):
    return "-" if x is None else f"{x:.2f}"
def mean(xs):
    # Arithmetic: a geometric mean is 0 as soon as one program scores 0.
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None
L = []
L.append("# Static profiles against dynamic ones (Wu and Larus 1994, issue 5)\n")
L.append(f"Produced by `scripts/static-scores.sh` on {datetime.date.today()} "
         f"({subprocess.run(['uname','-srm'],capture_output=True,text=True).stdout.strip()}). "
         "Profiles: every `tests/programs/*.c` (gcc -O2, PIE; stdin `tests/programs/stdin.c`) "
         "and the corpus workloads at the `check` size. Scores are Wall's weighted matching "
         "scores at the top 20 % (dynamic counts of the static top 20 % that are in the "
         "dynamic top 20 %, over the dynamic counts of the dynamic top 20 %), computed by "
         "`edgeprof compare --json`. Paper: Table 9, SPECint92 (geometric means; ours are "
         "arithmetic means, since one program scoring 0 makes a geometric mean 0). Local "
         "items (LBK, LBR) are blocks and edges of the functions that ran, pooled over the "
         "program, counted per invocation.\n")
for kind, title in (("table1", "Table 1 hit rates (the paper's)"),
                    ("calibrated", "hit rates calibrated on all these profiles (in-sample)"),
                    ("loo", "hit rates calibrated on the other programs (leave-one-out)")):
    L.append(f"\n## Top-20 % weighted scores, {title}\n")
    L.append("| program | " + " | ".join(K) + " |")
    L.append("|---|" + "---:|" * len(K))
    rows = {k: [] for k in K}
    for n in names:
        d = load(n, kind)
        vals = [d["scores"][k]["20"]["w"] if d["items"][k] else None for k in K]
        for k, v in zip(K, vals): rows[k].append((n, v))
        L.append(f"| {n} | " + " | ".join(fmt(v) for v in vals) + " |")
    for label, sel in (("mean, test programs", names[:ntests]),
                       ("mean, corpus", names[ntests:])):
        if not sel: continue
        L.append(f"| **{label}** | " + " | ".join(
            fmt(mean([v for (n, v) in rows[k] if n in sel])) for k in K) + " |")
    L.append("| *paper (SPECint92)* | " + " | ".join(f"{PAPER[k]:.2f}" for k in K) + " |")
L.append("\n## Where the error is: branch probabilities from the profile\n")
L.append("`edgeprof compare --branch-probs SOURCE`: the same Algorithms 2 and 3, Table 1 rates, "
         "with the branch probabilities taken from elsewhere. *heuristics*: the static "
         "estimate (the first table). *direction*: each heuristic-predicted probability turned "
         "to the edge the profile took more often (every prediction right, with the "
         "confidence Dempster-Shafer gave it). *loops*: the profile's probabilities on "
         "branches with a back edge or a loop exit (every loop's trip count known), the heuristics' "
         "elsewhere. *profile*: the profile's probabilities everywhere (no caps): what is "
         "left is the propagation's own error (recursion, calls through pointers, calls that "
         "never return). Means, top-20 % weighted.\n")
L.append("| branch probabilities | programs | " + " | ".join(K) + " |")
L.append("|---|---|" + "---:|" * len(K))
for kind in ("table1", "direction", "loops", "profile"):
    for label, sel in (("test programs", names[:ntests]), ("corpus", names[ntests:])):
        if not sel: continue
        vals = []
        for k in K:
            xs = []
            for n in sel:
                d = load(n, kind)
                if d["items"][k]: xs.append(d["scores"][k]["20"]["w"])
            vals.append(mean(xs))
        L.append(f"| {'heuristics' if kind == 'table1' else kind} | {label} | " +
                 " | ".join(fmt(v) for v in vals) + " |")
L.append("| *paper (SPECint92)* | | " + " | ".join(f"{PAPER[k]:.2f}" for k in K) + " |")
if names[ntests:]:
    L.append("\nPer corpus program:\n")
    L.append("| program | branch probabilities | " + " | ".join(K) + " |")
    L.append("|---|---|" + "---:|" * len(K))
    for n in names[ntests:]:
        for kind in ("table1", "direction", "loops", "profile"):
            d = load(n, kind)
            L.append(f"| {n} | {'heuristics' if kind == 'table1' else kind} | " + " | ".join(
                fmt(d["scores"][k]["20"]["w"] if d["items"][k] else None) for k in K) + " |")
L.append("\n## Local scores per function (Table 1 rates)\n")
L.append("The paper leaves open how local items are pooled. Here each function that ran is "
         "scored against its own blocks (edges) only, and the scores are averaged with weights "
         "the function's dynamic executions (`local_per_function` of `compare --json`). Top "
         "20 %, weighted.\n")
L.append("| program | LBK/func | LBR/func | functions |")
L.append("|---|---:|---:|---:|")
lf = {"LBK": [], "LBR": []}
for n in names:
    d = load(n, "table1")["local_per_function"]
    for k in lf: lf[k].append((n, d[k]["20"]["w"]))
    L.append(f"| {n} | {fmt(d['LBK']['20']['w'])} | {fmt(d['LBR']['20']['w'])} | "
             f"{d['LBK']['functions']} |")
for label, sel in (("mean, test programs", names[:ntests]), ("mean, corpus", names[ntests:])):
    if sel:
        L.append(f"| **{label}** | " + " | ".join(
            fmt(mean([v for (n, v) in lf[k] if n in sel])) for k in ("LBK", "LBR")) + " | |")
L.append("\n## Per-heuristic hit rates\n")
L.append("Branches where the heuristic applied (static), those that ran, and the executions "
         "of the edge it predicted over the executions of those branches, summed over the "
         "profiles; Table 1 is Ball and Larus's rate the paper uses.\n")
tot = {h: [0, 0, 0.0, 0.0] for h in H}
per = {}
for n in names:
    d = load(n, "table1")
    per[n] = d["heuristics"]
    for h in H:
        x = d["heuristics"][h]
        tot[h][0] += x["branches"]; tot[h][1] += x["ran"]
L.append("| heuristic | Table 1 | branches | ran | " + " | ".join(f"{n}" for n in names[ntests:]) + " | all (calibrated) |")
L.append("|---|---:|---:|---:|" + "---:|" * (len(names) - ntests) + "---:|")
with open(f"{out}/rates-all.json") as f:
    cal = json.load(f)
for h in H:
    x = per[names[0]][h]
    cells = []
    for n in names[ntests:]:
        y = per[n][h]
        cells.append("-" if y["hit_rate"] is None else f"{y['hit_rate']:.3f} ({y['ran']})")
    L.append(f"| {h} | {x['table1']:.2f} | {tot[h][0]} | {tot[h][1]} | " + " | ".join(cells) +
             f" | {cal['rates'][h]:.3f} |")
for rule, title in (("sign", "sign test vs 0"), ("eq_zero", "== 0"), ("eq_imm", "== other constant")):
    b = sum(load(n, "table1")["oh_rules"][rule]["branches"] for n in names)
    ran = sum(load(n, "table1")["oh_rules"][rule]["ran"] for n in names)
    cells = []
    for n in names[ntests:]:
        y = load(n, "table1")["oh_rules"][rule]
        cells.append("-" if y["hit_rate"] is None else
                     f"{y['hit_rate']:.3f} / {y['branch_rate']:.2f} ({y['ran']})")
    L.append(f"| OH: {title} | | {b} | {ran} | " + " | ".join(cells) + " | |")
L.append("\nOH's rows by rule give the dynamic hit rate / the mean per branch (the fraction of a "
         "branch's executions that took the predicted edge, averaged over branches).")
L.append("\n## Placement efficiency\n")
L.append("Trap cost on each profile's true counts: executions of every probe site x the cost "
         "of its class (the profile's site costs), for the placement recorded, and for the "
         "placements `placement__plan` chooses with the default (Ball-Larus loop heuristic), "
         "the static (Wu-Larus, Table 1 rates) and the exact (the profile's own counts, "
         "Exact-Max) weights. ms of trap time; in parentheses the ratio to Exact-Max.\n")
L.append("| program | sites | recorded | default | static | Exact-Max |")
L.append("|---|---:|---:|---:|---:|---:|")
for n in names:
    p = load(n, "table1")["placement"]
    ex = p["exact"]["trap_ns"] or 1
    def c(k):
        return f"{p[k]['trap_ns']/1e6:.2f} ({p[k]['trap_ns']/ex:.2f})"
    L.append(f"| {n} | {p['default']['sites']} | {c('profile_sites')} | {c('default')} | "
             f"{c('static')} | {c('exact')} |")
L.append("\n## Notes\n")
L.append("- Estimator settings (see `estimators/*.h`): Table 1 rates; cyclic probabilities of "
         "loops capped at 0.999, of recursion at 0.9 with one amplified head per strongly "
         "connected component of the call graph; no block above 1000 per invocation; in "
         "irreducible functions the flow along retreating edges re-enters their targets "
         "(repeated final passes of Algorithm 2); a "
         "successor that inevitably calls a no-return function gets 0.001; functions no "
         "direct call reaches get 0.1 invocations from the root plus an equal share of the "
         "indirect calls' estimated invocations. Ball and Larus's heuristics as recognised on "
         "x86-64 are documented in `estimators/branch_heuristics.h`.")
L.append("- The dynamic top of bzip2 (compress: `mainGtU` under `mainSort`, 1.5 M calls from 3 "
         "block sorts) and bzip2 -d sits under a path that runs a few times per run but does "
         "10^5 loop iterations per call; static loop estimates (8 to 30 iterations per loop "
         "level) cannot rank it above the per-file and per-argument code, so FI, GBK and GBR "
         "are near 0 there whatever the hit rates.")
L.append("- Where the error is (the section above): with the profile's own branch probabilities "
         "the same propagation scores near 1 on the corpus, so what separates the estimate "
         "from the paper's scores is the branch probabilities, not Algorithms 2 and 3. With "
         "every heuristic's prediction turned the right way it stays below the paper on LBK, "
         "GBK and GBR: the magnitudes limit it. Table 1's rates make a loop iterate about 8 "
         "times per entry and a guarded call run 0.2-0.8 times, where the corpus's hot loops "
         "run 10^3 to 10^6 times per entry under chains of calls that always happen. Knowing "
         "every loop's trip count (*loops*) brings lua5.4 and bzip2 close to 1; sqlite3 gains "
         "from the directions instead; bzip2 -d stays low on the local and global blocks: its "
         "hot loops sit inside the jump-table state machine of `BZ2_decompress`, whose cases "
         "get equal shares.")
L.append("- OH on x86-64: the sign tests hit as Table 1 says; the equality tests (`test r,r` or "
         "`cmp $c` then je/jne) are the bulk of OH's branches and predict no better than a "
         "coin per branch (type-tag and flag checks in lua5.4 and sqlite3 mostly hold).")
L.append("- Local scores pool every block (edge) of the functions that ran, per invocation: a few "
         "functions with thousands of iterations per call (lua's `str_upper`/`str_gsub` on "
         "long strings, bzip2 -d's output loop) dominate the dynamic top of LBK and LBR.")
L.append("- Placement: 'recorded' prices the profile's own probes on its true counts (it equals "
         "the profile's `est_trap_ns`, and equals 'default' since the profiles were recorded "
         "with the default weights). Placement prices each way of measuring a chord by what "
         "its site pays (a branch or jump-table site fires with every execution of its block), "
         "but one site can still measure several chords, so the spanning tree is only "
         "near-optimal and Exact-Max is not a strict lower bound (rep_string, switch).")
with open(results, "w") as f:
    f.write("\n".join(L) + "\n")
print("\n".join(L))
PY
