#!/bin/bash
# The snapshot rows of `make bench' (bench/run.sh; docs/snapshots.md,
# "Measured"), on the daemon run.sh started, side by side in one run:
#   1. a snapshot of a home of 1000 files, 100 MiB (fencectl snapshot,
#      and the fencer's own time, the "ms" of its answer) against
#      `cp -a' of the same home by root beside the daemon's state (on
#      the filesystem the snapshots go to); the disk both use;
#   2. a native branch (boot KEY from SRC@SNAP) to its first exec's
#      answer, against a boot of a new key taken from the warm pool
#      (`pool L1.5' of run.sh's configuration) to its first answer, in
#      alternate runs, each from a full pool; bwrap and the fork+exec
#      floor between them.  Target: the branch at most 5 ms over the
#      pooled boot (medians);
#   3. the same with backend runsc, against a cold runsc boot of a new
#      key to its first answer;
#   4. 100 branches of one snapshot, booted one after the other and 8
#      at a time, against as many plain boots of new keys: the wall time
#      (target: the branches within 1 s), the fencer's request->agent
#      ready of each boot, and each fence's memory (its memory cgroup's
#      usage, the Rss of its processes) and each branch's disk (du of
#      its folder and of its upper layer) with a lot up;
#   5. `exec ... undo' of rm -rf ~/* on the 100 MiB home (and the
#      fencer's time of its undo mark) against the same exec without
#      undo; `undo' and `restore' of the snapshot (and the fencer's time
#      of each), which empty the home and copy into it, against root's
#      rm -rf of a copy of the home and cp -a.
# Every key is new (a uid recorded, a home or a branch made), so that a
# branch and what it is held against pay for the same.  Sizes: RUNS / 20
# snapshots and runsc pairs, RUNS / 2 native pairs, RUNS / 50 undo
# rounds (3 at least each), BENCH_BRANCHES (100) branches a lot.
#	snap.sh BUILD CTLSOCK STATE LOG RUNS
# LOG is the daemon's log (the fencer's "undo mark ... us" lines).
# bash, not sh: $EPOCHREALTIME reads the clock without a fork, so a row
# is the command's time, not date(1)'s as well.
set -eu
build=$1 sock=$2 state=$3 log=$4 runs=$5
ctl="$build/bin/fencectl -s $sock"
. bench/rows.subr
sec=snapshots
nsnap=$((runs / 20)); [ $nsnap -ge 3 ] || nsnap=3
npair=$((runs / 2)); [ $npair -ge 10 ] || npair=10
nrunsc=$((runs / 20)); [ $nrunsc -ge 3 ] || nrunsc=3
nundo=$((runs / 50)); [ $nundo -ge 3 ] || nundo=3
nbr=${BENCH_BRANCHES:-100}
par=8
owner=$(id -u)
src=snap-src
bw=(/usr/bin/bwrap --unshare-pid --unshare-ipc --unshare-uts
    --unshare-cgroup-try --die-with-parent --new-session
    --ro-bind /usr /usr --ro-bind /etc /etc --symlink usr/lib /lib
    --symlink usr/lib64 /lib64 --symlink usr/bin /bin --proc /proc
    --dev /dev --tmpfs /tmp --tmpfs /run --tmpfs /var --tmpfs /home
    --cap-drop ALL /bin/true)
BWRAP="bwrap /bin/true (L1.5-like), beside the branches"
FLOOR="fork+exec /bin/true, beside the branches"
CP="cp -a of the same home beside the store (root)"
RMCP="rm -rf of such a copy, then cp -a (root)"

