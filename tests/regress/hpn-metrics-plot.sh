#	HPN patch set: contrib/hpnssh-metrics-plot, the PNG of the TCP metrics
#	files, from synthetic PATH.local/.remote: both ends, the local end
#	alone, columns in another order, and each error (exit 1, a message,
#	no PNG).
#	Placed in the Public Domain.

tid="hpn metrics plot"

[ -n "$HPN_TOP" ] || skip "HPN_TOP not set"
[ -x /usr/bin/gnuplot ] || skip "no gnuplot"
unset GNUPLOT

PLOT="timeout 60 $HPN_TOP/contrib/hpnssh-metrics-plot"
M=$OBJ/hpnmp
rm -rf $M $M.* $OBJ/hpnmp-* $OBJ/.hpnssh-metrics-plot.*

COLS="time rtt_us rttvar_us min_rtt_us snd_cwnd snd_mss snd_ssthresh rcv_space
rcv_ssthresh rcv_rtt_us unacked sacked lost retrans total_retrans reordering
delivery_rate pacing_rate bytes_sent bytes_acked bytes_received bytes_retrans
notsent_bytes snd_wnd busy_time rwnd_limited sndbuf_limited ssh_bytes_out
ssh_bytes_in window window_peak peer_window peer_window_peak window_stalls"

# mkcsv FILE END ROWS [ORDER]: ROWS samples a second apart, as hpnssh writes
# them (ORDER "rev": the columns reversed).  The local end sends: bytes_acked
# grows, bytes_received stays empty; the remote end the other way round.
# rtt_us is empty on the sixth row, fields the kernel lacked always.
mkcsv() {
	echo $COLS | awk -v end=$2 -v rows=$3 -v order="$4" '{
		n = split($0, c, " ")
		if (order == "rev")
			for (i = 1; i <= n / 2; i++) { t = c[i]; c[i] = c[n + 1 - i]; c[n + 1 - i] = t }
		for (i = 1; i <= n; i++) printf "%s%s", c[i], i < n ? "," : "\n"
		for (r = 0; r < rows; r++) {
			split("", v)
			v["time"] = sprintf("%.6f", 1764060000.5 + r + (end == "remote") * 0.25)
			v["rtt_us"] = r == 5 ? "" : 100000 + 300 * r
			v["rttvar_us"] = 1200; v["min_rtt_us"] = 100100
			v["snd_cwnd"] = 10 + 40 * r; v["snd_mss"] = 1448
			v["total_retrans"] = int(r / 4)
			b = r * r * 250000
			v[end == "local" ? "bytes_acked" : "bytes_received"] = b
			v["bytes_sent"] = v["ssh_bytes_out"] = b
			for (i = 1; i <= n; i++)
				printf "%s%s", (c[i] in v) ? v[c[i]] : "", i < n ? "," : "\n"
		}
	}' > $1
}

# png FILE: a PNG of more than a few KB
png() {
	[ -f "$1" ] || { fail "no $1"; return; }
	sig=`od -An -tx1 -N8 "$1" | tr -d ' \n'`
	[ "$sig" = "89504e470d0a1a0a" ] || fail "$1 is not a PNG: $sig"
	size=`wc -c < "$1" | tr -d ' '`
	[ "$size" -gt 8000 ] || fail "$1: only $size bytes"
}

# refused MESSAGE OUT ARGS...: exit 1, MESSAGE on stderr, no OUT, no temporary
# file beside it
refused() {
	msg=$1 out=$2
	shift 2
	rm -f $out
	$PLOT "$@" > $OBJ/hpnmp-out 2> $OBJ/hpnmp-err
	r=$?
	[ $r -eq 1 ] || fail "$* : exit $r, not 1"
	grep -q "^hpnssh-metrics-plot: error: .*$msg" $OBJ/hpnmp-err ||
		fail "$* : no message '$msg': `cat $OBJ/hpnmp-err`"
	[ `wc -l < $OBJ/hpnmp-err` -eq 1 ] ||
		fail "$* : more than one line on stderr: `cat $OBJ/hpnmp-err`"
	[ -e $out ] && fail "$* : left $out behind"
	ls -a `dirname $out` 2>/dev/null | grep -q '^\.hpnssh-metrics-plot\.' &&
		fail "$* : left a temporary file in `dirname $out`"
}

verbose "$tid: both ends"
mkcsv $M.local local 20
mkcsv $M.remote remote 20
$PLOT $M > $OBJ/hpnmp-out 2>&1 || fail "plot of $M failed: `cat $OBJ/hpnmp-out`"
png $M.png
ls -a $OBJ | grep -q '^\.hpnssh-metrics-plot\.' && fail "a temporary file left in $OBJ"
rm -f $M.png
$PLOT -o $OBJ/hpnmp-t.png -t "it's a title" $M > $OBJ/hpnmp-out 2>&1 ||
	fail "plot with -o -t failed: `cat $OBJ/hpnmp-out`"
