#!/usr/bin/python3
"""An SSH client that speaks the userauth protocol message by message, for
the security regress tests (paramiko for the transport, python3-gssapi for
Kerberos).

  authclient.py [-d] [-k KEY] [-c COMMAND] MODE LOG USER N -- SSHD_COMMAND...

Runs SSHD_COMMAND (an sshd in inetd mode, -i) on a socket pair, sets up the
transport, and makes N authentication attempts as USER, every one of them
failing.  Its trace goes to LOG.  MODE:

  kbdint        keyboard-interactive: a wrong answer to every prompt.
  gss-mic       gssapi-with-mic with the Kerberos ticket in KRB5CCNAME for
                host@HOSTNAME (GSS_TARGET): the exchange completes and the
                MIC is sent; the server refuses the principal for USER.
  gss-badtoken  gssapi-with-mic: a token that is not a Kerberos one.
  gss-errtok    gssapi-with-mic: after the server's response, an error
                token (SSH_MSG_USERAUTH_GSSAPI_ERRTOK), then straight on
                to the next attempt, as a client whose GSSAPI failed does.

The modes of an exchange's state across attempts run once (N is ignored),
with the Kerberos ticket in KRB5CCNAME, host@GSS_TARGET, the mutual and
integrity flags (and with -d the delegation flag: the ticket must be
forwardable), and may succeed:

  gss-login     a complete exchange and its MIC.
  gss-badmic    a complete exchange, then its MIC with one byte changed.
  gss-abandon   a complete exchange, then no MIC: the next request.
  gss-stale-mic a complete exchange, a "none" request, then the MIC of the
                exchange.
  gss-stale-client
                a complete exchange, then a second gssapi-with-mic request
                whose context has no mutual flag, and the MIC of the second.
  gss-nomutual  an exchange whose context has no mutual flag, and its MIC.

Each prints "STEP NAME REPLY" for the server's answer to each step ("none",
"mic", "publickey"; an exchange, "exchange" or "exchange2", only when it
stops before its context completes), REPLY a message type as below or
DISCONNECTED; "RESULT disconnected=yes|no reason=TEXT" at the end.  After
gss-badmic and gss-abandon, and after a gss-login that failed, -k KEY (an
OpenSSH private key: ed25519) makes a publickey attempt, step
"publickey".  Once authenticated, -c COMMAND runs COMMAND in a session:
each line of its output is printed as "OUT LINE", its exit status as
"EXIT N".

For every attempt of the other modes it prints
  ATTEMPT i replies=TYPE,TYPE... ms=T
with the types of the server's messages (FAILURE, GSSAPI_RESPONSE, ...)
and T the milliseconds from sending the attempt's last message to the
FAILURE that ended it (- if none), then
  RESULT attempts=K disconnected=yes|no reason=TEXT min_ms=T
K attempts were made before the server disconnected (or N).  After the
attempts of gss-errtok, a "none" request checks that the connection is
still up.  Exits 1 with a message when the server does something the mode
does not expect (e.g. a success).  Every wait is bounded (TIMEOUT).
"""

import os
import queue
import signal
import socket
import subprocess
import sys
import time

import paramiko
from paramiko.message import Message

TIMEOUT = 30

MSG_SERVICE_REQUEST = 5
MSG_SERVICE_ACCEPT = 6
MSG_USERAUTH_REQUEST = 50
MSG_USERAUTH_FAILURE = 51
MSG_USERAUTH_SUCCESS = 52
MSG_USERAUTH_BANNER = 53
MSG_USERAUTH_INFO_REQUEST = 60      # keyboard-interactive
MSG_USERAUTH_INFO_RESPONSE = 61
MSG_USERAUTH_GSSAPI_RESPONSE = 60   # gssapi-with-mic
MSG_USERAUTH_GSSAPI_TOKEN = 61
MSG_USERAUTH_GSSAPI_ERROR = 64
MSG_USERAUTH_GSSAPI_ERRTOK = 65
MSG_USERAUTH_GSSAPI_MIC = 66

NAMES = {51: "FAILURE", 52: "SUCCESS", 53: "BANNER", 60: "RESPONSE",
         61: "TOKEN", 64: "ERROR", 65: "ERRTOK"}

# DER of the Kerberos 5 mechanism, 1.2.840.113554.1.2.2
KRB5_OID = bytes.fromhex("06092a864886f712010202")


class Disconnected(Exception):
    pass


