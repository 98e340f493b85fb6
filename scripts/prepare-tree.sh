#!/bin/bash
# prepare-tree.sh hpn|stock DLDIR DEST
#
# Makes DEST an OpenSSH source tree: the pristine tarball (SHA-256 verified
# before anything is extracted), then Debian's security fixes
# (debian/patches/CVE-*.patch, in Debian's series order), then, for "hpn",
# our own files (src/) and our patch series (patches/series), each patch
# required to apply with no fuzz and no offset.  Built in DEST.tmp and
# renamed at the end, so a failure never leaves a half-patched DEST.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/upstream/openssh.mk"

die() { printf 'prepare(%s): error: %s\n' "${flavour:-?}" "$*" >&2; exit 1; }
note() { printf 'prepare(%s): %s\n' "$flavour" "$*" >&2; }

[ $# -eq 3 ] || { echo "usage: $0 hpn|stock DLDIR DEST" >&2; exit 2; }
flavour=$1 dl=$2 dest=$3
case "$flavour" in hpn|stock) ;; *) die "flavour must be hpn or stock" ;; esac
mkdir -p "$(dirname "$dest")"
dl=$(cd "$dl" && pwd)
dest=$(cd "$(dirname "$dest")" && pwd)/$(basename "$dest")
tarball="$dl/openssh_${OPENSSH_VERSION}.orig.tar.gz"
[ -f "$tarball" ] || die "$tarball missing (run make fetch)"

h=$(sha256sum "$tarball" | awk '{print $1}')
[ "$h" = "$OPENSSH_SHA256" ] || die "SHA-256 mismatch for $tarball
  expected $OPENSSH_SHA256
  got      $h
  Remove it and run make fetch again."

tmp="$dest.tmp"
rm -rf "$tmp"
mkdir -p "$tmp"
tar -C "$tmp" -xzf "$tarball"
src="$tmp/openssh-${OPENSSH_VERSION}"
[ -d "$src" ] || die "tarball did not contain openssh-${OPENSSH_VERSION}/"
info="$src/.hpn-tree"
{
	echo "flavour: $flavour"
	echo "upstream: openssh_${OPENSSH_VERSION}.orig.tar.gz sha256:$h"
} > "$info"

# Apply one patch with zero fuzz.  $2 = "strict" also refuses offsets.
apply() {
	local p=$1 mode=$2 out
	if ! out=$(cd "$src" && patch -p1 --fuzz=0 --forward --no-backup-if-mismatch \
	    -r - < "$p" 2>&1); then
		printf '%s\n' "$out" >&2
		die "patch $(basename "$p") does not apply.  Fix or refresh it
  (see HACKING.md: make dev-tree, quilt push, quilt refresh)."
	fi
	if printf '%s\n' "$out" | grep -q 'with fuzz'; then
		printf '%s\n' "$out" >&2
		die "patch $(basename "$p") applies only with fuzz; refresh it (HACKING.md)"
	fi
	if printf '%s\n' "$out" | grep -q 'offset'; then
		if [ "$mode" = strict ]; then
			printf '%s\n' "$out" >&2
			die "patch $(basename "$p") applies with offsets; refresh it (HACKING.md)"
		fi
		printf '%s\n' "$out" | grep 'offset' | sed 's/^/    /' >&2
	fi
}

# Debian's security fixes: every CVE-*.patch in debian/patches/series order.
strict=strict
if [ -f "$dl/debian.tar.xz" ]; then
	mkdir -p "$tmp/debian-src"
	tar -C "$tmp/debian-src" -xJf "$dl/debian.tar.xz" debian/patches
	pdir="$tmp/debian-src/debian/patches"
	n=0
	for p in $(sed -e 's/#.*//' "$pdir/series" | awk 'NF {print $1}'); do
		case "$p" in CVE-*) ;; *) continue ;; esac
		note "security fix: $p (from $(cat "$dl/debian.name"))"
		apply "$pdir/$p" lenient
		echo "security: $p" >> "$info"
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] || die "$(cat "$dl/debian.name") lists no CVE-*.patch"
	note "applied $n security fixes"
	rm -rf "$tmp/debian-src"
else
	cat >&2 <<EOF
prepare($flavour): ********************************************************
prepare($flavour): WARNING: no Debian security patches available.
prepare($flavour): This build LACKS the fixes for CVE-2025-61984,
prepare($flavour): CVE-2025-61985, CVE-2026-35385, CVE-2026-35386,
prepare($flavour): CVE-2026-35387, CVE-2026-35388 and CVE-2026-35414.
prepare($flavour): Pass OPENSSH_DEBIAN_TARBALL=/path/to/openssh_${OPENSSH_VERSION}-N.debian.tar.xz
prepare($flavour): (Debian's ${DEBIAN_SOURCE} source package) to include them.
prepare($flavour): ********************************************************
EOF
	echo "security: NONE (Debian patches not available)" >> "$info"
	# Our series is made against the patched tree; without those fixes
	# its hunks may sit a few lines away.  Still never with fuzz.
	strict=lenient
fi

if [ "$flavour" = hpn ]; then
	for f in "$top"/src/*.[ch]; do [ -e "$f" ] && cp -p "$f" "$src"/; done
	for p in $(sed -e 's/#.*//' "$top/patches/series" | awk 'NF {print $1}'); do
		[ -f "$top/patches/$p" ] || die "patches/series lists $p, which is missing"
		apply "$top/patches/$p" "$strict"
		echo "hpn: $p" >> "$info"
	done
	note "applied $(grep -c '^hpn:' "$info") patches from patches/series"
fi

rm -rf "$dest"
mv "$tmp" "$dest"
