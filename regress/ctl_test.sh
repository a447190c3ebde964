#! /usr/bin/atf-sh
# fencectl's command line (ctl/parser.c), without a daemon: t_ctlrecv
# listens on a socket of the case's own, runs fencectl against it and
# prints the one request it sent, decoded, then fencectl's exit status.
# A command line fencectl refuses sends nothing: only "exit 1".

. "$(atf_get_srcdir)/lib.subr"

# t_ctlrecv's account of one fencectl command line: $RECV WORDS...
ctl_vars() {
	fenced_vars
	RECV="$REGRESS/t_ctlrecv $PWD/recv.sock $BIN/fencectl"
}

# Each "== WORDS" line of stdin run, the account after it: the same text
# back when every command line sends what it says.
ctl_golden() {
	cat > golden.txt
	sed -n 's/^== //p' golden.txt | while IFS= read -r line; do
		echo "== $line"
		eval "set -- $line"
		$RECV "$@" 2>/dev/null < /dev/null
	done > got.txt
	diff -u golden.txt got.txt >&2 || atf_fail "requests differ"
}

atf_test_case help
help_head() {
	atf_set descr "fencectl --help, -h and help print every command on stdout and exit 0"
}
help_body() {
	ctl_vars
	atf_check -o save:help.txt "$BIN/fencectl" --help
	atf_check -o file:help.txt "$BIN/fencectl" -h
	atf_check -o file:help.txt "$BIN/fencectl" help
	atf_check -o file:help.txt "$BIN/fencectl" -s /nonexistent --help
	grep -q '^usage: fencectl \[-hnV\] \[-s socket\] \[-w seconds\] command' help.txt ||
	    atf_fail "no usage line: $(cat help.txt)"
	for c in "show stats" "show environments" "show environment KEY" \
	    "boot KEY \[tier TIER\]" "stop KEY | all" \
	    "exec KEY \[timeout MS\] \[cwd DIR\] \[output BYTES\] \[undo\] -- ARGV" \
	    "git-config KEY \[name NAME\] \[email EMAIL\]" \
	    "git-init KEY \[PATH\]" "probe KEY" "log verbose" "log brief" \
	    "reload" "token \[-r\] \[-d\] \[NAME\]" "show tokens" \
	    "snapshot KEY \[NAME\]" "show snapshots \[KEY\]" \
	    "restore KEY NAME" "undo KEY" "delete snapshot KEY NAME" "help"; do
		grep -q "^	$c" help.txt || atf_fail "help lacks $c"
	done
	for o in backend inner require lifetime memory pids cpu from; do
		grep -q "\[$o " help.txt || atf_fail "help lacks boot's $o"
	done
}

atf_test_case usage
usage_head() {
	atf_set descr "no command, an unknown command or an unknown option: the commands on stderr, exit 1, nothing sent"
}
usage_body() {
	ctl_vars
	atf_check -s exit:1 -e match:"^usage: fencectl" -e match:"^	show stats" \
	    "$BIN/fencectl"
	atf_check -s exit:1 -e match:'^fencectl: unknown command "frobnicate"$' \
	    -e match:"^usage: fencectl" -e match:"^	exec KEY" \
	    "$BIN/fencectl" frobnicate
	atf_check -s exit:1 -e match:"^usage: fencectl" -e match:"^	token" \
	    "$BIN/fencectl" -x show stats
	atf_check -o inline:"exit 1\n" -e ignore $RECV
	atf_check -o inline:"exit 1\n" -e ignore $RECV frobnicate
	atf_check -o inline:"exit 1\n" -e ignore $RECV Show stats
}

atf_test_case version
version_head() {
	atf_set descr "fencectl -V and --version and fenced -V print the one version and exit 0"
}
version_body() {
	ctl_vars
	atf_check -o save:v.txt "$BIN/fencectl" -V
	atf_check -o file:v.txt "$BIN/fencectl" --version
	grep -Eq '^fencectl [0-9]+\.[0-9]+(\.[0-9]+)?$' v.txt ||
	    atf_fail "not a version: $(cat v.txt)"
	atf_check -o save:d.txt "$BIN/fenced" -V
	[ "$(sed 's/^fenced //' d.txt)" = "$(sed 's/^fencectl //' v.txt)" ] ||
	    atf_fail "two versions: $(cat v.txt d.txt)"
	atf_check -s exit:1 -e match:"usage: fenced \[-dnVv\]" "$BIN/fenced" -x
}

