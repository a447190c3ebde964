#! /usr/bin/atf-sh
# Snapshots of homes, branches, restore and undo (issue 32,
# docs/snapshots.md): what a snapshot keeps and shares, that a branch is
# a fence of its own (its uid, its level), that nothing of the host or of
# another user leaks through a snapshot, the bounds, and that a daemon
# killed in the middle leaves nothing a restart does not clean.

. "$(atf_get_srcdir)/lib.subr"

# The uid a fence runs as (fencectl show environment).
uid_of() {
	$CTL show environment "$1" | sed -n 's/.*(runs as uid \([0-9]*\)).*/\1/p'
}

# Nothing half-made in the store: no .new.* or .del.* anywhere.
store_clean() {
	find state/snapshots state/branches -mindepth 2 -maxdepth 2 \
	    \( -name '.new.*' -o -name '.del.*' \) 2>/dev/null
}

# boot ARGS...: a root-owned branch, its state shown.  Its uid is its
# own, so its lower layer is idmapped, which some kernels cannot do on
# the store's filesystem (tmpfs before Linux 6.3: the v2 guest's /tmp):
# skipped there, with the daemon's reason.
branch_boot() {
	if ! $CTL -w 300 boot "$@" > branch.out 2> branch.err; then
		grep -q branch-unsupported branch.err &&
		    atf_skip "$(cat branch.err)"
		atf_fail "boot $*: $(cat branch.err)"
	fi
	cat branch.out
}

store_is_clean() {
	[ -z "$(store_clean)" ]
}

