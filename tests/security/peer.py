#!/usr/bin/python3
"""Malicious SSH servers for the security regress tests (paramiko).

  peer.py rekey-newkey PORT KEY_A KEY_B
      Serves one connection on 127.0.0.1:PORT with host key KEY_A, accepts
      any public key, runs the client's command by sending "before", then
      swaps its host key to KEY_B (same type) and starts a key
      re-exchange, as a server whose key changes mid-connection would
      (CVE-2026-60002).  Prints "RESULT rekey=done|failed" and exits 0.

  peer.py rekey-inject PORT KEY
      Serves one connection with host key KEY, runs the client's command by
      sending "before", then starts a key re-exchange and, right after its
      KEXINIT, sends channel data ("injected") that RFC 4253 7.1 forbids
      until its NEWKEYS.  If the exchange completes it sends "after" and
      exit status 0.  Prints "RESULT rekey=done|failed".

  peer.py rekey-double PORT KEY
      The same, but what follows its KEXINIT is a second KEXINIT (upstream
      ends the connection on it since 10.4p1).

  peer.py x11-unasked PORT KEY XPORT
      Serves one connection with host key KEY and, once the client's
      session runs its command, opens an "x11" channel to it, which the
      client never asked for unless it sent an x11-req (paramiko's
      check_channel_x11_request: "X11REQ" printed).  When the client
      accepts it, sends the 12 bytes of an X11 connection set-up with
      empty authentication (little-endian, no protocol name).  Then sends
      "done" and exit status 7 in the session.  A listener on
      127.0.0.1:XPORT stands for the client's X display and records
      whether the client connected to it.  Prints "RESULT x11=opened|
      refused display=connected|none".

  peer.py initial-inject PORT KEY
      Serves one connection with host key KEY (paramiko offers no strict
      KEX) and sends a SERVICE_ACCEPT right after its first KEXINIT, before
      its NEWKEYS (a transport message, but not a key exchange one: types
      of 50 and up already end 10.3p1's first exchange in its dispatcher);
      then serves the session.  Prints "INJECTED" once it has sent it.

Every wait is bounded (TIMEOUT); the caller kills it by PID if need be.
"""

import signal
import socket
import sys
import threading
import time

import paramiko
from paramiko.common import cMSG_CHANNEL_DATA, cMSG_SERVICE_ACCEPT
from paramiko.message import Message

TIMEOUT = 60


class Server(paramiko.ServerInterface):
    def __init__(self):
        self.exec_event = threading.Event()

    def get_allowed_auths(self, username):
        return "publickey"

    def check_auth_publickey(self, username, key):
        return paramiko.AUTH_SUCCESSFUL

    def check_channel_request(self, kind, chanid):
        return paramiko.OPEN_SUCCEEDED

    def check_channel_exec_request(self, channel, command):
        self.exec_event.set()
        return True

    def check_channel_env_request(self, *a):
        return True

    def check_channel_x11_request(self, *a):
        print("X11REQ", flush=True)
        return True


def listen(port):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", port))
    ls.listen(1)
    ls.settimeout(TIMEOUT)
    print("LISTENING", flush=True)
    conn, _ = ls.accept()
    ls.close()
    return conn


def rekey_newkey(port, key_a, key_b):
    conn = listen(port)
    t = paramiko.Transport(conn)
    t.add_server_key(paramiko.Ed25519Key(filename=key_a))
    srv = Server()
    t.start_server(server=srv)
    chan = t.accept(TIMEOUT)
    if chan is None or not srv.exec_event.wait(TIMEOUT):
        print("RESULT rekey=none error=no-session", flush=True)
        return
    chan.sendall(b"before\n")
    # Same key type: replaces KEY_A in paramiko's key table.
    t.add_server_key(paramiko.Ed25519Key(filename=key_b))
    try:
        t.renegotiate_keys()
        state = "done"
    except (paramiko.SSHException, EOFError, OSError):
        state = "failed"
    print("RESULT rekey=%s" % state, flush=True)
    if state == "done" and t.is_active():
        try:
            chan.sendall(b"after\n")
            chan.send_exit_status(0)
            chan.close()
        except (paramiko.SSHException, EOFError, OSError):
            pass
    t.close()