class RawAuth:
    """The userauth layer by hand: paramiko's transport thread hands every
    userauth message to us (we stand in for its AuthHandler)."""

    def __init__(self, argv, log):
        ours, theirs = socket.socketpair()
        self.proc = subprocess.Popen(argv, stdin=theirs, stdout=theirs,
                                     stderr=log)
        theirs.close()
        self.q = queue.Queue()
        self.reason = ""
        self.disconnected = False
        self.t = paramiko.Transport(ours)
        # The transport calls handler(auth_handler, message without type)
        self._handler_table = {
            t: RawAuth._handler(t) for t in (MSG_SERVICE_ACCEPT, 51, 52, 53,
                                             60, 61, 62, 63, 64, 65, 66)}
        def disconnect(m):
            m.get_int()                   # reason code
            self.reason = m.get_text()
            self.disconnected = True
            self.q.put((None, None, time.monotonic()))
        self.t._parse_disconnect = disconnect
        self.t.start_client(timeout=TIMEOUT)
        self.t.auth_handler = self
        self.send(MSG_SERVICE_REQUEST, ["ssh-userauth"])
        if self.recv()[0] != MSG_SERVICE_ACCEPT:
            sys.exit("authclient: no SERVICE_ACCEPT")

    @staticmethod
    def _handler(mtype):
        # runs in the transport thread
        def got(self, m):
            self.q.put((mtype, m, time.monotonic()))
        return got

    def abort(self):
        self.disconnected = True
        self.q.put((None, None, time.monotonic()))

    def is_authenticated(self):
        return False

    def send(self, mtype, fields):
        m = Message()
        m.add_byte(bytes([mtype]))
        for f in fields:
            if isinstance(f, bool):
                m.add_boolean(f)
            elif isinstance(f, int):
                m.add_int(f)
            else:
                m.add_string(f)
        t = time.monotonic()
        self.t._send_message(m)
        return t

    def recv(self):
        """(type, message, arrival time); raises Disconnected."""
        try:
            mtype, m, t = self.q.get(timeout=TIMEOUT)
        except queue.Empty:
            sys.exit("authclient: no reply within %d s" % TIMEOUT)
        if mtype is None:
            raise Disconnected()
        return mtype, m, t

    def recv_skip_banner(self):
        while True:
            r = self.recv()
            if r[0] != MSG_USERAUTH_BANNER:
                return r

    def close(self):
        self.t.close()
        try:
            self.proc.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def userauth_request(user, method, extra):
    return [user, "ssh-connection", method] + extra


def attempt_kbdint(c, user):
    replies = []
    sent = None
    c.send(MSG_USERAUTH_REQUEST,
           userauth_request(user, "keyboard-interactive", ["", ""]))
    for _ in range(10):
        mtype, m, t = c.recv_skip_banner()
        replies.append(mtype)
        if mtype != MSG_USERAUTH_INFO_REQUEST:
            break
        m.get_text()                      # name
        m.get_text()                      # instruction
        m.get_text()                      # language
        n = m.get_int()
        sent = c.send(MSG_USERAUTH_INFO_RESPONSE,
                      [n] + ["not the password"] * n)
    if replies[-1] == MSG_USERAUTH_FAILURE and sent is not None:
        return replies, (t - sent) * 1000
    return replies, None


def gss_request(c, user):
    c.send(MSG_USERAUTH_REQUEST,
           userauth_request(user, "gssapi-with-mic", [1, KRB5_OID]))
    mtype, m, t = c.recv_skip_banner()
    return mtype


def attempt_gss(c, user, mode):
    replies = [gss_request(c, user)]
    if replies[0] != MSG_USERAUTH_GSSAPI_RESPONSE:
        return replies, None
    if mode == "gss-errtok":
        c.send(MSG_USERAUTH_GSSAPI_ERRTOK, [b"\x60\x00not a GSSAPI token"])
        return replies, None
    if mode == "gss-badtoken":
        sent = c.send(MSG_USERAUTH_GSSAPI_TOKEN, [b"\x60\x00not a token"])
        while True:
            mtype, m, t = c.recv_skip_banner()
            replies.append(mtype)
            if mtype != MSG_USERAUTH_GSSAPI_ERRTOK:
                break
        return replies, ((t - sent) * 1000
                         if mtype == MSG_USERAUTH_FAILURE else None)
    import gssapi
    target = gssapi.Name("host@" + os.environ["GSS_TARGET"],
                         gssapi.NameType.hostbased_service)
    ctx = gssapi.SecurityContext(
        name=target, mech=gssapi.MechType.kerberos, usage="initiate",
        flags=[gssapi.RequirementFlag.mutual_authentication,
               gssapi.RequirementFlag.integrity])
    tok = ctx.step()
    while True:
        c.send(MSG_USERAUTH_GSSAPI_TOKEN, [tok])
        if ctx.complete:
            break
        mtype, m, t = c.recv_skip_banner()
        replies.append(mtype)
        if mtype != MSG_USERAUTH_GSSAPI_TOKEN:
            return replies, None
        tok = ctx.step(m.get_binary())
        if tok is None:
            break
    mic = Message()
    mic.add_string(c.t.session_id)
    mic.add_byte(bytes([MSG_USERAUTH_REQUEST]))
    mic.add_string(user)
    mic.add_string("ssh-connection")
    mic.add_string("gssapi-with-mic")
    sig = ctx.get_signature(mic.asbytes())
    sent = c.send(MSG_USERAUTH_GSSAPI_MIC, [sig])
    mtype, m, t = c.recv_skip_banner()
    replies.append(mtype)
    return replies, ((t - sent) * 1000
                     if mtype == MSG_USERAUTH_FAILURE else None)


