#!/bin/bash
# test-site.sh
#
# The installed hpnssh-server and hpnssh-client (test-deb.sh installs them)
# with the parts a site runs, all real: the shipped hpnsshd_config and
# /etc/pam.d/hpnsshd, Debian's PAM modules, an MIT KDC (krb5-kdc), libfido2.
# As root; hpnsshd on port 2222 (started and stopped here by its pid).
#
#   readiness  hpnsshd tells systemd's notification socket READY=1 once it
#              listens, RELOADING=1 and READY=1 again on SIGHUP
#   PAM        a local user with a password logs in by password and by
#              keyboard-interactive; a locked account is refused its
#              password, an expired one its key (PAM's account stack);
#              pam_limits' limit (limits.d) and pam_env's variable
#              (~/.pam_environment) are in the session; LC_* is passed
#   Kerberos   a realm, the host principal and its keytab made here, a KDC
#              on 127.0.0.1; kinit, then hpnssh -oGSSAPIAuthentication=yes
#              logs in with no key and no password; another principal is
#              refused
#   FIDO       hpnssh-sk-helper links libfido2 and answers an enrollment
#              request (no authenticator here: "device not found")
#
# Everything it makes (the user, a limits.d file, the KDC and its files,
# keytabs, processes) is removed on exit, also on failure.  ~20 s.
set -euo pipefail
start=$(date +%s)
PORT=2222
TUSER=hpnpkgsite
KDC_PORT=${PKGTEST_KDC_PORT:-8788}
REALM=HPNPKGTEST.INVALID
LIMITS=/etc/security/limits.d/90-hpnpkgsite.conf
NOFILE=777

say() { printf 'site-test: %s\n' "$*"; }
die() { printf 'site-test: FAIL: %s\n' "$*" >&2; exit 1; }
t() { local s=$1; shift; timeout --kill-after=5 "$s" "$@"; }

[ "$(id -u)" -eq 0 ] || die "must run as root"
for f in /usr/sbin/hpnsshd /usr/bin/hpnssh /usr/libexec/hpnssh-sk-helper /etc/pam.d/hpnsshd; do
	[ -e "$f" ] || die "$f missing: install hpnssh-server and hpnssh-client first (test-deb.sh)"
done
for c in krb5kdc kdb5_util kadmin.local kinit klist python3 ldd; do
	command -v "$c" >/dev/null || die "$c missing (make deps: krb5-kdc krb5-admin-server krb5-user python3)"
done
getent passwd "$TUSER" >/dev/null && die "user $TUSER exists; the test creates and removes it"
[ ! -e "$LIMITS" ] || die "$LIMITS exists; the test creates and removes it"
if (ss -Hltn "sport = :$PORT" 2>/dev/null || true) | grep -q .; then
	die "port $PORT is in use"
fi
if (ss -Hlun "sport = :$KDC_PORT"; ss -Hltn "sport = :$KDC_PORT") 2>/dev/null | grep -q .; then
	die "port $KDC_PORT (KDC) is in use; set PKGTEST_KDC_PORT"
fi

tmp=$(mktemp -d /tmp/hpn-sitetest.XXXXXX)
chmod 0755 "$tmp"
server_pid='' kdc_pid='' notify_pid='' user_made=''
cleanup() {
	local rc=$? p
	set +e
	for p in "$server_pid" "$kdc_pid" "$notify_pid"; do
		[ -n "$p" ] && kill -0 "$p" 2>/dev/null || continue
		kill "$p"
		for _ in $(seq 30); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -0 "$p" 2>/dev/null && kill -9 "$p"
	done
	[ -z "$user_made" ] || userdel -r "$TUSER" >/dev/null 2>&1
	rm -f "$LIMITS"
	rm -rf "$tmp"
	[ $rc -eq 0 ] || say "failed after $(( $(date +%s) - start ))s"
	exit $rc
}
trap cleanup EXIT
trap 'exit 143' TERM INT

