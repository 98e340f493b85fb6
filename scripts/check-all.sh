#!/bin/bash
# check-all.sh: what `make check` (and so CI) runs, arranged for two CPUs.
#
# OpenSSH's own full suite takes about 20 minutes on two CPUs and spends
# most of them waiting (sleeps, timeouts, round trips on loopback): about a
# third of one CPU.  So it runs in the background, on a copy of the built
# hpn tree (its own OBJ directory, its own port: TEST_SSH_PORT), while the
# other suites run one after the other in the foreground.  The package test
# runs last, alone: its purge removes hpnsshd's privilege separation user,
# which every sshd of the other suites runs as.
#
# Everything the background suite starts is in a process group of its own,
# killed by its PID on any failure, Ctrl-C or TERM.
#
# Environment: OPENSSH_BG_PORT (5242), CHECK_FUZZ_SECONDS (15), MAKE.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
MAKE=${MAKE:-make}
m() { "$MAKE" --no-print-directory -C "$top" "$@"; }
start=$(date +%s)
say() { echo "check: $* ($(( $(date +%s) - start ))s)"; }

# patch-check first: the other targets rebuild from the same series
m patch-check check-upstream build check-prep
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
		echo "check: stopped OpenSSH's suite (process group $bgpid)" >&2
	fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
set -m		# the background job gets a process group of its own
TEST_SSH_PORT=${OPENSSH_BG_PORT:-5242} \
    "$top/scripts/run-regress.sh" openssh "$bgtree" "$logs" > "$bgout" 2>&1 < /dev/null &
bgpid=$!
set +m
say "OpenSSH's full suite started in the background (pid $bgpid, $bgtree, log $bgout)"

# --- our suites, in the foreground ----------------------------------------
# ctr-mt's ThreadSanitizer builds run in check-asan-quick, not twice.
m check-unit SUBDIR_CHECK=check-plain
m check-install check-security check-hpn check-interop check-asan-quick
# every fuzz harness, briefly: a crash in a committed input or a new one
# fails the build (the clang tree, then CHECK_FUZZ_SECONDS each)
m fuzz FUZZ_SECONDS="${CHECK_FUZZ_SECONDS:-15}"
say "foreground suites passed; waiting for OpenSSH's suite"

rc=0
wait "$bgpid" || rc=$?
bgpid=
sed -n '/^regress(openssh)/p; /tests run/p; /skipped /p' "$bgout"
if [ $rc -ne 0 ]; then
	tail -n 80 "$bgout"
	say "OpenSSH's full suite FAILED"
	exit 1
fi
say "OpenSSH's full suite passed"

# --- alone: it installs, then purges, the packages ------------------------
m check-package
say "all passed"
