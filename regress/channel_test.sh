#! /usr/bin/atf-sh
# The page's one channel, /api/channel, and a terminal's own WebSocket
# (docs/interactive.md, "/api/channel"; broker/ws.c over libwslay,
# broker/http_channel.c): the handshake's Host and Origin, auth within
# 10 s, each op, many streams on one page while its other requests are
# answered, a page that never reads, hostile frames each refused with
# its close code while another user is served, and a second local user
# who cannot reach the first's fences.  The client is regress/chan.py
# (frames by hand, so that hostile ones go out as they are) and
# python3-websocket for a well-behaved library.

. "$(atf_get_srcdir)/lib.subr"

token_of() {
	"$BIN/fencectl" -s "$PWD/ctl.sock" token 2>/dev/null | tail -n 1
}

# The system's python3, which has Debian's python3-websocket.
need_python() {
	PY=/usr/bin/python3
	[ -x $PY ] || PY=$(command -v python3) ||
	    atf_skip "no python3 (scripts/deps.sh installs it)"
	CHAN="$PY $TOPDIR/regress/chan.py"
}

atf_test_case handshake cleanup
handshake_head() {
	atf_set descr "channel: a foreign Origin, no Origin, a rebinding Host and a plain GET are refused before any token is looked at; no auth within 10 s, a first message that is not auth, a wrong token: closed 1008; a 17th channel of a user: 1013"
	atf_set require.user root
	atf_set timeout 120
}
handshake_body() {
	fenced_vars
	need_python
	fenced_start
	t=$(token_of)
	p=$(fenced_port)
	atf_check -o inline:"status 403 bad-origin\n" \
	    $CHAN handshake $p foreign-origin
	atf_check -o inline:"status 403 bad-origin\n" $CHAN handshake $p no-origin
	atf_check -o inline:"status 421 bad-host\n" $CHAN handshake $p rebind
	# Not an upgrade at all: 426, in JSON.
	atf_check -o match:'^426$' -e ignore curl -sS -o /dev/null \
	    -w '%{http_code}\n' -H "Origin: http://127.0.0.1:$p" \
	    "http://127.0.0.1:$p/api/channel"
	# A version we do not speak: 426, naming ours.
	atf_check -o match:'^HTTP/1.1 426 ' \
	    -o match:'^Sec-WebSocket-Version: 13' -o match:'"bad-websocket"' \
	    -e ignore curl -sS -i -H "Origin: http://127.0.0.1:$p" \
	    -H 'Upgrade: websocket' -H 'Connection: Upgrade' \
	    -H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==' \
	    -H 'Sec-WebSocket-Version: 8' "http://127.0.0.1:$p/api/channel"
	atf_check -o inline:"status 101\nclose 1008\n" $CHAN noauth $p wrong
	atf_check -o inline:"status 101\nclose 1008\n" $CHAN noauth $p badtoken
	atf_check -o save:silent.out $CHAN noauth $p silent
	atf_check -o inline:"status 101\nclose 1008\n" sed -n 1,2p silent.out
	cat silent.out
	# At most 16 channels of one user (and his HTTP connections).
	atf_check -o inline:"channel 17 error too-many-connections close 1013\nheld 16\n" \
	    $CHAN many $p "$t" 20
	# The daemon serves on.
	call "$t" GET /api/environments
	expect 200
}
handshake_cleanup() {
	fenced_vars
	fenced_cleanup
}

atf_test_case ops cleanup
ops_head() {
	atf_set descr "channel: exec streamed (by hand and by python3-websocket), watch hears a fence boot, its level decided and its stop with why, bad messages answered with their error code, a 33rd stream and a stream id in use refused, a well-formed fragmented message read whole"
	atf_set require.user root
	atf_set timeout 180
}
ops_body() {
	fenced_vars
	need_python
	fenced_start
	t=$(token_of)
	p=$(fenced_port)
	atf_check -o ignore $CTL boot c1
	atf_check -o inline:'output "a\\nb\\n"\nend result 3\n' \
	    $CHAN exec $p "$t" c1 'echo a; echo b; exit 3'
	atf_check -o inline:'auth ready\nstdout "library\\n"\nend result\n' \
	    $CHAN wsclient $p "$t" c1
	# Not a fence of this user's: the service's own refusal.
	atf_check -o inline:'output ""\nend error not-found\n' \
	    $CHAN exec $p "$t" nosuch 'true'
	atf_check -o inline:"answer error unknown-op\n" \
	    $CHAN hostile $p "$t" fragmented
	atf_check -o inline:"error bad-json
error bad-json
error bad-request
error bad-stream
error bad-key
error bad-value
error bad-value
error bad-frame
error not-found
" $CHAN hostile $p "$t" json
	atf_check -o inline:"stream 33 error too-many-streams\nstream 34 watching \nstream 34 error stream-in-use\n" \
	    $CHAN streams-max $p "$t"
	atf_check -o save:watch.out $CHAN watch $p "$t" w1 "$CTL"
	cat watch.out
	atf_check -o match:'^watching$' -o match:'^state gone$' \
	    -o match:'^state running$' -o match:'^level decided$' \
	    -o match:'^state stopped$' -o match:'^why [a-z]' cat watch.out
}
ops_cleanup() {
	fenced_vars
	fenced_cleanup
}

