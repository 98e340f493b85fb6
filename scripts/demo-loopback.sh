#!/bin/bash
# demo-loopback.sh TREE [SIZE_MIB]
#
# The smallest end-to-end run: a throwaway hpnsshd on 127.0.0.1 (own keys,
# own port, own config), a file copied to it with hpnscp, its rate shown
# and its SHA-256 compared.  Loopback has no latency, so this shows that the
# suite works, not what HPN gains: that needs a long fat path (make demo).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib/sshd.sh"
tree=$(cd "$1" && pwd) size=${2:-512}
work=$(mktemp -d /dev/shm/hpn-demo.XXXXXX 2>/dev/null || mktemp -d)
port=$((20000 + RANDOM % 20000))
cleanup() { tsshd_stop "$work" "$port"; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

tsshd_setup "$work"
tsshd_start "$work" "$tree" "$port" 127.0.0.1
tsshd_client_config "$work" "$port" 127.0.0.1 > "$work/ssh_config"
head -c $((size * 1024 * 1024)) /dev/urandom > "$work/in"
echo "demo: copying ${size} MiB (in $work, tmpfs) with $($tree/ssh -V 2>&1 | cut -d, -f1)"
t0=$(date +%s.%N)
"$tree/scp" -S "$tree/ssh" -F "$work/ssh_config" "$work/in" "demo:$work/out"
t1=$(date +%s.%N)
a=$(sha256sum < "$work/in") b=$(sha256sum < "$work/out")
[ "$a" = "$b" ] || { echo "demo: FAILED: the copy differs" >&2; exit 1; }
awk -v s="$size" -v a="$t0" -v b="$t1" 'BEGIN {
	printf "demo: hpnscp upload over loopback: %d MiB in %.2f s = %.0f MB/s (sha256 identical)\n",
	    s, b - a, s * 1048576 / (b - a) / 1e6 }'
