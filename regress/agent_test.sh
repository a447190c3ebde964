#! /usr/bin/atf-sh
# fence-agent on its own, outside any fence: t_agent starts it on a
# socketpair, says HELLO with a temporary HOME and sends the requests
# each case names.  Run as root, the agent runs as uid 65534.

# A HOME the agent's uid can reach (the work directory may not be).
agent_setup() {
	BIN=$(atf_config_get bindir)
	REGRESS=$(atf_config_get regressdir)
	H=$(mktemp -d /tmp/agent-home.XXXXXX) || atf_fail "mktemp"
	chmod 0755 "$H"
	echo "$H" > home.path
	mkdir -p out
	# A marker no other process has on its command line.
	M=$$$(date +%N | cut -c1-4)
}

# drive [-p] REQUEST [\; REQUEST]...: answers in drive.out, logs in drive.err
drive() {
	p=
	if [ "$1" = -p ]; then p=-p; shift; fi
	"$REGRESS/t_agent" $p -a "$BIN/fence-agent" -H "$H" -o out "$@" \
	    > drive.out 2> drive.err
	DRIVE_STATUS=$?
	# Sanitizer builds: the agent, its supervisors, the driver.
	if grep -Eq "Sanitizer|runtime error" drive.err; then
		cat drive.err >&2
		atf_fail "sanitizer report"
	fi
}

# The one answer line of request N.
answer() {
	grep "^$1 " drive.out
}

# value N NAME: NAME=value from the answer of request N.
value() {
	answer "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

expect() {
	answer "$1" | grep -Eq "^$1 $2" || {
		cat drive.out drive.err >&2
		atf_fail "request $1: wanted '$2', got '$(answer $1)'"
	}
}

agent_cleanup() {
	H=$(cat home.path 2>/dev/null)
	case "$H" in
	/tmp/agent-home.*) rm -rf "$H" ;;
	esac
	true
}

atf_test_case unpaired cleanup
unpaired_head() {
	atf_set descr "a missing or wrong bearer is refused with exec-unpaired and nothing runs or changes"
}
unpaired_body() {
	agent_setup
	drive exec bearer=none -c 'touch "$HOME/none"' \; \
	    exec bearer=wrong -c 'touch "$HOME/wrong"' \; \
	    gitconfig bearer=none name=Mallory \; \
	    gitconfig bearer=wrong email=m@x \; \
	    gitinit bearer=wrong \; \
	    gitconfig bearer=none \; \
	    exec -c 'touch "$HOME/paired"'
	for n in 1 2 3 4 5; do
		expect $n "error code=exec-unpaired "
	done
	# Reading the identity is not a change: no bearer needed.
	expect 6 "identity name= email="
	expect 7 "result exit=0 "
	[ ! -e "$H/none" ] && [ ! -e "$H/wrong" ] || atf_fail "an unpaired command ran"
	[ ! -e "$H/.gitconfig" ] || atf_fail "unpaired git config wrote"
	[ ! -e "$H/.git" ] || atf_fail "unpaired git init ran"
	[ -e "$H/paired" ] || atf_fail "the paired command did not run"
	atf_check -o inline:"agent_exit=0\n" tail -1 drive.out
}
unpaired_cleanup() { agent_cleanup; }

atf_test_case argv_command cleanup
argv_command_head() {
	atf_set descr "argv runs without a shell, command with /usr/bin/sh -c"
}
argv_command_body() {
	agent_setup
	drive exec -- echo '$HOME;' '|x' \; exec -c 'echo $HOME; echo two' \; \
	    exec -- sh -c 'echo $0' zero
	expect 1 "result exit=0 signal=0 truncated=0 error= "
	atf_check -o inline:'$HOME; |x\n' cat out/1.out
	atf_check -o inline:"$(cd "$H" && pwd -P)\ntwo\n" cat out/2.out
	atf_check -o inline:"zero\n" cat out/3.out
}
argv_command_cleanup() { agent_cleanup; }

