/*
 * Separate debug files of stripped binaries and libraries, found the way gdb and perf find
 * them: by build-id (DIR/.build-id/xx/rest.debug) and by the .gnu_debuglink section (next to
 * the file, in its .debug/ subdirectory, and under DIR followed by the file's directory),
 * for each debug directory DIR: those listed in $EDGEPROF_DEBUG_DIR (colon-separated, first),
 * then /usr/lib/debug. A candidate is accepted only when it provably belongs to the file: its
 * build-id equals the file's, and a debuglink candidate's CRC32 equals the one the link
 * records. Symbols and line tables of the debug file are then as trustworthy as the file's own.
 */
#ifndef EDGEPROF_CFG_DEBUGINFO_H
#define EDGEPROF_CFG_DEBUGINFO_H

#include "elf_image.h"

struct debuginfo {
	char *path; /* the debug file found */
	int fd;
	Elf *elf; /* read-only libelf handle of the debug file */
};

/* Finds and opens the separate debug file of IMG (an image opened from a file; memory images
 * have none). Returns 0 with DI filled, -ENOENT when there is none that matches, or another
 * negative errno. Never prints; candidates that do not match are skipped silently. */
int debuginfo__open(struct debuginfo *di, const struct elf_image *img);

/* Releases what debuginfo__open acquired. Safe on a zeroed struct. */
void debuginfo__close(struct debuginfo *di);

/* The CRC32 of the whole file at FD as .gnu_debuglink records it (the zlib/IEEE polynomial).
 * Returns 0 with *CRC set, or a negative errno. */
int debuginfo__file_crc(int fd, uint32_t *crc);

#endif
