#! /usr/bin/atf-sh
# The HTTP API as a client drives it, with curl: host tokens from
# fencectl, boot, exec, git, list, status, stop, keep-alive, reload, and
# two users who cannot see or touch each other's environments.

. "$(atf_get_srcdir)/lib.subr"

token_of() {
	"$BIN/fencectl" -s "$PWD/ctl.sock" token 2>/dev/null | tail -n 1
}

atf_test_case token cleanup
token_head() {
	atf_set descr "fencectl token: 256 random bits once, alone on the last line; -r replaces; a restart keeps them; only hashes are stored"
	atf_set require.user root
}
token_body() {
	fenced_vars
	fenced_start
	atf_check -o save:token.1 -e match:"not shown again" $CTL token
	t1=$(tail -n 1 token.1)
	echo "$t1" | grep -Eq '^[0-9a-f]{64}$' || atf_fail "token $t1"
	# Once only: a second asks for -r.
	atf_check -s exit:1 -e match:"token-exists" $CTL token
	call "$t1" GET /api/environments
	expect 200 '^\{"environments":\[\]\}$'
	atf_check -o save:token.2 -e ignore $CTL token -r
	t2=$(tail -n 1 token.2)
	[ "$t1" != "$t2" ] || atf_fail "token -r gave the same token"
	call "$t1" GET /api/environments
	expect 401 '"error":"unauthorized"'
	call "$t2" GET /api/environments
	expect 200
	# Stored as a hash, root's, 0600; never the token itself.
	atf_check -o inline:"600 root\n" stat -c '%a %U' state/tokens
	grep -q "$t2" state/tokens && atf_fail "the token is in the file"
	h=$(printf '%s' "$t2" | xxd -r -p | sha256sum | cut -d' ' -f1)
	atf_check -o match:"^0 default [0-9]+ $h\$" cat state/tokens
	atf_check -o inline:"1\n" sh -c 'wc -l < state/tokens'
	# A restart keeps it.
	fenced_stop
	fenced_start
	call "$t2" GET /api/environments
	expect 200
	call "$t1" GET /api/environments
	expect 401
	fenced_stop
}
token_cleanup() { fenced_cleanup; }

