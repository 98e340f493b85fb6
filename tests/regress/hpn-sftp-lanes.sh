#	HPN patch set: hpnscp -n N and hpnsftp -n N (src/xfer/lanes.c, the
#	lanes of src/xfer/).  Bad values; a large file in parts both
#	ways over 4 connections (each one carried a share); scp over a longer
#	file (the size with the last WRITEs); sftp put (the truncating open
#	first); trees with a large file in them; -p; our sftp-server, the
#	stock build's and paramiko's; extra connections that cannot
#	authenticate (a notice, the transfer goes on); a connection cut during
#	a download, and during an upload over a longer file (its parts start
#	again on the others); -Z resuming a partial file in parts both ways,
#	and a download with gaps between its parts (as a killed -n copy leaves
#	it).  Every file is compared with its source.  The connections run
#	through ProxyCommand (sshd -i), one sshd each.
#	Placed in the Public Domain.

tid="hpn sftp lanes"

[ -n "$HPN_TOP" ] || skip "HPN_TOP not set"
. $HPN_TOP/tests/regress/sftp-lib.sh
PMKO=$HPN_TOP/tests/regress/hpn-sftp-paramiko.py
W=$OBJ/hpnlanes
rm -rf $W
mkdir -p $W
S="${SCP} -S ${REAL_SSH} -F $OBJ/ssh_proxy"

verbose "$tid: bad -n values"
for v in 0 65 x -1; do
	${SCP} -n $v $W/nothing somehost:$W/x > $W/out 2>&1 &&
		fail "scp -n $v accepted"
	grep -q "Invalid number of connections" $W/out ||
		fail "scp -n $v: `cat $W/out`"
	${SFTP} -n $v somehost < /dev/null > $W/out 2>&1 &&
		fail "sftp -n $v accepted"
	grep -q "Invalid number of connections" $W/out ||
		fail "sftp -n $v: `cat $W/out`"
done

BIG=$W/big
head -c 41000000 /dev/urandom > $BIG	# 5 parts of 8 MiB (the last longer)

# spread FILE WHAT [MIN [COUNT]]: COUNT (3: every one) of the extra
# connections of a -n 4 run moved a share, at least MIN bytes (1000000).
# How much a connection carries depends on when it joined: on a loaded
# machine the last one moved 3,473,408 of the 41 MB (2026-12-07).
spread() {
	_n=0
	for _c in 2 3 4; do
		_b=`sed -n "s/.*connection $_c moved \([0-9]*\) bytes.*/\1/p" $1`
		[ -n "$_b" ] && [ "$_b" -ge "${3:-1000000}" ] && _n=`expr $_n + 1`
	done
	[ $_n -ge ${4:-3} ] ||
		fail "$2: $_n extra connections moved a share, not ${4:-3}: `grep -E 'moved|connections' $1`"
}

# An ssh for the extra connections (the ones with BatchMode) that fails,
# or that is cut after 1 MB of the server's replies (the first one only):
# then it and its ssh are gone, so the connection reads an end.  Slow
# (and with cut, the others): every connection, the first too, relayed
# at 6 MB/s each way: the extra connections join a transfer that does not
# wait for them, and here, on loopback, it could end before they join.
cat > $W/ssh-wrap <<EOF
#!$PY
import os, subprocess, sys, threading, time
real, args = "${REAL_SSH}", sys.argv[1:]
mode = os.environ.get("HPN_LANE_TEST", "")
RATE = 6000000
if "-oBatchMode=yes" in args and mode == "fail":
    sys.stderr.write("Permission denied (test)\\n")
    sys.exit(255)
if mode not in ("slow", "cut", "cutup"):
    os.execv(real, [real] + args)
cut = cutup = None
if "-oBatchMode=yes" in args and mode in ("cut", "cutup"):
    try:
        os.mkdir("$W/cut.lock")
        if mode == "cut":
            cut = 1000000
        else:
            cutup = 1000000
    except FileExistsError:
        pass
p = subprocess.Popen([real] + args, stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE)
def pump(src, dst, close, most=None):
    t0, n = time.monotonic(), 0
    while most is None or n < most:
        b = os.read(src, 65536)
        if not b:
            break
        if most is not None:
            b = b[:most - n]
        n += len(b)
        late = n / RATE - (time.monotonic() - t0)
        if late > 0:
            time.sleep(late)
        while b:
            b = b[os.write(dst, b):]
    close()
def up_end():
    p.stdin.close()
    if cutup is not None:
        p.kill()
threading.Thread(target=pump, daemon=True,
                 args=(0, p.stdin.fileno(), up_end, cutup)).start()
pump(p.stdout.fileno(), 1, lambda: None, cut)
if cut is not None or cutup is not None:
    p.kill()
    p.wait()
    sys.exit(255)
