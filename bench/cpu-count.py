#!/usr/bin/python3
"""The parsing and the arithmetic of bench/cpu-count.sh.

  cpu-count.py cg FILE...          callgrind outputs of one side of one run:
                                   "total N" and "fn OBJECT FUNCTION N" lines
                                   (self cost, every function)
  cpu-count.py dhat FILE...        DHAT copy-mode outputs: "copied BYTES"
  cpu-count.py perf FILE COMM...   a `perf trace -s -e sched:sched_switch`
                                   output: "sys NAME N" per system call and
                                   "ctxsw N" summed over the processes whose
                                   name is one of COMM; "lost N" when perf
                                   lost events
  cpu-count.py report RAW.csv      the markdown report of a run
  cpu-count.py targets RAW.csv [TIMED.csv]
                                   the ratios against the issue's targets,
                                   with the timed medians of bench/cpu-bench.sh
  cpu-count.py compact RAW.csv OUT.csv
                                   the same figures with the functions below
                                   10^6 instructions summed per category
  cpu-count.py plot RAW.csv DAT [LABEL RAW.csv]...
                                   gnuplot data: instructions per GiB by
                                   category, one row per build, cipher and
                                   side (more runs, e.g. before and after a
                                   change, each under its own label)

RAW.csv rows: tree,cipher,mode,size,kind,side,key,value, where kind is cg,
dhat or perf, size is the bytes moved and key/value are what the parsers
above print.  Everything per GiB is (value at the larger size - value at
the smaller) / (the difference in bytes) * 2^30: the fixed costs of a
connection (key exchange, authentication, session set-up) and the growth
of its buffers at the start drop out.
"""

import collections
import csv
import re
import subprocess
import sys

GIB = 1 << 30

# callgrind_annotate line: "  1,234 (12.3%)  file:function [object]"
CG_LINE = re.compile(r"^\s*([\d,]+)\s+\([^)]*\)\s+(.*?)(?:\s+\[(.*)\])?\s*$")


def cg(files):
    funcs = collections.Counter()
    total = 0
    for f in files:
        out = subprocess.run(
            ["callgrind_annotate", "--auto=no", "--inclusive=no",
             "--threshold=100", f],
            check=True, capture_output=True, text=True).stdout
        for line in out.splitlines():
            m = CG_LINE.match(line)
            if not m:
                continue
            n = int(m.group(1).replace(",", ""))
            what = m.group(2)
            if what.endswith("PROGRAM TOTALS"):
                total += n
                continue
            obj = m.group(3) or "?"
            obj = obj.rsplit("/", 1)[-1]
            fn = what.rsplit(":", 1)[-1] if ":" in what else what
            # unnamed code (libcrypto has no symbols here): by address
            funcs[(obj, fn)] += n
    print("total", total)
    for (obj, fn), n in funcs.most_common():
        print("fn", obj, fn.replace(" ", "_"), n)


def dhat(files):
    import json
    total = 0
    for f in files:
        with open(f) as fp:
            d = json.load(fp)
        total += sum(p.get("tb", 0) for p in d.get("pps", []))
    print("copied", total)


# " ssh (28417), 119960 events, 81.5%" then a table of system calls
PERF_PROC = re.compile(r"^ (\S.*?) \((\d+)\), \d+ events")
PERF_SYS = re.compile(r"^\s+([a-z_0-9]+)\s+(\d+)\s+(\d+)\s+[\d.]+")
PERF_SW = re.compile(
    r"^\s*[\d.]+\s+(?:\([^)]*\):\s+)?\S+?/(\d+)\s+sched:sched_switch")


def perf(path, comms):
    calls = collections.Counter()
    pids = set()
    switches = collections.Counter()
    lost = 0
    cur = None
    with open(path, errors="replace") as fp:
        for line in fp:
            m = PERF_PROC.match(line)
            if m:
                cur = m.group(2) if m.group(1) in comms else None
                if cur:
                    pids.add(cur)
                continue
            m = PERF_SW.match(line)
            if m:
                switches[m.group(1)] += 1
                continue
            if "LOST" in line:
                m2 = re.search(r"LOST (\d+)", line)
                lost += int(m2.group(1)) if m2 else 1
                continue
            if cur:
                m = PERF_SYS.match(line)
                if m and m.group(1) != "syscall":
                    calls[m.group(1)] += int(m.group(2))
    for name, n in calls.most_common():
        print("sys", name, n)
    print("syscalls", sum(calls.values()))
    print("ctxsw", sum(switches[p] for p in pids))
    if lost:
        print("lost", lost)


