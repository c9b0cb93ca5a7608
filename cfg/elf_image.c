/*
 * Opening and validating x86-64 ELF images (see elf_image.h). Every header field that later
 * code relies on is bounds-checked here once, so the decoder and the symbol reader can trust
 * section and segment ranges: a corrupt or hostile file fails with one message, never a crash.
 */
#include "elf_image.h"
#include "error.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static bool range_ok(uint64_t off, uint64_t size, uint64_t total)
{
	return off <= total && size <= total - off;
}

static int cmp_sec(const void *a, const void *b)
{
	const struct elf_section *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int load_segments(struct elf_image *img)
{
	size_t n, i;

	if (elf_getphdrnum(img->elf, &n) != 0)
		return cfg_error(EINVAL, "'%s': corrupt program headers: %s", img->path,
				 elf_errmsg(-1));
	img->segs = calloc(n ? n : 1, sizeof(*img->segs));
	if (!img->segs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(img->elf, (int)i, &ph))
			return cfg_error(EINVAL, "'%s': corrupt program header %zu: %s",
					 img->path, i, elf_errmsg(-1));
		if (ph.p_type != PT_LOAD)
			continue;
		if (!range_ok(ph.p_offset, ph.p_filesz, img->map_size) ||
		    ph.p_filesz > ph.p_memsz || ph.p_vaddr + ph.p_memsz < ph.p_vaddr)
			return cfg_error(EINVAL, "'%s': truncated or corrupt PT_LOAD segment %zu",
					 img->path, i);
		img->segs[img->nsegs++] = (struct elf_segment){
			.vaddr = ph.p_vaddr, .memsz = ph.p_memsz,
			.offset = ph.p_offset, .filesz = ph.p_filesz, .flags = ph.p_flags,
		};
	}
	if (img->nsegs == 0)
		return cfg_error(EINVAL, "'%s': no loadable segments", img->path);
	return 0;
}

static int load_sections(struct elf_image *img)
{
	size_t n, shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrnum(img->elf, &n) != 0)
		return cfg_error(EINVAL, "'%s': corrupt section headers: %s", img->path,
				 elf_errmsg(-1));
	if (n == 0)
		return cfg_error(EINVAL, "'%s': no section headers", img->path);
	if (elf_getshdrstrndx(img->elf, &shstrndx) != 0 || shstrndx >= n)
		return cfg_error(EINVAL, "'%s': corrupt section header string table index",
				 img->path);
	img->secs = calloc(n, sizeof(*img->secs));
	if (!img->secs)
		return -ENOMEM;
	while ((scn = elf_nextscn(img->elf, scn)) != NULL) {
		GElf_Shdr sh;
		struct elf_section *s;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			return cfg_error(EINVAL, "'%s': corrupt section header: %s", img->path,
					 elf_errmsg(-1));
		if (!(sh.sh_flags & SHF_ALLOC) || sh.sh_type == SHT_NOBITS || sh.sh_size == 0)
			continue;
		if (!range_ok(sh.sh_offset, sh.sh_size, img->map_size))
			return cfg_error(EINVAL, "'%s': section %zu extends past the end of the file",
					 img->path, elf_ndxscn(scn));
		if (sh.sh_addr + sh.sh_size < sh.sh_addr)
			return cfg_error(EINVAL, "'%s': section %zu wraps the address space",
					 img->path, elf_ndxscn(scn));
		name = elf_strptr(img->elf, shstrndx, sh.sh_name);
		s = &img->secs[img->nsecs++];
		snprintf(s->name, sizeof(s->name), "%s", name ? name : "?");
		s->addr = sh.sh_addr;
		s->size = sh.sh_size;
		s->offset = sh.sh_offset;
		s->data = (const uint8_t *)img->map + sh.sh_offset;
		s->exec = (sh.sh_flags & SHF_EXECINSTR) != 0;
		s->entsize = sh.sh_entsize;
		s->index = elf_ndxscn(scn);
	}
	if (img->nsecs)
		qsort(img->secs, img->nsecs, sizeof(*img->secs), cmp_sec);
	return 0;
}

