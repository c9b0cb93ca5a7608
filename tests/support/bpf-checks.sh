# shellcheck shell=bash
# Checks the end-to-end tests that load edgeprof's BPF program share. A bash library meant to
# be SOURCED (it sets no shell options).
#
#   skip_if_no_bpf ERRFILE
#       ERRFILE is the stderr of an edgeprof command that failed as root. When it says BPF is
#       unavailable, prints "SKIP: ..." and exits 77 (tests/run.sh turns that into a failure
#       with CI=true); otherwise returns, for the caller to report the failure. EACCES
#       ("Permission denied") from a BPF load as root is the verifier rejecting the program: a
#       failure, not a missing feature (an unprivileged load gets EPERM).
#   uprobe_links PREFIX
#       Prints the id of every uprobe-multi BPF link on a file whose path starts with PREFIX,
#       one a line (a link without a path counts).

skip_if_no_bpf() {
	if grep -q 'BPF' "$1" && ! grep -q 'Permission denied' "$1"; then
		echo "SKIP: BPF unavailable: $(head -n 1 "$1")"
		exit 77
	fi
}

uprobe_links() {
	bpftool -j link show 2>/dev/null | python3 -c '
import json, sys
try:
    links = json.load(sys.stdin)
except ValueError:
    links = []
for l in links or []:
    if l.get("type") == "uprobe_multi" and l.get("path", sys.argv[1]).startswith(sys.argv[1]):
        print(l["id"])' "$1"
}
