#	HPN patch set: the multi-threaded AES-CTR.  Identical cipher stream
#	towards stock (same release) and Debian 9.2p1 peers (non-ETM MAC, so a wrong
#	keystream cannot go unnoticed), rekeys every 1 MiB, ssh -f,
#	ControlMaster, and no worker thread when disabled.  The automatic
#	thread count stays single-threaded below 3 CPUs, so the hpn ends here
#	ask for a worker explicitly (MTAESThreads 1).
#	Placed in the Public Domain.

tid="hpn threaded aes-ctr"

[ -n "$HPN_TOP" ] || skip "HPN_TOP not set"
. $HPN_TOP/tests/lib/skips.sh

DATA=$OBJ/hpnm-data
SMALL=$OBJ/hpnm-small
OUT=$OBJ/hpnm-out
LOG=$OBJ/hpnm-log
dd if=/dev/urandom of=$DATA bs=1048576 count=64 2>/dev/null
head -c 33554432 $DATA > $SMALL
SUM=`sha256sum < $DATA`
SSUM=`sha256sum < $SMALL`
CIPHERS="aes128-ctr aes256-ctr"
MAC="-m hmac-sha2-256"
# Hundreds of rekeys: a cheap KEX (sntrup761 costs ~0.1 s each in 9.2).
REKEY="-oRekeyLimit=1M -oKexAlgorithms=curve25519-sha256"
ncpu=`getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1`
# the hpn client's option (stock clients share the config file)
MT1="-oMTAESThreads=1"

# --- option values
for opt in MTAESThreads=0 MTAESThreads=65 MTAESThreads=x DisableMTAES=maybe; do
	${REAL_SSH} -G -F $OBJ/ssh_config -o $opt somehost > $LOG 2>&1 &&
		fail "ssh accepted -o $opt"
	${REAL_SSHD} -T -f $OBJ/sshd_config -o $opt > $LOG 2>&1 &&
		fail "sshd accepted -o $opt"
done
${REAL_SSH} -G -F $OBJ/ssh_config somehost | grep -qx 'mtaesthreads auto' ||
	fail "ssh -G: mtaesthreads auto"
${REAL_SSH} -G -F $OBJ/ssh_config -oMTAESThreads=3 somehost |
    grep -qx 'mtaesthreads 3' || fail "ssh -G: mtaesthreads 3"
${REAL_SSHD} -T -f $OBJ/sshd_config | grep -qx 'disablemtaes no' ||
	fail "sshd -T: disablemtaes no"

# threaded LOG: the log shows worker threads.
threaded() {
	grep -q "hpn_mt_cipher_new: aes.*-ctr: [0-9]* worker thread" $1 ||
		fail "$2: no threaded AES-CTR in `basename $1`"
}
# up|down CLIENT CONFIG CIPHER: 64 MiB across, rekey every 1 MiB
# (sh has no locals: x_* names are xfer's own)
xfer() {
	x_d=$1 x_cli=$2 x_cfg=$3 x_c=$4 x_o=
	[ "$x_cli" = "${REAL_SSH}" ] && x_o=$MT1
	rm -f $OUT $LOG
	if [ $x_d = up ]; then
		x_s=`$x_cli -F $x_cfg -E $LOG -oLogLevel=DEBUG1 -c $x_c $MAC $REKEY $x_o somehost \
		    sha256sum < $DATA`
	else
		$x_cli -F $x_cfg -E $LOG -oLogLevel=DEBUG1 -c $x_c $MAC $REKEY $x_o somehost \
		    "cat $DATA" > $OUT
		x_s=`sha256sum < $OUT`
	fi
	if [ "$x_s" != "$SUM" ]; then
		fail "$x_c $x_d with $x_cli ($x_cfg): data differ"
		tail -n 15 $LOG
	fi
}

# 128 rekeys per transfer: keep the servers' logs at DEBUG1, not DEBUG3.
for f in $OBJ/sshd_config $OBJ/sshd_proxy $OBJ/ssh_config $OBJ/ssh_proxy; do
	sed -i 's/^\([[:space:]]*LogLevel[[:space:]]*\).*/\1DEBUG1/' $f
