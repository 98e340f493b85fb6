#!/bin/bash
# build-asan.sh DLDIR DEST LOGDIR [CONFIGURE_ARGS...]
#
# A second hpn tree built with AddressSanitizer + UndefinedBehaviorSanitizer
# in DEST/openssh-X (DEST: build/asan, wiped when the tree is re-made), prepared by scripts/prepare-tree.sh and
# configured with the hpn build's own options (passed as arguments by the
# Makefile) plus what OpenSSH's sanitizer CI uses (.github/configs):
#
#   --with-sandbox=no      the seccomp filter of sshd-auth would kill the
#                          process (SIGSYS) at the first syscall a sanitizer
#                          report needs (open of /proc/self/maps, the log file,
#                          sigaltstack...), hiding the report itself
#   --without-hardening --without-stackprotect
#                          no _FORTIFY_SOURCE/stack protector under ASan
#   -Dchroot=chdir         so that the privsep children can still reach /proc
#                          and the report directory; chroot is not tested here
#
# Default sanitizer options and the report directory DEST/san are linked
# in (tests/sanitize/sanopts.c).  Rebuilt from scratch when the series, the
# upstream pin or the arguments change; src/ changes rebuild incrementally.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/lib/upstream.sh"
[ $# -ge 3 ] || { echo "usage: $0 DLDIR DEST LOGDIR [CONFIGURE_ARGS...]" >&2; exit 2; }
dl=$1 dest=$2 logs=$3
shift 3
mkdir -p "$dest" "$logs"
dest=$(cd "$dest" && pwd)
logs=$(cd "$logs" && pwd)
tree=$dest/openssh-$OPENSSH_VERSION
san=$dest/san

SANFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -g -O1"
cfg=(--with-sandbox=no --without-hardening --without-stackprotect "$@"
    "CFLAGS=$SANFLAGS" "CPPFLAGS=-Dchroot=chdir -D_FORTIFY_SOURCE=0"
    "LDFLAGS=-fsanitize=address,undefined" "LIBS=$dest/sanopts.o")

# What the tree depends on: the series, the pin, the preparation script and
# the configure arguments (and this script).
stamp=$dest/.inputs
inputs=$( { printf '%s\n' "${cfg[@]}"; cat "$top/upstream/openssh.mk" \
    "$top/scripts/prepare-tree.sh" "$0" "$top/tests/sanitize/sanopts.c" \
    "$top/patches/series"; for p in $(sed -e 's/#.*//' "$top/patches/series" |
    awk 'NF {print $1}'); do cat "$top/patches/$p"; done; } | sha256sum)
if [ ! -x "$tree/sshd" ] || [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$inputs" ]; then
	rm -f "$stamp"
	echo "asan: preparing $tree"
	"$top/scripts/prepare-tree.sh" hpn "$dl" "$dest"	# wipes DEST
	mkdir -p "$san"
	cc -O1 -g -DSANLOG="\"$san\"" -c -o "$dest/sanopts.o" "$top/tests/sanitize/sanopts.c"
	"$top/scripts/build.sh" configure asan "$tree" "$logs" "${cfg[@]}"
	grep -q '^#define SANDBOX_NULL 1' "$tree/config.h" ||
		{ echo "asan: error: expected the null sandbox" >&2; exit 1; }
	echo "$inputs" > "$stamp.pending"
fi
mkdir -p "$san"
chmod 1777 "$san"	# sshd-auth reports as the privsep user
"$top/scripts/build.sh" sync-src asan "$tree" "$logs"
"$top/scripts/build.sh" make asan "$tree" "$logs" -j"$(nproc 2>/dev/null || echo 2)"
ln -sf scp "$tree/hpnscp"
[ ! -f "$stamp.pending" ] || mv "$stamp.pending" "$stamp"
# Make sure the sanitizers really are in.
syms=$(nm "$tree/sshd-session")
grep -q __asan_init <<< "$syms" || { echo "asan: error: sshd-session lacks ASan" >&2; exit 1; }
grep -q __ubsan_handle <<< "$syms" || { echo "asan: error: sshd-session lacks UBSan" >&2; exit 1; }
echo "asan: $tree built ($("$tree/ssh" -V 2>&1))"
