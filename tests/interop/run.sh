#!/bin/bash
# tests/interop/run.sh [HPN_TREE [STOCK_TREE [OUTDIR]]]  (make interop)
#
# The interop matrix: HPN peers (hpnssh/hpnscp/hpnsftp, hpnsshd) against
# other SSH implementations, each as client of hpnsshd and, where it has a
# server, as server of the hpn clients: Debian's OpenSSH (/usr/bin/ssh,
# /usr/sbin/sshd), the pristine base release (STOCK_TREE), PuTTY (plink, pscp, psftp;
# client only), Dropbear (dbclient, dropbear), asyncssh and paramiko
# (tests/interop/pyclient.py, pyserver.py).  For each pair and each cipher
# both have (of CIPHERS), SIZE of random data goes up and comes back down,
# SHA-256 compared; on loopback, and for PATH_CIPHER also over an emulated
# RTT ms / RATE Mbit/s path (bench/netpath), where the window the hpn side
# reached is checked: grown past 2 MiB, and below 15 MiB towards non-HPN
# OpenSSH.  Where the hpn side uses AES-CTR, the threaded AES-CTR must have
# been swapped in.  Then "none" must never be offered to any of them.
#
# Writes OUTDIR/results.md (printed at the end) and OUTDIR/logs/; exits
# non-zero on any failure, with the log tails of the failing pairs.
# Root only (network namespaces, sshd).  Everything it starts is stopped by
# PID, the path taken down and the tmpfs work directory removed, also on
# failure, Ctrl-C or TERM.
#
# Environment:
#   SIZE=64M                 bytes per transfer (K/M/G suffixes)
#   CIPHERS="aes128-ctr aes256-ctr aes128-gcm@openssh.com chacha20-poly1305@openssh.com"
#   PEERS="debian stock putty dropbear asyncssh paramiko"
#   PATH_CIPHER=aes128-ctr   the cipher of the path runs (one per pair)
#   NETS="loop path"         loopback and/or the emulated path
#   RTT=50 RATE=1000         the path
#   XFER_TIMEOUT=120         seconds per transfer
#   BUDGET=780               seconds; pairs not started by then fail as "not run"
#   NAME=hpninterop          netpath name
set -euo pipefail

TOP=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$TOP/tests/interop
OSV=$(sed -n 's/^OPENSSH_VERSION=//p' "$TOP/upstream/openssh.mk")
HPN_TREE=${1:-$TOP/build/hpn/openssh-$OSV}
STOCK_TREE=${2:-$TOP/build/stock/openssh-$OSV}
OUT=${3:-$TOP/build/interop}
# shellcheck source=../../scripts/lib/sshd.sh
. "$TOP/scripts/lib/sshd.sh"

SIZE=${SIZE:-64M}
CIPHERS=${CIPHERS:-aes128-ctr aes256-ctr aes128-gcm@openssh.com chacha20-poly1305@openssh.com}
PEERS=${PEERS:-debian stock putty dropbear asyncssh paramiko}
PATH_CIPHER=${PATH_CIPHER:-aes128-ctr}
NETS=${NETS:-loop path}
RTT=${RTT:-50}
RATE=${RATE:-1000}
XFER_TIMEOUT=${XFER_TIMEOUT:-120}
BUDGET=${BUDGET:-780}
NAME=${NAME:-hpninterop}
PY=/usr/bin/python3	# Debian's, where python3-asyncssh/-paramiko live

STOCK_WINDOW=2097152
STOCK_CAP=15728640	# towards non-HPN OpenSSH >= 8.4
DROPBEAR_WINDOW=8388608	# dbclient/dropbear -W on the path (their default: 24 KiB)

ALL4="aes128-ctr aes256-ctr aes128-gcm@openssh.com chacha20-poly1305@openssh.com"
declare -A PEER_CIPHERS=(
	[debian]=$ALL4 [stock]=$ALL4 [putty]=$ALL4 [asyncssh]=$ALL4
	[dropbear]="aes128-ctr aes256-ctr chacha20-poly1305@openssh.com"
	[paramiko]="aes128-ctr aes256-ctr")
# Transfer modes, rotated over the ciphers (the path runs take the first).
declare -A CLIENT_MODES=(
	[debian]="scp sftp pipe" [stock]="scp sftp pipe" [putty]="plink pscp psftp"
	[dropbear]="pipe" [asyncssh]="sftp pipe" [paramiko]="sftp pipe")
# The hpn client's modes per server.  scp (SFTP protocol) fails against the
# asyncssh and paramiko SFTP servers with any OpenSSH client: they send no
# exit-status for the subsystem (see README.md); dropbear has no sftp-server
# here, so legacy scp (-O, remote /usr/bin/scp) instead.
declare -A SERVER_MODES=(
	[debian]="scp sftp pipe" [stock]="scp sftp pipe" [dropbear]="pipe scp-O"
	[asyncssh]="sftp pipe" [paramiko]="sftp pipe")
declare -A HAS_SERVER=([debian]=1 [stock]=1 [dropbear]=1 [asyncssh]=1 [paramiko]=1)
declare -A IS_OPENSSH=([debian]=1 [stock]=1)
# Peers that send fast enough on the path that the hpn side's window must
# grow past 2 MiB (it grows while the sender fills it: > 21 MB/s at 50 ms);
# for the others (Python; dbclient's sender) growth is reported, not required;
# and only with SIZE >= 32 MiB.
declare -A MUST_GROW=([debian]=1 [stock]=1 [putty]=1)

