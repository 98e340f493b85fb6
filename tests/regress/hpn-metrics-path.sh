#	HPN patch set: TCP stack metrics on an emulated 1 Gbit/s, 100 ms path:
#	both files with a row per second, the path's RTT at both ends,
#	retransmits on a lossy path and none on a clean one, the server's
#	transfer log line with the true byte count, a stock server (local
#	only), and the plot (contrib/hpnssh-metrics-plot).
#	Placed in the Public Domain.

tid="hpn metrics on a path"

PLOT="$HPN_TOP/contrib/hpnssh-metrics-plot"
if [ -z "$HPN_TOP" ]; then
	skip "no bench/netpath (HPN_TOP not set)"
fi
PATH_TAG=hpnmp PATH_LOGLEVEL=INFO
. $HPN_TOP/tests/regress/path-lib.sh

# up [netpath options]: a fresh path and the sshds on it
up() {
	path_cleanup
	$NETPATH up --name $NP --rtt 100 --rate 1000 --seed 7 "$@" \
	    > $OBJ/hpnmp-path.log 2>&1 ||
		fatal "netpath up failed: `cat $OBJ/hpnmp-path.log`"
	path_sshd hpn ${REAL_SSHD} $HPORT "SshdSessionPath $SSHD_SESSION" \
	    "SshdAuthPath $SSHD_AUTH"
	if [ -n "$HPN_STOCK_TREE" ] && [ -x "$HPN_STOCK_TREE/sshd" ]; then
		path_sshd stock $HPN_STOCK_TREE/sshd $SPORT \
		    "SshdSessionPath $HPN_STOCK_TREE/sshd-session" \
		    "SshdAuthPath $HPN_STOCK_TREE/sshd-auth"
	fi
}

HPORT=`expr $PORT + 110`
SPORT=`expr $PORT + 111`
sed -e "s/^	Hostname.*/	Hostname $SADDR/" $OBJ/ssh_config > $OBJ/ssh_config.path
M=$OBJ/hpnmp
# 5 s of data from the server: 2 MB every half second (20 MB)
BYTES=20000000
SRC='i=0; while [ $i -lt 10 ]; do head -c 2000000 /dev/zero; sleep 0.5; i=`expr $i + 1`; done'

# run PORT: the 5 s download with Metrics at 1 s intervals
run() {
	rm -f $M.local $M.remote $M.png $OBJ/hpnmp-err
	$CNS timeout 120 ${REAL_SSH} -F $OBJ/ssh_config.path -p $1 \
	    -E $OBJ/hpnmp-err -o Metrics=yes -o MetricsInterval=1 \
	    -o MetricsPath=$M somehost "$SRC" > $OBJ/hpnmp-out ||
		fail "download on the path (port $1) failed: `tail -3 $OBJ/hpnmp-err`"
	n=`wc -c < $OBJ/hpnmp-out | tr -d ' '`
	[ "$n" = $BYTES ] || fail "port $1: $n bytes arrived, not $BYTES"
}
rows() {
	[ -f $1 ] || { echo 0; return; }
	expr `wc -l < $1 | tr -d ' '` - 1
}
col() {
	awk -F, -v n="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == n) c = i; next }
	    c && $c != "" { print $c }' $1
}
median() {
	col $1 $2 | sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}
# last FILE COLUMN minus first
grew() {
	col $1 $2 | awk 'NR == 1 { f = $1 } { l = $1 } END { print l - f }'
}

verbose "$tid: clean path"
up --queue 16000000
run $HPORT
for f in $M.local $M.remote; do
	r=`rows $f`
	[ $r -ge 3 ] || fail "clean: $f has $r rows for a 5 s transfer at 1 s"
	m=`median $f rtt_us`
	if [ -z "$m" ] || [ $m -lt 90000 ] || [ $m -gt 140000 ]; then
		fail "clean: $f: median rtt_us $m, not 90-140 ms"
	fi
	t=`grew $f total_retrans`
	[ "$t" = 0 ] || fail "clean: $f: $t retransmits on a clean path"
	echo "clean $f: $r rows, median rtt $m us, $t retransmits"
done
grep -q "Session transfer: user $USER from 10.201.0.1 port [0-9]*, command .*: [0-9]* bytes in, $BYTES bytes out, " \
    $OBJ/hpnmp-sshd.hpn.log ||
	fail "no transfer log line with $BYTES bytes out: `grep 'Session transfer' $OBJ/hpnmp-sshd.hpn.log`"
grep -q '^Metrics: rtt .*(sender: the remote end)' $OBJ/hpnmp-err ||
	fail "no summary line: `grep Metrics: $OBJ/hpnmp-err`"

if [ -x /usr/bin/gnuplot ]; then
	timeout 60 $PLOT -o $M.png $M > $OBJ/hpnmp-plot 2>&1 ||
		fail "plot failed: `cat $OBJ/hpnmp-plot`"
	[ "`od -An -tx1 -N8 $M.png 2>/dev/null | tr -d ' \n'`" = 89504e470d0a1a0a ] ||
		fail "the plot is not a PNG"
else
	fail "no gnuplot (make deps installs gnuplot-nox)"
fi

if [ -n "$HPN_STOCK_TREE" ] && [ -x "$HPN_STOCK_TREE/sshd" ]; then
	verbose "$tid: stock server on the path"
	run $SPORT
	[ `rows $M.local` -ge 3 ] || fail "stock: no local rows"
	[ -f $M.remote ] && fail "stock: $M.remote left behind"
	grep -q 'Metrics: the server gives no metrics' $OBJ/hpnmp-err ||
		fail "stock: no notice"
else
	skip_part "a stock server on the path" "no stock build (HPN_STOCK_TREE)"
fi

verbose "$tid: lossy path"
up --queue 16000000 --loss 1
run $HPORT
t=`grew $M.remote total_retrans`
[ -n "$t" ] && [ "$t" -gt 0 ] || fail "lossy: the sender (remote) shows $t retransmits"
m=`median $M.local rtt_us`
echo "lossy: sender $t retransmits, local median rtt $m us"
grep -q '^Metrics: rtt .* ms, peak cwnd .* MB, [1-9][0-9]* retransmits' $OBJ/hpnmp-err ||
	fail "lossy: the summary shows no retransmits: `grep Metrics: $OBJ/hpnmp-err`"

rm -f $M.local $M.remote $M.png $OBJ/hpnmp-*
