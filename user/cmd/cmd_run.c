/*
 * `edgeprof run [-o FILE] [--placement chords|naive] [--probes auto|uprobe] [--weights FILE]
 * [--only|--exclude PATTERN]... [--loop-stats] [--] PROG [ARGS...]`: recover PROG's CFG, plan
 * the counters (for the selected functions), start PROG
 * stopped, install them (in-process counters where proven safe, one uprobe-multi link for the
 * rest), let it run to the end under ptrace (frames left or entered without call/return are
 * unwound), read the counters (and with --loop-stats the trip-count moments of the binary's
 * loops), propagate them to every edge and block, and write the profile. PROG's standard
 * streams and exit status pass through untouched; edgeprof's messages go to stderr.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "user/builtin.h"
#include "cfg/cfg.h"
#include "estimators/placement.h"
#include "user/util/log.h"
#include "user/util/progress.h"
#include "user/proc/libs.h"
#include "user/count/probes.h"
#include "user/session/session.h"
#include "user/proc/tracer.h"
#include "user/profile/profile_dest.h"

static const char run_usage[] =
	"usage: edgeprof run [-o FILE] [--placement chords|naive] [--probes auto|uprobe]\n"
	"                    [--weights FILE] [--lib NAME|PATH]... [--only PATTERN]...\n"
	"                    [--exclude PATTERN]... [--loop-stats] [--induction[=WHEN]]\n"
	"                    [--] PROG [ARGS...]\n"
	"\n"
	"Runs PROG to completion and counts how often every edge and block of its main binary\n"
	"executes, exactly, with counters on the chords of a maximum spanning tree of each\n"
	"function's CFG: in-process counters written into PROG's memory at its exec (never into\n"
	"a file) wherever that is proven safe, eBPF uprobes elsewhere. PROG's stdin, stdout,\n"
	"stderr and exit status pass through; threads and forked children are counted. A\n"
	"process that execs is counted up to the exec (the frames it leaves are accounted for;\n"
	"the profile and the report say what it exec'd and when), not after. Needs root (or\n"
	"CAP_BPF, CAP_PERFMON and ptrace rights).\n"
	"\n"
	"  -o, --output FILE     write the profile to FILE (default ./edgeprof.data), checked\n"
	"                        before PROG starts: a regular file or a new name is written\n"
	"                        atomically (a symlink is followed to its target); a character\n"
	"                        device or FIFO (/dev/null, /dev/stdout) and - (stdout) are\n"
	"                        written in place, not atomically; a directory, socket, block\n"
	"                        device or missing directory is refused. Under sudo the file\n"
	"                        belongs to the invoking user (SUDO_UID, SUDO_GID)\n"
	"      --placement MODE  chords (default): counters on spanning-tree chords at the cheapest\n"
	"                        sites; naive: one counter on the first instruction of every\n"
	"                        block (for comparison; edges are derived where block counts allow)\n"
	"      --probes MECH     auto (default): in-process counters where proven safe (in a\n"
	"                        --lib library from when the dynamic loader has mapped it, unless\n"
	"                        the loader runs its code earlier: ifunc resolvers), uprobes\n"
	"                        elsewhere; uprobe: uprobes only\n"
	"      --weights FILE    weigh edges by the exact counts of an earlier profile of the same\n"
	"                        build, or, with FILE the word static, by the static profile\n"
	"                        estimate ('edgeprof static'); default: Ball-Larus loop heuristic\n"
	"      --lib NAME|PATH   profile this shared library too (its own CFG, probes and section\n"
	"                        of the profile): a path, or the start of the file name of a\n"
	"                        library PROG's dynamic loader loads (\"libz\"); counted in PROG's\n"
	"                        process, not in its children; repeatable\n"
	"      --only PATTERN    count only the functions PATTERN matches: a function-name glob\n"
	"                        (fnmatch: 'sqlite3Vdbe*'), or file:GLOB for the functions whose\n"
	"                        entry's source line is in a matching file (its full path, or\n"
	"                        its base name when GLOB has no '/': 'file:parse*.c'); the others\n"
	"                        get no counters and are reported as excluded (\"not selected\").\n"
	"                        Applies to every profiled object (with --lib, give patterns for\n"
	"                        the library's functions too). Repeatable: a function matching\n"
	"                        any --only is counted\n"
	"      --exclude PATTERN count every function but those PATTERN matches (same patterns;\n"
	"                        wins over --only); repeatable. A pattern matching no function\n"
	"                        is an error unless another one matches (then a warning)\n"
	"      --loop-stats      also measure every loop entry's trip count in the main binary,\n"
	"                        per thread and frame (sum and sum of squares per loop, for the\n"
	"                        variance in 'report --time'); costs one more probe hit per\n"
	"                        header execution and per execution of each entry block; counts with\n"
	"                        uprobes only\n"
	"      --induction[=WHEN] count loops whose trip count a register stepped by a constant\n"
	"                        gives (proved in the machine code: 'edgeprof cfg PROG FUNC' lists\n"
	"                        which loops and why not the others) with no counter inside them:\n"
	"                        the register summed where the loop is entered and where it is\n"
	"                        left; WHEN cheaper (default): where the plan prices that below\n"
	"                        counting in the loop; always: every such loop. Uprobes only for\n"
	"                        now (with --probes uprobe)\n"
	"  -h, --help            show this help\n"
	"\n"
	"Probe sites are chosen with the probe costs measured by 'edgeprof calibrate'; without a\n"
	"calibration for this kernel, a quick one is made first (about 1 s, once per machine)\n"
	"unless EDGEPROF_NO_CALIBRATE=1 (then default costs are used).\n"
	"\n"
	"When stderr is a terminal (and not with -q), a progress line shows the analysis and,\n"
	"when PROG's stdin and stdout are not the terminal, the running time; it is erased\n"
	"before any other message and at the end.\n";

/* Resolves PROG like execvp would: a path as given, else the first executable in $PATH. */
static int resolve_prog(const char *prog, char *out, size_t len)
{
	const char *path = getenv("PATH"), *p;
	struct stat st;

	if (strchr(prog, '/')) {
		if (stat(prog, &st) != 0)
			return pr_err("'%s': %s", prog, strerror(errno));
		if (!S_ISREG(st.st_mode) || access(prog, X_OK) != 0)
			return pr_err("'%s': not an executable file", prog);
		if (!realpath(prog, out))
			return pr_err("'%s': %s", prog, strerror(errno));
		return 0;
	}
	for (p = path ? path : "/usr/local/bin:/usr/bin:/bin"; p && *p;) {
		const char *end = strchr(p, ':');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char cand[PATH_MAX];

		if (n && (size_t)snprintf(cand, sizeof(cand), "%.*s/%s", (int)n, p, prog) < sizeof(cand) &&
		    stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0 &&
		    realpath(cand, out) && strlen(out) < len)
			return 0;
		p = end ? end + 1 : NULL;
	}
	return pr_err("'%s': command not found", prog);
}

