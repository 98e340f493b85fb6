#!/bin/bash
# bench/cpu-bench.sh - CPU-bound transfers on loopback: what each cipher
# costs when the network is not the limit.  Run as root; `make bench-cpu`
# calls it.  See bench/README.md.
#
#   SIZE=1G  REPS=5  MODES="pipe-up pipe-down"
#   CASES="ref:relay stock:gcm hpn:gcm stock:chacha hpn:chacha"; CASES=all:
#         ref:relay stock:gcm hpn:gcm stock:chacha hpn:chacha stock:ctr128
#         hpn:ctr128 hpn:ctr128-mt stock:ctr256 hpn:ctr256 hpn:ctr256-mt
#         hpn:none hpn:none-nomac
#   (ref:relay: the same source, TCP and sink with `meter relay` in place
#   of ssh and sshd: what the machine moves through the pipeline with no
#   SSH at all, the ceiling for every case)
#   COUNT=1: first bench/cpu-count.sh (instructions, copies, system calls
#   and context switches per GiB, counted; its variables apply), in OUT/count
#   LIMITS=1: the machine's limits in the same run: `openssl speed -evp` of
#   each cipher (16 KiB blocks, one core), TCP over loopback (iperf3 -n
#   SIZE), a plain pipe (cat SRC | meter recv), LIMIT_REPS (3) times each
#   CTR_MAC=umac-64-etm@openssh.com (MAC of the CTR ciphers and of none)
#   MT=1 (MTAESThreads of both ends in the -mt cases)
#   HPN_TREE STOCK_TREE  OUT=build/bench/cpu-<timestamp>
#   QUIET_IDLE=90 QUIET_WAIT=120: before each run wait (at most QUIET_WAIT s)
#   until the CPUs are QUIET_IDLE % idle ("" = never wait)
#   RTT= (default: loopback) or RTT=50 [RATE=1000]: the same over the
#   emulated path (bench/netpath) instead, to see the CPU per GB there
#   OPENSSL_ia32cap="~0x200000200000000" (passed to both ends): as on a CPU
#   without AES-NI and PCLMULQDQ
#
# Both ends run in one network namespace made for the run (only its
# loopback: nothing else can reach it or be reached), or with RTT in the two
# namespaces of bench/netpath; the hpn and the stock sshd each on its own
# port.  Client and server processes run under
# `meter run -T`, which reads every thread's CPU time from /proc, so the
# main thread (which does the packet work) is told apart from the AES-CTR
# worker threads.  Every transfer is checked by SHA-256.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/bench/lib.sh"

SIZE=${SIZE:-1G}
REPS=${REPS:-5}
MODES=${MODES:-"pipe-up pipe-down"}
CASES=${CASES:-"ref:relay stock:gcm hpn:gcm stock:chacha hpn:chacha"}
[ "$CASES" = all ] && CASES="ref:relay stock:gcm hpn:gcm stock:chacha hpn:chacha stock:ctr128 hpn:ctr128 hpn:ctr128-mt stock:ctr256 hpn:ctr256 hpn:ctr256-mt hpn:none hpn:none-nomac"
COUNT=${COUNT:-1}
LIMITS=${LIMITS:-1}
LIMIT_REPS=${LIMIT_REPS:-3}
CTR_MAC=${CTR_MAC:-umac-64-etm@openssh.com}
MT=${MT:-1}
OSV=$(sed -n 's/^OPENSSH_VERSION=//p' "$TOP/upstream/openssh.mk")
HPN_TREE=${HPN_TREE:-$TOP/build/hpn/openssh-$OSV}
STOCK_TREE=${STOCK_TREE:-$TOP/build/stock/openssh-$OSV}
OUT=${OUT:-$TOP/build/bench/cpu-$(date +%Y%m%d-%H%M%S)}
QUIET_IDLE=${QUIET_IDLE-90}
QUIET_WAIT=${QUIET_WAIT:-120}
NS=hpncpu
RTT=${RTT:-}
RATE=${RATE:-1000}
declare -A PORT=([hpn]=2211 [stock]=2212 [hpnmt]=2213 [relay]=2214 [iperf]=2215)

