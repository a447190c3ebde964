#!/usr/bin/python3
"""Interactive fences in a real headless Chromium (docs/interactive.md,
docs/page.md): regress/interactive_test.sh's browser half.

    interactive.py CASE URL TOKEN WORKDIR [ARG...]

CASE is one of
  localhost URL is http://NAME.localhost:PORT/ of a listener of the
            test's: Chromium reaches it with a resolver that sends every
            other name nowhere (the test checks first that the host's
            own resolver does not know NAME)
  xterm     URL is the status page: xterm.js renders (canvas) under the
            page's CSP, and the console shows no CSP refusal
  server    URL is a page of another origin the daemon allows; from it,
            with TOKEN, boot an L2 fence with the egress list ARG[0]
            ("name:port"), put regress/ws_app.py (ARG[1], its path)
            into its home, run it on port 8000 asking ARG[2] (the
            stand-in model's URL), wait for the port to be listed, get
            a ticket, open the ticket's address (the fence's own host
            name) in a tab, and wait for the application's WebSocket
            answer: the stand-in's text (ARG[3]) and the echo
  terminal  URL is the status page: a terminal in fence "term", a
            command typed and its output seen, the element resized and
            `stty size` changed, the page reloaded and the terminal's
            bytes replayed, then the fence stopped
  parts     URL is the status page: the files part lists a file whose
            name is markup, as text; the processes part starts
            ws_app.py (ARG[0]); the ports part lists its port and a
            click opens it at the fence's host name in a new tab
  streams   URL is the status page: 12 streams held at once on the page's
            channel while 20 other API requests are made and timed
            (printed, never judged but for a 10 s bound)

Chromium runs headless with a profile in WORKDIR, a proxy on a closed
loopback port, and a resolver that answers no name but 127.0.0.1 and
*.localhost (which Chromium resolves to loopback itself, without asking
the system's resolver), so nothing it tries leaves the machine.  Prints
what it did; exits 0 when the case passed, 1 with the reason when it
failed, 77 when it cannot run.
"""
import json
import os
import sys
import time

try:
    from selenium import webdriver
    from selenium.common.exceptions import TimeoutException, WebDriverException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError as e:
    print("interactive.py: no selenium (python3-selenium): %s" % e)
    sys.exit(77)

WAIT = 40
APP_PORT = 8000


class Failed(Exception):
    pass


def say(*a):
    print(*a)
    sys.stdout.flush()


def browser(work):
    opts = webdriver.ChromeOptions()
    opts.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu",
              "--disable-dev-shm-usage",
              "--user-data-dir=" + os.path.join(work, "chromium"),
              "--window-size=1280,1000", "--no-first-run",
              "--no-default-browser-check", "--disable-extensions",
              "--disable-background-networking", "--disable-sync",
              "--disable-component-update", "--disable-default-apps",
              "--disable-domain-reliability", "--no-pings",
              "--disable-client-side-phishing-detection",
              "--disable-popup-blocking",
              "--proxy-server=http://127.0.0.1:9",
              # *.localhost is left to Chromium, which answers it
              # with loopback itself (the localhost case checks it).
              "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, "
              "EXCLUDE *.localhost"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    svc = Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"),
                  log_path=os.path.join(work, "chromedriver.log"))
    return webdriver.Chrome(service=svc, options=opts)


def wait(d, what, pred, secs=WAIT):
    try:
        return WebDriverWait(d, secs, poll_frequency=0.1).until(
            lambda _: pred())
    except TimeoutException:
        raise Failed("timed out waiting for " + what)


def fetch_js(d, script, *args):
    """Run an async function body in the page; its value or its error."""
    return d.execute_async_script("""
const done = arguments[arguments.length - 1];
const args = Array.prototype.slice.call(arguments, 0, -1);
(async function () {""" + script + """})().then(
  function (v) { done({ok: true, value: v}); },
  function (e) { done({ok: false, error: String(e && e.message || e)}); });
""", *args)


def text_of(d, sel):
    e = d.find_elements(By.CSS_SELECTOR, sel)
    return e[0].text if e else ""


# --- localhost

def case_localhost(d, url, token, args):
    d.set_page_load_timeout(20)
    try:
        d.get(url)
    except WebDriverException as e:
        raise Failed("Chromium did not reach %s: %s" %
                     (url, str(e).splitlines()[0]))
    body = d.find_element(By.TAG_NAME, "body").text
    say("Chromium reached %s: %r" % (url, body[:80]))
    if args and args[0] not in body:
        raise Failed("not the test's listener: %r" % body[:200])


