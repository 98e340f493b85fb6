#!/usr/bin/python3
"""A stand-in for HPN-SSH 18.8's legacy scp resume (-Z), both roles.

Written from the bytes HPN-SSH 18.8.0's hpnscp sends and expects (captured
from its programs over pipes, 2026-11-29; README.hpn section 10):

  source -> target  "C%04o SIZE HASH NAME\\n", HASH the BLAKE2b-512 of the
                    whole file in lower-case hex
  target -> source  191 bytes, space-padded: "S" (complete and identical),
                    "R%04o HELD HASH" (HELD < SIZE bytes there, their hash;
                    "R0000 0 " with no hash when there is no file), or
                    "C%04o HELD [HASH]" (as long or longer); then a NUL
  source -> target  after R or C (never after S) one byte: 'M' (the HELD
                    bytes match: SIZE - HELD bytes follow), 'F' (all
                    follow); after C HPN-SSH sends its last match byte
                    again (NUL at first, 'M' after a file it resumed),
                    which the target ignores: all follow
  then the data, a NUL, and the target's NUL, as without -Z.

Modes:
  sink TARGET -- CMD...     run CMD (our "scp -f -Z FILE") and be HPN-SSH's
                            receiving end: write into TARGET (a file, or a
                            directory with -r sources)
  source FILE... -- CMD...  run CMD (our "scp -t -Z TARGET") and be HPN-SSH's
                            sending end
  server PORT HOSTKEY AUTHORIZED SFTPSERVER...
                            an HPN-SSH-like sshd on 127.0.0.1:PORT (paramiko:
                            its banner OpenSSH_10.2p1_hpn18.8.0, public-key
                            authentication by AUTHORIZED, no EXT_INFO of
                            ours): "scp|hpnscp [-v] [-r] [-p] [-d] -Z -t|-f
                            [--] PATH" runs the roles above on the channel
                            ("true" does nothing),
                            the sftp subsystem runs SFTPSERVER...; the
                            global request stack-metrics@hpnssh.org is
                            refused.  Serves connections until killed
                            (bounded by --timeout).

  metrics-client PORT KEY USER
                            HPN-SSH's client's metrics request to an sshd on
                            127.0.0.1:PORT (its banner, its request
                            stack-metrics@hpnssh.org): prints "refused" or
                            each integer of the binn object, "KEY VALUE"

The server answers stack-metrics@hpnssh.org with the bytes HPN-SSH 18.8's
hpnsshd sent (captured on loopback).

--answer TEXT: the sink answers TEXT (padded) to every file instead (a
hostile target); what follows goes as the source's match byte says.

--log FILE appends one line per event: "exec CMD", "subsystem NAME",
"answer KIND HELD", "match BYTE", "data N" (file bytes moved), "file NAME
ok", "global NAME".  Everything is bounded by --timeout (default 60 s).
"""

import hashlib
import os
import subprocess
import sys
import threading
import time

