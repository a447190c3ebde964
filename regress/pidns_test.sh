#! /usr/bin/atf-sh
# Two daemons on one machine in two pid namespaces: daemon A on the
# host (./a), daemon B as pid 1 of a pid namespace of its own (./b,
# unshare --pid --fork --mount-proc, as in a container).  Each has its
# own configuration, state, socket and port.  Neither may touch what is
# the other's, whichever starts, stops or dies first; no pid decides
# anything about another daemon (docs/fence.md, "Two daemons, any pid
# namespaces").

. "$(atf_get_srcdir)/lib.subr"

# d_ctl a|b ARGS: fencectl on that daemon's socket.
d_ctl() {
	_d=$1
	shift
	"$BIN/fencectl" -s "$PWD/$_d/ctl.sock" "$@"
}

# d_in a|b CMD: CMD where daemon's pids mean something (B's: its pid
# and mount namespaces, whose /proc is of its pid namespace).
d_in() {
	_d=$1
	shift
	if [ "$_d" = b ]; then
		nsenter -t "$(cat b/fenced.pid)" -p -m "$@"
	else
		"$@"
	fi
}

# d_start a|b [host]: start that daemon and wait until it answers (b
# on the host with "host").
# b/fenced.pid is the host pid of B's parent (pid 1 of its namespace).
# Its ids, one a line, in $d/ids (for the cleanup).
d_start() {
	_d=$1
	mkdir -p "$_d"
	[ -f "$_d/fenced.conf" ] || (cd "$_d" && fenced_conf > fenced.conf)
	if [ "$_d" = b ] && [ "${2:-}" != host ]; then
		(cd b && exec unshare --pid --fork --mount-proc \
		    "$BIN/fenced" -d -v -f fenced.conf >> fenced.log 2>&1) &
		_u=$!
		echo $_u > b/child.pid
		_i=0
		while ! _p=$(cat /proc/$_u/task/$_u/children 2>/dev/null) ||
		    [ -z "$_p" ]; do
			_i=$((_i + 1))
			[ $_i -lt 200 ] || atf_fail "unshare started nothing"
			sleep 0.05
		done
		echo $_p > b/fenced.pid
	else
		(cd "$_d" && exec "$BIN/fenced" -d -v -f fenced.conf \
		    >> fenced.log 2>&1) &
		echo $! > "$_d/fenced.pid"
		echo $! > "$_d/child.pid"
	fi
	_i=0
	while ! d_ctl "$_d" show stats > /dev/null 2>&1; do
		_i=$((_i + 1))
		if [ $_i -gt 400 ] || [ ! -d /proc/$(cat "$_d/fenced.pid") ]
		then
			cat "$_d/fenced.log" >&2
			atf_fail "daemon $_d did not come up"
		fi
		sleep 0.05
	done
	(cd "$_d" && fenced_id > fenced.id && cat fenced.id >> ids)
}

# d_gone PID SECONDS: wait for the process to exit (a zombie counts).
d_gone() {
	_i=0
	while [ $_i -lt $(($2 * 20)) ]; do
		_s=$(awk '{ print $3 }' /proc/$1/stat 2>/dev/null)
		[ -z "$_s" ] || [ "$_s" = Z ] && return 0
		sleep 0.05
		_i=$((_i + 1))
	done
	return 1
}

# Reap daemon $1's process of ours (B's: its unshare).
d_reap() {
	wait "$(cat "$1/child.pid")" 2>/dev/null
	true
}

d_stop() {
	_p=$(cat "$1/fenced.pid")
	kill -TERM "$_p"
	d_gone "$_p" 10 || atf_fail "daemon $1 did not stop on SIGTERM"
	grep -q "fatal\|did not exit" "$1/fenced.log" &&
	    atf_fail "daemon $1: $(grep "fatal\|did not exit" "$1/fenced.log")"
	d_reap "$1"
}

