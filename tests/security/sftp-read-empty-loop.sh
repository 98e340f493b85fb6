#	Upstream c1cebbc7c (no CVE): sftp_download() and sftp_crossload()
#	took a DATA reply with no bytes as a short read and asked again for
#	the rest, for ever, against a server that answers every READ so.
#	Our transfer engine stops after 64 such replies, but upstream's
#	loops still run in ours with a rate limit (-l) and for scp -3.
#	sftpfake.py answers every READ with empty DATA; each client run is
#	given TO seconds, and the READs the fake saw are counted.
#	Placed in the Public Domain.

tid="sftp-read-empty-loop: reads answered with no data end the transfer"
fixed_in=10.4p1
[ -n "$HPN_TOP" ] || fatal "HPN_TOP not set"
. $HPN_TOP/tests/security/lib.sh

PY=/usr/bin/python3
[ -x $PY ] || fatal "python3 is needed (make deps)"
D=$OBJ/sec-emptyread
TO=10
rm -rf $D
mkdir -p $D/dl || fatal "cannot make $D"
cat > $D/spec.json <<'_EOF'
{"cwd": "/", "empty_reads": true,
 "nodes": {"/": {"dir": [[["f", "f"]]]}, "/f": {"file": "0123456789"}}}
_EOF
printf '#!/bin/sh\nexec %s %s %s %s\n' $PY $HPN_TOP/tests/security/sftpfake.py \
    $D/spec.json $D/fake.log > $D/srv
chmod +x $D/srv
echo "get f" > $D/batch

# run FLAVOUR NAME CMD...: 1 when CMD was still reading after TO seconds
run() {
	_rf=$1 _rn=$2
	shift 2
	rm -f $D/fake.log $D/out $D/dl/f
	(cd $D/dl && timeout $TO "$@" > $D/out 2>&1 < /dev/null)
	_rc=$?
	_reads=`grep -c '^READ' $D/fake.log`
	if [ $_rc -eq 124 ]; then
		verbose "$tid: $_rf $_rn: still reading after $TO s ($_reads READs)"
		return 1
	fi
	[ $_rc -eq 1 ] && grep -q "replies in a row with no data" $D/out &&
	    [ $_reads -ge 64 ] && [ $_reads -le 256 ] || {
		cat $D/out >&2
		fatal "$_rf $_rn: exit $_rc after $_reads READs, not the error expected"
	}
	verbose "$tid: $_rf $_rn: exit $_rc after $_reads READs: `grep -m1 'in a row' $D/out`"
	return 0
}

scenario() {
	case "$1" in
	stock)	_sftp=$HPN_STOCK_TREE/sftp _scp=$HPN_STOCK_TREE/scp ;;
	*)	_sftp=${SFTP} _scp=${SCP} ;;
	esac
	_n=0
	run $1 "sftp -l" $_sftp -l 1000 -b $D/batch -D $D/srv || _n=`expr $_n + 1`
	run $1 sftp $_sftp -b $D/batch -D $D/srv || _n=`expr $_n + 1`
	run $1 "scp -3" $_scp -s -D $D/srv -3 hostA:/f hostB:/g ||
		_n=`expr $_n + 1`
	# stock loops in all three; ours in none
	[ $_n -ne 0 ] && [ $_n -ne 3 ] && [ "$1" = stock ] &&
		fatal "stock: $_n of the 3 runs show the flaw"
	[ $_n -eq 0 ]
}

sec_run scenario
rm -rf $D
