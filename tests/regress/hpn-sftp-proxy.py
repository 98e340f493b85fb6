#!/usr/bin/python3
"""SFTP proxy for the hpn-sftp-tree regress test.

  hpn-sftp-proxy.py --report FILE [--handles N | --no-limits]
      [--delay SECONDS] [--inject NAME] -- SERVER [ARGS...]

Runs SERVER (an sftp-server) and relays SFTP packets between it and its
own stdin/stdout (the client: sftp -D, scp -D), watching them:

  depth     every request gets 1 + the highest depth among the replies the
            client had been given before it arrived; replies are held back
            --delay seconds (default 0.2), so requests the client sends
            without waiting for a reply arrive before it and share a depth.
            The highest depth is the number of round trips in series.
  handles   HANDLE replies open one, an answered CLOSE of it closes it; the
            most open at once is reported, and every time more were open
            than the client was allowed (--handles N: the limits@openssh.com
            reply says N; --no-limits: the server appears to have no limits
            extension, the client's default applies, checked against
            --default-handles).

  inject    (a misbehaving server) NAME is added to the first reply of
            each directory listing (each handle READDIRs name: the
            OPENDIR's and the tree's that go with INIT are two, and the
            client reads one of them), as a regular file of 1 byte.
  bytes     the file data carried: read_bytes in DATA replies,
            write_bytes in WRITE requests.
  rate      --rate BYTES: at most that many bytes a second each way (a
            slow path, to interrupt a transfer in its middle).
  hashes    the algorithms hash-range@hpn-patch-set.invalid requests offer
            (hash_offered) and its replies use (hash_used); --hash-lacks
            NAME takes NAME out of each request's list, as a server
            without it would pass over it (one built without libxxhash,
            an older one).

The report (FILE, written at the end): "key value" lines: max_depth,
max_handles, allowed, over (times above allowed), requests, opens,
read_bytes, write_bytes, hash_offered and hash_used (the lists of the
first request and reply, "-" without any),
plus "depth N TYPE" for every request.  Bounded: it ends when either side
closes, and after --timeout seconds (default 300) at the latest.
"""

import argparse
import os
import select
import struct
import subprocess
import sys
import threading
import time

from sftpwire import frames

INIT, VERSION, OPEN, CLOSE, WRITE, OPENDIR = 1, 2, 3, 4, 6, 11
STATUS, HANDLE, DATA, NAME, EXTENDED, EXTENDED_REPLY = (101, 102, 103, 104,
                                                       200, 201)
READDIR = 12
OP_UNSUPPORTED = 8
HASH_EXT = b"hash-range@hpn-patch-set.invalid"

NAMES = {1: "INIT", 3: "OPEN", 4: "CLOSE", 5: "READ", 6: "WRITE", 7: "LSTAT",
         8: "FSTAT", 9: "SETSTAT", 10: "FSETSTAT", 11: "OPENDIR",
         12: "READDIR", 13: "REMOVE", 14: "MKDIR", 15: "RMDIR",
         16: "REALPATH", 17: "STAT", 18: "RENAME", 19: "READLINK",
         20: "SYMLINK", 200: "EXTENDED"}


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--report", required=True)
    p.add_argument("--handles", type=int, default=None)
    p.add_argument("--no-limits", action="store_true")
    p.add_argument("--default-handles", type=int, default=64)
    p.add_argument("--delay", type=float, default=0.2)
    p.add_argument("--timeout", type=float, default=300)
    p.add_argument("--inject", default=None)
    p.add_argument("--rate", type=float, default=0)
    p.add_argument("--hash-lacks", default=None)
    p.add_argument("server", nargs=argparse.REMAINDER)
    a = p.parse_args()
    if a.server and a.server[0] == "--":
        a.server = a.server[1:]
    if not a.server:
        p.error("no server")
    return a


def sstr(b, off):
    (n,) = struct.unpack(">I", b[off:off + 4])
    return b[off + 4:off + 4 + n], off + 4 + n


def pack(body):
    return struct.pack(">I", len(body)) + body


