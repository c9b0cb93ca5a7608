/*
 * Test driver for user/proc/tracer.c: `tracer_test [-o REPORT] [-p] PROG ARGS...` runs PROG under
 * tracer__run with a start hook that does nothing and writes one line per frame event,
 * "EXIT|ENTRY SYMBOL+0xOFF act=0|1 TID", then "main PID", "status exited N" or
 * "status signaled N", and "processes N threads N execs N unwind_failures N", to REPORT
 * (default stderr), so that PROG's stdout passes through untouched. Symbols come from the
 * .symtab (or .dynsym) of PROG read with libelf. -p matches the profiled binary by path
 * instead of by build-id. Exits with PROG's exit status (128+N for a signal), 125 when
 * tracer__run failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "user/util/log.h"
#include "user/proc/tracer.h"

struct func {
	uint64_t addr, size;
	char *name;
};

static struct func *funcs;
static size_t nfuncs;
static int traced_pid;

static int cmp_func(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Reads the function symbols and the build-id (lowercase hex into ID) of PATH. */
static int load_elf(const char *path, char *id, size_t idsize)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf *elf;
	int fd;
	bool have_symtab = false;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf) {
		close(fd);
		return -EINVAL;
	}
	id[0] = '\0';
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			have_symtab = true;
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || !(data = elf_getdata(scn, NULL)))
			continue;
		if (sh.sh_type == SHT_NOTE) {
			size_t off = 0, name_off, desc_off;
			GElf_Nhdr nh;

			while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
				const unsigned char *desc = (unsigned char *)data->d_buf + desc_off;

				if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
				    memcmp((char *)data->d_buf + name_off, "GNU", 4) ||
				    2 * nh.n_descsz >= idsize)
					continue;
				for (size_t i = 0; i < nh.n_descsz; i++)
					sprintf(id + 2 * i, "%02x", desc[i]);
			}
		} else if (sh.sh_type == (have_symtab ? SHT_SYMTAB : SHT_DYNSYM)) {
			size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;

			funcs = realloc(funcs, (nfuncs + n) * sizeof(*funcs));
			if (!funcs)
				return -ENOMEM;
			for (size_t i = 0; i < n; i++) {
				GElf_Sym sym;
				const char *name;

				if (!gelf_getsym(data, i, &sym) ||
				    GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_value)
					continue;
				name = elf_strptr(elf, sh.sh_link, sym.st_name);
				funcs[nfuncs++] = (struct func){sym.st_value, sym.st_size,
								strdup(name ? name : "?")};
			}
		}
	}
	elf_end(elf);
	close(fd);
	qsort(funcs, nfuncs, sizeof(*funcs), cmp_func);
	return 0;
}

/* The function holding ADDR: the last one starting at or below it, within its size (a
 * zero-sized symbol such as _start owns the bytes up to the next one). */
static const struct func *func_at(uint64_t addr)
{
	const struct func *best = NULL;

	for (size_t i = 0; i < nfuncs && funcs[i].addr <= addr; i++)
		if (!funcs[i].size || addr < funcs[i].addr + funcs[i].size)
			best = &funcs[i];
	return best;
}

static int started(void *ctx __attribute__((unused)), int pid)
{
	traced_pid = pid;
	return 0;
}

int main(int argc, char **argv)
{
	struct tracer_hooks hooks = {.started = started};
	struct tracer_result res;
	const char *report_path = NULL;
	char id[2 * 64 + 1];
	bool by_path = false;
	FILE *out = stderr;
	int opt, rc, st;

	while ((opt = getopt(argc, argv, "+o:pv")) != -1) {
		switch (opt) {
		case 'o':
			report_path = optarg;
			break;
		case 'p':
			by_path = true;
			break;
		case 'v':
			log__set_verbosity(log__verbosity() + 1);
			break;
		default:
			fprintf(stderr, "usage: tracer_test [-o REPORT] [-p] [-v] PROG ARGS...\n");
			return 125;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: tracer_test [-o REPORT] [-p] [-v] PROG ARGS...\n");
		return 125;
	}
	if (load_elf(argv[optind], id, sizeof(id)))
		id[0] = '\0';
	if (report_path && !(out = fopen(report_path, "w"))) {
		perror(report_path);
		return 125;
	}
	rc = tracer__run(argv[optind], argv + optind, by_path ? "" : id, &hooks, &res);
	if (rc) {
		fprintf(out, "tracer__run failed: %s\n", strerror(-rc));
		return 125;
	}
	for (size_t i = 0; i < res.nevents; i++) {
		const struct frame_event *ev = &res.events[i];
		/* A return address may follow the last byte of its function. */
		const struct func *f = func_at(ev->activation ? ev->vaddr : ev->vaddr - 1);

		fprintf(out, "%s %s+0x%" PRIx64 " act=%u %d\n", frame_event__kind_name(ev->kind),
			f ? f->name : "?", f ? ev->vaddr - f->addr : ev->vaddr, ev->activation,
			ev->tid);
	}
	st = res.wait_status;
	fprintf(out, "main %d\n", traced_pid);
	if (WIFEXITED(st))
		fprintf(out, "status exited %d\n", WEXITSTATUS(st));
	else
		fprintf(out, "status signaled %d\n", WTERMSIG(st));
	fprintf(out, "processes %u threads %u execs %u unwind_failures %u\n", res.nprocesses,
		res.nthreads, res.nexecs, res.unwind_failures);
	tracer_result__release(&res);
	if (out != stderr)
		fclose(out);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
