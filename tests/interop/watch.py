#!/usr/bin/python3
"""watch.py FILE SIZE TIMEOUT_S OUT

Polls FILE's size every 5 ms until it reaches SIZE bytes (or TIMEOUT_S
seconds pass, or SIGTERM), then writes "first_ns last_ns size" to OUT:
when the size was first seen above 0 and when it reached SIZE (0 if it
never did); wall clock, nanoseconds.  The interop matrix's throughput
figure is SIZE / (last - first): connection set-up excluded.
"""

import os
import signal
import sys
import time


def main():
    path, size, timeout, out = (sys.argv[1], int(sys.argv[2]),
                                float(sys.argv[3]), sys.argv[4])
    stop = []
    signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
    first = last = cur = 0
    end = time.monotonic() + timeout
    while not stop and time.monotonic() < end:
        try:
            cur = os.stat(path).st_size
        except OSError:
            cur = 0
        now = time.time_ns()
        if cur > 0 and not first:
            first = now
        if cur >= size:
            last = now
            break
        time.sleep(0.005)
    with open(out + ".tmp", "w") as f:
        f.write("%d %d %d\n" % (first, last, cur))
    os.rename(out + ".tmp", out)


if __name__ == "__main__":
    main()
