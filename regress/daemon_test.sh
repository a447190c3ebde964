#! /usr/bin/atf-sh
# The daemon as a whole: its processes and their confinement, supervision,
# the control socket under abuse, signals, and the manuals.

. "$(atf_get_srcdir)/lib.subr"

atf_test_case processes cleanup
processes_head() {
	atf_set descr "five processes; broker, prober and egress proxy unprivileged, chrooted, filtered; fencer with only its capabilities"
	atf_set require.user root
}
processes_body() {
	fenced_vars
	fenced_start
	uid=$(id -u _fenced)
	for p in broker prober egress; do
		pid=$(fenced_pid $p)
		atf_check_equal "2" "$(status_field $pid Seccomp)"
		atf_check_equal "1" "$(status_field $pid NoNewPrivs)"
		for c in CapEff CapPrm CapBnd CapAmb CapInh; do
			atf_check_equal "0000000000000000" "$(status_field $pid $c)"
		done
		atf_check_equal "$uid $uid $uid $uid" "$(status_field $pid Uid | tr "\t" " ")"
		atf_check -o inline:"$PWD/state/empty\n" readlink /proc/$pid/root
		atf_check -o match:"fenced: $p" tr '\0' ' ' < /proc/$pid/cmdline
	done
	pid=$(fenced_pid fencer)
	atf_check_equal "2" "$(status_field $pid Seccomp)"
	atf_check_equal "1" "$(status_field $pid NoNewPrivs)"
	# docs/lockdown.md: the fencer's capabilities.
	atf_check_equal "$FENCER_CAPS" "$(status_field $pid CapEff)"
	atf_check_equal "$FENCER_CAPS" "$(status_field $pid CapPrm)"
	atf_check_equal "$FENCER_CAPS" "$(status_field $pid CapBnd)"
	atf_check_equal "0000000000000000" "$(status_field $pid CapAmb)"
	atf_check -o inline:"/\n" readlink /proc/$pid/root
	atf_check -o match:"fenced: fencer" tr '\0' ' ' < /proc/$pid/cmdline
	# Exactly four children of the parent.
	atf_check -o inline:"4\n" sh -c "pgrep -P $(fenced_pid parent) | wc -l"
	fenced_stop
}
processes_cleanup() { fenced_cleanup; }

# The inodes of the sockets process $1 holds, one a line.
socket_inodes() {
	ls -l /proc/$1/fd 2>/dev/null | \
	    sed -n 's/.* -> socket:\[\([0-9]*\)\]$/\1/p'
}

# The daemon's processes that process $1 (a name) has a channel to, by
# name, sorted: each of its unix sockets whose other end (ss's peer
# inode) another process of the daemon holds.
channel_peers() {
	for _q in parent broker fencer prober egress; do
		echo "$_q $(fenced_pid $_q)"
	done > pids.txt
	_self=$(awk -v p="$1" '$1 == p { print $2 }' pids.txt)
	ss -xaH > ss.txt || atf_fail "ss -x failed"
	socket_inodes $_self | while read _i; do
		awk -v i="$_i" '$6 == i && $8 != 0 { print $8 }' ss.txt
	done | sort -u > peers.txt
	while read _q _pid; do
		[ "$_q" != "$1" ] || continue
		socket_inodes $_pid | grep -qxFf peers.txt && echo $_q
	done < pids.txt | sort | tr '\n' ' '
}