atf_test_case unreachable
unreachable_head() {
	atf_set descr "a socket not there, or no daemon behind it: the path, and how to start fenced or name its socket"
}
unreachable_body() {
	ctl_vars
	atf_check -s exit:1 -e match:"^fencectl: cannot reach fenced at $PWD/none.sock: No such file or directory; is fenced running\?" \
	    -e match:"make run" -e match:"-s SOCKET" \
	    "$BIN/fencectl" -s "$PWD/none.sock" show stats
	: > notsock
	atf_check -s exit:1 -e match:"cannot reach fenced at $PWD/notsock: Connection refused; is fenced running" \
	    "$BIN/fencectl" -s "$PWD/notsock" show environments
	# The commands with connections of their own say the same.
	atf_check -s exit:1 -e match:"cannot reach fenced at $PWD/none.sock: No such file" \
	    "$BIN/fencectl" -s "$PWD/none.sock" term k1 -l
	atf_check -s exit:1 -e match:"cannot reach fenced at $PWD/none.sock: No such file" \
	    "$BIN/fencectl" -s "$PWD/none.sock" forward k1 8000
	[ "$(id -u)" != 0 ] || return 0
	mkdir shut && chmod 0 shut
	atf_check -s exit:1 -e match:"cannot reach fenced at $PWD/shut/s.sock: Permission denied; .*mode 0666" \
	    "$BIN/fencectl" -s "$PWD/shut/s.sock" show stats
	chmod 700 shut
}

atf_test_case mistyped
mistyped_head() {
	atf_set descr "a mistyped or missing word is named, with what was expected there, and nothing is sent"
}
mistyped_body() {
	ctl_vars
	atf_check -s exit:1 -e inline:'fencectl: show environmnts: unknown word "environmnts"; expected one of: stats environments environment tokens processes process snapshots metrics audit\n' \
	    "$BIN/fencectl" show environmnts
	atf_check -s exit:1 -e inline:"fencectl: show: missing word; expected one of: stats environments environment tokens processes process snapshots metrics audit\n" \
	    "$BIN/fencectl" show
	atf_check -s exit:1 -e inline:"fencectl: show environment: missing word; expected KEY\n" \
	    "$BIN/fencectl" show environment
	atf_check -s exit:1 -e inline:'fencectl: show stats extra: unknown word "extra"; expected nothing more\n' \
	    "$BIN/fencectl" show stats extra
	atf_check -s exit:1 -e inline:'fencectl: exec k bogus: unknown word "bogus"; expected one of: timeout cwd output undo --\n' \
	    "$BIN/fencectl" exec k bogus 1 -- true
	atf_check -s exit:1 -e inline:"fencectl: exec k: missing word; expected one of: timeout cwd output undo --\n" \
	    "$BIN/fencectl" exec k
	atf_check -s exit:1 -e inline:'fencectl: boot k colour: unknown word "colour"; expected one of: tier backend inner require lifetime memory pids cpu cold egress from, or nothing more\n' \
	    "$BIN/fencectl" boot k colour red
	atf_check -s exit:1 -e inline:"fencectl: boot k tier: missing word; expected TIER\n" \
	    "$BIN/fencectl" boot k tier
	atf_check -s exit:1 -e inline:"fencectl: boot k tier L3: not one of L1, L1.5, L2\n" \
	    "$BIN/fencectl" boot k tier L3
	# require names a level: L3 and L4 too, nothing past them.
	atf_check -s exit:1 -e inline:"fencectl: boot k require L5: not one of L1, L1.5, L2, L3, L4, L4+runsc\n" \
	    "$BIN/fencectl" boot k require L5
	atf_check -s exit:1 -e inline:"fencectl: boot k inner gvisor: not one of none, runsc\n" \
	    "$BIN/fencectl" boot k inner gvisor
	atf_check -s exit:1 -e inline:"fencectl: boot k require not-earned: not one of L1, L1.5, L2, L3, L4, L4+runsc\n" \
	    "$BIN/fencectl" boot k require not-earned
	atf_check -s exit:1 -e inline:"fencectl: boot k backend qemu: not one of native, runsc, vm, mock, subprocess\n" \
	    "$BIN/fencectl" boot k backend qemu
	atf_check -s exit:1 -e inline:"fencectl: boot k egress: missing word; expected NAME:PORT\n" \
	    "$BIN/fencectl" boot k egress
	atf_check -s exit:1 -e inline:"fencectl: boot k egress 127.0.0.1:80: not an egress entry: an IP literal is not a name\n" \
	    "$BIN/fencectl" boot k egress 127.0.0.1:80
	atf_check -s exit:1 -e inline:"fencectl: boot k egress a.test:1 b.test: not an egress entry: the entry has no \":PORT\"\n" \
	    "$BIN/fencectl" boot k egress a.test:1 b.test
	atf_check -s exit:1 -e inline:"fencectl: boot k egress a.test:1 tier L2 egress A.TEST:1: a.test:1 is given twice\n" \
	    "$BIN/fencectl" boot k egress a.test:1 tier L2 egress A.TEST:1
	atf_check -s exit:1 -e match:": at most 32 egress entries" \
	    "$BIN/fencectl" boot k egress $(seq -f 'h%g.test:1' 1 33)
	atf_check -s exit:1 -e inline:"fencectl: token -x: a token's name is 1 to 32 of A-Z, a-z, 0-9, '.', '_' and '-', not beginning with '-'\n" \
	    "$BIN/fencectl" token -x
	atf_check -s exit:1 -e inline:'fencectl: token -d: missing word; expected NAME\n' \
	    "$BIN/fencectl" token -d
	atf_check -s exit:1 -e inline:'fencectl: log loud: unknown word "loud"; expected one of: verbose brief\n' \
	    "$BIN/fencectl" log loud
	atf_check -s exit:1 -e inline:'fencectl: git-init k a b: unknown word "b"; expected nothing more\n' \
	    "$BIN/fencectl" git-init k a b
	# A word that is not text is shown escaped and cut short.
	atf_check -s exit:1 -e match:'unknown word "a\\033b"' \
	    "$BIN/fencectl" show "$(printf 'a\033b')"
	atf_check -s exit:1 -e match:'unknown word "x{64}\.\.\."' \
	    "$BIN/fencectl" show "$(printf '%0100d' 0 | tr 0 x)"
	for c in "show environmnts" "exec k bogus 1 -- true" "boot k tier" \
	    "boot k egress 10.0.0.1:1" \
	    "token -x" "log loud" "git-init k a b" "stop k1 k2"; do
		atf_check -o inline:"exit 1\n" -e ignore $RECV $c
	done
}

