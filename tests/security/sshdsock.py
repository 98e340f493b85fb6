"""An sshd in inetd mode (-i) on one end of a socket pair, for the security
tests' paramiko clients (pwtry.py, zbomb.py, zleak.py): the other end is
theirs; the sshd is waited for at the end, at most TIMEOUT seconds, and
killed past that."""

import contextlib
import socket
import subprocess

TIMEOUT = 30


@contextlib.contextmanager
def sshd_socket(argv):
    ours, theirs = socket.socketpair()
    proc = subprocess.Popen(argv, stdin=theirs, stdout=theirs)
    theirs.close()
    try:
        yield ours
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


def exec_output(t, command):
    """What COMMAND, run in a new session of the paramiko transport t,
    writes to its standard output, to its end (each read bounded)."""
    ch = t.open_session(timeout=TIMEOUT)
    ch.settimeout(TIMEOUT)
    ch.exec_command(command)
    out = b""
    while True:
        d = ch.recv(1024)
        if not d:
            break
        out += d
    ch.close()
    return out
