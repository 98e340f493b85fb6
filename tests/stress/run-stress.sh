#!/bin/bash
# run-stress.sh TREE [PHASE...]
#
# Fault injection for the HPN build in TREE (its ssh, scp, sftp, sshd...):
#
#   loss        1 % random loss each way on an emulated 1 Gbit/s, 50 ms path:
#               ssh pipe, scp and sftp, up and down, sha256-identical
#   rekey       RekeyLimit 1M during 256 MiB transfers, every cipher: gcm,
#               chacha20, threaded aes128/256-ctr (non-ETM MAC), none, none
#               with the none MAC (loopback)
#   mux         ssh -f and ControlMaster/ControlPersist with the threaded
#               cipher on the 50 ms path: windows grow, data identical; then
#               three 256 MiB sftp downloads on that path
#   kill        kill -9 of scp/sftp (and their ssh) mid-upload, and of sftp
#               mid-download: the server's session ends (no process or
#               thread left), the partial file is short, reput/reget or a
#               re-copy completes it
#   concurrent  20 concurrent 64 MiB transfers to one hpnsshd on the 50 ms
#               path; the server's memory is sampled and must stay bounded
#   malformed   misbehaving peers (tests/stress/malpeer.py, paramiko) against
#               hpnsshd and hpnssh: window overflow, data past the window,
#               zero windows, oversized packets, odd banners, none before
#               authentication, a lying none-switch extension; each must end
#               in a clean disconnect with a clear log line, and hpnsshd
#               must keep serving
#
# Default: all phases.  Needs root (network namespaces, bench/netpath) for
# loss, mux, kill and concurrent; python3-paramiko for malformed.
# Environment: STRESS_MB (256: the large transfer, MiB; others are halves
# and quarters of it), STRESS_DIR (build/stress), STRESS_PORT (42720: the
# first of the 8 ports used), STRESS_NP (hpnst: prefix of the netpath names).
# Everything started is ended by its PID; the paths are torn down on exit.
# Ends with "N passed, M failed"; exits non-zero on any failure.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/lib/sshd.sh"
. "$top/tests/stress/lib.sh"
. "$top/tests/lib/sanitizer.sh"

