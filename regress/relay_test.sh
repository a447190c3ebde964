#! /usr/bin/atf-sh
# The port relay (issue 30, docs/interactive.md "The HTTP API"): a
# server inside a fence (regress/t_webapp.py) reached through fenced's
# own listener by the path form with the host token and by the host
# form with a ticket's cookie; bodies both ways exact, chunked, kept
# alive, WebSockets; 502 for a closed port; and the attacks: another
# local user, a fence's own command, forged, used and expired tickets,
# a rebinding Host, a foreign Origin, a connection flood, a client
# that never reads.

. "$(atf_get_srcdir)/lib.subr"

E=/api/environments
PY=/usr/bin/python3
# The port the test's server listens on inside: a free one of the host's,
# since an L1.5 fence shares the host's network with other suites.
APP=

token_of() {
	"$BIN/fencectl" -s "$PWD/ctl.sock" token 2>/dev/null | tail -n 1
}

# relay_setup TIER KEY [conf lines]: a daemon, a token in $T, fence KEY
# of TIER booted with the test's server listening on $APP inside.
relay_setup() {
	fenced_vars
	fenced_conf > fenced.conf
	[ -z "${3:-}" ] || echo "$3" >> fenced.conf
	fenced_start
	T=$(token_of)
	[ -n "$T" ] || atf_fail "no token"
	P=$(fenced_port)
	relay_boot "$T" "$1" "$2"
}

# relay_boot TOKEN TIER KEY: the fence, the server in it, and its
# hostSuffix in $SUFFIX.
relay_boot() {
	[ -n "$APP" ] || APP=$("$REGRESS/t_port") || atf_fail "no free port"
	export APP
	call "$1" POST $E/$3 "{\"tier\":\"$2\"}"
	expect 201 '"state":"running"'
	SUFFIX=$(sed -n 's/.*"hostSuffix":"\([^"]*\)".*/\1/p' body.out)
	[ -n "$SUFFIX" ] || atf_fail "no hostSuffix: $(cat body.out)"
	curl -sS -m 30 -X PUT -H "x-voicebox-host-token: $1" --data-binary \
	    @"$TOPDIR/regress/t_webapp.py" -o /dev/null -w '%{http_code}' \
	    "http://127.0.0.1:$(fenced_port)$E/$3/files/t_webapp.py" \
	    > put.out || atf_fail "cannot put the server"
	grep -q '^20' put.out || atf_fail "put the server: $(cat put.out)"
	call "$1" POST $E/$3/processes \
	    "{\"argv\":[\"python3\",\"t_webapp.py\",\"$APP\"]}"
	expect 201
	wait_until 20 app_up "$1" "$3" || atf_fail "the server in $3 never \
	    answered: $(cat app.out)"
}

app_up() {
	curl -sS -m 5 -H "x-voicebox-host-token: $1" \
	    "http://127.0.0.1:$(fenced_port)$E/$2/ports/$APP/up" > app.out \
	    2>&1 && grep -q '^GET /up HTTP/1.1' app.out
}

# rcurl ARGS...: curl's body, then the status alone on the last line.
rcurl() {
	curl -sS -m 30 -w '\n%{http_code}\n' "$@" > answer.out 2>curl.err ||
	    { echo 000 >> answer.out; }
	tail -n 1 answer.out > status.out
	sed '$d' answer.out > body.out
}

ticket_url() {
	call "$1" POST $E/$2/tickets "{\"port\":$3}"
	expect 200 '"url":"http://' '"expiresInMs":'
	field url
}

