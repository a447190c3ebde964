#!/bin/sh
# The runsc rows of `make bench' (bench/run.sh), side by side in one run:
#   boot to agent ready of a runsc fence (the fencer's own timing, as
#     `show environment' reports it) against `runsc run' of /bin/true
#     on an equivalent bundle (a copy of a running fence's, its init
#     replaced), each from its start to its end;
#   exec of /bin/true in a running runsc fence through the agent
#     (fencectl exec: one fencectl process per exec included) against
#     `runsc exec' of /bin/true in the same container;
#   what one process costs inside the fence (fork+exec, posix_spawn,
#     fork alone, timed by python3 in it): the floor under any exec.
#	runsc.sh BUILD CTLSOCK STATE RUNS
# Each row also goes to the table (bench/rows.subr).
set -eu
build=$1 sock=$2 state=$3 runs=$4
ctl="$build/bin/fencectl -s $sock"
. bench/rows.subr
command -v runsc > /dev/null || {
	echo "runsc: skipped, runsc is not installed (scripts/deps.sh)"
	bench_rows_skip boot "runsc fence boot to agent ready" \
	    "runsc is not installed (scripts/deps.sh)"
	exit 0
}
n=$((runs / 10)); [ $n -ge 5 ] || n=5
now_us() { echo $(($(date +%s%N) / 1000)); }
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

tmp=$(mktemp -d /tmp/fenced-bench-runsc.XXXXXX)
trap 'runsc --root="$tmp/root" delete --force b-true >/dev/null 2>&1 || true;
    $ctl stop bench-runsc >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

i=0
while [ $i -lt $n ]; do
	$ctl boot bench-runsc backend runsc > "$tmp/boot.out" || exit 1
	awk '$1 == "timings:" { for (f = 1; f < NF; f++)
	    if ($f == "ready") print $(f + 1) }' "$tmp/boot.out" >> "$tmp/boot"
	if [ $i -eq 0 ]; then
		# The fence's bundle, copied while it exists, /bin/true as init.
		b=$(ls "$state/runsc/bundles" | head -1)
		cp -a "$state/runsc/bundles/$b" "$tmp/bundle"
		rm -f "$tmp/bundle/runsc.log"
		python3 -c 'import json, sys
p = sys.argv[1]; c = json.load(open(p))
c["process"]["args"] = ["/bin/true"]
c["linux"]["cgroupsPath"] = "fenced-bench-runsc"
json.dump(c, open(p, "w"))' "$tmp/bundle/config.json"
	fi
	$ctl stop bench-runsc > /dev/null
	i=$((i + 1))
done
mkdir -p "$tmp/root"
i=0
while [ $i -lt $n ]; do
	t0=$(now_us)
	runsc --root="$tmp/root" --network=none --log="$tmp/log" run \
	    --bundle="$tmp/bundle" b-true < /dev/null > /dev/null 2>&1
	echo $(($(now_us) - t0)) >> "$tmp/run"
	runsc --root="$tmp/root" delete --force b-true > /dev/null 2>&1 || true
	i=$((i + 1))
done
printf "%-44s %10s us median of %d\n" "runsc fence boot to agent ready" \
    "$(median < "$tmp/boot")" $n
printf "%-44s %10s us median of %d\n" "runsc run /bin/true, same bundle" \
    "$(median < "$tmp/run")" $n
bench_rows boot "runsc fence boot to agent ready" \
    "runsc run /bin/true, same bundle" median "$tmp/boot"
bench_rows boot "runsc run /bin/true, same bundle" "" median "$tmp/run"

$ctl boot bench-runsc backend runsc > /dev/null
id=$(ls "$state/runsc/bundles" | head -1)
i=0
while [ $i -lt $n ]; do
	t0=$(now_us)
	$ctl exec bench-runsc -- /bin/true > /dev/null
	echo $(($(now_us) - t0)) >> "$tmp/agent"
	t0=$(now_us)
	runsc --root="$state/runsc/state" exec "$id" /bin/true \
	    < /dev/null > /dev/null 2>&1
	echo $(($(now_us) - t0)) >> "$tmp/rexec"
	i=$((i + 1))
done
a=$(median < "$tmp/agent") r=$(median < "$tmp/rexec")
printf "%-44s %10s us median of %d\n" "runsc fence exec /bin/true (fencectl)" \
    "$a" $n
printf "%-44s %10s us median of %d\n" "runsc exec /bin/true, same container" \
    "$r" $n
bench_rows exec "runsc fence exec /bin/true (fencectl)" \
    "runsc exec /bin/true, same container" median "$tmp/agent"
bench_rows exec "runsc exec /bin/true, same container" "" median "$tmp/rexec"
echo "runsc exec / agent exec: $(awk -v a="$a" -v r="$r" \
    'BEGIN { printf "%.1f", r / a }')x"
# The floor under any exec in the fence: one process made inside
# gVisor, timed inside it (every fork on the ptrace platform is a new
# stub address space; posix_spawn shares the parent's until the exec).
# Its 4n processes of each kind take longer than an exec's default 10 s
# where a fork in gVisor is slow: the longest an exec may ask, a minute.
if [ -x /usr/bin/python3 ]; then
	$ctl exec bench-runsc timeout 60000 -- /usr/bin/python3 -c 'import os, time
n = '"$n"' * 4
def run(f):
	t = []
	for i in range(n):
		t0 = time.monotonic_ns()
		os.waitpid(f(), 0)
		t.append((time.monotonic_ns() - t0) // 1000)
	return sorted(t)[n // 2]
def fx():
	p = os.fork()
	if p == 0:
		os.execv("/bin/true", ["/bin/true"])
	return p
def fo():
	p = os.fork()
	if p == 0:
		os._exit(0)
	return p
sp = lambda: os.posix_spawn("/bin/true", ["/bin/true"], {})
for name, f in (("fork+exec", fx), ("posix_spawn", sp), ("fork", fo)):
	print("%-44s %10d us median of %d" % ("in the runsc fence: " +
	    name + " /bin/true" if name != "fork" else
	    "in the runsc fence: fork, exit", run(f), n))'
fi
