#! /usr/bin/atf-sh
# Denials (issue 33, docs/denials.md): what a command was refused comes
# back with its result, counted, attributed to the command whose
# processes met it and to no other; observing them never lets a refused
# call through, never hangs a pipeline, and the listener is nowhere in
# the fence.

. "$(atf_get_srcdir)/lib.subr"

# A program of refused calls in the fence's home, run as python3:
# "NAME ERRNO" for each call.
calls_py() {
	cat <<'PY'
import ctypes, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def sc(*a):
    r = libc.syscall(*[ctypes.c_long(x) for x in a])
    return ctypes.get_errno() if r == -1 else 0
out = []
for i in range(3):
    out.append("unshare %d" % sc(272, 0x10000000))
for i in range(2):
    out.append("keyctl %d" % sc(250, 1, 0, 0))
out.append("io_uring_setup %d" % sc(425, 1, 0))
for i in range(4):
    try:
        socket.socket(38, 5)
        out.append("alg 0")
    except OSError as e:
        out.append("alg %d" % e.errno)
out.append("clone3 %d" % sc(435, 0, 0))
print(" ".join(out))
PY
}

# The host folder of root's fence KEY's home.
home_of() {
	$CTL show environment "$1" | sed -n 's/^home: *//p'
}

# put KEY: calls.py into root's fence KEY's home, owned by the fence.
put_calls() {
	_h=$(home_of "$1")
	[ -d "$_h" ] || atf_fail "no home of $1"
	calls_py > "$_h/calls.py"
	chown "$(stat -c %u:%g "$_h")" "$_h/calls.py"
}

# put_py KEY NAME: stdin as NAME in root's fence KEY's home, readable.
put_py() {
	cat > "$(home_of "$1")/$2"
	chmod 644 "$(home_of "$1")/$2"
}

CALLS_OUT="unshare 1 unshare 1 unshare 1 keyctl 1 keyctl 1 io_uring_setup 1 alg 1 alg 1 alg 1 alg 1 clone3 38"

# The denial lines fencectl exec printed (in err.out), sorted.
denied() {
	grep '^fenced: denied: ' err.out | sort
}

calls_expected() {
	cat <<'EOF' | sort
fenced: denied: seccomp: clone3() x1 - none needed: libc falls back to clone()
fenced: denied: seccomp: io_uring_setup() x1 - tier L1 does not refuse it
fenced: denied: seccomp: keyctl(operation 1) x2 - tier L1 does not refuse it
fenced: denied: seccomp: socket(AF_ALG, SOCK_SEQPACKET) x4 - tier L1 does not refuse it
fenced: denied: seccomp: unshare(CLONE_NEWUSER) x3 - tier L1 does not refuse it
EOF
}

