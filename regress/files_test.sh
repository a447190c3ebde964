#! /usr/bin/atf-sh
# Files in and out of a fence's home over the HTTP API (issue 16,
# docs/files.md): bytes exact, listings, removal, and every way a path,
# a symlink, a FIFO or a device planted by the fence could lead the
# agent (or the root daemon) out of HOME.  files_runsc_test runs the
# same against gVisor fences.

. "$(atf_get_srcdir)/lib.subr"

E=/api/environments

# Boot fence KEY (with a host token in $TOK), its home on the host in
# $HOME_DIR and the uid it runs as in $FUID.
files_setup() {
	fenced_vars
	[ -f fenced.conf ] || fenced_conf > fenced.conf
	fenced_start
	$CTL boot "$1" > boot.out || atf_fail "boot: $(cat boot.out)"
	HOME_DIR=$(sed -n 's/^home: *//p' boot.out)
	FUID=$(sed -n 's/.*runs as uid \([0-9]*\).*/\1/p' boot.out)
	[ -d "$HOME_DIR" ] && [ -n "$FUID" ] || atf_fail "boot: $(cat boot.out)"
	TOK=$($CTL token 2>/dev/null)
	[ -n "$TOK" ] || atf_fail "no token"
}

# fput TOKEN KEY PATH FILE [QUERY]: PUT FILE's bytes; body.out, status.out
fput() {
	curl -sS -m 60 --path-as-is -X PUT -H "x-voicebox-host-token: $1" \
	    --data-binary "@$4" -o body.out -w '%{http_code}' \
	    "http://127.0.0.1:$(fenced_port)$E/$2/files/$3${5:+?$5}" \
	    > status.out || atf_fail "curl PUT $3"
}

# fget TOKEN KEY PATH: the answer in body.out, its status in status.out
fget() {
	curl -sS -m 20 --path-as-is -H "x-voicebox-host-token: $1" \
	    -o body.out -w '%{http_code}' \
	    "http://127.0.0.1:$(fenced_port)$E/$2/files/$3" > status.out ||
	    atf_fail "curl GET $3 (a hang is a failure)"
}

fdel() {
	curl -sS -m 20 --path-as-is -X DELETE \
	    -H "x-voicebox-host-token: $1" -o body.out -w '%{http_code}' \
	    "http://127.0.0.1:$(fenced_port)$E/$2/files/$3" > status.out ||
	    atf_fail "curl DELETE $3"
}

# Nothing in the home but what the fence's uid owns, and no temporary.
home_clean() {
	find "$HOME_DIR" ! -uid "$FUID" > foreign.out
	[ ! -s foreign.out ] || atf_fail "not the fence's: $(cat foreign.out)"
	find "$HOME_DIR" -name '.fenced-put-*' > tmp.out
	[ ! -s tmp.out ] || atf_fail "temporaries left: $(cat tmp.out)"
}

atf_test_case binary_roundtrip cleanup
binary_roundtrip_head() {
	atf_set descr "every byte value and a 3 MB random file go in and come out exact, as the fence's uid, mode 0644 or ?mode="
	atf_set require.user root
	atf_set timeout 120
}
binary_roundtrip_body() {
	files_setup fb
	python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) * 3)' \
	    > bytes.bin
	head -c 3000000 /dev/urandom > big.bin
	fput "$TOK" fb bytes.bin bytes.bin
	expect 201 '"created":true' '"size":768' '"mode":"0644"'
	fput "$TOK" fb sub/big.bin big.bin "mkdir=1&mode=0600"
	expect 201 '"size":3000000' '"mode":"0600"'
	fget "$TOK" fb bytes.bin
	atf_check_equal "$(cat status.out)" 200
	atf_check cmp body.out bytes.bin
	fget "$TOK" fb sub/big.bin
	atf_check cmp body.out big.bin
	# The fence sees the same bytes, in files of its own uid.
	atf_check -o inline:"$(sha256sum < big.bin)\n" \
	    $CTL exec fb -- sh -c 'sha256sum < sub/big.bin'
	atf_check -o inline:"$FUID 600\n" stat -c '%u %a' "$HOME_DIR/sub/big.bin"
	atf_check -o inline:"$FUID 644\n" stat -c '%u %a' "$HOME_DIR/bytes.bin"
	# Replacing: 200, created false; an empty file is a file too.
	: > empty
	fput "$TOK" fb bytes.bin empty
	expect 200 '"created":false' '"size":0'
	fget "$TOK" fb bytes.bin
	atf_check_equal "$(cat status.out)" 200
	atf_check -o inline:"0\n" sh -c 'wc -c < body.out'
	fput "$TOK" fb bytes.bin empty exclusive=1
	expect 409 '"error":"file-exists"'
	fput "$TOK" fb x empty mode=4755
	expect 400 '"error":"bad-parameter"'
	home_clean
}
binary_roundtrip_cleanup() { fenced_cleanup; }

