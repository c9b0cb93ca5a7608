/*
 * The decoding of a binary kept across runs (see decode_cache.h).
 */
#include "user/session/decode_cache.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "cfg/decode.h"
#include "user/session/cache_files.h"
#include "user/util/log.h"

#define CACHE_MAGIC "EPDECOD1"

/* The file: this header, then n struct dinsn, then ntaken uint64_t. */
struct cache_header {
	char magic[8];
	uint32_t dinsn_size;            /* sizeof(struct dinsn) */
	uint32_t tool_len;              /* bytes of tool_id */
	uint8_t tool_id[CACHE_TOOL_ID_MAX]; /* edgeprof's build ID */
	uint8_t file_hash[16];          /* XXH3-128 of the binary (canonical form) */
	uint64_t n, ntaken;
	uint64_t payload_hash;          /* XXH3-64 of what follows the header */
};

_Static_assert(sizeof(struct cache_header) % 8 == 0, "records follow the header aligned");

/* The cache file for IMG's bytes into PATH, its hash into HASH. 0, or -1 when there is no
 * cache (turned off, no cache directory, a memory image, no tool identity). */
static int cache_path(const struct elf_image *img, char *path, size_t len,
		      XXH128_canonical_t *hash, struct cache_tool_id *tool)
{
	if (!cache_files__enabled() || img->fd < 0 || !img->map || cache_files__tool_id(tool))
		return -1;
	XXH128_canonicalFromHash(hash, XXH3_128bits(img->map, img->map_size));
	return cache_files__path("decode", hash->digest, path, len);
}

/* cfg_options.release for a mapping: the program no longer reads it. */
static void unmap(void *ctx)
{
	cache_files__unmap(ctx);
	free(ctx);
}

/* Whether BUF (SIZE bytes) is a whole cache file for HASH written by TOOL: the header's
 * fields, the size they imply and the payload's hash. Says why not at -vv. */
static bool valid(const char *path, const void *buf, size_t size, const XXH128_canonical_t *hash,
		  const struct cache_tool_id *tool)
{
	const struct cache_header *h = buf;
	const char *why = NULL;

	if (memcmp(h->magic, CACHE_MAGIC, 8) || h->dinsn_size != sizeof(struct dinsn))
		why = "another format";
	else if (h->tool_len != tool->len || memcmp(h->tool_id, tool->id, tool->len))
		why = "written by another edgeprof build";
	else if (memcmp(h->file_hash, hash->digest, 16))
		why = "for other bytes";
	else if (h->n > size / sizeof(struct dinsn) || h->ntaken > size / 8 ||
		 sizeof(*h) + h->n * sizeof(struct dinsn) + h->ntaken * 8 != size)
		why = "truncated";
	else if (XXH3_64bits((const char *)buf + sizeof(*h), size - sizeof(*h)) != h->payload_hash)
		why = "damaged";
	if (why)
		pr_debug("'%s': not used: %s", path, why);
	return !why;
}

int decode_cache__build(struct cfg_program *prog, struct elf_image *img, bool save,
			void (*progress)(void *ctx, size_t built, size_t known), void *ctx)
{
	char path[PATH_MAX];
	XXH128_canonical_t hash;
	struct cache_tool_id tool;
	struct cfg_options opts = { .progress = progress, .progress_ctx = ctx };
	struct cache_mapping *m = malloc(sizeof(*m));
	int err;

	if (!m || cache_path(img, path, sizeof(path), &hash, &tool) ||
	    cache_files__map(path, sizeof(struct cache_header), m)) {
		free(m);
		err = cfg_program__build(prog, img, &opts);
		if (!err && save)
			decode_cache__save(img, prog);
		return err;
	}
	if (valid(path, m->map, m->size, &hash, &tool) &&
	    ((const struct cache_header *)m->map)->n) {
		const struct cache_header *h = m->map;

		opts.insns = (const struct dinsn *)(h + 1);
		opts.ninsns = h->n;
		opts.taken = (const uint64_t *)(opts.insns + h->n);
		opts.ntaken = h->ntaken;
		/* The program reads the records in place and unmaps them when done. */
		opts.release = unmap;
		opts.release_ctx = m;
	} else {
		unmap(m);
	}
	err = cfg_program__build(prog, img, &opts);
	if (err == -EINVAL && opts.ninsns) {
		pr_debug("'%s': not used: its records are not this binary's", path);
		unlink(path);
		opts.ninsns = 0;
		opts.release = NULL;
		err = cfg_program__build(prog, img, &opts);
	}
	if (!err && opts.ninsns) {
		pr_debug("'%s': %zu decoded instructions from '%s'", img->path, opts.ninsns, path);
		cache_files__touch(path);
	}
	if (!err && save)
		decode_cache__save(img, prog);
	return err;
}

void decode_cache__save(const struct elf_image *img, const struct cfg_program *prog)
{
	char path[PATH_MAX];
	XXH128_canonical_t hash;
	struct cache_tool_id tool;
	struct cache_header h = { 0 };
	const struct dinsn *insns;
	const uint64_t *taken;
	size_t n, ntaken;
	XXH3_state_t *st;

	if (!prog->dec || !prog->dec->ndecoded ||
	    cache_path(img, path, sizeof(path), &hash, &tool))
		return;
	decoder__records(prog->dec, &insns, &n, &taken, &ntaken);
	memcpy(h.magic, CACHE_MAGIC, 8);
	h.dinsn_size = sizeof(struct dinsn);
	h.tool_len = tool.len;
	memcpy(h.tool_id, tool.id, tool.len);
	memcpy(h.file_hash, hash.digest, 16);
	h.n = n;
	h.ntaken = ntaken;
	st = XXH3_createState();
	if (!st || XXH3_64bits_reset(st) == XXH_ERROR ||
	    XXH3_64bits_update(st, insns, n * sizeof(*insns)) == XXH_ERROR ||
	    XXH3_64bits_update(st, taken, ntaken * sizeof(*taken)) == XXH_ERROR) {
		XXH3_freeState(st);
		return;
	}
	h.payload_hash = XXH3_64bits_digest(st);
	XXH3_freeState(st);
	if (cache_files__write(path,
			       (const struct iovec[]){ { &h, sizeof(h) },
						       { (void *)insns, n * sizeof(*insns) },
						       { (void *)taken, ntaken * sizeof(*taken) } },
			       3, DECODE_CACHE_MAX_FILES))
		return;
	pr_debug("'%s': %zu decoded instructions kept in '%s'", img->path, n, path);
}
