#! /usr/bin/atf-sh
# A fence is named by its owner and its key (issue 9): two users' keys
# coexist in every table, folder and cgroup and neither reaches the
# other's; the state directory keeps nothing a stopped fence does not
# need; and a daemon's cgroups and probe secrets do not outlive it, nor
# does it ever touch another daemon's.

. "$(atf_get_srcdir)/lib.subr"

# Two users, a control socket they can reach (in /run, ./ctl.sock a
# link to it), and homes of their own (<homes>/%u).
owners_setup() {
	users_add 2 fow
	fenced_run_socket
	# fenced_homes makes the directory once: not inside the pipeline.
	h=$(fenced_homes)
	case "$h" in
	/var/lib/fenced-regress.?*) ;;
	*) atf_fail "no homes directory: '$h'" ;;
	esac
	fenced_conf | sed -e "s|^homes .*|homes \"$h/%u\"|" > fenced.conf
}


# probe_api TOKEN: GET /api/probe's status and body in probe.out.
probe_api() {
	curl -sS -H "x-voicebox-host-token: $1" -w '\n%{http_code}\n' \
	    "http://127.0.0.1:$(fenced_port)/api/probe" > probe.out
}

atf_test_case same_key cleanup
same_key_head() {
	atf_set descr "two users each boot \"default\": both run, each with its own home, cgroup and state; neither can stop, exec in, see or probe the other's; /api/probe answers each about its own"
	atf_set require.user root
	atf_set timeout 120
}
same_key_body() {
	fenced_vars
	owners_setup
	fenced_start
	ua=$(sed -n 1p users.txt)
	ub=$(sed -n 2p users.txt)
	ia=$(id -u "$ua")
	ib=$(id -u "$ub")
	# fencectl as a, as b, as root (word lists, for atf_check too)
	A="$(as_user "$ua") $BIN/fencectl -s $(cat run.sock)"
	B="$(as_user "$ub") $BIN/fencectl -s $(cat run.sock)"
	R="$BIN/fencectl -s $(cat run.sock)"

	atf_check -o match:"^state: *running" $A boot default tier L1
	atf_check -o match:"^state: *running" $B boot default tier L2
	atf_check -o inline:"$ua\n" $A exec default -- id -un
	atf_check -o inline:"$ub\n" $B exec default -- id -un
	# Each home is its own.
	atf_check $A exec default -- sh -c 'echo a > mark'
	atf_check -s exit:1 -e ignore $B exec default -- cat mark
	atf_check $B exec default -- sh -c 'echo b > mark'
	atf_check -o inline:"a\n" $A exec default -- cat mark
	h=$(fenced_homes)
	atf_check -o match:"^home: *$h/$ua/default\$" $A show environment default
	atf_check -o match:"^home: *$h/$ub/default\$" $B show environment default
	atf_check -o inline:"a\n" cat "$h/$ua/default/mark"
	atf_check -o inline:"b\n" cat "$h/$ub/default/mark"
	# Two cgroups, two state folders.
	for c in $(fenced_cgroup_dirs); do
		[ -d "$c/$ia.default" ] || atf_fail "no cgroup $c/$ia.default"
		[ -d "$c/$ib.default" ] || atf_fail "no cgroup $c/$ib.default"
	done
	[ -n "$(fenced_cgroup_dirs)" ] || atf_fail "no cgroup folder"

	# b names a's fence: not-found, as for a fence that does not exist.
	for c in "show environment $ua/default" "show environment $ia/default" \
	    "stop $ua/default" "exec $ua/default -- true" \
	    "probe $ua/default" "git-config $ua/default name x" \
	    "git-init $ua/default"; do
		# shellcheck disable=SC2086
		atf_check -s exit:1 -e match:"not-found" $B $c
	done
	$B show environments > b.list
	atf_check -o inline:"1\n" grep -c '^default ' b.list
	atf_check -o match:"^default +$ub " cat b.list
	# Root sees both, with their owners, and names either.
	$R show environments > all.list
	atf_check -o match:"^default +$ua " -o match:"^default +$ub " \
	    cat all.list
	atf_check -s exit:1 -e match:"not-found" $R show environment \
	    default
	atf_check -o match:"^owner: *$ua, uid $ia" $R show environment \
	    "$ua/default"
	atf_check -o inline:"$ub\n" $R exec "$ib/default" -- id -un

	# Over HTTP, /api/probe is the caller's own default.
	ta=$($A token 2>/dev/null | tail -1)
	tb=$($B token 2>/dev/null | tail -1)
	probe_api "$ta"
	atf_check -o inline:"200\n" tail -1 probe.out
	atf_check -o match:'"level": *"L1"' cat probe.out
	probe_api "$tb"
	atf_check -o inline:"200\n" tail -1 probe.out
	atf_check -o match:'"level": *"L2"' cat probe.out
	# The probes' reports are kept per owner while the fences run.
	[ -f state/envs/$ia/default/probe.json ] || atf_fail "no report of a's"
	[ -f state/envs/$ib/default/probe.json ] || atf_fail "no report of b's"

	# b stops its own: a's runs on.
	atf_check -o match:"^stopped default" $B stop default
	atf_check -o inline:"a\n" $A exec default -- cat mark
	atf_check -o match:"^state: *running" $A show environment \
	    default
	for c in $(fenced_cgroup_dirs); do
		[ -d "$c/$ib.default" ] && atf_fail "b's cgroup left in $c"
		[ -d "$c/$ia.default" ] || atf_fail "a's cgroup gone from $c"
	done
	[ -e state/envs/$ib ] && atf_fail "b's state folder left"
	[ -d state/envs/$ia/default ] || atf_fail "a's state folder gone"
	probe_api "$tb"
	atf_check -o inline:"404\n" tail -1 probe.out
	# Root stops a's by name.
	atf_check -o match:"^stopped $ua/default" $R stop "$ua/default"
	atf_check -o inline:"" ls state/envs
	fenced_stop
}
same_key_cleanup() { fenced_cleanup; }