atf_test_case listing cleanup
listing_head() {
	atf_set descr "a directory answers its entries (name, type, size, mode, mtime); HOME is files/"
	atf_set require.user root
}
listing_body() {
	files_setup fl
	$CTL exec fl -- sh -c 'mkdir -p d/e && printf abc > d/f &&
	    ln -s f d/l && mkfifo d/p && chmod 640 d/f' || atf_fail "setup"
	fget "$TOK" fl d
	expect 200 '"path":"d"' '"truncated":false' \
	    '\{"type":"file","size":3,"mode":"0640","mtime":[0-9]+,"name":"f"\}' \
	    '"type":"directory"[^}]*"name":"e"' '"type":"symlink"[^}]*"name":"l"' \
	    '"type":"fifo"[^}]*"name":"p"'
	fget "$TOK" fl ""
	expect 200 '"path":""' '"name":"d"'
	fget "$TOK" fl d/e/
	expect 200 '"entries":\[\]'
}
listing_cleanup() { fenced_cleanup; }

atf_test_case delete cleanup
delete_head() {
	atf_set descr "DELETE removes a file, a symlink (not its target) or an empty directory; a full one is file-not-empty"
	atf_set require.user root
}
delete_body() {
	files_setup fd
	$CTL exec fd -- sh -c 'mkdir -p d/e && echo x > d/f &&
	    ln -s /etc/passwd pw' || atf_fail "setup"
	fdel "$TOK" fd d
	expect 409 '"error":"file-not-empty"'
	fdel "$TOK" fd d/f
	expect 200 '"deleted":true' '"type":"file"'
	fdel "$TOK" fd d/f
	expect 404 '"error":"file-not-found"'
	fdel "$TOK" fd d/e
	expect 200 '"type":"directory"'
	fdel "$TOK" fd pw
	expect 200 '"type":"symlink"'
	[ -s /etc/passwd ] || atf_fail "/etc/passwd went"
	fdel "$TOK" fd ""
	expect 400 '"error":"file-bad-path"'
	fdel "$TOK" fd ..
	expect 400 '"error":"file-bad-path"'
	atf_check -o inline:"d\n" ls "$HOME_DIR"
}
delete_cleanup() { fenced_cleanup; }

