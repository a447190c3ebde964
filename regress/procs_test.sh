#! /usr/bin/atf-sh
# Background processes over HTTP (docs/http.md, "Background
# processes"): start, list, read partial output, signal, forget; what a
# kill reaches (setsid, double forks), the bound per fence, hostile
# output, the end of the fence, and a second user who can touch none of
# it.

. "$(atf_get_srcdir)/lib.subr"

E=/api/environments

token_of() {
	"$BIN/fencectl" -s "$PWD/ctl.sock" token 2>/dev/null | tail -n 1
}

# Start a daemon (fenced.conf extra lines in $1), a token in $T, and
# environment KEY $2 booted.
procs_setup() {
	fenced_vars
	fenced_conf > fenced.conf
	[ -z "${1:-}" ] || echo "$1" >> fenced.conf
	fenced_start
	T=$(token_of)
	[ -n "$T" ] || atf_fail "no token"
	call "$T" POST $E/$2 '{"tier":"L1.5"}'
	expect 201 '"state":"running"'
}

# get KEY ID [QUERY]: read process ID into body.out; 0 if it matches
# every pattern after it.
proc_matches() {
	_k=$1 _id=$2 _q=$3
	shift 3
	call "$T" GET "$E/$_k/processes/$_id$_q"
	for _p in "$@"; do
		grep -Eq -- "$_p" body.out || return 1
	done
}

# Wait (at most 20 s) until process ID of KEY matches the patterns.
proc_wait() {
	wait_until 20 proc_matches "$@" || atf_fail "process $2 never \
	    matched $*: $(cat body.out)"
}

# Processes of uid $1 on the host whose command line matches $2.
host_procs() {
	ps -u "$1" -o pid=,args= 2>/dev/null | grep -E -- "$2" | grep -v grep
}

fence_uid() {
	call "$T" POST $E/$1/exec '{"argv":["id","-u"]}'
	expect 200
	field stdout | sed 's/\\n$//'
}

atf_test_case basic cleanup
basic_head() {
	atf_set descr "start sleep 30, list it, kill it (exited, signal 15); an exited one's output and exit code; forget; unknown and bad ids 404"
	atf_set require.user root
	atf_set timeout 120
}
basic_body() {
	procs_setup "" w
	call "$T" POST $E/w/processes '{"argv":["sleep","30"]}'
	expect 201 '"id":"[0-9]+"' '"state":"running"' '"argv":\["sleep","30"\]' \
	    '"exitCode":null' '"signal":null' '"startedAt":"20[0-9-]+T'
	id=$(field id)
	call "$T" GET $E/w/processes
	expect 200 "^\\{\"processes\":\\[\\{\"id\":\"$id\"" '"state":"running"'
	call "$T" DELETE "$E/w/processes/$id"
	expect 200 '"signalSent":"TERM"'
	proc_wait w "$id" "" '"state":"exited"'
	expect 200 '"signal":15' '"exitCode":null' '"error":null'
	# Forgotten by a DELETE once exited; then unknown.
	call "$T" DELETE "$E/w/processes/$id"
	expect 200 '"forgotten":true' '"state":"exited"'
	call "$T" GET "$E/w/processes/$id"
	expect 404 '"error":"process-not-found"'
	call "$T" DELETE "$E/w/processes/$id"
	expect 404 '"error":"process-not-found"'
	call "$T" GET $E/w/processes
	expect 200 '^\{"processes":\[\]\}$'

	# An exited one keeps its output and exit code, stdin as exec's.
	call "$T" POST $E/w/processes '{"command":"cat; echo err >&2; exit 3","stdin":"in\n"}'
	expect 201
	id=$(field id)
	proc_wait w "$id" "" '"state":"exited"'
	expect 200 '"exitCode":3' '"signal":null' '"stdout":"in\\n"' \
	    '"stderr":"err\\n"' '"stdoutBytes":3' '"stderrBytes":4' \
	    '"encoding":"utf-8"' '"truncated":false'
	# Binary output comes as base64, as exec's.
	call "$T" POST $E/w/processes '{"command":"printf \"\\377\\000A\""}'
	expect 201
	id2=$(field id)
	proc_wait w "$id2" "" '"state":"exited"'
	expect 200 '"encoding":"base64"' '"stdout":"/wBB"'
	# A command that cannot start: it exits, saying why.
	call "$T" POST $E/w/processes '{"argv":["no-such-command"]}'
	expect 201
	id3=$(field id)
	proc_wait w "$id3" "" '"state":"exited"'
	expect 200 '"error":"exec-failed"' '"message":"cannot execute'

	# Unknown, malformed and zero ids; bad queries.
	for p in 999999 0 abc 01 -1 4294967296 "1/x"; do
		call "$T" GET "$E/w/processes/$p"
		expect 404 '"error":"process-not-found"'
	done
	call "$T" DELETE "$E/w/processes/$id?signal=STOP"
	expect 400 '"error":"bad-parameter"'
	call "$T" GET "$E/w/processes/$id?signal=KILL"
	expect 400 '"error":"bad-parameter"'
	call "$T" GET "$E/w/processes/$id?stdoutOffset=x"
	expect 400 '"error":"bad-parameter"'
	call "$T" GET "$E/w/processes/$id?stdoutOffset=1&stdoutOffset=2"
	expect 400 '"error":"bad-parameter"'
	call "$T" PUT "$E/w/processes/$id"
	expect 405
	call "$T" POST $E/w/processes '{"argv":["true"],"timeoutMs":604800001}'
	expect 400 '"error":"out-of-range"'
	call "$T" POST $E/w/processes '{"argv":["true"],"bogus":1}'
	expect 400 '"error":"unknown-field"'
	call "$T" GET $E/nosuch/processes
	expect 404 '"error":"not-found"'
	fenced_stop
}
basic_cleanup() { fenced_cleanup; }

