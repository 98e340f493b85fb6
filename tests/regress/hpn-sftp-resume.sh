#	HPN patch set: verified resume (src/xfer/resume.c) and the
#	hash-range extension of our sftp-server (src/hpn-sftp-hash.c).
#	scp -Z and sftp reget, reput, get -a, put -a, both ways: a partial
#	destination is completed and only the rest is sent; a complete one is
#	left as it is and nothing is sent; one with a flipped byte, or longer
#	than the source, is sent whole; a missing one is sent whole; a copy
#	killed with SIGKILL in its middle (one file, a tree) is finished with
#	no more than the missing part sent again, plus 1 %.  Against a server
#	without the extension -Z sends whole, -ZZ appends by size.  The
#	checksum: xxh128 where the build has libxxhash, against a server
#	without it the next one (sha256), and ResumeHash from -o and from
#	ssh_config (asked of ssh -G).  The file data moved and the algorithms
#	are seen by tests/regress/hpn-sftp-proxy.py; every result is compared
#	by SHA-256.
#	Placed in the Public Domain.

tid="hpn sftp resume"

[ -n "$HPN_TOP" ] || skip "HPN_TOP not set"
. $HPN_TOP/tests/regress/sftp-lib.sh
HASHREQ=$HPN_TOP/tests/regress/hpn-sftp-hashreq.py
W=$OBJ/hpnresume
rm -rf $W
mkdir -p $W $W/d $W/u

# file data the last run moved, either way
moved() {
	awk '$1 == "read_bytes" || $1 == "write_bytes" { n += $2 }
	    END { print n + 0 }' $W/rep
}

size() {
	stat -c %s "$1"
}

# at most MISSING + 1 % moved?
within() {
	[ "$1" -le `expr $2 + $2 / 100` ]
}

# the checksum by default: xxh128 where the build has libxxhash
XXH=
DEF=sha256
if $SSH -G -F /dev/null somehost 2>/dev/null | grep -q '^resumehash xxh128,'
then
	XXH=--xxh128
	DEF=xxh128
fi
trace "the default checksum: $DEF"

# the algorithms the last run offered and the server used
hash_seen() {
	awk -v k=hash_$1 '$1 == k { print $2 }' $W/rep
}

# --- the extension itself
verbose "$tid: sftp-server's hash-range extension ($DEF first)"
head -c 5000000 /dev/urandom > $W/h
for how in "" "--read-only:-R" "--refused:-P hash-range" \
    "--refused:-p open,close,read,lstat,stat,fstat"; do
	opt="$XXH ${how%%:*}"
	sopt=
	[ "$how" = "${how#*:}" ] || sopt=${how#*:}
	$PY $HASHREQ $opt $W/h $SFTPSERVER $sopt > $W/out 2>&1 ||
		fail "hash-range $opt $sopt: `grep -v '^ok' $W/out | tail -n 3`"
	trace "hash-range $sopt: `tr '\n' ';' < $W/out`"
done

head -c 6000000 /dev/urandom > $W/big
BIG=`size $W/big`
w=`mkserver ours $PY $PROXY --report $W/rep --delay 0 -- $SFTPSERVER`

# copy HOW SERVER: resume $W/big into $W/d/big (down) or $W/u/big (up)
copy() {
	rm -f $W/rep
	case $1 in
	scp-down) ${SCP} -Z -D $2 somehost:$W/big $W/d/big ;;
	scp-up) ${SCP} -Z -D $2 $W/big somehost:$W/u/big ;;
	scp-down-size) ${SCP} -ZZ -D $2 somehost:$W/big $W/d/big ;;
	scp-up-size) ${SCP} -ZZ -D $2 $W/big somehost:$W/u/big ;;
	reget) batch "reget $W/big $W/d/big"
		${SFTP} -D $2 -b $W/batch ;;
	reput) batch "reput $W/big $W/u/big"
		${SFTP} -D $2 -b $W/batch ;;
	get-a) batch "get -a $W/big $W/d/big"
		${SFTP} -D $2 -b $W/batch ;;
	put-a) batch "put -a $W/big $W/u/big"
		${SFTP} -D $2 -b $W/batch ;;
	esac > $W/out 2>&1 || fail "$1: failed: `cat $W/out`"
	waitrep "$1"
}

dest() {
	case $1 in
	*down*|reget|get-a) echo $W/d/big ;;
	*) echo $W/u/big ;;
	esac
}

# check HOW WHAT MESSAGE MAX: the result whole, MESSAGE said, at most MAX
# bytes moved (MAX -: at least the whole file)
check() {
	cmp -s $W/big `dest $1` || fail "$1, $2: the result differs"
	[ -z "$3" ] || grep -q "$3" $W/out ||
		fail "$1, $2: no \"$3\": `cat $W/out`"
	m=`moved`
	trace "$1, $2: $m bytes moved"
	if [ "$4" = "-" ]; then
		[ $m -ge $BIG ] || fail "$1, $2: $m bytes moved, not all"
	else
		within $m $4 || fail "$1, $2: $m bytes moved, more than $4 + 1 %"
	fi
}

