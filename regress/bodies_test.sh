#! /usr/bin/atf-sh
# The bodies of boot, exec and git requests, read by their field tables
# (broker/http_api.c): each malformed body gets its status, error code
# and message word for word, and a body with several faults the error
# of the first in the table's order.  None of them boots or runs
# anything: the exec and git paths name a fence that does not exist, so
# a well-formed body is answered 404 after it was read.

. "$(atf_get_srcdir)/lib.subr"

atf_test_case bodies cleanup
bodies_head() {
	atf_set descr "each malformed boot, exec and git body is answered its status, code and message, the first fault first"
	atf_set require.user root
	atf_set timeout 120
}
bodies_body() {
	fenced_vars
	fenced_conf > fenced.conf
	fenced_start
	token=$($CTL token 2>/dev/null | tail -n 1)
	[ -n "$token" ] || atf_fail "no token"
	: > got.txt
	while IFS='|' read -r m p body; do
		case $p in
		X)	path=/api/environments/nosuch/exec ;;
		B)	path=/api/environments/bodies ;;
		GC)	path=/api/environments/nosuch/git/config ;;
		GI)	path=/api/environments/nosuch/git/init ;;
		esac
		if [ -n "$body" ]; then
			api "$token" "$m" "$path" "$body" > answer.out
		else
			api "$token" "$m" "$path" > answer.out
		fi
		printf '%s %s %s %s\n' "$(tail -n 1 answer.out)" "$m" "$p" \
		    "$(sed '$d' answer.out | tr -d '\n')" >> got.txt
	done <<'CASES'
