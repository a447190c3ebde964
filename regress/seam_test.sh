#! /usr/bin/atf-sh
# The backend seam (docs/fence.md, "The backend seam"): a backend is one
# folder under fencer/ and one row of fencer_backends[]
# (layout_test:backend_names checks that no other code names one, with
# the pattern below, which the table must match).  And no backend reads
# another's description of the host: the one a fence sees is
# fencer/fencer_view.c's.

. "$(atf_get_srcdir)/lib.subr"

SEAM_NAMES='\b(backend_(native|runsc|vm|mock|subprocess)|BACKEND_(NATIVE|RUNSC|VM|MOCK|SUBPROCESS)|(native|runsc|vm|pool|mock|subprocess)_[A-Za-z0-9_]+)\b'

seam_src() {
	TOPDIR=$(atf_config_get topdir "")
	[ -n "$TOPDIR" ] && [ -f "$TOPDIR/fencer/backend.h" ] ||
	    atf_skip "the source tree (config variable topdir) is not known"
	command -v cc > /dev/null ||
	    atf_skip "no cc here to strip the comments of the sources"
}

# The code of file $1, its comments stripped (strings and macros kept).
seam_code() {
	cc -fpreprocessed -dD -E -P -x c "$1" 2>/dev/null
}

atf_test_case table_names_all
table_names_all_head() {
	atf_set descr "the pattern of layout_test:backend_names can fail: fencer_backend.c, the table, names every backend with it"
}
table_names_all_body() {
	seam_src
	seam_code "$TOPDIR/fencer/fencer_backend.c" > code
	grep -Eq "$SEAM_NAMES" code || atf_fail "the pattern names nothing"
	for b in native runsc vm mock subprocess; do
		grep -q "&backend_$b" code || atf_fail "no row for $b"
	done
}

atf_test_case view_one_table
view_one_table_head() {
	atf_set descr "what a fence sees of the host is fencer_view.c's alone: no backend keeps a table of host binds or bin names of its own, and the probe's host reading allows that table"
}
view_one_table_body() {
	seam_src
	: > found
	for f in "$TOPDIR"/fencer/*/*.c "$TOPDIR"/fencer/*/*.h; do
		seam_code "$f" | grep -En \
		    'fence_host_binds|fence_bin_names|runsc_bin_names' | \
		    sed "s|^|$f:|" >> found
	done
	if [ -s found ]; then
		cat found >&2
		atf_fail "a backend keeps its own view of the host"
	fi
	grep -q view_binds "$TOPDIR/fencer/native/fence_mount.c" ||
	    atf_fail "native does not mount view_binds[]"
	grep -q view_binds "$TOPDIR/fencer/runsc/bundle.c" ||
	    atf_fail "runsc does not write view_binds[] into its bundle"
	grep -q view_binds "$TOPDIR/fencer/fencer_probe.c" ||
	    atf_fail "the probe's host reading does not allow view_binds[]"
}

atf_init_test_cases() {
	atf_add_test_case table_names_all
	atf_add_test_case view_one_table
}
