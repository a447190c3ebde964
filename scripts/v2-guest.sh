#!/bin/sh
# Run inside a guest on a unified cgroup v2 hierarchy, as root, from the
# top of a built checkout (images/run-vm -d CHECKOUT sh CHECKOUT/scripts/
# v2-guest.sh MODE): a fenced with fences, and what the kernel holds for
# them, printed for a person to read (docs/fence.md, "cgroups").
#
# MODE unit: fenced alone in a cgroup of its own with the controllers
# handed to it, as systemd's Delegate=yes has it
# (/sys/fs/cgroup/system.slice/fenced-v2.service); MODE root: fenced
# started from a shell in the root cgroup; MODE shared: fenced started
# in a cgroup that holds another process (this shell), where it must
# refuse L1.5 and say why; MODE run: under systemd as pid 1 (images/init
# fenced.init=systemd), fenced started by make run's scripts/run.sh from
# a service's cgroup, which it shares with this shell, so run.sh gives
# it a transient scope with Delegate=yes; MODE unit-systemd: under
# systemd as pid 1, the unit, users and folders `make install' puts,
# started, used by root and a local user, and stopped (unit_systemd
# below).
set -u
mode=${1:-unit}
top=$(cd "$(dirname "$0")/.." && pwd)
BIN=$top/build/bin
CG=/sys/fs/cgroup
work=$(mktemp -d /tmp/v2-guest.XXXXXX)
cd "$work" || exit 1

say() { printf '== %s\n' "$*"; }
fail=0
check() {	# check WHAT GOT WANT
	if [ "$2" = "$3" ]; then
		printf 'ok   %s: %s\n' "$1" "$2"
	else
		printf 'FAIL %s: %s (want %s)\n' "$1" "$2" "$3"
		fail=1
	fi
}

# delegate DIR: DIR a cgroup below the root with memory, pids and cpu
# handed down to it, as systemd does for a unit with Delegate=yes.
delegate() {
	_p=$CG
	for _part in $(echo "${1#$CG/}" | tr / ' '); do
		echo "+memory +pids +cpu" > "$_p/cgroup.subtree_control"
		_p=$_p/$_part
		mkdir -p "$_p"
	done
}
pid=
trap '[ -z "$pid" ] || kill -TERM $pid 2>/dev/null' EXIT

