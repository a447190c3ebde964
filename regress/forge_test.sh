#! /usr/bin/atf-sh
# A level no fence can forge (issue 9): each case is an attack as it was
# seen, run against the real daemon, from inside fences and as another
# local user.  docs/probe.md, "What grants each axis", says why each
# must fail.

. "$(atf_get_srcdir)/lib.subr"

# A genuine L2 report of this daemon, with the two things that change
# per run and per fence (the canary's address, the host secret's path)
# replaced by words the forger fills in: what a fence that has seen one
# L2 report could write.
forge_template() {
	$CTL boot tpl tier L2 > /dev/null || atf_fail "boot tpl"
	atf_check_equal L2 "$(level_of tpl)"
	sed -e 's/"canary":{"target":"127\.0\.0\.1:[0-9]*"/"canary":{"target":"CANARY"/' \
	    -e "s|$PWD/state/probe-secret\.0\.tpl|SECRETPATH|" \
	    "$PWD/state/envs/0/tpl/probe.json" > "$1" || atf_fail "template"
	grep -q CANARY "$1" && grep -q SECRETPATH "$1" ||
	    atf_fail "template without canary or secret"
	$CTL stop tpl > /dev/null
}

# Put the forger (regress/t_forge) and the template in KEY's home.
forger_plant() {
	h="$(fenced_homes)/$1"
	u=$(stat -c %u "$h")
	cp template.json "$h/template.json"
	cp "$REGRESS/t_forge" "$h/t_forge"
	chmod 0755 "$h/t_forge"
	chown $u "$h/template.json" "$h/t_forge"
}

atf_test_case stopped_probe cleanup
stopped_probe_head() {
	atf_set descr "a job in an L1.5 fence that stops fence-probe, writes an L2 report into its stdout and kills it gains nothing"
	atf_set require.user root
}
stopped_probe_body() {
	fenced_vars
	fenced_start
	forge_template template.json
	$CTL boot spy tier L1.5 > /dev/null || atf_fail "boot spy"
	atf_check_equal L1.5 "$(level_of spy)"
	forger_plant spy
	$CTL exec spy timeout 30000 -- sh -c '$HOME/t_forge $HOME/template.json 20000' \
	    > forger.out 2>&1 &
	fp=$!
	# The probe is asked for once the forger looks for it (an exec
	# can take longer than any fixed wait on a loaded machine).
	wait_until 30 grep -q '^watching' forger.out ||
	    atf_fail "the forger never started: $(cat forger.out)"
	$CTL probe spy > verdict 2>&1
	wait $fp
	cat forger.out >&2
	# The attack was made (stopped and killed; the pipe is closed to
	# it once the probe is not dumpable, but that is a race it may win).
	atf_check -o match:"^(forged|no-write) " cat forger.out
	grep -q '"level":"L2"' verdict && atf_fail "the forged report made L1.5 measure L2"
	atf_check -o match:'"level":"unmeasured"' cat verdict
	atf_check -o match:'killed by signal 9' cat verdict
	atf_check -o not-match:'^level: *L2' $CTL show environment spy
}
stopped_probe_cleanup() { fenced_cleanup; }

atf_test_case planted_forger cleanup
planted_forger_head() {
	atf_set descr "an L1 fence with a forger planted in its home does not pass require L2 or L1.5"
	atf_set require.user root
}
planted_forger_body() {
	fenced_vars
	fenced_start
	forge_template template.json
	for want in L2 L1.5; do
		k=plant$(echo $want | tr -d . | tr A-Z a-z)
		$CTL boot $k tier L1 > /dev/null || atf_fail "boot $k"
		$CTL stop $k > /dev/null
		forger_plant $k
		# The owner starts the forger the moment the fence exists.
		(
			i=0
			while [ $i -lt 2000 ] && [ ! -f boot.$k.done ]; do
				$CTL exec $k timeout 30000 -- sh -c \
				    '$HOME/t_forge $HOME/template.json 20000' \
				    >> forger.out 2>&1 &
				sleep 0.002
				i=$((i + 1))
			done
			wait
		) &
		lp=$!
		atf_check -s exit:1 -e match:"require-not-met.*measured L1," \
		    $CTL boot $k tier L1 require $want
		touch boot.$k.done
		wait $lp
	done
	cat forger.out >&2
	# The forger never ran: it waited for the verdict, then the end.
	atf_check -o not-match:"forged|no-write|no-probe" cat forger.out
}
planted_forger_cleanup() { fenced_cleanup; }

