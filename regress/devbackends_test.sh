#! /usr/bin/atf-sh
# The development backends (issue 12, docs/backends.md): the release
# binary refuses mock and subprocess, on the control socket and over
# HTTP; the test build (build/hooks/fenced) has both.  A subprocess
# fence runs real commands as its uid with no isolation, and its level
# says so: not-earned, the violations named, require L1 refused.  A mock
# fence answers from a script and stays unmeasured.

. "$(atf_get_srcdir)/lib.subr"

# The test build, whose homes the fence's uid can reach: a subprocess
# fence sees the host's paths (mktemp made the directory 0700).
dev_start() {
	FENCED_BIN=$HOOKS/fenced
	chmod 0711 "$(fenced_homes)"
	fenced_start
}

# Pids of the processes running as uid $1, zombies too: a command
# killed after the agent that reaps it would be init's zombie.
uid_procs() {
	ps -e -o pid= -o uid= | awk -v u="$1" '$2 == u { print $1 }' |
	    tr '\n' ' '
}

# The pids of uid $1 that still run: not zombies waiting for init.
uid_live_procs() {
	ps -e -o pid= -o uid= -o stat= |
	    awk -v u="$1" '$2 == u && $3 !~ /^Z/ { print $1 }' | tr '\n' ' '
}

# The fence's pid 1 from its state.
fence_pid() {
	$CTL show environment "$1" | awk '$1 == "pid:" { print $2 }'
}

# The uid a fence's processes run as.
fence_uid() {
	$CTL show environment "$1" | sed -n 's/.*(runs as uid \([0-9]*\)).*/\1/p'
}

atf_test_case release_refuses cleanup
release_refuses_head() {
	atf_set descr "the release binary refuses mock and subprocess at boot, on the control socket and over HTTP, naming why; nothing falls back to native"
	atf_set require.user root
}
release_refuses_body() {
	fenced_vars
	if [ "$(atf_config_get development_backends 0)" = 1 ]; then
		atf_skip "built with DEVELOPMENT_BACKENDS=1: the release binary has them"
	fi
	fenced_start
	for b in mock subprocess; do
		atf_check -s exit:1 -e match:"backend-unavailable: backend $b is not available: a release build has no development backends.*nothing falls back" \
		    $CTL boot k$b backend $b
	done
	t=$($CTL token | tail -1)
	for b in mock subprocess; do
		call "$t" POST /api/environments/h$b "{\"backend\":\"$b\"}"
		expect 501 '"error": *"backend-unavailable"' \
		    'a release build has no development backends'
	done
	# The default from fenced.conf too.
	fenced_stop
	fenced_conf > fenced.conf
	echo 'backend subprocess' >> fenced.conf
	fenced_start
	atf_check -s exit:1 -e match:"backend-unavailable.*release build" \
	    $CTL boot dflt
	atf_check -o match:"fences: 0 running" $CTL show stats
	fenced_stop
}
release_refuses_cleanup() { fenced_cleanup; }

atf_test_case mock cleanup
mock_head() {
	atf_set descr "the test build boots a mock fence: canned answers over the control socket and HTTP, nothing run, no process; it stays unmeasured and require L1 fails"
	atf_set require.user root
}
mock_body() {
	fenced_vars
	dev_start
	atf_check -o match:"^backend: *mock" -o match:"^state: *running" \
	    -o match:"^pid: *0\$" $CTL boot m backend mock
	atf_check -o inline:"mock: echo hi\n" $CTL exec m -- echo hi
	atf_check -s exit:3 -e inline:"mock: exit 3\n" $CTL exec m -- sh -c 'exit 3'
	# Nothing ran: no file appears in the home.
	atf_check -o ignore $CTL exec m -- touch ran
	h=$($CTL show environment m | awk '$1 == "home:" { print $2 }')
	[ -d "$h" ] || atf_fail "no home $h"
	[ ! -e "$h/ran" ] || atf_fail "a mock fence ran a command"
	atf_check -o match:"^level: *unmeasured" $CTL show environment m

	t=$($CTL token | tail -1)
	call "$t" POST /api/environments/m/exec '{"command":"uname -a"}'
	expect 200 '"stdout": *"mock: uname -a\\n"' '"exitCode": *0'
	# stdin comes back after the command line.
	call "$t" POST /api/environments/m/exec '{"command":"cat","stdin":"some input"}'
	expect 200 '"stdout": *"mock: cat\\nsome input"'
	call "$t" POST /api/environments/m2 '{"backend":"mock","require":"L1"}'
	expect 412 '"error": *"require-not-met"' 'unmeasured'
	atf_check -s exit:1 -e match:"require-not-met.*measured unmeasured" \
	    $CTL boot m3 backend mock require L1
	atf_check -o match:"stopped m" $CTL stop m
	atf_check -o match:"fences: 0 running" $CTL show stats
	fenced_stop
}
mock_cleanup() { fenced_cleanup; }

