#! /usr/bin/atf-sh
# The egress proxy end to end (issue 17, docs/egress.md): an L2 fence
# with an allowlist reaches a TLS and a plain HTTP listener of the
# test's own on the host's loopback through the proxy port of its own
# loopback, and nothing else; the proxy's refusals, its resolver and
# its limits; a second local user's fence; the host's own addresses; the
# proxy's death.  No packet leaves the machine: names are mapped by
# `egress host' or answered by the test's own resolver (regress/dns.py)
# on 127.0.0.1, to loopback or to addresses of an interface the test
# adds.

. "$(atf_get_srcdir)/lib.subr"

# Listeners on the host: plain HTTP (two), TLS, UDP, the resolver (its
# names and answers, and any NAME=ANSWER given).  Each pid goes to
# listeners.pids for the cleanup.
proxy_listeners() {
	command -v python3 > /dev/null || atf_skip "no python3 (scripts/deps.sh installs it)"
	PLAIN=$("$REGRESS/t_port") && OTHER=$("$REGRESS/t_port") &&
	    TLS=$("$REGRESS/t_port") && UDP=$("$REGRESS/t_port") &&
	    DNS=$("$REGRESS/t_port") || atf_fail "no free port"
	mkdir -p www other
	echo "allowed listener" > www/index.html
	echo "the other listener" > other/index.html
	(cd www && exec python3 -m http.server "$PLAIN" --bind 127.0.0.1) \
	    > plain.log 2>&1 &
	echo $! >> listeners.pids
	(cd other && exec python3 -m http.server "$OTHER" --bind 127.0.0.1) \
	    > other.log 2>&1 &
	echo $! >> listeners.pids
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", int(sys.argv[1])))
while True:
    d, a = s.recvfrom(2048)
    open("udp.got", "ab").write(d + b"\n")
' "$UDP" > udp.log 2>&1 &
	echo $! >> listeners.pids
	python3 "$TOPDIR/regress/dns.py" "$DNS" dns.log \
	    rebind.test=127.0.0.1 nx.test=nx silent.test=silent "$@" \
	    > dnsd.log 2>&1 &
	echo $! >> listeners.pids
	if command -v openssl > /dev/null; then
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
		    -nodes -subj /CN=allowed.test -days 1 -keyout key.pem \
		    -out cert.pem > openssl.log 2>&1 || atf_fail "openssl req"
		openssl s_server -accept "127.0.0.1:$TLS" -cert cert.pem \
		    -key key.pem -www -quiet > tls.log 2>&1 &
		echo $! >> listeners.pids
	fi
	for p in $PLAIN $OTHER; do
		i=0
		until curl -s -o /dev/null "http://127.0.0.1:$p/"; do
			i=$((i + 1))
			[ $i -lt 100 ] || atf_fail "listener $p did not come up"
			sleep 0.05
		done
	done
}

proxy_conf() {
	fenced_conf
	cat <<CONF
egress host "allowed.test" 127.0.0.1 port $PLAIN
egress host "allowed.test" 127.0.0.1 port $TLS
egress host "sub.wild.test" 127.0.0.1 port $PLAIN
egress resolver 127.0.0.1 port $DNS
egress connect timeout 2
probe egress allowed "allowed.test:$PLAIN"
probe egress refused "refused.test:$OTHER"
CONF
}

proxy_cleanup() {
	fenced_cleanup
	for p in $(cat listeners.pids 2>/dev/null); do
		kill $p 2>/dev/null
	done
	true
}

# The fence's state as JSON, through the HTTP API.
proxy_state() {
	api "$TOKEN" GET "/api/environments/$1" | sed '$d'
}

# python3 -c "$2" run in fence $1 with the rest as its arguments.
in_fence() {
	_k=$1 _s=$2
	shift 2
	$CTL exec "$_k" -- /usr/bin/python3 -c "$_s" "$@"
}

atf_test_case allowlisted cleanup
allowlisted_head() {
	atf_set descr "an L2 fence with an egress list reaches the allowed TLS and plain listeners through the proxy and nothing else, and earns L2 with the network axis allowlisted"
	atf_set require.user root
	atf_set require.progs curl
	atf_set timeout 180
}
# egress_decided ALLOWED REFUSED: the metrics count exactly that many.
egress_decided() {
	$CTL show metrics > metrics.txt || return 1
	grep -qx "fenced_egress_decisions_total{result=\"allowed\"} $1" \
	    metrics.txt &&
	    grep -qx "fenced_egress_decisions_total{result=\"refused\"} $2" \
	    metrics.txt
}

