/*
 * sweep_oracle: block-by-block check of an edgeprof profile of a program nobody here built
 * (a Debian binary) against valgrind callgrind, sorted by what the profile claims.
 *
 *   sweep_oracle --profile DATA --binary PATH --callgrind OUT [--callgrind OUT...] [--lib]
 *
 * DATA is a raw profile (edgeprof.data, see user/profile.h); with --lib the section checked is
 * the entry of its "libraries" whose binary is PATH (same path or same file name), otherwise
 * the main binary's. Each OUT is a callgrind output of the same run (--dump-instr=yes
 * --collect-jumps=yes --skip-plt=no, one file per process, summed). PATH names the callgrind
 * object (ob=) and gives the .text range and the build id.
 *
 * Every function of the profile is put in one class:
 *   excluded   status "excluded" (no counts), with its reason
 *   flagged    counted, but the profile says its counts are not exact: conservation
 *              violations, or block counts only because its CFG is incomplete (an unresolved
 *              indirect jump, undecodable code)
 *   outside    code outside .text (_init, _fini): callgrind does not show it running
 *   exact      everything else: the profile presents its counts as exact
 * Each non-null block count is compared with callgrind's executions of the block's first
 * instruction (less a rep instruction's self-jumps, plus the frames the profile says stopped
 * inside the block on a fatal signal, which callgrind does not count). A difference in an
 * exact function is a SILENT error; one in a flagged function a reported inexactness.
 *
 * It also splits the object's executed instructions (callgrind's Ir) by where they lie: in a
 * block of an exact function, of a flagged one, or in no checked block (excluded functions,
 * code no function recovered); the last are attributed to the nearest function starting at or
 * before them, which may name the excluded function or show unrecovered code.
 *
 * Output (stdout, one record a line, fields separated by tabs):
 *   func  CLASS NAME ADDR IR BLOCKS DIFFS COUNT REASON       (functions that ran, or differ,
 *                                                             or are not exact)
 *   diff  CLASS NAME BLOCK PROFILE CALLGRIND
 *   stray NAME ADDR CLASS IR FIRST LAST      (executed code in no checked block, by function)
 *   hint  NAME BLOCK OTHER OTHER_ADDR OTHER_CLASS   (a function with differences whose block
 *                                                    holds another function's entry: its CFG
 *                                                    ran into that function)
 *   summary object_ir=N exact_ir=N flagged_ir=N stray_ir=N silent=N reported=N
 *           blocks=N null_blocks=N funcs_exact=N funcs_flagged=N funcs_excluded=N
 *           funcs_outside=N unwind_failures=N violations=N
 * Exits 0 when there is no silent error, 1 when there is one, 2 on a usage or load error.
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "support/json_hex.h"
#include "support/callgrind.h"

#define MAX_CG_FILES 256

enum fclass {
	FC_EXACT = 0,
	FC_FLAGGED,
	FC_EXCLUDED,
	FC_OUTSIDE,
};

static const char *const class_names[] = { "exact", "flagged", "excluded", "outside" };

struct sfunc {
	const char *name;
	uint64_t addr;
	int cls;
	char reason[200];
	json_t *jf;
	uint64_t ir, stray_ir, stray_lo, stray_hi, count;
	bool has_count;
	unsigned long blocks, diffs;
};

struct sweep {
	struct cg_profile cg;
	uint64_t text_lo, text_hi;
	char build_id[129];
	struct sfunc *f;
	size_t nf;
	uint8_t *cover; /* per callgrind instruction: 1 exact block, 2 flagged block */
};

static void usage(void)
{
	fprintf(stderr, "usage: sweep_oracle --profile DATA --binary PATH --callgrind OUT "
			"[--callgrind OUT...] [--lib]\n");
}