atf_test_case before_verdict cleanup
before_verdict_head() {
	atf_set descr "an exec sent right after a require boot, before the probe answers, never runs in a fence that fails its require"
	atf_set require.user root
}
before_verdict_body() {
	fenced_vars
	fenced_start
	h="$(fenced_homes)/early"
	t=$($CTL token | tail -1)
	u="http://127.0.0.1:$(fenced_port)/api/environments/early/exec"
	# From the control socket and over HTTP, as fast as they go.
	(
		i=0
		while [ $i -lt 400 ] && [ ! -f boot.done ]; do
			$CTL exec early -- sh -c 'date > ran-before-require' \
			    >> exec.out 2>&1 &
			curl -s -H "x-voicebox-host-token: $t" \
			    -d '{"argv":["sh","-c","date > ran-before-http"]}' \
			    "$u" >> http.out 2>&1 &
			sleep 0.01
			i=$((i + 1))
		done
		wait
	) &
	lp=$!
	atf_check -s exit:1 -e match:"require-not-met.*measured L1.5, required L2" \
	    $CTL boot early tier L1.5 require L2
	touch boot.done
	wait $lp
	[ -e "$h/ran-before-require" ] || [ -e "$h/ran-before-http" ] &&
	    atf_fail "a command ran in a fence that did not earn its require"
	atf_check -o match:'"error": *"(fence-stopped|not-found)"' cat http.out
	# The execs that reached it were held, then failed with its end.
	atf_check -o match:"fence-stopped|not-found" cat exec.out
	# A fence that earns its require runs what waited, once it has.
	# Until one ran: a boot and its probe may now take less than one
	# round of this loop, so the boot's end cannot end it.
	(
		i=0
		while [ $i -lt 400 ]; do
			if $CTL exec late -- sh -c 'echo ok >> ran-after' \
			    > /dev/null 2>&1; then
				break
			fi
			sleep 0.01
			i=$((i + 1))
		done
	) &
	lp=$!
	atf_check -o match:"^level: *L1.5" $CTL boot late tier L1.5 require L1.5
	wait $lp
	atf_check -o inline:"ok\n" cat "$(fenced_homes)/late/ran-after"
}
before_verdict_cleanup() { fenced_cleanup; }

# A boot of KEY (its other words after it) with a cpu limit of 5%: its
# probe then takes a tenth of a second or more (a second in a sanitizer
# build), so that a request sent as soon as the fence is listed reaches
# it before its first verdict.  0 once the fence is listed unmeasured, 1
# if it never was (the boot's output in boot.KEY.out, its pid in $bp).
slow_boot() {
	_k=$1
	shift
	$CTL boot $_k "$@" cpu 0.05 > boot.$_k.out 2>&1 &
	bp=$!
	_i=0
	while [ $_i -lt 1000 ]; do
		$CTL show environment $_k 2>/dev/null |
		    grep -q '^level: *unmeasured' && return 0
		sleep 0.01
		_i=$((_i + 1))
	done
	return 1
}