class State:
    def __init__(self, a):
        self.a = a
        self.lock = threading.Lock()
        self.depth = {}           # request id -> depth
        self.kind = {}            # request id -> type
        self.listing_of = {}      # READDIR id -> the handle it names
        self.injected = set()     # ... handles whose listing has --inject
        self.close_of = {}        # CLOSE id -> handle
        self.made_by = {}         # OPEN/OPENDIR id -> handle it made
        self.limits_id = None
        self.delivered = 0        # highest depth the client was given
        self.log = []             # (depth, type)
        self.open = set()
        self.max_open = 0
        self.over = 0
        self.opens = 0
        self.read_bytes = 0
        self.write_bytes = 0
        self.hash_ids = set()
        self.hash_offered = None  # the first request's list
        self.hash_used = None     # the first reply's algorithm
        if a.handles is not None:
            self.allowed = a.handles
        elif a.no_limits:
            self.allowed = a.default_handles
        else:
            self.allowed = 0      # the server's own figure, filled in

    def request(self, body):
        t = body[0]
        if t == INIT:
            d = self.delivered + 1
            self.log.append((d, "INIT"))
            return body
        (rid,) = struct.unpack(">I", body[1:5])
        d = self.delivered + 1
        self.depth[rid] = d
        self.kind[rid] = t
        self.log.append((d, NAMES.get(t, str(t))))
        if t == CLOSE:
            h, _ = sstr(body, 5)
            self.close_of[rid] = h
        if t == READDIR:
            self.listing_of[rid] = sstr(body, 5)[0]
        if t == WRITE:
            _, off = sstr(body, 5)
            data, _ = sstr(body, off + 8)
            self.write_bytes += len(data)
        if t == EXTENDED:
            name, off = sstr(body, 5)
            if name == b"limits@openssh.com":
                self.limits_id = rid
            if name == HASH_EXT:
                self.hash_ids.add(rid)
                _, off = sstr(body, off)        # handle
                algs, end = sstr(body, off)
                if self.hash_offered is None:
                    self.hash_offered = algs.decode()
                if self.a.hash_lacks is not None:
                    algs = b",".join(n for n in algs.split(b",")
                                     if n != self.a.hash_lacks.encode())
                    body = (body[:off] + struct.pack(">I", len(algs)) +
                            algs + body[end:])
        return body

    def resolve(self, h):
        """A handle reference (handle-ref@hpn-patch-set.invalid: 0xff and
        request ids) stands for the handle the first of those requests
        made that is still open."""
        if h is None or len(h) < 5 or h[0] != 0xff or (len(h) - 1) % 4:
            return h
        for k in range(1, len(h), 4):
            (oid,) = struct.unpack(">I", h[k:k + 4])
            made = self.made_by.get(oid)
            if made is not None and made in self.open:
                return made
        return h

    def reply(self, body):
        """The reply as the client gets it, and its depth."""
        t = body[0]
        if t == VERSION:
            if self.a.no_limits:
                # drop the extension pair from the hello
                out = bytearray(body[:5])
                off = 5
                while off < len(body):
                    n, off2 = sstr(body, off)
                    v, off3 = sstr(body, off2)
                    if n != b"limits@openssh.com":
                        out += body[off:off3]
                    off = off3
                body = bytes(out)
            return body, 1
        (rid,) = struct.unpack(">I", body[1:5])
        d = self.depth.pop(rid, 0)
        k = self.kind.pop(rid, None)
        if t == DATA:
            data, _ = sstr(body, 5)
            self.read_bytes += len(data)
        if rid in self.hash_ids:
            self.hash_ids.discard(rid)
            if t == EXTENDED_REPLY and self.hash_used is None:
                self.hash_used = sstr(body, 5)[0].decode()
        if t == HANDLE and k in (OPEN, OPENDIR):
            h, _ = sstr(body, 5)
            self.made_by[rid] = h
            self.open.add(h)
            self.opens += 1
            if len(self.open) > self.max_open:
                self.max_open = len(self.open)
            if self.allowed and len(self.open) > self.allowed:
                self.over += 1
        if k == CLOSE:
            h = self.resolve(self.close_of.pop(rid, None))
            if t == STATUS and struct.unpack(">I", body[5:9])[0] == 0:
                self.open.discard(h)
        lh = self.listing_of.pop(rid, None) if k == READDIR else None
        if (k == READDIR and t == NAME and self.a.inject is not None and
                lh not in self.injected):
            self.injected.add(lh)
            n = self.a.inject.encode()
            (count,) = struct.unpack(">I", body[5:9])
            # flags SIZE|PERMISSIONS, size 1, a regular file, mode 0644
            body = (body[:5] + struct.pack(">I", count + 1) + body[9:] +
                    struct.pack(">I", len(n)) + n + struct.pack(">I", len(n)) +
                    n + struct.pack(">IQI", 0x5, 1, 0o100644))
        if rid == self.limits_id and t == EXTENDED_REPLY:
            if self.a.no_limits:
                body = (bytes([STATUS]) + body[1:5] +
                        struct.pack(">I", OP_UNSUPPORTED) +
                        struct.pack(">I", 0) + struct.pack(">I", 0))
            else:
                vals = list(struct.unpack(">QQQQ", body[5:37]))
                if self.a.handles is not None:
                    vals[3] = self.a.handles
                else:
                    self.allowed = vals[3]
                body = body[:5] + struct.pack(">QQQQ", *vals) + body[37:]
        return body, d


