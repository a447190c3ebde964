#! /usr/bin/atf-sh
# The escape suite (docs/escape.md; issue 14): fence-escape, a hostile
# program of our own (regress/escape/escape.c), runs as an ordinary
# command in a fence of each kind the daemon boots (native L1, L1.5 and
# L2, runsc, vm) and makes its break-out attempts.  Every line it prints
# is compared with the table of expected outcomes in docs/escape.md, the
# one place they are written: an "escaped" where the table says
# "blocked" fails the case naming the attempt, and so does a missing
# line; an "allowed" attempt that was blocked is reported, not failed.
# Around each run the host proves its invariants (a secret file's hash,
# a TCP listener that accepts nothing from L2 and an abstract-socket
# listener that accepts nothing from L1.5 up, the host name, the clock,
# the module list, the host's mount table) and after the stop that nothing of the fence is left.  A second
# local user attacks the running fence from the host side.

. "$(atf_get_srcdir)/lib.subr"

# The expected column of kind $1 from docs/escape.md: "ID CLASS VALUE".
escape_table() {
	awk -F'|' -v kind="$1" '
	function trim(s) { gsub(/^[ \t`]+|[ \t`]+$/, "", s); return s }
	# The table is the one whose header starts "| id |".
	/^\| id \|/ {
		for (i = 2; i < NF; i++)
			if (trim($i) == kind)
				col = i
		nf = NF
		next
	}
	/^\|/ && col > 0 {
		id = trim($2)
		if (id !~ /^[a-z]+-[a-z0-9-]+$/)
			next
		# A stray "|" in a cell would shift the columns.
		print id, trim($3), NF == nf ? trim($col) : "malformed-row"
	}' "$TOPDIR/docs/escape.md"
}

# The attempts as denials (docs/denials.md, its table "| attempt |
# denial at L1.5 |"): "ID<tab>DENIAL" a line, "\|" in a cell a "|".
denials_table() {
	awk '
	function trim(s) { gsub(/^[ \t`]+|[ \t`]+$/, "", s); return s }
	/^\| attempt \| denial at L1.5 \|/ { on = 1; next }
	on && !/^\|/ { on = 0 }
	on {
		gsub(/\\\|/, "\001")
		n = split($0, f, "|")
		id = trim(f[2])
		if (id !~ /^[a-z]+-[a-z0-9-]+$/ || n != 4)
			next
		d = trim(f[3])
		gsub(/\001/, "|", d)
		print id "\t" d
	}' "$TOPDIR/docs/denials.md"
}

# Every attempt fence-escape reports blocked that the table gives a
# denial has it in the answer of the exec that ran it, and every denial
# an exec answered is the table's for a blocked attempt of that exec
# (issue 33: all the refused attempts a layer observes appear, nothing
# else).  The execs' stderr is in execs.log, each after "--- ARGS:".
escape_denials() {
	tab=$(printf '\t')
	denials_table > denials.table
	[ "$(wc -l < denials.table)" -ge 40 ] ||
	    fail="${fail}docs/denials.md's table of attempts is not there; "
	awk '/^--- / { k = $0; sub(/^--- /, "", k); sub(/: exit .*$/, "", k)
	    next }
	    /^fenced: denied: / { print k "\t" $0 }' execs.log > denials.seen
	: > denials.want
	# A sanitizer build's fence-escape: LeakSanitizer's tracer asks
	# ptrace() in each exec, refused and answered like any other.
	san=
	! readelf -d "$ESCAPE" 2>/dev/null | grep -q 'NEEDED.*libasan' ||
	    san=1
	dn=0
	dok=0
	while IFS="$tab" read -r id want; do
		case "$want" in
		"not observed"*) continue ;;
		esac
		line=$(awk -v id="$id" '$1 == id' results | head -1)
		case "$line" in
		*" blocked "*) ;;
		*) continue ;;
		esac
		key="-c $(echo "$line" | cut -d' ' -f2)"
		! grep -q -e "^-a $id$tab" denials.seen || key="-a $id"
		printf '%s\t%s\n' "$key" "$want" >> denials.want
		dn=$((dn + 1))
		if grep -Fq -e "$key${tab}fenced: denied: $want x" denials.seen
		then
			dok=$((dok + 1))
		else
			fail="${fail}$id: no \"$want\" in the answer of its exec ($key); "
		fi
	done < denials.table
	while IFS="$tab" read -r key line; do
		what=$(echo "$line" | sed -E 's/^fenced: denied: //;
		    s/ x[0-9]+( - .*)?$//')
		[ -z "$san" ] || [ "$what" != "seccomp: ptrace()" ] || continue
		grep -Fxq -e "$key$tab$what" denials.want ||
		    fail="${fail}a denial no attempt of its exec ($key) explains: $line; "
	done < denials.seen
	echo "denials: $dok of $dn refused attempts a layer observes appear" \
	    "in their exec's answer; $(wc -l < denials.seen) denial lines" >&2
}

