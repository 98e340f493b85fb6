#	HPN patch set: legacy scp resume as HPN-SSH 18.8 does it (-Z), with
#	tests/regress/hpn-scp-hpnssh.py playing HPN-SSH's side from the bytes
#	its programs send (README.hpn sections 6 and 10).
#	 - our remote scp -t -Z under HPN-SSH's uploading client, and scp -f -Z
#	   under its downloading client: a half copy is completed with only
#	   the missing half sent, a complete one is skipped, a flipped byte, a
#	   longer or a same-size different copy is sent whole, a missing or
#	   empty one whole;
#	 - a hostile answer (bad hash, unknown kind, cut short) to our source:
#	   a clear error and the whole file, never a wrong file;
#	 - hpnscp -Z (SFTP) toward an HPN-SSH-like server (its banner, no
#	   EXT_INFO of ours, an sftp-server without hash-range@): it switches
#	   to the legacy exchange on a second connection, both ways, runs
#	   "hpnscp -Z -t|-f" there, sends only the missing half, and the whole
#	   file after a flipped byte; hpnscp -O -Z does the same directly;
#	   -O -ZZ is refused.
#	Every result is compared with the source; the bytes of file data moved
#	are those the stand-in logs.  Placed in the Public Domain.

tid="hpn scp resume with HPN-SSH"

[ -n "$HPN_TOP" ] || skip "HPN_TOP not set"
. $HPN_TOP/tests/regress/sftp-lib.sh
. $HPN_TOP/tests/regress/peer-lib.sh
HS=$HPN_TOP/tests/regress/hpn-scp-hpnssh.py
W=$OBJ/hpnzscp
rm -rf $W
mkdir -p $W/t

head -c 3000000 /dev/urandom > $W/src
SIZE=3000000
HALF=1500000

# held KIND FILE: what the destination holds before a copy
held() {
	rm -f $2
	case $1 in
	missing) ;;
	empty) : > $2 ;;
	half) head -c $HALF $W/src > $2 ;;
	complete) cp $W/src $2 ;;
	flipped) head -c $HALF $W/src > $2
		flip $2 1000 ;;
	longer) cp $W/src $2; printf 'more' >> $2 ;;
	samesize) cp $W/src $2
		flip $2 2000000 ;;
	esac
}

# expect KIND: the file data the stand-in should see moved
expect() {
	case $1 in
	half) echo `expr $SIZE - $HALF` ;;
	complete) echo none ;;
	*) echo $SIZE ;;
	esac
}

# moved: the file data the stand-in logged ("none": no data at all)
moved() {
	awk '$1 == "data" { n += $2; seen = 1 }
	    END { if (seen) print n; else print "none" }' $W/log
}

# check WHAT KIND DEST: DEST is the source, and what moved is right
check() {
	cmp -s $W/src $3 || fail "$1 $2: destination differs from the source"
	m=`moved`
	e=`expect $2`
	[ "$m" = "$e" ] || fail "$1 $2: moved $m bytes of file data, expected $e: `tr '\n' ';' < $W/log`"
}

KINDS="missing empty half complete flipped longer samesize"

verbose "$tid: HPN-SSH's client uploads, our scp -t -Z receives"
for k in $KINDS; do
	held $k $W/t/up
	rm -f $W/log
	timeout 60 $PY $HS --log $W/log source $W/src -- \
	    ${SCP} -t -Z $W/t/up > $W/out 2>&1 ||
		fail "up $k: stand-in failed: `cat $W/out`"
	check up $k $W/t/up
done

verbose "$tid: HPN-SSH's client downloads, our scp -f -Z sends"
for k in $KINDS; do
	held $k $W/t/down
	rm -f $W/log
	timeout 60 $PY $HS --log $W/log sink $W/t/down -- \
	    ${SCP} -f -Z $W/src > $W/out 2>&1 ||
		fail "down $k: stand-in failed: `cat $W/out`"
	check down $k $W/t/down
done