# --- the build: what the distributions link ---------------------------------
libs() { ldd "$1" | awk '{print $1}' | tr '\n' ' '; }
need_lib() {	# need_lib BINARY SONAME...
	local b=$1 l s
	l=$(libs "$b")
	shift
	for s in "$@"; do
		case " $l " in *" $s."*) ;; *) die "$b does not link $s (ldd: $l)" ;; esac
	done
}
need_lib /usr/libexec/hpnsshd-session libpam.so libgssapi_krb5.so libaudit.so libselinux.so
need_lib /usr/libexec/hpnsshd-auth libpam.so libgssapi_krb5.so
need_lib /usr/bin/hpnssh libgssapi_krb5.so
need_lib /usr/libexec/hpnssh-sk-helper libfido2.so
cfg=$(/usr/sbin/hpnsshd -T 2>&1) || die "hpnsshd -T: $cfg"
for kv in "usepam yes" "pamservicename hpnsshd" "acceptenv LC_\*" "kbdinteractiveauthentication no"; do
	echo "$cfg" | grep -qx "$kv" || die "hpnsshd -T: no '$kv' from the shipped configuration"
done
say "links PAM, GSSAPI, audit, SELinux (hpnsshd-session), libfido2 (hpnssh-sk-helper); UsePAM yes, PAM service hpnsshd"

# --- FIDO: the helper answers ------------------------------------------------
rc=0
t 60 /usr/bin/hpnssh-keygen -t ed25519-sk -N '' -f "$tmp/id_sk" -vvv < /dev/null > "$tmp/sk.log" 2>&1 || rc=$?
[ $rc -ne 0 ] || die "hpnssh-keygen -t ed25519-sk made a key with no authenticator?"
grep -q 'sk_probe: [0-9]* device(s) detected' "$tmp/sk.log" &&
    grep -q 'hpnssh-sk-helper: Enrollment failed' "$tmp/sk.log" &&
    grep -q 'Key enrollment failed: device not found' "$tmp/sk.log" ||
	{ cat "$tmp/sk.log"; die "hpnssh-sk-helper did not answer the enrollment request through libfido2"; }
say "FIDO: hpnssh-sk-helper probed with libfido2 and answered: $(grep -o 'sk_probe: [0-9]* device(s) detected' "$tmp/sk.log")"

# --- the account -------------------------------------------------------------
useradd -m -s /bin/sh "$TUSER"
user_made=1
pw="pkg-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
echo "$TUSER:$pw" | chpasswd
home=$(getent passwd "$TUSER" | cut -d: -f6)
install -d -m 0700 -o "$TUSER" -g "$TUSER" "$home/.ssh"
/usr/bin/hpnssh-keygen -q -t ed25519 -N '' -C sitetest -f "$tmp/id_ed25519"
install -m 0600 -o "$TUSER" -g "$TUSER" "$tmp/id_ed25519.pub" "$home/.ssh/authorized_keys"
printf '%s soft nofile %s\n%s hard nofile %s\n' "$TUSER" $NOFILE "$TUSER" $NOFILE > "$LIMITS"
printf 'HPNPKG_PAMENV DEFAULT=set-by-pam-env\n' > "$home/.pam_environment"
chown "$TUSER:" "$home/.pam_environment"
printf '#!/bin/sh\necho %s\n' "$pw" > "$tmp/askpass"
chmod 0700 "$tmp/askpass"

# --- Kerberos: a realm of our own on 127.0.0.1 ---------------------------------
# The host principal is host/NAME, where NAME is what the client connects to
# and, with hpnsshd's strict acceptor check, the server's own host name:
# the host name if it resolves to loopback, else localhost with the check off.
host=$(hostname)
gss_opts=()
if ! getent ahostsv4 "$host" 2>/dev/null | awk '{print $1}' | grep -q '^127\.'; then
	say "note: $host does not resolve to 127.0.0.0/8: localhost and GSSAPIStrictAcceptorCheck=no"
	host=localhost
	gss_opts=(-o GSSAPIStrictAcceptorCheck=no)
