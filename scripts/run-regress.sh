#!/bin/bash
# run-regress.sh openssh|openssh-quick|hpn|security TREE LOGDIR [STOCK_TREE]
#
#   openssh        OpenSSH's own full suite ("make tests": file-tests, t-exec,
#                  interop-tests, extra-tests, unit) on TREE
#   openssh-quick  a t-exec subset for iteration
#   hpn            our regress tests (tests/regress/*.sh, in OpenSSH's
#                  style: they run under regress/test-exec.sh)
#   security       the tests of our security fixes (tests/security/*.sh,
#                  the same way; each also shows the flaw on STOCK_TREE).
#                  Those of PAM and GSSAPI code run the site builds named
#                  by HPN_SITE_TREE and HPN_STOCK_SITE_TREE in the
#                  environment (make check-security sets them).
#
# Output goes to LOGDIR/regress-MODE.log; progress and every skipped test
# with its reason are printed; on failure the failed-*.log files are shown.
# Never run two of these at once on one tree.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 3 ] || { echo "usage: $0 openssh|openssh-quick|hpn|security TREE LOGDIR [STOCK_TREE]" >&2; exit 2; }
mode=$1 tree=$(cd "$2" && pwd) logs=$3 stock=${4:-}
mkdir -p "$logs"
logs=$(cd "$logs" && pwd)
log="$logs/regress-$mode-$(basename "$(dirname "$tree")").log"
jobs=$(nproc 2>/dev/null || echo 2)

QUICK_LTESTS="connect connect-privsep proto-version banner transfer try-ciphers
rekey sftp sftp-cmds sftp-batch scp scp3 multiplex forwarding dynamic-forward
keyscan portnum cfgparse sshcfgparse cfginclude servcfginclude cfgmatch percent"

cd "$tree"
rm -f regress/failed-*.log
# The tree's Makefile names its own directory (BUILDDIR): a copy of a tree
# (scripts/check-all.sh) must build and run its own binaries and OBJ.
here=(BUILDDIR="$tree" abs_top_srcdir="$tree" abs_top_builddir="$tree")
# Build the regress helpers first, in parallel: upstream's own rule for
# them is serial, and racy in parallel without regress-prep.
make -s "${here[@]}" regress-prep > /dev/null 2>&1
blog="$logs/regress-build-$mode-$(basename "$(dirname "$tree")").log"
make -s -j"$jobs" "${here[@]}" regress-binaries regress-unit-binaries > "$blog" 2>&1 || {
	tail -n 20 "$blog" >&2
	echo "regress: error: building the regress helpers failed (log: $blog)" >&2
	exit 1; }

case "$mode" in
openssh)
	target=(tests) ;;
openssh-quick)
	target=(t-exec LTESTS="$(echo $QUICK_LTESTS)") ;;
hpn|security)
	ours=""
	case "$mode" in
	hpn) glob="$top/tests/regress/*.sh" ;;
	security) glob="$top/tests/security/*.sh" ;;
	esac
	for t in $glob; do
		[ -e "$t" ] || continue
		grep -q '^tid=' "$t" || continue	# helpers (lib.sh, kdc.sh)
		# ONLY="hpn-sftp-tree hpn-window": just these
		[ -z "${ONLY:-}" ] || [[ " $ONLY " = *" $(basename "$t" .sh) "* ]] ||
		    continue
		cp "$t" regress/
		ours="$ours $(basename "$t" .sh)"
	done
	[ -n "$ours" ] || { echo "regress: no tests for $mode" >&2; exit 1; }
	export HPN_TOP="$top"
	[ -z "$stock" ] || export HPN_STOCK_TREE="$(cd "$stock" && pwd)"
	target=(t-exec LTESTS="${ours# }") ;;
*)
	echo "regress: unknown mode $mode" >&2; exit 2 ;;
esac

start=$(date +%s)
: > "$log"	# before tail -f looks for it
echo "regress($mode): make ${target[*]} in $tree (log: $log)"
set +e
make "${here[@]}" "${target[@]}" > "$log" 2>&1 < /dev/null &
mpid=$!
# Follow the log for progress (bounded by make's own end).
tail -n +1 -f --pid=$mpid "$log" | grep --line-buffered -E '^run test|^SKIPPED|^[Ss]kipped[ :(]|^skip test|^failed|FAIL|passed$' |
    sed -u 's/^/  /'
wait $mpid
rc=$?
set -e
secs=$(( $(date +%s) - start ))

summary() {
	# Each "run test X ..." line, then SKIPPED lines of that test.
	awk '
	/^run test / { t = $3; n++ }
	/^SKIPPED: |^[Ss]kipped[ :(]/ {
		sub(/^(SKIPPED|[Ss]kipped):? */, ""); printf "    skipped %s: %s\n", t, $0; s++ }
	/^skip test / { printf "    skipped %s: listed in SKIP_LTESTS\n", $3; s++ }
	END { printf "  %d tests run, %d skipped\n", n, s }' "$log"
}
summary
if [ $rc -ne 0 ]; then
	for f in regress/failed-*.log; do
		[ -e "$f" ] || continue
		echo "---- $tree/$f (last 60 lines)"
		tail -n 60 "$f"
	done
	echo "regress($mode): FAILED after ${secs}s (log: $log)" >&2
	exit 1
fi
echo "regress($mode): passed in ${secs}s"
