#!/bin/bash
# mkseeds.sh HPN_TREE FUZZ_BIN NAME...
#
# Makes the seeds of tests/fuzz/corpus/NAME again (README.md, "Seeds"),
# from the normal hpn build (HPN_TREE, for real runs) and the fuzz build's
# seed writers (FUZZ_BIN).  Review the difference before committing it.
#
#   sftp_server  what hpnsftp and hpnscp send hpnsftp-server in real runs
#                (-D: a local server on a pipe, recorded by sftp-capture.py),
#                on a directory laid out like the harness's fixture
#   hash_range   the hash-range requests of sftp_server's seeds, and the
#                same layout with pieces, past the end, unknown algorithms
#   sftp_ref     the reference table's operations while sftp-server served
#                sftp_server's seeds
#   others       written by the harness itself (HPN_FUZZ_SEEDS=DIR
#                build/fuzz/bin/NAME_fuzz): each seed composed by the very
#                function our sender composes it with (early_client and
#                early_server: scripts of the peer, whose messages the
#                harness's model composes as it runs); the crash-* inputs
#                kept there (README.md) stay
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 3 ] || { echo "usage: $0 HPN_TREE FUZZ_BIN NAME..." >&2; exit 2; }
tree=$(cd "$1" && pwd) fbin=$(cd "$2" && pwd)
shift 2
fz=$top/tests/fuzz