atf_test_case state_bounded cleanup
state_bounded_head() {
	atf_set descr "booting and stopping many keys leaves no folder per key in the state directory; a root-owned key keeps its uid across stop, boot and restart"
	atf_set require.user root
	atf_set timeout 120
}
state_bounded_body() {
	fenced_vars
	fenced_start
	i=0
	while [ $i -lt 16 ]; do
		$CTL boot "many-$i" tier L1 > /dev/null || atf_fail "boot $i"
		$CTL stop "many-$i" > /dev/null || atf_fail "stop $i"
		i=$((i + 1))
	done
	atf_check -o inline:"" ls -A state/envs
	# One record per root-owned key, each uid its own.
	atf_check -o inline:"16\n" sh -c 'wc -l < state/fence-uids'
	atf_check -o inline:"16\n" sh -c 'cut -d" " -f1 state/fence-uids | sort -u | wc -l'
	atf_check -o inline:"600 0\n" stat -c '%a %u' state/fence-uids
	u5=$(awk '$2 == "many-5" { print $1 }' state/fence-uids)
	[ -n "$u5" ] || atf_fail "no uid for many-5"
	$CTL boot many-5 tier L1 > /dev/null || atf_fail "boot again"
	atf_check -o inline:"$u5\n" $CTL exec many-5 -- id -u
	$CTL stop many-5 > /dev/null
	fenced_stop
	fenced_start
	$CTL boot many-5 tier L1 > /dev/null || atf_fail "boot after restart"
	atf_check -o inline:"$u5\n" $CTL exec many-5 -- id -u
	atf_check_equal "$u5" "$(stat -c %u "$(fenced_homes)/many-5")"
	atf_check -o inline:"16\n" sh -c 'wc -l < state/fence-uids'
	fenced_stop
	atf_check -o inline:"" ls -A state/envs
}
state_bounded_cleanup() { fenced_cleanup; }

