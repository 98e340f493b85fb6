#	HPN patch set: bulk channels read and write more per trip round the
#	loop (src/hpn-chanio.c).  Data goes up and down intact through pipes
#	at both ends with a consumer that starts late; the pipes of those
#	bulk channels grow on both ends, those of a pty session do not; two
#	sessions multiplexed on one connection both arrive intact.
#	Placed in the Public Domain.

tid="hpn channel reads and writes"

DATA=$OBJ/hpnc-data
OUT=$OBJ/hpnc-out
CLOG=$OBJ/hpnc-client.log
GROWN="pipe [0-9]* -> \(1048576\|262144\) bytes"

max=`cat /proc/sys/fs/pipe-max-size 2>/dev/null`
[ -n "$max" ] || skip "no /proc/sys/fs/pipe-max-size (not Linux)"
[ "$max" -ge 262144 ] || skip "fs.pipe-max-size $max < 256 KiB"

dd if=/dev/urandom of=$DATA bs=1048576 count=32 2>/dev/null

# Each connection through ssh_proxy runs its own sshd -i, and
# $TEST_SSHD_LOGFILE then points to that connection's log.

# Upload: hpnssh reads a pipe, the remote command starts reading late.
rm -f $OUT $CLOG
cat $DATA | ${REAL_SSH} -F $OBJ/ssh_proxy -E $CLOG -o LogLevel=DEBUG3 \
    somehost "sleep 1; exec cat > $OUT" || fail "upload failed"
cmp -s $DATA $OUT || fail "upload: data differ"
grep -q "input $GROWN" $CLOG ||
	fail "upload: the client's input pipe did not grow"
grep -q "output $GROWN" $TEST_SSHD_LOGFILE ||
	fail "upload: the session's input pipe (server) did not grow"

# Download: the remote command writes a pipe, the local reader starts late.
rm -f $OUT $CLOG
${REAL_SSH} -F $OBJ/ssh_proxy -E $CLOG -o LogLevel=DEBUG3 somehost \
    "cat $DATA" | (sleep 1; exec cat > $OUT) || fail "download failed"
cmp -s $DATA $OUT || fail "download: data differ"
grep -q "output $GROWN" $CLOG ||
	fail "download: the client's output pipe did not grow"
grep -q "input $GROWN" $TEST_SSHD_LOGFILE ||
	fail "download: the session's output pipe (server) did not grow"

# A pty session: its channel on the server is a terminal, not bulk.
${REAL_SSH} -tt -F $OBJ/ssh_proxy somehost "head -c 1048576 $DATA | od -An -x" \
    > $OUT 2>/dev/null < /dev/null || fail "pty session failed"
[ `wc -c < $OUT` -gt 1048576 ] || fail "pty session: short output"
grep -q "session_pty_req" $TEST_SSHD_LOGFILE ||
	fail "pty session: no pty in the server log"
if grep -q "$GROWN" $TEST_SSHD_LOGFILE; then
	fail "pty session: the server grew a terminal's pipe"
fi

# Two bulk sessions multiplexed on one connection, at the same time.
rm -f $OBJ/hpnc-mux $OUT $OUT.2
${REAL_SSH} -F $OBJ/ssh_proxy -N -oControlMaster=yes \
    -oControlPath=$OBJ/hpnc-mux somehost < /dev/null > /dev/null 2>&1 &
master=$!
i=0
while [ ! -S $OBJ/hpnc-mux ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=`expr $i + 1`
done
if [ -S $OBJ/hpnc-mux ]; then
	${REAL_SSH} -F $OBJ/ssh_proxy -oControlPath=$OBJ/hpnc-mux somehost \
	    "cat $DATA" > $OUT 2> $CLOG &
	p1=$!
	cat $DATA | ${REAL_SSH} -F $OBJ/ssh_proxy \
	    -oControlPath=$OBJ/hpnc-mux somehost "cat > $OUT.2" 2>> $CLOG ||
		fail "multiplexed upload failed"
	wait $p1 || fail "multiplexed download failed"
	cmp -s $DATA $OUT || fail "multiplexed download: data differ"
	cmp -s $DATA $OUT.2 || fail "multiplexed upload: data differ"
else
	fail "the control master did not start"
fi
kill $master 2>/dev/null
wait $master 2>/dev/null

rm -f $DATA $OUT $OUT.2 $CLOG $OBJ/hpnc-mux