HASHLEN = 128
# HPN-SSH 18.8.0's hpnsshd's answer to stack-metrics@hpnssh.org (a binn
# object, its TCP_INFO on a loopback connection), captured 2026-11-29
HPNSSH_METRICS = bytes.fromhex(
    "e280000422390e6b65726e656c5f76657273696f6e60000601bb0f746370695f"
    "736e645f777363616c65200e0f746370695f7263765f777363616c65200e0a74"
    "6370695f737461746520010c746370695f6f7074696f6e73200711746370695f"
    "736e645f7373746872657368607fffffff08746370695f72747420d213746370"
    "695f6c6173745f646174615f7265637620080b746370695f72747476617220b9"
    "0d746370695f736e645f63776e64200f0c746370695f7263765f6d7373400490"
    "08746370695f72746f6000031ce00c746370695f736e645f6d737340a0000e74"
    "6370695f7263765f737061636540ffcb0d746370695f63615f73746174652000"
    "0b746370695f70726f62657320000c746370695f6261636b6f66662000107463"
    "70695f72657472616e736d697473200011746370695f7263765f737374687265"
    "736860000127900b746370695f7361636b6564200009746370695f706d747540"
    "ffff0c746370695f6661636b657473200009746370695f6c6f73742000127463"
    "70695f6c6173745f61636b5f73656e7420000c746370695f756e61636b656420"
    "0113746370695f6c6173745f646174615f73656e74200012746370695f6c6173"
    "745f61636b5f7265637620080f746370695f72656f72646572696e6720140b74"
    "6370695f6164766d737340ffcb0c746370695f72657472616e73200008746370"
    "695f61746f409c400c746370695f7263765f727474200012746370695f746f74"
    "616c5f72657472616e73200014746370695f6d61785f706163696e675f726174"
    "6580ffffffffffffffff10746370695f706163696e675f72617465800000000a"
    "61f8cec210746370695f62797465735f61636b65644006b213746370695f6279"
    "7465735f72656365697665644006690c746370695f736567735f696e200a0d74"
    "6370695f736567735f6f7574200912746370695f6e6f7473656e745f62797465"
    "7320000c746370695f6d696e5f727474201511746370695f646174615f736567"
    "735f696e200712746370695f646174615f736567735f6f757420061e74637069"
    "5f64656c69766572795f726174655f6170705f6c696d69746564200112746370"
    "695f64656c69766572795f726174656026c0a28a0e746370695f627573795f74"
    "696d65400fa013746370695f736e646275665f6c696d69746564200011746370"
    "695f72776e645f6c696d6974656420000e746370695f64656c69766572656420"
    "0611746370695f64656c6976657265645f636520000f746370695f6279746573"
    "5f73656e744007c212746370695f62797465735f72657472616e7320000f7463"
    "70695f647361636b5f6475707320000f746370695f72656f72645f7365656e20"
    "000c746370695f736e645f776e64600001400010746370695f7263765f6f6f6f"
    "7061636b200019746370695f666173746f70656e5f636c69656e745f6661696c"
    "2000")
REPLYLEN = 191
TIMEOUT = 60
LOG = None
ANSWER = None		# --answer: what the sink answers instead (hostile)
LOCK = threading.Lock()


def log(line):
    if LOG is None:
        return
    with LOCK:
        with open(LOG, "a") as f:
            f.write(line + "\n")


def blake(path, length):
    h = hashlib.blake2b()
    with open(path, "rb") as f:
        left = length
        while left > 0:
            b = f.read(min(left, 1 << 20))
            if not b:
                break
            h.update(b)
            left -= len(b)
    return h.hexdigest()


class Peer:
    """Blocking reads and writes on a pair of callables."""

    def __init__(self, read, write):
        self._read = read
        self._write = write

    def read(self, n):
        out = b""
        while len(out) < n:
            b = self._read(n - len(out))
            if not b:
                raise EOFError("lost connection")
            out += b
        return out

    def line(self):
        out = b""
        while not out.endswith(b"\n"):
            out += self.read(1)
            if len(out) > 65536:
                raise ValueError("line too long")
        return out

    def write(self, b):
        self._write(b)


def pad(s):
    return s.ljust(REPLYLEN, b" ")[:REPLYLEN]