for how in scp-down scp-up reget reput get-a put-a; do
	verbose "$tid: $how"
	D=`dest $how`

	rm -f $D
	head -c 2000000 $W/big > $D
	copy $how $w
	check $how "partial" "matches: resuming at 2000000" `expr $BIG - 2000000`

	copy $how $w
	check $how "complete" "already complete" 0

	head -c 3000000 $W/big > $D
	flip $D 1500000
	copy $how $w
	check $how "a flipped byte" "differ from the source" -

	head -c 1000 /dev/urandom >> $D
	copy $how $w
	check $how "longer" "longer than the source" -

	rm -f $D
	copy $how $w
	check $how "missing" "" -
done

# --- the checksum: ours first, the next one where the server lacks it
verbose "$tid: $DEF by default; a server without xxh128 gets sha256"
lacks=`mkserver lacks $PY $PROXY --report $W/rep --delay 0 \
    --hash-lacks xxh128 -- $SFTPSERVER`
for how in scp-down scp-up; do
	D=`dest $how`
	head -c 2000000 $W/big > $D
	copy $how $w
	check $how "default checksum" "$DEF of the 2000000 bytes there matches" \
	    `expr $BIG - 2000000`
	[ "`hash_seen used`" = $DEF ] ||
		fail "$how: the server used `hash_seen used`, not $DEF"
	if [ -n "$XXH" ]; then
		[ "`hash_seen offered`" = "xxh128,sha256,blake2b512" ] ||
		    fail "$how: offered `hash_seen offered`"
	fi

	head -c 2000000 $W/big > $D
	copy $how $lacks
	check $how "a server without xxh128" \
	    "sha256 of the 2000000 bytes there matches" `expr $BIG - 2000000`
	[ "`hash_seen used`" = sha256 ] ||
		fail "$how, no xxh128: the server used `hash_seen used`"

	head -c 3000000 $W/big > $D
	flip $D 2500000
	copy $how $lacks
	check $how "no xxh128, a flipped byte" "differ from the source (sha256)" -
done

# --- a server without the extension
if [ -n "$HPN_STOCK_TREE" ] && [ -x "$HPN_STOCK_TREE/sftp-server" ]; then
	verbose "$tid: a server without hash-range"
	s=`mkserver stock $PY $PROXY --report $W/rep --delay 0 -- \
	    $HPN_STOCK_TREE/sftp-server`
	for how in scp-down scp-up; do
		D=`dest $how`
		head -c 2000000 $W/big > $D
		copy $how $s
		check $how "stock server" "cannot be verified: sending it whole" -
		head -c 2000000 $W/big > $D
		copy $how-size $s
		check $how "stock server, -ZZ" "by size alone (not verified)" \
		    `expr $BIG - 2000000`
	done
	head -c 2000000 $W/big > $W/d/big
	rm -f $W/rep
	batch "get -aa $W/big $W/d/big"
	${SFTP} -D $s -b $W/batch > $W/out 2>&1 || fail "get -aa: `cat $W/out`"
	waitrep "get -aa"
	check get-a "stock server, get -aa" "by size alone" `expr $BIG - 2000000`
else
	skip_part "stock sftp-server" "no stock build (HPN_STOCK_TREE)"
fi

# --- interrupted with SIGKILL, then resumed
# killed HOW DEST SIZE: start a slow copy, SIGKILL it once DEST holds
# SIZE bytes (bounded: 30 s), leave what it wrote
slow=`mkserver slow $PY $PROXY --report $W/rep --delay 0 --rate 2000000 \
    -- $SFTPSERVER`
killed() {
	rm -f $W/rep
	case $1 in
	down) ${SCP} -D $slow somehost:$W/big $W/d/big ;;
	up) ${SCP} -D $slow $W/big somehost:$W/u/big ;;
	tree-down) ${SCP} -r -D $slow somehost:$W/tree $W/d ;;
	tree-up) ${SCP} -r -D $slow $W/tree somehost:$W/u ;;
	esac > $W/out 2>&1 &
	pid=$!
	_i=0
	while [ $_i -lt 300 ] && kill -0 $pid 2>/dev/null; do
		[ `du -sb $2 2>/dev/null | cut -f1` -ge $3 ] 2>/dev/null && break
		sleep 0.1
		_i=`expr $_i + 1`
	done
	kill -9 $pid 2>/dev/null || fail "$1: finished before it was killed"
	wait $pid 2>/dev/null
	waitrep "$1, killed"	# the server has written all it got
}

for how in down up; do
	verbose "$tid: scp $how killed with SIGKILL, then -Z"
	D=`dest scp-$how`
	rm -f $D
	killed $how $D 2000000
	have=`size $D`
	trace "$how: killed with $have of $BIG bytes there"
	[ $have -lt $BIG ] || fail "$how: the killed copy was complete"
	copy scp-$how $w
	check scp-$how "after SIGKILL" "resuming at $have" `expr $BIG - $have`
done

# a tree: finished files skipped, partial ones completed
mkdir -p $W/tree/sub
i=0
while [ $i -lt 8 ]; do
	i=`expr $i + 1`
	head -c 700000 /dev/urandom > $W/tree/f$i
	head -c 300000 /dev/urandom > $W/tree/sub/g$i