# Microseconds now: $EPOCHREALTIME without its decimal point (a comma
# in some locales).
now() { t=${EPOCHREALTIME//[!0-9]/}; }
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# The "NNN.N ms" of a snapshot answer, in us.
ans_us() { sed -n 's/.* \([0-9][0-9]*\.[0-9]\) ms.*/\1/p' "$1" |
    awk '{ printf "%d\n", $1 * 1000 }'; }
# A value of fencectl show environment's "timings:" line.
timing() { awk -v k="$2" '$1 == "timings:" { for (f = 1; f < NF; f++)
    if ($f == k) print $(f + 1) }' "$1"; }
ms() { awk -v v="$1" 'BEGIN { printf "%.1f", v / 1000 }'; }

tmp=$(mktemp -d /tmp/fenced-bench-snap.XXXXXX)
cleanup() {
	$ctl show environments 2>/dev/null |
	    awk '$1 ~ /^snap-/ && $5 != "stopped" { print $1 }' > "$tmp/left" || true
	xargs -r -P $par -n 1 $ctl stop < "$tmp/left" > /dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# The pool full again (5 s at most): 0 if it is, 1 if there is none.
pool_size=$($ctl show stats | awk '$1 == "pool" && $2 == "L1.5:" { print $5 }')
pool_full() {
	[ -n "$pool_size" ] || return 1
	_i=0
	until $ctl show stats | grep -q "^pool L1.5: $pool_size of $pool_size ready"; do
		_i=$((_i + 1)); [ $_i -lt 250 ] || return 1
		sleep 0.02
	done
}

# The source: a native L1.5 fence, its home 1000 files of random bytes,
# 100 MiB in all (104857600 bytes; the last file 400 bytes short).
$ctl boot $src > "$tmp/out"
home=$(awk '$1 == "home:" { print $2 }' "$tmp/out")
nfiles=$($ctl exec $src timeout 60000 -- sh -c 'cd && head -c 104857600 \
    /dev/urandom | split -b 104858 -a 3 -d - f && set -- * && echo $#')
[ "$nfiles" = 1000 ] || { echo "snap: the home has $nfiles files" >&2; exit 1; }
count() { $ctl exec "$1" -- sh -c 'cd && set -- * && echo $#'; }

# 1. Snapshots, each deleted after (not timed), and cp -a of the home
# by root, in alternate runs; the copy goes beside the daemon's state,
# on the filesystem the snapshots go to.
cpdir=$(dirname "$state")/snap-bench-cp.d
: > "$tmp/snap"; : > "$tmp/snapown"; : > "$tmp/cp"; : > "$tmp/rmcp"
i=0
while [ $i -lt $nsnap ]; do
	now; t0=$t
	$ctl snapshot $src t$i > "$tmp/out"
	now; echo $((t - t0)) >> "$tmp/snap"
	ans_us "$tmp/out" >> "$tmp/snapown"
	$ctl delete snapshot $src t$i > /dev/null
	now; t0=$t
	cp -a "$home" "$cpdir"
	now; c=$((t - t0))
	echo $c >> "$tmp/cp"
	now; t0=$t
	rm -rf "$cpdir"
	now; echo $((t - t0 + c)) >> "$tmp/rmcp"
	i=$((i + 1))
done
$ctl snapshot $src s1 > "$tmp/out"
how=$(sed -n 's/.*files, \([a-z]*\),.*/\1/p' "$tmp/out")
home_kib=$(du -sk "$home" | awk '{ print $1 }')
snap_kib=$(du -sk "$state/snapshots/$owner/$src@s1" | awk '{ print $1 }')
printf "%-56s %10s us median of %d (%s)\n" "snapshot of 1000 files, 100 MiB" \
    "$(median < "$tmp/snap")" $nsnap "$how"
printf "%-56s %10s us\n" "  the fencer's own" "$(median < "$tmp/snapown")"
printf "%-56s %10s us\n" "$CP" "$(median < "$tmp/cp")"
printf "%-56s %10s us\n" "$RMCP" "$(median < "$tmp/rmcp")"
printf "%-56s %10s KiB (the home %s KiB)\n" "a snapshot's disk use" \
    "$snap_kib" "$home_kib"
bench_rows $sec "snapshot of a 100 MiB home, 1000 files (fencectl, $how)" \
    "$CP" median "$tmp/snap"
bench_rows $sec "snapshot, the fencer's own time (its answer's ms)" \
    "$CP" median "$tmp/snapown"
bench_rows $sec "$CP" "" median "$tmp/cp"
bench_rows $sec "$RMCP" "" median "$tmp/rmcp"
bench_value_row $sec "the home's disk use (du)" "" MiB \
    "$(awk -v k="$home_kib" 'BEGIN { printf "%.1f", k / 1024 }')"
bench_value_row $sec "a snapshot's disk use (du)" "the home's disk use (du)" \
    MiB "$(awk -v k="$snap_kib" 'BEGIN { printf "%.1f", k / 1024 }')"

# 2. Native: a pooled boot of a new key and a branch, each to its first
# exec's answer (which waits for the fence's first verdict), in
# alternate runs from a full pool; bwrap and the floor twice a run.
for f in pboot pfirst pagent bboot bfirst bagent bw floor; do
	: > "$tmp/$f"
done
notpooled=0
pooled=1
[ -n "$pool_size" ] || pooled=0
one() {	# KEY PREFIX BOOT-ARGS...: one boot and its first exec, timed
	_k=$1 _p=$2; shift 2
	[ $pooled -eq 0 ] || pool_full || pooled=0
	now; t0=$t
	$ctl boot $_k "$@" > "$tmp/out"
	now; t1=$t
	$ctl exec $_k -- /bin/true
	now
	echo $((t1 - t0)) >> "$tmp/${_p}boot"
	echo $((t - t0)) >> "$tmp/${_p}first"
	timing "$tmp/out" ready >> "$tmp/${_p}agent"
	grep -q '^pooled: *yes' "$tmp/out" || notpooled=$((notpooled + 1))
	$ctl stop $_k > /dev/null
}
i=0
while [ $i -lt $npair ]; do
	one snap-p$i p
	one snap-b$i b from $src@s1
	for j in 1 2; do
		now; t0=$t
		"${bw[@]}" > /dev/null 2>&1
		now; echo $((t - t0)) >> "$tmp/bw"
		now; t0=$t
		/bin/true
		now; echo $((t - t0)) >> "$tmp/floor"
	done
	i=$((i + 1))
done
# A branch booted again (its key's branch kept) has the snapshot's files.
$ctl boot snap-b0 > /dev/null
[ "$(count snap-b0)" = 1000 ] ||
    { echo "snap: a branch's home lacks the snapshot's files" >&2; exit 1; }
$ctl stop snap-b0 > /dev/null
pf=$(median < "$tmp/pfirst") bf=$(median < "$tmp/bfirst")
pa=$(median < "$tmp/pagent") ba=$(median < "$tmp/bagent")
d=$((bf - pf))
if [ $d -le 5000 ]; then
	verdict="met ($(ms $d) ms)"
else
	verdict="not met: $(ms $d) ms, $(ms $((d - 5000))) ms over"
fi
for r in "pooled boot of a new key to first answer:$pf" \
    "native branch to first answer:$bf" \
    "  pooled, the fencer's request->agent ready:$pa" \
    "  branch, the fencer's request->agent ready:$ba"; do
	printf "%-56s %10s us median of %d\n" "${r%:*}" "${r##*:}" $npair
done
printf "%-56s %10s us median of %d\n" "$BWRAP" "$(median < "$tmp/bw")" \
    $((npair * 2))
printf "%-56s %10s us median of %d\n" "$FLOOR" "$(median < "$tmp/floor")" \
    $((npair * 2))
[ $notpooled -eq 0 ] ||
    echo "note: $notpooled of $((npair * 2)) boots found no pool fence ready"
echo "branch over pooled, to first answer: $verdict"
P="pooled L1.5 boot of a new key to first exec answered (fencectl)"
B="native branch, boot from SRC@s1 to first exec answered (fencectl)"
if [ $notpooled -gt 0 ]; then
	P="$P, $notpooled of $((npair * 2)) boots not from the pool"
fi
bench_rows $sec "$P" "$BWRAP" median "$tmp/pfirst"
bench_rows $sec "$B" "$BWRAP" median "$tmp/bfirst"
bench_rows $sec "pooled: the boot alone" "$BWRAP" median "$tmp/pboot"
bench_rows $sec "branch: the boot alone" "$BWRAP" median "$tmp/bboot"
bench_rows $sec "pooled: the fencer's request->agent ready" "$BWRAP" median \
    "$tmp/pagent"
bench_rows $sec "branch: the fencer's request->agent ready" "$BWRAP" median \
    "$tmp/bagent"
if [ $d -ge 0 ]; then
	bench_value_row $sec "target, a native branch at most 5 ms over a pooled boot to first answer: $verdict" \
	    "" "ms more" "$(ms $d)"
else
	bench_value_row $sec "target, a native branch at most 5 ms over a pooled boot to first answer: $verdict" \
	    "" "ms less" "$(ms $((-d)))"
fi
bench_rows $sec "$BWRAP" "$FLOOR" median "$tmp/bw"
bench_rows $sec "$FLOOR" "" median "$tmp/floor"

# 3. runsc: a cold boot of a new key and a branch, each to its first
# answer, in alternate runs.
RC="runsc cold boot of a new key to first exec answered (fencectl)"
RB="runsc branch, boot from SRC@s1 to first exec answered (fencectl)"
runsc_skip() {
	echo "runsc: skipped, $1"
	bench_rows_skip $sec "$RB" "$1"
}
if ! command -v runsc > /dev/null; then
	runsc_skip "runsc is not installed (scripts/deps.sh)"
elif ! $ctl boot snap-rprobe backend runsc > /dev/null 2> "$tmp/err"; then
	runsc_skip "a runsc fence does not boot here: $(head -1 "$tmp/err")"
else
	$ctl stop snap-rprobe > /dev/null
	for f in rcboot rcfirst rcagent rbboot rbfirst rbagent; do
		: > "$tmp/$f"
	done
	i=0
	while [ $i -lt $nrunsc ]; do
		one snap-rc$i rc backend runsc
		one snap-rb$i rb backend runsc from $src@s1
		i=$((i + 1))
	done
	$ctl boot snap-rb0 backend runsc > /dev/null
	[ "$(count snap-rb0)" = 1000 ] || { echo "snap: a runsc branch's" \
	    "home lacks the snapshot's files" >&2; exit 1; }
	$ctl stop snap-rb0 > /dev/null
	printf "%-56s %10s us median of %d\n" "$RC" "$(median < "$tmp/rcfirst")" \
	    $nrunsc
	printf "%-56s %10s us median of %d\n" "$RB" "$(median < "$tmp/rbfirst")" \
	    $nrunsc
	bench_rows $sec "$RB" "$RC" median "$tmp/rbfirst"
	bench_rows $sec "$RC" "" median "$tmp/rcfirst"
	bench_rows $sec "runsc branch: the fencer's request->agent ready" \
	    "runsc cold: the fencer's request->agent ready" median \
	    "$tmp/rbagent"
	bench_rows $sec "runsc cold: the fencer's request->agent ready" "" \
	    median "$tmp/rcagent"
fi

# 4. $nbr branches of one snapshot, one after the other and $par at a
# time (xargs), each boot answered once its agent is ready; and as many
# plain boots of new keys the same ways, lot for lot in turn: the wall
# time of each lot, its boots' request->agent ready (the fencer's) and
# how many took a pool fence.  Then, with a lot up and idle 2 s (first
# probes done), each fence's memory and each branch's disk.
seq 0 $((nbr - 1)) > "$tmp/keys"
# lot PREFIX PAR [BOOT-ARGS...]: $nbr boots of keys PREFIX0...; the wall
# time in $wall, the answers in $tmp/PREFIX (appended: each fencectl
# writes its answer at its exit, in one write).
lot() {
	_pre=$1 _par=$2; shift 2
	: > "$tmp/$_pre"
	now; t0=$t
	if [ $_par -eq 1 ]; then
		while read -r i; do
			$ctl boot $_pre$i "$@" >> "$tmp/$_pre"
		done < "$tmp/keys"
	else
		xargs -P $_par -I{} $ctl boot $_pre{} "$@" < "$tmp/keys" \
		    >> "$tmp/$_pre"
	fi
	now; wall=$((t - t0))
	timing "$tmp/$_pre" ready > "$tmp/$_pre.ready"
	grep -c '^pooled: *yes' "$tmp/$_pre" > "$tmp/$_pre.pooled" || true
}
unlot() { sed "s/^/$1/" "$tmp/keys" | xargs -P $par -n 1 $ctl stop > /dev/null; }
# KEY: its memory cgroup's usage and its processes' Rss, in KiB.
memory() {
	_pid=$($ctl show environment "$1" | awk '$1 == "pid:" { print $2 }')
	_cg=$(awk -F: '$2 == "memory" { print "/sys/fs/cgroup/memory" $3 }
	    $1 == "0" && $2 == "" { v2 = "/sys/fs/cgroup" $3 }
	    END { if (v2 != "") print v2 }' "/proc/$_pid/cgroup" | head -1)
	_use=$(cat "$_cg/memory.usage_in_bytes" 2>/dev/null ||
	    cat "$_cg/memory.current")
	_rss=0
	for _p in $(cat "$_cg/cgroup.procs"); do
		_r=$(awk '$1 == "Rss:" { print $2 }' "/proc/$_p/smaps_rollup" \
		    2>/dev/null || echo 0)
		_rss=$((_rss + ${_r:-0}))
	done
	echo "$((_use / 1024)) $_rss"
}
lot snap-s 1 from $src@s1; w_bs=$wall; unlot snap-s
lot snap-ps 1; w_ps=$wall; unlot snap-ps
lot snap-c $par from $src@s1; w_bc=$wall
sleep 2
: > "$tmp/mem"; : > "$tmp/disk"; : > "$tmp/upper"
while read -r i; do
	memory snap-c$i >> "$tmp/mem"
	du -sk "$state/branches/$owner/snap-c$i" | awk '{ print $1 }' \
	    >> "$tmp/disk"
	du -sk "$state/branches/$owner/snap-c$i/upper" | awk '{ print $1 }' \
	    >> "$tmp/upper"
done < "$tmp/keys"
unlot snap-c
lot snap-pc $par; w_pc=$wall
sleep 2
: > "$tmp/pmem"
while read -r i; do
	memory snap-pc$i >> "$tmp/pmem"
done < "$tmp/keys"
unlot snap-pc
use=$(awk '{ print $1 }' "$tmp/mem" | median)
rss=$(awk '{ print $2 }' "$tmp/mem" | median)
puse=$(awk '{ print $1 }' "$tmp/pmem" | median)
prss=$(awk '{ print $2 }' "$tmp/pmem" | median)
disk=$(median < "$tmp/disk") upper=$(median < "$tmp/upper")
# The target of a wall time in us: 1 s.
within() {
	if [ "$1" -le 1000000 ]; then
		echo met
	else
		awk -v v="$1" 'BEGIN { printf "not met, %.1fx\n", v / 1e6 }'
	fi
}
sfmt() { awk -v v="$1" 'BEGIN { printf "%.3f", v / 1e6 }'; }
for l in "bs:snap-s:$nbr branches, one after the other" \
    "ps:snap-ps:$nbr plain boots of new keys, one after the other" \
    "bc:snap-c:$nbr branches, $par at a time" \
    "pc:snap-pc:$nbr plain boots of new keys, $par at a time"; do
	w=w_${l%%:*}; r=${l#*:}
	printf "%-56s %10s us, agent ready %s us median, %s of %d pooled\n" \
	    "${r#*:}" ${!w} "$(median < "$tmp/${r%%:*}.ready")" \
	    "$(cat "$tmp/${r%%:*}.pooled")" $nbr
done
printf "%-56s %10s KiB cgroup, %s KiB Rss (a plain fence: %s, %s)\n" \
    "a branch's memory, median of $nbr up" "$use" "$rss" "$puse" "$prss"
printf "%-56s %10s KiB, its upper layer %s KiB\n" "a branch's disk, median" \
    "$disk" "$upper"
PS="$nbr plain L1.5 boots of new keys, one after the other"
PC="$nbr plain L1.5 boots of new keys, $par at a time"
bench_value_row $sec "target, $nbr native branches within 1 s, one after the other: $(within $w_bs)" \
    "$PS" s "$(sfmt $w_bs)"
bench_value_row $sec "$PS" "" s "$(sfmt $w_ps)"
bench_value_row $sec "target, $nbr native branches within 1 s, $par at a time: $(within $w_bc)" \
    "$PC" s "$(sfmt $w_bc)"
bench_value_row $sec "$PC" "" s "$(sfmt $w_pc)"
for l in "snap-s:branches, one after the other:plain boots, one after the other" \
    "snap-ps:plain boots, one after the other:" \
    "snap-c:branches, $par at a time:plain boots, $par at a time" \
    "snap-pc:plain boots, $par at a time:"; do
	k=${l%%:*} r=${l#*:}
	a=${r#*:}
	bench_rows $sec "$nbr ${r%%:*}: request->agent ready ($(cat "$tmp/$k.pooled") pooled)" \
	    "${a:+$nbr $a: request->agent ready ($(cat "$tmp/snap-p${k#snap-}.pooled") pooled)}" \
	    median "$tmp/$k.ready"
done
bench_value_row $sec "a plain L1.5 fence's memory cgroup usage, $nbr up, idle (median)" \
    "" KiB "$puse"
bench_value_row $sec "a branch's memory cgroup usage, $nbr up, idle (median)" \
    "a plain L1.5 fence's memory cgroup usage, $nbr up, idle (median)" KiB \
    "$use"
bench_value_row $sec "a plain L1.5 fence's processes' Rss, $nbr up, idle (median)" \
    "" KiB "$prss"
bench_value_row $sec "a branch's processes' Rss, $nbr up, idle (median)" \
    "a plain L1.5 fence's processes' Rss, $nbr up, idle (median)" KiB "$rss"
bench_value_row $sec "a branch's folder on disk (du, median)" "" KiB "$disk"
bench_value_row $sec "a branch's upper layer (du, median)" "" KiB "$upper"

# 5. Undo on the 100 MiB home: exec ... undo of rm -rf ~/*, then undo;
# against the same exec without undo, then restore of s1.  Each leaves
# the home whole again (checked).
for f in xundo undo undoown mark xplain restore restoreown; do
	: > "$tmp/$f"
done
i=0
while [ $i -lt $nundo ]; do
	now; t0=$t
	$ctl exec $src undo -- sh -c 'rm -rf ~/*'
	now; echo $((t - t0)) >> "$tmp/xundo"
	now; t0=$t
	$ctl undo $src > "$tmp/out"
	now; echo $((t - t0)) >> "$tmp/undo"
	ans_us "$tmp/out" >> "$tmp/undoown"
	[ "$(count $src)" = 1000 ] ||
	    { echo "snap: undo left the home short" >&2; exit 1; }
	now; t0=$t
	$ctl exec $src -- sh -c 'rm -rf ~/*'
	now; echo $((t - t0)) >> "$tmp/xplain"
	now; t0=$t
	$ctl restore $src s1 > "$tmp/out"
	now; echo $((t - t0)) >> "$tmp/restore"
	ans_us "$tmp/out" >> "$tmp/restoreown"
	[ "$(count $src)" = 1000 ] ||
	    { echo "snap: restore left the home short" >&2; exit 1; }
	i=$((i + 1))
done
# The fencer's time of each undo mark, from its log.
grep "fence $src of uid $owner: undo mark" "$log" | tail -n $nundo |
    sed -n 's/.* files, \([0-9]*\) us.*/\1/p' > "$tmp/mark"
XU="exec undo -- rm -rf ~/* on the 100 MiB home (fencectl)"
XP="exec -- rm -rf ~/* on the 100 MiB home, no undo (fencectl)"
for r in "$XU:xundo" "  its undo mark, the fencer's own:mark" "$XP:xplain" \
    "undo (fencectl):undo" "  the fencer's own:undoown" \
    "restore of s1 (fencectl):restore" "  the fencer's own:restoreown"; do
	printf "%-56s %10s us median of %d\n" "${r%:*}" \
	    "$(median < "$tmp/${r##*:}")" $nundo
done
bench_rows $sec "$XU" "$XP" median "$tmp/xundo"
bench_rows $sec "the undo mark, the fencer's own time (its log)" "$CP" median \
    "$tmp/mark"
bench_rows $sec "$XP" "" median "$tmp/xplain"
bench_rows $sec "undo of it (fencectl)" "$RMCP" median "$tmp/undo"
bench_rows $sec "undo, the fencer's own time (its answer's ms)" "$RMCP" \
    median "$tmp/undoown"
bench_rows $sec "restore of s1 (fencectl)" "$RMCP" median "$tmp/restore"
bench_rows $sec "restore, the fencer's own time (its answer's ms)" "$RMCP" \
    median "$tmp/restoreown"
$ctl stop $src > /dev/null
