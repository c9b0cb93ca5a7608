/*
 * The in-process counting backend's own calls, besides its ops (count.h: patch_count_ops).
 */
#ifndef EDGEPROF_USER_COUNT_PATCH_BACKEND_H
#define EDGEPROF_USER_COUNT_PATCH_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "cfg/cfg.h"

struct patch_backend;
struct count_object;
struct placement;

/* What the backend installed. */
struct patch_stats {
	size_t sites;       /* sites counted in process */
	size_t flag_saving; /* of which save and restore the flags */
	size_t springboards; /* of which are reached through a jmp rel8 and a springboard */
	size_t indirect;     /* of which jump-table dispatches (indexed increments) */
	size_t tramp_bytes;
	size_t with_copies;  /* trampolines that run copies of the code after their window */
	size_t with_shortcuts; /* trampolines that jump straight to another's */
};

/* A backend for one process: ATTACH_MODE for a running process (`record -p`: its patches come
 * out at uncount_pid), else a program started stopped (`run`: patched at its exec, left in
 * until it ends). Returns 0 with *OUT, or -ENOMEM (reported). */
int patch_backend__new(struct patch_backend **out, bool attach_mode);

/* Analyses object INDEX's program PROG and marks in it where counters can be patched (the
 * patch_count / patch_branch classes of its instructions), before its plan is made. Returns
 * 0 or a negative errno (reported). */
int patch_backend__classify(struct patch_backend *b, unsigned index, struct cfg_program *prog);

struct snap_out;
struct snap_in;

/* Saves what the analysis of object INDEX made in B (patch_backend__classify, and
 * patch_backend__settle's windows and reservations), before any process is counted. Returns
 * 0, -EINVAL (nothing analysed, or a process already patched) or -ENOMEM. */
int patch_backend__save(const struct patch_backend *b, unsigned index, struct snap_out *o);

/* Reads into B's object INDEX (not yet classified) what patch_backend__save saved for PROG
 * (loaded the same way): as if classified and settled. Returns 0 or -EINVAL / -ENOMEM. */
int patch_backend__load(struct patch_backend *b, unsigned index, struct cfg_program *prog,
			struct snap_in *in);

/* Forgets the analysis of B's object INDEX (classified or loaded, not yet attached), as
 * before patch_backend__classify. */
void patch_backend__unload(struct patch_backend *b, unsigned index);

/* Tells FN(CTX, object index, function index, hits) the table jumps counted in process that
 * went to no edge of the CFG (an index out of its table, a target that is no successor), at
 * each read of the counters. */
void patch_backend__on_unmatched(struct patch_backend *b,
				 void (*fn)(void *ctx, unsigned index, uint32_t func,
					    uint64_t hits),
				 void *ctx);

/* What B installed so far. */
/* Makes O's plan final as far as the binary alone can tell, before any process exists: the
 * first call reserves springboard slots (the plan's short windows first, see
 * patch_sites__reserve), later ones check every site as the backend's check would (windows,
 * springboards, overlaps, other sites inside a window) without a process. Sites that cannot
 * be patched lose their class; their count is *NREFUSED and their functions are set in
 * REDO[nfuncs]: plan those again and call again until *NREFUSED is 0. Returns 0 or -ENOMEM. */
int patch_backend__settle(struct patch_backend *b, struct count_object *o, bool *redo,
			  size_t *nrefused);

/* Call before the functions REDO[fi] of object INDEX are planned again (after
 * patch_backend__settle, or after a refusal at the attach): the short windows they could pick
 * get springboard slots reserved, or lose their class. Returns 0 or -ENOMEM. */
int patch_backend__before_replan(struct patch_backend *b, unsigned index, const bool *redo);

/* Whether the byte at ELF vaddr VADDR of object INDEX lies in a window (up to its relocated
 * end) or springboard that the last check gave to a site of PL (patch_backend__settle): a
 * breakpoint or uprobe there would force a new plan. */
bool patch_backend__written(const struct patch_backend *b, unsigned index,
			    const struct placement *pl, uint64_t vaddr);

const struct patch_stats *patch_backend__stats(const struct patch_backend *b);

#endif
