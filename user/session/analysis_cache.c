/*
 * The analysis of a binary kept across runs (see analysis_cache.h): a header naming the
 * edgeprof build, the binary's bytes and the options, then the snapshot stream of the
 * object's CFGs, longjmp pseudo-edges, plan and patch analysis (cfg/snapshot.h).
 */
#include "user/session/analysis_cache.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "cfg/cfg_snapshot.h"
#include "cfg/snapshot.h"
#include "user/session/cache_files.h"
#include "user/util/log.h"

#define ANALYSIS_MAGIC "EPANLYS1"

/* What the analysis is a function of, besides edgeprof's code. */
struct analysis_key {
	uint8_t file_hash[16];	      /* XXH3-128 of the binary (canonical form) */
	double ns[PROBE_CLASS_COUNT]; /* the probe costs the plan priced sites with */
	uint32_t mode;		      /* enum placement_mode */
	uint32_t patch;		      /* 1: in-process counters where proven safe */
	uint32_t attach;	      /* 1: for a running process (`record -p`) */
	uint32_t pad;
};

struct analysis_header {
	char magic[8];
	uint32_t tool_len;
	uint8_t tool_id[CACHE_TOOL_ID_MAX]; /* edgeprof's build ID */
	uint32_t pad;
	struct analysis_key key;
	uint64_t capacity;     /* the object's counter capacity (session_object.capacity) */
	uint64_t payload_len;  /* bytes after the header */
	uint64_t payload_hash; /* their XXH3-64 */
};

_Static_assert(sizeof(struct analysis_header) % 8 == 0, "the stream follows aligned");

/* O's key and its file's path. 0, or -1 when there is no cache. */
static int key_of(struct session_object *o, bool patch, bool attach, struct analysis_key *key,
		  struct cache_tool_id *tool, char *path, size_t len)
{
	const char *off = getenv("EDGEPROF_NO_ANALYSIS_CACHE");
	XXH128_canonical_t h;

	if (!cache_files__enabled() || (off && *off && strcmp(off, "0")) || o->img.fd < 0 ||
	    !o->img.map || cache_files__tool_id(tool))
		return -1;
	/* The binary's bytes are hashed once per session (a read back asks twice). */
	if (!o->bytes_hashed) {
		XXH128_canonicalFromHash(&h, XXH3_128bits(o->img.map, o->img.map_size));
		memcpy(o->bytes_hash, h.digest, sizeof(o->bytes_hash));
		o->bytes_hashed = true;
	}
	memset(key, 0, sizeof(*key));
	memcpy(key->file_hash, o->bytes_hash, sizeof(key->file_hash));
	for (int c = 0; c < PROBE_CLASS_COUNT; c++)
		key->ns[c] = o->popt.costs.ns[c];
	key->mode = (uint32_t)o->popt.mode;
	key->patch = patch;
	key->attach = attach;
	/* The file is named by the key and the build: a session of another edgeprof build
	 * writes its own file. */
	XXH128_canonicalFromHash(
	    &h, XXH3_128bits_withSeed(key, sizeof(*key), XXH3_64bits(tool->id, tool->len)));
	return cache_files__path("analysis", h.digest, path, len);
}

/* Whether MAP (SIZE bytes) is a whole analysis for KEY written by TOOL. Says why not at -vv. */
static bool valid(const char *path, const void *map, size_t size, const struct analysis_key *key,
		  const struct cache_tool_id *tool)
{
	const struct analysis_header *h = map;
	const char *why = NULL;

	if (memcmp(h->magic, ANALYSIS_MAGIC, 8))
		why = "another format";
	else if (h->tool_len != tool->len || memcmp(h->tool_id, tool->id, tool->len))
		why = "written by another edgeprof build";
	else if (memcmp(&h->key, key, sizeof(*key)))
		why = "for other bytes or options";
	else if (h->payload_len != size - sizeof(*h))
		why = "truncated";
	else if (XXH3_64bits((const char *)map + sizeof(*h), h->payload_len) != h->payload_hash)
		why = "damaged";
	if (why)
		pr_debug("'%s': not used: %s", path, why);
	return !why;
}

bool analysis_cache__capacity(struct session_object *o, bool patch, bool attach, uint32_t *capacity)
{
	char path[PATH_MAX];
	struct analysis_key key;
	struct cache_tool_id tool;
	struct analysis_header h;
	FILE *f;
	bool ok;

	if (key_of(o, patch, attach, &key, &tool, path, sizeof(path)) || !(f = fopen(path, "re")))
		return false;
	ok = fread(&h, sizeof(h), 1, f) == 1 && !memcmp(h.magic, ANALYSIS_MAGIC, 8) &&
	     h.tool_len == tool.len && !memcmp(h.tool_id, tool.id, tool.len) &&
	     !memcmp(&h.key, &key, sizeof(key)) && h.capacity && h.capacity < UINT32_MAX;
	fclose(f);
	if (ok)
		*capacity = (uint32_t)h.capacity;
	return ok;
}

