/*
 * Path-profile probe plan (see path_probes.h): Ball-Larus numbering, a probe site for every edge
 * a probe can see, event counting with the unseen edges kept in the spanning tree, and the
 * actions gathered per instruction in the order they must run.
 */
#include "estimators/path_probes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/decode.h"
#include "cfg/stack_height.h"

/* Weight that keeps an edge no probe sees in the spanning tree (any real weight is lower). */
#define UNSEEN_WEIGHT 1e15

enum { LIST_COMMON = 0, LIST_TAKEN = 1, LIST_NOT = 2 };

/* Where the actions of one edge run: instruction INSN of the function, in list LIST. */
struct edge_site {
	int64_t insn; /* -1: no probe sees the edge */
	uint8_t list;
};

static bool usable(const struct cfg_func *f, uint32_t i, const int64_t *height)
{
	return f->insns[i].probe_class != PROBE_NEVER && height[i] != STACK_HEIGHT_UNKNOWN &&
	       height[i] <= 0 && -height[i] <= (int64_t)PATH_PROBES_MAX_DEPTH;
}

static bool is_branch(const struct cfg_func *f, uint32_t b)
{
	const struct cfg_block *bl = &f->blocks[b];

	return bl->nsucc == 2 && f->insns[bl->first_insn + bl->ninsns - 1].flow == INSN_JCC;
}

/* The first (FIRST) or last usable instruction of block B, or -1. */
static int64_t block_insn(const struct cfg_func *f, uint32_t b, const int64_t *height, bool first)
{
	const struct cfg_block *bl = &f->blocks[b];

	for (uint32_t k = 0; k < bl->ninsns; k++) {
		uint32_t i = bl->first_insn + (first ? k : bl->ninsns - 1 - k);

		if (usable(f, i, height))
			return i;
	}
	return -1;
}

/* Where a probe sees exactly the executions of edge E (see path_probes.h). */
static struct edge_site edge_site(const struct cfg_func *f, uint32_t e, const int64_t *height)
{
	const struct cfg_edge *ed = &f->edges[e];
	const struct cfg_block *u = &f->blocks[ed->from];
	struct edge_site s = {-1, LIST_COMMON};

	if (is_branch(f, ed->from)) {
		uint32_t last = u->first_insn + u->ninsns - 1;

		if (!usable(f, last, height))
			return s;
		if (ed->kind == EDGE_TAKEN ||
		    (ed->kind == EDGE_TAIL_CALL && (ed->flags & CFG_EDGE_COND_TAKEN)))
			s = (struct edge_site){last, LIST_TAKEN};
		else if (ed->kind == EDGE_NOT_TAKEN)
			s = (struct edge_site){last, LIST_NOT};
		return s;
	}
	if (u->nsucc == 1) {
		s.insn = block_insn(f, ed->from, height, false);
		return s;
	}
	if (ed->to < f->nblocks && ed->to != f->entry_block && f->blocks[ed->to].npred == 1)
		s.insn = block_insn(f, ed->to, height, true);
	return s;
}

/* Appends ACT to list LIST of the site at instruction I of F, made when needed (SLOT_OF maps
 * instructions to sites of the plan). Returns 0 or -ENOMEM. */
