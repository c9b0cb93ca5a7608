/*
 * `edgeprof compare PROFILE [BINARY] [--json] [--rates FILE]`: compares a recorded profile
 * with the static estimate of the same build: Wall's unweighted and weighted matching scores
 * at the top 10..50 % for the six analyses of Wu and Larus (beside the paper's SPECint92
 * figures), each heuristic's hit rate measured on this profile (beside Table 1), and the trap
 * cost the profile's placement paid next to what the default, static and exact (Exact-Max)
 * weightings would have paid on the same true counts.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/builtin.h"
#include "user/report/heuristic_rates.h"
#include "user/util/json_out.h"
#include "user/util/log.h"
#include "user/profile/profile.h"
#include "user/profile/profile_binary.h"
#include "user/session/run_weights.h"
#include "user/report/static_eval.h"
#include "user/count/patch_sites.h"

#include "cfg/cfg.h"
#include "cfg/elf_image.h"
#include "cfg/error.h"

static const char compare_usage[] =
	"usage: edgeprof compare [PROFILE] [BINARY] [--json] [--rates FILE] [--no-placement]\n"
	"\n"
	"Compares a profile recorded by 'edgeprof run' with the static estimate of the same\n"
	"build ('edgeprof static'):\n"
	"  - Wall's matching scores at the top 10, 20, 30, 40 and 50 %: U, the fraction of the\n"
	"    statically hottest items that are among the dynamically hottest; W, their share of\n"
	"    the dynamic counts of the dynamically hottest (Wall's definition; Wu and Larus's\n"
	"    text says static frequencies, their example uses dynamic counts), for local blocks\n"
	"    (LBK), local edges (LBR), function invocations (FI), function calls (FC), global\n"
	"    blocks (GBK) and global edges (GBR), beside the paper's SPECint92 geometric means;\n"
	"  - per heuristic: the branches where it applied, those that ran, and how often the\n"
	"    edge it predicted was taken (its hit rate), beside the paper's Table 1;\n"
	"  - placement: the trap cost (executions x site cost) of the profile's own probes, and\n"
	"    of the probes placement would choose with the default (Ball-Larus), the static and\n"
	"    the exact (this profile's counts: Exact-Max) weights, and of the naive placement\n"
	"    (a probe on every block), all on the true counts; and the functions where the\n"
	"    profile's sites pay most over Exact-Max's.\n"
	"\n"
	"  PROFILE        the profile (default ./" PROFILE_DEFAULT_PATH ")\n"
	"  BINARY         the profiled binary (default: the path recorded in the profile);\n"
	"                 its build-id must match\n"
	"\n"
	"Options:\n"
	"  --json         print JSON: {\"scores\":{\"LBK\":{\"10\":{\"u\",\"w\"},...},...},\n"
	"                 \"branch_probs\",\"items\",\"paper\",\"heuristics\",\"oh_rules\",\n"
	"                 \"placement\",\"oracle_gap\"}\n"
	"  --rates FILE   heuristic hit rates (default: the stored ones, else Table 1)\n"
	"  --no-placement  skip the placement comparison\n"
	"  --branch-probs SOURCE  where the static estimate's branch probabilities come\n"
	"                 from: heuristics (default: the static estimate), profile (the\n"
	"                 profile's measured ones: the error left is the propagation's), or\n"
	"                 direction (the heuristics' probabilities turned to the edge the\n"
	"                 profile took more often: the error left is their magnitudes'), or\n"
	"                 loops (the profile's on branches with a back edge or a loop exit,\n"
	"                 the heuristics' elsewhere: what knowing each loop's trip count\n"
	"                 would give)\n"
	"  -h, --help     show this help\n"
	"\n"
	"Exit status: 0 success, 1 bad input, 2 bad command line.\n";

struct compare_opts {
	const char *profile, *binary, *rates;
	enum probs_source probs;
	bool json, no_placement;
};

static int parse_args(int argc, char **argv, struct compare_opts *o)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "rates", required_argument, NULL, 'r' },
		{ "no-placement", no_argument, NULL, 'n' },
		{ "branch-probs", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			o->json = true;
			break;
		case 'r':
			o->rates = optarg;
			break;
		case 'n':
			o->no_placement = true;
			break;
		case 'b':
			if (static_eval__probs_lookup(optarg, &o->probs))
				return usage_error("compare", "--branch-probs takes heuristics, "
						   "profile, direction or loops, not '%s'", optarg);
			break;
		case 'h':
			fputs(compare_usage, stdout);
			return EXIT_OK;
		default:
			return getopt_error("compare", opt, argv);
		}
	}
	o->profile = optind < argc ? argv[optind++] : PROFILE_DEFAULT_PATH;
	if (optind < argc)
		o->binary = argv[optind++];
	if (optind < argc)
		return usage_error("compare", "unexpected argument '%s'", argv[optind]);
	return -1;
}

/* The six placements compared. */
enum { PC_RECORDED, PC_SITES, PC_DEFAULT, PC_STATIC, PC_EXACT, PC_NAIVE, PC_COUNT };
static const char *const pc_names[PC_COUNT] = { "recorded", "profile_sites", "default",
						"static", "exact", "naive" };
