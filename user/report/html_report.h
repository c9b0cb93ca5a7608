/*
 * `edgeprof report --html DIR`: the profile as a set of self-contained HTML pages (inline
 * CSS and SVG, no script, no resource from elsewhere, so they open from file://): index.html
 * with the run's summary and the hottest functions, and a page for each of those with its
 * control-flow graph as a heat map (cfg_svg.h), its disassembly with every block's count and
 * edges, and its source lines with their counts when the source files can be read. The
 * pages are made in a temporary directory that then takes DIR's place (atomic_dir.h).
 */
#ifndef EDGEPROF_USER_REPORT_HTML_REPORT_H
#define EDGEPROF_USER_REPORT_HTML_REPORT_H

#include <stddef.h>

#include "user/profile/profile.h"
#include "user/report/func_code.h"

struct html_report_opts {
	const char *dir;      /* where the pages go */
	const char *binary;   /* the profiled binary, NULL: the path the profile records */
	unsigned long top;    /* pages for this many of the hottest functions */
	struct source_maps source_maps;
};

/* Writes the pages of profile P (read from FILE) into O->dir. The binary gives the
 * disassembly and the source lines: when it cannot be opened the pages say so and show the
 * graphs and counts only; when its build-id is not P's, nothing is written. Returns 0, or a
 * negative errno after one pr_err line (DIR is then left as it was). */
int html_report__write(const struct profile *p, const char *file,
		       const struct html_report_opts *o);

#endif
