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
# Output goes to LOGDIR/regress-MODE.log; progress and every skip (a whole
# test's, or a part's: tests/lib/skips.sh) with its reason are printed; on
# failure the failed-*.log files are shown.  With CI=true, a skip that
# tests/allowed-skips does not name fails the run.
# Never run two of these at once on one tree.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/lib/skips.sh"
HPN_SKIPS_ALLOWED=${HPN_SKIPS_ALLOWED:-$top/tests/allowed-skips}
[ $# -ge 3 ] || { echo "usage: $0 openssh|openssh-quick|hpn|security TREE LOGDIR [STOCK_TREE]" >&2; exit 2; }
mode=$1 tree=$(cd "$2" && pwd) logs=$3 stock=${4:-}
# absolute before the cd into the tree below
[ -z "$stock" ] || stock=$(cd "$stock" && pwd) ||
	{ echo "regress: STOCK_TREE $4: no such directory" >&2; exit 2; }
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
	# each security test shows the flaw on stock: half a test without it
	[ "$mode" != security ] || [ -n "$stock" ] ||
		{ echo "regress: security needs STOCK_TREE (make stock)" >&2; exit 2; }
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
tail -n +1 -f --pid=$mpid "$log" | grep --line-buffered -E '^run test|^SKIPPED|^[Ss]kipped[ :(]|^skipping[ :]|^skip test|^failed|FAIL|passed$' |
    sed -u 's/^/  /'
wait $mpid
rc=$?
set -e
secs=$(( $(date +%s) - start ))

# Every skip as "TEST<tab>TEXT": the test (its script's name less .sh,
# from the "run test X ..." line before it; "-" before any) and what its
# line says.
skips() {
	awk '
	BEGIN { t = "-" }
	/^run test / { t = $3; sub(/\.sh$/, "", t) }
	/^SKIPPED: |^[Ss]kipped[ :(]|^skipping[ :]/ {
		x = $0; sub(/^(SKIPPED|[Ss]kipped|skipping):? */, "", x)
		printf "%s\t%s\n", t, x }
	/^skip test / { x = $3; sub(/\.sh$/, "", x)
		printf "%s\tlisted in SKIP_LTESTS\n", x }' "$log"
}
nrun=$(grep -c '^run test ' "$log" || true)
nskip=0
notallowed=""
while IFS="$(printf '\t')" read -r t x; do
	nskip=$((nskip + 1))
	echo "    skipped $t: $x"
	if [ "${CI:-}" = true ] && ! skip_allowed "$t" "$x"; then
		notallowed="$notallowed
    $t: $x"
	fi
done < <(skips)
echo "  $nrun tests run, $nskip skips"
if [ -n "$notallowed" ]; then
	echo "regress($mode): in CI, skips that tests/allowed-skips does not allow:$notallowed" >&2
	[ $rc -ne 0 ] || rc=1
fi
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
