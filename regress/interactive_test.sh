#! /usr/bin/atf-sh
# Interactive fences end to end (issue 30, docs/interactive.md): an
# application with a WebSocket in an L2 fence, reached by the browser at
# the fence's own host name and by curl and a WebSocket client at the
# path form, asking a stand-in "model" on the host through the egress
# proxy; the status page's terminal; a page holding 12 streams on its
# one channel.  The browser half is regress/interactive.py (Debian's
# chromium, chromium-driver, python3-selenium), the application
# regress/ws_app.py (python3's standard library, run in the fence).

. "$(atf_get_srcdir)/lib.subr"

PY=/usr/bin/python3
APP_PORT=8000
MODEL_SAYS="forty-two, says the stand-in model"

need_browser() {
	_why="; scripts/deps.sh installs it"
	[ -x /usr/bin/chromium ] ||
	    atf_skip "no /usr/bin/chromium (Debian's chromium$_why)"
	[ -x /usr/bin/chromedriver ] ||
	    atf_skip "no /usr/bin/chromedriver (Debian's chromium-driver$_why)"
	$PY -c 'import selenium' 2>/dev/null ||
	    atf_skip "no selenium for $PY (Debian's python3-selenium$_why)"
}

need_wsclient() {
	$PY -c 'import websocket' 2>/dev/null ||
	    atf_skip "no websocket for $PY (Debian's python3-websocket; scripts/deps.sh installs it)"
}

token_of() {
	"$BIN/fencectl" -s "$PWD/ctl.sock" token -r 2>/dev/null | tail -n 1
}

# browse CASE URL TOKEN [ARG...]: interactive.py's case, its output in
# browse.out (and on stdout); 77 is a skip.
browse() {
	_st=0 _c=$1 _u=$2 _t=$3
	shift 3
	$PY "$TOPDIR/regress/interactive.py" "$_c" "$_u" "$_t" "$PWD" "$@" \
	    > browse.out 2>&1 || _st=$?
	sed "s/^/interactive.py: /" browse.out
	[ $_st -ne 77 ] || atf_skip "$(tail -n 1 browse.out)"
	[ $_st -eq 0 ] || atf_fail "interactive.py $_c: $(grep FAILED \
	    browse.out || tail -n 1 browse.out)"
}

# bg NAME CMD...: a listener of the test's, its pid kept for the cleanup.
bg() {
	_n=$1
	shift
	"$@" > "$_n.log" 2>&1 &
	echo $! >> bg.pids
}

bg_cleanup() {
	for p in $(cat bg.pids 2>/dev/null); do
		kill $p 2>/dev/null
	done
	true
}

# The stand-in model on the host's loopback, port in $MODEL; the test
# page of another origin, port in $WPORT.
listeners() {
	MODEL=$("$REGRESS/t_port") && WPORT=$("$REGRESS/t_port") ||
	    atf_fail "no free port"
	mkdir -p model www
	echo "$MODEL_SAYS" > model/index.html
	cp "$TOPDIR/regress/page_cors.html" www/index.html
	bg model $PY -m http.server "$MODEL" --bind 127.0.0.1 \
	    --directory model
	bg www $PY -m http.server "$WPORT" --bind 127.0.0.1 --directory www
	for p in $MODEL $WPORT; do
		wait_until 10 curl -sf -o /dev/null "http://127.0.0.1:$p/" ||
		    atf_fail "listener $p did not come up"
	done
}

# The daemon: the stand-in mapped as model.test for the egress proxy,
# the test page's origin allowed.
interactive_conf() {
	fenced_conf
	cat <<CONF
egress host "model.test" 127.0.0.1 port $MODEL
http origin "http://127.0.0.1:$WPORT"
CONF
}

# The listening TCP sockets of the host: address:port, sorted.
listening() {
	ss -Hltn | awk '{ print $4 }' | sort -u
}

