#! /usr/bin/atf-sh
# Commands in fences through the daemon, as fencectl runs them: the
# agent's guarantees seen from outside (issue 4).

. "$(atf_get_srcdir)/lib.subr"

# Start the daemon with secrets in its environment that must not pass.
start_with_secrets() {
	FAKE_API_KEY=sk-secret-123 GIT_DIR=/etc GIT_WORK_TREE=/etc \
	    fenced_start
	$CTL boot ex > /dev/null || atf_fail "boot"
}

atf_test_case timeout_kills_all cleanup
timeout_kills_all_head() {
	atf_set descr "a timed-out command's setsid'd and double-forked descendants all die"
	atf_set require.user root
}
timeout_kills_all_body() {
	fenced_vars
	start_with_secrets
	atf_check -s exit:124 -e match:"exec-timeout" $CTL exec ex timeout 500 \
	    -- sh -c 'setsid sh -c "sleep 100" & sleep 100'
	atf_check -s exit:124 -e match:"exec-timeout" $CTL exec ex timeout 500 \
	    -- sh -c '(trap "" TERM; (trap "" TERM; exec sleep 101) &) ; sleep 101'
	sleep 0.3
	# No sleep of either command is left anywhere in the fence.
	atf_check -o empty $CTL exec ex -- sh -c \
	    'for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = sleep ] && echo $p; done; true'
}
timeout_kills_all_cleanup() { fenced_cleanup; }

# Every deadline on the way (fencectl, the broker's control connection,
# the agent) leaves room for the one inside it: at the configured
# maximum, a command that outlives it still returns its partial output
# and exec-timeout, over the control socket and over HTTP.
atf_test_case timeout_at_max cleanup
timeout_at_max_head() {
	atf_set descr "exec at the maximum timeout (60000 ms) returns the partial output and exec-timeout, not a closed connection"
	atf_set require.user root
	atf_set timeout 240
}
timeout_at_max_body() {
	fenced_vars
	fenced_start
	$CTL boot ex > /dev/null || atf_fail "boot"
	t=$($CTL token)
	port=$(fenced_port)
	curl -s -m 120 -o http.out -w '%{http_code}' \
	    -H "x-voicebox-host-token: $t" \
	    -d '{"command":"echo partial-http; sleep 100","timeoutMs":60000}' \
	    http://127.0.0.1:$port/api/environments/ex/exec > http.code &
	curl_pid=$!
	atf_check -s exit:124 -o match:"^partial-ctl\$" -e match:"exec-timeout" \
	    $CTL exec ex timeout 60000 -- sh -c 'echo partial-ctl; sleep 100'
	wait $curl_pid
	atf_check_equal "$(cat http.code)" 504
	atf_check -o match:'"error":"exec-timeout"' \
	    -o match:'"stdout":"partial-http\\n"' cat http.out
}
timeout_at_max_cleanup() { fenced_cleanup; }

atf_test_case output_budget cleanup
output_budget_head() {
	atf_set descr "5 MB of output with the default cap returns exactly 262144 bytes and exec-output-over-budget"
	atf_set require.user root
}
output_budget_body() {
	fenced_vars
	start_with_secrets
	$CTL exec ex -- sh -c 'head -c 5000000 /dev/zero' > out 2> err
	atf_check_equal 125 $?
	atf_check -o inline:"262144\n" sh -c 'wc -c < out'
	atf_check -o match:"exec-output-over-budget" cat err
	atf_check -o inline:"1048576\n" sh -c \
	    "'$BIN/fencectl' -s '$PWD/ctl.sock' exec ex output 1048576 -- head -c 3000000 /dev/zero 2>/dev/null | wc -c"
}
output_budget_cleanup() { fenced_cleanup; }

atf_test_case binary_roundtrip cleanup
binary_roundtrip_head() {
	atf_set descr "binary output comes back byte for byte"
	atf_set require.user root
}
binary_roundtrip_body() {
	fenced_vars
	start_with_secrets
	$CTL exec ex -- sh -c 'head -c 200000 /dev/urandom > blob; sha256sum blob' > sum
	$CTL exec ex -- cat blob > blob.out
	atf_check_equal "$(cut -d' ' -f1 sum)" "$(sha256sum blob.out | cut -d' ' -f1)"
}
binary_roundtrip_cleanup() { fenced_cleanup; }