atf_test_case exit_signal cleanup
exit_signal_head() {
	atf_set descr "exit codes and terminating signals are reported; exec failures are errors"
}
exit_signal_body() {
	agent_setup
	drive exec -c 'exit 7' \; exec -c 'kill -TERM $$' \; \
	    exec -c 'kill -SEGV $$' \; exec -- no-such-command-$M \; \
	    exec -- /etc/passwd \; exec -c 'echo e >&2; exit 0'
	expect 1 "result exit=7 signal=0 "
	expect 2 "result exit=-1 signal=15 "
	expect 3 "result exit=-1 signal=11 "
	expect 4 "error code=exec-failed message=cannot execute no-such-command-$M: No such file or directory \(not in PATH\)"
	expect 5 "error code=exec-failed message=cannot execute /etc/passwd: Permission denied"
	expect 6 "result exit=0 signal=0 truncated=0 error= duration=[0-9]+ stdout=0 stderr=2"
}
exit_signal_cleanup() { agent_cleanup; }

atf_test_case binary cleanup
binary_head() {
	atf_set descr "binary stdout, stderr and stdin round-trip exactly"
}
binary_body() {
	agent_setup
	head -c 100000 /dev/urandom > in.bin
	drive exec -c 'head -c 100000 /dev/urandom | tee "$HOME/r.bin"' \; \
	    exec -c 'cat "$HOME/r.bin" >&2' \; \
	    exec stdin=in.bin -- cat
	expect 1 "result exit=0 .* stdout=100000 stderr=0"
	expect 2 "result exit=0 .* stdout=0 stderr=100000"
	expect 3 "result exit=0 .* stdout=100000 stderr=0"
	want=$(sha256sum < "$H/r.bin")
	atf_check_equal "$want" "$(sha256sum < out/1.out)"
	atf_check_equal "$want" "$(sha256sum < out/2.err)"
	atf_check_equal "$(sha256sum < in.bin)" "$(sha256sum < out/3.out)"
}
binary_cleanup() { agent_cleanup; }

atf_test_case stdin cleanup
stdin_head() {
	atf_set descr "stdin reaches the command; one that never reads it does not block the agent"
}
stdin_body() {
	agent_setup
	printf 'hello\nworld\n' > small
	head -c 1048576 /dev/zero > big
	drive -p exec stdin=small -- wc -l \; \
	    exec stdin=big timeout=3000 -c 'sleep 1; echo done' \; \
	    exec stdin=big -c 'exit 0' \; \
	    exec -- echo served
	atf_check -o inline:"2\n" cat out/1.out
	expect 2 "result exit=0 "
	atf_check -o inline:"done\n" cat out/2.out
	expect 3 "result exit=0 "
	expect 4 "result exit=0 "
	# Served while 2 sat on a full pipe.
	[ "$(value 4 duration)" -lt 900 ] || atf_fail "blocked behind a command that does not read"
}
stdin_cleanup() { agent_cleanup; }

atf_test_case timeout_setsid cleanup
timeout_setsid_head() {
	atf_set descr "at the deadline a command and a setsid descendant die: exec-timeout, nothing left"
}
timeout_setsid_body() {
	agent_setup
	drive exec timeout=500 -c "echo before; n=$M; setsid sh -c \"sleep \$n.1\" & sleep \$n.1" \; \
	    check "sleep $M.1"
	expect 1 "result exit=-1 signal=9 truncated=0 error=exec-timeout "
	atf_check -o inline:"before\n" cat out/1.out
	d=$(value 1 duration)
	[ "$d" -ge 500 ] && [ "$d" -lt 3000 ] || atf_fail "duration $d"
	expect 2 "alive=0"
	atf_check -s exit:1 -o empty pgrep -f "slee[p] $M.1"
}
timeout_setsid_cleanup() { agent_cleanup; }

