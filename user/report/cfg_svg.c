/*
 * Control-flow graphs as SVG heat maps through Graphviz (see cfg_svg.h).
 */
#include "user/report/cfg_svg.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "user/report/func_code.h"
#include "user/util/log.h"

/* Above this many blocks dot's network simplex and crossing minimisation get cut short
 * (nslimit, mclimit): luaV_execute's 780 blocks take 2.5 s instead of 22 s. */
#define FAST_LAYOUT_BLOCKS 150

extern char **environ;

static double heat_t(int64_t count, int64_t max)
{
	if (count <= 0 || max <= 0)
		return 0;
	if (count >= max)
		return 1;
	return log1p((double)count) / log1p((double)max);
}

const char *cfg_svg__heat(int64_t count, int64_t max, char buf[8])
{
	static const double stops[][3] = {
		{ 255, 247, 188 }, { 254, 196, 79 }, { 240, 59, 32 }, { 165, 0, 38 },
	};
	const size_t nstops = sizeof(stops) / sizeof(stops[0]);
	double t, x, c[3];
	size_t k;

	if (count == COUNT_UNKNOWN) {
		snprintf(buf, 8, "#ffffff");
		return buf;
	}
	if (count <= 0) {
		snprintf(buf, 8, "#e4e4e4");
		return buf;
	}
	t = heat_t(count, max) * (double)(nstops - 1);
	k = t >= (double)(nstops - 1) ? nstops - 2 : (size_t)t;
	x = t - (double)k;
	for (int i = 0; i < 3; i++)
		c[i] = stops[k][i] + (stops[k + 1][i] - stops[k][i]) * x;
	snprintf(buf, 8, "#%02x%02x%02x", (unsigned)lround(c[0]) & 0xff,
		 (unsigned)lround(c[1]) & 0xff, (unsigned)lround(c[2]) & 0xff);
	return buf;
}

int cfg_svg__dark(int64_t count, int64_t max)
{
	return count > 0 && heat_t(count, max) > 0.62;
}

int64_t cfg_svg__max_count(const struct profile_func *f)
{
	int64_t max = 0;

	for (uint32_t b = 0; b < f->nblocks; b++)
		if (f->blocks[b].count > max)
			max = f->blocks[b].count;
	return max;
}

