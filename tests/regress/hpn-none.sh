#	HPN patch set: the None cipher switch.  After authentication, for
#	non-interactive sessions, when both sides allow it; never before
#	authentication, never with a tty, never towards stock peers.
#	Placed in the Public Domain.

tid="hpn none cipher"

[ -n "$HPN_TOP" ] || skip "HPN_TOP not set"
. $HPN_TOP/tests/lib/skips.sh
. $HPN_TOP/tests/regress/peer-lib.sh

DATA=$OBJ/hpnn-data
OUT=$OBJ/hpnn-out
ERR=$OBJ/hpnn-err
dd if=/dev/urandom of=$DATA bs=1048576 count=32 2>/dev/null
SUM=`sha256sum < $DATA`
NONE="-oNoneEnabled=yes -oNoneSwitch=yes"
HPN_NONE_EXT_NAME="none-switch@hpn-patch-set.invalid"

cp $OBJ/sshd_config $OBJ/sshd_config.orig
cp $OBJ/sshd_proxy $OBJ/sshd_proxy.orig
echo "NoneEnabled yes" >> $OBJ/sshd_config
echo "NoneMacEnabled yes" >> $OBJ/sshd_config
start_sshd

# switched SIZE WHAT: the warning was printed once and the server logged it.
switched() {
	n=`grep -c "WARNING: NoneSwitch: data now travels UNENCRYPTED" $ERR`
	[ "$n" = "1" ] || fail "$1: expected one switch warning, got $n: `cat $ERR`"
	grep -q "none cipher.*in the clear for user $USER from" $TEST_SSHD_LOGFILE ||
		fail "$1: the server did not log the switch"
}
not_switched() {
	grep -q "WARNING: NoneSwitch" $ERR && fail "$1: switched to none"
	grep -q "in the clear" $TEST_SSHD_LOGFILE && fail "$1: server switched"
}
# Each sshd log starts afresh with each connection's log link; keep it
# simple: truncate the server log before each case.
fresh() {
	: > `readlink -f $TEST_SSHD_LOGFILE`
	rm -f $ERR $OUT
}

verbose "$tid: pipe upload switches (cipher)"
fresh
s=`${REAL_SSH} -F $OBJ/ssh_config -oLogLevel=info $NONE somehost sha256sum < $DATA 2> $ERR`
[ "$s" = "$SUM" ] || fail "pipe upload: checksum differs"
switched "pipe upload"
grep -q "UNAUTHENTICATED" $ERR && fail "pipe upload: MAC off without NoneMacEnabled"

verbose "$tid: download switches with the none MAC"
fresh
${REAL_SSH} -F $OBJ/ssh_config -oLogLevel=info $NONE -oNoneMacEnabled=yes somehost \
    "cat $DATA" > $OUT 2> $ERR || fail "download failed"
cmp -s $DATA $OUT || fail "download with none MAC: data differ"
switched "download"
grep -q "UNENCRYPTED and UNAUTHENTICATED" $ERR || fail "none MAC not reported"
grep -q "none cipher and MAC" $TEST_SSHD_LOGFILE || fail "server did not log the none MAC"

verbose "$tid: scp and sftp switch"
fresh
${SCP} -S ${REAL_SSH} -F $OBJ/ssh_config $NONE $DATA somehost:$OUT 2> $ERR ||
	fail "scp upload failed"
cmp -s $DATA $OUT || fail "scp upload: data differ"
switched "scp upload"
fresh
${SFTP} -S ${REAL_SSH} -F $OBJ/ssh_config $NONE -oNoneMacEnabled=yes -q \
    somehost:$DATA $OUT > /dev/null 2> $ERR || fail "sftp download failed"
cmp -s $DATA $OUT || fail "sftp download: data differ"
switched "sftp download"

verbose "$tid: a tty session stays encrypted, with one notice"
fresh
${REAL_SSH} -F $OBJ/ssh_config -oLogLevel=info -tt $NONE somehost true \
    < /dev/null > /dev/null 2> $ERR || fail "tty session failed"
not_switched "tty"
n=`grep -c "staying encrypted.*a tty was requested" $ERR`
[ "$n" = "1" ] || fail "tty: expected one notice, got $n: `cat $ERR`"

