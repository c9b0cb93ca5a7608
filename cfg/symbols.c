/*
 * Function discovery and external names (see symbols.h): .symtab or .dynsym FUNC symbols,
 * .eh_frame FDE starts (entries walked by libdw's dwarf_next_cfi; only the two encoded
 * address fields of each FDE are decoded here), the entry point, init/fini arrays, and the
 * names of PLT stubs and GOT slots from the dynamic relocations.
 */
#include "symbols.h"
#include "debuginfo.h"
#include "eh_lsda.h"
#include "error.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct vec {
	void *v;
	size_t n, cap, elt;
};

static void *vec_push(struct vec *vc)
{
	if (vc->n == vc->cap) {
		size_t cap = vc->cap ? 2 * vc->cap : 64;
		void *nv = realloc(vc->v, cap * vc->elt);

		if (!nv)
			return NULL;
		vc->v = nv;
		vc->cap = cap;
	}
	/* Zeroed: callers fill some fields one by one (raw_func.mid_frame, read only by the
	 * FDE reader, must be false for every other source). */
	return memset((char *)vc->v + vc->elt * vc->n++, 0, vc->elt);
}

static bool in_code(const struct elf_image *img, uint64_t addr)
{
	const struct elf_section *s = elf_image__section_at(img, addr);

	return s && s->exec && s->data;
}

static char *plain_name(const char *name)
{
	size_t n = strcspn(name, "@");

	return strndup(name, n);
}

/* Rank of a symbol binding for choosing among aliases: lower is preferred. */
static int bind_rank(int bind)
{
	return bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
}

struct raw_func {
	uint64_t addr, size;
	const char *name; /* in libelf's string table, or NULL */
	unsigned sources;
	int rank;
	bool mid_frame;   /* FDE whose rules at its start are not a fresh call's */
};

static int cmp_raw(const void *a, const void *b)
{
	const struct raw_func *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	if (x->name && y->name)
		return strcmp(x->name, y->name);
	return (x->name == NULL) - (y->name == NULL);
}

/* Reads the FUNC (and, into OBJS when given, sized OBJECT) symbols of section SCN of ELF: the
 * image's own Elf, or its separate debug file's, whose addresses are the image's (same
 * build-id); only functions in the image's own executable sections are taken. */
static int read_symtab(const struct elf_image *img, Elf *elf, Elf_Scn *scn, GElf_Shdr *sh,
		       unsigned src, struct vec *raw, struct vec *objs)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, n;

	if (!data || sh->sh_entsize != sizeof(Elf64_Sym))
		return cfg_error(EINVAL, "'%s': corrupt symbol table: %s", img->path,
				 elf_errmsg(-1));
	n = data->d_size / sizeof(Elf64_Sym);
	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		struct raw_func *r;
		int type;

		if (!gelf_getsym(data, (int)i, &sym))
			return cfg_error(EINVAL, "'%s': corrupt symbol %zu", img->path, i);
		type = GELF_ST_TYPE(sym.st_info);
		if (objs && type == STT_OBJECT && sym.st_shndx != SHN_UNDEF && sym.st_size &&
		    sym.st_value + sym.st_size > sym.st_value) {
			struct data_object *o = vec_push(objs);

			if (!o)
				return -ENOMEM;
			*o = (struct data_object){ .addr = sym.st_value, .size = sym.st_size };
			continue;
		}
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
		    !in_code(img, sym.st_value))
			continue;
		r = vec_push(raw);
		if (!r)
			return -ENOMEM;
		r->addr = sym.st_value;
		r->size = sym.st_size;
		r->name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (r->name && !*r->name)
			r->name = NULL;
		r->sources = src;
		r->rank = bind_rank(GELF_ST_BIND(sym.st_info));
	}
	return 0;
}

/* Size in bytes of a DW_EH_PE format, 0 for LEB128 (variable) or unknown. */
static unsigned eh_format_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
		return 8;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return 2;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	default:
		return 0;
	}
}

