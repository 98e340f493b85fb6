#!/bin/bash
# prepare-tree.sh hpn|stock DLDIR DEST
#
# Makes DEST an OpenSSH source tree: the pristine tarball (SHA-256 verified
# before anything is extracted), then, for "hpn", our own files (src/) and
# our patch series (patches/series), each patch required to apply with no
# fuzz and no offset.  Built in DEST.tmp and renamed at the end, so a failure
# never leaves a half-patched DEST.
#
# A patch whose header says "Upstream-Fixed-In: X" (our own fix for a flaw
# upstream fixed in release X) is skipped, with a note, for a tarball of
# release X or later that a user brings (OPENSSH_TARBALL, see
# scripts/lib/upstream.sh): upstream's own fix is then in the tree.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib/upstream.sh"
. "$top/scripts/lib/series.sh"

die() { printf 'prepare(%s): error: %s\n' "${flavour:-?}" "$*" >&2; exit 1; }
note() { printf 'prepare(%s): %s\n' "$flavour" "$*" >&2; }

[ $# -eq 3 ] || { echo "usage: $0 hpn|stock DLDIR DEST" >&2; exit 2; }
flavour=$1 dl=$2 dest=$3
case "$flavour" in hpn|stock) ;; *) die "flavour must be hpn or stock" ;; esac
mkdir -p "$(dirname "$dest")"
dl=$(cd "$dl" && pwd)
dest=$(cd "$(dirname "$dest")" && pwd)/$(basename "$dest")
tarball=$(upstream_dl_tarball "$dl") ||
	die "$dl/openssh_${OPENSSH_VERSION}.orig.tar.gz (or .xz) missing (run make fetch)"

upstream_check_tarball "$tarball" || die "remove $tarball and run make fetch again"
h=$OPENSSH_SHA256

tmp="$dest.tmp"
rm -rf "$tmp"
mkdir -p "$tmp"
tar -C "$tmp" -xf "$tarball"
src="$tmp/openssh-${OPENSSH_VERSION}"
[ -d "$src" ] || die "tarball did not contain openssh-${OPENSSH_VERSION}/"
info="$src/.hpn-tree"
{
	echo "flavour: $flavour"
	echo "upstream: $(basename "$tarball") sha256:$h"
} > "$info"

# Apply one patch with zero fuzz.  $2 = "strict" also refuses offsets.
apply() {
	local p=$1 mode=$2 out
	if ! out=$(cd "$src" && patch -p1 --fuzz=0 --forward --no-backup-if-mismatch \
	    -r - < "$p" 2>&1); then
		printf '%s\n' "$out" >&2
		die "patch $(basename "$p") does not apply to OpenSSH $OPENSSH_VERSION
  (the series is made for $PIN_VERSION).  Fix or refresh it: HACKING.md,
  'Rebasing' (make dev-tree, quilt push -f, fix the .rej, quilt refresh)."
	fi
	if grep -q 'with fuzz' <<< "$out"; then
		printf '%s\n' "$out" >&2
		die "patch $(basename "$p") applies only with fuzz; refresh it (HACKING.md)"
	fi
	if grep -q 'offset' <<< "$out"; then
		if [ "$mode" = strict ]; then
			printf '%s\n' "$out" >&2
			die "patch $(basename "$p") applies with offsets; refresh it (HACKING.md)"
		fi
		printf '%s\n' "$out" | grep 'offset' | sed 's/^/    /' >&2
	fi
}

# The pinned release must take the series exactly; another release a user
# brings may shift hunks (offsets are shown), never fuzz them.
strict=strict
if [ "$OPENSSH_VERSION" != "$PIN_VERSION" ]; then
	note "OpenSSH $OPENSSH_VERSION is not the pinned $PIN_VERSION: offsets allowed, fuzz refused"
	strict=lenient
fi

if [ "$flavour" = hpn ]; then
	series_copy_src "$src"
	for p in $(series_patches); do
		[ -f "$top/patches/$p" ] || die "patches/series lists $p, which is missing"
		fixed=$(series_fixed_in "$top/patches/$p")
		if [ -n "$fixed" ] && version_ge "$OPENSSH_VERSION" "$fixed"; then
			note "skipping $p: upstream fixed this in $fixed (base is $OPENSSH_VERSION)"
			echo "skipped: $p (fixed upstream in $fixed)" >> "$info"
			continue
		fi
		apply "$top/patches/$p" "$strict"
		echo "hpn: $p" >> "$info"
	done
	note "applied $(grep -c '^hpn:' "$info") patches from patches/series"
fi

rm -rf "$dest"
mv "$tmp" "$dest"
