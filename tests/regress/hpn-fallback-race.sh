#	HPN patch set: the default port 2222 raced against FallbackPort.  A
#	firewall that silently drops 2222 (nftables in a network namespace of
#	the test's own) costs FallbackDelay, not the kernel's connect timeout;
#	2222 wins when both answer; a refused 2222 falls back at once;
#	ConnectTimeout bounds a host where both are dropped.
#	Placed in the Public Domain.

tid="hpn fallback race"

if [ "`id -u`" != "0" ]; then
	skip "needs root (a network namespace)"
fi
if ! command -v nft > /dev/null; then
	skip "no nft (make deps installs nftables)"
fi
NS=hpnfr$$
NS=`echo $NS | cut -c1-12`
IN="ip netns exec $NS"
fr_pids=""
fr_cleanup() {
	for p in $fr_pids; do
		kill $p 2>/dev/null
	done
	ip netns del $NS 2>/dev/null
}
trap fr_cleanup EXIT
ip netns add $NS || fatal "ip netns add failed"
ip -n $NS link set lo up || fatal "lo up failed"

# fr_sshd PORT: hpnsshd on 127.0.0.1:PORT in the namespace
fr_sshd() {
	grep -Eiv '^[[:space:]]*(Port|ListenAddress|PidFile)[[:space:]]' \
	    $OBJ/sshd_config > $OBJ/hpnfr-sshd_config.$1
	printf 'Port %s\nListenAddress 127.0.0.1\nPidFile %s\n' $1 \
	    $OBJ/hpnfr.$1.pid >> $OBJ/hpnfr-sshd_config.$1
	rm -f $OBJ/hpnfr.$1.pid
	$IN ${REAL_SSHD} -f $OBJ/hpnfr-sshd_config.$1 -E $OBJ/hpnfr-sshd.$1.log ||
		fatal "sshd on $1 did not start"
	i=0
	while [ ! -s $OBJ/hpnfr.$1.pid ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=`expr $i + 1`
	done
	[ -s $OBJ/hpnfr.$1.pid ] || fatal "sshd on $1: no pid file"
	fr_pids="$fr_pids `cat $OBJ/hpnfr.$1.pid`"
}
# No port: hpnssh connects to 2222, FallbackPort 22.
grep -Eiv '^[[:space:]]*(Port)[[:space:]]' $OBJ/ssh_config > $OBJ/hpnfr-ssh_config
# fr_ssh [options]: the seconds it took (whole command); log in hpnfr-err
fr_ssh() {
	rm -f $OBJ/hpnfr-err
	t0=`date +%s.%N`
	$IN timeout 120 ${REAL_SSH} -F $OBJ/hpnfr-ssh_config -E $OBJ/hpnfr-err \
	    "$@" somehost 'echo $SSH_CONNECTION' < /dev/null > $OBJ/hpnfr-out
	fr_rc=$?
	t1=`date +%s.%N`
	fr_secs=`echo "$t0 $t1" | awk '{ printf "%.1f", $2 - $1 }'`
	fr_port=`awk '{ print $4 }' $OBJ/hpnfr-out`
}
lt() {	# lt A B: A < B (decimals)
	echo "$1 $2" | awk '{ exit !($1 < $2) }'
}

fr_sshd 22

verbose "$tid: 2222 refused: port 22 at once"
fr_ssh
[ $fr_rc = 0 ] || fail "2222 refused: no connection: `tail -3 $OBJ/hpnfr-err`"
[ "$fr_port" = 22 ] || fail "2222 refused: connected to port '$fr_port'"
lt $fr_secs 2 || fail "2222 refused: took $fr_secs s"
grep -q "port 2222 Connection refused; trying port 22 too" $OBJ/hpnfr-err ||
	fail "2222 refused: no notice"

verbose "$tid: 2222 silently dropped: port 22 after FallbackDelay"
$IN nft -f - <<EOF || fatal "nft failed"
table inet hpnfr {
	chain input {
		type filter hook input priority 0; policy accept;
		tcp dport 2222 drop
	}
}
EOF
fr_ssh
[ $fr_rc = 0 ] || fail "2222 dropped: no connection: `tail -3 $OBJ/hpnfr-err`"
[ "$fr_port" = 22 ] || fail "2222 dropped: connected to port '$fr_port'"
lt $fr_secs 5 || fail "2222 dropped: took $fr_secs s (not within 5 s)"
grep -q "port 2222 is silent; trying port 22 too" $OBJ/hpnfr-err ||
	fail "2222 dropped: no notice"
trace "2222 dropped: connected on 22 in $fr_secs s"
fr_ssh -oFallbackDelay=0.5
lt $fr_secs 2 || fail "FallbackDelay=0.5: took $fr_secs s"

verbose "$tid: both dropped: ConnectTimeout bounds it"
$IN nft add rule inet hpnfr input tcp dport 22 drop || fatal "nft add failed"
fr_ssh -oConnectTimeout=3
[ $fr_rc = 0 ] && fail "both dropped: connected"
lt $fr_secs 6 || fail "both dropped, ConnectTimeout=3: took $fr_secs s"
$IN nft delete table inet hpnfr || fatal "nft delete failed"

verbose "$tid: both answer: 2222 is used"
fr_sshd 2222
fr_ssh
[ $fr_rc = 0 ] || fail "both: no connection"
[ "$fr_port" = 2222 ] || fail "both answer: connected to port '$fr_port'"
grep -q "trying port 22" $OBJ/hpnfr-err && fail "both answer: port 22 tried"

verbose "$tid: Fallback no: 2222 only"
fr_ssh -oFallback=no
[ "$fr_port" = 2222 ] || fail "Fallback no: port '$fr_port'"

for opt in FallbackDelay=0 FallbackDelay=61 FallbackDelay=x; do
	${REAL_SSH} -G -F $OBJ/hpnfr-ssh_config -o $opt somehost > /dev/null 2>&1 &&
		fail "ssh accepted -o $opt"
done
${REAL_SSH} -G -F $OBJ/hpnfr-ssh_config somehost | grep -qx 'fallbackdelay 2' ||
	fail "ssh -G: no fallbackdelay 2"
${REAL_SSH} -G -F $OBJ/hpnfr-ssh_config -oHappyEyes=yes -oHappyDelay=250 somehost \
    > /dev/null || fail "HPN-SSH's HappyEyes/HappyDelay refused"

fr_cleanup
fr_pids=""
trap - EXIT
rm -f $OBJ/hpnfr*
