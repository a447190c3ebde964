#! /usr/bin/atf-sh
# The warm pool (issue 15, docs/pool.md): `pool TIER N' keeps N fences
# of TIER built ahead, and a boot takes one.  A pooled fence is exactly
# as isolated as a cold one: the probe gives it the same verdicts, its
# hostname, uid and home are the boot's, nothing of the pool's time or
# of an earlier boot is in it; the pool refills, replaces a pool fence
# that died, and leaves nothing behind when the daemon goes.

. "$(atf_get_srcdir)/lib.subr"

pool_require() {
	[ -d /sys/fs/cgroup/memory ] || [ -f /sys/fs/cgroup/cgroup.controllers ] ||
	    atf_skip "no cgroup hierarchy: a pool needs L1.5's cgroups"
	unshare --mount --pid --fork true 2>/dev/null ||
	    atf_skip "no mount and pid namespaces here"
	command -v python3 > /dev/null || atf_skip "python3 is missing"
}

# A second local user and homes of their own (<homes>/%u), a control
# socket they can reach, and the pool lines $1... in fenced.conf.
pool_setup() {
	users_add 1 fpo
	fenced_run_socket
	h=$(fenced_homes)
	case "$h" in
	/var/lib/fenced-regress.?*) ;;
	*) atf_fail "no homes directory: '$h'" ;;
	esac
	{ fenced_conf | sed -e "s|^homes .*|homes \"$h/%u\"|"
	  for l in "$@"; do echo "$l"; done; } > fenced.conf
}

# The pid 1s of the pool's fences, from their cgroups (pool.*).
pool_pids() {
	for d in $(fenced_cgroup_dirs); do
		cat "$d"/pool.*/cgroup.procs 2>/dev/null
	done | sort -un
}

# pool_count TIER FIELD: one number of `fencectl show stats'.
pool_count() {
	$CTL show stats | awk -v t="$1" -v f="$2" '$1 == "pool" &&
	    $2 == t ":" { for (i = 3; i < NF; i++) if ($(i + 1) ~ "^" f)
	    { print $i; exit } }'
}

pool_failed_one() {
	[ "$(pool_count "$1" failed)" -ge 1 ]
}

# The probe's verdict per axis (verdict, violations, reason), one a line.
axes_of() {
	$CTL probe "$1" | sed 1d | python3 -c '
import json, sys
v = json.load(sys.stdin)
for name in sorted(v["axes"]):
    a = v["axes"][name]
    print(name, a["verdict"], json.dumps(a["violations"]), a["reason"])
print("level", v["level"])'
}

