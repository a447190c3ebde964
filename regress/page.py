#!/usr/bin/python3
"""The status page and the API in a real headless Chromium (docs/page.md).

    page.py CASE URL TOKEN WORKDIR [OUT]

CASE is one of
  status  open URL (the broker's GET /), enter TOKEN, boot "web" through
          the page, wait for its level, run `echo hi` and see "hi", stop
          it, and save OUT (a PNG) of the page with the fence running
  escape  what the page shows from the daemon is text: a key, output
          and violations holding <img src=x onerror=...>
  cors    URL is a test page (regress/page_cors.html) served from an
          origin the daemon allows; it calls the API with TOKEN: lists,
          boots, streams output, puts and gets a file, stops
  foreign URL is the same test page served from an origin the daemon
          does not allow: none of its calls may be read
  legend  the legend of levels and verdicts opened and read, the stopped
          fence "old" folded, the runsc fence "gv" showing the boot
          steps its backend does not time as "not measured", and times
          as YYYY-MM-DD HH:MM:SS (the test booted both beforehand)

Chromium runs headless with a profile in WORKDIR, with a proxy on a
closed loopback port and a resolver that knows no name, so nothing it
tries goes off the machine.  Prints what it did; exits 0 when the case
passed, 1 with the reason when it failed, 77 when it cannot run.
"""
import base64
import json
import os
import re
import sys
import time

try:
    from selenium import webdriver
    from selenium.common.exceptions import TimeoutException, WebDriverException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError as e:
    print("page.py: no selenium (python3-selenium): %s" % e)
    sys.exit(77)

WAIT = 40       # seconds, for any one thing the page should come to show


class Failed(Exception):
    pass


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
              "--proxy-server=http://127.0.0.1:9",
              "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"):
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


def say(*a):
    print(*a)
    sys.stdout.flush()


def card(d, key):
    for c in d.find_elements(By.CSS_SELECTOR, "#envs .env"):
        if c.get_attribute("data-key") == key:
            return c
    return None


def text_of(c, sel):
    e = c.find_elements(By.CSS_SELECTOR, sel)
    return e[0].text if e else ""


def login(d, url, token):
    d.get(url)
    wait(d, "the token form", lambda: d.find_element(By.ID, "login")
         .is_displayed())
    # No API call before a token: the page only asks for one.
    d.find_element(By.ID, "token").send_keys(token)
    d.find_element(By.CSS_SELECTOR, "#token-form button").click()
    wait(d, "the environments view", lambda: d.find_element(By.ID, "app")
         .is_displayed())
    if d.execute_script("return sessionStorage.getItem('fenced.token')") \
            != token:
        raise Failed("the token is not kept in sessionStorage")
    say("token taken")


def boot(d, key, tier="L1.5"):
    k = d.find_element(By.ID, "boot-key")
    k.clear()
    k.send_keys(key)
    d.find_element(By.CSS_SELECTOR,
                   "#boot-tier option[value='']").click()
    for o in d.find_elements(By.CSS_SELECTOR, "#boot-tier option"):
        if o.text == tier:
            o.click()
    d.find_element(By.ID, "boot").click()


def run(d, c, command):
    i = c.find_element(By.CSS_SELECTOR, ".exec-command")
    i.clear()
    i.send_keys(command)
    c.find_element(By.CSS_SELECTOR, ".exec-run").click()


def no_html(d, where):
    """Nothing the daemon said became an element: the page has no img."""
    n = d.execute_script("return document.querySelectorAll("
                         "'img, script:not([src]), [onerror]').length")
    if n != 0:
        raise Failed("%s: %d element(s) made from the daemon's text" %
                     (where, n))
    if d.execute_script("return window.__pwned === undefined") is not True:
        raise Failed(where + ": a script of the daemon's text ran")