atf_test_case seccomp_counts cleanup
seccomp_counts_head() {
	atf_set descr "L1.5: unshare, keyctl, io_uring_setup, socket(AF_ALG) and clone3 refused with their errnos as before, each a denial of the exec with its count and remedy, in fencectl's stderr and the HTTP answer (plain and streamed); a command without refused calls has none; \`observe denials no' keeps the errnos and says the denials are not observed"
	atf_set require.user root
	atf_set require.progs python3 curl
	atf_set timeout 120
}
seccomp_counts_body() {
	fenced_vars
	fenced_start
	atf_check -o ignore $CTL boot a tier L1.5
	# The probe, refused on purpose while it measures just after the
	# boot, is no one's denial outside a command.
	$CTL show environment a > env.out
	grep '^denied:' env.out && atf_fail "the probe's denials outside"
	put_calls a
	# Nor are a running command's: they are its own once it ends.
	$CTL exec a -- sh -c 'python3 calls.py; touch ran; sleep 3' \
	    > out.out 2> err.out &
	wait_until 20 test -e "$(home_of a)/ran" || atf_fail "calls.py did \
	    not run: $(cat err.out)"
	$CTL show environment a > env.out
	grep '^denied:' env.out && atf_fail "a running command's denials \
	    counted outside it"
	wait $! || atf_fail "exec: $(cat err.out)"
	atf_check -o inline:"$CALLS_OUT\n" cat out.out
	denied > got.out
	calls_expected > want.out
	atf_check -o file:want.out cat got.out
	$CTL exec a -- python3 calls.py > out.out 2> err.out ||
	    atf_fail "exec: $(cat err.out)"
	atf_check -o inline:"$CALLS_OUT\n" cat out.out
	denied > got.out
	calls_expected > want.out
	atf_check -o file:want.out cat got.out
	# Counted once, alike in the audit log and the metrics; the probe's
	# own refusals in neither.
	wait_until 5 grep -q '"kind":"denial",.*"layer":"seccomp","what":"unshare(CLONE_NEWUSER)","count":3' \
	    state/audit.log || atf_fail "no denial line: $(cat state/audit.log)"
	python3 - state/audit.log > audited.out <<'PY' || atf_fail "audit log"
import json, sys
n = 0
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o["kind"] == "denial":
        assert (o["fence"], o["uid"], o["via"], o["outcome"]) == \
            ("a", 0, "control", "denied"), o
        n += o["count"]
assert n > 3, n
print(n)
PY
	atf_check -o match:"^fenced_denials_total\{layer=\"seccomp\"\} $(cat audited.out)\$" \
	    $CTL show metrics
	# Nothing refused, nothing said.
	atf_check -o inline:"ok\n" -e empty $CTL exec a -- echo ok
	# A denial is the exec's alone: the next exec starts clean.
	atf_check -o inline:"ok\n" -e empty $CTL exec a -- echo ok

	TOKEN=$($CTL token t 2>/dev/null)
	call "$TOKEN" POST /api/environments/a/exec \
	    '{"command":"python3 calls.py"}'
	expect 200 '"denials":\[' \
	    '\{"layer":"seccomp","what":"unshare\(CLONE_NEWUSER\)","count":3,"remedy":"tier L1 does not refuse it"\}' \
	    '"what":"socket\(AF_ALG, SOCK_SEQPACKET\)","count":4' \
	    '"what":"clone3\(\)","count":1'
	call "$TOKEN" POST /api/environments/a/exec \
	    '{"command":"python3 calls.py","stream":true}'
	expect 200 '^event: result' '"what":"keyctl\(operation 1\)","count":2'
	call "$TOKEN" POST /api/environments/a/exec '{"command":"true"}'
	expect 200
	grep -q denials body.out && atf_fail "denials without any: $(cat \
	    body.out)"

	# Not observed: the same errnos, no denials, and a note of why.
	echo "observe denials no" >> fenced.conf
	atf_check -o ignore $CTL reload
	atf_check -o ignore $CTL boot b tier L1.5
	put_calls b
	atf_check -o inline:"$CALLS_OUT\n" -e empty \
	    $CTL exec b -- python3 calls.py
	call "$TOKEN" POST /api/environments/b/exec '{"command":"true"}'
	expect 200 '"denialsNote":"system calls refused by seccomp are not observed: observe denials no"'
	# A fence booted before the reload still observes.
	$CTL exec a -- python3 calls.py > out.out 2> err.out
	denied > got.out
	atf_check -o file:want.out cat got.out
}
seccomp_counts_cleanup() { fenced_cleanup; }

atf_test_case pipeline_kill cleanup
pipeline_kill_head() {
	atf_set descr "L1.5: a pipeline whose middle calls a refused call for every line keeps flowing and ends when its reader does; a process looping on refused calls dies of SIGKILL at once; a loop of 5000 refused calls is one line, counted"
	atf_set require.user root
	atf_set require.progs python3
	atf_set timeout 120
}
pipeline_kill_body() {
	fenced_vars
	fenced_start
	atf_check -o ignore $CTL boot p tier L1.5
	put_py p loop.py <<'PY'
import ctypes, sys
libc = ctypes.CDLL(None)
if sys.argv[1] == "lines":
    for line in sys.stdin:
        libc.syscall(272, 0x10000000)
        sys.stdout.write(line)
        sys.stdout.flush()
else:
    n = int(sys.argv[1])
    while n != 0:
        libc.syscall(250, 1, 0, 0)
        n -= 1
PY
	atf_check -o inline:"y\ny\ny\n" -e ignore $CTL exec p timeout 20000 -- \
	    sh -c 'yes | python3 loop.py lines | head -3'
	# Killed while it keeps calling: the wait ends, 137.
	atf_check -o inline:"137\n" -e ignore $CTL exec p timeout 20000 -- \
	    sh -c 'python3 loop.py -1 & p=$!; sleep 0.5; kill -9 $p; wait $p; echo $?'
	# Stopped and continued in the middle: still refused, still ends.
	atf_check -o inline:"done\n" -e ignore $CTL exec p timeout 20000 -- \
	    sh -c 'python3 loop.py 8000 & p=$!; sleep 0.2; kill -STOP $p;
	        sleep 0.2; kill -CONT $p; wait $p; echo done'
	$CTL exec p timeout 30000 -- python3 loop.py 5000 > out.out \
	    2> err.out || atf_fail "exec: $(cat err.out)"
	atf_check -o inline:"fenced: denied: seccomp: keyctl(operation 1) x5000 - tier L1 does not refuse it\n" \
	    cat err.out
}
pipeline_kill_cleanup() { fenced_cleanup; }