say() { echo "interop: $*"; }
die() { echo "interop: ERROR: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root (network namespaces, sshd): sudo make interop"
[[ $SIZE =~ ^[0-9]+[kKmMgG]?$ ]] || die "SIZE: e.g. 64M"
case $SIZE in
*[kK]) BYTES=$((${SIZE%?} * 1024)) ;;
*[mM]) BYTES=$((${SIZE%?} * 1048576)) ;;
*[gG]) BYTES=$((${SIZE%?} * 1073741824)) ;;
*) BYTES=$((SIZE)) ;;
esac
[ "$BYTES" -ge 1048576 ] || die "SIZE: at least 1M"
for c in $CIPHERS; do
	case " $ALL4 " in *" $c "*) ;; *) die "CIPHERS: unknown cipher $c" ;; esac
done
for p in $PEERS; do
	[ -n "${PEER_CIPHERS[$p]:-}" ] || die "PEERS: unknown peer $p"
done
for n in $NETS; do
	case $n in loop|path) ;; *) die "NETS: loop and/or path" ;; esac
done
for b in /usr/bin/ssh /usr/bin/scp /usr/bin/sftp /usr/sbin/sshd \
    /usr/lib/openssh/sftp-server plink pscp psftp puttygen dropbear dbclient \
    dropbearconvert unshare; do
	command -v "$b" >/dev/null || die "missing $b: make deps (scripts/deps.sh install test)"
done
$PY -c 'import asyncssh, paramiko' 2>/dev/null ||
	die "$PY cannot import asyncssh and paramiko: apt-get install python3-asyncssh python3-paramiko (make deps)"
NCPU=$(nproc)

T0=$SECONDS
DEADLINE=$((T0 + BUDGET))
LOAD_BEFORE=$(uptime)
mkdir -p "$OUT"
rm -rf "$OUT/logs"
mkdir -p "$OUT/logs"
LOGS=$OUT/logs

