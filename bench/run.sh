#!/bin/sh
# make bench: start a fenced of our own on a temporary configuration and
# run every benchmark against it, side by side with bubblewrap and the
# fork+exec floor.  Loopback and unix sockets only.
set -eu
build=$1
runs=${BENCH_RUNS:-200}
[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (fenced does)" >&2; exit 1; }
sh scripts/user.sh
dir=$(mktemp -d /tmp/fenced-bench.XXXXXX)
homes=$(mktemp -d /var/lib/fenced-bench.XXXXXX)
# A TCP port no socket uses, for the HTTP API (not 7700: `make run'
# may be up there).
port=$(ss -Htan | awk '{ n = split($4, a, ":"); used[a[n]] = 1 }
    END { for (p = 17700; p < 18700; p++) if (!(p in used)) { print p; exit } }')
[ -n "$port" ] || { echo "bench: no free port" >&2; exit 1; }
# The HTTP bench runs 128 connections and commands of one user at once.
cat > "$dir/fenced.conf" <<CONF
socket "$dir/ctl.sock"
state "$dir/state"
homes "$homes"
listen on 127.0.0.1 port $port
http connections max 512 per user 256
exec inflight per user 256
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
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir" "$homes"' EXIT
i=0
until "$build/bin/fencectl" -s "$dir/ctl.sock" show stats >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 100 ] || { cat "$dir/fenced.log"; exit 1; }
	sleep 0.05
done
echo "fenced bench, $(nproc) cpus, $(uname -r), $runs runs each"
# The HTTP API first, while no other fence is listed: a token of
# root's, then SOCKET RUNS PORT TOKEN.
token=$("$build/bin/fencectl" -s "$dir/ctl.sock" token 2>/dev/null)
"$build/bench/http" "$dir/ctl.sock" "$runs" "$port" "$token"
"$build/bench/boot" "$dir/ctl.sock" "$runs"
for b in "$build"/bench/*; do
	case "$b" in */boot|*/http) continue ;; esac
	[ -x "$b" ] && "$b" "$dir/ctl.sock" "$runs"
done
sh bench/runsc.sh "$build" "$dir/ctl.sock" "$dir/state" "$runs"
sh bench/vm.sh "$build" "$dir/ctl.sock" "$runs"