atf_test_case bounds
bounds_head() {
	atf_set descr "numbers: each bound accepted, one past it refused with the bounds named, nothing sent"
}
bounds_body() {
	ctl_vars
	for c in "lifetime 0:1 to 604800" "lifetime 604801:1 to 604800" \
	    "pids 7:8 to 65536" "pids 65537:8 to 65536" "pids -5:8 to 65536" \
	    "pids 1e3:8 to 65536" "pids 99999999999999999999:8 to 65536" \
	    "memory 4194303:4194304 to 1099511627776" \
	    "memory 2M:4194304 to 1099511627776" \
	    "memory 1025G:4194304 to 1099511627776" \
	    "memory 1T:4194304 to 1099511627776"; do
		w=${c%%:*}
		atf_check -s exit:1 -e inline:"fencectl: boot k $w: not a number from ${c#*:}\n" \
		    "$BIN/fencectl" boot k $w
		atf_check -o inline:"exit 1\n" -e ignore $RECV boot k $w
	done
	for w in 0.001 0.009 1024.5 2000 abc nan inf -1; do
		atf_check -s exit:1 -e inline:"fencectl: boot k cpu $w: not a number of cpus from 0.01 to 1024\n" \
		    "$BIN/fencectl" boot k cpu $w
		atf_check -o inline:"exit 1\n" -e ignore $RECV boot k cpu $w
	done
	for c in "timeout 99:100 to 60000" "timeout 60001:100 to 60000" \
	    "output 1023:1024 to 1048576" "output 2M:1024 to 1048576"; do
		w=${c%%:*}
		atf_check -s exit:1 -e inline:"fencectl: exec k $w: not a number from ${c#*:}\n" \
		    "$BIN/fencectl" exec k $w -- true
	done
	atf_check -s exit:1 -e inline:"fencectl: exec k --: give 1 to 256 arguments after --\n" \
	    "$BIN/fencectl" exec k --
	atf_check -s exit:1 -e inline:"fencectl: exec k --: give 1 to 256 arguments after --\n" \
	    "$BIN/fencectl" exec k -- $(seq 257)
	atf_check -o match:"^argc 256$" $RECV exec k -- $(seq 256) < /dev/null
	# Standard input goes whole; -n sends none; over 1 MiB, nothing.
	printf 'abc' > in3
	atf_check -o match:"^stdin 3$" $RECV exec k -- cat < in3
	atf_check -o match:"^stdin 0$" $RECV -n exec k -- cat < in3
	head -c 1048576 /dev/zero > in1m
	atf_check -o match:"^stdin 1048576$" $RECV exec k -- cat < in1m
	head -c 1048577 /dev/zero > in1m1
	atf_check -o inline:"exit 1\n" -e match:"larger than 1048576 bytes; not sent" \
	    $RECV exec k -- cat < in1m1
	# -w: whole seconds from 1 to 86400, or nothing is sent.
	for w in 0 86401 -1 abc 1.5; do
		atf_check -s exit:1 -e match:"^fencectl: -w $w: .* \(seconds, 1 to 86400\)\$" \
		    "$BIN/fencectl" -w $w show stats
		atf_check -o inline:"exit 1\n" -e ignore $RECV -w $w show stats
	done
	atf_check -o match:"^exit 0\$" $RECV -w 1 show stats
	atf_check -o match:"^exit 0\$" $RECV --wait 86400 show stats
	# The bounds themselves are numbers.
	ctl_golden <<'GOLDEN'
== boot k lifetime 1 pids 8 memory 4194304 cpu 0.01
request IMSG_CTL_BOOT
key "k"
tier 0
backend 0
require 0
lifetime 1
memory 4194304
pids 8
cpu 10
exit 0
== boot k lifetime 604800 pids 65536 memory 1024G cpu 1024
request IMSG_CTL_BOOT
key "k"
tier 0
backend 0
require 0
lifetime 604800
memory 1099511627776
pids 65536
cpu 1024000
exit 0
== exec k timeout 100 output 1024 -- true
request IMSG_CTL_EXEC_STREAM
key "k"
owner none
timeout 100
output 1024
cwd ""
argc 1
argv "true"
stdin 0
exit 0
== exec k timeout 60000 output 1M -- true
request IMSG_CTL_EXEC_STREAM
key "k"
owner none
timeout 60000
output 1048576
cwd ""
argc 1
argv "true"
stdin 0
exit 0
GOLDEN
}