atf_test_case pooled cleanup
pooled_head() {
	atf_set descr "with pool L1.5 2: a boot is pooled, earns L1.5 with the verdicts of a cold boot, its hostname, uid and fresh home are its own, another owner's pooled fence cannot see its files; the pool refills, replaces a killed pool pid 1, and the daemon's stop leaves no process, cgroup or mount of it"
	atf_set require.user root
	atf_set timeout 180
}
pooled_body() {
	fenced_vars
	pool_require
	pool_setup "pool L1.5 2"
	fenced_start
	ua=$(sed -n 1p users.txt)
	A="$(as_user "$ua") $BIN/fencectl -s $(cat run.sock)"
	wait_until 20 pool_full L1.5:2 || atf_fail "pool never filled: $($CTL show stats)"
	# Pool fences are nobody's environments.
	atf_check -o not-match:"pool" $CTL show environments
	pids0=$(pool_pids)
	[ "$(echo "$pids0" | wc -w)" -eq 2 ] ||
	    atf_fail "expected 2 pool pid 1s, got '$pids0'"

	# Root's fence, from the pool.
	atf_check -o match:"^state: *running" $CTL boot pa tier L1.5
	$CTL show environment pa > pa.env
	atf_check -o match:"^pooled: *yes, the take [0-9]+ us" cat pa.env
	atf_check_equal L1.5 "$(level_of pa)"
	uid=$(awk '$1 == "owner:" { sub(/\)/, "", $NF); print $NF }' pa.env)
	in_fence_uids "$uid" || atf_fail "pa runs as uid '$uid'"
	atf_check -o inline:"pa\n" $CTL exec pa -- hostname
	atf_check -o inline:"$uid\n" $CTL exec pa -- id -u
	atf_check -o inline:"/home/fence-$uid\n" $CTL exec pa -- printenv HOME
	atf_check -o inline:"pa\n" $CTL exec pa -- printenv VOICEBOX_FENCE
	# A fresh home, an empty /tmp and /dev/shm, nothing of pool time.
	atf_check -o empty $CTL exec pa -- ls -A /home/fence-$uid
	atf_check -o empty $CTL exec pa -- \
	    sh -c 'ls -A /tmp; ls -A /dev/shm; ls -A /var/tmp'
	atf_check -o inline:"fence-$uid\n" $CTL exec pa -- ls /home
	atf_check $CTL exec pa -- sh -c 'echo a > mine; echo t > /tmp/t'
	atf_check -o inline:"a\n" cat "$(fenced_homes)/root/pa/mine"
	# The pid 1 of pa was one of the pool's.
	ppid1=$(awk '$1 == "pid:" { print $2 }' pa.env)
	echo " $pids0 " | tr '\n' ' ' | grep -q " $ppid1 " ||
	    atf_fail "pa's pid 1 $ppid1 was not a pool fence ($pids0)"
	axes_of pa > pooled.axes

	# Another owner's boot: its own pool fence, uid and home.
	atf_check -o match:"^state: *running" $A boot pb tier L1.5
	atf_check -o match:"^pooled: *yes" $A show environment pb
	atf_check -o inline:"$(id -u "$ua")\n" $A exec pb -- id -u
	atf_check -o inline:"pb\n" $A exec pb -- hostname
	atf_check -o inline:"$ua\n" $A exec pb -- ls /home
	atf_check -o empty $A exec pb -- ls -A /tmp
	atf_check -s not-exit:0 -e ignore $A exec pb -- \
	    cat "/home/fence-$uid/mine"
	atf_check -s not-exit:0 -e ignore $A exec pb -- \
	    cat "$(fenced_homes)/root/pa/mine"

	# The pool refills: two taken, two ready again, new pid 1s.
	wait_until 20 pool_full L1.5:2 || atf_fail "pool never refilled: $($CTL show stats)"
	atf_check_equal 2 "$(pool_count L1.5 taken)"
	# Neither pid 1 that went to a boot is the pool's any more.
	bpid1=$($A show environment pb | awk '$1 == "pid:" { print $2 }')
	pids1=$(pool_pids)
	[ "$(echo "$pids1" | wc -w)" -eq 2 ] ||
	    atf_fail "expected 2 pool pid 1s, got '$pids1'"
	for p in $ppid1 $bpid1; do
		echo "$pids1" | grep -qx "$p" &&
		    atf_fail "pid 1 $p of a boot is still in the pool"
	done

	# A pool pid 1 killed from outside is dropped and replaced.
	victim=$(echo "$pids1" | head -1)
	kill -9 "$victim"
	wait_until 20 pool_failed_one L1.5 ||
	    atf_fail "no failure counted: $($CTL show stats)"
	wait_until 20 pool_full L1.5:2 || atf_fail "killed pool fence never replaced: $($CTL show stats)"
	pool_pids | grep -qx "$victim" && atf_fail "dead pool pid 1 still listed"
	atf_check -o match:"^state: *running" $CTL boot pc tier L1.5
	atf_check -o match:"^pooled: *yes" $CTL show environment pc
	atf_check -o inline:"ok\n" $CTL exec pc -- echo ok

	# `cold' builds without the pool, equally strong: the same verdicts.
	atf_check -o match:"^state: *running" $CTL boot pd tier L1.5 cold
	atf_check -o match:"^pooled: *no" $CTL show environment pd
	atf_check_equal L1.5 "$(level_of pd)"
	axes_of pd > cold.axes
	atf_check -o file:cold.axes cat pooled.axes

	# The daemon's stop leaves no pool process, cgroup or mount.
	pids2=$(pool_pids)
	cgs=$(fenced_cgroup_dirs)
	fenced_stop
	for p in $pids0 $pids1 $pids2; do
		[ -d /proc/$p ] && atf_fail "pool process $p left"
	done
	for d in $cgs; do
		[ -d "$d" ] && atf_fail "cgroup folder $d left: $(ls "$d")"
	done
	atf_check -s exit:1 grep -F "$(fenced_homes)" /proc/self/mountinfo

	# A cold boot of the same daemon earns the same, axis by axis.
	sed -i '/^pool /d' fenced.conf
	fenced_start
	atf_check -o match:"^state: *running" $CTL boot pa tier L1.5
	atf_check -o match:"^pooled: *no" $CTL show environment pa
	atf_check_equal L1.5 "$(level_of pa)"
	axes_of pa > restarted.axes
	atf_check -o file:restarted.axes cat pooled.axes
	# The cold boot finds the pooled one's home as it was left.
	atf_check -o inline:"a\n" $CTL exec pa -- cat mine
	atf_check -o empty $CTL exec pa -- ls -A /tmp
	fenced_stop
}
pooled_cleanup() { fenced_cleanup; }