atf_test_case timeout_doublefork cleanup
timeout_doublefork_head() {
	atf_set descr "a double-forked descendant in its own session that ignores SIGTERM dies at the deadline too"
}
timeout_doublefork_body() {
	agent_setup
	drive exec timeout=500 -c "n=$M; trap '' TERM HUP; ( ( trap '' TERM HUP; setsid sh -c \"trap '' TERM; sleep \$n.2; :\" & ) & ); sleep \$n.2" \; \
	    sleep 100 \; check "sleep $M.2"
	expect 1 "result exit=-1 signal=9 truncated=0 error=exec-timeout "
	expect 3 "alive=0"
	atf_check -s exit:1 -o empty pgrep -f "slee[p] $M.2"
}
timeout_doublefork_cleanup() { agent_cleanup; }

atf_test_case supervisor_killed cleanup
supervisor_killed_head() {
	atf_set descr "a command that kills its supervisor gets exec-failed and its processes are swept"
}
supervisor_killed_body() {
	agent_setup
	drive exec -c "n=$M; sleep \$n.3 & kill -9 \$PPID; sleep \$n.3" \; \
	    sleep 300 \; check "sleep $M.3" \; exec -- echo alive
	expect 1 "error code=exec-failed "
	expect 3 "alive=0"
	expect 4 "result exit=0 "
}
supervisor_killed_cleanup() { agent_cleanup; }

# The agent's other children, as a command sees them: every child of
# its supervisor's parent that is not its supervisor.  Prints pids.
others_script='a=$(cut -d" " -f4 /proc/$PPID/stat); for p in $(pgrep -P $a); do [ $p = $PPID ] || echo $p; done'

atf_test_case spare_hidden cleanup
spare_hidden_head() {
	atf_set descr "no spare supervisor waits while a command runs: a command that kills or stops every other process of the agent costs no later command anything"
}
spare_hidden_body() {
	agent_setup
	drive exec -- echo one \; \
	    exec -c "for p in \$($others_script); do kill -STOP \$p; kill -9 \$p; done; echo done" \; \
	    exec timeout=5000 -- echo two \; exec timeout=5000 -- echo three \; \
	    exec -c "for p in \$($others_script); do kill -STOP \$p; done; echo stopped" \; \
	    exec timeout=5000 -- echo four
	for n in 1 2 3 4 5 6; do expect $n "result exit=0 "; done
	atf_check -o inline:"two\n" cat out/3.out
	atf_check -o inline:"three\n" cat out/4.out
	atf_check -o inline:"four\n" cat out/6.out
	# Answered at once, not at their deadlines.
	for n in 3 4 6; do
		d=$(value $n duration)
		[ "$d" -lt 2000 ] || atf_fail "request $n took $d ms"
	done
	atf_check -s exit:1 -o ignore grep "ended badly" drive.err
}
spare_hidden_cleanup() { agent_cleanup; }

atf_test_case spare_outside cleanup
spare_outside_head() {
	atf_set descr "a spare supervisor stopped or killed from outside the agent is dropped, and the next command runs under one forked for it"
	atf_set require.user root
}
spare_outside_body() {
	agent_setup
	# Between requests the driver stops (then kills) the agent's idle
	# children: the spare, all there is while nothing runs.  A signal
	# is delivered when its target next runs, so the driver waits for
	# that: a request racing a kill fails as it would if the kill had
	# hit its supervisor a moment later (docs/agent.md).
	stopped='for p in $(pgrep -P $AGENT_PID); do kill -STOP $p; while ! grep -q "^State:.*[TZ]" /proc/$p/status 2>/dev/null && [ -d /proc/$p ]; do sleep 0.01; done; done'
	killed='for p in $(pgrep -P $AGENT_PID); do kill -9 $p; while [ -d /proc/$p ] && ! grep -q "^State:.*Z" /proc/$p/status 2>/dev/null; do sleep 0.01; done; done'
	drive exec -- echo one \; sleep 200 \; host "$stopped" \; \
	    exec timeout=5000 -- echo two \; sleep 200 \; host "$killed" \; \
	    exec timeout=5000 -- echo three
	atf_check -o inline:"two\n" cat out/4.out
	atf_check -o inline:"three\n" cat out/7.out
	for n in 4 7; do
		expect $n "result exit=0 "
		d=$(value $n duration)
		[ "$d" -lt 2000 ] || atf_fail "request $n took $d ms"
	done
}
spare_outside_cleanup() { agent_cleanup; }