[ $# -ge 1 ] || { sed -n '2,/^set /p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2; exit 2; }
tree=$(cd "$1" && pwd) || exit 2
shift
phases=${*:-loss rekey mux kill concurrent malformed}
flavour=$(basename "$(dirname "$tree")")	# hpn, asan...
W=${STRESS_DIR:-$top/build/stress}/$flavour
BASE=${STRESS_PORT:-42720}
NPFX=${STRESS_NP:-hpnst}
MB=${STRESS_MB:-256}
NETPATH=$top/bench/netpath/netpath
SADDR=10.201.0.2
PY=/usr/bin/python3
SSH=$tree/ssh SCP=$tree/scp SFTP=$tree/sftp
# Hundreds of rekeys: a cheap key exchange.
REKEY="-oRekeyLimit=1M -oKexAlgorithms=curve25519-sha256"
# The automatic thread count is single-threaded below 3 CPUs: ask for one
# worker on both ends (srv writes MTAESThreads 1 too).
MTAES="-c aes128-ctr -m hmac-sha2-256 -oMTAESThreads=1"

for b in ssh scp sftp sshd sshd-session sshd-auth sftp-server; do
	[ -x "$tree/$b" ] || { echo "stress: $tree/$b missing (build first)" >&2; exit 2; }
done
mkdir -p "$W"
chmod 755 "$W"
W=$(cd "$W" && pwd)
rm -rf "$W"/out* "$W"/*.log "$W"/*.err "$W"/ctl-* "$W"/cc-*

NP_UP=""
PORTS=""
cleanup() {
	local p n
	trap - EXIT INT TERM
	for p in $STRESS_PIDS; do
		stop_pid "$p" 3
	done
	for p in $PORTS; do
		tsshd_stop "$W" "$p"
	done
	for n in $NP_UP; do
		"$NETPATH" down --name "$n" > /dev/null 2>&1
	done
}
trap cleanup EXIT
trap 'echo "stress: interrupted" >&2; exit 130' INT TERM

np_up() {	# NAME [netpath options]: a path, torn down on exit
	local n=$1
	shift
	[ "$(id -u)" = 0 ] || { echo "stress: network namespaces need root" >&2; return 1; }
	NP_UP="$NP_UP $n"
	"$NETPATH" up --name "$n" "$@" > "$W/np-$n.log" 2>&1 ||
		{ cat "$W/np-$n.log"; return 1; }
}

# srv PORT ADDR LOGLEVEL [PREFIX...]: an hpnsshd started by scripts/lib/
# sshd.sh's tsshd_start (TSSHD_EXTRA for more sshd_config lines), with one
# AES-CTR worker thread and sftp-server run by a wrapper that keeps its log
# (-e: stderr) in W/sftp-server-PORT.log: sshd drops a subsystem's stderr,
# and sftp-server otherwise logs to syslog, so its fatal errors would go
# unseen.
srv() {
	local port=$1 addr=$2 lvl=$3
	shift 3
	PORTS="$PORTS $port"
	printf '#!/bin/sh\nexec %s -e 2>>%s\n' "$tree/sftp-server" "$W/sftp-server-$port.log" \
	    > "$W/sftp-wrap-$port"
	chmod 755 "$W/sftp-wrap-$port"
	: > "$W/sftp-server-$port.log"
	TSSHD_SFTP_SERVER=$W/sftp-wrap-$port TSSHD_LOGLEVEL=$lvl \
	    TSSHD_EXTRA="MTAESThreads 1
${TSSHD_EXTRA:-}" tsshd_start "$W" "$tree" "$port" "$addr" "$@" || return 1
	tsshd_client_config "$W" "$port" "$addr" > "$W/cfg-$port"
}
srv_pid() {
	cat "$W/sshd-$1.pid"
}
log_from() {	# PORT: the line count of its log now
	wc -l < "$W/sshd-$1.log"
}
log_since() {	# PORT LINE
	tail -n +"$(($2 + 1))" "$W/sshd-$1.log"
}
# log_has PORT LINE REGEX: the log has REGEX after LINE (no grep -q in a
# pipe: with pipefail its early exit fails the pipeline)
log_has() {
	log_since "$1" "$2" | grep -Ec "$3" > /dev/null
}
# the largest "peak window N" in the input
peak_window() {
	awk '/peak window/ { for (i = 1; i < NF; i++) if ($i == "window") print $(i + 1) + 0 }' |
	    sort -n | tail -n 1
}

# Data: random, made once per run.
D256=$W/data-big D128=$W/data-mid D64=$W/data-small
BIG=$((MB * 1048576)) MID=$((MB * 524288)) SMALL=$((MB * 262144))
make_data() {
	[ "$(fsize "$D256")" = "$BIG" ] ||
		head -c "$BIG" /dev/urandom > "$D256"
	head -c "$MID" "$D256" > "$D128"
	head -c "$SMALL" "$D256" > "$D64"
	S256=$(sum_of "$D256") S128=$(sum_of "$D128") S64=$(sum_of "$D64")
}

# check_file WHAT FILE SUM SIZE SECS RC
check_file() {
	local what=$1 f=$2 want=$3 size=$4 secs=$5 rc=$6 got
	got=$(sum_of "$f" 2>/dev/null)
	if [ "$rc" = 0 ] && [ "$got" = "$want" ]; then
		ok "$what: $((size / 1048576)) MiB identical in ${secs}s ($(mbps "$size" "$secs") MB/s)"
	else
		bad "$what: exit $rc, $(fsize "$f") of $size bytes, sha256 ${got:0:12} (want ${want:0:12})"
	fi
}
# check_sum WHAT GOT_SUM_LINE SUM SIZE SECS RC (remote sha256sum output)
check_sum() {
	local what=$1 got=${2%% *} want=$3 size=$4 secs=$5 rc=$6
	if [ "$rc" = 0 ] && [ "$got" = "$want" ]; then
		ok "$what: $((size / 1048576)) MiB identical in ${secs}s ($(mbps "$size" "$secs") MB/s)"
	else
		bad "$what: exit $rc, sha256 ${got:0:12} (want ${want:0:12})"
	fi
}

# xfer KIND CFG PREFIX WHAT SRC SUM SIZE [ssh options...]: one transfer.
#   KIND: pipe-up pipe-down scp-up scp-down sftp-up sftp-down
#   PREFIX: "" or "ip netns exec NS" (the client's namespace)
xfer() {
	local kind=$1 cfg=$2 pfx=$3 what=$4 src=$5 sum=$6 size=$7 t0 rc s out
	shift 7
	out=$W/out-$kind
	rm -f "$out"
	t0=$(now)
	case $kind in
	pipe-up)
		s=$($pfx timeout -k 5 300 "$SSH" -F "$cfg" "$@" h sha256sum < "$src")
		rc=$?
		check_sum "$what" "$s" "$sum" "$size" "$(elapsed "$t0")" $rc
		return ;;
	pipe-down)
		$pfx timeout -k 5 300 "$SSH" -F "$cfg" "$@" h "cat $src" > "$out" < /dev/null ;;
	scp-up)
		$pfx timeout -k 5 300 "$SCP" -q -S "$SSH" -F "$cfg" "$@" "$src" "h:$out" ;;
	scp-down)
		$pfx timeout -k 5 300 "$SCP" -q -S "$SSH" -F "$cfg" "$@" "h:$src" "$out" ;;
	sftp-up)
		echo "put $src $out" > "$W/batch-$kind"
		$pfx timeout -k 5 300 "$SFTP" -q -S "$SSH" -F "$cfg" "$@" -b "$W/batch-$kind" h > /dev/null ;;
	sftp-down)
		$pfx timeout -k 5 300 "$SFTP" -q -S "$SSH" -F "$cfg" "$@" "h:$src" "$out" > /dev/null ;;
	esac
	rc=$?
	check_file "$what" "$out" "$sum" "$size" "$(elapsed "$t0")" $rc
	rm -f "$out"
}

# san_reports WHAT: no sanitizer report file written since the last call
# (or since the start)
san_reports() {
	local r
	r=$(san_since "$W/san-mark")
	san_mark "$W/san-mark"
	[ -z "$r" ] && return 0
	bad "$1: sanitizer reports: $(echo $r): $(head -n 5 $r | tr '\n' ' ')"
	return 1
}
# alive PORT WHAT: the listener runs and serves a new connection
alive() {
	local port=$1 what=$2 pfx=${3:-}
	if ! kill -0 "$(srv_pid "$port")" 2>/dev/null; then
		bad "$what: hpnsshd is gone"
		return 1
	fi
	if [ "$($pfx timeout -k 5 30 "$SSH" -F "$W/cfg-$port" h "echo alive" 2>&1)" != alive ]; then
		bad "$what: hpnsshd no longer serves new connections"
		return 1
	fi
	return 0
}
# no_crash PORT LINE WHAT: no session died of a signal since LINE, no
# sanitizer report file since the last check (a sanitizer build writes
# them to files, not to the log: tests/lib/sanitizer.sh), and no
# sftp-server error since the last check
no_crash() {
	local l
	l=$(log_since "$1" "$2" | grep -E 'killed by signal|terminated abnormally|ERROR: (Address|Undefined)Sanitizer|runtime error:' | head -n 3)
	if [ -n "$l" ]; then
		bad "$3: $l"
		return 1
	fi
	if ! san_reports "$3"; then
		return 1
	fi
	l=$(grep -v 'received client version' "$W/sftp-server-$1.log" 2>/dev/null | sort | uniq -c | head -n 5)
	if [ -n "$l" ]; then
		: > "$W/sftp-server-$1.log"
		bad "$3: sftp-server: $(echo "$l" | tr -s ' \n' ' ')"
		return 1
	fi
	return 0
}

# ---------------------------------------------------------------------------
phase_loss() {
	local np=$NPFX-loss port=$((BASE + 0)) cfg st
	echo "stress: loss: 1 % random loss each way, 1 Gbit/s, 50 ms RTT"
	np_up "$np" --rtt 50 --rate 1000 --loss 1 || { bad "loss: netpath up failed"; return; }
	srv $port $SADDR VERBOSE ip netns exec "$np-s" || { bad "loss: hpnsshd did not start"; return; }
	cfg=$W/cfg-$port
	local c="ip netns exec $np-c"
	xfer pipe-up "$cfg" "$c" "loss: ssh pipe upload" "$D256" "$S256" $BIG
	xfer pipe-down "$cfg" "$c" "loss: ssh pipe download" "$D256" "$S256" $BIG
	xfer pipe-down "$cfg" "$c" "loss: ssh pipe download, threaded aes128-ctr" "$D256" "$S256" $BIG $MTAES
	xfer scp-up "$cfg" "$c" "loss: scp upload" "$D128" "$S128" $MID
	xfer scp-down "$cfg" "$c" "loss: scp download" "$D128" "$S128" $MID
	xfer sftp-up "$cfg" "$c" "loss: sftp upload" "$D64" "$S64" $SMALL
	xfer sftp-down "$cfg" "$c" "loss: sftp download" "$D64" "$S64" $SMALL
	"$NETPATH" stats --name "$np" > /dev/null 2>&1
	sleep 0.3
	st=$(cat "/run/netpath/$np/stats" 2>/dev/null)
	local drops
	drops=$(echo "$st" | awk '/^dir=/ { for (i = 1; i <= NF; i++) if ($i ~ /^(drop_loss|rx_pkts)=/) { split($i, a, "="); v[a[1]] += a[2] } }
	    END { printf "%d of %d packets", v["drop_loss"], v["rx_pkts"] }')
	if [[ $st =~ drop_loss=[1-9] ]]; then
		ok "loss: the path dropped $drops"
	else
		bad "loss: no loss seen on the path ($st)"
	fi
	no_crash $port 0 "loss"
	info "hpnsshd peak window (uploads): $(peak_window < "$W/sshd-$port.log")"
	tsshd_stop "$W" $port
}

# ---------------------------------------------------------------------------
phase_rekey() {
	local port=$((BASE + 1)) cfg name opts dir l0 n err clog s out t0 rc
	echo "stress: rekey: RekeyLimit 1M, $((BIG / 1048576)) MiB per transfer, loopback"
	TSSHD_EXTRA="NoneEnabled yes
NoneMacEnabled yes" srv $port 127.0.0.1 DEBUG1 || { bad "rekey: hpnsshd did not start"; return; }
	cfg=$W/cfg-$port
	while read -r name dir opts <&3; do
		[ -n "$name" ] || continue
		l0=$(log_from $port)
		err=$W/rekey.err clog=$W/rekey-client.log
		rm -f "$err" "$clog"
		t0=$(now)
		# shellcheck disable=SC2086
		if [ "$dir" = up ]; then
			s=$(timeout -k 5 300 "$SSH" -F "$cfg" -E "$clog" -oLogLevel=DEBUG1 $REKEY $opts h sha256sum < "$D256" 2> "$err")
			rc=$?
			check_sum "rekey: $name $dir" "$s" "$S256" $BIG "$(elapsed "$t0")" $rc
		else
			out=$W/out-rekey
			timeout -k 5 300 "$SSH" -F "$cfg" -E "$clog" -oLogLevel=DEBUG1 $REKEY $opts h "cat $D256" \
			    < /dev/null > "$out" 2> "$err"
			rc=$?
			check_file "rekey: $name $dir" "$out" "$S256" $BIG "$(elapsed "$t0")" $rc
			rm -f "$out"
		fi
		sleep 0.3
		n=$(log_since $port "$l0" | grep -c "SSH2_MSG_NEWKEYS received")
		# Upstream rekeys about twice per MiB uploaded, about once per
		# 1.4-2 MiB downloaded on a quiet machine (stock 10.0p1 alike:
		# 512 and 184 for 256 MiB with aes128-gcm).  What the channel
		# queues while a key exchange is under way all goes out under
		# the new keys at once, before the next exchange can start, so
		# the slower the exchange, the more data a key carries: under
		# ASan beside make check's other suites a download had 19 for
		# 64 MiB (2026-12-07).  So at least one per 8 MiB; a RekeyLimit
		# not kept gives one or none.
		if [ "$n" -ge $((BIG / 1048576 / 8)) ]; then
			ok "rekey: $name $dir: $n key exchanges"
		else
			bad "rekey: $name $dir: only $n key exchanges"
		fi
		# every key exchange after the switch keeps the threaded cipher
		# (two keys each: in and out) or none
		local mt_c mt_s nn
		case $name in
		aes*-ctr)
			mt_c=$(grep -c "hpn_mt_cipher_new: aes.*-ctr: [0-9]* worker thread" "$clog")
			mt_s=$(log_since $port "$l0" | grep -c "hpn_mt_cipher_new: aes.*-ctr: [0-9]* worker thread")
			if [ "$mt_c" -ge $((2 * n - 4)) ] && [ "$mt_s" -ge $((2 * n - 4)) ]; then
				ok "rekey: $name $dir: threaded AES-CTR on both ends after every rekey ($mt_c/$mt_s keys)"
			else
				bad "rekey: $name $dir: threaded AES-CTR keys: client $mt_c, server $mt_s for $n key exchanges"
			fi ;;
		none*)
			nn=$(log_since $port "$l0" | grep -c "kex: client->server cipher: none")
			if grep -q "WARNING: NoneSwitch: data now travels UNENCRYPTED" "$err" &&
			    log_has $port "$l0" "in the clear" && [ "$nn" -ge $((n - 2)) ]; then
				ok "rekey: $name $dir: switched to none, kept it in $nn of $n key exchanges"
			else
				bad "rekey: $name $dir: none in $nn of $n key exchanges: $(head -c 300 "$err")"
			fi ;;
		esac
		no_crash $port "$l0" "rekey: $name $dir"
	done 3<<EOF
aes128-gcm up -c aes128-gcm@openssh.com
aes128-gcm down -c aes128-gcm@openssh.com
chacha20-poly1305 up -c chacha20-poly1305@openssh.com
chacha20-poly1305 down -c chacha20-poly1305@openssh.com
aes128-ctr up $MTAES
aes128-ctr down $MTAES
aes256-ctr up -c aes256-ctr -m hmac-sha2-256 -oMTAESThreads=1
aes256-ctr down -c aes256-ctr -m hmac-sha2-256 -oMTAESThreads=1
none up -oNoneEnabled=yes -oNoneSwitch=yes
none down -oNoneEnabled=yes -oNoneSwitch=yes
none+mac up -oNoneEnabled=yes -oNoneSwitch=yes -oNoneMacEnabled=yes
none+mac down -oNoneEnabled=yes -oNoneSwitch=yes -oNoneMacEnabled=yes
EOF
	tsshd_stop "$W" $port
}

# ---------------------------------------------------------------------------
path_np() {	# the clean 50 ms path, shared by mux, kill and concurrent
	[ -n "${PATH_NP_UP:-}" ] && return 0
	np_up "$NPFX-path" --rtt 50 --rate 1000 || return 1
	PATH_NP_UP=1
}

phase_mux() {
	local np=$NPFX-path port=$((BASE + 2)) cfg c pid i t0 rc s mpid p
	echo "stress: mux: ssh -f and ControlMaster/ControlPersist, threaded aes128-ctr, 50 ms path"
	path_np || { bad "mux: netpath up failed"; return; }
	srv $port $SADDR VERBOSE ip netns exec "$np-s" || { bad "mux: hpnsshd did not start"; return; }
	cfg=$W/cfg-$port
	c="ip netns exec $np-c"

	# ssh -f: the backgrounded client is found by the file it writes
	rm -f "$W/out-f" "$W/f.log"
	t0=$(now)
	$c timeout -k 5 60 "$SSH" -F "$cfg" -f -E "$W/f.log" -v $MTAES $REKEY h "cat $D128" > "$W/out-f"
	rc=$?
	pid=$(fuser "$W/out-f" 2>/dev/null | tr -s ' ' '\n' | grep -E '^[0-9]+$' | head -n 1)
	[ -z "$pid" ] || { bg_track "$pid"; wait_gone 120 "$pid" || bad "mux: ssh -f still running after 120 s"; }
	check_file "mux: ssh -f download" "$W/out-f" "$S128" $MID "$(elapsed "$t0")" $rc
	p=$(peak_window < "$W/f.log")
	if grep -q "hpn_mt_cipher_new: aes128-ctr: [0-9]* worker" "$W/f.log" && [ "${p:-0}" -gt 2097152 ]; then
		ok "mux: ssh -f: threaded cipher, window grew to $p"
	else
		bad "mux: ssh -f: threaded cipher or window growth missing (peak ${p:-none})"
	fi

	# ControlMaster=auto + ControlPersist: the first client becomes the
	# master, which stays; two sessions then run through it at once.
	local ctl=$W/ctl-mux mopts
	mopts="-oControlMaster=auto -oControlPath=$ctl -oControlPersist=60"
	rm -f "$ctl" "$W/m.log"
	t0=$(now)
	# shellcheck disable=SC2086
	$c timeout -k 5 60 "$SSH" -F "$cfg" -E "$W/m.log" -v $mopts $MTAES h "cat $D128" > "$W/out-m1"
	check_file "mux: first session (becomes the ControlPersist master)" "$W/out-m1" "$S128" $MID "$(elapsed "$t0")" $?
	mpid=$($c "$SSH" -F "$cfg" -oControlPath="$ctl" -O check h 2>&1 | sed -n 's/.*pid=\([0-9]*\).*/\1/p')
	if [ -n "$mpid" ]; then
		bg_track "$mpid"
		ok "mux: master persists (pid $mpid, $(ls /proc/"$mpid"/task | wc -l) threads)"
	else
		bad "mux: no persisting master"
	fi
	t0=$(now)
	$c timeout -k 5 120 "$SSH" -F "$cfg" -oControlPath="$ctl" h "cat $D128" > "$W/out-m2" &
	local dpid=$!
	s=$($c timeout -k 5 120 "$SSH" -F "$cfg" -oControlPath="$ctl" h sha256sum < "$D128")
	rc=$?
	wait $dpid
	local drc=$?
	local secs
	secs=$(elapsed "$t0")
	check_sum "mux: multiplexed upload (concurrent with a download)" "$s" "$S128" $MID "$secs" $rc
	check_file "mux: multiplexed download (concurrent with an upload)" "$W/out-m2" "$S128" $MID "$secs" $drc
	$c "$SSH" -F "$cfg" -oControlPath="$ctl" -O exit h 2> /dev/null
	if [ -n "$mpid" ] && wait_gone 10 "$mpid"; then
		ok "mux: master exited on -O exit"
	else
		bad "mux: master still running after -O exit"
	fi
	p=$(peak_window < "$W/m.log")
	if grep -q "hpn_mt_cipher_new: aes128-ctr: [0-9]* worker" "$W/m.log" && [ "${p:-0}" -gt 2097152 ]; then
		ok "mux: master: threaded cipher, windows grew to $p"
	else
		bad "mux: master: threaded cipher or window growth missing (peak ${p:-none})"
	fi
	no_crash $port 0 "mux"
	rm -f "$W"/out-f "$W"/out-m*

	# sftp downloads on the fast path: sftp-server's output queue fills
	# while sshd-session waits for the network (HPN bounds that queue)
	for i in 1 2 3; do
		xfer sftp-down "$cfg" "$c" "path: sftp download $i/3 (chacha20-poly1305)" "$D256" "$S256" $BIG \
		    -oCiphers=chacha20-poly1305@openssh.com
		no_crash $port 0 "path: sftp download $i/3" || break
	done
	tsshd_stop "$W" $port
}