atf_test_case channels cleanup
channels_head() {
	atf_set descr "a channel only between declared peers: none between broker and prober, the egress proxy only with broker and parent"
	atf_set require.user root
	atf_set require.progs ss
}
channels_body() {
	fenced_vars
	fenced_start
	atf_check_equal "egress fencer parent " "$(channel_peers broker)"
	atf_check_equal "broker parent prober " "$(channel_peers fencer)"
	atf_check_equal "fencer parent " "$(channel_peers prober)"
	atf_check_equal "broker parent " "$(channel_peers egress)"
	atf_check_equal "broker egress fencer prober " "$(channel_peers parent)"
	# The prober's sockets: its parent's and its fencer's, nothing else.
	atf_check -o inline:"2\n" sh -c \
	    "ls -l /proc/$(fenced_pid prober)/fd | grep -c socket:"
	# The proxy's: its parent's and its broker's, before any fence.
	atf_check -o inline:"2\n" sh -c \
	    "ls -l /proc/$(fenced_pid egress)/fd | grep -c socket:"
	fenced_stop
}
channels_cleanup() { fenced_cleanup; }

child_death_check() {
	fenced_start
	all=$(fenced_pids)
	victim=$(fenced_pid $1)
	kill -9 $victim
	fenced_wait_exit 1 || atf_fail "daemon still running 1 s after $1 was killed"
	atf_check_equal "$FENCED_STATUS" 1
	for p in $all; do
		[ ! -d /proc/$p ] || atf_fail "process $p left behind"
	done
	[ ! -S "$PWD/ctl.sock" ] || atf_fail "control socket left behind"
	atf_check -o match:"$1 \\(pid $victim\\) terminated by signal 9" \
	    cat fenced.log
}

for c in broker fencer prober egress; do
	eval "atf_test_case kill_$c cleanup
	kill_${c}_head() {
		atf_set descr 'SIGKILL of the $c takes the daemon down in order, non-zero, within a second'
		atf_set require.user root
	}
	kill_${c}_body() { fenced_vars; child_death_check $c; }
	kill_${c}_cleanup() { fenced_cleanup; }"
done

atf_test_case forbidden_syscall cleanup
forbidden_syscall_head() {
	atf_set descr "a syscall outside the broker's allowlist kills the broker, not merely logs"
	atf_set require.user root
}
forbidden_syscall_body() {
	fenced_vars
	FENCED_BIN=$HOOKS/fenced fenced_start
	broker=$(fenced_pid broker)
	atf_check -o ignore "$REGRESS/t_ctlsend" "$PWD/ctl.sock" testsyscall
	fenced_wait_exit 2 || atf_fail "daemon survived the broker's death"
	atf_check -o match:"broker \\(pid $broker\\) terminated by signal 31" \
	    cat fenced.log
	atf_check_equal "$FENCED_STATUS" 1
}
forbidden_syscall_cleanup() { fenced_cleanup; }

atf_test_case control_abuse cleanup
control_abuse_head() {
	atf_set descr "garbage, oversized and truncated control messages are dropped; the daemon keeps serving"
	atf_set require.user root
}
control_abuse_body() {
	fenced_vars
	fenced_start
	before=$(fenced_pids)
	s="$PWD/ctl.sock"
	atf_check -o inline:"closed\n" "$REGRESS/t_ctlsend" "$s" garbage 100
	atf_check -o inline:"closed\n" "$REGRESS/t_ctlsend" "$s" garbage 70000
	atf_check -o inline:"closed\n" "$REGRESS/t_ctlsend" "$s" oversized
	atf_check -o inline:"closed\n" "$REGRESS/t_ctlsend" "$s" undersized
	atf_check -o inline:"closed\n" "$REGRESS/t_ctlsend" "$s" truncated
	atf_check -o inline:"closed\n" "$REGRESS/t_ctlsend" "$s" midclose
	atf_check -o inline:"closed\n" "$REGRESS/t_ctlsend" "$s" badpayload
	atf_check -o inline:"closed\n" "$REGRESS/t_ctlsend" "$s" badpad
	atf_check -o inline:"closed\n" "$REGRESS/t_ctlsend" "$s" unknown
	# A release build does not know the test hook: just a bad request.
	atf_check -o inline:"closed\n" "$REGRESS/t_ctlsend" "$s" testsyscall
	# A descriptor nobody asked for is closed, the request answered.
	atf_check -o inline:"reply IMSG_CTL_STATS\nreply IMSG_CTL_END\n" \
	    "$REGRESS/t_ctlsend" "$s" withfd
	atf_check -o inline:"flooded 300\n" "$REGRESS/t_ctlsend" "$s" flood 300
	atf_check -o match:"^control: .* [1-9][0-9]* errors" \
	    "$BIN/fencectl" -s "$s" show stats
	atf_check_equal "$before" "$(fenced_pids)"
	# The broker has not leaked descriptors for the dropped clients.
	atf_check -o match:"^control: .*\\(1 open\\)" \
	    "$BIN/fencectl" -s "$s" show stats
	fenced_stop
}
control_abuse_cleanup() { fenced_cleanup; }

