#!/usr/bin/env python3
"""Drive sftp-server directly with many outstanding reads while not reading
its replies for a while, so that its output queue backs up past the HPN
limit (1 MiB): every read must still be answered, with the right data.

  hpn-sftp-backlog.py SFTP_SERVER FILE"""

import os
import socket
import struct
import subprocess
import sys
import time

READ = 255 * 1024
NREQ = 300


def pkt(ptype, rid, body):
    data = bytes([ptype]) + (struct.pack(">I", rid) if rid is not None else b"") + body
    return struct.pack(">I", len(data)) + data


def sstr(b):
    return struct.pack(">I", len(b)) + b


def read_exact(f, n):
    buf = b""
    while len(buf) < n:
        chunk = f.read(n - len(buf))
        if not chunk:
            raise EOFError("sftp-server closed its output after %d of %d bytes"
                           % (len(buf), n))
        buf += chunk
    return buf


def reply(f):
    n = struct.unpack(">I", read_exact(f, 4))[0]
    body = read_exact(f, n)
    return body[0], body[1:]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    server, path = sys.argv[1], sys.argv[2]
    want = open(path, "rb").read()
    # A non-blocking socketpair, as a busy sshd's channel can make it: the
    # server's writes then come back short and its replies queue up.
    ours, theirs = socket.socketpair()
    theirs.setblocking(False)
    p = subprocess.Popen([server, "-e", "-l", "ERROR"], stdin=theirs,
                         stdout=theirs)
    theirs.close()
    ours.settimeout(30)
    p.stdin = ours.makefile("wb", buffering=0)
    p.stdout = ours.makefile("rb", buffering=0)
    try:
        p.stdin.write(struct.pack(">I", 5) + bytes([1]) + struct.pack(">I", 3))
        t, _ = reply(p.stdout)
        assert t == 2, "no SSH_FXP_VERSION"
        p.stdin.write(pkt(3, 1, sstr(path.encode()) + struct.pack(">II", 1, 0)))
        t, body = reply(p.stdout)
        assert t == 102, "open failed (type %d)" % t
        handle = body[4:]
        handle = handle[4:4 + struct.unpack(">I", handle[:4])[0]]
        for i in range(NREQ):
            off = i * READ
            p.stdin.write(pkt(5, 100 + i, sstr(handle) +
                              struct.pack(">QI", off, READ)))
        time.sleep(1.5)		# replies pile up in sftp-server
        got = b""
        for i in range(NREQ):
            t, body = reply(p.stdout)
            rid = struct.unpack(">I", body[:4])[0]
            if rid != 100 + i:
                sys.exit("reply %d out of order: %d" % (i, rid))
            if t == 103:		# DATA
                n = struct.unpack(">I", body[4:8])[0]
                got += body[8:8 + n]
            elif t == 101:		# STATUS: EOF past the end
                code = struct.unpack(">I", body[4:8])[0]
                if code != 1:
                    sys.exit("read %d failed: status %d" % (i, code))
            else:
                sys.exit("unexpected reply type %d" % t)
        if got != want:
            sys.exit("data differ: got %d bytes, want %d" % (len(got),
                                                             len(want)))
        if p.poll() is not None:
            sys.exit("sftp-server exited (%d)" % p.returncode)
        print("ok: %d reads answered through a backlog, %d bytes" % (NREQ,
                                                                     len(got)))
    finally:
        p.stdin.close()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


if __name__ == "__main__":
    main()