atf_test_case pooled_l2 cleanup
pooled_l2_head() {
	atf_set descr "with pool L2 1: a pooled L2 fence has no network but lo, earns L2, and its tmpfs sizes follow the boot's memory limit; a reload grows and empties the pool"
	atf_set require.user root
	atf_set timeout 120
}
pooled_l2_body() {
	fenced_vars
	pool_require
	pool_setup "pool L2 1"
	fenced_start
	wait_until 20 pool_full L2:1 || atf_fail "pool never filled: $($CTL show stats)"
	atf_check -o match:"^state: *running" $CTL boot n tier L2
	atf_check -o match:"^pooled: *yes" $CTL show environment n
	atf_check -o inline:"lo\n" $CTL exec n -- sh -c \
	    "sed -n 's/^ *\\([^:]*\\):.*/\\1/p' /proc/net/dev | grep -v '|'"
	atf_check_equal L2 "$(level_of n)"
	axes_of n > n.axes
	atf_check -o match:"^network fenced" cat n.axes
	# Built for the default 512M; a boot of 256M gets a /tmp of 64M.
	wait_until 20 pool_full L2:1 || atf_fail "pool never refilled"
	atf_check -o match:"^state: *running" $CTL boot m tier L2 memory 256M
	atf_check -o match:"^pooled: *yes" $CTL show environment m
	atf_check -o match:"size=65536k" $CTL exec m -- \
	    sh -c "grep ' /tmp ' /proc/self/mountinfo"
	# A reload grows the pool, and shrinks it to nothing.
	sed -i 's/^pool L2 1$/pool L2 3/' fenced.conf
	atf_check -o ignore $CTL reload
	wait_until 30 pool_full L2:3 || atf_fail "reload did not grow the pool: $($CTL show stats)"
	[ "$(pool_pids | wc -l)" -eq 3 ] || atf_fail "not 3 pool pid 1s: $(pool_pids)"
	sed -i 's/^pool L2 3$/pool L2 0/' fenced.conf
	atf_check -o ignore $CTL reload
	wait_until 30 pool_full L2:0 || atf_fail "reload did not empty the pool: $($CTL show stats)"
	wait_empty pool_pids
	fenced_stop
}
pooled_l2_cleanup() { fenced_cleanup; }

