# shellcheck shell=bash
# Runs a program under callgrind for the count-exactness oracle (build/tests/count_oracle) and
# lists the output files whose counts add up to exactly what the whole process tree ran. A
# bash library meant to be SOURCED (it sets no shell options; it works under set -euo pipefail).
#
#   cg_run DIR STDIN STDOUT CMD...
#       Runs CMD under callgrind with stdin from STDIN and stdout to STDOUT (stderr, valgrind's
#       messages included, to DIR/callgrind.log), writing DIR/cg.PID[.PART] (DIR is emptied of
#       earlier cg.* files first). Sets CG_RC to the program's exit status (128 + N when it
#       died of signal N, as bash reports it natively) and CG_FILES to the files to sum.
#
# Why not simply every file: a child created by fork() starts with a copy of its parent's
# callgrind counters, so its output would count again everything the parent ran before the
# fork. With --dump-after=fork every process dumps (and zeroes) its counters when fork()
# returns, in the parent and in the child alike; the child's first part (part 1, triggered
# by the fork) is then the duplicate and is left out. The root process is known by its pid.
# A program that forks and then execs is counted from the exec on (valgrind restarts there).
# An empty output file (a process killed before callgrind wrote anything) is left out.

CG_VG_FLAGS=(--tool=callgrind --dump-instr=yes --collect-jumps=yes --skip-plt=no
	--trace-children=yes --dump-after=fork)

cg_run() {
	local dir=$1 input=$2 output=$3 root f pid part
	shift 3
	rm -f "$dir"/cg.* "$dir/root.pid"
	CG_RC=0
	# sh records its pid, which valgrind keeps by exec; the braces keep bash's "Segmentation
	# fault" report of a program that dies of a signal out of the caller's stderr.
	{ sh -c 'echo $$ >"$1"; shift; exec "$@"' sh "$dir/root.pid" \
		valgrind "${CG_VG_FLAGS[@]}" --callgrind-out-file="$dir/cg.%p" -- "$@" \
		<"$input" >"$output" 2>"$dir/callgrind.log"; } 2>/dev/null || CG_RC=$?
	root=$(cat "$dir/root.pid" 2>/dev/null || echo none)
	CG_FILES=()
	for f in "$dir"/cg.*; do
		# An empty file holds no counts: valgrind restarted by an exec and killed before it
		# wrote any (exec_kill's children; their counts before the exec were dumped).
		[ -s "$f" ] || continue
		pid=$(sed -n 's/^pid: *//p;/^part:/q' "$f" | head -n 1)
		part=$(sed -n 's/^part: *//p;/^desc:/q' "$f" | head -n 1)
		if [ "$pid" != "$root" ] && [ "$part" = 1 ] &&
			grep -q -m 1 '^desc: Trigger: --dump-after=fork' "$f"; then
			continue
		fi
		CG_FILES+=("$f")
	done
}