# --- xterm.js under the page's CSP

XTERM_JS = """
const refused = [];
document.addEventListener('securitypolicyviolation', function (e) {
  refused.push(e.violatedDirective + ' ' + e.blockedURI);
});
const box = document.createElement('div');
box.style.width = '600px';
box.style.height = '300px';
document.body.appendChild(box);
const t = new Terminal({rendererType: 'canvas'});
t.open(box);
t.fit();
t.write('fenced \\x1b[31mred\\x1b[0m text\\r\\n');
await new Promise(function (ok) { setTimeout(ok, 500); });
const cols = t.cols, rows = t.rows;
t.resize(40, 10);
return {cols: cols, rows: rows, after: [t.cols, t.rows],
  line: t._core.buffer.translateBufferLineToString(0, true),
  canvases: box.querySelectorAll('canvas').length,
  refused: refused};
"""


def case_xterm(d, url, token, args):
    d.get(url)
    wait(d, "xterm.js loaded",
         lambda: d.execute_script("return typeof Terminal") == "function")
    r = fetch_js(d, XTERM_JS)
    if not r["ok"]:
        raise Failed("xterm.js failed: " + r["error"])
    v = r["value"]
    say("xterm.js %dx%d, then %r, %d canvases, line 0 %r" % (
        v["cols"], v["rows"], v["after"], v["canvases"], v["line"]))
    if v["line"] != "fenced red text" or v["after"] != [40, 10]:
        raise Failed("xterm.js did not take the text and size: %r" % v)
    csp = v["refused"] + [e["message"] for e in d.get_log("browser")
                          if "Content Security Policy" in
                          e.get("message", "")]
    if csp:
        raise Failed("the CSP refused something: %r" % csp)
    if v["canvases"] < 1:
        raise Failed("xterm.js drew on no canvas: %r" % v)
    say("no CSP refusal (securitypolicyviolation, console)")


# --- server: an application in an L2 fence, from another origin

SERVER_JS = """
const [api, token, egress, app, model, port] = args;
const H = {'x-voicebox-host-token': token};
const J = Object.assign({'Content-Type': 'application/json'}, H);
const E = api + '/api/environments/app';
const out = {};
let r = await fetch(E, {method: 'POST', headers: J,
  body: JSON.stringify({tier: 'L2', require: 'L2', egress: [egress]})});
out.boot = r.status;
out.bootBody = await r.text();
if (!r.ok) return out;
r = await fetch(E + '/files/ws_app.py', {method: 'PUT',
  headers: Object.assign({'Content-Type': 'application/octet-stream'}, H),
  body: app});
out.put = r.status;
r = await fetch(E + '/processes', {method: 'POST', headers: J,
  body: JSON.stringify({argv: ['/usr/bin/python3', 'ws_app.py',
  String(port), model]})});
out.start = r.status;
out.proc = await r.json();
/* Listed once the application listens. */
const t0 = Date.now();
out.ports = null;
while (Date.now() - t0 < 20000) {
  r = await fetch(E + '/ports', {headers: H});
  if (r.status === 404 || r.status === 405) {
    out.ports = 'no listing: ' + r.status + ' ' + await r.text();
    break;
  }
  const l = await r.json();
  out.ports = l;
  if (Array.isArray(l.ports) && l.ports.some(function (p) {
      return (typeof p === 'number' ? p : p.port) === port; }))
    break;
  await new Promise(function (ok) { setTimeout(ok, 200); });
}
r = await fetch(E + '/tickets', {method: 'POST', headers: J,
  body: JSON.stringify({port: port})});
out.ticket = r.status;
out.ticketBody = await r.json();
return out;
"""


