/*
 * edgeprof's entry point: global options (--help, --version, -v, -q), then dispatch through
 * the command table of builtin.h to one cmd_NAME function per subcommand, perf-style.
 * `edgeprof help CMD` is the same as `edgeprof CMD --help`.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/builtin.h"
#include "user/util/log.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

#define EDGEPROF_TABLE_ENTRY(name, summary) { #name, cmd_##name, summary },
static const struct command commands[] = {
	EDGEPROF_COMMANDS(EDGEPROF_TABLE_ENTRY)
};
#undef EDGEPROF_TABLE_ENTRY

static void print_usage(FILE *out)
{
	fprintf(out,
		"usage: edgeprof [-v | -q] COMMAND [ARGS]\n"
		"       edgeprof [-v | -q] -p PID [-d SECONDS] [-o FILE]   (edgeprof record)\n"
		"       edgeprof --version\n"
		"       edgeprof help COMMAND\n"
		"\n"
		"edgeprof counts how often every edge and block of an unmodified x86-64 program\n"
		"executes, exactly, with counters on the chords of a spanning tree of each\n"
		"function's control-flow graph, of a program it starts or of a running process:\n"
		"increments written into the running process where that is proven safe, eBPF\n"
		"uprobes elsewhere (no file is changed). It shows those graphs, estimates profiles\n"
		"statically (Wu-Larus) and compares them with measured ones, derives average\n"
		"times and their variance (Sarkar), and adds up and compares profiles.\n"
		"\n"
		"Commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		char name[32];

		snprintf(name, sizeof(name), "%s", commands[i].name);
		for (char *c = name; *c; c++)
			if (*c == '_')
				*c = '-';
		if (strlen(name) > 10)
			fprintf(out, "  %s\n  %-10s %s\n", name, "", commands[i].summary);
		else
			fprintf(out, "  %-10s %s\n", name, commands[i].summary);
	}
	fprintf(out,
		"\n"
		"Options:\n"
		"  -h, --help     show this help\n"
		"      --version  print the version\n"
		"  -v, --verbose  more diagnostics on stderr (repeat for debug)\n"
		"  -q, --quiet    errors only on stderr\n"
		"\n"
		"Run 'edgeprof COMMAND --help' for a command's options.\n");
}

int usage_error(const char *cmd, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (cmd)
		pr_err("%s (see 'edgeprof %s --help')", buf, cmd);
	else
		pr_err("%s (see 'edgeprof --help')", buf);
	return EXIT_USAGE;
}

/* Command names are C identifiers in the table: NAME matches with '-' for '_'
 * (calibrate-heuristics is cmd_calibrate_heuristics). */
static bool name_matches(const char *table, const char *name)
{
	for (; *table && *name; table++, name++)
		if (*table != *name && !(*table == '_' && *name == '-'))
			return false;
	return !*table && !*name;
}

bool parse_ulong(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	if (!*s || *s == '-')
		return false;
	errno = 0;
	*out = strtoul(s, &end, 10);
	return !errno && !*end && *out <= max;
}

int getopt_error(const char *cmd, int opt, char **argv)
{
	if (opt == ':')
		return usage_error(cmd, "option '%s' needs an argument", argv[optind - 1]);
	if (optopt && strncmp(argv[optind - 1], "--", 2))
		return usage_error(cmd, "unknown option '-%c'", optopt);
	return usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (name_matches(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static int run_help(int argc, char **argv)
{
	const struct command *cmd;
	char *help_argv[] = { NULL, "--help", NULL };

	if (argc < 2) {
		print_usage(stdout);
		return EXIT_OK;
	}
	if (argc > 2)
		return usage_error(NULL, "help: unexpected argument '%s'", argv[2]);
	cmd = find_command(argv[1]);
	if (!cmd)
		return usage_error(NULL, "unknown command '%s'", argv[1]);
	help_argv[0] = (char *)cmd->name;
	return cmd->fn(2, help_argv);
}

/* Runs `edgeprof record` with the arguments ARGV[0 .. ARGC) (from -p on). */
static int record_from(int argc, char **argv)
{
	char **rargv = calloc((size_t)argc + 2, sizeof(*rargv));
	int ret;

	if (!rargv) {
		pr_err("out of memory");
		return EXIT_INPUT;
	}
	rargv[0] = "record";
	memcpy(rargv + 1, argv, (size_t)argc * sizeof(*rargv));
	ret = cmd_record(argc + 1, rargv);
	free(rargv);
	return ret;
}

static int run(int argc, char **argv)
{
	const struct command *cmd;
	int i, verbosity = 0;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			print_usage(stdout);
			return EXIT_OK;
		} else if (!strcmp(a, "--version")) {
			printf("edgeprof %s\n", EDGEPROF_VERSION);
			return EXIT_OK;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			verbosity++;
		} else if (!strcmp(a, "-vv")) {
			verbosity += 2;
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			verbosity = -1;
		} else if (!strncmp(a, "-p", 2) || !strncmp(a, "--pid", 5)) {
			/* `edgeprof -p PID ...` is `edgeprof record -p PID ...`. */
			log__set_verbosity(verbosity);
			return record_from(argc - i, argv + i);
		} else {
			return usage_error(NULL, "unknown option '%s'", a);
		}
	}
	log__set_verbosity(verbosity);
	if (i >= argc)
		return usage_error(NULL, "no command given");
	if (!strcmp(argv[i], "help"))
		return run_help(argc - i, argv + i);
	cmd = find_command(argv[i]);
	if (!cmd)
		return usage_error(NULL, "unknown command '%s'", argv[i]);
	return cmd->fn(argc - i, argv + i);
}

int main(int argc, char **argv)
{
	int ret = run(argc, argv);

	/* A report that could not be written is a failure, even for --help and --version. */
	errno = 0;
	if (fflush(stdout) || ferror(stdout)) {
		if (ret == EXIT_OK)
			pr_err("error writing to standard output: %s", strerror(errno ? errno : EIO));
		return ret == EXIT_OK ? EXIT_INPUT : ret;
	}
	return ret;
}
