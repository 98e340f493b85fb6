#	HPN patch set: UseMPTCP.  The option in -G and -T; on loopback a client
#	with MPTCP against a server without it (plain TCP, said with -v) and
#	with it; a kernel that refuses MPTCP (plain TCP and a notice); then
#	two emulated paths between namespaces (bench/netpath --paths 2): one
#	upload and one download each carried over both paths.
#	Placed in the Public Domain.

tid="hpn multipath tcp"

DATA=$OBJ/hpnmptcp-data
ERR=$OBJ/hpnmptcp-err
dd if=/dev/urandom of=$DATA bs=1048576 count=8 2>/dev/null
SUM=`sha256sum < $DATA`

verbose "$tid: options"
${REAL_SSH} -G -F $OBJ/ssh_config somehost | grep -qx "usemptcp no" ||
	fail "ssh -G: usemptcp not no by default"
${REAL_SSH} -G -F $OBJ/ssh_config -oUseMPTCP=yes somehost | grep -qx "usemptcp yes" ||
	fail "ssh -G: usemptcp yes not shown"
${REAL_SSH} -G -F $OBJ/ssh_config -oUseMPTCP=maybe somehost > $ERR 2>&1 &&
	fail "ssh: UseMPTCP=maybe accepted"
${SSHD} -T -f $OBJ/sshd_config | grep -qx "usemptcp no" ||
	fail "sshd -T: usemptcp not no by default"
${SSHD} -T -f $OBJ/sshd_config -oUseMPTCP=yes | grep -qx "usemptcp yes" ||
	fail "sshd -T: usemptcp yes not shown"

# Has this kernel MPTCP (here, in the test's network namespace)?
PY=/usr/bin/python3
[ -x $PY ] || PY=`command -v python3`
mptcp=no
if [ -n "$PY" ] && $PY -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262)' 2>/dev/null; then
	mptcp=yes
fi

# xfer CONFIG WHAT [ssh options]: an upload through sha256sum, -v on stderr
xfer() {
	_cfg=$1 _what=$2
	shift 2
	rm -f $ERR
	s=`${REAL_SSH} -F $_cfg -v "$@" somehost sha256sum < $DATA 2> $ERR`
	[ "$s" = "$SUM" ] || fail "$_what: checksum differs: `grep -v '^debug' $ERR | tail -3`"
}

start_sshd
if [ $mptcp = yes ]; then
	verbose "$tid: MPTCP client, server without it: plain TCP"
	xfer $OBJ/ssh_config "no MPTCP server" -oUseMPTCP=yes
	grep -q "Connection: Multipath TCP socket, fallen back to TCP" $ERR ||
		fail "fallback to TCP not said: `grep Connection: $ERR`"
	grep -q "refuses Multipath TCP" $ERR && fail "a refusal where MPTCP works"
	stop_sshd

	verbose "$tid: both ends with MPTCP on loopback"
	echo "UseMPTCP yes" >> $OBJ/sshd_config
	start_sshd
	xfer $OBJ/ssh_config "MPTCP both ends" -oUseMPTCP=yes
	grep -q "Connection: Multipath TCP, 1 subflow" $ERR ||
		fail "MPTCP not said: `grep Connection: $ERR`"
	verbose "$tid: a client without MPTCP still served"
	xfer $OBJ/ssh_config "TCP client, MPTCP server"
	grep -q "Connection: " $ERR && fail "a plain TCP client says: `grep Connection: $ERR`"
	stop_sshd
	sed -i '/^UseMPTCP/d' $OBJ/sshd_config
	start_sshd
else
	verbose "$tid: no MPTCP in this kernel"
	xfer $OBJ/ssh_config "no MPTCP kernel" -oUseMPTCP=yes
	grep -q "UseMPTCP: the kernel refuses Multipath TCP" $ERR ||
		fail "no notice of the refusal: `grep -v '^debug' $ERR`"
fi
stop_sshd

# The rest needs MPTCP, root and bench/netpath (path-lib.sh skips without
# them).  test-exec.sh's skip ends the test with the failures above kept.
rm -f $DATA $ERR
[ $mptcp = yes ] || skip "two paths not tried: no MPTCP in this kernel"
[ -n "$HPN_TOP" ] || skip "two paths not tried: HPN_TOP not set"
PATH_TAG=hpnmt PATH_LOGLEVEL=INFO
. $HPN_TOP/tests/regress/path-lib.sh