atf_test_case partial cleanup
partial_head() {
	atf_set descr "the output of a running process so far, then only what is new with stdoutOffset; SIGKILL"
	atf_set require.user root
	atf_set timeout 120
}
partial_body() {
	procs_setup "" w
	call "$T" POST $E/w/processes '{"command":"i=0; while [ $i -lt 600 ]; do echo line $i; i=$((i + 1)); sleep 0.1; done"}'
	expect 201
	id=$(field id)
	proc_wait w "$id" "" '"state":"running"' '"stdout":"line 0\\n'
	n=$(sed -n 's/.*"stdoutBytes":\([0-9]*\).*/\1/p' body.out)
	[ "$n" -gt 0 ] || atf_fail "no stdoutBytes: $(cat body.out)"
	# From the offset: nothing of what was read before.
	proc_wait w "$id" "?stdoutOffset=$n" "\"stdoutOffset\":$n" \
	    '"stdout":"line [1-9]'
	grep -q '"stdout":"line 0' body.out && atf_fail "old output again"
	# An offset past the end is where it is now: nothing.
	call "$T" GET "$E/w/processes/$id?stdoutOffset=1048576&encoding=base64"
	expect 200 '"stdout":""' '"encoding":"base64"'
	call "$T" DELETE "$E/w/processes/$id?signal=KILL"
	expect 200 '"signalSent":"KILL"'
	proc_wait w "$id" "" '"state":"exited"'
	expect 200 '"signal":9'
	fenced_stop
}
partial_cleanup() { fenced_cleanup; }

