/*
 * The may-longjmp analysis and its pseudo-edges (see longjmp.h): a function-level fixpoint
 * over the call sites, then one pass over the call blocks.
 */
#include "longjmp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const setjmp_names[] = {"_setjmp", "setjmp", "sigsetjmp", "__sigsetjmp"};

static const char *const longjmp_names[] = {"longjmp", "_longjmp", "siglongjmp", "__longjmp_chk"};

/* C library functions that never call back into user code and never longjmp (no callback
 * argument, no handler run on the caller's stack); sorted for bsearch. A signal handler
 * that longjmps out of one of them is the caller's to follow (see longjmp.h). */
static const char *const safe_names[] = {
    "__ctype_b_loc",
    "__ctype_tolower_loc",
    "__ctype_toupper_loc",
    "__errno_location",
    "__fprintf_chk",
    "__memcpy_chk",
    "__memmove_chk",
    "__memset_chk",
    "__printf_chk",
    "__snprintf_chk",
    "__sprintf_chk",
    "__stpcpy_chk",
    "__strcat_chk",
    "__strcpy_chk",
    "__strncpy_chk",
    "__uflow",
    "__vfprintf_chk",
    "__vsnprintf_chk",
    "_setjmp",
    "abs",
    "acos",
    "asin",
    "atan",
    "atan2",
    "atof",
    "atoi",
    "atol",
    "calloc",
    "ceil",
    "clearerr",
    "clock",
    "clock_gettime",
    "close",
    "cos",
    "cosh",
    "difftime",
    "exp",
    "exp2",
    "fabs",
    "fclose",
    "feof",
    "ferror",
    "fflush",
    "fgetc",
    "fgets",
    "fileno",
    "flockfile",
    "floor",
    "fmod",
    "fopen",
    "fopen64",
    "fprintf",
    "fputc",
    "fputs",
    "fread",
    "free",
    "freopen",
    "freopen64",
    "frexp",
    "fseek",
    "fseeko",
    "fseeko64",
    "ftell",
    "ftello",
    "ftello64",
    "funlockfile",
    "fwrite",
    "getc",
    "getenv",
    "getpid",
    "gettimeofday",
    "gmtime",
    "gmtime_r",
    "isatty",
    "labs",
    "ldexp",
    "localeconv",
    "localtime",
    "localtime_r",
    "log",
    "log10",
    "log2",
    "lseek",
    "malloc",
    "memchr",
    "memcmp",
    "memcpy",
    "memmove",
    "memrchr",
    "memset",
    "mkstemp",
    "mkstemp64",
    "mktime",
    "open",
    "open64",
    "pow",
    "printf",
    "putc",
    "putchar",
    "puts",
    "read",
    "realloc",
    "remove",
    "rename",
    "setlocale",
    "setvbuf",
    "sigemptyset",
    "sigsetjmp",
    "sin",
    "sinh",
    "snprintf",
    "sprintf",
    "sqrt",
    "stpcpy",
    "strcat",
    "strchr",
    "strcmp",
    "strcoll",
    "strcpy",
    "strcspn",
    "strdup",
    "strerror",
    "strftime",
    "strlen",
    "strncat",
    "strncmp",
    "strncpy",
    "strndup",
    "strnlen",
    "strpbrk",
    "strrchr",
    "strspn",
    "strstr",
    "strtod",
    "strtof",
    "strtol",
    "strtold",
    "strtoll",
    "strtoul",
    "strtoull",
    "tan",
    "tanh",
    "time",
    "tmpfile",
    "tmpfile64",
    "tolower",
    "toupper",
    "ungetc",
    "vfprintf",
    "vsnprintf",
    "write",
};

static bool in_list(const char *const *list, size_t n, const char *name)
{
	for (size_t i = 0; name && i < n; i++)
		if (!strcmp(list[i], name))
			return true;
	return false;
}

bool cfg_longjmp__is_setjmp(const char *name)
{
	return in_list(setjmp_names, sizeof(setjmp_names) / sizeof(*setjmp_names), name);
}