def full_shot(d, path):
    """A PNG of the whole page, beyond the window's height too."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    r = d.execute_cdp_cmd("Page.captureScreenshot",
                          {"format": "png", "captureBeyondViewport": True})
    with open(path, "wb") as f:
        f.write(base64.b64decode(r["data"]))
    say("screenshot " + path)


def console_errors(d):
    try:
        # Script errors; an answer of 4xx is the page's to show.
        return [e["message"] for e in d.get_log("browser")
                if e.get("level") == "SEVERE" and
                "Failed to load resource" not in e["message"]]
    except WebDriverException:
        return []


def case_status(d, url, token, out):
    login(d, url, token)
    boot(d, "web")
    wait(d, "the card of web", lambda: card(d, "web") is not None)
    c = card(d, "web")
    wait(d, "web running", lambda: text_of(c, ".state") == "running")
    say("booted web through the page")
    wait(d, "the level of web", lambda: text_of(c, ".level")
         not in ("", "unmeasured"))
    level = text_of(c, ".level")
    say("level " + level)
    if level != "L1.5":
        raise Failed("level %r, expected L1.5" % level)
    wait(d, "the axes", lambda: len(c.find_elements(
        By.CSS_SELECTOR, ".axes tbody tr")) >= 5)
    verdicts = {r.find_element(By.TAG_NAME, "th").text:
                r.find_element(By.CSS_SELECTOR, ".verdict").text
                for r in c.find_elements(By.CSS_SELECTOR, ".axes tbody tr")}
    say("axes " + json.dumps(verdicts, sort_keys=True))
    if verdicts.get("filesystem") != "fenced" or \
            verdicts.get("privileges") != "fenced":
        raise Failed("verdicts %r" % verdicts)
    if "agent ready" not in text_of(c, ".timings"):
        raise Failed("no boot timings: %r" % text_of(c, ".timings"))
    if "left" not in text_of(c, ".deadline"):
        raise Failed("no deadline left: %r" % text_of(c, ".deadline"))
    run(d, c, "echo hi")
    wait(d, "hi in the output", lambda: text_of(c, ".output") == "hi")
    wait(d, "the exit status", lambda: text_of(c, ".exec-status")
         .startswith("exit 0"))
    say("output " + json.dumps(text_of(c, ".output")) + ", " +
        text_of(c, ".exec-status"))
    # Output as it comes: a line, then a pause, then the last line.
    run(d, c, "echo one; sleep 2; echo two")
    wait(d, "the first line alone", lambda: text_of(c, ".output") == "one"
         or "two" in text_of(c, ".output"))
    streamed = text_of(c, ".output") == "one"
    wait(d, "both lines", lambda: text_of(c, ".output") == "one\ntwo")
    say("streamed" if streamed else "not streamed (whole at the end)")
    if os.environ.get("PAGE_STREAM") == "1" and not streamed:
        raise Failed("the output came only at the end")
    # What a command was refused, under its output (docs/denials.md).
    run(d, c, "unshare -U true; unshare -U true; echo after")
    want = "denied: seccomp: unshare(CLONE_NEWUSER) x2 - tier L1 does " \
        "not refuse it"
    wait(d, "its denial under its output", lambda: want in
         text_of(c, ".output").splitlines())
    say("denials " + json.dumps([x for x in text_of(c, ".output")
                                 .splitlines() if x.startswith("denied")]))
    full_shot(d, out.replace(".png", "-denials.png"))
    run(d, c, "echo hi")
    wait(d, "hi again", lambda: text_of(c, ".output") == "hi" and
         text_of(c, ".exec-status").startswith("exit 0"))
    full_shot(d, out)
    c.find_element(By.CSS_SELECTOR, ".stop").click()
    wait(d, "web stopped", lambda: text_of(c, ".state")
         .startswith("stopped"))
    say("stopped web: " + text_of(c, ".state"))
    errs = console_errors(d)
    if errs:
        raise Failed("console errors: %r" % errs)


HOSTILE = "<img src=x onerror=window.__pwned=1>"


def case_escape(d, url, token, out):
    login(d, url, token)
    # A key that is HTML: refused, and the refusal shows it as text.
    boot(d, HOSTILE)
    wait(d, "the refusal", lambda: d.find_element(By.ID, "boot-error")
         .text != "")
    msg = d.find_element(By.ID, "boot-error").text
    say("refusal " + json.dumps(msg))
    if HOSTILE not in msg:
        raise Failed("the key is not shown as text: %r" % msg)
    no_html(d, "the key")
    # Output that is HTML, on stdout and stderr.
    boot(d, "esc")
    wait(d, "esc running", lambda: card(d, "esc") is not None and
         text_of(card(d, "esc"), ".state") == "running")
    c = card(d, "esc")
    run(d, c, "printf '%s\\n' '" + HOSTILE + "'; printf '%s' '<b>x</b>' >&2")
    want = HOSTILE + "\n<b>x</b>"
    wait(d, "the output", lambda: text_of(c, ".output") == want)
    say("output " + json.dumps(text_of(c, ".output")))
    if c.find_elements(By.CSS_SELECTOR, ".output b, .output img"):
        raise Failed("output became HTML")
    no_html(d, "the output")
    # What a lying fence could put in the daemon's answers: every
    # string of a state, as the page receives it.
    d.execute_script("""
