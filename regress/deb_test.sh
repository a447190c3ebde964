#! /usr/bin/atf-sh
# The Debian package of `make deb' (issue 34, docs/install.md, "As a
# Debian package"): installed into a root of the test's own, never the
# host's, where it must put its files where the document says, make the
# _fenced user, enable nothing, keep fenced.conf as a conffile and boot
# a fence from the installed daemon; removed, it leaves the admin's
# fenced.conf, purged, it takes it.  And lintian has nothing to say of
# it but what its overrides explain.

. "$(atf_get_srcdir)/lib.subr"

# make deb, one at a time: a no-op where make check built it already.
# The package's path in DEB.
deb_built() {
	command -v dpkg-buildpackage > /dev/null ||
	    atf_skip "no dpkg-buildpackage: install dpkg-dev, debhelper and lintian (scripts/deps.sh)"
	command -v dh > /dev/null ||
	    atf_skip "no dh: install debhelper (scripts/deps.sh)"
	command -v lintian > /dev/null ||
	    atf_skip "no lintian: install it (scripts/deps.sh)"
	git -C "$TOPDIR" rev-parse --is-inside-work-tree > /dev/null 2>&1 ||
	    atf_skip "$TOPDIR is not a git checkout: make deb builds from the tracked files"
	mkdir -p "$TOPDIR/build"
	flock "$TOPDIR/build/deb.lock" make --no-print-directory -C "$TOPDIR" \
	    deb > make.out 2>&1 ||
	    atf_fail "make deb: $(tail -n 40 make.out)"
	DEB=$(ls "$TOPDIR"/build/deb/fenced_*.deb 2>/dev/null | head -1)
	[ -f "$DEB" ] || atf_fail "make deb made no build/deb/fenced_*.deb"
	# fenced-vm, where the tree's vm images are built (or ""): the
	# files scripts/deb.sh looks for.
	DEB_VM=${DEB%/*}/fenced-vm_${DEB##*/fenced_}
	images=$TOPDIR/build/images
	for f in MANIFEST vmlinuz root.cpio fence-root.squashfs \
	    fence-root.squashfs.sha256; do
		[ -f "$images/$f" ] || images=
	done
	[ -z "$images" ] || ls -d "$images"/root/lib/modules/* \
	    > /dev/null 2>&1 || images=
	if [ -n "$images" ]; then
		[ -f "$DEB_VM" ] || atf_fail "vm images built, yet no $DEB_VM"
	elif [ -f "$DEB_VM" ]; then
		atf_fail "no vm images, yet a $DEB_VM"
	else
		echo "no vm images built (make vm-images): no fenced-vm" \
		    "to install" >&2
		DEB_VM=
	fi
}

# $IN CMD: the shell command CMD in the test's root (deb_root), with a
# clean environment.
deb_in() {
	cat > in.sh <<SH
#! /bin/sh
exec nsenter -t $(cat holder.pid) -m -r -w env -i \\
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \\
    LC_ALL=C sh -c "\$1"
SH
	chmod 0755 in.sh
	IN=$PWD/in.sh
}

# A root of the test's own: a private mount namespace, held by a
# process chrooted into an overlay whose lower layer is the host's /
# (so the host's packages satisfy the package's dependencies) and
# whose upper one a tmpfs of that namespace alone; /proc, /dev and /sys
# (the cgroups) are the host's, /run and /tmp the root's own but for
# /run/fenced-uids, where the daemons of a machine claim their fence
# uids.  Whatever is written there dies with the namespace.
deb_root() {
	grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null ||
	    atf_skip "no overlayfs in this kernel"
	[ -d /run/fenced-uids ] || mkdir -m 0700 /run/fenced-uids
	mkdir mnt
	cat > ns.sh <<'SH'
set -eu
m=$1
mount -t tmpfs -o mode=0755 fenced-deb "$m"
mkdir "$m/upper" "$m/work" "$m/root"
mount -t overlay fenced-deb \
    -o "lowerdir=/,upperdir=$m/upper,workdir=$m/work" "$m/root"
r=$m/root
mount -t proc proc "$r/proc"
mount --rbind /dev "$r/dev"
mount --rbind /sys "$r/sys"
mount -t tmpfs -o mode=0755 fenced-deb-run "$r/run"
mkdir -m 0700 "$r/run/fenced-uids"
mount --bind /run/fenced-uids "$r/run/fenced-uids"
mount -t tmpfs -o mode=1777 fenced-deb-tmp "$r/tmp"
touch "$2"
exec chroot "$r" sleep 600
SH
	unshare -m --propagation private sh ns.sh "$PWD/mnt" "$PWD/ready" \
	    > ns.out 2>&1 &
	echo $! > holder.pid
	h=$(cat holder.pid)
	i=0
	while [ ! -e ready ]; do
		if [ ! -d "/proc/$h" ] || [ $i -ge 200 ]; then
			atf_fail "no root of the test's own: $(cat ns.out)"
		fi
		sleep 0.05
		i=$((i + 1))
	done
	deb_in
	# The test's root and the host's are two.
	[ "$(readlink "/proc/$h/ns/mnt")" != \
	    "$(readlink /proc/self/ns/mnt)" ] ||
	    atf_fail "the root's namespace is the host's"
	atf_check -o match:'^fenced-deb / overlay ' $IN 'grep " / " /proc/mounts'
}

# What of the host the package could change, now: its user and group
# (the other users come and go with the suites that run beside), dpkg's
# status, its files.
host_state() {
	grep -h '^_fenced:' /etc/passwd /etc/group || echo "no _fenced"
	sha256sum /var/lib/dpkg/status
	for f in /etc/fenced.conf /usr/sbin/fenced /var/lib/fenced \
	    /lib/systemd/system/fenced.service; do
		[ -e $f ] && echo "$f present" || echo "$f absent"
	done
	dpkg-query -W -f '${db:Status-Abbrev}\n' fenced 2>&1
}

# Every file the package must install, sorted (docs/install.md).
deb_expected() {
	{
		echo /etc/fenced.conf
		echo /lib/systemd/system/fenced.service
		echo /usr/bin/fence-mcp
		echo /usr/bin/fencectl
		echo /usr/lib/fenced/fence-agent
		echo /usr/lib/fenced/fence-probe
		echo /usr/lib/fenced/fence-vminit
		echo /usr/lib/sysusers.d/fenced.conf
		echo /usr/lib/tmpfiles.d/fenced.conf
		echo /usr/sbin/fenced
		echo /usr/share/doc/fenced/README.Debian
		echo /usr/share/doc/fenced/changelog.gz
		echo /usr/share/doc/fenced/copyright
		echo /usr/share/lintian/overrides/fenced
		for m in "$TOPDIR"/man/*.[158]; do
			echo "/usr/share/man/man${m##*.}/${m##*/}.gz"
		done
	} | LC_ALL=C sort
}

