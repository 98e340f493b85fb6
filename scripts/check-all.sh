#!/bin/bash
# check-all.sh: what `make check` (and so CI) runs, arranged for two CPUs.
#
# Two lanes.  The background lane runs OpenSSH's own full suite (23
# minutes alone, most of them waiting: sleeps, timeouts, round trips on
# loopback) on a copy of the built hpn tree (its own OBJ directory, its own
# port: TEST_SSH_PORT), in two workers that share its parts (OPENSSH_JOBS;
# run-regress.sh), then, niced, the sanitizer checks and the fuzz
# harnesses.  The foreground lane runs our suites one after the other.  The
# package test runs last, alone: its purge removes hpnsshd's privilege
# separation user, which every sshd of the other suites runs as.
#
# Everything the background lane starts is in a process group of its own,
# killed by its PID on any failure, Ctrl-C or TERM.
#
# Environment: OPENSSH_BG_PORT (5242; the second worker 5342),
# OPENSSH_BG_JOBS (2), CHECK_FUZZ_SECONDS (10), MAKE.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
MAKE=${MAKE:-make}
m() { "$MAKE" --no-print-directory -C "$top" "$@"; }
start=$(date +%s)
say() { echo "check: $* ($(( $(date +%s) - start ))s)"; }

# patch-check first: the other targets rebuild from the same series; the
# stock build before the lanes start, as both need it (check-security,
# check-asan-quick)
m patch-check check-upstream build stock check-prep
tree=$(m -s print-hpn-tree)
logs=$top/build/logs
bg=$top/build/regress-openssh
mkdir -p "$logs"

# --- OpenSSH's suite, in the background -----------------------------------
rm -rf "$bg"
mkdir -p "$bg"
cp -a "$tree" "$bg/"
bgtree=$bg/$(basename "$tree")
bgout=$logs/check-openssh.out
bgpid=
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [ -n "$bgpid" ]; then
		kill -TERM -- "-$bgpid" 2>/dev/null || true
		wait "$bgpid" 2>/dev/null || true
		echo "check: stopped the background lane (process group $bgpid)" >&2
	fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# The background lane: OpenSSH's suite, then (niced: our regress tests in
# the foreground come first) the sanitizer builds and their checks, and
# every fuzz harness briefly (a crash in a committed input or a new one
# fails; the clang tree, then CHECK_FUZZ_SECONDS each).  These build and
# run in trees of their own (build/asan, build/fuzz), on ports of their
# own (the stress phases: 42760).  ctr-mt's ThreadSanitizer builds run in
# check-asan-quick, not twice.
sanout=$logs/check-sanitize.out
background() {
	TEST_SSH_PORT=${OPENSSH_BG_PORT:-5242} OPENSSH_JOBS=${OPENSSH_BG_JOBS:-2} \
	    "$top/scripts/run-regress.sh" openssh "$bgtree" "$logs" > "$bgout" 2>&1 < /dev/null ||
		return 1
	{ nice -n 10 "$MAKE" --no-print-directory -C "$top" check-asan-quick &&
	  nice -n 10 "$MAKE" --no-print-directory -C "$top" fuzz \
	    FUZZ_SECONDS="${CHECK_FUZZ_SECONDS:-10}"; } > "$sanout" 2>&1 < /dev/null ||
		return 2
}
set -m		# the background job gets a process group of its own
background &
bgpid=$!
set +m
say "background: OpenSSH's full suite (pid $bgpid, $bgtree, log $bgout), then the sanitizers and fuzzers (log $sanout)"

# --- our suites, in the foreground ----------------------------------------
m check-unit SUBDIR_CHECK=check-plain
m check-install check-security check-hpn check-interop
say "foreground suites passed; waiting for the background"

rc=0
wait "$bgpid" || rc=$?
bgpid=
sed -n '/^regress(openssh)/p; /tests run/p; /skipped /p' "$bgout"
if [ $rc -eq 1 ]; then
	tail -n 80 "$bgout"
	say "OpenSSH's full suite FAILED"
	exit 1
fi
say "OpenSSH's full suite passed"
if [ $rc -ne 0 ]; then
	tail -n 120 "$sanout"
	say "the sanitizers or fuzzers FAILED (log $sanout)"
	exit 1
fi
grep -E '^(check-asan|make\(|fuzz)' "$sanout" || true
say "sanitizers and fuzzers passed"

# --- alone: it installs, then purges, the packages ------------------------
m check-package
say "all passed"
