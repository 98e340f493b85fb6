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
#     patch that stopped applying; scripts/rebase-check.sh names the hunk;
#   - the tree as an .orig.tar.xz, and a release named by version alone.
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

# 4. The dry run of a rebase (make rebase-check) on that changed tree, a
# directory: it fails, naming hpn-default-port.patch's hunk in readconf.c
# (and those of the later patches that add keywords beside it) and no other
# file; on the pinned tarball every hunk applies.
if REBASE_VERSION=$new "$top/scripts/rebase-check.sh" "$w/openssh-$new" "$w/rc1" \
    > "$w/6.out" 2>&1; then
	bad "rebase-check passed a tree our series does not fit"
elif grep -q '^  hpn-default-port.patch: readconf.c: Hunk #[0-9]* FAILED' "$w/6.out" &&
    ! grep -q '^  .*: [^r][a-z]*\.[ch]: Hunk' "$w/6.out" &&
    grep -q "^rebase-check: OpenSSH $new: [1-9][0-9]* of [0-9]* hunks fail" "$w/6.out"; then
	ok "rebase-check: $(tail -n 1 "$w/6.out" | cut -c1-120)"
else
	bad "rebase-check did not name the one failing hunk: $(tail -n 3 "$w/6.out")"
fi
if "$top/scripts/rebase-check.sh" "$pin" "$w/rc2" > "$w/7.out" 2>&1 &&
    grep -q "^rebase-check: OpenSSH $OPENSSH_VERSION: 0 of [1-9][0-9]* hunks fail" "$w/7.out"; then
	ok "rebase-check on the pin: $(tail -n 1 "$w/7.out" | cut -c1-80)"
else
	bad "rebase-check on the pinned tarball: $(tail -n 3 "$w/7.out")"
fi

# 5. An .orig.tar.xz (Debian's 10.6p1 is one): taken from a path, kept under
# its own extension, cached, prepared; and a release named by version alone
# needs its hash.
sed -i 's/{ "versionaddendum",  oVersionAddendum },/{ "versionaddendum", oVersionAddendum },/' \
    "$w/openssh-$new/readconf.c"
tar -C "$w" -cJf "$w/new.tar.xz" "openssh-$new"
hx=$(sha256sum "$w/new.tar.xz" | awk '{print $1}')
if OPENSSH_TARBALL="$w/new.tar.xz" OPENSSH_SHA256=$hx \
    "$top/scripts/fetch-upstream.sh" "$w/dl3" > "$w/8.out" 2>&1 &&
    [ -f "$w/dl3/openssh_$new.orig.tar.xz" ] && [ ! -e "$w/dl3/openssh_$new.orig.tar.gz" ] &&
    OPENSSH_VERSION=$new OPENSSH_SHA256=$hx \
    "$top/scripts/fetch-upstream.sh" "$w/dl3" > "$w/9.out" 2>&1 &&
    grep -q "cached: .*openssh_$new.orig.tar.xz" "$w/9.out" &&
    OPENSSH_VERSION=$new OPENSSH_SHA256=$hx \
    "$top/scripts/prepare-tree.sh" hpn "$w/dl3" "$w/tree3" > "$w/10.out" 2>&1 &&
    grep -q "^upstream: openssh_$new.orig.tar.xz sha256:$hx" "$w/tree3/openssh-$new/.hpn-tree"; then
	ok "$new as .orig.tar.xz: fetched from a path, cached, prepared"
else
	cat "$w"/8.out "$w"/9.out "$w"/10.out >&2 2>/dev/null || true
	bad "$new as .orig.tar.xz was not taken"
fi
expect_fail "$w/11.out" "give its SHA-256" \
    make -s -C "$top" OPENSSH_VERSION=$new -n fetch
out=$(OPENSSH_VERSION=$new OPENSSH_SHA256=$hx "$top/scripts/lib/upstream.sh" print)
[ "$out" = "ok $new $hx" ] && ok "OPENSSH_VERSION=$new with its hash: $out" ||
	bad "OPENSSH_VERSION=$new OPENSSH_SHA256=...: '$out'"

[ $fails -eq 0 ] || { echo "upstream: $fails failed" >&2; exit 1; }
echo "upstream: all passed"
