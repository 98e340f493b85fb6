#!/bin/bash
# bench/cpu-count.sh - what a byte costs each end, counted rather than timed:
# user-space instructions (valgrind callgrind), bytes copied in user space
# (valgrind DHAT, copy mode), system calls and context switches (perf
# trace), per GiB moved, for the hpn and the stock build with the same
# cipher.  Counts do not depend on the machine's load the way timings do
# (instructions not at all; system calls somewhat, since they follow how
# much data each read finds).  Run as root; `make bench-cpu` calls it, or
# on its own:
#
#   sudo bench/cpu-count.sh
#
#   CIPHERS="aes128-gcm@openssh.com chacha20-poly1305@openssh.com"
#   MODES="pipe-up pipe-down"   TREES="stock hpn"
#   COUNT_SIZE=64M  (valgrind runs)  SYS_SIZE=256M  SYS_REPS=3 (perf runs)
#   KINDS="cg dhat perf"   HPN_TREE STOCK_TREE   OUT=build/bench/count-<time>
#   KEEP=1  (the tools' own files kept in OUT/files, for callgrind_annotate
#            --inclusive=yes --tree=caller and the like)
#
# Every figure is the run at SIZE minus a run of the same command moving
# SIZE/4, per GiB (2^30 bytes) between them: the key exchange,
# authentication and session set-up drop out, and so does the growth of
# buffers at the start (upstream's grow in 256-byte steps while the
# backlog rises: what that costs per byte falls as a transfer goes on).
# pipe-up is `cat SRC | ssh host 'cat | sha256sum'` (the client encrypts,
# the server decrypts), pipe-down `ssh host 'cat SRC' | cat | sha256sum`:
# cat's 128 KiB reads and writes face ssh at both ends, as in `cat FILE |
# ssh host 'cat > FILE'`; every run's hash is checked.  The client is measured as `ssh`, the server
# as every sshd-session process of the connection (sshd points
# SshdSessionPath at a wrapper that starts the tool; sshd-auth and the
# user's commands are not measured).  Both ends run in a network namespace
# made for the run (only its loopback).
#
# valgrind counts every iteration of a `rep movsb` / `rep stosb` as one
# instruction, so copies and clears through glibc's memcpy and memset weigh
# about one instruction per byte; the report shows the categories apart.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/bench/lib.sh"

CIPHERS=${CIPHERS:-"aes128-gcm@openssh.com chacha20-poly1305@openssh.com"}
MODES=${MODES:-"pipe-up pipe-down"}
TREES=${TREES:-"stock hpn"}
COUNT_SIZE=${COUNT_SIZE:-64M}
SYS_SIZE=${SYS_SIZE:-256M}
SYS_REPS=${SYS_REPS:-3}
KINDS=${KINDS:-"cg dhat perf"}
OSV=$(sed -n 's/^OPENSSH_VERSION=//p' "$TOP/upstream/openssh.mk")
HPN_TREE=${HPN_TREE:-$TOP/build/hpn/openssh-$OSV}
STOCK_TREE=${STOCK_TREE:-$TOP/build/stock/openssh-$OSV}
OUT=${OUT:-$TOP/build/bench/count-$(date +%Y%m%d-%H%M%S)}
NS=hpncnt$$
declare -A PORT=([hpn]=2221 [stock]=2222)

[ "$(id -u)" -eq 0 ] || bl_die "run as root (a network namespace, sshd, perf)"
CBYTES=$(bl_bytes "$COUNT_SIZE") || bl_die "COUNT_SIZE: e.g. 64M"
SBYTES=$(bl_bytes "$SYS_SIZE") || bl_die "SYS_SIZE: e.g. 256M"
[ "$CBYTES" -ge 4194304 ] && [ "$SBYTES" -ge 4194304 ] || bl_die "COUNT_SIZE, SYS_SIZE: at least 4M"
[[ $SYS_REPS =~ ^[0-9]+$ ]] && [ "$SYS_REPS" -ge 1 ] && [ "$SYS_REPS" -le 20 ] || bl_die "SYS_REPS: 1-20"
for m in $MODES; do
	case $m in pipe-up|pipe-down) ;; *) bl_die "MODES: pipe-up, pipe-down, not '$m'" ;; esac
