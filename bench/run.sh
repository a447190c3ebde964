#!/bin/sh
# make bench: start a fenced of our own on a temporary configuration and
# run every benchmark against it, side by side with bubblewrap and the
# fork+exec floor.  Loopback and unix sockets only.  Every bench also
# records its rows in $BENCH_OUT (build/bench/out); at the end
# bench/table.py prints them as one table, each row against its anchor,
# and writes build/bench/table.txt, table.md and latency.svg
# (docs/bench.md).
set -eu
build=$1
runs=${BENCH_RUNS:-200}
density=${BENCH_DENSITY:-1000}
# BENCH_ONLY="density exec": only those of http boot exec port term
# runsc vm vm_mem snap v2 burst density (the table then has only their
# rows).  v2: the boot bench in the cgroup v2 guest (images/bench-v2),
# where the vm images are built; vm_mem: a vm fence's memory saved and
# restored (bench/vm_mem.sh).
only=${BENCH_ONLY:-http boot exec port term runsc vm vm_mem snap v2 burst density}
want() { case " $only " in *" $1 "*) return 0 ;; esac; return 1; }
[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (fenced does)" >&2; exit 1; }
sh scripts/user.sh
dir=$(mktemp -d /tmp/fenced-bench.XXXXXX)
homes=$(mktemp -d /var/lib/fenced-bench.XXXXXX)
# A TCP port no socket uses, for the HTTP API (not 7700: `make run'
# may be up there).
port=$(ss -Htan | awk '{ n = split($4, a, ":"); used[a[n]] = 1 }
    END { for (p = 17700; p < 18700; p++) if (!(p in used)) { print p; exit } }')
[ -n "$port" ] || { echo "bench: no free port" >&2; exit 1; }
# Fence uids of our own, out of the regress suite's (1000000 + port *
# 64) and of the default: room for every density fence, the burst
# bench's new keys (BENCH_SCALE, the bursts, the single boots), the
# snapshot bench's (a new key for every branch and every boot it holds
# a branch against: RUNS + RUNS / 10 + 4 BENCH_BRANCHES and a few) and
# the others.  A key keeps its uid: the daemon holds at most 4096.
scale=${BENCH_SCALE:-400}
bursts=0
for b in ${BENCH_BURST:-100 1000}; do bursts=$((bursts + b)); done
snapkeys=0
! want snap || snapkeys=$((runs + runs / 10 + 4 * ${BENCH_BRANCHES:-100} + 64))
uids=$((200000000 + (port - 17700) * 8192))
uids="$uids-$((uids + density + scale + bursts + runs / 10 + snapkeys + 1023))"
# The HTTP bench runs 128 connections and commands of one user at once;
# the density bench boots BENCH_DENSITY fences of root's (each with the
# default limits: the user totals are their sums).
cat > "$dir/fenced.conf" <<CONF
socket "$dir/ctl.sock"
state "$dir/state"
homes "$homes"
listen on 127.0.0.1 port $port
fence uids $uids
http connections max 512 per user 256
exec inflight per user 256
user limit fences 4096
user limit memory 1024T
user limit pids 4194304
user limit cpu 4194304
probe dns "localhost"
probe tcp "127.0.0.1:1"
pool L1.5 4
CONF
# The vm backend where its boot files are built (make vm-images).
if sh images/vm-conf "${IMAGES:-build/images}" "$build/vm" \
    >> "$dir/fenced.conf" 2>/dev/null; then
	echo "vm accel ${VM_ACCEL:-auto}" >> "$dir/fenced.conf"
fi
"$build/bin/fenced" -d -f "$dir/fenced.conf" 2> "$dir/fenced.log" &
# bench/exec.c reloads it with `observe denials no' for a fence of its
# own, and takes the line away again (docs/denials.md).
export BENCH_CONF="$dir/fenced.conf"
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir" "$homes"' EXIT
i=0
until "$build/bin/fencectl" -s "$dir/ctl.sock" show stats >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 100 ] || { cat "$dir/fenced.log"; exit 1; }
	sleep 0.05
done
out=$build/bench/out
rm -rf "$out"
mkdir -p "$out"
: > "$out/rows.tsv"
export BENCH_OUT=$(cd "$out" && pwd)
started=$(date -u '+%Y-%m-%d %H:%M UTC')
echo "fenced bench, $(nproc) cpus, $(uname -r), $runs runs each"
# The HTTP API first, while no other fence is listed: a token of
# root's, then SOCKET RUNS PORT TOKEN.
token=$("$build/bin/fencectl" -s "$dir/ctl.sock" token 2>/dev/null)
# The benches that speak HTTP to fenced (port, term) read these.
export BENCH_PORT=$port BENCH_TOKEN=$token
# A bench that fails is said so; the table still shows what the others
# measured, and make bench fails at the end.
failed=
run() {
	_n=$1; shift
	"$@" || { echo "bench: $_n failed (exit $?)" >&2; failed="$failed $_n"; }
}
! want http || run http "$build/bench/http" "$dir/ctl.sock" "$runs" "$port" \
    "$token"
! want boot || run boot "$build/bench/boot" "$dir/ctl.sock" "$runs"
for b in "$build"/bench/*; do
	case "$b" in */boot|*/http|*/burst|*/density|*/vm_mem) continue ;; esac
	[ -f "$b" ] && [ -x "$b" ] && want "${b##*/}" &&
	    run "${b##*/}" "$b" "$dir/ctl.sock" "$runs"
done
! want term || run term /usr/bin/python3 bench/term.py "$build" \
    "$dir/ctl.sock" "$runs"
! want runsc || run runsc sh bench/runsc.sh "$build" "$dir/ctl.sock" \
    "$dir/state" "$runs"
! want runsc || run runsc-mem sh bench/runsc_mem.sh "$build" \
    "$dir/ctl.sock" "$dir/state" "$runs"
! want vm || run vm sh bench/vm.sh "$build" "$dir/ctl.sock" "$runs"
! want vm_mem || run vm_mem sh bench/vm_mem.sh "$build"
# Snapshots, branches, undo (bash: bench/snap.sh says why).
! want snap || run snap bash bench/snap.sh "$build" "$dir/ctl.sock" \
    "$dir/state" "$dir/fenced.log" "$runs"
# In a guest of its own, with daemons of its own there.
! want v2 || run v2 sh images/bench-v2 "$build"
# Last, on a daemon with no other fence: the boots from many clients
# and the bursts (bench/burst.c), then BENCH_DENSITY idle fences.
! want burst || run burst "$build/bench/burst" "$dir/ctl.sock" "$runs"
export BENCH_DENSITY=$density BENCH_UIDS=$uids
! want density || run density "$build/bench/density" "$dir/ctl.sock" "$runs"
echo
title="fenced bench: $(nproc) cpus, Linux $(uname -r), $runs runs, $started"
python3 bench/table.py --title "$title" --markdown "$build/bench/table.md" \
    --svg "$build/bench/latency.svg" "$out/rows.tsv" |
    tee "$build/bench/table.txt"
echo "table: $build/bench/table.txt, $build/bench/table.md;" \
    "plot: $build/bench/latency.svg"
[ -z "$failed" ] || { echo "bench: failed:$failed" >&2; exit 1; }
