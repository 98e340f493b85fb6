#	HPN patch set: EarlySend, the connection set-up in fewer round trips
#	(README.hpn section 15).  What goes early and whether each server
#	takes it: hpnsshd, stock 10.x and Debian's 9.2 sshd, paramiko,
#	asyncssh, Dropbear, Go's x/crypto/ssh; ProxyJump; keys refused after an early signature; a
#	session that must not run when authentication fails; its early data
#	after a failed attempt; the guessed key exchange, right and wrong;
#	nothing after the key exchange leaves when the host key is wrong;
#	round trips in series, counted by a relay (tests/regress/rtt-relay.py).
#	Placed in the Public Domain.

tid="hpn early set-up"

PY=/usr/bin/python3
[ -x $PY ] || PY=`command -v python3`
[ -n "$PY" ] || skip "no python3"
[ -n "$HPN_TOP" ] || skip "HPN_TOP not set"
. $HPN_TOP/tests/lib/skips.sh
RELAY=$HPN_TOP/tests/regress/hpn-early-relay.py
RTTRELAY=$HPN_TOP/tests/regress/rtt-relay.py
SENT=$HPN_TOP/tests/regress/hpn-early-sent.py
PYSERVER=$HPN_TOP/tests/interop/pyserver.py

W=$OBJ/hpne
rm -rf $W
mkdir -p $W
ERR=$W/err
HOSTS=$OBJ/hpn_early_hosts	# EarlyHostsFile's default beside known_hosts
RAN=$W/ran

others=""
DB=""	# Dropbear's files, outside $OBJ
early_cleanup() {
	for p in $others; do
		kill $p 2>/dev/null
	done
	others=""
	[ -z "$DB" ] || rm -rf $DB
}
trap early_cleanup EXIT

cp $OBJ/sshd_config $OBJ/sshd_config.orig
start_sshd

. $HPN_TOP/tests/regress/early-lib.sh

# other_sshd NAME BINARY PORT [sshd_config lines...]: another sshd on
# 127.0.0.1, test-exec's configuration minus what differs by version
other_sshd() {
	n=$1 bin=$2 port=$3
	shift 3
	cfg=$W/sshd_config.$n
	grep -Eiv '^[[:space:]]*(Port|ListenAddress|AddressFamily|PidFile|SshdSessionPath|SshdAuthPath|PerSourcePenalties|Subsystem)[[:space:]]' \
	    $OBJ/sshd_config.orig > $cfg
	printf 'Port %s\nListenAddress 127.0.0.1\nPidFile %s\n' $port \
	    $W/pid.$n >> $cfg
	for l in "$@"; do
		echo "$l" >> $cfg
	done
	rm -f $W/pid.$n
	$bin -f $cfg -E $W/sshd.$n.log || {
		fail "cannot start the $n sshd: `tail -3 $W/sshd.$n.log`"
		return 1
	}
	waitfile $W/pid.$n || { fail "the $n sshd did not start"; return 1; }
	others="$others `cat $W/pid.$n`"
}

# stop_other NAME: that sshd stopped, its port free again
stop_other() {
	_p=`cat $W/pid.$1 2>/dev/null`
	[ -n "$_p" ] || return 0
	kill $_p 2>/dev/null
	_i=0
	while kill -0 $_p 2>/dev/null && [ $_i -lt 100 ]; do
		sleep 0.1
		_i=`expr $_i + 1`
	done
}

# relay PORT TO DELAY [capture]: hpn-early-relay.py on 127.0.0.1:PORT
relay() {
	rm -f $W/relay.$1
	_c=""
	[ -z "$4" ] || _c="--capture $4"
	$PY $RELAY --listen $1 --to 127.0.0.1:$2 --delay $3 \
	    --ready $W/relay.$1 $_c 2> $W/relay.$1.err &
	waitfile $W/relay.$1 || fatal "the relay did not start"
	others="$others `cat $W/relay.$1`"
}

# ---------------------------------------------------------------- options
g=`${REAL_SSH} -G -F $OBJ/ssh_config somehost`
echo "$g" | grep -qx "earlysend yes" || fail "EarlySend does not default to yes"
${REAL_SSH} -G -F $OBJ/ssh_config -oEarlySend=no somehost |
    grep -qx "earlysend no" || fail "EarlySend no not taken"