atf_test_case uids_exhausted cleanup
uids_exhausted_head() {
	atf_set descr "when fence uids are all taken the boot fails and says why; a key whose home is gone gives its uid back; records of the older layout are kept"
	atf_set require.user root
	atf_set timeout 120
}
uids_exhausted_body() {
	fenced_vars
	# Two uids of the test's own, and a record in the older layout.
	lo=$((62000 + ($$ % 900) * 3))
	fenced_conf > fenced.conf
	echo "fence uids $lo-$((lo + 1))" >> fenced.conf
	mkdir -p state/envs/legacy state/envs/oldreport
	echo "$((lo + 1))" > state/envs/legacy/uid
	echo '{}' > state/envs/legacy/probe.json
	echo '{}' > state/envs/oldreport/probe.json
	fenced_start
	# A report of the older layout is not needed: gone at start.
	[ -e state/envs/oldreport ] && atf_fail "the older report was left"
	atf_check -o match:"^state: *running" $CTL boot legacy tier L1
	atf_check -o inline:"$((lo + 1))\n" $CTL exec legacy -- id -u
	[ -e state/envs/legacy ] && atf_fail "the older record was left"
	atf_check -o match:"^$((lo + 1)) legacy " cat state/fence-uids
	atf_check -o match:"^state: *running" $CTL boot first tier L1
	atf_check -o inline:"$lo\n" $CTL exec first -- id -u
	$CTL stop first > /dev/null
	atf_check -s exit:1 -e match:"no-uid.*every uid of fence uids $lo-$((lo + 1))" \
	    $CTL boot third tier L1
	atf_check -s exit:1 -e match:"not-found" $CTL show environment third
	# first's home goes: its uid is free again, and third gets it.
	rm -rf "$(fenced_homes)/first"
	atf_check -o match:"^state: *running" $CTL boot third tier L1
	atf_check -o inline:"$lo\n" $CTL exec third -- id -u
	atf_check -o not-match:" first " cat state/fence-uids
	# A reclaim rewrites the file: no uid twice, and it loads again.
	atf_check -o empty sh -c 'cut -d" " -f1 state/fence-uids | sort | uniq -d'
	$CTL stop third > /dev/null
	fenced_stop
	fenced_start
	atf_check -o match:"^state: *running" $CTL boot third tier L1
	atf_check -o inline:"$lo\n" $CTL exec third -- id -u
	fenced_stop
}
uids_exhausted_cleanup() { fenced_cleanup; }

atf_test_case uids_torn cleanup
uids_torn_head() {
	atf_set descr "a new key's uid is appended to the records; a last record cut short by a crash is dropped, said, and the file rewritten whole"
	atf_set require.user root
	atf_set timeout 60
}
uids_torn_body() {
	fenced_vars
	fenced_start
	$CTL boot one tier L1 > /dev/null || atf_fail "boot one"
	$CTL boot two tier L1 > /dev/null || atf_fail "boot two"
	u1=$(awk '$2 == "one" { print $1 }' state/fence-uids)
	u2=$(awk '$2 == "two" { print $1 }' state/fence-uids)
	[ -n "$u1" ] && [ -n "$u2" ] && [ "$u1" != "$u2" ] ||
	    atf_fail "records: $(cat state/fence-uids)"
	# Appended: two lines, in boot order.
	atf_check -o inline:"one\ntwo\n" cut -d" " -f2 state/fence-uids
	$CTL stop one > /dev/null
	$CTL stop two > /dev/null
	fenced_stop
	# A crash while a third key's uid was written: half a line.
	printf '%s' "$((u2 + 1)) thr" >> state/fence-uids
	fenced_start
	$CTL boot one tier L1 > /dev/null || atf_fail "boot after the crash"
	atf_check -o inline:"$u1\n" $CTL exec one -- id -u
	atf_check -o match:"line 3 was cut short" cat fenced.log
	atf_check -o inline:"one\ntwo\n" cut -d" " -f2 state/fence-uids
	atf_check -o inline:"600 0\n" stat -c '%a %u' state/fence-uids
	$CTL boot three tier L1 > /dev/null || atf_fail "boot three"
	atf_check -o inline:"one\ntwo\nthree\n" cut -d" " -f2 state/fence-uids
	fenced_stop
}
uids_torn_cleanup() { fenced_cleanup; }


# The daemon's cgroup folders, found from where the fence KEY's pid 1
# is (fencectl args after the key): the parent of each of its cgroups.
fence_daemon_dirs() {
	_k=$1
	shift
	_p=$("$@" show environment "$_k" | awk '$1 == "pid:" { print $2 }')
	[ -n "$_p" ] || return 0
	_v2=0
	[ -f /sys/fs/cgroup/cgroup.controllers ] && _v2=1
	awk -F: -v v2=$_v2 '{ n = split($2, a, ",");
	    for (i = 1; i <= n; i++)
		if (a[i] == "memory" || a[i] == "pids" || a[i] == "cpu")
		    print a[i] ":" $3
	    if (v2 && $1 == "0" && $2 == "") print ":" $3 }' /proc/$_p/cgroup |
	while IFS=: read -r _c _g; do
		_d=$(dirname "$_g")
		if [ -n "$_c" ]; then
			echo "/sys/fs/cgroup/$_c$_d"
		else
			echo "/sys/fs/cgroup$_d"
		fi
	done | sort -u
}

wait_gone() {
	i=0
	while [ -d /proc/$1 ] && [ $i -lt $(($2 * 20)) ]; do
		sleep 0.05
		i=$((i + 1))
	done
	[ ! -d /proc/$1 ]
}

