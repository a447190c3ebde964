#! /usr/bin/atf-sh
# Terminals and a background process's live stdin (docs/interactive.md,
# "Terminals", "Background processes"): the fence's own devpts, a
# command on a pseudo-terminal through fencectl term (driven by
# t_pty.py, since fencectl term needs a terminal of its own), resize,
# detach and re-attach with the replay, the bounds, the kill at stop,
# a flood nobody reads, a second user, and stdin written while a
# process runs.

. "$(atf_get_srcdir)/lib.subr"

# Start a daemon and boot fence $1 at tier $2 (L1.5 if none).  $PTY
# SCRIPT LOG -- ARGV... runs ARGV on a pty of its own, driven by SCRIPT
# (regress/t_pty.py), its status line on stdout.
# With TERM_BACKEND=vm (term_vm_test) the fence is a vm.
term_setup() {
	fenced_vars
	PTY="python3 $TOPDIR/regress/t_pty.py"
	if [ "${TERM_BACKEND:-}" = vm ]; then
		[ -x /usr/bin/qemu-system-x86_64 ] ||
		    atf_skip "QEMU is not installed (scripts/deps.sh installs it)"
		vm_available || atf_skip "no vm boot files in $IMAGES and \
$VMDIR (make vm-images builds them)"
		{ fenced_conf; vm_conf_lines; } > fenced.conf
		fenced_start
		atf_check -o ignore -e ignore $CTL -w 600 boot "$1" backend vm
		return
	fi
	fenced_start
	atf_check -o ignore -e ignore $CTL boot "$1" tier "${2:-L1.5}"
}

atf_test_case devpts cleanup
devpts_head() {
	atf_set descr "each fence has a devpts of its own at /dev/pts, /dev/ptmx its ptmx; a pty opens and its ioctls work at L1.5 and L2; nothing of the host's /dev/pts is there"
	atf_set require.user root
	atf_set timeout 180
}
devpts_body() {
	fenced_vars
	fenced_start
	# One of the host's own, so that there is something not to see.
	python3 -c 'import os,time; m,s=os.openpty(); print(os.ttyname(s), flush=True); time.sleep(120)' > host.pty 2> host.err &
	echo $! > host.pid
	wait_until 30 test -s host.pty || atf_fail "no host pty: $(cat host.err)"
	hostn=$(sed 's,.*/,,' host.pty)
	# runsc: one fence, gVisor's own /dev (term_runsc_test), whose
	# /dev/ptmx Debian 12's runsc cannot stat (docs/runsc.md).
	tiers="L1.5 L2"
	[ "${FENCED_BACKEND:-}" != runsc ] || tiers=L1.5
	for tier in $tiers; do
		k=p$(echo $tier | tr -d .L)
		atf_check -o ignore -e ignore $CTL boot $k tier $tier
		atf_check -o save:mnt.out -e ignore $CTL exec $k -- \
		    sh -c 'stat -f -c "type %T" /dev/pts; grep " /dev/pts " /proc/self/mountinfo; ls -l /dev/ptmx; true'
		grep -q '^type devpts' mnt.out || atf_fail "$tier: /dev/pts: \
		    $(cat mnt.out)"
		if [ "${FENCED_BACKEND:-}" != runsc ]; then
			grep -q 'devpts.*ptmxmode=666' mnt.out || atf_fail \
			    "$tier: no devpts of its own: $(cat mnt.out)"
			grep -q '/dev/ptmx -> pts/ptmx' mnt.out || atf_fail \
			    "$tier: /dev/ptmx: $(cat mnt.out)"
		fi
		# A pty opens; TIOCGPTN, TIOCSPTLCK (openpty), TIOCSWINSZ,
		# TIOCGWINSZ; setsid and TIOCSCTTY in a child.
		cat > pty.py <<'PY'
import fcntl, os, struct, termios
m, s = os.openpty()
n = os.ttyname(s)
fcntl.ioctl(s, termios.TIOCSWINSZ, struct.pack('HHHH', 33, 77, 0, 0))
r, c = struct.unpack('HHHH', fcntl.ioctl(m, termios.TIOCGWINSZ, b'\0' * 8))[:2]
pid = os.fork()
if pid == 0:
    os.setsid()
    fcntl.ioctl(s, termios.TIOCSCTTY, 0)
    os.write(s, b'ctty ok\n')
    os._exit(0)
os.waitpid(pid, 0)
print(n, r, c, os.read(m, 100).decode().strip(), sorted(os.listdir('/dev/pts')))
PY
		atf_check -o save:pty.out -e ignore $CTL exec $k -- python3 -c "$(cat pty.py)"
		grep -Eq "^/dev/pts/0 33 77 ctty ok \\['0', 'ptmx'\\]" pty.out ||
		    atf_fail "$tier: pty: $(cat pty.out)"
		# The host's pty is not there, by number or at all.
		atf_check -s not-exit:0 -o ignore -e ignore $CTL exec $k -- \
		    test -e /dev/pts/$hostn
	done
	kill $(cat host.pid)
}
devpts_cleanup() {
	kill $(cat host.pid 2>/dev/null) 2>/dev/null
	fenced_cleanup
}