escape_require() {
	ESCAPE=$REGRESS/fence-escape
	[ -x "$ESCAPE" ] || atf_fail "$ESCAPE not built (make tests)"
	command -v python3 > /dev/null || atf_skip "python3 is missing"
	escape_table L1 > table.check
	[ "$(wc -l < table.check)" -ge 60 ] ||
	    atf_fail "docs/escape.md has $(wc -l < table.check) attempts"
}

# The host's listeners: TCP on 127.0.0.1 and an abstract unix socket,
# each logging what it accepted; the marker is in their command line,
# so fence-escape can tell them from its own processes.
listeners_start() {
	cat > listen.py <<'PY'
import os, signal, socket, sys, threading
port, name, marker = int(sys.argv[1]), sys.argv[2], sys.argv[3]
# Gone on its own should no cleanup run (a case outside kyua).
signal.alarm(900)
def serve(s, log):
    while True:
        c, _ = s.accept()
        c.settimeout(2)
        try:
            data = c.recv(256)
        except OSError:
            data = b""
        with open(log, "ab") as f:
            f.write(b"accepted " + data.strip() + b"\n")
        c.close()
t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind(("127.0.0.1", port))
t.listen(16)
u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
u.bind("\0" + name)
u.listen(16)
open("listen.ready", "w").close()
threading.Thread(target=serve, args=(u, "abstract.log"), daemon=True).start()
serve(t, "tcp.log")
PY
	: > tcp.log
	: > abstract.log
	LPORT=$("$REGRESS/t_port") || atf_fail "no free port"
	ABSNAME=fenced-escape-$MARKER
	python3 listen.py "$LPORT" "$ABSNAME" "$MARKER" > listen.err 2>&1 &
	echo $! > listen.pid
	LPID=$!
	i=0
	while [ ! -f listen.ready ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || atf_fail "listeners: $(cat listen.err)"
		sleep 0.05
	done
}

# What the host holds true before and after: $1 is before or after.
host_invariants() {
	# Its contents, and its owner and mode: the home holds a symlink
	# to it, which nothing of the host may follow (a chown of the home).
	{ sha256sum secret; stat -c '%u %g %a' secret; } > "secret.$1"
	hostname > "hostname.$1"
	cat /proc/modules > "modules.$1" 2>/dev/null
	# The mount table of the host, without the mount ids (the table of
	# a machine other suites share moves on its own; host_compare says
	# which changes count).
	awk '{ $1 = $2 = ""; print }' /proc/self/mountinfo | sort > "mounts.$1"
	echo "$(date +%s) $(cut -d' ' -f1 /proc/uptime)" > "clock.$1"
}

host_compare() {
	atf_check -o file:secret.before cat secret.after
	atf_check -o file:hostname.before cat hostname.after
	# An L1 fence has no seccomp filter: a socket of a family the
	# kernel has as a module (AF_ALG, AF_VSOCK, which the table allows
	# at L1) makes it load that module, as for any local user.  From
	# L1.5 on the filter refuses those families and the list must hold.
	if [ "$kind" = L1 ]; then
		cmp -s modules.before modules.after || echo "note: L1's" \
		    "sockets made the kernel load:" $(awk 'NR == FNR \
		    { m[$1] = 1; next } !($1 in m) { print $1 }' \
		    modules.before modules.after) >&2
	else
		atf_check -o file:modules.before cat modules.after
	fi
	# Wall clock against uptime: the clock did not move beyond 2 s.
	read w0 u0 < clock.before
	read w1 u1 < clock.after
	d=$(awk -v w0=$w0 -v w1=$w1 -v u0=$u0 -v u1=$u1 'BEGIN {
	    d = (w1 - w0) - (u1 - u0); if (d < 0) d = -d; print int(d) }')
	[ "$d" -le 2 ] || atf_fail "the host's clock moved by $d s"
	# A mount the fence could have made on the host carries its names
	# or our paths; anything else is another suite's, reported only.
	comm -3 mounts.before mounts.after > mounts.diff
	h=$(fenced_homes)
	if grep -E -e "fenced-escape|$h|$PWD| /usr | /etc | /proc/sys " \
	    mounts.diff > mounts.ours; then
		cat mounts.ours >&2
		atf_fail "the host's mount table changed: $(head -1 mounts.ours)"
	fi
	[ ! -s mounts.diff ] || echo "host mounts of other suites changed: \
$(wc -l < mounts.diff) lines" >&2
}

# Processes of this daemon's fence uids.
fence_uid_procs() {
	r=$(fenced_uids)
	ps -eo pid=,uid=,comm= | awk -v lo="${r%-*}" -v hi="${r#*-}" \
	    '$2 >= lo && $2 <= hi'
}

# After the fences stopped: no process, mount, cgroup, bundle, VM or
# temporary file of theirs is left.
nothing_left() {
	i=0
	while [ -n "$(fence_uid_procs)" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -z "$(fence_uid_procs)" ] || atf_fail "fence processes left: $(fence_uid_procs)"
	h=$(fenced_homes)
	atf_check -s exit:1 grep -F -e "$h" -e "$PWD/state" /proc/self/mountinfo
	for d in $(fenced_cgroup_dirs); do
		atf_check -o empty find "$d" -mindepth 1 -type d
	done
	left=$(ls -A state/runsc/state state/runsc/bundles 2>/dev/null |
	    grep -v -e '^state/runsc.*:$' -e '^$')
	[ -z "$left" ] || atf_fail "runsc state or bundles left: $left"
	left=$(ps -eo pid=,args= | grep -F -e "--root=$PWD/state/runsc/state" \
	    -e qemu-system | grep -F -e "$PWD" -e "$h" | grep -v grep)
	[ -z "$left" ] || atf_fail "runsc or QEMU left: $left"
	atf_check -o empty find /tmp /var/tmp /dev/shm -maxdepth 1 -name \
	    '*fenced-escape*'
	find state | grep -v -e '^state/fence-uids' -e '^state/runsc' \
	    -e '^state/daemons' | sort > state.after
	atf_check -o file:state.before cat state.after
}

# run_escape KEY ARGS...: fence-escape in fence KEY, its lines appended
# to results; the exec's status in exec.rc.
run_escape() {
	_k=$1
	shift
	$CTL exec "$_k" timeout 60000 -- "$IHOME/fence-escape" -s \
	    "$PWD/secret" -p "$LPORT" -u "$ABSNAME" -o "$(fenced_homes)/o" \
	    -x "$(fenced_socket)" -m "$MARKER" -n "$(hostname)" \
	    -b "$(cat /proc/sys/kernel/random/boot_id)" -P "$LPID" "$@" \
	    > exec.out 2> exec.err
	echo $? > exec.rc
	{ echo "--- $*: exit $(cat exec.rc)"; cat exec.err; } >> execs.log
	grep -E '^[a-z]+-[a-z0-9-]+ [a-z]+ (blocked|escaped) ' exec.out \
	    >> results
}

# One attempt in an exec of its own.
run_one() {
	case "$1" in
	res-output-flood)
		# The agent's budget ends it, so its line is the exec's
		# answer: the program's own can never arrive.
		$CTL exec e timeout 60000 output 4096 -- "$IHOME/fence-escape" \
		    -a res-output-flood > flood.out 2> flood.err
		if grep -q '^res-output-flood .* escaped' flood.out; then
			grep '^res-output-flood' flood.out >> results
		elif grep -q exec-output-over-budget flood.err; then
			echo "res-output-flood resources blocked" \
			    "exec-output-over-budget after $(wc -c < flood.out)" \
			    "bytes" >> results
		fi
		;;
	res-forkbomb|res-forkbomb-userns|res-memory)
		_c0=$(grep -c 'fence e stopped (crash)' fenced.log)
		run_escape e -a "$1"
		# gVisor of this age has no memory limit of its own: the
		# host's ends the sandbox (docs/runsc.md), the attempt with
		# it.  A fork bomb must stop at the fence's pids limit
		# (RLIMIT_NPROC in the sentry) with the fence alive: a crash
		# there is the limit passed.
		grep -q "^$1 " results && return 0
		_i=0
		while [ "$(grep -c 'fence e stopped (crash)' fenced.log)" -le \
		    "$_c0" ] && [ $_i -lt 100 ]; do
			sleep 0.1
			_i=$((_i + 1))
		done
		if [ "$(grep -c 'fence e stopped (crash)' fenced.log)" -gt \
		    "$_c0" ]; then
			if [ "$1" = res-memory ]; then
				echo "$1 resources blocked the fence ended" \
				    "(crash) under the host's limits" >> results
			else
				echo "$1 resources escaped the fence ended" \
				    "(crash): its pids limit did not hold" \
				    >> results
			fi
			echo "note: $1 ended fence e: $(cat exec.err)" >&2
			E_GONE=1
		fi
		;;
	*)
		run_escape e -a "$1"
		;;
	esac
}