static bool eh_read(const uint8_t *p, const uint8_t *end, uint8_t enc, uint64_t *val)
{
	unsigned n = eh_format_size(enc), i;
	uint64_t v = 0;

	if (n == 0 || end - p < (ptrdiff_t)n)
		return false;
	for (i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	if ((enc & 0x0f) == DW_EH_PE_sdata2)
		v = (uint64_t)(int64_t)(int16_t)v;
	else if ((enc & 0x0f) == DW_EH_PE_sdata4)
		v = (uint64_t)(int64_t)(int32_t)v;
	*val = v;
	return true;
}

struct cie_enc {
	Dwarf_Off off;
	int enc;      /* FDE pointer encoding, -1 when the CIE has none we understand */
	int lsda_enc; /* LSDA pointer encoding ('L'), -1 when none */
	bool z;       /* FDEs carry a sized augmentation data block */
};

/* The FDE pointer encoding ('R' augmentation) of a CIE, DW_EH_PE_absptr when absent; the LSDA
 * encoding ('L') into *LSDA_ENC, -1 when absent. */
static int cie_fde_encoding(const Dwarf_CIE *cie, int *lsda_enc)
{
	const char *a = cie->augmentation;
	const uint8_t *d = cie->augmentation_data;
	const uint8_t *end = d ? d + cie->augmentation_data_size : NULL;
	int enc = DW_EH_PE_absptr;

	*lsda_enc = -1;
	if (!a || a[0] != 'z')
		return a && a[0] ? -1 : DW_EH_PE_absptr;
	for (a++; *a; a++) {
		if (!d || d >= end)
			return -1;
		switch (*a) {
		case 'R':
			enc = *d++;
			break;
		case 'L':
			*lsda_enc = *d++;
			break;
		case 'P': {
			unsigned n = eh_format_size(*d);

			if (n == 0)
				return -1;
			d += 1 + n;
			break;
		}
		case 'S':
		case 'B':
			break;
		default:
			return -1;
		}
	}
	return enc;
}

/*
 * Does the FDE whose fields start at P (initial location, then range, then with a 'z' CIE the
 * augmentation data, then the call-frame instructions) describe code entered with a frame
 * already set up? A function is entered by a call: the CIE's initial rules (CFA = rsp + 8,
 * return address at CFA - 8) hold at its first instruction, and its FDE changes them only
 * after an advance (DW_CFA_advance_loc*). gcc's split-off cold part of a function starts
 * inside its parent's frame: its FDE sets the CFA offset and the saved registers before any
 * advance. True for such an FDE.
 */
static bool fde_mid_frame(const uint8_t *p, const uint8_t *end, int enc, bool z)
{
	p += 2 * eh_format_size((uint8_t)enc);
	if (z) {
		uint64_t alen = 0;
		unsigned shift = 0;
		uint8_t b;

		do {
			if (p >= end || shift >= 63)
				return false;
			b = *p++;
			alen |= (uint64_t)(b & 0x7f) << shift;
			shift += 7;
		} while (b & 0x80);
		if (p > end || alen > (uint64_t)(end - p))
			return false;
		p += alen;
	}
	for (; p < end; p++) {
		uint8_t op = *p;

		if (op == DW_CFA_nop)
			continue;
		return !((op & 0xc0) == DW_CFA_advance_loc || op == DW_CFA_advance_loc1 ||
			 op == DW_CFA_advance_loc2 || op == DW_CFA_advance_loc4);
	}
	return false;
}

static int read_eh_frame(const struct elf_image *img, Elf_Scn *scn, GElf_Shdr *sh,
			 struct vec *raw, size_t *nfde, struct vec *lsdas)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	const unsigned char *ident = img->map;
	struct vec cies = { .elt = sizeof(struct cie_enc) };
	Dwarf_Off off = 0, next;
	int err = 0;

	if (!data)
		return cfg_error(EINVAL, "'%s': cannot read .eh_frame: %s", img->path,
				 elf_errmsg(-1));
	while (off < data->d_size) {
		Dwarf_CFI_Entry e;
		int rc = dwarf_next_cfi(ident, data, true, off, &next, &e);

		if (rc == 1)
			break;
		if (rc < 0) {
			if (next == (Dwarf_Off)-1 || next <= off) {
				err = cfg_error(EINVAL, "'%s': corrupt .eh_frame at offset %#llx: %s",
						img->path, (unsigned long long)off,
						dwarf_errmsg(-1));
				break;
			}
			off = next;
			continue;
		}
		if (dwarf_cfi_cie_p(&e)) {
			struct cie_enc *c = vec_push(&cies);

			if (!c) {
				err = -ENOMEM;
				break;
			}
			c->off = off;
			c->enc = cie_fde_encoding(&e.cie, &c->lsda_enc);
			c->z = e.cie.augmentation && e.cie.augmentation[0] == 'z';
		} else {
			const uint8_t *p = e.fde.start, *end = e.fde.end;
			int enc = -1;
			uint64_t start, len;
			size_t i;
			const struct cie_enc *cie = NULL;

			for (i = 0; i < cies.n; i++)
				if (((struct cie_enc *)cies.v)[i].off == e.fde.CIE_pointer)
					cie = &((struct cie_enc *)cies.v)[i];
			if (cie)
				enc = cie->enc;
			if (enc < 0 || (enc & 0x70) > DW_EH_PE_pcrel || !eh_read(p, end, enc, &start) ||
			    !eh_read(p + eh_format_size(enc), end, enc & 0x0f, &len)) {
				off = next;
				continue;
			}
			if ((enc & 0x70) == DW_EH_PE_pcrel)
				start += sh->sh_addr + (uint64_t)(p - (const uint8_t *)data->d_buf);
			(*nfde)++;
			/* The linker's FDEs for PLT stubs describe no function of the program. */
			if (len && in_code(img, start) &&
			    strncmp(elf_image__section_at(img, start)->name, ".plt", 4) != 0) {
				struct raw_func *r = vec_push(raw);

				if (!r) {
					err = -ENOMEM;
					break;
				}
				*r = (struct raw_func){ .addr = start, .size = len,
							.sources = FUNC_SRC_FDE, .rank = 3,
							.mid_frame = fde_mid_frame(p, end, enc,
										   cie->z) };
			}
			/* The LSDA pointer is the first field of the augmentation data. */
			if (len && cie->z && cie->lsda_enc >= 0 && cie->lsda_enc != DW_EH_PE_omit) {
				uint64_t at = sh->sh_addr +
					      (uint64_t)(p - (const uint8_t *)data->d_buf) +
					      2 * eh_format_size(enc);
				uint64_t alen, lsda;
				struct fde_lsda *fl;

				if (!eh_read_uleb(img, &at, &alen) && alen &&
				    !eh_read_encoded(img, &at, (uint8_t)cie->lsda_enc, &lsda) && lsda) {
					fl = vec_push(lsdas);
					if (!fl) {
						err = -ENOMEM;
						break;
					}
					*fl = (struct fde_lsda){ .start = start, .lsda = lsda };
				}
			}
		}
		if (next == (Dwarf_Off)-1)
			break;
		off = next;
	}
	free(cies.v);
	return err;
}