atf_test_case hostile cleanup
hostile_head() {
	atf_set descr "channel: a ping answered; an unmasked frame (1002), a message over 256 KiB whole or in fragments (1009), invalid UTF-8 (1007), a reserved opcode, a reserved bit, a stray continuation (1002): each closed with its code, and the daemon answers another user meanwhile"
	atf_set require.user root
	atf_set timeout 180
}
hostile_body() {
	fenced_vars
	need_python
	fenced_start
	t=$(token_of)
	p=$(fenced_port)
	atf_check -o inline:"pong True are-you-there\n" \
	    $CHAN hostile $p "$t" ping
	for c in unmasked:1002 oversized:1009 oversized-fragments:1009 \
	    utf8:1007 opcode:1002 rsv:1002 continuation:1002; do
		atf_check -o inline:"close ${c#*:}\n" \
		    $CHAN hostile $p "$t" "${c%%:*}"
		call "$t" GET /api/environments
		expect 200
	done
}
hostile_cleanup() {
	fenced_vars
	fenced_cleanup
}

atf_test_case streams cleanup
streams_head() {
	atf_set descr "channel: a page holding 12 streams at once on its one connection; its plain requests are answered meanwhile (measured, bound 10 s)"
	atf_set require.user root
	atf_set timeout 300
}
streams_body() {
	fenced_vars
	need_python
	fenced_start
	t=$(token_of)
	p=$(fenced_port)
	atf_check -o ignore $CTL boot m
	atf_check -o save:streams.out $CHAN streams $p "$t" m 12
	cat streams.out
	atf_check -o inline:"streams 12 lines 480\n" sed -n 1p streams.out
	atf_check -o match:'^requests 10 answered' sed -n 2p streams.out
}
streams_cleanup() {
	fenced_vars
	fenced_cleanup
}

atf_test_case noread cleanup
noread_head() {
	atf_set descr "channel: a page asking for a process's and a terminal's endless output and two execs' floods, reading nothing: the broker's RSS stays bounded (measured), the programs block in their writes, the daemon serves on"
	atf_set require.user root
	atf_set timeout 300
}
noread_body() {
	fenced_vars
	need_python
	fenced_start
	t=$(token_of)
	p=$(fenced_port)
	atf_check -o ignore $CTL boot n
	call "$t" POST /api/environments/n/processes '{"command":"yes procflood"}'
	expect 201
	pid=$(field id)
	call "$t" POST /api/environments/n/terminals '{"command":"yes termflood"}'
	expect 201
	tid=$(field id)
	broker=$(fenced_pid broker)
	[ -n "$broker" ] || atf_fail "no broker pid"
	atf_check -o save:noread.out $CHAN noread $p "$t" n "$broker" 8 \
	    "$pid" "$tid"
	cat noread.out
	grew=$(sed -n 's/.* grew \(-*[0-9]*\) kB/\1/p' noread.out)
	# Windows of 256 KiB per stream, the connection's 512 KiB, the
	# JSON of the execs': a few MB; without flow control the floods
	# (a process and a terminal writing for ever) have no end.
	# ASan's quarantine keeps what was freed: a sanitizer build is
	# given more room, as in stream_test.
	bound=16384
	ldd "$BIN/fenced" 2>/dev/null | grep -q libasan && bound=98304
	[ "$grew" -lt $bound ] || atf_fail "the broker grew $grew kB"
	call "$t" GET /api/environments/n
	expect 200 '"state":"running"'
	# The flooders wait in their writes, alive.
	call "$t" GET /api/environments/n/processes/$pid
	expect 200 '"state":"running"'
}
noread_cleanup() {
	fenced_vars
	fenced_cleanup
}

