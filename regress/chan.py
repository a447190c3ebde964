#!/usr/bin/env python3
# A client of fenced's WebSockets for channel_test (docs/interactive.md,
# "/api/channel"): frames written and read on a plain socket, so that
# the hostile cases (oversized, unmasked, fragmented, invalid) can be
# sent as they are; the well-behaved cases also go through python3's
# websocket-client (`wsclient') to show a library made for it agrees.
#
#	chan.py CASE PORT [ARGS...]
#
# Prints one line per fact the test checks; exits 0 unless the
# connection itself failed in a way the case does not expect.
import base64
import hashlib
import json
import os
import select
import socket
import struct
import sys
import threading
import time
import urllib.request

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class Closed(Exception):
    def __init__(self, code, reason):
        Exception.__init__(self, "closed %s %s" % (code, reason))
        self.code = code
        self.reason = reason


class WS:
    """One client connection, frames by hand."""

    def __init__(self, port, path="/api/channel", origin=None, headers=(),
                 host=None, timeout=20):
        self.s = socket.create_connection(("127.0.0.1", port), timeout)
        self.s.settimeout(timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        lines = ["GET %s HTTP/1.1" % path,
                 "Host: %s" % (host or "127.0.0.1:%d" % port),
                 "Upgrade: websocket", "Connection: Upgrade",
                 "Sec-WebSocket-Key: " + key,
                 "Sec-WebSocket-Version: 13"]
        if origin is not None:
            lines.append("Origin: " + origin)
        lines.extend(headers)
        self.s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            d = self.s.recv(4096)
            if not d:
                break
            self.buf += d
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        self.head = head.decode("latin-1")
        self.status = int(self.head.split(" ")[1]) if self.head else 0
        if self.status == 101:
            want = base64.b64encode(hashlib.sha1(key.encode() + GUID)
                                    .digest()).decode()
            if ("sec-websocket-accept: " + want).lower() not in \
                    self.head.lower():
                raise Exception("bad accept key: " + self.head)
        else:
            # The refusal's body, read to its end.
            self.s.settimeout(5)
            try:
                while True:
                    d = self.s.recv(4096)
                    if not d:
                        break
                    self.buf += d
            except OSError:
                pass
            self.body = self.buf.decode("latin-1")

    def frame(self, op, payload, fin=True, mask=True, rsv=0):
        b0 = (0x80 if fin else 0) | rsv << 4 | op
        n = len(payload)
        m = 0x80 if mask else 0
        if n < 126:
            h = bytes([b0, m | n])
        elif n < 65536:
            h = bytes([b0, m | 126]) + struct.pack(">H", n)
        else:
            h = bytes([b0, m | 127]) + struct.pack(">Q", n)
        if mask:
            k = os.urandom(4)
            payload = bytes(c ^ k[i % 4] for i, c in enumerate(payload)) \
                if n < 4096 else self._mask(payload, k)
            h += k
        return h + payload

    @staticmethod
    def _mask(p, k):
        kk = (k * (len(p) // 4 + 1))[:len(p)]
        return (int.from_bytes(p, "big") ^ int.from_bytes(kk, "big")) \
            .to_bytes(len(p), "big")

    def send_raw(self, data):
        self.s.sendall(data)

    def send(self, obj):
        self.send_raw(self.frame(1, json.dumps(obj).encode()))

    def send_bin(self, data):
        self.send_raw(self.frame(2, data))

    def _need(self, n):
        while len(self.buf) < n:
            d = self.s.recv(65536)
            if not d:
                raise Closed(1006, "eof")
            self.buf += d

    def recv(self):
        """(opcode, payload) of the next whole message; pings answered."""
        msg, mop = b"", None
        while True:
            self._need(2)
            b0, b1 = self.buf[0], self.buf[1]
            if b1 & 0x80:
                raise Exception("a masked frame from the server")
            n, off = b1 & 0x7f, 2
            if n == 126:
                self._need(4)
                n, off = struct.unpack(">H", self.buf[2:4])[0], 4
            elif n == 127:
                self._need(10)
                n, off = struct.unpack(">Q", self.buf[2:10])[0], 10
            self._need(off + n)
            p, self.buf = self.buf[off:off + n], self.buf[off + n:]
            op = b0 & 0x0f
            if op == 8:
                code = struct.unpack(">H", p[:2])[0] if len(p) >= 2 else 1005
                try:
                    self.send_raw(self.frame(8, p[:2]))
                except OSError:
                    pass
                raise Closed(code, p[2:].decode("utf-8", "replace"))
            if op == 9:
                self.send_raw(self.frame(10, p))
                continue
            if op == 10:
                continue
            if mop is None:
                mop = op
            msg += p
            if b0 & 0x80:
                return mop, msg

    def json(self):
        while True:
            op, p = self.recv()
            if op == 1:
                return json.loads(p)

    def close(self):
        try:
            self.send_raw(self.frame(8, struct.pack(">H", 1000)))
        except OSError:
            pass
        self.s.close()


def channel(port, token, origin=None):
    c = WS(port, origin=origin or "http://127.0.0.1:%d" % port)
    if c.status != 101:
        raise Exception("channel refused: " + c.head)
    c.send({"op": "auth", "token": token})
    m = c.json()
    if m.get("op") != "ready":
        raise Exception("auth: %r" % m)
    return c


def close_code(c):
    try:
        while True:
            c.recv()
    except Closed as e:
        return e.code
    except OSError:
        return "reset"


def exec_collect(c, stream, ack=True):
    """Events of one exec stream until its result or error."""
    out = ""
    while True:
        op, p = c.recv()
        if op != 1:
            continue
        m = json.loads(p)
        if m.get("stream") != stream:
            continue
        if m["op"] in ("stdout", "stderr"):
            d = m["data"]
            if m["encoding"] == "base64":
                d = base64.b64decode(d).decode("latin-1")
            out += d
            if ack:
                c.send({"op": "ack", "stream": stream,
                        "bytes": len(d.encode("latin-1")
                                     if m["encoding"] == "base64"
                                     else d.encode())})
        elif m["op"] in ("result", "error"):
            return out, m


def case_exec(port, token, key, cmd):
    c = channel(port, token)
    c.send({"op": "exec", "stream": 7, "key": key,
            "body": {"command": cmd}})
    out, m = exec_collect(c, 7)
    print("output " + json.dumps(out))
    print("end " + m["op"] + " " + str(m.get("exitCode", m.get("error"))))
    c.close()


def case_wsclient(port, token, key):
    """The same exec through python3-websocket (websocket-client)."""
    import websocket
    ws = websocket.create_connection("ws://127.0.0.1:%d/api/channel" % port,
                                     origin="http://127.0.0.1:%d" % port)
    ws.send(json.dumps({"op": "auth", "token": token}))
    print("auth " + json.loads(ws.recv())["op"])
    ws.send(json.dumps({"op": "exec", "stream": 1, "key": key,
                        "body": {"argv": ["echo", "library"]}}))
    while True:
        m = json.loads(ws.recv())
        if m["op"] == "stdout":
            print("stdout " + json.dumps(m["data"]))
        if m["op"] in ("result", "error"):
            print("end " + m["op"])
            break
    ws.close()


def case_watch(port, token, key, ctl):
    """Watch key from before its boot (ctl boots it, then stops it once
    measured): the states, the level decided and why it stopped."""
    c = channel(port, token)
    c.send({"op": "watch", "stream": 3, "key": key})
    seen, level = [], None
    stopped = False
    deadline = time.time() + 90
    while time.time() < deadline:
        m = c.json()
        if m.get("stream") != 3:
            continue
        if m["op"] == "watching":
            print("watching")
            os.system(ctl + " boot " + key + " > /dev/null &")
            continue
        if m["op"] != "state":
            print("unexpected " + json.dumps(m))
            break
        env = m.get("environment", {})
        st = env.get("state", "gone" if m.get("gone") else "?")
        if not seen or seen[-1] != st:
            seen.append(st)
            print("state " + st)
        lv = env.get("level")
        if lv and lv != "unmeasured" and lv != level:
            level = lv
            print("level decided")
        if st == "running" and level and not stopped:
            os.system(ctl + " stop " + key + " > /dev/null")
            stopped = True
        if st == "stopped":
            print("why " + str(env.get("reason")))
            break
    c.close()


def case_streams(port, token, key, n):
    """n streams at once, each printing for a while, unacknowledged
    beyond its window; meanwhile plain requests on other connections:
    how long each took."""
    c = channel(port, token)
    for i in range(1, n + 1):
        c.send({"op": "exec", "stream": i, "key": key,
                "body": {"command": "i=0; while [ $i -lt 40 ]; do "
                         "echo s%d-$i; i=$((i+1)); sleep 0.1; done" % i}})
    done = set()
    lat = []
    got = {}

    def requests():
        for _ in range(10):
            t0 = time.time()
            r = urllib.request.Request(
                "http://127.0.0.1:%d/api/environments/%s" % (port, key),
                headers={"x-voicebox-host-token": token})
            with urllib.request.urlopen(r, timeout=10) as a:
                a.read()
            lat.append(time.time() - t0)
            time.sleep(0.2)
    t = threading.Thread(target=requests)
    t.start()
    deadline = time.time() + 120
    while len(done) < n and time.time() < deadline:
        m = c.json()
        s = m.get("stream")
        if m["op"] == "stdout":
            got[s] = got.get(s, 0) + m["data"].count("\n")
            c.send({"op": "ack", "stream": s,
                    "bytes": len(m["data"].encode())})
        elif m["op"] in ("result", "error"):
            done.add(s)
    t.join()
    print("streams %d lines %d" % (len(done), sum(got.values())))
    print("requests %d answered, slowest %.3f s" % (len(lat), max(lat)))
    c.close()


def rss_kb(pid):
    with open("/proc/%s/status" % pid) as f:
        for l in f:
            if l.startswith("VmRSS:"):
                return int(l.split()[1])
    return 0


def case_noread(port, token, key, broker, secs, proc, term):
    """A page that asks for floods and never reads: a process writing
    for ever (output), a terminal writing for ever, two execs over
    their budget; the broker's RSS, before and after."""
    before = rss_kb(broker)
    c = channel(port, token)
    c.send({"op": "output", "stream": 1, "key": key, "id": proc})
    c.send({"op": "terminal", "stream": 2, "key": key, "id": term})
    for i in (3, 4):
        c.send({"op": "exec", "stream": i, "key": key,
                "body": {"command": "yes floodfloodflood | head -c "
                         "100000000", "maxBytes": 1048576}})
    time.sleep(float(secs))
    after = rss_kb(broker)
    print("rss before %d kB after %d kB grew %d kB" % (before, after,
                                                         after - before))
    c.s.close()


def case_hostile(port, token, what):
    c = channel(port, token)
    if what == "unmasked":
        c.send_raw(c.frame(1, b'{"op":"watch","stream":1}', mask=False))
    elif what == "oversized":
        try:
            c.send_raw(c.frame(1, b" " * (256 * 1024 + 1)))
        except OSError:
            pass
    elif what == "oversized-fragments":
        # The close may come before the last ones are sent.
        try:
            c.send_raw(c.frame(1, b" " * 60000, fin=False))
            for _ in range(4):
                c.send_raw(c.frame(0, b" " * 60000, fin=False))
            c.send_raw(c.frame(0, b" " * 60000, fin=True))
        except OSError:
            pass
    elif what == "utf8":
        c.send_raw(c.frame(1, b'{"op":"\xc0\xaf"}'))
    elif what == "opcode":
        c.send_raw(c.frame(3, b"x"))
    elif what == "rsv":
        c.send_raw(c.frame(1, b"{}", rsv=4))
    elif what == "continuation":
        c.send_raw(c.frame(0, b"x"))
    elif what == "fragmented":
        # Well-formed fragments, a ping between them: one message.
        m = json.dumps({"op": "nope", "stream": 9}).encode()
        c.send_raw(c.frame(1, m[:5], fin=False))
        c.send_raw(c.frame(9, b"p"))
        c.send_raw(c.frame(0, m[5:9], fin=False))
        c.send_raw(c.frame(0, m[9:], fin=True))
        m = c.json()
        print("answer " + m["op"] + " " + m.get("error", ""))
        c.close()
        return
    elif what == "ping":
        # Answered with a pong of the same bytes, before anything else.
        c.send_raw(c.frame(9, b"are-you-there"))
        c._need(2)
        op, n = c.buf[0] & 0x0f, c.buf[1] & 0x7f
        c._need(2 + n)
        print("pong %s %s" % (op == 10, c.buf[2:2 + n].decode()))
        c.close()
        return
    elif what == "json":
        for bad in (b"nope", b"[1]", b'{"op":1,"stream":1}',
                    b'{"op":"exec","stream":0}',
                    b'{"op":"exec","stream":2,"key":"../x","body":{}}',
                    b'{"op":"ack","stream":2,"bytes":-5}',
                    b'{"op":"terminal","stream":3,"key":"k","id":0}'):
            c.send_raw(c.frame(1, bad))
            m = c.json()
            print("error " + m.get("error", "?"))
        c.send_bin(b"\x00\x00")
        print("error " + c.json().get("error", "?"))
        c.send_bin(b"\x00\x00\x00\x63abc")
        print("error " + c.json().get("error", "?"))
        c.close()
        return
    print("close %s" % close_code(c))


def case_noauth(port, what):
    c = WS(port, origin="http://127.0.0.1:%d" % port)
    print("status %d" % c.status)
    t0 = time.time()
    if what == "wrong":
        c.send({"op": "watch", "stream": 1})
    elif what == "badtoken":
        c.send({"op": "auth", "token": "f" * 64})
    code = close_code(c)
    print("close %s" % code)
    if what == "silent":
        print("after %d s" % round(time.time() - t0))


def case_handshake(port, what, token):
    origin = "http://127.0.0.1:%d" % port
    headers = []
    host = None
    path = "/api/channel"
    if what == "foreign-origin":
        origin = "http://evil.example"
    elif what == "no-origin":
        origin = None
    elif what == "rebind":
        host = "evil.example:%d" % port
    elif what == "attach-no-token":
        path = "/api/environments/%s/terminals/1/attach" % token
        origin = None
    elif what == "attach-forged-ticket":
        path = "/api/environments/%s/terminals/1/attach?ticket=%s" % (
            token, "ab" * 32)
        origin = None
    c = WS(port, path=path, origin=origin, host=host, headers=headers)
    err = ""
    if c.status != 101:
        try:
            err = json.loads(c.body[c.body.index("{"):]).get("error", "")
        except ValueError:
            err = "?"
    print("status %d %s" % (c.status, err))


def read_until(c, stream, text, deadline=30):
    """Terminal bytes of stream until text appears; all of them."""
    got = b""
    end = time.time() + deadline
    while text.encode() not in got and time.time() < end:
        op, p = c.recv()
        if op == 2:
            sid = struct.unpack(">I", p[:4])[0] if stream else None
            if stream is None:
                got += p
            elif sid == stream:
                got += p[4:]
                c.send({"op": "ack", "stream": stream, "bytes": len(p) - 4})
    return got


def case_terminal(port, token, key, tid):
    """Over the channel: type, resize, close, re-attach and replay."""
    c = channel(port, token)
    c.send({"op": "terminal", "stream": 5, "key": key, "id": int(tid),
            "replay": 0})
    m = c.json()
    print("terminal " + m["op"])
    c.send_bin(struct.pack(">I", 5) + b"echo hel''lo-term\n")
    out = read_until(c, 5, "hello-term")
    print("typed " + ("hello-term" in out.decode("latin-1") and "seen" or
                      "missing"))
    c.send({"op": "resize", "stream": 5, "cols": 101, "rows": 37})
    while True:
        m = c.json()
        if m.get("op") in ("resized", "error"):
            print("resize " + m["op"])
            break
    c.send_bin(struct.pack(">I", 5) + b"stty size\n")
    out = read_until(c, 5, "37 101")
    print("stty " + ("37 101" in out.decode("latin-1") and "37 101" or
                     repr(out[-80:])))
    c.send({"op": "close", "stream": 5})
    c.close()
    # Again, the last 4 KiB replayed: what was typed is there.
    c = channel(port, token)
    c.send({"op": "terminal", "stream": 6, "key": key, "id": int(tid),
            "replay": 4096})
    out = read_until(c, 6, "hello-term", 20)
    print("replay " + ("hello-term" in out.decode("latin-1") and "seen" or
                       "missing"))
    c.close()


def case_attach(port, token, key, tid, ticket):
    """The terminal's own WebSocket, by token header, by the token as
    Authorization: Bearer (ticket "bearer") or by ticket."""
    path = "/api/environments/%s/terminals/%s/attach?replay=0" % (key, tid)
    headers = []
    origin = None
    if ticket == "bearer":
        headers = ["Authorization: Bearer " + token]
    elif ticket != "-":
        path += "&ticket=" + ticket
        origin = "http://127.0.0.1:%d" % port
    else:
        headers = ["x-voicebox-host-token: " + token]
    c = WS(port, path=path, origin=origin, headers=headers)
    print("status %d" % c.status)
    if c.status != 101:
        print(c.body)
        return
    c.send_raw(c.frame(1, b'{"resize":[77,22]}'))
    c.send_bin(b"stty size; echo at''tached\n")
    out = read_until(c, None, "attached")
    print("attach " + ("22 77" in out.decode("latin-1") and "22 77" or
                       repr(out[-80:])))
    c.close()


def case_output(port, token, key, pid):
    """A process's live output over the channel, its stdin by input."""
    c = channel(port, token)
    c.send({"op": "output", "stream": 4, "key": key, "id": int(pid)})
    print("output " + c.json()["op"])
    c.send({"op": "input", "stream": 5, "key": key, "id": int(pid),
            "data": "line-one\n"})
    got = b""
    while b"line-one" not in got:
        op, p = c.recv()
        if op == 1:
            m = json.loads(p)
            if m.get("stream") == 5:
                print(m["op"])
        elif struct.unpack(">I", p[:4])[0] == 4:
            got += p[4:]
            c.send({"op": "ack", "stream": 4, "bytes": len(p) - 4})
    print("live " + got.decode().strip())
    c.send({"op": "input", "stream": 6, "key": key, "id": int(pid),
            "close": True})
    while True:
        m = c.json()
        if m.get("stream") == 6:
            print(m["op"])
        if m.get("stream") == 4 and m["op"] == "end":
            print("end")
            break
    c.close()


def case_foreign(port, token, key):
    """Another user's token against key, a fence not theirs."""
    c = channel(port, token)
    c.send({"op": "watch", "stream": 1})
    c.send({"op": "watch", "stream": 2, "key": key})
    c.send({"op": "exec", "stream": 3, "key": key,
            "body": {"command": "id"}})
    c.send({"op": "terminal", "stream": 4, "key": key, "id": "1"})
    c.send({"op": "output", "stream": 5, "key": key, "id": "1"})
    c.send({"op": "input", "stream": 6, "key": key, "id": "1",
            "data": "x"})
    c.send({"op": "resize", "stream": 4, "cols": 10, "rows": 10})
    c.s.settimeout(3)
    seen = []
    try:
        while True:
            m = c.json()
            seen.append("%s %s %s" % (m.get("stream"), m["op"],
                                      m.get("error", m.get("gone", ""))))
    except (socket.timeout, TimeoutError):
        pass
    for l in sorted(seen):
        print(l)
    c.close()
    a = WS(port, path="/api/environments/%s/terminals/1/attach" % key,
           headers=["x-voicebox-host-token: " + token])
    print("attach %d close %s" % (a.status, close_code(a)))


def case_streams_max(port, token):
    """33 streams on one channel: the 33rd refused, a closed one's
    place taken again."""
    c = channel(port, token)
    for i in range(1, 34):
        c.send({"op": "watch", "stream": i, "key": "nosuch"})
    while True:
        m = c.json()
        if m["op"] == "error":
            print("stream %d error %s" % (m["stream"], m["error"]))
            break
    c.send({"op": "close", "stream": 1})
    c.send({"op": "watch", "stream": 34, "key": "nosuch"})
    c.send({"op": "watch", "stream": 34, "key": "nosuch"})
    while True:
        m = c.json()
        if m.get("stream") == 34 and m["op"] in ("watching", "error"):
            print("stream 34 %s %s" % (m["op"], m.get("error", "")))
            if m["op"] == "error":
                break
    c.close()


def case_many(port, token, n):
    """Channels of one user until one is refused: which, and how."""
    held = []
    for i in range(1, int(n) + 1):
        c = WS(port, origin="http://127.0.0.1:%d" % port)
        if c.status != 101:
            print("channel %d status %d" % (i, c.status))
            break
        c.send({"op": "auth", "token": token})
        try:
            m = c.json()
        except Closed as e:
            print("channel %d close %s" % (i, e.code))
            break
        if m.get("op") != "ready":
            print("channel %d %s %s close %s" % (i, m.get("op"),
                                                 m.get("error"),
                                                 close_code(c)))
            break
        held.append(c)
    print("held %d" % len(held))
    for c in held:
        c.close()


def main():
    case, port = sys.argv[1], int(sys.argv[2])
    a = sys.argv[3:]
    if case == "exec":
        case_exec(port, a[0], a[1], a[2])
    elif case == "wsclient":
        case_wsclient(port, a[0], a[1])
    elif case == "watch":
        case_watch(port, a[0], a[1], a[2])
    elif case == "streams":
        case_streams(port, a[0], a[1], int(a[2]))
    elif case == "noread":
        case_noread(port, a[0], a[1], a[2], a[3], a[4], a[5])
    elif case == "hostile":
        case_hostile(port, a[0], a[1])
    elif case == "noauth":
        case_noauth(port, a[0])
    elif case == "handshake":
        case_handshake(port, a[0], a[1] if len(a) > 1 else "")
    elif case == "terminal":
        case_terminal(port, a[0], a[1], a[2])
    elif case == "streams-max":
        case_streams_max(port, a[0])
    elif case == "many":
        case_many(port, a[0], a[1])
    elif case == "foreign":
        case_foreign(port, a[0], a[1])
    elif case == "output":
        case_output(port, a[0], a[1], a[2])
    elif case == "attach":
        case_attach(port, a[0], a[1], a[2], a[3])
    else:
        sys.exit("chan.py: no case " + case)


if __name__ == "__main__":
    main()
