#	HPN patch set: dynamic receive windows on an emulated long fat path
#	(1 Gbit/s, 50 ms), towards HPN, stock (same release) and Debian 9.2p1 peers:
#	growth past 2 MiB, the cap towards stock OpenSSH >= 8.4, multiplexed
#	sessions, -L forwards, ProxyJump, sftp/scp, and option errors.
#	Placed in the Public Domain.

tid="hpn windows"

STOCK_WINDOW_CAP=15728640
STOCK_WINDOW=2097152

# --- option values (no path needed)
for opt in HPNBufferSize=0 HPNBufferSize=1025M HPNBufferSize=64Q \
    HPNBufferSize=-1 TcpRcvBuf=2G TcpRcvBuf=x TcpRcvBufPoll=maybe \
    HPNDisabled=2; do
	if ${REAL_SSH} -G -F $OBJ/ssh_config -o "$opt" somehost \
	    > $OBJ/hpnw-opt.out 2>&1; then
		fail "ssh accepted bad option -o $opt"
	fi
	grep -Eqi "bad (hpnbuffersize|tcprcvbuf)|unsupported option" \
	    $OBJ/hpnw-opt.out || fail "ssh: no clear error for -o $opt: `cat $OBJ/hpnw-opt.out`"
	if ${REAL_SSHD} -T -f $OBJ/sshd_config -o "$opt" > $OBJ/hpnw-opt.out 2>&1; then
		fail "sshd accepted bad option -o $opt"
	fi
	grep -Eqi "bad (hpnbuffersize|tcprcvbuf)|unsupported option" \
	    $OBJ/hpnw-opt.out || fail "sshd: no clear error for -o $opt: `cat $OBJ/hpnw-opt.out`"
done
g=`${REAL_SSH} -G -F $OBJ/ssh_config -o HPNBufferSize=16M -o TcpRcvBuf=4096 somehost`
echo "$g" | grep -qx 'hpnbuffersize 16384' || fail "HPNBufferSize=16M not shown as 16384 KiB"
echo "$g" | grep -qx 'tcprcvbuf 4096' || fail "TcpRcvBuf=4096 not shown"
g=`${REAL_SSH} -G -F $OBJ/ssh_config somehost`
for l in 'hpndisabled no' 'tcprcvbufpoll yes' 'tcprcvbuf 0' 'hpnbuffersize 1048576'; do
	echo "$g" | grep -qx "$l" || fail "ssh -G does not show default '$l'"
done
t=`${REAL_SSHD} -T -f $OBJ/sshd_config -o HPNBufferSize=32768`
echo "$t" | grep -qx 'hpnbuffersize 32768' || fail "sshd -T: hpnbuffersize"
echo "$t" | grep -qx 'tcprcvbufpoll yes' || fail "sshd -T: tcprcvbufpoll"

# A configuration written for HPN-SSH loads (its unknown options ignored).
cat $OBJ/ssh_config > $OBJ/ssh_config.hpnssh
cat >> $OBJ/ssh_config.hpnssh <<EOF
	HPNDisabled no
	TcpRcvBufPoll yes
	TcpRcvBuf 8192
	HPNBufferSize 65536
	NoneEnabled no
	NoneSwitch no
	NoneMacEnabled no
	DisableMTAES no
	UseMPTCP no
	Metrics no
	MetricsInterval 5
	MetricsPath /tmp/metrics
	RemoteRcvBuf 4096
	Fallback yes
	FallbackPort 22
EOF
${REAL_SSH} -G -F $OBJ/ssh_config.hpnssh somehost > /dev/null ||
	fail "an HPN-SSH client configuration was rejected"
cat $OBJ/sshd_config > $OBJ/sshd_config.hpnssh
cat >> $OBJ/sshd_config.hpnssh <<EOF
HPNDisabled no
TcpRcvBufPoll yes
TcpRcvBuf 8192
HPNBufferSize 65536
NoneEnabled no
NoneMacEnabled no
DisableMTAES no
UseMPTCP no
EOF
${REAL_SSHD} -t -f $OBJ/sshd_config.hpnssh || fail "an HPN-SSH server configuration was rejected"

# --- the emulated path
if [ -z "$HPN_TOP" ]; then
	skip "no bench/netpath (HPN_TOP not set)"
fi
PATH_TAG=hpnw PATH_LOGLEVEL=DEBUG1
. $HPN_TOP/tests/regress/path-lib.sh
$NETPATH up --name $NP --rtt 50 --rate 1000 > $OBJ/hpnw-path.log 2>&1 ||
	fatal "netpath up failed: `cat $OBJ/hpnw-path.log`"