atf_test_case cwd_refused cleanup
cwd_refused_head() {
	atf_set descr "cwd of .., of a path outside HOME and of a symlink to /etc are refused; a cwd or a program not there is named"
	atf_set require.user root
}
cwd_refused_body() {
	fenced_vars
	start_with_secrets
	atf_check $CTL exec ex -- sh -c 'ln -s /etc etc-link && mkdir -p sub'
	for d in .. /etc /tmp etc-link /home sub/../..; do
		atf_check -s exit:126 -e match:"exec-cwd-outside-home" \
		    $CTL exec ex cwd "$d" -- pwd
	done
	atf_check -o match:"/home/fence-[0-9]+/sub\$" $CTL exec ex cwd sub -- pwd
	atf_check -s exit:126 -e match:"exec-cwd-invalid" \
	    -e match:"directory not/there: No such file or directory" \
	    $CTL exec ex cwd not/there -- pwd
	atf_check -s not-exit:0 -e match:"exec-failed" \
	    -e match:"cannot execute no-such-program: No such file or directory \(not in PATH\)" \
	    $CTL exec ex -- no-such-program
	atf_check -s not-exit:0 -e match:"cannot execute sub/none: No such file" \
	    $CTL exec ex -- sub/none
}
cwd_refused_cleanup() { fenced_cleanup; }

atf_test_case environment cleanup
environment_head() {
	atf_set descr "a command's environment is exactly the documented list; the daemon's does not pass"
	atf_set require.user root
}
environment_body() {
	fenced_vars
	start_with_secrets
	$CTL exec ex -- /usr/bin/env > env.out || atf_fail "exec env"
	atf_check -o inline:"GIT_CONFIG_GLOBAL HOME LANG LOGNAME PATH SHELL TERM TMPDIR USER VOICEBOX_FENCE XDG_CONFIG_HOME " \
	    sh -c "cut -d= -f1 env.out | sort | tr '\n' ' '"
	atf_check -o match:"^VOICEBOX_FENCE=ex\$" cat env.out
	atf_check -o match:"^GIT_CONFIG_GLOBAL=/home/fence-[0-9]+/.gitconfig\$" cat env.out
	atf_check -s exit:1 -o empty grep -E "sk-secret|GIT_DIR|GIT_WORK_TREE" env.out
}
environment_cleanup() { fenced_cleanup; }

atf_test_case identity cleanup
identity_head() {
	atf_set descr "a fence root boots runs as a uid from fence uids and is called after it: USER, LOGNAME fence-UID, HOME /home/fence-UID, the uid's own"
	atf_set require.user root
}
identity_body() {
	fenced_vars
	start_with_secrets
	uid=$($CTL exec ex -- id -u) || atf_fail "exec id"
	[ "$uid" -ne 0 ] || atf_fail "a fence runs as root"
	atf_check -o inline:"fence-$uid fence-$uid /home/fence-$uid\n" \
	    $CTL exec ex -- sh -c 'echo $USER $LOGNAME $HOME'
	atf_check -o inline:"/home/fence-$uid\n" $CTL exec ex -- pwd
	atf_check -o inline:"$uid 700\n" $CTL exec ex -- sh -c 'stat -c "%u %a" "$HOME"'
	atf_check -o inline:"$uid\n" stat -c %u "$(fenced_homes)/ex"
}
identity_cleanup() { fenced_cleanup; }

atf_test_case mount_table cleanup
mount_table_head() {
	atf_set descr "a fence's /run/fenced/bin holds only fence-agent and fence-probe, and its mount table names no host path of the daemon's folder"
	atf_set require.user root
}
mount_table_body() {
	fenced_vars
	start_with_secrets
	atf_check -o inline:"fence-agent\nfence-probe\n" \
	    $CTL exec ex -- ls /run/fenced/bin
	$CTL exec ex -- cat /proc/self/mountinfo > mi || atf_fail "exec"
	atf_check -o match:" / /run/fenced/bin ro,nosuid,nodev.* - tmpfs fenced-bin " \
	    cat mi
	d=$(cd "$BIN" && pwd -P)
	atf_check -s exit:1 -o empty grep -F -e "$d" -e "$BIN" mi
	atf_check -s not-exit:0 -e match:"Read-only file system" $CTL exec ex -- sh -c \
	    'echo x > /run/fenced/bin/fence-agent'
}
mount_table_cleanup() { fenced_cleanup; }

atf_test_case fds cleanup
fds_head() {
	atf_set descr "a command sees only descriptors 0, 1 and 2"
	atf_set require.user root
}
fds_body() {
	fenced_vars
	start_with_secrets
	# ls itself holds one more, for /proc/self/fd.
	atf_check -o inline:"0 1 2 3 " $CTL exec ex -- sh -c \
	    'ls /proc/self/fd | sort -n | tr "\n" " "'
}
fds_cleanup() { fenced_cleanup; }

