/*
 * `edgeprof report [FILE] [--json] [--top N]`: reads a profile (default ./edgeprof.data) and
 * prints a summary of the run and its probes, the hottest functions, blocks and edges, and the
 * functions whose flow conservation failed; or, with --json, every profiled function's block
 * and edge counts streamed one function at a time. Needs only the profile, not the binary.
 * With --html DIR it writes the HTML pages of user/report/html_report.h instead.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "user/util/json_out.h"
#include "user/proc/libs.h"
#include "user/builtin.h"
#include "user/util/log.h"
#include "user/profile/profile.h"
#include "user/report/html_report.h"
#include "user/report/time_report.h"

#define DEFAULT_TOP 20
#define MAX_TOP 1000000
#define MAX_VIOLATIONS_SHOWN 8 /* vertices listed per function in text */

struct report_opts {
	const char *file;
	const char *lib;  /* --lib: report this library's section only */
	bool json;
	unsigned long top;
	bool time;
	struct time_opts t;
	struct html_report_opts html; /* html.dir set: --html */
};

static void report_usage(FILE *out)
{
	fprintf(out,
		"usage: edgeprof report [FILE] [--json] [--top N] [--lib NAME]\n"
		"       edgeprof report --html DIR [--top N] [--lib NAME] [--binary PATH]\n"
		"                       [--source-map OLD=NEW]... [FILE]\n"
		"       edgeprof report --time [--cost insns|cycles|COSTFILE] [--loop-stats FILE]\n"
		"                       [--loop-model product|independent]\n"
		"                       [--binary PATH] [--json] [--top N] [--fcdg FUNCTION [--dot]]\n"
		"                       [FILE]\n"
		"\n"
		"Shows the profile recorded by 'edgeprof run': a summary of the run and of the\n"
		"probes, then the hottest functions, blocks and edges.\n"
		"\n"
		"  FILE           the profile (default ./" PROFILE_DEFAULT_PATH ")\n"
		"\n"
		"Options:\n"
		"  --json         print every profiled function's block and edge counts as JSON\n"
		"  --top N        show N functions, blocks and edges each (default %d; text and --html)\n"
		"  --html DIR     write HTML pages into DIR instead (made, or replaced when it\n"
		"                 holds an earlier edgeprof HTML report or nothing; written\n"
		"                 beside it and renamed into place): index.html with the run's\n"
		"                 summary and the N hottest functions (--top, default %d), and a\n"
		"                 page for each with its CFG as a heat map drawn by Graphviz's\n"
		"                 dot (needs the graphviz package), its disassembly and its\n"
		"                 source lines with their counts (disassembly and source need the\n"
		"                 binary, --binary if it moved; source needs -g and readable\n"
		"                 files). Self-contained: no script, nothing loaded from elsewhere\n"
		"  --source-map OLD=NEW  with --html: read a source file whose path starts with\n"
		"                 OLD from NEW followed by the rest (sources that moved;\n"
		"                 repeatable)\n"
		"  --lib NAME     only the section of a shared library profiled with --lib (a\n"
		"                 path or the start of its file name); by default every section\n"
		"  --time         average time per invocation and its standard deviation, per\n"
		"                 function and loop (Sarkar 1989, over the forward control\n"
		"                 dependence graph), and the counters naive / Sarkar / chords;\n"
		"                 needs the profiled binary (path and build-id from the profile)\n"
		"  --cost M       the cost of an instruction: insns (1 each), cycles (default: a\n"
		"                 per-class table) or a JSON file {\"base\":\"insns\"|\"cycles\",\n"
		"                 \"classes\":{CLASS:COST},\"external\":{NAME:COST},\n"
		"                 \"external_default\":COST}\n"
		"  --loop-model M product (default: Sarkar's VAR(N x S), every iteration of a loop\n"
		"                 entry alike) or independent (iterations i.i.d.: a random sum)\n"
		"  --loop-stats F trip-count moments {\"loops\":[{\"func\",\"header\",\"entries\",\n"
		"                 \"sum\",\"sumsq\"}]} (else loop trip variance is taken as 0)\n"
		"  --binary PATH  the profiled binary, if it moved (the build-id must match;\n"
		"                 --time and --html)\n"
		"  --fcdg F       with --time: show function F's FCDG node by node (--dot: Graphviz)\n"
		"  -v, --verbose  more diagnostics on stderr\n"
		"  -q, --quiet    errors only on stderr\n"
		"  -h, --help     show this help\n"
		"\n"
		"Addresses are ELF virtual addresses. Functions excluded, with block counts only\n"
		"or not exact are listed with the reason and what they executed (--json:\n"
		"\"inexact\"); counts of functions listed under 'violations' are not exact. Exit\n"
		"status: 0 success, 1 bad profile (or --html: DIR or the pages cannot be\n"
		"written, dot failed), 2 bad command line.\n",
		DEFAULT_TOP, DEFAULT_TOP);
}

