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
	uint32_t ia, ib;
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

/* Compares function A with B (the same address in both profiles). */
static void diff_func(struct fdiff *d)
{
	const struct profile_func *a = d->a, *b = d->b;

	d->change = delta(a->count, b->count);
	for (uint32_t i = 0; i < a->nblocks; i++) {
		int j = profile_func__block_at(b, a->blocks[i].addr);
		uint64_t c = j < 0 ? UINT64_MAX : delta(a->blocks[i].count, b->blocks[j].count);

		if (c || (j >= 0 && known(a->blocks[i].count) != known(b->blocks[j].count))) {
			d->nblocks++;
			d->change = sat_add(d->change, c);
		}
	}
	for (uint32_t e = 0; e < a->nedges; e++) {
		int k = edge_at(b, a, e);

		if (k < 0 || delta(a->edges[e].count, b->edges[k].count))
			d->nedges++;
	}
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

static json_t *jaddr(uint64_t a)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, a);
	return json_string(buf);
}

static int print_json(FILE *out, const char *na, const char *nb, struct fdiff *d, size_t n,
		      const struct profile *pa, const struct profile *pb)
{
	json_t *root = json_pack("{s:s,s:s,s:[],s:[],s:[]}", "a", na, "b", nb, "functions",
				 "only_a", "only_b");
	json_t *funcs = json_object_get(root, "functions");
	int err = 0;

	for (size_t i = 0; i < n && root; i++) {
		const struct profile_func *a = d[i].a, *b = d[i].b;
		json_t *o = json_pack("{s:s,s:o,s:[o,o],s:I,s:[],s:[]}", "name", a->name, "addr",
				      jaddr(a->addr), "count", jcount(a->count), jcount(b->count),
				      "change",
				      (json_int_t)(d[i].change > INT64_MAX ? INT64_MAX : d[i].change),
				      "blocks", "edges");

		if (!o || json_array_append_new(funcs, o)) {
			err = -ENOMEM;
			break;
		}
		for (uint32_t k = 0; k < a->nblocks; k++) {
			int j = profile_func__block_at(b, a->blocks[k].addr);
			int64_t cb = j < 0 ? -1 : b->blocks[j].count;

			if (delta(a->blocks[k].count, cb) ||
			    known(a->blocks[k].count) != known(cb))
				json_array_append_new(json_object_get(o, "blocks"),
						      json_pack("{s:o,s:o,s:o}", "addr",
								jaddr(a->blocks[k].addr), "a",
								jcount(a->blocks[k].count), "b",
								jcount(cb)));
		}
		for (uint32_t e = 0; e < a->nedges; e++) {
			const struct profile_edge *x = &a->edges[e];
			int k = edge_at(b, a, e);
			int64_t cb = k < 0 ? -1 : b->edges[k].count;

			if (delta(x->count, cb) || known(x->count) != known(cb))
				json_array_append_new(
					json_object_get(o, "edges"),
					json_pack("{s:o,s:o,s:o,s:o}", "from",
						  jaddr(a->blocks[x->from].addr), "to",
						  x->to < a->nblocks ? jaddr(a->blocks[x->to].addr)
								     : json_string("exit"),
						  "a", jcount(x->count), "b", jcount(cb)));
		}
	}
	for (size_t i = 0; root && !err && i < pa->nfuncs; i++)
		if (!profile__func_at(pb, pa->funcs[i].addr))
			json_array_append_new(json_object_get(root, "only_a"),
					      json_string(pa->funcs[i].name));
	for (size_t i = 0; root && !err && i < pb->nfuncs; i++)
		if (!profile__func_at(pa, pb->funcs[i].addr))
			json_array_append_new(json_object_get(root, "only_b"),
					      json_string(pb->funcs[i].name));
	if (!root || err) {
		json_decref(root);
		return -ENOMEM;
	}
	if (json_dumpf(root, out, JSON_INDENT(1)) || fputc('\n', out) == EOF)
		err = -EIO;
	json_decref(root);
	return err;
}

static void print_text(FILE *out, const char *na, const char *nb, struct fdiff *d, size_t n,
		       size_t nfuncs, unsigned long top)
{
	struct bdiff *bd;
	size_t nb_ = 0, cap = 0, nblocks = 0;

	for (size_t i = 0; i < n; i++)
		nblocks += d[i].nblocks;
	fprintf(out, "%s -> %s: %zu of %zu functions differ, %zu blocks\n", na, nb, n, nfuncs,
		nblocks);
	if (!n)
		return;
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
	for (size_t i = 0; i < n; i++)
		cap += d[i].nblocks;
	bd = calloc(cap ? cap : 1, sizeof(*bd));
	if (!bd)
		return;
	for (size_t i = 0; i < n; i++)
		for (uint32_t k = 0; k < d[i].a->nblocks; k++) {
			int j = profile_func__block_at(d[i].b, d[i].a->blocks[k].addr);
			int64_t ca = d[i].a->blocks[k].count, cb = j < 0 ? -1 : d[i].b->blocks[j].count;
			uint64_t c = delta(ca, cb);

			if ((c || known(ca) != known(cb)) && nb_ < cap)
				bd[nb_++] = (struct bdiff){ &d[i], k, j < 0 ? UINT32_MAX : (uint32_t)j,
							    c };
		}
	qsort(bd, nb_, sizeof(*bd), cmp_bdiff);
	fprintf(out, "\nblocks (largest change first)\n%-40s %-14s %14s %14s %14s\n", "function",
		"block", "A", "B", "change");
	for (size_t i = 0; i < nb_ && i < top; i++) {
		const struct profile_func *a = bd[i].f->a, *b = bd[i].f->b;
		int64_t ca = a->blocks[bd[i].ia].count;
		int64_t cb = bd[i].ib == UINT32_MAX ? -1 : b->blocks[bd[i].ib].count;
		char addr[32];

		snprintf(addr, sizeof(addr), "0x%" PRIx64, a->blocks[bd[i].ia].addr);
		fprintf(out, "%-40.40s %-14s", a->name, addr);
		put_count(out, ca, 14);
		put_count(out, cb, 14);
		put_change(out, ca, cb);
	}
	free(bd);
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
	int opt, status = EXIT_INPUT, err;

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
		err = print_json(stdout, argv[optind], argv[optind + 1], d, n, &pa, &pb);
		if (err) {
			pr_err(err == -ENOMEM ? "out of memory" : "write error");
			goto out;
		}
	} else {
		print_text(stdout, argv[optind], argv[optind + 1], d, n, pa.nfuncs, top);
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
