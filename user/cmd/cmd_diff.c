/*
 * `edgeprof diff A B [--json] [--top N] [--exit-code]`: what changed between two profiles of
 * the same build, per function (invocations) and per block (executions): the functions
 * whose counts differ, hottest change first, and their blocks; for CI, an exit status that
 * says whether anything differs.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/builtin.h"
#include "user/profile/profile.h"
#include "user/util/json_out.h"
#include "user/util/log.h"

#define DIFF_DEFAULT_TOP 20
#define DIFF_MAX_TOP 1000000
#define EXIT_DIFFERENT 3 /* --exit-code: the profiles differ */

static const char diff_usage[] =
	"usage: edgeprof diff PROFILE_A PROFILE_B [--json] [--top N] [--exit-code]\n"
	"\n"
	"Shows what changed from profile A to profile B of the same build (equal build-ids, else\n"
	"one line says so): the functions whose invocation or block counts differ, the largest\n"
	"change first (the sum of their blocks' absolute changes), and the blocks that changed\n"
	"most. An unknown count (null) differs from every known one.\n"
	"\n"
	"  --json        print every difference as JSON: {\"a\",\"b\",\"functions\":[{\"name\",\n"
	"                \"addr\",\"count\":[A,B],\"change\",\"blocks\":[{\"addr\",\"a\",\"b\"}...],\n"
	"                \"edges\":[{\"from\",\"to\",\"a\",\"b\"}...]}...],\"only_a\",\"only_b\"}\n"
	"  --top N       functions and blocks listed in text (default 20)\n"
	"  --exit-code   exit with status 3 when the profiles differ, 0 when they are the same\n"
	"                (1 and 2 stay bad input and bad usage)\n"
	"  -h, --help    show this help\n";

struct fdiff {
	const struct profile_func *a, *b;
	uint64_t change; /* sum of |block changes| (+ |count change|), saturating */
	uint32_t nblocks;  /* blocks that differ */
	uint32_t nedges;   /* edges that differ */
};

struct bdiff {
	const struct fdiff *f;
	uint32_t ia;     /* the block in A */
	int64_t cb;      /* its count in B (-1: unknown, or no such block) */
	uint64_t change;
};

static bool known(int64_t c)
{
	return c >= 0;
}

/* |A - B| for two counts, UINT64_MAX when exactly one is unknown, 0 when both are. */
static uint64_t delta(int64_t a, int64_t b)
{
	if (!known(a) || !known(b))
		return known(a) == known(b) ? 0 : UINT64_MAX;
	return a > b ? (uint64_t)(a - b) : (uint64_t)(b - a);
}

static uint64_t sat_add(uint64_t x, uint64_t y)
{
	return x + y < x ? UINT64_MAX : x + y;
}

static int edge_at(const struct profile_func *f, const struct profile_func *g, uint32_t e)
{
	const struct profile_edge *x = &g->edges[e];
	uint64_t from = g->blocks[x->from].addr;
	uint64_t to = x->to < g->nblocks ? g->blocks[x->to].addr : 0;

	for (uint32_t k = 0; k < f->nedges; k++) {
		const struct profile_edge *y = &f->edges[k];

		if (y->kind == x->kind && f->blocks[y->from].addr == from &&
		    (y->to < f->nblocks ? f->blocks[y->to].addr : 0) == to &&
		    (y->to < f->nblocks) == (x->to < g->nblocks))
			return (int)k;
	}
	return -1;
}

/* How block K of D's function in A changed in B: 0 when not at all, UINT64_MAX when B has
 * no such block or exactly one count is unknown; B's count (-1: none, or unknown) into *CB
 * and B's block index (-1: none) into *JB. */
static uint64_t block_change(const struct fdiff *d, uint32_t k, int64_t *cb, int *jb)
{
	int j = profile_func__block_at(d->b, d->a->blocks[k].addr);

	*jb = j;
	*cb = j < 0 ? -1 : d->b->blocks[j].count;
	return j < 0 ? UINT64_MAX : delta(d->a->blocks[k].count, *cb);
}

/* The same for edge E of D's function in A. */
static uint64_t edge_change(const struct fdiff *d, uint32_t e, int64_t *cb)
{
	int k = edge_at(d->b, d->a, e);

	*cb = k < 0 ? -1 : d->b->edges[k].count;
	return k < 0 ? UINT64_MAX : delta(d->a->edges[e].count, *cb);
}

/* Compares function A with B (the same address in both profiles). */
static void diff_func(struct fdiff *d)
{
	int64_t cb;
	int jb;

	d->change = delta(d->a->count, d->b->count);
	for (uint32_t k = 0; k < d->a->nblocks; k++) {
		uint64_t c = block_change(d, k, &cb, &jb);

		if (c) {
			d->nblocks++;
			d->change = sat_add(d->change, c);
		}
	}
	for (uint32_t e = 0; e < d->a->nedges; e++)
		d->nedges += edge_change(d, e, &cb) != 0;
}