def case_server(d, url, token, args):
    api = os.environ["PAGE_API"]
    egress, app_path, model, want = args[:4]
    with open(app_path) as f:
        app = f.read()
    d.get(url)
    wait(d, "the test page", lambda: d.title == "fenced cors test")
    say("the test page, origin %s" % url.rstrip("/"))
    r = fetch_js(d, SERVER_JS, api, token, egress, app, model, APP_PORT)
    if not r["ok"]:
        raise Failed("the script failed: " + r["error"])
    v = r["value"]
    say("boot %s, put %s, start %s, ports %s, ticket %s" % (
        v.get("boot"), v.get("put"), v.get("start"),
        json.dumps(v.get("ports")), v.get("ticket")))
    if v.get("boot") not in (200, 201):
        raise Failed("boot refused: %s" % v.get("bootBody"))
    if v.get("put") not in (200, 201) or v.get("start") != 201:
        raise Failed("could not put or start the application: %r" % v)
    t = v.get("ticketBody") or {}
    turl = t.get("url") if isinstance(t, dict) else None
    if v.get("ticket") not in (200, 201) or not isinstance(turl, str):
        raise Failed("no ticket: %r" % t)
    say("ticket address " + turl)
    # A tab of its own, at the ticket's address: the fence's host name.
    d.switch_to.new_window("tab")
    d.get(turl)
    # The ticket's cookie is set by now; until the application listens
    # the relay answers 502, and its page is asked again.
    t0 = time.monotonic()
    while d.title != "app in a fence" and time.monotonic() - t0 < WAIT:
        say("not yet: %r" % d.find_element(By.TAG_NAME, "body").text[:120])
        time.sleep(0.5)
        d.get(d.current_url)
    if d.title != "app in a fence":
        raise Failed("the application's page never came: %r" %
                     d.find_element(By.TAG_NAME, "body").text[:300])
    host = d.execute_script("return location.host")
    say("the application's page at " + d.current_url)
    if not host.startswith("%d-" % APP_PORT) or \
            ".localhost:" not in host:
        raise Failed("the page is not at the fence's host name: " + host)
    wait(d, "the stand-in's answer over the WebSocket",
         lambda: text_of(d, "#answer") not in ("", "waiting"))
    ans = text_of(d, "#answer")
    say("answer over the WebSocket: %r" % ans)
    if want not in ans:
        raise Failed("not the stand-in's answer: %r" % ans)
    wait(d, "the echo", lambda: text_of(d, "#echo") == "echo: hello")
    say("echo over the WebSocket: %r" % text_of(d, "#echo"))
    # The ticket was good once.
    d.get(turl)
    again = d.find_element(By.TAG_NAME, "body").text
    say("the ticket again: %r" % again[:120])
    if "app in a fence" in d.title:
        # Its cookie is set: the page still shows; the ticket itself
        # must have been refused, which the relay says in its answer.
        raise Failed("the ticket was taken twice")


# --- the terminal, on the status page

def login(d, url, token):
    d.get(url)
    wait(d, "the token form",
         lambda: d.find_element(By.ID, "login").is_displayed())
    d.find_element(By.ID, "token").send_keys(token)
    d.find_element(By.CSS_SELECTOR, "#token-form button").click()
    wait(d, "the environments view",
         lambda: d.find_element(By.ID, "app").is_displayed())


def card(d, key):
    for c in d.find_elements(By.CSS_SELECTOR, "#envs .env"):
        if c.get_attribute("data-key") == key:
            return c
    return None


def boot_card(d, key, tier=None):
    fetch_js(d, """
const [key, token, tier] = args;
const r = await fetch('/api/environments/' + key, {method: 'POST',
  headers: {'x-voicebox-host-token': token,
  'Content-Type': 'application/json'},
  body: JSON.stringify(tier ? {tier: tier} : {})});
return r.status;""", key, d.execute_script(
        "return sessionStorage.getItem('fenced.token')"), tier)
    wait(d, "the card of " + key, lambda: card(d, key) is not None and
         "running" in card(d, key).find_element(
             By.CSS_SELECTOR, ".state").text)
    return card(d, key)


def term_text(d):
    """What the terminal shows: xterm's buffer, line by line."""
    return d.execute_script("""
const c = document.querySelector('#envs .env[data-key="term"]');
const t = c && c.__term;
if (!t) return null;
/* xterm 3.8 has no public buffer API yet: its core's. */
const b = t._core.buffer, out = [];
for (let i = 0; i < b.lines.length; i++)
  out.push(b.translateBufferLineToString(i, true));
return out.join('\\n');""")


def term_type(d, text):
    ta = d.find_element(By.CSS_SELECTOR,
                        '#envs .env[data-key="term"] .term textarea')
    ta.send_keys(text)


def open_term_part(d):
    c = card(d, "term")
    part = c.find_element(By.CSS_SELECTOR, ".term-part")
    if part.get_attribute("open") is None:
        part.find_element(By.CSS_SELECTOR, "summary").click()
    return c


