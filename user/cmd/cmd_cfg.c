/*
 * `edgeprof cfg BINARY [FUNCTION] [--dot] [--json] [--stats]`: loads an x86-64 ELF file,
 * recovers its control-flow graph, analyses dominators and loops, and prints the function
 * table, one function in detail, its DOT graph, JSON, or only the statistics with the time
 * spent in each phase. This file parses options and runs the phases; cfg_report.c prints.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "user/builtin.h"
#include "user/session/decode_cache.h"
#include "user/report/cfg_report.h"
#include "user/util/clock.h"
#include "user/util/log.h"

#include "cfg/callgraph.h"
#include "cfg/cfg.h"
#include "cfg/elf_image.h"
#include "cfg/error.h"
#include "cfg/srcline.h"

struct cfg_cmd_opts {
	const char *binary;
	const char *func;
	bool dot, json, stats;
};

/* Seconds per phase, as measured here (load, analyze, output) or by the library. */
struct cfg_times {
	double load, analyze, output;
};

static void cfg_usage(FILE *out)
{
	fprintf(out,
		"usage: edgeprof cfg BINARY [FUNCTION] [--dot] [--json] [--stats]\n"
		"\n"
		"Recovers the control-flow graph of an x86-64 ELF executable or shared object by\n"
		"recursive traversal from the function entries (symbols, or .dynsym and .eh_frame\n"
		"when stripped) and shows it.\n"
		"\n"
		"  BINARY         the ELF file\n"
		"  FUNCTION       a function name, or the hex address (0x...) of an entry or of any\n"
		"                 instruction in a function; without it, every function is listed\n"
		"\n"
		"Options:\n"
		"  --dot          print FUNCTION as a Graphviz digraph (needs FUNCTION)\n"
		"  --json         print JSON (every function, or FUNCTION)\n"
		"  --stats        print totals and the time of each phase (load, symbols, build,\n"
		"                 noreturn, analyze, output); alone, prints only the statistics\n"
		"  -v, --verbose  more diagnostics on stderr\n"
		"  -q, --quiet    errors only on stderr\n"
		"  -h, --help     show this help\n"
		"\n"
		"Addresses are ELF virtual addresses. Exit status: 0 success, 1 bad input,\n"
		"2 bad command line.\n");
}

/* Parses the command line into O. Returns -1 to go on, else the exit status to return. */
static int parse_args(int argc, char **argv, struct cfg_cmd_opts *o)
{
	static const struct option opts[] = {
		{ "dot", no_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "stats", no_argument, NULL, 's' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":hvq", opts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			o->dot = true;
			break;
		case 'j':
			o->json = true;
			break;
		case 's':
			o->stats = true;
			break;
		case 'v':
		case 'q':
			log__apply_option(opt);
			break;
		case 'h':
			cfg_usage(stdout);
			return EXIT_OK;
		default:
			return getopt_error("cfg", opt, argv);
		}
	}
	if (optind < argc)
		o->binary = argv[optind++];
	if (optind < argc)
		o->func = argv[optind++];
	if (optind < argc)
		return usage_error("cfg", "unexpected argument '%s'", argv[optind]);
	if (!o->binary)
		return usage_error("cfg", "missing BINARY");
	if (o->dot && !o->func)
		return usage_error("cfg", "--dot needs a FUNCTION");
	if (o->dot && o->json)
		return usage_error("cfg", "--dot and --json cannot be combined");
	if (o->dot && o->stats)
		return usage_error("cfg", "--dot and --stats cannot be combined");
	return -1;
}

/* Dominators and loops of every function (ALL) or only of ONLY, into INFO. */
static int analyze(const struct cfg_program *prog, struct cfg_func_info *info, bool all,
		   const struct cfg_func *only)
{
	for (size_t i = 0; i < prog->nfuncs; i++) {
		const struct cfg_func *f = &prog->funcs[i];
		int err;

		if (!all && f != only)
			continue;
		err = cfg_func_info__compute(&info[i], f);
		if (err) {
			const char *msg = cfg_strerror();

			return pr_err("'%s': analysis of function '%s' failed: %s", prog->img->path,
				      f->name, msg && *msg ? msg : strerror(-err));
		}
	}
	return 0;
}

struct cfg_totals {
	uint64_t loops;
	uint32_t irreducible, max_depth;
};

static struct cfg_totals totals_of(const struct cfg_program *prog,
				   const struct cfg_func_info *info)
{
	struct cfg_totals t = { 0 };

	for (size_t i = 0; i < prog->nfuncs; i++) {
		if (!info[i].analyzed)
			continue;
		t.loops += info[i].loops.nloops;
		t.irreducible += !info[i].loops.reducible;
		for (uint32_t l = 0; l < info[i].loops.nloops; l++)
			if (info[i].loops.loops[l].depth > t.max_depth)
				t.max_depth = info[i].loops.loops[l].depth;
	}
	return t;
}