def rekey_inject(port, key, extra="data"):
    conn = listen(port)
    t = paramiko.Transport(conn)
    t.add_server_key(paramiko.Ed25519Key(filename=key))
    srv = Server()
    t.start_server(server=srv)
    chan = t.accept(TIMEOUT)
    if chan is None or not srv.exec_event.wait(TIMEOUT):
        print("RESULT rekey=none error=no-session", flush=True)
        return
    chan.sendall(b"before\n")
    time.sleep(0.5)
    # What renegotiate_keys() does, with a forbidden message in between.
    t.completion_event = threading.Event()
    t._send_kex_init()
    if extra == "kexinit":
        # the same KEXINIT again: paramiko's own bytes, sent twice
        t._send_message(t.local_kex_init)
    else:
        m = Message()
        m.add_byte(cMSG_CHANNEL_DATA)
        m.add_int(chan.remote_chanid)
        m.add_string(b"injected\n")
        t._send_message(m)
    state = "failed"
    deadline = time.time() + TIMEOUT
    while time.time() < deadline and t.is_active():
        if t.completion_event.wait(0.1):
            state = "done"
            break
    print("RESULT rekey=%s" % state, flush=True)
    if state == "done" and t.is_active():
        try:
            chan.sendall(b"after\n")
            chan.send_exit_status(0)
            chan.close()
            time.sleep(0.5)
        except (paramiko.SSHException, EOFError, OSError):
            pass
    t.close()


def x11_unasked(port, key, xport):
    display = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    display.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    display.bind(("127.0.0.1", xport))
    display.listen(1)
    display.settimeout(0.1)
    conn = listen(port)
    t = paramiko.Transport(conn)
    t.add_server_key(paramiko.Ed25519Key(filename=key))
    srv = Server()
    t.start_server(server=srv)
    chan = t.accept(TIMEOUT)
    if chan is None or not srv.exec_event.wait(TIMEOUT):
        print("RESULT x11=none error=no-session", flush=True)
        return
    state = "refused"
    try:
        x = t.open_x11_channel(("127.0.0.1", 6000))
        state = "opened"
        # byte order 'l', protocol 11.0, no auth name, no auth data
        x.sendall(b"l\0\x0b\0\0\0\0\0\0\0\0\0")
    except (paramiko.SSHException, EOFError, OSError):
        pass
    seen = "none"
    deadline = time.time() + 3
    while time.time() < deadline and t.is_active():
        try:
            c, _ = display.accept()
            seen = "connected"
            c.close()
            break
        except socket.timeout:
            pass
    display.close()
    print("RESULT x11=%s display=%s" % (state, seen), flush=True)
    if t.is_active():
        try:
            chan.sendall(b"done\n")
            chan.send_exit_status(7)
            chan.close()
            time.sleep(0.5)
        except (paramiko.SSHException, EOFError, OSError):
            pass
class InjectingTransport(paramiko.Transport):
    """Sends a SERVICE_ACCEPT after its first KEXINIT."""

    injected = False

    def _send_kex_init(self):
        super()._send_kex_init()
        if not self.injected:
            self.injected = True
            m = Message()
            m.add_byte(cMSG_SERVICE_ACCEPT)
            m.add_string("ssh-userauth")
            self._send_message(m)
            print("INJECTED", flush=True)


def initial_inject(port, key):
    conn = listen(port)
    t = InjectingTransport(conn)
    t.add_server_key(paramiko.Ed25519Key(filename=key))
    srv = Server()
    try:
        t.start_server(server=srv)
    except (paramiko.SSHException, EOFError, OSError):
        print("RESULT kex=failed", flush=True)
        t.close()
        return
    chan = t.accept(TIMEOUT)
    if chan is None or not srv.exec_event.wait(TIMEOUT):
        print("RESULT kex=none error=no-session", flush=True)
        t.close()
        return
    try:
        chan.sendall(b"before\nafter\n")
        chan.send_exit_status(0)
        chan.close()
        time.sleep(0.5)
    except (paramiko.SSHException, EOFError, OSError):
        pass
    print("RESULT kex=done", flush=True)
    t.close()


def main():
    signal.alarm(TIMEOUT + 30)
    if len(sys.argv) == 5 and sys.argv[1] == "rekey-newkey":
        rekey_newkey(int(sys.argv[2]), sys.argv[3], sys.argv[4])
    elif len(sys.argv) == 4 and sys.argv[1] == "rekey-inject":
        rekey_inject(int(sys.argv[2]), sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "rekey-double":
        rekey_inject(int(sys.argv[2]), sys.argv[3], "kexinit")
    elif len(sys.argv) == 5 and sys.argv[1] == "x11-unasked":
        x11_unasked(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]))
    elif len(sys.argv) == 4 and sys.argv[1] == "initial-inject":
        initial_inject(int(sys.argv[2]), sys.argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
