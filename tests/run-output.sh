#!/usr/bin/env bash
# Where `edgeprof run -o FILE` and `edgeprof record -o FILE` put the profile, and what a run of
# a program that execs records.
# -o: a new name and an existing regular file are written atomically (a new inode, no
# temporary file left); a symlink is followed to its target (dangling too) and stays a
# symlink; a character device (a private copy of /dev/null made with mknod), a FIFO, "-"
# and a link to /proc/self/fd/1 (what /dev/stdout is) are written in place (the device stays
# a device, the FIFO's reader and stdout get the profile, after the program's own output):
# the system's own /dev/null, /dev/stdout and /dev/fd are never named, only checked after;
# under sudo (SUDO_UID/SUDO_GID set, as
# root) the file belongs to that user. Refused BEFORE the program runs (it would create a
# marker file), with one "edgeprof: " line naming the name, exit status 1, nothing created: a
# directory, a symlink to one, a name ending in "/", a socket, a block device, a missing
# directory, a file used as a directory, a directory nobody can create files in (/proc), a
# symlink in a sticky world-writable directory owned by another user (fs.protected_symlinks;
# its target is not created), an empty name, a descriptor that is not open (a link to
# /proc/self/fd/9), and,
# as user nobody, a directory nobody may not write (before any BPF privilege is needed).
# `record -p`: a refused -o fails before attaching (no uprobe link, the process runs on); a
# character device as -o is written in place.
# exec: tests/programs/exec_deep.c (gcc -O2, and clang -O2 when there) calls a few functions
# and execv's /bin/true three frames deep, in the program itself or in a forked child: the
# run exits with true's status, the profile has 0 violations, `report` and `report --json`
# say which process exec'd what (the realpath of /bin/true) and when, and every block and
# edge count of the image before the exec equals callgrind's (build/tests/count_oracle;
# callgrind dumps the old image's counts with --dump-before=execv, since it writes nothing
# for an image an exec replaces, with or without --trace-children), with both placements; a
# failed exec (a missing program) is no exec: status 127, no exec recorded, counts equal
# callgrind's.
# Needs root (skips otherwise) and BPF: skips when `edgeprof run` of a trivial program says
# BPF is unavailable (CI=true turns the skip into a failure). Exit 0 pass, 77 skip, else fail.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/support/bpf-checks.sh
source tests/support/bpf-checks.sh
# shellcheck source=tests/support/checks.sh
source tests/support/checks.sh
# shellcheck source=tests/support/callgrind-run.sh
source tests/support/callgrind-run.sh
EDGEPROF=${EDGEPROF:-build/edgeprof}
ORACLE=build/tests/count_oracle

[ -x "$EDGEPROF" ] || { echo "FAIL: $EDGEPROF not built (run make)"; exit 1; }
EDGEPROF=$(realpath "$EDGEPROF")
[ "$(id -u)" = 0 ] || { echo "SKIP: edgeprof run needs root"; exit 77; }
for c in gcc python3 bpftool pgrep timeout mknod mkfifo valgrind; do
	command -v "$c" >/dev/null || { echo "SKIP: $c not found"; exit 77; }
done
make -s "$ORACLE" || { echo "FAIL: cannot build $ORACLE"; exit 1; }

tmp=$(mktemp -d)
trap 'kill_started; rm -rf "$tmp"' EXIT
chmod 755 "$tmp"

# marker FILE: creates FILE (to see whether it ran); hello: prints "hello"; sleeper: sleeps.
cat >"$tmp/marker.c" <<'EOF'
#include <stdio.h>
int main(int argc, char **argv)
{
	FILE *f = argc > 1 ? fopen(argv[1], "w") : NULL;

	if (f)
		fclose(f);
	return 0;
}
EOF
cat >"$tmp/hello.c" <<'EOF'
#include <stdio.h>
int main(void) { printf("hello\n"); return 0; }
EOF
cat >"$tmp/sleeper.c" <<'EOF'
#include <unistd.h>
int main(void) { for (int i = 0; i < 600; i++) usleep(100000); return 0; }
EOF
for p in marker hello sleeper; do
	gcc -O2 -o "$tmp/$p" "$tmp/$p.c" || { echo "FAIL: cannot build $p"; exit 1; }
done

timeout -k 5 60 "$EDGEPROF" -q run -o "$tmp/probe.data" -- "$tmp/marker" >"$tmp/out" 2>"$tmp/err" </dev/null
rc=$?
if [ $rc != 0 ]; then
	skip_if_no_bpf "$tmp/err"
	echo "FAIL: edgeprof run of a trivial program failed (exit $rc): $(head -c 500 "$tmp/err")"
	exit 1