POST|X|
POST|X|{}
POST|X|[]
POST|X|{"argv":["ls"]}
POST|X|{"command":"ls"}
POST|X|{"argv":["ls"],"command":"ls"}
POST|X|{"argv":"ls"}
POST|X|{"argv":null}
POST|X|{"argv":"ls","command":5}
POST|X|{"argv":[]}
POST|X|{"argv":[1]}
POST|X|{"argv":["a\u0000b"]}
POST|X|{"argv":[""]}
POST|X|{"argv":["ls",""]}
POST|X|{"command":""}
POST|X|{"command":7}
POST|X|{"command":"a\u0000b"}
POST|X|{"argv":["ls"],"bogus":1}
POST|X|{"bogus":1,"argv":"x"}
POST|X|{"argv":["ls"],"timeoutMs":5}
POST|X|{"argv":["ls"],"timeoutMs":60001}
POST|X|{"argv":["ls"],"timeoutMs":"100"}
POST|X|{"argv":["ls"],"timeoutMs":150.5}
POST|X|{"argv":["ls"],"timeoutMs":1000}
POST|X|{"argv":["ls"],"maxBytes":99999999999}
POST|X|{"argv":["ls"],"maxBytes":1}
POST|X|{"argv":["ls"],"maxBytes":"1"}
POST|X|{"argv":["ls"],"cwd":7}
POST|X|{"argv":["ls"],"cwd":"a\u0000b"}
POST|X|{"argv":["ls"],"cwd":"/tmp"}
POST|X|{"argv":["ls"],"encoding":"hex"}
POST|X|{"argv":["ls"],"encoding":5}
POST|X|{"argv":["ls"],"encoding":"base64"}
POST|X|{"argv":["ls"],"encoding":"utf-8"}
POST|X|{"argv":["cat"],"encoding":"base64","stdin":"!!!!"}
POST|X|{"argv":["cat"],"encoding":"base64","stdin":"aGVsbG8="}
POST|X|{"argv":["cat"],"stdin":"a\u0000b"}
POST|X|{"argv":["cat"],"stdin":5}
POST|X|{"argv":["cat"],"stdin":""}
POST|X|{"argv":"x","cwd":7,"timeoutMs":1}
POST|X|{"argv":["ls"],"cwd":7,"timeoutMs":1}
POST|X|{"encoding":"hex","argv":"x"}
POST|X|{"command":"ls","stdin":7,"maxBytes":0}
POST|B|{"tier":"L3"}
POST|B|{"tier":5}
POST|B|{"tier":"L1.5555"}
POST|B|{"tier":"L1\u0000"}
POST|B|{"require":"L9"}
POST|B|{"require":5}
POST|B|{"backend":"qemu"}
POST|B|{"backend":5}
POST|B|{"backend":"aaaaaaaaaaaaaaaaaaaaaaaaaa"}
POST|B|{"inner":"gvisor"}
POST|B|{"inner":5}
POST|B|{"inner":"runsc","backend":"native"}
POST|B|{"inner":"runsc"}
POST|B|{"lifetime":0}
POST|B|{"lifetime":"1"}
POST|B|{"lifetime":99999999999}
POST|B|{"limits":5}
POST|B|{"limits":[]}
POST|B|{"limits":{"bogus":1}}
POST|B|{"limits":{"memory":1}}
POST|B|{"limits":{"memory":"1"}}
POST|B|{"limits":{"pids":0}}
POST|B|{"limits":{"pids":1.5}}
POST|B|{"limits":{"cpu":"1"}}
POST|B|{"limits":{"cpu":0}}
POST|B|{"bogus":1}
POST|B|{"tier":"L3","bogus":1}
POST|B|{"tier":"L3","require":"L9"}
POST|B|{"require":"L9","tier":"L3"}
POST|B|{"backend":"x","lifetime":0}
POST|B|{"lifetime":0,"limits":5}
POST|B|{"limits":{"memory":1,"pids":0,"cpu":0}}
POST|B|{"limits":{"cpu":0,"pids":0}}
POST|B|{"tier":"L3","limits":{"bogus":1}}
POST|B|[1]
POST|B|{"egress":"a.test:1"}
POST|B|{"egress":[1]}
POST|B|{"egress":["1.2.3.4:443"]}
POST|B|{"egress":["[::1]:443"]}
POST|B|{"egress":["a..test:443"]}
POST|B|{"egress":["a.test:0"]}
POST|B|{"egress":["a.test:65536"]}
POST|B|{"egress":["a.test"]}
POST|B|{"egress":["*.com:443"]}
POST|B|{"egress":["-a.test:443"]}
POST|B|{"egress":["a_b.test:443"]}
POST|B|{"egress":["a\u0000b.test:1"]}
POST|B|{"egress":["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.test:1"]}
POST|B|{"egress":["A.Test:1","a.test:1"]}
POST|B|{"egress":["a.test:1"],"tier":"L1"}
POST|B|{"egress":["a.test:1"],"tier":"L1.5"}
POST|B|{"egress":["a.test:1"],"tier":"L2","backend":"mock"}
POST|GC|{}
POST|GC|
POST|GC|{"name":5}
POST|GC|{"name":"a\u0000b"}
POST|GC|{"bogus":1}
POST|GC|{"name":"x"}
POST|GC|{"email":"x"}
POST|GI|{"path":5}
POST|GI|{"bogus":1}
POST|GI|{}
POST|GI|
CASES
	cat > expected.txt <<'EXPECTED'
