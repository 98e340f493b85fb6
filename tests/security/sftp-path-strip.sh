#	Upstream 073faa6be, first half (no CVE): sftp's path_strip() read the
#	byte before an empty prefix.  The prefix is the remote working
#	directory, empty when the server answers REALPATH "." with an empty
#	name; ls strips it from every name it lists.  sftpfake.py answers so
#	and lists two files; sftp runs "ls" under valgrind, which sees the
#	read before the heap block.
#	Placed in the Public Domain.

tid="sftp-path-strip: no read before an empty remote directory name"
fixed_in=10.4p1
[ -n "$HPN_TOP" ] || fatal "HPN_TOP not set"
. $HPN_TOP/tests/security/lib.sh

PY=/usr/bin/python3
[ -x $PY ] || fatal "python3 is needed (make deps)"
command -v valgrind >/dev/null || fatal "valgrind is needed (make deps)"
D=$OBJ/sec-pathstrip
rm -rf $D
mkdir -p $D || fatal "cannot make $D"
cat > $D/spec.json <<'_EOF'
{"cwd": "/", "cwd_name": "",
 "nodes": {"/": {"dir": [[["alpha", "f"], ["beta", "f"]]]},
	   "/alpha": {"file": "a"}, "/beta": {"file": "b"}}}
_EOF
printf '#!/bin/sh\nexec %s %s %s %s\n' $PY $HPN_TOP/tests/security/sftpfake.py \
    $D/spec.json $D/fake.log > $D/srv
chmod +x $D/srv
echo ls > $D/batch

scenario() {
	case "$1" in
	stock)	_sftp=$HPN_STOCK_TREE/sftp ;;
	*)	_sftp=${SFTP} ;;
	esac
	rm -f $D/fake.log $D/out $D/vg
	(cd $D && timeout 120 valgrind -q --log-file=$D/vg \
	    $_sftp -b $D/batch -D $D/srv > $D/out 2>&1 < /dev/null)
	_rc=$?
	# the server's empty name was asked for and the listing shown
	grep -q '^REALPATH \.$' $D/fake.log && grep -q alpha $D/out &&
	    grep -q beta $D/out || {
		cat $D/out $D/fake.log $D/vg >&2
		fatal "$1: no listing of the fake server (exit $_rc)"
	}
	if grep -q 'Invalid read' $D/vg; then
		verbose "$tid: $1: valgrind: `grep -A1 -m1 'Invalid read' $D/vg | sed 's/^==[0-9]*== *//' | tr '\n' ' '`"
		return 1
	fi
	[ $_rc -eq 0 ] || {
		cat $D/out $D/vg >&2
		fatal "$1: sftp exit $_rc"
	}
	[ -s $D/vg ] && {
		cat $D/vg >&2
		fatal "$1: valgrind reported something else"
	}
	verbose "$tid: $1: listed, valgrind clean"
	return 0
}

sec_run scenario
rm -rf $D
