#! /usr/bin/atf-sh
# The host doctor (docs/doctor.md): `fencectl doctor' and GET /api/host
# say, for each check of the host, each backend and each tier, whether a
# fence can be built now, and why not.  Each case makes one condition
# false without touching the host (a configuration naming a runsc that
# is not there, vm boot files missing or of the wrong hash) and checks
# that the doctor says so and that the boot it predicts to fail fails
# with the same reason.  A second local user sees the verdicts, never
# the details (paths, versions, hashes, cgroup folders).

. "$(atf_get_srcdir)/lib.subr"

# bad MESSAGE FILE: fail, FILE on stderr (a result is one line).
bad() {
	cat "$2" >&2
	atf_fail "$1 (above)"
}

# vm_files_conf KERNEL FILE: fenced.conf with KERNEL the vm kernel and
# FILE the initrd and image, each of the hash zero.
vm_files_conf() {
	_zero=0000000000000000000000000000000000000000000000000000000000000000
	{ fenced_conf
	  echo "vm on"
	  echo "vm kernel \"$1\" sha256 \"$_zero\""
	  echo "vm initrd \"$2\" sha256 \"$_zero\""
	  echo "vm image \"$2\" sha256 \"$_zero\""; } > fenced.conf
}

# The reason of the row NAME of the last doctor's output (doctor.out):
# the text after "NAME: " on its line.
doctor_reason() {
	sed -n "s/^  [a-zA-Z]* *$1: //p" doctor.out | head -1
}

# doctor_same NAME ERRFILE: the row NAME fails, and the boot's error in
# ERRFILE carries its reason word for word.
doctor_same() {
	grep -Eq "^  FAIL  $1: " doctor.out || \
	    bad "the doctor does not fail $1" doctor.out
	_why=$(doctor_reason "$1")
	[ -n "$_why" ] || atf_fail "no reason for $1"
	grep -Fq -- "$_why" "$2" || \
	    bad "the boot's error is not the doctor's reason: '$_why'" "$2"
}

atf_test_case runsc_missing cleanup
runsc_missing_head() {
	atf_set descr "a runsc that does not exist: the doctor fails the runsc backend, L3 and the default (exit 1), and a boot fails with the same reason"
	atf_set require.user root
}
runsc_missing_body() {
	fenced_vars
	{ fenced_conf; echo "backend runsc"
	  echo "runsc \"$PWD/no-such-runsc\""; } > fenced.conf
	fenced_start
	atf_check -s exit:1 -o save:doctor.out $CTL doctor
	doctor_same runsc doctor.out
	grep -Fq "no-such-runsc" doctor.out || atf_fail "runsc's path not named"
	grep -Eq "^  FAIL  L3: tier L2, backend runsc: backend-unavailable: " \
	    doctor.out || bad "L3 not failed" doctor.out
	grep -Eq "^  ok    L2: " doctor.out || atf_fail "L2 failed too"
	grep -q "^The default: cannot be built" doctor.out || \
	    atf_fail "the default is not failed"
	t=$($CTL token 2>/dev/null | tail -1)
	call "$t" GET /api/host
	expect 200 '"buildable": ?false' \
	    '"name": ?"default", ?"status": ?"fail", ?"reason": ?"tier L[0-9.]+, backend runsc: backend-unavailable: '
	why=$(doctor_reason runsc)
	# The default boot and an explicit one: the same words.
	atf_check -s exit:1 -e save:boot.err $CTL boot d
	grep -Fq -- "$why" boot.err || bad "boot" boot.err
	atf_check -s exit:1 -e save:boot2.err $CTL boot r backend runsc
	doctor_same runsc boot2.err
	grep -q "backend-unavailable" boot2.err || bad "code" boot2.err
	# Another backend is not held to it: native boots as the doctor said.
	atf_check -o ignore $CTL boot n backend native tier L1
	atf_check -o ignore $CTL stop n
	fenced_stop
}
runsc_missing_cleanup() { fenced_cleanup; }

