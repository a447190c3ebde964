#! /usr/bin/atf-sh
# The soak (regress/soak.py): six clients, each with a key of its own,
# boot, exec (small output, 1 MiB, a timeout), probe, list and stop in a
# cycle, half over HTTP and half over the control socket, for
# soak_seconds (45 in make check; make soak: SOAK_SECONDS, default 600).
# The RSS, descriptors and CPU of each daemon process are sampled each
# second; the case fails on any unexpected answer, on a process that
# grows without bound, or on anything left at the end.  The samples, the
# plot (soak.svg) and the summary go to soak_out (make soak: build/soak).

. "$(atf_get_srcdir)/lib.subr"

atf_test_case soak cleanup
soak_head() {
	atf_set descr "many clients over HTTP and the control socket for a bounded time: no unexpected answer, no process growing without bound, nothing left"
	atf_set require.user root
	atf_set timeout $(($(atf_config_get soak_seconds 45) + 600))
}
soak_body() {
	fenced_vars
	command -v python3 > /dev/null || atf_skip "no python3 (scripts/deps.sh installs it)"
	secs=$(atf_config_get soak_seconds 45)
	out=$(atf_config_get soak_out "$PWD")
	mkdir -p "$out"
	fenced_start
	token=$($CTL token -r 2>/dev/null | tail -1)
	[ -n "$token" ] || atf_fail "no token"
	procs=""
	for p in parent broker fencer prober egress; do
		procs="$procs --proc $p=$(fenced_pid $p)"
	done
	# AddressSanitizer keeps freed memory in quarantine (256 MiB by
	# default): there the RSS is recorded, not judged.
	rss=
	grep -q __asan_init "$BIN/fenced" && rss=--no-rss
	python3 "$TOPDIR/regress/soak.py" $rss --port "$(fenced_port)" \
	    --token "$token" --fencectl "$BIN/fencectl" \
	    --socket "$PWD/ctl.sock" $procs --seconds "$secs" --clients 6 \
	    --out "$out" > soak.out 2>&1
	rc=$?
	cat soak.out
	[ $rc -eq 0 ] || atf_fail "soak: $(grep -E 'GROWS|unexpected: ' soak.out | head -3 | tr '\n' ' ')"
	# Nothing left: every key stopped, no process of the fence uids.
	$CTL show environments > envs.out
	atf_check_equal "" "$(awk 'NR > 1 && $5 != "stopped"' envs.out)"
	r=$(fenced_uids)
	atf_check_equal "" "$(ps -eo pid=,uid= | awk -v lo="${r%-*}" \
	    -v hi="${r#*-}" '$2 >= lo && $2 <= hi')"
	fenced_stop
	atf_check_equal "" "$(fenced_cgroup_dirs)"
}
soak_cleanup() { fenced_cleanup; }

atf_init_test_cases() {
	atf_add_test_case soak
}
