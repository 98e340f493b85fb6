#!/usr/bin/python3
"""delay-relay.py [--gate FILE] SECONDS COMMAND...: a ProxyCommand with a
slow return path.

Runs COMMAND (e.g. "sshd -i -f CONFIG") and copies our stdin to it at once,
and its stdout to ours, each chunk read held back SECONDS before it is
passed on, in order: a server whose replies take at least that long, so
that a test can act while a reply is pending.  With --gate, a chunk whose
SECONDS are up is held further while FILE exists: the test makes FILE
within SECONDS of the request whose reply it holds, and removes it once
it has done what must come before that reply.  Ends when COMMAND's output
ends; bounded by an alarm.
"""

import os
import subprocess
import sys
import threading
import time
import signal


def main():
    args = sys.argv[1:]
    gate = None
    if args[0] == "--gate":
        gate, args = args[1], args[2:]
    delay = float(args[0])
    p = subprocess.Popen(args[1:], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, bufsize=0)
    signal.alarm(600)

    def up():
        try:
            while True:
                d = os.read(0, 65536)
                if not d:
                    break
                p.stdin.write(d)
        except OSError:
            pass
        try:
            p.stdin.close()
        except OSError:
            pass

    threading.Thread(target=up, daemon=True).start()
    while True:
        d = os.read(p.stdout.fileno(), 65536)
        if not d:
            break
        time.sleep(delay)
        while gate is not None and os.path.exists(gate):
            time.sleep(0.02)
        try:
            os.write(1, d)
        except OSError:
            break
    p.wait()


if __name__ == "__main__":
    main()