# MODE unit-systemd: the unit `make install' puts, started by systemd
# as pid 1 (images/init fenced.init=systemd), as a Debian admin would.
# images/regress-vm stages `make install DESTDIR=build/install
# PREFIX=/usr' of the built tree on the host (the guest has no make);
# here it is copied over /, then systemd-sysusers and systemd-tmpfiles
# are run for fenced's files alone (they ran at boot, before the files
# were there), the unit started with the installed /etc/fenced.conf,
# and native L1, L1.5 and L2 fences booted as root and as a local user.
# docs/install.md, "The unit under systemd".
unit_systemd() {
	ts=$(date +%s)
	u=fenced.service
	ucg=$CG/system.slice/$u
	[ -d /run/systemd/system ] || {
		echo "FAIL mode unit-systemd needs systemd as pid 1" \
		    "(fenced.init=systemd)"
		return 1
	}
	[ -x "$top/build/install/usr/sbin/fenced" ] || {
		echo "FAIL no staged install in $top/build/install" \
		    "(images/regress-vm makes it)"
		return 1
	}
	say "systemd $(systemctl --version | head -1)"
	say "make install (staged on the host) copied over /"
	(cd "$top/build/install" && find . -type f | sort)
	cp -a "$top/build/install/." /
	check "_fenced before systemd-sysusers" \
	    "$(getent passwd _fenced >/dev/null && echo exists || echo none)" none
	systemd-sysusers /usr/lib/sysusers.d/fenced.conf
	check "_fenced made by systemd-sysusers" \
	    "$(getent passwd _fenced | cut -d: -f6,7)" \
	    "/nonexistent:/usr/sbin/nologin"
	systemd-tmpfiles --create /usr/lib/tmpfiles.d/fenced.conf
	check "state made by systemd-tmpfiles" \
	    "$(stat -c '%a %U %G' /var/lib/fenced 2>&1)" "711 root root"
	systemctl daemon-reload
	t0=$(date +%s)
	systemctl start $u
	CTL=/usr/bin/fencectl
	i=0
	until $CTL show stats > stats.out 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt 600 ] || ! systemctl -q is-active $u; then
			systemctl status --no-pager -l $u
			journalctl -b -u $u --no-pager | tail -30
			echo "FAIL fenced.service did not come up"
			return 1
		fi
		sleep 0.1
	done
	say "fenced.service answers on /run/fenced.sock after" \
	    "$(($(date +%s) - t0)) s"
	systemctl status --no-pager -l $u | sed -n '1,/CGroup:/p'
	main=$(systemctl show -p MainPID --value $u)
	check "unit active" "$(systemctl is-active $u)" active
	check "Delegate" "$(systemctl show -p Delegate --value $u)" yes
	check "ControlGroup" "$(systemctl show -p ControlGroup --value $u)" \
	    /system.slice/$u
	echo "MainPID $main: $(cat /proc/$main/cgroup)"
	case "$(sed -n 's/^0:://p' /proc/$main/cgroup)" in
	/system.slice/$u/*) check "fenced below the unit's cgroup" yes yes ;;
	*) check "fenced below the unit's cgroup" no yes ;;
	esac
	echo "$ucg/cgroup.subtree_control: $(cat $ucg/cgroup.subtree_control)"
	for p in $(awk '$2 == "pid" { print $3 }' stats.out); do
		printf '%s %s %s\n' "$p" "$(cat /proc/$p/comm)" \
		    "$(cat /proc/$p/cgroup)"
	done

	say "native L1, L1.5 and L2 fences, as root"
	pids=
	for t in L1 L1.5 L2; do
		k=n$(echo $t | tr -d L.)
		$CTL boot $k tier $t backend native > boot.out 2>&1
		check "boot $t" "$(sed -n 's/^state: *//p' boot.out)" running
		grep -q '^state: *running' boot.out || cat boot.out
		check "exec $t" "$($CTL exec $k -- echo ok 2>&1)" ok
		lvl=
		i=0
		while [ $i -lt 600 ]; do
			lvl=$($CTL show environment $k 2>&1 |
			    awk '$1 == "level:" { print $2 }
			    /^fencectl:/ { print "none" }')
			[ -z "$lvl" ] || [ "$lvl" = unmeasured ] || break
			sleep 0.1
			i=$((i + 1))
		done
		check "measured level of $k" "$lvl" $t
		[ "$lvl" = $t ] || $CTL show environment $k
		fcg=$(find $CG -type d -name "0.$k" 2>/dev/null)
		echo "$k's cgroup: ${fcg:-none}"
		case "$fcg" in
		$ucg/*) check "$k's cgroup below the unit's" yes yes ;;
		*) check "$k's cgroup below the unit's" "${fcg:-none}" \
		    "below $ucg" ;;
		esac
		[ -z "$fcg" ] || pids="$pids $(cat $fcg/cgroup.procs)"
	done

	# The agent's files API opens with openat2(RESOLVE_BENEATH), under
	# the unit's filters too.
	echo "put by root" > put.txt
	$CTL put n15 put.txt put.txt > put.out 2>&1 || cat put.out
	check "put and get in n15" "$($CTL get n15 put.txt - 2>&1)" \
	    "put by root"

	# runsc, which the guest has (gVisor, platform ptrace), under the
	# unit's filters and bounding set.
	if command -v runsc > /dev/null; then
		t1=$(date +%s)
		$CTL boot r1 backend runsc > boot.out 2>&1
		check "boot runsc" "$(sed -n 's/^state: *//p' boot.out)" running
		grep -q '^state: *running' boot.out || cat boot.out
		check "exec runsc" "$($CTL exec r1 -- echo ok 2>&1)" ok
		$CTL stop r1 > /dev/null 2>&1
		echo "runsc boot, exec and stop: $(($(date +%s) - t1)) s"
	fi

	say "a local user, $lu, through the socket"
	useradd --create-home --shell /bin/sh "$lu"
	U="setpriv --reuid=$(id -u $lu) --regid=$(id -g $lu) --clear-groups \
	    env HOME=/home/$lu $CTL"
	$U boot k tier L1.5 > boot.out 2>&1
	check "$lu boots a fence" "$(sed -n 's/^state: *//p' boot.out)" \
	    running
	grep -q '^state: *running' boot.out || cat boot.out
	check "$lu's fence runs as $lu" "$($U exec k -- id -un 2>&1)" "$lu"
	check "$lu's home" "$($U show environment k |
	    sed -n 's/^home: *//p')" "/home/$lu/sandbox-homes/k"
	check "$lu shows root's n1" "$($U show environment n1 > u.out 2>&1 &&
	    echo shown || echo refused)" refused
	echo "$lu: fencectl show environment n1: $(head -c 200 u.out)"
	check "$lu runs in root's n1" "$($U exec n1 -- echo ok > u.out 2>&1 &&
	    echo ran || echo refused)" refused
	check "$lu gets a file of root's n15" "$($U get n15 put.txt - \
	    > u.out 2>&1 && echo read || echo refused)" refused
	check "$lu stops root's n1" "$($U stop n1 > u.out 2>&1 &&
	    echo stopped || echo refused)" refused
	check "root's n1 still running" "$($CTL show environment n1 |
	    sed -n 's/^state: *//p')" running
	check "$lu lists own fences only" "$($U show environments 2>&1 |
	    grep -c -w -E 'n1|n15|n2')" 0
	fcg=$(find $CG -type d -name "$(id -u $lu).k" 2>/dev/null)
	echo "$lu's fence's cgroup: ${fcg:-none}"
	[ -z "$fcg" ] || pids="$pids $(cat $fcg/cgroup.procs)"

	# Why the unit has neither RestrictSUIDSGID= nor ProtectHostname=
	# (etc/fenced.service.in): what each does to openat2(2) and to
	# sethostname(2) in a new UTS namespace, as the fencer makes them.
	cat > sys.py <<'PY'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def res(r):
    return "ok" if r >= 0 else os.strerror(ctypes.get_errno())