atf_test_case terminal cleanup
terminal_head() {
	atf_set descr "terminals over HTTP: created, listed, typed into over the channel, resized (stty size changes), closed and re-attached with the replay, attached by token (its header or a Bearer) and by a ticket good once, killed on request and at stop"
	atf_set require.user root
	atf_set timeout 240
}
terminal_body() {
	fenced_vars
	need_python
	fenced_start
	t=$(token_of)
	p=$(fenced_port)
	atf_check -o ignore $CTL boot tt
	call "$t" POST /api/environments/tt/terminals '{"cols":90,"rows":30}'
	expect 201 '"id":"1"' '"running":true' '"cols":90' '"rows":30'
	call "$t" GET /api/environments/tt/terminals
	expect 200 '^\{"terminals":\[\{"id":"1",'
	atf_check -o save:term.out $CHAN terminal $p "$t" tt 1
	cat term.out
	atf_check -o inline:"terminal open\ntyped seen\nresize resized\nstty 37 101\nreplay seen\n" cat term.out
	atf_check -o save:attach.out $CHAN attach $p "$t" tt 1 -
	atf_check -o inline:"status 101\nattach 22 77\n" cat attach.out
	atf_check -o inline:"status 101\nattach 22 77\n" \
	    $CHAN attach $p "$t" tt 1 bearer
	call "$t" POST /api/environments/tt/tickets '{"terminal":"1"}'
	expect 200 '"ticket":"[0-9a-f]{64}"'
	tk=$(field ticket)
	atf_check -o inline:"status 101\nattach 22 77\n" \
	    $CHAN attach $p "$t" tt 1 "$tk"
	# Good once; a forged one; none.
	atf_check -o inline:"status 401 unauthorized\n" \
	    $CHAN handshake $p attach-forged-ticket tt
	atf_check -o match:"^status 401" $CHAN attach $p "$t" tt 1 "$tk"
	atf_check -o inline:"status 401 unauthorized\n" \
	    $CHAN handshake $p attach-no-token tt
	call "$t" DELETE /api/environments/tt/terminals/1
	expect 200 '"id":"1"'
	wait_until 10 sh -c "curl -s -H 'x-voicebox-host-token: $t' \
	    http://127.0.0.1:$p/api/environments/tt/terminals/1 | \
	    grep -q '\"running\":false'" || atf_fail "not killed"
	# One more, killed with the fence.
	call "$t" POST /api/environments/tt/terminals '{"command":"sleep 1000"}'
	expect 201
	atf_check -o ignore $CTL stop tt
	call "$t" GET /api/environments/tt/terminals
	expect 404
}
terminal_cleanup() {
	fenced_vars
	fenced_cleanup
}

atf_test_case procs cleanup
procs_head() {
	atf_set descr "background processes: stdin written and closed over HTTP and over the channel, output live over the channel while the process runs"
	atf_set require.user root
	atf_set timeout 180
}
procs_body() {
	fenced_vars
	need_python
	fenced_start
	t=$(token_of)
	p=$(fenced_port)
	atf_check -o ignore $CTL boot pp
	call "$t" POST /api/environments/pp/processes \
	    '{"command":"tr a-z A-Z","stdinOpen":true}'
	expect 201
	id=$(field id)
	curl -sS -H "x-voicebox-host-token: $t" --data-binary 'hello
' "http://127.0.0.1:$p/api/environments/pp/processes/$id/stdin" \
	    > in.out
	atf_check -o match:'"state":"running"' cat in.out
	curl -sS -H "x-voicebox-host-token: $t" -X POST \
	    "http://127.0.0.1:$p/api/environments/pp/processes/$id/stdin?close=1" \
	    > close.out
	atf_check -o match:"\"id\":\"$id\"" cat close.out
	wait_until 10 sh -c "curl -s -H 'x-voicebox-host-token: $t' \
	    http://127.0.0.1:$p/api/environments/pp/processes/$id | \
	    grep -q HELLO" || atf_fail "no HELLO"
	# Live: the output of a process that runs on, over the channel.
	call "$t" POST /api/environments/pp/processes \
	    '{"command":"cat","stdinOpen":true}'
	expect 201
	id=$(field id)
	atf_check -o inline:"output open\nwritten\nlive line-one\nwritten\nend\n" \
	    $CHAN output $p "$t" pp "$id"
}
procs_cleanup() {
	fenced_vars
	fenced_cleanup
}

