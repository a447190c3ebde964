#! /usr/bin/atf-sh
# term_test's cases against runsc fences (backend runsc): a terminal on
# gVisor's own devpts, its resize, re-attach, the kill at stop, and a
# background process's stdin and live output.  Skipped, saying why,
# where runsc is not installed.

FENCED_BACKEND=runsc
. "$(atf_get_srcdir)/term_test"

atf_init_test_cases() {
	atf_add_test_case devpts
	atf_add_test_case basic
	atf_add_test_case reattach
	atf_add_test_case stop
	atf_add_test_case stdin
}