/* Parses the command line into O. Returns -1 to go on, else the exit status to return. */
static int parse_args(int argc, char **argv, struct report_opts *o)
{
	enum { OPT_LIB = 256, OPT_LOOP_MODEL, OPT_COST, OPT_FCDG, OPT_LOOP_STATS, OPT_BINARY,
	       OPT_TOP, OPT_HTML, OPT_SOURCE_MAP };
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "lib", required_argument, NULL, OPT_LIB },
		{ "time", no_argument, NULL, 't' },
		{ "dot", no_argument, NULL, 'd' },
		{ "loop-model", required_argument, NULL, OPT_LOOP_MODEL },
		{ "cost", required_argument, NULL, OPT_COST },
		{ "fcdg", required_argument, NULL, OPT_FCDG },
		{ "loop-stats", required_argument, NULL, OPT_LOOP_STATS },
		{ "binary", required_argument, NULL, OPT_BINARY },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "html", required_argument, NULL, OPT_HTML },
		{ "source-map", required_argument, NULL, OPT_SOURCE_MAP },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt, li = -1, err;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":hvq", opts, &li)) != -1) {
		if (optarg && !*optarg && opt != OPT_TOP && li >= 0)
			return usage_error("report", "--%s needs an argument", opts[li].name);
		switch (opt) {
		case 'j':
			o->json = true;
			break;
		case OPT_LIB:
			o->lib = optarg;
			break;
		case 't':
			o->time = true;
			break;
		case 'd':
			o->t.dot = true;
			break;
		case OPT_LOOP_MODEL:
			if (strcmp(optarg, "product") && strcmp(optarg, "independent"))
				return usage_error("report", "--loop-model needs product or "
						   "independent");
			o->t.iid_loops = !strcmp(optarg, "independent");
			o->t.loop_model = true;
			break;
		case OPT_COST:
			o->t.cost = optarg;
			break;
		case OPT_FCDG:
			o->t.fcdg = optarg;
			break;
		case OPT_LOOP_STATS:
			o->t.loop_stats = optarg;
			break;
		case OPT_BINARY:
			o->t.binary = optarg;
			break;
		case OPT_TOP:
			if (!parse_ulong(optarg, MAX_TOP, &o->top))
				return usage_error("report", "--top: '%s' is not a number from 0 "
						   "to %d", optarg, MAX_TOP);
			break;
		case OPT_HTML:
			o->html.dir = optarg;
			break;
		case OPT_SOURCE_MAP:
			err = source_maps__add(&o->html.source_maps, optarg);
			if (err == -E2BIG)
				return usage_error("report", "--source-map: at most %d",
						   SOURCE_MAPS_MAX);
			if (err)
				return usage_error("report", "--source-map: '%s' is not OLD=NEW",
						   optarg);
			break;
		case 'v':
		case 'q':
			log__apply_option(opt);
			break;
		case 'h':
			report_usage(stdout);
			return EXIT_OK;
		default:
			return getopt_error("report", opt, argv);
		}
	}
	if (optind < argc)
		o->file = argv[optind++];
	if (optind < argc)
		return usage_error("report", "unexpected argument '%s'", argv[optind]);
	if (o->html.dir && (o->time || o->json))
		return usage_error("report", "--html goes with neither --time nor --json");
	if (o->html.source_maps.n && !o->html.dir)
		return usage_error("report", "--source-map needs --html");
	if (!o->time && o->t.binary && !o->html.dir)
		return usage_error("report", "--binary needs --time or --html");
	if (!o->time && (o->t.cost || o->t.fcdg || o->t.loop_stats || o->t.dot ||
			 o->t.loop_model))
		return usage_error("report", "--cost, --fcdg, --dot, --loop-model and --loop-stats "
				   "need --time");
	if (o->t.dot && !o->t.fcdg)
		return usage_error("report", "--dot needs --fcdg FUNCTION");
	if (o->t.cost && strcmp(o->t.cost, "insns") && strcmp(o->t.cost, "cycles") &&
	    access(o->t.cost, R_OK))
		return usage_error("report", "--cost: '%s' is neither insns, cycles nor a "
				   "readable file", o->t.cost);
	if (!o->file)
		o->file = PROFILE_DEFAULT_PATH;
	return -1;
}

static double pct(uint64_t part, uint64_t total)
{
	return total ? 100.0 * (double)part / (double)total : 0.0;
}

/* --- text ---------------------------------------------------------------------------------- */

/* Prints ARGV as a shell would need it: words with special characters single-quoted. */
static void print_command(FILE *out, char **argv, size_t argc)
{
	if (!argc) {
		fputs("-", out);
		return;
	}
	for (size_t i = 0; i < argc; i++) {
		const char *s = argv[i];

		if (i)
			fputc(' ', out);
		if (*s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				 "0123456789_-+=./:,@%") == strlen(s)) {
			fputs(s, out);
			continue;
		}
		fputc('\'', out);
		for (; *s; s++) {
			if (*s == '\'')
				fputs("'\\''", out);
			else
				fputc(*s, out);
		}
		fputc('\'', out);
	}
}

static void print_exit(FILE *out, int ws)
{
	if (WIFEXITED(ws)) {
		fprintf(out, "exited with status %d", WEXITSTATUS(ws));
	} else if (WIFSIGNALED(ws)) {
		const char *name = sigabbrev_np(WTERMSIG(ws));

		fprintf(out, "killed by signal %d%s%s%s", WTERMSIG(ws), name ? " (SIG" : "",
			name ? name : "", name ? ")" : "");
	} else {
		fprintf(out, "wait status 0x%x", ws);
	}
}

/* One line per exec that replaced a profiled image (at most 5 of child processes). */
static void print_execs(FILE *out, const struct profile *p)
{
	size_t children = 0;

	for (size_t i = 0; i < p->nexecs; i++) {
		const struct profile_exec *e = &p->execs[i];

		if (!e->main && children++ >= 5)
			continue;
		if (e->main)
			fprintf(out, "exec:        the %s exec'd %s at %.3f s (pid %d): counts cover the image before the exec",
				p->attached ? "process" : "program", e->path ? e->path : "?", e->at,
				e->pid);
		else
			fprintf(out, "exec:        child process %d exec'd %s at %.3f s: its counts cover its image before the exec",
				e->pid, e->path ? e->path : "?", e->at);
		fputs(e->frames ? "\n" : "; its frames then were not followed (no call of execve seen): counts of the functions active then may not conserve flow\n",
		      out);
	}
	if (children > 5)
		fprintf(out, "exec:        and %zu more child processes exec'd (report --json lists them)\n",
			children - 5);
}

