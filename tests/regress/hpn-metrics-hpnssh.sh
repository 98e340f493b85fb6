#	HPN patch set: TCP metrics across HPN-SSH 18.8 and this patch set
#	(README.hpn section 11), with tests/regress/hpn-scp-hpnssh.py playing
#	HPN-SSH from the bytes its programs send:
#	 - its client's request (stack-metrics@hpnssh.org) to our hpnsshd is
#	   answered with a binn object holding kernel_version and TCP_INFO's
#	   fields by their kernel names (rtt, cwnd, bytes received...), the
#	   figures of this connection; refused with PermitMetrics no;
#	 - hpnssh -o Metrics=yes toward an HPN-SSH-like server asks with that
#	   request, not ours, and writes the server's figures (the answer
#	   HPN-SSH 18.8's hpnsshd sent, captured) into MetricsPath.remote.
#	Placed in the Public Domain.

tid="hpn metrics with HPN-SSH"

[ -n "$HPN_TOP" ] || skip "HPN_TOP not set"
. $HPN_TOP/tests/lib/skips.sh
. $HPN_TOP/tests/regress/peer-lib.sh
HS=$HPN_TOP/tests/regress/hpn-scp-hpnssh.py
PY=/usr/bin/python3
W=$OBJ/hpnmhs
rm -rf $W
mkdir -p $W

if ! $PY -c 'import paramiko' 2>/dev/null; then
	skip_part "metrics with HPN-SSH (paramiko peers)" "no python3-paramiko"
else
	# field NAME: its value in the client's print of the answer
	field() {
		awk -v k=$1 '$1 == k { print $2 }' $W/ans
	}

	verbose "$tid: HPN-SSH's client asks our hpnsshd"
	start_sshd
	timeout 60 $PY $HS metrics-client $PORT $OBJ/ssh-ed25519 $USER \
	    > $W/ans 2>&1 || fail "metrics-client failed: `cat $W/ans`"
	grep -q refused $W/ans && fail "HPN-SSH's request refused"
	[ -n "`field kernel_version`" ] ||
		fail "no kernel_version: `cat $W/ans`"
	for k in tcpi_rtt tcpi_snd_cwnd tcpi_snd_mss tcpi_rcv_space \
	    tcpi_total_retrans tcpi_bytes_received; do
		v=`field $k`
		[ -n "$v" ] || fail "no $k: `cat $W/ans`"
	done
	[ "`field tcpi_snd_cwnd`" -gt 0 ] || fail "cwnd 0: `cat $W/ans`"
	[ "`field tcpi_bytes_received`" -gt 1000 ] ||
		fail "bytes_received `field tcpi_bytes_received`: not this connection's"
	[ "`field tcpi_state`" = 1 ] || fail "state not ESTABLISHED"

	verbose "$tid: PermitMetrics no refuses it"
	cp $OBJ/sshd_config $W/sshd_config.orig
	echo "PermitMetrics no" >> $OBJ/sshd_config
	stop_sshd
	start_sshd
	timeout 60 $PY $HS metrics-client $PORT $OBJ/ssh-ed25519 $USER \
	    > $W/ans 2>&1 || fail "metrics-client failed: `cat $W/ans`"
	[ "`cat $W/ans`" = refused ] ||
		fail "PermitMetrics no: answered: `head -3 $W/ans`"
	cp $W/sshd_config.orig $OBJ/sshd_config
	stop_sshd

	verbose "$tid: hpnssh -o Metrics=yes toward an HPN-SSH-like server"
	PPORT=`expr $PORT + 4`
	peer_ssh_conf $W/ssh.conf $PPORT "LogLevel error"
	rm -f $W/log
	timeout 90 $PY $HS --log $W/log --timeout 80 server $PPORT \
	    $OBJ/host.ssh-ed25519 $OBJ/authorized_keys_$USER true \
	    > $W/srv.out 2>&1 &
	SP=$!
	peer_wait_listen $PPORT
	timeout 60 ${REAL_SSH} -F $W/ssh.conf -o Metrics=yes \
	    -o MetricsPath=$W/m hpnssh-peer true > $W/out 2>&1 ||
		fail "ssh -o Metrics=yes failed: `cat $W/out $W/srv.out`"
	kill $SP 2>/dev/null
	wait $SP 2>/dev/null
	grep -q "^global stack-metrics@hpnssh.org" $W/log ||
		fail "HPN-SSH's request not sent: `cat $W/log`"
	grep -q "^global tcp-info@" $W/log &&
		fail "our request sent to HPN-SSH: `cat $W/log`"
	[ -f $W/m.remote ] || fail "no remote metrics: `cat $W/out`"
	# the captured answer's figures: tcpi_rtt 210, snd_cwnd 15, snd_mss
	# 40960, rcv_space 65483
	rows=`tail -n +2 $W/m.remote | wc -l`
	[ "$rows" -ge 1 ] || fail "no remote rows"
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
	    NR == 2 { print $c["rtt_us"], $c["snd_cwnd"], $c["snd_mss"],
	    $c["rcv_space"] }' $W/m.remote > $W/row
	[ "`cat $W/row`" = "210 15 40960 65483" ] ||
		fail "remote row `cat $W/row`, not HPN-SSH's figures: `head -2 $W/m.remote`"
	[ `tail -n +2 $W/m.local | wc -l` -ge 1 ] || fail "no local rows"
fi

rm -rf $W