atf_test_case spare_reused cleanup
spare_reused_head() {
	atf_set descr "the supervisor of the only job is the next spare; one whose limits, priority or affinity its command changed, or which its command stopped or killed, is not, and the next command runs at once under a fresh one"
}
spare_reused_body() {
	agent_setup
	# $PPID of a command is its supervisor.
	drive exec -c 'echo $PPID' \; exec -c 'echo $PPID' \; \
	    exec -c 'echo $PPID; prlimit --pid $PPID --nofile=64:64' \; \
	    exec -c 'echo $PPID; grep "^Max open files" /proc/self/limits' \; \
	    exec -c 'echo $PPID; renice -n 7 -p $PPID > /dev/null' \; \
	    exec -c 'echo $PPID; cut -d" " -f19 /proc/self/stat' \; \
	    exec timeout=1000 -c 'echo $PPID; kill -STOP $PPID' \; \
	    exec timeout=5000 -c 'echo $PPID' \; \
	    exec -c 'echo $PPID; kill -KILL $PPID' \; \
	    exec timeout=5000 -c 'echo $PPID' \; exec -c 'echo $PPID'
	for n in 1 2 3 4 5 6 8 10 11; do expect $n "result exit=0 "; done
	s() { head -1 out/$1.out; }
	# Reused: the same supervisor twice, and after each clean job.
	[ "$(s 1)" = "$(s 2)" ] || atf_fail "not reused: $(s 1), $(s 2)"
	[ "$(s 2)" = "$(s 3)" ] || atf_fail "not reused: $(s 2), $(s 3)"
	[ "$(s 10)" = "$(s 11)" ] || atf_fail "not reused: $(s 10), $(s 11)"
	# Changed by its command: never again; the next one has the agent's.
	[ "$(s 3)" != "$(s 4)" ] || atf_fail "a supervisor with new limits was reused"
	atf_check -s exit:1 -o ignore grep -E " 64 +64 " out/4.out
	[ "$(s 5)" != "$(s 6)" ] || atf_fail "a reniced supervisor was reused"
	atf_check -o inline:"0\n" sed -n 2p out/6.out
	# Stopped, then killed, by its command: the next ones run (a hang
	# would be their deadline's exec-timeout).
	[ "$(s 7)" != "$(s 8)" ] || atf_fail "a stopped supervisor was reused"
	[ "$(s 9)" != "$(s 10)" ] || atf_fail "a killed supervisor was reused"
	# Its affinity, where there is more than one cpu to choose.
	if [ "$(nproc)" -gt 1 ]; then
		drive exec -c 'echo $PPID; taskset -p 1 $PPID > /dev/null' \; \
		    exec timeout=5000 -c 'echo $PPID'
		expect 1 "result exit=0 "
		expect 2 "result exit=0 "
		[ "$(s 1)" != "$(s 2)" ] ||
		    atf_fail "a supervisor with a new affinity was reused"
	fi
}
spare_reused_cleanup() { agent_cleanup; }