# A boot slower than fencectl's old 30 s: mock's READY comes
# FENCED_TEST_MOCK_READY_MS after the HELLO (test build only), as a vm's
# may under TCG (the daemon allows every backend BOOT_AGENT_WAIT_MAX).
atf_test_case boot_slow cleanup
boot_slow_head() {
	atf_set descr "a boot the daemon takes 35 s for (mock, its READY delayed) is waited for and answered: fencectl no longer gives up after 30 s (issue 28)"
	atf_set require.user root
	atf_set timeout 300
}
boot_slow_body() {
	fenced_vars
	export FENCED_TEST_MOCK_READY_MS=35000
	dev_start
	unset FENCED_TEST_MOCK_READY_MS
	atf_check -o match:"^backend: *mock" -o match:"^state: *running" \
	    $CTL boot slow backend mock
	atf_check -o match:"fences: 1 running" $CTL show stats
	fenced_stop
}
boot_slow_cleanup() { fenced_cleanup; }

# fences_running N: the daemon's stats say N fences run.
fences_running() {
	$CTL show stats | grep -q "^fences: $1 running"
}

atf_test_case boot_abandoned cleanup
boot_abandoned_head() {
	atf_set descr "a boot whose client goes away before the answer (fencectl -w gives up, an HTTP client closes, another user's fencectl is killed) is stopped, said in the log, never listed; another owner's fence of the same key runs on, and the key boots again (issue 28)"
	atf_set require.user root
	atf_set timeout 300
}
boot_abandoned_body() {
	fenced_vars
	users_add 1 fdab
	fenced_run_socket
	h=$(fenced_homes)
	chmod 0711 "$h"
	fenced_conf | sed -e "s|^homes .*|homes \"$h/%u\"|" > fenced.conf
	export FENCED_TEST_MOCK_READY_MS=4000
	dev_start
	unset FENCED_TEST_MOCK_READY_MS
	ua=$(sed -n 1p users.txt)
	A="$(as_user "$ua") $BIN/fencectl -s $(cat run.sock)"
	# Root's own k, up before anything is abandoned.
	atf_check -o match:"^state: *running" $CTL boot k backend mock

	# fencectl gives up: it says the boot is abandoned.
	atf_check -s exit:1 -e match:"no reply from fenced in 1000 ms; the boot is abandoned and fenced stops the fence" \
	    $CTL -w 1 boot gone backend mock
	# An HTTP client closes before the answer.
	t=$($CTL token | tail -1)
	curl -sS -m 1 -X POST -H "x-voicebox-host-token: $t" \
	    -H 'Content-Type: application/json' --data-binary \
	    '{"backend":"mock"}' \
	    "http://127.0.0.1:$(fenced_port)/api/environments/hgone" \
	    > /dev/null 2>&1 && atf_fail "the HTTP boot answered within 1 s"
	# Another user's fencectl, killed while it waits, for a key root has.
	$A boot k backend mock > a.out 2>&1 &
	apid=$!
	sleep 1
	kill -TERM $apid
	wait $apid
	# Each boot comes up (or would) 4 s after its start: by 8 s every
	# one is gone, and only root's k runs.
	sleep 8
	wait_until 20 fences_running 1 ||
	    atf_fail "an abandoned boot runs: $($CTL show environments | tr '\n' ' ')"
	atf_check -s exit:1 -e match:"not-found" $CTL show environment gone
	atf_check -s exit:1 -e match:"not-found" $A show environment k
	call "$t" GET /api/environments/hgone
	expect 404
	atf_check -o match:"^state: *running" $CTL show environment k
	for k in gone hgone; do
		grep -q "fence $k of uid 0: the client of its boot went away; stopping it" fenced.log ||
		    atf_fail "no log line for $k"
	done
	grep -q "fence k of uid $(id -u "$ua"): the client of its boot went away" fenced.log ||
	    atf_fail "no log line for the other user's k"
	# Nothing of them is left to block the key.
	atf_check -o match:"^state: *running" $CTL boot gone backend mock
	atf_check -o match:"^state: *running" $A boot k backend mock
	atf_check -o match:"fences: 3 running" $CTL show stats
	fenced_stop
}
boot_abandoned_cleanup() { fenced_cleanup; }

