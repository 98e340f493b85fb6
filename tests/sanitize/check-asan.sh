#!/bin/bash
# check-asan.sh DLDIR ASAN_DIR LOGDIR STOCK_TREE [CONFIGURE_ARGS...]
#
# The hpn suite built with AddressSanitizer + UndefinedBehaviorSanitizer
# (tests/sanitize/build-asan.sh, in ASAN_DIR), then, on that build:
#
#   1. our unit tests of src/ (tests/unit/hpn: test_hpn, and test_packet,
#      the cipher_init() use after free of SECURITY.md, which must also
#      fail against STOCK_TREE, its packet.c under ASan) and the threaded
#      AES-CTR tests (tests/unit/ctr-mt, production and small-ring
#      tunables)
#   2. our regress tests (scripts/run-regress.sh hpn)
#   3. OpenSSH's t-exec subset (scripts/run-regress.sh openssh-quick)
#   4. the fault-injection phases that reach the new code hardest
#      (tests/stress/run-stress.sh: malformed peers, kill -9 mid-transfer,
#      rekeys under every cipher; 64 MiB transfers)
#   5. the threaded AES-CTR unit tests under ThreadSanitizer
#      (make -C tests/unit/ctr-mt check-tsan)
#
# Every sanitizer report fails the run: halt_on_error=1 for both (UBSan
# with print_stacktrace=1), and since a report in a daemon's child may not
# fail the test that caused it, every report file written to ASAN_DIR/san
# (log_path, also compiled in: tests/sanitize/sanopts.c) fails it too and is
# printed.  detect_leaks=0: see sanopts.c.
# CHECK_ASAN_STEPS (default "unit hpn openssh-quick stress tsan") selects;
# CHECK_ASAN_NOBUILD=1 skips the (re)build.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/lib/upstream.sh"
[ $# -ge 4 ] || { echo "usage: $0 DLDIR ASAN_DIR LOGDIR STOCK_TREE [CONFIGURE_ARGS...]" >&2; exit 2; }
dl=$1 adir=$2 logs=$3 stock=$4
shift 4
steps=${CHECK_ASAN_STEPS:-unit hpn openssh-quick stress tsan}
start=$(date +%s)
mkdir -p "$logs"
logs=$(cd "$logs" && pwd)
stock=$(cd "$stock" && pwd)

# CHECK_ASAN_NOBUILD=1: test the tree as it is (iterating on the tests)
[ "${CHECK_ASAN_NOBUILD:-}" = 1 ] ||
	"$top/tests/sanitize/build-asan.sh" "$dl" "$adir" "$logs" "$@"
adir=$(cd "$adir" && pwd)
tree=$adir/openssh-$OPENSSH_VERSION
san=$adir/san
rm -f "$san"/*

export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1:log_path=$san/asan"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$san/ubsan"

failed=""
reports() {	# STEP: fail the step on any report file
	local f n
	n=$(ls "$san" | wc -l)
	[ "$n" -eq 0 ] && return 0
	echo "check-asan($1): $n sanitizer report(s) in $san:" >&2
	for f in "$san"/*; do
		echo "---- $f" >&2
		head -n 60 "$f" >&2
	done
	mkdir -p "$adir/reports-$1"
	mv "$san"/* "$adir/reports-$1"/
	failed="$failed $1(reports)"
	return 1
}
step() {	# NAME CMD...
	local name=$1 t0 rc
	shift
	case " $steps " in *" $name "*) ;; *) echo "check-asan: $name skipped (CHECK_ASAN_STEPS)"; return 0 ;; esac
	t0=$(date +%s)
	echo "check-asan: $name (load $(cut -d' ' -f1-3 /proc/loadavg))"
	set +e
	"$@"
	rc=$?
	set -e
	[ $rc -eq 0 ] || failed="$failed $name"
	reports "$name" || true
	echo "check-asan: $name $([ $rc -eq 0 ] && echo passed || echo FAILED) in $(( $(date +%s) - t0 ))s"
}

# test_packet built against the stock tree's libssh.a, outside that tree,
# with ASan's allocator and stock's packet.c compiled with ASan (its own
# flags, and ASan's): the stock cipher_init() failure path frees the
# caller's ssh, which the test then reads and frees again.  It must fail,
# saying so, or the test cannot see the flaw (SECURITY.md).  Its report
# goes to its output, not to $san.
stock_packet() {
	local so=$adir/stock-unit rc sanf="-fsanitize=address,undefined -fno-omit-frame-pointer"
	sv() { make -s --no-print-directory -C "$stock" -f Makefile \
	    -f "$top/scripts/lib/print-var.mk" "print-$1"; }
	mkdir -p "$so"
	# shellcheck disable=SC2046
	(cd "$stock" && $(sv CC) $(sv CFLAGS) $(sv CPPFLAGS) $sanf -c packet.c \
	    -o "$so/packet.o") || return 1
	make -s --no-print-directory -C "$top/tests/unit" TREE="$stock" O="$so" \
	    HELPER="$tree/regress/unittests/test_helper/libtest_helper.a" \
	    UNIT_SAN="$sanf" PACKET_OBJ="$so/packet.o" "$so/test_packet" || return 1
	rc=0
	ASAN_OPTIONS=detect_leaks=0:halt_on_error=1 "$so/test_packet" -q \
	    > "$so/test_packet.out" 2>&1 || rc=$?
	if [ $rc -ne 0 ] && grep -Eq 'AddressSanitizer: (attempting double-free|heap-use-after-free)' "$so/test_packet.out"; then
		echo "check-asan: test_packet on stock fails as it must (status $rc): $(grep -Em1 'AddressSanitizer: ' "$so/test_packet.out")"
		return 0
	fi
	tail -n 20 "$so/test_packet.out" >&2
	echo "check-asan: test_packet on stock $(basename "$stock") does not show the use after free (status $rc)" >&2
	return 1
}

unit() {
	local o=$tree/hpn-unit small
	# test_hpn and test_packet, with the tree's own (sanitizer) flags;
	# test_packet against stock too
	make -s --no-print-directory -C "$top/tests/unit" TREE="$tree" "$o/test_hpn" "$o/test_packet" &&
	    "$o/test_hpn" -q && "$o/test_packet" -q && stock_packet || return 1
	# the threaded AES-CTR core with both sets of tunables
	small=$(make -s --no-print-directory -C "$top/tests/unit/ctr-mt" -f Makefile \
	    -f "$top/scripts/lib/print-var.mk" print-SMALL)
	local src=$top/src cflags
	cflags="-fsanitize=address,undefined -fno-omit-frame-pointer -g -O1 -I$src -DHPN_CTR_MT_TESTING"
	# shellcheck disable=SC2086
	cc $cflags -o "$o/test_ctr_mt_asan" "$top/tests/unit/ctr-mt/test_ctr_mt.c" "$src/cipher-ctr-mt.c" \
	    -lcrypto -lpthread &&
	cc $cflags $small -o "$o/test_ctr_mt_small_asan" "$top/tests/unit/ctr-mt/test_ctr_mt.c" \
	    "$src/cipher-ctr-mt.c" -lcrypto -lpthread || return 1
	HPN_TEST_IDLE_MS=60 "$o/test_ctr_mt_asan" && HPN_TEST_IDLE_MS=60 "$o/test_ctr_mt_small_asan"
}

step unit unit
step hpn "$top/scripts/run-regress.sh" hpn "$tree" "$logs" "$stock"
step openssh-quick "$top/scripts/run-regress.sh" openssh-quick "$tree" "$logs"
step stress env STRESS_MB=64 STRESS_PORT=42760 STRESS_NP=hpnsa \
    timeout --kill-after=30 900 "$top/tests/stress/run-stress.sh" "$tree" malformed kill rekey
step tsan make --no-print-directory -C "$top/tests/unit/ctr-mt" check-tsan

secs=$(( $(date +%s) - start ))
if [ -n "$failed" ]; then
	echo "check-asan: FAILED:$failed (${secs}s; logs in $logs, reports in $adir/reports-*)" >&2
	exit 1
fi
echo "check-asan: all passed with no sanitizer report in ${secs}s"
