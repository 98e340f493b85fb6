#	HPN patch set: a hostile client of hpnsftp-server
#	(tests/regress/hpn-sftp-hostile-client.py): hash-range@ with bad lengths,
#	offsets near 2^64, the most pieces and pieces too small, unknown and
#	malformed algorithm lists, handles that are no file's; handle-ref@
#	references of bad lengths, to unknown, closed, reused and failed
#	OPENs' ids; tree@ walks of a file, of nothing, 70 levels deep, past a
#	link to /, of a closed tree, 200 at once; messages cut short.  Each gets a STATUS error, or a clean
#	end of the session where upstream's own parse ends it (no signal, no
#	sanitizer report), the server answers on, and nothing but the file a
#	case writes on purpose changes.  Then the same server as internal-sftp
#	in a ChrootDirectory: escapes find nothing, and hash-range through a
#	reference to them is refused.  Under the sanitizer build, any report
#	file written meanwhile fails it (tests/lib/sanitizer.sh).
#	Placed in the Public Domain.

tid="hpn sftp hostile client"

[ -n "$HPN_TOP" ] || skip "HPN_TOP not set"
. $HPN_TOP/tests/regress/sftp-lib.sh
. $HPN_TOP/tests/lib/sanitizer.sh
HOSTILE=$HPN_TOP/tests/regress/hpn-sftp-hostile-client.py
W=$OBJ/hpnhostile
rm -rf $W
mkdir -p $W/d

# no_reports WHAT: no sanitizer report, in the output (a build whose
# reports go to stderr) or in a report file (log_path) since $W/san
no_reports() {
	! grep -q 'Sanitizer\|runtime error' $W/out ||
		fail "$1: a sanitizer report: `grep -A5 'Sanitizer\|runtime error' $W/out`"
	_r=`san_since $W/san`
	[ -z "$_r" ] || fail "$1: sanitizer reports: $_r: `head -n 8 $_r`"
}

verbose "$tid: sftp-server on a pipe"
san_mark $W/san
$PY $HOSTILE local $W/d $SFTPSERVER > $W/out 2>&1 ||
	fail "hostile client: `grep -v '^ok' $W/out | tail -n 5`"
trace "`grep -c '^ok' $W/out` checks passed"
no_reports "sftp-server on a pipe"

# The chroot must be owned by root and writable by no one else, to the top:
# not under the tree (the tarball's owner), so in /run as sftp-chroot.sh
# does with /var/run; removed on any exit.
echo "outside the chroot" > $W/outside
CHROOT=
if [ "`id -u`" = 0 ]; then
	CHROOT=`mktemp -d /run/hpnhostile.XXXXXX` || fatal "mktemp in /run"
	trap "rm -rf $CHROOT" 0
	chmod 755 $CHROOT
	echo "inside the chroot" > $CHROOT/inside
fi
if [ -z "$CHROOT" ]; then
	skip_part "internal-sftp in a ChrootDirectory" "needs root"
elif ! $OBJ/check-perm -m chroot "$CHROOT"; then
	skip_part "internal-sftp in a ChrootDirectory" "$CHROOT is unsuitable as ChrootDirectory"
else
	verbose "$tid: internal-sftp in a ChrootDirectory"
	echo "ForceCommand internal-sftp -d /" >> $OBJ/sshd_config
	start_sshd -oChrootDirectory=$CHROOT
	san_mark $W/san
	$PY $HOSTILE chroot inside $W/outside ${SSH} -F $OBJ/ssh_config -s \
	    somehost sftp > $W/out 2>&1 ||
		fail "chroot: `grep -v '^ok' $W/out | tail -n 5`"
	trace "chroot: `grep -c '^ok' $W/out` checks passed"
	stop_sshd
	no_reports "internal-sftp in a ChrootDirectory"
fi
[ "`cat $W/outside`" = "outside the chroot" ] || fail "outside file changed"
rm -rf $W
