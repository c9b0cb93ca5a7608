/*
 * Resolving `--lib` names to shared objects (see libs.h): from /proc/PID/maps, or from the
 * dynamic loader's --list output for a program that has not started.
 */
#include "user/proc/libs.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "user/util/log.h"

/* A candidate object: its real path. */
struct cands {
	char **v;
	size_t n;
};

static void cands_free(struct cands *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i]);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

static int cands_add(struct cands *c, const char *path)
{
	char *real = realpath(path, NULL), **v;

	if (!real)
		return 0; /* gone, or not a file: not a candidate */
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->v[i], real)) {
			free(real);
			return 0;
		}
	v = realloc(c->v, (c->n + 1) * sizeof(*v));
	if (!v) {
		free(real);
		return -ENOMEM;
	}
	c->v = v;
	c->v[c->n++] = real;
	return 0;
}

bool libs__name_matches(const char *name, const char *path)
{
	const char *base = strrchr(path, '/');
	size_t n = strlen(name);

	base = base ? base + 1 : path;
	return !strncmp(base, name, n) && (base[n] == 0 || base[n] == '.' || base[n] == '-');
}

/* Whether candidate CAND (a real path) is what NAME asks for: the same file, or by name. */
static bool matches(const char *name, const char *cand)
{
	if (strchr(name, '/')) {
		char real[PATH_MAX];

		return realpath(name, real) && !strcmp(real, cand);
	}
	return libs__name_matches(name, cand);
}

static int pick(const struct cands *c, const char *main_path, char *const *names, size_t n,
		char **paths, const char *where)
{
	for (size_t i = 0; i < n; i++) {
		paths[i] = NULL;
		for (size_t k = 0; k < c->n && !paths[i]; k++)
			if (matches(names[i], c->v[k]) && strcmp(c->v[k], main_path))
				paths[i] = strdup(c->v[k]);
		if (!paths[i]) {
			for (size_t j = 0; j < i; j++)
				free(paths[j]);
			return pr_err("--lib '%s': %s", names[i], where);
		}
		for (size_t j = 0; j < i; j++)
			if (!strcmp(paths[j], paths[i])) {
				for (size_t m = 0; m <= i; m++)
					free(paths[m]);
				return pr_err("--lib '%s': '%s' is given twice", names[i], paths[i]);
			}
	}
	return 0;
}

/* The files process PID maps into C, its executable's path into EXE. Returns 0 or -1
 * (reported). */
static int collect_mapped(int pid, struct cands *c, char *exe, size_t exesize)
{
	char file[64], line[PATH_MAX + 256];
	ssize_t len;
	FILE *f;

	snprintf(file, sizeof(file), "/proc/%d/exe", pid);
	len = readlink(file, exe, exesize - 1);
	exe[len > 0 ? len : 0] = 0;
	snprintf(file, sizeof(file), "/proc/%d/maps", pid);
	f = fopen(file, "re");
	if (!f)
		return pr_err("process %d: cannot read its mappings: %s", pid, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *path = strchr(line, '/');

		if (!path)
			continue;
		path[strcspn(path, "\n")] = 0;
		if (strstr(path, " (deleted)"))
			continue;
		if (cands_add(c, path)) {
			fclose(f);
			cands_free(c);
			return pr_err("out of memory");
		}
	}
	fclose(f);
	return 0;
}

int libs__resolve_mapped(int pid, char *const *names, size_t n, char **paths)
{
	char exe[PATH_MAX], where[96];
	struct cands c = { 0 };
	int rc;

	if (collect_mapped(pid, &c, exe, sizeof(exe)))
		return -1;
	snprintf(where, sizeof(where), "process %d maps no such shared library", pid);
	rc = pick(&c, exe, names, n, paths, where);
	cands_free(&c);
	return rc;
}

/* PROG's PT_INTERP into OUT; false when it has none (static) or cannot be read. */
static bool interpreter(const char *prog, char *out, size_t size)
{
	int fd = open(prog, O_RDONLY | O_CLOEXEC);
	Elf *elf;
	size_t nph;
	bool found = false;

	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && !elf_getphdrnum(elf, &nph)) {
		for (size_t i = 0; i < nph && !found; i++) {
			GElf_Phdr ph;
			size_t flen;
			char *raw = elf_rawfile(elf, &flen);

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_INTERP || !raw ||
			    ph.p_offset >= flen || ph.p_filesz == 0 || ph.p_filesz > size ||
			    ph.p_offset + ph.p_filesz > flen)
				continue;
			memcpy(out, raw + ph.p_offset, ph.p_filesz);
			out[ph.p_filesz - 1] = 0;
			found = true;
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return found;
}