atf_test_case held_refused cleanup
held_refused_head() {
	atf_set descr "an exec sent at once after a boot whose require is not met (held for the first verdict, or come while the fence stops) runs nothing and fails with the verdict's reason"
	atf_set require.user root
}
held_refused_body() {
	fenced_vars
	fenced_start
	held=0
	for k in held1 held2 held3 held4 held5; do
		slow_boot $k tier L1.5 require L2 || { wait $bp; continue; }
		$CTL exec $k -- sh -c 'echo ran > ran-held' > exec.$k.out 2>&1
		wait $bp && atf_fail "boot $k met its require"
		atf_check -o match:"require-not-met: fence $k measured [^,]*, required L2; stopped: " \
		    cat boot.$k.out
		[ -e "$(fenced_homes)/$k/ran-held" ] &&
		    atf_fail "a held exec ran in a fence that failed its require"
		cat exec.$k.out >&2
		# It reached the fence (else not-found: it came after the
		# fence's end) and was refused with the verdict's reason.
		grep -q "fence-stopped" exec.$k.out || continue
		held=$((held + 1))
		why=$(sed -n "s/.*require-not-met: fence $k //p" boot.$k.out)
		atf_check -o inline:"fencectl: fence-stopped: fence $k $why\n" \
		    cat exec.$k.out
	done
	[ $held -gt 0 ] || atf_fail "no exec reached a fence before its verdict"
}
held_refused_cleanup() { fenced_cleanup; }

atf_test_case held_until_verdict cleanup
held_until_verdict_head() {
	atf_set descr "an exec sent before a fence's first verdict starts only after the probe has ended and its report was read by the host (the command's start against the report's mtime, and no fence-probe in its /proc)"
	atf_set require.user root
}
held_until_verdict_body() {
	fenced_vars
	fenced_start
	held=0
	for k in early1 early2 early3 early4 early5; do
		slow_boot $k tier L1.5 || { wait $bp; continue; }
		wait $bp || atf_fail "boot $k: $(cat boot.$k.out)"
		$CTL show environment $k | grep -q '^level: *unmeasured' ||
		    continue
		atf_check -o save:run.$k.out $CTL exec $k -- sh -c \
		    'date +%s.%N; cat /proc/[0-9]*/comm'
		atf_check_equal L1.5 "$(level_of $k)"
		# The host cached the report before it asked for a verdict.
		r=$(stat -c %.9Y "$PWD/state/envs/0/$k/probe.json")
		c=$(head -n 1 run.$k.out)
		cat run.$k.out >&2
		python3 -c "import sys; sys.exit(0 if $c > $r else 1)" ||
		    atf_fail "the command started at $c, before the report ($r)"
		atf_check -s exit:1 grep -x fence-probe run.$k.out
		held=$((held + 1))
	done
	[ $held -gt 0 ] || atf_fail "no exec reached a fence before its verdict"
}
held_until_verdict_cleanup() { fenced_cleanup; }

# Connect to every new listener on 127.0.0.1, as fast as it appears.
connector_script() {
	cat <<'EOF'
import socket, sys, time
seen = set()
end = time.time() + float(sys.argv[1])
while time.time() < end:
	for t in ("/proc/net/tcp", "/proc/net/tcp6"):
		try:
			lines = open(t).read().splitlines()[1:]
		except OSError:
			continue
		for l in lines:
			f = l.split()
			if f[3] != "0A" or not f[1].startswith("0100007F:"):
				continue
			k = (f[1], f[9])
			if k in seen:
				continue
			seen.add(k)
			try:
				s = socket.create_connection(("127.0.0.1",
				    int(f[1].split(":")[1], 16)), 0.2)
				s.send(b"x" * 32)
				s.close()
			except OSError:
				pass
	time.sleep(0.002)
EOF
}

