#!/bin/sh
# usage: sh scripts/deb.sh OUTDIR [IMAGES]
# Build the Debian package of the daemon (docs/install.md, "As a Debian
# package") from a copy of the tree's tracked files (git ls-files: the
# working copy of each, local edits included; never build/ or any
# untracked file) under OUTDIR/src, with Debian's dpkg-buildpackage
# and debian/; the .deb (and its -dbgsym) lands in OUTDIR.
# debian/changelog is written here, from FENCED_VERSION of
# common/fenced.h and the last commit's date, so that the package's
# version never drifts from the daemon's.
# Where IMAGES holds the built vm images (make vm-images), the package
# fenced-vm of the vm backend's boot files is built too: the build
# profile pkg.fenced.vm, with FENCED_IMAGES the images' absolute path
# (debian/rules); elsewhere fenced alone, saying so.
set -eu

out=${1:?usage: deb.sh OUTDIR [IMAGES]}
images=${2:-}
top=$(pwd)

for t in git dpkg-buildpackage dh; do
	command -v $t > /dev/null 2>&1 || {
		echo "deb.sh: no $t: install Debian's git, dpkg-dev and" \
		    "debhelper (scripts/deps.sh)" >&2
		exit 1
	}
done
git rev-parse --is-inside-work-tree > /dev/null 2>&1 || {
	echo "deb.sh: $top is not a git checkout: the package is built" \
	    "from its tracked files" >&2
	exit 1
}

ver=$(sed -n 's/^#define[[:space:]]*FENCED_VERSION[[:space:]]*"\([0-9][0-9.]*\)".*/\1/p' \
    common/fenced.h)
[ -n "$ver" ] || { echo "deb.sh: no FENCED_VERSION in common/fenced.h" >&2
	exit 1; }
arch=$(dpkg --print-architecture)

mkdir -p "$out"
out=$(cd "$out" && pwd)
stage=$out/src
src=$stage/fenced-$ver
rm -rf "$stage"
mkdir -p "$src"
# A tracked file deleted in the working copy is left out.
git ls-files -z | tar --null -T - --ignore-failed-read -cf - 2> /dev/null |
    tar -xf - -C "$src"
[ -f "$src/debian/rules" ] || { echo "deb.sh: debian/ is not tracked" >&2
	exit 1; }

rev=$(git rev-parse --short HEAD)
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
	what="the tree at $rev with uncommitted changes"
else
	what="the tree at $rev"
fi
# A native package: the version is FENCED_VERSION itself, with no
# Debian revision (dpkg's rule for the "3.0 (native)" format).
cat > "$src/debian/changelog" <<CL
fenced ($ver) unstable; urgency=medium

  * Package of $what, built by make deb.

 -- fenced developers <dev@fenced.invalid>  $(git log -1 --format=%aD)
CL

# The vm images, if built: what debian/rules takes from them, and the
# debootstrap root whose modules the initramfs carries.
vm=
if [ -n "$images" ]; then
	vm=$(cd "$images" 2>/dev/null && pwd) || vm=
	for f in MANIFEST vmlinuz root.cpio fence-root.squashfs \
	    fence-root.squashfs.sha256; do
		[ -n "$vm" ] && [ -f "$vm/$f" ] || vm=
	done
	[ -z "$vm" ] || ls -d "$vm"/root/lib/modules/* > /dev/null 2>&1 ||
	    vm=
fi
if [ -n "$vm" ]; then
	echo "deb.sh: vm images in $vm: building fenced and fenced-vm"
	profiles=pkg.fenced.vm
else
	echo "deb.sh: no built vm images${images:+ in $images} (make" \
	    "vm-images): building fenced alone, without fenced-vm"
	profiles=
fi

# The caller's make (make deb, make check SAN=1) must not reach the
# package's own: its variables would ride in MAKEFLAGS.
jobs=${DEB_JOBS:-2}
if ! (cd "$src" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
    -u MAKEOVERRIDES -u FENCED_IMAGES ${vm:+FENCED_IMAGES="$vm"} \
    DEB_BUILD_OPTIONS="nocheck parallel=$jobs" \
    dpkg-buildpackage -us -uc -b ${profiles:+-P"$profiles"} \
    > "$stage/build.log" 2>&1); then
	tail -n 40 "$stage/build.log" >&2
	echo "deb.sh: dpkg-buildpackage failed: $stage/build.log" >&2
	exit 1
fi
rm -f "$out"/fenced_*.deb "$out"/fenced-dbgsym_*.deb "$out"/fenced-vm_*.deb
for f in "$stage/fenced_${ver}_$arch.deb" \
    "$stage/fenced-dbgsym_${ver}_$arch.deb" \
    "$stage/fenced-vm_${ver}_$arch.deb"; do
	if [ -f "$f" ]; then
		mv "$f" "$out/"
	fi
done
[ -f "$out/fenced_${ver}_$arch.deb" ] || {
	echo "deb.sh: no fenced_${ver}_$arch.deb made" >&2
	exit 1
}
if [ -n "$vm" ] && [ ! -f "$out/fenced-vm_${ver}_$arch.deb" ]; then
	echo "deb.sh: no fenced-vm_${ver}_$arch.deb made" >&2
	exit 1
fi
echo "$out/fenced_${ver}_$arch.deb"
[ -z "$vm" ] || echo "$out/fenced-vm_${ver}_$arch.deb"