[ "$(id -u)" -eq 0 ] || bl_die "run as root (a network namespace, sshd)"
[[ $REPS =~ ^[0-9]+$ ]] && [ "$REPS" -ge 1 ] && [ "$REPS" -le 50 ] || bl_die "REPS: 1-50"
[[ $MT =~ ^[0-9]+$ ]] && [ "$MT" -ge 1 ] && [ "$MT" -le 64 ] || bl_die "MT: 1-64"
[[ $LIMIT_REPS =~ ^[0-9]+$ ]] && [ "$LIMIT_REPS" -ge 1 ] && [ "$LIMIT_REPS" -le 20 ] || bl_die "LIMIT_REPS: 1-20"
case $COUNT$LIMITS in [01][01]) ;; *) bl_die "COUNT, LIMITS: 0 or 1" ;; esac
BYTES=$(bl_bytes "$SIZE") || bl_die "SIZE: e.g. 1G, 256M"
[ "$BYTES" -ge 1048576 ] || bl_die "SIZE: at least 1M"
[ -z "$RTT" ] || { [[ $RTT =~ ^[0-9]+$ ]] && [[ $RATE =~ ^[0-9]+$ ]]; } || bl_die "RTT, RATE: integers (ms, Mbit/s)"
for m in $MODES; do
	case $m in pipe-up|pipe-down) ;; *) bl_die "MODES: pipe-up, pipe-down, not '$m'" ;; esac
done

# case -> "server tree cipher mac extra-client-options"; hpnmt: the hpn
# sshd with MTAESThreads $MT (the -mt cases ask for the threads on both
# ends; the plain hpn cases get the automatic count: none below 3 CPUs)
case_spec() {
	local t=${1%%:*} c=${1#*:}
	[ "$1" = ref:relay ] && { echo "relay relay none none"; return 0; }
	case $t in hpn|stock) ;; *) return 1 ;; esac
	case $c in
	gcm)	echo "$t $t aes128-gcm@openssh.com implicit" ;;
	chacha)	echo "$t $t chacha20-poly1305@openssh.com implicit" ;;
	ctr128)	echo "$t $t aes128-ctr $CTR_MAC" ;;
	ctr256)	echo "$t $t aes256-ctr $CTR_MAC" ;;
	ctr128-mt) [ "$t" = hpn ] && echo "hpnmt $t aes128-ctr $CTR_MAC -oMTAESThreads=$MT" ;;
	ctr256-mt) [ "$t" = hpn ] && echo "hpnmt $t aes256-ctr $CTR_MAC -oMTAESThreads=$MT" ;;
	none)	[ "$t" = hpn ] && echo "$t $t aes128-gcm@openssh.com $CTR_MAC -oNoneEnabled=yes -oNoneSwitch=yes" ;;
	none-nomac) [ "$t" = hpn ] && echo "$t $t aes128-gcm@openssh.com none -oNoneEnabled=yes -oNoneSwitch=yes -oNoneMacEnabled=yes" ;;
	*)	return 1 ;;
	esac
}
for c in $CASES; do
	case_spec "$c" >/dev/null || bl_die "CASES: unknown case '$c' (tree:cipher, e.g. hpn:ctr128, stock:gcm)"
done
# per transfer: generous (10 MB/s), but bounded
TO=$((120 + BYTES / 10000000))
avail=$(df -k --output=avail /dev/shm | tail -n 1)
[ $((avail * 1024)) -gt $((BYTES * 3)) ] || bl_die "/dev/shm has too little room for 3 x $SIZE"
"$TOP/scripts/deps.sh" check bench

