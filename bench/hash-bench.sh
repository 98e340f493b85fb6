#!/bin/bash
# hash-bench.sh: how long verified resume's comparison of a large prefix
# takes at one end (README.hpn, "Verified resume"), against reading the
# same bytes from the disk, with the default checksum (xxh128 where the
# build has libxxhash) and with SHA-256.
#
#   HPN_TREE=... bench/hash-bench.sh [OUTDIR]
#
# A SIZE file of real blocks on a disk file system (DIR, not tmpfs), then
# REPS times, interleaved: cat reads it cold; hpnsftp-server hashes all of
# it through hash-range@hpn-patch-set.invalid (bench/hash-drive.py: 64 MiB
# requests of 8 MiB pieces, four ahead, as hpnscp -Z asks) cold, then once
# more from the page cache (warm), with the client's default list, and the
# same with SHA-256 alone (which of the two goes first alternates); the
# page cache is dropped before each cold run.  Medians; each cold default
# against the cold read of the same repetition, and SHA-256's warm time
# against the default's warm time.  The machine's load is in each line.
# The file is removed at the end.
#
# Environment: SIZE (10G), DIR (/var/tmp), REPS (3).  Root (drop_caches).
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/bench/lib.sh"
OUT=${1:-$TOP/build/bench-hash}
HPN_TREE=$(cd "${HPN_TREE:?HPN_TREE= the built hpn tree}" && pwd)
SIZE=$(bl_bytes "${SIZE:-10G}") DIR=${DIR:-/var/tmp} REPS=${REPS:-3}
[ "$(id -u)" = 0 ] || bl_die "needs root (to drop the page cache)"
[[ $REPS =~ ^[0-9]+$ ]] && [ "$REPS" -ge 1 ] && [ "$REPS" -le 20 ] ||
	bl_die "REPS: 1-20"
fstype=$(stat -f -c %T "$DIR")
case $fstype in tmpfs|ramfs) bl_die "DIR=$DIR is $fstype: it needs a disk" ;; esac
avail=$(df -k --output=avail "$DIR" | tail -n 1)
[ $((avail * 1024)) -gt $((SIZE + SIZE / 10)) ] ||
	bl_die "$DIR has too little room for $(bl_human "$SIZE")"

mkdir -p "$OUT"
file=$(mktemp "$DIR/hpn-hash-bench.XXXXXX")
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	rm -f "$file"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

drop() { sync; echo 3 > /proc/sys/vm/drop_caches; }
ns() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }

bl_log "writing $(bl_human "$SIZE") to $file ($fstype)"
dd if=/dev/zero of="$file" bs=8M count=$((SIZE / 8388608)) status=none
[ $((SIZE % 8388608)) -eq 0 ] ||
	head -c $((SIZE % 8388608)) /dev/zero >> "$file"
sync
# hash ALGS: "SECONDS ALGORITHM" of hashing all of the file, as it is cached
hash() {
	local out
	out=$(python3 "$TOP/bench/hash-drive.py" --algs "$1" "$file" "$HPN_TREE/sftp-server") ||
		bl_die "hash-drive.py --algs $1 failed"
	echo "$out" | cut -d' ' -f1,3
}
DEFAULT=xxh128,sha256,blake2b512
echo "rep,read_cold_s,def_cold_s,def_warm_s,sha_cold_s,sha_warm_s,def_alg,cold_ratio,warm_speedup,load1" > "$OUT/results.csv"
for ((rep = 1; rep <= REPS; rep++)); do
	load0=$(cut -d' ' -f1 /proc/loadavg)
	drop
	s=$(ns)
	cat "$file" > /dev/null
	rc=$(secs "$s" "$(ns)")
	for which in $( ((rep % 2)) && echo def sha || echo sha def); do
		drop
		if [ "$which" = def ]; then
			out=$(hash "$DEFAULT")
			dc=${out% *} dalg=${out#* }
			out=$(hash "$DEFAULT")
			dw=${out% *}
		else
			out=$(hash sha256)
			sc=${out% *}
			out=$(hash sha256)
			sw=${out% *}
		fi
	done
	ratio=$(awk -v a="$dc" -v b="$rc" 'BEGIN { printf "%.2f", a / b }')
	speedup=$(awk -v a="$sw" -v b="$dw" 'BEGIN { printf "%.2f", a / b }')
	load=$(cut -d' ' -f1 /proc/loadavg)
	echo "$rep,$rc,$dc,$dw,$sc,$sw,$dalg,$ratio,$speedup,$load0-$load" >> "$OUT/results.csv"
	bl_log "rep $rep: cold read $rc s; $dalg cold $dc s ($ratio of the read), warm $dw s;" \
	    "sha256 cold $sc s, warm $sw s ($speedup x $dalg's); load $load0-$load"
done
med() { bl_median $(cut -d, -f"$1" "$OUT/results.csv" | tail -n +2); }
loads=$(cut -d, -f10 "$OUT/results.csv" | tail -n +2 | tr '-' '\n' | sort -n | sed -n '1p;$p' | paste -sd- -)
{
	echo "hash-bench: $(bl_human "$SIZE") on $fstype ($DIR), $(nproc) CPUs, medians of $REPS, load $loads"
	echo "  cold read (cat)                  $(med 2) s"
	echo "  cold hash, default ($dalg)      $(med 3) s, $(med 8) of the read in the same repetition"
	echo "  warm hash, default ($dalg)      $(med 4) s"
	echo "  cold hash, sha256                $(med 5) s"
	echo "  warm hash, sha256                $(med 6) s, $(med 9) x the default's"
} | tee "$OUT/report.txt"
