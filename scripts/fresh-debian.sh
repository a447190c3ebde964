#!/bin/sh
# A bare Debian 12 to try the project on, as a new user would:
#
#	sh scripts/fresh-debian.sh DIR [COMMAND]
#
# The first time, builds in DIR a root filesystem of debootstrap
# --variant=minbase with git and make only, writes the /etc/hosts a
# Debian installer writes (debootstrap writes none), and clones this
# checkout's committed HEAD into DIR/root/project (/root mode 0700, as
# Debian has it).  Later runs keep the root filesystem and move the
# clone to that commit.  Then enters it as root in a mount and pid
# namespace of its own through pivot_root (not bwrap, whose
# no_new_privs a fresh machine does not have) and runs COMMAND (default
# "make check") in /root/project with a clean login-like environment.
#
# Inside: /proc of the new pid namespace, the host's /sys with its
# cgroup mounts (v1 controllers and the v2 mount, as the host has them),
# the host's /dev, and new tmpfs on /tmp and /run.  The network
# namespace stays the host's, so that apt reaches the Debian registry;
# the tests use loopback only.  Pid 1 inside is a shell that reaps
# orphans, like a real init; everything inside ends when COMMAND does.
#
# FRESH_MIRROR (default http://deb.debian.org/debian) is the Debian
# mirror, FRESH_SRC the repository to clone (default this checkout),
# FRESH_REF what of it (default HEAD).  docs/testing.md.
set -eu

usage() {
	echo "usage: sh scripts/fresh-debian.sh DIR [COMMAND]" >&2
	exit 2
}
[ $# -ge 1 ] || usage
[ "$(id -u)" -eq 0 ] || { echo "fresh-debian: run as root" >&2; exit 1; }
dir=$(realpath -m "$1")
shift
cmd=${*:-make check}
case "$dir" in
/) echo "fresh-debian: DIR may not be /" >&2; exit 1 ;;
esac
mirror=${FRESH_MIRROR:-http://deb.debian.org/debian}
here=$(cd "$(dirname "$0")/.." && pwd -P)
src=${FRESH_SRC:-$here}
ref=${FRESH_REF:-HEAD}

if [ ! -e "$dir/etc/debian_version" ]; then
	if ! command -v debootstrap >/dev/null; then
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap
	fi
	mkdir -p "$dir"
	t0=$(date +%s)
	debootstrap --variant=minbase --include=git,make bookworm "$dir" \
	    "$mirror"
	echo "fresh-debian: debootstrap took $(($(date +%s) - t0)) s" >&2
fi
if [ ! -e "$dir/etc/hosts" ]; then
	h=$(cat "$dir/etc/hostname" 2>/dev/null || echo debian)
	printf '%s\n' "127.0.0.1	localhost" "127.0.1.1	$h" "" \
	    "# The following lines are desirable for IPv6 capable hosts" \
	    "::1     localhost ip6-localhost ip6-loopback" \
	    "ff02::1 ip6-allnodes" "ff02::2 ip6-allrouters" > "$dir/etc/hosts"
fi
p=$dir/root/project
[ -d "$p/.git" ] || git clone -q "$src" "$p"
git -C "$p" fetch -q "$src" "$ref"
git -C "$p" checkout -q -f FETCH_HEAD
chmod 0700 "$dir/root"
echo "fresh-debian: $(git -C "$p" log -1 --format='%h %s' | cut -c1-72)" >&2

# shellcheck disable=SC2016
exec unshare --mount --pid --fork --propagation private sh -c '
set -eu
d=$1; cmd=$2
mount --bind "$d" "$d"
mount -t proc -o nosuid,nodev,noexec proc "$d/proc"
mount --rbind /sys "$d/sys"
mount --rbind /dev "$d/dev"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$d/tmp"
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs "$d/run"
mkdir -p "$d/run/lock" "$d/.old-root"
cd "$d"
pivot_root . .old-root
cd /
umount -l /.old-root
rmdir /.old-root
exec 3<&0
exec env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root USER=root LOGNAME=root SHELL=/bin/bash TERM="${TERM:-dumb}" \
    /bin/bash -c "
	(cd /root/project && exec /bin/sh -c \"\$1\") <&3 &
	wait \$!
" fresh "$cmd"
' fresh-debian "$dir" "$cmd"