# fenced-vm, installed beside fenced: the three boot files in
# /usr/lib/fenced/vm, root's, 0644 in a 0755 folder, and the hashes the
# installed fenced was built with.
deb_vm_files() {
	v=/usr/lib/fenced/vm
	atf_check -o inline:"ii \n" \
	    $IN "dpkg-query -W -f '\${db:Status-Abbrev}\n' fenced-vm"
	printf '%s\n' $v/fence-initrd.cpio $v/fence-root.squashfs \
	    $v/vmlinuz /usr/share/doc/fenced-vm/changelog.gz \
	    /usr/share/doc/fenced-vm/copyright > expected.vm
	$IN 'dpkg -L fenced-vm | while read -r f; do
		[ -f "$f" ] && echo "$f"; done | LC_ALL=C sort' > got.vm
	atf_check -o file:expected.vm cat got.vm
	atf_check -o inline:"755 root root\n644 root root\n644 root root\n644 root root\n" \
	    $IN "stat -c '%a %U %G' $v $v/vmlinuz $v/fence-initrd.cpio $v/fence-root.squashfs"
	# It depends on exactly the installed fenced's version and on the
	# virtual package that fenced provides, named for its hashes.
	atf_check -o save:provides -e empty \
	    $IN "dpkg-query -W -f '\${Provides}\n' fenced"
	atf_check -o match:'^fenced-vm-files-[0-9a-f]{16}$' cat provides
	atf_check -o inline:"fenced (= $($IN "dpkg-query -W -f '\${Version}' fenced")), $(cat provides)\n" \
	    $IN "dpkg-query -W -f '\${Depends}\n' fenced-vm"
	# Each file's hash is one compiled into the installed fenced, and
	# the virtual package's name is the hash of those hashes.
	for f in vmlinuz fence-initrd.cpio fence-root.squashfs; do
		h=$($IN "sha256sum < $v/$f" | cut -d' ' -f1)
		$IN "grep -qaF $h /usr/sbin/fenced" ||
		    atf_fail "$v/$f: its hash $h is not in the installed fenced"
		echo "$h  $f"
	done > sums
	atf_check -o inline:"fenced-vm-files-$(sha256sum < sums | cut -c1-16)\n" \
	    cat provides
}

