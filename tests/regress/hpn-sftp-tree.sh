#	HPN patch set: the SFTP transfer engine (src/xfer/).  Trees
#	and many files with scp -r, scp with several sources, sftp put/get -r
#	and globs in batch mode, against our sftp-server, the stock build's,
#	Debian's and paramiko's; -p; an unreadable file and a full disk in the
#	middle of a tree; names a server must not send; the server's handle
#	limit; round trips in series for one file; Ctrl-C.  Every tree is
#	compared by the SHA-256 of every file.  The checks of the engine's own
#	behaviour (several files in flight, round trips) fail with upstream's
#	clients: HPN_TREE_CLIENTS=/path/to/stock/build runs its scp and sftp.
#	Placed in the Public Domain.

tid="hpn sftp tree"

if [ -n "$HPN_TREE_CLIENTS" ]; then
	SCP=$HPN_TREE_CLIENTS/scp
	SFTP=$HPN_TREE_CLIENTS/sftp
	verbose "$tid: clients from $HPN_TREE_CLIENTS"
fi

[ -n "$HPN_TOP" ] || skip "HPN_TOP not set"
. $HPN_TOP/tests/regress/sftp-lib.sh
PMKO=$HPN_TOP/tests/regress/hpn-sftp-paramiko.py
W=$OBJ/hpntree
NL='
'
umount $W/full 2>/dev/null
rm -rf $W
mkdir -p $W

mktree() {
	mkdir -p $1/a/b/c $1/empty $1/a/empty2 "$1/with space"
	: > $1/zero
	: > $1/a/b/c/zero2
	printf x > $1/one
	# one request and a byte over: ours and OpenSSH's, paramiko's
	head -c 261120 /dev/urandom > $1/a/r255k
	head -c 261121 /dev/urandom > $1/a/r255k1
	head -c 32768 /dev/urandom > $1/a/b/r32k
	head -c 32769 /dev/urandom > $1/a/b/r32k1
	head -c 3000000 /dev/urandom > $1/a/b/big
	printf sp > "$1/with space/a file"
	printf nl > "$1/a/new${NL}line"
	for _i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		head -c `expr $_i \* 1500` /dev/urandom > $1/a/b/c/f$_i
	done
}

SRC=$W/src
mktree $SRC

# ours, and ours without tree@ (-P tree: each directory listed by itself)
servers="ours notree"
SRV_ours=$SFTPSERVER
SRV_notree=`mkserver notree $SFTPSERVER -P tree`
if [ -n "$HPN_STOCK_TREE" ] && [ -x "$HPN_STOCK_TREE/sftp-server" ]; then
	servers="$servers stock"
	SRV_stock=$HPN_STOCK_TREE/sftp-server
else
	skip_part "stock sftp-server" "no stock build (HPN_STOCK_TREE)"
fi
if [ -x /usr/lib/openssh/sftp-server ]; then
	servers="$servers debian"
	SRV_debian=/usr/lib/openssh/sftp-server
else
	skip_part "Debian's sftp-server" "no /usr/lib/openssh/sftp-server"
fi
if $PY -c 'import paramiko' 2>/dev/null; then
	servers="$servers paramiko"
	SRV_paramiko=`mkserver paramiko $PY $PMKO`
else
	skip_part "paramiko's sftp server" "no python3-paramiko"
fi

# --- a tree is a directory's listing: where sftp-server -P denies
# "opendir" or "readdir", it offers no tree@ and answers none, and a
# recursive download fails as upstream's does (no name listed, no file)
for deny in opendir readdir; do
	verbose "$tid: sftp-server -P $deny: no tree either"
	w=`mkserver deny $SFTPSERVER -P $deny`
	rm -rf $W/deny
	mkdir -p $W/deny
	${SCP} -r -D $w somehost:$SRC $W/deny/ > $W/out 2>&1 &&
		fail "-P $deny: scp -r down succeeded"
	n=`find $W/deny -type f | wc -l`
	[ "$n" -eq 0 ] || fail "-P $deny: $n files copied"
	$PY - $SFTPSERVER -P $deny <<'PYEOF' > $W/out 2>&1 ||
import struct, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE)
def send(b):
    p.stdin.write(struct.pack(">I", len(b)) + b)
    p.stdin.flush()
def recv():
    n = struct.unpack(">I", p.stdout.read(4))[0]
    return p.stdout.read(n)
def s(b):
    return struct.pack(">I", len(b)) + b
