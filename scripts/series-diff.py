#!/usr/bin/env python3
"""series-diff.py [REV]: what a refresh or rebase changed in patches/.

For every patch in patches/series, compares the committed version (git REV,
default HEAD) with the working copy, hunk by hunk per file:
  - "lines": the added/removed lines differ (a real change of the patch);
  - "context": the same change now sits in other context lines.  After a
    rebase with fuzz this is where a hunk may have landed in the wrong
    place: read every one of these.
Exit status 0 if nothing differs, 1 otherwise.  See HACKING.md, "Rebasing".
"""
import subprocess
import sys
import os

top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
rev = sys.argv[1] if len(sys.argv) > 1 else "HEAD"


def hunks(text):
    out, cur, h = {}, None, None
    for line in text.split("\n"):
        if line.startswith("--- a/"):
            cur = line[6:]
            out.setdefault(cur, [])
            h = None
            continue
        if line.startswith("+++ "):
            continue
        if line.startswith("@@"):
            h = []
            out[cur].append(h)
            continue
        if cur is not None and h is not None and line[:1] in (" ", "+", "-"):
            h.append(line)
    return out


def changes(h):
    return [l for l in h if l[:1] in "+-"]


series = open(os.path.join(top, "patches", "series")).read().split()
differ = 0
for name in series:
    r = subprocess.run(["git", "-C", top, "show", f"{rev}:patches/{name}"],
                       capture_output=True, text=True)
    new = open(os.path.join(top, "patches", name)).read()
    if r.returncode != 0:
        print(f"{name}: new patch (not in {rev})")
        differ = 1
        continue
    o, n = hunks(r.stdout), hunks(new)
    for f in sorted(set(o) | set(n)):
        if f not in o or f not in n:
            print(f"{name}: {f}: file {'added to' if f in n else 'dropped from'} the patch")
            differ = 1
            continue
        if len(o[f]) != len(n[f]):
            print(f"{name}: {f}: {len(o[f])} hunks -> {len(n[f])}")
            differ = 1
            continue
        for i, (a, b) in enumerate(zip(o[f], n[f]), 1):
            if a == b:
                continue
            kind = "lines" if changes(a) != changes(b) else "context"
            differ = 1
            print(f"==== {name} {f} hunk {i}: {kind} changed")
            print("--- before\n" + "\n".join(a) + "\n--- after\n" + "\n".join(b))
sys.exit(differ)