atf_test_case vm_files cleanup
vm_files_head() {
	atf_set descr "vm boot files missing, then of the wrong hash (or no QEMU here): the doctor fails the vm backend and L4, and a vm boot fails with the same reason"
	atf_set require.user root
}
vm_files_body() {
	fenced_vars
	zero=0000000000000000000000000000000000000000000000000000000000000000
	# A vm boot file's folders must be root's alone (not /tmp's): a
	# folder of the test's homes directory, which the cleanup removes.
	d="$(fenced_homes)/.vm"
	mkdir -m 0755 "$d" || atf_fail "mkdir $d"
	printf 'not a kernel\n' > "$d/kernel"
	# First a file that is not there.
	vm_files_conf "$d/no-such-kernel" "$d/kernel"
	fenced_start
	atf_check -s exit:0 -o save:doctor.out $CTL doctor
	grep -Eq "^  FAIL  L4: tier L2, backend vm: backend-unavailable: " \
	    doctor.out || bad "L4 not failed" doctor.out
	atf_check -s exit:1 -e save:boot.err $CTL boot v backend vm
	doctor_same vm boot.err
	if [ -x /usr/bin/qemu-system-x86_64 ]; then
		grep -q "vm kernel (fenced.conf): .*no-such-kernel" doctor.out || \
		    bad "the missing kernel not named" doctor.out
	else
		grep -q "qemu-system-x86" doctor.out || \
		    bad "QEMU's absence not named" doctor.out
	fi
	# The details name each file and the hash it must have.
	grep -q "detail: qemu .*vm kernel $d/no-such-kernel sha256 $zero" \
	    doctor.out || bad "no vm detail" doctor.out
	fenced_stop
	[ -x /usr/bin/qemu-system-x86_64 ] || return 0
	# Then a file that is there with the wrong hash.
	vm_files_conf "$d/kernel" "$d/kernel"
	fenced_start
	atf_check -s exit:0 -o save:doctor.out $CTL doctor
	grep -q "vm kernel (fenced.conf): .*SHA-256" doctor.out || \
	    bad "the wrong hash not named" doctor.out
	atf_check -s exit:1 -e save:boot.err $CTL boot v backend vm
	doctor_same vm boot.err
	fenced_stop
}
vm_files_cleanup() { fenced_cleanup; }

atf_test_case vm_builtin cleanup
vm_builtin_head() {
	atf_set descr "with no vm lines the doctor's vm row says the boot files are built in and names their folder beside fenced, or, for a fenced built without them (the test build's FENCED_TEST_VM_UNBUILT), fails saying so and how to build them, as a vm boot does"
	atf_set require.user root
}
vm_builtin_body() {
	fenced_vars
	[ -x /usr/bin/qemu-system-x86_64 ] ||
	    atf_skip "QEMU is not installed: the doctor names its absence first"
	{ fenced_conf; echo "vm on"; echo "vm accel tcg"; } > fenced.conf
	d=$(realpath "$BIN")/vm
	sums="$(dirname "$BIN")/gen/vm_files.sha256"
	fenced_start
	wait_until 30 grep -q "vm: usable\|vm: unavailable" fenced.log ||
	    bad "the vm backend did not start" fenced.log
	grep -q "vm: boot files built in, from $d" fenced.log ||
	    bad "the log does not say where the boot files are" fenced.log
	atf_check -s ignore -o save:doctor.out $CTL doctor
	if [ -s "$sums" ]; then
		# This build has them: the row passes, the detail names each
		# file in the folder with the hash compiled in.
		grep -q "^  ok    vm: " doctor.out || bad "vm not ok" doctor.out
		h=$(sed -n 's/  fence-initrd.cpio$//p' "$sums")
		grep -q "detail: qemu [^;]*; boot files built-in, in $d;.* vm initrd $d/fence-initrd.cpio sha256 $h" \
		    doctor.out || bad "no built-in detail" doctor.out
	else
		grep -q "vm boot files not built into this fenced: make vm-images, then make (or make install)" \
		    doctor.out || bad "not built, not said" doctor.out
	fi
	fenced_stop
	# A fenced built without them.
	FENCED_BIN=$HOOKS/fenced
	export FENCED_TEST_VM_UNBUILT=1
	fenced_start
	atf_check -s ignore -o save:doctor.out $CTL doctor
	grep -q "sha256 (not built)" doctor.out || bad "no detail" doctor.out
	atf_check -s exit:1 -e save:boot.err $CTL boot v backend vm
	doctor_same vm boot.err
	grep -q "vm boot files not built into this fenced: make vm-images, then make (or make install)" \
	    boot.err || bad "not built, not said" boot.err
	fenced_stop
}
vm_builtin_cleanup() { fenced_cleanup; }