/* Pointers in init/fini arrays: the stored value, or the RELATIVE relocation's addend. */
static int read_init_arrays(const struct elf_image *img, struct vec *raw)
{
	static const char *const names[] = { ".init_array", ".fini_array", ".preinit_array" };
	size_t k;

	for (k = 0; k < 3; k++) {
		const struct elf_section *s = elf_image__section_named(img, names[k]);
		uint64_t a;

		if (!s)
			continue;
		for (a = s->addr; a + 8 <= s->addr + s->size; a += 8) {
			uint64_t v;
			struct raw_func *r;

			if (elf_image__read(img, a, 8, &v) || !in_code(img, v))
				continue;
			r = vec_push(raw);
			if (!r)
				return -ENOMEM;
			*r = (struct raw_func){ .addr = v, .sources = FUNC_SRC_INIT_ARRAY, .rank = 4 };
		}
	}
	return 0;
}

static int cmp_object(const void *a, const void *b)
{
	const struct data_object *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

uint64_t symbols__object_remaining(const struct symbols *syms, uint64_t addr)
{
	size_t lo = 0, hi = syms->nobjects;
	uint64_t best = 0;

	/* Objects may nest or overlap (aliases): take the smallest that covers ADDR. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (syms->objects[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo-- > 0) {
		const struct data_object *o = &syms->objects[lo];

		if (addr - o->addr < o->size && (!best || o->addr + o->size - addr < best))
			best = o->addr + o->size - addr;
		if (addr - o->addr > (1u << 24))
			break;
	}
	return best;
}

static int cmp_ext(const void *a, const void *b)
{
	const struct ext_ref *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* GOT slots named by JUMP_SLOT / GLOB_DAT relocations; RELATIVE relocations in init arrays. */
static int read_relocs(const struct elf_image *img, Elf_Scn *scn, GElf_Shdr *sh,
		       struct vec *got, struct vec *raw)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	Elf_Scn *symscn = elf_getscn(img->elf, sh->sh_link);
	GElf_Shdr symsh;
	Elf_Data *symdata;
	size_t i, n;

	if (!data || sh->sh_entsize != sizeof(Elf64_Rela))
		return cfg_error(EINVAL, "'%s': corrupt relocation section", img->path);
	symdata = symscn && gelf_getshdr(symscn, &symsh) ? elf_getdata(symscn, NULL) : NULL;
	n = data->d_size / sizeof(Elf64_Rela);
	for (i = 0; i < n; i++) {
		GElf_Rela rela;
		GElf_Sym sym;
		unsigned type;
		const char *name;
		struct ext_ref *g;

		if (!gelf_getrela(data, (int)i, &rela))
			return cfg_error(EINVAL, "'%s': corrupt relocation %zu", img->path, i);
		type = GELF_R_TYPE(rela.r_info);
		if (type == R_X86_64_RELATIVE || type == R_X86_64_IRELATIVE) {
			const struct elf_section *s = elf_image__section_at(img, rela.r_offset);

			if (s && (strcmp(s->name, ".init_array") == 0 ||
				  strcmp(s->name, ".fini_array") == 0) &&
			    in_code(img, (uint64_t)rela.r_addend)) {
				struct raw_func *r = vec_push(raw);

				if (!r)
					return -ENOMEM;
				*r = (struct raw_func){ .addr = (uint64_t)rela.r_addend,
							.sources = FUNC_SRC_INIT_ARRAY, .rank = 4 };
			}
			continue;
		}
		if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) || !symdata ||
		    !gelf_getsym(symdata, (int)GELF_R_SYM(rela.r_info), &sym))
			continue;
		name = elf_strptr(img->elf, symsh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		g = vec_push(got);
		if (!g)
			return -ENOMEM;
		g->addr = rela.r_offset;
		g->name = plain_name(name);
		if (!g->name)
			return -ENOMEM;
	}
	return 0;
}

