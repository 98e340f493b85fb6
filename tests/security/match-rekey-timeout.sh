#	ChannelTimeout and RekeyLimit given in a Match block were ignored:
#	sshd-session set its channel timeouts once, from the global
#	configuration, and sshd-auth its rekey limits (upstream caa6d7d19,
#	10.5p1).  Each setting is tried globally first (a control: it works on
#	every build), then inside "Match User" only.  The rekeys are counted
#	in the client's log (one NEWKEYS received is the first exchange).
#	Placed in the Public Domain.

tid="ChannelTimeout and RekeyLimit in Match"
fixed_in=10.5p1
[ -n "$HPN_TOP" ] || fatal "HPN_TOP not set"
. $HPN_TOP/tests/security/lib.sh

D=$OBJ/sec-match-rk
M="Match User $USER"

# idle FLAVOUR NAME: the session's command stays silent for 4 s; prints
# "open" when it ran to its end (exit 23), "closed" when the server closed
# the idle channel first.
idle() {
	rm -f $D/out $D/log
	timeout 60 ${REAL_SSH} -F $OBJ/ssh_$2.$1 -E $D/log somehost \
	    'sleep 4; echo slept; exit 23' > $D/out 2>&1 < /dev/null
	_rc=$?
	if [ $_rc = 23 ] && grep -q slept $D/out; then
		echo open
	elif [ $_rc = 255 ] && ! grep -q slept $D/out; then
		echo closed
	else
		cat $D/out $D/log >&2
		echo "exit $_rc"
	fi
}

# rekeys FLAVOUR NAME: 256 KiB from the server; prints how many key
# exchanges the client saw completed after the first.
rekeys() {
	rm -f $D/log
	timeout 60 ${REAL_SSH} -F $OBJ/ssh_$2.$1 -E $D/log -o LogLevel=DEBUG1 \
	    somehost 'dd if=/dev/zero bs=1024 count=256 2>/dev/null' \
	    > $D/out < /dev/null
	_rc=$?
	_n=`wc -c < $D/out`
	[ $_rc = 0 ] && [ $_n = 262144 ] || {
		cat $D/log >&2
		fatal "$1: $2: transfer failed (exit $_rc, $_n bytes)"
	}
	echo $((`grep -c 'SSH2_MSG_NEWKEYS received' $D/log` - 1))
}

scenario() {
	_flaw=0
	rm -rf $D
	mkdir -p $D

	sec_proxy $1 mrk-tg "ChannelTimeout session:command=1s"
	_r=`idle $1 mrk-tg`
	[ "$_r" = closed ] || fatal "$1: a global ChannelTimeout session:command=1s: $_r"
	sec_proxy $1 mrk-tm "$M" "	ChannelTimeout session:command=1s"
	_r=`idle $1 mrk-tm`
	case "$_r" in
	open)	verbose "$tid: $1: ChannelTimeout in Match: the idle session stayed open"
		_flaw=1 ;;
	closed)	verbose "$tid: $1: ChannelTimeout in Match: idle session closed" ;;
	*)	fatal "$1: ChannelTimeout in Match: $_r" ;;
	esac

	sec_proxy $1 mrk-rg "RekeyLimit 16K"
	_n=`rekeys $1 mrk-rg`
	[ "$_n" -gt 0 ] || fatal "$1: a global RekeyLimit 16K: no rekey"
	sec_proxy $1 mrk-rm "$M" "	RekeyLimit 16K"
	_n=`rekeys $1 mrk-rm`
	if [ "$_n" = 0 ]; then
		verbose "$tid: $1: RekeyLimit 16K in Match: no rekey in 256 KiB"
		_flaw=1
	else
		verbose "$tid: $1: RekeyLimit 16K in Match: $_n rekeys"
	fi
	# Match lifts a global limit ("default none" is the option's default)
	sec_proxy $1 mrk-rn "RekeyLimit 16K" "$M" "	RekeyLimit default none"
	_n=`rekeys $1 mrk-rn`
	if [ "$_n" != 0 ]; then
		verbose "$tid: $1: RekeyLimit default none in Match: the global 16K held ($_n rekeys)"
		_flaw=1
	else
		verbose "$tid: $1: RekeyLimit default none in Match: no rekey"
	fi
	return $_flaw
}

sec_run scenario
rm -rf $D $OBJ/sshd_mrk-* $OBJ/ssh_mrk-*
