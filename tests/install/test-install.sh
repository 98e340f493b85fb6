#!/bin/bash
# test-install.sh TOP
#
# "make install DESTDIR=..." of the built hpn suite: every program, helper,
# config file and man page under its hpn name, nothing under a stock name,
# the paths compiled in pointing at the hpn names, config files kept on a
# second install.
set -euo pipefail
top=$(cd "$1" && pwd)
d=$(mktemp -d /tmp/hpn-install-test.XXXXXX)
trap 'rm -rf "$d"' EXIT
err=0
bad() { echo "install-test: FAIL: $*" >&2; err=1; }

make -s -C "$top" install DESTDIR="$d" > "$d.log" 2>&1 || { cat "$d.log"; rm -f "$d.log"; exit 1; }
tree=$(ls -d "$top"/build/hpn/openssh-*/ | head -n 1)
mk() { make -s -C "$tree" -f Makefile -f "$top/scripts/lib/print-var.mk" print-"$1" 2>/dev/null; }
bindir=$(mk bindir) sbindir=$(mk sbindir) libexec=$(mk libexecdir)
sysconf=$(mk sysconfdir) mandir=$(mk mandir)

for p in hpnssh hpnscp hpnsftp hpnssh-add hpnssh-agent hpnssh-keygen hpnssh-keyscan; do
	[ -x "$d$bindir/$p" ] || bad "$bindir/$p missing"
done
[ -x "$d$sbindir/hpnsshd" ] || bad "$sbindir/hpnsshd missing"
for p in hpnsftp-server hpnsshd-session hpnsshd-auth hpnssh-keysign \
    hpnssh-pkcs11-helper hpnssh-sk-helper; do
	[ -x "$d$libexec/$p" ] || bad "$libexec/$p missing"
done
for f in hpnssh_config hpnsshd_config moduli; do
	[ -f "$d$sysconf/$f" ] || bad "$sysconf/$f missing"
done
for m in man1/hpnssh.1 man1/hpnscp.1 man1/hpnsftp.1 man5/hpnssh_config.5 \
    man5/hpnsshd_config.5 man8/hpnsshd.8 man8/hpnsftp-server.8; do
	[ -f "$d$mandir/$m" ] || bad "$mandir/$m missing"
done
clash=$(cd "$d" && find . -type f | grep -E '/(ssh|scp|sftp|sshd|ssh-[a-z]+|sshd-[a-z]+|sftp-server|ssh_config|sshd_config)(\.[0-9])?$' || true)
[ -z "$clash" ] || bad "files under stock names: $clash"

v=$("$d$bindir/hpnssh" -V 2>&1)
case "$v" in OpenSSH_10.0p2_hpn*) ;; *) bad "hpnssh -V: $v" ;; esac
grep -q '^#Port 2222' "$d$sysconf/hpnsshd_config" || bad "hpnsshd_config does not show Port 2222"
grep -q "^Subsystem.*$libexec/hpnsftp-server" "$d$sysconf/hpnsshd_config" ||
	bad "hpnsshd_config's sftp subsystem is not $libexec/hpnsftp-server"
grep -aq "$bindir/hpnssh" "$d$bindir/hpnscp" || bad "hpnscp does not run $bindir/hpnssh"
grep -aq "$libexec/hpnsshd-session" "$d$sbindir/hpnsshd" || bad "hpnsshd does not run hpnsshd-session"
grep -aq "$sysconf/hpnsshd_config" "$d$sbindir/hpnsshd" || bad "hpnsshd does not read $sysconf/hpnsshd_config"
grep -aq "$sysconf/hpnssh_config" "$d$bindir/hpnssh" || bad "hpnssh does not read $sysconf/hpnssh_config"
if getent passwd "$(mk SSH_PRIVSEP_USER)" >/dev/null; then
	ssh-keygen -q -t ed25519 -N '' -f "$d/hk"
	t=$("$d$sbindir/hpnsshd" -T -f "$d$sysconf/hpnsshd_config" -o HostKey="$d/hk" 2>&1)
	echo "$t" | grep -qx 'port 2222' || bad "hpnsshd -T: port is not 2222"
	echo "$t" | grep -qx "sshdsessionpath $libexec/hpnsshd-session" || bad "hpnsshd -T: sshdsessionpath"
fi

echo "# local change" >> "$d$sysconf/hpnssh_config"
make -s -C "$top" install DESTDIR="$d" > "$d.log" 2>&1 || { cat "$d.log"; rm -f "$d.log"; exit 1; }
rm -f "$d.log"
grep -q '^# local change' "$d$sysconf/hpnssh_config" || bad "second install overwrote hpnssh_config"

[ $err -eq 0 ] || exit 1
echo "install-test: layout under DESTDIR ok (prefix $(mk prefix), config $sysconf)"
