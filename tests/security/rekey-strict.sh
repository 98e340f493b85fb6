#	Messages other than transport and key exchange ones between a peer's
#	KEXINIT and its NEWKEYS (RFC 4253 7.1) end the connection (upstream
#	does so since 10.4p1), and so does a second KEXINIT.  A paramiko
#	server (peer.py) sends channel data, or its KEXINIT again, right after
#	the KEXINIT of a re-exchange it starts, or a SERVICE_ACCEPT right
#	after its first KEXINIT (paramiko does not do strict KEX, under which
#	10.3p1 already refused it).
#	Placed in the Public Domain.

tid="non-KEX messages during a rekey"
fixed_in=10.4p1
[ -n "$HPN_TOP" ] || fatal "HPN_TOP not set"
. $HPN_TOP/tests/security/lib.sh

PY=/usr/bin/python3
$PY -c 'import paramiko' 2>/dev/null || fatal "python3-paramiko is needed (make deps)"
P=`expr $PORT + 61`
K=$OBJ/sec-rekey
rm -f $K.*
${SSHKEYGEN} -q -t ed25519 -N '' -f $K.hk || fatal "keygen"
echo "sec-rekey `cat $K.hk.pub`" > $K.kh

# run FLAVOUR MODE [any]: ssh against peer.py MODE; $K.out, $K.err, $_rc.
# The session must have started unless "any" is given.
run() {
	case "$1" in
	stock)	_ssh=$HPN_STOCK_TREE/ssh ;;
	*)	_ssh=${REAL_SSH} ;;
	esac
	rm -f $K.peer $K.out $K.err
	$PY $HPN_TOP/tests/security/peer.py $2 $P $K.hk > $K.peer 2>&1 &
	_peer=$!
	_i=0
	while ! grep -q LISTENING $K.peer 2>/dev/null; do
		_i=`expr $_i + 1`
		[ $_i -lt 100 ] || { kill $_peer 2>/dev/null; fatal "$1: peer did not start"; }
		sleep 0.1
	done
	timeout 120 $_ssh -F $OBJ/ssh_config -o Port=$P \
	    -o HostKeyAlias=sec-rekey -o UserKnownHostsFile=$K.kh \
	    -o GlobalKnownHostsFile=/dev/null -o LogLevel=INFO \
	    somehost cat > $K.out 2> $K.err < /dev/null
	_rc=$?
	kill $_peer 2>/dev/null
	wait $_peer 2>/dev/null
	[ "$3" = any ] || grep -q before $K.out || {
		cat $K.err $K.peer >&2
		fatal "$1: the session did not start"
	}
}

scenario() {
	run $1 rekey-inject
	if grep -q injected $K.out; then
		verbose "$tid: $1: data sent during the re-exchange was delivered"
		return 1
	fi
	[ $_rc -ne 0 ] && grep -q "during key re-exchange" $K.err || {
		cat $K.out $K.err >&2
		fatal "$1: neither delivered nor refused (exit $_rc)"
	}
	verbose "$tid: $1: `grep -m1 'during key re-exchange' $K.err`"
	return 0
}

# A second KEXINIT: stock answers it UNIMPLEMENTED (kex_protocol_error) and
# waits for the exchange to go on (paramiko, which does not expect that
# answer, then gives up); ours ends the connection itself.
double_kexinit() {
	run $1 rekey-double
	if grep -q "kex_protocol_error: type 20" $K.err ||
	    { [ $_rc = 0 ] && grep -q after $K.out; }; then
		verbose "$tid: $1: a second KEXINIT was answered, not refused: `grep -m1 kex_protocol_error $K.err`"
		return 1
	fi
	[ $_rc -ne 0 ] && grep -q "second KEXINIT" $K.err || {
		cat $K.out $K.err $K.peer >&2
		fatal "$1: second KEXINIT neither let pass nor refused (exit $_rc)"
	}
	verbose "$tid: $1: `grep -m1 'second KEXINIT' $K.err`"
	return 0
}

# A SERVICE_ACCEPT after the server's first KEXINIT, no strict KEX: stock
# answers it UNIMPLEMENTED (kex_protocol_error) and goes on with the
# exchange (paramiko, which does not expect that answer, then gives up);
# ours ends the connection itself.
initial_inject() {
	run $1 initial-inject any
	grep -q INJECTED $K.peer || {
		cat $K.err $K.peer >&2
		fatal "$1: the peer did not send its message"
	}
	if grep -q "protocol_error: type 6" $K.err ||
	    { [ $_rc = 0 ] && grep -q after $K.out; }; then
		verbose "$tid: $1: a SERVICE_ACCEPT in the first exchange was answered: `grep -m1 'protocol_error: type 6' $K.err`"
		return 1
	fi
	[ $_rc -ne 0 ] && grep -q "type 6 during initial key exchange" $K.err || {
		cat $K.out $K.err $K.peer >&2
		fatal "$1: SERVICE_ACCEPT in the first exchange neither answered nor refused (exit $_rc)"
	}
	verbose "$tid: $1: `grep -m1 'during initial key exchange' $K.err`"
	return 0
}

sec_run scenario
sec_run double_kexinit
sec_run initial_inject
rm -f $K.*
