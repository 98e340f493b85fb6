#!/usr/bin/python3
"""A made-up SFTP v3 server on standard input/output, for
tests/security/cve-2026-106552.sh (run by sftp -D).

  sftpfake.py NAME LOG

Its tree (every directory 0755 but /tmp, 01777; no file is ever written):
  /                first listing: "" (a directory: the flaw's name) and
                   "x"; every later listing: "tmp" only
  /x/f             "inside\\n"
  /x/.             listed as a regular file (a "." no walk may open)
  /tmp/NAME/loot   "loot\\n"
REALPATH of "." is "/", so a client's working directory is "/".  Requests
are answered by id; any other request type gets SSH_FX_OP_UNSUPPORTED.
Every request's type and path go to LOG.  Ends at end of input; reads
wait at most TIMEOUT seconds.
"""

import select
import struct
import sys
import time

TIMEOUT = 60
DIR, REG = 0o040755, 0o100644


def s(b):
    if isinstance(b, str):
        b = b.encode()
    return struct.pack(">I", len(b)) + b


def attrs(mode, size=0):
    # SIZE | UIDGID | PERMISSIONS | ACMODTIME
    return struct.pack(">IQIIIII", 0xf, size, 0, 0, mode, 1700000000,
                       1700000000)


class Fake:
    def __init__(self, name, log):
        self.log = log
        self.roots_listed = 0
        self.tree = {
            "/": (DIR, None),
            "/x": (DIR, None),
            "/x/f": (REG, b"inside\n"),
            "/tmp": (0o041777, None),
            "/tmp/" + name: (DIR, None),
            "/tmp/" + name + "/loot": (REG, b"loot\n"),
        }
        self.handles = {}
        self.next_handle = 0

    def listing(self, path):
        if path == "/":
            self.roots_listed += 1
            if self.roots_listed == 1:
                return [("", DIR, 0), ("x", DIR, 0)]
            return [("tmp", 0o041777, 0)]
        if path == "/x":
            return [(".", REG, 0), ("f", REG, 7)]
        out = []
        for p, (mode, data) in sorted(self.tree.items()):
            if p != path and p.rsplit("/", 1)[0] == path:
                out.append((p.rsplit("/", 1)[1], mode,
                            len(data) if data else 0))
        return out

    def norm(self, p):
        if p in ("", "."):
            return "/"
        if not p.startswith("/"):
            p = "/" + p
        while len(p) > 1 and p.endswith("/"):
            p = p[:-1]
        parts = []
        for c in p.split("/"):
            if c in ("", "."):
                continue
            if c == "..":
                if parts:
                    parts.pop()
                continue
            parts.append(c)
        return "/" + "/".join(parts)

    def status(self, rid, code, msg=""):
        return struct.pack(">BII", 101, rid, code) + s(msg) + s("")

    def handle(self, obj):
        h = ("h%d" % self.next_handle).encode()
        self.next_handle += 1
        self.handles[h] = obj
        return h

    def answer(self, pkt):
        t = pkt[0]
        if t == 1:          # INIT
            return struct.pack(">BI", 2, 3)
        (rid,) = struct.unpack(">I", pkt[1:5])
        body = pkt[5:]

        def path_arg():
            (n,) = struct.unpack(">I", body[:4])
            return body[4:4 + n].decode("utf-8", "replace")

        if t in (16, 17, 7, 11, 3):
            p = path_arg()
            self.log.write("%d %s\n" % (t, p))
            np = self.norm(p)
            if t == 16:     # REALPATH
                return (struct.pack(">BII", 104, rid, 1) + s(np) + s(np) +
                        attrs(DIR))
            if np not in self.tree:
                return self.status(rid, 2, "No such file")
            mode, data = self.tree[np]
            if t in (17, 7):    # STAT, LSTAT
                return (struct.pack(">BI", 105, rid) +
                        attrs(mode, len(data) if data else 0))
            if t == 11:         # OPENDIR
                if data is not None:
                    return self.status(rid, 4, "Not a directory")
                return (struct.pack(">BI", 102, rid) +
                        s(self.handle(["dir", self.listing(np)])))
            (pflags,) = struct.unpack(">I", body[4 + len(p.encode()):
                                                8 + len(p.encode())])
            if data is None or pflags & 0x3e:   # OPEN: files, for reading
                return self.status(rid, 3, "Permission denied")
            return struct.pack(">BI", 102, rid) + s(self.handle(["file", data]))
        self.log.write("%d\n" % t)
        if t in (12, 5, 4, 8):  # READDIR, READ, CLOSE, FSTAT
            (n,) = struct.unpack(">I", body[:4])
            h = body[4:4 + n]
            obj = self.handles.get(h)
            if obj is None:
                return self.status(rid, 4, "Bad handle")
            if t == 4:
                del self.handles[h]
                return self.status(rid, 0)
            if t == 8:
                if obj[0] == "file":
                    return struct.pack(">BI", 105, rid) + attrs(REG, len(obj[1]))
                return struct.pack(">BI", 105, rid) + attrs(DIR)
            if t == 12:
                if obj[0] != "dir" or not obj[1]:
                    return self.status(rid, 1, "EOF")
                ents, obj[1] = obj[1], []
                out = struct.pack(">BII", 104, rid, len(ents))
                for name, mode, size in ents:
                    out += s(name) + s(name) + attrs(mode, size)
                return out
            # READ
            off, ln = struct.unpack(">QI", body[4 + n:16 + n])
            if obj[0] != "file" or off >= len(obj[1]):
                return self.status(rid, 1, "EOF")
            return struct.pack(">BI", 103, rid) + s(obj[1][off:off + ln])
        return self.status(rid, 8, "Unsupported")


def main():
    name, logname = sys.argv[1], sys.argv[2]
    fin, fout = sys.stdin.buffer, sys.stdout.buffer
    with open(logname, "a") as log:
        fake = Fake(name, log)
        buf = b""
        deadline = time.time() + TIMEOUT
        while time.time() < deadline:
            r, _, _ = select.select([fin], [], [], 1.0)
            if not r:
                continue
            d = fin.raw.read(65536) if hasattr(fin, "raw") else fin.read1(65536)
            if not d:
                return 0
            buf += d
            while len(buf) >= 4:
                (n,) = struct.unpack(">I", buf[:4])
                if len(buf) < 4 + n:
                    break
                pkt, buf = buf[4:4 + n], buf[4 + n:]
                out = fake.answer(pkt)
                fout.write(struct.pack(">I", len(out)) + out)
                fout.flush()
                log.flush()
    return 1


if __name__ == "__main__":
    sys.exit(main())
