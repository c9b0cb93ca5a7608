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
	bool *in_dyn;
	size_t m, k = 0;
	double top = 0, hit = 0;

	if (!n || !(pct > 0 && pct <= 100))
		return -EINVAL;
	s = malloc(n * sizeof(*s));
	d = malloc(n * sizeof(*d));
	in_dyn = calloc(n, sizeof(*in_dyn));
	if (!s || !d || !in_dyn) {
		free(s);
		free(d);
		free(in_dyn);
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
	for (size_t j = 0; j < m; j++) {
		in_dyn[d[j].i] = true;
		top += d[j].v;
	}
	for (size_t j = 0; j < m; j++)
		if (in_dyn[s[j].i]) {
			k++;
			hit += dyn[s[j].i];
		}
	out->m = m;
	out->k = k;
	out->u = (double)k / (double)m;
	out->w = top > 0 ? hit / top : NAN;
	free(s);
	free(d);
	free(in_dyn);
	return 0;
}