atf_test_case pooled_image cleanup
pooled_image_head() {
	atf_set descr "with limit home and pool L1.5 1: a pooled fence's home is its ext4 image, made by the fencer at the take: full at its size, its root \"/\" in the mount table, its files kept for the next (cold) boot"
	atf_set require.user root
	atf_set timeout 120
}
pooled_image_body() {
	fenced_vars
	pool_require
	{ fenced_conf; echo 'limit home 32M'; echo 'pool L1.5 1'; } > fenced.conf
	fenced_start
	wait_until 20 pool_full L1.5:1 || atf_fail "pool never filled"
	atf_check -o match:"^state: *running" $CTL boot big tier L1.5
	atf_check -o match:"^pooled: *yes" $CTL show environment big
	atf_check_equal L1.5 "$(level_of big)"
	$CTL exec big -- cat /proc/self/mountinfo > mi
	atf_check -o match:" / /home/fence-[0-9]+ rw,nosuid,nodev.* - ext4 /dev/loop" cat mi
	atf_check -s exit:1 -o empty grep -F -e "$PWD" -e state mi
	atf_check -s not-exit:0 -e match:"No space left on device" \
	    $CTL exec big -- fallocate -l 100M big
	atf_check $CTL exec big -- sh -c 'rm -f big; echo kept > note'
	atf_check -o match:"^stopped big" $CTL stop big
	loop_wait_detached "$PWD/state/homes/0/big.img"
	atf_check -o match:"^state: *running" $CTL boot big tier L1.5 cold
	atf_check -o inline:"kept\n" $CTL exec big -- cat note
	fenced_stop
}
pooled_image_cleanup() { fenced_cleanup; }

atf_test_case sigkill cleanup
sigkill_head() {
	atf_set descr "SIGKILL of the fencer takes the pool's pid 1s with it (parent death signal) and the daemon's stop sweeps their cgroups; SIGKILL of the whole daemon leaves cgroups the next start sweeps"
	atf_set require.user root
	atf_set timeout 120
}
sigkill_body() {
	fenced_vars
	pool_require
	pool_setup "pool L1.5 2" "pool L1 1"
	fenced_start
	wait_until 20 pool_full L1.5:2 || atf_fail "pool never filled"
	wait_until 20 pool_full L1:1 || atf_fail "pool never filled"
	pids=$(pool_pids)
	cgs=$(fenced_cgroup_dirs)
	kill -9 "$(fenced_pid fencer)"
	fenced_wait_exit 10 || atf_fail "fenced did not go with its fencer"
	for p in $pids; do
		wait_until 5 sh -c "[ ! -d /proc/$p ]" ||
		    atf_fail "pool process $p outlived the fencer"
	done
	for d in $cgs; do
		[ -d "$d" ] && atf_fail "cgroup folder $d left: $(ls "$d")"
	done

	# Everything killed at once: the next start sweeps what is left.
	rm -f fenced.pid
	fenced_start
	wait_until 20 pool_full L1.5:2 || atf_fail "pool never filled"
	old=$(cat fenced.id)
	cgs=$(fenced_cgroup_dirs)
	pids=$(pool_pids)
	kill -9 $(cat fenced.pids)
	for p in $pids; do
		wait_until 5 sh -c "[ ! -d /proc/$p ]" ||
		    atf_fail "pool process $p outlived the daemon"
	done
	left=0
	for d in $cgs; do
		ls -d "$d"/pool.* > /dev/null 2>&1 && left=1
	done
	[ $left -eq 1 ] || atf_fail "no pool cgroup left to sweep: the case proves nothing"
	fenced_start
	[ "$(cat fenced.id)" != "$old" ] || atf_fail "the same daemon id"
	for d in $cgs; do
		wait_until 10 sh -c "[ ! -d $d ]" ||
		    atf_fail "the dead daemon's $d was not swept: $(ls "$d")"
	done
	fenced_stop
}
sigkill_cleanup() { fenced_cleanup; }