atf_test_case spare_big cleanup
spare_big_head() {
	atf_set descr "a command whose arguments do not fit a spare's job runs under a supervisor forked for it"
}
spare_big_body() {
	agent_setup
	big=$(head -c 4000 /dev/zero | tr '\0' a)
	drive exec -- /bin/sh -c 'echo $# ${#1} ${#10}' sh $big $big $big $big \
	    $big $big $big $big $big $big \; exec -- echo small
	expect 1 "result exit=0 "
	atf_check -o inline:"10 4000 4000\n" cat out/1.out
	expect 2 "result exit=0 "
	atf_check -o inline:"small\n" cat out/2.out
}
spare_big_cleanup() { agent_cleanup; }

atf_test_case output_budget cleanup
output_budget_head() {
	atf_set descr "5 MB with the default cap: exactly 262144 bytes, exec-output-over-budget, truncated"
}
output_budget_body() {
	agent_setup
	drive exec -c "head -c 5000000 /dev/zero" \; \
	    exec max=1024 -c 'head -c 600 /dev/zero; sleep 0.3; head -c 600 /dev/zero >&2; sleep 5' \; \
	    exec max=1024 -c 'head -c 1024 /dev/zero'
	expect 1 "result exit=-?[0-9]+ signal=[0-9]+ truncated=1 error=exec-output-over-budget .* stdout=262144 stderr=0"
	atf_check -o inline:"262144\n" sh -c 'wc -c < out/1.out'
	# Split as it arrived, and killed at once (not after the sleep).
	expect 2 "result .* truncated=1 error=exec-output-over-budget .* stdout=600 stderr=424"
	[ "$(value 2 duration)" -lt 3000 ] || atf_fail "not killed when over budget"
	# Exactly the budget is not over it.
	expect 3 "result exit=0 signal=0 truncated=0 error= .* stdout=1024 stderr=0"
}
output_budget_cleanup() { agent_cleanup; }

atf_test_case cwd cleanup
cwd_head() {
	atf_set descr "cwd must resolve inside HOME: .., /etc and a symlink to /etc are refused"
}
cwd_body() {
	agent_setup
	mkdir -p "$H/sub/deeper"
	ln -s /etc "$H/etclink"
	ln -s "$H/sub" "$H/sublink"
	ln -s ../.. "$H/sub/up"
	[ "$(id -u)" -ne 0 ] || chown -R -h 65534:65534 "$H"
	drive exec cwd=.. -- pwd \; exec cwd=/etc -- pwd \; \
	    exec cwd=etclink -- pwd \; exec cwd=sub/up -- pwd \; \
	    exec cwd=sub/deeper/../deeper -- pwd \; exec cwd=sublink -- pwd \; \
	    exec "cwd=$H/sub" -- pwd \; exec -- pwd \; exec cwd=nothere -- pwd \; \
	    exec -c 'touch "$HOME/ran"' \; \
	    exec cwd=/ -c 'touch "$HOME/ran-outside"'
	for n in 1 2 3 4 11; do
		expect $n "error code=exec-cwd-outside-home "
	done
	r=$(cd "$H" && pwd -P)
	atf_check -o inline:"$r/sub/deeper\n" cat out/5.out
	atf_check -o inline:"$r/sub\n" cat out/6.out
	atf_check -o inline:"$r/sub\n" cat out/7.out
	atf_check -o inline:"$r\n" cat out/8.out
	expect 9 "error code=exec-cwd-invalid message=directory nothere: No such file"
	[ ! -e "$H/ran-outside" ] || atf_fail "ran with cwd outside"
}
cwd_cleanup() { agent_cleanup; }

atf_test_case environment cleanup
environment_head() {
	atf_set descr "the environment of a command is exactly the documented list"
}
environment_body() {
	agent_setup
	FAKE_API_KEY=sk-secret GIT_DIR=/nope GIT_WORK_TREE=/nope LD_PRELOAD= \
	    drive exec -- env
	cat > want <<EOF
GIT_CONFIG_GLOBAL=$H/.gitconfig
HOME=$H
LANG=C.UTF-8
LOGNAME=tester
PATH=/usr/local/bin:/usr/bin:/bin
SHELL=/usr/bin/sh
TERM=dumb
TMPDIR=/tmp
USER=tester
VOICEBOX_FENCE=t-agent
XDG_CONFIG_HOME=$H/.config
EOF
	# HOME is what HELLO said: t_agent sends the resolved path.
	H2=$(cd "$H" && pwd -P)
	sed "s|$H|$H2|" want > want.resolved
	atf_check -o file:want.resolved sort out/1.out
}
environment_cleanup() { agent_cleanup; }

