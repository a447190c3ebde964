#!/bin/sh
# The runsc memory rows of `make bench' (bench/run.sh; docs/snapshots.md,
# "Memory: runsc"), side by side in one run, all with Debian's runsc:
#   runsc's own cold start to a first command: `runsc run --detach' of
#     the copied bundle of a fence (its init /bin/sleep) and then
#     `runsc exec /bin/true', from the run's start to the exec's end;
#   `runsc checkpoint' of a runsc fence of the daemon's, idle (its
#     agent paired and waiting), and holding 100 MiB of process memory
#     (a python3 of the fence's, its memory random bytes, which the
#     image's compression cannot shrink): the time, and the image's
#     size;
#   `runsc restore --detach' of each image on the fence's bundle, a new
#     socket as its stdio (as a boot gives the agent its channel), and
#     then `runsc exec /bin/true', from the restore's start to the
#     exec's end.
# This runsc's checkpoint ends the sandbox it saves: each checkpoint
# is of a fence booted for it, which the fencer then sees crash.
# Cgroups are left out of the rows measured here (--ignore-cgroups
# for run and restore alike).  Loopback and unix sockets only; rows
# that cannot be measured are skipped saying why.
#	runsc_mem.sh BUILD CTLSOCK STATE RUNS
set -eu
build=$1 sock=$2 state=$3 runs=$4
ctl="$build/bin/fencectl -s $sock"
sec="memory restore"
cold="runsc run + exec /bin/true (cold start)"
. bench/rows.subr

skip_all() {
	echo "runsc memory: skipped, $1"
	for r in "$cold" "runsc checkpoint, idle fence" \
	    "runsc checkpoint, 100 MiB held" \
	    "runsc restore + exec /bin/true, idle fence" \
	    "runsc restore + exec /bin/true, 100 MiB held"; do
		bench_rows_skip "$sec" "$r" "$1"
	done
	exit 0
}
command -v runsc > /dev/null ||
    skip_all "runsc is not installed (scripts/deps.sh)"
command -v python3 > /dev/null || skip_all "python3 is not installed"
n=$((runs / 10)); [ $n -ge 5 ] || n=5
m=$((n / 4)); [ $m -ge 3 ] || m=3
now_us() { echo $(($(date +%s%N) / 1000)); }
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

tmp=$(mktemp -d /tmp/fenced-bench-runscmem.XXXXXX)
root=$tmp/root
mkdir -p "$root"
rs="runsc --root=$root --network=none --oci-seccomp --ignore-cgroups"
trap 'for c in $(ls "$root" 2>/dev/null | sed -n "s/_sandbox:.*//p" | sort -u)
    do runsc --root="$root" kill --all "$c" KILL >/dev/null 2>&1
    runsc --root="$root" delete --force "$c" >/dev/null 2>&1; done
    $ctl stop bench-runscmem >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

# A value row (not a latency): its unit, one sample.
value_row() {
	[ -n "${BENCH_OUT:-}" ] || return 0
	printf '%s\t%s\t-\tmedian\t%s\t1\t%s\t%s\t-\t-\n' "$sec" "$1" "$2" \
	    "$3" "$3" >> "$BENCH_OUT/rows.tsv"
}

# boot: the fence, its bundle's id and home.
boot() {
	$ctl boot bench-runscmem backend runsc > "$tmp/boot.out" || exit 1
	id=$(ls "$state/runsc/bundles" | head -1)
	home=$(awk '$1 == "home:" { print $2 }' "$tmp/boot.out")
}

# checkpoint KIND I: the fence saved into $tmp/img-KIND-I; its time
# and size appended to $tmp/ckpt-KIND and $tmp/size-KIND.  The fence
# ends with it (this runsc), and is stopped here.
checkpoint() {
	_d=$tmp/img-$1-$2
	mkdir "$_d"
	t0=$(now_us)
	if ! runsc --root="$state/runsc/state" checkpoint --image-path="$_d" \
	    "$id" > "$tmp/ckpt.err" 2>&1; then
		$ctl stop bench-runscmem > /dev/null 2>&1 || true
		skip_all "runsc checkpoint failed: $(tail -c 300 "$tmp/ckpt.err")"
	fi
	echo $(($(now_us) - t0)) >> "$tmp/ckpt-$1"
	stat -c %s "$_d/checkpoint.img" >> "$tmp/size-$1"
	$ctl stop bench-runscmem > /dev/null 2>&1 || true
}

