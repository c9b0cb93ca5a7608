/*
 * Reading LSDA call-site tables (see eh_lsda.h). Layout: landing-pad base encoding and value,
 * type-table encoding and offset, call-site encoding, table length, then entries of
 * (start, length, landing pad, action), offsets from the FDE's start.
 */
#include "eh_lsda.h"

#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>

int eh_read_uleb(const struct elf_image *img, uint64_t *vaddr, uint64_t *val)
{
	uint64_t v = 0, byte;
	unsigned shift = 0;

	do {
		if (elf_image__read(img, (*vaddr)++, 1, &byte) || shift > 63)
			return -EINVAL;
		v |= (byte & 0x7f) << shift;
		shift += 7;
	} while (byte & 0x80);
	*val = v;
	return 0;
}

static int read_sleb(const struct elf_image *img, uint64_t *vaddr, int64_t *val)
{
	uint64_t v = 0, byte;
	unsigned shift = 0;

	do {
		if (elf_image__read(img, (*vaddr)++, 1, &byte) || shift > 63)
			return -EINVAL;
		v |= (byte & 0x7f) << shift;
		shift += 7;
	} while (byte & 0x80);
	if (shift < 64 && (byte & 0x40))
		v |= ~0ULL << shift;
	*val = (int64_t)v;
	return 0;
}

int eh_read_encoded(const struct elf_image *img, uint64_t *vaddr, uint8_t enc, uint64_t *val)
{
	uint64_t at = *vaddr, v;
	int64_t sv;
	unsigned size;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: size = 8; break;
	case DW_EH_PE_udata2: case DW_EH_PE_sdata2: size = 2; break;
	case DW_EH_PE_udata4: case DW_EH_PE_sdata4: size = 4; break;
	case DW_EH_PE_udata8: case DW_EH_PE_sdata8: size = 8; break;
	case DW_EH_PE_uleb128:
		if (eh_read_uleb(img, vaddr, &v))
			return -EINVAL;
		size = 0;
		break;
	case DW_EH_PE_sleb128:
		if (read_sleb(img, vaddr, &sv))
			return -EINVAL;
		v = (uint64_t)sv;
		size = 0;
		break;
	default:
		return -EINVAL;
	}
	if (size) {
		if (elf_image__read(img, at, size, &v))
			return -EINVAL;
		if ((enc & 0x0f) == DW_EH_PE_sdata2)
			v = (uint64_t)(int64_t)(int16_t)v;
		else if ((enc & 0x0f) == DW_EH_PE_sdata4)
			v = (uint64_t)(int64_t)(int32_t)v;
		*vaddr = at + size;
	}
	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
		break;
	case DW_EH_PE_pcrel:
		v += at;
		break;
	default:
		return -EINVAL; /* textrel, datarel, funcrel, aligned: not produced on x86-64 */
	}
	if (enc & DW_EH_PE_indirect)
		return -EINVAL;
	*val = v;
	return 0;
}

int eh_lsda__callsites(const struct elf_image *img, uint64_t lsda, uint64_t func_start,
		       struct eh_callsite **v, size_t *n, size_t *cap)
{
	uint64_t p = lsda, lpstart = func_start, b, len, end, tmp;

	if (elf_image__read(img, p++, 1, &b))
		return -EINVAL;
	if (b != DW_EH_PE_omit && eh_read_encoded(img, &p, (uint8_t)b, &lpstart))
		return -EINVAL;
	if (elf_image__read(img, p++, 1, &b))
		return -EINVAL;
	if (b != DW_EH_PE_omit && eh_read_uleb(img, &p, &tmp))
		return -EINVAL;
	if (elf_image__read(img, p++, 1, &b) || eh_read_uleb(img, &p, &len) || len > (1u << 24))
		return -EINVAL;
	end = p + len;
	while (p < end) {
		uint64_t cs, cl, lp, action;

		if (eh_read_encoded(img, &p, (uint8_t)(b & 0x0f), &cs) ||
		    eh_read_encoded(img, &p, (uint8_t)(b & 0x0f), &cl) ||
		    eh_read_encoded(img, &p, (uint8_t)(b & 0x0f), &lp) ||
		    eh_read_uleb(img, &p, &action))
			return -EINVAL;
		if (!lp)
			continue;
		if (*n == *cap) {
			size_t nc = *cap ? 2 * *cap : 64;
			struct eh_callsite *nv = realloc(*v, nc * sizeof(*nv));

			if (!nv)
				return -ENOMEM;
			*v = nv;
			*cap = nc;
		}
		(*v)[(*n)++] = (struct eh_callsite){ .start = func_start + cs,
						     .end = func_start + cs + cl,
						     .lp = lpstart + lp };
	}
	return 0;
}
