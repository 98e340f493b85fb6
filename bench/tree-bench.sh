#!/bin/bash
# bench/tree-bench.sh - trees of files and single files over the emulated
# long fat path (bench/netpath): hpnscp/hpnsftp vs stock scp/sftp vs rsync
# -e hpnssh vs iperf3.  Run as root; `make bench-tree` calls it.  Options
# are environment variables (bench/README.md, "Trees of files"):
#
#   RTTS="100 0"  RATE=1000 (Mbit/s)  MTU=9000  REPS=3
#   CIPHER=aes128-gcm@openssh.com
#   TREES="100x1M 1000x64K"  (COUNTxSIZE, or "real": bench/gen-tree.py's
#   tree shaped like a source tree, 8000 files in 601 directories)
#   BIG=1G ("" skips the big file)
#   MODES="scp-up scp-down sftp-get"   RSYNC="rsync-up rsync-down" ("" skips)
#   PIPE=pipe-up ("" skips): the same bytes through a plain hpnssh pipe
#   (tar for a tree, cat for the big file), the ceiling any file copy over
#   one SSH connection has on this path; pipe-down the other way
#   RESUME="scp-up scp-down" ("" skips): the big file's copy killed
#   (SIGKILL to scp and its ssh) once half of it is there, then finished
#   with scp -Z; both commands' wall clock against the uninterrupted copy
#   of the same repetition, and the bytes the resume moved over the path
#   against the part that was missing
#   STOCK_REPS=1   STOCK_CAP=90 (s: a stock tree run longer than this is
#   cut off and reported with the bytes it moved)
#   PREV_TREE=another build of ours: its clients toward its own sshd
#   (port 2213) beside ours (pair "prev") in every repetition, trees and
#   the big file, MODES only; TOSTOCK=1: our clients (and PREV_TREE's)
#   toward the stock sshd
#   too (pairs "hpn-s", "prev-s").  The report's targets (tree-report.sh)
#   compare them: no slower than the build before, here and toward stock
#   ONEBYTE=5 (1-byte scp runs per pair and direction, 0 skips)
#   HPN_TREE STOCK_TREE  OUT=build/bench-tree/<timestamp>  NAME=hpntree
#   QUIET_LOAD=3*nproc QUIET_WAIT=300  DRY_RUN=1: print the plan only
#
# Every figure is whole-command wall clock minus the set-up time (the median
# of `ssh host true` of that pair in that repetition), as a fraction of
# iperf3 moving the same bytes (-n BYTES, one TCP connection); beside it the
# first-to-last byte time at the receiver (`meter watchtree`).  Every copy
# is checked by the SHA-256 of every file.  Results: OUT/results.csv,
# OUT/results.md.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/bench/lib.sh"

RTTS=${RTTS:-"100 0"}
RATE=${RATE:-1000}
MTU=${MTU:-9000}
REPS=${REPS:-3}
CIPHER=${CIPHER:-aes128-gcm@openssh.com}
TREES=${TREES-"100x1M 1000x64K"}
BIG=${BIG-1G}
MODES=${MODES:-"scp-up scp-down sftp-get"}
RSYNC=${RSYNC-"rsync-up rsync-down"}
PIPE=${PIPE-pipe-up}
RESUME=${RESUME-"scp-up scp-down"}
STOCK_REPS=${STOCK_REPS:-1}
PREV_TREE=${PREV_TREE:-}
TOSTOCK=${TOSTOCK:-0}
STOCK_CAP=${STOCK_CAP:-90}
ONEBYTE=${ONEBYTE:-5}
OSV=$(sed -n 's/^OPENSSH_VERSION=//p' "$TOP/upstream/openssh.mk")
HPN_TREE=${HPN_TREE:-$TOP/build/hpn/openssh-$OSV}
STOCK_TREE=${STOCK_TREE:-$TOP/build/stock/openssh-$OSV}
NAME=${NAME:-hpntree}
OUT=${OUT:-$TOP/build/bench-tree/$(date +%Y%m%d-%H%M%S)}
QUIET_LOAD=${QUIET_LOAD-$((3 * $(nproc)))}
QUIET_WAIT=${QUIET_WAIT:-300}
IPERF_PORT=5311
declare -A PORT=([hpn]=2211 [stock]=2212 [prev]=2213)
# a pair: whose clients (tree-X) toward whose sshd (ssh_config-Y)
declare -A PT=([hpn]=hpn [stock]=stock [prev]=prev [hpn-s]=hpn [prev-s]=prev)
declare -A PC=([hpn]=hpn [stock]=stock [prev]=prev [hpn-s]=stock [prev-s]=stock)
EXTRA=
[ -z "$PREV_TREE" ] || EXTRA=prev
[ "$TOSTOCK" != 1 ] || EXTRA="$EXTRA hpn-s${PREV_TREE:+ prev-s}"
[ -z "$PREV_TREE" ] || [ -x "$PREV_TREE/scp" ] || bl_die "PREV_TREE: no scp in $PREV_TREE"