fi
host=$(echo "$host" | tr 'A-Z' 'a-z')
mkdir -p "$tmp/kdc"
cat > "$tmp/krb5.conf" <<EOF
[libdefaults]
	default_realm = $REALM
	dns_lookup_kdc = false
	dns_lookup_realm = false
	dns_canonicalize_hostname = false
	rdns = false
	udp_preference_limit = 1
[realms]
	$REALM = {
		kdc = 127.0.0.1:$KDC_PORT
	}
[domain_realm]
	$host = $REALM
EOF
cat > "$tmp/kdc.conf" <<EOF
[kdcdefaults]
	kdc_listen = 127.0.0.1:$KDC_PORT
	kdc_tcp_listen = 127.0.0.1:$KDC_PORT
[realms]
	$REALM = {
		database_name = $tmp/kdc/principal
		key_stash_file = $tmp/kdc/stash
		acl_file = $tmp/kdc/kadm5.acl
		supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
	}
[logging]
	kdc = FILE:$tmp/kdc/kdc.log
EOF
: > "$tmp/kdc/kadm5.acl"
export KRB5_CONFIG="$tmp/krb5.conf" KRB5_KDC_PROFILE="$tmp/kdc.conf"
kadm() { t 30 kadmin.local -r "$REALM" -q "$1" > "$tmp/kadmin.log" 2>&1 || { cat "$tmp/kadmin.log"; die "kadmin.local: $1"; }; }
t 60 kdb5_util create -s -r "$REALM" -P "master-$pw" > "$tmp/kdb.log" 2>&1 || { cat "$tmp/kdb.log"; die "kdb5_util create"; }
kadm "addprinc -randkey host/$host"
kadm "ktadd -k $tmp/krb5.keytab host/$host"
kadm "addprinc -randkey $TUSER"
kadm "ktadd -k $tmp/user.keytab $TUSER"
kadm "addprinc -randkey intruder"
kadm "ktadd -k $tmp/intruder.keytab intruder"
krb5kdc -n -r "$REALM" > "$tmp/kdc/stdout" 2>&1 &
kdc_pid=$!
for _ in $(seq 50); do (ss -Hltn "sport = :$KDC_PORT" || true) | grep -q . && break; sleep 0.1; done
kill -0 "$kdc_pid" 2>/dev/null || { cat "$tmp/kdc/stdout" "$tmp/kdc/kdc.log"; die "krb5kdc did not start"; }
say "Kerberos: realm $REALM, KDC pid $kdc_pid on 127.0.0.1:$KDC_PORT, host/$host in $tmp/krb5.keytab"

# --- hpnsshd as installed, with systemd's notification socket -----------------
# The shipped configuration; on the command line only what it leaves off:
# keyboard-interactive (PAM challenge-response) and GSSAPI.
python3 - "$tmp/notify" "$tmp/notify.log" <<'EOF' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(1.0)
end = time.time() + 120
with open(sys.argv[2], "a", buffering=1) as out:
    while time.time() < end:
        try:
            msg = s.recv(4096)
        except socket.timeout:
            continue
        out.write(msg.decode(errors="replace").replace("\n", " ") + "\n")
EOF
notify_pid=$!
for _ in $(seq 50); do [ -S "$tmp/notify" ] && break; sleep 0.1; done
[ -S "$tmp/notify" ] || die "notification socket not made"
rm -f /run/hpnsshd.pid
NOTIFY_SOCKET="$tmp/notify" KRB5_KTNAME="FILE:$tmp/krb5.keytab" \
    /usr/sbin/hpnsshd -D -E "$tmp/hpnsshd.log" -o LogLevel=VERBOSE \
    -o KbdInteractiveAuthentication=yes -o GSSAPIAuthentication=yes "${gss_opts[@]}" &
