#	ssh-keyscan read a server's identification line with a blocking
#	read without a timeout: one server that sent a part of a line and
#	stalled, or sent lines that were never an identification, held up
#	the whole scan for ever, whatever -T said (upstream 407a2b79d,
#	10.5p1).  stallserver.py does either on 127.0.0.2, listed first;
#	sshd answers on 127.0.0.1.  The scan must end near its -T of 3 s
#	with the good host's keys.  Control: that host alone, on both.
#	Placed in the Public Domain.

tid="ssh-keyscan and a stalled greeting"
fixed_in=10.5p1
[ -n "$HPN_TOP" ] || fatal "HPN_TOP not set"
. $HPN_TOP/tests/security/lib.sh

PY=/usr/bin/python3
[ -x $PY ] || PY=`command -v python3`
[ -n "$PY" ] || fatal "python3 is needed (make deps)"
D=$OBJ/sec-keyscan
rm -rf $D
mkdir -p $D

start_sshd

# scan FLAVOUR HOSTS...: that flavour's ssh-keyscan -T 3; $D/out,
# $D/err, $_rc, $_secs.  Killed after 20 s (exit 124).
scan() {
	case "$1" in
	stock)	_ks=$HPN_STOCK_TREE/ssh-keyscan ;;
	*)	_ks=${SSHKEYSCAN} ;;
	esac
	shift
	_t0=`date +%s`
	timeout 20 $_ks -T 3 -p $PORT "$@" > $D/out 2> $D/err < /dev/null
	_rc=$?
	_secs=$((`date +%s` - $_t0))
}

scenario() {
	_flaw=0
	scan $1 127.0.0.1
	[ $_rc = 0 ] && grep -q '^\[127\.0\.0\.1\]:' $D/out || {
		cat $D/out $D/err >&2
		fatal "$1: no key from sshd alone (exit $_rc)"
	}
	for m in partial junk; do
		rm -f $D/stall	# the last one's LISTENING must not be read
		$PY $HPN_TOP/tests/security/stallserver.py $m 127.0.0.2 $PORT \
		    > $D/stall 2>&1 &
		_sp=$!
		_i=0
		while ! grep -q LISTENING $D/stall 2>/dev/null; do
			_i=`expr $_i + 1`
			[ $_i -lt 100 ] || { kill $_sp; wait $_sp; fatal "$1: $m: stallserver.py did not start"; }
			sleep 0.1
		done
		scan $1 127.0.0.2 127.0.0.1
		kill $_sp 2>/dev/null
		wait $_sp 2>/dev/null
		grep -q ACCEPTED $D/stall || {
			cat $D/stall $D/err >&2
			fatal "$1: $m: ssh-keyscan never reached stallserver.py (exit $_rc after $_secs s)"
		}
		if [ $_rc = 124 ]; then
			verbose "$tid: $1: $m: ssh-keyscan -T 3 still running after 20 s, `grep -c '^\[127\.0\.0\.1\]:' $D/out` keys of the good host"
			_flaw=1
			continue
		fi
		[ $_rc = 0 ] && grep -q '^\[127\.0\.0\.1\]:' $D/out && [ $_secs -lt 12 ] || {
			cat $D/out $D/err >&2
			fatal "$1: $m: exit $_rc after $_secs s"
		}
		verbose "$tid: $1: $m: done in $_secs s, `grep -c '^\[127\.0\.0\.1\]:' $D/out` keys of the good host"
	done
	return $_flaw
}

sec_run scenario
rm -rf $D
