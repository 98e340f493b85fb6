#!/bin/bash
# test-install.sh TOP
#
# "make install DESTDIR=..." of the built hpn suite: every program, helper,
# config file and man page under its hpn name, nothing under a stock name,
# the paths compiled in pointing at the hpn names, the man pages
# cross-referenced by their hpn names and rendering without a warning
# (groff), every option of -G/-T documented (check-options-doc.sh), config
# files kept on a second install.
set -euo pipefail
top=$(cd "$1" && pwd)
d=$(mktemp -d /tmp/hpn-install-test.XXXXXX)
trap 'rm -rf "$d" "$d.log"' EXIT
err=0
bad() { echo "install-test: FAIL: $*" >&2; err=1; }

make -s -C "$top" install DESTDIR="$d" > "$d.log" 2>&1 || { cat "$d.log"; rm -f "$d.log"; exit 1; }
tree=$(ls -d "$top"/build/hpn/openssh-*/ | head -n 1)
mk() { make -s --no-print-directory -C "$tree" -f Makefile -f "$top/scripts/lib/print-var.mk" print-"$1" 2>/dev/null; }
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
case "$v" in OpenSSH_[0-9]*.[0-9]*p[0-9]*_hpn*) ;; *) bad "hpnssh -V: $v" ;; esac
grep -q '^#Port 2222' "$d$sysconf/hpnsshd_config" || bad "hpnsshd_config does not show Port 2222"
grep -q "^Subsystem.*$libexec/hpnsftp-server" "$d$sysconf/hpnsshd_config" ||
	bad "hpnsshd_config's sftp subsystem is not $libexec/hpnsftp-server"
grep -aq "$bindir/hpnssh" "$d$bindir/hpnscp" || bad "hpnscp does not run $bindir/hpnssh"
grep -aq "$libexec/hpnsshd-session" "$d$sbindir/hpnsshd" || bad "hpnsshd does not run hpnsshd-session"
grep -aq "$sysconf/hpnsshd_config" "$d$sbindir/hpnsshd" || bad "hpnsshd does not read $sysconf/hpnsshd_config"
grep -aq "$sysconf/hpnssh_config" "$d$bindir/hpnssh" || bad "hpnssh does not read $sysconf/hpnssh_config"
# As root, hpnsshd -T needs the privilege separation user and directory.
if [ "$(id -u)" -ne 0 ] || { getent passwd "$(mk SSH_PRIVSEP_USER)" >/dev/null &&
    [ -d "$(mk PRIVSEP_PATH)" ]; }; then
	"$d$bindir/hpnssh-keygen" -q -t ed25519 -N '' -f "$d/hk"
	t=$("$d$sbindir/hpnsshd" -T -f "$d$sysconf/hpnsshd_config" -o HostKey="$d/hk" 2>&1) ||
		bad "hpnsshd -T failed: $t"
	echo "$t" | grep -qx 'port 2222' || bad "hpnsshd -T: port is not 2222"
	echo "$t" | grep -qx "sshdsessionpath $libexec/hpnsshd-session" || bad "hpnsshd -T: sshdsessionpath"
fi

