#!/bin/bash
# fetch-upstream.sh DLDIR
#
# Puts the verified pristine OpenSSH release tarball into DLDIR as
# openssh_VERSION.orig.tar.gz, or .orig.tar.xz when that is what Debian
# lists (10.6p1's is xz) or what the user brings (a cache: a verified tarball
# already there is reused; it is verified again before every extraction by
# prepare-tree.sh).  OPENSSH_VERSION=X OPENSSH_SHA256=hash fetch another
# release than the pinned one (scripts/lib/upstream.sh).
#
#   OPENSSH_TARBALL=/path/openssh-X.tar.gz   use this file, fetch nothing.
#       The version is read from the tarball's top directory.  For the
#       release pinned in upstream/openssh.mk its SHA-256 must match the pin;
#       for another release give its SHA-256 as OPENSSH_SHA256 (from the
#       release announcement): scripts/lib/upstream.sh.
#
# Otherwise only the .orig tarball is downloaded, through apt's own
# transport and the Debian archive this machine's apt is configured for:
# a private apt configuration under DLDIR/apt adds deb-src entries for
# DEBIAN_SUITES (upstream/openssh.mk) of that same archive, finds a source
# package whose files include openssh_VERSION.orig.tar.gz or .tar.xz with
# the pinned SHA-256, and downloads just that file with apt-helper, which
# checks the hash.  The system's apt configuration and state are not modified; no
# mirror is named here.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib/upstream.sh"

die() { printf 'fetch: error: %s\n' "$*" >&2; exit 1; }
note() { printf 'fetch: %s\n' "$*" >&2; }

[ $# -eq 1 ] || die "usage: $0 DLDIR"
dl=$1
mkdir -p "$dl"
dl=$(cd "$dl" && pwd)
base="openssh_${OPENSSH_VERSION}.orig.tar"
name="$base.gz/.xz"	# the one Debian lists is found below

sha_of() { sha256sum "$1" | awk '{print $1}'; }

if [ -n "${OPENSSH_TARBALL:-}" ]; then
	upstream_check_tarball "$OPENSSH_TARBALL" || exit 1
	ext=$(upstream_orig_ext "$OPENSSH_TARBALL") ||
		die "$OPENSSH_TARBALL is neither gzip nor xz"
	dst="$dl/$base.$ext"
	if ! cmp -s "$OPENSSH_TARBALL" "$dst" 2>/dev/null; then
		rm -f "$dl/$base.gz" "$dl/$base.xz"
		cp "$OPENSSH_TARBALL" "$dst.tmp" && mv "$dst.tmp" "$dst"
	fi
	note "using $OPENSSH_TARBALL: OpenSSH $OPENSSH_VERSION (SHA-256 verified)"
	exit 0
fi

for ext in gz xz; do
	dst="$dl/$base.$ext"
	if [ -f "$dst" ] && [ "$(sha_of "$dst")" = "$OPENSSH_SHA256" ]; then
		note "cached: $dst (SHA-256 verified)"
		exit 0
	fi
	rm -f "$dst"
done

hint="Or download the release tarball openssh-${OPENSSH_VERSION}.tar.gz yourself
  (SHA-256 $OPENSSH_SHA256) and run again with
  OPENSSH_TARBALL=/path/to/openssh-${OPENSSH_VERSION}.tar.gz"
command -v apt-get >/dev/null || die "apt-get not found: cannot fetch $name.
  $hint"
helper=/usr/lib/apt/apt-helper
[ -x "$helper" ] || die "$helper not found (package apt): cannot fetch $name.
  $hint"

# Private apt state: sources, lists and cache under $dl/apt.  The system's
# configuration files are still read (proxies, timeouts) but its source
# lists, preferences, lists and cache are not used or changed.
apt=$dl/apt
rm -rf "$apt"
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/sources.list.d" \
    "$apt/preferences.d"

# The Debian archives already configured (as apt itself parsed them, one-line
# and deb822 formats alike): an archive is "Debian" by its Release file's
# Origin (lists fetched) or, failing that, by a Debian-style suite name.
# Security archives carry no backports or sid, so they are skipped.
apt-get indextargets --format '$(TARGET_OF) $(REPO_URI) $(RELEASE) $(ORIGIN)' 2>/dev/null |
    awk '$1 == "deb" { print $2, $3, $4 }' | sort -u > "$apt/configured" || true
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
while read -r uri rel origin; do
	case "$origin" in Debian|"") ;; *) continue ;; esac
	case "$rel" in
	*-security) continue ;;
	buster*|bullseye*|bookworm*|trixie*|forky*|sid|stable*|oldstable*|testing*|unstable*) ;;
	*) [ "$origin" = Debian ] || continue ;;
	esac
	echo "${uri%/}"
