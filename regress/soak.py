#!/usr/bin/env python3
"""The soak's clients and sampler (regress/soak_test.sh, make soak).

Many clients, for a bounded time, each with a key of its own, doing
boot, exec (small output, 1 MiB of output, a timeout), probe, list and
stop in a cycle; half over the HTTP API, half over the control socket
(fencectl).  Every answer is checked against what that request must
answer; anything else is an unexpected failure.  Meanwhile the RSS,
descriptor count and CPU time of each daemon process are sampled once a
second.  At the end: samples.tsv, soak.svg (the plot), summary.txt, and
exit 1 if a request failed unexpectedly or a process grew without bound.

Standard library only; loopback only.
"""

import argparse
import http.client
import json
import os
import subprocess
import sys
import threading
import time

LARGE = 1000000                 # under the 1 MiB cap on an exec


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.ok = {}
        self.bad = []

    def total(self):
        with self.lock:
            return sum(a + b for a, b in self.ok.values())

    def count(self, op, how, fine, detail=""):
        with self.lock:
            k = (op, how)
            self.ok.setdefault(k, [0, 0])
            self.ok[k][0 if fine else 1] += 1
            if not fine and len(self.bad) < 200:
                self.bad.append("%s over %s: %s" % (op, how, detail[:300]))


class Http:
    def __init__(self, port, token):
        self.port = port
        self.token = token

    def call(self, method, path, body=None, timeout=120):
        c = http.client.HTTPConnection("127.0.0.1", self.port,
                                       timeout=timeout)
        try:
            h = {"x-voicebox-host-token": self.token,
                 "Host": "127.0.0.1:%d" % self.port}
            data = None
            if body is not None:
                data = json.dumps(body).encode()
                h["Content-Type"] = "application/json"
            c.request(method, path, body=data, headers=h)
            r = c.getresponse()
            raw = r.read()
            try:
                doc = json.loads(raw) if raw else None
            except ValueError:
                doc = None
            return r.status, doc, raw
        finally:
            c.close()


def http_cycle(api, key, tally):
    base = "/api/environments/" + key

    def check(op, fine, st, raw):
        tally.count(op, "http", fine, "status %s: %r" % (st, raw[:200]))
        return fine

    st, doc, raw = api.call("POST", base, {"tier": "L2"})
    if not check("boot", st == 201 and doc and doc.get("key") == key,
                 st, raw):
        api.call("DELETE", base)
        return
    st, doc, raw = api.call("POST", base + "/exec",
                            {"argv": ["echo", "soak"]})
    check("exec", st == 200 and doc and doc.get("stdout") == "soak\n",
          st, raw)
    st, doc, raw = api.call("POST", base + "/exec",
                            {"command": "yes abcdefgh | head -c %d" % LARGE,
                             "maxBytes": 1 << 20})
    check("exec-large", st == 200 and doc and
          len(doc.get("stdout", "")) == LARGE, st, raw)
    st, doc, raw = api.call("POST", base + "/exec",
                            {"argv": ["sleep", "30"], "timeoutMs": 300})
    check("exec-timeout", st == 504 and doc and
          doc.get("error") == "exec-timeout", st, raw)
    st, doc, raw = api.call("GET", base + "/probe?refresh=1")
    check("probe", st == 200 and doc and doc.get("level") == "L2", st, raw)
    st, doc, raw = api.call("GET", "/api/environments")
    check("list", st == 200 and key.encode() in raw, st, raw)
    st, doc, raw = api.call("DELETE", base)
    check("stop", st == 200, st, raw)