atf_test_case api cleanup
api_head() {
	atf_set descr "boot L1.5 and L2, exec with argv, command and stdin, binary output, git config and init, list, status, stop"
	atf_set require.user root
	atf_set timeout 120
}
api_body() {
	fenced_vars
	fenced_start
	t=$(token_of)
	E=/api/environments

	# Boot, with every field of the body.
	call "$t" POST $E/web '{"tier":"L1.5","backend":"native","lifetime":600,"limits":{"memory":268435456,"pids":128,"cpu":0.5}}'
	expect 201 '"key":"web"' '"tier":"L1.5"' '"backend":"native"' \
	    '"state":"running"' '"level":"(unmeasured|L1\.5)"' '"boundary":' \
	    '"owner":0,' '"limits":\{"memory":268435456,"pids":128,"cpu":0.5' \
	    '"home":"/var/lib/fenced-regress\.[^"]*/web"' \
	    '"deadline":"20[0-9-]+T[0-9:]+Z"' '"timings":\{"namespacesUs":[0-9]+'
	call "$t" POST $E/net '{"tier":"L2"}'
	expect 201 '"key":"net"' '"tier":"L2"'
	# require: answered once measured; below it, stopped and refused.
	call "$t" POST $E/req '{"tier":"L1.5","require":"L1.5"}'
	expect 201 '"key":"req"' '"level":"L1\.5"' \
	    '"boundary":\{"level":"L1\.5","measuredBy":"probe"'
	call "$t" POST $E/req2 '{"tier":"L1.5","require":"L2"}'
	expect 412 '"error":"require-not-met"' 'measured L1\.5, required L2'
	call "$t" GET $E/req2
	expect 404 '"error":"not-found"'
	call "$t" DELETE $E/req
	expect 200 '"state":"stopped"'
	# L2 has a network namespace of its own with lo alone.
	call "$t" POST $E/net/exec '{"command":"tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d \" \""}'
	expect 200 '"exitCode":0' '"stdout":"lo\\n"'

	# exec: argv, command, exit status, stderr, cwd.
	call "$t" POST $E/web/exec '{"argv":["echo","hello","world"]}'
	expect 200 '"exitCode":0' '"signal":null' '"stdout":"hello world\\n"' \
	    '"stderr":""' '"encoding":"utf-8"' '"durationMs":[0-9]+' \
	    '"truncated":false'
	call "$t" POST $E/web/exec '{"command":"echo out; echo err >&2; exit 7"}'
	expect 200 '"exitCode":7' '"stdout":"out\\n"' '"stderr":"err\\n"'
	call "$t" POST $E/web/exec '{"command":"mkdir -p sub && cd sub && pwd"}'
	expect 200 '"stdout":"/[^"]*/sub\\n"'
	call "$t" POST $E/web/exec '{"argv":["pwd"],"cwd":"sub"}'
	expect 200 '"stdout":"/[^"]*/sub\\n"'
	call "$t" POST $E/web/exec '{"command":"kill -9 $$"}'
	expect 200 '"exitCode":null' '"signal":9'
	# The fence's uid, never host root.
	call "$t" POST $E/web/exec '{"argv":["id","-u"]}'
	expect 200
	fu=$(field stdout | sed 's/\\n$//')
	in_fence_uids "$fu" || atf_fail "uid '$fu', not one of $(fenced_uids)"

	# stdin, as text and as base64.
	call "$t" POST $E/web/exec '{"argv":["tr","a-z","A-Z"],"stdin":"shout\n"}'
	expect 200 '"stdout":"SHOUT\\n"'
	head -c 4096 /dev/urandom > bin.in
	b=$(base64 -w 0 bin.in)
	call "$t" POST $E/web/exec "{\"argv\":[\"cat\"],\"encoding\":\"base64\",\"stdin\":\"$b\"}"
	expect 200 '"encoding":"base64"'
	field stdout | base64 -d > bin.out
	atf_check cmp bin.in bin.out
	# Output that is not UTF-8 comes back as base64 unasked.
	call "$t" POST $E/web/exec '{"command":"printf \"\\377\\000A\""}'
	expect 200 '"encoding":"base64"' '"stdout":"/wBB"'
	# NUL in text output is kept as \u0000.
	call "$t" POST $E/web/exec '{"command":"printf \"a\\000b\""}'
	expect 200 '"encoding":"utf-8"' '"stdout":"a\\u0000b"'

	# The agent's errors pass through, with the output there was.
	call "$t" POST $E/web/exec '{"command":"echo early; sleep 5","timeoutMs":300}'
	expect 504 '"error":"exec-timeout"' '"message":' '"stdout":"early\\n"'
	call "$t" POST $E/web/exec '{"command":"head -c 5000 /dev/zero | tr \"\\0\" x","maxBytes":1024}'
	expect 422 '"error":"exec-output-over-budget"' '"truncated":true'
	[ "$(field stdout | tr -d '\n' | wc -c)" = 1024 ] || \
	    atf_fail "not 1024 bytes of output: $(cat body.out)"
	call "$t" POST $E/web/exec '{"argv":["true"],"cwd":"/etc"}'
	expect 400 '"error":"exec-cwd-outside-home"'
	call "$t" POST $E/web/exec '{"argv":["no-such-command"]}'
	expect 422 '"error":"exec-failed"'

	# git: write and read the identity, init a repository.
	call "$t" POST $E/web/git/config '{"name":"Ada Lovelace","email":"ada@example.org"}'
	expect 200 '^\{"name":"Ada Lovelace","email":"ada@example.org"\}$'
	call "$t" GET $E/web/git/config
	expect 200 '^\{"name":"Ada Lovelace","email":"ada@example.org"\}$'
	call "$t" POST $E/web/git/config '{"email":"ada@example.net"}'
	expect 200 '"name":"Ada Lovelace"' '"email":"ada@example.net"'
	call "$t" POST $E/web/git/config '{"name":"two\nlines"}'
	expect 400 '"error":"git-bad-value"'
	call "$t" POST $E/web/git/init '{"path":"repo"}'
	expect 200 '"exitCode":0' 'Initialized empty Git repository'
	call "$t" POST $E/web/exec '{"command":"test -d repo/.git && git -C repo config user.name"}'
	expect 200 '"exitCode":0' '"stdout":"Ada Lovelace\\n"'
	call "$t" POST $E/web/git/init
	expect 200 '"exitCode":0'

	# list and status.
	call "$t" GET $E
	expect 200 '^\{"environments":\[\{"key":"(web|net)".*"key":"(web|net)"'
	call "$t" GET $E/web
	expect 200 '^\{"key":"web",' '"state":"running"'
	atf_check -o match:"^web " -o match:"^net " $CTL show environments

	# stop: the final state, kept for a while; nothing runs; the
	# home stays.
	call "$t" DELETE $E/web
	expect 200 '"key":"web"' '"state":"stopped"' '"reason":"request"'
	call "$t" GET $E/web
	expect 200 '^\{"key":"web",' '"state":"stopped"' '"reason":"request"' \
	    '"boundary":null'
	grep -qi bearer body.out && atf_fail "a bearer in $(cat body.out)"
	atf_check -o match:"state: +stopped \(request\)" \
	    $CTL show environment web
	call "$t" POST $E/web/exec '{"argv":["true"]}'
	expect 404 '"error":"not-found"'
	call "$t" GET $E/web/git/config
	expect 404 '"error":"not-found"'
	call "$t" DELETE $E/net
	expect 200
	call "$t" GET $E
	expect 200 '"key":"web"' '"key":"net"'
	grep -q '"state":"running"' body.out && atf_fail "running: $(cat body.out)"
	atf_check -o match:"^web .*stopped" -o match:"^net .*stopped" \
	    $CTL show environments
	# A new boot of the key replaces what was kept.
	call "$t" POST $E/net '{"tier":"L2"}'
	expect 201 '"key":"net"' '"state":"running"'
	call "$t" GET $E
	[ "$(grep -o '"key":"net"' body.out | wc -l)" -eq 1 ] ||
	    atf_fail "net listed twice: $(cat body.out)"
	call "$t" DELETE $E/net
	expect 200
	[ -d "$(fenced_homes)/web/sub" ] || atf_fail "the home of web is gone"
	atf_check -o match:"fences: 0 running" $CTL show stats

	# /api/probe is the caller's environment "default", which is gone.
	call "$t" GET /api/probe
	expect 404 '"error":"not-found"'
	fenced_stop
}
api_cleanup() { fenced_cleanup; }

