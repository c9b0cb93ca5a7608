/*
 * gcov's text report (NAME.gcov, what `gcov -b -c` writes and `gcovr -g` reads) of one source
 * file, from the line counts of an exact profile (line_counts.h): each source line prefixed by
 * its count ("#####" when its code never ran, "-" when it has none), a "function NAME called
 * N returned R% blocks executed B%" line before a function's entry line, and after a line
 * with conditional jumps a "branch K taken N" (or "never executed") line per outcome.
 */
#ifndef EDGEPROF_USER_EXPORT_GCOV_TEXT_H
#define EDGEPROF_USER_EXPORT_GCOV_TEXT_H

#include <stdio.h>

#include "user/export/line_counts.h"

/* Writes the report of file FILE (one of C's interned names) to OUT; the source text is read
 * from FILE when it can be (else only the lines with code are written, without text).
 * Returns 0 or -EIO. */
int gcov_text__write(FILE *out, const struct line_counts *c, const char *file);

/* The report's file name for source FILE, gcov's --preserve-paths form ("/" becomes "#",
 * then ".gcov"), into BUF of SIZE bytes; NULL when it does not fit. */
const char *gcov_text__name(const char *file, char *buf, size_t size);

#endif
