#	HPN patch set: the SFTP transfer engine (src/xfer/) against a
#	hostile server.  tests/regress/hpn-sftp-hostile.py relays a real
#	sftp-server and replaces chosen replies: a wrong type, any status
#	code, an id never used or already answered, a truncated body, handles
#	and names of any length, short, long and empty data, an EOF too early,
#	sizes of 0 and 2^64-1, the connection closed anywhere.  For get, get
#	-r, put, put -r, scp both ways, resume (-Z) and -n 2, each case checks
#	that its rule fired (the relay's --log), the exit status (never a
#	signal, never past a bounded time), the message naming the request,
#	that nothing outside the target changed (the source, the scratch
#	directory), and that every file left is the source's bytes or a
#	prefix of them, shorter (no holes, no file that looks complete and is
#	not), but for the bytes of data the server made up itself (each one
#	of them an 'x', no more of them than it sent).  Then a sweep of every
#	request type with every kind of reply checks the same invariants
#	without expected messages: where the rule fired, an exit status of 0,
#	1 or 255; where it did not, a clean transfer.  The server is started
#	by scp -D/sftp -D (and by a stand-in for ssh with -n: scp -S).
#	Placed in the Public Domain.

tid="hpn sftp hostile server"

[ -n "$HPN_TOP" ] || skip "HPN_TOP not set"
. $HPN_TOP/tests/regress/sftp-lib.sh
HOSTILE=$HPN_TOP/tests/regress/hpn-sftp-hostile.py
W=$OBJ/hpnhostile
rm -rf $W
mkdir -p $W/src/tree/sub $W/dst $W/remote
TO=60		# s: every client run, at most (then it is a hang)

head -c 3145728 /dev/urandom > $W/src/big
for i in 0 1 2 3 4; do
	head -c `expr 100000 \* \( $i + 1 \)` /dev/urandom > $W/src/tree/f$i
done
head -c 70000 /dev/urandom > $W/src/tree/sub/g
mkdir -p $W/src/tree/sub/s2
head -c 5000 /dev/urandom > $W/src/tree/sub/s2/h
head -c 20000000 /dev/urandom > $W/src/huge	# -n: in parts
(cd $W/src && find . -type f | LC_ALL=C sort | xargs sha256sum) > $W/src.sum

# the stand-in for ssh (-S, -n): whatever it is asked, the server
printf '#!/bin/sh\nexec %s/srv\n' $W > $W/fakessh
chmod +x $W/fakessh

# srv RULE...: the server for the next run
srv() {
	_r=""
	for _x in "$@"; do
		_r="$_r --rule '$_x'"
	done
	rm -f $W/inst $W/log
	printf '#!/bin/sh\nexec %s %s --timeout %s --log %s %s %s -- %s\n' \
	    "$PY" "$HOSTILE" $TO $W/log "$INST $RATE" "$_r" "$SFTPSERVER" > $W/srv
	chmod +x $W/srv
}

# client MODE: one transfer (rc in $W/rc, stderr in $W/err)
client() {
	rm -rf $W/dst $W/remote
	mkdir -p $W/dst $W/remote
	case $1 in
	get)	batch "get $W/src/big $W/dst/big" ;;
	getr)	batch "get -r $W/src/tree $W/dst/" ;;
	put)	batch "put $W/src/big $W/remote/big" ;;
	putr)	batch "put -r $W/src/tree $W/remote/" ;;
	rsget)	head -c 1500000 $W/src/big > $W/dst/big ;;
	rsput)	head -c 1500000 $W/src/big > $W/remote/big ;;
	esac
	case $1 in
	get|getr|put|putr)
		set -- timeout $TO ${SFTP} -D $W/srv -b $W/batch ;;
	scpget)	set -- timeout $TO ${SCP} -q -D $W/srv \
		    somehost:$W/src/big $W/dst/big ;;
	scpput)	set -- timeout $TO ${SCP} -q -D $W/srv \
		    $W/src/big somehost:$W/remote/big ;;
	scpputr) set -- timeout $TO ${SCP} -q -r -D $W/srv \
		    $W/src/tree somehost:$W/remote/ ;;
	rsget)	set -- timeout $TO ${SCP} -q -Z -S $W/fakessh \
		    somehost:$W/src/big $W/dst/big ;;
	rsput)	set -- timeout $TO ${SCP} -q -Z -S $W/fakessh \
		    $W/src/big somehost:$W/remote/big ;;
	n2get)	set -- timeout $TO ${SCP} -q -n 2 -S $W/fakessh \
		    somehost:$W/src/huge $W/dst/huge ;;
	n2put)	set -- timeout $TO ${SCP} -q -n 2 -S $W/fakessh \
		    $W/src/huge somehost:$W/remote/huge ;;
	*)	fatal "unknown mode $1" ;;
	esac
	"$@" > $W/out 2> $W/err < /dev/null
	echo $? > $W/rc
}