atf_test_case branch_three cleanup
branch_three_head() {
	atf_set descr "a snapshot, then a write, then three branches of the snapshot: each sees the snapshot's files and not the later write, runs as a uid of its own and earns its own level; what one branch writes no other sees; a branch keeps its home across a stop; a snapshot with branches is not deleted"
	atf_set require.user root
	atf_set timeout 180
}
branch_three_body() {
	fenced_vars
	fenced_start
	atf_check -o ignore $CTL boot src
	atf_check $CTL exec src -- sh -c \
	    'mkdir d && echo one > d/f1 && echo two > top && chmod 600 top'
	atf_check -o match:"^src@s1: taken \(8 bytes, 3 files" \
	    $CTL snapshot src s1
	atf_check $CTL exec src -- sh -c 'echo later > later; rm d/f1'
	atf_check -o match:"^src@s1 +8 +3 .* +0 +copy$" $CTL show snapshots
	src_uid=$(uid_of src)
	uids="$src_uid"
	for b in b1 b2 b3; do
		branch_boot $b from src@s1 > boot.out
		atf_check -o match:"^state: *running" \
		    -o match:"/branches/0/$b/upper" cat boot.out
		atf_check -o inline:"one\ntwo\n" $CTL exec $b -- cat d/f1 top
		atf_check -s exit:1 -e match:"No such file" $CTL exec $b -- \
		    cat later
		atf_check -o inline:"600\n" $CTL exec $b -- stat -c %a top
		u=$(uid_of $b)
		in_fence_uids "$u" || atf_fail "$b runs as $u"
		atf_check -o inline:"$u\n" $CTL exec $b -- id -u
		atf_check -o inline:"$u\n" $CTL exec $b -- stat -c %u d/f1
		# The uid's record names the home that holds its files, so
		# that no reclaim frees the uid while the layer exists.
		atf_check -o inline:"$u $b $PWD/state/branches/0/$b/upper\n" \
		    grep " $b " state/fence-uids
		case " $uids " in
		*" $u "*) atf_fail "$b shares uid $u" ;;
		esac
		uids="$uids $u"
		atf_check_equal L1.5 "$(level_of $b)"
		atf_check $CTL exec $b -- sh -c "echo $b > mine; echo x >> top"
	done
	# Each branch's writes are its own, and the source is untouched.
	for b in b1 b2 b3; do
		atf_check -o inline:"$b\n" $CTL exec $b -- cat mine
		atf_check -o inline:"two\nx\n" $CTL exec $b -- cat top
	done
	atf_check -o inline:"two\n" $CTL exec src -- cat top
	atf_check -s exit:1 -e ignore $CTL exec src -- cat mine
	# The snapshot's bytes are shared: the upper layers hold only
	# what each branch changed.
	for b in b1 b2 b3; do
		[ -e state/branches/0/$b/upper/d/f1 ] &&
		    atf_fail "$b copied d/f1 up without writing it"
		[ -f state/branches/0/$b/upper/mine ] ||
		    atf_fail "no upper layer of $b"
	done
	atf_check -o match:"^src@s1 .* 3 +copy$" $CTL show snapshots
	# A snapshot of a branch is of its whole home, the layers merged.
	atf_check -o match:"^b2@s: taken" $CTL snapshot b2 s
	atf_check -o ignore $CTL boot b2b from b2@s
	atf_check -o inline:"one\nb2\n" $CTL exec b2b -- cat d/f1 mine
	# A branch's key has a home now: not branched again, but booted
	# again it keeps what it wrote.
	atf_check -s exit:1 -e match:"already running" $CTL boot b1 from src@s1
	atf_check -o ignore $CTL stop b1
	atf_check -s exit:1 -e match:"home-exists" $CTL boot b1 from src@s1
	atf_check -o ignore $CTL boot b1
	atf_check -o inline:"b1\n" $CTL exec b1 -- cat mine
	# The snapshot under the branches stays; one without goes.
	atf_check -s exit:1 -e match:"snapshot-in-use.*3 branches" \
	    $CTL delete snapshot src s1
	atf_check -o ignore $CTL snapshot src s2
	atf_check -o match:"^src@s2: deleted" $CTL delete snapshot src s2
	[ -e state/snapshots/0/src@s2 ] && atf_fail "s2 left in the store"
	atf_check -s exit:1 -e match:"snapshot-not-found" \
	    $CTL delete snapshot src s2
	# A branch of the source's home as it is now: a snapshot of its own.
	atf_check -o ignore $CTL boot now1 from src
	atf_check -o inline:"later\n" $CTL exec now1 -- cat later
	atf_check -o match:"^src@now1 " $CTL show snapshots
	# Not of a fence that does not run, nor of a snapshot not there.
	atf_check -s exit:1 -e match:"not-found" $CTL boot x1 from nosuch
	atf_check -s exit:1 -e match:"snapshot-not-found" \
	    $CTL boot x2 from src@nosuch
	atf_check -s exit:1 -e match:"bad-request" $CTL boot x3 from x3
	[ -z "$(store_clean)" ] || atf_fail "left: $(store_clean)"
	fenced_stop
}
branch_three_cleanup() { fenced_cleanup; }

