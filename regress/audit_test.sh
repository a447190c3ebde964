#! /usr/bin/atf-sh
# The audit log (docs/audit.md): one JSON line per boot, command, file
# written, token change and stop, written by the parent; what a user
# gave reaches it only escaped; it is root's alone; it rotates at its
# size, keeping `audit keep' files.

. "$(atf_get_srcdir)/lib.subr"

# A folder for the log that every user may enter, so that only the
# file's own mode keeps another user out; audit_cleanup removes it.
audit_dir() {
	if [ ! -s audit.path ]; then
		mktemp -d /var/tmp/fenced-audit.XXXXXX > audit.path ||
		    atf_fail "no folder for the audit log"
		chmod 0755 "$(cat audit.path)"
	fi
	cat audit.path
}

audit_cleanup() {
	_d=$(cat audit.path 2>/dev/null)
	case "$_d" in /var/tmp/fenced-audit.?*) rm -rf "$_d" ;; esac
	fenced_cleanup
}

atf_test_case events cleanup
events_head() {
	atf_set descr "a boot, a command with a newline, a quote, an escape and a forged line in its arguments, one by the API with the same in its command line, a file written, a terminal opened and killed, a connection to a closed port, a token made and deleted, a stop: one JSON line each, exactly, of the right uid, fence, kind and outcome; the forged text only escaped; the file root's, 0600, and another user cannot read it; fencectl show audit gives each user their own lines alone, root all"
	atf_set require.user root
	atf_set require.progs python3 curl
	atf_set timeout 120
}
events_body() {
	fenced_vars
	users_add 2 fau
	fenced_run_socket
	log="$(audit_dir)/audit.log"
	{ fenced_conf; echo "audit log \"$log\""; } > fenced.conf
	fenced_start
	ua=$(sed -n 1p users.txt)
	ub=$(sed -n 2p users.txt)
	ia=$(id -u "$ua")
	A="$(as_user "$ua") $BIN/fencectl -s $(cat run.sock)"

	atf_check -o match:"^state: *running" $A boot aud tier L1
	nl='
'
	esc=$(printf '\033')
	forged="\"}$nl{\"kind\":\"boot\",\"uid\":0}"
	atf_check -o ignore $A exec aud -- printf '%s|' "a${nl}b" 'q"uote' \
	    "e${esc}[31m" "$forged"
	tok=$($A token t1 2>/dev/null | tail -n 1)
	[ ${#tok} -eq 64 ] || atf_fail "no token: '$tok'"
	body=$(python3 -c 'import json, sys
print(json.dumps({"command": "echo \"" + sys.argv[1] + "\" >/dev/null"}))' \
	    "$forged$esc")
	call "$tok" POST /api/environments/aud/exec "$body"
	atf_check_equal 200 "$(cat status.out)"
	printf 'twelve bytes' > put.txt
	curl -sS -m 30 -X PUT -H "x-voicebox-host-token: $tok" \
	    --data-binary @put.txt -o /dev/null -w '%{http_code}\n' \
	    "http://127.0.0.1:$(fenced_port)/api/environments/aud/files/f.txt" \
	    > put.status
	atf_check -o inline:"201\n" cat put.status
	call "$tok" POST /api/environments/aud/terminals \
	    '{"argv": ["sleep", "30"]}'
	atf_check_equal 201 "$(cat status.out)"
	term=$(python3 -c 'import json; print(json.load(open("body.out"))["id"])')
	call "$tok" DELETE "/api/environments/aud/terminals/$term"
	atf_check_equal 200 "$(cat status.out)"
	# Nothing listens on port 1 in the fence: the connection is refused.
	call "$tok" GET /api/environments/aud/ports/1/x
	atf_check_equal 502 "$(cat status.out)"
	atf_check -e ignore $A token -d t1
	atf_check -o ignore $A stop aud

	python3 - "$ia" "$forged" "$esc" "$term" > expect.json <<'PY'
import json, sys
uid, forged, esc = int(sys.argv[1]), sys.argv[2], sys.argv[3]
fence = {"uid": uid, "fence": "aud", "owner": uid, "outcome": "ok"}
ctl = dict(fence, via="control")
http = dict(fence, via="http", token="t1")
print(json.dumps([
    dict(ctl, kind="boot"),
    dict(ctl, kind="exec", argv=["printf", "%s|", "a\nb", 'q"uote',
         "e" + esc + "[31m", forged], argc=6, exit=0),
    {"kind": "token", "uid": uid, "via": "control", "action": "create",
     "name": "t1", "outcome": "ok"},
    dict(http, kind="exec",
         # The forged line's newline splits the shell's line: sh exits 2.
         command='echo "' + forged + esc + '" >/dev/null', exit=2),
    dict(http, kind="file", path="f.txt", bytes=12),
    dict(http, kind="terminal", action="open", term=int(sys.argv[4])),
    dict(http, kind="terminal", action="close", term=int(sys.argv[4])),
    dict(http, kind="port", port=1, outcome="port-closed"),
    {"kind": "token", "uid": uid, "via": "control", "action": "delete",
     "name": "t1", "outcome": "ok"},
    dict(ctl, kind="stop", why="request"),
]))
PY
	wait_until 5 python3 "$TOPDIR/regress/audit_check.py" "$log" expect.json ||
	    atf_check python3 "$TOPDIR/regress/audit_check.py" "$log" expect.json
	# The forged line is no line: nothing but the parent's begins one.
	atf_check -s exit:1 grep -v '^{"time":"' "$log"
	atf_check -o inline:"600 root\n" stat -c '%a %U' "$log"
	atf_check -s not-exit:0 -e match:"Permission denied" \
	    $(as_user "$ub") cat "$log"
	atf_check -s not-exit:0 -e match:"Permission denied" \
	    $(as_user "$ua") cat "$log"

	# fencectl show audit: one's own lines, an admin's all of them.
	B="$(as_user "$ub") $BIN/fencectl -s $(cat run.sock)"
	ib=$(id -u "$ub")
	atf_check -o match:"^state: *running" $B boot bud tier L1
	$B show audit > b.out || atf_fail "show audit as $ub"
	atf_check -o inline:"1\n" grep -c '' b.out
	atf_check -o match:"\"kind\":\"boot\",\"uid\":$ib," cat b.out
	$A show audit > a.out || atf_fail "show audit as $ua"
	# Its ten lines, and not b's boot, the eleventh.
	atf_check -o save:head10.out head -n 10 "$log"
	atf_check cmp a.out head10.out
	$A show audit 2 > a2.out
	atf_check -o save:tail2.out sed -n 9,10p "$log"
	atf_check cmp a2.out tail2.out
	atf_check -o inline:"11\n" sh -c "$CTL show audit | grep -c ''"
	atf_check -s exit:1 -e match:"not a number from 1 to 1000" $A show audit 0
}
events_cleanup() {
	fenced_vars
	audit_cleanup
}

atf_test_case rotation cleanup
rotation_head() {
	atf_set descr "audit size 4K, audit keep 2: each command of 5 KiB of arguments rotates the log; audit.log, .1 and .2 hold one whole line each, the newest first, and no .3 is kept"
	atf_set require.user root
	atf_set require.progs python3
	atf_set timeout 120
}
rotation_body() {
	fenced_vars
	log="$(audit_dir)/audit.log"
	{ fenced_conf; echo "audit log \"$log\""; echo "audit size 4K"
	    echo "audit keep 2"; } > fenced.conf
	fenced_start
	atf_check -o match:"^state: *running" $CTL boot rot tier L1
	big=$(python3 -c 'print(" ".join(["x" * 250] * 20))')
	for i in 1 2 3 4; do
		# shellcheck disable=SC2086
		atf_check -o ignore $CTL exec rot -- true "$i" $big
	done
	for f in "$log" "$log.1" "$log.2"; do
		atf_check -o inline:"1\n" grep -c '' "$f"
		atf_check -o inline:"600\n" stat -c %a "$f"
	done
	[ ! -e "$log.3" ] || atf_fail "$log.3 kept"
	for n in 4:"$log" 3:"$log.1" 2:"$log.2"; do
		python3 -c 'import json, sys
a = json.loads(open(sys.argv[2]).read())
assert a["kind"] == "exec" and a["argv"][1] == sys.argv[1], a
assert a["argc"] == 22 and len(a["argv"]) == 22, a' "${n%%:*}" "${n#*:}" ||
		    atf_fail "${n#*:} is not command ${n%%:*}"
	done
}
rotation_cleanup() {
	fenced_vars
	audit_cleanup
}

atf_test_case unsafe_dir cleanup
unsafe_dir_head() {
	atf_set descr "a log in a folder others may write is refused at start, as is a log that is a symbolic link; audit off writes none"
	atf_set require.user root
	atf_set timeout 60
}
unsafe_dir_body() {
	fenced_vars
	d=$(audit_dir)
	mkdir "$d/open"
	chmod 1777 "$d/open"
	{ fenced_conf; echo "audit log \"$d/open/audit.log\""; } > fenced.conf
	atf_check -s exit:1 -e match:"only it may write" \
	    "$BIN/fenced" -d -f fenced.conf
	ln -s /etc/passwd "$d/audit.log"
	{ fenced_conf; echo "audit log \"$d/audit.log\""; } > fenced.conf
	atf_check -s exit:1 -e match:"audit log" "$BIN/fenced" -d -f fenced.conf
	{ fenced_conf; echo "audit off"; } > fenced.conf
	fenced_start
	atf_check -o match:"^state: *running" $CTL boot off tier L1
	[ ! -e state/audit.log ] || atf_fail "audit off wrote a log"
}
unsafe_dir_cleanup() {
	fenced_vars
	audit_cleanup
}

atf_init_test_cases() {
	atf_add_test_case events
	atf_add_test_case rotation
	atf_add_test_case unsafe_dir
}