STATE_MODES = ("gss-login", "gss-badmic", "gss-abandon", "gss-stale-mic",
               "gss-stale-client", "gss-nomutual")


def gss_context(c, user, mutual=True, delegate=False):
    """gssapi-with-mic until the context is complete: (context, reply to
    the request).  The context is None when the server did not answer
    with GSSAPI_RESPONSE or the exchange stopped."""
    reply = gss_request(c, user)
    if reply != MSG_USERAUTH_GSSAPI_RESPONSE:
        return None, reply
    import gssapi
    target = gssapi.Name("host@" + os.environ["GSS_TARGET"],
                         gssapi.NameType.hostbased_service)
    flags = [gssapi.RequirementFlag.integrity]
    if mutual:
        flags.append(gssapi.RequirementFlag.mutual_authentication)
    if delegate:
        flags.append(gssapi.RequirementFlag.delegate_to_peer)
    ctx = gssapi.SecurityContext(
        name=target, mech=gssapi.MechType.kerberos, usage="initiate",
        flags=flags)
    tok = ctx.step()
    while True:
        c.send(MSG_USERAUTH_GSSAPI_TOKEN, [tok])
        if ctx.complete:
            break
        mtype, m, t = c.recv_skip_banner()
        if mtype != MSG_USERAUTH_GSSAPI_TOKEN:
            return None, mtype
        tok = ctx.step(m.get_binary())
        if ctx.complete and not tok:
            break
    if mutual and gssapi.RequirementFlag.mutual_authentication \
            not in ctx.actual_flags:
        sys.exit("authclient: no mutual authentication")
    if not mutual and gssapi.RequirementFlag.mutual_authentication \
            in ctx.actual_flags:
        sys.exit("authclient: the context has the mutual flag")
    return ctx, MSG_USERAUTH_GSSAPI_RESPONSE


def gss_mic(c, ctx, user, corrupt=False):
    mic = Message()
    mic.add_string(c.t.session_id)
    mic.add_byte(bytes([MSG_USERAUTH_REQUEST]))
    mic.add_string(user)
    mic.add_string("ssh-connection")
    mic.add_string("gssapi-with-mic")
    sig = bytearray(ctx.get_signature(mic.asbytes()))
    if corrupt:
        sig[-1] ^= 0x55
    c.send(MSG_USERAUTH_GSSAPI_MIC, [bytes(sig)])
    return c.recv_skip_banner()[0]


def publickey(c, user, keyfile):
    key = paramiko.Ed25519Key.from_private_key_file(keyfile)
    alg = key.get_name()
    blob = key.asbytes()
    data = Message()
    data.add_string(c.t.session_id)
    data.add_byte(bytes([MSG_USERAUTH_REQUEST]))
    data.add_string(user)
    data.add_string("ssh-connection")
    data.add_string("publickey")
    data.add_boolean(True)
    data.add_string(alg)
    data.add_string(blob)
    sig = key.sign_ssh_data(data.asbytes()).asbytes()
    c.send(MSG_USERAUTH_REQUEST, userauth_request(
        user, "publickey", [True, alg, blob, sig]))
    return c.recv_skip_banner()[0]


def run_command(c, command):
    ch = c.t.open_session(timeout=TIMEOUT)
    ch.settimeout(TIMEOUT)
    ch.exec_command(command)
    out = b""
    while True:
        d = ch.recv(65536)
        if not d:
            break
        out += d
    status = ch.recv_exit_status()
    for line in out.decode(errors="replace").splitlines():
        print("OUT %s" % line, flush=True)
    print("EXIT %d" % status, flush=True)