atf_test_case undo_restore cleanup
undo_restore_head() {
	atf_set descr "exec ... undo of rm -rf ~/* is taken back by undo, once; restore puts a snapshot back; the same over HTTP, with names and bodies checked"
	atf_set require.user root
	atf_set timeout 120
}
undo_restore_body() {
	fenced_vars
	fenced_start
	atf_check -o ignore $CTL boot u
	atf_check $CTL exec u -- sh -c \
	    'mkdir -p a/b && echo keep > a/b/f && echo top > top'
	atf_check -o ignore $CTL snapshot u base
	atf_check $CTL exec u -- sh -c 'echo new > new'
	atf_check $CTL exec u undo -- sh -c 'rm -rf ~/*'
	atf_check -o inline:"" $CTL exec u -- ls
	atf_check -o match:"^u: undone" $CTL undo u
	atf_check -o inline:"a\nnew\ntop\n" $CTL exec u -- ls
	atf_check -o inline:"keep\n" $CTL exec u -- cat a/b/f
	# Undone once: the mark is gone.
	atf_check -s exit:1 -e match:"snapshot-not-found.*no command to undo" \
	    $CTL undo u
	# The command's output is its own, the undo is the daemon's.
	atf_check -o inline:"x\n" $CTL exec u undo -- echo x
	atf_check -o match:"^u@base: restored" $CTL restore u base
	atf_check -o inline:"a\ntop\n" $CTL exec u -- ls
	atf_check -s exit:1 -e match:"snapshot-not-found" $CTL restore u nope
	atf_check -s exit:1 -e match:"name" $CTL restore u 'Bad/x'

	# Over HTTP.
	t=$($CTL token 2>/dev/null | tail -1)
	e=/api/environments/u
	call "$t" POST $e/snapshots '{"name":"h1"}'
	expect 201 '"environment":"u"' '"name":"h1"' '"files":4' \
	    '"paused":true' '"memory":false'
	call "$t" POST $e/snapshots '{"name":"h1"}'
	expect 409 '"error":"snapshot-exists"'
	call "$t" POST $e/snapshots '{"name":"../x"}'
	expect 400 '"error":"bad-snapshot-name"'
	call "$t" POST $e/snapshots '{"nom":"x"}'
	expect 400 'unknown-field'
	call "$t" POST $e/snapshots
	expect 201 '"name":"s[0-9]{8}-[0-9]{6}'
	call "$t" GET $e/snapshots
	expect 200 '"name":"base"' '"name":"h1"' '"name":"s[0-9]{8}'
	call "$t" GET $e/snapshots/h1
	expect 200 '^\{"environment":"u","name":"h1"'
	call "$t" GET $e/snapshots/nope
	expect 404 '"error":"snapshot-not-found"'
	call "$t" GET $e/snapshots/h1/nope
	expect 404 '"error":"not-found"'
	call "$t" GET $e/snapshots/$(printf 'a%.0s' $(seq 64))
	expect 400 '"error":"bad-snapshot-name"'
	call "$t" DELETE $e/snapshots/Bad
	expect 400 '"error":"bad-snapshot-name"'
	call "$t" PUT $e/snapshots/h1 '{}'
	expect 405
	call "$t" POST $e/exec '{"argv":["sh","-c","rm -rf ~/a"],"undo":true}'
	expect 200 '"exitCode":0'
	call "$t" POST $e/exec '{"argv":["ls"]}'
	expect 200 '"stdout":"top\\n"'
	call "$t" POST $e/undo
	expect 200 '"undone":true'
	call "$t" POST $e/exec '{"argv":["cat","a/b/f"]}'
	expect 200 '"stdout":"keep\\n"'
	call "$t" POST $e/undo
	expect 404 '"error":"snapshot-not-found"'
	call "$t" POST $e/exec '{"argv":["true"],"undo":"yes"}'
	expect 400 '"error":"bad-type"'
	call "$t" POST $e/processes '{"argv":["true"],"undo":true}'
	expect 400 'undo'
	call "$t" POST $e/snapshots/h1/restore
	expect 200 '"restored":true'
	call "$t" DELETE $e/snapshots/h1
	expect 200 '"deleted":true'
	call "$t" DELETE $e/snapshots/h1
	expect 404 '"error":"snapshot-not-found"'
XX
	call "$t" POST /api/environments/uc '{"from":{"snapshot":"base"}}'
	expect 400 '"error":"missing-field"'
	call "$t" POST /api/environments/uc '{"from":{"environment":"U!"}}'
	expect 400 '"error":"bad-value"'
	call "$t" POST /api/environments/nosuch/undo
	expect 404 '"error":"not-found"'
	[ -z "$(store_clean)" ] || atf_fail "left: $(store_clean)"
	fenced_stop
}
undo_restore_cleanup() { fenced_cleanup; }