fi

# is_profile FILE: FILE is a profile `edgeprof report` reads.
is_profile() {
	"$EDGEPROF" report "$1" 2>/dev/null | grep -q '^probes:'
}

# run_to NAME OUT: `edgeprof -q run -o OUT marker RAN` must succeed with empty stderr and run
# the program (RAN created).
run_to() {
	local name=$1 out=$2
	rm -f "$tmp/ran"
	if timeout -k 5 60 "$EDGEPROF" -q run -o "$out" -- "$tmp/marker" "$tmp/ran" \
		>"$tmp/out" 2>"$tmp/err" </dev/null && [ ! -s "$tmp/err" ] && [ -e "$tmp/ran" ]; then
		return 0
	fi
	bad "$name: edgeprof run -o '$out' failed: $(head -c 300 "$tmp/err")"
	return 1
}

# --- written atomically ---
mkdir "$tmp/w"
if run_to new-name "$tmp/w/new.data"; then
	if is_profile "$tmp/w/new.data" && [ -z "$(ls "$tmp/w" | grep -v '^new.data$')" ]; then
		ok "a new name is written (and nothing else)"
	else
		bad "a new name: no profile, or files left: $(ls "$tmp/w" | tr '\n' ' ')"
	fi
fi
echo old >"$tmp/w/old.data"
ino=$(stat -c %i "$tmp/w/old.data")
if run_to existing-file "$tmp/w/old.data"; then
	if is_profile "$tmp/w/old.data" && [ "$(stat -c %i "$tmp/w/old.data")" != "$ino" ] &&
		! compgen -G "$tmp/w/*.tmp.*" >/dev/null; then
		ok "an existing regular file is replaced atomically (a new inode)"
	else
		bad "an existing file: not replaced by a new file, or a temporary file left"
	fi
fi

# --- symlinks are followed ---
mkdir "$tmp/links"
echo old >"$tmp/links/target.data"
ln -s target.data "$tmp/links/link"
if run_to symlink "$tmp/links/link"; then
	if [ -L "$tmp/links/link" ] && [ "$(readlink "$tmp/links/link")" = target.data ] &&
		is_profile "$tmp/links/target.data"; then
		ok "a symlink is followed: its target gets the profile, the link stays"
	else
		bad "a symlink: replaced, or its target not written ($(ls -l "$tmp/links" | tr '\n' ' '))"
	fi
fi
ln -s "$tmp/links/created.data" "$tmp/links/dangling"
if run_to dangling-symlink "$tmp/links/dangling"; then
	if [ -L "$tmp/links/dangling" ] && is_profile "$tmp/links/created.data"; then
		ok "a dangling symlink: its target is created"
	else
		bad "a dangling symlink: its target not created ($(ls -l "$tmp/links" | tr '\n' ' '))"
	fi
fi

# --- written in place: a character device (a private /dev/null), a FIFO, stdout ---
mknod "$tmp/null" c 1 3
if run_to char-device "$tmp/null"; then
	if [ -c "$tmp/null" ] && [ "$(stat -c '%t:%T' "$tmp/null")" = 1:3 ]; then
		ok "a character device is written in place: still a character device (1:3)"
	else
		bad "a character device was replaced: $(stat -c '%F %t:%T' "$tmp/null")"
	fi
fi
mkfifo "$tmp/fifo"
timeout 60 cat "$tmp/fifo" >"$tmp/from-fifo" &
reader=$!
started+=("$reader")
if run_to fifo "$tmp/fifo"; then
	wait "$reader"
	if [ -p "$tmp/fifo" ] && is_profile "$tmp/from-fifo"; then
		ok "a FIFO is written in place: its reader gets the profile"
	else
		bad "a FIFO: replaced, or its reader got no profile ($(head -c 100 "$tmp/from-fifo"))"
	fi
fi
# stdout: the program's output first, then the profile. Never the system's /dev/stdout or
# /dev/fd (an edgeprof that replaces what -o names would break them for everyone): a link of
# the test's own to the same /proc/self/fd/1; and "-" from the test's directory.
ln -s /proc/self/fd/1 "$tmp/stdout-link"
for out in - "$tmp/stdout-link"; do
	if (cd "$tmp" && timeout -k 5 60 "$EDGEPROF" -q run -o "$out" -- "$tmp/hello") >"$tmp/stdout" 2>"$tmp/err" </dev/null &&
		[ "$(head -n 1 "$tmp/stdout")" = hello ]; then
		tail -n +2 "$tmp/stdout" >"$tmp/stdout.data"
		if is_profile "$tmp/stdout.data" && [ ! -s "$tmp/err" ]; then
			ok "-o $out: the profile follows the program's output on stdout"
		else
			bad "-o $out: stdout after the program's line is no profile: $(tail -n +2 "$tmp/stdout" | head -c 100)"
		fi
	else
		bad "-o $out: failed or the program's output is not first: $(head -c 200 "$tmp/err") $(head -c 100 "$tmp/stdout")"
	fi
