#!/bin/bash
# dev-tree.sh DLDIR DEST
#
# An editable tree for working on the patch series: the pristine tarball
# plus Debian's security fixes (the base our series is made against), our
# src/ files as symlinks into this repository, and patches/ linked so quilt
# works on the repository's series directly.  See HACKING.md.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib/upstream.sh"
[ $# -eq 2 ] || { echo "usage: $0 DLDIR DEST" >&2; exit 2; }
dl=$1 dest=$2
command -v quilt >/dev/null || { echo "dev-tree: quilt is not installed (apt-get install quilt)" >&2; exit 1; }
"$top/scripts/prepare-tree.sh" stock "$dl" "$dest"
tree="$dest/openssh-${OPENSSH_VERSION}"
for f in "$top"/src/*.[ch] "$top"/src/*/*.[ch] "$top"/src/*/*.mk; do
	[ -e "$f" ] || continue
	mkdir -p "$tree/$(dirname "${f#"$top"/src/}")"
	ln -sf "$f" "$tree/${f#"$top"/src/}"
done
ln -sfn "$top/patches" "$tree/patches"
ln -sf "$top/.quiltrc" "$tree/.quiltrc"
cd "$tree"
if [ -s patches/series ]; then
	QUILTRC=.quiltrc quilt push -a -q
fi
sed -i 's/^flavour: stock/flavour: dev (quilt)/' .hpn-tree
cat <<EOM
dev tree ready: $tree
  cd $tree
  export QUILTRC=\$PWD/.quiltrc
  quilt top / quilt edit FILE / quilt refresh     (see HACKING.md)
EOM
