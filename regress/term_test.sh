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
term_setup() {
	fenced_vars
	PTY="python3 $TOPDIR/regress/t_pty.py"
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
	python3 -c 'import os,time; m,s=os.openpty(); print(os.ttyname(s)); time.sleep(60)' > host.pty &
	echo $! > host.pid
	wait_until 10 test -s host.pty || atf_fail "no host pty"
	hostn=$(sed 's,.*/,,' host.pty)
	for tier in L1.5 L2; do
		k=p$(echo $tier | tr -d .L)
		atf_check -o ignore -e ignore $CTL boot $k tier $tier
		atf_check -o save:mnt.out -e ignore $CTL exec $k -- \
		    sh -c 'grep " /dev/pts " /proc/self/mountinfo; ls -l /dev/ptmx'
		grep -q 'devpts.*ptmxmode=666' mnt.out || atf_fail "$tier: \
		    no devpts of its own: $(cat mnt.out)"
		grep -q '/dev/ptmx -> pts/ptmx' mnt.out || atf_fail \
		    "$tier: /dev/ptmx: $(cat mnt.out)"
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
	atf_set timeout 120
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
	atf_check -o match:'^8$' sh -c "$CTL term t -l | grep -c detached"
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

atf_init_test_cases() {
	atf_add_test_case devpts
	atf_add_test_case basic
	atf_add_test_case reattach
	atf_add_test_case bounds
}
