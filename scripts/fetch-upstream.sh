#!/bin/bash
# fetch-upstream.sh DLDIR
#
# Puts the verified pristine OpenSSH tarball into DLDIR (a cache: a verified
# tarball already there is reused) and, when available, Debian's packaging
# tarball whose debian/patches/CVE-*.patch carry the security fixes.
#
#   OPENSSH_TARBALL=/path/openssh_X.orig.tar.gz   use this file, fetch nothing
#   OPENSSH_DEBIAN_TARBALL=/path/openssh_X-N.debian.tar.xz
#                                   the Debian patches to use with it (default:
#                                   a matching file beside OPENSSH_TARBALL)
#
# Otherwise the source package is downloaded with apt-get through a private
# apt configuration under DLDIR/apt, whose deb-src entries are derived from
# the Debian archives this machine is already configured for.  The system's
# apt configuration and state are not modified.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/upstream/openssh.mk"

die() { printf 'fetch: error: %s\n' "$*" >&2; exit 1; }
note() { printf 'fetch: %s\n' "$*" >&2; }

[ $# -eq 1 ] || die "usage: $0 DLDIR"
dl=$1
mkdir -p "$dl"
dl=$(cd "$dl" && pwd)
name="openssh_${OPENSSH_VERSION}.orig.tar.gz"
dst="$dl/$name"

sha_ok() {
	local h
	h=$(sha256sum "$1" | awk '{print $1}')
	[ "$h" = "$OPENSSH_SHA256" ] && return 0
	printf 'fetch: error: SHA-256 mismatch for %s\n  expected %s\n  got      %s\n' \
	    "$1" "$OPENSSH_SHA256" "$h" >&2
	return 1
}

# A cached, verified tarball needs no fetching (it is verified again before
# every extraction by prepare-tree.sh).
if [ -n "${OPENSSH_TARBALL:-}" ]; then
	[ -f "$OPENSSH_TARBALL" ] || die "OPENSSH_TARBALL=$OPENSSH_TARBALL: no such file"
	sha_ok "$OPENSSH_TARBALL" || die "refusing $OPENSSH_TARBALL (left untouched); pass the pristine $name"
	if ! cmp -s "$OPENSSH_TARBALL" "$dst" 2>/dev/null; then
		cp "$OPENSSH_TARBALL" "$dst.tmp" && mv "$dst.tmp" "$dst"
	fi
	note "using $OPENSSH_TARBALL (SHA-256 verified)"
	deb=${OPENSSH_DEBIAN_TARBALL:-}
	if [ -z "$deb" ]; then
		deb=$(ls "$(dirname "$OPENSSH_TARBALL")"/openssh_"${OPENSSH_VERSION}"-*.debian.tar.xz \
		    2>/dev/null | sort -V | tail -n 1 || true)
	fi
	if [ -n "$deb" ]; then
		[ -f "$deb" ] || die "OPENSSH_DEBIAN_TARBALL=$deb: no such file"
		cp "$deb" "$dl/debian.tar.xz.tmp" && mv "$dl/debian.tar.xz.tmp" "$dl/debian.tar.xz"
		basename "$deb" > "$dl/debian.name"
		note "Debian security patches from $deb"
	else
		rm -f "$dl/debian.tar.xz" "$dl/debian.name"
		touch "$dl/no-debian-patches"
	fi
	exit 0
fi

if [ -f "$dst" ] && [ -f "$dl/debian.tar.xz" ] && sha_ok "$dst" 2>/dev/null; then
	note "cached: $dst (SHA-256 verified), $(cat "$dl/debian.name" 2>/dev/null)"
	exit 0
fi
rm -f "$dl/no-debian-patches"

hint="Download $name (from Debian's $DEBIAN_SOURCE source package or an
  OpenSSH mirror) and run again with OPENSSH_TARBALL=/path/to/$name
  (optionally OPENSSH_DEBIAN_TARBALL=/path/to/openssh_${OPENSSH_VERSION}-N.debian.tar.xz
  for Debian's security fixes)."
command -v apt-get >/dev/null || die "apt-get not found: cannot fetch the source package.
  $hint"

# Private apt state: sources, lists and cache under $dl/apt.  The system's
# configuration files are still read (proxies, timeouts) but its source
# lists, preferences, lists and cache are not used or changed.
apt=$dl/apt
rm -rf "$apt"
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/sources.list.d" \
    "$apt/preferences.d" "$apt/src"

# Derive deb-src entries from the Debian archives already configured, as
# apt itself parsed them (one-line and deb822 formats alike).  An archive
# is "Debian" by its Release file's Origin (lists fetched) or, failing that,
# by carrying a Debian-style suite name.
suite=${DEBIAN_SOURCE#*/}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
apt-get indextargets --format '$(TARGET_OF) $(REPO_URI) $(RELEASE) $(ORIGIN)' 2>/dev/null |
    awk '$1 == "deb" { print $2, $3, $4 }' | sort -u > "$apt/configured" || true
: > "$apt/sources.list"
while read -r uri rel origin; do
	case "$origin" in
	Debian|"") ;;
	*) continue ;;
	esac
	case "$rel" in
	*-security) echo "${uri%/} ${suite}-security" ;;
	*-updates|*-backports|*-proposed-updates) ;;
	[a-z]*) [ -n "$origin" ] || case "$rel" in
		buster|bullseye|bookworm|trixie|forky|sid|stable|oldstable|testing|unstable) ;;
		*) continue ;;
		esac
		echo "${uri%/} ${suite}"; echo "${uri%/} ${suite}-updates" ;;
	esac
