#! /usr/bin/atf-sh
# fence-mcp (docs/mcp.md): the Model Context Protocol server driven by
# a real MCP client, the official SDK's (npm's @modelcontextprotocol/
# sdk, installed into the build directory for the test only by
# scripts/mcp-sdk.sh; the cases that need it skip when npm cannot get
# it); bad requests answered with JSON-RPC's errors, and a client that
# disappears mid-exec: fence-mcp exits, the command is abandoned and
# the daemon serves on.

. "$(atf_get_srcdir)/lib.subr"

# The SDK in $NPM, or skip saying why.
mcp_sdk() {
	command -v node > /dev/null || atf_skip "no node (Debian's nodejs)"
	NPM=$(cd "$BIN/.." && pwd)/npm
	sh "$TOPDIR/scripts/mcp-sdk.sh" "$NPM" > sdk.out 2>&1 ||
	    atf_skip "the MCP SDK could not be installed: $(tail -1 sdk.out)"
}

mcp_setup() {
	fenced_vars
	mcp_sdk
	fenced_conf > fenced.conf
	fenced_start
}

# client KEY CASE: regress/mcp_client.cjs's case; its output in client.out
client() {
	node "$TOPDIR/regress/mcp_client.cjs" "$NPM" "$BIN/fence-mcp" \
	    "$PWD/ctl.sock" "$@"
}

atf_test_case tools cleanup
tools_head() {
	atf_set descr "the SDK's client lists the tools, boots, execs echo hi (its output, as progress too, and the fence's level), writes and reads a file, lists, stops; bad params and an unknown tool are -32602, a fence's refusal isError"
	atf_set require.user root
	atf_set timeout 90
}
tools_body() {
	mcp_setup
	client mt main > client.out 2> client.err || {
		cat client.out client.err >&2
		atf_fail "client: $(grep FAILED client.out client.err |
		    head -1) $(tail -1 client.err)"
	}
	cat client.out
	grep -Eq '^level: (L[0-9.]+|not-earned)$' client.out ||
	    atf_fail "no measured level in the boot's result"
	grep -q '^ok: stop$' client.out || atf_fail "the client stopped short"
}
tools_cleanup() { fenced_cleanup; }