[ "$(id -u)" -eq 0 ] || bl_die "run as root (network namespaces, sshd)"
"$TOP/scripts/deps.sh" check bench
command -v rsync >/dev/null || [ -z "$RSYNC" ] || bl_die "rsync missing (make deps)"
[[ $REPS =~ ^[0-9]+$ ]] && [ "$REPS" -ge 1 ] && [ "$REPS" -le 20 ] || bl_die "REPS: 1-20"
[[ $STOCK_REPS =~ ^[0-9]+$ ]] || bl_die "STOCK_REPS: a number"
[[ $STOCK_CAP =~ ^[0-9]+$ ]] && [ "$STOCK_CAP" -ge 10 ] || bl_die "STOCK_CAP: seconds, >= 10"
[[ $ONEBYTE =~ ^[0-9]+$ ]] || bl_die "ONEBYTE: a number"
for r in $RTTS; do [[ $r =~ ^[0-9]+$ ]] || bl_die "RTTS: integers (ms), not '$r'"; done
for t in $TREES; do [[ $t =~ ^[0-9]+x[0-9]+[KMG]?$ ]] || [ "$t" = real ] || bl_die "TREES: COUNTxSIZE or real, not '$t'"; done
for m in $MODES $RSYNC $PIPE; do
	case $m in scp-up|scp-down|sftp-get|sftp-put|rsync-up|rsync-down|pipe-up|pipe-down) ;;
	*) bl_die "MODES/RSYNC: unknown mode '$m'" ;; esac
done
for m in $RESUME; do
	case $m in scp-up|scp-down) ;; *) bl_die "RESUME: scp-up or scp-down, not '$m'" ;; esac
	[[ " $MODES " = *" $m "* ]] || bl_die "RESUME: $m needs $m in MODES (the uninterrupted copy)"
done
[ -z "$RESUME" ] || [ -n "$BIG" ] || bl_die "RESUME needs BIG"
BIGB=0
[ -z "$BIG" ] || BIGB=$(bl_bytes "$BIG")
need=$BIGB
for t in $TREES; do
	if [ "$t" = real ]; then need=$((need + 140000000)); continue; fi
	need=$((need + ${t%x*} * $(bl_bytes "${t#*x}")))
done
avail=$(df -k --output=avail /dev/shm | tail -n 1)
[ $((avail * 1024)) -gt $((need * 3)) ] || bl_die "/dev/shm has too little room for 3 x $need bytes"

# the plan and its rough length
ncases=$(( $(wc -w <<<"$TREES") * ($(wc -w <<<"$MODES") + $(wc -w <<<"$RSYNC") + $(wc -w <<<"$PIPE")) ))
echo "tree-bench: RTTS=\"$RTTS\" RATE=$RATE MTU=$MTU REPS=$REPS CIPHER=$CIPHER"
echo "tree-bench: TREES=\"$TREES\" BIG=$BIG MODES=\"$MODES\" RSYNC=\"$RSYNC\" PIPE=\"$PIPE\" RESUME=\"$RESUME\""
echo "tree-bench: stock in $STOCK_REPS of $REPS repetitions, each tree run cut at ${STOCK_CAP}s; 1-byte scp x $ONEBYTE"
[ -z "$EXTRA" ] || echo "tree-bench: pairs beside hpn in every repetition: $EXTRA (PREV_TREE=$PREV_TREE)"
echo "tree-bench: $ncases tree runs per pair and repetition; roughly $(( ($(wc -w <<<"$RTTS") * (REPS * (ncases * 8 * (1 + $(wc -w <<<"$EXTRA")) + 60 + BIGB / 30000000 * (1 + $(wc -w <<<"$EXTRA"))) + STOCK_REPS * $(wc -w <<<"$TREES") * $(wc -w <<<"$MODES") * STOCK_CAP)) / 60 )) min at most"
[ "${DRY_RUN:-0}" = 1 ] && exit 0