sftp_server() {
	local out=$fz/corpus/sftp_server tmp root w t
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' RETURN
	root=$tmp/root
	mkdir -p "$root/dir/sub" "$tmp/local"
	# the fixture's layout (sftp_server_fuzz.c, fixture_make())
	head -c 4099 /dev/urandom > "$root/file"
	head -c 4096 /dev/urandom > "$root/big"
	truncate -s $((1024 * 1024 + 4096)) "$root/big"
	: > "$root/empty"
	echo read-only > "$root/ro"
	chmod 444 "$root/ro"
	echo x > "$root/dir/x"
	ln -s file "$root/link"
	ln -s nowhere "$root/dangling"
	w=$tmp/server.sh
	# capture SEED CLIENT ARGS...: one real run, its requests as SEED
	capture() {
		local seed=$1
		shift
		printf '#!/bin/sh\nexec python3 %s %s %s %s/sftp-server "$@"\n' \
		    "$fz/sftp-capture.py" "$out/$seed" "$root" "$tree" > "$w"
		chmod +x "$w"
		(cd "$root" && timeout 60 "$@" < /dev/null > "$tmp/log" 2>&1) ||
			{ cat "$tmp/log" >&2; echo "mkseeds: $seed: failed" >&2; exit 1; }
		# the recorder writes once its server has gone (the client
		# need not wait for that)
		for t in $(seq 100); do
			[ -s "$out/$seed" ] && break
			sleep 0.1
		done
		[ -s "$out/$seed" ] || { echo "mkseeds: $seed: nothing recorded" >&2; exit 1; }
		echo "mkseeds: sftp_server/$seed ($(stat -c %s "$out/$seed") bytes)"
	}
	batch() {	# SEED COMMANDS: hpnsftp -b
		printf '%s\n' "$2" > "$tmp/batch"
		capture "$1" "$tree/sftp" -D "$w" -b "$tmp/batch"
	}
	rm -rf "$out"
	mkdir -p "$out"
	batch sftp-browse 'ls -l
cd dir
ls -la
cd ..
ls -l link dangling
ls -n dir/*
df -h
get file ../local/file'
	batch sftp-ops "put $fz/mkseeds.sh up
rename up up2
chmod 600 up2
chown 0 up2
chgrp 0 up2
ln up2 hard
ln -s up2 soft
mkdir newdir
rmdir newdir
rm hard
rm up2
rm soft"
	batch sftp-get-r 'get -r dir ../local/dir'
	head -c 2000 "$root/file" > "$tmp/local/partial"
	batch sftp-reget "reget file $tmp/local/partial"
	head -c $((1024 * 1024 + 100)) "$root/big" > "$tmp/local/bigpart"
	batch sftp-reget-big "reget big $tmp/local/bigpart"
	head -c 3000 /dev/urandom > "$tmp/local/up"
	head -c 1000 "$tmp/local/up" > "$root/uppart"
	batch sftp-reput "reput $tmp/local/up uppart"
	capture scp-get "$tree/scp" -D "$w" "x:$root/file" "$tmp/local/f1"
	capture scp-get-r "$tree/scp" -r -D "$w" "x:$root/dir" "$tmp/local/d1"
	capture scp-get-big "$tree/scp" -D "$w" "x:$root/big" "$tmp/local/b1"
	capture scp-put "$tree/scp" -D "$w" "$tmp/local/up" "x:$root/up1"
	head -c 1000 "$tmp/local/up" > "$root/up2"
	capture scp-put-resume "$tree/scp" -Z -D "$w" "$tmp/local/up" "x:$root/up2"
	mkdir -p "$tmp/local/tree/sub"
	echo a > "$tmp/local/tree/a"
	echo b > "$tmp/local/tree/sub/b"
	capture scp-put-r "$tree/scp" -r -D "$w" "$tmp/local/tree" "x:$root/tree"
}

# hash-range@'s requests as hpn_hash_range_reply() reads them (after the
# handle), behind a byte choosing the harness's file: those the real runs
# above sent (sftp_server's seeds), then the same layout with pieces.
hash_range() {
	local out=$fz/corpus/hash_range
	rm -rf "$out"
	mkdir -p "$out"
	python3 - "$fz/corpus/sftp_server" "$out" <<'PY'
import glob, os, struct, sys
src, out = sys.argv[1], sys.argv[2]
EXT = b"hash-range@hpn-patch-set.invalid"
def s(b): return struct.pack(">I", len(b)) + b
n = 0
for f in sorted(glob.glob(src + "/*")):
    d, i = open(f, "rb").read(), 0
    while i + 5 <= len(d):
        (ml,) = struct.unpack(">I", d[i:i + 4])
        m, i = d[i + 4:i + 4 + ml], i + 4 + ml
        if m[0] != 200 or m[9:9 + len(EXT)] != EXT:
            continue
        j = 9 + len(EXT)
        (hl,) = struct.unpack(">I", m[j:j + 4])
        body = m[j + 4 + hl:]
        for sel in (0, 1):
            name = "%s/real-%s-%d" % (out, os.path.basename(f), sel)
            open(name, "wb").write(bytes([sel]) + body)
            n += 1
MIB = 1 << 20
algs = b"sha256,blake2b512"
for name, sel, a, off, ln, piece in (
        ("big-2-pieces", 1, algs, 0, MIB + 4096, MIB),
        ("big-64-pieces", 1, b"blake2b512", 0, 64 * MIB, MIB),
        ("big-piece-0", 1, algs, 4096, MIB, 0),
        ("file-past-end", 0, algs, 1 << 40, 4096, 0),
        ("file-md5", 0, b"md5,sha1", 0, 4099, 0),
        ("dir", 3, algs, 0, 4096, 0),
        ("write-only", 4, algs, 0, 4096, 0),
        ("empty", 2, algs, 0, 0, 0)):
    open("%s/%s" % (out, name), "wb").write(bytes([sel]) + s(a) +
        struct.pack(">QQI", off, ln, piece))
    n += 1
print("mkseeds: hash_range: %d seeds" % n)
PY
}

# handle references: the operations sftp-server made on its reference
# table while it served sftp_server's seeds (the real runs): each OPEN and
# OPENDIR answered with the handle sftp-server would give, each handle the
# client named resolved, each CLOSE a handle forgotten.
sftp_ref() {
	local out=$fz/corpus/sftp_ref
	rm -rf "$out"
	mkdir -p "$out"
	python3 - "$fz/corpus/sftp_server" "$out" <<'PY'
import glob, os, struct, sys
src, out = sys.argv[1], sys.argv[2]
HANDLED = {4, 5, 6, 8, 10, 12}	# CLOSE READ WRITE FSTAT FSETSTAT READDIR
EXT_HANDLED = {b"fsync@openssh.com", b"fstatvfs@openssh.com",
               b"hash-range@hpn-patch-set.invalid", b"copy-data"}
def gets(m, j):
    (n,) = struct.unpack(">I", m[j:j + 4])
    return m[j + 4:j + 4 + n], j + 4 + n
n = 0
for f in sorted(glob.glob(src + "/*")):
    d, i, ops = open(f, "rb").read(), 0, b""
    free, nh, byid = [], 0, {}	# sftp-server's handles: reused last closed first
    while i + 9 <= len(d):
        (ml,) = struct.unpack(">I", d[i:i + 4])
        m, i = d[i + 4:i + 4 + ml], i + 4 + ml
        t, (rid,) = m[0], struct.unpack(">I", m[1:5])
        h = None
        if t in HANDLED:
            h, _ = gets(m, 5)
        elif t == 200:
            name, j = gets(m, 5)
            if name in EXT_HANDLED:
                h, _ = gets(m, j)
        if t in (3, 11):		# OPEN, OPENDIR: answered with a handle
            hd = free.pop() if free else nh
            nh = max(nh, hd + 1)
            byid[rid] = hd
            ops += bytes([0, hd]) + struct.pack(">I", rid)
        if h is not None and len(h) < 64:
            ops += bytes([2]) + struct.pack(">H", len(h)) + h
            if t == 4:		# CLOSE: the handle it named is forgotten
                if len(h) == 4:
                    hd = struct.unpack(">I", h)[0]
                else:
                    ids = [struct.unpack(">I", h[1 + 4 * k:5 + 4 * k])[0]
                           for k in range((len(h) - 1) // 4)]
                    hd = next((byid[x] for x in ids if x in byid), None)
                if hd is not None and hd < 64:
                    ops += bytes([1, hd])
                    free.append(hd)
                    byid = {k: v for k, v in byid.items() if v != hd}
    if ops:
        open("%s/%s" % (out, os.path.basename(f)), "wb").write(ops)
        n += 1
print("mkseeds: sftp_ref: %d seeds" % n)
PY
}

others() {	# NAME: the harness writes them (HPN_FUZZ_SEEDS)
	local out=$fz/corpus/$1 keep f
	[ -x "$fbin/$1_fuzz" ] || { echo "mkseeds: $fbin/$1_fuzz missing (make fuzz-build)" >&2; exit 1; }
	keep=$(mktemp -d)
	trap 'rm -rf "$keep"' RETURN
	for f in "$out"/crash-*; do
		[ ! -f "$f" ] || cp -p "$f" "$keep/"
	done
	rm -rf "$out"
	mkdir -p "$out"
	HPN_FUZZ_SEEDS=$out "$fbin/$1_fuzz" > /dev/null 2>&1 ||
		{ echo "mkseeds: $1_fuzz could not write its seeds" >&2; exit 1; }
	for f in "$keep"/crash-*; do
		[ ! -f "$f" ] || cp -p "$f" "$out/"
	done
	echo "mkseeds: $1: $(ls "$out" | wc -l) seeds"
}

for n in "$@"; do
	case "$n" in
	sftp_server) sftp_server ;;
	hash_range) hash_range ;;
	sftp_ref) sftp_ref ;;
	*) others "$n" ;;
	esac
done