work=$(mktemp -d /dev/shm/hpn-interop.XXXXXX)
chmod 755 "$work"
PIDS=()		# every background process we started (servers)
CUR_PIDS=()	# the transfer under way (client, watcher)
SRV_COPY=()
SSHD_PORTS=()	# sshds started with a pid file in $work (tsshd-style)
PATH_UP=0
# alive PID: running, and not a zombie (a daemonized sshd's zombie waits
# for this machine's init to reap it)
alive() {
	local st
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
	[ "${st%% *}" != Z ]
}
# stop_pids PID...: TERM to all, then KILL to those alive after 3 s
stop_pids() {
	local pid i left
	for pid in "$@"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	for ((i = 0; i < 30; i++)); do
		left=0
		for pid in "$@"; do
			alive "$pid" && left=1
		done
		[ $left = 0 ] && return 0
		sleep 0.1
	done
	for pid in "$@"; do
		alive "$pid" && kill -KILL "$pid" 2>/dev/null
	done
	return 0
}
cleanup() {
	local rc=$? p pids=()
	trap - EXIT INT TERM
	pids=("${CUR_PIDS[@]}" "${PIDS[@]}")
	for p in "${SSHD_PORTS[@]}"; do
		[ -s "$work/sshd-$p.pid" ] && pids+=("$(cat "$work/sshd-$p.pid")")
	done
	[ ${#pids[@]} -eq 0 ] || stop_pids "${pids[@]}"
	for p in "${SRV_COPY[@]}"; do
		cp -f "${p%%|*}" "${p#*|}" 2>/dev/null || true
	done
	if [ "$PATH_UP" = 1 ]; then
		"$NP" down --name "$NAME" >/dev/null 2>&1 || true
	fi
	# /root bind mounts live in dropbear's private mount namespace only
	rm -rf "$work"
	[ $rc -eq 0 ] || echo "interop: stopped (status $rc); everything started was stopped" >&2
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- set-up ------------------------------------------------------------------

say "uptime before: $LOAD_BEFORE"
# One run tests one build: copy the binaries (others rebuild the trees
# while we run); netpath too (bash reads scripts as it goes), with a build
# directory of its own.
snapshot_tree() {
	local tree=$1 dir=$2 b
	mkdir -p "$dir"
	for b in ssh scp sftp sshd sshd-session sshd-auth sftp-server; do
		[ -x "$tree/$b" ] || die "$tree/$b missing: build it (make, make stock)"
		cp -p "$tree/$b" "$dir/$b"
		cmp -s "$tree/$b" "$dir/$b" || die "$tree/$b changed while copied (a rebuild?): run again"
	done
}
snapshot_tree "$HPN_TREE" "$work/hpn"
snapshot_tree "$STOCK_TREE" "$work/stock"
HPN=$work/hpn
STOCK=$work/stock
mkdir -p "$work/netpath"
cp "$TOP/bench/netpath/netpath" "$TOP/bench/netpath/delayline.c" "$work/netpath/"
export NETPATH_BUILD=$work/netpath/build
NP=$work/netpath/netpath

tsshd_setup "$work" >/dev/null	# host_ed25519, id_ed25519, authorized_keys, known_hosts
# PuTTY: a .ppk and the host key's fingerprint; Dropbear: its key format,
# and a known_hosts under a HOME of ours (dbclient reads $HOME/.ssh)
puttygen "$work/id_ed25519" -O private -o "$work/id.ppk" >/dev/null 2>&1 ||
	die "puttygen could not convert the user key"
FP=$(ssh-keygen -lf "$work/host_ed25519.pub" -E sha256 | awk '{ print $2 }')
dropbearconvert openssh dropbear "$work/id_ed25519" "$work/id.db" >/dev/null 2>&1 ||
	die "dropbearconvert (user key) failed"
dropbearconvert openssh dropbear "$work/host_ed25519" "$work/host.db" >/dev/null 2>&1 ||
	die "dropbearconvert (host key) failed"
HOMEDIR=$work/home
mkdir -p "$HOMEDIR/.ssh"
chmod 700 "$HOMEDIR" "$HOMEDIR/.ssh"
for a in 127.0.0.1 10.201.0.2; do
	echo "$a $(cut -d' ' -f1,2 "$work/host_ed25519.pub")"
done > "$HOMEDIR/.ssh/known_hosts"
# dropbear (server) reads ~root/.ssh/authorized_keys: it runs in a mount
# namespace of its own where this directory is bound over /root
DROOT=$work/droot
mkdir -p "$DROOT/.ssh"
chmod 700 "$DROOT" "$DROOT/.ssh"
cp "$work/id_ed25519.pub" "$DROOT/.ssh/authorized_keys"
chmod 600 "$DROOT/.ssh/authorized_keys"
mkdir -p /run/sshd	# Debian's sshd insists on its privsep directory

cat > "$work/ssh_config" <<EOF
Host *
	User root
	IdentityFile $work/id_ed25519
	IdentitiesOnly yes
	UserKnownHostsFile $work/known_hosts
	GlobalKnownHostsFile /dev/null
	StrictHostKeyChecking yes
	BatchMode yes
	ConnectTimeout 20
	LogLevel ERROR
EOF

SRC=$work/src
head -c "$BYTES" /dev/urandom > "$SRC"
SRC_SHA=$(sha256sum < "$SRC" | cut -d' ' -f1)
SMALL=$work/small
head -c 1048576 "$SRC" > "$SMALL"
SMALL_SHA=$(sha256sum < "$SMALL" | cut -d' ' -f1)
DST=$work/dst
mkdir -p "$DST"
HUMAN="$((BYTES / 1048576)) MiB"
[ $((BYTES % 1048576)) -eq 0 ] || HUMAN="$BYTES bytes"

# --- servers -----------------------------------------------------------------

PORT_NEXT=${PORT_BASE:-$((21000 + ($$ % 200) * 40))}
port_free() {
	$PY -c 'import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))' "$1" 2>/dev/null
}
# sets PORT: the next free port (bounded search)
next_port() {
	local i
	for ((i = 0; i < 200; i++)); do
		PORT=$PORT_NEXT
		PORT_NEXT=$((PORT_NEXT + 1))
		port_free "$PORT" && return 0
	done
	die "no free port near $PORT_NEXT"
}

addr_of() { [ "$1" = path ] && echo 10.201.0.2 || echo 127.0.0.1; }
# the command prefix that runs something on NET's server / client side
sprefix() { [ "$1" = path ] && echo "$NP exec server --name $NAME --" || true; }
cprefix() { [ "$1" = path ] && echo "$NP exec client --name $NAME --" || true; }

wait_listen() {	# NET PORT: bounded wait until something listens there
	local net=$1 port=$2 i
	for ((i = 0; i < 100; i++)); do
		# shellcheck disable=SC2046
		if $(sprefix "$net") ss -Hltn "sport = :$port" 2>/dev/null | grep -q .; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}

declare -A SRV_PORT SRV_LOG
# server KIND NET [CIPHER|all|none] -> SPORT SLOG (started once, then reused)
#   KIND: hpn (hpnsshd, Ciphers limited to CIPHER; "none": all ciphers,
#   NoneEnabled and NoneMacEnabled yes, LogLevel DEBUG2) or a peer
server() {
	local kind=$1 net=$2 what=${3:-all} key addr log pid
	local -a pre
	key=$kind/$net/$what
	if [ -n "${SRV_PORT[$key]:-}" ]; then
		SPORT=${SRV_PORT[$key]} SLOG=${SRV_LOG[$key]}
		return 0
	fi
	addr=$(addr_of "$net")
	read -r -a pre <<< "$(sprefix "$net")"
	next_port
	log=$LOGS/server-$kind-$net-${what//[@.]/_}.log
	: > "$log"
	case $kind in
	hpn|stock)
		local tree=$HPN extra=""
		[ "$kind" = stock ] && tree=$STOCK
		# the automatic thread count is single-threaded below 3 CPUs
		[ "$kind" = hpn ] && extra=$'MTAESThreads 1\n'
		if [ "$what" = none ]; then
			extra+=$'NoneEnabled yes\nNoneMacEnabled yes'
		elif [ "$what" != all ]; then
			extra+="Ciphers $what"
		fi
		local ll=DEBUG1
		[ "$what" = none ] && ll=DEBUG2
		TSSHD_LOGLEVEL=$ll TSSHD_EXTRA=$extra \
		    tsshd_start "$work" "$tree" "$PORT" "$addr" "${pre[@]}" ||
		    die "$kind sshd did not start"
		SSHD_PORTS+=("$PORT")
		# tsshd logs to $work/sshd-PORT.log, copied to $log at the end
		log=$work/sshd-$PORT.log
		SRV_COPY+=("$log|$LOGS/server-$kind-$net-${what//[@.]/_}.log")
		;;
	debian)
		cat > "$work/sshd_config-$PORT" <<-EOF
		Port $PORT
		ListenAddress $addr
		HostKey $work/host_ed25519
		PidFile $work/sshd-$PORT.pid
		AuthorizedKeysFile $work/authorized_keys
		StrictModes no
		PermitRootLogin prohibit-password
		PasswordAuthentication no
		KbdInteractiveAuthentication no
		UsePAM no
		MaxStartups 100:30:200
		Subsystem sftp /usr/lib/openssh/sftp-server
		LogLevel DEBUG1
		EOF
		rm -f "$work/sshd-$PORT.pid"
		"${pre[@]}" /usr/sbin/sshd -f "$work/sshd_config-$PORT" -E "$log" ||
		    die "Debian's sshd did not start: $(tail -5 "$log")"
		SSHD_PORTS+=("$PORT")
		;;
	dropbear)
		local -a w=()
		[ "$net" = path ] && w=(-W "$DROPBEAR_WINDOW")
		"${pre[@]}" unshare -m sh -c 'mount --bind "$0" /root && exec "$@"' \
		    "$DROOT" dropbear -F -E -s -m -r "$work/host.db" \
		    -p "$addr:$PORT" -P "$work/dropbear-$PORT.pid" "${w[@]}" \
		    </dev/null 2> "$log" &
		PIDS+=($!)
		;;
	asyncssh|paramiko)
		rm -f "$work/ready-$PORT"
		"${pre[@]}" $PY "$HERE/pyserver.py" "$kind" --addr "$addr" \
		    --port "$PORT" --hostkey "$work/host_ed25519" \
		    --authorized "$work/id_ed25519.pub" --ready "$work/ready-$PORT" \
		    </dev/null 2> "$log" &
		PIDS+=($!)
		;;
	*) die "server: unknown kind $kind" ;;
	esac
	wait_listen "$net" "$PORT" || die "$kind server ($net, port $PORT) did not start: $(tail -5 "$log")"
	SRV_PORT[$key]=$PORT SRV_LOG[$key]=$log
	SPORT=$PORT SLOG=$log
}

