#!/bin/bash
# series.sh: our series and our files, as the scripts that put them into an
# OpenSSH tree see them (sourced by prepare-tree.sh, patch-check.sh and
# rebase-check.sh; $top is the repository).

# series_patches: the names patches/series lists, in order.
series_patches() {
	sed -e 's/#.*//' "$top/patches/series" | awk 'NF {print $1}'
}

# series_fixed_in PATCHFILE: its header's Upstream-Fixed-In release, or
# nothing.
series_fixed_in() {
	sed -n '/^---/q; s/^Upstream-Fixed-In: *\([^ ]*\).*/\1/p' "$1"
}

# version_ge A B: OpenSSH release A is B or later (10.10p1 > 10.9p1).
version_ge() {
	[ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | tail -n 1)" = "$1" ]
}

# series_copy_src DIR: src/ and its folders (src/xfer/: the SFTP engine's
# layers) into the tree DIR, at the same paths.
series_copy_src() {
	local f rel
	for f in "$top"/src/*.[ch] "$top"/src/*/*.[ch] "$top"/src/*/*.mk; do
		[ -e "$f" ] || continue
		rel=${f#"$top"/src/}
		mkdir -p "$1/$(dirname "$rel")"
		cp -p "$f" "$1/$rel"
	done
}