echo "$g" | grep -qx "earlyhostsfile $HOSTS" ||
	fail "EarlyHostsFile is not beside known_hosts: `echo \"$g\" | grep earlyhosts`"
${REAL_SSH} -G -F $OBJ/ssh_config -oUserKnownHostsFile=/dev/null somehost |
    grep -qx "earlyhostsfile none" || fail "no EarlyHostsFile none without known_hosts"
${REAL_SSH} -G -F $OBJ/ssh_config -oEarlySend=maybe somehost > $ERR 2>&1 &&
	fail "EarlySend=maybe accepted"
grep -q 'unsupported option "maybe"' $ERR || fail "EarlySend=maybe: `cat $ERR`"

# ---------------------------------------------------------------- hpnsshd
verbose "$tid: towards hpnsshd: signed at once, the session behind it"
fresh_log
rm -f $HOSTS
out=`hssh somehost echo early-ok < /dev/null` || fail "connect failed"
[ "$out" = "early-ok" ] || fail "wrong output: $out"
has hpnsshd "publickey request sent with SERVICE_REQUEST (no \"none\" request first)"
has hpnsshd "Signing with public key at once"
has hpnsshd "Early set-up: the session (channel 0) and 0 bytes"
has hpnsshd "the server took the early session"
hasnt hpnsshd "Offering public key"
grep -q "method none" $TEST_SSHD_LOGFILE && fail "hpnsshd: a none request came"
grep -q "early set-up: the client's channel messages" $TEST_SSHD_LOGFILE &&
	fail "hpnsshd: messages dropped although authentication succeeded"
[ -s $HOSTS ] || fail "EarlyHostsFile $HOSTS not written"

verbose "$tid: the server recorded: the next key exchange is guessed"
hssh somehost true < /dev/null || fail "connect (guess) failed"
has guess "KEXINIT and a guessed mlkem768x25519-sha256 packet sent"
has guess "the server took the guessed mlkem768x25519-sha256 packet"
hssh -oEarlyHostsFile=none somehost true < /dev/null || fail "connect failed"
hasnt "EarlyHostsFile none" "guessed"

verbose "$tid: EarlySend no: upstream's set-up"
fresh_log
hssh -oEarlySend=no somehost true < /dev/null || fail "EarlySend=no failed"
hasnt "EarlySend=no" "Early set-up"
has "EarlySend=no" "Offering public key"
grep -q "method none" $TEST_SSHD_LOGFILE || fail "EarlySend=no: no none request"

verbose "$tid: early data: a file on stdin, small and larger than the cap"
for n in 1 300 1200 3000; do
	dd if=/dev/urandom of=$W/in bs=1024 count=$n 2>/dev/null
	hssh somehost "cat > $W/out" < $W/in || fail "cat $n KiB failed"
	cmp -s $W/in $W/out || fail "cat $n KiB: data differ"
	b=`expr $n \* 1024`
	[ $b -gt 1048576 ] && b=1048576
	has "cat $n KiB" "session (channel 0) and $b bytes"
done
hssh somehost "cat" < $W/in > $W/out || fail "cat back failed"
cmp -s $W/in $W/out || fail "cat back: data differ"

verbose "$tid: scp and sftp, both ways"
dd if=/dev/urandom of=$W/one bs=1 count=1 2>/dev/null
for f in one in; do
	rm -f $W/up $W/down
	${SCP} -S ${REAL_SSH} -F $OBJ/ssh_config $W/$f somehost:$W/up ||
		fail "scp up $f failed"
	cmp -s $W/$f $W/up || fail "scp up $f: data differ"
	${SCP} -S ${REAL_SSH} -F $OBJ/ssh_config somehost:$W/$f $W/down ||
		fail "scp down $f failed"
	cmp -s $W/$f $W/down || fail "scp down $f: data differ"
	rm -f $W/down
	echo "get $W/$f $W/down" > $W/batch
	${SFTP} -S ${REAL_SSH} -F $OBJ/ssh_config -b $W/batch somehost \
	    > /dev/null || fail "sftp get $f failed"
	cmp -s $W/$f $W/down || fail "sftp get $f: data differ"