DATA=$OBJ/hpnw-data
OUT=$OBJ/hpnw-out
dd if=/dev/urandom of=$DATA bs=1048576 count=48 2>/dev/null

HPORT=`expr $PORT + 100`
H2PORT=`expr $PORT + 101`
SPORT=`expr $PORT + 102`
DPORT=`expr $PORT + 103`
LPORT=`expr $PORT + 104`
for n in hpn hpn2; do
	p=$HPORT
	[ $n = hpn2 ] && p=$H2PORT
	path_sshd $n ${REAL_SSHD} $p "SshdSessionPath $SSHD_SESSION" \
	    "SshdAuthPath $SSHD_AUTH" "Subsystem sftp $SFTPSERVER"
done
if [ -n "$HPN_STOCK_TREE" ] && [ -x "$HPN_STOCK_TREE/sshd" ]; then
	path_sshd stock $HPN_STOCK_TREE/sshd $SPORT \
	    "SshdSessionPath $HPN_STOCK_TREE/sshd-session" \
	    "SshdAuthPath $HPN_STOCK_TREE/sshd-auth" \
	    "Subsystem sftp $HPN_STOCK_TREE/sftp-server"
	have_stock=yes
fi
if [ -x /usr/sbin/sshd ] && /usr/sbin/sshd -V 2>&1 | grep -q '^OpenSSH_9\.2'; then
	mkdir -p -m 0755 /run/sshd
	path_sshd debian /usr/sbin/sshd $DPORT "Subsystem sftp /usr/lib/openssh/sftp-server"
	have_debian=yes
fi

sed -e "s/^	Hostname.*/	Hostname $SADDR/" -e "s/^	Port.*/	Port $HPORT/" \
    $OBJ/ssh_config > $OBJ/ssh_config.path

# xfer down|up CLIENT PORT LOG [options]: cat DATA across, byte-compare.
xfer() {
	dir=$1 cli=$2 port=$3 log=$4
	shift 4
	rm -f $OUT $log $log.err
	if [ $dir = down ]; then
		$CNS timeout 120 $cli -F $OBJ/ssh_config.path -p $port -E $log -v \
		    "$@" somehost "cat $DATA" > $OUT 2>> $log.err
	else
		$CNS timeout 120 $cli -F $OBJ/ssh_config.path -p $port -E $log -v \
		    "$@" somehost "cat > $OUT" < $DATA 2>> $log.err
	fi
	r=$?
	[ $r -eq 0 ] || fail "$dir with $cli port $port: exit $r"
	cmp -s $DATA $OUT || fail "$dir with $cli port $port: data differ"
}
# expect_grown WHAT PEAK [CAP]
expect_grown() {
	what=$1 p=$2 cap=$3
	if [ -z "$p" ]; then
		fail "$what: no channel summary in the log"
	elif [ $p -le $STOCK_WINDOW ]; then
		fail "$what: window did not grow past 2 MiB (peak $p)"
	elif [ -n "$cap" ] && [ $p -gt $cap ]; then
		fail "$what: window $p above the cap $cap"
	else
		trace "$what: peak window $p"
	fi
}

verbose "$tid: hpn client downloads from hpn server"
xfer down ${REAL_SSH} $HPORT $OBJ/hpnw-c.log
expect_grown "hpn client receiving" "`peak $OBJ/hpnw-c.log`"

verbose "$tid: hpn client uploads to hpn server"
m=`lines $OBJ/hpnw-sshd.hpn.log`
xfer up ${REAL_SSH} $HPORT $OBJ/hpnw-c.log
sleep 1
expect_grown "hpn server receiving" "`peak $OBJ/hpnw-sshd.hpn.log $m`"

verbose "$tid: a full path holds the window"
# 400 MiB down: once the rate stops growing at the link's, windows are held
# to 1.5 x that x the round trip (not below 64 MiB): no growth past it
# until the transfer fills it again (hpn-window.c window_hold())
data=$DATA
DATA=$OBJ/hpnw-data.big
dd if=/dev/urandom of=$DATA bs=1048576 count=400 2>/dev/null
xfer down ${REAL_SSH} $HPORT $OBJ/hpnw-hold.log
hold=`sed -n 's/.*windows held to \([0-9]*\) bytes.*/\1/p' $OBJ/hpnw-hold.log | head -1`
if [ -z "$hold" ]; then
	fail "hold: the window was never held: `grep 'window .* -> ' $OBJ/hpnw-hold.log | tail -3`"
