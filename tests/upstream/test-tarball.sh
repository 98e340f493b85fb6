#!/bin/bash
# test-tarball.sh TOP: what a user who brings another OpenSSH release gets.
#
# Made from the pinned tarball (no other release is fetchable here):
#   - the pinned release with one byte changed: refused, SHA-256 mismatch;
#   - the same tree with our security fixes applied (as a release that has
#     them would carry them), repacked as release 10.9p1: refused without
#     its OPENSSH_SHA256; with it, the tree is prepared: our fixes for flaws
#     upstream fixed by 10.9p1 are skipped (Upstream-Fixed-In), the rest of
#     the series applies;
#   - that tree with a line our series needs changed: refused, naming the
#     patch that stopped applying.
# Works in a temporary directory; touches nothing of build/.
set -euo pipefail
top=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
. "$top/upstream/openssh.mk"
pin=$top/build/dl/openssh_${OPENSSH_VERSION}.orig.tar.gz
[ -f "$pin" ] || { echo "upstream: $pin missing (make fetch)" >&2; exit 1; }
w=$(mktemp -d /tmp/hpn-upstream.XXXXXX)
trap 'rm -rf "$w"' EXIT
fails=0
ok() { echo "upstream: ok: $*"; }
bad() { echo "upstream: FAIL: $*" >&2; fails=$((fails + 1)); }

# expect_fail OUTFILE PATTERN CMD...: CMD fails and says PATTERN.
expect_fail() {
	local out=$1 pat=$2
	shift 2
	if "$@" > "$out" 2>&1; then
		bad "succeeded: $*"; return
	fi
	if grep -q -- "$pat" "$out"; then
		ok "refused: $(grep -m1 -- "$pat" "$out" | cut -c1-150)"
	else
		bad "refused without saying '$pat': $(head -c 300 "$out")"
	fi
}

tar -C "$w" -xzf "$pin"
src=$w/openssh-$OPENSSH_VERSION

# 1. The pinned release, one byte changed.
printf '#' >> "$src/README"
tar -C "$w" -czf "$w/bad.tar.gz" "openssh-$OPENSSH_VERSION"
expect_fail "$w/1.out" "SHA-256 mismatch" \
    env OPENSSH_TARBALL="$w/bad.tar.gz" "$top/scripts/fetch-upstream.sh" "$w/dl1"
[ ! -e "$w/dl1/openssh_${OPENSSH_VERSION}.orig.tar.gz" ] || bad "the bad tarball was copied"
rm -rf "$src"
tar -C "$w" -xzf "$pin"

# 2. "10.9p1": refused without its hash, prepared with it.  A release that
# has fixed the flaws our security patches fix carries those fixes, so the
# stand-in is the pinned tree with them applied (upstream's own fix will
# differ in its lines, but the HPN patches see a tree in which the fixed
# code has moved on, as they would in the real release).
new=10.9p1
for p in $(sed -e 's/#.*//' "$top/patches/series"); do
	grep -q '^Upstream-Fixed-In: ' "$top/patches/$p" || continue
	patch -s -p1 -F0 -N --no-backup-if-mismatch -d "$src" \
	    < "$top/patches/$p" || bad "$p does not apply to the pinned tree"
done
mv "$src" "$w/openssh-$new"
tar -C "$w" -czf "$w/new.tar.gz" "openssh-$new"
h=$(sha256sum "$w/new.tar.gz" | awk '{print $1}')
expect_fail "$w/2.out" "OPENSSH_SHA256" \
    env OPENSSH_TARBALL="$w/new.tar.gz" "$top/scripts/lib/upstream.sh" check
expect_fail "$w/2m.out" "give its SHA-256" \
    make -s -C "$top" OPENSSH_TARBALL="$w/new.tar.gz" -n fetch
if OPENSSH_TARBALL="$w/new.tar.gz" OPENSSH_SHA256=$h \
    "$top/scripts/fetch-upstream.sh" "$w/dl" > "$w/3.out" 2>&1 &&
    OPENSSH_TARBALL="$w/new.tar.gz" OPENSSH_SHA256=$h \
    "$top/scripts/prepare-tree.sh" hpn "$w/dl" "$w/tree" > "$w/4.out" 2>&1; then
	info=$w/tree/openssh-$new/.hpn-tree
	nskip=$(grep -c '^skipped: ' "$info" || true)
	nfix=$(grep -l '^Upstream-Fixed-In: ' "$top"/patches/*.patch | wc -l)
	napplied=$(grep -c '^hpn: ' "$info" || true)
	nseries=$(sed -e 's/#.*//' "$top/patches/series" | awk 'NF' | wc -l)
	[ "$nskip" -eq "$nfix" ] && [ $((nskip + napplied)) -eq "$nseries" ] ||
		bad "skipped $nskip of $nfix fixes, applied $napplied of $nseries"
	ok "$new: skipped the $nskip fixes upstream has, applied the other $napplied patches"
else
	cat "$w"/3.out "$w"/4.out >&2
	bad "$new with its hash was not prepared"
fi

# 3. A line hpn-options.patch needs, changed: the patch is named.
sed -i 's/{ "versionaddendum", oVersionAddendum },/{ "versionaddendum",  oVersionAddendum },/' \
    "$w/openssh-$new/readconf.c"
tar -C "$w" -czf "$w/new2.tar.gz" "openssh-$new"
h2=$(sha256sum "$w/new2.tar.gz" | awk '{print $1}')
OPENSSH_TARBALL="$w/new2.tar.gz" OPENSSH_SHA256=$h2 \
    "$top/scripts/fetch-upstream.sh" "$w/dl2" > "$w/5f.out" 2>&1 || bad "fetch of $new (changed)"
expect_fail "$w/5.out" "does not apply to OpenSSH $new" \
    env OPENSSH_TARBALL="$w/new2.tar.gz" OPENSSH_SHA256=$h2 \
    "$top/scripts/prepare-tree.sh" hpn "$w/dl2" "$w/tree2"
grep -q "patch hpn-[a-z-]*\.patch does not apply" "$w/5.out" ||
	bad "the message does not name the patch: $(grep -m1 'does not apply' "$w/5.out")"

[ $fails -eq 0 ] || { echo "upstream: $fails failed" >&2; exit 1; }
echo "upstream: all passed"