atf_test_case hostile_home cleanup
hostile_home_head() {
	atf_set descr "a fence fills its home with symlinks to the host's secrets, a fifo, a setuid file and a deep tree: the snapshot keeps the links as links, nothing of the host's, no setuid bit, and its copy never hangs; a branch reads nothing through them"
	atf_set require.user root
	atf_set timeout 120
}
hostile_home_body() {
	fenced_vars
	fenced_start
	atf_check -o ignore $CTL boot h
	atf_check $CTL exec h -- sh -c 'ln -s /etc/shadow shadow &&
	    ln -s / root && ln -s /proc/1/root p1 && mkfifo fifo &&
	    cp /bin/true suid && chmod 4755 suid &&
	    mkdir -p deep && cd deep && i=0 &&
	    while [ $i -lt 100 ]; do mkdir x && cd x; i=$((i + 1)); done &&
	    echo bottom > f'
	atf_check -o match:"taken" $CTL snapshot h s
	tree=state/snapshots/0/h@s/tree
	[ -L $tree/shadow ] || atf_fail "shadow is not a link in the tree"
	atf_check -o inline:"/etc/shadow\n" readlink $tree/shadow
	[ -p $tree/fifo ] || atf_fail "fifo not kept as a fifo"
	atf_check -o inline:"755\n" stat -c %a $tree/suid
	# Nothing in the tree holds the host's root entry of /etc/shadow.
	r=$(grep -rl '^root:' $tree 2>/dev/null)
	[ -z "$r" ] || atf_fail "host secrets in the snapshot: $r"
	branch_boot hb from h@s > /dev/null
	atf_check -s not-exit:0 -e ignore $CTL exec hb -- cat shadow
	atf_check -o inline:"755\n" $CTL exec hb -- stat -c %a suid
	atf_check -o match:"^bottom$" $CTL exec hb -- sh -c \
	    'cat deep/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/f'
	# The branch sees its own view through the links, not the host's.
	atf_check -s not-exit:0 $CTL exec hb -- test -e "root$PWD/state"
	# A restore of the same through the fence's home.
	atf_check $CTL exec h -- sh -c 'rm -rf ~/* && echo gone > gone'
	atf_check -o match:"restored" $CTL restore h s
	atf_check -o inline:"/etc/shadow\n" $CTL exec h -- readlink shadow
	atf_check -s exit:1 -e ignore $CTL exec h -- cat gone
	fenced_stop
}
hostile_home_cleanup() { fenced_cleanup; }

