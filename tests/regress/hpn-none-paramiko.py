#!/usr/bin/python3
"""paramiko peers for the none-cipher negotiation tests, with a none cipher.

  hpn-none-paramiko.py server PORT HOSTKEY AUTHORIZED BANNER no|cipher|cipher,mac
      Serve one connection on 127.0.0.1:PORT as an HPN-SSH-like server:
      identification BANNER (e.g. HPN-SSH 18.8's "OpenSSH_10.2p1_hpn18.8.0"),
      and "none" last in its cipher lists with "cipher" (HPN-SSH's
      NoneEnabled), and in its MAC lists too with "cipher,mac" (and
      NoneMacEnabled), in every KEXINIT from the first on, as HPN-SSH
      does.  Public-key authentication with any key of AUTHORIZED.  One
      command: "sha256sum" (of the channel's input) or "zeros N" (sends N
      zero bytes); any other is refused and ends the connection.  Prints each key exchange's result,
      every command asked for and every global request:
          kex N: client ciphers LIST; cipher IN OUT; mac IN OUT
          exec: COMMAND
          global request: NAME
  hpn-none-paramiko.py client PORT KEY USER BANNER pty|nopty|only
      Connect to an sshd on 127.0.0.1:PORT claiming software version
      BANNER, authenticate with KEY, open a session (with a pty or not),
      then rekey proposing "none" first and aes128-ctr after it ("only":
      no pty, and "none" alone, as HPN-SSH's client does).  Prints
          kex: cipher IN OUT
      and "pty: granted" or "pty: refused".

Both answer the OpenSSH PING (the releases their banners claim do).
Everything is bounded by a timeout."""

import hashlib
import socket
import sys
import threading
import time
import warnings

warnings.simplefilter("ignore")  # cryptography deprecation noise

import paramiko  # noqa: E402
from paramiko.message import Message  # noqa: E402

TIMEOUT = 30


class Null:
    """The none cipher: data unchanged."""

    def update(self, data):
        return data

    def finalize(self):
        return b""


def add_none():
    T = paramiko.Transport
    T._cipher_info["none"] = {"class": None, "mode": None,
                              "block-size": 8, "key-size": 0}
    T._mac_info["none"] = {"class": hashlib.sha256, "size": 0}
    get = T._get_cipher

    def get_cipher(self, name, key, iv, operation):
        if name == "none":
            return Null()
        return get(self, name, key, iv, operation)
    T._get_cipher = get_cipher

    def pong(self, m):
        msg = Message()
        msg.add_byte(bytes([193]))
        msg.add_string(m.get_string())
        self._send_message(msg)
    T._handler_table[192] = pong


def client_ciphers(t):
    """The client's c->s cipher list from its last KEXINIT."""
    m = Message(t.remote_kex_init[1:] if t.server_mode else
                t.local_kex_init[1:])
    m.get_bytes(16)
    m.get_list()  # kex
    m.get_list()  # host keys
    return ",".join(m.get_list())


def serve(port, hostkey, authorized, banner, allow, allow_mac):
    add_none()
    key = paramiko.Ed25519Key.from_private_key_file(hostkey)
    blobs = []
    with open(authorized) as f:
        for line in f:
            w = line.split()
            if len(w) >= 2 and not line.startswith("#"):
                blobs.append(w[1])
    done = threading.Event()

    class T(paramiko.Transport):
        kexes = 0

        def _activate_outbound(self):
            super()._activate_outbound()
            T.kexes += 1
            print("kex %d: client ciphers %s; cipher %s %s; mac %s %s" % (
                T.kexes, client_ciphers(self), self.remote_cipher,
                self.local_cipher, self.remote_mac, self.local_mac),
                flush=True)

    def sha(ch):
        h = hashlib.sha256()
        try:
            while True:
                b = ch.recv(65536)
                if not b:
                    break
                h.update(b)
            ch.sendall((h.hexdigest() + "  -\n").encode())
            ch.send_exit_status(0)
            ch.shutdown_write()
            ch.close()
        except (EOFError, OSError):
            pass
        done.set()

    def zeros(ch, n):
        b = bytes(65536)
        try:
            while n > 0:
                ch.sendall(b[:min(n, len(b))])
                n -= min(n, len(b))
            ch.send_exit_status(0)
            ch.shutdown_write()
            ch.close()
        except (EOFError, OSError):
            pass
        done.set()

    class Server(paramiko.ServerInterface):
        def get_allowed_auths(self, username):
            return "publickey"

        def check_auth_publickey(self, username, k):
            if k.get_base64() not in blobs:
                return paramiko.AUTH_FAILED
            return paramiko.AUTH_SUCCESSFUL

        def check_global_request(self, kind, msg):
            print("global request: %s" % kind, flush=True)
            return False

        def check_channel_request(self, kind, chanid):
            if kind == "session":
                return paramiko.OPEN_SUCCEEDED
            return paramiko.OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED

        def check_channel_exec_request(self, ch, command):
            print("exec: %s" % command.decode(errors="replace"), flush=True)
            w = command.split()
            if command == b"sha256sum":
                run = (sha, (ch,))
            elif (len(w) == 2 and w[0] == b"zeros" and w[1].isdigit() and
                  int(w[1]) <= 1 << 30):
                run = (zeros, (ch, int(w[1])))
            else:
                done.set()
                return False
            threading.Thread(target=run[0], args=run[1], daemon=True).start()
            return True

    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", port))
    ls.listen(1)
    ls.settimeout(TIMEOUT)
    s, _ = ls.accept()
    t = T(s)
    t.local_version = "SSH-2.0-" + banner
    if allow:
        t._preferred_ciphers = tuple(t._preferred_ciphers) + ("none",)
    if allow_mac:
        t._preferred_macs = tuple(t._preferred_macs) + ("none",)
    t.add_server_key(key)
    t.start_server(server=Server())
    done.wait(TIMEOUT)
    time.sleep(0.5)
    t.close()


def client(port, keyfile, user, banner, pty):
    add_none()
    t = paramiko.Transport(("127.0.0.1", port))
    t.local_version = "SSH-2.0-" + banner
    t.start_client(timeout=TIMEOUT)
    t.auth_publickey(user,
                     paramiko.Ed25519Key.from_private_key_file(keyfile))
    ch = t.open_session(timeout=TIMEOUT)
    if pty == "pty":
        try:
            ch.get_pty()
            print("pty: granted", flush=True)
        except paramiko.SSHException:
            print("pty: refused", flush=True)
    if pty == "only":
        t._preferred_ciphers = ("none",)
        t._preferred_macs = ("hmac-sha2-256",)
    else:
        t._preferred_ciphers = ("none", "aes128-ctr")
        t._preferred_macs = ("none", "hmac-sha2-256")
    try:
        t.renegotiate_keys()
        print("kex: cipher %s %s" % (t.remote_cipher, t.local_cipher),
              flush=True)
    except (paramiko.SSHException, EOFError) as e:
        print("kex: failed: %r" % e, flush=True)
    t.close()


def main():
    a = sys.argv
    if len(a) == 7 and a[1] == "server":
        serve(int(a[2]), a[3], a[4], a[5], a[6] in ("cipher", "cipher,mac"),
              a[6] == "cipher,mac")
    elif (len(a) == 7 and a[1] == "client" and
          a[6] in ("pty", "nopty", "only")):
        client(int(a[2]), a[3], a[4], a[5], a[6])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
