/*
 * Algorithm 3 of Wu and Larus (see global_freq.h). Two departures from the printed
 * pseudo-code, both following its stated intent: a node's frequency sums only the calls from
 * inside the region being propagated (callers outside it are not on a path from the head),
 * and the head of a non-final pass gets frequency 1 with no cyclic probability. Worklists
 * replace recursion (deep call graphs do not exhaust the stack).
 */
#include "global_freq.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct gf {
	uint32_t n, ncalls;
	const struct gf_call *calls;
	double *cfreq, *gfreq, *back_prob;
	bool *back, *in_region, *head;
	bool *scc_root, *on_tstack; /* first node of its strongly connected component */
	uint32_t *first_out, *out, *first_in, *in; /* CSR adjacency of edge ids */
	uint32_t *indeg, *queue;
};

/* Depth-first search from ENTRY marking retreating edges (to a node on the stack) and their
 * targets (recursion heads), with Tarjan's lowlinks to find the first node of each strongly
 * connected component (its root). Scratch: STACK, POS, TSTACK, PRE, LOW of N entries. */
static void mark_back_edges(struct gf *s, uint32_t entry, uint32_t *stack, uint32_t *pos,
			    uint8_t *state, uint32_t *tstack, uint32_t *pre, uint32_t *low)
{
	uint32_t sp = 0, tsp = 0, counter = 0;

	state[entry] = 1;
	pre[entry] = low[entry] = counter++;
	tstack[tsp++] = entry;
	s->on_tstack[entry] = true;
	stack[sp] = entry;
	pos[sp++] = s->first_out[entry];
	while (sp) {
		uint32_t v = stack[sp - 1];

		if (pos[sp - 1] == s->first_out[v + 1]) {
			state[v] = 2;
			sp--;
			if (sp && low[v] < low[stack[sp - 1]])
				low[stack[sp - 1]] = low[v];
			if (low[v] == pre[v]) {
				s->scc_root[v] = true;
				do
					s->on_tstack[tstack[--tsp]] = false;
				while (tstack[tsp] != v);
			}
			continue;
		}
		uint32_t e = s->out[pos[sp - 1]++], t = s->calls[e].to;

		if (state[t] == 1) {
			s->back[e] = true;
			s->head[t] = true;
		}
		if (state[t] == 0) {
			state[t] = 1;
			pre[t] = low[t] = counter++;
			tstack[tsp++] = t;
			s->on_tstack[t] = true;
			stack[sp] = t;
			pos[sp++] = s->first_out[t];
		} else if (s->on_tstack[t] && pre[t] < low[v]) {
			low[v] = pre[t];
		}
	}
}

/* Marks the nodes reached from FROM without back edges as the region. */
static void reach_from(struct gf *s, uint32_t from)
{
	uint32_t qh = 0, qt = 0;

	memset(s->in_region, 0, s->n * sizeof(bool));
	s->in_region[from] = true;
	s->queue[qt++] = from;
	while (qh < qt) {
		uint32_t v = s->queue[qh++];

		for (uint32_t k = s->first_out[v]; k < s->first_out[v + 1]; k++) {
			uint32_t t = s->calls[s->out[k]].to;

			if (!s->back[s->out[k]] && !s->in_region[t]) {
				s->in_region[t] = true;
				s->queue[qt++] = t;
			}
		}
	}
}

static void propagate(struct gf *s, uint32_t head, bool final)
{
	uint32_t qh = 0, qt = 0;

	for (uint32_t v = 0; v < s->n; v++) {
		s->indeg[v] = 0;
		if (!s->in_region[v])
			continue;
		for (uint32_t k = s->first_in[v]; k < s->first_in[v + 1]; k++) {
			uint32_t e = s->in[k];

			if (!s->back[e] && s->in_region[s->calls[e].from])
				s->indeg[v]++;
		}
	}
	s->queue[qt++] = head;
	while (qh < qt) {
		uint32_t v = s->queue[qh++];
		double freq = v == head ? 1.0 : 0.0, cp = 0;

		for (uint32_t k = s->first_in[v]; k < s->first_in[v + 1]; k++) {
			uint32_t e = s->in[k];

			if (s->back[e]) {
				if (final && s->scc_root[v])
					cp += s->back_prob[e];
			} else if (v != head && s->in_region[s->calls[e].from]) {
				freq += s->gfreq[e];
			}
		}
		if (cp > 1 - GF_EPSILON)
			cp = 1 - GF_EPSILON;
		s->cfreq[v] = freq / (1 - cp);
		for (uint32_t k = s->first_out[v]; k < s->first_out[v + 1]; k++) {
			uint32_t e = s->out[k], t = s->calls[e].to;

			s->gfreq[e] = s->calls[e].lfreq * s->cfreq[v];
			if (t == head && !final)
				s->back_prob[e] = s->gfreq[e];
			if (!s->back[e] && s->in_region[t] && t != head && --s->indeg[t] == 0)
				s->queue[qt++] = t;
		}
	}
}