/* Once PROG is stopped right after exec: attach the probes and count this process. */
static int attach_probes(void *arg, int pid)
{
	struct session *s = arg;
	int err;

	/* Probes in this process only (and in the children it forks, given their own):
	 * other processes running the same binary never trap on them. */
	session__bind(s, pid);
	pr_debug("process %d at its exec: placing the counters", pid);
	if (session__attach(s, 0, pid) || (s->nobjs > 1 && session__attach_libs(s, pid)))
		return -EINVAL;
	pr_debug("process %d: counters placed, running", pid);
	err = session__count_pid(s, pid);
	/* A running time on the terminal, unless PROG reads or writes it too (its output
	 * would run into the line). */
	if (!err && !isatty(STDIN_FILENO) && !isatty(STDOUT_FILENO))
		progress__run_start("running");
	return err;
}

static void child_stopped(void *arg, int pid)
{
	session__child(arg, pid);
}

static int watch(void *arg, int pid, const char *path, uint64_t file_offset)
{
	return session__watch(arg, pid, path, file_offset);
}

static void spawned(void *arg, int parent, int child, bool thread)
{
	session__spawned(arg, parent, child, thread);
}

static void before_unwind(void *arg, int tid, bool step)
{
	session__before_unwind(arg, tid, step);
}

static int orig_pc(void *arg, uint64_t pc, uint64_t *orig)
{
	return session__orig_pc(arg, pc, orig);
}

static void before_signal(void *arg, int tid)
{
	session__before_signal(arg, tid);
}

/* PID replaced its image (exec): the new one is not the profiled program. */
static int exec_stop(void *arg, int pid)
{
	session__execed(arg, pid);
	return 0;
}

/* At the loader's rendezvous (its libraries mapped, no constructor run yet): the libraries
 * deferred to it get their counters. */
static int libs_mapped(void *arg, int pid)
{
	return session__attach_mapped(arg, pid);
}

static int unwatch(void *arg, int pid, const char *path, uint64_t file_offset)
{
	struct session *s = arg;

	return probes__unwatch(s->probes, pid, path, file_offset);
}

/* PID, which exec'd, was let go: its probes can go (slowly) now. */
static void exec_released(void *arg, int pid)
{
	session__released(arg, pid);
}

/* Once the program's shared libraries are mapped (the early stop): check that the kernel
 * took every probe of theirs. */
static int check_libs(void *arg, int pid)
{
	struct session *s = arg;

	return s->nobjs > 1 ? session__check_libs(s, pid) : 0;
}

/* An instruction of the entry function's first block that is not a probe site, where the
 * tracer may stop once (see tracer_hooks.early_stop), one no in-process counter of S's plan
 * writes over when there is one (else the plan is made again around it); 0 when there is
 * none. */
