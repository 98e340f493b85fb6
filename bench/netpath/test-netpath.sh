#!/usr/bin/env bash
#
# Self-test of netpath and delayline: path up at 1 Gbit/s / 50 ms and
# validate; random loss drops about the asked fraction; a tiny queue tail
# drops; down leaves no namespace, no process and the global sysctls as
# they were.  Needs root, iperf3, ping, jq.  Takes about a minute.
#
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NP=$HERE/netpath
N=${NETPATH_TEST_NAME:-nptest}
DEADLINE=$((SECONDS + 110))
pass=0
fail=0
srv=

ok() {
	echo "ok: $*"
	pass=$((pass + 1))
}

bad() {
	echo "FAIL: $*"
	fail=$((fail + 1))
}

check() {
	local what=$1

	shift
	if "$@"; then ok "$what"; else bad "$what"; fi
}

cleanup() {
	local rc=$?

	trap - EXIT
	if [ -n "$srv" ] && kill -0 "$srv" 2>/dev/null; then
		kill -TERM "$srv" 2>/dev/null || true
		wait "$srv" 2>/dev/null || true
	fi
	"$NP" down --name "$N" || true
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

time_left() {
	[ "$SECONDS" -lt "$DEADLINE" ] || { bad "time budget exceeded"; exit 1; }
}

# Value of FIELD for direction DIR (a2b = client to server) in stats.
stat() {
	"$NP" stats --name "$N" | awk -v d="dir=$1" -v f="$2" '
	    $1 == d { for (i = 2; i <= NF; i++) { split($i, kv, "=");
	    if (kv[1] == f) print kv[2] } }'
}

# Run iperf3 for S seconds with extra ARGS; server ended by PID.
iperf() {
	local s=$1 i

	shift
	"$NP" exec server --name "$N" -- iperf3 -s -1 -B \
	    "$("$NP" addr server)" >/dev/null 2>&1 </dev/null &
	srv=$!
	for ((i = 0; i < 50; i++)); do
		"$NP" exec server --name "$N" -- ss -Hltn "sport = :5201" |
		    grep -q . && break
		sleep 0.1
	done
	timeout $((s + 20)) "$NP" exec client --name "$N" -- iperf3 -c \
	    "$("$NP" addr server)" -t "$s" "$@" >/dev/null 2>&1 || true
	if kill -0 "$srv" 2>/dev/null; then
		kill -TERM "$srv" 2>/dev/null || true
	fi
	wait "$srv" 2>/dev/null || true
	srv=
}

in_range() {
	awk "BEGIN { exit !($1 >= $2 && $1 <= $3) }"
}

[ "$(id -u)" -eq 0 ] || { echo "test-netpath: needs root"; exit 1; }
for t in ip iperf3 ping jq; do
	command -v $t >/dev/null || { echo "test-netpath: needs $t"; exit 1; }
done
rmem0=$(sysctl -n net.core.rmem_max)
wmem0=$(sysctl -n net.core.wmem_max)
ccs0=$(sysctl -n net.ipv4.tcp_allowed_congestion_control)
others=0
if [ -d /run/netpath ]; then
	others=$(find /run/netpath -mindepth 1 -maxdepth 1 -type d \
	    ! -name "$N" | wc -l)
fi

# 1. 1 Gbit/s, 50 ms: RTT within 5%, iperf3 at least 90%.
"$NP" up --name "$N" --rtt 50 --rate 1000
check "namespaces $N-c and $N-s exist" \
    test -e "/run/netns/$N-c" -a -e "/run/netns/$N-s"
check "tcp_rmem max 64 MiB in client namespace" test \
    "$("$NP" exec client --name "$N" -- sysctl -n net.ipv4.tcp_rmem |
    awk '{ print $3 }')" = 67108864
check "global rmem_max raised" test "$(sysctl -n net.core.rmem_max)" -ge 67108864
if "$NP" validate --name "$N" --seconds 8 --omit 2; then
	ok "validate 1 Gbit/s 50 ms"
else
	bad "validate 1 Gbit/s 50 ms"
fi
time_left

# 2. 1% random loss, counted on ~25000 UDP datagrams client to server.
"$NP" up --name "$N" --rtt 10 --rate 1000 --loss 1 >/dev/null
iperf 3 -u -b 100M -l 1400
rx=$(stat a2b rx_pkts)
lost=$(stat a2b drop_loss)
pct=$(awk "BEGIN { printf \"%.3f\", 100 * $lost / ($rx + 1) }")
echo "loss: $lost of $rx packets dropped ($pct%, asked 1%)"
check "loss 1% gives 0.8-1.2% drops over $rx packets" \
    in_range "$pct" 0.8 1.2
check "enough packets for the loss test" test "$rx" -gt 10000
time_left

# 3. Tiny queue (20 kB at 100 Mbit/s): TCP must cause tail drops, and the
# backlog must never exceed the limit.
"$NP" up --name "$N" --rtt 20 --rate 100 --queue 20000 --cc cubic >/dev/null
iperf 3
dq=$(stat a2b drop_queue)
mb=$(stat a2b max_backlog)
echo "queue: $dq tail drops, max backlog $mb bytes (limit 20000)"
check "tail drops with a 20 kB queue" test "$dq" -gt 0
check "backlog stayed within the queue limit" test "$mb" -le 20000
time_left

# 4. Down: nothing left behind.
pid=$(cat "/run/netpath/$N/pid")
"$NP" down --name "$N"
check "delayline ended" test ! -e "/proc/$pid"
check "no namespace $N-* left" \
    test -z "$(ip netns list | awk '{ print $1 }' | grep -E "^$N-(c|s)$" || true)"
check "no state left" test ! -e "/run/netpath/$N"
if [ "$others" -eq 0 ]; then
	check "rmem_max restored" test "$(sysctl -n net.core.rmem_max)" = "$rmem0"
	check "wmem_max restored" test "$(sysctl -n net.core.wmem_max)" = "$wmem0"
	check "allowed congestion controls restored" test \
	    "$(sysctl -n net.ipv4.tcp_allowed_congestion_control)" = "$ccs0"
else
	echo "skip: other paths are up, global sysctls stay raised"
fi
"$NP" down --name "$N"
check "down is idempotent" true

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
