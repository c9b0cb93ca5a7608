#!/usr/bin/env bash
# Profiling overhead, side by side in one run: native, `edgeprof run` (chords placement),
# `edgeprof run --placement naive` and `valgrind --tool=callgrind`, on a few of edgeprof's
# test programs (tests/programs/*.c, gcc -O2, as they are: ~1 ms each, so they show the fixed
# cost of a profiled run: CFG, placement, attach, tracer, profile) and on the real-program
# corpus (lua5.4, bzip2 -9 compress, sqlite3). Repetitions are interleaved per program
# (native chords callgrind naive native chords ...), medians of wall-clock seconds.
# From the chords and naive profiles: sites attached, sites hit, hits, estimated trap time;
# ratios; each profiled run's stdout is compared with the native one, and the block counts of
# the chords and naive profiles are compared function by function. Prints a table and writes
# bench/results-overhead.md and bench/results-overhead.json.
#
# Environment:
#   REPS (5)            repetitions of every column on the test programs, and of native on
#                       the corpus
#   REPS_SLOW (2)       repetitions of chords, naive and callgrind on the corpus
#   CORPUS_KIND (overhead)  corpus workload size: "overhead" (small sizes defined here, a few
#                       tens of ms natively, so the profiled runs end in a minute or so) or
#                       "bench" (bench/corpus-env.sh's ~1 s workloads: edgeprof takes many
#                       minutes on them here, see the results file)
#   CHORDS_TIMEOUT (300)  seconds before a chords run is stopped (SIGTERM: the program is
#                       stopped, edgeprof writes a partial profile) and reported as timeout
#   NAIVE_TIMEOUT       seconds for a naive run (default: 10x the callgrind median, at least
#                       30 s, at most 600 s; 600 s if callgrind is missing)
#   CALLGRIND_TIMEOUT (600)
#   CALIBRATE (auto)    auto: use the user's saved site costs (edgeprof calibrate) if any,
#                       else calibrate into a private cache for this run; 1: always calibrate
#                       privately; 0: never (the defaults or the user's file)
#   TEST_PROGRAMS (loops switch recursion callbacks), CORPUS_PROGRAMS (lua5.4 bzip2 sqlite3)
#                       which programs to run (space separated; empty for none)
#   EDGEPROF (build/edgeprof)  copied to the work directory first, so a rebuild during the
#                       run does not change it
# Binaries are run from private copies (build/bench-overhead/bin): uprobes are per inode, so
# another edgeprof session profiling corpus/bin/lua5.4 would otherwise trap in our runs too.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
EDGEPROF_SRC=${EDGEPROF:-build/edgeprof}
REPS=${REPS:-5}
REPS_SLOW=${REPS_SLOW:-2}
CORPUS_KIND=${CORPUS_KIND:-overhead}
CHORDS_TIMEOUT=${CHORDS_TIMEOUT:-300}
CALLGRIND_TIMEOUT=${CALLGRIND_TIMEOUT:-600}
CALIBRATE=${CALIBRATE:-auto}
WORK=$ROOT/build/bench-overhead
OUT_MD=bench/results-overhead.md
OUT_JSON=bench/results-overhead.json
read -r -a TEST_PROGRAMS <<<"${TEST_PROGRAMS:-loops switch recursion callbacks}"
read -r -a CORPUS <<<"${CORPUS_PROGRAMS-lua5.4 bzip2 sqlite3}"