# ---------------------------------------------------------------------------
# kill_case TOOL DIR PORT: start TOOL (scp|sftp) moving D256, kill -9 it and
# its ssh once a quarter has moved, check the server side, then resume.
kill_case() {
	local tool=$1 dir=$2 port=$3 np=$NPFX-path cfg c pid sess p i th maxth=0 part t0 lst ssh_pid l0 out rc
	cfg=$W/cfg-$port
	c="ip netns exec $np-c"
	lst=$(srv_pid $port)
	out=$W/out-kill-$tool-$dir
	rm -f "$out"
	l0=$(log_from $port)
	if [ "$dir" = up ]; then
		echo "put $D256 $out" > "$W/batch-kill"
	else
		echo "get $D256 $out" > "$W/batch-kill"
	fi
	if [ "$tool" = scp ]; then
		$c "$SCP" -q -S "$SSH" -F "$cfg" "$D256" "h:$out" &
	else
		$c "$SFTP" -q -S "$SSH" -F "$cfg" -b "$W/batch-kill" h > /dev/null &
	fi
	pid=$!
	bg_track "$pid"
	for i in $(seq 1 300); do
		[ "$(fsize "$out")" -ge $((BIG / 4)) ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	sess=$(tree_pids "$lst" | grep -vx "$lst")
	for p in $sess; do
		th=$(ls /proc/"$p"/task 2>/dev/null | wc -l)
		[ "$th" -gt "$maxth" ] && maxth=$th
	done
	ssh_pid=$(kids "$pid")
	kill -KILL "$pid" $ssh_pid 2>/dev/null
	wait "$pid" 2>/dev/null
	part=$(fsize "$out")
	info "$tool $dir: killed the client (pids $pid $ssh_pid) at $part bytes; server processes:" \
	    "$(for p in $sess; do printf '%s(%s, %s threads) ' "$(cat /proc/"$p"/comm 2>/dev/null)" "$p" "$(ls /proc/"$p"/task 2>/dev/null | wc -l)"; done)"
	if [ -z "$sess" ]; then
		bad "kill: $tool $dir: no server session seen (transfer too fast or not started)"
	fi
	t0=$(now)
	# shellcheck disable=SC2086
	if wait_gone 20 $sess; then
		ok "kill: $tool $dir: the server's session ended $(elapsed "$t0")s after the kill (max $maxth threads in a session process before)"
	else
		bad "kill: $tool $dir: server processes left 20 s after the kill: $(ps -o pid=,comm= -p "$(echo $sess | tr ' ' ',')" | tr '\n' ' ')"
	fi
	th=$(ls /proc/"$lst"/task | wc -l)
	if [ "$(tree_pids "$lst" | wc -l)" = 1 ] && [ "$th" = 1 ]; then
		ok "kill: $tool $dir: the listener is alone again, with one thread"
	else
		bad "kill: $tool $dir: the listener has $(($(tree_pids "$lst" | wc -l) - 1)) children and $th threads left"
	fi
	info "server log: $(log_since $port "$l0" | grep -Ev 'Accepted|Starting session|User child|^debug' | tr '\n' '|' | cut -c1-300)"
	if [ "$part" -gt 0 ] && [ "$part" -lt "$BIG" ]; then
		ok "kill: $tool $dir: partial file of $part < $BIG bytes"
	else
		bad "kill: $tool $dir: partial file of $part bytes (want 0 < size < $BIG)"
	fi
	no_crash $port "$l0" "kill: $tool $dir"
	# complete it
	t0=$(now)
	if [ "$tool" = scp ]; then
		$c timeout -k 5 300 "$SCP" -q -S "$SSH" -F "$cfg" "$D256" "h:$out"
		rc=$?
		check_file "kill: scp $dir: re-copy" "$out" "$S256" $BIG "$(elapsed "$t0")" $rc
	else
		if [ "$dir" = up ]; then
			echo "reput $D256 $out" > "$W/batch-kill"
		else
			echo "reget $D256 $out" > "$W/batch-kill"
		fi
		local l1 moved
		l1=$(log_from $port)
		$c timeout -k 5 300 "$SFTP" -S "$SSH" -F "$cfg" -b "$W/batch-kill" h > "$W/kill-resume.out" 2>&1
		rc=$?
		check_file "kill: sftp $dir: $(cut -c1-5 "$W/batch-kill") from $part bytes" "$out" "$S256" $BIG "$(elapsed "$t0")" $rc
		# resumed, not copied again: what the session moved (its summary
		# line: "received R bytes, sent S bytes") is about the rest
		sleep 0.5
		moved=$(log_since $port "$l1" | awk -v d=$dir '/server-session: received/ {
			for (i = 1; i < NF; i++) { if ($i == "received") r = $(i + 1); if ($i == "sent") s = $(i + 1) }
			m = (d == "up") ? r : s } END { print m + 0 }')
		if [ "$moved" -gt 0 ] && [ "$moved" -lt $((BIG - part + 1048576)) ]; then
			ok "kill: sftp $dir: resumed: the session moved $moved bytes for the $((BIG - part)) missing"
		else
			bad "kill: sftp $dir: not resumed: the session moved $moved bytes for the $((BIG - part)) missing"
		fi
	fi
	rm -f "$out"
}

phase_kill() {
	local np=$NPFX-path port=$((BASE + 3))
	echo "stress: kill: kill -9 of the client mid-transfer, threaded aes128-ctr, 50 ms path"
	path_np || { bad "kill: netpath up failed"; return; }
	srv $port $SADDR VERBOSE ip netns exec "$np-s" || { bad "kill: hpnsshd did not start"; return; }
	printf '\tCiphers aes128-ctr\n\tMACs hmac-sha2-256\n\tMTAESThreads 1\n' >> "$W/cfg-$port"
	kill_case scp up $port
	kill_case sftp up $port
	kill_case sftp down $port
	tsshd_stop "$W" $port
}

# ---------------------------------------------------------------------------
phase_concurrent() {
	local np=$NPFX-path port=$((BASE + 4)) cfg c lst i kind pids="" t0 n=20 rss max_rss=0 max_all=0 max_n=0 samples=0 base rc nok=0 p
	echo "stress: concurrent: $n transfers of $((SMALL / 1048576)) MiB at once to one hpnsshd, 50 ms path"
	path_np || { bad "concurrent: netpath up failed"; return; }
	srv $port $SADDR VERBOSE ip netns exec "$np-s" || { bad "concurrent: hpnsshd did not start"; return; }
	cfg=$W/cfg-$port
	c="ip netns exec $np-c"
	lst=$(srv_pid $port)
	base=$(tree_rss_kb "$lst")
	# one idle connection, for scale
	local idle ip
	$c timeout -k 5 30 "$SSH" -F "$cfg" h "sleep 2" < /dev/null &
	ip=$!
	sleep 1.5
	idle=$(tree_rss_kb "$lst" '^(sshd|sshd-session|sshd-auth|sftp-server)$')
	wait $ip
	t0=$(now)
	for i in $(seq 1 $n); do
		kind=$(echo "scp-up scp-down sftp-up sftp-down pipe-up pipe-down" | cut -d' ' -f$(( (i - 1) % 6 + 1 )))
		case $kind in
		scp-up) $c timeout -k 5 300 "$SCP" -q -S "$SSH" -F "$cfg" "$D64" "h:$W/cc-$i" & ;;
		scp-down) $c timeout -k 5 300 "$SCP" -q -S "$SSH" -F "$cfg" "h:$D64" "$W/cc-$i" & ;;
		sftp-up) echo "put $D64 $W/cc-$i" > "$W/cc-batch-$i"
			$c timeout -k 5 300 "$SFTP" -q -S "$SSH" -F "$cfg" -b "$W/cc-batch-$i" h > /dev/null & ;;
		sftp-down) $c timeout -k 5 300 "$SFTP" -q -S "$SSH" -F "$cfg" "h:$D64" "$W/cc-$i" > /dev/null & ;;
		pipe-up) $c timeout -k 5 300 "$SSH" -F "$cfg" h "cat > $W/cc-$i" < "$D64" & ;;
		pipe-down) $c timeout -k 5 300 "$SSH" -F "$cfg" h "cat $D64" > "$W/cc-$i" & ;;
		esac
		p=$!
		bg_track $p
		pids="$pids $p"
		echo "$p $kind $i" >> "$W/cc-jobs"
	done
	# sample the server's memory until all are done (bounded: 300 s)
	: > "$W/cc-rss"
	for i in $(seq 1 600); do
		local alive=0
		for p in $pids; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
		[ $alive = 0 ] && break
		local all sessions
		read -r rss all sessions <<< "$(tree_mem "$lst")"
		echo "$(elapsed "$t0") $rss $all $sessions" >> "$W/cc-rss"
		[ "$rss" -gt "$max_rss" ] && max_rss=$rss
		[ "$all" -gt "$max_all" ] && max_all=$all
		[ "$sessions" -gt "$max_n" ] && max_n=$sessions
		samples=$((samples + 1))
		sleep 0.25
	done
	local secs
	secs=$(elapsed "$t0")
	while read -r p kind i; do
		wait "$p"
		rc=$?
		if [ $rc = 0 ] && [ "$(sum_of "$W/cc-$i")" = "$S64" ]; then
			nok=$((nok + 1))
		else
			bad "concurrent: #$i $kind: exit $rc, $(fsize "$W/cc-$i") bytes, sha256 differs or missing"
		fi
	done < "$W/cc-jobs"
	[ $nok = $n ] && ok "concurrent: all $n transfers identical ($((n * SMALL / 1048576)) MiB in ${secs}s, $(mbps $((n * SMALL)) "$secs") MB/s)"
	local peak peaksum
	sleep 1
	peak=$(peak_window < "$W/sshd-$port.log")
	peaksum=$(awk '/peak window/ { for (i = 1; i < NF; i++) if ($i == "window") s += $(i + 1) } END { print s + 0 }' "$W/sshd-$port.log")
	info "server memory (sum of RSS of hpnsshd's processes and sftp-server; $samples samples, ~4/s):"
	info "  before: $((base / 1024)) MiB (the listener), $(((idle - base) / 1024)) MiB more with one idle connection; peak: $((max_rss / 1024)) MiB with up to $((max_n / 2)) connections" \
	    "($max_n sshd-session processes); with the users' commands (cat, sha256sum...): $((max_all / 1024)) MiB"
	info "  per connection at peak: $((max_rss / 1024 / (max_n > 1 ? max_n / 2 : 1))) MiB; largest peak window $peak bytes," \
	    "all channels' peak windows together $((peaksum / 1048576)) MiB"
	# Bound: per connection, 8 MiB of processes (two sshd-session, maybe
	# sftp-server: OpenSSL, sanitizers) plus two of the largest window any
	# channel reached (a window's worth waiting for a slow consumer, and
	# the 4 MiB a sender stages).
	local bound=$(( base + n * (8 * 1024 + 2 * ${peak:-2097152} / 1024) ))
	if [ "$max_rss" -le "$bound" ]; then
		ok "concurrent: server memory bounded: peak $((max_rss / 1024)) MiB <= $((bound / 1024)) MiB (listener + $n x (8 MiB + 2 x largest window))"
	else
		bad "concurrent: server memory peak $((max_rss / 1024)) MiB over the bound $((bound / 1024)) MiB"
	fi
	if wait_gone 20 $(tree_pids "$lst" | grep -vx "$lst"); then
		ok "concurrent: all sessions ended; listener at $(( $(tree_rss_kb "$lst") / 1024 )) MiB"
	else
		bad "concurrent: sessions left after the transfers"
	fi
	no_crash $port 0 "concurrent"
	rm -f "$W"/cc-[0-9]*
	tsshd_stop "$W" $port
}