send(b"\x01" + struct.pack(">I", 3))
v = recv()
if b"tree@hpn-patch-set.invalid" in v:
    sys.exit("tree@ offered")
send(b"\xc8" + struct.pack(">I", 7) + s(b"tree@hpn-patch-set.invalid") +
     s(b"/") + struct.pack(">I", 64))
r = recv()
if r[0] != 101 or struct.unpack(">I", r[5:9])[0] != 3:
    sys.exit("tree answered: type %d %r" % (r[0], r[5:9]))
p.stdin.close()
p.wait(10)
PYEOF
		fail "-P $deny: `cat $W/out`"
done
rm -rf $W/deny

# --- trees and several files, every server
for s in $servers; do
	eval srv=\$SRV_$s
	verbose "$tid: $s server: sftp put -r, get -r"
	D=$W/d-$s
	rm -rf $D
	mkdir -p $D
	batch "put -r $SRC $D/up" "get -r $D/up $D/down"
	${SFTP} -D $srv -b $W/batch > $W/out 2>&1 ||
		fail "$s: sftp put -r / get -r failed: `cat $W/out`"
	same $SRC $D/up "$s: sftp put -r"
	same $SRC $D/down "$s: sftp get -r"

	verbose "$tid: $s server: sftp put and get of globs"
	mkdir -p $D/mput $D/mget
	batch "put $SRC/a/b/c/f* $D/mput" "get $SRC/a/b/c/f1* $D/mget"
	${SFTP} -D $srv -b $W/batch > $W/out 2>&1 ||
		fail "$s: sftp put/get of globs failed: `cat $W/out`"
	for f in $SRC/a/b/c/f*; do
		cmp -s $f $D/mput/`basename $f` ||
			fail "$s: sftp put glob: `basename $f` differs"
	done
	for f in $SRC/a/b/c/f1*; do
		cmp -s $f $D/mget/`basename $f` ||
			fail "$s: sftp get glob: `basename $f` differs"
	done
	n=`ls $D/mget | wc -l`
	[ "$n" -eq 11 ] || fail "$s: sftp get f1*: $n files, not 11"

	verbose "$tid: $s server: scp of one file (its first bytes with INIT)"
	mkdir -p $D/one
	head -c 5000000 /dev/zero > $D/one/longer
	for t in $D/one/ $D/one/named $D/one/longer; do
		${SCP} -D $srv $SRC/a/b/big somehost:$t > $W/out 2>&1 ||
			fail "$s: scp of one file to $t failed: `cat $W/out`"
	done
	for f in big named longer; do
		cmp -s $SRC/a/b/big $D/one/$f ||
			fail "$s: scp of one file: $f differs"
	done

	verbose "$tid: $s server: scp -r both ways, several sources, globs"
	${SCP} -D $srv -r $SRC somehost:$D/scpup > $W/out 2>&1 ||
		fail "$s: scp -r upload failed: `cat $W/out`"
	same $SRC $D/scpup "$s: scp -r upload"
	${SCP} -D $srv -r somehost:$SRC $D/scpdown > $W/out 2>&1 ||
		fail "$s: scp -r download failed: `cat $W/out`"
	same $SRC $D/scpdown "$s: scp -r download"
	mkdir -p $D/multi $D/glob
	${SCP} -D $srv -r $SRC/one $SRC/zero $SRC/a "$SRC/with space" \
	    somehost:$D/multi > $W/out 2>&1 ||
		fail "$s: scp with several sources failed: `cat $W/out`"
	for f in one zero; do
		cmp -s $SRC/$f $D/multi/$f ||
			fail "$s: scp several sources: $f differs"
	done
	for f in a "with space"; do
		same "$SRC/$f" "$D/multi/$f" "$s: scp several sources: $f"
	done
	${SCP} -D $srv "somehost:$SRC/a/b/c/f*" $D/glob > $W/out 2>&1 ||
		fail "$s: scp glob download failed: `cat $W/out`"
	for f in $SRC/a/b/c/f*; do
		cmp -s $f $D/glob/`basename $f` ||
			fail "$s: scp glob download: `basename $f` differs"
	done
	n=`ls $D/glob | wc -l`
	[ "$n" -eq 20 ] || fail "$s: scp glob download: $n files, not 20"
	rm -rf $D
done

