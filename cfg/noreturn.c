/*
 * The list of known no-return functions (see noreturn.h).
 */
#include "noreturn.h"

#include <stdlib.h>
#include <string.h>

static const char *const known[] = {
	"_Exit", "_Unwind_Resume", "__assert_fail", "__assert_perror_fail", "__chk_fail",
	"__cxa_bad_cast", "__cxa_bad_typeid", "__cxa_call_unexpected", "__cxa_pure_virtual",
	"__cxa_rethrow", "__cxa_throw", "__cxa_throw_bad_array_new_length", "__fortify_fail",
	"__libc_fatal", "__libc_start_main", "__longjmp_chk", "__stack_chk_fail", "__stack_chk_fail_local",
	"_exit", "_longjmp", "abort", "err", "errx", "exit", "longjmp", "pthread_exit",
	"quick_exit", "siglongjmp", "thrd_exit", "verr", "verrx",
	"_ZSt9terminatev", "_ZN10__cxxabiv111__terminateEPFvvE",
};

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

bool noreturn__known(const char *name)
{
	if (!name)
		return false;
	/* libstdc++'s std::__throw_* helpers (_ZSt19__throw_logic_errorPKc, ...). */
	if (strncmp(name, "_ZSt", 4) == 0 && strstr(name, "__throw_"))
		return true;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (cmp_name(&name, &known[i]) == 0)
			return true;
	return false;
}