server_pid=$!
for _ in $(seq 100); do grep -q 'READY=1' "$tmp/notify.log" 2>/dev/null && break; sleep 0.1; done
grep -q 'READY=1' "$tmp/notify.log" 2>/dev/null || { cat "$tmp/hpnsshd.log"; die "hpnsshd sent no READY=1"; }
(ss -Hltn "sport = :$PORT" || true) | grep -q . || die "READY=1 before hpnsshd listens on $PORT"
kill -HUP "$server_pid"
for _ in $(seq 100); do [ "$(grep -c 'READY=1' "$tmp/notify.log")" -ge 2 ] && break; sleep 0.1; done
grep -q 'RELOADING=1' "$tmp/notify.log" && [ "$(grep -c 'READY=1' "$tmp/notify.log")" -ge 2 ] ||
	{ cat "$tmp/notify.log" "$tmp/hpnsshd.log"; die "no RELOADING=1 then READY=1 on SIGHUP"; }
for _ in $(seq 50); do (ss -Hltn "sport = :$PORT" || true) | grep -q . && break; sleep 0.1; done
say "readiness: READY=1 once listening, RELOADING=1 and READY=1 on SIGHUP (Type=notify)"

# The shipped client configuration, not root's ~/.ssh/config.
base=(-F /etc/hpnssh/hpnssh_config -p "$PORT" -o ConnectTimeout=10 -o IdentitiesOnly=yes
	-o UserKnownHostsFile="$tmp/known_hosts" -o StrictHostKeyChecking=accept-new)
key=("${base[@]}" -o BatchMode=yes -o PreferredAuthentications=publickey -i "$tmp/id_ed25519")
pass() {	# pass METHOD CMD: log in by METHOD, the password from SSH_ASKPASS
	SSH_ASKPASS="$tmp/askpass" SSH_ASKPASS_REQUIRE=force t 60 /usr/bin/hpnssh "${base[@]}" \
	    -o PreferredAuthentications="$1" -o PubkeyAuthentication=no -o NumberOfPasswordPrompts=1 \
	    "$TUSER@127.0.0.1" "$2" < /dev/null 2>> "$tmp/ssh.err"
}
refused() {	# refused OUTPUT-OF-A-LOGIN: the login did not happen
	[ -z "$1" ] && tail -n 3 "$tmp/ssh.err" | grep -q 'Permission denied'
}

# --- PAM ----------------------------------------------------------------------
out=$(pass password 'id -un') || { cat "$tmp/ssh.err" "$tmp/hpnsshd.log"; die "password login through PAM failed"; }
[ "$out" = "$TUSER" ] || die "password login ran as '$out'"
grep -q "Accepted password for $TUSER" "$tmp/hpnsshd.log" || die "hpnsshd logged no accepted password"
say "PAM: password login as $TUSER"
out=$(pass keyboard-interactive 'id -un') || { cat "$tmp/ssh.err" "$tmp/hpnsshd.log"; die "keyboard-interactive login through PAM failed"; }
[ "$out" = "$TUSER" ] || die "keyboard-interactive login ran as '$out'"
grep -q "Accepted keyboard-interactive/pam for $TUSER" "$tmp/hpnsshd.log" ||
	die "hpnsshd logged no accepted keyboard-interactive/pam"
say "PAM: keyboard-interactive login as $TUSER"

out=$(LC_HPNPKG=passed t 60 /usr/bin/hpnssh "${key[@]}" "$TUSER@127.0.0.1" \
    'ulimit -Sn; ulimit -Hn; echo "$HPNPKG_PAMENV"; echo "$LC_HPNPKG"' 2>> "$tmp/ssh.err" < /dev/null) ||
	{ cat "$tmp/ssh.err" "$tmp/hpnsshd.log"; die "key login failed"; }
