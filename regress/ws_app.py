#!/usr/bin/python3
"""A small web application with a WebSocket, for inside a fence
(regress/interactive_test.sh, docs/interactive.md).  Python's standard
library only: it is put into a fence's home and run there.

    ws_app.py PORT MODEL_URL

Serves on 127.0.0.1:PORT (inside the fence):
  GET /         a page that loads /app.js (absolute paths, as a real
                application has them)
  GET /app.js   opens a WebSocket to /ws on the page's own host, sends
                "ask", and shows the answer in #answer
  GET /ws       a WebSocket: each text message is answered with the
                body of a GET of MODEL_URL (through the fence's egress
                proxy: urllib follows HTTP_PROXY), or "echo: ..." for a
                message that starts with "echo "
  GET /model    the same answer over plain HTTP
Anything else is 404.  The WebSocket framing here is a test's own
(server side of RFC 6455, text frames, masked client frames), not the
daemon's.
"""
import base64
import hashlib
import http.server
import socketserver
import struct
import sys
import urllib.request

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
MODEL = ""

PAGE = b"""<!doctype html>
<html><head><meta charset="utf-8"><title>app in a fence</title>
<script src="/app.js" defer></script></head>
<body><h1>app in a fence</h1>
<p>host <span id="host"></span></p>
<p>answer: <span id="answer">waiting</span></p>
<p>echo: <span id="echo">waiting</span></p>
</body></html>
"""

SCRIPT = b"""
document.getElementById("host").textContent = location.host;
const ws = new WebSocket("ws://" + location.host + "/ws");
ws.onopen = function () { ws.send("ask"); ws.send("echo hello"); };
ws.onmessage = function (ev) {
    const d = String(ev.data);
    if (d.indexOf("echo: ") === 0)
        document.getElementById("echo").textContent = d;
    else
        document.getElementById("answer").textContent = d;
};
ws.onerror = function () {
    document.getElementById("answer").textContent = "websocket error";
};
"""


def ask():
    try:
        with urllib.request.urlopen(MODEL, timeout=10) as r:
            return r.read().decode("utf-8", "replace").strip()
    except Exception as e:
        return "model unreachable: %s" % e


def recv_exact(f, n):
    b = f.read(n)
    if b is None or len(b) != n:
        raise EOFError
    return b


def ws_send(w, text):
    data = text.encode()
    head = bytearray([0x81])
    if len(data) < 126:
        head.append(len(data))
    elif len(data) < 65536:
        head.append(126)
        head += struct.pack("!H", len(data))
    else:
        head.append(127)
        head += struct.pack("!Q", len(data))
    w.write(bytes(head) + data)
    w.flush()


def ws_loop(r, w):
    while True:
        b0, b1 = recv_exact(r, 2)
        op = b0 & 0x0F
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack("!H", recv_exact(r, 2))[0]
        elif n == 127:
            n = struct.unpack("!Q", recv_exact(r, 8))[0]
        if n > 1 << 20:
            return
        mask = recv_exact(r, 4) if b1 & 0x80 else b"\0\0\0\0"
        data = bytes(c ^ mask[i % 4] for i, c in
                     enumerate(recv_exact(r, n)))
        if op == 0x8:
            w.write(b"\x88\x00")
            w.flush()
            return
        if op == 0x9:
            w.write(bytes([0x8A, len(data)]) + data)
            w.flush()
            continue
        if op != 0x1:
            continue
        msg = data.decode("utf-8", "replace")
        ws_send(w, "echo: " + msg[5:] if msg.startswith("echo ")
                else ask())


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *a):
        sys.stderr.write("%s %s\n" % (self.address_string(), fmt % a))

    def answer(self, code, ctype, body):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path == "/ws" and \
                self.headers.get("Upgrade", "").lower() == "websocket":
            key = self.headers.get("Sec-WebSocket-Key", "")
            acc = base64.b64encode(hashlib.sha1(
                (key + GUID).encode()).digest()).decode()
            self.send_response(101)
            self.send_header("Upgrade", "websocket")
            self.send_header("Connection", "Upgrade")
            self.send_header("Sec-WebSocket-Accept", acc)
            self.end_headers()
            self.wfile.flush()
            try:
                ws_loop(self.rfile, self.wfile)
            except (EOFError, OSError):
                pass
            self.close_connection = True
        elif path == "/":
            self.answer(200, "text/html; charset=utf-8", PAGE)
        elif path == "/app.js":
            self.answer(200, "text/javascript; charset=utf-8", SCRIPT)
        elif path == "/model":
            self.answer(200, "text/plain; charset=utf-8",
                        ask().encode() + b"\n")
        else:
            self.answer(404, "text/plain", b"not here\n")


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    global MODEL
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    MODEL = sys.argv[2]
    Server(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()


if __name__ == "__main__":
    sys.exit(main())