atf_test_case other_user cleanup
other_user_head() {
	atf_set descr "a second local user cannot list, read, branch, restore, undo or delete another's snapshots: not by key, not by name, not by a path in the state directory, not over HTTP; their own work as ever"
	atf_set require.user root
	atf_set timeout 180
}
other_user_body() {
	fenced_vars
	users_add 2 fsn
	fenced_run_socket
	h=$(fenced_homes)
	fenced_conf | sed -e "s|^homes .*|homes \"$h/%u\"|" > fenced.conf
	fenced_start
	ua=$(sed -n 1p users.txt)
	ub=$(sed -n 2p users.txt)
	ia=$(id -u "$ua")
	A="$(as_user "$ua") $BIN/fencectl -s $(cat run.sock)"
	B="$(as_user "$ub") $BIN/fencectl -s $(cat run.sock)"
	atf_check -o ignore $A boot k
	atf_check $A exec k -- sh -c 'echo secret-of-a > s; chmod 644 s'
	atf_check -o match:"taken" $A snapshot k s1
	atf_check -o ignore $A boot kb from k@s1
	atf_check -o inline:"secret-of-a\n" $A exec kb -- cat s
	atf_check -o inline:"$ia\n" $A exec kb -- id -u
	# b, by key and name.
	atf_check -o inline:"" $B show snapshots
	atf_check -o inline:"" $B show snapshots k
	for c in "snapshot $ua/k x" "snapshot $ia/k x" "restore $ua/k s1" \
	    "undo $ua/k" "delete snapshot $ua/k s1" "show snapshots $ua/k"; do
		# shellcheck disable=SC2086
		atf_check -s exit:1 -e match:"not-found" $B $c
	done
	atf_check -s exit:1 -e match:"not a key" $B boot x from "$ua/k@s1"
	atf_check -o ignore $B boot k
	atf_check -s exit:1 -e match:"snapshot-not-found" $B boot bx from k@s1
	atf_check -s exit:1 -e match:"snapshot-not-found" $B restore k s1
	atf_check -s exit:1 -e match:"not-found" $B delete snapshot k s1
	# b, by path in the state directory (the work directory on the way
	# made passable, so that only the store's own modes stand).
	d=$PWD
	while [ "$d" != / ]; do
		chmod o+x "$d"
		d=$(dirname "$d")
	done
	for p in state/snapshots "state/snapshots/$ia" state/branches \
	    "state/branches/$ia" "state/snapshots/$ia/k@s1"; do
		atf_check -o inline:"drwx------ root root\n" \
		    stat -c "%A %U %G" "$p"
	done
	for p in state state/snapshots "state/snapshots/$ia" \
	    "state/snapshots/$ia/k@s1/tree/s" "state/branches/$ia/kb/upper"; do
		# shellcheck disable=SC2086
		atf_check -s not-exit:0 -e ignore $(as_user "$ub") cat "$PWD/$p"
		# shellcheck disable=SC2086
		atf_check -s not-exit:0 -e ignore $(as_user "$ub") ls "$PWD/$p"
	done
	# b, from inside its fence: the store is not in its view.
	atf_check -s not-exit:0 -e ignore $B exec k -- \
	    cat "$PWD/state/snapshots/$ia/k@s1/tree/s"
	# b, over HTTP.
	tb=$($B token 2>/dev/null | tail -1)
	call "$tb" GET /api/environments/k/snapshots
	expect 200 '^\{"snapshots":\[\]\}$'
	call "$tb" POST /api/environments/k/snapshots/s1/restore
	expect 404 'snapshot-not-found'
	call "$tb" DELETE /api/environments/k/snapshots/s1
	expect 404 'snapshot-not-found'
	call "$tb" POST /api/environments/k2 '{"from":{"environment":"k","snapshot":"s1"}}'
	expect 404 'snapshot-not-found'
	# a's is still whole; root sees it by owner.
	atf_check -o match:"^k@s1 .* 1 +copy$" $A show snapshots
	atf_check -o match:"^k@s1 " $CTL show snapshots "$ua/k"
	fenced_stop
}
other_user_cleanup() { fenced_cleanup; }

atf_test_case bounds cleanup
bounds_head() {
	atf_set descr "limit snapshots and its size, per fence and per owner: a snapshot past either is refused with the limit named, and leaves nothing half-made"
	atf_set require.user root
	atf_set timeout 120
}
bounds_body() {
	fenced_vars
	fenced_conf > fenced.conf
	cat >> fenced.conf <<EOF
limit snapshots 2
limit snapshots size 2M
user limit snapshots 3
EOF
	fenced_start
	atf_check -o ignore $CTL boot a
	atf_check -o ignore $CTL boot b
	atf_check -o ignore $CTL snapshot a a1
	atf_check -o ignore $CTL snapshot a a2
	atf_check -s exit:1 -e match:"snapshot-limit.*limit snapshots 2" \
	    $CTL snapshot a a3
	atf_check -o ignore $CTL snapshot b b1
	atf_check -s exit:1 -e match:"snapshot-limit.*user limit snapshots 3" \
	    $CTL snapshot b b2
	# An undo mark does not count as a snapshot, but its bytes do.
	atf_check $CTL exec b undo -- true
	atf_check -o ignore $CTL delete snapshot a a2
	atf_check $CTL exec b -- dd if=/dev/zero of=big bs=1M count=3 \
	    status=none
	atf_check -s exit:1 -e match:"snapshot-limit.*bytes" $CTL snapshot b b2
	atf_check -s exit:1 -e match:"snapshot-limit" $CTL exec b undo -- true
	[ -z "$(store_clean)" ] || atf_fail "left: $(store_clean)"
	atf_check -o match:"^b@b1 " $CTL show snapshots b
	atf_check -o not-match:"b@b2" $CTL show snapshots b
	# Out of range in the configuration.
	fenced_conf > bad.conf
	echo "limit snapshots 0" >> bad.conf
	atf_check -s exit:1 -e match:"limit snapshots" $BIN/fenced -n -f bad.conf
	fenced_stop
}
bounds_cleanup() { fenced_cleanup; }

