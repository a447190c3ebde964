#! /usr/bin/env python3
# audit_check.py FILE EXPECT.json: every line of the audit log FILE is
# one JSON object, ASCII, no control byte but its final newline, and
# the lines are exactly EXPECT's, in order: each expected object's
# fields present with those values (a line may have more fields).
import json
import sys

raw = open(sys.argv[1], 'rb').read()
want = json.load(open(sys.argv[2]))
if not raw.endswith(b'\n'):
    sys.exit('the file does not end with a newline')
for i, b in enumerate(raw):
    if b > 0x7e or (b < 0x20 and b != 0x0a):
        sys.exit('byte %#x at offset %d' % (b, i))
lines = raw.split(b'\n')[:-1]
if len(lines) != len(want):
    sys.exit('%d lines, %d expected:\n%s' % (len(lines), len(want),
             raw.decode()))
for n, (line, w) in enumerate(zip(lines, want), 1):
    got = json.loads(line)
    if not isinstance(got, dict):
        sys.exit('line %d is not an object' % n)
    if not line.startswith(b'{"time":"'):
        sys.exit('line %d does not begin with its time' % n)
    for k, v in w.items():
        if got.get(k) != v:
            sys.exit('line %d: %s is %r, expected %r\n%s' %
                     (n, k, got.get(k), v, line.decode()))
