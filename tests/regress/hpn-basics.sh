#	HPN patch set: version tag, default port and fallback, option errors,
#	legacy scp running hpnscp on HPN peers.
#	Placed in the Public Domain.

tid="hpn basics"

[ -n "$HPN_TOP" ] || skip "HPN_TOP not set"
. $HPN_TOP/tests/lib/skips.sh

# --- the version tag: upstream's version stays a prefix
for prog in "${REAL_SSH}" "${REAL_SSHD}"; do
	v=`$prog -V 2>&1`
	case "$v" in
	OpenSSH_[0-9]*p[0-9]*_hpn[0-9]*) trace "$prog -V: $v" ;;
	*) fail "$prog -V does not show OpenSSH_X.YpZ_hpnX: $v" ;;
	esac
done

start_sshd
${SSH} -F $OBJ/ssh_config -v somehost true 2>/dev/null || fail "connect failed"
grep "remote software version OpenSSH_[0-9.]*p[0-9]*_hpn" $TEST_SSH_LOGFILE >/dev/null ||
	fail "the server's banner carries no hpn tag"
# An HPNBufferSize below the stock 2 MiB window cannot take effect: said.
${REAL_SSH} -F $OBJ/ssh_config -oHPNBufferSize=1M somehost true \
    > $OBJ/hpnb-small.out 2>&1 || fail "connect with HPNBufferSize=1M failed"
grep -q "HPNBufferSize 1024K is below the stock window (2048K): channel windows stay at the stock size" \
    $OBJ/hpnb-small.out || fail "HPNBufferSize=1M: no notice"
${REAL_SSH} -F $OBJ/ssh_config -oHPNBufferSize=2M somehost true \
    > $OBJ/hpnb-small.out 2>&1 || fail "connect with HPNBufferSize=2M failed"
grep -q "below the stock window" $OBJ/hpnb-small.out && fail "HPNBufferSize=2M: a notice"
rm -f $OBJ/hpnb-small.out
grep "Remote protocol version 2.0, remote software version" $TEST_SSHD_LOGFILE |
    grep "OpenSSH_[0-9.]*p[0-9]*_hpn" >/dev/null ||
	fail "the client's banner carries no hpn tag"

# --- compiled-in defaults
grep -Eiv '^[[:space:]]*(Port|PidFile)[[:space:]]' $OBJ/sshd_config > $OBJ/sshd_config.noport
t=`${REAL_SSHD} -T -f $OBJ/sshd_config.noport`
echo "$t" | grep -qx 'port 2222' || fail "hpnsshd default port is not 2222"
echo "$t" | grep -Eq '^pidfile /.*/hpnsshd\.pid$' || fail "hpnsshd pid file is not hpnsshd.pid"

grep -iv '^[[:space:]]*Port[[:space:]]' $OBJ/ssh_config > $OBJ/ssh_config.noport
g=`${REAL_SSH} -G -F $OBJ/ssh_config.noport somehost`
echo "$g" | grep -qx 'port 2222' || fail "hpnssh default port is not 2222"
echo "$g" | grep -qx 'fallback yes' || fail "Fallback does not default to yes"
echo "$g" | grep -qx 'fallbackport 22' || fail "FallbackPort does not default to 22"
${REAL_SSH} -G -F $OBJ/ssh_config.noport -p 22 somehost | grep -qx 'port 22' ||
	fail "-p 22 not honoured"
${REAL_SSH} -G -F $OBJ/ssh_config.noport -oFallback=no -oFallbackPort=2022 somehost |
    grep -q 'fallbackport 2022' || fail "FallbackPort not parsed"

# --- bad values are refused with a message naming them
for opt in FallbackPort=0 FallbackPort=65536 FallbackPort=22x Fallback=maybe \
    Fallback= FallbackPort=; do
	if ${REAL_SSH} -G -F $OBJ/ssh_config.noport -o "$opt" somehost \
	    > $OBJ/hpn-bad.out 2>&1; then
		fail "accepted bad option -o $opt"
	fi
	grep -Eqi "bad port|unsupported option|missing argument|no argument after keyword" $OBJ/hpn-bad.out ||
		fail "no clear error for -o $opt: `cat $OBJ/hpn-bad.out`"
done

# --- fallback: 127.0.0.1:2222 must be free (nothing listening) to test it.
${REAL_SSH} -F $OBJ/ssh_config.noport -oFallback=no -oConnectTimeout=5 \
    somehost true > $OBJ/hpn-fb.out 2>&1
