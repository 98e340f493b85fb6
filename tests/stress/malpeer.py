#!/usr/bin/python3
"""A misbehaving SSH peer for the HPN stress tests (paramiko transport).

  malpeer.py client CASE HOST PORT KEYFILE USER [LISTENER_PID]
      authenticate to an sshd, then misbehave as CASE says
  malpeer.py server CASE PORT HOSTKEY
      serve one connection on 127.0.0.1:PORT (any public key accepted),
      misbehave towards the client as CASE says

Paramiko completes the key exchange and authentication; the misbehaviour
is sent as raw connection-protocol messages on the encrypted transport,
bypassing paramiko's own flow control.  Each case prints one line
"RESULT case=... k=v ..." and exits 0 when it could be carried out (what
the peer did about it is judged by the caller from these values and the
peer's logs), non-zero when the case itself could not be run.

Client cases (towards hpnsshd):
  adjust-overflow   WINDOW_ADJUST that overflows sshd's view of our window
  window-exceed     CHANNEL_DATA well past the window sshd granted
  zero-window       open a session with window 0: sshd must send nothing and
                    not spin; then grant 4 MiB: all of it must arrive
  zero-maxpacket    open a session with maximum packet 0: nothing can be
                    sent; sshd must not spin
  huge-window       window and maximum packet 2^32-1: 8 MiB download
  big-packet        a 300 KiB packet (past the 256 KiB limit)
  big-data          CHANNEL_DATA of 128 KiB, past the 32 KiB maximum packet
                    sshd asked for (upstream logs it and carries on)
  banner:VERSION    identify as VERSION, then move 8 MiB each way
Server cases (towards hpnssh): adjust-overflow, window-exceed, zero-window,
  big-packet, ext-none:VALUE (EXT_INFO none-switch extension with VALUE;
  "@big" = 64 KiB of it, "@nul" = "cipher\\0mac").
"""

import os
import signal
import socket
import struct
import sys
import threading
import time

import paramiko
from paramiko.common import (cMSG_CHANNEL_DATA, cMSG_CHANNEL_WINDOW_ADJUST,
                             cMSG_IGNORE, cMSG_EXT_INFO)
from paramiko.message import Message

TIMEOUT = 60
HPN_NONE_EXT = "none-switch@hpn-patch-set.invalid"


def result(case, **kv):
    print("RESULT case=%s %s" % (case, " ".join(
        "%s=%s" % (k, v) for k, v in sorted(kv.items()))), flush=True)


def raw_data(t, chan, data):
    m = Message()
    m.add_byte(cMSG_CHANNEL_DATA)
    m.add_int(chan.remote_chanid)
    m.add_string(data)
    t._send_user_message(m)


def read_to_eof(chan, secs):
    """What the channel sends until EOF, or until secs pass in silence."""
    chan.settimeout(secs)
    out = b""
    try:
        while True:
            d = chan.recv(4096)
            if not d:
                break
            out += d
    except socket.timeout:
        pass
    return out


def overrun_window(t, chan):
    """Send CHANNEL_DATA past the peer's window (by 10% + 3 MiB), in
    packets of its maximum size, until done or disconnected; returns
    (window, maximum packet, bytes sent).  The margin is beyond what the
    peer may rightly take in meanwhile: a bulk channel's pipe (up to 1 MiB
    with HPN) takes data that its consumer has not read, and the peer
    then sends window adjusts for it."""
    win, mp = chan.out_window_size, chan.out_max_packet_size
    total = win + win // 10 + (3 << 20)
    sent = 0
    try:
        while sent < total and t.is_active():
            n = min(mp, total - sent)
            raw_data(t, chan, b"w" * n)
            sent += n
    except (EOFError, OSError, paramiko.SSHException):
        pass
    return win, mp, sent


def raw_adjust(t, chan, n):
    m = Message()
    m.add_byte(cMSG_CHANNEL_WINDOW_ADJUST)
    m.add_int(chan.remote_chanid)
    m.add_int(n)
    t._send_user_message(m)