# A fence of key $1 running ws_app.py on $APP_PORT, booted over the API
# at L2, with the stand-in on its egress list unless $2 names another
# backend (the egress proxy serves native fences only: docs/egress.md).
app_fence() {
	if [ -z "${2:-}" ]; then
		_b="{\"tier\":\"L2\",\"egress\":[\"model.test:$MODEL\"]}"
	else
		_b="{\"tier\":\"L2\",\"backend\":\"$2\"}"
	fi
	api "$TOKEN" POST "/api/environments/$1" "$_b" > boot.out
	grep -q '^20[01]$' boot.out ||
	    atf_fail "boot: $(tr '\n' ' ' < boot.out)"
	curl -sS -o put.out -w '%{http_code}\n' -X PUT \
	    -H "x-voicebox-host-token: $TOKEN" \
	    --data-binary @"$TOPDIR/regress/ws_app.py" \
	    "$U/api/environments/$1/files/ws_app.py" > put.code
	grep -q '^20[01]$' put.code ||
	    atf_fail "put: $(tr '\n' ' ' < put.out)"
	api "$TOKEN" POST "/api/environments/$1/processes" \
	    "{\"argv\":[\"/usr/bin/python3\",\"ws_app.py\",\"$APP_PORT\",\"http://model.test:$MODEL/\"]}" \
	    > proc.out
	grep -q '^201$' proc.out ||
	    atf_fail "start: $(tr '\n' ' ' < proc.out)"
	wait_until 20 sh -c "curl -sf -o /dev/null -H \
'x-voicebox-host-token: $TOKEN' '$U/api/environments/$1/ports/$APP_PORT/'" ||
	    atf_fail "the application never answered through the path form: $(curl -sS -H "x-voicebox-host-token: $TOKEN" "$U/api/environments/$1/ports/$APP_PORT/" | tr '\n' ' ')"
}

# The path form with curl and a WebSocket client, fence $1; with $2
# "egress", the application asks the stand-in through the egress proxy,
# else it only echoes.
path_form() {
	# The listing names the application's port.
	call "$TOKEN" GET "/api/environments/$1/ports"
	expect 200 "\"port\":$APP_PORT[,}]" '"truncated":false'
	call "" GET "/api/environments/$1/ports"
	expect 401
	call "$TOKEN" GET "/api/environments/nosuch/ports"
	expect 404
	P="$U/api/environments/$1/ports/$APP_PORT"
	atf_check -o match:'app in a fence' curl -sS -f \
	    -H "x-voicebox-host-token: $TOKEN" "$P/"
	if [ "$2" = egress ]; then
		# The application's own HTTP: the stand-in's answer,
		# through the egress proxy, then back through the relay.
		atf_check -o inline:"$MODEL_SAYS\n" curl -sS -f \
		    -H "x-voicebox-host-token: $TOKEN" "$P/model"
		ask='ws.send("ask")
print(ws.recv())'
		said="$MODEL_SAYS\n"
	else
		ask=
		said=
	fi
	# Without the token: refused by fenced, not relayed.
	atf_check -o match:'^401$' curl -sS -o /dev/null -w '%{http_code}\n' \
	    "$P/"
	# Its WebSocket, as a client of the path form.
	atf_check -o inline:"${said}echo: through the relay\n" \
	    $PY -c '
import sys, websocket
ws = websocket.create_connection(sys.argv[1], timeout=15,
    header=["x-voicebox-host-token: " + sys.argv[2]])
'"$ask"'
ws.send("echo through the relay")
print(ws.recv())
ws.close()' "ws://127.0.0.1:$(fenced_port)/api/environments/$1/ports/$APP_PORT/ws" \
	    "$TOKEN"
}

atf_test_case localhost_name cleanup
localhost_name_head() {
	atf_set descr "Debian's Chromium reaches NAME.localhost at 127.0.0.1 by itself: the host's resolver does not know the name, Chromium's resolver is told no name but 127.0.0.1 and *.localhost"
	atf_set require.user root
	atf_set timeout 120
}
localhost_name_body() {
	need_browser
	fenced_vars
	p=$("$REGRESS/t_port") || atf_fail "no free port"
	mkdir -p lh
	echo "the test's own listener" > lh/index.html
	bg lh $PY -m http.server "$p" --bind 127.0.0.1 --directory lh
	wait_until 10 curl -sf -o /dev/null "http://127.0.0.1:$p/" ||
	    atf_fail "the listener did not come up"
	name="$p-0123456789abcdef.web.localhost"
	# The host's resolver (glibc: files, dns) knows nothing of it: if
	# Chromium reaches it, Chromium answered the name itself.
	atf_check -s not-exit:0 getent hosts "$name"
	browse localhost "http://$name:$p/" x "the test's own listener"
}
localhost_name_cleanup() { bg_cleanup; }