atf_test_case pooled_first cleanup
pooled_first_head() {
	atf_set descr "with pool L1.5 1: when a pooled fence first answers, its pid 1 (the agent executed ahead, which did the steps after the split point itself) and the first command have the boot's uid, rlimits, no capability, no_new_privs, its seccomp filter and Landlock, its cgroup the boot's limits, and no process of the pool's time is in it"
	atf_set require.user root
	atf_set timeout 90
}
pooled_first_body() {
	fenced_vars
	pool_require
	pool_setup "pool L1.5 1"
	fenced_start
	wait_until 20 pool_full L1.5:1 || atf_fail "pool never filled: $($CTL show stats)"
	atf_check -o match:"^state: *running" $CTL boot pf tier L1.5 \
	    memory 200M pids 77
	$CTL show environment pf > pf.env
	atf_check -o match:"^pooled: *yes" cat pf.env
	atf_check -o match:"^landlock: *ABI [0-9]+: filesystem" cat pf.env
	uid=$(awk '$1 == "owner:" { sub(/\)/, "", $NF); print $NF }' pf.env)
	# The first exec: every process in the fence is the boot's uid
	# (a root one would be the keeper, or anything else of pool time).
	atf_check -o save:procs $CTL exec pf -- sh -c \
	    'for s in /proc/[0-9]*/status; do
		awk -v f="$s" "\$1 == \"Uid:\" { print f, \$2, \$3, \$4, \$5 }" "$s"
	    done'
	[ -s procs ] || atf_fail "no process listed"
	awk -v u="$uid" '$2 != u || $3 != u || $4 != u || $5 != u' procs > other
	[ -s other ] && atf_fail "processes not of uid $uid: $(cat other)"
	# The agent's own rlimits are the boot's (pids 77: 77 + 4096
	# processes, no core), as are those of what it runs.
	atf_check -o save:lim $CTL exec pf -- cat /proc/1/limits /proc/self/limits
	[ "$(grep -c '^Max processes  *4173  *4173 ' lim)" -eq 2 ] ||
	    atf_fail "nproc is not the boot's: $(cat lim)"
	[ "$(grep -c '^Max core file size  *0  *0 ' lim)" -eq 2 ] ||
	    atf_fail "core is not 0: $(cat lim)"
	atf_check -o save:st0 $CTL exec pf -- cat /proc/self/status
	atf_check -o match:"^Uid:[[:space:]]*$uid[[:space:]]+$uid[[:space:]]+$uid[[:space:]]+$uid\$" cat st0
	atf_check -o match:"^CapBnd:[[:space:]]*0+\$" cat st0
	atf_check -o match:"^NoNewPrivs:[[:space:]]*1\$" cat st0
	atf_check -o match:"^Seccomp:[[:space:]]*2\$" cat st0
	atf_check -o save:st1 $CTL exec pf -- cat /proc/1/status
	atf_check -o match:"^CapBnd:[[:space:]]*0+\$" cat st1
	atf_check -o match:"^CapEff:[[:space:]]*0+\$" cat st1
	atf_check -o match:"^NoNewPrivs:[[:space:]]*1\$" cat st1
	# Its own filter on top of the daemon's (one filter: levels_test's
	# weakened fence).
	atf_check -o match:"^Seccomp_filters:[[:space:]]*[2-9]\$" cat st1
	# Landlock: its own /proc/self/comm, which the uid may write, is
	# beneath `/', which it may only read.
	atf_check -s not-exit:0 -e match:"Permission denied" $CTL exec pf -- \
	    sh -c 'echo x > /proc/self/comm'
	# Its cgroups have the boot's limits, not the pool's.
	n=0
	for d in $(fenced_cgroup_dirs); do
		for f in "$d"/*.pf/pids.max; do
			[ -f "$f" ] || continue
			atf_check -o inline:"77\n" cat "$f"
			n=$((n + 1))
		done
		for f in "$d"/*.pf/memory.limit_in_bytes "$d"/*.pf/memory.max; do
			[ -f "$f" ] || continue
			atf_check -o inline:"209715200\n" cat "$f"
			n=$((n + 1))
		done
	done
	[ "$n" -ge 2 ] || atf_fail "pf's pids and memory cgroups not found"
	atf_check_equal L1.5 "$(level_of pf)"
	# A boot with the limits the pool fence was built with: its cgroups
	# keep them (a v1 take does not write them again), and they hold.
	wait_until 20 pool_full L1.5:1 || atf_fail "pool never refilled"
	atf_check -o match:"^state: *running" $CTL boot pg tier L1.5
	atf_check -o match:"^pooled: *yes" $CTL show environment pg
	atf_check -o match:"^limits: *memory 512M, pids 256, cpu 1.00\$" \
	    $CTL show environment pg
	n=0
	for d in $(fenced_cgroup_dirs); do
		for f in "$d"/*.pg/pids.max; do
			[ -f "$f" ] || continue
			atf_check -o inline:"256\n" cat "$f"
			n=$((n + 1))
		done
		for f in "$d"/*.pg/memory.limit_in_bytes "$d"/*.pg/memory.max; do
			[ -f "$f" ] || continue
			atf_check -o inline:"536870912\n" cat "$f"
			n=$((n + 1))
		done
		for f in "$d"/*.pg/cpu.cfs_quota_us; do
			[ -f "$f" ] || continue
			atf_check -o inline:"100000\n" cat "$f"
		done
		for f in "$d"/*.pg/cpu.max; do
			[ -f "$f" ] || continue
			atf_check -o match:"^100000 " cat "$f"
		done
	done
	[ "$n" -ge 2 ] || atf_fail "pg's pids and memory cgroups not found"
	atf_check -o inline:"ok\n" $CTL exec pg -- echo ok
	fenced_stop
}
pooled_first_cleanup() { fenced_cleanup; }

atf_test_case pooled_weak cleanup
pooled_weak_head() {
	atf_set descr "with pool L1.5 1 and a test build that leaves out the fence's seccomp filter: the pooled fence earns L1, not a verdict of pool time, and a boot that requires L1.5 of it is refused, stopped, and runs nothing"
	atf_set require.user root
	atf_set timeout 90
}
pooled_weak_body() {
	fenced_vars
	pool_require
	pool_setup "pool L1.5 1"
	FENCED_TEST_NOSECCOMP=1 FENCED_BIN=$HOOKS/fenced fenced_start
	wait_until 20 pool_full L1.5:1 || atf_fail "pool never filled: $($CTL show stats)"
	atf_check -s exit:1 \
	    -e match:"require-not-met.*measured L1, required L1.5" \
	    $CTL boot weak tier L1.5 require L1.5
	atf_check_equal 1 "$(pool_count L1.5 taken)"
	atf_check -s exit:1 -e match:"not-found" $CTL show environment weak
	atf_check -o match:"fences: 0 running" $CTL show stats
	for d in $(fenced_cgroup_dirs); do
		ls "$d" | grep -q '\.weak$' && atf_fail "cgroup of weak left in $d"
	done
	# The next pooled fence, without require: L1, as a cold one.
	wait_until 20 pool_full L1.5:1 || atf_fail "pool never refilled"
	atf_check -o match:"^state: *running" $CTL boot weak2 tier L1.5
	atf_check -o match:"^pooled: *yes" $CTL show environment weak2
	atf_check_equal L1 "$(level_of weak2)"
	fenced_stop
}
pooled_weak_cleanup() { fenced_cleanup; }

atf_test_case agent_killed cleanup
agent_killed_head() {
	atf_set descr "with pool L1.5 1: the pool fence's pid 1 is the agent, executed ahead and waiting as root; killed from the host (SIGKILL) just before a boot, the boot is built cold or from the refilled pool, or fails saying why, and never hangs"
	atf_set require.user root
	atf_set timeout 120
}
agent_killed_body() {
	fenced_vars
	pool_require
	pool_setup "pool L1.5 1"
	fenced_start
	for n in 1 2 3; do
		wait_until 20 pool_full L1.5:1 ||
		    atf_fail "pool never filled: $($CTL show stats)"
		victim=$(pool_pids)
		[ "$(echo "$victim" | wc -w)" -eq 1 ] ||
		    atf_fail "expected 1 pool pid 1, got '$victim'"
		# The agent itself waits there, past its execve, as root.
		tr '\0' ' ' < /proc/$victim/cmdline > cmd
		atf_check -o match:"^fence-agent -p [0-9]+ \$" cat cmd
		atf_check -o match:"^Uid:[[:space:]]*0[[:space:]]" \
		    cat /proc/$victim/status
		kill -9 "$victim"
		# At once: the take may find it dead, or the pool refilled.
		timeout 30 $CTL boot k$n tier L1.5 > boot.out 2> boot.err
		rc=$?
		[ $rc -eq 124 ] && atf_fail "boot k$n hung"
		if [ $rc -eq 0 ]; then
			atf_check -o match:"^state: *running" cat boot.out
			atf_check -o inline:"ok\n" $CTL exec k$n -- echo ok
			atf_check_equal L1.5 "$(level_of k$n)"
		else
			[ -s boot.err ] || atf_fail "boot k$n failed without a word"
		fi
	done
	fenced_stop
}
agent_killed_cleanup() { fenced_cleanup; }

atf_test_case agent_unreachable cleanup
agent_unreachable_head() {
	atf_set descr "with pool L1.5 1: a second local user cannot reach the waiting pool agent: no socket of it has a name to connect to, its descriptors, environment and memory are not theirs to read, nor is it theirs to signal"
	atf_set require.user root
	atf_set timeout 90
}
agent_unreachable_body() {
	fenced_vars
	pool_require
	pool_setup "pool L1.5 1"
	fenced_start
	ua=$(sed -n 1p users.txt)
	wait_until 20 pool_full L1.5:1 || atf_fail "pool never filled: $($CTL show stats)"
	p=$(pool_pids)
	[ "$(echo "$p" | wc -w)" -eq 1 ] || atf_fail "expected 1 pool pid 1, got '$p'"
	# Its sockets (the assignment socket alone) have no path and no
	# abstract name: there is nothing anyone could connect to.
	ls -l /proc/$p/fd | sed -n 's/.*socket:\[\([0-9]*\)\].*/\1/p' > inodes
	[ -s inodes ] || atf_fail "the pool agent holds no socket"
	for i in $(cat inodes); do
		awk -v i="$i" '$7 == i && NF >= 8 { print }' /proc/net/unix > named
		[ -s named ] && atf_fail "a named socket of the pool agent: $(cat named)"
	done
	U=$(as_user "$ua")
	atf_check -s not-exit:0 -e ignore $U ls /proc/$p/fd
	atf_check -s not-exit:0 -e ignore $U cat /proc/$p/environ
	atf_check -s not-exit:0 -e ignore $U cat /proc/$p/mem
	atf_check -s not-exit:0 -e ignore $U kill -0 $p
	atf_check -s not-exit:0 -e ignore $U kill -9 $p
	[ -d /proc/$p ] || atf_fail "the pool agent died"
	atf_check_equal "$p" "$(pool_pids)"
	# And it is taken as before.
	atf_check -o match:"^state: *running" $CTL boot u1 tier L1.5
	atf_check -o match:"^pooled: *yes" $CTL show environment u1
	fenced_stop
}
agent_unreachable_cleanup() { fenced_cleanup; }

