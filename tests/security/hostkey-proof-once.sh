#	Upstream df67bcaf5 (no CVE): sshd's privileged monitor signed a
#	host-key proof (hostkeys-prove-00@openssh.com, UpdateHostKeys) for
#	every key blob a client named, as often as it asked: any
#	authenticated user had the host key sign the same data at will.
#	hkprove.py asks for a proof of the server's host key, asks again,
#	and in a second connection names the key twice in one request.
#	Placed in the Public Domain.

tid="hostkey-proof-once: one host-key proof per key and connection"
fixed_in=10.5p1
[ -n "$HPN_TOP" ] || fatal "HPN_TOP not set"
. $HPN_TOP/tests/security/lib.sh

PY=/usr/bin/python3
$PY -c 'import paramiko' 2>/dev/null || fatal "python3-paramiko is needed (make deps)"
D=$OBJ/sec-hkprove
KEY=$OBJ/ssh-ed25519
[ -f $KEY ] || fatal "no $KEY (test-exec.sh makes it)"

scenario() {
	sec_proxy $1 hkprove "LogLevel DEBUG1"
	rm -f $D.sshd.log $D.out $D.py.log
	$PY $HPN_TOP/tests/security/hkprove.py $USER $KEY -- \
	    `sec_sshd $1` -i -f $OBJ/sshd_hkprove.$1 -E $D.sshd.log \
	    > $D.out 2> $D.py.log || {
		cat $D.out $D.py.log $D.sshd.log >&2
		fatal "$1: hkprove.py failed"
	}
	_first=`sed -n 's/^PROOF first //p' $D.out`
	_again=`sed -n 's/^PROOF again //p' $D.out`
	_twice=`sed -n 's/^PROOF twice //p' $D.out`
	verbose "$tid: $1: first: $_first; again: $_again; twice: $_twice"
	# the one proof a client needs is signed on both builds
	[ "$_first" = "ok 1" ] || {
		cat $D.out $D.py.log $D.sshd.log >&2
		fatal "$1: the first proof was not signed ($_first)"
	}
	case "$_again" in
	ok*)	return 1 ;;
	esac
	case "$_twice" in
	ok*)	return 1 ;;
	esac
	[ "$_again" = disconnected ] && [ "$_twice" = disconnected ] || {
		cat $D.out $D.sshd.log >&2
		fatal "$1: repeated proofs neither signed nor refused by a disconnection"
	}
	_n=`grep -c "second proof of .* host key .* refused" $D.sshd.log`
	[ "$_n" = 2 ] || {
		cat $D.sshd.log >&2
		fatal "$1: $_n monitor refusals logged, 2 expected"
	}
	return 0
}

sec_run scenario
rm -f $D.*
