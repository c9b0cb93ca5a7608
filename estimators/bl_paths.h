/*
 * Ball-Larus path numbering ("Efficient path profiling", 1996) of one function's CFG, the base
 * of path profiles (Tallam, Zhang and Gupta's overlapping paths extend it). The retreating edges
 * of a depth-first search from the entry are cut, which leaves a DAG whatever the loops'
 * shape; each cut edge v->w gets two dummy edges, ENTRY->w (a path that starts at w after the
 * back edge) and v->EXIT (a path that ends at v by taking it). A virtual ENTRY vertex leads to
 * the entry block and to the dummies' heads. Every path from ENTRY to EXIT of the DAG gets a
 * number in [0, total): the sum of its edges' increments. At run time a register r is 0 at the
 * function's entry, r += inc on every DAG edge, r += inc of the exit edge and count[r]++ where
 * the function leaves, and count[r + exit_inc]++ then r = entry_inc on a back edge.
 * Paths are sequences of edges: two parallel edges (a jcc whose both outcomes reach one block)
 * make two paths with the same blocks.
 */
#ifndef EDGEPROF_ESTIMATORS_BL_PATHS_H
#define EDGEPROF_ESTIMATORS_BL_PATHS_H

#include <stdbool.h>
#include <stdint.h>

#include "cfg/cfg.h"

struct bl_paths {
	uint32_t nblocks, nedges;
	bool *back;	     /* per CFG edge: a retreating edge, cut from the DAG */
	bool *reached;	     /* per block: reachable from the entry (others are on no path) */
	uint64_t *npaths;    /* per block, [nblocks] = EXIT (1): DAG paths from it to EXIT */
	uint64_t *inc;	     /* per CFG edge: its increment (a back edge: 0, see below) */
	uint64_t *entry_inc; /* per CFG edge: for a back edge v->w, the increment of ENTRY->w */
	uint64_t *exit_inc;  /* per CFG edge: for a back edge v->w, the increment of v->EXIT */
	uint64_t total;	     /* paths from ENTRY: numbers are [0, total) */

	/* Event counting (bl_paths__events; NULL until then): the same numbers from increments
	 * on the chords of a spanning tree of the DAG plus EXIT->ENTRY, the heaviest edges in
	 * the tree (Ball-Larus 1996, section 3.3). Edges whose increment is 0 need no code. */
	int64_t *ev_inc;       /* per CFG edge: a DAG edge's increment */
	int64_t *ev_entry_inc; /* per CFG edge: for a back edge v->w, r's value after it */
	int64_t *ev_exit_inc;  /* per CFG edge: for a back edge v->w, added before its count */
	int64_t ev_start;      /* r's value at the function's entry */
	uint32_t nchords;      /* increments that are not 0 (the code to run) */
};

/* One numbered path, decoded: it starts at the entry block (START_EDGE UINT32_MAX) or at the
 * head of back edge START_EDGE; it follows EDGES[0, NEDGES) (DAG edges, in order); it ends
 * leaving the function (its last edge goes to EXIT) or at the tail of back edge END_EDGE
 * (UINT32_MAX when it leaves). */
struct bl_path {
	uint32_t start_edge, end_edge;
	uint32_t *edges;
	uint32_t nedges, cap;
};

/* Numbers the paths of F. LIMIT bounds TOTAL (e.g. the width of a counter key): a function with
 * more paths gets -EOVERFLOW (count it by edges). Returns 0 with *BP filled (release with
 * bl_paths__free), -EOVERFLOW, -EINVAL (no entry block) or -ENOMEM; *BP is empty on failure. */
int bl_paths__number(struct bl_paths *bp, const struct cfg_func *f, uint64_t limit);

/* Computes BP's event-counting increments (the ev_ fields) for F, numbered by
 * bl_paths__number: the spanning tree keeps the heaviest edges by W (per CFG edge, a back
 * edge's weight standing for its two dummy edges; NULL: all alike). With them the recipe is
 * r = ev_start at the entry, r += ev_inc on DAG edges, count[r + ev_exit_inc] and r =
 * ev_entry_inc on a back edge, and every path still gets its number. Returns 0 or -ENOMEM. */
int bl_paths__events(struct bl_paths *bp, const struct cfg_func *f, const double *w);

/* Decodes path number ID of F (numbered as BP) into *P (its edges array reused, grown as
 * needed; zero *P before the first call, release with bl_path__free). Returns 0, -ERANGE (ID
 * not below BP->total) or -ENOMEM. */
int bl_paths__decode(const struct bl_paths *bp, const struct cfg_func *f, uint64_t id,
		     struct bl_path *p);

/* The blocks path P of F passes through, in order, into BLOCKS (room for P->nedges + 1):
 * returns how many. */
uint32_t bl_path__blocks(const struct bl_path *p, const struct cfg_func *f, uint32_t *blocks);

void bl_path__free(struct bl_path *p);
void bl_paths__free(struct bl_paths *bp);

#endif
