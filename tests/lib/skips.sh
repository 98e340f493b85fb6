#	Skips: every one visible, and in CI (CI=true) fatal unless
#	tests/allowed-skips names it with a reason.  POSIX sh: sourced by the
#	regress and security tests (after test-exec.sh, once HPN_TOP is known)
#	and by scripts/run-regress.sh.  Placed in the Public Domain.
#
# A test that leaves out a part of what it tests says so with
#
#	skip_part WHAT WHY
#
# which prints "SKIPPED: WHAT not tried: WHY" (scripts/run-regress.sh lists
# it under the test in make check's output) and goes on; with CI=true it
# also fails the test unless tests/allowed-skips allows it.  A whole test
# skips with test-exec.sh's own skip (its "SKIPPED: ..." line):
# run-regress.sh checks every SKIPPED line, of ours and of OpenSSH's suite,
# against the same list.  Never a verbose or trace line for a part not
# tried: the output of make check leaves those out.

# skip_allowed TEST TEXT: tests/allowed-skips (HPN_SKIPS_ALLOWED: another
# file) has a line "TEST | PATTERN | REASON" for TEST whose PATTERN (a
# shell pattern) matches TEXT, the SKIPPED line less "SKIPPED: ", and whose
# REASON is not empty.
skip_allowed() {
	_sa_file=${HPN_SKIPS_ALLOWED:-${HPN_TOP:-.}/tests/allowed-skips}
	[ -f "$_sa_file" ] || return 1
	_sa_rc=1
	while IFS='|' read -r _sa_t _sa_p _sa_r; do
		_sa_t=`echo "$_sa_t" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//'`
		case "$_sa_t" in "$1") ;; *) continue ;; esac
		_sa_p=`echo "$_sa_p" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//'`
		_sa_r=`echo "$_sa_r" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//'`
		[ -n "$_sa_p" ] && [ -n "$_sa_r" ] || continue
		# shellcheck disable=SC2254
		case "$2" in $_sa_p) _sa_rc=0; break ;; esac
	done < "$_sa_file"
	return $_sa_rc
}

# skip_part WHAT WHY: a part of the test not tried, and why
skip_part() {
	_sp_test=`basename "${SCRIPT:-$0}" .sh`
	echo "SKIPPED: $1 not tried: $2"
	if [ "$CI" = true ] && ! skip_allowed "$_sp_test" "$1 not tried: $2"; then
		fail "$_sp_test: in CI, a skip tests/allowed-skips does not allow: $1 not tried: $2"
	fi
	return 0
}