work=$(mktemp -d "/dev/shm/$NAME.XXXXXX")
chmod 755 "$work"
path_up=0 iperf_pid= watch_pid= fg_pid=
exec 3>&1 4>&2
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	trap '' PIPE
	exec 1>&3 2>&4
	[ -n "$fg_pid" ] && kill "$fg_pid" 2>/dev/null
	[ -n "$watch_pid" ] && kill "$watch_pid" 2>/dev/null
	[ -n "$iperf_pid" ] && kill "$iperf_pid" 2>/dev/null
	bl_stop_server "$work" "${PORT[hpn]}" 2>/dev/null || true
	bl_stop_server "$work" "${PORT[stock]}" 2>/dev/null || true
	[ -z "$PREV_TREE" ] || bl_stop_server "$work" "${PORT[prev]}" 2>/dev/null || true
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
exec > >(trap '' INT TERM; exec tee -a "$OUT/run.log") 2>&1
bl_meter "$work"
bl_netpath_snapshot "$work/netpath"
bl_snapshot_tree "$HPN_TREE" "$work/tree-hpn"
bl_snapshot_tree "$STOCK_TREE" "$work/tree-stock"
[ -z "$PREV_TREE" ] || bl_snapshot_tree "$PREV_TREE" "$work/tree-prev"
tsshd_setup "$work" >/dev/null
{
	echo "- date: $(date -Is), $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), kernel $(uname -r)"
	echo "- load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "- path: bench/netpath, $RATE Mbit/s, MTU $MTU, RTTs $RTTS ms; $CIPHER; tmpfs (/dev/shm) at both ends"
	echo "- hpn: \`$("$work/tree-hpn/ssh" -V 2>&1)\`; stock: \`$("$work/tree-stock/ssh" -V 2>&1)\`; $(rsync --version | head -n 1)"
	[ -z "$EXTRA" ] || echo "- pairs beside: $EXTRA (prev: the clients of $PREV_TREE toward its sshd; -s: toward the stock sshd)"
} > "$OUT/meta.md"
# resume rows: wall_s both commands, net_s the -Z one, data_s the killed one,
# frac both against the uninterrupted copy, moved_bytes over the path
echo "rtt_ms,case,bytes,files,pair,rep,status,wall_s,setup_s,net_s,data_s,iperf_s,frac,moved_bytes,load1,missing_bytes" > "$CSV"

# --- the data
declare -A TBYTES TFILES WALL
for t in $TREES; do
	if [ "$t" = real ]; then
		python3 "$TOP/bench/gen-tree.py" "$work/src/real" > "$work/gen-tree.out"
		TBYTES[$t]=$(find "$work/src/real" -type f -printf '%s\n' | awk '{ n += $1 } END { print n }')
		TFILES[$t]=$(find "$work/src/real" -type f | wc -l)
		echo "- tree \"real\" (bench/gen-tree.py): $(cat "$work/gen-tree.out")" >> "$OUT/meta.md"
		continue
	fi
	n=${t%x*} sz=$(bl_bytes "${t#*x}")
	mkdir -p "$work/src/$t"
	for ((i = 1; i <= n; i++)); do
		head -c "$sz" /dev/urandom > "$work/src/$t/f$i"
	done
	TBYTES[$t]=$((n * sz)) TFILES[$t]=$n
done
if [ "$BIGB" -gt 0 ]; then
	mkdir -p "$work/src/big"
	head -c "$BIGB" /dev/urandom > "$work/src/big/big"
	TBYTES[big]=$BIGB TFILES[big]=1
fi
printf x > "$work/onebyte"
treesum() { (cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum); }
declare -A TSUM
for t in ${!TBYTES[@]}; do TSUM[$t]=$(treesum "$work/src/$t" | sha256sum | cut -c1-16); done

wait_quiet() {
	local i l
	[ -n "$QUIET_LOAD" ] || return 0
	for ((i = 0; i < QUIET_WAIT; i += 5)); do
		l=$(cut -d' ' -f1 /proc/loadavg)
		awk -v l="$l" -v q="$QUIET_LOAD" 'BEGIN { exit !(l <= q) }' && break
		sleep 5
	done
}
ns() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }

