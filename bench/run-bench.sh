#!/bin/bash
# bench/run-bench.sh - HPN vs stock OpenSSH vs iperf3 on an emulated long fat
# path (bench/netpath).  Run as root; `make bench` / `make bench-quick` call
# it.  Everything is set by environment variables (see bench/README.md):
#
#   RTTS="0 10 50 100"  RATE=1000 (Mbit/s)  MTU=9000  SIZE=1G  REPS=3
#   CIPHERS="aes128-gcm@openssh.com aes128-ctr chacha20-poly1305@openssh.com"
#   CTR_MAC=hmac-sha2-256-etm@openssh.com   (MAC for non-AEAD ciphers)
#   MODES="pipe-up scp-up sftp-up sftp-down"  (also: pipe-down scp-down)
#   PAIRS="hpn-hpn stock-stock hpn-stock stock-hpn"   (client-server; also
#   prev-prev with PREV_TREE, anchor-anchor with ANCHOR_TREE)
#   HPN_TREE STOCK_TREE PREV_TREE ANCHOR_TREE  HPN_OPTS STOCK_OPTS  SERVER_OPTS
#   NETPATH_OPTS (extra `netpath up` options, e.g. --bufmax 1073741824)
#   OUT=build/bench/<timestamp>  NAME=hpnbench  TIMEOUT (s per transfer)
#   VALIDATE=1 (0: skip the path validation)   DRY_RUN=1: print the plan and
#   the estimated duration, run nothing
#   TIMESERIES=1: each transfer's time series in OUT/series/ (run-N-MODE-PAIR:
#   .bytes, the target's size every 100 ms; .ss, the sender's `ss -tin`
#   every 200 ms; .client.log and .sshd.log, both ends at DEBUG1);
#   bench/series-report.sh OUT compares them
#   QUIET_LOAD=3*nproc QUIET_WAIT=600: before each run, wait (at most
#   QUIET_WAIT s) for the 1-minute load to drop to QUIET_LOAD ("" = never wait)
#
# Results: OUT/results.csv (one row per run), OUT/results.md, OUT/*.png.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/bench/lib.sh"

RTTS=${RTTS:-"0 10 50 100"}
RATE=${RATE:-1000}
MTU=${MTU:-9000}
SIZE=${SIZE:-1G}
REPS=${REPS:-3}
CIPHERS=${CIPHERS:-"aes128-gcm@openssh.com aes128-ctr chacha20-poly1305@openssh.com"}
CTR_MAC=${CTR_MAC:-hmac-sha2-256-etm@openssh.com}
MODES=${MODES:-"pipe-up scp-up sftp-up sftp-down"}
PAIRS=${PAIRS:-"hpn-hpn stock-stock hpn-stock stock-hpn"}
OSV=$(sed -n 's/^OPENSSH_VERSION=//p' "$TOP/upstream/openssh.mk")
HPN_TREE=${HPN_TREE:-$TOP/build/hpn/openssh-$OSV}
STOCK_TREE=${STOCK_TREE:-$TOP/build/stock/openssh-$OSV}
# another build of ours (the one before a change: before/after in one run),
# and an anchor (HPN-SSH built by hand): their own pairs, prev-prev and
# anchor-anchor
PREV_TREE=${PREV_TREE:-}
ANCHOR_TREE=${ANCHOR_TREE:-}
NETPATH_OPTS=${NETPATH_OPTS:-}
HPN_OPTS=${HPN_OPTS:-}
STOCK_OPTS=${STOCK_OPTS:-}
SERVER_OPTS=${SERVER_OPTS:-}
NAME=${NAME:-hpnbench}
OUT=${OUT:-$TOP/build/bench/$(date +%Y%m%d-%H%M%S)}
TIMEOUT=${TIMEOUT:-}
VALIDATE=${VALIDATE:-1}
TIMESERIES=${TIMESERIES:-0}
# the series keep both ends' logs at DEBUG1 (the windows' growth and hold)
[ "$TIMESERIES" = 1 ] && export TSSHD_LOGLEVEL=DEBUG1
QUIET_LOAD=${QUIET_LOAD-$((3 * $(nproc)))}
QUIET_WAIT=${QUIET_WAIT:-600}
IPERF_PORT=5301
declare -A PORT=([hpn]=2201 [stock]=2202 [prev]=2203 [anchor]=2204)
declare -A TREE=([hpn]=$HPN_TREE [stock]=$STOCK_TREE [prev]=$PREV_TREE \
    [anchor]=$ANCHOR_TREE)

