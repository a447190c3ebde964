#! /usr/bin/atf-sh
# The daemon under pressure (issue 14): its state directory on a full
# filesystem, its descriptors exhausted, memory short in its own cgroup.
# Each time the requests that cannot be served get a clear error, what
# is stored (tokens, uid records, homes) is not lost, the daemon does not
# spin or die, and it serves again once the pressure ends.

. "$(atf_get_srcdir)/lib.subr"

# What must survive: the token hashes, the uid records, a home's file.
pressure_save() {
	cp state/tokens tokens.saved
	cp state/fence-uids uids.saved
}
pressure_same() {
	atf_check -o file:tokens.saved cat state/tokens
	atf_check -o file:uids.saved cat state/fence-uids
	atf_check -o inline:"stored\n" cat "$(fenced_homes)/k1/f"
}

# The daemon's four processes are alive.
pressure_alive() {
	for p in $(cat fenced.pids); do
		[ -d /proc/$p ] || atf_fail "daemon process $p is gone"
	done
}

# A root fence k1 with a file in its home, a token for root.
pressure_setup() {
	TOKEN=$($CTL token -r 2>/dev/null | tail -1)
	[ -n "$TOKEN" ] || atf_fail "no token"
	atf_check -o ignore $CTL boot k1
	atf_check $CTL exec k1 -- sh -c 'echo stored > f'
	atf_check -o ignore $CTL stop k1
	pressure_save
}

# Boot, exec and stop work, over both doors.
pressure_serves() {
	atf_check -o ignore $CTL boot $1
	atf_check -o inline:"ok\n" $CTL exec $1 -- echo ok
	atf_check -o ignore $CTL stop $1
	call "$TOKEN" GET /api/environments
	expect 200
}

atf_test_case state_full cleanup
state_full_head() {
	atf_set descr "with the state directory's filesystem full, a new token is refused saying why and a new key's uid too unless its record fits the room left, stored tokens, uid records and homes are kept, and all works again once there is room"
	atf_set require.user root
	atf_set timeout 300
}
state_full_body() {
	fenced_vars
	mkdir state
	mount -t tmpfs -o size=2m,nr_inodes=512,mode=0700 fenced-regress-state state ||
	    atf_skip "cannot mount a tmpfs for the state directory"
	echo mounted > state.mounted
	fenced_start
	pressure_setup
	cp uids.saved uids.before
	# Fill it: every byte, then every inode.
	dd if=/dev/zero of=state/filler bs=4k > /dev/null 2>&1
	i=0
	while : > "state/i$i" 2>/dev/null; do i=$((i + 1)); done
	atf_check -s not-exit:0 -e match:"No space left on device|space" \
	    $CTL token -r
	# A new key's uid is one line appended to fence-uids: refused saying
	# why, or written into the room its last page still had (a full
	# filesystem takes no new page, not a write inside one it has).
	if $CTL boot k2 > boot2.out 2> boot2.err; then
		grep -q " k2 " state/fence-uids ||
		    atf_fail "k2 booted without its uid on record"
		atf_check -o file:uids.saved sh -c "grep -v ' k2 ' state/fence-uids"
		cp state/fence-uids uids.saved
		atf_check -o ignore $CTL stop k2
	else
		atf_check -o match:"no-uid: .*(No space left on device|space)" \
		    cat boot2.err
	fi
	# What is stored is still there, and still works.
	pressure_same
	call "$TOKEN" GET /api/environments
	expect 200
	pressure_alive
	# A key with its uid already recorded may still boot (nothing to
	# store), or fail saying why.
	if $CTL boot k1 > boot.out 2> boot.err; then
		atf_check -o inline:"stored\n" $CTL exec k1 -- cat f
		atf_check -o ignore $CTL stop k1
	else
		atf_check -o match:"." cat boot.err
	fi
	# Room again: everything as ever.
	find state -maxdepth 1 \( -name filler -o -name 'i[0-9]*' \) -delete
	pressure_serves k2
	atf_check -o match:"^[0-9a-f]{64}$" sh -c "$CTL token -r 2>/dev/null | tail -1"
	atf_check -o file:uids.before sh -c "grep -v ' k2 ' state/fence-uids"
	fenced_stop
}
state_full_cleanup() {
	fenced_cleanup
	[ -f state.mounted ] && umount -l state 2>/dev/null
	true
}

