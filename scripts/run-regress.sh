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

# The lines of a run that show its progress: tests, skips, failures
PROGRESS='^run test|^SKIPPED|^[Ss]kipped[ :(]|^skipping[ :]|^skip test|^failed|FAIL'
# show_failed TREE: the end of each of TREE's regress/failed-*.log
show_failed() {
	local f
	for f in "$1"/regress/failed-*.log; do
		[ -e "$f" ] || continue
		echo "---- $f (last 60 lines)"
		tail -n 60 "$f"
	done
}
# Every skip as "TEST<tab>TEXT": the test (its script's name less .sh,
# from the "run test X ..." line before it; "-" before any) and what its
# line says.
skips() {
	awk '
	BEGIN { t = "-" }
	/^run test / { t = $3; sub(/\.sh$/, "", t) }
	/^== part: / { t = "-" }
	/^SKIPPED: |^[Ss]kipped[ :(]|^skipping[ :]/ {
		x = $0; sub(/^(SKIPPED|[Ss]kipped|skipping):? */, "", x)
		printf "%s\t%s\n", t, x }
	/^skip test / { x = $3; sub(/\.sh$/, "", x)
		printf "%s\tlisted in SKIP_LTESTS\n", x }' "$log"
}
# finish RC: the skips, the count, the verdict (exits)
finish() {
	local rc=$1 t x
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
		# (openssh_worker shows its own)
		[ "${OPENSSH_JOBS:-1}" -gt 1 ] && [ "$mode" = openssh ] ||
			show_failed "$tree"
		echo "regress($mode): FAILED after ${secs}s (log: $log)" >&2
		exit 1
	fi
	echo "regress($mode): passed in ${secs}s"
	exit 0
}

# OpenSSH's full suite in OPENSSH_JOBS workers (make check's background;
# most of its time is sleeps and timeouts, so two workers finish in about
# half the time on two CPUs).  Each worker has a copy of the tree of its
# own (its own OBJ), beside it in DIR/wN, and its own port (TEST_SSH_PORT
# + 100 x (N - 1)).  They take the suite's parts from one queue: unit,
# file-tests, interop-tests, extra-tests and each t-exec test, slowest
# first, so that every part runs exactly once.  The tests that listen on
# fixed ports (3301, 3320, 3321) are one part, so that they never run at
# once.  The first failure stops every worker after its current part.
# Slowest first (seconds of each, alone, with a fuzzer beside, 2026-12-07:
# the fixed-port tests 233, unit 198, rekey 140, sftp 87, interop-tests 80,
# channel-timeout 71; the suite 1,407), then the rest in the Makefile's order.
OPENSSH_SLOW="fixed-ports unit rekey sftp interop-tests channel-timeout
cert-userkey cert-hostkey agent-restrict integrity connection-timeout
try-ciphers exit-status agent-timeout kextype login-timeout percent
penalty-expire reconfigure sshsig stderr-data agent-subprocess krl
dynamic-forward penalty keytype"
OPENSSH_FIXED_PORTS="cfgmatch cfgmatchlisten multiplex forwarding forward-control"
openssh_parallel() {
	local n=$1 i t all ltests fixed q=$logs/openssh-queue failed=$logs/openssh-failed
	local port0=${TEST_SSH_PORT:-4242} pids=() rc=0
	# every t-exec test of this tree's regress/Makefile
	ltests=$(printf 'print-ltests:\n\t@echo $(LTESTS)\n' |
	    make -s -C regress -f Makefile -f - print-ltests)
	[ -n "$ltests" ] || { echo "regress: no LTESTS in $tree/regress/Makefile" >&2; return 1; }
	: > "$q"
	rm -f "$failed"
	all=" $ltests "
	fixed=""
	for t in $OPENSSH_FIXED_PORTS; do
		[[ "$all" != *" $t "* ]] || fixed="$fixed $t"
		all=${all/ $t / }
	done
	for t in $OPENSSH_SLOW; do
		case "$t" in
		unit|interop-tests) echo "$t" >> "$q" ;;
		fixed-ports) [ -z "$fixed" ] || echo "t-exec$fixed" >> "$q" ;;
		*)	[[ "$all" = *" $t "* ]] || continue
			echo "t-exec $t" >> "$q"
			all=${all/ $t / } ;;
		esac
	done
	for t in $all; do echo "t-exec $t" >> "$q"; done
	printf '%s\n' file-tests extra-tests >> "$q"
	echo "regress(openssh): $(wc -l < "$q") parts of make tests in $n workers (trees $tree and $(dirname "$tree")/wN; log: $log)"
	: > "$log"
	start=$(date +%s)
	for i in $(seq 1 "$n"); do
		local wt=$tree
		if [ "$i" -gt 1 ]; then
			wt=$(dirname "$tree")/w$i/$(basename "$tree")
			rm -rf "$(dirname "$wt")"
			mkdir -p "$(dirname "$wt")"
			cp -a "$tree" "$wt"
			rm -f "$wt"/regress/failed-*.log
		fi
		openssh_worker "$i" "$wt" $((port0 + 100 * (i - 1))) &
		pids+=($!)
	done
	for i in "${!pids[@]}"; do wait "${pids[$i]}" || rc=1; done
	for i in $(seq 1 "$n"); do cat "$log.w$i" >> "$log"; rm -f "$log.w$i"; done
	secs=$(( $(date +%s) - start ))
	finish "$rc"
}
# openssh_worker N TREE PORT: parts from the queue until it is empty or a
# part failed (here or in another worker)
openssh_worker() {
	local w=$1 wt=$2 port=$3 item t0 r out
	local wl="$log.w$w" here=(BUILDDIR="$wt" abs_top_srcdir="$wt" abs_top_builddir="$wt")
	: > "$wl"
	while [ ! -e "$logs/openssh-failed" ]; do
		item=$(flock "$logs/openssh-queue" sh -c 'q=$1; head -n 1 "$q"; sed -i 1d "$q"' - "$logs/openssh-queue")
		[ -n "$item" ] || break
		out="$wl.part"
		t0=$(date +%s)
		set -- $item
		case "$1" in
		t-exec)	shift; r=0
			(cd "$wt" && TEST_SSH_PORT=$port make "${here[@]}" t-exec LTESTS="$*") > "$out" 2>&1 < /dev/null || r=$? ;;
		*)	r=0
			(cd "$wt" && TEST_SSH_PORT=$port make "${here[@]}" "$1") > "$out" 2>&1 < /dev/null || r=$? ;;
		esac
		{ echo "== part: $item"; cat "$out"; } >> "$wl"
		grep -E "$PROGRESS" "$out" | sed "s/^/  [w$w] /" || true
		echo "  [w$w] $item: $( [ $r -eq 0 ] && echo passed || echo FAILED) in $(( $(date +%s) - t0 ))s"
		rm -f "$out"
		if [ $r -ne 0 ]; then
			echo "$item" >> "$logs/openssh-failed"
			show_failed "$wt"
			return 1
		fi
	done
}

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
	target=(tests)
	if [ "${OPENSSH_JOBS:-1}" -gt 1 ]; then
		openssh_parallel "${OPENSSH_JOBS}"
		exit $?
	fi ;;
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
# Follow the log for progress (bounded by make's own end), each line after
# the seconds since the start: where a suite's time goes.
tail -n +1 -f --pid=$mpid "$log" | grep --line-buffered -E "$PROGRESS|passed\$" |
    while IFS= read -r line; do
	printf -v now '%(%s)T' -1
	printf '  %4ds %s\n' $((now - start)) "$line"
    done
wait $mpid
rc=$?
set -e
secs=$(( $(date +%s) - start ))
finish "$rc"
