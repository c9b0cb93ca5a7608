/*
 * `edgeprof static BINARY [FUNCTION] [--json] [--top N] [--rates FILE]`: estimates a static
 * profile of BINARY without running it (Wu and Larus 1994: Ball-Larus heuristics combined
 * with Dempster-Shafer, local frequencies with cyclic probabilities, call and invocation
 * frequencies over the call graph) and prints the hottest predicted functions and blocks, or
 * one function's branch probabilities with the heuristics that applied, and its local and
 * global frequencies.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/builtin.h"
#include "user/session/decode_cache.h"
#include "user/report/heuristic_rates.h"
#include "user/util/json_out.h"
#include "user/util/log.h"

#include "cfg/cfg.h"
#include "cfg/elf_image.h"
#include "cfg/error.h"
#include "estimators/static_profile.h"

#define DEFAULT_TOP 20
#define MAX_TOP 1000000

static const char static_usage[] =
	"usage: edgeprof static BINARY [FUNCTION] [--json] [--top N] [--rates FILE]\n"
	"\n"
	"Estimates how often each block, edge and function of BINARY executes, without running\n"
	"it (Wu and Larus's static profile): branch probabilities from Ball and Larus's nine\n"
	"heuristics (LBH LEH LHH PH OH GH CH SH RH) combined by Dempster-Shafer, local block and\n"
	"edge frequencies per invocation, invocation and call frequencies over the call graph,\n"
	"and global frequencies (local x invocations).\n"
	"\n"
	"  BINARY         the ELF file\n"
	"  FUNCTION       a function name or hex address: its branches, blocks and edges\n"
	"\n"
	"Options:\n"
	"  --json         print JSON (every function, or FUNCTION)\n"
	"  --top N        hottest functions and blocks to show (default 20; text only)\n"
	"  --rates FILE   heuristic hit rates from FILE (default: the file written by\n"
	"                 'edgeprof calibrate-heuristics' if any, else the paper's Table 1)\n"
	"  -h, --help     show this help\n"
	"\n"
	"Frequencies are relative: main runs once. Exit status: 0 success, 1 bad input,\n"
	"2 bad command line.\n";

struct static_opts {
	const char *binary, *func, *rates;
	bool json;
	unsigned long top;
};

static int parse_args(int argc, char **argv, struct static_opts *o)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },  { "top", required_argument, NULL, 't' },
		{ "rates", required_argument, NULL, 'r' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	o->top = DEFAULT_TOP;
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			o->json = true;
			break;
		case 't':
			if (!parse_ulong(optarg, MAX_TOP, &o->top))
				return usage_error("static",
						   "--top: '%s' is not a number from 0 to %d",
						   optarg, MAX_TOP);
			break;
		case 'r':
			o->rates = optarg;
			break;
		case 'h':
			fputs(static_usage, stdout);
			return EXIT_OK;
		default:
			return getopt_error("static", opt, argv);
		}
	}
	if (optind >= argc)
		return usage_error("static", "no binary given");
	o->binary = argv[optind++];
	if (optind < argc)
		o->func = argv[optind++];
	if (optind < argc)
		return usage_error("static", "unexpected argument '%s'", argv[optind]);
	return -1;
}

/* "0x.." of vertex V of F, or "EXIT". */
static const char *vname(const struct cfg_func *f, uint32_t v, char *buf)
{
	if (v >= f->nblocks)
		return "EXIT";
	return jout_addr(buf, f->blocks[v].start);
}

/* --- text -------------------------------------------------------------------------------- */

struct hot {
	double v;
	uint32_t func, id;
};

