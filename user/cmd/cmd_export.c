/*
 * `edgeprof export --format bolt|lcov|gcov|gcov-json|llvm-sample [-o FILE] [PROFILE] [BINARY]`:
 * a profile in a form another tool reads: BOLT's fdata (user/export/bolt_fdata.h), an lcov
 * tracefile (user/export/lcov.h), gcov reports (user/export/gcov_text.h), gcov's JSON
 * intermediate format (user/export/gcov_json.h) or LLVM's text sample profile
 * (user/export/llvm_sample.h), from the binary's CFG and the profile's counts, written
 * atomically.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cfg/cfg.h"
#include "cfg/elf_image.h"
#include "user/builtin.h"
#include "user/export/bolt_fdata.h"
#include "user/export/gcov_json.h"
#include "user/export/gcov_text.h"
#include "user/export/lcov.h"
#include "user/export/line_counts.h"
#include "user/export/llvm_sample.h"
#include "user/profile/profile.h"
#include "user/profile/profile_binary.h"
#include "user/profile/profile_dest.h"
#include "user/util/log.h"

static const char export_usage[] =
	"usage: edgeprof export --format bolt|lcov|gcov|gcov-json|llvm-sample [-o FILE|DIR]\n"
	"                       [PROFILE] [BINARY]\n"
	"\n"
	"Writes PROFILE (default ./" PROFILE_DEFAULT_PATH ") in a format another tool reads:\n"
	"  bolt   BOLT's fdata text for `llvm-bolt -data=FILE`, as a binary instrumented by\n"
	"         `llvm-bolt -instrument` writes it: a record per branch, fall-through and call\n"
	"         with its exact count (\"1 F OFF 1 G OFF 0 COUNT\", offsets in hex from the\n"
	"         function's start, BOLT's names: \"name/N\" for local symbols, \"name@PLT\"), and\n"
	"         \"0 [unknown] 0 1 F 0 0 COUNT\" for entries no recorded call explains (calls\n"
	"         from outside the binary, and indirect calls, whose targets edgeprof does not\n"
	"         record). Records whose count is unknown (edges of functions counted by block\n"
	"         only) and functions with violations are left out, and a line on stderr says\n"
	"         how many. BOLT needs the binary linked\n"
	"         with -Wl,--emit-relocs (or -q) to reorder it.\n"
	"  lcov   an lcov tracefile (genhtml, lcov, coverage services) of a binary built with\n"
	"         -g: per source file its functions (entry line, calls), lines (DA: the\n"
	"         largest count of the blocks holding an instruction of the line, so a line\n"
	"         ran exactly when one of its instructions did) and branches (BRDA: each\n"
	"         conditional jump's taken and not-taken counts, - when it never ran); code\n"
	"         without a line, unknown counts and functions with violations are left out\n"
	"  gcov   gcov's text reports (`gcov -b -c`, what `gcovr -g` reads), one per source\n"
	"         file, into the directory -o DIR (made if missing), named as gcov\n"
	"         --preserve-paths names them (\"#src#a.c.gcov\"): each source line with the\n"
	"         same count as lcov's, function and branch lines\n"
	"  gcov-json  gcov's JSON intermediate format (`gcov --json-format`, format_version\n"
	"         \"1\" as gcc 12 writes it, gzip-compressed): per source file its functions\n"
	"         (start and end line and column, blocks, blocks executed, invocations) and\n"
	"         lines (lcov's counts; per conditional jump a taken and a not-taken branch;\n"
	"         \"unexecuted_block\" when a block of the line never ran); \"blocks\" are\n"
	"         edgeprof's blocks, \"gcc_version\" says edgeprof's version\n"
	"  llvm-sample  LLVM's text sample profile for `clang -fprofile-sample-use=FILE`\n"
	"         (AutoFDO's input, `llvm-profdata show --sample` reads it) of a binary built\n"
	"         with -g: per function that ran \"NAME:TOTAL:HEAD\" (HEAD its invocations),\n"
	"         then \" OFF[.DISC]: COUNT [CALLEE:CALLS ...]\" per line, OFF the line minus\n"
	"         the function's DW_AT_decl_line, DISC the line's base discriminator, COUNT\n"
	"         the largest block count of its instructions times their duplication factor\n"
	"         (as AutoFDO), CALLEE:CALLS the direct calls made there; functions inlined\n"
	"         there (DWARF inlined subroutines) as \" OFF[.DISC]: CALLEE:TOTAL\" with their\n"
	"         own lines one space deeper. Build with -fdebug-info-for-profiling for\n"
	"         discriminators. Indirect calls' targets, code without a line, unknown\n"
	"         counts and functions with violations are left out\n"
	"\n"
	"  BINARY           the profiled binary (default: the path recorded in the profile);\n"
	"                   its build-id must match\n"
	"  -f, --format F   bolt, lcov, gcov, gcov-json or llvm-sample (required)\n"
	"  -o, --output FILE  where it goes (default: standard output; gcov: a directory,\n"
	"                   required); a file is written atomically\n"
	"  -h, --help       show this help\n";

enum export_format { FORMAT_BOLT, FORMAT_LCOV, FORMAT_GCOV, FORMAT_GCOV_JSON, FORMAT_LLVM_SAMPLE };

static const char *const format_names[] = { "bolt", "lcov", "gcov", "gcov-json", "llvm-sample" };

static const char no_lines[] = "the binary has no line tables (build it with -g)";

struct export_ctx {
	enum export_format format; /* bolt, lcov, gcov-json or llvm-sample */
	const char *file;          /* the profile's name */
	const struct profile *p;
	const struct cfg_program *prog;
	const struct elf_image *img;
	struct bolt_fdata_stats st;
	struct lcov_stats lst;
	struct llvm_sample_stats sst;
	struct gcov_json_stats jst;
};

