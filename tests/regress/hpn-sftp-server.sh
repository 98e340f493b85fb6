#	HPN patch set: sftp-server with a backlog of replies.  It takes a new
#	request only while less than 1 MiB of replies waits; with the peer not
#	reading for a while every read must still be answered, in order.
#	Placed in the Public Domain.

tid="hpn sftp-server backlog"

command -v python3 >/dev/null || skip "no python3"
[ -n "$HPN_TOP" ] || skip "HPN_TOP not set"
dd if=/dev/urandom of=$OBJ/hpns-data bs=1048576 count=64 2>/dev/null
python3 $HPN_TOP/tests/regress/hpn-sftp-backlog.py $SFTPSERVER \
    $OBJ/hpns-data > $OBJ/hpns-out 2>&1 || fail "sftp-server: `cat $OBJ/hpns-out`"
trace "`cat $OBJ/hpns-out`"
rm -f $OBJ/hpns-data $OBJ/hpns-out
