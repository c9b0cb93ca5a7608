/*
 * `edgeprof merge A B... -o OUT`: one profile whose counts are the sums of the inputs' (see
 * user/profile/profile_merge.h), written atomically; the inputs must be of the same build
 * and counted with the same placement.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "user/builtin.h"
#include "user/profile/profile.h"
#include "user/profile/profile_dest.h"
#include "user/profile/profile_merge.h"
#include "user/util/log.h"

static const char merge_usage[] =
	"usage: edgeprof merge PROFILE PROFILE... -o OUT\n"
	"\n"
	"Adds up profiles of the same build: every count of OUT (function, block, edge, virtual\n"
	"and longjmp edge, loop moments, raw counters and site hits) is the sum of the inputs'\n"
	"(unknown where any input's is unknown), its violations the union of theirs, and its\n"
	"run lists the inputs under \"merged\". The profiles must have equal build-ids and have\n"
	"been counted with the same placement (the same edgeprof, --weights and calibration);\n"
	"else one line says what differs and nothing is written.\n"
	"\n"
	"  -o, --output OUT  where the merged profile goes (required): a regular file or new name\n"
	"                    is written atomically; - is standard output\n"
	"  -h, --help        show this help\n";

/* Reads and validates PATH as a profile and returns its document. NULL after one pr_err. */
static json_t *load(const char *path)
{
	struct profile p;
	json_t *doc = NULL;

	if (profile__read_doc(path, &p, &doc))
		return NULL;
	profile__release(&p);
	return doc;
}

static int fill_doc(FILE *out, void *ctx, char *msg, size_t size)
{
	if (json_dumpf(ctx, out, JSON_COMPACT) || fputc('\n', out) == EOF) {
		snprintf(msg, size, "write error");
		return -EIO;
	}
	return 0;
}

int cmd_merge(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL;
	json_t *acc = NULL;
	struct profile check;
	int opt, status = EXIT_INPUT;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			out = optarg;
			break;
		case 'h':
			fputs(merge_usage, stdout);
			return EXIT_OK;
		default:
			return getopt_error("merge", opt, argv);
		}
	}
	if (!out)
		return usage_error("merge", "no output (-o OUT)");
	if (argc - optind < 2)
		return usage_error("merge", "needs at least two profiles");
	if (profile_dest__check(out))
		return EXIT_INPUT;
	acc = load(argv[optind]);
	if (!acc || profile_merge__start(acc, argv[optind]))
		goto out;
	for (int k = optind + 1; k < argc; k++) {
		json_t *b = load(argv[k]);
		int err = b ? profile_merge__add(acc, b, argv[optind], argv[k]) : -EINVAL;

		json_decref(b);
		if (err)
			goto out;
	}
	/* The sum is a profile the reader accepts, or it is not written. */
	if (profile__from_doc(acc, "the merged profile", &check)) {
		pr_err("'%s': not written: the merged profile is not valid (see above)", out);
		goto out;
	}
	profile__release(&check);
	if (profile_dest__write(out, "the profile", fill_doc, acc) == 0)
		status = EXIT_OK;
out:
	json_decref(acc);
	return status;
}