atf_test_case subprocess_exec cleanup
subprocess_exec_head() {
	atf_set descr "the test build boots a subprocess fence: real commands, as the fence's uid (never 0), in its home, over the control socket and HTTP"
	atf_set require.user root
}
subprocess_exec_body() {
	fenced_vars
	dev_start
	atf_check -o match:"^backend: *subprocess" -o match:"^state: *running" \
	    $CTL boot s backend subprocess
	u=$(fence_uid s)
	[ -n "$u" ] && [ "$u" -ne 0 ] || atf_fail "runs as uid '$u'"
	h=$($CTL show environment s | awk '$1 == "home:" { print $2 }')
	atf_check -o inline:"$u\n" $CTL exec s -- id -u
	atf_check -o inline:"$h\n$h\n" $CTL exec s -- sh -c 'pwd; echo $HOME'
	atf_check -o inline:"$(uname -r)\n" $CTL exec s -- uname -r
	atf_check -o inline:"CapEff:\t0000000000000000\n" $CTL exec s -- \
	    grep CapEff /proc/self/status
	# It really ran: the file is in the home, the fence's.
	atf_check $CTL exec s -- sh -c 'echo real > made'
	atf_check -o inline:"real\n" cat "$h/made"
	atf_check -o inline:"$u\n" stat -c %u "$h/made"
	atf_check -s exit:3 $CTL exec s -- sh -c 'exit 3'

	t=$($CTL token | tail -1)
	call "$t" POST /api/environments/hs '{"backend":"subprocess"}'
	expect 201 '"backend": *"subprocess"'
	call "$t" POST /api/environments/hs/exec '{"command":"echo over http; id -u"}'
	expect 200 "\"stdout\": *\"over http\\\\n$(fence_uid hs)\\\\n\""
	call "$t" DELETE /api/environments/hs
	expect 200
	fenced_stop
}
subprocess_exec_cleanup() { fenced_cleanup; }

atf_test_case subprocess_level cleanup
subprocess_level_head() {
	atf_set descr "a subprocess fence is probed like any other and earns not-earned, its violations named; require L1 fails (412 over HTTP) and leaves nothing running"
	atf_set require.user root
}
subprocess_level_body() {
	fenced_vars
	dev_start
	atf_check -o ignore $CTL boot s backend subprocess tier L2
	atf_check_equal not-earned "$(level_of s)"
	# Each axis names its violations in the state; a refusal's message
	# is bounded, so on a host with many mounts it names the filesystem's
	# first and may stop there.
	t=$($CTL token | tail -1)
	call "$t" GET /api/environments/s
	expect 200 '"processes": *\{"verdict": *"not-fenced"' \
	    "processes: pid namespace is the host's" \
	    "filesystem: mount namespace is the host's"
	atf_check -s exit:1 \
	    -e match:"require-not-met: fence r measured not-earned, required L1" \
	    -e match:"filesystem: mount namespace is the host's" \
	    $CTL boot r backend subprocess require L1
	call "$t" POST /api/environments/hr '{"backend":"subprocess","require":"L1"}'
	expect 412 '"error": *"require-not-met"' 'measured not-earned' \
	    "filesystem: mount namespace is the host's"
	atf_check -s exit:1 -e match:"not-found" $CTL show environment r
	atf_check -s exit:1 -e match:"not-found" $CTL show environment hr
	atf_check -o match:"fences: 1 running" $CTL show stats
	fenced_stop
}
subprocess_level_cleanup() { fenced_cleanup; }