atf_test_case basic cleanup
basic_head() {
	atf_set descr "fencectl term: type a command and see its output, TERM, the controlling terminal, the size and a resize (stty size), the program's exit status is fencectl's"
	atf_set require.user root
	atf_set timeout ${TERM_TIMEOUT:-120}
}
basic_body() {
	term_setup t
	cat > s1 <<'S'
expect \$ $
send echo "x$((6*7))x $TERM"; tty; stty size\r
expect x42x xterm-256color
expect /dev/pts/[0-9]+
expect 24 80
resize 30 100
sleep 1
send stty size\r
expect 30 100
send exit 7\r
wait
S
	atf_check -o match:'^status 7$' $PTY s1 log1 -- $CTL term t -- sh -i
	# The default program: the login shell, or /bin/sh.
	cat > s2 <<'S'
expect [$#] $
send echo "pid1-$$-$0"\r
expect pid1-[0-9]+--
send exit\r
wait
S
	atf_check -o match:'^status 0$' $PTY s2 log2 -- $CTL term t
	# A program killed by a signal: 128 + its number.
	cat > s3 <<'S'
expect ready
wait
S
	atf_check -o match:'^status 137$' $PTY s3 log3 -- $CTL term t -- \
	    sh -c 'echo ready; kill -9 $$'
}
basic_cleanup() { fenced_cleanup; }

atf_test_case reattach cleanup
reattach_head() {
	atf_set descr "fencectl killed: the terminal runs on, listed detached; -a ID attaches again and replays what it wrote; a new attachment ends the old one; -k kills it"
	atf_set require.user root
	atf_set timeout 120
}
reattach_body() {
	term_setup t
	cat > s1 <<'S'
expect \$ $
send echo "mark-$((40+2))"\r
expect mark-42
signal TERM
wait
S
	atf_check -o match:'^status 143$' $PTY s1 log1 -- $CTL term t -- sh -i
	# Detached once the broker sees the client gone (at the latest
	# when the terminal next writes); running either way.
	atf_check -o match:'^1 (at|de)tached 80x24 sh -i$' $CTL term t -l
	cat > s2 <<'S'
expect mark-42
send echo "again-$((1+1))"\r
expect again-2
wait
S
	# Attached twice: the second attachment ends the first.
	$PTY s2 log2 -- $CTL term t -a 1 > out2 &
	echo $! > first.pid
	wait_until 20 grep -qs again-2 log2 || atf_fail "no replay: $(cat log2)"
	cat > s3 <<'S'
expect again-2
send exit 5\r
wait
S
	atf_check -o match:'^status 5$' $PTY s3 log3 -- $CTL term t -a 1
	wait $(cat first.pid)
	grep -q 'attached elsewhere' log2 || atf_fail "first attachment: $(cat log2)"
	grep -q '^status 1$' out2 || atf_fail "first attachment: $(cat out2)"
	atf_check -o match:'^1 ended 80x24 sh -i exit 5$' $CTL term t -l
	# Forgotten by a kill once ended; a running one killed.
	atf_check -o match:'^1 ended' $CTL term t -k 1
	atf_check -o empty $CTL term t -l
	atf_check -s exit:1 -e match:'terminal-not-found' $CTL term t -a 1
}
reattach_cleanup() { fenced_cleanup; }

atf_test_case bounds cleanup
bounds_head() {
	atf_set descr "at most 8 terminals per fence (the 9th refused with too-many-terminals), sizes 1..1000, an ended one makes room; the idle time kills an unattached one"
	atf_set require.user root
	atf_set timeout 180
}
bounds_body() {
	term_setup t
	i=0
	while [ $i -lt 8 ]; do
		$CTL term t -- sleep 600 < /dev/null > /dev/null 2>&1 &
		echo $! >> ctl.pids
		i=$((i + 1))
	done
	wait_until 30 sh -c "[ \$($CTL term t -l | wc -l) -eq 8 ]" ||
	    atf_fail "not 8 terminals: $($CTL term t -l)"
	atf_check -s exit:1 -e match:'too-many-terminals' $CTL term t -- true
	# The fencectls go; the terminals run on.
	kill $(cat ctl.pids)
	# Once fenced has seen each connection close.
	wait_until 20 sh -c "[ \$($CTL term t -l | grep -c detached) -eq 8 ]" ||
	    atf_fail "not 8 detached: $($CTL term t -l)"
	# A kill: it ends (killed), then a kill forgets it.
	atf_check -o match:'^3 ' $CTL term t -k 3
	wait_until 20 sh -c "$CTL term t -l | grep -q '^3 ended.*signal 9 (killed)'" ||
	    atf_fail "not killed: $($CTL term t -l)"
	atf_check -o match:'^3 ended' $CTL term t -k 3
	atf_check -s exit:1 -e match:'terminal-not-found' $CTL term t -k 3
	# Room for one again, and an ended one makes room by itself.
	atf_check -o match:'^status 0$' -x "printf 'wait\n' > s; \
	    python3 $TOPDIR/regress/t_pty.py s log -- $CTL term t -- true"
	# Idle: unattached for 1 s, killed.
	cat > s1 <<'S'
expect here
signal TERM
wait
S
	atf_check -o ignore $PTY s1 log1 -- $CTL term t -i 1 -- sh -c 'echo here; sleep 600'
	wait_until 20 sh -c "$CTL term t -l | grep -q 'ended.*signal 9 (idle)'" ||
	    atf_fail "not killed idle: $($CTL term t -l)"
}
bounds_cleanup() {
	kill $(cat ctl.pids 2>/dev/null) 2>/dev/null
	fenced_cleanup
}

# The fence's uid, and the host pid of its agent (its pid 1).
fence_uid() {
	$CTL exec "$1" -- id -u
}
agent_pid() {
	ps -u "$1" -o pid=,args= --sort=start_time | grep fence-agent |
	    head -1 | awk '{ print $1 }'
}
rss_of() {
	ps -o rss= -p "$1" | tr -d ' '
}

atf_test_case user_bound cleanup
user_bound_head() {
	atf_set descr "a user holds at most 16 terminals over all their fences: with 8 in each of two, a third fence's is refused with too-many-terminals; killing one makes room"
	atf_set require.user root
	atf_set timeout 240
}
user_bound_body() {
	term_setup a
	atf_check -o ignore -e ignore $CTL boot b tier L1.5
	atf_check -o ignore -e ignore $CTL boot c tier L1.5
	for k in a b; do
		i=0
		while [ $i -lt 8 ]; do
			$CTL term $k -- sleep 600 < /dev/null > /dev/null 2>&1 &
			echo $! >> ctl.pids
			i=$((i + 1))
		done
		wait_until 60 sh -c "[ \$($CTL term $k -l | wc -l) -eq 8 ]" ||
		    atf_fail "not 8 terminals in $k: $($CTL term $k -l)"
	done
	atf_check -s exit:1 -e match:'too-many-terminals.*16' \
	    $CTL term c -- true
	atf_check -o ignore $CTL term a -k 1
	wait_until 20 sh -c "$CTL term a -l | grep -q '^1 ended'" ||
	    atf_fail "not killed: $($CTL term a -l)"
	atf_check -o ignore $CTL term a -k 1
	atf_check -o match:'^status 0$' -x "printf 'wait\n' > s; \
	    python3 $TOPDIR/regress/t_pty.py s log -- $CTL term c -- true"
}
user_bound_cleanup() {
	kill $(cat ctl.pids 2>/dev/null) 2>/dev/null
	fenced_cleanup
}

atf_test_case stop cleanup
stop_head() {
	atf_set descr "a fence's stop kills every terminal's processes, attached or not, those that left their session too: nothing of the fence's uid is left on the host"
	atf_set require.user root
	atf_set timeout ${TERM_TIMEOUT:-120}
}
stop_body() {
	term_setup t
	uid=$(fence_uid t)
	in_fence_uids "$uid" || atf_fail "fence uid $uid"
	$CTL term t -- sh -c 'setsid sleep 600 & sleep 600 & echo up; sleep 600' \
	    < /dev/null > t1.out 2>&1 &
	echo $! > ctl.pid
	$CTL term t -- sh -c 'trap "" HUP TERM; sleep 600' < /dev/null \
	    > t2.out 2>&1 &
	echo $! >> ctl.pid
	wait_until 20 grep -q up t1.out || atf_fail "no terminal: $(cat t1.out)"
	# Counted inside: a runsc fence's processes are gVisor's, not the
	# host's.
	wait_until 20 sh -c "[ \$($CTL exec t -- ps -eo args | grep -c '^sleep 600') -ge 4 ]" ||
	    atf_fail "not running: $($CTL exec t -- ps -eo pid,args)"
	atf_check -o ignore -e ignore $CTL stop t
	wait_until 20 sh -c "! ps -u $uid -o pid= | grep -q ." ||
	    atf_fail "left on the host: $(ps -u $uid -o pid,args)"
	# Each attached fencectl saw its terminal end.
	for p in $(cat ctl.pid); do
		wait_until 20 sh -c "! kill -0 $p 2>/dev/null" ||
		    atf_fail "fencectl $p still attached"
	done
}
stop_cleanup() {
	kill $(cat ctl.pid 2>/dev/null) 2>/dev/null
	fenced_cleanup
}

atf_test_case flood cleanup
flood_head() {
	atf_set descr "a terminal writing for ever, to a client that never reads and to nobody, and one that never reads what a client writes for ever: the agent's and the broker's memory stay bounded (measured), the program or the client is slowed, not the daemon; other requests are answered meanwhile"
	atf_set require.user root
	atf_set timeout 180
}
flood_body() {
	term_setup t
	uid=$(fence_uid t)
	# A client that never reads: its stdout a pipe nobody reads.
	$CTL term t -- yes flood-never-read < /dev/null | sleep 600 &
	echo $! > reader.pid
	# A program that never reads, fed for ever.
	yes typed-for-ever | $CTL term t -- sleep 600 > /dev/null 2>&1 &
	echo $! >> reader.pid
	# One nobody is attached to.
	$CTL term t -- yes flood-nobody < /dev/null > /dev/null 2>&1 &
	p=$!
	sleep 2
	kill $p
	wait_until 20 sh -c "$CTL term t -l | grep -q 'detached 80x24 yes flood-nobody'" ||
	    atf_fail "not detached: $($CTL term t -l)"
	broker=$($CTL show stats | awk '$1 == "broker" && $2 == "pid" { print $3 }')
	agent=$(agent_pid "$uid")
	[ -n "$broker" ] && [ -n "$agent" ] || atf_fail "no pids"
	sleep 3
	a1=$(rss_of "$agent") b1=$(rss_of "$broker")
	i=0
	while [ $i -lt 5 ]; do
		# The daemon answers meanwhile.
		atf_check -o inline:"ok\n" $CTL exec t -- echo ok
		sleep 1
		i=$((i + 1))
	done
	a2=$(rss_of "$agent") b2=$(rss_of "$broker")
	echo "agent rss ${a1} -> ${a2} KiB, broker rss ${b1} -> ${b2} KiB"
	[ $((a2 - a1)) -lt 1024 ] || atf_fail "agent grew: $a1 -> $a2 KiB"
	[ $((b2 - b1)) -lt 1024 ] || atf_fail "broker grew: $b1 -> $b2 KiB"
	# All still run; the one nobody reads is held at its window.
	atf_check -o match:'attached 80x24 yes flood-never-read' \
	    -o match:'attached 80x24 sleep 600' \
	    -o match:'detached 80x24 yes flood-nobody' $CTL term t -l
}
flood_cleanup() {
	kill $(cat reader.pid 2>/dev/null) 2>/dev/null
	fenced_cleanup
}

atf_test_case two_users cleanup
two_users_head() {
	atf_set descr "a second local user can neither list, attach to, resize nor kill the first user's terminal, nor write to their process's stdin or follow its output: each as for a fence that does not exist"
	atf_set require.user root
	atf_set timeout 120
}
two_users_body() {
	fenced_vars
	users_add 2 ftm
	fenced_run_socket
	h=$(fenced_homes)
	fenced_conf | sed -e "s|^homes .*|homes \"$h/%u\"|" > fenced.conf
	fenced_start
	ua=$(sed -n 1p users.txt)
	ub=$(sed -n 2p users.txt)
	sock=$(cat run.sock)
	A="$(as_user "$ua") $BIN/fencectl -s $sock"
	B="$(as_user "$ub") $BIN/fencectl -s $sock"
	atf_check -o ignore -e ignore $A boot ka tier L1.5
	$A term ka -- sleep 600 < /dev/null > /dev/null 2>&1 &
	echo $! > ctl.pid
	wait_until 20 sh -c "$A term ka -l | grep -q '^1 '" ||
	    atf_fail "no terminal"
	atf_check -o match:'^1$' -e ignore $A spawn ka stdin-open -- cat
	for how in "-l" "-a 1" "-k 1"; do
		atf_check -s exit:1 -o empty -e match:'not-found' \
		    $B term "$ua/ka" $how
	done
	atf_check -s exit:1 -o empty -e match:'not-found' \
	    $B follow "$ua/ka" 1
	atf_check -s exit:1 -e match:'not-found' -x \
	    "echo hostile | $B input $ua/ka 1 -c"
	# The owner's are untouched.
	atf_check -o match:'^1 attached' $A term ka -l
	atf_check -o match:'running' $A show processes ka
}
two_users_cleanup() {
	kill $(cat ctl.pid 2>/dev/null) 2>/dev/null
	fenced_cleanup
}

atf_test_case stdin cleanup
stdin_head() {
	atf_set descr "a background process's stdin kept open: bytes written while it runs (more than 64 KiB, taken as it reads: input-busy is waited out) and closed; wc -c sees exactly them; cat's output arrives live, while it runs, through fencectl follow; stdin not kept open is refused"
	atf_set require.user root
	atf_set timeout ${TERM_TIMEOUT:-120}
}
stdin_body() {
	term_setup t
	atf_check -o save:sp.out -e ignore $CTL spawn t stdin-open -- wc -c
	id=$(awk 'NR == 1 { print $1 }' sp.out)
	head -c 200000 /dev/urandom > data
	atf_check $CTL input t "$id" -c < data
	wait_until 20 sh -c "$CTL show process t $id 2>&1 | grep -q exited" ||
	    atf_fail "wc did not end: $($CTL show process t $id)"
	atf_check -o match:'^200000$' -e ignore -x "$CTL show process t $id | grep -E '^[0-9]+$'"
	# cat: its output live, while it still runs.
	atf_check -o save:sp2.out -e ignore $CTL spawn t stdin-open -- cat
	id2=$(awk 'NR == 1 { print $1 }' sp2.out)
	$CTL follow t "$id2" > follow.out &
	echo $! > follow.pid
	echo "first-line" | $CTL input t "$id2"
	wait_until 20 grep -q first-line follow.out ||
	    atf_fail "not live: $(cat follow.out)"
	atf_check -o ignore -e match:running $CTL show process t "$id2"
	echo "last-line" | $CTL input t "$id2" -c
	wait_until 20 sh -c "! kill -0 $(cat follow.pid) 2>/dev/null" ||
	    atf_fail "follow did not end"
	atf_check -o inline:"first-line\nlast-line\n" cat follow.out
	# Closed: no more; never kept open: refused.
	atf_check -s exit:1 -e match:'input-closed|process-exited' -x \
	    "echo more | $CTL input t $id2"
	atf_check -o save:sp3.out -e ignore $CTL spawn t -- sleep 30
	id3=$(awk 'NR == 1 { print $1 }' sp3.out)
	atf_check -s exit:1 -e match:'input-closed' -x \
	    "echo more | $CTL input t $id3"
	# Over HTTP: stdinOpen starts one so; an exec has no such field.
	[ "${TERM_BACKEND:-}" = vm ] && return
	T=$($CTL token 2>/dev/null | tail -n 1)
	call "$T" POST /api/environments/t/processes \
	    '{"argv":["cat"],"stdinOpen":true}'
	expect 201 '"state":"running"'
	id4=$(field id)
	atf_check -x "printf 'over-http' | $CTL input t $id4 -c"
	wait_until 20 sh -c "$CTL show process t $id4 2>&1 | grep -q exited" ||
	    atf_fail "cat did not end"
	atf_check -o inline:over-http -e ignore $CTL show process t "$id4"
	call "$T" POST /api/environments/t/exec \
	    '{"argv":["cat"],"stdinOpen":true}'
	expect 400 '"error":"unknown-field"'
	call "$T" POST /api/environments/t/processes \
	    '{"argv":["cat"],"stdinOpen":1}'
	expect 400 '"error":"bad-type"'
}
stdin_cleanup() {
	kill $(cat follow.pid 2>/dev/null) 2>/dev/null
	fenced_cleanup
}

atf_init_test_cases() {
	atf_add_test_case devpts
	atf_add_test_case basic
	atf_add_test_case reattach
	atf_add_test_case bounds
	atf_add_test_case user_bound
	atf_add_test_case stop
	atf_add_test_case flood
	atf_add_test_case two_users
	atf_add_test_case stdin
}
