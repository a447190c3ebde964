#! /usr/bin/atf-sh
# exec_test's cases against runsc fences: every fence the daemon boots
# is a gVisor one (backend runsc in fenced.conf), and commands, git,
# timeouts, output caps, concurrent execs, stdin and binary output must
# behave exactly as in a native fence.  Skipped, saying why, where runsc
# is not installed.  mount_table is native's own (its bin tmpfs) and is
# left out; runsc_test checks what a runsc fence's files are.  Left out
# too, for defects of Debian 12's runsc (0.0~20221219.0) that
# docs/runsc.md describes: identity and fds (its statx refuses
# AT_NO_AUTOMOUNT, so coreutils' stat and ls fail with EINVAL) and
# bearer_hidden (it lets a process read /proc/1/environ and maps of the
# non-dumpable agent; /proc/1/mem stays refused).

FENCED_BACKEND=runsc
. "$(atf_get_srcdir)/exec_test"

atf_init_test_cases() {
	atf_add_test_case timeout_kills_all
	atf_add_test_case timeout_at_max
	atf_add_test_case output_budget
	atf_add_test_case binary_roundtrip
	atf_add_test_case cwd_refused
	atf_add_test_case environment
	atf_add_test_case concurrent
	atf_add_test_case git
	atf_add_test_case other_users
}