else
	# a growth while held past the hold (a held window's shrinking
	# steps, "(held: ...)", are above it until they reach it)
	over=`awk '
	    /windows held to/ {
		for (i = 1; i < NF; i++)
			if ($i == "to") h = $(i + 1) + 0
		held = 1; next
	    }
	    /windows grow again/ { held = 0; next }
	    held && / window [0-9]+ -> [0-9]+ / && !/[(]held:/ {
		for (i = 1; i < NF; i++)
			if ($i == "->" && $(i + 1) + 0 > h) { print; exit }
	    }' $OBJ/hpnw-hold.log`
	[ -z "$over" ] || fail "hold: held to $hold, yet: $over"
	trace "hold: held to $hold bytes: `grep 'rate stopped growing' $OBJ/hpnw-hold.log | head -1`"
fi
rm -f $DATA $OUT
DATA=$data

verbose "$tid: HPNDisabled keeps the stock window"
xfer down ${REAL_SSH} $HPORT $OBJ/hpnw-c.log -oHPNDisabled=yes
p=`peak $OBJ/hpnw-c.log`
[ "$p" = "$STOCK_WINDOW" ] || fail "HPNDisabled=yes: peak window $p"

verbose "$tid: sftp and scp (hpn to hpn)"
rm -f $OUT
$CNS timeout 120 ${SFTP} -S ${REAL_SSH} -F $OBJ/ssh_config.path -q \
    somehost:$DATA $OUT > /dev/null || fail "sftp download failed"
cmp -s $DATA $OUT || fail "sftp download: data differ"
rm -f $OUT
echo "put $DATA $OUT" > $OBJ/hpnw-batch
$CNS timeout 120 ${SFTP} -S ${REAL_SSH} -F $OBJ/ssh_config.path -q \
    -b $OBJ/hpnw-batch somehost > /dev/null || fail "sftp upload failed"
cmp -s $DATA $OUT || fail "sftp upload: data differ"
rm -f $OUT
$CNS timeout 120 ${SCP} -S ${REAL_SSH} -F $OBJ/ssh_config.path -q \
    $DATA somehost:$OUT || fail "scp upload failed"
cmp -s $DATA $OUT || fail "scp upload: data differ"

if [ "$have_stock" = yes ]; then
	verbose "$tid: hpn client and stock (same release) server"
	xfer down ${REAL_SSH} $SPORT $OBJ/hpnw-c.log
	grep -q "capped at $STOCK_WINDOW_CAP" $OBJ/hpnw-c.log ||
		fail "no window cap towards the stock (same release) server"
	expect_grown "hpn client from stock server" "`peak $OBJ/hpnw-c.log`" \
	    $STOCK_WINDOW_CAP
	xfer up ${REAL_SSH} $SPORT $OBJ/hpnw-c.log

	verbose "$tid: stock (same release) client and hpn server"
	m=`lines $OBJ/hpnw-sshd.hpn.log`
	xfer up $HPN_STOCK_TREE/ssh $HPORT $OBJ/hpnw-c.log
	sleep 1
	tail -n +$m $OBJ/hpnw-sshd.hpn.log | grep -q "OpenSSH [0-9]*\.[0-9]* without HPN: windows capped at $STOCK_WINDOW_CAP" ||
		fail "no window cap towards the stock (same release) client"
	expect_grown "hpn server from stock client" \
	    "`peak $OBJ/hpnw-sshd.hpn.log $m`" $STOCK_WINDOW_CAP
	xfer down $HPN_STOCK_TREE/ssh $HPORT $OBJ/hpnw-c.log
else
	skip_part "a stock (same release) peer" "no stock build (HPN_STOCK_TREE)"
fi

verbose "$tid: Debian's OpenSSH 9.2p1 client and hpn server"
if [ -x /usr/bin/ssh ] && /usr/bin/ssh -V 2>&1 | grep -q '^OpenSSH_9\.2'; then
	m=`lines $OBJ/hpnw-sshd.hpn.log`
	xfer up /usr/bin/ssh $HPORT $OBJ/hpnw-c.log
	sleep 1
	tail -n +$m $OBJ/hpnw-sshd.hpn.log | grep -q "OpenSSH 9.2 without HPN: windows capped at $STOCK_WINDOW_CAP" ||
		fail "no window cap towards the Debian 9.2p1 client"
	expect_grown "hpn server from Debian client" \
	    "`peak $OBJ/hpnw-sshd.hpn.log $m`" $STOCK_WINDOW_CAP
	xfer down /usr/bin/ssh $HPORT $OBJ/hpnw-c.log
else
	skip_part "Debian's OpenSSH 9.2p1 client" "no /usr/bin/ssh of OpenSSH 9.2"