/* Reads .text's range and the GNU build id of the ELF file PATH. */
static int load_elf(struct sweep *s, const char *path)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *d = NULL;
	long len;
	int ret = -1;

	if (!fp) {
		fprintf(stderr, "sweep_oracle: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (fseek(fp, 0, SEEK_END) || (len = ftell(fp)) < (long)sizeof(Elf64_Ehdr) ||
	    fseek(fp, 0, SEEK_SET) || !(d = malloc((size_t)len)) ||
	    fread(d, 1, (size_t)len, fp) != (size_t)len) {
		fprintf(stderr, "sweep_oracle: %s: cannot read\n", path);
		goto out;
	}
	{
		const Elf64_Ehdr *eh = (const Elf64_Ehdr *)d;
		const Elf64_Shdr *sh;
		size_t n = (size_t)len;
		unsigned i;

		if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
		    eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shstrndx >= eh->e_shnum ||
		    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > n) {
			fprintf(stderr, "sweep_oracle: %s: not an ELF64 file with sections\n", path);
			goto out;
		}
		sh = (const Elf64_Shdr *)(d + eh->e_shoff);
		for (i = 0; i < eh->e_shnum; i++) {
			uint64_t nm = sh[eh->e_shstrndx].sh_offset + sh[i].sh_name;

			if (nm + 6 <= n && !memcmp(d + nm, ".text", 6)) {
				s->text_lo = sh[i].sh_addr;
				s->text_hi = sh[i].sh_addr + sh[i].sh_size;
			}
			if (sh[i].sh_type == SHT_NOTE && sh[i].sh_offset + sh[i].sh_size <= n) {
				uint64_t off = sh[i].sh_offset, end = off + sh[i].sh_size;

				while (off + sizeof(Elf64_Nhdr) <= end) {
					const Elf64_Nhdr *nh = (const Elf64_Nhdr *)(d + off);
					uint64_t name = off + sizeof(*nh);
					uint64_t desc = name + ((nh->n_namesz + 3) & ~3u);
					uint64_t next = desc + ((nh->n_descsz + 3) & ~3u);

					if (next > end)
						break;
					/* Only the "GNU" note: stapsdt notes share type 3. */
					if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
					    !memcmp(d + name, "GNU", 4) && nh->n_descsz <= 64)
						for (uint32_t k = 0; k < nh->n_descsz; k++)
							sprintf(s->build_id + 2 * k, "%02x",
								d[desc + k]);
					off = next;
				}
			}
		}
	}
	if (s->text_hi <= s->text_lo) {
		fprintf(stderr, "sweep_oracle: %s: no .text section\n", path);
		goto out;
	}
	ret = 0;
out:
	free(d);
	fclose(fp);
	return ret;
}

