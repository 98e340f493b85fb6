#!/usr/bin/env python3
"""A misbehaving SSH peer for the none-cipher tests: it proposes only the
none cipher in the first key exchange, which an HPN peer must refuse.

  hpn-none-peer.py client HOST PORT   connect to an sshd, send KEXINIT
  hpn-none-peer.py server PORT        serve one connection on 127.0.0.1

Either way it claims HPN-SSH 18.8's banner, reads until the peer closes
(bounded by a timeout) and prints what it read of the peer's banner."""

import os
import socket
import struct
import sys

BANNER = b"SSH-2.0-OpenSSH_10.2p1_hpn18.8.0 none-probe\r\n"
TIMEOUT = 10


def name_list(s):
    return struct.pack(">I", len(s)) + s


def kexinit(server):
    kex = b"curve25519-sha256,kex-strict-%s-v00@openssh.com" % (
        b"s" if server else b"c")
    lists = [kex, b"ssh-ed25519,rsa-sha2-256", b"none", b"none",
             b"hmac-sha2-256", b"hmac-sha2-256", b"none", b"none", b"", b""]
    payload = bytes([20]) + os.urandom(16)
    for item in lists:
        payload += name_list(item)
    payload += b"\0" + b"\0\0\0\0"
    pad = 8 - (len(payload) + 5) % 8
    if pad < 4:
        pad += 8
    return (struct.pack(">IB", len(payload) + pad + 1, pad) + payload +
            b"\0" * pad)


def talk(sock, server):
    sock.settimeout(TIMEOUT)
    sock.sendall(BANNER)
    got = b""
    while b"\n" not in got and len(got) < 8192:
        chunk = sock.recv(1)
        if not chunk:
            break
        got += chunk
    print("peer banner:", got.strip().decode(errors="replace"))
    sock.sendall(kexinit(server))
    total = 0
    try:
        while total < 1 << 20:
            chunk = sock.recv(4096)
            if not chunk:
                break
            total += len(chunk)
    except (socket.timeout, ConnectionResetError):
        pass
    print("peer closed after", total, "bytes")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "client":
        with socket.create_connection((sys.argv[2], int(sys.argv[3])),
                                      timeout=TIMEOUT) as s:
            talk(s, False)
    elif len(sys.argv) == 3 and sys.argv[1] == "server":
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as ls:
            ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            ls.bind(("127.0.0.1", int(sys.argv[2])))
            ls.listen(1)
            ls.settimeout(TIMEOUT)
            conn, _ = ls.accept()
            with conn:
                talk(conn, True)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
