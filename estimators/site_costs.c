/*
 * Default per-class probe costs and lookups (see site_costs.h).
 */
#include "site_costs.h"

#include <string.h>

void site_costs__defaults(struct site_costs *c)
{
	c->ns[PROBE_STEPPED] = 9500.0;
	c->ns[PROBE_EMULATED] = 500.0;
	c->ns[PROBE_NOP5] = 380.0;
	c->ns[PROBE_NEVER] = 1e18;
	c->ns[PROBE_PATCH] = 10.0;
	c->ns[PROBE_PATCH_FLAGS] = 20.0;
	c->measured = false;
	c->date[0] = '\0';
}

double site_costs__of(const struct site_costs *c, unsigned cls)
{
	return cls < PROBE_CLASS_COUNT && cls != PROBE_NEVER ? c->ns[cls] : 1e18;
}

double site_costs__best(const struct site_costs *c, const struct cfg_insn *in, bool branch,
			unsigned *cls)
{
	unsigned p = branch ? in->patch_branch : in->patch_count;
	double u = site_costs__of(c, in->probe_class);

	if (p && site_costs__of(c, p) <= u) {
		*cls = p;
		return site_costs__of(c, p);
	}
	*cls = in->probe_class;
	return u;
}

bool site_costs__date_ok(const char *date)
{
	size_t n = strlen(date);

	return n > 0 && n < sizeof(((struct site_costs *)0)->date) &&
	       strspn(date, "0123456789-:.TZ") == n;
}