/* Index of the first callgrind instruction at or above ADDR. */
static size_t insn_at(const struct cg_profile *p, uint64_t addr)
{
	size_t lo = 0, hi = p->ninsns;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->insns[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* How often the instruction at ADDR ran: its count less its self-jumps (callgrind counts a
 * rep instruction n + 1 times, and n jumps to itself, for one execution of n iterations). */
static uint64_t execs(const struct cg_profile *p, uint64_t addr)
{
	long k = cg_profile__first_jump(p, addr);
	uint64_t n = cg_profile__count(p, addr);

	for (; k >= 0 && (size_t)k < p->njumps && p->jumps[k].from == addr; k++)
		if (p->jumps[k].to == addr)
			n -= p->jumps[k].taken;
	return n;
}

static bool is_block_only_reason(const char *r)
{
	return r && (strstr(r, "unresolved") || strstr(r, "undecodable"));
}

/* Classifies function F and checks its blocks; prints its differences. */
static int check_func(struct sweep *s, struct sfunc *f, unsigned long *nblocks,
		      unsigned long *nnull)
{
	json_t *jf = f->jf, *jblocks = json_object_get(jf, "blocks"), *jb;
	json_t *jviol = json_object_get(jf, "violations"), *jv = json_object_get(jf, "virtual");
	const char *status = json_string_value(json_object_get(jf, "status"));
	const char *reason = json_string_value(json_object_get(jf, "reason"));
	json_t *jc = json_object_get(jf, "count");
	size_t bi, nviol = json_array_size(jviol);

	if (!status || !json_is_array(jblocks)) {
		fprintf(stderr, "sweep_oracle: function %s: no status or blocks\n", f->name);
		return -1;
	}
	f->has_count = json_is_integer(jc);
	f->count = f->has_count ? (uint64_t)json_integer_value(jc) : 0;
	if (!strcmp(status, "excluded")) {
		f->cls = FC_EXCLUDED;
		snprintf(f->reason, sizeof(f->reason), "%s", reason ? reason : "excluded");
	} else if (nviol) {
		f->cls = FC_FLAGGED;
		snprintf(f->reason, sizeof(f->reason), "%zu violation%s%s%s", nviol,
			 nviol == 1 ? "" : "s", reason ? "; " : "", reason ? reason : "");
	} else if (is_block_only_reason(reason)) {
		f->cls = FC_FLAGGED;
		snprintf(f->reason, sizeof(f->reason), "%s", reason);
	} else {
		f->cls = FC_EXACT;
		snprintf(f->reason, sizeof(f->reason), "%s", reason ? reason : "-");
	}
	json_array_foreach(jblocks, bi, jb) {
		uint64_t a, e;

		if (!parse_hex(json_object_get(jb, "addr"), &a) ||
		    !parse_hex(json_object_get(jb, "end"), &e)) {
			fprintf(stderr, "sweep_oracle: function %s: bad block %zu\n", f->name, bi);
			return -1;
		}
		if ((a < s->text_lo || e > s->text_hi) && f->cls != FC_EXCLUDED)
			f->cls = FC_OUTSIDE;
	}
	if (f->cls == FC_EXCLUDED || f->cls == FC_OUTSIDE)
		return 0;
	json_array_foreach(jblocks, bi, jb) {
		json_t *c = json_object_get(jb, "count");
		uint64_t a, e, want, have, faulted = 0;
		size_t vi, k;
		json_t *v;

		parse_hex(json_object_get(jb, "addr"), &a);
		parse_hex(json_object_get(jb, "end"), &e);
		{
			/* A prefix pair (the next block starts inside this one and ends with it):
			 * the next one's instruction is its own, not counted twice. */
			uint64_t na;

			if (parse_hex(json_object_get(json_array_get(jblocks, bi + 1), "addr"), &na) &&
			    na > a && na < e)
				e = na;
		}
		for (k = insn_at(&s->cg, a); k < s->cg.ninsns && s->cg.insns[k].addr < e; k++) {
			f->ir += s->cg.insns[k].count;
			if (f->cls == FC_EXACT)
				s->cover[k] = 1;
			else if (!s->cover[k])
				s->cover[k] = 2;
		}
		if (!json_is_integer(c)) {
			(*nnull)++;
			continue;
		}
		have = (uint64_t)json_integer_value(c);
		/* A frame stopped inside the block by a fatal signal: callgrind drops the
		 * counts of the superblock that faulted. */
		json_array_foreach(jv, vi, v) {
			uint64_t at, from;

			if (parse_hex(json_object_get(v, "stopped_at"), &at) &&
			    parse_hex(json_object_get(v, "from"), &from) && from == a && at >= a &&
			    at < e && json_is_integer(json_object_get(v, "count")))
				faulted += (uint64_t)json_integer_value(json_object_get(v, "count"));
		}
		want = execs(&s->cg, a) + faulted;
		(*nblocks)++;
		f->blocks++;
		if (want != have) {
			f->diffs++;
			printf("diff\t%s\t%s\t0x%" PRIx64 "\t%" PRIu64 "\t%" PRIu64 "\n",
			       class_names[f->cls], f->name, a, have, want);
		}
	}
	return 0;
}

static int cmp_func_addr(const void *a, const void *b)
{
	const struct sfunc *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int main(int argc, char **argv)
{
	const char *files[MAX_CG_FILES], *profile = NULL, *binary = NULL;
	struct sweep s;
	json_error_t jerr;
	json_t *root = NULL, *sec = NULL, *funcs, *jf;
	int nfiles = 0, i, ret = 2;
	bool lib = false;
	size_t fi, k;
	unsigned long nblocks = 0, nnull = 0, silent = 0, reported = 0, ncls[4] = { 0 };
	uint64_t exact_ir = 0, flagged_ir = 0, stray_ir = 0, unwind = 0, viol = 0;

	memset(&s, 0, sizeof(s));
	for (i = 1; i < argc; i++) {
		if (i + 1 < argc && !strcmp(argv[i], "--profile")) {
			profile = argv[++i];
		} else if (i + 1 < argc && !strcmp(argv[i], "--binary")) {
			binary = argv[++i];
		} else if (i + 1 < argc && !strcmp(argv[i], "--callgrind")) {
			if (nfiles == MAX_CG_FILES) {
				fprintf(stderr, "sweep_oracle: too many --callgrind files\n");
				return 2;
			}
			files[nfiles++] = argv[++i];
		} else if (!strcmp(argv[i], "--lib")) {
			lib = true;
		} else {
			usage();
			return 2;
		}
	}
	if (!profile || !binary || !nfiles) {
		usage();
		return 2;
	}
	if (load_elf(&s, binary))
		goto out;
	for (i = 0; i < nfiles; i++) {
		struct cg_profile one;

		if (cg_profile__load(&one, files[i], binary)) {
			fprintf(stderr, "sweep_oracle: %s\n", one.error);
			cg_profile__free(&one);
			goto out;
		}
		if (!cg_profile__whole(&one)) {
			fprintf(stderr, "sweep_oracle: %s: parsed Ir total %" PRIu64
				" != summary %" PRIu64 "\n", files[i], one.total_ir,
				one.summary_ir);
			cg_profile__free(&one);
			goto out;
		}
		if (cg_profile__add(&s.cg, &one)) {
			fprintf(stderr, "sweep_oracle: out of memory\n");
			cg_profile__free(&one);
			goto out;
		}
		cg_profile__free(&one);
	}
	root = json_load_file(profile, 0, &jerr);
	if (!root) {
		fprintf(stderr, "sweep_oracle: %s:%d: %s\n", profile, jerr.line, jerr.text);
		goto out;
	}
	sec = root;
	if (lib) {
		json_t *jl, *libs = json_object_get(root, "libraries");
		const char *base = strrchr(binary, '/') ? strrchr(binary, '/') + 1 : binary;

		sec = NULL;
		json_array_foreach(libs, k, jl) {
			const char *p = json_string_value(
				json_object_get(json_object_get(jl, "binary"), "path"));
			const char *pb = p && strrchr(p, '/') ? strrchr(p, '/') + 1 : p;

			if (p && (!strcmp(p, binary) || !strcmp(pb, base)))
				sec = jl;
		}
		if (!sec) {
			fprintf(stderr, "sweep_oracle: %s: no library %s in the profile\n", profile,
				binary);
			goto out;
		}
	}
	{
		json_t *jb = json_object_get(json_object_get(sec, "binary"), "build_id");

		if (json_is_string(jb) && s.build_id[0] &&
		    strcasecmp(json_string_value(jb), s.build_id)) {
			fprintf(stderr, "sweep_oracle: %s: build id %s is not %s's (%s)\n", profile,
				json_string_value(jb), binary, s.build_id);
			goto out;
		}
	}
	funcs = json_object_get(sec, "functions");
	if (!json_is_array(funcs)) {
		fprintf(stderr, "sweep_oracle: %s: no \"functions\" array\n", profile);
		goto out;
	}
	unwind = (uint64_t)json_integer_value(
		json_object_get(json_object_get(root, "run"), "unwind_failures"));
	viol = (uint64_t)json_integer_value(json_object_get(sec, "violations"));
	s.nf = json_array_size(funcs);
	s.f = calloc(s.nf + 1, sizeof(*s.f));
	s.cover = calloc(s.cg.ninsns + 1, 1);
	if (!s.f || !s.cover) {
		fprintf(stderr, "sweep_oracle: out of memory\n");
		goto out;
	}
	json_array_foreach(funcs, fi, jf) {
		struct sfunc *f = &s.f[fi];

		f->jf = jf;
		f->name = json_string_value(json_object_get(jf, "name"));
		if (!f->name || !parse_hex(json_object_get(jf, "addr"), &f->addr)) {
			fprintf(stderr, "sweep_oracle: %s: function %zu: bad name or addr\n", profile,
				fi);
			goto out;
		}
		if (check_func(&s, f, &nblocks, &nnull))
			goto out;
		ncls[f->cls]++;
		if (f->cls == FC_EXACT)
			silent += f->diffs;
		else
			reported += f->diffs;
	}
	/* Executed code in no checked block, by the nearest function at or before it. */
	qsort(s.f, s.nf, sizeof(*s.f), cmp_func_addr);
	for (k = 0, fi = 0; k < s.cg.ninsns; k++) {
		uint64_t a = s.cg.insns[k].addr, c = s.cg.insns[k].count;

		if (s.cover[k] == 1) {
			exact_ir += c;
			continue;
		}
		if (s.cover[k] == 2) {
			flagged_ir += c;
			continue;
		}
		stray_ir += c;
		while (fi + 1 < s.nf && s.f[fi + 1].addr <= a)
			fi++;
		if (s.nf && s.f[fi].addr <= a) {
			struct sfunc *f = &s.f[fi];

			if (!f->stray_ir)
				f->stray_lo = a;
			f->stray_hi = a;
			f->stray_ir += c;
		}
	}
	for (fi = 0; fi < s.nf; fi++) {
		struct sfunc *f = &s.f[fi];
		json_t *jb;
		size_t bi, o;

		if (!f->diffs)
			continue;
		json_array_foreach(json_object_get(f->jf, "blocks"), bi, jb) {
			uint64_t a, e;

			parse_hex(json_object_get(jb, "addr"), &a);
			parse_hex(json_object_get(jb, "end"), &e);
			for (o = 0; o < s.nf; o++)
				if (o != fi && s.f[o].addr >= a && s.f[o].addr < e)
					printf("hint\t%s\t0x%" PRIx64 "\t%s\t0x%" PRIx64 "\t%s\n",
					       f->name, a, s.f[o].name, s.f[o].addr,
					       class_names[s.f[o].cls]);
		}
	}
	for (fi = 0; fi < s.nf; fi++) {
		struct sfunc *f = &s.f[fi];
		char cnt[32] = "null";

		if (f->has_count)
			snprintf(cnt, sizeof(cnt), "%" PRIu64, f->count);
		if (f->ir || f->diffs || f->stray_ir || f->cls != FC_EXACT)
			printf("func\t%s\t%s\t0x%" PRIx64 "\t%" PRIu64 "\t%lu\t%lu\t%s\t%s\n",
			       class_names[f->cls], f->name, f->addr, f->ir + f->stray_ir, f->blocks,
			       f->diffs, cnt, f->reason);
		if (f->stray_ir)
			printf("stray\t%s\t0x%" PRIx64 "\t%s\t%" PRIu64 "\t0x%" PRIx64 "\t0x%" PRIx64
			       "\n", f->name, f->addr, class_names[f->cls], f->stray_ir, f->stray_lo,
			       f->stray_hi);
	}
	printf("summary\tobject_ir=%" PRIu64 " exact_ir=%" PRIu64 " flagged_ir=%" PRIu64
	       " stray_ir=%" PRIu64 " silent=%lu reported=%lu blocks=%lu null_blocks=%lu "
	       "funcs_exact=%lu funcs_flagged=%lu funcs_excluded=%lu funcs_outside=%lu "
	       "unwind_failures=%" PRIu64 " violations=%" PRIu64 "\n",
	       s.cg.object_ir, exact_ir, flagged_ir, stray_ir, silent, reported, nblocks, nnull,
	       ncls[FC_EXACT], ncls[FC_FLAGGED], ncls[FC_EXCLUDED], ncls[FC_OUTSIDE], unwind, viol);
	ret = silent ? 1 : 0;
out:
	json_decref(root);
	free(s.f);
	free(s.cover);
	cg_profile__free(&s.cg);
	return ret;
}