done
for t in $TREES; do
	case $t in hpn|stock) ;; *) bl_die "TREES: hpn, stock, not '$t'" ;; esac
done
for k in $KINDS; do
	case $k in cg|dhat|perf) ;; *) bl_die "KINDS: cg, dhat, perf, not '$k'" ;; esac
done
for c in valgrind callgrind_annotate perf python3 sha256sum; do
	command -v "$c" >/dev/null || bl_die "$c is missing (make bench-deps)"
done
big=$((CBYTES > SBYTES ? CBYTES : SBYTES))
avail=$(df -k --output=avail /dev/shm | tail -n 1)
[ $((avail * 1024)) -gt $((big + 64 * 1048576)) ] || bl_die "/dev/shm has too little room for $(bl_human "$big")"

work=$(mktemp -d /dev/shm/hpncnt.XXXXXX)
chmod 755 "$work"
ns_up=0 fg_pid=
cleanup() {
	local rc=$? p
	trap - EXIT INT TERM
	[ -n "$fg_pid" ] && kill "$fg_pid" 2>/dev/null
	for t in hpn stock; do tsshd_stop "$work" "${PORT[$t]}" 2>/dev/null || true; done
	if [ "$ns_up" = 1 ]; then
		# whatever is still inside (a stuck session) ends by its PID
		for p in $(ip netns pids "$NS" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
		ip netns del "$NS" 2>/dev/null || true
	fi
	rm -rf "$work"
	[ $rc -ne 0 ] && bl_log "cpu-count stopped (status $rc); partial results in $OUT"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ip netns add "$NS"
ns_up=1
ip -n "$NS" link set lo up
NSX=(ip netns exec "$NS")

mkdir -p "$OUT" "$work/out"
RAW=$OUT/raw.csv
echo "tree,cipher,mode,size,kind,side,key,value" > "$RAW"

bl_snapshot_tree "$HPN_TREE" "$work/tree-hpn"
bl_snapshot_tree "$STOCK_TREE" "$work/tree-stock"
tsshd_setup "$work" >/dev/null
# The session wrapper: the tool named in $work/kind (read when sshd starts
# a session), output under the tag in $work/tag; "done" once it has ended.
for t in $TREES; do
	cat > "$work/session-$t" <<-EOF
	#!/bin/sh
	kind=\$(cat $work/kind) tag=\$(cat $work/tag)
	o=$work/out/\$tag.server
	case \$kind in
	cg)	valgrind -q --tool=callgrind --callgrind-out-file=\$o.%p.cg \\
		    $work/tree-$t/sshd-session "\$@" ;;
	dhat)	valgrind -q --tool=dhat --mode=copy --dhat-out-file=\$o.%p.dhat \\
		    $work/tree-$t/sshd-session "\$@" ;;
	perf)	perf trace -s --syscalls -e sched:sched_switch -m 2048 -o \$o.\$\$.perf -- \\
		    $work/tree-$t/sshd-session "\$@" ;;
	*)	$work/tree-$t/sshd-session "\$@" ;;
	esac
	rc=\$?
	: > \$o.done
	exit \$rc
	EOF
	chmod 755 "$work/session-$t"
	TSSHD_SESSION_PATH=$work/session-$t \
	    tsshd_start "$work" "$work/tree-$t" "${PORT[$t]}" 127.0.0.1 "${NSX[@]}" ||
	    bl_die "$t sshd did not start"
	tsshd_client_config "$work" "${PORT[$t]}" 127.0.0.1 > "$work/ssh_config-$t"
done

