#! /usr/bin/atf-sh
# Earned levels through the daemon: a fence's level is what the probe
# measured inside it, never what was asked for (issue 6).

. "$(atf_get_srcdir)/lib.subr"

atf_test_case earned cleanup
earned_head() {
	atf_set descr "L1 earns L1, L1.5 earns L1.5, L2 earns L2; the report is cached 0600 outside the fence"
	atf_set require.user root
}
earned_body() {
	fenced_vars
	fenced_start
	for t in L1 L1.5 L2; do
		k=e$(echo $t | tr -d . | tr A-Z a-z)
		$CTL boot $k tier $t > /dev/null || atf_fail "boot $t"
		atf_check_equal "$t" "$(level_of $k)"
		f="$PWD/state/envs/0/$k/probe.json"
		[ -f "$f" ] || atf_fail "no cached report for $k"
		atf_check_equal "600 0" "$(stat -c '%a %u' "$f")"
		atf_check -o match:'"probe": *"sandbox-probe/1"' cat "$f"
	done
	# The canary decides the network, with no internet at all.
	atf_check -o match:'"network":\{"verdict":"passes"' $CTL probe el15
	# A probe asked for by name runs the outbound checks too, at the
	# configured (loopback) targets; the one after boot does not.
	atf_check -o match:'127\.0\.0\.1:1' cat "$PWD/state/envs/0/el15/probe.json"
	atf_check -o not-match:'127\.0\.0\.1:1' cat "$PWD/state/envs/0/el1/probe.json"
	atf_check -o match:'"network":\{"verdict":"fenced"' $CTL probe el2
	atf_check -o match:'"privileges":\{"verdict":"not-fenced"' $CTL probe el1
	# The host reads pid 1 of each: L1 has the daemon's filter only and
	# the full bounding set; L1.5 shares the host's network, so its
	# network passes and cannot be "fenced" on the report's word.
	$CTL probe el1 > v1
	atf_check -o match:"privileges: pid 1 has no filter of its own" cat v1
	atf_check -o match:"privileges: pid 1 has CapBnd" cat v1
	# The kernel's surface (docs/probe.md): L1 lists what it reaches
	# (a user namespace at least, the daemon's filter lets unshare
	# through), without a violation; L1.5 and L2 reach nothing.
	atf_check -o match:'"surface":\{"verdict":"passes","violations":\[\],"reason":null,"reachable":\[[^]]*"userns"' \
	    cat v1
	atf_check -o match:"^surface: *passes, the host's kernel: .*userns" \
	    $CTL show environment el1
	# The times as the clock has them, and an axis a line.
	$CTL show environment el1 > s1
	atf_check -o match:"^deadline: 20[0-9-]+ [0-9:]+ [A-Z]+ \(([0-9]+[dhm] )*[0-9]+s left\)\$" \
	    -o match:"^started:  20[0-9-]+ [0-9:]+ [A-Z]+ \(([0-9]+[dhm] )*[0-9]+s ago\)\$" \
	    -o match:"^boundary: the last probe's, 20" \
	    -o match:"^  privileges  not-fenced: privileges: CapBnd is [0-9a-f]+; " \
	    -o match:"^  surface     passes\$" cat s1
	for a in filesystem processes privileges network kernel surface; do
		grep -q "^  $a  *[a-z]" s1 || atf_fail "no $a axis: $(cat s1)"
	done
	for k in el15 el2; do
		atf_check -o match:'"surface":\{"verdict":"fenced","violations":\[\],"reason":null,"reachable":\[\],"kernel":"host"\}' \
		    $CTL probe $k
		atf_check -o match:"^surface: *fenced, the host's kernel: none reachable\$" \
		    $CTL show environment $k
	done
	# The same over HTTP: the cached verdicts, and a fresh probe.
	t=$($CTL token | tail -1)
	u="http://127.0.0.1:$(fenced_port)/api/environments"
	atf_check -o match:'"level": *"L2"' curl -sf \
	    -H "x-voicebox-host-token: $t" "$u/el2/probe"
	atf_check -o match:'"network": *\{"verdict": *"fenced"' curl -sf \
	    -H "x-voicebox-host-token: $t" "$u/el2/probe?refresh=1"
	atf_check -o match:'"level": *"L1.5"' curl -sf \
	    -H "x-voicebox-host-token: $t" "$u/el15"
}
earned_cleanup() { fenced_cleanup; }

