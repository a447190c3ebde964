#! /usr/bin/atf-sh
# Native fences without the daemon: regress/t_fence boots a fence with
# fence_start() and runs regress/t_inside in it as pid 1, which checks
# the boundary from inside (docs/fence.md; issue 3, "Done when").
#
# By hand: atf-sh regress/fence_test.sh -v regressdir=$PWD/build/regress
# (the directory holding t_fence and t_inside), or through kyua.

# A uid and gid nobody else's (the tests count its processes), also not
# another suite's running beside this one: derived from the test case's
# work directory, which kyua makes unique, so body and cleanup agree.
FENCE_UID=$((200000 + $(pwd | cksum | cut -d' ' -f1) % 700000))
FENCE_GID=$FENCE_UID

fence_setup() {
	REGRESS=$(atf_config_get regressdir "$(atf_get_srcdir)")
	T_FENCE=$REGRESS/t_fence
	T_INSIDE=$REGRESS/t_inside
	[ -x "$T_FENCE" ] && [ -x "$T_INSIDE" ] ||
	    atf_skip "t_fence and t_inside not built in $REGRESS"
	# The cgroup parent is this case's own: cases run side by side, and
	# one's cleanup removing a shared parent raced another's boot.
	[ -s cgname ] || echo "fence-regress-$$" > cgname
	CG=$(cat cgname)
	out=$("$T_FENCE" -C "$CG" -Q) || atf_skip "${out:-t_fence -Q failed}"
	LANDLOCK_ABI=$(echo "$out" | sed -n 's/^landlock abi //p')
	# Homes may not live under /tmp, where kyua puts work directories.
	if [ ! -s work.path ]; then
		mktemp -d /var/lib/fence-regress.XXXXXX > work.path ||
		    atf_fail "cannot create a work directory under /var/lib"
	fi
	WORK=$(cat work.path)
	BIN=$WORK/bin
	HOMES=$WORK/homes
	mkdir -p "$BIN" "$HOMES"
	chmod 0755 "$WORK" "$BIN" "$HOMES"
	cp "$T_INSIDE" "$BIN/t_inside"
	chmod 0755 "$BIN/t_inside"
	KEY=ft-$(echo "$1" | tr _ -)-$$
	echo "$KEY" > key
}

# t_fence TIER [t_fence options] -- t_inside checks...; output in out.
fence_run() {
	tier=$1
	shift
	"$T_FENCE" -C "$CG" -t "$tier" -u $FENCE_UID -g $FENCE_GID \
	    -k "$KEY" -b "$BIN" -H "$HOMES" "$@" > out 2>&1
	echo $? > rc
}

fence_show() {
	echo "--- t_fence output" >&2
	cat out >&2
}

fence_expect() {
	grep -Eq -- "$1" out || { fence_show; atf_fail "no \"$1\" in the output"; }
}

fence_reject() {
	! grep -Eq -- "$1" out || { fence_show; atf_fail "\"$1\" in the output"; }
}

# Every check inside passed, and nothing was left behind.
fence_passed() {
	fence_reject '^FAIL'
	fence_expect '^init: exit 0$'
	fence_expect '^clean: '
	atf_check_equal "$(cat rc)" 0
}

fence_cleanup() {
	REGRESS=$(atf_config_get regressdir "$(atf_get_srcdir)")
	cg=$(cat cgname 2>/dev/null)
	cg=${cg:-fence-regress-none}
	for p in $(cat t_fence.pid 2>/dev/null); do
		kill -9 "$p" 2>/dev/null
	done
	# A fence whose t_fence was killed keeps its cgroups.
	for k in $(cat key 2>/dev/null); do
		for d in $("$REGRESS/t_fence" -C "$cg" -P 2>/dev/null); do
			rmdir "$d/$k" 2>/dev/null
		done
	done
	for d in $("$REGRESS/t_fence" -C "$cg" -P 2>/dev/null); do
		rmdir "$d" 2>/dev/null
	done
	w=$(cat work.path 2>/dev/null)
	case "$w" in
	/var/lib/fence-regress.*) rm -rf "$w" ;;
	esac
	true
}

