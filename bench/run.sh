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
cat > "$dir/fenced.conf" <<CONF
socket "$dir/ctl.sock"
state "$dir/state"
homes "$homes"
CONF
"$build/bin/fenced" -d -f "$dir/fenced.conf" 2> "$dir/fenced.log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir" "$homes"' EXIT
i=0
until "$build/bin/fencectl" -s "$dir/ctl.sock" show stats >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 100 ] || { cat "$dir/fenced.log"; exit 1; }
	sleep 0.05
done
echo "fenced bench, $(nproc) cpus, $(uname -r), $runs runs each"
"$build/bench/boot" "$dir/ctl.sock" "$runs"
for b in "$build"/bench/*; do
	case "$b" in */boot) continue ;; esac
	[ -x "$b" ] && "$b" "$dir/ctl.sock" "$runs"
done
