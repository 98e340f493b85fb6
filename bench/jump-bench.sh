#!/bin/bash
# jump-bench.sh: transfers through a jump host against direct ones, on the
# emulated path (README.hpn section 1, "behind a relay").
#
#   HPN_TREE=... STOCK_TREE=... bench/jump-bench.sh [OUTDIR]
#
# The client sits in netpath's client namespace; two sshds of each build
# listen in the server namespace: the jump host and the target.  Through
# the jump host (-J, ProxyJump: ssh -W over the jump host's connection)
# the target's socket comes from the jump host, a hop of microseconds,
# while the data crosses the emulated path.  Each run moves SIZE of
# /dev/zero up ("cat > /dev/null" on the target) or down ("head -c") with
# aes128-gcm; whole-command wall clock, as MB/s, and as a fraction of the
# direct run of the same build and of iperf3.
#
# Environment: RTT (ms, 100), RATE (Mbit/s, 1000), SIZE (512M), REPS (3,
# medians; stock runs once: 2 MiB windows make them long), NAME (hpnjb).
# Root.  Everything started is stopped by its PID; the path is torn down.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/bench/lib.sh"
OUT=${1:-$TOP/build/bench-jump}
HPN_TREE=$(cd "${HPN_TREE:?HPN_TREE= the built hpn tree}" && pwd)
STOCK_TREE=$(cd "${STOCK_TREE:?STOCK_TREE= the built stock tree}" && pwd)
RTT=${RTT:-100} RATE=${RATE:-1000} SIZE=$(bl_bytes "${SIZE:-512M}")
REPS=${REPS:-3} NAME=${NAME:-hpnjb}
[ "$(id -u)" = 0 ] || bl_die "needs root (network namespaces)"
declare -A PORT=([hpn-jump]=4701 [hpn-target]=4702 [stock-jump]=4703 [stock-target]=4704)