[ -x "$EDGEPROF_SRC" ] || { echo "overhead: $EDGEPROF_SRC not found (make)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "overhead: python3 not found" >&2; exit 1; }
rm -rf "$WORK"
mkdir -p "$WORK/bin" "$WORK/runs"
cp "$EDGEPROF_SRC" "$WORK/edgeprof"
EP=$WORK/edgeprof
TIMES=$WORK/times.tsv   # program column rep seconds status(ok|timeout|failed) rc
PROGS=$WORK/programs.tsv # program group timeout-info argv... (tab separated)
: >"$TIMES"
: >"$PROGS"
log() { echo "overhead: $*" >&2; }

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
others=$(pgrep -c -x edgeprof || true)

# --- site costs -------------------------------------------------------------------------
user_costs=${XDG_CACHE_HOME:-$HOME/.cache}/edgeprof/site-costs.json
EP_ENV=()
if [ "$CALIBRATE" = 1 ] || { [ "$CALIBRATE" = auto ] && [ ! -s "$user_costs" ]; }; then
	log "calibrating into a private cache ($WORK/cache)"
	mkdir -p "$WORK/cache"
	if XDG_CACHE_HOME=$WORK/cache "$EP" -q calibrate >"$WORK/calibrate.out" 2>&1; then
		EP_ENV=(env "XDG_CACHE_HOME=$WORK/cache")
	else
		log "calibration failed, using default costs: $(tail -1 "$WORK/calibrate.out")"
	fi
fi

# --- programs -----------------------------------------------------------------------------
# add_prog NAME GROUP ARGV...: registers a program (argv[0] a private copy).
add_prog() {
	local name=$1 group=$2
	shift 2
	(IFS=$'\t'; echo "$name"$'\t'"$group"$'\t'"$*") >>"$PROGS"
}
for p in "${TEST_PROGRAMS[@]}"; do
	src=tests/programs/$p.c
	if [ -e "$src" ] && gcc -O2 -g -o "$WORK/bin/$p" "$src" 2>"$WORK/bin/$p.log"; then
		add_prog "$p" test "$WORK/bin/$p"
	else
		log "$p: missing or does not build"
		add_prog "$p" missing
	fi
done

corpus_ok=1
# shellcheck source=bench/corpus-env.sh
source bench/corpus-env.sh || corpus_ok=0
if [ "$corpus_ok" = 1 ]; then
	# Small sizes for this benchmark (the other kinds are in scripts/workloads/workloads.sh).
	CORPUS_SIZE["lua5.4.overhead"]=2
	CORPUS_SIZE["bzip2.overhead"]=512
	CORPUS_SIZE["sqlite3.overhead"]=5
	for c in "${CORPUS[@]}"; do
		if ! corpus_workload "$c" "$CORPUS_KIND" >/dev/null || [ ! -x "$CORPUS_WL_BIN" ]; then
			log "$c: corpus binary or workload missing"
			add_prog "$c" missing
			continue
		fi
		cp "$CORPUS_WL_BIN" "$WORK/bin/$c"
		add_prog "$c" corpus "$WORK/bin/$c" "${CORPUS_WL_CMD[@]:1}"
	done
else
	for c in "${CORPUS[@]}"; do add_prog "$c" missing; done
fi

have_valgrind=0
command -v valgrind >/dev/null && have_valgrind=1

# --- running ------------------------------------------------------------------------------
# timed PROGRAM COLUMN REP LIMIT CMD...: runs CMD (stdin /dev/null, stdout and stderr to
# files under runs/), stopped after LIMIT s with SIGTERM (edgeprof forwards it to the program
# and writes what it has) then SIGKILL 30 s later; appends a line to times.tsv.
timed() {
	local prog=$1 col=$2 rep=$3 limit=$4 t0 t1 rc=0 status=ok
	shift 4
	local base=$WORK/runs/$prog.$col.$rep
	t0=$(date +%s%N)
	timeout -k 30 "$limit" "$@" </dev/null >"$base.out" 2>"$base.err" || rc=$?
	t1=$(date +%s%N)
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then status=timeout; fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$prog" "$col" "$rep" \
		"$(awk -v n=$((t1 - t0)) 'BEGIN { printf "%.4f", n / 1e9 }')" "$status" "$rc" >>"$TIMES"
	log "$prog $col #$rep: $(tail -1 "$TIMES" | cut -f4) s ($status, rc $rc)"
}

# median_of PROGRAM COLUMN: median seconds of the completed runs so far (empty if none).
median_of() {
	awk -F'\t' -v p="$1" -v c="$2" '$1 == p && $2 == c && $5 == "ok" { print $4 }' "$TIMES" |
		sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) exit; if (NR % 2) print v[(NR + 1) / 2];
			else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

while IFS=$'\t' read -r -a row; do
	prog=${row[0]} group=${row[1]}
	[ "$group" = missing ] && continue
	cmd=("${row[@]:2}")
	# Warm-up, untimed: page cache and the native output to compare with.
	"${cmd[@]}" </dev/null >"$WORK/runs/$prog.native.ref" 2>/dev/null || true
	if [ "$group" = test ]; then slow=$REPS; else slow=$REPS_SLOW; fi
	rounds=$((REPS > slow ? REPS : slow))
	declare -A dead=()
	for ((i = 1; i <= rounds; i++)); do
		if ((i <= REPS)); then
			timed "$prog" native "$i" 600 "${cmd[@]}"
		fi
		((i <= slow)) || continue
		if [ -z "${dead[chords]:-}" ]; then
			timed "$prog" chords "$i" "$CHORDS_TIMEOUT" "${EP_ENV[@]}" "$EP" -q run \
				-o "$WORK/runs/$prog.chords.$i.prof" -- "${cmd[@]}"
			[ "$(tail -1 "$TIMES" | cut -f5)" = ok ] || dead[chords]=1
		fi
		if [ "$have_valgrind" = 1 ] && [ -z "${dead[callgrind]:-}" ]; then
			timed "$prog" callgrind "$i" "$CALLGRIND_TIMEOUT" valgrind --tool=callgrind \
				"--callgrind-out-file=$WORK/runs/$prog.callgrind.$i.cg" "${cmd[@]}"
			[ "$(tail -1 "$TIMES" | cut -f5)" = ok ] || dead[callgrind]=1
		fi
		if [ -z "${dead[naive]:-}" ]; then
			limit=${NAIVE_TIMEOUT:-}
			if [ -z "$limit" ]; then
				cg=$(median_of "$prog" callgrind)
				if [ -n "$cg" ]; then
					limit=$(awk -v c="$cg" 'BEGIN { t = 10 * c; if (t < 30) t = 30;
						if (t > 600) t = 600; printf "%d", t + 0.5 }')
				else
					limit=600
				fi
			fi
			echo "$limit" >"$WORK/runs/$prog.naive.limit"
			timed "$prog" naive "$i" "$limit" "${EP_ENV[@]}" "$EP" -q run --placement naive \
				-o "$WORK/runs/$prog.naive.$i.prof" -- "${cmd[@]}"
			[ "$(tail -1 "$TIMES" | cut -f5)" = ok ] || dead[naive]=1
		fi
	done
	unset dead
done <"$PROGS"

# Reports of the first chords and naive profile of each program, for the comparison.
while IFS=$'\t' read -r -a row; do
	prog=${row[0]}
	for col in chords naive; do
		f=$WORK/runs/$prog.$col.1.prof
		if [ -s "$f" ]; then
			"$EP" -q report --json "$f" >"$f.report.json" 2>"$f.report.err" || rm -f "$f.report.json"
		fi
	done
done <"$PROGS"

# --- figures ------------------------------------------------------------------------------
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD 2>/dev/null || commit="$commit (uncommitted changes in the tree)"
vg_version=$( ((have_valgrind)) && valgrind --version || echo missing)
export WORK OUT_MD OUT_JSON REPS REPS_SLOW CORPUS_KIND CHORDS_TIMEOUT CALLGRIND_TIMEOUT
M_NPROC=$(nproc) M_KERNEL=$(uname -r) M_CPU=${cpu:-unknown} M_DATE=$(date -u '+%Y-%m-%d %H:%M UTC')
M_COMMIT=$commit M_VALGRIND=$vg_version M_LOAD_START=$load_start M_OTHERS=$others
M_LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
if [ ${#EP_ENV[@]} -gt 0 ]; then
	M_CALIB="private calibration for this run"
elif [ -s "$user_costs" ]; then
	M_CALIB="the user's saved calibration ($user_costs)"
else
	M_CALIB="none"
fi
export M_NPROC M_KERNEL M_CPU M_DATE M_COMMIT M_VALGRIND M_LOAD_START M_OTHERS M_LOAD_END M_CALIB
python3 - <<'PYEOF'
import json, os, statistics, collections

W = os.environ["WORK"]
E = os.environ
runs = collections.defaultdict(list)  # (prog, col) -> [(rep, secs, status, rc)]
for line in open(f"{W}/times.tsv"):
    p, c, r, s, st, rc = line.rstrip("\n").split("\t")
    runs[(p, c)].append((int(r), float(s), st, int(rc)))
progs = []
for line in open(f"{W}/programs.tsv"):
    f = line.rstrip("\n").split("\t")
    progs.append({"name": f[0], "group": f[1], "argv": f[2:]})

def load(path):
    try:
        with open(path) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None

def fmt_s(x):
    return "-" if x is None else (f"{x:.3f}" if x < 10 else f"{x:.1f}")

def fmt_n(x):
    return "-" if x is None else f"{x:,}"

def ratio(a, b):
    return None if a is None or b in (None, 0) else a / b

def fmt_r(x, lower=False):
    if x is None:
        return "-"
    s = f"{x:.1f}" if x >= 10 else f"{x:.2f}"
    return (">" if lower else "") + s + "x"

results = []
for p in progs:
    name = p["name"]
    res = {"program": name, "group": p["group"], "argv": p["argv"], "columns": {}}
    results.append(res)
    if p["group"] == "missing":
        for c in ("native", "chords", "naive", "callgrind"):
            res["columns"][c] = {"status": "missing"}
        continue
    ref = open(f"{W}/runs/{name}.native.ref", "rb").read()
    native_rc = runs[(name, "native")][0][3] if runs.get((name, "native")) else 0
    for c in ("native", "chords", "naive", "callgrind"):
        rs = runs.get((name, c), [])
        col = {"runs_s": [r[1] for r in rs], "statuses": [r[2] for r in rs]}
        ok = [r[1] for r in rs if r[2] == "ok"]
        if not rs:
            col["status"] = "missing" if c == "callgrind" else "not run"
        elif ok:
            col["status"] = "ok"
            col["median_s"] = statistics.median(ok)
        else:
            col["status"] = rs[0][2]
            col["lower_bound_s"] = max(r[1] for r in rs)
        if c == "naive":
            try:
                col["timeout_s"] = int(open(f"{W}/runs/{name}.naive.limit").read())
            except OSError:
                pass
        if c == "chords":
            col["timeout_s"] = int(E["CHORDS_TIMEOUT"])
        if c == "callgrind":
            col["timeout_s"] = int(E["CALLGRIND_TIMEOUT"])
        # correctness: stdout of every completed run equals the native stdout
        same = []
        for r in rs:
            if r[2] != "ok":
                continue
            out = open(f"{W}/runs/{name}.{c}.{r[0]}.out", "rb").read()
            same.append(out == ref and r[3] == native_rc)
        col["output_ok"] = None if not same else all(same)
        col["output_checked_runs"] = len(same)
        res["columns"][c] = col
    # probes
    for c in ("chords", "naive"):
        prof = load(f"{W}/runs/{name}.{c}.1.prof")
        col = res["columns"][c]
        if not prof:
            continue
        pr = prof.get("probes", {})
        pl = prof.get("placement", {})
        col["probes"] = pr
        col["costs"] = pl.get("costs")
        col["partial"] = col["status"] != "ok"
        costs = pl.get("costs") or {}
        by_class = collections.Counter()
        hits_class = collections.Counter()
        trap_class = collections.Counter()
        trap_func = collections.Counter()
        funcs = prof.get("functions", [])
        for s in pl.get("sites", []):
            k = s.get("class", "?")
            h = s.get("hits", 0) or 0
            by_class[k] += 1
            hits_class[k] += h
            t = h * costs.get(k, 0)
            trap_class[k] += t
            fi = s.get("func")
            fn = funcs[fi]["name"] if isinstance(fi, int) and fi < len(funcs) else "?"
            trap_func[fn] += t
        tot = sum(trap_class.values()) or 1
        col["sites_by_class"] = dict(by_class)
        col["hits_by_class"] = dict(hits_class)
        col["trap_share_by_class"] = {k: v / tot for k, v in trap_class.items()}
        col["top_functions_by_trap"] = [
            {"function": f, "est_trap_ns": int(v), "share": v / tot} for f, v in trap_func.most_common(5)]
        top = sorted(pl.get("sites", []), key=lambda s: -(s.get("hits", 0) or 0))[:5]
        col["top_sites"] = [{"addr": s.get("addr"), "kind": s.get("kind"), "class": s.get("class"),
                             "hits": s.get("hits", 0),
                             "function": funcs[s["func"]]["name"] if isinstance(s.get("func"), int) and s["func"] < len(funcs) else "?"}
                            for s in top]
    # naive estimate from the chord profile when naive did not finish: every block execution
    # is one naive hit; the class of each block's naive site comes from the (partial) naive
    # profile's placement if there is one, else every hit is priced as single-stepped.
    ch = res["columns"]["chords"]
    nv = res["columns"]["naive"]
    chrep = load(f"{W}/runs/{name}.chords.1.prof.report.json")
    nvprof = load(f"{W}/runs/{name}.naive.1.prof")
    if ch.get("status") == "ok" and "probes" in ch:
        naive_hits = ch["probes"].get("naive_hits")
        res["naive_hits_from_chords"] = naive_hits
        if nv.get("status") != "ok" and chrep:
            counts = {}
            for f in chrep.get("functions", []):
                for b in f.get("blocks", []):
                    if b.get("count") is not None:
                        counts[int(b["addr"], 16)] = b["count"]
            if nvprof and nvprof.get("placement", {}).get("sites"):
                costs = nvprof["placement"].get("costs") or {}
                est = 0
                for s in nvprof["placement"]["sites"]:
                    est += counts.get(int(s["addr"], 16), 0) * costs.get(s.get("class"), 0)
                res["naive_est_trap_ns"] = int(est)
                res["naive_est_method"] = "chord block counts x the naive placement's site classes"
            else:
                costs = ch.get("costs") or {}
                res["naive_est_trap_ns"] = int((naive_hits or 0) * costs.get("stepped", 9500))
                res["naive_est_method"] = "naive_hits x the single-step cost (upper bound)"
        elif nv.get("status") == "ok" and "probes" in nv:
            res["naive_est_trap_ns"] = nv["probes"].get("est_trap_ns")
            res["naive_est_method"] = "naive profile"
    # block-count agreement between the chords and the naive profiles
    nvrep = load(f"{W}/runs/{name}.naive.1.prof.report.json")
    if chrep and nvrep and nv.get("status") == "ok":
        nb = {}
        for f in nvrep.get("functions", []):
            for b in f.get("blocks", []):
                nb[(f["addr"], b["addr"])] = b.get("count")
        compared = mism = 0
        examples = []
        only_one = 0
        for f in chrep.get("functions", []):
            for b in f.get("blocks", []):
                key = (f["addr"], b["addr"])
                if key not in nb:
                    only_one += 1
                    continue
                a, n = b.get("count"), nb[key]
                if a is None or n is None:
                    continue
                compared += 1
                if a != n:
                    mism += 1
                    if len(examples) < 10:
                        examples.append(f"{f['name']} block {b['addr']}: chords {a}, naive {n}")
        res["agreement"] = {"blocks_compared": compared, "mismatches": mism,
                            "blocks_in_one_profile_only": only_one, "examples": examples}
    else:
        why = "naive did not finish" if nv.get("status") != "ok" else "a profile is missing"
        res["agreement"] = {"not_compared": why}

# --- table ---------------------------------------------------------------------------------
def cell(col):
    st = col.get("status")
    if st == "ok":
        return fmt_s(col["median_s"])
    if st == "timeout":
        return f"timeout (> {col.get('timeout_s', col.get('lower_bound_s', 0)):.0f} s)"
    return st or "-"

def secs(col):
    return col.get("median_s") if col.get("status") == "ok" else None

lines = []
L = lines.append
L("| program | native s | chords s | naive s | callgrind s | chords/native | naive/native | callgrind/native | chords/callgrind |")
L("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in results:
    c = r["columns"]
    nat = secs(c["native"])
    def rr(col):
        x = c[col]
        if x.get("status") == "ok":
            return fmt_r(ratio(secs(x), nat))
        if x.get("status") == "timeout" and nat:
            return fmt_r(x.get("timeout_s", 0) / nat, lower=True)
        return "-"
    chcg = ratio(secs(c["chords"]), secs(c["callgrind"]))
    L(f"| {r['program']} | {cell(c['native'])} | {cell(c['chords'])} | {cell(c['naive'])} | "
      f"{cell(c['callgrind'])} | {rr('chords')} | {rr('naive')} | {rr('callgrind')} | {fmt_r(chcg)} |")
table1 = "\n".join(lines)

lines = []
L = lines.append
L("| program | chords sites | hit | hits | est. trap s | naive sites | hit | hits | est. trap s | naive/chord hits | naive/chord trap | chords: measured extra s |")
L("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in results:
    c = r["columns"]
    ch, nv = c["chords"], c["naive"]
    chp, nvp = ch.get("probes"), nv.get("probes")
    if not chp:
        L(f"| {r['program']} | {ch.get('status', '-')} | | | | | | | | | | |")
        continue
    nh = r.get("naive_hits_from_chords")
    nest = r.get("naive_est_trap_ns")
    if nvp and nv.get("status") == "ok":
        nvcells = f"{fmt_n(nvp['sites'])} | {fmt_n(nvp['sites_hit'])} | {fmt_n(nvp['hits'])} | {nvp['est_trap_ns'] / 1e9:.3f}"
    else:
        s = fmt_n(nvp["sites"]) if nvp else "-"
        nvcells = (f"{s} | {nv.get('status')} | ({fmt_n(nh)}) | (~{nest / 1e9:.1f})" if nest is not None
                   else f"{s} | {nv.get('status')} | - | -")
    extra = (secs(ch) - secs(c["native"])) if secs(ch) is not None and secs(c["native"]) is not None else None
    L(f"| {r['program']} | {fmt_n(chp['sites'])} | {fmt_n(chp['sites_hit'])} | {fmt_n(chp['hits'])} | "
      f"{chp['est_trap_ns'] / 1e9:.3f} | {nvcells} | {fmt_r(ratio(nh, chp['hits']))} | "
      f"{fmt_r(ratio(nest, chp['est_trap_ns']))} | {fmt_s(extra)} |")
table2 = "\n".join(lines)

lines = []
L = lines.append
L("| program | chords output | naive output | callgrind output | chords vs naive block counts |")
L("|---|---|---|---|---|")
problems = []
for r in results:
    c = r["columns"]
    def oc(col):
        x = c[col]
        if x.get("output_ok") is None:
            return x.get("status", "-") if x.get("status") != "ok" else "-"
        if not x["output_ok"]:
            problems.append(f"{r['program']}: {col} output differs from native")
        return ("same" if x["output_ok"] else "DIFFERENT") + f" ({x['output_checked_runs']} runs)"
    a = r["agreement"]
    if "not_compared" in a:
        ag = "not compared: " + a["not_compared"]
    else:
        ag = f"{a['blocks_compared']:,} blocks, {a['mismatches']} mismatches"
        for e in a["examples"]:
            problems.append(f"{r['program']}: {e}")
    L(f"| {r['program']} | {oc('chords')} | {oc('naive')} | {oc('callgrind')} | {ag} |")
table3 = "\n".join(lines)

lines = []
L = lines.append
for r in results:
    ch = r["columns"]["chords"]
    if "top_functions_by_trap" not in ch:
        continue
    cls = ", ".join(f"{k} {v:.0%}" for k, v in sorted(ch["trap_share_by_class"].items(), key=lambda kv: -kv[1]))
    sc = ", ".join(f"{k} {v:,}" for k, v in ch["sites_by_class"].items())
    top = ", ".join(f"{t['function']} {t['share']:.0%}" for t in ch["top_functions_by_trap"][:3])
    L(f"- {r['program']}: sites {sc}; est. trap time by class: {cls}; top functions: {top}")
    s0 = ch["top_sites"][0] if ch["top_sites"] else None
    if s0 and ch["probes"]["hits"]:
        L(f"  (hottest site {s0['addr']} in {s0['function']}, {s0['kind']}/{s0['class']}: "
          f"{s0['hits']:,} hits, {s0['hits'] / ch['probes']['hits']:.0%} of all)")
    if r.get("naive_est_method") and r["columns"]["naive"].get("status") != "ok":
        L(f"  naive estimate: {r['naive_est_method']}")
table4 = "\n".join(lines)

costs = next((r["columns"]["chords"].get("costs") for r in results if r["columns"]["chords"].get("costs")), None)
cost_s = ("-" if not costs else
          f"stepped {costs.get('stepped')} ns, emulated {costs.get('emulated')} ns, nop5 {costs.get('nop5')} ns "
          f"({'measured by edgeprof calibrate' if costs.get('measured') else 'built-in defaults, not calibrated'})")
md = f"""# Profiling overhead: edgeprof (chords, naive) vs callgrind

Generated by `bench/run-overhead.sh` on {E['M_DATE']}.

- machine: {E['M_NPROC']} CPUs, {E['M_CPU']}, Linux {E['M_KERNEL']}; load average at start {E['M_LOAD_START']}, at end {E['M_LOAD_END']}; {E['M_OTHERS']} other edgeprof processes running at start
- edgeprof at commit {E['M_COMMIT']}; {E['M_VALGRIND']}
- probe site costs: {cost_s}; calibration: {E['M_CALIB']}
- test programs: tests/programs/*.c, `gcc -O2 -g`, as they are (no size argument; ~1 ms natively);
  corpus: workload kind `{E['CORPUS_KIND']}` (argv below), binaries copied to a private path so that
  other sessions' uprobes on corpus/bin/* cannot fire in these runs
- repetitions interleaved per program (native chords callgrind naive, ...): {E['REPS']} of each on the
  test programs; on the corpus {E['REPS']} native and {E['REPS_SLOW']} of the others (REPS, REPS_SLOW);
  wall-clock seconds, medians; every `edgeprof run` includes CFG recovery, placement, attaching,
  tracing and writing the profile
- timeouts: chords {E['CHORDS_TIMEOUT']} s, callgrind {E['CALLGRIND_TIMEOUT']} s, naive 10x the callgrind median (30-600 s);
  a stopped run is shown as "timeout (> N s)" and its ratio as a lower bound

## Wall time

{table1}

## Probes (first profile of each placement)

Hits and estimated trap time come from the profile's "probes" (est_trap_ns = hits x site-class
cost). For a naive run that did not finish, the status is shown and, in parentheses, the naive hits
the chord profile predicts (its naive_hits: one hit per block execution) and the estimated trap time
(see the notes below the concentration list). "measured extra" is chords minus native wall time.

{table2}

## Correctness

Each completed profiled run's stdout (and exit status) against the native run's stdout; block
counts of the chords and the naive profile (`edgeprof report --json`) compared for every block of
every function where neither is null.

{table3}

{"Mismatches and differences:" + chr(10) + chr(10) + chr(10).join("- " + x for x in problems) if problems else "No output difference and no block-count mismatch."}

## Where the chord placement's trap time goes

{table4}

## Commands

""" + "\n".join(f"- {r['program']}: `{' '.join(os.path.basename(a) if i == 0 else a for i, a in enumerate(r['argv']))}`"
                 for r in results if r["argv"]) + "\n"
open(E["OUT_MD"], "w").write(md)
meta = {k[2:].lower(): v for k, v in E.items() if k.startswith("M_")}
meta.update(reps=int(E["REPS"]), reps_slow=int(E["REPS_SLOW"]), corpus_kind=E["CORPUS_KIND"], site_costs=costs)
json.dump({"machine": meta, "results": results}, open(E["OUT_JSON"], "w"), indent=1)
print(md)
PYEOF