allowlisted_body() {
	fenced_vars
	proxy_listeners
	command -v openssl > /dev/null || atf_skip "no openssl (scripts/deps.sh installs it)"
	proxy_conf > fenced.conf
	fenced_start
	TOKEN=$($CTL token -r 2>/dev/null | tail -1)
	# Nothing runs before the level is earned: require L2.
	atf_check -o match:"level: +L2" $CTL boot k tier L2 require L2 \
	    egress "allowed.test:$PLAIN" "allowed.test:$TLS"
	proxy_state k > state.json
	atf_check -o inline:"allowlisted\n" python3 -c '
import json, sys
print(json.load(open("state.json"))["boundary"]["axes"]["network"]["verdict"])'

	# The proxy variables, and what goes through.
	atf_check -o match:"^HTTPS_PROXY=http://127.0.0.1:3128$" \
	    -o match:"^no_proxy=localhost,127.0.0.1,::1$" $CTL exec k -- env
	atf_check -o inline:"allowed listener\n" $CTL exec k -- \
	    curl -sS -m 10 "http://allowed.test:$PLAIN/"
	atf_check -o inline:"allowed listener\n" $CTL exec k -- \
	    curl -sS -m 10 -p "http://allowed.test:$PLAIN/"
	atf_check -o match:"s_server" $CTL exec k -- \
	    curl -sS -m 10 -k "https://allowed.test:$TLS/"

	# Refused by the proxy: another port of the host, a name not in
	# the list, the allowed name at another port.
	atf_check -s exit:22 -e match:"403" $CTL exec k -- \
	    curl -sS -f -m 10 "http://allowed.test:$OTHER/"
	atf_check -s exit:22 -e match:"403" $CTL exec k -- \
	    curl -sS -f -m 10 "http://other.test:$PLAIN/"
	atf_check -s exit:56 -e match:"403" $CTL exec k -- \
	    curl -sS -m 10 -k "https://other.test:$TLS/"
	atf_check -o match:"X-Fenced-Egress: not-listed" \
	    -e match:"fenced: denied: egress: .* \\(not-listed\\) x1" $CTL exec k -- \
	    curl -sS -i -m 10 "http://allowed.test:$OTHER/"
	# The proxy checked the list before resolving: no name reached the
	# resolver (allowed.test is mapped).
	[ ! -s dns.log ] || atf_fail "names were resolved: $(cat dns.log)"
	# Each connection's decision reaches the metrics (docs/metrics.md)
	# when it ends: three allowed and four refused here, and the boot's
	# probe tried one of each (docs/egress.md).
	wait_until 5 egress_decided 4 5 || atf_fail "egress decisions: \
$(grep '^fenced_egress_decisions_total' metrics.txt | tr '\n' ' ')"

	# Around it: direct connects to both loopbacks, UDP, raw sockets.
	atf_check -s not-exit:0 -e ignore $CTL exec k -- \
	    curl -sS -m 5 --noproxy "*" "http://127.0.0.1:$PLAIN/"
	atf_check -s not-exit:0 -e ignore $CTL exec k -- \
	    curl -sS -m 5 --noproxy "*" "http://[::1]:$PLAIN/"
	atf_check -o inline:"sent\n" $CTL exec k -- /usr/bin/python3 -c '
import socket, sys
for fam, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
    try:
        s = socket.socket(fam, socket.SOCK_DGRAM)
        s.sendto(b"leak", (host, int(sys.argv[1])))
    except OSError:
        pass
print("sent")' "$UDP"
	atf_check -o inline:"raw refused\n" \
	    -e inline:"fenced: denied: seccomp: socket(AF_INET, SOCK_RAW) x1 - none: raw and packet sockets need a privilege no fence holds\n" \
	    $CTL exec k -- /usr/bin/python3 -c '
import socket
try:
    socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    print("raw socket made")
except OSError:
    print("raw refused")'
	atf_check -o inline:"lo\n" $CTL exec k -- sh -c \
	    "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"
	sleep 0.5
	[ ! -s udp.got ] || atf_fail "a UDP packet reached the host: $(cat udp.got)"

	# Counted: the state, fencectl, the log.
	proxy_state k > state.json
	atf_check -o match:"^allowed [3-9] refused [4-9] open 0$" \
	    python3 -c '
import json
e = json.load(open("state.json"))["egress"]
r = [d for d in e["recent"] if d["decision"] == "refused"]
assert all(d["address"] is None for d in r), r
assert any(d["name"] == "other.test" and d["reason"] == "not-listed"
           for d in r), r
assert e["bytesDown"] > 0 and e["bytesUp"] > 0, e
assert e["list"] == ["allowed.test:%s" % p for p in __import__("sys").argv[1:]], e
assert len(e["recent"]) == min(16, e["allowed"] + e["refused"]), e
print("allowed", e["allowed"], "refused", e["refused"], "open", e["open"])
' "$PLAIN" "$TLS"
	atf_check -o match:"egress: +proxy 127.0.0.1:3128 for allowed.test:$PLAIN allowed.test:$TLS" \
	    -o match:"[0-9]+ allowed, [0-9]+ refused, 0 open" \
	    $CTL show environment k
	atf_check -o match:"fence k of 0: egress GET other.test:$PLAIN refused: not-listed" \
	    cat fenced.log
	fenced_stop
}
allowlisted_cleanup() { proxy_cleanup; }