copts() { echo "-F $work/ssh_config-${PC[$1]} -o Ciphers=$CIPHER"; }

# setup PAIR: median of three `ssh host true`
setup_time() {
	local p=$1 i s v=""
	for i in 1 2 3; do
		s=$(ns)
		"$NP" exec client --name "$NAME" -- "$work/tree-${PT[$p]}/ssh" $(copts "$p") bench true ||
		    bl_die "ssh host true failed ($p)"
		v="$v $(secs "$s" "$(ns)")"
	done
	echo "$v" | median
}

# iperf3 BYTES: seconds (its own receiver figure)
iperf_time() {
	local bytes=$1 saddr i s
	saddr=$("$NP" addr server --name "$NAME")
	"$NP" exec server --name "$NAME" -- iperf3 -s -1 -B "$saddr" -p "$IPERF_PORT" \
	    > "$work/iperf3-server.log" 2>&1 &
	iperf_pid=$!
	for ((i = 0; i < 50; i++)); do
		"$NP" exec server --name "$NAME" -- ss -Hltn "sport = :$IPERF_PORT" | grep -q . && break
		sleep 0.1
	done
	"$NP" exec client --name "$NAME" -- timeout -k 5 120 iperf3 -c "$saddr" \
	    -p "$IPERF_PORT" -n "$bytes" -J > "$work/iperf3.json" 2>&1 || true
	wait "$iperf_pid" 2>/dev/null || true
	iperf_pid=
	s=$(jq -r '.end.sum_received.seconds // 0' "$work/iperf3.json" 2>/dev/null || echo 0)
	echo "$s"
}

# command_for CASE MODE PAIR: the copy's command line in CMD (CASE from
# $work/src to $work/dst)
command_for() {
	local c=$1 mode=$2 pair=$3 t=$work/tree-${PT[$3]} src=$work/src/$1 dst=$work/dst r=-r
	# the big file alone, not a tree of one
	[ "$c" = big ] && src=$work/src/big/big r=
	case $mode in
	scp-up) CMD=("$t/scp" -q $r -S "$t/ssh" $(copts "$pair") "$src" "bench:$dst/") ;;
	scp-down) CMD=("$t/scp" -q $r -S "$t/ssh" $(copts "$pair") "bench:$src" "$dst/") ;;
	sftp-get) echo "get $r $src $dst/" > "$work/batch"
		CMD=("$t/sftp" -q -S "$t/ssh" $(copts "$pair") -b "$work/batch" bench) ;;
	sftp-put) echo "put $r $src $dst/" > "$work/batch"
		CMD=("$t/sftp" -q -S "$t/ssh" $(copts "$pair") -b "$work/batch" bench) ;;
	rsync-up) CMD=(rsync -a -e "$t/ssh $(copts "$pair")" "$src" "bench:$dst/") ;;
	rsync-down) CMD=(rsync -a -e "$t/ssh $(copts "$pair")" "bench:$src" "$dst/") ;;
	pipe-up) if [ "$c" = big ]; then
			CMD=(sh -c "exec $t/ssh $(copts "$pair") bench 'cat > $dst/big' < $src")
		else
			CMD=(sh -c "tar -C $work/src -cf - $c | $t/ssh $(copts "$pair") bench 'tar -C $dst -xf -'")
		fi ;;
	pipe-down) if [ "$c" = big ]; then
			CMD=(sh -c "$t/ssh $(copts "$pair") bench 'cat $src' > $dst/big")
		else
			CMD=(sh -c "$t/ssh $(copts "$pair") bench 'tar -C $work/src -cf - $c' | tar -C $dst -xf -")
		fi ;;
	esac
}

