/*
 * `edgeprof calibrate [--iterations N] [--repeat K] [--json]`: measures what one uprobe hit
 * costs on this machine for each probe class (calibration.c), saves it where placement finds
 * it, and prints a table or JSON. The hidden `--target-loop N` runs the measured loop
 * (calibrate_target.c) in the child that calibration starts.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/builtin.h"
#include "user/count/calibration.h"
#include "user/util/log.h"

struct calibrate_opts {
	uint64_t iterations;
	unsigned repeat;
	bool json;
	bool target;
};

static void calibrate_usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: edgeprof calibrate [--iterations N] [--repeat K] [--json]\n"
	    "\n"
	    "Measures the cost of one counter hit on this machine for each probe class: a\n"
	    "uprobe on a 5-byte nop (optimised uprobe), on a conditional jump and a push\n"
	    "(emulated by the kernel), and on a mov (single-stepped); and an in-process\n"
	    "counter (a jump to a trampoline written into the process) where the flags are\n"
	    "dead and where they must be saved. A built-in loop runs N times in a child\n"
	    "process (100 N, at least 2000000, for the in-process counters), K times with\n"
	    "one counter and K times without; the cost is the difference of the median times\n"
	    "divided by the iterations, and every counted run must count one hit each.\n"
	    "The result is saved to $XDG_CACHE_HOME/edgeprof/site-costs.json (default\n"
	    "~/.cache/edgeprof/), where probe placement reads it. Without one, 'run' and\n"
	    "'record' make a quick calibration once (about 1 s) unless EDGEPROF_NO_CALIBRATE=1.\n"
	    "\n"
	    "Options:\n"
	    "  --iterations N  loop iterations per run (default %d)\n"
	    "  --repeat K      runs per class, with and without the probe (default %d)\n"
	    "  --json          print the result as JSON (the saved format, plus \"file\")\n"
	    "  -v, --verbose   more diagnostics on stderr\n"
	    "  -q, --quiet     errors only on stderr\n"
	    "  -h, --help      show this help\n"
	    "\n"
	    "Needs root (or CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN). Exit status: 0 success,\n"
	    "1 failure (BPF unavailable, inexact counts, unmeasurable costs), 2 bad command\n"
	    "line.\n",
	    CALIBRATION_DEFAULT_ITERATIONS, CALIBRATION_DEFAULT_REPEAT);
}

/* Parses a decimal number in [1, MAX] into *V. */
static bool parse_count(const char *s, uint64_t max, uint64_t *v)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return !errno && !*end && *v >= 1 && *v <= max;
}

/* Parses the command line into O. Returns -1 to go on, else the exit status to return. */
static int parse_args(int argc, char **argv, struct calibrate_opts *o)
{
	int verbosity = log__verbosity();
	uint64_t v;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			calibrate_usage(stdout);
			return EXIT_OK;
		} else if (!strcmp(a, "--iterations") || !strcmp(a, "--target-loop")) {
			if (i + 1 >= argc || !parse_count(argv[i + 1], 1000000000, &v))
				return usage_error("calibrate",
						   "%s needs a number from 1 to "
						   "1000000000",
						   a);
			o->iterations = v;
			o->target = !strcmp(a, "--target-loop");
			i++;
		} else if (!strcmp(a, "--repeat")) {
			if (i + 1 >= argc || !parse_count(argv[i + 1], 1000, &v))
				return usage_error("calibrate",
						   "--repeat needs a number from 1 to 1000");
			o->repeat = (unsigned)v;
			i++;
		} else if (!strcmp(a, "--json")) {
			o->json = true;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			verbosity = verbosity < 0 ? 1 : verbosity + 1;
		} else if (!strcmp(a, "-vv")) {
			verbosity = verbosity < 0 ? 2 : verbosity + 2;
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			verbosity = -1;
		} else if (a[0] == '-') {
			return usage_error("calibrate", "unknown option '%s'", a);
		} else {
			return usage_error("calibrate", "unexpected argument '%s'", a);
		}
	}
	log__set_verbosity(verbosity);
	return -1;
}

static void print_table(const struct calibration *c, const char *path)
{
	static const char *const kinds[] = {
	    [PROBE_STEPPED] = "stepped", [PROBE_EMULATED] = "emulated", [PROBE_NOP5] = "nop5",
	    [PROBE_NEVER] = "never",	 [PROBE_PATCH] = "patch",	[PROBE_PATCH_FLAGS] = "patch",
	};

	printf("%-11s %-40s %-9s %12s %10s %5s\n", "class", "counted instruction", "kind",
	       "ns per hit", "hits", "runs");
	for (int k = 0; k < CALIB_NCLASSES; k++) {
		const struct calib_result *r = &c->classes[k];

		printf("%-11s %-40s %-9s %12.1f %10" PRIu64 " %5u\n", r->name, r->insn,
		       r->probe_class < PROBE_CLASS_COUNT ? kinds[r->probe_class] : "?",
		       r->ns_per_hit, r->hits, r->runs);
	}
	printf("\nloop without counters: %.0f ns for %" PRIu64 " iterations (median of %u runs), "
	       "%.0f ns for %" PRIu64 " (median of %u)\n",
	       c->unprobed_ns, c->iterations, c->repeat * CALIB_NUPROBE, c->unpatched_ns,
	       c->patch_iterations, c->repeat * (CALIB_NCLASSES - CALIB_NUPROBE));
	printf("site costs: stepped %.1f ns, emulated %.1f ns, nop5 %.1f ns, patch %.1f ns, "
	       "patch-flags %.1f ns (kernel %s)\n",
	       c->costs.ns[PROBE_STEPPED], c->costs.ns[PROBE_EMULATED], c->costs.ns[PROBE_NOP5],
	       c->costs.ns[PROBE_PATCH], c->costs.ns[PROBE_PATCH_FLAGS], c->kernel);
	printf("saved to %s\n", path);
}

int cmd_calibrate(int argc, char **argv)
{
	struct calibrate_opts o = {
	    .iterations = CALIBRATION_DEFAULT_ITERATIONS,
	    .repeat = CALIBRATION_DEFAULT_REPEAT,
	};
	struct calibration c;
	char path[PATH_MAX];
	int ret;

	ret = parse_args(argc, argv, &o);
	if (ret >= 0)
		return ret;
	if (o.target)
		return calibrate_target__run(o.iterations);
	if (calibration__run(&c, o.iterations, o.repeat) ||
	    calibration__save(&c, path, sizeof(path)))
		return EXIT_INPUT;
	if (o.json) {
		json_t *j = calibration__to_json(&c);

		if (!j) {
			pr_err("out of memory");
			return EXIT_INPUT;
		}
		json_object_set_new(j, "file", json_string(path));
		json_dumpf(j, stdout, CALIBRATION_JSON_FLAGS);
		putchar('\n');
		json_decref(j);
	} else {
		print_table(&c, path);
	}
	return EXIT_OK;
}