atf_test_case keepalive cleanup
keepalive_head() {
	atf_set descr "one connection carries several requests, of any kind, and idles out after http timeout"
	atf_set require.user root
}
keepalive_body() {
	fenced_vars
	fenced_conf > fenced.conf
	echo "http timeout 2" >> fenced.conf
	fenced_start
	t=$(token_of)
	u="http://127.0.0.1:$(fenced_port)/api/environments"
	curl -sS -v -H "x-voicebox-host-token: $t" "$u" "$u" "$u" \
	    > out 2> err || atf_fail "curl"
	atf_check_equal 2 "$(grep -c 'Re-using existing connection' err)"
	atf_check_equal 3 "$(grep -c '^{"environments":\[\]}$' out)"
	# A boot, an exec and a stop on one connection.
	curl -sS -v -H "x-voicebox-host-token: $t" -X POST -d '{}' "$u/ka" \
	    --next -H "x-voicebox-host-token: $t" -d '{"argv":["echo","kept"]}' \
	    "$u/ka/exec" --next -H "x-voicebox-host-token: $t" -X DELETE \
	    "$u/ka" > out 2> err || atf_fail "curl --next"
	atf_check_equal 2 "$(grep -c 'Re-using existing connection' err)"
	atf_check -o match:'"stdout":"kept\\n"' -o match:'"state":"stopped"' \
	    cat out
	# An idle keep-alive connection is closed after http timeout.
	r="GET /api/environments HTTP/1.1\r\nHost: 127.0.0.1:$(fenced_port)\r\nx-voicebox-host-token: $t\r\n\r\n"
	printf "$r" | "$REGRESS/t_http" -w 5 "$(fenced_port)" > idle.out
	atf_check -o match:'^status 200 closed 1 ' cat idle.out
	ms=$(sed -n 's/.*closedms \([0-9]*\)$/\1/p' idle.out)
	[ "$ms" -ge 1900 ] && [ "$ms" -le 4000 ] || \
	    atf_fail "idle connection closed after $ms ms, not about 2000"
	fenced_stop
}
keepalive_cleanup() { fenced_cleanup; }

