/*
 * Files kept across runs (see cache_files.h).
 */
#include "user/session/cache_files.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "user/util/log.h"
#include "user/util/xdg.h"

bool cache_files__enabled(void)
{
	const char *off = getenv("EDGEPROF_NO_DECODE_CACHE");

	return !(off && *off && strcmp(off, "0"));
}

/* dl_iterate_phdr callback: the build ID note of the first object, the program itself. */
static int own_note(struct dl_phdr_info *info, size_t size, void *data)
{
	struct cache_tool_id *t = data;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		size_t off = 0;

		if (ph->p_type != PT_NOTE)
			continue;
		while (off + sizeof(ElfW(Nhdr)) <= ph->p_memsz) {
			const ElfW(Nhdr) *nh = (const void *)(p + off);
			size_t name = (nh->n_namesz + 3) & ~(size_t)3;
			size_t desc = (nh->n_descsz + 3) & ~(size_t)3;
			const char *nm = (const char *)(nh + 1);

			if (off + sizeof(*nh) + name + desc > ph->p_memsz)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(nm, "GNU", 4) && nh->n_descsz &&
			    nh->n_descsz <= CACHE_TOOL_ID_MAX) {
				memcpy(t->id, nm + name, nh->n_descsz);
				t->len = nh->n_descsz;
				return 1;
			}
			off += sizeof(*nh) + name + desc;
		}
	}
	return 1; /* the program only */
}

int cache_files__tool_id(struct cache_tool_id *t)
{
	memset(t, 0, sizeof(*t));
	dl_iterate_phdr(own_note, t);
	return t->len ? 0 : -1;
}

int cache_files__path(const char *kind, const uint8_t key[16], char *path, size_t len)
{
	char name[96];

	if (snprintf(name, sizeof(name), "%s/", kind) >= (int)sizeof(name) - 33)
		return -1;
	for (int i = 0; i < 16; i++)
		sprintf(name + strlen(name), "%02x", key[i]);
	return xdg__path(path, len, "XDG_CACHE_HOME", ".cache", name) ? -1 : 0;
}

int cache_files__map(const char *path, size_t min, struct cache_mapping *m)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	m->map = NULL;
	m->size = 0;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < (off_t)min) {
		close(fd);
		return -1;
	}
	m->size = (size_t)st.st_size;
	m->map = mmap(NULL, m->size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	close(fd);
	if (m->map == MAP_FAILED) {
		m->map = NULL;
		return -1;
	}
	return 0;
}

void cache_files__unmap(struct cache_mapping *m)
{
	if (m->map)
		munmap(m->map, m->size);
	m->map = NULL;
	m->size = 0;
}

void cache_files__touch(const char *path)
{
	utimensat(AT_FDCWD, path, NULL, 0);
}

/* Keeps the MAX most recently used files of directory DIR (those named by a hash). */
static void evict(const char *dir, size_t max)
{
	struct entry {
		char name[64];
		struct timespec mtime;
	} *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		struct stat st;

		if (strlen(de->d_name) != 32 || fstatat(dirfd(d), de->d_name, &st, 0))
			continue;
		if (n == cap) {
			struct entry *nv = realloc(v, (cap = cap ? 2 * cap : 128) * sizeof(*v));

			if (!nv)
				break;
			v = nv;
		}
		snprintf(v[n].name, sizeof(v[n].name), "%s", de->d_name);
		v[n++].mtime = st.st_mtim;
	}
	while (n > max) {
		size_t old = 0;

		for (size_t i = 1; i < n; i++)
			if (v[i].mtime.tv_sec < v[old].mtime.tv_sec ||
			    (v[i].mtime.tv_sec == v[old].mtime.tv_sec &&
			     v[i].mtime.tv_nsec < v[old].mtime.tv_nsec))
				old = i;
		unlinkat(dirfd(d), v[old].name, 0);
		v[old] = v[--n];
	}
	free(v);
	closedir(d);
}

/* Writes LEN bytes of BUF to FD. 0 or -1. */
static int write_all(int fd, const void *buf, size_t len)
{
	while (len) {
		ssize_t w = write(fd, buf, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		buf = (const char *)buf + w;
		len -= (size_t)w;
	}
	return 0;
}

int cache_files__write(const char *path, const struct iovec *iov, int n, size_t max_files)
{
	char tmp[PATH_MAX + 8], dir[PATH_MAX];
	bool ok = true;
	int fd;

	if (xdg__make_parents(path, false) ||
	    snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return -1;
	fd = mkstemp(tmp);
	if (fd < 0) {
		pr_debug("cannot create '%s': %s", tmp, strerror(errno));
		return -1;
	}
	for (int i = 0; i < n && ok; i++)
		ok = !write_all(fd, iov[i].iov_base, iov[i].iov_len);
	if (close(fd))
		ok = false;
	if (!ok || rename(tmp, path)) {
		pr_debug("cannot write '%s': %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	if (strrchr(dir, '/')) {
		*strrchr(dir, '/') = '\0';
		evict(dir, max_files);
	}
	return 0;
}
