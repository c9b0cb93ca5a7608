#!/usr/bin/env bash
# The distro sweep (`make check-distro`, not part of `make test`): Debian 12's own binaries,
# which nobody here built, each with a small deterministic workload whose inputs this script
# generates in a temporary directory, profiled by `edgeprof run` and checked block by block
# against valgrind callgrind (build/tests/sweep_oracle), and edge by edge in the functions
# presented as exact (build/tests/count_oracle on those functions only).
#
# For each program it reports: the share of the main binary's executed instructions
# (callgrind's Ir) that lie in blocks of functions the profile presents as exact; SILENT
# errors (a block, edge or invocation count of such a function that differs from callgrind's);
# reported inexactness (differences in functions the profile flags: conservation violations,
# block counts only because of an unresolved jump or undecodable code); the excluded and
# flagged functions that ran, with their reasons. Three programs are also run with
# `--lib libc` and libc's blocks checked the same way (libc-NAME).
#
# Every run (native, callgrind, edgeprof) is made without address-space randomisation (the
# script re-executes itself under `setarch -R`): programs that hash pointers take the same
# paths in every run then. Known oracle limits: callgrind does not show _init and _fini
# running (functions outside .text are listed as "outside" and not compared); grep and diff
# parse /proc/self/maps at start (gnulib c-stack), which reads differently under valgrind
# (its own mappings) and under edgeprof (the uprobe XOL page). A difference is settled with a
# direct count: with NAIVE_CONFIRM=1 a program with silent differences is run again under
# `edgeprof run --placement naive` (one probe on the first instruction of every block, no
# CFG propagation) and the ENV column counts the differences whose direct count equals the
# profile's in a function named in ORACLE_ENV (space-separated names, checked by hand to be
# code whose path depends on the process's own mappings); those are not counted as silent.
#
# Output: a table on stdout, the details in build/distro/NAME/, and a markdown summary in
# bench/results-distro.md (only for a run of the whole list). Exits 1 when there is any
# silent error, or when the exact share of all programs together is below 99.5% (it says
# which), or when a run or a check failed; 0 otherwise.
#
#   usage: scripts/check-distro.sh [--install] [--list] [NAME...]
#     --install  apt-get install the Debian packages of programs that are missing (root)
#     --list     list the programs and their workloads
#     NAME       a subset (e.g. sort gzip libc-sort); default every program
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
if [ "${CHECK_DISTRO_NORAND:-}" != 1 ]; then
	export CHECK_DISTRO_NORAND=1
	exec setarch -R "$0" "$@"
fi
# shellcheck source=tests/support/callgrind-run.sh
source tests/support/callgrind-run.sh
# A forked child's counts up to its exec are dumped there (xargs runs its own code in the
# child between fork and execvp; without this callgrind loses it).
CG_VG_FLAGS+=(--dump-before=execve)

# The environment: shells, perl and python read all of it at start (bash hashes every
# variable), so every run gets the very environment callgrind's runs get. Callgrind's client
# sees BASE_ENV plus what valgrind adds (LD_PRELOAD=vgpreload_core, LD_LIBRARY_PATH, PWD,
# GLIBCXX_FORCE_NEW...); that environment is captured once (run_env) and given, with
# `env -i`, to the native and edgeprof runs. Fixed hash seeds for perl and python.
BASE_ENV=(PATH=/usr/bin:/bin HOME=/nonexistent LC_ALL=C PYTHONHASHSEED=0 PERL_HASH_SEED=0
	PERL_PERTURB_KEYS=0)
