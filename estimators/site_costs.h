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
	double ns[4];
	bool measured; /* from a calibration on this machine, not the defaults */
	char date[32]; /* measured: when (ISO 8601 UTC, "" when unknown) */
};

/* The documented defaults, measured on the project's reference VM (kernel 6.18):
 * single-stepped 9500 ns, emulated 500 ns, 5-byte nop (optimised uprobe) 380 ns. */
void site_costs__defaults(struct site_costs *c);

/* Cost of one hit of a probe on an instruction of class CLS (enum insn_probe_class);
 * a huge value for PROBE_NEVER. */
/* Whether DATE is a plausible date of a calibration (1 to 31 characters of digits, '-',
 * ':', '.', 'T' and 'Z'), safe to write into JSON unescaped. */
bool site_costs__date_ok(const char *date);

double site_costs__of(const struct site_costs *c, unsigned cls);

#endif