/* "file:line" of a block or function, or "-". */
static const char *where_str(const struct profile *p, uint32_t file, int line, char *buf,
			     size_t size)
{
	const char *f = profile__file(p, file);

	if (!f)
		return "-";
	if (line > 0)
		snprintf(buf, size, "%s:%d", f, line);
	else
		snprintf(buf, size, "%s", f);
	return buf;
}

/* One candidate of a hottest list: function index and block or edge index. */
struct hot {
	uint64_t count;
	uint64_t addr; /* tie-break, for a stable order */
	uint32_t func, id;
};

static int cmp_hot(const void *a, const void *b)
{
	const struct hot *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

enum hot_kind { HOT_FUNCS, HOT_BLOCKS, HOT_EDGES };

/* The candidates of list KIND with a known non-zero count, sorted hottest first; *TOTAL is
 * the sum of every known count of that kind. Returns NULL (with *N 0) when there are none or
 * on allocation failure (*OOM set). */
static struct hot *collect(const struct profile *p, enum hot_kind kind, size_t *n,
			   uint64_t *total, bool *oom)
{
	size_t cap = 0, k = 0;
	struct hot *h;

	*n = 0;
	*total = 0;
	for (size_t i = 0; i < p->nfuncs; i++)
		cap += kind == HOT_FUNCS ? 1 : kind == HOT_BLOCKS ? p->funcs[i].nblocks :
			p->funcs[i].nedges;
	if (!cap)
		return NULL;
	h = malloc(cap * sizeof(*h));
	if (!h) {
		*oom = true;
		return NULL;
	}
	for (size_t i = 0; i < p->nfuncs; i++) {
		const struct profile_func *f = &p->funcs[i];

		if (f->status == PLAN_EXCLUDED)
			continue;
		if (kind == HOT_FUNCS) {
			*total += (uint64_t)f->block_total;
			if (f->block_total > 0)
				h[k++] = (struct hot){ (uint64_t)f->block_total, f->addr,
						       (uint32_t)i, 0 };
			continue;
		}
		for (uint32_t j = 0; j < (kind == HOT_BLOCKS ? f->nblocks : f->nedges); j++) {
			int64_t c = kind == HOT_BLOCKS ? f->blocks[j].count : f->edges[j].count;
			uint64_t addr = kind == HOT_BLOCKS ? f->blocks[j].addr :
							     f->blocks[f->edges[j].from].addr;

			if (c <= 0)
				continue;
			*total += (uint64_t)c; /* wraps only for forged edge counts */
			h[k++] = (struct hot){ (uint64_t)c, addr, (uint32_t)i, j };
		}
	}
	qsort(h, k, sizeof(*h), cmp_hot);
	*n = k;
	return h;
}

static void print_hot_funcs(FILE *out, const struct profile *p, const struct hot *h, size_t n,
			    uint64_t total)
{
	char count[24], where[320];

	fprintf(out, "\nHottest functions (by block executions; %" PRIu64 " in total):\n", total);
	fprintf(out, "  %14s %16s %8s  %-32s %s\n", "INVOCATIONS", "BLOCK EXECS", "%",
		"FUNCTION", "SOURCE");
	for (size_t i = 0; i < n; i++) {
		const struct profile_func *f = &p->funcs[h[i].func];
		uint32_t file = PROFILE_NO_FILE;
		int line = 0;

		if (f->file != PROFILE_NO_FILE) {
			file = f->file;
			line = f->line;
		} else if (f->entry_block < f->nblocks) {
			file = f->blocks[f->entry_block].file;
			line = f->blocks[f->entry_block].line;
		}
		if (f->count == COUNT_UNKNOWN)
			snprintf(count, sizeof(count), "?");
		else
			snprintf(count, sizeof(count), "%" PRId64, f->count);
		fprintf(out, "  %14s %16" PRIu64 " %7.2f%%  %-32s %s%s\n", count, h[i].count,
			pct(h[i].count, total), f->name, where_str(p, file, line, where,
								  sizeof(where)),
			f->status == PLAN_NAIVE ? "  (block counters)" : "");
	}
}

static void print_hot_blocks(FILE *out, const struct profile *p, const struct hot *h,
			     size_t n, uint64_t total)
{
	char a[HEXLEN], where[320];

	fprintf(out, "\nHottest blocks (%" PRIu64 " executions in total):\n", total);
	fprintf(out, "  %16s %8s  %-18s %-40s %s\n", "COUNT", "%", "BLOCK", "FUNCTION+OFFSET",
		"SOURCE");
	for (size_t i = 0; i < n; i++) {
		const struct profile_func *f = &p->funcs[h[i].func];
		const struct profile_block *b = &f->blocks[h[i].id];
		char fo[320];

		if (b->addr >= f->addr)
			snprintf(fo, sizeof(fo), "%s+0x%" PRIx64, f->name, b->addr - f->addr);
		else
			snprintf(fo, sizeof(fo), "%s-0x%" PRIx64, f->name, f->addr - b->addr);
		fprintf(out, "  %16" PRIu64 " %7.2f%%  %-18s %-40s %s\n", h[i].count,
			pct(h[i].count, total), jout_addr(a, b->addr), fo,
			where_str(p, b->file, b->line, where, sizeof(where)));
	}
}

static void print_hot_edges(FILE *out, const struct profile *p, const struct hot *h, size_t n,
			    uint64_t total)
{
	char from[HEXLEN], to[HEXLEN], ft[64];

	fprintf(out, "\nHottest edges (%" PRIu64 " traversals in total):\n", total);
	fprintf(out, "  %16s %8s  %-12s %-40s %s\n", "COUNT", "%", "KIND", "FROM -> TO",
		"FUNCTION");
	for (size_t i = 0; i < n; i++) {
		const struct profile_func *f = &p->funcs[h[i].func];
		const struct profile_edge *e = &f->edges[h[i].id];

		jout_addr(from, f->blocks[e->from].addr);
		if (e->to == f->nblocks)
			snprintf(to, sizeof(to), "exit");
		else
			jout_addr(to, f->blocks[e->to].addr);
		snprintf(ft, sizeof(ft), "%s -> %s", from, to);
		fprintf(out, "  %16" PRIu64 " %7.2f%%  %-12s %-40s %s\n", h[i].count,
			pct(h[i].count, total), cfg_edge_kind__name(e->kind), ft, f->name);
	}
}

/* Whether F belongs in the list of excluded or inexact functions: excluded, block counts
 * only (unless every function is, by request), with a recorded cause, or violations. */
static bool is_inexact(const struct profile *p, const struct profile_func *f)
{
	if (f->status == PLAN_EXCLUDED || f->ncauses || f->nviolations)
		return true;
	return f->status == PLAN_NAIVE && p->mode != PLACEMENT_NAIVE;
}

/* The execs whose frames of the old image could not be followed. */
static unsigned execs_unfollowed(const struct profile *p)
{
	unsigned n = 0;

	for (size_t i = 0; i < p->nexecs; i++)
		n += !p->execs[i].frames;
	return n;
}

/* Why F's violations happened, in words (see profile__violation_cause). */
static const char *violation_cause(const struct profile *p, const struct profile_func *f,
				   char *buf, size_t size)
{
	return profile__violation_cause(f->causes, f->ncauses, p->unwind_failures,
					execs_unfollowed(p), p->unmapped_frames, buf, size);
}

/* What F executed, as far as known: its invocations, else its entry block's count, else
 * "unknown". */
static const char *executions(const struct profile_func *f, char *buf, size_t size)
{
	int64_t entry = f->entry_block < f->nblocks ? f->blocks[f->entry_block].count :
						      COUNT_UNKNOWN;

	if (f->status == PLAN_EXCLUDED)
		snprintf(buf, size, "executions unknown (not probed)");
	else if (f->status == PLAN_NAIVE && entry != COUNT_UNKNOWN && f->nviolations)
		snprintf(buf, size, "entry block executed %" PRId64 " time%s (measured), %" PRId64
			 " block executions", entry, entry == 1 ? "" : "s", f->block_total);
	else if (f->nviolations)
		snprintf(buf, size, "executions not known exactly (%" PRId64 " block executions "
			 "by the propagated counts)", f->block_total);
	else if (f->count != COUNT_UNKNOWN)
		snprintf(buf, size, "invoked %" PRId64 " time%s, %" PRId64 " block executions",
			 f->count, f->count == 1 ? "" : "s", f->block_total);
	else if (entry != COUNT_UNKNOWN)
		snprintf(buf, size, "entry block executed %" PRId64 " time%s, %" PRId64
			 " block executions", entry, entry == 1 ? "" : "s", f->block_total);
	else
		snprintf(buf, size, "executions unknown");
	return buf;
}

static void print_inexact(FILE *out, const struct profile *p)
{
	char a[HEXLEN], buf[1024], ex[128], one[160];
	size_t n = 0;

	for (size_t i = 0; i < p->nfuncs; i++)
		n += is_inexact(p, &p->funcs[i]);
	if (!n)
		return;
	fprintf(out, "\nExcluded, block counts only, or not exact (%zu function%s):\n", n,
		n == 1 ? "" : "s");
	for (size_t i = 0; i < p->nfuncs; i++) {
		const struct profile_func *f = &p->funcs[i];
		size_t len = 0;

		if (!is_inexact(p, f))
			continue;
		buf[0] = '\0';
		if (f->reason)
			len += (size_t)snprintf(buf, sizeof(buf), "%s", f->reason);
		for (uint32_t k = 0; k < f->ncauses && len < sizeof(buf); k++)
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", len ? "; " : "",
						profile__cause_text(&f->causes[k], one, sizeof(one)));
		if (f->nviolations && len < sizeof(buf))
			len += (size_t)snprintf(buf + len, sizeof(buf) - len,
						"%sflow conservation fails at %" PRIu32 " block%s",
						len ? "; " : "", f->nviolations,
						f->nviolations == 1 ? "" : "s");
		if (f->nviolations && !f->ncauses && len < sizeof(buf))
			snprintf(buf + len, sizeof(buf) - len, " (%s)",
				 violation_cause(p, f, one, sizeof(one)));
		fprintf(out, "  %-32s %-18s %-9s %s; %s\n", f->name, jout_addr(a, f->addr),
			f->nviolations ? "NOT exact" : profile__status_name(f->status), buf,
			executions(f, ex, sizeof(ex)));
	}
}

