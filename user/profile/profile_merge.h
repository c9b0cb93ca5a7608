/*
 * Merging profiles of the same build (`edgeprof merge`): exact counts add up, so the merged
 * profile's every count (functions, blocks, edges, virtual and longjmp edges, foreign
 * entries, loop moments, counters and site hits) is the sum of the inputs', null where any
 * input's is null (unknown), and its violations the union of theirs. Works on the profile
 * documents (JSON), which the caller has validated with profile__read.
 */
#ifndef EDGEPROF_USER_PROFILE_MERGE_H
#define EDGEPROF_USER_PROFILE_MERGE_H

#include <jansson.h>

/* Makes document A (named A_NAME, the first input) the start of a merge: its run gets a
 * "merged" list naming each input ({"source","argv","seconds"}), starting with A itself
 * (a profile merged before keeps its list). Returns 0, -EINVAL (A has no run) or -ENOMEM,
 * after one pr_err line. */
int profile_merge__start(json_t *a, const char *a_name);

/* Adds document B (named B_NAME) into A (named A_NAME, started with profile_merge__start).
 * B must be of the same build as A (equal build-ids), with the same libraries, functions,
 * blocks, edges and placement (the same counters and sites: same edgeprof, weights and
 * calibration); else one pr_err line says what differs and -EINVAL is returned with A
 * possibly half merged. The run's counts and seconds add up, B's run joins "merged", and the
 * summary keys (probes, violations) are made again. Returns 0, -EINVAL or -ENOMEM. */
int profile_merge__add(json_t *a, json_t *b, const char *a_name, const char *b_name);

#endif
