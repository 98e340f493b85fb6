#!/bin/bash
# bench/bigbdp-bench.sh OUT - windows for the biggest paths (make
# bench-bigbdp; issue 42).  The emulated path at 1 Gbit/s with a round trip
# of 1 s and of 2 s (bandwidth-delay products of 125 and 250 MB: those of
# 10 Gbit/s x 100 and x 200 ms), socket buffers allowed up to 1 GiB
# (netpath --bufmax), default options at both ends: pipe up, scp up, sftp
# get and sftp put of SIZE_1S (4G) and SIZE_2S (6G) beside iperf3, cold, of
# the same bytes, in one run of bench/run-bench.sh per round trip.
#
#   PREV_TREE=DIR      another build of ours run beside (before/after)
#   HPN_ANCHOR=DIR     HPN-SSH built by hand (its ssh, scp, sftp, sshd,
#                      sshd-session, sshd-auth, sftp-server), run beside
#   RTTS="1000 2000"   REPS=1   MODES="pipe-up scp-up sftp-down sftp-up"
#   REPS_2S=REPS       repetitions at 2 s and more (each run there takes
#                      two to three times as long as at 1 s)
#   TIMESERIES=1       each transfer's time series (bench/run-bench.sh),
#                      compared by bench/series-report.sh into series.txt
#   STALL=0            bench/stall-bench.sh not run
#
# Stock OpenSSH is not run: its 2 MiB window gives 2 MB/s at 1 s (4 GiB
# would take half an hour); the report prints that ceiling instead.
# Then bench/stall-bench.sh: 100 uploads into readers that stall, with
# HPNBufferBudget and without (STALL=0: not run).  Prints the targets
# (bench/bigbdp-report.sh): each mode >= 0.95 x iperf3 and >= HPN-SSH by
# bytes / (whole command - set-up), issue 42's rate, with first to last
# byte beside it; whole-command times and the largest RSS of client and
# server; the sessions' memory when readers stall.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$TOP/build/bench-bigbdp/$(date +%Y%m%d-%H%M%S)}
RTTS=${RTTS:-"1000 2000"}
SIZE_1S=${SIZE_1S:-4G}
SIZE_2S=${SIZE_2S:-6G}
MODES=${MODES:-"pipe-up scp-up sftp-down sftp-up"}
REPS=${REPS:-1}
REPS_2S=${REPS_2S:-$REPS}
pairs="hpn-hpn"
[ -n "${PREV_TREE:-}" ] && pairs="$pairs prev-prev"
if [ -n "${HPN_ANCHOR:-}" ]; then
	pairs="$pairs anchor-anchor"
	export ANCHOR_TREE=$HPN_ANCHOR
fi
mkdir -p "$OUT"
for rtt in $RTTS; do
	size=$SIZE_1S reps=$REPS
	[ "$rtt" -ge 2000 ] && size=$SIZE_2S reps=$REPS_2S
	echo "bench-bigbdp: RTT $rtt ms, $size, pairs $pairs, $reps repetition(s)"
	RTTS=$rtt SIZE=$size REPS=$reps CIPHERS=aes128-gcm@openssh.com \
	    MODES="$MODES" PAIRS="$pairs" VALIDATE=0 \
	    NETPATH_OPTS="--bufmax 1073741824" NAME=hpnbigbdp \
	    OUT="$OUT/rtt$rtt" "$TOP/bench/run-bench.sh"
done
# readers that stall: 100 uploads, with HPNBufferBudget and without
[ "${STALL:-1}" = 1 ] && "$TOP/bench/stall-bench.sh" "$OUT/stall"
"$TOP/bench/bigbdp-report.sh" "$OUT" | tee "$OUT/report.txt"
if [ "${TIMESERIES:-0}" = 1 ]; then
	"$TOP/bench/series-report.sh" "$OUT" | tee "$OUT/series.txt"
fi
