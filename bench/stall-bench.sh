#!/bin/bash
# bench/stall-bench.sh OUT - hpnsshd's memory when readers stall (make
# bench-bigbdp runs it; issue 42).  On the emulated 1 Gbit/s path (RTT
# STALL_RTT ms, 100), N (100) uploads at once, each into a reader that
# takes READ (32M) and then stops until told to go on; once the sessions'
# memory stops growing, their summed RSS is taken, then the readers go on
# and every upload must arrive whole (SHA-256).  Twice: with
# HPNBufferBudget BUDGET (256M) and with none.  The target: with the
# budget, the sessions hold at most the budget plus N x what a session
# costs anyway (an idle session's RSS and 8 MiB: its stock 2 MiB window,
# the packet layer's read buffer, allocation slack; README.hpn section 1);
# nothing is lost.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/bench/lib.sh"
OUT=${1:-$TOP/build/bench-stall/$(date +%Y%m%d-%H%M%S)}
N=${N:-100}
RTT=${STALL_RTT:-100}
BUDGET=${BUDGET:-256M}
READ=${READ:-32M}
SIZE=${STALL_SIZE:-48M}
NAME=hpnstall
OSV=$(sed -n 's/^OPENSSH_VERSION=//p' "$TOP/upstream/openssh.mk")
HPN_TREE=${HPN_TREE:-$TOP/build/hpn/openssh-$OSV}
[ "$(id -u)" -eq 0 ] || bl_die "run as root"
budget_b=$(bl_bytes "$BUDGET") read_b=$(bl_bytes "$READ") size_b=$(bl_bytes "$SIZE")
mkdir -p "$OUT"
work=$(mktemp -d /dev/shm/$NAME.XXXXXX)
chmod 755 "$work"
path_up=0 pids=""
cleanup() {
	local rc=$? p
	trap - EXIT INT TERM
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	for p in 2301 2302; do bl_stop_server "$work" $p 2>/dev/null || true; done
	[ "$path_up" = 1 ] && { "$NP" down --name "$NAME" || true; }
	rm -rf "$work"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
exec > >(tee "$OUT/report.txt") 2>&1

bl_netpath_snapshot "$work/netpath"
bl_snapshot_tree "$HPN_TREE" "$work/tree"
tsshd_setup "$work" > /dev/null
"$NP" up --name "$NAME" --rtt "$RTT" --rate 1000 > /dev/null
path_up=1
addr=$("$NP" addr server --name "$NAME")
for p in 2301 2302; do
	b=$BUDGET
	[ $p = 2302 ] && b=none
	TSSHD_EXTRA="HPNBufferBudget $b" tsshd_start "$work" "$work/tree" $p "$addr" \
	    "$NP" exec server --name "$NAME" -- || bl_die "sshd did not start"
	tsshd_client_config "$work" $p "$addr" > "$work/ssh_config-$p"
done
head -c "$size_b" /dev/urandom > "$work/data"
sum=$(sha256sum < "$work/data" | cut -d' ' -f1)

rss_sessions() {
	local p
	for p in $(pgrep -f '^sshd-session: [^ ]*@notty'); do
		awk '/^VmRSS:/ { print $2 }' "/proc/$p/status" 2>/dev/null || true
	done | awk '{ s += $1 } END { print s + 0 }'
}

# an idle session's cost
"$NP" exec client --name "$NAME" -- "$work/tree/ssh" -F "$work/ssh_config-2301" \
    bench "sleep 20" < /dev/null > /dev/null 2>&1 &
idle=$!
pids="$idle"
for _ in $(seq 1 100); do
	[ "$(pgrep -fc '^sshd-session: [^ ]*@notty')" -ge 1 ] && break
	sleep 0.1
done
sleep 1
base=$(rss_sessions)
kill "$idle" 2>/dev/null || true
wait "$idle" 2>/dev/null || true
pids=""
echo "stall: $(date -Is), $N uploads of $(bl_human "$size_b") over 1 Gbit/s, $RTT ms, readers stop after $(bl_human "$read_b"); an idle session: $base KiB; load $(cut -d' ' -f1 /proc/loadavg)"

# one PORT: prints "held_kib seconds lost"
round() {
	local port=$1 i n prev=0 now got t0 lost=0 p
	rm -rf "$work/out" "$work/go"
	mkdir "$work/out"
	pids=""
	t0=$(date +%s.%N)
	for n in $(seq 1 "$N"); do
		"$NP" exec client --name "$NAME" -- timeout 600 "$work/tree/ssh" \
		    -F "$work/ssh_config-$port" bench \
		    "head -c $read_b > $work/out/$n; while [ ! -e $work/go ]; do sleep 0.2; done; cat >> $work/out/$n" \
		    < "$work/data" > /dev/null 2>> "$work/err-$port" &
		pids="$pids $!"
		# in groups of 25: within the server's MaxStartups (100:30)
		[ $((n % 25)) -eq 0 ] && sleep 1
	done
	for i in $(seq 1 240); do
		sleep 0.5
		now=$(rss_sessions)
		got=0
		for n in $(seq 1 "$N"); do
			[ "$(stat -c %s "$work/out/$n" 2>/dev/null || echo 0)" -ge "$read_b" ] &&
			    got=$((got + 1))
		done
		[ "$got" -eq "$N" ] && [ "$now" -le "$prev" ] && break
		prev=$now
	done
	held=$(rss_sessions)
	touch "$work/go"
	for p in $pids; do wait "$p" || lost=$((lost + 1)); done
	pids=""
	for n in $(seq 1 "$N"); do
		[ "$(sha256sum < "$work/out/$n" | cut -d' ' -f1)" = "$sum" ] ||
		    lost=$((lost + 1))
	done
	echo "$held $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') $lost"
}

read -r held secs lost < <(round 2301)
limit=$(( budget_b / 1024 + N * (base + 8192) ))
echo "stall: HPNBufferBudget $BUDGET: the sessions held $((held / 1024)) MiB (limit $((limit / 1024)) MiB: the budget + $N x ($base KiB + 8 MiB)); $lost of $N uploads lost or failed; ${secs} s"
read -r held0 secs0 lost0 < <(round 2302)
echo "stall: HPNBufferBudget none: the sessions held $((held0 / 1024)) MiB; $lost0 of $N uploads lost or failed; ${secs0} s"
if [ "$held" -le "$limit" ] && [ "$lost" -eq 0 ] && [ "$lost0" -eq 0 ]; then
	echo "stall: PASS: within the budget plus $N sessions' own cost, nothing lost"
else
	echo "stall: MISS"
fi
