/*
 * Wall's weighted and unweighted matching scores (see matching_score.h).
 */
#include "matching_score.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

struct item {
	double v;
	size_t i;
};

static int cmp_desc(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (x->v != y->v)
		return x->v > y->v ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

int matching_score__compute(const double *stat, const double *dyn, size_t n, double pct,
			    struct match_score *out)
{
	struct item *s, *d;
	size_t m, k = 0, above = 0, tied = 0;
	double top = 0, hit = 0, t;

	if (!n || !(pct > 0 && pct <= 100))
		return -EINVAL;
	s = malloc(n * sizeof(*s));
	d = malloc(n * sizeof(*d));
	if (!s || !d) {
		free(s);
		free(d);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		s[i] = (struct item){ stat[i], i };
		d[i] = (struct item){ dyn[i], i };
	}
	qsort(s, n, sizeof(*s), cmp_desc);
	qsort(d, n, sizeof(*d), cmp_desc);
	m = (size_t)ceil((double)n * pct / 100.0 - 1e-9);
	if (m < 1)
		m = 1;
	if (m > n)
		m = n;
	/* The dynamic top m: every count above T, and M - ABOVE of the items counting T. */
	t = d[m - 1].v;
	for (size_t j = 0; j < m; j++) {
		top += d[j].v;
		above += d[j].v > t;
	}
	/* The static top m, matched: counts above T, and up to M - ABOVE counting T. */
	for (size_t j = 0; j < m; j++) {
		double x = dyn[s[j].i];

		if (x > t) {
			k++;
			hit += x;
		} else if (x == t && tied < m - above) {
			tied++;
		}
	}
	k += tied;
	hit += (double)tied * t;
	out->m = m;
	out->k = k;
	out->u = (double)k / (double)m;
	out->w = top > 0 ? hit / top : NAN;
	free(s);
	free(d);
	return 0;
}