CLIENT_ENV=()
capture_env() {
	mapfile -d '' -t CLIENT_ENV < <(env -i "${BASE_ENV[@]}" valgrind --tool=none -q \
		/usr/bin/env -0)
	[ ${#CLIENT_ENV[@]} -gt 0 ] || {
		echo "check-distro: cannot capture the environment valgrind gives its client" >&2
		exit 2
	}
}
# cg_run, with the callgrind process started in BASE_ENV.
cg_run_env() { # DIR STDIN STDOUT CMD...
	local dir=$1 input=$2 output=$3 root f pid part
	shift 3
	rm -f "$dir"/cg.* "$dir/root.pid"
	CG_RC=0
	{ sh -c 'echo $$ >"$1"; shift; exec "$@"' sh "$dir/root.pid" env -i "${BASE_ENV[@]}" \
		valgrind "${CG_VG_FLAGS[@]}" --callgrind-out-file="$dir/cg.%p" -- "$@" \
		<"$input" >"$output" 2>"$dir/callgrind.log"; } 2>/dev/null || CG_RC=$?
	root=$(cat "$dir/root.pid" 2>/dev/null || echo none)
	CG_FILES=()
	for f in "$dir"/cg.*; do
		[ -f "$f" ] || continue
		pid=$(sed -n 's/^pid: *//p;/^part:/q' "$f" | head -n 1)
		part=$(sed -n 's/^part: *//p;/^desc:/q' "$f" | head -n 1)
		if [ "$pid" != "$root" ] && [ "$part" = 1 ] &&
			grep -q -m 1 '^desc: Trigger: --dump-after=fork' "$f"; then
			continue
		fi
		CG_FILES+=("$f")
	done
}

EDGEPROF=${EDGEPROF:-$ROOT/build/edgeprof}
SWEEP=$ROOT/build/tests/sweep_oracle
COUNT=$ROOT/build/tests/count_oracle
OUT=$ROOT/build/distro
RESULTS=$ROOT/bench/results-distro.md
GOAL=99.5
LIBC=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6 2>/dev/null || echo /lib/x86_64-linux-gnu/libc.so.6)
ORACLE_ENV=${ORACLE_ENV:-}

# The programs; NAME is /usr/bin/NAME unless workload says otherwise.
PROGRAMS=(sort ls wc cat md5sum sha256sum tr cut uniq od expr base64 tac nl paste join fold
	comm seq factor cksum numfmt find xargs grep sed gzip gunzip tar diff cmp mawk dash bash
	xz unxz bzip2 python3.11 perl jq sqlite3 bc)
LIBC_PROGRAMS=(sed mawk cut)