atf_test_case path_form cleanup
path_form_head() {
	atf_set descr "the path form with the token: the head and body as sent, 1 MiB echoed exact, a chunked upload, two requests on one connection, a WebSocket; the token and fenced's cookie never reach the server; 502 for a closed port; 401 without the token"
	atf_set require.user root
	atf_set timeout 180
}
path_form_body() {
	relay_setup L1.5 w
	U="http://127.0.0.1:$P$E/w/ports/$APP"
	rcurl -H "x-voicebox-host-token: $T" -H "Cookie: a=1; fenced_port=x; b=2" \
	    "$U/hello/there?x=1&y=2"
	expect 200 '^GET /hello/there\?x=1&y=2 HTTP/1.1$' '^Cookie: a=1; b=2$'
	grep -qi "voicebox" body.out && atf_fail "the token reached the \
	    server: $(cat body.out)"
	grep -q "fenced_port" body.out && atf_fail "fenced's cookie reached \
	    the server"
	# Only the cookie: no Cookie header at all.
	rcurl -H "x-voicebox-host-token: $T" -H "Cookie: fenced_port=x" "$U/"
	expect 200 '^GET / HTTP/1.1$'
	grep -qi '^cookie' body.out && atf_fail "a Cookie header passed"
	# The path without its last slash is /.
	rcurl -H "x-voicebox-host-token: $T" "$U"
	expect 200 '^GET / HTTP/1.1$'

	head -c 1048576 /dev/urandom > big.bin
	curl -sS -m 60 -H "x-voicebox-host-token: $T" --data-binary @big.bin \
	    -o big.out "$U/echo" || atf_fail "POST 1 MiB"
	cmp -s big.bin big.out || atf_fail "1 MiB not echoed exact: \
	    $(wc -c < big.out) bytes"
	sum=$(sha256sum big.bin | cut -d' ' -f1)
	rcurl -H "x-voicebox-host-token: $T" -H "Transfer-Encoding: chunked" \
	    --data-binary @big.bin "$U/sum"
	expect 200 "^1048576 $sum\$"
	# Bigger than `http body max' (2 MiB): a relayed body streams.
	head -c 3145728 /dev/urandom > big3.bin
	sum=$(sha256sum big3.bin | cut -d' ' -f1)
	rcurl -H "x-voicebox-host-token: $T" --data-binary @big3.bin "$U/sum"
	expect 200 "^3145728 $sum\$"

	curl -sS -m 30 -v -H "x-voicebox-host-token: $T" "$U/one" "$U/two" \
	    > two.out 2> two.err || atf_fail "two requests"
	grep -q 'Re-using existing connection' two.err || atf_fail "not \
	    kept alive: $(cat two.err)"
	grep -q '^GET /one HTTP/1.1' two.out && grep -q '^GET /two HTTP/1.1' \
	    two.out || atf_fail "two requests: $(cat two.out)"

	atf_check -o inline:"ws ok\n" $PY "$TOPDIR/regress/relay_ws.py" \
	    "ws://127.0.0.1:$P$E/w/ports/$APP/ws" "$T"
	atf_check -s not-exit:0 -e match:"401" \
	    $PY "$TOPDIR/regress/relay_ws.py" \
	    "ws://127.0.0.1:$P$E/w/ports/$APP/ws" ""
	# Authorization: Bearer is the token too, and never reaches the
	# server; another scheme of the server's own passes.
	atf_check -o inline:"ws ok\n" $PY "$TOPDIR/regress/relay_ws.py" \
	    "ws://127.0.0.1:$P$E/w/ports/$APP/ws" "$T" bearer
	rcurl -H "Authorization: bearer  $T" "$U/b"
	expect 200 '^GET /b HTTP/1.1$'
	grep -qi -e "$T" -e "^authorization" body.out && atf_fail "the \
	    bearer reached the server: $(cat body.out)"
	rcurl -H "x-voicebox-host-token: $T" -H "Authorization: Basic eDp5" \
	    "$U/basic"
	expect 200 '^Authorization: Basic eDp5$'
	rcurl -H "x-voicebox-host-token: $T" \
	    -H "Authorization: Bearer $(printf %064d 7)" \
	    "$U/two"
	expect 400 'different tokens'
	# A file larger than `http body max' is authorised from its head.
	rcurl -X PUT -H "Authorization: Bearer $T" --data-binary @big3.bin \
	    "http://127.0.0.1:$P$E/w/files/bearer.bin"
	expect 201 '"size":3145728'
	rcurl -X PUT -H "Authorization: Bearer $(printf %064d 7)" \
	    --data-binary @big3.bin "http://127.0.0.1:$P$E/w/files/no.bin"
	expect 413 'no valid token'

	rcurl -H "x-voicebox-host-token: $T" "http://127.0.0.1:$P$E/w/ports/8001/"
	expect 502 '"error":"port-closed"' 'nothing listens on port 8001'
	rcurl "$U/"
	expect 401 '"error":"unauthorized"'
	rcurl -H "x-voicebox-host-token: 00$T" "$U/"
	expect 401 '"error":"unauthorized"'
	rcurl -H "x-voicebox-host-token: $T" "http://127.0.0.1:$P$E/nope/ports/$APP/"
	expect 404 '"error":"not-found"'
	rcurl -H "x-voicebox-host-token: $T" "http://127.0.0.1:$P$E/w/ports/0/"
	expect 404
	# The API itself is as before on the same listener.
	call "$T" GET $E/w
	expect 200 '"key":"w"'
	# A relayed request pipelined behind an API request in one write
	# is evhttp's already: refused, not half relayed.
	cat > pipe.py <<'PY'
import socket, sys
import os; APP = os.environ["APP"]
port, tok = sys.argv[1], sys.argv[2]
s = socket.create_connection(("127.0.0.1", int(port)), timeout=20)
h = "Host: 127.0.0.1:%s\r\nx-voicebox-host-token: %s\r\n\r\n" % (port, tok)
s.sendall(("GET /api/environments/w HTTP/1.1\r\n" + h +
    "GET /api/environments/w/ports/" + APP + "/p HTTP/1.1\r\n" + h).encode())
data = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    data += b
print(data.decode(errors="replace"))
PY
	atf_check -o match:"HTTP/1.1 200 OK" -o match:"HTTP/1.1 400 Bad Request" \
	    -o match:"pipelined behind another" -o not-match:"GET /p HTTP" \
	    $PY pipe.py "$P" "$T"
}
path_form_cleanup() {
	fenced_vars
	fenced_cleanup
}

