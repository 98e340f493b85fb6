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
#   others       written by the seed writer NAME_seeds, built from
#                NAME_seeds.c beside the harness: each seed composed by
#                the very function our sender composes it with
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

others() {	# NAME: its seed writer
	local out=$fz/corpus/$1
	[ -x "$fbin/$1_seeds" ] || { echo "mkseeds: $fbin/$1_seeds missing" >&2; exit 1; }
	rm -rf "$out"
	mkdir -p "$out"
	"$fbin/$1_seeds" "$out"
	echo "mkseeds: $1: $(ls "$out" | wc -l) seeds"
}

for n in "$@"; do
	case "$n" in
	sftp_server) sftp_server ;;
	*) others "$n" ;;
	esac
done