atf_test_case paths_outside cleanup
paths_outside_head() {
	atf_set descr "'..' out, an absolute path, encoded dots and slashes, NUL, bad escapes, an over-long path: refused, each with its code"
	atf_set require.user root
}
paths_outside_body() {
	files_setup fo
	echo secret > in.txt
	fput "$TOK" fo d/in.txt in.txt mkdir=1
	expect 201
	for p in ../x d/../../x %2e%2e/x d%2F..%2F..%2Fx //etc/passwd \
	    %2Fetc%2Fpasswd ../../../../etc/passwd; do
		fget "$TOK" fo "$p"
		expect 403 '"error":"file-outside-home"'
		fput "$TOK" fo "$p" in.txt
		expect 403 '"error":"file-outside-home"'
	done
	# Inside after all: "..", "." and "//" that stay in HOME; %2F is "/".
	# Without openat2 (runsc) the agent refuses every "..".
	inside="d/../d/in.txt ./d//in.txt d%2Fin.txt"
	[ "${FENCED_BACKEND:-}" != runsc ] || inside="./d//in.txt d%2Fin.txt"
	for p in $inside; do
		fget "$TOK" fo "$p"
		expect 200 secret
	done
	# Decoded once: %252F is the name "%2F".
	fget "$TOK" fo d%252Fin.txt
	expect 404 '"error":"file-not-found"' 'd%2Fin.txt'
	# %9F%9E and %C0%AF (an overlong "/") are not UTF-8.
	for p in a%00b %zz a%2 a%9F%9Eb %C0%AFetc ; do
		fget "$TOK" fo "$p"
		expect 400 '"error":"file-bad-path"'
	done
	long=$(python3 -c 'print("a/" * 2100)')
	fget "$TOK" fo "$long"
	expect 400 '"error":"file-bad-path"'
	[ ! -e /x ] && [ "$(cat /etc/passwd)" != secret ] || atf_fail "wrote out"
	home_clean
}
paths_outside_cleanup() { fenced_cleanup; }

atf_test_case symlinks_out cleanup
symlinks_out_head() {
	atf_set descr "symlinks made in the fence (to /etc/passwd, to /, to a host directory) are never followed out, for reading or writing"
	atf_set require.user root
}
symlinks_out_body() {
	files_setup fs
	mkdir victim
	chmod 777 victim
	victim=$PWD/victim
	$CTL exec fs -- sh -c "ln -s /etc/passwd x && ln -s / root &&
	    ln -s $victim host && ln -s ../.. up && mkdir d &&
	    ln -s ../../.. d/out" || atf_fail "setup"
	echo planted > p.txt
	fget "$TOK" fs x
	expect 409 '"error":"file-not-regular"' 'symbolic link'
	fput "$TOK" fs x p.txt
	expect 409 '"error":"file-not-regular"'
	fget "$TOK" fs root/etc/passwd
	expect 403 '"error":"file-outside-home"'
	fget "$TOK" fs root/etc
	expect 403 '"error":"file-outside-home"'
	for p in root/tmp/planted host/planted up/planted d/out/planted; do
		fput "$TOK" fs "$p" p.txt
		expect 403 '"error":"file-outside-home"'
		fput "$TOK" fs "$p" p.txt mkdir=1
		case "$(cat status.out)" in
		403|404) ;;
		*) atf_fail "mkdir=1 $p: $(cat status.out) $(cat body.out)" ;;
		esac
		fdel "$TOK" fs "$p"
		case "$(cat status.out)" in
		403|404) ;;
		*) atf_fail "delete $p: $(cat status.out) $(cat body.out)" ;;
		esac
	done
	# Not compared whole with a copy: another suite beside this one may
	# add or remove an account meanwhile.
	grep -qx planted /etc/passwd && atf_fail "planted in /etc/passwd"
	grep -q '^root:' /etc/passwd || atf_fail "/etc/passwd lost root"
	atf_check -o empty ls -A victim
	[ ! -e /tmp/planted ] || atf_fail "/tmp/planted"
	# The symlinks themselves are still there, untouched.
	atf_check -o inline:"$victim\n" readlink "$HOME_DIR/host"
	home_clean
}
symlinks_out_cleanup() { fenced_cleanup; }

atf_test_case fifo_device cleanup
fifo_device_head() {
	atf_set descr "a FIFO made in the fence and a symlink to /dev/null are refused at once, never opened to block"
	atf_set require.user root
}
fifo_device_body() {
	files_setup ff
	$CTL exec ff -- sh -c 'mkfifo p && ln -s /dev/null n' ||
	    atf_fail "setup"
	echo x > x.txt
	fget "$TOK" ff p
	expect 409 '"error":"file-not-regular"' 'FIFO'
	fput "$TOK" ff p x.txt
	expect 409 '"error":"file-not-regular"'
	fget "$TOK" ff n
	expect 409 '"error":"file-not-regular"'
	fput "$TOK" ff n x.txt
	expect 409 '"error":"file-not-regular"'
	[ -c /dev/null ] || atf_fail "/dev/null is not a device any more"
	# The agent is still there for the next request.
	fget "$TOK" ff ""
	expect 200 '"name":"p"'
	home_clean
}
fifo_device_cleanup() { fenced_cleanup; }