400 POST X {"error":"missing-body","message":"this request needs a JSON object as its body"}
400 POST X {"error":"missing-field","message":"give either argv (an array of strings) or command (a string for sh -c)"}
400 POST X {"error":"bad-type","message":"the body must be a JSON object"}
404 POST X {"error":"not-found","message":"no environment nosuch"}
404 POST X {"error":"not-found","message":"no environment nosuch"}
400 POST X {"error":"bad-request","message":"give either argv (an array of strings) or command (a string for sh -c), not both"}
400 POST X {"error":"bad-type","message":"argv must be an array of 1 to 256 strings"}
400 POST X {"error":"bad-type","message":"argv must be an array of 1 to 256 strings"}
400 POST X {"error":"bad-type","message":"command must be a string"}
400 POST X {"error":"out-of-range","message":"argv must be an array of 1 to 256 strings"}
400 POST X {"error":"bad-type","message":"argv must hold strings only"}
400 POST X {"error":"bad-value","message":"argv[0] is empty, longer than 4096 bytes or holds a NUL"}
400 POST X {"error":"bad-value","message":"argv[0] is empty, longer than 4096 bytes or holds a NUL"}
404 POST X {"error":"not-found","message":"no environment nosuch"}
400 POST X {"error":"bad-value","message":"command is empty"}
400 POST X {"error":"bad-type","message":"command must be a string"}
400 POST X {"error":"bad-value","message":"command may not hold a NUL"}
400 POST X {"error":"unknown-field","message":"an exec request has no field \"bogus\""}
400 POST X {"error":"unknown-field","message":"an exec request has no field \"bogus\""}
400 POST X {"error":"out-of-range","message":"timeoutMs must be from 100 to 60000"}
400 POST X {"error":"out-of-range","message":"timeoutMs must be from 100 to 60000"}
400 POST X {"error":"bad-type","message":"timeoutMs must be a whole number"}
400 POST X {"error":"bad-type","message":"timeoutMs must be a whole number"}
404 POST X {"error":"not-found","message":"no environment nosuch"}
400 POST X {"error":"out-of-range","message":"maxBytes must be from 1024 to 1048576"}
400 POST X {"error":"out-of-range","message":"maxBytes must be from 1024 to 1048576"}
400 POST X {"error":"bad-type","message":"maxBytes must be a whole number"}
400 POST X {"error":"bad-type","message":"cwd must be a string"}
400 POST X {"error":"bad-value","message":"cwd may not hold a NUL"}
404 POST X {"error":"not-found","message":"no environment nosuch"}
400 POST X {"error":"bad-value","message":"encoding must be utf-8 or base64"}
400 POST X {"error":"bad-type","message":"encoding must be a string"}
404 POST X {"error":"not-found","message":"no environment nosuch"}
404 POST X {"error":"not-found","message":"no environment nosuch"}
400 POST X {"error":"bad-value","message":"stdin is not base64 of at most 1048576 bytes"}
404 POST X {"error":"not-found","message":"no environment nosuch"}
404 POST X {"error":"not-found","message":"no environment nosuch"}
400 POST X {"error":"bad-type","message":"stdin must be a string"}
404 POST X {"error":"not-found","message":"no environment nosuch"}
400 POST X {"error":"bad-type","message":"argv must be an array of 1 to 256 strings"}
400 POST X {"error":"bad-type","message":"cwd must be a string"}
400 POST X {"error":"bad-value","message":"encoding must be utf-8 or base64"}
400 POST X {"error":"out-of-range","message":"maxBytes must be from 1024 to 1048576"}
400 POST B {"error":"bad-value","message":"tier must be L1, L1.5 or L2"}
400 POST B {"error":"bad-type","message":"tier must be a string"}
400 POST B {"error":"bad-value","message":"tier must be L1, L1.5 or L2"}
400 POST B {"error":"bad-value","message":"tier may not hold a NUL"}
400 POST B {"error":"bad-value","message":"require must be L1, L1.5, L2, L3, L4 or L4+runsc"}
400 POST B {"error":"bad-type","message":"require must be a string"}
400 POST B {"error":"bad-value","message":"backend must be native, runsc, vm, mock or subprocess"}
400 POST B {"error":"bad-type","message":"backend must be a string"}
400 POST B {"error":"out-of-range","message":"backend is longer than 16 bytes"}
400 POST B {"error":"bad-value","message":"inner must be runsc or none"}
400 POST B {"error":"bad-type","message":"inner must be a string"}
400 POST B {"error":"inner-needs-vm","message":"inner runsc is the vm backend's inner boundary; backend native has none"}
400 POST B {"error":"inner-needs-vm","message":"inner runsc is the vm backend's inner boundary; backend native has none"}
400 POST B {"error":"out-of-range","message":"lifetime must be from 1 to 604800"}
400 POST B {"error":"bad-type","message":"lifetime must be a whole number"}
400 POST B {"error":"out-of-range","message":"lifetime must be from 1 to 604800"}
400 POST B {"error":"bad-type","message":"limits must be an object"}
400 POST B {"error":"bad-type","message":"limits must be an object"}
400 POST B {"error":"unknown-field","message":"limits has no field \"bogus\""}
400 POST B {"error":"out-of-range","message":"memory must be from 4194304 to 1099511627776"}
400 POST B {"error":"bad-type","message":"memory must be a whole number"}
400 POST B {"error":"out-of-range","message":"pids must be from 8 to 65536"}
400 POST B {"error":"bad-type","message":"pids must be a whole number"}
400 POST B {"error":"bad-type","message":"cpu must be a number of cpus"}
400 POST B {"error":"out-of-range","message":"cpu must be from 0.01 to 1024"}
400 POST B {"error":"unknown-field","message":"a boot request has no field \"bogus\""}
400 POST B {"error":"unknown-field","message":"a boot request has no field \"bogus\""}
400 POST B {"error":"bad-value","message":"tier must be L1, L1.5 or L2"}
400 POST B {"error":"bad-value","message":"tier must be L1, L1.5 or L2"}
400 POST B {"error":"bad-value","message":"backend must be native, runsc, vm, mock or subprocess"}
400 POST B {"error":"out-of-range","message":"lifetime must be from 1 to 604800"}
400 POST B {"error":"out-of-range","message":"memory must be from 4194304 to 1099511627776"}
400 POST B {"error":"out-of-range","message":"pids must be from 8 to 65536"}
400 POST B {"error":"bad-value","message":"tier must be L1, L1.5 or L2"}
400 POST B {"error":"bad-type","message":"the body must be a JSON object"}
400 POST B {"error":"bad-egress","message":"egress must be an array of \"name:port\" strings"}
400 POST B {"error":"bad-egress","message":"egress[0] is not a string"}
400 POST B {"error":"bad-egress","message":"egress[0] \"1.2.3.4:443\": an IP literal is not a name"}
400 POST B {"error":"bad-egress","message":"egress[0] \"[::1]:443\": an IP literal is not a name"}
400 POST B {"error":"bad-egress","message":"egress[0] \"a..test:443\": the name has an empty label"}
400 POST B {"error":"bad-egress","message":"egress[0] \"a.test:0\": the port is not a number 1..65535"}
400 POST B {"error":"bad-egress","message":"egress[0] \"a.test:65536\": the port is not a number 1..65535"}
400 POST B {"error":"bad-egress","message":"egress[0] \"a.test\": the entry has no \":PORT\""}
400 POST B {"error":"bad-egress","message":"egress[0] \"*.com:443\": a wildcard's suffix needs two labels at least"}
400 POST B {"error":"bad-egress","message":"egress[0] \"-a.test:443\": a label begins or ends with '-'"}
400 POST B {"error":"bad-egress","message":"egress[0] \"a_b.test:443\": the name has a character other than a-z, 0-9, '-' and '.'"}
400 POST B {"error":"bad-egress","message":"egress[0]: a NUL byte is not part of a name"}
400 POST B {"error":"bad-egress","message":"egress[0]: the entry is too long"}
400 POST B {"error":"bad-egress","message":"egress[1] repeats egress[0], a.test:1"}
400 POST B {"error":"egress-needs-l2","message":"an egress list is for tier L2 alone, not L1: L1 and L1.5 fences have the host's network already"}
400 POST B {"error":"egress-needs-l2","message":"an egress list is for tier L2 alone, not L1.5: L1 and L1.5 fences have the host's network already"}
501 POST B {"error":"egress-unsupported","message":"an egress list needs the native backend: the mock backend has no proxy port yet"}
400 POST GC {"error":"missing-field","message":"give name, email or both"}
400 POST GC {"error":"missing-body","message":"this request needs a JSON object as its body"}
400 POST GC {"error":"bad-type","message":"name must be a string"}
400 POST GC {"error":"bad-value","message":"name may not hold a NUL"}
400 POST GC {"error":"unknown-field","message":"a git config request has no field \"bogus\""}
404 POST GC {"error":"not-found","message":"no environment nosuch"}
404 POST GC {"error":"not-found","message":"no environment nosuch"}
400 POST GI {"error":"bad-type","message":"path must be a string"}
400 POST GI {"error":"unknown-field","message":"a git init request has no field \"bogus\""}
404 POST GI {"error":"not-found","message":"no environment nosuch"}
404 POST GI {"error":"not-found","message":"no environment nosuch"}
EXPECTED
	diff -u expected.txt got.txt || atf_fail "answers differ (above)"
	# Nothing was booted by any of them.
	atf_check -o save:envs.txt $CTL show environments
	atf_check -s exit:1 grep -q bodies envs.txt
}
bodies_cleanup() {
	fenced_cleanup
}