def case_terminal(d, url, token, args):
    login(d, url, token)
    c = boot_card(d, "term")
    c = open_term_part(d)
    c.find_element(By.CSS_SELECTOR, ".term-open").click()
    wait(d, "the terminal attached", lambda: c.find_element(
        By.CSS_SELECTOR, ".term-kill").is_enabled())
    say("terminal: " + c.find_element(By.CSS_SELECTOR,
                                      ".term-status").text)
    term_type(d, "echo fenced-$((6*7))" + Keys.ENTER)
    wait(d, "the command's output",
         lambda: "fenced-42" in (term_text(d) or ""))
    say("typed echo fenced-$((6*7)), saw fenced-42")
    term_type(d, "stty size" + Keys.ENTER)
    wait(d, "stty size", lambda: any(
        len(l.split()) == 2 and all(x.isdigit() for x in l.split())
        for l in (term_text(d) or "").splitlines()))
    sizes = [l for l in (term_text(d) or "").splitlines()
             if len(l.split()) == 2 and all(x.isdigit() for x in l.split())]
    first = sizes[-1]
    say("stty size: " + first)
    # Resize: the element narrower, the terminal follows.
    d.execute_script("""
const e = document.querySelector('#envs .env[data-key="term"] .term');
e.style.width = '420px'; e.style.height = '200px';""")
    time.sleep(1)
    term_type(d, "clear; stty size" + Keys.ENTER)
    wait(d, "stty size changed", lambda: any(
        len(l.split()) == 2 and all(x.isdigit() for x in l.split()) and
        l.strip() != first.strip()
        for l in (term_text(d) or "").splitlines()))
    sizes = [l for l in (term_text(d) or "").splitlines()
             if len(l.split()) == 2 and all(x.isdigit() for x in l.split())]
    say("stty size after the resize: " + sizes[-1])
    term_type(d, "echo before-reload" + Keys.ENTER)
    wait(d, "before-reload", lambda: (term_text(d) or "").count(
        "before-reload") >= 2)
    # The socket closes with the page; the terminal lives on.
    d.refresh()
    wait(d, "the environments view again",
         lambda: d.find_element(By.ID, "app").is_displayed())
    wait(d, "the card again", lambda: card(d, "term") is not None)
    c = open_term_part(d)
    wait(d, "the terminal re-attached", lambda: c.find_element(
        By.CSS_SELECTOR, ".term-kill").is_enabled())
    wait(d, "the replay", lambda: "before-reload" in (term_text(d) or ""))
    say("after the reload: re-attached, the replay holds before-reload")
    term_type(d, "echo after-reload" + Keys.ENTER)
    wait(d, "after-reload", lambda: (term_text(d) or "").count(
        "after-reload") >= 2)
    say("typed after the reload, saw it")
    c.find_element(By.CSS_SELECTOR, ".stop").click()
    # Read as textContent: the stopped fence's card folds (docs/page.md),
    # and a folded element has no rendered text.
    status = c.find_element(By.CSS_SELECTOR, ".term-status")
    wait(d, "the terminal ended with the fence", lambda: "ended" in
         status.get_attribute("textContent") or
         "stopped" in status.get_attribute("textContent"))
    say("stopped: " + status.get_attribute("textContent"))


# --- the page's other parts: ports, files, processes

EVIL = "<img src=x onerror=window.__pwned=1>"