atf_test_case setsid cleanup
setsid_head() {
	atf_set descr "a kill reaches what the process left in other sessions and double forks; INT and HUP too"
	atf_set require.user root
	atf_set timeout 120
}
setsid_body() {
	procs_setup "" w
	uid=$(fence_uid w)
	call "$T" POST $E/w/processes '{"command":"setsid sh -c \"sleep 3011 & sleep 3012\" & (sleep 3013 &); sleep 3014"}'
	expect 201
	id=$(field id)
	wait_until 20 has_output host_procs "$uid" "sleep 3011" ||
	    atf_fail "never started"
	wait_until 20 has_output host_procs "$uid" "sleep 3013" ||
	    atf_fail "never started"
	call "$T" DELETE "$E/w/processes/$id"
	expect 200 '"signalSent":"TERM"'
	wait_empty host_procs "$uid" "sleep 301[1-4]"
	proc_wait w "$id" "" '"state":"exited"'
	expect 200 '"signal":15'
	# INT and HUP reach a process that waits.
	for s in INT:2 HUP:1; do
		call "$T" POST $E/w/processes '{"argv":["sleep","3015"]}'
		expect 201
		id=$(field id)
		call "$T" DELETE "$E/w/processes/$id?signal=${s%:*}"
		expect 200 "\"signalSent\":\"${s%:*}\""
		proc_wait w "$id" "" '"state":"exited"'
		expect 200 "\"signal\":${s#*:}"
	done
	# A process that ignores TERM still dies of KILL, its kin too.
	call "$T" POST $E/w/processes '{"command":"trap \"\" TERM; setsid sleep 3016 & while :; do sleep 1; done"}'
	expect 201
	id=$(field id)
	wait_until 20 has_output host_procs "$uid" "sleep 3016" ||
	    atf_fail "never started"
	call "$T" DELETE "$E/w/processes/$id"
	expect 200
	call "$T" GET "$E/w/processes/$id"
	expect 200 '"state":"running"'
	call "$T" DELETE "$E/w/processes/$id?signal=KILL"
	expect 200
	proc_wait w "$id" "" '"state":"exited"'
	expect 200 '"signal":9'
	wait_empty host_procs "$uid" "sleep 3016"
	fenced_stop
}
setsid_cleanup() { fenced_cleanup; }

atf_test_case limit cleanup
limit_head() {
	atf_set descr "exec processes N: the N+1th is refused with too-many-processes 429, exited ones count until deleted"
	atf_set require.user root
	atf_set timeout 120
}
limit_body() {
	procs_setup "exec processes 3" w
	call "$T" POST $E/w/processes '{"argv":["true"]}'
	expect 201
	first=$(field id)
	call "$T" POST $E/w/processes '{"argv":["sleep","60"]}'
	expect 201
	call "$T" POST $E/w/processes '{"argv":["sleep","60"]}'
	expect 201
	call "$T" POST $E/w/processes '{"argv":["sleep","60"]}'
	expect 429 '"error":"too-many-processes"' 'exec processes 3'
	proc_wait w "$first" "" '"state":"exited"'
	call "$T" POST $E/w/processes '{"argv":["sleep","60"]}'
	expect 429 '"error":"too-many-processes"'
	call "$T" DELETE "$E/w/processes/$first"
	expect 200 '"forgotten":true'
	call "$T" POST $E/w/processes '{"argv":["sleep","60"]}'
	expect 201
	# Another environment has its own.
	call "$T" POST $E/v '{"tier":"L1.5"}'
	expect 201
	call "$T" POST $E/v/processes '{"argv":["true"]}'
	expect 201
	# The bound of the configuration.
	echo "exec processes 65" >> fenced.conf
	atf_check -s not-exit:0 -o ignore -e match:"exec processes" \
	    "$BIN/fenced" -n -f fenced.conf
	fenced_stop
}
limit_cleanup() { fenced_cleanup; }

atf_test_case many cleanup
many_head() {
	atf_set descr "execs still run, one after the other and side by side, while 16 background processes run"
	atf_set require.user root
	atf_set timeout 180
}
many_body() {
	procs_setup "" w
	i=0
	while [ $i -lt 16 ]; do
		call "$T" POST $E/w/processes '{"argv":["sleep","120"]}'
		expect 201
		i=$((i + 1))
	done
	call "$T" POST $E/w/processes '{"argv":["sleep","120"]}'
	expect 429 '"error":"too-many-processes"'
	i=0
	while [ $i -lt 10 ]; do
		call "$T" POST $E/w/exec "{\"argv\":[\"echo\",\"hi $i\"]}"
		expect 200 "\"stdout\":\"hi $i\\\\n\""
		i=$((i + 1))
	done
	# Side by side (not a bare wait: the daemon is a child too).
	pids=
	for i in 1 2 3 4 5 6 7 8; do
		api "$T" POST $E/w/exec "{\"argv\":[\"echo\",\"par $i\"]}" \
		    > par.$i &
		pids="$pids $!"
	done
	for p in $pids; do
		wait $p
	done
	for i in 1 2 3 4 5 6 7 8; do
		grep -q "\"stdout\":\"par $i\\\\n\"" par.$i ||
		    atf_fail "exec $i: $(cat par.$i)"
	done
	call "$T" POST $E/w/exec '{"command":"sleep 0.5","timeoutMs":200}'
	expect 504 '"error":"exec-timeout"'
	call "$T" GET $E/w/processes
	expect 200
	[ "$(grep -o '"state":"running"' body.out | wc -l)" = 16 ] ||
	    atf_fail "not 16 running: $(cat body.out)"
	fenced_stop
}
many_cleanup() { fenced_cleanup; }