atf_test_case weakened cleanup
weakened_head() {
	atf_set descr "an L1.5 fence without its own seccomp filter (test build) earns L1 and says why"
	atf_set require.user root
}
weakened_body() {
	fenced_vars
	FENCED_TEST_NOSECCOMP=1 FENCED_BIN=$HOOKS/fenced fenced_start
	$CTL boot weak tier L1.5 > /dev/null || atf_fail "boot"
	atf_check -o match:"^tier: *L1.5" $CTL show environment weak
	atf_check_equal L1 "$(level_of weak)"
	# The daemon's own filter is still there (Seccomp 2): the calls the
	# fence's filter refuses are what give it away.
	$CTL probe weak > verdict
	atf_check -o match:"keyctl allowed" cat verdict
	atf_check -o match:"unshare_user allowed" cat verdict
	atf_check -o match:"bpf not refused by a filter" cat verdict
	# Its surface is open where L1.5 wants it closed: violations.
	atf_check -o match:"surface: userns reachable" cat verdict
	atf_check -o match:"surface: keyctl reachable" cat verdict
	# And the host's own reading of pid 1 says the same, whatever the
	# report says (docs/probe.md, "What grants each axis").
	atf_check -o match:"pid 1 has no filter of its own \(Seccomp_filters 1\)" \
	    cat verdict
	# Nothing with require runs there.
	atf_check -s exit:1 -e match:"require-not-met.*measured L1, required L1.5" \
	    $CTL boot weak2 tier L1.5 require L1.5
}
weakened_cleanup() { fenced_cleanup; }

atf_test_case require cleanup
require_head() {
	atf_set descr "require L2 on an L1.5 fence fails, naming the violations, and leaves nothing running; a met require boots; require L3 or L4 on a native fence fails (412 over HTTP) naming the kernel axis"
	atf_set require.user root
}
require_body() {
	fenced_vars
	fenced_start
	atf_check -s exit:1 -e match:"require-not-met.*measured L1.5, required L2.*network" \
	    $CTL boot nope tier L1.5 require L2
	atf_check -s exit:1 -e match:"not-found" $CTL show environment nope
	atf_check -o match:"fences: 0 running" $CTL show stats
	ls $(fenced_cgroup_dirs) | grep -q '^0\.nope$' &&
	    atf_fail "cgroup of nope left"
	# Over HTTP: 412, and nothing left running.
	t=$($CTL token | tail -1)
	u="http://127.0.0.1:$(fenced_port)/api/environments"
	atf_check -o inline:"412" curl -s -o body -w '%{http_code}' \
	    -H "x-voicebox-host-token: $t" -d '{"tier":"L1.5","require":"L2"}' \
	    "$u/nope2"
	atf_check -o match:'"error": *"require-not-met"' cat body
	atf_check -o match:"fences: 0 running" $CTL show stats
	atf_check -o match:"^level: *L2" $CTL boot yes tier L2 require L2
	atf_check -o match:"^level: *L1.5" $CTL boot yes2 tier L1.5 require L1
	# The state says which kernel answered: the host's.
	atf_check -o match:"^kernel: *shared, release $(uname -r)\$" \
	    $CTL show environment yes
	# L3 and L4 are a kernel of the fence's own: a native fence, even
	# at L2, has the host's, and the refusal names the kernel axis.
	atf_check -s exit:1 \
	    -e match:"require-not-met.*measured L2, required L3; stopped: kernel: shared" \
	    $CTL boot k3 tier L2 require L3
	atf_check -o inline:"412" curl -s -o body -w '%{http_code}' \
	    -H "x-voicebox-host-token: $t" -d '{"tier":"L2","require":"L3"}' \
	    "$u/k3h"
	atf_check -o match:'"message": *"[^"]*required L3; stopped: kernel: shared' \
	    cat body
	atf_check -s exit:1 -e match:"required L4; stopped: kernel: shared.*backend vm" \
	    $CTL boot k4 tier L2 require L4
	atf_check -o match:"fences: 2 running" $CTL show stats
}
require_cleanup() { fenced_cleanup; }