# A second local user asks for an egress list every way it can: a good
# one boots (and is stopped), the hostile ones meet the same refusals as
# root's, nothing of them is booted, and the daemon serves on.
atf_test_case egress_user cleanup
egress_user_head() {
	atf_set descr "a second local user's boots with an egress list over fencectl and HTTP: a good one boots, each hostile one is refused with its code and boots nothing"
	atf_set require.user root
	atf_set timeout 120
}
egress_user_body() {
	fenced_vars
	users_add 1 feg
	fenced_run_socket
	fenced_conf > fenced.conf
	fenced_start
	u=$(sed -n 1p users.txt)
	U="$(as_user "$u") $BIN/fencectl -s $(cat run.sock)"
	atf_check -o match:"state: +running" \
	    $U boot eg tier L2 egress allowed.test:443 "*.googleapis.com:443"
	atf_check -o match:"egress: +proxy 127.0.0.1:3128 for allowed.test:443 \\*.googleapis.com:443" \
	    $U show environment eg
	atf_check -o ignore $U stop eg
	atf_check -s exit:1 -e match:"egress-needs-l2" \
	    $U boot eg tier L1.5 egress allowed.test:443
	atf_check -s exit:1 -e match:"not an egress entry: an IP literal is not a name" \
	    $U boot eg tier L2 egress 127.0.0.1:443
	token=$($U token 2>/dev/null | tail -n 1)
	[ -n "$token" ] || atf_fail "no token for $u"
	long=$(printf '%0300d' 0 | tr 0 a)
	for body in '{"tier":"L2","egress":["10.0.0.1:443"]}' \
	    '{"tier":"L2","egress":["a.test:1\u0000"]}' \
	    "{\"tier\":\"L2\",\"egress\":[\"$long.test:1\"]}" \
	    '{"tier":"L2","egress":[["a.test:1"]]}' \
	    '{"tier":"L2","egress":{"a":"a.test:1"}}'; do
		api "$token" POST /api/environments/eg "$body" | tail -n 1
	done > statuses.txt
	atf_check -o inline:"400\n400\n400\n400\n400\n" cat statuses.txt
	# Nothing of those was booted (the good one is listed stopped), and
	# the daemon still answers.
	atf_check -o not-match:"running" $BIN/fencectl -s $(cat run.sock) \
	    show environments
	atf_check -o match:"fences: 0 running" $BIN/fencectl \
	    -s $(cat run.sock) show stats
}
egress_user_cleanup() {
	fenced_cleanup
}

atf_init_test_cases() {
	atf_add_test_case bodies
	atf_add_test_case egress_user
}
