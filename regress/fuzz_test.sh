#! /usr/bin/atf-sh
# A short run of every libFuzzer target (fuzz/*_fuzz.c) as part of make
# check: scripts/fuzz.sh builds each with clang, ASan and UBSan next to
# this build (one case at a time: the cases share its objects) and runs
# it for FUZZ_RUNS inputs (2,000 by default) within FUZZ_SECONDS (120)
# over its seeds (fuzz/corpus/NAME, every one replayed first, the inputs
# of past findings among them); anything it finds fails the case.  The long runs
# are `make fuzz' (docs/fuzzing.md).

# fuzz_run NAME: the case body of target NAME.
fuzz_run() {
	TOPDIR=$(atf_config_get topdir "")
	REGRESS=$(atf_config_get regressdir "$(atf_get_srcdir)")
	[ -n "$TOPDIR" ] && [ -f "$TOPDIR/scripts/fuzz.sh" ] ||
	    atf_skip "the source tree (config variable topdir) is not known"
	build=$(dirname "$REGRESS")
	# 2,000 inputs, beyond the seeds, within at most 120 s: a count,
	# not a time, so that a loaded machine checks as much as an idle
	# one (an idle one takes 1 to 10 s).
	FUZZ_RUNS=${FUZZ_RUNS:-2000} sh "$TOPDIR/scripts/fuzz.sh" "$build" \
	    "${FUZZ_SECONDS:-120}" "$1" > fuzz.out 2> fuzz.err
	rc=$?
	if [ $rc -eq 77 ]; then
		atf_skip "$(grep '^fuzz:' fuzz.err | head -1)"
	fi
	if [ $rc -ne 0 ]; then
		grep -m 3 'invariant broken\|ERROR:\|SUMMARY:' fuzz.err >&2
		tail -40 fuzz.err >&2
		atf_fail "libFuzzer exited $rc; the input is in ${build}-fuzz/artifacts/$1"
	fi
	grep -q '^Done [0-9]* runs' fuzz.err || { tail -20 fuzz.err >&2;
	    atf_fail "libFuzzer did not run"; }
	runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' fuzz.err)
	[ "$runs" -ge "${FUZZ_RUNS:-2000}" ] ||
	    atf_fail "only $runs runs within ${FUZZ_SECONDS:-120} s"
	# Its seeds were read: a target that rejects them all learns little.
	seeds=$(ls "$TOPDIR/fuzz/corpus/$1" | wc -l)
	[ "$seeds" -gt 0 ] || atf_fail "no seeds in fuzz/corpus/$1"
	grep -q "INFO: *$seeds files found in .*fuzz/corpus/$1" fuzz.err ||
	    atf_fail "the $seeds seeds of fuzz/corpus/$1 were not read"
	sed -n 's/^\(#[0-9]*\)[[:space:]]*DONE /\1 DONE /p' fuzz.err
}

# fuzz_case NAME DESCRIPTION
fuzz_case() {
	eval "atf_test_case ${1}_fuzz
	${1}_fuzz_head() {
		atf_set descr \"$2 under libFuzzer with ASan and UBSan for 2,000 inputs: no crash, leak, hang or broken invariant\"
		atf_set timeout 600
	}
	${1}_fuzz_body() { fuzz_run $1; }"
}

fuzz_case report "report_parse(), the prober's parser of reports from fences"
fuzz_case msg "every msgpack decoder of imsg/msg*.c, with a round trip through its encoder"
fuzz_case imsg "the imsg framing, a peer's stream with descriptors over a socketpair"
fuzz_case ctl "the broker's control socket (control.c) serving a client's stream"
fuzz_case http "the broker's HTTP API (evhttp, http.c, http_api.c) serving a client's bytes"
fuzz_case config "the configuration grammar (parse.y) reading a file"
fuzz_case runsc "the runsc backend's parsers of runsc's answers and /proc"
fuzz_case vmconsole "the vm backend's reading of the guest's console"
fuzz_case host "the fencer's parsers of /proc status, mountinfo, uid_map, net"
fuzz_case egress "the egress proxy's request head parser and DNS answer codec"
fuzz_case ws "the broker's WebSocket connections (broker/ws.c over libwslay) reading a client's frames"
fuzz_case relay "the port relay's request head parser, rewriter and chunked body reader (http_head.c)"

atf_test_case every_target
every_target_head() {
	atf_set descr "every fuzz/*_fuzz.c has its case here, and a corpus"
}
every_target_body() {
	TOPDIR=$(atf_config_get topdir "")
	[ -n "$TOPDIR" ] && [ -d "$TOPDIR/fuzz" ] ||
	    atf_skip "the source tree (config variable topdir) is not known"
	for f in "$TOPDIR"/fuzz/*_fuzz.c; do
		t=$(basename "$f" _fuzz.c)
		grep -q "^fuzz_case $t " "$TOPDIR/regress/fuzz_test.sh" ||
		    atf_fail "fuzz/${t}_fuzz.c has no case in fuzz_test"
		[ -n "$(ls "$TOPDIR/fuzz/corpus/$t" 2>/dev/null)" ] ||
		    atf_fail "fuzz/${t}_fuzz.c has no seeds in fuzz/corpus/$t"
	done
}

atf_init_test_cases() {
	for t in report msg imsg ctl http config runsc vmconsole host egress relay ws; do
		atf_add_test_case ${t}_fuzz
	done
	atf_add_test_case every_target
}
