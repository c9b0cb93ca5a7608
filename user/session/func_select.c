/*
 * --only / --exclude (see func_select.h): fnmatch(3) globs on function names, or on source
 * files (the line table's file of the function's entry address: its full path, or its base
 * name when the glob has no '/').
 */
#include "user/session/func_select.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "cfg/srcline.h"
#include "user/util/log.h"

int func_select__add(struct func_select *fs, const char *pattern, bool exclude)
{
	struct func_pattern *p;
	bool file = strncmp(pattern, "file:", 5) == 0;

	if (fs->n == FUNC_SELECT_MAX)
		return -E2BIG;
	if (!pattern[file ? 5 : 0])
		return -EINVAL;
	p = &fs->pat[fs->n++];
	*p = (struct func_pattern){ .glob = pattern + (file ? 5 : 0), .file = file,
				    .exclude = exclude };
	fs->has_only |= !exclude;
	return 0;
}

bool func_select__active(const struct func_select *fs)
{
	return fs && fs->n;
}

static bool file_matches(const char *glob, const char *path)
{
	const char *base = strrchr(path, '/');

	if (!fnmatch(glob, path, 0))
		return true;
	return !strchr(glob, '/') && base && !fnmatch(glob, base + 1, 0);
}

static bool pattern_matches(const struct func_pattern *p, const struct cfg_func *f,
			    const char *file)
{
	if (p->file)
		return file && file_matches(p->glob, file);
	return f->name && !fnmatch(p->glob, f->name, 0);
}

int func_select__apply(struct func_select *fs, const struct cfg_program *prog, bool *select)
{
	struct srcline *sl = NULL;
	bool files = false;

	for (size_t k = 0; k < fs->n; k++)
		files |= fs->pat[k].file;
	/* No line tables: no function is in any file (file: patterns match nothing here). */
	if (files && srcline__open(&sl, prog->img) == -ENOMEM)
		return -ENOMEM;
	for (size_t i = 0; i < prog->nfuncs; i++) {
		const struct cfg_func *f = &prog->funcs[i];
		const char *file = NULL;
		int line;
		bool only = false, excluded = false;

		if (sl && srcline__lookup(sl, f->entry, &file, &line))
			file = NULL;
		for (size_t k = 0; k < fs->n; k++) {
			struct func_pattern *p = &fs->pat[k];

			if (!pattern_matches(p, f, file))
				continue;
			p->matched++;
			if (p->exclude)
				excluded = true;
			else
				only = true;
		}
		select[i] = (only || !fs->has_only) && !excluded;
	}
	if (sl)
		srcline__close(sl);
	return 0;
}

int func_select__check(const struct func_select *fs)
{
	char list[512];
	size_t len = 0;
	bool any = false;

	for (size_t k = 0; k < fs->n; k++)
		any |= fs->pat[k].matched > 0;
	for (size_t k = 0; k < fs->n; k++) {
		const struct func_pattern *p = &fs->pat[k];

		if (p->matched)
			continue;
		if (any)
			pr_warn("--%s '%s%s' matches no function", p->exclude ? "exclude" : "only",
				p->file ? "file:" : "", p->glob);
		else if (len < sizeof(list))
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s'%s%s'",
						len ? ", " : "", p->file ? "file:" : "", p->glob);
	}
	if (any)
		return 0;
	pr_err("no function matches %s %s", fs->n > 1 ? "the patterns" : "the pattern", list);
	return -ENOENT;
}