atf_test_case keepalive_reauth cleanup
keepalive_reauth_head() {
	atf_set descr "every request of a kept-alive relayed connection is authorised again: a deleted token stops the next one; another fence or port on the same connection is refused"
	atf_set require.user root
	atf_set timeout 120
}
keepalive_reauth_body() {
	relay_setup L1.5 w
	T2=$("$BIN/fencectl" -s "$PWD/ctl.sock" token t2 2>/dev/null | tail -n 1)
	[ -n "$T2" ] || atf_fail "no second token"
	cat > ka.py <<'PY'
import socket, sys, time
import os; APP = os.environ["APP"]
port, tok, key, ctl = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
s = socket.create_connection(("127.0.0.1", int(port)), timeout=20)
def req(path):
    s.sendall(("GET /api/environments/%s/ports/%s HTTP/1.1\r\nHost: "
        "127.0.0.1:%s\r\nx-voicebox-host-token: %s\r\n\r\n" %
        (key, path, port, tok)).encode())
    data = b""
    while b"\r\n\r\n" not in data:
        data += s.recv(65536)
    head, rest = data.split(b"\r\n\r\n", 1)
    n = int([l.split(b":")[1] for l in head.split(b"\r\n")
        if l.lower().startswith(b"content-length")][0])
    while len(rest) < n:
        rest += s.recv(65536)
    return head.split(b"\r\n")[0].decode() + " " + rest.decode()[:40]
print(req(APP + "/a"))
if ctl:
    import subprocess
    r = subprocess.run(ctl, capture_output=True)
    assert r.returncode == 0, r.stderr
print(req(APP + "/b"))
PY
	atf_check -o match:"^HTTP/1.1 200 OK GET /a" -o match:"^HTTP/1.1 401 .*unauthorized" \
	    $PY ka.py "$P" "$T2" w "$BIN/fencectl" -s "$PWD/ctl.sock" token -d t2
	# Another port, another fence: the connection is one port's.
	call "$T" POST $E/v '{"tier":"L1.5"}'
	expect 201
	cat > two.py <<'PY'
import socket, sys
import os; APP = os.environ["APP"]
port, tok = sys.argv[1], sys.argv[2]
s = socket.create_connection(("127.0.0.1", int(port)), timeout=20)
for path in ("w/ports/" + APP + "/a", "v/ports/" + APP + "/a"):
    s.sendall(("GET /api/environments/%s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\n"
        "x-voicebox-host-token: %s\r\n\r\n" % (path, port, tok)).encode())
data = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    data += b
print(data.decode(errors="replace"))
PY
	atf_check -o match:"HTTP/1.1 200 OK" -o match:"HTTP/1.1 400 Bad Request" \
	    -o match:"one port of one environment" $PY two.py "$P" "$T"
}
keepalive_reauth_cleanup() {
	fenced_vars
	fenced_cleanup
}