# transfer RTT CASE MODE PAIR REP SETUP IPERF: one timed copy, one CSV row
transfer() {
	local rtt=$1 c=$2 mode=$3 pair=$4 rep=$5 setup=$6 ip=$7
	local bytes=${TBYTES[$c]} files=${TFILES[$c]} dst=$work/dst
	local to=600 status=OK s e wall net data="" frac="" moved load first last
	local ends=""
	local got=$work/dst/$c
	local -a cmd
	[ "$c" = big ] && got=$work/dst
	[ "$pair" = stock ] && [ "$rtt" != 0 ] && [ "$c" != big ] && to=$STOCK_CAP
	rm -rf "$dst" "$work/times"
	mkdir -p "$dst"
	command_for "$c" "$mode" "$pair"
	cmd=("${CMD[@]}")
	wait_quiet
	load=$(cut -d' ' -f1 /proc/loadavg)
	"$work/meter" watchtree "$dst" "$bytes" "$((to + 5))" "$work/times" &
	watch_pid=$!
	s=$(ns)
	"$NP" exec client --name "$NAME" -- timeout -k 5 "$to" "${cmd[@]}" \
	    < /dev/null > "$work/client.out" 2>&1 &
	fg_pid=$!
	wait "$fg_pid" || status=FAIL:exit$?
	e=$(ns)
	fg_pid=
	kill "$watch_pid" 2>/dev/null || true
	wait "$watch_pid" 2>/dev/null || true
	watch_pid=
	wall=$(secs "$s" "$e")
	[ "$status" = FAIL:exit124 ] && status=CAPPED
	moved=$(find "$dst" -type f -printf '%s\n' | awk '{ n += $1 } END { print n + 0 }')
	if [ "$status" = OK ]; then
		[ "$(treesum "$got" | sha256sum | cut -c1-16)" = "${TSUM[$c]}" ] ||
		    status=FAIL:sha256
	fi
	net=$(awk -v w="$wall" -v s="$setup" 'BEGIN { printf "%.3f", w - s }')
	if read -r first last _ < "$work/times" 2>/dev/null && [ "$first" != 0 ] &&
	    [ "$last" != 0 ]; then
		data=$(secs "$first" "$last")
		# before the first byte landed, after the last (set-up in
		# the first): where a copy's time beyond its bytes goes
		ends=" (start to first byte $(secs "$s" "$first") s, last byte to exit $(secs "$last" "$e") s)"
	fi
	case $status in
	OK) frac=$(awk -v i="$ip" -v n="$net" 'BEGIN { if (i > 0 && n > 0) printf "%.3f", i / n }') ;;
	CAPPED) # the fraction of what moved in the time it had
		frac=$(awk -v i="$ip" -v n="$net" -v m="$moved" -v b="$bytes" \
		    'BEGIN { if (i > 0 && n > 0) printf "%.3f", i * m / b / n }') ;;
	esac
	echo "$rtt,$c,$bytes,$files,$mode:$pair,$rep,$status,$wall,$setup,$net,$data,$ip,$frac,$moved,$load" >> "$CSV"
	printf "rtt %3s %-9s %-10s %-6s rep %d: %-8s wall %7.2f s, - set-up = %7.2f s, data %6s s%s, %s of iperf3 (%s s); load %s\n" \
	    "$rtt" "$c" "$mode" "$pair" "$rep" "$status" "$wall" "$net" "${data:--}" "$ends" "${frac:--}" "$ip" "$load"
	[ "$status" = OK ] || [ "$status" = CAPPED ] || sed 's/^/    client: /' "$work/client.out" | head -n 5
	WALL[$c:$mode:$pair]=$wall
	rm -rf "$dst"
}

# bytes through the client namespace's interfaces, both ways
path_bytes() {
	"$NP" exec client --name "$NAME" -- cat /proc/net/dev |
	    awk -F'[: ]+' 'NR > 2 && $2 != "lo" { n += $3 + $11 } END { printf "%.0f\n", n }'
}