# --- clients -----------------------------------------------------------------

# client_cmd KIND MODE DIR CIPHER NET ADDR PORT LOCAL REMOTE [EXTRA_SSH_OPTS...]
# sets CMD (array), CIN, COUT (stdin/stdout of the command)
client_cmd() {
	local kind=$1 mode=$2 dir=$3 c=$4 net=$5 addr=$6 port=$7 loc=$8 rem=$9
	shift 9
	local ssh scp sftp batch=$work/batch.$RANDOM
	local -a pre opts
	read -r -a pre <<< "$(cprefix "$net")"
	CIN=/dev/null COUT=/dev/null
	case $kind in
	hpn|stock|debian)
		case $kind in
		hpn) ssh=$HPN/ssh scp=$HPN/scp sftp=$HPN/sftp ;;
		stock) ssh=$STOCK/ssh scp=$STOCK/scp sftp=$STOCK/sftp ;;
		debian) ssh=/usr/bin/ssh scp=/usr/bin/scp sftp=/usr/bin/sftp ;;
		esac
		opts=(-F "$work/ssh_config" -c "$c" -v "$@")
		[ "$kind" = hpn ] && opts+=(-oMTAESThreads=1)
		case $mode in
		scp|scp-O)
			local -a o=()
			[ "$mode" = scp-O ] && o=(-O)
			if [ "$dir" = up ]; then
				CMD=("$scp" "${o[@]}" -S "$ssh" "${opts[@]}" -P "$port" "$loc" "$addr:$rem")
			else
				CMD=("$scp" "${o[@]}" -S "$ssh" "${opts[@]}" -P "$port" "$addr:$rem" "$loc")
			fi ;;
		sftp)
			if [ "$dir" = up ]; then echo "put $loc $rem"; else echo "get $rem $loc"; fi > "$batch"
			CMD=("$sftp" -S "$ssh" "${opts[@]}" -P "$port" -b "$batch" "$addr") ;;
		pipe)
			if [ "$dir" = up ]; then
				CMD=("$ssh" "${opts[@]}" -p "$port" "$addr" "cat > $rem") CIN=$loc
			else
				CMD=("$ssh" "${opts[@]}" -p "$port" "$addr" "cat $rem") COUT=$loc
			fi ;;
		esac ;;
	putty)
		opts=(-batch -P "$port" -l root -i "$work/id.ppk" -hostkey "$FP" -noagent)
		case $mode in
		pscp)
			if [ "$dir" = up ]; then
				CMD=(pscp -sftp -q "${opts[@]}" "$loc" "$addr:$rem")
			else
				CMD=(pscp -sftp -q "${opts[@]}" "$addr:$rem" "$loc")
			fi ;;
		psftp)
			if [ "$dir" = up ]; then echo "put $loc $rem"; else echo "get $rem $loc"; fi > "$batch"
			CMD=(psftp "${opts[@]}" -b "$batch" "$addr") ;;
		plink)
			# A (never used) port forwarding takes PuTTY out of its
			# "simple" single-channel mode: it then tunes its window
			# with winadj@putty.projects.tartarus.org requests, which
			# the server must answer (with failure).
			next_port
			opts+=(-L "127.0.0.1:$PORT:127.0.0.1:9")
			if [ "$dir" = up ]; then
				CMD=(plink -ssh "${opts[@]}" "$addr" "cat > $rem") CIN=$loc
			else
				CMD=(plink -ssh "${opts[@]}" "$addr" "cat $rem") COUT=$loc
			fi ;;
		esac
		CMD=(env HOME="$HOMEDIR" "${CMD[@]}") ;;
	dropbear)
		opts=(-p "$port" -l root -i "$work/id.db" -c "$c")
		[ "$net" = path ] && opts+=(-W "$DROPBEAR_WINDOW")
		if [ "$dir" = up ]; then
			CMD=(dbclient "${opts[@]}" "$addr" "cat > $rem") CIN=$loc
		else
			CMD=(dbclient "${opts[@]}" "$addr" "cat $rem") COUT=$loc
		fi
		CMD=(env HOME="$HOMEDIR" "${CMD[@]}") ;;
	asyncssh|paramiko)
		CMD=("$PY" "$HERE/pyclient.py" "$kind" --host "$addr" --port "$port"
		    --user root --key "$work/id_ed25519" --hostkey "$work/host_ed25519.pub"
		    --cipher "$c" --mode "$mode" "$dir" "$loc" "$rem") ;;
	*) die "client: unknown kind $kind" ;;
	esac
	CMD=("${pre[@]}" timeout -k 5 "$XFER_TIMEOUT" "${CMD[@]}")
}