atf_test_case canary_crowd cleanup
canary_crowd_head() {
	atf_set descr "another local user and an L1.5 fence connecting to every new loopback listener do not lower another user's L2 fence"
	atf_set require.user root
	atf_set timeout 300
}
canary_crowd_body() {
	fenced_vars
	users_add 1 fgc
	atk=$(sed -n 1p users.txt)
	fenced_start
	connector_script > connector.py
	$(as_user $atk) /usr/bin/python3 - 60 < connector.py &
	echo $! > connector.pid
	$CTL boot spy2 tier L1.5 > /dev/null || atf_fail "boot spy2"
	atf_check_equal L1.5 "$(level_of spy2)"
	h="$(fenced_homes)/spy2"
	connector_script > "$h/connector.py"
	chown $(stat -c %u "$h") "$h/connector.py"
	$CTL exec spy2 timeout 60000 -- sh -c '/usr/bin/python3 $HOME/connector.py 55' \
	    > /dev/null 2>&1 &
	sleep 1
	# Until the crowd has hit a canary at least once (a loaded machine
	# may schedule the connectors late): every boot must stay L2.
	for try in 1 2 3 4 5 6 7 8 9 10; do
		atf_check -o match:"^level: *L2" $CTL boot vic$try tier L2 require L2
		$CTL stop vic$try > /dev/null
		[ $try -lt 3 ] && continue
		grep -q "canary connection.*without the secret ignored" \
		    fenced.log && break
	done
	# The connections were there, and were ignored; the probe's own
	# (L1.5 shares the network) carried the secret and was counted.
	atf_check -o match:"canary connection.*without the secret ignored" \
	    cat fenced.log
	atf_check -o match:"fence spy2: the probe reached the canary" \
	    cat fenced.log
	atf_check -o not-match:"fence vic[0-9]+: the probe reached the canary" \
	    cat fenced.log
}
canary_crowd_cleanup() {
	p=$(cat connector.pid 2>/dev/null)
	[ -n "$p" ] && kill $p 2>/dev/null
	fenced_cleanup
	users_remove
}

# probe_secret_run BOOTARGS HOST: t_steal watches a fence booted with
# BOOTARGS through up to 20 probes, from inside it and as another local
# user on the host; neither may open anything of any probe.  HOST 1:
# the host's user must have seen the probes (not one inside gVisor).
probe_secret_run() {
	users_add 1 fps
	atk=$(sed -n 1p users.txt)
	mktemp -d /tmp/fenced-steal.XXXXXX > steal.dir
	chmod 0755 "$(cat steal.dir)"
	cp "$REGRESS/t_steal" "$(cat steal.dir)/t_steal"
	$(as_user $atk) "$(cat steal.dir)/t_steal" 120000 > host.out 2>&1 &
	echo $! > hoststeal.pid
	$CTL boot spy $1 > /dev/null || atf_fail "boot spy $1"
	h="$(fenced_homes)/spy"
	cp "$REGRESS/t_steal" "$h/t_steal"
	chmod 0755 "$h/t_steal"
	chown $(stat -c %u "$h") "$h/t_steal"
	# It writes into its home as it goes: its exec is cut short below.
	$CTL exec spy timeout 60000 -- sh -c \
	    '$HOME/t_steal 55000 > $HOME/steal.out 2>&1' > steal.exec 2>&1 &
	sp=$!
	i=0
	while [ $i -lt 100 ] && ! grep -q '^watching' "$h/steal.out" \
	    2>/dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
	grep -q '^watching' "$h/steal.out" || {
		cat steal.exec >&2
		atf_fail "t_steal did not start"
	}
	# Before the fix it got in within 1 to 7 probes (a probe in 3).  A
	# probe on a quiet machine can come and go between two of its
	# scans of /proc: 20 probes, then more until it watched one from
	# its start (a refusal), 200 at most; it stops once it got in.
	for try in $(seq 200); do
		$CTL probe spy > /dev/null 2>&1
		grep -q '^opened' "$h/steal.out" && break
		[ "$try" -lt 20 ] || ! grep -q '^refused' "$h/steal.out" ||
		    break
	done
	echo "$try probes" >&2
	$CTL stop spy > /dev/null
	wait $sp
	kill "$(cat hoststeal.pid)"
	cat "$h/steal.out" >&2
	atf_check -o not-match:'^(opened|stole) ' cat "$h/steal.out"
	# It saw the probes start: the refusals are the kernel's.
	atf_check -o match:'^refused ' cat "$h/steal.out"
	grep -c '^refused' host.out >&2
	atf_check -o not-match:'^(opened|stole) ' cat host.out
	[ "$2" = 0 ] || atf_check -o match:'^refused ' cat host.out
}