if grep -q "port 2222: Connection refused" $OBJ/hpn-fb.out; then
	verbose "$tid: fallback to FallbackPort when 2222 refuses"
	${REAL_SSH} -F $OBJ/ssh_config.noport -oFallbackPort=$PORT \
	    somehost true > $OBJ/hpn-fb.out 2>&1 ||
		fail "no fallback to port $PORT: `cat $OBJ/hpn-fb.out`"
	n=`grep -c "port 2222 Connection refused; trying port $PORT too" $OBJ/hpn-fb.out`
	[ "$n" = "1" ] || fail "expected one fallback notice, got $n: `cat $OBJ/hpn-fb.out`"

	verbose "$tid: Fallback no: no retry"
	if ${REAL_SSH} -F $OBJ/ssh_config.noport -oFallback=no \
	    -oFallbackPort=$PORT somehost true > $OBJ/hpn-fb.out 2>&1; then
		fail "connected although Fallback=no"
	fi
	grep -q "trying port" $OBJ/hpn-fb.out && fail "fell back although Fallback=no"

	verbose "$tid: a port the user gave is never replaced"
	if ${REAL_SSH} -F $OBJ/ssh_config.noport -p 2222 \
	    -oFallbackPort=$PORT somehost true > $OBJ/hpn-fb.out 2>&1; then
		fail "connected although -p 2222 refuses"
	fi
	grep -q "trying port" $OBJ/hpn-fb.out && fail "replaced the port given with -p"
	printf 'Host *\n\tPort 2222\n' | cat - $OBJ/ssh_config.noport > $OBJ/ssh_config.2222
	if ${REAL_SSH} -F $OBJ/ssh_config.2222 -oFallbackPort=$PORT \
	    somehost true > $OBJ/hpn-fb.out 2>&1; then
		fail "connected although Port 2222 in the config refuses"
	fi
	grep -q "trying port" $OBJ/hpn-fb.out && fail "replaced the port from the config"

	verbose "$tid: fallback port refusing too: one clear error"
	if ${REAL_SSH} -F $OBJ/ssh_config.noport -oFallbackPort=1 \
	    somehost true > $OBJ/hpn-fb.out 2>&1; then
		fail "connected to port 1?"
	fi
	grep -q "port 2222 (or 1): Connection refused" $OBJ/hpn-fb.out ||
		fail "no error naming the fallback port: `cat $OBJ/hpn-fb.out`"
else
	skip_part "fallback" "127.0.0.1:2222 is in use here: `tail -n 1 $OBJ/hpn-fb.out`"
fi

# --- legacy scp: the remote end runs hpnscp on an HPN server, scp otherwise
mkdir -p $OBJ/hpnbin
rm -f $OBJ/hpnbin/ran-*
for p in scp hpnscp; do
	cat > $OBJ/hpnbin/$p <<EOF
#!/bin/sh
touch $OBJ/hpnbin/ran-$p
exec $SCP "\$@"
EOF
	chmod a+rx $OBJ/hpnbin/$p
done
echo "	SetEnv PATH=$OBJ/hpnbin:/usr/bin:/bin" >> $OBJ/sshd_proxy
dd if=/dev/urandom of=$OBJ/hpn-scp.in bs=1024 count=300 2>/dev/null
rm -f $OBJ/hpn-scp.out
$SCP -O -S ${REAL_SSH} -F $OBJ/ssh_proxy somehost:$OBJ/hpn-scp.in $OBJ/hpn-scp.out ||
	fail "legacy scp download failed"
cmp $OBJ/hpn-scp.in $OBJ/hpn-scp.out || fail "legacy scp: corrupted copy"
[ -f $OBJ/hpnbin/ran-hpnscp ] || fail "remote program was not hpnscp on an HPN server"
[ -f $OBJ/hpnbin/ran-scp ] && fail "remote program was scp on an HPN server"

if [ -n "$HPN_STOCK_TREE" ] && [ -x "$HPN_STOCK_TREE/sshd" ]; then
	verbose "$tid: legacy scp to a stock server runs scp"
	sed -e "s|$SSHD_SESSION|$HPN_STOCK_TREE/sshd-session|" \
	    -e "s|$SSHD_AUTH|$HPN_STOCK_TREE/sshd-auth|" \
	    $OBJ/sshd_proxy > $OBJ/sshd_proxy.stock
	grep -iv '^proxycommand' $OBJ/ssh_proxy > $OBJ/ssh_proxy.stock
	echo "proxycommand $HPN_STOCK_TREE/sshd -i -f $OBJ/sshd_proxy.stock" >> $OBJ/ssh_proxy.stock
	rm -f $OBJ/hpnbin/ran-* $OBJ/hpn-scp.out
	$SCP -O -S ${REAL_SSH} -F $OBJ/ssh_proxy.stock somehost:$OBJ/hpn-scp.in \
	    $OBJ/hpn-scp.out || fail "legacy scp from a stock server failed"
	cmp $OBJ/hpn-scp.in $OBJ/hpn-scp.out || fail "legacy scp (stock): corrupted copy"
	[ -f $OBJ/hpnbin/ran-scp ] || fail "remote program was not scp on a stock server"
	[ -f $OBJ/hpnbin/ran-hpnscp ] && fail "remote program was hpnscp on a stock server"
else
	skip_part "legacy scp to a stock server" "no stock build (HPN_STOCK_TREE)"
fi

rm -rf $OBJ/hpnbin $OBJ/hpn-scp.in $OBJ/hpn-scp.out $OBJ/hpn-fb.out $OBJ/hpn-bad.out \
    $OBJ/ssh_config.noport $OBJ/ssh_config.2222 $OBJ/sshd_config.noport \
    $OBJ/sshd_proxy.stock $OBJ/ssh_proxy.stock