# --- one transfer ------------------------------------------------------------

# xfer ID FILE SHA BYTES LOG SERVER_LOG HPN_SIDE(client|server)
# Runs CMD (client_cmd), checks the copy at FILE; sets X_OK X_RATE X_WALL
# X_PEAK X_MT X_KEX X_WHY, and writes the server log's new part to
# LOG.server.
xfer() {
	local id=$1 file=$2 sha=$3 bytes=$4 log=$5 slog=$6 hpn_side=$7
	local off t0 t1 rc=0 first last i hlog mpid
	X_OK=1 X_RATE='' X_WALL='' X_PEAK='' X_MT='' X_KEX='' X_WHY='' X_WINADJ=0
	rm -f "$file" "$work/times"
	off=$(stat -L -c %s "$slog" 2>/dev/null || echo 0)
	$PY "$HERE/watch.py" "$file" "$bytes" "$XFER_TIMEOUT" "$work/times" &
	mpid=$!
	{ echo "# $id"; printf '#'; printf ' %q' "${CMD[@]}"; echo; echo "# < $CIN > $COUT"; } > "$log"
	t0=$(date +%s.%N)
	# in the background, so that a signal reaches our trap at once
	"${CMD[@]}" < "$CIN" > "$COUT" 2>> "$log" &
	CUR_PIDS=("$mpid" "$!")
	wait "$!" || rc=$?
	t1=$(date +%s.%N)
	for ((i = 0; i < 20; i++)); do kill -0 "$mpid" 2>/dev/null || break; sleep 0.1; done
	kill "$mpid" 2>/dev/null || true
	wait "$mpid" 2>/dev/null || true
	CUR_PIDS=()
	# hpnsshd logs its channel summary as the session ends: wait (bounded)
	if [ "$hpn_side" = server ]; then
		for ((i = 0; i < 30; i++)); do
			tail -c +"$((off + 1))" "$slog" | grep -q ' peak window ' && break
			sleep 0.1
		done
	fi
	tail -c +"$((off + 1))" "$slog" > "$log.server" 2>/dev/null || true
	X_WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	echo "# exit status $rc after $X_WALL s" >> "$log"
	if [ $rc -ne 0 ]; then
		X_OK=0 X_WHY="exit status $rc"
		[ $rc = 124 ] && X_WHY="timed out after $XFER_TIMEOUT s"
	elif [ ! -f "$file" ] || [ "$(stat -c %s "$file")" != "$bytes" ]; then
		X_OK=0 X_WHY="copy has $(stat -c %s "$file" 2>/dev/null || echo no) bytes, not $bytes"
	elif [ "$(sha256sum < "$file" | cut -d' ' -f1)" != "$sha" ]; then
		X_OK=0 X_WHY="sha256 differs"
	fi
	rm -f "$file"
	read -r first last _ < "$work/times" 2>/dev/null || first=0 last=0
	if [ "${first:-0}" -gt 0 ] && [ "${last:-0}" -gt "$first" ]; then
		X_RATE=$(awk -v a="$first" -v b="$last" -v n="$bytes" 'BEGIN { printf "%.1f", n / ((b - a) / 1e9) / 1e6 }')
	else
		X_RATE=$(awk -v w="$X_WALL" -v n="$bytes" 'BEGIN { printf "%.1f", n / w / 1e6 }')
	fi
	# the hpn side's view: peak window, threaded AES-CTR, the kex
	if [ "$hpn_side" = server ]; then hlog=$log.server; else hlog=$log; fi
	X_PEAK=$(sed -n 's/.*: received \([0-9]*\) bytes, sent [0-9]* bytes, peak window \([0-9]*\) .*/\1 \2/p' "$hlog" |
	    awk '$1 > 0 && $2 > m { m = $2 } END { if (m) print m }')
	# (ssh ends its stderr lines with \r\n)
	X_KEX=$(tr -d '\r' < "$hlog" | grep -m1 -o 'kex: client->server cipher: [^ ]* MAC: [^ ]* compression: [^ ]*' |
	    sed 's/.*cipher: //; s/ MAC: / /; s/ compression: / /' || true)
	X_WINADJ=$(grep -c 'request winadj@putty.projects.tartarus.org' "$hlog" || true)
	if grep -q 'hpn_mt_cipher_new: .*worker thread' "$hlog"; then
		X_MT=yes
	elif grep -q 'hpn_mt_.*CPUs: single-threaded' "$hlog"; then
		X_MT=1cpu
	elif grep -q 'hpn_mt_activate: peer sends other messages during a key exchange' "$hlog"; then
		X_MT=held
	else
		X_MT=no
	fi
	return 0
}

mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }

# --- one row: a pair, a cipher, a net; up and down -----------------------------

ROWS=()		# markdown table rows
FAILS=()	# "id|log" of failed transfers
NROWS=0 NFAIL=0