atf_test_case too_large cleanup
too_large_head() {
	atf_set descr "files max: a larger PUT (Content-Length or chunked) is 413 and leaves nothing; a larger file is not read"
	atf_set require.user root
}
too_large_body() {
	fenced_vars
	fenced_conf > fenced.conf
	echo "files max 64K" >> fenced.conf
	files_setup ft
	head -c 65536 /dev/urandom > max.bin
	head -c 65537 /dev/urandom > over.bin
	fput "$TOK" ft max.bin max.bin
	expect 201 '"size":65536'
	fput "$TOK" ft over.bin over.bin
	expect 413 '"error":"body-too-large"'
	curl -sS -m 20 -X PUT -H "x-voicebox-host-token: $TOK" \
	    -H 'Transfer-Encoding: chunked' --data-binary @over.bin \
	    -o body.out -w '%{http_code}' \
	    "http://127.0.0.1:$(fenced_port)$E/ft/files/over2.bin" > status.out
	expect 413 '"error":"(body|file)-too-large"'
	$CTL exec ft -- sh -c 'head -c 70000 /dev/zero > made.bin' ||
	    atf_fail "made.bin"
	fget "$TOK" ft made.bin
	expect 413 '"error":"file-too-large"'
	atf_check -o inline:"made.bin\nmax.bin\n" ls -A "$HOME_DIR"
	home_clean
}
too_large_cleanup() { fenced_cleanup; }

atf_test_case other_user cleanup
other_user_head() {
	atf_set descr "a second local user's token cannot read, list, write or delete another user's fence files"
	atf_set require.user root
	atf_set timeout 120
}
other_user_body() {
	fenced_vars
	users_add 2 ffu
	fenced_run_socket
	h=$(fenced_homes)
	fenced_conf | sed -e "s|^homes .*|homes \"$h/%u\"|" > fenced.conf
	fenced_start
	ua=$(sed -n 1p users.txt)
	ub=$(sed -n 2p users.txt)
	sock=$(cat run.sock)
	ta=$($(as_user "$ua") "$BIN/fencectl" -s "$sock" token 2>/dev/null)
	tb=$($(as_user "$ub") "$BIN/fencectl" -s "$sock" token 2>/dev/null)
	[ -n "$ta" ] && [ -n "$tb" ] || atf_fail "tokens"
	call "$ta" POST $E/ka '{}'
	expect 201
	echo "a's secret" > s.txt
	fput "$ta" ka secret.txt s.txt
	expect 201
	echo "b was here" > b.txt
	fget "$tb" ka secret.txt
	expect 404 '"error":"not-found"'
	fget "$tb" ka ""
	expect 404 '"error":"not-found"'
	fput "$tb" ka secret.txt b.txt
	expect 404 '"error":"not-found"'
	fput "$tb" ka other.txt b.txt
	expect 404 '"error":"not-found"'
	fdel "$tb" ka secret.txt
	expect 404 '"error":"not-found"'
	# Nor without a token, nor with a wrong one.
	fget "" ka secret.txt
	expect 401
	fget "$(echo "$ta" | tr 0-9a-f a-f0-9)" ka secret.txt
	expect 401
	fget "$ta" ka secret.txt
	expect 200 "a's secret"
	fget "$ta" ka ""
	expect 200 '"name":"secret.txt"'
	grep -q other.txt body.out && atf_fail "b wrote: $(cat body.out)"
	# Nor over the control socket, naming a's fence as a's.
	asb=$(as_user "$ub")
	atf_check -s exit:1 -e not-match:"a's secret" -o empty \
	    $asb "$BIN/fencectl" -s "$sock" get "$ua/ka" secret.txt -
	atf_check -s exit:1 -e ignore -x \
	    "$asb $BIN/fencectl -s $sock put $ua/ka - secret.txt < b.txt"
	atf_check -s exit:1 -e ignore $asb "$BIN/fencectl" -s "$sock" \
	    get ka secret.txt -
	fget "$ta" ka secret.txt
	expect 200 "a's secret"
}
other_user_cleanup() { fenced_cleanup; }

