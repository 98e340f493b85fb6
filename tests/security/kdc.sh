#	A Kerberos realm of the test's own for the security tests of sshd's
#	GSSAPI code (sourced after lib.sh; MIT krb5: krb5-kdc,
#	krb5-admin-server, krb5-user).
#	Placed in the Public Domain.
#
#	kdc_start DIR PORT
#		Realm HPNSEC.TEST with everything in DIR: krb5.conf,
#		kdc.conf, the database and its stash, the logs.  The KDC
#		(krb5kdc, PID in KDC_PID) listens on 127.0.0.1:PORT only.
#		Principals: host/HOSTNAME (KDC_HOST: this machine's name as
#		sshd's GSSAPIStrictAcceptorCheck sees it; key in
#		DIR/host.keytab) and hpnsec-user, whose ticket is got into
#		DIR/ccache.  Exports KRB5_CONFIG, KRB5_KDC_PROFILE,
#		KRB5_KTNAME (the host keytab, for sshd) and KRB5CCNAME (the
#		user's ticket, for the client).
#	kdc_authorize LOCALUSER
#		Lets hpnsec-user@ log in as LOCALUSER: k5login_directory in
#		the realm's krb5.conf names DIR/k5login, where the file
#		LOCALUSER lists the principal (krb5_kuserok() then reads
#		that, never the user's own ~/.k5login).
#	kdc_forwardable
#		Gets the user's ticket again, forwardable (kinit -f), so
#		that a client can delegate it.
#	kdc_stop
#		Kills the KDC by its PID and removes DIR.  Safe to call twice;
#		call it from the test's EXIT trap.

KDC_REALM=HPNSEC.TEST
KDC_PID=
KDC_DIR=

kdc_start() {
	KDC_DIR=$1
	_port=$2
	for _b in /usr/sbin/krb5kdc /usr/sbin/kdb5_util /usr/sbin/kadmin.local; do
		[ -x $_b ] || fatal "$_b is needed (make deps: krb5-kdc, krb5-admin-server)"
	done
	command -v kinit >/dev/null || fatal "kinit is needed (make deps: krb5-user)"
	KDC_HOST=`hostname | tr 'A-Z' 'a-z'`
	[ -n "$KDC_HOST" ] || fatal "no host name"
	rm -rf $KDC_DIR
	mkdir -p $KDC_DIR || fatal "mkdir $KDC_DIR"
	cat > $KDC_DIR/krb5.conf <<EOF
[libdefaults]
	default_realm = $KDC_REALM
	dns_lookup_kdc = false
	dns_lookup_realm = false
	dns_canonicalize_hostname = false
	qualify_shortname = ""
	rdns = false
	udp_preference_limit = 1
[realms]
	$KDC_REALM = {
		kdc = 127.0.0.1:$_port
	}
[domain_realm]
	$KDC_HOST = $KDC_REALM
EOF
	cat > $KDC_DIR/kdc.conf <<EOF
[kdcdefaults]
	kdc_listen = 127.0.0.1:$_port
	kdc_tcp_listen = 127.0.0.1:$_port
[realms]
	$KDC_REALM = {
		database_name = $KDC_DIR/principal
		key_stash_file = $KDC_DIR/stash
		acl_file = $KDC_DIR/kadm5.acl
		max_life = 1h
		supported_enctypes = aes256-cts-hmac-sha1-96:normal
	}
[logging]
	kdc = FILE:$KDC_DIR/kdc.log
	admin_server = FILE:$KDC_DIR/kadmin.log
	default = FILE:$KDC_DIR/krb5.log
EOF
	: > $KDC_DIR/kadm5.acl
	KRB5_CONFIG=$KDC_DIR/krb5.conf
	KRB5_KDC_PROFILE=$KDC_DIR/kdc.conf
	KRB5_KTNAME=FILE:$KDC_DIR/host.keytab
	KRB5CCNAME=FILE:$KDC_DIR/ccache
	export KRB5_CONFIG KRB5_KDC_PROFILE KRB5_KTNAME KRB5CCNAME
	/usr/sbin/kdb5_util -r $KDC_REALM create -s -P "hpnsec-master-$$" \
	    > $KDC_DIR/setup.log 2>&1 || {
		cat $KDC_DIR/setup.log >&2
		fatal "kdb5_util create failed"
	}
	for _q in "addprinc -randkey host/$KDC_HOST" \
	    "ktadd -k $KDC_DIR/host.keytab host/$KDC_HOST" \
	    "addprinc -randkey hpnsec-user" \
	    "ktadd -k $KDC_DIR/user.keytab hpnsec-user"; do
		/usr/sbin/kadmin.local -r $KDC_REALM -q "$_q" \
		    >> $KDC_DIR/setup.log 2>&1 || {
			cat $KDC_DIR/setup.log >&2
			fatal "kadmin.local $_q failed"
		}
	done
	/usr/sbin/krb5kdc -n -r $KDC_REALM > $KDC_DIR/krb5kdc.out 2>&1 &
	KDC_PID=$!
	# Until the KDC answers: the user's ticket, by its keytab.
	_i=0
	while ! kinit -k -t $KDC_DIR/user.keytab hpnsec-user \
	    > $KDC_DIR/kinit.log 2>&1; do
		_i=`expr $_i + 1`
		if [ $_i -gt 100 ] || ! kill -0 $KDC_PID 2>/dev/null; then
			cat $KDC_DIR/krb5kdc.out $KDC_DIR/kdc.log \
			    $KDC_DIR/kinit.log >&2
			kdc_stop
			fatal "the KDC did not answer"
		fi
		sleep 0.1
	done
	trace "KDC $KDC_PID on 127.0.0.1:$_port, host/$KDC_HOST@$KDC_REALM"
}

kdc_authorize() {
	mkdir -p $KDC_DIR/k5login || fatal "mkdir $KDC_DIR/k5login"
	echo "hpnsec-user@$KDC_REALM" > $KDC_DIR/k5login/$1 ||
		fatal "cannot write $KDC_DIR/k5login/$1"
	sed -i "s|^\[libdefaults\]\$|&\n\tk5login_directory = $KDC_DIR/k5login|" \
	    $KDC_DIR/krb5.conf || fatal "cannot edit $KDC_DIR/krb5.conf"
	grep -q "k5login_directory = $KDC_DIR/k5login" $KDC_DIR/krb5.conf ||
		fatal "no k5login_directory in $KDC_DIR/krb5.conf"
}

kdc_forwardable() {
	kinit -f -k -t $KDC_DIR/user.keytab hpnsec-user \
	    > $KDC_DIR/kinit.log 2>&1 || {
		cat $KDC_DIR/kinit.log >&2
		fatal "kinit -f failed"
	}
	klist -f 2>/dev/null | grep -q 'Flags: .*F' ||
		fatal "no forwardable ticket after kinit -f"
}

kdc_stop() {
	if [ -n "$KDC_PID" ]; then
		kill $KDC_PID 2>/dev/null
		wait $KDC_PID 2>/dev/null
	fi
	KDC_PID=
	[ -z "$KDC_DIR" ] || rm -rf $KDC_DIR
	KDC_DIR=
}