bool cfg_longjmp__is_longjmp(const char *name)
{
	return in_list(longjmp_names, sizeof(longjmp_names) / sizeof(*longjmp_names), name);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool is_safe(const char *name)
{
	return name && (cfg_longjmp__is_setjmp(name) ||
			bsearch(&name, safe_names, sizeof(safe_names) / sizeof(*safe_names),
				sizeof(*safe_names), cmp_name));
}

/* The function whose entry is ADDR, or -1 (PROG's functions are sorted by entry). */
static long func_at(const struct cfg_program *prog, uint64_t addr)
{
	size_t lo = 0, hi = prog->nfuncs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (prog->funcs[mid].entry < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < prog->nfuncs && prog->funcs[lo].entry == addr ? (long)lo : -1;
}

/* Whether PROG defines a function named NAME (NAMES: its function names, sorted). */
static bool defines(const char *const *names, size_t n, const char *name)
{
	return name && n && bsearch(&name, names, n, sizeof(*names), cmp_name);
}

/* Whether call C may end in a longjmp, given what is known of the functions so far (MAY);
 * NAMES[0..NNAMES) are PROG's function names, sorted (a C library name the program defines
 * itself may be interposed by it: not taken as safe). */
static bool call_may_longjmp(const struct cfg_program *prog, const struct cfg_call *c,
			     const bool *may, const char *const *names, size_t nnames)
{
	long fi;

	if (cfg_longjmp__is_longjmp(c->name))
		return true;
	if (c->external)
		return !is_safe(c->name) || defines(names, nnames, c->name);
	if (c->indirect || !c->target)
		return true;
	fi = func_at(prog, c->target);
	if (fi < 0)
		return !is_safe(c->name); /* into no known function: unknown code */
	if (cfg_longjmp__is_setjmp(prog->funcs[fi].name))
		return false;
	return may[fi];
}

static bool has_call_return(const struct cfg_func *f, uint32_t b)
{
	for (uint32_t k = 0; k < f->blocks[b].nsucc; k++)
		if (f->edges[f->succ[f->blocks[b].first_succ + k]].kind == EDGE_CALL_RETURN)
			return true;
	return false;
}

static int cmp_pseudo(const void *a, const void *b)
{
	const struct cfg_pseudo *x = a, *y = b;

	return x->block < y->block ? -1 : x->block > y->block;
}

int cfg_longjmp__analyze(struct cfg_longjmp *lj, const struct cfg_program *prog)
{
	size_t n = prog->nfuncs, cap = 0, i, nnames = 0;
	const char **names = NULL;
	bool changed = true;

	memset(lj, 0, sizeof(*lj));
	lj->may_longjmp = calloc(n + 1, sizeof(*lj->may_longjmp));
	lj->first = calloc(n + 1, sizeof(*lj->first));
	if (!lj->may_longjmp || !lj->first)
		goto nomem;
	for (i = 0; i < n; i++) {
		const struct cfg_func *f = &prog->funcs[i];

		for (uint32_t k = 0; k < f->ncalls; k++)
			lj->active |= cfg_longjmp__is_setjmp(f->calls[k].name) ||
				      cfg_longjmp__is_longjmp(f->calls[k].name);
		lj->active |= cfg_longjmp__is_longjmp(f->name) || cfg_longjmp__is_setjmp(f->name);
		cap += f->ncalls;
		lj->may_longjmp[i] =
		    (f->flags & (CFG_FUNC_UNRESOLVED | CFG_FUNC_BAD_CODE | CFG_FUNC_RUNS_OFF)) ||
		    cfg_longjmp__is_longjmp(f->name);
	}
	if (!lj->active)
		return 0;
	names = malloc((n ? n : 1) * sizeof(*names));
	if (!names)
		goto nomem;
	for (i = 0; i < n; i++)
		if (prog->funcs[i].name)
			names[nnames++] = prog->funcs[i].name;
	if (nnames)
		qsort(names, nnames, sizeof(*names), cmp_name);
	while (changed) {
		changed = false;
		for (i = 0; i < n; i++) {
			const struct cfg_func *f = &prog->funcs[i];

			for (uint32_t k = 0; k < f->ncalls && !lj->may_longjmp[i]; k++)
				if (call_may_longjmp(prog, &f->calls[k], lj->may_longjmp, names,
						     nnames)) {
					lj->may_longjmp[i] = true;
					changed = true;
				}
		}
	}
	lj->v = malloc((cap ? cap : 1) * sizeof(*lj->v));
	if (!lj->v)
		goto nomem;
	for (i = 0; i < n; i++) {
		const struct cfg_func *f = &prog->funcs[i];
		size_t start = lj->nv;

		lj->first[i] = (uint32_t)lj->nv;
		for (uint32_t k = 0; k < f->ncalls; k++) {
			const struct cfg_call *c = &f->calls[k];
			long fi = c->external || c->indirect || !c->target
				      ? -1
				      : func_at(prog, c->target);
			bool setjmp = cfg_longjmp__is_setjmp(c->name) ||
				      (fi >= 0 && cfg_longjmp__is_setjmp(prog->funcs[fi].name));
			struct cfg_pseudo ps = {.block = c->block};
			bool dup = false;

			if (c->tail || c->noreturn || c->block >= f->nblocks ||
			    f->blocks[c->block].end - 1 < c->site || !has_call_return(f, c->block))
				continue;
			if (setjmp)
				ps.kind = CFG_PSEUDO_RESUME;
			else if (call_may_longjmp(prog, c, lj->may_longjmp, names, nnames))
				ps.kind = CFG_PSEUDO_ABANDON;
			else
				continue;
			for (size_t j = start; j < lj->nv; j++)
				dup |= lj->v[j].block == ps.block;
			if (dup)
				continue;
			lj->v[lj->nv++] = ps;
			if (ps.kind == CFG_PSEUDO_ABANDON)
				lj->nabandon++;
			else
				lj->nresume++;
		}
		if (lj->nv > start)
			qsort(&lj->v[start], lj->nv - start, sizeof(*lj->v), cmp_pseudo);
	}
	lj->first[n] = (uint32_t)lj->nv;
	free(names);
	return 0;
nomem:
	free(names);
	cfg_longjmp__free(lj);
	return -ENOMEM;
}

void cfg_longjmp__free(struct cfg_longjmp *lj)
{
	free(lj->may_longjmp);
	free(lj->first);
	free(lj->v);
	memset(lj, 0, sizeof(*lj));
}
