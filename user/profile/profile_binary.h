/*
 * The binary a profile was recorded on, for the commands that need its code besides the
 * counts (compare, export): opened, checked against the profile's build-id, its CFG built.
 */
#ifndef EDGEPROF_USER_PROFILE_BINARY_H
#define EDGEPROF_USER_PROFILE_BINARY_H

#include "cfg/cfg.h"
#include "cfg/elf_image.h"
#include "user/profile/profile.h"

/* Opens BINARY (NULL: the path profile P, read from FILE, records), checks that its build-id
 * is P's and builds its CFG into *PROG. Returns 0, or -1 after one pr_err line (nothing to
 * release then). On success release both with profile_binary__close. */
int profile_binary__open(const struct profile *p, const char *file, const char *binary,
			 struct elf_image *img, struct cfg_program *prog);

void profile_binary__close(struct elf_image *img, struct cfg_program *prog);

#endif
