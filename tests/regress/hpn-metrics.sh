#	HPN patch set: TCP stack metrics (Metrics, MetricsInterval, MetricsPath,
#	PermitMetrics), the summary line, and sshd's session transfer log, on
#	loopback.  The path figures (RTT, retransmits) are checked on an
#	emulated path by tests/regress/hpn-metrics-path.sh.  Each case
#	removes the files of the one before it first.
#	Placed in the Public Domain.

tid="hpn metrics"

[ -n "$HPN_TOP" ] || skip "HPN_TOP not set"
. $HPN_TOP/tests/lib/skips.sh

M=$OBJ/hpnm
DATA=$OBJ/hpnm-data
OUT=$OBJ/hpnm-out
rm -f $M.local $M.remote $OUT
dd if=/dev/urandom of=$DATA bs=1024 count=3000 2>/dev/null
SIZE=`wc -c < $DATA | tr -d ' '`

# --- option values
for opt in MetricsInterval=0.05 MetricsInterval=0 MetricsInterval=abc \
    MetricsInterval=-1 MetricsInterval=90000 MetricsInterval=nan \
    MetricsInterval= Metrics=maybe; do
	if ${REAL_SSH} -G -F $OBJ/ssh_config -o "$opt" somehost \
	    > $OBJ/hpnm-opt.out 2>&1; then
		fail "ssh accepted bad option -o $opt"
	fi
	grep -Eqi "bad metricsinterval|unsupported option|missing argument|no argument after keyword" \
	    $OBJ/hpnm-opt.out || fail "no clear error for -o $opt: `cat $OBJ/hpnm-opt.out`"
done
if ${REAL_SSHD} -T -f $OBJ/sshd_config -o PermitMetrics=maybe > $OBJ/hpnm-opt.out 2>&1; then
	fail "sshd accepted PermitMetrics=maybe"
fi
g=`${REAL_SSH} -G -F $OBJ/ssh_config somehost`
for l in 'metrics no' 'metricsinterval 5' 'metricspath ./ssh_stack_metrics'; do
	echo "$g" | grep -qx "$l" || fail "ssh -G does not show the default '$l'"
done
g=`${REAL_SSH} -G -F $OBJ/ssh_config -o Metrics=yes -o MetricsInterval=0.25 -o MetricsPath=/x/y somehost`
for l in 'metrics yes' 'metricsinterval 0.25' 'metricspath /x/y'; do
	echo "$g" | grep -qx "$l" || fail "ssh -G does not show '$l'"
done
${REAL_SSHD} -T -f $OBJ/sshd_config | grep -qx 'permitmetrics yes' ||
	fail "sshd -T does not show permitmetrics yes"
${REAL_SSHD} -T -f $OBJ/sshd_config -o PermitMetrics=no | grep -qx 'permitmetrics no' ||
	fail "sshd -T does not show permitmetrics no"

start_sshd
# The sshd log lines since n0 with this text.  verbose and trace empty the
# log directory (sshd-session makes its file again), so this is read right
# after the transfer, before any of them.
n0=0
since() {
	sleep 1
	cat $TEST_SSHD_LOGFILE 2>/dev/null | tail -n +`expr $n0 + 1` |
	    grep "$1" > $OBJ/hpnm-log
}
mark() {
	n0=`cat $TEST_SSHD_LOGFILE 2>/dev/null | wc -l`
}

rows() {
	[ -f $1 ] || { echo 0; return; }
	expr `wc -l < $1 | tr -d ' '` - 1
}
# col FILE NAME: the values of column NAME, one per line
col() {
	awk -F, -v n="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == n) c = i; next }
	    c { print $c }' $1
}

# --- an unwritable MetricsPath stops ssh before it connects
rm -f $OBJ/hpnm-ran
if ${REAL_SSH} -F $OBJ/ssh_config -o Metrics=yes -o MetricsPath=$OBJ/no/such/dir/m \
    somehost "touch $OBJ/hpnm-ran" > $OBJ/hpnm-err 2>&1; then
	fail "ssh ran with an unwritable MetricsPath"
fi
grep -q "MetricsPath: cannot write $OBJ/no/such/dir/m.local" $OBJ/hpnm-err ||
	fail "no clear error for an unwritable MetricsPath: `tail -3 $OBJ/hpnm-err`"
[ -f $OBJ/hpnm-ran ] && fail "the command ran despite the unwritable MetricsPath"

