#!/bin/bash
# setup-bench.sh: connection set-up, the round trips it waits for in series
# (README.hpn section 15, EarlySend).
#
#   HPN_TREE=... STOCK_TREE=... bench/setup-bench.sh [OUTDIR]
#
# For each RTT (RTTS, default "0 50 100") a path of netpath (1 Gbit/s) comes
# up; in its server namespace listen hpnsshd (two: the second is the target
# behind the first as jump host), the stock build's sshd and, when it is
# there, Debian's /usr/sbin/sshd (OpenSSH 9.2).  Each case below runs REPS
# times (default 5), the cases interleaved within a repetition so that all
# see the same load; the medians of each RTT go in one table, with the
# round trips each waited for in series beyond its loopback time, (t(RTT)
# - t(0)) / RTT, against README.hpn's targets (for the 1-byte copies the
# round trips in all, t(RTT) / RTT, as the issue sets them; stock ssh to
# hpnsshd against stock ssh to the stock build's sshd).
#
#   hpn-guess    hpnssh host true, its EarlyHostsFile knowing the server
#   hpn-first    ... on first contact (EarlyHostsFile none: no guess)
#   hpn-off      ... EarlySend no: upstream's set-up
#   hpn-file     hpnssh host head -c 1, its standard input a regular file
#                of one byte (it goes early, read without moving its
#                offset; head needs no EOF, so the byte's round trip shows)
#   hpn-pipe     the same from a pipe (read once authenticated: issue 44)
#   stock>hpn    stock ssh to hpnsshd
#   hpn>stock    hpnssh to the stock build's sshd; stock>stock: stock's
#   hpn>deb92    hpnssh to Debian's sshd 9.2; stock>deb92: stock's
#   scp-up       hpnscp of a 1-byte file up, scp-down down; sftp-get:
#                hpnsftp -b with "get" of it; *-off: EarlySend no
#   jump         hpnssh -J jump target true (hpnsshd both); jump-stock:
#                stock ssh through the stock sshd twice
#
# Remote commands run under the login shell; the servers set SHLVL=1 for
# them so that bash does not read the user's .bashrc (sshd's sessions do
# otherwise), whose time is no part of the set-up and only adds noise.
# Root.  Everything started is stopped by its PID; the path is torn down.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/bench/lib.sh"
OUT=${1:-$TOP/build/bench-setup}
HPN_TREE=$(cd "${HPN_TREE:?HPN_TREE= the built hpn tree}" && pwd)
STOCK_TREE=$(cd "${STOCK_TREE:?STOCK_TREE= the built stock tree}" && pwd)
RTTS=${RTTS:-0 50 100} RATE=${RATE:-1000} REPS=${REPS:-5} NAME=${NAME:-hpnsetup}
[ "$(id -u)" = 0 ] || bl_die "needs root (network namespaces)"
declare -A PORT=([hpn]=4801 [target]=4802 [stock]=4803 [deb92]=4804)
DEB_SSHD=/usr/sbin/sshd
have_deb=0
if [ -x $DEB_SSHD ] && $DEB_SSHD -V 2>&1 | grep -q '^OpenSSH_9\.2'; then
	have_deb=1
fi