# Sets WL_BIN, WL_PKG (its Debian package), WL_ARGS, WL_STDIN for program NAME; inputs in $IN.
workload() {
	WL_STDIN=/dev/null
	WL_PKG=coreutils
	case "$1" in
	sort) WL_ARGS=(-n "$IN/nums.txt") ;;
	ls) WL_ARGS=(-laR --time-style=long-iso "$IN/tree") ;;
	wc) WL_ARGS=("$IN/words.txt" "$IN/data.csv") ;;
	cat) WL_ARGS=(-A "$IN/words.txt") ;;
	md5sum) WL_ARGS=("$IN/words.txt" "$IN/bin.dat") ;;
	sha256sum) WL_ARGS=("$IN/words.txt" "$IN/bin.dat") ;;
	tr) WL_ARGS=(-s 'a-z' 'A-Z') WL_STDIN=$IN/words.txt ;;
	cut) WL_ARGS=(-d, -f2,4 "$IN/data.csv") ;;
	uniq) WL_ARGS=(-c "$IN/sorted.txt") ;;
	od) WL_ARGS=(-A x -t x1z "$IN/small.dat") ;;
	expr) WL_ARGS=("$(printf 'w%d ' {1..400})x123" : '.*x\([0-9]*\)') ;;
	base64) WL_ARGS=("$IN/bin.dat") ;;
	tac) WL_ARGS=("$IN/words.txt") ;;
	nl) WL_ARGS=(-ba "$IN/words.txt") ;;
	paste) WL_ARGS=(-d: "$IN/words.txt" "$IN/nums.txt") ;;
	join) WL_ARGS=("$IN/joina.txt" "$IN/joinb.txt") ;;
	fold) WL_ARGS=(-w 30 "$IN/words.txt") ;;
	comm) WL_ARGS=("$IN/sorted.txt" "$IN/sorted2.txt") ;;
	seq) WL_ARGS=(-f %.3f 1 0.5 2000) ;;
	factor) WL_ARGS=() WL_STDIN=$IN/factor.txt ;;
	cksum) WL_ARGS=("$IN/words.txt" "$IN/bin.dat") ;;
	numfmt) WL_ARGS=(--to=iec --field=1) WL_STDIN=$IN/nums.txt ;;
	find)
		WL_PKG=findutils
		WL_ARGS=("$IN/tree" '(' -name '*.c' -o -size +1k ')' -printf '%p %s %y\n')
		;;
	xargs) WL_PKG=findutils WL_ARGS=(-n 200 /bin/true) WL_STDIN=$IN/list.txt ;;
	grep) WL_PKG=grep WL_ARGS=(-c -i -E 'ab[cd]+e|x[a-f]y|^q.*z$' "$IN/words.txt") ;;
	sed) WL_PKG=sed WL_ARGS=(-E -e 's/([a-z]+)a([a-z]*)/\2A\1/g' -e '/^z/d' "$IN/words.txt") ;;
	gzip) WL_PKG=gzip WL_ARGS=(-c -n -6 "$IN/words.txt") ;;
	gunzip) WL_PKG=gzip WL_ARGS=(-d -c "$IN/words.txt.gz") ;;
	tar)
		WL_PKG=tar
		WL_ARGS=(-c -f - -C "$IN" --sort=name --mtime=2020-01-01 --owner=0 --group=0
			--numeric-owner tree)
		;;
	diff) WL_PKG=diffutils WL_ARGS=("$IN/words.txt" "$IN/words2.txt") ;;
	cmp) WL_PKG=diffutils WL_ARGS=(-l "$IN/words.txt" "$IN/words3.txt") ;;
	mawk) WL_PKG=mawk WL_ARGS=(-F, -f "$IN/prog.awk" "$IN/data.csv") ;;
	dash) WL_PKG=dash WL_ARGS=("$IN/prog.sh") ;;
	bash) WL_PKG=bash WL_ARGS=("$IN/prog.sh") ;;
	xz) WL_PKG=xz-utils WL_ARGS=(-T1 -1 -c "$IN/words.txt") ;;
	unxz) WL_PKG=xz-utils WL_ARGS=(-T1 -d -c "$IN/words.txt.xz") ;;
	bzip2) WL_PKG=bzip2 WL_ARGS=(-c "$IN/small.txt") ;;
	python3.11) WL_PKG=python3.11 WL_ARGS=(-S "$IN/prog.py") ;;
	perl) WL_PKG=perl-base WL_ARGS=("$IN/prog.pl" "$IN/words.txt") ;;
	jq)
		WL_PKG=jq
		WL_ARGS=(-c '[.[] | select(.n % 3 == 0) | {k: .name, v: (.n * 2)}] | length, .[0]'
			"$IN/data.json")
		;;
	sqlite3) WL_PKG=sqlite3 WL_ARGS=(:memory:) WL_STDIN=$IN/prog.sql ;;
	bc) WL_PKG=bc WL_ARGS=(-l -q "$IN/prog.bc") ;;
	*) return 1 ;;
	esac
	case "$1" in
	gunzip) WL_SYS=/usr/bin/gzip ;;
	unxz) WL_SYS=/usr/bin/xz ;;
	*) WL_SYS=/usr/bin/$1 ;;
	esac
	# A private copy (same bytes, same build id): uprobes belong to the file, and other
	# processes running the same file trap too (measured: while /usr/bin/bash was profiled,
	# other bash processes on the machine died of SIGSEGV when they forked a command).
	WL_BIN=$IN/bin/${WL_SYS##*/}
}