# one file per size moved, read by cat (128 KiB reads and writes) at both
# ends: `cat FILE | ssh host 'cat > ...'`, as people use it
src=$work/src
head -c "$big" /dev/urandom > "$src"
declare -A SRC_SHA=()
for b in $((CBYTES / 4)) "$CBYTES" $((SBYTES / 4)) "$SBYTES"; do
	[ -e "$src.$b" ] && continue
	head -c "$b" "$src" > "$src.$b"
	SRC_SHA[$b]=$(sha256sum < "$src.$b" | cut -d' ' -f1)
done
rm -f "$src"

echo "cpu-count: $(date -Is) on $(hostname), $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "cpu-count: $(valgrind --version), $(perf version 2>&1 | head -n 1), $(openssl version)"
echo "cpu-count: hpn: $("$work/tree-hpn/ssh" -V 2>&1); stock: $("$work/tree-stock/ssh" -V 2>&1)"
echo "cpu-count: CIPHERS=\"$CIPHERS\" MODES=\"$MODES\" KINDS=\"$KINDS\" COUNT_SIZE=$COUNT_SIZE SYS_SIZE=$SYS_SIZE SYS_REPS=$SYS_REPS; results in $OUT"
{
	echo "- date: $(date -Is), host $(hostname), $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), kernel $(uname -r)"
	echo "- $(valgrind --version); $(perf version 2>&1 | head -n 1); $(openssl version); glibc $(ldd --version | head -n 1 | awk '{print $NF}')"
	echo "- hpn: \`$("$work/tree-hpn/ssh" -V 2>&1)\`; stock: \`$("$work/tree-stock/ssh" -V 2>&1)\`"
	echo "- valgrind runs: $(bl_human "$CBYTES") and $(bl_human $((CBYTES / 4))); perf runs: $(bl_human "$SBYTES") and $(bl_human $((SBYTES / 4))), $SYS_REPS times each"
} > "$OUT/meta.md"

# one_run TREE CIPHER MODE BYTES KIND REP: one transfer under KIND's tool,
# its figures appended to RAW
one_run() {
	local t=$1 cipher=$2 mode=$3 bytes=$4 kind=$5 rep=$6 tag want got i rc=0
	local -a tool
	tag=$t.${cipher%%@*}.$mode.$bytes.$kind.$rep
	echo "$kind" > "$work/kind"
	echo "$tag" > "$work/tag"
	rm -f "$work/out/$tag".*
	case $kind in
	cg)	tool=(valgrind -q --tool=callgrind --callgrind-out-file="$work/out/$tag.client.%p.cg") ;;
	dhat)	tool=(valgrind -q --tool=dhat --mode=copy --dhat-out-file="$work/out/$tag.client.%p.dhat") ;;
	perf)	tool=(perf trace -s --syscalls -e sched:sched_switch -m 2048 -o "$work/out/$tag.client.perf" --) ;;
	esac
	want=${SRC_SHA[$bytes]}
	# valgrind runs ~50x slower: bounded all the same
	local to=$((300 + bytes / 100000))
	if [ "$mode" = pipe-up ]; then
		got=$(cat "$src.$bytes" | "${NSX[@]}" timeout -k 5 "$to" "${tool[@]}" \
		    "$work/tree-$t/ssh" -F "$work/ssh_config-$t" -o "Ciphers=$cipher" bench \
		    "cat | sha256sum" 2> "$work/client.err") || rc=$?
	else
		got=$("${NSX[@]}" timeout -k 5 "$to" "${tool[@]}" \
		    "$work/tree-$t/ssh" -F "$work/ssh_config-$t" -o "Ciphers=$cipher" bench \
		    "exec cat $src.$bytes" 2> "$work/client.err" < /dev/null | cat | sha256sum) || rc=$?
	fi
	got=${got%% *}
	if [ $rc -ne 0 ] || [ "$got" != "$want" ]; then
		sed 's/^/    client: /' "$work/client.err" | head -n 5
		bl_die "$tag: transfer failed (status $rc, sha256 ${got:-none})"
	fi
	# the session's tool writes its files when the session has ended (bounded)
	for ((i = 0; i < 600; i++)); do
		[ -e "$work/out/$tag.server.done" ] && break
		sleep 0.1
	done
	[ -e "$work/out/$tag.server.done" ] || bl_die "$tag: the server's figures did not arrive"
	local side files
	for side in client server; do
		case $kind in
		cg)	files=("$work/out/$tag.$side".*.cg)
			python3 "$TOP/bench/cpu-count.py" cg "${files[@]}" ;;
		dhat)	files=("$work/out/$tag.$side".*.dhat)
			python3 "$TOP/bench/cpu-count.py" dhat "${files[@]}" ;;
		perf)	files=("$work/out/$tag.$side"*.perf)
			if [ $side = client ]; then
				python3 "$TOP/bench/cpu-count.py" perf "${files[0]}" ssh
			else
				python3 "$TOP/bench/cpu-count.py" perf "${files[0]}" sshd-session
			fi ;;
		esac > "$work/parsed" || bl_die "$tag: cannot read the $side's figures"
		awk -v p="$t,$cipher,$mode,$bytes,$kind,$side" '
			$1 == "fn" { printf "%s,fn %s %s,%s\n", p, $2, $3, $4; next }
			$1 == "sys" { printf "%s,sys %s,%s\n", p, $2, $3; next }
			{ printf "%s,%s,%s\n", p, $1, $2 }' "$work/parsed" >> "$RAW"
	done
	if [ "${KEEP:-0}" = 1 ]; then
		mkdir -p "$OUT/files"
		cp "$work/out/$tag".* "$OUT/files/"
	fi
	rm -f "$work/out/$tag".*
}