def category(obj, fn):
    if obj.startswith("sum:"):
        return CATEGORIES[int(obj[4:])]
    if fn == "poly1305_auth" or fn.startswith("poly1305"):
        return "poly1305 (OpenSSH's C)"
    if obj.startswith("libcrypto"):
        return "libcrypto (cipher, MAC)"
    if re.search(r"mem(cpy|move|pcpy)", fn):
        return "memcpy, memmove"
    if re.search(r"memset|bzero", fn):
        return "memset, explicit_bzero"
    if obj.startswith("libc") and re.search(
            r"malloc|free|realloc|calloc|tcache|consolidate", fn):
        return "malloc, free"
    if obj in ("ssh", "sshd-session", "sshd", "?"):
        return "OpenSSH and HPN code"
    return "other (libc, ld.so)"


CATEGORIES = ["libcrypto (cipher, MAC)", "poly1305 (OpenSSH's C)",
              "memcpy, memmove", "memset, explicit_bzero", "malloc, free",
              "OpenSSH and HPN code", "other (libc, ld.so)"]


def load(path):
    """{(tree, cipher, mode, side, kind): {size: {key: value}}}"""
    data = collections.defaultdict(lambda: collections.defaultdict(dict))
    with open(path) as fp:
        for row in csv.DictReader(fp):
            k = (row["tree"], row["cipher"], row["mode"], row["side"],
                 row["kind"])
            v = data[k][int(row["size"])]
            key = row["key"]
            if key in v:
                # repeated runs (perf): keep every value, median later
                if not isinstance(v[key], list):
                    v[key] = [v[key]]
                v[key].append(float(row["value"]))
            else:
                v[key] = float(row["value"])
    return data


def median(x):
    if not isinstance(x, list):
        return x
    s = sorted(x)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def spread(x):
    if not isinstance(x, list):
        return ""
    return "%.0f–%.0f" % (min(x), max(x))


def sizes_of(runs):
    """(small, big): the base run and the measured one, or None."""
    sizes = sorted(runs)
    if len(sizes) < 2:
        return None
    return sizes[0], sizes[-1]


def per_gib(runs, key):
    """(value at the larger size - value at the smaller) per GiB moved
    between them, or None."""
    sz = sizes_of(runs) if runs else None
    if not sz or key not in runs[sz[1]]:
        return None
    small, big = sz
    a = runs[big][key]
    b = runs[small].get(key, 0.0)
    return (median(a) - median(b)) / (big - small) * GIB


def per_gib_runs(runs, key):
    """Every run's own figure (repeated perf runs), for the spread."""
    sz = sizes_of(runs) if runs else None
    if not sz or key not in runs[sz[1]]:
        return None
    small, big = sz
    a = runs[big][key]
    b = median(runs[small].get(key, 0.0))
    a = a if isinstance(a, list) else [a]
    return [(x - b) / (big - small) * GIB for x in a]


def fn_diff(runs):
    sz = sizes_of(runs) if runs else None
    if not sz:
        return None
    small, big = sz
    fns = collections.Counter()
    for size, sign in ((big, 1), (small, -1)):
        for key, val in runs[size].items():
            if key.startswith("fn "):
                fns[key[3:]] += sign * median(val) / (big - small) * GIB
    return fns


def categories(runs):
    fns = fn_diff(runs)
    if fns is None:
        return None
    cat = collections.Counter()
    for key, v in fns.items():
        obj, fn = key.split(" ", 1)
        cat[category(obj, fn)] += v
    return {c: cat[c] for c in CATEGORIES}


def functions(runs, top):
    return [kv for kv in fn_diff(runs).most_common(top + 8)
            if not kv[0].startswith("sum:")][:top]


def g(x):
    return "%.2f" % (x / 1e9) if x is not None else "?"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "?"
    return "%.2f" % (a / b)


def short(cipher):
    return cipher.split("@")[0]