p.wait()
sys.exit(p.returncode)
EOF
chmod +x $W/ssh-wrap

verbose "$tid: scp -n 4, a large file in parts both ways"
SLOW="env HPN_LANE_TEST=slow ${SCP} -S $W/ssh-wrap -F $OBJ/ssh_proxy"
$SLOW -n 4 -v $BIG somehost:$W/up > $W/out 2>&1 || fail "scp -n 4 up: `tail -5 $W/out`"
cmp -s $BIG $W/up || fail "scp -n 4 up: differs"
spread $W/out "scp -n 4 up"
$SLOW -n 4 -v somehost:$BIG $W/down > $W/out 2>&1 || fail "scp -n 4 down: `tail -5 $W/out`"
cmp -s $BIG $W/down || fail "scp -n 4 down: differs"
spread $W/out "scp -n 4 down"

verbose "$tid: scp -n 4 over longer files"
head -c 50000000 /dev/zero > $W/up
head -c 50000000 /dev/zero > $W/down
$S -n 4 -vv $BIG somehost:$W/up > $W/out 2>&1 || fail "longer up: `tail -5 $W/out`"
cmp -s $BIG $W/up || fail "scp -n 4 up over a longer file: differs"
# its size goes with the last WRITEs, not a round trip after
grep -q "size 41000000 with the last WRITEs" $W/out ||
	fail "longer up: size not with the last WRITEs: `grep -i size $W/out`"
$S -n 4 somehost:$BIG $W/down > $W/out 2>&1 || fail "longer down: `tail -5 $W/out`"
cmp -s $BIG $W/down || fail "scp -n 4 down over a longer file: differs"

verbose "$tid: sftp -n 4 put (truncating) and get"
head -c 50000000 /dev/zero > $W/sput
batch "put $BIG $W/sput" "get $BIG $W/sget"
${SFTP} -S ${REAL_SSH} -F $OBJ/ssh_proxy -n 4 -b $W/batch somehost > $W/out 2>&1 ||
	fail "sftp -n 4: `tail -5 $W/out`"
cmp -s $BIG $W/sput || fail "sftp -n 4 put: differs"
cmp -s $BIG $W/sget || fail "sftp -n 4 get: differs"

verbose "$tid: -n 4 -Z: the rest of partial files in parts, both ways"
head -c 10000000 $BIG > $W/up
head -c 10000000 $BIG > $W/down
$SLOW -n 4 -v -Z $BIG somehost:$W/up > $W/out 2>&1 || fail "-Z up: `tail -5 $W/out`"
cmp -s $BIG $W/up || fail "scp -n 4 -Z up: differs"
grep -q "matches: resuming at 10000000" $W/out || fail "-Z up: `grep up: $W/out`"
# the rest: the first connection and those that joined by then
spread $W/out "scp -n 4 -Z up" 2000000 1
$SLOW -n 4 -v -Z somehost:$BIG $W/down > $W/out 2>&1 || fail "-Z down: `tail -5 $W/out`"
cmp -s $BIG $W/down || fail "scp -n 4 -Z down: differs"
grep -q "matches: resuming at 10000000" $W/out || fail "-Z down: `grep down: $W/out`"
spread $W/out "scp -n 4 -Z down" 2000000 1
# a flipped byte in what is there: all of it again, in parts
flip $W/down 5000000
$S -n 4 -Z somehost:$BIG $W/down > $W/out 2>&1 || fail "-Z flipped: `tail -5 $W/out`"
cmp -s $BIG $W/down || fail "scp -n 4 -Z over a flipped byte: differs"
grep -q "differ from the source" $W/out || fail "-Z flipped: `cat $W/out`"

# Parts written with a gap between them (8 MiB, then 4 MB at 16 MiB), as
# a download in parts killed with SIGKILL leaves it: compared up to the
# gap, the rest fetched again.  Needs a file system with holes.
rm -f $W/down
head -c 8388608 $BIG > $W/down
dd if=$BIG of=$W/down bs=1048576 skip=16 seek=16 count=4 conv=notrunc 2>/dev/null
if $PY -c 'import os,sys; f=os.open(sys.argv[1],os.O_RDONLY); sys.exit(os.lseek(f,0,os.SEEK_HOLE)!=8388608)' $W/down; then
	verbose "$tid: -n 4 -Z over parts with a gap between them"
	$S -n 4 -Z somehost:$BIG $W/down > $W/out 2>&1 || fail "-Z gap: `tail -5 $W/out`"
	cmp -s $BIG $W/down || fail "scp -n 4 -Z over a gap: differs"
	grep -q "written up to a gap at 8388608 bytes" $W/out &&
	    grep -q "matches: resuming at 8388608" $W/out ||
		fail "-Z gap: `cat $W/out`"
else
	skip_part "-n 4 -Z over a gap" "no holes in files here"