done
start_sshd

verbose "$tid: automatic thread count"
rm -f $LOG
${REAL_SSH} -F $OBJ/ssh_config -E $LOG -oLogLevel=DEBUG1 -c aes128-ctr $MAC somehost true ||
	fail "ssh with the automatic thread count failed"
if [ "$ncpu" -ge 3 ]; then
	threaded $LOG "automatic, $ncpu CPUs"
else
	grep -q "fewer than 3 CPUs: single-threaded" $LOG ||
		fail "automatic, $ncpu CPUs: no single-threaded notice"
fi

echo "MTAESThreads 1" >> $OBJ/sshd_config
stop_sshd
start_sshd
for c in $CIPHERS; do
	verbose "$tid: hpn to hpn, $c"
	xfer up ${REAL_SSH} $OBJ/ssh_config $c
	threaded $LOG "hpn client $c"
done
threaded $TEST_SSHD_LOGFILE "hpn server"
n=`grep -c "rekeying to start the threaded AES-CTR" $LOG`
u=`grep -c "a key exchange is under way: it brings the threads" $LOG`
# EarlySend's first MiB of data (sent with the authentication request)
# passes RekeyLimit=1M: when that key exchange is under way, it brings
# the threads and none is forced
[ "$n" = "1" ] || { [ "$n" = "0" ] && [ "$u" -ge 1 ]; } ||
	fail "expected one forced rekey, saw $n (and $u under way)"

for c in "$HPN_STOCK_TREE/ssh" /usr/bin/ssh; do
	[ -x "$c" ] || { skip_part "$c as the client" "no $c"; continue; }
	for ci in $CIPHERS; do
		verbose "$tid: `$c -V 2>&1 | cut -d, -f1` client, hpn server, $ci"
		xfer up $c $OBJ/ssh_config $ci
		xfer down $c $OBJ/ssh_config $ci
	done
done

