#!/bin/bash
# install.sh TREE [DESTDIR]
#
# Installs the built hpn suite: upstream's "make install-nokeys" into a
# staging directory, every program, man page and config file renamed to its
# hpn name, then copied into DESTDIR (default: /).  The helpers in libexec
# already carry their hpn names (hpn-naming.patch).  Existing config files
# are never overwritten.  Without DESTDIR, host keys are generated if missing.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { echo "usage: $0 TREE [DESTDIR]" >&2; exit 2; }
tree=$1 destdir=${2:-}
mk() { make -s --no-print-directory -C "$tree" -f Makefile -f "$top/scripts/lib/print-var.mk" print-"$1" 2>/dev/null; }

bindir=$(mk bindir) sbindir=$(mk sbindir) mandir=$(mk mandir) libexecdir=$(mk libexecdir)
sysconfdir=$(mk sysconfdir) privsep_user=$(mk SSH_PRIVSEP_USER)

stage=$(mktemp -d "${TMPDIR:-/tmp}/hpn-install.XXXXXX")
trap 'rm -rf "$stage"' EXIT
make -s -C "$tree" install-nokeys DESTDIR="$stage" > "$stage.log" 2>&1 || {
	cat "$stage.log" >&2; rm -f "$stage.log"
	echo "install: error: make install-nokeys failed" >&2; exit 1; }
rm -f "$stage.log"

ren() {	# ren DIR OLD NEW
	[ -e "$stage$1/$2" ] || { echo "install: error: $1/$2 not installed by upstream" >&2; exit 1; }
	mv "$stage$1/$2" "$stage$1/$3"
}
for p in ssh scp sftp ssh-add ssh-agent ssh-keygen ssh-keyscan; do
	ren "$bindir" "$p" "hpn$p"
done
ren "$sbindir" sshd hpnsshd
for m in ssh scp sftp ssh-add ssh-agent ssh-keygen ssh-keyscan; do
	ren "$mandir/man1" "$m.1" "hpn$m.1"
done
for m in ssh_config sshd_config moduli; do
	ren "$mandir/man5" "$m.5" "hpn$m.5"
done
for m in sshd sftp-server ssh-keysign ssh-pkcs11-helper ssh-sk-helper; do
	ren "$mandir/man8" "$m.8" "hpn$m.8"
done
ren "$sysconfdir" ssh_config hpnssh_config
ren "$sysconfdir" sshd_config hpnsshd_config

