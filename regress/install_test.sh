#! /usr/bin/atf-sh
# make install as a Debian admin expects it (issue 34, docs/install.md):
# the exact layout and modes under DESTDIR, the unit's installed paths,
# an admin's fenced.conf never overwritten, make uninstall; then the
# installed daemon, under what of the unit applies without systemd as
# init, boots fences from the programs of its libexec folder.

. "$(atf_get_srcdir)/lib.subr"

# make install or uninstall into ./dest (or $DEST), from the source
# tree, of the built tree the suite runs: -o all, so that nothing of the
# tree other tests run is remade under them, whatever make thinks of it.
install_make() {
	make -o all --no-print-directory -C "$TOPDIR" BUILD="$(dirname "$BIN")" \
	    DESTDIR="${DEST:-$PWD/dest}" PREFIX=/usr "$@" > make.out 2>&1 ||
	    atf_fail "make $*: $(cat make.out)"
	! grep -E '^(cc|ar|byacc) ' make.out ||
	    atf_fail "make $* rebuilt the suite's build"
}

# Every file under ./dest with its mode, sorted.
install_list() {
	(cd dest && find . -type f -printf '%m %P\n' | LC_ALL=C sort)
}

# The vm boot files' hashes this build was linked with (empty: it has
# none, and installs none).
install_vm_sums() {
	cat "$(dirname "$BIN")/gen/vm_files.sha256" 2>/dev/null
}

# What PREFIX=/usr must put: the programs, the libexec folder, the vm
# boot files where this build has them, the unit, sysusers.d and
# tmpfiles.d, the configuration, every manual.
install_expected() {
	{
		echo "644 etc/fenced.conf"
		echo "755 usr/bin/fence-mcp"
		echo "755 usr/bin/fencectl"
		echo "755 usr/lib/fenced/fence-agent"
		echo "755 usr/lib/fenced/fence-probe"
		echo "755 usr/lib/fenced/fence-vminit"
		install_vm_sums | while read -r _h f; do
			echo "644 usr/lib/fenced/vm/$f"
		done
		echo "644 usr/lib/systemd/system/fenced.service"
		echo "644 usr/lib/sysusers.d/fenced.conf"
		echo "644 usr/lib/tmpfiles.d/fenced.conf"
		echo "755 usr/sbin/fenced"
		for m in "$TOPDIR"/man/*.[158]; do
			echo "644 usr/share/man/man${m##*.}/${m##*/}"
		done
	} | LC_ALL=C sort
}

atf_test_case layout
layout_head() {
	atf_set descr "make install DESTDIR PREFIX=/usr lays out exactly the expected files and modes, the unit with /usr/sbin/fenced and no /usr/local, never overwrites an edited fenced.conf; make uninstall removes all but it"
	atf_set timeout 120
}
layout_body() {
	fenced_vars
	command -v make > /dev/null || atf_skip "no make"
	install_make install
	install_expected > expected
	install_list > got
	atf_check -o file:expected cat got
	# The vm folder where the build has the files, none where not.
	if [ -n "$(install_vm_sums)" ]; then
		atf_check -o inline:"755\n" stat -c %a dest/usr/lib/fenced/vm
		(cd dest/usr/lib/fenced/vm && install_vm_sums | sha256sum -c) \
		    > /dev/null || atf_fail "installed vm files not the hashed"
	else
		atf_check test ! -e dest/usr/lib/fenced/vm
	fi
	u=dest/usr/lib/systemd/system/fenced.service
	atf_check -o inline:"ExecStartPre=/usr/sbin/fenced -n -f /etc/fenced.conf\nExecStart=/usr/sbin/fenced -d -f /etc/fenced.conf\n" \
	    grep '^ExecStart' $u
	atf_check -s exit:1 grep -e /usr/local -e '@[A-Z]*@' $u
	atf_check -o match:'^u _fenced ' cat dest/usr/lib/sysusers.d/fenced.conf
	atf_check -o match:'^d /var/lib/fenced 0711 root root' \
	    cat dest/usr/lib/tmpfiles.d/fenced.conf
	atf_check cmp "$TOPDIR/etc/fenced.conf" dest/etc/fenced.conf
	# An admin's edit survives the next install.
	echo 'admin group "wheel"' >> dest/etc/fenced.conf
	cp dest/etc/fenced.conf edited
	install_make install
	atf_check cmp edited dest/etc/fenced.conf
	install_make uninstall
	install_list > left
	atf_check -o inline:"644 etc/fenced.conf\n" cat left
	atf_check test ! -e dest/usr/lib/fenced
}

