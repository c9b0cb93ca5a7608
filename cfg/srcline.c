/*
 * Source lines through libdw. At open, the address ranges of every compilation unit are
 * collected once into a sorted table (so lookups neither depend on .debug_aranges, which
 * clang does not emit, nor scan the units); a lookup is a binary search for the unit and
 * libdw's binary search in that unit's line table, which libdw reads once and keeps.
 * Corrupt or partial DWARF only loses lines: units or ranges libdw rejects are skipped.
 * A file without DWARF of its own takes the line tables of its separate debug file
 * (debuginfo.h: build-id or .gnu_debuglink, checked to belong to the file).
 */
#include "srcline.h"

#include "debuginfo.h"
#include "error.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* An address range [lo, hi) covered by unit CU; MAXHI is the largest hi of this range and
 * all ranges before it in the sorted table (lets overlapping ranges be found). */
struct cu_range {
	uint64_t lo, hi, maxhi;
	uint32_t cu;
};

struct srcline {
	Dwarf *dw;
	struct debuginfo dbg; /* the separate debug file the lines come from, if any */
	Dwarf_Die *cus; /* unit DIEs */
	size_t ncus, cap_cus;
	struct cu_range *ranges; /* sorted by lo */
	size_t nranges, cap_ranges;
	size_t last; /* range of the last successful lookup, a cheap first guess */
	Dwarf_Die fallback; /* srcline__row's unit when no unit declared ranges */
};

/* Upper bound on ranges per unit, against a corrupt range list that never ends. */
#define MAX_RANGES_PER_CU 1000000

static int cmp_range(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->cu < y->cu ? -1 : x->cu > y->cu;
}

static int add_range(struct srcline *sl, uint64_t lo, uint64_t hi, uint32_t cu)
{
	if (sl->nranges == sl->cap_ranges) {
		size_t cap = sl->cap_ranges ? 2 * sl->cap_ranges : 64;
		struct cu_range *p = realloc(sl->ranges, sizeof(*p) * cap);

		if (!p)
			return -ENOMEM;
		sl->ranges = p;
		sl->cap_ranges = cap;
	}
	sl->ranges[sl->nranges++] = (struct cu_range){ .lo = lo, .hi = hi, .cu = cu };
	return 0;
}

static int add_cu(struct srcline *sl, const Dwarf_Die *die)
{
	if (sl->ncus == sl->cap_cus) {
		size_t cap = sl->cap_cus ? 2 * sl->cap_cus : 16;
		Dwarf_Die *p = realloc(sl->cus, sizeof(*p) * cap);

		if (!p)
			return -ENOMEM;
		sl->cus = p;
		sl->cap_cus = cap;
	}
	sl->cus[sl->ncus++] = *die;
	return 0;
}

/* Collects the code ranges of every compilation unit. */
static int index_units(struct srcline *sl)
{
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Half version;
	uint8_t type;
	Dwarf_Die cudie;
	size_t i;
	int err;

	while (dwarf_get_units(sl->dw, cu, &next, &version, &type, &cudie, NULL) == 0) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;
		unsigned n = 0;

		cu = next;
		if (type != DW_UT_compile && type != DW_UT_partial && type != DW_UT_skeleton)
			continue;
		if (sl->ncus >= UINT32_MAX)
			break;
		err = add_cu(sl, &cudie);
		if (err)
			return err;
		while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0 &&
		       n++ < MAX_RANGES_PER_CU) {
			/* Empty ranges, and code of discarded sections (placed at 0), cover
			 * nothing real. */
			if (lo >= hi || lo == 0)
				continue;
			err = add_range(sl, lo, hi, (uint32_t)(sl->ncus - 1));
			if (err)
				return err;
		}
	}
	if (sl->nranges)
		qsort(sl->ranges, sl->nranges, sizeof(*sl->ranges), cmp_range);
	for (i = 0; i < sl->nranges; i++) {
		uint64_t prev = i ? sl->ranges[i - 1].maxhi : 0;

		sl->ranges[i].maxhi = prev > sl->ranges[i].hi ? prev : sl->ranges[i].hi;
	}
	return 0;
}

/* Whether DW has at least one unit (an image with only .eh_frame may yield an empty Dwarf). */
static bool has_units(Dwarf *dw)
{
	Dwarf_CU *next;
	Dwarf_Half version;
	uint8_t type;

	return dwarf_get_units(dw, NULL, &next, &version, &type, NULL, NULL) == 0;
}