static const char *const pc_titles[PC_COUNT] = {
	"as recorded (profile's est_trap_ns)", "profile's sites on true counts",
	"default weights (Ball-Larus)", "static weights (Wu-Larus)",
	"Exact-Max (this profile's counts)", "naive (a probe on every block)",
};

/* True if some site of P was counted in process (patched), not by a uprobe. */
static bool profile_in_process(const struct profile *p)
{
	for (size_t i = 0; i < p->nsites; i++)
		if (probe_class__in_process(p->sites[i].probe_class))
			return true;
	return false;
}

/* Functions listed where the profile's placement pays most over Exact-Max. */
#define GAP_TOP 10

struct results {
	struct score_table t;
	struct heur_stats hs;
	struct plan_cost pc[PC_COUNT];
	bool have_pc;
	const struct cfg_program *prog;
	uint32_t gap[GAP_TOP]; /* functions by PC_SITES minus PC_EXACT ns, largest first */
	unsigned ngap;
	double rates[BH_COUNT];
	char rates_from[PATH_MAX];
	const char *probs; /* --branch-probs SOURCE */
};

/* R as JSON: {"branches","ran","hit_rate","branch_rate"}. */
static json_t *rate_json(const struct heur_rate *r, int *err)
{
	json_t *x = json_object();

	jout_set(x, "branches", json_integer((json_int_t)r->applied), err);
	jout_set(x, "ran", json_integer((json_int_t)r->executed), err);
	jout_set(x, "hit_rate", r->total > 0 ? json_real(r->hits / r->total) : json_null(), err);
	jout_set(x, "branch_rate", r->executed ? json_real(r->frac / (double)r->executed) :
		 json_null(), err);
	return x;
}