static int add_action(struct path_probe_plan *plan, size_t *cap, uint32_t *slot_of,
		      const struct cfg_func *f, uint32_t fi, uint32_t i, const int64_t *height,
		      uint8_t list, struct path_action act)
{
	struct path_probe_site *s;
	uint32_t at;

	if (slot_of[i] == UINT32_MAX) {
		if (plan->nsites == *cap) {
			size_t n = *cap ? 2 * *cap : 256;
			struct path_probe_site *ns = realloc(plan->sites, n * sizeof(*ns));

			if (!ns)
				return -ENOMEM;
			plan->sites = ns;
			*cap = n;
		}
		slot_of[i] = (uint32_t)plan->nsites;
		plan->sites[plan->nsites++] = (struct path_probe_site){
		    .addr = f->insns[i].addr,
		    .func = fi,
		    .depth = (uint32_t)-height[i],
		    .cc = f->insns[i].cc,
		    .probe_class = f->insns[i].probe_class,
		};
	}
	s = &plan->sites[slot_of[i]];
	/* Lists are kept contiguous: common, taken, not taken. */
	at = list == LIST_COMMON  ? s->ncommon
	     : list == LIST_TAKEN ? (uint32_t)s->ncommon + s->ntaken
				  : (uint32_t)s->ncommon + s->ntaken + s->nnot;
	memmove(&s->actions[at + 1], &s->actions[at],
		(s->ncommon + s->ntaken + s->nnot - at) * sizeof(s->actions[0]));
	s->actions[at] = act;
	if (list == LIST_COMMON)
		s->ncommon++;
	else if (list == LIST_TAKEN)
		s->ntaken++, s->branch = 1;
	else
		s->nnot++, s->branch = 1;
	return 0;
}

static int cmp_site_addr(const void *a, const void *b)
{
	const struct path_probe_site *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Whether edge E of F needs actions, and which: PATH_OP_BACK, PATH_OP_EXIT, PATH_OP_ADD, or
 * -1 for none. */
static int edge_op(const struct cfg_func *f, const struct bl_paths *bp, uint32_t e)
{
	if (!bp->reached[f->edges[e].from])
		return -1;
	if (bp->back[e])
		return PATH_OP_BACK;
	if (f->edges[e].to >= f->nblocks)
		return PATH_OP_EXIT;
	return bp->ev_inc[e] ? PATH_OP_ADD : -1;
}

int path_probes__plan_func(struct path_probe_plan *plan, size_t *cap, const struct cfg_func *f,
			   uint32_t fi, const int64_t *height, uint64_t limit)
{
	struct path_probe_func *pf = &plan->funcs[fi];
	struct edge_site *site = NULL;
	uint32_t *slot_of = NULL;
	double *w = NULL;
	size_t first = plan->nsites;
	int64_t start;
	int err;

	memset(pf, 0, sizeof(*pf));
	if (!f->nblocks || f->entry_block >= f->nblocks) {
		pf->skip = "no code";
		return 0;
	}
	if (f->flags & (CFG_FUNC_UNRESOLVED | CFG_FUNC_BAD_CODE | CFG_FUNC_RUNS_OFF |
			CFG_FUNC_FOREIGN_ENTRY)) {
		pf->skip = "its CFG is not complete (unresolved jump, bad code, or code shared "
			   "with another function)";
		return 0;
	}
	start = f->blocks[f->entry_block].first_insn;
	if (f->insns[start].addr != f->entry || !usable(f, (uint32_t)start, height) ||
	    height[start] != 0) {
		pf->skip = "its entry instruction cannot be probed";
		return 0;
	}
	err = bl_paths__number(&pf->bp, f, limit);
	if (err == -EOVERFLOW || err == -EINVAL) {
		pf->skip = err == -EOVERFLOW ? "more paths than can be numbered" : "no entry block";
		return 0;
	}
	if (err)
		return err;
	site = malloc((f->nedges + 1) * sizeof(*site));
	w = malloc((f->nedges + 1) * sizeof(*w));
	slot_of = malloc((f->ninsns + 1) * sizeof(*slot_of));
	if (!site || !w || !slot_of) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t e = 0; e < f->nedges; e++) {
		site[e] = edge_site(f, e, height);
		w[e] = site[e].insn < 0 ? UNSEEN_WEIGHT : 1;
	}
	err = bl_paths__events(&pf->bp, f, w);
	if (err)
		goto out;
	for (uint32_t e = 0; e < f->nedges; e++)
		if (edge_op(f, &pf->bp, e) >= 0 && site[e].insn < 0) {
			pf->skip = edge_op(f, &pf->bp, e) == PATH_OP_ADD
				       ? "the edges no probe can see close a cycle"
				       : "a back edge or an exit no probe can see";
			goto out;
		}
	for (uint32_t i = 0; i < f->ninsns; i++)
		slot_of[i] = UINT32_MAX;
	err = add_action(
	    plan, cap, slot_of, f, fi, (uint32_t)start, height, LIST_COMMON,
	    (struct path_action){.op = PATH_OP_START, .edge = UINT32_MAX, .a = pf->bp.ev_start});
	/* In-edge actions (at the first instruction of the edge's target) before out-edge ones
	 * (at the last of its source) where one instruction has both. */
	for (int pass = 0; !err && pass < 2; pass++)
		for (uint32_t e = 0; !err && e < f->nedges; e++) {
			const struct cfg_edge *ed = &f->edges[e];
			int op = edge_op(f, &pf->bp, e);
			bool at_target =
			    site[e].list == LIST_COMMON && f->blocks[ed->from].nsucc != 1;
			struct path_action act = {.op = (uint8_t)op, .edge = e};

			if (op < 0 || at_target != (pass == 0))
				continue;
			if (op == PATH_OP_BACK) {
				act.a = pf->bp.ev_exit_inc[e];
				act.b = pf->bp.ev_entry_inc[e];
				act.to_entry = ed->to == f->entry_block;
			} else {
				act.a = pf->bp.ev_inc[e];
			}
			err = add_action(plan, cap, slot_of, f, fi, (uint32_t)site[e].insn, height,
					 site[e].list, act);
		}
	if (err)
		goto out;
	pf->first_site = (uint32_t)first;
	pf->nsites = (uint32_t)(plan->nsites - first);
	qsort(plan->sites + first, pf->nsites, sizeof(plan->sites[0]), cmp_site_addr);
	plan->ncounted++;
out:
	if (pf->skip || err) {
		plan->nsites = first;
		bl_paths__free(&pf->bp);
		pf->first_site = pf->nsites = 0;
	}
	free(site);
	free(w);
	free(slot_of);
	return err;
}