done

verbose "$tid: a tty, and agent forwarding, go early too"
hssh -tt somehost true < /dev/null > /dev/null || fail "-tt failed"
has tty "the server took the early session"
eval `${SSHAGENT} ${EXTRA_AGENT_ARGS} -s` > /dev/null
out=`hssh -A somehost 'test -S "$SSH_AUTH_SOCK" && echo agent'` < /dev/null
${SSHAGENT} -k > /dev/null
[ "$out" = "agent" ] || fail "-A: no agent socket on the server"
has "-A" "the server took the early session"

verbose "$tid: ProxyJump: -W's channel and the next hop's KEXINIT go early"
${REAL_SSH} -F $OBJ/ssh_config -v -J somehost somehost echo jump-ok \
    < /dev/null > $W/out 2> $ERR || fail "-J failed"
[ "`cat $W/out`" = "jump-ok" ] || fail "-J: output `cat $W/out`"
has "-J" "the -W channel (channel 0) and [1-9][0-9]* bytes"
has "-J" "the server took the early -W channel"
has "-J" "Authenticated to .* (via proxy)"
has "-J" "the server took the early session"

verbose "$tid: a subsystem the server lacks fails as without EarlySend"
hssh -s somehost nosuchsubsystem < /dev/null > /dev/null && fail "no failure"
has subsystem "subsystem request failed"

verbose "$tid: what waits for authentication"
rm -f $ERR
# not through hssh(): $! must be ssh's own PID, not a subshell's
${REAL_SSH} -F $OBJ/ssh_config -oLogLevel=debug1 -N somehost \
    < /dev/null 2> $ERR &
np=$!
others="$others $np"
_i=0
while ! grep -q "Authenticated to" $ERR && [ $_i -lt 100 ]; do
	sleep 0.1
	_i=`expr $_i + 1`
done
kill $np 2>/dev/null
wait $np 2>/dev/null
has "-N" "Authenticated to"
hasnt "-N" "the session (channel"
hssh -R`expr $PORT + 62`:127.0.0.1:9 somehost echo r-ok < /dev/null > $W/out ||
	fail "-R failed"
[ "`cat $W/out`" = "r-ok" ] || fail "-R: output `cat $W/out`"
has "-R" "session waits for authentication: remote forwards"
hssh -oExitOnForwardFailure=yes -L`expr $PORT + 61`:127.0.0.1:9 somehost true \
    < /dev/null || fail "-L failed"
has "-L, ExitOnForwardFailure" "session waits for authentication: local forwards"

# ------------------------------------------- refused keys, failed sessions
# The server takes only the RSA key; the ed25519 key goes first.
if grep -q '^ssh-rsa ' $OBJ/authorized_keys_$USER; then
	cp $OBJ/authorized_keys_$USER $W/ak.all
	grep '^ssh-rsa ' $W/ak.all > $OBJ/authorized_keys_$USER
	# only the keys named with -i
	grep -iv '^[[:space:]]*IdentityFile' $OBJ/ssh_config > $W/ssh_config.i
	CFG=$W/ssh_config.i

	verbose "$tid: the first key refused after its early signature"
	rm -f $RAN $W/out
	dd if=/dev/urandom of=$W/in bs=1024 count=200 2>/dev/null
	hssh -i $OBJ/ssh-ed25519 -i $OBJ/ssh-rsa -oIdentitiesOnly=yes \
	    somehost "echo ran >> $RAN; cat > $W/out" < $W/in ||
		fail "second key: connect failed"
	has "refused key" "the server dropped the early session with the failed request"
	has "refused key" "Authenticated to"
	[ "`cat $RAN 2>/dev/null`" = "ran" ] || fail "the command ran `wc -l < $RAN` times"
	cmp -s $W/in $W/out || fail "early data lost or doubled after a failed attempt"

	verbose "$tid: every key refused: nothing runs, the right error"
	rm -f $RAN
	fresh_log
	hssh -i $OBJ/ssh-ed25519 -oIdentitiesOnly=yes somehost \
	    "echo ran >> $RAN" < /dev/null && fail "authenticated with a refused key"
	has "all refused" "Permission denied (publickey"
	has "all refused" "trying \"none\", not sent at first"
	[ -e $RAN ] && fail "the early command ran although authentication failed"
	grep -q "early set-up: the client's channel messages before authentication are dropped" \
	    $TEST_SSHD_LOGFILE || fail "hpnsshd did not say it dropped them"
	cp $W/ak.all $OBJ/authorized_keys_$USER
	CFG=