atf_test_case fds cleanup
fds_head() {
	atf_set descr "no descriptor but 0, 1 and 2 reaches a command, and they are pipes"
}
fds_body() {
	agent_setup
	drive exec -- ls /proc/self/fd \; \
	    exec -c 'for f in 0 1 2; do readlink /proc/$$/fd/$f; done'
	# 3 is the directory ls is listing.
	atf_check -o inline:"0\n1\n2\n3\n" cat out/1.out
	atf_check -o match:"^pipe:.*pipe:.*pipe:" tr '\n' ' ' < out/2.out
}
fds_cleanup() { agent_cleanup; }

atf_test_case concurrent cleanup
concurrent_head() {
	atf_set descr "50 execs at once all return their own output, and run side by side"
}
concurrent_body() {
	agent_setup
	set --
	i=1
	while [ $i -le 50 ]; do
		set -- "$@" exec -c "sleep 1; echo out-$i; echo err-$i >&2" \;
		i=$((i + 1))
	done
	start=$(date +%s)
	drive -p "$@"
	end=$(date +%s)
	i=1
	while [ $i -le 50 ]; do
		expect $i "result exit=0 "
		atf_check -o inline:"out-$i\n" cat out/$i.out
		atf_check -o inline:"err-$i\n" cat out/$i.err
		i=$((i + 1))
	done
	[ $((end - start)) -lt 15 ] || atf_fail "took $((end - start)) s: not concurrent"
}
concurrent_cleanup() { agent_cleanup; }

