/*
 * What a probe hit costs on this machine, per instruction class (see
 * shared/design/uprobe-costs.md): measured by `edgeprof calibrate`, or documented defaults.
 * Placement weighs edges and chooses probe sites with these numbers.
 */
#ifndef EDGEPROF_ESTIMATORS_SITE_COSTS_H
#define EDGEPROF_ESTIMATORS_SITE_COSTS_H

#include <stdbool.h>

#include "cfg/cfg.h"

struct site_costs {
	/* Nanoseconds per hit, indexed by enum insn_probe_class (PROBE_NEVER is ignored). */
	double ns[PROBE_CLASS_COUNT];
	bool measured; /* from a calibration on this machine, not the defaults */
	char date[32]; /* measured: when (ISO 8601 UTC, "" when unknown) */
};

/* The documented defaults, measured on the project's reference VM (kernel 6.18):
 * single-stepped 9500 ns, emulated 500 ns, 5-byte nop (optimised uprobe) 380 ns; an
 * in-process counter 10 ns, 20 ns when it saves the flags (atomic increments, a jump out
 * and back). */
void site_costs__defaults(struct site_costs *c);

/* Whether DATE is a plausible date of a calibration (1 to 31 characters of digits, '-',
 * ':', '.', 'T' and 'Z'), safe to write into JSON unescaped. */
bool site_costs__date_ok(const char *date);

/* Cost of one hit of a probe on an instruction of class CLS (enum insn_probe_class);
 * a huge value for PROBE_NEVER. */
double site_costs__of(const struct site_costs *c, unsigned cls);

/* The cheapest way to count at instruction IN: a uprobe of its probe_class or, when BRANCH is
 * false, an in-process counter whose window starts there (patch_count); when BRANCH is true,
 * one whose window ends with its conditional jump (patch_branch). Stores the class chosen in
 * *CLS (PROBE_NEVER when neither can) and returns its cost (huge for PROBE_NEVER). */
double site_costs__best(const struct site_costs *c, const struct cfg_insn *in, bool branch,
			unsigned *cls);

#endif