atf_test_case names
names_head() {
	atf_set descr "KEY, USER/KEY and UID/KEY: resolved or refused by name, before anything is sent"
}
names_body() {
	ctl_vars
	atf_check -s exit:1 -e inline:"fencectl: boot ../x: not a fence key ([a-z0-9][a-z0-9_-]{0,62})\n" \
	    "$BIN/fencectl" boot ../x
	atf_check -s exit:1 -e match:"^fencectl: exec K1: not a fence key" \
	    "$BIN/fencectl" exec K1 -- true
	atf_check -s exit:1 -e match:"^fencectl: show environment a/b/c: not a fence key" \
	    "$BIN/fencectl" show environment a/b/c
	atf_check -s exit:1 -e inline:"fencectl: exec no-such-user-zz/k: no such user no-such-user-zz\n" \
	    "$BIN/fencectl" exec no-such-user-zz/k -- true
	atf_check -s exit:1 -e inline:"fencectl: probe 4294967295/k: uid 4294967295 is too large\n" \
	    "$BIN/fencectl" probe 4294967295/k
	atf_check -s exit:1 -e inline:"fencectl: boot: name your own fence, KEY alone\n" \
	    "$BIN/fencectl" boot root/k
	atf_check -o inline:"exit 1\n" -e ignore $RECV boot root/k
	atf_check -o inline:"exit 1\n" -e ignore $RECV boot ../x
}