# The client's threads are looked at every 0.05 s while it lives, not
# once after a guess at when they start: with DisableMTAES=no until a
# worker shows, with yes to the end, having looked after authentication
# (the session then waits 3 s before its data).
verbose "$tid: DisableMTAES leaves no worker thread"
for dis in no yes; do
	rm -f $LOG
	${REAL_SSH} -F $OBJ/ssh_config -E $LOG -oLogLevel=DEBUG1 -c aes128-ctr $MAC $MT1 \
	    -oDisableMTAES=$dis somehost "sleep 3; cat $SMALL" > $OUT &
	pid=$!
	n=0 looked=0
	while kill -0 $pid 2>/dev/null; do
		grep -q "Authenticated to" $LOG 2>/dev/null && looked=`expr $looked + 1`
		for t in /proc/$pid/task/*; do
			grep -q hpn-aes-ctr $t/comm 2>/dev/null && n=`expr $n + 1`
		done
		[ $dis = no ] && [ $n -gt 0 ] && break
		sleep 0.05
	done
	wait $pid
	[ "`sha256sum < $OUT`" = "$SSUM" ] || fail "DisableMTAES=$dis: data differ"
	if [ $dis = yes ] && [ $n -ne 0 ]; then
		fail "DisableMTAES=yes: worker threads seen ($n sightings)"
	elif [ $dis = yes ] && [ $looked -lt 2 ]; then
		fail "DisableMTAES=yes: the threads not looked at after authentication"
	elif [ $dis = no ] && [ $n -eq 0 ]; then
		fail "DisableMTAES=no: no worker thread seen"
	fi
	trace "DisableMTAES=$dis: $n worker threads seen, $looked looks after authentication"
done

verbose "$tid: threads do not pile up across rekeys"
rm -f $LOG
${REAL_SSH} -F $OBJ/ssh_config -c aes128-ctr $MAC -oRekeyLimit=256K -oKexAlgorithms=curve25519-sha256 \
    -oMTAESThreads=2 somehost "cat $SMALL" > $OUT &
pid=$!
max=0
i=0
while kill -0 $pid 2>/dev/null && [ $i -lt 40 ]; do
	n=`ls /proc/$pid/task 2>/dev/null | wc -l`
	[ $n -gt $max ] && max=$n
	sleep 0.1
	i=`expr $i + 1`
done
wait $pid
[ "`sha256sum < $OUT`" = "$SSUM" ] || fail "rekeys with 2 workers: data differ"
# main thread + 2 workers per direction
[ $max -le 5 ] || fail "up to $max threads with 2 workers per direction"
trace "at most $max threads"

verbose "$tid: ssh -f"
rm -f $OUT $LOG
${REAL_SSH} -F $OBJ/ssh_config -E $LOG -oLogLevel=DEBUG1 -f -c aes256-ctr $MAC $REKEY $MT1 \
    somehost "cat $SMALL" > $OUT || fail "ssh -f failed"
i=0
while [ "`wc -c < $OUT`" -lt 33554432 ] && [ $i -lt 600 ]; do
	sleep 0.1
	i=`expr $i + 1`
done
sleep 1
[ "`sha256sum < $OUT`" = "$SSUM" ] || fail "ssh -f: data differ"
threaded $LOG "ssh -f"

verbose "$tid: ControlMaster"
rm -f $OBJ/hpnm-ctl $LOG
${REAL_SSH} -F $OBJ/ssh_config -E $LOG -oLogLevel=DEBUG1 -oControlMaster=yes $MT1 \
    -oControlPath=$OBJ/hpnm-ctl -f -N -c aes128-ctr $MAC $REKEY somehost ||
	fail "cannot start a control master"
${REAL_SSH} -F $OBJ/ssh_config -oControlPath=$OBJ/hpnm-ctl somehost \
    "cat $SMALL" > $OUT || fail "multiplexed download failed"
[ "`sha256sum < $OUT`" = "$SSUM" ] || fail "ControlMaster: data differ"
${REAL_SSH} -F $OBJ/ssh_config -oControlPath=$OBJ/hpnm-ctl -O exit somehost 2>/dev/null
threaded $LOG "ControlMaster"
stop_sshd

for srv in "$HPN_STOCK_TREE" /usr/sbin; do
	[ -n "$srv" ] && [ -x "$srv/sshd" ] ||
		{ skip_part "the server of ${srv:-the stock build}" "no ${srv:-HPN_STOCK_TREE}/sshd"; continue; }
	case "$srv" in
	/usr/sbin)
		/usr/sbin/sshd -V 2>&1 | grep -q '^OpenSSH_9\.2' ||
			{ skip_part "Debian's sshd 9.2" "/usr/sbin/sshd is not OpenSSH 9.2"; continue; }
		mkdir -p -m 0755 /run/sshd
		grep -Eiv '^[[:space:]]*(SshdSessionPath|SshdAuthPath|PerSourcePenalties|Subsystem)[[:space:]]' \
		    $OBJ/sshd_proxy > $OBJ/sshd_proxy.peer ;;
	*)
		sed -e "s|$SSHD_SESSION|$srv/sshd-session|" \
		    -e "s|$SSHD_AUTH|$srv/sshd-auth|" \
		    $OBJ/sshd_proxy > $OBJ/sshd_proxy.peer ;;
	esac
	grep -iv '^proxycommand' $OBJ/ssh_proxy > $OBJ/ssh_proxy.peer
	echo "proxycommand $srv/sshd -i -f $OBJ/sshd_proxy.peer" >> $OBJ/ssh_proxy.peer
	for c in $CIPHERS; do
		verbose "$tid: hpn client, `$srv/sshd -V 2>&1 | cut -d, -f1` server, $c"
		xfer up ${REAL_SSH} $OBJ/ssh_proxy.peer $c
		threaded $LOG "hpn client to $srv"
		xfer down ${REAL_SSH} $OBJ/ssh_proxy.peer $c
	done
done

rm -f $DATA $OUT $LOG $OBJ/hpnm-* $OBJ/sshd_proxy.peer $OBJ/ssh_proxy.peer
