"""SFTP framing shared by the regress tests' Python relays
(hpn-sftp-proxy.py, hpn-sftp-hostile.py)."""

import struct


def frames(buf):
    """Complete packets (type byte first) off the front of buf."""
    out = []
    while len(buf) >= 4:
        (n,) = struct.unpack(">I", buf[:4])
        if len(buf) < 4 + n:
            break
        out.append(bytes(buf[4:4 + n]))
        del buf[:4 + n]
    return out