n=0
total=0
for k in $KINDS; do
	r=1; [ "$k" = perf ] && r=$SYS_REPS
	total=$((total + $(wc -w <<<"$CIPHERS") * $(wc -w <<<"$MODES") * $(wc -w <<<"$TREES") * 2 * r))
done
for kind in $KINDS; do
	reps=1 bytes=$CBYTES
	[ "$kind" = perf ] && reps=$SYS_REPS bytes=$SBYTES
	for mode in $MODES; do
		for cipher in $CIPHERS; do
			for ((rep = 1; rep <= reps; rep++)); do
				for t in $TREES; do
					for b in $((bytes / 4)) "$bytes"; do
						n=$((n + 1))
						s=$(date +%s)
						one_run "$t" "$cipher" "$mode" "$b" "$kind" "$rep"
						printf "cpu-count: [%2d/%d] %-4s %-5s %-28s %-9s %9s bytes: %ds, load %s\n" \
						    "$n" "$total" "$kind" "$t" "$cipher" "$mode" "$b" \
						    $(($(date +%s) - s)) "$(cut -d' ' -f1 /proc/loadavg)"
					done
				done
			done
		done
	done
done

python3 "$TOP/bench/cpu-count.py" report "$RAW" > "$OUT/counts.md"
python3 "$TOP/bench/cpu-count.py" compact "$RAW" "$OUT/raw-compact.csv"
python3 "$TOP/bench/cpu-count.py" plot "$OUT/counts.dat" "$RAW"
gnuplot -e "datafile='$OUT/counts.dat'; outfile='$OUT/counts.png'; ttl='$(sed -n 's/^- hpn: //p' "$OUT/meta.md" | tr -d "\`'")'" \
    "$TOP/bench/cpu-count.gp" 2>/dev/null || bl_log "gnuplot failed: no counts.png"
echo
cat "$OUT/counts.md"
echo
echo "cpu-count: done; $OUT/counts.md, $OUT/raw.csv (raw-compact.csv: small functions summed), $OUT/counts.png"