atf_test_case control_idle cleanup
control_idle_head() {
	atf_set descr "a client that holds a control connection open and says nothing does not block others"
	atf_set require.user root
}
control_idle_body() {
	fenced_vars
	fenced_start
	"$REGRESS/t_ctlsend" "$PWD/ctl.sock" idle 20 >/dev/null 2>&1 &
	idler=$!
	sleep 0.2
	atf_check -o match:"^processes:" "$BIN/fencectl" -s "$PWD/ctl.sock" show stats
	kill $idler 2>/dev/null
	fenced_stop
}
control_idle_cleanup() { fenced_cleanup; }

atf_test_case control_permissions cleanup
control_permissions_head() {
	atf_set descr "the socket is 0666; anyone may read stats, only root and the admin group change the daemon"
	atf_set require.user root
}
control_permissions_body() {
	fenced_vars
	fenced_start
	s="$PWD/ctl.sock"
	atf_check -o inline:"666\n" stat -c %a "$s"
	chmod 0755 "$PWD"
	atf_check -o match:"^processes:" \
	    setpriv --reuid=65534 --regid=65534 --clear-groups \
	    "$BIN/fencectl" -s "$s" show stats
	atf_check -s exit:1 -e match:"not-permitted" \
	    setpriv --reuid=65534 --regid=65534 --clear-groups \
	    "$BIN/fencectl" -s "$s" log verbose
	atf_check -s exit:1 -e match:"not-permitted" \
	    setpriv --reuid=65534 --regid=65534 --clear-groups \
	    "$BIN/fencectl" -s "$s" reload
	# fenced_start runs the daemon with -v.
	atf_check -o match:"^log: verbose" "$BIN/fencectl" -s "$s" show stats
	atf_check "$BIN/fencectl" -s "$s" log brief
	atf_check -o match:"^log: brief" "$BIN/fencectl" -s "$s" show stats
	atf_check "$BIN/fencectl" -s "$s" log verbose
	atf_check -o match:"^log: verbose" "$BIN/fencectl" -s "$s" show stats
	fenced_stop
}
control_permissions_cleanup() { fenced_cleanup; }

atf_test_case signals cleanup
signals_head() {
	atf_set descr "SIGHUP and fencectl reload reload; SIGTERM shuts down in order and exits 0 leaving nothing"
	atf_set require.user root
}
signals_body() {
	fenced_vars
	fenced_start
	all=$(fenced_pids)
	kill -HUP $FENCED_PID
	sleep 0.3
	atf_check -o match:"^processes:" "$BIN/fencectl" -s "$PWD/ctl.sock" show stats
	atf_check "$BIN/fencectl" -s "$PWD/ctl.sock" reload
	sleep 0.3
	atf_check -o match:"configuration reloaded" cat fenced.log
	atf_check_equal "$all" "$(fenced_pids)"
	# A broken file on reload changes nothing.
	echo "bogus keyword" >> fenced.conf
	kill -HUP $FENCED_PID
	sleep 0.3
	atf_check -o match:"not valid, configuration unchanged" cat fenced.log
	atf_check_equal "$all" "$(fenced_pids)"
	kill -TERM $FENCED_PID
	fenced_wait_exit 3 || atf_fail "no exit after SIGTERM"
	atf_check_equal "$FENCED_STATUS" 0
	for p in $all; do
		[ ! -d /proc/$p ] || atf_fail "process $p left behind"
	done
	[ ! -S "$PWD/ctl.sock" ] || atf_fail "control socket left behind"
}
signals_cleanup() { fenced_cleanup; }

