#!/usr/bin/python3
"""hash-range@hpn-patch-set.invalid, asked of an sftp-server directly.

  hpn-sftp-hashreq.py [--xxh128] [--refused] [--read-only] FILE SERVER [ARGS...]

Runs SERVER (an sftp-server) on a pipe and checks its answers about FILE
(a readable regular file of more than 3 MiB) against Python's hashlib and
xxhash module (python3-xxhash): the extension is advertised; SHA-256,
BLAKE2b-512 and, with --xxh128 (a build with libxxhash), xxh128 of ranges
(the start, the middle, across the end, past the end), whole or cut into
pieces of 1 MiB and more (hashed in parallel by the server); the first
algorithm of a list that the server has is used (without --xxh128, a list
naming xxh128 first gets the next one, and xxh128 alone none); an unknown
algorithm, a range over the
limit, pieces under 1 MiB and a list of names too long are refused; a handle opened for writing
only, and a directory's, give an error and no hash.  With --refused the
server is expected to refuse the extension (-P hash-range): it is not
advertised and a request gets an error status.  With --read-only (-R)
the hashes are answered and opening for writing is refused.
Prints one line per check; exit status 1 on the first failure.  Bounded:
every read has a 30-second timeout.
"""

import hashlib
import os
import struct
import sys

import sftpwire
from sftpwire import fail, s, gets

EXT = b"hash-range@hpn-patch-set.invalid"
LIMIT = 64 * 1024 * 1024
MIB = 1024 * 1024
INIT, VERSION, OPEN, OPENDIR, EXTENDED = 1, 2, 3, 11, 200
STATUS, HANDLE, EXTENDED_REPLY = 101, 102, 201
FXF_READ, FXF_WRITE = 1, 2
FX_BAD_MESSAGE, FX_OP_UNSUPPORTED = 5, 8


def reference(alg, data):
    """The hash as Python's own modules compute it."""
    if alg == "xxh128":
        try:
            import xxhash
        except ImportError:
            fail("xxh128 needs Python's xxhash module (python3-xxhash: "
                 "make deps)")
        # canonical form, big-endian, as xxh128sum prints it
        return xxhash.xxh3_128(data).digest()
    return hashlib.new(alg, data).digest()


class Conn(sftpwire.Conn):
    def close(self):
        self.p.stdin.close()
        self.p.wait(10)


def status(body):
    return struct.unpack(">I", body[:4])[0]