# Delegated or interactive things riding along: no switch, and why.
RPORT=`expr $PORT + 50`
for c in "-oForwardAgent=yes|agent forwarding is on" \
    "-oForwardX11=yes|X11 forwarding is on" \
    "-R$RPORT:127.0.0.1:9|remote forwards are set up"; do
	opt=`echo "$c" | cut -d'|' -f1`
	why=`echo "$c" | cut -d'|' -f2`
	verbose "$tid: $opt stays encrypted"
	fresh
	s=`${REAL_SSH} -F $OBJ/ssh_config -oLogLevel=info $NONE $opt somehost \
	    sha256sum < $DATA 2> $ERR`
	[ "$s" = "$SUM" ] || fail "$opt: checksum differs"
	not_switched "$opt"
	grep -q "NoneSwitch: staying encrypted.*($why" $ERR ||
		fail "$opt: no reason given: `cat $ERR`"
done
if command -v script > /dev/null; then
	verbose "$tid: a terminal on standard input stays encrypted; -n switches"
	fresh
	script -qec "${REAL_SSH} -F $OBJ/ssh_config -oLogLevel=info $NONE somehost true 2> $ERR" \
	    /dev/null > /dev/null < /dev/null || fail "ssh under script failed"
	not_switched "stdin a terminal"
	grep -q "NoneSwitch: staying encrypted.*standard input is a terminal" $ERR ||
		fail "stdin a terminal: no reason given: `cat $ERR`"
	fresh
	script -qec "${REAL_SSH} -F $OBJ/ssh_config -oLogLevel=info -n $NONE somehost 'cat $DATA' > $OUT 2> $ERR" \
	    /dev/null > /dev/null < /dev/null || fail "ssh -n under script failed"
	cmp -s $DATA $OUT || fail "-n under script: data differ"
	switched "-n with a terminal"
fi

verbose "$tid: NoneSwitch alone, or NoneEnabled alone, stays encrypted"
fresh
s=`${REAL_SSH} -F $OBJ/ssh_config -oLogLevel=info -oNoneSwitch=yes somehost sha256sum < $DATA 2> $ERR`
[ "$s" = "$SUM" ] || fail "NoneSwitch only: checksum differs"
not_switched "NoneSwitch only"
grep -q "NoneSwitch needs NoneEnabled" $ERR || fail "NoneSwitch only: no notice"
fresh
s=`${REAL_SSH} -F $OBJ/ssh_config -oNoneEnabled=yes somehost sha256sum < $DATA 2> $ERR`
[ "$s" = "$SUM" ] || fail "NoneEnabled only: checksum differs"
not_switched "NoneEnabled only"

verbose "$tid: rekey every 1 MiB while none is active (256 MiB)"
fresh
s=`dd if=/dev/zero bs=1048576 count=256 2>/dev/null |
    ${SSH} -F $OBJ/ssh_config -oLogLevel=info $NONE -oRekeyLimit=1M somehost \
    "sha256sum" 2> $ERR`
e=`dd if=/dev/zero bs=1048576 count=256 2>/dev/null | sha256sum`
[ "$s" = "$e" ] || fail "rekeying under none: checksum differs"
switched "rekeying"
n=`grep -c "SSH2_MSG_NEWKEYS received" $TEST_SSHD_LOGFILE`
[ $n -gt 100 ] || fail "expected over 100 key exchanges, saw $n"

verbose "$tid: 3 GiB over none: no rekey after the switch"
fresh
s=`dd if=/dev/zero bs=1048576 count=3072 2>/dev/null |
    ${SSH} -F $OBJ/ssh_config -oLogLevel=info $NONE somehost "wc -c" 2> $ERR`
[ "$s" = 3221225472 ] || fail "3 GiB over none: $s bytes arrived"
switched "3 GiB"
# the first key exchange, then the switch's: no more
n=`grep -c "SSH2_MSG_NEWKEYS received" $TEST_SSHD_LOGFILE`
[ "$n" = 2 ] || fail "3 GiB over none: $n key exchanges, expected 2 (no rekey by block count)"

verbose "$tid: -c none is refused, pointing to NoneSwitch"
if ${REAL_SSH} -F $OBJ/ssh_config -c none somehost true > $ERR 2>&1; then
	fail "-c none accepted"