# target MODE: where MODE's files land
target() {
	case $1 in
	get|getr|scpget|rsget|n2get) echo $W/dst ;;
	*) echo $W/remote ;;
	esac
}

# made: the bytes of data the server made up itself in the last run (the
# relay's log: "READ id: data:N", a DATA of N bytes 'x'; "READ id:
# type:DATA", one)
made() {
	awk '$1 == "READ" && $3 ~ /^data:/ { sub(/^data:/, "", $3); n += $3 }
	    $1 == "READ" && $3 == "type:DATA" { n++ }
	    END { print n + 0 }' $W/log 2>/dev/null || echo 0
}

# state MODE WHAT: nothing outside the target changed, and every file in it
# is the source's bytes or a shorter prefix of them (SHORT: how many were
# short), but for bytes the server made up: each an 'x', as many at most
# as it sent.
state() {
	(cd $W/src && find . -type f | LC_ALL=C sort | xargs sha256sum) |
	    cmp -s - $W/src.sum || fail "$2: the source changed"
	_o=`ls $W | grep -v -x -e src -e src.sum -e fakessh -e dst -e remote \
	    -e srv -e batch -e out -e err -e rc -e inst -e log`
	[ -z "$_o" ] || fail "$2: outside the target: $_o"
	SHORT=0
	_made=`made`
	_t=`target $1`
	for _f in `cd $_t && find . -type f`; do
		case $_f in
		./big|./huge) _s=$W/src/$_f ;;
		./tree/*) _s=$W/src/$_f ;;
		*)	fail "$2: a file the source does not have: $_f"
			continue ;;
		esac
		_n=`stat -c %s $_t/$_f`
		_m=`stat -c %s $_s`
		if [ $_n -gt $_m ]; then
			fail "$2: $_f is longer than its source ($_n > $_m)"
		elif ! cmp -s -n $_n $_t/$_f $_s &&
		    ! cmp -l -n $_n $_t/$_f $_s | awk -v m=$_made '
		    $2 != 170 { bad = 1 } END { exit (bad || NR > m) }'; then
			fail "$2: $_f is not a prefix of its source (made up: $_made bytes)"
		elif [ $_n -lt $_m ]; then
			SHORT=`expr $SHORT + 1`
		fi
	done
}

# case MODE RULES RC PATTERN [short|sweep]: a run with its expected exit
# status (x: any of the programs' own, 0, 1 or 255: not a signal, a hang
# or a program that did not run), a pattern of its stderr (-: none), and
# whether a short file may be left with success ("short": the server said
# the file ended there).  The rules must fire (the relay's log); "sweep":
# "short", or, where they did not fire, a clean transfer (status 0, every
# file whole).
case_() {
	_m=$1 _rule=$2 _rc=$3 _pat=$4 _sh=$5
	_w="$_m $_rule"
	set -f
	srv $_rule	# rules apart, as words (never globbed)
	set +f
	client $_m
	_got=`cat $W/rc`
	if [ -s $W/log ]; then
		[ "$_sh" = sweep ] && _sh=short
	elif [ "$_sh" = sweep ]; then
		_rc=0 _sh=""	# not fired
	else
		fail "$_w: the rule never fired"
	fi
	if [ $_got -eq 124 ]; then
		fail "$_w: hung (killed after $TO s)"
	elif [ $_got -gt 128 ] && [ $_got -lt 255 ]; then
		fail "$_w: killed by signal `expr $_got - 128`: `tail -n 2 $W/err`"
	elif [ "$_rc" = x ]; then
		case $_got in
		0|1|255) ;;
		*) fail "$_w: exit status $_got: `tail -n 3 $W/err`" ;;
		esac
	elif [ $_got -ne $_rc ]; then
		fail "$_w: exit status $_got, not $_rc: `tail -n 3 $W/err`"
	fi
	if [ "$_pat" != - ] && ! grep -E -q -e "$_pat" $W/err; then
		fail "$_w: no \"$_pat\" in: `tail -n 3 $W/err`"
	fi
	state $_m "$_w"
	if [ $SHORT -gt 0 ] && [ $_got -eq 0 ] && [ "$_sh" != short ]; then
		fail "$_w: $SHORT files left short, and success"
	fi
	trace "$_w: $_got `tail -n 1 $W/err`"
}

INST=""
RATE=""

verbose "$tid: the early requests (with INIT)"
# the crash that started this: REALPATH "." answered without a name
case_ get 'REALPATH:*:status:0' 255 "Need cwd"
case_ get 'REALPATH:*:type:ATTRS' 255 "Expected SSH2_FXP_NAME"
case_ get 'REALPATH:*:type:HANDLE' 255 "Expected SSH2_FXP_NAME"
case_ get 'REALPATH:1:status:0' 0 -
case_ get 'REALPATH:1:type:ATTRS' 0 -
case_ get 'REALPATH:1:count:0' 0 -
# replies to the early requests with the id 0, which the early requests
# not sent have: each was taken as theirs, and the OPENDIR's HANDLE, taken
# as an upload's OPEN's, crashed the client (SIGSEGV) at the transfer's
# end (xfer harness, 2026-11-28); alone it was dropped without a word
case_ getr 'REALPATH:1:id:zero REALPATH:1:id:zero STAT:1:id:zero OPENDIR:1:id:zero' 255 "ID mismatch"
case_ getr 'OPENDIR:1:id:zero' 255 "ID mismatch"
case_ getr '*:*:id:zero' 255 "ID mismatch"
case_ getr 'OPENDIR:1:status:0' 0 -
case_ getr 'OPENDIR:1:type:NAME' 0 -
case_ scpget 'STAT:1:type:NAME' 0 -
case_ scpget 'LSTAT:*:type:NAME' 255 "Expected SSH2_FXP_ATTRS"
case_ scpput 'OPEN:1:type:NAME' 0 -
case_ scpput 'OPEN:1:handle:300' 0 -
case_ scpput 'STAT:1:status:0' 0 -
case_ scpput 'WRITE:1:status:4' 1 "write remote"
case_ get 'EXTENDED:1:type:NAME' 255 "limits failed"

verbose "$tid: replies to a download's requests"
case_ get 'STAT:*:status:0' 1 "stat remote"
case_ get 'STAT:*:size:0' 0 -
case_ get 'STAT:*:size:18446744073709551615' 0 -
case_ get 'OPEN:*:status:0' 1 "remote open"
case_ get 'OPEN:*:status:99' 1 "remote open"
case_ get 'OPEN:*:type:ATTRS' 255 \
    'download ".*big": OPEN \(request [0-9]+\): Expected SSH2_FXP_HANDLE'
case_ get 'OPEN:*:handle:300' 255 "a handle of 300 bytes"
case_ get 'OPEN:*:handle:256' x -
case_ get 'OPEN:*:handle:0' x -
case_ get 'READ:*:type:HANDLE' 255 \
    'READ of [0-9]+ bytes at 0 \(request [0-9]+\): Expected SSH2_FXP_DATA'
case_ get 'READ:2:type:STATUS' 1 "read remote.*Bad message"
case_ get 'READ:2:status:4' 1 "read remote"
case_ get 'READ:2:id:new' 255 "not waiting for one"
case_ get 'READ:2:id:old' 255 "not waiting for one"
case_ get 'READ:2:id:twice' 255 "not waiting for one"
case_ get 'READ:1:trunc' 255 "parse data"
case_ get 'READ:2:data:262000' 255 "more data than asked for"
case_ get 'READ:2:data:300000' 255 "message too long"
case_ get 'READ:2:data:0' 0 -
case_ get 'READ:*:data:0' 1 "replies in a row with no data"
case_ get 'READ:2:eof' 0 -
case_ get 'READ:1:eof' 0 - short
case_ get 'READ:3:hangup' 255 "Connection closed|Couldn't read packet"
case_ get 'CLOSE:*:status:4' 1 "close remote"
case_ get 'CLOSE:*:type:DATA' 255 'CLOSE \(request [0-9]+\): Expected'
case_ get 'READ:2:data:1' 0 -

verbose "$tid: replies to a directory download's requests"
# the top's OPENDIR and tree with INIT (the tree taken where it opens,
# the OPENDIR where not)
case_ getr 'OPENDIR:*:status:0 TREE:*:status:0' 1 "remote readdir"
case_ getr 'OPENDIR:*:handle:300 TREE:*:handle:300' 255 "a handle of 300 bytes"
# the top is opened as a tree with INIT (tree@: the TREE request), its
# READDIRs (TREEDIR) naming it (handle-ref@): a reply to them before the
# TREE's breaks the order; a tree that fails leaves the OPENDIR's listing
case_ getr 'TREE:1:late' 255 "answered before its OPENDIR"
case_ getr 'TREE:1:status:3' 0 -
# a tree's names: relative to its top, in the directory the walk stands
# in or one it is in, "d" on directories no deeper than asked
case_ getr 'TREEDIR:1:tname:d:d:../evil' 255 'suspect name "\.\./evil" in a tree'
case_ getr 'TREEDIR:1:tname::f:s2/..' 255 'suspect name "s2/\.\."'
case_ getr 'TREEDIR:1:tname::f:/etc' 255 'suspect name "/etc"'
case_ getr 'TREEDIR:1:tname::f:s2//x' 255 'suspect name "s2//x"'
case_ getr 'TREEDIR:1:tname::f:s2/' 255 'suspect name "s2/"'
case_ getr 'TREEDIR:1:tname::f:nowhere/x' 255 'in no directory'
case_ getr 'TREEDIR:1:tname:d:f:x' 255 'listed as a directory'
case_ getr 'TREEDIR:1:tdeep:70' 255 'deeper than 63 levels'
case_ getr 'TREEDIR:1:tname:d:d:f1' 0 'sent "f1" again'
case_ getr 'TREEDIR:1:tname::f:f1' 0 'sent "f1" again'
case_ getr 'TREEDIR:*:status:4' 1 "Couldn't read directory"
case_ getr 'TREEDIR:1:type:ATTRS' 255 "Expected SSH2_FXP_NAME"
case_ getr 'TREEDIR:*:type:NAME' 1 'the listing goes round'
# a server without tree@ (sftp-server -P tree): asked for one tree only,
# with INIT, before its VERSION says so (refused: the OPENDIR's listing
# then); each subdirectory's own OPENDIR, its READDIRs naming it
SFTPSERVER_TREE=$SFTPSERVER
SFTPSERVER="$SFTPSERVER -P tree"
srv 'TREE:*:status:0'
client getr
[ "`grep -c . $W/log`" -le 1 ] ||
	fail "a server without tree@ was asked for a tree after INIT: `cat $W/log`"
[ "`cat $W/rc`" = 0 ] ||
	fail "get -r without tree@: exit status `cat $W/rc`: `tail -n 3 $W/err`"
state getr "get -r without tree@"
[ $SHORT = 0 ] || fail "get -r without tree@: $SHORT files short"
diff -r $W/src/tree $W/dst/tree > /dev/null ||
	fail "get -r without tree@: the copy differs"
case_ getr 'OPENDIR:2:late' 255 "answered before its OPENDIR"
case_ getr 'OPENDIR:2:status:3' 1 "remote readdir"
# a plain listing's names (the top's, its READDIRs with INIT)
case_ getr 'READDIR:1:names:../evil' 0 'suspect path "\.\./evil"'
case_ getr 'READDIR:1:names:a/b' 0 'suspect path "a/b"'
case_ getr 'READDIR:1:names:..' 0 'suspect path "\.\."'
case_ getr 'READDIR:1:names:' 0 'suspect path ""'
case_ getr 'READDIR:1:count:5' 255 "parse filenames"
case_ getr 'READDIR:1:count:4294967295' 255 "nonsensical|parse filenames"
case_ getr 'READDIR:1:type:ATTRS' 255 "Expected SSH2_FXP_NAME"
case_ getr 'READDIR:*:status:4' 1 "Couldn't read directory"
case_ getr 'READDIR:*:type:NAME' 1 'the listing goes round'
case_ getr 'READDIR:1:names:f1' 0 'sent "f1" again'
SFTPSERVER=$SFTPSERVER_TREE
case_ getr 'READ:*:eof' 0 - short
case_ getr 'REALPATH:*:status:4' 255 -
case_ getr 'OPEN:3:status:2' 1 "remote open"

verbose "$tid: replies to an upload's requests"
case_ put 'OPEN:*:status:0' 1 "dest open"
case_ put 'OPEN:*:type:DATA' 255 'upload ".*big": OPEN'
case_ put 'WRITE:3:status:4' 1 "write remote"
case_ put 'WRITE:*:type:NAME' 255 'WRITE of [0-9]+ bytes at [0-9]+'
case_ put 'WRITE:5:hangup' 255 "Couldn't send packet|Connection closed"
case_ put 'CLOSE:*:status:4' 1 "close remote"
case_ putr 'MKDIR:*:status:4' 0 -
case_ putr 'MKDIR:*:type:HANDLE' 255 'MKDIR \(request [0-9]+\): Expected'
case_ putr 'STAT:*:status:2' x -
case_ putr 'OPEN:2:status:3' 1 "upload .* failed"
case_ putr 'SETSTAT:*:type:NAME' 255 'SETSTAT \(request [0-9]+\)'
case_ putr 'WRITE:*:hangup' 255 "Couldn't send packet|Connection closed"
# scp -r: the top's first files went whole with INIT behind its MKDIR
# (OPEN 1, its WRITEs and CLOSE naming it), taken as the files' own
case_ scpputr 'OPEN:1:status:3' 1 'dest open ".*/tree/f[0-4]": Permission denied'
case_ scpputr 'OPEN:1:type:NAME' 255 'OPEN \(request [0-9]+\): Expected'
case_ scpputr 'WRITE:1:status:4' 1 'write remote ".*/tree/f[0-4]": Failure'
case_ scpputr 'CLOSE:1:status:4' 1 'close remote ".*/tree/f[0-4]": Failure'
case_ scpputr 'CLOSE:1:id:zero' 255 "ID mismatch|none of ours|not waiting"
case_ scpputr 'OPEN:1:late' 0 -
case_ scpputr 'MKDIR:1:status:4' 0 -
case_ scpputr 'WRITE:*:hangup' 255 "Couldn't send packet|Connection closed"