verbose "$tid: hostile answers to our scp -f -Z: whole file, an error"
for a in "R0644 1500000 zz" "Q" "R0644 1500000 `printf '%0128d' 0`x" \
    "R0644 99999999999999999999"; do
	held half $W/t/bad
	rm -f $W/log
	timeout 60 $PY $HS --log $W/log --answer "$a" sink $W/t/bad -- \
	    ${SCP} -f -Z $W/src > $W/out 2>&1
	rc=$?
	[ $rc -eq 0 ] || fail "answer '$a': stand-in exit $rc: `cat $W/out`"
	grep -q "bad resume answer from the target" $W/out ||
		fail "answer '$a': no error: `cat $W/out`"
	cmp -s $W/src $W/t/bad || fail "answer '$a': destination differs"
	[ "`moved`" = $SIZE ] || fail "answer '$a': moved `moved`, not all"
done

verbose "$tid: -O -ZZ refused"
${SCP} -O -ZZ $W/src somehost:$W/t/x > $W/out 2>&1 &&
	fail "scp -O -ZZ: accepted"
grep -q "SFTP protocol only" $W/out || fail "scp -O -ZZ: `cat $W/out`"

# The client's choice, toward a server that behaves as HPN-SSH's does.
if ! $PY -c 'import paramiko' 2>/dev/null; then
	skip_part "hpnscp -Z toward an HPN-SSH-like server" \
	    "no python3-paramiko"
else
	verbose "$tid: hpnscp -Z and -O -Z toward an HPN-SSH-like server"
	PPORT=`expr $PORT + 3`
	mkdir -p $W/tmpd
	peer_ssh_conf $W/ssh.conf $PPORT
	rm -f $W/log
	timeout 120 $PY $HS --log $W/log --timeout 110 server $PPORT \
	    $OBJ/host.ssh-ed25519 $OBJ/authorized_keys_$USER \
	    $SFTPSERVER -P hash-range > $W/srv.out 2>&1 &
	SP=$!
	peer_wait_listen $PPORT
	# zcopy WHAT KIND SCP-ARGS...: a copy with the stand-in's log fresh
	zcopy() {
		_w=$1
		_k=$2
		shift 2
		rm -f $W/log
		TMPDIR=$W/tmpd timeout 60 ${SCP} -q -S ${REAL_SSH} \
		    -F $W/ssh.conf "$@" \
		    > $W/out 2>&1 || fail "$_w $_k: scp failed: `cat $W/out $W/srv.out`"
	}
	for k in half flipped complete; do
		held $k $W/t/zup
		zcopy "-Z up" $k -Z $W/src hpnssh-peer:$W/t/zup
		grep -q "the server is HPN-SSH" $W/out ||
			fail "-Z up $k: no switch: `cat $W/out`"
		grep -q "^subsystem sftp" $W/log ||
			fail "-Z up $k: SFTP not tried first: `cat $W/log`"
		grep -q "^exec hpnscp -Z -t $W/t/zup" $W/log ||
			fail "-Z up $k: no legacy -Z: `cat $W/log`"
		check "-Z up" $k $W/t/zup

		held $k $W/t/zdown
		zcopy "-Z down" $k -Z hpnssh-peer:$W/src $W/t/zdown
		grep -q "^exec hpnscp -Z -f $W/src" $W/log ||
			fail "-Z down $k: no legacy -Z: `cat $W/log`"
		check "-Z down" $k $W/t/zdown

		held $k $W/t/oup
		zcopy "-O -Z up" $k -O -Z $W/src hpnssh-peer:$W/t/oup
		grep -q "^subsystem" $W/log &&
			fail "-O -Z up $k: SFTP tried: `cat $W/log`"
		check "-O -Z up" $k $W/t/oup
	done
	kill $SP 2>/dev/null
	wait $SP 2>/dev/null
	# the file in which ssh said what the server is: gone
	[ -z "`ls $W/tmpd`" ] || fail "left in TMPDIR: `ls $W/tmpd`"
fi

rm -rf $W