const char *cfg_svg__count(int64_t c, char *buf, size_t size)
{
	char digits[32];
	size_t n, o = 0;

	if (c == COUNT_UNKNOWN)
		return snprintf(buf, size, "?"), buf;
	n = (size_t)snprintf(digits, sizeof(digits), "%" PRId64, c);
	for (size_t i = 0; i < n && o + 2 < size; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

/* The vertex name of V of F: "bN" or "exit". */
static const char *vertex(const struct profile_func *f, uint32_t v, char *buf, size_t size)
{
	if (v >= f->nblocks)
		return "exit";
	snprintf(buf, size, "b%" PRIu32, v);
	return buf;
}

int cfg_svg__dot(FILE *out, const struct profile_func *f)
{
	int64_t max = cfg_svg__max_count(f), emax = 0;
	char col[8], cnt[40], a[24], b[24];

	for (uint32_t e = 0; e < f->nedges; e++)
		if (f->edges[e].count > emax)
			emax = f->edges[e].count;
	if (f->count > emax)
		emax = f->count;
	fputs("digraph cfg {\n", out);
	fputs("\tgraph [fontname=\"monospace\", bgcolor=\"transparent\", nodesep=0.25, "
	      "ranksep=0.35", out);
	if (f->nblocks > FAST_LAYOUT_BLOCKS)
		fputs(", nslimit=1, nslimit1=1, mclimit=0.1, searchsize=10", out);
	fputs("];\n\tnode [shape=box, style=\"filled\", fontname=\"monospace\", fontsize=10, "
	      "margin=\"0.08,0.03\", height=0.3];\n"
	      "\tedge [fontname=\"monospace\", fontsize=9, arrowsize=0.6];\n"
	      "\tentry [shape=point, width=0.08, tooltip=\"invocations\"];\n"
	      "\texit [shape=ellipse, style=\"\", label=\"exit\", fontsize=9, height=0.25];\n", out);
	for (uint32_t i = 0; i < f->nblocks; i++) {
		const struct profile_block *pb = &f->blocks[i];
		bool viol = func_code__is_violation(f, i);

		fprintf(out, "\tb%" PRIu32 " [label=\"0x%" PRIx64 "\\n%s\", fillcolor=\"%s\", "
			"URL=\"#b-0x%" PRIx64 "\", tooltip=\"block 0x%" PRIx64 ": %s\"%s%s%s];\n",
			i, pb->addr, cfg_svg__count(pb->count, cnt, sizeof(cnt)),
			cfg_svg__heat(pb->count, max, col), pb->addr, pb->addr, cnt,
			cfg_svg__dark(pb->count, max) ? ", fontcolor=\"white\"" : "",
			pb->count == COUNT_UNKNOWN ? ", style=\"dashed\"" : "",
			viol ? ", color=\"#0000ff\", penwidth=3" : i == f->entry_block ?
			       ", penwidth=2" : "");
	}
	if (f->entry_block < f->nblocks)
		fprintf(out, "\tentry -> b%" PRIu32 " [label=\"%s\", penwidth=%.2f];\n",
			f->entry_block, cfg_svg__count(f->count, cnt, sizeof(cnt)),
			1 + 3 * (f->count > 0 ? log1p((double)f->count) / log1p((double)emax) : 0));
	if (func_code__is_violation(f, f->nblocks))
		fputs("\texit [color=\"#0000ff\", penwidth=3];\n", out);
	for (uint32_t e = 0; e < f->nedges; e++) {
		const struct profile_edge *pe = &f->edges[e];
		double w = pe->count > 0 ? log1p((double)pe->count) / log1p((double)emax) : 0;

		fprintf(out, "\t%s -> %s [label=\"%s\", tooltip=\"%s: %s\", penwidth=%.2f, "
			"color=\"%s\"%s];\n",
			vertex(f, pe->from, a, sizeof(a)), vertex(f, pe->to, b, sizeof(b)),
			cfg_svg__count(pe->count, cnt, sizeof(cnt)),
			cfg_edge_kind__name(pe->kind), cnt, 0.6 + 3.4 * w,
			pe->count <= 0 ? "#a8a8a8" : w < 0.45 ? "#606060" :
						     cfg_svg__heat(pe->count, emax, col),
			pe->to >= f->nblocks || pe->count == COUNT_UNKNOWN ? ", style=\"dashed\"" :
									     "");
	}
	fputs("}\n", out);
	return ferror(out) ? -EIO : 0;
}

/* The first line of file PATH into BUF (empty when none). */
static const char *first_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (f) {
		if (fgets(buf, (int)size, f))
			buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
	}
	return buf;
}

struct job {
	pid_t pid;
	size_t i;
};

/* Starts dot on graph I. Returns 0 with *PID set, or a positive errno. */
static int start(const char *in, const char *out, const char *err, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	char *argv[] = { "dot", "-Tsvg", "-o", (char *)out, (char *)in, NULL };
	int r;

	if (posix_spawn_file_actions_init(&fa))
		return ENOMEM;
	r = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (!r)
		r = posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	if (!r)
		r = posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC,
						     0600);
	if (!r)
		r = posix_spawnp(pid, "dot", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	return r;
}

int cfg_svg__render(const char *const *in, const char *const *out, const char *const *name,
		    size_t n, unsigned jobs)
{
	struct job *run = calloc(jobs ? jobs : 1, sizeof(*run));
	size_t next = 0, nrun = 0;
	char err[4200], line[512];
	int ret = 0;

	if (!run)
		return pr_err("out of memory"), -ENOMEM;
	if (!jobs)
		jobs = 1;
	while (nrun || (next < n && !ret)) {
		int status, r;
		pid_t pid;

		if (next < n && !ret && nrun < jobs) {
			snprintf(err, sizeof(err), "%s.err", out[next]);
			r = start(in[next], out[next], err, &pid);
			if (r) {
				pr_err(r == ENOENT ? "cannot run dot: %s; install Graphviz (the "
				       "Debian package graphviz)" : "cannot run dot: %s", strerror(r));
				ret = -r;
				continue;
			}
			run[nrun++] = (struct job){ pid, next++ };
			continue;
		}
		pid = waitpid(-1, &status, 0);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			if (!ret) {
				ret = -errno;
				pr_err("waiting for dot: %s", strerror(errno));
			}
			break;
		}
		for (size_t k = 0; k < nrun; k++) {
			size_t i = run[k].i;

			if (run[k].pid != pid)
				continue;
			run[k] = run[--nrun];
			snprintf(err, sizeof(err), "%s.err", out[i]);
			if (!ret && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
				pr_err("dot failed on the graph of %s: %s", name[i],
				       *first_line(err, line, sizeof(line)) ? line : "no message");
				ret = -EIO;
			} else if (!ret) {
				unlink(err);
			}
			break;
		}
	}
	free(run);
	return ret;
}