static int cmp_fdiff(const void *x, const void *y)
{
	const struct fdiff *a = x, *b = y;

	if (a->change != b->change)
		return a->change < b->change ? 1 : -1;
	return a->a->addr < b->a->addr ? -1 : a->a->addr > b->a->addr;
}

static int cmp_bdiff(const void *x, const void *y)
{
	const struct bdiff *a = x, *b = y;
	uint64_t aa = a->f->a->blocks[a->ia].addr, ba = b->f->a->blocks[b->ia].addr;

	if (a->change != b->change)
		return a->change < b->change ? 1 : -1;
	return aa < ba ? -1 : aa > ba;
}

static void put_count(FILE *out, int64_t c, int width)
{
	if (known(c))
		fprintf(out, " %*" PRId64, width, c);
	else
		fprintf(out, " %*s", width, "?");
}

static void put_change(FILE *out, int64_t a, int64_t b)
{
	if (!known(a) || !known(b))
		fprintf(out, " %14s\n", "?");
	else if (a == 0)
		fprintf(out, " %+14" PRId64 "\n", b - a);
	else
		fprintf(out, " %+14" PRId64 " (%+.1f%%)\n", b - a, 100.0 * ((double)b - a) / a);
}

static json_t *jcount(int64_t c)
{
	return known(c) ? json_integer(c) : json_null();
}

/* Function names of P that Q does not profile, as a JSON array (failures counted in *ERR). */
static json_t *only_in(const struct profile *p, const struct profile *q, int *err)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < p->nfuncs; i++)
		if (!profile__func_at(q, p->funcs[i].addr))
			jout_push(a, json_string(p->funcs[i].name), err);
	return a;
}

static int print_json(const char *na, const char *nb, const struct fdiff *d, size_t n,
		      const struct profile *pa, const struct profile *pb)
{
	json_t *root = json_object(), *funcs = json_array();
	int err = 0;

	jout_set(root, "a", json_string(na), &err);
	jout_set(root, "b", json_string(nb), &err);
	for (size_t i = 0; i < n && funcs; i++) {
		const struct profile_func *a = d[i].a, *b = d[i].b;
		json_t *o = json_object(), *blocks = json_array(), *edges = json_array();
		int64_t cb;
		int jb;

		jout_set(o, "name", json_string(a->name), &err);
		jout_set(o, "addr", jout_hex(a->addr), &err);
		jout_set(o, "count", json_pack("[o,o]", jcount(a->count), jcount(b->count)), &err);
		jout_set(o, "change",
			 json_integer((json_int_t)(d[i].change > INT64_MAX ? INT64_MAX : d[i].change)),
			 &err);
		for (uint32_t k = 0; blocks && k < a->nblocks; k++)
			if (block_change(&d[i], k, &cb, &jb))
				jout_push(blocks,
					  json_pack("{s:o,s:o,s:o}", "addr", jout_hex(a->blocks[k].addr),
						    "a", jcount(a->blocks[k].count), "b", jcount(cb)),
					  &err);
		for (uint32_t e = 0; edges && e < a->nedges; e++) {
			const struct profile_edge *x = &a->edges[e];

			if (edge_change(&d[i], e, &cb))
				jout_push(edges,
					  json_pack("{s:o,s:o,s:o,s:o}", "from",
						    jout_hex(a->blocks[x->from].addr), "to",
						    x->to < a->nblocks ? jout_hex(a->blocks[x->to].addr)
								       : json_string("exit"),
						    "a", jcount(x->count), "b", jcount(cb)),
					  &err);
		}
		jout_set(o, "blocks", blocks, &err);
		jout_set(o, "edges", edges, &err);
		jout_push(funcs, o, &err);
	}
	jout_set(root, "functions", funcs, &err);
	jout_set(root, "only_a", only_in(pa, pb, &err), &err);
	jout_set(root, "only_b", only_in(pb, pa, &err), &err);
	return jout_print(root, err);
}