else
	skip_part "refused-key cases" "no RSA key"
fi

verbose "$tid: two keys required: the session after partial success"
cat $OBJ/sshd_config.orig > $OBJ/sshd_config
echo "AuthenticationMethods publickey,publickey" >> $OBJ/sshd_config
stop_sshd
start_sshd
rm -f $RAN
hssh somehost "echo ran >> $RAN" < /dev/null || fail "two keys: failed"
has "two keys" "partial success"
has "two keys" "the server dropped the early session"
[ "`cat $RAN 2>/dev/null`" = "ran" ] || fail "two keys: the command ran `wc -l < $RAN` times"
cat $OBJ/sshd_config.orig > $OBJ/sshd_config
stop_sshd
start_sshd

# OpenSSH's limit-keytype: the server names its signature algorithms
# before it knows the user, and a Match block for the user may add some
# (the client holds only RSA keys to that list).
verbose "$tid: a key the user's Match block allows, not the global list"
${SSHKEYGEN} -q -t rsa -b 2048 -N '' -f $W/rsa || fatal "ssh-keygen"
cp $OBJ/authorized_keys_$USER $W/ak.all
cat $W/rsa.pub >> $OBJ/authorized_keys_$USER
cat $OBJ/sshd_config.orig > $OBJ/sshd_config
printf 'PubkeyAcceptedAlgorithms ssh-ed25519\nMatch user %s\n' $USER >> $OBJ/sshd_config
echo "	PubkeyAcceptedAlgorithms +rsa-sha2-256,rsa-sha2-512" >> $OBJ/sshd_config
stop_sshd
start_sshd
rm -f $RAN
grep -iv '^[[:space:]]*IdentityFile' $OBJ/ssh_config > $W/ssh_config.i
CFG=$W/ssh_config.i	# only the key named with -i
hssh -i $W/rsa -oIdentitiesOnly=yes somehost "echo ran >> $RAN" \
    < /dev/null || fail "key of the user's algorithms: failed"
CFG=
has "user's algorithms" "ssh-rsa key $W/rsa waits for the server's algorithms for this user"
has "user's algorithms" "Authenticated to"
[ "`cat $RAN 2>/dev/null`" = "ran" ] ||
	fail "user's algorithms: the command ran `wc -l < $RAN` times"
cp $W/ak.all $OBJ/authorized_keys_$USER
cat $OBJ/sshd_config.orig > $OBJ/sshd_config
stop_sshd
start_sshd

verbose "$tid: keys that are offered first"
${SSHKEYGEN} -q -t ed25519 -N secret -f $W/enc || fatal "ssh-keygen"
hssh -i $W/enc -i $OBJ/ssh-ed25519 -oIdentitiesOnly=yes somehost true \
    < /dev/null || fail "encrypted key first: failed"
has "encrypted key" "key $W/enc offered first: its file needs a passphrase"
eval `${SSHAGENT} ${EXTRA_AGENT_ARGS} -s` > /dev/null
${SSHADD} -q $OBJ/ssh-ed25519 2>/dev/null
hssh -oIdentitiesOnly=no -oIdentityFile=none somehost true < /dev/null ||
	fail "agent key: failed"
${SSHAGENT} -k > /dev/null
has "agent key" "offered first: the agent's"

