#! /usr/bin/atf-sh
# The browser's rules of the HTTP API (docs/http.md, "Origins"): a Host
# that is not the listen address (DNS rebinding) is refused before the
# token; CORS answers only the origins `http origin' lists, preflights
# without a token; a page of any other origin changes nothing.  And the
# named host tokens: several per user, each revoked alone, listed
# without their secrets, the old token file read and rewritten.

. "$(atf_get_srcdir)/lib.subr"

ORIGIN=http://localhost:5173

origin_conf() {
	fenced_conf > fenced.conf
	cat >> fenced.conf <<CONF
http origin "$ORIGIN"
http origin "https://ui.example.org"
CONF
}

# hcall TOKEN METHOD PATH [CURL ARGS...]: curl with the given headers
# (-H ...) into head.out (headers), body.out and status.out.
hcall() {
	_tok=$1 _m=$2 _p=$3
	shift 3
	curl -sS -m 30 -X "$_m" -H "x-voicebox-host-token: $_tok" \
	    -D head.out -o body.out -w '%{http_code}\n' "$@" \
	    "http://127.0.0.1:$(fenced_port)$_p" > status.out ||
	    atf_fail "curl failed: $_m $_p $*"
	tr -d '\r' < head.out > head.txt
}

# No header of CORS at all in the last answer.
no_cors() {
	if grep -qi '^access-control-' head.txt; then
		atf_fail "CORS headers for $1: $(cat head.txt)"
	fi
}

# The header line NAME: VALUE, exactly, in the last answer.
has_header() {
	grep -qix "$1: $2" head.txt || \
	    atf_fail "no \"$1: $2\" in: $(cat head.txt)"
}

# The fence KEY is not running (GET answers 404, or state stopped).
not_running() {
	call "$t" GET /api/environments/$1
	if [ "$(cat status.out)" = 200 ]; then
		grep -q '"state":"stopped"' body.out || \
		    atf_fail "$1 runs: $(cat body.out)"
	fi
}

atf_test_case host cleanup
host_head() {
	atf_set descr "a Host that does not name the listen address (rebinding names, wrong port, none, two, an absolute target) is 421 bad-host with a valid token, and changes nothing; 127.0.0.1:P and localhost:P in any case are served"
	atf_set require.user root
	atf_set timeout 120
}
host_body() {
	fenced_vars
	origin_conf
	fenced_start
	t=$($CTL token 2>/dev/null)
	P=$(fenced_port)
	E=/api/environments
	for h in "evil.example:$P" "127.0.0.1.nip.io:$P" "localhost.:$P" \
	    "127.0.0.1:$((P + 1))" "localhost" "127.0.0.1" "[::1]:$P" \
	    "127.0.0.1:$P." "127.0.0.1:$P:$P" "x127.0.0.1:$P" \
	    "127.0.0.1:0$P" "localhost:$P@evil.example"; do
		hcall "$t" POST $E/rebound -H "Host: $h" -d '{}'
		expect 421 '^\{"error":"bad-host","message":"'
		no_cors "$h"
		echo "ok refused Host $h"
	done
	# None at all (curl leaves the header out), and an HTTP/1.0 one.
	hcall "$t" POST $E/rebound -H "Host:" -d '{}'
	expect 421 '"error":"bad-host"' 'no Host header'
	hcall "$t" POST $E/rebound -0 -H "Host:" -d '{}'
	expect 421 '"error":"bad-host"'
	# Raw requests: two Host headers, an absolute target.
	printf 'POST %s/rebound HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nHost: evil.example:%s\r\nx-voicebox-host-token: %s\r\nContent-Length: 2\r\n\r\n{}' \
	    $E "$P" "$P" "$t" | "$REGRESS/t_http" "$P" > raw.out
	atf_check -o match:'^status 421 closed 1' -o match:'"bad-host"' \
	    -o match:'more than one Host' cat raw.out
	printf 'POST http://evil.example:%s%s/rebound HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nx-voicebox-host-token: %s\r\nContent-Length: 2\r\n\r\n{}' \
	    "$P" $E "$P" "$t" | "$REGRESS/t_http" "$P" > raw.out
	atf_check -o match:'^status 421 ' -o match:'"bad-host"' cat raw.out
	# Before the token: a bad token with a bad Host is 421, not 401.
	hcall nope GET $E -H "Host: evil.example:$P"
	expect 421 '"error":"bad-host"'
	# Nothing of it booted a fence.
	not_running rebound
	call "$t" GET $E
	expect 200 '^\{"environments":\[\]\}$'
	# What names us is served.
	for h in "127.0.0.1:$P" "localhost:$P" "LOCALHOST:$P" "LocalHost:$P"; do
		hcall "$t" GET $E -H "Host: $h"
		expect 200 '"environments"'
	done
	fenced_stop
}
host_cleanup() { fenced_cleanup; }

