#!/usr/bin/python3
"""hpn-early-relay.py: a TCP relay with a delay, for tests/regress/hpn-early.sh.

  hpn-early-relay.py --listen PORT --to HOST:PORT --ready FILE
      [--delay SECONDS] [--capture FILE] [--hold-after-newkeys SECONDS]

Accepts connections on 127.0.0.1:PORT and relays each to HOST:PORT,
holding every chunk read back SECONDS (each direction; pipelined: a chunk
leaves SECONDS after it came, whatever came before it), so that a round
trip through it takes twice that: the round trips a connection's set-up
waits for in series show in its wall clock.  TCP_NODELAY on both sides.
With --capture, what the client sends on the last connection is written
to FILE (each connection's own, from its start) as it passes.  With
--hold-after-newkeys, what the server sends after its first NEWKEYS (its
EXT_INFO, encrypted) is held back that much longer, once: the packets
before it are unencrypted, so their lengths and types can be read.  Writes
FILE (--ready) with its PID once listening; runs until killed, at most 20
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
    p.add_argument("--delay", type=float, default=0.0)
    p.add_argument("--capture", default="")
    p.add_argument("--hold-after-newkeys", type=float, default=0.0)
    return p.parse_args()


class NewkeysFinder:
    """Reads the server's version string and unencrypted packets up to its
    first NEWKEYS; split(chunk) gives the bytes of chunk up to the end of
    that NEWKEYS (all of them while it has not come) and those after it
    (None until it has, then every chunk's)."""

    def __init__(self):
        self.buf = b""
        self.off = 0		# what of buf is parsed
        self.banner = False
        self.done = False

    def split(self, d):
        if self.done:
            return b"", d
        start = len(self.buf)
        self.buf += d
        while True:
            off = self.off
            if not self.banner:
                nl = self.buf.find(b"\n", off)
                if nl < 0:
                    return d, None
                line, self.off = self.buf[off:nl], nl + 1
                self.banner = line.startswith(b"SSH-")
                continue
            if len(self.buf) - off < 6:
                return d, None
            plen = int.from_bytes(self.buf[off:off + 4], "big")
            if len(self.buf) - off < 4 + plen:
                return d, None
            kind = self.buf[off + 5]
            self.off = off + 4 + plen
            if kind == 21:		# SSH2_MSG_NEWKEYS
                self.done = True
                cut = self.off - start
                return d[:cut], d[cut:]


def nodelay(s):
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def pump(src, dst, delay, capture, hold=0.0):
    """src -> dst, each chunk held back delay seconds; EOF passed on.
    hold: what follows the first NEWKEYS, that much longer."""
    q = queue.Queue()
    finder = NewkeysFinder() if hold > 0 else None

    def reader():
        held_until = None
        while True:
            try:
                d = src.recv(65536)
            except OSError:
                d = b""
            due = time.monotonic() + delay
            if finder is not None and d:
                before, after = finder.split(d)
                if after is not None and held_until is None:
                    held_until = due + hold
                if before:
                    q.put((due, before))
                d = after
                if not d:
                    continue
            if held_until is not None:
                due = max(due, held_until)
            q.put((due, d))
            if not d:
                return

    threading.Thread(target=reader, daemon=True).start()
    while True:
        due, d = q.get()
        wait = due - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        if not d:
            try:
                dst.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            return
        if capture is not None:
            capture.write(d)
            capture.flush()
        try:
            dst.sendall(d)
        except OSError:
            return


def serve(c, a):
    host, port = a.to.rsplit(":", 1)
    try:
        s = socket.create_connection((host, int(port)), timeout=30)
    except OSError as e:
        print("relay: connect %s: %s" % (a.to, e), file=sys.stderr)
        c.close()
        return
    s.settimeout(None)
    nodelay(c)
    nodelay(s)
    cap = open(a.capture, "wb") if a.capture else None
    t = threading.Thread(target=pump, args=(s, c, a.delay, None,
                                            a.hold_after_newkeys),
                         daemon=True)
    t.start()
    pump(c, s, a.delay, cap)
    t.join(600)
    if cap is not None:
        cap.close()
    c.close()
    s.close()


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
    while True:
        c, _ = ls.accept()
        threading.Thread(target=serve, args=(c, a), daemon=True).start()


if __name__ == "__main__":
    main()