atf_test_case crash cleanup
crash_head() {
	atf_set descr "a daemon killed with SIGKILL in the middle of a snapshot leaves a half-made snapshot the next start removes; so are half-made branches and deletions"
	atf_set require.user root
	atf_set timeout 180
}
crash_body() {
	fenced_vars
	fenced_start
	atf_check -o ignore $CTL boot c
	# Enough files that the copy takes a while to catch in the middle.
	# (The shell's own printf: no process per file, quick even in a
	# guest under TCG.)
	atf_check $CTL exec c timeout 60000 -- sh -c \
	    'x=$(head -c 32768 /dev/zero | tr "\\0" x); i=0
	    while [ $i -lt 60 ]; do mkdir d$i; j=0; while [ $j -lt 50 ]; do
	    printf "%s" "$x" > d$i/f$j; j=$((j + 1)); done; i=$((i + 1)); done'
	$CTL snapshot c big > snap.out 2>&1 &
	seen=no
	i=0
	while [ $i -lt 400 ]; do
		if ls -d state/snapshots/0/.new.c@big > /dev/null 2>&1; then
			seen=yes
			break
		fi
		sleep 0.005
		i=$((i + 1))
	done
	[ $seen = yes ] || atf_skip "the copy ended before it was seen"
	for p in $(cat fenced.pids) $FENCED_PID; do
		kill -9 "$p" 2>/dev/null
	done
	wait
	[ -d state/snapshots/0/.new.c@big ] ||
	    atf_skip "the copy ended before the kill"
	# A half-made branch and a deletion cut short, as a crash leaves
	# them: the layers the fence's uid's, the rest root's.
	u=$(fenced_uids)
	u=${u%-*}
	mkdir -p state/branches/0/.new.k/upper/d state/branches/0/.new.k/work \
	    state/snapshots/0/.del.c@old/tree/d
	echo x > state/branches/0/.new.k/upper/d/f
	echo x > state/snapshots/0/.del.c@old/tree/d/f
	chown -R "$u:$u" state/branches/0/.new.k/upper \
	    state/snapshots/0/.del.c@old/tree
	chmod -R go-rwx state/branches/0 state/snapshots/0
	fenced_cgroup_rmdirs
	fenced_start
	# The fencer sweeps as it starts, while the broker answers already.
	wait_until 60 store_is_clean || atf_fail "left: $(store_clean)"
	atf_check -o match:"swept .*\.new\.c@big" cat fenced.log
	atf_check -o inline:"" $CTL show snapshots
	fenced_stop
}
crash_cleanup() { fenced_cleanup; }

atf_test_case runsc_branch cleanup
runsc_branch_head() {
	atf_set descr "the same on runsc: a snapshot of a runsc fence's home, a branch of it on runsc and one native, each probed on its own"
	atf_set require.user root
	atf_set timeout 240
}
runsc_branch_body() {
	command -v runsc > /dev/null || atf_skip "runsc is not installed"
	fenced_vars
	fenced_start
	atf_check -o match:"^backend: *runsc" $CTL boot r backend runsc
	atf_check $CTL exec r -- sh -c 'echo on-runsc > f'
	atf_check -o match:"taken" $CTL snapshot r s
	atf_check $CTL exec r -- sh -c 'echo later > f'
	branch_boot rb from r@s backend runsc > boot.out
	atf_check -o match:"^backend: *runsc" cat boot.out
	atf_check -o inline:"on-runsc\n" $CTL exec rb -- cat f
	atf_check $CTL exec rb -- sh -c 'echo mine > f2'
	atf_check -o match:"^backend: *native" $CTL boot nb from r@s \
	    backend native
	atf_check -o inline:"on-runsc\n" $CTL exec nb -- cat f
	atf_check -s exit:1 -e ignore $CTL exec nb -- cat f2
	l=$(level_of rb)
	case "$l" in
	L[0-9]*) ;;
	*) atf_fail "the runsc branch was not measured: $l" ;;
	esac
	atf_check_equal L1.5 "$(level_of nb)"
	atf_check -o match:"restored" $CTL restore r s
	atf_check -o inline:"on-runsc\n" $CTL exec r -- cat f
	fenced_stop
}
runsc_branch_cleanup() { fenced_cleanup; }

