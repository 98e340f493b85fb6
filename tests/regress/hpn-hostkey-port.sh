#	HPN patch set: host keys on the default port 2222.  A key for
#	[host]:2222 is trusted when known_hosts knows it for [host]:2222 or for
#	the host on port 22; a squatter on 2222 with another key than the
#	host's port-22 one is a changed key, refused even under accept-new.
#	Runs sshd on 127.0.0.1:2222 inside a network namespace of its own.
#	Placed in the Public Domain.

tid="hpn host keys on the default port"

if [ "`id -u`" != "0" ]; then
	skip "needs root (a network namespace for port 2222)"
fi
NS=hpnhk$$
NS=`echo $NS | cut -c1-12`
IN="ip netns exec $NS"
hk_pid=""
hk_cleanup() {
	[ -n "$hk_pid" ] && kill $hk_pid 2>/dev/null
	ip netns del $NS 2>/dev/null
}
trap hk_cleanup EXIT
ip netns add $NS || fatal "ip netns add failed"
ip -n $NS link set lo up || fatal "lo up failed"

KH=$OBJ/hpnhk-known_hosts
rm -f $OBJ/hpnhk-A $OBJ/hpnhk-A.pub $OBJ/hpnhk-B $OBJ/hpnhk-B.pub
${SSHKEYGEN} -q -t ed25519 -N '' -f $OBJ/hpnhk-A || fatal "keygen A"
${SSHKEYGEN} -q -t ed25519 -N '' -f $OBJ/hpnhk-B || fatal "keygen B"
A=`cut -d' ' -f1,2 $OBJ/hpnhk-A.pub`
B=`cut -d' ' -f1,2 $OBJ/hpnhk-B.pub`

# The client: no port given, so hpnssh uses 2222; no fallback to 22.
grep -Eiv '^[[:space:]]*(Hostname|HostKeyAlias|Port|GlobalKnownHostsFile|UserKnownHostsFile|StrictHostKeyChecking|CheckHostIP|UpdateHostKeys)[[:space:]]' \
    $OBJ/ssh_config > $OBJ/hpnhk-ssh_config
cat >> $OBJ/hpnhk-ssh_config <<EOF
	Hostname 127.0.0.1
	GlobalKnownHostsFile /dev/null
	UserKnownHostsFile $KH
	StrictHostKeyChecking accept-new
	Fallback no
EOF

# hk_sshd KEY: hpnsshd on 127.0.0.1:2222 in the namespace with that host key
hk_sshd() {
	[ -n "$hk_pid" ] && kill $hk_pid 2>/dev/null
	hk_pid=""
	i=0
	while [ -f $OBJ/hpnhk.pid ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=`expr $i + 1`
	done
	grep -Eiv '^[[:space:]]*(Port|ListenAddress|PidFile|HostKey)[[:space:]]' \
	    $OBJ/sshd_config > $OBJ/hpnhk-sshd_config
	printf 'Port 2222\nListenAddress 127.0.0.1\nPidFile %s\nHostKey %s\n' \
	    $OBJ/hpnhk.pid $OBJ/hpnhk-$1 >> $OBJ/hpnhk-sshd_config
	rm -f $OBJ/hpnhk.pid
	$IN ${REAL_SSHD} -f $OBJ/hpnhk-sshd_config -E $OBJ/hpnhk-sshd.log ||
		fatal "sshd with key $1 did not start: `tail -3 $OBJ/hpnhk-sshd.log`"
	i=0
	while [ ! -s $OBJ/hpnhk.pid ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=`expr $i + 1`
	done
	[ -s $OBJ/hpnhk.pid ] || fatal "sshd with key $1: no pid file"
	hk_pid=`cat $OBJ/hpnhk.pid`
}
# hk_ssh [options]: hpnssh to the default port; its log in hpnhk-err
hk_ssh() {
	rm -f $OBJ/hpnhk-err
	$IN timeout 60 ${REAL_SSH} -F $OBJ/hpnhk-ssh_config -E $OBJ/hpnhk-err \
	    "$@" somehost true < /dev/null
}

verbose "$tid: a squatter's key B while known_hosts has the host's port-22 key A"
hk_sshd B
echo "127.0.0.1 $A" > $KH
cp $KH $KH.before
hk_ssh && fail "a squatter on 2222 was trusted under accept-new"
cmp -s $KH $KH.before || fail "known_hosts written for the squatter: `cat $KH`"
grep -q "REMOTE HOST IDENTIFICATION HAS CHANGED" $OBJ/hpnhk-err ||
	fail "squatter: not treated as a changed key: `tail -5 $OBJ/hpnhk-err`"
grep -q "127.0.0.1 is known with another key on port 22.*port 2222" $OBJ/hpnhk-err ||
	fail "squatter: no explanation of port 22 and 2222"
grep -q "trust it on purpose.*hpnssh-keyscan -p 2222 127.0.0.1 >> $KH" $OBJ/hpnhk-err ||
	fail "squatter: no way to trust hpnsshd's key on purpose"
# even with StrictHostKeyChecking yes it stays refused
hk_ssh -oStrictHostKeyChecking=yes && fail "squatter trusted under yes"

verbose "$tid: the host's own key A on 2222: accepted, nothing recorded"
hk_sshd A
hk_ssh || fail "key A on 2222 refused: `tail -5 $OBJ/hpnhk-err`"
cmp -s $KH $KH.before || fail "key A on 2222: known_hosts changed: `cat $KH`"

verbose "$tid: hpnsshd's own key trusted on purpose for [host]:2222"
hk_sshd B
echo "[127.0.0.1]:2222 $B" >> $KH
cp $KH $KH.before
hk_ssh || fail "key B known for [127.0.0.1]:2222 refused: `tail -5 $OBJ/hpnhk-err`"
cmp -s $KH $KH.before || fail "key B: known_hosts changed"

verbose "$tid: a host known on neither: the usual first use"
: > $KH
hk_ssh || fail "a new host refused under accept-new: `tail -5 $OBJ/hpnhk-err`"
grep -q "^\[127.0.0.1\]:2222 $B" $KH || fail "a new host: not recorded as [127.0.0.1]:2222: `cat $KH`"

verbose "$tid: a port given explicitly: port-22 keys do not count"
echo "127.0.0.1 $A" > $KH
hk_ssh -p 2222 || fail "-p 2222 with a port-22 entry of another key refused"
grep -q "^\[127.0.0.1\]:2222 $B" $KH || fail "-p 2222: not recorded as new"

hk_cleanup
hk_pid=""
trap - EXIT
rm -f $OBJ/hpnhk-*