def sink(p, target, recursive):
    """HPN-SSH's hpnscp -t -Z TARGET."""
    p.write(b"\0")
    targisdir = os.path.isdir(target)
    stack = [target]
    while True:
        try:
            first = p.read(1)
        except EOFError:
            return
        line = first + (p.line() if first != b"\n" else b"")
        kind = line[:1]
        if kind in (b"\x01", b"\x02"):
            sys.stderr.write("error: " + line[1:].decode(errors="replace"))
            if kind == b"\x02":
                sys.exit(1)
            continue
        if kind == b"E":
            if len(stack) > 1:
                stack.pop()
            p.write(b"\0")
            continue
        if kind == b"T":
            p.write(b"\0")
            continue
        fields = line.rstrip(b"\n").split(b" ", 3 if kind == b"C" else 2)
        if kind == b"D":
            if not recursive:
                raise ValueError("directory without -r")
            d = stack[-1]
            if targisdir or len(stack) > 1:
                d = os.path.join(d, fields[2].decode())
            os.makedirs(d, exist_ok=True)
            stack.append(d)
            p.write(b"\0")
            continue
        if kind != b"C":
            raise ValueError("expected control record: %r" % line[:40])
        size = int(fields[1])
        srchash = fields[2].decode()
        name = fields[3].decode()
        if len(srchash) != HASHLEN:
            raise ValueError("hash not present")
        if os.path.isdir(stack[-1]):
            np = os.path.join(stack[-1], name)
        else:
            np = stack[-1]
        held = os.path.getsize(np) if os.path.exists(np) else None
        mode = (os.stat(np).st_mode & 0o7777) if held is not None else 0
        resume = False
        if held is not None and held == size and held > 0 and \
                blake(np, held) == srchash:
            p.write(pad(b"S"))
            p.write(b"\0")
            log("answer S %d" % held)
            continue
        if held is not None and held == size and held > 0:
            answer = b"C%04o %d %s" % (mode, held, blake(np, held).encode())
        elif held is None:
            answer = b"R0000 0 "
        elif held < size:
            answer = b"R%04o %d %s" % (mode, held, blake(np, held).encode())
        else:
            answer = b"C%04o %d" % (mode, held)
        if ANSWER is not None:
            answer = ANSWER
        p.write(pad(answer))
        p.write(b"\0")
        log("answer %s %d" % (answer[:1].decode(), held or 0))
        match = p.read(1)
        log("match %r" % match)
        if answer[:1] == b"R" and match == b"M":
            resume = True
            want = size - held
        else:
            want = size
        data = p.read(want) if want else b""
        log("data %d" % want)
        if resume:
            with open(np, "ab") as f:
                f.write(data)
        else:
            with open(np, "r+b" if os.path.exists(np) else "wb") as f:
                f.write(data)
                f.truncate(size)
        end = p.read(1)
        if end != b"\0":
            raise ValueError("source reported an error")
        p.write(b"\0")
        log("file %s ok" % name)


def source(p, files):
    """HPN-SSH's hpnscp -f -Z FILE..."""
    if p.read(1) != b"\0":
        raise ValueError("target refused")
    match = b"\0"		# HPN-SSH keeps it from file to file
    for path in files:
        st = os.stat(path)
        size = st.st_size
        p.write(b"C%04o %d %s %s\n" % (st.st_mode & 0o7777, size,
                                        blake(path, size).encode(),
                                        os.path.basename(path).encode()))
        answer = p.read(REPLYLEN)
        ack = p.read(1)
        if ack != b"\0":
            rest = p.line()
            sys.stderr.write("target: " + rest.decode(errors="replace"))
            log("refused")
            continue
        kind = answer[:1]
        log("answer %s %s" % (kind.decode(errors="replace"),
                              answer.split()[1].decode()
                              if len(answer.split()) > 1 else "0"))
        if kind == b"S":
            continue
        start = 0
        if kind == b"R":
            f = answer.split()
            held = int(f[1])
            theirs = f[2].decode() if len(f) > 2 else " " * HASHLEN
            if theirs == blake(path, held):
                match = b"M"
                start = held
            else:
                match = b"F"
        p.write(match)
        log("match %r" % match)
        with open(path, "rb") as f:
            f.seek(start)
            left = size - start
            while left > 0:
                b = f.read(min(left, 1 << 20))
                p.write(b)
                left -= len(b)
        log("data %d" % (size - start))
        p.write(b"\0")
        if p.read(1) != b"\0":
            p.line()
            log("file %s failed" % path)
        else:
            log("file %s ok" % os.path.basename(path))