static void print_text(const struct profile *p, const char *binary, const struct results *r)
{
	double def[BH_COUNT];

	bh__default_rates(def);
	printf("profile %s, binary %s, build-id %s\n", p->source, binary,
	       p->build_id[0] ? p->build_id : "none");
	printf("heuristic rates: %s\n", r->rates_from[0] ? r->rates_from : "Table 1");
	printf("branch probabilities: %s\n\n", r->probs);
	printf("Wall's matching scores (U unweighted, W weighted); 'paper': Wu-Larus SPECint92 "
	       "geometric means\n");
	printf("%-8s %8s", "", "items");
	for (unsigned q = 0; q < SC_NPCT; q++)
		printf("   top %2u%%  ", 10 * (q + 1));
	printf("\n%-8s %8s", "", "");
	for (unsigned q = 0; q < SC_NPCT; q++)
		printf("   U     W  ");
	printf("\n");
	for (unsigned k = 0; k < SC_COUNT; k++) {
		printf("%-8s %8zu", score__name(k), r->t.nitems[k]);
		for (unsigned q = 0; q < SC_NPCT; q++) {
			const struct match_score *s = &r->t.s[k][q];

			if (!r->t.nitems[k])
				printf("   -     -  ");
			else if (isnan(s->w))
				printf("  %.2f    -  ", s->u);
			else
				printf("  %.2f  %.2f", s->u, s->w);
		}
		printf("\n%-8s %8s", "  paper", "");
		for (unsigned q = 0; q < SC_NPCT; q++) {
			double u, w;

			score__paper(k, q, &u, &w);
			printf("  %.2f  %.2f", u, w);
		}
		printf("\n");
	}
	for (unsigned k = 0; k < 2; k++) {
		printf("%-8s %8zu", k ? "LBR/func" : "LBK/func", r->t.nfuncs[k]);
		for (unsigned q = 0; q < SC_NPCT; q++)
			if (r->t.nfuncs[k])
				printf("  %.2f  %.2f", r->t.fn[k][q].u, r->t.fn[k][q].w);
			else
				printf("   -     -  ");
		printf("\n");
	}
	printf("(LBK/func, LBR/func: each function that ran against its own blocks or edges,\n"
	       " averaged with weights its dynamic executions; items column: functions)\n");
	printf("\nheuristic  branches       ran  dynamic  per-branch  Table 1  rate used\n");
	for (unsigned k = 0; k < BH_COUNT; k++) {
		heur_rate__print(bh__name(k), &r->hs.h[k]);
		printf("    %.3f      %.3f\n", def[k], r->rates[k]);
	}
	for (unsigned q = BH_OH_SIGN; q < BH_OH_NRULES; q++) {
		char name[16];

		snprintf(name, sizeof(name), "OH %s", bh__oh_rule_name(q));
		heur_rate__print(name, &r->hs.oh[q]);
		printf("\n");
	}
	if (!r->have_pc)
		return;
	printf("\nplacement on this profile's true counts (executions x site cost)\n");
	printf("%-38s %9s %14s %12s\n", "", "sites", "hits", "trap ms");
	for (unsigned k = 0; k < PC_COUNT; k++)
		printf("%-38s %9zu %14llu %12.3f\n", pc_titles[k], r->pc[k].nsites,
		       (unsigned long long)r->pc[k].hits, r->pc[k].ns / 1e6);
	if (r->ngap)
		printf("\nwhere the profile's sites pay more than Exact-Max (trap ms)\n");
	for (unsigned i = 0; i < r->ngap; i++)
		printf("  %-40s %12.3f %12.3f\n", r->prog->funcs[r->gap[i]].name,
		       r->pc[PC_SITES].func_ns[r->gap[i]] / 1e6,
		       r->pc[PC_EXACT].func_ns[r->gap[i]] / 1e6);
}

struct gap_item {
	double excess; /* ns the profile's sites pay over Exact-Max's in one function */
	uint32_t func;
};

static int cmp_gap_desc(const void *a, const void *b)
{
	const struct gap_item *x = a, *y = b;

	return (x->excess < y->excess) - (x->excess > y->excess);
}

/* Fills R->gap with the functions where the profile's sites cost most over Exact-Max's.
 * Returns 0 or -1 (out of memory, reported). */
static int find_gap(struct results *r)
{
	const double *a = r->pc[PC_SITES].func_ns, *x = r->pc[PC_EXACT].func_ns;
	struct gap_item *v = malloc((r->prog->nfuncs + 1) * sizeof(*v));
	size_t n = 0;

	if (!v)
		return pr_err("out of memory");
	for (uint32_t f = 0; f < r->prog->nfuncs; f++)
		if (a[f] > x[f])
			v[n++] = (struct gap_item){ .excess = a[f] - x[f], .func = f };
	qsort(v, n, sizeof(*v), cmp_gap_desc);
	for (r->ngap = 0; r->ngap < GAP_TOP && r->ngap < n; r->ngap++)
		r->gap[r->ngap] = v[r->ngap].func;
	free(v);
	return 0;
}

static json_t *num_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