atf_test_case concurrent cleanup
concurrent_head() {
	atf_set descr "two execs at once in one fence, each calling its own refused call in a child of a child: each answer has its own denial and never the other's; a background process's denial is in neither, and in its own state (fencectl show process) alone"
	atf_set require.user root
	atf_set require.progs python3
	atf_set timeout 120
}
concurrent_body() {
	fenced_vars
	fenced_start
	atf_check -o ignore $CTL boot c tier L1.5
	put_py c one.py <<'PY'
import ctypes, sys, time
libc = ctypes.CDLL(None)
nr, arg = int(sys.argv[1]), int(sys.argv[2], 0)
for i in range(40):
    libc.syscall(nr, arg, 0, 0)
    time.sleep(0.01)
PY
	bg=$($CTL spawn c -- python3 one.py 250 7) || atf_fail "spawn"
	$CTL exec c -- sh -c 'sh -c "python3 one.py 272 0x20000"' \
	    > a.out 2> a.err &
	apid=$!
	$CTL exec c -- sh -c 'sh -c "python3 one.py 250 1"' > b.out 2> b.err
	wait $apid
	atf_check -o inline:"fenced: denied: seccomp: unshare(CLONE_NEWNS) x40 - tier L1 does not refuse it\n" \
	    cat a.err
	atf_check -o inline:"fenced: denied: seccomp: keyctl(operation 1) x40 - tier L1 does not refuse it\n" \
	    cat b.err
	wait_until 30 sh -c "$CTL show process c $bg 2>&1 | grep -q exited" ||
	    atf_fail "the background process did not end"
	atf_check -o empty -e save:bg.err $CTL show process c "$bg"
	atf_check -o inline:"fenced: denied: seccomp: keyctl(operation 7) x40 - tier L1 does not refuse it\n" \
	    grep '^fenced: denied' bg.err
	# Asked again: the same, not counted twice.
	atf_check -o empty -e save:bg2.err $CTL show process c "$bg"
	atf_check -o file:bg.err cat bg2.err
}
concurrent_cleanup() { fenced_cleanup; }