# resume RTT MODE REP SETUP: the big file's copy killed half-way, then -Z
resume() {
	local rtt=$1 mode=$2 rep=$3 setup=$4 dst=$work/dst
	local s e i have w1 w2 b0 b1 moved status=OK load
	local -a cmd
	rm -rf "$dst"
	mkdir -p "$dst"
	command_for big "$mode" hpn
	cmd=("${CMD[@]}")
	wait_quiet
	load=$(cut -d' ' -f1 /proc/loadavg)
	s=$(ns)
	# setsid: scp leads a process group of its own, with its ssh
	"$NP" exec client --name "$NAME" -- setsid "${cmd[@]}" \
	    < /dev/null > "$work/client.out" 2>&1 &
	fg_pid=$!
	sleep 0.2
	[ "$(ps -o pgid= -p "$fg_pid" | tr -d ' ')" = "$fg_pid" ] ||
	    bl_die "resume: scp is not the leader of its process group"
	for ((i = 0; i < 1200; i++)); do
		have=$(stat -c %s "$dst/big" 2>/dev/null || echo 0)
		[ "$have" -ge $((BIGB / 2)) ] && break
		kill -0 "$fg_pid" 2>/dev/null || break
		sleep 0.05
	done
	kill -KILL -- "-$fg_pid" 2>/dev/null || status=FAIL:ended-early
	wait "$fg_pid" 2>/dev/null || true
	e=$(ns)
	fg_pid=
	w1=$(secs "$s" "$e")
	sleep 1		# the server side sees the connection go
	have=$(stat -c %s "$dst/big" 2>/dev/null || echo 0)
	b0=$(path_bytes)
	s=$(ns)
	"$NP" exec client --name "$NAME" -- timeout -k 5 600 "${cmd[0]}" -Z "${cmd[@]:1}" \
	    < /dev/null > "$work/client.out" 2>&1 &
	fg_pid=$!
	wait "$fg_pid" || status=FAIL:exit$?
	e=$(ns)
	fg_pid=
	w2=$(secs "$s" "$e")
	b1=$(path_bytes)
	moved=$((b1 - b0))
	if [ "$status" = OK ]; then
		[ "$(treesum "$dst" | sha256sum | cut -c1-16)" = "${TSUM[big]}" ] ||
		    status=FAIL:sha256
	fi
	echo "$rtt,big,$BIGB,1,resume-$mode:hpn,$rep,$status,$(awk -v a="$w1" -v b="$w2" 'BEGIN { printf "%.3f", a + b }'),$setup,$w2,$w1,,$(awk -v a="$w1" -v b="$w2" -v u="${WALL[big:$mode:hpn]:-0}" 'BEGIN { if (u > 0) printf "%.3f", (a + b) / u }'),$moved,$load,$((BIGB - have))" >> "$CSV"
	awk -v r="$rtt" -v m="$mode" -v rep="$rep" -v st="$status" -v a="$w1" -v b="$w2" \
	    -v u="${WALL[big:$mode:hpn]:-0}" -v h="$have" -v n="$BIGB" -v mv="$moved" -v l="$load" \
	    -v su="$setup" 'BEGIN {
		printf "rtt %3s big       resume-%-8s rep %d: %-8s killed after %.2f s with %.1f%% there, -Z %.2f s: %.2f s = %.2f x the uninterrupted %.2f s (beyond set-up: %.2f x); moved %.1f MB for %.1f MB missing (%.3f); load %s\n",
		    r, m, rep, st, a, 100 * h / n, b, a + b, (u > 0 ? (a + b) / u : 0), u,
		    (u > su ? (a + b - 2 * su) / (u - su) : 0), mv / 1e6, (n - h) / 1e6, (n > h ? mv / (n - h) : 0), l }'
	[ "$status" = OK ] || sed 's/^/    client: /' "$work/client.out" | head -n 5
	rm -rf "$dst"
}

# onebyte RTT PAIR REP SETUP: 1-byte scp up and down, ONEBYTE times each
onebyte() {
	local rtt=$1 pair=$2 rep=$3 setup=$4 t=$work/tree-$2 dir i s v
	for dir in up down; do
		v=""
		for ((i = 0; i < ONEBYTE; i++)); do
			rm -f "$work/onebyte.got"
			s=$(ns)
			if [ $dir = up ]; then
				"$NP" exec client --name "$NAME" -- "$t/scp" -q -S "$t/ssh" $(copts "$pair") \
				    "$work/onebyte" "bench:$work/onebyte.got"
			else
				"$NP" exec client --name "$NAME" -- "$t/scp" -q -S "$t/ssh" $(copts "$pair") \
				    "bench:$work/onebyte" "$work/onebyte.got"
			fi || bl_log "1-byte scp $dir ($pair) failed"
			cmp -s "$work/onebyte" "$work/onebyte.got" || bl_log "1-byte scp $dir ($pair): wrong copy"
			v="$v $(secs "$s" "$(ns)")"
		done
		v=$(echo "$v" | median)
		awk -v w="$v" -v s="$setup" -v r="$rtt" -v p="$pair" -v d="$dir" -v rep="$rep" 'BEGIN {
			printf "rtt %3s 1-byte scp %-4s %-6s rep %d: median %.3f s, beyond ssh host true %.3f s", r, d, p, rep, w, w - s
			if (r > 0) printf " = %.1f round trips", (w - s) * 1000 / r
			printf "\n" }'
		echo "$rtt,onebyte,1,1,scp-$dir:$pair,$rep,OK,$v,$setup,$(awk -v w="$v" -v s="$setup" 'BEGIN { printf "%.3f", w - s }'),,,,1,$(cut -d' ' -f1 /proc/loadavg)" >> "$CSV"
	done
}