fi
grep -q "NoneSwitch" $ERR || fail "-c none: no hint: `cat $ERR`"
if ${REAL_SSH} -G -F $OBJ/ssh_config -oCiphers=none somehost > $ERR 2>&1; then
	fail "Ciphers none accepted"
fi
grep -q "NoneSwitch" $ERR || fail "Ciphers none: no hint: `cat $ERR`"
${REAL_SSH} -Q mac | grep -qx none && fail "ssh -Q mac lists none"
${REAL_SSH} -Q cipher | grep -qx none && fail "ssh -Q cipher lists none"

stop_sshd

verbose "$tid: the server does not allow none: no switch, no failure"
cp $OBJ/sshd_config.orig $OBJ/sshd_config
start_sshd
fresh
s=`${REAL_SSH} -F $OBJ/ssh_config -oLogLevel=debug1 $NONE somehost sha256sum < $DATA 2> $ERR`
[ "$s" = "$SUM" ] || fail "server disallows: checksum differs"
not_switched "server disallows"
grep -q "NoneSwitch: the server does not allow the none cipher: staying encrypted" $ERR ||
	fail "server disallows: no notice: `cat $ERR`"
# our server says so (and that it is ours) in its EXT_INFO: no rekey
grep -q "server (HPN patch set) does not allow the none cipher" $ERR ||
	fail "server disallows: no EXT_INFO saying so: `cat $ERR`"
n=`grep -c "SSH2_MSG_NEWKEYS received" $ERR`
[ "$n" = 1 ] || fail "server disallows: $n key exchanges, expected 1"
stop_sshd

verbose "$tid: NoneEnabled in a Match block"
cp $OBJ/sshd_config.orig $OBJ/sshd_config
printf 'Match User %s\n\tNoneEnabled yes\n' $USER >> $OBJ/sshd_config
start_sshd
fresh
s=`${REAL_SSH} -F $OBJ/ssh_config -oLogLevel=info $NONE somehost sha256sum < $DATA 2> $ERR`
[ "$s" = "$SUM" ] || fail "Match: checksum differs"
switched "Match User"
stop_sshd
cp $OBJ/sshd_config.orig $OBJ/sshd_config
printf 'NoneEnabled yes\nMatch User %s\n\tNoneEnabled no\n' $USER >> $OBJ/sshd_config
start_sshd
fresh
s=`${REAL_SSH} -F $OBJ/ssh_config -oLogLevel=info $NONE somehost sha256sum < $DATA 2> $ERR`
[ "$s" = "$SUM" ] || fail "Match no: checksum differs"
not_switched "Match User NoneEnabled no"

verbose "$tid: a peer proposing none in the first key exchange is refused"
PEER="$HPN_TOP/tests/regress/hpn-none-peer.py"
if ! command -v python3 >/dev/null; then
	skip_part "a pre-authentication none peer" "no python3"
else
	fresh
	python3 $PEER client 127.0.0.1 $PORT > $OUT 2>&1 || fail "probe failed: `cat $OUT`"
	sleep 1
	grep -q "peer proposed the none cipher before authentication: refused" \
	    $TEST_SSHD_LOGFILE || fail "sshd: no refusal of a pre-auth none"
	PPORT=`expr $PORT + 1`
	python3 $PEER server $PPORT > $OUT 2>&1 &
	ppid=$!
	sleep 1
	${REAL_SSH} -F $OBJ/ssh_config -p $PPORT $NONE somehost true > $ERR 2>&1 &&
		fail "client accepted a server offering only none"
	wait $ppid
	grep -q "peer proposed the none cipher before authentication: refused" $ERR ||
		fail "ssh: no refusal of a pre-auth none: `cat $ERR`"
fi
stop_sshd
cp $OBJ/sshd_config.orig $OBJ/sshd_config