atf_test_case reload cleanup
reload_head() {
	atf_set descr "the http settings change on reload, without a restart or a lost fence; the port needs a restart"
	atf_set require.user root
}
reload_body() {
	fenced_vars
	fenced_conf > fenced.conf
	echo "http body max 8K" >> fenced.conf
	fenced_start
	pids=$(fenced_pids)
	t=$(token_of)
	call "$t" POST /api/environments/r1 '{}'
	expect 201
	big=$(head -c 12000 /dev/zero | tr '\0' x)
	call "$t" POST /api/environments/r1/exec "{\"argv\":[\"wc\",\"-c\"],\"stdin\":\"$big\"}"
	expect 413 '"error":"body-too-large"' 'larger than 8192 bytes'
	sed -i 's/^http body max .*/http body max 64K/' fenced.conf
	p=$(fenced_port)
	sed -i "s/^listen on .*/listen on 127.0.0.1 port 1/" fenced.conf
	atf_check $CTL reload
	sleep 0.3
	atf_check -o match:"listen port changed; needs a restart" cat fenced.log
	# Same processes, same port, the fence still there; a new limit.
	atf_check_equal "$pids" "$(fenced_pids)"
	call "$t" POST /api/environments/r1/exec "{\"argv\":[\"wc\",\"-c\"],\"stdin\":\"$big\"}"
	expect 200 '"stdout":"12000\\n"'
	fenced_stop
}
reload_cleanup() { fenced_cleanup; }

# Two users of their own, and a control socket they can reach: in /run,
# with the usual ./ctl.sock a link to it.
users_setup() {
	users_add 2 fht
	fenced_run_socket
	# fenced_homes makes the directory once: not inside the pipeline.
	h=$(fenced_homes)
	fenced_conf | sed -e "s|^homes .*|homes \"$h/%u\"|" > fenced.conf
}