atf_test_case host_form cleanup
host_form_head() {
	atf_set descr "the host form: a ticket's URL sets fenced_port and redirects to /, then the cookie reaches the server's pages and its WebSocket; a used, forged or expired ticket, another port's or label's name, a rebinding Host and a foreign Origin are refused"
	atf_set require.user root
	atf_set timeout 180
}
host_form_body() {
	fenced_vars
	FENCED_BIN=$HOOKS/fenced
	export FENCED_TEST_TICKET_MS=2000
	relay_setup L2 w
	url=$(ticket_url "$T" w $APP)
	host="$APP-$SUFFIX:$P"
	case "$url" in
	"http://$host/.fenced/ticket?t="*) ;;
	*) atf_fail "ticket URL $url, expected one on $host" ;;
	esac
	# curl resolves *.localhost to loopback itself, as Chromium does.
	rcurl -c jar -b jar "$url"
	expect 303
	grep -q "fenced_port" jar || atf_fail "no cookie: $(cat jar)"
	grep -q "#HttpOnly_$APP-$SUFFIX" jar || atf_fail "not HttpOnly"
	rcurl -c jar -b jar "http://$host/page?q=1"
	expect 200 '^GET /page\?q=1 HTTP/1.1$' "^Host: $host\$"
	grep -q fenced_port body.out && atf_fail "the cookie reached the server"
	# The server's own Bearer (not shaped as a host token) is its.
	rcurl -c jar -b jar -H "Authorization: Bearer app.jwt.x" \
	    "http://$host/auth"
	expect 200 '^GET /auth HTTP/1.1$' '^Authorization: Bearer app.jwt.x$'
	# The host token as Bearer does instead of the cookie.
	rcurl -H "Authorization: Bearer $T" "http://$host/tok"
	expect 200 '^GET /tok HTTP/1.1$'
	grep -q "$T" body.out && atf_fail "the token reached the server"
	# The same Origin is the page's own.
	rcurl -b jar -H "Origin: http://$host" -X POST -d 'x=1' "http://$host/echo"
	expect 200 '^x=1$'
	cookie=$(awk '$6 == "fenced_port" { print $7 }' jar)
	cat > wsh.py <<'PY'
import sys, websocket
# Python's resolver does not make *.localhost loopback as browsers do.
url, host, cookie, origin = sys.argv[1:5]
ws = websocket.create_connection(url, timeout=20, cookie=cookie, host=host,
    origin=origin, suppress_origin=(origin == ""))
