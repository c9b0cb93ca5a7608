/*
 * `edgeprof calibrate`'s measurement and its cache file (see calibration.h): re-executes
 * edgeprof as the target, times its loop with and without one probe per class, checks the
 * BPF counts, and reads / writes site-costs.json for placement.
 */
#include "user/count/calibration.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bpf/edgeprof.h"
#include "user/count/calibrate_patch.h"
#include "user/util/clock.h"
#include "user/util/log.h"
#include "user/util/xdg.h"
#include "user/count/probes.h"

#define CALIBRATION_VERSION 1
#define CALIBRATION_FILE "site-costs.json"

static const struct calib_class_def {
	const char *name, *insn;
	unsigned probe_class;
	const char *label;
} class_defs[CALIB_NCLASSES] = {
    [CALIB_NOP5] = {"nop5", "nopl 0x0(%rax,%rax,1)", PROBE_NOP5, ep_calib_nop5},
    [CALIB_JCC] = {"jcc", "jz rel8 (branch site)", PROBE_EMULATED, ep_calib_jcc},
    [CALIB_PUSH] = {"push", "push %rbx", PROBE_EMULATED, ep_calib_push},
    [CALIB_MOV] = {"mov", "mov %rdx,%rax", PROBE_STEPPED, ep_calib_mov},
    [CALIB_PATCH] = {"patch", "nopl 0x0(%rax,%rax,1), flags dead", PROBE_PATCH, ep_calib_patch},
    [CALIB_PATCH_FLAGS] = {"patch-flags", "mov %rdx,%rax; xchg %ax,%ax, flags live",
			   PROBE_PATCH_FLAGS, ep_calib_patch_flags},
};

/* Names of the classes in the file's "probe_class" and "site_costs". */
static const char *const probe_class_names[] = {
    [PROBE_STEPPED] = "stepped", [PROBE_EMULATED] = "emulated",	 [PROBE_NOP5] = "nop5",
    [PROBE_NEVER] = NULL,	 [PROBE_PATCH] = "patch",	 [PROBE_PATCH_FLAGS] = "patch_flags",
};

/* The patched classes' iterations: a hit costs a few ns, so many more than a uprobe's (whose
 * hit costs hundreds) to rise above the noise; at least a few ms of loop. */
#define PATCH_ITERATIONS_FACTOR 100
#define PATCH_MIN_ITERATIONS 2000000

