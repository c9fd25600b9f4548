#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""rules-server.py - a rules bundle server for test_rules_http.sh.

rules-server.py DIR PORTFILE: serves the files of DIR on 127.0.0.1 (a free
port, written to PORTFILE) with an ETag (the content's SHA-256) and answers
304 to a GET whose If-None-Match is the file's ETag, as a web server or an
object store does.  GET /counts answers the requests seen per path and
status as JSON ({"/b.tar": {"200": 1, "304": 4, "t200": T}}), T the epoch
time of the last 200 answer, so the test can count what each poll cost and
tell when the agent fetched a new bundle by the server's own clock.
"""
import hashlib
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = sys.argv[1]
COUNTS = {}
LOCK = threading.Lock()


def count(path, status):
    with LOCK:
        c = COUNTS.setdefault(path, {})
        c[str(status)] = c.get(str(status), 0) + 1
        if status == 200:
            c["t200"] = time.time()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        sys.stderr.write("rules-server: " + (fmt % args) + "\n")

    def answer(self, status, body=b"", etag=None):
        self.send_response(status)
        if etag:
            self.send_header("ETag", etag)
        if status != 304:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if status != 304:
            self.wfile.write(body)

    def do_GET(self):
        if self.path == "/counts":
            with LOCK:
                body = json.dumps(COUNTS).encode()
            self.answer(200, body)
            return
        name = os.path.basename(self.path)
        try:
            with open(os.path.join(ROOT, name), "rb") as f:
                data = f.read()
        except OSError:
            count(self.path, 404)
            self.answer(404, b"no such bundle\n")
            return
        etag = '"%s"' % hashlib.sha256(data).hexdigest()[:32]
        if self.headers.get("If-None-Match") == etag:
            count(self.path, 304)
            self.answer(304, etag=etag)
            return
        count(self.path, 200)
        self.answer(200, data, etag)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(sys.argv[2] + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
server.serve_forever()
