/*
 * The progress line (see progress.h): one line on a terminal, padded with spaces over the
 * previous one rather than relying on terminal escapes. A mutex orders the writes of the run
 * thread, the analysis and the diagnostics of log.c; the line is written with write(2), not
 * stdio, so the thread never holds stderr's stdio lock.
 */
#include "user/util/progress.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "user/util/clock.h"
#include "user/util/log.h"

#define MIN_INTERVAL 0.1 /* seconds between two updates of progress__set */
#define RUN_FIRST 1.0    /* the run thread's first line, seconds after the start */
#define RUN_EVERY 0.5    /* and then every */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int enabled = -1; /* -1: not decided yet */
static size_t shown;     /* length of the line on the terminal, 0: none */
static double last;      /* now_seconds() of the last progress__set that drew */
static const char *last_fmt; /* and its format */

static struct {
	pthread_t thread;
	pthread_cond_t cond;
	bool running, stop;
	const char *what;
	double t0;
} run = { .cond = PTHREAD_COND_INITIALIZER };

/* Whether to draw at all: decided at the first use (after the options set the verbosity). */
static bool on(void)
{
	if (enabled < 0)
		enabled = isatty(STDERR_FILENO) && log__verbosity() >= LOG_WARN;
	return enabled > 0 && log__verbosity() >= LOG_WARN;
}

static void term_write(const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(STDERR_FILENO, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

/* Erases the line; LOCK held. */
static void erase(void)
{
	char buf[256];
	size_t n = shown + 2 < sizeof(buf) ? shown : sizeof(buf) - 2;

	if (!shown)
		return;
	buf[0] = '\r';
	memset(buf + 1, ' ', n);
	buf[n + 1] = '\r';
	term_write(buf, n + 2);
	shown = 0;
}

/* Draws "edgeprof: TEXT" over the line, padded with spaces over the rest of a longer one
 * and the cursor brought back to the end of TEXT; LOCK held. */
static void draw(const char *text)
{
	char line[200], buf[512];
	int n = snprintf(line, sizeof(line), "edgeprof: %s", text);
	size_t len = n < 0 ? 0 : (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1, k;

	buf[0] = '\r';
	memcpy(buf + 1, line, len);
	k = len + 1;
	if (shown > len) {
		memset(buf + k, ' ', shown - len);
		k += shown - len;
		buf[k++] = '\r';
		memcpy(buf + k, line, len);
		k += len;
	}
	term_write(buf, k);
	shown = len;
}

void progress__set(const char *fmt, ...)
{
	char text[200];
	va_list ap;
	double now;

	if (!on())
		return;
	now = now_seconds();
	if (shown && fmt == last_fmt && now - last < MIN_INTERVAL)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&lock);
	draw(text);
	last = now;
	last_fmt = fmt;
	pthread_mutex_unlock(&lock);
}

void progress__end(void)
{
	if (enabled <= 0)
		return;
	pthread_mutex_lock(&lock);
	erase();
	pthread_mutex_unlock(&lock);
}

void progress__hide(void)
{
	pthread_mutex_lock(&lock);
	erase();
}

void progress__unhide(void)
{
	pthread_mutex_unlock(&lock);
}

static void *run_thread(void *arg __attribute__((unused)))
{
	double next = run.t0 + RUN_FIRST;

	pthread_mutex_lock(&lock);
	while (!run.stop) {
		double now = now_seconds();
		struct timespec ts;

		if (now >= next) {
			char text[200];

			snprintf(text, sizeof(text), "%s (%.1f s)", run.what, now - run.t0);
			draw(text);
			next = now + RUN_EVERY;
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += (time_t)(next - now);
		ts.tv_nsec += (long)((next - now - (double)(time_t)(next - now)) * 1e9);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&run.cond, &lock, &ts);
	}
	erase();
	pthread_mutex_unlock(&lock);
	return NULL;
}

int progress__run_start(const char *what)
{
	sigset_t all, old;
	int err;

	if (!on() || run.running)
		return 0;
	run.what = what;
	run.t0 = now_seconds();
	run.stop = false;
	/* Every signal stays the caller's: the tracer's waitpid must see its EINTRs. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&run.thread, NULL, run_thread, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	run.running = true;
	return 0;
}

void progress__run_stop(void)
{
	if (!run.running)
		return;
	pthread_mutex_lock(&lock);
	run.stop = true;
	pthread_cond_signal(&run.cond);
	pthread_mutex_unlock(&lock);
	pthread_join(run.thread, NULL);
	run.running = false;
}