# ---------------------------------------------------------------------------
# mal_client CASE EXPECT_LOG_REGEX CHECK: a misbehaving client; CHECK is an
# awk condition on the RESULT line's key=value pairs (v["key"]).
mal_client() {
	local case=$1 expect=$2 check=$3 port=$((BASE + 5)) l0 r lst
	lst=$(srv_pid $port)
	l0=$(log_from $port)
	r=$(timeout -k 5 90 "$PY" "$top/tests/stress/malpeer.py" client "$case" 127.0.0.1 $port \
	    "$W/id_ed25519" "$(id -un)" "$lst" 2> "$W/mal.err" | grep '^RESULT')
	sleep 0.5
	local line=""
	[ -z "$expect" ] || line=$(log_since $port "$l0" | grep -E -m1 "$expect")
	if [ -z "$r" ]; then
		bad "malformed: $case: the peer could not run: $(tail -n 3 "$W/mal.err" | tr '\n' ' ')"
	elif ! echo "$r" | awk -v c="$check" '{ for (i = 3; i <= NF; i++) { split($i, a, "="); v[a[1]] = a[2] } }
	    END { exit !(0 || '"$check"') }'; then
		bad "malformed: $case: unexpected outcome: $r"
	elif [ -n "$expect" ] && [ -z "$line" ]; then
		bad "malformed: $case: hpnsshd did not log /$expect/: $(log_since $port "$l0" | grep -v '^debug' | tail -n 3 | tr '\n' '|')"
	else
		ok "malformed: $case: ${r#RESULT case=* }${line:+; hpnsshd: \"$(echo "$line" | cut -c1-150)\"}"
	fi
	no_crash $port "$l0" "malformed: $case"
	alive $port "malformed: $case" || return 1
	san_reports "malformed: $case (the check that hpnsshd still serves)"
}