int srcline__open(struct srcline **slp, const struct elf_image *img)
{
	struct srcline *sl;
	int err;

	*slp = NULL;
	if (!img || !img->elf)
		return cfg_error(EINVAL, "no ELF image to read lines from");
	sl = calloc(1, sizeof(*sl));
	if (!sl)
		return cfg_error(ENOMEM, "out of memory reading lines of '%s'",
				 img->path ? img->path : "?");
	sl->dbg.fd = -1;
	sl->dw = dwarf_begin_elf(img->elf, DWARF_C_READ, NULL);
	if (sl->dw && !has_units(sl->dw)) {
		dwarf_end(sl->dw);
		sl->dw = NULL;
	}
	if (!sl->dw) {
		/* Stripped: the lines of its separate debug file, when one matches. */
		err = debuginfo__open(&sl->dbg, img);
		if (!err) {
			sl->dw = dwarf_begin_elf(sl->dbg.elf, DWARF_C_READ, NULL);
			if (sl->dw && !has_units(sl->dw)) {
				dwarf_end(sl->dw);
				sl->dw = NULL;
			}
		}
		if (!sl->dw) {
			srcline__close(sl);
			return err == -ENOMEM ? cfg_error(ENOMEM, "out of memory") : -ENOENT;
		}
	}
	err = index_units(sl);
	if (err) {
		srcline__close(sl);
		return cfg_error(-err, "out of memory indexing the lines of '%s'",
				 img->path ? img->path : "?");
	}
	*slp = sl;
	return 0;
}

/* The line table row of ADDR in unit DIE, or NULL when the unit has none for it. */
static Dwarf_Line *row_in(Dwarf_Die *die, uint64_t addr)
{
	return dwarf_getsrc_die(die, addr);
}

/* File and line of ROW: 0, or -ENOENT when it has no file or no line (line 0). */
static int row_line(Dwarf_Line *row, const char **file, int *line)
{
	const char *name;
	int lineno = 0;

	if (!row)
		return -ENOENT;
	name = dwarf_linesrc(row, NULL, NULL);
	if (!name || dwarf_lineno(row, &lineno) != 0 || lineno <= 0)
		return -ENOENT;
	*file = name;
	*line = lineno;
	return 0;
}

/* The unit holding a row with a line for ADDR into *CU (an index into sl->cus) and that row
 * into *ROW: 0, or -ENOENT. */
static int find_row(struct srcline *sl, uint64_t addr, size_t *cu, Dwarf_Line **row)
{
	size_t lo = 0, hi, i;
	const char *file;
	int line;

	if (!sl || !sl->dw || !sl->nranges)
		return -ENOENT;
	if (sl->last < sl->nranges && sl->ranges[sl->last].lo <= addr &&
	    addr < sl->ranges[sl->last].hi) {
		*cu = sl->ranges[sl->last].cu;
		*row = row_in(&sl->cus[*cu], addr);
		if (row_line(*row, &file, &line) == 0)
			return 0;
	}

	/* lo = number of ranges with range.lo <= addr. */
	hi = sl->nranges;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sl->ranges[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Walk back through the ranges that may still cover addr, latest start first. */
	for (i = lo; i-- > 0 && sl->ranges[i].maxhi > addr;) {
		if (addr >= sl->ranges[i].hi)
			continue;
		*cu = sl->ranges[i].cu;
		*row = row_in(&sl->cus[*cu], addr);
		if (row_line(*row, &file, &line) == 0) {
			sl->last = i;
			return 0;
		}
	}
	return -ENOENT;
}

int srcline__row(struct srcline *sl, uint64_t addr, Dwarf_Die **cu, Dwarf_Line **row)
{
	size_t k;

	if (!sl || !sl->dw)
		return -ENOENT;
	if (!sl->nranges) {
		if (!dwarf_addrdie(sl->dw, addr, &sl->fallback))
			return -ENOENT;
		*cu = &sl->fallback;
		*row = row_in(*cu, addr);
		return *row ? 0 : -ENOENT;
	}
	if (find_row(sl, addr, &k, row))
		return -ENOENT;
	*cu = &sl->cus[k];
	return 0;
}

int srcline__lookup(struct srcline *sl, uint64_t addr, const char **file, int *line)
{
	Dwarf_Die die;
	Dwarf_Line *row;
	size_t cu;

	if (!sl || !sl->dw)
		return -ENOENT;
	if (!sl->nranges) {
		/* No unit declared ranges: fall back to libdw's own address index. */
		if (!dwarf_addrdie(sl->dw, addr, &die))
			return -ENOENT;
		return row_line(row_in(&die, addr), file, line);
	}
	if (find_row(sl, addr, &cu, &row))
		return -ENOENT;
	return row_line(row, file, line);
}

void srcline__close(struct srcline *sl)
{
	if (!sl)
		return;
	if (sl->dw)
		dwarf_end(sl->dw);
	debuginfo__close(&sl->dbg);
	free(sl->cus);
	free(sl->ranges);
	free(sl);
}
