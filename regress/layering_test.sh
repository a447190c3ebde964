#! /usr/bin/atf-sh
# Which folder of the source tree may do what, read from the sources
# (config variable topdir): every cgroup file the daemon writes is
# named only in the cgroup module (common/cg*.c, docs/fence.md,
# "cgroups"); common/ includes nothing of imsg/, which is built on it;
# the parent's files run no fencer code (they name no fencer_ function
# but the fencer's declaration of itself, and include no header of
# fencer/).  Comments are left out: they may name anything.

# The source tree, or skip.
topdir() {
	TOPDIR=$(atf_config_get topdir "")
	[ -n "$TOPDIR" ] && [ -d "$TOPDIR/common" ] && [ -d "$TOPDIR/parent" ] ||
	    atf_skip "the source tree (config variable topdir) is not known"
	command -v perl > /dev/null || atf_skip "no perl to strip comments"
}

# code FILE: FILE without its comments, each line prefixed "FILE:".
code() {
	perl -0777 -ne 's{/\*.*?\*/}{ my $c = $&; $c =~ tr/\n//cd; $c }gse;
	    s{//[^\n]*}{}g; my $n = 0;
	    for (split /\n/, $_, -1) { $n++; print "$ARGV:$n: $_\n" }' "$1"
}

atf_test_case cgroup_files
cgroup_files_head() {
	atf_set descr "no file of the daemon but the cgroup module (common/cg*.c) names a cgroup file it writes: one module for the parent's folder and every backend's fences"
}
cgroup_files_body() {
	topdir
	: > found
	for f in $(find "$TOPDIR/parent" "$TOPDIR/broker" "$TOPDIR/fencer" \
	    "$TOPDIR/prober" "$TOPDIR/egress" "$TOPDIR/agent" \
	    "$TOPDIR/common" "$TOPDIR/imsg" -name '*.[chy]' | sort); do
		case $f in
		"$TOPDIR"/common/cg.[ch]|"$TOPDIR"/common/cg_*.[ch])
			continue ;;
		esac
		code "$f" | grep -E '"[^"]*(cgroup\.(procs|kill|subtree_control|controllers|freeze|type)|memory\.(max|high|swap|limit_in_bytes|memsw|oom_control|events)|pids\.max|cpu\.(max|cfs_)|(^|/)tasks")' \
		    >> found
	done
	[ -s found ] && { cat found >&2;
	    atf_fail "cgroup files written outside common/cg*.c: $(head -1 found)"; }
	# The module itself is there, and does name them.
	code "$TOPDIR/common/cg_v2.c" | grep -q '"memory.max"' ||
	    atf_fail "common/cg_v2.c does not write memory.max"
}

atf_test_case common_no_imsg
common_no_imsg_head() {
	atf_set descr "common/ includes no header of imsg/: imsg/ (and proc.c with it) is built on common/, never the other way"
}
common_no_imsg_body() {
	topdir
	: > found
	for f in "$TOPDIR"/common/*.[ch]; do
		code "$f" > stripped
		for h in "$TOPDIR"/imsg/*.h; do
			grep -F "#include \"$(basename "$h")\"" stripped >> found
		done
	done
	[ -s found ] && { cat found >&2;
	    atf_fail "common/ includes imsg/: $(head -1 found)"; }
	[ -f "$TOPDIR/imsg/proc.c" ] || atf_fail "imsg/proc.c is missing"
}

atf_test_case parent_no_fencer
parent_no_fencer_head() {
	atf_set descr "parent/ runs no fencer code: the daemon's id, lock, cgroup folder, uid claim and sweeps are the parent's own (parent/daemon.c, parent/uidclaim.c)"
}
parent_no_fencer_body() {
	topdir
	: > found
	for f in "$TOPDIR"/parent/*.[chy]; do
		code "$f" > stripped
		grep -E '\bfencer_[a-z0-9_]+' stripped |
		    grep -vE '&fencer_self\b' >> found
		for h in $(find "$TOPDIR/fencer" -name '*.h'); do
			grep -F "#include \"$(basename "$h")\"" stripped >> found
		done
	done
	[ -s found ] && { cat found >&2;
	    atf_fail "parent/ uses the fencer: $(head -1 found)"; }
	return 0
}

atf_init_test_cases() {
	atf_add_test_case cgroup_files
	atf_add_test_case common_no_imsg
	atf_add_test_case parent_no_fencer
}
