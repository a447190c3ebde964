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
# it a transient scope with Delegate=yes.
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