atf_test_case resolver cleanup
resolver_head() {
	atf_set descr "the proxy's resolver: a name resolving to loopback is refused (DNS rebinding), as is a private address reached by a wildcard; no such name, no answer"
	atf_set require.user root
	atf_set require.progs curl
	atf_set timeout 120
}
resolver_body() {
	fenced_vars
	proxy_listeners
	proxy_conf > fenced.conf
	fenced_start
	atf_check -o ignore $CTL boot r tier L2 egress "rebind.test:$PLAIN" \
	    "nx.test:$PLAIN" "silent.test:$PLAIN" "*.wild.test:$PLAIN"
	atf_check -o match:"X-Fenced-Egress: private-address" \
	    -e match:"fenced: denied: egress: .* \\(private-address\\) x1" $CTL exec r -- \
	    curl -sS -i -m 10 "http://rebind.test:$PLAIN/"
	atf_check -o match:"X-Fenced-Egress: resolve-failed" $CTL exec r -- \
	    curl -sS -i -m 10 "http://nx.test:$PLAIN/"
	atf_check -o match:"X-Fenced-Egress: timeout" $CTL exec r -- \
	    curl -sS -i -m 10 "http://silent.test:$PLAIN/"
	# Mapped to 127.0.0.1, but listed by a wildcard only.
	atf_check -o match:"X-Fenced-Egress: private-address" \
	    -e match:"fenced: denied: egress: .* \\(private-address\\) x1" $CTL exec r -- \
	    curl -sS -i -m 10 "http://sub.wild.test:$PLAIN/"
	# Each was asked for, A and AAAA; the mapped one never.
	for n in rebind.test nx.test silent.test; do
		atf_check -o ignore grep -qx "$n 1" dns.log
		atf_check -o ignore grep -qx "$n 28" dns.log
	done
	atf_check -s exit:1 grep -q wild dns.log
	fenced_stop
}
resolver_cleanup() { proxy_cleanup; }

