#	Helpers of the SFTP regress tests (hpn-sftp-tree.sh,
#	hpn-sftp-resume.sh), sourced after test-exec.sh.  Sets PY (python3:
#	the test is skipped without it) and PROXY; the functions use W, the
#	test's scratch directory.  Placed in the Public Domain.

PY=/usr/bin/python3
[ -x $PY ] || PY=`command -v python3`
[ -n "$PY" ] || skip "no python3"
. $HPN_TOP/tests/lib/skips.sh
PROXY=$HPN_TOP/tests/regress/hpn-sftp-proxy.py

# scp -D and sftp -D run a program: a script around each server
mkserver() {
	_f=$W/srv-$1
	shift
	printf '#!/bin/sh\nexec %s\n' "$*" > $_f
	chmod +x $_f
	echo $_f
}

# The proxy writes its report once the client has closed its end; scp and
# sftp need not wait for their server to exit, so the report may come a
# moment after them.  Remove it before a run, wait for it after.
waitrep() {
	_i=0
	while [ $_i -lt 100 ] && [ ! -s $W/rep ]; do
		sleep 0.1
		_i=`expr $_i + 1`
	done
	[ -s $W/rep ] || fail "$1: the proxy wrote no report"
}

# directories, then every file's SHA-256
treesum() {
	(cd "$1" && find . -type d | LC_ALL=C sort &&
	    find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
}

same() {
	treesum "$1" > $W/sum.1 2>&1
	treesum "$2" > $W/sum.2 2>&1
	if ! cmp -s $W/sum.1 $W/sum.2; then
		fail "$3: trees differ"
		diff $W/sum.1 $W/sum.2 | head -n 20
	fi
}

# flip FILE OFFSET: change the byte at OFFSET, whatever it is (writing a
# fixed byte into random data leaves it as it was once in 256 times)
flip() {
	_b=`od -An -tu1 -j $2 -N 1 $1 | tr -d ' '`
	[ -n "$_b" ] || fatal "flip: $1 has no byte $2"
	_n=`expr \( $_b + 1 \) % 256`
	printf "\\`printf %03o $_n`" | dd of=$1 bs=1 seek=$2 conv=notrunc 2>/dev/null
	[ "`od -An -tu1 -j $2 -N 1 $1 | tr -d ' '`" != "$_b" ] ||
		fatal "flip: byte $2 of $1 did not change"
}

# batch CMDS...: an sftp batch file, one command a line
batch() {
	: > $W/batch
	for _c in "$@"; do
		echo "$_c" >> $W/batch
	done
}