# row CLIENT SERVER CIPHER NET MODE
#   CLIENT or SERVER is "hpn"; the other one is the peer
row() {
	local client=$1 srv=$2 c=$3 net=$4 mode=$5
	local peer hpn_side id addr d loc rem log file up_rate='' down_rate='' peak=''
	local mac='?' mt=- result=ok why=() notes=() skind swhat comp
	if [ "$client" = hpn ]; then peer=$srv hpn_side=client; else peer=$client hpn_side=server; fi
	id=$client-$srv-${c//[@.]/_}-$net
	NROWS=$((NROWS + 1))
	if [ $SECONDS -ge $DEADLINE ]; then
		ROWS+=("| $client | $srv | $c | | $net | $mode | | | | | NOT RUN (time budget) |")
		FAILS+=("$id|")
		NFAIL=$((NFAIL + 1))
		return 0
	fi
	addr=$(addr_of "$net")
	if [ "$srv" = hpn ]; then skind=hpn swhat=$c; else skind=$srv swhat=all; fi
	server "$skind" "$net" "$swhat"
	for d in up down; do
		log=$LOGS/$id-$d.log
		if [ "$d" = up ]; then loc=$SRC rem=$DST/$id.up file=$DST/$id.up
		else loc=$DST/$id.down rem=$SRC file=$DST/$id.down; fi
		client_cmd "$client" "$mode" "$d" "$c" "$net" "$addr" "$SPORT" "$loc" "$rem"
		xfer "$id-$d" "$file" "$SRC_SHA" "$BYTES" "$log" "$SLOG" "$hpn_side"
		if [ "$X_OK" = 1 ]; then
			printf -v "${d}_rate" '%s' "$X_RATE"
		else
			printf -v "${d}_rate" '%s' "FAIL"
			why+=("$d: $X_WHY")
			FAILS+=("$id-$d|$log")
		fi
		if [ -n "$X_KEX" ]; then
			read -r _ mac comp <<< "$X_KEX"
			[ "$mac" = "<implicit>" ] && mac=aead
			[ "$comp" = none ] || mac="$mac +${comp%%@*}"
		fi
		# PuTTY's winadj requests (downloads, non-simple mode)
		if [ "$peer" = putty ] && [ "$mode" = plink ] && [ "$d" = down ] && [ "$X_OK" = 1 ]; then
			if [ "$X_WINADJ" -gt 0 ]; then
				notes+=("$X_WINADJ winadj@putty answered")
			else
				why+=("down: PuTTY sent no winadj@putty requests (simple mode?)")
				FAILS+=("$id-$d|$log")
			fi
		fi
		# the hpn side's receive window: uploads to hpnsshd, downloads to hpn clients
		if { [ "$hpn_side" = server ] && [ "$d" = up ]; } ||
		    { [ "$hpn_side" = client ] && [ "$d" = down ]; }; then
			peak=$X_PEAK
		fi
		# the hpn side must have negotiated the cipher asked for
		if [ "$X_OK" = 1 ] && [ -n "$X_KEX" ] && [ "${X_KEX%% *}" != "$c" ]; then
			why+=("$d: negotiated ${X_KEX%% *}, not $c")
			FAILS+=("$id-$d|$log")
		fi
		case $c in
		aes*-ctr)
			mt=$X_MT
			# hpnsshd starts no key exchange toward AsyncSSH, which
			# opens its channels inside one (hpn_peer_mixes_rekey())
			if [ "$X_OK" = 1 ] && [ "$X_MT" = held ] &&
			    [ "$peer" = asyncssh ] && [ "$hpn_side" = server ]; then
				notes+=("$d: no rekey for the threads toward AsyncSSH")
			elif [ "$X_OK" = 1 ] && [ "$X_MT" != yes ]; then
				why+=("$d: threaded AES-CTR not swapped in on the hpn side")
				FAILS+=("$id-$d|$log")
			fi ;;
		esac
	done
	# the path: the window the hpn side reached
	if [ "$net" = path ] && [ "$down_rate" != FAIL ] && [ "$up_rate" != FAIL ]; then
		if [ -z "$peak" ]; then
			why+=("no peak window line from the hpn side")
			FAILS+=("$id|$LOGS/$id-up.log")
		elif [ "$peak" -le "$STOCK_WINDOW" ] && [ -n "${MUST_GROW[$peer]:-}" ] &&
		    [ "$BYTES" -ge $((16 * STOCK_WINDOW)) ]; then
			why+=("window did not grow past $STOCK_WINDOW (peak $peak)")
			FAILS+=("$id|$LOGS/$id-up.log")
		elif [ "$peak" -le "$STOCK_WINDOW" ]; then
			if [ "$BYTES" -ge $((16 * STOCK_WINDOW)) ]; then
				notes+=("window not grown: slow sender")
			else
				notes+=("window not grown: SIZE too small")
			fi
		elif [ -n "${IS_OPENSSH[$peer]:-}" ] && [ "$peak" -gt "$STOCK_CAP" ]; then
			why+=("window $peak above the $STOCK_CAP cap towards non-HPN OpenSSH")
			FAILS+=("$id|$LOGS/$id-up.log")
		fi
	fi
	if [ ${#why[@]} -gt 0 ]; then
		result="FAIL: $(IFS=';'; echo "${why[*]}")"
		NFAIL=$((NFAIL + 1))
	elif [ ${#notes[@]} -gt 0 ]; then
		result="ok ($(IFS=';'; echo "${notes[*]}"))"
	fi
	local pw=-
	[ -n "$peak" ] && pw="$(mib "$peak") MiB"
	ROWS+=("| $client | $srv | $c | $mac | $net | $mode | $up_rate | $down_rate | $pw | $mt | $result |")
	printf 'interop: %-8s -> %-8s %-30s %-4s %-5s up %7s down %7s MB/s  window %-9s mt %-4s %s\n' \
	    "$client" "$srv" "$c" "$net" "$mode" "$up_rate" "$down_rate" "$pw" "$mt" "$result"
}

# mode_for KIND-MODES-LIST INDEX
mode_for() {
	local -a m
	read -r -a m <<< "$1"
	echo "${m[$(($2 % ${#m[@]}))]}"
}

peer_ciphers() {	# PEER: its ciphers that are in CIPHERS, in CIPHERS' order
	local c out=()
	for c in $CIPHERS; do
		case " ${PEER_CIPHERS[$1]} " in *" $c "*) out+=("$c") ;; esac
	done
	echo "${out[@]}"
}

# --- the matrix ----------------------------------------------------------------

versions() {
	echo "- hpn: $("$HPN/ssh" -V 2>&1)"
	echo "- debian: $(/usr/bin/ssh -V 2>&1)"
	echo "- stock: $("$STOCK/ssh" -V 2>&1)"
	echo "- putty: $(plink -V 2>&1 | head -1)"
	echo "- dropbear: $(dropbear -V 2>&1 | head -1)"
	echo "- asyncssh: $($PY -W ignore -c 'import asyncssh; print(asyncssh.__version__)')," \
	    "paramiko: $($PY -W ignore -c 'import paramiko; print(paramiko.__version__)') ($($PY -V))"
}

say "$HUMAN of random data per transfer; peers: $PEERS; nets: $NETS"
for net in $NETS; do
	if [ "$net" = path ]; then
		say "bringing up the emulated path: $RTT ms, $RATE Mbit/s"
		"$NP" up --name "$NAME" --rtt "$RTT" --rate "$RATE" > "$LOGS/netpath.log" 2>&1 ||
			die "netpath up failed: $(tail -5 "$LOGS/netpath.log")"
		PATH_UP=1
	fi
	for p in $PEERS; do
		read -r -a cs <<< "$(peer_ciphers "$p")"
		[ "$net" = path ] && cs=("$PATH_CIPHER")
		if [ "$net" = path ]; then
			case " ${PEER_CIPHERS[$p]} " in
			*" $PATH_CIPHER "*) ;;
			*) read -r -a cs <<< "${PEER_CIPHERS[$p]}"; cs=("${cs[0]}") ;;
			esac
		fi
		for i in "${!cs[@]}"; do
			row "$p" hpn "${cs[$i]}" "$net" "$(mode_for "${CLIENT_MODES[$p]}" "$i")"
		done
		[ -n "${HAS_SERVER[$p]:-}" ] || continue
		for i in "${!cs[@]}"; do
			row hpn "$p" "${cs[$i]}" "$net" "$(mode_for "${SERVER_MODES[$p]}" "$i")"
		done
	done
done

# --- "none" is never offered to them -------------------------------------------
# hpn clients with NoneEnabled, NoneSwitch and NoneMacEnabled yes against
# each peer server, and each peer client against an hpnsshd that allows
# none (NoneEnabled, NoneMacEnabled; LogLevel DEBUG2): a small upload must
# work, no proposal of the hpn side may contain "none", and nothing may
# negotiate it.  (The peers would refuse none; HPN peers may use it.)

NONE_ROWS=()
# none_check LOG: no "none" in any cipher or MAC proposal, no none negotiated
none_check() {
	if tr -d '\r' < "$1" | grep -E '(ciphers|MACs) (ctos|stoc): ' |
	    sed 's/ \[preauth\]$//; s/.*: //' | tr ',' '\n' | grep -qx none; then
		echo "none offered"
	elif grep -qE 'kex: (client->server|server->client) cipher: none|MAC: none' "$1"; then
		echo "none negotiated"
	fi
}
none_row() {	# CLIENT SERVER
	local client=$1 srv=$2 peer hpn_side id c log mode bad res=ok
	local -a cs
	if [ "$client" = hpn ]; then peer=$srv hpn_side=client; else peer=$client hpn_side=server; fi
	id=none-$client-$srv
	if [ $SECONDS -ge $DEADLINE ]; then
		NONE_ROWS+=("| $client | $srv | | NOT RUN (time budget) |")
		FAILS+=("$id|")
		NFAIL=$((NFAIL + 1))
		return 0
	fi
	read -r -a cs <<< "$(peer_ciphers "$peer")"
	[ ${#cs[@]} -gt 0 ] || read -r -a cs <<< "${PEER_CIPHERS[$peer]}"
	c=${cs[0]}
	log=$LOGS/$id.log
	if [ "$srv" = hpn ]; then
		server hpn loop none
		mode=$(mode_for "${CLIENT_MODES[$client]}" 0)
		client_cmd "$client" "$mode" up "$c" loop 127.0.0.1 "$SPORT" "$SMALL" "$DST/$id"
	else
		server "$srv" loop all
		mode=$(mode_for "${SERVER_MODES[$srv]}" 0)
		client_cmd hpn "$mode" up "$c" loop 127.0.0.1 "$SPORT" "$SMALL" "$DST/$id" \
		    -v -o NoneEnabled=yes -o NoneSwitch=yes -o NoneMacEnabled=yes
	fi
	xfer "$id" "$DST/$id" "$SMALL_SHA" 1048576 "$log" "$SLOG" "$hpn_side"
	if [ "$X_OK" != 1 ]; then
		res="FAIL: $X_WHY"
	else
		if [ "$hpn_side" = server ]; then bad=$(none_check "$log.server"); else bad=$(none_check "$log"); fi
		if [ -n "$bad" ]; then
			res="FAIL: $bad"
		elif [ "$hpn_side" = server ] && ! grep -q 'ciphers ctos: ' "$log.server"; then
			res="FAIL: no proposal logged (LogLevel DEBUG2?)"
		elif [ "$hpn_side" = client ] && ! grep -q 'ciphers ctos: ' "$log"; then
			res="FAIL: no proposal logged (-vv?)"
		fi
	fi
	if [ "$res" != ok ]; then
		FAILS+=("$id|$log")
		NFAIL=$((NFAIL + 1))
	fi
	if [ "$res" = ok ] && [ "$hpn_side" = client ] &&
	    grep -q 'NoneSwitch: .*staying encrypted' "$log"; then
		res="ok (hpnssh: \"$(grep -m1 -o 'NoneSwitch: .*staying encrypted' "$log")\")"
	fi
	NONE_ROWS+=("| $client | $srv | $mode, $c | $res |")
	say "none: $client -> $srv ($mode, $c): $res"
}
# The control: between HPN peers none is offered and used, and the check
# must see it (else it is blind, e.g. to a changed log format).
none_control() {
	local id=none-control log res
	log=$LOGS/$id.log
	server hpn loop none
	client_cmd hpn pipe up aes128-ctr loop 127.0.0.1 "$SPORT" "$SMALL" "$DST/$id" \
	    -v -o NoneEnabled=yes -o NoneSwitch=yes -o NoneMacEnabled=yes
	xfer "$id" "$DST/$id" "$SMALL_SHA" 1048576 "$log" "$SLOG" client
	if [ "$X_OK" != 1 ]; then
		res="FAIL: $X_WHY"
	elif [ -z "$(none_check "$log")" ] || [ -z "$(none_check "$log.server")" ]; then
		res="FAIL: none not seen between HPN peers: the check is blind"
	else
		res="ok: none offered and used, as it should be between HPN peers"
	fi
	if [ "${res%%:*}" = FAIL ]; then
		FAILS+=("$id|$log")
		NFAIL=$((NFAIL + 1))
	fi
	NONE_ROWS+=("| hpn | hpn (control) | pipe, aes128-ctr | $res |")
	say "none: control hpn -> hpn: $res"
}
if [[ " $NETS " == *" loop "* ]]; then
	none_control
	for p in $PEERS; do
		none_row "$p" hpn
		[ -n "${HAS_SERVER[$p]:-}" ] && none_row hpn "$p"
	done
fi

# --- results -----------------------------------------------------------------

ELAPSED=$((SECONDS - T0))
{
	echo "# Interop matrix"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs; load before: \`${LOAD_BEFORE# }\`"
	echo
	versions
	echo
	echo "$HUMAN of random data each way, SHA-256 compared.  loop: 127.0.0.1;" \
	    "path: bench/netpath, $RTT ms RTT, $RATE Mbit/s.  MB/s = 10^6 bytes/s from" \
	    "the first to the last byte written (connection set-up excluded)." \
	    "window: the peak receive window of the hpn side where it received" \
	    "(up to hpnsshd, down to an hpn client; starts at 2 MiB)." \
	    "mt: threaded AES-CTR on the hpn side (MTAESThreads 1; 1cpu: too few CPUs, single-threaded; held: hpnsshd started no key exchange toward AsyncSSH for it)." \
	    "MAC: as negotiated (aead: GCM/ChaCha20's own; +zlib: compression)." \
	    "mode: scp/sftp/pipe (ssh 'cat'), scp-O (legacy scp), PuTTY's" \
	    "pscp/psftp/plink (plink with an idle -L forward: winadj requests)," \
	    "pyclient.py's sftp/pipe."
	echo
	echo "| client | server | cipher | MAC | net | mode | up MB/s | down MB/s | window | mt | result |"
	echo "|---|---|---|---|---|---|---:|---:|---:|---|---|"
	printf '%s\n' "${ROWS[@]}"
	if [ ${#NONE_ROWS[@]} -gt 0 ]; then
		echo
		echo "\"none\" never offered to non-HPN peers (hpn client: NoneEnabled," \
		    "NoneSwitch, NoneMacEnabled yes; hpnsshd: NoneEnabled, NoneMacEnabled yes;" \
		    "1 MiB upload on loopback):"
		echo
		echo "| client | server | mode, cipher | result |"
		echo "|---|---|---|---|"
		printf '%s\n' "${NONE_ROWS[@]}"
	fi
	echo
	if [ "$NFAIL" -eq 0 ]; then
		echo "All $NROWS pairs passed (and ${#NONE_ROWS[@]} none checks) in $ELAPSED s."
	else
		echo "**$NFAIL of $((NROWS + ${#NONE_ROWS[@]})) checks FAILED** ($ELAPSED s)."
	fi
} > "$OUT/results.md"
echo
cat "$OUT/results.md"
echo
say "results: $OUT/results.md, logs: $LOGS/ ($ELAPSED s)"

if [ "$NFAIL" -gt 0 ]; then
	declare -A shown=()
	for f in "${FAILS[@]}"; do
		id=${f%%|*} log=${f#*|}
		[ -n "$log" ] && [ -z "${shown[$log]:-}" ] || continue
		shown[$log]=1
		echo
		echo "===== $id: tail of $log ====="
		tail -n 25 "$log"
		if [ -s "$log.server" ]; then
			echo "----- server log ($log.server) -----"
			tail -n 25 "$log.server"
		fi
	done
	exit 1
fi