how = (ctypes.c_uint64 * 3)(os.O_PATH, 0, 0)
print("openat2:", res(libc.syscall(437, -100, b"/", ctypes.byref(how), 24)),
    end="; ")
r = libc.unshare(0x04000000)
print("sethostname in a new UTS namespace:",
    res(libc.sethostname(b"probe", 5)) if r == 0 else "no unshare")
PY
	for o in RestrictSUIDSGID ProtectHostname; do
		cat > /run/systemd/system/v2-guest-$o.service <<UNIT
[Service]
Type=oneshot
ExecStart=/usr/bin/python3 $work/sys.py
StandardOutput=file:$work/$o.out
$o=yes
UNIT
	done
	systemctl daemon-reload
	for o in RestrictSUIDSGID ProtectHostname; do
		systemctl start v2-guest-$o.service
		echo "$o=yes: $(cat $work/$o.out 2>&1)"
		rm -f /run/systemd/system/v2-guest-$o.service
	done
	echo "without them: $(python3 sys.py 2>&1)"

	say "systemd-analyze security $u (live)"
	systemd-analyze security --no-pager $u > sec.out 2>&1
	tail -3 sec.out
	systemd-analyze security --no-pager --offline=yes \
	    /usr/lib/systemd/system/$u > off.out 2>&1
	score=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' \
	    sec.out)
	off=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' \
	    off.out)
	echo "exposure: live ${score:-none}, offline ${off:-none}"
	check "live exposure no worse than offline" \
	    "$(echo "${score:-99} ${off:-0}" | awk '{ print ($1 <= $2) }')" 1
	diff off.out sec.out | grep '^[<>]' | head -20

	say "systemctl stop $u"
	echo "fences' processes before:" $pids
	systemctl stop $u
	check "unit inactive" "$(systemctl is-active $u)" inactive
	check "Result" "$(systemctl show -p Result --value $u)" success
	check "main exit status" \
	    "$(systemctl show -p ExecMainStatus --value $u)" 0
	left=
	for p in $pids; do
		[ ! -d /proc/$p ] || left="$left $p"
	done
	check "fence processes left" "$left" ""
	check "unit's cgroup" "$(test -d $ucg && cat $ucg/cgroup.procs ||
	    echo gone)" gone
	check "fenced cgroups left" "$(find $CG -type d -name 'fenced.*' \
	    2>/dev/null)" ""
	say "the journal's last lines"
	journalctl -b -u $u --no-pager -o short-monotonic | tail -12
	userdel -r "$lu" 2>/dev/null
	say "v2-guest $mode took $(($(date +%s) - ts)) s"
	[ $fail -eq 0 ] && say "v2-guest $mode: all checks passed" ||
	    say "v2-guest $mode: some checks FAILED"
	return $fail
}
if [ "$mode" = unit-systemd ]; then
	lu=fencedu$$
	unit_systemd
	exit $?