atf_test_case agent_refuses cleanup
agent_refuses_head() {
	atf_set descr "a pool agent (fence-agent -p, executed as root, as a pool fence's pid 1 executes it) fails closed on any assignment it cannot check: short, with two descriptors, with a descriptor of the wrong kind, with bad fields; it ends with an error record naming the assignment and does no step (run in namespaces of its own)"
	atf_set require.user root
	atf_set timeout 60
}
agent_refuses_body() {
	fenced_vars
	pool_require
	command -v unshare > /dev/null || atf_skip "unshare is missing"
	size=$("$REGRESS/t_fence" -C "fence-regress-$$" -Q |
	    sed -n 's/^assignment size //p')
	[ -n "$size" ] || atf_skip "t_fence -Q says no assignment size"
	cat > refuse.py <<'PY'
import array, os, socket, struct, sys
agent, size = sys.argv[1], int(sys.argv[2])
def fds_of(kinds):
    fds = []
    for k in kinds:
        if k == "sock":
            x, y = socket.socketpair()
            fds.append(os.dup(x.fileno()))
        elif k == "dir":
            fds.append(os.open("/", os.O_RDONLY | os.O_DIRECTORY))
        elif k == "memfd":
            m = os.memfd_create("p", os.MFD_ALLOW_SEALING)
            os.write(m, b"\x06\0\0\0\0\0\xff\x7f")
            import fcntl
            fcntl.fcntl(m, fcntl.F_ADD_SEALS, 0xf)
            fds.append(m)
        elif k == "pipe":
            fds.append(os.pipe()[0])
    return fds
def run(name, payload, kinds):
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    # The status socket: its EXEC record would bring a descriptor.
    rs, ws = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    r, w = os.dup(rs.fileno()), os.dup(ws.fileno())
    rs.close()
    ws.close()
    pid = os.fork()
    if pid == 0:
        os.dup2(b.fileno(), 3)
        os.dup2(w, 4)
        os.closerange(5, 4096)
        os.execv(agent, ["fence-agent", "-p", "0"])
    b.close()
    os.close(w)
    rec = os.read(r, 4096)
    if struct.unpack_from("I", rec)[0] != 3:
        sys.exit(name + ": no POOLED record first")
    fds = fds_of(kinds)
    a.sendmsg([payload], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
        array.array("i", fds))])
    rec = os.read(r, 4096)
    _, st = os.waitpid(pid, 0)
    if not rec or struct.unpack_from("I", rec)[0] != 2:
        sys.exit(name + ": no error record")
    if b"assignment" not in rec:
        sys.exit(name + ": the error does not name the assignment")
    if not os.WIFEXITED(st) or os.WEXITSTATUS(st) != 127:
        sys.exit(name + ": status %d" % st)
    print(name, "refused")