png $OBJ/hpnmp-t.png
[ -e $M.png ] && fail "-o given, yet $M.png written"

verbose "$tid: files named on the command line, columns in another order"
mkcsv $OBJ/hpnmp-l.csv local 20 rev
mkcsv $OBJ/hpnmp-r.csv remote 12
$PLOT $OBJ/hpnmp-l.csv $OBJ/hpnmp-r.csv > $OBJ/hpnmp-out 2>&1 ||
	fail "plot of LOCAL.csv REMOTE.csv failed: `cat $OBJ/hpnmp-out`"
png $OBJ/hpnmp-l.png

verbose "$tid: the local end alone"
rm -f $M.remote $M.png
$PLOT $M > $OBJ/hpnmp-out 2>&1 || fail "plot without $M.remote failed: `cat $OBJ/hpnmp-out`"
png $M.png
rm -f $OBJ/hpnmp-l.png
$PLOT $OBJ/hpnmp-l.csv > $OBJ/hpnmp-out 2>&1 ||
	fail "plot of LOCAL.csv alone failed: `cat $OBJ/hpnmp-out`"
png $OBJ/hpnmp-l.png
# a remote end of one sample cannot be drawn: said, and left out
head -2 $OBJ/hpnmp-r.csv > $OBJ/hpnmp-r1.csv
rm -f $OBJ/hpnmp-l.png
$PLOT $OBJ/hpnmp-l.csv $OBJ/hpnmp-r1.csv > $OBJ/hpnmp-out 2>&1 ||
	fail "plot with a one-row remote failed: `cat $OBJ/hpnmp-out`"
grep -q "plotting the local end only" $OBJ/hpnmp-out ||
	fail "one-row remote: no notice: `cat $OBJ/hpnmp-out`"
png $OBJ/hpnmp-l.png

verbose "$tid: -h"
$PLOT -h > $OBJ/hpnmp-out 2>&1 || fail "-h: exit status not 0"
grep -q '^usage: hpnssh-metrics-plot' $OBJ/hpnmp-out || fail "-h: no usage"

verbose "$tid: errors"
refused "no such file" $OBJ/hpnmp-x.png -o $OBJ/hpnmp-x.png $OBJ/hpnmp-none
refused "no such file" $OBJ/hpnmp-l.png $OBJ/hpnmp-l.csv $OBJ/hpnmp-none.csv
sed '1s/^time,/tiem,/' $M.local > $OBJ/hpnmp-e.csv
refused '"time" column' $OBJ/hpnmp-e.png $OBJ/hpnmp-e.csv
sed '1s/,snd_mss,/,snd_mss_x,/' $M.local > $OBJ/hpnmp-e.csv
refused "lacks the column(s) snd_mss" $OBJ/hpnmp-e.png $OBJ/hpnmp-e.csv
sed '1s/^time,/tiem,/' $M.local > $OBJ/hpnmp-e.csv
refused '"time" column' $OBJ/hpnmp-l.png $OBJ/hpnmp-l.csv $OBJ/hpnmp-e.csv
head -2 $M.local > $OBJ/hpnmp-e.csv
refused "at least 2" $OBJ/hpnmp-e.png $OBJ/hpnmp-e.csv
head -1 $M.local > $OBJ/hpnmp-e.csv
refused "at least 2" $OBJ/hpnmp-e.png $OBJ/hpnmp-e.csv
: > $OBJ/hpnmp-e.csv
refused "empty" $OBJ/hpnmp-e.png $OBJ/hpnmp-e.csv
GNUPLOT=$OBJ/hpnmp-no-gnuplot
export GNUPLOT
refused "install gnuplot-nox" $M.png $M
unset GNUPLOT
refused "cannot write" $OBJ/hpnmp-no/dir/x.png -o $OBJ/hpnmp-no/dir/x.png $M
refused "cannot write" $M.local/x.png -o $M.local/x.png $M
cp $M.local $OBJ/hpnmp-keep
$PLOT -o $M.local $M > /dev/null 2> $OBJ/hpnmp-err && fail "-o $M.local accepted"
grep -q "error: the output $M.local is an input" $OBJ/hpnmp-err ||
	fail "-o $M.local: no message: `cat $OBJ/hpnmp-err`"
cmp -s $M.local $OBJ/hpnmp-keep || fail "-o $M.local changed the input"
if [ "`id -u`" != "0" ]; then
	mkdir $OBJ/hpnmp-ro && chmod 555 $OBJ/hpnmp-ro
	refused "cannot write" $OBJ/hpnmp-ro/x.png -o $OBJ/hpnmp-ro/x.png $M
	chmod 755 $OBJ/hpnmp-ro
fi

rm -rf $M $M.* $OBJ/hpnmp-* $OBJ/.hpnssh-metrics-plot.*
