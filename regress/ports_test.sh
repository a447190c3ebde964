#! /usr/bin/atf-sh
# Ports (docs/interactive.md, "Tunnels"): a server inside a fence
# reached through fenced with `fencectl forward' and curl, at each tier
# and backend there is here; a port nobody listens on; many connections
# at once; a server that writes forever to a client that never reads
# and a client that writes forever to a server that never reads (the
# broker's and the agent's memory stay bounded); the bound of tunnels
# per fence; another local user who cannot reach the first one's fence.

. "$(atf_get_srcdir)/lib.subr"

need_python() {
	command -v python3 > /dev/null || \
	    atf_skip "no python3 (scripts/deps.sh installs it)"
}

# Boot KEY with the boot options after it, and put the server script in
# its home.
ports_boot() {
	_k=$1
	shift
	$CTL -w 300 boot "$_k" "$@" > boot.out 2>&1 || \
	    atf_fail "boot $_k $*: $(cat boot.out)"
	$CTL put "$_k" "$TOPDIR/regress/port_server.py" port_server.py || \
	    atf_fail "put the server"
}

# serve KEY MODE PORT: the server in the background; wait (60 s at most,
# a vm's python starts slowly) until the fence lists PORT.
serve() {
	$CTL spawn "$1" -- python3 port_server.py "$2" "$3" > /dev/null || \
	    atf_fail "spawn the server"
	wait_until 60 listed "$1" "$3" || atf_fail "port $3 never listened: \
	    $($CTL show processes "$1")"
}

listed() {
	$CTL ports "$1" 2>/dev/null | grep -qx "$2"
}

# forward KEY PORT: fencectl forward in the background; its local port
# in $LP, its standard error in fwd.KEY.PORT.err (files of their own: a
# name used before would be read before the new one truncates it).
forward() {
	$CTL forward "$1" "$2" > fwd.$1.$2.out 2> fwd.$1.$2.err &
	echo $! >> fwd.pids
	wait_until 30 test -s fwd.$1.$2.out || \
	    atf_fail "forward printed no port: $(cat fwd.$1.$2.err)"
	LP=$(head -n 1 fwd.$1.$2.out)
	[ -n "$LP" ] || atf_fail "forward printed no port"
}

forwards_stop() {
	for p in $(cat fwd.pids 2>/dev/null); do
		kill $p 2>/dev/null
	done
	rm -f fwd.pids
}

# What every backend must do through a forwarded port $LP.
port_checks() {
	atf_check -o inline:"hello from the fence\n" \
	    curl -sS -m 30 "http://127.0.0.1:$LP/"
	# 1 MiB up and back, byte for byte.
	head -c 1048576 /dev/urandom > in.bin
	atf_check curl -sS -m 60 -H 'Content-Type: application/octet-stream' \
	    --data-binary @in.bin -o out.bin "http://127.0.0.1:$LP/echo"
	atf_check cmp in.bin out.bin
	# 16 at once, each its own tunnel.
	head -c 262144 /dev/urandom > in16.bin
	i=0
	pids=
	while [ $i -lt 16 ]; do
		curl -sS -m 120 -H 'Content-Type: application/octet-stream' \
		    --data-binary @in16.bin -o out16.$i \
		    "http://127.0.0.1:$LP/echo" &
		pids="$pids $!"
		i=$((i + 1))
	done
	# Not a bare wait: the forwards run in the background too.
	wait $pids
	i=0
	while [ $i -lt 16 ]; do
		cmp -s in16.bin out16.$i || atf_fail "connection $i of 16 \
		    came back different"
		i=$((i + 1))
	done
}

# A port nobody listens on in KEY: a clear refusal; the daemon serves on.
port_closed() {
	atf_check -s exit:1 -e match:"port-closed: nothing listens on" \
	    $CTL forward "$1" "$2"
	atf_check -o match:'^processes:' $CTL show stats
}

