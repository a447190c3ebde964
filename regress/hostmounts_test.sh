#! /usr/bin/atf-sh
# The host's own mount table, as real hosts have it (issue 28): network
# namespaces (ip netns, Docker, podman, CNI: nsfs mounts whose root is
# "net:[...]"), thousands of mounts (a Kubernetes node, snaps), paths
# with odd bytes, mounts coming and going while fences boot.  None of
# it may cost a fence its level.  Each daemon runs in a private mount
# namespace of its own, so that what the test mounts is seen by its
# fencer alone and no other daemon on the machine.

. "$(atf_get_srcdir)/lib.subr"

# mounts_start SETUP: start the test daemon in a new mount namespace
# (private propagation) after running the shell text SETUP there, in
# the test's work directory.
mounts_start() {
	command -v unshare > /dev/null || atf_skip "no unshare(1)"
	{
		echo "set -e"
		echo "cd '$PWD'"
		echo "$1"
		echo "exec '$BIN/fenced' \"\$@\""
	} > inner.sh
	printf '#!/bin/sh\nexec unshare -m --propagation private sh %s "$@"\n' \
	    "$PWD/inner.sh" > wrap.sh
	chmod +x wrap.sh
	FENCED_BIN=$PWD/wrap.sh fenced_start
	FENCER=$(fenced_pid fencer)
	[ -n "$FENCER" ] || atf_fail "no fencer"
}

# Boot an L2 and an L1.5 fence, each with require of its tier: both
# earn it.  $1 tells the names apart.
mounts_earn() {
	atf_check -o match:"^level: *L2" $CTL boot "${1}2" tier L2 require L2
	atf_check -o match:"^level: *L1.5" \
	    $CTL boot "${1}15" tier L1.5 require L1.5
	atf_check -o ignore $CTL stop "${1}2"
	atf_check -o ignore $CTL stop "${1}15"
}

atf_test_case nsfs cleanup
nsfs_head() {
	atf_set descr "network namespace mounts on the host (ip netns add, a bind of /proc/self/ns/net) leave L2 and L1.5 earned"
	atf_set require.user root
}
nsfs_body() {
	fenced_vars
	command -v ip > /dev/null || atf_skip "no ip(8)"
	echo "fenced-regress-$$" > netns.name
	mounts_start "ip netns add fenced-regress-$$
touch netns.bind
mount --bind /proc/self/ns/net netns.bind"
	atf_check -o match:"net:\\[[0-9]+\\] /run/netns/fenced-regress-$$ " \
	    -o match:"net:\\[[0-9]+\\] $PWD/netns.bind " \
	    cat /proc/$FENCER/mountinfo
	mounts_earn ns
}
nsfs_cleanup() {
	fenced_cleanup
	# The mount went with the daemon's namespace; the file it was on
	# is the host's.
	n=$(cat netns.name 2>/dev/null)
	[ -z "$n" ] || rm -f "/run/netns/$n"
}

atf_test_case many cleanup
many_head() {
	atf_set descr "a host table of 8,000 mounts (570 KB) leaves L2 and L1.5 earned"
	atf_set require.user root
}
many_body() {
	fenced_vars
	# Each recursive bind of d onto d/x doubles the mounts under d.
	mounts_start "mkdir -p d
mount -t tmpfs many d
mkdir d/x
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13; do mount --rbind d d/x; done"
	n=$(wc -l < /proc/$FENCER/mountinfo)
	[ "$n" -gt 8192 ] || atf_fail "only $n mounts"
	mounts_earn many
}
many_cleanup() { fenced_cleanup; }

atf_test_case odd cleanup
odd_head() {
	atf_set descr "host mounts whose paths hold spaces, tabs, newlines, backslashes, an escape's text and a deleted root leave L2 and L1.5 earned"
	atf_set require.user root
}
odd_body() {
	fenced_vars
	mounts_start "nl='
'
tab=\$(printf '\\t')
for n in 'sp ace' \"new\${nl}line\" 'back\\slash' \"t\${tab}ab\" 'x\\040y' \\
    ' - ' 'net:[1]'; do
	mkdir -p \"odd/\$n\"
	mount --bind \"odd/\$n\" \"odd/\$n\"
done
mkdir -p odd/gone odd/left
mount --bind odd/gone odd/left
rmdir odd/gone"
	m=/proc/$FENCER/mountinfo
	atf_check -o match:'odd/sp\\040ace ' -o match:'odd/new\\012line ' \
	    -o match:'odd/back\\134slash ' -o match:'odd/t\\011ab ' \
	    -o match:'odd/x\\134040y ' -o match:'odd/\\040-\\040 ' \
	    -o match:'odd/gone//deleted ' cat $m
	mounts_earn odd
}
odd_cleanup() { fenced_cleanup; }

atf_test_case churn cleanup
churn_head() {
	atf_set descr "mounts of the host (nsfs, tmpfs trees) appearing and vanishing while fences boot leave L2 and L1.5 earned"
	atf_set require.user root
}
churn_body() {
	fenced_vars
	mounts_start "mkdir -p churn
touch ns.bind"
	touch churn.run
	nsenter -m -t "$FENCER" sh -c "cd '$PWD'"'
	while [ -e churn.run ]; do
		mount --bind /proc/self/ns/net ns.bind
		mount -t tmpfs churn churn
		mkdir churn/x
		for i in 1 2 3 4 5 6; do mount --rbind churn churn/x; done
		umount -R churn
		umount ns.bind
		echo >> churn.rounds
	done' > churn.log 2>&1 &
	echo $! > churn.pid
	for i in 1 2 3; do
		mounts_earn c$i
	done
	# Boots whose levels come quickly may all be in before a second
	# round of a loop slowed by a loaded machine: it goes on until then.
	wait_until 60 sh -c '[ "$(cat churn.rounds 2>/dev/null | wc -l)" -gt 1 ]'
	rm churn.run
	wait "$(cat churn.pid)"
	# The loop ran all along: it did not stop on an error of its own,
	# and went round more than once.
	[ -s churn.log ] && atf_fail "the churn loop failed: $(cat churn.log)"
	n=$(wc -l < churn.rounds)
	[ "$n" -gt 1 ] || atf_fail "the churn loop went round $n times"
}
churn_cleanup() {
	rm -f churn.run
	p=$(cat churn.pid 2>/dev/null)
	[ -z "$p" ] || kill "$p" 2>/dev/null
	fenced_cleanup
}

atf_test_case runsc cleanup
runsc_head() {
	atf_set descr "a runsc fence earns L3 with require beside network namespace mounts and 8,000 other mounts of the host: the sandbox's and the gofer's tables are read as a fence's, the fencer's as the host's"
	atf_set require.user root
}
runsc_body() {
	fenced_vars
	command -v runsc > /dev/null ||
	    atf_skip "runsc is not installed (scripts/deps.sh installs it)"
	mounts_start "touch netns.bind
mount --bind /proc/self/ns/net netns.bind
mkdir -p d
mount -t tmpfs many d
mkdir d/x
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13; do mount --rbind d d/x; done"
	atf_check -o match:"nsfs" cat /proc/$FENCER/mountinfo
	atf_check -o match:"^level: *L3\$" $CTL boot g backend runsc require L3
	atf_check -o ignore $CTL stop g
}
runsc_cleanup() { fenced_cleanup; }

atf_init_test_cases() {
	atf_add_test_case nsfs
	atf_add_test_case many
	atf_add_test_case odd
	atf_add_test_case churn
	atf_add_test_case runsc
}