atf_test_case hostile cleanup
hostile_head() {
	atf_set descr "bad requests at the proxy port (over-long, wrong syntax, NUL bytes, wrong methods, 10,000 at once) are refused, and the proxy keeps serving with no descriptor left behind"
	atf_set require.user root
	atf_set require.progs curl
	atf_set timeout 300
}
hostile_body() {
	fenced_vars
	proxy_listeners
	proxy_conf > fenced.conf
	fenced_start
	atf_check -o ignore $CTL boot h tier L2 egress "allowed.test:$PLAIN"
	egress=$(fenced_pid egress)
	fds0=$(ls /proc/$egress/fd | wc -l)
	cat > hostile.expected <<EOF
400 bad-request
400 bad-request
400 bad-request
400 bad-request
405 bad-method
405 bad-method
405 bad-method
400 bad-request
400 bad-request
EOF
	in_fence h '
import socket
long = b"CONNECT " + b"a" * 9000 + b".test:1 HTTP/1.1\r\n\r\n"
for req in (long, b"CONNECT allowed.test HTTP/1.1\r\n\r\n",
            b"CONNECT a\0b.test:1 HTTP/1.1\r\n\r\n",
            b"CONNECT allowed.test:1 HTTP/2.0\r\n\r\n",
            b"connect allowed.test:1 HTTP/1.1\r\n\r\n",
            b"GET /x HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
            b"GET https://allowed.test/ HTTP/1.1\r\n\r\n",
            b"CONNECT allowed.test:99999 HTTP/1.1\r\n\r\n",
            b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n"):
    s = socket.create_connection(("127.0.0.1", 3128))
    s.settimeout(10)
    try:
        s.sendall(req)
    except OSError:
        pass
    got = b""
    while True:
        try:
            d = s.recv(4096)
        except ConnectionResetError:
            break
        if not d:
            break
        got += d
    line = got.split(b"\r\n")
    code = [l for l in line if l.startswith(b"X-Fenced-Egress:")]
    print(line[0].split()[1].decode(), code[0].split()[1].decode())
' > hostile.out || atf_fail "the bad requests did not run"
	atf_check -o file:hostile.expected cat hostile.out

	# 10,000 at once, 200 in flight (a fence has 256 descriptors): each answered with a refusal or
	# closed, none left hanging; then a good request still goes.
	in_fence h '
import selectors, socket
sel = selectors.DefaultSelector()
bad = [b"CONNECT a\0b:1 HTTP/1.1\r\n\r\n", b"BREW pot:1 HTTP/1.1\r\n\r\n",
       b"CONNECT " + b"x" * 8300, b"CONNECT nope.test:1 HTTP/1.1\r\n\r\n"]
todo, busy, answered, closed = 10000, 0, 0, 0
codes = {}
while todo or busy:
    while todo and busy < 200:
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", 3128))
        sel.register(s, selectors.EVENT_WRITE, [bad[todo % 4], b""])
        todo -= 1
        busy += 1
    ev = sel.select(30)
    if not ev:
        raise SystemExit("hung: %d in flight" % busy)
    for key, mask in ev:
        s, st = key.fileobj, key.data
        try:
            if mask & selectors.EVENT_WRITE:
                s.send(st[0])
                sel.modify(s, selectors.EVENT_READ, st)
                continue
            d = s.recv(4096)
        except OSError:
            d = b""
        if d:
            st[1] += d
            continue
        if st[1].startswith(b"HTTP/1.1 "):
            answered += 1
            c = st[1].split()[1].decode()
            codes[c] = codes.get(c, 0) + 1
        else:
            closed += 1
        sel.unregister(s)
        s.close()
        busy -= 1
print(answered + closed, sorted(codes))
' > flood.out || atf_fail "the flood did not run: $(cat flood.out)"
	atf_check -o match:"^10000 \[.*'4(00|03|05|29)'" cat flood.out
	atf_check -o inline:"allowed listener\n" $CTL exec h -- \
	    curl -sS -m 10 "http://allowed.test:$PLAIN/"
	# The same proxy, and its descriptors as before.
	atf_check_equal "$egress" "$(fenced_pid egress)"
	i=0
	while [ "$(ls /proc/$egress/fd | wc -l)" -gt "$fds0" ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || atf_fail "the proxy holds $(ls /proc/$egress/fd | wc -l) descriptors, $fds0 before"
		sleep 0.1
	done
	# The log took ten a second; the rest are counted once it ends.
	atf_check -o ignore $CTL stop h
	atf_check -o match:"fence h of 0: [0-9]+ more egress refusals not logged" \
	    cat fenced.log
	fenced_stop
}
hostile_cleanup() { proxy_cleanup; }

atf_test_case limits cleanup
limits_head() {
	atf_set descr "the proxy's limits: a fence's bytes per second (a lower bound only: a busy machine is slower, never faster), its connections at once (429 too-many), the idle time of a tunnel"
	atf_set require.user root
	atf_set require.progs curl
	atf_set timeout 120
}
limits_body() {
	fenced_vars
	proxy_listeners
	head -c 262144 /dev/zero > www/big
	proxy_conf > fenced.conf
	cat >> fenced.conf <<CONF
egress rate 64K
egress connections 4
egress idle 2
CONF
	fenced_start
	atf_check -o ignore $CTL boot l tier L2 egress "allowed.test:$PLAIN"
	# 256 KiB at 64 KiB/s, less the first tick's burst: 3 s at least.
	atf_check -o match:"^262144 [0-9.]+$" -o save:rate.out $CTL exec l -- \
	    curl -sS -m 60 -o /dev/null -w "%{size_download} %{time_total}\n" \
	    "http://allowed.test:$PLAIN/big"
	awk '{ exit !($2 >= 3.0) }' rate.out || \
	    atf_fail "256 KiB took $(cut -d" " -f2 rate.out) s at 64 KiB/s"
	# Four tunnels held, the fifth refused; then idle, all four closed.
	atf_check -o inline:"200 200 200 200 429\nclosed 4\n" \
	    -e inline:"fenced: denied: egress: a connection (too-many) x1 - fewer connections at once (egress connections in fenced.conf)\n" \
	    $CTL exec l -- /usr/bin/python3 -c '
import socket, sys, time
held = []
for i in range(5):
    s = socket.create_connection(("127.0.0.1", 3128))
    s.sendall(b"CONNECT allowed.test:" + sys.argv[1].encode() +
              b" HTTP/1.1\r\n\r\n")
    held.append((s, s.recv(100).split()[1].decode()))
print(" ".join(code for s, code in held))
closed = 0
for s, code in held[:4]:
    s.settimeout(20)
    if s.recv(100) == b"":
        closed += 1
print("closed", closed)' "$PLAIN"
	TOKEN=$($CTL token -r 2>/dev/null | tail -1)
	proxy_state l > state.json
	atf_check -o inline:"4\n" python3 -c '
import json
r = json.load(open("state.json"))["egress"]["recent"]
print(sum(1 for d in r if d["reason"] == "idle"))'
	# Stopped with tunnels open: the proxy ends them and serves on.
	egress=$(fenced_pid egress)
	atf_check -o ignore $CTL spawn l -- /usr/bin/python3 -c '
import socket, sys, time
held = []
for i in range(3):
    s = socket.create_connection(("127.0.0.1", 3128))
    s.sendall(b"CONNECT allowed.test:" + sys.argv[1].encode() +
              b" HTTP/1.1\r\n\r\n")
    s.recv(100)
    held.append(s)
time.sleep(60)' "$PLAIN"
	wait_until 10 sh -c "$CTL show environment l | grep -q ' 3 open'" || \
	    atf_fail "the tunnels did not open"
	atf_check -o ignore $CTL stop l
	atf_check -o ignore $CTL boot l2 tier L2 egress "allowed.test:$PLAIN"
	atf_check -o inline:"allowed listener\n" $CTL exec l2 -- \
	    curl -sS -m 10 "http://allowed.test:$PLAIN/"
	atf_check_equal "$egress" "$(fenced_pid egress)"
	fenced_stop
}
limits_cleanup() { proxy_cleanup; }

atf_test_case second_user cleanup
second_user_head() {
	atf_set descr "a second local user's fence has its own list: the first user's allowed name is refused to it, and neither sees the other's counts"
	atf_set require.user root
	atf_set require.progs curl
	atf_set timeout 120
}
second_user_body() {
	fenced_vars
	users_add 1 fpx
	fenced_run_socket
	proxy_listeners
	proxy_conf > fenced.conf
	fenced_start
	u=$(sed -n 1p users.txt)
	U="$(as_user "$u") $BIN/fencectl -s $(cat run.sock)"
	R="$BIN/fencectl -s $(cat run.sock)"
	# Each probed through the proxy before the boot answers: the
	# counts below hold the probe's two checks.  b's list has neither
	# configured target as it stands: the probe tries b's own entry
	# (unresolvable here, so not reached) and the default refused one.
	atf_check -o ignore $R boot a tier L2 require L2 \
	    egress "allowed.test:$PLAIN"
	atf_check -o ignore $U boot b tier L2 require L2 \
	    egress "refused.test:$OTHER"
	atf_check -o match:"X-Fenced-Egress: not-listed" \
	    -e match:"fenced: denied: egress: .* \\(not-listed\\) x1" $U exec b -- \
	    curl -sS -i -m 10 "http://allowed.test:$PLAIN/"
	# refused.test is listed for b but resolves nowhere.
	atf_check -o match:"X-Fenced-Egress: resolve-failed" $U exec b -- \
	    curl -sS -i -m 10 "http://refused.test:$OTHER/"
	atf_check -s exit:1 -e match:"not-found: no fence 0/a" $U show environment 0/a
	atf_check -o match:"2 allowed, 1 refused" -e ignore sh -c \
	    "$R exec a -- curl -sS -m 10 http://allowed.test:$PLAIN/ >&2; $R show environment a"
	atf_check -o match:"0 allowed, 4 refused" $U show environment b
	TOKEN=$($U token 2>/dev/null | tail -1)
	api "$TOKEN" GET /api/environments/b | sed '$d' > b.json
	atf_check -o inline:"refused.test:$OTHER egress-refused.invalid:443 allowlisted\n" \
	    python3 -c '
import json
n = json.load(open("b.json"))["boundary"]["axes"]["network"]
print(n["egress"]["allowed"]["target"], n["egress"]["refused"]["target"],
      n["verdict"])'

	# The host's proxy port is nobody's: nothing listens on 3128 here.
	atf_check -s not-exit:0 -e ignore $(as_user "$u") \
	    curl -sS -m 3 "http://127.0.0.1:3128/"
	fenced_stop
}
second_user_cleanup() { proxy_cleanup; }

atf_test_case host_address cleanup
host_address_head() {
	atf_set descr "the proxy never connects to the host's own addresses (a name resolving to an IPv4 or IPv6 address of an interface the test adds, a listener on all addresses behind it) nor to fenced's API; an egress host mapping reaches its address at the one port it names and no other; the same for a second local user's fence"
	atf_set require.user root
	atf_set require.progs "curl ip"
	atf_set timeout 180
}
host_address_body() {
	fenced_vars
	users_add 1 fpa
	fenced_run_socket
	# An interface of the test's own with addresses public by their
	# class (192.88.99/24, the retired 6to4 relay anycast of RFC 7526;
	# 2001:2::/48, for benchmarks, RFC 5180) and a private one.  All are
	# this host's: nothing sent to them leaves the machine.
	IF=fpa$$
	ip link add "$IF" type bridge 2> ip.err ||
	    atf_skip "cannot add an interface: $(cat ip.err)"
	echo "$IF" > if.name
	ip link set "$IF" up || atf_fail "ip link set $IF up"
	# Three in a row of 192.88.99/24: the interface's, one routed to it
	# that nobody answers (no port on the bridge: the ARP goes nowhere,
	# the connect fails after its tries), one made the host's late.  A
	# three whose routes another run holds is passed over.
	n=$(($$ % 84)) i=0
	while :; do
		PUB=192.88.99.$((n * 3 + 1))
		BLACK=192.88.99.$((n * 3 + 2))
		LATE=192.88.99.$((n * 3 + 3))
		if ip route add "$BLACK/32" dev "$IF" 2> /dev/null; then
			ip route add "$LATE/32" dev "$IF" 2> /dev/null && break
			ip route del "$BLACK/32" dev "$IF"
		fi
		i=$((i + 1))
		[ $i -lt 84 ] || atf_fail "192.88.99/24 is all taken"
		n=$(((n + 1) % 84))
	done
	PRIV=10.254.$(($$ / 250 % 250 + 1)).$(($$ % 250 + 1))
	PUB6=2001:2::$(printf %x $(($$ % 65536)))
	ip addr add "$PUB/32" dev "$IF" && ip addr add "$PRIV/32" dev "$IF" ||
	    atf_fail "ip addr add"
	ip -6 addr add "$PUB6/128" dev "$IF" nodad 2> ip.err ||
	    atf_skip "no IPv6 address on an interface: $(cat ip.err)"
	proxy_listeners self.test="$PUB" selfpriv.test="$PRIV" \
	    self6.test="$PUB6" late.test="$BLACK,$LATE"
	# A host service bound to every address, v4 and v6, on two ports.
	ANY=$("$REGRESS/t_port") && ANY2=$("$REGRESS/t_port") ||
	    atf_fail "no free port"
	API=$(fenced_port)
	mkdir -p any
	echo "a host service" > any/index.html
	for p in $ANY $ANY2; do
		(cd any && exec python3 -m http.server "$p" --bind ::) \
		    > "any$p.log" 2>&1 &
		echo $! >> listeners.pids
	done
	for p in $ANY $ANY2; do
		wait_until 10 curl -s -o /dev/null "http://$PUB:$p/" ||
		    atf_fail "the listener on [::]:$p did not come up"
		wait_until 10 curl -s -o /dev/null "http://[$PUB6]:$p/" ||
		    atf_fail "the listener on [::]:$p is not dual-stack"
	done
	got2=$(grep -c '"GET / ' "any$ANY2.log")

	# fenced's own API is refused as a destination when the file is
	# read, on any loopback address; the form without a port too.
	proxy_conf > api.conf
	echo "egress host api.test 127.0.0.2 port $API" >> api.conf
	atf_check -s exit:1 -e match:"egress host api.test 127.0.0.2 port $API: that is fenced's own API" \
	    "$BIN/fenced" -n -f api.conf
	proxy_conf > old.conf
	echo "egress host mapped.test $PRIV" >> old.conf
	atf_check -s exit:1 -e match:"name the one port it is for: egress host mapped.test $PRIV port NUMBER" \
	    "$BIN/fenced" -n -f old.conf

	proxy_conf > fenced.conf
	cat >> fenced.conf <<CONF
egress host "mapped.test" $PRIV port $ANY
egress host "apiself.test" $PRIV port $API
egress connect timeout 20
CONF
	fenced_start
	u=$(sed -n 1p users.txt)
	U="$(as_user "$u") $BIN/fencectl -s $(cat run.sock)"
	R="$BIN/fencectl -s $(cat run.sock)"
	for who in R U; do
		eval "C=\$$who"
		k=h$(echo "$who" | tr RU ru)
		atf_check -o ignore $C boot "$k" tier L2 egress \
		    "self.test:$ANY" "selfpriv.test:$ANY" "mapped.test:$ANY" \
		    "mapped.test:$ANY2" "apiself.test:$API" "self.test:$API" \
		    "self6.test:$ANY"
		# Resolved to the host's own public-looking address: refused,
		# by plain http and by CONNECT.
		atf_check -o match:"X-Fenced-Egress: host-address" \
		    -e match:"fenced: denied: egress: .* \\(host-address\\) x1" \
		    -o not-match:"a host service" $C exec "$k" -- \
		    curl -sS -i -m 10 "http://self.test:$ANY/"
		atf_check -s not-exit:0 -e match:"403" $C exec "$k" -- \
		    curl -sS -m 10 -p "http://self.test:$ANY/"
		atf_check -o match:"X-Fenced-Egress: host-address" \
		    -e match:"fenced: denied: egress: .* \\(host-address\\) x1" $C exec \
		    "$k" -- curl -sS -i -m 10 "http://self.test:$API/"
		atf_check -o match:"X-Fenced-Egress: host-address" \
		    -e match:"fenced: denied: egress: .* \\(host-address\\) x1" \
		    -o not-match:"a host service" $C exec "$k" -- \
		    curl -sS -i -m 10 "http://self6.test:$ANY/"
		# Resolved to the private one: refused as private.
		atf_check -o match:"X-Fenced-Egress: private-address" \
		    -e match:"fenced: denied: egress: .* \\(private-address\\) x1" $C exec \
		    "$k" -- curl -sS -i -m 10 "http://selfpriv.test:$ANY/"
		# The exact address and port the administrator named: reached.
		atf_check -o inline:"a host service\n" $C exec "$k" -- \
		    curl -sS -m 10 "http://mapped.test:$ANY/"
		atf_check -o inline:"a host service\n" $C exec "$k" -- \
		    curl -sS -m 10 -p "http://mapped.test:$ANY/"
		# Another port of it, listed and listening: refused.
		atf_check -o match:"X-Fenced-Egress: not-mapped" \
		    -e match:"fenced: denied: egress: .* \\(not-mapped\\) x1" \
		    -o not-match:"a host service" $C exec "$k" -- \
		    curl -sS -i -m 10 "http://mapped.test:$ANY2/"
		atf_check -s not-exit:0 -e match:"403" $C exec "$k" -- \
		    curl -sS -m 10 -p "http://mapped.test:$ANY2/"
		# A mapping to the host's own address at the API's port.
		atf_check -o match:"X-Fenced-Egress: fenced-listener" \
		    -e match:"fenced: denied: egress: .* \\(fenced-listener\\) x1" $C exec \
		    "$k" -- curl -sS -i -m 10 "http://apiself.test:$API/"
		# The addresses themselves are no names of the list.
		atf_check -o match:"X-Fenced-Egress: not-listed" \
		    -e match:"fenced: denied: egress: .* \\(not-listed\\) x1" $C exec \
		    "$k" -- curl -sS -i -m 10 "http://$PUB:$ANY/"
	done
	# An address that becomes the host's between the resolver's answer
	# and the connection: late.test is first the one nobody answers,
	# then LATE, made the host's own while the first is tried.  The
	# connection to it is made and closed unused.  (The probe at the
	# boot tries the configured allowed.test, never late.test: a failed
	# neighbour entry it left would make both fail at once.)
	atf_check -o ignore $R boot late tier L2 egress "allowed.test:$PLAIN" \
	    "late.test:$ANY"
	$R exec late -- curl -sS -i -m 30 "http://late.test:$ANY/" \
	    > late.out 2>&1 &
	cpid=$!
	# Checked and kept at the answer, being tried: now it is made the
	# host's, while the first address's connect waits for its ARP.
	wait_until 30 grep -q "late.test:$ANY trying $BLACK\$" fenced.log ||
	    atf_fail "late.test's first address was not tried"
	ip addr add "$LATE/32" dev "$IF" || atf_fail "ip addr add $LATE"
	wait $cpid
	atf_check -o match:"X-Fenced-Egress: host-address" \
	    -o match:"fenced: denied: egress: late.test:$ANY \\(host-address\\) x1" \
	    -o match:"by the time it was connected" \
	    -o not-match:"a host service" cat late.out
	# Only the mapped port was ever served to a fence (the probes and
	# the checks above): nothing reached the other.
	atf_check_equal "$got2" "$(grep -c '"GET / ' "any$ANY2.log")"
	atf_check -o match:"fence hu of [0-9]+: egress GET self.test:$ANY refused: host-address" \
	    cat fenced.log
	fenced_stop
}
host_address_cleanup() {
	proxy_cleanup
	IF=$(cat if.name 2>/dev/null)
	case "$IF" in
	fpa[0-9]*) ip link del "$IF" 2>/dev/null ;;
	esac
	true
}

atf_test_case kill_proxy cleanup
kill_proxy_head() {
	atf_set descr "SIGKILL of the egress proxy while a connection is relayed takes the daemon down in order, non-zero, and nothing of the fence is left"
	atf_set require.user root
	atf_set require.progs curl
	atf_set timeout 120
}
kill_proxy_body() {
	fenced_vars
	proxy_listeners
	proxy_conf > fenced.conf
	fenced_start
	atf_check -o ignore $CTL boot k tier L2 egress "allowed.test:$PLAIN"
	pid1=$($CTL show environment k | awk '$1 == "pid:" { print $2 }')
	# A tunnel held open from inside, in the background.
	atf_check -o ignore $CTL spawn k -- /usr/bin/python3 -c '
import socket, sys, time
s = socket.create_connection(("127.0.0.1", 3128))
s.sendall(b"CONNECT allowed.test:" + sys.argv[1].encode() + b" HTTP/1.1\r\n\r\n")
print(s.recv(100))
time.sleep(60)' "$PLAIN"
	i=0
	until $CTL show environment k | grep -q " 1 open"; do
		i=$((i + 1))
		[ $i -lt 100 ] || atf_fail "the tunnel did not open"
		sleep 0.1
	done
	all=$(fenced_pids)
	victim=$(fenced_pid egress)
	kill -9 $victim
	fenced_wait_exit 5 || atf_fail "fenced lived on after its proxy was killed"
	atf_check_equal "$FENCED_STATUS" 1
	for p in $all $pid1; do
		[ ! -d /proc/$p ] || atf_fail "process $p left behind"
	done
	atf_check -o match:"egress \\(pid $victim\\) terminated by signal 9" \
	    cat fenced.log
}
kill_proxy_cleanup() { proxy_cleanup; }

atf_init_test_cases() {
	atf_add_test_case allowlisted
	atf_add_test_case resolver
	atf_add_test_case hostile
	atf_add_test_case limits
	atf_add_test_case second_user
	atf_add_test_case host_address
	atf_add_test_case kill_proxy
}