static uint64_t early_stop_site(const struct session *s, const struct cfg_program *prog,
				const struct placement *pl)
{
	uint64_t first = 0;

	const struct cfg_func *f = cfg_program__func_at(prog, prog->img->entry);
	const struct cfg_block *b;

	if (!f || !f->nblocks)
		return 0;
	b = &f->blocks[f->entry_block];
	for (uint32_t k = 0; k < b->ninsns; k++) {
		uint64_t a = f->insns[b->first_insn + k].addr;
		size_t lo = 0, hi = pl->nsites;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (pl->sites[mid].addr < a)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == pl->nsites || pl->sites[lo].addr != a) {
			if (!session__patches_at(s, a))
				return a;
			if (!first)
				first = a;
		}
	}
	return first;
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "placement", required_argument, NULL, 'P' },
		{ "probes", required_argument, NULL, 'M' },
		{ "weights", required_argument, NULL, 'w' },
		{ "lib", required_argument, NULL, 'l' },
		{ "loop-stats", no_argument, NULL, 'L' },
		{ "induction", optional_argument, NULL, 'I' },
		{ "only", required_argument, NULL, 'O' },
		{ "exclude", required_argument, NULL, 'X' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = "edgeprof.data";
	struct func_select select = { 0 };
	struct session_options so = { .mode = PLACEMENT_CHORDS, .select = &select };
	char binary[PATH_MAX], *lib_names[TRACER_MAX_OBJECTS], *lib_paths[TRACER_MAX_OBJECTS] = { 0 };
	struct session s = { 0 };
	struct tracer_result tr = { 0 };
	int opt, rc, status = EXIT_INPUT;
	size_t nlibs = 0;
	bool written = false, deferred = false;
	struct session_object *main_obj;
	uint64_t early, early_offset = 0;

	optind = 1;
	opterr = 0; /* one message per error: ours, not getopt's too */
	while ((opt = getopt_long(argc, argv, "+:o:h", opts, NULL)) != -1) {
		switch (opt) {
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
			if ((rc = session_options__parse(&so, opt, optarg, "run", lib_names,
							     &nlibs)))
				return rc;
			break;
		case 'L':
			so.loop_stats = true;
			break;
		case 'h':
			fputs(run_usage, stdout);
			return EXIT_OK;
		default:
			return getopt_error("run", opt, argv);
		}
	}
	if (optind >= argc)
		return usage_error("run", "no program to run");
	if (resolve_prog(argv[optind], binary, sizeof(binary)))
		return EXIT_INPUT;
	/* Where the profile goes is checked before PROG runs: a run is not made for nothing. */
	if (profile_dest__check(out))
		return EXIT_INPUT;
	if (nlibs && libs__resolve_needed(binary, lib_names, nlibs, lib_paths))
		return EXIT_INPUT;
	so.libs = lib_paths;
	so.nlibs = nlibs;
	if ((rc = session__prepare(&s, binary, &so))) {
		if (rc == -ENOENT)
			status = EXIT_USAGE; /* no function matches --only / --exclude */
		goto out;
	}
	main_obj = &s.objs[0];
	early = early_stop_site(&s, &main_obj->prog, &main_obj->pl);
	session__avoid(&s, early);
	/* The early stop and the library functions are watched by uprobes, never broken on:
	 * nothing of edgeprof's is left in the program if edgeprof dies. */
	if (early && elf_image__vaddr_to_offset(&main_obj->img, early, &early_offset))
		early_offset = 0;
	if (nlibs && !early) {
		pr_err("'%s': no place to stop once its libraries are loaded: --lib is not possible",
		       binary);
		goto out;
	}
	for (size_t k = 1; k < s.nobjs; k++)
		deferred |= s.objs[k].deferred || s.objs[k].patch_later;
	if (tracer__run(binary, &argv[optind], main_obj->img.build_id,
			&(struct tracer_hooks){ .started = attach_probes, .loaded = check_libs,
						.mapped = deferred ? libs_mapped : NULL,
						.unwatch = unwatch,
						.execed = exec_stop, .released = exec_released,
						.spawned = spawned, .before_unwind = before_unwind, .orig_pc = orig_pc,
						.before_signal = before_signal,
						.child_stopped = child_stopped,
						.watch = watch, .early_offset = early_offset,
						.lazy_longjmp = session__longjmp_lazy(&s),
						.ctx = &s, .early_stop = early,
						.load_vaddr = main_obj->img.segs[0].vaddr -
							      main_obj->img.segs[0].offset,
						.lib_ids = &s.lib_ids[1], .nlib_ids = s.nobjs - 1 },
			&tr)) {
		progress__run_stop();
		goto out;
	}
	progress__run_stop();
	pr_debug("the program has ended");
	pr_info("longjmps stopped and unwound: %u (longjmp watch %s%s)", tr.nlongjmps,
		session__longjmp_lazy(&s) ? "only after a caught signal" : "always on",
		tr.nlazy_watches ? ", which came" : "");
	written = !session__finish(&s, &tr, &(struct session_run_info){ .argv = &argv[optind],
									  .mode = "run" }, out);
	/* PROG's own status; a profile that could not be made turns success into failure. */
	if (WIFEXITED(tr.wait_status))
		status = WEXITSTATUS(tr.wait_status);
	else if (WIFSIGNALED(tr.wait_status))
		status = 128 + WTERMSIG(tr.wait_status);
	if (!written && status == EXIT_OK)
		status = EXIT_INPUT;
out:
	tracer_result__release(&tr);
	session__release(&s);
	for (size_t k = 0; k < nlibs; k++)
		free(lib_paths[k]);
	return status;
}