# --- -p: modes and times, both ways
verbose "$tid: -p keeps modes and times"
P=$W/psrc
mktree $P
chmod 0640 $P/one
chmod 0600 $P/a/r255k
chmod 0750 $P/a/b
chmod 0700 $P/empty
find $P -exec touch -h -d "2001-02-03 04:05:06" {} +
touch -d "2005-06-07 08:09:10" $P/a/b/big
modes() {
	(cd "$1" && find . -exec stat -c '%n %a %Y' {} + | LC_ALL=C sort)
}
D=$W/p
mkdir -p $D
${SCP} -D $SFTPSERVER -p -r $P somehost:$D/up > $W/out 2>&1 ||
	fail "scp -p -r upload failed: `cat $W/out`"
${SCP} -D $SFTPSERVER -p -r somehost:$P $D/down > $W/out 2>&1 ||
	fail "scp -p -r download failed: `cat $W/out`"
batch "put -pr $P $D/sup" "get -pr $P $D/sdown"
${SFTP} -D $SFTPSERVER -b $W/batch > $W/out 2>&1 ||
	fail "sftp put -pr / get -pr failed: `cat $W/out`"
modes $P > $W/modes.src
for d in up down sup sdown; do
	same $P $D/$d "-p $d"
	modes $D/$d > $W/modes.dst
	cmp -s $W/modes.src $W/modes.dst || {
		fail "-p $d: modes or times differ"
		diff $W/modes.src $W/modes.dst | head -n 10
	}
done
rm -rf $D $P

# --- an unreadable file in the middle: the rest copied, status, its name
# root reads anything: without CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH not
asuser=""
if [ "`id -u`" = 0 ]; then
	if command -v setpriv >/dev/null; then
		asuser="setpriv --bounding-set=-dac_override,-dac_read_search"
	else
		asuser=none
	fi
fi
if [ "$asuser" = none ]; then
	skip_part "unreadable files" "root without setpriv"
else
	verbose "$tid: an unreadable file in the middle of a tree"
	U=$W/usrc
	mktree $U
	head -c 5000 /dev/urandom > $U/a/b/secret
	chmod 000 $U/a/b/secret
	cp -a $U $W/uwant
	rm -f $W/uwant/a/b/secret
	D=$W/u
	mkdir -p $D
	for how in scp-up scp-down sftp-up sftp-down; do
		case $how in
		scp-up) $asuser ${SCP} -D $SFTPSERVER -r $U somehost:$D/$how ;;
		scp-down) $asuser ${SCP} -D $SFTPSERVER -r somehost:$U $D/$how ;;
		sftp-up) batch "put -r $U $D/$how"
			$asuser ${SFTP} -D $SFTPSERVER -b $W/batch ;;
		sftp-down) batch "get -r $U $D/$how"
			$asuser ${SFTP} -D $SFTPSERVER -b $W/batch ;;
		esac > $W/out 2>&1 && fail "$how: unreadable file: status 0"
		grep -q "a/b/secret" $W/out ||
			fail "$how: no message naming the file: `cat $W/out`"
		rm -f $D/$how/a/b/secret	# what upstream leaves (empty)
		same $W/uwant $D/$how "$how: the rest of the tree"
	done
	chmod 600 $U/a/b/secret
	rm -rf $D $U $W/uwant
fi

# --- a destination that runs out of space (a 1 MiB tmpfs)
F=$W/full
mkdir -p $F $W/fsrc
for i in 1 2 3 4 5 6 7 8; do
	head -c 300000 /dev/urandom > $W/fsrc/f$i
done
if [ "`id -u`" != 0 ]; then
	skip_part "a full disk" "a tmpfs of our own needs root"
elif ! mount -t tmpfs -o size=1m hpntree $F 2> $W/out; then
	skip_part "a full disk" "no tmpfs of our own: `cat $W/out`"