# A second local user, on the host, attacks the running fence: its home
# by its host path, and its pid 1 as the host sees it (the agent;
# runsc's sandbox; QEMU).
second_user() {
	users_add 1 esc
	fpid=$($CTL show environment e | awk '$1 == "pid:" { print $2 }')
	[ -n "$fpid" ] || atf_fail "no pid for e: $(cat execs.log)"
	$(as_user "$(head -1 users.txt)") "$ESCAPE" -o "$(fenced_homes)/e" \
	    -t "$fpid" -a info-other-home,proc-agent-mem,proc-agent-environ,proc-agent-fds,proc-agent-channel,proc-ptrace-agent,proc-vm-readv,fs-agent-exe \
	    < /dev/null > user.out 2>&1
}

# escape_case KIND TIER BACKEND [IDS]: boot, attack, compare, stop, check.
escape_case() {
	kind=$1 tier=$2 backend=$3 only=${4:-}
	fenced_vars
	escape_require
	MARKER=m$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
	# The daemon's environment holds the marker: no fence may see it.
	export FENCED_ESCAPE_MARKER="host-env-$MARKER"
	head -c 4096 /dev/urandom > secret
	chmod 0600 secret
	listeners_start
	[ -f fenced.conf ] || fenced_conf > fenced.conf
	fenced_start
	# A pooled case (ESCAPE_POOL: the pool lines of fenced.conf): both
	# fences come out of the warm pool, so its pool must be full first.
	if [ -n "${ESCAPE_POOL:-}" ]; then
		for _t in $ESCAPE_POOL; do
			wait_until 20 pool_full "$_t" ||
			    atf_fail "pool $_t never filled: $($CTL show stats)"
		done
	fi
	# The fencer makes these at its start, which a vm daemon's
	# checks of its boot files can keep past the first answer.
	wait_until 60 test -d state/snapshots -a -d state/branches ||
	    atf_fail "the fencer never started: $(tail -3 fenced.log)"
	find state | grep -v -e '^state/fence-uids' -e '^state/runsc' \
	    -e '^state/daemons' | sort > state.before
	host_invariants before
	t0=$(date +%s)
	# Another fence, whose home the attack looks for.
	atf_check -o ignore $CTL boot o tier L1.5 memory 256M pids 128
	atf_check -o ignore $CTL boot e tier "$tier" backend "$backend" \
	    memory 512M pids 128
	E_LLABI=$($CTL show environment e | sed -n 's/^landlock: *ABI \([0-9]*\).*/\1/p')
	if [ -n "${ESCAPE_POOL:-}" ]; then
		atf_check -o match:"^pooled: *yes" $CTL show environment e
		atf_check -o match:"^pooled: *yes" $CTL show environment o
	fi
	tb=$(date +%s)
	h="$(fenced_homes)/e"
	cp "$ESCAPE" "$h/fence-escape"
	chown "$(stat -c %u:%g "$h")" "$h/fence-escape"
	chmod 0755 "$h/fence-escape"
	IHOME=$($CTL exec e -- printenv HOME) || atf_fail "no HOME in e"
	: > results
	: > execs.log
	if [ -n "$only" ]; then
		ids=$(echo "$only" | tr ',' ' ')
	else
		for c in filesystem processes identity kernel network \
		    information; do
			run_escape e -c "$c"
		done
		ids=$(escape_table "$kind" | awk '$2 == "resources" { print $1 }' |
		    tr '\n' ' ')
	fi
	# Memory and the fork bomb last: they may end a runsc fence.
	for a in $ids; do
		case "$a" in
		res-memory|res-forkbomb|res-forkbomb-userns) ;;
		*) run_one "$a" ;;
		esac
	done
	second_user
	for a in res-memory res-forkbomb res-forkbomb-userns; do
		echo " $ids " | grep -q " $a " || continue
		if [ -n "${E_GONE:-}" ]; then
			# The last attempt ended the fence: a new boot of it.
			atf_check -o ignore $CTL boot e tier "$tier" \
			    backend "$backend" memory 512M pids 128
			E_GONE=
		fi
		run_one "$a"
	done
	te=$(date +%s)
	echo "$kind: boot $((tb - t0)) s, attacks $((te - tb)) s" \
	    "(IHOME $IHOME)" >&2
	escape_judge "$kind" "$only"
	# One tier is enough for the denials (docs/denials.md).
	if [ "$kind" = L1.5 ] && [ -z "$only" ] && [ -z "${ESCAPE_POOL:-}" ]
	then
		escape_denials
	fi
	# A resource attempt may end a runsc fence just after it reported
	# (the sentry refused a thread): then it must have been a crash.
	if $CTL show environment e 2>/dev/null | grep -q '^state: *running'
	then
		atf_check -o match:"^stopped e" $CTL stop e
	elif [ "$kind" = vm-inner ] && escape_known res-forkbomb &&
	    grep -q 'fence e stopped (crash)' fenced.log; then
		known="${known}fence e ended (crash) during the attacks; "
	elif [ "$backend" != runsc ] ||
	    ! grep -q 'fence e stopped (crash)' fenced.log; then
		atf_fail "fence e ended during the attacks: $(grep 'fence e stopped' fenced.log | tail -1)"
	fi
	atf_check -o match:"^stopped o" $CTL stop o
	fenced_stop
	host_invariants after
	host_compare
	# The host's abstract socket accepts nothing from L1.5 on, its TCP
	# listener nothing from L2 on (L1.5 shares the network by design:
	# docs/escape.md).  Where a tier shares them, the listener must
	# have heard the attempt: else the check could not fail.
	if [ -z "$only" ]; then
		case $kind in
		L1|L1.5)
			grep -q "^accepted fenced-escape $MARKER\$" tcp.log ||
			    fail="${fail}$kind's connection did not reach the TCP listener; " ;;
		*)
			[ ! -s tcp.log ] || fail="${fail}the host's TCP \
listener on 127.0.0.1 accepted a connection ($(head -1 tcp.log)); " ;;
		esac
	fi
	if [ "$kind" = L1 ] && [ -z "$only" ]; then
		grep -q "^accepted fenced-escape $MARKER\$" abstract.log ||
		    fail="${fail}L1's connection did not reach the abstract listener; "
	elif [ "$kind" != L1 ] && { [ "$kind" != L1.5 ] ||
	    [ "${E_LLABI:-0}" -ge 6 ]; }; then
		[ ! -s abstract.log ] || fail="${fail}the host's abstract \
socket accepted a connection ($(head -1 abstract.log)); "
	fi
	if grep -v ' blocked ' user.out > user.bad || [ ! -s user.out ]; then
		fail="${fail}a second local user reached the fence: \
$(head -1 user.bad); "
	fi
	nothing_left
	[ -z "$fail" ] || atf_fail "$fail"
	# Only the named findings failed: an expected failure, which turns
	# into a failure once they hold (then the table must say so).
	if [ -n "$known" ]; then
		atf_expect_fail "open findings of docs/escape.md"
		atf_fail "$known"
	fi
}

