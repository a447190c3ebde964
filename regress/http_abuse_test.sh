#! /usr/bin/atf-sh
# The HTTP API under bad input: each malformed request gets its 4xx and
# error code, changes nothing, and the daemon serves the next one.  Slow
# clients get 408 and are closed; clients over the limits get 429 (or
# 503); none of it holds up anyone else.

. "$(atf_get_srcdir)/lib.subr"

abuse_conf() {
	fenced_conf > fenced.conf
	cat >> fenced.conf <<CONF
http timeout 2
http body max 64K
http headers max 4K
http connections max 12 per user 4
exec inflight per user 2
CONF
}

token_of() {
	"$BIN/fencectl" -s "$PWD/ctl.sock" token 2>/dev/null | tail -n 1
}

# send [t_http options]: the raw request on stdin; the answer in
# answer.txt, its first line "status N closed C ms M closedms K"
send() {
	"$REGRESS/t_http" -w 0 "$@" "$(fenced_port)" > answer.txt 2>&1
}

# request METHOD PATH [BODY [HEADER...]]: a well-formed request with
# the token, closing the connection after.
request() {
	_m=$1 _p=$2 _b=${3-}
	shift 2
	[ $# -gt 0 ] && shift
	printf '%s %s HTTP/1.1\r\nHost: 127.0.0.1:'"$(fenced_port)"'\r\nx-voicebox-host-token: %s\r\nConnection: close\r\n' "$_m" "$_p" "$TOKEN"
	for _h in "$@"; do
		printf '%s\r\n' "$_h"
	done
	printf 'Content-Length: %d\r\n\r\n%s' ${#_b} "$_b"
}

# expect STATUS CODE WHAT: the last answer
expect() {
	NCHECKS=$((NCHECKS + 1))
	_st=$(sed -n '1s/^status \([0-9a-z]*\) .*/\1/p' answer.txt)
	[ "$_st" = "$1" ] || \
	    atf_fail "$3: status $_st, expected $1: $(cat answer.txt)"
	grep -q "^{\"error\":\"$2\",\"message\":\"" answer.txt || \
	    atf_fail "$3: not error $2: $(cat answer.txt)"
	echo "ok $NCHECKS $1 $2 $3"
}

# bad STATUS CODE WHAT METHOD PATH [BODY [HEADER...]]
bad() {
	_st=$1 _code=$2 _what=$3
	shift 3
	request "$@" | send
	expect "$_st" "$_code" "$_what"
}

# What must not change: the fences and their state, the homes, tokens.
snapshot() {
	$CTL show environments | awk '{ print $1, $2, $3, $4, $5, $6 }'
	$CTL show stats | grep '^fences:'
	ls -A "$(fenced_homes)"
	cat state/tokens
}

atf_test_case malformed cleanup
malformed_head() {
	atf_set descr "more than 40 distinct malformed requests each get their status and error code, and change nothing"
	atf_set require.user root
	atf_set timeout 120
}
malformed_body() {
	fenced_vars
	abuse_conf
	fenced_start
	TOKEN=$(token_of)
	NCHECKS=0
	E=/api/environments
	request POST $E/live '{}' | send
	atf_check -o match:'^status 201' head -n 1 answer.txt
	snapshot > before.txt
	long64=$(printf 'a%.0s' $(seq 64))
	long200=$(printf 'k%.0s' $(seq 200))

	# Keys: never decoded, never a path.
	bad 400 bad-key "../x" GET $E/../x
	bad 400 bad-key "%2e%2e" GET $E/%2e%2e
	bad 400 bad-key "%2e%2e/exec" POST $E/%2e%2e/exec '{"argv":["true"]}'
	bad 400 bad-key "..%2f..%2fetc" GET $E/..%2f..%2fetc
	bad 400 bad-key "empty key" GET $E/
	bad 400 bad-key "empty key, exec" POST $E//exec '{"argv":["true"]}'
	bad 400 bad-key "64 characters" GET $E/$long64
	bad 400 bad-key "200 characters" POST $E/$long200 '{}'
	bad 400 bad-key "uppercase" GET $E/Live
	bad 400 bad-key "leading -" POST $E/-x '{}'
	bad 400 bad-key "leading _" GET $E/_x
	bad 400 bad-key "%00" GET $E/a%00b
	bad 400 bad-key "dot" GET $E/a.b
	bad 400 bad-key "%20" GET $E/a%20b
	bad 404 not-found "no such key" GET $E/nosuch
	bad 404 not-found "exec, no such key" POST $E/nosuch/exec '{"argv":["true"]}'
	bad 404 not-found "no such endpoint" GET $E/live/bogus
	bad 404 not-found "outside /api" GET /etc/passwd
	printf 'GET %s/a\000b HTTP/1.1\r\nHost: 127.0.0.1:'"$(fenced_port)"'\r\nx-voicebox-host-token: %s\r\n\r\n' $E "$TOKEN" | send
	expect 400 bad-request "NUL in the request line"

	# Bodies.
	X=$E/live/exec
	bad 400 bad-json "truncated JSON" POST $X '{"argv":["true"'
	bad 400 bad-json "not JSON" POST $X 'argv=true'
	bad 400 bad-json "a JSON string" POST $X '"true"'
	bad 400 bad-json "duplicate field" POST $X '{"argv":["ls"],"argv":["id"]}'
	bad 400 bad-json "number overflow" POST $X '{"argv":["ls"],"timeoutMs":1e999}'
	bad 400 bad-type "an array" POST $X '[]'
	bad 400 missing-body "no body" POST $X
	bad 400 missing-field "neither argv nor command" POST $X '{}'
	bad 400 bad-request "argv and command" POST $X '{"argv":["ls"],"command":"ls"}'
	bad 400 bad-type "argv a string" POST $X '{"argv":"ls"}'
	bad 400 out-of-range "argv empty" POST $X '{"argv":[]}'
	bad 400 bad-type "argv of numbers" POST $X '{"argv":[1]}'
	bad 400 bad-value "NUL in argv" POST $X '{"argv":["a\u0000b"]}'
	bad 400 bad-value "empty command" POST $X '{"command":""}'
	bad 400 unknown-field "unknown field" POST $X '{"argv":["ls"],"bogus":1}'
	bad 400 out-of-range "timeoutMs too small" POST $X '{"argv":["ls"],"timeoutMs":5}'
	bad 400 out-of-range "timeoutMs too large" POST $X '{"argv":["ls"],"timeoutMs":60001}'
	bad 400 bad-type "timeoutMs a string" POST $X '{"argv":["ls"],"timeoutMs":"100"}'
	bad 400 bad-type "timeoutMs a fraction" POST $X '{"argv":["ls"],"timeoutMs":150.5}'
	bad 400 out-of-range "maxBytes too large" POST $X '{"argv":["ls"],"maxBytes":99999999999}'
	bad 400 bad-type "cwd a number" POST $X '{"argv":["ls"],"cwd":7}'
	bad 400 bad-value "unknown encoding" POST $X '{"argv":["ls"],"encoding":"hex"}'
	bad 400 bad-value "stdin not base64" POST $X '{"argv":["cat"],"encoding":"base64","stdin":"!!!!"}'
	bad 400 bad-value "base64 unpadded" POST $X '{"argv":["cat"],"encoding":"base64","stdin":"YWI"}'
	bad 400 bad-value "tier L3" POST $E/new '{"tier":"L3"}'
	bad 400 bad-type "tier a number" POST $E/new '{"tier":2}'
	bad 400 bad-value "unknown backend" POST $E/new '{"backend":"docker"}'
	bad 400 out-of-range "lifetime 0" POST $E/new '{"lifetime":0}'
	bad 400 out-of-range "memory 1 byte" POST $E/new '{"limits":{"memory":1}}'
	bad 400 out-of-range "pids negative" POST $E/new '{"limits":{"pids":-5}}'
	bad 400 bad-type "cpu a string" POST $E/new '{"limits":{"cpu":"1"}}'
	bad 400 out-of-range "cpu 0" POST $E/new '{"limits":{"cpu":0}}'
	bad 400 unknown-field "unknown limit" POST $E/new '{"limits":{"swap":1}}'
	bad 400 bad-type "limits an array" POST $E/new '{"limits":[]}'
	bad 409 exists "second boot of a running key" POST $E/live '{"tier":"L2"}'
	bad 400 missing-field "git config, nothing" POST $E/live/git/config '{}'
	bad 400 bad-type "git name a number" POST $E/live/git/config '{"name":7}'
	bad 400 unknown-field "git config, unknown" POST $E/live/git/config '{"user":"x"}'
	bad 400 bad-type "git init path an array" POST $E/live/git/init '{"path":["x"]}'
	bad 400 bad-parameter "query" GET "$E?all=1"
	bad 400 bad-parameter "probe query" GET "/api/probe?refresh=yes"

	# Too large.
	big=$(head -c 70000 /dev/zero | tr '\0' x)
	bad 413 body-too-large "body over http body max" POST $X "{\"command\":\"$big\"}"
	{ printf 'POST %s HTTP/1.1\r\nHost: 127.0.0.1:'"$(fenced_port)"'\r\nx-voicebox-host-token: %s\r\nTransfer-Encoding: chunked\r\n\r\n' $X "$TOKEN"
	  for i in 1 2 3; do printf '8000\r\n'; head -c 32768 /dev/zero; printf '\r\n'; done
	  printf '0\r\n\r\n'; } | send
	expect 413 body-too-large "chunked body over http body max"
	head -c 200000 /dev/zero > big.bin
	curl -sS -H "x-voicebox-host-token: $TOKEN" --data-binary @big.bin \
	    -H 'Expect: 100-continue' -w '\n%{http_code}\n' \
	    "http://127.0.0.1:$(fenced_port)$X" > curl.out 2>&1
	NCHECKS=$((NCHECKS + 1))
	atf_check -o match:'"error":"body-too-large"' -o match:'^413$' cat curl.out
	hdr=$(head -c 5000 /dev/zero | tr '\0' h)
	bad 431 headers-too-large "one 5000-byte header" GET $E '' "X-Big: $hdr"
	{ printf 'GET %s HTTP/1.1\r\nHost: 127.0.0.1:'"$(fenced_port)"'\r\nx-voicebox-host-token: %s\r\n' $E "$TOKEN"
	  for i in $(seq 600); do printf 'X-%d: v\r\n' $i; done
	  printf '\r\n'; } | send
	expect 431 headers-too-large "600 headers"
	bad 431 headers-too-large "5000-byte request line" GET "$E?$hdr"

	# Who asks.
	printf 'GET %s HTTP/1.1\r\nHost: 127.0.0.1:'"$(fenced_port)"'\r\n\r\n' $E | send
	expect 401 unauthorized "no token"
	printf 'GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1:'"$(fenced_port)"'\r\n\r\n' | send
	expect 401 unauthorized "no token, no such path"
	printf 'GET %s HTTP/1.1\r\nHost: 127.0.0.1:'"$(fenced_port)"'\r\nx-voicebox-host-token: %064d\r\n\r\n' $E 0 | send
	expect 401 unauthorized "wrong token"
	printf 'GET %s HTTP/1.1\r\nHost: 127.0.0.1:'"$(fenced_port)"'\r\nx-voicebox-host-token: abc\r\n\r\n' $E | send
	expect 401 unauthorized "malformed token"
	up=$(echo "$TOKEN" | tr a-f A-F)
	printf 'GET %s HTTP/1.1\r\nHost: 127.0.0.1:'"$(fenced_port)"'\r\nx-voicebox-host-token: %s\r\n\r\n' $E "$up" | send
	expect 401 unauthorized "token in uppercase"
	printf 'GET %s HTTP/1.1\r\nHost: 127.0.0.1:'"$(fenced_port)"'\r\nx-voicebox-host-token: %s\r\n\r\n' $E "${TOKEN}0" | send
	expect 401 unauthorized "token one digit long"
	bad 400 bad-request "two token headers" GET $E '' "x-voicebox-host-token: $TOKEN"

	# Methods and the rest of HTTP.
	bad 405 method-not-allowed "PUT a list" PUT $E
	bad 405 method-not-allowed "DELETE a list" DELETE $E
	bad 405 method-not-allowed "GET exec" GET $X
	bad 405 method-not-allowed "PATCH an environment" PATCH $E/live '{}'
	bad 405 method-not-allowed "OPTIONS" OPTIONS $E
	bad 501 method-not-implemented "unknown method" BREW $E
	printf 'GET %s HTTP/2.0\r\nHost: 127.0.0.1:'"$(fenced_port)"'\r\n\r\n' $E | send
	expect 400 bad-request "HTTP/2.0 in the request line"
	printf 'hello\r\n\r\n' | send
	expect 400 bad-request "no request line"
	printf 'POST %s HTTP/1.1\r\nHost: 127.0.0.1:'"$(fenced_port)"'\r\nx-voicebox-host-token: %s\r\nContent-Length: abc\r\n\r\n{}' $X "$TOKEN" | send
	expect 400 bad-request "Content-Length not a number"
	bad 417 expectation-failed "Expect: other" POST $X '{"argv":["true"]}' 'Expect: something'
	bad 400 bad-parameter "probe, bad refresh" GET "$E/live/probe?refresh=2"

	[ $NCHECKS -ge 40 ] || atf_fail "only $NCHECKS requests"
	# Nothing changed, and the daemon serves on.
	snapshot > after.txt
	atf_check cmp before.txt after.txt
	request POST $X '{"argv":["echo","still here"]}' | send
	atf_check -o match:'^status 200' -o match:'"stdout":"still here\\n"' \
	    cat answer.txt
	request GET $E | send
	atf_check -o match:'^status 200' -o match:'"key":"live"' cat answer.txt
	atf_check -o match:'fences: 1 running' $CTL show stats
	# The broker is the same process.
	atf_check_equal "$(cat fenced.pids)" "$(fenced_pids)"
	fenced_stop
}
malformed_cleanup() { fenced_cleanup; }

atf_test_case slowloris cleanup
slowloris_head() {
	atf_set descr "a request trickling in (headers or body) gets 408 and is closed at http timeout; others are served meanwhile"
	atf_set require.user root
}
slowloris_body() {
	fenced_vars
	abuse_conf
	fenced_start
	TOKEN=$(token_of)
	# Headers one byte every 250 ms: never idle, never whole.
	printf 'GET /api/environments HTTP/1.1\r\nHost: 127.0.0.1:'"$(fenced_port)"'\r\nx-voicebox-host-token: %s\r\nX-Slow: 1\r\n\r\n' "$TOKEN" > slow.req
	"$REGRESS/t_http" -w 3 -b 1 -d 250 "$(fenced_port)" < slow.req \
	    > slow.out 2>&1 &
	slow=$!
	# Meanwhile the daemon answers others at once.
	sleep 0.5
	t0=$(date +%s%N)
	request GET /api/environments | send
	t1=$(date +%s%N)
	atf_check -o match:'^status 200' head -n 1 answer.txt
	# Not a speed check (the machine may be busy): waiting for the
	# slow one would take its 3 s timeout.
	[ $(( (t1 - t0) / 1000000 )) -lt 2500 ] || \
	    atf_fail "a normal request took $(( (t1 - t0) / 1000000 )) ms"
	wait $slow
	cat slow.out
	atf_check -o match:'^status 408 closed 1 ' head -n 1 slow.out
	atf_check -o match:'^\{"error":"request-timeout","message":"' cat slow.out
	ms=$(sed -n '1s/.* ms \([0-9]*\) closedms \([0-9-]*\)$/\2/p' slow.out)
	[ "$ms" -ge 1900 ] && [ "$ms" -le 3500 ] || \
	    atf_fail "closed after $ms ms, expected 2000 plus a margin"

	# The body, this time: headers whole, the body a byte at a time.
	b='{"argv":["true"]}'
	printf 'POST /api/environments/x/exec HTTP/1.1\r\nHost: 127.0.0.1:'"$(fenced_port)"'\r\nx-voicebox-host-token: %s\r\nContent-Length: 200\r\n\r\n%s' "$TOKEN" "$b" > body.req
	"$REGRESS/t_http" -w 3 "$(fenced_port)" < body.req > body.out 2>&1
	atf_check -o match:'^status 408 closed 1 ' \
	    -o match:'"error":"request-timeout"' cat body.out
	# A connection that says nothing is closed quietly.
	: | "$REGRESS/t_http" -w 4 "$(fenced_port)" > quiet.out 2>&1
	atf_check -o match:'^status none' cat quiet.out
	request GET /api/environments | send
	atf_check -o match:'^status 200' head -n 1 answer.txt
	fenced_stop
}
slowloris_cleanup() { fenced_cleanup; }

atf_test_case limits cleanup
limits_head() {
	atf_set descr "connections over the per-user and total limits, and commands over the per-user limit, get 429 (503 for the total)"
	atf_set require.user root
}
limits_body() {
	fenced_vars
	abuse_conf
	fenced_start
	TOKEN=$(token_of)
	# Keep-alive requests on 5 connections held at once: 4 per user.
	printf 'GET /api/environments HTTP/1.1\r\nHost: 127.0.0.1:'"$(fenced_port)"'\r\nx-voicebox-host-token: %s\r\n\r\n' "$TOKEN" | \
	    "$REGRESS/t_http" -c 5 "$(fenced_port)" > conns.out
	cat conns.out
	atf_check_equal 4 "$(grep -c '^status 200 ' conns.out)"
	atf_check_equal 1 "$(grep -c '^status 429 ' conns.out)"
	atf_check -o match:'"error":"too-many-connections"' cat conns.out
	# 13 token-less connections at once: anonymous ones have half of
	# the 12 slots; the oldest one not being answered gives way to a
	# newer one (closed, no answer); the rest get 401.  (The last ones
	# are closed: give the daemon a moment to see it.)
	sleep 0.3
	printf 'GET /api/environments HTTP/1.1\r\nHost: 127.0.0.1:'"$(fenced_port)"'\r\n\r\n' | \
	    "$REGRESS/t_http" -c 13 "$(fenced_port)" > all.out
	cat all.out
	atf_check_equal 13 "$(grep -c '^status \(401\|503\|none\) ' all.out)"
	n=$(grep -c '^status \(401\|503\) ' all.out)
	[ "$n" -ge 6 ] && [ "$n" -le 12 ] || atf_fail "$n answered of 13"
	# A 401 ends its connection.
	printf 'GET /api/environments HTTP/1.1\r\nHost: 127.0.0.1:'"$(fenced_port)"'\r\n\r\n' | send -w 2
	atf_check -o match:'^status 401 closed 1 ' head -n 1 answer.txt
	# Three commands at once, two allowed.
	request POST /api/environments/lim '{}' | send
	atf_check -o match:'^status 201' head -n 1 answer.txt
	b='{"argv":["sleep","1"]}'
	printf 'POST /api/environments/lim/exec HTTP/1.1\r\nHost: 127.0.0.1:'"$(fenced_port)"'\r\nx-voicebox-host-token: %s\r\nContent-Length: %d\r\n\r\n%s' "$TOKEN" ${#b} "$b" | \
	    "$REGRESS/t_http" -c 3 "$(fenced_port)" > execs.out
	cat execs.out
	atf_check_equal 2 "$(grep -c '^status 200 ' execs.out)"
	atf_check_equal 1 "$(grep -c '^status 429 ' execs.out)"
	atf_check -o match:'"error":"too-many-execs"' cat execs.out
	# A client that leaves does not free its slot before its command
	# ends: the command still runs.
	# (Waited for by pid: the daemon is a job of this shell too.)
	jobs=
	for i in 1 2; do
		curl -sS -m 0.5 -H "x-voicebox-host-token: $TOKEN" \
		    -d '{"argv":["sleep","2"]}' \
		    "http://127.0.0.1:$(fenced_port)/api/environments/lim/exec" \
		    > /dev/null 2>&1 &
		jobs="$jobs $!"
	done
	wait $jobs
	request POST /api/environments/lim/exec '{"argv":["true"]}' | send
	atf_check -o match:'^status 429' head -n 1 answer.txt
	sleep 2
	request POST /api/environments/lim/exec '{"argv":["true"]}' | send
	atf_check -o match:'^status 200' head -n 1 answer.txt
	atf_check -o match:'client left before its answer' cat fenced.log
	fenced_stop
}
limits_cleanup() { fenced_cleanup; }

# anon_flood AS: from AS (a command prefix), 30 keep-alive connections
# asking without a token and 30 saying nothing, all held 6 s; meanwhile
# the token's owner gets 200 five times.
anon_flood() {
	printf 'GET /api/environments HTTP/1.1\r\nHost: 127.0.0.1:'"$(fenced_port)"'\r\n\r\n' > noauth.req
	$1 "$REGRESS/t_http" -c 30 -H 6 "$(fenced_port)" < noauth.req \
	    > flood1.out 2>&1 &
	f1=$!
	$1 "$REGRESS/t_http" -c 30 -H 6 "$(fenced_port)" < /dev/null \
	    > flood2.out 2>&1 &
	f2=$!
	sleep 1
	for i in 1 2 3 4 5; do
		request GET /api/environments | send
		atf_check -o match:'^status 200' head -n 1 answer.txt
		sleep 0.3
	done
	wait $f1 $f2
}

atf_test_case anonymous cleanup
anonymous_head() {
	atf_set descr "token-less keep-alive connections from another local user and from inside an L1.5 fence (host network) cannot hold the slots: a user with a token still gets 200"
	atf_set require.user root
	atf_set timeout 120
}
anonymous_body() {
	fenced_vars
	users_add 1 fab
	abuse_conf
	fenced_start
	TOKEN=$(token_of)
	# Another local user.
	anon_flood "$(as_user "$(sed -n 1p users.txt)")"
	# Code inside an L1.5 fence: it shares the host's network.
	atf_check -o ignore $CTL boot flood tier L1.5
	cat > flood.py <<'PY'
import socket, sys, time
port = int(sys.argv[1])
talk, quiet = [], []
for i in range(30):
    for l in (talk, quiet):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=2)
            l.append(s)
        except OSError:
            pass
for s in talk:
    try:
        s.sendall(b"GET /api/environments HTTP/1.1\r\nHost: x\r\n\r\n")
    except OSError:
        pass
time.sleep(6)
print("held", len(talk) + len(quiet))
PY
	# The longest timeout: python's start, 60 connects and the 6 s
	# hold overran the default 10 s in a TCG guest beside another.
	$CTL exec flood timeout 60000 -- python3 -c "$(cat flood.py)" \
	    "$(fenced_port)" > inside.out 2>&1 &
	f=$!
	sleep 1.5
	for i in 1 2 3 4 5; do
		request GET /api/environments | send
		atf_check -o match:'^status 200' head -n 1 answer.txt
		sleep 0.3
	done
	wait $f
	cat inside.out
	atf_check -o match:'held' cat inside.out
	$CTL stop flood > /dev/null
	fenced_stop
}
anonymous_cleanup() {
	fenced_cleanup
	users_remove
}

atf_test_case framing cleanup
framing_head() {
	atf_set descr "ambiguous framing (two Content-Lengths, Transfer-Encoding other than chunked, both, a folded or spaced framing header) is 400, a Content-Length over the limit or too large a number 413 at once; each closes its connection"
	atf_set require.user root
	atf_set timeout 60
}
# frame STATUS CODE WHY WHAT HEADERS [BODY]: the request with these
# framing headers (and body; both with \r, \n escapes) is refused at
# once with STATUS and CODE, its message containing WHY, and closed.
frame() {
	printf 'POST %s HTTP/1.1\r\nHost: 127.0.0.1:'"$(fenced_port)"'\r\nx-voicebox-host-token: %s\r\n%b\r\n\r\n%b' \
	    $X "$TOKEN" "$5" "${6-}" | send -w 1
	expect "$1" "$2" "$4"
	# Refused for its framing, not for something else about it.
	grep -q "\"message\":\"[^\"]*$3" answer.txt || \
	    atf_fail "$4: not \"$3\": $(cat answer.txt)"
	atf_check -o match:"^status $1 closed 1 " head -n 1 answer.txt
	ms=$(sed -n '1s/.* ms \([0-9]*\) closedms.*/\1/p' answer.txt)
	[ "$ms" -lt 1000 ] || atf_fail "$4: answered after $ms ms"
}
framing_body() {
	fenced_vars
	abuse_conf
	fenced_start
	TOKEN=$(token_of)
	NCHECKS=0
	X=/api/environments/fr/exec
	request POST /api/environments/fr '{}' | send
	atf_check -o match:'^status 201' head -n 1 answer.txt
	b='{"argv":["true"]}'
	two="more than one Content-Length"
	te="Transfer-Encoding other than chunked"
	both="Content-Length and Transfer-Encoding together"
	frame 400 bad-request "$two" "two Content-Lengths, the same" \
	    "Content-Length: ${#b}\r\nContent-Length: ${#b}" "$b"
	# evhttp itself takes this one: the boot must not happen.
	printf 'POST /api/environments/dup HTTP/1.1\r\nHost: 127.0.0.1:'"$(fenced_port)"'\r\nx-voicebox-host-token: %s\r\nContent-Length: 2\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}' \
	    "$TOKEN" | send -w 1
	expect 400 bad-request "two Content-Lengths on a boot"
	atf_check -o not-match:'^dup ' $CTL show environments
	frame 400 bad-request "$two" "two Content-Lengths, different" \
	    "Content-Length: ${#b}\r\nContent-Length: 2" "$b"
	frame 400 bad-request "$te" "Transfer-Encoding: gzip, chunked" \
	    "Transfer-Encoding: gzip, chunked" "0\r\n\r\n"
	frame 400 bad-request "$te" "Transfer-Encoding: chunked, chunked" \
	    "Transfer-Encoding: chunked, chunked" "0\r\n\r\n"
	frame 400 bad-request "$te" "Transfer-Encoding: identity" \
	    "Transfer-Encoding: identity\r\nContent-Length: ${#b}" "$b"
	frame 400 bad-request "$te" "a CR inside Transfer-Encoding" \
	    "Transfer-Encoding: chun\rked" "0\r\n\r\n"
	frame 400 bad-request "more than one Transfer-Encoding" \
	    "two Transfer-Encoding: chunked" \
	    "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked" "0\r\n\r\n"
	frame 400 bad-request "$both" "chunked and Content-Length" \
	    "Transfer-Encoding: chunked\r\nContent-Length: ${#b}" "$b"
	frame 400 bad-request "$both" "Content-Length and chunked" \
	    "Content-Length: 5\r\nTransfer-Encoding: chunked" "0\r\n\r\n"
	frame 400 bad-request "folded" "Transfer-Encoding folded" \
	    "Transfer-Encoding: chunked\r\n gzip" "0\r\n\r\n"
	frame 400 bad-request "white space in a header name" \
	    "space before the colon" "Content-Length : ${#b}" "$b"
	frame 400 bad-request "not a number" "Content-Length -1" \
	    "Content-Length: -1"
	frame 400 bad-request "not a number" "Content-Length 1 2" \
	    "Content-Length: 1 2"
	frame 400 bad-request "not a number" "Content-Length +5" \
	    "Content-Length: +5"
	frame 413 body-too-large "larger than 65536" \
	    "Content-Length over http body max" "Content-Length: 70000"
	frame 413 body-too-large "larger than 65536" \
	    "Content-Length that overflows" \
	    "Content-Length: 99999999999999999999999"
	frame 413 body-too-large "too long" "Content-Length of 80 digits" \
	    "Content-Length: $(printf '9%.0s' $(seq 80))"
	# Well framed, in either way, is served.
	request POST $X "$b" | send
	atf_check -o match:'^status 200' head -n 1 answer.txt
	printf 'POST %s HTTP/1.1\r\nHost: 127.0.0.1:'"$(fenced_port)"'\r\nx-voicebox-host-token: %s\r\nTransfer-Encoding: Chunked\r\nConnection: close\r\n\r\n%x\r\n%s\r\n0\r\n\r\n' \
	    $X "$TOKEN" ${#b} "$b" | send
	atf_check -o match:'^status 200' head -n 1 answer.txt
	$CTL stop fr > /dev/null
	fenced_stop
}
framing_cleanup() { fenced_cleanup; }

atf_test_case put_flood cleanup
put_flood_head() {
	atf_set descr "PUTs of files without a token, with another user's token, or from inside an L1.5 fence are held to http body max: the broker's memory does not grow by files max per connection; the owner's PUT over http body max is still served"
	atf_set require.user root
	atf_set timeout 300
}
# hwm_reset, hwm_kb: the broker's peak resident memory, reset and read.
hwm_reset() {
	echo 5 > /proc/$BROKER/clear_refs || atf_fail "clear_refs"
}
hwm_kb() {
	status_field $BROKER VmHWM | awk '{ print $1 }'
}
# flood WHAT AS PATH [TOKEN]: put_flood.py run by AS (a command prefix):
# 24 connections of a 4M PUT each.  The broker's peak memory must grow
# by less than 16 MB (24 x 64K of bodies and the connections; 96 MB if
# it took the bodies).
flood() {
	_what=$1 _as=$2
	shift 2
	hwm_reset
	_before=$(hwm_kb)
	# The program on python's standard input, opened here: a checkout
	# under /root (0700) is no other user's to read.
	$_as $PY - "$(fenced_port)" 24 4194304 "$@" \
	    < "$TOPDIR/regress/put_flood.py" > flood.out 2>&1
	flood_check "$_what" "$_before"
}
flood_check() {
	_after=$(hwm_kb)
	echo "$1: $(cat flood.out); broker VmHWM $2 kB -> $_after kB"
	grep -q '^sent [0-9]* answered' flood.out || \
	    atf_fail "$1: the flood did not run: $(cat flood.out)"
	[ $((_after - $2)) -lt 16384 ] || atf_fail "$1: the broker grew \
from $2 kB to $_after kB ($(cat flood.out))"
}
put_flood_body() {
	fenced_vars
	users_add 1 fpf
	fenced_run_socket
	fenced_conf > fenced.conf
	cat >> fenced.conf <<CONF
http timeout 20
http body max 64K
files max 4M
http connections max 64 per user 4
CONF
	# The system's python, which another user may run (not a shim
	# under root's home).
	PY=/usr/bin/python3
	[ -x $PY ] || PY=$(command -v python3)
	fenced_start
	TOKEN=$(token_of)
	BROKER=$(fenced_pid broker)
	[ -n "$BROKER" ] || atf_fail "no broker pid"
	ub=$(sed -n 1p users.txt)
	asb=$(as_user "$ub")
	tb=$($asb "$BIN/fencectl" -s "$(cat run.sock)" token 2>/dev/null)
	[ -n "$tb" ] || atf_fail "no token for $ub"
	atf_check -o ignore $CTL boot pf tier L1.5
	F=/api/environments/pf/files
	# Another local user: no token, then its own token naming root's
	# fence, then a fence that does not exist.
	flood "no token, as $ub" "$asb" $F/a.bin
	flood "$ub's token, root's fence" "$asb" $F/a.bin "$tb"
	flood "$ub's token, no such fence" "$asb" \
	    /api/environments/nosuch/files/a.bin "$tb"
	# A wrong token, and a good one with a Host of a rebinding page.
	flood "a wrong token" "" $F/a.bin \
	    "$(echo "$TOKEN" | tr 0-9a-f a-f0-9)"
	# Code inside an L1.5 fence: it shares the host's network.
	hwm_reset
	before=$(hwm_kb)
	$CTL exec pf timeout 60000 -- python3 -c \
	    "$(cat "$TOPDIR/regress/put_flood.py")" "$(fenced_port)" 24 \
	    4194304 $F/a.bin > flood.out 2>&1
	flood_check "inside the fence" "$before"
	# Refused at once, from the headers, and said why.
	printf 'PUT %s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nContent-Length: 4194304\r\n\r\n' \
	    $F/a.bin "$(fenced_port)" | send -w 1
	expect 413 body-too-large "a 4M PUT without a token"
	atf_check -o match:'larger than 65536 bytes, the most before a PUT is authorised \(no valid token\)' \
	    cat answer.txt
	printf 'PUT %s HTTP/1.1\r\nHost: evil.example:%s\r\nx-voicebox-host-token: %s\r\nContent-Length: 4194304\r\n\r\n' \
	    $F/a.bin "$(fenced_port)" "$TOKEN" | send -w 1
	expect 413 body-too-large "a 4M PUT with a foreign Host"
	# A chunked one is cut at http body max.
	{ printf 'PUT %s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nx-voicebox-host-token: %s\r\nTransfer-Encoding: chunked\r\n\r\n' \
	    $F/a.bin "$(fenced_port)" "$tb"
	  for i in $(seq 40); do printf '1000\r\n%4096s\r\n' x; done
	  printf '0\r\n\r\n'; } | send -w 1
	expect 413 body-too-large "a chunked 160K PUT with another's token"
	# A small one is answered as ever: 401.
	printf 'PUT %s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nContent-Length: 2\r\n\r\nhi' \
	    $F/a.bin "$(fenced_port)" | send -w 1
	expect 401 unauthorized "a small PUT without a token"
	# The owner's PUT over http body max is served, plain and chunked.
	head -c 1000000 /dev/urandom > big.bin
	atf_check -o match:'^201$' curl -sS -o /dev/null -w '%{http_code}' \
	    -X PUT -H "x-voicebox-host-token: $TOKEN" --data-binary @big.bin \
	    "http://127.0.0.1:$(fenced_port)$F/big.bin"
	atf_check -o match:'^200$' curl -sS -o /dev/null -w '%{http_code}' \
	    -X PUT -H "x-voicebox-host-token: $TOKEN" \
	    -H 'Transfer-Encoding: chunked' --data-binary @big.bin \
	    "http://127.0.0.1:$(fenced_port)$F/big.bin"
	curl -sS -H "x-voicebox-host-token: $TOKEN" -o back.bin \
	    "http://127.0.0.1:$(fenced_port)$F/big.bin"
	atf_check cmp big.bin back.bin
	# Over files max it is not.
	printf 'PUT %s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nx-voicebox-host-token: %s\r\nContent-Length: 4194305\r\n\r\n' \
	    $F/a.bin "$(fenced_port)" "$TOKEN" | send -w 1
	expect 413 body-too-large "the owner's PUT over files max"
	$CTL stop pf > /dev/null
	fenced_stop
}
put_flood_cleanup() {
	fenced_cleanup
	users_remove
}

atf_init_test_cases() {
	atf_add_test_case anonymous
	atf_add_test_case put_flood
	atf_add_test_case framing
	atf_add_test_case malformed
	atf_add_test_case slowloris
	atf_add_test_case limits
}