done < "$apt/configured" | sort -u | while read -r uri; do
	for s in $DEBIAN_SUITES; do
		if [ -f "$keyring" ]; then
			echo "deb-src [signed-by=$keyring] $uri $s main"
		else
			echo "deb-src $uri $s main"
		fi
	done
done > "$apt/sources.list"
if [ ! -s "$apt/sources.list" ]; then
	die "no Debian archive is configured in this machine's apt sources, so
  $name cannot be fetched.
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
	-o "Acquire::Languages=none"
)
# apt-helper drops privileges to _apt, who cannot write into DLDIR.
aptopts+=(-o "APT::Sandbox::User=$(id -un)")

note "apt-get update (private lists)"
if ! apt-get "${aptopts[@]}" -q update > "$apt/update.log" 2>&1; then
	tail -n 20 "$apt/update.log" >&2
	die "apt-get update failed (log: $apt/update.log).
  $hint"
fi

# Every source package version (in any of the suites) that lists our
# tarball (.gz or .xz) with the pinned hash, and the file's name; then
# apt's own URI for it.
found=$(apt-cache "${aptopts[@]}" showsrc openssh 2>/dev/null | awk -v b="$base" -v h="$OPENSSH_SHA256" '
	/^Package:/ { v = ""; cs = 0 }
	/^Version:/ { v = $2 }
	/^[A-Za-z0-9-]+:/ { cs = ($1 == "Checksums-Sha256:") }
	cs && $1 == h && ($3 == b ".gz" || $3 == b ".xz") && v != "" { print v, $3 }
' | sort -u)
uri=
while read -r v f; do
	[ -n "$v" ] || continue
	uri=$(cd "$apt" && apt-get "${aptopts[@]}" -q source --print-uris "openssh=$v" 2>/dev/null |
	    awk -v f="$f" '$2 == f { gsub(/\047/, "", $1); print $1; exit }')
	[ -n "$uri" ] && { name=$f; note "source package openssh $v lists $name"; break; }
done <<< "$found"
dst="$dl/$name"
if [ -z "$uri" ]; then
	listed=$(apt-cache "${aptopts[@]}" showsrc openssh 2>/dev/null | awk '/^Version:/ {print $2}' | sort -u | tr '\n' ' ')
	die "no source package in $DEBIAN_SUITES lists $base.gz or .xz with SHA-256
  $OPENSSH_SHA256 (versions listed: ${listed:-none}).
  $hint"
fi
note "downloading $name through apt (apt-helper download-file, SHA256 checked)"
if ! "$helper" "${aptopts[@]}" download-file "$uri" "$dst.tmp" "SHA256:$OPENSSH_SHA256" \
    > "$apt/download.log" 2>&1; then
	rm -f "$dst.tmp"
	tail -n 5 "$apt/download.log" >&2
	die "downloading $name failed (log: $apt/download.log).
  $hint"
fi
[ "$(sha_of "$dst.tmp")" = "$OPENSSH_SHA256" ] || { rm -f "$dst.tmp"; die "SHA-256 mismatch after download"; }
mv "$dst.tmp" "$dst"
note "fetched $name ($(stat -c %s "$dst") bytes, SHA-256 verified)"
rm -rf "$apt"
