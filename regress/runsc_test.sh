#! /usr/bin/atf-sh
# The runsc backend through the daemon (fencer/runsc/): a gVisor fence
# boots, runs commands on gVisor's kernel as the fence's uid, and leaves
# no runsc process, container state or bundle behind when it stops, when
# a fenced process is killed with SIGKILL and the daemon restarts, or
# when its boot fails.  Attacks from inside one and from a second local
# user.  Every case skips, saying why, where runsc is not installed.

. "$(atf_get_srcdir)/lib.subr"

runsc_require() {
	command -v runsc > /dev/null || \
	    atf_skip "runsc is not installed (scripts/deps.sh installs it)"
}

# What runsc left of this test's daemon: processes, state, bundles.
runsc_procs() {
	ps -eo pid=,args= | grep -F -- "--root=$PWD/state/runsc/state" | \
	    grep -v grep | awk '{ print $1 }'
}

runsc_left() {
	runsc_procs
	ls -A state/runsc/state 2>/dev/null
	ls -A state/runsc/bundles 2>/dev/null
}

runsc_clean() {
	i=0
	while [ -n "$(runsc_left)" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	atf_check_equal "" "$(runsc_left)"
}

atf_test_case boot_exec_stop cleanup
boot_exec_stop_head() {
	atf_set descr "a runsc fence runs on gVisor's kernel as the fence's uid; stop leaves no runsc process, container or bundle"
	atf_set require.user root
}
boot_exec_stop_body() {
	runsc_require
	fenced_vars
	fenced_start
	atf_check -o match:"^backend: *runsc" $CTL boot g backend runsc
	atf_check -o match:"^backend: *runsc" $CTL show environment g
	atf_check -o match:"runsc" $CTL show environments
	# gVisor's kernel answers, not the host's.
	host=$(uname -r)
	r=$($CTL exec g -- uname -r) || atf_fail "exec uname"
	[ -n "$r" ] && [ "$r" != "$host" ] || \
	    atf_fail "uname -r in the fence is the host's ($r)"
	fu=$($CTL exec g -- /usr/bin/id -u)
	in_fence_uids "$fu" || atf_fail "g runs as uid '$fu', not one of $(fenced_uids)"
	atf_check -o inline:"hello\n" \
	    $CTL exec g -- sh -c 'echo hello > f; cat f'
	[ "$(cat "$(fenced_homes)/g/f")" = hello ] || \
	    atf_fail "the home is not the host's sandbox home"
	# One bundle and one container while it runs, named by no key.
	atf_check_equal 1 "$(ls state/runsc/bundles | wc -l)"
	ls state/runsc/bundles | grep -q g && atf_fail "bundle named by key"
	atf_check -o match:"^stopped g" $CTL stop g
	runsc_clean
	[ -f "$(fenced_homes)/g/f" ] || atf_fail "the home lost its file"
	fenced_stop
}
boot_exec_stop_cleanup() { fenced_cleanup; }

atf_test_case orphans cleanup
orphans_head() {
	atf_set descr "a command's background processes die with it in a runsc fence too"
	atf_set require.user root
}
orphans_body() {
	runsc_require
	fenced_vars
	fenced_start
	$CTL boot o backend runsc > /dev/null || atf_fail "boot"
	atf_check -o inline:"started\n" \
	    $CTL exec o -- sh -c 'sleep 300 & echo started'
	sleep 1
	atf_check -o not-match:"sleep" $CTL exec o -- sh -c \
	    'cat /proc/[0-9]*/comm'
	fenced_stop
}
orphans_cleanup() { fenced_cleanup; }

atf_test_case kill9 cleanup
kill9_head() {
	atf_set descr "kill -9 of the fencer, then of the parent: once the daemon restarts no runsc process, container state or bundle is left"
	atf_set require.user root
	atf_set timeout 120
}
kill9_body() {
	runsc_require
	fenced_vars
	for victim in fencer parent broker prober; do
		fenced_start
		$CTL boot k backend runsc > /dev/null || atf_fail "boot"
		atf_check_equal 1 "$(ls state/runsc/bundles | wc -l)"
		case $victim in
		parent)	pid=$FENCED_PID ;;
		*)	pid=$(pgrep -P $FENCED_PID -f "fenced: $victim" | \
			    head -1) ;;
		esac
		[ -n "$pid" ] || atf_fail "no $victim"
		kill -9 $pid
		fenced_wait_exit 10 || atf_fail "fenced lived on after its $victim"
		# A killed parent leaves its children to notice; wait for them.
		for p in $(cat fenced.pids); do
			i=0
			while [ -d /proc/$p ] && [ $i -lt 100 ]; do
				sleep 0.1
				i=$((i + 1))
			done
		done
		fenced_start
		runsc_clean
		fenced_stop
	done
}
kill9_cleanup() { fenced_cleanup; }

