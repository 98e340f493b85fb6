#!/usr/bin/python3
"""A TCP server that never completes an SSH identification line.

  stallserver.py MODE ADDR PORT

Listens on ADDR:PORT (loopback) and, on each connection it accepts:
  partial  sends "SSH-2.0" without an end of line, then nothing
  junk     sends "junk\\r\\n" lines, one every 10 ms, never an "SSH-" line
Prints "LISTENING" once it listens and "ACCEPTED" at each connection.
Holds every connection open; exits after TIMEOUT seconds in all (the
caller kills it by PID before that).
"""

import select
import socket
import sys
import time

TIMEOUT = 60


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("partial", "junk"):
        sys.exit(__doc__)
    mode, addr, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, port))
    ls.listen(8)
    print("LISTENING", flush=True)
    conns = []
    end = time.time() + TIMEOUT
    while time.time() < end:
        r, _, _ = select.select([ls], [], [], 0.01)
        if r:
            c, _ = ls.accept()
            print("ACCEPTED", flush=True)
            conns.append(c)
            if mode == "partial":
                c.sendall(b"SSH-2.0")
        if mode == "junk":
            for c in list(conns):
                try:
                    c.sendall(b"junk\r\n")
                except OSError:
                    conns.remove(c)
    for c in conns:
        c.close()
    ls.close()


if __name__ == "__main__":
    main()