class Stop(Exception):
    pass


def state_mode(c, mode, user, delegate, keyfile, command):
    """The modes of an exchange's state across attempts."""
    names = dict(NAMES)

    def ask(name, fn, *a, **kw):
        """fn's reply, printed as step NAME; Stop once disconnected."""
        try:
            reply = fn(*a, **kw)
        except Disconnected:
            print("STEP %s DISCONNECTED" % name, flush=True)
            raise Stop()
        if isinstance(reply, tuple):
            ctx, r = reply
            if ctx is None:
                print("STEP %s %s" % (name, names.get(r, str(r))),
                      flush=True)
                raise Stop()
            return ctx
        print("STEP %s %s" % (name, names.get(reply, str(reply))),
              flush=True)
        if reply == MSG_USERAUTH_SUCCESS:
            if command is not None:
                run_command(c, command)
            raise Stop()
        return reply

    def none():
        c.send(MSG_USERAUTH_REQUEST, userauth_request(user, "none", []))
        return c.recv_skip_banner()[0]

    try:
        if mode == "gss-nomutual":
            ctx = ask("exchange", gss_context, c, user, mutual=False)
            ask("mic", gss_mic, c, ctx, user)
            return
        ctx = ask("exchange", gss_context, c, user, delegate=delegate)
        if mode == "gss-stale-mic":
            ask("none", none)
            ask("mic", gss_mic, c, ctx, user)
            return
        if mode == "gss-stale-client":
            ctx2 = ask("exchange2", gss_context, c, user, mutual=False)
            ask("mic", gss_mic, c, ctx2, user)
            return
        if mode == "gss-login":
            ask("mic", gss_mic, c, ctx, user)
        elif mode == "gss-badmic":
            ask("mic", gss_mic, c, ctx, user, corrupt=True)
        if keyfile is not None:
            ask("publickey", publickey, c, user, keyfile)
    except Stop:
        pass


def main():
    signal.alarm(TIMEOUT * 10)
    delegate = False
    keyfile = command = None
    args = sys.argv[1:]
    while args and args[0] in ("-d", "-k", "-c"):
        if args[0] == "-d":
            delegate = True
            args = args[1:]
        elif len(args) < 2:
            sys.exit(__doc__)
        elif args[0] == "-k":
            keyfile, args = args[1], args[2:]
        else:
            command, args = args[1], args[2:]
    if len(args) < 6 or args[4] != "--":
        sys.exit(__doc__)
    mode, logname, user, n = args[0:4]
    n = int(n)
    if mode in STATE_MODES:
        log = open(logname, "a")
        c = RawAuth(args[5:], log)
        state_mode(c, mode, user, delegate, keyfile, command)
        disconnected = c.disconnected     # before close() aborts
        c.close()
        print("RESULT disconnected=%s reason=%s" % (
            "yes" if disconnected else "no",
            c.reason.replace(" ", "_") or "-"), flush=True)
        return
    if mode not in ("kbdint", "gss-mic", "gss-badtoken", "gss-errtok"):
        sys.exit(__doc__)
    names = dict(NAMES)
    if mode == "kbdint":
        names[60] = "INFO_REQUEST"
    log = open(logname, "a")
    c = RawAuth(args[5:], log)
    times = []
    done = 0
    disconnected = "no"
    try:
        for i in range(n):
            if mode == "kbdint":
                replies, ms = attempt_kbdint(c, user)
            else:
                replies, ms = attempt_gss(c, user, mode)
            if MSG_USERAUTH_SUCCESS in replies:
                sys.exit("authclient: the server accepted attempt %d" % i)
            done += 1
            if ms is not None:
                times.append(ms)
            print("ATTEMPT %d replies=%s ms=%s" % (
                i, ",".join(names.get(r, str(r)) for r in replies),
                "-" if ms is None else "%.3f" % ms), flush=True)
        if mode == "gss-errtok":
            c.send(MSG_USERAUTH_REQUEST, userauth_request(user, "none", []))
            if c.recv_skip_banner()[0] != MSG_USERAUTH_FAILURE:
                sys.exit("authclient: no FAILURE for \"none\"")
    except Disconnected:
        disconnected = "yes"
    c.close()
    print("RESULT attempts=%d disconnected=%s reason=%s min_ms=%s" % (
        done, disconnected, c.reason.replace(" ", "_") or "-",
        "%.3f" % min(times) if times else "-"), flush=True)


if __name__ == "__main__":
    main()
