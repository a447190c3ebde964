#! /usr/bin/atf-sh
# files_test's cases against runsc fences: gVisor's kernel of Debian 12
# (0.0~20221219.0) has no openat2, so the agent walks every path itself
# one component at a time (docs/files.md); the same attacks must fail
# the same way, give or take the code of a symlink at an inner
# component.  Skipped, saying why, where runsc is not installed.

FENCED_BACKEND=runsc
. "$(atf_get_srcdir)/files_test"
