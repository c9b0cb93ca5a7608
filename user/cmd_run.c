/*
 * `edgeprof run [-o FILE] [--placement chords|naive] [--weights FILE] [--] PROG [ARGS...]`:
 * recover PROG's CFG, plan the probes, start PROG stopped, attach one uprobe-multi link, let it
 * run to the end under ptrace (frames left or entered without call/return are unwound),
 * read the counters, propagate them to every edge and block, and write the profile. PROG's
 * standard streams and exit status pass through untouched; edgeprof's messages go to stderr.
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

#include "bpf/edgeprof.h"
#include "builtin.h"
#include "calibration.h"
#include "cfg/cfg.h"
#include "cfg/error.h"
#include "cfg/srcline.h"
#include "estimators/frames.h"
#include "estimators/placement.h"
#include "estimators/propagate.h"
#include "log.h"
#include "probes.h"
#include "proc_maps.h"
#include "profile.h"
#include "run_weights.h"
#include "tracer.h"

static const char run_usage[] =
	"usage: edgeprof run [-o FILE] [--placement chords|naive] [--weights FILE] [--] PROG [ARGS...]\n"
	"\n"
	"Runs PROG to completion and counts how often every edge and block of its main binary\n"
	"executes, exactly, with eBPF uprobes on the chords of a maximum spanning tree of each\n"
	"function's CFG. PROG's stdin, stdout, stderr and exit status pass through; threads and\n"
	"forked children are counted. Needs root (or CAP_BPF, CAP_PERFMON and ptrace rights).\n"
	"\n"
	"  -o, --output FILE     write the profile to FILE (default ./edgeprof.data)\n"
	"      --placement MODE  chords (default): counters on spanning-tree chords at the cheapest\n"
	"                        probe sites; naive: one probe on the first instruction of every\n"
	"                        block (for comparison; edges are derived where block counts allow)\n"
	"      --weights FILE    weigh edges by the exact counts of an earlier profile of the same\n"
	"                        build (default: Ball-Larus loop heuristic)\n"
	"  -h, --help            show this help\n";

struct run_ctx {
	const char *binary;        /* PROG's resolved real path */
	struct elf_image *img;
	struct cfg_program *prog;
	struct placement *pl;
	const struct placement_options *popt;
	uint32_t capacity;         /* counters the BPF map holds */
	struct probes *probes;
	uint64_t bias;             /* run-time address - ELF vaddr of PROG's code */
	uint32_t *indirect_site;   /* ordinal -> index into pl->sites */
	uint32_t nindirect;
	uint64_t *counters;        /* while folding indirect targets into counters */
	uint64_t unmatched;        /* indirect hits to a target that is no edge */
};

/* The run-time load bias of PATH in process PID (0 when not found, which is also right for
 * a non-PIE executable). */
static uint64_t load_bias(int pid, const char *path, const struct elf_image *img)
{
	uint64_t base = proc_maps__base(pid, path);
	uint64_t first = img->segs[0].vaddr - img->segs[0].offset;

	return base ? base - (first & ~0xfffULL) : 0;
}

/* One target an indirect site saw: add its hits to the counter of the matching out-edge. */
static void fold_indirect(void *arg, uint32_t ordinal, uint64_t target, uint64_t hits)
{
	struct run_ctx *c = arg;
	const struct probe_site *s;
	const struct cfg_func *f;
	int b;

	if (ordinal >= c->nindirect || c->indirect_site[ordinal] == UINT32_MAX) {
		c->unmatched += hits;
		return;
	}
	s = &c->pl->sites[c->indirect_site[ordinal]];
	f = &c->prog->funcs[s->func];
	b = cfg_func__block_containing(f, s->addr);
	for (uint32_t k = 0; b >= 0 && k < f->blocks[b].nsucc && k < s->counter2; k++) {
		const struct cfg_edge *e = &f->edges[f->succ[f->blocks[b].first_succ + k]];

		if (e->to < f->nblocks && f->blocks[e->to].start == target - c->bias) {
			c->counters[s->counter + k] += hits;
			return;
		}
	}
	c->unmatched += hits;
}

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

/* Makes the instruction at VADDR unprobeable in PROG (the kernel refused a probe there). */
static void mark_refused(struct cfg_program *prog, uint64_t vaddr)
{
	for (size_t i = 0; i < prog->nfuncs; i++) {
		struct cfg_func *f = &prog->funcs[i];
		int b = cfg_func__block_containing(f, vaddr);

		for (uint32_t k = 0; b >= 0 && k < f->blocks[b].ninsns; k++)
			if (f->insns[f->blocks[b].first_insn + k].addr == vaddr)
				f->insns[f->blocks[b].first_insn + k].probe_class = PROBE_NEVER;
	}
}