def report(path, targets=(0.5, 0.25)):
    data = load(path)
    keys = sorted({(k[1], k[2]) for k in data})
    trees = sorted({k[0] for k in data}, key=lambda t: (t != "stock", t))
    sides = ["client", "server"]
    out = []
    w = out.append
    w("### User-space instructions per GiB moved (valgrind callgrind)")
    w("")
    w("G = 10^9 instructions per GiB (2^30 bytes) of payload; the run at "
      "SIZE minus the run at SIZE/4 of the same command, per GiB between "
      "them.  The target for hpn: "
      "at most %.2f x stock." % targets[0])
    w("")
    w("| cipher | mode | side | " + " | ".join("%s G/GiB" % t for t in trees)
      + " | " + " | ".join("%s/stock" % t for t in trees if t != "stock")
      + " | without mem* and malloc: " + " | ".join(
          "%s/stock" % t for t in trees if t != "stock") + " |")
    w("|---|---|---|" + "---|" * (2 * len(trees) - 1 +
                                 len([t for t in trees if t != "stock"])))
    for cipher, mode in keys:
        for side in sides:
            row = {}
            rest = {}
            for t in trees:
                runs = data.get((t, cipher, mode, side, "cg"))
                row[t] = per_gib(runs, "total") if runs else None
                c = categories(runs) if runs else None
                rest[t] = (sum(v for k, v in c.items() if not k.startswith(
                    ("memcpy", "memset", "malloc"))) if c else None)
            w("| %s | %s | %s | %s | %s | %s |" % (
                short(cipher), mode, side,
                " | ".join(g(row[t]) for t in trees),
                " | ".join(ratio(row[t], row.get("stock"))
                           for t in trees if t != "stock"),
                " | ".join(ratio(rest[t], rest.get("stock"))
                           for t in trees if t != "stock")))
    w("")
    w("By category (G/GiB; valgrind counts each byte a `rep movsb` or "
      "`rep stosb` moves as one instruction, so memcpy and memset weigh "
      "about one instruction per byte copied or cleared):")
    w("")
    w("| cipher | mode | side | build | " + " | ".join(CATEGORIES) + " |")
    w("|---|---|---|---|" + "---|" * len(CATEGORIES))
    for cipher, mode in keys:
        for side in sides:
            for t in trees:
                runs = data.get((t, cipher, mode, side, "cg"))
                c = categories(runs) if runs else None
                if not c:
                    continue
                w("| %s | %s | %s | %s | %s |" % (
                    short(cipher), mode, side, t,
                    " | ".join(g(c[k]) for k in CATEGORIES)))
    w("")
    w("Functions (self cost, G/GiB, the 8 largest):")
    w("")
    for cipher, mode in keys:
        for side in sides:
            for t in trees:
                runs = data.get((t, cipher, mode, side, "cg"))
                if not runs or not sizes_of(runs):
                    continue
                fl = ", ".join("%s %s" % (k.split(" ", 1)[1], g(v))
                               for k, v in functions(runs, 8))
                w("- %s %s %s %s: %s" % (t, short(cipher), mode, side, fl))
    w("")
    w("### Bytes copied in user space per byte moved (valgrind DHAT, "
      "copy mode)")
    w("")
    w("memcpy, memmove and their kin, whatever calls them (clearing "
      "memory is not a copy: see memset above).")
    w("")
    w("| cipher | mode | side | " + " | ".join(trees) + " |")
    w("|---|---|---|" + "---|" * len(trees))
    for cipher, mode in keys:
        for side in sides:
            vals = []
            for t in trees:
                runs = data.get((t, cipher, mode, side, "dhat"))
                v = per_gib(runs, "copied") if runs else None
                vals.append("%.2f" % (v / GIB) if v is not None else "?")
            w("| %s | %s | %s | %s |" % (short(cipher), mode, side,
                                         " | ".join(vals)))
    w("")
    w("### System calls and context switches per GiB (perf trace)")
    w("")
    w("Native runs (no valgrind), the processes of ssh and of "
      "sshd-session; median of the runs (min–max).  The target for hpn: "
      "at most %.2f x stock's system calls." % targets[1])
    w("")
    w("| cipher | mode | side | " + " | ".join(
        "%s syscalls" % t for t in trees) + " | " + " | ".join(
        "%s/stock" % t for t in trees if t != "stock") + " | " + " | ".join(
        "%s ctx switches" % t for t in trees) + " |")
    w("|---|---|---|" + "---|" * (3 * len(trees) - 1))
    lost = []
    for cipher, mode in keys:
        for side in sides:
            sc, cs, sp, csp = {}, {}, {}, {}
            for t in trees:
                runs = data.get((t, cipher, mode, side, "perf"))
                sc[t] = per_gib(runs, "syscalls") if runs else None
                cs[t] = per_gib(runs, "ctxsw") if runs else None
                r = per_gib_runs(runs, "syscalls") if runs else None
                sp[t] = " (%.0f–%.0f)" % (min(r), max(r)) if r and len(r) > 1 else ""
                r = per_gib_runs(runs, "ctxsw") if runs else None
                csp[t] = " (%.0f–%.0f)" % (min(r), max(r)) if r and len(r) > 1 else ""
                if runs and any("lost" in v for v in runs.values()):
                    lost.append("%s %s %s %s" % (t, short(cipher), mode, side))
            w("| %s | %s | %s | %s | %s | %s |" % (
                short(cipher), mode, side,
                " | ".join(("%.0f%s" % (sc[t], sp[t])) if sc[t] is not None
                           else "?" for t in trees),
                " | ".join(ratio(sc[t], sc.get("stock"))
                           for t in trees if t != "stock"),
                " | ".join(("%.0f%s" % (cs[t], csp[t])) if cs[t] is not None
                           else "?" for t in trees)))
    if lost:
        w("")
        w("perf lost events in: " + "; ".join(lost) +
          " (those counts are low)")
    w("")
    w("System calls by name (per GiB, median):")
    w("")
    for cipher, mode in keys:
        for side in sides:
            for t in trees:
                runs = data.get((t, cipher, mode, side, "perf"))
                if not runs or not sizes_of(runs):
                    continue
                names = {k for s in runs.values() for k in s
                         if k.startswith("sys ")}
                vals = sorted(((per_gib(runs, k) or 0, k[4:]) for k in names),
                              reverse=True)
                w("- %s %s %s %s: %s" % (
                    t, short(cipher), mode, side,
                    ", ".join("%s %.0f" % (n, v) for v, n in vals if v >= 1)))
    print("\n".join(out))