static void print_violations(FILE *out, const struct profile *p)
{
	size_t nfuncs = 0;
	char a[HEXLEN], why[1024];

	for (size_t i = 0; i < p->nfuncs; i++)
		nfuncs += p->funcs[i].nviolations != 0;
	if (!nfuncs)
		return;
	fprintf(out,
		"\nVIOLATIONS: flow conservation fails in %zu function%s; the counts of %s are "
		"NOT exact:\n",
		nfuncs, nfuncs == 1 ? "" : "s", nfuncs == 1 ? "this function" : "these functions");
	for (size_t i = 0; i < p->nfuncs; i++) {
		const struct profile_func *f = &p->funcs[i];

		if (!f->nviolations)
			continue;
		fprintf(out, "  %s (%s):", f->name, jout_addr(a, f->addr));
		for (uint32_t k = 0; k < f->nviolations && k < MAX_VIOLATIONS_SHOWN; k++) {
			uint32_t v = f->violations[k];

			fprintf(out, "%s %s", k ? "," : "",
				v == f->nblocks ? "exit" : jout_addr(a, f->blocks[v].addr));
		}
		if (f->nviolations > MAX_VIOLATIONS_SHOWN)
			fprintf(out, " and %" PRIu32 " more (see --json)",
				f->nviolations - MAX_VIOLATIONS_SHOWN);
		fprintf(out, "\n    cause: %s\n", violation_cause(p, f, why, sizeof(why)));
	}
}

