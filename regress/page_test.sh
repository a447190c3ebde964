#! /usr/bin/atf-sh
# The status page (GET /, docs/page.md) and the API as pages call it, in
# a real headless Chromium driven by regress/page.py (Debian's chromium,
# chromium-driver and python3-selenium; scripts/deps.sh installs them).
# Screenshots go to the build directory's page/ (build/page/*.png).

. "$(atf_get_srcdir)/lib.subr"

PY=/usr/bin/python3

token_of() {
	"$BIN/fencectl" -s "$PWD/ctl.sock" token 2>/dev/null | tail -n 1
}

# Skip, saying why, when the browser or its driver is missing.
need_browser() {
	_why="; scripts/deps.sh installs it"
	[ -x /usr/bin/chromium ] ||
	    atf_skip "no /usr/bin/chromium (Debian's chromium$_why)"
	[ -x /usr/bin/chromedriver ] ||
	    atf_skip "no /usr/bin/chromedriver (Debian's chromium-driver$_why)"
	$PY -c 'import selenium' 2>/dev/null ||
	    atf_skip "no selenium for $PY (Debian's python3-selenium$_why)"
}

# The directory the screenshots go to: the build's, beside bin/.
shots() {
	_d="$(dirname "$BIN")/page"
	mkdir -p "$_d" || atf_fail "cannot make $_d"
	echo "$_d"
}

# page CASE URL TOKEN [SHOT]: regress/page.py's case; its output in
# page.out (and on stdout), 77 a skip.
page() {
	_st=0
	$PY "$TOPDIR/regress/page.py" "$@" > page.out 2>&1 || _st=$?
	sed "s/^/page.py: /" page.out
	[ $_st -ne 77 ] || atf_skip "$(tail -n 1 page.out)"
	[ $_st -eq 0 ] || atf_fail "page.py $1: $(grep FAILED page.out ||
	    tail -n 1 page.out)"
}

atf_test_case headers cleanup
headers_head() {
	atf_set descr "GET / and its files need no token, come with their types, a CSP, nosniff, no-store and no-referrer; everything else still needs a token"
	atf_set require.user root
}
headers_body() {
	fenced_vars
	fenced_start
	U=http://127.0.0.1:$(fenced_port)
	while read -r p ty; do
		atf_check -o save:h.out -e ignore curl -sS -D - -o body.out \
		    "$U$p" < /dev/null
		tr -d '\r' < h.out > h.txt
		atf_check -o match:"^HTTP/1.1 200" head -n 1 h.txt
		atf_check -o match:"^Content-Type: $ty\$" cat h.txt
		atf_check -o match:"^Content-Security-Policy: default-src 'self'; frame-ancestors 'none'\$" cat h.txt
		atf_check -o match:'^X-Content-Type-Options: nosniff$' cat h.txt
		atf_check -o match:'^Cache-Control: no-store$' cat h.txt
		atf_check -o match:'^Referrer-Policy: no-referrer$' cat h.txt
		[ -s body.out ] || atf_fail "$p: an empty body"
	done <<-EOF
	/ text/html; charset=utf-8
	/app.js text/javascript; charset=utf-8
	/app.css text/css; charset=utf-8
	/icon.svg image/svg\\+xml
	/xterm.js text/javascript; charset=utf-8
	/xterm.css text/css; charset=utf-8
	EOF
	# The files as they are in the source, byte for byte.
	atf_check curl -sS -o app.js "$U/app.js"
	atf_check cmp app.js "$TOPDIR/broker/page/app.js"
	atf_check curl -sS -o index.html "$U/"
	atf_check cmp index.html "$TOPDIR/broker/page/index.html"
	# The terminal's files, made at build time from Debian's packages
	# (scripts/xterm.sh), never kept in the repository.
	atf_check curl -sS -o xterm.css "$U/xterm.css"
	atf_check cmp xterm.css /usr/share/javascript/xterm/xterm.css
	atf_check curl -sS -o xterm.js "$U/xterm.js"
	atf_check -o match:'from Debian.s node-xterm' head -n 1 xterm.js
	atf_check -s exit:1 test -e "$TOPDIR/broker/page/xterm.js"
	# No inline script or style for the CSP to refuse, nothing from
	# elsewhere.
	atf_check -s exit:1 grep -Ei '<script>|<style|style=| on[a-z]+=' \
	    index.html
	atf_check -s exit:1 grep -Ei '(src|href)="(https?:)?//' index.html
	# HEAD as GET, without the body; any other method 405.
	atf_check -o match:"^HTTP/1.1 200" -e ignore curl -sS -I "$U/app.css"
	call "" POST /
	expect 405 '"error":"method-not-allowed"'
	call "" DELETE /app.js
	expect 405
	# Only the page's files: every other path is the API's, token first.
	for p in /index.html /app.js/ /x /api /api/environments \
	    /api/environments/web /app.js%00 //app.js /app.js?x; do
		call "" GET "$p"
		expect 401 '"error":"unauthorized"'
	done
	t=$(token_of)
	call "$t" GET /api/environments
	expect 200
	fenced_stop
}
headers_cleanup() { fenced_cleanup; }