ws.send("hi")
assert ws.recv() == "echo:hi"
ws.close()
print("ws ok")
PY
	atf_check -o inline:"ws ok\n" $PY wsh.py "ws://127.0.0.1:$P/ws" "$host" \
	    "fenced_port=$cookie" "http://$host"
	atf_check -s not-exit:0 -e match:"403" $PY wsh.py "ws://127.0.0.1:$P/ws" "$host" \
	    "fenced_port=$cookie" "http://evil.test"
	atf_check -s not-exit:0 -e match:"401" $PY wsh.py "ws://127.0.0.1:$P/ws" "$host" \
	    "fenced_port=00$cookie" ""

	# Used, forged, expired.
	rcurl "$url"
	expect 403 '"error":"bad-ticket"'
	rcurl "http://$host/.fenced/ticket?t=$(printf '%064d' 7)"
	expect 403 '"error":"bad-ticket"'
	url2=$(ticket_url "$T" w $APP)
	sleep 3
	rcurl "$url2"
	expect 403 '"error":"bad-ticket"'
	# A ticket of one port is no ticket on another port's name.
	url3=$(ticket_url "$T" w 8001)
	rcurl "$(echo "$url3" | sed "s|//8001-|//$APP-|")"
	expect 403 '"error":"bad-ticket"'
	# The cookie is the port's: not another port's, label's or key's.
	rcurl -b "fenced_port=$cookie" "http://8001-$SUFFIX:$P/"
	expect 401
	other=$(echo "$SUFFIX" | sed 's/^./0/; s/^0\(.\)/1\1/')
	[ "$other" != "$SUFFIX" ] || other="0000000000000000.w.localhost"
	rcurl -b "fenced_port=$cookie" "http://$APP-$other:$P/"
	expect 401
	# With the owner's token instead: the wrong label is no fence.
	rcurl -H "x-voicebox-host-token: $T" "http://$APP-$other:$P/"
	expect 404 '"error":"not-found"'
	# A foreign Origin, even with the cookie.
	rcurl -b "fenced_port=$cookie" -H "Origin: http://evil.test" "http://$host/"
	expect 403 '"error":"bad-origin"'
	rcurl -b "fenced_port=$cookie" -H "Origin: http://127.0.0.1:$P" "http://$host/"
	expect 403 '"error":"bad-origin"'
	# A rebinding Host: a name not ours reaches neither API nor port.
	rcurl -b "fenced_port=$cookie" -H "Host: evil.test:$P" "http://127.0.0.1:$P/"
	expect 421 '"error":"bad-host"'
	rcurl -b "fenced_port=$cookie" -H "Host: $APP-$SUFFIX.evil.test:$P" \
	    "http://127.0.0.1:$P/"
	expect 421
	rcurl -b "fenced_port=$cookie" -H "Host: $APP-$SUFFIX:1" "http://127.0.0.1:$P/"
	expect 421
	# The relay's names are not the API's.
	rcurl -b "fenced_port=$cookie" -H "x-voicebox-host-token: $T" "http://$host$E"
	expect 200 "^GET $E HTTP/1.1\$"
	# The cookie lasts while the fence runs: not after its stop.
	call "$T" DELETE $E/w
	expect 200
	rcurl -b "fenced_port=$cookie" "http://$host/"
	expect 401
}
host_form_cleanup() {
	fenced_vars
	fenced_cleanup
}

