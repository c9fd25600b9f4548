#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# conn-hold.py SOCKET N SECONDS OUT [--reconnect] - open N connections to
# the agent's control socket and hold them idle (never send a request) for
# SECONDS.  Counts how the agent closes them, by the line it sends first:
# refused_user (max_connections_per_user), refused_total (max_connections),
# evicted (closed for a privileged client), timed_out (no request line in
# time), silent (closed without a line).  With --reconnect a connection the
# agent timed out is opened again, so N stay open.  Writes
# "connects=.. open=.. refused_user=.. ..." to OUT (renamed in place) every
# 0.2 s and at the end; stops early when OUT.stop exists.
import os
import selectors
import socket
import sys
import time

path, n, secs, out = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
reconnect = "--reconnect" in sys.argv[5:]
sel = selectors.DefaultSelector()
st = dict(connects=0, connect_errors=0, refused_user=0, refused_total=0,
          evicted=0, timed_out=0, silent=0)


def open_one():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
    except OSError:
        st["connect_errors"] += 1
        s.close()
        return
    s.setblocking(False)
    sel.register(s, selectors.EVENT_READ)
    st["connects"] += 1


def dump():
    line = " ".join("%s=%d" % kv for kv in st.items())
    with open(out + ".tmp", "w") as f:
        f.write("%s open=%d\n" % (line, len(sel.get_map())))
    os.rename(out + ".tmp", out)


for _ in range(n):
    open_one()
dump()
end = time.monotonic() + secs
while time.monotonic() < end and not os.path.exists(out + ".stop"):
    for key, _ in sel.select(0.2):
        s = key.fileobj
        try:
            text = s.recv(4096).decode(errors="replace")
        except OSError:
            text = ""
        if "max_connections_per_user" in text:
            kind = "refused_user"
        elif "agent.max_connections" in text:
            kind = "refused_total"
        elif "privileged" in text:
            kind = "evicted"
        elif "no request line" in text:
            kind = "timed_out"
        else:
            kind = "silent"
        st[kind] += 1
        sel.unregister(s)
        s.close()
        if reconnect and kind == "timed_out":
            open_one()
    dump()
dump()