else
	verbose "$tid: a destination that runs out of space"
	for how in sftp-down scp-down sftp-up scp-up; do
		case $how in
		scp-up) ${SCP} -D $SFTPSERVER -r $W/fsrc somehost:$F/$how ;;
		scp-down) ${SCP} -D $SFTPSERVER -r somehost:$W/fsrc $F/$how ;;
		sftp-up) batch "put -r $W/fsrc $F/$how"
			${SFTP} -D $SFTPSERVER -b $W/batch ;;
		sftp-down) batch "get -r $W/fsrc $F/$how"
			${SFTP} -D $SFTPSERVER -b $W/batch ;;
		esac > $W/out 2>&1 && fail "$how: full disk: status 0"
		grep -q "$F/$how/f[1-8]" $W/out ||
			fail "$how: no message naming a file: `cat $W/out`"
		complete=0
		for i in 1 2 3 4 5 6 7 8; do
			[ -f $F/$how/f$i ] || continue
			if cmp -s $W/fsrc/f$i $F/$how/f$i; then
				complete=`expr $complete + 1`
			elif [ `stat -c %s $F/$how/f$i` -ge 300000 ]; then
				fail "$how: f$i has its full size but differs"
			fi
		done
		[ $complete -ge 1 ] || fail "$how: no file copied whole"
		trace "$how: $complete files whole"
		rm -rf $F/$how
	done
	umount $F || fail "umount $F"
fi
rm -rf $W/fsrc

# --- names a server must not send: nothing written outside.  A plain
# listing's (sftp-server -P tree): the name said and skipped, the rest
# copied.  A tree's (the directory opened as one with INIT): the listing
# breaks the protocol, said, and the download fails.
verbose "$tid: names with '/' and '..' from a server"
for bad in "../evil" "x/../../evil" ".."; do
	for how in notree tree; do
		D=$W/bad
		rm -rf $D $W/evil
		mkdir -p $D
		case $how in
		notree) s="$SFTPSERVER -P tree" ;;
		tree) s=$SFTPSERVER ;;
		esac
		w=`mkserver inject $PY $PROXY --report $W/rep --delay 0 \
		    --inject "\"$bad\"" -- $s`
		batch "get -r $SRC/a/b/c $D/got"
		${SFTP} -D $w -b $W/batch > $W/out 2>&1
		rc=$?
		[ -e $W/evil ] &&
			fail "injected \"$bad\" ($how): wrote outside the target"
		case $how in
		notree) grep -q "suspect path" $W/out ||
			fail "injected \"$bad\": no message: `cat $W/out`"
			same $SRC/a/b/c $D/got "injected \"$bad\": the rest" ;;
		tree) grep -q "suspect name \"$bad\" in a tree" $W/out ||
			fail "injected \"$bad\" in a tree: no message: `cat $W/out`"
			[ $rc -ne 0 ] ||
			fail "injected \"$bad\" in a tree: success" ;;
		esac
	done
done
rm -rf $W/bad

# --- the server's open-handles limit, and several files in flight
verbose "$tid: open handles within the server's limit"
H=$W/hsrc
mkdir -p $H/d1 $H/d2
i=0
while [ $i -lt 100 ]; do
	i=`expr $i + 1`
	head -c `expr $i \* 300` /dev/urandom > $H/d`expr $i % 2 + 1`/f$i
done
for lim in "--handles 4:4" "--no-limits:64"; do
	opt=${lim%:*}
	max=${lim#*:}
	w=`mkserver limit $PY $PROXY --report $W/rep --delay 0.01 $opt \
	    -- $SFTPSERVER`
	for how in get put scp-down scp-up; do
		rm -rf $W/h $W/rep
		case $how in
		get) batch "get -r $H $W/h"
			${SFTP} -D $w -b $W/batch ;;
		put) batch "put -r $H $W/h"
			${SFTP} -D $w -b $W/batch ;;
		scp-down) ${SCP} -D $w -r somehost:$H $W/h ;;
		scp-up) ${SCP} -D $w -r $H somehost:$W/h ;;
		esac > $W/out 2>&1 || fail "$how $opt: failed: `cat $W/out`"
		same $H $W/h "$how $opt"
		waitrep "$how $opt"
		n=`awk '$1 == "max_handles" { print $2 }' $W/rep`
		over=`awk '$1 == "over" { print $2 }' $W/rep`
		trace "$how $opt: at most $n handles open"
		[ "$over" = 0 ] && [ "$n" -le $max ] ||
			fail "$how $opt: $n handles open at once, allowed $max"
		[ "$n" -gt 1 ] ||
			fail "$how $opt: one file at a time (no engine?)"
	done
done
rm -rf $H $W/h