verbose "$tid: verified resume (-Z)"
case_ rsget 'EXTENDED:2:type:NAME' 255 "Expected SSH2_FXP_EXTENDED_REPLY"
case_ rsget 'EXTENDED:2:trunc' 255 "parse hash reply"
case_ rsget 'EXTENDED:2:status:4' 1 "hash remote"
case_ rsput 'EXTENDED:2:type:NAME' 255 "Expected SSH2_FXP_EXTENDED_REPLY"
case_ rsput 'EXTENDED:2:status:4' 1 "hash remote"
case_ rsget 'STAT:*:size:18446744073709551615' x -

verbose "$tid: -n 2"
RATE="--rate 40000000"		# the second joins in its middle
case_ n2get 'READ:4:id:new' 255 "not waiting for one"
case_ n2get 'STAT:*:size:18446744073709551615' x -
case_ n2put 'WRITE:4:status:4' 1 "write remote"
INST="--instance $W/inst:2"	# the second connection only
case_ n2get 'READ:2:type:HANDLE' 0 "connection 2 of 2 lost"
case_ n2get 'READ:3:hangup' 0 "connection 2 of 2 lost"
case_ n2put 'WRITE:2:id:new' 0 "connection 2 of 2 lost"
INST=""
RATE=""

# Every request type with every kind of reply: the invariants only.  CI
# runs a sample (two modes, the replies most unlike the ones due);
# HPN_HOSTILE_SWEEP=full runs all of them (some 700 runs, ~8 minutes).
verbose "$tid: sweep (${HPN_HOSTILE_SWEEP:-sample})"
if [ "$HPN_HOSTILE_SWEEP" = full ]; then
	modes="get getr putr scpput scpputr"
	acts="status:0 status:1 status:2 type:STATUS type:HANDLE type:DATA
	    type:NAME type:ATTRS id:new id:zero id:twice trunc handle:0 data:0
	    size:18446744073709551615 hangup"
else
	modes="getr putr"
	acts="status:0 status:1 type:HANDLE type:NAME type:ATTRS id:twice
	    trunc hangup"
fi
for mode in $modes; do
	for t in REALPATH STAT LSTAT OPEN READ WRITE CLOSE SETSTAT OPENDIR \
	    READDIR MKDIR TREE TREEDIR; do
		for a in $acts; do
			# every READ answered with a byte of data more: an
			# endless file, as any client reads it (not a hang)
			[ "$t:$a" = READ:type:DATA ] && continue
			case_ $mode "$t:*:$a" x - sweep
		done
	done
done

rm -rf $W