atf_test_case vm_folder cleanup
vm_folder_head() {
	atf_set descr "the vm boot files installed in /usr/lib/fenced/vm, 0644 root's in a 0755 root folder, are what the installed fenced boots with no vm line: the doctor says built-in and names them; one byte changed in the initramfs is refused naming it and its hash, a missing kernel named with the fix; uninstall removes them"
	atf_set require.user root
	atf_set timeout 120
}
vm_folder_body() {
	fenced_vars
	command -v make > /dev/null || atf_skip "no make"
	[ -n "$(install_vm_sums)" ] || atf_skip "this build has no vm boot \
files (make vm-images, as root, builds them; a sanitizer build has none)"
	[ -x /usr/bin/qemu-system-x86_64 ] ||
	    atf_skip "QEMU is not installed: the doctor names its absence first"
	# The files' folders must be root's alone, as /tmp is not: the
	# case's own folder under /var/lib.
	DEST=$(fenced_homes)/dest
	install_make install
	vm=$DEST/usr/lib/fenced/vm
	atf_check -o inline:"755 0 0\n" stat -c '%a %u %g' "$vm"
	for f in vmlinuz fence-initrd.cpio fence-root.squashfs; do
		atf_check -o inline:"644 0 0\n" stat -c '%a %u %g' "$vm/$f"
		atf_check cmp "$vm/$f" "$BIN/vm/$f"
	done
	FENCED_BIN=$DEST/usr/sbin/fenced
	{ fenced_conf; echo "vm on"; echo "vm accel tcg"; } > fenced.conf
	fenced_start
	wait_until 30 grep -q "vm: usable" fenced.log ||
	    atf_fail "the vm backend did not start"
	grep -q "vm: boot files built in, from $vm" fenced.log ||
	    atf_fail "the log does not name $vm"
	atf_check -o save:doctor.out $CTL doctor
	grep -q "^  ok    vm: " doctor.out || atf_fail "vm is not ok"
	grep -q "detail: qemu [^;]*; boot files built-in, in $vm; vm kernel $vm/vmlinuz sha256 " \
	    doctor.out || atf_fail "the doctor does not name $vm"
	# One byte changed after the start: refused at the launch.
	h=$(install_vm_sums | sed -n 's/  fence-initrd.cpio$//p')
	printf '\377' | dd of="$vm/fence-initrd.cpio" bs=1 seek=4096 \
	    conv=notrunc 2> /dev/null
	atf_check -s exit:1 -e match:"vm initrd \(built-in\): $vm/fence-initrd.cpio: SHA-256 [0-9a-f]{64} is not the expected $h: make vm-images" \
	    $CTL boot v backend vm
	fenced_stop
	# At the start, a missing file is named, with the fix.
	rm "$vm/vmlinuz"
	fenced_start
	atf_check -s exit:1 -e match:"vm kernel $vm/vmlinuz missing: make vm-images, then make \(or make install\)" \
	    $CTL boot v backend vm
	fenced_stop
	install_make uninstall
	atf_check test ! -e "$vm"
}
vm_folder_cleanup() {
	fenced_vars
	fenced_cleanup
}