atf_test_case xterm_csp cleanup
xterm_csp_head() {
	atf_set descr "the page's xterm.js (Debian's, made into one script at build time) renders a terminal in Chromium under the page's CSP, default-src 'self', with no refusal in the console"
	atf_set require.user root
	atf_set timeout 120
}
xterm_csp_body() {
	need_browser
	fenced_vars
	fenced_start
	browse xterm "http://127.0.0.1:$(fenced_port)/" x
	fenced_stop
}
xterm_csp_cleanup() { fenced_cleanup; }

atf_test_case server_host_form cleanup
server_host_form_head() {
	atf_set descr "from a page of another allowed origin in Chromium: an L2 fence with an egress list runs an HTTP and WebSocket application that asks a stand-in model through the egress proxy; opened at the fence's host name through a ticket, it shows the stand-in's answer over its WebSocket; L2 with network allowlisted; no new host port listened on"
	atf_set require.user root
	atf_set timeout 300
}
server_host_form_body() {
	need_browser
	fenced_vars
	listeners
	interactive_conf > fenced.conf
	fenced_start
	TOKEN=$(token_of)
	U="http://127.0.0.1:$(fenced_port)"
	listening > before.txt
	PAGE_API=$U browse server "http://127.0.0.1:$WPORT/" "$TOKEN" \
	    "model.test:$MODEL" "$TOPDIR/regress/ws_app.py" \
	    "http://model.test:$MODEL/" "$MODEL_SAYS"
	# The level: L2, the network axis allowlisted.
	api "$TOKEN" GET /api/environments/app | sed '$d' > state.json
	atf_check -o inline:"L2 allowlisted\n" $PY -c '
import json
s = json.load(open("state.json"))
print(s["level"], s["boundary"]["axes"]["network"]["verdict"])'
	# No host port was opened for the fence: of what listens now and
	# did not before, nothing is fenced's or of its fences' uids (other
	# suites on the machine may open listeners meanwhile: those are
	# shown, with their owners, and not counted).
	listening > after.txt
	comm -13 before.txt after.txt > new.txt
	echo "listening before: $(wc -l < before.txt), after: $(wc -l < after.txt), new: $(tr '\n' ' ' < new.txt)"
	for a in $(cat new.txt); do
		ss -Hltnep "sport = :${a##*:}" > owner.txt
		for p in $(cat fenced.pids) $FENCED_PID; do
			grep -q "pid=$p," owner.txt && atf_fail \
			    "fenced (pid $p) listens on $a: $(cat owner.txt)"
		done
		u=$(sed -n 's/.* uid:\([0-9]*\) .*/\1/p' owner.txt | head -n 1)
		! in_fence_uids "$u" || atf_fail \
		    "a fence of this daemon's (uid $u) listens on $a on the host"
		echo "new listener $a is another's: $(cat owner.txt)"
	done
	fenced_stop
}
server_host_form_cleanup() { bg_cleanup; fenced_cleanup; }

atf_test_case server_path_form cleanup
server_path_form_head() {
	atf_set descr "the same application in a native L2 fence through the path form: curl, the stand-in's answer through the egress proxy and the relay, a WebSocket client"
	atf_set require.user root
	atf_set require.progs curl
	atf_set timeout 180
}
server_path_form_body() {
	need_wsclient
	fenced_vars
	listeners
	interactive_conf > fenced.conf
	fenced_start
	TOKEN=$(token_of)
	U="http://127.0.0.1:$(fenced_port)"
	app_fence app
	path_form app egress
	fenced_stop
}
server_path_form_cleanup() { bg_cleanup; fenced_cleanup; }

