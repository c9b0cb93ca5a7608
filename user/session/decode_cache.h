/*
 * The decoding of a binary kept across runs. Capstone's decoding of the instructions the CFG
 * build and the patch analysis read is most of the analysis (0.24 of 0.36 s for sqlite3), and
 * it is a function of the file's bytes and of edgeprof's own code only: it is kept in
 * $XDG_CACHE_HOME/edgeprof/decode/ (default ~/.cache/edgeprof/decode/), one file per binary
 * named by the XXH3-128 hash of its bytes and stamped with edgeprof's build ID, and preloaded
 * by the next build of a file with the same bytes by the same edgeprof. Everything after the
 * decoding (the CFG, the plans) is computed again each time. EDGEPROF_NO_DECODE_CACHE=1
 * neither reads nor writes it.
 */
#ifndef EDGEPROF_USER_SESSION_DECODE_CACHE_H
#define EDGEPROF_USER_SESSION_DECODE_CACHE_H

#include <stdbool.h>

#include "cfg/cfg.h"
#include "cfg/elf_image.h"

/* At most this many binaries are kept; saving one more drops the least recently used. */
#define DECODE_CACHE_MAX_FILES 64

/* Builds PROG from IMG as cfg_program__build(PROG, IMG, NULL) does, with the decoding kept
 * for IMG's bytes preloaded when there is one, calling PROGRESS (may be NULL) with CTX as
 * cfg_options.progress. A cache file that is unreadable, damaged, or
 * written by another edgeprof build is not used (said at -vv). With SAVE, the decoding is
 * kept at once (decode_cache__save); without, the caller saves it after its own analyses.
 * Returns as cfg_program__build. */
int decode_cache__build(struct cfg_program *prog, struct elf_image *img, bool save,
			void (*progress)(void *ctx, size_t built, size_t known), void *ctx);

/* Keeps PROG's decoding (cfg_program.dec, so before cfg_program__drop_decoding) for IMG's
 * bytes when it decoded anything a preloaded decoding lacked. Best effort: a failure is said
 * at -vv only, and changes nothing else. */
void decode_cache__save(const struct elf_image *img, const struct cfg_program *prog);

#endif
