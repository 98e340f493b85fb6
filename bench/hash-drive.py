#!/usr/bin/python3
"""Hash a whole file through hash-range@hpn-patch-set.invalid, as hpnscp -Z
and hpnsftp reget do: 64 MiB requests cut into 8 MiB pieces, four of
them ahead, with the algorithms offered by preference as ResumeHash's.

  hash-drive.py [--algs LIST] FILE SERVER [ARGS...]

Runs SERVER (an sftp-server) on a pipe, opens FILE, asks for the hashes of
all of it (LIST: the client's default, xxh128,sha256,blake2b512) and
prints "SECONDS BYTES ALGORITHM" (from the first request to the last
reply; the algorithm the server used).  Exit status 1 on any error.  The SFTP plumbing is the regress
test's (tests/regress/hpn-sftp-hashreq.py): every read has a timeout.
"""

import importlib.util
import os
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# the test's own module, and the sftpwire.py it imports beside it
sys.path.insert(0, os.path.join(HERE, "..", "tests", "regress"))
_spec = importlib.util.spec_from_file_location(
    "hashreq", os.path.join(HERE, "..", "tests", "regress",
                            "hpn-sftp-hashreq.py"))
hr = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hr)

RANGE = 64 * 1024 * 1024
PIECE = 8 * 1024 * 1024
AHEAD = 4
HANDLE = 102


def main():
    args = sys.argv[1:]
    algs = b"xxh128,sha256,blake2b512"
    if len(args) >= 2 and args[0] == "--algs":
        algs = args[1].encode()
        args = args[2:]
    if len(args) < 2:
        hr.fail("usage: hash-drive.py [--algs LIST] FILE SERVER [ARGS...]")
    path = args[0]
    size = os.path.getsize(path)
    c = hr.Conn(args[1:])
    c.send(bytes([hr.INIT]) + struct.pack(">I", 3))
    c.recv()
    t, body = c.req(hr.OPEN, hr.s(path.encode()) +
                    struct.pack(">II", hr.FXF_READ, 0))
    if t != HANDLE:
        hr.fail("cannot open %s (reply type %d)" % (path, t))
    handle, _ = hr.gets(body, 0)
    start = time.monotonic()
    off = out = got = 0
    used = None
    while True:
        while off < size and out < AHEAD:
            c.id += 1
            c.send(bytes([hr.EXTENDED]) + struct.pack(">I", c.id) +
                   hr.s(hr.EXT) + hr.s(handle) + hr.s(algs) +
                   struct.pack(">QQI", off, RANGE, PIECE))
            off += RANGE
            out += 1
        if out == 0:
            break
        m = c.recv()
        if m is None:
            hr.fail("the server closed the connection")
        out -= 1
        if m[0] != hr.EXTENDED_REPLY:
            hr.fail("hash-range refused (reply type %d)" % m[0])
        alg, o = hr.gets(m, 5)
        used = used or alg.decode()
        (n,) = struct.unpack(">Q", m[o:o + 8])
        got += n
    secs = time.monotonic() - start
    c.close()
    if got != size:
        hr.fail("hashed %d bytes of %d" % (got, size))
    print("%.3f %d %s" % (secs, got, used))


if __name__ == "__main__":
    main()
