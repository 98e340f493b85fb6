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
import subprocess
import sys
import time

import paramiko
from paramiko.common import cMSG_IGNORE
from paramiko.message import Message

TIMEOUT = 30


def main():
    if len(sys.argv) < 6 or sys.argv[4] != "--":
        sys.exit(__doc__)
    user, keyfile, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
    argv = sys.argv[5:]
    signal.alarm(TIMEOUT * 3)
    ours, theirs = socket.socketpair()
    proc = subprocess.Popen(argv, stdin=theirs, stdout=theirs)
    theirs.close()
    alive = "no"
    try:
        t = paramiko.Transport(ours)
        t.use_compression(True)
        t.start_client(timeout=TIMEOUT)
        t.auth_publickey(user, paramiko.Ed25519Key.from_private_key_file(keyfile))
        # delayed compression starts once authenticated
        deadline = time.time() + TIMEOUT
        while t.remote_compression == "none" and time.time() < deadline:
            time.sleep(0.05)
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
            ch = t.open_session(timeout=TIMEOUT)
            ch.settimeout(TIMEOUT)
            ch.exec_command("echo alive")
            out = b""
            while True:
                d = ch.recv(1024)
                if not d:
                    break
                out += d
            if out.strip() == b"alive":
                alive = "yes"
        except (paramiko.SSHException, EOFError, OSError, socket.timeout):
            pass
        print("RESULT compression=%s alive=%s" % (comp, alive))
        return 0
    finally:
        try:
            ours.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    sys.exit(main())