atf_test_case reload_verdict cleanup
reload_verdict_head() {
	atf_set descr "fencectl reload of a file that is not valid exits 1 and says why (issue 28), changing nothing; a valid one exits 0; one over the parent's rate says busy instead of hanging or claiming success"
	atf_set require.user root
}
reload_verdict_body() {
	fenced_vars
	fenced_start
	all=$(fenced_pids)
	cp fenced.conf good.conf
	atf_check "$BIN/fencectl" -s "$PWD/ctl.sock" reload
	# A keyword that is none: the file and line, as the log has them.
	echo "bogus keyword" >> fenced.conf
	atf_check -s exit:1 -e match:"^fencectl: config-invalid: .*fenced.conf not valid, configuration unchanged: .*fenced.conf:[0-9]+: unknown keyword \"bogus\"" \
	    "$BIN/fencectl" -s "$PWD/ctl.sock" reload
	# Parsed, but naming a user this host does not have.
	sed "s/^user .*/user \"nouser$$\"/" good.conf > fenced.conf
	atf_check -s exit:1 -e match:"^fencectl: config-invalid: configuration not valid, unchanged: user nouser$$ does not exist" \
	    "$BIN/fencectl" -s "$PWD/ctl.sock" reload
	# Nothing changed: same processes, still serving.
	atf_check_equal "$all" "$(fenced_pids)"
	atf_check -o match:"^processes:" "$BIN/fencectl" -s "$PWD/ctl.sock" \
	    show stats
	# Five reloads in ten seconds are the parent's rate: one over it
	# is answered, busy, not dropped; every one before it succeeds.
	cp good.conf fenced.conf
	i=0
	while [ $i -lt 30 ] &&
	    "$BIN/fencectl" -s "$PWD/ctl.sock" reload 2> reload.err; do
		i=$((i + 1))
	done
	atf_check -o match:"^fencectl: busy: reload asked too often" \
	    cat reload.err
	atf_check_equal "$all" "$(fenced_pids)"
	fenced_stop
}
reload_verdict_cleanup() { fenced_cleanup; }

atf_test_case socket_in_use cleanup
socket_in_use_head() {
	atf_set descr "a second daemon on a live control socket refuses to start"
	atf_set require.user root
}
socket_in_use_body() {
	fenced_vars
	fenced_start
	atf_check -s exit:1 -e match:"in use by another fenced" \
	    "$BIN/fenced" -d -f fenced.conf
	atf_check -o match:"^processes:" "$BIN/fencectl" -s "$PWD/ctl.sock" show stats
	fenced_stop
}
socket_in_use_cleanup() { fenced_cleanup; }

