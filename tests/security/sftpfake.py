#!/usr/bin/python3
"""sftpfake.py SPEC LOG [IGNORED...]: a made-up SFTP version 3 server on
stdin/stdout, for sftp -D and scp -D (tests/security/cve-2026-106552.sh).

It serves a tree that exists only in SPEC (JSON), never a file of this
machine, and writes nothing but LOG:

  {"cwd": "/",                      what REALPATH "." answers
   "cwd_name": "",                  (optional) the name REALPATH "." and
                                    REALPATH "" answer instead, as given
   "empty_reads": true,             (optional) every READ of a file is
                                    answered with DATA of no bytes
   "nodes": {
     "/":        {"dir": [LISTING, LISTING...]},
     "/a/f":     {"file": "its bytes"},
     ...}}

A LISTING is a list of [NAME, TYPE] ("d": a directory, mode 040755; "f": a
regular file, mode 0100644, its size that of the node under the listed
directory's path, 0 without one).  The Nth OPENDIR of a directory reads
its Nth listing (the last one once there are no more), all of it in one
READDIR, then EOF.  Names are sent as they are: empty, ".", "..".

A path is looked up as it was sent, relative ones under "cwd", repeated
slashes and trailing ones dropped, "." and ".." left alone (so that
"/a/.." can be a node of its own); REALPATH resolves them.  OPEN for
reading needs a "file" node; OPEN for writing, MKDIR, WRITE, SETSTAT,
FSETSTAT and CLOSE succeed and store nothing.  Any other request (the
extended ones our client sends with INIT among them) gets
SSH_FX_OP_UNSUPPORTED.  Requests are answered in the order they come, by
their ids.

LOG gets a line per request: "TYPE PATH" (OPEN: "OPEN-R" or "OPEN-W").
Ends when the client closes its end, and after 60 s at the latest.
"""

import json
import os
import posixpath
import select
import struct
import sys
import time

TIMEOUT = 60
FX_OK, FX_EOF, FX_NO_SUCH_FILE, FX_FAILURE, FX_OP_UNSUPPORTED = 0, 1, 2, 4, 8
NAMES = {3: "OPEN", 4: "CLOSE", 5: "READ", 6: "WRITE", 7: "LSTAT",
         8: "FSTAT", 9: "SETSTAT", 10: "FSETSTAT", 11: "OPENDIR",
         12: "READDIR", 13: "REMOVE", 14: "MKDIR", 15: "RMDIR",
         16: "REALPATH", 17: "STAT", 18: "RENAME", 19: "READLINK",
         20: "SYMLINK", 200: "EXTENDED"}
SSH2_FXF_WRITE = 0x02


def u32(n):
    return struct.pack(">I", n & 0xffffffff)


def sstr(b):
    return u32(len(b)) + b


def attrs(kind, size):
    # SIZE | PERMISSIONS | ACMODTIME
    mode = 0o40755 if kind == "d" else 0o100644
    return u32(0x1 | 0x4 | 0x8) + struct.pack(">Q", size) + u32(mode) + \
        u32(1700000000) + u32(1700000000)