# ------------------------------------------------------------- the guess
verbose "$tid: a wrong guess: the server's method is another now"
cat $OBJ/sshd_config.orig > $OBJ/sshd_config
echo "KexAlgorithms curve25519-sha256" >> $OBJ/sshd_config
stop_sshd
start_sshd
hssh somehost true < /dev/null || fail "wrong guess: connect failed"
has "wrong guess" "the guessed mlkem768x25519-sha256 packet was dropped (agreed: curve25519-sha256)"
hssh somehost true < /dev/null || fail "after a wrong guess: connect failed"
hasnt "after a wrong guess" "guessed"	# recorded: curve25519, not our first
has "after a wrong guess" "agreed on curve25519-sha256 last time"
hssh -oKexAlgorithms=curve25519-sha256 somehost true < /dev/null ||
	fail "curve25519 first: connect failed"
has "curve25519 first" "the server took the guessed curve25519-sha256 packet"
cat $OBJ/sshd_config.orig > $OBJ/sshd_config
stop_sshd
start_sshd

verbose "$tid: host key mismatch: nothing after the key exchange leaves"
RPORT=`expr $PORT + 40`
relay $RPORT $PORT 0 $W/capture
hssh -oPort=$RPORT somehost true < /dev/null || fail "record: connect failed"
# known_hosts names another ed25519 key for the host: that type is chosen
cp $OBJ/known_hosts $W/kh.good
${SSHKEYGEN} -q -t ed25519 -N '' -f $W/otherhost || fatal "ssh-keygen"
printf 'localhost-with-alias,127.0.0.1,::1 ' > $OBJ/known_hosts
cat $W/otherhost.pub >> $OBJ/known_hosts
rm -f $RAN
hssh -oPort=$RPORT somehost "echo ran >> $RAN" < /dev/null &&
	fail "connected although the host key is wrong"
[ -e $RAN ] && fail "mismatch: the command ran"
has mismatch "guessed mlkem768x25519-sha256 packet sent"
grep -Eq "HOST IDENTIFICATION HAS CHANGED|Host key verification failed" $ERR ||
	fail "mismatch: no host key error: `tail -3 $ERR`"
sleep 0.5
$PY $SENT $W/capture > $W/sent
sed 1d $W/sent | tr '\n' ' ' > $W/sent.types
[ "`cat $W/sent.types`" = "20 30 " ] ||
	fail "mismatch: the client sent more than KEXINIT and its guess: `cat $W/sent`"
cp $W/kh.good $OBJ/known_hosts

# ------------------------------------------------------- stock servers
# expect NAME PORT [ssh args]: early authentication taken, no session
expect_stock() {
	n=$1 p=$2
	shift 2
	rm -f $W/out
	out=`hssh -oPort=$p "$@" somehost echo $n-ok < /dev/null` ||
		{ fail "$n: connect failed: `tail -3 $ERR`"; return; }
	[ "$out" = "$n-ok" ] || fail "$n: output $out"
	has $n "publickey request sent with SERVICE_REQUEST"
	has $n "Signing with public key at once"
	has $n "the server takes no early session"
	hasnt $n "Offering public key"
}
SPORT=`expr $PORT + 41`
if [ -n "$HPN_STOCK_TREE" ] && [ -x "$HPN_STOCK_TREE/sshd" ]; then
	verbose "$tid: stock sshd `$HPN_STOCK_TREE/sshd -V 2>&1 | cut -d, -f1`"
	other_sshd stock $HPN_STOCK_TREE/sshd $SPORT \
	    "SshdSessionPath $HPN_STOCK_TREE/sshd-session" \
	    "SshdAuthPath $HPN_STOCK_TREE/sshd-auth"
	expect_stock stock $SPORT
	# A stale record (hpnsshd answered on this port last time): the
	# guess goes, RFC 4253's rule drops it (the first host key
	# algorithms differ: a certificate's first here), the record goes.
	stop_other stock
	other_sshd hpn-on-stock-port ${REAL_SSHD} $SPORT \
	    "SshdSessionPath $SSHD_SESSION" "SshdAuthPath $SSHD_AUTH"
	hssh -oPort=$SPORT somehost true < /dev/null || fail "hpnsshd on $SPORT"
	stop_other hpn-on-stock-port
	other_sshd stock2 $HPN_STOCK_TREE/sshd $SPORT \
	    "SshdSessionPath $HPN_STOCK_TREE/sshd-session" \
	    "SshdAuthPath $HPN_STOCK_TREE/sshd-auth"
	hssh -oPort=$SPORT somehost true < /dev/null || fail "stale record: failed"
	has "stale record" "guessed mlkem768x25519-sha256 packet sent"
	has "stale record" "packet was dropped"
	hssh -oPort=$SPORT somehost true < /dev/null || fail "after a stale record"
	hasnt "after a stale record" "guessed"
	# RFC 4253's rule when the first host key algorithms match
	other_sshd hpn-again ${REAL_SSHD} `expr $SPORT + 1` \
	    "SshdSessionPath $SSHD_SESSION" "SshdAuthPath $SSHD_AUTH"
	hssh -oPort=`expr $SPORT + 1` somehost true < /dev/null || fail "record 2"
	stop_other hpn-again
	other_sshd stock3 $HPN_STOCK_TREE/sshd `expr $SPORT + 1` \
	    "SshdSessionPath $HPN_STOCK_TREE/sshd-session" \
	    "SshdAuthPath $HPN_STOCK_TREE/sshd-auth"
	hssh -oPort=`expr $SPORT + 1` -oHostKeyAlgorithms=ssh-ed25519 somehost \
	    true < /dev/null || fail "stock, matching firsts: failed"
	has "stock, matching firsts" "the server took the guessed mlkem768x25519-sha256 packet"