atf_test_case fencer_killed cleanup
fencer_killed_head() {
	atf_set descr "kill -9 of the fencer in the middle of a probe: once the daemon has exited, none of its cgroups, no probe secret and no fence's state folder remain"
	atf_set require.user root
	atf_set timeout 60
}
fencer_killed_body() {
	fenced_vars
	fenced_start
	$CTL boot k tier L1.5 > /dev/null || atf_fail "boot"
	cgs=$(fence_daemon_dirs k $CTL)
	[ -n "$cgs" ] || atf_fail "no cgroup folder of the daemon"
	# A probe held still, so that its secret is there for sure: the
	# prober, stopped, never gives the verdict that ends it.
	prober=$(fenced_pid prober)
	fencer=$(fenced_pid fencer)
	kill -STOP "$prober"
	$CTL probe k > probe.out 2>&1 &
	i=0
	while ! ls state/probe-secret.* > /dev/null 2>&1 && [ $i -lt 200 ]; do
		sleep 0.02
		i=$((i + 1))
	done
	ls state/probe-secret.* > /dev/null 2>&1 || atf_fail "no probe secret"
	kill -9 "$fencer"
	fenced_wait_exit 10 || atf_fail "the daemon did not exit"
	atf_check_equal "$FENCED_STATUS" 1
	for c in $cgs; do
		[ -d "$c" ] && atf_fail "$c left: $(ls "$c" | tr '\n' ' ')"
	done
	ls state/probe-secret.* > /dev/null 2>&1 && \
	    atf_fail "probe secret left: $(ls state)"
	atf_check -o inline:"" ls -A state/envs
	atf_check -o inline:"" ls -A state/daemons
	wait_gone "$prober" 3 || atf_fail "the prober survived"
}
fencer_killed_cleanup() { fenced_cleanup; }

atf_test_case one_placement cleanup
one_placement_head() {
	atf_set descr "the daemon puts its fences' cgroups where the regress suite's t_fence -P says for the daemon's folder: one placement, cg_parents(), for both"
	atf_set require.user root
	atf_set timeout 60
}
one_placement_body() {
	fenced_vars
	fenced_start
	$CTL boot pl tier L1.5 > /dev/null || atf_fail "boot"
	got=$(fence_daemon_dirs pl $CTL | sort -u)
	[ -n "$got" ] || atf_fail "no cgroup folder of the daemon"
	want=$("$REGRESS/t_fence" -P -C "fenced.$FENCED_ID" | sort -u)
	[ -n "$want" ] || atf_fail "t_fence -P said nothing"
	atf_check_equal "$got" "$want"
	for d in $want; do
		[ -d "$d/$(id -u).pl" ] || atf_fail "no $d/$(id -u).pl"
	done
}
one_placement_cleanup() { fenced_cleanup; }

atf_test_case sweep cleanup
sweep_head() {
	atf_set descr "a folder of a dead daemon of this state directory is swept at start, whatever process has its pid now; another daemon's, running or not provably dead, is never touched"
	atf_set require.user root
	atf_set timeout 120
}
sweep_body() {
	fenced_vars
	# Another daemon beside ours, with a fence, in a state of its own.
	mkdir other
	(cd other && fenced_vars && fenced_start &&
	    $CTL boot o1 tier L1 > /dev/null) ||
	    atf_fail "the other daemon"
	oid=$(cat other/fenced.id)
	ocg=$(fence_daemon_dirs o1 "$BIN/fencectl" -s "$PWD/other/ctl.sock")
	[ -n "$ocg" ] || atf_fail "no folder of the other daemon"

	# A dead daemon of our state: its lock file names a pid that lives
	# (ours), its folder holds a cgroup with a process in it.
	dead=$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
	echo $dead > dead.id
	mkdir -p state/daemons
	echo $$ > state/daemons/$dead
	sleep 300 &
	victim=$!
	echo $victim > victim.pid
	for b in $(cg_bases); do
		mkdir -p "$b/fenced.$dead/0.stale" || atf_fail "mkdir in $b"
		echo "$victim" > "$b/fenced.$dead/0.stale/cgroup.procs"
	done
	# One we cannot prove is ours: no lock file in our state.
	alien=$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
	for b in $(cg_bases); do
		mkdir -p "$b/fenced.$alien" || atf_fail "mkdir in $b"
	done
	echo $alien > alien.id

	fenced_start
	for b in $(cg_bases); do
		[ -d "$b/fenced.$dead" ] && atf_fail "$b/fenced.$dead not swept"
		[ -d "$b/fenced.$alien" ] || atf_fail "$b/fenced.$alien touched"
	done
	[ -e state/daemons/$dead ] && atf_fail "the dead daemon's lock stays"
	wait_gone $victim 3 || atf_fail "the dead daemon's process lives"
	# The other daemon's folder, fence and lock are as they were.
	for c in $ocg; do
		[ -d "$c/0.o1" ] || atf_fail "the other daemon's $c/0.o1 touched"
	done
	atf_check -o match:"^state: *running" \
	    "$BIN/fencectl" -s "$PWD/other/ctl.sock" show environment o1
	atf_check -o inline:"hi\n" \
	    "$BIN/fencectl" -s "$PWD/other/ctl.sock" exec o1 -- echo hi
	[ -n "$oid" ] && [ -f "other/state/daemons/$oid" ] ||
	    atf_fail "the other's lock went"
	fenced_stop

	# A second daemon on our state while one runs: refused, no harm.
	fenced_start
	atf_check -s exit:1 -e match:"in use by another fenced" \
	    "$BIN/fenced" -d -f fenced.conf
	atf_check -o match:"^processes:" $CTL show stats
	for c in $(fenced_cgroup_dirs); do
		[ -d "$c" ] || atf_fail "$c went"
	done
	fenced_stop
	(cd other && fenced_vars && FENCED_PID=$(cat fenced.pid) &&
	    kill -TERM $FENCED_PID)
}
sweep_cleanup() {
	(cd other 2>/dev/null && fenced_vars && fenced_cleanup)
	fenced_cleanup
	v=$(cat victim.pid 2>/dev/null)
	[ -n "$v" ] && kill -9 "$v" 2>/dev/null
	for id in $(cat dead.id alien.id 2>/dev/null); do
		fenced_cgroup_rmdirs "$id"
	done
	true
}

