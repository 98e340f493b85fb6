#!/bin/bash
# build.sh configure|sync-src|make FLAVOUR TREE LOGDIR [ARGS...]
#
# The configure and make steps of the top-level Makefile, with their output
# in LOGDIR and, on failure, a message naming the step and the usual fix.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 4 ] || { echo "usage: $0 configure|sync-src|make FLAVOUR TREE LOGDIR [ARGS...]" >&2; exit 2; }
step=$1 flavour=$2 tree=$3 logs=$4
shift 4
mkdir -p "$logs"
logs=$(cd "$logs" && pwd)
log="$logs/$step-$flavour.log"

fail() {
	printf '%s(%s): error: %s\n' "$step" "$flavour" "$1" >&2
	exit 1
}

# libxxhash, for verified resume's xxh128 (src/hpn-sftp-hash.c): looked for
# with the configured tree's own compiler and flags once configure has run
# (OpenSSH's configure is the tarball's, not regenerated: no configure.ac
# hook), and written to the tree's hpn-hash.mk, which its Makefile includes
# (hpn-resume-hash.patch).  HPN_XXHASH: auto (the default: used where
# found), yes (required: the packages), no (left out).
xxhash_probe() {
	local tv cc cflags ldflags d ver mk new
	grep -q 'hpn-hash\.mk' "$tree/Makefile.in" 2>/dev/null || return 0
	case "${HPN_XXHASH:-auto}" in auto|yes|no) ;; *) fail "XXHASH must be auto, yes or no" ;; esac
	tv() { make -s --no-print-directory -C "$tree" -f Makefile -f "$top/scripts/lib/print-var.mk" "print-$1"; }
	cc=$(tv CC) cflags=$(tv CFLAGS) ldflags=$(tv LDFLAGS)
	d=$(mktemp -d)
	cat > "$d/x.c" <<-'EOT'
	#include <stdio.h>
	#include <xxhash.h>
	#if XXH_VERSION_NUMBER < 800
	#error "XXH3 is stable from xxHash 0.8.0"
	#endif
	int main(void) {
		XXH3_state_t *s = XXH3_createState();
		XXH128_canonical_t c;
		if (s == NULL || XXH3_128bits_reset(s) != XXH_OK ||
		    XXH3_128bits_update(s, "abc", 3) != XXH_OK)
			return 1;
		XXH128_canonicalFromHash(&c, XXH3_128bits_digest(s));
		XXH3_freeState(s);
		printf("%u.%u.%u\n", XXH_versionNumber() / 10000,
		    XXH_versionNumber() / 100 % 100, XXH_versionNumber() % 100);
		return XXH_versionNumber() < 800;
	}
	EOT
	ver=
	# shellcheck disable=SC2086
	if [ "${HPN_XXHASH:-auto}" != no ] &&
	    $cc $cflags -o "$d/x" "$d/x.c" $ldflags -lxxhash >> "$log" 2>&1; then
		ver=$("$d/x" 2>>"$log") || ver=
	fi
	rm -rf "$d"
	mk="$tree/hpn-hash.mk"
	if [ -n "$ver" ]; then
		printf 'configure(%s): xxh128 for verified resume: yes (libxxhash %s)\n' "$flavour" "$ver"
		new="# scripts/build.sh: libxxhash $ver found: xxh128 for verified resume
CPPFLAGS+=-DHPN_WITH_XXHASH=1
HPN_HASH_LIBS=-lxxhash"
	elif [ "${HPN_XXHASH:-auto}" = yes ]; then
		fail "XXHASH=yes: no usable libxxhash (0.8 or later) with $cc (details: $log).
  Install libxxhash-dev (Debian) or xxhash-devel (Fedora): 'make deps'."
	else
		printf 'configure(%s): xxh128 for verified resume: no (%s); SHA-256 and BLAKE2b only\n' "$flavour" \
		    "$([ "${HPN_XXHASH:-auto}" = no ] && echo XXHASH=no || echo 'libxxhash-dev not found')"
		new="# scripts/build.sh: no libxxhash: verified resume without xxh128
HPN_HASH_LIBS="
	fi
	# objects see the define through config.h's date, as our headers do
	if [ "$(cat "$mk" 2>/dev/null)" != "$new" ]; then
		printf '%s\n' "$new" > "$mk"
		touch "$tree/config.h"
	fi
}

case "$step" in
configure)
	printf 'configure(%s): ./configure %s\n' "$flavour" "$*"
	if ! (cd "$tree" && ./configure "$@") > "$log" 2>&1; then
		tail -n 15 "$log" >&2
		grep -E '^configure: error' "$tree/config.log" 2>/dev/null | tail -n 3 >&2 || true
		fail "configure failed (full output: $log, details: $tree/config.log).
  A missing library is the usual cause: run 'make deps' as root (or
  apt-get install the packages listed by scripts/deps.sh)."
	fi
	xxhash_probe
	;;
sync-src)
	# Our files into the tree; only those that changed, so make's
	# timestamps stay meaningful.
	for f in "$top"/src/*.[ch] "$top"/src/*/*.[ch] "$top"/src/*/*.mk; do
		[ -e "$f" ] || continue
		d="$tree/${f#"$top"/src/}"
		mkdir -p "$(dirname "$d")"
		cmp -s "$f" "$d" && continue
		cp "$f" "$d"
		# OpenSSH's objects depend on config.h, not on the headers
		# they include: a changed header of ours rebuilds them all.
		case "$f" in *.h) touch "$tree/config.h" ;; esac
	done
	;;
make)
	printf 'make(%s): building (log: %s)\n' "$flavour" "$log"
	start=$(date +%s)
	if ! make -C "$tree" "$@" > "$log" 2>&1; then
		grep -E 'error|Error' "$log" | head -n 20 >&2 || true
		tail -n 10 "$log" >&2
		fail "build failed (full output: $log)."
	fi
	# Our own sources compile without warnings.
	ours=$(cd "$top/src" && ls *.c */*.c 2>/dev/null | sed 's/\./\\./g' | paste -sd'|' -)
	if [ -n "$ours" ] && grep -E "^($ours):[0-9]+:[0-9]+: warning" "$log" >&2; then
		fail "our sources (src/) must compile without warnings"
	fi
	# Where make's default goal was asked for (no target given), it
	# built the programs: a rule placed before Makefile.in's first
	# target once became that goal, make built one object and this
	# said done.
	goals=0
	for a in "$@"; do
		case "$a" in -*) ;; *) goals=1 ;; esac
	done
	if [ "$goals" = 0 ]; then
		for p in ssh sshd sshd-session scp sftp sftp-server ssh-keygen; do
			[ -x "$tree/$p" ] ||
			    fail "make built no $p in $tree (full output: $log)."
		done
	fi
	# The regress suite runs scp from the build directory with that
	# directory in PATH; an installed HPN host has hpnscp there too.
	if [ "$flavour" = hpn ]; then
		ln -sf scp "$tree/hpnscp"
	fi
	printf 'make(%s): done in %ss\n' "$flavour" "$(( $(date +%s) - start ))"
	;;
*)
	fail "unknown step"
	;;
esac
