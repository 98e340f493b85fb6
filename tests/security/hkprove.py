#!/usr/bin/python3
"""Host-key proofs asked of sshd (paramiko), for
tests/security/hostkey-proof-once.sh.

  hkprove.py USER KEY -- SSHD_COMMAND...

Runs SSHD_COMMAND (an sshd in inetd mode, -i) twice on a socket pair,
authenticates as USER with the private key KEY (ed25519) each time, and
sends hostkeys-prove-00@openssh.com global requests (UpdateHostKeys'
request) naming the host key the server presented:

  connection 1: one request naming it, then the same request again;
  connection 2: one request naming it twice.

Prints one line per request, "PROOF NAME ok SIGS" (the server signed:
SIGS proofs in its reply), "PROOF NAME refused" (REQUEST_FAILURE, the
connection still up) or "PROOF NAME disconnected", NAME "first", "again"
and "twice".  Exits 1 with a message when set-up or authentication
fails.  Every wait is bounded (TIMEOUT); the sshd is killed at the end.
"""

import signal
import sys

import paramiko

from sshdsock import TIMEOUT, sshd_socket

REQ = "hostkeys-prove-00@openssh.com"


def connect(ours, user, keyfile):
    t = paramiko.Transport(ours)
    t.start_client(timeout=TIMEOUT)
    t.auth_publickey(user, paramiko.Ed25519Key.from_private_key_file(keyfile))
    if not t.is_authenticated():
        raise RuntimeError("not authenticated")
    return t


def prove(t, name, blobs):
    m = t.global_request(REQ, tuple(blobs), wait=True)
    if m is not None:
        n = 0
        while m.get_remainder():
            m.get_binary()
            n += 1
        print("PROOF %s ok %d" % (name, n))
    elif t.is_active():
        print("PROOF %s refused" % name)
    else:
        print("PROOF %s disconnected" % name)
    sys.stdout.flush()


def main():
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        sys.exit(__doc__)
    user, keyfile, argv = sys.argv[1], sys.argv[2], sys.argv[4:]
    signal.alarm(TIMEOUT * 4)
    with sshd_socket(argv) as ours:
        t = connect(ours, user, keyfile)
        blob = t.get_remote_server_key().asbytes()
        prove(t, "first", [blob])
        if t.is_active():
            prove(t, "again", [blob])
        t.close()
    with sshd_socket(argv) as ours:
        t = connect(ours, user, keyfile)
        blob = t.get_remote_server_key().asbytes()
        prove(t, "twice", [blob, blob])
        t.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