atf_test_case uids_claimed cleanup
uids_claimed_head() {
	atf_set descr "a daemon refuses fence uids another live daemon claimed, naming it; a dead daemon's claim goes; a local user can neither read nor forge claims"
	atf_set require.user root
	atf_set timeout 120
}
uids_claimed_body() {
	fenced_vars
	fenced_start
	a=$(cat fenced.id)
	range=$(fenced_uids)
	lo=${range%-*}
	claim=/run/fenced-uids/$range.$a
	[ -f "$claim" ] || atf_fail "no claim $claim: $(ls /run/fenced-uids)"
	atf_check -o inline:"0 700\n" stat -c '%u %a' /run/fenced-uids
	# A second daemon, its own state, socket and port; A's uids overlap.
	mkdir b
	(cd b && fenced_conf > fenced.conf &&
	    echo "fence uids $((lo + 10))-$((lo + 100))" >> fenced.conf)
	atf_check -s exit:1 -e match:"fence uids $((lo + 10))-$((lo + 100)) overlap $range of another fenced \(daemon $a, state $PWD/state\)" \
	    timeout 20 "$BIN/fenced" -d -f b/fenced.conf
	# Its own range: it runs beside A.
	(cd b && fenced_conf > fenced.conf)
	(cd b && fenced_start && fenced_stop) || atf_fail "b did not run"
	# A second local user can neither look nor forge a claim.
	users_add 1 fuc
	u=$(sed -n 1p users.txt)
	atf_check -s not-exit:0 -e ignore $(as_user "$u") ls /run/fenced-uids
	atf_check -s not-exit:0 -e ignore $(as_user "$u") \
	    touch /run/fenced-uids/1000-99999999.0123456789abcdef
	# A killed: its claim is a dead daemon's, and B may take the range.
	kill -9 $(cat fenced.pid)
	fenced_wait_exit 5
	(cd b && fenced_conf > fenced.conf && echo "fence uids $range" >> \
	    fenced.conf && fenced_start && fenced_stop) ||
	    atf_fail "b did not run after a died"
	[ ! -e "$claim" ] || atf_fail "$claim left"
	[ -z "$(ls /run/fenced-uids | grep "^$range\.")" ] ||
	    atf_fail "a claim of $range left: $(ls /run/fenced-uids)"
}
uids_claimed_cleanup() {
	(cd b 2>/dev/null && fenced_cleanup)
	fenced_cleanup
	users_remove
}

