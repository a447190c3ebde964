#!/bin/sh
# The vm rows of `make bench' (bench/run.sh): boot to agent ready of a
# vm fence (the fencer's own timing, as `show environment' reports it),
# and the exec round trip of /bin/true in a running one through the
# agent over virtio-serial (fencectl exec: one fencectl process per exec
# included), the accelerator named (docs/vm.md).  Few boots: under TCG
# each takes seconds.
#	vm.sh BUILD CTLSOCK RUNS
# Each row also goes to the table (bench/rows.subr): the boot against
# bwrap's, the exec against a native fence's through fencectl.
set -eu
build=$1 sock=$2 runs=$3
ctl="$build/bin/fencectl -s $sock"
. bench/rows.subr
n=$((runs / 50)); [ $n -ge 3 ] || n=3
m=$((runs / 10)); [ $m -ge 10 ] || m=10
now_us() { echo $(($(date +%s%N) / 1000)); }
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

tmp=$(mktemp -d /tmp/fenced-bench-vm.XXXXXX)
trap '$ctl stop bench-vm >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
$ctl boot bench-vm backend vm > "$tmp/boot.out" 2> "$tmp/err" || {
	echo "vm: skipped, $(cat "$tmp/err")"
	bench_rows_skip boot "vm fence boot to agent ready" "$(cat "$tmp/err")"
	exit 0
}
accel=$(awk '$1 == "accel:" { print $2 }' "$tmp/boot.out")
$ctl stop bench-vm > /dev/null
i=0
while [ $i -lt $n ]; do
	$ctl boot bench-vm backend vm > "$tmp/boot.out" || exit 1
	awk '$1 == "timings:" { for (f = 1; f < NF; f++)
	    if ($f == "ready") print $(f + 1) }' "$tmp/boot.out" >> "$tmp/boot"
	i=$((i + 1))
	[ $i -eq $n ] || $ctl stop bench-vm > /dev/null
done
printf "%-44s %10s us median of %d\n" "vm ($accel) fence boot to agent ready" \
    "$(median < "$tmp/boot")" $n
bench_rows boot "vm ($accel) fence boot to agent ready" \
    "bwrap /bin/true (L1.5-like)" median "$tmp/boot"
i=0
while [ $i -lt $m ]; do
	t0=$(now_us)
	$ctl exec bench-vm -- /bin/true > /dev/null
	echo $(($(now_us) - t0)) >> "$tmp/exec"
	i=$((i + 1))
done
printf "%-44s %10s us median of %d\n" "vm ($accel) fence exec /bin/true (fencectl)" \
    "$(median < "$tmp/exec")" $m
bench_rows exec "vm ($accel) fence exec /bin/true (fencectl)" \
    "fencectl exec /bin/true" median "$tmp/exec"