atf_test_case busy cleanup
busy_head() {
	atf_set descr "over 128 execs at once the rest get exec-busy; slots come back as commands end"
}
busy_body() {
	agent_setup
	# The 128 commands wait at a gate the test opens once all of them
	# run, not for a time: a TCG guest takes longer than any sleep to
	# start 128, and the first would end before the last began.
	g=$H/gate-$M
	mkfifo -m 0666 "$g"
	(
		i=0
		while [ "$(pgrep -c -f "$g")" -lt 128 ] && [ $i -lt 1200 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		# Requests 129 and 130 were in the agent's channel already.
		sleep 1
		exec 3> "$g"
	) &
	gate=$!
	set --
	i=1
	while [ $i -le 130 ]; do
		set -- "$@" exec timeout=60000 -c "exec cat $g" \;
		i=$((i + 1))
	done
	drive -p "$@" sleep 10 \; exec -- echo again
	wait $gate
	atf_check -o inline:"129\n" sh -c 'grep -c "^[0-9]* result exit=0 " drive.out'
	atf_check -o inline:"2\n" sh -c 'grep -c "^[0-9]* error code=exec-busy " drive.out'
	atf_check -o inline:"again\n" cat out/132.out
}
busy_cleanup() { agent_cleanup; }

atf_test_case limits cleanup
limits_head() {
	atf_set descr "timeoutMs 100..60000 and maxBytes 1024..1048576, else exec-bad-request naming the range"
}
limits_body() {
	agent_setup
	drive exec timeout=99 -- true \; exec timeout=60001 -- true \; \
	    exec max=1023 -- true \; exec max=1048577 -- true \; \
	    exec timeout=100 max=1024 -- true \; exec timeout=60000 max=1048576 -- true
	expect 1 "error code=exec-bad-request message=timeoutMs must be 100..60000"
	expect 2 "error code=exec-bad-request "
	expect 3 "error code=exec-bad-request message=maxBytes must be 1024..1048576"
	expect 4 "error code=exec-bad-request "
	expect 5 "result exit=0 "
	expect 6 "result exit=0 "
}
limits_cleanup() { agent_cleanup; }

atf_test_case git_config cleanup
git_config_head() {
	atf_set descr "git identity is written and read back, other settings stay, bad values are refused"
}
git_config_body() {
	[ -x /usr/bin/git ] || atf_skip "needs /usr/bin/git"
	agent_setup
	printf '[core]\n\teditor = vi\n[alias]\n\tco = checkout\n' > "$H/.gitconfig"
	[ "$(id -u)" -ne 0 ] || chown 65534:65534 "$H/.gitconfig"
	nl=$(printf 'a\nb')
	drive gitconfig \; gitconfig "name=Jo Q. Public" email=jo@example.org \; \
	    gitconfig "name=$nl" \; gitconfig "email=$(printf 'x\033y')" \; \
	    gitconfig name=-n \; gitconfig \; \
	    exec -- git config --global user.email
	expect 1 "identity name= email=$"
	expect 2 "identity name=Jo Q. Public email=jo@example.org$"
	expect 3 "error code=git-bad-value "
	expect 4 "error code=git-bad-value "
	expect 5 "identity name=-n email=jo@example.org$"
	expect 6 "identity name=-n email=jo@example.org$"
	atf_check -o inline:"jo@example.org\n" cat out/7.out
	atf_check -o inline:"vi\n" git config --file "$H/.gitconfig" core.editor
	atf_check -o inline:"checkout\n" git config --file "$H/.gitconfig" alias.co
	atf_check -o inline:"-n\n" git config --file "$H/.gitconfig" user.name
}
git_config_cleanup() { agent_cleanup; }

atf_test_case git_init cleanup
git_init_head() {
	atf_set descr "git init at HOME or below it, never outside"
}
git_init_body() {
	[ -x /usr/bin/git ] || atf_skip "needs /usr/bin/git"
	agent_setup
	drive gitinit \; gitinit path=proj/one \; gitinit path=../elsewhere \; \
	    gitinit path=/tmp/agent-init-$M \; gitinit path=new/../../x
	expect 1 "result exit=0 "
	expect 2 "result exit=0 "
	[ -d "$H/.git" ] || atf_fail "no .git in HOME"
	[ -d "$H/proj/one/.git" ] || atf_fail "no .git in proj/one"
	expect 3 "error code=exec-cwd-outside-home "
	expect 4 "error code=exec-cwd-outside-home "
	expect 5 "error code=exec-cwd-invalid "
	[ ! -e /tmp/agent-init-$M ] && [ ! -e "$(dirname "$H")/elsewhere" ] || \
	    atf_fail "git init outside HOME"
}
git_init_cleanup() { agent_cleanup; rm -rf /tmp/agent-init-*; }

atf_test_case dumpable cleanup
dumpable_head() {
	atf_set descr "the agent is not dumpable: a command of its uid cannot read its memory or environment"
}
dumpable_body() {
	agent_setup
	drive exec -c 'a=$(cut -d" " -f4 /proc/$PPID/stat); echo $a; stat -c %u /proc/$a/status; cat /proc/$a/environ; dd if=/proc/$a/mem bs=1 count=1 skip=4096; tr "\0" " " < /proc/$a/cmdline; echo'
	pid=$(sed -n 's/^agent_pid=//p' drive.out)
	expect 1 "result "
	# The agent is the supervisor's parent; non-dumpable files are root's.
	atf_check -o inline:"$pid\n0\nfence-agent -v \n" cat out/1.out
	atf_check -o match:"environ: Permission denied" cat out/1.err
	atf_check -o match:"mem.*Permission denied" cat out/1.err
}
dumpable_cleanup() { agent_cleanup; }

atf_test_case malformed cleanup
malformed_head() {
	atf_set descr "a payload the agent does not understand ends it, with a non-zero status"
}
malformed_body() {
	agent_setup
	drive exec -- true \; garbage
	expect 1 "result exit=0 "
	atf_check -o match:"^closed$" cat drive.out
	atf_check -o inline:"agent_exit=1\n" tail -1 drive.out
	atf_check -o match:"malformed" cat drive.err
}
malformed_cleanup() { agent_cleanup; }

atf_test_case stream_credit cleanup
stream_credit_head() {
	atf_set descr "EXEC_STREAM: chunks are the output exactly; without credit exactly the window is sent and the command blocks till its deadline"
}
stream_credit_body() {
	agent_setup
	drive exec stream max=1048576 -c \
	    'head -c 3000000 /dev/zero; echo e >&2' \; \
	    exec stream -c 'printf "a\\377"; printf "b" >&2; exit 5' \; \
	    exec stream nocredit timeout=1000 max=1048576 -c \
	    "head -c 3000000 /dev/zero; echo $M"
	expect 1 "result exit=[-0-9]+ signal=[0-9]+ truncated=1 error=exec-output-over-budget .* stdout=1048576 stderr=0 chunks=1048576 same=1"
	expect 2 "result exit=5 .* stdout=2 stderr=1 chunks=3 same=1"
	atf_check -o inline:"61ff\n" sh -c "od -An -tx1 out/2.out | tr -d ' '"
	# No credit: 256 KiB of chunks and not a byte more (t_agent fails
	# on more); blocked, killed at its deadline; the rest in RESULT.
	expect 3 "result exit=-1 signal=9 truncated=0 error=exec-timeout .* chunks=262144 same=0"
	[ "$(value 3 stdout)" -gt 262144 ] || atf_fail "$(answer 3)"
	atf_check -o inline:"agent_exit=0\n" tail -1 drive.out
}
stream_credit_cleanup() { agent_cleanup; }

atf_test_case stream_cancel cleanup
stream_cancel_head() {
	atf_set descr "CANCEL kills a streamed job and all it started; a CANCEL with a wrong bearer is dropped"
}
stream_cancel_body() {
	agent_setup
	drive -p exec stream timeout=1500 -c "echo x; exec sleep 31$M" \; \
	    cancel 1 bearer=wrong \; \
	    exec stream timeout=20000 -c "sleep 32$M & echo y; wait" \; \
	    cancel 3 \; sleep 300 \; check "$M"
	expect 1 "result exit=-1 signal=9 truncated=0 error=exec-timeout .* chunks=2 same=1"
	expect 3 "result exit=-1 signal=9 truncated=0 error=exec-cancelled "
	grep -q "request 1: unpaired, dropped" drive.err || atf_fail "no log"
	expect 6 "alive=0"
	atf_check -o inline:"agent_exit=0\n" tail -1 drive.out
}
stream_cancel_cleanup() { agent_cleanup; }

atf_init_test_cases() {
	atf_add_test_case stream_credit
	atf_add_test_case stream_cancel
	atf_add_test_case unpaired
	atf_add_test_case argv_command
	atf_add_test_case exit_signal
	atf_add_test_case binary
	atf_add_test_case stdin
	atf_add_test_case timeout_setsid
	atf_add_test_case timeout_doublefork
	atf_add_test_case supervisor_killed
	atf_add_test_case spare_hidden
	atf_add_test_case spare_outside
	atf_add_test_case spare_reused
	atf_add_test_case spare_big
	atf_add_test_case output_budget
	atf_add_test_case cwd
	atf_add_test_case environment
	atf_add_test_case fds
	atf_add_test_case concurrent
	atf_add_test_case busy
	atf_add_test_case limits
	atf_add_test_case git_config
	atf_add_test_case git_init
	atf_add_test_case dumpable
	atf_add_test_case malformed
}