/* Names each PLT stub after the GOT slot its `jmp *slot(%rip)` goes through. */
static int name_plt_stubs(struct symbols *syms, const struct elf_image *img, struct vec *plt)
{
	size_t k;

	for (k = 0; k < img->nsecs; k++) {
		const struct elf_section *s = &img->secs[k];
		uint64_t ent = s->entsize >= 8 && s->entsize <= 32 ? s->entsize : 16, i;

		if (!s->exec || strncmp(s->name, ".plt", 4) != 0)
			continue;
		for (i = 0; i + 6 <= s->size; i++) {
			const uint8_t *p = s->data + i;
			uint64_t slot, stub;
			const char *name;
			struct ext_ref *r;

			if (p[0] != 0xff || p[1] != 0x25)
				continue;
			slot = s->addr + i + 6 + (uint64_t)(int64_t)(int32_t)(p[2] | p[3] << 8 |
									   p[4] << 16 |
									   (uint32_t)p[5] << 24);
			name = symbols__got_name(syms, slot);
			if (!name)
				continue;
			stub = s->addr + (i / ent) * ent;
			if (plt->n && ((struct ext_ref *)plt->v)[plt->n - 1].addr == stub)
				continue;
			r = vec_push(plt);
			if (!r)
				return -ENOMEM;
			r->addr = stub;
			r->name = strdup(name);
			if (!r->name)
				return -ENOMEM;
		}
	}
	return 0;
}

/* X.cold, X.cold.N, X.part.N.cold...: split-off cold parts of function X. */
static bool cold_fragment_name(const char *name, size_t *parent_len)
{
	const char *c = strstr(name, ".cold");

	if (!c || (c[5] != '\0' && c[5] != '.'))
		return false;
	*parent_len = (size_t)(c - name);
	return *parent_len > 0;
}

