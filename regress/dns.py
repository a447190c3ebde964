#!/usr/bin/env python3
"""A resolver of the test's own on 127.0.0.1 (regress/proxy_test.sh).

Usage: dns.py PORT LOG NAME=ANSWER ...

ANSWER is IPv4 and IPv6 addresses separated by commas (an A record for
each IPv4 one, an AAAA record for each IPv6 one, in order; a question
for a type with none gets no record), "nx" (NXDOMAIN) or "silent"
(never answered).  Any other name is
NXDOMAIN.  Every question is appended to LOG as "NAME TYPE", so a test
can show which names the proxy asked for and which it never did.
"""

import socket
import struct
import sys


def qname(pkt, off):
    labels = []
    while True:
        n = pkt[off]
        off += 1
        if n == 0:
            return ".".join(labels).lower(), off
        labels.append(pkt[off:off + n].decode("ascii", "replace"))
        off += n


def main():
    port = int(sys.argv[1])
    log = sys.argv[2]
    table = {}
    for arg in sys.argv[3:]:
        name, answer = arg.split("=", 1)
        table[name.lower()] = answer
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", port))
    while True:
        pkt, peer = s.recvfrom(4096)
        if len(pkt) < 17:
            continue
        qid, flags, qd = struct.unpack(">HHH", pkt[:6])
        try:
            name, off = qname(pkt, 12)
        except IndexError:
            continue
        qtype, qclass = struct.unpack(">HH", pkt[off:off + 4])
        question = pkt[12:off + 4]
        with open(log, "a") as f:
            f.write("%s %d\n" % (name, qtype))
        answer = table.get(name, "nx")
        if answer == "silent":
            continue
        rcode = 3 if answer == "nx" else 0
        records = b""
        count = 0
        for addr in answer.split(",") if rcode == 0 else []:
            if qtype == 1 and ":" not in addr:
                records += (b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 30, 4) +
                            socket.inet_aton(addr))
                count += 1
            elif qtype == 28 and ":" in addr:
                records += (b"\xc0\x0c" +
                            struct.pack(">HHIH", 28, 1, 30, 16) +
                            socket.inet_pton(socket.AF_INET6, addr))
                count += 1
        head = struct.pack(">HHHHHH", qid, 0x8180 | rcode, 1, count, 0, 0)
        s.sendto(head + question + records, peer)


if __name__ == "__main__":
    main()
