#	HPN patch set: HPNBufferBudget, the memory all of hpnsshd's sessions'
#	windows may take together (issue 42).  On an emulated 1 Gbit/s,
#	100 ms path (a window there grows to 25 MB or more), six uploads at
#	once into readers that take 32 MiB and then stop: with a budget of
#	16 MiB the sessions' memory stays within it plus what a session costs
#	anyway, the server logs that the budget stopped a window, and once the
#	readers go on every byte arrives; without a budget (the control) the
#	same measure shows more.  After them a new session's window grows
#	again (the budget was given back), also where the session runs under
#	a wrapper (SshdSessionPath) whose process the listener reaps instead
#	of the session's.  Option values, -T and -G.
#	Placed in the Public Domain.

tid="hpn window budget"

# --- option values (no path needed)
for v in 1M 15M 0 -1 1Q autox; do
	${REAL_SSHD} -T -f $OBJ/sshd_config -o "HPNBufferBudget=$v" \
	    > $OBJ/hpnbu.out 2>&1 && fail "sshd took HPNBufferBudget=$v"
	grep -qi "bad hpnbufferbudget" $OBJ/hpnbu.out ||
		fail "sshd: no clear error for HPNBufferBudget=$v: `cat $OBJ/hpnbu.out`"
	${REAL_SSH} -G -F $OBJ/ssh_config -o "HPNBufferBudget=$v" x \
	    > $OBJ/hpnbu.out 2>&1 && fail "ssh took HPNBufferBudget=$v"
done
${REAL_SSHD} -T -f $OBJ/sshd_config | grep -qx "hpnbufferbudget auto" ||
	fail "sshd -T: the default is not auto"
${REAL_SSHD} -T -f $OBJ/sshd_config -o HPNBufferBudget=none |
    grep -qx "hpnbufferbudget none" || fail "sshd -T: none"
${REAL_SSHD} -T -f $OBJ/sshd_config -o HPNBufferBudget=2G |
    grep -qx "hpnbufferbudget 2097152" || fail "sshd -T: 2G not 2097152 KiB"
${REAL_SSH} -G -F $OBJ/ssh_config -o HPNBufferBudget=64M x |
    grep -qx "hpnbufferbudget 65536" || fail "ssh -G: 64M not 65536 KiB"

if [ -z "$HPN_TOP" ]; then
	fatal "HPN_TOP not set: bench/netpath is needed"
fi
PATH_TAG=hpnbu PATH_LOGLEVEL=DEBUG1
. $HPN_TOP/tests/regress/path-lib.sh
$NETPATH up --name $NP --rtt 100 --rate 1000 > $OBJ/hpnbu-path.log 2>&1 ||
	fatal "netpath up failed: `cat $OBJ/hpnbu-path.log`"

W=$OBJ/hpnbu
rm -rf $W
mkdir -p $W
chmod 755 $W
N=6
BUDGET=16777216		# 16 MiB
dd if=/dev/urandom of=$W/data bs=1048576 count=96 2>/dev/null

BPORT=`expr $PORT + 120`
NPORT=`expr $PORT + 121`
path_sshd budget ${REAL_SSHD} $BPORT "SshdSessionPath $SSHD_SESSION" \
    "SshdAuthPath $SSHD_AUTH" "HPNBufferBudget 16M"
path_sshd nobudget ${REAL_SSHD} $NPORT "SshdSessionPath $SSHD_SESSION" \
    "SshdAuthPath $SSHD_AUTH" "HPNBufferBudget none"
SLOG=$OBJ/hpnbu-sshd.budget.log
sed -e "s/^	Hostname.*/	Hostname $SADDR/" -e "s/^	Port.*/	Port $BPORT/" \
    $OBJ/ssh_config > $OBJ/ssh_config.hpnbu