static int finish_funcs(struct symbols *syms, struct vec *raw)
{
	struct raw_func *r = raw->v;
	size_t i, j, n = 0;

	if (raw->n)
		qsort(r, raw->n, sizeof(*r), cmp_raw);
	syms->funcs = calloc(raw->n ? raw->n : 1, sizeof(*syms->funcs));
	if (!syms->funcs)
		return -ENOMEM;
	for (i = 0; i < raw->n; i = j) {
		struct func_start *f = &syms->funcs[n];

		f->addr = r[i].addr;
		for (j = i; j < raw->n && r[j].addr == r[i].addr; j++) {
			f->sources |= r[j].sources;
			f->mid_frame |= r[j].mid_frame;
			if (!f->size)
				f->size = r[j].size;
		}
		/* r[i] is the preferred alias (cmp_raw: best binding, then name). */
		if (r[i].name)
			f->name = plain_name(r[i].name);
		else if (asprintf(&f->name, "fun_%llx", (unsigned long long)f->addr) < 0)
			f->name = NULL;
		if (!f->name)
			return -ENOMEM;
		n++;
	}
	syms->nfuncs = n;
	for (i = 0; i < n; i++) {
		struct func_start *f = &syms->funcs[i];
		size_t plen;

		if (!cold_fragment_name(f->name, &plen))
			continue;
		f->fragment = true;
		for (j = 0; j < n; j++)
			if (strlen(syms->funcs[j].name) == plen &&
			    strncmp(syms->funcs[j].name, f->name, plen) == 0) {
				f->parent = syms->funcs[j].addr;
				break;
			}
	}
	return 0;
}

/* For a file without .symtab: the .symtab of its separate debug file (debuginfo.h), when one
 * matches; syms->debug_file names it. No debug file is not an error; a corrupt one is skipped
 * (its symbols are an addition, the file's own .dynsym and FDEs remain). */
static int load_debug_symtab(struct symbols *syms, const struct elf_image *img,
			     struct debuginfo *dbg, struct vec *raw, struct vec *objs)
{
	Elf_Scn *scn = NULL;
	size_t nraw = raw->n, nobjs = objs->n;
	int err = debuginfo__open(dbg, img);

	if (err)
		return err == -ENOENT ? 0 : err;
	while ((scn = elf_nextscn(dbg->elf, scn)) != NULL) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		err = read_symtab(img, dbg->elf, scn, &sh, FUNC_SRC_SYMTAB, raw, objs);
		if (err == -ENOMEM)
			return err;
		if (err) {
			raw->n = nraw;
			objs->n = nobjs;
			return 0;
		}
		syms->debug_file = strdup(dbg->path);
		return syms->debug_file ? 0 : -ENOMEM;
	}
	return 0;
}

int symbols__load(struct symbols *syms, const struct elf_image *img)
{
	struct vec raw = { .elt = sizeof(struct raw_func) };
	struct vec got = { .elt = sizeof(struct ext_ref) };
	struct vec plt = { .elt = sizeof(struct ext_ref) };
	struct vec lsdas = { .elt = sizeof(struct fde_lsda) };
	struct vec objs = { .elt = sizeof(struct data_object) };
	struct debuginfo dbg = { .fd = -1 };
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
	GElf_Shdr symtab_sh, dynsym_sh;
	int err = 0;

	memset(syms, 0, sizeof(*syms));
	while ((scn = elf_nextscn(img->elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh)) {
			err = cfg_error(EINVAL, "'%s': corrupt section header", img->path);
			goto out;
		}
		if (sh.sh_type == SHT_SYMTAB && !symtab) {
			symtab = scn;
			symtab_sh = sh;
		} else if (sh.sh_type == SHT_DYNSYM && !dynsym) {
			dynsym = scn;
			dynsym_sh = sh;
		} else if (sh.sh_type == SHT_RELA && (sh.sh_flags & SHF_ALLOC)) {
			err = read_relocs(img, scn, &sh, &got, &raw);
		} else if (sh.sh_type == SHT_PROGBITS || sh.sh_type == SHT_X86_64_UNWIND) {
			size_t shstrndx;

			if (elf_getshdrstrndx(img->elf, &shstrndx) == 0 &&
			    (name = elf_strptr(img->elf, shstrndx, sh.sh_name)) &&
			    strcmp(name, ".eh_frame") == 0 && sh.sh_size)
				err = read_eh_frame(img, scn, &sh, &raw, &syms->nfde, &lsdas);
		}
		if (err)
			goto out;
	}
	syms->stripped = symtab == NULL;
	if (symtab)
		err = read_symtab(img, img->elf, symtab, &symtab_sh, FUNC_SRC_SYMTAB, &raw, &objs);
	else
		err = load_debug_symtab(syms, img, &dbg, &raw, &objs);
	if (!err && dynsym)
		err = read_symtab(img, img->elf, dynsym, &dynsym_sh, FUNC_SRC_DYNSYM, &raw, NULL);
	if (!err && in_code(img, img->entry)) {
		struct raw_func *r = vec_push(&raw);

		if (!r)
			err = -ENOMEM;
		else
			*r = (struct raw_func){ .addr = img->entry, .sources = FUNC_SRC_ENTRY,
						.rank = 4 };
	}
	if (!err)
		err = read_init_arrays(img, &raw);
	if (!err)
		err = finish_funcs(syms, &raw);
	if (err)
		goto out;
	if (got.n)
		qsort(got.v, got.n, sizeof(struct ext_ref), cmp_ext);
	syms->got = got.v;
	syms->ngot = got.n;
	got.v = NULL;
	err = name_plt_stubs(syms, img, &plt);
	if (plt.n)
		qsort(plt.v, plt.n, sizeof(struct ext_ref), cmp_ext);
	syms->plt = plt.v;
	syms->nplt = plt.n;
	plt.v = NULL;
	syms->lsdas = lsdas.v;
	syms->nlsdas = lsdas.n;
	lsdas.v = NULL;
	if (objs.n)
		qsort(objs.v, objs.n, sizeof(struct data_object), cmp_object);
	syms->objects = objs.v;
	syms->nobjects = objs.n;
	objs.v = NULL;
out:
	debuginfo__close(&dbg); /* after finish_funcs: raw names point into its strings */
	free(raw.v);
	free(lsdas.v);
	free(objs.v);
	if (got.v) {
		for (size_t i = 0; i < got.n; i++)
			free(((struct ext_ref *)got.v)[i].name);
		free(got.v);
	}
	if (plt.v) {
		for (size_t i = 0; i < plt.n; i++)
			free(((struct ext_ref *)plt.v)[i].name);
		free(plt.v);
	}
	if (err)
		symbols__free(syms);
	return err;
}

