"""What pyclient.py and pyserver.py share: their copy size and copy loop."""

CHUNK = 256 * 1024


def pump(read, write):
    """Copy read(CHUNK) to write() until read() returns nothing."""
    while True:
        b = read(CHUNK)
        if not b:
            break
        write(b)