# mal_server CASE EXPECT_STDERR_REGEX WANT_RC [ssh options...]: hpnssh
# against a misbehaving server
mal_server() {
	local case=$1 expect=$2 want=$3 port=$((BASE + 6)) sp rc i t0 cpu rd=""
	shift 3
	"$PY" "$top/tests/stress/malpeer.py" server "$case" $port "$W/host_ed25519" > "$W/mals.out" 2>&1 &
	sp=$!
	bg_track $sp
	for i in $(seq 1 50); do
		grep -q LISTENING "$W/mals.out" && break
		sleep 0.1
	done
	t0=$(now)
	case $case in
	window-exceed)	# a consumer that does not read (a FIFO, so that
		# $! is timeout's and its status ssh's): the window closes
		rm -f "$W/malc.fifo"
		mkfifo "$W/malc.fifo"
		sleep 30 < "$W/malc.fifo" &
		rd=$!
		bg_track $rd
		timeout -k 5 60 "$SSH" -F "$W/cfg-mal" -p $port -oLogLevel=INFO "$@" h cat \
		    < /dev/null 2> "$W/malc.err" > "$W/malc.fifo" &
		;;
	zero-window)
		timeout -k 5 60 "$SSH" -F "$W/cfg-mal" -p $port -oLogLevel=INFO "$@" h "cat > /dev/null" \
		    < "$D64" 2> "$W/malc.err" &
		;;
	*)
		timeout -k 5 60 "$SSH" -F "$W/cfg-mal" -p $port -oLogLevel=INFO "$@" h "sleep 10" \
		    < /dev/null 2> "$W/malc.err" &
		;;
	esac
	local cp=$!
	bg_track $cp
	# the ssh process: a child of timeout
	local sshp=""
	for i in $(seq 1 20); do
		sshp=$(ps -o pid=,comm= --ppid "$(pgrep -P $$ -x timeout | head -n 1)" 2>/dev/null | awk '$2 == "ssh" { print $1 }' | head -n 1)
		[ -n "$sshp" ] && break
		sleep 0.05
	done
	cpu=0
	if [ -n "$sshp" ] && [ "$case" = zero-window ]; then
		# CPU of the client while the peer stalls it (3 s)
		sleep 2.5
		cpu=$(awk '{ printf "%.2f", ($14 + $15) / 100 }' /proc/"$sshp"/stat 2>/dev/null || echo 0)
	fi
	# the ssh's exit status, as timeout passes it on
	wait_gone 60 $sshp
	wait $cp
	rc=$?
	if [ -n "$rd" ]; then
		stop_pid $rd 1
		wait $rd 2>/dev/null
		rm -f "$W/malc.fifo"
	fi
	wait $sp 2>/dev/null
	local r
	r=$(grep '^RESULT' "$W/mals.out" | head -n 1)
	if [ "$case" = zero-window ] && [[ $r != *"before_grant=0 "* ]]; then
		bad "malformed: hpnssh vs $case server: the client sent data into a zero window: $r"
	elif [ "$rc" != "$want" ]; then
		bad "malformed: hpnssh vs $case server: exit $rc (want $want): $(head -c 300 "$W/malc.err") ${r}"
	elif [ -n "$expect" ] && ! grep -Eq "$expect" "$W/malc.err"; then
		bad "malformed: hpnssh vs $case server: no /$expect/ in: $(head -c 300 "$W/malc.err")"
	elif awk -v c="$cpu" 'BEGIN { exit !(c > 1.0) }'; then
		bad "malformed: hpnssh vs $case server: the client spun (${cpu}s CPU in 2.5 s)"
	else
		ok "malformed: hpnssh vs $case server: exit $rc in $(elapsed "$t0")s, \"$(grep -Em1 "${expect:-.}" "$W/malc.err" | cut -c1-120)\" (client CPU ${cpu}s; ${r#RESULT })"
	fi
	if grep -Eq 'Sanitizer|runtime error:' "$W/malc.err"; then
		bad "malformed: hpnssh vs $case server: sanitizer report: $(grep -Em1 'Sanitizer|runtime error:' "$W/malc.err")"
	fi
	san_reports "malformed: hpnssh vs $case server"
}

