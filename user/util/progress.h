/*
 * A progress line on stderr for long analyses and runs ("edgeprof: analysing 'sqlite3':
 * 1200/2310 functions", "edgeprof: running (12.3 s)"), rewritten in place with '\r', only
 * when stderr is a terminal and edgeprof is not quiet (-q): pipes, files and tests never see
 * it. The line is erased before any diagnostic (log.h) is written and when the work ends.
 */
#ifndef EDGEPROF_USER_PROGRESS_H
#define EDGEPROF_USER_PROGRESS_H

/* Shows "edgeprof: FMT" as the progress line: at once for a new FMT, at most ten times a
 * second for the same one (calls in between are dropped: call it as often as convenient);
 * nothing when the line is off. */
void progress__set(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Erases the progress line, if shown. */
void progress__end(void);

/* Starts a thread that shows "edgeprof: WHAT (S s)" with the seconds since this call, from
 * the first second on, refreshed every half second, without disturbing the calling thread
 * (it receives no signal). WHAT must outlive progress__run_stop. Returns 0, or a negative
 * errno (no line then; not worth reporting). Nothing when the line is off. */
int progress__run_start(const char *what);

/* Stops that thread (at once) and erases the line. Safe without a start. */
void progress__run_stop(void);

/* For log.c: before writing a diagnostic, progress__hide erases the line and keeps the line
 * from being drawn until progress__unhide; the next update draws it again. */
void progress__hide(void);
void progress__unhide(void);

#endif