# Wait until uid $1 has at least $2 processes (3 s at most).
wait_procs() {
	i=0
	while [ "$(uid_procs "$1" | wc -w)" -lt "$2" ]; do
		i=$((i + 1))
		[ $i -lt 60 ] || atf_fail "the commands did not start: $(ps -u "$1")"
		sleep 0.05
	done
}

# Wait until uid $1 has no process left (3 s at most): what was killed
# after its agent is init's to reap.
wait_no_procs() {
	i=0
	while [ -n "$(uid_procs "$1")" ] && [ $i -lt 60 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	atf_check_equal "" "$(uid_procs "$1")"
}

atf_test_case subprocess_stop cleanup
subprocess_stop_head() {
	atf_set descr "stop, and the daemon's shutdown, leave no process of a subprocess fence and no cgroup of it, even of commands that left the agent's tree"
	atf_set require.user root
	atf_set timeout 60
}
subprocess_stop_body() {
	fenced_vars
	dev_start
	atf_check -o ignore $CTL boot s backend subprocess
	u=$(fence_uid s)
	p=$(fence_pid s)
	# A command still running, with a child in a session of its own.
	$CTL exec s -- sh -c 'setsid sleep 300 & sleep 300' > /dev/null 2>&1 &
	i=0
	while [ "$(uid_procs "$u" | wc -w)" -lt 4 ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || atf_fail "the commands did not start: $(ps -u "$u")"
		sleep 0.05
	done
	cg=$(for d in $(fenced_cgroup_dirs); do
		grep -l "^$p\$" "$d"/*/cgroup.procs 2>/dev/null
	done | head -1)
	[ -n "$cg" ] || atf_fail "pid $p is in no cgroup of the daemon"
	atf_check -o match:"stopped s" $CTL stop s
	# Stopped means killed: nothing of the fence runs once the answer
	# is in.  What was killed after its agent is init's to reap.
	atf_check_equal "" "$(uid_live_procs "$u")"
	wait_no_procs "$u"
	[ ! -d "$(dirname "$cg")" ] || atf_fail "$(dirname "$cg") left"

	# The daemon's shutdown stops them too.
	atf_check -o ignore $CTL boot s2 backend subprocess
	u=$(fence_uid s2)
	$CTL exec s2 -- sleep 300 > /dev/null 2>&1 &
	i=0
	while [ "$(uid_procs "$u" | wc -w)" -lt 3 ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || atf_fail "the command did not start"
		sleep 0.05
	done
	fenced_stop
	# The broker went first, and the agent with its channel: what the
	# fencer killed then was init's to reap.  Zombies go within a
	# moment; a live command would stay its 300 s.
	i=0
	while [ -n "$(uid_procs "$u")" ] && [ $i -lt 40 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	atf_check_equal "" "$(uid_procs "$u")"
}
subprocess_stop_cleanup() { fenced_cleanup; }

atf_test_case subprocess_sigkill cleanup
subprocess_sigkill_head() {
	atf_set descr "kill -9 of the fencer, or of every daemon process, leaves no process of a subprocess fence once the daemon has exited or a new one has started"
	atf_set require.user root
	atf_set timeout 60
}
subprocess_sigkill_body() {
	fenced_vars
	dev_start
	atf_check -o ignore $CTL boot s backend subprocess
	u=$(fence_uid s)
	$CTL exec s -- sh -c 'setsid sleep 300 & sleep 300' > /dev/null 2>&1 &
	wait_procs "$u" 4
	kill -9 "$(fenced_pid fencer)"
	fenced_wait_exit 10 || atf_fail "the daemon did not exit"
	wait_no_procs "$u"

	# Every process at once: the next daemon's sweep finds them.
	rm -f fenced.pids
	fenced_start
	atf_check -o ignore $CTL boot s backend subprocess
	u=$(fence_uid s)
	$CTL exec s -- sh -c 'setsid sleep 300 & sleep 300' > /dev/null 2>&1 &
	wait_procs "$u" 4
	kill -9 $(cat fenced.pids)
	fenced_wait_exit 10 || atf_fail "the daemon did not exit"
	fenced_start
	wait_no_procs "$u"
	fenced_stop
}
subprocess_sigkill_cleanup() { fenced_cleanup; }

atf_test_case subprocess_other_user cleanup
subprocess_other_user_head() {
	atf_set descr "a second local user can neither reach nor control another user's subprocess fence: not by name, not by signal, not through /proc"
	atf_set require.user root
	atf_set timeout 120
}
subprocess_other_user_body() {
	fenced_vars
	users_add 2 fdv
	fenced_run_socket
	h=$(fenced_homes)
	chmod 0711 "$h"
	fenced_conf | sed -e "s|^homes .*|homes \"$h/%u\"|" > fenced.conf
	dev_start
	ua=$(sed -n 1p users.txt)
	ub=$(sed -n 2p users.txt)
	A="$(as_user "$ua") $BIN/fencectl -s $(cat run.sock)"
	B="$(as_user "$ub") $BIN/fencectl -s $(cat run.sock)"
	atf_check -o match:"^backend: *subprocess" $A boot a backend subprocess
	atf_check -o inline:"$ua\n" $A exec a -- id -un
	pa=$($A show environment a | awk '$1 == "pid:" { print $2 }')
	[ -n "$pa" ] || atf_fail "no pid"

	# By name: b has no fence a, whatever it asks.
	atf_check -s exit:1 -e match:"not-found" $B exec a -- id
	atf_check -s exit:1 -e match:"not-found" $B stop a
	atf_check -s exit:1 -e match:"not-found" $B show environment a
	atf_check -s exit:1 -e ignore $B exec a -- true
	# Over HTTP with b's own token.
	tb=$($B token | tail -1)
	call "$tb" POST /api/environments/a/exec '{"command":"id"}'
	expect 404
	call "$tb" DELETE /api/environments/a
	expect 404

	# As b on the host, and from inside b's own subprocess fence: the
	# agent of a is a's process, not dumpable; b cannot signal it nor
	# read its memory, environment or descriptors.
	atf_check -s not-exit:0 -e ignore $(as_user "$ub") kill -0 "$pa"
	atf_check -s not-exit:0 -e ignore $(as_user "$ub") cat /proc/$pa/environ
	atf_check -s not-exit:0 -e ignore $(as_user "$ub") ls /proc/$pa/fd
	atf_check -o ignore $B boot b backend subprocess
	atf_check -s not-exit:0 -e ignore $B exec b -- kill -9 "$pa"
	atf_check -s not-exit:0 -e ignore $B exec b -- cat /proc/$pa/mem
	atf_check -s not-exit:0 -e ignore $B exec b -- ls "$h/$ua/a"
	# a's fence still runs and answers.
	atf_check -o inline:"$ua\n" $A exec a -- id -un
	atf_check -o match:"^state: *running" $A show environment a
	$A stop a > /dev/null
	$B stop b > /dev/null
	fenced_stop
}
subprocess_other_user_cleanup() { fenced_cleanup; }

atf_test_case subprocess_inside cleanup
subprocess_inside_head() {
	atf_set descr "from inside a subprocess fence the host is in plain sight (its processes, its /tmp, its loopback): no isolation, and the level says so; the uid still holds (root's files and the state directory stay closed)"
	atf_set require.user root
}
subprocess_inside_body() {
	fenced_vars
	dev_start
	atf_check -o ignore $CTL boot s backend subprocess
	ppid=$(fenced_pid parent)
	# The daemon's processes, and the host's pid 1.
	atf_check -o inline:"$(cat /proc/1/comm)\n" $CTL exec s -- cat /proc/1/comm
	atf_check -o match:"fenced" $CTL exec s -- cat /proc/$ppid/cmdline
	# The host's /tmp: a file written inside appears outside.
	m=/tmp/fenced-dev-$$
	atf_check $CTL exec s -- sh -c "echo inside > $m"
	atf_check -o inline:"inside\n" cat $m
	rm -f $m
	# The host's loopback: the daemon's HTTP port answers.
	atf_check -o match:"^[0-9]+$" $CTL exec s -- \
	    curl -s -o /dev/null -w '%{http_code}' \
	    "http://127.0.0.1:$(fenced_port)/api/environments"
	# What its uid cannot: root's secrets, the daemon's state.
	atf_check -s not-exit:0 -e ignore $CTL exec s -- cat /etc/shadow
	atf_check -s not-exit:0 -e ignore $CTL exec s -- ls "$PWD/state"
	atf_check -s not-exit:0 -e ignore $CTL exec s -- kill -0 "$ppid"
	atf_check -s not-exit:0 -e ignore $CTL exec s -- \
	    kill -0 "$(fenced_pid fencer)"
	# Nor leave its cgroup, where the stop finds every process.
	atf_check -s not-exit:0 -e ignore $CTL exec s -- sh -c \
	    'for f in /sys/fs/cgroup/pids/cgroup.procs /sys/fs/cgroup/cgroup.procs; do
		[ -e "$f" ] && echo $$ > "$f" && exit 0
	done; exit 1'
	# And the level names it.
	atf_check_equal not-earned "$(level_of s)"
	atf_check -s exit:1 -e match:"host secret .* readable" \
	    -e match:"processes of other uids visible" \
	    $CTL boot r backend subprocess require L1
	fenced_stop
}
subprocess_inside_cleanup() { fenced_cleanup; }

atf_test_case subprocess_private_bin cleanup
subprocess_private_bin_head() {
	atf_set descr "the daemon's programs in a folder only root may enter (a checkout under /root, 0700, as on a stock Debian): a subprocess fence still starts its agent and runs its probe"
	atf_set require.user root
}
subprocess_private_bin_body() {
	fenced_vars
	d=$(mktemp -d /var/tmp/fenced-private.XXXXXX)
	echo "$d" > private.path
	chmod 0700 "$d"
	mkdir "$d/bin"
	cp "$HOOKS/fenced" "$HOOKS/fence-agent" "$HOOKS/fence-probe" "$d/bin/"
	FENCED_BIN=$d/bin/fenced
	chmod 0711 "$(fenced_homes)"
	fenced_start
	atf_check -o match:"^state: *running" $CTL boot s backend subprocess
	u=$(fence_uid s)
	atf_check -o inline:"$u\n" $CTL exec s -- id -u
	# The folder stays closed to the fence, and its probe still runs.
	atf_check -s not-exit:0 -e ignore $CTL exec s -- ls "$d"
	atf_check_equal not-earned "$(level_of s)"
	fenced_stop
}
subprocess_private_bin_cleanup() {
	fenced_cleanup
	d=$(cat private.path 2>/dev/null)
	case "$d" in /var/tmp/fenced-private.*) rm -rf "$d" ;; esac
}

atf_init_test_cases() {
	atf_add_test_case release_refuses
	atf_add_test_case mock
	atf_add_test_case boot_slow
	atf_add_test_case boot_abandoned
	atf_add_test_case subprocess_exec
	atf_add_test_case subprocess_level
	atf_add_test_case subprocess_stop
	atf_add_test_case subprocess_sigkill
	atf_add_test_case subprocess_other_user
	atf_add_test_case subprocess_inside
	atf_add_test_case subprocess_private_bin
}
