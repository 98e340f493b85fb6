#!/bin/bash
# lanes-bench.sh: hpnscp -n N (one transfer over N connections) on the
# emulated path, lossy and clean, against iperf3 with as many streams
# (README.hpn, "-n N").
#
#   HPN_TREE=... STOCK_TREE=... bench/lanes-bench.sh [OUTDIR]
#
# For each path (LOSSY: RATE Mbit/s, RTT ms, LOSS % random loss each way,
# cubic; then CLEAN: the same without loss): iperf3 -P 1 and -P N, then a
# SIZE file by hpnscp (SFTP mode, aes128-gcm, tmpfs at both ends) up and
# down with -n 1 and -n N, and stock scp on the lossy path.  Whole-command
# wall clock, and beyond set-up (the median "ssh host true" taken off:
# -n N sets up its extra connections at the same time, the wait is one
# set-up).
#
# Environment: RTT (100), RATE (1000), LOSS (0.01), N (4), SIZE (1G),
# REPS (3, medians; stock runs once), PATHS ("lossy clean"), RUNS ("hpn:1
# hpn:N stock:1", build:connections; stock on the lossy path only), NAME
# (hpnlb).  Root.  Everything
# started is stopped by its PID; the path is torn down.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/bench/lib.sh"
OUT=${1:-$TOP/build/bench-lanes}
HPN_TREE=$(cd "${HPN_TREE:?HPN_TREE= the built hpn tree}" && pwd)
STOCK_TREE=$(cd "${STOCK_TREE:?STOCK_TREE= the built stock tree}" && pwd)
RTT=${RTT:-100} RATE=${RATE:-1000} LOSS=${LOSS:-0.01} N=${N:-4}
SIZE=$(bl_bytes "${SIZE:-1G}") REPS=${REPS:-3} NAME=${NAME:-hpnlb}
PATHS=${PATHS:-lossy clean} RUNS=${RUNS:-hpn:1 hpn:$N stock:1}
[ "$(id -u)" = 0 ] || bl_die "needs root (network namespaces)"
HPORT=4721 SPORT=4722

mkdir -p "$OUT"
work=$(mktemp -d /tmp/hpn-lanes-bench.XXXXXX)
data=$(mktemp -d /dev/shm/hpn-lanes-bench.XXXXXX)
up= ipid=
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	tsshd_stop "$work" $HPORT 2>/dev/null || true
	tsshd_stop "$work" $SPORT 2>/dev/null || true
	[ -z "$ipid" ] || kill "$ipid" 2>/dev/null || true
	[ -z "$up" ] || "$NP" down --name "$NAME" > /dev/null 2>&1 || true
	rm -rf "$work" "$data"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

bl_netpath_snapshot "$work/netpath"
tsshd_setup "$work"
head -c "$SIZE" /dev/urandom > "$data/src"

# path LOSS: a fresh path and both sshds on it
path() {
	tsshd_stop "$work" $HPORT 2>/dev/null || true
	tsshd_stop "$work" $SPORT 2>/dev/null || true
	up=1
	"$NP" up --name "$NAME" --rtt "$RTT" --rate "$RATE" --loss "$1" \
	    --cc cubic > "$work/path.log" 2>&1 ||
		bl_die "netpath up: $(tail -3 "$work/path.log")"
	addr=$("$NP" addr server --name "$NAME")
	tsshd_start "$work" "$HPN_TREE" $HPORT "$addr" \
	    "$NP" exec server --name "$NAME" -- || bl_die "hpn sshd"
	tsshd_start "$work" "$STOCK_TREE" $SPORT "$addr" \
	    "$NP" exec server --name "$NAME" -- || bl_die "stock sshd"
	tsshd_client_config "$work" $HPORT "$addr" > "$work/ssh_config-hpn"
	tsshd_client_config "$work" $SPORT "$addr" > "$work/ssh_config-stock"
}

# iperf P: MB/s of iperf3 -P P moving SIZE
iperf() {
	local v
	"$NP" exec server --name "$NAME" -- iperf3 -s -1 -B "$addr" \
	    > /dev/null 2>&1 &
	ipid=$!
	sleep 0.5
	v=$("$NP" exec client --name "$NAME" -- timeout 300 iperf3 -c "$addr" \
	    -P "$1" -n "$SIZE" -J 2>/dev/null |
	    jq -r '.end.sum_received.bits_per_second / 8 / 1e6') || v=0
	wait "$ipid" 2>/dev/null || true
	ipid=
	printf '%.1f' "${v:-0}"
}