# The man pages (and the comments of the config files) name upstream's
# programs and files; rewrite every reference to something this install
# renamed, so that hpnssh(1) points at hpnssh_config(5), hpnsshd(8),
# /etc/hpnssh/hpnssh_config...  Left alone on purpose: ~/.ssh/* (shared with
# OpenSSH), SSH_* environment variables, key types (ssh-ed25519), the PAM
# service name (".Cm sshd ."), ssh-askpass(1) (not ours), the agent's
# socket directory and the pages' comments.
progs='ssh|scp|sftp|ssh-add|ssh-agent|ssh-keygen|ssh-keyscan|sshd|sftp-server|ssh-keysign|ssh-pkcs11-helper|ssh-sk-helper|sshd-session|sshd-auth'
pages="$progs|ssh_config|sshd_config|moduli"
helpers='sftp-server|ssh-keysign|ssh-pkcs11-helper|ssh-sk-helper|sshd-session|sshd-auth'
e='([[:space:]]|$)'	# a name ends at a blank or the end of the line
man_sed=(
	-e '/^\.\\"/b'
	# page titles and names: .Dt SSH 1, .Nm ssh, .Nm ssh_config
	-e "s/^\.Dt ($(echo "$pages" | tr 'a-z' 'A-Z')) ([0-9])/.Dt HPN\1 \2/"
	-e "s/^\.Nm ($progs|ssh_config|sshd_config)$e/.Nm hpn\1\2/"
	# cross references, at the start of a line or called from another macro
	-e "s/(^\.|[[:space:]])Xr ($pages) ([0-9])/\1Xr hpn\2 \3/g"
	# commands to type: .Ic ssh -f host, .Dl $ ssh-keygen -l, $ ssh ...,
	# .Qq ssh -Q kex, .Cm ssh-agent xterm, `ssh-agent -s`; not ".Cm sshd ."
	# (the PAM service).  Prose ("ssh will disconnect...") is left as it is.
	-e "s/^\.Ic ($progs)$e/.Ic hpn\1\2/"
	-e "s/^(\.Dl \"?)?([\$#]) ($progs) /\1\2 hpn\3 /"
	-e "s/^\.Qq ($progs) -/.Qq hpn\1 -/"
	-e "s/^\.Ex -std ($progs)$e/.Ex -std hpn\1\2/"
	-e "s/^\.Cm ($progs) ([[:alnum:]-])/.Cm hpn\1 \2/"
	-e "s/^\.Cm ($helpers)$e/.Cm hpn\1\2/"
	-e "s/\`($progs) /\`hpn\1 /g"
	# paths of renamed files; fixpaths already moved /etc/ssh/ to sysconfdir
	-e "s,$sysconfdir/(ssh_config|sshd_config),$sysconfdir/hpn\1,g"
	-e "s,/etc/ssh([^[:alnum:]_]|$),$sysconfdir\1,g"
	-e "s,$libexecdir/($helpers)([^[:alnum:]-]|$),$libexecdir/hpn\1\2,g"
	-e "s,(/usr/sbin|$sbindir)/sshd([^[:alnum:]-]|$),$sbindir/hpnsshd\2,g"
	-e 's,(^|[^[:alnum:]])sshd\.pid,\1hpnsshd.pid,g'
	# sshd(8) -p: hpnsshd's default port
	-e 's/^\(default 22\)\.$/(default 2222)./'
)
conf_sed=(
	-e '/^#/!b'
	-e 's/(^|[^[:alnum:]])(ssh_config|sshd_config)\(5\)/\1hpn\2(5)/g'
	-e 's/^# This is the (ssh|sshd) /# This is the hpn\1 /'
	-e 's/^# This sshd was compiled/# This hpnsshd was compiled/'
	-e 's,(^|[^[:alnum:]])sshd\.pid,\1hpnsshd.pid,g'
)
for m in "$stage$mandir"/man[158]/*; do
	sed -E -i "${man_sed[@]}" "$m"
done
# A build with PAM under another service name (FEATURES=dist: hpnsshd)
# documents that name as PAMServiceName's default.
pam_service=$(sed -n 's/^#define SSHD_PAM_SERVICE[[:space:]]*"\(.*\)"$/\1/p' "$tree/config.h")
if [ -n "$pam_service" ] && [ "$pam_service" != sshd ]; then
	m="$stage$mandir/man5/hpnsshd_config.5"
	sed -i "/^\.It Cm PAMServiceName\$/,/^\.It Cm /s/^\.Cm sshd \.\$/.Cm $pam_service ./" "$m"
	grep -q "^\.Cm $pam_service \.\$" "$m" ||
		{ echo "install: error: PAMServiceName's default not found in hpnsshd_config(5)" >&2; exit 1; }
fi
for c in hpnssh_config hpnsshd_config; do
	sed -E -i "${conf_sed[@]}" "$stage$sysconfdir/$c"
done

# Anything left with a stock name would clash with the system's OpenSSH.
clash=$(cd "$stage" && find . ! -type d | grep -E '/(ssh|scp|sftp|sshd)(-[a-z0-9-]+)?(\.[0-9])?$' || true)
[ -z "$clash" ] || { echo "install: error: not renamed: $clash" >&2; exit 1; }

# Copy file by file: directories that exist keep their owner and mode.
n=0
while IFS= read -r -d '' f; do
	f=${f#./}
	d="$destdir/$f"
	mkdir -p "$(dirname "$d")"
	case "/$f" in
	"$sysconfdir"/*)
		if [ -e "$d" ]; then
			echo "install: $d exists, not overwritten"
			continue
		fi ;;
	esac
	cp -a "$stage/$f" "$d"
	n=$((n + 1))
done < <(cd "$stage" && find . ! -type d -print0)
# Empty directories (the privilege separation path).
(cd "$stage" && find . -type d -empty -print) | while read -r d; do
	[ -d "$destdir/${d#./}" ] || mkdir -p -m 0755 "$destdir/${d#./}"
done
echo "install: $n files installed under ${destdir:-/} (programs: $bindir/hpnssh, $sbindir/hpnsshd, ...)"

if [ -z "$destdir" ]; then
	if [ "$(id -u)" -eq 0 ]; then
		"$bindir/hpnssh-keygen" -A
	fi
	getent passwd "$privsep_user" >/dev/null || cat <<EOF
install: note: hpnsshd needs its privilege separation user, e.g.
  useradd --system --no-create-home --home-dir /var/empty --shell /usr/sbin/nologin $privsep_user
EOF
fi