# Deterministic inputs (a fixed linear congruential generator).
make_inputs() {
	/usr/bin/python3 - "$IN" <<'PY'
import json, os, sys
d = sys.argv[1]
x = 12345
def rnd(n):
    global x
    x = (x * 1103515245 + 12345) % (1 << 31)
    return x % n
letters = "abcdefghijklmnopqrstuvwxyz"
def word():
    return "".join(letters[rnd(26)] for _ in range(2 + rnd(9)))
words = [" ".join(word() for _ in range(1 + rnd(6))) for _ in range(2000)]
def w(name, lines):
    with open(os.path.join(d, name), "w") as f:
        f.write("".join(l + "\n" for l in lines))
w("words.txt", words)
w("small.txt", words[:300])
w2 = list(words)
for i in range(0, len(w2), 37):
    w2[i] = w2[i].upper()
del w2[500:520]
w2.insert(1000, "inserted line")
w("words2.txt", w2)
w3 = list(words)
w3[100] = w3[100][::-1]
w3[1500] = w3[1500].replace("a", "b")
w("words3.txt", w3)
w("nums.txt", [str(rnd(1000000) - 200000) for _ in range(2000)])
w("sorted.txt", sorted(words[i % 700] for i in range(2000)))
w("sorted2.txt", sorted(words[350:1050]))
keys = sorted(set(word() for _ in range(800)))
w("joina.txt", [k + " " + str(rnd(100)) for k in keys if rnd(3)])
w("joinb.txt", [k + " " + word() for k in keys if rnd(3)])
w("data.csv", [",".join([word(), str(rnd(1000)), word(), str(rnd(50)), word()]) for _ in range(1500)])
w("factor.txt", [str(1000000007 + rnd(100000000) * 7) for _ in range(300)])
w("list.txt", ["item%d" % i for i in range(2000)])
with open(os.path.join(d, "bin.dat"), "wb") as f:
    f.write(bytes(rnd(256) for _ in range(65536)))
with open(os.path.join(d, "small.dat"), "wb") as f:
    f.write(bytes(rnd(256) for _ in range(4096)))
with open(os.path.join(d, "data.json"), "w") as f:
    json.dump([{"name": word(), "n": rnd(1000), "tags": [word() for _ in range(rnd(4))]}
               for _ in range(600)], f)
tree = os.path.join(d, "tree")
for i in range(12):
    sub = os.path.join(tree, "dir%02d" % i)
    os.makedirs(sub)
    for j in range(15):
        ext = [".c", ".h", ".txt"][rnd(3)]
        with open(os.path.join(sub, "f%02d%s" % (j, ext)), "w") as f:
            f.write("\n".join(words[rnd(2000)] for _ in range(rnd(80))))
with open(os.path.join(d, "prog.awk"), "w") as f:
    f.write('{ n[$3 % 7]++; s += $2; if ($1 ~ /^[a-m]/) c++; t[substr($1, 1, 2)] += $4 }\n'
            'END { for (k in n) print k, n[k]; print s, c; for (k in t) m += t[k]; print m,'
            ' length(t); print sprintf("%.3f", s / NR), toupper("done") }\n')
with open(os.path.join(d, "prog.sh"), "w") as f:
    f.write('i=0; s=0\nwhile [ $i -lt 1500 ]; do\n  case $((i % 5)) in 0) s=$((s + i)) ;;'
            ' 3) s=$((s - 1)) ;; *) : ;; esac\n  x="v$i"; y=${x#v}; i=$((i + 1))\ndone\n'
            'echo "$s $y"\nf() { echo "f $1"; }\nfor w in a b c d; do f "$w"; done\n')
with open(os.path.join(d, "prog.py"), "w") as f:
    f.write("import sys\nd = {}\nfor i in range(3000):\n    d['k%d' % (i % 97)] = d.get('k%d' %"
            " (i % 97), 0) + i\ns = sorted(d.items(), key=lambda kv: kv[1])\n"
            "print(len(s), s[0], s[-1], sum(v for _, v in s))\n"
            "print(','.join(str(x * x) for x in range(50))[:60])\n")
with open(os.path.join(d, "prog.pl"), "w") as f:
    f.write('my %h; while (<>) { chomp; for my $w (split / /) { $h{$w}++ if $w =~ /^[a-k]/; } }\n'
            'my @k = sort { $h{$b} <=> $h{$a} || $a cmp $b } keys %h; print scalar(@k), " $k[0]\\n";\n'
            'printf("%s\\n", join(",", map { uc } @k[0..4]));\n')
with open(os.path.join(d, "prog.sql"), "w") as f:
    f.write("create table t(a integer primary key, b text, c int);\n"
            "with recursive r(i) as (select 1 union all select i + 1 from r where i < 2000)\n"
            "insert into t select i, printf('w%d', i * 7 % 113), i % 17 from r;\n"
            "create index tc on t(c);\n"
            "select c, count(*), sum(a) from t group by c order by 2 desc, 1 limit 5;\n"
            "select b, max(a) from t where c = 3 group by b order by b limit 3;\n")
with open(os.path.join(d, "prog.bc"), "w") as f:
    f.write("scale=60\na(1)*4\ne(1)\nl(2)\ns=0\nfor(i=1;i<=300;i++){s=s+1/i}\ns\nquit\n")
PY
	gzip -n -6 -c "$IN/words.txt" >"$IN/words.txt.gz"
	xz -T1 -6 -c "$IN/words.txt" >"$IN/words.txt.xz"
	find "$IN/tree" -exec touch -h -d '2020-01-01 00:00:00 UTC' {} +
}

