#!/bin/bash
# package.sh deb|rpm DLDIR OUTDIR
#
# Builds the packages from this repository and the verified input in DLDIR
# (the pristine OpenSSH tarball, as "make fetch" leaves it), in OUTDIR
# (rebuilt from scratch):
#
#   deb  OUTDIR/deb: a 3.0 (quilt) source package whose orig tarball is a
#        snapshot of the project with the OpenSSH tarball in dl/, debian/ from
#        contrib/debian; dpkg-buildpackage (unsigned), then lintian, which
#        must report no error.
#   rpm  OUTDIR/rpm: rpmbuild -bb of contrib/rpm/hpnssh.spec with the
#        project snapshot and the OpenSSH tarball as Source0-1; prints
#        "rpm -qlp" of every package.
#
# Both build with the project's own pipeline (the top-level Makefile), so
# the packages hold what "make" builds and "make check" tests.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib/upstream.sh"

die() { printf 'package(%s): error: %s\n' "${kind:-?}" "$*" >&2; exit 1; }
note() { printf 'package(%s): %s\n' "$kind" "$*"; }

[ $# -eq 3 ] || { echo "usage: $0 deb|rpm DLDIR OUTDIR" >&2; exit 2; }
kind=$1 dl=$(cd "$2" && pwd) out=$3
case "$kind" in deb|rpm) ;; *) die "deb or rpm" ;; esac

hpn_version=$(sed -n 's/^#define HPN_VERSION[[:space:]]*"\(.*\)"/\1/p' "$top/src/hpn.h")
[ -n "$hpn_version" ] || die "no HPN_VERSION in src/hpn.h"
version="${OPENSSH_VERSION}+hpn${hpn_version}"	# upstream version of the packages
orig=$(upstream_dl_tarball "$dl") ||
	die "$dl/openssh_${OPENSSH_VERSION}.orig.tar.gz (or .xz) missing (run make fetch)"
orig_ext=${orig##*.}	# gz or xz
h=$(sha256sum "$orig" | awk '{print $1}')
[ "$h" = "$OPENSSH_SHA256" ] || die "SHA-256 mismatch for $orig"

need() {	# need PACKAGE COMMAND...
	local p=$1 c missing=
	shift
	for c in "$@"; do command -v "$c" >/dev/null 2>&1 || missing=1; done
	[ -z "$missing" ] || die "$p is needed (apt-get install $p)"
}

# The project files the build needs, as they are in the work tree (so that
# uncommitted work is packaged as "make" would build it), with reproducible
# metadata.
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(date -d "$(dpkg-parsechangelog -l "$top/contrib/debian/changelog" -S Date 2>/dev/null || date -R)" +%s)}
export SOURCE_DATE_EPOCH
snapshot() {	# snapshot DIR: copy the project's build inputs into DIR
	local d=$1
	mkdir -p "$d"
	(cd "$top" && tar -c Makefile README.md README.hpn HACKING.md upstream scripts \
	    patches src tests/install contrib/common contrib/hpnssh-metrics-plot) |
	    tar -x -C "$d"
}
tarball() {	# tarball OUT.tar.gz DIR-IN-CWD
	tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 \
	    --numeric-owner --format=gnu -c "$2" | gzip -9n > "$1"
}

# The package build runs the top-level Makefile again, in its own tree:
# nothing of a calling make's command line may leak into it.
unset MAKEFLAGS MFLAGS MAKEOVERRIDES MAKELEVEL DESTDIR

rm -rf "${out:?}/$kind"
mkdir -p "$out/$kind"
out=$(cd "$out/$kind" && pwd)
log="$out/build.log"

case "$kind" in
deb)
	need dpkg-dev dpkg-buildpackage
	need debhelper dh
	need lintian lintian
	cv=$(dpkg-parsechangelog -l "$top/contrib/debian/changelog" -S Version)
	[ "${cv%-*}" = "$version" ] || die "contrib/debian/changelog is at $cv, the tree at $version:
  add an entry (dch -c contrib/debian/changelog -v $version-1)"
	src="hpnssh-$version"
	snapshot "$out/$src"
	mkdir -p "$out/$src/dl"
	cp -p "$orig" "$out/$src/dl/"
	(cd "$out" && tarball "hpnssh_$version.orig.tar.gz" "$src")
	cp -a "$top/contrib/debian" "$out/$src/debian"
	cd "$out/$src"
	if ! dpkg-checkbuilddeps > "$log" 2>&1; then
		cat "$log" >&2
		die "missing build dependencies (as root: apt-get build-dep $out/$src)"
	fi
	note "dpkg-buildpackage $cv in $out (log: $log)"
	start=$(date +%s)
	if ! dpkg-buildpackage -us -uc -sa >> "$log" 2>&1; then
		tail -n 40 "$log" >&2
		die "dpkg-buildpackage failed (full log: $log)"
	fi
	note "built in $(( $(date +%s) - start ))s"
	cd "$out"
	changes=$(ls hpnssh_*.changes)
	note "lintian $changes"
	lintian --fail-on error --display-info --tag-display-limit 0 "$changes" > lintian.log 2>&1 || lrc=$?
	sed 's/^/  /' lintian.log
	[ "${lrc:-0}" -eq 0 ] || die "lintian reports errors (see above, $out/lintian.log)"
	for f in *.deb; do
		case "$f" in *-dbgsym_*) continue ;; esac
		note "$f:"
		dpkg-deb -c "$f" | awk '{ printf "  %s %s %s\n", $1, $2, $6 }'
	done
	note "packages in $out: $(ls *.deb | tr '\n' ' ')"
	;;