done < "$apt/configured" | sort -u | while read -r uri s; do
	if [ -f "$keyring" ]; then
		echo "deb-src [signed-by=$keyring] $uri $s main"
	else
		echo "deb-src $uri $s main"
	fi
done > "$apt/sources.list"

if [ ! -s "$apt/sources.list" ]; then
	die "no Debian archive is configured in this machine's apt sources, so
  the $DEBIAN_SOURCE source package cannot be fetched.
  $hint"
fi
note "private apt sources (derived from this machine's apt configuration):"
sed 's/^/fetch:   /' "$apt/sources.list" >&2

aptopts=(
	-o "Dir::Etc::sourcelist=$apt/sources.list"
	-o "Dir::Etc::sourceparts=$apt/sources.list.d"
	-o "Dir::Etc::preferences=$apt/preferences"
	-o "Dir::Etc::preferencesparts=$apt/preferences.d"
	-o "Dir::State::Lists=$apt/lists"
	-o "Dir::Cache=$apt/cache"
	-o "Dir::Cache::archives=$apt/cache/archives"
	-o "Dir::Cache::pkgcache="
	-o "Dir::Cache::srcpkgcache="
	-o "Debug::NoLocking=1"
	-o "APT::Sandbox::User=root"
	-o "Acquire::Languages=none"
)
[ "$(id -u)" -eq 0 ] || aptopts+=(-o "APT::Sandbox::User=$(id -un)")

note "apt-get update (private lists)"
if ! apt-get "${aptopts[@]}" -q update > "$apt/update.log" 2>&1; then
	tail -n 20 "$apt/update.log" >&2
	die "apt-get update failed (log: $apt/update.log).
  $hint"
fi
note "apt-get source --download-only $DEBIAN_SOURCE"
if ! (cd "$apt/src" && apt-get "${aptopts[@]}" -q source --download-only \
    "$DEBIAN_SOURCE") > "$apt/source.log" 2>&1; then
	tail -n 20 "$apt/source.log" >&2
	die "apt-get source $DEBIAN_SOURCE failed (log: $apt/source.log).
  $hint"
fi

[ -f "$apt/src/$name" ] || die "the $DEBIAN_SOURCE source package has no $name.
  $hint"
sha_ok "$apt/src/$name" || die "the downloaded $name does not match upstream/openssh.mk; not used.
  $hint"
debtar=$(ls "$apt/src"/openssh_"${OPENSSH_VERSION}"-*.debian.tar.xz 2>/dev/null | sort -V | tail -n 1 || true)
[ -n "$debtar" ] || die "the $DEBIAN_SOURCE source package has no debian.tar.xz"
mv "$apt/src/$name" "$dst"
mv "$debtar" "$dl/debian.tar.xz"
basename "$debtar" > "$dl/debian.name"
note "fetched $name (SHA-256 verified) and $(cat "$dl/debian.name")"
rm -rf "$apt"