atf_test_case unavailable cleanup
unavailable_head() {
	atf_set descr "a boot on runsc that cannot be built here fails naming why, and nothing falls back"
	atf_set require.user root
}
unavailable_body() {
	fenced_vars
	fenced_conf > fenced.conf
	echo 'runsc "/nonexistent/runsc"' >> fenced.conf
	fenced_start
	atf_check -s not-exit:0 -e match:"runsc /nonexistent/runsc .*cannot be run" \
	    $CTL boot u backend runsc
	atf_check -s not-exit:0 -e match:"nothing falls back" \
	    $CTL boot u backend runsc
	atf_check -o match:"fences: 0 running" $CTL show stats
	# A native boot is not touched by it.
	atf_check -o match:"^backend: *native" $CTL boot n
	fenced_stop

	# Not a runsc at all: --version says no release.
	printf '#!/bin/sh\necho "not runsc 1.0"\n' > fake-runsc
	chmod 0755 fake-runsc
	fenced_conf > fenced.conf
	echo "runsc \"$PWD/fake-runsc\"" >> fenced.conf
	fenced_start
	atf_check -s not-exit:0 -e match:"not a runsc this fenced knows" \
	    $CTL boot u backend runsc
	fenced_stop

	# Too old a runsc.
	printf '#!/bin/sh\necho "runsc version release-20200101.0"\n' > \
	    fake-runsc
	fenced_start
	atf_check -s not-exit:0 -e match:"older than the oldest" \
	    $CTL boot u backend runsc
	fenced_stop
}
unavailable_cleanup() { fenced_cleanup; }

atf_test_case attack_inside cleanup
attack_inside_head() {
	atf_set descr "from inside a runsc fence: no host files, no other fence, no network, no daemon"
	atf_set require.user root
}
attack_inside_body() {
	runsc_require
	fenced_vars
	fenced_start
	$CTL boot a backend runsc > /dev/null || atf_fail "boot a"
	$CTL boot b backend runsc > /dev/null || atf_fail "boot b"
	$CTL exec b -- sh -c 'echo secret-of-b > s' || atf_fail "write b"
	# Host paths outside the bundle: not there.
	for p in /var/log /root /work /srv "$PWD" "$(fenced_homes)"; do
		atf_check -s not-exit:0 -e ignore $CTL exec a -- ls -d "$p"
	done
	# The read-only system directories, and no secret of the host's.
	atf_check -s not-exit:0 -e ignore $CTL exec a -- sh -c 'echo x > /usr/x'
	atf_check -s not-exit:0 -e ignore $CTL exec a -- sh -c 'echo x > /etc/x'
	atf_check -s not-exit:0 -e ignore $CTL exec a -- cat /etc/shadow
	# The other fence's home and processes.
	atf_check -s not-exit:0 -o not-match:"secret-of-b" -e ignore \
	    $CTL exec a -- sh -c 'cat /home/*/s; grep -r secret-of-b / 2>/dev/null'
	atf_check -o not-match:"sleep" $CTL exec a -- sh -c \
	    'cat /proc/[0-9]*/comm'
	# The network: not the daemon's port, no interface but loopback.
	atf_check -s not-exit:0 -e ignore $CTL exec a -- /usr/bin/python3 -c \
	    "import socket; socket.create_connection(('127.0.0.1', $(fenced_port)), 2)"
	atf_check -o not-match:"eth|ifb|veth" $CTL exec a -- cat /proc/net/dev
	# The daemon's control socket is nowhere inside.
	atf_check -s not-exit:0 -e ignore $CTL exec a -- ls "$PWD/ctl.sock"
	# No capability, and no way back to root.
	atf_check -o match:"CapEff:[[:space:]]*0000000000000000" \
	    $CTL exec a -- grep CapEff /proc/self/status
	atf_check -o match:"CapBnd:[[:space:]]*0000000000000000" \
	    $CTL exec a -- grep CapBnd /proc/self/status
	fenced_stop
}
attack_inside_cleanup() { fenced_cleanup; }

atf_test_case attack_local_user cleanup
attack_local_user_head() {
	atf_set descr "a second local user reaches neither runsc's state nor a bundle nor another user's runsc fence"
	atf_set require.user root
}
attack_local_user_body() {
	runsc_require
	fenced_vars
	users_add 1 rsc
	u=$(sed -n 1p users.txt)
	fenced_start
	$CTL boot v backend runsc > /dev/null || atf_fail "boot"
	b=$(ls state/runsc/bundles | head -1)
	[ -n "$b" ] || atf_fail "no bundle"
	U=$(as_user $u)
	# What stands between the user and runsc's files is their own mode,
	# not the test's folder: let the user walk up to them.
	chmod 0711 . state
	atf_check -o ignore $U ls -d state/runsc
	atf_check -s not-exit:0 -e ignore $U ls state/runsc
	atf_check -s not-exit:0 -e ignore $U ls state/runsc/state
	atf_check -s not-exit:0 -e ignore $U cat state/runsc/bundles/$b/config.json
	atf_check -s ignore -o not-match:"$b" -e ignore \
	    $U runsc --root=$PWD/state/runsc/state list
	atf_check -s not-exit:0 -e ignore $U runsc --root=$PWD/state/runsc/state \
	    exec $b /bin/true
	# The fence is root's: the other user's fencectl does not see it.
	atf_check -s not-exit:0 -e ignore $U $CTL exec v -- id
	fenced_stop
}
attack_local_user_cleanup() { fenced_cleanup; }

atf_init_test_cases() {
	atf_add_test_case boot_exec_stop
	atf_add_test_case orphans
	atf_add_test_case kill9
	atf_add_test_case unavailable
	atf_add_test_case attack_inside
	atf_add_test_case attack_local_user
}