int global_freq__calls(uint32_t n, uint32_t entry, const struct gf_call *calls, uint32_t ncalls,
		       double *cfreq, double *gfreq)
{
	struct gf s = { .n = n, .ncalls = ncalls, .calls = calls, .cfreq = cfreq, .gfreq = gfreq };
	uint32_t ne = ncalls ? ncalls : 1, *stack = NULL, *pos = NULL;
	uint32_t *tstack = NULL, *pre = NULL, *low = NULL;
	uint8_t *state = NULL;
	int err = -EINVAL;

	if (entry >= n)
		return -EINVAL;
	for (uint32_t e = 0; e < ncalls; e++)
		if (calls[e].from >= n || calls[e].to >= n)
			return -EINVAL;
	err = -ENOMEM;
	s.back_prob = malloc(ne * sizeof(double));
	s.back = calloc(ne, sizeof(bool));
	s.in_region = calloc(n, sizeof(bool));
	s.head = calloc(n, sizeof(bool));
	s.first_out = calloc(n + 1, sizeof(uint32_t));
	s.first_in = calloc(n + 1, sizeof(uint32_t));
	s.out = malloc(ne * sizeof(uint32_t));
	s.in = malloc(ne * sizeof(uint32_t));
	s.indeg = malloc(n * sizeof(uint32_t));
	s.queue = malloc(n * sizeof(uint32_t));
	stack = malloc(n * sizeof(uint32_t));
	pos = malloc(n * sizeof(uint32_t));
	state = calloc(n, 1);
	tstack = malloc(n * sizeof(uint32_t));
	pre = malloc(n * sizeof(uint32_t));
	low = malloc(n * sizeof(uint32_t));
	s.scc_root = calloc(n, sizeof(bool));
	s.on_tstack = calloc(n, sizeof(bool));
	if (!tstack || !pre || !low || !s.scc_root || !s.on_tstack || !s.back_prob || !s.back || !s.in_region || !s.head || !s.first_out || !s.first_in ||
	    !s.out || !s.in || !s.indeg || !s.queue || !stack || !pos || !state)
		goto out;
	/* Adjacency (counting sort by node). */
	for (uint32_t e = 0; e < ncalls; e++) {
		s.first_out[calls[e].from + 1]++;
		s.first_in[calls[e].to + 1]++;
	}
	for (uint32_t v = 0; v < n; v++) {
		s.first_out[v + 1] += s.first_out[v];
		s.first_in[v + 1] += s.first_in[v];
	}
	{
		uint32_t *fo = s.indeg, *fi = s.queue;

		memcpy(fo, s.first_out, n * sizeof(uint32_t));
		memcpy(fi, s.first_in, n * sizeof(uint32_t));
		for (uint32_t e = 0; e < ncalls; e++) {
			s.out[fo[calls[e].from]++] = e;
			s.in[fi[calls[e].to]++] = e;
		}
	}
	for (uint32_t v = 0; v < n; v++)
		cfreq[v] = 0;
	for (uint32_t e = 0; e < ncalls; e++) {
		gfreq[e] = 0;
		s.back_prob[e] = calls[e].lfreq;
	}
	mark_back_edges(&s, entry, stack, pos, state, tstack, pre, low);
	/* Each recursion head's cyclic probability, its own cycle only; one head per strongly
	 * connected component (its first node) amplifies, so that mutually recursive functions
	 * with several heads are not multiplied once per head. */
	for (uint32_t v = 0; v < n; v++) {
		if (!s.head[v] || !state[v] || !s.scc_root[v])
			continue;
		reach_from(&s, v);
		propagate(&s, v, false);
	}
	for (uint32_t v = 0; v < n; v++)
		cfreq[v] = 0;
	for (uint32_t e = 0; e < ncalls; e++)
		gfreq[e] = 0;
	reach_from(&s, entry);
	propagate(&s, entry, true);
	err = 0;
out:
	free(s.back_prob);
	free(s.back);
	free(s.in_region);
	free(s.head);
	free(s.first_out);
	free(s.first_in);
	free(s.out);
	free(s.in);
	free(s.indeg);
	free(s.queue);
	free(stack);
	free(pos);
	free(state);
	free(tstack);
	free(pre);
	free(low);
	free(s.scc_root);
	free(s.on_tstack);
	return err;
}
