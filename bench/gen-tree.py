#!/usr/bin/python3
"""bench/gen-tree.py DIR [--files N] [--dirs N] [--seed S]

Makes a tree of files shaped like a source tree (tree-bench.sh's "real"
case): N files (default 8000) in D directories (default 600, depth up to
8 below DIR), sizes drawn so that about 80 % are under 16 KiB (log-uniform
from 64 B), 20 % from 16 to 96 KiB and the rest (a dozen or two) from
1 to 3 MiB; about 120 MiB in all.  Random contents (nothing compresses),
the same tree for the same seed.  Regular files and directories only.
"""

import argparse
import os
import random
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("--files", type=int, default=8000)
    p.add_argument("--dirs", type=int, default=600)
    p.add_argument("--depth", type=int, default=8)
    p.add_argument("--seed", type=int, default=45)
    a = p.parse_args()
    if not (1 <= a.files <= 1000000 and 1 <= a.dirs <= 100000 and
            1 <= a.depth <= 64):
        sys.exit("gen-tree: files 1-10^6, dirs 1-10^5, depth 1-64")
    rnd = random.Random(a.seed)
    os.makedirs(a.dir, exist_ok=True)
    # directories: each under a random earlier one short of the depth,
    # the first ones a chain so that the full depth is there
    dirs = [("", 0)]
    for i in range(a.dirs):
        if i < a.depth:
            parent, depth = dirs[-1]
        else:
            while True:
                parent, depth = dirs[rnd.randrange(len(dirs))]
                if depth < a.depth:
                    break
        path = os.path.join(parent, "d%d" % i)
        os.mkdir(os.path.join(a.dir, path))
        dirs.append((path, depth + 1))
    # random bytes from one pool, cut at random offsets: fast, and no
    # two files alike
    pool = os.urandom(8 << 20)
    total = 0
    for i in range(a.files):
        u = rnd.random()
        if u < 0.80:
            size = int(64 * (16384 / 64) ** rnd.random())
        elif u < 0.998:
            size = int(16384 * 6 ** rnd.random())
        else:
            size = int((1 << 20) * 3 ** rnd.random())
        parent, _ = dirs[rnd.randrange(len(dirs))]
        off = rnd.randrange(len(pool) - size)
        with open(os.path.join(a.dir, parent, "f%d.c" % i), "wb") as f:
            f.write(i.to_bytes(4, "big") + pool[off:off + size - 4]
                    if size >= 4 else pool[off:off + size])
        total += size
    print("%d files, %d directories, %d bytes" % (a.files, a.dirs + 1, total))


if __name__ == "__main__":
    main()
