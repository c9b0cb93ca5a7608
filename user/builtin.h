/*
 * The edgeprof command table. Each subcommand NAME lives in user/cmd_NAME.c and exports
 * `int cmd_NAME(int argc, char **argv)`: argv[0] is the command name, the return value is the
 * process exit status. Adding a command is one line in EDGEPROF_COMMANDS (and its file).
 */
#ifndef EDGEPROF_USER_BUILTIN_H
#define EDGEPROF_USER_BUILTIN_H

#include <stdbool.h>

#define EDGEPROF_VERSION "0.1.0"

/* Exit statuses shared by every command. */
#define EXIT_OK 0
#define EXIT_INPUT 1 /* bad input file, failed analysis, write error */
#define EXIT_USAGE 2 /* bad command line */

/* X(name, one-line summary) for every command, in the order `edgeprof --help` lists them. */
#define EDGEPROF_COMMANDS(X)                                                   \
	X(cfg, "show the control-flow graph of a binary or of one function")                   \
	X(run, "run a program and count every edge and block of it exactly")                     \
	X(record, "attach to a running process (-p PID) and count exactly while attached")      \
	X(report, "show a recorded profile: summary, hottest functions, blocks and edges")       \
	X(calibrate, "measure what a probe hit costs on this machine")                           \
	X(static, "estimate a static profile (Wu-Larus) of a binary without running it")          \
	X(compare, "compare a profile with the static estimate: Wall's matching scores")          \
	X(calibrate_heuristics, "measure the branch heuristics' hit rates on your profiles")  \
	X(annotate, "show functions' source and disassembly with their block and edge counts")  \
	X(export, "write a profile in another tool's format (BOLT, lcov, gcov, LLVM)")          \
	X(merge, "add up profiles of the same build into one")                                   \
	X(diff, "show the functions and blocks whose counts differ between two profiles")

#define EDGEPROF_DECLARE_CMD(name, summary) int cmd_##name(int argc, char **argv);
EDGEPROF_COMMANDS(EDGEPROF_DECLARE_CMD)
#undef EDGEPROF_DECLARE_CMD

/* Reports a command-line error for command CMD (NULL for the top level) as one line on
 * stderr, pointing at the command's --help. Returns EXIT_USAGE. */
int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Reports getopt_long's error OPT for command CMD through usage_error: ':' an option without
 * its argument, anything else an unknown option (named from optopt for a short one, else
 * from ARGV[optind - 1]). Returns EXIT_USAGE. */
int getopt_error(const char *cmd, int opt, char **argv);

/* Parses S, a decimal number from 0 to MAX (strtoul's syntax, but not empty and not starting
 * with '-'), into *OUT. Returns false when S is anything else. */
bool parse_ulong(const char *s, unsigned long max, unsigned long *out);

#endif