atf_test_case listener_hidden cleanup
listener_hidden_head() {
	atf_set descr "L1.5 and L2, cold and pooled: no descriptor of any process in the fence is a seccomp listener (fd links, fdinfo), pidfd_getfd on the agent is refused (and a denial), and refusals are observed in a pooled fence as in a cold one"
	atf_set require.user root
	atf_set require.progs python3
	atf_set timeout 180
}
listener_hidden_body() {
	fenced_vars
	fenced_conf > fenced.conf
	echo "pool L1.5 1" >> fenced.conf
	fenced_start
	wait_until 60 pool_full L1.5:1 || atf_fail "the pool did not fill"
	atf_check -o match:"^pooled: *yes" $CTL boot w tier L1.5
	atf_check -o ignore $CTL boot x tier L2 cold
	for k in w x; do
		put_calls $k
		$CTL exec $k -- sh -c 'for p in /proc/[0-9]*; do
		    ls -l $p/fd/ 2>/dev/null; cat $p/fdinfo/* 2>/dev/null
		    done' > fds.out 2>&1
		grep -i seccomp fds.out && atf_fail "a listener in $k"
		grep -q "pipe:\|socket:" fds.out ||
		    atf_fail "$k: no descriptor seen at all: $(cat fds.out)"
		$CTL exec $k -- python3 -c '
import ctypes
l = ctypes.CDLL(None, use_errno=True)
pfd = l.syscall(434, 1, 0)
r = l.syscall(438, pfd, 3, 0)
print(r, ctypes.get_errno())' > out.out 2> err.out
		atf_check -o inline:"-1 1\n" cat out.out
		atf_check -o match:"^fenced: denied: seccomp: pidfd_getfd\(\) x1 - tier L1 does not refuse it$" \
		    cat err.out
		$CTL exec $k -- python3 calls.py > out.out 2> err.out
		atf_check -o inline:"$CALLS_OUT\n" cat out.out
		denied > got.out
		calls_expected > want.out
		atf_check -o file:want.out cat got.out
	done
}
listener_hidden_cleanup() { fenced_cleanup; }

atf_test_case other_user cleanup
other_user_head() {
	atf_set descr "a second local user's fence of the same name never shows the first user's denials, and the first user's never shows the second's"
	atf_set require.user root
	atf_set require.progs python3
	atf_set timeout 120
}
other_user_body() {
	fenced_vars
	users_add 1 fdn
	fenced_run_socket
	h=$(fenced_homes)
	fenced_conf | sed -e "s|^homes .*|homes \"$h/%u\"|" > fenced.conf
	fenced_start
	u=$(head -1 users.txt)
	U="$(as_user "$u") $BIN/fencectl -s $(cat run.sock)"
	atf_check -o ignore $CTL boot same tier L1.5
	atf_check -o ignore $U boot same tier L1.5
	put_calls same
	$CTL exec same -- python3 calls.py > out.out 2> err.out &
	rpid=$!
	$U exec same -- sh -c 'sleep 0.3; echo mine' \
	    > uo.out 2> ue.err
	wait $rpid
	atf_check -o inline:"mine\n" cat uo.out
	atf_check -o empty cat ue.err
	denied > got.out
	calls_expected > want.out
	atf_check -o file:want.out cat got.out
	$U exec same -- python3 -c '
import ctypes
ctypes.CDLL(None).syscall(272, 0x40000000)' > uo.out 2> ue.err
	atf_check -o match:"unshare\(CLONE_NEWNET\) x1" cat ue.err
	atf_check -o empty -e empty $CTL exec same -- true
}
other_user_cleanup() { fenced_cleanup; }

atf_test_case egress cleanup
egress_head() {
	atf_set descr "L2 with an egress list: a connection the proxy refuses is a denial of the exec that made it, its remedy the entry to add; the probe's own refused attempt at the boot is no command's; the next exec has none"
	atf_set require.user root
	atf_set require.progs curl
	atf_set timeout 120
}
egress_body() {
	fenced_vars
	fenced_start
	atf_check -o ignore $CTL boot e tier L2 egress "allowed.test:8080"
	$CTL exec e -- sh -c 'curl -sS -m 5 http://denied.test:81/;
	    curl -sS -m 5 http://denied.test:81/' > out.out 2> err.out
	atf_check -o inline:"not in this fence's egress list\nnot in this fence's egress list\n" \
	    cat out.out
	atf_check -o inline:"fenced: denied: egress: denied.test:81 (not-listed) x2 - add denied.test:81 to the fence's egress list\n" \
	    cat err.out
	atf_check -o empty -e empty $CTL exec e -- true
}
egress_cleanup() { fenced_cleanup; }

atf_test_case limits cleanup
limits_head() {
	atf_set descr "a fork bomb past the fence's pids limit and a process past its memory limit: each a limit denial of the exec, with its remedy; the next exec has none"
	atf_set require.user root
	atf_set require.progs python3
	atf_set timeout 120
}
limits_body() {
	fenced_vars
	fenced_start
	atf_check -o ignore $CTL boot p tier L1.5 pids 32
	$CTL exec p -- sh -c 'for i in $(seq 60); do sleep 1 & done; wait' \
	    > out.out 2> err.out
	atf_check -o match:"^fenced: denied: limit: pids: a new process refused at the limit x[0-9]+ - more processes \(boot \.\.\. pids N, up to limit pids max\)$" \
	    cat err.out
	atf_check -o empty -e empty $CTL exec p -- true
	atf_check -o ignore $CTL boot m tier L1.5 memory 64M
	atf_check -s exit:137 \
	    -e inline:"fenced: denied: limit: memory: a process killed for lack of memory x1 - more memory (boot ... memory SIZE, up to limit memory max)\n" \
	    $CTL exec m -- python3 -c 'x = bytearray(200 << 20)'
	atf_check -o empty -e empty $CTL exec m -- true
}
limits_cleanup() { fenced_cleanup; }

atf_test_case terminal cleanup
terminal_head() {
	atf_set descr "a terminal whose program calls unshare(CLONE_NEWUSER) three times: the denial with its count in the terminal's state (fencectl term -l, GET .../terminals/ID and the listing) and at its end (fencectl term's stderr), asked again not counted twice; another terminal and an exec do not; the fence's state counts the denials nothing took (\"denialsOutside\"), here a forgotten background process's"
	atf_set require.user root
	atf_set require.progs python3 curl
	atf_set timeout 120
}
terminal_body() {
	fenced_vars
	fenced_start
	atf_check -o ignore $CTL boot t tier L1.5
	put_py t u.py <<'PY'
import ctypes
libc = ctypes.CDLL(None)
for i in range(3):
    libc.syscall(272, 0x10000000)
print("done")
PY
	line="fenced: denied: seccomp: unshare(CLONE_NEWUSER) x3 - tier L1 does not refuse it"
	# One that stays, opened first: none of the other's.
	$CTL term t -- sleep 600 < /dev/null > /dev/null 2>&1 &
	echo $! > ctl.pids
	wait_until 20 sh -c "$CTL term t -l | grep -q '^1 '" ||
	    atf_fail "no terminal 1: $($CTL term t -l)"
	atf_check -o match:"done" -e inline:"$line\n" \
	    $CTL term t -- python3 u.py < /dev/null
	atf_check -o match:"^2 ended .* exit 0\$" -e inline:"$line\n" \
	    $CTL term t -l
	TOKEN=$($CTL token t 2>/dev/null)
	call "$TOKEN" GET /api/environments/t/terminals/2
	expect 200 '"denials":\[\{"layer":"seccomp","what":"unshare\(CLONE_NEWUSER\)","count":3,'
	call "$TOKEN" GET /api/environments/t/terminals/1
	expect 200 '"running":true'
	grep -q denials body.out && atf_fail "terminal 1 has denials: \
	    $(cat body.out)"
	call "$TOKEN" GET /api/environments/t/terminals
	expect 200 '"count":3,'
	[ "$(grep -o '"denials"' body.out | wc -l)" -eq 1 ] ||
	    atf_fail "not one terminal with denials: $(cat body.out)"
	atf_check -o empty -e empty $CTL exec t -- true
	# Audited once, however often it was shown.
	[ "$(grep -c '"kind":"denial",.*unshare(CLONE_NEWUSER)' \
	    state/audit.log)" -eq 1 ] || atf_fail "audited not once: \
	    $(grep denial state/audit.log)"
	# Denials nothing took: none yet; then those of a background
	# process forgotten before any answer about it took them, in the
	# fence's state although nothing else of it changed.
	call "$TOKEN" GET /api/environments/t
	expect 200 '"denialsOutside":0[,}]'
	bg=$($CTL spawn t -- sh -c 'python3 u.py > /dev/null; touch fin') ||
	    atf_fail "spawn"
	wait_until 30 test -e "$(home_of t)/fin" || atf_fail "no fin"
	sleep 0.5
	atf_check -o inline:"$bg exited: forgotten\n" $CTL kill t "$bg"
	call "$TOKEN" GET /api/environments/t
	expect 200 '"denialsOutside":3[,}]'
	atf_check -o match:"^denied: +3 outside any command" \
	    $CTL show environment t
	kill $(cat ctl.pids) 2>/dev/null
}
terminal_cleanup() {
	[ -f ctl.pids ] && kill $(cat ctl.pids) 2>/dev/null
	fenced_cleanup
}

atf_init_test_cases() {
	atf_add_test_case limits
	atf_add_test_case egress
	atf_add_test_case seccomp_counts
	atf_add_test_case pipeline_kill
	atf_add_test_case concurrent
	atf_add_test_case listener_hidden
	atf_add_test_case other_user
	atf_add_test_case terminal
}