atf_test_case atomic_replace cleanup
atomic_replace_head() {
	atf_set descr "a reader in the fence sees the old file or the whole new one while a multi-chunk PUT replaces it, never a part"
	atf_set require.user root
	atf_set timeout 120
}
atomic_replace_body() {
	files_setup fa
	head -c 1000 /dev/urandom > old.bin
	head -c 3000000 /dev/urandom > new.bin
	fput "$TOK" fa f old.bin
	expect 201
	# The reader watches the size as fast as it can while the PUT goes.
	# (wc, not stat: runsc's statx refuses coreutils' flags.)
	$CTL exec fa timeout 60000 -- sh -c 'i=0; while [ $i -lt 400 ];
	    do wc -c < f; i=$((i + 1)); done' > sizes.out &
	reader=$!
	for i in 1 2 3; do
		fput "$TOK" fa f new.bin
		expect 200 '"size":3000000'
		fput "$TOK" fa f old.bin
		expect 200 '"size":1000'
	done
	wait $reader || atf_fail "the reader failed"
	sort -u sizes.out > seen.out
	grep -Ev '^ *(1000|3000000)$' seen.out && atf_fail "a part was seen"
	[ -s seen.out ] || atf_fail "the reader saw nothing"
	home_clean
}
atomic_replace_cleanup() { fenced_cleanup; }

atf_test_case fencectl_put_get cleanup
fencectl_put_get_head() {
	atf_set descr "fencectl put and get round trip a file of several chunks, through files and stdin/stdout; refusals exit 1 with the code"
	atf_set require.user root
	atf_set timeout 120
}
fencectl_put_get_body() {
	files_setup fc
	head -c 2621440 /dev/urandom > big.bin
	python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(256)))' \
	    > bytes.bin
	atf_check $CTL put fc big.bin big.bin
	atf_check $CTL get fc big.bin back.bin
	atf_check cmp big.bin back.bin
	atf_check -x "$CTL put fc - bytes.bin < bytes.bin"
	atf_check -o file:bytes.bin $CTL get fc bytes.bin -
	# Exactly one chunk (1 MiB) and empty: the last chunk is empty.
	head -c 1048576 /dev/urandom > one.bin
	atf_check $CTL put fc one.bin one.bin
	atf_check -o file:one.bin $CTL get fc one.bin -
	: > empty
	atf_check $CTL put fc empty empty
	atf_check -o empty $CTL get fc empty -
	atf_check -o inline:"$FUID 644\n" stat -c '%u %a' "$HOME_DIR/big.bin"
	atf_check -o match:'^- 0644 +2621440 big.bin$' $CTL get fc "" -
	$CTL exec fc -- sh -c 'ln -s /etc/passwd pw && mkfifo p' ||
	    atf_fail "setup"
	atf_check -s exit:1 -e match:'file-not-regular' $CTL get fc pw out
	atf_check -s exit:1 -e match:'file-not-regular' $CTL get fc p out
	atf_check -s exit:1 -e match:'file-outside-home' \
	    $CTL get fc ../../etc/passwd out
	atf_check -s exit:1 -e match:'file-outside-home' \
	    $CTL put fc bytes.bin /tmp/fencectl-planted
	atf_check -s exit:1 -e match:'not UTF-8' \
	    $CTL put fc bytes.bin "$(printf 'a\237')"
	atf_check -s exit:1 -e match:'not UTF-8' \
	    $CTL get fc "$(printf 'a\300\257')" out
	[ ! -e out ] && [ ! -e /tmp/fencectl-planted ] || atf_fail "written"
	ls out.fencectl-* > /dev/null 2>&1 && atf_fail "temporary left"
	home_clean
}
fencectl_put_get_cleanup() { fenced_cleanup; }

