#!/usr/bin/python3
"""hpn-early-sent.py FILE: what a client sent before any keys were in use.

FILE is what the client wrote on one connection (hpn-early-relay.py
--capture).  Prints the version string, then the message number of each
unencrypted binary packet (RFC 4253 section 6, no MAC), one a line, and
"rest N" when N bytes follow that do not parse as such packets (what goes
after NEWKEYS is encrypted).  Exits 2 on a file that does not start with
a version string.
"""

import struct
import sys


def main():
    d = open(sys.argv[1], "rb").read()
    nl = d.find(b"\r\n")
    if not d.startswith(b"SSH-") or nl < 0:
        print("no version string")
        sys.exit(2)
    print(d[:nl].decode("ascii", "replace"))
    i = nl + 2
    while i + 5 <= len(d):
        plen, padlen = struct.unpack(">IB", d[i:i + 5])
        if plen < 5 or plen > 35000 or padlen >= plen or \
                i + 4 + plen > len(d):
            break
        t = d[i + 5]
        print(t)
        i += 4 + plen
        if t == 21:	# NEWKEYS: encrypted from here
            break
    if i < len(d):
        print("rest %d" % (len(d) - i))


if __name__ == "__main__":
    main()
