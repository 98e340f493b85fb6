#!/bin/bash
# fuzz.sh build|run|all DLDIR DEST LOGDIR [CONFIGURE_ARGS...]
#
# The libFuzzer harnesses of tests/fuzz (README.md there), on a tree of
# their own:
#
#   build  DEST/tree/openssh-X: the hpn tree (scripts/prepare-tree.sh),
#          configured with the hpn build's options (the arguments) and
#          CC=clang-14, -fsanitize=address,undefined,fuzzer-no-link
#          -fno-sanitize-recover=undefined -g -O1; libssh.a,
#          libopenbsd-compat.a and the objects the harnesses name, then the
#          harnesses in DEST/bin (-fsanitize=fuzzer,address,undefined).
#          Made again from scratch when the series, the pin or the
#          arguments change; src/ and tests/fuzz changes rebuild
#          incrementally.
#   run    each harness (FUZZ_ONLY="name ...": those) on a copy of its
#          committed seeds (tests/fuzz/corpus/NAME, only read) plus the
#          corpus it built before (DEST/corpus-NAME, where new inputs go),
#          with its dictionary, -timeout, -rss_limit_mb and LeakSanitizer
#          on; crashes go to DEST/crashes/NAME-*.  FUZZ_MODE=short (make
#          fuzz): FUZZ_SECONDS each (60); FUZZ_MODE=long (make fuzz-long):
#          until FUZZ_RUNS executions (10^7) or FUZZ_LONG_SECONDS (28800),
#          whichever comes first, as processes of at most FUZZ_SEGMENT
#          seconds (1800) one after the other on the same corpus (one
#          process slows down as it runs: recvfast made 379/s after 45
#          minutes, a new one 800/s on the same corpus).  FUZZ_JOBS
#          harnesses at a time (1).
#          Prints, per harness, executions, coverage (cov, ft) and corpus
#          size, and appends them to DEST/results.tsv.  Fails, printing the
#          report and the input (path, hex dump, how to reproduce), on any
#          crash, leak, timeout, out-of-memory or sanitizer report.  The
#          harnesses' scratch files (sftp_server's fixture) go to
#          FUZZ_TMPDIR (/dev/shm where writable, else DEST/run), in a
#          directory removed after each run.
#   all    build, then run.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib/upstream.sh"
[ $# -ge 4 ] || { echo "usage: $0 build|run|all DLDIR DEST LOGDIR [CONFIGURE_ARGS...]" >&2; exit 2; }
what=$1 dl=$2 dest=$3 logs=$4
shift 4
case "$what" in build|run|all) ;; *) echo "fuzz: build, run or all, not '$what'" >&2; exit 2 ;; esac
mkdir -p "$dest" "$logs"
dest=$(cd "$dest" && pwd)
logs=$(cd "$logs" && pwd)
tree=$dest/tree/openssh-$OPENSSH_VERSION
bin=$dest/bin
fz=$top/tests/fuzz
CLANG=${FUZZ_CC:-clang-14}
mode=${FUZZ_MODE:-short}
seconds=${FUZZ_SECONDS:-60}
long_seconds=${FUZZ_LONG_SECONDS:-28800}
segment=${FUZZ_SEGMENT:-1800}
runs=${FUZZ_RUNS:-10000000}
jobs=${FUZZ_JOBS:-1}
timeout=${FUZZ_TIMEOUT:-25}
rss=${FUZZ_RSS_MB:-2048}

say() { echo "fuzz: $*"; }
die() { echo "fuzz: error: $*" >&2; exit 1; }

symbolizer=$(command -v llvm-symbolizer-14 || command -v llvm-symbolizer || true)
tmpbase=${FUZZ_TMPDIR:-/dev/shm}
[ -d "$tmpbase" ] && [ -w "$tmpbase" ] || tmpbase=$dest/run