/* The libraries the dynamic loader lists for PROG, into C. Returns 0 or -1 (reported). */
static int collect_needed(const char *prog, struct cands *c)
{
	char interp[PATH_MAX], line[PATH_MAX + 256];
	int fds[2], st, rc = 0;
	pid_t pid;
	FILE *f;

	if (!interpreter(prog, interp, sizeof(interp)))
		return pr_err("--lib: '%s' is not dynamically linked", prog);
	if (pipe2(fds, O_CLOEXEC))
		return pr_err("--lib: pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return pr_err("--lib: fork: %s", strerror(errno));
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		dup2(fds[1], 1);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 2);
		}
		/* The loader lists what it would load for PROG, and runs nothing of it. */
		execl(interp, interp, "--list", prog, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	while (f && fgets(line, sizeof(line), f)) {
		/* "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" or "\t/lib64/ld-... (0x...)" */
		char *arrow = strstr(line, "=> "), *path = arrow ? arrow + 3 : line, *end;

		while (*path == '\t' || *path == ' ')
			path++;
		if (*path != '/')
			continue;
		end = strstr(path, " (0x");
		if (end)
			*end = 0;
		path[strcspn(path, "\n")] = 0;
		if (cands_add(c, path)) {
			rc = pr_err("out of memory");
			break;
		}
	}
	if (f)
		fclose(f);
	else
		close(fds[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return rc;
}

int libs__resolve_needed(const char *prog, char *const *names, size_t n, char **paths)
{
	char where[PATH_MAX + 64];
	struct cands c = { 0 };
	int rc;

	if (collect_needed(prog, &c)) {
		cands_free(&c);
		return -1;
	}
	snprintf(where, sizeof(where), "the dynamic loader loads no such shared library for '%s'",
		 prog);
	rc = pick(&c, prog, names, n, paths, where);
	cands_free(&c);
	return rc;
}

int libs__list(int pid, const char *prog, char ***paths, size_t *n)
{
	char exe[PATH_MAX];
	struct cands c = { 0 };
	size_t k = 0;

	*paths = NULL;
	*n = 0;
	if (pid <= 0 && !interpreter(prog, exe, sizeof(exe)))
		return 0; /* statically linked: no libraries */
	if (pid > 0 ? collect_mapped(pid, &c, exe, sizeof(exe)) : collect_needed(prog, &c)) {
		cands_free(&c);
		return -1;
	}
	for (size_t i = 0; i < c.n; i++) {
		char real[PATH_MAX];

		if ((pid > 0 && !strcmp(c.v[i], exe)) ||
		    (prog && realpath(prog, real) && !strcmp(c.v[i], real)))
			free(c.v[i]);
		else
			c.v[k++] = c.v[i];
	}
	*paths = c.v;
	*n = k;
	return 0;
}

/* Opens PATH with libelf: *FD and the Elf, or NULL. */
static Elf *elf_open_path(const char *path, int *fd)
{
	Elf *e;

	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return NULL;
	elf_version(EV_CURRENT);
	e = elf_begin(*fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		close(*fd);
		return NULL;
	}
	return e;
}

int libs__rendezvous(const char *ldso, struct libs_rendezvous *r)
{
	Elf_Scn *scn = NULL;
	size_t nph = 0;
	int fd;
	Elf *e = elf_open_path(ldso, &fd);

	memset(r, 0, sizeof(*r));
	if (!e)
		return -1;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    !(name = elf_strptr(e, sh.sh_link, sym.st_name)))
				continue;
			if (GELF_ST_TYPE(sym.st_info) == STT_FUNC && !strcmp(name, "_dl_debug_state"))
				r->state_fn = sym.st_value;
			else if (GELF_ST_TYPE(sym.st_info) == STT_OBJECT && !strcmp(name, "_r_debug"))
				r->r_debug = sym.st_value;
		}
	}
	elf_getphdrnum(e, &nph);
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (ph.p_vaddr + ph.p_memsz > r->span)
			r->span = ph.p_vaddr + ph.p_memsz;
		if (r->state_fn >= ph.p_vaddr && r->state_fn < ph.p_vaddr + ph.p_filesz)
			r->state_fn_off = r->state_fn - ph.p_vaddr + ph.p_offset;
	}
	elf_end(e);
	close(fd);
	return r->state_fn && r->state_fn_off && r->r_debug ? 0 : -1;
}

