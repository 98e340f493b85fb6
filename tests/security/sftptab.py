#!/usr/bin/python3
"""Types a line with a TAB into an interactive sftp on a terminal, for
tests/security/sftp-makeargv.sh.

  sftptab.py TEXT -- COMMAND...

Runs COMMAND (sftp, interactive: its standard input a pseudo-terminal),
waits for its "sftp> " prompt, types TEXT and a TAB (libedit calls
sftp's tab completion on the line so far), then Ctrl-U (the line
dropped) and "quit".  Prints what the terminal showed, then
"EXIT N" (COMMAND's exit status; "EXIT signal N" when a signal ended
it).  Exits 1 with a message when the prompt does not come.  Every wait
is bounded (TIMEOUT); COMMAND is killed past it.
"""

import os
import pty
import select
import signal
import sys
import time

TIMEOUT = 60


def read_until(fd, want, deadline):
    """What fd gives until want shows in it (or EOF, or the deadline)."""
    got = b""
    while want not in got and time.monotonic() < deadline:
        r, _, _ = select.select([fd], [], [], 0.2)
        if not r:
            continue
        try:
            d = os.read(fd, 4096)
        except OSError:
            break
        if not d:
            break
        got += d
    return got


def main():
    args = sys.argv[1:]
    if len(args) < 3 or args[1] != "--":
        sys.exit(__doc__)
    text, argv = args[0].encode(), args[2:]
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    deadline = time.monotonic() + TIMEOUT
    seen = read_until(fd, b"sftp> ", deadline)
    ok = b"sftp> " in seen
    if ok:
        os.write(fd, text + b"\t")
        # the completion's own output, if any, and libedit's redisplay
        seen += read_until(fd, b"\x07", time.monotonic() + 3)
        os.write(fd, b"\x15quit\r")
        seen += read_until(fd, b"\x00never", deadline)
    status = None
    while time.monotonic() < deadline:
        p, st = os.waitpid(pid, os.WNOHANG)
        if p == pid:
            status = st
            break
        time.sleep(0.1)
    if status is None:
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    sys.stdout.write(seen.decode("utf-8", "replace") + "\n")
    if os.WIFSIGNALED(status):
        print("EXIT signal %d" % os.WTERMSIG(status))
    else:
        print("EXIT %d" % os.WEXITSTATUS(status))
    if not ok:
        sys.exit("sftptab: no sftp> prompt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
