/*
 * The decoding of a binary kept across runs (see decode_cache.h).
 */
#include "user/session/decode_cache.h"

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
#include <xxhash.h>

#include "cfg/decode.h"
#include "user/util/log.h"
#include "user/util/xdg.h"

#define CACHE_MAGIC "EPDECOD1"
#define TOOL_ID_MAX 64

/* The file: this header, then n struct dinsn, then ntaken uint64_t. */
struct cache_header {
	char magic[8];
	uint32_t dinsn_size;            /* sizeof(struct dinsn) */
	uint32_t tool_len;              /* bytes of tool_id */
	uint8_t tool_id[TOOL_ID_MAX];   /* edgeprof's build ID */
	uint8_t file_hash[16];          /* XXH3-128 of the binary (canonical form) */
	uint64_t n, ntaken;
	uint64_t payload_hash;          /* XXH3-64 of what follows the header */
};

_Static_assert(sizeof(struct cache_header) % 8 == 0, "records follow the header aligned");

struct tool_id {
	uint8_t id[TOOL_ID_MAX];
	uint32_t len;
};

/* dl_iterate_phdr callback: the build ID note of the first object, the program itself. */
static int own_note(struct dl_phdr_info *info, size_t size, void *data)
{
	struct tool_id *t = data;

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
			    !memcmp(nm, "GNU", 4) && nh->n_descsz && nh->n_descsz <= TOOL_ID_MAX) {
				memcpy(t->id, nm + name, nh->n_descsz);
				t->len = nh->n_descsz;
				return 1;
			}
			off += sizeof(*nh) + name + desc;
		}
	}
	return 1; /* the program only */
}

/* edgeprof's own build ID: which code decoded. 0, or -1 when it has none (no cache then). */
static int tool_identity(struct tool_id *t)
{
	memset(t, 0, sizeof(*t));
	dl_iterate_phdr(own_note, t);
	return t->len ? 0 : -1;
}

/* The cache file for IMG's bytes into PATH, its hash into HASH. 0, or -1 when there is no
 * cache (turned off, no cache directory, a memory image, no tool identity). */
static int cache_path(const struct elf_image *img, char *path, size_t len,
		      XXH128_canonical_t *hash, struct tool_id *tool)
{
	const char *off = getenv("EDGEPROF_NO_DECODE_CACHE");
	char name[64];

	if ((off && *off && strcmp(off, "0")) || img->fd < 0 || !img->map || tool_identity(tool))
		return -1;
	XXH128_canonicalFromHash(hash, XXH3_128bits(img->map, img->map_size));
	strcpy(name, "decode/");
	for (int i = 0; i < 16; i++)
		sprintf(name + strlen(name), "%02x", hash->digest[i]);
	return xdg__path(path, len, "XDG_CACHE_HOME", ".cache", name) ? -1 : 0;
}

/* A cache file mapped (map_file), lent to the program it preloads. */
struct mapping {
	void *map;
	size_t size;
};

/* Maps the whole of PATH read-only and populated into *M: its records are read in place, with
 * no copy (cache files are replaced by rename, never rewritten in place). 0 or -1. */
