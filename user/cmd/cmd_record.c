/*
 * `edgeprof record -p PID [-d SECONDS] [-o FILE] [--placement MODE] [--weights FILE]` (also
 * `edgeprof -p PID ...`): attach to a running process, count every edge and block of its main
 * binary exactly for a window (until Ctrl-C, SIGTERM, the duration, or its end), detach, and
 * write the profile. Frames active when the window opens and closes become virtual flow
 * (tracer__attach), so the counts of the window are exact; the process is stopped only to
 * unwind its stacks and switch counting on and off.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "user/builtin.h"
#include "user/proc/libs.h"
#include "user/util/log.h"
#include "user/util/progress.h"
#include "user/count/probes.h"
#include "user/session/session.h"
#include "user/proc/tracer.h"
#include "user/profile/profile_dest.h"

static const char record_usage[] =
	"usage: edgeprof record -p PID [-d SECONDS] [-o FILE] [--placement chords|naive]\n"
	"                       [--probes auto|uprobe] [--weights FILE]\n"
	"                       [--lib NAME|PATH]... [--only PATTERN]... [--exclude PATTERN]...\n"
	"                       [--induction[=WHEN]]\n"
	"       edgeprof -p PID [same options]\n"
	"\n"
	"Attaches to the running process PID and counts how often every edge and block of its\n"
	"main binary executes, exactly, from the attach to the detach: until Ctrl-C, SIGTERM or\n"
	"SIGHUP, the duration, or the end of the process. Every thread is followed, threads it\n"
	"creates too (not its child processes). The process is stopped briefly at both ends to\n"
	"unwind its stacks (the frames active then are accounted for) and is left running.\n"
	"Needs root (or CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE).\n"
	"\n"
	"  -p, --pid PID         the process to attach to\n"
	"  -d, --duration SECS   detach after SECS seconds (default: at Ctrl-C or the end)\n"
	"  -o, --output FILE     write the profile to FILE (default ./edgeprof.data), checked\n"
	"                        before attaching; as for 'edgeprof run': a regular file or a\n"
	"                        new name atomically, a character device, FIFO or - (stdout) in\n"
	"                        place, not atomically\n"
	"      --placement MODE  chords (default) or naive, as for 'edgeprof run'\n"
	"      --probes MECH     auto (default): in-process counters in the binary where proven\n"
	"                        safe, uprobes elsewhere; uprobe: uprobes only\n"
	"      --weights FILE    weigh edges by the exact counts of an earlier profile of the\n"
	"                        same build, or by the static estimate with FILE = static\n"
	"      --lib NAME|PATH   profile this shared library too (its own CFG, probes and section\n"
	"                        of the profile): a path, or the start of the file name of a\n"
	"                        library PID maps (\"libc\" is libc.so.6); repeatable\n"
	"      --only PATTERN    count only the functions PATTERN matches, as for 'edgeprof run':\n"
	"                        a function-name glob or file:GLOB (source file); the others get\n"
	"                        no counters (excluded, \"not selected\"); applies to every\n"
	"                        profiled object; repeatable\n"
	"      --exclude PATTERN count every function but those PATTERN matches; repeatable. A\n"
	"                        pattern matching no function is an error unless another one\n"
	"                        matches\n"
	"      --induction[=WHEN] count loops by a stepped register, as for 'edgeprof run'\n"
	"                        (cheaper or always; with --probes uprobe); a loop active at the\n"
	"                        attach or the detach counts from the register's value then\n"
	"  -h, --help            show this help\n"
	"\n"
	"Frames that longjmp, pthread_exit or a C++ exception leave inside the window are\n"
	"followed: uprobes on those library functions stop the thread for edgeprof with SIGURG\n"
	"(ignored by default). If the process execs in the window, it is counted up to the exec\n"
	"(the report says so). With --probes auto, edgeprof writes jumps to its counters into\n"
	"the binary's code in the process's memory (never into the file) while every thread is\n"
	"held at the attach, and puts every byte back at the detach; if edgeprof is killed in\n"
	"between, the process runs on correctly with the jumps in place (its counts are lost).\n"
	"With --probes uprobe nothing is written into the process's memory. Without a\n"
	"calibration of the probe costs ('edgeprof calibrate'), a quick one is made first\n"
	"(about 1 s, once per machine) unless EDGEPROF_NO_CALIBRATE=1. When stderr is a\n"
	"terminal (and not with -q), a progress line shows the analysis and the time recorded.\n";

struct record_ctx {
	struct session *s;
	bool attach_held; /* attach the counters while the threads are held (in-process
			   * counters are written into code no thread may be resuming in) */
	size_t nlibs;
};