bool analysis_cache__load(struct session_object *o, struct patch_backend *pb, bool attach)
{
	char path[PATH_MAX];
	struct analysis_key key;
	struct cache_tool_id tool;
	struct cache_mapping m;
	struct snap_in in = {0};
	uint64_t capacity, nordinals;
	bool ok = false;

	if (key_of(o, pb != NULL, attach, &key, &tool, path, sizeof(path)) ||
	    cache_files__map(path, sizeof(struct analysis_header), &m))
		return false;
	if (!valid(path, m.map, m.size, &key, &tool))
		goto out;
	in = (struct snap_in){.p = (const uint8_t *)m.map + sizeof(struct analysis_header),
			      .len = m.size - sizeof(struct analysis_header)};
	capacity = snap_get_u64(&in);
	nordinals = snap_get_u64(&in);
	if (cfg_program__load(&o->prog, &o->img, &in))
		goto out;
	if (cfg_longjmp__load(&o->lj, o->prog.nfuncs, &in))
		goto free_prog;
	if (placement__load(&o->pl, &o->prog, &o->lj, &in))
		goto free_lj;
	if (!snap_check(&in, snap_get_u64(&in) == (pb != NULL) &&
				 capacity == ((const struct analysis_header *)m.map)->capacity &&
				 capacity < UINT32_MAX && nordinals < UINT32_MAX &&
				 o->pl.ncounters <= capacity) ||
	    (pb && patch_backend__load(pb, 0, &o->prog, &in)))
		goto free_pl;
	if (!snap_check(&in, in.pos == in.len)) {
		if (pb)
			patch_backend__unload(pb, 0);
		goto free_pl;
	}
	o->capacity = (uint32_t)capacity;
	o->nordinals = (uint32_t)nordinals;
	ok = true;
	cache_files__touch(path);
	pr_debug("'%s': analysis from '%s'", o->path, path);
	goto out;
free_pl:
	placement__free(&o->pl);
free_lj:
	cfg_longjmp__free(&o->lj);
free_prog:
	cfg_program__free(&o->prog);
out:
	if (!ok && in.err)
		pr_debug("'%s': not used: its records do not read back (%s)", path,
			 strerror(-in.err));
	cache_files__unmap(&m);
	return ok;
}

/* A kept analysis on its way to its file. */
struct analysis_save {
	pthread_t thread;
	char path[PATH_MAX];
	char object[PATH_MAX];
	struct analysis_header h;
	struct snap_out out;
};

static void *save_run(void *arg)
{
	struct analysis_save *sv = arg;

	sv->h.payload_hash = XXH3_64bits(sv->out.buf, sv->out.len);
	if (!cache_files__write(
		sv->path,
		(const struct iovec[]){{&sv->h, sizeof(sv->h)}, {sv->out.buf, sv->out.len}}, 2,
		ANALYSIS_CACHE_MAX_FILES))
		pr_debug("'%s': analysis (%zu bytes) kept in '%s'", sv->object, sv->out.len,
			 sv->path);
	return NULL;
}

struct analysis_save *analysis_cache__save(struct session_object *o, const struct patch_backend *pb,
					   bool attach)
{
	struct analysis_save *sv = calloc(1, sizeof(*sv));
	struct cache_tool_id tool;
	int err;

	if (!sv)
		return NULL;
	if (key_of(o, pb != NULL, attach, &sv->h.key, &tool, sv->path, sizeof(sv->path))) {
		free(sv);
		return NULL;
	}
	/* About four bytes of analysis per byte of binary: room for it at once. */
	sv->out.cap = 4 * o->img.map_size + (1 << 20);
	if (!(sv->out.buf = malloc(sv->out.cap)))
		sv->out.cap = 0;
	snap_put_u64(&sv->out, o->capacity);
	snap_put_u64(&sv->out, o->nordinals);
	err = cfg_program__save(&o->prog, &sv->out);
	if (!err) {
		cfg_longjmp__save(&o->lj, o->prog.nfuncs, &sv->out);
		err = placement__save(&o->pl, &o->prog, &o->lj, &sv->out);
	}
	if (!err) {
		snap_put_u64(&sv->out, pb != NULL);
		if (pb)
			err = patch_backend__save(pb, 0, &sv->out);
	}
	if (!err)
		err = sv->out.err;
	if (err) {
		pr_debug("'%s': analysis not kept: %s", o->path, strerror(-err));
		free(sv->out.buf);
		free(sv);
		return NULL;
	}
	memcpy(sv->h.magic, ANALYSIS_MAGIC, 8);
	sv->h.tool_len = tool.len;
	memcpy(sv->h.tool_id, tool.id, tool.len);
	sv->h.capacity = o->capacity;
	sv->h.payload_len = sv->out.len;
	snprintf(sv->object, sizeof(sv->object), "%s", o->path);
	if (pthread_create(&sv->thread, NULL, save_run, sv)) {
		save_run(sv); /* no thread: written now */
		free(sv->out.buf);
		free(sv);
		return NULL;
	}
	return sv;
}

void analysis_cache__save_end(struct analysis_save *save)
{
	if (!save)
		return;
	pthread_join(save->thread, NULL);
	free(save->out.buf);
	free(save);
}
