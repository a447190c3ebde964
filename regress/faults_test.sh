#! /usr/bin/atf-sh
# Faults under load (issue 14): boots, execs, probes and stops in flight
# from root and two local users at once, while one process is SIGKILLed
# at a random point: each of the parent, broker, fencer, prober, egress
# proxy, an agent, a supervisor, runsc and QEMU in turn, one a round.  After each
# round the daemon is restarted and the host checks that nothing of the
# fences is left (process, mount, cgroup, runsc state or bundle, QEMU),
# that every home is intact and still its owner's, and that the new
# daemon boots, execs and stops as ever.  The randomness is seeded
# (FAULT_SEED, else the time), the seed printed; the rounds are fixed.

. "$(atf_get_srcdir)/lib.subr"

VICTIMS="parent broker fencer prober egress agent supervisor runsc qemu"

# A number in [lo, hi) from the seed and the round: the same each run
# of one seed.
fault_rand() {
	awk -v s="$SEED" -v r="$1" -v lo="$2" -v hi="$3" 'BEGIN { srand(s);
	    for (i = 0; i < r; i++) x = rand(); print int(lo + x * (hi - lo)) }'
}

# The pid of a daemon process, as its start recorded it.
fault_daemon_pid() {
	awk -v p="$1" '$1 == p && $2 == "pid" { print $3 }' stats.start
}

# Processes whose parent is $1.
fault_children() {
	ps -eo pid=,ppid= | awk -v p="$1" '$2 == p { print $1 }'
}

# The pids victim $1 names now, if any.
fault_victims() {
	f=$(fault_daemon_pid fencer)
	case $1 in
	parent|broker|fencer|prober|egress)
		fault_daemon_pid $1 ;;
	agent)
		# A native fence's pid 1, the fencer's child.
		for p in $(fault_children $f); do
			[ "$(cat /proc/$p/comm 2>/dev/null)" = fence-agent ] &&
			    echo $p
		done ;;
	supervisor)
		# An exec's supervisor: an agent's fence-agent child.
		for a in $(fault_victims agent); do
			for p in $(fault_children $a); do
				[ "$(cat /proc/$p/comm 2>/dev/null)" = \
				    fence-agent ] && echo $p
			done
		done ;;
	runsc)
		ps -eo pid=,args= | grep -F -- "--root=$PWD/state/runsc/state" |
		    grep -v grep | awk '{ print $1 }' ;;
	qemu)
		vm_qemus ;;
	esac
}

# One owner's load until stop.load appears: boot, exec (one that takes
# a second, so a supervisor is there to kill), probe, stop.  Every
# command bounded; failures are expected once something is killed.
fault_load() {
	_ctl=$1 _key=$2 _boot=$3
	while [ ! -f stop.load ]; do
		timeout 60 $_ctl boot $_key $_boot
		timeout 30 $_ctl exec $_key -- sh -c 'echo run; sleep 1'
		timeout 30 $_ctl probe $_key
		timeout 30 $_ctl exec $_key -- true
		timeout 30 $_ctl stop $_key
	done > load.$_key.log 2>&1
}

# What this daemon's fences left: processes of the fence uids or of the
# two users, processes naming the state or the homes, QEMUs, mounts,
# runsc state and bundles.
fault_left() {
	r=$(fenced_uids)
	ps -eo pid=,uid=,comm= | awk -v lo="${r%-*}" -v hi="${r#*-}" \
	    -v a="$UA" -v b="$UB" '($2 >= lo && $2 <= hi) || $2 == a ||
	    $2 == b { print "process " $1 " uid " $2 " " $3 }'
	ps -eo pid=,args= | grep -F -e "$PWD/state" -e "$HOMES" |
	    grep -v grep | sed 's/^/process /'
	grep -F -e "$PWD/state" -e "$HOMES" /proc/self/mountinfo |
	    sed 's/^/mount /'
	find state/runsc/state state/runsc/bundles -mindepth 1 -maxdepth 1 \
	    2>/dev/null | sed 's/^/runsc /'
}

# Every home as the start left it: its marker, its owner.
fault_homes_intact() {
	while read -r key owner; do
		h="$HOMES/$key"
		[ -d "$h" ] || atf_fail "round $1: home of $key is gone"
		atf_check_equal "$owner" "$(stat -c %u "$h")"
		atf_check -o inline:"home of $key\n" cat "$h/marker"
		atf_check_equal "$owner" "$(stat -c %u "$h/marker")"
	done < homes.txt
}

