#!/bin/bash
# test-deb.sh TOP
#
# The Debian packages end to end, as root on a Debian machine (CI: a fresh
# Debian 12): builds them ("make deb": lintian must report no error),
# installs them beside the system's OpenSSH, checks which host keys hpnsshd
# presents (openssh-server's when /etc/ssh has some, else its own: both
# cases, the second in a mount namespace where /etc/ssh is empty), starts
# hpnsshd on port 2222 by hand (no systemd needed), logs in with hpnssh as a
# throwaway user with a throwaway key, runs a command, moves a file each way
# with hpnsftp and hpnscp (checksums compared), stops hpnsshd by its pid,
# runs test-site.sh (PAM, Kerberos with a KDC of its own, FIDO helper,
# systemd readiness), purges the packages and checks that nothing of them is
# left (files, user, /etc/hpnssh, /etc/pam.d/hpnsshd, systemd state) and
# that the system's OpenSSH (/usr/bin/ssh..., sshd, /etc/ssh) is byte for
# byte as it was.  Whatever it changed is undone on failure too.
set -euo pipefail
top=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
. "$top/upstream/openssh.mk"
start=$(date +%s)
PORT=2222
TUSER=hpnpkgtest
PRIVSEP_USER=hpnsshd

say() { printf 'package-test: %s\n' "$*"; }
die() { printf 'package-test: FAIL: %s\n' "$*" >&2; exit 1; }
# Each step is bounded; the whole test is bounded by the Makefile's timeout.
t() { local s=$1; shift; timeout --kill-after=10 "$s" "$@"; }

[ "$(id -u)" -eq 0 ] || die "must run as root (it installs and purges packages)"
command -v dpkg >/dev/null && command -v apt-get >/dev/null || die "needs a Debian system (dpkg, apt-get)"
export DEBIAN_FRONTEND=noninteractive

# Refuse to run where hpnssh is already installed: purging would remove it.
if dpkg-query -W -f '${Status}\n' hpnssh-client hpnssh-server 2>/dev/null | grep -q 'installed'; then
	die "hpnssh-client/hpnssh-server are installed here; remove them first (the test purges them)"
fi
for f in /etc/hpnssh /usr/bin/hpnssh /usr/sbin/hpnsshd /etc/default/hpnsshd; do
	[ ! -e "$f" ] || die "$f exists (a 'make install PREFIX=/usr'?); the test would remove it"
done
getent passwd "$TUSER" >/dev/null && die "user $TUSER exists; the test creates and removes it"

tmp=$(mktemp -d /tmp/hpn-pkgtest.XXXXXX)
chmod 0755 "$tmp"
created_prc='' server_pid='' user_made='' installed='' privsep_saved=''

cleanup() {
	local rc=$?
	set +e
	if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
		kill "$server_pid"
		sleep 1
		kill -0 "$server_pid" 2>/dev/null && kill -9 "$server_pid"
	fi
	[ -z "$user_made" ] || userdel -r "$TUSER" >/dev/null 2>&1
	if [ -n "$installed" ] && dpkg-query -W hpnssh-client hpnssh-server >/dev/null 2>&1; then
		say "cleanup: purging hpnssh-server hpnssh-client"
		t 300 apt-get purge -y -q hpnssh-server hpnssh-client >/dev/null 2>&1
	fi
	[ -z "$created_prc" ] || rm -f /usr/sbin/policy-rc.d
	restore_privsep_user
	rm -rf "$tmp"
	[ $rc -eq 0 ] || say "failed after $(( $(date +%s) - start ))s"
	exit $rc
}
trap cleanup EXIT
trap 'exit 143' TERM INT

# hpnsshd's privilege separation user may exist before (the tests' own,
# made by scripts/test-prep.sh); the purge removes it: put it back as it was.
if getent passwd "$PRIVSEP_USER" >/dev/null; then
	privsep_saved=$(getent passwd "$PRIVSEP_USER")
	privsep_group=$(getent group "$(id -gn "$PRIVSEP_USER")" | cut -d: -f1,3)