# The cgroups of fence $2 of daemon $1, full paths, one a line, from
# where its pid 1 is (memory, pids and cpu; v2's one line).
fence_cgs() {
	_p=$(d_ctl "$1" show environment "$2" | awk '$1 == "pid:" { print $2 }')
	[ -n "$_p" ] || return 0
	_v2=0
	[ -f /sys/fs/cgroup/cgroup.controllers ] && _v2=1
	d_in "$1" cat /proc/$_p/cgroup | awk -F: -v v2=$_v2 '{
	    n = split($2, a, ",");
	    for (i = 1; i <= n; i++)
		if (a[i] == "memory" || a[i] == "pids" || a[i] == "cpu")
		    print "/sys/fs/cgroup/" a[i] $3
	    if (v2 && $1 == "0" && $2 == "") print "/sys/fs/cgroup" $3 }' |
	    sort -u
}

# d_boot a|b KEY: boot, exec, and keep the fence's cgroups in $d/KEY.cgs.
d_boot() {
	d_ctl "$1" boot "$2" tier L1 > boot.out 2>&1 ||
	    atf_fail "daemon $1 cannot boot $2: $(cat boot.out)"
	grep -q "^state: *running" boot.out ||
	    atf_fail "daemon $1: $2 not running: $(cat boot.out)"
	fence_cgs "$1" "$2" > "$1/$2.cgs"
	[ -s "$1/$2.cgs" ] || atf_fail "daemon $1: no cgroups of $2"
	fence_alive "$1" "$2"
}

# Fence $2 of daemon $1 runs, answers, and its cgroups are intact and
# are the ones it was booted into.
fence_alive() {
	d_ctl "$1" show environment "$2" > env.out 2>&1
	grep -q "^state: *running" env.out ||
	    atf_fail "daemon $1: $2 is not running: $(cat env.out)"
	_o=$(d_ctl "$1" exec "$2" -- echo "hi $2" 2>exec.err)
	[ "$_o" = "hi $2" ] || atf_fail "daemon $1: exec in $2: $_o $(cat exec.err)"
	for _c in $(cat "$1/$2.cgs"); do
		[ -d "$_c" ] || atf_fail "daemon $1: $_c of $2 went"
		[ -n "$(cat "$_c/cgroup.procs")" ] ||
		    atf_fail "daemon $1: $_c of $2 holds no process"
	done
	[ "$(fence_cgs "$1" "$2")" = "$(cat "$1/$2.cgs")" ] ||
	    atf_fail "daemon $1: $2 moved to $(fence_cgs "$1" "$2")"
}

# Fence $2 of daemon $1 is not running and nothing of it is left: no
# cgroup, no folder in <state>/envs.
fence_over() {
	d_ctl "$1" show environment "$2" 2>&1 | grep -q "^state: *running" &&
	    atf_fail "daemon $1: $2 runs again"
	for _c in $(cat "$1/$2.cgs" 2>/dev/null); do
		[ -d "$_c" ] && atf_fail "daemon $1: $_c of $2 left"
	done
	[ -e "$1/state/envs/0/$2" ] && atf_fail "daemon $1: envs/0/$2 left"
	true
}

pidns_skip() {
	unshare --pid --fork --mount-proc true 2>/dev/null ||
	    atf_skip "no pid namespace of our own (unshare --pid)"
}

atf_test_case levels cleanup
levels_head() {
	atf_set descr "a fence of a daemon in a pid namespace of its own earns its level: the fencer's pid, small there, is not taken for the host's when a process of the fence has the same number"
	atf_set require.user root
	atf_set require.progs unshare nsenter flock
	atf_set timeout 120
}
levels_body() {
	fenced_vars
	pidns_skip
	d_start b
	for k in l1 l2 l3; do
		d_ctl b boot $k tier L1.5 > boot.out 2>&1 ||
		    atf_fail "boot $k: $(cat boot.out)"
		i=0
		while :; do
			l=$(d_ctl b show environment $k |
			    awk '$1 == "level:" { print $2 }')
			[ "$l" != unmeasured ] && break
			i=$((i + 1))
			[ $i -lt 100 ] || break
			sleep 0.1
		done
		[ "$l" = L1.5 ] || atf_fail "$k of daemon b measured $l"
	done
	d_stop b
}
levels_cleanup() { pidns_cleanup; }

