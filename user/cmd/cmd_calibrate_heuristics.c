/*
 * `edgeprof calibrate-heuristics PROFILE... [--rates FILE] [--min N] [--dry-run]`: measures
 * each branch heuristic's hit rate (the executions of the edge it predicts over the
 * executions of the branches where it applies) on the user's own profiles, stores the rates
 * for later static estimates (heuristic_rates.h), and shows the top-20 % weighted matching
 * scores of every profile before and after.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "user/builtin.h"
#include "user/session/decode_cache.h"
#include "user/report/heuristic_rates.h"
#include "user/util/log.h"
#include "user/profile/profile.h"
#include "user/report/static_eval.h"

#include "cfg/cfg.h"
#include "cfg/elf_image.h"
#include "cfg/error.h"

#define DEFAULT_MIN 20
#define RATE_MIN 0.02
#define RATE_MAX 0.98

static const char calib_usage[] =
	"usage: edgeprof calibrate-heuristics PROFILE... [--rates FILE] [--min N] [--dry-run]\n"
	"\n"
	"Measures each branch heuristic's hit rate on the given profiles: the executions of the\n"
	"edge it predicts over the executions of the branches where it applies (the dynamic\n"
	"rate, as Ball and Larus measured Table 1; the mean per branch is shown too, for\n"
	"information), keeps the paper's Table 1 rate for a heuristic that applied to fewer\n"
	"than N branches that ran, stores the rates, and shows each profile's top-20 %\n"
	"weighted matching scores before (the rates in use until now) and after. 'edgeprof\n"
	"static', 'compare' and 'run --weights static' then use the stored rates.\n"
	"\n"
	"  PROFILE        profiles recorded by 'edgeprof run' (their binaries must still exist\n"
	"                 at the recorded paths, with the same build-id)\n"
	"\n"
	"Options:\n"
	"  --rates FILE   read the current rates from and store the new ones in FILE (default\n"
	"                 $XDG_CONFIG_HOME/edgeprof/heuristics.json, or\n"
	"                 ~/.config/edgeprof/heuristics.json)\n"
	"  --min N        branches that ran needed to replace a Table 1 rate (default 20)\n"
	"  --dry-run      show the new rates and scores, store nothing\n"
	"  -h, --help     show this help\n"
	"\n"
	"Exit status: 0 success, 1 bad input, 2 bad command line.\n";

struct calib_opts {
	const char *rates;
	unsigned long min;
	bool dry_run;
	char **profiles;
	size_t nprofiles;
};

static int parse_args(int argc, char **argv, struct calib_opts *o)
{
	static const struct option opts[] = {
		{ "rates", required_argument, NULL, 'r' },
		{ "min", required_argument, NULL, 'm' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	o->min = DEFAULT_MIN;
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (opt) {
		case 'r':
			o->rates = optarg;
			break;
		case 'm':
			if (!parse_ulong(optarg, 1000000000, &o->min))
				return usage_error("calibrate-heuristics",
						   "--min: '%s' is not a number", optarg);
			break;
		case 'n':
			o->dry_run = true;
			break;
		case 'h':
			fputs(calib_usage, stdout);
			return EXIT_OK;
		default:
			return getopt_error("calibrate-heuristics", opt, argv);
		}
	}
	if (optind >= argc)
		return usage_error("calibrate-heuristics", "no profile given");
	o->profiles = argv + optind;
	o->nprofiles = (size_t)(argc - optind);
	return -1;
}

/* One profile with its binary's CFG and its matched counts. */
struct input {
	struct profile p;
	struct elf_image img;
	struct cfg_program prog;
	struct dyn_profile dp;
	bool opened, built;
	double before[SC_COUNT], after[SC_COUNT]; /* top-20 % weighted */
};

static int load_input(struct input *in, const char *path)
{
	in->img.fd = -1;
	if (profile__read(path, &in->p))
		return -1;
	if (!in->p.binary_path || !*in->p.binary_path)
		return pr_err("'%s': the profile names no binary", path);
	if (elf_image__open(&in->img, in->p.binary_path))
		return pr_lib_err(in->p.binary_path, "cannot open");
	in->opened = true;
	if (profile__check_build_id(&in->p, in->img.build_id))
		return -1;
	if (decode_cache__build(&in->prog, &in->img, true, NULL, NULL))
		return pr_lib_err(in->p.binary_path, "cannot build the control-flow graph");
	in->built = true;
	return dyn_profile__match(&in->dp, &in->p, &in->prog);
}

