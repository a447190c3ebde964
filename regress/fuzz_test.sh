#! /usr/bin/atf-sh
# A short run of the report parser's libFuzzer target (fuzz/report_fuzz.c)
# as part of make check: scripts/fuzz.sh builds it with clang next to
# this build and runs it for 10 seconds; anything it finds fails the case.

atf_test_case report_fuzz
report_fuzz_head() {
	atf_set descr "report_parse() under libFuzzer with ASan and UBSan for 10 s: no crash, leak, hang or broken invariant"
	atf_set timeout 300
}
report_fuzz_body() {
	TOPDIR=$(atf_config_get topdir "")
	REGRESS=$(atf_config_get regressdir "$(atf_get_srcdir)")
	[ -n "$TOPDIR" ] && [ -f "$TOPDIR/scripts/fuzz.sh" ] ||
	    atf_skip "the source tree (config variable topdir) is not known"
	build=$(dirname "$REGRESS")
	sh "$TOPDIR/scripts/fuzz.sh" "$build" "${FUZZ_SECONDS:-10}" \
	    > fuzz.out 2> fuzz.err
	rc=$?
	if [ $rc -eq 77 ]; then
		atf_skip "$(grep '^fuzz:' fuzz.err | head -1)"
	fi
	if [ $rc -ne 0 ]; then
		tail -40 fuzz.err >&2
		atf_fail "libFuzzer exited $rc; the input is in ${build}-fuzz/artifacts"
	fi
	grep -q '^Done [0-9]* runs' fuzz.err || { tail -20 fuzz.err >&2;
	    atf_fail "libFuzzer did not run"; }
	runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' fuzz.err)
	[ "$runs" -gt 1000 ] || atf_fail "only $runs runs"
}

atf_init_test_cases() {
	atf_add_test_case report_fuzz
}