phase_malformed() {
	local port=$((BASE + 5)) l0 v
	echo "stress: malformed: misbehaving peers (paramiko), loopback"
	if ! "$PY" -c 'import paramiko' 2>/dev/null; then
		bad "malformed: python3-paramiko is not installed (apt-get install python3-paramiko)"
		return
	fi
	TSSHD_EXTRA="NoneEnabled yes" srv $port 127.0.0.1 VERBOSE || { bad "malformed: hpnsshd did not start"; return; }
	mal_client adjust-overflow "adjust [0-9]+ overflows remote window" 'v["closed_after"] >= 0'
	mal_client window-exceed "peer ignored channel window" 'v["closed_after"] >= 0'
	mal_client zero-window "" 'v["before_grant"] == 0 && v["got"] == v["want"] && v["exit"] == 0 && v["server_cpu_3s"] < 1'
	mal_client zero-maxpacket "" 'v["got"] == 0 && v["server_cpu_3s"] < 1'
	mal_client huge-window "" 'v["got"] == v["want"]'
	mal_client big-packet "Bad packet length" 'v["closed_after"] >= 0'
	mal_client big-data "rcvd big packet 131072, maxpack 32768" 'v["active"] == "True"'
	for v in "SSH-2.0-OpenSSH_99999999999999999999999.99999_hpn" "SSH-2.0-OpenSSH_" \
	    "SSH-2.0-OpenSSH_8." "SSH-2.0-OpenSSH_8.4 hpn" "SSH-2.0-hpn" \
	    "SSH-2.0-x_hpn99999999999999999999999" "SSH-2.0-OpenSSH_8.4_HPN17v0"; do
		mal_client "banner:$v" "" 'v["down"] == v["want"] && v["up"] == v["want"]'
	done
	# none proposed before authentication (raw socket peer)
	l0=$(log_from $port)
	timeout -k 5 30 "$PY" "$top/tests/regress/hpn-none-peer.py" client 127.0.0.1 $port > "$W/none-peer.out" 2>&1
	sleep 0.5
	if log_has $port "$l0" "peer proposed the none cipher before authentication: refused"; then
		ok "malformed: none proposed before authentication: refused and logged"
	else
		bad "malformed: none proposed before authentication: not refused/logged"
	fi
	no_crash $port "$l0" "malformed: none pre-auth"
	alive $port "malformed: none pre-auth"

	# hpnssh against misbehaving servers
	tsshd_client_config "$W" $((BASE + 6)) 127.0.0.1 > "$W/cfg-mal"
	mal_server adjust-overflow "overflows remote window" 255
	mal_server window-exceed "peer ignored channel window" 255
	mal_server zero-window "" 0
	mal_server big-packet "" 255
	mal_server "ext-none:cipher" "no matching cipher" 255 -oNoneEnabled=yes -oNoneSwitch=yes
	mal_server "ext-none:@big" "no matching cipher" 255 -oNoneEnabled=yes -oNoneSwitch=yes
	mal_server "ext-none:@nul" "no matching cipher" 255 -oNoneEnabled=yes -oNoneSwitch=yes
	mal_server "ext-none:" "does not allow the none cipher" 0 -oNoneEnabled=yes -oNoneSwitch=yes
	# a server proposing only none in the first key exchange
	local sp
	timeout -k 5 30 "$PY" "$top/tests/regress/hpn-none-peer.py" server $((BASE + 7)) > "$W/none-peer.out" 2>&1 &
	sp=$!
	bg_track $sp
	sleep 0.5
	timeout -k 5 30 "$SSH" -F "$W/cfg-mal" -p $((BASE + 7)) -oNoneEnabled=yes -oNoneSwitch=yes h true > "$W/malc.err" 2>&1
	local rc=$?
	wait $sp 2>/dev/null
	if [ $rc = 255 ] && grep -q "peer proposed the none cipher before authentication: refused" "$W/malc.err"; then
		ok "malformed: hpnssh vs a server proposing only none: refused, exit 255"
	else
		bad "malformed: hpnssh vs a server proposing only none: exit $rc: $(head -c 200 "$W/malc.err")"
	fi
	tsshd_stop "$W" $port
}

# ---------------------------------------------------------------------------
start=$(now)
echo "stress: $tree ($("$SSH" -V 2>&1)); phases: $phases; load: $(cut -d' ' -f1-3 /proc/loadavg)"
san_mark "$W/san-mark"
tsshd_setup "$W"
make_data
for ph in $phases; do
	t=$(now)
	case $ph in
	loss|rekey|mux|kill|concurrent|malformed) "phase_$ph" ;;
	*) bad "unknown phase $ph" ;;
	esac
	echo "stress: $ph done in $(elapsed "$t")s (load $(cut -d' ' -f1-3 /proc/loadavg))"
done
echo "stress: finished in $(elapsed "$start")s"
echo "stress: $STRESS_PASS passed, $STRESS_FAIL failed"
[ "$STRESS_FAIL" = 0 ]
