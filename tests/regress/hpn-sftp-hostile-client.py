#!/usr/bin/python3
"""A hostile client of hpnsftp-server: our extensions' requests gone wrong.

  hpn-sftp-hostile-client.py local DIR SERVER [ARGS...]
  hpn-sftp-hostile-client.py chroot NAME OUTSIDE SERVER [ARGS...]

local: runs SERVER (an sftp-server) on a pipe, makes its own files in DIR
(a scratch directory of its own), and sends, one class at a time:
hash-range@ requests with bad lengths, offsets near 2^64, the largest
piece counts and pieces too small, unknown and malformed algorithm
lists, handles that are no file's (a directory's, a write-only file's, a
closed one, made up, of every wrong length); handle-ref@ references of
bad lengths, to unknown ids, to closed handles, to reused ids, to an OPEN
that failed; tree@ walks of a file, of nothing, of a chain of 70
directories with a depth of 2^32 - 1 (at most 64 levels are opened), past
a link to "/" (never followed), READDIRs of a closed tree, 200 trees open
at once, a tree request without its depth; messages cut short, in their
fields and in their framing.
Each request must get a STATUS error (or, where upstream's own parse
ends the session, a clean exit: no signal), the server must still be
alive afterwards where it was not meant to exit, and nothing in DIR
may change but the files a case writes on purpose (checked by a digest
of DIR before and after).

chroot: SERVER is the session of an sshd with ChrootDirectory (its
internal-sftp: the same code); NAME a file in the chroot, OUTSIDE a path
outside it.  Escapes ("../" chains, the absolute path) find nothing,
hash-range through a reference to those failed OPENs is refused, and
NAME is hashed as usual; a tree of "/" and of "../../.." lists the
chroot's names only.

Prints one line per check; exit status 1 on the first failure.  Bounded:
every read has a 30-second timeout.
"""

import hashlib
import os
import struct
import subprocess
import sys

import sftpwire
from sftpwire import fail, s, gets

HASH_EXT = b"hash-range@hpn-patch-set.invalid"
REF_EXT = b"handle-ref@hpn-patch-set.invalid"
TREE_EXT = b"tree@hpn-patch-set.invalid"
READDIR, NAME = 12, 104
MIB = 1024 * 1024
LIMIT = 64 * MIB
INIT, VERSION, OPEN, CLOSE, READ, WRITE = 1, 2, 3, 4, 5, 6
OPENDIR, REALPATH, EXTENDED = 11, 16, 200
STATUS, HANDLE, DATA, EXTENDED_REPLY = 101, 102, 103, 201
FXF_READ, FXF_WRITE, FXF_CREAT, FXF_TRUNC = 1, 2, 8, 16
FX_OK, FX_EOF, FX_NO_SUCH_FILE, FX_FAILURE = 0, 1, 2, 4
FX_BAD_MESSAGE, FX_OP_UNSUPPORTED = 5, 8


def ref(*ids):
    return b"\xff" + b"".join(struct.pack(">I", i) for i in ids)