static int start_counting(void *arg, int pid)
{
	struct record_ctx *c = arg;
	int err;

	if (c->attach_held &&
	    (session__attach(c->s, 0, pid) || (c->nlibs && session__attach_libs(c->s, pid))))
		return -EINVAL;
	err = session__count_pid(c->s, pid);
	if (!err)
		progress__run_start("recording");
	return err;
}

static void before_unwind(void *arg, int tid, bool step)
{
	struct record_ctx *c = arg;

	session__before_unwind(c->s, tid, step);
}

static int orig_pc(void *arg, uint64_t pc, uint64_t *orig)
{
	struct record_ctx *c = arg;

	return session__orig_pc(c->s, pc, orig);
}

static void before_signal(void *arg, int tid)
{
	struct record_ctx *c = arg;

	session__before_signal(c->s, tid);
}

static void spawned(void *arg, int parent, int child, bool thread)
{
	struct record_ctx *c = arg;

	session__spawned(c->s, parent, child, thread);
}

static void forked(void *arg, int child)
{
	struct record_ctx *c = arg;

	session__forked(c->s, child);
}

static int watch(void *arg, int pid, const char *path, uint64_t file_offset)
{
	struct record_ctx *c = arg;

	return session__watch(c->s, pid, path, file_offset);
}

static int stop_counting(void *arg, int pid)
{
	struct record_ctx *c = arg;

	return session__uncount_pid(c->s, pid);
}

/* The real path of PID's executable into OUT. Returns 0, or non-zero with one line. */
static int target_binary(int pid, char *out, size_t len)
{
	char link[64], buf[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	n = readlink(link, buf, sizeof(buf) - 1);
	if (n < 0) {
		if (errno == EACCES || errno == EPERM)
			return pr_err("process %d: cannot read its executable: %s (needs root, or CAP_SYS_PTRACE)",
				      pid, strerror(errno));
		return pr_err("process %d: no executable (%s)", pid, strerror(errno));
	}
	buf[n] = 0;
	if (n > 10 && !strcmp(buf + n - 10, " (deleted)"))
		return pr_err("process %d: its executable '%.*s' was deleted or replaced", pid,
			      (int)(n - 10), buf);
	if ((size_t)n >= len)
		return pr_err("process %d: executable path too long", pid);
	memcpy(out, buf, (size_t)n + 1);
	return 0;
}

/* PID's command line as a NULL-terminated vector (malloc'd, one block), or NULL. */
static char **target_argv(int pid)
{
	char path[64], buf[8192];
	size_t n = 0, argc = 0;
	char **argv, *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	if (n && buf[n - 1] != 0)
		buf[n++] = 0; /* cut: ends the last one */
	for (size_t i = 0; i < n; i++)
		argc += buf[i] == 0;
	argv = malloc((argc + 1) * sizeof(*argv) + n + 1);
	if (!argv)
		return NULL;
	p = (char *)(argv + argc + 1);
	memcpy(p, buf, n + 1);
	for (size_t i = 0; i < argc; i++) {
		argv[i] = p;
		p += strlen(p) + 1;
	}
	argv[argc] = NULL;
	return argv;
}

static bool parse_pid(const char *s, int *pid)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > INT_MAX)
		return false;
	*pid = (int)v;
	return true;
}

int cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "placement", required_argument, NULL, 'P' },
		{ "probes", required_argument, NULL, 'M' },
		{ "weights", required_argument, NULL, 'w' },
		{ "lib", required_argument, NULL, 'l' },
		{ "only", required_argument, NULL, 'O' },
		{ "exclude", required_argument, NULL, 'X' },
		{ "induction", optional_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = "edgeprof.data";
	struct func_select select = { 0 };
	struct session_options so = { .mode = PLACEMENT_CHORDS, .select = &select };
	struct session s = { 0 };
	struct tracer_result tr = { 0 };
	struct record_ctx ctx = { .s = &s };
	char binary[PATH_MAX], **targv = NULL, *end;
	char *lib_names[TRACER_MAX_OBJECTS], *lib_paths[TRACER_MAX_OBJECTS] = { 0 };
	size_t nlibs = 0;
	sigset_t stops, old_mask, pending;
	double seconds = 0;
	int opt, rc, pid = 0, status = EXIT_INPUT;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":p:d:o:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (!parse_pid(optarg, &pid))
				return usage_error("record", "'%s' is not a process id", optarg);
			break;
		case 'd':
			errno = 0;
			seconds = strtod(optarg, &end);
			if (errno || end == optarg || *end || !isfinite(seconds) || seconds <= 0)
				return usage_error("record", "'%s' is not a duration in seconds",
						   optarg);
			break;
		case 'o':
			out = optarg;
			break;
		case 'P':
		case 'M':
		case 'w':
		case 'l':
		case 'O':
		case 'X':
		case 'I':
			if ((rc = session_options__parse(&so, opt, optarg, "record", lib_names,
							     &nlibs)))
				return rc;
			break;
		case 'h':
			fputs(record_usage, stdout);
			return EXIT_OK;
		default:
			return getopt_error("record", opt, argv);
		}
	}
	if (optind < argc)
		return usage_error("record", "unexpected argument '%s' (to run a program, use 'edgeprof run')",
				   argv[optind]);
	if (!pid)
		return usage_error("record", "no process given (-p PID)");
	if (tracer__check_target(pid) || target_binary(pid, binary, sizeof(binary)))
		return EXIT_INPUT;
	/* Where the profile goes is checked before anything is attached. */
	if (profile_dest__check(out))
		return EXIT_INPUT;
	if (nlibs && libs__resolve_mapped(pid, lib_names, nlibs, lib_paths))
		return EXIT_INPUT;
	so.libs = lib_paths;
	so.nlibs = nlibs;
	/* From here on a stop request waits for the window (tracer__attach takes it), even one
	 * that comes during the analysis or one an inherited SIG_IGN would drop. */
	sigemptyset(&stops);
	sigaddset(&stops, SIGINT);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGHUP);
	sigprocmask(SIG_BLOCK, &stops, &old_mask);
	so.bound_pid = pid;
	if ((rc = session__prepare(&s, binary, &so))) {
		if (rc == -ENOENT)
			status = EXIT_USAGE; /* no function matches --only / --exclude */
		goto out;
	}
	ctx.attach_held = session__patches(&s);
	ctx.nlibs = nlibs;
	if (!ctx.attach_held &&
	    (session__attach(&s, 0, pid) || (nlibs && session__attach_libs(&s, pid))))
		goto out;
	if (sigpending(&pending) == 0 && (sigismember(&pending, SIGINT) ||
					  sigismember(&pending, SIGTERM) ||
					  sigismember(&pending, SIGHUP))) {
		pr_err("interrupted before attaching to process %d: nothing recorded", pid);
		goto out;
	}
	targv = target_argv(pid);
	if (tracer__attach(pid, s.objs[0].img.build_id,
			   &(struct tracer_hooks){ .started = start_counting,
						   .stopping = stop_counting, .watch = watch,
						   .execed = stop_counting,
						   .before_unwind = before_unwind,
						   .orig_pc = orig_pc,
						   .before_signal = before_signal,
						   .spawned = spawned,
						   .forked = ctx.attach_held ? forked : NULL,
						   .ctx = &ctx, .lib_ids = &s.lib_ids[1],
						   .nlib_ids = s.nobjs - 1 },
			   seconds, &tr)) {
		progress__run_stop();
		goto out;
	}
	progress__run_stop();
	if (session__finish(&s, &tr, &(struct session_run_info){ .argv = targv, .mode = "attach",
								  .pid = pid,
								  .held_attach = tr.held_attach,
								  .held_detach = tr.held_detach },
			    out))
		goto out;
	log__printf(LOG_WARN, "process %d: counted %.3f s, %u threads; stopped %.1f ms to attach, %.1f ms to detach%s; profile in '%s'",
		pid, tr.seconds, tr.nattached + tr.nthreads, tr.held_attach * 1e3,
		tr.held_detach * 1e3, tr.detached ? "" : " (it ended in the window)", out);
	status = EXIT_OK;
out:
	free(targv);
	tracer_result__release(&tr);
	session__release(&s);
	for (size_t k = 0; k < nlibs; k++)
		free(lib_paths[k]);
	/* Stop requests are consumed: they were for this window. */
	while (sigtimedwait(&stops, NULL, &(struct timespec){ 0, 0 }) > 0)
		;
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	return status;
}