work=$(mktemp -d /dev/shm/hpncpu.XXXXXX)
chmod 755 "$work"
fg_pid= ns_up=0
exec 3>&1 4>&2
cleanup() {
	local rc=$? p
	trap - EXIT INT TERM
	trap '' PIPE
	exec 1>&3 2>&4
	[ -n "$fg_pid" ] && kill "$fg_pid" 2>/dev/null
	tsshd_stop "$work" "${PORT[hpn]}" 2>/dev/null || true
	tsshd_stop "$work" "${PORT[stock]}" 2>/dev/null || true
	tsshd_stop "$work" "${PORT[hpnmt]}" 2>/dev/null || true
	if [ "$ns_up" = 1 ] && [ -n "$RTT" ]; then
		"$NP" down --name "$NS" || true
	elif [ "$ns_up" = 1 ]; then
		# whatever is still inside (a stuck session) ends by its PID
		for p in $(ip netns pids "$NS" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
		ip netns del "$NS" 2>/dev/null || true
	fi
	rm -rf "$work"
	[ $rc -ne 0 ] && bl_log "stopped (status $rc); partial results in $OUT"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ -n "$RTT" ]; then
	# netpath cleans up what a crashed run left, and validates nothing here
	bl_netpath_snapshot "$work/netpath"
	ns_up=1
	"$NP" up --name "$NS" --rtt "$RTT" --rate "$RATE" > "$work/netpath.log" 2>&1 ||
		{ cat "$work/netpath.log"; bl_die "netpath up failed"; }
	ADDR=$("$NP" addr server --name "$NS")
	CADDR=$("$NP" addr client --name "$NS")
	CPFX=("$NP" exec client --name "$NS" --)
	SPFX=("$NP" exec server --name "$NS" --)
	WHERE="the emulated path, $RATE Mbit/s, $RTT ms RTT (bench/netpath)"
else
	# A namespace of ours left by a crashed run: end what is in it, remove it.
	if ip netns list | grep -qw "^$NS"; then
		for p in $(ip netns pids "$NS" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
		ip netns del "$NS"
	fi
	ip netns add "$NS"
	ns_up=1
	ip -n "$NS" link set lo up
	ADDR=127.0.0.1 CADDR=127.0.0.1
	CPFX=(ip netns exec "$NS")
	SPFX=(ip netns exec "$NS")
	WHERE="loopback (one network namespace)"
fi

mkdir -p "$OUT"
CSV=$OUT/results.csv
LOG=$OUT/run.log
exec > >(trap '' INT TERM; exec tee -a "$LOG") 2>&1

bl_meter "$work"
bl_snapshot_tree "$HPN_TREE" "$work/tree-hpn"
bl_snapshot_tree "$STOCK_TREE" "$work/tree-stock"
tsshd_setup "$work" >/dev/null
for s in hpn stock hpnmt; do
	t=${s%mt}
	mkdir -p "$work/usage-$s"
	cat > "$work/session-$s" <<-EOF
	#!/bin/sh
	exec $work/meter run -T $work/usage-$s/threads.\$\$ $work/usage-$s/session.\$\$ -- $work/tree-$t/sshd-session "\$@"
	EOF
	chmod 755 "$work/session-$s"
	case $s in
	hpn)	extra=$'NoneEnabled yes\nNoneMacEnabled yes' ;;
	hpnmt)	extra="MTAESThreads $MT" ;;
	*)	extra= ;;
	esac
	TSSHD_SESSION_PATH=$work/session-$s TSSHD_EXTRA=$extra \
	    tsshd_start "$work" "$work/tree-$t" "${PORT[$s]}" "$ADDR" "${SPFX[@]}" ||
	    bl_die "$s sshd did not start"
	tsshd_client_config "$work" "${PORT[$s]}" "$ADDR" > "$work/ssh_config-$s"
done

