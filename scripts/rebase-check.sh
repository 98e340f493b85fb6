#!/bin/bash
# rebase-check.sh UPSTREAM [OUT]   (make rebase-check UPSTREAM=...)
#
# A dry run of the next rebase: applies patches/series to another OpenSSH
# tree and reports, patch by patch, every hunk that fails, with the file,
# the hunk's first line and what it changes, so that the work of moving to
# a new base is known before anyone starts it (HACKING.md, "Rebasing").
#
# UPSTREAM is a release tarball (.tar.gz or .tar.xz, unverified: nothing is
# built from it) or a directory: an unpacked release, or a tree exported
# from openssh-portable's history (git archive V_10_5_P1 | tar -x -C DIR).
# The tree's version is read from its version.h (REBASE_VERSION=X says
# otherwise); our fixes whose Upstream-Fixed-In: is that version or older
# are skipped, as prepare-tree.sh skips them, and a patch the tree already
# holds is counted apart (upstream took it, or a fix like it).  Patches apply as quilt push would with FUZZ (default 2,
# GNU patch's own default): a hunk that applies only with fuzz is counted
# apart, since fuzz may place it wrongly.  What fails is kept as .rej files
# in OUT (default build/rebase-check), with the report (report.txt).
#
# Exit status: 0 when every hunk applies, 1 when some fail, 2 on bad use.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib/series.sh"
FUZZ=${FUZZ:-2}

usage() { echo "usage: $0 UPSTREAM-TARBALL-OR-DIR [OUT]" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
up=$1
out=${2:-$top/build/rebase-check}
case "$FUZZ" in [0-3]) ;; *) echo "rebase-check: FUZZ must be 0-3" >&2; exit 2 ;; esac

rm -rf "$out"
mkdir -p "$out/rej"
out=$(cd "$out" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/rebase-check.XXXXXX")
trap 'rm -rf "$work"' EXIT

# the tree, unpacked or copied (never touched in place)
if [ -d "$up" ]; then
	src=$work/tree
	mkdir -p "$src"
	(cd "$up" && tar --exclude=.git -cf - .) | tar -C "$src" -xf -
elif [ -f "$up" ]; then
	tar -C "$work" -xf "$up" || { echo "rebase-check: $up: not a tarball tar can read" >&2; exit 2; }
	src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n 1)
	[ -n "$src" ] || { echo "rebase-check: $up holds no directory" >&2; exit 2; }
else
	echo "rebase-check: $up: no such file or directory" >&2
	exit 2
fi
[ -f "$src/version.h" ] && [ -f "$src/ssh.c" ] ||
	{ echo "rebase-check: $up is not an OpenSSH tree (no version.h, ssh.c)" >&2; exit 2; }

# "OpenSSH_10.5" + "p1" -> 10.5p1
v=$(sed -n 's/^#define SSH_VERSION[^"]*"OpenSSH_\([^"]*\)".*/\1/p' "$src/version.h")
p=$(sed -n 's/^#define SSH_PORTABLE[^"]*"\([^"]*\)".*/\1/p' "$src/version.h")
version=${REBASE_VERSION:-$v$p}
[ -n "$v" ] || { echo "rebase-check: no SSH_VERSION in $up/version.h" >&2; exit 2; }

# our own files, as prepare-tree.sh puts them
series_copy_src "$src"

report=$out/report.txt
: > "$report"
say() { printf '%s\n' "$*" | tee -a "$report"; }

say "rebase-check: patches/series onto OpenSSH $version ($up), fuzz $FUZZ"
tot_h=0 tot_f=0 tot_z=0 tot_o=0 tot_in=0 npat=0 nbad=0 nskip=0
printf '%-44s %6s %6s %6s %6s\n' patch hunks failed fuzzed offset | tee -a "$report"
details=$work/details
: > "$details"
for pn in $(series_patches); do
	pf=$top/patches/$pn
	[ -f "$pf" ] || { say "$pn: listed in series, missing"; exit 2; }
	fixed=$(series_fixed_in "$pf")
	if [ -n "$fixed" ] && version_ge "$version" "$fixed"; then
		printf '%-44s skipped: upstream fixed it in %s\n' "$pn" "$fixed" | tee -a "$report"
		nskip=$((nskip + 1))
		continue
	fi
	npat=$((npat + 1))
	hunks=$(grep -c '^@@ ' "$pf" || true)
	# applies what applies; the rest goes to the .rej (patch exits 1)
	o=$(cd "$src" && patch -p1 --forward --fuzz="$FUZZ" --no-backup-if-mismatch \
	    -r "$out/rej/$pn.rej" < "$pf" 2>&1) || true
	failed=$(grep -c 'FAILED at' <<< "$o" || true)
	fuzzed=$(grep -c 'with fuzz' <<< "$o" || true)
	offset=$(grep 'succeeded at' <<< "$o" | grep -vc 'with fuzz' || true)
	# a file the patch changes and the tree lacks
	if grep -q "can't find file" <<< "$o"; then
		miss=$(grep -c "can't find file" <<< "$o" || true)
		failed=$((failed + miss))
	fi
	# hunks the tree holds already: "N out of M hunks ignored"
	in=$(awk '/hunks? ignored/ { n += $1 } END { print n + 0 }' <<< "$o")
	tot_in=$((tot_in + in))
	[ -s "$out/rej/$pn.rej" ] || rm -f "$out/rej/$pn.rej"
	printf '%-44s %6d %6d %6d %6d\n' "$pn" "$hunks" "$failed" "$fuzzed" "$offset" | tee -a "$report"
	tot_h=$((tot_h + hunks)) tot_f=$((tot_f + failed))
	tot_z=$((tot_z + fuzzed)) tot_o=$((tot_o + offset))
	if [ "$failed" -gt 0 ]; then
		nbad=$((nbad + 1))
		# which hunks: "patching file F" then "Hunk #N FAILED at L."
		awk -v pn="$pn" '
			/^patching file / { f = $3 }
			/^can.t find file/ { print "  " pn ": a file it changes is missing" }
			/FAILED at/ { sub(/\.$/, ""); print "  " pn ": " f ": " $0 }
		' <<< "$o" >> "$details"
	fi
done
say ""
say "failing hunks, by patch (the .rej files are in $out/rej):"
if [ -s "$details" ]; then
	tee -a "$report" < "$details"
else
	say "  none"
fi
say ""
say "rebase-check: OpenSSH $version: $tot_f of $tot_h hunks fail in $nbad of $npat patches ($tot_z apply only with fuzz, $tot_o with an offset, $tot_in already there; $nskip patches skipped as fixed upstream)"
[ "$tot_f" -eq 0 ]
