#!/bin/bash
# bench/demo-wan.sh - the main job, shown: stock scp and hpnscp copy the same
# file over the same emulated long fat path (1 Gbit/s, 50 ms RTT by default),
# one after the other, with iperf3's figure on that path as the limit.
# `make demo` runs it after installing the dependencies and building both
# suites.  Run as root.  Environment:
#
#   HPN_TREE STOCK_TREE   the builds (default: build/{hpn,stock}/openssh-VERSION)
#   SIZE=1G  RTT=50  RATE=1000 (Mbit/s)  MTU=9000
#   DEMO_OPTS             extra options for both scp runs (e.g. -c aes128-ctr)
#   NAME=hpndemo          the netpath name
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/bench/lib.sh"

OSV=$(sed -n 's/^OPENSSH_VERSION=//p' "$TOP/upstream/openssh.mk")
HPN_TREE=${HPN_TREE:-$TOP/build/hpn/openssh-$OSV}
STOCK_TREE=${STOCK_TREE:-$TOP/build/stock/openssh-$OSV}
SIZE=${SIZE:-1G}
RTT=${RTT:-50}
RATE=${RATE:-1000}
MTU=${MTU:-9000}
DEMO_OPTS=${DEMO_OPTS:-}
NAME=${NAME:-hpndemo}
# shellcheck disable=SC2034  # read by bl_start_server
SERVER_OPTS=
declare -A PORT=([hpn]=2222 [stock]=22)

[ "$(id -u)" -eq 0 ] || bl_die "run as root (network namespaces, sshd): sudo make demo"
"$TOP/scripts/deps.sh" check bench
BYTES=$(bl_bytes "$SIZE") || bl_die "SIZE: e.g. 1G, 256M"
[ "$BYTES" -ge 1048576 ] || bl_die "SIZE: at least 1M"

work=$(mktemp -d "/dev/shm/$NAME.XXXXXX")
chmod 755 "$work"
path_up=0 bg_pid= scp_pid=
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	[ -n "$bg_pid" ] && kill "$bg_pid" 2>/dev/null
	[ -n "$scp_pid" ] && kill "$scp_pid" 2>/dev/null
	bl_stop_server "$work" "${PORT[hpn]}" 2>/dev/null || true
	bl_stop_server "$work" "${PORT[stock]}" 2>/dev/null || true
	[ "$path_up" = 1 ] && { "$NP" down --name "$NAME" >/dev/null || true; }
	rm -rf "$work"
	[ $rc -eq 0 ] || echo "demo: stopped (status $rc), everything cleaned up" >&2
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

t0=$SECONDS
human=$(bl_human "$BYTES")
echo "demo: stock scp vs hpnscp, $human over an emulated $RATE Mbit/s path with $RTT ms round-trip time"
echo "demo: (two network namespaces joined by bench/netpath's delay line; data on tmpfs /dev/shm)"
bl_meter "$work"
bl_netpath_snapshot "$work/netpath"
bl_snapshot_tree "$HPN_TREE" "$work/tree-hpn"
bl_snapshot_tree "$STOCK_TREE" "$work/tree-stock"
tsshd_setup "$work" >/dev/null

"$NP" up --name "$NAME" --rtt "$RTT" --rate "$RATE" --mtu "$MTU" >/dev/null
path_up=1
echo "demo: validating the path (ping, then 10 s of iperf3)..."
if "$NP" validate --name "$NAME" > "$work/validate" 2>&1; then v=OK; else v=FAILED; fi
grep -E '^  (ping|iperf3|load)' "$work/validate" | sed 's/^ */    /'
iperf_mbit=$(sed -n 's/^RESULT.* mbit=\([0-9]*\).*/\1/p' "$work/validate")
[ "$v" = OK ] || echo "demo: WARNING: the path did not validate (busy machine?); figures are suspect"