atf_test_case descriptors cleanup
descriptors_head() {
	atf_set descr "with the daemon's descriptors used up by idle HTTP connections, the broker pauses accepting instead of spinning, nothing dies, and it serves again when they close"
	atf_set require.user root
	atf_set timeout 300
}
descriptors_body() {
	fenced_vars
	command -v prlimit > /dev/null || atf_skip "no prlimit (util-linux)"
	{ fenced_conf; echo "http connections max 4096 per user 4096"; } \
	    > fenced.conf
	printf '#!/bin/sh\nexec prlimit --nofile=128:128 -- %s "$@"\n' \
	    "$BIN/fenced" > fenced.sh
	chmod 0755 fenced.sh
	FENCED_BIN=$PWD/fenced.sh fenced_start
	pressure_setup
	broker=$(fenced_pid broker)
	# 300 idle connections: far more than 128 descriptors.
	cat > hold.py <<EOF
import socket, sys, time
s = []
for i in range(300):
	try:
		s.append(socket.create_connection(("127.0.0.1", $(fenced_port)), 2))
	except OSError:
		pass
open("held", "w").write("%d\n" % len(s))
while True:
	try:
		open("release").close()
		break
	except OSError:
		time.sleep(0.1)
EOF
	python3 hold.py &
	holder=$!
	i=0
	while [ ! -s held ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	[ -s held ] || atf_fail "the connections were not made"
	i=0
	while ! grep -q "http: accept: Too many open files, pausing" fenced.log
	do
		i=$((i + 1))
		[ $i -lt 100 ] || atf_fail "the broker never ran out"
		sleep 0.1
	done
	# Out of descriptors, the broker waits rather than spins.
	t0=$(awk '{ print $14 + $15 }' /proc/$broker/stat)
	sleep 3
	t1=$(awk '{ print $14 + $15 }' /proc/$broker/stat)
	hz=$(getconf CLK_TCK)
	[ $((t1 - t0)) -lt $((hz * 3 / 4)) ] || \
	    atf_fail "the broker used $((t1 - t0)) ticks of 3 s while out of descriptors"
	pressure_alive
	# They close: it serves again.
	touch release
	wait $holder
	sleep 2
	pressure_same
	pressure_serves k2
	fenced_stop
}
descriptors_cleanup() {
	touch release 2>/dev/null
	fenced_cleanup
}

atf_test_case memory cleanup
memory_head() {
	atf_set descr "memory short in the daemon's own cgroup (its fences' allocations over its limit): the kernel kills a fence's process, not the daemon's; the request says what happened, nothing stored is lost, and the daemon serves again"
	atf_set require.user root
	atf_set timeout 300
}
memory_body() {
	fenced_vars
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		m=$(cg_bases)
		grep -qw memory "$m/cgroup.subtree_control" 2>/dev/null ||
		    atf_skip "no memory controller for a child of $m"
		lim=memory.max
	else
		m=$(cg_bases | grep '^/sys/fs/cgroup/memory')
		[ -n "$m" ] || atf_skip "no v1 memory controller"
		lim=memory.limit_in_bytes
	fi
	cg="$m/fenced-pressure.$$"
	mkdir "$cg" || atf_fail "mkdir $cg"
	echo "$cg" > cg.path
	echo $((224 << 20)) > "$cg/$lim" || atf_fail "set $lim"
	printf '#!/bin/sh\necho $$ > %s/cgroup.procs || exit 1\nexec %s "$@"\n' \
	    "$cg" "$BIN/fenced" > fenced.sh
	chmod 0755 fenced.sh
	FENCED_BIN=$PWD/fenced.sh fenced_start
	pressure_setup
	# Two fences, each allowed 192M, ask for 150M each: together over
	# the daemon's 224M.
	for k in h1 h2; do
		atf_check -o ignore $CTL boot $k memory 201326592
	done
	pressure_save
	hog='import time; b = bytearray(150 << 20); time.sleep(15)'
	$CTL exec h1 timeout 30000 -- python3 -c "$hog" > h1.out 2>&1 &
	p1=$!
	sleep 2
	$CTL exec h2 timeout 30000 -- python3 -c "$hog" > h2.out 2>&1 &
	p2=$!
	wait $p1
	r1=$?
	wait $p2
	r2=$?
	# One was killed, and its answer says so (fencectl: 128 + 9); the
	# daemon is whole.
	[ $r1 -eq 137 ] || [ $r2 -eq 137 ] || \
	    atf_fail "no hog was killed (exit $r1 and $r2): no pressure"
	pressure_alive
	for k in h1 h2; do
		$CTL stop $k > /dev/null 2>&1
	done
	pressure_same
	pressure_serves k2
	fenced_stop
}
memory_cleanup() {
	fenced_cleanup
	cg=$(cat cg.path 2>/dev/null)
	[ -n "$cg" ] && rmdir "$cg" 2>/dev/null
	true
}

atf_init_test_cases() {
	atf_add_test_case state_full
	atf_add_test_case descriptors
	atf_add_test_case memory
}