atf_test_case two_users cleanup
two_users_head() {
	atf_set descr "two users' tokens: neither sees nor touches the other's environments, over HTTP or the control socket; root sees all with fencectl"
	atf_set require.user root
	atf_set timeout 120
}
two_users_body() {
	fenced_vars
	users_setup
	fenced_start
	ua=$(sed -n 1p users.txt)
	ub=$(sed -n 2p users.txt)
	sock=$(cat run.sock)
	asa=$(as_user "$ua")
	asb=$(as_user "$ub")
	ta=$($asa "$BIN/fencectl" -s "$sock" token 2>/dev/null)
	tb=$($asb "$BIN/fencectl" -s "$sock" token 2>/dev/null)
	[ -n "$ta" ] && [ -n "$tb" ] && [ "$ta" != "$tb" ] || \
	    atf_fail "tokens: '$ta' '$tb'"
	E=/api/environments

	call "$ta" POST $E/ka '{}'
	expect 201 "\"owner\":$(id -u "$ua"),"
	call "$tb" POST $E/kb '{}'
	expect 201 "\"owner\":$(id -u "$ub"),"
	call "$ta" POST $E/ka/exec '{"argv":["id","-un"]}'
	expect 200 "\"stdout\":\"$ua\\\\n\""

	# Each sees its own only.
	call "$ta" GET $E
	expect 200 '"key":"ka"'
	grep -q '"key":"kb"' body.out && atf_fail "a sees b's: $(cat body.out)"
	call "$tb" GET $E
	expect 200 '"key":"kb"'
	grep -q '"key":"ka"' body.out && atf_fail "b sees a's: $(cat body.out)"

	# b on a's fence: 404 for everything, as if there were none.
	call "$tb" GET $E/ka
	expect 404 '"error":"not-found"' '"message":"no environment ka"'
	call "$tb" DELETE $E/ka
	expect 404 '"error":"not-found"'
	call "$tb" GET $E/nosuch
	sed 's/nosuch/ka/g' body.out > nosuch.out
	call "$tb" GET $E/ka
	atf_check cmp body.out nosuch.out
	call "$tb" POST $E/ka/exec '{"argv":["touch","owned"]}'
	expect 404 '"error":"not-found"'
	call "$tb" GET $E/ka/git/config
	expect 404 '"error":"not-found"'
	call "$tb" POST $E/ka/git/config '{"name":"b"}'
	expect 404 '"error":"not-found"'
	call "$tb" POST $E/ka/git/init '{}'
	expect 404 '"error":"not-found"'
	# b's key ka is b's own fence; a's is untouched.
	call "$tb" POST $E/ka '{"tier":"L2"}'
	expect 201 "\"owner\":$(id -u "$ub")," '"key":"ka"'
	call "$tb" POST $E/ka/exec '{"argv":["touch","b-was-here"]}'
	expect 200
	call "$ta" GET $E/ka
	expect 200 '"state":"running"' "\"owner\":$(id -u "$ua"),"
	call "$ta" POST $E/ka/exec '{"argv":["ls","-A"]}'
	expect 200 '"stdout":""'
	call "$tb" DELETE $E/ka
	expect 200 '"state":"stopped"'
	call "$ta" GET $E/ka
	expect 200 '"state":"running"'

	# The control socket: b cannot see or touch a's either.
	$asb "$BIN/fencectl" -s "$sock" show environments > b.list 2>&1
	# b's own ka, stopped, is listed; a's never.
	grep -Eq "^ka +$ua " b.list && atf_fail "b lists a's ka: $(cat b.list)"
	grep -q '^kb ' b.list || atf_fail "b does not list kb: $(cat b.list)"
	for c in "show environment $ua/ka" "stop ka" "exec ka -- true" \
	    "git-config ka name x" "git-init ka"; do
		# shellcheck disable=SC2086
		atf_check -s exit:1 -e match:"not-found" \
		    $asb "$BIN/fencectl" -s "$sock" $c
	done
	atf_check -o match:'^ka ' -o not-match:'^kb ' \
	    $asa "$BIN/fencectl" -s "$sock" show environments
	# Root sees both, and may stop them.
	atf_check -o match:'^ka ' -o match:'^kb ' $CTL show environments
	call "$tb" GET $E/kb
	expect 200 '"state":"running"'
	atf_check -s exit:1 -e match:"not-found" $CTL stop kb
	atf_check -o match:"^stopped $ub/kb" $CTL stop "$ub/kb"
	call "$tb" GET $E/kb
	expect 200 '"state":"stopped"' '"reason":"request"'
	call "$ta" DELETE $E/ka
	expect 200 '"state":"stopped"'
	# A stopped fence is as invisible to another user as a running
	# one: b's ka is b's own (stopped too), never a's.
	ida=$(id -u "$ua")
	call "$ta" GET $E/ka
	expect 200 '"state":"stopped"' "\"owner\":$ida,"
	call "$tb" GET $E/ka
	expect 200 '"state":"stopped"' "\"owner\":$(id -u "$ub"),"
	call "$tb" GET $E
	expect 200 '"key":"kb"'
	grep -q "\"owner\":$ida," body.out && atf_fail "b sees a's: $(cat body.out)"
	call "$ta" POST $E/kc '{}'
	expect 201
	call "$ta" DELETE $E/kc
	expect 200
	call "$tb" GET $E/kc
	expect 404 '"error":"not-found"'
	$asb "$BIN/fencectl" -s "$sock" show environments > b.list 2>&1
	grep -q '^kc ' b.list && atf_fail "b lists kc: $(cat b.list)"
	atf_check -s exit:1 -e match:"not-found" \
	    $asb "$BIN/fencectl" -s "$sock" show environment kc
	atf_check -s exit:1 -e match:"not-found" \
	    $asb "$BIN/fencectl" -s "$sock" show environment "$ua/kc"
	atf_check -o match:'^kc .*stopped' \
	    $asa "$BIN/fencectl" -s "$sock" show environments
	fenced_stop
}
two_users_cleanup() { fenced_cleanup; }

atf_init_test_cases() {
	atf_add_test_case token
	atf_add_test_case api
	atf_add_test_case keepalive
	atf_add_test_case reload
	atf_add_test_case two_users
}
