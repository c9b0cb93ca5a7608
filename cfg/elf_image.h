/*
 * An x86-64 ELF file opened for analysis: its loadable segments (vaddr <-> file offset, which
 * uprobes need), its executable sections (the bytes that are decoded), build-id and entry.
 * Only x86-64 ELF64 files are accepted; PIE and non-PIE executables and shared objects alike.
 */
#ifndef EDGEPROF_CFG_ELF_IMAGE_H
#define EDGEPROF_CFG_ELF_IMAGE_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_segment {
	uint64_t vaddr, memsz;
	uint64_t offset, filesz;
	uint32_t flags; /* PF_R | PF_W | PF_X */
};

/* An allocated section with file bytes (SHT_PROGBITS and the like). */
struct elf_section {
	char name[32];
	uint64_t addr, size, offset;
	const uint8_t *data; /* size bytes, or NULL for NOBITS */
	bool exec;           /* SHF_EXECINSTR */
	uint64_t entsize;    /* sh_entsize */
	size_t index;        /* section header index */
};

struct elf_image {
	char *path;
	int fd;          /* -1 for memory images */
	Elf *elf;
	void *map;       /* file mapping (or caller's buffer for memory images) */
	size_t map_size;
	bool pie;        /* ET_DYN */
	uint64_t entry;
	char build_id[2 * 64 + 1]; /* lowercase hex, "" when the file has none */
	struct elf_segment *segs;
	size_t nsegs;
	struct elf_section *secs; /* allocated sections with bytes, sorted by addr */
	size_t nsecs;
};

/* Opens PATH and validates it as an x86-64 ELF64 image. Returns 0, or a negative errno with
 * the reason in cfg_strerror() ("not an ELF file", "32-bit ELF", "truncated ...", ...). */
int elf_image__open(struct elf_image *img, const char *path);

/* As elf_image__open for an image in memory: BUF is copied, the caller keeps it. NAME is
 * used in messages. Used by the fuzz targets and tests. */
int elf_image__open_memory(struct elf_image *img, const void *buf, size_t size,
			   const char *name);

/* Releases everything elf_image__open acquired. Safe on a zeroed or already-closed image. */
void elf_image__close(struct elf_image *img);

/* Translates an ELF virtual address to its file offset through the PT_LOAD headers.
 * Returns 0 and sets *OFF, or -ENOENT when VADDR has no file bytes. */
int elf_image__vaddr_to_offset(const struct elf_image *img, uint64_t vaddr, uint64_t *off);

/* The reverse: file offset to ELF virtual address. Returns 0 or -ENOENT. */
int elf_image__offset_to_vaddr(const struct elf_image *img, uint64_t off, uint64_t *vaddr);

/* The allocated section holding VADDR, or NULL. */
const struct elf_section *elf_image__section_at(const struct elf_image *img, uint64_t vaddr);

/* The section named NAME, or NULL. */
const struct elf_section *elf_image__section_named(const struct elf_image *img,
						   const char *name);

/* Pointer to the executable bytes at VADDR and how many follow (*AVAIL) inside the same
 * executable section; NULL when VADDR is not in an executable section with file bytes. */
const uint8_t *elf_image__code(const struct elf_image *img, uint64_t vaddr, size_t *avail);

/* Reads a little-endian value of SIZE (1, 2, 4, 8) bytes at VADDR from any allocated section
 * with file bytes (e.g. a jump table in .rodata). Returns 0 or -ENOENT. */
int elf_image__read(const struct elf_image *img, uint64_t vaddr, unsigned size, uint64_t *val);

#endif