done

# --- under sudo: the profile belongs to the invoking user ---
for name in sudo-new sudo-existing; do
	[ $name = sudo-existing ] && echo old >"$tmp/w/sudo.data"
	rm -f "$tmp/ran"
	if SUDO_UID=4242 SUDO_GID=4343 timeout -k 5 60 "$EDGEPROF" -q run -o "$tmp/w/sudo.data" \
		-- "$tmp/marker" "$tmp/ran" >"$tmp/out" 2>"$tmp/err" </dev/null; then
		owner=$(stat -c %u:%g "$tmp/w/sudo.data")
		if [ "$owner" = 4242:4343 ] && is_profile "$tmp/w/sudo.data"; then
			ok "$name: with SUDO_UID=4242 SUDO_GID=4343 the profile belongs to 4242:4343"
		else
			bad "$name: the profile belongs to $owner, not 4242:4343"
		fi
	else
		bad "$name: edgeprof run failed: $(head -c 300 "$tmp/err")"
	fi
	rm -f "$tmp/w/sudo.data"
done
if [ "$(stat -c %u "$tmp/w/new.data" 2>/dev/null)" = 0 ]; then
	ok "without SUDO_UID the profile belongs to root"
else
	bad "without SUDO_UID the profile belongs to $(stat -c %u "$tmp/w/new.data" 2>/dev/null)"
fi

# --- refused before the program runs ---
# refused NAME REGEX OUT [RUNNER...]: `edgeprof run -o OUT marker RAN` must exit 1 with one
# stderr line "edgeprof: 'OUT'..." matching REGEX, nothing on stdout, without running marker.
refused() {
	local name=$1 re=$2 out=$3 rc nl
	shift 3
	rm -f "$tmp/ran"
	"$@" timeout -k 5 60 "$EDGEPROF" run -o "$out" -- "$tmp/marker" "$tmp/ran" \
		>"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	nl=$(wc -l <"$tmp/err")
	if [ $rc != 1 ]; then
		bad "$name: exit status $rc, not 1 ($(head -c 300 "$tmp/err"))"
	elif [ -e "$tmp/ran" ]; then
		bad "$name: the program ran although -o '$out' is refused"
	elif [ -s "$tmp/out" ]; then
		bad "$name: wrote to stdout: $(head -c 200 "$tmp/out")"
	elif [ "$nl" != 1 ] || ! grep -q "^edgeprof: '$out'" "$tmp/err" ||
		! grep -qiE "$re" "$tmp/err"; then
		bad "$name: stderr is not one line naming '$out' and matching /$re/: $(head -c 400 "$tmp/err")"
	else
		ok "$name: refused before the run: $(cat "$tmp/err")"
	fi
}
mkdir "$tmp/dir"
refused directory 'directory' "$tmp/dir"
ln -s dir "$tmp/dirlink"
refused symlink-to-directory 'directory' "$tmp/dirlink"
refused trailing-slash 'directory' "$tmp/new/"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$tmp/sock"
refused socket 'socket' "$tmp/sock"
mknod "$tmp/blk" b 7 200
refused block-device 'block device' "$tmp/blk"
refused missing-directory "'$tmp/no' does not exist" "$tmp/no/such/p.data"
echo x >"$tmp/afile"
refused file-as-directory 'not a directory' "$tmp/afile/p.data"
refused proc-directory 'cannot create' /proc/edgeprof-run-output-$$.data
refused empty-name 'empty' ""
ln -s /proc/self/fd/9 "$tmp/fd9-link"
refused closed-descriptor 'descriptor 9 is not open' "$tmp/fd9-link"
mkdir -m 1777 "$tmp/sticky"
ln -s ../victim.data "$tmp/sticky/link"
chown -h nobody "$tmp/sticky/link"
refused protected-symlink 'protected_symlinks' "$tmp/sticky/link"
[ -e "$tmp/victim.data" ] && bad "protected-symlink: its target was created"
ln -s ../mine.data "$tmp/sticky/mine"
if run_to own-symlink-in-sticky "$tmp/sticky/mine" && is_profile "$tmp/mine.data"; then
	ok "a symlink of the caller's own in a sticky directory is followed"