void symbols__free(struct symbols *syms)
{
	size_t i;

	for (i = 0; i < syms->nfuncs; i++)
		free(syms->funcs[i].name);
	for (i = 0; i < syms->nplt; i++)
		free(syms->plt[i].name);
	for (i = 0; i < syms->ngot; i++)
		free(syms->got[i].name);
	free(syms->funcs);
	free(syms->plt);
	free(syms->got);
	free(syms->lsdas);
	free(syms->objects);
	free(syms->debug_file);
	memset(syms, 0, sizeof(*syms));
}

static size_t func_lower_bound(const struct symbols *syms, uint64_t addr)
{
	size_t lo = 0, hi = syms->nfuncs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (syms->funcs[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct func_start *symbols__func_at(const struct symbols *syms, uint64_t addr)
{
	size_t i = func_lower_bound(syms, addr);

	return i < syms->nfuncs && syms->funcs[i].addr == addr ? &syms->funcs[i] : NULL;
}

struct func_start *symbols__add(struct symbols *syms, uint64_t addr, unsigned source)
{
	size_t i = func_lower_bound(syms, addr);
	struct func_start *nf;

	if (i < syms->nfuncs && syms->funcs[i].addr == addr) {
		syms->funcs[i].sources |= source;
		return &syms->funcs[i];
	}
	nf = realloc(syms->funcs, (syms->nfuncs + 1) * sizeof(*nf));
	if (!nf)
		return NULL;
	syms->funcs = nf;
	memmove(&nf[i + 1], &nf[i], (syms->nfuncs - i) * sizeof(*nf));
	syms->nfuncs++;
	memset(&nf[i], 0, sizeof(nf[i]));
	nf[i].addr = addr;
	nf[i].sources = source;
	if (asprintf(&nf[i].name, "fun_%llx", (unsigned long long)addr) < 0) {
		nf[i].name = NULL;
		return NULL;
	}
	return &nf[i];
}

static const char *ext_lookup(const struct ext_ref *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].addr < addr)
			lo = mid + 1;
		else if (v[mid].addr > addr)
			hi = mid;
		else
			return v[mid].name;
	}
	return NULL;
}

const char *symbols__plt_name(const struct symbols *syms, uint64_t addr)
{
	return ext_lookup(syms->plt, syms->nplt, addr);
}

const char *symbols__got_name(const struct symbols *syms, uint64_t addr)
{
	return ext_lookup(syms->got, syms->ngot, addr);
}