fi

say "kernel $(uname -r), cgroup mounts:"
grep cgroup /proc/self/mountinfo
say "root cgroup.controllers: $(cat $CG/cgroup.controllers)"
sh "$top/scripts/user.sh" 2>&1
# fenced refuses a home below a directory others may write to.
say "modes: $(stat -c '%n %a' / /var /var/lib | tr '\n' ' ')"
[ "$(stat -c %a /)" = 755 ] || { chmod 755 /; say "chmod 755 /"; }
mkdir -p -m 0700 /var/lib/v2-guest-homes
cat > fenced.conf <<CONF
socket "$work/ctl.sock"
state "$work/state"
homes "/var/lib/v2-guest-homes"
user "_fenced"
listen on 127.0.0.1 port 7790
probe dns "localhost"
probe tcp "127.0.0.1:1"
CONF
CTL="$BIN/fencectl -s $work/ctl.sock"

case $mode in
unit)
	svc=$CG/system.slice/fenced-v2.service
	delegate "$svc"
	sh -c "echo \$\$ > $svc/cgroup.procs; exec $BIN/fenced -d -v \
	    -f $work/fenced.conf" > fenced.log 2>&1 &
	;;
root)
	echo $$ > $CG/cgroup.procs
	"$BIN/fenced" -d -v -f "$work/fenced.conf" > fenced.log 2>&1 &
	;;
run)
	[ -d /run/systemd/system ] || {
		echo "FAIL mode run needs systemd as pid 1 (fenced.init=systemd)"
		exit 1
	}
	echo "this shell's cgroup: $(cat /proc/self/cgroup)"
	sh "$top/scripts/run.sh" "$top/build" -v -f "$work/fenced.conf" \
	    > fenced.log 2>&1 &
	;;
shared)
	# Not the root cgroup, which v2's no-internal-processes rule spares.
	shr=$CG/system.slice/v2-guest-shared.scope
	delegate "$shr"
	echo $$ > "$shr/cgroup.procs"
	"$BIN/fenced" -d -v -f "$work/fenced.conf" > fenced.log 2>&1 &
	;;
esac
pid=$!
i=0
until $CTL show stats > stats.out 2>/dev/null; do
	i=$((i + 1))
	if [ $i -gt 300 ] || [ ! -d /proc/$pid ]; then
		cat fenced.log
		echo "FAIL fenced did not come up"
		exit 1
	fi
	sleep 0.1
done
say "fenced up (mode $mode); its processes and their cgroups:"
for p in $(awk '$2 == "pid" { print $3 }' stats.out); do
	printf '%s %s %s\n' "$p" "$(cat /proc/$p/comm)" "$(cat /proc/$p/cgroup)"