atf_test_case installed_boot cleanup
installed_boot_head() {
	atf_set descr "the installed fenced, in namespaces as the unit's ProtectSystem, ProtectKernelModules, ProtectKernelLogs, ProtectProc, PrivateTmp and PrivateMounts make them, under its NoNewPrivileges and CapabilityBoundingSet, finds fence-agent and fence-probe in its libexec folder (none beside it) and boots every tier, which earns its level, and runsc and vm fences where this machine has them, each running a command"
	atf_set require.user root
	atf_set timeout 120
}
installed_boot_body() {
	fenced_vars
	command -v make > /dev/null || atf_skip "no make"
	command -v setpriv > /dev/null && command -v unshare > /dev/null ||
	    atf_skip "no setpriv or unshare (util-linux)"
	install_make install
	# Nothing beside fenced: a fence boots only if its programs are
	# found in the libexec folder.
	atf_check test ! -e dest/usr/sbin/fence-agent
	# The unit's bounding set, as setpriv spells it.
	caps=$(sed -n '/^CapabilityBoundingSet=~/,/[^\\]$/p' \
	    dest/usr/lib/systemd/system/fenced.service | tr -d '\\\n' |
	    sed 's/^CapabilityBoundingSet=~//; s/  */ /g; s/^ //; s/ $//' |
	    tr 'A-Z ' 'a-z,' | sed 's/cap_/-/g')
	[ -n "$caps" ] || atf_fail "no CapabilityBoundingSet in the unit"
	for o in ProtectSystem=full ProtectKernelModules=yes PrivateTmp=yes \
	    ProtectKernelLogs=yes PrivateMounts=yes ProtectProc=invisible; do
		grep -qx "$o" dest/usr/lib/systemd/system/fenced.service ||
		    atf_fail "the unit has no $o, which the test imitates"
	done
	# The unit's namespaces as systemd makes them: a mount namespace,
	# slave of the host's, with /usr, /etc and /boot read-only
	# (ProtectSystem=full), the modules' folder inaccessible
	# (ProtectKernelModules=), /var/tmp its own (PrivateTmp=; not /tmp,
	# which holds this test's work folder), a /proc of its own that
	# shows only the processes one may trace (ProtectProc=invisible),
	# the kernel's log files covered (ProtectKernelLogs=); then
	# no_new_privs and the bounding set.  Not imitated: the filters of
	# the unit's system calls (RestrictRealtime=,
	# SystemCallArchitectures=, and those of ProtectKernelModules=,
	# ProtectKernelLogs=); scripts/v2-guest.sh unit-systemd runs the
	# unit itself under systemd.
	cat > ns.sh <<'SH'
for d in /usr /etc /boot; do
	[ -d $d ] || continue
	mount --bind $d $d && mount -o remount,bind,ro $d || exit 1
done
[ ! -d /usr/lib/modules ] || mount -t tmpfs -o mode=000 tmpfs \
    /usr/lib/modules || exit 1
mount -t tmpfs -o mode=1777 tmpfs /var/tmp || exit 1
mount -t proc -o hidepid=invisible proc /proc || exit 1
for f in /proc/kmsg /dev/kmsg; do
	[ ! -e $f ] || mount --bind /dev/null $f || exit 1
done
exec "$@"
SH
	cat > fenced.sh <<SH
#! /bin/sh
exec unshare -m --propagation slave -- sh $PWD/ns.sh \
    setpriv --no-new-privs --bounding-set=$caps -- \
    $PWD/dest/usr/sbin/fenced "\$@"
SH
	chmod 0755 fenced.sh
	FENCED_BIN=$PWD/fenced.sh
	fenced_conf > fenced.conf
	! vm_available || VM_ACCEL=auto vm_conf_lines >> fenced.conf
	fenced_start
	atf_check_equal 1 "$(status_field $FENCED_PID NoNewPrivs)"
	[ "$(readlink /proc/$FENCED_PID/ns/mnt)" != "$(readlink /proc/self/ns/mnt)" ] ||
	    atf_fail "the daemon is in the test's mount namespace"
	# Without what the unit drops (linux/capability.h's numbers), with
	# SYS_ADMIN (21).
	bnd=$((0x$(status_field $FENCED_PID CapBnd)))
	dropped=0
	for c in 16 25 20 35 9 22 26 36 28 33 32 34 30 37; do
		dropped=$((dropped | (1 << c)))
	done
	atf_check_equal 0 $((bnd & dropped))
	atf_check_equal $((1 << 21)) $((bnd & (1 << 21)))
	# Every tier, and every other backend this machine has.
	for t in L1 L1.5 L2; do
		k=n$(echo $t | tr -d L.)
		atf_check -o match:"^state: *running" $CTL boot $k tier $t
		atf_check -o inline:"ok\n" $CTL exec $k -- echo ok
		atf_check_equal $t "$(level_of $k)"
	done
	if command -v runsc > /dev/null; then
		atf_check -o match:"^state: *running" $CTL boot r backend runsc
		atf_check -o inline:"ok\n" $CTL exec r -- echo ok
	fi
	if vm_available; then
		atf_check -o match:"^state: *running" $CTL boot v backend vm
		atf_check -o inline:"ok\n" $CTL exec v -- echo ok
		atf_check -o ignore $CTL stop v
	fi
	fenced_stop
}
installed_boot_cleanup() {
	fenced_vars
	fenced_cleanup
}

atf_test_case root_homes cleanup
root_homes_head() {
	atf_set descr "with the default homes \"~/sandbox-homes\", a root-owned fence's home is <state>/root/sandbox-homes/<key>, made by the daemon 0700 root's, never under /root"
	atf_set require.user root
	atf_set timeout 60
}
root_homes_body() {
	fenced_vars
	# Homes are never under /tmp, where the work folder is: the state
	# (and so root's homes) in the case's own folder under /var/lib.
	st=$(fenced_homes)/state
	ln -s "$st" state
	fenced_conf | sed "s|^state .*|state \"$st\"|; s|^homes .*|homes \"~/sandbox-homes\"|" \
	    > fenced.conf
	fenced_start
	atf_check -o inline:"700 0\n" stat -c '%a %u' "$st/root"
	atf_check -o match:"^home: *$st/root/sandbox-homes/rh$" \
	    $CTL boot rh
	atf_check -o inline:"ok\n" $CTL exec rh -- sh -c 'echo ok > f; cat f'
	atf_check -o inline:"ok\n" cat "$st/root/sandbox-homes/rh/f"
	fenced_stop
}
root_homes_cleanup() {
	fenced_vars
	fenced_cleanup
}

atf_init_test_cases() {
	atf_add_test_case layout
	atf_add_test_case installed_boot
	atf_add_test_case vm_folder
	atf_add_test_case root_homes
}