static int validate_header(struct elf_image *img)
{
	const unsigned char *id = img->map;
	GElf_Ehdr eh;

	if (img->map_size < EI_NIDENT || memcmp(id, ELFMAG, SELFMAG) != 0)
		return cfg_error(EINVAL, "'%s': not an ELF file", img->path);
	if (id[EI_CLASS] != ELFCLASS64)
		return cfg_error(EINVAL, "'%s': not a 64-bit ELF file (only x86-64 is supported)",
				 img->path);
	if (id[EI_DATA] != ELFDATA2LSB)
		return cfg_error(EINVAL, "'%s': not a little-endian ELF file", img->path);
	if (img->map_size < sizeof(Elf64_Ehdr))
		return cfg_error(EINVAL, "'%s': truncated ELF header", img->path);
	if (!gelf_getehdr(img->elf, &eh))
		return cfg_error(EINVAL, "'%s': corrupt ELF header: %s", img->path, elf_errmsg(-1));
	if (eh.e_machine != EM_X86_64)
		return cfg_error(EINVAL, "'%s': ELF machine %u is not x86-64", img->path,
				 eh.e_machine);
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
		return cfg_error(EINVAL, "'%s': not an executable or shared object (ELF type %u)",
				 img->path, eh.e_type);
	if (!range_ok(eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr), img->map_size))
		return cfg_error(EINVAL, "'%s': truncated ELF file (program headers)", img->path);
	if (eh.e_shoff && !range_ok(eh.e_shoff, (uint64_t)(eh.e_shnum ? eh.e_shnum : 1) *
					       sizeof(Elf64_Shdr), img->map_size))
		return cfg_error(EINVAL, "'%s': truncated ELF file or corrupt section headers",
				 img->path);
	img->pie = eh.e_type == ET_DYN;
	img->entry = eh.e_entry;
	return 0;
}

static void read_build_id(struct elf_image *img)
{
	const void *p;
	ssize_t n = dwelf_elf_gnu_build_id(img->elf, &p);
	ssize_t i;

	img->build_id[0] = '\0';
	if (n <= 0 || n > 64)
		return;
	for (i = 0; i < n; i++)
		snprintf(img->build_id + 2 * i, 3, "%02x", ((const uint8_t *)p)[i]);
}

static int open_common(struct elf_image *img)
{
	int err;

	elf_version(EV_CURRENT);
	img->elf = elf_memory(img->map, img->map_size);
	if (!img->elf)
		return cfg_error(EINVAL, "'%s': cannot read ELF: %s", img->path, elf_errmsg(-1));
	if (elf_kind(img->elf) != ELF_K_ELF)
		return cfg_error(EINVAL, "'%s': not an ELF file", img->path);
	err = validate_header(img);
	if (!err)
		err = load_segments(img);
	if (!err)
		err = load_sections(img);
	if (!err)
		read_build_id(img);
	return err;
}