static const char *fmt_ns(double ns, char *buf, size_t size)
{
	if (ns >= 1e9)
		snprintf(buf, size, "%.2f s", ns / 1e9);
	else if (ns >= 1e6)
		snprintf(buf, size, "%.2f ms", ns / 1e6);
	else if (ns >= 1e3)
		snprintf(buf, size, "%.2f us", ns / 1e3);
	else
		snprintf(buf, size, "%.0f ns", ns);
	return buf;
}

/* One line of the probes summary: the sites of one mechanism (IN_PROCESS: patched counters,
 * else uprobes), per class, their hits and estimated time; nothing when it has no sites. */
static void print_mechanism(FILE *out, const struct profile *p, bool in_process)
{
	uint64_t sites = 0, hits = 0;
	double ns = 0;
	char buf[32];
	bool first = true;

	for (unsigned k = 0; k < PROBE_CLASS_COUNT; k++) {
		if (probe_class__in_process(k) != in_process)
			continue;
		sites += p->by_class[k].sites;
		hits += p->by_class[k].hits;
		ns += p->by_class[k].est_ns;
	}
	if (!sites)
		return;
	fprintf(out, "  %-12s %" PRIu64 " site%s (", in_process ? "in process:" : "uprobes:",
		sites, sites == 1 ? "" : "s");
	for (unsigned k = 0; k < PROBE_CLASS_COUNT; k++) {
		if (probe_class__in_process(k) != in_process || !p->by_class[k].sites)
			continue;
		fprintf(out, "%s%s %" PRIu64, first ? "" : ", ", profile__class_name(k),
			p->by_class[k].sites);
		first = false;
	}
	fprintf(out, "), %" PRIu64 " hits, estimated %s\n", hits, fmt_ns(ns, buf, sizeof(buf)));
}

