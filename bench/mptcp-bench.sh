#!/bin/bash
# mptcp-bench.sh: one transfer over two emulated paths with UseMPTCP
# (README.hpn, "Multipath TCP"), against what the two paths carry.
#
#   HPN_TREE=... STOCK_TREE=... bench/mptcp-bench.sh [OUTDIR]
#
# netpath --paths 2: two identical paths (RATE Mbit/s, RTT ms each, their
# own delay lines) between the client and server namespaces, with MPTCP
# endpoints (the client's second address a subflow, the server's
# announced).  References: iperf3 on each path alone, and on both at once
# (two iperf3, the sum).  Then hpnscp (SFTP mode, aes128-gcm, tmpfs at both
# ends) up and down: with UseMPTCP at both ends, without it (one path), and
# stock scp (one path).  Whole-command wall clock, and beyond set-up (the
# median time of "ssh host true" of that build and option taken off).
#
# Environment: RTT (50), RATE (500), SIZE (1G), REPS (3, medians; stock
# runs once), PATH_CC (the paths' congestion control, bbr), RUNS ("hpn:yes hpn:no
# stock:no": build:UseMPTCP), NAME (hpnmb).  Root.  Everything started is stopped by its
# PID; the path is torn down.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/bench/lib.sh"
OUT=${1:-$TOP/build/bench-mptcp}
HPN_TREE=$(cd "${HPN_TREE:?HPN_TREE= the built hpn tree}" && pwd)
STOCK_TREE=$(cd "${STOCK_TREE:?STOCK_TREE= the built stock tree}" && pwd)
RTT=${RTT:-50} RATE=${RATE:-500} SIZE=$(bl_bytes "${SIZE:-1G}")
REPS=${REPS:-3} NAME=${NAME:-hpnmb} PATH_CC=${PATH_CC:-bbr}
RUNS=${RUNS:-hpn:yes hpn:no stock:no}
[ "$(id -u)" = 0 ] || bl_die "needs root (network namespaces)"
HPORT=4711 SPORT=4712

