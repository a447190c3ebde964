#! /usr/bin/atf-sh
# Fences through the daemon, as fencectl drives them: boot, exec, stop,
# lifetimes, failures that leave nothing behind, and a daemon killed
# with SIGKILL taking its fences with it.

. "$(atf_get_srcdir)/lib.subr"

# The host pid of a fence's pid 1, from show environment.
fence_pid() {
	$CTL show environment "$1" | awk '$1 == "pid:" { print $2 }'
}

# Every process whose pid namespace is not ours: what fences left.
fence_procs() {
	self=$(readlink /proc/self/ns/pid)
	for d in /proc/[0-9]*; do
		ns=$(readlink $d/ns/pid 2>/dev/null) || continue
		[ "$ns" = "$self" ] && continue
		# Only fences of this test's daemon: their cgroup says so.
		grep -q "fenced\.$FENCED_ID/" $d/cgroup 2>/dev/null && \
		    echo ${d#/proc/}
	done
}

wait_gone() {
	i=0
	while [ -d /proc/$1 ] && [ $i -lt $(($2 * 20)) ]; do
		sleep 0.05
		i=$((i + 1))
	done
	[ ! -d /proc/$1 ]
}

atf_test_case tiers cleanup
tiers_head() {
	atf_set descr "boot each tier, run a command as the fence's uid, stop; nothing is left but the home"
	atf_set require.user root
}
tiers_body() {
	fenced_vars
	fenced_start
	for t in L1 L1.5 L2; do
		k=t-$(echo $t | tr -d .| tr A-Z a-z)
		atf_check -o match:"^state: *running" $CTL boot $k tier $t
		atf_check -o match:"^tier: *$t\$" $CTL show environment $k
		atf_check -o match:"timings: *namespaces [0-9]+ us" \
		    $CTL show environment $k
		pid=$(fence_pid $k)
		[ -n "$pid" ] && [ -d /proc/$pid ] || atf_fail "no pid 1 for $k"
		# Never host uid 0: a root-owned fence gets one of its own.
		fu=$($CTL exec $k -- /usr/bin/id -u)
		in_fence_uids "$fu" ||
		    atf_fail "$k runs as uid '$fu', not one of $(fenced_uids)"
		atf_check -o inline:"hello\n" $CTL exec $k -- sh -c 'echo hello > f; cat f'
		atf_check -o match:"^stopped $k" $CTL stop $k
		wait_gone $pid 2 || atf_fail "pid 1 of $k still there"
		[ -f "$(fenced_homes)/$k/f" ] || atf_fail "home of $k lost its file"
	done
	atf_check -o match:"fences: 0 running" $CTL show stats
	atf_check_equal "" "$(fence_procs)"
	ls $(fenced_cgroup_dirs) 2>/dev/null | \
	    grep -q '^0\.t-' && atf_fail "a fence's cgroup was left behind"
	fenced_stop
}
tiers_cleanup() { fenced_cleanup; }

atf_test_case home_persists cleanup
home_persists_head() {
	atf_set descr "the home and the fence's uid outlive a stop and a daemon restart"
	atf_set require.user root
}
home_persists_body() {
	fenced_vars
	fenced_start
	$CTL boot keep > /dev/null || atf_fail "boot"
	uid1=$($CTL exec keep -- id -u)
	atf_check $CTL exec keep -- sh -c 'echo kept > note'
	$CTL stop keep > /dev/null
	fenced_stop
	fenced_start
	$CTL boot keep > /dev/null || atf_fail "second boot"
	atf_check -o inline:"kept\n" $CTL exec keep -- cat note
	atf_check_equal "$uid1" "$($CTL exec keep -- id -u)"
	atf_check_equal "$uid1" "$(stat -c %u "$(fenced_homes)/keep")"
	atf_check_equal "700" "$(stat -c %a "$(fenced_homes)/keep")"
	fenced_stop
}
home_persists_cleanup() { fenced_cleanup; }

atf_test_case home_tricks cleanup
home_tricks_head() {
	atf_set descr "homes ~/sandbox-homes: a user's symlink to /etc or into the daemon's state makes root create nothing and the refusal names nothing; an account whose home is /nonexistent gets no default home, configured homes still work"
	atf_set require.user root
}
home_tricks_body() {
	fenced_vars
	users_add 2 fh
	u=$(sed -n 1p users.txt)
	v=$(sed -n 2p users.txt)
	tag=$(pwd | cksum | cut -d' ' -f1)
	h=$(fenced_homes)
	chmod 0755 "$h" "$PWD"
	mkdir "$h/$u"
	chown "$u:" "$h/$u"
	usermod -d "$h/$u" "$u" || atf_fail "usermod"
	fenced_conf | sed 's|^homes .*|homes "~/sandbox-homes"|' > fenced.conf
	fenced_start
	fctl="$BIN/fencectl -s $PWD/ctl.sock"
	for t in "/etc/fenced-regress-$tag" "$PWD/state/empty/x" \
	    "$PWD/state/probe-secret.k$tag"; do
		rm -f "$h/$u/sandbox-homes"
		ln -s "$t" "$h/$u/sandbox-homes"
		chown -h "$u:" "$h/$u/sandbox-homes"
		atf_check -s exit:1 -e save:err $(as_user "$u") $fctl boot k$tag
		atf_check -o match:"home-refused.*cannot use home for k$tag" cat err
		atf_check -s exit:1 -o empty grep -e "$t" -e /etc -e state err
		[ ! -e "$t" ] && [ ! -L "$t" ] || atf_fail "root created $t"
	done
	atf_check -o match:"home refused: .*sandbox-homes: a symlink not of root's" \
	    cat fenced.log
	[ ! -e "$PWD/state/empty/x" ] || atf_fail "a directory in state/empty"
	# Without the symlink the same user's home is made, theirs.
	rm -f "$h/$u/sandbox-homes"
	atf_check -o ignore $(as_user "$u") $fctl boot k$tag
	atf_check -o inline:"$(id -u "$u") 700\n" \
	    stat -c '%u %a' "$h/$u/sandbox-homes/k$tag"
	atf_check -o ignore $(as_user "$u") $fctl stop k$tag
	# A home of /nonexistent: no ~/sandbox-homes, nothing made.
	atf_check -s exit:1 -e match:"user $v has no home of their own; configure homes" \
	    $(as_user "$v") $fctl boot k$tag
	[ ! -e /nonexistent ] || atf_fail "/nonexistent was created"
	for d in / /usr/sbin; do
		usermod -d "$d" "$v" || atf_fail "usermod -d $d"
		atf_check -s exit:1 -e match:"user $v has no home of their own" \
		    $(as_user "$v") $fctl boot k$tag
		[ ! -e "${d%/}/sandbox-homes" ] ||
		    atf_fail "${d%/}/sandbox-homes was created"
	done
	fenced_stop
	# A configured homes works for the same account.
	fenced_conf | sed 's|^homes "\(.*\)"|homes "\1/%u"|' > fenced.conf
	fenced_start
	atf_check -o ignore $(as_user "$v") $fctl boot k$tag
	atf_check -o inline:"$(id -u "$v")\n" \
	    $(as_user "$v") $fctl exec k$tag -- id -u
	atf_check -o inline:"$(id -u "$v") 700\n" \
	    stat -c '%u %a' "$h/$v/k$tag"
	$(as_user "$v") $fctl stop k$tag > /dev/null
	fenced_stop
}
home_tricks_cleanup() {
	tag=$(pwd | cksum | cut -d' ' -f1)
	rm -rf "/etc/fenced-regress-$tag"
	fenced_cleanup
	users_remove
}

atf_test_case home_limit cleanup
home_limit_head() {
	atf_set descr "limit home: the home is an ext4 image of that size: fallocate and dd past it fail with ENOSPC inside an L1.5 fence, the host's disk does not grow by it, the state reports it, the files outlive stop, boot and a daemon restart, and the mount table names no host path of it"
	atf_set require.user root
}
home_limit_body() {
	fenced_vars
	fenced_conf > fenced.conf
	echo 'limit home 32M' >> fenced.conf
	fenced_start
	$CTL boot big tier L1.5 > /dev/null || { cat fenced.log; atf_fail "boot"; }
	img="$PWD/state/homes/0/big.img"
	atf_check -o match:"^-rw------- .* root root 33554432 " ls -l "$img"
	atf_check -o match:"^home:     $img\$" -o match:"^home use: [0-9]+K of 32768K\$" \
	    $CTL show environment big
	before=$(du -k "$img" | cut -f1)
	atf_check -s not-exit:0 -e match:"No space left on device" \
	    $CTL exec big -- fallocate -l 100M big
	atf_check -s not-exit:0 -e match:"No space left on device" \
	    $CTL exec big -- dd if=/dev/zero of=big bs=1M count=100
	after=$(du -k "$img" | cut -f1)
	[ $((after - before)) -le 33000 ] ||
	    atf_fail "the image grew by ${after}K - ${before}K"
	atf_check $CTL exec big -- rm -f big
	atf_check $CTL exec big -- sh -c 'echo kept > note'
	$CTL exec big -- cat /proc/self/mountinfo > mi
	atf_check -o match:" / /home/fence-[0-9]+ rw,nosuid,nodev.* - ext4 /dev/loop" cat mi
	atf_check -s exit:1 -o empty grep -F -e "$PWD" -e state mi
	# The HTTP state says it too.
	tok=$($CTL token 2>/dev/null | tail -n 1)
	curl -sS -H "x-voicebox-host-token: $tok" \
	    "http://127.0.0.1:$(fenced_port)/api/environments/big" > state.json ||
	    atf_fail "curl"
	atf_check -o match:'"homeLimit": *33554432' -o match:'"homeUsed": *[1-9][0-9]*' \
	    cat state.json
	# A stop detaches the image at once: the next boot may follow.
	for i in 1 2 3; do
		$CTL stop big > /dev/null
		$CTL boot big tier L1.5 > /dev/null ||
		    { cat fenced.log; atf_fail "boot right after a stop"; }
	done
	$CTL stop big > /dev/null
	fenced_stop
	fenced_start
	$CTL boot big tier L1.5 > /dev/null || atf_fail "second boot"
	atf_check -o inline:"kept\n" $CTL exec big -- cat note
	$CTL stop big > /dev/null
	fenced_stop
	[ -s "$img" ] || atf_fail "stopping removed the image"
}
home_limit_cleanup() { fenced_cleanup; }

atf_test_case deadline cleanup
deadline_head() {
	atf_set descr "a fence is stopped at its deadline, and says so"
	atf_set require.user root
}
deadline_body() {
	fenced_vars
	fenced_start
	$CTL boot short lifetime 2 > /dev/null || atf_fail "boot"
	pid=$(fence_pid short)
	wait_gone $pid 5 || atf_fail "fence outlived its deadline by 3 s"
	atf_check -o match:"fence short: lifetime over" cat fenced.log
	# Kept for a while as stopped, with why; nothing runs in it.
	atf_check -o match:"state: +stopped \(deadline\)" \
	    $CTL show environment short
	atf_check -o match:"^short .*stopped" $CTL show environments
	atf_check -s exit:1 -e match:"not-found" $CTL exec short -- true
	tok=$($CTL token 2>/dev/null | tail -n 1)
	call "$tok" GET /api/environments/short
	expect 200 '"state":"stopped"' '"reason":"deadline"'
	call "$tok" GET /api/environments
	expect 200 '"key":"short"' '"reason":"deadline"'
	call "$tok" POST /api/environments/short/exec '{"argv":["true"]}'
	expect 404 '"error":"not-found"'
	fenced_stop
}
deadline_cleanup() { fenced_cleanup; }

atf_test_case refused cleanup
refused_head() {
	atf_set descr "a boot that cannot be done as asked fails clearly and leaves nothing behind"
	atf_set require.user root
}
refused_body() {
	fenced_vars
	fenced_start
	# A home that resolves outside homes.
	ln -s /etc "$(fenced_homes)/evil"
	atf_check -s exit:1 -e match:"home-refused" $CTL boot evil
	atf_check -s exit:1 -e match:"not-found" $CTL show environment evil
	# A backend this daemon cannot run (vm, vm off in its fenced.conf):
	# no fallback to native.
	atf_check -s exit:1 -e match:"backend-unavailable: .*vm off in fenced.conf" \
	    $CTL boot other backend vm
	atf_check -s exit:1 -e match:"backend-unavailable" \
	    $CTL boot other backend vm
	atf_check -s exit:1 -e match:"not a fence key" $CTL boot ../x
	atf_check -s exit:1 -e match:"exists" sh -c \
	    "'$BIN/fencectl' -s '$PWD/ctl.sock' boot twice >/dev/null &&
	     '$BIN/fencectl' -s '$PWD/ctl.sock' boot twice"
	atf_check -o match:"fences: 1 running" $CTL show stats
	$CTL stop all > /dev/null
	atf_check -o match:"fences: 0 running" $CTL show stats
	atf_check_equal "" "$(fence_procs)"
	fenced_stop
}
refused_cleanup() { fenced_cleanup; }

atf_test_case burst cleanup
burst_head() {
	atf_set descr "boots sent at once, each followed by its first exec: every one answered and measured; a stop all among boots in flight leaves no fence whose boot failed, and nothing once all are stopped"
	atf_set require.user root
}
burst_body() {
	fenced_vars
	fenced_start
	# More at once than the fencer probes at once (2 per cpu, at
	# least 2): the rest wait their turn, and each first exec waits
	# for its fence's verdict.
	n=$(($(nproc) * 2 + 6))
	i=0
	pids=
	while [ $i -lt $n ]; do
		( $CTL boot b$i tier L1.5 > /dev/null &&
		    $CTL exec b$i -- /bin/echo ok$i > out.$i 2> err.$i ) &
		pids="$pids $!"
		i=$((i + 1))
	done
	wait $pids	# not the daemon, a child of ours too
	i=0
	while [ $i -lt $n ]; do
		atf_check_equal "ok$i" "$(cat out.$i 2>/dev/null)"
		[ "$(level_of b$i)" = L1.5 ] || atf_fail "b$i not L1.5: $($CTL \
		    show environment b$i 2>&1 | tr '\n' '|')"
		i=$((i + 1))
	done
	atf_check -o match:"^stopped" $CTL stop all
	# Boots in flight (some still queued in the fencer) and a stop of
	# all of them: a boot that failed has no fence, now or later.
	i=0
	pids=
	while [ $i -lt $n ]; do
		( $CTL boot s$i tier L1.5 > /dev/null 2>&1; echo $? > st.$i ) &
		pids="$pids $!"
		i=$((i + 1))
	done
	$CTL stop all > /dev/null
	wait $pids
	sleep 1
	i=0
	while [ $i -lt $n ]; do
		if [ "$(cat st.$i)" != 0 ]; then
			$CTL show environment s$i 2>/dev/null |
			    grep -q "^state: *running" &&
			    atf_fail "s$i runs, though its boot failed"
		fi
		i=$((i + 1))
	done
	$CTL stop all > /dev/null
	atf_check -o match:"fences: 0 running" $CTL show stats
	wait_empty fence_procs
	fenced_stop
}
burst_cleanup() { fenced_cleanup; }

atf_test_case sigkill_parent cleanup
sigkill_parent_head() {
	atf_set descr "SIGKILL of the daemon's parent leaves no fence process"
	atf_set require.user root
}
sigkill_parent_body() {
	fenced_vars
	fenced_start
	$CTL boot a tier L1 > /dev/null && $CTL boot b tier L2 > /dev/null ||
	    atf_fail "boot"
	$CTL exec a -- sh -c 'sleep 1000 & sleep 1000 & true' ||
	    atf_fail "exec"
	a=$(fence_pid a); b=$(fence_pid b)
	kill -9 $FENCED_PID
	wait_gone $a 3 || atf_fail "fence a survived"
	wait_gone $b 3 || atf_fail "fence b survived"
	for p in $(cat fenced.pids); do
		wait_gone $p 3 || atf_fail "daemon process $p survived"
	done
	atf_check_equal "" "$(fence_procs)"
}
sigkill_parent_cleanup() { fenced_cleanup; }

atf_test_case sigkill_all cleanup
sigkill_all_head() {
	atf_set descr "SIGKILL of every daemon process at once still leaves no fence process"
	atf_set require.user root
}
sigkill_all_body() {
	fenced_vars
	fenced_start
	$CTL boot a tier L1.5 > /dev/null || atf_fail "boot"
	a=$(fence_pid a)
	kill -9 $(cat fenced.pids)
	wait_gone $a 3 || atf_fail "fence survived the fencer"
	atf_check_equal "" "$(fence_procs)"
}
sigkill_all_cleanup() { fenced_cleanup; }

atf_init_test_cases() {
	atf_add_test_case tiers
	atf_add_test_case home_persists
	atf_add_test_case home_tricks
	atf_add_test_case home_limit
	atf_add_test_case deadline
	atf_add_test_case refused
	atf_add_test_case burst
	atf_add_test_case sigkill_parent
	atf_add_test_case sigkill_all
}