def plot(args):
    """plot RAW.csv DAT [LABEL RAW.csv]...: one row per label, build,
    cipher and side; columns: the categories."""
    dat = args[0]
    runs = [("", args[1])] if len(args) == 2 else []
    rest = args[1:] if len(args) > 2 else []
    if len(args) > 2:
        runs = []
        rest = args[1:]
        for i in range(0, len(rest) - 1, 2):
            runs.append((rest[i], rest[i + 1]))
    with open(dat, "w") as fp:
        fp.write("label " + " ".join('"%s"' % c for c in CATEGORIES)
                 + "\n")
        for label, path in runs:
            data = load(path)
            for (t, cipher, mode, side, kind), r in sorted(
                    data.items(), key=lambda kv: (kv[0][1], kv[0][2],
                                                  kv[0][3],
                                                  kv[0][0] != "stock")):
                if kind != "cg":
                    continue
                c = categories(r)
                if not c:
                    continue
                name = "%s%s %s %s" % (label + " " if label else "", t,
                                       short(cipher).split("-")[0], side)
                fp.write('"%s" %s\n' % (name, " ".join(
                    "%.3f" % (c[k] / 1e9) for k in CATEGORIES)))


def targets(raw, timed, ir_max=0.5, sys_max=0.25, rate_min=1.5):
    """The figures against the issue's targets, one row per cipher."""
    data = load(raw)
    rates = collections.defaultdict(list)
    loads = []
    if timed:
        with open(timed) as fp:
            for row in csv.DictReader(fp):
                if row["status"] != "OK" or row["tree"] not in ("hpn",
                                                               "stock"):
                    continue
                if row["case"].split(":")[1] not in ("gcm", "chacha"):
                    continue
                rates[(row["tree"], row["cipher"], row["mode"])].append(
                    float(row["mb_s"]))
                loads.append(float(row["load1"]))
    ciphers = sorted({k[1] for k in data})
    modes = sorted({k[2] for k in data})
    tmodes = sorted({k[2] for k in rates})

    def mark(v, ok):
        return "?" if v is None else "%.2f %s" % (v, "ok" if ok(v) else
                                                    "MISSED")

    def r(kind, key, cipher, mode, side):
        a = data.get(("hpn", cipher, mode, side, kind))
        b = data.get(("stock", cipher, mode, side, kind))
        if not a or not b:
            return None
        x, y = per_gib(a, key), per_gib(b, key)
        return x / y if x is not None and y else None

    print("### Against the targets (hpn / stock)")
    print("")
    print("Instructions (valgrind) at most %.2f x stock, system calls at "
          "most %.2f x stock, each end; throughput (median of the "
          "interleaved runs) at least %.1f x stock." % (ir_max, sys_max,
                                                       rate_min))
    print("")
    head = ["cipher", "mode"] + ["instructions " + s for s in
                                 ("client", "server")] +         ["system calls " + s for s in ("client", "server")]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for c in ciphers:
        for m in modes:
            cells = [short(c), m]
            for side in ("client", "server"):
                cells.append(mark(r("cg", "total", c, m, side),
                                  lambda v: v <= ir_max))
            for side in ("client", "server"):
                cells.append(mark(r("perf", "syscalls", c, m, side),
                                  lambda v: v <= sys_max))
            print("| " + " | ".join(cells) + " |")
    if rates:
        print("")
        print("| cipher | mode | hpn MB/s median (min–max) | stock MB/s "
              "median (min–max) | hpn / stock | runs |")
        print("|---|---|---|---|---|---|")
        for c in sorted({k[1] for k in rates}):
            for m in tmodes:
                h, st = rates.get(("hpn", c, m)), rates.get(("stock", c, m))
                if not h or not st:
                    continue
                ratio_ = median(h) / median(st)
                print("| %s | %s | %.0f (%.0f–%.0f) | %.0f (%.0f–%.0f) | %s "
                      "| %d / %d |" % (
                          short(c), m, median(h), min(h), max(h), median(st),
                          min(st), max(st),
                          mark(ratio_, lambda v: v >= rate_min), len(h),
                          len(st)))
        print("")
        print("1-minute load average before those runs: %.2f–%.2f "
              "(%d CPUs)." % (min(loads), max(loads),
                              __import__("os").cpu_count()))