else
	skip_part "stock sshd" "no stock build (HPN_STOCK_TREE)"
fi
DPORT=`expr $PORT + 43`
if [ -x /usr/sbin/sshd ] && /usr/sbin/sshd -V 2>&1 | grep -q '^OpenSSH_9\.2'; then
	verbose "$tid: Debian's sshd 9.2"
	mkdir -p -m 0755 /run/sshd
	other_sshd debian /usr/sbin/sshd $DPORT
	expect_stock debian $DPORT
	# RSA keys: signed at once once server-sig-algs is known
	if [ -s $OBJ/ssh-rsa ]; then
		LL=debug3
		expect_stock debian-rsa $DPORT -i $OBJ/ssh-rsa \
		    -oIdentitiesOnly=yes
		LL=
		has debian-rsa "signing using rsa-sha2-512"
	fi
else
	skip_part "Debian's sshd 9.2" "no /usr/sbin/sshd of OpenSSH 9.2"
fi
for lib in paramiko asyncssh; do
	$PY -c "import $lib" 2>/dev/null ||
		{ skip_part "$lib server" "no python3-$lib"; continue; }
	verbose "$tid: $lib server"
	LPORT=`expr $PORT + 44`
	[ $lib = asyncssh ] && LPORT=`expr $PORT + 45`
	rm -f $W/ready.$lib
	$PY $PYSERVER $lib --addr 127.0.0.1 --port $LPORT \
	    --hostkey $OBJ/host.ssh-ed25519 --authorized $OBJ/ssh-ed25519.pub \
	    --ready $W/ready.$lib 2> $W/$lib.log &
	others="$others $!"
	waitfile $W/ready.$lib || { fail "$lib server did not start"; continue; }
	echo "$lib-data" > $W/lib-data
	out=`hssh -oPort=$LPORT -i $OBJ/ssh-ed25519 -oIdentitiesOnly=yes \
	    somehost "cat $W/lib-data" < /dev/null` ||
		{ fail "$lib: connect failed: `tail -3 $ERR`"; continue; }
	[ "$out" = "$lib-data" ] || fail "$lib: output $out"
	has $lib "publickey request sent with SERVICE_REQUEST"
	has $lib "Signing with public key at once"
	hasnt $lib "Offering public key"
done

# Dropbear's server (Debian's dropbear-bin): it reads the user's
# ~/.ssh/authorized_keys, so it runs in a mount namespace of its own with a
# directory of ours bound over that home (root only, as in tests/interop).
# Its files are outside $OBJ, which may be under that home.
DBPORT=`expr $PORT + 48`
if ! command -v dropbear > /dev/null 2>&1 || ! command -v dropbearconvert \
    > /dev/null 2>&1 || ! command -v unshare > /dev/null 2>&1; then
	skip_part "Dropbear server" "no dropbear, dropbearconvert or unshare"