# sessions NAME...: the "sshd-session: USER@notty" processes under the
# sshds NAME... started here (their pid files), not those of the suites
# that make check runs beside this one as the same user (pgrep -f found
# a session of OpenSSH's suite there)
sessions() {
	_tops=""
	for _n in "$@"; do
		_tops="$_tops `cat $OBJ/pidfile.$_n 2>/dev/null`"
	done
	ps -e -o pid=,ppid=,args= | awk -v tops="$_tops" \
	    -v want="sshd-session: $USER@notty" '
	BEGIN { n = split(tops, t, " "); for (i = 1; i <= n; i++) under[t[i]] = 1 }
	{ pid[NR] = $1; ppid[NR] = $2; a = $0
	  sub(/^ *[0-9]+ +[0-9]+ +/, "", a); args[NR] = a }
	END { for (pass = 0; pass < 8; pass++)
		for (i = 1; i <= NR; i++) if (ppid[i] in under) under[pid[i]] = 1
	  for (i = 1; i <= NR; i++)
		if ((pid[i] in under) && index(args[i], want) == 1) print pid[i] }'
}

# rss_sessions: the summed RSS (KiB) of the sessions' processes
rss_sessions() {
	for p in `sessions budget nobudget`; do
		awk '/^VmRSS:/ { print $2 }' /proc/$p/status 2>/dev/null
	done | awk '{ s += $1 } END { print s + 0 }'
}

# One idle session: what a session costs whatever its window.
$CNS ${REAL_SSH} -F $OBJ/ssh_config.hpnbu somehost "sleep 30" \
    < /dev/null > /dev/null 2>&1 &
