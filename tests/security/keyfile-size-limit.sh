#	Upstream 0875a78bb, 93d6348ae and 1bf5871ae (no CVE): the size limit
#	of key files had no effect.  sshbuf_load_fd() tested the file's mode
#	with a mask whose S_IFSOCK contains S_IFREG's bit, so a regular file
#	was never refused before reading (a private key, KRL or signature
#	file was read up to 128 MiB); sshkey_try_load_public() read a .pub
#	line with no bound.  A sparse 200 MiB file (no disk used) is given
#	to ssh-keygen -y (private key) and -e (public key first); maxrss.py
#	reports each run's largest resident set.  Controls: a key read from
#	a regular file and from a pipe (ssh-add -'s case, which 93d6348ae
#	repaired upstream) still works.
#	Placed in the Public Domain.

tid="keyfile-size-limit: a key file over the limit is refused unread"
fixed_in=10.5p1
[ -n "$HPN_TOP" ] || fatal "HPN_TOP not set"
. $HPN_TOP/tests/security/lib.sh

PY=/usr/bin/python3
[ -x $PY ] || fatal "python3 is needed (make deps)"
D=$OBJ/sec-keysize
rm -f $D.*
truncate -s 200M $D.big || fatal "cannot make a sparse file"
chmod 600 $D.big
${SSHKEYGEN} -q -t ed25519 -N '' -C sec -f $D.key || fatal "keygen"
LIMIT_KB=65536		# well above a key's needs, well below 128 MiB

# big FLAVOUR KEYGEN OPTION: 1 when ssh-keygen OPTION -f big grew past
# LIMIT_KB or was still reading after SECS (stock's private key path
# reads 4 KiB at a time into a buffer it copies as it grows: minutes),
# 0 when it refused the file at once
SECS=20
big() {
	rm -f $D.out $D.err
	$PY $HPN_TOP/tests/security/maxrss.py $SECS $2 $3 -f $D.big \
	    > $D.out 2> $D.err < /dev/null
	set -- $1 $2 $3 `sed -n 's/^RESULT exit=\([^ ]*\) maxrss_kb=\([0-9]*\)$/\1 \2/p' $D.out`
	[ -n "$5" ] || { cat $D.out $D.err >&2; fatal "$1 $3: no result"; }
	case "$4" in
	1|255) ;;
	killed)	verbose "$tid: $1 $3: still reading after $SECS s (maxrss $5 KiB)"
		return 1 ;;
	*)	cat $D.err >&2; fatal "$1 $3: exit $4 on a file that is no key" ;;
	esac
	if [ "$5" -gt $LIMIT_KB ]; then
		verbose "$tid: $1 $3: exit $4, maxrss $5 KiB: the file was read"
		return 1
	fi
	verbose "$tid: $1 $3: exit $4, maxrss $5 KiB: `head -n 1 $D.err`"
	return 0
}

scenario() {
	case "$1" in
	stock)	_kg=$HPN_STOCK_TREE/ssh-keygen ;;
	*)	_kg=${SSHKEYGEN} ;;
	esac
	# controls: the key, from its file and from a pipe
	_pub=`cut -d' ' -f2 $D.key.pub`
	[ "`$_kg -y -f $D.key | cut -d' ' -f2`" = "$_pub" ] ||
		fatal "$1: ssh-keygen -y cannot read a key file"
	[ "`cat $D.key | $_kg -y -f /dev/stdin | cut -d' ' -f2`" = "$_pub" ] ||
		fatal "$1: ssh-keygen -y cannot read a key from a pipe"
	_n=0
	big $1 $_kg -y || _n=`expr $_n + 1`
	big $1 $_kg -e || _n=`expr $_n + 1`
	[ $_n -eq 1 ] && [ "$1" = stock ] &&
		fatal "stock: one of the two paths does not show the flaw"
	[ $_n -eq 0 ]
}

sec_run scenario
rm -f $D.*