mkdir -p "$OUT"
work=$(mktemp -d /tmp/hpn-setup-bench.XXXXXX)
up=
cleanup() {
	local rc=$? p
	trap - EXIT INT TERM
	for p in "${PORT[@]}"; do
		tsshd_stop "$work" "$p" 2>/dev/null || true
	done
	[ -z "$up" ] || "$NP" down --name "$NAME" > /dev/null 2>&1 || true
	rm -rf "$work"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

bl_netpath_snapshot "$work/netpath"
bl_snapshot_tree "$HPN_TREE" "$work/tree-hpn"
bl_snapshot_tree "$STOCK_TREE" "$work/tree-stock"
HPN=$work/tree-hpn STOCK=$work/tree-stock
tsshd_setup "$work"
printf x > "$work/one"
# hpn-file, hpn-pipe: the command with that standard input
printf '#!/bin/sh\nexec "$@" < %s\n' "$work/one" > "$work/in-file"
printf '#!/bin/sh\nprintf x | "$@"\n' > "$work/in-pipe"
chmod 755 "$work/in-file" "$work/in-pipe"
echo "get $work/one $work/got" > "$work/batch"

# start_servers: the sshds in the server namespace of the path up
start_servers() {
	local addr=$1
	export TSSHD_EXTRA="SetEnv SHLVL=1"
	tsshd_start "$work" "$HPN" "${PORT[hpn]}" "$addr" \
	    "$NP" exec server --name "$NAME" -- || bl_die "hpnsshd"
	tsshd_start "$work" "$HPN" "${PORT[target]}" "$addr" \
	    "$NP" exec server --name "$NAME" -- || bl_die "hpnsshd (target)"
	tsshd_start "$work" "$STOCK" "${PORT[stock]}" "$addr" \
	    "$NP" exec server --name "$NAME" -- || bl_die "stock sshd"
	if [ $have_deb = 1 ]; then
		mkdir -p -m 0755 /run/sshd
		# the stock one's configuration minus what 9.2 lacks
		sed -e "s/^Port .*/Port ${PORT[deb92]}/" \
		    -e "s#^PidFile .*#PidFile $work/sshd-${PORT[deb92]}.pid#" \
		    -e '/^SshdSessionPath/d; /^SshdAuthPath/d; /^PerSourcePenalties/d' \
		    -e 's#^Subsystem.*#Subsystem sftp /usr/lib/openssh/sftp-server#' \
		    "$work/sshd_config-${PORT[stock]}" > "$work/sshd_config-deb92"
		rm -f "$work/sshd-${PORT[deb92]}.pid"
		"$NP" exec server --name "$NAME" -- $DEB_SSHD \
		    -f "$work/sshd_config-deb92" -E "$work/sshd-deb92.log" ||
			bl_die "Debian's sshd: $(tail -3 "$work/sshd-deb92.log")"
		local i
		for ((i = 0; i < 50; i++)); do
			[ -s "$work/sshd-${PORT[deb92]}.pid" ] && break
			sleep 0.1
		done
		[ -s "$work/sshd-${PORT[deb92]}.pid" ] || bl_die "Debian's sshd did not start"
	fi
	{
		tsshd_client_config "$work" "${PORT[hpn]}" "$addr" |
		    sed 's/^Host \*/Host hpn jump/'
		tsshd_client_config "$work" "${PORT[target]}" "$addr" |
		    sed 's/^Host \*/Host target/'
		tsshd_client_config "$work" "${PORT[stock]}" "$addr" |
		    sed 's/^Host \*/Host stock sjump starget/'
		tsshd_client_config "$work" "${PORT[deb92]}" "$addr" |
		    sed 's/^Host \*/Host deb92/'
	} > "$work/ssh_config"
}

stop_servers() {
	local p
	for p in "${PORT[@]}"; do
		tsshd_stop "$work" "$p" 2>/dev/null || true
	done
}

# one CASE: seconds of its command, in the client namespace
one() {
	local c=$1 t=$HPN in=
	local -a cmd
	case $c in
	hpn-file) in=$work/in-file cmd=(ssh hpn head -c 1) ;;
	hpn-pipe) in=$work/in-pipe cmd=(ssh hpn head -c 1) ;;
	hpn-guess) cmd=(ssh hpn true) ;;
	hpn-first) cmd=(ssh -oEarlyHostsFile=none hpn true) ;;
	hpn-off) cmd=(ssh -oEarlySend=no hpn true) ;;
	stock\>hpn) t=$STOCK cmd=(ssh hpn true) ;;
	hpn\>stock) cmd=(ssh stock true) ;;
	stock\>stock) t=$STOCK cmd=(ssh stock true) ;;
	hpn\>deb92) cmd=(ssh deb92 true) ;;
	stock\>deb92) t=$STOCK cmd=(ssh deb92 true) ;;
	scp-up) cmd=(scp -S "$t/ssh" "$work/one" "hpn:$work/up") ;;
	scp-down) cmd=(scp -S "$t/ssh" "hpn:$work/one" "$work/down") ;;
	sftp-get) cmd=(sftp -S "$t/ssh" -b "$work/batch" hpn) ;;
	scp-up-off) cmd=(scp -S "$t/ssh" -oEarlySend=no "$work/one" "hpn:$work/up") ;;
	sftp-get-off) cmd=(sftp -S "$t/ssh" -oEarlySend=no -b "$work/batch" hpn) ;;
	jump) cmd=(ssh -J jump target true) ;;
	jump-stock) t=$STOCK cmd=(ssh -J sjump starget true) ;;
	*) bl_die "unknown case $c" ;;
	esac
	"$NP" exec client --name "$NAME" -- bash -c '
	    s=$EPOCHREALTIME
	    timeout 60 "$@" < /dev/null > /dev/null 2>&1 && e=$EPOCHREALTIME ||
	        exit 1
	    echo "$s $e" | awk "{ printf \"%.4f\", \$2 - \$1 }"' _ \
	    ${in:+"$in"} "$t/${cmd[0]}" -F "$work/ssh_config" "${cmd[@]:1}" ||
		bl_die "$c failed: ${cmd[*]}"
}

CASES="hpn-guess hpn-first hpn-off hpn-file hpn-pipe stock>hpn hpn>stock stock>stock"
[ $have_deb = 1 ] && CASES="$CASES hpn>deb92 stock>deb92"
CASES="$CASES scp-up scp-down sftp-get scp-up-off sftp-get-off jump jump-stock"