# The filesystem of every tier: docs/design.md's table, from inside.
fence_fs_checks() {
	fence_run "$1" -- t_inside \
	    ro /usr -- ro /etc -- ro / -- ro-mount /proc/sys -- \
	    tmpfs /tmp -- tmpfs /run fenced -- tmpfs /var tmp -- \
	    tmpfs /run/fenced/bin t_inside -- ro /run/fenced/bin -- \
	    mountinfo-hides "$BIN" -- \
	    tmpfs /home fence -- tmpfs /dev/shm -- \
	    rw /home/fence -- rw /tmp -- rw /var/tmp -- rw /dev/shm -- \
	    absent /sys -- procs 1 -- dev -- masked -- \
	    hostname "$KEY" -- session -- ids $FENCE_UID $FENCE_GID -- \
	    env HOME /home/fence -- rlimit core 0 -- \
	    write /home/fence/from-inside "$1 was here"
	fence_passed
	atf_check -o inline:"$1 was here\n" cat "$HOMES/$KEY/from-inside"
	atf_check -o match:"^$FENCE_UID $FENCE_GID 700\$" \
	    stat -c '%u %g %a' "$HOMES/$KEY"
}

for t in l1 l15 l2; do
	eval "atf_test_case ${t}_filesystem cleanup
	${t}_filesystem_head() {
		atf_set descr '$t: /usr and /etc read-only (EROFS), fresh tmpfs on /tmp /run /var /home, only the home writable and seen on the host, /proc of the fence only with /proc/sys read-only and masks, minimal /dev, no /sys'
		atf_set require.user root
	}
	${t}_filesystem_body() {
		fence_setup ${t}_filesystem
		fence_fs_checks \$(echo $t | sed 's/l15/L1.5/;s/l1\$/L1/;s/l2/L2/')
	}
	${t}_filesystem_cleanup() { fence_cleanup; }"
done

ZERO=0000000000000000

fence_priv_checks() {
	fence_run "$1" -- t_inside \
	    status CapEff $ZERO -- status CapPrm $ZERO -- \
	    status CapBnd $ZERO -- status CapAmb $ZERO -- \
	    status CapInh $ZERO -- status NoNewPrivs 1 -- status Seccomp 2 -- \
	    rlimit core 0 -- rlimit nofile 1024 -- landlock-proc fail
	fence_passed
	fence_expect "^landlock: abi $LANDLOCK_ABI "
}

atf_test_case l15_privileges cleanup
l15_privileges_head() {
	atf_set descr "L1.5: no capabilities in any set, no_new_privs, seccomp filter, rlimits, Landlock"
	atf_set require.user root
}
l15_privileges_body() { fence_setup l15_privileges; fence_priv_checks L1.5; }
l15_privileges_cleanup() { fence_cleanup; }

atf_test_case l2_privileges cleanup
l2_privileges_head() {
	atf_set descr "L2: no capabilities in any set, no_new_privs, seccomp filter, rlimits, Landlock"
	atf_set require.user root
}
l2_privileges_body() { fence_setup l2_privileges; fence_priv_checks L2; }
l2_privileges_cleanup() { fence_cleanup; }

atf_test_case l1_privileges cleanup
l1_privileges_head() {
	atf_set descr "L1: the fence's uid and no effective capabilities, but no filter: the checks of L1.5 see the difference"
	atf_set require.user root
}
l1_privileges_body() {
	fence_setup l1_privileges
	fence_run L1 -- t_inside status CapEff $ZERO -- status CapPrm $ZERO \
	    -- status NoNewPrivs 0 -- status Seccomp 0 -- rlimit core 0 -- \
	    landlock-proc ok
	fence_passed
	fence_expect '^landlock: abi 0 applied none$'
}
l1_privileges_cleanup() { fence_cleanup; }

# Calls the L1.5 policy refuses (docs/seccomp-l15.md), each probed with
# arguments for which the kernel alone would answer something else.
DENIED="keyctl add_key request_key bpf userfaultfd io_uring_setup
    perf_event_open ptrace process_vm_readv kcmp unshare-user unshare setns
    clone-newuser clone3 mount umount2 chroot pivot_root open_tree
    mount_setattr fsopen name_to_handle_at open_by_handle_at socket-packet
    socket-alg socket-vsock socket-raw socketpair-alg tiocsti tiocsti-high
    tioclinux personality-norandom personality-high clock_settime
    settimeofday adjtimex modify_ldt get_mempolicy kexec_load init_module
    iopl swapon reboot syslog open_tree_attr future"
ALLOWED="getpid socket-inet socket-unix socket-netlink personality-query
    personality-linux32 personality-uname26"
# Without the filter the kernel lets these through or answers otherwise.
NOT_DENIED_AT_L1="keyctl add_key bpf userfaultfd io_uring_setup ptrace
    unshare-user unshare setns clone-newuser clone3 mount chroot open_tree
    mount_setattr socket-alg socketpair-alg tiocsti tioclinux
    personality-norandom adjtimex modify_ldt get_mempolicy"

fence_syscall_checks() {
	args=""
	for s in $DENIED; do args="$args denied $s --"; done
	for s in $ALLOWED; do args="$args allowed $s --"; done
	fence_run "$1" -- t_inside $args true
	fence_passed
}