atf_test_case origin cleanup
origin_head() {
	atf_set descr "a foreign Origin (null included) on a boot, a stop, an exec and a probe refresh is 403 bad-origin and changes nothing, with no CORS header; the API's own origin and listed ones are served; no Origin is served as before"
	atf_set require.user root
	atf_set timeout 120
}
origin_body() {
	fenced_vars
	origin_conf
	fenced_start
	t=$($CTL token 2>/dev/null)
	P=$(fenced_port)
	E=/api/environments
	for o in http://evil.example null "http://localhost:5174" \
	    "https://localhost:5173" "http://localhost:5173/" \
	    "HTTP://LOCALHOST:5173" "http://127.0.0.1:$((P + 1))" \
	    "https://127.0.0.1:$P"; do
		hcall "$t" POST $E/forged -H "Origin: $o" \
		    -H 'Content-Type: text/plain' -d '{}'
		expect 403 '^\{"error":"bad-origin","message":"'
		no_cors "$o"
		echo "ok refused Origin $o"
	done
	not_running forged
	# A running fence: a foreign page can neither stop it nor run in it.
	call "$t" POST $E/kept '{}'
	expect 201
	hcall "$t" DELETE $E/kept -H "Origin: http://evil.example"
	expect 403 '"error":"bad-origin"'
	no_cors DELETE
	hcall "$t" POST $E/kept/exec -H "Origin: null" \
	    -d '{"argv":["touch","forged"]}'
	expect 403 '"error":"bad-origin"'
	hcall "$t" GET "$E/kept/probe?refresh=1" -H "Origin: http://evil.example"
	expect 403 '"error":"bad-origin"'
	hcall "$t" GET $E/kept -H "Origin: http://evil.example"
	expect 403 '"error":"bad-origin"'
	no_cors GET
	call "$t" GET $E/kept
	expect 200 '"state":"running"'
	call "$t" POST $E/kept/exec '{"argv":["ls","-A"]}'
	expect 200 '"exitCode":0'
	grep -q forged body.out && atf_fail "the forged exec ran: $(cat body.out)"
	# Two Origin headers: refused too.
	printf 'DELETE %s/kept HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nOrigin: %s\r\nOrigin: http://evil.example\r\nx-voicebox-host-token: %s\r\n\r\n' \
	    $E "$P" "$ORIGIN" "$t" | "$REGRESS/t_http" "$P" > raw.out
	atf_check -o match:'^status 403 ' -o match:'"bad-origin"' cat raw.out
	call "$t" GET $E/kept
	expect 200 '"state":"running"'
	# The API's own origin needs no listing, and gets no CORS header.
	hcall "$t" POST $E/kept/exec -H "Origin: http://127.0.0.1:$P" \
	    -d '{"argv":["true"]}'
	expect 200 '"exitCode":0'
	no_cors "same origin"
	hcall "$t" POST $E/kept/exec -H "Origin: http://localhost:$P" \
	    -d '{"argv":["true"]}'
	expect 200 '"exitCode":0'
	# A listed origin is served, and told so.
	hcall "$t" POST $E/kept/exec -H "Origin: $ORIGIN" \
	    -d '{"argv":["echo","hi"]}'
	expect 200 '"stdout":"hi\\n"'
	has_header Access-Control-Allow-Origin "$ORIGIN"
	has_header Vary Origin
	# No Origin at all: a program, served as ever.
	hcall "$t" DELETE $E/kept
	expect 200 '"state":"stopped"'
	no_cors "no origin"
	fenced_stop
}
origin_cleanup() { fenced_cleanup; }