atf_test_case output cleanup
output_head() {
	atf_set descr "a hostile process writing without end: the first maxBytes are kept, truncated, it runs on, the agent answers"
	atf_set require.user root
	atf_set timeout 120
}
output_body() {
	procs_setup "" w
	call "$T" POST $E/w/processes '{"command":"echo first; yes x & exec cat /dev/zero >&2","maxBytes":4096}'
	expect 201 '"maxBytes":4096'
	id=$(field id)
	proc_wait w "$id" "" '"truncated":true'
	expect 200 '"state":"running"' '"stdout":"first\\n'
	o=$(sed -n 's/.*"stdoutBytes":\([0-9]*\).*/\1/p' body.out)
	e=$(sed -n 's/.*"stderrBytes":\([0-9]*\).*/\1/p' body.out)
	[ $((o + e)) = 4096 ] || atf_fail "kept $o + $e: $(cat body.out)"
	# Still exactly that much, however long it writes.
	call "$T" POST $E/w/exec '{"argv":["echo","alive"]}'
	expect 200 '"stdout":"alive\\n"'
	call "$T" GET "$E/w/processes/$id"
	expect 200 '"state":"running"' "\"stdoutBytes\":$o," \
	    "\"stderrBytes\":$e,"
	call "$T" DELETE "$E/w/processes/$id?signal=KILL"
	expect 200
	proc_wait w "$id" "" '"state":"exited"'
	call "$T" POST $E/w/processes '{"argv":["true"],"maxBytes":100}'
	expect 400 '"error":"out-of-range"'
	fenced_stop
}
output_cleanup() { fenced_cleanup; }

atf_test_case stop cleanup
stop_head() {
	atf_set descr "background processes die with their fence: nothing of the fence's uid is left on the host"
	atf_set require.user root
	atf_set timeout 120
}
stop_body() {
	procs_setup "" w
	uid=$(fence_uid w)
	call "$T" POST $E/w/processes '{"command":"setsid sleep 3021 & (sleep 3022 &); exec sleep 3023"}'
	expect 201
	call "$T" POST $E/w/processes '{"argv":["sleep","3024"]}'
	expect 201
	wait_until 20 has_output host_procs "$uid" "sleep 3022" ||
	    atf_fail "never started"
	host_procs "$uid" "sleep 302[1-4]" > before.out
	[ "$(wc -l < before.out)" = 4 ] || atf_fail "$(cat before.out)"
	call "$T" DELETE $E/w
	expect 200 '"state":"stopped"'
	wait_empty host_procs "$uid" "."
	call "$T" GET $E/w/processes
	expect 404 '"error":"not-found"'
	# timeoutMs is held to what is left of the fence's lifetime.
	call "$T" POST $E/l '{"tier":"L1.5","lifetime":60}'
	expect 201
	call "$T" POST $E/l/processes '{"argv":["true"],"timeoutMs":120000}'
	expect 400 '"error":"exec-bad-request"' 'ends in'
	call "$T" POST $E/l/processes '{"argv":["sleep","1"]}'
	expect 201 '"timeoutMs":[1-6][0-9]{4},'
	fenced_stop
}
stop_cleanup() { fenced_cleanup; }