def main():
    refused = readonly = xxh = False
    args = sys.argv[1:]
    while args and args[0] in ("--refused", "--read-only", "--xxh128"):
        if args[0] == "--refused":
            refused = True
        elif args[0] == "--xxh128":
            xxh = True
        else:
            readonly = True
        args = args[1:]
    path, server = args[0], args[1:]
    data = open(path, "rb").read()
    size = len(data)
    if size <= 3 * MIB:
        fail("the file must be larger than 3 MiB")
    c = Conn(server)
    c.send(bytes([INIT]) + struct.pack(">I", 3))
    v = c.recv()
    if v is None or v[0] != VERSION:
        fail("no VERSION")
    exts, off = {}, 5
    while off < len(v):
        n, off = gets(v, off)
        val, off = gets(v, off)
        exts[n] = val
    if refused:
        if EXT in exts:
            fail("advertised, though refused")
        print("ok: not advertised")
    else:
        if exts.get(EXT) != b"1":
            fail("not advertised (extensions: %r)" % sorted(exts))
        print("ok: advertised")

    t, b = c.req(OPEN, s(path.encode()) + struct.pack(">II", FXF_READ, 0))
    if t != HANDLE:
        fail("open failed")
    h, _ = gets(b, 0)

    def ask(algs, off, length, handle=h, piece=0):
        return c.req(EXTENDED, s(EXT) + s(handle) + s(algs) +
                     struct.pack(">QQI", off, length, piece))

    if refused:
        t, b = ask(b"sha256", 0, 100)
        if t != STATUS or status(b) == 0:
            fail("refused extension answered (type %d)" % t)
        print("ok: request refused, status %d" % status(b))
        c.close()
        return 0

    cases = [(b"sha256", "sha256", 0, 65536, 0),
             (b"sha256", "sha256", 1000, 40000, 0),
             (b"blake2b512", "blake2b512", 7, 50000, 0),
             (b"md5,blake2b512,sha256", "blake2b512", 0, size, 0),
             (b"sha256", "sha256", size - 100, 1000, 0),
             (b"sha256", "sha256", size + 10, 1000, 0),
             (b"sha256", "sha256", 5, 3 * MIB + 7, MIB),
             (b"blake2b512", "blake2b512", 0, 2 * MIB, MIB),
             (b"sha256", "sha256", size - MIB - 10, 3 * MIB, MIB),
             (b"sha256", "sha256", 0, 1000, MIB)]
    if xxh:
        cases += [(b"xxh128", "xxh128", 0, 65536, 0),
                  (b"xxh128,sha256", "xxh128", 1000, 40000, 0),
                  (b"md5,xxh128", "xxh128", 0, size, 0),
                  (b"sha256,xxh128", "sha256", 3, 5000, 0),
                  (b"xxh128", "xxh128", size - 100, 1000, 0),
                  (b"xxh128", "xxh128", size + 10, 1000, 0),
                  (b"xxh128", "xxh128", 5, 3 * MIB + 7, MIB),
                  (b"xxh128", "xxh128", size - MIB - 10, 3 * MIB, MIB),
                  (b"xxh128,blake2b512", "xxh128", 0, 2 * MIB, MIB)]
    else:
        cases += [(b"xxh128,sha256", "sha256", 0, 65536, 0),
                  (b"xxh128,blake2b512", "blake2b512", 7, 2 * MIB, MIB)]
    for algs, want, off, length, piece in cases:
        t, b = ask(algs, off, length, piece=piece)
        if t != EXTENDED_REPLY:
            fail("%s at %d+%d: type %d status %r" % (algs, off, length, t,
                 status(b) if t == STATUS else None))
        alg, o = gets(b, 0)
        (done, count) = struct.unpack(">QI", b[o:o + 12])
        o += 12
        mds = []
        for _ in range(count):
            md, o = gets(b, o)
            mds.append(md)
        step = piece if 0 < piece < length else max(length, 1)
        expect = [reference(want, data[off + i:off + min(i + step, length)])
                  for i in range(0, max(length, 1), step)]
        got = data[off:off + length]
        if (alg.decode() != want or done != len(got) or mds != expect or
                o != len(b)):
            fail("%s at %d+%d/%d: got %s of %d bytes, %d hashes; expected "
                 "%s of %d, %d" % (algs, off, length, piece, alg, done,
                                   len(mds), want, len(got), len(expect)))
        print("ok: %s of %d bytes at %d in %d piece(s) (asked %s)" % (
            want, done, off, count, algs.decode()))

    refusals = [
        ("an unknown algorithm", b"md5", 0, 100, FX_OP_UNSUPPORTED),
        ("names like xxh128's", b"xxh128x,xxh3", 0, 100, FX_OP_UNSUPPORTED),
        ("a range over the limit", b"sha256", 0, LIMIT + 1, FX_BAD_MESSAGE),
        ("a list of names too long", b"x," * 200 + b"sha256", 0, 100,
         FX_BAD_MESSAGE),
        ("pieces under 1 MiB", b"sha256", 0, 3 * MIB, FX_BAD_MESSAGE)]
    if not xxh:
        refusals.append(("xxh128 alone (not in this build)", b"xxh128", 0,
                         100, FX_OP_UNSUPPORTED))
    for what, algs, off, length, code in refusals:
        t, b = ask(algs, off, length, piece=4096 if "pieces" in what else 0)
        if t != STATUS or status(b) != code:
            fail("%s: type %d, status %r (expected %d)" % (
                what, t, status(b) if t == STATUS else None, code))
        print("ok: %s refused (status %d)" % (what, code))

    t, b = c.req(OPEN, s((path + ".w").encode()) +
                 struct.pack(">III", FXF_WRITE | 8, 4, 0o600))
    if readonly:
        if t == HANDLE:
            fail("read-only mode: opened for writing")
        print("ok: read-only: no opening for writing")
    elif t != HANDLE:
        fail("open for writing failed")
    else:
        hw, _ = gets(b, 0)
        t, b = ask(b"sha256", 0, 100, hw)
        if t != STATUS or status(b) == 0:
            fail("a write-only handle was hashed (type %d)" % t)
        print("ok: write-only handle refused (status %d)" % status(b))
    t, b = c.req(OPENDIR, s(os.path.dirname(os.path.abspath(path))
                            .encode()))
    if t != HANDLE:
        fail("opendir failed")
    hd, _ = gets(b, 0)
    t, b = ask(b"sha256", 0, 100, hd)
    if t != STATUS or status(b) == 0:
        fail("a directory handle was hashed (type %d)" % t)
    print("ok: directory handle refused (status %d)" % status(b))
    c.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
