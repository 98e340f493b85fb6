#!/usr/bin/python3
"""A hostile SFTP server for the hpn-sftp-hostile regress test.

  hpn-sftp-hostile.py [--log FILE] --rule RULE [--rule RULE...]
      -- SERVER [ARGS...]

Runs SERVER (a real sftp-server) and relays SFTP packets between it and its
own stdin/stdout (the client: sftp -D, scp -D), every request to the
server, every reply back, but for the replies that a rule replaces.

A RULE is TYPE:NTH:ACTION[:ARG]: the NTH request of TYPE (a name such as
REALPATH, OPEN, READ, or "*" for any; NTH from 1, or "*" for every one)
gets, instead of the server's reply.  TREE is the EXTENDED request that
opens a tree (tree@hpn-patch-set.invalid), TREEDIR a READDIR of such a
handle (or of a reference to its request):

  status:N      a STATUS of code N (0 is OK) and no message
  type:T        a reply of type T (STATUS, HANDLE, DATA, NAME, ATTRS,
                EXTENDED_REPLY, or a number) with a well-formed body
  id:new        the server's reply with an id never used (0xfffffff0)
  id:old        the server's reply with the id of a request already
                answered (the first one's)
  id:zero       the server's reply with the id 0 (no request of ours has
                it)
  id:twice      the server's reply, then the same again
  trunc         the server's reply cut after its id
  handle:LEN    a HANDLE of LEN bytes
  name:STR      a NAME of one entry STR (a regular file of 1 byte);
                "name:" is the empty name
  names:STR     for READDIR: the server's reply with one more entry STR
                (a regular file of 1 byte), "a/b", "..", and so on
  count:N       a NAME that says N entries and carries one
  data:N        a DATA of N bytes (of 'x')
  size:N        ATTRS of a regular file of N bytes (N may be 2^64-1)
  dirsize:N     ATTRS of a directory (the server's size N)
  eof           a STATUS EOF to a READ, and every later READ of the same
                handle at a higher offset gets the server's data (a server
                that says EOF too early, then sends data beyond it)
  hangup        the connection closes there (the client sees its end)
  late          the server's reply, held back and sent after the next
                reply (a server that answers out of order)
  tname:F:K:STR for a tree's READDIR: the server's reply with one more
                entry STR (relative to the tree's top) of flags F ("d":
                its entries follow) and kind K (d: a directory, f: a file
                of 1 byte)
  tdeep:N       for a tree's READDIR: the server's reply with N more
                entries, directories z, z/z, z/z/z... each flagged "d"

With several rules the first that matches a request takes it: a rule
counts (NTH) the requests of its TYPE that no rule before it took, so
"REALPATH:1:id:zero REALPATH:1:id:zero" is the first two REALPATHs.

The relay ends when either side closes, and after --timeout seconds (60)
at the latest.  --log FILE gets a line for each reply replaced.
--instance FILE:N: the rules apply only to the Nth relay started with the
same FILE (scp -n: the first connection is 1, the others follow).
--rate BYTES: requests and replies pass at that many bytes a second at
most each way (so that scp -n's other connections join before the end).
--dump DIR: every reply the client gets is also written to DIR/NNNN, after
a byte naming the type its request wanted (tests/fuzz's xfer_proto seeds).
"""

import argparse
import fcntl
import os
import select
import struct
import subprocess
import sys
import time

from sftpwire import frames

TREE_EXT = b"tree@hpn-patch-set.invalid"

INIT, VERSION = 1, 2
NAMES = {1: "INIT", 3: "OPEN", 4: "CLOSE", 5: "READ", 6: "WRITE",
         7: "LSTAT", 8: "FSTAT", 9: "SETSTAT", 10: "FSETSTAT",
         11: "OPENDIR", 12: "READDIR", 13: "REMOVE", 14: "MKDIR",
         15: "RMDIR", 16: "REALPATH", 17: "STAT", 18: "RENAME",
         19: "READLINK", 20: "SYMLINK", 200: "EXTENDED"}
TYPES = {"STATUS": 101, "HANDLE": 102, "DATA": 103, "NAME": 104,
         "ATTRS": 105, "EXTENDED_REPLY": 201}
STATUS, HANDLE, DATA, NAME, ATTRS = 101, 102, 103, 104, 105


def u32(n):
    return struct.pack(">I", n & 0xffffffff)


def sstr(b):
    return u32(len(b)) + b


def attrs_file(size, mode=0o100644):
    # SIZE | PERMISSIONS | ACMODTIME
    return u32(0x1 | 0x4 | 0x8) + struct.pack(">Q", size) + u32(mode) + \
        u32(1700000000) + u32(1700000000)