# ---------------------------------------------------------------------------
# checks

[ "$(id -u)" -eq 0 ] || bl_die "run as root (network namespaces, sshd)"
"$TOP/scripts/deps.sh" check bench
[[ $REPS =~ ^[0-9]+$ ]] && [ "$REPS" -ge 1 ] && [ "$REPS" -le 50 ] || bl_die "REPS: 1-50"
[[ $RATE =~ ^[0-9]+$ ]] && [ "$RATE" -ge 1 ] || bl_die "RATE: Mbit/s, an integer"
BYTES=$(bl_bytes "$SIZE") || bl_die "SIZE: e.g. 1G, 256M"
[ "$BYTES" -ge 1048576 ] || bl_die "SIZE: at least 1M"
for r in $RTTS; do [[ $r =~ ^[0-9]+$ ]] || bl_die "RTTS: integers (ms), not '$r'"; done
for m in $MODES; do
	case $m in pipe-up|pipe-down|scp-up|scp-down|sftp-up|sftp-down) ;;
	*) bl_die "MODES: unknown mode '$m'" ;; esac
done
TAGS=""
for p in $PAIRS; do
	case $p in hpn-hpn|stock-stock|hpn-stock|stock-hpn|prev-prev|anchor-anchor) ;;
	*) bl_die "PAIRS: unknown pair '$p' (client-server)" ;; esac
	for t in ${p%-*} ${p#*-}; do
		[ -n "${TREE[$t]}" ] || bl_die "PAIRS: $p needs ${t^^}_TREE"
		[[ " $TAGS " = *" $t "* ]] || TAGS="$TAGS $t"
	done
done
TAGS=${TAGS# }
[ -n "$TIMEOUT" ] && { [[ $TIMEOUT =~ ^[0-9]+$ ]] || bl_die "TIMEOUT: seconds"; }
command -v sha256sum >/dev/null || bl_die "sha256sum missing"
avail=$(df -k --output=avail /dev/shm | tail -n 1)
[ $((avail * 1024)) -gt $((BYTES * 2 + 268435456)) ] ||
    bl_die "/dev/shm has too little room for 2 x $SIZE and 256 MiB"

# ---------------------------------------------------------------------------
# work area (tmpfs) and clean-up

work=$(mktemp -d "/dev/shm/$NAME.XXXXXX")
chmod 755 "$work"
path_up=0 iperf_pid= watch_pid= fg_pid= ss_pid=
exec 3>&1 4>&2
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	trap '' PIPE
	exec 1>&3 2>&4
	# What runs in the namespaces (clients, servers) netpath down ends too.
	[ -n "$fg_pid" ] && kill "$fg_pid" 2>/dev/null
	[ -n "$watch_pid" ] && kill "$watch_pid" 2>/dev/null
	[ -n "$ss_pid" ] && series_ss_stop
	[ -n "$iperf_pid" ] && kill "$iperf_pid" 2>/dev/null
	for t in hpn stock prev anchor; do
		bl_stop_server "$work" "${PORT[$t]}" 2>/dev/null || true
	done
	[ "$path_up" = 1 ] && { "$NP" down --name "$NAME" || true; }
	rm -rf "$work"
	[ $rc -ne 0 ] && bl_log "stopped (status $rc); partial results in $OUT"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$OUT"
CSV=$OUT/results.csv
LOG=$OUT/run.log
# tee ignores Ctrl-C, so that the clean-up's last words still reach the log.
exec > >(trap '' INT TERM; exec tee -a "$LOG") 2>&1

bl_meter "$work"
bl_netpath_snapshot "$work/netpath"
declare -A BUILD
for t in $TAGS; do
	bl_snapshot_tree "${TREE[$t]}" "$work/tree-$t"
	BUILD[$t]=$(cat "$work/tree-$t/ssh" "$work/tree-$t/sshd-session" \
	    "$work/tree-$t/sftp-server" | sha256sum | cut -c1-10)
done
tsshd_setup "$work" >/dev/null

# ---------------------------------------------------------------------------
# what we run, how long it may take

nr=$(wc -w <<<"$RTTS") nc=$(wc -w <<<"$CIPHERS") nm=$(wc -w <<<"$MODES")
np=$(wc -w <<<"$PAIRS")
total=$((nr * REPS * (1 + nc * np * (nm + 1))))

# Rough duration: each transfer at min(path, what its windows allow).
estimate=$(awk -v rtts="$RTTS" -v rate="$RATE" -v b="$BYTES" -v reps="$REPS" \
    -v nc="$nc" -v modes="$MODES" -v pairs="$PAIRS" 'BEGIN {
	n = split(rtts, r, " "); nm = split(modes, m, " "); np = split(pairs, p, " ")
	link = rate * 1e6 / 8 * 0.9; if (link > 110e6) link = 110e6
	for (i = 1; i <= n; i++) {
		rt = r[i] / 1000; if (rt < 0.001) rt = 0.001
		t += reps * (b / link + 12)		# iperf3 + hashing
		for (j = 1; j <= nm; j++) for (k = 1; k <= np; k++) {
			up = (m[j] ~ /-up$/)
			split(p[k], cs, "-")
			# the receiver of the data decides the window
			slow = (up ? cs[2] : cs[1]) == "stock"
			v = slow ? 2 * 1048576 / rt : link
			if (v > link) v = link
			t += reps * nc * (b / v + 3 + 14 * rt)
		}
		t += reps * nc * np * (1 + 10 * rt)
	}
	printf "%.0f", t / 60 }')

echo "bench: HPN vs stock OpenSSH vs iperf3, $(date -Is) on $(hostname)"
echo "bench: results in $OUT"
echo "bench: RTTS=\"$RTTS\" RATE=$RATE MTU=$MTU SIZE=$SIZE ($BYTES bytes, random, on tmpfs /dev/shm) REPS=$REPS"
echo "bench: CIPHERS=\"$CIPHERS\" (CTR_MAC=$CTR_MAC for non-AEAD ciphers)"
echo "bench: MODES=\"$MODES\" PAIRS=\"$PAIRS\" (client-server)"
for t in $TAGS; do
	echo "bench: $t: $("$work/tree-$t/ssh" -V 2>&1) from ${TREE[$t]} (build ${BUILD[$t]})"
done
echo "bench: HPN_OPTS=\"$HPN_OPTS\" (hpn, prev, anchor) STOCK_OPTS=\"$STOCK_OPTS\" NETPATH_OPTS=\"$NETPATH_OPTS\""
echo "bench: SERVER_OPTS=\"$SERVER_OPTS\" QUIET_LOAD=$QUIET_LOAD QUIET_WAIT=$QUIET_WAIT"
echo "bench: $total runs, estimated ~$estimate min (more on a loaded machine)"
if [ "${DRY_RUN:-0}" = 1 ]; then
	rm -rf "$OUT"
	exit 0
fi

{
	echo "- date: $(date -Is), host $(hostname), $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), kernel $(uname -r)"
	echo "- load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "- path: bench/netpath (userspace delay line between two network namespaces), RATE $RATE Mbit/s, MTU $MTU, RTTs $RTTS ms"
	echo "- SIZE $(bl_human "$BYTES") of random data, read from and written to tmpfs (/dev/shm); REPS $REPS"
	for t in $TAGS; do
		echo "- $t: \`$("$work/tree-$t/ssh" -V 2>&1)\` (${TREE[$t]}, build ${BUILD[$t]})"
	done
	echo "- HPN_OPTS=\`$HPN_OPTS\` (hpn, prev, anchor) STOCK_OPTS=\`$STOCK_OPTS\`; netpath up options: \`$NETPATH_OPTS\`"
	echo "- SERVER_OPTS: \`$SERVER_OPTS\`; non-AEAD ciphers use MACs=$CTR_MAC; QUIET_LOAD=$QUIET_LOAD (wait up to ${QUIET_WAIT}s before a run while the load is higher)"
} > "$OUT/meta.md"

echo "run,time,rtt_ms,rate_mbit,mtu,size_bytes,cipher,mac,mode,client,server,rep,status,mb_s,data_s,wall_s,setup_s,client_user_s,client_sys_s,client_rss_kb,server_user_s,server_sys_s,server_rss_kb,load1,client_build,server_build" > "$CSV"

# ---------------------------------------------------------------------------
# one measurement

src=$work/src
bl_log "making $(bl_human "$BYTES") of random data in $src"
head -c "$BYTES" /dev/urandom > "$src"
src_sha=$(sha256sum < "$src" | cut -d' ' -f1)

n=0
fnum() { awk -v x="$1" 'BEGIN { if (x == "" || x == "?") print ""; else printf "%.3f", x }'; }

# row RTT CIPHER MAC MODE CLIENT SERVER REP STATUS MB_S DATA WALL SETUP CU CS CR SU SS SR LOAD
row() {
	local IFS=,
	echo "$n,$(date +%H:%M:%S),$1,$RATE,$MTU,$BYTES,$2,$3,$4,$5,$6,$7,$8,$9,${10},${11},${12},${13},${14},${15},${16},${17},${18},${19},${20},${21}" >> "$CSV"
}

# A burst of load from elsewhere makes figures meaningless: let it pass.
wait_quiet() {
	local i l
	[ -n "$QUIET_LOAD" ] || return 0
	for ((i = 0; i < QUIET_WAIT; i += 5)); do
		l=$(cut -d' ' -f1 /proc/loadavg)
		awk -v l="$l" -v q="$QUIET_LOAD" 'BEGIN { exit !(l <= q) }' && break
		[ $i = 0 ] && echo "bench: load $l > QUIET_LOAD=$QUIET_LOAD, waiting (at most ${QUIET_WAIT}s)"
		sleep 5
	done
	[ $i = 0 ] || echo "bench: waited ${i}s for the load to drop (now $(cut -d' ' -f1 /proc/loadavg))"
}

# Per transfer: generous, but a stuck transfer must not hang the run: a
# quarter of what a 2 MiB window allows, or of the path, whichever is less.
transfer_timeout() {
	local rtt=$1
	if [ -n "$TIMEOUT" ]; then echo "$TIMEOUT"; return; fi
	awk -v rtt="$rtt" -v rate="$RATE" -v b="$BYTES" 'BEGIN {
		rt = rtt / 1000; if (rt < 0.002) rt = 0.002
		v = 2 * 1048576 / rt; l = rate * 1e6 / 8; if (l < v) v = l
		printf "%d", 60 + b / (v / 4) }'
}

# series_ss MODE PORT SECONDS FILE: the sender's TCP state of the
# connection to or from PORT every 200 ms ("@ ns" lines, then ss -tin's),
# for at most SECONDS or until $work/ss-stop exists (series_ss_stop): the
# loop runs under netpath exec, which a kill of this function's subshell
# does not reach (29 such loops, each bounded by its run's timeout, were
# found polling at once, load 7-10, before this)
series_ss() {
	local side=client
	case $1 in *-down) side=server ;; esac
	"$NP" exec "$side" --name "$NAME" -- bash -c '
	    for ((i = 0; i < $2 * 5; i++)); do
		[ -e "$3" ] && break
		echo "@ $(date +%s%N)"
		ss -tinH "( sport = :$1 or dport = :$1 )"
		sleep 0.2
	    done' series_ss "$2" "$3" "$work/ss-stop" > "$4" 2>&1
}
# series_ss_stop: the sampler ends (within 0.2 s) and is waited for
series_ss_stop() {
	[ -n "$ss_pid" ] || return 0
	touch "$work/ss-stop"
	wait "$ss_pid" 2>/dev/null || true
	ss_pid=
}