atf_test_case native_l2 cleanup
native_l2_head() {
	atf_set descr "native L2: GET, a 1 MiB POST echoed byte for byte, 16 at once, a closed port, the listing; the fence's socket passed"
	atf_set require.user root
	atf_set timeout 300
}
native_l2_body() {
	fenced_vars
	need_python
	fenced_start
	ports_boot web tier L2
	serve web http 8000
	forward web 8000
	port_checks
	port_closed web 8001
	# The descriptor came from the agent: nothing was framed.
	grep -q "tunnel .* open, the fence's socket" fenced.log || \
	    atf_fail "no descriptor passed: $(grep -i tunnel fenced.log)"
	forwards_stop
	fenced_stop
}
native_l2_cleanup() { forwards_stop; fenced_cleanup; }

atf_test_case native_l15 cleanup
native_l15_head() {
	atf_set descr "native L1.5 (the host's network): the same through a port of its own"
	atf_set require.user root
	atf_set timeout 300
}
native_l15_body() {
	fenced_vars
	need_python
	fenced_start
	ports_boot web tier L1.5
	p=$("$REGRESS/t_port")
	serve web http $p
	forward web $p
	port_checks
	port_closed web "$("$REGRESS/t_port")"
	forwards_stop
	fenced_stop
}
native_l15_cleanup() { forwards_stop; fenced_cleanup; }

atf_test_case runsc cleanup
runsc_head() {
	atf_set descr "runsc L2: the same, framed over the agent's channel"
	atf_set require.user root
	atf_set timeout 300
}
runsc_body() {
	fenced_vars
	need_python
	command -v runsc > /dev/null || \
	    atf_skip "runsc is not installed (scripts/deps.sh installs it)"
	fenced_start
	ports_boot web backend runsc tier L2
	serve web http 8000
	forward web 8000
	port_checks
	port_closed web 8001
	grep -q "tunnel .* open, framed" fenced.log || \
	    atf_fail "the runsc tunnel was not framed"
	forwards_stop
	fenced_stop
}
runsc_cleanup() { forwards_stop; fenced_cleanup; }

atf_test_case vm cleanup
vm_head() {
	atf_set descr "vm L2: the same, framed over the virtio-serial port"
	atf_set require.user root
	atf_set timeout 600
}
vm_body() {
	fenced_vars
	need_python
	vm_available || atf_skip "no QEMU or no vm boot files (make vm-images)"
	fenced_conf > fenced.conf
	vm_conf_lines >> fenced.conf
	fenced_start
	ports_boot web backend vm tier L2
	serve web http 8000
	forward web 8000
	port_checks
	port_closed web 8001
	forwards_stop
	fenced_stop
}
vm_cleanup() { forwards_stop; fenced_cleanup; }

# RSS in kB of host pid $1; of the agent (pid 1 in the fence) of KEY $1.
rss_of() {
	status_field $1 VmRSS | awk '{ print $1 }'
}
agent_rss() {
	$CTL exec "$1" -- grep VmRSS /proc/1/status | awk '{ print $2 }'
}

# stalled KEY MODE: a client connected through the forward at $LP that
# (flood) never reads what the server writes forever, or (sink) writes
# forever to a server that never reads; for 4 s the broker's and the
# agent's RSS stay within 16 MiB of where they were.
stalled() {
	bp=$(fenced_pid broker)
	rss0=$(rss_of $bp)
	a0=$(agent_rss $1)
	[ -n "$a0" ] || atf_fail "no agent RSS"
	bound=16384
	ldd "$BIN/fenced" 2>/dev/null | grep -q libasan && bound=98304
	python3 -c '
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
if sys.argv[2] == "sink":
    s.settimeout(0.2)
    sent = 0
    end = time.time() + 6
    while time.time() < end:
        try:
            sent += s.send(b"y" * 65536)
        except socket.timeout:
            pass
    print("sent", sent)
else:
    time.sleep(6)
    print("read nothing")
' $LP $2 > client.out 2>&1 &
	cpid=$!
	sleep 1
	i=0
	while [ $i -lt 4 ]; do
		rss=$(rss_of $bp)
		[ $((rss - rss0)) -lt $bound ] || \
		    atf_fail "broker RSS grew from $rss0 to $rss kB"
		a=$(agent_rss $1)
		[ -n "$a" ] && [ $((a - a0)) -lt $bound ] || \
		    atf_fail "agent RSS grew from $a0 to $a kB"
		sleep 1
		i=$((i + 1))
	done
	wait $cpid
	cat client.out
	# Stuck, not dead: the daemon and the fence still answer.
	atf_check -o match:'^processes:' $CTL show stats
	atf_check -o inline:"ok\n" $CTL exec $1 -- echo ok
}