done
TREE=`du -sb $W/tree | cut -f1`
for how in down up; do
	verbose "$tid: scp -r $how of a tree killed with SIGKILL, then -Z"
	case $how in
	down) D=$W/d/tree; rm -rf $D ;;
	up) D=$W/u/tree; rm -rf $D ;;
	esac
	killed tree-$how $D 3000000
	have=`du -sb $D | cut -f1`
	rm -f $W/rep
	case $how in
	down) ${SCP} -Z -r -D $w somehost:$W/tree $W/d ;;
	up) ${SCP} -Z -r -D $w $W/tree somehost:$W/u ;;
	esac > $W/out 2>&1 || fail "tree $how -Z: `cat $W/out`"
	waitrep "tree $how -Z"
	same $W/tree $D "tree $how after SIGKILL"
	m=`moved`
	# du counts the directories' own sizes too: a little slack
	missing=`expr $TREE - $have + 65536`
	trace "tree $how: $have of $TREE bytes there, $m moved"
	within $m $missing || fail "tree $how: $m bytes moved, $missing missing"
	grep -q "already complete" $W/out ||
		fail "tree $how: no finished file skipped: `cat $W/out`"
done

# --- through sshd, whose internal-sftp hashes too
verbose "$tid: scp -Z through sshd and its internal-sftp"
cp $OBJ/sshd_proxy $OBJ/sshd_proxy.resume
grep -iv '^[[:space:]]*Subsystem' $OBJ/sshd_proxy.resume > $OBJ/sshd_proxy
echo "Subsystem sftp internal-sftp" >> $OBJ/sshd_proxy
for how in down up; do
	D=`dest scp-$how`
	head -c 2000000 $W/big > $D
	case $how in
	down) ${SCP} -Z -S $SSH -F $OBJ/ssh_proxy somehost:$W/big $D ;;
	up) ${SCP} -Z -S $SSH -F $OBJ/ssh_proxy $W/big somehost:$D ;;
	esac > $W/out 2>&1 || fail "scp -Z $how via sshd: `cat $W/out`"
	cmp -s $W/big $D || fail "scp -Z $how via sshd: the result differs"
	grep -q "matches: resuming at 2000000" $W/out ||
		fail "scp -Z $how via sshd: not resumed: `cat $W/out`"
done

# ResumeHash: from the command line, and from ssh_config (ssh -G), where
# Host applies; a bad one stops ssh
verbose "$tid: ResumeHash, through ssh -G"
cp $OBJ/ssh_proxy $OBJ/ssh_proxy.rh
printf 'Host somehost\n\tResumeHash blake2b512,sha256\n' >> $OBJ/ssh_proxy.rh
for how in "-oResumeHash=sha256:sha256:ssh_proxy" \
    "-oResumeHash=blake2b512,sha256:blake2b512:ssh_proxy" \
    ":blake2b512:ssh_proxy.rh" "-oResumeHash=sha256:sha256:ssh_proxy.rh"; do
	o=${how%%:*}
	want=`echo $how | cut -d: -f2`
	cf=${how##*:}
	D=`dest scp-down`
	head -c 2000000 $W/big > $D
	${SCP} -Z $o -S $SSH -F $OBJ/$cf somehost:$W/big $D > $W/out 2>&1 ||
		fail "scp -Z $o -F $cf: `cat $W/out`"
	cmp -s $W/big $D || fail "scp -Z $o -F $cf: the result differs"
	grep -q "$want of the 2000000 bytes there matches" $W/out ||
		fail "scp -Z $o -F $cf: not by $want: `cat $W/out`"
done
batch "reget $W/big $W/d/big"
head -c 2000000 $W/big > $W/d/big
${SFTP} -S $SSH -F $OBJ/ssh_proxy.rh -b $W/batch somehost > $W/out 2>&1 ||
	fail "sftp reget -F ssh_proxy.rh: `cat $W/out`"
cmp -s $W/big $W/d/big || fail "sftp reget -F ssh_proxy.rh: the result differs"
grep -q "blake2b512 of the 2000000 bytes there matches" $W/out ||
	fail "sftp reget -F ssh_proxy.rh: not by blake2b512: `cat $W/out`"
${SCP} -Z -oResumeHash=md5 -S $SSH -F $OBJ/ssh_proxy somehost:$W/big $D \
    > $W/out 2>&1 && fail "scp -Z -oResumeHash=md5: accepted"
grep -q 'Bad resumehash.*unknown algorithm "md5"' $W/out ||
	fail "scp -Z -oResumeHash=md5: `cat $W/out`"
cp $OBJ/sshd_proxy.resume $OBJ/sshd_proxy

# --- what -Z does not do
verbose "$tid: -ZZ outside the SFTP protocol"
${SCP} -O -ZZ $W/big somehost:$W/u/x > $W/out 2>&1 &&
	fail "scp -O -ZZ: accepted"
grep -q "SFTP protocol only" $W/out || fail "scp -O -ZZ: `cat $W/out`"

rm -rf $W