/* Appends V to *ROOTS (*N of them, room for *CAP). Returns 0 or -1. */
static int root_add(uint64_t **roots, size_t *n, size_t *cap, uint64_t v)
{
	if (*n == *cap) {
		uint64_t *r = realloc(*roots, (*cap = *cap ? 2 * *cap : 64) * sizeof(*r));

		if (!r)
			return -1;
		*roots = r;
	}
	(*roots)[(*n)++] = v;
	return 0;
}

int libs__load_roots(const char *path, uint64_t **roots, size_t *n)
{
	Elf_Scn *scn = NULL;
	size_t cap = 0;
	int err = 0;
	int fd;
	Elf *e = elf_open_path(path, &fd);

	*roots = NULL;
	*n = 0;
	if (!e)
		return -1;
	while (!err && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t cnt;

		if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		cnt = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < cnt && !err; i++) {
			if (sh.sh_type == SHT_DYNSYM || sh.sh_type == SHT_SYMTAB) {
				GElf_Sym sym;
				const char *name;

				if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
					continue;
				if (GELF_ST_TYPE(sym.st_info) == STT_GNU_IFUNC ||
				    (GELF_ST_TYPE(sym.st_info) == STT_FUNC &&
				     (name = elf_strptr(e, sh.sh_link, sym.st_name)) &&
				     !strcmp(name, "__libc_early_init")))
					err = root_add(roots, n, &cap, sym.st_value);
			} else if (sh.sh_type == SHT_RELA) {
				GElf_Rela rela;

				if (gelf_getrela(d, (int)i, &rela) &&
				    GELF_R_TYPE(rela.r_info) == R_X86_64_IRELATIVE)
					err = root_add(roots, n, &cap, (uint64_t)rela.r_addend);
			} else if (sh.sh_type == SHT_DYNAMIC) {
				GElf_Dyn dyn;

				if (gelf_getdyn(d, (int)i, &dyn) &&
				    (dyn.d_tag == DT_TEXTREL ||
				     (dyn.d_tag == DT_FLAGS && (dyn.d_un.d_val & DF_TEXTREL))))
					err = -1;
			}
		}
	}
	elf_end(e);
	close(fd);
	if (err) {
		free(*roots);
		*roots = NULL;
		*n = 0;
	}
	return err ? -1 : 0;
}

struct sym_pair {
	char *name;
	uint64_t addr;
};

static int cmp_sym_pair(const void *a, const void *b)
{
	return strcmp(((const struct sym_pair *)a)->name, ((const struct sym_pair *)b)->name);
}

int libs__syms_load(const char *path, struct libs_syms *s)
{
	struct sym_pair *v = NULL;
	size_t n = 0, cap = 0;
	Elf_Scn *scn = NULL;
	int err = 0, fd;
	Elf *e = elf_open_path(path, &fd);

	memset(s, 0, sizeof(*s));
	if (!e)
		return -1;
	while (!err && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && !err; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    !sym.st_value ||
			    (GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
			     GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC) ||
			    !(name = elf_strptr(e, sh.sh_link, sym.st_name)) || !*name)
				continue;
			if (n == cap) {
				struct sym_pair *nv = realloc(v, (cap = cap ? 2 * cap : 1024) * sizeof(*nv));

				if (!nv) {
					err = -1;
					break;
				}
				v = nv;
			}
			v[n].name = strdup(name);
			v[n].addr = sym.st_value;
			if (!v[n].name)
				err = -1;
			else
				n++;
		}
	}
	elf_end(e);
	close(fd);
	if (n)
		qsort(v, n, sizeof(*v), cmp_sym_pair);
	s->names = calloc(n + 1, sizeof(*s->names));
	s->addrs = calloc(n + 1, sizeof(*s->addrs));
	if (!s->names || !s->addrs)
		err = -1;
	for (size_t i = 0; i < n; i++) {
		if (s->names) {
			s->names[i] = v[i].name;
			s->addrs[i] = v[i].addr;
		} else {
			free(v[i].name);
		}
	}
	if (s->names)
		s->n = n;
	free(v);
	return err;
}

uint64_t libs__syms_find(const struct libs_syms *s, const char *name)
{
	char key[256];
	size_t lo = 0, hi = s->n, len = strcspn(name, "@");

	if (len >= sizeof(key))
		return 0;
	memcpy(key, name, len);
	key[len] = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(s->names[mid], key);

		if (!c)
			return s->addrs[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

void libs__syms_free(struct libs_syms *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->names[i]);
	free(s->names);
	free(s->addrs);
	memset(s, 0, sizeof(*s));
}