# stall_case BACKEND-OPTIONS...: flood, then sink, in one fence.
stall_case() {
	fenced_vars
	need_python
	fenced_start
	ports_boot st "$@"
	serve st flood 8100
	forward st 8100
	stalled st flood
	serve st sink 8200
	forward st 8200
	stalled st sink
	grep -q "^sent [1-9]" client.out || atf_fail "the client sent nothing"
	forwards_stop
	fenced_stop
}

atf_test_case stall_native cleanup
stall_native_head() {
	atf_set descr "native L2: a server writing forever to a client that never reads, a client writing forever to a server that never reads: memory bounded, the daemon serves on"
	atf_set require.user root
	atf_set timeout 300
}
stall_native_body() { stall_case tier L2; }
stall_native_cleanup() { forwards_stop; fenced_cleanup; }

atf_test_case stall_runsc cleanup
stall_runsc_head() {
	atf_set descr "runsc L2 (framed, the agent holds the window): the same"
	atf_set require.user root
	atf_set timeout 300
}
stall_runsc_body() {
	command -v runsc > /dev/null || \
	    atf_skip "runsc is not installed (scripts/deps.sh installs it)"
	stall_case backend runsc tier L2
}
stall_runsc_cleanup() { forwards_stop; fenced_cleanup; }

atf_test_case bound cleanup
bound_head() {
	atf_set descr "the tunnels of one fence are bounded (256): the next is refused too-many-tunnels, and once they close a new one works"
	atf_set require.user root
	atf_set timeout 300
}
bound_body() {
	fenced_vars
	need_python
	fenced_start
	ports_boot b tier L2
	serve b sink 8300
	serve b http 8000
	lps=
	for n in 1 2 3 4 5; do
		$CTL forward b 8300 > fwd.b$n.out 2> fwd.b$n.err &
		echo $! >> fwd.pids
		wait_until 30 test -s fwd.b$n.out || atf_fail "no forward"
		lps="$lps $(cat fwd.b$n.out)"
	done
	# 300 connections held, 60 through each forward.
	python3 -c '
import socket, sys, time
held = []
for p in sys.argv[1:]:
    for i in range(60):
        held.append(socket.create_connection(("127.0.0.1", int(p))))
time.sleep(8)
' $lps &
	hpid=$!
	wait_until 30 grep -q too-many-tunnels fwd.b*.err || \
	    atf_fail "no refusal: $(cat fwd.b*.err)"
	atf_check -o match:"too-many-tunnels: fence b has 256 tunnels open" \
	    cat fwd.b1.err fwd.b2.err fwd.b3.err fwd.b4.err fwd.b5.err
	# Another fence of the same user is not held to this one's bound.
	ports_boot c tier L2
	serve c http 8000
	forward c 8000
	atf_check -o inline:"hello from the fence\n" \
	    curl -sS -m 30 "http://127.0.0.1:$LP/"
	wait $hpid
	# The clients closed; a tunnel lasts until the server's side closes
	# too (it may still write: a half-close is kept), so the sink goes.
	$CTL kill b 1 KILL > /dev/null || atf_fail "kill the sink"
	# Closed, they no longer count.
	forward b 8000
	wait_until 60 curl -sS -m 5 -o /dev/null "http://127.0.0.1:$LP/" || \
	    atf_fail "no tunnel after the others closed: $(tail -n 3 \
	    fwd.b.8000.err) $($CTL show processes b)"
	atf_check -o inline:"hello from the fence\n" \
	    curl -sS -m 30 "http://127.0.0.1:$LP/"
	forwards_stop
	fenced_stop
}
bound_cleanup() { forwards_stop; fenced_cleanup; }

