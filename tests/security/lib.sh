#	Shared by the security regress tests (tests/security/cve-*.sh), which
#	run under OpenSSH's regress/test-exec.sh like tests/regress/*.sh.
#	Placed in the Public Domain.
#
# Each test states the release that fixed the flaw upstream (fixed_in=) and
# defines a scenario:
#
#	scenario FLAVOUR	FLAVOUR is "hpn" (our build) or "stock" (the
#				pristine build of our base, HPN_STOCK_TREE).
#				Returns 0 when the flaw does not show, 1 when
#				it does; says what it saw with verbose/trace.
#
# sec_run runs it on our build, which must not show the flaw, and, when the
# stock build predates the fix, on stock, which must: a test that cannot
# see the flaw where it exists proves nothing, so that fails too, and so
# does a missing stock build (make stock; scripts/run-regress.sh's
# STOCK_TREE).  A stock build of a release with upstream's fix is a part
# not tried (tests/lib/skips.sh).

. $HPN_TOP/tests/lib/skips.sh

# sec_stock_version: "10.3p1" of the stock build, or nothing.
sec_stock_version() {
	[ -n "$HPN_STOCK_TREE" ] && [ -x "$HPN_STOCK_TREE/sshd" ] || return 0
	$HPN_STOCK_TREE/sshd -V 2>&1 | sed -n 's/^OpenSSH_\([0-9.]*p[0-9]*\).*/\1/p'
}

# sec_older A B: release A is older than release B.
sec_older() {
	[ "$1" != "$2" ] &&
	    [ "`printf '%s\n%s\n' "$1" "$2" | sort -V | head -n 1`" = "$1" ]
}

# sec_sshd FLAVOUR: the sshd binary of FLAVOUR.
sec_sshd() {
	case "$1" in
	stock)	echo $HPN_STOCK_TREE/sshd ;;
	*)	echo ${REAL_SSHD} ;;
	esac
}

# sec_proxy FLAVOUR NAME [CONFIG LINES...]: writes $OBJ/sshd_NAME.FLAVOUR
# (test-exec's sshd_proxy, with FLAVOUR's helpers, any Subsystem line
# removed, then the given lines) and $OBJ/ssh_NAME.FLAVOUR, an ssh_config
# whose ProxyCommand runs FLAVOUR's sshd in inetd mode on it.
sec_proxy() {
	_f=$1 _n=$2
	shift 2
	_s=$OBJ/sshd_$_n.$_f _c=$OBJ/ssh_$_n.$_f
	if [ "$_f" = stock ]; then
		sed -e "s|$SSHD_SESSION|$HPN_STOCK_TREE/sshd-session|" \
		    -e "s|$SSHD_AUTH|$HPN_STOCK_TREE/sshd-auth|" $OBJ/sshd_proxy
	else
		cat $OBJ/sshd_proxy
	fi | grep -iv '^[[:space:]]*subsystem[[:space:]]' > $_s
	for _l in "$@"; do
		echo "$_l" >> $_s
	done
	grep -iv '^[[:space:]]*proxycommand[[:space:]]' $OBJ/ssh_proxy > $_c
	echo "proxycommand `sec_sshd $_f` -i -f $_s" >> $_c
}

# The site builds (sshd with PAM and GSSAPI; make site, make stock-site):
# tests of code compiled only with those run them instead of the hpn and
# stock builds.  sec_site_start makes sec_run use the stock site build as
# "stock"; sec_site FLAVOUR names FLAVOUR's site tree.
sec_site_start() {
	[ -n "$HPN_SITE_TREE" ] && [ -x "$HPN_SITE_TREE/sshd" ] ||
		fatal "$tid: no site build (HPN_SITE_TREE; make check-security builds it)"
	HPN_STOCK_TREE=$HPN_STOCK_SITE_TREE
}

sec_site() {
	case "$1" in
	stock)	echo $HPN_STOCK_SITE_TREE ;;
	*)	echo $HPN_SITE_TREE ;;
	esac
}

# sec_site_config FLAVOUR NAME [CONFIG LINES...]: writes
# $OBJ/sshd_NAME.FLAVOUR, test-exec's sshd_proxy with the helpers of
# FLAVOUR's site build, any Subsystem line removed, then the given lines.
sec_site_config() {
	_t=`sec_site $1` _s=$OBJ/sshd_$2.$1
	shift 2
	sed -e "s|$SSHD_SESSION|$_t/sshd-session|" \
	    -e "s|$SSHD_AUTH|$_t/sshd-auth|" $OBJ/sshd_proxy |
	    grep -iv '^[[:space:]]*subsystem[[:space:]]' > $_s
	for _l in "$@"; do
		echo "$_l" >> $_s
	done
}

