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
mk() { make -s -C "$tree" -f Makefile -f "$top/scripts/lib/print-var.mk" print-"$1" 2>/dev/null; }

bindir=$(mk bindir) sbindir=$(mk sbindir) mandir=$(mk mandir)
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