nc=$(wc -w <<<"$CASES") nm=$(wc -w <<<"$MODES")
total=$((nc * nm * REPS))
echo "bench-cpu: transfers over $WHERE, $(date -Is) on $(hostname)"
echo "bench-cpu: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "bench-cpu: SIZE=$SIZE ($BYTES bytes of random data on tmpfs) REPS=$REPS MODES=\"$MODES\" CTR_MAC=$CTR_MAC"
echo "bench-cpu: hpn: $("$work/tree-hpn/ssh" -V 2>&1); stock: $("$work/tree-stock/ssh" -V 2>&1)"
echo "bench-cpu: CASES=\"$CASES\""
echo "bench-cpu: $total runs, results in $OUT"
# OPENSSL_ia32cap (e.g. "~0x200000200000000": no AES-NI, no PCLMULQDQ)
# reaches both ends: how the ciphers fare on a CPU without AES instructions
[ -z "${OPENSSL_ia32cap:-}" ] || echo "bench-cpu: OPENSSL_ia32cap=$OPENSSL_ia32cap (both ends)"
{
	echo "- date: $(date -Is), host $(hostname), $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), kernel $(uname -r)"
	echo "- load at start: $(cut -d' ' -f1-3 /proc/loadavg); QUIET_IDLE=$QUIET_IDLE %"
	echo "- over $WHERE; $(bl_human "$BYTES") of random data from and to tmpfs; REPS $REPS"
	echo "- hpn: \`$("$work/tree-hpn/ssh" -V 2>&1)\`; stock: \`$("$work/tree-stock/ssh" -V 2>&1)\`; CTR and none MAC: $CTR_MAC"
	[ -z "${OPENSSL_ia32cap:-}" ] || echo "- OPENSSL_ia32cap=$OPENSSL_ia32cap in both ends' environment"
} > "$OUT/meta.md"
echo "run,time,case,tree,cipher,mac,mode,size_bytes,rep,status,mb_s,data_s,client_main_s,client_workers_s,server_main_s,server_workers_s,load1" > "$CSV"

# The counts first, in a namespace and with servers of their own.
if [ "$COUNT" = 1 ]; then
	HPN_TREE=$HPN_TREE STOCK_TREE=$STOCK_TREE OUT=$OUT/count "$TOP/bench/cpu-count.sh" ||
	    bl_die "bench/cpu-count.sh failed"
fi

src=$work/src
bl_log "making $(bl_human "$BYTES") of random data"
head -c "$BYTES" /dev/urandom > "$src"
src_sha=$(sha256sum < "$src" | cut -d' ' -f1)

# CPU-bound runs back to back keep the load average up: wait instead
# (bounded) until the CPUs were QUIET_IDLE % idle over half a second.
idle_pct() {
	local a b
	a=($(head -n 1 /proc/stat)); sleep 0.5; b=($(head -n 1 /proc/stat))
	awk -v i1="${a[4]}" -v i2="${b[4]}" -v t1="$(IFS=+; echo "$((${a[*]:1}))")" \
	    -v t2="$(IFS=+; echo "$((${b[*]:1}))")" \
	    'BEGIN { d = t2 - t1; printf "%d", (d > 0 ? 100 * (i2 - i1) / d : 100) }'
}
wait_quiet() {
	local i p
	[ -n "$QUIET_IDLE" ] || return 0
	for ((i = 0; i < QUIET_WAIT * 2; i++)); do
		p=$(idle_pct)
		[ "$p" -ge "$QUIET_IDLE" ] && return 0
		[ $i = 0 ] && echo "bench-cpu: CPUs ${p}% idle < QUIET_IDLE=$QUIET_IDLE%, waiting (at most ${QUIET_WAIT}s)"
	done
}