atf_test_case preflight cleanup
preflight_head() {
	atf_set descr "a preflight of a listed origin is 204 without a token, with the methods, headers and max age; a foreign one is 403 with no CORS header; answers to a listed origin carry Access-Control-Allow-Origin and Vary, a 401 too"
	atf_set require.user root
}
preflight_body() {
	fenced_vars
	origin_conf
	fenced_start
	t=$($CTL token 2>/dev/null)
	E=/api/environments
	for o in "$ORIGIN" https://ui.example.org; do
		curl -sS -X OPTIONS -D head.out -o body.out \
		    -w '%{http_code}\n' -H "Origin: $o" \
		    -H 'Access-Control-Request-Method: POST' \
		    -H 'Access-Control-Request-Headers: x-voicebox-host-token, content-type' \
		    "http://127.0.0.1:$(fenced_port)$E/k/exec" > status.out
		tr -d '\r' < head.out > head.txt
		expect 204
		[ -s body.out ] && atf_fail "a body: $(cat body.out)"
		has_header Access-Control-Allow-Origin "$o"
		has_header Access-Control-Allow-Methods "GET, POST, PUT, DELETE"
		has_header Access-Control-Allow-Headers \
		    "x-voicebox-host-token, authorization, content-type"
		grep -Eqi '^access-control-max-age: [0-9]+$' head.txt || \
		    atf_fail "no max age: $(cat head.txt)"
		has_header Vary Origin
	done
	# Chromium's Private Network Access question gets its answer.
	curl -sS -X OPTIONS -D head.out -o /dev/null -H "Origin: $ORIGIN" \
	    -H 'Access-Control-Request-Method: GET' \
	    -H 'Access-Control-Request-Private-Network: true' \
	    "http://127.0.0.1:$(fenced_port)$E"
	tr -d '\r' < head.out > head.txt
	has_header Access-Control-Allow-Private-Network true
	# A foreign preflight: refused, nothing of CORS.
	for o in http://evil.example null http://localhost:5174; do
		curl -sS -X OPTIONS -D head.out -o body.out \
		    -w '%{http_code}\n' -H "Origin: $o" \
		    -H 'Access-Control-Request-Method: DELETE' \
		    "http://127.0.0.1:$(fenced_port)$E/k" > status.out
		tr -d '\r' < head.out > head.txt
		expect 403 '"error":"bad-origin"'
		no_cors "preflight of $o"
	done
	# Real answers to a listed origin, a refusal included.
	hcall "$t" GET $E -H "Origin: $ORIGIN"
	expect 200
	has_header Access-Control-Allow-Origin "$ORIGIN"
	has_header Vary Origin
	hcall "0000" GET $E -H "Origin: $ORIGIN"
	expect 401 '"error":"unauthorized"'
	has_header Access-Control-Allow-Origin "$ORIGIN"
	# An OPTIONS with no Origin is no preflight: it needs a token.
	curl -sS -X OPTIONS -o body.out -w '%{http_code}\n' \
	    "http://127.0.0.1:$(fenced_port)$E" > status.out
	expect 401
	fenced_stop
}
preflight_cleanup() { fenced_cleanup; }

# acall METHOD PATH [CURL ARGS...]: as hcall, with no token header.
acall() {
	_m=$1 _p=$2
	shift 2
	curl -sS -m 30 -X "$_m" -D head.out -o body.out -w '%{http_code}\n' \
	    "$@" "http://127.0.0.1:$(fenced_port)$_p" > status.out ||
	    atf_fail "curl failed: $_m $_p $*"
	tr -d '\r' < head.out > head.txt
}

