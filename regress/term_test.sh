#! /usr/bin/atf-sh
# Terminals and a background process's live stdin (docs/interactive.md,
# "Terminals", "Background processes"): the fence's own devpts, a
# command on a pseudo-terminal through fencectl term (driven by
# t_pty.py, since fencectl term needs a terminal of its own), resize,
# detach and re-attach with the replay, the bounds, the kill at stop,
# a flood nobody reads, a second user, and stdin written while a
# process runs.

. "$(atf_get_srcdir)/lib.subr"

# Start a daemon and boot fence $1 at tier $2 (L1.5 if none).
term_setup() {
	fenced_vars
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

atf_init_test_cases() {
	atf_add_test_case devpts
}