atf_test_case bound_user cleanup
bound_user_head() {
	atf_set descr "the tunnels of one user are bounded (512) over their fences: the next is refused too-many-tunnels, and root's fence serves throughout"
	atf_set require.user root
	atf_set timeout 300
}
bound_user_body() {
	fenced_vars
	need_python
	fenced_run_socket
	fenced_conf > fenced.conf
	fenced_start
	chmod 0666 "$(fenced_socket)"
	users_add 1 pbu
	u=$(head -n 1 users.txt)
	S="$(as_user $u) $BIN/fencectl -s $(fenced_socket)"
	for k in u1 u2 u3; do
		$S boot $k tier L2 > /dev/null || atf_fail "boot $k as $u"
		$S put $k - port_server.py < "$TOPDIR/regress/port_server.py" || \
		    atf_fail "put the server"
		$S spawn $k -- python3 port_server.py sink 8300 > /dev/null || \
		    atf_fail "spawn the server"
		wait_until 60 sh -c "$S ports $k | grep -qx 8300" || \
		    atf_fail "port 8300 never listened in $k"
	done
	lps=
	for k in u1 u2 u3; do
		for n in 1 2 3; do
			$S forward $k 8300 > fwd.$k$n.out 2> fwd.$k$n.err &
			echo $! >> fwd.pids
			wait_until 30 test -s fwd.$k$n.out || \
			    atf_fail "no forward: $(cat fwd.$k$n.err)"
			lps="$lps $(cat fwd.$k$n.out)"
		done
	done
	# 540 connections held, 180 into each fence (under its 256).
	python3 -c '
import socket, sys, time
held = []
for p in sys.argv[1:]:
    for i in range(60):
        held.append(socket.create_connection(("127.0.0.1", int(p))))
time.sleep(8)
' $lps &
	hpid=$!
	wait_until 30 sh -c 'cat fwd.u*.err | grep -q too-many-tunnels' || \
	    atf_fail "no refusal: $(cat fwd.u*.err)"
	cat fwd.u*.err | grep -q "too-many-tunnels: at most 512 tunnels of one user" || \
	    atf_fail "not the bound per user: $(cat fwd.u*.err | sort | uniq -c)"
	# Root's own fence is served meanwhile.
	ports_boot r tier L2
	serve r http 8000
	forward r 8000
	atf_check -o inline:"hello from the fence\n" \
	    curl -sS -m 30 "http://127.0.0.1:$LP/"
	wait $hpid
	forwards_stop
	fenced_stop
}
bound_user_cleanup() { forwards_stop; fenced_cleanup; }

atf_test_case other_user cleanup
other_user_head() {
	atf_set descr "another local user can neither open a tunnel into the first one's fence nor list its ports (not-found), by key or owner/key; the owner's tunnel works throughout"
	atf_set require.user root
	atf_set timeout 300
}
other_user_body() {
	fenced_vars
	need_python
	fenced_run_socket
	fenced_conf > fenced.conf
	fenced_start
	chmod 0666 "$(fenced_socket)"
	users_add 1 ptun
	u=$(head -n 1 users.txt)
	ports_boot web tier L2
	serve web http 8000
	forward web 8000
	S="$BIN/fencectl -s $(fenced_socket)"
	atf_check -s exit:1 -e match:"not-found" $(as_user $u) $S forward web 8000
	atf_check -s exit:1 -e match:"not-found" $(as_user $u) $S forward 0/web 8000
	atf_check -s exit:1 -e match:"not-found" $(as_user $u) $S ports 0/web
	atf_check -s exit:1 -e match:"not-found" $(as_user $u) $S forward root/web 8000
	atf_check -o inline:"hello from the fence\n" \
	    curl -sS -m 30 "http://127.0.0.1:$LP/"
	forwards_stop
	fenced_stop
}
other_user_cleanup() { forwards_stop; fenced_cleanup; }