class Fake:
    def __init__(self, spec, log):
        self.cwd = spec.get("cwd", "/")
        self.cwd_name = spec.get("cwd_name")
        self.empty_reads = spec.get("empty_reads", False)
        self.nodes = spec["nodes"]
        self.log = log
        self.opendirs = {}      # path -> OPENDIRs so far
        self.handles = {}       # handle -> ("dir", entries|None) or
        self.nh = 0             #   ("file", bytes) or ("sink", None)

    def note(self, s):
        self.log.write(s + "\n")
        self.log.flush()

    def key(self, path):
        if not path.startswith("/"):
            path = self.cwd.rstrip("/") + "/" + path
        parts = [p for p in path.split("/") if p != ""]
        return "/" + "/".join(parts)

    def real(self, path):
        if path in ("", "."):
            return self.cwd
        p = posixpath.normpath(self.key(path))
        return "/" if p.startswith("//") else p

    def kind(self, k):
        n = self.nodes.get(k)
        if n is None:
            return None, 0
        if "dir" in n:
            return "d", 4096
        return "f", len(n["file"].encode())

    def handle(self, what):
        self.nh += 1
        h = b"h%d" % self.nh
        self.handles[h] = what
        return h

    def answer(self, t, rid, b):
        """The reply to request t (its body after the id)."""
        def status(code):
            return bytes([101]) + u32(rid) + u32(code) + sstr(b"") + \
                sstr(b"")

        def getstr(off):
            (n,) = struct.unpack(">I", b[off:off + 4])
            return b[off + 4:off + 4 + n], off + 4 + n

        name = NAMES.get(t, str(t))
        if t in (16, 17, 7, 11, 3, 14, 9, 13, 15, 19):
            path, off = getstr(0)
            path = path.decode("utf-8", "replace")
            self.note("%s %s" % (name if t != 3 else "OPEN-" + (
                "W" if struct.unpack(">I", b[off:off + 4])[0] &
                SSH2_FXF_WRITE else "R"), path))
        else:
            self.note(name)
        if t == 16:                                     # REALPATH
            p = self.real(path).encode()
            if path in ("", ".") and self.cwd_name is not None:
                p = self.cwd_name.encode()
            return bytes([104]) + u32(rid) + u32(1) + sstr(p) + sstr(p) + \
                u32(0)
        if t in (17, 7):                                # STAT, LSTAT
            kind, size = self.kind(self.key(path))
            if kind is None:
                return status(FX_NO_SUCH_FILE)
            return bytes([105]) + u32(rid) + attrs(kind, size)
        if t == 11:                                     # OPENDIR
            k = self.key(path)
            n = self.nodes.get(k)
            if n is None or "dir" not in n:
                return status(FX_NO_SUCH_FILE)
            i = self.opendirs.get(k, 0)
            self.opendirs[k] = i + 1
            listing = n["dir"][min(i, len(n["dir"]) - 1)]
            ents = []
            for ename, etype in listing:
                kind, size = self.kind(self.key(k + "/" + ename))
                ents.append((ename, etype,
                             size if etype == "f" and kind == "f" else 0))
            return bytes([102]) + u32(rid) + \
                sstr(self.handle(["dir", ents]))
        if t == 3:                                      # OPEN
            (pflags,) = struct.unpack(">I", b[off:off + 4])
            if pflags & SSH2_FXF_WRITE:
                return bytes([102]) + u32(rid) + \
                    sstr(self.handle(["sink", None]))
            n = self.nodes.get(self.key(path))
            if n is None or "file" not in n:
                return status(FX_NO_SUCH_FILE)
            return bytes([102]) + u32(rid) + \
                sstr(self.handle(["file", n["file"].encode()]))
        if t in (12, 5, 8, 4, 6, 10):                   # by handle
            h, off = getstr(0)
            what = self.handles.get(h)
            if what is None:
                return status(FX_FAILURE)
            if t == 4:                                  # CLOSE
                del self.handles[h]
                return status(FX_OK)
            if t == 12:                                 # READDIR
                if what[0] != "dir" or what[1] is None:
                    return status(FX_EOF)
                ents, what[1] = what[1], None
                out = bytes([104]) + u32(rid) + u32(len(ents))
                for ename, etype, size in ents:
                    e = ename.encode()
                    ln = ("%s 1 root root %d Nov 14 2023 %s" % (
                        "drwxr-xr-x" if etype == "d" else "-rw-r--r--",
                        size, ename)).encode()
                    out += sstr(e) + sstr(ln) + attrs(etype, size)
                return out
            if t == 5:                                  # READ
                if what[0] != "file":
                    return status(FX_FAILURE)
                (offset,) = struct.unpack(">Q", b[off:off + 8])
                (ln,) = struct.unpack(">I", b[off + 8:off + 12])
                data = what[1][offset:offset + ln]
                if self.empty_reads:
                    return bytes([103]) + u32(rid) + sstr(b"")
                if not data:
                    return status(FX_EOF)
                return bytes([103]) + u32(rid) + sstr(data)
            if t == 8:                                  # FSTAT
                if what[0] == "file":
                    return bytes([105]) + u32(rid) + \
                        attrs("f", len(what[1]))
                return status(FX_OP_UNSUPPORTED)
            return status(FX_OK)                        # WRITE, FSETSTAT
        if t in (14, 9):                                # MKDIR, SETSTAT
            return status(FX_OK)
        return status(FX_OP_UNSUPPORTED)


def main():
    if len(sys.argv) < 3:
        sys.stderr.write("usage: sftpfake.py SPEC LOG\n")
        return 2
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    log = open(sys.argv[2], "a")
    fake = Fake(spec, log)
    buf = bytearray()
    deadline = time.monotonic() + TIMEOUT
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            fake.note("TIMEOUT")
            return 1
        r, _, _ = select.select([0], [], [], left)
        if not r:
            continue
        chunk = os.read(0, 1 << 16)
        if not chunk:
            return 0
        buf += chunk
        out = bytearray()
        while len(buf) >= 4:
            (n,) = struct.unpack(">I", buf[:4])
            if len(buf) < 4 + n:
                break
            body = bytes(buf[4:4 + n])
            del buf[:4 + n]
            if body[0] == 1:                            # INIT
                fake.note("INIT")
                out += sstr(bytes([2]) + u32(3))
                continue
            (rid,) = struct.unpack(">I", body[1:5])
            out += sstr(fake.answer(body[0], rid, body[5:]))
        try:
            while out:
                out = out[os.write(1, out):]
        except OSError:
            return 0


if __name__ == "__main__":
    sys.exit(main())