atf_test_case bearer cleanup
bearer_head() {
	atf_set descr "Authorization: Bearer TOKEN is the host token, in any case and with any spaces; beside the token header it must name the same token (else 400); another scheme, or a credential not shaped as a token, is no token (401)"
	atf_set require.user root
}
bearer_body() {
	fenced_vars
	origin_conf
	fenced_start
	t=$($CTL token 2>/dev/null)
	other=$(printf '%064d' 7)
	E=/api/environments
	acall GET $E -H "Authorization: Bearer $t"
	expect 200 '^\{"environments":\[\]\}$'
	acall GET $E -H "authorization: bEaReR    $t  "
	expect 200
	acall GET $E -H "Authorization: Bearer $t" \
	    -H "x-voicebox-host-token: $t"
	expect 200
	acall GET $E -H "Authorization: Bearer $other" \
	    -H "x-voicebox-host-token: $t"
	expect 400 '"error":"bad-request"' 'different tokens'
	acall GET $E -H "Authorization: Bearer $t" \
	    -H "Authorization: Bearer $t"
	expect 400 'more than one Authorization'
	# Shaped as a token, not one: not valid.
	acall GET $E -H "Authorization: Bearer $other"
	expect 401 '"error":"unauthorized"' 'not valid'
	has_header WWW-Authenticate 'Bearer realm="fenced"'
	# Not fenced's: no token at all.
	for a in "Basic $(printf 'u:%s' "$t" | base64 -w0)" "Bearer" \
	    "Bearer${t}" "Bearer x$t" "Bearer $t$t" "Token $t"; do
		acall GET $E -H "Authorization: $a"
		expect 401 '"error":"unauthorized"' 'no x-voicebox-host-token'
	done
	# Another scheme beside the token header changes nothing.
	acall GET $E -H "Authorization: Basic eDp5" \
	    -H "x-voicebox-host-token: $t"
	expect 200
	# A listed origin's request with the Bearer: its CORS answer.
	acall GET $E -H "Authorization: Bearer $t" -H "Origin: $ORIGIN"
	expect 200
	has_header Access-Control-Allow-Origin "$ORIGIN"
	fenced_stop
}
bearer_cleanup() { fenced_cleanup; }

atf_test_case named_tokens cleanup
named_tokens_head() {
	atf_set descr "named host tokens: two minted, one deleted stops at once while the other works, -r replaces one alone, show tokens lists names and times and no secret, 16 per user, bad names refused; a second local user neither sees nor deletes root's"
	atf_set require.user root
	atf_set timeout 120
}
named_tokens_body() {
	fenced_vars
	users_add 1 fot
	fenced_run_socket
	fenced_conf > fenced.conf
	fenced_start
	E=/api/environments
	atf_check -o save:ui.out -e match:'host token "ui" of uid 0' \
	    $CTL token ui
	atf_check -o save:cli.out -e match:'host token "cli" of uid 0' \
	    $CTL token cli
	ui=$(cat ui.out) cli=$(cat cli.out)
	[ "$ui" != "$cli" ] || atf_fail "the same token twice"
	call "$ui" GET $E
	expect 200
	call "$cli" GET $E
	expect 200
	# Names and times, never a secret.
	atf_check -o save:show.out $CTL show tokens
	atf_check -o match:'^NAME +CREATED$' \
	    -o match:'^ui +[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$' \
	    -o match:'^cli +[0-9]{4}-' cat show.out
	grep -q "$ui" show.out && atf_fail "a secret in show tokens"
	grep -q "$cli" show.out && atf_fail "a secret in show tokens"
	# A name is minted once; -r replaces that one only.
	atf_check -s exit:1 -e match:'token-exists' $CTL token ui
	# At most 3 changes per user in 10 s: wait out the window.
	sleep 10
	atf_check -o save:ui2.out -e ignore $CTL token -r ui
	ui2=$(cat ui2.out)
	call "$ui" GET $E
	expect 401
	call "$ui2" GET $E
	expect 200
	call "$cli" GET $E
	expect 200
	# Deleted: its next request fails, the other one works.
	atf_check -o empty -e empty $CTL token -d cli
	call "$cli" GET $E
	expect 401 '"error":"unauthorized"'
	call "$ui2" GET $E
	expect 200
	atf_check -s exit:1 -e match:'no-such-token' $CTL token -d cli
	atf_check -o not-match:'^cli ' $CTL show tokens
	# Bad names never reach the daemon.
	for n in 'a b' 'a/b' "$(printf '%033d' 0)" -x '' 'ü'; do
		atf_check -s exit:1 -e match:"name|longer than 32" \
		    $CTL token "$n"
	done
	# The second user: their own tokens, and nothing of root's.
	u=$(sed -n 1p users.txt)
	asu=$(as_user "$u")
	sock=$(cat run.sock)
	atf_check -o save:u.out -e ignore $asu "$BIN/fencectl" -s "$sock" \
	    token ui
	atf_check -o match:'^ui ' -o not-match:'^default' \
	    $asu "$BIN/fencectl" -s "$sock" show tokens
	atf_check -s exit:1 -e match:'no-such-token' \
	    $asu "$BIN/fencectl" -s "$sock" token -d default
	atf_check -o match:'^NAME' -o not-match:'^cli' -e empty \
	    $asu "$BIN/fencectl" -s "$sock" show tokens
	call "$(cat u.out)" GET $E
	expect 200
	# Its deletion of "ui" deletes its own, not root's.
	atf_check $asu "$BIN/fencectl" -s "$sock" token -d ui
	call "$(cat u.out)" GET $E
	expect 401
	call "$ui2" GET $E
	expect 200
	atf_check -o match:'^ui ' $CTL show tokens
	atf_check -e match:'no host tokens' \
	    $asu "$BIN/fencectl" -s "$sock" show tokens
	fenced_stop
}
named_tokens_cleanup() { fenced_cleanup; }

