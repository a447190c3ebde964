#!/bin/sh
# make run: fenced -d in the foreground on the built-in defaults.
#
#	sh scripts/run.sh BUILD [FENCED-ARGUMENTS]
#
# On a unified cgroup v2 hierarchy fenced hands memory, pids and cpu to
# its fences only from a cgroup it has to itself (docs/fence.md, "The
# daemon on cgroup v2"), and a login shell's session scope holds the
# shell.  Where systemd runs the machine, fenced gets a transient scope
# of its own with Delegate=yes, still in this terminal (systemd-run
# --scope).  Everywhere else (cgroup v1 controllers, a hybrid machine,
# the root cgroup, no systemd) it runs as it is; where it then cannot
# set limits it says so and refuses L1.5 and L2.
set -eu
bin=$(cd "${1:-build}/bin" && pwd)/fenced
[ $# -eq 0 ] || shift
sh "$(dirname "$0")/user.sh"
cg=$(sed -n 's/^0:://p' /proc/self/cgroup)
if [ -f /sys/fs/cgroup/cgroup.controllers ] && [ "${cg:-/}" != / ] &&
    [ -d /run/systemd/system ] && command -v systemd-run >/dev/null; then
	echo "run: cgroup v2, and this shell's cgroup $cg is not fenced's" \
	    "alone: a scope with Delegate=yes" >&2
	exec systemd-run --scope -p Delegate=yes -- "$bin" -d "$@"
fi
exec "$bin" -d "$@"