bl_start_server "$work" stock "$work/tree-stock" "${PORT[stock]}" "$NAME" || bl_die "stock sshd did not start"
bl_start_server "$work" hpn "$work/tree-hpn" "${PORT[hpn]}" "$NAME" || bl_die "hpnsshd did not start"
echo "demo: making $human of random data"
src=$work/random-${human// /}
head -c "$BYTES" /dev/urandom > "$src"
src_sha=$(sha256sum < "$src" | cut -d' ' -f1)

# copy TAG LABEL: scp of TAG's suite to TAG's server; sets RES_DATA RES_WALL
copy() {
	local tag=$1 label=$2 dst=$work/dst-$1 times=$work/times-$1 first last
	local t_start t_end size prev=0 tp tn now i rc=0
	local -a cmd
	# shellcheck disable=SC2206
	cmd=("$work/tree-$tag/scp" -S "$work/tree-$tag/ssh" -F "$work/ssh_config-$tag" $DEMO_OPTS)
	rm -f "$dst" "$times"
	echo
	echo "demo: $label: $("$work/tree-$tag/ssh" -V 2>&1 | cut -d, -f1) -> its own server"
	"$work/meter" watch "$dst" "$BYTES" 900 "$times" &
	bg_pid=$!
	t_start=$(date +%s.%N)
	if [ -t 1 ]; then
		# scp's own progress meter; it shows only in the terminal's
		# foreground process group, hence --foreground
		"$NP" exec client --name "$NAME" -- timeout --foreground -k 5 900 \
		    "${cmd[@]}" "$src" "bench:$dst" || rc=$?
	else
		"$NP" exec client --name "$NAME" -- timeout -k 5 900 \
		    "${cmd[@]}" -q "$src" "bench:$dst" &
		scp_pid=$!
		tp=$t_start
		for ((i = 0; i < 900; i++)); do
			kill -0 "$scp_pid" 2>/dev/null || break
			sleep 1
			size=$(stat -c %s "$dst" 2>/dev/null || echo 0)
			tn=$(date +%s.%N)
			now=$(awk -v s="$size" -v p="$prev" -v b="$BYTES" -v t="$tn" -v tp="$tp" 'BEGIN {
			    printf "%5.0f MiB of %.0f MiB  %3.0f%%  %6.1f MB/s",
			    s / 1048576, b / 1048576, 100 * s / b, (s - p) / (t - tp) / 1e6 }')
			echo "    $label: $now"
			prev=$size tp=$tn
		done
		wait "$scp_pid" || rc=$?
		scp_pid=
	fi
	t_end=$(date +%s.%N)
	for ((i = 0; i < 30; i++)); do kill -0 "$bg_pid" 2>/dev/null || break; sleep 0.1; done
	kill "$bg_pid" 2>/dev/null || true
	wait "$bg_pid" 2>/dev/null || true
	bg_pid=
	[ $rc -eq 0 ] || bl_die "$label failed (status $rc)"
	[ "$(stat -c %s "$dst")" = "$BYTES" ] || bl_die "$label: the copy is short"
	[ "$(sha256sum < "$dst" | cut -d' ' -f1)" = "$src_sha" ] || bl_die "$label: the copy differs (sha256)"
	rm -f "$dst"
	read -r first last _ < "$times"
	RES_DATA=$(awk -v a="$first" -v b="$last" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
	RES_WALL=$(awk -v a="$t_start" -v b="$t_end" 'BEGIN { printf "%.3f", b - a }')
	awk -v d="$RES_DATA" -v w="$RES_WALL" -v b="$BYTES" -v l="$label" 'BEGIN {
	    printf "demo: %s: %.1f MB/s (%.1f s from first to last byte; %.1f s with connection set-up), sha256 identical\n",
	    l, b / d / 1e6, d, w }'
}

copy stock "stock scp"
stock_data=$RES_DATA
copy hpn "hpnscp"
hpn_data=$RES_DATA

echo
awk -v s="$stock_data" -v h="$hpn_data" -v b="$BYTES" -v i="$iperf_mbit" \
    -v rtt="$RTT" -v rate="$RATE" -v human="$human" 'BEGIN {
	sr = b / s / 1e6; hr = b / h / 1e6; ir = i / 8
	printf "demo: ===== %s over %s Mbit/s, %s ms RTT =====\n", human, rate, rtt
	printf "demo:   stock scp  %7.1f MB/s\n", sr
	printf "demo:   hpnscp     %7.1f MB/s   = %.1f x stock\n", hr, hr / sr
	if (ir > 0) printf "demo:   iperf3     %7.1f MB/s   (one TCP stream, the limit; hpnscp reaches %.0f%% of it)\n", ir, 100 * hr / ir
	printf "demo:   (MB = 10^6 bytes; rates from first to last byte, connection set-up excluded)\n"
}'
echo "demo: done in $((SECONDS - t0)) s; cleaning up"
