/*
 * Opening the binary of a profile (see profile_binary.h).
 */
#include "user/profile/profile_binary.h"
#include "user/session/decode_cache.h"

#include "user/util/log.h"

int profile_binary__open(const struct profile *p, const char *file, const char *binary,
			 struct elf_image *img, struct cfg_program *prog)
{
	if (!binary)
		binary = p->binary_path;
	if (!binary || !*binary)
		return pr_err("'%s': the profile names no binary; give it as BINARY", file);
	if (elf_image__open(img, binary))
		return pr_lib_err(binary, "cannot open");
	if (profile__check_build_id(p, img->build_id)) {
		elf_image__close(img);
		return -1;
	}
	if (decode_cache__build(prog, img, true, NULL, NULL)) {
		pr_lib_err(binary, "cannot build the control-flow graph");
		elf_image__close(img);
		return -1;
	}
	return 0;
}

void profile_binary__close(struct elf_image *img, struct cfg_program *prog)
{
	cfg_program__free(prog);
	elf_image__close(img);
}
