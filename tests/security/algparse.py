#!/usr/bin/python3
"""One publickey or hostbased request with a key blob that is not a key,
for tests/security/auth-alg-before-parse.sh (authclient.py's RawAuth).

  algparse.py publickey|hostbased ALG LOG USER -- SSHD_COMMAND...

Runs SSHD_COMMAND (an sshd in inetd mode, -i) on a socket pair and, as
USER, sends one userauth request of the method naming algorithm ALG with
a key blob that no parser accepts: a publickey query (no signature), or
a hostbased request from localhost with a made-up signature.  sshd's
stderr goes to LOG.  Prints "REPLY TYPE" (FAILURE, SUCCESS, ... or
DISCONNECTED).  Every wait is bounded (authclient.TIMEOUT).
"""

import signal
import sys

from authclient import (MSG_USERAUTH_REQUEST, NAMES, TIMEOUT, Disconnected,
                        RawAuth, userauth_request)

BLOB = b"\x00\x00\x00\x07not-a-k\x00\x00\x00\x03bad"


def main():
    args = sys.argv[1:]
    if len(args) < 6 or args[4] != "--" or \
            args[0] not in ("publickey", "hostbased"):
        sys.exit(__doc__)
    method, alg, logname, user = args[0:4]
    signal.alarm(TIMEOUT * 3)
    log = open(logname, "a")
    c = RawAuth(args[5:], log)
    if method == "publickey":
        extra = [False, alg, BLOB]
    else:
        extra = [alg, BLOB, "localhost.", user, b"not a signature"]
    c.send(MSG_USERAUTH_REQUEST, userauth_request(user, method, extra))
    try:
        mtype = c.recv_skip_banner()[0]
        reply = NAMES.get(mtype, str(mtype))
    except Disconnected:
        reply = "DISCONNECTED"
    c.close()
    print("REPLY %s" % reply, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