good = struct.pack("I", 0x66706f6f) + bytes(size - 4)
run("short", good[:-1], ["sock", "dir", "memfd"])
run("long", good + b"x", ["sock", "dir", "memfd"])
run("two descriptors", good, ["sock", "dir"])
run("four descriptors", good, ["sock", "dir", "memfd", "memfd"])
run("a pipe for the channel", good, ["pipe", "dir", "memfd"])
run("a socket for the home", good, ["sock", "sock", "memfd"])
run("uid 0 and no key", good, ["sock", "dir", "memfd"])
run("bad magic", bytes(size), ["sock", "dir", "memfd"])
PY
	# Its own mount, uts, ipc and pid namespaces: nothing it could do
	# would reach the host's, should it take a step.
	hostname > host.before
	atf_check -o save:out unshare --mount --uts --ipc --pid --fork \
	    python3 refuse.py "$BIN/fence-agent" "$size"
	atf_check_equal 8 "$(grep -c ' refused$' out)"
	atf_check -o file:host.before hostname
}
agent_refuses_cleanup() { :; }

atf_init_test_cases() {
	atf_add_test_case pooled
	atf_add_test_case pooled_l2
	atf_add_test_case pooled_first
	atf_add_test_case pooled_weak
	atf_add_test_case pooled_image
	atf_add_test_case sigkill
	atf_add_test_case agent_killed
	atf_add_test_case agent_unreachable
	atf_add_test_case agent_refuses
}
