#! /usr/bin/python3
# A small HTTP + WebSocket server for inside a fence (relay_test.sh),
# python3's standard library only.  t_webapp.py PORT [ADDRESS]
#   GET  /...        200: the request line and headers it got, as text
#   POST|PUT /echo   200: the body it got, exactly (Content-Length or
#                    chunked)
#   POST|PUT /sum    200: the body's length and SHA-256
#   GET  /ws         a WebSocket that answers each text message with
#                    "echo:" and the message
#   GET  /flood      200: 64 MiB of "x", for a client that never reads
import base64
import hashlib
import http.server
import socketserver
import struct
import sys

WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def head_text(self):
        return (self.requestline + "\n" + str(self.headers)).encode()

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length", 0)))

    def answer(self, data, ctype="text/plain"):
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/ws":
            return self.websocket()
        if self.path == "/flood":
            n = 64 << 20
            self.send_response(200)
            self.send_header("Content-Length", str(n))
            self.end_headers()
            chunk = b"x" * 65536
            for _ in range(n // len(chunk)):
                self.wfile.write(chunk)
            return
        self.answer(self.head_text())

    def do_POST(self):
        data = self.body()
        if self.path == "/sum":
            return self.answer(("%d %s" % (len(data),
                hashlib.sha256(data).hexdigest())).encode())
        if self.path == "/echo":
            return self.answer(data, "application/octet-stream")
        self.answer(self.head_text())

    do_PUT = do_POST

    def websocket(self):
        key = self.headers.get("Sec-WebSocket-Key", "")
        accept = base64.b64encode(hashlib.sha1(
            (key + WS_GUID).encode()).digest()).decode()
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept)
        self.end_headers()
        self.wfile.flush()
        while True:
            hdr = self.rfile.read(2)
            if len(hdr) < 2:
                return
            op, n = hdr[0] & 0x0f, hdr[1] & 0x7f
            if n == 126:
                n = struct.unpack(">H", self.rfile.read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self.rfile.read(8))[0]
            mask = self.rfile.read(4) if hdr[1] & 0x80 else b"\0\0\0\0"
            data = bytes(b ^ mask[i % 4] for i, b in
                         enumerate(self.rfile.read(n)))
            if op == 8:
                self.wfile.write(b"\x88\x00")
                return
            if op == 1:
                out = b"echo:" + data
                if len(out) < 126:
                    self.wfile.write(bytes([0x81, len(out)]) + out)
                else:
                    self.wfile.write(bytes([0x81, 126]) +
                                     struct.pack(">H", len(out)) + out)
                self.wfile.flush()


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


if __name__ == "__main__":
    addr = sys.argv[2] if len(sys.argv) > 2 else "127.0.0.1"
    Server((addr, int(sys.argv[1])), Handler).serve_forever()
