#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""http-receiver.py PORTFILE OUTDIR [FAIL_FIRST]

A small NDJSON collector for the HTTP sink test, standing in for Vector,
Fluent Bit or Logstash's HTTP input: it accepts POSTed NDJSON (gzip or not)
on 127.0.0.1 at a free port (written to PORTFILE), appends every record
line to OUTDIR/records.ndjson and one line per request to
OUTDIR/requests.log (status, content type, encoding, the Authorization and
X-Test headers, lines, path with its query).  The first FAIL_FIRST requests are answered 503, as
a collector that is starting up would, and not stored.  A request whose
body is not NDJSON of JSON objects is answered 400.
"""
import gzip
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

PORTFILE, OUTDIR = sys.argv[1], sys.argv[2]
FAIL_FIRST = int(sys.argv[3]) if len(sys.argv) > 3 else 0
seen = 0


class Handler(BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        pass

    def answer(self, code, text):
        body = text.encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        global seen
        seen += 1
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        enc = self.headers.get("Content-Encoding", "")
        info = [self.headers.get("Content-Type", ""), enc or "identity",
                self.headers.get("Authorization", ""),
                self.headers.get("X-Test", "")]
        if seen <= FAIL_FIRST:
            self.log(503, info, 0)
            self.answer(503, "warming up\n")
            return
        try:
            if enc == "gzip":
                body = gzip.decompress(body)
            lines = [l for l in body.decode("utf-8").split("\n") if l]
            for l in lines:
                if not isinstance(json.loads(l), dict):
                    raise ValueError("not an object")
        except Exception as e:  # a malformed batch is the sink's bug
            self.log(400, info, 0)
            self.answer(400, "bad NDJSON: %s\n" % e)
            return
        with open(os.path.join(OUTDIR, "records.ndjson"), "a") as f:
            for l in lines:
                f.write(l + "\n")
        self.log(200, info, len(lines))
        self.answer(200, "ok\n")

    def log(self, code, info, nlines):
        with open(os.path.join(OUTDIR, "requests.log"), "a") as f:
            f.write("%d\t%s\t%d\t%s\n" % (code, "\t".join(info), nlines,
                                         self.path))


server = HTTPServer(("127.0.0.1", 0), Handler)
with open(PORTFILE + ".tmp", "w") as f:
    f.write("%d\n" % server.server_address[1])
os.rename(PORTFILE + ".tmp", PORTFILE)
server.serve_forever()
