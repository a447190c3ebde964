#! /usr/bin/python3
# relay_ws.py URL TOKEN [bearer]: two messages through a WebSocket of
# the test server (t_webapp.py), the host token in its handshake (as
# Authorization: Bearer with "bearer"); "ws ok".
import sys
import websocket

url, tok = sys.argv[1], sys.argv[2]
name = "x-voicebox-host-token: "
if len(sys.argv) > 3 and sys.argv[3] == "bearer":
    name = "Authorization: Bearer "
ws = websocket.create_connection(url, timeout=20,
    header=[name + tok] if tok else [])
for m in ("one", "two" * 5000):
    ws.send(m)
    r = ws.recv()
    assert r == "echo:" + m, r[:40]
ws.close()
print("ws ok")