csv=$OUT/results.csv
echo "rtt_ms,case,median_s,runs,load" > "$csv"
for rtt in $RTTS; do
	up=1
	"$NP" up --name "$NAME" --rtt "$rtt" --rate "$RATE" > "$work/path.log" 2>&1 ||
		bl_die "netpath up: $(tail -3 "$work/path.log")"
	addr=$("$NP" addr server --name "$NAME")
	start_servers "$addr"
	rm -f "$work/hpn_early_hosts"
	# hpn-guess and the copies: a server the client has met
	one hpn-guess > /dev/null
	one jump > /dev/null
	load=$(cut -d' ' -f1 /proc/loadavg)
	bl_log "RTT $rtt ms: $REPS runs of each case (load $load)"
	declare -A RUNS=()
	for ((i = 0; i < REPS; i++)); do
		for c in $CASES; do
			RUNS[$c]="${RUNS[$c]:-} $(one "$c")"
		done
	done
	load="$load-$(cut -d' ' -f1 /proc/loadavg)"
	for c in $CASES; do
		m=$(bl_median ${RUNS[$c]})
		echo "$rtt,$c,$m,\"${RUNS[$c]# }\",$load" >> "$csv"
		bl_log "  $c: $m s (runs:${RUNS[$c]})"
	done
	unset RUNS
	stop_servers
	"$NP" down --name "$NAME" > /dev/null 2>&1 || true
	up=
done

# The table: medians, and round trips beyond the loopback time.
{
	echo "Connection set-up on netpath ($RATE Mbit/s), medians of $REPS, seconds;"
	echo "round trips in series beyond loopback: (t(RTT) - t(0)) / RTT."
	echo "Load (1-minute, before-after each RTT): $(awk -F, 'NR > 1 { print $1 " ms " $NF }' "$csv" | sort -un -k1,1 | tr '\n' ';' | sed 's/;$//')"
	echo
	awk -F, -v rtts="$RTTS" '
	NR == 1 { next }
	{ t[$2, $1] = $3; if (!($2 in seen)) { seen[$2] = 1; order[n++] = $2 } }
	END {
		k = split(rtts, r, " ")
		printf "  %-13s", "case"
		for (j = 1; j <= k; j++) printf " %7s", r[j] " ms"
		for (j = 1; j <= k; j++) if (r[j] > 0) printf " %8s", "rt@" r[j]
		printf "\n"
		for (i = 0; i < n; i++) {
			c = order[i]
			printf "  %-13s", c
			for (j = 1; j <= k; j++) printf " %7.3f", t[c, r[j]]
			for (j = 1; j <= k; j++) if (r[j] > 0)
				printf " %8.1f", (t[c, r[j]] - t[c, r[1]]) / (r[j] / 1000)
			printf "\n"
		}
	}' "$csv"
	echo
	# README.hpn's targets, at each RTT but 0
	awk -F, -v rtts="$RTTS" '
	NR == 1 { next }
	{ t[$2, $1] = $3 }
	function rt(c) { return (t[c, hi] - t[c, lo]) / (hi / 1000) }
	function all(c) { return t[c, hi] / (hi / 1000) }
	function check(c, max, what) {
		if (!((c, hi) in t)) return
		printf "  %-4s %-13s %4.1f round trips (at most %s): %s\n",
		    rt(c) <= max ? "ok" : "MISS", c, rt(c), max, what
	}
	# the copies: their whole time, the loopback part (computing,
	# process starts) counted as round trips too
	function check_all(c, max, what) {
		if (!((c, hi) in t)) return
		printf "  %-4s %-13s %4.1f round trips in all (at most %s; %.1f beyond loopback): %s\n",
		    all(c) <= max ? "ok" : "MISS", c, all(c), max, rt(c), what
	}
	END {
		k = split(rtts, r, " "); lo = r[1]
		if (lo != 0) exit
		for (j = 2; j <= k; j++) {
			hi = r[j]
			print "Targets (README.hpn section 15), at " hi " ms:"
			check("hpn-guess", 5, "hpnssh host true to hpnsshd")
			check("hpn-first", 5, "the same, first contact")
			check("hpn-file", 5, "hpnssh host head -c 1 < a file")
			# a pipe is read once authenticated: one round trip more
			d = rt("hpn-pipe") - rt("hpn-file")
			printf "  %-4s hpn-pipe      %4.1f round trips, %.1f more than from a file (at most 1): a pipe waits for authentication\n",
			    d <= 1 ? "ok" : "MISS", rt("hpn-pipe"), d
			check("hpn>stock", 7.5, "hpnssh to stock 10.x")
			check("hpn>deb92", 7.5, "hpnssh to Debian 9.2")
			check_all("scp-up", 6, "1-byte hpnscp up")
			check_all("scp-down", 6, "1-byte hpnscp down")
			check_all("sftp-get", 6, "hpnsftp -b get of one file")
			# unchanged: stock ssh to hpnsshd as to the stock build sshd
			d = rt("stock>hpn") - rt("stock>stock")
			printf "  %-4s stock>hpn     %4.1f round trips, stock>stock %.1f (at most 0.5 more): stock ssh to hpnsshd unchanged\n",
			    d <= 0.5 ? "ok" : "MISS", rt("stock>hpn"), rt("stock>stock")
		}
	}' "$csv"
} | tee "$OUT/report.txt"
