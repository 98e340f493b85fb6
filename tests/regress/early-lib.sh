#	Helpers of the EarlySend regress tests (hpn-early.sh,
#	hpn-early-guard.sh), sourced after test-exec.sh once $ERR is set: the
#	hpn client with its -v lines in $ERR, checks of them, the server's log
#	emptied, a file waited for.  Placed in the Public Domain.

# ssh ARGS...: the hpn client, its -v lines (LL: another level) in $ERR
hssh() {
	${REAL_SSH} -F ${CFG:-$OBJ/ssh_config} -oLogLevel=${LL:-debug1} "$@" \
	    2> $ERR
}
has() {
	grep -q -- "$2" $ERR || fail "$1: no \"$2\" in: `grep -i early $ERR`"
}
hasnt() {
	grep -q -- "$2" $ERR && fail "$1: \"$2\" seen"
}
fresh_log() {
	: > `readlink -f $TEST_SSHD_LOGFILE`
}
# waitfile FILE: the server's PID file or a ready file, at most 10 s
waitfile() {
	_i=0
	while [ ! -s $1 ] && [ $_i -lt 100 ]; do
		sleep 0.1
		_i=`expr $_i + 1`
	done
	[ -s $1 ]
}