/* The file offsets of the sites of the plan. Returns a malloc'd array, or NULL (reported). */
static uint64_t *site_offsets(const struct run_ctx *c)
{
	uint64_t *offs = malloc((c->pl->nsites + 1) * sizeof(*offs));

	if (!offs) {
		pr_err("out of memory");
		return NULL;
	}
	for (size_t i = 0; i < c->pl->nsites; i++)
		if (elf_image__vaddr_to_offset(c->img, c->pl->sites[i].addr, &offs[i])) {
			pr_err("'%s': probe site %#llx has no file offset", c->binary,
			       (unsigned long long)c->pl->sites[i].addr);
			free(offs);
			return NULL;
		}
	return offs;
}

/* Once PROG is stopped right after exec: one link for every site, then count this process.
 * Sites on instructions the kernel refuses are found, left out, and the probes planned again
 * (the process exists but has not run an instruction yet). */
static int attach_probes(void *arg, int pid)
{
	struct run_ctx *c = arg;
	int err = -EINVAL;

	for (int round = 0; round < 4; round++) {
		uint64_t *offs = site_offsets(c), *cookies, *bad = NULL;
		size_t nbad = 0;

		if (!offs)
			return -EINVAL;
		cookies = malloc((c->pl->nsites + 1) * sizeof(*cookies));
		if (!cookies) {
			free(offs);
			return pr_err("out of memory");
		}
		for (size_t i = 0; i < c->pl->nsites; i++)
			cookies[i] = probes__cookie(&c->pl->sites[i]);
		err = c->pl->nsites ? probes__attach(c->probes, c->binary, offs, cookies,
						     c->pl->nsites) : 0;
		free(cookies);
		if (err == -ENOTSUPP)
			err = probes__refused(c->probes, c->binary, offs, c->pl->nsites, &bad, &nbad);
		free(offs);
		if (err)
			return err;
		if (!nbad) {
			c->bias = load_bias(pid, c->binary, c->img);
			return probes__add_pid(c->probes, pid);
		}
		pr_info("the kernel refuses probes on %zu instructions: placing probes without them",
			nbad);
		for (size_t i = 0; i < nbad; i++) {
			uint64_t v;

			if (!elf_image__offset_to_vaddr(c->img, bad[i], &v)) {
				pr_debug("the kernel refuses a probe at %#llx",
					 (unsigned long long)v);
				mark_refused(c->prog, v);
			}
		}
		free(bad);
		placement__free(c->pl);
		if (placement__plan(c->pl, c->prog, c->popt))
			return pr_err("'%s': out of memory planning probes", c->binary);
		if (c->pl->ncounters > c->capacity)
			return pr_err("'%s': %u counters needed after leaving out refused probes, %u loaded",
				      c->binary, c->pl->ncounters, c->capacity);
	}
	return pr_err("'%s': the kernel keeps refusing probe sites", c->binary);
}

/* An instruction of the entry function's first block that is not a probe site, where the
 * tracer may stop once (see tracer_hooks.early_stop); 0 when there is none. */
static uint64_t early_stop_site(const struct cfg_program *prog, const struct placement *pl)
{
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
		if (lo == pl->nsites || pl->sites[lo].addr != a)
			return a;
	}
	return 0;
}

/* The frames of one C++ throw, from its marker at events[I]: innermost first, each frame whose
 * call has no landing pad is skipped by the exception (left without returning); the first one
 * whose call has one handles it (through its exception edge) and ends the walk. Returns the
 * index of the throw's last event. */
static size_t throw_frames(const struct cfg_program *prog, const struct block_index *bi,
			   const struct tracer_result *tr, size_t i, struct virtual_edge *v,
			   size_t *n, size_t *unmapped)
{
	bool handled = false;

	for (i++; i < tr->nevents && tr->events[i].kind == FRAME_THROW && tr->events[i].vaddr;
	     i++) {
		const struct frame_event *ev = &tr->events[i];
		const struct block_ref *r;
		const struct cfg_func *f;
		const struct cfg_block *b;

		if (handled || ev->activation)
			continue;
		r = block_index__find(bi, ev->vaddr - 1);
		if (!r || r->end != ev->vaddr) {
			(*unmapped)++;
			continue;
		}
		f = &prog->funcs[r->func];
		b = &f->blocks[r->block];
		for (uint32_t k = 0; k < b->nsucc; k++)
			handled |= f->edges[f->succ[b->first_succ + k]].kind == EDGE_EXCEPTION;
		if (!handled && frames__virtual_edge(prog, bi, ev->vaddr, FRAME_LEFT, false,
						     &v[*n]) == 1)
			(*n)++;
	}
	return i - 1;
}