atf_test_case uids_accounts cleanup
uids_accounts_head() {
	atf_set descr "fence uids holding an account's uid or a group's gid are refused at start, by fenced -n and at reload, naming it; a uid an account gets after start is never given to a fence (issue 28)"
	atf_set require.user root
	atf_set timeout 180
}
# A user or group of this run with the given id (removed in cleanup).
uids_user_add() {
	useradd -u "$1" -N -g 65534 -M -d /nonexistent \
	    -s /usr/sbin/nologin "$2" || atf_fail "useradd -u $1 $2"
	echo "$2" >> users.txt
}
uids_group_add() {
	groupadd -g "$1" "$2" || atf_fail "groupadd -g $1 $2"
	echo "$2" >> groups.txt
}
uids_home_uid() {
	stat -c %u "$(fenced_homes)/$1"
}
uids_accounts_body() {
	fenced_vars
	range=$(fenced_uids)
	lo=${range%-*}
	fenced_conf > fenced.conf
	# A user in the range: no start, -n says why.
	uids_user_add $((lo + 7)) fua$$
	msg="fence uids $range hold uid $((lo + 7)) of user fua$$"
	atf_check -s exit:1 -e match:"$msg" "$BIN/fenced" -n -f fenced.conf
	atf_check -s exit:1 -e match:"$msg" \
	    timeout 20 "$BIN/fenced" -d -f fenced.conf
	userdel -f fua$$
	# A group whose gid is in it: a root-owned fence's gid is its uid.
	uids_group_add $((lo + 9)) fga$$
	atf_check -s exit:1 -e match:"fence uids $range hold gid $((lo + 9)) of group fga$$" \
	    "$BIN/fenced" -n -f fenced.conf
	groupdel fga$$
	atf_check -e match:"configuration OK" "$BIN/fenced" -n -f fenced.conf

	fenced_start
	$CTL boot k0 > /dev/null || atf_fail "boot k0"
	atf_check_equal $lo "$(uids_home_uid k0)"
	$CTL stop k0 > /dev/null
	# Accounts made after the start hold the next two uids: skipped.
	uids_user_add $((lo + 1)) fub$$
	uids_group_add $((lo + 2)) fgb$$
	$CTL boot k1 > /dev/null || atf_fail "boot k1"
	atf_check_equal $((lo + 3)) "$(uids_home_uid k1)"
	atf_check -o match:"fence uid $((lo + 1)) skipped: user fub$$ has it" \
	    -o match:"fence uid $((lo + 2)) skipped: group fgb$$ has it" \
	    cat fenced.log
	# k0's recorded uid becomes an account's: k0 is not booted as it.
	uids_user_add $lo fuc$$
	atf_check -s exit:1 -e match:"uid $lo of fence k0 is user fuc$$'s" \
	    $CTL boot k0
	# A reload with the range now overlapping them changes nothing.
	kill -HUP $FENCED_PID
	i=0
	while ! grep -q "reload: configuration unchanged" fenced.log &&
	    [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	atf_check -o match:"fence uids $range hold uid [0-9]+ of user fu[bc]$$" \
	    -o match:"reload: configuration unchanged" \
	    -o not-match:"configuration reloaded" cat fenced.log
	$CTL stop k1 > /dev/null
	fenced_stop
}
uids_accounts_cleanup() {
	fenced_cleanup
	users_remove
	for g in $(cat groups.txt 2>/dev/null); do
		groupdel "$g" 2>/dev/null
	done
}

atf_test_case noaction cleanup
noaction_head() {
	atf_set descr "fenced -n checks a configuration and exits 0 or 1"
}
noaction_cleanup() { fenced_cleanup; }
noaction_body() {
	fenced_vars
	fenced_conf > good.conf
	atf_check -e match:"configuration OK" "$BIN/fenced" -n -f good.conf
	printf 'lifetime 0\n' > bad.conf
	atf_check -s exit:1 -e match:"bad.conf:1:" "$BIN/fenced" -n -f bad.conf
	atf_check -s exit:1 -e ignore "$BIN/fenced" -n -f missing.conf
}

atf_test_case manuals
manuals_head() {
	atf_set descr "every manual passes mandoc -Tlint"
}
manuals_body() {
	fenced_vars
	for m in "$TOPDIR"/man/*.[0-9]; do
		atf_check mandoc -Tlint -Wwarning "$m"
	done
}

atf_test_case chroot_dropped cleanup
chroot_dropped_head() {
	atf_set descr "where runsc cannot run, the fencer drops CAP_SYS_CHROOT (runsc's alone) from every set, and no native fence shows it in its bounding set"
	atf_set require.user root
}
chroot_dropped_body() {
	fenced_vars
	{ fenced_conf; echo 'runsc "/nonexistent/runsc"'; } > fenced.conf
	fenced_start
	pid=$(fenced_pid fencer)
	for c in CapEff CapPrm CapBnd; do
		atf_check_equal "$FENCER_CAPS_NORUNSC" "$(status_field $pid $c)"
	done
	atf_check -o match:"no runsc here: CAP_SYS_CHROOT dropped" cat fenced.log
	atf_check -o ignore $CTL boot k tier L1
	atf_check -o inline:"CapBnd:\t$FENCER_CAPS_NORUNSC\n" \
	    $CTL exec k -- grep CapBnd /proc/self/status
	atf_check -s exit:1 -e match:"runsc.*cannot be run" \
	    $CTL boot g backend runsc
	fenced_stop
}
chroot_dropped_cleanup() { fenced_cleanup; }

atf_init_test_cases() {
	atf_add_test_case processes
	atf_add_test_case chroot_dropped
	atf_add_test_case channels
	atf_add_test_case kill_broker
	atf_add_test_case kill_fencer
	atf_add_test_case kill_prober
	atf_add_test_case kill_egress
	atf_add_test_case forbidden_syscall
	atf_add_test_case control_abuse
	atf_add_test_case control_idle
	atf_add_test_case control_permissions
	atf_add_test_case signals
	atf_add_test_case reload_verdict
	atf_add_test_case socket_in_use
	atf_add_test_case uids_claimed
	atf_add_test_case uids_accounts
	atf_add_test_case noaction
	atf_add_test_case manuals
}
