#! /usr/bin/atf-sh
# The layout the code promises (docs/architecture.md, "Where things go"),
# checked on the sources themselves: a backend is its folder plus its
# row in the backend table, so no other code names one (seam_test
# checks the pattern can match, probe_test that prober/ names none even
# in comments); and the broker stays in rooms a reader can hold.

. "$(atf_get_srcdir)/lib.subr"

# Every C or yacc source of the daemon and its programs, relative to
# the top, except the tests, benches and fuzzers (which drive every
# backend by name on purpose).
sources() {
	(cd "$TOPDIR" && find agent broker common ctl egress fencer imsg \
	    mcp parent probe prober vminit -type f \
	    \( -name '*.c' -o -name '*.h' -o -name '*.y' \) 2>/dev/null) |
	    sort
}

# The code of FILE without its comments and with every string and
# character literal emptied: what a compiler sees of its names.  A file
# the compiler cannot read fails the case: it would hide its names.
code_of() {
	gcc -fpreprocessed -dD -E -P -x c "$TOPDIR/$1" > code.raw \
	    2>/dev/null && [ -s code.raw ] ||
	    atf_fail "no code read from $1"
	sed -e 's/"\([^"\\]\|\\.\)*"/""/g' \
	    -e "s/'\\([^'\\\\]\\|\\\\.\\)*'/''/g" code.raw
}

atf_test_case backend_names
backend_names_head() {
	atf_set descr "no code outside fencer/<backend>/ names a backend: not its enum value, its table entry, nor a function or type of its folder; the table, the enum's names and the configuration aside"
}
backend_names_body() {
	command -v gcc > /dev/null || atf_skip "gcc is missing (it strips the comments)"
	fenced_vars
	# A backend's name as code spells it.
	pat='\b(BACKEND_(NATIVE|RUNSC|VM|MOCK|SUBPROCESS)|backend_(native|runsc|vm|mock|subprocess)|(runsc|vm|native|subprocess|mock|qemu|gvisor|pool)_[A-Za-z0-9_]+)\b'
	: > hits
	for f in $(sources); do
		case $f in
		fencer/native/*|fencer/runsc/*|fencer/vm/*|\
		fencer/subprocess/*|fencer/mock/*)
			continue ;;
		# The table itself: the backends' rows and their
		# declarations, the enum and its names.
		fencer/fencer_backend.c|common/names.[ch])
			continue ;;
		# The administrator's language: `backend runsc',
		# `runsc platform', the vm's boot files.
		parent/parse.y|parent/config.c|common/fenced.h)
			continue ;;
		# The vm backend's guest pid 1, a program of its own: its
		# inner boundary is the runsc backend's bundle, written by
		# that backend's code (docs/vm.md, "The inner boundary").
		vminit/vminit.c)
			continue ;;
		esac
		code_of "$f" > code
		grep -nE "$pat" code | sed "s|^|$f:|" >> hits
	done
	[ -s hits ] || return 0
	cat hits >&2
	atf_fail "$(wc -l < hits) lines outside a backend's folder name a backend (above)"
}

atf_test_case broker_rooms
broker_rooms_head() {
	atf_set descr "no file of broker/ is over 800 lines and no function in it over 80 (style(9) braces: a body runs from a line '{' to a line '}')"
}
broker_rooms_body() {
	fenced_vars
	: > big
	for f in "$TOPDIR"/broker/*.c "$TOPDIR"/broker/*.h; do
		n=$(wc -l < "$f")
		[ "$n" -le 800 ] || echo "$(basename "$f"): $n lines" >> big
		awk -v f="$(basename "$f")" '
		/^[a-z_][a-z0-9_]*\(/ { name = $0; sub(/\(.*/, "", name) }
		/^\{/ { start = NR }
		/^\}/ && start { if (NR - start - 1 > 80)
			printf "%s: %s() %d lines\n", f, name, NR - start - 1
			start = 0 }' "$f" >> big
	done
	[ -s big ] || return 0
	cat big >&2
	atf_fail "$(wc -l < big) files or functions of broker/ are too long (above)"
}

atf_init_test_cases() {
	atf_add_test_case backend_names
	atf_add_test_case broker_rooms
}