# The fence's bundle, copied while it exists: the restores' (the key
# keeps its uid, home and user, so one copy serves every image), and a
# second with /bin/sleep as init for the cold start.
boot
cp -a "$state/runsc/bundles/$id" "$tmp/bundle"
cp -a "$state/runsc/bundles/$id" "$tmp/cold"
rm -f "$tmp/bundle/runsc.log" "$tmp/cold/runsc.log"
python3 -c 'import json, sys
p = sys.argv[1]; c = json.load(open(p))
c["process"]["args"] = ["/bin/sleep", "3600"]
json.dump(c, open(p, "w"))' "$tmp/cold/config.json"
checkpoint idle 0
i=1
while [ $i -lt $n ]; do
	boot
	checkpoint idle $i
	i=$((i + 1))
done
# A python3 of the fence's holds 100 MiB of random bytes, and says so
# by a file in its home once they are in memory.
i=0
while [ $i -lt $m ]; do
	boot
	rm -f "$home/.bench-ready"
	$ctl spawn bench-runscmem timeout 600000 -- /usr/bin/python3 -c '
import os, time
b = bytearray(os.urandom(100 << 20))
open(os.environ["HOME"] + "/.bench-ready", "w").close()
time.sleep(3600)' > /dev/null
	w=0
	while [ ! -e "$home/.bench-ready" ]; do
		w=$((w + 1))
		[ $w -lt 1200 ] || { echo "runsc memory: 100 MiB never" \
		    "held" >&2; exit 1; }
		sleep 0.05
	done
	checkpoint 100m $i
	i=$((i + 1))
done

# cold I: run, exec, from the run's start to the exec's end.
i=0
while [ $i -lt $n ]; do
	t0=$(now_us)
	$rs run --detach --bundle="$tmp/cold" cold-$i < /dev/null \
	    > /dev/null 2>&1 || { echo "runsc run failed" >&2; exit 1; }
	runsc --root="$root" exec cold-$i /bin/true < /dev/null \
	    > /dev/null 2>&1 || { echo "runsc exec failed" >&2; exit 1; }
	echo $(($(now_us) - t0)) >> "$tmp/cold-us"
	runsc --root="$root" kill --all cold-$i KILL > /dev/null 2>&1 || true
	runsc --root="$root" delete --force cold-$i > /dev/null 2>&1 || true
	i=$((i + 1))
done

# restore KIND COUNT: each image of KIND restored on a new socket, a
# first command; microseconds appended to $tmp/restore-KIND.
restore() {
	python3 - "$tmp" "$1" "$2" "$root" >> "$tmp/restore-$1" <<'EOF'
import socket, subprocess, sys, time
tmp, kind, count, root = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
rs = ["runsc", "--root=" + root, "--network=none", "--oci-seccomp",
      "--ignore-cgroups"]
quiet = dict(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
             stderr=subprocess.DEVNULL)
for i in range(count):
    cid = "restore-%s-%d" % (kind, i)
    a, b = socket.socketpair()
    t0 = time.monotonic_ns()
    with open(tmp + "/restore.err", "w") as err:
        r = subprocess.run(rs + ["restore", "--detach", "--image-path=%s/img-%s-%d"
            % (tmp, kind, i), "--bundle=" + tmp + "/bundle", cid], stdin=b,
            stdout=b, stderr=err)
    b.close()
    e = subprocess.run(["runsc", "--root=" + root, "exec", cid, "/bin/true"],
                       **quiet)
    t1 = time.monotonic_ns()
    a.close()
    subprocess.run(["runsc", "--root=" + root, "kill", "--all", cid, "KILL"],
                   **quiet)
    subprocess.run(["runsc", "--root=" + root, "delete", "--force", cid],
                   **quiet)
    if r.returncode != 0 or e.returncode != 0:
        sys.stderr.write("restore %s: exit %d, exec exit %d: %s\n" % (cid,
            r.returncode, e.returncode, open(tmp + "/restore.err").read()[-300:]))
        sys.exit(1)
    print((t1 - t0) // 1000)
EOF
}
restore idle $n
restore 100m $m

row() {
	printf "%-48s %10s us median of %d\n" "$1" "$(median < "$3")" \
	    "$(wc -l < "$3")"
	bench_rows "$sec" "$1" "$2" median "$3"
}
row "$cold" "" "$tmp/cold-us"
row "runsc restore + exec /bin/true, idle fence" "$cold" "$tmp/restore-idle"
row "runsc restore + exec /bin/true, 100 MiB held" "$cold" \
    "$tmp/restore-100m"
row "runsc checkpoint, idle fence" "" "$tmp/ckpt-idle"
row "runsc checkpoint, 100 MiB held" "" "$tmp/ckpt-100m"
for k in idle 100m; do
	s=$(median < "$tmp/size-$k")
	mib=$(awk -v s="$s" 'BEGIN { printf "%.2f", s / 1048576 }')
	[ $k = idle ] && what="runsc image, idle fence" ||
	    what="runsc image, 100 MiB held"
	printf "%-48s %10s MiB median of %d\n" "$what" "$mib" \
	    "$(wc -l < "$tmp/size-$k")"
	value_row "$what" MiB "$mib"
done