static int report_text(FILE *out, const struct profile *p, const char *file, size_t top)
{
	static const enum hot_kind kinds[] = { HOT_FUNCS, HOT_BLOCKS, HOT_EDGES };
	char buf[64];
	size_t vfuncs = 0;

	fprintf(out, "profile:     %s\n", file);
	fprintf(out, "binary:      %s\n", p->binary_path);
	fprintf(out, "build-id:    %s\n", p->build_id[0] ? p->build_id : "(none)");
	fprintf(out, "command:     ");
	print_command(out, p->argv, p->argc);
	if (p->attached) {
		/* A window of a running process: it ran on, unless it ended in the window (then
		 * it was never held to detach). */
		fprintf(out, "\nattached:    process %d for %.3f s, held %.2f ms to attach, ", p->pid,
			p->seconds, p->held_attach * 1e3);
		if (p->held_detach > 0)
			fprintf(out, "%.2f ms to detach; it ran on", p->held_detach * 1e3);
		else
			print_exit(out, p->wait_status);
		fprintf(out, "; %u thread%s created\n", p->nthreads, p->nthreads == 1 ? "" : "s");
	} else {
		fprintf(out, "\nexit:        ");
		print_exit(out, p->wait_status);
		fprintf(out, " after %.3f s; %u process%s, %u thread%s\n", p->seconds,
			p->nprocesses, p->nprocesses == 1 ? "" : "es", p->nthreads,
			p->nthreads == 1 ? "" : "s");
	}
	print_execs(out, p);
	if (p->unwind_failures || p->nvirtual)
		fprintf(out, "unwinding:   %" PRIu64 " virtual edge%s, %u unwind failure%s\n",
			p->nvirtual, p->nvirtual == 1 ? "" : "s", p->unwind_failures,
			p->unwind_failures == 1 ? "" : "s");
	if (p->lj_pseudo || p->lj_unwound)
		fprintf(out, "longjmp:     %" PRIu64 " pseudo-edges (derived by propagation, not measured): %" PRIu64 " frames left through a call, %" PRIu64 " second returns of setjmp; %" PRIu64 " longjmps unwound\n",
			p->lj_pseudo, p->lj_abandoned, p->lj_resumed, p->lj_unwound);
	fprintf(out, "placement:   %s; site costs (%s%s%s): stepped %.0f ns, emulated %.0f ns, "
		"nop5 %.0f ns, patch %.0f ns, patch-flags %.0f ns\n",
		p->mode == PLACEMENT_NAIVE ? "naive (one probe per block)" :
					     "chords (spanning tree)",
		p->costs.measured ? "measured" : "defaults, not calibrated",
		p->costs.measured && p->costs.date[0] ? " on " : "",
		p->costs.measured ? p->costs.date : "", p->costs.ns[PROBE_STEPPED],
		p->costs.ns[PROBE_EMULATED], p->costs.ns[PROBE_NOP5], p->costs.ns[PROBE_PATCH],
		p->costs.ns[PROBE_PATCH_FLAGS]);
	fprintf(out, "functions:   %" PRIu32 " exact (chords), %" PRIu32
		" with block counters (naive), %" PRIu32 " excluded%s\n",
		p->nchord_funcs, p->nnaive_funcs, p->nexcluded_funcs,
		p->nexcluded_funcs || (p->nnaive_funcs && p->mode != PLACEMENT_NAIVE) ?
		" (which and why: listed below)" : "");
	if (execs_unfollowed(p))
		fprintf(out, "exec:        the image was replaced %u time%s without its frames being "
			"followed\n", execs_unfollowed(p), execs_unfollowed(p) == 1 ? "" : "s");
	if (p->unmapped_frames)
		fprintf(out, "unwinding:   %" PRIu64 " unwound frame%s outside every recovered "
			"block\n", p->unmapped_frames, p->unmapped_frames == 1 ? " was" : "s were");
	fprintf(out, "probes:      %zu site%s, %" PRIu64 " hit, %" PRIu64
		" hits in total, estimated counting time %s\n",
		p->nsites, p->nsites == 1 ? "" : "s", p->sites_hit, p->hits,
		fmt_ns(p->est_trap_ns, buf, sizeof(buf)));
	print_mechanism(out, p, true);
	print_mechanism(out, p, false);
	fprintf(out, "naive:       one probe per block would have taken %" PRIu64 " hits",
		p->naive_hits);
	if (p->hits)
		fprintf(out, ", %.2fx as many\n", (double)p->naive_hits / (double)p->hits);
	else
		fprintf(out, "\n");
	for (size_t i = 0; i < p->nfuncs; i++)
		vfuncs += p->funcs[i].nviolations != 0;
	if (p->nviolations)
		fprintf(out, "violations:  %" PRIu64 " in %zu function%s: their counts are NOT "
			"exact (listed below)\n",
			p->nviolations, vfuncs, vfuncs == 1 ? "" : "s");
	else if (p->unwind_failures)
		fprintf(out, "violations:  0 (flow is conserved everywhere), but %u stack%s could "
			"not be unwound fully: functions with frames beyond it may be inexact\n",
			p->unwind_failures, p->unwind_failures == 1 ? "" : "s");
	else
		fprintf(out, "violations:  0 (flow is conserved everywhere)\n");

	for (size_t k = 0; top && k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		bool oom = false;
		uint64_t total;
		size_t n;
		struct hot *h = collect(p, kinds[k], &n, &total, &oom);

		if (oom)
			return -ENOMEM;
		if (n > top)
			n = top;
		if (kinds[k] == HOT_FUNCS)
			print_hot_funcs(out, p, h, n, total);
		else if (kinds[k] == HOT_BLOCKS)
			print_hot_blocks(out, p, h, n, total);
		else
			print_hot_edges(out, p, h, n, total);
		free(h);
	}
	print_inexact(out, p);
	print_violations(out, p);
	return 0;
}

/* --- JSON ---------------------------------------------------------------------------------- */

static json_t *jcount(int64_t c)
{
	return c == COUNT_UNKNOWN ? json_null() : json_integer(c);
}

static json_t *jvertex(const struct profile_func *f, uint32_t v)
{
	return v >= f->nblocks ? json_string("exit") : jout_hex(f->blocks[v].addr);
}

static void jline(json_t *o, const struct profile *p, uint32_t file, int line, int *err)
{
	if (file == PROFILE_NO_FILE)
		return;
	jout_set(o, "file", json_string(profile__file(p, file)), err);
	if (line > 0)
		jout_set(o, "line", json_integer(line), err);
}