sec_run() {
	_fn=$1
	[ -n "$fixed_in" ] || fatal "$tid: fixed_in is not set"
	verbose "$tid: hpn build"
	$_fn hpn || fail "$tid: the hpn build shows the flaw"
	_v=`sec_stock_version`
	if [ -z "$_v" ]; then
		fail "$tid: no stock build (HPN_STOCK_TREE: '$HPN_STOCK_TREE'): not shown that the test sees the flaw"
	elif sec_older "$_v" "$fixed_in"; then
		verbose "$tid: stock $_v (before $fixed_in) must show the flaw"
		if $_fn stock; then
			fail "$tid: stock $_v does not show the flaw: this test cannot detect it"
		fi
	else
		skip_part "the stock build (must show the flaw)" "stock $_v includes upstream's fix ($fixed_in)"
	fi
}

# sec_netns_start NAME: a network namespace of the test's own ($SEC_NS),
# deleted when the test exits.  The tunnel tests run client and server in
# it, so that the tun(4) devices both open live and die there.  Needs root
# and /dev/net/tun; skips (with the reason) without them.
sec_netns_start() {
	[ "`id -u`" = 0 ] || skip "$tid: needs root (network namespace, tun devices)"
	[ -c /dev/net/tun ] || skip "$tid: no /dev/net/tun"
	command -v ip >/dev/null || fatal "ip (iproute2) is needed (make deps)"
	SEC_NS=hpnsec-$1-$$
	ip netns add $SEC_NS || fatal "ip netns add $SEC_NS failed"
	trap 'ip netns delete $SEC_NS 2>/dev/null' EXIT
	trap 'exit 1' HUP TERM
	ip -n $SEC_NS link set lo up || fatal "no loopback in $SEC_NS"
}

# sec_tun FLAVOUR NAME: our client asks FLAVOUR's sshd (sec_proxy NAME)
# for a point-to-point tunnel, both inside $SEC_NS.  Prints "open tunN"
# when the server opened device tunN (the session's SSH_TUNNEL), or
# "rejected" when it refused tunnel forwarding; anything else returns 1
# with the client's output on stderr.  An open tunnel keeps the
# connection up after the command: the client is ended once it has
# printed, or after 60 s.
sec_tun() {
	_o=$OBJ/sec-tun.$2.$1
	rm -f $_o.out $_o.err
	ip netns exec $SEC_NS ${REAL_SSH} -F $OBJ/ssh_$2.$1 -v \
	    -o Tunnel=point-to-point -w any:any -o ExitOnForwardFailure=yes \
	    somehost 'echo "tunnel=$SSH_TUNNEL"' > $_o.out 2> $_o.err < /dev/null &
	_p=$!
	_i=0
	while kill -0 $_p 2>/dev/null && ! grep -q '^tunnel=' $_o.out; do
		_i=`expr $_i + 1`
		[ $_i -lt 600 ] || break
		sleep 0.1
	done
	kill $_p 2>/dev/null
	wait $_p 2>/dev/null
	_t=`sed -n 's/^tunnel=\(tun[0-9][0-9]*\)$/\1/p' $_o.out`
	if [ -n "$_t" ]; then
		echo "open $_t"
	elif grep -q "Server has rejected tunnel device forwarding" $_o.err; then
		echo rejected
	else
		cat $_o.out $_o.err >&2
		return 1
	fi
	rm -f $_o.out $_o.err
}

# An ssh-agent of a build on $SOCK (its log $K.agentlog), for the tests of
# agent constraints.  sec_agent_start FLAVOUR (stock: HPN_STOCK_TREE's,
# else ours) sets $_agent, $_add (that build's ssh-add) and $AGENT_PID;
# sec_agent_stop ends it, by SIGKILL if a busy one outlives 5 s of SIGTERM.
sec_agent_stop() {
	if [ -n "$AGENT_PID" ]; then
		kill $AGENT_PID 2>/dev/null
		_i=0
		while kill -0 $AGENT_PID 2>/dev/null && [ $_i -lt 50 ]; do
			_i=`expr $_i + 1`
			sleep 0.1
		done
		kill -9 $AGENT_PID 2>/dev/null
		wait $AGENT_PID 2>/dev/null
	fi
	AGENT_PID=
	rm -f $SOCK
}

sec_agent_start() {
	case "$1" in
	stock)	_agent=$HPN_STOCK_TREE/ssh-agent _add=$HPN_STOCK_TREE/ssh-add ;;
	*)	_agent=${SSHAGENT} _add=${SSHADD} ;;
	esac
	sec_agent_stop
	$_agent -D -a $SOCK > $K.agentlog 2>&1 &
	AGENT_PID=$!
	_i=0
	while [ ! -S $SOCK ]; do
		_i=`expr $_i + 1`
		if [ $_i -gt 100 ] || ! kill -0 $AGENT_PID 2>/dev/null; then
			cat $K.agentlog >&2
			fatal "$1: ssh-agent did not start"
		fi
		sleep 0.1
	done
}