build() {
	local flags cfg stamp inputs syms
	command -v "$CLANG" >/dev/null ||
		die "$CLANG missing: run 'make deps' as root (clang-14, libclang-rt-14-dev, llvm-14)"
	flags="-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1"
	# sizes of the SFTP engine scaled down for its harness: -n's parts
	# (64 KiB, not 8 MiB: striping with little data) and one read of
	# replies (64 KiB, not 256: a buffer ASan's allocator keeps cached;
	# one past its 128 KiB is mapped, faulted in and unmapped each time,
	# a tenth of what an input cost)
	cfg=(--with-sandbox=no --without-hardening --without-stackprotect "$@"
	    "CC=$CLANG" "CFLAGS=$flags" "CPPFLAGS=-D_FORTIFY_SOURCE=0 -DHPN_STRIPE_PART=65536 -DHPN_STRIPE_SPLIT=16384 -DX_READ_MAX=65536"
	    "LDFLAGS=-fsanitize=address,undefined")
	stamp=$dest/tree/.inputs
	inputs=$( { printf '%s\n' "${cfg[@]}"; cat "$top/upstream/openssh.mk" \
	    "$top/scripts/prepare-tree.sh" "$top/patches/series"
	    for p in $(sed -e 's/#.*//' "$top/patches/series" | awk 'NF {print $1}'); do
		cat "$top/patches/$p"; done; } | sha256sum)
	# configure's test programs must not fail on their leaks
	export ASAN_OPTIONS=detect_leaks=0
	if [ ! -f "$tree/libssh.a" ] || [ ! -f "$stamp" ] ||
	    [ "$(cat "$stamp")" != "$inputs" ]; then
		rm -f "$stamp"
		say "preparing $tree"
		"$top/scripts/prepare-tree.sh" hpn "$dl" "$dest/tree"	# wipes DEST/tree
		rm -rf "$bin"
		"$top/scripts/build.sh" configure fuzz "$tree" "$logs" "${cfg[@]}"
		echo "$inputs" > "$stamp.pending"
	fi
	"$top/scripts/build.sh" sync-src fuzz "$tree" "$logs"
	# shellcheck disable=SC2046
	"$top/scripts/build.sh" make fuzz "$tree" "$logs" -j"$(nproc 2>/dev/null || echo 2)" \
	    $(make -s --no-print-directory -C "$fz" TREE="$tree" print-tree-targets)
	[ ! -f "$stamp.pending" ] || mv "$stamp.pending" "$stamp"
	syms=$(nm "$tree/libssh.a" 2>/dev/null)
	grep -q __sanitizer_cov_ <<< "$syms" ||
		die "$tree/libssh.a lacks the fuzzer's coverage instrumentation"
	say "building the harnesses in $bin (log: $logs/make-fuzz-harnesses.log)"
	if ! make --no-print-directory -C "$fz" TREE="$tree" OUT="$bin" \
	    > "$logs/make-fuzz-harnesses.log" 2>&1; then
		grep -E 'error|warning' "$logs/make-fuzz-harnesses.log" | head -n 30 >&2 || true
		tail -n 10 "$logs/make-fuzz-harnesses.log" >&2
		die "the harnesses did not build (log: $logs/make-fuzz-harnesses.log)"
	fi
	# tests/fuzz's own files compile without warnings
	if grep -E '^[a-z_-]+\.c:[0-9]+:[0-9]+: warning' "$logs/make-fuzz-harnesses.log" >&2; then
		die "tests/fuzz must compile without warnings"
	fi
	unset ASAN_OPTIONS
}

# The figures of a finished run, from libFuzzer's last lines.
stats() {	# LOG -> "execs secs cov ft corpus"
	local log=$1 line execs secs cov ft corp
	line=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -n 1 || true)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -n 1)
	cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<< "$line")
	ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<< "$line")
	corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9a-zA-Z]*\).*/\1/p' <<< "$line")
	echo "${execs:-?} ${secs:-?} ${cov:-?} ${ft:-?} ${corp:-?}"
}

# Print what went wrong: the report, the input.
report() {	# NAME LOG RC MARK
	local name=$1 log=$2 rc=$3 mark=$4 f
	echo "fuzz($name): FAILED (exit $rc); the report (full log: $log):" >&2
	if grep -nE '^==[0-9]+==ERROR|runtime error:|^SUMMARY:|ERROR: libFuzzer|^sftp_server_fuzz:|^[a-z_]+_fuzz: |fuzz harness:' "$log" >/dev/null; then
		awk '/^==[0-9]+==ERROR|runtime error:|ERROR: libFuzzer|^[a-z_]+_fuzz: |fuzz harness:/ {p=1} p && n < 120 {print; n++}' "$log" >&2
	else
		tail -n 60 "$log" >&2
	fi
	for f in $(find "$dest/crashes" -name "$name-*" -newer "$mark" 2>/dev/null); do
		echo "fuzz($name): input $f ($(stat -c %s "$f") bytes):" >&2
		od -A x -t x1z -v "$f" | head -n 32 >&2
		echo "fuzz($name): reproduce: $bin/${name}_fuzz $f" >&2
		echo "fuzz($name): keep it: cp $f $fz/corpus/$name/crash-<what>" >&2
	done
}

# One process of harness NAME (its options and arguments after it) into
# LOG; its exit status.
fuzz_proc() {	# LOG LIMIT TMP BINARY ARGS...
	local log=$1 limit=$2 tmp=$3
	shift 3
	# detect_stack_use_after_return's fake stacks: 64 KiB a frame size
	# (max_uar_stack_size_log=16), not 1 MiB: after each fatal() or
	# longjmp ASan sweeps all of them, a third of what an input of
	# window and none cost; deeper frames fall back to the real stack
	( cd "$dest/run" && TMPDIR="$tmp" \
	    ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=1:max_uar_stack_size_log=16:strict_string_checks=1:check_initialization_order=1:symbolize=1${symbolizer:+:external_symbolizer_path=$symbolizer}" \
	    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:symbolize=1${symbolizer:+:external_symbolizer_path=$symbolizer}" \
	    exec timeout --kill-after=30 $(( limit + 600 )) "$@" ) > "$log" 2>&1
}