atf_test_case stop_ends cleanup
stop_ends_head() {
	atf_set descr "the fence's stop ends its open tunnels: the client reads the end at once"
	atf_set require.user root
	atf_set timeout 120
}
stop_ends_body() {
	fenced_vars
	need_python
	fenced_start
	ports_boot s tier L2
	serve s sink 8400
	forward s 8400
	python3 -c '
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(30)
t = time.time()
open("connected", "w").close()
d = s.recv(10)
print("end", repr(d), int(time.time() - t < 25))
' $LP > end.out &
	cpid=$!
	wait_until 10 test -f connected || atf_fail "not connected"
	sleep 0.5
	$CTL stop s > /dev/null
	wait $cpid
	atf_check -o inline:"end b'' 1\n" cat end.out
	forwards_stop
	fenced_stop
}
stop_ends_cleanup() { forwards_stop; fenced_cleanup; }

atf_test_case hostile_agent cleanup
hostile_agent_head() {
	atf_set descr "an agent that is not ours (regress/t_badagent) answers a tunnel with a pipe, a listening socket, a directory, a FIFO, a UDP socket, an unconnected socket, no descriptor, DATA beyond the window, CREDIT never earned, DATA after its shut: each refused and logged, its channel closed (the unconnected socket alone refused as a connection reset), the daemon and another fence serve on"
	atf_set require.user root
	atf_set timeout 300
}
hostile_agent_body() {
	fenced_vars
	need_python
	fenced_start_badagent
	$CTL boot other tier L1.5 > /dev/null || atf_fail "boot other"
	for p in 1 2 3 4 5 6 7 8 9 10; do
		$CTL boot h$p tier L1.5 > /dev/null || atf_fail "boot h$p"
		forward h$p $p
		# A client that reads nothing, so that what the agent sends
		# stays in the broker's window.
		python3 -c '
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
time.sleep(20)
' $LP &
		cpid=$!
		wait_until 20 grep -q "fence h$p: \(tunnel\|agent sent\)" \
		    fenced.log || atf_fail "attack $p: nothing logged"
		if [ $p = 6 ]; then
			# Not connected is also what a reset makes of a
			# connection: refused, the agent not taken for a
			# hostile one.
			sleep 1
			atf_check -o match:'^state: *running' \
			    $CTL show environment h$p
		else
			wait_until 20 sh -c "$CTL show environment h$p | \
			    grep -q '^state: *stopped'" || \
			    atf_fail "attack $p: the fence runs on"
		fi
		kill $cpid 2>/dev/null
		forwards_stop
		atf_check -o match:'^processes:' $CTL show stats
		atf_check -o match:'^state: *running' $CTL show environment other
	done
	for w in "a descriptor that is not a socket" \
	    "a descriptor that is a listening socket" \
	    "a descriptor that is not a stream socket" \
	    "a descriptor that is not connected; refused" \
	    "agent sent IMSG_AGENT_TUNNEL for request" \
	    "agent sent IMSG_AGENT_TUNNEL_DATA for request" \
	    "agent sent IMSG_AGENT_TUNNEL_CREDIT for request"; do
		grep -q "$w" fenced.log || atf_fail "not logged: $w"
	done
	fenced_stop
}
hostile_agent_cleanup() {
	forwards_stop
	fenced_cleanup
	fenced_badagent_cleanup
}

atf_init_test_cases() {
	atf_add_test_case native_l2
	atf_add_test_case native_l15
	atf_add_test_case runsc
	atf_add_test_case vm
	atf_add_test_case stall_native
	atf_add_test_case stall_runsc
	atf_add_test_case bound
	atf_add_test_case bound_user
	atf_add_test_case other_user
	atf_add_test_case stop_ends
	atf_add_test_case hostile_agent
}
