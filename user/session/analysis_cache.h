/*
 * The analysis of a binary kept across runs. What the session makes of a binary before any
 * process exists (its CFGs, longjmp pseudo-edges, where counters can be patched, the plan of
 * probe sites settled for in-process counters) is a function of the file's bytes, of
 * edgeprof's own code and of a few options (placement mode, probe costs, counting mechanism,
 * run or attach), and it is most of `edgeprof run`'s time before the program starts (0.15 of
 * 0.21 s for sqlite3). It is kept in $XDG_CACHE_HOME/edgeprof/analysis/, one file per binary
 * and options, named by a hash of them, stamped with edgeprof's build ID and checked by a
 * hash of its contents, and read back by the next session with the same bytes, options and
 * edgeprof: the same analysis, without making it. Sessions with --only, --exclude,
 * --weights or --loop-stats make theirs each time. EDGEPROF_NO_DECODE_CACHE=1 neither reads
 * nor writes it, nor the decode cache; EDGEPROF_NO_ANALYSIS_CACHE=1 only it.
 */
#ifndef EDGEPROF_USER_SESSION_ANALYSIS_CACHE_H
#define EDGEPROF_USER_SESSION_ANALYSIS_CACHE_H

#include <stdbool.h>

#include "user/count/patch_backend.h"
#include "user/session/session.h"

/* At most this many analyses are kept; saving one more drops the least recently used. */
#define ANALYSIS_CACHE_MAX_FILES 32

/* Reads the kept analysis of object O (its image open, o->popt its options) into o->prog,
 * o->lj, o->pl, o->capacity and o->nordinals, and into PB's object 0 (NULL: counted by uprobes
 * only; ATTACH: PB is for a running process) what the patch backend's analysis made. Returns
 * true when it did; false, with O and PB as they were, when there is no such analysis or it
 * cannot be used (said at -vv). */
bool analysis_cache__load(struct session_object *o, struct patch_backend *pb, bool attach);

/* The counter capacity of the kept analysis of object O (its image open, o->popt its
 * options), for PB non-NULL when PATCH, into *CAPACITY, read from the kept file's header only:
 * whether there is one (analysis_cache__load may still find it unusable). */
bool analysis_cache__capacity(struct session_object *o, bool patch, bool attach,
			      uint32_t *capacity);

struct analysis_save;

/* Keeps the analysis of object O and PB's object 0 (as analysis_cache__load reads it), made
 * with o->popt, before any process exists: copied now, written to its file on a thread of its
 * own. Returns that thread's handle for analysis_cache__save_end, or NULL when there is
 * nothing to wait for. Best effort: a failure is said at -vv only. */
struct analysis_save *analysis_cache__save(struct session_object *o,
					   const struct patch_backend *pb, bool attach);

/* Waits for the file SAVE is writing (NULL: nothing to wait for), and releases SAVE. */
void analysis_cache__save_end(struct analysis_save *save);

#endif