def raw_big_packet(t, size):
    m = Message()
    m.add_byte(cMSG_IGNORE)
    m.add_string(b"x" * size)
    # _send_message: no user-message gating; the packetizer sends any size
    t._send_message(m)


def wait_closed(t, secs):
    """Seconds until the peer closed the transport, or -1."""
    start = time.time()
    while time.time() - start < secs:
        if not t.is_active():
            return round(time.time() - start, 2)
        time.sleep(0.05)
    return -1


def tree_cpu(root):
    """utime+stime (seconds) of root and its descendants, from /proc."""
    if root is None:
        return 0.0
    kids, ticks = {}, {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % p) as f:
                s = f.read()
        except OSError:
            continue
        fields = s[s.rindex(")") + 2:].split()
        kids.setdefault(int(fields[1]), []).append(int(p))
        ticks[int(p)] = int(fields[11]) + int(fields[12])
    total, todo = 0, [root]
    while todo:
        p = todo.pop()
        total += ticks.get(p, 0)
        todo.extend(kids.get(p, []))
    return total / os.sysconf("SC_CLK_TCK")


def read_all(chan, want, secs):
    got, start = 0, time.time()
    chan.settimeout(1)
    while got < want and time.time() - start < secs:
        try:
            d = chan.recv(1 << 20)
        except socket.timeout:
            continue
        if not d:
            break
        got += len(d)
    return got


# --------------------------------------------------------------- client side

def connect(host, port, keyfile, user, version=None):
    sock = socket.create_connection((host, port), timeout=TIMEOUT)
    t = paramiko.Transport(sock)
    if version is not None:
        t.local_version = version
    t.start_client(timeout=TIMEOUT)
    key = paramiko.Ed25519Key(filename=keyfile)
    t.auth_publickey(user, key)
    if not t.is_authenticated():
        raise SystemExit("authentication failed")
    # let a rekey the server starts after auth (threaded AES-CTR) settle
    time.sleep(0.3)
    return t


def open_raw(t, window, maxpacket):
    """open_channel without paramiko's clamping of window and packet."""
    t._sanitize_window_size = lambda w: w
    t._sanitize_packet_size = lambda p: p
    return t.open_channel("session", window_size=window,
                          max_packet_size=maxpacket, timeout=TIMEOUT)


def answer_ping():
    """Answer SSH2_MSG_PING (192) with PONG (193), as the OpenSSH release
    our banner claims does: HPN peers time round trips with it."""
    def pong(self, m):
        msg = paramiko.Message()
        msg.add_byte(bytes([193]))
        msg.add_string(m.get_string())
        self._send_message(msg)
    paramiko.Transport._handler_table[192] = pong