atf_test_case foreign_proc cleanup
foreign_proc_head() {
	atf_set descr "a daemon in a pid namespace whose /proc is another one's (unshare --pid without --mount-proc) refuses to start: its fencer would judge fences by strangers' /proc files"
	atf_set require.user root
	atf_set require.progs unshare
	atf_set timeout 60
}
foreign_proc_body() {
	fenced_vars
	pidns_skip
	mkdir b
	(cd b && fenced_conf > fenced.conf)
	(cd b && timeout 15 unshare --pid --kill-child "$BIN/fenced" -d \
	    -f fenced.conf > refused.log 2>&1)
	st=$?
	[ $st -ne 0 ] && [ $st -ne 124 ] || atf_fail "fenced ran on a foreign /proc"
	grep -q "/proc is not of this pid namespace" b/refused.log ||
	    atf_fail "$(cat b/refused.log)"
	[ -e b/state ] && atf_fail "b/state made before the refusal"
	true
}
foreign_proc_cleanup() { pidns_cleanup; }


atf_test_case unseen cleanup
unseen_head() {
	atf_set descr "a dead daemon of this state whose cgroup holds a process outside our pid namespace: the daemon in its pid namespace keeps the dead one's lock file until its folders are gone, and a daemon that can see the process sweeps it"
	atf_set require.user root
	atf_set require.progs unshare nsenter flock
	atf_set timeout 120
}
unseen_body() {
	fenced_vars
	pidns_skip
	mkdir -p b/state/daemons
	chmod 0711 b/state
	dead=$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
	echo $dead > dead.id
	echo $dead >> b/ids
	echo 1 > b/state/daemons/$dead
	sleep 300 &
	victim=$!
	echo $victim > victim.pid
	for c in $(cg_bases); do
		mkdir -p "$c/fenced.$dead/0.stale" || atf_fail "mkdir in $c"
		echo $victim > "$c/fenced.$dead/0.stale/cgroup.procs" ||
		    atf_fail "$victim into $c/fenced.$dead/0.stale"
	done
	d_start b
	if [ -d /proc/$victim ] && [ "$(awk '{ print $3 }' /proc/$victim/stat)" != Z ]; then
		# It could not kill what it cannot see (v1): nothing may
		# say the dead daemon is swept.
		[ -f b/state/daemons/$dead ] ||
		    atf_fail "the lock of $dead went with its cgroups left"
		for c in $(cg_bases); do
			[ -d "$c/fenced.$dead/0.stale" ] ||
			    atf_fail "$c/fenced.$dead/0.stale went, its process lives"
		done
	fi
	d_boot b b1
	d_stop b
	# On the host, the same state: the dead daemon is swept for good.
	d_start b host
	d_gone $victim 5 || atf_fail "the dead daemon's process lives"
	for c in $(cg_bases); do
		[ -d "$c/fenced.$dead" ] && atf_fail "$c/fenced.$dead stays"
	done
	[ -e b/state/daemons/$dead ] && atf_fail "the lock of $dead stays"
	d_boot b b2
	d_stop b
}
unseen_cleanup() {
	v=$(cat victim.pid 2>/dev/null)
	[ -n "$v" ] && kill -9 "$v" 2>/dev/null
	pidns_cleanup
}

atf_test_case start_race cleanup
start_race_head() {
	atf_set descr "a daemon starting on a state directory waits while another start holds <state>/daemons, so that two starting at once cannot both pass the sweep"
	atf_set require.user root
	atf_set require.progs flock
	atf_set timeout 60
}
start_race_body() {
	fenced_vars
	mkdir -p a/state/daemons
	chmod 0711 a/state
	chmod 0700 a/state/daemons
	flock -x a/state/daemons sleep 3 &
	holder=$!
	sleep 0.5
	(cd a && fenced_conf > fenced.conf &&
	    exec "$BIN/fenced" -d -v -f fenced.conf >> fenced.log 2>&1) &
	echo $! > a/fenced.pid
	echo $! > a/child.pid
	sleep 1.5
	d_ctl a show stats > /dev/null 2>&1 &&
	    atf_fail "the daemon started while <state>/daemons was held"
	wait $holder
	i=0
	while ! d_ctl a show stats > /dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 200 ] || atf_fail "the daemon did not start after"
		sleep 0.05
	done
	d_stop a
}
start_race_cleanup() { pidns_cleanup; }

