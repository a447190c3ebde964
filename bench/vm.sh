#!/bin/sh
# The vm rows of `make bench' (bench/run.sh): boot to agent ready of a
# vm fence (the fencer's own timing, as `show environment' reports it),
# and the exec round trip of /bin/true in a running one through the
# agent over virtio-serial (fencectl exec: one fencectl process per exec
# included), the accelerator named (docs/vm.md); then the same two of a
# vm fence with the inner boundary (`inner runsc': the commands in
# gVisor inside the guest), each against the plain vm fence's.  Few
# boots and execs (BENCH_VM_BOOTS, 3; BENCH_VM_EXECS, 20): under TCG a
# boot takes seconds, an exec in gVisor on ptrace a few hundred ms.
#	vm.sh BUILD CTLSOCK [RUNS]
# Each row also goes to the table (bench/rows.subr): the plain vm
# fence's boot against bwrap's, its exec against a native fence's
# through fencectl; the inner fence's against the plain vm fence's.
set -eu
# RUNS, the other benches' count, is not used: TCG's counts are small.
build=$1 sock=$2
ctl="$build/bin/fencectl -s $sock"
. bench/rows.subr
n=${BENCH_VM_BOOTS:-3}
m=${BENCH_VM_EXECS:-20}
case "$n.$m" in
[1-9]*.[1-9]*) ;;
*) echo "vm: BENCH_VM_BOOTS and BENCH_VM_EXECS: numbers from 1" >&2
   exit 1 ;;
esac
case "$n$m" in *[!0-9]*) echo "vm: not a number: $n, $m" >&2; exit 1 ;; esac
now_us() { echo $(($(date +%s%N) / 1000)); }
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

tmp=$(mktemp -d /tmp/fenced-bench-vm.XXXXXX)
trap '$ctl stop bench-vm >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
$ctl boot bench-vm backend vm inner none > "$tmp/boot.out" 2> "$tmp/err" || {
	echo "vm: skipped, $(cat "$tmp/err")"
	bench_rows_skip boot "vm fence boot to agent ready" "$(cat "$tmp/err")"
	exit 0
}
accel=$(awk '$1 == "accel:" { print $2 }' "$tmp/boot.out")
$ctl stop bench-vm > /dev/null

# vm_rows INNER NAME BOOTANCHOR EXECANCHOR: N boots of a vm fence with
# inner INNER, the last left running for M execs.
vm_rows() {
	_inner=$1 _name=$2
	rm -f "$tmp/boot" "$tmp/exec"
	i=0
	while [ $i -lt $n ]; do
		$ctl boot bench-vm backend vm inner "$_inner" > "$tmp/boot.out" ||
		    return 1
		awk '$1 == "timings:" { for (f = 1; f < NF; f++)
		    if ($f == "ready") print $(f + 1) }' "$tmp/boot.out" \
		    >> "$tmp/boot"
		i=$((i + 1))
		[ $i -eq $n ] || $ctl stop bench-vm > /dev/null
	done
	printf "%-44s %10s us median of %d\n" "$_name boot to agent ready" \
	    "$(median < "$tmp/boot")" $n
	bench_rows boot "$_name boot to agent ready" "$3" median "$tmp/boot"
	i=0
	while [ $i -lt $m ]; do
		t0=$(now_us)
		$ctl exec bench-vm -- /bin/true > /dev/null || return 1
		echo $(($(now_us) - t0)) >> "$tmp/exec"
		i=$((i + 1))
	done
	printf "%-44s %10s us median of %d\n" \
	    "$_name exec /bin/true (fencectl)" "$(median < "$tmp/exec")" $m
	bench_rows exec "$_name exec /bin/true (fencectl)" "$4" median \
	    "$tmp/exec"
	$ctl stop bench-vm > /dev/null
}

plain="vm ($accel) fence"
vm_rows none "$plain" "bwrap /bin/true (L1.5-like)" "fencectl exec /bin/true"
# The inner boundary where the guest can start it (docs/vm.md).
if ! $ctl boot bench-vm backend vm inner runsc > /dev/null 2> "$tmp/err"; then
	echo "vm inner runsc: skipped, $(cat "$tmp/err")"
	bench_rows_skip boot "vm ($accel) inner runsc fence boot to agent ready" \
	    "$(cat "$tmp/err")"
	exit 0
fi
$ctl stop bench-vm > /dev/null
vm_rows runsc "vm ($accel) inner runsc fence" \
    "$plain boot to agent ready" "$plain exec /bin/true (fencectl)"