def client_case(case, host, port, keyfile, user, listener):
    version = None
    if case.startswith("banner:"):
        version = case[len("banner:"):]
    t = connect(host, port, keyfile, user, version)
    cipher = t.remote_cipher

    if case == "adjust-overflow":
        chan = t.open_session(timeout=TIMEOUT)
        chan.exec_command("sleep 20")
        time.sleep(0.3)
        raw_adjust(t, chan, 0xFFFFFF00)
        raw_adjust(t, chan, 0xFFFFFF00)
        result(case, closed_after=wait_closed(t, 15), cipher=cipher)

    elif case == "window-exceed":
        chan = t.open_session(timeout=TIMEOUT)
        chan.exec_command("sleep 20")
        time.sleep(0.3)
        win, mp, sent = overrun_window(t, chan)
        result(case, window=win, maxpacket=mp, sent=sent,
               closed_after=wait_closed(t, 15))

    elif case == "zero-window":
        chan = open_raw(t, 0, 32768)
        want = 4 << 20
        chan.exec_command("head -c %d /dev/zero" % want)
        c0 = tree_cpu(listener)
        time.sleep(3)
        cpu = tree_cpu(listener) - c0
        early = 0
        chan.settimeout(0.1)
        try:
            early = len(chan.recv(1 << 20))
        except socket.timeout:
            pass
        raw_adjust(t, chan, want)
        chan.in_window_size = want	# paramiko's own accounting
        got = early + read_all(chan, want - early, 30)
        status = chan.recv_exit_status() if got == want else -1
        result(case, before_grant=early, got=got, want=want,
               exit=status, server_cpu_3s=round(cpu, 2))

    elif case == "zero-maxpacket":
        chan = open_raw(t, 2 << 20, 0)
        chan.exec_command("head -c 1048576 /dev/zero")
        c0 = tree_cpu(listener)
        time.sleep(3)
        cpu = tree_cpu(listener) - c0
        chan.settimeout(0.1)
        got = 0
        try:
            got = len(chan.recv(1 << 20))
        except socket.timeout:
            pass
        t.close()
        result(case, got=got, server_cpu_3s=round(cpu, 2))

    elif case == "huge-window":
        chan = open_raw(t, 0xFFFFFFFF, 0xFFFFFFFF)
        want = 8 << 20
        chan.exec_command("head -c %d /dev/zero" % want)
        got = read_all(chan, want, 30)
        result(case, got=got, want=want, active=t.is_active(),
               closed_after=wait_closed(t, 1) if got != want else 0)

    elif case == "big-packet":
        chan = t.open_session(timeout=TIMEOUT)
        chan.exec_command("sleep 20")
        time.sleep(0.3)
        try:
            raw_big_packet(t, 300 * 1024)
        except (EOFError, OSError, paramiko.SSHException):
            pass
        result(case, closed_after=wait_closed(t, 15))

    elif case == "big-data":
        chan = t.open_session(timeout=TIMEOUT)
        chan.exec_command("wc -c")
        time.sleep(0.3)
        mp = chan.out_max_packet_size
        raw_data(t, chan, b"b" * (128 * 1024))
        chan.out_window_size -= 128 * 1024
        chan.shutdown_write()
        out = read_to_eof(chan, 15)
        result(case, maxpacket=mp, echoed=out.strip().decode() or "none",
               active=t.is_active())

    elif case.startswith("banner:"):
        chan = t.open_session(timeout=TIMEOUT)
        want = 8 << 20
        chan.exec_command("head -c %d /dev/zero" % want)
        got = read_all(chan, want, 30)
        chan2 = t.open_session(timeout=TIMEOUT)
        chan2.exec_command("wc -c")
        block = b"u" * 32768
        for _ in range(want // len(block)):
            chan2.sendall(block)
        chan2.shutdown_write()
        out = read_to_eof(chan2, 30)
        result("banner", version=repr(version), down=got,
               up=out.strip().decode() or "none", want=want)
    else:
        raise SystemExit("unknown client case " + case)
    t.close()


# --------------------------------------------------------------- server side

class Server(paramiko.ServerInterface):
    def __init__(self, case, transport):
        self.case = case
        self.t = transport
        self.exec_event = threading.Event()
        self.ext_sent = False

    def get_allowed_auths(self, username):
        return "publickey"

    def check_auth_publickey(self, username, key):
        if self.case.startswith("ext-none:") and not self.ext_sent:
            # a second EXT_INFO, as hpnsshd sends it, before success
            self.ext_sent = True
            m = Message()
            m.add_byte(cMSG_EXT_INFO)
            m.add_int(1)
            m.add_string(HPN_NONE_EXT)
            m.add_string(ext_value(self.case))
            self.t._send_message(m)
        return paramiko.AUTH_SUCCESSFUL

    def check_channel_request(self, kind, chanid):
        return paramiko.OPEN_SUCCEEDED

    def check_channel_exec_request(self, channel, command):
        self.exec_event.set()
        return True

    def check_channel_pty_request(self, *a):
        return False

    def check_channel_env_request(self, *a):
        return True


class ExtTransport(paramiko.Transport):
    """Sends its own first EXT_INFO: server-sig-algs, ext-info-in-auth
    (so that the client takes a second one during authentication) and the
    none-switch extension with the case's value."""
    ext_value = None

    def _activate_outbound(self):
        first = not getattr(self, "_ext_done", False)
        paramiko.Transport._activate_outbound(self)
        if first and self.server_mode and self.ext_value is not None:
            self._ext_done = True
            m = Message()
            m.add_byte(cMSG_EXT_INFO)
            m.add_int(3)
            m.add_string("server-sig-algs")
            m.add_string("ssh-ed25519")
            m.add_string("ext-info-in-auth@openssh.com")
            m.add_string("0")
            m.add_string(HPN_NONE_EXT)
            m.add_string(self.ext_value)
            self._send_message(m)


def ext_value(case):
    v = case[len("ext-none:"):]
    return {"@big": "cipher," * 9362, "@nul": "cipher\0mac"}.get(v, v).encode()


def server_case(case, port, hostkey):
    signal.alarm(TIMEOUT)
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", port))
    ls.listen(1)
    print("LISTENING", flush=True)
    ls.settimeout(TIMEOUT)
    conn, _ = ls.accept()
    t = ExtTransport(conn)
    if case.startswith("ext-none:"):
        t.server_sig_algs = False	# ours instead (ExtTransport)
        t.ext_value = ext_value(case)
        # the client takes EXT_INFO during authentication from servers
        # that announce ext-info-s in their KEXINIT
        t._preferred_kex = t._preferred_kex + ("ext-info-s",)
        t._kex_info = dict(t._kex_info)
        t._kex_info["ext-info-s"] = None	# never agreed: only ours
    t.local_version = "SSH-2.0-OpenSSH_10.3p1_hpn0.1.0 malpeer"
    t.add_server_key(paramiko.Ed25519Key(filename=hostkey))
    if case == "zero-window":
        t.default_window_size = 0	# our CHANNEL_OPEN_CONFIRMATION
    srv = Server(case, t)
    t.start_server(server=srv)
    chan = t.accept(TIMEOUT)
    if chan is None:
        result(case, error="no channel (client gave up)")
        return
    srv.exec_event.wait(TIMEOUT)
    time.sleep(0.2)

    if case == "adjust-overflow":
        raw_adjust(t, chan, 0xFFFFFF00)
        raw_adjust(t, chan, 0xFFFFFF00)
        result(case, closed_after=wait_closed(t, 15))
    elif case == "window-exceed":
        win, _, sent = overrun_window(t, chan)
        result(case, window=win, sent=sent, closed_after=wait_closed(t, 15))
    elif case == "zero-window":
        # The client must send nothing in 3 s; then it may send 4 MiB.
        chan.settimeout(3)
        early = 0
        try:
            d = chan.recv(1 << 20)
            early = len(d)
        except socket.timeout:
            pass
        want = 4 << 20
        raw_adjust(t, chan, want + 65536)
        got = early + read_all(chan, want - early + 1, 30)
        chan.send_exit_status(0)
        chan.close()
        result(case, before_grant=early, got=got, want=want)
        time.sleep(0.5)
    elif case == "big-packet":
        try:
            raw_big_packet(t, 300 * 1024)
        except (EOFError, OSError, paramiko.SSHException):
            pass
        result(case, closed_after=wait_closed(t, 15))
    elif case.startswith("ext-none:"):
        # A client that believes it may switch rekeys proposing only none,
        # which paramiko cannot do: the key exchange fails.  One that stays
        # encrypted gets its command's exit status.
        closed = wait_closed(t, 2)
        if closed < 0:
            chan.send_exit_status(0)
            chan.close()
            time.sleep(0.5)
        result(case, closed_after=closed)
    else:
        raise SystemExit("unknown server case " + case)
    t.close()


def main():
    answer_ping()
    a = sys.argv[1:]
    if len(a) in (6, 7) and a[0] == "client":
        signal.alarm(TIMEOUT)
        client_case(a[1], a[2], int(a[3]), a[4], a[5],
                    int(a[6]) if len(a) == 7 else None)
    elif len(a) == 4 and a[0] == "server":
        server_case(a[1], int(a[2]), a[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