run_one() {	# NAME
	local name=$1 b=$bin/${1}_fuzz log=$dest/logs/$1.log seed=$dest/run/seed-$1
	local corpus=$dest/corpus-$1 mark=$dest/run/.start-$1 rc=0 s args limit tmp
	local execs=0 secs=0 procs=0 left
	local -a opts
	[ -x "$b" ] || die "$b missing (build first)"
	[ -d "$fz/corpus/$name" ] || die "$fz/corpus/$name missing: every harness has seeds"
	rm -rf "$seed"
	mkdir -p "$seed" "$corpus" "$dest/crashes" "$dest/logs" "$dest/run"
	# the harnesses' scratch files (sftp_server's fixture): in memory
	# where there is a tmpfs, removed after the run
	tmp=$(mktemp -d "$tmpbase/hpn-fuzz-$name.XXXXXX")
	cp -a "$fz/corpus/$name/." "$seed/"
	touch "$mark"
	args=$(make -s --no-print-directory -C "$fz" TREE="$tree" "print-args-$name")
	opts=(-timeout="$timeout" -rss_limit_mb="$rss" -print_final_stats=1
	    -artifact_prefix="$dest/crashes/$name-" -detect_leaks=1)
	[ -f "$fz/$name.dict" ] && opts+=(-dict="$fz/$name.dict")
	say "$name: $mode run (corpus $corpus, seeds $(ls "$seed" | wc -l))"
	if [ "$mode" != long ]; then
		# shellcheck disable=SC2086
		fuzz_proc "$log" "$seconds" "$tmp" "$b" "${opts[@]}" \
		    -max_total_time="$seconds" $args "$corpus" "$seed" || rc=$?
		s=$(stats "$log")
	else
		# processes of at most $segment s until $runs or $long_seconds
		: > "$log"
		while [ "$rc" -eq 0 ] && [ "$execs" -lt "$runs" ] &&
		    [ "$secs" -lt "$long_seconds" ] && [ "$procs" -lt 1000 ]; do
			left=$(( long_seconds - secs ))
			limit=$(( left < segment ? left : segment ))
			procs=$(( procs + 1 ))
			# shellcheck disable=SC2086
			fuzz_proc "$log.part" "$limit" "$tmp" "$b" "${opts[@]}" \
			    -runs=$(( runs - execs )) -max_total_time="$limit" \
			    $args "$corpus" "$seed" || rc=$?
			{ echo "=== fuzz.sh: process $procs, $(date -u +%FT%TZ)"
			  cat "$log.part"; } >> "$log"
			set -- $(stats "$log.part")
			rm -f "$log.part"
			# a process that made no progress ends the run
			[ "$1" != "?" ] && [ "$2" != "?" ] && [ "$1" -gt 0 ] ||
			    { [ "$rc" -ne 0 ] || rc=1; break; }
			execs=$(( execs + $1 )) secs=$(( secs + $2 ))
			# a last process that runs no second ends the run
			[ "$2" -gt 0 ] || break
		done
		s=$(stats "$log")
		set -- $s
		s="$execs $secs $3 $4 $5"
		[ "$procs" -le 1 ] || say "$name: $procs processes, one after the other"
	fi
	rm -rf "$tmp"
	set -- $s
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$mode" "$name" \
	    "$1" "$2" "$3" "$4" "$5" "$rc" >> "$dest/results.tsv"
	if [ "$rc" -ne 0 ] || grep -qE '^==[0-9]+==ERROR|runtime error:|ERROR: libFuzzer|WARNING: .*Sanitizer' "$log"; then
		report "$name" "$log" "$rc" "$mark"
		return 1
	fi
	say "$name: $1 executions in $2 s, cov $3, ft $4, corpus $5 (files/size); no crash, leak or report"
}

run() {
	local names n failed=0 pids=() p
	names=${FUZZ_ONLY:-$(make -s --no-print-directory -C "$fz" TREE="$tree" print-harnesses)}
	mkdir -p "$dest/run"
	# several at once: each in a process group of its own, ended by it
	[ "$jobs" -le 1 ] || set -m
	trap 'for p in "${pids[@]}"; do kill -- "-$p" 2>/dev/null || true; done' EXIT
	for n in $names; do
		if [ "$jobs" -le 1 ]; then
			run_one "$n" || failed=1
			continue
		fi
		while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
			wait -n || failed=1
		done
		run_one "$n" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || failed=1
	done
	trap - EXIT
	[ $failed -eq 0 ] || die "a harness failed (crashes in $dest/crashes, logs in $dest/logs)"
	say "all harnesses ran clean: $names"
}

case "$what" in
build) build "$@" ;;
run) run ;;
all) build "$@"; run ;;
esac