const h = arguments[0];
const real = window.fetch;
window.fetch = async function (input, init) {
  const res = await real(input, init);
  if (String(input) !== '/api/environments')
    return res;
  const list = await res.json();
  list.environments.push({key: h, owner: h, tier: h, backend: h,
    accel: h, state: h, reason: h, level: h, home: h, homeUsed: h,
    homeLimit: h, started: h, deadline: h, pooled: h,
    limits: {memory: h, pids: h, cpu: h},
    timings: {namespacesUs: h, agentReadyUs: 5},
    boundary: {level: h, measuredBy: h, when: h, reason: h,
      axes: {filesystem: {verdict: h, violations: [h, h], reason: h},
             [h]: {verdict: h, violations: [h], reason: h}},
      violations: [h], kernel: {release: h, version: h, bootId: h}}});
  return new Response(JSON.stringify(list),
    {status: 200, headers: {'Content-Type': 'application/json'}});
};""", HOSTILE)
    wait(d, "the hostile state", lambda: card(d, HOSTILE) is not None)
    h = card(d, HOSTILE)
    wait(d, "its violations", lambda: HOSTILE in text_of(h, ".violations"))
    shown = h.text
    say("hostile state shown as text (%d times)" % shown.count(HOSTILE))
    for sel in (".env-key", ".level", ".state", ".violations", ".kernel",
                ".boundary-note", ".facts"):
        if HOSTILE not in text_of(h, sel):
            raise Failed("%s does not show the text: %r" %
                         (sel, text_of(h, sel)))
    no_html(d, "the state")
    full_shot(d, out)


def fetch_js(d, script, *args):
    """Run an async function body in the page; its value or its error."""
    r = d.execute_async_script("""
const done = arguments[arguments.length - 1];
const args = Array.prototype.slice.call(arguments, 0, -1);
(async function () {""" + script + """})().then(
  function (v) { done({ok: true, value: v}); },
  function (e) { done({ok: false, error: String(e && e.message || e)}); });
""", *args)
    return r


CORS_JS = """
const [api, token] = args;
const H = {'x-voicebox-host-token': token};
const J = Object.assign({'Content-Type': 'application/json'}, H);
const out = {};
let r = await fetch(api + '/api/environments', {headers: H});
out.list = r.status;
r = await fetch(api + '/api/environments/cors', {method: 'POST',
  headers: J, body: JSON.stringify({tier: 'L1.5'})});
out.boot = r.status;
out.bootBody = await r.json();
r = await fetch(api + '/api/environments/cors/exec', {method: 'POST',
  headers: J, body: JSON.stringify({command: 'echo one; sleep 1; echo two',
  stream: true})});
out.exec = r.status;
out.execType = r.headers.get('Content-Type');
const reader = r.body.getReader();
const dec = new TextDecoder();
let text = '', reads = 0;
for (;;) {
  const c = await reader.read();
  if (c.done) break;
  reads++;
  text += dec.decode(c.value, {stream: true});
}
out.stream = text;
out.reads = reads;
const bytes = new Uint8Array(256);
for (let i = 0; i < 256; i++) bytes[i] = i;
r = await fetch(api + '/api/environments/cors/files/up.bin', {method: 'PUT',
  headers: Object.assign({'Content-Type': 'application/octet-stream'}, H),
  body: bytes});
out.put = r.status;
r = await fetch(api + '/api/environments/cors/files/up.bin', {headers: H});
out.get = r.status;
const back = new Uint8Array(await r.arrayBuffer());
out.same = back.length === 256 && back.every((b, i) => b === i);
r = await fetch(api + '/api/environments/cors', {method: 'DELETE',
  headers: H});
