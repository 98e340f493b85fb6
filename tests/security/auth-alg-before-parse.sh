#	Upstream 52154c2d2 (no CVE): before authentication, sshd parsed the
#	key blob of a publickey or hostbased request (a certificate's CA
#	signature verified) before it matched the request's algorithm
#	against PubkeyAcceptedAlgorithms / HostbasedAcceptedAlgorithms: a
#	key of a refused algorithm was parsed all the same.  algparse.py
#	sends each method's request naming a refused algorithm with a blob
#	that is not a key: a parse shows in sshd's log as its error.
#	Placed in the Public Domain.

tid="auth-alg-before-parse: a refused algorithm's key is not parsed"
fixed_in=10.5p1
[ -n "$HPN_TOP" ] || fatal "HPN_TOP not set"
. $HPN_TOP/tests/security/lib.sh

PY=/usr/bin/python3
$PY -c 'import paramiko' 2>/dev/null || fatal "python3-paramiko is needed (make deps)"
D=$OBJ/sec-algparse
ALG=ecdsa-sha2-nistp256

# try FLAVOUR METHOD PARSE-ERROR OPTION: 0 when sshd refused ALG without
# parsing the blob, 1 when it parsed it.
try() {
	sec_proxy $1 algparse "LogLevel DEBUG1" "HostbasedAuthentication yes" \
	    "PubkeyAcceptedAlgorithms ssh-ed25519" \
	    "HostbasedAcceptedAlgorithms ssh-ed25519"
	rm -f $D.sshd.log $D.out
	$PY $HPN_TOP/tests/security/algparse.py $2 $ALG $D.sshd.log $USER -- \
	    `sec_sshd $1` -i -f $OBJ/sshd_algparse.$1 -e > $D.out || {
		cat $D.out $D.sshd.log >&2
		fatal "$1 $2: algparse.py failed"
	}
	grep -q '^REPLY FAILURE$' $D.out || {
		cat $D.out $D.sshd.log >&2
		fatal "$1 $2: the request was not refused"
	}
	if grep -q "$3" $D.sshd.log; then
		verbose "$tid: $1 $2: parsed: `grep -m1 "$3" $D.sshd.log`"
		return 1
	fi
	grep -q "signature algorithm $ALG not in $4" $D.sshd.log || {
		cat $D.sshd.log >&2
		fatal "$1 $2: neither parsed nor refused by $4"
	}
	verbose "$tid: $1 $2: refused by $4, not parsed"
	return 0
}

scenario() {
	_rc=0
	try $1 publickey "userauth_pubkey: parse key" PubkeyAcceptedAlgorithms ||
		_rc=1
	try $1 hostbased "userauth_hostbased: key_from_blob" \
	    HostbasedAcceptedAlgorithms || _rc=1
	return $_rc
}

sec_run scenario
rm -f $D.*
