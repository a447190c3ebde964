#! /usr/bin/atf-sh
# Streamed exec (docs/http.md, "Streamed exec"; docs/agent.md,
# "Streaming"): server-sent events read as they come by a client of
# our own (regress/sse.py), backpressure on a reader that stops, a
# client that goes away, fencectl exec's stdin, streaming and exit
# statuses, a hostile command and a second user.

. "$(atf_get_srcdir)/lib.subr"

token_of() {
	"$BIN/fencectl" -s "$PWD/ctl.sock" token 2>/dev/null | tail -n 1
}


# $SSE [OPTIONS] PORT TOKEN KEY BODY: regress/sse.py, a word list
need_python() {
	command -v python3 > /dev/null || \
	    atf_skip "no python3 (scripts/deps.sh installs it)"
	SSE="python3 $TOPDIR/regress/sse.py"
}

# How many processes in fence $1 have $2 in their command line.
in_fence() {
	$CTL exec "$1" -- sh -c 'for p in /proc/[0-9]*; do
	    tr "\0" " " < $p/cmdline 2>/dev/null; echo; done' | \
	    grep -c -- "$2"
}

gone_in_fence() {
	[ "$(in_fence "$1" "$2")" = 0 ]
}

atf_test_case events cleanup
events_head() {
	atf_set descr "stream: chunks in order while the command runs, stderr, binary as base64 exactly, the result the non-streamed one"
	atf_set require.user root
	atf_set timeout 120
}
events_body() {
	fenced_vars
	need_python
	fenced_start
	t=$(token_of)
	p=$(fenced_port)
	call "$t" POST /api/environments/s '{}'
	expect 201

	# The command waits for a file only made once the first chunk was
	# read: that chunk came while it ran, not with its end.
	atf_check -o save:ev.out $SSE --then '{"command":"touch go"}' \
	    $p "$t" s '{"command":"rm -f go; echo a; while [ ! -e go ]; do sleep 0.05; done; echo b >&2; echo c","stream":true}'
	atf_check -o inline:'status 200
event stdout {"data":"a\\n","encoding":"utf-8"}
then 200
event stderr {"data":"b\\n","encoding":"utf-8"}
event stdout {"data":"c\\n","encoding":"utf-8"}
' sed -n '1,5p' ev.out
	atf_check -o match:'^event result \{"exitCode":0,"signal":null,"stdout":"a\\nc\\n","stderr":"b\\n","encoding":"utf-8","durationMs":[0-9]+,"truncated":false\}$' \
	    sed -n 6p ev.out
	atf_check -o inline:"same 1\n" sed -n '$p' ev.out

	# Not UTF-8: base64, the bytes exact; the result equals the plain one.
	cat > bin.json <<'JSON'
{"argv":["sh","-c","printf '\\377\\376\\000abc'; printf '\\351' >&2; exit 7"]
JSON
	atf_check -o save:bin.out $SSE $p "$t" s \
	    "$(cat bin.json),\"stream\":true}"
	atf_check -o inline:"stdout-hex fffe00616263\nstderr-hex e9\nsame 1\n" \
	    sed -n '/-hex/p;/^same/p' bin.out
	sed -n 's/^event result //p' bin.out | sed 's/"durationMs":[0-9]*,//' \
	    > streamed.json
	call "$t" POST /api/environments/s/exec "$(cat bin.json)}"
	expect 200
	sed -e 's/"durationMs":[0-9]*,//' -e '/^$/d' body.out > plain.json
	atf_check -o file:plain.json cat streamed.json
	atf_check -o match:'"exitCode":7' cat plain.json

	# Errors before the command: plain JSON, not a stream.
	atf_check -o inline:'status 404
body {"error":"not-found","message":"no environment nope"}
' $SSE $p "$t" nope '{"command":"true","stream":true}'
	call "$t" POST /api/environments/s/exec '{"command":"true","stream":1}'
	expect 400 '"error":"bad-type"' 'stream must be true or false'
	# The command cannot start: an error event with its status.
	atf_check -o match:'^event error \{"error":"exec-failed",.*"status":422' \
	    $SSE $p "$t" s '{"argv":["/nonexistent"],"stream":true}'
	fenced_stop
}
events_cleanup() { fenced_cleanup; }

atf_test_case limits cleanup
limits_head() {
	atf_set descr "stream: timeout and output over budget end in an error event with the output so far; the budget holds over the chunks"
	atf_set require.user root
	atf_set timeout 120
}
limits_body() {
	fenced_vars
	need_python
	fenced_start
	t=$(token_of)
	p=$(fenced_port)
	call "$t" POST /api/environments/s '{}'
	expect 201
	atf_check -o save:tmo.out $SSE $p "$t" s \
	    '{"command":"echo before; exec sleep 30","timeoutMs":300,"stream":true}'
	atf_check -o match:'^event stdout \{"data":"before\\n"' cat tmo.out
	atf_check -o match:'^event error \{"error":"exec-timeout",.*"status":504,.*"signal":9,"stdout":"before\\n"' \
	    cat tmo.out
	# A hostile writer on both streams: exactly maxBytes come, in chunks
	# and in the final event alike.
	atf_check -o save:big.out $SSE $p "$t" s \
	    '{"command":"head -c 50000000 /dev/urandom & head -c 50000000 /dev/urandom >&2; wait","maxBytes":100000,"stream":true}'
	atf_check -o match:'^event error \{"error":"exec-output-over-budget",.*"status":422,.*"truncated":true' \
	    cat big.out
	atf_check -o inline:"same 1\n" sed -n '$p' big.out
	o=$(sed -n 's/^stdout-hex //p' big.out | tr -d '\n' | wc -c)
	e=$(sed -n 's/^stderr-hex //p' big.out | tr -d '\n' | wc -c)
	atf_check_equal $(((o + e) / 2)) 100000
	# One that closes its pipes and goes on: ends as ever.
	atf_check -o save:closed.out $SSE $p "$t" s \
	    '{"command":"echo x; exec >&- 2>&-; sleep 0.2; exit 4","stream":true}'
	atf_check -o match:'^event result \{"exitCode":4,' cat closed.out
	fenced_stop
}
limits_cleanup() { fenced_cleanup; }

atf_test_case slow_reader cleanup
slow_reader_head() {
	atf_set descr "stream: a client that reads nothing blocks the command (200 MB to stdout), the broker's memory stays bounded"
	atf_set require.user root
	atf_set timeout 180
}
slow_reader_body() {
	fenced_vars
	need_python
	fenced_start
	t=$(token_of)
	p=$(fenced_port)
	call "$t" POST /api/environments/s '{}'
	expect 201
	bp=$(fenced_pid broker)
	rss0=$(status_field $bp VmRSS | awk '{ print $1 }')
	# The window as JSON is 1.5 MiB; ASan's quarantine keeps what was
	# freed, so a sanitizer build is given more room.
	bound=16384
	ldd "$BIN/fenced" 2>/dev/null | grep -q libasan && bound=98304
	# NUL bytes: each is 6 bytes of JSON, the most a chunk grows.
	$SSE --stall "$PWD/go" $p "$t" s \
	    '{"command":"head -c 200000000 /dev/zero","maxBytes":1048576,"timeoutMs":60000,"stream":true}' \
	    > slow.out &
	cpid=$!
	wait_until 20 grep -q '^event stdout' slow.out || \
	    atf_fail "no first chunk: $(cat slow.out)"
	# Blocked, not done: once the window is out, it stays in its write
	# (without backpressure it would be over budget, and dead, at once).
	i=0
	while [ $i -lt 5 ]; do
		[ "$(in_fence s 'head -c 200000000')" -ge 1 ] || \
		    atf_fail "the command is gone: $(cat slow.out | cut -c1-200)"
		rss=$(status_field $bp VmRSS | awk '{ print $1 }')
		[ $((rss - rss0)) -lt $bound ] || \
		    atf_fail "broker RSS grew from $rss0 to $rss kB"
		sleep 0.5
		i=$((i + 1))
	done
	grep -q '^event error' slow.out && atf_fail "ended while stalled"
	# Reading again, it goes on to the budget.
	touch go
	wait $cpid
	atf_check -o match:'^event error \{"error":"exec-output-over-budget"' \
	    cat slow.out
	atf_check -o inline:"same 1\n" sed -n '$p' slow.out
	fenced_stop
}
slow_reader_cleanup() { fenced_cleanup; }

atf_test_case disconnect cleanup
disconnect_head() {
	atf_set descr "stream: a client that goes away has its command killed in the fence; over fencectl too"
	atf_set require.user root
	atf_set timeout 120
}
disconnect_body() {
	fenced_vars
	need_python
	fenced_start
	t=$(token_of)
	p=$(fenced_port)
	call "$t" POST /api/environments/s '{}'
	expect 201
	$SSE --stall "$PWD/never" $p "$t" s \
	    '{"command":"echo started; exec sleep 41","timeoutMs":60000,"stream":true}' \
	    > d.out &
	cpid=$!
	wait_until 20 grep -q '^event stdout' d.out || atf_fail "no chunk"
	atf_check_equal 1 "$(in_fence s 'sleep 41')"
	kill $cpid
	wait $cpid
	wait_until 10 gone_in_fence s 'sleep 41' || \
	    atf_fail "the command outlived its client"
	# fencectl killed: its connection closes, its command dies.
	$CTL -n exec s timeout 60000 -- sh -c 'echo up; exec sleep 42' \
	    > c.out 2>&1 &
	fpid=$!
	wait_until 20 grep -q '^up$' c.out || atf_fail "no output: $(cat c.out)"
	atf_check_equal 1 "$(in_fence s 'sleep 42')"
	kill -9 $fpid
	wait $fpid
	wait_until 10 gone_in_fence s 'sleep 42' || \
	    atf_fail "the command outlived fencectl"
	fenced_stop
}
disconnect_cleanup() { fenced_cleanup; }

atf_test_case ctl_exec cleanup
ctl_exec_head() {
	atf_set descr "fencectl exec: stdin to the command, -n and none, too much refused, output as it comes, the documented exit statuses"
	atf_set require.user root
	atf_set timeout 120
}
ctl_exec_body() {
	fenced_vars
	fenced_start
	atf_check -o ignore $CTL boot c
	printf 'data\nmore' > in.txt
	atf_check -o file:in.txt $CTL exec c -- cat < in.txt
	atf_check -o inline:"data\nmore" sh -c "printf 'data\nmore' | $CTL exec c -- cat"
	head -c 300000 /dev/urandom > bin.in
	atf_check -o file:bin.in $CTL exec c output 1048576 -- cat < bin.in
	# -n: the command reads end of file, stdin is left alone.
	atf_check -o inline:"0\n" $CTL -n exec c -- wc -c < in.txt
	# More than 1 MiB: refused, nothing run.
	head -c 1048577 /dev/zero > big.in
	atf_check -s exit:1 -e match:"standard input is larger than 1048576 bytes; not sent" \
	    $CTL exec c -- sh -c 'echo ran' < big.in
	head -c 1048576 /dev/zero > max.in
	atf_check -o inline:"1048576\n" $CTL exec c -- wc -c < max.in
	# As it comes: the first line is out while the command waits for a
	# file only made after it was seen.
	$CTL -n exec c timeout 30000 -- sh -c \
	    'echo first; while [ ! -e go ]; do sleep 0.05; done; echo second' \
	    > stream.out &
	spid=$!
	wait_until 20 grep -q '^first$' stream.out || atf_fail "no first line"
	grep -q second stream.out && atf_fail "second before go"
	atf_check $CTL -n exec c -- touch go
	wait $spid || atf_fail "exit $?"
	atf_check -o inline:"first\nsecond\n" cat stream.out
	# Statuses.
	atf_check -s exit:3 -o inline:"o\n" -e inline:"e\n" $CTL -n exec c -- \
	    sh -c 'echo o; echo e >&2; exit 3'
	atf_check -s exit:137 $CTL -n exec c -- sh -c 'kill -9 $$'
	atf_check -s exit:124 -o inline:"t\n" -e match:"exec-timeout" \
	    $CTL -n exec c timeout 300 -- sh -c 'echo t; exec sleep 10'
	atf_check -s exit:125 -o ignore -e match:"exec-output-over-budget" \
	    $CTL -n exec c output 1024 -- head -c 5000 /dev/zero
	atf_check -s exit:126 -e match:"exec-failed" $CTL -n exec c -- \
	    /nonexistent
	atf_check -s exit:126 -e match:"exec-cwd-outside-home" \
	    $CTL -n exec c cwd /etc -- true
	atf_check -s exit:1 -e match:"not-found" $CTL -n exec nope -- true
	fenced_stop
}
ctl_exec_cleanup() { fenced_cleanup; }

atf_test_case other_user cleanup
other_user_head() {
	atf_set descr "stream: another user can neither stream in nor stop a user's command, over HTTP or fencectl"
	atf_set require.user root
	atf_set timeout 120
}
other_user_body() {
	fenced_vars
	need_python
	users_add 2 fst
	fenced_run_socket
	h=$(fenced_homes)
	fenced_conf | sed -e "s|^homes .*|homes \"$h/%u\"|" > fenced.conf
	fenced_start
	ua=$(sed -n 1p users.txt)
	ub=$(sed -n 2p users.txt)
	sock=$(cat run.sock)
	asa=$(as_user "$ua")
	asb=$(as_user "$ub")
	ta=$($asa "$BIN/fencectl" -s "$sock" token 2>/dev/null)
	tb=$($asb "$BIN/fencectl" -s "$sock" token 2>/dev/null)
	p=$(fenced_port)
	call "$ta" POST /api/environments/ka '{}'
	expect 201
	$SSE --stall "$PWD/go" $p "$ta" ka \
	    '{"command":"echo a; exec sleep 43","timeoutMs":60000,"stream":true}' \
	    > a.out &
	cpid=$!
	wait_until 20 grep -q '^event stdout' a.out || atf_fail "no chunk"
	# B: the key is not theirs, over HTTP and the socket alike.
	atf_check -o inline:'status 404
body {"error":"not-found","message":"no environment ka"}
' $SSE $p "$tb" ka '{"command":"pkill sleep","stream":true}'
	atf_check -s exit:1 -e match:"not-found" $asb "$BIN/fencectl" \
	    -s "$sock" -n exec "$ua/ka" -- pkill sleep
	atf_check -s exit:1 -e match:"not-found" $asb "$BIN/fencectl" \
	    -s "$sock" -n exec "$(id -u "$ua")/ka" -- kill -9 -1
	# B's own fence of that name is B's alone.
	call "$tb" POST /api/environments/ka '{}'
	expect 201
	atf_check -o match:'^event (result|error)' $SSE $p "$tb" ka \
	    '{"command":"kill -9 -1; true","stream":true}'
	# A's command still runs, its stream still open.
	n=$($asa "$BIN/fencectl" -s "$sock" -n exec ka -- sh -c \
	    'for p in /proc/[0-9]*; do tr "\0" " " < $p/cmdline; echo; done' | \
	    grep -c "^sleep 43")
	atf_check_equal 1 "$n"
	grep -q '^event error\|^event result' a.out && atf_fail "A's stream ended"
	kill $cpid
	wait $cpid
	fenced_stop
}
other_user_cleanup() { fenced_cleanup; }

atf_test_case runsc cleanup
runsc_head() {
	atf_set descr "stream on the runsc backend (the same agent): chunks while it runs, a stalled reader blocks it, a client that goes away kills it"
	atf_set require.user root
	atf_set timeout 180
}
runsc_body() {
	fenced_vars
	need_python
	FENCED_BACKEND=runsc
	fenced_start
	t=$(token_of)
	p=$(fenced_port)
	call "$t" POST /api/environments/r '{}'
	expect 201 '"backend":"runsc"'
	atf_check -o save:ev.out $SSE --then '{"command":"touch go"}' \
	    $p "$t" r '{"command":"rm -f go; echo a; while [ ! -e go ]; do sleep 0.05; done; echo b","stream":true}'
	atf_check -o inline:'status 200
event stdout {"data":"a\\n","encoding":"utf-8"}
then 200
event stdout {"data":"b\\n","encoding":"utf-8"}
' sed -n '1,4p' ev.out
	atf_check -o inline:"same 1\n" sed -n '$p' ev.out
	$SSE --stall "$PWD/go2" $p "$t" r \
	    '{"command":"head -c 200000000 /dev/zero","maxBytes":1048576,"timeoutMs":60000,"stream":true}' \
	    > slow.out &
	cpid=$!
	wait_until 30 grep -q '^event stdout' slow.out || atf_fail "no chunk"
	sleep 1
	atf_check_equal 1 "$(in_fence r '^head -c 200000000')"
	kill $cpid
	wait $cpid
	wait_until 10 gone_in_fence r '^head -c 200000000' || \
	    atf_fail "the command outlived its client"
	fenced_stop
}
runsc_cleanup() { fenced_cleanup; }

atf_test_case vm cleanup
vm_head() {
	atf_set descr "stream on the vm backend (the same agent, over virtio-serial): chunks while it runs, binary exact, a client that goes away kills it"
	atf_set require.user root
	atf_set timeout 300
}
vm_body() {
	fenced_vars
	need_python
	[ -x /usr/bin/qemu-system-x86_64 ] || \
	    atf_skip "QEMU is not installed (scripts/deps.sh installs it)"
	vm_available || atf_skip "no vm boot files in $IMAGES and $VMDIR \
(make vm-images, as root, builds them)"
	{ fenced_conf; vm_conf_lines; } > fenced.conf
	fenced_start
	t=$(token_of)
	p=$(fenced_port)
	call "$t" POST /api/environments/v '{"backend":"vm"}'
	expect 201 '"backend":"vm"'
	atf_check -o save:ev.out $SSE --then '{"command":"touch go"}' \
	    $p "$t" v '{"command":"rm -f go; echo a; while [ ! -e go ]; do sleep 0.05; done; printf \"\\377\"","stream":true}'
	atf_check -o inline:'status 200
event stdout {"data":"a\\n","encoding":"utf-8"}
then 200
event stdout {"data":"/w==","encoding":"base64"}
' sed -n '1,4p' ev.out
	atf_check -o inline:"same 1\n" sed -n '$p' ev.out
	$SSE --stall "$PWD/never" $p "$t" v \
	    '{"command":"echo up; exec sleep 45","timeoutMs":60000,"stream":true}' \
	    > d.out &
	cpid=$!
	wait_until 60 grep -q '^event stdout' d.out || atf_fail "no chunk"
	atf_check_equal 1 "$(in_fence v '^sleep 45')"
	kill $cpid
	wait $cpid
	wait_until 20 gone_in_fence v '^sleep 45' || \
	    atf_fail "the command outlived its client"
	fenced_stop
}
vm_cleanup() { fenced_cleanup; }

atf_init_test_cases() {
	atf_add_test_case events
	atf_add_test_case limits
	atf_add_test_case slow_reader
	atf_add_test_case disconnect
	atf_add_test_case ctl_exec
	atf_add_test_case other_user
	atf_add_test_case runsc
	atf_add_test_case vm
}