def run_local(role, args, cmd):
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)
    p = Peer(lambda n: os.read(proc.stdout.fileno(), n),
             lambda b: (proc.stdin.write(b), proc.stdin.flush()))
    try:
        if role == "sink":
            sink(p, args[0], True)
        else:
            source(p, args)
    finally:
        try:
            proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            proc.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


def server(port, hostkey, authorized, sftpserver):
    import socket
    import warnings
    warnings.simplefilter("ignore")
    import paramiko

    from paramiko.message import Message

    def pong(self, m):
        # HPN-SSH 18.8 (OpenSSH 10.2p1) answers PING, which hpnssh sends
        # unasked to HPN peers of OpenSSH 9.5 and later
        msg = Message()
        msg.add_byte(bytes([193]))
        msg.add_string(m.get_string())
        self._send_message(msg)
    paramiko.Transport._handler_table[192] = pong

    keys = []
    with open(authorized) as f:
        for ln in f:
            parts = ln.split()
            if len(parts) >= 2:
                keys.append(parts[1])

    class Server(paramiko.ServerInterface):
        def __init__(self):
            self.event = threading.Event()
            self.cmd = None
            self.subsystem = None

        def check_auth_publickey(self, user, key):
            return (paramiko.AUTH_SUCCESSFUL if key.get_base64() in keys
                    else paramiko.AUTH_FAILED)

        def get_allowed_auths(self, user):
            return "publickey"

        def check_channel_request(self, kind, chanid):
            return (paramiko.OPEN_SUCCEEDED if kind == "session" else
                    paramiko.OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED)

        def check_channel_env_request(self, channel, name, value):
            return False

        def check_channel_exec_request(self, channel, command):
            self.cmd = command.decode()
            log("exec %s" % self.cmd)
            self.event.set()
            return True

        def check_channel_subsystem_request(self, channel, name):
            self.subsystem = name
            log("subsystem %s" % name)
            self.event.set()
            return name == "sftp"

        def check_global_request(self, kind, msg):
            log("global %s" % kind)
            if kind == "stack-metrics@hpnssh.org":
                return (HPNSSH_METRICS,)
            return False

    def serve(sock):
        t = paramiko.Transport(sock)
        t.local_version = "SSH-2.0-OpenSSH_10.2p1_hpn18.8.0"
        t.add_server_key(paramiko.Ed25519Key(filename=hostkey))
        s = Server()
        t.start_server(server=s)
        chan = t.accept(TIMEOUT)
        if chan is None:
            t.close()
            return
        s.event.wait(TIMEOUT)
        status = 0
        try:
            if s.cmd is not None:
                status = run_scp(chan, s.cmd)
            elif s.subsystem == "sftp":
                status = run_sftp(chan, sftpserver)
        except Exception as e:
            sys.stderr.write("stand-in: %s\n" % e)
            log("error %s" % e)
            status = 1
        try:
            chan.send_exit_status(status)
            chan.shutdown_write()
            chan.close()
        except Exception:
            pass
        end = time.time() + 5
        while t.is_active() and time.time() < end:
            time.sleep(0.05)
        t.close()

    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", port))
    ls.listen(5)
    ls.settimeout(1)
    end = time.time() + TIMEOUT
    while time.time() < end:
        try:
            c, _ = ls.accept()
        except socket.timeout:
            continue
        threading.Thread(target=serve, args=(c,), daemon=True).start()


def chan_peer(chan):
    def rd(n):
        return chan.recv(min(n, 1 << 20))

    def wr(b):
        chan.sendall(b)
    return Peer(rd, wr)