# stock peers: none never offered, never chosen
noneprop() {	# the log shows a KEXINIT cipher list containing none
	grep -E "ciphers (ctos|stoc): ([^ ]*,)?none([,[:space:]]|$)" $1 >/dev/null
}
echo "NoneEnabled yes" >> $OBJ/sshd_config
start_sshd
for c in "$HPN_STOCK_TREE/ssh" /usr/bin/ssh; do
	[ -x "$c" ] || continue
	verbose "$tid: `$c -V 2>&1 | cut -d, -f1` client, NoneEnabled server"
	rm -f $ERR
	s=`$c -F $OBJ/ssh_config -vvv -oRekeyLimit=1M somehost sha256sum < $DATA 2> $ERR`
	[ "$s" = "$SUM" ] || fail "$c: checksum differs"
	noneprop $ERR && fail "$c was offered the none cipher"
	grep -q "$HPN_NONE_EXT_NAME" $ERR && fail "$c was sent the none extension"
done
stop_sshd
cp $OBJ/sshd_config.orig $OBJ/sshd_config

if [ -n "$HPN_STOCK_TREE" ] && [ -x "$HPN_STOCK_TREE/sshd" ]; then
	verbose "$tid: hpn client with NoneSwitch, stock (same release) server"
	sed -e "s|$SSHD_SESSION|$HPN_STOCK_TREE/sshd-session|" \
	    -e "s|$SSHD_AUTH|$HPN_STOCK_TREE/sshd-auth|" \
	    $OBJ/sshd_proxy.orig > $OBJ/sshd_proxy.stock
	grep -iv '^proxycommand' $OBJ/ssh_proxy > $OBJ/ssh_proxy.stock
	echo "proxycommand $HPN_STOCK_TREE/sshd -i -f $OBJ/sshd_proxy.stock -E $OBJ/hpnn-stock.log" \
	    >> $OBJ/ssh_proxy.stock
	rm -f $OBJ/hpnn-stock.log $ERR
	s=`${REAL_SSH} -F $OBJ/ssh_proxy.stock -oLogLevel=info -oRekeyLimit=1M $NONE somehost sha256sum < $DATA 2> $ERR`
	[ "$s" = "$SUM" ] || fail "stock server: checksum differs"
	grep -q "server does not allow the none cipher" $ERR ||
		fail "stock server: no notice"
	noneprop $OBJ/hpnn-stock.log && fail "the stock server was offered none"
	grep -q "ciphers ctos" $OBJ/hpnn-stock.log || fail "stock server log lacks proposals"
fi

# HPN-SSH servers send no EXT_INFO of ours (it is how the client tells our
# server from them: the banners look alike, OpenSSH_10.2p1_hpn18.8.0 and
# OpenSSH_10.3p1_hpn0.1.0).  With NoneEnabled they list none last among
# their ciphers in every KEXINIT, the first one included (NoneMacEnabled:
# among their MACs too), and count on the client to ask only after
# authentication; toward them the switch's rekey offers none first, and
# only when they list it.  A paramiko peer with a none cipher plays HPN-SSH
# 18.8 (its banner, its lists), peers with "hpn" elsewhere in the banner,
# and a stock one; another plays a client that asks our server for none on
# a connection with a pty.
PMK="$HPN_TOP/tests/regress/hpn-none-paramiko.py"
PY=/usr/bin/python3
HS=OpenSSH_10.2p1_hpn18.8.0
if ! $PY -c 'import paramiko' 2>/dev/null; then
	skip_part "HPN-SSH negotiation (paramiko peers)" "no python3-paramiko"