static void free_input(struct input *in)
{
	dyn_profile__free(&in->dp);
	if (in->built)
		cfg_program__free(&in->prog);
	if (in->opened)
		elf_image__close(&in->img);
	profile__release(&in->p);
}

/* Scores IN with RATES into OUT (top-20 % weighted); adds heuristic stats to HS if given. */
static int score(struct input *in, const double *rates, double *out, struct heur_stats *hs)
{
	struct static_profile sp;
	struct score_table t;

	if (static_profile__compute(&sp, &in->prog, rates))
		return pr_err("'%s': cannot estimate the static profile: out of memory",
			      in->p.binary_path);
	if (static_eval__scores(&sp, &in->dp, &in->prog, &t)) {
		static_profile__free(&sp);
		return -1;
	}
	for (unsigned k = 0; k < SC_COUNT; k++)
		out[k] = t.nitems[k] ? t.s[k][1].w : NAN;
	if (hs)
		static_eval__heuristics(&sp, &in->dp, hs);
	static_profile__free(&sp);
	return 0;
}

int cmd_calibrate_heuristics(int argc, char **argv)
{
	struct calib_opts o = { 0 };
	struct input *in = NULL;
	struct heur_stats hs = { 0 };
	double before[BH_COUNT], after[BH_COUNT], def[BH_COUNT];
	uint64_t ran[BH_COUNT];
	char from[PATH_MAX], saved[PATH_MAX] = "";
	int ret = EXIT_INPUT, err;

	err = parse_args(argc, argv, &o);
	if (err >= 0)
		return err;
	bh__default_rates(def);
	/* Current rates: FILE when given and present, else the stored ones, else Table 1. */
	if (o.rates && access(o.rates, F_OK)) {
		bh__default_rates(before);
		from[0] = '\0';
	} else if (heuristic_rates__load(o.rates, before, from, sizeof(from))) {
		return EXIT_INPUT;
	}
	in = calloc(o.nprofiles, sizeof(*in));
	if (!in)
		return pr_err("out of memory"), EXIT_INPUT;
	for (size_t i = 0; i < o.nprofiles; i++)
		if (load_input(&in[i], o.profiles[i]) || score(&in[i], before, in[i].before, &hs))
			goto out;
	for (unsigned k = 0; k < BH_COUNT; k++) {
		after[k] = def[k];
		ran[k] = hs.h[k].executed;
		if (hs.h[k].executed >= o.min && hs.h[k].total > 0) {
			after[k] = hs.h[k].hits / hs.h[k].total;
			after[k] = after[k] < RATE_MIN ? RATE_MIN : after[k] > RATE_MAX ? RATE_MAX :
				   after[k];
		}
	}
	for (size_t i = 0; i < o.nprofiles; i++)
		if (score(&in[i], after, in[i].after, NULL))
			goto out;
	if (!o.dry_run && heuristic_rates__save(o.rates, after, ran, o.profiles,
						o.nprofiles, saved, sizeof(saved)))
		goto out;

	printf("heuristic  branches       ran  dynamic  per-branch   before    after\n");
	for (unsigned k = 0; k < BH_COUNT; k++) {
		heur_rate__print(bh__name(k), &hs.h[k]);
		printf("    %.3f    %.3f%s\n", before[k], after[k],
		       hs.h[k].executed < o.min ? "  (too few: Table 1)" : "");
	}
	printf("\ntop-20%% weighted scores, before -> after (paper: LBK .82 LBR .69 FI .85 FC .72 "
	       "GBK .77 GBR .78)\n");
	for (size_t i = 0; i < o.nprofiles; i++) {
		printf("%s\n", o.profiles[i]);
		for (unsigned k = 0; k < SC_COUNT; k++)
			printf("  %-4s %5.2f -> %5.2f\n", score__name(k), in[i].before[k],
			       in[i].after[k]);
	}
	printf("\nrates before: %s\n", from[0] ? from : "Table 1");
	if (o.dry_run)
		printf("not stored (--dry-run)\n");
	else
		printf("stored in %s\n", saved);
	ret = EXIT_OK;
out:
	for (size_t i = 0; i < o.nprofiles; i++)
		free_input(&in[i]);
	free(in);
	return ret;
}