class Rule:
    def __init__(self, spec):
        parts = spec.split(":", 3)
        if len(parts) < 3:
            raise SystemExit("bad rule " + spec)
        self.type = parts[0]
        self.nth = parts[1]
        self.action = parts[2]
        self.arg = parts[3] if len(parts) > 3 else ""
        self.seen = 0

    def matches(self, tname):
        if self.type != "*" and self.type != tname:
            return False
        self.seen += 1
        return self.nth == "*" or self.seen == int(self.nth)


# the reply each request wants when it succeeds
WANTS = {"OPEN": HANDLE, "OPENDIR": HANDLE, "READ": DATA, "READDIR": NAME,
         "TREE": HANDLE, "TREEDIR": NAME,
         "REALPATH": NAME, "READLINK": NAME, "STAT": ATTRS, "LSTAT": ATTRS,
         "FSTAT": ATTRS, "EXTENDED": 201}


class Relay:
    def __init__(self, a):
        self.dump = a.dump
        self.ndump = 0
        self.rules = [Rule(r) for r in a.rule]
        self.log = open(a.log, "a") if a.log else None
        self.kind = {}          # request id -> (type name, rule, handle, off)
        self.first_id = None
        self.eofh = {}          # handle -> offset of an early EOF
        self.hang = False
        self.held = None        # a reply sent after the next one (late)
        self.tree_ids = set()   # the ids of TREE requests
        self.tree_handles = set()   # ... and the handles they made

    def note(self, s):
        if self.log:
            self.log.write(s + "\n")
            self.log.flush()

    def request(self, body):
        t = body[0]
        if t == INIT:
            return
        (rid,) = struct.unpack(">I", body[1:5])
        if self.first_id is None:
            self.first_id = rid
        tname = NAMES.get(t, str(t))
        handle, off = None, None
        if t in (5, 6, 12) and len(body) >= 9:
            (n,) = struct.unpack(">I", body[5:9])
            handle = body[9:9 + n]
            if len(body) >= 17 + n:
                (off,) = struct.unpack(">Q", body[9 + n:17 + n])
        if t == 200 and body[5:9 + len(TREE_EXT)] == \
                struct.pack(">I", len(TREE_EXT)) + TREE_EXT:
            tname = "TREE"
            self.tree_ids.add(rid)
        if t == 12 and handle is not None and (
                handle in self.tree_handles or
                (handle[:1] == b"\xff" and len(handle) % 4 == 1 and any(
                    struct.unpack(">I", handle[i:i + 4])[0] in
                    self.tree_ids for i in range(1, len(handle), 4)))):
            tname = "TREEDIR"
        rule = None
        for r in self.rules:
            if r.matches(tname):
                rule = r
                break
        self.kind[rid] = (tname, rule, handle, off)

    def reply(self, body):
        """The replies the client gets for the server's reply body."""
        held, self.held = self.held, None
        out = self.replace(body)
        return out + [held] if held is not None else out

    def replace(self, body):
        """reply(), but for a reply held back (late)."""
        if body[0] == VERSION:
            return [body]
        (rid,) = struct.unpack(">I", body[1:5])
        tname, rule, handle, off = self.kind.pop(rid, ("?", None, None,
                                                       None))
        if tname == "TREE" and body[0] == HANDLE and len(body) >= 9:
            (n,) = struct.unpack(">I", body[5:9])
            self.tree_handles.add(body[9:9 + n])
        if self.dump:
            want = WANTS.get(tname, STATUS)
            with open("%s/%04d" % (self.dump, self.ndump), "wb") as f:
                f.write(bytes([[STATUS, HANDLE, DATA, NAME, ATTRS,
                                201].index(want)]) + body)
            self.ndump += 1
        if rule is None:
            if tname == "READ" and handle in self.eofh and \
                    off is not None and off > self.eofh[handle]:
                self.note("READ %d: data after the early EOF" % rid)
            return [body]
        act, arg = rule.action, rule.arg
        self.note("%s %d: %s:%s" % (tname, rid, act, arg))
        hdr = body[1:5]
        if act == "status":
            return [bytes([STATUS]) + hdr + u32(int(arg)) + sstr(b"") +
                    sstr(b"")]
        if act == "type":
            t = TYPES.get(arg) or int(arg)
            rest = {STATUS: u32(0) + sstr(b"") + sstr(b""),
                    HANDLE: sstr(b"\0\0\0\0"),
                    DATA: sstr(b"x"),
                    NAME: u32(1) + sstr(b"x") + sstr(b"x") + attrs_file(1),
                    ATTRS: attrs_file(1)}.get(t, b"")
            return [bytes([t]) + hdr + rest]
        if act == "id":
            if arg == "new":
                return [body[:1] + u32(0xfffffff0) + body[5:]]
            if arg == "old":
                return [body[:1] + u32(self.first_id) + body[5:]]
            if arg == "zero":
                return [body[:1] + u32(0) + body[5:]]
            return [body, body]
        if act == "trunc":
            return [body[:5]]
        if act == "handle":
            return [bytes([HANDLE]) + hdr + sstr(b"h" * int(arg))]
        if act == "name":
            n = arg.encode()
            return [bytes([NAME]) + hdr + u32(1) + sstr(n) + sstr(n) +
                    attrs_file(1)]
        if act == "names":
            if body[0] != NAME:
                return [body]
            (count,) = struct.unpack(">I", body[5:9])
            n = arg.encode()
            return [bytes([NAME]) + hdr + u32(count + 1) + body[9:] +
                    sstr(n) + sstr(n) + attrs_file(1)]
        if act in ("tname", "tdeep"):
            if body[0] != NAME:
                return [body]
            (count,) = struct.unpack(">I", body[5:9])
            add = []
            if act == "tname":
                fl, kind, n = arg.split(":", 2)
                add.append((n.encode(), fl.encode(), kind == "d"))
            else:
                add = [(b"/".join([b"z"] * (i + 1)), b"d", True)
                       for i in range(int(arg))]
            extra = b"".join(sstr(n) + sstr(fl) +
                             attrs_file(1, 0o40755 if d else 0o100644)
                             for n, fl, d in add)
            return [bytes([NAME]) + hdr + u32(count + len(add)) +
                    body[9:] + extra]
        if act == "count":
            return [bytes([NAME]) + hdr + u32(int(arg)) + sstr(b"x") +
                    sstr(b"x") + attrs_file(1)]
        if act == "data":
            return [bytes([DATA]) + hdr + sstr(b"x" * int(arg))]
        if act == "size":
            return [bytes([ATTRS]) + hdr + attrs_file(int(arg))]
        if act == "dirsize":
            return [bytes([ATTRS]) + hdr + attrs_file(int(arg), 0o40755)]
        if act == "eof":
            if handle is not None and off is not None:
                self.eofh[handle] = off
            return [bytes([STATUS]) + hdr + u32(1) + sstr(b"") + sstr(b"")]
        if act == "late":
            self.held = body
            return []
        if act == "hangup":
            self.hang = True
            return []
        raise SystemExit("unknown action " + act)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rule", action="append", default=[])
    p.add_argument("--log", default=None)
    p.add_argument("--timeout", type=float, default=60)
    p.add_argument("--instance", default=None)
    p.add_argument("--rate", type=float, default=0)
    p.add_argument("--dump", default=None)
    p.add_argument("server", nargs=argparse.REMAINDER)
    a = p.parse_args()
    if a.server and a.server[0] == "--":
        a.server = a.server[1:]
    if not a.server:
        p.error("no server")
    if a.instance:
        path, want = a.instance.rsplit(":", 1)
        with open(path, "a+") as f:
            fcntl.lockf(f, fcntl.LOCK_EX)
            f.seek(0)
            n = len(f.read().splitlines()) + 1
            f.write("%d\n" % os.getpid())
        if n != int(want):
            a.rule = []
    rl = Relay(a)
    srv = subprocess.Popen(a.server, stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE)
    sfd = srv.stdout.fileno()
    cbuf, sbuf = bytearray(), bytearray()
    deadline = time.monotonic() + a.timeout
    open_in = True
    while time.monotonic() < deadline and not rl.hang:
        fds = [sfd] + ([0] if open_in else [])
        r, _, _ = select.select(fds, [], [], 1.0)
        if 0 in r:
            try:
                chunk = os.read(0, 1 << 20)
            except OSError:
                chunk = b""
            if not chunk:
                open_in = False
                srv.stdin.close()
            else:
                cbuf += chunk
                out = bytearray()
                for body in frames(cbuf):
                    rl.request(body)
                    out += u32(len(body)) + body
                try:
                    srv.stdin.write(out)
                    srv.stdin.flush()
                except OSError:
                    break
                if a.rate > 0:
                    time.sleep(len(out) / a.rate)
        if sfd in r:
            try:
                chunk = os.read(sfd, 1 << 20)
            except OSError:
                chunk = b""
            if not chunk:
                break
            sbuf += chunk
            out = bytearray()
            for body in frames(sbuf):
                for rep in rl.reply(body):
                    out += u32(len(rep)) + rep
                if rl.hang:
                    break
            n = len(out)
            try:
                while out:
                    out = out[os.write(1, out):]
            except OSError:
                break
            if a.rate > 0:
                time.sleep(n / a.rate)
    try:
        os.close(1)
    except OSError:
        pass
    if srv.poll() is None:
        srv.kill()
    srv.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