# measure RTT CIPHER MODE PAIR REP: one transfer (or, for MODE setup, one
# "ssh host true"), with its CSV row.
measure() {
	local rtt=$1 cipher=$2 mode=$3 pair=$4 rep=$5
	local ct=${pair%-*} st=${pair#*-} tree opts mac to rc=0 status=OK
	local dst times=$work/times cl=$work/client.usage load first last
	local data= wall= setup= mbs= cu= cs= cr= su='?' ss='?' sr='?' got sha
	local -a cmd copts
	n=$((n + 1))
	tree=$work/tree-$ct
	copts=(-F "$work/ssh_config-$st" -o "Ciphers=$cipher")
	case $cipher in
	*gcm*|chacha20*) mac=implicit ;;
	*) mac=$CTR_MAC; copts+=(-o "MACs=$CTR_MAC") ;;
	esac
	if [ "$ct" = stock ]; then opts=$STOCK_OPTS; else opts=$HPN_OPTS; fi
	# shellcheck disable=SC2206
	[ -n "$opts" ] && copts+=($opts)
	[ "$TIMESERIES" = 1 ] && [ "$mode" != setup ] && copts+=(-v)	# after -q
	to=$(transfer_timeout "$rtt")
	case $mode in *-up) dst=$work/dst-up ;; *) dst=$work/dst-down ;; esac
	rm -f "$dst" "$times" "$cl" "$work/rusage-$st"/session.*
	wait_quiet
	cmd=(timeout -k 5 "$to")
	case $mode in
	setup)	cmd+=("$tree/ssh" "${copts[@]}" bench true) ;;
	pipe-up) cmd+=("$tree/ssh" "${copts[@]}" bench \
		    "exec $work/meter recv -o $dst -t $times") ;;
	pipe-down) cmd+=("$tree/ssh" "${copts[@]}" bench "exec cat $src") ;;
	scp-up)	cmd+=("$tree/scp" -q -S "$tree/ssh" "${copts[@]}" "$src" "bench:$dst") ;;
	scp-down) cmd+=("$tree/scp" -q -S "$tree/ssh" "${copts[@]}" "bench:$src" "$dst") ;;
	sftp-up|sftp-down)
		if [ "$mode" = sftp-up ]; then
			echo "put $src $dst" > "$work/batch"
		else
			echo "get $src $dst" > "$work/batch"
		fi
		cmd+=("$tree/sftp" -q -S "$tree/ssh" "${copts[@]}" -b "$work/batch" bench) ;;
	esac
	load=$(cut -d' ' -f1 /proc/loadavg)
	series=
	if [ "$TIMESERIES" = 1 ] && [ "$mode" != setup ]; then
		series=$OUT/series/run-$n-$mode-$pair
		mkdir -p "$OUT/series"
		rm -f "$work/ss-stop"
		series_ss "$mode" "${PORT[$st]}" "$to" "$series.ss" &
		ss_pid=$!
	fi
	case $mode in
	scp-*|sftp-*)
		METER_SERIES=${series:+$series.bytes} \
		    "$work/meter" watch "$dst" "$BYTES" "$to" "$times" &
		watch_pid=$! ;;
	pipe-up|pipe-down)
		# meter recv notes the times; a watcher only for the series
		if [ -n "$series" ]; then
			METER_SERIES=$series.bytes "$work/meter" watch "$dst" \
			    "$BYTES" "$to" "$work/times-series" &
			watch_pid=$!
		fi ;;
	esac
	# In the background, so that a TERM is handled at once (bash runs
	# traps only between foreground commands).
	case $mode in
	pipe-up)
		cat "$src" | "$NP" exec client --name "$NAME" -- \
		    "$work/meter" run "$cl" -- "${cmd[@]}" > "$work/client.out" 2>&1 & ;;
	pipe-down)
		"$NP" exec client --name "$NAME" -- "$work/meter" run "$cl" -- \
		    "${cmd[@]}" 2> "$work/client.out" < /dev/null |
		    "$work/meter" recv -o "$dst" -t "$times" & ;;
	*)
		"$NP" exec client --name "$NAME" -- "$work/meter" run "$cl" -- \
		    "${cmd[@]}" < /dev/null > "$work/client.out" 2>&1 & ;;
	esac
	fg_pid=$!
	wait "$fg_pid" || rc=$?
	fg_pid=
	if [ -n "$watch_pid" ]; then
		# Done or failed: the watcher has seen the end, or never will.
		for _ in $(seq 1 30); do kill -0 "$watch_pid" 2>/dev/null || break; sleep 0.1; done
		kill "$watch_pid" 2>/dev/null || true
		wait "$watch_pid" 2>/dev/null || true
		watch_pid=
	fi
	series_ss_stop
	if [ -n "$series" ]; then
		cp "$work/client.out" "$series.client.log" 2>/dev/null || true
		cp "$work/sshd-${PORT[$st]}.log" "$series.sshd.log" 2>/dev/null || true
		: > "$work/sshd-${PORT[$st]}.log"	# sshd appends (-E)
	fi
	read -r su ss sr < <(bl_session_usage "$work" "$st") || true
	if [ -s "$cl" ]; then
		read -r first last crc cu cs cr < "$cl"
		wall=$(awk -v a="$first" -v b="$last" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
		[ "$crc" = 0 ] || { [ "$crc" = 124 ] && status="FAIL:timeout(${to}s)" || status="FAIL:exit$crc"; }
	else
		status="FAIL:no-client-figures(rc$rc)"
	fi
	[ "$status" = OK ] && [ $rc -ne 0 ] && status="FAIL:rc$rc"
	if [ "$mode" != setup ]; then
		got=$(stat -c %s "$dst" 2>/dev/null || echo 0)
		if [ "$status" = OK ] && [ "$got" != "$BYTES" ]; then
			status="FAIL:size($got)"
		elif [ "$status" != OK ]; then
			status="$status:got-$((got / 1048576))MiB"
		fi
		if [ "$status" = OK ]; then
			sha=$(sha256sum < "$dst" | cut -d' ' -f1)
			[ "$sha" = "$src_sha" ] || status="FAIL:sha256"
		fi
		if [ "$status" = OK ]; then
			if [ -s "$times" ] && read -r first last _ tu ts < "$times" &&
			    [ "$first" != 0 ] && [ "$last" != 0 ] && [ "$last" -gt "$first" ]; then
				data=$(awk -v a="$first" -v b="$last" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
				mbs=$(awk -v d="$data" -v b="$BYTES" 'BEGIN { printf "%.2f", b / d / 1e6 }')
				setup=$(awk -v w="$wall" -v d="$data" 'BEGIN { printf "%.3f", w - d }')
				# pipe-up: meter recv ran in the session; not sshd's work
				if [ "$mode" = pipe-up ] && [ "$su" != "?" ]; then
					su=$(awk -v a="$su" -v b="$tu" 'BEGIN { printf "%.3f", a - b }')
					ss=$(awk -v a="$ss" -v b="$ts" 'BEGIN { printf "%.3f", a - b }')
				fi
			else
				status="FAIL:no-timing"
			fi
		fi
	else
		setup=$wall
	fi
	rm -f "$dst"
	[ "$su" = "?" ] && su= ss= sr=
	row "$rtt" "$cipher" "$mac" "$mode" "$ct" "$st" "$rep" "$status" "$mbs" \
	    "$data" "$wall" "$setup" "$cu" "$cs" "$cr" "$su" "$ss" "$sr" "$load" \
	    "${BUILD[$ct]}" "${BUILD[$st]}"
	if [ "$status" = OK ]; then
		if [ "$mode" = setup ]; then
			printf "[%4d/%d] rtt %3s %-30s %-9s %-11s rep %d: set-up %.2f s; load %s\n" \
			    "$n" "$total" "$rtt" "$cipher" "$mode" "$ct>$st" "$rep" "$wall" "$load"
		else
			printf "[%4d/%d] rtt %3s %-30s %-9s %-11s rep %d: %7.1f MB/s (data %.2f s + set-up %.2f s) cpu client %s+%s s server %s+%s s; load %s\n" \
			    "$n" "$total" "$rtt" "$cipher" "$mode" "$ct>$st" "$rep" "$mbs" "$data" "$setup" \
			    "$cu" "$cs" "${su:-?}" "${ss:-?}" "$load"
		fi
	else
		printf "[%4d/%d] rtt %3s %-30s %-9s %-11s rep %d: %s; load %s\n" \
		    "$n" "$total" "$rtt" "$cipher" "$mode" "$ct>$st" "$rep" "$status" "$load"
		sed 's/^/    client: /' "$work/client.out" | head -n 5
		# Keep what may tell why.
		{
			echo "== run $n: rtt $rtt $cipher $mode $ct>$st rep $rep: $status"
			echo "== client output"; cat "$work/client.out"
			echo "== client tree usage: $(cat "$cl" 2>/dev/null)"
			for p in $TAGS; do
				echo "== sshd log ($p server), last lines"
				tail -n 20 "$work/sshd-${PORT[$p]}.log" 2>/dev/null
			done
		} > "$OUT/fail-$n.log" 2>&1
	fi
}

# iperf3 RTT REP: the same amount of data over one TCP connection.
iperf() {
	local rtt=$1 rep=$2 to load json bps status=OK mbs= data= i saddr
	n=$((n + 1))
	wait_quiet
	to=$(transfer_timeout 0)
	saddr=$("$NP" addr server --name "$NAME")
	"$NP" exec server --name "$NAME" -- iperf3 -s -1 -B "$saddr" -p "$IPERF_PORT" \
	    > "$work/iperf3-server.log" 2>&1 &
	iperf_pid=$!
	for ((i = 0; i < 50; i++)); do
		"$NP" exec server --name "$NAME" -- ss -Hltn "sport = :$IPERF_PORT" | grep -q . && break
		sleep 0.1
	done
	load=$(cut -d' ' -f1 /proc/loadavg)
	"$NP" exec client --name "$NAME" -- timeout -k 5 "$to" iperf3 -c "$saddr" \
	    -p "$IPERF_PORT" -n "$BYTES" -J > "$work/iperf3.json" 2>&1 &
	fg_pid=$!
	wait "$fg_pid" || status=FAIL:iperf3
	fg_pid=
	json=$(cat "$work/iperf3.json")
	kill "$iperf_pid" 2>/dev/null || true
	wait "$iperf_pid" 2>/dev/null || true
	iperf_pid=
	echo "$json" > "$OUT/iperf3-rtt$rtt-rep$rep.json"
	bps=$(jq -r '.end.sum_received.bits_per_second // 0' <<<"$json" 2>/dev/null || echo 0)
	data=$(jq -r '.end.sum_received.seconds // 0' <<<"$json" 2>/dev/null || echo 0)
	if [ "$status" = OK ] && awk -v b="$bps" 'BEGIN { exit !(b > 0) }'; then
		mbs=$(awk -v b="$bps" 'BEGIN { printf "%.2f", b / 8e6 }')
		printf "[%4d/%d] rtt %3s iperf3 -n %s rep %d: %7.1f MB/s (%.0f Mbit/s); load %s\n" \
		    "$n" "$total" "$rtt" "$SIZE" "$rep" "$mbs" "$(awk -v b="$bps" 'BEGIN { print b / 1e6 }')" "$load"
	else
		status=${status/OK/FAIL:iperf3}
		printf "[%4d/%d] rtt %3s iperf3 rep %d: %s; load %s\n" "$n" "$total" "$rtt" "$rep" "$status" "$load"
	fi
	row "$rtt" - - tcp iperf3 iperf3 "$rep" "$status" "$mbs" "$data" "" "" "" "" "" "" "" "" "$load" - -
}

# ---------------------------------------------------------------------------
# the runs

t_start=$SECONDS
for rtt in $RTTS; do
	echo
	echo "bench: ---- RTT $rtt ms, $RATE Mbit/s, MTU $MTU ----"
	# shellcheck disable=SC2086
	"$NP" up --name "$NAME" --rtt "$rtt" --rate "$RATE" --mtu "$MTU" $NETPATH_OPTS
	path_up=1
	if [ "$VALIDATE" = 1 ]; then
		if "$NP" validate --name "$NAME" > "$OUT/validate-rtt$rtt.txt" 2>&1; then
			v=OK
		else
			v="FAILED (results at this RTT are suspect)"
		fi
		sed 's/^/  /' "$OUT/validate-rtt$rtt.txt"
		echo "bench: path validation at RTT $rtt ms: $v"
		grep '^RESULT' "$OUT/validate-rtt$rtt.txt" | sed "s/^RESULT/- validation at RTT $rtt ms ($v):/" >> "$OUT/meta.md" || true
	fi
	for t in $TAGS; do
		bl_start_server "$work" "$t" "$work/tree-$t" "${PORT[$t]}" "$NAME" ||
		    bl_die "$t sshd did not start"
	done
	for ((rep = 1; rep <= REPS; rep++)); do
		echo "bench: uptime before rep $rep at RTT $rtt: $(uptime)"
		iperf "$rtt" "$rep"
		for cipher in $CIPHERS; do
			for pair in $PAIRS; do
				measure "$rtt" "$cipher" setup "$pair" "$rep"
			done
			for mode in $MODES; do
				for pair in $PAIRS; do
					measure "$rtt" "$cipher" "$mode" "$pair" "$rep"
				done
			done
		done
	done
	for t in $TAGS; do
		bl_stop_server "$work" "${PORT[$t]}"
	done
	"$NP" down --name "$NAME"
	path_up=0
done

echo
echo "bench: $n runs in $(((SECONDS - t_start) / 60)) min $(((SECONDS - t_start) % 60)) s; load now $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- duration: $(((SECONDS - t_start) / 60)) min for $n runs; load at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/meta.md"
"$TOP/bench/report.sh" "$OUT"
fails=$(awk -F, 'NR > 1 && $13 != "OK"' "$CSV" | wc -l)
if [ "$fails" != 0 ]; then
	# The binaries that failed, for whoever looks into it.
	for t in $TAGS; do
		mkdir -p "$OUT/bin-$t-${BUILD[$t]}"
		cp -p "$work/tree-$t"/* "$OUT/bin-$t-${BUILD[$t]}/"
	done
	echo "bench: $fails FAILED runs (see $OUT/results.md, $OUT/fail-*.log; binaries kept in $OUT/bin-*)"
fi