static void print_stats(FILE *out, const struct cfg_program *prog, const struct cfg_totals *t,
			const struct cfg_times *tm)
{
	const struct cfg_stats *s = &prog->stats;
	double total = tm->load + s->t_symbols + s->t_build + s->t_noreturn + tm->analyze +
		       tm->output;

	fprintf(out, "binary             %s\n", prog->img->path);
	fprintf(out, "build-id           %s\n", prog->img->build_id[0] ? prog->img->build_id : "-");
	fprintf(out, "symbols            %s%s\n",
		!prog->syms.stripped  ? ".symtab" :
		prog->syms.debug_file ? "stripped; .symtab of " :
					"stripped (.dynsym + .eh_frame)",
		prog->syms.stripped && prog->syms.debug_file ? prog->syms.debug_file : "");
	fprintf(out, "functions          %zu\n", prog->nfuncs);
	fprintf(out, "blocks             %" PRIu64 "\n", s->nblocks);
	fprintf(out, "edges              %" PRIu64 "\n", s->nedges);
	fprintf(out, "instructions       %" PRIu64 " decoded\n", s->insns_decoded);
	fprintf(out, "jump tables        %" PRIu32 "\n", s->ntables);
	fprintf(out, "unresolved         %" PRIu32 " functions\n", s->nunresolved_funcs);
	fprintf(out, "noreturn           %" PRIu32 " functions (%" PRIu32 " fixpoint rounds)\n",
		s->nnoreturn_funcs, s->noreturn_rounds);
	fprintf(out, "bad code           %" PRIu32 " functions\n", s->nbad_funcs);
	fprintf(out, "irreducible        %" PRIu32 " functions\n", t->irreducible);
	fprintf(out, "loops              %" PRIu64 " (max depth %" PRIu32 ")\n", t->loops,
		t->max_depth);
	fprintf(out, "\n%-18s %9s\n", "phase", "seconds");
	fprintf(out, "%-18s %9.4f\n", "load", tm->load);
	fprintf(out, "%-18s %9.4f\n", "symbols", s->t_symbols);
	fprintf(out, "%-18s %9.4f\n", "build", s->t_build);
	fprintf(out, "%-18s %9.4f\n", "noreturn", s->t_noreturn);
	fprintf(out, "%-18s %9.4f\n", "analyze", tm->analyze);
	fprintf(out, "%-18s %9.4f\n", "output", tm->output);
	fprintf(out, "%-18s %9.4f\n", "total", total);
}

static json_t *stats_json(const struct cfg_program *prog, const struct cfg_totals *t,
			  const struct cfg_times *tm)
{
	const struct cfg_stats *s = &prog->stats;

	return json_pack("{s:I,s:I,s:I,s:I,s:i,s:i,s:i,s:i,s:i,s:I,s:{s:f,s:f,s:f,s:f,s:f,s:f}}",
			 "functions", (json_int_t)prog->nfuncs,
			 "blocks", (json_int_t)s->nblocks,
			 "edges", (json_int_t)s->nedges,
			 "insns_decoded", (json_int_t)s->insns_decoded,
			 "jump_tables", (int)s->ntables,
			 "unresolved_functions", (int)s->nunresolved_funcs,
			 "noreturn_functions", (int)s->nnoreturn_funcs,
			 "bad_code_functions", (int)s->nbad_funcs,
			 "irreducible_functions", (int)t->irreducible,
			 "loops", (json_int_t)t->loops,
			 "seconds",
			 "load", tm->load, "symbols", s->t_symbols, "build", s->t_build,
			 "noreturn", s->t_noreturn, "analyze", tm->analyze,
			 "output", tm->output);
}

