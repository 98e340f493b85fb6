#!/usr/bin/python3
"""Records what an SFTP client sends its server, as a fuzzing seed.

  sftp-capture.py OUT ROOT SERVER [ARGS...]

Used as hpnsftp's or hpnscp's -D program (a local server on a pipe): runs
SERVER, relays both ways, and writes the client's bytes to OUT, every
message as it was sent, but for paths under ROOT (the directory the
server was run in, laid out like the sftp_server harness's fixture),
which become paths from the fixture's "/" ("ROOT/file" -> "/file"), with
the lengths of their strings and messages adjusted.  Nothing else is
changed.  Bounded: gives up after 60 seconds without traffic.
"""

import os
import select
import struct
import subprocess
import sys


def rewrite(msg, root):
    """Every string of msg that starts with root, made relative to it."""
    out = b""
    i = 0
    while True:
        j = msg.find(root, i)
        if j < 0 or j < 4:
            return out + msg[i:]
        (n,) = struct.unpack(">I", msg[j - 4:j])
        rest = msg[j + len(root):j - 4 + 4 + n] if n >= len(root) else None
        if rest is None or j + n > len(msg) or (rest and rest[:1] != b"/"):
            out += msg[i:j + len(root)]
            i = j + len(root)
            continue
        new = rest if rest else b"/"
        out += msg[i:j - 4] + struct.pack(">I", len(new)) + new
        i = j + n


def main():
    out, root, argv = sys.argv[1], os.fsencode(sys.argv[2]), sys.argv[3:]
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    rec = b""
    cin, sin, sout = sys.stdin.buffer.fileno(), p.stdin.fileno(), \
        p.stdout.fileno()
    open_in = True
    while True:
        fds = [sout] + ([cin] if open_in else [])
        r, _, _ = select.select(fds, [], [], 60)
        if not r:
            break
        if cin in r:
            d = os.read(cin, 1 << 20)
            if not d:
                open_in = False
                p.stdin.close()
            else:
                rec += d
                os.write(sin, d)
        if sout in r:
            d = os.read(sout, 1 << 20)
            if not d:
                break
            os.write(sys.stdout.buffer.fileno(), d)
    p.wait(timeout=30)
    msgs, i = [], 0
    while i + 4 <= len(rec):
        (n,) = struct.unpack(">I", rec[i:i + 4])
        body = rewrite(rec[i + 4:i + 4 + n], root)
        msgs.append(struct.pack(">I", len(body)) + body)
        i += 4 + n
    with open(out, "wb") as f:
        f.write(b"".join(msgs) + rec[i:])


main()