# --- both files, a row per interval, the summary, the server's log line
verbose "$tid: download with Metrics"
mark
rm -f $OBJ/hpnm-err
${REAL_SSH} -F $OBJ/ssh_config -E $OBJ/hpnm-err -o Metrics=yes -o MetricsInterval=0.2 \
    -o MetricsPath=$M somehost "sleep 1.5; cat $DATA" > $OUT 2>> $OBJ/hpnm-err ||
	fail "download with Metrics failed: `tail -3 $OBJ/hpnm-err`"
cmp -s $DATA $OUT || fail "download with Metrics: data differ"
since "Session transfer: "
for f in $M.local $M.remote; do
	[ -f $f ] || { fail "no $f"; continue; }
	head -1 $f | grep -q '^time,rtt_us,rttvar_us,' || fail "$f: header `head -1 $f`"
	for c in snd_cwnd snd_mss snd_ssthresh rcv_space total_retrans lost \
	    delivery_rate pacing_rate bytes_acked bytes_received busy_time \
	    rwnd_limited sndbuf_limited window window_peak peer_window \
	    window_stalls ssh_bytes_out ssh_bytes_in; do
		head -1 $f | tr , '\n' | grep -qx $c || fail "$f: no column $c"
	done
	r=`rows $f`
	[ $r -ge 6 ] || fail "$f: $r rows for a 1.5 s session at 0.2 s intervals"
	[ -n "`col $f rtt_us | tail -1`" ] || fail "$f: no rtt_us"
done
# the server sent the data: its bytes_acked covers it, ours received it
a=`col $M.remote bytes_acked | tail -1`
[ -n "$a" ] && [ "$a" -ge $SIZE ] || fail "remote bytes_acked $a < $SIZE"
a=`col $M.local bytes_received | tail -1`
[ -n "$a" ] && [ "$a" -ge $SIZE ] || fail "local bytes_received $a < $SIZE"
# the time column goes up, on one clock
col $M.local time | sort -c -n || fail "local times out of order"
col $M.remote time | sort -c -n || fail "remote times out of order"
grep -q '^Metrics: rtt .* ms, peak cwnd .* MB, [0-9]* retransmits; limited by: network (congestion window) [0-9]*%, receive window [0-9]*%, send buffer [0-9]*%, application [0-9]*% (sender: the remote end)' \
    $OBJ/hpnm-err || fail "no summary line naming the remote sender: `grep Metrics $OBJ/hpnm-err`"
grep -q "Session transfer: user $USER from 127.0.0.1 port [0-9]*, command \"sleep 1.5; cat $DATA\": [0-9]* bytes in, $SIZE bytes out, [0-9.]* s, [0-9.]* MB/s, peak window [0-9]*, cipher " \
    $OBJ/hpnm-log || fail "no server log line with $SIZE bytes out: `cat $OBJ/hpnm-log`"

verbose "$tid: upload with Metrics, the server's log line"
mark
rm -f $OUT $M.local $M.remote
rm -f $OBJ/hpnm-err
${REAL_SSH} -F $OBJ/ssh_config -E $OBJ/hpnm-err -o Metrics=yes -o MetricsInterval=0.5 \
    -o MetricsPath=$M somehost "cat > $OUT" < $DATA 2>> $OBJ/hpnm-err ||
	fail "upload with Metrics failed"
cmp -s $DATA $OUT || fail "upload with Metrics: data differ"
since "Session transfer: "
grep -q '(sender: this end)' $OBJ/hpnm-err || fail "upload: the summary does not name this end"
grep -q "command \"cat > $OUT\": $SIZE bytes in, 0 bytes out, " $OBJ/hpnm-log ||
	fail "no server log line with $SIZE bytes in: `cat $OBJ/hpnm-log`"
for f in $M.local $M.remote; do
	[ `rows $f` -ge 1 ] || fail "upload: no rows in $f"
done

verbose "$tid: sftp subsystem in the server's log"
mark
rm -f $OUT
echo "get $DATA $OUT" | ${SFTP} -q -b - -S ${SSH} -F $OBJ/ssh_config somehost \
    > /dev/null 2>&1 || fail "sftp get failed"
cmp -s $DATA $OUT || fail "sftp get: data differ"
since "Session transfer: "
grep -q "Session transfer: .*, subsystem sftp: [0-9]* bytes in, [0-9]* bytes out" $OBJ/hpnm-log ||
	fail "no server log line for the sftp subsystem"

