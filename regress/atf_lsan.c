/*
 * Linked into every ATF C test program.  Under the sanitizers, libatf-c
 * does not free its test case list when asked to list it (-l, as kyua
 * does first); that is not ours to fix and must not read as a leak of
 * the code under test.  kyua counts a listing with anything on stderr
 * as broken, so the suppression is not reported either.
 */
#ifdef FENCED_SANITIZE
const char	*__lsan_default_suppressions(void);
const char	*__lsan_default_options(void);

const char *
__lsan_default_suppressions(void)
{
	return ("leak:libatf-c.so\n");
}

const char *
__lsan_default_options(void)
{
	return ("print_suppressions=0");
}
#else
extern int atf_lsan_unused;
#endif