elif [ "`id -u`" != "0" ] || [ "$HOME" != "/root" ]; then
	skip_part "Dropbear server" "needs root (its authorized_keys)"
else
	verbose "$tid: Dropbear server `dropbear -V 2>&1 | tail -1`"
	DB=`mktemp -d /tmp/hpn-early-db.XXXXXX` || fatal "mktemp"
	mkdir -p $DB/droot/.ssh
	chmod 700 $DB/droot $DB/droot/.ssh
	cp $OBJ/ssh-ed25519.pub $DB/droot/.ssh/authorized_keys
	chmod 600 $DB/droot/.ssh/authorized_keys
	dropbearconvert openssh dropbear $OBJ/host.ssh-ed25519 $DB/host.db \
	    > $DB/dropbear.log 2>&1 || fatal "dropbearconvert failed"
	rm -f $DB/pid.dropbear
	unshare -m sh -c 'mount --make-rprivate / && mount --bind "$0" /root &&
	    exec "$@"' $DB/droot dropbear -F -E -s -m -r $DB/host.db \
	    -p 127.0.0.1:$DBPORT -P $DB/pid.dropbear < /dev/null \
	    2>> $DB/dropbear.log &
	others="$others $!"
	if waitfile $DB/pid.dropbear; then
		echo dropbear-data > $DB/data
		rm -f $W/out
		hssh -oPort=$DBPORT -i $OBJ/ssh-ed25519 -oIdentitiesOnly=yes \
		    somehost "cat $DB/data" < /dev/null > $W/out ||
			fail "Dropbear: connect failed: `tail -3 $ERR`"
		[ "`cat $W/out`" = "dropbear-data" ] ||
			fail "Dropbear: output `cat $W/out`"
		has Dropbear "publickey request sent with SERVICE_REQUEST"
		has Dropbear "Signing with public key at once"
		has Dropbear "the server takes no early session"
		hasnt Dropbear "Offering public key"
		# its early data through scp -O (Dropbear has no sftp-server)
		rm -f $DB/db-copy
		${SCP} -O -S ${REAL_SSH} -F $OBJ/ssh_config -P $DBPORT -i $OBJ/ssh-ed25519 \
		    -oIdentitiesOnly=yes $DB/data somehost:$DB/db-copy \
		    > $ERR 2>&1 || fail "Dropbear: scp -O failed: `tail -3 $ERR`"
		cmp -s $DB/data $DB/db-copy || fail "Dropbear: scp -O copy differs"
	else
		fail "Dropbear did not start: `tail -3 $DB/dropbear.log`"
	fi
	kill `cat $DB/pid.dropbear 2>/dev/null` 2>/dev/null
	cp $DB/dropbear.log $W/ 2>/dev/null
	rm -rf $DB
	DB=""
fi

# Go's golang.org/x/crypto/ssh (tests/interop/goserver).  The test never
# fetches anything (GOPROXY=off): make deps puts the module pinned in its
# go.mod and go.sum into Go's module cache.
GOSRV=$HPN_TOP/tests/interop/goserver
goenv() {
	(cd $GOSRV && GOPROXY=off GOFLAGS="-mod=readonly -buildvcs=false" \
	    GOCACHE=$OBJ/gocache "$@")
}
if ! command -v go > /dev/null 2>&1; then
	skip_part "Go x/crypto/ssh server" "no go"
elif ! goenv go mod download > $W/go-build.log 2>&1; then
	skip_part "Go x/crypto/ssh server" "golang.org/x/crypto not in Go's module cache (make deps)"
elif ! goenv go build -o $W/goserver . >> $W/go-build.log 2>&1; then
	fail "the Go server does not build: `tail -5 $W/go-build.log`"