static int cmp_hot(const void *a, const void *b)
{
	const struct hot *x = a, *y = b;

	if (x->v != y->v)
		return x->v > y->v ? -1 : 1;
	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int print_summary(const struct cfg_program *prog, const struct static_profile *sp,
			 unsigned long top)
{
	size_t nb = 0, nbr = 0, k = 0;
	uint64_t applied[BH_COUNT] = { 0 }, none = 0;
	struct hot *h;
	char a[HEXLEN];

	for (size_t i = 0; i < prog->nfuncs; i++) {
		nb += prog->funcs[i].nblocks;
		nbr += sp->funcs[i].bh.nbranches;
		for (uint32_t j = 0; j < sp->funcs[i].bh.nbranches; j++) {
			uint16_t ap = sp->funcs[i].bh.branches[j].applies;

			none += !ap;
			for (unsigned q = 0; q < BH_COUNT; q++)
				applied[q] += !!(ap & (1u << q));
		}
	}
	printf("functions %zu, blocks %zu, two-way branches %zu (%" PRIu64 " with no heuristic)\n",
	       prog->nfuncs, nb, nbr, none);
	printf("heuristic  applies  rate\n");
	for (unsigned q = 0; q < BH_COUNT; q++)
		printf("%-9s %8" PRIu64 "  %.3f\n", bh__name(q), applied[q], sp->rates[q]);

	h = calloc(nb > prog->nfuncs ? nb : prog->nfuncs + 1, sizeof(*h));
	if (!h)
		return pr_err("out of memory");
	for (size_t i = 0; i < prog->nfuncs; i++)
		h[i] = (struct hot){ sp->funcs[i].invocations, (uint32_t)i, 0 };
	qsort(h, prog->nfuncs, sizeof(*h), cmp_hot);
	printf("\nhottest predicted functions (invocations per run of main)\n");
	for (size_t i = 0; i < prog->nfuncs && i < top; i++)
		printf("  %14.4g  %s  %s\n", h[i].v, jout_addr(a, prog->funcs[h[i].func].entry),
		       prog->funcs[h[i].func].name);
	for (size_t i = 0; i < prog->nfuncs; i++)
		for (uint32_t b = 0; b < prog->funcs[i].nblocks; b++)
			h[k++] = (struct hot){ static_profile__gblock(sp, i, b), (uint32_t)i, b };
	qsort(h, k, sizeof(*h), cmp_hot);
	printf("\nhottest predicted blocks (global frequency, local frequency)\n");
	for (size_t i = 0; i < k && i < top; i++) {
		const struct cfg_func *f = &prog->funcs[h[i].func];

		printf("  %14.4g %10.4g  %s  %s\n", h[i].v, sp->funcs[h[i].func].bfreq[h[i].id],
		       jout_addr(a, f->blocks[h[i].id].start), f->name);
	}
	free(h);
	return 0;
}

static void print_func(const struct cfg_program *prog, const struct static_profile *sp,
		       const struct cfg_func *f)
{
	size_t i = (size_t)(f - prog->funcs);
	const struct sp_func *sf = &sp->funcs[i];
	char a[HEXLEN], b1[HEXLEN], b2[HEXLEN];

	printf("%s  %s  invocations %.4g\n", f->name, jout_addr(a, f->entry), sf->invocations);
	printf("\nbranches (block: taken -> prob, not taken -> prob; heuristics: the "
	       "successor each predicts)\n");
	for (uint32_t j = 0; j < sf->bh.nbranches; j++) {
		const struct bh_branch *br = &sf->bh.branches[j];
		const struct cfg_edge *e0 = &f->edges[br->edge[0]], *e1 = &f->edges[br->edge[1]];

		printf("  %s: %s %.3f, %s %.3f;", jout_addr(a, f->blocks[br->block].start),
		       vname(f, e0->to, b1), sf->prob[br->edge[0]], vname(f, e1->to, b2),
		       sf->prob[br->edge[1]]);
		if (!br->applies)
			printf(" none");
		for (unsigned q = 0; q < BH_COUNT; q++)
			if (br->applies & (1u << q))
				printf(" %s>%s", bh__name(q),
				       vname(f, (br->predicts & (1u << q)) ? e1->to : e0->to, b1));
		printf("\n");
	}
	printf("\nblocks (local, global)\n");
	for (uint32_t b = 0; b < f->nblocks; b++)
		printf("  %s  %12.4g %12.4g\n", jout_addr(a, f->blocks[b].start), sf->bfreq[b],
		       static_profile__gblock(sp, i, b));
	printf("\nedges (kind, probability, local, global)\n");
	for (uint32_t e = 0; e < f->nedges; e++)
		printf("  %s -> %-18s %-12s %6.3f %12.4g %12.4g\n",
		       vname(f, f->edges[e].from, b1), vname(f, f->edges[e].to, b2),
		       cfg_edge_kind__name(f->edges[e].kind), sf->prob[e], sf->efreq[e],
		       static_profile__gedge(sp, i, e));
}

/* --- JSON -------------------------------------------------------------------------------- */

static json_t *vjson(const struct cfg_func *f, uint32_t v)
{
	return v >= f->nblocks ? json_string("exit") : jout_hex(f->blocks[v].start);
}

static json_t *func_json(const struct cfg_program *prog, const struct static_profile *sp,
			 size_t i, int *err)
{
	const struct cfg_func *f = &prog->funcs[i];
	const struct sp_func *sf = &sp->funcs[i];
	json_t *o = json_object(), *bl = json_array(), *ed = json_array(), *br = json_array();

	jout_set(o, "name", json_string(f->name), err);
	jout_set(o, "addr", jout_hex(f->entry), err);
	jout_set(o, "invocations", json_real(sf->invocations), err);
	for (uint32_t b = 0; b < f->nblocks; b++) {
		json_t *x = json_object();

		jout_set(x, "addr", jout_hex(f->blocks[b].start), err);
		jout_set(x, "local", json_real(sf->bfreq[b]), err);
		jout_set(x, "global", json_real(static_profile__gblock(sp, i, b)), err);
		jout_push(bl, x, err);
	}
	for (uint32_t e = 0; e < f->nedges; e++) {
		json_t *x = json_object();

		jout_set(x, "from", vjson(f, f->edges[e].from), err);
		jout_set(x, "to", vjson(f, f->edges[e].to), err);
		jout_set(x, "kind", json_string(cfg_edge_kind__name(f->edges[e].kind)), err);
		jout_set(x, "prob", json_real(sf->prob[e]), err);
		jout_set(x, "local", json_real(sf->efreq[e]), err);
		jout_set(x, "global", json_real(static_profile__gedge(sp, i, e)), err);
		jout_push(ed, x, err);
	}
	for (uint32_t j = 0; j < sf->bh.nbranches; j++) {
		const struct bh_branch *b = &sf->bh.branches[j];
		json_t *x = json_object(), *hs = json_object();
		uint32_t t0 = f->edges[b->edge[0]].to, t1 = f->edges[b->edge[1]].to;

		jout_set(x, "block", jout_hex(f->blocks[b->block].start), err);
		jout_set(x, "taken", vjson(f, t0), err);
		jout_set(x, "not_taken", vjson(f, t1), err);
		jout_set(x, "prob_taken", json_real(sf->prob[b->edge[0]]), err);
		for (unsigned q = 0; q < BH_COUNT; q++)
			if (b->applies & (1u << q))
				jout_set(hs, bh__name(q),
					 vjson(f, (b->predicts & (1u << q)) ? t1 : t0), err);
		jout_set(x, "heuristics", hs, err);
		jout_push(br, x, err);
	}
	jout_set(o, "blocks", bl, err);
	jout_set(o, "edges", ed, err);
	jout_set(o, "branches", br, err);
	return o;
}

static int print_json(const struct cfg_program *prog, const struct static_profile *sp,
		      const struct cfg_func *only, const char *rates_from)
{
	json_t *o = json_object(), *bin = json_object(), *r = json_object(), *fs = json_array();
	int err = 0;

	jout_set(bin, "path", json_string(prog->img->path), &err);
	jout_set(bin, "build_id", prog->img->build_id[0] ? json_string(prog->img->build_id) :
			json_null(), &err);
	jout_set(o, "binary", bin, &err);
	for (unsigned q = 0; q < BH_COUNT; q++)
		jout_set(r, bh__name(q), json_real(sp->rates[q]), &err);
	jout_set(o, "rates", r, &err);
	jout_set(o, "rates_file", rates_from[0] ? json_string(rates_from) : json_null(), &err);
	for (size_t i = 0; i < prog->nfuncs; i++)
		if (!only || &prog->funcs[i] == only)
			jout_push(fs, func_json(prog, sp, i, &err), &err);
	jout_set(o, "functions", fs, &err);
	return jout_print(o, err);
}

int cmd_static(int argc, char **argv)
{
	struct static_opts o = { 0 };
	struct elf_image img = { .fd = -1 };
	struct cfg_program prog = { 0 };
	struct static_profile sp = { 0 };
	const struct cfg_func *f = NULL;
	double rates[BH_COUNT];
	char from[PATH_MAX];
	int ret = EXIT_INPUT, err;
	bool built = false;

	err = parse_args(argc, argv, &o);
	if (err >= 0)
		return err;
	if (heuristic_rates__load(o.rates, rates, from, sizeof(from)))
		return EXIT_INPUT;
	if (elf_image__open(&img, o.binary)) {
		pr_lib_err(o.binary, "cannot open");
		return EXIT_INPUT;
	}
	if (decode_cache__build(&prog, &img, true, NULL, NULL)) {
		pr_lib_err(o.binary, "cannot build the control-flow graph");
		goto out;
	}
	built = true;
	if (o.func && !(f = cfg_program__find(&prog, o.func))) {
		pr_err("'%s': no function '%s' (run 'edgeprof cfg %s' to list them)", o.binary,
		       o.func, o.binary);
		goto out;
	}
	if (static_profile__compute(&sp, &prog, rates)) {
		pr_err("'%s': cannot estimate the static profile: out of memory", o.binary);
		goto out;
	}
	if (o.json)
		err = print_json(&prog, &sp, f, from);
	else if (f)
		print_func(&prog, &sp, f), err = 0;
	else
		err = print_summary(&prog, &sp, o.top);
	ret = err ? EXIT_INPUT : EXIT_OK;
out:
	static_profile__free(&sp);
	if (built)
		cfg_program__free(&prog);
	elf_image__close(&img);
	return ret;
}