atf_test_case pid1_daemon cleanup
pid1_daemon_head() {
	atf_set descr "fenced without -d as pid 1 of a pid namespace (a container's first process) stays up, boots a fence and stops in order on SIGTERM: daemon(3)'s fork would have ended the namespace"
	atf_set require.user root
	atf_set require.progs unshare nsenter flock
	atf_set timeout 60
}
pid1_daemon_body() {
	fenced_vars
	pidns_skip
	mkdir b
	(cd b && fenced_conf > fenced.conf)
	(cd b && exec unshare --pid --fork --mount-proc "$BIN/fenced" \
	    -f fenced.conf > fenced.log 2>&1) &
	u=$!
	echo $u > b/child.pid
	i=0
	while ! d_ctl b show stats > stats.out 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 200 ] && [ -d /proc/$u ] ||
		    atf_fail "fenced as pid 1 did not stay up: $(cat b/fenced.log)"
		sleep 0.05
	done
	grep -q "parent *pid 1$" stats.out || atf_fail "$(cat stats.out)"
	echo $(cat /proc/$u/task/$u/children) > b/fenced.pid
	(cd b && fenced_id > fenced.id && cat fenced.id >> ids)
	d_boot b b1
	d_stop b
	fence_over b b1
	[ -z "$(ls b/state/daemons)" ] || atf_fail "a lock file stays"
}
pid1_daemon_cleanup() { pidns_cleanup; }

atf_test_case two_daemons cleanup
two_daemons_head() {
	atf_set descr "a daemon on the host and one in a pid namespace of its own, each with a running and a stopped fence, restarted in turn and in both orders: neither loses a fence, a cgroup or its next boot, stopped fences leave nothing"
	atf_set require.user root
	atf_set require.progs unshare nsenter flock
	atf_set timeout 300
}
two_daemons_body() {
	fenced_vars
	pidns_skip
	d_start a
	d_start b
	for d in a b; do
		d_boot $d ${d}1
		d_boot $d ${d}2
		d_ctl $d stop ${d}2 > /dev/null || atf_fail "stop ${d}2"
	done
	fence_alive a a1
	fence_alive b b1
	fence_over a a2
	fence_over b b2

	# A restarts while B runs: B keeps b1 and boots on.
	d_stop a
	fence_over a a1
	d_start a
	fence_alive b b1
	fence_over b b2
	d_boot b b3
	d_boot a a3

	# B restarts, in a new pid namespace, while A runs.
	d_stop b
	fence_over b b1
	fence_over b b3
	d_start b
	fence_alive a a3
	d_boot a a4
	d_boot b b4
	fence_alive a a3

	# B restarts while A has booted fences but runs none (the old
	# kill(pid, 0) sweep took A's empty folders then): A boots on.
	for k in a3 a4; do
		d_ctl a stop $k > /dev/null || atf_fail "stop $k"
		fence_over a $k
	done
	d_stop b
	d_start b
	d_boot a a5
	d_boot b b5
	fence_alive a a5

	# Both down, then up one after the other, the first with a fence
	# booted and stopped when the second starts: A then B, B then A.
	d_stop a
	d_stop b
	for order in "a b" "b a"; do
		set -- $order
		d_start $1
		d_boot $1 ${1}6
		d_ctl $1 stop ${1}6 > /dev/null || atf_fail "stop ${1}6"
		d_start $2
		d_boot $1 ${1}7
		d_boot $2 ${2}7
		fence_alive $1 ${1}7
		fence_alive $2 ${2}7
		d_stop $1
		fence_alive $2 ${2}7
		d_stop $2
		for k in 6 7; do
			fence_over a a$k
			fence_over b b$k
		done
	done
	for k in a5 b4 b5; do fence_over ${k%?} $k; done
	for d in a b; do
		for id in $(cat $d/ids); do
			[ -n "$(fenced_cgroup_dirs $id)" ] &&
			    atf_fail "$d: $(fenced_cgroup_dirs $id) left"
		done
	done
	true
}
two_daemons_cleanup() { pidns_cleanup; }

