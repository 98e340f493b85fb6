#	An agent key's destination constraint may name a user pattern, which
#	ssh-agent matched against the user of each signature request with
#	match_pattern(), a recursion exponential in the pattern's '*'s: a
#	pattern such as "*a*a...*a*b" (20 of them) against a user name of 60
#	a's kept the single-threaded agent busy for as long as one cares to
#	wait, its other clients unanswered (upstream 9d4c0b31f and 10f66b2af,
#	10.4p1: a matcher without the blow-up, and user patterns of at most
#	256 bytes; ours: our own matcher, 255).  agentclient.py asks for the
#	signature and waits 5 s.  Control: a user the pattern matches.
#	Placed in the Public Domain.

tid="ssh-agent user pattern matching cost"
fixed_in=10.4p1
[ -n "$HPN_TOP" ] || fatal "HPN_TOP not set"
. $HPN_TOP/tests/security/lib.sh

PY=/usr/bin/python3
$PY -c 'import paramiko' 2>/dev/null || fatal "python3-paramiko is needed (make deps)"
K=$OBJ/sec-agentpat
SOCK=$OBJ/sec-agentpat.sock
AGENT_PID=
rm -f $K.*
${SSHKEYGEN} -q -t ed25519 -N '' -C user -f $K.user || fatal "keygen user"
${SSHKEYGEN} -q -t ed25519 -N '' -C host2 -f $K.host2 || fatal "keygen host2"
echo "host2 `cut -d' ' -f1,2 $K.host2.pub`" > $K.kh
PAT=`printf '*a%.0s' 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20`b
ALOTOFA=`printf 'a%.0s' \`seq 60\``
LONGPAT=`printf 'x%.0s' \`seq 300\``

trap sec_agent_stop EXIT

# add USERPATTERN: ssh-add -h USERPATTERN@host2; $_rc
add() {
	SSH_AUTH_SOCK=$SOCK $_add -q -h "$1@host2" -H $K.kh $K.user \
	    > $K.addlog 2>&1 < /dev/null
	_rc=$?
}

# sign USER: prints agentclient.py's result (signed, refused, timeout)
sign() {
	$PY $HPN_TOP/tests/security/agentclient.py sign-user $SOCK \
	    $K.host2 $K.user.pub "$1" > $K.out 2>&1 || {
		cat $K.out $K.agentlog >&2
		fatal "agentclient.py sign-user failed"
	}
	sed -n 's/^RESULT sign=\([a-z]*\) .*/\1/p' $K.out
}

scenario() {
	_flaw=0
	sec_agent_start $1
	add "$PAT"
	[ $_rc = 0 ] || { cat $K.addlog >&2; fatal "$1: ssh-add -h $PAT@host2 failed"; }
	_r=`sign ${ALOTOFA}b`
	[ "$_r" = signed ] || fatal "$1: control: a matching user: $_r"
	_r=`sign $ALOTOFA`
	case "$_r" in
	timeout)
		verbose "$tid: $1: no answer in 5 s for a user of 60 a's: `cat $K.out`"
		_flaw=1 ;;
	refused)
		verbose "$tid: $1: refused at once: `cat $K.out`" ;;
	*)	fatal "$1: a user the pattern does not match: $_r" ;;
	esac
	sec_agent_start $1
	add "$LONGPAT"
	if [ $_rc = 0 ]; then
		verbose "$tid: $1: a user pattern of 300 bytes was accepted"
		_flaw=1
	elif grep -q "user pattern of 300 bytes" $K.agentlog; then
		verbose "$tid: $1: a user pattern of 300 bytes refused"
	else
		cat $K.addlog $K.agentlog >&2
		fatal "$1: ssh-add of a 300-byte user pattern failed otherwise"
	fi
	sec_agent_stop
	return $_flaw
}

sec_run scenario
rm -f $K.* $SOCK
