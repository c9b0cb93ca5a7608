/*
 * Source lines of a program's function entries and block starts, read once: see
 * block_lines.h.
 */
#include "block_lines.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

int block_lines__build(struct block_lines *bl, const struct cfg_program *prog, const char *path)
{
	int err;

	memset(bl, 0, sizeof(*bl));
	bl->img.fd = -1;
	err = elf_image__open(&bl->img, path);
	if (!err)
		err = srcline__open(&bl->sl, &bl->img);
	if (!err) {
		bl->funcs = calloc(prog->nfuncs + 1, sizeof(*bl->funcs));
		if (!bl->funcs)
			err = cfg_error(ENOMEM, "out of memory reading lines of '%s'", path);
	}
	bl->nfuncs = err ? 0 : prog->nfuncs;
	for (size_t i = 0; !err && i < prog->nfuncs; i++) {
		const struct cfg_func *f = &prog->funcs[i];
		struct block_line *row = calloc(f->nblocks + 1, sizeof(*row));

		if (!row) {
			err = cfg_error(ENOMEM, "out of memory reading lines of '%s'", path);
			break;
		}
		bl->funcs[i] = row;
		for (uint32_t k = 0; k <= f->nblocks; k++) {
			uint64_t addr = k ? f->blocks[k - 1].start : f->entry;

			if (srcline__lookup(bl->sl, addr, &row[k].file, &row[k].line) ||
			    !row[k].file || row[k].line <= 0)
				row[k] = (struct block_line){ 0 };
		}
	}
	if (err)
		block_lines__free(bl);
	return err;
}

const struct block_line *block_lines__at(const struct block_lines *bl, size_t i, long k)
{
	const struct block_line *r;

	if (!bl || i >= bl->nfuncs || !bl->funcs[i])
		return NULL;
	r = &bl->funcs[i][k + 1];
	return r->file ? r : NULL;
}

void block_lines__free(struct block_lines *bl)
{
	for (size_t i = 0; bl->funcs && i < bl->nfuncs; i++)
		free(bl->funcs[i]);
	free(bl->funcs);
	srcline__close(bl->sl);
	elf_image__close(&bl->img);
	memset(bl, 0, sizeof(*bl));
	bl->img.fd = -1;
}