static int map_file(const char *path, struct mapping *m)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	m->map = NULL;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    st.st_size < (off_t)sizeof(struct cache_header)) {
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

/* cfg_options.release for a mapping: the program no longer reads it. */
static void unmap(void *ctx)
{
	struct mapping *m = ctx;

	munmap(m->map, m->size);
	free(m);
}

/* Whether BUF (SIZE bytes) is a whole cache file for HASH written by TOOL: the header's
 * fields, the size they imply and the payload's hash. Says why not at -vv. */
static bool valid(const char *path, const void *buf, size_t size, const XXH128_canonical_t *hash,
		  const struct tool_id *tool)
{
	const struct cache_header *h = buf;
	const char *why = NULL;

	if (memcmp(h->magic, CACHE_MAGIC, 8) || h->dinsn_size != sizeof(struct dinsn))
		why = "another format";
	else if (h->tool_len != tool->len || memcmp(h->tool_id, tool->id, tool->len))
		why = "written by another edgeprof build";
	else if (memcmp(h->file_hash, hash->digest, 16))
		why = "for other bytes";
	else if (h->n > size / sizeof(struct dinsn) || h->ntaken > size / 8 ||
		 sizeof(*h) + h->n * sizeof(struct dinsn) + h->ntaken * 8 != size)
		why = "truncated";
	else if (XXH3_64bits((const char *)buf + sizeof(*h), size - sizeof(*h)) != h->payload_hash)
		why = "damaged";
	if (why)
		pr_debug("'%s': not used: %s", path, why);
	return !why;
}

int decode_cache__build(struct cfg_program *prog, struct elf_image *img, bool save,
			void (*progress)(void *ctx, size_t built, size_t known), void *ctx)
{
	char path[PATH_MAX];
	XXH128_canonical_t hash;
	struct tool_id tool;
	struct cfg_options opts = { .progress = progress, .progress_ctx = ctx };
	struct mapping *m = malloc(sizeof(*m));
	int err;

	if (!m || cache_path(img, path, sizeof(path), &hash, &tool) || map_file(path, m)) {
		free(m);
		err = cfg_program__build(prog, img, &opts);
		if (!err && save)
			decode_cache__save(img, prog);
		return err;
	}
	if (valid(path, m->map, m->size, &hash, &tool) &&
	    ((const struct cache_header *)m->map)->n) {
		const struct cache_header *h = m->map;

		opts.insns = (const struct dinsn *)(h + 1);
		opts.ninsns = h->n;
		opts.taken = (const uint64_t *)(opts.insns + h->n);
		opts.ntaken = h->ntaken;
		/* The program reads the records in place and unmaps them when done. */
		opts.release = unmap;
		opts.release_ctx = m;
	} else {
		unmap(m);
	}
	err = cfg_program__build(prog, img, &opts);
	if (err == -EINVAL && opts.ninsns) {
		pr_debug("'%s': not used: its records are not this binary's", path);
		unlink(path);
		opts.ninsns = 0;
		opts.release = NULL;
		err = cfg_program__build(prog, img, &opts);
	}
	if (!err && opts.ninsns) {
		pr_debug("'%s': %zu decoded instructions from '%s'", img->path, opts.ninsns, path);
		utimensat(AT_FDCWD, path, NULL, 0); /* recently used */
	}
	if (!err && save)
		decode_cache__save(img, prog);
	return err;
}

/* Keeps the DECODE_CACHE_MAX_FILES most recently used files of directory DIR. */
static void evict(const char *dir)
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
	while (n > DECODE_CACHE_MAX_FILES) {
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

void decode_cache__save(const struct elf_image *img, const struct cfg_program *prog)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	XXH128_canonical_t hash;
	struct tool_id tool;
	struct cache_header h = { 0 };
	const struct dinsn *insns;
	const uint64_t *taken;
	size_t n, ntaken;
	XXH3_state_t *st;
	bool ok;
	int fd;

	if (!prog->dec || !prog->dec->ndecoded ||
	    cache_path(img, path, sizeof(path), &hash, &tool) || xdg__make_parents(path, false))
		return;
	decoder__records(prog->dec, &insns, &n, &taken, &ntaken);
	memcpy(h.magic, CACHE_MAGIC, 8);
	h.dinsn_size = sizeof(struct dinsn);
	h.tool_len = tool.len;
	memcpy(h.tool_id, tool.id, tool.len);
	memcpy(h.file_hash, hash.digest, 16);
	h.n = n;
	h.ntaken = ntaken;
	st = XXH3_createState();
	if (!st || XXH3_64bits_reset(st) == XXH_ERROR ||
	    XXH3_64bits_update(st, insns, n * sizeof(*insns)) == XXH_ERROR ||
	    XXH3_64bits_update(st, taken, ntaken * sizeof(*taken)) == XXH_ERROR) {
		XXH3_freeState(st);
		return;
	}
	h.payload_hash = XXH3_64bits_digest(st);
	XXH3_freeState(st);
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0) {
		pr_debug("cannot create '%s': %s", tmp, strerror(errno));
		return;
	}
	/* No fsync: a file cut short by a crash fails its size or hash check and is not used. */
	ok = !write_all(fd, &h, sizeof(h)) && !write_all(fd, insns, n * sizeof(*insns)) &&
	     !write_all(fd, taken, ntaken * sizeof(*taken));
	if (close(fd))
		ok = false;
	if (!ok || rename(tmp, path)) {
		pr_debug("cannot write '%s': %s", path, strerror(errno));
		unlink(tmp);
		return;
	}
	pr_debug("'%s': %zu decoded instructions kept in '%s'", img->path, n, path);
	*strrchr(path, '/') = '\0';
	evict(path);
}
