#!/usr/bin/python3
"""maxrss.py SECONDS COMMAND...: runs COMMAND (its output to ours) and
prints "RESULT exit=N maxrss_kb=K": its exit status ("signal-N" when a
signal ended it, "killed" when it was still running after SECONDS and
we killed it) and the largest resident set it reached, from wait4(2).
For tests/security/keyfile-size-limit.sh."""

import os
import signal
import subprocess
import sys

def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    killed = []

    def kill(*a):
        killed.append(1)
        p.kill()
    p = subprocess.Popen(sys.argv[2:])
    signal.signal(signal.SIGALRM, kill)
    signal.alarm(int(sys.argv[1]))
    _, status, ru = os.wait4(p.pid, 0)
    signal.alarm(0)
    if killed:
        code = "killed"
    elif os.WIFSIGNALED(status):
        code = "signal-%d" % os.WTERMSIG(status)
    else:
        code = "%d" % os.WEXITSTATUS(status)
    print("RESULT exit=%s maxrss_kb=%d" % (code, ru.ru_maxrss), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