atf_test_case owner_name cleanup
owner_name_head() {
	atf_set descr "a fence's state names its owner as the host did at boot: ownerName root for root's, the test user's name for theirs (over HTTP, show environment and the listing), the old name still after the user is renamed and the new one at the next boot; a uid with no passwd entry boots nothing"
	atf_set require.user root
	atf_set timeout 120
}
owner_name_body() {
	fenced_vars
	owners_setup
	fenced_start
	ua=$(sed -n 1p users.txt)
	ia=$(id -u "$ua")
	A="$(as_user "$ua") $BIN/fencectl -s $(cat run.sock)"
	R="$BIN/fencectl -s $(cat run.sock)"
	atf_check -o ignore $R boot rn tier L1
	atf_check -o ignore $A boot an tier L1
	tr=$($R token 2>/dev/null | tail -1)
	ta=$($A token 2>/dev/null | tail -1)
	[ -n "$tr" ] && [ -n "$ta" ] || atf_fail "no tokens"
	call "$tr" GET /api/environments/rn
	expect 200 '"owner": *0[,}]' '"ownerName": *"root"'
	call "$ta" GET /api/environments/an
	expect 200 "\"owner\": *$ia[,}]" "\"ownerName\": *\"$ua\""
	call "$ta" GET /api/environments
	expect 200 "\"ownerName\": *\"$ua\""
	atf_check -o match:"^owner: *$ua, uid $ia " $A show environment an
	atf_check -o match:"^owner: *root, uid 0 " $R show environment rn

	# Renamed on the host: the fence keeps the name it booted with.
	nu="${ua}r"
	usermod -l "$nu" "$ua" || atf_fail "usermod -l $nu $ua"
	sed -i "s/^$ua\$/$nu/" users.txt
	call "$ta" GET /api/environments/an
	expect 200 "\"ownerName\": *\"$ua\""
	atf_check -o ignore $A boot an2 tier L1
	call "$ta" GET /api/environments/an2
	expect 200 "\"ownerName\": *\"$nu\""

	# A uid without a passwd entry owns no fence: its boot is refused.
	nobody=$((61000 + $$ % 3000))
	while getent passwd "$nobody" > /dev/null; do
		nobody=$((nobody + 1))
	done
	atf_check -s exit:1 -e match:"unknown-user|no passwd entry" \
	    setpriv --reuid="$nobody" --regid=65534 --clear-groups \
	    $BIN/fencectl -s "$(cat run.sock)" boot nn tier L1
	atf_check -o not-match:'^nn ' $R show environments
}
owner_name_cleanup() { fenced_cleanup; }

atf_init_test_cases() {
	atf_add_test_case owner_name
	atf_add_test_case same_key
	atf_add_test_case state_bounded
	atf_add_test_case uids_exhausted
	atf_add_test_case uids_torn
	atf_add_test_case fencer_killed
	atf_add_test_case sweep
	atf_add_test_case one_placement
}