def case_parts(d, url, token, args):
    app_path = args[0]
    with open(app_path) as f:
        app = f.read()
    login(d, url, token)
    # L2: its own loopback, so its port 8000 is its own, whatever
    # listens on the host's.
    c = boot_card(d, "parts", "L2")
    tok = d.execute_script("return sessionStorage.getItem('fenced.token')")
    # Files: the application put into the home, and a file whose name
    # is markup, through the API; the part lists both as text.
    r = fetch_js(d, """
const [token, app, evil] = args;
const H = {'x-voicebox-host-token': token,
  'Content-Type': 'application/octet-stream'};
const E = '/api/environments/parts/files/';
const a = await fetch(E + 'ws_app.py', {method: 'PUT', headers: H,
  body: app});
const b = await fetch(E + encodeURIComponent(evil), {method: 'PUT',
  headers: H, body: 'x'});
return [a.status, b.status];""", tok, app, EVIL)
    if not r["ok"] or r["value"] != [201, 201]:
        raise Failed("could not put the files: %r" % r)
    c.find_element(By.CSS_SELECTOR, ".files-part > summary").click()
    wait(d, "the files listed", lambda: "ws_app.py" in c.find_element(
        By.CSS_SELECTOR, ".files").text and EVIL in c.find_element(
        By.CSS_SELECTOR, ".files").text)
    say("files part: ws_app.py and the markup name listed as text")
    # Processes: the application started from the part, with a command
    # that is markup too (a comment to the shell).
    c.find_element(By.CSS_SELECTOR, ".procs-part > summary").click()
    c.find_element(By.CSS_SELECTOR, ".proc-command").send_keys(
        "exec python3 ws_app.py %d http://127.0.0.1:9/ # %s" %
        (APP_PORT, EVIL))
    c.find_element(By.CSS_SELECTOR, ".proc-start button").click()
    wait(d, "the process running", lambda: "running" in c.find_element(
        By.CSS_SELECTOR, ".procs").text)
    say("processes part: %r" % c.find_element(
        By.CSS_SELECTOR, ".proc-head code").text)
    # Ports: 8000 comes as a link; a click opens the server in a tab
    # at the fence's host name, through a ticket.
    c.find_element(By.CSS_SELECTOR, ".ports-part > summary").click()
    sel = ".ports button[data-port='%d']" % APP_PORT
    wait(d, "port %d listed" % APP_PORT,
         lambda: c.find_elements(By.CSS_SELECTOR, sel))
    say("ports part: %r" % c.find_element(By.CSS_SELECTOR, ".ports").text)
    before = set(d.window_handles)
    c.find_element(By.CSS_SELECTOR, sel).click()
    wait(d, "a new tab", lambda: len(set(d.window_handles) - before) == 1)
    main = d.current_window_handle
    d.switch_to.window((set(d.window_handles) - before).pop())
    try:
        wait(d, "the application in the tab",
             lambda: d.title == "app in a fence")
    except Failed:
        raise Failed("the tab shows %s: %r" % (d.current_url, d.find_element(
            By.TAG_NAME, "body").text[:300]))
    host = d.execute_script("return location.host")
    say("the port's link opened %s" % d.current_url)
    if not host.startswith("%d-" % APP_PORT) or ".parts.localhost:" \
            not in host:
        raise Failed("not the fence's host name: " + host)
    wait(d, "the echo", lambda: text_of(d, "#echo") == "echo: hello")
    if d.execute_script("return window.opener") is not None:
        raise Failed("the tab keeps an opener to the status page")
    say("echo over the WebSocket in the tab; no opener")
    d.close()
    d.switch_to.window(main)
    if d.execute_script("return window.__pwned === undefined && "
                        "document.querySelectorAll('#envs img').length"
                        " === 0") is not True:
        raise Failed("markup from the daemon became an element")
    say("no element made of the markup, nothing ran")
    # A process's stdin from its row, its output live on the channel.
    c.find_element(By.CSS_SELECTOR, ".proc-command").send_keys(
        'while read l; do echo "GOT $l"; done; echo STDIN-ENDED')
    c.find_element(By.CSS_SELECTOR, ".proc-stdin").click()
    c.find_element(By.CSS_SELECTOR, ".proc-start button").click()
    wait(d, "the second process", lambda: len(c.find_elements(
        By.CSS_SELECTOR, ".proc")) == 2)
    p2 = c.find_elements(By.CSS_SELECTOR, ".proc")[1]
    wait(d, "its stdin row", lambda: p2.find_element(
        By.CSS_SELECTOR, ".proc-input input").is_displayed())
    p2.find_element(By.CSS_SELECTOR, ".proc-input input").send_keys(
        "one line" + Keys.ENTER)
    wait(d, "the line echoed", lambda: "GOT one line" in p2.find_element(
        By.CSS_SELECTOR, ".output").text)
    live = p2.find_element(By.CSS_SELECTOR, ".output").get_attribute(
        "data-live")
    say("stdin: a line sent, %r came back (output: %s)" % (
        "GOT one line", live))
    if live != "channel":
        raise Failed("the output did not come on the channel: %r" % live)
    p2.find_element(By.CSS_SELECTOR, ".proc-input .quiet").click()
    wait(d, "the end of stdin seen", lambda: "STDIN-ENDED" in
         p2.find_element(By.CSS_SELECTOR, ".output").text)
    wait(d, "the process exited", lambda: p2.get_attribute("data-state")
         == "exited")
    say("stdin closed: the process read its end and exited")


# --- 12 streams at once, on the page's one channel