class Conn(sftpwire.Conn):
    def __init__(self, argv):
        super().__init__(argv, stderr=subprocess.PIPE)
        self.send(bytes([INIT]) + struct.pack(">I", 3))
        v = self.recv()
        if v is None or v[0] != VERSION:
            err = b""
            if self.p.poll() is not None or v is None:
                err = self.p.stderr.read()
            fail("no VERSION (%r; %s)" % (v[:60] if v else v,
                                          err.decode(errors="replace")[-300:]))
        self.exts, off = {}, 5
        while off < len(v):
            n, off = gets(v, off)
            val, off = gets(v, off)
            self.exts[n] = val

    def alive(self, what):
        """The server still answers (a REALPATH of ".")."""
        t, _ = self.req(REALPATH, s(b"."))
        if t != 104 or self.p.poll() is not None:	# NAME
            fail("%s: the server no longer answers" % what)

    def gone(self, what):
        """The server ended the session by itself, cleanly: no signal."""
        self.p.stdin.close()
        while self.recv() is not None:
            pass
        try:
            rc = self.p.wait(30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            fail("%s: the server did not exit" % what)
        err = self.p.stderr.read().decode(errors="replace")
        if rc < 0:
            fail("%s: the server died of signal %d" % (what, -rc))
        if "Sanitizer" in err or "runtime error" in err:
            fail("%s: a sanitizer report: %s" % (what, err[-300:]))
        return rc

    def close(self, what="the session"):
        return self.gone(what)


def status(t, b):
    return struct.unpack(">I", b[:4])[0] if t == STATUS else None


def digest(top, skip=()):
    """Every name, type, mode and content under top, skip excepted."""
    h = hashlib.sha256()
    for d, dirs, files in os.walk(top):
        dirs.sort()
        for n in sorted(dirs + files):
            p = os.path.join(d, n)
            if os.path.relpath(p, top) in skip:
                continue
            st = os.lstat(p)
            h.update(("%s %o %d\n" % (os.path.relpath(p, top), st.st_mode,
                                      st.st_size)).encode())
            if os.path.isfile(p) and not os.path.islink(p):
                with open(p, "rb") as f:
                    h.update(f.read())
    return h.hexdigest()


def open_(c, path, flags=FXF_READ, id=None):
    t, b = c.req(OPEN, s(path.encode()) + struct.pack(">II", flags, 0)
                 if not flags & FXF_CREAT else
                 s(path.encode()) + struct.pack(">III", flags, 4, 0o600),
                 id=id)
    return gets(b, 0)[0] if t == HANDLE else None


def hash_req(h, algs, off, length, piece=0):
    return s(HASH_EXT) + s(h) + s(algs) + struct.pack(">QQI", off, length,
                                                        piece)


def refused(c, what, t, b, codes=None):
    """A STATUS error (one of codes, if given), and the server lives on."""
    st = status(t, b)
    if st is None or st == FX_OK or (codes and st not in codes):
        fail("%s: type %d status %r (expected an error%s)" % (
            what, t, st, " in %r" % (codes,) if codes else ""))
    c.alive(what)
    print("ok: %s: status %d" % (what, st))


def hashed(c, what, t, b, alg, count):
    if t != EXTENDED_REPLY:
        fail("%s: type %d status %r" % (what, t, status(t, b)))
    a, o = gets(b, 0)
    (done, n) = struct.unpack(">QI", b[o:o + 12])
    if a != alg or n != count:
        fail("%s: %s, %d pieces (expected %s, %d)" % (what, a, n, alg, count))
    c.alive(what)
    print("ok: %s: %s, %d bytes in %d piece(s)" % (what, a.decode(), done, n))
    return done


def attrs(b, off):
    """SFTP attributes at off: (permissions or None, the offset after)."""
    (fl,) = struct.unpack(">I", b[off:off + 4])
    off += 4
    perm = None
    if fl & 1:
        off += 8
    if fl & 2:
        off += 8
    if fl & 4:
        (perm,) = struct.unpack(">I", b[off:off + 4])
        off += 4
    if fl & 8:
        off += 8
    if fl & 0x80000000:
        (n,) = struct.unpack(">I", b[off:off + 4])
        off += 4
        for _ in range(2 * n):
            _, off = gets(b, off)
    return perm, off


def tree_list(c, path, depth, what):
    """A whole tree through tree@: [(name, flags, perm)]; None: refused."""
    t, b = c.req(EXTENDED, s(TREE_EXT) + s(path) + struct.pack(">I", depth))
    if t != HANDLE:
        return None
    h, _ = gets(b, 0)
    out = []
    for _ in range(100000):
        t, b = c.req(READDIR, s(h))
        if t == STATUS:
            if status(t, b) != FX_EOF:
                fail("%s: READDIR status %d" % (what, status(t, b)))
            break
        if t != NAME:
            fail("%s: READDIR answered by type %d" % (what, t))
        (n,), off = struct.unpack(">I", b[:4]), 4
        for _ in range(n):
            name, off = gets(b, off)
            flags, off = gets(b, off)
            perm, off = attrs(b, off)
            out.append((name, flags, perm))
    else:
        fail("%s: no end" % what)
    t, b = c.req(CLOSE, s(h))
    if status(t, b) != FX_OK:
        fail("%s: CLOSE of the tree: status %r" % (what, status(t, b)))
    return out


def trees(c, top):
    """tree@ gone wrong; the caller checks that nothing changed."""
    for what, path in (("a tree of a file", top + "/f"),
                       ("a tree of nothing", top + "/nothing")):
        t, b = c.req(EXTENDED, s(TREE_EXT) + s(path.encode()) +
                     struct.pack(">I", 64))
        refused(c, what, t, b, (FX_NO_SUCH_FILE, FX_FAILURE))
    chain = top + "/chain"
    p = chain
    for i in range(70):
        p += "/c"
    os.makedirs(p, exist_ok=True)
    os.symlink("/", chain + "/root")
    got = tree_list(c, chain.encode(), 2 ** 32 - 1, "a tree 70 deep")
    if got is None:
        fail("a tree 70 deep: refused")
    names = [n for n, _, _ in got]
    deepest = max(n.count(b"/") + 1 for n in names)
    flagged = [n for n, f, _ in got if f == b"d"]
    if deepest != 65 or max(n.count(b"/") + 1 for n in flagged) != 64:
        fail("a tree 70 deep with depth 2^32-1: names %d levels deep, "
             "opened %d (expected 65 and 64)" %
             (deepest, max(n.count(b"/") + 1 for n in flagged)))
    if b"root" not in names or any(n.startswith(b"root/") for n in names):
        fail("a link to / was followed (or not listed)")
    for n, f, perm in got:
        comps = n.split(b"/")
        if n.startswith(b"/") or b"" in comps or b"." in comps or \
                b".." in comps or f not in (b"", b"d"):
            fail("a tree's name %r, flags %r" % (n, f))
    c.alive("a tree 70 deep")
    print("ok: a tree 70 deep, depth 2^32-1: %d names, 64 levels opened, "
          "the link to / not followed" % len(names))
    got = tree_list(c, chain.encode(), 0, "a tree of depth 0")
    if [n for n, _, _ in got] != [b"c", b"root"] and \
            sorted(n for n, _, _ in got) != [b"c", b"root"] or \
            any(f for _, f, _ in got):
        fail("a tree of depth 0: %r" % got)
    print("ok: a tree of depth 0 lists the directory alone")
    # READDIR of a tree closed, through its handle and a reference
    oid = c.id + 1
    t, b = c.req(EXTENDED, s(TREE_EXT) + s(chain.encode()) +
                 struct.pack(">I", 3))
    if t != HANDLE:
        fail("a tree: type %d" % t)
    h, _ = gets(b, 0)
    c.req(READDIR, s(h))
    c.req(CLOSE, s(h))
    for what, hs in (("READDIR of a closed tree", h),
                     ("READDIR of a reference to a closed tree", ref(oid))):
        t, b = c.req(READDIR, s(hs))
        refused(c, what, t, b)
    # many at once, each part read, then closed
    hs = []
    for i in range(200):
        t, b = c.req(EXTENDED, s(TREE_EXT) + s(chain.encode()) +
                     struct.pack(">I", 64))
        if t != HANDLE:
            break
        hs.append(gets(b, 0)[0])
        c.req(READDIR, s(hs[-1]))
    for h in hs:
        c.req(CLOSE, s(h))
    c.alive("200 trees")
    print("ok: %d trees open at once, read and closed" % len(hs))
    return chain


def local(top, server):
    os.makedirs(top + "/d", exist_ok=True)
    data = os.urandom(3 * MIB + 77)
    other = os.urandom(5000)
    for n, d in (("f", data), ("g", other), ("ro", b"read only\n")):
        with open(os.path.join(top, n), "wb") as f:
            f.write(d)
    f, g, w = top + "/f", top + "/g", top + "/w"
    before = digest(top)

    c = Conn(server)
    if c.exts.get(HASH_EXT) != b"1" or c.exts.get(REF_EXT) != b"1" or \
            c.exts.get(TREE_EXT) != b"1":
        fail("hash-range@, handle-ref@ or tree@ not advertised")
    chain = trees(c, top)
    before = digest(top)
    h = open_(c, f)
    if h is None:
        fail("open of %s failed" % f)

    # --- hash-range@: bad lengths
    for what, body in (
            ("hash-range without algorithms", s(HASH_EXT) + s(h)),
            ("hash-range without a length", s(HASH_EXT) + s(h) +
             s(b"sha256") + struct.pack(">Q", 0)),
            ("hash-range without a piece size", s(HASH_EXT) + s(h) +
             s(b"sha256") + struct.pack(">QQ", 0, 10)),
            ("hash-range with a list longer than the message", s(HASH_EXT) +
             s(h) + struct.pack(">I", 1000) + b"sha256")):
        t, b = c.req(EXTENDED, body)
        refused(c, what, t, b, (FX_BAD_MESSAGE,))
    # a handle longer than the message: upstream's get_handle() ends it
    # (below, with the other cuts)

    # --- offsets near 2^64, lengths at and over the limit
    for what, off, length in (
            ("offset 2^64 - 1", 2 ** 64 - 1, 100),
            ("offset 2^63", 2 ** 63, 1),
            ("offset + length past 2^63", 2 ** 63 - 50, 100),
            ("length 2^64 - 1", 0, 2 ** 64 - 1),
            ("length over the limit", 0, LIMIT + 1)):
        t, b = c.req(EXTENDED, hash_req(h, b"sha256", off, length))
        refused(c, what, t, b, (FX_BAD_MESSAGE,))
    t, b = c.req(EXTENDED, hash_req(h, b"sha256", 2 ** 63 - 1 - 100, 100))
    if hashed(c, "offset 2^63 - 101 (past the end)", t, b, b"sha256", 1):
        fail("bytes hashed past the end of the file")

    # --- piece counts: the most there can be, pieces too small, huge ones
    t, b = c.req(EXTENDED, hash_req(h, b"sha256", 0, LIMIT, MIB))
    done = hashed(c, "64 MiB in pieces of 1 MiB (64)", t, b, b"sha256", 64)
    if done != len(data):
        fail("64 pieces: %d bytes hashed, the file has %d" % (done,
                                                                 len(data)))
    for what, length, piece in (("pieces of 1 MiB - 1", 3 * MIB, MIB - 1),
                                ("pieces of 1 byte", 3 * MIB, 1),
                                ("pieces of 1 byte over 64 MiB", LIMIT, 1)):
        t, b = c.req(EXTENDED, hash_req(h, b"sha256", 0, length, piece))
        refused(c, what, t, b, (FX_BAD_MESSAGE,))
    t, b = c.req(EXTENDED, hash_req(h, b"sha256", 0, 3 * MIB, 2 ** 32 - 1))
    hashed(c, "a piece of 2^32 - 1 bytes", t, b, b"sha256", 1)

    # --- unknown and malformed algorithms
    for what, algs, codes in (
            ("an unknown algorithm", b"md5", (FX_OP_UNSUPPORTED,)),
            ("no algorithm", b"", (FX_OP_UNSUPPORTED,)),
            ("commas only", b",,,,", (FX_OP_UNSUPPORTED,)),
            ("a name with a NUL", b"sha256\0md5", (FX_BAD_MESSAGE,)),
            ("a name of 255 bytes", b"a" * 255, (FX_OP_UNSUPPORTED,)),
            ("a list of 257 bytes", b"x," * 125 + b"sha256" + b"x",
             (FX_BAD_MESSAGE,)),
            ("a list of 64 KiB", b"sha256," * 9362, (FX_BAD_MESSAGE,))):
        t, b = c.req(EXTENDED, hash_req(h, algs, 0, 100))
        refused(c, what, t, b, codes)
    t, b = c.req(EXTENDED, hash_req(h, b"SHA256,md5,blake2b512", 0, 100))
    hashed(c, "an unknown name before a known one", t, b, b"blake2b512", 1)

    # --- handles that are no file's
    t, b = c.req(OPENDIR, s(top.encode()))
    if t != HANDLE:
        fail("opendir failed")
    hd = gets(b, 0)[0]
    t, b = c.req(EXTENDED, hash_req(hd, b"sha256", 0, 100))
    refused(c, "a directory's handle", t, b)
    hw = open_(c, w, FXF_WRITE | FXF_CREAT)
    if hw is None:
        fail("open for writing failed")
    t, b = c.req(EXTENDED, hash_req(hw, b"sha256", 0, 100))
    refused(c, "a write-only handle", t, b)
    hx = open_(c, g)
    t, b = c.req(CLOSE, s(hx))
    if status(t, b) != FX_OK:
        fail("close failed")
    t, b = c.req(EXTENDED, hash_req(hx, b"sha256", 0, 100))
    refused(c, "a closed handle", t, b)
    for n in (0, 1, 3, 5, 8, 255, 256, 1000):
        t, b = c.req(EXTENDED, hash_req(b"\x00" * n, b"sha256", 0, 100))
        refused(c, "a handle of %d bytes" % n, t, b)
    for hn in (1000, 2 ** 31 - 1, 2 ** 32 - 1):
        t, b = c.req(EXTENDED, hash_req(struct.pack(">I", hn), b"sha256", 0,
                                        100))
        refused(c, "handle %d, never given" % hn, t, b)

    # --- handle-ref@: bad lengths, unknown ids, closed and reused ids
    oid = c.id + 1
    hr = open_(c, f)
    for what, hs in (("a reference of 1 byte", b"\xff"),
                     ("a reference of 2 bytes", b"\xff\x00"),
                     ("a reference of 6 bytes", ref(oid) + b"\x00"),
                     ("a reference to 5 ids", ref(1, 2, 3, 4, oid)),
                     ("a reference of 255 bytes", b"\xff" * 255),
                     ("a reference of 256 bytes", ref(oid) * 51 + b"\xff"),
                     ("a reference to unknown ids", ref(10 ** 6, 2 ** 32 - 1))):
        t, b = c.req(READ, s(hs) + struct.pack(">QI", 0, 100))
        refused(c, what, t, b)
    t, b = c.req(READ, s(ref(2 ** 31, oid)) + struct.pack(">QI", 0, 100))
    if t != DATA or gets(b, 0)[0] != data[:100]:
        fail("a reference to an unknown id, then the OPEN: not its data")
    print("ok: a reference to an unknown id, then the OPEN: its data")
    # a 4-byte string is a handle number, whatever its first byte
    t, b = c.req(READ, s(b"\xff" + struct.pack(">I", oid)[1:]) +
                 struct.pack(">QI", 0, 100))
    refused(c, "4 bytes starting 0xff (a handle number)", t, b)
    t, b = c.req(CLOSE, s(ref(oid)))
    if status(t, b) != FX_OK:
        fail("close by reference failed")
    for t_, payload, what in (
            (READ, s(ref(oid)) + struct.pack(">QI", 0, 100),
             "READ through a reference to a closed handle"),
            (EXTENDED, hash_req(ref(oid), b"sha256", 0, 100),
             "hash-range through a reference to a closed handle"),
            (CLOSE, s(ref(oid)), "CLOSE through it again")):
        t, b = c.req(t_, payload)
        refused(c, what, t, b)
    # an id sent again takes the reference over; closed, it stands for none
    ha = open_(c, f, id=9000)
    hb = open_(c, g, id=9000)
    if ha is None or hb is None:
        fail("open with a reused id failed")
    t, b = c.req(READ, s(ref(9000)) + struct.pack(">QI", 0, 100))
    if t != DATA or gets(b, 0)[0] != other[:100]:
        fail("a reused id: the reference is not the newest OPEN's")
    print("ok: a reused id: the reference is the newest OPEN's")
    c.req(CLOSE, s(hb))
    t, b = c.req(READ, s(ref(9000)) + struct.pack(">QI", 0, 100))
    refused(c, "a reused id, its newest handle closed", t, b)
    t, b = c.req(READ, s(ha) + struct.pack(">QI", 0, 100))
    if t != DATA or gets(b, 0)[0] != data[:100]:
        fail("the first handle of a reused id no longer reads")
    # a reference to an OPEN that failed
    fid = c.id + 1
    if open_(c, top + "/nonexistent") is not None:
        fail("a missing file opened")
    for t_, payload, what in (
            (READ, s(ref(fid)) + struct.pack(">QI", 0, 10),
             "READ through a reference to a failed OPEN"),
            (EXTENDED, hash_req(ref(fid), b"sha256", 0, 10),
             "hash-range through a reference to a failed OPEN"),
            (WRITE, s(ref(fid)) + struct.pack(">Q", 0) + s(b"x"),
             "WRITE through a reference to a failed OPEN")):
        t, b = c.req(t_, payload)
        refused(c, what, t, b)
    # WRITE through a reference to a file opened for reading only
    rid = c.id + 1
    open_(c, top + "/ro")
    t, b = c.req(WRITE, s(ref(rid)) + struct.pack(">Q", 0) + s(b"XX"))
    refused(c, "WRITE through a reference to a read-only handle", t, b)
    # the one write on purpose: through a reference to w's OPEN
    wid = c.id + 1
    open_(c, w, FXF_WRITE | FXF_CREAT | FXF_TRUNC)
    t, b = c.req(WRITE, s(ref(wid)) + struct.pack(">Q", 0) + s(b"written"))
    if status(t, b) != FX_OK:
        fail("WRITE through a reference failed")
    c.close()
    with open(w, "rb") as fw:
        if fw.read() != b"written":
            fail("the write through a reference wrote elsewhere")
    if digest(top, skip=("w",)) != before:
        fail("something outside the target changed in %s" % top)
    print("ok: nothing changed in %s but the file written on purpose" % top)

    # --- cut short: fields (upstream ends the session), framing
    for what, body, length in (
            ("READ through a reference without its offset",
             bytes([READ]) + struct.pack(">I", 1) + s(ref(1)), None),
            ("hash-range whose handle runs past the message",
             bytes([EXTENDED]) + struct.pack(">I", 1) + s(HASH_EXT) +
             struct.pack(">I", 64) + b"\x00" * 8, None),
            ("a tree request without its depth",
             bytes([EXTENDED]) + struct.pack(">I", 1) + s(TREE_EXT) +
             s(chain.encode()), None),
            ("a message cut in its length", b"", 2),
            ("a hash-range cut in the middle",
             (bytes([EXTENDED]) + struct.pack(">I", 1) +
              hash_req(b"\x00\x00\x00\x00", b"sha256", 0, 10))[:30], 60),
            ("a message of 2^32 - 1 bytes", b"\x05", 2 ** 32 - 1)):
        c = Conn(server)
        if length == 2:		# only part of the length itself
            c.p.stdin.write(b"\x00\x00")
            c.p.stdin.flush()
        else:
            c.send(body, length)
        rc = c.gone(what)
        print("ok: %s: the session ended, exit status %d" % (what, rc))
    if digest(top, skip=("w",)) != before:
        fail("something outside the target changed in %s" % top)
    print("ok: nothing changed in %s" % top)


def chroot(name, outside, server):
    c = Conn(server)
    h = open_(c, "/" + name)
    if h is None:
        fail("/%s in the chroot does not open" % name)
    t, b = c.req(EXTENDED, hash_req(h, b"sha256", 0, 100))
    hashed(c, "a file in the chroot", t, b, b"sha256", 1)
    escapes = [outside, "../../../../../../../../" + outside.lstrip("/"),
               "/" + name + "/../../../../" + outside.lstrip("/")]
    for p in escapes:
        oid = c.id + 1
        if open_(c, p) is not None:
            fail("%s opened from inside the chroot" % p)
        t, b = c.req(EXTENDED, hash_req(ref(oid), b"sha256", 0, 100))
        refused(c, "hash-range through a reference to OPEN %s" % p, t, b)
    t, b = c.req(REALPATH, s(b"../../.."))
    if t != 104 or gets(b, 4)[0] != b"/":
        fail("realpath of ../../.. is not / in the chroot")
    print("ok: ../../.. is / in the chroot")
    for p in (b"/", b"../../.."):
        # the chroot holds NAME alone
        got = tree_list(c, p, 64, "a tree of %r in the chroot" % p)
        if got is None or [n for n, _, _ in got] != [name.encode()]:
            fail("a tree of %r in the chroot: %r" % (
                p, got if got is None else [n for n, _, _ in got][:10]))
        print("ok: a tree of %r lists the chroot alone" % p)
    c.close()


def main():
    if len(sys.argv) > 3 and sys.argv[1] == "local":
        local(os.path.abspath(sys.argv[2]), sys.argv[3:])
    elif len(sys.argv) > 4 and sys.argv[1] == "chroot":
        chroot(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        fail(__doc__)
    return 0


if __name__ == "__main__":
    sys.exit(main())