# --- the runs
for rtt in $RTTS; do
	echo
	echo "tree-bench: ---- RTT $rtt ms ----"
	"$NP" up --name "$NAME" --rtt "$rtt" --rate "$RATE" --mtu "$MTU"
	path_up=1
	"$NP" validate --name "$NAME" > "$OUT/validate-rtt$rtt.txt" 2>&1 ||
	    echo "tree-bench: path validation at RTT $rtt FAILED (figures suspect)"
	grep '^RESULT' "$OUT/validate-rtt$rtt.txt" | sed "s/^RESULT/- validation at RTT $rtt ms:/" >> "$OUT/meta.md" || true
	bl_start_server "$work" hpn "$work/tree-hpn" "${PORT[hpn]}" "$NAME" || bl_die "hpn sshd did not start"
	bl_start_server "$work" stock "$work/tree-stock" "${PORT[stock]}" "$NAME" || bl_die "stock sshd did not start"
	[ -z "$PREV_TREE" ] || bl_start_server "$work" prev "$work/tree-prev" "${PORT[prev]}" "$NAME" ||
	    bl_die "the previous build's sshd did not start"
	for ((rep = 1; rep <= REPS; rep++)); do
		echo "tree-bench: rep $rep at RTT $rtt: $(uptime)"
		declare -A IP=()
		for c in ${!TBYTES[@]}; do
			IP[$c]=$(iperf_time "${TBYTES[$c]}")
			echo "rtt $rtt iperf3 -n ${TBYTES[$c]} ($c): ${IP[$c]} s"
			echo "$rtt,$c,${TBYTES[$c]},${TFILES[$c]},iperf3,$rep,OK,,,${IP[$c]},,${IP[$c]},1,${TBYTES[$c]},$(cut -d' ' -f1 /proc/loadavg)" >> "$CSV"
		done
		pairs="hpn $EXTRA"
		[ "$rep" -le "$STOCK_REPS" ] && pairs="$pairs stock"
		declare -A SU=()
		for p in hpn stock $EXTRA; do
			SU[$p]=$(setup_time "$p")
			echo "rtt $rtt ssh host true ($p): ${SU[$p]} s (median of 3)"
			echo "$rtt,setup,0,0,true:$p,$rep,OK,${SU[$p]},${SU[$p]},0,,,,0,$(cut -d' ' -f1 /proc/loadavg)" >> "$CSV"
		done
		if [ "$ONEBYTE" -gt 0 ]; then
			for p in hpn stock; do onebyte "$rtt" "$p" "$rep" "${SU[$p]}"; done
		fi
		for c in $TREES; do
			for m in $MODES; do
				for p in $pairs; do
					transfer "$rtt" "$c" "$m" "$p" "$rep" "${SU[$p]}" "${IP[$c]}"
				done
			done
			for m in $RSYNC $PIPE; do
				transfer "$rtt" "$c" "$m" hpn "$rep" "${SU[hpn]}" "${IP[$c]}"
			done
		done
		if [ "$BIGB" -gt 0 ]; then
			WALL=()
			for m in $MODES $PIPE; do
				transfer "$rtt" big "$m" hpn "$rep" "${SU[hpn]}" "${IP[big]}"
			done
			for p in $EXTRA; do
				for m in $MODES; do
					transfer "$rtt" big "$m" "$p" "$rep" "${SU[$p]}" "${IP[big]}"
				done
			done
			for m in $RESUME; do
				resume "$rtt" "$m" "$rep" "${SU[hpn]}"
			done
		fi
	done
	bl_stop_server "$work" "${PORT[hpn]}"
	bl_stop_server "$work" "${PORT[stock]}"
	[ -z "$PREV_TREE" ] || bl_stop_server "$work" "${PORT[prev]}"
	"$NP" down --name "$NAME"
	path_up=0
done
echo "- load at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/meta.md"
"$TOP/bench/tree-report.sh" "$OUT"
