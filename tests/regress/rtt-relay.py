#!/usr/bin/python3
"""rtt-relay.py: a TCP relay that counts the round trips a client waits for.

  rtt-relay.py --listen PORT --to HOST:PORT --ready FILE --report FILE
      [--delay SECONDS] [--trace FILE]

Accepts connections on 127.0.0.1:PORT and relays each to HOST:PORT,
numbering what passes by the round trips in series before it, as
hpn-sftp-proxy.py numbers SFTP requests (its max_depth):

  depth     each chunk the client sends gets 1 + the highest depth among
            the chunks of the server it had been given before it came;
            each chunk of the server gets the highest depth among the
            client's chunks passed to the server before it came.  Every
            chunk is held back --delay seconds (0.1) each way, so that
            what the client sends without waiting comes before the
            replies to what it sent before, and what the server sends of
            itself (a command's exit) before what the client sent
            meanwhile, and each shares the depth it belongs to.  The
            highest depth of a client chunk is the number of round trips
            the client waited for in series.

What the client sends waits until the server's first bytes (its version
string, which an SSH server sends at once) have come, so that they always
have the depth 0 and the count does not depend on which came first.
Counting is by the order of events, not by time: a busy machine can only
make a chunk come later, after one it did not wait for (which can add to
the count: a server slower than twice the delay to send something of
itself), never earlier than one it did.

The report (FILE, a line appended when a connection ends):
"conn N max_depth D client_chunks C server_chunks S".  --trace FILE: a line
appended for each chunk as it is read, "conn N T.TTT c>s|s>c depth D
bytes B" (T: seconds since the connection came), to show which chunk
raised a count.  Writes FILE (--ready) with its PID once listening; runs until killed, at most 20
minutes (an alarm).
"""

import argparse
import os
import queue
import signal
import socket
import sys
import threading
import time


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--listen", type=int, required=True)
    p.add_argument("--to", required=True)
    p.add_argument("--ready", required=True)
    p.add_argument("--report", required=True)
    p.add_argument("--delay", type=float, default=0.1)
    p.add_argument("--trace")
    return p.parse_args()


class Conn:
    """One connection's depths, under one lock."""

    def __init__(self, n=0, trace=None):
        self.n = n
        self.trace = trace
        self.t0 = time.monotonic()
        self.lock = threading.Lock()
        self.delivered = 0      # highest depth given to the client
        self.forwarded = 0      # highest depth passed to the server
        self.max_depth = 0
        self.nc = 0
        self.ns = 0
        self.banner = threading.Event()


def pump(src, dst, st, delay, from_client):
    """src -> dst, each chunk numbered as it is read and passed on delay
    seconds later (in order); EOF passed on."""
    q = queue.Queue()

    def reader():
        first = True
        while True:
            try:
                d = src.recv(65536)
            except OSError:
                d = b""
            with st.lock:
                if not d:
                    depth = 0
                elif from_client:
                    depth = st.delivered + 1
                    st.nc += 1
                    st.max_depth = max(st.max_depth, depth)
                else:
                    depth = 0 if first else st.forwarded
                    st.ns += 1
                if st.trace and d:
                    with open(st.trace, "a") as f:
                        f.write("conn %d %.3f %s depth %d bytes %d\n" %
                                (st.n, time.monotonic() - st.t0,
                                 "c>s" if from_client else "s>c", depth,
                                 len(d)))
            first = False
            q.put((time.monotonic() + delay, depth, d))
            if not from_client:
                st.banner.set()
            if not d:
                return

    threading.Thread(target=reader, daemon=True).start()
    while True:
        due, depth, d = q.get()
        wait = due - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        if from_client:
            st.banner.wait(30)
        if not d:
            try:
                dst.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            return
        # counted as passed on before it is: the other end cannot
        # answer it sooner
        with st.lock:
            if from_client:
                st.forwarded = max(st.forwarded, depth)
            else:
                st.delivered = max(st.delivered, depth)
        try:
            dst.sendall(d)
        except OSError:
            return


def serve(n, c, a):
    host, port = a.to.rsplit(":", 1)
    try:
        s = socket.create_connection((host, int(port)), timeout=30)
    except OSError as e:
        print("rtt-relay: connect %s: %s" % (a.to, e), file=sys.stderr)
        c.close()
        return
    s.settimeout(None)
    for x in (c, s):
        x.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    st = Conn(n, a.trace)
    t = threading.Thread(target=pump, args=(s, c, st, a.delay, False),
                         daemon=True)
    t.start()
    pump(c, s, st, a.delay, True)
    t.join(600)
    c.close()
    s.close()
    with open(a.report, "a") as f:
        f.write("conn %d max_depth %d client_chunks %d server_chunks %d\n" %
                (n, st.max_depth, st.nc, st.ns))


def main():
    a = parse()
    signal.alarm(1200)
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", a.listen))
    ls.listen(16)
    with open(a.ready + ".tmp", "w") as f:
        f.write("%d\n" % os.getpid())
    os.rename(a.ready + ".tmp", a.ready)
    n = 0
    while True:
        c, _ = ls.accept()
        n += 1
        threading.Thread(target=serve, args=(n, c, a), daemon=True).start()


if __name__ == "__main__":
    main()