int path_probes__plan(struct path_probe_plan *plan, const struct cfg_program *prog,
		      const struct placement *pl)
{
	struct decoder d;
	size_t cap = 0;
	int64_t *height = NULL;
	size_t hcap = 0;
	int err;

	memset(plan, 0, sizeof(*plan));
	plan->funcs = calloc(prog->nfuncs + 1, sizeof(*plan->funcs));
	if (!plan->funcs)
		return -ENOMEM;
	plan->nfuncs = prog->nfuncs;
	err = decoder__open(&d, prog->img);
	if (err) {
		path_probes__free(plan);
		return err;
	}
	for (size_t i = 0; !err && i < prog->nfuncs; i++) {
		const struct cfg_func *f = &prog->funcs[i];
		bool label_taken = false;

		if (i < pl->nfuncs && pl->funcs[i].status != PLAN_CHORDS) {
			plan->funcs[i].skip =
			    pl->funcs[i].reason ? pl->funcs[i].reason : "not counted by chords";
			continue;
		}
		if (i < pl->nfuncs && pl->funcs[i].npseudo) {
			plan->funcs[i].skip = "longjmp pseudo-edges (not numbered yet)";
			continue;
		}
		if (f->ninsns + 1 > hcap) {
			int64_t *h = realloc(height, (f->ninsns + 1) * sizeof(*h));

			if (!h) {
				err = -ENOMEM;
				break;
			}
			height = h;
			hcap = f->ninsns + 1;
		}
		err = stack_height__at(f, &d, NULL, 0, height, &label_taken);
		if (!err)
			err = path_probes__plan_func(plan, &cap, f, (uint32_t)i, height,
						     PATH_PROBES_MAX_PATHS);
	}
	free(height);
	decoder__close(&d);
	if (err)
		path_probes__free(plan);
	return err;
}

void path_probes__free(struct path_probe_plan *plan)
{
	for (size_t i = 0; plan->funcs && i < plan->nfuncs; i++)
		bl_paths__free(&plan->funcs[i].bp);
	free(plan->funcs);
	free(plan->sites);
	memset(plan, 0, sizeof(*plan));
}