# Man pages: renamed, and cross-referenced by their hpn names (install.sh's
# rewriting pass); each renders without a warning.
upstream_pages='ssh|scp|sftp|ssh-add|ssh-agent|ssh-keygen|ssh-keyscan|sshd|sftp-server|ssh-keysign|ssh-pkcs11-helper|ssh-sk-helper|ssh_config|sshd_config|moduli'
command -v groff >/dev/null || bad "groff not found: the man pages cannot be checked (apt-get install groff-base)"
nman=0
for m in "$d$mandir"/man[158]/*; do
	[ -f "$m" ] || continue
	nman=$((nman + 1))
	n=$(basename "$m") rel=${m#"$d"}
	case "$n" in hpn*) ;; *) bad "$rel: not an hpn name" ;; esac
	dt=$(echo "${n%.*}" | tr 'a-z' 'A-Z')
	grep -qx "\.Dt $dt ${n##*.}" "$m" || bad "$rel: no '.Dt $dt ${n##*.}'"
	x=$(grep -nE "(^\.|[[:space:]])Xr ($upstream_pages) [0-9]" "$m" || true)
	[ -z "$x" ] || bad "$rel: cross references to upstream names:
$x"
	x=$(grep -nE "^\.Nm ($upstream_pages)([[:space:]]|\$)" "$m" | grep -v '^[0-9]*:\.Nm moduli' || true)
	[ -z "$x" ] || bad "$rel: upstream program names in .Nm:
$x"
	x=$(grep -nE "$sysconf/(ssh|sshd)_config|/etc/ssh([^[:alnum:]_]|\$)|(^|[^[:alnum:]])sshd\.pid|$libexec/(sftp-server|ssh-keysign|ssh-pkcs11-helper|ssh-sk-helper|sshd-session|sshd-auth)|/sbin/sshd([^[:alnum:]-]|\$)" "$m" |
	    grep -v '^[0-9]*:\.\\"' || true)
	[ -z "$x" ] || bad "$rel: files named by their upstream paths:
$x"
	if command -v groff >/dev/null; then
		w=$(groff -mandoc -ww -z -Tutf8 "$m" 2>&1)
		[ -z "$w" ] || bad "$rel: groff warnings: $w"
	fi
	if command -v man >/dev/null; then
		w=$(MANWIDTH=80 man --warnings -E UTF-8 -l "$m" 2>&1 >/dev/null)
		[ -z "$w" ] || bad "$rel: man warnings: $w"
	fi
done
[ "$nman" -ge 15 ] || bad "only $nman man pages installed"
m1=$d$mandir/man1/hpnssh.1 m8=$d$mandir/man8/hpnsshd.8
grep -q '^\.Xr hpnssh_config 5' "$m1" || bad "hpnssh(1) does not refer to hpnssh_config(5)"
grep -q '^\.Xr hpnsshd 8' "$m1" || bad "hpnssh(1) does not refer to hpnsshd(8)"
grep -q "^\.It Pa $sysconf/hpnssh_config\$" "$m1" || bad "hpnssh(1) FILES: no $sysconf/hpnssh_config"
grep -q '^\.It Pa ~/\.ssh/config$' "$m1" || bad "hpnssh(1): ~/.ssh/config (shared with OpenSSH) renamed"
grep -q '^\.It Pa ~/\.ssh/known_hosts$' "$m1" || bad "hpnssh(1): ~/.ssh/known_hosts (shared with OpenSSH) renamed"
grep -q '^(default 2222)' "$m8" || bad "hpnsshd(8): -p does not say the default port is 2222"
grep -q 'default is 2222' "$d$mandir/man5/hpnsshd_config.5" || bad "hpnsshd_config(5): Port default is not 2222"
grep -q '^#PidFile /run/hpnsshd.pid' "$d$sysconf/hpnsshd_config" || bad "hpnsshd_config: PidFile comment"
grep -q '^# hpnsshd_config(5) ' "$d$sysconf/hpnsshd_config" || bad "hpnsshd_config: does not refer to hpnsshd_config(5)"

# Every option that -G/-T prints has its entry in the man pages.
"$top/tests/install/check-options-doc.sh" "$d$bindir/hpnssh" "$d$sbindir/hpnsshd" \
    "$d$sysconf/hpnsshd_config" "$d$mandir/man5/hpnssh_config.5" \
    "$d$mandir/man5/hpnsshd_config.5" || err=1

echo "# local change" >> "$d$sysconf/hpnssh_config"
make -s -C "$top" install DESTDIR="$d" > "$d.log" 2>&1 || { cat "$d.log"; rm -f "$d.log"; exit 1; }
rm -f "$d.log"
grep -q '^# local change' "$d$sysconf/hpnssh_config" || bad "second install overwrote hpnssh_config"

[ $err -eq 0 ] || exit 1
echo "install-test: layout under DESTDIR ok (prefix $(mk prefix), config $sysconf)"