atf_test_case status cleanup
status_head() {
	atf_set descr "in headless Chromium: enter the token, boot a fence through the page, see its level, run echo hi and see hi, stop it; a screenshot kept in build/page/status.png"
	atf_set require.user root
	atf_set timeout 240
}
status_body() {
	need_browser
	fenced_vars
	fenced_start
	t=$(token_of)
	[ -n "$t" ] || atf_fail "no token"
	page status "http://127.0.0.1:$(fenced_port)/" "$t" "$PWD" \
	    "$(shots)/status.png"
	# The page did it, on the host: web was booted, measured, stopped.
	atf_check -o match:'^state: *stopped' -o match:'^level: *L1\.5' \
	    $CTL show environment web
	atf_check -o match:'^output "hi", exit 0' cat page.out
	atf_check -o inline:'89504e470d0a1a0a\n' sh -c \
	    "head -c 8 '$(shots)/status.png' | od -An -tx1 | tr -d ' \n'; echo"
	fenced_stop
}
status_cleanup() { fenced_cleanup; }

atf_test_case escape cleanup
escape_head() {
	atf_set descr "what the page shows is text: a key, a command's output and a lying fence's state holding <img src=x onerror=...> make no element and run nothing"
	atf_set require.user root
	atf_set timeout 240
}
escape_body() {
	need_browser
	fenced_vars
	fenced_start
	t=$(token_of)
	page escape "http://127.0.0.1:$(fenced_port)/" "$t" "$PWD" \
	    "$(shots)/escape.png"
	# The refused key booted nothing.
	call "$t" GET /api/environments
	expect 200
	atf_check -o inline:'"key":"esc"\n' grep -o '"key":"[^"]*"' body.out
	fenced_stop
}
escape_cleanup() { fenced_cleanup; }

# --- Another origin: a test page served by python3 -m http.server.

# serve PORT: regress/page_cors.html at http://127.0.0.1:PORT/.
serve() {
	mkdir -p www
	cp "$TOPDIR/regress/page_cors.html" www/index.html
	$PY -m http.server "$1" --bind 127.0.0.1 --directory www \
	    > "www.$1.log" 2>&1 &
	echo $! >> www.pids
	wait_until 10 curl -sf -o /dev/null "http://127.0.0.1:$1/" ||
	    atf_fail "the test page's server did not come up"
}

serve_cleanup() {
	for p in $(cat www.pids 2>/dev/null); do
		kill $p 2>/dev/null
	done
}

# A configuration allowing the origin http://127.0.0.1:$1; 1 when this
# daemon does not know `http origin' (fenced -n refuses it).
origin_conf() {
	{ fenced_conf; echo "http origin \"http://127.0.0.1:$1\""; } \
	    > fenced.conf
	"$BIN/fenced" -n -f fenced.conf > conf.out 2>&1
}