atf_test_case users cleanup
users_head() {
	atf_set descr "channel: another local user, with their own token, cannot watch, exec in, attach to, read the output of, write the stdin of or resize anything of the first user's fence (each refused with its code); the first user is served meanwhile"
	atf_set require.user root
	atf_set timeout 180
}
users_body() {
	fenced_vars
	need_python
	users_add 1 fch
	fenced_run_socket
	fenced_conf > fenced.conf
	fenced_start
	t=$(token_of)
	p=$(fenced_port)
	ub=$(sed -n 1p users.txt)
	tb=$($(as_user "$ub") "$BIN/fencectl" -s "$(cat run.sock)" token \
	    2>/dev/null | tail -n 1)
	[ -n "$tb" ] || atf_fail "no token for $ub"
	atf_check -o ignore $CTL boot mine
	call "$t" POST /api/environments/mine/terminals '{}'
	expect 201
	call "$t" POST /api/environments/mine/processes \
	    '{"command":"cat","stdinOpen":true}'
	expect 201
	# A copy the other user can read: the tree may be in a folder of
	# root's alone (/root, a mktemp -d).
	cp "$TOPDIR/regress/chan.py" chan.py
	chmod 0644 chan.py
	atf_check -o save:foreign.out $(as_user "$ub") $PY chan.py foreign \
	    $p "$tb" mine
	cat foreign.out
	atf_check -o inline:"1 watching 
2 state True
2 watching 
3 error not-found
4 error not-found
4 error not-found
5 error not-found
6 error not-found
attach 101 close 1008
" cat foreign.out
	# Nothing of root's was touched, and root is served.
	call "$t" GET /api/environments/mine/terminals
	expect 200 '"attached":false'
	call "$t" POST /api/environments/mine/tickets '{"terminal":"1"}'
	expect 200
	call "$tb" POST /api/environments/mine/tickets '{"terminal":"1"}'
	expect 404 not-found
}
users_cleanup() {
	fenced_vars
	fenced_cleanup
}

# chan_backend BACKEND [conf lines]: the channel's exec, a terminal and a
# process's live output, on a fence of that backend (framed tunnels on
# runsc and vm, whose channels to the agent are not the host's kernel's).
chan_backend() {
	fenced_vars
	need_python
	fenced_conf > fenced.conf
	echo "backend $1" >> fenced.conf
	[ -z "${2:-}" ] || echo "$2" >> fenced.conf
	fenced_start
	t=$(token_of)
	p=$(fenced_port)
	call "$t" POST /api/environments/b '{}'
	expect 201 '"state":"running"'
	atf_check -o inline:'output "a\\nb\\n"\nend result 3\n' \
	    $CHAN exec $p "$t" b 'echo a; echo b; exit 3'
	call "$t" POST /api/environments/b/terminals '{"command":"sh"}'
	expect 201
	tid=$(field id)
	atf_check -o save:term.out $CHAN terminal $p "$t" b "$tid"
	cat term.out
	atf_check -o inline:"terminal open\ntyped seen\nresize resized\nstty 37 101\nreplay seen\n" cat term.out
	call "$t" POST /api/environments/b/processes \
	    '{"command":"cat","stdinOpen":true}'
	expect 201
	atf_check -o inline:"output open\nwritten\nlive line-one\nwritten\nend\n" \
	    $CHAN output $p "$t" b "$(field id)"
}

atf_test_case runsc cleanup
runsc_head() {
	atf_set descr "channel: exec, a terminal (typed, resized, re-attached) and a process's live output in a runsc fence"
	atf_set require.user root
	atf_set timeout 300
}
runsc_body() {
	command -v runsc > /dev/null || atf_skip "runsc is not installed"
	chan_backend runsc
}
runsc_cleanup() {
	fenced_vars
	fenced_cleanup
}

atf_test_case vm cleanup
vm_head() {
	atf_set descr "channel: exec, a terminal (typed, resized, re-attached) and a process's live output in a vm fence"
	atf_set require.user root
	atf_set timeout 600
}
vm_body() {
	fenced_vars
	vm_available || atf_skip "no vm images (make vm-images) or no QEMU"
	chan_backend vm "$(vm_conf_lines)"
}
vm_cleanup() {
	fenced_vars
	fenced_cleanup
}

atf_init_test_cases() {
	atf_add_test_case handshake
	atf_add_test_case ops
	atf_add_test_case hostile
	atf_add_test_case streams
	atf_add_test_case noread
	atf_add_test_case terminal
	atf_add_test_case procs
	atf_add_test_case users
	atf_add_test_case runsc
	atf_add_test_case vm
}
