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
	wait_empty runsc_left
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
	# The sandbox is held to the fence's memory (512M by default) and
	# to its pids times RUNSC_PIDS_FACTOR plus RUNSC_PIDS_OVERHEAD:
	# runsc's own cgroup on v1, the fencer's on v2.
	sb=$(ps -eo pid=,args= | grep -F -- "--root=$PWD/state/runsc/state" | \
	    grep -F runsc-sandbox | grep -v grep | awk '{ print $1 }')
	[ -n "$sb" ] || atf_fail "no sandbox process"
	if v2=$(sed -n 's/^0:://p' /proc/$sb/cgroup) &&
	    [ -f "/sys/fs/cgroup$v2/memory.max" ]; then
		atf_check -o inline:"536870912\n" cat "/sys/fs/cgroup$v2/memory.max"
		atf_check -o inline:"4352\n" cat "/sys/fs/cgroup$v2/pids.max"
		atf_check -o inline:"100000 100000\n" cat "/sys/fs/cgroup$v2/cpu.max"
	else
		m=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3 }' /proc/$sb/cgroup)
		atf_check -o inline:"536870912\n" \
		    cat "/sys/fs/cgroup/memory$m/memory.limit_in_bytes"
	fi
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
	for victim in fencer parent broker prober egress; do
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