else
	PPORT=`expr $PORT + 2`
	peer_ssh_conf $OBJ/hpnn-peer.conf $PPORT "LogLevel info"
	# peer_start BANNER no|cipher|cipher,mac: the peer, listening; $OUT:
	# its key exchanges, commands and global requests
	peer_start() {
		rm -f $OUT $ERR
		timeout 60 $PY $PMK server $PPORT $OBJ/host.ssh-ed25519 \
		    $OBJ/authorized_keys_$USER "$1" $2 > $OUT 2>&1 &
		_p=$!
		peer_wait_listen $PPORT
	}
	# peer BANNER no|cipher|cipher,mac [SSH OPTIONS...]: upload DATA;
	# $ERR: the client's stderr
	peer() {
		_b=$1
		peer_start "$1" $2
		shift 2
		s=`timeout 60 ${REAL_SSH} -F $OBJ/hpnn-peer.conf "$@" hpnssh-peer \
		    sha256sum < $DATA 2> $ERR`
		wait $_p
		[ "$s" = "$SUM" ] || fail "$_b: checksum differs: `cat $ERR $OUT`"
	}
	# peer_down BANNER no|cipher|cipher,mac [SSH OPTIONS...]: download
	# 4 MiB of zeros; $ERR: the client's stderr
	ZSUM=`dd if=/dev/zero bs=1048576 count=4 2>/dev/null | sha256sum`
	peer_down() {
		_b=$1
		peer_start "$1" $2
		shift 2
		s=`timeout 60 ${REAL_SSH} -F $OBJ/hpnn-peer.conf "$@" hpnssh-peer \
		    zeros 4194304 2> $ERR < /dev/null | sha256sum`
		wait $_p
		[ "$s" = "$ZSUM" ] || fail "$_b: download differs: `cat $ERR $OUT`"
	}
	# not_capped WHAT: the client's windows toward an HPN peer
	not_capped() {
		grep -q "windows capped" $ERR && fail "$1: windows capped"
		grep -q "with HPN (its banner): windows not capped" $ERR ||
			fail "$1: no window decision seen: `cat $ERR`"
	}
	# kexes: the peer saw N key exchanges
	kexes() {
		grep -c "^kex [0-9]*:" $OUT
	}

	verbose "$tid: HPN-SSH server with NoneEnabled: none offered first, chosen"
	peer_down $HS cipher $NONE -v
	switched_hs() {
		n=`grep -c "WARNING: NoneSwitch: data now travels UNENCRYPTED" $ERR`
		[ "$n" = 1 ] || fail "$1: expected one switch warning, got $n: `cat $ERR $OUT`"
		grep -q "^kex 1: client ciphers [^;]*none" $OUT &&
			fail "$1: none offered before authentication: `cat $OUT`"
		grep -q "^kex 2: client ciphers none,[^;]*; cipher none none; mac $2" $OUT ||
			fail "$1: `cat $OUT`"
	}
	switched_hs "HPN-SSH allowing none" "hmac"
	grep -q "UNAUTHENTICATED" $ERR && fail "HPN-SSH: MAC off without NoneMacEnabled"
	not_capped "HPN-SSH"
	# metrics are asked of our servers only (-v: at the start and end)
	grep -q "^global request: tcp-info@" $OUT && fail "HPN-SSH: asked for metrics"

	verbose "$tid: HPN-SSH server with NoneEnabled and NoneMacEnabled: the none MAC too"
	peer $HS cipher,mac $NONE -oNoneMacEnabled=yes
	switched_hs "HPN-SSH none MAC" "none none"
	grep -q "UNENCRYPTED and UNAUTHENTICATED" $ERR ||
		fail "HPN-SSH none MAC: `cat $ERR $OUT`"

	verbose "$tid: HPN-SSH server with NoneEnabled only: the MAC stays"
	peer $HS cipher $NONE -oNoneMacEnabled=yes
	switched_hs "HPN-SSH without NoneMacEnabled" "hmac"
	grep -q "UNAUTHENTICATED" $ERR && fail "HPN-SSH without NoneMacEnabled: MAC off"
	grep -q "^kex 2: client ciphers none,[^;]*; .*mac none" $OUT &&
		fail "HPN-SSH without NoneMacEnabled: `cat $OUT`"

	verbose "$tid: HPN-SSH server without NoneEnabled: not asked, one notice"
	peer $HS no $NONE -oNoneMacEnabled=yes
	grep -q "WARNING: NoneSwitch" $ERR && fail "HPN-SSH without none: switched"
	n=`grep -c "NoneSwitch: the server (HPN-SSH) does not allow the none cipher: staying encrypted" $ERR`
	[ "$n" = 1 ] || fail "HPN-SSH without none: expected one notice, got $n: `cat $ERR`"
	grep -q "client ciphers [^;]*none" $OUT && fail "HPN-SSH without none: offered none: `cat $OUT`"
	[ "`kexes`" = 1 ] || fail "HPN-SSH without none: a rekey: `cat $OUT`"

	verbose "$tid: the older HPN-SSH banner shape (-hpn)"
	peer OpenSSH_10.2p1-hpn18.8.0 cipher $NONE
	switched_hs "HPN-SSH -hpn" "hmac"

	# "hpn" elsewhere in the banner: HPN-SSH takes such a peer for an HPN
	# one, and so do we: no window cap, and the None switch by its KEXINIT
	verbose "$tid: hpn in a banner's comment, none listed: switched"
	peer_down "OpenSSH_10.0p1 Debian-hpn" cipher $NONE -v
	switched_hs "Debian-hpn" "hmac"
	not_capped "Debian-hpn"
	verbose "$tid: hpn in a banner's comment, none not listed: not asked"
	peer_down "OpenSSH_9.9 hpnfoo" no $NONE -v
	grep -q "WARNING: NoneSwitch" $ERR && fail "hpnfoo: switched"
	grep -q "server (HPN-SSH) does not allow the none cipher" $ERR ||
		fail "hpnfoo: no notice: `cat $ERR`"
	[ "`kexes`" = 1 ] || fail "hpnfoo: a rekey: `cat $OUT`"
	not_capped "hpnfoo"

	verbose "$tid: stock server: none never offered, even listed"
	peer_down OpenSSH_10.2p1 cipher,mac $NONE -v
	grep -q "NoneSwitch: the server does not allow the none cipher" $ERR ||
		fail "stock peer: no notice: `cat $ERR`"
	grep -q "client ciphers [^;]*none" $OUT && fail "stock peer offered none: `cat $OUT`"
	[ "`kexes`" = 1 ] || fail "stock peer: a rekey: `cat $OUT`"
	grep -q "peer is OpenSSH 10.2 without HPN: windows capped" $ERR ||
		fail "stock peer: windows not capped"

	# legacy scp: the remote program is hpnscp where the server has it:
	# ours (by its EXT_INFO, hpn-basics), HPN-SSH from release 16 on
	for c in "$HS|hpnscp" "OpenSSH_8.8p1-hpn16v1|hpnscp" \
	    "OpenSSH_10.0p1 Debian-hpn|scp" "OpenSSH_10.2p1|scp"; do
		b=`echo "$c" | cut -d'|' -f1`
		want=`echo "$c" | cut -d'|' -f2`
		verbose "$tid: legacy scp from $b runs $want"
		peer_start "$b" no
		timeout 60 ${SCP} -O -S ${REAL_SSH} -F $OBJ/hpnn-peer.conf \
		    hpnssh-peer:/nonexistent $OBJ/hpnn-scp.out > $ERR 2>&1 &&
			fail "legacy scp from $b: the peer ran it"
		wait $_p
		grep -q "^exec: $want -f " $OUT ||
			fail "legacy scp from $b: expected $want: `cat $OUT`"
	done

	verbose "$tid: our server drops none once a session has a pty"
	echo "NoneEnabled yes" >> $OBJ/sshd_config
	start_sshd
	for pty in nopty pty only; do
		timeout 60 $PY $PMK client $PORT $OBJ/ssh-ed25519 $USER \
		    $HS $pty > $OUT 2>&1
		case $pty in
		nopty|only) want="kex: cipher none none" ;;
		pty)	want="kex: cipher aes128-ctr aes128-ctr"
			grep -q "pty: granted" $OUT || fail "pty refused: `cat $OUT`" ;;
		esac
		grep -q "^$want" $OUT || fail "$pty: expected $want: `cat $OUT`"
	done
	stop_sshd
	cp $OBJ/sshd_config.orig $OBJ/sshd_config

	# HPN-SSH's client proposes none alone after authentication: without
	# NoneEnabled there is no cipher in common (as with HPN-SSH's server)
	verbose "$tid: a client asking for none alone, server without NoneEnabled"
	start_sshd
	fresh
	timeout 60 $PY $PMK client $PORT $OBJ/ssh-ed25519 $USER $HS only \
	    > $OUT 2>&1
	grep -q "^kex: failed" $OUT || fail "none alone, not allowed: `cat $OUT`"
	grep -q "peer asked for the none cipher, which is not allowed here" \
	    $TEST_SSHD_LOGFILE || fail "none alone, not allowed: not said"
	grep -q "before authentication" $TEST_SSHD_LOGFILE &&
		fail "none alone, not allowed: said to be before authentication"
	stop_sshd
fi

rm -f $DATA $OUT $ERR $OBJ/hpnn-* $OBJ/sshd_config.orig $OBJ/sshd_proxy.orig \
    $OBJ/sshd_proxy.stock $OBJ/ssh_proxy.stock