atf_test_case signals cleanup
signals_head() {
	atf_set descr "a command starts with no signal blocked, ignored or caught, whether its supervisor was the spare made ahead or one forked beside a running job"
	atf_set require.user root
}
signals_body() {
	fenced_vars
	start_with_secrets
	want="SigBlk:	0000000000000000
SigIgn:	0000000000000000
SigCgt:	0000000000000000
"
	# cat, which sets no handler of its own (grep catches SIGSEGV).
	# The first takes the spare (made while the fence was idle).
	$CTL exec ex -- cat /proc/self/status > st1 || atf_fail "exec"
	atf_check -o inline:"$want" grep -E '^Sig(Blk|Ign|Cgt):' st1
	# One runs: the next forks a supervisor of its own.
	$CTL exec ex -- sleep 3 > /dev/null &
	bg=$!
	sleep 0.5
	$CTL exec ex -- cat /proc/self/status > st2 || atf_fail "exec"
	atf_check -o inline:"$want" grep -E '^Sig(Blk|Ign|Cgt):' st2
	wait $bg
}
signals_cleanup() { fenced_cleanup; }

atf_test_case supervisor_reused cleanup
supervisor_reused_head() {
	atf_set descr "a command run by the supervisor of the command before sees nothing of it (descriptors, cwd, environment, umask, signals), and a supervisor its command changed, stopped or killed is never reused"
	atf_set require.user root
}
supervisor_reused_body() {
	fenced_vars
	start_with_secrets
	atf_check $CTL exec ex -- mkdir -p sub
	# The first leaves all it can behind in its own process and a
	# child the supervisor kills; $PPID of a command is its supervisor.
	$CTL exec ex cwd sub -- sh -c 'echo $PPID; umask 077; export LEFT=1;
	    trap "" TERM INT; exec 7> left; (sleep 100 &) ; cd /tmp' \
	    > one || atf_fail "exec one"
	$CTL exec ex -- sh -c 'echo $PPID; pwd; umask; echo "${LEFT-none}";
	    ls /proc/self/fd | sort -n | tr "\n" " "; echo;
	    cat /proc/self/status | grep -E "^Sig(Blk|Ign|Cgt):";
	    for p in /proc/[0-9]*; do
	    [ "$(cat $p/comm 2>/dev/null)" = sleep ] && echo $p; done; true' \
	    > two || atf_fail "exec two"
	[ "$(head -1 one)" = "$(head -1 two)" ] ||
	    atf_fail "not the same supervisor: $(head -1 one), $(head -1 two)"
	atf_check -o match:"^/home/fence-[0-9]+\$" sed -n 2p two
	atf_check -o inline:"0022
none
0 1 2 3 
SigBlk:	0000000000000000
SigIgn:	0000000000000000
SigCgt:	0000000000000000
" sed 1,2d two
	# Changed by its command (limits, priority), stopped or killed by
	# it: the next command runs, under another supervisor, with the
	# agent's limits and priority (a hang would be an exec-timeout).
	for c in 'prlimit --pid $PPID --nofile=64:64' \
	    'renice -n 7 -p $PPID > /dev/null' 'kill -STOP $PPID' \
	    'kill -KILL $PPID'; do
		$CTL exec ex timeout 2000 -- sh -c "echo \$PPID; $c" > a
		$CTL exec ex timeout 5000 -- sh -c 'echo $PPID;
		    grep "^Max open files" /proc/self/limits;
		    cut -d" " -f19 /proc/self/stat' > b ||
		    atf_fail "exec after $c"
		[ "$(head -1 a)" != "$(head -1 b)" ] ||
		    atf_fail "a supervisor was reused after: $c"
		atf_check -s exit:1 -o ignore grep -E " 64 +64 " b
		atf_check -o inline:"0\n" sed -n 3p b
	done
}
supervisor_reused_cleanup() { fenced_cleanup; }

atf_test_case concurrent cleanup
concurrent_head() {
	atf_set descr "50 concurrent execs in one fence all return the right output"
	atf_set require.user root
}
concurrent_body() {
	fenced_vars
	start_with_secrets
	i=0
	# The longest timeout: this is about answers, and in a TCG guest
	# the fiftieth of them can take longer than the default 10 s.
	while [ $i -lt 50 ]; do
		$CTL exec ex timeout 60000 -- sh -c "sleep 0.2; echo out-$i" \
		    > c.$i 2>&1 &
		pids="$pids $!"
		i=$((i + 1))
	done
	# Not a bare wait: the daemon is a child of this shell too.
	for j in $pids; do
		wait $j
	done
	i=0
	while [ $i -lt 50 ]; do
		atf_check_equal "out-$i" "$(cat c.$i)"
		i=$((i + 1))
	done
}
concurrent_cleanup() { fenced_cleanup; }

