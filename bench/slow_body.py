#!/usr/bin/env python3
"""How long a server keeps a connection whose POST body never arrives.

Sends the headers of a POST announcing a 200-byte body, then nothing; prints the status
line of the answer (if any) and the seconds until the server closed the connection.
Gives up after 600 s.

    python3 bench/slow_body.py 127.0.0.1:3000 [/mcp]
"""
import socket
import sys
import time

host, port = sys.argv[1].rsplit(":", 1)
path = sys.argv[2] if len(sys.argv) > 2 else "/mcp"
s = socket.create_connection((host, int(port)))
s.settimeout(600)
s.sendall(
    (
        f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\nContent-Length: 200\r\n\r\n"
    ).encode()
)
start = time.monotonic()
got = b""
try:
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        got += chunk
except socket.timeout:
    print("still open after 600 s")
    sys.exit(1)
took = time.monotonic() - start
status = got.split(b"\r\n", 1)[0].decode() if got else "(no answer)"
print(f"{status}; closed after {took:.2f} s")