mkdir -p "$OUT"
work=$(mktemp -d /tmp/hpn-mptcp-bench.XXXXXX)
data=$(mktemp -d /dev/shm/hpn-mptcp-bench.XXXXXX)
up= ipids=()
cleanup() {
	local rc=$? p
	trap - EXIT INT TERM
	tsshd_stop "$work" $HPORT 2>/dev/null || true
	tsshd_stop "$work" $SPORT 2>/dev/null || true
	for p in "${ipids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	[ -z "$up" ] || "$NP" down --name "$NAME" > /dev/null 2>&1 || true
	rm -rf "$work" "$data"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

bl_netpath_snapshot "$work/netpath"
tsshd_setup "$work"
up=1
"$NP" up --name "$NAME" --rtt "$RTT" --rate "$RATE" --cc "$PATH_CC" --paths 2 \
    > "$work/path.log" 2>&1 || bl_die "netpath up: $(tail -3 "$work/path.log")"
grep -q "mptcp: endpoints" "$work/path.log" ||
	bl_die "no MPTCP endpoints: $(cat "$work/path.log")"
s1=$("$NP" addr server --name "$NAME") c1=$("$NP" addr client --name "$NAME")
s2=$("$NP" addr server2 --name "$NAME") c2=$("$NP" addr client2 --name "$NAME")
TSSHD_EXTRA="UseMPTCP yes" tsshd_start "$work" "$HPN_TREE" $HPORT "$s1" \
    "$NP" exec server --name "$NAME" -- || bl_die "hpn sshd"
tsshd_start "$work" "$STOCK_TREE" $SPORT "$s1" \
    "$NP" exec server --name "$NAME" -- || bl_die "stock sshd"
tsshd_client_config "$work" $HPORT "$s1" > "$work/ssh_config-hpn"
tsshd_client_config "$work" $SPORT "$s1" > "$work/ssh_config-stock"
head -c "$SIZE" /dev/urandom > "$data/src"

# iperf3 over the paths in LIST ("1", "2", "1 2": at once): MB/s summed
iperf() {
	local p srv cli port json sum=0 v
	local -a pids=() files=()
	ipids=()
	for p in "$@"; do
		srv=$s1 cli=$c1 port=5201
		[ "$p" = 2 ] && srv=$s2 cli=$c2 port=5202
		"$NP" exec server --name "$NAME" -- iperf3 -s -1 -B "$srv" \
		    -p $port > /dev/null 2>&1 &
		ipids+=($!)
	done
	sleep 0.5
	for p in "$@"; do
		srv=$s1 cli=$c1 port=5201
		[ "$p" = 2 ] && srv=$s2 cli=$c2 port=5202
		"$NP" exec client --name "$NAME" -- timeout 120 iperf3 \
		    -c "$srv" -B "$cli" -p $port -n "$SIZE" -J \
		    > "$work/iperf-$p.json" 2>/dev/null &
		pids+=($!)
		files+=("$work/iperf-$p.json")
	done
	for p in "${pids[@]}"; do
		wait "$p" || true
	done
	for p in "${ipids[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	ipids=()
	for json in "${files[@]}"; do
		v=$(jq -r '.end.sum_received.bits_per_second / 8 / 1e6' \
		    "$json" 2>/dev/null) || v=0
		sum=$(awk -v a="$sum" -v b="${v:-0}" 'BEGIN { print a + b }')
	done
	printf '%.1f' "$sum"
}

# cmd BUILD MPTCP PROGRAM [ARGS...]: PROGRAM (ssh, scp) of BUILD in the
# client namespace, with its client config, UseMPTCP=yes or nothing, and
# aes128-gcm before ARGS
cmd() {
	local t=$1 m=$2 p=$3 tree=$HPN_TREE
	shift 3
	local -a o=()
	[ "$t" = stock ] && tree=$STOCK_TREE
	[ "$m" = yes ] && o=(-oUseMPTCP=yes)
	[ "$p" = scp ] && o+=(-S "$tree/ssh")
	"$NP" exec client --name "$NAME" -- timeout 600 "$tree/$p" \
	    -F "$work/ssh_config-$t" "${o[@]}" -c aes128-gcm@openssh.com "$@"
}
# setup BUILD MPTCP: seconds of "ssh host true"
setup() {
	local t0 t1
	t0=$(date +%s.%N)
	cmd "$1" "$2" ssh host true < /dev/null
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}
# one BUILD MPTCP DIR: MB/s of an scp by whole-command wall clock
one() {
	local t=$1 m=$2 dir=$3 t0 t1
	rm -f "$data/dst"
	t0=$(date +%s.%N)
	if [ "$dir" = up ]; then
		cmd "$t" "$m" scp "$data/src" host:"$data/dst"
	else
		cmd "$t" "$m" scp host:"$data/src" "$data/dst"
	fi
	t1=$(date +%s.%N)
	cmp -s "$data/src" "$data/dst" || bl_die "$t $m $dir: the copy differs"
	awk -v a="$t0" -v b="$t1" -v n="$SIZE" 'BEGIN { printf "%.1f", n / (b - a) / 1e6 }'
}

bl_log "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
i1=$(iperf 1) i2=$(iperf 2) i12=$(iperf 1 2)
bl_log "iperf3: path 1 $i1 MB/s, path 2 $i2 MB/s, both at once $i12 MB/s"

csv=$OUT/results.csv
echo "build,mptcp,dir,mbps_median,setup_s,mbps_beyond_setup,runs" > "$csv"
for run in $RUNS; do
	t=${run%%:*} m=${run#*:}
	su=$(bl_median $(bl_runs 3 setup $t $m))
	reps=$REPS
	[ $t = stock ] && reps=1
	for dir in up down; do
		runs=$(bl_runs $reps one $t $m $dir)
		md=$(bl_median $runs)
		b=$(bl_beyond "$md" "$su" "$SIZE")
		echo "$t,$m,$dir,$md,$su,$b,\"$runs\"" >> "$csv"
		bl_log "$t mptcp=$m $dir: $md MB/s, $b MB/s beyond set-up ($su s) (runs: $runs)"
	done
done
bl_log "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

{
	echo "Two paths of $RATE Mbit/s, $RTT ms each, $PATH_CC (netpath --paths 2, MPTCP endpoints),"
	echo "$(bl_human "$SIZE"), scp (SFTP mode), aes128-gcm, tmpfs; medians of $REPS (stock: 1)."
	echo "iperf3: path 1 $i1 MB/s, path 2 $i2 MB/s, both at once $i12 MB/s."
	echo
	printf '  %-6s %-6s %-5s %9s %9s %9s %9s\n' build mptcp dir "whole" "beyond" \
	    "/iperf3" "/iperf3"
	printf '  %-6s %-6s %-5s %9s %9s %9s %9s\n' "" "" "" "MB/s" "set-up" \
	    "both" "path 1"
	awk -F, -v both="$i12" -v one="$i1" 'NR > 1 {
	    printf "  %-6s %-6s %-5s %9.1f %9.1f %9.2f %9.2f\n", $1, $2, $3, $4, $6,
	        $6 / both, $6 / one }' "$csv"
	echo
	echo "Ratios are of the rate beyond set-up; whole-command ones: $(awk -F, -v both="$i12" \
	    'NR > 1 && $2 == "yes" { printf "%s %s %.2f of both paths; ", $1, $3, $4 / both }' "$csv")"
} | tee "$OUT/report.txt"