atf_test_case l15_syscalls cleanup
l15_syscalls_head() {
	atf_set descr "L1.5: every call of the policy's list fails with EPERM or ENOSYS, the usual ones work"
	atf_set require.user root
}
l15_syscalls_body() { fence_setup l15_syscalls; fence_syscall_checks L1.5; }
l15_syscalls_cleanup() { fence_cleanup; }

atf_test_case l2_syscalls cleanup
l2_syscalls_head() {
	atf_set descr "L2: every call of the policy's list fails with EPERM or ENOSYS, the usual ones work"
	atf_set require.user root
}
l2_syscalls_body() { fence_setup l2_syscalls; fence_syscall_checks L2; }
l2_syscalls_cleanup() { fence_cleanup; }

atf_test_case l1_syscalls cleanup
l1_syscalls_head() {
	atf_set descr "L1 has no filter: the probes of the L1.5 test are not refused there, so that test can fail"
	atf_set require.user root
}
l1_syscalls_body() {
	fence_setup l1_syscalls
	args=""
	for s in $NOT_DENIED_AT_L1; do args="$args allowed $s --"; done
	fence_run L1 -- t_inside $args true
	fence_passed
}
l1_syscalls_cleanup() { fence_cleanup; }

atf_test_case foreign_abi_filter
foreign_abi_filter_head() {
	atf_set descr "the L1.5 program kills i386 and x32 calls, allows native ones, refuses by argument; its notifying twin has the same verdicts, USER_NOTIF where the other refuses, with the same errno for the fencer's answer"
	atf_set require.user root
}
# zy VERDICT ARGS...: t_fence -Z ARGS (the program with errnos) says
# VERDICT, and -Y (the one whose refusals notify the fencer) says the
# same, "notify" before an errno: the same rules, another action.
zy() {
	_v=$1
	shift
	atf_check -o inline:"$_v\n" "$T_FENCE" -Z "$@"
	case $_v in
	errno*)	atf_check -o inline:"notify $_v\n" "$T_FENCE" -Y "$@" ;;
	*)	atf_check -o inline:"$_v\n" "$T_FENCE" -Y "$@" ;;
	esac
}

foreign_abi_filter_body() {
	REGRESS=$(atf_config_get regressdir "$(atf_get_srcdir)")
	T_FENCE=$REGRESS/t_fence
	[ -x "$T_FENCE" ] || atf_skip "t_fence not built"
	zy kill-process i386 20
	zy kill-process i386 1
	zy kill-process x32 39
	zy allow x86_64 39
	zy "errno 1" x86_64 250	# keyctl
	zy "errno 38" x86_64 435	# clone3
	zy "errno 1" x86_64 56 0x10000000
	zy allow x86_64 56 0x1200011
	zy "errno 1" x86_64 41 17 3	# AF_PACKET
	zy "errno 1" x86_64 41 2 3	# raw IP
	zy allow x86_64 41 16 3	# netlink
	zy "errno 1" x86_64 16 0 0x100005412
	for p in 0 8 0x20000 0x20008 0xffffffff; do
		zy allow x86_64 135 $p
	done
	for p in 1 0x9 0x40000 0x400000 0x20001 0x80000000 0xfffffffe \
	    0x100000000 0x100000008; do
		zy "errno 1" x86_64 135 $p
	done
	zy "errno 38" x86_64 500
}

atf_test_case l15_foreign_abi cleanup
l15_foreign_abi_head() {
	atf_set descr "L1.5: an x32 call and an i386 int 0x80 call kill the caller with SIGSYS"
	atf_set require.user root
}
l15_foreign_abi_body() {
	fence_setup l15_foreign_abi
	# Does this kernel run i386 calls at all?  Ask outside any fence.
	if "$T_INSIDE" killed i386 0 > host.out 2>&1; then
		i386="-- killed i386 0"
		skip="the kernel itself kills int 0x80 callers ($(cat host.out)): IA32 emulation is off"
	else
		i386="-- killed i386 31"
		skip=
	fi
	fence_run L1.5 -- t_inside killed x32 31 $i386
	fence_passed
	[ -z "$skip" ] || atf_skip "x32 killed by SIGSYS; i386 not testable live: $skip (foreign_abi_filter checks the program)"
}
l15_foreign_abi_cleanup() { fence_cleanup; }

atf_test_case l15_pids_limit cleanup
l15_pids_limit_head() {
	atf_set descr "L1.5: the pids cgroup stops a fork bomb"
	atf_set require.user root
}
l15_pids_limit_body() {
	fence_setup l15_pids_limit
	fence_run L1.5 -p 32 -- t_inside forkbomb 200 -- procs 1
	fence_passed
	fence_expect '^ok forkbomb stopped after 3[01] children'
}
l15_pids_limit_cleanup() { fence_cleanup; }

