#!/usr/bin/python3
"""hpn-early-relay.py: a TCP relay with a delay, for tests/regress/hpn-early.sh.

  hpn-early-relay.py --listen PORT --to HOST:PORT --ready FILE
      [--delay SECONDS] [--capture FILE]

Accepts connections on 127.0.0.1:PORT and relays each to HOST:PORT,
holding every chunk read back SECONDS (each direction; pipelined: a chunk
leaves SECONDS after it came, whatever came before it), so that a round
trip through it takes twice that: the round trips a connection's set-up
waits for in series show in its wall clock.  TCP_NODELAY on both sides.
With --capture, what the client sends on the last connection is written
to FILE (each connection's own, from its start) as it passes.  Writes
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
    return p.parse_args()


def nodelay(s):
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def pump(src, dst, delay, capture):
    """src -> dst, each chunk held back delay seconds; EOF passed on."""
    q = queue.Queue()

    def reader():
        while True:
            try:
                d = src.recv(65536)
            except OSError:
                d = b""
            q.put((time.monotonic() + delay, d))
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
    t = threading.Thread(target=pump, args=(s, c, a.delay, None),
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
