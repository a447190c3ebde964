#!/bin/sh
# The "vm memory" rows of `make bench' (bench/run.sh): whether a vm
# fence's memory can be saved to a file and restored with QEMU's
# migration, and at what cost, measured side by side by bench/vm_mem.c
# on the vm backend's own QEMU line (docs/snapshots.md, "Memory: vm"):
# the cold boot to the agent's READY, the save and the saved file's
# size, the restore to the restored agent's first answer.  While QEMU
# refuses the save (it does for as long as the 9p home is mounted in the
# guest) the save and restore rows are skipped with QEMU's own words.
#	vm_mem.sh BUILD
# VM_MEM_RUNS: boots (default 3; each is seconds under TCG).
# VM_MEM_INITRD: another initramfs than this build's (the experiment of
# docs/snapshots.md).
set -eu
build=$1
. bench/rows.subr
n=${VM_MEM_RUNS:-3}
skip() {
	echo "vm memory: skipped, $1"
	for r in "vm (tcg) QEMU boot to agent ready" \
	    "vm (tcg) memory save, guest running on" \
	    "vm (tcg) saved memory, 512 MiB guest" \
	    "vm (tcg) restore to first answer"; do
		bench_rows_skip "vm memory" "$r" "$1"
	done
	exit 0
}
conf=$(sh images/vm-conf "${IMAGES:-build/images}" "$build/vm" 2>&1) ||
    skip "no vm boot files ($conf; make vm-images)"
path_of() { echo "$conf" | sed -n "s/^vm $1 \"\(.*\)\" sha256 .*/\1/p"; }
kernel=$(path_of kernel) initrd=${VM_MEM_INITRD:-$(path_of initrd)}
image=$(path_of image)
[ -x /usr/bin/qemu-system-x86_64 ] || skip "no qemu-system-x86_64"
tmp=$(mktemp -d /tmp/fenced-bench-vm-mem.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# Exit 3: QEMU refused the save, the rows say why.
rc=0
"$build/bench/vm_mem" "$kernel" "$initrd" "$image" "$tmp" "$n" || rc=$?
[ $rc -eq 0 ] || [ $rc -eq 3 ]