mkdir -p "$OUT"
work=$(mktemp -d /tmp/hpn-jump-bench.XXXXXX)
up= ipid=
cleanup() {
	local rc=$? p
	trap - EXIT INT TERM
	for p in "${PORT[@]}"; do
		tsshd_stop "$work" "$p" 2>/dev/null || true
	done
	[ -z "$ipid" ] || kill "$ipid" 2>/dev/null || true
	[ -z "$up" ] || "$NP" down --name "$NAME" > /dev/null 2>&1 || true
	rm -rf "$work"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

bl_netpath_snapshot "$work/netpath"
tsshd_setup "$work"
up=1
"$NP" up --name "$NAME" --rtt "$RTT" --rate "$RATE" > "$work/path.log" 2>&1 ||
	bl_die "netpath up: $(tail -3 "$work/path.log")"
addr=$("$NP" addr server --name "$NAME")
for t in hpn stock; do
	tree=$HPN_TREE
	[ $t = stock ] && tree=$STOCK_TREE
	for role in jump target; do
		tsshd_start "$work" "$tree" "${PORT[$t-$role]}" "$addr" \
		    "$NP" exec server --name "$NAME" -- || bl_die "$t $role sshd"
	done
	{
		tsshd_client_config "$work" "${PORT[$t-target]}" "$addr" |
		    sed 's/^Host \*/Host target/'
		tsshd_client_config "$work" "${PORT[$t-jump]}" "$addr" |
		    sed 's/^Host \*/Host jump/'
	} > "$work/ssh_config-$t"
done

# iperf3 for reference, the same way as the other benchmarks
"$NP" exec server --name "$NAME" -- iperf3 -s -1 -B "$addr" > /dev/null 2>&1 &
ipid=$!
sleep 0.5
iperf=$("$NP" exec client --name "$NAME" -- iperf3 -c "$addr" -n "$SIZE" -J 2>/dev/null |
    jq -r '.end.sum_received.bits_per_second / 8 / 1e6') || iperf=
wait "$ipid" 2>/dev/null || true
ipid=
iperf=$(printf '%.1f' "${iperf:-0}")
bl_log "iperf3 ($(bl_human "$SIZE")): $iperf MB/s"

# one TREE DIR VIA: MB/s by whole-command wall clock
one() {
	local t=$1 dir=$2 via=$3 tree=$HPN_TREE t0 t1 cmd
	local -a j=()
	[ "$t" = stock ] && tree=$STOCK_TREE
	[ "$via" = jump ] && j=(-J jump)
	t0=$(date +%s.%N)
	if [ "$dir" = up ]; then
		head -c "$SIZE" /dev/zero | "$NP" exec client --name "$NAME" -- \
		    timeout 600 "$tree/ssh" -F "$work/ssh_config-$t" "${j[@]}" \
		    -c aes128-gcm@openssh.com target "cat > /dev/null"
	else
		"$NP" exec client --name "$NAME" -- timeout 600 "$tree/ssh" \
		    -F "$work/ssh_config-$t" "${j[@]}" -c aes128-gcm@openssh.com \
		    target "head -c $SIZE /dev/zero" < /dev/null > /dev/null
	fi
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" -v n="$SIZE" 'BEGIN { printf "%.1f", n / (b - a) / 1e6 }'
}
# setup TREE VIA: seconds of "ssh [-J jump] target true" (set-up and close)
setup() {
	local t=$1 via=$2 tree=$HPN_TREE t0 t1
	local -a j=()
	[ "$t" = stock ] && tree=$STOCK_TREE
	[ "$via" = jump ] && j=(-J jump)
	t0=$(date +%s.%N)
	"$NP" exec client --name "$NAME" -- timeout 60 "$tree/ssh" \
	    -F "$work/ssh_config-$t" "${j[@]}" target true < /dev/null
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}

csv=$OUT/results.csv
echo "build,dir,via,mbps_median,setup_s,mbps_beyond_setup,runs" > "$csv"
bl_log "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A SETUP
for t in hpn stock; do
	for via in direct jump; do
		runs=$(bl_runs 3 setup $t $via)
		SETUP[$t-$via]=$(bl_median $runs)
		bl_log "$t $via: set-up and close ${SETUP[$t-$via]} s (runs: $runs)"
	done
done
for t in hpn stock; do
	reps=$REPS
	[ $t = stock ] && reps=1
	for dir in up down; do
		for via in direct jump; do
			runs=$(bl_runs $reps one $t $dir $via)
			m=$(bl_median $runs)
			b=$(bl_beyond "$m" "${SETUP[$t-$via]}" "$SIZE")
			echo "$t,$dir,$via,$m,${SETUP[$t-$via]},$b,\"$runs\"" >> "$csv"
			bl_log "$t $dir $via: $m MB/s, $b MB/s beyond set-up (runs: $runs)"
		done
	done
done
bl_log "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

{
	echo "Through a jump host on $RATE Mbit/s, $RTT ms: $(bl_human "$SIZE"), aes128-gcm,"
	echo "MB/s (medians of $REPS for hpn, 1 for stock); iperf3 $iperf MB/s."
	echo "Whole command, and beyond set-up (the median time of \"ssh [-J jump]"
	echo "target true\" taken off: hpn ${SETUP[hpn-direct]} s direct, ${SETUP[hpn-jump]} s through the jump host)"
	echo
	printf '  %-6s %-5s %8s %8s %8s %8s %8s %8s\n' "" "" whole "" "" beyond "" ""
	printf '  %-6s %-5s %8s %8s %8s %8s %8s %8s\n' build dir direct jump ratio direct jump ratio
	for t in hpn stock; do
		for dir in up down; do
			awk -F, -v t=$t -v x=$dir '
			    $1 == t && $2 == x && $3 == "direct" { d = $4; db = $6 }
			    $1 == t && $2 == x && $3 == "jump" { j = $4; jb = $6 }
			    END { printf "  %-6s %-5s %8.1f %8.1f %8.2f %8.1f %8.1f %8.2f\n",
			        t, x, d, j, j / d, db, jb, jb / db }' "$csv"
		done
	done
} | tee "$OUT/report.txt"