atf_test_case not_admin cleanup
not_admin_head() {
	atf_set descr "another local user gets the verdicts and reasons without a detail, over the control socket and GET /api/host; root gets the details"
	atf_set require.user root
}
not_admin_body() {
	fenced_vars
	users_add 1 fdoc
	u=$(head -1 users.txt)
	fenced_run_socket
	{ fenced_conf; echo "runsc \"$PWD/no-such-runsc\""; } > fenced.conf
	fenced_start
	sock=$(fenced_socket)
	atf_check -s exit:0 -o save:root.out $CTL doctor
	grep -q "^      detail: " root.out || atf_fail "root sees no detail"
	grep -q "^The default: can be built" root.out || \
	    bad "the default" root.out
	atf_check -s exit:0 -o save:user.out $(as_user "$u") \
	    "$BIN/fencectl" -s "$sock" doctor
	grep -q "detail" user.out && bad "a user sees details" user.out
	grep -Eq "^  FAIL  runsc: backend runsc is not available" user.out || \
	    bad "a user does not see the verdict" user.out
	# The rows but the details are the same for both.
	grep -v "^      detail: " root.out > root.rows
	atf_check -o file:root.rows cat user.out
	# GET /api/host: root's token the details, the user's none.
	rt=$($CTL token 2>/dev/null | tail -1)
	ut=$($(as_user "$u") "$BIN/fencectl" -s "$sock" token 2>/dev/null | tail -1)
	[ -n "$rt" ] && [ -n "$ut" ] || atf_fail "no tokens"
	call "$rt" GET /api/host
	expect 200 '"buildable": ?true' '"details": ?true' '"detail":' \
	    '"name": ?"runsc", ?"status": ?"fail"' '"default": ?true'
	call "$ut" GET /api/host
	expect 200 '"buildable": ?true' '"details": ?false' \
	    '"name": ?"cgroups"' '"name": ?"L4"'
	grep -q '"detail"' body.out && atf_fail "a user's token sees details"
	grep -q "$PWD/state" body.out && bad "a host path" body.out
	call "$ut" POST /api/host '{}'
	expect 405
	call "$ut" GET '/api/host?x=1'
	expect 400
	fenced_stop
}
not_admin_cleanup() { fenced_cleanup; }

atf_test_case userns_off
userns_off_head() {
	atf_set descr "user namespaces off (user.max_user_namespaces 0, set in a user namespace of the test's own, never the host's): the check runsc's start and the doctor share refuses, naming the sysctl; the host's value is untouched"
	atf_set require.user root
}
userns_off_body() {
	fenced_vars
	before=$(cat /proc/sys/user/max_user_namespaces)
	[ "$before" != 0 ] || atf_skip "user namespaces are off on this host"
	atf_check -o inline:"ok\n" "$REGRESS/t_userns"
	atf_check -o inline:"refused: user namespaces are off: sysctl user.max_user_namespaces is 0\n" \
	    "$REGRESS/t_userns" off
	atf_check_equal "$before" "$(cat /proc/sys/user/max_user_namespaces)"
}

atf_test_case userns_guest cleanup
userns_guest_head() {
	atf_set descr "in the v2 guest alone (make regress-vm): user.max_user_namespaces 0 for the whole machine while the daemon starts: the doctor fails runsc for it, and a runsc boot fails with the same reason"
	atf_set require.user root
}
userns_guest_body() {
	fenced_vars
	[ "$(atf_config_get guest 0)" = 1 ] || atf_skip "it changes a sysctl of the whole machine: only in the v2 guest (make regress-vm)"
	command -v runsc > /dev/null || atf_skip "runsc is not installed"
	# Off only while the daemon starts, when runsc's start looks (a
	# test program beside this one may make user namespaces; kyua here
	# has no exclusive cases).  The live check is userns_off's.
	cat /proc/sys/user/max_user_namespaces > userns.saved
	echo 0 > /proc/sys/user/max_user_namespaces
	fenced_start
	# The backends start after the daemon answers: runsc's says so last.
	wait_until 60 grep -Eq "runsc fences refused|runsc .*, platform " \
	    fenced.log
	cat userns.saved > /proc/sys/user/max_user_namespaces
	atf_check -s exit:0 -o save:doctor.out $CTL doctor
	grep -q "^  FAIL  runsc: .*user namespaces are off: sysctl user.max_user_namespaces is 0" \
	    doctor.out || bad "runsc not failed for them" doctor.out
	grep -q "^  ok    user-namespaces: " doctor.out || \
	    bad "user namespaces not back" doctor.out
	atf_check -s exit:1 -e save:boot.err $CTL boot r backend runsc
	doctor_same runsc boot.err
	fenced_stop
}
userns_guest_cleanup() {
	[ -s userns.saved ] && cat userns.saved > /proc/sys/user/max_user_namespaces
	fenced_cleanup
}

atf_init_test_cases() {
	atf_add_test_case runsc_missing
	atf_add_test_case vm_files
	atf_add_test_case vm_builtin
	atf_add_test_case not_admin
	atf_add_test_case userns_off
	atf_add_test_case userns_guest
}
