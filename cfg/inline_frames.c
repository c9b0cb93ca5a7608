/*
 * Inline frames of code addresses (see inline_frames.h). The concrete function holding an
 * address is found among its unit's subprograms (descending into namespaces and classes),
 * and its whole tree of inlined subroutines is read once, with every node's address ranges,
 * into a cache: consecutive addresses of one function (the usual order of lookups) then cost
 * a scan of that function's ranges, not a walk of the unit's DIEs. The frames of an address
 * are the deepest inlined subroutine whose ranges hold it and its parents.
 */
#include "inline_frames.h"

#include <dwarf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"

#ifndef DW_AT_GNU_discriminator
#define DW_AT_GNU_discriminator 0x2136
#endif

/* A function of the cached tree: node 0 is the concrete subprogram, the others inlined
 * subroutines. */
struct if_node {
	int parent; /* node index, -1 for node 0 */
	int depth;
	const char *name;
	int decl_line;
	int call_line;      /* where in the parent it was inlined */
	unsigned call_disc; /* that call's discriminator */
};

struct if_range {
	uint64_t lo, hi; /* [lo, hi) */
	uint32_t node;
};

struct inline_frames {
	struct srcline *sl;
	struct if_node *nodes; /* nnodes == 0: nothing cached */
	size_t nnodes, cap_nodes;
	struct if_range *ranges;
	size_t nranges, cap_ranges;
};

/* Upper bounds against corrupt DWARF: ranges per DIE and nesting of scopes. */
#define MAX_RANGES_PER_DIE 100000
#define MAX_DEPTH 512

int inline_frames__open(struct inline_frames **ifr, struct srcline *sl)
{
	*ifr = calloc(1, sizeof(**ifr));
	if (!*ifr)
		return -ENOMEM;
	(*ifr)->sl = sl;
	return 0;
}

void inline_frames__close(struct inline_frames *ifr)
{
	if (!ifr)
		return;
	free(ifr->nodes);
	free(ifr->ranges);
	free(ifr);
}

static const char *die_name(Dwarf_Die *die)
{
	static const int names[] = { DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name };
	Dwarf_Attribute at;
	const char *s;

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (dwarf_attr_integrate(die, names[k], &at) && (s = dwarf_formstring(&at)))
			return s;
	return NULL;
}

/* Attribute NAME of DIE as an unsigned number (following abstract origins when INTEGRATE),
 * 0 when it has none. */
static uint64_t die_udata(Dwarf_Die *die, int name, bool integrate)
{
	Dwarf_Attribute at;
	Dwarf_Word w;

	if (!(integrate ? dwarf_attr_integrate(die, name, &at) : dwarf_attr(die, name, &at)) ||
	    dwarf_formudata(&at, &w))
		return 0;
	return w;
}

static int add_node(struct inline_frames *ifr, Dwarf_Die *die, int parent, int depth)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	unsigned n = 0;
	uint32_t id;

	if (array_grow((void **)&ifr->nodes, &ifr->cap_nodes, ifr->nnodes + 1,
		       sizeof(*ifr->nodes), 64))
		return -ENOMEM;
	id = (uint32_t)ifr->nnodes++;
	ifr->nodes[id] = (struct if_node){
		.parent = parent,
		.depth = depth,
		.name = die_name(die),
		.decl_line = (int)die_udata(die, DW_AT_decl_line, true),
		.call_line = parent < 0 ? 0 : (int)die_udata(die, DW_AT_call_line, false),
		.call_disc = parent < 0 ? 0 : (unsigned)die_udata(die, DW_AT_GNU_discriminator, false),
	};
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0 && n++ < MAX_RANGES_PER_DIE) {
		if (lo >= hi)
			continue;
		if (array_grow((void **)&ifr->ranges, &ifr->cap_ranges, ifr->nranges + 1,
			       sizeof(*ifr->ranges), 64))
			return -ENOMEM;
		ifr->ranges[ifr->nranges++] = (struct if_range){ lo, hi, id };
	}
	return (int)id;
}

/* Adds the inlined subroutines under DIE (inside node PARENT, at DEPTH) to the cache. */
static int walk(struct inline_frames *ifr, Dwarf_Die *die, int parent, int depth)
{
	Dwarf_Die child;
	int err;

	if (depth > MAX_DEPTH || dwarf_child(die, &child) != 0)
		return 0;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_inlined_subroutine:
			err = add_node(ifr, &child, parent, depth);
			if (err < 0)
				return err;
			err = walk(ifr, &child, err, depth + 1);
			break;
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
			err = walk(ifr, &child, parent, depth);
			break;
		default:
			err = 0;
		}
		if (err < 0)
			return err;
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

/* The concrete subprogram holding ADDR among the children of DIE (namespaces and classes
 * searched too) into *SP: true when found. */
static bool find_subprogram(Dwarf_Die *die, uint64_t addr, Dwarf_Die *sp, int depth)
{
	Dwarf_Die child;

	if (depth > MAX_DEPTH || dwarf_child(die, &child) != 0)
		return false;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			if (dwarf_haspc(&child, addr) == 1) {
				*sp = child;
				return true;
			}
			break;
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			if (find_subprogram(&child, addr, sp, depth + 1))
				return true;
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/* Whether the cached tree is that of the function holding ADDR. */
static bool cached(const struct inline_frames *ifr, uint64_t addr)
{
	for (size_t k = 0; k < ifr->nranges; k++)
		if (ifr->ranges[k].node == 0 && ifr->ranges[k].lo <= addr && addr < ifr->ranges[k].hi)
			return true;
	return false;
}

int inline_frames__at(struct inline_frames *ifr, uint64_t addr, struct inline_frame *fr,
		      int max)
{
	Dwarf_Die *cu, sp;
	Dwarf_Line *row;
	int line = 0, n, depth = -1, node = -1, err;
	unsigned disc = 0;

	if (srcline__row(ifr->sl, addr, &cu, &row) || dwarf_lineno(row, &line) || line <= 0)
		return -ENOENT;
	if (dwarf_linediscriminator(row, &disc))
		disc = 0;
	if (!ifr->nnodes || !cached(ifr, addr)) {
		ifr->nnodes = ifr->nranges = 0;
		if (!find_subprogram(cu, addr, &sp, 0))
			return -ENOENT;
		err = add_node(ifr, &sp, -1, 0);
		if (err >= 0)
			err = walk(ifr, &sp, 0, 1);
		if (err < 0) {
			ifr->nnodes = ifr->nranges = 0;
			return err;
		}
		if (!cached(ifr, addr)) /* a subprogram whose ranges dwarf_haspc reads otherwise */
			return -ENOENT;
	}
	for (size_t k = 0; k < ifr->nranges; k++) {
		const struct if_range *r = &ifr->ranges[k];

		if (r->lo <= addr && addr < r->hi && ifr->nodes[r->node].depth > depth) {
			node = (int)r->node;
			depth = ifr->nodes[node].depth;
		}
	}
	n = depth + 1;
	if (n > max)
		return -E2BIG;
	/* From the innermost frame out: each frame is at the call line of the one inside it. */
	for (int k = n - 1; k >= 0; k--) {
		const struct if_node *d = &ifr->nodes[node];

		if (!d->name)
			return -ENOENT;
		fr[k] = (struct inline_frame){ d->name, d->decl_line, line, disc };
		line = d->call_line;
		disc = d->call_disc;
		node = d->parent;
	}
	return n;
}
