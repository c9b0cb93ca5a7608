/*
 * The stored heuristic hit rates (see heuristic_rates.h).
 */
#include "user/report/heuristic_rates.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "user/util/log.h"
#include "user/util/xdg.h"

#define RATES_FORMAT "edgeprof-heuristics"
#define RATES_FILE "heuristics.json"

int heuristic_rates__path(char *buf, size_t len)
{
	return xdg__path(buf, len, "XDG_CONFIG_HOME", ".config", RATES_FILE);
}

static int parse(const char *path, double rates[BH_COUNT])
{
	json_error_t jerr;
	json_t *o = json_load_file(path, 0, &jerr), *r;
	const char *fmt = NULL;
	int ret = -1;

	if (!o)
		return pr_err("'%s': %s", path, jerr.text);
	if (json_unpack(o, "{s:s,s:o}", "format", &fmt, "rates", &r) || strcmp(fmt, RATES_FORMAT) ||
	    !json_is_object(r)) {
		pr_err("'%s': not an edgeprof heuristic-rates file", path);
		goto out;
	}
	for (unsigned k = 0; k < BH_COUNT; k++) {
		json_t *v = json_object_get(r, bh__name(k));

		if (!v)
			continue;
		if (!json_is_number(v) || !(json_number_value(v) > 0 && json_number_value(v) < 1)) {
			pr_err("'%s': the rate of %s is not a number between 0 and 1", path,
			       bh__name(k));
			goto out;
		}
		rates[k] = json_number_value(v);
	}
	ret = 0;
out:
	json_decref(o);
	return ret;
}

int heuristic_rates__load(const char *path, double rates[BH_COUNT], char *from, size_t len)
{
	char def[PATH_MAX];

	bh__default_rates(rates);
	if (from && len)
		from[0] = '\0';
	if (!path) {
		if (heuristic_rates__path(def, sizeof(def)) || access(def, F_OK))
			return 0;
		path = def;
	}
	if (parse(path, rates)) {
		bh__default_rates(rates);
		return -1;
	}
	if (from)
		snprintf(from, len, "%s", path);
	return 0;
}

int heuristic_rates__save(const char *path, const double rates[BH_COUNT],
			  const uint64_t branches[BH_COUNT], char *const *profiles,
			  size_t nprofiles, char *from, size_t len)
{
	char def[PATH_MAX], tmp[PATH_MAX + 16];
	json_t *o = json_object(), *r = json_object(), *b = json_object(), *p = json_array();
	int fd, ret = -1;
	FILE *f;

	if (!path) {
		if (heuristic_rates__path(def, sizeof(def))) {
			pr_err("cannot place the heuristic-rates file: no home directory (set "
			       "XDG_CONFIG_HOME or HOME)");
			goto out;
		}
		path = def;
		if (xdg__make_parents(path, true))
			goto out;
	}
	if (!o || !r || !b || !p)
		goto oom;
	for (unsigned k = 0; k < BH_COUNT; k++)
		if (json_object_set_new(r, bh__name(k), json_real(rates[k])) ||
		    json_object_set_new(b, bh__name(k), json_integer((json_int_t)branches[k])))
			goto oom;
	for (size_t i = 0; i < nprofiles; i++)
		if (json_array_append_new(p, json_string(profiles[i])))
			goto oom;
	if (json_object_set_new(o, "format", json_string(RATES_FORMAT)) ||
	    json_object_set_new(o, "version", json_integer(1)) ||
	    json_object_set(o, "rates", r) || json_object_set(o, "branches", b) ||
	    json_object_set(o, "profiles", p))
		goto oom;
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0) {
		pr_err("cannot create '%s': %s", tmp, strerror(errno));
		goto out;
	}
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(tmp);
		goto oom;
	}
	if (json_dumpf(o, f, JSON_INDENT(2) | JSON_REAL_PRECISION(6)) || fputc('\n', f) == EOF ||
	    fflush(f) || fchmod(fileno(f), 0644)) {
		pr_err("cannot write '%s': %s", tmp, strerror(errno ? errno : EIO));
		fclose(f);
		unlink(tmp);
		goto out;
	}
	if (fclose(f) || rename(tmp, path)) {
		pr_err("cannot write '%s': %s", path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	if (from)
		snprintf(from, len, "%s", path);
	ret = 0;
	goto out;
oom:
	pr_err("out of memory writing '%s'", path);
out:
	json_decref(o);
	json_decref(r);
	json_decref(b);
	json_decref(p);
	return ret;
}
