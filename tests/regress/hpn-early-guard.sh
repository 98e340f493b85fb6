#	HPN patch set: EarlySend held to upstream's guarantees (issue 44).
#	Each case failed on the code before the fix:
#	 1. a server's KEX_ECDH_REPLY before its KEXINIT, after a guessed
#	    key exchange, signed with the host key the client knows: the
#	    reply's handler ran with no method agreed (a heap overflow, then
#	    SIGSEGV); now it is a protocol error, as upstream's;
#	 2. the server's EXT_INFO held back by a relay: the first signature
#	    was made without it ("publickey", not publickey-hostbound);
#	 3. a refused login took standard input from a pipe, which the
#	    next command of a script then missed (also with a password
#	    after the key, and with AuthenticationMethods publickey,password);
#	 4. a FIFO (or a device) as EarlyHostsFile blocked the client.
#	Placed in the Public Domain.

tid="hpn early set-up: guards"

PY=/usr/bin/python3
[ -x $PY ] || PY=`command -v python3`
[ -n "$PY" ] || fatal "no python3"
RELAY=$HPN_TOP/tests/regress/hpn-early-relay.py
KEXORDER=$HPN_TOP/tests/regress/hpn-early-kexorder.py
. $HPN_TOP/tests/lib/skips.sh
. $HPN_TOP/tests/lib/sanitizer.sh

W=$OBJ/hpneg
rm -rf $W
mkdir -p $W
ERR=$W/err
HOSTS=$OBJ/hpn_early_hosts

others=""
guard_cleanup() {
	for p in $others; do
		kill $p 2>/dev/null
	done
	others=""
}
trap guard_cleanup EXIT

cp $OBJ/sshd_config $OBJ/sshd_config.orig
start_sshd

. $HPN_TOP/tests/regress/early-lib.sh
# restart_sshd [sshd_config lines...]: test-exec's configuration plus these
restart_sshd() {
	cat $OBJ/sshd_config.orig > $OBJ/sshd_config
	for l in "$@"; do
		echo "$l" >> $OBJ/sshd_config
	done
	stop_sshd
	start_sshd
}
# signalled STATUS: was it a signal's (a crash), not an exit?
signalled() {
	[ "$1" -gt 128 ] && [ "$1" -ne 255 ]
}

# ----------------------------------------- 1. a reply before the KEXINIT
KPORT=`expr $PORT + 50`
for mode in first kexinit; do
	verbose "$tid: KEX_ECDH_REPLY before the server's KEXINIT ($mode)"
	rm -f $W/ready.k $W/kex.out
	$PY $KEXORDER --port $KPORT --hostkey $OBJ/host.ssh-rsa \
	    --ready $W/ready.k --mode $mode --record $W/kexhosts \
	    --name "[127.0.0.1]:$KPORT" > $W/kex.out 2> $W/kex.err &
	kpid=$!
	others="$others $kpid"
	waitfile $W/ready.k || { fail "$mode: the scripted server did not start"; continue; }
	san_mark $W/san
	hssh -oPort=$KPORT -oEarlyHostsFile=$W/kexhosts \
	    -oKexAlgorithms=curve25519-sha256 \
	    -oHostKeyAlgorithms=rsa-sha2-256 -oBatchMode=yes somehost true \
	    < /dev/null
	rc=$?
	wait $kpid
	signalled $rc && fail "$mode: the client was killed by signal `expr $rc - 128`"
	[ $rc -eq 255 ] || fail "$mode: the client exited $rc, not 255"
	# a sanitizer build reports to stderr or to files (log_path)
	grep -q "Sanitizer" $ERR && fail "$mode: `grep -A3 Sanitizer $ERR`"
	r=`san_since $W/san`
	[ -z "$r" ] || fail "$mode: sanitizer reports: `cat $r | head -5`"
	# not vacuous: the guess went, and the reply came before the KEXINIT
	has $mode "KEXINIT and a guessed curve25519-sha256 packet sent"
	has $mode "kex_protocol_error: type 31 seq 0"
	r=`grep '^RESULT' $W/kex.out`
	case $mode in
	first)
		# UNIMPLEMENTED for the reply; never NEWKEYS
		[ "$r" = "RESULT types=3" ] ||
			fail "$mode: the client sent $r (want UNIMPLEMENTED only)"
		hasnt $mode "SSH2_MSG_KEX_ECDH_REPLY received" ;;
	kexinit)
		# then the key exchange in order completes: NEWKEYS
		[ "$r" = "RESULT types=3,21" ] ||
			fail "$mode: the client sent $r (want UNIMPLEMENTED, NEWKEYS)"
		has $mode "the server took the guessed curve25519-sha256 packet" ;;
	esac