atf_test_case server_path_runsc cleanup
server_path_runsc_head() {
	atf_set descr "the path form to the application in a runsc fence (framed tunnel): curl and a WebSocket client (no egress list: the egress proxy serves native fences only)"
	atf_set require.user root
	atf_set require.progs curl
	atf_set timeout 240
}
server_path_runsc_body() {
	need_wsclient
	command -v runsc > /dev/null ||
	    atf_skip "runsc is not installed (scripts/deps.sh installs it)"
	fenced_vars
	listeners
	interactive_conf > fenced.conf
	fenced_start
	TOKEN=$(token_of)
	U="http://127.0.0.1:$(fenced_port)"
	app_fence app runsc
	path_form app
	fenced_stop
}
server_path_runsc_cleanup() { bg_cleanup; fenced_cleanup; }

atf_test_case server_path_vm cleanup
server_path_vm_head() {
	atf_set descr "the path form to the application in a vm fence (framed over virtio-serial): curl and a WebSocket client (no egress list: the egress proxy serves native fences only)"
	atf_set require.user root
	atf_set require.progs curl
	atf_set timeout 600
}
server_path_vm_body() {
	need_wsclient
	fenced_vars
	vm_available || atf_skip "no vm images (make vm-images)"
	listeners
	{ interactive_conf; vm_conf_lines; } > fenced.conf
	fenced_start
	TOKEN=$(token_of)
	U="http://127.0.0.1:$(fenced_port)"
	app_fence app vm
	path_form app
	fenced_stop
}
server_path_vm_cleanup() { bg_cleanup; fenced_cleanup; }

atf_test_case terminal_page cleanup
terminal_page_head() {
	atf_set descr "the status page's terminal in Chromium: a command typed and its output seen, stty size follows the element's size, a reload re-attaches and replays, the fence's stop ends it"
	atf_set require.user root
	atf_set timeout 240
}
terminal_page_body() {
	need_browser
	fenced_vars
	fenced_start
	TOKEN=$(token_of)
	browse terminal "http://127.0.0.1:$(fenced_port)/" "$TOKEN"
	# Nothing of the terminal is left once the fence stopped: no
	# process of this daemon's fence uids on the host.
	atf_check -o match:'^state: *stopped' $CTL show environment term
	wait_until 10 sh -c '! ps -eo uid= | while read u; do
	    [ "$u" -ge '"${_r:=$(fenced_uids | cut -d- -f1)}"' ] &&
	    [ "$u" -le '"$(fenced_uids | cut -d- -f2)"' ] && echo "$u"; done |
	    grep -q .' || atf_fail "processes of the fence uids are left: \
$(ps -eo pid=,uid=,args= | awk -v lo="$(fenced_uids | cut -d- -f1)" \
    -v hi="$(fenced_uids | cut -d- -f2)" '$2 >= lo && $2 <= hi')"
	fenced_stop
}
terminal_page_cleanup() { fenced_cleanup; }

atf_test_case parts_page cleanup
parts_page_head() {
	atf_set descr "the status page's files, processes and ports parts in Chromium: a file named with markup listed as text, ws_app.py started from the page, its port listed and opened in a new tab at the fence's host name (no opener), nothing run from the daemon's text"
	atf_set require.user root
	atf_set timeout 240
}
parts_page_body() {
	need_browser
	fenced_vars
	fenced_start
	TOKEN=$(token_of)
	browse parts "http://127.0.0.1:$(fenced_port)/" "$TOKEN" \
	    "$TOPDIR/regress/ws_app.py"
	fenced_stop
}
parts_page_cleanup() { fenced_cleanup; }

atf_test_case streams_page cleanup
streams_page_head() {
	atf_set descr "a page holding 12 live streams on its one channel keeps answering its other requests (timings printed, not judged; each within 10 s)"
	atf_set require.user root
	atf_set timeout 240
}
streams_page_body() {
	need_browser
	fenced_vars
	fenced_start
	TOKEN=$(token_of)
	browse streams "http://127.0.0.1:$(fenced_port)/" "$TOKEN"
	fenced_stop
}
streams_page_cleanup() { fenced_cleanup; }

atf_init_test_cases() {
	atf_add_test_case localhost_name
	atf_add_test_case xterm_csp
	atf_add_test_case server_host_form
	atf_add_test_case server_path_form
	atf_add_test_case server_path_runsc
	atf_add_test_case server_path_vm
	atf_add_test_case terminal_page
	atf_add_test_case parts_page
	atf_add_test_case streams_page
}