def main():
    a = parse()
    st = State(a)
    srv = subprocess.Popen(a.server, stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE)
    deadline = time.monotonic() + a.timeout
    queue = []                    # (due, bytes, depth), in order
    free_at = [0.0]               # --rate: when the path is free again
    qcond = threading.Condition()
    done = {"server": False}

    def deliver():
        while True:
            with qcond:
                while not queue and not done["server"]:
                    qcond.wait(0.5)
                if not queue and done["server"]:
                    return
                due, data, d = queue[0]
                now = time.monotonic()
                if due > now:
                    qcond.wait(due - now)
                    continue
                queue.pop(0)
            # given before it is written: a request the client sends on
            # reading it may reach us before os.write() returns (counting
            # it one deeper than a request sent just before is the safe
            # side)
            with st.lock:
                if d > st.delivered:
                    st.delivered = d
            try:
                while data:
                    data = data[os.write(1, data):]
            except OSError:
                return

    def from_server():
        buf = bytearray()
        while True:
            try:
                chunk = os.read(srv.stdout.fileno(), 1 << 20)
            except OSError:
                chunk = b""
            if not chunk:
                break
            buf += chunk
            for body in frames(buf):
                with st.lock:
                    body, d = st.reply(body)
                due = time.monotonic() + a.delay
                if a.rate > 0:
                    due = max(due, free_at[0])
                    free_at[0] = due + (len(body) + 4) / a.rate
                with qcond:
                    queue.append((due, pack(body), d))
                    qcond.notify()
        with qcond:
            done["server"] = True
            qcond.notify()

    tw = threading.Thread(target=deliver, daemon=True)
    tr = threading.Thread(target=from_server, daemon=True)
    tw.start()
    tr.start()
    buf = bytearray()
    while time.monotonic() < deadline:
        r, _, _ = select.select([0], [], [], 1.0)
        if not r:
            if not tr.is_alive():
                break
            continue
        chunk = os.read(0, 1 << 20)
        if not chunk:
            break
        buf += chunk
        out = bytearray()
        for body in frames(buf):
            with st.lock:
                out += pack(st.request(body))
        try:
            srv.stdin.write(out)
            srv.stdin.flush()
        except OSError:
            break
        if a.rate > 0:
            time.sleep(len(out) / a.rate)
    try:
        srv.stdin.close()
    except OSError:
        pass
    tr.join(max(1.0, deadline - time.monotonic()))
    tw.join(max(1.0, deadline - time.monotonic() + a.delay))
    try:
        srv.wait(5)
    except subprocess.TimeoutExpired:
        srv.kill()
        srv.wait()
    with st.lock:
        maxd = max([d for d, _ in st.log] or [0])
        with open(a.report + ".tmp", "w") as f:
            f.write("max_depth %d\n" % maxd)
            f.write("max_handles %d\n" % st.max_open)
            f.write("allowed %d\n" % st.allowed)
            f.write("over %d\n" % st.over)
            f.write("requests %d\n" % len(st.log))
            f.write("opens %d\n" % st.opens)
            f.write("read_bytes %d\n" % st.read_bytes)
            f.write("write_bytes %d\n" % st.write_bytes)
            f.write("hash_offered %s\n" % (st.hash_offered or "-"))
            f.write("hash_used %s\n" % (st.hash_used or "-"))
            for d, t in st.log:
                f.write("depth %d %s\n" % (d, t))
        os.rename(a.report + ".tmp", a.report)
    return 0


if __name__ == "__main__":
    # SIGPIPE stays ignored (Python's default): a client that dies (a
    # test kills it) ends the relay, and the report is still written
    sys.exit(main())