done

# ----------------------------------------- 2. EXT_INFO behind NEWKEYS
# The relay holds back what follows the server's NEWKEYS (its EXT_INFO)
# 0.5 s: the first request must still be publickey-hostbound, signed with
# server-sig-algs known.
verbose "$tid: the server's EXT_INFO late"
RPORT=`expr $PORT + 51`
rm -f $W/relay.r
$PY $RELAY --listen $RPORT --to 127.0.0.1:$PORT --delay 0 \
    --hold-after-newkeys 0.5 --ready $W/relay.r 2> $W/relay.err &
others="$others $!"
waitfile $W/relay.r || fatal "the relay did not start"
for key in ssh-ed25519 ssh-rsa; do
	[ -s $OBJ/$key ] || { skip_part "$key, EXT_INFO late" "no $key key"; continue; }
	fresh_log
	rm -f $HOSTS
	LL=debug3
	out=`hssh -oPort=$RPORT -i $OBJ/$key -oIdentitiesOnly=yes somehost \
	    echo late-ok < /dev/null`
	LL=
	[ "$out" = "late-ok" ] || fail "$key, EXT_INFO late: output '$out': `tail -3 $ERR`"
	has "$key, EXT_INFO late" "waiting for the server's EXT_INFO"
	has "$key, EXT_INFO late" "publickey request sent with SERVICE_REQUEST"
	has "$key, EXT_INFO late" "Signing with public key at once"
	grep -q "method publickey-hostbound-v00@openssh.com" $TEST_SSHD_LOGFILE ||
		fail "$key, EXT_INFO late: not signed for publickey-hostbound: `grep 'userauth-request' $TEST_SSHD_LOGFILE`"
	grep -Eq "method publickey( |$)" $TEST_SSHD_LOGFILE &&
		fail "$key, EXT_INFO late: a plain publickey request came"
done
[ "$key" = ssh-rsa ] && has "ssh-rsa, EXT_INFO late" "signing using rsa-sha2-"

# ----------------------------------------- 3. standard input kept
printf 'abc\n' > $W/abc
# stdin_case NAME [ssh args]: a refused login leaves a pipe, and a file,
# as they were: the next command reads what hpnssh did not take
stdin_case() {
	n=$1
	shift
	out=`printf 'abc\n' | { hssh "$@" somehost cat; cat; }`
	[ "$out" = "abc" ] || fail "$n: a pipe: the next command read '$out', not 'abc'"
	out=`{ hssh "$@" somehost cat; cat; } < $W/abc`
	[ "$out" = "abc" ] || fail "$n: a file: the next command read '$out', not 'abc'"
}
${SSHKEYGEN} -q -t ed25519 -N '' -f $W/refused || fatal "ssh-keygen"
grep -iv '^[[:space:]]*IdentityFile' $OBJ/ssh_config > $W/ssh_config.i
CFG=$W/ssh_config.i

verbose "$tid: a refused key: standard input left unread"
stdin_case "refused key" -oBatchMode=yes -i $W/refused -oIdentitiesOnly=yes
has "refused key" "Permission denied"

# a password after the key, refused too (SSH_ASKPASS says a wrong one)
cat > $W/askpass <<EOF
#!/bin/sh
echo not-the-password
EOF
chmod 755 $W/askpass
verbose "$tid: a refused key, then a wrong password"
restart_sshd "PasswordAuthentication yes" "KbdInteractiveAuthentication no"
SSH_ASKPASS=$W/askpass SSH_ASKPASS_REQUIRE=force DISPLAY= \
    stdin_case "key, then password" -i $W/refused -oIdentitiesOnly=yes \
    -oPreferredAuthentications=publickey,password -oNumberOfPasswordPrompts=1 \
    -oPasswordAuthentication=yes
has "key, then password" "Permission denied"

verbose "$tid: publickey,password: the key takes, the password does not"
restart_sshd "PasswordAuthentication yes" "KbdInteractiveAuthentication no" \
    "AuthenticationMethods publickey,password"
SSH_ASKPASS=$W/askpass SSH_ASKPASS_REQUIRE=force DISPLAY= \
    stdin_case "publickey,password" -i $OBJ/ssh-ed25519 -oIdentitiesOnly=yes \
    -oPreferredAuthentications=publickey,password -oNumberOfPasswordPrompts=1 \
    -oPasswordAuthentication=yes
