#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""fake-imds.py PORT DIR [--blackhole]

A stand-in for EC2's instance metadata service, version 2, on 127.0.0.1 at
PORT (chosen by the test), for tests/integration/test_imds.sh.  It answers
as the EC2 user guide documents (sections "Use the Instance Metadata
Service to access instance metadata", "Instance identity documents" and
"Spot Instance interruption notices"):

  PUT /latest/api/token               needs X-aws-ec2-metadata-token-ttl-seconds
                                      (1 to 21600), else 400; answers a new
                                      token (text/plain)
  GET  (every other path)             needs X-aws-ec2-metadata-token with a
                                      token it gave that has not expired,
                                      else 401
  GET /latest/dynamic/instance-identity/document
                                      the identity document (AWS's example
                                      with this fake's ids), or the bytes of
                                      DIR/identity-document when it exists
  GET /latest/meta-data/instance-life-cycle
                                      "spot", or the first line of
                                      DIR/life-cycle when it exists
                                      ("on-demand")
  GET /latest/meta-data/spot/instance-action
                                      404 until DIR/spot-action exists; then
                                      {"action": WORD, "time": T} with WORD
                                      the file's first line and T two minutes
                                      after the file's mtime (UTC, RFC 3339)
  anything else                       404

Controls: creating DIR/expire-tokens expires every token given so far, as
their TTL would (the next request removes the file and answers 401).
While DIR/hang-action exists, instance-action is answered 30 s late.
Every request is logged to DIR/requests.log as one line:
"METHOD PATH STATUS ttl=HEADER token=ok|missing|bad", and every connection
it accepts, with a request or not (the agent's TCP probe sends none), to
DIR/connections.log as "CONNECT ADDRESS".  The port is written to DIR/port
once it listens.

--blackhole: accept connections and never answer (a service that hangs).
"""
import email.utils
import os
import secrets
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, DIR = int(sys.argv[1]), sys.argv[2]
BLACKHOLE = "--blackhole" in sys.argv[3:]

# The example of the EC2 user guide ("Instance identity documents"), with
# its fields in AWS's order and layout.
IDENTITY = """{
  "accountId" : "123456789012",
  "architecture" : "x86_64",
  "availabilityZone" : "eu-west-1b",
  "billingProducts" : null,
  "devpayProductCodes" : null,
  "marketplaceProductCodes" : null,
  "imageId" : "ami-0123456789abcdef0",
  "instanceId" : "i-0f1e2d3c4b5a69788",
  "instanceType" : "c5.2xlarge",
  "kernelId" : null,
  "pendingTime" : "2024-05-06T07:08:09Z",
  "privateIp" : "10.11.12.13",
  "ramdiskId" : null,
  "region" : "eu-west-1",
  "version" : "2017-09-30"
}"""

NOT_FOUND = """<?xml version="1.0" encoding="iso-8859-1"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN"
\t"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en" lang="en">
 <head>
  <title>404 - Not Found</title>
 </head>
 <body>
  <h1>404 - Not Found</h1>
 </body>
</html>
"""

tokens = {}                     # token -> expiry (time.monotonic())
lock = threading.Lock()


def path(name):
    return os.path.join(DIR, name)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"       # keep-alive, as IMDS does
    server_version = "EC2ws"
    sys_version = ""

    def log_message(self, fmt, *args):
        pass

    def note(self, status, tok):
        with lock, open(path("requests.log"), "a") as f:
            f.write("%s %s %d ttl=%s token=%s\n" % (
                self.command, self.path, status,
                self.headers.get("X-aws-ec2-metadata-token-ttl-seconds", "-"),
                tok))

    def answer(self, status, body, ctype="text/plain", tok="-"):
        data = body.encode()
        self.note(status, tok)
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Date", email.utils.formatdate(usegmt=True))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        n = int(self.headers.get("Content-Length", "0") or "0")
        if n:
            self.rfile.read(n)

    def do_PUT(self):
        self.body()
        if self.path != "/latest/api/token":
            self.answer(404, NOT_FOUND, "text/html")
            return
        ttl = self.headers.get("X-aws-ec2-metadata-token-ttl-seconds")
        if ttl is None or not ttl.isdigit() or not 1 <= int(ttl) <= 21600:
            self.answer(400, "", "text/html")
            return
        tok = secrets.token_urlsafe(42)
        with lock:
            tokens[tok] = time.monotonic() + int(ttl)
        self.answer(200, tok, tok="new")

    def token_state(self):
        tok = self.headers.get("X-aws-ec2-metadata-token")
        if tok is None:
            return "missing"
        with lock:
            if os.path.exists(path("expire-tokens")):
                tokens.clear()
                os.remove(path("expire-tokens"))
            exp = tokens.get(tok)
        if exp is None or exp < time.monotonic():
            return "bad"
        return "ok"

    def do_GET(self):
        tok = self.token_state()
        if tok != "ok":
            self.answer(401, "", "text/html", tok)
            return
        if self.path == "/latest/dynamic/instance-identity/document":
            try:
                with open(path("identity-document")) as f:
                    doc = f.read()
            except FileNotFoundError:
                doc = IDENTITY
            self.answer(200, doc, tok=tok)
        elif self.path == "/latest/meta-data/instance-life-cycle":
            try:
                with open(path("life-cycle")) as f:
                    life = f.readline().strip()
            except FileNotFoundError:
                life = "spot"
            self.answer(200, life, tok=tok)
        elif self.path == "/latest/meta-data/spot/instance-action":
            if os.path.exists(path("hang-action")):
                self.note(0, "hang")
                time.sleep(30)
            try:
                st = os.stat(path("spot-action"))
                with open(path("spot-action")) as f:
                    word = f.readline().strip()
            except FileNotFoundError:
                self.answer(404, NOT_FOUND, "text/html", tok)
                return
            when = time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                 time.gmtime(int(st.st_mtime) + 120))
            self.answer(200, '{"action": "%s", "time": "%s"}' % (word, when),
                        tok=tok)
        else:
            self.answer(404, NOT_FOUND, "text/html", tok)


def blackhole():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", PORT))
    s.listen(64)
    with open(path("port"), "w") as f:
        f.write("%d\n" % PORT)
    held = []
    while True:
        c, _ = s.accept()
        held.append(c)          # read nothing, answer nothing
        with lock, open(path("requests.log"), "a") as f:
            f.write("CONNECT - 0 ttl=- token=-\n")


class Server(ThreadingHTTPServer):
    """Counts every connection it accepts."""
    daemon_threads = True

    def process_request(self, request, client_address):
        with lock, open(path("connections.log"), "a") as f:
            f.write("CONNECT %s\n" % client_address[0])
        super().process_request(request, client_address)


if BLACKHOLE:
    blackhole()
else:
    srv = Server(("127.0.0.1", PORT), Handler)
    with open(path("port"), "w") as f:
        f.write("%d\n" % PORT)
    srv.serve_forever()