atf_test_case killed cleanup
killed_head() {
	atf_set descr "a daemon in a pid namespace killed with SIGKILL: the host's daemon, restarted, leaves its folders alone; its own restart sweeps them"
	atf_set require.user root
	atf_set require.progs unshare nsenter flock
	atf_set timeout 120
}
killed_body() {
	fenced_vars
	pidns_skip
	d_start a
	d_start b
	d_boot a a1
	d_boot b b1
	d_boot b b2
	d_ctl b stop b2 > /dev/null || atf_fail "stop b2"
	bid=$(cat b/fenced.id)
	bdirs=$(for c in $(cat b/b1.cgs); do dirname $c; done)

	# B's pid 1 killed: its namespace dies with it, no one cleans up.
	kill -KILL "$(cat b/fenced.pid)"
	d_gone "$(cat b/fenced.pid)" 5 || atf_fail "daemon b survived SIGKILL"
	d_reap b
	# What B left.  (Its fencer may see its parent's end a moment before
	# the kernel's SIGKILL and remove some of its own folders: those are
	# B's doing, not A's.)
	left=
	for c in $bdirs $(cat b/b1.cgs); do
		[ -d "$c" ] && left="$left $c"
	done
	[ -n "$left" ] || atf_fail "b left nothing to test a's restart with"
	# A restarts, and keeps running beside what B left.
	d_stop a
	d_start a
	d_boot a a2
	for c in $left; do
		[ -d "$c" ] || atf_fail "daemon a swept $c of dead b"
	done
	[ -n "$bid" ] && [ -f "b/state/daemons/$bid" ] ||
	    atf_fail "b's lock file went"

	# B's own restart sweeps them; B boots again; A loses nothing.
	d_start b
	for c in $bdirs; do
		[ -d "$c" ] && atf_fail "daemon b did not sweep its $c"
	done
	fence_over b b1
	fence_over b b2
	[ -e "b/state/daemons/$bid" ] && atf_fail "b's dead lock file stays"
	d_boot b b3
	fence_alive a a2
	d_stop b
	d_stop a
	true
}
killed_cleanup() { pidns_cleanup; }

atf_test_case same_state cleanup
same_state_head() {
	atf_set descr "a second daemon on a state directory in use, from another pid namespace (either way round), is refused and takes nothing of the first"
	atf_set require.user root
	atf_set require.progs unshare nsenter flock
	atf_set timeout 120
}
same_state_body() {
	fenced_vars
	pidns_skip
	for first in a b; do
		second=b
		[ $first = b ] && second=a
		rm -rf a/state b/state
		d_start $first
		d_boot $first ${first}1
		d_boot $first ${first}2
		d_ctl $first stop ${first}2 > /dev/null
		# The second on the first's state: its own socket and port.
		mkdir -p $second
		(cd $second && fenced_conf | sed "s|^state .*|state \"$PWD/../$first/state\"|" \
		    > fenced.conf)
		if [ $second = b ]; then
			(cd b && timeout 15 unshare --pid --kill-child \
			    --mount-proc "$BIN/fenced" -d -f fenced.conf \
			    > refused.log 2>&1)
		else
			(cd a && timeout 15 "$BIN/fenced" -d -f fenced.conf \
			    > refused.log 2>&1)
		fi
		st=$?
		[ $st -ne 0 ] && [ $st -ne 124 ] ||
		    atf_fail "$second ran on $first's state"
		grep -q "in use by another fenced" $second/refused.log ||
		    atf_fail "$second: $(cat $second/refused.log)"
		fence_alive $first ${first}1
		fence_over $first ${first}2
		d_boot $first ${first}3
		[ -f "$first/state/daemons/$(cat $first/fenced.id)" ] ||
		    atf_fail "$first's lock file went"
		d_stop $first
		rm -f $second/fenced.conf
	done
}
same_state_cleanup() { pidns_cleanup; }

# Each daemon's own cleanup (lib.subr); B's pids are of its namespace,
# so fenced.pids is never written for it and only its host pid killed.
pidns_cleanup() {
	for d in a b; do
		[ -d $d ] || continue
		(cd $d && fenced_vars && rm -f fenced.pids && fenced_cleanup &&
		    for id in $(cat ids 2>/dev/null) $(ls state/daemons \
			2>/dev/null); do
			for c in $(fenced_cgroup_dirs $id); do
				for f in "$c"/*/; do
					[ -d "$f" ] && rmdir "$f" 2>/dev/null
				done
				rmdir "$c" 2>/dev/null
			done
		    done)
	done
	true
}

atf_init_test_cases() {
	atf_add_test_case levels
	atf_add_test_case foreign_proc
	atf_add_test_case pid1_daemon
	atf_add_test_case unseen
	atf_add_test_case start_race
	atf_add_test_case two_daemons
	atf_add_test_case killed
	atf_add_test_case same_state
}