fi
restore_privsep_user() {
	[ -n "$privsep_saved" ] || return 0
	getent passwd "$PRIVSEP_USER" >/dev/null && return 0
	local uid gid home shell gname=${privsep_group%%:*} ggid=${privsep_group#*:}
	IFS=: read -r _ _ uid gid _ home shell <<< "$privsep_saved"
	getent group "$gname" >/dev/null || groupadd --system -g "$ggid" "$gname"
	useradd --system -M -u "$uid" -g "$gid" -d "$home" -s "$shell" "$PRIVSEP_USER"
	say "restored user $PRIVSEP_USER (uid $uid) that existed before the test"
}

# --- the system's OpenSSH, before anything happens -------------------------
ssh_state() {
	local f
	for f in /usr/bin/ssh /usr/bin/scp /usr/bin/sftp /usr/bin/ssh-* /usr/sbin/sshd \
	    /usr/lib/openssh/* $(find /etc/ssh -type f 2>/dev/null | sort); do
		[ -e "$f" ] || continue
		printf '%s %s\n' "$(stat -c '%a %U:%G' "$f")" "$(sha256sum "$f")"
	done
}
ssh_state > "$tmp/openssh.before"
[ -s "$tmp/openssh.before" ] || say "note: no system OpenSSH found to compare"

# --- build ------------------------------------------------------------------
# What building needs: the packaging tools and the build dependencies
# (contrib/debian/control); only the missing ones are installed.
missing=
for p in dpkg-dev debhelper lintian; do
	dpkg-query -W -f '${Status}\n' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
done
if [ -n "$missing" ] || ! (cd "$top/contrib" && dpkg-checkbuilddeps debian/control) >/dev/null 2>&1; then
	say "installing packaging tools and build dependencies:${missing:- (build-deps)}"
	t 600 apt-get update -q >/dev/null || say "apt-get update failed; trying anyway"
	# shellcheck disable=SC2086
	[ -z "$missing" ] || t 900 apt-get install -y -q --no-install-recommends $missing >"$tmp/apt.log" 2>&1 ||
		{ tail -n 20 "$tmp/apt.log"; die "apt-get install$missing failed"; }
	t 900 apt-get build-dep -y -q --no-install-recommends "$top/contrib" >"$tmp/apt.log" 2>&1 ||
		{ tail -n 20 "$tmp/apt.log"; die "apt-get build-dep failed"; }
fi
debdir="$top/build/pkg/deb"
if [ -n "${PKGTEST_REUSE:-}" ] && ls "$debdir"/hpnssh-server_*.deb >/dev/null 2>&1; then
	say "PKGTEST_REUSE: testing the packages already in $debdir"
else
	say "make deb"
	t 1800 make --no-print-directory -C "$top" deb > "$tmp/deb.log" 2>&1 ||
		{ tail -n 40 "$tmp/deb.log"; die "make deb failed"; }
	grep -E '^  [EWI]: ' "$tmp/deb.log" | sed 's/^/package-test: lintian/' || true
fi
client_deb=$(ls "$debdir"/hpnssh-client_*.deb) server_deb=$(ls "$debdir"/hpnssh-server_*.deb)
# verified resume's xxh128: hpnscp/hpnsftp and hpnsftp-server/hpnsshd-session
# link libxxhash, so shlibs puts it in both packages' Depends
for d in "$client_deb" "$server_deb"; do
	dpkg-deb -f "$d" Depends | grep -qE '(^|, )libxxhash0( |,|$)' ||
		die "$(basename "$d") does not depend on libxxhash0: $(dpkg-deb -f "$d" Depends)"
done
say "both packages depend on libxxhash0 (xxh128 for verified resume)"

# --- install ----------------------------------------------------------------
# Everything below /etc, /usr, /var/lib (but apt's and dpkg's own state) and
# hpnsshd's run-time paths, to compare after the purge.
fs_state() {
	{ find /etc /usr /var/lib -xdev \( -path /var/lib/apt -o -path /var/lib/dpkg \
	    -o -path /var/lib/ucf -o -path /usr/lib/debug \) -prune -o -print 2>/dev/null
	  ls -d /run/hpnsshd /run/hpnsshd.pid 2>/dev/null || true; } |
	    grep -vxE '/etc/(passwd|group|shadow|gshadow|subuid|subgid)-?' | sort
}
fs_state > "$tmp/fs.before"

# No service is started by the install (where systemd runs, hpnsshd.service
# would take port 2222): the test starts hpnsshd itself.
if [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
	chmod 0755 /usr/sbin/policy-rc.d
	created_prc=1
fi
say "apt-get install $(basename "$client_deb") $(basename "$server_deb")"
installed=1
t 600 apt-get install -y -q --no-install-recommends "$client_deb" "$server_deb" > "$tmp/install.log" 2>&1 ||
	{ tail -n 30 "$tmp/install.log"; die "apt-get install of the packages failed"; }
[ -z "$created_prc" ] || { rm -f /usr/sbin/policy-rc.d; created_prc=; }

for f in /usr/bin/hpnssh /usr/bin/hpnscp /usr/bin/hpnsftp /usr/bin/hpnssh-keygen /usr/sbin/hpnsshd \
    /usr/libexec/hpnsshd-session /usr/libexec/hpnsftp-server /usr/bin/hpnssh-metrics-plot; do
	[ -x "$f" ] || die "$f not installed"
done
for f in /etc/hpnssh/hpnssh_config /etc/hpnssh/hpnsshd_config /etc/hpnssh/moduli /etc/default/hpnsshd \
    /etc/pam.d/hpnsshd /lib/systemd/system/hpnsshd.service /usr/lib/tmpfiles.d/hpnsshd.conf \
    /usr/share/man/man1/hpnssh.1.gz /usr/share/man/man8/hpnsshd.8.gz; do
	[ -f "$f" ] || die "$f not installed"
done
for d in /etc/hpnssh/hpnssh_config.d /etc/hpnssh/hpnsshd_config.d; do
	[ -d "$d" ] || die "$d not installed"
done
grep -qx 'Include /etc/hpnssh/hpnsshd_config.d/\*.conf' /etc/hpnssh/hpnsshd_config || die "hpnsshd_config has no Include"
grep -qx 'Include /etc/hpnssh/hpnssh_config.d/\*.conf' /etc/hpnssh/hpnssh_config || die "hpnssh_config has no Include"
/usr/bin/hpnssh -G host.invalid 2>&1 | grep -qx 'resumehash xxh128,sha256,blake2b512' ||
	die "hpnssh -G: not xxh128 first: $(/usr/bin/hpnssh -G host.invalid 2>&1 | grep -i resumehash)"

# --- host keys: the host's identity -------------------------------------------
# openssh-server's keys when /etc/ssh has some (05-host-keys.conf names
# them), else hpnsshd's own in /etc/hpnssh (README.Debian).
hostkeys_conf=/etc/hpnssh/hpnsshd_config.d/05-host-keys.conf
hostkeys() { /usr/sbin/hpnsshd -T 2>&1 | awk '$1 == "hostkey" {print $2}' | tr '\n' ' '; }
own_keys() {	# own_keys: hpnsshd's own keys exist, mode 600
	local k
	for k in rsa ecdsa ed25519; do
		[ -s "/etc/hpnssh/ssh_host_${k}_key" ] || die "$1: host key /etc/hpnssh/ssh_host_${k}_key not made"
		[ "$(stat -c %a "/etc/hpnssh/ssh_host_${k}_key")" = 600 ] || die "ssh_host_${k}_key is not mode 600"
	done
}
ssh_keys=
for k in ed25519 ecdsa rsa; do
	[ -s "/etc/ssh/ssh_host_${k}_key" ] && ssh_keys="$ssh_keys/etc/ssh/ssh_host_${k}_key "
done
if [ -n "$ssh_keys" ]; then
	[ -f "$hostkeys_conf" ] || die "/etc/ssh has host keys but $hostkeys_conf was not written"
	[ "$(hostkeys)" = "$ssh_keys" ] || die "hpnsshd -T host keys: '$(hostkeys)', not /etc/ssh's ($ssh_keys)"
	! ls /etc/hpnssh/ssh_host_* >/dev/null 2>&1 || die "own host keys made although /etc/ssh has some"
	# Without openssh-server's keys (an empty /etc/ssh in a mount
	# namespace of our own): hpnsshd's own, and the file goes.
	unshare --mount --propagation private sh -c \
	    'mount -t tmpfs hpnpkgtest /etc/ssh && /usr/libexec/hpnsshd-hostkeys && /usr/sbin/hpnsshd -T' \
	    > "$tmp/ns.log" 2>&1 || { cat "$tmp/ns.log"; die "hpnsshd-hostkeys with an empty /etc/ssh"; }
	own_keys "with an empty /etc/ssh"
	[ ! -e "$hostkeys_conf" ] || die "with an empty /etc/ssh, $hostkeys_conf was left"
	[ "$(awk '$1 == "hostkey" {print $2}' "$tmp/ns.log" | tr '\n' ' ')" = \
	    "/etc/hpnssh/ssh_host_rsa_key /etc/hpnssh/ssh_host_ecdsa_key /etc/hpnssh/ssh_host_ed25519_key " ] ||
		die "with an empty /etc/ssh, hpnsshd -T: $(grep hostkey "$tmp/ns.log" | tr '\n' ' ')"
	/usr/libexec/hpnsshd-hostkeys
	[ "$(hostkeys)" = "$ssh_keys" ] || die "hpnsshd-hostkeys did not return to /etc/ssh's keys"
	# A file of the administrator's (no marker line) is left alone.
	echo "HostKey /etc/hpnssh/ssh_host_ed25519_key" > "$hostkeys_conf"
	/usr/libexec/hpnsshd-hostkeys
	[ "$(cat "$hostkeys_conf")" = "HostKey /etc/hpnssh/ssh_host_ed25519_key" ] ||
		die "hpnsshd-hostkeys rewrote the administrator's $hostkeys_conf"
	rm -f "$hostkeys_conf"
	/usr/libexec/hpnsshd-hostkeys
	say "host keys: /etc/ssh's ($ssh_keys); own in /etc/hpnssh without them; an admin's choice kept"
	expect_key=/etc/ssh/ssh_host_ed25519_key.pub
else
	[ ! -e "$hostkeys_conf" ] || die "/etc/ssh has no host keys but $hostkeys_conf exists"
	own_keys "on install"
	say "host keys: /etc/ssh has none, hpnsshd's own in /etc/hpnssh"
	expect_key=/etc/hpnssh/ssh_host_ed25519_key.pub
fi
getent passwd "$PRIVSEP_USER" >/dev/null || die "privilege separation user $PRIVSEP_USER not made"
[ -d /run/hpnsshd ] || die "/run/hpnsshd not made"
[ "$(stat -c '%a %U' /run/hpnsshd)" = "755 root" ] || die "/run/hpnsshd is not 755 root"
case "$(/usr/bin/hpnssh -V 2>&1)" in OpenSSH_*_hpn*) ;; *) die "hpnssh -V: $(/usr/bin/hpnssh -V 2>&1)" ;; esac
man -w hpnssh_config >/dev/null 2>&1 || ! command -v man >/dev/null || die "man cannot find hpnssh_config(5)"
if command -v systemd-analyze >/dev/null; then
	systemd-analyze verify /lib/systemd/system/hpnsshd.service > "$tmp/verify.log" 2>&1 ||
		{ cat "$tmp/verify.log"; die "systemd-analyze verify hpnsshd.service"; }
fi

# --- a server on 2222, a user with a key ------------------------------------
if (ss -Hltn "sport = :$PORT" 2>/dev/null || true) | grep -q .; then
	die "port $PORT is in use here; the test needs it for hpnsshd"
fi
useradd -m -s /bin/sh "$TUSER"
user_made=1
usermod -p '*' "$TUSER"	# not locked ("!"), no password: keys only
home=$(getent passwd "$TUSER" | cut -d: -f6)
install -d -m 0700 -o "$TUSER" -g "$TUSER" "$home/.ssh"
/usr/bin/hpnssh-keygen -q -t ed25519 -N '' -C pkgtest -f "$tmp/id_ed25519"
install -m 0600 -o "$TUSER" -g "$TUSER" "$tmp/id_ed25519.pub" "$home/.ssh/authorized_keys"

say "starting /usr/sbin/hpnsshd (port $PORT, pid file /run/hpnsshd.pid)"
rm -f /run/hpnsshd.pid
/usr/sbin/hpnsshd -E "$tmp/hpnsshd.log" -o LogLevel=VERBOSE
for _ in $(seq 50); do [ -s /run/hpnsshd.pid ] && break; sleep 0.1; done
[ -s /run/hpnsshd.pid ] || { cat "$tmp/hpnsshd.log"; die "hpnsshd wrote no /run/hpnsshd.pid"; }
server_pid=$(cat /run/hpnsshd.pid)
kill -0 "$server_pid" 2>/dev/null || { cat "$tmp/hpnsshd.log"; die "hpnsshd (pid $server_pid) is not running"; }
for _ in $(seq 50); do (ss -Hltn "sport = :$PORT" || true) | grep -q . && break; sleep 0.1; done

# No port given: hpnssh's default, 2222.  Its own known_hosts file, so that
# root's ~/.ssh is left alone.
ssh_opts=(-i "$tmp/id_ed25519" -o BatchMode=yes -o IdentitiesOnly=yes -o ConnectTimeout=10
	-o UserKnownHostsFile="$tmp/known_hosts" -o StrictHostKeyChecking=accept-new)
out=$(t 60 /usr/bin/hpnssh "${ssh_opts[@]}" "$TUSER@127.0.0.1" 'id -un; echo "$SSH_CONNECTION"' 2>"$tmp/ssh.err") ||
	{ cat "$tmp/ssh.err" "$tmp/hpnsshd.log"; die "hpnssh $TUSER@127.0.0.1 failed"; }
[ "$(echo "$out" | sed -n 1p)" = "$TUSER" ] || die "the remote command printed '$out'"
echo "$out" | sed -n 2p | grep -q " $PORT\$" || die "not connected to port $PORT: SSH_CONNECTION=$(echo "$out" | sed -n 2p)"
# (hpnssh_config hashes known_hosts: hpnssh-keygen -F finds the entry.)
seen=$(/usr/bin/hpnssh-keygen -F "[127.0.0.1]:$PORT" -f "$tmp/known_hosts" | awk '!/^#/ && $2 == "ssh-ed25519" {print $2, $3}')
[ "$seen" = "$(cut -d' ' -f1,2 "$expect_key")" ] || die "the host key seen ($seen) is not $expect_key"
say "hpnssh: logged in as $TUSER on port $PORT and ran a command"

head -c 8M /dev/urandom > "$tmp/data"
chmod 0644 "$tmp/data"
sum=$(sha256sum < "$tmp/data")
printf 'put %s up.bin\nget up.bin %s\n' "$tmp/data" "$tmp/back" > "$tmp/batch"
t 120 /usr/bin/hpnsftp "${ssh_opts[@]}" -b "$tmp/batch" "$TUSER@127.0.0.1" > "$tmp/sftp.log" 2>&1 ||
	{ cat "$tmp/sftp.log" "$tmp/hpnsshd.log"; die "hpnsftp transfer failed"; }
[ "$(sha256sum < "$home/up.bin")" = "$sum" ] || die "hpnsftp put: checksum differs"
[ "$(sha256sum < "$tmp/back")" = "$sum" ] || die "hpnsftp get: checksum differs"
t 120 /usr/bin/hpnscp "${ssh_opts[@]}" "$TUSER@127.0.0.1:up.bin" "$tmp/scp.bin" > "$tmp/scp.log" 2>&1 ||
	{ cat "$tmp/scp.log"; die "hpnscp transfer failed"; }
[ "$(sha256sum < "$tmp/scp.bin")" = "$sum" ] || die "hpnscp: checksum differs"
say "hpnsftp put/get and hpnscp get of 8 MiB: checksums match"

stop_server() {
	kill "$server_pid"
	for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$server_pid" 2>/dev/null && die "hpnsshd (pid $server_pid) did not stop on SIGTERM"
	server_pid=
}
stop_server

userdel -r "$TUSER" >/dev/null 2>&1 || true
user_made=

# --- what a site runs: PAM, Kerberos, FIDO, readiness -------------------------
t 300 "$top/tests/package/test-site.sh" || die "test-site.sh"

# --- purge: nothing left ------------------------------------------------------
say "apt-get purge hpnssh-server hpnssh-client"
t 600 apt-get purge -y -q hpnssh-server hpnssh-client > "$tmp/purge.log" 2>&1 ||
	{ tail -n 30 "$tmp/purge.log"; die "apt-get purge failed"; }
installed=
err=0
bad() { printf 'package-test: FAIL: %s\n' "$*" >&2; err=1; }
for p in hpnssh-client hpnssh-server; do
	! dpkg-query -W -f '${Status}\n' "$p" 2>/dev/null | grep -qv 'not-installed' ||
		bad "$p still known to dpkg: $(dpkg-query -W -f '${Status}' "$p")"
done
getent passwd "$PRIVSEP_USER" >/dev/null && bad "user $PRIVSEP_USER left after purge"
for f in /etc/hpnssh /etc/default/hpnsshd /etc/pam.d/hpnsshd /run/hpnsshd /run/hpnsshd.pid /usr/bin/hpnssh \
    /usr/sbin/hpnsshd /lib/systemd/system/hpnsshd.service /usr/lib/tmpfiles.d/hpnsshd.conf \
    /etc/systemd/system/multi-user.target.wants/hpnsshd.service; do
	[ ! -e "$f" ] || bad "$f left after purge"
done
fs_state > "$tmp/fs.after"
# New files owned by another package (a dependency apt pulled in) are not ours.
comm -13 "$tmp/fs.before" "$tmp/fs.after" | while read -r f; do
	o=$(dpkg -S "$f" 2>/dev/null | cut -d: -f1) || true
	case "$o" in ''|*hpnssh*) echo "$f" ;; esac
done > "$tmp/left"
[ ! -s "$tmp/left" ] || bad "left after purge: $(tr '\n' ' ' < "$tmp/left")"
comm -23 "$tmp/fs.before" "$tmp/fs.after" > "$tmp/gone"
[ ! -s "$tmp/gone" ] || bad "gone after install and purge: $(tr '\n' ' ' < "$tmp/gone")"
restore_privsep_user

ssh_state > "$tmp/openssh.after"
if ! cmp -s "$tmp/openssh.before" "$tmp/openssh.after"; then
	diff "$tmp/openssh.before" "$tmp/openssh.after" >&2 || true
	bad "the system's OpenSSH files changed"
else
	say "system OpenSSH untouched ($(wc -l < "$tmp/openssh.after") files compared)"
fi
[ $err -eq 0 ] || exit 1
say "passed in $(( $(date +%s) - start ))s: build, lintian, install, host keys, login, hpnsftp/hpnscp, PAM, Kerberos, FIDO, readiness, purge"