done
id=$(ls state/daemons | head -1)
say "daemon id $id"
if [ "$mode" = run ]; then
	head -3 fenced.log
	scope=$(sed -n 's|^0::.*/\([^/]*\.scope\)/fenced\..*|\1|p' /proc/$pid/cgroup)
	echo "fenced's unit: ${scope:-none}; $(systemctl show -p Delegate \
	    -p DelegateControllers "${scope:-none}" 2>&1 | tr '\n' ' ')"
	check "fenced in a scope of its own with Delegate=yes" \
	    "$(systemctl show -p Delegate --value "${scope:-none}" 2>&1)" yes
fi

if [ "$mode" = shared ]; then
	$CTL boot k1 tier L1.5 > boot.out 2>&1
	echo "boot L1.5 exit $?: $(cat boot.out)"
	grep -q 'no-cgroups' boot.out && check "L1.5 refused" yes yes ||
	    check "L1.5 refused" no yes
	$CTL boot k0 tier L1 > boot.out 2>&1
	rc=$?
	echo "boot L1 exit $rc: $(cat boot.out)"
	check "L1 booted" "$rc" 0
	grep -i cgroup fenced.log
	kill -TERM $pid; wait $pid; pid=
	echo $$ > $CG/cgroup.procs && rmdir "$shr"
	[ $fail -eq 0 ] && say "v2-guest $mode: all checks passed" ||
	    say "v2-guest $mode: some checks FAILED"
	exit $fail
fi

$CTL boot k1 tier L1.5 memory 64M pids 64 cpu 0.2 > boot.out 2>&1
rc=$?
echo "boot exit $rc"; cat boot.out
if [ $rc -ne 0 ]; then
	cat fenced.log
	exit 1
fi
own=$(sed -n 's/^0:://p' /proc/$pid/cgroup)
own=${own%/fenced.$id/daemon}
own=${own%/}
fcg=$CG$own/fenced.$id/0.k1
say "the fence's cgroup $fcg"
ls "$CG$own/fenced.$id"
echo "$CG$own/cgroup.subtree_control: $(cat $CG$own/cgroup.subtree_control)"
echo "$CG$own/fenced.$id/cgroup.subtree_control:" \
    "$(cat $CG$own/fenced.$id/cgroup.subtree_control)"
for f in memory.max memory.swap.max pids.max cpu.max cgroup.procs; do
	printf '%s: %s\n' "$f" "$(cat "$fcg/$f" | tr '\n' ' ')"
done
check memory.max "$(cat $fcg/memory.max)" 67108864
check pids.max "$(cat $fcg/pids.max)" 64
check cpu.max "$(cat $fcg/cpu.max)" "20000 100000"
[ -f "$fcg/memory.swap.max" ] &&
    check memory.swap.max "$(cat $fcg/memory.swap.max)" 0
a1=$(head -1 $fcg/cgroup.procs)
echo "the fence's pid 1 (host pid $a1): $(cat /proc/$a1/cgroup)"

say "OOM: 200 MiB in a fence of 64 MiB"
$CTL exec k1 timeout 60000 -- python3 -c \
    'b = b"x" * (200 << 20); print("not killed", len(b))' > oom.out 2>&1
echo "exec exit $?"; cat oom.out
echo "memory.events: $(tr '\n' ' ' < $fcg/memory.events)"
check "oom_kill counted" \
    "$(awk '$1 == "oom_kill" { print ($2 > 0) }' $fcg/memory.events)" 1
check "fence's pid 1 alive" "$(test -n "$a1" && test -d /proc/$a1 && echo yes)" yes
for p in $(awk '$2 == "pid" { print $3 }' stats.out); do
	check "daemon process $p alive" "$(test -d /proc/$p && echo yes)" yes
done
$CTL show environment k1 | grep -E '^(state|stopped|reason)'
dmesg 2>/dev/null | grep -iE 'killed process|oom-kill' | tail -3