def ctl_cycle(ctl, key, tally):
    def run(args, timeout=120):
        p = subprocess.run(ctl + args, capture_output=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    def check(op, fine, rc, out, err):
        tally.count(op, "ctl", fine, "exit %d: %r %r" % (rc, out[:200],
                                                          err[:200]))
        return fine

    rc, out, err = run(["boot", key, "tier", "L2"])
    if not check("boot", rc == 0 and b"level:" in out, rc, out, err):
        run(["stop", key])
        return
    rc, out, err = run(["exec", key, "--", "echo", "soak"])
    check("exec", rc == 0 and out == b"soak\n", rc, out, err)
    rc, out, err = run(["exec", key, "output", str(1 << 20), "--", "sh",
                        "-c", "yes abcdefgh | head -c %d" % LARGE])
    check("exec-large", rc == 0 and len(out) == LARGE, rc, out, err)
    rc, out, err = run(["exec", key, "timeout", "300", "--", "sleep", "30"])
    check("exec-timeout", rc != 0 and b"exec-timeout" in err, rc, out, err)
    rc, out, err = run(["probe", key])
    check("probe", rc == 0 and b"L2" in out, rc, out, err)
    rc, out, err = run(["show", "environments"])
    check("list", rc == 0 and key.encode() in out, rc, out, err)
    rc, out, err = run(["stop", key])
    check("stop", rc == 0, rc, out, err)


def client(i, args, api, tally, deadline, cycles):
    key = "soak%d" % i
    ctl = [args.fencectl, "-s", args.socket]
    n = 0
    while time.monotonic() < deadline:
        try:
            if i % 2 == 0:
                http_cycle(api, key, tally)
            else:
                ctl_cycle(ctl, key, tally)
        except Exception as e:  # a hang or a reset is a failure too
            tally.count("cycle", "http" if i % 2 == 0 else "ctl", False,
                        repr(e))
        n += 1
    cycles[i] = n


def read_proc(pid):
    with open("/proc/%d/status" % pid) as f:
        rss = 0
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    fds = len(os.listdir("/proc/%d/fd" % pid))
    with open("/proc/%d/stat" % pid) as f:
        st = f.read()
    fields = st[st.rindex(")") + 2:].split()
    cpu = int(fields[11]) + int(fields[12])     # utime + stime
    return rss, fds, cpu


def sampler(procs, samples, stop, t0, tally):
    while not stop.is_set():
        t = time.monotonic() - t0
        n = tally.total()
        for name, pid in procs:
            try:
                samples.append((t, name) + read_proc(pid) + (n,))
            except OSError:
                samples.append((t, name, -1, -1, -1, n))
        stop.wait(1.0)


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if v else 0


def judge(procs, samples, hz, rss):
    """Growth without bound: the last quarter against the second."""
    verdicts = []
    for name, _ in procs:
        s = [x for x in samples if x[1] == name]
        if any(x[2] < 0 for x in s):
            verdicts.append((name, False, "died during the soak"))
            continue
        n = len(s)
        q2, q4 = s[n // 4:n // 2], s[3 * n // 4:]
        if len(q2) < 2 or len(q4) < 2:
            verdicts.append((name, True, "too few samples to judge"))
            continue
        r2, r4 = median([x[2] for x in q2]), median([x[2] for x in q4])
        f2, f4 = max(x[3] for x in q2), max(x[3] for x in q4)
        secs = s[-1][0] - s[0][0]
        cpu = 100.0 * (s[-1][4] - s[0][4]) / hz / secs if secs > 0 else 0
        # CPU a request, second quarter against the last: the work of
        # one request must not grow with the run.
        def per_req(q):
            dr = q[-1][5] - q[0][5]
            return 1000.0 * (q[-1][4] - q[0][4]) / hz / dr if dr > 0 else 0
        c2, c4 = per_req(q2), per_req(q4)
        fine = True
        why = []
        if rss and r4 > r2 * 1.2 + 4096:
            fine = False
            why.append("RSS grew %d -> %d kB" % (r2, r4))
        if f4 > f2 + 16:
            fine = False
            why.append("descriptors grew %d -> %d" % (f2, f4))
        if not rss:
            why.append("RSS not judged")
        if c2 > 0.5 and c4 > 2 * c2:
            fine = False
            why.append("CPU a request grew %.2f -> %.2f ms" % (c2, c4))
        verdicts.append((name, fine, "RSS %d -> %d kB (median, 2nd and "
                         "4th quarter), descriptors at most %d -> %d, CPU "
                         "%.1f%%, %.2f -> %.2f ms a request%s"
                         % (r2, r4, f2, f4, cpu, c2, c4,
                            "; " + "; ".join(why) if why else "")))
    return verdicts


def plot(procs, samples, hz, path):
    """Three panels, one line a process: RSS, descriptors, CPU."""
    colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"]
    w, h, pad = 760, 200, 50
    tmax = max((x[0] for x in samples), default=1) or 1
    panels = [("RSS (kB)", 2), ("descriptors", 3), ("CPU (% of a core)", 4),
              ("CPU a request (ms, over 10 s)", 5)]
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="11">'
           % (w + 2 * pad, len(panels) * (h + pad) + pad)]
    out.append('<rect width="100%" height="100%" fill="white"/>')
    for pi, (title, col) in enumerate(panels):
        y0 = pad + pi * (h + pad)
        series = {}
        for name, _ in procs:
            s = [x for x in samples if x[1] == name and x[col] >= 0]
            if col == 4:
                s = [(b[0], 100.0 * (b[4] - a[4]) / hz / max(b[0] - a[0],
                                                              1e-3))
                     for a, b in zip(s, s[1:])]
            elif col == 5:
                s = [(b[0], 1000.0 * (b[4] - a[4]) / hz / (b[5] - a[5]))
                     for a, b in zip(s, s[10:]) if b[5] > a[5]]
            else:
                s = [(x[0], x[col]) for x in s]
            series[name] = s
        vmax = max((v for s in series.values() for _, v in s), default=1)
        vmax = vmax * 1.1 or 1
        out.append('<text x="%d" y="%d">%s, 0 to %.0f</text>'
                   % (pad, y0 - 8, title, vmax))
        out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" '
                   'stroke="#888"/>' % (pad, y0, w, h))
        for ci, (name, s) in enumerate(series.items()):
            pts = " ".join("%.1f,%.1f" % (pad + w * t / tmax,
                                          y0 + h - h * v / vmax)
                           for t, v in s)
            c = colours[ci % len(colours)]
            out.append('<polyline fill="none" stroke="%s" points="%s"/>'
                       % (c, pts))
            out.append('<text x="%d" y="%d" fill="%s">%s</text>'
                       % (pad + w - 70, y0 + 14 + 13 * ci, c, name))
        out.append('<text x="%d" y="%d">0 s</text>' % (pad, y0 + h + 13))
        out.append('<text x="%d" y="%d">%.0f s</text>'
                   % (pad + w - 30, y0 + h + 13, tmax))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--token", required=True)
    ap.add_argument("--fencectl", required=True)
    ap.add_argument("--socket", required=True)
    ap.add_argument("--proc", action="append", default=[],
                    help="NAME=PID of a daemon process to sample")
    ap.add_argument("--seconds", type=int, default=600)
    ap.add_argument("--clients", type=int, default=6)
    ap.add_argument("--out", default=".")
    ap.add_argument("--no-rss", action="store_true",
                    help="record the RSS but do not judge it (ASan keeps "
                    "freed memory in quarantine)")
    args = ap.parse_args()
    if not 1 <= args.seconds <= 86400 or not 1 <= args.clients <= 64:
        ap.error("seconds 1..86400, clients 1..64")
    procs = []
    for p in args.proc:
        name, _, pid = p.partition("=")
        procs.append((name, int(pid)))
    hz = os.sysconf("SC_CLK_TCK")

    api = Http(args.port, args.token)
    tally = Tally()
    samples = []
    stop = threading.Event()
    t0 = time.monotonic()
    deadline = t0 + args.seconds
    cycles = {}
    st = threading.Thread(target=sampler, args=(procs, samples, stop, t0,
                                                tally))
    st.start()
    threads = [threading.Thread(target=client, args=(i, args, api, tally,
                                                     deadline, cycles))
               for i in range(args.clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    st.join()
    took = time.monotonic() - t0

    with open(os.path.join(args.out, "samples.tsv"), "w") as f:
        f.write("seconds\tprocess\trss_kb\tfds\tcpu_ticks\trequests\n")
        for x in samples:
            f.write("%.1f\t%s\t%d\t%d\t%d\t%d\n" % x)
    plot(procs, samples, hz, os.path.join(args.out, "soak.svg"))
    verdicts = judge(procs, samples, hz, not args.no_rss)

    total = sum(a + b for a, b in tally.ok.values())
    bad = sum(b for _, b in tally.ok.values())
    lines = ["soak: %.0f s, %d clients, %d cycles, %d requests, %d "
             "unexpected" % (took, args.clients, sum(cycles.values()),
                             total, bad)]
    for (op, how), (a, b) in sorted(tally.ok.items()):
        lines.append("  %-12s %-4s %6d ok %4d unexpected" % (op, how, a, b))
    for name, fine, what in verdicts:
        lines.append("  %-7s %s: %s" % (name, "ok" if fine else "GROWS",
                                        what))
    for b in tally.bad[:20]:
        lines.append("  unexpected: " + b)
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "summary.txt"), "w") as f:
        f.write(text)
    sys.stdout.write(text)
    if bad or not all(v[1] for v in verdicts) or total == 0:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