fi
if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
	cp "$EDGEPROF" "$tmp/edgeprof"
	mkdir "$tmp/rootonly"
	saved=$EDGEPROF
	EDGEPROF=$tmp/edgeprof
	refused not-writable-directory 'permission denied' "$tmp/rootonly/p.data" \
		setpriv --reuid=nobody --regid="$(id -gn nobody)" --clear-groups --inh-caps=-all --
	EDGEPROF=$saved
	[ -z "$(ls -A "$tmp/rootonly")" ] || bad "not-writable-directory: files created"
else
	echo "note: no user nobody or no setpriv: an unwritable directory is checked through /proc only"
fi
# The system's own: never named by this test, checked anyway.
if [ -c /dev/null ] && [ -L /dev/stdout ] && [ -L /dev/fd ]; then
	ok "/dev/null is a character device, /dev/stdout and /dev/fd symlinks"
else
	bad "/dev/null, /dev/stdout or /dev/fd changed: $(ls -l /dev/null /dev/stdout /dev/fd)"
fi

# --- record -p: checked before attaching; a device is written in place ---
"$tmp/sleeper" &
sleeper=$!
started+=("$sleeper")
before=$(uprobe_links "$tmp/")
timeout -k 5 60 "$EDGEPROF" record -p "$sleeper" -d 0.3 -o "$tmp/dir" >"$tmp/out" 2>"$tmp/err" </dev/null
rc=$?
after=$(comm -13 <(sort <<<"$before") <(uprobe_links "$tmp/" | sort))
if [ $rc = 1 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "^edgeprof: '$tmp/dir'.*directory" "$tmp/err" &&
	! grep -q attached "$tmp/err" && [ -z "$after" ] && kill -0 "$sleeper" 2>/dev/null; then
	ok "record -o a directory: refused before attaching: $(cat "$tmp/err")"
else
	bad "record -o a directory: exit $rc, links left '$after': $(head -c 300 "$tmp/err")"
fi
if timeout -k 5 60 "$EDGEPROF" -q record -p "$sleeper" -d 0.3 -o "$tmp/null" >"$tmp/out" 2>"$tmp/err" </dev/null &&
	[ -c "$tmp/null" ] && kill -0 "$sleeper" 2>/dev/null; then
	ok "record -o a character device: written in place, the process runs on"
else
	bad "record -o a character device: $(head -c 300 "$tmp/err"); now $(stat -c %F "$tmp/null")"
fi
kill "$sleeper" 2>/dev/null
wait "$sleeper" 2>/dev/null

# record -p of a process that execs /bin/sleep three frames deep inside the window: it waits
# for a file the test creates once edgeprof says it has attached.
cat >"$tmp/att_exec.c" <<'EOF'
#include <stdio.h>
#include <unistd.h>
__attribute__((noipa)) static int spin(int n) { int s = 0; for (int i = 0; i < n; i++) s += i & 3; return s; }
__attribute__((noipa)) static void deep(const char *go, char **argv)
{
	for (int i = 0; i < 6000 && access(go, F_OK) != 0; i++)
		usleep(10000);
	spin(100);
	execv(argv[0], argv);
	perror("execv");
}
__attribute__((noipa)) static void mid(const char *go, char **argv) { spin(10); deep(go, argv); }
int main(int argc, char **argv)
{
	char *a[] = { "/bin/sleep", "0.2", NULL };

	spin(5);
	if (argc > 1)
		mid(argv[1], a);
	return 1;
}
EOF
if gcc -O2 -o "$tmp/att_exec" "$tmp/att_exec.c"; then
	"$tmp/att_exec" "$tmp/go" &
	pid=$!
	started+=("$pid")
	timeout -k 5 90 "$EDGEPROF" record -p "$pid" -o "$tmp/att.data" >"$tmp/out" 2>"$tmp/err" </dev/null &
	rec=$!
	started+=("$rec")
	for _ in $(seq 600); do
		grep -q 'attached to process' "$tmp/err" && break
		sleep 0.1
	done
	touch "$tmp/go"
	wait "$rec"
	rc=$?
	wait "$pid"
	"$EDGEPROF" report "$tmp/att.data" >"$tmp/att.txt" 2>&1
	if [ $rc = 0 ] && grep -q '^violations: *0 ' "$tmp/att.txt" &&
		grep -qE "^exec: +the process exec'd $(realpath /bin/sleep) at [0-9.]+ s \\(pid $pid\\)" "$tmp/att.txt"; then
		ok "record -p of a process that execs: 0 violations, the exec reported"
	else
		bad "record -p of a process that execs: exit $rc $(head -c 300 "$tmp/err"): $(grep -E '^(attached|exec|violations)' "$tmp/att.txt")"
	fi
else
	bad "att_exec does not build"
fi

# --- exec ---
true_path=$(realpath /bin/true)
builds=("gcc -O2")
command -v clang >/dev/null && builds+=("clang -O2")
# exec_case NAME WANT-STATUS WANT-EXEC ARGS...: profiles exec_deep ARGS with both placements
# and checks status, violations, the exec record ("main", "child" or "none") and the counts.
exec_case() {
	local name=$1 want=$2 kind=$3 rc pl json cgargs=() f
	shift 3
	# callgrind writes nothing for an image an exec replaces: it dumps the counts when execv
	# is entered (what the old image ran, all of it). Not when the exec fails: calls in
	# progress at a dump are not followed to their return by callgrind's output.
	CG_VG_FLAGS=("${cg_base_flags[@]}")
	[ "$kind" = none ] || CG_VG_FLAGS+=(--dump-before=execv)
	cg_run "$edir" /dev/null "$edir/native.out" "$edir/prog" "$@"
	[ "$CG_RC" = "$want" ] || bad "$name: callgrind run exit status $CG_RC, not $want"
	for f in "${CG_FILES[@]}"; do cgargs+=(--callgrind "$f"); done
	for pl in chords naive; do
		json=$edir/$pl.json
		timeout -k 5 120 "$EDGEPROF" run --placement "$pl" -o "$edir/$pl.data" -- \
			"$edir/prog" "$@" >"$edir/out" 2>"$edir/err" </dev/null
		rc=$?
		if [ $rc != "$want" ]; then
			bad "$name ($pl): exit status $rc, not $want: $(head -c 300 "$edir/err")"
			continue
		fi
		"$EDGEPROF" report "$edir/$pl.data" >"$edir/report.txt" 2>&1
		"$EDGEPROF" report --json "$edir/$pl.data" >"$json" 2>/dev/null
		if ! python3 - "$json" "$kind" "$true_path" <<'PY'; then
import json, sys
d = json.load(open(sys.argv[1]))
kind, path = sys.argv[2], sys.argv[3]
execs = d["run"].get("execs", [])
if d["violations"] != 0:
    sys.exit("violations: %d" % d["violations"])
if kind == "none":
    sys.exit("execs recorded: %s" % execs if execs else 0)
if len(execs) != 1:
    sys.exit("%d execs recorded, not 1: %s" % (len(execs), execs))
e = execs[0]
if e["main"] != (kind == "main") or e["path"] != path or not e["frames"] or \
        not 0 <= e["at_s"] <= d["run"]["seconds"] or e["pid"] <= 0:
    sys.exit("exec record %s" % e)
PY
			bad "$name ($pl): report --json: see above"
			continue
		fi
		if [ "$kind" = main ] &&
			! grep -qE "^exec: +the program exec'd $true_path at [0-9.]+ s \(pid [0-9]+\): counts cover the image before the exec" "$edir/report.txt"; then
			bad "$name ($pl): report says no exec: $(head -n 8 "$edir/report.txt")"
			continue
		fi
		if [ "$kind" = child ] &&
			! grep -qE "^exec: +child process [0-9]+ exec'd $true_path at [0-9.]+ s" "$edir/report.txt"; then
			bad "$name ($pl): report says no exec of a child: $(head -n 8 "$edir/report.txt")"
			continue
		fi
		if "$ORACLE" --profile "$json" --binary "$edir/prog" "${cgargs[@]}" >"$edir/oracle" 2>&1; then
			ok "$name ($pl): 0 violations, exec $kind reported; $(tail -n 1 "$edir/oracle" | sed 's/^count_oracle [^:]*: //')"
		else
			bad "$name ($pl): counts differ from callgrind's: $(tail -n 1 "$edir/oracle")"
			grep '^diff ' "$edir/oracle" | head -n 5
		fi
	done
}
cg_base_flags=("${CG_VG_FLAGS[@]}")
for b in "${builds[@]}"; do
	read -r cc opt <<<"$b"
	edir=$tmp/exec-$cc
	mkdir -p "$edir"
	if ! $cc "$opt" -g -o "$edir/prog" tests/programs/exec_deep.c 2>"$edir/build.log"; then
		bad "exec_deep: $cc $opt does not build: $(head -c 300 "$edir/build.log")"
		continue
	fi
	exec_case "exec in the program ($cc $opt)" 0 main /bin/true
	exec_case "exec in a forked child ($cc $opt)" 0 child --fork /bin/true
	exec_case "failed exec ($cc $opt)" 127 none "$tmp/no-such-program"
done

checks_summary run-output
