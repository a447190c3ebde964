#! /usr/bin/atf-sh
# The metrics of admins (issue 33, docs/metrics.md): `fencectl show
# metrics' and GET /api/metrics hold what the daemon did (boots, execs,
# probes by result, the histograms, each fence's cgroups) in the
# Prometheus text format, which Debian's promtool accepts; only root
# and the admin group read them, on the socket and with a host token.

. "$(atf_get_srcdir)/lib.subr"

# value SERIES: the value of the sample SERIES (name and labels, as
# written) in m.txt, or nothing.
value() {
	awk -v s="$1" '$1 == s { print $2 }' m.txt
}

# expect_value SERIES N
expect_value() {
	[ "$(value "$1")" = "$2" ] || atf_fail "$1 is '$(value "$1")', \
expected $2: $(grep -F "${1%%\{*}" m.txt)"
}

# An admin group of the test's own, with the second user in it.
metrics_group() {
	_g="mtg$$"
	groupadd --system "$_g" || atf_fail "groupadd $_g"
	echo "$_g" > group.txt
	usermod -a -G "$_g" "$(sed -n 2p users.txt)" ||
	    atf_fail "usermod $_g"
	echo "$_g"
}

metrics_cleanup() {
	fenced_cleanup
	g=$(cat group.txt 2>/dev/null)
	[ -z "$g" ] || groupdel "$g" 2>/dev/null
	true
}

atf_test_case values cleanup
values_head() {
	atf_set descr "boots, execs (one exiting 1, one killed), a refused boot, one below its require: show metrics counts each by its result, a boot's and an exec's time, the probes, the fences by state, and a fence's memory peak from its cgroup; another user is refused on the socket and over HTTP, the admin group's token and root read them"
	atf_set require.user root
	atf_set timeout 120
}
values_body() {
	fenced_vars
	fenced_run_socket
	users_add 2 mt
	g=$(metrics_group)
	fenced_conf > fenced.conf
	echo "admin group \"$g\"" >> fenced.conf
	fenced_start
	atf_check -o ignore $CTL boot m1
	atf_check -o ignore $CTL boot m2
	atf_check -s exit:1 -e match:"exists" $CTL boot m1
	# Built, measured below what it asked (native has the host's kernel).
	atf_check -s exit:1 -e match:"require-not-met" $CTL boot m3 require L3
	atf_check $CTL exec m1 -- true
	atf_check -o inline:"4000000\n" $CTL exec m1 -- sh -c \
	    'x=$(head -c 4000000 /dev/zero | tr "\\0" a); echo ${#x}'
	atf_check -s exit:1 $CTL exec m1 -- false
	atf_check -s not-exit:0 -e ignore $CTL exec m2 -- sh -c 'kill -9 $$'
	atf_check -o save:m.txt $CTL show metrics

	expect_value 'fenced_boots_total{result="ok"}' 2
	expect_value 'fenced_boots_total{result="refused"}' 1
	expect_value 'fenced_boots_total{result="failed"}' 0
	expect_value 'fenced_boots_total{result="require_not_met"}' 1
	expect_value 'fenced_execs_total{result="exit_zero"}' 2
	expect_value 'fenced_execs_total{result="exit_nonzero"}' 1
	expect_value 'fenced_execs_total{result="signal"}' 1
	expect_value 'fenced_execs_total{result="timeout"}' 0
	expect_value 'fenced_boot_seconds_count' 3
	expect_value 'fenced_boot_seconds_bucket{le="+Inf"}' 3
	expect_value 'fenced_first_answer_seconds_count' 3
	expect_value 'fenced_exec_seconds_count' 4
	expect_value 'fenced_fencer_fences' 2
	expect_value 'fenced_fence_series_omitted' 0
	expect_value 'fenced_denials_total{layer="seccomp"}' 0
	# Every boot is probed: three verdicts, at whatever level.
	[ "$(awk '/^fenced_probes_total/ { n += $2 } END { print n }' m.txt)" \
	    = 3 ] || atf_fail "probes: $(grep ^fenced_probes_total m.txt)"
	[ "$(awk '/^fenced_fences\{state="running"/ { n += $2 } END \
	    { print n }' m.txt)" = 2 ] || atf_fail "fences: \
$(grep ^fenced_fences m.txt)"
	# m1's shell held 4 MB in a variable: its cgroup's peak saw them.
	peak=$(value 'fenced_fence_memory_peak_bytes{key="m1",owner="0"}')
	[ -n "$peak" ] && [ "$peak" -gt 4000000 ] ||
	    atf_fail "m1's memory peak: '$peak'"
	[ -n "$(value 'fenced_fence_pids{key="m2",owner="0"}')" ] ||
	    atf_fail "no pids of m2"
	# A histogram's buckets only grow, to the count.
	awk -F'[ ]' '/^fenced_exec_seconds_bucket/ {
		if ($2 < last) { print "not cumulative: " $0; exit 1 }
		last = $2 }' m.txt || atf_fail "exec buckets"

	# Another user: refused on the socket, and with a token over HTTP.
	ua=$(sed -n 1p users.txt)
	ub=$(sed -n 2p users.txt)
	s=$(fenced_socket)
	atf_check -s exit:1 -e match:"not-permitted: metrics are for root" \
	    $(as_user "$ua") "$BIN/fencectl" -s "$s" show metrics
	ta=$($(as_user "$ua") "$BIN/fencectl" -s "$s" token 2>/dev/null |
	    tail -1)
	call "$ta" GET /api/metrics
	expect 403 '"error": *"not-permitted"'
	call bogus GET /api/metrics
	expect 401
	# The admin group's token reads them, as text of the format's version.
	tb=$($(as_user "$ub") "$BIN/fencectl" -s "$s" token 2>/dev/null |
	    tail -1)
	# As a scraper sends it: Authorization: Bearer.
	curl -sS -m 30 -H "Authorization: Bearer $tb" -D head.out \
	    -o body.out "http://127.0.0.1:$(fenced_port)/api/metrics" ||
	    atf_fail "curl"
	atf_check -o match:"^HTTP/1.1 200" -o match:"^Content-Type: text/plain; \
version=0.0.4; charset=utf-8" tr -d '\r' < head.out
	atf_check -o match:'^fenced_execs_total\{result="exit_nonzero"\} 1$' \
	    cat body.out
	# Root's own token too; a POST is not a way in.
	tr=$($CTL token 2>/dev/null | tail -1)
	call "$tr" GET /api/metrics
	expect 200 '^fenced_boots_total\{result="ok"\} 2$'
	call "$tr" POST /api/metrics '{}'
	expect 405
	fenced_stop
}
values_cleanup() { metrics_cleanup; }

atf_test_case promtool cleanup
promtool_head() {
	atf_set descr "the exposition, with fences, a failed exec and a refused boot, passes promtool check metrics (Debian's, taken by scripts/promtool.sh)"
	atf_set require.user root
	atf_set timeout 120
}
promtool_body() {
	fenced_vars
	tool=$(sh "$TOPDIR/scripts/promtool.sh" "$BIN/../promtool" 2> \
	    promtool.err) || atf_skip "$(cat promtool.err)"
	fenced_start
	atf_check -o ignore $CTL boot p1
	atf_check -s exit:1 -e match:"exists" $CTL boot p1
	atf_check -s exit:3 $CTL exec p1 -- sh -c 'exit 3'
	atf_check -o save:m.txt $CTL show metrics
	# Lint and format: no complaint at all.
	atf_check "$tool" check metrics < m.txt
	fenced_stop
}
promtool_cleanup() { fenced_cleanup; }

atf_init_test_cases() {
	atf_add_test_case values
	atf_add_test_case promtool
}