atf_test_case hostile_names cleanup
hostile_names_head() {
	atf_set descr "names made inside a fence (ESC, BEL, newline, C1, bytes that are not UTF-8, a bidi override), a hostile command line and a hostile git identity reach fencectl's output only escaped, never as controls"
	atf_set require.user root
	atf_set timeout 120
}
# no_controls FILE WHAT: FILE holds no C0 control but newline, no DEL,
# no C1 (raw or UTF-8) and no bidi override.
no_controls() {
	LC_ALL=C tr -d '\n' < "$1" > flat.out
	if LC_ALL=C grep -q "$(printf '[\001-\037\177\200-\237]')" flat.out ||
	    LC_ALL=C grep -q "$(printf '\302[\200-\237]')" flat.out ||
	    LC_ALL=C grep -q "$(printf '\342\200[\252-\256]')" flat.out; then
		od -c "$1" | head -20 >&2
		atf_fail "$2: a control reached the output"
	fi
}
hostile_names_body() {
	files_setup fh
	# Made by the fence's own code, in its home.
	$CTL exec fh -- sh -c 'cd "$HOME" &&
	    touch "$(printf "e\033]0;owned\007x")" "$(printf "nl\nx")" \
	    "$(printf "bs\\\\x")" "$(printf "c1\302\23331m")" \
	    "$(printf "raw\233")" "$(printf "rlo\342\200\256txt")" \
	    "$(printf "r\303\251sum\303\251")"' || atf_fail "touch"
	atf_check -o save:list.out $CTL get fh "" -
	cat list.out
	no_controls list.out "the listing"
	# One line per entry, each of the listing's shape.
	atf_check -s exit:1 -o empty \
	    -x "LC_ALL=C grep -Ev '^[-dlpsco?] [0-7]{4} +[0-9]+ ' list.out"
	sed 's/^[-dlpsco?] [0-7]* *[0-9]* //' list.out > names.out
	for n in 'e\033]0;owned\007x' 'nl\012x' 'bs\\x' 'c1\302\23331m' \
	    'raw\233' 'rlo\342\200\256txt' "$(printf 'r\303\251sum\303\251')"
	do
		LC_ALL=C grep -Fxq -- "$n" names.out ||
		    atf_fail "not shown as $n: $(cat names.out)"
	done
	# To a file the same (the listing is text, not the bytes).
	atf_check $CTL get fh "" list2.out
	atf_check cmp list.out list2.out
	# A command line of its own choosing, in show processes.
	atf_check -o ignore $CTL spawn fh -- sh -c \
	    "sleep 30 # $(printf '\033[2J\302\233\007')"
	atf_check -o save:procs.out $CTL show processes fh
	cat procs.out
	no_controls procs.out "show processes"
	atf_check -o match:'# \\033\[2J\\302\\233\\007$' cat procs.out
	# An error naming what the caller asked, escaped too.
	atf_check -s exit:1 -e save:err.out $CTL get fh \
	    "$(printf 'no\033[2Jsuch')" -
	no_controls err.out "an error"
	# A git identity the fence wrote in its own configuration: the
	# agent refuses it, and the refusal has no control either.
	if $CTL exec fh -- sh -c 'command -v git' > /dev/null 2>&1; then
		$CTL exec fh -- sh -c \
		    'git config --global user.name "$(printf "n\033]0;x\007")"' ||
		    atf_fail "git config"
		atf_check -s exit:1 -o empty -e save:git.err $CTL git-config fh
		no_controls git.err "git-config"
	fi
	$CTL stop fh > /dev/null
}
hostile_names_cleanup() { fenced_cleanup; }

