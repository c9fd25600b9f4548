#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""docker-fake.py SOCKET MODE

A broken Docker Engine API on a Unix socket, for the agent's look-ups to
meet: every connection is accepted, and then
  garbage  the request is answered "200 OK" with a body that is not JSON
           (and holds a canary, canaryG1, that must reach no agent file)
  hang     nothing is ever answered (the connection stays open)
Writes SOCKET.ready when it listens; serves until killed.
"""
import os
import socket
import sys
import threading
import time

SOCK, MODE = sys.argv[1], sys.argv[2]
BODY = b'{"Config":{"Env":["SECRET_CANARY=canaryG1", "AWS_BATCH_JOB_ID=x" oops'


def serve(conn):
    try:
        if MODE == "hang":
            while True:
                time.sleep(3600)
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\nConnection: close\r\n\r\n"
                     % len(BODY) + BODY)
    except OSError:
        pass
    finally:
        conn.close()


try:
    os.unlink(SOCK)
except FileNotFoundError:
    pass
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(SOCK)
srv.listen(64)
open(SOCK + ".ready", "w").close()
while True:
    c, _ = srv.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
