/*
 * Finding the separate debug file of an ELF image (see debuginfo.h). The search order is
 * gdb's: build-id paths under each debug directory first, then the .gnu_debuglink name next
 * to the file, in its .debug/ subdirectory and under each debug directory followed by the
 * file's directory (both as given and with symlinks resolved, since /lib is often a link to
 * /usr/lib). Every candidate is checked against the image before it is used.
 */
#include "debuginfo.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_DEBUG_DIR "/usr/lib/debug"

static uint32_t crc_table[256];

static void crc_init(void)
{
	uint32_t i, k, c;

	if (crc_table[1])
		return;
	for (i = 0; i < 256; i++) {
		c = i;
		for (k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

int debuginfo__file_crc(int fd, uint32_t *crc)
{
	unsigned char buf[65536];
	uint32_t c = 0xffffffffu;
	off_t off = 0;
	ssize_t n;

	crc_init();
	while ((n = pread(fd, buf, sizeof(buf), off)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (ssize_t i = 0; i < n; i++)
			c = crc_table[(c ^ buf[i]) & 0xff] ^ (c >> 8);
		off += n;
	}
	*crc = c ^ 0xffffffffu;
	return 0;
}

static void build_id_hex(Elf *elf, char *out, size_t outsz)
{
	const void *p;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &p);

	out[0] = '\0';
	if (n <= 0 || (size_t)(2 * n + 1) > outsz)
		return;
	for (ssize_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", ((const uint8_t *)p)[i]);
}

/* Opens PATH as the debug file of IMG: 0 with DI filled when it matches (CRC when WANT_CRC,
 * the build-id whenever IMG has one), -ENOENT otherwise. */
static int try_candidate(struct debuginfo *di, const struct elf_image *img, const char *path,
			 bool want_crc, uint32_t crc)
{
	char bid[sizeof(img->build_id)];
	struct stat st, ist;
	GElf_Ehdr eh;
	Elf *elf;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (fstat(img->fd, &ist) == 0 && st.st_dev == ist.st_dev && st.st_ino == ist.st_ino))
		goto no;
	if (want_crc) {
		uint32_t c;

		if (debuginfo__file_crc(fd, &c) != 0 || c != crc)
			goto no;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		goto no;
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64) {
		elf_end(elf);
		goto no;
	}
	build_id_hex(elf, bid, sizeof(bid));
	if (img->build_id[0] && strcmp(bid, img->build_id) != 0) {
		elf_end(elf);
		goto no;
	}
	di->path = strdup(path);
	if (!di->path) {
		elf_end(elf);
		close(fd);
		return -ENOMEM;
	}
	di->fd = fd;
	di->elf = elf;
	return 0;
no:
	close(fd);
	return -ENOENT;
}

/* The debug directories: $EDGEPROF_DEBUG_DIR's entries, then the default. Returns a
 * malloc'd, NUL-separated list ending in an empty string. */
static char *debug_dirs(void)
{
	const char *env = getenv("EDGEPROF_DEBUG_DIR");
	size_t n = (env ? strlen(env) : 0) + sizeof(DEFAULT_DEBUG_DIR) + 3;
	char *list = calloc(1, n), *p = list;

	if (!list)
		return NULL;
	if (env) {
		for (const char *s = env; *s;) {
			size_t k = strcspn(s, ":");

			if (k) {
				memcpy(p, s, k);
				p += k + 1;
			}
			s += k + (s[k] == ':');
		}
	}
	memcpy(p, DEFAULT_DEBUG_DIR, sizeof(DEFAULT_DEBUG_DIR));
	return list;
}

static int try_buildid(struct debuginfo *di, const struct elf_image *img, const char *dirs)
{
	char path[PATH_MAX];

	if (strlen(img->build_id) < 4)
		return -ENOENT;
	for (const char *d = dirs; *d; d += strlen(d) + 1) {
		int err;

		if (snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", d, img->build_id,
			     img->build_id + 2) >= (int)sizeof(path))
			continue;
		err = try_candidate(di, img, path, false, 0);
		if (err != -ENOENT)
			return err;
	}
	return -ENOENT;
}

/* The debuglink candidates for the file's directory DIR (absolute or relative, no trailing
 * slash; "" for the root). */
static int try_link_in(struct debuginfo *di, const struct elf_image *img, const char *dirs,
		       const char *dir, const char *name, uint32_t crc)
{
	char path[PATH_MAX];
	int err;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) < (int)sizeof(path) &&
	    (err = try_candidate(di, img, path, true, crc)) != -ENOENT)
		return err;
	if (snprintf(path, sizeof(path), "%s/.debug/%s", dir, name) < (int)sizeof(path) &&
	    (err = try_candidate(di, img, path, true, crc)) != -ENOENT)
		return err;
	if (dir[0] != '/')
		return -ENOENT;
	for (const char *d = dirs; *d; d += strlen(d) + 1) {
		if (snprintf(path, sizeof(path), "%s%s/%s", d, dir, name) >= (int)sizeof(path))
			continue;
		err = try_candidate(di, img, path, true, crc);
		if (err != -ENOENT)
			return err;
	}
	return -ENOENT;
}

static void dir_of(const char *path, char *out, size_t outsz)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(out, outsz, ".");
	else
		snprintf(out, outsz, "%.*s", (int)(slash - path), path);
}

static int try_debuglink(struct debuginfo *di, const struct elf_image *img, const char *dirs)
{
	char dir[PATH_MAX], rdir[PATH_MAX], *real;
	GElf_Word crc;
	const char *name = dwelf_elf_gnu_debuglink(img->elf, &crc);
	int err;

	if (!name || !*name || strchr(name, '/'))
		return -ENOENT;
	dir_of(img->path, dir, sizeof(dir));
	err = try_link_in(di, img, dirs, dir, name, crc);
	if (err != -ENOENT)
		return err;
	real = realpath(img->path, NULL);
	if (!real)
		return -ENOENT;
	dir_of(real, rdir, sizeof(rdir));
	free(real);
	if (strcmp(rdir, dir) == 0)
		return -ENOENT;
	return try_link_in(di, img, dirs, rdir, name, crc);
}

int debuginfo__open(struct debuginfo *di, const struct elf_image *img)
{
	char *dirs;
	int err;

	memset(di, 0, sizeof(*di));
	di->fd = -1;
	if (!img || !img->elf || img->fd < 0 || !img->path)
		return -ENOENT;
	dirs = debug_dirs();
	if (!dirs)
		return -ENOMEM;
	elf_version(EV_CURRENT);
	err = try_buildid(di, img, dirs);
	if (err == -ENOENT)
		err = try_debuglink(di, img, dirs);
	free(dirs);
	return err;
}

void debuginfo__close(struct debuginfo *di)
{
	if (!di)
		return;
	if (di->elf)
		elf_end(di->elf);
	if (di->path && di->fd >= 0)
		close(di->fd);
	free(di->path);
	memset(di, 0, sizeof(*di));
	di->fd = -1;
}
