#!/usr/bin/python3
"""Compressed sizes of what sshd sends per channel (paramiko), for
tests/security/cve-2026-106582.sh.

  zleak.py USER KEY -- SSHD_COMMAND...

Runs SSHD_COMMAND (an sshd in inetd mode, -i) on a socket pair, asks for
zlib@openssh.com compression, authenticates as USER with the private key
KEY, and runs three commands in three sessions, one after the other:
  1. printf SECRET       (48 random characters)
  2. printf OTHER        (48 other random characters)
  3. printf SECRET       (the first again)
It records the compressed length of every packet sshd sends and prints,
for the SSH_MSG_CHANNEL_DATA packet that carried each command's output,
  RESULT compression=NAME first=N other=N again=N
With one dictionary across packets, "again" is far smaller than "other"
(it repeats channel 1's bytes); with a dictionary per packet the two are
the same within a few bytes.  Exits 1 when something is missing.  Every
wait is bounded (TIMEOUT); the sshd is killed at the end.
"""

import secrets
import signal
import string
import sys

import paramiko
from paramiko import compress

from sshdsock import TIMEOUT, exec_output, sshd_socket

SIZES = []      # (compressed length, decompressed payload)


class Recording(compress.ZlibDecompressor):
    def __call__(self, data):
        out = super().__call__(data)
        SIZES.append((len(data), bytes(out)))
        return out


def random_text():
    abc = string.ascii_letters + string.digits
    return "".join(secrets.choice(abc) for _ in range(48))


def run(t, text):
    out = exec_output(t, "printf %s" % text)
    if out != text.encode():
        raise RuntimeError("command output %r" % out)


def data_sizes(text):
    """Compressed lengths of the SSH_MSG_CHANNEL_DATA (94) packets whose
    payload holds text, in the order they came."""
    return [n for n, payload in SIZES
            if payload[:1] == b"\x5e" and text.encode() in payload]


def main():
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        sys.exit(__doc__)
    user, keyfile, argv = sys.argv[1], sys.argv[2], sys.argv[4:]
    signal.alarm(TIMEOUT * 3)
    with sshd_socket(argv) as ours:
        t = paramiko.Transport(ours)
        t._compression_info = dict(t._compression_info)
        t._compression_info["zlib@openssh.com"] = (compress.ZlibCompressor,
                                                   Recording)
        t.use_compression(True)
        t.start_client(timeout=TIMEOUT)
        t.auth_publickey(user, paramiko.Ed25519Key.from_private_key_file(keyfile))
        if t.remote_compression != "zlib@openssh.com":
            print("RESULT compression=%s" % t.remote_compression)
            return 1
        secret, other = random_text(), random_text()
        for text in (secret, other, secret):
            run(t, text)
        secrets_n, other_n = data_sizes(secret), data_sizes(other)
        if len(secrets_n) < 2 or not other_n:
            print("zleak: a command's data packet was not seen", file=sys.stderr)
            return 1
        print("RESULT compression=%s first=%d other=%d again=%d" %
              (t.remote_compression, secrets_n[0], other_n[0], secrets_n[1]))
        t.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