out.stop = r.status;
return out;
"""


def events(text):
    evs = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        name, data = "message", []
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip(" "))
        if data:
            evs.append((name, json.loads("\n".join(data))))
    return evs


def case_cors(d, url, token, out):
    api = os.environ["PAGE_API"]
    d.get(url)
    wait(d, "the test page", lambda: d.title == "fenced cors test")
    r = fetch_js(d, CORS_JS, api, token)
    if not r["ok"]:
        raise Failed("a call failed from the allowed origin: " + r["error"])
    o = r["value"]
    say("answers " + json.dumps({k: v for k, v in o.items()
                                 if k not in ("stream", "bootBody")}))
    for k, st in (("list", 200), ("boot", 201), ("exec", 200), ("put", None),
                  ("get", 200), ("stop", 200)):
        if st is not None and o[k] != st:
            raise Failed("%s answered %s, expected %s" % (k, o[k], st))
    if not 200 <= o["put"] < 300:
        raise Failed("put answered %s" % o["put"])
    if not (o["execType"] or "").startswith("text/event-stream"):
        raise Failed("exec is not streamed: %s" % o["execType"])
    evs = events(o["stream"])
    outs = "".join(e[1].get("data", "") for e in evs if e[0] == "stdout")
    if outs != "one\ntwo\n" or not evs or evs[-1][0] != "result" or \
            evs[-1][1].get("exitCode") != 0:
        raise Failed("stream %r" % o["stream"])
    say("streamed %d events in %d reads" % (len(evs), o["reads"]))
    if not o["same"]:
        raise Failed("the file came back different")
    say("file put and got back exactly")


FOREIGN_JS = """
const [api, token] = args;
const H = {'x-voicebox-host-token': token};
const J = Object.assign({'Content-Type': 'application/json'}, H);
const tries = [
  ['list', api + '/api/environments', {headers: H}],
  ['state', api + '/api/environments/victim', {headers: H}],
  ['boot', api + '/api/environments/foreign', {method: 'POST', headers: J,
    body: '{}'}],
  ['exec', api + '/api/environments/victim/exec', {method: 'POST',
    headers: J, body: JSON.stringify({command: 'touch $HOME/pwned'})}],
  ['put', api + '/api/environments/victim/files/pwned', {method: 'PUT',
    headers: H, body: 'x'}],
  ['stop', api + '/api/environments/victim', {method: 'DELETE', headers: H}],
  // The simple requests a page may send without a preflight.
  ['simple-boot', api + '/api/environments/foreign2', {method: 'POST',
    headers: {'Content-Type': 'text/plain'}, body: '{}'}],
  ['simple-exec', api + '/api/environments/victim/exec', {method: 'POST',
    headers: {'Content-Type': 'text/plain'},
    body: JSON.stringify({command: 'touch $HOME/pwned'})}],
];
const out = {};
for (const [name, u, init] of tries) {
  try {
    const r = await fetch(u, init);
    out[name] = 'read ' + r.status + ' ' + (await r.text()).slice(0, 80);
  } catch (e) {
    out[name] = 'failed';
  }
}
return out;
"""


def case_foreign(d, url, token, out):
    api = os.environ["PAGE_API"]
    d.get(url)
    wait(d, "the test page", lambda: d.title == "fenced cors test")
    r = fetch_js(d, FOREIGN_JS, api, token)
    if not r["ok"]:
        raise Failed("the script failed: " + r["error"])
    say("answers " + json.dumps(r["value"], sort_keys=True))
    read = {k: v for k, v in r["value"].items() if v != "failed"}
    if read:
        raise Failed("a foreign origin read answers: %r" % read)

LEGEND_LEVELS = ["L1", "L1.5", "L2", "L3", "L4", "not-earned", "unmeasured"]
LEGEND_VERDICTS = ["fenced", "passes", "shared", "separate", "allowlisted",
                   "not-fenced", "not measured"]
TIME_RE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$")


def fact(c, name):
    """The text of a card's fact, read from the DOM (shown or not)."""
    return c.parent.execute_script("""
for (const dt of arguments[0].querySelectorAll('.facts dt'))
  if (dt.textContent === arguments[1])
    return dt.nextElementSibling.textContent;
return null;""", c, name)