STREAMS_JS = """
const [token, n, others] = args;
const P = window.fencedPage;
if (!P) throw new Error('the page exposes no channel (fencedPage)');
const H = {'x-voicebox-host-token': token};
const E = '/api/environments/streams';
let r = await fetch(E, {method: 'POST', headers: Object.assign(
  {'Content-Type': 'application/json'}, H), body: '{}'});
if (!r.ok) throw new Error('boot: ' + r.status);
/* n background processes writing a line a second, each a stream. */
const got = {};
const streams = [];
for (let i = 0; i < n; i++) {
  r = await fetch(E + '/processes', {method: 'POST', headers: Object.assign(
    {'Content-Type': 'application/json'}, H), body: JSON.stringify(
    {command: 'while :; do echo s' + i + '; sleep 1; done'})});
  const p = await r.json();
  got[i] = 0;
  streams.push(await P.channel().stream({op: 'output',
    key: 'streams', id: Number(p.id), which: 'stdout'},
    {onData: function (b) { got[i] += b.length; },
     onEnd: function () {}}));
}
await new Promise(function (ok) { setTimeout(ok, 2500); });
/* Other requests while the streams are held: each timed. */
const times = [];
for (let k = 0; k < others; k++) {
  const t0 = performance.now();
  r = await fetch(E, {headers: H});
  await r.text();
  times.push(Math.round(performance.now() - t0));
}
const live = Object.keys(got).filter(function (i) { return got[i] > 0; });
streams.forEach(function (s) { s.close(); });
/*
 * The same 12 streams as HTTP requests of their own (streamed execs):
 * a browser gives a host six connections, so the next request waits.
 */
const ac = new AbortController();
const held = [];
for (let i = 0; i < n; i++)
  held.push(fetch(E + '/exec', {method: 'POST', signal: ac.signal,
    headers: Object.assign({'Content-Type': 'application/json'}, H),
    body: JSON.stringify({command: 'while :; do echo h' + i +
    '; sleep 1; done', stream: true})}).catch(function () {}));
await new Promise(function (ok) { setTimeout(ok, 1500); });
const t0 = performance.now();
const late = new AbortController();
const timer = setTimeout(function () { late.abort(); }, 5000);
let without;
try {
  r = await fetch(E, {headers: H, signal: late.signal});
  await r.text();
  without = Math.round(performance.now() - t0);
} catch (e) {
  without = null;
}
clearTimeout(timer);
ac.abort();
await fetch(E, {method: 'DELETE', headers: H});
return {times: times, live: live.length, got: got, without: without};
"""


def case_streams(d, url, token, args):
    login(d, url, token)
    r = fetch_js(d, STREAMS_JS, token, 12, 20)
    if not r["ok"]:
        raise Failed("the script failed: " + r["error"])
    v = r["value"]
    t = sorted(v["times"])
    say("12 streams held on one channel, %d of them delivering" % v["live"])
    say("20 other requests meanwhile: median %d ms, max %d ms" %
        (t[len(t) // 2], t[-1]))
    say("the same 12 streams as HTTP requests of their own: the next "
        "request %s" % ("answered in %d ms" % v["without"]
                        if v["without"] is not None else
                        "was not answered within 5 s (six connections "
                        "a host)"))
    if v["live"] < 12:
        raise Failed("only %d of 12 streams delivered: %r" %
                     (v["live"], v["got"]))
    if t[-1] > 10000:
        raise Failed("a request took %d ms" % t[-1])


CASES = {"localhost": case_localhost, "xterm": case_xterm,
         "server": case_server, "parts": case_parts,
         "terminal": case_terminal, "streams": case_streams}


def main():
    if len(sys.argv) < 5 or sys.argv[1] not in CASES:
        print(__doc__)
        return 2
    case, url, token, work = sys.argv[1:5]
    try:
        d = browser(work)
    except WebDriverException as e:
        print("interactive.py: cannot start chromium: %s" %
              str(e).strip()[:400])
        return 77
    try:
        d.set_script_timeout(90)
        CASES[case](d, url, token, sys.argv[5:])
    except Failed as e:
        print("interactive.py: FAILED: %s" % e)
        try:
            with open(os.path.join(work, "failed.html"), "w") as f:
                f.write(d.page_source)
            d.save_screenshot(os.path.join(work, "failed.png"))
            for e in d.get_log("browser"):
                say("console: %s" % e.get("message", "")[:300])
        except WebDriverException:
            pass
        return 1
    finally:
        d.quit()
    say("passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
