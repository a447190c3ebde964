#! /usr/bin/python3
# relay_ws.py URL TOKEN: two messages through a WebSocket of the test
# server (t_webapp.py), the host token in its handshake; "ws ok".
import sys
import websocket

url, tok = sys.argv[1], sys.argv[2]
ws = websocket.create_connection(url, timeout=20,
    header=["x-voicebox-host-token: " + tok] if tok else [])
for m in ("one", "two" * 5000):
    ws.send(m)
    r = ws.recv()
    assert r == "echo:" + m, r[:40]
ws.close()
print("ws ok")