atf_test_case pooled_branch cleanup
pooled_branch_head() {
	atf_set descr "a branch booted from the warm pool gets its overlay home as a cold one does"
	atf_set require.user root
	atf_set timeout 120
}
pooled_branch_body() {
	fenced_vars
	fenced_conf > fenced.conf
	echo "pool L1.5 2" >> fenced.conf
	fenced_start
	wait_until 30 pool_full L1.5:2 || atf_fail "the pool did not fill"
	atf_check -o ignore $CTL boot p
	atf_check $CTL exec p -- sh -c 'echo pooled > f'
	atf_check -o ignore $CTL snapshot p s
	wait_until 30 pool_full L1.5:2 || atf_fail "the pool did not refill"
	branch_boot pb from p@s > boot.out
	atf_check -o match:"^pooled: *yes" cat boot.out
	atf_check -o inline:"pooled\n" $CTL exec pb -- cat f
	u=$(uid_of pb)
	atf_check -o inline:"$u\n" $CTL exec pb -- stat -c %u f
	atf_check_equal L1.5 "$(level_of pb)"
	fenced_stop
}
pooled_branch_cleanup() { fenced_cleanup; }

atf_test_case vm_branch cleanup
vm_branch_head() {
	atf_set descr "a branch booted as a vm fence: QEMU's 9p serves it the overlay, the snapshot's files and its own writes, and it earns its own level on its own kernel"
	atf_set require.user root
	atf_set timeout 600
}
vm_branch_body() {
	[ -x /usr/bin/qemu-system-x86_64 ] || atf_skip "QEMU is not installed"
	fenced_vars
	vm_available || atf_skip "no vm boot files (make vm-images)"
	fenced_conf > fenced.conf
	vm_conf_lines >> fenced.conf
	fenced_start
	wait_until 60 grep -q "vm: usable\|vm: vm accel kvm" fenced.log ||
	    atf_fail "the vm backend did not start"
	atf_check -o ignore $CTL boot n
	atf_check $CTL exec n -- sh -c 'echo from-native > f'
	atf_check -o match:"taken" $CTL snapshot n s
	branch_boot v from n@s backend vm > boot.out
	atf_check -o match:"^backend: *vm" -o match:"^from: *n@s" cat boot.out
	atf_check -o inline:"from-native\n" $CTL exec v -- cat f
	u=$(uid_of v)
	atf_check -o inline:"$u\n" $CTL exec v -- stat -c %u f
	atf_check $CTL exec v -- sh -c 'echo in-vm > g'
	atf_check -o inline:"in-vm\n" cat state/branches/0/v/upper/g
	atf_check_equal L4 "$(level_of v)"
	atf_check -o ignore $CTL stop v
	wait_empty vm_qemus
	fenced_stop
}
vm_branch_cleanup() { fenced_cleanup; }

atf_init_test_cases() {
	atf_add_test_case branch_three
	atf_add_test_case undo_restore
	atf_add_test_case hostile_home
	atf_add_test_case other_user
	atf_add_test_case bounds
	atf_add_test_case crash
	atf_add_test_case runsc_branch
	atf_add_test_case pooled_branch
	atf_add_test_case vm_branch
}
