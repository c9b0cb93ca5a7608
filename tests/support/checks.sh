# shellcheck shell=bash
# Counted checks and the processes a test started, for the end-to-end tests that run programs
# of their own (attach, lib). A bash library meant to be SOURCED (it sets no shell options).
#
#   ok MSG, bad MSG      count a passed (failed) check and print "ok: MSG" ("FAIL: MSG")
#   checks_summary NAME  prints "NAME: P of N checks passed"; fails when any check failed
#   started              array: the test appends the pid of every process it starts
#   kill_started         SIGKILLs those processes, by pid (for the test's EXIT trap)

fails=0
checks=0
started=()

ok() {
	checks=$((checks + 1))
	echo "ok: $*"
}

bad() {
	checks=$((checks + 1))
	fails=$((fails + 1))
	echo "FAIL: $*"
}

checks_summary() {
	echo "$1: $((checks - fails)) of $checks checks passed"
	[ "$fails" = 0 ]
}

kill_started() {
	local p
	for p in "${started[@]}"; do kill -KILL "$p" 2>/dev/null; done
}