atf_test_case kill_each cleanup
kill_each_head() {
	atf_set descr "with boots, execs, probes and stops of three owners in flight, each of the parent, broker, fencer, prober, egress proxy, an agent, a supervisor, runsc and QEMU is SIGKILLed in turn at a random point; after a restart nothing is left, every home is intact and its owner's, and the daemon works"
	atf_set require.user root
	atf_set timeout 1200
}
kill_each_body() {
	fenced_vars
	SEED=${FAULT_SEED:-$(($(date +%s) % 1000000))}
	echo "faults_test: seed $SEED (FAULT_SEED=$SEED repeats this run)"
	echo "seed $SEED" >&2
	users_add 2 flt
	UA=$(id -u "$(sed -n 1p users.txt)")
	UB=$(id -u "$(sed -n 2p users.txt)")
	HOMES=$(fenced_homes)
	fenced_run_socket
	{
		fenced_conf
		! vm_available || vm_conf_lines
	} > fenced.conf
	A="$(as_user "$(sed -n 1p users.txt)") $BIN/fencectl -s $(cat run.sock)"
	B="$(as_user "$(sed -n 2p users.txt)") $BIN/fencectl -s $(cat run.sock)"
	fenced_start
	# Each key's home, with a marker the faults must not touch.
	: > homes.txt
	for k in r ra rv ua ub; do
		case $k in
		ua) c=$A ;;
		ub) c=$B ;;
		*) c=$CTL ;;
		esac
		atf_check -o ignore $c boot $k
		atf_check $c exec $k -- sh -c "echo 'home of $k' > marker"
		atf_check -o ignore $c stop $k
		echo "$k $(stat -c %u "$HOMES/$k")" >> homes.txt
	done
	fenced_stop

	round=0
	ids=""
	for v in $VICTIMS; do
		round=$((round + 1))
		case $v in
		runsc)
			if ! command -v runsc > /dev/null; then
				echo "round $round: runsc: not installed, not killed"
				continue
			fi ;;
		qemu)
			if ! vm_available; then
				echo "round $round: qemu: no vm boot files, not killed"
				continue
			fi ;;
		esac
		fenced_start
		$CTL show stats > stats.start
		ids="$ids $FENCED_ID"
		rm -f stop.load
		fault_load "$CTL" r "tier L2" &
		l1=$!
		fault_load "$A" ua "" &
		l2=$!
		fault_load "$B" ub "" &
		l3=$!
		l4=
		case $v in
		runsc) fault_load "$CTL" ra "backend runsc" & l4=$! ;;
		qemu) fault_load "$CTL" rv "backend vm" & l4=$! ;;
		esac
		# The victim must exist; then a random moment of its life.
		wait_until 30 has_output fault_victims $v ||
		    atf_fail "round $round: no $v to kill"
		ms=$(fault_rand $round 0 3000)
		sleep "$(awk -v m=$ms 'BEGIN { printf "%.3f", m / 1000 }')"
		pids=$(fault_victims $v)
		[ -n "$pids" ] || pids=$(sleep 0.2; fault_victims $v)
		[ -n "$pids" ] || atf_fail "round $round: $v was gone before its kill"
		p=$(echo $pids | awk '{ print $1 }')
		echo "round $round: SIGKILL $v (pid $p) $ms ms after it was there"
		kill -KILL $p
		case $v in
		parent|broker|fencer|prober|egress)
			# The whole daemon goes, and everything it ran.
			fenced_wait_exit 15 || atf_fail "round $round: fenced \
did not end after its $v was killed"
			;;
		*)
			# The daemon lives on and still answers.
			sleep 1
			[ -d /proc/$FENCED_PID ] || atf_fail "round $round: \
killing $v ended the daemon"
			atf_check -o ignore $CTL show stats
			;;
		esac
		touch stop.load
		wait $l1 $l2 $l3 $l4
		[ -d /proc/$FENCED_PID ] && fenced_stop
		wait_empty fault_left

		# A new daemon: the dead one's cgroups go, the homes are as
		# they were, and it boots, execs and stops.
		fenced_start
		for id in $ids; do
			[ "$id" = "$FENCED_ID" ] || wait_empty fenced_cgroup_dirs $id
		done
		fault_homes_intact $round
		atf_check -o match:"^level:" $CTL boot r tier L2
		atf_check -o inline:"home of r\n" $CTL exec r -- cat marker
		atf_check -o ignore $CTL stop r
		atf_check -o ignore $A boot ua
		atf_check -o inline:"ok\n" $A exec ua -- echo ok
		atf_check -o ignore $A stop ua
		fenced_stop
		atf_check_equal "" "$(fault_left)"
		atf_check_equal "" "$(fenced_cgroup_dirs)"
	done
}
kill_each_cleanup() { fenced_cleanup; }

atf_init_test_cases() {
	atf_add_test_case kill_each
}