atf_test_case lone_lock cleanup
lone_lock_head() {
	atf_set descr "a container lock with no state beside it (runsc killed between the two) is removed when the daemon starts; a file that is not a container's is left alone"
	atf_set require.user root
	atf_set timeout 60
}
lone_lock_body() {
	runsc_require
	fenced_vars
	fenced_start
	fenced_stop
	id=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
	[ ${#id} -eq 32 ] || atf_fail "no container id: $id"
	: > "state/runsc/state/${id}_sandbox:${id}.lock"
	: > state/runsc/state/not-a-container
	fenced_start
	# The fencer sweeps when it has read runsc's --version, which may
	# come after the daemon answers (seconds under emulation).
	wait_until 30 grep -Eq "runsc (/.*platform|fences refused)" \
	    fenced.log || atf_fail "the fencer never started runsc"
	atf_check_equal "not-a-container" "$(ls -A state/runsc/state)"
	fenced_stop
	rm state/runsc/state/not-a-container
}
lone_lock_cleanup() { fenced_cleanup; }

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

# The pid of this daemon's gofer, the one runsc process of it there is.
runsc_gofer() {
	ps -eo pid=,args= | grep -F -- "--root=$PWD/state/runsc/state" | \
	    grep -F runsc-gofer | grep -v grep | awk '{ print $1 }'
}

atf_test_case level_l3 cleanup
level_l3_head() {
	atf_set descr "a runsc fence earns L3 as measured: the kernel axis separate, filesystem, processes and network fenced by its report and by the host's own reading of the sandbox and the gofer; require L3 boots it over fencectl and HTTP"
	atf_set require.user root
}
level_l3_body() {
	runsc_require
	fenced_vars
	fenced_start
	usr_before=$(awk '$5 == "/usr" || $5 == "/etc"' /proc/self/mountinfo)
	atf_check -o match:"^level: *L3\$" -o match:"^kernel: *separate, release " \
	    $CTL boot g backend runsc require L3
	atf_check -o match:"^level: *L3\$" -o match:"^kernel: *separate" \
	    $CTL show environment g
	# gVisor's kernel answers uname, not the host's.
	atf_check -o not-match:"$(uname -r)" -o match:"^Linux g " \
	    $CTL exec g -- uname -a
	$CTL probe g > verdict || atf_fail "probe"
	for a in filesystem processes network; do
		atf_check -o match:"\"$a\":\\{\"verdict\":\"fenced\",\"violations\":\\[\\]" \
		    cat verdict
	done
	atf_check -o match:'"kernel":\{"verdict":"separate"' cat verdict
	# The kernel's surface it reports is gVisor's, not held against
	# the host's (docs/probe.md, "The kernel surface"): listed, no
	# violation, and L3 kept.
	atf_check -o match:'"surface":\{"verdict":"(passes|fenced)","violations":\[\],"reason":null,"reachable":\[[^]]*\],"kernel":"user"\}' \
	    cat verdict
	atf_check -o match:"^surface: *(passes|fenced), its own kernel in user space:" \
	    $CTL show environment g
	# What grants it is the host's reading: the gofer's /usr and /etc
	# are read-only mounts in the host kernel's eyes, made in runsc's
	# own mount namespace, and the host's own table is untouched.
	g=$(runsc_gofer)
	[ -n "$g" ] || atf_fail "no gofer"
	for m in /usr /etc; do
		atf_check -o match:"^ro," -x \
		    "awk '\$5 == \"$m\" { print \$6 }' /proc/$g/mountinfo"
	done
	atf_check_equal "$usr_before" \
	    "$(awk '$5 == "/usr" || $5 == "/etc"' /proc/self/mountinfo)"

	# Over HTTP: boot with require L3, exec, stop.
	t=$($CTL token | tail -1)
	u="http://127.0.0.1:$(fenced_port)/api/environments"
	atf_check -o inline:"201" curl -s -o body -w '%{http_code}' \
	    -H "x-voicebox-host-token: $t" \
	    -d '{"backend":"runsc","require":"L3"}' "$u/h"
	atf_check -o match:'"level": *"L3"' -o match:'"backend": *"runsc"' \
	    cat body
	atf_check -o inline:"200" curl -s -o body -w '%{http_code}' \
	    -H "x-voicebox-host-token: $t" -d '{"command":"uname -r"}' \
	    "$u/h/exec"
	atf_check -o not-match:"$(uname -r)" -o match:'"exitCode": *0' cat body
	atf_check -o inline:"200" curl -s -o /dev/null -w '%{http_code}' \
	    -H "x-voicebox-host-token: $t" -X DELETE "$u/h"
	atf_check -o match:"^stopped g" $CTL stop g
	runsc_clean
	fenced_stop
}
level_l3_cleanup() { fenced_cleanup; }

atf_test_case home_image cleanup
home_image_head() {
	atf_set descr "limit home on a runsc fence: the image is mounted for the gofer only, full at its size, kept across stop and boot, detached at stop; the fence still earns L3"
	atf_set require.user root
}
home_image_body() {
	runsc_require
	[ -e /dev/loop-control ] || atf_skip "no /dev/loop-control"
	fenced_vars
	fenced_conf > fenced.conf
	echo 'limit home 32M' >> fenced.conf
	fenced_start
	img="$PWD/state/homes/0/h.img"
	atf_check -o match:"^level: *L3\$" -o match:"^home: *$img\$" \
	    -o match:"^home use: [0-9]+K of 32768K\$" \
	    $CTL boot h backend runsc require L3
	atf_check -s not-exit:0 -e match:"No space left on device" \
	    $CTL exec h -- dd if=/dev/zero of=big bs=1M count=100
	atf_check $CTL exec h -- sh -c 'rm -f big; echo kept > note'
	# Mounted in runsc's namespace only, never in the host's.
	atf_check -s exit:1 -o empty grep -F "$img" /proc/self/mountinfo
	atf_check -o empty awk -v d="$PWD/state/runsc" \
	    'index($5, d) == 1' /proc/self/mountinfo
	$CTL stop h > /dev/null
	runsc_clean
	loop_wait_detached "$img"
	atf_check -o ignore $CTL boot h backend runsc
	atf_check -o inline:"kept\n" $CTL exec h -- cat note
	$CTL stop h > /dev/null
	fenced_stop
	runsc_clean
}
home_image_cleanup() { fenced_cleanup; }

atf_test_case weakened cleanup
weakened_head() {
	atf_set descr "a runsc fence with a weakened bundle (a test build that binds the host's /var) earns less than L3 and names why, and require L3 on it fails; a bundle that gives CAP_NET_RAW gives the fence nothing on this gVisor"
	atf_set require.user root
}
weakened_body() {
	runsc_require
	fenced_vars
	FENCED_TEST_RUNSC_HOSTMOUNT=1 FENCED_BIN=$HOOKS/fenced fenced_start
	$CTL boot w backend runsc > /dev/null || atf_fail "boot w"
	$CTL probe w > verdict || atf_fail "probe w"
	atf_check -o match:"^level: not-earned" \
	    -o match:"filesystem: host path /var on /var bound in" cat verdict
	atf_check -s exit:1 \
	    -e match:"require-not-met.*required L3; stopped: .*host path /var on /var bound in" \
	    $CTL boot w2 backend runsc require L3
	atf_check -s exit:1 -e match:"not-found" $CTL show environment w2
	fenced_stop
	runsc_clean

	# A bundle that gives CAP_NET_RAW in every set: this gVisor gives a
	# non-root init none of it (docs/runsc.md), so the fence holds no
	# capability, the probe sees none, and L3 stands.  Were it held, the
	# report's CapEff would take L3 away (report_test:l3_host_reading).
	FENCED_TEST_RUNSC_CAP=1 FENCED_BIN=$HOOKS/fenced fenced_start
	$CTL boot c backend runsc > /dev/null || atf_fail "boot c"
	grep -q CAP_NET_RAW state/runsc/bundles/*/config.json || \
	    atf_fail "the test build's bundle gives no capability"
	atf_check -o match:"CapEff:[[:space:]]*0000000000000000" \
	    -o match:"CapBnd:[[:space:]]*0000000000000000" \
	    $CTL exec c -- sh -c 'grep Cap /proc/self/status /proc/1/status'
	$CTL probe c > verdict || atf_fail "probe c"
	atf_check -o match:"^level: L3" -o not-match:"CapEff is" cat verdict
	fenced_stop
	runsc_clean
}
weakened_cleanup() { fenced_cleanup; }

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
	atf_set descr "a second local user reaches neither runsc's state nor a bundle nor another user's runsc fence, nor its sandbox; nobody, as whom the sandbox runs, cannot trace it or read it"
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
	# Its sandbox runs as nobody: another uid cannot signal it, and
	# nobody itself (this runsc runs every sandbox as nobody) can
	# neither trace it nor read its memory, environment or files.
	sb=$(ps -eo pid=,args= | grep -F -- "--root=$PWD/state/runsc/state" | \
	    grep -F runsc-sandbox | grep -v grep | awk '{ print $1 }')
	[ -n "$sb" ] || atf_fail "no sandbox process"
	atf_check -s not-exit:0 -e ignore $U kill -0 "$sb"
	N="setpriv --reuid=65534 --regid=65534 --clear-groups"
	for f in environ mem maps; do
		atf_check -s not-exit:0 -e ignore $N cat /proc/$sb/$f
	done
	atf_check -s not-exit:0 -e ignore $N ls /proc/$sb/root/
	# (It may list the numbers of its descriptors, not what they are.)
	atf_check -s not-exit:0 -e ignore $N readlink /proc/$sb/fd/0
	atf_check -s not-exit:0 -e ignore $N cat /proc/$sb/fdinfo/0
	atf_check -o inline:"-1 1\n" $N /usr/bin/python3 -c "
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
print(libc.ptrace(16, $sb, 0, 0), ctypes.get_errno())"
	fenced_stop
}
attack_local_user_cleanup() { fenced_cleanup; }

# A command that calls PTRACE_TRACEME: lib.subr's traceme_check.
atf_test_case ptrace_traceme cleanup
ptrace_traceme_head() {
	atf_set descr "a command that calls PTRACE_TRACEME in a runsc fence runs on when it gets a signal (its supervisor is no tracer), and still dies at its timeout with its tree"
	atf_set require.user root
}
ptrace_traceme_body() {
	runsc_require
	fenced_vars
	fenced_start
	$CTL boot t backend runsc > /dev/null || atf_fail "boot"
	traceme_check t
	fenced_stop
}
ptrace_traceme_cleanup() { fenced_cleanup; }

# gVisor's tasks are not the host's: inside the sandbox the fence's pids
# limit is RLIMIT_NPROC, which this gVisor lets CAP_SYS_ADMIN in the
# caller's own user namespace pass.  The bundle's filter refuses a new
# user namespace, so a fork bomb stops at the limit with EAGAIN however
# it starts, and the fence lives on (docs/runsc.md).
atf_test_case pids_userns cleanup
pids_userns_head() {
	atf_set descr "in a runsc fence of pids 256 a new user namespace is refused and a fork bomb stops at the limit with EAGAIN, with or without one; the fence lives on"
	atf_set require.user root
	atf_set timeout 300
}
pids_userns_body() {
	runsc_require
	fenced_vars
	fenced_start
	$CTL boot p backend runsc pids 256 > /dev/null || atf_fail "boot"
	escape_plant p
	for a in res-forkbomb-userns res-forkbomb; do
		# The last bomb's children, killed, count until they are
		# reaped (slowly in a TCG guest): a command starts again
		# once they are.
		wait_until 60 sh -c "$CTL exec p -- true > /dev/null 2>&1" ||
		    atf_fail "$a: no command starts in the fence"
		# A command may start while the agent's next fork still
		# meets the limit the last bomb's unreaped children hold:
		# only that (EAGAIN, nothing run) is tried again.
		t=0
		until $CTL exec p timeout 60000 -- ./fence-escape -a $a \
		    > bomb.out 2> bomb.err; do
			t=$((t + 1))
			# Seen in the cgroup v2 TCG guest only (docs/runsc.md,
			# "A fork bomb ended the sandbox in CI's guest"): the
			# cause found there is mended, the sentry's panic line
			# says what it met if it comes back.
			if grep -q "lost its agent" bomb.err; then
				wait_until 10 grep -q "the sentry ended" \
				    fenced.log || true
				atf_expect_fail "a fork bomb ended the runsc \
sandbox (docs/runsc.md): $(grep -m1 "the sentry ended" fenced.log)"
				atf_fail "$a: $(cat bomb.err)"
			fi
			if [ $t -ge 6 ] || [ -s bomb.out ] ||
			    ! grep -q "Resource temporarily unavailable" bomb.err
			then
				atf_fail "$a: the exec failed: $(cat bomb.out \
				    bomb.err)"
			fi
			sleep 5
		done
		bomb_held $a 256 bomb.out ||
		    atf_fail "$a passed the limit: $(cat bomb.out)"
		atf_check -o match:"^state: *running" $CTL show environment p
	done
	for a in id-userns net-raw-userns net-packet-userns; do
		atf_check -o match:"^$a [a-z]+ blocked (unshare )?EPERM" \
		    $CTL exec p -- ./fence-escape -a $a
	done
	atf_check -o inline:"alive\n" $CTL exec p -- echo alive
	fenced_stop
}
pids_userns_cleanup() { fenced_cleanup; }

# Swap: the sandbox's memory cgroup lets memory and swap together no
# further than the memory limit, as a native fence's (docs/limits.md).
atf_test_case no_swap cleanup
no_swap_head() {
	atf_set descr "a runsc fence's sandbox may not swap beyond its memory limit, as a native fence: memory.memsw.limit_in_bytes at the limit on cgroup v1, memory.swap.max 0 on v2"
	atf_set require.user root
}
no_swap_body() {
	runsc_require
	fenced_vars
	fenced_start
	$CTL boot s backend runsc memory 256M > /dev/null || atf_fail "boot"
	sb=$(ps -eo pid=,args= | grep -F -- "--root=$PWD/state/runsc/state" | \
	    grep -F runsc-sandbox | grep -v grep | awk '{ print $1 }')
	[ -n "$sb" ] || atf_fail "no sandbox process"
	if v2=$(sed -n 's/^0:://p' /proc/$sb/cgroup) &&
	    [ -f "/sys/fs/cgroup$v2/memory.max" ]; then
		f=/sys/fs/cgroup$v2/memory.swap.max
		want=0
	else
		m=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3 }' /proc/$sb/cgroup)
		f=/sys/fs/cgroup/memory$m/memory.memsw.limit_in_bytes
		want=268435456
	fi
	if [ ! -f "$f" ]; then
		fenced_stop
		atf_skip "this kernel does not count swap (no $(basename "$f"))"
	fi
	atf_check -o inline:"$want\n" cat "$f"
	fenced_stop
}
no_swap_cleanup() { fenced_cleanup; }

atf_init_test_cases() {
	atf_add_test_case boot_exec_stop
	atf_add_test_case orphans
	atf_add_test_case kill9
	atf_add_test_case lone_lock
	atf_add_test_case unavailable
	atf_add_test_case level_l3
	atf_add_test_case weakened
	atf_add_test_case home_image
	atf_add_test_case attack_inside
	atf_add_test_case attack_local_user
	atf_add_test_case ptrace_traceme
	atf_add_test_case pids_userns
	atf_add_test_case no_swap
}
