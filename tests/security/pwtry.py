#!/usr/bin/python3
"""One password authentication against sshd (paramiko), for
tests/security/cve-2026-123158.sh.

  pwtry.py USER LENGTH -- SSHD_COMMAND...

Runs SSHD_COMMAND (an sshd in inetd mode, -i) on a socket pair and tries
the "password" method as USER with a password of LENGTH letters "a", or
with "short" when LENGTH is 0.  Prints
  RESULT auth=ok|refused
and exits 0; exits 1 when the set-up failed.  Every wait is bounded
(TIMEOUT); the sshd is killed at the end.
"""

import signal
import sys

import paramiko

from sshdsock import TIMEOUT, sshd_socket


def main():
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        sys.exit(__doc__)
    user, length, argv = sys.argv[1], int(sys.argv[2]), sys.argv[4:]
    password = "a" * length if length > 0 else "short"
    signal.alarm(TIMEOUT * 2)
    with sshd_socket(argv) as ours:
        t = paramiko.Transport(ours)
        t.start_client(timeout=TIMEOUT)
        try:
            t.auth_password(user, password)
            ok = t.is_authenticated()
        except paramiko.AuthenticationException:
            ok = False
        print("RESULT auth=%s" % ("ok" if ok else "refused"))
        t.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