int cmd_cfg(int argc, char **argv)
{
	struct cfg_cmd_opts o = { 0 };
	struct elf_image img = { .fd = -1 };
	struct cfg_program prog = { 0 };
	struct cfg_func_info *info = NULL;
	struct cfg_domtree pdom = { 0 };
	struct cfg_induction ind = { 0 };
	bool have_pdom = false;
	struct cfg_report r = { 0 };
	const struct cfg_func *f = NULL;
	struct cfg_times tm = { 0 };
	struct cfg_totals tot;
	int ret = EXIT_INPUT, err;
	double t0;

	err = parse_args(argc, argv, &o);
	if (err >= 0)
		return err;

	t0 = now_seconds();
	if (elf_image__open(&img, o.binary)) {
		pr_lib_err(o.binary, "cannot open");
		goto out;
	}
	tm.load = now_seconds() - t0;
	pr_info("'%s': %zu sections, %zu segments, build-id %s", o.binary, img.nsecs,
		img.nsegs, img.build_id[0] ? img.build_id : "none");

	if (decode_cache__build(&prog, &img, true, NULL, NULL)) {
		pr_lib_err(o.binary, "cannot build the control-flow graph");
		goto out;
	}
	pr_info("'%s': %zu functions%s%s%s", o.binary, prog.nfuncs,
		!prog.syms.stripped ? "" :
		prog.syms.debug_file ? " (stripped; symbols from " : " (stripped)",
		prog.syms.stripped && prog.syms.debug_file ? prog.syms.debug_file : "",
		prog.syms.stripped && prog.syms.debug_file ? ")" : "");

	if (o.func) {
		f = cfg_program__find(&prog, o.func);
		if (!f) {
			pr_err("'%s': no function '%s' (run 'edgeprof cfg %s' to list them)",
			       o.binary, o.func, o.binary);
			goto out;
		}
	}

	/* Analyze: every function for the table and the statistics, else only the one shown. */
	info = calloc(prog.nfuncs ? prog.nfuncs : 1, sizeof(*info));
	if (!info) {
		pr_err("'%s': out of memory", o.binary);
		goto out;
	}
	t0 = now_seconds();
	if (analyze(&prog, info, !f || o.stats, f))
		goto out;
	tm.analyze = now_seconds() - t0;
	prog.stats.t_analyze = tm.analyze;
	if (f && !o.json && !o.dot && f->nblocks) {
		if (cfg_postdom__compute(&pdom, f)) {
			pr_warn("'%s': post-dominators of '%s' not computed", o.binary, f->name);
		} else {
			have_pdom = true;
		}
	}

	r.prog = &prog;
	r.img = &img;
	r.info = info;
	if (f && !o.json && !o.dot) {
		/* Which of its loops an induction variable counts (run --induction). */
		bool *sel = calloc(prog.nfuncs + 1, sizeof(*sel));

		if (!sel) {
			pr_err("'%s': out of memory", o.binary);
			goto out;
		}
		sel[f - prog.funcs] = true;
		err = cfg_induction__analyze(&ind, &prog, sel);
		free(sel);
		if (err)
			pr_warn("'%s': loops counted by induction not analysed: %s", o.binary,
				err == -ENOMEM ? "out of memory" : cfg_strerror());
		else
			r.ind = &ind;
	}
	r.out = stdout;
	if (!(o.stats && !o.func && !o.json)) {
		err = srcline__open(&r.sl, &img);
		if (err && err != -ENOENT) {
			pr_warn("'%s': no source lines: %s", o.binary, cfg_strerror());
			r.sl = NULL;
		} else if (err) {
			r.sl = NULL;
		}
	}

	tot = totals_of(&prog, info);
	t0 = now_seconds();
	if (o.json) {
		json_t *extra = NULL;

		if (o.stats) {
			extra = stats_json(&prog, &tot, &tm);
			if (!extra) {
				pr_err("'%s': out of memory", o.binary);
				goto out;
			}
		}
		err = cfg_report__json(&r, f, extra);
		json_decref(extra);
	} else if (o.dot) {
		err = cfg_report__dot(&r, f, &info[f - prog.funcs]);
	} else if (f) {
		err = cfg_report__func(&r, f, &info[f - prog.funcs], have_pdom ? &pdom : NULL);
	} else if (!o.stats) {
		err = cfg_report__table(&r);
	} else {
		err = 0;
	}
	tm.output = now_seconds() - t0;
	if (err == -ENOMEM) {
		pr_err("'%s': out of memory writing the report", o.binary);
		goto out;
	} else if (err) {
		pr_err("error writing to standard output: %s", strerror(-err));
		goto out;
	}
	if (o.stats && !o.json) {
		if (f)
			fputc('\n', stdout);
		print_stats(stdout, &prog, &tot, &tm);
		errno = 0;
		if (fflush(stdout) || ferror(stdout)) {
			pr_err("error writing to standard output: %s",
			       strerror(errno ? errno : EIO));
			goto out;
		}
	}
	ret = EXIT_OK;
out:
	if (have_pdom)
		cfg_dom__free(&pdom);
	if (r.sl)
		srcline__close(r.sl);
	if (info) {
		for (size_t i = 0; i < prog.nfuncs; i++)
			cfg_func_info__release(&info[i]);
		free(info);
	}
	cfg_induction__free(&ind);
	cfg_program__free(&prog);
	elf_image__close(&img);
	return ret;
}
