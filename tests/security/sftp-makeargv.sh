#	Upstream 073faa6be, second half (no CVE), and what it left: sftp's
#	makeargv() copied the terminator of a line ending in a backslash and
#	read on past it.  Upstream's fix (10.4p1) covers a backslash outside
#	quotes; one ending a quoted argument still reads past the end in
#	10.5p1.  Tab completion hands makeargv() an exact-size heap copy of
#	the line, so valgrind sees the read: sftptab.py types each line and
#	a TAB into an interactive sftp (a pseudo-terminal; libedit) on
#	sftpfake.py.  Both lines must show the flaw on stock 10.3p1.
#	Placed in the Public Domain.

tid="sftp-makeargv: no read past a line ending in a backslash"
fixed_in=10.4p1
[ -n "$HPN_TOP" ] || fatal "HPN_TOP not set"
. $HPN_TOP/tests/security/lib.sh

PY=/usr/bin/python3
[ -x $PY ] || fatal "python3 is needed (make deps)"
command -v valgrind >/dev/null || fatal "valgrind is needed (make deps)"
D=$OBJ/sec-makeargv
rm -rf $D
mkdir -p $D || fatal "cannot make $D"
cat > $D/spec.json <<'_EOF'
{"cwd": "/",
 "nodes": {"/": {"dir": [[["alpha", "f"], ["beta", "f"]]]},
	   "/alpha": {"file": "a"}, "/beta": {"file": "b"}}}
_EOF
printf '#!/bin/sh\nexec %s %s %s %s\n' $PY $HPN_TOP/tests/security/sftpfake.py \
    $D/spec.json $D/fake.log > $D/srv
chmod +x $D/srv

# tab FLAVOUR NAME TEXT: 1 when completing TEXT read past its end
tab() {
	case "$1" in
	stock)	_sftp=$HPN_STOCK_TREE/sftp ;;
	*)	_sftp=${SFTP} ;;
	esac
	rm -f $D/fake.log $D/out $D/vg
	(cd $D && $PY $HPN_TOP/tests/security/sftptab.py "$3" -- \
	    `command -v valgrind` -q --log-file=$D/vg $_sftp -D $D/srv \
	    > $D/out 2>&1)
	_st=`sed -n 's/^EXIT //p' $D/out`
	# the completion ran: it asked the server for names after REALPATH
	sed '1,/^REALPATH/d' $D/fake.log 2>/dev/null |
	    grep -Eq '^(OPENDIR|LSTAT|STAT) ' || {
		cat $D/out $D/fake.log $D/vg >&2
		fatal "$1 $2: the completion did not run (exit $_st)"
	}
	if grep -A2 'Invalid read' $D/vg | grep -q makeargv; then
		verbose "$tid: $1 $2: valgrind: `grep -A1 -m1 'Invalid read' $D/vg | sed 's/^==[0-9]*== *//' | tr '\n' ' '`"
		return 1
	fi
	[ "$_st" = 0 ] && [ ! -s $D/vg ] || {
		cat $D/out $D/vg >&2
		fatal "$1 $2: sftp exit '$_st' or another valgrind report"
	}
	verbose "$tid: $1 $2: completed, valgrind clean"
	return 0
}

scenario() {
	_n=0
	tab $1 unquoted 'ls alp\' || _n=`expr $_n + 1`
	tab $1 quoted 'ls "alp\' || _n=`expr $_n + 1`
	# stock reads past both; ours neither
	[ $_n -eq 1 ] && [ "$1" = stock ] &&
		fatal "stock: one of the two lines does not show the flaw"
	[ $_n -eq 0 ]
}

sec_run scenario
rm -rf $D
