#!/usr/bin/python3
"""An SSH client that speaks the userauth protocol message by message, for
the security regress tests (paramiko for the transport, python3-gssapi for
Kerberos).

  authclient.py MODE LOG USER N -- SSHD_COMMAND...

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
  gss-stalemic  gss-mic, but once the exchange is complete a "none"
                request comes first, then the exchange's MIC, then
                another "none": a MIC of an abandoned exchange
                (CVE-2026-106555); the replies after the MIC are in the
                attempt's list (a FAILURE for the MIC, or none).

For every attempt it prints
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
        self.t = paramiko.Transport(ours)
        # The transport calls handler(auth_handler, message without type)
        self._handler_table = {
            t: RawAuth._handler(t) for t in (MSG_SERVICE_ACCEPT, 51, 52, 53,
                                             60, 61, 62, 63, 64, 65, 66)}
        def disconnect(m):
            m.get_int()                   # reason code
            self.reason = m.get_text()
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
        self.q.put((None, None, time.monotonic()))

    def is_authenticated(self):
        return False

    def send(self, mtype, fields):
        m = Message()
        m.add_byte(bytes([mtype]))
        for f in fields:
            if isinstance(f, int):
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

    def recv_within(self, secs):
        """(type, message, time) or None when nothing came in secs."""
        try:
            mtype, m, t = self.q.get(timeout=secs)
        except queue.Empty:
            return None
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
    if mode == "gss-stalemic":
        # a new request first: the exchange above is abandoned
        c.send(MSG_USERAUTH_REQUEST, userauth_request(user, "none", []))
        mtype, m, t = c.recv_skip_banner()
        replies.append(mtype)
        c.send(MSG_USERAUTH_GSSAPI_MIC, [sig])
        c.send(MSG_USERAUTH_REQUEST, userauth_request(user, "none", []))
        replies.append("|")
        while True:
            r = c.recv_within(5)
            if r is None:
                break
            replies.append(r[0])
            if replies.count(MSG_USERAUTH_FAILURE) >= 3:
                break
        return replies, None
    sent = c.send(MSG_USERAUTH_GSSAPI_MIC, [sig])
    mtype, m, t = c.recv_skip_banner()
    replies.append(mtype)
    return replies, ((t - sent) * 1000
                     if mtype == MSG_USERAUTH_FAILURE else None)


def main():
    signal.alarm(TIMEOUT * 10)
    if len(sys.argv) < 7 or sys.argv[5] != "--":
        sys.exit(__doc__)
    mode, logname, user, n = sys.argv[1:5]
    n = int(n)
    if mode not in ("kbdint", "gss-mic", "gss-badtoken", "gss-errtok",
                    "gss-stalemic"):
        sys.exit(__doc__)
    names = dict(NAMES)
    if mode == "kbdint":
        names[60] = "INFO_REQUEST"
    log = open(logname, "a")
    c = RawAuth(sys.argv[6:], log)
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
                i, ",".join(names.get(r, str(r)) if r != "|" else "|"
                            for r in replies),
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
