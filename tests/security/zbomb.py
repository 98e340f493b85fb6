#!/usr/bin/python3
"""A client that sends sshd one highly compressed packet (paramiko), for
tests/security/cve-2026-106585.sh.

  zbomb.py USER KEY SIZE -- SSHD_COMMAND...

Runs SSHD_COMMAND (an sshd in inetd mode, -i) on a socket pair, asks for
zlib@openssh.com compression, authenticates as USER with the private key
KEY, then sends SSH_MSG_IGNORE carrying SIZE zero bytes (a few KiB on the
wire once compressed), and then runs "echo alive" in a session to see
whether the connection survived.  Prints
  RESULT compression=NAME alive=yes|no
and exits 0; exits 1 when compression was not negotiated or the set-up
failed.  Every wait is bounded (TIMEOUT); the sshd is killed at the end.
"""

import signal
import socket
import sys

import paramiko
from paramiko.common import cMSG_IGNORE
from paramiko.message import Message

from sshdsock import TIMEOUT, exec_output, sshd_socket


def main():
    if len(sys.argv) < 6 or sys.argv[4] != "--":
        sys.exit(__doc__)
    user, keyfile, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
    argv = sys.argv[5:]
    signal.alarm(TIMEOUT * 3)
    alive = "no"
    with sshd_socket(argv) as ours:
        t = paramiko.Transport(ours)
        t.use_compression(True)
        t.start_client(timeout=TIMEOUT)
        # delayed compression starts once authenticated (paramiko's
        # _auth_trigger), with what the key exchange agreed
        t.auth_publickey(user, paramiko.Ed25519Key.from_private_key_file(keyfile))
        comp = t.local_compression
        if comp == "none":
            print("zbomb: compression was not negotiated", file=sys.stderr)
            print("RESULT compression=none alive=?")
            return 1
        m = Message()
        m.add_byte(cMSG_IGNORE)
        m.add_string(b"\0" * size)
        t._send_user_message(m)
        try:
            if exec_output(t, "echo alive").strip() == b"alive":
                alive = "yes"
        except (paramiko.SSHException, EOFError, OSError, socket.timeout):
            pass
        print("RESULT compression=%s alive=%s" % (comp, alive))
        return 0


if __name__ == "__main__":
    sys.exit(main())