atf_test_case bearer_hidden cleanup
bearer_hidden_head() {
	atf_set descr "a command cannot ptrace pid 1 or read its memory or environment"
	atf_set require.user root
}
bearer_hidden_body() {
	fenced_vars
	for t in L1 L1.5; do
		[ -f fenced.pid ] || start_with_secrets
		k=peek$(echo $t | tr -d . | tr A-Z a-z)
		$CTL boot $k tier $t > /dev/null || atf_fail "boot $t"
		h="$(fenced_homes)/$k"
		cp "$REGRESS/t_peek" "$h/t_peek"
		chmod 0755 "$h/t_peek"
		$CTL exec $k -- ./t_peek > peek.out || atf_fail "t_peek"
		atf_check -o match:"^ptrace refused E(PERM|ACCES)" cat peek.out
		atf_check -o match:"^seize refused E(PERM|ACCES)" cat peek.out
		atf_check -o match:"^mem refused EACCES" cat peek.out
		atf_check -o match:"^environ refused EACCES" cat peek.out
		atf_check -o match:"^maps refused EACCES" cat peek.out
		atf_check -o match:"^cmdline fence-agent \$" cat peek.out
	done
}
bearer_hidden_cleanup() { fenced_cleanup; }

atf_test_case git cleanup
git_head() {
	atf_set descr "git identity written and read, other settings kept, control characters refused; git init"
	atf_set require.user root
}
git_body() {
	fenced_vars
	[ -x /usr/bin/git ] || atf_skip "git is not installed"
	start_with_secrets
	atf_check $CTL exec ex -- git config --file .gitconfig core.editor vi
	atf_check -o inline:"user.name: Ada\nuser.email: ada@example.org\n" \
	    $CTL git-config ex name Ada email ada@example.org
	atf_check -o inline:"user.name: Ada\nuser.email: ada@example.org\n" \
	    $CTL git-config ex
	atf_check -o inline:"vi\n" $CTL exec ex -- git config --file .gitconfig core.editor
	atf_check -s exit:1 -e match:"git-bad-value" \
	    $CTL git-config ex name "$(printf 'a\nb')"
	atf_check -o inline:"user.name: Ada\nuser.email: ada@example.org\n" \
	    $CTL git-config ex
	atf_check -o ignore -e ignore $CTL git-init ex work/repo
	atf_check $CTL exec ex -- test -d work/repo/.git
	atf_check -s exit:1 -e match:"exec-cwd-outside-home" $CTL git-init ex /etc
}
git_cleanup() { fenced_cleanup; }

atf_test_case other_users cleanup
other_users_head() {
	atf_set descr "a user who does not own a fence cannot see it, run in it or stop it"
	atf_set require.user root
}
other_users_body() {
	fenced_vars
	start_with_secrets
	chmod 0755 "$PWD"
	nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
	s="$PWD/ctl.sock"
	atf_check -s exit:1 -e match:"not-found" $nobody "$BIN/fencectl" \
	    -s "$s" exec ex -- id
	atf_check -s exit:1 -e match:"not-found" $nobody "$BIN/fencectl" \
	    -s "$s" stop ex
	atf_check -s exit:1 -e match:"not-found" $nobody "$BIN/fencectl" \
	    -s "$s" git-config ex name x
	atf_check -s exit:1 -e match:"not-found" $nobody "$BIN/fencectl" \
	    -s "$s" show environment ex
	atf_check -o not-match:"^ex " $nobody "$BIN/fencectl" -s "$s" \
	    show environments
	atf_check -o match:"running" $CTL show environment ex
}
other_users_cleanup() { fenced_cleanup; }

# An L1 fence allows ptrace of its own processes (docs/escape.md): a
# command that calls PTRACE_TRACEME runs on through its signals
# (lib.subr's traceme_check); runsc_test and vm_fence_test run the same
# on their backends.  From L1.5 on the filter refuses ptrace.
atf_test_case ptrace_traceme cleanup
ptrace_traceme_head() {
	atf_set descr "a command that calls PTRACE_TRACEME in an L1 fence runs on when it gets a signal (its supervisor is no tracer), and still dies at its timeout with its tree"
	atf_set require.user root
}
ptrace_traceme_body() {
	fenced_vars
	fenced_start
	$CTL boot t tier L1 > /dev/null || atf_fail "boot"
	traceme_check t
	fenced_stop
}
ptrace_traceme_cleanup() { fenced_cleanup; }

atf_init_test_cases() {
	atf_add_test_case timeout_kills_all
	atf_add_test_case timeout_at_max
	atf_add_test_case output_budget
	atf_add_test_case binary_roundtrip
	atf_add_test_case cwd_refused
	atf_add_test_case environment
	atf_add_test_case identity
	atf_add_test_case mount_table
	atf_add_test_case fds
	atf_add_test_case signals
	atf_add_test_case supervisor_reused
	atf_add_test_case concurrent
	atf_add_test_case bearer_hidden
	atf_add_test_case git
	atf_add_test_case other_users
	atf_add_test_case ptrace_traceme
}
