#	Helpers of the regress tests on an emulated path (hpn-window.sh,
#	hpn-metrics-path.sh), sourced after test-exec.sh once HPN_TOP is known
#	to be set: skips without root or bench/netpath, names the path after
#	PATH_TAG (and the PID), and stops every sshd it started and the path
#	on exit.  The caller brings the path up.  Placed in the Public Domain.

NETPATH="$HPN_TOP/bench/netpath/netpath"
. $HPN_TOP/tests/lib/skips.sh
if [ "`id -u`" != "0" ]; then
	skip "path tests need root (network namespaces)"
fi
if [ ! -x "$NETPATH" ]; then
	skip "no bench/netpath"
fi
NP=$PATH_TAG$$
NP=`echo $NP | cut -c1-12`
CNS="ip netns exec $NP-c"
SNS="ip netns exec $NP-s"
SADDR=10.201.0.2
path_pids=""
path_cleanup() {
	for p in $path_pids; do
		kill $p 2>/dev/null
	done
	path_pids=""
	$NETPATH down --name $NP > /dev/null 2>&1
}
trap path_cleanup EXIT

# path_sshd NAME BINARY PORT [sshd_config lines...]: an sshd in the server
# namespace, logging at PATH_LOGLEVEL to $OBJ/$PATH_TAG-sshd.NAME.log;
# test-exec's config minus what differs between versions.
path_sshd() {
	n=$1 bin=$2 port=$3
	shift 3
	cfg=$OBJ/sshd_config.$n
	grep -Eiv '^[[:space:]]*(Port|ListenAddress|AddressFamily|PidFile|LogLevel|SshdSessionPath|SshdAuthPath|PerSourcePenalties|Subsystem)[[:space:]]' \
	    $OBJ/sshd_config > $cfg
	printf '\tPort %s\n\tListenAddress %s\n\tPidFile %s\n\tLogLevel %s\n' \
	    $port $SADDR $OBJ/pidfile.$n $PATH_LOGLEVEL >> $cfg
	for l in "$@"; do
		echo "	$l" >> $cfg
	done
	rm -f $OBJ/pidfile.$n $OBJ/$PATH_TAG-sshd.$n.log
	$SNS $bin -f $cfg -E $OBJ/$PATH_TAG-sshd.$n.log ||
		fatal "cannot start the $n sshd: `tail -5 $OBJ/$PATH_TAG-sshd.$n.log`"
	i=0
	while [ ! -s $OBJ/pidfile.$n ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=`expr $i + 1`
	done
	[ -s $OBJ/pidfile.$n ] || fatal "the $n sshd did not start"
	path_pids="$path_pids `cat $OBJ/pidfile.$n`"
}

# peak LOG [FROM]: the largest peak window in the channel summary lines
# (and hpnsshd's session lines) of LOG after line FROM; lines LOG: its
# lines now
peak() {
	tail -n +`expr ${2:-0} + 1` $1 | awk '/peak window/ {
		for (i = 1; i < NF; i++) if ($i == "window") {
		v = $(i + 1); gsub(/[^0-9]/, "", v); print v } }' |
	    sort -n | tail -n 1
}
lines() {
	wc -l < $1 | tr -d ' '
}