# --- -v alone: the summary, no files
verbose "$tid: -v alone"
rm -f $M.local $M.remote
(cd $OBJ && rm -f $OBJ/hpnm-err && ${REAL_SSH} -F $OBJ/ssh_config -E $OBJ/hpnm-err -v somehost "cat $DATA" > $OUT) ||
	fail "ssh -v failed"
grep -q 'Metrics: rtt .*(sender: the remote end)' $OBJ/hpnm-err ||
	fail "ssh -v: no summary line"
[ -f $OBJ/ssh_stack_metrics.local ] && fail "ssh -v wrote metrics files"

# --- a server that does not answer: local only, said once
verbose "$tid: PermitMetrics no"
echo "PermitMetrics no" >> $OBJ/sshd_config
stop_sshd
start_sshd
rm -f $OBJ/hpnm-err $M.local $M.remote
${REAL_SSH} -F $OBJ/ssh_config -E $OBJ/hpnm-err -o Metrics=yes -o MetricsInterval=0.2 \
    -o MetricsPath=$M somehost "sleep 0.5; cat $DATA" > $OUT 2>> $OBJ/hpnm-err ||
	fail "ssh against PermitMetrics no failed"
cmp -s $DATA $OUT || fail "PermitMetrics no: data differ"
[ `rows $M.local` -ge 3 ] || fail "PermitMetrics no: no local rows"
[ -f $M.remote ] && fail "PermitMetrics no: $M.remote left behind"
[ `grep -c 'Metrics: the server gives no metrics' $OBJ/hpnm-err` = 1 ] ||
	fail "PermitMetrics no: no one-line notice: `grep Metrics $OBJ/hpnm-err`"
grep -q 'sender: this end, receiving (the sender gave no metrics)' $OBJ/hpnm-err ||
	fail "PermitMetrics no: the summary does not say the sender's view is missing"
sed -i '/^PermitMetrics no$/d' $OBJ/sshd_config
stop_sshd

if [ -n "$HPN_STOCK_TREE" ] && [ -x "$HPN_STOCK_TREE/sshd" ]; then
	verbose "$tid: stock server"
	SPORT=`expr $PORT + 7`
	grep -Eiv '^[[:space:]]*(Port|PidFile|SshdSessionPath|SshdAuthPath|PerSourcePenalties|Subsystem)[[:space:]]' \
	    $OBJ/sshd_config > $OBJ/sshd_config.stock
	printf 'Port %s\nPidFile %s\nSshdSessionPath %s\nSshdAuthPath %s\n' \
	    $SPORT $OBJ/pidfile.stock $HPN_STOCK_TREE/sshd-session \
	    $HPN_STOCK_TREE/sshd-auth >> $OBJ/sshd_config.stock
	rm -f $OBJ/pidfile.stock
	$HPN_STOCK_TREE/sshd -f $OBJ/sshd_config.stock -E $OBJ/hpnm-stock.log ||
		fatal "cannot start the stock sshd"
	i=0
	while [ ! -s $OBJ/pidfile.stock ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=`expr $i + 1`
	done
	spid=`cat $OBJ/pidfile.stock 2>/dev/null`
	[ -n "$spid" ] || fatal "the stock sshd did not start"
	rm -f $OBJ/hpnm-err $M.local $M.remote
	${REAL_SSH} -F $OBJ/ssh_config -E $OBJ/hpnm-err -p $SPORT -o Metrics=yes -o MetricsInterval=0.2 \
	    -o MetricsPath=$M somehost "sleep 0.5; cat $DATA" > $OUT 2>> $OBJ/hpnm-err
	r=$?
	kill $spid
	[ $r -eq 0 ] || fail "ssh against the stock server failed: `tail -3 $OBJ/hpnm-err`"
	cmp -s $DATA $OUT || fail "stock server: data differ"
	[ `rows $M.local` -ge 3 ] || fail "stock server: no local rows"
	[ -f $M.remote ] && fail "stock server: $M.remote left behind"
	grep -q 'Metrics: the server gives no metrics' $OBJ/hpnm-err ||
		fail "stock server: no notice"
else
	skip_part "a stock server" "no stock build (HPN_STOCK_TREE)"
fi

rm -f $DATA $OUT $M.local $M.remote $OBJ/hpnm-*