atf_test_case two_users cleanup
two_users_head() {
	atf_set descr "a second local user can neither list, read, start nor kill another user's processes"
	atf_set require.user root
	atf_set timeout 120
}
two_users_body() {
	fenced_vars
	users_add 2 fpr
	fenced_run_socket
	h=$(fenced_homes)
	fenced_conf | sed -e "s|^homes .*|homes \"$h/%u\"|" > fenced.conf
	fenced_start
	ua=$(sed -n 1p users.txt)
	ub=$(sed -n 2p users.txt)
	sock=$(cat run.sock)
	ta=$($(as_user "$ua") "$BIN/fencectl" -s "$sock" token 2>/dev/null)
	tb=$($(as_user "$ub") "$BIN/fencectl" -s "$sock" token 2>/dev/null)
	[ -n "$ta" ] && [ -n "$tb" ] || atf_fail "tokens: '$ta' '$tb'"
	T=$ta
	call "$ta" POST $E/ka '{}'
	expect 201
	call "$ta" POST $E/ka/processes '{"argv":["sleep","60"]}'
	expect 201
	id=$(field id)

	call "$tb" GET $E/ka/processes
	expect 404 '"error":"not-found"'
	call "$tb" GET "$E/ka/processes/$id"
	expect 404 '"error":"not-found"'
	call "$tb" DELETE "$E/ka/processes/$id?signal=KILL"
	expect 404 '"error":"not-found"'
	call "$tb" POST $E/ka/processes '{"argv":["touch","b-was-here"]}'
	expect 404 '"error":"not-found"'
	# Nor over the control socket.
	atf_check -s not-exit:0 -e match:"not-found" \
	    $(as_user "$ub") "$BIN/fencectl" -s "$sock" show processes ka
	atf_check -s not-exit:0 -e match:"not-found" \
	    $(as_user "$ub") "$BIN/fencectl" -s "$sock" kill ka "$id" KILL
	atf_check -s not-exit:0 -e match:"not-found" \
	    $(as_user "$ub") "$BIN/fencectl" -s "$sock" spawn ka -- true
	# b's own ka is another fence: a's process is not there.
	call "$tb" POST $E/ka '{}'
	expect 201
	call "$tb" GET "$E/ka/processes/$id"
	expect 404 '"error":"process-not-found"'
	call "$tb" GET $E/ka/processes
	expect 200 '^\{"processes":\[\]\}$'
	# a's is untouched.
	call "$ta" GET "$E/ka/processes/$id"
	expect 200 '"state":"running"'
	call "$ta" POST $E/ka/exec '{"argv":["ls","-A"]}'
	expect 200 '"stdout":""'
	fenced_stop
}
two_users_cleanup() { fenced_cleanup; }

atf_test_case fencectl cleanup
fencectl_head() {
	atf_set descr "fencectl spawn, show processes, show process, kill"
	atf_set require.user root
	atf_set timeout 120
}
fencectl_body() {
	fenced_vars
	fenced_start
	atf_check -o ignore -e ignore $CTL boot w
	atf_check -o match:"^[0-9]+$" $CTL spawn w -- sh -c 'echo out; sleep 60'
	atf_check -o match:"^[0-9]+$" $CTL spawn w -- true
	atf_check -o match:"^ID +STATE" -o match:"^1 +running +.*sh -c" \
	    $CTL show processes w
	wait_until 20 sh -c "$CTL show process w 1 | grep -q '^out$'" ||
	    atf_fail "no output: $($CTL show process w 1)"
	wait_until 20 sh -c "$CTL show processes w | grep -Eq '^2 +exited +0 '" ||
	    atf_fail "2 never exited: $($CTL show processes w)"
	atf_check -o match:"TERM" $CTL kill w 1
	wait_until 20 sh -c "$CTL show processes w | grep -Eq '^1 +exited +TERM '" ||
	    atf_fail "1 never died: $($CTL show processes w)"
	atf_check -o match:"forgotten" $CTL kill w 1
	atf_check -s not-exit:0 -e match:"process-not-found" $CTL kill w 1
	atf_check -s not-exit:0 -e match:"usage|signal" $CTL kill w 2 STOP
	atf_check -s not-exit:0 -e match:"not-found" $CTL show processes nosuch
	fenced_stop
}
fencectl_cleanup() { fenced_cleanup; }

atf_init_test_cases() {
	atf_add_test_case basic
	atf_add_test_case partial
	atf_add_test_case setsid
	atf_add_test_case limit
	atf_add_test_case many
	atf_add_test_case output
	atf_add_test_case stop
	atf_add_test_case two_users
	atf_add_test_case fencectl
}
