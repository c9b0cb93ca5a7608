/* Monotonic time in seconds, for durations the commands report (analysis, run, hold). */
#ifndef EDGEPROF_CLOCK_H
#define EDGEPROF_CLOCK_H

/* Seconds on CLOCK_MONOTONIC (an arbitrary origin): only differences are meaningful. */
double now_seconds(void);

#endif
