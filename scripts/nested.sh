#!/bin/sh
# Run a command from a nested cgroup, as a container, a CI runner or a
# systemd session scope would start it:
#
#	sh scripts/nested.sh COMMAND [ARG ...]
#
# In every cgroup hierarchy this shell is in, a folder three levels below
# its own cgroup (fenced-nest.<pid>/runner/job) is made and the command
# starts there; after it the folders are removed, deepest first, and the
# command's status is returned.  On a unified (v2) hierarchy memory, pids
# and cpu are handed down along the way, as a delegating manager does;
# the cgroup this shell is in must then hold no other process (v2's
# no-internal-processes rule: the root cgroup, or a cgroup of its own).
# Not root, or no cgroup mounted: the command runs where it is.
set -u
[ $# -gt 0 ] || { echo "usage: nested.sh COMMAND [ARG ...]" >&2; exit 2; }
if [ "$(id -u)" -ne 0 ] || [ ! -d /sys/fs/cgroup ]; then
	exec "$@"
fi

nest=fenced-nest.$$/runner/job
made=

# The mount point of each hierarchy this shell is in, and its path in it.
while IFS=: read -r _n ctrls path; do
	if [ -z "$ctrls" ]; then
		mnt=$(awk '$9 == "cgroup2" { print $5; exit }' \
		    /proc/self/mountinfo)
	else
		mnt=$(awk -v c="$ctrls" '$9 == "cgroup" {
		    n = split($NF, o, ","); m = 0
		    k = split(c, w, ",")
		    for (i = 1; i <= k; i++)
			for (j = 1; j <= n; j++)
				if (o[j] == w[i]) m++
		    if (m == k) { print $5; exit } }' /proc/self/mountinfo)
	fi
	[ -n "$mnt" ] && [ -d "$mnt" ] || continue
	[ "$path" = / ] && path=
	base=$mnt$path
	[ -w "$base" ] || continue
	if [ -z "$ctrls" ]; then
		# v2: hand down what the hierarchy has of memory, pids, cpu.
		want=
		for c in memory pids cpu; do
			grep -qw "$c" "$base/cgroup.controllers" 2>/dev/null &&
			    want="$want +$c"
		done
		d=$base
		for part in $(echo "$nest" | tr / ' '); do
			[ -z "$want" ] ||
			    echo "$want" > "$d/cgroup.subtree_control" ||
			    { echo "nested.sh: cannot hand$want down in $d" \
			    >&2; exit 1; }
			d=$d/$part
			mkdir -p "$d" || exit 1
		done
	else
		mkdir -p "$base/$nest" || exit 1
		# cpuset: a new cgroup has no cpus or mems until given some.
		for f in cpuset.cpus cpuset.mems; do
			[ -f "$base/$f" ] || continue
			d=$base
			for part in $(echo "$nest" | tr / ' '); do
				d=$d/$part
				cat "${d%/*}/$f" > "$d/$f"
			done
		done
	fi
	made="$made $base/fenced-nest.$$"
	echo $$ > "$base/$nest/cgroup.procs" || exit 1
done < /proc/self/cgroup

echo "nested.sh: running in $(grep -c . /proc/self/cgroup) hierarchies at" \
    ".../$nest" >&2
"$@"
rc=$?

# Out of the nest (into the cgroup above it) so the folders can go.
for top in $made; do
	echo $$ > "${top%/*}/cgroup.procs" 2>/dev/null
done
for top in $made; do
	find "$top" -depth -type d -exec rmdir {} \; 2>/dev/null
	[ ! -d "$top" ] || echo "nested.sh: $top left behind" >&2
done
exit $rc
