#! /usr/bin/atf-sh
# term_test's cases against vm fences (backend vm): a terminal on the
# guest's own devpts (vminit mounts it), its resize and exit status,
# the kill at stop, and a background process's stdin and live output.
# Skipped, saying why, without QEMU or the vm boot files.

TERM_BACKEND=vm
TERM_TIMEOUT=900
. "$(atf_get_srcdir)/term_test"

atf_init_test_cases() {
	atf_add_test_case basic
	atf_add_test_case stop
	atf_add_test_case stdin
}