probe_secret_cleanup() {
	p=$(cat hoststeal.pid 2>/dev/null)
	[ -n "$p" ] && kill $p 2>/dev/null
	d=$(cat steal.dir 2>/dev/null)
	[ -n "$d" ] && rm -rf "$d"
	fenced_cleanup
	users_remove
}

atf_test_case probe_secret cleanup
probe_secret_head() {
	atf_set descr "a process of an L1.5 fence that watches for every new fence-probe cannot open its stdin or memory, attach to it, nor read the canary secret (issue 28)"
	atf_set require.user root
	atf_set timeout 300
}
probe_secret_body() {
	fenced_vars
	fenced_start
	probe_secret_run "tier L1.5" 1
	# Executable, not readable: not dumpable from its execve on.
	$CTL boot spy tier L1.5 > /dev/null || atf_fail "boot spy again"
	atf_check -o inline:"111 0\n" \
	    $CTL exec spy -- stat -c '%a %u' /run/fenced/bin/fence-probe
}

atf_test_case probe_secret_runsc cleanup
probe_secret_runsc_head() {
	atf_set descr "the same in a runsc fence, where gVisor lets a process of the probe's uid open a pipe of a non-dumpable process and start it dumpable: the probe's descriptors are sockets, and its ptrace scope keeps a sibling out (issue 28)"
	atf_set require.user root
	atf_set timeout 300
}
probe_secret_runsc_body() {
	command -v runsc > /dev/null ||
	    atf_skip "runsc is not installed (scripts/deps.sh installs it)"
	fenced_vars
	fenced_start
	probe_secret_run "backend runsc" 0
}
probe_secret_runsc_cleanup() { probe_secret_cleanup; }

atf_test_case agent_answers_twice cleanup
agent_answers_twice_head() {
	atf_set descr "an agent that is not ours (regress/t_badagent) answers the first probe, which the fencer sent as request 0, twice: the broker takes the first as its output (the agent's word: unmeasured), closes the channel at the second and stops the fence; a fence whose agent answers once is unmeasured and runs on"
	atf_set require.user root
}
agent_answers_twice_body() {
	fenced_vars
	fenced_start_badagent
	$CTL boot once tier L1.5 > /dev/null || atf_fail "boot once"
	$CTL boot twice tier L1.5 > /dev/null || atf_fail "boot twice"
	wait_until 20 grep -q \
	    "fence twice: agent sent IMSG_AGENT_RESULT for request 0; channel closed" \
	    fenced.log || atf_fail "a second answer to request 0 was taken"
	wait_until 20 sh -c "$CTL show environment twice | \
	    grep -q '^state: *stopped'" || atf_fail "the fence runs on"
	grep -q "fencer: fence twice: first probe sent" fenced.log ||
	    atf_fail "the first probe was not request 0"
	atf_check_equal unmeasured "$($CTL show environment once |
	    awk '$1 == "level:" { print $2 }')"
	atf_check -o match:'^state: *running' $CTL show environment once
	fenced_stop
}
agent_answers_twice_cleanup() {
	fenced_cleanup
	fenced_badagent_cleanup
}

atf_init_test_cases() {
	atf_add_test_case stopped_probe
	atf_add_test_case planted_forger
	atf_add_test_case before_verdict
	atf_add_test_case held_refused
	atf_add_test_case held_until_verdict
	atf_add_test_case canary_crowd
	atf_add_test_case probe_secret
	atf_add_test_case probe_secret_runsc
	atf_add_test_case agent_answers_twice
}
