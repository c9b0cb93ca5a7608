/*
 * Stored branch-heuristic hit rates (`edgeprof calibrate-heuristics`): a JSON file
 *   {"format": "edgeprof-heuristics", "version": 1,
 *    "rates": {"LBH": R, ...}, "branches": {"LBH": N, ...}, "profiles": [PATH...]}
 * at $XDG_CONFIG_HOME/edgeprof/heuristics.json (default ~/.config/edgeprof/), or a file named
 * with --rates FILE. `static`, `compare` and `run --weights static` use the stored rates when
 * the file exists, Wu and Larus's Table 1 otherwise; a heuristic missing from the file keeps
 * its Table 1 rate.
 */
#ifndef EDGEPROF_USER_HEURISTIC_RATES_H
#define EDGEPROF_USER_HEURISTIC_RATES_H

#include <stddef.h>
#include <stdint.h>

#include "estimators/branch_heuristics.h"

/* The default file's path into BUF. Returns 0 or a negative errno (no home directory). */
int heuristic_rates__path(char *buf, size_t len);

/* Fills RATES[BH_COUNT]: from PATH when not NULL (it must exist and be valid), else from the
 * default file when it exists, else Table 1. FROM (LEN bytes, may be NULL) receives the file
 * used, or "" for Table 1. Returns 0, or -1 with one line reported (PATH unreadable or
 * invalid; an invalid default file is reported too). */
int heuristic_rates__load(const char *path, double rates[BH_COUNT], char *from, size_t len);

/* Writes RATES with the branch counts BRANCHES[BH_COUNT] they were measured on and the
 * profiles they came from to PATH (NULL: the default file, its directories created),
 * atomically. FROM (LEN bytes, may be NULL) receives the path. Returns 0 or -1 with one line
 * reported. */
int heuristic_rates__save(const char *path, const double rates[BH_COUNT],
			  const uint64_t branches[BH_COUNT], char *const *profiles,
			  size_t nprofiles, char *from, size_t len);

#endif