# setup BUILD: seconds of "ssh host true"
setup() {
	local t0 t1 tree=$HPN_TREE
	[ "$1" = stock ] && tree=$STOCK_TREE
	t0=$(date +%s.%N)
	"$NP" exec client --name "$NAME" -- timeout 60 "$tree/ssh" \
	    -F "$work/ssh_config-$1" host true < /dev/null
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}
# one BUILD LANES DIR: MB/s of the scp by whole-command wall clock
one() {
	local t=$1 n=$2 dir=$3 tree=$HPN_TREE t0 t1
	local -a o=()
	[ "$t" = stock ] && tree=$STOCK_TREE
	[ "$t" = hpn ] && o=(-n "$n")
	rm -f "$data/dst"
	t0=$(date +%s.%N)
	if [ "$dir" = up ]; then
		"$NP" exec client --name "$NAME" -- timeout 900 "$tree/scp" \
		    -S "$tree/ssh" -F "$work/ssh_config-$t" "${o[@]}" \
		    -c aes128-gcm@openssh.com "$data/src" host:"$data/dst"
	else
		"$NP" exec client --name "$NAME" -- timeout 900 "$tree/scp" \
		    -S "$tree/ssh" -F "$work/ssh_config-$t" "${o[@]}" \
		    -c aes128-gcm@openssh.com host:"$data/src" "$data/dst"
	fi
	t1=$(date +%s.%N)
	cmp -s "$data/src" "$data/dst" || bl_die "$t -n $n $dir: the copy differs"
	awk -v a="$t0" -v b="$t1" -v n="$SIZE" 'BEGIN { printf "%.1f", n / (b - a) / 1e6 }'
}

csv=$OUT/results.csv
echo "path,build,lanes,dir,mbps_median,setup_s,mbps_beyond_setup,runs" > "$csv"
declare -A IP
bl_log "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for p in $PATHS; do
	loss=$LOSS
	[ $p = clean ] && loss=0
	path "$loss"
	IP[$p-1]=$(iperf 1)
	IP[$p-$N]=$(iperf "$N")
	bl_log "$p: iperf3 -P 1 ${IP[$p-1]} MB/s, -P $N ${IP[$p-$N]} MB/s"
	declare -A SU=()
	for t in hpn stock; do
		SU[$t]=$(bl_median $(bl_runs 3 setup $t))
	done
	for run in $RUNS; do
		t=${run%%:*} n=${run#*:}
		[ $t = stock ] && [ $p = clean ] && continue
		reps=$REPS
		[ $t = stock ] && reps=1
		for dir in up down; do
			runs=$(bl_runs $reps one $t $n $dir)
			md=$(bl_median $runs)
			b=$(bl_beyond "$md" "${SU[$t]}" "$SIZE")
			echo "$p,$t,$n,$dir,$md,${SU[$t]},$b,\"$runs\"" >> "$csv"
			bl_log "$p $t -n $n $dir: $md MB/s, $b MB/s beyond set-up (${SU[$t]} s) (runs: $runs)"
		done
	done
	"$NP" down --name "$NAME" > /dev/null 2>&1 || true
	up=
done
bl_log "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

{
	echo "hpnscp -n $N on $RATE Mbit/s, $RTT ms, cubic; lossy: $LOSS % random loss each way."
	echo "$(bl_human "$SIZE"), scp (SFTP mode), aes128-gcm, tmpfs; medians of $REPS (stock: 1)."
	echo "iperf3: lossy -P 1 ${IP[lossy-1]:-?} MB/s, -P $N ${IP[lossy-$N]:-?} MB/s;" \
	    "clean -P 1 ${IP[clean-1]:-?} MB/s, -P $N ${IP[clean-$N]:-?} MB/s."
	echo
	printf '  %-6s %-6s %-3s %-5s %9s %9s %9s %9s\n' path build -n dir whole beyond \
	    "/iperf3" "/-n 1"
	printf '  %-6s %-6s %-3s %-5s %9s %9s %9s %9s\n' "" "" "" "" "MB/s" "set-up" \
	    "-P same" "same dir"
	awk -F, -v l1="${IP[lossy-1]:-0}" -v ln="${IP[lossy-$N]:-0}" -v c1="${IP[clean-1]:-0}" \
	    -v cn="${IP[clean-$N]:-0}" 'NR > 1 {
	    k = $1 "," $4; if ($2 == "hpn" && $3 == 1) one[k] = $7
	    row[NR] = $0 }
	    END { for (i = 2; i <= NR; i++) { split(row[i], f, ",")
	        ip = f[1] == "lossy" ? (f[3] == 1 ? l1 : ln) : (f[3] == 1 ? c1 : cn)
	        o = one[f[1] "," f[4]]
	        printf "  %-6s %-6s %-3s %-5s %9.1f %9.1f %9.2f %9.2f\n", f[1], f[2],
	            f[3], f[4], f[5], f[7], ip ? f[7] / ip : 0, o ? f[7] / o : 0 } }' "$csv"
	echo
	echo "/iperf3: the rate beyond set-up over iperf3 with as many streams;"
	echo "/-n 1: over hpnscp -n 1 on the same path and direction."
} | tee "$OUT/report.txt"