IN=/nonexistent
LIST=0
INSTALL=0
SELECTED=()
for arg in "$@"; do
	case "$arg" in
	-h | --help)
		sed -n '2,37p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	--install) INSTALL=1 ;;
	--list) LIST=1 ;;
	-*)
		echo "check-distro: unknown option '$arg'" >&2
		exit 2
		;;
	*)
		base=${arg#libc-}
		if ! workload "$base" || { [ "$base" != "$arg" ] &&
			[[ " ${LIBC_PROGRAMS[*]} " != *" $base "* ]]; }; then
			echo "check-distro: unknown program '$arg' (known: ${PROGRAMS[*]}" \
				"${LIBC_PROGRAMS[*]/#/libc-})" >&2
			exit 2
		fi
		SELECTED+=("$arg")
		;;
	esac
done
FULL=0
if [ ${#SELECTED[@]} -eq 0 ]; then
	FULL=1
	SELECTED=("${PROGRAMS[@]}" "${LIBC_PROGRAMS[@]/#/libc-}")
fi
if [ "$LIST" = 1 ]; then
	IN='$IN'
	for name in "${SELECTED[@]}"; do
		workload "${name#libc-}"
		printf '%-12s %s%s %s%s\n' "$name" "$([ "$name" = "${name#libc-}" ] || echo '--lib libc ')" \
			"$WL_SYS" "${WL_ARGS[*]}" "$([ "$WL_STDIN" = /dev/null ] || echo " < $WL_STDIN")"
	done
	exit 0
fi

# What is needed: the tools, and the programs of the selection.
for tool in "$EDGEPROF" "$SWEEP" "$COUNT"; do
	if [ ! -x "$tool" ]; then
		echo "check-distro: $tool is not built (make all build/tests/sweep_oracle" \
			"build/tests/count_oracle)" >&2
		exit 2
	fi
done
for tool in valgrind jq python3 setarch; do
	command -v "$tool" >/dev/null || {
		echo "check-distro: $tool is missing (scripts/install-deps.sh; jq: apt-get install jq)" >&2
		exit 2
	}
done
MISSING=()
missing_pkgs=()
for name in "${SELECTED[@]}"; do
	workload "${name#libc-}"
	if [ ! -x "$WL_SYS" ]; then
		MISSING+=("$name")
		missing_pkgs+=("$WL_PKG")
	fi
done
if [ ${#MISSING[@]} -gt 0 ] && [ "$INSTALL" = 1 ]; then
	apt-get install -y -q --no-install-recommends "${missing_pkgs[@]}" >&2
	MISSING=()
	for name in "${SELECTED[@]}"; do
		workload "${name#libc-}"
		[ -x "$WL_SYS" ] || MISSING+=("$name")
	done
fi
if [ ${#MISSING[@]} -gt 0 ]; then
	echo "check-distro: not installed, not checked: ${MISSING[*]} (apt-get install" \
		"$(printf '%s\n' "${missing_pkgs[@]}" | sort -u | tr '\n' ' ')or run with --install)" >&2
fi

mkdir -p "$OUT"
IN=$(mktemp -d /tmp/check-distro.XXXXXX)
trap 'rm -rf "$IN"' EXIT
make_inputs
capture_env

FAILED=0
FAIL_WHY=()
ROWS=() # one tab-separated line per program for the summary
TOT_IR=0
TOT_EXACT=0
TOT_SILENT=0
TOT_REPORTED=0
TOT_ENV=0

printf '%-14s %7s %7s %7s %13s %8s %6s %6s %5s %5s %5s  %s\n' PROGRAM native edgepf cgrind \
	"MAIN Ir" "EXACT%" SILENT REPORT ENV EXCL FLAG NOTES
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# The functions of a profile section (main, or the library FILE) that it presents as exact,
# with their block counts nulled: count_oracle then checks their edges and invocations only.
exact_json() { # DATA [LIBFILE]
	jq --arg lib "${2:-}" '
		(if $lib == "" then . else
			(.libraries[] | select(.binary.path | split("/") | last == ($lib | split("/") | last)))
		end) as $s
		| {binary: $s.binary, violations: 0,
		   functions: [$s.functions[]
			| select(.status != "excluded" and (.violations | length) == 0
				and ((.reason // "") | test("unresolved|undecodable") | not))
			| .blocks |= map(.count = null)]}' "$1"
}

# Re-runs NAME with one probe per block (direct counts) and prints how many of the sweep's
# silent block differences have a direct count equal to the profile's in a function named in
# ORACLE_ENV.
confirm_naive() { # NAME OBJECT [--lib]
	local name=$1 o=$2 d=$OUT/$1 lib=()
	workload "${name#libc-}"
	[ "${3:-}" = --lib ] && lib=(--lib libc)
	env -i "${CLIENT_ENV[@]}" "$EDGEPROF" run --placement naive "${lib[@]}" \
		-o "$d/naive.data" -- "$WL_BIN" "${WL_ARGS[@]}" <"$WL_STDIN" >/dev/null \
		2>"$d/naive.log" || true
	"$SWEEP" --profile "$d/naive.data" --binary "$o" ${3:+--lib} "${CGARGS[@]}" \
		>"$d/naive.tsv" 2>/dev/null || true
	awk -F'\t' -v env=" $ORACLE_ENV " '
		FNR == NR && $1 == "diff" { naive[$3 " " $4] = $5; next }
		$1 == "diff" && $2 == "exact" && ($3 " " $4) in naive && naive[$3 " " $4] == $5 &&
			index(env, " " $3 " ") { n++ }
		END { print n + 0 }' "$d/naive.tsv" "$d/sweep.tsv"
}

check_one() { # NAME
	local name=$1 base=${1#libc-} d cgd rc ep_rc t0 t1 t2 nat_s cg_s ep_s notes="" lib=() o
	local sweep_lib=() summary obj
	workload "$base"
	d=$OUT/$name
	cgd=$OUT/$base/cg
	mkdir -p "$d" "$cgd"
	rm -f "$d"/*.data "$d"/*.tsv "$d"/*.txt "$d"/*.json
	[ "$name" != "$base" ] && lib=(--lib libc)

	# Native (time and reference output), callgrind (once per workload), edgeprof.
	t0=$(now)
	rc=0
	env -i "${CLIENT_ENV[@]}" "$WL_BIN" "${WL_ARGS[@]}" <"$WL_STDIN" >"$d/native.stdout" \
		2>"$d/native.stderr" || rc=$?
	t1=$(now)
	nat_s=$(secs "$t0" "$t1")
	if [ "$name" = "$base" ] || [ ! -s "$cgd/files" ]; then
		t0=$(now)
		cg_run_env "$cgd" "$WL_STDIN" "$cgd/stdout" "$WL_BIN" "${WL_ARGS[@]}"
		t1=$(now)
		printf '%s\n' "${CG_FILES[@]}" >"$cgd/files"
		echo "$CG_RC" >"$cgd/rc"
		secs "$t0" "$t1" >"$cgd/seconds"
	fi
	cg_s=$(cat "$cgd/seconds")
	mapfile -t CG_FILES <"$cgd/files"
	CGARGS=()
	for o in "${CG_FILES[@]}"; do
		CGARGS+=(--callgrind "$o")
	done
	t0=$(now)
	ep_rc=0
	# No timeout(1) around it: timeout installs handlers for SIGINT and SIGQUIT, so a program
	# started in the background (where they are ignored) would find them at SIG_DFL, unlike
	# under callgrind (measured: sort's signal setup loop took another path).
	env -i "${CLIENT_ENV[@]}" "$EDGEPROF" run "${lib[@]}" -o "$d/profile.data" -- \
		"$WL_BIN" "${WL_ARGS[@]}" <"$WL_STDIN" >"$d/edgeprof.stdout" 2>"$d/edgeprof.log" ||
		ep_rc=$?
	t2=$(now)
	ep_s=$(secs "$t0" "$t2")
	if [ "$ep_rc" != "$rc" ] || [ "$(cat "$cgd/rc")" != "$rc" ]; then
		notes+="exit status: native $rc, edgeprof $ep_rc, callgrind $(cat "$cgd/rc"); "
	fi
	cmp -s "$d/native.stdout" "$d/edgeprof.stdout" || notes+="edgeprof's stdout differs; "
	cmp -s "$d/native.stdout" "$cgd/stdout" || notes+="callgrind's stdout differs; "
	if [ ! -s "$d/profile.data" ]; then
		printf '%-14s ERROR: no profile (see %s)\n' "$name" "$d/edgeprof.log"
		FAILED=1
		FAIL_WHY+=("$name: edgeprof wrote no profile")
		ROWS+=("$name	$nat_s	$ep_s	$cg_s	0	0	0	0	0	0	0	ERROR: no profile")
		return
	fi

	obj=$WL_BIN
	sweep_lib=()
	if [ "$name" != "$base" ]; then
		obj=$LIBC
		sweep_lib=(--lib)
	fi
	rc=0
	"$SWEEP" --profile "$d/profile.data" --binary "$obj" "${sweep_lib[@]}" "${CGARGS[@]}" \
		>"$d/sweep.tsv" 2>"$d/sweep.err" || rc=$?
	if [ "$rc" -ge 2 ]; then
		printf '%-14s ERROR: %s\n' "$name" "$(tail -n 1 "$d/sweep.err")"
		FAILED=1
		FAIL_WHY+=("$name: sweep_oracle failed")
		ROWS+=("$name	$nat_s	$ep_s	$cg_s	0	0	0	0	0	0	0	ERROR: sweep_oracle")
		return
	fi
	# Edges and invocations of the exact functions.
	local edge_diffs=0
	if exact_json "$d/profile.data" "${sweep_lib:+$obj}" >"$d/exact.json"; then
		rc=0
		"$COUNT" --profile "$d/exact.json" --binary "$obj" "${CGARGS[@]}" \
			>"$d/edges.txt" 2>&1 || rc=$?
		if [ "$rc" -ge 2 ]; then
			notes+="count_oracle error: $(tail -n 1 "$d/edges.txt"); "
			FAILED=1
			FAIL_WHY+=("$name: count_oracle failed")
		else
			edge_diffs=$(sed -n 's/.*; differences \([0-9]*\) .*/\1/p' "$d/edges.txt" |
				tail -n 1)
		fi
	else
		notes+="jq failed on the profile; "
		FAILED=1
		FAIL_WHY+=("$name: jq failed")
	fi
	summary=$(grep '^summary' "$d/sweep.tsv" | cut -f2)
	local ir exact silent reported excl flag envn=0 pct extra
	ir=$(sed 's/.*object_ir=\([0-9]*\).*/\1/' <<<"$summary")
	exact=$(sed 's/.*exact_ir=\([0-9]*\).*/\1/' <<<"$summary")
	silent=$(sed 's/.* silent=\([0-9]*\).*/\1/' <<<"$summary")
	reported=$(sed 's/.*reported=\([0-9]*\).*/\1/' <<<"$summary")
	excl=$(awk -F'\t' '$1 == "func" && $2 == "excluded" && $5 > 0' "$d/sweep.tsv" | wc -l)
	flag=$(awk -F'\t' '$1 == "func" && $2 == "flagged" && $5 > 0' "$d/sweep.tsv" | wc -l)
	if [ "$silent" -gt 0 ] && [ "${NAIVE_CONFIRM:-0}" = 1 ]; then
		envn=$(confirm_naive "$name" "$obj" "${sweep_lib[@]}")
		silent=$((silent - envn))
	fi
	silent=$((silent + edge_diffs))
	pct=$(awk -v e="$exact" -v t="$ir" 'BEGIN { printf "%.3f", t ? 100 * e / t : 0 }')
	[ "$edge_diffs" -gt 0 ] && notes+="$edge_diffs of them edge/invocation counts; "
	extra=$(grep -o 'unwind_failures=[1-9][0-9]*' <<<"$summary" || true)
	[ -n "$extra" ] && notes+="$extra; "
	printf '%-14s %7s %7s %7s %13s %8s %6s %6s %5s %5s %5s  %s\n' "$name" "$nat_s" \
		"$ep_s" "$cg_s" "$ir" "$pct" "$silent" "$reported" "$envn" "$excl" "$flag" \
		"${notes%; }"
	ROWS+=("$name	$nat_s	$ep_s	$cg_s	$ir	$pct	$silent	$reported	$envn	$excl	$flag	${notes%; }")
	TOT_IR=$((TOT_IR + ir))
	TOT_EXACT=$((TOT_EXACT + exact))
	TOT_SILENT=$((TOT_SILENT + silent))
	TOT_REPORTED=$((TOT_REPORTED + reported))
	TOT_ENV=$((TOT_ENV + envn))
	if [ "$silent" -gt 0 ]; then
		FAILED=1
		FAIL_WHY+=("$name: $silent silent errors (see $d/sweep.tsv, $d/edges.txt)")
	fi
}

for name in "${SELECTED[@]}"; do
	workload "${name#libc-}"
	[ -x "$WL_SYS" ] || continue
	mkdir -p "$IN/bin"
	[ -x "$WL_BIN" ] || cp "$WL_SYS" "$WL_BIN"
	check_one "$name"
done

TOT_PCT=$(awk -v e="$TOT_EXACT" -v t="$TOT_IR" 'BEGIN { printf "%.3f", t ? 100 * e / t : 0 }')
printf '%-14s %7s %7s %7s %13s %8s %6s %6s %5s\n' TOTAL "" "" "" "$TOT_IR" "$TOT_PCT" \
	"$TOT_SILENT" "$TOT_REPORTED" "$TOT_ENV"
if [ "$(awk -v p="$TOT_PCT" -v g="$GOAL" 'BEGIN { print (p < g) }')" = 1 ]; then
	FAILED=1
	FAIL_WHY+=("exact share $TOT_PCT% of all programs' instructions is below the goal $GOAL%")
fi

write_results() {
	local r n f
	echo "# Distro sweep: Debian 12's own binaries against callgrind"
	echo
	echo "\`make check-distro\` (scripts/check-distro.sh), $(date -u +%Y-%m-%d), commit" \
		"$(git rev-parse --short HEAD 2>/dev/null || echo '?'), on this 2-vCPU VM."
	echo "Each program runs a small deterministic workload (\`scripts/check-distro.sh --list\`)"
	echo "under \`edgeprof run\` and under callgrind, both with \`setarch -R\`; every block count of"
	echo "every function the profile presents as exact is compared with callgrind's executions"
	echo "of the block's first instruction, and the edges and invocations of those functions"
	echo "with count_oracle. EXACT% is the share of the main binary's executed instructions"
	echo "(callgrind's Ir; libc's for libc-NAME, run with \`--lib libc\`) in blocks of exact"
	echo "functions. SILENT: counts presented as exact that differ (goal 0). REPORTED:"
	echo "differing block counts in functions the profile flags. EXCL/FLAG: excluded and"
	echo "flagged functions that ran. Times in seconds (native, edgeprof run, callgrind)."
	echo
	echo "| program | native | edgeprof | callgrind | Ir | EXACT% | SILENT | REPORTED | ENV | EXCL | FLAG | notes |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
	for r in "${ROWS[@]}"; do
		echo "| ${r//	/ | } |"
	done
	echo "| **total** | | | | $TOT_IR | **$TOT_PCT** | **$TOT_SILENT** | $TOT_REPORTED | $TOT_ENV | | | |"
	echo
	if [ ${#MISSING[@]} -gt 0 ]; then
		echo "Not installed, not checked: ${MISSING[*]}."
		echo
	fi
	echo "## Functions not presented as exact that ran (Ir in them)"
	echo
	for r in "${ROWS[@]}"; do
		n=${r%%	*}
		f=$OUT/$n/sweep.tsv
		[ -f "$f" ] || continue
		awk -F'\t' -v n="$n" '$1 == "func" && $2 != "exact" && $5 > 0 {
			printf "- %s: %s %s (%s): Ir %s, %s blocks checked, %s differ: %s\n",
				n, $2, $3, $4, $5, $6, $7, $9 }' "$f"
	done
	echo
	echo "## Silent differences (first 10 of each kind per program)"
	echo
	for r in "${ROWS[@]}"; do
		n=${r%%	*}
		f=$OUT/$n/sweep.tsv
		[ -f "$f" ] || continue
		awk -F'\t' -v n="$n" '$1 == "diff" && $2 == "exact" && k++ < 10 {
			printf "- %s: %s block %s: profile %s, callgrind %s\n", n, $3, $4, $5, $6 }' "$f"
		grep '^diff' "$OUT/$n/edges.txt" 2>/dev/null | head -n 10 | sed "s/^/- $n: /" || true
	done
	echo
	echo "## Executed code in no checked block (by the function starting before it)"
	echo
	for r in "${ROWS[@]}"; do
		n=${r%%	*}
		f=$OUT/$n/sweep.tsv
		[ -f "$f" ] || continue
		awk -F'\t' -v n="$n" '$1 == "stray" {
			printf "- %s: %s %s (%s): Ir %s in [%s, %s]\n", n, $4, $2, $3, $5, $6, $7 }' "$f"
	done
}
if [ "$FULL" = 1 ]; then
	write_results >"$RESULTS"
	echo "check-distro: summary written to ${RESULTS#"$ROOT"/}"
fi

if [ "$FAILED" != 0 ]; then
	printf 'check-distro: FAILED: %s\n' "${FAIL_WHY[@]}"
	exit 1
fi
echo "check-distro: passed (0 silent errors; exact share $TOT_PCT% >= $GOAL%)"
