/*
 * Saving the analyses of a binary (its CFGs, their longjmp pseudo-edges, where patch windows
 * can go) into a snapshot stream and reading them back (snapshot.h), for the session's
 * analysis cache: what is read back is what was saved, field for field, in memory of its own
 * that the usual release functions free.
 */
#ifndef EDGEPROF_CFG_CFG_SNAPSHOT_H
#define EDGEPROF_CFG_CFG_SNAPSHOT_H

#include "cfg.h"
#include "longjmp.h"
#include "patch_window.h"
#include "snapshot.h"

/* Saves PROG (its functions, symbols and build statistics; not its decoding). Returns 0, or
 * -EINVAL when PROG holds what cannot be saved (a call's name that is none of its symbols'),
 * or -ENOMEM (the stream's failure). */
int cfg_program__save(const struct cfg_program *prog, struct snap_out *o);

/* Reads into *PROG (zeroed first) a program cfg_program__save saved from IMG's bytes, with
 * no decoding (cfg_program.dec NULL). Returns 0, or -EINVAL / -ENOMEM with *PROG released. */
int cfg_program__load(struct cfg_program *prog, struct elf_image *img, struct snap_in *in);

/* Saves LJ, the analysis of a program of NFUNCS functions. */
void cfg_longjmp__save(const struct cfg_longjmp *lj, size_t nfuncs, struct snap_out *o);

/* Reads into *LJ what cfg_longjmp__save saved for a program of NFUNCS functions. Returns 0,
 * or -EINVAL / -ENOMEM with *LJ released. */
int cfg_longjmp__load(struct cfg_longjmp *lj, size_t nfuncs, struct snap_in *in);

/* Saves PA, the patch-window analysis of PROG. */
void patch_analysis__save(const struct patch_analysis *pa, struct snap_out *o);

/* Reads into *PA what patch_analysis__save saved for PROG (loaded the same way). Returns 0,
 * or -EINVAL / -ENOMEM with *PA released. */
int patch_analysis__load(struct patch_analysis *pa, const struct cfg_program *prog,
			 struct snap_in *in);

#endif
