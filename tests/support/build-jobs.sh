# shellcheck shell=bash
# The job runner of the tests that check one build after another (oracle-cfg, oracle-run,
# path-oracle): each build is a numbered job run in the background, at most JOBS at once, its
# output printed when it ends. A bash library meant to be SOURCED (it sets no shell options).
#
#   jobs_begin           makes the directory $jobs_dir for the jobs' results (removed at exit)
#   job_start N CMD...   waits for a job to end while JOBS run, then runs CMD as job N in the
#                        background: its stdout and stderr go to $jobs_dir/N.out, printed when
#                        it ends, and its exit status to $jobs_dir/N.rc
#   jobs_end N           waits for every job, then sets jobs_pass and jobs_fail over jobs 1..N
#                        (a job with no status counts as failed)

jobs_begin() {
	jobs_dir=$(mktemp -d)
	# shellcheck disable=SC2064 # the directory is known now
	trap "rm -rf '$jobs_dir'" EXIT
	jobs_running=0
}

job_start() {
	local n=$1
	shift
	if [ "$jobs_running" -ge "$JOBS" ]; then
		wait -n || true
		jobs_running=$((jobs_running - 1))
	fi
	(
		rc=0
		"$@" >"$jobs_dir/$n.out" 2>&1 || rc=$?
		echo "$rc" >"$jobs_dir/$n.rc"
		cat "$jobs_dir/$n.out"
	) &
	jobs_running=$((jobs_running + 1))
}

jobs_end() {
	local i
	wait || true
	jobs_pass=0
	jobs_fail=0
	for ((i = 1; i <= $1; i++)); do
		if [ "$(cat "$jobs_dir/$i.rc" 2>/dev/null)" = 0 ]; then
			jobs_pass=$((jobs_pass + 1))
		else
			jobs_fail=$((jobs_fail + 1))
		fi
	done
}
