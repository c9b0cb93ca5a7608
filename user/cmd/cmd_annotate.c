/*
 * `edgeprof annotate [PROFILE] [FUNCTION|FILE:LINE] [--binary PATH] [--top N] [--no-source]
 * [--source-map OLD=NEW]...`: the profile's functions as annotated source and disassembly
 * (user/report/annotate.h), to standard output. Parses the command line only.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "user/builtin.h"
#include "user/profile/profile.h"
#include "user/report/annotate.h"
#include "user/util/log.h"

#define DEFAULT_TOP 10
#define MAX_TOP 1000000

static const char annotate_usage[] =
	"usage: edgeprof annotate [PROFILE] [FUNCTION|FILE:LINE] [--binary PATH] [--top N]\n"
	"                         [--no-source] [--source-map OLD=NEW]...\n"
	"\n"
	"Shows the functions of PROFILE (default ./" PROFILE_DEFAULT_PATH ") as perf annotate and\n"
	"gcov -b do: the hottest first (most block executions), or the functions named FUNCTION,\n"
	"or those holding code of source line FILE:LINE (FILE a path or its last components). For\n"
	"each, its source lines with their counts (a line's count is the largest count of the\n"
	"blocks holding its code, as export --format lcov counts it; two lines of context around\n"
	"them), then its disassembly block by block: each block's count and its out-edges'\n"
	"kinds and counts (taken, not_taken, switch, return...), ? where a count is unknown.\n"
	"Source files that cannot be read leave the disassembly only, said in one line. With one\n"
	"argument, it is PROFILE when a file of that name exists.\n"
	"\n"
	"  --binary PATH    the profiled binary, if it moved (the build-id must match)\n"
	"  --top N          without FUNCTION or FILE:LINE: the N hottest functions (default 10)\n"
	"  --no-source      the disassembly only\n"
	"  --source-map OLD=NEW  read a source file whose path starts with OLD from NEW and the\n"
	"                   rest of its path (up to 16)\n"
	"  -h, --help       show this help\n"
	"\n"
	"Exit status: 0, 1 for a bad profile or binary or no such function, 2 for a bad command\n"
	"line.\n";

/* Whether S is FILE:LINE: the part after its last ':' a line number, into O. */
static bool parse_file_line(char *s, struct annotate_opts *o)
{
	char *colon = strrchr(s, ':');
	unsigned long line;

	if (!colon || colon == s || colon[-1] == ':' || !parse_ulong(colon + 1, INT32_MAX, &line) ||
	    !line)
		return false;
	*colon = '\0';
	o->src_file = s;
	o->src_line = (int)line;
	return true;
}

int cmd_annotate(int argc, char **argv)
{
	enum { OPT_BINARY = 256, OPT_TOP, OPT_NO_SOURCE, OPT_SOURCE_MAP };
	static const struct option opts[] = {
		{ "binary", required_argument, NULL, OPT_BINARY },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "no-source", no_argument, NULL, OPT_NO_SOURCE },
		{ "source-map", required_argument, NULL, OPT_SOURCE_MAP },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct annotate_opts o = { .top = DEFAULT_TOP };
	const char *file = PROFILE_DEFAULT_PATH;
	char *target = NULL;
	struct profile p;
	int opt, ret, err;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (opt) {
		case OPT_BINARY:
			if (!*optarg)
				return usage_error("annotate", "--binary needs a path");
			o.binary = optarg;
			break;
		case OPT_TOP:
			if (!parse_ulong(optarg, MAX_TOP, &o.top))
				return usage_error("annotate", "--top: '%s' is not a number from 0 to "
						   "%d", optarg, MAX_TOP);
			break;
		case OPT_NO_SOURCE:
			o.no_source = true;
			break;
		case OPT_SOURCE_MAP:
			err = source_maps__add(&o.source_maps, optarg);
			if (err == -E2BIG)
				return usage_error("annotate", "--source-map: at most %d",
						   SOURCE_MAPS_MAX);
			if (err)
				return usage_error("annotate", "--source-map: '%s' is not OLD=NEW",
						   optarg);
			break;
		case 'h':
			fputs(annotate_usage, stdout);
			return EXIT_OK;
		default:
			return getopt_error("annotate", opt, argv);
		}
	}
	if (argc - optind > 2)
		return usage_error("annotate", "unexpected argument '%s'", argv[optind + 2]);
	if (argc - optind == 2) {
		file = argv[optind];
		target = argv[optind + 1];
	} else if (argc - optind == 1) {
		if (access(argv[optind], F_OK) == 0)
			file = argv[optind];
		else
			target = argv[optind];
	}
	if (target && !*target)
		return usage_error("annotate", "an empty FUNCTION");
	if (target && !parse_file_line(target, &o))
		o.function = target;
	if (profile__read(file, &p))
		return EXIT_INPUT;
	ret = annotate__write(stdout, &p, file, &o) ? EXIT_INPUT : EXIT_OK;
	profile__release(&p);
	return ret;
}