atf_test_case requests
requests_head() {
	atf_set descr "every command and option fencectl has sends the request it sent before the token tables"
}
requests_body() {
	ctl_vars
	# Recorded from the fencectl before ctl/parser.c; require is a
	# level since L3 and L4 could be asked for (enum fence_level).
	ctl_golden <<'GOLDEN'
== show stats
request IMSG_CTL_SHOW_STATS
exit 0
== show environments
request IMSG_CTL_LIST
key ""
owner none
exit 0
== show environment k1
request IMSG_CTL_LIST
key "k1"
owner none
exit 1
== show environment root/k1
request IMSG_CTL_LIST
key "k1"
owner 0
exit 1
== show environment 0/k1
request IMSG_CTL_LIST
key "k1"
owner 0
exit 1
== probe k1
request IMSG_CTL_PROBE
key "k1"
owner none
exit 0
== probe root/k1
request IMSG_CTL_PROBE
key "k1"
owner 0
exit 0
== stop k1
request IMSG_CTL_STOP
key "k1"
owner none
exit 0
== stop all
request IMSG_CTL_STOP
key ""
owner none
exit 0
== stop root/all
request IMSG_CTL_STOP
key ""
owner 0
exit 0
== stop 1000/k1
request IMSG_CTL_STOP
key "k1"
owner 1000
exit 0
== boot k1
request IMSG_CTL_BOOT
key "k1"
tier 0
backend 0
require 0
lifetime 0
memory 0
pids 0
cpu 0
exit 0
== boot k1 tier L1
request IMSG_CTL_BOOT
key "k1"
tier 1
backend 0
require 0
lifetime 0
memory 0
pids 0
cpu 0
exit 0
== boot k1 tier L1.5 require L1.5
request IMSG_CTL_BOOT
key "k1"
tier 2
backend 0
require 3
lifetime 0
memory 0
pids 0
cpu 0
exit 0
== boot k1 tier L2 require L2 lifetime 60 memory 64M pids 100 cpu 0.5
request IMSG_CTL_BOOT
key "k1"
tier 3
backend 0
require 4
lifetime 60
memory 67108864
pids 100
cpu 500
exit 0
== boot k1 backend runsc require L3
request IMSG_CTL_BOOT
key "k1"
tier 0
backend 2
require 5
lifetime 0
memory 0
pids 0
cpu 0
exit 0
== boot k1 require L4
request IMSG_CTL_BOOT
key "k1"
tier 0
backend 0
require 6
lifetime 0
memory 0
pids 0
cpu 0
exit 0
== boot k1 backend native
request IMSG_CTL_BOOT
key "k1"
tier 0
backend 1
require 0
lifetime 0
memory 0
pids 0
cpu 0
exit 0
== boot k1 tier L2 egress Allowed.Test:8443 *.googleapis.com:443 cold egress api.example.com:443
request IMSG_CTL_BOOT
key "k1"
tier 3
backend 0
require 0
lifetime 0
memory 0
pids 0
cpu 0
egress "allowed.test:8443"
egress "*.googleapis.com:443"
egress "api.example.com:443"
exit 0
== boot k1 backend mock memory 4194304 pids 8 cpu 0.01
request IMSG_CTL_BOOT
key "k1"
tier 0
backend 4
require 0
lifetime 0
memory 4194304
pids 8
cpu 10
exit 0
== boot k1 memory 1G lifetime 604800 pids 65536 cpu 1024
request IMSG_CTL_BOOT
key "k1"
tier 0
backend 0
require 0
lifetime 604800
memory 1073741824
pids 65536
cpu 1024000
exit 0
== boot k1 memory 8k
exit 1
== boot k1 tier L1 tier L2
request IMSG_CTL_BOOT
key "k1"
tier 3
backend 0
require 0
lifetime 0
memory 0
pids 0
cpu 0
exit 0
== exec k1 -- id
request IMSG_CTL_EXEC_STREAM
key "k1"
owner none
timeout 0
output 0
cwd ""
argc 1
argv "id"
stdin 0
exit 0
== exec k1 -- sh -c "echo a b"
request IMSG_CTL_EXEC_STREAM
key "k1"
owner none
timeout 0
output 0
cwd ""
argc 3
argv "sh"
argv "-c"
argv "echo a b"
stdin 0
exit 0
== exec k1 timeout 500 -- sleep 5
request IMSG_CTL_EXEC_STREAM
key "k1"
owner none
timeout 500
output 0
cwd ""
argc 2
argv "sleep"
argv "5"
stdin 0
exit 0
== exec k1 timeout 100 output 1K cwd sub -- pwd
request IMSG_CTL_EXEC_STREAM
key "k1"
owner none
timeout 100
output 1024
cwd "sub"
argc 1
argv "pwd"
stdin 0
exit 0
== exec k1 output 1048576 -- head -c 3 /dev/zero
request IMSG_CTL_EXEC_STREAM
key "k1"
owner none
timeout 0
output 1048576
cwd ""
argc 4
argv "head"
argv "-c"
argv "3"
argv "/dev/zero"
stdin 0
exit 0
== exec k1 cwd -- -- ls -- -x
request IMSG_CTL_EXEC_STREAM
key "k1"
owner none
timeout 0
output 0
cwd "--"
argc 3
argv "ls"
argv "--"
argv "-x"
stdin 0
exit 0
== exec root/k1 -- true
request IMSG_CTL_EXEC_STREAM
key "k1"
owner 0
timeout 0
output 0
cwd ""
argc 1
argv "true"
stdin 0
exit 0
== exec 0/k1 timeout 60000 -- true
request IMSG_CTL_EXEC_STREAM
key "k1"
owner 0
timeout 60000
output 0
cwd ""
argc 1
argv "true"
stdin 0
exit 0
== git-config k1
request IMSG_CTL_GIT_CONFIG
key "k1"
owner none
set-name 0
name ""
set-email 0
email ""
exit 0
== git-config k1 name Ann
request IMSG_CTL_GIT_CONFIG
key "k1"
owner none
set-name 1
name "Ann"
set-email 0
email ""
exit 0
== git-config k1 name Ann email a@b.c
request IMSG_CTL_GIT_CONFIG
key "k1"
owner none
set-name 1
name "Ann"
set-email 1
email "a@b.c"
exit 0
== git-config k1 email "" name ""
request IMSG_CTL_GIT_CONFIG
key "k1"
owner none
set-name 1
name ""
set-email 1
email ""
exit 0
== git-config root/k1 email x@y
request IMSG_CTL_GIT_CONFIG
key "k1"
owner 0
set-name 0
name ""
set-email 1
email "x@y"
exit 0
== git-init k1
request IMSG_CTL_GIT_INIT
key "k1"
owner none
path ""
exit 0
== git-init k1 sub/dir
request IMSG_CTL_GIT_INIT
key "k1"
owner none
path "sub/dir"
exit 0
== git-init k1 /etc
request IMSG_CTL_GIT_INIT
key "k1"
owner none
path "/etc"
exit 0
== git-init k1 --
request IMSG_CTL_GIT_INIT
key "k1"
owner none
path "--"
exit 0
== git-init k1 name
request IMSG_CTL_GIT_INIT
key "k1"
owner none
path "name"
exit 0
== git-init root/k1 p
request IMSG_CTL_GIT_INIT
key "k1"
owner 0
path "p"
exit 0
== log verbose
request IMSG_CTL_LOG_VERBOSE
verbose 1
exit 0
== log brief
request IMSG_CTL_LOG_VERBOSE
verbose 0
exit 0
== reload
request IMSG_CTL_RELOAD
exit 0
== token
request IMSG_CTL_TOKEN
replace 0
name "default"
exit 0
== token -r
request IMSG_CTL_TOKEN
replace 1
name "default"
exit 0
== token ui.2_x-y
request IMSG_CTL_TOKEN
replace 0
name "ui.2_x-y"
exit 0
== token -r cli
request IMSG_CTL_TOKEN
replace 1
name "cli"
exit 0
== token -d cli
request IMSG_CTL_TOKEN
delete
name "cli"
exit 0
== show tokens
request IMSG_CTL_SHOW_TOKENS
exit 0
== boot ../x
exit 1
== boot root/k1
exit 1
== boot k1 tier L9
exit 1
== boot k1 backend nope
exit 1
== boot k1 lifetime 0
exit 1
== boot k1 lifetime 604801
exit 1
== boot k1 memory 1T
exit 1
== boot k1 memory 2M
exit 1
== boot k1 pids 7
exit 1
== boot k1 cpu 0.001
exit 1
== boot k1 cpu 2000
exit 1
== boot k1 cpu abc
exit 1
== boot k1 pids -5
exit 1
== boot k1 tier
exit 1
== boot k1 color red
exit 1
== exec k1
exit 1
== exec k1 --
exit 1
== exec k1 timeout 99 -- true
exit 1
== exec k1 timeout 60001 -- true
exit 1
== exec k1 output 1023 -- true
exit 1
== exec k1 output 2M -- true
exit 1
== exec k1 bogus 1 -- true
exit 1
== exec nosuchuserzz/k1 -- true
exit 1
== exec 4294967295/k1 -- true
exit 1
== exec K1 -- true
exit 1
== show
exit 1
== show environment
exit 1
== show environmnts
exit 1
== show stats extra
exit 1
== stop
exit 1
== stop k1 k2
exit 1
== token -x
exit 1
== token -r -r
exit 1
== token -d
exit 1
== token a/b
exit 1
== token 123456789012345678901234567890123
exit 1
== token a b
exit 1
== log
exit 1
== log loud
exit 1
== reload now
exit 1
== git-init k1 a b
exit 1
== git-config k1 name
exit 1
== frobnicate
exit 1
GOLDEN
}

