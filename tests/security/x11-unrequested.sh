#	Upstream a1dd1c806 (no CVE): with ForwardX11 set, ssh accepted an X11
#	channel from a server whether or not it had asked for X11 forwarding,
#	connected it to the local display and compared its first bytes with
#	a protocol name it never saved: strlen(NULL), ssh died by SIGSEGV.
#	Untrusted forwarding without xauth sends no x11-req; peer.py opens
#	an X11 channel all the same and sends 12 bytes of X11 set-up.
#	Placed in the Public Domain.

tid="x11-unrequested: an X11 channel the client did not ask for"
fixed_in=10.4p1
[ -n "$HPN_TOP" ] || fatal "HPN_TOP not set"
. $HPN_TOP/tests/security/lib.sh

PY=/usr/bin/python3
$PY -c 'import paramiko' 2>/dev/null || fatal "python3-paramiko is needed (make deps)"
P=`expr $PORT + 62`		# rekey-strict.sh has +61
XN=`expr $PORT % 1000 + 100`		# display :XN, port 6000+XN
XP=`expr 6000 + $XN`
K=$OBJ/sec-x11
rm -f $K.*
${SSHKEYGEN} -q -t ed25519 -N '' -C x11 -f $K.host || fatal "keygen"
echo "sec-x11 `cat $K.host.pub`" > $K.kh

scenario() {
	case "$1" in
	stock)	_ssh=$HPN_STOCK_TREE/ssh ;;
	*)	_ssh=${REAL_SSH} ;;
	esac
	rm -f $K.peer $K.out $K.err
	$PY $HPN_TOP/tests/security/peer.py x11-unasked $P $K.host $XP \
	    > $K.peer 2>&1 &
	_peer=$!
	_i=0
	while ! grep -q LISTENING $K.peer 2>/dev/null; do
		_i=`expr $_i + 1`
		[ $_i -lt 100 ] || { kill $_peer 2>/dev/null; wait $_peer; fatal "$1: peer did not start"; }
		sleep 0.1
	done
	DISPLAY=127.0.0.1:$XN timeout 120 $_ssh -F $OBJ/ssh_config \
	    -o Port=$P -o HostKeyAlias=sec-x11 -o UserKnownHostsFile=$K.kh \
	    -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes \
	    -o ForwardX11=yes -o ForwardX11Trusted=no \
	    -o XAuthLocation=/nonexistent -o LogLevel=VERBOSE \
	    somehost true > $K.out 2> $K.err < /dev/null
	_rc=$?
	_i=0
	while kill -0 $_peer 2>/dev/null; do
		_i=`expr $_i + 1`
		[ $_i -lt 100 ] || { kill $_peer 2>/dev/null; break; }
		sleep 0.1
	done
	wait $_peer
	_r=`grep '^RESULT' $K.peer`
	verbose "$tid: $1: ssh exit $_rc, peer: $_r"
	grep -q '^X11REQ' $K.peer && fatal "$1: the client asked for X11 forwarding"
	case "$_r" in
	"RESULT x11="*) ;;
	*)	cat $K.peer $K.err >&2; fatal "$1: the peer did not open its channel" ;;
	esac
	if [ $_rc -gt 128 ] && [ $_rc -ne 255 ]; then
		verbose "$tid: $1: ssh ended by signal `expr $_rc - 128`"
		return 1
	fi
	[ $_rc -eq 7 ] && grep -q '^done$' $K.out || {
		cat $K.out $K.err $K.peer >&2
		fatal "$1: ssh exit $_rc, no session end"
	}
	if [ "$_r" != "RESULT x11=refused display=none" ]; then
		verbose "$tid: $1: the channel was accepted: $_r"
		return 1
	fi
	grep -q "X11 forwarding was not requested" $K.err || {
		cat $K.err >&2
		fatal "$1: channel refused without the client's reason"
	}
	return 0
}

sec_run scenario
rm -f $K.*
