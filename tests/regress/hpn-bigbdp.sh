#	HPN patch set: windows for the biggest paths (issue 42).  An emulated
#	1 Gbit/s path with a 1 s round trip (a bandwidth-delay product of
#	125 MB, that of 10 Gbit/s x 100 ms; socket buffers allowed 1 GiB):
#	the window of each end must grow past 128 MiB (sshbuf's largest
#	buffer; 64 MiB was the old default cap, 112M the most HPNBufferSize
#	took), the data arrive whole both ways through a pipe and through
#	sftp, and sftp's bytes in flight grow past their first 64 MiB.  Nor
#	does a window follow a receive buffer that Linux tunes to several
#	products: it stays within 2.5 products (hpn-window.c window_ramp():
#	twice the wire's rate x RTT; the build before reached 400-800 MB, and
#	BBR's start-up then overflowed the queue).  An
#	explicit HPNBufferSize still caps the window.  No rate is asserted
#	(make bench-bigbdp measures them); the windows and bytes in flight
#	are what the old code could not reach.
#	Placed in the Public Domain.

tid="hpn windows, biggest paths"

if [ -z "$HPN_TOP" ]; then
	fatal "HPN_TOP not set: bench/netpath is needed"
fi
PATH_TAG=hpnb PATH_LOGLEVEL=DEBUG1
. $HPN_TOP/tests/regress/path-lib.sh
LARGE=134217728		# sshbuf's SSHBUF_SIZE_MAX
RAMP=312500000		# 2.5 x the path's bandwidth-delay product (125 MB)
$NETPATH up --name $NP --rtt 1000 --rate 1000 --bufmax 1073741824 \
    > $OBJ/hpnb-path.log 2>&1 ||
	fatal "netpath up failed: `cat $OBJ/hpnb-path.log`"

# On tmpfs where there is room: the test writes 1 GiB twice.
W=$OBJ/hpnb
if [ -d /dev/shm ] && [ "`df -k --output=avail /dev/shm | tail -n 1`" -gt 3000000 ]; then
	W=`mktemp -d /dev/shm/hpnb.XXXXXX` || fatal "mktemp"
fi
rm -rf $OBJ/hpnb
mkdir -p $W
chmod 755 $W
bigbdp_cleanup() {
	rm -rf $W
	path_cleanup
}
trap bigbdp_cleanup EXIT
DATA=$W/data
OUT=$W/out
dd if=/dev/urandom of=$DATA bs=1048576 count=1024 2>/dev/null ||
	fatal "cannot write 1 GiB of data"

HPORT=`expr $PORT + 110`
path_sshd hpn ${REAL_SSHD} $HPORT "SshdSessionPath $SSHD_SESSION" \
    "SshdAuthPath $SSHD_AUTH" "Subsystem sftp $SFTPSERVER"
SLOG=$OBJ/hpnb-sshd.hpn.log
sed -e "s/^	Hostname.*/	Hostname $SADDR/" -e "s/^	Port.*/	Port $HPORT/" \
    $OBJ/ssh_config > $OBJ/ssh_config.hpnb

# xfer down|up LOG [options]: DATA across through a pipe, byte-compared;
# bounded: 1 GiB at the 64 MiB a second the old window allowed takes 17 s.
xfer() {
	dir=$1 log=$2
	shift 2
	rm -f $OUT $log
	if [ $dir = down ]; then
		$CNS timeout 300 ${REAL_SSH} -F $OBJ/ssh_config.hpnb -E $log -v \
		    "$@" somehost "cat $DATA" > $OUT
	else
		$CNS timeout 300 ${REAL_SSH} -F $OBJ/ssh_config.hpnb -E $log -v \
		    "$@" somehost "cat > $OUT" < $DATA
	fi
	r=$?
	[ $r -eq 0 ] || fail "$dir: exit $r: `tail -3 $log`"
	cmp -s $DATA $OUT || fail "$dir: data differ"
}
# most LOG [FROM]: the largest a window grew to ("window A -> B" at DEBUG1)
most() {
	tail -n +`expr ${2:-0} + 1` $1 |
	    sed -n 's/.* window [0-9]* -> \([0-9]*\) .*/\1/p' | sort -n | tail -n 1
}
# past NAME PEAK MOST: the window grew past sshbuf's largest buffer (PEAK,
# the summary's), and never past RAMP (MOST: from the debug lines)
past() {
	if [ -z "$2" ]; then
		fail "$1: no channel summary in the log"
	elif [ "$2" -le $LARGE ]; then
		fail "$1: the window stopped at $2, not past 128 MiB"
	elif [ -z "$3" ] || [ "$3" -gt $RAMP ]; then
		fail "$1: the window grew to ${3:-?}, past 2.5 x the path's product"
	elif [ "$2" -lt "$3" ]; then
		fail "$1: the summary's peak window $2 is below the $3 it grew to"
	else
		verbose "$tid: $1: peak window $2, at most $3 in the debug lines"
	fi
}

verbose "$tid: download, the client's window"
xfer down $OBJ/hpnb-c.log
past "client receiving" "`peak $OBJ/hpnb-c.log`" "`most $OBJ/hpnb-c.log`"

verbose "$tid: upload, the server's window"
m=`lines $SLOG`
xfer up $OBJ/hpnb-c.log
sleep 1
past "server receiving" "`peak $SLOG $m`" "`most $SLOG $m`"

verbose "$tid: sftp both ways: bytes in flight grow past 64 MiB"
for way in get put; do
	rm -f $OUT $OBJ/hpnb-sftp.log
	if [ $way = get ]; then
		echo "get $DATA $OUT" > $OBJ/hpnb-batch
	else
		echo "put $DATA $OUT" > $OBJ/hpnb-batch
	fi
	$CNS timeout 300 ${SFTP} -S ${REAL_SSH} -F $OBJ/ssh_config.hpnb -vvv \
	    -b $OBJ/hpnb-batch somehost > /dev/null 2> $OBJ/hpnb-sftp.log ||
		fail "sftp $way failed: `tail -3 $OBJ/hpnb-sftp.log`"
	cmp -s $DATA $OUT || fail "sftp $way: data differ"
	# "lane_grow: bytes in flight A -> B": the largest B
	b=`sed -n 's/.*bytes in flight [0-9]* -> \([0-9]*\).*/\1/p' \
	    $OBJ/hpnb-sftp.log | sort -n | tail -n 1`
	if [ -z "$b" ] || [ "$b" -le 67108864 ]; then
		fail "sftp $way: bytes in flight did not grow past 64 MiB (${b:-never grew})"
	else
		verbose "$tid: sftp $way: bytes in flight up to $b"
	fi
done

verbose "$tid: an explicit HPNBufferSize still caps it"
# 256 MiB: at the 32 MiB a second the cap allows, 1 GiB took 32 s
head -c 268435456 $W/data > $W/data256
DATA=$W/data256
xfer down $OBJ/hpnb-c.log -oHPNBufferSize=32M
p=`peak $OBJ/hpnb-c.log`
[ -n "$p" ] && [ "$p" -le 33554432 ] || fail "HPNBufferSize=32M: peak window $p"

bigbdp_cleanup