atf_test_case token_limit cleanup
token_limit_head() {
	atf_set descr "a user holds at most 16 host tokens: the 17th is refused with too-many-tokens, one deleted makes room; 16 read from the file count"
	atf_set require.user root
	atf_set timeout 60
}
token_limit_body() {
	fenced_vars
	fenced_conf > fenced.conf
	mkdir -p state
	chmod 700 state
	# 15 of root's from the file, made long ago, and one of uid 1.
	i=0
	while [ $i -lt 15 ]; do
		printf '0 t%d 1700000000 %064x\n' $i $((i + 1))
		i=$((i + 1))
	done > state/tokens
	printf '1 default 1700000000 %064x\n' 99 >> state/tokens
	chmod 600 state/tokens
	fenced_start
	atf_check -o match:'^t14 +2023-11-14T22:13:20Z$' $CTL show tokens
	atf_check -o match:'^[0-9a-f]{64}$' -e ignore $CTL token sixteenth
	atf_check -s exit:1 -e match:'too-many-tokens: .*at most 16' \
	    $CTL token seventeenth
	atf_check -o empty $CTL token -d t0
	atf_check -o match:'^[0-9a-f]{64}$' -e ignore $CTL token seventeenth
	atf_check -o inline:"16\n" sh -c "$CTL show tokens | sed 1d | wc -l"
	atf_check -o inline:"17\n" sh -c 'wc -l < state/tokens'
	fenced_stop
}
token_limit_cleanup() { fenced_cleanup; }

atf_test_case token_migration cleanup
token_migration_head() {
	atf_set descr "a token file of the old form (UID SHA256) is read as each user's token \"default\", rewritten with names and times at start, and its tokens keep working across restarts"
	atf_set require.user root
}
token_migration_body() {
	fenced_vars
	fenced_conf > fenced.conf
	mkdir -p state
	chmod 700 state
	old=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
	h=$(printf '%s' "$old" | xxd -r -p | sha256sum | cut -d' ' -f1)
	other=$(printf '%064x' 7)
	printf '0 %s\n1000 %s\n' "$h" "$other" > state/tokens
	chmod 600 state/tokens
	touch -d '2026-01-02 03:04:05 UTC' state/tokens
	fenced_start
	call "$old" GET /api/environments
	expect 200
	atf_check -o match:'^default +2026-01-02T03:04:05Z$' $CTL show tokens
	atf_check -o inline:"0 default 1767323045 $h\n1000 default 1767323045 $other\n" \
	    cat state/tokens
	grep -q 'host tokens of the old form' fenced.log || \
	    atf_fail "the migration is not said: $(cat fenced.log)"
	atf_check -s exit:1 -e match:'token-exists' $CTL token
	atf_check -o match:'^[0-9a-f]{64}$' -e ignore $CTL token second
	fenced_stop
	fenced_start
	call "$old" GET /api/environments
	expect 200
	atf_check -o match:'^default ' -o match:'^second ' $CTL show tokens
	atf_check -o inline:"3\n" sh -c 'wc -l < state/tokens'
	# A line of neither form is skipped and said; the rest is read.
	fenced_stop
	printf 'garbage\n0 bad/name 1 %s\n' "$h" >> state/tokens
	fenced_start
	call "$old" GET /api/environments
	expect 200
	grep -q 'not "UID NAME CREATED SHA256", ignored' fenced.log || \
	    atf_fail "a bad line is not said"
	fenced_stop
}
token_migration_cleanup() { fenced_cleanup; }

atf_init_test_cases() {
	atf_add_test_case host
	atf_add_test_case origin
	atf_add_test_case preflight
	atf_add_test_case bearer
	atf_add_test_case named_tokens
	atf_add_test_case token_limit
	atf_add_test_case token_migration
}