atf_test_case other_user cleanup
other_user_head() {
	atf_set descr "another local user, with a token of their own, reaches no port of root's fence: path form, host name, a ticket of their own, root's ticket name; a fence's own command cannot reach the listener; the daemon serves throughout"
	atf_set require.user root
	atf_set timeout 180
}
other_user_body() {
	fenced_vars
	users_add 1 frl
	fenced_run_socket
	h=$(fenced_homes)
	fenced_conf | sed -e "s|^homes .*|homes \"$h/%u\"|" > fenced.conf
	fenced_start
	T=$(token_of)
	P=$(fenced_port)
	relay_boot "$T" L1.5 w
	ub=$(sed -n 1p users.txt)
	tb=$($(as_user "$ub") "$BIN/fencectl" -s "$(cat run.sock)" token \
	    2>/dev/null | tail -n 1)
	[ -n "$tb" ] || atf_fail "no token for $ub"
	rcurl -H "x-voicebox-host-token: $tb" "http://127.0.0.1:$P$E/w/ports/$APP/"
	expect 404 '"error":"not-found"'
	rcurl -H "x-voicebox-host-token: $tb" "http://$APP-$SUFFIX:$P/"
	expect 404 '"error":"not-found"'
	call "$tb" POST $E/w/tickets "{\"port\":$APP}"
	expect 404 '"error":"not-found"'
	# b's own fence of the same key: b's ticket is for b's label only.
	relay_boot "$tb" L1.5 w
	bsuffix=$SUFFIX
	url=$(ticket_url "$tb" w $APP)
	root_suffix=$(curl -sS -H "x-voicebox-host-token: $T" \
	    "http://127.0.0.1:$P$E/w" | sed -n 's/.*"hostSuffix":"\([^"]*\)".*/\1/p')
	[ "$root_suffix" != "$bsuffix" ] || atf_fail "two fences, one label"
	rcurl "$(echo "$url" | sed "s|$bsuffix|$root_suffix|")"
	expect 403 '"error":"bad-ticket"'
	# Shown on a name it is not for, it is spent.
	rcurl -c jarb -b jarb "$url"
	expect 403 '"error":"bad-ticket"'
	url=$(ticket_url "$tb" w $APP)
	rcurl -c jarb -b jarb "$url"
	expect 303
	cookie=$(awk '$6 == "fenced_port" { print $7 }' jarb)
	rcurl -b "fenced_port=$cookie" "http://$APP-$root_suffix:$P/"
	expect 401
	# An L1.5 fence shares the host's network: its command reaches the
	# listener, and is refused like anyone without the token or cookie.
	cat > infence.py <<PY
import socket
def ask(host, path, extra=""):
    s = socket.create_connection(("127.0.0.1", $P), timeout=10)
    s.sendall(("GET %s HTTP/1.1\\r\\nHost: %s\\r\\n%s\\r\\n" % (path, host, extra)).encode())
    print(s.recv(4096).split(b"\\r\\n")[0].decode())
ask("127.0.0.1:$P", "$E/w/ports/$APP/")
ask("$APP-$root_suffix:$P", "/")
ask("$APP-$root_suffix:$P", "/", "Cookie: fenced_port=%064d\\r\\n" % 1)
ask("$APP-$root_suffix:$P", "/.fenced/ticket?t=%064d" % 2)
ask("evil.test:$P", "/")
PY
	curl -sS -m 30 -X PUT -H "x-voicebox-host-token: $T" --data-binary \
	    @infence.py -o /dev/null "http://127.0.0.1:$P$E/w/files/infence.py"
	call "$T" POST $E/w/exec '{"argv":["python3","infence.py"]}'
	expect 200 '"exitCode":0'
	atf_check_equal "$(field stdout)" "HTTP/1.1 401 Unauthorized\\nHTTP/1.1 \
401 Unauthorized\\nHTTP/1.1 401 Unauthorized\\nHTTP/1.1 403 Forbidden\\n\
HTTP/1.1 421 Misdirected Request\\n"
	# Root's pages still answer.
	rcurl -H "x-voicebox-host-token: $T" "http://127.0.0.1:$P$E/w/ports/$APP/ok"
	expect 200 '^GET /ok HTTP/1.1$'
}
other_user_cleanup() {
	fenced_vars
	fenced_cleanup
}

