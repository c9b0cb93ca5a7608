/*
 * What the code generator of the in-process counting backend hands to the patcher
 * (user/count/patcher.h), per patched site: the bytes to write over the site, the bytes they
 * replace, and the trampoline the site jumps to, with a map from every trampoline offset to the
 * original address a thread stopped there is equivalent to. Plain data, no code.
 * (A compatible copy of the generator's header: the generator's branch owns this file.)
 */
#ifndef EDGEPROF_USER_COUNT_TRAMPOLINE_H
#define EDGEPROF_USER_COUNT_TRAMPOLINE_H

#include <stdint.h>

#define PATCH_NO_COUNTER UINT32_MAX

/* A stretch of a trampoline: a pc at tramp + x with off <= x < the next stretch's off. */
struct patch_pc {
	uint32_t off;	  /* its first offset in the trampoline code */
	uint64_t orig;	  /* clean: the equivalent original address (run-time) */
	uint32_t pending; /* clean: the counter (index in the object's counters) to add one to
			   * when the pc is moved to orig, or PATCH_NO_COUNTER */
	uint8_t clean;	  /* 0: single-step the thread until it is at a clean offset */
};

struct patch_blob {
	uint64_t site;	  /* run-time address of the window start */
	uint8_t len;	  /* bytes overwritten there (>= 5) */
	uint8_t code[16]; /* new bytes for [site, site + len): jmp rel32 to tramp, int3 fill */
	uint8_t orig[16]; /* the original bytes (restore and verify) */
	uint64_t tramp;	  /* run-time address its trampoline code will live at */
	uint8_t *tramp_code;
	uint32_t tramp_len;
	struct patch_pc *pcs; /* by increasing off, the first at 0 */
	uint32_t npcs;
	uint32_t *lock_offsets; /* prefix bytes in tramp_code: 0x3e plain, 0xf0 lock (atomic) */
	uint32_t nlock;
};

#endif