say "fork bomb in a fence of pids 64 (fence k2, memory 256M: pids alone stop it)"
$CTL boot k2 tier L1.5 memory 256M pids 64 cpu 1 > boot2.out 2>&1 ||
    cat boot2.out
bcg=$CG$own/fenced.$id/0.k2
$CTL exec k2 timeout 60000 -- sh -c \
    'while :; do sleep 60 & done 2>/dev/null' > bomb.out 2>&1 &
bp=$!
i=0
while [ $i -lt 50 ]; do
	sleep 1
	m=$(awk '$1 == "max" { print $2 }' $bcg/pids.events)
	[ "${m:-0}" -gt 0 ] && break
	i=$((i + 1))
done
echo "after ${i} s: pids.current $(cat $bcg/pids.current)," \
    "pids.events: $(tr '\n' ' ' < $bcg/pids.events)," \
    "memory.events: $(tr '\n' ' ' < $bcg/memory.events)"
check "pids held at 64" "$(($(cat $bcg/pids.current) <= 64))" 1
check "pids.events max > 0" \
    "$(awk '$1 == "max" { print ($2 > 0) }' $bcg/pids.events)" 1
check "k2 still running" "$($CTL show environment k2 | sed -n 's/^state: *//p')" running
kill $bp 2>/dev/null; wait $bp 2>/dev/null; echo "bomb exec: $(head -c 300 bomb.out)"
$CTL stop k2

say "pid 1 of a fence whose memory cgroup counted an OOM kill dies"
kill -KILL "$a1"
i=0
while [ $i -lt 50 ] && $CTL show environment k1 | grep -q '^state: *running'
do
	sleep 0.2
	i=$((i + 1))
done
$CTL show environment k1 | grep '^state'
check "state" "$($CTL show environment k1 | sed -n 's/^state: *//p')" \
    "stopped (out-of-memory)"

say "cpu: a busy loop in a fence of 0.2 cpu"
$CTL stop k1 > /dev/null 2>&1
$CTL boot k1 tier L1.5 memory 64M pids 64 cpu 0.2 > boot.out 2>&1 ||
    cat boot.out
before=$(awk '$1 == "nr_throttled" { print $2 }' $fcg/cpu.stat)
$CTL exec k1 timeout 8000 -- sh -c 'while :; do :; done' > cpu.out 2>&1
after=$(awk '$1 == "nr_throttled" { print $2 }' $fcg/cpu.stat)
echo "cpu.stat: $(tr '\n' ' ' < $fcg/cpu.stat)"
echo "nr_throttled $before -> $after"
check "throttled" "$((after > before))" 1
usage=$(awk '$1 == "usage_usec" { print $2 }' $fcg/cpu.stat)
echo "usage_usec $usage over about 8 s (0.2 cpu is about 1600000)"

say "stop: the fence's cgroup goes"
$CTL stop k1
sleep 0.5
check "fence cgroup removed" "$(test -d $fcg && echo left || echo gone)" gone

kill -TERM $pid
wait $pid
echo "fenced exit $?"
pid=
# The daemon took back what it handed down and removed its folder,
# leaf and all: nothing of it is left, in the root cgroup, in a unit's
# and in a scope's alike (docs/fence.md, "The daemon on cgroup v2").
say "after exit: $(ls -d $CG$own/fenced.* 2>/dev/null | tr '\n' ' ')"
check "daemon's folder removed" "$(test -d $CG$own/fenced.$id && echo left ||
    echo gone)" gone
check "cgroups of fenced left" "$(find $CG -type d -name "fenced.$id" \
    2>/dev/null)" ""
# As a service manager does once the unit is gone.
[ "$mode" != unit ] || { rmdir "$svc" 2>/dev/null;
    check "unit's cgroup removable" "$(test -d $svc && echo left ||
    echo gone)" gone; }
say "log lines about cgroups:"
grep -i cgroup fenced.log | head -20
[ $fail -eq 0 ] && say "v2-guest $mode: all checks passed" ||
    say "v2-guest $mode: some checks FAILED"
exit $fail
