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
