"""SFTP framing and a pipe client shared by the regress tests' Python
peers: the relays (hpn-sftp-proxy.py, hpn-sftp-hostile.py) take frames();
the clients that talk to an sftp-server directly (hpn-sftp-hashreq.py,
hpn-sftp-hostile-client.py) use Conn.  Bounded: every read waits at most
TIMEOUT seconds."""

import os
import select
import struct
import subprocess
import sys

TIMEOUT = 30


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def frames(buf):
    """Complete packets (type byte first) off the front of buf."""
    out = []
    while len(buf) >= 4:
        (n,) = struct.unpack(">I", buf[:4])
        if len(buf) < 4 + n:
            break
        out.append(bytes(buf[4:4 + n]))
        del buf[:4 + n]
    return out


def s(b):
    """An SSH string: its length, then its bytes."""
    return struct.pack(">I", len(b)) + b


def gets(b, off):
    """The string at off in b, and the offset after it."""
    (n,) = struct.unpack(">I", b[off:off + 4])
    return b[off + 4:off + 4 + n], off + 4 + n


class Conn:
    """An sftp-server (argv) on a pipe.  stderr: subprocess.PIPE to read
    the server's messages once it has ended (they must stay under a pipe's
    size until then), or None to leave them on ours."""

    def __init__(self, argv, stderr=None):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=stderr)
        self.id = 0
        self.buf = b""

    def send(self, body, length=None):
        """One packet; length: a length field other than body's."""
        n = len(body) if length is None else length
        self.p.stdin.write(struct.pack(">I", n) + body)
        self.p.stdin.flush()

    def recv(self):
        """The next message, or None once the server has closed."""
        while True:
            if len(self.buf) >= 4:
                (n,) = struct.unpack(">I", self.buf[:4])
                if len(self.buf) >= 4 + n:
                    m = self.buf[4:4 + n]
                    self.buf = self.buf[4 + n:]
                    return m
            r, _, _ = select.select([self.p.stdout], [], [], TIMEOUT)
            if not r:
                fail("no reply in %d s" % TIMEOUT)
            c = os.read(self.p.stdout.fileno(), 1 << 20)
            if not c:
                return None
            self.buf += c

    def req(self, t, payload, id=None):
        """Request type t with the next id (or id); the reply's type and
        what follows its id."""
        if id is None:
            self.id += 1
            id = self.id
        self.send(bytes([t]) + struct.pack(">I", id) + payload)
        m = self.recv()
        if m is None:
            fail("the server closed the connection (request type %d)" % t)
        (rid,) = struct.unpack(">I", m[1:5])
        if rid != id:
            fail("reply id %d for request %d" % (rid, id))
        return m[0], m[5:]
