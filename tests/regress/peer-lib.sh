#	HPN patch set: what the regress tests that talk to a Python stand-in
#	of another SSH implementation share (hpn-none, hpn-scp-hpnssh,
#	hpn-metrics-hpnssh).  POSIX sh, sourced after test-exec.sh.
#	Placed in the Public Domain.

# peer_ssh_conf FILE PORT [LINE...]: an ssh_config at FILE whose host
# "hpnssh-peer" is the stand-in on 127.0.0.1:PORT, with the suite's user
# key and known hosts (the stand-in serves host.ssh-ed25519 under the
# alias localhost-with-alias), then each LINE ("LogLevel info").
peer_ssh_conf() {
	_f=$1 _p=$2
	shift 2
	{
		echo "Host hpnssh-peer"
		echo "	Hostname 127.0.0.1"
		echo "	Port $_p"
		echo "	IdentityFile $OBJ/ssh-ed25519"
		echo "	IdentitiesOnly yes"
		echo "	UserKnownHostsFile $OBJ/known_hosts"
		echo "	HostKeyAlias localhost-with-alias"
		echo "	BatchMode yes"
		for _l in "$@"; do
			echo "	$_l"
		done
	} > $_f
}

# peer_wait_listen PORT: until a socket listens on PORT, at most 5 s (the
# test's own commands then fail on a stand-in that never came up).
peer_wait_listen() {
	_i=0
	while [ $_i -lt 50 ] && ! ss -ltn 2>/dev/null | grep -q ":$1 "; do
		sleep 0.1
		_i=`expr $_i + 1`
	done
}