rpm)
	need rpm rpmbuild
	spec="$top/contrib/rpm/hpnssh.spec"
	mkdir -p "$out"/{SOURCES,SPECS,BUILD,RPMS,SRPMS}
	snapshot "$out/SOURCES/hpnssh-$version"
	(cd "$out/SOURCES" && tarball "hpnssh-$version.tar.gz" "hpnssh-$version" && rm -rf "hpnssh-$version")
	# Upstream's name for the same (SHA-256 verified) file.
	cp -p "$orig" "$out/SOURCES/openssh-${OPENSSH_VERSION}.tar.$orig_ext"
	cp "$spec" "$out/SPECS/"
	for f in "$top"/contrib/rpm/*; do
		case "$f" in *.spec) ;; *) cp -p "$f" "$out/SOURCES/" ;; esac
	done
	# On a system whose rpm database does not hold the build dependencies
	# (rpmbuild on Debian), they cannot be checked by rpmbuild.
	nodeps=()
	rpm -q rpm >/dev/null 2>&1 || { nodeps=(--nodeps); note "rpm database without packages: rpmbuild --nodeps"; }
	sv=$(rpmspec -q --srpm --qf '%{version}' "$spec" 2>/dev/null || true)
	[ "$sv" = "$version" ] || die "contrib/rpm/hpnssh.spec is at version '$sv', the tree at $version"
	note "rpmbuild -bb $(basename "$spec") in $out (log: $log)"
	start=$(date +%s)
	if ! rpmbuild -bb "${nodeps[@]}" --define "_topdir $out" \
	    --define "openssh_ext $orig_ext" \
	    "$out/SPECS/hpnssh.spec" > "$log" 2>&1; then
		tail -n 40 "$log" >&2
		die "rpmbuild failed (full log: $log)"
	fi
	note "built in $(( $(date +%s) - start ))s"
	: > "$out/files"
	for f in "$out"/RPMS/*/*.rpm; do
		note "$(basename "$f"):"
		rpm -qp --qf '  %{name}-%{version}-%{release}.%{arch}: %{summary}\n' "$f" 2>/dev/null
		rpm -qlp "$f" 2>/dev/null | tee -a "$out/files" | sed 's/^/  /'
	done
	# The layout, as the Debian packages have it (tests/package/test-deb.sh).
	for f in /usr/bin/hpnssh /usr/bin/hpnscp /usr/bin/hpnsftp /usr/sbin/hpnsshd \
	    /usr/libexec/hpnsshd-session /usr/libexec/hpnsftp-server \
	    /etc/hpnssh/hpnssh_config /etc/hpnssh/hpnsshd_config /etc/hpnssh/moduli \
	    /etc/sysconfig/hpnsshd /usr/lib/systemd/system/hpnsshd.service \
	    /etc/pam.d/hpnsshd /usr/libexec/hpnsshd-hostkeys /usr/libexec/hpnssh-sk-helper \
	    /etc/hpnssh/hpnsshd_config.d/50-distribution.conf \
	    /etc/hpnssh/hpnssh_config.d/50-distribution.conf \
	    /etc/hpnssh/hpnsshd_config.d/05-host-keys.conf \
	    /usr/lib/sysusers.d/hpnsshd.conf /usr/lib/tmpfiles.d/hpnsshd.conf \
	    /etc/hpnssh/ssh_host_ed25519_key; do
		grep -qx "$f" "$out/files" || die "no $f in the packages"
	done
	grep -qE '^/usr/share/man/man1/hpnssh\.1' "$out/files" || die "no hpnssh(1) in the packages"
	clash=$(grep -E '/(ssh|scp|sftp|sshd|ssh-[a-z0-9-]+|sshd-[a-z]+|sftp-server|ssh_config|sshd_config)(\.[0-9](\.[a-z0-9]+)?)?$' "$out/files" || true)
	[ -z "$clash" ] || die "files under OpenSSH's names: $clash"
	note "layout ok: $(grep -c . "$out/files") paths, none under OpenSSH's names"
	;;
esac