# --- round trips in series for one small file, beyond INIT's: 2 with our
# server (a download's READs name its OPEN: handle-ref@), 3 without; an
# upload's data goes with INIT (sent again where the server cannot take
# it: the file is whole either way)
verbose "$tid: round trips for a 1-byte file"
printf x > $W/onebyte
mkdir -p $W/rt
for srv in ours stock; do
	case $srv in
	ours) s=$SFTPSERVER; most=2 ;;
	stock) [ -n "$SRV_stock" ] || continue
		s=$SRV_stock; most=3 ;;
	esac
	w=`mkserver rt $PY $PROXY --report $W/rep --delay 0.2 -- $s`
	for how in up down; do
		rm -f $W/rep $W/rt/onebyte $W/rt/got
		if [ $how = up ]; then
			${SCP} -D $w $W/onebyte somehost:$W/rt/ > $W/out 2>&1
		else
			${SCP} -D $w somehost:$W/onebyte $W/rt/got > $W/out 2>&1
		fi || fail "scp $how of 1 byte ($srv server) failed: `cat $W/out`"
		waitrep "scp $how of 1 byte"
		d=`awk '$1 == "max_depth" { print $2 }' $W/rep`
		trace "scp $how, 1 byte, $srv server: `grep '^depth' $W/rep | tr '\n' ' '`"
		[ -n "$d" ] && [ "$d" -le $most ] ||
			fail "scp $how of 1 byte ($srv server): $d round trips in series, more than $most"
		if [ $how = up ]; then
			cmp -s $W/onebyte $W/rt/onebyte ||
			    fail "scp up of 1 byte ($srv server): differs"
			# its data went with INIT, naming the OPENs
			grep -q "^depth 1 WRITE" $W/rep ||
			    fail "scp up of 1 byte ($srv server): no WRITE with INIT"
		else
			cmp -s $W/onebyte $W/rt/got ||
			    fail "scp down of 1 byte ($srv server): differs"
		fi
	done
done
# --- 600 one-byte files in one directory: every OPEN and READ goes in
# the round trip after the listing (a file whose size has all been asked
# for holds no budget; two READs a file fit in the READs out): before, 258
# files a round trip (a read's length of budget each), then 516 (READs
# out).  The listing comes with INIT's answers (its READDIRs went with
# INIT, naming the OPENDIR): depth 2 (3 when they went a round trip
# later).  (The directory's CLOSE follows its last READDIR's EOF, a round
# trip later.)
verbose "$tid: round trips for 600 small files"
rm -rf $W/many $W/rt/many
mkdir -p $W/many
i=0
while [ $i -lt 600 ]; do
	printf x > $W/many/f$i
	i=`expr $i + 1`
done
w=`mkserver rt $PY $PROXY --report $W/rep --delay 1.0 -- $SFTPSERVER`
rm -f $W/rep
${SCP} -r -D $w somehost:$W/many $W/rt/ > $W/out 2>&1 ||
	fail "scp -r down of 600 files failed: `cat $W/out`"
waitrep "scp -r down of 600 files"
for t in OPEN READ; do
	d=`awk -v t=$t '$1 == "depth" && $3 == t { print $2 }' $W/rep |
	    sort -u | tr '\n' ' '`
	trace "scp -r down, 600 files: ${t}s at depths $d"
	[ "$d" = "2 " ] ||
		fail "scp -r down of 600 files: ${t}s at depths $d, not all at 2"
done
[ "`treesum $W/many`" = "`treesum $W/rt/many`" ] ||
	fail "scp -r down of 600 files: differs"
rm -rf $W/many $W/rt/many

# --- round trips in series for a tree 6 levels deep (a 1-byte file on
# each): with our server the top is opened as a tree (tree@) with INIT, its
# READDIRs too, naming it: the whole tree's names come with INIT's
# answers, whatever the depth, and every file's OPEN goes in the round trip
# after them (MOST_TREE; before, the top was listed by itself and each
# directory in it as a tree a round trip later); without tree@ a level
# costs one (its
# READDIRs go with its OPENDIR, naming it: handle-ref@), 8 seen; without
# handle references two a level, as before (16), and the copy the same
verbose "$tid: round trips for a deep tree"
# deep_check WHAT MOST COPY: the proxy's report of the run just made: at
# most MOST round trips in series, and COPY the same tree as $W/deep
deep_check() {
	waitrep "$1"
	d=`awk '$1 == "max_depth" { print $2 }' $W/rep`
	trace "$1: $d round trips"
	[ -n "$d" ] && [ "$d" -le $2 ] ||
		fail "$1: $d round trips in series, more than $2"
	[ "`treesum $W/deep`" = "`treesum $3`" ] || fail "$1: differs"
}
MOST_TREE=3	# 2-3 seen: INIT (the top's tree and READDIRs), every
		# file's OPEN and READs (and the tree's CLOSE, after its
		# last READDIR's answer); 4 before