fi
if [ "$have_debian" = yes ]; then
	verbose "$tid: hpn client and Debian's OpenSSH 9.2p1 server"
	xfer down ${REAL_SSH} $DPORT $OBJ/hpnw-c.log
	grep -q "OpenSSH 9.2 without HPN: windows capped at $STOCK_WINDOW_CAP" $OBJ/hpnw-c.log ||
		fail "no window cap towards the Debian 9.2p1 server"
	expect_grown "hpn client from Debian server" "`peak $OBJ/hpnw-c.log`" \
	    $STOCK_WINDOW_CAP
	xfer up ${REAL_SSH} $DPORT $OBJ/hpnw-c.log
else
	skip_part "Debian's OpenSSH 9.2p1 server" "no /usr/sbin/sshd of OpenSSH 9.2 (openssh-server)"
fi

verbose "$tid: a multiplexed session grows in the master"
rm -f $OBJ/hpnw-ctl
$CNS ${REAL_SSH} -F $OBJ/ssh_config.path -E $OBJ/hpnw-master.log -v \
    -oControlMaster=yes -oControlPath=$OBJ/hpnw-ctl -f -N somehost ||
	fail "cannot start a control master"
rm -f $OUT
$CNS timeout 120 ${REAL_SSH} -F $OBJ/ssh_config.path -oControlPath=$OBJ/hpnw-ctl \
    somehost "cat $DATA" > $OUT || fail "multiplexed download failed"
cmp -s $DATA $OUT || fail "multiplexed download: data differ"
$CNS ${REAL_SSH} -F $OBJ/ssh_config.path -oControlPath=$OBJ/hpnw-ctl \
    -O exit somehost 2>/dev/null
sleep 1
expect_grown "multiplexed session" "`peak $OBJ/hpnw-master.log`"

verbose "$tid: a -L forward grows"
rm -f $OBJ/hpnw-fwd.log
$CNS ${REAL_SSH} -F $OBJ/ssh_config.path -E $OBJ/hpnw-fwd.log -v -N \
    -oExitOnForwardFailure=yes -L 127.0.0.1:$LPORT:$SADDR:$H2PORT somehost &
fwd_pid=$!
path_pids="$path_pids $fwd_pid"
i=0
while ! grep -q "Local forwarding listening on 127.0.0.1 port $LPORT" \
    $OBJ/hpnw-fwd.log 2>/dev/null && [ $i -lt 100 ]; do
	sleep 0.1
	i=`expr $i + 1`
done
rm -f $OUT
$CNS timeout 120 ${REAL_SSH} -F $OBJ/ssh_config.path -oHostname=127.0.0.1 \
    -p $LPORT somehost "cat $DATA" > $OUT || fail "download through -L failed"
cmp -s $DATA $OUT || fail "download through -L: data differ"
kill $fwd_pid 2>/dev/null
wait $fwd_pid 2>/dev/null
expect_grown "-L forward" "`peak $OBJ/hpnw-fwd.log`"

verbose "$tid: ProxyJump: the pipe transport grows by measured rate x RTT"
xfer down ${REAL_SSH} $H2PORT $OBJ/hpnw-c.log -oProxyJump=somehost:$HPORT
grep -q "measured rate x RTT" $OBJ/hpnw-c.log ||
	fail "ProxyJump: no growth by measured rate x RTT"
expect_grown "ProxyJump" "`peak $OBJ/hpnw-c.log`"

# The server behind the jump host receives over a socket from the jump
# host, a short hop: its window follows the end-to-end (PING) round trip.
verbose "$tid: ProxyJump upload: the server behind the jump host grows too"
m=`lines $OBJ/hpnw-sshd.hpn2.log`
xfer up ${REAL_SSH} $H2PORT $OBJ/hpnw-c.log -oProxyJump=somehost:$HPORT
sleep 1
tail -n +`expr $m + 1` $OBJ/hpnw-sshd.hpn2.log | grep -q "end-to-end RTT (relay)" ||
	fail "ProxyJump upload: the server did not see the relay"
expect_grown "server behind ProxyJump receiving" "`peak $OBJ/hpnw-sshd.hpn2.log $m`"

trap - EXIT
path_cleanup
rm -f $DATA $OUT $OBJ/hpnw-* $OBJ/ssh_config.path $OBJ/ssh_config.hpnssh \
    $OBJ/sshd_config.hpnssh $OBJ/sshd_config.hpn $OBJ/sshd_config.hpn2 \
    $OBJ/sshd_config.stock $OBJ/sshd_config.debian