# issue 9: open files and tmpfs sizes follow from the limits, at every
# tier (docs/limits.md).  64M of memory: /dev/shm and /var 8M, /tmp 16M;
# 256 pids: 65536 / 256 = 256 open files a process.  Twelve processes
# holding all they may: at most 3,072 descriptors, where the host's
# 20,000 a process (what an L1 fence inherited) made 240,000.
for t in l1 l15; do
	eval "atf_test_case ${t}_limits cleanup
	${t}_limits_head() {
		atf_set descr '$t: RLIMIT_NOFILE from the pids limit, so that many processes cannot hold many descriptors; /dev/shm, /tmp and /var fill to their sizes from the memory limit, then ENOSPC'
		atf_set require.user root
	}
	${t}_limits_body() {
		fence_setup ${t}_limits
		fence_run \$(echo $t | sed 's/l15/L1.5/;s/l1\$/L1/') \
		    -m 67108864 -p 256 -- t_inside rlimit nofile 256 -- \
		    nofile-hold 12 65536 -- fill /dev/shm 8M -- \
		    fill /tmp 16M -- fill /var/tmp 8M -- procs 1
		fence_passed
		fence_expect '^ok nofile-hold 12 processes held'
		fence_expect '^ok fill /dev/shm: 83886[0-9]+ bytes, then ENOSPC'
	}
	${t}_limits_cleanup() { fence_cleanup; }"
done