rm -rf $W/deep $W/rt/deep
mkdir -p $W/deep/a/b/c/d/e/f
for p in "" /a /a/b /a/b/c /a/b/c/d /a/b/c/d/e /a/b/c/d/e/f; do
	printf x > $W/deep$p/x
done
for srv in ours notree stock; do
	case $srv in
	ours) s=$SFTPSERVER; most=$MOST_TREE ;;
	notree) s="$SFTPSERVER -P tree"; most=9 ;;
	stock) [ -n "$SRV_stock" ] || continue
		s=$SRV_stock; most=16 ;;
	esac
	w=`mkserver rt $PY $PROXY --report $W/rep --delay 0.2 -- $s`
	for how in scp sftp; do
		rm -rf $W/rep $W/rt/deep
		if [ $how = scp ]; then
			${SCP} -r -D $w somehost:$W/deep $W/rt/ > $W/out 2>&1
		else
			# a batch file: its first line is read before
			# connecting (from a pipe it may come after: one
			# round trip more)
			batch "get -r $W/deep $W/rt/"
			${SFTP} -D $w -b $W/batch > $W/out 2>&1
		fi || fail "$how -r down of a deep tree ($srv server) failed: `cat $W/out`"
		deep_check "$how -r down of a deep tree ($srv server)" $most \
		    $W/rt/deep
		# with tree@, one OPENDIR (the top's, with INIT, closed
		# unread), one tree; every OPEN in the round trip after INIT
		n=`awk '$1 == "depth" && $3 == "OPENDIR"' $W/rep | wc -l`
		[ $srv != ours ] || [ $n -eq 1 ] ||
			fail "$how -r down of a deep tree: $n OPENDIRs with tree@"
		o=`awk '$1 == "depth" && $3 == "OPEN" { print $2 }' $W/rep |
		    sort -u | tr '\n' ' '`
		[ $srv != ours ] || [ "$o" = "2 " ] ||
			fail "$how -r down of a deep tree: OPENs at depths $o, not all at 2"
	done
	# up: where the server answers in order (handle-ref@), what goes
	# into a directory follows its MKDIR at once: 3 round trips seen
	# (9 when each level waited for its MKDIR's answer), 10 toward stock
	case $srv in
	stock) most=11 ;;
	*) most=4 ;;
	esac
	rm -rf $W/rep $W/rt/up
	mkdir -p $W/rt/up
	${SCP} -r -D $w $W/deep somehost:$W/rt/up/ > $W/out 2>&1 ||
		fail "scp -r up of a deep tree ($srv server) failed: `cat $W/out`"
	deep_check "scp -r up of a deep tree ($srv server)" $most $W/rt/up/deep
	# the top's file (x) went whole with INIT, behind the MKDIR: its
	# OPEN, WRITE and CLOSE naming it (handle-ref@), taken as the file's
	# own (7 OPENs for 7 files).  Toward stock they fail but the OPEN:
	# its handle closed (one CLOSE more than OPENs), the file sent again
	o=`awk '$1 == "depth" && $3 == "OPEN"' $W/rep | wc -l`
	c=`awk '$1 == "depth" && $3 == "CLOSE"' $W/rep | wc -l`
	trace "scp -r up of a deep tree ($srv server): $o OPENs, $c CLOSEs"
	if [ $srv = stock ]; then
		[ $o -eq 8 ] && [ $c -eq 9 ] ||
			fail "scp -r up of a deep tree (stock server): $o OPENs and $c CLOSEs, not 8 and 9"
	else
		for t in OPEN WRITE CLOSE; do
			grep -q "^depth 1 $t\$" $W/rep ||
				fail "scp -r up of a deep tree ($srv server): no $t with INIT"
		done
		[ $o -eq 7 ] && [ $c -eq 7 ] ||
			fail "scp -r up of a deep tree ($srv server): $o OPENs and $c CLOSEs for 7 files"
	fi
done
# a directory of the tree that is a file on the server: said once, the
# file left as it was, nothing copied into it, the rest copied, status 1
rm -rf $W/rt/up
mkdir -p $W/rt/up/deep/a
echo blocker > $W/rt/up/deep/a/b
${SCP} -r -D $SFTPSERVER $W/deep somehost:$W/rt/up/ > $W/out 2>&1 &&
	fail "scp -r up onto a file in the way: success"