/* The file offset of ADDR in its mapping of this executable, from /proc/self/maps. */
static int file_offset_of(const void *addr, uint64_t *off)
{
	uintptr_t a = (uintptr_t)addr;
	char line[PATH_MAX + 128];
	FILE *f = fopen("/proc/self/maps", "re");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end, pgoff;

		if (sscanf(line, "%lx-%lx %*s %lx", &start, &end, &pgoff) == 3 && a >= start &&
		    a < end) {
			*off = a - start + pgoff;
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of V[0..N) (N > 0); sorts V. */
static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* How a run's target is counted before its loop starts: by the probes P, or (CLS a patched
 * class) by a patched counter in CP; neither when P is NULL and CP is NULL. */
struct counting {
	struct probes *p;
	struct calibrate_patch *cp;
	enum calib_class cls;
	const char *exe; /* with CP: this executable's real path */
};

/* Reads from FD into BUF (SIZE > 0 bytes, NUL-terminated) until a newline (ONE_LINE) or the
 * end. Returns the length. */
static size_t read_out(int fd, char *buf, size_t size, bool one_line)
{
	size_t len = 0;
	ssize_t r;

	while (len < size - 1 && (!one_line || !memchr(buf, '\n', len)) &&
	       (r = read(fd, buf + len, one_line ? 1 : size - 1 - len)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		len += (size_t)r;
	}
	buf[len] = '\0';
	return len;
}

/* Runs the target for N iterations in a child, counted as C says (C may be NULL) from the
 * moment it is ready. Stores the loop's time in *NS. Returns 0 or -1 (reported). */
static int run_target(const struct counting *c, uint64_t n, double *ns)
{
	int go[2] = {-1, -1}, out[2] = {-1, -1}, status, ret = -1;
	char nbuf[32], buf[64];
	char *argv[] = {"edgeprof", "-q", "calibrate", "--target-loop", nbuf, NULL};
	bool counted = true;
	pid_t pid;

	snprintf(nbuf, sizeof(nbuf), "%" PRIu64, n);
	if (pipe2(go, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) {
		pr_err("cannot create a pipe: %s", strerror(errno));
		goto close_fds;
	}
	pid = fork();
	if (pid < 0) {
		pr_err("cannot fork: %s", strerror(errno));
		goto close_fds;
	}
	if (pid == 0) {
		if (dup2(go[0], STDIN_FILENO) < 0 || dup2(out[1], STDOUT_FILENO) < 0)
			_exit(127);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	close(go[0]);
	close(out[1]);
	go[0] = out[1] = -1;
	/* Counted once it has executed this binary and is about to wait for "go". */
	if (strcmp((read_out(out[0], buf, sizeof(buf), true), buf), "ready\n")) {
		pr_err("the calibration target did not start");
		counted = false;
	} else if (c && c->p) {
		counted = !probes__add_pid(c->p, pid);
	} else if (c && c->cp) {
		counted = !calibrate_patch__install(c->cp, pid, c->exe, class_defs[c->cls].label,
						    c->cls == CALIB_PATCH_FLAGS);
	}
	if (!counted) {
		kill(pid, SIGKILL);
	} else if (write(go[1], "g", 1) != 1) {
		pr_err("cannot start the calibration target: %s", strerror(errno));
		kill(pid, SIGKILL);
	}
	close(go[1]);
	go[1] = -1;
	read_out(out[0], buf, sizeof(buf), false);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			pr_err("cannot wait for the calibration target: %s", strerror(errno));
			goto close_fds;
		}
	}
	if (!counted)
		goto close_fds;
	if (!WIFEXITED(status) || WEXITSTATUS(status) || sscanf(buf, "%lf", ns) != 1) {
		if (WIFSIGNALED(status))
			pr_err("the calibration target was killed by signal %d", WTERMSIG(status));
		else
			pr_err("the calibration target failed (exit status %d)",
			       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		goto close_fds;
	}
	ret = 0;
close_fds:
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (out[i] >= 0)
			close(out[i]);
	}
	return ret;
}

/* One probed run of class CLS: loads the BPF program, attaches one probe to the class's
 * instruction in EXE (file offset OFF), runs the target and checks the counts. */
static int probed_run(enum calib_class cls, const char *exe, uint64_t off, uint64_t n, double *ns)
{
	struct probe_site site = {
	    .kind = SITE_COUNT,
	    .probe_class = class_defs[cls].probe_class,
	    .counter = 0,
	    .counter2 = PLACEMENT_NO_COUNTER,
	};
	uint64_t cookie, counts[2] = {0, 0};
	struct probes *p;
	int err;

	if (cls == CALIB_JCC) {
		/* jz, never taken: counter 0 counts taken, counter 1 not taken. */
		site.kind = SITE_BRANCH;
		site.cc = 0x4;
		site.counter2 = 1;
	}
	cookie = probes__cookie(&site);
	err = probes__open(&p, 2);
	if (err)
		return err;
	err = probes__attach(p, exe, &off, &cookie, 1);
	if (!err)
		err = run_target(&(struct counting){.p = p}, n, ns) ? -EIO : 0;
	if (!err)
		err = probes__read(p, counts);
	probes__close(p);
	if (err)
		return err;
	if (cls == CALIB_JCC && (counts[0] != 0 || counts[1] != n)) {
		pr_err("branch probe on %s counted %" PRIu64 " taken and %" PRIu64 " not taken, "
		       "expected 0 and %" PRIu64 ": counts are not exact",
		       class_defs[cls].insn, counts[0], counts[1], n);
		return -EPROTO;
	}
	if (cls != CALIB_JCC && counts[0] != n) {
		pr_err("probe on %s counted %" PRIu64 " hits, expected %" PRIu64 ": counts are "
		       "not exact",
		       class_defs[cls].insn, counts[0], n);
		return -EPROTO;
	}
	return 0;
}

/* One patched run of class CLS: the target (EXE) gets one in-process counter on its window,
 * which must count N hits. */
static int patched_run(enum calib_class cls, const char *exe, uint64_t n, double *ns)
{
	struct calibrate_patch cp = {0};
	uint64_t hits;
	int err;

	err = run_target(&(struct counting){.cp = &cp, .cls = cls, .exe = exe}, n, ns) ? -EIO : 0;
	hits = calibrate_patch__hits(&cp);
	calibrate_patch__close(&cp);
	if (!err && hits != n) {
		pr_err("patched counter on %s counted %" PRIu64 " hits, expected %" PRIu64
		       ": counts are not exact",
		       class_defs[cls].insn, hits, n);
		err = -EPROTO;
	}
	return err;
}

static void fill_identity(struct calibration *c)
{
	struct utsname u;
	time_t now = time(NULL);
	struct tm tm;

	if (uname(&u) == 0) {
		snprintf(c->kernel, sizeof(c->kernel), "%s", u.release);
		snprintf(c->machine, sizeof(c->machine), "%s", u.machine);
	}
	if (gmtime_r(&now, &tm))
		strftime(c->date, sizeof(c->date), "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int calibration__run(struct calibration *c, uint64_t iterations, unsigned repeat)
{
	double *unprobed, *unpatched, *probed[CALIB_NCLASSES] = {NULL}, warmup;
	uint64_t offs[CALIB_NCLASSES];
	struct sigaction ign = {.sa_handler = SIG_IGN}, old_pipe;
	struct probes *p;
	char exe[PATH_MAX];
	size_t nunprobed = 0, nunpatched = 0;
	ssize_t len;
	int err = -ENOMEM;

	memset(c, 0, sizeof(*c));
	c->iterations = iterations;
	c->repeat = repeat;
	c->patch_iterations = iterations * PATCH_ITERATIONS_FACTOR;
	if (c->patch_iterations < PATCH_MIN_ITERATIONS ||
	    c->patch_iterations / PATCH_ITERATIONS_FACTOR != iterations)
		c->patch_iterations = PATCH_MIN_ITERATIONS;
	fill_identity(c);
	if (!iterations || !repeat)
		return -EINVAL;
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len < 0) {
		err = -errno;
		pr_err("cannot read '/proc/self/exe': %s", strerror(errno));
		return err;
	}
	exe[len] = '\0';
	for (int k = 0; k < CALIB_NCLASSES; k++) {
		err = file_offset_of(class_defs[k].label, &offs[k]);
		if (err) {
			pr_err("cannot find the file offset of the %s probe in '%s'",
			       class_defs[k].name, exe);
			return err;
		}
		pr_debug("%s probe: '%s' file offset %#" PRIx64, class_defs[k].name, exe, offs[k]);
	}

	/* Fail early, with probes__open's message, when BPF is unavailable. */
	err = probes__open(&p, 2);
	if (err)
		return err;
	probes__close(p);

	unprobed = calloc((size_t)repeat * CALIB_NCLASSES, sizeof(*unprobed));
	unpatched = calloc((size_t)repeat * CALIB_NCLASSES, sizeof(*unpatched));
	for (int k = 0; k < CALIB_NCLASSES; k++)
		probed[k] = calloc(repeat, sizeof(double));
	sigaction(SIGPIPE, &ign, &old_pipe);
	err = 0;
	for (int k = 0; k < CALIB_NCLASSES; k++)
		err = err || !probed[k];
	if (err || !unprobed || !unpatched) {
		pr_err("out of memory");
		err = -ENOMEM;
		goto out;
	}
	/* One run to warm caches and page in the binary; not counted. */
	err = run_target(NULL, iterations, &warmup) ? -EIO : 0;
	for (unsigned r = 0; !err && r < repeat; r++) {
		pr_info("calibration round %u of %u", r + 1, repeat);
		for (int k = 0; !err && k < CALIB_NCLASSES; k++) {
			bool patch = k >= CALIB_NUPROBE;
			uint64_t n = patch ? c->patch_iterations : iterations;

			err = run_target(NULL, n, patch ? &unpatched[nunpatched++] :
							  &unprobed[nunprobed++]) ?
				      -EIO :
				      0;
			if (err)
				break;
			err = patch ? patched_run(k, exe, n, &probed[k][r]) :
				      probed_run(k, exe, offs[k], n, &probed[k][r]);
		}
	}
	if (err)
		goto out;

	c->unprobed_ns = median(unprobed, nunprobed);
	c->unpatched_ns = median(unpatched, nunpatched);
	for (int k = 0; k < CALIB_NCLASSES; k++) {
		struct calib_result *res = &c->classes[k];
		bool patch = k >= CALIB_NUPROBE;

		res->name = class_defs[k].name;
		res->insn = class_defs[k].insn;
		res->probe_class = class_defs[k].probe_class;
		res->probed_ns = median(probed[k], repeat);
		res->hits = patch ? c->patch_iterations : iterations;
		res->runs = repeat;
		res->ns_per_hit = (res->probed_ns - (patch ? c->unpatched_ns : c->unprobed_ns)) /
				  (double)res->hits;
		if (!(res->ns_per_hit > 0)) {
			pr_err("the cost of a probe on %s is not measurable (%.1f ns per hit): too "
			       "much noise; try more --iterations or --repeat",
			       res->insn, res->ns_per_hit);
			err = -ERANGE;
			goto out;
		}
	}
	site_costs__defaults(&c->costs);
	c->costs.ns[PROBE_NOP5] = c->classes[CALIB_NOP5].ns_per_hit;
	c->costs.ns[PROBE_EMULATED] =
	    (c->classes[CALIB_JCC].ns_per_hit + c->classes[CALIB_PUSH].ns_per_hit) / 2;
	c->costs.ns[PROBE_STEPPED] = c->classes[CALIB_MOV].ns_per_hit;
	c->costs.ns[PROBE_PATCH] = c->classes[CALIB_PATCH].ns_per_hit;
	c->costs.ns[PROBE_PATCH_FLAGS] = c->classes[CALIB_PATCH_FLAGS].ns_per_hit;
	c->costs.measured = true;
	snprintf(c->costs.date, sizeof(c->costs.date), "%s", c->date);
	err = 0;
out:
	sigaction(SIGPIPE, &old_pipe, NULL);
	free(unprobed);
	free(unpatched);
	for (int k = 0; k < CALIB_NCLASSES; k++)
		free(probed[k]);
	return err;
}

/* JSON number rounded to 0.1: the measurement is not more precise than that. */
static json_t *json_ns(double ns)
{
	return json_real(round(ns * 10) / 10);
}

json_t *calibration__to_json(const struct calibration *c)
{
	json_t *o = json_object(), *classes = json_array(), *costs = json_object();

	if (!o || !classes || !costs) {
		json_decref(o);
		json_decref(classes);
		json_decref(costs);
		return NULL;
	}
	json_object_set_new(o, "version", json_integer(CALIBRATION_VERSION));
	json_object_set_new(o, "kernel", json_string(c->kernel));
	json_object_set_new(o, "machine", json_string(c->machine));
	json_object_set_new(o, "date", json_string(c->date));
	json_object_set_new(o, "iterations", json_integer((json_int_t)c->iterations));
	json_object_set_new(o, "repeat", json_integer(c->repeat));
	json_object_set_new(o, "unprobed_ns", json_ns(c->unprobed_ns));
	json_object_set_new(o, "patch_iterations", json_integer((json_int_t)c->patch_iterations));
	json_object_set_new(o, "unpatched_ns", json_ns(c->unpatched_ns));
	for (int k = 0; k < CALIB_NCLASSES; k++) {
		const struct calib_result *res = &c->classes[k];
		json_t *e = json_object();

		if (!e)
			break;
		json_object_set_new(e, "class", json_string(res->name));
		json_object_set_new(e, "insn", json_string(res->insn));
		json_object_set_new(e, "probe_class",
				    json_string(probe_class_names[res->probe_class]));
		json_object_set_new(e, "ns_per_hit", json_ns(res->ns_per_hit));
		json_object_set_new(e, "hits", json_integer((json_int_t)res->hits));
		json_object_set_new(e, "runs", json_integer(res->runs));
		json_object_set_new(e, "probed_ns", json_ns(res->probed_ns));
		json_array_append_new(classes, e);
	}
	json_object_set_new(o, "classes", classes);
	for (unsigned k = 0; k < PROBE_CLASS_COUNT; k++)
		if (probe_class_names[k])
			json_object_set_new(costs, probe_class_names[k], json_ns(c->costs.ns[k]));
	json_object_set_new(o, "site_costs", costs);
	return o;
}

int calibration__path(char *buf, size_t len)
{
	return xdg__path(buf, len, "XDG_CACHE_HOME", ".cache", CALIBRATION_FILE);
}

int calibration__save(const struct calibration *c, char *path_out, size_t len)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	json_t *o = NULL;
	FILE *f = NULL;
	int fd = -1, err;

	err = calibration__path(path, sizeof(path));
	if (err) {
		pr_err("cannot place the calibration file: no cache directory (set "
		       "XDG_CACHE_HOME or HOME)");
		return err;
	}
	err = xdg__make_parents(path, true);
	if (err)
		return err;
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0) {
		err = -errno;
		pr_err("cannot create '%s': %s", tmp, strerror(errno));
		return err;
	}
	o = calibration__to_json(c);
	f = fdopen(fd, "w");
	if (!o || !f) {
		err = -ENOMEM;
		pr_err("cannot write '%s': %s", tmp, strerror(ENOMEM));
		goto fail;
	}
	fd = -1;
	errno = 0;
	if (json_dumpf(o, f, CALIBRATION_JSON_FLAGS) || fputc('\n', f) == EOF || fflush(f) ||
	    fchmod(fileno(f), 0644) || fsync(fileno(f))) {
		err = errno ? -errno : -EIO;
		pr_err("cannot write '%s': %s", tmp, strerror(-err));
		goto fail;
	}
	if (fclose(f)) {
		f = NULL;
		err = -errno;
		pr_err("cannot write '%s': %s", tmp, strerror(errno));
		goto fail;
	}
	f = NULL;
	if (rename(tmp, path)) {
		err = -errno;
		pr_err("cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
		goto fail;
	}
	json_decref(o);
	if (path_out)
		snprintf(path_out, len, "%s", path);
	return 0;
fail:
	if (f)
		fclose(f);
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	json_decref(o);
	return err;
}

/* A measured cost from the file: a positive finite number of ns below one second. */
static bool read_cost(json_t *costs, const char *key, double *ns)
{
	json_t *v = json_object_get(costs, key);

	if (!json_is_number(v))
		return false;
	*ns = json_number_value(v);
	return isfinite(*ns) && *ns > 0 && *ns < 1e9;
}

int calibration__load(struct site_costs *c)
{
	char path[PATH_MAX];
	struct site_costs m;
	json_error_t jerr;
	struct utsname u;
	json_t *o, *costs;
	const char *kernel;
	bool ok = true;

	site_costs__defaults(c);
	if (calibration__path(path, sizeof(path)) || access(path, F_OK))
		return 0;
	o = json_load_file(path, 0, &jerr);
	if (!o) {
		pr_warn("ignoring the calibration file '%s': %s (line %d); default probe costs "
			"are used (run 'edgeprof calibrate')",
			path, jerr.text, jerr.line);
		return -EINVAL;
	}
	site_costs__defaults(&m);
	costs = json_object_get(o, "site_costs");
	for (unsigned k = 0; k < PROBE_NEVER; k++)
		ok = ok && read_cost(costs, probe_class_names[k], &m.ns[k]);
	/* A file from before the patched classes were measured: their defaults. */
	if (ok && json_object_get(costs, "patch"))
		ok = read_cost(costs, "patch", &m.ns[PROBE_PATCH]) &&
		     read_cost(costs, "patch_flags", &m.ns[PROBE_PATCH_FLAGS]);
	if (!json_is_integer(json_object_get(o, "version")) ||
	    json_integer_value(json_object_get(o, "version")) != CALIBRATION_VERSION || !ok) {
		pr_warn("ignoring the calibration file '%s': not a version %d calibration with "
			"positive site_costs; default probe costs are used (run 'edgeprof "
			"calibrate')",
			path, CALIBRATION_VERSION);
		json_decref(o);
		return -EINVAL;
	}
	{
		const char *d = json_string_value(json_object_get(o, "date"));

		if (d && site_costs__date_ok(d))
			snprintf(m.date, sizeof(m.date), "%s", d);
	}
	kernel = json_string_value(json_object_get(o, "kernel"));
	if (uname(&u) == 0 && (!kernel || strcmp(kernel, u.release))) {
		pr_warn("ignoring the calibration file '%s': made on kernel %s, this is %s; "
			"default probe costs are used (run 'edgeprof calibrate')",
			path, kernel ? kernel : "(unknown)", u.release);
		json_decref(o);
		return -EINVAL;
	}
	json_decref(o);
	m.measured = true;
	*c = m;
	pr_debug("probe costs from '%s': stepped %.1f ns, emulated %.1f ns, nop5 %.1f ns", path,
		 c->ns[PROBE_STEPPED], c->ns[PROBE_EMULATED], c->ns[PROBE_NOP5]);
	return 0;
}

int calibration__ensure(struct site_costs *c)
{
	const char *off = getenv(CALIBRATION_OPT_OUT_ENV);
	struct calibration cal;
	char path[PATH_MAX];
	double t0;
	int err;

	calibration__load(c);
	if (c->measured)
		return 0;
	if (off && *off && strcmp(off, "0")) {
		pr_debug("%s is set: default probe costs are used", CALIBRATION_OPT_OUT_ENV);
		return 0;
	}
	/* Nowhere to keep it (no home directory, e.g. HOME=/nonexistent): measuring on every
	 * run would cost each run a second for nothing kept. */
	if (calibration__path(path, sizeof(path))) {
		pr_info("no cache directory (XDG_CACHE_HOME unset, no home directory): default "
			"probe costs are used");
		return 0;
	}
	/* Without BPF nothing can be measured; the caller's own attempt says why. */
	{
		int level = log__verbosity();
		struct probes *p;

		log__set_verbosity(LOG_ERR - 1);
		err = probes__open(&p, 2);
		log__set_verbosity(level);
		if (err)
			return 0;
		probes__close(p);
	}
	pr_info("no calibration for this machine: measuring probe costs once (about 1 s; "
		"'edgeprof calibrate' measures them more precisely, %s=1 skips this)",
		CALIBRATION_OPT_OUT_ENV);
	t0 = now_seconds();
	err = calibration__run(&cal, CALIBRATION_QUICK_ITERATIONS, CALIBRATION_QUICK_REPEAT);
	if (!err)
		err = calibration__save(&cal, path, sizeof(path));
	if (err) {
		pr_warn("the probe costs could not be measured: default costs are used");
		site_costs__defaults(c);
		return err;
	}
	*c = cal.costs;
	pr_info("probe costs measured in %.2f s (stepped %.0f ns, emulated %.0f ns, nop5 %.0f ns, "
		"patch %.1f ns, patch-flags %.1f ns), stored in '%s'",
		now_seconds() - t0, c->ns[PROBE_STEPPED], c->ns[PROBE_EMULATED],
		c->ns[PROBE_NOP5], c->ns[PROBE_PATCH], c->ns[PROBE_PATCH_FLAGS], path);
	return 0;
}