/* Maps the unwound frames to virtual edges (one list for the whole program). */
static int frames_to_virtual(const struct cfg_program *prog, const struct tracer_result *tr,
			     struct virtual_edge **vout, size_t *nout, size_t *unmapped)
{
	struct block_index bi;
	struct virtual_edge *v = NULL;
	size_t n = 0, i;
	int err = block_index__build(&bi, prog);

	*unmapped = 0;
	if (err)
		return err;
	v = calloc(tr->nevents + 1, sizeof(*v));
	if (!v) {
		block_index__free(&bi);
		return -ENOMEM;
	}
	for (i = 0; i < tr->nevents; i++) {
		const struct frame_event *ev = &tr->events[i];
		int rc;

		if (ev->kind == FRAME_THROW) {
			i = throw_frames(prog, &bi, tr, i, v, &n, unmapped);
			continue;
		}
		rc = frames__virtual_edge(prog, &bi, ev->vaddr,
					  ev->kind == FRAME_ENTRY ? FRAME_ENTERED : FRAME_LEFT,
					  ev->activation, &v[n]);
		if (rc == 1)
			n++;
		else if (rc < 0)
			(*unmapped)++;
	}
	block_index__free(&bi);
	*vout = v;
	*nout = n;
	return 0;
}

static int cmp_ve_func(const void *a, const void *b)
{
	const struct virtual_edge *x = a, *y = b;

	return x->func < y->func ? -1 : x->func > y->func;
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "placement", required_argument, NULL, 'p' },
		{ "weights", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = "edgeprof.data", *weights = NULL;
	struct placement_options popt = { .mode = PLACEMENT_CHORDS };
	char binary[PATH_MAX];
	struct elf_image img = { .fd = -1 };
	struct cfg_program prog = { 0 };
	struct placement pl = { 0 };
	struct run_weights rw = { 0 };
	struct tracer_result tr = { 0 };
	struct run_ctx ctx = { 0 };
	struct func_counts *counts = NULL;
	struct virtual_edge *ve = NULL;
	struct srcline *lines = NULL;
	uint64_t *counters = NULL;
	size_t nve = 0, unmapped = 0, i, j, nviol = 0;
	int opt, status = EXIT_INPUT, err;
	bool written = false;

	optind = 1;
	opterr = 0; /* one message per error: ours, not getopt's too */
	while ((opt = getopt_long(argc, argv, "+:o:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			out = optarg;
			break;
		case 'p':
			if (strcmp(optarg, "chords") == 0)
				popt.mode = PLACEMENT_CHORDS;
			else if (strcmp(optarg, "naive") == 0)
				popt.mode = PLACEMENT_NAIVE;
			else
				return usage_error("run", "unknown placement '%s' (chords or naive)",
						   optarg);
			break;
		case 'w':
			weights = optarg;
			break;
		case 'h':
			fputs(run_usage, stdout);
			return EXIT_OK;
		case ':':
			return usage_error("run", "option '%s' needs an argument", argv[optind - 1]);
		default:
			if (optopt && strncmp(argv[optind - 1], "--", 2))
				return usage_error("run", "unknown option '-%c'", optopt);
			return usage_error("run", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("run", "no program to run");
	if (resolve_prog(argv[optind], binary, sizeof(binary)))
		return EXIT_INPUT;
	if (elf_image__open(&img, binary))
		return pr_lib_err(binary, cfg_strerror()), EXIT_INPUT;
	if (cfg_program__build(&prog, &img, NULL)) {
		pr_lib_err(binary, cfg_strerror());
		goto out;
	}
	calibration__load(&popt.costs);
	if (weights) {
		if (run_weights__load(&rw, weights, &img, &prog))
			goto out;
		popt.weights = run_weights__get;
		popt.weights_ctx = &rw;
	}
	if (placement__plan(&pl, &prog, &popt)) {
		pr_err("'%s': out of memory planning probes", binary);
		goto out;
	}
	if (pl.ncounters >= EP_MAX_COUNTERS) {
		pr_err("'%s': %u counters needed, at most %llu supported", binary, pl.ncounters,
		       (unsigned long long)EP_MAX_COUNTERS);
		goto out;
	}
	/* Room for a plan made again without refused sites (see attach_probes). */
	ctx.capacity = pl.ncounters + pl.ncounters / 2 + 1024;
	if (probes__open(&ctx.probes, ctx.capacity))
		goto out;
	ctx.binary = binary;
	ctx.img = &img;
	ctx.prog = &prog;
	ctx.pl = &pl;
	ctx.popt = &popt;
	pr_info("%zu functions (%u with chords, %u block counts only, %u excluded), %zu probe sites, %u counters",
		prog.nfuncs, pl.nchord_funcs, pl.nnaive_funcs, pl.nexcluded_funcs, pl.nsites,
		pl.ncounters);
	err = tracer__run(binary, &argv[optind], img.build_id,
			  &(struct tracer_hooks){ .started = attach_probes, .ctx = &ctx,
						  .early_stop = early_stop_site(&prog, &pl),
						  .load_vaddr = img.segs[0].vaddr - img.segs[0].offset },
			  &tr);
	if (err)
		goto out;
	counters = calloc(ctx.capacity + 1, sizeof(*counters));
	if (!counters || probes__read(ctx.probes, counters)) {
		pr_err("cannot read the counters");
		goto out_status;
	}
	/* Indirect sites: their counters are the targets their jumps took. */
	ctx.counters = counters;
	ctx.indirect_site = malloc((pl.nsites + 1) * sizeof(*ctx.indirect_site));
	if (!ctx.indirect_site)
		goto out_status;
	for (i = 0; i < pl.nsites; i++)
		ctx.indirect_site[i] = UINT32_MAX;
	for (i = 0; i < pl.nsites; i++)
		if (pl.sites[i].kind == SITE_INDIRECT && pl.sites[i].ordinal < pl.nsites) {
			ctx.indirect_site[pl.sites[i].ordinal] = (uint32_t)i;
			if (pl.sites[i].ordinal + 1 > ctx.nindirect)
				ctx.nindirect = pl.sites[i].ordinal + 1;
		}
	if (ctx.nindirect && probes__read_indirect(ctx.probes, fold_indirect, &ctx))
		goto out_status;
	if (ctx.unmatched)
		pr_warn("%llu indirect jumps went to targets that are no edge of the CFG: counts of their functions are not exact",
			(unsigned long long)ctx.unmatched);
	if (probes__lost_forks(ctx.probes))
		pr_warn("%llu forked processes could not be counted (too many processes)",
			(unsigned long long)probes__lost_forks(ctx.probes));
	probes__close(ctx.probes);
	ctx.probes = NULL;
	if (frames_to_virtual(&prog, &tr, &ve, &nve, &unmapped))
		goto out_status;
	if (nve)
		qsort(ve, nve, sizeof(*ve), cmp_ve_func);
	counts = calloc(prog.nfuncs ? prog.nfuncs : 1, sizeof(*counts));
	if (!counts)
		goto out_status;
	for (i = 0, j = 0; i < prog.nfuncs; i++) {
		size_t k = j;

		while (j < nve && ve[j].func == i)
			j++;
		if (pl.funcs[i].status == PLAN_EXCLUDED)
			continue;
		if (propagate__func(&prog.funcs[i], i, &pl, counters, &ve[k], j - k, &counts[i]))
			goto out_status;
		nviol += counts[i].nviolations;
	}
	if (srcline__open(&lines, &img))
		lines = NULL;
	if (profile__write(out, &(struct profile_input){
					.prog = &prog, .pl = &pl, .counters = counters,
					.counts = counts, .costs = &popt.costs, .lines = lines,
					.argv = &argv[optind], .wait_status = tr.wait_status,
					.seconds = tr.seconds, .nprocesses = tr.nprocesses,
					.nthreads = tr.nthreads,
					.unwind_failures = tr.unwind_failures, .nvirtual = nve,
					.ve = ve }))
		goto out_status;
	if (nviol)
		pr_warn("%zu blocks break flow conservation (frames left by longjmp or exceptions, or unwinding failed %u times): their functions' counts are not exact, see 'edgeprof report'",
			nviol, tr.unwind_failures);
	if (unmapped)
		pr_warn("%zu unwound frames were not in any recovered block", unmapped);
	pr_info("profile written to '%s'", out);
	written = true;
out_status:
	/* PROG's own status; a profile that could not be made turns success into failure. */
	if (WIFEXITED(tr.wait_status))
		status = WEXITSTATUS(tr.wait_status);
	else if (WIFSIGNALED(tr.wait_status))
		status = 128 + WTERMSIG(tr.wait_status);
	if (!written && status == EXIT_OK)
		status = EXIT_INPUT;
out:
	if (lines)
		srcline__close(lines);
	probes__close(ctx.probes);
	for (i = 0; counts && i < prog.nfuncs; i++)
		func_counts__release(&counts[i]);
	free(counts);
	free(counters);
	free(ctx.indirect_site);
	free(ve);
	tracer_result__release(&tr);
	run_weights__free(&rw);
	placement__free(&pl);
	cfg_program__free(&prog);
	elf_image__close(&img);
	return status;
}
