/*
 * Files edgeprof keeps across runs for a binary (the decode and analysis caches): where they
 * go ($XDG_CACHE_HOME/edgeprof/KIND/, named by a 128-bit hash), edgeprof's build ID that
 * stamps them, reading one mapped, writing one atomically, and keeping a directory to its
 * most recently used files. EDGEPROF_NO_DECODE_CACHE=1 turns every such file off.
 */
#ifndef EDGEPROF_USER_SESSION_CACHE_FILES_H
#define EDGEPROF_USER_SESSION_CACHE_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define CACHE_TOOL_ID_MAX 64

/* edgeprof's own build ID: which code wrote a file. */
struct cache_tool_id {
	uint8_t id[CACHE_TOOL_ID_MAX];
	uint32_t len;
};

/* Whether the caches are on (EDGEPROF_NO_DECODE_CACHE unset, empty or 0). */
bool cache_files__enabled(void);

/* edgeprof's build ID into *T. 0, or -1 when it has none (no cache then). */
int cache_files__tool_id(struct cache_tool_id *t);

/* The file of KIND ("decode", "analysis") named by the hash KEY into PATH (LEN bytes). 0, or
 * -1 without a cache directory. */
int cache_files__path(const char *kind, const uint8_t key[16], char *path, size_t len);

/* A cache file mapped read-only. */
struct cache_mapping {
	void *map;
	size_t size;
};

/* Maps the whole of PATH, populated, into *M when it is a regular file of at least MIN bytes
 * (cache files are replaced by rename, never rewritten in place). 0 or -1. */
int cache_files__map(const char *path, size_t min, struct cache_mapping *m);

void cache_files__unmap(struct cache_mapping *m);

/* Marks PATH recently used (for cache_files__write's eviction). */
void cache_files__touch(const char *path);

/* Writes the N pieces IOV to PATH atomically (a temporary file renamed over it; no fsync: a
 * file cut short by a crash fails its reader's size or hash check), creating its directory,
 * then keeps that directory's MAX_FILES most recently used files. 0 or -1 (said at -vv). */
int cache_files__write(const char *path, const struct iovec *iov, int n, size_t max_files);

#endif