# threads FILE... COMM: "main others" CPU seconds summed over COMM's processes
threads() {
	local comm=${!#}
	awk -v c="$comm" '$2 == c { m += $3; o += $4 } END { printf "%.2f %.2f\n", m, o }' "${@:1:$#-1}" 2>/dev/null ||
	    echo "? ?"
}

# run_relay MODE DST TIMES: the pipeline of a pipe-MODE transfer with
# `meter relay` in place of ssh and sshd; the listener (and the sink) on
# the receiving side.  CPU of the relays in relay-{c,s}.threads.
run_relay() {
	local mode=$1 dst=$2 times=$3 i lpid rc=1 addr=$ADDR
	local -a rx tx
	local rxs=s txs=c
	rm -f "$work"/relay-?.threads "$work"/relay-?.usage
	if [ "$mode" = pipe-up ]; then
		rx=("${SPFX[@]}") tx=("${CPFX[@]}")
	else
		rx=("${CPFX[@]}") tx=("${SPFX[@]}") rxs=c txs=s addr=$CADDR
	fi
	"${rx[@]}" "$work/meter" run -T "$work/relay-$rxs.threads" "$work/relay-$rxs.usage" -- \
	    timeout -k 5 "$TO" "$work/meter" relay -l "$addr" "${PORT[relay]}" 2> "$work/client.out" |
	    "$work/meter" recv -o "$dst" -t "$times" &
	lpid=$!
	fg_pid=$lpid
	# connect once the listener is up (bounded; a refused try reads nothing)
	for ((i = 0; i < 50; i++)); do
		if cat "$src" | "${tx[@]}" "$work/meter" run -T "$work/relay-$txs.threads" \
		    "$work/relay-$txs.usage" -- timeout -k 5 "$TO" "$work/meter" relay \
		    "$addr" "${PORT[relay]}" 2>> "$work/client.out"; then
			rc=0
			break
		fi
		grep -q "connect:" "$work/client.out" || break
		sleep 0.1
	done
	[ $rc -eq 0 ] || kill "$lpid" 2>/dev/null
	wait "$lpid" || rc=$?
	fg_pid=
	return $rc
}

# The machine's own limits, in the same run: the cipher alone on one core,
# TCP over the same loopback (or path), a plain pipe from the same source
# into the same sink.  Medians of LIMIT_REPS runs, in limits.md.
limits() {
	local c name i v mbs pid
	local -a speed tcp pipe
	local ciphers=
	for cs in $CASES; do
		case ${cs#*:} in
		gcm|none*) ciphers="$ciphers aes-128-gcm" ;;
		chacha) ciphers="$ciphers chacha20-poly1305" ;;
		ctr128*) ciphers="$ciphers aes-128-ctr" ;;
		ctr256*) ciphers="$ciphers aes-256-ctr" ;;
		esac
	done
	ciphers=$(tr ' ' '\n' <<<"$ciphers" | awk 'NF && !s[$0]++')
	{
		echo "| limit | MB/s median (min–max) | runs |"
		echo "|---|---|---|"
	} > "$OUT/limits.md"
	for c in $ciphers; do
		speed=()
		for ((i = 0; i < LIMIT_REPS; i++)); do
			v=$(openssl speed -evp "$c" -seconds 2 -bytes 16384 -mr 2>/dev/null |
			    awk -F: '/^\+F:/ { printf "%.1f", $4 / 1e6 }')
			[ -n "$v" ] && speed+=("$v")
		done
		[ ${#speed[@]} -gt 0 ] || { bl_log "openssl speed -evp $c gave nothing"; continue; }
		echo "| openssl speed -evp $c (16 KiB blocks, one core) | $(bl_median "${speed[@]}") ($(printf '%s\n' "${speed[@]}" | sort -n | head -n 1)–$(printf '%s\n' "${speed[@]}" | sort -n | tail -n 1)) | ${#speed[@]} |" >> "$OUT/limits.md"
	done
	tcp=()
	for ((i = 0; i < LIMIT_REPS; i++)); do
		"${SPFX[@]}" timeout -k 5 120 iperf3 -s -1 -B "$ADDR" -p "${PORT[iperf]}" > /dev/null 2>&1 &
		pid=$!
		fg_pid=$pid
		v=
		for ((j = 0; j < 50; j++)); do
			v=$("${CPFX[@]}" timeout -k 5 120 iperf3 -c "$ADDR" -p "${PORT[iperf]}" -n "$BYTES" -J 2>/dev/null |
			    python3 -c 'import json,sys; print("%.1f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 8e6))' 2>/dev/null) && break
			sleep 0.1
		done
		wait "$pid" 2>/dev/null || true
		fg_pid=
		[ -n "$v" ] && tcp+=("$v")
	done
	[ ${#tcp[@]} -gt 0 ] &&
	    echo "| TCP over $WHERE, one iperf3 connection, $(bl_human "$BYTES") | $(bl_median "${tcp[@]}") ($(printf '%s\n' "${tcp[@]}" | sort -n | head -n 1)–$(printf '%s\n' "${tcp[@]}" | sort -n | tail -n 1)) | ${#tcp[@]} |" >> "$OUT/limits.md"
	pipe=()
	for ((i = 0; i < LIMIT_REPS; i++)); do
		rm -f "$work/times"
		cat "$src" | "$work/meter" recv -o /dev/null -t "$work/times" || continue
		v=$(awk -v b="$BYTES" '$2 > $1 { printf "%.1f", b / (($2 - $1) / 1e9) / 1e6 }' "$work/times")
		[ -n "$v" ] && pipe+=("$v")
	done
	[ ${#pipe[@]} -gt 0 ] &&
	    echo "| a plain pipe: cat SRC \| meter recv (the runs' own source and sink) | $(bl_median "${pipe[@]}") ($(printf '%s\n' "${pipe[@]}" | sort -n | head -n 1)–$(printf '%s\n' "${pipe[@]}" | sort -n | tail -n 1)) | ${#pipe[@]} |" >> "$OUT/limits.md"
	echo "(load $(cut -d' ' -f1-3 /proc/loadavg) after these)" >> "$OUT/limits.md"
}
if [ "$LIMITS" = 1 ]; then
	bl_log "the machine's limits: openssl speed, iperf3, a plain pipe"
	limits
	cat "$OUT/limits.md"
fi

n=0
measure() {
	local cs=$1 mode=$2 rep=$3 sv t cipher mac extra status=OK rc=0
	local dst=$work/dst times=$work/times ct=$work/client.threads cl=$work/client.usage
	local mbs= data= cm cw sm sw load i f first last got
	local -a copts files
	read -r sv t cipher mac extra < <(case_spec "$cs")
	n=$((n + 1))
	rm -f "$dst" "$times" "$ct" "$cl" "$work/usage-$sv"/*
	wait_quiet
	load=$(cut -d' ' -f1 /proc/loadavg)
	if [ "$sv" = relay ]; then
		run_relay "$mode" "$dst" "$times" || rc=$?
		read -r cm cw < <(threads "$work/relay-c.threads" meter)
		read -r sm sw < <(threads "$work/relay-s.threads" meter)
	else
		copts=(-F "$work/ssh_config-$sv" -o "Ciphers=$cipher")
		[ "$mac" != implicit ] && [ "$mac" != none ] && copts+=(-o "MACs=$mac")
		# shellcheck disable=SC2206
		[ -n "$extra" ] && copts+=($extra)
		if [ "$mode" = pipe-up ]; then
			cat "$src" | "${CPFX[@]}" "$work/meter" run -T "$ct" "$cl" -- \
			    timeout -k 5 "$TO" "$work/tree-$t/ssh" "${copts[@]}" bench \
			    "exec $work/meter recv -o $dst -t $times" > "$work/client.out" 2>&1 &
		else
			"${CPFX[@]}" "$work/meter" run -T "$ct" "$cl" -- \
			    timeout -k 5 "$TO" "$work/tree-$t/ssh" "${copts[@]}" bench "exec cat $src" \
			    2> "$work/client.out" < /dev/null | "$work/meter" recv -o "$dst" -t "$times" &
		fi
		fg_pid=$!
		wait "$fg_pid" || rc=$?
		fg_pid=
		# the session's figures land when its processes are gone (bounded)
		for ((i = 0; i < 100; i++)); do
			files=()
			for f in "$work/usage-$sv"/threads.*; do
				case $f in *.tmp|*'*') ;; *) files+=("$f") ;; esac
			done
			[ ${#files[@]} -gt 0 ] && break
			sleep 0.1
		done
		read -r cm cw < <(threads "$ct" ssh)
		if [ ${#files[@]} -gt 0 ]; then
			read -r sm sw < <(threads "${files[@]}" sshd-session)
		else
			sm='?' sw='?'
		fi
	fi
	[ $rc -eq 0 ] || status="FAIL:rc$rc"
	got=$(stat -c %s "$dst" 2>/dev/null || echo 0)
	if [ "$status" = OK ] && [ "$got" != "$BYTES" ]; then
		status="FAIL:size($got)"
	fi
	if [ "$status" = OK ] && [ "$(sha256sum < "$dst" | cut -d' ' -f1)" != "$src_sha" ]; then
		status=FAIL:sha256
	fi
	case $cs in
	*none*)	grep -q "UNENCRYPTED" "$work/client.out" || status=${status/OK/FAIL:no-none-switch} ;;
	esac
	if [ "$status" = OK ] && read -r first last _ < "$times" && [ "$last" -gt "$first" ]; then
		data=$(awk -v a="$first" -v b="$last" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
		mbs=$(awk -v d="$data" -v b="$BYTES" 'BEGIN { printf "%.1f", b / d / 1e6 }')
	elif [ "$status" = OK ]; then
		status=FAIL:no-timing
	fi
	echo "$n,$(date +%H:%M:%S),$cs,$t,$cipher,$mac,$mode,$BYTES,$rep,$status,$mbs,$data,$cm,$cw,$sm,$sw,$load" >> "$CSV"
	if [ "$status" = OK ]; then
		printf "[%3d/%d] %-16s %-9s rep %d: %7.1f MB/s; CPU s client main %s workers %s, server main %s workers %s; load %s\n" \
		    "$n" "$total" "$cs" "$mode" "$rep" "$mbs" "$cm" "$cw" "$sm" "$sw" "$load"
	else
		printf "[%3d/%d] %-16s %-9s rep %d: %s; load %s\n" "$n" "$total" "$cs" "$mode" "$rep" "$status" "$load"
		sed 's/^/    client: /' "$work/client.out" | head -n 5
		cp "$work/client.out" "$OUT/fail-$n-client.log" 2>/dev/null || true
		tail -n 30 "$work/sshd-${PORT[$sv]}.log" > "$OUT/fail-$n-sshd.log" 2>/dev/null || true
	fi
	rm -f "$dst"
}

# One unmeasured transfer first: the first run after the data was made
# was seen at a third of the speed of the next ones, whatever the case.
bl_log "warm-up: one unmeasured transfer without SSH"
run_relay pipe-up "$work/dst" "$work/times" > /dev/null 2>&1 ||
    bl_log "warm-up transfer failed (see the ref:relay runs)"
rm -f "$work/dst"

# Repetitions outermost, cases of one mode back to back: drift in the
# host's speed hits every case alike.
for ((rep = 1; rep <= REPS; rep++)); do
	for mode in $MODES; do
		for cs in $CASES; do
			measure "$cs" "$mode" "$rep"
		done
	done
done

"$TOP/bench/cpu-report.sh" "$CSV" > "$OUT/results.md"
{
	echo
	echo "### The machine's limits"
	echo
	[ -r "$OUT/limits.md" ] && cat "$OUT/limits.md"
	if [ -r "$OUT/count/counts.md" ]; then
		echo
		cat "$OUT/count/counts.md"
		echo
		python3 "$TOP/bench/cpu-count.py" targets "$OUT/count/raw.csv" "$CSV"
	fi
} >> "$OUT/results.md"
echo
cat "$OUT/results.md"
echo
echo "bench-cpu: done; $OUT/results.csv, $OUT/results.md"