[ "`grep -c . $W/out`" = 1 ] && grep -q 'a/b" exists but is not a directory' $W/out ||
	fail "scp -r up onto a file in the way: said `grep -c . $W/out` lines: `head -n 3 $W/out`"
[ "`cat $W/rt/up/deep/a/b`" = blocker ] ||
	fail "scp -r up onto a file in the way: the file changed"
cmp -s $W/deep/x $W/rt/up/deep/x && cmp -s $W/deep/a/x $W/rt/up/deep/a/x ||
	fail "scp -r up onto a file in the way: the rest not copied"
[ "`find $W/rt/up -type f | wc -l`" = 3 ] ||
	fail "scp -r up onto a file in the way: `find $W/rt/up -type f | wc -l` files"
rm -rf $W/deep $W/rt/deep

# --- an uploaded directory's SETSTAT (the mode its MKDIR could not give)
# goes once all in it has been asked for, not once all is answered: with
# one handle at a time (the files open one after the other, a round trip
# each) the last SETSTAT goes right behind the last file's OPEN, before its
# WRITE, so the run ends a round trip after its data (before: after the
# last CLOSE's answer; 5 round trips in series seen before, 4 now: traced,
# not checked, as the proxy may count a request one deeper).
# Toward the stock server (in order not known: no handle references) they
# wait for the answers.
verbose "$tid: scp -r up: directories' SETSTATs behind what is in them"
rm -rf $W/slow $W/rt/slow
mkdir -p $W/slow/a $W/slow/b/c
head -c 3000000 /dev/urandom > $W/slow/a/big
printf x > $W/slow/b/c/one
printf y > $W/slow/top
chmod 0750 $W/slow/a
chmod 0700 $W/slow/b/c
for srv in ours stock; do
	case $srv in
	ours) s=$SFTPSERVER ;;
	stock) [ -n "$SRV_stock" ] || continue
		s=$SRV_stock ;;
	esac
	w=`mkserver rt $PY $PROXY --report $W/rep --delay 0.2 --handles 1 -- $s`
	rm -rf $W/rep $W/rt/slow
	mkdir -p $W/rt/slow
	${SCP} -r -D $w $W/slow somehost:$W/rt/slow/ > $W/out 2>&1 ||
		fail "scp -r up, one handle ($srv server) failed: `cat $W/out`"
	waitrep "scp -r up, one handle ($srv server)"
	[ "`treesum $W/slow`" = "`treesum $W/rt/slow/slow`" ] ||
		fail "scp -r up, one handle ($srv server): differs"
	for d in a b/c; do
		m=`stat -c %a $W/rt/slow/slow/$d`
		[ "$m" = "`stat -c %a $W/slow/$d`" ] ||
			fail "scp -r up, one handle ($srv server): $d has mode $m"
	done
	# the lines of the report's requests, in the order they came
	n=`grep -c '^depth [0-9]* SETSTAT$' $W/rep`
	lastset=`grep '^depth' $W/rep | grep -n ' SETSTAT$' | tail -n 1 | cut -d: -f1`
	lastw=`grep '^depth' $W/rep | grep -n ' WRITE$' | tail -n 1 | cut -d: -f1`
	lastc=`grep '^depth' $W/rep | grep -n ' CLOSE$' | tail -n 1 | cut -d: -f1`
	d=`awk '$1 == "max_depth" { print $2 }' $W/rep`
	trace "scp -r up, one handle ($srv server): $n SETSTATs, the last at line $lastset, last WRITE $lastw, last CLOSE $lastc; $d round trips"
	[ "$n" -ge 4 ] ||
		fail "scp -r up, one handle ($srv server): $n SETSTATs, not 4"
	case $srv in
	ours) [ "$lastset" -lt "$lastw" ] ||
		fail "scp -r up, one handle: the last SETSTAT (line $lastset) after the last WRITE (line $lastw)" ;;
	stock) [ "$lastset" -gt "$lastc" ] ||
		fail "scp -r up, one handle, stock server: a SETSTAT (line $lastset) before the last CLOSE (line $lastc)" ;;
	esac
done
rm -rf $W/slow $W/rt/slow