static int print_json(const struct profile *p, const char *binary, const struct results *r)
{
	json_t *o = json_object(), *sc = json_object(), *items = json_object(),
	       *paper = json_object(), *he = json_object(), *pl = json_object(),
	       *gap = json_array();
	double def[BH_COUNT];
	int err = 0;

	bh__default_rates(def);
	jout_set(o, "profile", json_string(p->source), &err);
	jout_set(o, "binary", json_string(binary), &err);
	jout_set(o, "branch_probs", json_string(r->probs), &err);
	jout_set(o, "rates_file", r->rates_from[0] ? json_string(r->rates_from) : json_null(),
		 &err);
	for (unsigned k = 0; k < SC_COUNT; k++) {
		json_t *a = json_object(), *pa = json_object();

		for (unsigned q = 0; q < SC_NPCT; q++) {
			json_t *x = json_object(), *px = json_object();
			char key[8];
			double u, w;

			snprintf(key, sizeof(key), "%u", 10 * (q + 1));
			jout_set(x, "u", r->t.nitems[k] ? json_real(r->t.s[k][q].u) : json_null(),
				 &err);
			jout_set(x, "w", r->t.nitems[k] ? num_or_null(r->t.s[k][q].w) : json_null(),
				 &err);
			jout_set(x, "m", json_integer((json_int_t)r->t.s[k][q].m), &err);
			jout_set(x, "k", json_integer((json_int_t)r->t.s[k][q].k), &err);
			jout_set(a, key, x, &err);
			score__paper(k, q, &u, &w);
			jout_set(px, "u", json_real(u), &err);
			jout_set(px, "w", json_real(w), &err);
			jout_set(pa, key, px, &err);
		}
		jout_set(sc, score__name(k), a, &err);
		jout_set(paper, score__name(k), pa, &err);
		jout_set(items, score__name(k), json_integer((json_int_t)r->t.nitems[k]), &err);
	}
	jout_set(o, "scores", sc, &err);
	{
		json_t *lf = json_object();

		for (unsigned k = 0; k < 2; k++) {
			json_t *a = json_object();

			for (unsigned q = 0; q < SC_NPCT; q++) {
				json_t *x = json_object();
				char key[8];

				snprintf(key, sizeof(key), "%u", 10 * (q + 1));
				jout_set(x, "u", r->t.nfuncs[k] ? json_real(r->t.fn[k][q].u) :
					 json_null(), &err);
				jout_set(x, "w", r->t.nfuncs[k] ? json_real(r->t.fn[k][q].w) :
					 json_null(), &err);
				jout_set(a, key, x, &err);
			}
			jout_set(a, "functions", json_integer((json_int_t)r->t.nfuncs[k]), &err);
			jout_set(lf, k ? "LBR" : "LBK", a, &err);
		}
		jout_set(o, "local_per_function", lf, &err);
	}
	jout_set(o, "items", items, &err);
	jout_set(o, "paper", paper, &err);
	for (unsigned k = 0; k < BH_COUNT; k++) {
		json_t *x = rate_json(&r->hs.h[k], &err);

		jout_set(x, "table1", json_real(def[k]), &err);
		jout_set(x, "rate_used", json_real(r->rates[k]), &err);
		jout_set(he, bh__name(k), x, &err);
	}
	jout_set(o, "heuristics", he, &err);
	{
		json_t *ohr = json_object();

		for (unsigned q = BH_OH_SIGN; q < BH_OH_NRULES; q++)
			jout_set(ohr, bh__oh_rule_name(q), rate_json(&r->hs.oh[q], &err), &err);
		jout_set(o, "oh_rules", ohr, &err);
	}
	if (r->have_pc) {
		for (unsigned k = 0; k < PC_COUNT; k++) {
			json_t *x = json_object();

			jout_set(x, "sites", json_integer((json_int_t)r->pc[k].nsites), &err);
			jout_set(x, "hits", json_integer((json_int_t)r->pc[k].hits), &err);
			jout_set(x, "trap_ns", json_real(r->pc[k].ns), &err);
			jout_set(pl, pc_names[k], x, &err);
		}
		jout_set(o, "placement", pl, &err);
		for (unsigned i = 0; i < r->ngap; i++) {
			json_t *x = json_object();
			uint32_t f = r->gap[i];

			jout_set(x, "function", json_string(r->prog->funcs[f].name), &err);
			jout_set(x, "trap_ns", json_real(r->pc[PC_SITES].func_ns[f]), &err);
			jout_set(x, "exact_trap_ns", json_real(r->pc[PC_EXACT].func_ns[f]), &err);
			jout_push(gap, x, &err);
		}
		jout_set(o, "oracle_gap", gap, &err);
		gap = NULL;
	} else {
		json_decref(pl);
	}
	json_decref(gap);
	return jout_print(o, err);
}