idle=$!
path_pids="$path_pids $idle"
i=0
while [ -z "`sessions budget`" ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=`expr $i + 1`
done
sleep 1
base=`rss_sessions`
kill $idle 2>/dev/null
wait $idle 2>/dev/null
[ "$base" -gt 0 ] || fatal "no idle session found to measure"
verbose "$tid: an idle session: $base KiB"

# stalled PORT: $N uploads at once into readers that take 32 MiB and then
# stop; once the sessions' memory stops growing, their RSS in KiB in $rss;
# then the readers go on and every byte must arrive.
stalled() {
	rm -f $W/go $W/out.*
	pids=""
	for n in `seq 1 $N`; do
		$CNS timeout 120 ${REAL_SSH} -F $OBJ/ssh_config.hpnbu -p $1 \
		    somehost "head -c 33554432 > $W/out.$n; while [ ! -e $W/go ]; do sleep 0.1; done; cat >> $W/out.$n" \
		    < $W/data > $W/err.$n 2>&1 &
		pids="$pids $!"
	done
	path_pids="$path_pids $pids"
	# the readers have their 32 MiB, the windows have filled: the
	# sessions' memory stops growing (at most 30 s)
	prev=0 i=0 got=0
	while [ $i -lt 60 ]; do
		sleep 0.5
		now=`rss_sessions`
		got=0
		for n in `seq 1 $N`; do
			[ "`stat -c %s $W/out.$n 2>/dev/null`" = 33554432 ] &&
			    got=`expr $got + 1`
		done
		[ $got -eq $N ] && [ $now -le $prev ] && break
		prev=$now
		i=`expr $i + 1`
	done
	[ $got -eq $N ] || fail "port $1: only $got of $N readers got their 32 MiB"
	rss=`rss_sessions`
	touch $W/go
	for p in $pids; do
		wait $p || fail "port $1: an upload failed: `cat $W/err.* | tail -3`"
	done
	for n in `seq 1 $N`; do
		cmp -s $W/data $W/out.$n || fail "port $1: upload $n: data differ"
	done
}
# what a session costs anyway, $N times (README.hpn section 1: an idle
# session's RSS and 8 MiB: its stock window of 2 MiB, never from the
# budget, the packet layer's 1 MiB read buffer, allocation slack), plus
# the budget
limit=`expr \( $BUDGET / 1024 \) + $N \* \( $base + 8192 \)`

verbose "$tid: $N uploads into readers that stop, with a budget of 16 MiB"
m=`wc -l < $SLOG`
stalled $BPORT
verbose "$tid: stalled, the sessions held $rss KiB (limit $limit: the budget, $N x ($base + 8192))"
[ "$rss" -le "$limit" ] || fail "the sessions held $rss KiB, more than $limit KiB"
tail -n +`expr $m + 1` $SLOG | grep -q "HPNBufferBudget: .* held by channel windows" ||
	fail "the server did not log that the budget stopped a window"
c=`tail -n +\`expr $m + 1\` $SLOG | grep -c "HPNBufferBudget: .* held by channel windows"`
[ "$c" -le $N ] || fail "the budget was logged $c times by $N sessions"

# The control: without a budget the same measure must show more, or it
# could not tell the budget's effect.
verbose "$tid: the same without a budget (the control)"
stalled $NPORT
verbose "$tid: stalled, no budget: the sessions held $rss KiB"
[ "$rss" -gt "$limit" ] ||
	fail "without a budget the sessions held $rss KiB, within $limit: the measure shows nothing"

verbose "$tid: given back: a new session's window grows again"
m=`wc -l < $SLOG`
$CNS timeout 60 ${REAL_SSH} -F $OBJ/ssh_config.hpnbu somehost \
    "cat > $W/out.again" < $W/data || fail "the upload after them failed"
cmp -s $W/data $W/out.again || fail "the upload after them: data differ"
sleep 1
p=`peak $SLOG $m`
[ -n "$p" ] && [ "$p" -gt 16777216 ] ||
	fail "after the others ended the window stopped at ${p:-?}: the budget was not given back"

# A session that is no child of the listener's: SshdSessionPath names a
# wrapper that runs sshd-session as its own child (as bench/meter does),
# so the listener reaps the wrapper, not the process that held the
# window.  A session killed ends without freeing its channels (nothing
# given back by it): what it held must still go back once it is gone.  Before, the bench's sessions kept 1 GiB each, and
# after six of them every window stayed at the stock size (2 MB/s at
# 1 s).  An upload into a reader that takes 32 MiB and stops, its window
# grown to the budget (24 MiB), its session's process killed; then an
# upload whose window must grow past 16 MiB again.
verbose "$tid: given back by a session under a wrapper, killed"
printf '#!/bin/sh\n%s "$@"\nexit $?\n' "$SSHD_SESSION" > $W/session-wrap
chmod 755 $W/session-wrap
WPORT=`expr $PORT + 122`
path_sshd wrapped ${REAL_SSHD} $WPORT "SshdSessionPath $W/session-wrap" \
    "SshdAuthPath $SSHD_AUTH" "HPNBufferBudget 24M"
WLOG=$OBJ/hpnbu-sshd.wrapped.log
rm -f $W/out.w1 $W/out.w2
$CNS timeout 120 ${REAL_SSH} -F $OBJ/ssh_config.hpnbu -p $WPORT somehost \
    "head -c 33554432 > $W/out.w1; sleep 60" < $W/data > /dev/null 2>&1 &
cut=$!
path_pids="$path_pids $cut"
i=0
while [ "`stat -c %s $W/out.w1 2>/dev/null`" != 33554432 ] && [ $i -lt 300 ]; do
	sleep 0.1
	i=`expr $i + 1`
done
[ "`stat -c %s $W/out.w1 2>/dev/null`" = 33554432 ] ||
	fail "the first upload through the wrapper did not get its 32 MiB"
sleep 2			# its window fills with what the reader does not take
# the session's process that holds the window, killed (as the OOM killer
# or an administrator would): it frees no channel, gives nothing back
sp=`sessions wrapped`
[ `echo $sp | wc -w` = 1 ] || fail "not one session to kill: ${sp:-none}"
kill -9 $sp
wait $cut 2>/dev/null
i=0
while [ -n "`sessions wrapped`" ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=`expr $i + 1`
done
[ -z "`sessions wrapped`" ] || fail "the session killed did not end"
m=`wc -l < $WLOG`
$CNS timeout 60 ${REAL_SSH} -F $OBJ/ssh_config.hpnbu -p $WPORT somehost \
    "cat > $W/out.w2" < $W/data || fail "the upload after it failed"
cmp -s $W/data $W/out.w2 || fail "the upload after it: data differ"
sleep 1
p=`peak $WLOG $m`
trace "through the wrapper, after a session killed: peak window ${p:-?}"
[ -n "$p" ] && [ "$p" -gt 16777216 ] ||
	fail "after a session under a wrapper was killed the window stopped at ${p:-?}: what it held was not given back"

rm -rf $W
path_cleanup