def case_legend(d, url, token, out):
    login(d, url, token)
    lg = d.find_element(By.ID, "legend")
    if lg.get_attribute("open") is not None:
        raise Failed("the legend is open before it is asked for")
    lg.find_element(By.TAG_NAME, "summary").click()
    wait(d, "the legend open", lambda: lg.find_element(
        By.CSS_SELECTOR, ".legend-levels dd").is_displayed())
    levels = [e.text for e in lg.find_elements(
        By.CSS_SELECTOR, ".legend-levels dt")]
    verdicts = [e.text for e in lg.find_elements(
        By.CSS_SELECTOR, ".legend-verdicts dt")]
    say("legend levels " + json.dumps(levels))
    say("legend verdicts " + json.dumps(verdicts))
    if levels != LEGEND_LEVELS:
        raise Failed("legend levels %r" % levels)
    if verdicts != LEGEND_VERDICTS:
        raise Failed("legend verdicts %r" % verdicts)
    dds = lg.find_elements(By.CSS_SELECTOR, ".legend-verdicts dd")
    passes = dds[verdicts.index("passes")].text
    if "Allowed by this tier's design" not in passes or \
            '"passed"' not in passes:
        raise Failed("passes is not explained: %r" % passes)
    runsc = lg.find_element(By.CSS_SELECTOR, ".legend-runsc").text
    say("legend runsc " + json.dumps(runsc))
    if "L3" not in runsc or "privileges" not in runsc:
        raise Failed("no word on runsc's L3: %r" % runsc)
    # The stopped fence: its card folded, its header still read.
    wait(d, "the card of old", lambda: card(d, "old") is not None)
    old = card(d, "old")
    wait(d, "old stopped", lambda: text_of(old, ".state")
         .startswith("stopped"))
    fold = old.find_element(By.CSS_SELECTOR, ".env-fold")
    if fold.get_attribute("open") is not None or \
            old.find_element(By.CSS_SELECTOR, ".env-body").is_displayed():
        raise Failed("the stopped fence is not folded")
    say("old folded: " + text_of(old, ".fold-sum"))
    fold.find_element(By.TAG_NAME, "summary").click()
    time.sleep(2.5)     # a poll later, opened by hand stays open
    if not old.find_element(By.CSS_SELECTOR, ".env-body").is_displayed():
        raise Failed("old folded again after a poll")
    started = fact(old, "started")
    say("old started " + json.dumps(started))
    # Its owner by name (root booted it), the uid beside it.
    owner = fact(old, "owner")
    say("old owner " + json.dumps(owner))
    if not (owner or "").startswith("root (uid 0)"):
        raise Failed("the owner line is not its name: %r" % owner)
    if not TIME_RE.match(started or ""):
        raise Failed("started is not YYYY-MM-DD HH:MM:SS: %r" % started)
    # The runsc fence: what its backend does not time is said so.
    wait(d, "the card of gv", lambda: card(d, "gv") is not None)
    gv = card(d, "gv")
    wait(d, "gv running", lambda: text_of(gv, ".state") == "running")
    if gv.find_element(By.CSS_SELECTOR, ".env-fold") \
            .get_attribute("open") is None:
        raise Failed("the running fence is folded")
    wait(d, "gv's timings", lambda: "agent ready" in
         text_of(gv, ".timings"))
    rows = {r.find_element(By.TAG_NAME, "th").text:
            r.find_elements(By.TAG_NAME, "td")[-1].text
            for r in gv.find_elements(By.CSS_SELECTOR, ".timings tr")}
    say("gv timings " + json.dumps(rows, sort_keys=True))
    for step in ("namespaces", "mounts", "cgroup", "seccomp"):
        if rows.get(step) != "not measured":
            raise Failed("%s of a runsc fence: %r" % (step, rows.get(step)))
    if not rows.get("agent ready", "").endswith(" ms") or \
            "0.00 ms" in rows.values():
        raise Failed("gv's timings %r" % rows)
    wait(d, "gv's level", lambda: text_of(gv, ".level")
         not in ("", "unmeasured"))
    note = text_of(gv, ".boundary-note")
    say("gv " + text_of(gv, ".level") + ": " + json.dumps(note))
    m = re.search(r"Measured (\S+ \S+)", note)
    if m is None or not TIME_RE.match(m.group(1)):
        raise Failed("the measure's time is not YYYY-MM-DD HH:MM:SS: %r" %
                     note)
    full_shot(d, out)
    errs = console_errors(d)
    if errs:
        raise Failed("console errors: %r" % errs)


CASES = {"status": case_status, "escape": case_escape, "cors": case_cors,
         "foreign": case_foreign, "legend": case_legend}


def main():
    if len(sys.argv) < 5 or sys.argv[1] not in CASES:
        print(__doc__)
        return 2
    case, url, token, work = sys.argv[1:5]
    out = sys.argv[5] if len(sys.argv) > 5 else os.path.join(work, "page.png")
    try:
        d = browser(work)
    except WebDriverException as e:
        print("page.py: cannot start chromium: %s" % str(e).strip()[:400])
        return 77
    try:
        d.set_script_timeout(WAIT)
        CASES[case](d, url, token, out)
    except Failed as e:
        print("page.py: FAILED: %s" % e)
        try:
            full_shot(d, os.path.join(work, "failed.png"))
            with open(os.path.join(work, "failed.html"), "w") as f:
                f.write(d.page_source)
        except WebDriverException:
            pass
        return 1
    finally:
        d.quit()
    say("passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