atf_test_case bad_requests
bad_requests_head() {
	atf_set descr "bad JSON is -32700, an unknown method -32601, bad params -32602, an over-long line, a nested one and a batch -32600, all answered and the next request served; end of input exits 0"
	atf_set timeout 30
}
bad_requests_body() {
	fenced_vars
	python3 - > in.txt <<'PY'
import sys
w = sys.stdout.buffer.write
w(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
w(b'{not json\n')
w(b'\xff\xfe\x00garbage\n')
w(b'{"jsonrpc":"2.0","id":2,"method":"no/such"}\n')
w(b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"exec","arguments":{"key":"k","argv":[1]}}}\n')
w(b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"boot","arguments":{"key":"' + b'k' * 5000 + b'"}}}\n')
w(b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":[]}\n')
w(b'{"jsonrpc":"2.0","id":51,"method":"tools/call","params":{"name":"boot","arguments":{"key":"k","inner":"gvisor"}}}\n')
w(b'{"jsonrpc":"2.0","id":6,"method":"ping","params":{"a":' + b'[' * 100000 + b']' * 100000 + b'}}\n')
w(b'[{"jsonrpc":"2.0","id":7,"method":"ping"}]\n')
w(b'{"jsonrpc":"2.0","id":8,"method":"ping","x":"' + b'a' * (5 * 1024 * 1024) + b'"}\n')
w(b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}\n')
w(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
w(b'{"jsonrpc":"2.0","id":9,"method":"tools/list"}\n')
w(b'{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"list"}}')
PY
	timeout 20 "$BIN/fence-mcp" -s "$PWD/none.sock" < in.txt > out.txt \
	    2> err.txt
	atf_check_equal "$?" 0
	cat out.txt
	n=0
	for want in '"id":1,"result":\{\}' \
	    '"id":null,"error":\{"code":-32700' \
	    '"id":null,"error":\{"code":-32700' \
	    '"id":2,"error":\{"code":-32601' \
	    '"id":3,"error":\{"code":-32602' \
	    '"id":4,"error":\{"code":-32602' \
	    '"id":5,"error":\{"code":-32602' \
	    '"id":51,"error":\{"code":-32602.*inner' \
	    '"id":null,"error":\{"code":-32600,"message":"nested' \
	    '"id":null,"error":\{"code":-32600,"message":"not a request' \
	    '"id":null,"error":\{"code":-32600,"message":"message longer' \
	    '"id":null,"error":\{"code":-32600,"message":"bad id' \
	    '"id":9,"result":\{"tools":\[\{"name":"boot"' \
	    '"id":10,"result":.*"isError":true'; do
		n=$((n + 1))
		sed -n "${n}p" out.txt | grep -Eq "$want" ||
		    atf_fail "answer $n is not $want: $(sed -n "${n}p" out.txt | cut -c1-200)"
	done
	atf_check_equal "$(wc -l < out.txt)" "$n"
}

atf_test_case vanish cleanup
vanish_head() {
	atf_set descr "a client killed while its exec runs: fence-mcp exits at once, the command is abandoned and killed, and the daemon and the fence serve on"
	atf_set require.user root
	atf_set timeout 90
}
vanish_body() {
	mcp_setup
	# node itself, not a subshell: it is what is killed.
	node "$TOPDIR/regress/mcp_client.cjs" "$NPM" "$BIN/fence-mcp" \
	    "$PWD/ctl.sock" mv vanish > client.out 2> client.err &
	cpid=$!
	wait_until 20 grep -q '^running$' client.out ||
	    atf_fail "the exec did not start: $(cat client.out client.err)"
	mpid=$(cat mcp.pid)
	[ -d /proc/$mpid ] || atf_fail "no fence-mcp (pid $mpid)"
	kill -9 $cpid
	wait $cpid 2>/dev/null
	i=0
	while [ -d /proc/$mpid ] && [ "$(status_field $mpid State | cut -c1)" != Z ]; do
		i=$((i + 1))
		[ $i -le 100 ] || atf_fail "fence-mcp did not exit"
		sleep 0.05
	done
	# The abandoned command is killed with its connection.
	i=0
	while pgrep -f 'sleep 47[.]5' > /dev/null; do
		i=$((i + 1))
		[ $i -le 200 ] || atf_fail "the command runs on"
		sleep 0.05
	done
	# Its log (the client's stderr): it saw the client go, and a
	# sanitizer build found nothing on the way out.
	grep -q 'the client went away' client.err ||
	    atf_fail "fence-mcp did not say why it exits: $(cat client.err)"
	! grep -q Sanitizer client.err || atf_fail "$(cat client.err)"
	atf_check -o inline:"ok\n" $CTL exec mv -- echo ok
	atf_check -o ignore $CTL show stats
}
vanish_cleanup() { fenced_cleanup; }

atf_test_case live cleanup
live_head() {
	atf_set descr "the SDK's client: port_list, port_open (a GET through its forward on 127.0.0.1), port_close; a terminal running sh: echo hi written, hi read, exit 7's status; bad ids, a huge wait_ms, no key: answered; a terminal whose fence stops reads ended"
	atf_set require.user root
	atf_set timeout 90
}
live_body() {
	mcp_setup
	$CTL -w 120 boot ml tier L2 > boot.out 2>&1 ||
	    atf_fail "boot: $(cat boot.out)"
	printf 'hello through the forward\n' |
	    $CTL put ml - hello.txt || atf_fail "put"
	$CTL spawn ml -- python3 -m http.server 8000 --bind 127.0.0.1 \
	    > /dev/null || atf_fail "spawn the server"
	wait_until 30 sh -c "$CTL ports ml 2>/dev/null | grep -qx 8000" ||
	    atf_fail "port 8000 never listened"
	client ml live > client.out 2> client.err || {
		cat client.out client.err >&2
		atf_fail "client: $(grep FAILED client.out client.err |
		    head -1) $(tail -1 client.err)"
	}
	cat client.out
	! grep -q Sanitizer client.err || atf_fail "$(cat client.err)"
	atf_check -o ignore $CTL show stats
}
live_cleanup() { fenced_cleanup; }

atf_init_test_cases() {
	atf_add_test_case tools
	atf_add_test_case bad_requests
	atf_add_test_case vanish
	atf_add_test_case live
}
