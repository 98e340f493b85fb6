#!/usr/bin/python3
"""hpn-early-kexorder.py: a scripted SSH server that breaks the key
exchange's order, for tests/regress/hpn-early-guard.sh (issue 44).

  hpn-early-kexorder.py --port PORT --hostkey FILE --ready FILE --mode MODE
      [--record FILE --name NAME]

Serves one connection on 127.0.0.1:PORT.  The client is hpnssh with a
guessed curve25519-sha256 packet (EarlySend, the host recorded in its
EarlyHostsFile): the server reads the client's version string, KEXINIT
and guessed KEX_ECDH_INIT, then answers with KEX_ECDH_REPLY *before* its
own KEXINIT, signed with its RSA host key FILE (OpenSSH format) over the
exchange hash the client computes when it has no server KEXINIT yet (an
empty one).  Then:

  --mode first     reads what the client sends for 3 s, then closes.
  --mode kexinit   then sends its KEXINIT (the early-s marker, no strict
                   KEX) and a KEX_ECDH_REPLY over the right hash, and
                   reads what the client sends for 3 s.

Prints one line "RESULT types=T1,T2,..." (the message types the client
sent after its guess; "eof" when it closed the connection) and exits 0.
With --record FILE, first writes FILE as an EarlyHostsFile naming NAME
("[127.0.0.1]:PORT") with curve25519-sha256.  Every wait is bounded; it
exits after 30 s whatever happens.
"""

import argparse
import base64
import hashlib
import hmac
import os
import signal
import socket
import struct
import sys
import time

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, x25519

KEXINIT, ECDH_INIT, ECDH_REPLY = 20, 30, 31
BANNER = b"SSH-2.0-OpenSSH_10.3p1 scripted"


def string(b):
    return struct.pack(">I", len(b)) + b


def mpint_bytes(b):
    b = b.lstrip(b"\0")
    if b and b[0] & 0x80:
        b = b"\0" + b
    return string(b)


def mpint(n):
    return mpint_bytes(n.to_bytes((n.bit_length() + 7) // 8 or 1, "big"))


def packet(payload):
    """An unencrypted binary packet (block size 8, at least 4 of padding)."""
    pad = 8 - (len(payload) + 5) % 8
    if pad < 4:
        pad += 8
    return struct.pack(">IB", len(payload) + pad + 1, pad) + payload + \
        os.urandom(pad)


class Reader:
    def __init__(self, s):
        self.s = s
        self.buf = b""
        self.eof = False

    def fill(self, n, deadline):
        while len(self.buf) < n:
            self.s.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                d = self.s.recv(65536)
            except socket.timeout:
                return False
            if not d:
                self.eof = True
                return False
            self.buf += d
        return True

    def line(self, deadline):
        while b"\n" not in self.buf:
            if not self.fill(len(self.buf) + 1, deadline):
                return None
        l, self.buf = self.buf.split(b"\n", 1)
        return l.rstrip(b"\r")

    def packet(self, deadline):
        if not self.fill(5, deadline):
            return None
        plen, pad = struct.unpack(">IB", self.buf[:5])
        if plen > 65536 or not self.fill(4 + plen, deadline):
            return None
        payload = self.buf[5:4 + plen - pad]
        self.buf = self.buf[4 + plen:]
        return payload


def get_string(b, off):
    n = struct.unpack(">I", b[off:off + 4])[0]
    return b[off + 4:off + 4 + n], off + 4 + n


def record(path, name):
    salt = os.urandom(20)
    h = hmac.new(salt, name.encode(), hashlib.sha1).digest()
    with open(path, "w") as f:
        f.write("|1|%s|%s curve25519-sha256\n" % (
            base64.b64encode(salt).decode(), base64.b64encode(h).decode()))


def reply(key, v_c, i_c, i_s, q_c):
    """KEX_ECDH_REPLY for client value q_c over the hash with I_S i_s."""
    pub = key.public_key().public_numbers()
    k_s = string(b"ssh-rsa") + mpint(pub.e) + mpint(pub.n)
    eph = x25519.X25519PrivateKey.generate()
    q_s = eph.public_key().public_bytes(serialization.Encoding.Raw,
                                        serialization.PublicFormat.Raw)
    shared = eph.exchange(x25519.X25519PublicKey.from_public_bytes(q_c))
    h = hashlib.sha256(string(v_c) + string(BANNER) + string(i_c) +
                       string(i_s) + string(k_s) + string(q_c) +
                       string(q_s) + mpint_bytes(shared)).digest()
    sig = key.sign(h, padding.PKCS1v15(), hashes.SHA256())
    return bytes([ECDH_REPLY]) + string(k_s) + string(q_s) + \
        string(string(b"rsa-sha2-256") + string(sig))


def kexinit():
    names = [b"curve25519-sha256,early-s@hpn-patch-set.invalid",
             b"rsa-sha2-256", b"aes128-ctr", b"aes128-ctr",
             b"hmac-sha2-256", b"hmac-sha2-256", b"none", b"none", b"", b""]
    return bytes([KEXINIT]) + os.urandom(16) + \
        b"".join(string(n) for n in names) + b"\0" + b"\0\0\0\0"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--hostkey", required=True)
    p.add_argument("--ready", required=True)
    p.add_argument("--mode", choices=("first", "kexinit"), required=True)
    p.add_argument("--record", default="")
    p.add_argument("--name", default="")
    a = p.parse_args()
    signal.alarm(30)
    with open(a.hostkey, "rb") as f:
        key = serialization.load_ssh_private_key(f.read(), None)
    if a.record:
        record(a.record, a.name)
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", a.port))
    ls.listen(1)
    with open(a.ready + ".tmp", "w") as f:
        f.write("%d\n" % os.getpid())
    os.rename(a.ready + ".tmp", a.ready)
    ls.settimeout(20)
    s, _ = ls.accept()
    s.sendall(BANNER + b"\r\n")
    r = Reader(s)
    deadline = time.monotonic() + 10
    v_c = r.line(deadline)
    i_c = r.packet(deadline)
    guess = r.packet(deadline)
    if v_c is None or i_c is None or guess is None or \
            i_c[0] != KEXINIT or guess[0] != ECDH_INIT:
        print("RESULT no-guess (types %s)" % (
            [x[0] for x in (i_c, guess) if x]))
        return 0
    q_c, _ = get_string(guess, 1)
    # What the client hashes with no KEXINIT of ours: the type byte alone.
    s.sendall(packet(reply(key, v_c, i_c, bytes([KEXINIT]), q_c)))
    if a.mode == "kexinit":
        ki = kexinit()
        s.sendall(packet(ki) + packet(reply(key, v_c, i_c, ki, q_c)))
    types = []
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        pk = r.packet(deadline)
        if pk is None:
            if r.eof:
                types.append("eof")
            break
        types.append(str(pk[0]))
        if pk[0] == 21:		# NEWKEYS: what follows is encrypted
            break
    print("RESULT types=%s" % ",".join(types))
    s.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