# Whether attempt $1 is one of ESCAPE_KNOWN, the open findings of
# docs/escape.md a case names: its failure is reported as expected.
escape_known() {
	case " ${ESCAPE_KNOWN:-} " in
	*" $1 "*) return 0 ;;
	esac
	return 1
}

# Every expected attempt has a line; an escape where the table says
# blocked fails.  Writes the report to stderr.
escape_judge() {
	fail=
	known=
	jkind=$1 jonly=$2
	escape_table "$jkind" > expected
	# Abstract sockets are scoped from Landlock ABI 6 on (docs/design.md:
	# "where the kernel has it"); on an older kernel that wall is not
	# there at L1.5 and the attempt is the tier's by design.
	if [ "$jkind" = L1.5 ] && [ "${E_LLABI:-0}" -lt 6 ]; then
		sed -i 's/^net-host-abstract network blocked$/net-host-abstract network allowed/' expected
		echo "note: Landlock ABI ${E_LLABI:-0} scopes no abstract socket" >&2
	fi
	while read -r id class want; do
		[ -z "$jonly" ] || echo ",$jonly," | grep -q ",$id," || continue
		line=$(awk -v id="$id" '$1 == id' results | head -1)
		case "$want" in
		blocked|allowed) ;;
		*) fail="${fail}$id: no expectation for $jkind in docs/escape.md; "
		   continue ;;
		esac
		if [ -z "$line" ]; then
			if escape_known "$id"; then
				known="${known}$id: no line; "
			else
				fail="${fail}$id: no line; "
			fi
			continue
		fi
		got=$(echo "$line" | cut -d' ' -f3)
		detail=$(echo "$line" | cut -d' ' -f4-)
		if [ "$got" = escaped ] && [ "$want" = blocked ] &&
		    escape_known "$id"; then
			known="${known}$id escaped: $detail; "
		elif [ "$got" = escaped ] && [ "$want" = blocked ]; then
			fail="${fail}$id escaped: $detail; "
		elif [ "$got" = blocked ] && [ "$want" = allowed ]; then
			echo "note: $id allowed by the tier, blocked: $detail" >&2
		fi
	done < expected
	# A line of an attempt the table does not know is a stale table.
	awk '{ print $1 }' results | while read -r id; do
		grep -q "^$id " expected || echo "$id"
	done > unknown
	[ ! -s unknown ] || fail="${fail}not in docs/escape.md: $(tr '\n' ' ' \
	    < unknown); "
	echo "--- results" >&2
	cat results >&2
	echo "--- second local user" >&2
	cat user.out >&2
}