def run_scp(chan, cmd):
    if cmd == "true":
        return 0
    words = cmd.split()
    if not words or os.path.basename(words[0]) not in ("scp", "hpnscp"):
        raise ValueError("not scp: %s" % cmd)
    opts = [w for w in words[1:] if w.startswith("-") and w != "--"]
    paths = [w for w in words[1:] if not w.startswith("-")]
    if "-Z" not in opts:
        raise ValueError("no -Z: %s" % cmd)
    p = chan_peer(chan)
    if "-t" in opts:
        sink(p, paths[-1], "-r" in opts)
    elif "-f" in opts:
        source(p, paths)
    else:
        raise ValueError("neither -t nor -f: %s" % cmd)
    return 0


def run_sftp(chan, sftpserver):
    proc = subprocess.Popen(sftpserver, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)

    def up():
        try:
            while True:
                b = chan.recv(1 << 16)
                if not b:
                    break
                proc.stdin.write(b)
                proc.stdin.flush()
        except Exception:
            pass
        try:
            proc.stdin.close()
        except Exception:
            pass
    th = threading.Thread(target=up, daemon=True)
    th.start()
    while True:
        b = os.read(proc.stdout.fileno(), 1 << 16)
        if not b:
            break
        chan.sendall(b)
    try:
        proc.wait(TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    return proc.returncode


def binn_object(b):
    """The integers of a binn object (HPN-SSH's metrics answer), by key."""
    def length(i):
        if b[i] & 0x80:
            return int.from_bytes(b[i:i + 4], "big") & 0x7fffffff, i + 4
        return b[i], i + 1
    if b[0] != 0xe2:
        raise ValueError("not a binn object")
    size, i = length(1)
    count, i = length(i)
    if size != len(b):
        raise ValueError("size %d, have %d" % (size, len(b)))
    out = {}
    for _ in range(count):
        klen = b[i]
        key = b[i + 1:i + 1 + klen].decode()
        i += 1 + klen
        t = b[i]
        i += 1
        n = {0x20: 1, 0x40: 2, 0x60: 4, 0x80: 8}[t & 0xfe]
        out[key] = int.from_bytes(b[i:i + n], "big", signed=bool(t & 1))
        i += n
    if i != len(b):
        raise ValueError("trailing bytes")
    return out


def metrics_client(port, key, user):
    """HPN-SSH's client's metrics request to an sshd: print the answer."""
    import socket
    import warnings
    warnings.simplefilter("ignore")
    import paramiko
    s = socket.create_connection(("127.0.0.1", port), TIMEOUT)
    t = paramiko.Transport(s)
    t.local_version = "SSH-2.0-OpenSSH_10.2p1_hpn18.8.0"
    t.start_client(timeout=TIMEOUT)
    t.auth_publickey(user, paramiko.Ed25519Key(filename=key))
    m = t.global_request("stack-metrics@hpnssh.org", wait=True)
    if m is None:
        print("refused")
    else:
        obj = binn_object(m.get_string())
        for k in sorted(obj):
            print("%s %d" % (k, obj[k]))
    t.close()
    return 0


def main():
    global LOG, TIMEOUT, ANSWER
    args = sys.argv[1:]
    while args and args[0].startswith("--"):
        if args[0] == "--log":
            LOG = args[1]
            args = args[2:]
        elif args[0] == "--answer":
            ANSWER = args[1].encode()
            args = args[2:]
        elif args[0] == "--timeout":
            TIMEOUT = int(args[1])
            args = args[2:]
        else:
            break
    if not args:
        sys.exit(__doc__)
    threading.Timer(TIMEOUT + 5, lambda: os._exit(3)).start()
    mode = args[0]
    if mode in ("sink", "source"):
        i = args.index("--")
        rc = run_local(mode, args[1:i], args[i + 1:])
        os._exit(rc if rc is not None else 2)
    elif mode == "metrics-client":
        os._exit(metrics_client(int(args[1]), args[2], args[3]))
    elif mode == "server":
        server(int(args[1]), args[2], args[3], args[4:])
        os._exit(0)
    sys.exit(__doc__)


if __name__ == "__main__":
    main()
