# shellcheck shell=bash
# Attach windows on a running multi-threaded target, for tests/attach-longjmp.sh and
# tests/attach-held-short.sh. A bash library meant to be SOURCED after checks.sh and
# bpf-checks.sh, by a test that sets EDGEPROF, WINDOWS and tmp, and defines
#   check_window PROFILE THREADS   its checks of one window's profile (prints why on failure,
#                                  a summary on success)
#   window_hook W                  its checks of window W's -v -v log ($tmp/err): sets WHY to
#                                  the reason when one fails (may count things in globals)
#
#   attach_windows BIN THREADS PROBES NATIVE
#       starts `BIN THREADS` reading a fifo, holds it in WINDOWS windows of `edgeprof -v -v -p
#       PID -d 0.2 --probes PROBES --placement naive`, each followed by window_hook,
#       check_window and text_intact (the code equals the file's after the detach), then
#       ends the program through the fifo and requires exit status 0 and output NATIVE. Sets
#       WHY (empty when everything passed) and MSG (check_window's last summary). A first
#       window that fails because BPF is unavailable skips the test (skip_if_no_bpf).

attach_windows() {
	local bin=$1 threads=$2 probes=$3 native=$4 tpid w rc err

	rm -f "$tmp/in"
	mkfifo "$tmp/in"
	"$bin" "$threads" <"$tmp/in" >"$tmp/out" 2>&1 &
	tpid=$!
	started+=("$tpid")
	exec 7>"$tmp/in"
	sleep 0.2
	WHY=
	MSG=
	for ((w = 1; w <= WINDOWS; w++)); do
		if ! timeout -k 5 120 "$EDGEPROF" -v -v -p "$tpid" -d 0.2 --probes "$probes" \
			--placement naive -o "$tmp/w.data" 2>"$tmp/err"; then
			# BPF unavailable: the whole test is skipped (a failure with CI=true). Asked
			# of a quiet run: the -v -v log names BPF on every line.
			if [ "$checks" = 0 ] && [ "$w" = 1 ] &&
				! "$EDGEPROF" run -o "$tmp/true.data" -- true 2>"$tmp/bpf-err"; then
				skip_if_no_bpf "$tmp/bpf-err"
			fi
			WHY="window $w: edgeprof failed: $(grep -v debug: "$tmp/err" | tail -n 2)"
			break
		fi
		window_hook "$w"
		[ -z "$WHY" ] || break
		if ! MSG=$(check_window "$tmp/w.data" "$threads" 2>&1); then
			WHY="window $w: $MSG"
			break
		fi
		if ! err=$(text_intact "$tpid" "$bin" 2>&1); then
			WHY="window $w: code differs from the file after the detach: $err"
			break
		fi
	done
	echo >&7
	exec 7>&-
	wait "$tpid"
	rc=$?
	[ -n "$WHY" ] || [ $rc = 0 ] || WHY="the program exited $rc"
	[ -n "$WHY" ] || [ "$(cat "$tmp/out")" = "$native" ] ||
		WHY="the program's output: $(head -c 200 "$tmp/out"), natively: $native"
}