escape_cleanup() {
	kill -9 "$(cat listen.pid 2>/dev/null)" 2>/dev/null
	fenced_cleanup
}

atf_test_case l1 cleanup
l1_head() {
	atf_set descr "native L1: every attempt of fence-escape as docs/escape.md expects; host invariants hold; nothing left"
	atf_set require.user root
	atf_set timeout 600
}
l1_body() { escape_case L1 L1 native "$(atf_config_get escape_only "")"; }
l1_cleanup() { escape_cleanup; }

atf_test_case l15 cleanup
l15_head() {
	atf_set descr "native L1.5: every attempt of fence-escape as docs/escape.md expects; the host's listeners accept nothing; nothing left"
	atf_set require.user root
	atf_set timeout 600
}
l15_body() { escape_case L1.5 L1.5 native "$(atf_config_get escape_only "")"; }
l15_cleanup() { escape_cleanup; }

atf_test_case l2 cleanup
l2_head() {
	atf_set descr "native L2: every attempt of fence-escape as docs/escape.md expects; the host's listeners accept nothing; nothing left"
	atf_set require.user root
	atf_set timeout 600
}
l2_body() { escape_case L2 L2 native "$(atf_config_get escape_only "")"; }
l2_cleanup() { escape_cleanup; }

# The same attempts against fences taken from the warm pool (issue 15,
# docs/pool.md): the same table, nothing more allowed.
atf_test_case l15_pooled cleanup
l15_pooled_head() {
	atf_set descr "native L1.5 from the warm pool: every attempt of fence-escape as docs/escape.md expects of L1.5; the host's listeners accept nothing; nothing left"
	atf_set require.user root
	atf_set timeout 600
}
l15_pooled_body() {
	fenced_vars
	{ fenced_conf; echo "pool L1.5 2"; } > fenced.conf
	ESCAPE_POOL="L1.5:2"
	escape_case L1.5 L1.5 native "$(atf_config_get escape_only "")"
}
l15_pooled_cleanup() { escape_cleanup; }