def compact(src, dst, keep=1000000):
    """RAW.csv with every function below keep instructions (in each run)
    summed into one row per category ("fn sum:N small"): a copy small
    enough to keep beside a report, whose figures stay the same."""
    rows = []
    with open(src) as fp:
        rd = csv.DictReader(fp)
        fields = rd.fieldnames
        rows = list(rd)
    big = collections.defaultdict(float)
    for row in rows:
        if row["key"].startswith("fn "):
            k = row["key"]
            big[k] = max(big[k], float(row["value"]))
    out = []
    sums = collections.OrderedDict()
    for row in rows:
        k = row["key"]
        if k.startswith("fn ") and big[k] < keep:
            _, obj, fn = k.split(" ", 2)
            run = tuple(row[f] for f in fields[:6])
            key = (run, CATEGORIES.index(category(obj, fn)))
            sums[key] = sums.get(key, 0.0) + float(row["value"])
            continue
        out.append(row)
    for (run, ci), v in sums.items():
        row = dict(zip(fields[:6], run))
        row["key"] = "fn sum:%d small" % ci
        row["value"] = "%d" % v
        out.append(row)
    with open(dst, "w", newline="") as fp:
        wr = csv.DictWriter(fp, fieldnames=fields, lineterminator="\n")
        wr.writeheader()
        wr.writerows(out)


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "cg":
        cg(args)
    elif cmd == "dhat":
        dhat(args)
    elif cmd == "perf":
        perf(args[0], set(args[1:]))
    elif cmd == "report":
        report(args[0])
    elif cmd == "targets":
        targets(args[0], args[1] if len(args) > 1 else None)
    elif cmd == "plot":
        plot(args)
    elif cmd == "compact":
        compact(args[0], args[1])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
