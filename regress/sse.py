#!/usr/bin/env python3
#
# A client of a streamed exec (POST .../exec with "stream": true) for
# regress/stream_test.sh: reads the server-sent events as they come,
# from the socket, one chunk of the chunked reply at a time, and prints
# each as it is read:
#
#	status <http status>
#	event <name> <data, one line of JSON>
#	then <status of the --then request>
#	stdout-hex <hex of the stdout chunks, decoded, in order>
#	stderr-hex <hex of the stderr chunks>
#	same <1 if the chunks are the final event's stdout and stderr>
#
# --then BODY	after the first output event, POST BODY (a plain exec)
#		and wait for its answer before reading on
# --close	close the connection after the first output event
# --stall FILE	after the first output event read nothing until FILE
#		exists; the receive buffer is small from the start
#
# usage: sse.py [options] PORT TOKEN KEY BODY
import base64
import json
import os
import socket
import sys
import time


def request(port, token, key, body, rcvbuf=None):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect(("127.0.0.1", port))
    b = body.encode()
    s.sendall(("POST /api/environments/%s/exec HTTP/1.1\r\n"
               "Host: 127.0.0.1:%d\r\n"
               "x-voicebox-host-token: %s\r\n"
               "Content-Type: application/json\r\n"
               "Content-Length: %d\r\n"
               "Connection: close\r\n\r\n" % (key, port, token, len(b))
               ).encode() + b)
    return s


class Reader:
    def __init__(self, s):
        self.s = s
        self.buf = b""

    def more(self):
        d = self.s.recv(4096)
        if not d:
            raise EOFError
        self.buf += d

    def line(self):
        while b"\r\n" not in self.buf:
            self.more()
        l, self.buf = self.buf.split(b"\r\n", 1)
        return l

    def exact(self, n):
        while len(self.buf) < n:
            self.more()
        d, self.buf = self.buf[:n], self.buf[n:]
        return d


def head(r):
    status = int(r.line().split()[1])
    hdrs = {}
    while True:
        l = r.line()
        if not l:
            break
        k, v = l.decode().split(":", 1)
        hdrs[k.strip().lower()] = v.strip()
    return status, hdrs


def plain(port, token, key, body):
    s = request(port, token, key, body)
    r = Reader(s)
    status, hdrs = head(r)
    s.close()
    return status


def main():
    args = sys.argv[1:]
    then = close = stall = None
    while args and args[0].startswith("--"):
        o = args.pop(0)
        if o == "--then":
            then = args.pop(0)
        elif o == "--close":
            close = True
        elif o == "--stall":
            stall = args.pop(0)
    port, token, key, body = int(args[0]), args[1], args[2], args[3]
    s = request(port, token, key, body, 4096 if stall else None)
    r = Reader(s)
    status, hdrs = head(r)
    print("status", status, flush=True)
    if hdrs.get("transfer-encoding") != "chunked":
        print("body", r.buf.decode(errors="replace").strip(), flush=True)
        return
    out = {"stdout": b"", "stderr": b""}
    pending = b""
    first = True
    final = None
    while final is None:
        size = int(r.line(), 16)
        if size == 0:
            break
        pending += r.exact(size)
        r.exact(2)
        while b"\n\n" in pending:
            ev, pending = pending.split(b"\n\n", 1)
            name = data = None
            for l in ev.decode().split("\n"):
                if l.startswith("event: "):
                    name = l[7:]
                elif l.startswith("data: "):
                    data = l[6:]
            print("event", name, data, flush=True)
            d = json.loads(data)
            if name in out:
                out[name] += (base64.b64decode(d["data"])
                              if d["encoding"] == "base64"
                              else d["data"].encode())
                if first:
                    first = False
                    if close:
                        s.close()
                        return
                    if then is not None:
                        print("then", plain(port, token, key, then),
                              flush=True)
                    if stall is not None:
                        while not os.path.exists(stall):
                            time.sleep(0.05)
            else:
                final = d
    print("stdout-hex", out["stdout"].hex())
    print("stderr-hex", out["stderr"].hex())
    if final is not None and "stdout" in final:
        dec = ((lambda x: base64.b64decode(x))
               if final["encoding"] == "base64"
               else (lambda x: x.encode()))
        print("same", int(dec(final["stdout"]) == out["stdout"] and
                          dec(final["stderr"]) == out["stderr"]))


main()