atf_test_case snapshots
snapshots_head() {
	atf_set descr "snapshot, show snapshots, restore, undo, delete snapshot, boot ... from, exec ... undo: each sends its request; a bad key or snapshot name is refused before anything is sent"
}
snapshots_body() {
	ctl_vars
	long=$(printf '%063d' 0 | tr 0 s)
	ctl_golden <<GOLDEN
== snapshot k1
request IMSG_CTL_SNAP
op create
key "k1"
owner none
name ""
exit 0
== snapshot k1 before-upgrade
request IMSG_CTL_SNAP
op create
key "k1"
owner none
name "before-upgrade"
exit 0
== snapshot root/k1 0_a-b
request IMSG_CTL_SNAP
op create
key "k1"
owner 0
name "0_a-b"
exit 0
== snapshot k1 $long
request IMSG_CTL_SNAP
op create
key "k1"
owner none
name "$long"
exit 0
== show snapshots
request IMSG_CTL_SNAP
op list
key ""
owner none
name ""
exit 0
== show snapshots k1
request IMSG_CTL_SNAP
op list
key "k1"
owner none
name ""
exit 0
== restore k1 s1
request IMSG_CTL_SNAP
op restore
key "k1"
owner none
name "s1"
exit 0
== undo k1
request IMSG_CTL_SNAP
op undo
key "k1"
owner none
name ""
exit 0
== delete snapshot 0/k1 s1
request IMSG_CTL_SNAP
op delete
key "k1"
owner 0
name "s1"
exit 0
== boot k2 from k1
request IMSG_CTL_BOOT
key "k2"
tier 0
backend 0
require 0
lifetime 0
memory 0
pids 0
cpu 0
from "k1" ""
exit 0
== boot k2 tier L2 from k1@s1 cold
request IMSG_CTL_BOOT
key "k2"
tier 3
backend 0
require 0
lifetime 0
memory 0
pids 0
cpu 0
from "k1" "s1"
exit 0
== exec k1 undo -- true
request IMSG_CTL_EXEC_STREAM
key "k1"
owner none
timeout 0
output 0
cwd ""
argc 1
argv "true"
stdin 0
undo
exit 0
GOLDEN
	# Refused with why, and nothing sent.
	name="a snapshot's name is 1 to 63 of a-z, 0-9, '_' and '-', beginning with a letter or digit"
	for c in "snapshot k1 Bad" "snapshot k1 .undo" "snapshot k1 -x" \
	    "snapshot k1 a/b" "snapshot k1 _a" "restore k1 ../s" \
	    "delete snapshot k1 S1"; do
		atf_check -s exit:1 -e inline:"fencectl: $c: $name\n" \
		    "$BIN/fencectl" $c
		atf_check -o inline:"exit 1\n" -e ignore $RECV $c
	done
	atf_check -s exit:1 -e inline:"fencectl: snapshot k1 ${long}s: longer than 63 bytes\n" \
	    "$BIN/fencectl" snapshot k1 "${long}s"
	atf_check -o inline:"exit 1\n" -e ignore $RECV snapshot k1 "${long}s"
	atf_check -s exit:1 -e inline:"fencectl: snapshot K1: not a fence key ([a-z0-9][a-z0-9_-]{0,62})\n" \
	    "$BIN/fencectl" snapshot K1
	atf_check -s exit:1 -e inline:"fencectl: snapshot: missing word; expected KEY\n" \
	    "$BIN/fencectl" snapshot
	atf_check -s exit:1 -e inline:"fencectl: restore k1: missing word; expected NAME\n" \
	    "$BIN/fencectl" restore k1
	atf_check -s exit:1 -e inline:"fencectl: delete snapshot k1: missing word; expected NAME\n" \
	    "$BIN/fencectl" delete snapshot k1
	atf_check -s exit:1 -e inline:'fencectl: delete snap: unknown word "snap"; expected snapshot\n' \
	    "$BIN/fencectl" delete snap k1 s1
	atf_check -s exit:1 -e inline:'fencectl: undo k1 s1: unknown word "s1"; expected nothing more\n' \
	    "$BIN/fencectl" undo k1 s1
	atf_check -s exit:1 -e inline:'fencectl: show snapshots k1 k2: unknown word "k2"; expected nothing more\n' \
	    "$BIN/fencectl" show snapshots k1 k2
	atf_check -s exit:1 -e inline:"fencectl: boot k2 from: missing word; expected KEY[@SNAPSHOT]\n" \
	    "$BIN/fencectl" boot k2 from
	atf_check -s exit:1 -e inline:"fencectl: boot k2 from @s1: from names a key, then @ and a snapshot\n" \
	    "$BIN/fencectl" boot k2 from @s1
	atf_check -s exit:1 -e inline:"fencectl: boot k2 from ../k1: ../k1 is not a key\n" \
	    "$BIN/fencectl" boot k2 from ../k1
	atf_check -s exit:1 -e inline:"fencectl: boot k2 from root/k1: root/k1 is not a key\n" \
	    "$BIN/fencectl" boot k2 from root/k1
	atf_check -s exit:1 -e inline:"fencectl: boot k2 from k1@s1@s2: s1@s2 is not a snapshot's name\n" \
	    "$BIN/fencectl" boot k2 from k1@s1@s2
	atf_check -s exit:1 -e inline:"fencectl: boot k2 from k1@.undo: .undo is not a snapshot's name\n" \
	    "$BIN/fencectl" boot k2 from k1@.undo
	atf_check -s exit:1 -e match:"from k1@ names no snapshot" \
	    "$BIN/fencectl" boot k2 from k1@
	atf_check -s exit:1 -e match:": ${long}s is not a snapshot's name\$" \
	    "$BIN/fencectl" boot k2 from "k1@${long}s"
	# spawn keeps nothing to undo: a background process is not taken back.
	atf_check -s exit:1 -e match:'unknown word "undo"' \
	    "$BIN/fencectl" spawn k1 undo -- true
	for c in "boot k2 from" "boot k2 from @s1" "boot k2 from ../k1" \
	    "boot k2 from k1@s1@s2" "boot k2 from k1@" "snapshot K1" \
	    "restore k1" "delete snap k1 s1" "undo k1 s1" \
	    "spawn k1 undo -- true"; do
		atf_check -o inline:"exit 1\n" -e ignore $RECV $c
	done
}

atf_test_case manual
manual_head() {
	atf_set descr "every command of fencectl --help is in fencectl(8)"
}
manual_body() {
	ctl_vars
	[ -f "$TOPDIR/man/fencectl.8" ] || atf_skip "no source tree"
	"$BIN/fencectl" help | sed -n 's/^	\([a-z][a-z-]*\).*/\1/p' | sort -u |
	    while read -r c; do
		grep -q "^\.\(It Cm\|Cm\) $c\( \|$\)" "$TOPDIR/man/fencectl.8" ||
		    echo "$c"
	done > missing.txt
	[ ! -s missing.txt ] || atf_fail "not in fencectl.8: $(tr '\n' ' ' < missing.txt)"
}

atf_init_test_cases() {
	atf_add_test_case help
	atf_add_test_case usage
	atf_add_test_case version
	atf_add_test_case unreachable
	atf_add_test_case mistyped
	atf_add_test_case bounds
	atf_add_test_case names
	atf_add_test_case requests
	atf_add_test_case snapshots
	atf_add_test_case manual
}