int elf_image__open(struct elf_image *img, const char *path)
{
	struct stat st;
	int err;

	memset(img, 0, sizeof(*img));
	img->fd = -1;
	img->path = strdup(path);
	if (!img->path)
		return -ENOMEM;
	img->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (img->fd < 0) {
		err = errno;
		cfg_error(err, "'%s': %s", path, strerror(err));
		elf_image__close(img);
		return -err;
	}
	if (fstat(img->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		err = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		cfg_error(err, "'%s': not a regular file", path);
		elf_image__close(img);
		return -err;
	}
	if (st.st_size == 0) {
		cfg_error(EINVAL, "'%s': empty file, not an ELF file", path);
		elf_image__close(img);
		return -EINVAL;
	}
	img->map_size = (size_t)st.st_size;
	/* Private and writable: libelf may touch the image; nothing reaches the file. */
	img->map = mmap(NULL, img->map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, img->fd, 0);
	if (img->map == MAP_FAILED) {
		img->map = NULL;
		err = errno;
		cfg_error(err, "'%s': cannot map: %s", path, strerror(err));
		elf_image__close(img);
		return -err;
	}
	err = open_common(img);
	if (err)
		elf_image__close(img);
	return err;
}

int elf_image__open_memory(struct elf_image *img, const void *buf, size_t size,
			   const char *name)
{
	int err;

	memset(img, 0, sizeof(*img));
	img->fd = -1;
	img->path = strdup(name ? name : "<memory>");
	if (!img->path)
		return -ENOMEM;
	if (size == 0) {
		cfg_error(EINVAL, "'%s': empty file, not an ELF file", img->path);
		elf_image__close(img);
		return -EINVAL;
	}
	/* A private copy: libelf may touch the image, and the caller's buffer stays as it is. */
	img->map = malloc(size);
	if (!img->map) {
		elf_image__close(img);
		return -ENOMEM;
	}
	memcpy(img->map, buf, size);
	img->map_size = size;
	err = open_common(img);
	if (err)
		elf_image__close(img);
	return err;
}

void elf_image__close(struct elf_image *img)
{
	if (img->elf)
		elf_end(img->elf);
	if (img->fd >= 0) {
		if (img->map)
			munmap(img->map, img->map_size);
		close(img->fd);
	} else {
		free(img->map);
	}
	free(img->segs);
	free(img->secs);
	free(img->path);
	memset(img, 0, sizeof(*img));
	img->fd = -1;
}

int elf_image__vaddr_to_offset(const struct elf_image *img, uint64_t vaddr, uint64_t *off)
{
	size_t i;

	for (i = 0; i < img->nsegs; i++) {
		const struct elf_segment *s = &img->segs[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz) {
			*off = s->offset + (vaddr - s->vaddr);
			return 0;
		}
	}
	return -ENOENT;
}

int elf_image__offset_to_vaddr(const struct elf_image *img, uint64_t off, uint64_t *vaddr)
{
	size_t i;

	for (i = 0; i < img->nsegs; i++) {
		const struct elf_segment *s = &img->segs[i];

		if (off >= s->offset && off - s->offset < s->filesz) {
			*vaddr = s->vaddr + (off - s->offset);
			return 0;
		}
	}
	return -ENOENT;
}

const struct elf_section *elf_image__section_at(const struct elf_image *img, uint64_t vaddr)
{
	size_t lo = 0, hi = img->nsecs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct elf_section *s = &img->secs[mid];

		if (vaddr < s->addr)
			hi = mid;
		else if (vaddr - s->addr >= s->size)
			lo = mid + 1;
		else
			return s;
	}
	return NULL;
}

const struct elf_section *elf_image__section_named(const struct elf_image *img,
						   const char *name)
{
	size_t i;

	for (i = 0; i < img->nsecs; i++)
		if (strcmp(img->secs[i].name, name) == 0)
			return &img->secs[i];
	return NULL;
}

const uint8_t *elf_image__code(const struct elf_image *img, uint64_t vaddr, size_t *avail)
{
	const struct elf_section *s = elf_image__section_at(img, vaddr);

	if (!s || !s->exec || !s->data)
		return NULL;
	*avail = (size_t)(s->size - (vaddr - s->addr));
	return s->data + (vaddr - s->addr);
}

int elf_image__read(const struct elf_image *img, uint64_t vaddr, unsigned size, uint64_t *val)
{
	const struct elf_section *s = elf_image__section_at(img, vaddr);
	uint64_t v = 0;
	unsigned i;

	if (!s || !s->data || size > 8 || s->size - (vaddr - s->addr) < size)
		return -ENOENT;
	for (i = 0; i < size; i++)
		v |= (uint64_t)s->data[vaddr - s->addr + i] << (8 * i);
	*val = v;
	return 0;
}