atf_test_case l2_pooled cleanup
l2_pooled_head() {
	atf_set descr "native L2 from the warm pool: every attempt of fence-escape as docs/escape.md expects of L2; the host's listeners accept nothing; nothing left"
	atf_set require.user root
	atf_set timeout 600
}
l2_pooled_body() {
	fenced_vars
	{ fenced_conf; echo "pool L1.5 1"; echo "pool L2 1"; } > fenced.conf
	ESCAPE_POOL="L1.5:1 L2:1"
	escape_case L2 L2 native "$(atf_config_get escape_only "")"
}
l2_pooled_cleanup() { escape_cleanup; }

atf_test_case runsc cleanup
runsc_head() {
	atf_set descr "runsc: every attempt of fence-escape as docs/escape.md expects on gVisor; the host's listeners accept nothing; no runsc process, state or bundle left"
	atf_set require.user root
	atf_set timeout 600
}
runsc_body() {
	command -v runsc > /dev/null ||
	    atf_skip "runsc is not installed (scripts/deps.sh installs it)"
	escape_case runsc L1.5 runsc "$(atf_config_get escape_only "")"
}
runsc_cleanup() { escape_cleanup; }

# vm_conf [LINE]: skip without QEMU or the boot files, else fenced.conf
# of a vm daemon under TCG, LINE added.
vm_conf() {
	[ -x /usr/bin/qemu-system-x86_64 ] ||
	    atf_skip "QEMU is not installed (scripts/deps.sh installs it)"
	IMAGES=$(atf_config_get imagesdir)
	VMDIR=$(atf_config_get vmdir)
	[ -s "$VMDIR/fence-initrd.cpio" ] &&
	    [ -s "$IMAGES/fence-root.squashfs" ] ||
	    atf_skip "no vm boot files in $IMAGES and $VMDIR (make vm-images, as root; a sanitizer build has none)"
	fenced_vars
	{ fenced_conf; echo "vm on"; echo "vm accel tcg"
	  [ -z "${1:-}" ] || echo "$1"
	  sh "$TOPDIR/images/vm-conf" "$IMAGES" "$VMDIR"; } > fenced.conf ||
	    atf_fail "images/vm-conf"
}

