#	sftp-server's copy-data refused the same handle or the same name
#	string as source and target, but not one file under two names: a
#	copy until EOF into "./f" or a hard link of f wrote ahead of its own
#	reads until the disk was full (upstream 5a5e47740, 10.4p1).  Ours
#	also refuses a copy until EOF from what is not a regular file
#	(/dev/zero: the same endless write; upstream still does it).
#	No ssh: sftpcopy.py drives each build's sftp-server on pipes with
#	an 8 MiB file size limit, where an endless copy stops with EFBIG.
#	Placed in the Public Domain.

tid="sftp-server copy-data onto its own source"
fixed_in=10.4p1
[ -n "$HPN_TOP" ] || fatal "HPN_TOP not set"
. $HPN_TOP/tests/security/lib.sh

PY=/usr/bin/python3
[ -x $PY ] || PY=`command -v python3`
[ -n "$PY" ] || fatal "python3 is needed (make deps)"
D=$OBJ/sec-copydata
SIZE=262144	# f: 256 KiB

# copy FLAVOUR CASE: sftpcopy.py CASE against FLAVOUR's sftp-server in a
# fresh $D holding f; the copy-data's status in $_st.
copy() {
	case "$1" in
	stock)	_srv=$HPN_STOCK_TREE/sftp-server ;;
	*)	_srv=$SFTPSERVER ;;
	esac
	[ -x $_srv ] || fatal "$1: no $_srv"
	rm -rf $D
	mkdir -p $D
	head -c $SIZE /dev/urandom > $D/f
	cp $D/f $D/f.orig
	_st=`$PY $HPN_TOP/tests/security/sftpcopy.py $_srv $D $2` || {
		cat $D/server.log >&2
		fatal "$1: $2: sftpcopy.py failed"
	}
	_st=${_st#status=}
}

# size FILE
size() {
	stat -c %s $1
}

scenario() {
	_flaw=0
	# control: a copy until EOF into another file copies it all
	copy $1 control
	[ "$_st" = 0 ] && cmp -s $D/f.orig $D/h || {
		cat $D/server.log >&2
		fatal "$1: copy of f into h: status $_st, `size $D/h` bytes"
	}
	for c in dotslash hardlink; do
		copy $1 $c
		if [ `size $D/f` -gt $SIZE ]; then
			verbose "$tid: $1: $c: f grew to `size $D/f` bytes (status $_st)"
			_flaw=1
			continue
		fi
		[ "$_st" = 4 ] && cmp -s $D/f.orig $D/f &&
		    grep -q "same file" $D/server.log || {
			cat $D/server.log >&2
			fatal "$1: $c: status $_st, f `size $D/f` bytes"
		}
		verbose "$tid: $1: $c: refused, f unchanged"
	done
	copy $1 devzero
	if [ `size $D/out` -gt 0 ]; then
		verbose "$tid: $1: devzero: wrote `size $D/out` bytes (status $_st)"
		_flaw=1
	elif [ "$_st" = 4 ] && grep -q "not a regular file" $D/server.log; then
		verbose "$tid: $1: devzero: refused"
	else
		cat $D/server.log >&2
		fatal "$1: devzero: status $_st, nothing written"
	fi
	return $_flaw
}

sec_run scenario
rm -rf $D
