#!/usr/bin/python3
"""delay-relay.py SECONDS COMMAND...: a ProxyCommand with a slow return path.

Runs COMMAND (e.g. "sshd -i -f CONFIG") and copies our stdin to it at once,
and its stdout to ours, each chunk read held back SECONDS before it is
passed on, in order: a server whose replies take at least that long, so
that a test can act while a reply is pending.  Ends when COMMAND's output ends; bounded by an
alarm.
"""

import os
import subprocess
import sys
import threading
import time
import signal


def main():
    delay = float(sys.argv[1])
    p = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE,
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
        try:
            os.write(1, d)
        except OSError:
            break
    p.wait()


if __name__ == "__main__":
    main()
