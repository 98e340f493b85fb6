#!/bin/bash
# metrics-demo.sh: hpnssh -o Metrics=yes on the emulated path, clean and
# lossy, and the plots of both runs (contrib/hpnssh-metrics-plot).
#
#   HPN_TREE=build/hpn/openssh-10.3p1 bench/metrics-demo.sh [OUTDIR]
#
# Environment: RTT (ms, 100), RATE (Mbit/s, 1000), LOSS (%, 0.01), SIZE
# (bytes moved, 1G), INTERVAL (s, 0.5), NAME (netpath name, hpnmd).
# Each run downloads SIZE from the server's /dev/zero over aes128-gcm into
# /dev/null.  OUTDIR (build/bench-metrics) gets, per run: the two CSV files,
# the PNG, the summary line and the server's transfer log line.
# Root (network namespaces).  Everything started is stopped by its PID,
# and the path torn down, also on failure.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/bench/lib.sh"
OUT=${1:-$TOP/build/bench-metrics}
HPN_TREE=$(cd "${HPN_TREE:?HPN_TREE= the built hpn tree}" && pwd)
RTT=${RTT:-100} RATE=${RATE:-1000} LOSS=${LOSS:-0.01}
SIZE=$(bl_bytes "${SIZE:-1G}") INTERVAL=${INTERVAL:-0.5} NAME=${NAME:-hpnmd}
PORT=4622
[ "$(id -u)" = 0 ] || bl_die "needs root (network namespaces)"

mkdir -p "$OUT"
work=$(mktemp -d /tmp/hpn-metrics-demo.XXXXXX)
up=
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	tsshd_stop "$work" "$PORT" 2>/dev/null || true
	[ -z "$up" ] || "$NP" down --name "$NAME" > /dev/null 2>&1 || true
	rm -rf "$work"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

bl_netpath_snapshot "$work/netpath"
tsshd_setup "$work"

# run TAG [netpath options]
run() {
	local tag=$1 addr
	shift
	tsshd_stop "$work" "$PORT" 2>/dev/null || true
	"$NP" down --name "$NAME" > /dev/null 2>&1 || true
	up=1
	"$NP" up --name "$NAME" --rtt "$RTT" --rate "$RATE" --seed 11 "$@" \
	    > "$work/path.log" 2>&1 || bl_die "netpath up: $(tail -3 "$work/path.log")"
	addr=$("$NP" addr server --name "$NAME")
	TSSHD_LOGLEVEL=INFO tsshd_start "$work" "$HPN_TREE" "$PORT" "$addr" \
	    "$NP" exec server --name "$NAME" -- || bl_die "sshd did not start"
	tsshd_client_config "$work" "$PORT" "$addr" > "$work/ssh_config"
	rm -f "$OUT/$tag".*
	bl_log "$tag: $(bl_human "$SIZE") down at $RATE Mbit/s, $RTT ms $*"
	local t0 t1
	t0=$(date +%s.%N)
	"$NP" exec client --name "$NAME" -- timeout 600 "$HPN_TREE/ssh" \
	    -F "$work/ssh_config" -c aes128-gcm@openssh.com -E "$OUT/$tag.log" \
	    -o LogLevel=INFO -o Metrics=yes -o MetricsInterval="$INTERVAL" \
	    -o MetricsPath="$OUT/$tag" host "head -c $SIZE /dev/zero" > /dev/null
	t1=$(date +%s.%N)
	grep '^Metrics: ' "$OUT/$tag.log" | tee "$OUT/$tag.summary" >&2
	sleep 1
	grep 'Session transfer: ' "$work"/sshd-"$PORT".log 2>/dev/null |
	    tail -n 1 > "$OUT/$tag.serverlog" || true
	cat "$OUT/$tag.serverlog" >&2
	awk -v a="$t0" -v b="$t1" -v n="$SIZE" 'BEGIN {
	    printf "bench: whole command %.2f s, %.0f Mbit/s\n", b - a, n * 8 / (b - a) / 1e6 }' >&2
	"$TOP/contrib/hpnssh-metrics-plot" -t "hpnssh $(bl_human "$SIZE") down, $RATE Mbit/s, $RTT ms $*" \
	    -o "$OUT/$tag.png" "$OUT/$tag"
	bl_log "$tag: $OUT/$tag.png"
}

bl_log "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
run clean
run lossy --loss "$LOSS" --cc cubic
bl_log "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