fi

verbose "$tid: trees with a large file, -p, -n 3"
T=$W/tree
mkdir -p $T/a/b/c $T/empty
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
	head -c `expr $i \* 7000` /dev/urandom > $T/a/b/c/f$i
done
: > $T/zero
cp $BIG $T/a/big
chmod 0640 $T/a/big
touch -d "2003-04-05 06:07:08" $T/a/big
$S -n 3 -rp $T somehost:$W/tup > $W/out 2>&1 || fail "tree up: `tail -5 $W/out`"
same $T $W/tup "scp -n 3 -r up"
$S -n 3 -rp somehost:$T $W/tdown > $W/out 2>&1 || fail "tree down: `tail -5 $W/out`"
same $T $W/tdown "scp -n 3 -r down"
for d in $W/tup $W/tdown; do
	[ "`stat -c '%a %Y' $d/a/big`" = "`stat -c '%a %Y' $T/a/big`" ] ||
		fail "-p: $d/a/big: `stat -c '%a %Y' $d/a/big`, not `stat -c '%a %Y' $T/a/big`"
done

# other sftp-servers: ours in a config of their own
others=""
if [ -n "$HPN_STOCK_TREE" ] && [ -x "$HPN_STOCK_TREE/sftp-server" ]; then
	others="$HPN_STOCK_TREE/sftp-server"
else
	skip_part "-n 4 with the stock sftp-server" "no stock build (HPN_STOCK_TREE)"
fi
if $PY -c 'import paramiko' 2>/dev/null; then
	others="$others $PY:$PMKO"
else
	skip_part "-n 4 with paramiko's sftp server" "no python3-paramiko"
fi
for o in $others; do
	sub=`echo $o | tr ':' ' '`
	grep -iv '^[[:space:]]*subsystem' $OBJ/sshd_proxy > $W/sshd_proxy.o
	echo "Subsystem sftp $sub" >> $W/sshd_proxy.o
	sed "s|-f $OBJ/sshd_proxy|-f $W/sshd_proxy.o|" $OBJ/ssh_proxy > $W/ssh_proxy.o
	grep -q "$W/sshd_proxy.o" $W/ssh_proxy.o || fatal "no proxy config for $o"
	verbose "$tid: -n 4 with `basename ${o##*:}`"
	rm -f $W/oup $W/odown
	${SCP} -S ${REAL_SSH} -F $W/ssh_proxy.o -n 4 $BIG somehost:$W/oup > $W/out 2>&1 ||
		fail "$o: up: `tail -5 $W/out`"
	cmp -s $BIG $W/oup || fail "$o: -n 4 up: differs"
	${SCP} -S ${REAL_SSH} -F $W/ssh_proxy.o -n 4 somehost:$BIG $W/odown > $W/out 2>&1 ||
		fail "$o: down: `tail -5 $W/out`"
	cmp -s $BIG $W/odown || fail "$o: -n 4 down: differs"
done

verbose "$tid: extra connections that cannot authenticate"
rm -f $W/down
HPN_LANE_TEST=fail ${SCP} -S $W/ssh-wrap -F $OBJ/ssh_proxy -n 4 somehost:$BIG $W/down > $W/out 2>&1 ||
	fail "failing extra connections: scp failed: `tail -5 $W/out`"
cmp -s $BIG $W/down || fail "failing extra connections: differs"
grep -q "3 of the 3 extra connections failed .*going on with 1" $W/out ||
	fail "failing extra connections: no notice: `cat $W/out`"

verbose "$tid: a connection cut during a download"
rm -rf $W/down $W/cut.lock
HPN_LANE_TEST=cut ${SCP} -S $W/ssh-wrap -F $OBJ/ssh_proxy -n 4 somehost:$BIG $W/down > $W/out 2>&1 ||
	fail "cut connection: scp failed: `tail -5 $W/out`"
[ -d $W/cut.lock ] || fail "cut connection: the wrapper did not cut"
cmp -s $BIG $W/down || fail "cut connection: differs"
grep -q "connection [234] of 4 lost" $W/out ||
	fail "cut connection: not said: `cat $W/out`"

verbose "$tid: a connection cut during an upload over a longer file"
rm -rf $W/cut.lock
head -c 50000000 /dev/zero > $W/up
HPN_LANE_TEST=cutup ${SCP} -S $W/ssh-wrap -F $OBJ/ssh_proxy -n 4 $BIG somehost:$W/up > $W/out 2>&1 ||
	fail "cut upload: scp failed: `tail -5 $W/out`"
[ -d $W/cut.lock ] || fail "cut upload: the wrapper did not cut"
cmp -s $BIG $W/up || fail "cut upload: differs"
grep -q "connection [234] of 4 lost" $W/out ||
	fail "cut upload: not said: `cat $W/out`"

rm -rf $W