has "publickey,password" "partial success"
has "publickey,password" "Signing with public key at once"
restart_sshd
CFG=

verbose "$tid: a pipe goes once authenticated, a file early"
dd if=/dev/urandom of=$W/in bs=1024 count=300 2>/dev/null
cat $W/in | hssh somehost "cat > $W/out" || fail "a pipe: failed"
cmp -s $W/in $W/out || fail "a pipe: data differ"
has "pipe" "the session (channel 0) and 0 bytes of its input"
has "pipe" "standard input is not a regular file: it is read once authenticated"
hssh somehost "cat > $W/out" < $W/in || fail "a file: failed"
cmp -s $W/in $W/out || fail "a file: data differ"
has "file" "the session (channel 0) and 307200 bytes of its input"
# past the early cap: the channel reads on just past what went early
dd if=/dev/urandom of=$W/big bs=1024 count=1536 2>/dev/null
hssh somehost "cat > $W/out" < $W/big || fail "a larger file: failed"
cmp -s $W/big $W/out || fail "a larger file: data lost or doubled"
has "larger file" "the session (channel 0) and 1048576 bytes of its input"
# a refused key, then one that is taken: the data whole, once
CFG=$W/ssh_config.i
cat $W/in | hssh -i $W/refused -i $OBJ/ssh-ed25519 -oIdentitiesOnly=yes \
    somehost "cat > $W/out" || fail "second key, pipe: failed"
cmp -s $W/in $W/out || fail "second key, pipe: data lost or doubled"
hssh -i $W/refused -i $OBJ/ssh-ed25519 -oIdentitiesOnly=yes \
    somehost "cat > $W/out" < $W/big || fail "second key, file: failed"
cmp -s $W/big $W/out || fail "second key, file: data lost or doubled"
has "second key, file" "the server dropped the early session"
CFG=

verbose "$tid: HPNSSH_EARLY_INPUT=own: a pipe goes early; hpnssh's children lack it"
cat $W/in | HPNSSH_EARLY_INPUT=own hssh -oPermitLocalCommand=yes \
    -oLocalCommand="echo \"[\$HPNSSH_EARLY_INPUT]\" > $W/lc" somehost \
    "cat > $W/out" || fail "own pipe: failed"
cmp -s $W/in $W/out || fail "own pipe: data differ"
has "own pipe" "the session (channel 0) and [1-9][0-9]* bytes of its input"
[ "`cat $W/lc 2>/dev/null`" = "[]" ] ||
	fail "LocalCommand saw HPNSSH_EARLY_INPUT: `cat $W/lc 2>/dev/null`"

verbose "$tid: hpnsftp's and hpnscp's pipes still go early"
echo "get $W/abc $W/abc.down" > $W/batch
rm -f $W/abc.down
${SFTP} -S ${REAL_SSH} -F $OBJ/ssh_config -v -b $W/batch somehost \
    > /dev/null 2> $ERR || fail "sftp: failed"
cmp -s $W/abc $W/abc.down || fail "sftp: data differ"
has sftp "the session (channel 0) and [1-9][0-9]* bytes of its input"
rm -f $W/abc.up
${SCP} -S ${REAL_SSH} -F $OBJ/ssh_config -v $W/abc somehost:$W/abc.up \
    2> $ERR || fail "scp: failed"
cmp -s $W/abc $W/abc.up || fail "scp: data differ"
has scp "the session (channel 0) and [1-9][0-9]* bytes of its input"

# ----------------------------------------- 4. EarlyHostsFile not a file
verbose "$tid: a FIFO and a device as EarlyHostsFile"
rm -f $W/fifo
mkfifo $W/fifo || fatal "mkfifo"
for f in $W/fifo /dev/zero; do
	# bounded: the old code blocked on the FIFO for ever
	timeout 30 ${REAL_SSH} -F $OBJ/ssh_config -oLogLevel=debug1 \
	    -oEarlyHostsFile=$f somehost true < /dev/null 2> $ERR
	rc=$?
	[ $rc -eq 124 ] && fail "EarlyHostsFile $f: the client hung"
	[ $rc -eq 0 ] || fail "EarlyHostsFile $f: exit $rc: `tail -3 $ERR`"
	has "EarlyHostsFile $f" "is not a regular file of at most"
done
[ -p $W/fifo ] || fail "the FIFO was replaced"

guard_cleanup
rm -rf $W
