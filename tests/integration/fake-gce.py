#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""fake-gce.py PORT DIR [--blackhole]

A stand-in for Compute Engine's metadata server on 127.0.0.1 at PORT, for
tests/integration/test_gcp.sh.  It answers as Google's documentation
("About VM metadata", "Query VM metadata", "Predefined metadata keys")
describes:

  GET /computeMetadata/v1/PATH   needs "Metadata-Flavor: Google", else 403
                                 with Google's text; every answer carries
                                 "Metadata-Flavor: Google" and is
                                 application/text
  project/project-id             "my-gcp-project"
  instance/zone                  "projects/123456789012/zones/us-central1-a"
  instance/machine-type          "projects/123456789012/machineTypes/e2-standard-4"
  instance/id                    "4520031799277581759"
  instance/scheduling/preemptible         "FALSE"
  instance/scheduling/provisioning-model  "SPOT"
  anything else                  404 (Google's HTML page)

DIR/PATH with '/' as '_' (instance_zone, ...) replaces an answer: its bytes,
or a 404 when it holds the single word 404.  Every request is logged to
DIR/requests.log as "METHOD PATH STATUS flavor=HEADER".  The port is written
to DIR/port once it listens.

--blackhole: accept connections and never answer (a server that hangs).
"""
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, DIR = int(sys.argv[1]), sys.argv[2]
BLACKHOLE = "--blackhole" in sys.argv[3:]
PREFIX = "/computeMetadata/v1/"

ANSWERS = {
    "project/project-id": "my-gcp-project",
    "instance/zone": "projects/123456789012/zones/us-central1-a",
    "instance/machine-type": "projects/123456789012/machineTypes/e2-standard-4",
    "instance/id": "4520031799277581759",
    "instance/scheduling/preemptible": "FALSE",
    "instance/scheduling/provisioning-model": "SPOT",
}

FORBIDDEN = ("Your client does not have permission to get URL <code>%s</code>"
             " from this server. Missing Metadata-Flavor:Google header.")
NOT_FOUND = ("<!DOCTYPE html>\n<html lang=en>\n  <meta charset=utf-8>\n"
             "  <title>Error 404 (Not Found)!!1</title>\n"
             "  <p><b>404.</b> <ins>That\u2019s an error.</ins>\n"
             "  <p>The requested URL <code>%s</code> was not found on this"
             " server.  <ins>That\u2019s all we know.</ins>\n")
lock = threading.Lock()


def path(name):
    return os.path.join(DIR, name)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "Metadata Server for VM"
    sys_version = ""

    def log_message(self, fmt, *args):
        pass

    def answer(self, status, body, ctype="application/text"):
        data = body.encode()
        with lock, open(path("requests.log"), "a") as f:
            f.write("%s %s %d flavor=%s\n" % (
                self.command, self.path, status,
                self.headers.get("Metadata-Flavor", "-")))
        self.send_response(status)
        self.send_header("Metadata-Flavor", "Google")
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.headers.get("Metadata-Flavor") != "Google":
            self.answer(403, FORBIDDEN % self.path, "text/html")
            return
        key = self.path[len(PREFIX):] if self.path.startswith(PREFIX) else None
        body = ANSWERS.get(key) if key else None
        if key:
            try:
                with open(path(key.replace("/", "_"))) as f:
                    body = f.read()
            except FileNotFoundError:
                pass
        if body is None or body.strip() == "404":
            self.answer(404, NOT_FOUND % self.path, "text/html")
        else:
            self.answer(200, body)


class Server(ThreadingHTTPServer):
    daemon_threads = True


if BLACKHOLE:
    # a server that accepts and never answers is the same for any cloud
    imds = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "fake-imds.py")
    os.execv(sys.executable, [sys.executable, imds, str(PORT), DIR,
                              "--blackhole"])
else:
    srv = Server(("127.0.0.1", PORT), Handler)
    with open(path("port"), "w") as f:
        f.write("%d\n" % PORT)
    srv.serve_forever()
