# A flood of PUTs of files for http_abuse_test:put_flood.
#
#	python3 put_flood.py PORT CONNS LENGTH PATH [TOKEN]
#
# Opens CONNS connections to 127.0.0.1:PORT at once and on each sends a
# PUT of PATH with Content-Length LENGTH (and the token, if given) and
# all of its body but the last byte, so that a server that reads bodies
# holds them all; then holds every connection 2 s and prints
# "sent BYTES answered N": the body bytes the server took, and how many
# connections had an answer (a refusal) by then.  Loopback only.
import socket
import sys
import threading
import time

port, conns, length, path = (int(sys.argv[1]), int(sys.argv[2]),
                             int(sys.argv[3]), sys.argv[4])
token = sys.argv[5] if len(sys.argv) > 5 else None
head = "PUT %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % (path, port)
if token:
    head += "x-voicebox-host-token: %s\r\n" % token
head += "Content-Length: %d\r\n\r\n" % length
piece = b"x" * 65536
socks = []
sent = [0] * conns
lock = threading.Lock()


def flood(i, s):
    left = length - 1
    try:
        s.sendall(head.encode())
        while left > 0:
            n = s.send(piece[:min(left, len(piece))])
            left -= n
            with lock:
                sent[i] += n
    except OSError:
        pass


threads = []
for i in range(conns):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
    except OSError:
        continue
    socks.append(s)
    t = threading.Thread(target=flood, args=(len(socks) - 1, s))
    t.start()
    threads.append(t)
for t in threads:
    t.join(30)
time.sleep(2)
answered = 0
for s in socks:
    s.setblocking(False)
    try:
        if s.recv(16):
            answered += 1
    except BlockingIOError:
        pass
    except OSError:
        answered += 1
print("sent %d answered %d" % (sum(sent), answered))
for s in socks:
    s.close()
