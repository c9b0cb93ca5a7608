/*
 * C++ exception landing pads from the language-specific data areas (LSDA, the Itanium C++ ABI
 * format in .gcc_except_table) that FDEs point to: which call sites may transfer control to
 * which landing pad when an exception unwinds through them.
 */
#ifndef EDGEPROF_CFG_EH_LSDA_H
#define EDGEPROF_CFG_EH_LSDA_H

#include <stddef.h>
#include <stdint.h>

#include "elf_image.h"

struct eh_callsite {
	uint64_t start, end; /* call sites in [start, end) */
	uint64_t lp;         /* landing pad address */
};

/* Appends the call sites with a landing pad of the LSDA at LSDA, for the FDE starting at
 * FUNC_START, to *V (a malloc'd array of *N entries, *CAP allocated). Returns 0, -EINVAL when
 * the LSDA cannot be read (truncated or an unknown encoding), or -ENOMEM. */
int eh_lsda__callsites(const struct elf_image *img, uint64_t lsda, uint64_t func_start,
		       struct eh_callsite **v, size_t *n, size_t *cap);

/* Reads a DW_EH_PE-encoded value at VADDR (pc-relative to VADDR when the encoding says so),
 * advancing *VADDR past it. Returns 0, or -EINVAL for an unsupported encoding or bytes that
 * are not in the file. Shared by the FDE and LSDA readers. */
int eh_read_encoded(const struct elf_image *img, uint64_t *vaddr, uint8_t enc, uint64_t *val);

/* Reads an unsigned LEB128 at *VADDR, advancing it. Returns 0 or -EINVAL. */
int eh_read_uleb(const struct elf_image *img, uint64_t *vaddr, uint64_t *val);

#endif