# issue 9: every fence gets a session keyring of its own.  Before, pid 1
# kept the fencer's: under a service manager that gives the daemon a
# session keyring (systemd's KeyringMode=private), a root-owned keyring
# that outlives every fence, which a fence's processes possess and so
# could read and fill.  t_fence -J models that daemon.
# cgroup v2: pid 1 is born in its cgroup (clone3 with CLONE_INTO_CGROUP,
# common/cg_clone.c), so nothing moves it; t_fence says which way it got
# there.  -E makes clone3 answer ENOSYS, as a container runtime's seccomp
# profile may: pid 1 then joins by its own write, and the fence must be
# as limited as ever (the fork bomb stops at the pids limit).
atf_test_case l15_cgroup_born cleanup
l15_cgroup_born_head() {
	atf_set descr "cgroup v2: pid 1 is born in the fence's cgroup (clone3 CLONE_INTO_CGROUP); where clone3 is refused it joins by its write and is limited all the same"
	atf_set require.user root
}
l15_cgroup_born_body() {
	fence_setup l15_cgroup_born
	v2=
	for d in $("$T_FENCE" -C "$CG" -P); do
		[ "$(stat -f -c %T "${d%/*}")" != cgroup2fs ] || v2=$d
	done
	[ -n "$v2" ] || atf_skip "no controller of a fence on cgroup v2 here: on v1 pid 1 joins by writing tasks, there is no cgroup to be born in"
	fence_run L1.5 -p 32 -- t_inside forkbomb 200 -- procs 1
	fence_passed
	fence_expect '^cgroup join: born in its v2 cgroup$'
	fence_expect '^ok forkbomb stopped after 3[01] children'
	fence_run L1.5 -E -p 32 -- t_inside forkbomb 200 -- procs 1
	fence_passed
	fence_expect '^cgroup join: by its own write$'
	fence_expect '^ok forkbomb stopped after 3[01] children'
}
l15_cgroup_born_cleanup() { fence_cleanup; }

atf_test_case l1_keyring cleanup
l1_keyring_head() {
	atf_set descr "L1: a key added to the session keyring in one fence is seen neither by the daemon's keyring afterwards, nor by the next boot, nor on the host as the fence's uid"
	atf_set require.user root
}
l1_keyring_body() {
	fence_setup l1_keyring
	name=fenced-regress-$(cat key)
	fence_run L1 -J "$name" -- t_inside keyring-absent "$name" -- \
	    keyring-add "$name" -- keyring-absent other
	fence_passed
	fence_expect "^keyring: $name absent"
	fence_run L1 -J "$name" -- t_inside keyring-absent "$name"
	fence_passed
	atf_check -o match:"^ok keyring-absent" setpriv --reuid=$FENCE_UID \
	    --regid=$FENCE_GID --clear-groups "$T_INSIDE" keyring-absent "$name"
	# From L1.5 on there is no keyring to write at all.
	fence_run L1.5 -J "$name" -- t_inside denied keyctl
	fence_passed
}
l1_keyring_cleanup() { fence_cleanup; }

atf_test_case l15_memory_oom cleanup
l15_memory_oom_head() {
	atf_set descr "L1.5: over its memory limit a process is OOM-killed inside the fence only; pid 1 and the caller carry on, the OOM is reported"
	atf_set require.user root
}
l15_memory_oom_body() {
	fence_setup l15_memory_oom
	fence_run L1.5 -m 67108864 -- t_inside alloc 512 -- procs 1 -- \
	    rw /tmp
	fence_passed
	fence_expect '^ok alloc 512 MiB: child killed by SIGKILL'
	fence_expect '^oom: 1$'
	fence_expect '^oom after stop: 1$'
}
l15_memory_oom_cleanup() { fence_cleanup; }

atf_test_case l15_no_oom cleanup
l15_no_oom_head() {
	atf_set descr "L1.5: within its limit nothing is killed and no OOM is reported"
	atf_set require.user root
}
l15_no_oom_body() {
	fence_setup l15_no_oom
	fence_run L1.5 -m 268435456 -- t_inside true
	fence_passed
	fence_expect '^oom: 0$'
}
l15_no_oom_cleanup() { fence_cleanup; }

atf_test_case l2_network cleanup
l2_network_head() {
	atf_set descr "L2: only lo, up; a TCP listener on the host's 127.0.0.1 is unreachable"
	atf_set require.user root
}
l2_network_body() {
	fence_setup l2_network
	fence_run L2 -L -- t_inside netif -- connect 127.0.0.1 @PORT@ fail
	fence_passed
	fence_expect '^ok connect 127.0.0.1:[0-9]+ Connection refused$'
}
l2_network_cleanup() { fence_cleanup; }

atf_test_case l15_network_shared cleanup
l15_network_shared_head() {
	atf_set descr "L1.5 shares the host network: the same listener is reachable (the L2 test can fail)"
	atf_set require.user root
}
l15_network_shared_body() {
	fence_setup l15_network_shared
	fence_run L1.5 -L -- t_inside connect 127.0.0.1 @PORT@ ok
	fence_passed
}
l15_network_shared_cleanup() { fence_cleanup; }

atf_test_case l15_abstract_scoped cleanup
l15_abstract_scoped_head() {
	atf_set descr "L1.5: an abstract unix socket bound on the host is unreachable when Landlock scopes them"
	atf_set require.user root
}
l15_abstract_scoped_body() {
	fence_setup l15_abstract_scoped
	[ "${LANDLOCK_ABI:-0}" -ge 6 ] ||
	    atf_skip "Landlock ABI ${LANDLOCK_ABI:-0} has no scoping of abstract unix sockets (needs 6)"
	fence_run L1.5 -A -- t_inside abstract @ABS@ fail
	fence_passed
	fence_expect '^landlock: .* scope-abstract scope-signal$'
	# Without Landlock (L1) the same connect works: the check can fail.
	KEY=$KEY-l1
	echo "$KEY" >> key
	fence_run L1 -A -- t_inside abstract @ABS@ ok
	fence_passed
}
l15_abstract_scoped_cleanup() { fence_cleanup; }

atf_test_case home_refused cleanup
home_refused_head() {
	atf_set descr "a home that is a symlink, under /tmp, or reached through a user's symlink is refused; nothing is created"
	atf_set require.user root
}
home_refused_body() {
	fence_setup home_refused
	target=$WORK/elsewhere
	mkdir "$target"
	ln -s "$target" "$HOMES/$KEY"
	fence_run L1.5 -- t_inside true
	atf_check_equal "$(cat rc)" 1
	fence_expect "^home: refused: $HOMES/$KEY: a symlink\$"
	fence_reject '^started'
	atf_check -o inline:"" ls -A "$target"
	# The same through the home path fence_start is given directly.
	"$T_FENCE" -C "$CG" -t L1.5 -u $FENCE_UID -g $FENCE_GID \
	    -k "$KEY" -b "$BIN" -h "$HOMES/$KEY" -- t_inside true > out 2>&1
	fence_expect '^fence_start: open home .*: Too many levels of symbolic links$'
	fence_expect '^clean: '
	# Homes under /tmp.
	atf_check -s exit:1 -o match:"^home: refused: homes dir /tmp/.* is under a temporary directory" \
	    "$T_FENCE" -x -H /tmp/fence-regress-homes -k "$KEY" \
	    -u $FENCE_UID -g $FENCE_GID
	# Homes reached through a symlink the user owns, pointing at /etc.
	mkdir "$WORK/user"
	chown $FENCE_UID "$WORK/user"
	ln -s /etc "$WORK/user/homes"
	chown -h $FENCE_UID "$WORK/user/homes"
	atf_check -s exit:1 -o match:"^home: refused: $WORK/user/homes: a symlink not of root's" \
	    "$T_FENCE" -x -H "$WORK/user/homes" -k "$KEY" \
	    -u $FENCE_UID -g $FENCE_GID
	[ ! -e "/etc/$KEY" ] || atf_fail "/etc/$KEY was created"
	# A home of someone else.
	mkdir "$HOMES/other-$KEY"
	atf_check -s exit:1 -o match:"other-$KEY: owned by someone else" \
	    "$T_FENCE" -x -H "$HOMES" -k "other-$KEY" \
	    -u $FENCE_UID -g $FENCE_GID
}
home_refused_cleanup() { fence_cleanup; }

atf_test_case home_tricks cleanup
home_tricks_head() {
	atf_set descr "a user's symlink or directory on the way to the homes makes root create nothing anywhere: the walk is judged before anything is made"
	atf_set require.user root
}
# t_fence -x as the fencer would call it for ~/sandbox-homes; $1 the homes.
home_try() {
	"$T_FENCE" -x -H "$1" -k "$KEY" -u $FENCE_UID -g $FENCE_GID > out 2>&1
	echo $? > rc
}
home_tricks_body() {
	fence_setup home_tricks
	u=$WORK/user
	mkdir "$u" "$WORK/state" "$WORK/state/empty"
	chown $FENCE_UID:$FENCE_GID "$u"
	chmod 0755 "$u"
	# ~/sandbox-homes -> a missing path in a directory only root may
	# write: /etc itself, the daemon's state, its empty directory.
	for t in "/etc/fenced-regress-$KEY" "$WORK/state/probe-secret.$KEY" \
	    "$WORK/state/empty/x"; do
		rm -f "$u/sandbox-homes"
		ln -s "$t" "$u/sandbox-homes"
		chown -h $FENCE_UID:$FENCE_GID "$u/sandbox-homes"
		home_try "$u/sandbox-homes"
		atf_check_equal "$(cat rc)" 1
		fence_expect "^home: refused: $u/sandbox-homes: a symlink not of root's\$"
		[ ! -e "$t" ] && [ ! -L "$t" ] || atf_fail "$t was created"
	done
	rm -f "/etc/fenced-regress-$KEY"
	rmdir "$WORK/state/probe-secret.$KEY" 2>/dev/null
	atf_check -o inline:"" ls -A "$WORK/state/empty"
	# The same symlink one level further down.
	rm -f "$u/sandbox-homes"
	mkdir "$u/sandbox-homes"
	chown $FENCE_UID:$FENCE_GID "$u/sandbox-homes"
	ln -s /etc "$u/sandbox-homes/$KEY"
	chown -h $FENCE_UID:$FENCE_GID "$u/sandbox-homes/$KEY"
	home_try "$u/sandbox-homes"
	fence_expect "^home: refused: $u/sandbox-homes/$KEY: a symlink\$"
	rm -f "$u/sandbox-homes/$KEY"
	# A root directory the user moved into their tree: nothing in it.
	mkdir "$u/rootdir"
	home_try "$u/rootdir/sandbox-homes"
	atf_check_equal "$(cat rc)" 1
	fence_expect "^home: refused: $u/rootdir/sandbox-homes: missing, and not in a directory the uid may write\$"
	atf_check -o inline:"" ls -A "$u/rootdir"
	# A directory others may write, on the way.
	mkdir "$WORK/ww"
	chmod 0777 "$WORK/ww"
	home_try "$WORK/ww/homes"
	atf_check_equal "$(cat rc)" 1
	fence_expect "^home: refused: $WORK/ww: writable by others\$"
	atf_check -o inline:"" ls -A "$WORK/ww"
	# A directory of another uid, on the way.
	mkdir "$WORK/other"
	chown $((FENCE_UID + 1)) "$WORK/other"
	home_try "$WORK/other/homes"
	fence_expect "^home: refused: $WORK/other: owned by someone else\$"
	atf_check -o inline:"" ls -A "$WORK/other"
	# What the user may write in is made, the user's, 0700.
	home_try "$u/a/b"
	atf_check_equal "$(cat rc)" 0
	fence_expect "^home: $u/a/b/$KEY\$"
	atf_check -o inline:"$FENCE_UID 700\n$FENCE_UID 700\n$FENCE_UID 700\n" \
	    stat -c '%u %a' "$u/a" "$u/a/b" "$u/a/b/$KEY"
}
home_tricks_cleanup() {
	k=$(cat key 2>/dev/null)
	[ -n "$k" ] && rm -rf "/etc/fenced-regress-$k"
	fence_cleanup
}

atf_test_case home_image cleanup
home_image_head() {
	atf_set descr "a home with a size limit is an ext4 image: full at its size at L1 and L1.5 (ENOSPC), kept across boots, root's 0600, off the fence's mount table, detached after the stop; an image not root's is refused"
	atf_set require.user root
}
home_image_body() {
	fence_setup home_image
	[ -x /usr/sbin/mkfs.ext4 ] || [ -x /sbin/mkfs.ext4 ] ||
	    atf_skip "no mkfs.ext4"
	[ -e /dev/loop-control ] || atf_skip "no /dev/loop-control"
	img=$HOMES/homes/$FENCE_UID/$KEY.img
	fence_run L1.5 -I 33554432 -- t_inside write /home/fence/kept yes -- \
	    full /home/fence/big 64 -- mountinfo-hides "$WORK" "$BIN" -- \
	    ids $FENCE_UID $FENCE_GID
	fence_passed
	fence_expect "^home: image $img on /dev/loop[0-9]+, 33554432 bytes"
	atf_check -o inline:"0 600 33554432\n" stat -c '%u %a %s' "$img"
	[ $(du -k "$img" | cut -f1) -le 33000 ] || atf_fail "image over its size"
	fence_run L1 -I 33554432 -- t_inside read /home/fence/kept yes -- \
	    full /home/fence/big 64
	fence_passed
	loop_wait_detached "$img"
	# An image someone else could write is not mounted.
	chown $FENCE_UID "$img"
	fence_run L1.5 -I 33554432 -- t_inside true
	atf_check_equal "$(cat rc)" 1
	fence_expect "^home: refused: $img: not a file of root's, 0600, with one link\$"
}
home_image_cleanup() {
	w=$(cat work.path 2>/dev/null)
	[ -n "$w" ] && for l in $(losetup -j "$w" -O NAME -n 2>/dev/null); do
		losetup -d "$l" 2>/dev/null
	done
	fence_cleanup
}

atf_test_case home_created
home_created_head() {
	atf_set descr "a missing home is created 0700 for the owner and kept"
	atf_set require.user root
}
home_created_body() {
	REGRESS=$(atf_config_get regressdir "$(atf_get_srcdir)")
	w=$(mktemp -d /var/lib/fence-regress.XXXXXX)
	"$REGRESS/t_fence" -x -H "$w/homes" -k k1 -u $FENCE_UID \
	    -g $FENCE_GID > out 2>&1
	r=$?
	s=$(stat -c '%u %g %a' "$w/homes/k1" 2>&1)
	touch "$w/homes/k1/keep"
	"$REGRESS/t_fence" -x -H "$w/homes" -k k1 -u $FENCE_UID \
	    -g $FENCE_GID >> out 2>&1
	r2=$?
	k=$(ls "$w/homes/k1")
	rm -rf "$w"
	atf_check_equal "$r $r2" "0 0"
	atf_check_equal "$s" "$FENCE_UID $FENCE_GID 700"
	atf_check_equal "$k" keep
	atf_check -o match:"^home: $w/homes/k1\$" cat out
}

atf_test_case memory_refused cleanup
memory_refused_head() {
	atf_set descr "a memory limit the kernel cannot honour fails the boot clearly and leaves nothing"
	atf_set require.user root
}
memory_refused_body() {
	fence_setup memory_refused
	fence_run L1.5 -m 9223372036854775807 -- t_inside true
	atf_check_equal "$(cat rc)" 1
	fence_expect '^fence_start: memory limit 9223372036854775807 refused by the kernel'
	fence_reject '^started'
	fence_expect '^clean: '
}
memory_refused_cleanup() { fence_cleanup; }

atf_test_case boot_errors cleanup
boot_errors_head() {
	atf_set descr "a boot that cannot be done fails naming the step and errno, leaving nothing; uid 0 is refused"
	atf_set require.user root
}
boot_errors_body() {
	fence_setup boot_errors
	mkdir -p "$HOMES/$KEY"
	chown $FENCE_UID:$FENCE_GID "$HOMES/$KEY"
	"$T_FENCE" -C "$CG" -t L1.5 -u $FENCE_UID -g $FENCE_GID \
	    -k "$KEY" -b "$WORK/nonexistent" -h "$HOMES/$KEY" -- t_inside \
	    true > out 2>&1
	fence_expect "^fence_start: open $WORK/nonexistent: No such file or directory\$"
	fence_expect '^clean: '
	"$T_FENCE" -C "$CG" -t L1.5 -u $FENCE_UID -g $FENCE_GID \
	    -k "$KEY" -b "$BIN" -h "$HOMES/$KEY" -- no-such-init > out 2>&1
	fence_expect '^fence_start: execve /run/fenced/bin/no-such-init: No such file or directory$'
	fence_expect '^clean: '
	"$T_FENCE" -C "$CG" -t L1.5 -u 0 -g 0 \
	    -k "$KEY" -b "$BIN" -h "$HOMES/$KEY" -- t_inside true > out 2>&1
	fence_expect '^fence_start: refusing to run a fence as uid 0'
	fence_expect '^clean: '
	chown 0 "$HOMES/$KEY"
	"$T_FENCE" -C "$CG" -t L1.5 -u $FENCE_UID -g $FENCE_GID \
	    -k "$KEY" -b "$BIN" -h "$HOMES/$KEY" -- t_inside true > out 2>&1
	fence_expect "^fence_start: home $HOMES/$KEY belongs to uid 0, not $FENCE_UID"
	fence_expect '^clean: '
}
boot_errors_cleanup() { fence_cleanup; }

atf_test_case stop_leaves_nothing cleanup
stop_leaves_nothing_head() {
	atf_set descr "fence_stop at a deadline kills everything, also a setsid grandchild; no process, mount or cgroup remains; the home stays"
	atf_set require.user root
}
stop_leaves_nothing_body() {
	fence_setup stop_leaves_nothing
	fence_run L1.5 -w 2 -- t_inside write /home/fence/kept yes -- \
	    orphan -- sleep 60
	fence_expect '^ok orphan$'
	fence_expect '^deadline: stopped [0-9]+ ms after it passed$'
	fence_reject '^init: '
	fence_expect '^clean: no process, mount, cgroup or fd left$'
	ms=$(sed -n 's/^deadline: stopped \([0-9]*\) ms.*/\1/p' out)
	[ "$ms" -lt 1000 ] || atf_fail "stopping took $ms ms"
	atf_check -o inline:"yes\n" cat "$HOMES/$KEY/kept"
}
stop_leaves_nothing_cleanup() { fence_cleanup; }

atf_test_case parent_death cleanup
parent_death_head() {
	atf_set descr "SIGKILL of the process that started the fence kills every process of the fence"
	atf_set require.user root
}
parent_death_body() {
	fence_setup parent_death
	"$T_FENCE" -C "$CG" -t L1.5 -u $FENCE_UID -g $FENCE_GID \
	    -k "$KEY" -b "$BIN" -H "$HOMES" -K -- t_inside orphan -- \
	    sleep 60 > out 2>&1 &
	echo $! > t_fence.pid
	i=0
	until grep -q '^ok orphan' out; do
		i=$((i + 1))
		[ $i -lt 100 ] || { fence_show; atf_fail "the fence did not come up"; }
		sleep 0.05
	done
	pid=$(sed -n 's/^started: pid //p' out)
	cg=$(sed -n 's/^cgroup: //p' out)
	[ -n "$(cat "$cg/cgroup.procs")" ] || atf_fail "nothing in $cg"
	kill -9 $(cat t_fence.pid)
	# The kernel kills pid 1 (PR_SET_PDEATHSIG) and with it the pid
	# namespace; zombies may wait a moment for the host's init.
	i=0
	while [ -n "$(cat "$cg/cgroup.procs")" ] ||
	    ps -o stat= -u $FENCE_UID | grep -qv '^Z'; do
		i=$((i + 1))
		[ $i -lt 100 ] || { ps -f -u $FENCE_UID >&2; atf_fail "fence processes survived their parent"; }
		sleep 0.05
	done
	[ ! -d /proc/$pid ] || grep -q '^State:.*Z' /proc/$pid/status ||
	    atf_fail "pid 1 ($pid) survived"
}
parent_death_cleanup() { fence_cleanup; }

atf_init_test_cases() {
	for t in l1 l15 l2; do
		atf_add_test_case ${t}_filesystem
		atf_add_test_case ${t}_privileges
		atf_add_test_case ${t}_syscalls
	done
	atf_add_test_case foreign_abi_filter
	atf_add_test_case l15_foreign_abi
	atf_add_test_case l15_pids_limit
	atf_add_test_case l15_cgroup_born
	atf_add_test_case l1_limits
	atf_add_test_case l15_limits
	atf_add_test_case l1_keyring
	atf_add_test_case l15_memory_oom
	atf_add_test_case l15_no_oom
	atf_add_test_case l2_network
	atf_add_test_case l15_network_shared
	atf_add_test_case l15_abstract_scoped
	atf_add_test_case home_refused
	atf_add_test_case home_tricks
	atf_add_test_case home_image
	atf_add_test_case home_created
	atf_add_test_case memory_refused
	atf_add_test_case boot_errors
	atf_add_test_case stop_leaves_nothing
	atf_add_test_case parent_death
}