$NETPATH up --name $NP --rtt 20 --rate 200 --paths 2 --seed 3 \
    > $OBJ/hpnmt-path.log 2>&1 || fatal "netpath up failed: `cat $OBJ/hpnmt-path.log`"
grep -q "mptcp: endpoints" $OBJ/hpnmt-path.log ||
	fatal "no MPTCP endpoints: `cat $OBJ/hpnmt-path.log`"
HPORT=`expr $PORT + 120`
path_sshd hpn ${REAL_SSHD} $HPORT "SshdSessionPath $SSHD_SESSION" \
    "SshdAuthPath $SSHD_AUTH" "UseMPTCP yes"
sed -e "s/^	Hostname.*/	Hostname $SADDR/" $OBJ/ssh_config > $OBJ/ssh_config.path

verbose "$tid: a kernel refusing MPTCP: TCP and a notice"
$CNS sysctl -qw net.mptcp.enabled=0
$CNS ${REAL_SSH} -F $OBJ/ssh_config.path -p $HPORT -oUseMPTCP=yes \
    somehost true > $ERR 2>&1 || fail "refused MPTCP: ssh failed: `cat $ERR`"
grep -q "UseMPTCP: the kernel refuses Multipath TCP" $ERR ||
	fail "no notice of the refusal: `cat $ERR`"
$CNS sysctl -qw net.mptcp.enabled=1

# bytes the client sent (a2b) or received (b2a) on path 1 or 2, so far
pathbytes() {
	$NETPATH stats --name $NP --path $1 |
	    awk -v d=$2 '$1 == "dir=" d { for (i = 2; i <= NF; i++) {
		split($i, kv, "="); if (kv[1] == "fwd_bytes") print kv[2] } }'
}
# both DIR WHAT B1 B2: each path carried at least a fifth of the bytes
both() {
	_n1=`pathbytes 1 $1` _n2=`pathbytes 2 $1`
	_d1=`expr $_n1 - $3` _d2=`expr $_n2 - $4`
	echo "$2: path 1 $_d1 bytes, path 2 $_d2 bytes"
	_t=`expr $_d1 + $_d2`
	[ $_t -ge $BIG ] || fail "$2: only $_t bytes on the paths"
	[ `expr $_d1 \* 5` -ge $_t ] || fail "$2: path 1 carried $_d1 of $_t bytes"
	[ `expr $_d2 \* 5` -ge $_t ] || fail "$2: path 2 carried $_d2 of $_t bytes"
}
B=$OBJ/hpnmt-big
dd if=/dev/urandom of=$B bs=1048576 count=8 2>/dev/null
bigsum=`for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24; do cat $B; done | sha256sum`
BIG=`expr 24 \* 8388608`

verbose "$tid: upload over two paths"
a1=`pathbytes 1 a2b` a2=`pathbytes 2 a2b`
s=`for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24; do cat $B; done |
    $CNS timeout 120 ${REAL_SSH} -F $OBJ/ssh_config.path -p $HPORT -v \
    -oUseMPTCP=yes somehost sha256sum 2> $ERR`
[ "$s" = "$bigsum" ] || fail "upload: checksum differs: `grep -v '^debug' $ERR | tail -3`"
both a2b upload $a1 $a2
grep -q "Connection: Multipath TCP, 2 subflows" $ERR ||
	fail "upload: the client does not say 2 subflows: `grep Connection: $ERR`"
grep -q "Session transfer: user $USER .*, Multipath TCP, 2 subflows" \
    $OBJ/hpnmt-sshd.hpn.log ||
	fail "upload: the server's log line: `grep 'Session transfer' $OBJ/hpnmt-sshd.hpn.log`"

verbose "$tid: download over two paths"
b1=`pathbytes 1 b2a` b2=`pathbytes 2 b2a`
s=`$CNS timeout 120 ${REAL_SSH} -F $OBJ/ssh_config.path -p $HPORT \
    -oUseMPTCP=yes somehost "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24; do cat $B; done" |
    sha256sum`
[ "$s" = "$bigsum" ] || fail "download: checksum differs"
both b2a download $b1 $b2

path_cleanup
rm -f $DATA $ERR $B $OBJ/hpnmt-* $OBJ/ssh_config.path