atf_test_case cross_origin cleanup
cross_origin_head() {
	atf_set descr "a page from an origin of http origin calls the API from headless Chromium: lists, boots, streams a command's output, puts and gets a file, stops"
	atf_set require.user root
	atf_set timeout 240
}
cross_origin_body() {
	need_browser
	fenced_vars
	wport=$("$REGRESS/t_port") || atf_fail "no free port"
	origin_conf "$wport" || atf_skip "this fenced does not take \`http \
origin' (no CORS built in): $(head -n 1 conf.out)"
	fenced_start
	t=$(token_of)
	serve "$wport"
	PAGE_API="http://127.0.0.1:$(fenced_port)" \
	    page cors "http://127.0.0.1:$wport/" "$t" "$PWD"
	# On the host: the file was written in the fence's home, as the
	# fence's uid, and the fence is stopped.
	h="$(fenced_homes)/cors"
	atf_check -o inline:"256\n" stat -c %s "$h/up.bin"
	in_fence_uids "$(stat -c %u "$h/up.bin")" ||
	    atf_fail "up.bin is not the fence's: uid $(stat -c %u "$h/up.bin")"
	atf_check -o match:'^state: *stopped' $CTL show environment cors
	fenced_stop
}
cross_origin_cleanup() { serve_cleanup; fenced_cleanup; }

atf_test_case foreign_origin cleanup
foreign_origin_head() {
	atf_set descr "a page from an origin not allowed, holding a valid token, can read no answer and changes nothing: no boot, no command, no file, no stop"
	atf_set require.user root
	atf_set timeout 240
}
foreign_origin_body() {
	need_browser
	fenced_vars
	allowed=$("$REGRESS/t_port") || atf_fail "no free port"
	# One origin allowed, when this daemon has the setting: the page
	# comes from another.
	origin_conf "$allowed" || {
		echo "fenced takes no \`http origin': none allowed" >&2
		fenced_conf > fenced.conf
	}
	fenced_start
	t=$(token_of)
	call "$t" POST /api/environments/victim '{"tier":"L1.5"}'
	expect 201
	wport=$("$REGRESS/t_port") || atf_fail "no free port"
	[ "$wport" != "$allowed" ] || atf_fail "the same port twice"
	serve "$wport"
	PAGE_API="http://127.0.0.1:$(fenced_port)" \
	    page foreign "http://127.0.0.1:$wport/" "$t" "$PWD"
	# Nothing changed on the host.
	call "$t" GET /api/environments
	expect 200 '"key":"victim"' '"state":"running"'
	atf_check -o inline:'"key":"victim"\n' grep -o '"key":"[^"]*"' body.out
	[ ! -e "$(fenced_homes)/victim/pwned" ] ||
	    atf_fail "the foreign page wrote into the home"
	[ ! -e "$(fenced_homes)/foreign" ] ||
	    atf_fail "the foreign page booted a fence"
	fenced_stop
}
foreign_origin_cleanup() { serve_cleanup; fenced_cleanup; }

atf_test_case legend cleanup
legend_head() {
	atf_set descr "in headless Chromium: the legend of levels and verdicts, a stopped fence folded, a runsc fence's untimed boot steps shown as not measured, times as YYYY-MM-DD HH:MM:SS, the owner by name"
	atf_set require.user root
	atf_set timeout 240
}
legend_body() {
	need_browser
	command -v runsc > /dev/null || atf_skip "runsc is not installed (scripts/deps.sh installs it)"
	fenced_vars
	fenced_start
	t=$(token_of)
	[ -n "$t" ] || atf_fail "no token"
	call "$t" POST /api/environments/old '{"tier":"L1"}'
	expect 201 '"state":"running"'
	call "$t" DELETE /api/environments/old
	expect 200
	call "$t" POST /api/environments/gv '{"backend":"runsc"}'
	expect 201 '"state":"running"'
	page legend "http://127.0.0.1:$(fenced_port)/" "$t" "$PWD" \
	    "$(shots)/legend.png"
	atf_check -o match:'^legend levels \["L1", "L1.5", "L2", "L3", "L4", "not-earned", "unmeasured"\]' \
	    -o match:'^old folded' -o match:'^gv L3: ' \
	    -o match:'^old owner "root \(uid 0\)' cat page.out
	fenced_stop
}
legend_cleanup() { fenced_cleanup; }

atf_init_test_cases() {
	atf_add_test_case headers
	atf_add_test_case status
	atf_add_test_case escape
	atf_add_test_case cross_origin
	atf_add_test_case foreign_origin
	atf_add_test_case legend
}
