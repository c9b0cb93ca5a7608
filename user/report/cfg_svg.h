/*
 * A profiled function's control-flow graph as an SVG heat map, drawn by Graphviz: the DOT
 * text (blocks filled by their count on a log scale, labelled with address and count, edges
 * labelled with their counts and drawn thicker the hotter they are, each block a link to
 * "#b-ADDR"), and `dot -Tsvg` run on many such files at once. Needs only the profile.
 */
#ifndef EDGEPROF_USER_REPORT_CFG_SVG_H
#define EDGEPROF_USER_REPORT_CFG_SVG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "user/profile/profile.h"

/* Functions with more blocks than this are not drawn (dot would take minutes). */
#define CFG_SVG_MAX_BLOCKS 4000

/* The heat colour of COUNT against the hottest count MAX: "#rrggbb" into BUF, from pale
 * yellow (executed rarely) to dark red (MAX), on a log scale; grey for 0, white for unknown
 * (COUNT_UNKNOWN). Returns BUF. */
const char *cfg_svg__heat(int64_t count, int64_t max, char buf[8]);

/* Whether text on the heat colour of COUNT against MAX should be white (a dark fill). */
int cfg_svg__dark(int64_t count, int64_t max);

/* COUNT as text with its digits grouped by commas ("1,234,567"), "?" for COUNT_UNKNOWN,
 * into BUF of SIZE bytes (27 are enough); returns BUF. */
const char *cfg_svg__count(int64_t count, char *buf, size_t size);

/* The largest known block count of F (0 when none). */
int64_t cfg_svg__max_count(const struct profile_func *f);

/* Writes F's graph as DOT to OUT: an entry point with an edge labelled with the invocations,
 * one box per block, the exit vertex, every edge labelled with its count ("?" unknown).
 * Returns 0, or -EIO when writing failed. */
int cfg_svg__dot(FILE *out, const struct profile_func *f);

/* Runs `dot -Tsvg -o OUT[i] IN[i]` for i < N, up to JOBS processes at a time (dot's stderr to
 * OUT[i] with ".err" appended, removed after a success). Returns 0, or a negative errno after
 * one pr_err line (dot missing: -ENOENT, a line saying to install graphviz; dot failed on
 * NAME[i]'s graph: its first line of stderr); the processes started are always waited for. */
int cfg_svg__render(const char *const *in, const char *const *out, const char *const *name,
		    size_t n, unsigned jobs);

#endif
