#!/bin/bash
# patch-check.sh DLDIR WORKDIR
#
# Checks the patch series: every patch listed exists and carries a DEP-3
# header (Description, Author, Forwarded, Last-Update); every patch file in
# patches/ is listed; the series applies to a fresh tree with no fuzz and no
# offset; and the repository holds no file of the OpenSSH tarball.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib/upstream.sh"
. "$top/scripts/lib/series.sh"
[ $# -eq 2 ] || { echo "usage: $0 DLDIR WORKDIR" >&2; exit 2; }
dl=$1 work=$2
err=0
bad() { echo "patch-check: $*" >&2; err=1; }

listed=$(series_patches)
for p in $listed; do
	f="$top/patches/$p"
	[ -f "$f" ] || { bad "$p: listed in series but missing"; continue; }
	hdr=$(sed '/^--- /,$d' "$f")
	for field in Description Author Forwarded Last-Update; do
		# a here-string, not a pipe: with pipefail, grep -q's early
		# exit can fail the writer (SIGPIPE) and the check with it
		grep -qE "^$field: ." <<< "$hdr" || bad "$p: no DEP-3 $field: field"
	done
done
for f in "$top"/patches/*.patch; do
	[ -e "$f" ] || continue
	grep -qx "$(basename "$f")" <<< "$(printf '%s\n' $listed)" ||
		bad "$(basename "$f"): not in patches/series"
done

# Nothing of upstream's tree may be committed: compare content hashes.
tarball=$(upstream_dl_tarball "$dl" || true)
if [ -n "$tarball" ] && command -v git >/dev/null && git -C "$top" rev-parse >/dev/null 2>&1; then
	rm -rf "$work"; mkdir -p "$work/up"
	tar -C "$work/up" -xf "$tarball"
	(cd "$work/up" && find . -type f -size +0 -print0 | xargs -0 sha256sum | awk '{print $1}' | sort -u) > "$work/up.sums"
	(cd "$top" && git ls-files -z | xargs -0 -r sha256sum 2>/dev/null) | sort > "$work/repo.sums"
	dup=$(join -o 2.2 "$work/up.sums" <(sort -k1,1 "$work/repo.sums") || true)
	[ -z "$dup" ] || bad "these committed files are copies of OpenSSH files: $dup"
fi

[ $err -eq 0 ] || exit 1
# Applies strictly (prepare-tree.sh refuses fuzz and offsets).
"$top/scripts/prepare-tree.sh" hpn "$dl" "$work/tree" 2> "$work.log" || { cat "$work.log" >&2; exit 1; }
rm -rf "$work" "$work.log"
echo "patch-check: $(echo "$listed" | wc -w) patches: DEP-3 headers present, apply with no fuzz and no offset"