static int fill_export(FILE *out, void *ctx, char *msg, size_t size)
{
	struct export_ctx *c = ctx;
	int err;

	if (c->format == FORMAT_LCOV)
		err = lcov__write(out, c->p, c->prog, c->img, NULL, &c->lst);
	else if (c->format == FORMAT_GCOV_JSON)
		err = gcov_json__write(out, c->p, c->prog, c->img, c->file, &c->jst);
	else if (c->format == FORMAT_LLVM_SAMPLE)
		err = llvm_sample__write(out, c->p, c->prog, c->img, &c->sst);
	else
		err = bolt_fdata__write(out, c->p, c->prog, c->img, &c->st);

	if (err)
		snprintf(msg, size, "%s",
			 err == -ENOMEM ? "out of memory" : err == -ENOENT ? no_lines : "write error");
	return err;
}

struct gcov_ctx {
	const struct line_counts *lc;
	const char *file;
};

static int fill_gcov(FILE *out, void *ctx, char *msg, size_t size)
{
	struct gcov_ctx *g = ctx;
	int err = gcov_text__write(out, g->lc, g->file);

	if (err)
		snprintf(msg, size, "write error");
	return err;
}

static void warn_violations(const char *file, uint32_t n)
{
	if (n)
		pr_warn("'%s': left out: %" PRIu32 " functions with violations", file, n);
}

/* --format gcov: one report per source file into DIR (made if missing). Returns 0, or -1
 * after one pr_err line. */
static int write_gcov_dir(const char *dir, const char *file, const struct profile *p,
			  const struct cfg_program *prog, const struct elf_image *img)
{
	struct line_counts lc;
	char name[4096], path[8192];
	int err;
	uint32_t n = 0;

	if (mkdir(dir, 0777) && errno != EEXIST)
		return pr_err("'%s': cannot make the directory: %s", dir, strerror(errno));
	err = line_counts__build(&lc, p, prog, img);
	if (err == -ENOENT)
		return pr_err("'%s': %s", file, no_lines);
	if (err)
		return pr_err("out of memory");
	for (size_t k = 0; k < lc.nfiles && !err; k++) {
		struct gcov_ctx g = { &lc, lc.sorted[k] };

		if (!gcov_text__name(lc.sorted[k], name, sizeof(name)) ||
		    snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path)) {
			err = pr_err("'%s': file name too long", lc.sorted[k]);
			break;
		}
		if (profile_dest__write(path, "the gcov report", fill_gcov, &g))
			err = -1;
		n++;
	}
	if (!err)
		warn_violations(file, lc.unknown_funcs);
	if (!err)
		pr_info("'%s': %" PRIu32 " gcov reports", dir, n);
	line_counts__free(&lc);
	return err ? -1 : 0;
}

