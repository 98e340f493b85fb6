#!/bin/bash
# hash-bench.sh: how long verified resume's comparison of a large prefix
# takes at one end (README.hpn, "Verified resume"), against reading the
# same bytes from the disk.
#
#   HPN_TREE=... bench/hash-bench.sh [OUTDIR]
#
# A SIZE file of real blocks on a disk file system (DIR, not tmpfs), then
# REPS times, each after the page cache is dropped: cat reads it cold;
# hpnsftp-server hashes all of it through hash-range@hpn-patch-set.invalid
# (bench/hash-drive.py: 64 MiB requests of 8 MiB pieces, four ahead, as
# hpnscp -Z asks); and once more from the page cache (warm).  Medians,
# and each cold hash against the cold read of the same repetition.  The
# file is removed at the end.
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
echo "rep,read_cold_s,hash_cold_s,hash_warm_s,ratio,load1" > "$OUT/results.csv"
for ((rep = 1; rep <= REPS; rep++)); do
	drop
	s=$(ns)
	cat "$file" > /dev/null
	rc=$(secs "$s" "$(ns)")
	drop
	hc=$(python3 "$TOP/bench/hash-drive.py" "$file" "$HPN_TREE/sftp-server" | cut -d' ' -f1)
	hw=$(python3 "$TOP/bench/hash-drive.py" "$file" "$HPN_TREE/sftp-server" | cut -d' ' -f1)
	ratio=$(awk -v a="$hc" -v b="$rc" 'BEGIN { printf "%.2f", a / b }')
	load=$(cut -d' ' -f1 /proc/loadavg)
	echo "$rep,$rc,$hc,$hw,$ratio,$load" >> "$OUT/results.csv"
	bl_log "rep $rep: cold read $rc s, cold hash $hc s ($ratio of the read), warm hash $hw s; load $load"
done
med() { bl_median $(cut -d, -f"$1" "$OUT/results.csv" | tail -n +2); }
{
	echo "hash-bench: $(bl_human "$SIZE") on $fstype ($DIR), $(nproc) CPUs, medians of $REPS"
	echo "  cold read (cat)            $(med 2) s"
	echo "  cold hash (hpnsftp-server) $(med 3) s, $(med 5) of the read in the same repetition"
	echo "  warm hash (page cache)     $(med 4) s"
} | tee "$OUT/report.txt"
