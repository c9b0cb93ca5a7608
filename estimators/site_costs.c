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
	c->measured = false;
	c->date[0] = '\0';
}

double site_costs__of(const struct site_costs *c, unsigned cls)
{
	return cls < PROBE_NEVER ? c->ns[cls] : 1e18;
}

bool site_costs__date_ok(const char *date)
{
	size_t n = strlen(date);

	return n > 0 && n < sizeof(((struct site_costs *)0)->date) &&
	       strspn(date, "0123456789-:.TZ") == n;
}
