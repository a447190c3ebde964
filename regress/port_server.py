# A server for regress/ports_test.sh to run inside a fence:
#   port_server.py http PORT    GET / says hello; POST echoes its body
#   port_server.py flood PORT   writes to every client forever
#   port_server.py sink PORT    accepts and holds, never reads (past the
#                               fence's descriptors, leaves the rest in
#                               its backlog of 512)
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Echo(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        body = b"hello from the fence\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def flood(c):
    chunk = b"x" * 65536
    try:
        while True:
            c.sendall(chunk)
    except OSError:
        pass


def main():
    mode, port = sys.argv[1], int(sys.argv[2])
    if mode == "http":
        ThreadingHTTPServer.daemon_threads = True
        ThreadingHTTPServer(("127.0.0.1", port), Echo).serve_forever()
        return
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(512)
    held = []
    while True:
        try:
            c, _ = s.accept()
        except OSError:
            # Out of descriptors (a fence allows 256): what comes
            # waits in the backlog, connected all the same.
            time.sleep(0.05)
            continue
        if mode == "flood":
            threading.Thread(target=flood, args=(c,), daemon=True).start()
        else:
            held.append(c)


main()