atf_test_case flood cleanup
flood_head() {
	atf_set descr "a connection flood to a port is bounded by the user's connections (429), anonymous connections never reach a fence, a client that never reads holds a bounded relay, and another user is answered throughout"
	atf_set require.user root
	atf_set timeout 180
}
flood_body() {
	fenced_vars
	users_add 1 frf
	fenced_run_socket
	h=$(fenced_homes)
	fenced_conf | sed -e "s|^homes .*|homes \"$h/%u\"|" > fenced.conf
	echo "http connections max 64 per user 8" >> fenced.conf
	echo "http timeout 2" >> fenced.conf
	fenced_start
	T=$(token_of)
	P=$(fenced_port)
	relay_boot "$T" L1.5 w
	ub=$(sed -n 1p users.txt)
	tb=$($(as_user "$ub") "$BIN/fencectl" -s "$(cat run.sock)" token \
	    2>/dev/null | tail -n 1)
	cat > flood.py <<'PY'
import socket, sys, time
import os; APP = os.environ["APP"]
port, tok, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
socks, codes = [], {}
for i in range(n):
    s = socket.create_connection(("127.0.0.1", int(port)), timeout=20)
    hdr = ("x-voicebox-host-token: %s\r\n" % tok) if tok else ""
    # Upgrade: each is a tunnel held open.
    s.sendall(("GET /api/environments/w/ports/" + APP + "/ws HTTP/1.1\r\n"
        "Host: 127.0.0.1:%s\r\n%sUpgrade: websocket\r\nConnection: Upgrade"
        "\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        "Sec-WebSocket-Version: 13\r\n\r\n" % (port, hdr)).encode())
    line = s.recv(4096).split(b"\r\n")[0].decode()
    code = line.split(" ")[1] if " " in line else "closed"
    codes[code] = codes.get(code, 0) + 1
    socks.append(s)
print(" ".join("%s=%d" % kv for kv in sorted(codes.items())))
sys.stdout.flush()
time.sleep(float(sys.argv[4]) if len(sys.argv) > 4 else 0)
PY
	$PY flood.py "$P" "$T" 20 8 > flood.out &
	fpid=$!
	wait_until 30 grep -q = flood.out || atf_fail "flood: $(cat flood.out)"
	grep -q "101=8 429=12" flood.out || atf_fail "flood: $(cat flood.out)"
	# Another user is answered while the 8 are held.
	rcurl -H "x-voicebox-host-token: $tb" "http://127.0.0.1:$P$E"
	expect 200 '"environments":\[\]'
	kill $fpid 2>/dev/null; wait $fpid 2>/dev/null
	# Anonymous: refused before any tunnel.
	atf_check -o match:"^401=20" $PY flood.py "$P" "" 20
	# A client that never reads 64 MiB of answer holds a bounded relay.
	cat > slow.py <<'PY'
import socket, sys, time
import os; APP = os.environ["APP"]
port, tok = sys.argv[1], sys.argv[2]
s = socket.create_connection(("127.0.0.1", int(port)))
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.sendall(("GET /api/environments/w/ports/" + APP + "/flood HTTP/1.1\r\nHost: "
    "127.0.0.1:%s\r\nx-voicebox-host-token: %s\r\n\r\n" % (port, tok)).encode())
time.sleep(30)
PY
	broker=$(fenced_pid broker)
	rss0=$(status_field "$broker" VmRSS | awk '{print $1}')
	$PY slow.py "$P" "$T" &
	spid=$!
	sleep 5
	rss1=$(status_field "$broker" VmRSS | awk '{print $1}')
	rcurl -H "x-voicebox-host-token: $tb" "http://127.0.0.1:$P$E"
	expect 200
	kill $spid 2>/dev/null; wait $spid 2>/dev/null
	[ $((rss1 - rss0)) -lt 16384 ] || atf_fail "the broker grew from \
	    $rss0 to $rss1 KiB for a client that does not read"
	rcurl -H "x-voicebox-host-token: $T" "http://127.0.0.1:$P$E/w/ports/$APP/after"
	expect 200 '^GET /after HTTP/1.1$'
	# A kept-alive relayed connection whose next head never ends is
	# closed after `http timeout' (2 s), as an API request would be.
	cat > loris.py <<'PY'
import socket, sys, time
import os; APP = os.environ["APP"]
port, tok = sys.argv[1], sys.argv[2]
s = socket.create_connection(("127.0.0.1", int(port)), timeout=20)
s.sendall(("GET /api/environments/w/ports/" + APP + "/a HTTP/1.1\r\nHost: "
    "127.0.0.1:%s\r\nx-voicebox-host-token: %s\r\n\r\n" % (port, tok)).encode())
time.sleep(1)
s.recv(65536)
s.sendall(("GET /api/environments/w/ports/" + APP + "/b HTTP/1.1\r\nHost: 127").encode())
t = time.monotonic()
while s.recv(65536):
    pass
print("closed" if time.monotonic() - t < 10 else "held")
PY
	atf_check -o inline:"closed\n" $PY loris.py "$P" "$T"
}
flood_cleanup() {
	fenced_vars
	fenced_cleanup
}

atf_test_case fencectl_port cleanup
fencectl_port_head() {
	atf_set descr "fencectl port KEY PORT prints the path form's URL and a ticket URL of the host form, which a browser's cookie jar takes once; another user's fencectl port of root's fence is not-found"
	atf_set require.user root
	atf_set timeout 120
}
fencectl_port_body() {
	fenced_vars
	users_add 1 frp
	fenced_run_socket
	h=$(fenced_homes)
	fenced_conf | sed -e "s|^homes .*|homes \"$h/%u\"|" > fenced.conf
	fenced_start
	T=$(token_of)
	P=$(fenced_port)
	relay_boot "$T" L1.5 w
	atf_check -o save:urls.out "$BIN/fencectl" -s "$PWD/ctl.sock" port w $APP
	atf_check_equal "$(sed -n 1p urls.out)" \
	    "http://127.0.0.1:$P$E/w/ports/$APP/"
	url=$(sed -n 2p urls.out)
	case "$url" in
	"http://$APP-$SUFFIX:$P/.fenced/ticket?t="*) ;;
	*) atf_fail "ticket URL $url" ;;
	esac
	rcurl -H "x-voicebox-host-token: $T" "$(sed -n 1p urls.out)x"
	expect 200 '^GET /x HTTP/1.1$'
	rcurl -c jar -b jar -L "$url"
	expect 200 '^GET / HTTP/1.1$'
	rcurl -c jar -b jar "$url"
	expect 403 '"error":"bad-ticket"'
	atf_check -s exit:1 -e match:"not-found" "$BIN/fencectl" -s \
	    "$PWD/ctl.sock" port nope $APP
	ub=$(sed -n 1p users.txt)
	atf_check -s exit:1 -e match:"not-found" $(as_user "$ub") \
	    "$BIN/fencectl" -s "$(cat run.sock)" port w $APP
	atf_check -s exit:1 -e match:"not-found" $(as_user "$ub") \
	    "$BIN/fencectl" -s "$(cat run.sock)" port 0/w $APP
}
fencectl_port_cleanup() {
	fenced_vars
	fenced_cleanup
}