atf_test_case require_inner cleanup
require_inner_head() {
	atf_set descr "require L4+runsc asks for a vm fence's inner boundary: with another backend it is refused (inner-needs-vm), with inner none it contradicts it (fencectl and 400 over HTTP), and +runsc goes with L4 only; nothing is left running (the vm cases: vm_fence_test:inner_runsc and inner_runsc_missing)"
	atf_set require.user root
}
require_inner_body() {
	fenced_vars
	fenced_start
	atf_check -s exit:1 -e match:"inner-needs-vm" \
	    $CTL boot n1 tier L2 backend native require L4+runsc
	atf_check -s not-exit:0 -e match:"not one of L1, L1.5, L2, L3, L4, L4\+runsc" \
	    $CTL boot n2 require L3+runsc
	atf_check -s not-exit:0 -e match:"inner none refuses it" \
	    $CTL boot n3 backend vm inner none require L4+runsc
	t=$($CTL token | tail -1)
	u="http://127.0.0.1:$(fenced_port)/api/environments"
	atf_check -o inline:"400" curl -s -o body -w '%{http_code}' \
	    -H "x-voicebox-host-token: $t" \
	    -d '{"require":"L4+runsc","backend":"vm","inner":"none"}' "$u/h1"
	atf_check -o match:'inner none refuses it' cat body
	atf_check -o inline:"400" curl -s -o body -w '%{http_code}' \
	    -H "x-voicebox-host-token: $t" -d '{"require":"L2+runsc"}' "$u/h2"
	atf_check -o match:'L4 or L4\+runsc' cat body
	atf_check -o inline:"400" curl -s -o body -w '%{http_code}' \
	    -H "x-voicebox-host-token: $t" \
	    -d '{"tier":"L2","backend":"native","require":"L4+runsc"}' "$u/h3"
	atf_check -o match:'"error": *"inner-needs-vm"' cat body
	atf_check -o match:"fences: 0 running" $CTL show stats
}
require_inner_cleanup() { fenced_cleanup; }

atf_test_case require_left cleanup
require_left_head() {
	atf_set descr "a client that boots with require and hangs up before the answer leaves no fence running: the boot is abandoned and the fence stopped, said in the log (root, and a second local user)"
	atf_set require.user root
}
require_left_body() {
	fenced_vars
	users_add 1 rql
	atk=$(sed -n 1p users.txt)
	fenced_start
	atf_check -o inline:"closed\n" "$REGRESS/t_ctlsend" "$(fenced_socket)" \
	    bootleave gone
	atf_check -o inline:"closed\n" $(as_user $atk) \
	    "$REGRESS/t_ctlsend" "$(fenced_socket)" bootleave gone2
	# A boot whose client went away is abandoned: stopped in the
	# fencer at once, or as soon as it comes up (docs/architecture.md,
	# "a boot nobody waits for"), its require or not.  Wait for both
	# to be given up, then for their ends.
	i=0
	until [ $(grep -c "fence gone2\{0,1\} of uid [0-9]*: the client of its boot went away" fenced.log) -eq 2 ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || atf_fail "the two boots were not abandoned"
		sleep 0.1
	done
	i=0
	until $CTL show stats | grep -q "fences: 0 running" &&
	    ! pgrep -u "$atk" > /dev/null; do
		i=$((i + 1))
		[ $i -lt 100 ] || break
		sleep 0.2
	done
	$CTL show environments
	grep -E "gone|require" fenced.log
	atf_check -o match:"fences: 0 running" $CTL show stats
	$CTL show environments | grep -q "gone" &&
	    atf_fail "an abandoned boot is listed"
	pgrep -u "$atk" > /dev/null && atf_fail "$atk's fence still runs"
	true
}
require_left_cleanup() { fenced_cleanup; users_remove; }

atf_test_case first_probe cleanup
first_probe_head() {
	atf_set descr "a fence's first probe leaves the fencer at its agent's READY, before the boot is handed to the broker (docs/probe.md, Integration), and decides the level as any probe; an exec right after the boot runs; a probe asked for later goes the broker's way, once at a time"
	atf_set require.user root
}
first_probe_body() {
	fenced_vars
	fenced_start
	# The exec goes as soon as the boot is answered (held until the
	# verdict if it comes first: forge_test's held_ cases).
	$CTL boot fp tier L1.5 > /dev/null || atf_fail "boot"
	atf_check -o inline:"ran\n" $CTL exec fp -- /bin/echo ran
	atf_check_equal L1.5 "$(level_of fp)"
	# The fencer's own lines, in its order: sent, then booted.
	awk '/fencer: fence fp: first probe sent/ { s = NR }
	    /fencer: fence fp booted/ { b = NR }
	    END { exit !(s > 0 && b > s) }' fenced.log ||
	    atf_fail "the first probe was not sent at READY, before BOOTED"
	# Later probes: asked by the broker, and still judged.
	atf_check -o match:'"privileges":\{"verdict":"fenced"' $CTL probe fp
	atf_check -o match:'"privileges":\{"verdict":"fenced"' $CTL probe fp
	atf_check_equal L1.5 "$(level_of fp)"
	atf_check_equal 1 "$(grep -c 'fencer: fence fp: first probe sent' fenced.log)"
}
first_probe_cleanup() { fenced_cleanup; }

atf_init_test_cases() {
	atf_add_test_case earned
	atf_add_test_case first_probe
	atf_add_test_case weakened
	atf_add_test_case require
	atf_add_test_case require_inner
	atf_add_test_case require_left
}