int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *format_name = NULL, *out = "-", *file = PROFILE_DEFAULT_PATH;
	enum export_format format = FORMAT_BOLT;
	struct profile p = { 0 };
	struct elf_image img;
	struct cfg_program prog;
	bool opened = false;
	struct export_ctx c = { 0 };
	int opt, status = EXIT_INPUT;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":f:o:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			format_name = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			fputs(export_usage, stdout);
			return EXIT_OK;
		default:
			return getopt_error("export", opt, argv);
		}
	}
	if (!format_name)
		return usage_error("export", "no format (--format bolt|lcov|gcov|gcov-json|llvm-sample)");
	while (format <= FORMAT_LLVM_SAMPLE && strcmp(format_name, format_names[format]))
		format++;
	if (format > FORMAT_LLVM_SAMPLE)
		return usage_error("export", "unknown format '%s' (bolt, lcov, gcov, gcov-json, "
				   "llvm-sample)", format_name);
	if (format == FORMAT_GCOV && !strcmp(out, "-"))
		return usage_error("export", "--format gcov needs a directory (-o DIR)");
	if (argc - optind > 2)
		return usage_error("export", "too many arguments");
	if (optind < argc)
		file = argv[optind];
	if ((format != FORMAT_GCOV && profile_dest__check(out)) || profile__read(file, &p))
		goto out;
	if (profile_binary__open(&p, file, optind + 1 < argc ? argv[optind + 1] : NULL, &img,
				 &prog))
		goto out;
	opened = true;
	if (format == FORMAT_GCOV) {
		if (!write_gcov_dir(out, file, &p, &prog, &img))
			status = EXIT_OK;
		goto out;
	}
	c = (struct export_ctx){ .format = format, .file = file, .p = &p, .prog = &prog, .img = &img };
	if (profile_dest__write(out,
				format == FORMAT_LCOV		? "the tracefile"
				: format == FORMAT_GCOV_JSON	? "the gcov JSON"
				: format == FORMAT_LLVM_SAMPLE ? "the sample profile"
								: "the fdata",
				fill_export, &c))
		goto out;
	if (format == FORMAT_LLVM_SAMPLE) {
		warn_violations(file, c.sst.unknown_funcs);
		if (c.sst.partial_funcs)
			pr_warn("'%s': %" PRIu32 " functions that ran have unresolved indirect jumps:"
				" the lines of code reached only through them are missing",
				file, c.sst.partial_funcs);
		pr_info("'%s': %" PRIu32 " functions, %" PRIu64 " lines, %" PRIu64
			" inlined call sites, %" PRIu64 " call targets; %" PRIu64
			" instructions that ran have no line",
			out, c.sst.funcs, c.sst.lines, c.sst.inlined, c.sst.targets, c.sst.no_line);
		status = EXIT_OK;
		goto out;
	}
	if (format == FORMAT_GCOV_JSON) {
		warn_violations(file, c.jst.unknown_funcs);
		pr_info("'%s': %" PRIu32 " files, %" PRIu32 " lines, %" PRIu32 " functions", out,
			c.jst.files, c.jst.lines, c.jst.functions);
		status = EXIT_OK;
		goto out;
	}
	if (format == FORMAT_LCOV) {
		warn_violations(file, c.lst.unknown_funcs);
		pr_info("'%s': %" PRIu32 " files, %" PRIu32 " of %" PRIu32 " lines hit, %" PRIu32
			" branches, %" PRIu32 " functions",
			out, c.lst.files, c.lst.lines_hit, c.lst.lines, c.lst.branches,
			c.lst.functions);
		status = EXIT_OK;
		goto out;
	}
	if (c.st.unknown_funcs || c.st.mismatched_funcs || c.st.unknown_records)
		pr_warn("'%s': left out: %" PRIu64 " records whose count is unknown, %" PRIu32
			" functions with violations, %" PRIu32
			" whose CFG differs from the profile's (another edgeprof?)",
			file, c.st.unknown_records, c.st.unknown_funcs, c.st.mismatched_funcs);
	pr_info("'%s': %" PRIu64 " branch, %" PRIu64 " call and %" PRIu64
		" entry records of %" PRIu32 " functions",
		out, c.st.branches, c.st.calls, c.st.entries, c.st.funcs);
	status = EXIT_OK;
out:
	if (opened)
		profile_binary__close(&img, &prog);
	profile__release(&p);
	return status;
}