# The running installed fenced (vm accel tcg: no KVM try) finds the vm
# boot files of fenced-vm and its doctor passes the vm backend; a byte
# flipped in the installed initramfs, a vm boot is refused before any
# guest starts, with the hash check's reason.
deb_vm_doctor() {
	v=/usr/lib/fenced/vm
	if [ ! -x /usr/bin/qemu-system-x86_64 ]; then
		echo "no QEMU (qemu-system-x86): the vm doctor and boot" \
		    "checks skipped" >&2
		return 0
	fi
	grep -q "vm: boot files built in, from $v\$" fenced.log ||
	    atf_fail "the log does not name $v: $(grep 'vm:' fenced.log)"
	atf_check -s ignore -o save:doctor.out $CTL doctor
	grep -q "^  ok    vm: " doctor.out ||
	    atf_fail "the doctor's vm row is not ok: $(cat doctor.out)"
	grep -q "detail: qemu [^;]*; boot files built-in, in $v;" doctor.out ||
	    atf_fail "the doctor does not name $v: $(cat doctor.out)"
	# The initramfs's first byte (the cpio magic's '0') made '1'.
	$IN "printf 1 | dd of=$v/fence-initrd.cpio bs=1 count=1 \
	    conv=notrunc status=none" || atf_fail "cannot flip a byte"
	atf_check -s exit:1 -e save:boot.err $CTL boot debvm backend vm
	grep -q "vm initrd (built-in): $v/fence-initrd.cpio: SHA-256 [0-9a-f]* is not the expected" \
	    boot.err || atf_fail "not refused for its hash: $(cat boot.err)"
}