w=`mkserver rt $PY $PROXY --report $W/rep --delay 0.2 -- $SFTPSERVER`
# sftp -b: the first command's lookups go with INIT, whether the batch
# comes from a file or a pipe, with a relative or an absolute path.  The
# pipe's line is there before sftp starts (waited for, at most 10 s,
# without reading it): under load echo ran after sftp had looked, and
# the lookups rightly went one round trip later.
inpipe() {
	$PY -c 'import select, sys; select.select([sys.stdin], [], [], 10)'
	${SFTP} -D $w -b -
}
for how in file pipe rel; do
	rm -f $W/rep $W/rt/sgot
	case $how in
	file) batch "get $W/onebyte $W/rt/sgot"
		${SFTP} -D $w -b $W/batch ;;
	pipe) echo "get $W/onebyte $W/rt/sgot" | inpipe ;;
	rel) (cd $W && echo "get onebyte $W/rt/sgot" | inpipe) ;;
	esac > $W/out 2>&1 || fail "sftp get ($how) of 1 byte failed: `cat $W/out`"
	waitrep "sftp get ($how) of 1 byte"
	d=`awk '$1 == "max_depth" { print $2 }' $W/rep`
	trace "sftp get ($how), 1 byte: `grep '^depth' $W/rep | tr '\n' ' '`"
	[ -n "$d" ] && [ "$d" -le 2 ] ||
		fail "sftp get ($how) of 1 byte: $d round trips in series, more than 2"
	cmp -s $W/onebyte $W/rt/sgot || fail "sftp get ($how) of 1 byte: differs"
done

# the batch file's first line, read before connecting, is the same
# commands as upstream reads (fgets in 2 KiB pieces, a line past the
# 8 KiB read ahead too)
if [ -n "$SRV_stock" ]; then
	# blank pieces are empty commands: every piece is echoed, and
	# how the line was cut shows in the output
	long=`head -c 9000 /dev/zero | tr '\0' ' '`
	printf -- '-get %s/none%s\nls %s\n' $W "$long" $W/rt > $W/b.long
	printf -- '-get %s/none%s\nls %s\n' $W "${long%?????}" $W/rt \
	    > $W/b.long2
	for b in b.long b.long2; do
		${SFTP} -D $SFTPSERVER -b $W/$b > $W/out.ours 2>&1
		echo "status $?" >> $W/out.ours
		$HPN_STOCK_TREE/sftp -D $SFTPSERVER -b $W/$b > $W/out.stock 2>&1
		echo "status $?" >> $W/out.stock
		cmp -s $W/out.ours $W/out.stock ||
			fail "sftp -b $b: not as upstream: `diff $W/out.stock $W/out.ours | head -n 5`"
	done
fi

# --- Ctrl-C: nothing incomplete looks complete
verbose "$tid: interrupted download: partial files are not made to look whole"
I=$W/isrc
mkdir -p $I
i=0
while [ $i -lt 40 ]; do
	i=`expr $i + 1`
	head -c 1000000 /dev/urandom > $I/f$i
done
touch -d "2001-02-03 04:05:06" $I/f*
w=`mkserver int $PY $PROXY --report $W/rep --delay 0.1 --handles 2 \
    -- $SFTPSERVER`
batch "get -pr $I $W/i"
${SFTP} -D $w -B 32768 -R 8 -b $W/batch > $W/out 2>&1 &
pid=$!
i=0
while [ $i -lt 100 ] && [ "`ls $W/i 2>/dev/null | wc -l`" -lt 3 ]; do
	sleep 0.1
	i=`expr $i + 1`
done
kill -INT $pid 2>/dev/null
i=0
while [ $i -lt 300 ] && kill -0 $pid 2>/dev/null; do
	sleep 0.1
	i=`expr $i + 1`
done
if kill -0 $pid 2>/dev/null; then
	kill -9 $pid
	fail "sftp did not stop on SIGINT"
fi
wait $pid && fail "interrupted sftp: status 0"
ok=0
part=0
for f in $W/i/f*; do
	[ -f "$f" ] || continue
	b=`basename $f`
	if cmp -s $I/$b $f; then
		ok=`expr $ok + 1`
		continue
	fi
	part=`expr $part + 1`
	[ `stat -c %s $f` -lt 1000000 ] ||
		fail "interrupted: $b has the full size but differs"
	[ "`stat -c %Y $f`" != "`stat -c %Y $I/$b`" ] ||
		fail "interrupted: partial $b has the source's time"
done
trace "interrupted: $ok whole, $part partial of 40"
[ $ok -lt 40 ] || verbose "$tid: the transfer ended before the interrupt"

rm -rf $W