atf_test_case vm cleanup
vm_head() {
	atf_set descr "vm: every attempt of fence-escape as docs/escape.md expects in a QEMU guest; the host's listeners accept nothing; no QEMU left"
	atf_set require.user root
	atf_set timeout 900
}
vm_body() {
	vm_conf
	escape_case vm L1.5 vm "$(atf_config_get escape_only "")"
}
vm_cleanup() { escape_cleanup; }

# The vm fence with the inner boundary (docs/vm.md, "The inner
# boundary"): fence-escape runs in gVisor inside the guest, its own
# column of docs/escape.md.  About a minute under TCG, every system call
# a ptrace stop of the sentry on an emulated CPU.
atf_test_case vm_inner cleanup
vm_inner_head() {
	atf_set descr "vm with inner runsc: every attempt of fence-escape as docs/escape.md expects in gVisor inside a QEMU guest, the fork bombs held with the fence alive; the host's listeners accept nothing; no QEMU left"
	atf_set require.user root
	atf_set timeout 900
}
vm_inner_body() {
	vm_conf "vm inner runsc"
	escape_case vm-inner L1.5 vm "$(atf_config_get escape_only "")"
}
vm_inner_cleanup() { escape_cleanup; }

atf_init_test_cases() {
	atf_add_test_case l1
	atf_add_test_case l15
	atf_add_test_case l2
	atf_add_test_case l15_pooled
	atf_add_test_case l2_pooled
	atf_add_test_case runsc
	atf_add_test_case vm
	atf_add_test_case vm_inner
}