# The path form on another backend, skipped where it is missing.
relay_backend() {
	fenced_vars
	fenced_conf > fenced.conf
	echo "backend $1" >> fenced.conf
	[ -z "${2:-}" ] || echo "$2" >> fenced.conf
	fenced_start
	T=$(token_of)
	P=$(fenced_port)
	relay_boot "$T" L2 w
	rcurl -H "x-voicebox-host-token: $T" --data-binary 'abc' \
	    "http://127.0.0.1:$P$E/w/ports/$APP/echo"
	expect 200 '^abc$'
	atf_check -o inline:"ws ok\n" $PY "$TOPDIR/regress/relay_ws.py" \
	    "ws://127.0.0.1:$P$E/w/ports/$APP/ws" "$T"
	rcurl -H "x-voicebox-host-token: $T" "http://127.0.0.1:$P$E/w/ports/8001/"
	expect 502 '"error":"port-closed"'
}

atf_test_case native_l2 cleanup
native_l2_head() {
	atf_set descr "the path form into a native L2 fence: a body and a WebSocket, 502 for a closed port"
	atf_set require.user root
	atf_set timeout 180
}
native_l2_body() {
	relay_backend native
}
native_l2_cleanup() {
	fenced_vars
	fenced_cleanup
}

atf_test_case runsc cleanup
runsc_head() {
	atf_set descr "the path form into a runsc fence (framed tunnels)"
	atf_set require.user root
	atf_set timeout 300
}
runsc_body() {
	command -v runsc > /dev/null || atf_skip "runsc is not installed"
	relay_backend runsc
}
runsc_cleanup() {
	fenced_vars
	fenced_cleanup
}

atf_test_case vm cleanup
vm_head() {
	atf_set descr "the path form into a vm fence (framed tunnels over virtio-serial)"
	atf_set require.user root
	atf_set timeout 600
}
vm_body() {
	fenced_vars
	vm_available || atf_skip "no vm images (make vm-images) or no QEMU"
	relay_backend vm "$(vm_conf_lines)"
}
vm_cleanup() {
	fenced_vars
	fenced_cleanup
}

atf_init_test_cases() {
	atf_add_test_case path_form
	atf_add_test_case keepalive_reauth
	atf_add_test_case host_form
	atf_add_test_case other_user
	atf_add_test_case flood
	atf_add_test_case fencectl_port
	atf_add_test_case native_l2
	atf_add_test_case runsc
	atf_add_test_case vm
}