int cmd_compare(int argc, char **argv)
{
	struct compare_opts o = { 0 };
	struct profile p = { 0 };
	struct elf_image img = { .fd = -1 };
	struct cfg_program prog = { 0 };
	struct static_profile sp = { 0 }, est = { 0 };
	const struct static_profile *static_weights = &sp;
	struct dyn_profile dp = { 0 };
	struct run_weights rw = { 0 };
	struct patch_sites *ps = NULL;
	struct probs_ctx pctx = { 0 };
	struct results *r = calloc(1, sizeof(*r));
	const char *binary;
	bool opened = false;
	int ret = EXIT_INPUT, err;

	if (!r)
		return pr_err("out of memory"), EXIT_INPUT;
	err = parse_args(argc, argv, &o);
	if (err >= 0) {
		free(r);
		return err;
	}
	r->probs = static_eval__probs_name(o.probs);
	if (heuristic_rates__load(o.rates, r->rates, r->rates_from, sizeof(r->rates_from)))
		goto out;
	if (profile__read(o.profile, &p))
		goto out;
	binary = o.binary ? o.binary : p.binary_path;
	if (profile_binary__open(&p, o.profile, o.binary, &img, &prog))
		goto out;
	opened = true;
	if (dyn_profile__match(&dp, &p, &prog))
		goto out;
	pctx.dp = &dp;
	pctx.source = o.probs;
	if (static_profile__compute_with(&sp, &prog, r->rates, static_eval__probs, &pctx)) {
		pr_err("'%s': cannot estimate the static profile: out of memory", binary);
		goto out;
	}
	if (static_eval__scores(&sp, &dp, &prog, &r->t))
		goto out;
	static_eval__heuristics(&sp, &dp, &r->hs);
	if (!o.no_placement) {
		r->prog = &prog;
		/* A profile counted in process: the placements below are priced with the same
		 * mechanisms (where in-process counters can go), not as if every site trapped. */
		if (profile_in_process(&p) && patch_sites__open(&ps, &prog))
			goto out;
		r->pc[PC_SITES].func_ns = calloc(prog.nfuncs + 1, sizeof(double));
		r->pc[PC_EXACT].func_ns = calloc(prog.nfuncs + 1, sizeof(double));
		if (!r->pc[PC_SITES].func_ns || !r->pc[PC_EXACT].func_ns) {
			pr_err("out of memory");
			goto out;
		}
		r->pc[PC_RECORDED].ns = p.est_trap_ns;
		r->pc[PC_RECORDED].hits = p.hits;
		r->pc[PC_RECORDED].nsites = p.nsites;
		static_eval__profile_cost(&p, &prog, &dp, &r->pc[PC_SITES]);
		/* The static weights are the static estimate's, whatever --branch-probs says. */
		if (o.probs != PROBS_HEURISTICS) {
			if (static_profile__compute(&est, &prog, r->rates)) {
				pr_err("'%s': cannot estimate the static profile: out of memory",
				       binary);
				goto out;
			}
			static_weights = &est;
		}
		if (static_eval__plan_cost(&prog, &dp, PLACEMENT_CHORDS, &p.costs, NULL, NULL,
					   &r->pc[PC_DEFAULT]) ||
		    static_eval__plan_cost(&prog, &dp, PLACEMENT_CHORDS, &p.costs,
					   static_eval__weights, (void *)static_weights,
					   &r->pc[PC_STATIC]) ||
		    static_eval__plan_cost(&prog, &dp, PLACEMENT_NAIVE, &p.costs, NULL, NULL,
					   &r->pc[PC_NAIVE]))
			goto out;
		if (run_weights__load(&rw, o.profile, &img, &prog) ||
		    static_eval__plan_cost(&prog, &dp, PLACEMENT_CHORDS, &p.costs, run_weights__get,
					   &rw, &r->pc[PC_EXACT]))
			goto out;
		if (find_gap(r))
			goto out;
		r->have_pc = true;
	}
	if (o.json)
		err = print_json(&p, binary, r);
	else
		print_text(&p, binary, r), err = 0;
	ret = err ? EXIT_INPUT : EXIT_OK;
out:
	if (ps)
		patch_sites__close(ps);
	run_weights__free(&rw);
	dyn_profile__free(&dp);
	static_profile__free(&sp);
	static_profile__free(&est);
	if (opened)
		profile_binary__close(&img, &prog);
	profile__release(&p);
	if (r) {
		free(r->pc[PC_SITES].func_ns);
		free(r->pc[PC_EXACT].func_ns);
	}
	free(r);
	return ret;
}