else
	verbose "$tid: Go x/crypto/ssh server"
	GPORT=`expr $PORT + 47`
	rm -f $W/ready.go
	$W/goserver -addr 127.0.0.1:$GPORT -hostkey $OBJ/host.ssh-ed25519 \
	    -authorized $OBJ/ssh-ed25519.pub -ready $W/ready.go 2> $W/go.log &
	others="$others $!"
	if waitfile $W/ready.go; then
		echo go-data > $W/lib-data
		out=`hssh -oPort=$GPORT -i $OBJ/ssh-ed25519 -oIdentitiesOnly=yes \
		    somehost "cat $W/lib-data" < /dev/null` ||
			fail "Go: connect failed: `tail -3 $ERR`"
		[ "$out" = "go-data" ] || fail "Go: output $out"
		has Go "publickey request sent with SERVICE_REQUEST"
		has Go "Signing with public key at once"
		has Go "the server takes no early session"
		hasnt Go "Offering public key"
	else
		fail "the Go server did not start: `cat $W/go.log`"
	fi
fi

# ------------------------------------------------- round trips in series
# Counted, not timed (other suites run beside this one): rtt-relay.py
# numbers each chunk the client sends by the round trips before it, as
# hpn-sftp-tree.sh's proxy numbers SFTP requests (max_depth); each
# direction held 0.5 s.  Load can only add to a count (a chunk that comes
# late, after one it did not wait for), never take one away: the fewer of
# two connections.  What load adds: the server's exit-status and close
# come when "true" has run; if that takes longer than the two delays, the
# client's channel EOF (sent once the channel is confirmed) has passed
# before them and the close is counted a round trip later (a CI run
# beside OpenSSH's suite counted 5 twice with 0.2 s).  The relay's trace
# of each chunk is printed when a count is over.
verbose "$tid: round trips in series"
cat $OBJ/sshd_config.orig > $OBJ/sshd_config
stop_sshd
start_sshd
rm -f $HOSTS
DLPORT=`expr $PORT + 46`
rm -f $W/relay.$DLPORT
: > $W/rtt
$PY $RTTRELAY --listen $DLPORT --to 127.0.0.1:$PORT --ready $W/relay.$DLPORT \
    --delay 0.5 --report $W/rtt --trace $W/rtt-trace 2> $W/relay.$DLPORT.err &
waitfile $W/relay.$DLPORT || fatal "the round-trip relay did not start"
others="$others `cat $W/relay.$DLPORT`"
# through ARGS: the round trips of hpnssh ARGS somehost true through the
# relay (its line for the connection comes once both ends have closed)
through() {
	_n=`wc -l < $W/rtt`
	${REAL_SSH} -F $OBJ/ssh_config -oLogLevel=error -oPort=$DLPORT \
	    "$@" somehost true < /dev/null || fail "through the relay $*: failed"
	_j=0
	while [ `wc -l < $W/rtt` -le $_n ] && [ $_j -lt 100 ]; do
		sleep 0.1
		_j=`expr $_j + 1`
	done
	sed -n "`expr $_n + 1`p" $W/rtt | awk '{ print $4 }'
}
# rtts ARGS: the fewer of two
rtts() {
	for _i in 1 2; do
		through "$@"
	done | sort -n | head -n 1
}
n_off=`rtts -oEarlySend=no`
n_first=`rtts -oEarlyHostsFile=none`
through > /dev/null		# the record for the guess
n_guess=`rtts`
verbose "$tid: round trips: EarlySend no $n_off, yes $n_first, with the guess $n_guess"
# upstream: 8 (banners, kex, service, none, query, signature, channel,
# exec); EarlySend: 3 (banners, kex, all the rest); 2 with the guess
# (banners and kex together); each + 1 for the client's answer to the
# server's close (counted 9, 4, 3 on 2026-11-28).
rtt_over() {	# rtt_over WHAT: the count is over; the relay's trace with it
	echo "the relay's chunks (conn, seconds, direction, depth, bytes):"
	cat $W/rtt-trace
	fail "$1"
}
[ -n "$n_off" ] && [ "$n_off" -ge 9 ] ||
	fail "EarlySend=no: ${n_off:-no} round trips (want 9): the relay does not count?"
[ -n "$n_first" ] && [ "$n_first" -le 4 ] ||
	rtt_over "EarlySend: ${n_first:-no} round trips in series (want 4)"
[ -n "$n_guess" ] && [ "$n_guess" -le 3 ] ||
	rtt_over "EarlySend with the guess: ${n_guess:-no} round trips (want 3)"

early_cleanup
rm -rf $W