/* Returns 0, or -ENOMEM (nothing of the block table printed). */
static int print_text(FILE *out, const char *na, const char *nb, struct fdiff *d, size_t n,
		      size_t nfuncs, unsigned long top)
{
	struct bdiff *bd;
	size_t nb_ = 0, nblocks = 0;
	int64_t cb;
	int jb;

	for (size_t i = 0; i < n; i++)
		nblocks += d[i].nblocks;
	fprintf(out, "%s -> %s: %zu of %zu functions differ, %zu blocks\n", na, nb, n, nfuncs,
		nblocks);
	if (!n)
		return 0;
	fprintf(out, "\nfunctions (largest change first)\n%-40s %14s %14s %14s  blocks\n",
		"function", "calls A", "calls B", "change");
	for (size_t i = 0; i < n && i < top; i++) {
		fprintf(out, "%-40.40s", d[i].a->name);
		put_count(out, d[i].a->count, 14);
		put_count(out, d[i].b->count, 14);
		if (known(d[i].a->count) && known(d[i].b->count))
			fprintf(out, " %+14" PRId64, d[i].b->count - d[i].a->count);
		else
			fprintf(out, " %14s", "?");
		fprintf(out, "  %" PRIu32 "\n", d[i].nblocks);
	}
	bd = calloc(nblocks ? nblocks : 1, sizeof(*bd));
	if (!bd)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		for (uint32_t k = 0; k < d[i].a->nblocks; k++) {
			uint64_t c = block_change(&d[i], k, &cb, &jb);

			if (c && nb_ < nblocks)
				bd[nb_++] = (struct bdiff){ &d[i], k, cb, c };
		}
	qsort(bd, nb_, sizeof(*bd), cmp_bdiff);
	fprintf(out, "\nblocks (largest change first)\n%-40s %-14s %14s %14s %14s\n", "function",
		"block", "A", "B", "change");
	for (size_t i = 0; i < nb_ && i < top; i++) {
		const struct profile_func *a = bd[i].f->a;
		int64_t ca = a->blocks[bd[i].ia].count;
		char addr[HEXLEN];

		fprintf(out, "%-40.40s %-14s", a->name, jout_addr(addr, a->blocks[bd[i].ia].addr));
		put_count(out, ca, 14);
		put_count(out, bd[i].cb, 14);
		put_change(out, ca, bd[i].cb);
	}
	free(bd);
	return 0;
}

int cmd_diff(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "top", required_argument, NULL, 't' },
		{ "exit-code", no_argument, NULL, 'x' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct profile pa = { 0 }, pb = { 0 };
	struct fdiff *d = NULL;
	unsigned long top = DIFF_DEFAULT_TOP;
	bool json = false, exit_code = false;
	size_t n = 0, only = 0;
	int opt, status = EXIT_INPUT;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			json = true;
			break;
		case 't':
			if (!parse_ulong(optarg, DIFF_MAX_TOP, &top) || !top)
				return usage_error("diff", "--top takes a number from 1 to %u",
						   DIFF_MAX_TOP);
			break;
		case 'x':
			exit_code = true;
			break;
		case 'h':
			fputs(diff_usage, stdout);
			return EXIT_OK;
		default:
			return getopt_error("diff", opt, argv);
		}
	}
	if (argc - optind != 2)
		return usage_error("diff", "needs two profiles");
	if (profile__read(argv[optind], &pa) || profile__read(argv[optind + 1], &pb))
		goto out;
	if (!pa.build_id[0] || !pb.build_id[0]) {
		pr_err("'%s': has no build-id: cannot tell it is the same build as '%s'",
		       pa.build_id[0] ? argv[optind + 1] : argv[optind],
		       pa.build_id[0] ? argv[optind] : argv[optind + 1]);
		goto out;
	}
	if (strcmp(pa.build_id, pb.build_id)) {
		pr_err("'%s': a different build from '%s' (build-id %s, not %s)", argv[optind + 1],
		       argv[optind], pb.build_id, pa.build_id);
		goto out;
	}
	d = calloc(pa.nfuncs ? pa.nfuncs : 1, sizeof(*d));
	if (!d) {
		pr_err("out of memory");
		goto out;
	}
	for (size_t i = 0; i < pa.nfuncs; i++) {
		const struct profile_func *b = profile__func_at(&pb, pa.funcs[i].addr);

		if (!b)
			continue;
		d[n] = (struct fdiff){ .a = &pa.funcs[i], .b = b };
		diff_func(&d[n]);
		if (d[n].change || d[n].nblocks || d[n].nedges ||
		    known(pa.funcs[i].count) != known(b->count))
			n++;
	}
	qsort(d, n, sizeof(*d), cmp_fdiff);
	for (size_t i = 0; i < pa.nfuncs; i++)
		only += !profile__func_at(&pb, pa.funcs[i].addr);
	for (size_t i = 0; i < pb.nfuncs; i++)
		only += !profile__func_at(&pa, pb.funcs[i].addr);
	if (json) {
		if (print_json(argv[optind], argv[optind + 1], d, n, &pa, &pb))
			goto out;
	} else {
		if (print_text(stdout, argv[optind], argv[optind + 1], d, n, pa.nfuncs, top)) {
			pr_err("out of memory");
			goto out;
		}
		if (only)
			printf("\n%zu functions are profiled in only one of them (see --json)\n",
			       only);
	}
	status = exit_code && (n || only) ? EXIT_DIFFERENT : EXIT_OK;
out:
	free(d);
	profile__release(&pa);
	profile__release(&pb);
	return status;
}
