#!/usr/bin/python3
"""Asks an sftp-server for one copy-data (a client of our own, on pipes).

  sftpcopy.py SFTP_SERVER DIR CASE

Runs SFTP_SERVER in DIR with its file size limit (RLIMIT_FSIZE) at 8 MiB
and SIGXFSZ ignored, so that a copy without end stops there with EFBIG,
then, by CASE:

  dotslash  OPEN "f" to read, OPEN "./f" to write with APPEND, copy-data
            of f until EOF (length 0) into the second handle
  hardlink  OPEN "f" to read, OPEN "g" (a hard link to f, made here) to
            write, copy-data of f until EOF at g's offset f's size
  devzero   OPEN "/dev/zero" to read, OPEN "out" (new) to write, copy-data
            until EOF
  control   OPEN "f" to read, OPEN "h" (new) to write, copy-data until EOF

Prints "status=N" (the copy-data's SSH_FXP_STATUS code) and exits 0, or
names what went wrong and exits 1.  The server's stderr (-e -l DEBUG) is
DIR/server.log.  Every read from the server is bounded (TIMEOUT).
"""

import os
import resource
import select
import signal
import struct
import subprocess
import sys

TIMEOUT = 60
FSIZE = 8 << 20

SSH_FXP_INIT, SSH_FXP_VERSION, SSH_FXP_OPEN = 1, 2, 3
SSH_FXP_STATUS, SSH_FXP_HANDLE, SSH_FXP_EXTENDED = 101, 102, 200
READ, WRITE, APPEND, CREAT, TRUNC = 1, 2, 4, 8, 0x10


def s(b):
    if isinstance(b, str):
        b = b.encode()
    return struct.pack(">I", len(b)) + b


class Conn:
    def __init__(self, server, cwd):
        def child():
            resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE, FSIZE))
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        self.log = open(os.path.join(cwd, "server.log"), "wb")
        self.p = subprocess.Popen([server, "-e", "-l", "DEBUG"], cwd=cwd,
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.log,
                                  preexec_fn=child)
        self.id = 0

    def send(self, typ, body):
        m = bytes([typ]) + body
        self.p.stdin.write(struct.pack(">I", len(m)) + m)
        self.p.stdin.flush()

    def readn(self, n):
        b = b""
        while len(b) < n:
            r, _, _ = select.select([self.p.stdout], [], [], TIMEOUT)
            if not r:
                sys.exit("no reply from the server in %d s" % TIMEOUT)
            c = os.read(self.p.stdout.fileno(), n - len(b))
            if not c:
                sys.exit("the server closed its output")
            b += c
        return b

    def recv(self):
        n, = struct.unpack(">I", self.readn(4))
        m = self.readn(n)
        return m[0], m[1:]

    def request(self, typ, body):
        self.id += 1
        self.send(typ, struct.pack(">I", self.id) + body)
        t, m = self.recv()
        rid, = struct.unpack(">I", m[:4])
        if rid != self.id:
            sys.exit("reply id %d for request %d" % (rid, self.id))
        return t, m[4:]

    def open(self, name, flags):
        t, m = self.request(SSH_FXP_OPEN, s(name) + struct.pack(">II",
                                                                flags, 0))
        if t != SSH_FXP_HANDLE:
            sys.exit("OPEN %s: reply type %d" % (name, t))
        n, = struct.unpack(">I", m[:4])
        return m[4:4 + n]

    def close(self):
        self.p.stdin.close()
        try:
            self.p.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self.log.close()


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    server, d, case = sys.argv[1:]
    if case == "hardlink":
        os.link(os.path.join(d, "f"), os.path.join(d, "g"))
    c = Conn(server, d)
    c.send(SSH_FXP_INIT, struct.pack(">I", 3))
    t, m = c.recv()
    if t != SSH_FXP_VERSION or b"copy-data" not in m:
        sys.exit("no copy-data extension in the server's VERSION")
    woff = 0
    if case == "dotslash":
        rh = c.open("f", READ)
        wh = c.open("./f", WRITE | APPEND)
    elif case == "hardlink":
        rh = c.open("f", READ)
        wh = c.open("g", WRITE)
        woff = os.stat(os.path.join(d, "f")).st_size
    elif case == "devzero":
        rh = c.open("/dev/zero", READ)
        wh = c.open("out", WRITE | CREAT | TRUNC)
    elif case == "control":
        rh = c.open("f", READ)
        wh = c.open("h", WRITE | CREAT | TRUNC)
    else:
        sys.exit("unknown case %s" % case)
    t, m = c.request(SSH_FXP_EXTENDED, s("copy-data") + s(rh) +
                     struct.pack(">QQ", 0, 0) + s(wh) +
                     struct.pack(">Q", woff))
    if t != SSH_FXP_STATUS:
        sys.exit("copy-data: reply type %d" % t)
    print("status=%d" % struct.unpack(">I", m[:4]), flush=True)
    c.close()


if __name__ == "__main__":
    main()