atf_test_case installed cleanup
installed_head() {
	atf_set descr "the package of make deb, installed with dpkg into a root of the test's own (overlay on the host's /, private mount namespace): its files where docs/install.md says, _fenced made, the unit not enabled, /etc/fenced.conf a conffile; the installed fenced boots a native fence that runs echo; where the vm images are built, fenced-vm too: its boot files root's 0644 in /usr/lib/fenced/vm with the hashes of the installed fenced, whose doctor passes the vm backend from there and which refuses a vm boot once a byte of the initramfs is flipped; dpkg -r keeps the edited fenced.conf, dpkg --purge removes it; the host's _fenced user and group, dpkg status and fenced files untouched"
	atf_set require.user root
	atf_set timeout 300
}
installed_body() {
	fenced_vars
	for p in unshare nsenter chroot flock sha256sum; do
		command -v $p > /dev/null || atf_skip "no $p (util-linux, coreutils)"
	done
	deb_built
	host_state > host.before
	deb_root
	# The root starts without the package's traces, whatever the host
	# has: no _fenced (the host's suites may have made one), no
	# fenced.conf, no state.
	$IN 'for f in passwd group shadow gshadow; do
		[ -f /etc/$f ] || continue
		grep -v "^_fenced:" /etc/$f > /tmp/$f || :
		cat /tmp/$f > /etc/$f
	done
	rm -rf /etc/fenced.conf /var/lib/fenced' ||
	    atf_fail "cannot clear the root of _fenced"
	atf_check -s exit:2 $IN 'getent passwd _fenced'
	$IN 'cat > /tmp/fenced.deb' < "$DEB" || atf_fail "cannot copy the package in"
	debs=/tmp/fenced.deb
	if [ -n "$DEB_VM" ]; then
		$IN 'cat > /tmp/fenced-vm.deb' < "$DEB_VM" ||
		    atf_fail "cannot copy fenced-vm in"
		debs="$debs /tmp/fenced-vm.deb"
	fi
	atf_check -o save:dpkg-i.out -e save:dpkg-i.err \
	    $IN "dpkg -i $debs < /dev/null"
	atf_check -o inline:"ii \n" \
	    $IN "dpkg-query -W -f '\${db:Status-Abbrev}\n' fenced"

	# Where docs/install.md says, and nothing else.
	deb_expected > expected
	$IN 'dpkg -L fenced | while read -r f; do
		[ -f "$f" ] && echo "$f"; done | LC_ALL=C sort' > got
	atf_check -o file:expected cat got
	atf_check -o inline:"755 root\n755 root\n644 root\n" $IN \
	    'stat -c "%a %U" /usr/sbin/fenced /usr/lib/fenced/fence-agent /etc/fenced.conf'
	atf_check -o match:'^ExecStart=/usr/sbin/fenced -d -f /etc/fenced.conf$' \
	    $IN 'cat /lib/systemd/system/fenced.service'
	# The maintainer scripts: _fenced and the state folder made ...
	atf_check -o match:'^_fenced:x:[0-9]+:[0-9]+:fenced broker and prober:/nonexistent:/usr/sbin/nologin$' \
	    $IN 'getent passwd _fenced'
	atf_check -o match:'^_fenced:' $IN 'getent group _fenced'
	atf_check -o inline:"711 root\n" $IN 'stat -c "%a %U" /var/lib/fenced'
	# ... and nothing enabled (nothing could start it here: no systemd).
	atf_check -o empty $IN 'find /etc/systemd/system -name "fenced*"'
	# fenced.conf is dpkg's conffile.
	atf_check -o match:'^ /etc/fenced.conf [0-9a-f]{32}$' \
	    $IN "dpkg-query -W -f '\${Conffiles}\n' fenced"
	[ -z "$DEB_VM" ] || deb_vm_files

	# The admin's edit: the test's own port, fence uids and probe
	# targets; socket, state and homes stay the package's defaults,
	# unique to the root (its /run and its /var are its own).
	port=$(fenced_port)
	$IN "sed -i -e 's|^listen on .*|listen on 127.0.0.1 port $port|' \
	    -e 's|^fence uids .*|fence uids $(fenced_uids)|' \
	    -e '/^probe \(dns\|tcp\) /d' /etc/fenced.conf &&
	    printf 'probe dns \"localhost\"\nprobe tcp \"127.0.0.1:1\"\n' \
	    >> /etc/fenced.conf && echo 'vm accel tcg' >> /etc/fenced.conf" ||
	    atf_fail "cannot edit fenced.conf"
	$IN 'cat /etc/fenced.conf' > edited.conf
	atf_check -o match:"^listen on 127.0.0.1 port $port\$" cat edited.conf
	atf_check -o ignore -e ignore $IN '/usr/sbin/fenced -n -f /etc/fenced.conf'

	# The installed daemon boots a fence and runs a command in it.
	nsenter -t "$(cat holder.pid)" -m -r -w /usr/sbin/fenced -d -v \
	    -f /etc/fenced.conf > fenced.log 2>&1 &
	FENCED_PID=$!
	echo $FENCED_PID > fenced.pid
	CTL="nsenter -t $(cat holder.pid) -m -r -w /usr/bin/fencectl -s /run/fenced.sock"
	i=0
	while ! $CTL show stats > stats.out 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt 200 ] || [ ! -d /proc/$FENCED_PID ]; then
			cat fenced.log >&2
			atf_fail "the installed fenced did not come up"
		fi
		sleep 0.05
	done
	awk '$2 == "pid" { print $3 }' stats.out | tr '\n' ' ' > fenced.pids
	$IN 'for f in /var/lib/fenced/daemons/*; do
		[ -f "$f" ] && basename "$f"; done | head -1' > fenced.id
	atf_check -o save:boot.out $CTL boot deb
	atf_check -o match:"^state: *running" cat boot.out
	atf_check -o match:"^home: */var/lib/fenced/root/sandbox-homes/deb$" \
	    cat boot.out
	atf_check -o inline:"ok\n" $CTL exec deb -- echo ok
	[ -z "$DEB_VM" ] || deb_vm_doctor
	fenced_stop

	# Removed: the programs go, the admin's fenced.conf stays as edited.
	atf_check -o ignore -e ignore \
	    $IN "dpkg -r ${DEB_VM:+fenced-vm }fenced < /dev/null"
	atf_check -o inline:"rc \n" \
	    $IN "dpkg-query -W -f '\${db:Status-Abbrev}\n' fenced"
	atf_check -s exit:1 $IN 'test -e /usr/sbin/fenced'
	$IN 'cat /etc/fenced.conf' > removed.conf
	atf_check cmp edited.conf removed.conf
	# Purged: fenced.conf goes; the state (homes, snapshots) and the
	# user stay (README.Debian).
	atf_check -o ignore -e ignore $IN 'dpkg --purge fenced < /dev/null'
	atf_check -s exit:1 $IN 'test -e /etc/fenced.conf'
	atf_check -s exit:1 -o ignore -e ignore $IN 'dpkg-query -W fenced'
	atf_check $IN 'test -d /var/lib/fenced'

	# None of it reached the host.
	host_state > host.after
	atf_check -o file:host.before cat host.after
}
installed_cleanup() {
	fenced_vars
	fenced_cleanup
	h=$(cat holder.pid 2>/dev/null)
	[ -n "$h" ] || return 0
	ns=$(readlink /proc/$h/ns/mnt 2>/dev/null)
	# Every process left in the root's namespace, then its holder:
	# the namespace, and every mount of it, go with the last.
	if [ -n "$ns" ] && [ "$ns" != "$(readlink /proc/self/ns/mnt)" ]; then
		for p in /proc/[0-9]*; do
			[ "$(readlink $p/ns/mnt 2>/dev/null)" = "$ns" ] &&
			    kill -9 ${p#/proc/} 2>/dev/null
		done
	fi
	kill -9 $h 2>/dev/null
	true
}

atf_test_case lintian
lintian_head() {
	atf_set descr "lintian finds no error and no warning in the packages of make deb (fenced, and fenced-vm where the vm images are built), and every override (debian/fenced.lintian-overrides) has its comment and is used"
	atf_set timeout 300
}
lintian_body() {
	fenced_vars
	deb_built
	cp "$TOPDIR/build/deb/lintian.txt" lintian.txt
	if grep -E '^[EW]: ' lintian.txt > ew.txt; then
		atf_fail "lintian: $(cat ew.txt)"
	fi
	o=$TOPDIR/debian/fenced.lintian-overrides
	# Each override's line follows a comment or another override.
	awk '/^#/ { c = 1; next } /^[[:space:]]*$/ { c = 0; next }
	    !c { print FILENAME ":" NR ": no comment: " $0 }' "$o" > bare
	atf_check -o empty cat bare
	# Each is used: lintian lists it overridden (O:), none is stale.
	n=$(grep -c '^[^#[:space:]]' "$o")
	atf_check_equal "$n" "$(grep -c '^O: ' lintian.txt)"
}

atf_init_test_cases() {
	atf_add_test_case installed
	atf_add_test_case lintian
}