[ "$(echo "$out" | sed -n 1,2p | tr '\n' ' ')" = "$NOFILE $NOFILE " ] ||
	die "pam_limits: nofile $NOFILE not applied (ulimit -Sn, -Hn: $(echo "$out" | sed -n 1,2p | tr '\n' ' '))"
[ "$(echo "$out" | sed -n 3p)" = set-by-pam-env ] || die "pam_env: HPNPKG_PAMENV='$(echo "$out" | sed -n 3p)'"
[ "$(echo "$out" | sed -n 4p)" = passed ] || die "SendEnv/AcceptEnv LC_*: LC_HPNPKG='$(echo "$out" | sed -n 4p)'"
say "PAM: pam_limits nofile $NOFILE and pam_env's HPNPKG_PAMENV in the session; LC_* passed"

usermod -L "$TUSER"
out=$(pass password 'id -un') && die "a locked account logged in by password"
refused "$out" || { cat "$tmp/ssh.err"; die "locked account: no 'Permission denied'"; }
usermod -U "$TUSER"
chage -E 0 "$TUSER"
out=$(t 60 /usr/bin/hpnssh "${key[@]}" "$TUSER@127.0.0.1" 'id -un' 2>> "$tmp/ssh.err" < /dev/null) &&
	die "an expired account logged in with its key"
refused "$out" || { cat "$tmp/ssh.err"; die "expired account: no 'Permission denied'"; }
grep -q "by PAM account configuration" "$tmp/hpnsshd.log" ||
	{ tail -n 20 "$tmp/hpnsshd.log"; die "expired account: not refused by PAM's account stack"; }
chage -E -1 "$TUSER"
say "PAM: locked account refused its password, expired account refused its key (PAM account)"

# --- Kerberos ------------------------------------------------------------------
gss=("${base[@]}" -o BatchMode=yes -o GSSAPIAuthentication=yes -o PreferredAuthentications=gssapi-with-mic
	-o PubkeyAuthentication=no -o PasswordAuthentication=no -o KbdInteractiveAuthentication=no)
export KRB5CCNAME="FILE:$tmp/cc.user"
t 30 kinit -k -t "$tmp/user.keytab" "$TUSER@$REALM" || die "kinit $TUSER@$REALM"
out=$(t 60 /usr/bin/hpnssh "${gss[@]}" "$TUSER@$host" 'id -un' 2>> "$tmp/ssh.err" < /dev/null) ||
	{ cat "$tmp/ssh.err" "$tmp/hpnsshd.log" "$tmp/kdc/kdc.log"; die "GSSAPI login with a ticket failed"; }
[ "$out" = "$TUSER" ] || die "GSSAPI login ran as '$out'"
grep -q "Accepted gssapi-with-mic for $TUSER" "$tmp/hpnsshd.log" || die "hpnsshd logged no accepted gssapi-with-mic"
klist | grep -q "host/$host@$REALM" || die "no service ticket for host/$host in the cache"
say "Kerberos: kinit $TUSER, hpnssh $TUSER@$host logged in by gssapi-with-mic (ticket for host/$host)"

export KRB5CCNAME="FILE:$tmp/cc.intruder"
t 30 kinit -k -t "$tmp/intruder.keytab" "intruder@$REALM" || die "kinit intruder@$REALM"
out=$(t 60 /usr/bin/hpnssh "${gss[@]}" "$TUSER@$host" 'id -un' 2>> "$tmp/ssh.err" < /dev/null) &&
	die "intruder@$REALM logged in as $TUSER"
refused "$out" || { cat "$tmp/ssh.err"; die "wrong principal: no 'Permission denied'"; }
[ "$(grep -c "Accepted gssapi-with-mic" "$tmp/hpnsshd.log")" -eq 1 ] || die "a second gssapi-with-mic login was accepted"
say "Kerberos: intruder@$REALM refused as $TUSER"

say "passed in $(( $(date +%s) - start ))s: FIDO helper, readiness, PAM (password, keyboard-interactive, limits, env, locked, expired), Kerberos"