atf_test_case fencectl_hold cleanup
fencectl_hold_head() {
	atf_set descr "a control socket put for a key that does not exist or is another's is refused at its first chunk (as root, as a second local user, OWNER/KEY of root's); a put or get of one's own fence holds a chunk at most in the broker, and a put left half way leaves no temporary"
	atf_set require.user root
	atf_set timeout 180
}
# The broker's peak resident memory, reset and read (kB).
hwm_reset() {
	echo 5 > /proc/$BROKER/clear_refs || atf_fail "clear_refs"
	HWM0=$(status_field $BROKER VmHWM | awk '{ print $1 }')
}
# hwm_check WHAT KB: the peak grew by less than KB since hwm_reset.
# Not in a sanitizer build: ASan's quarantine keeps what was freed, so
# the copies of every chunk taken count as held.
hwm_check() {
	_h=$(status_field $BROKER VmHWM | awk '{ print $1 }')
	echo "$1: broker VmHWM $HWM0 kB -> $_h kB"
	ldd "$BIN/fenced" 2>/dev/null | grep -q libasan && return 0
	[ $((_h - HWM0)) -lt "$2" ] ||
	    atf_fail "$1: the broker grew from $HWM0 kB to $_h kB"
}
fencectl_hold_body() {
	fenced_vars
	users_add 1 ffh
	fenced_run_socket
	files_setup fh
	BROKER=$(fenced_pid broker)
	[ -n "$BROKER" ] || atf_fail "no broker pid"
	sock=$(cat run.sock)
	asb=$(as_user "$(sed -n 1p users.txt)")
	T="$REGRESS/t_ctlsend"
	# 8 connections of 4 chunks of 1 MiB each, never the last: 32 MiB
	# held if the chunks were gathered.
	hwm_reset
	atf_check -o match:'^accepted 0 refused 8$' $T "$sock" puthold \
	    nosuch 8 4
	atf_check -o match:'^accepted 0 refused 8$' $asb $T "$sock" \
	    puthold fh 8 4
	atf_check -o match:'^accepted 0 refused 8$' $asb $T "$sock" \
	    puthold 0/fh 8 4
	hwm_check "puts of keys not theirs" 4096
	# One's own: each chunk goes into the fence before the next is
	# taken.
	hwm_reset
	atf_check -o match:'^accepted 32 refused 0$' $T "$sock" puthold \
	    fh 8 4
	hwm_check "puts of one's own, left half way" 8192
	# Left half way: the temporaries go with their connections.
	wait_until 10 sh -c "! ls -A '$HOME_DIR' | grep -q '^\.fenced-put-'" ||
	    atf_fail "temporaries left: $(ls -A "$HOME_DIR" | tr '\n' ' ')"
	[ ! -e "$HOME_DIR/puthold" ] || atf_fail "a put never ended was put"
	# A get whose next chunk is never asked for holds one chunk.
	head -c 12582912 /dev/urandom > big.bin
	atf_check $CTL put fh big.bin big.bin
	hwm_reset
	atf_check -o match:'^got 8 refused 0$' $T "$sock" gethold fh big.bin 8
	hwm_check "gets of a 12 MiB file held" 8192
	atf_check -o match:'^got 0 refused 8$' $asb $T "$sock" gethold 0/fh \
	    big.bin 8
	# And whole, both ways, as ever.
	atf_check -o file:big.bin $CTL get fh big.bin -
	atf_check -x "$CTL put fh - again.bin < big.bin"
	atf_check cmp big.bin "$HOME_DIR/again.bin"
	$CTL stop fh > /dev/null
}
fencectl_hold_cleanup() {
	fenced_cleanup
	users_remove
}

atf_init_test_cases() {
	atf_add_test_case fencectl_hold
	atf_add_test_case hostile_names
	atf_add_test_case atomic_replace
	atf_add_test_case fencectl_put_get
	atf_add_test_case binary_roundtrip
	atf_add_test_case listing
	atf_add_test_case delete
	atf_add_test_case paths_outside
	atf_add_test_case symlinks_out
	atf_add_test_case fifo_device
	atf_add_test_case too_large
	atf_add_test_case other_user
}