static json_t *json_func(const struct profile *p, const struct profile_func *f)
{
	json_t *o = json_object(), *blocks = json_array(), *edges = json_array(),
	       *viol = json_array();
	int err = 0;

	if (!o || !blocks || !edges || !viol) {
		json_decref(o);
		json_decref(blocks);
		json_decref(edges);
		json_decref(viol);
		return NULL;
	}
	jout_set(o, "name", json_string(f->name), &err);
	jout_set(o, "addr", jout_hex(f->addr), &err);
	jout_set(o, "status", json_string(profile__status_name(f->status)), &err);
	jout_set(o, "count", jcount(f->count), &err);
	jline(o, p, f->file, f->line, &err);
	for (uint32_t b = 0; b < f->nblocks; b++) {
		const struct profile_block *pb = &f->blocks[b];
		json_t *bo = json_object();

		if (!bo) {
			err++;
			break;
		}
		jout_set(bo, "addr", jout_hex(pb->addr), &err);
		jout_set(bo, "end", jout_hex(pb->end), &err);
		jout_set(bo, "count", jcount(pb->count), &err);
		jline(bo, p, pb->file, pb->line, &err);
		jout_push(blocks, bo, &err);
	}
	for (uint32_t e = 0; e < f->nedges; e++) {
		const struct profile_edge *pe = &f->edges[e];
		json_t *eo = json_object();

		if (!eo) {
			err++;
			break;
		}
		jout_set(eo, "from", jvertex(f, pe->from), &err);
		jout_set(eo, "to", jvertex(f, pe->to), &err);
		jout_set(eo, "kind", json_string(cfg_edge_kind__name(pe->kind)), &err);
		jout_set(eo, "count", jcount(pe->count), &err);
		jout_set(eo, "measured", json_boolean(pe->measured), &err);
		jout_push(edges, eo, &err);
	}
	for (uint32_t k = 0; k < f->nviolations; k++)
		jout_push(viol, jvertex(f, f->violations[k]), &err);
	if (f->nvirt) {
		json_t *va = json_array();

		for (uint32_t k = 0; va && k < f->nvirt; k++) {
			const struct profile_virtual *pv = &f->virt[k];

			jout_push(va, profile__virtual_json(jvertex(f, pv->from), jvertex(f, pv->to),
							pv->count, pv->stopped_at, pv->resumed_at),
			      &err);
		}
		if (va)
			jout_set(o, "virtual", va, &err);
		else
			err++;
	}
	jout_set(o, "blocks", blocks, &err);
	jout_set(o, "edges", edges, &err);
	jout_set(o, "violations", viol, &err);
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The entry of "inexact" for F (NULL when out of memory). */
static json_t *json_inexact(const struct profile *p, const struct profile_func *f)
{
	json_t *o = json_object(), *ca = json_array();
	int64_t entry = f->entry_block < f->nblocks ? f->blocks[f->entry_block].count :
						      COUNT_UNKNOWN;
	char buf[1024];
	bool known;
	int err = 0;

	if (!o || !ca) {
		json_decref(o);
		json_decref(ca);
		return NULL;
	}
	jout_set(o, "name", json_string(f->name), &err);
	jout_set(o, "addr", jout_hex(f->addr), &err);
	jout_set(o, "status", json_string(profile__status_name(f->status)), &err);
	jout_set(o, "reason", f->reason ? json_string(f->reason) : json_null(), &err);
	for (uint32_t k = 0; k < f->ncauses; k++) {
		const struct profile_cause *c = &f->causes[k];
		json_t *co = json_object();

		if (!co) {
			err++;
			break;
		}
		jout_set(co, "cause", json_string(profile__cause_name(c->kind)), &err);
		if (c->kind == PCAUSE_UNRESOLVED_JUMP || c->kind == PCAUSE_BAD_CODE)
			jout_set(co, "addr", jout_hex(c->addr), &err);
		else
			jout_set(co, "count", json_integer((json_int_t)c->count), &err);
		jout_set(co, "text", json_string(profile__cause_text(c, buf, sizeof(buf))), &err);
		jout_push(ca, co, &err);
	}
	jout_set(o, "causes", ca, &err);
	jout_set(o, "violations", json_integer(f->nviolations), &err);
	jout_set(o, "violation_cause", f->nviolations ?
		 json_string(violation_cause(p, f, buf, sizeof(buf))) : json_null(), &err);
	/* Known: measured block counts (naive), or counts of a function that conserves flow. */
	known = f->status == PLAN_NAIVE || (f->status == PLAN_CHORDS && !f->nviolations);
	jout_set(o, "count", known && !f->nviolations ? jcount(f->count) : json_null(), &err);
	jout_set(o, "entry_count", known ? jcount(entry) : json_null(), &err);
	jout_set(o, "block_execs", known ? json_integer(f->block_total) : json_null(), &err);
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *json_head(const struct profile *p)
{
	json_t *o = json_object(), *bin = json_object(), *run = json_object(),
	       *argv = json_array(), *pl = json_object(), *costs = json_object();
	int err = 0;

	for (size_t i = 0; argv && i < p->argc; i++)
		jout_push(argv, json_string(p->argv[i]), &err);
	if (!o || !bin || !run || !pl) {
		json_decref(o);
		json_decref(bin);
		json_decref(run);
		json_decref(argv);
		json_decref(pl);
		json_decref(costs);
		return NULL;
	}
	jout_set(bin, "path", json_string(p->binary_path), &err);
	jout_set(bin, "build_id", p->build_id[0] ? json_string(p->build_id) : json_null(), &err);
	jout_set(o, "binary", bin, &err);
	jout_set(run, "argv", argv, &err);
	jout_set(run, "exit_code", WIFEXITED(p->wait_status) ?
		json_integer(WEXITSTATUS(p->wait_status)) : json_null(), &err);
	jout_set(run, "signal", WIFSIGNALED(p->wait_status) ?
		json_integer(WTERMSIG(p->wait_status)) : json_null(), &err);
	jout_set(run, "seconds", json_real(p->seconds), &err);
	jout_set(run, "unwind_failures", json_integer(p->unwind_failures), &err);
	jout_set(run, "unmapped_frames", json_integer((json_int_t)p->unmapped_frames), &err);
	if (p->nexecs)
		jout_set(run, "execs", profile_exec__json(p->execs, p->nexecs, &err), &err);
	jout_set(o, "run", run, &err);
	jout_set(pl, "mode", json_string(p->mode == PLACEMENT_NAIVE ? "naive" : "chords"), &err);
	jout_set(pl, "chords_functions", json_integer(p->nchord_funcs), &err);
	jout_set(pl, "naive_functions", json_integer(p->nnaive_funcs), &err);
	jout_set(pl, "excluded_functions", json_integer(p->nexcluded_funcs), &err);
	if (costs) {
		jout_set(costs, "stepped", json_real(p->costs.ns[PROBE_STEPPED]), &err);
		jout_set(costs, "emulated", json_real(p->costs.ns[PROBE_EMULATED]), &err);
		jout_set(costs, "nop5", json_real(p->costs.ns[PROBE_NOP5]), &err);
		jout_set(costs, "patch", json_real(p->costs.ns[PROBE_PATCH]), &err);
		jout_set(costs, "patch_flags", json_real(p->costs.ns[PROBE_PATCH_FLAGS]), &err);
		jout_set(costs, "source", json_string(p->costs.measured ? "measured" : "defaults"),
			 &err);
		jout_set(costs, "date", p->costs.measured && p->costs.date[0] ?
			 json_string(p->costs.date) : json_null(), &err);
		jout_set(pl, "site_costs", costs, &err);
	} else {
		err++;
	}
	jout_set(o, "placement", pl, &err);
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Dumps the members of object O (without its braces) and a trailing comma. */
static void dump_members(FILE *out, json_t *o)
{
	const char *key;
	json_t *v;

	json_object_foreach(o, key, v) {
		json_t *k = json_string(key);

		json_dumpf(k, out, JSON_ENCODE_ANY);
		json_decref(k);
		fputc(':', out);
		json_dumpf(v, out, JSON_COMPACT | JSON_ENCODE_ANY);
		fputs(",\n", out);
	}
}

static int report_json(FILE *out, const struct profile *p)
{
	json_t *head = json_head(p);
	bool first = true;

	if (!head)
		return -ENOMEM;
	fputc('{', out);
	dump_members(out, head);
	json_decref(head);
	fputs("\"functions\":[\n", out);
	for (size_t i = 0; i < p->nfuncs; i++) {
		const struct profile_func *f = &p->funcs[i];
		json_t *o;

		if (f->status == PLAN_EXCLUDED)
			continue;
		o = json_func(p, f);
		if (!o)
			return -ENOMEM;
		if (!first)
			fputs(",\n", out);
		first = false;
		json_dumpf(o, out, JSON_COMPACT);
		json_decref(o);
		if (ferror(out))
			return -EIO;
	}
	fputs("\n],\n\"inexact\":[\n", out);
	first = true;
	for (size_t i = 0; i < p->nfuncs; i++) {
		json_t *o;

		if (!is_inexact(p, &p->funcs[i]))
			continue;
		o = json_inexact(p, &p->funcs[i]);
		if (!o)
			return -ENOMEM;
		if (!first)
			fputs(",\n", out);
		first = false;
		json_dumpf(o, out, JSON_COMPACT);
		json_decref(o);
	}
	fprintf(out,
		"\n],\n\"probes\":{\"sites\":%zu,\"hits\":%" PRIu64 ",\"sites_hit\":%" PRIu64
		",\"est_trap_ns\":%.17g,\"naive_hits\":%" PRIu64 ",\"classes\":{",
		p->nsites, p->hits, p->sites_hit, p->est_trap_ns, p->naive_hits);
	for (unsigned k = 0, n = 0; k < PROBE_CLASS_COUNT; k++) {
		const struct profile_class_total *c = &p->by_class[k];

		if (!c->sites)
			continue;
		fprintf(out,
			"%s\"%s\":{\"mechanism\":\"%s\",\"sites\":%" PRIu64 ",\"hits\":%" PRIu64
			",\"est_ns\":%.17g}",
			n++ ? "," : "", profile__class_name(k),
			probe_class__in_process(k) ? "in-process" : "uprobe", c->sites, c->hits,
			c->est_ns);
	}
	fprintf(out, "}},\n\"violations\":%" PRIu64, p->nviolations);
	/* Libraries profiled with the binary: each a report of its own. */
	if (p->nlibs)
		fputs(",\n\"libraries\":[", out);
	for (size_t k = 0; k < p->nlibs; k++) {
		int err;

		if (k)
			fputs(",\n", out);
		err = report_json(out, &p->libs[k]);
		if (err)
			return err;
	}
	fputs(p->nlibs ? "]}\n" : "}\n", out);
	return 0;
}

/* Replaces *P by its library section matching NAME (a path, or the start of the file name),
 * releasing the rest. Returns 0, or -1 with one line when there is no such section. */
static int select_library(struct profile *p, const char *file, const char *name)
{
	for (size_t k = 0; k < p->nlibs; k++) {
		const char *path = p->libs[k].binary_path ? p->libs[k].binary_path : "";

		if (!strcmp(path, name) || (!strchr(name, '/') && libs__name_matches(name, path))) {
			struct profile lib = p->libs[k];

			memset(&p->libs[k], 0, sizeof(p->libs[k]));
			profile__release(p);
			*p = lib;
			return 0;
		}
	}
	profile__release(p);
	return pr_err("'%s': no library section for '%s'", file, name);
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o = { .top = DEFAULT_TOP };
	struct profile p;
	int ret, err;

	ret = parse_args(argc, argv, &o);
	if (ret >= 0)
		return ret;
	if (profile__read(o.file, &p))
		return EXIT_INPUT;
	if (o.lib && select_library(&p, o.file, o.lib))
		return EXIT_INPUT;
	if (p.nviolations)
		pr_warn("'%s': flow conservation fails at %" PRIu64 " vertices: the counts of the "
			"functions listed under violations are not exact", o.file, p.nviolations);
	if (o.html.dir) {
		o.html.binary = o.t.binary;
		o.html.top = o.top;
		ret = html_report__write(&p, o.file, &o.html) ? EXIT_INPUT : EXIT_OK;
		profile__release(&p);
		return ret;
	}
	if (o.time) {
		o.t.json = o.json;
		o.t.top = o.top;
		ret = time_report__run(stdout, &p, o.file, &o.t);
		profile__release(&p);
		return ret;
	}
	err = o.json ? report_json(stdout, &p) : report_text(stdout, &p, o.file, o.top);
	for (size_t k = 0; !o.json && !err && k < p.nlibs; k++) {
		printf("\n== library %s ==\n\n", p.libs[k].binary_path);
		err = report_text(stdout, &p.libs[k], o.file, o.top);
	}
	profile__release(&p);
	if (err == -ENOMEM) {
		pr_err("out of memory");
		return EXIT_INPUT;
	}
	return EXIT_OK;
}
