#	Sanitizer reports as the sanitizer build writes them: to files
#	(log_path, tests/sanitize), not to the program's stderr, so a test that
#	looks for one in stderr or a log finds nothing there.  POSIX sh;
#	sourced by the regress tests and by tests/stress/run-stress.sh.
#	Placed in the Public Domain.
#
#	san_mark FILE	marks the time (FILE is made anew)
#	san_since FILE	the report files written since FILE was made, one a
#			line: in the directories of log_path in ASAN_OPTIONS,
#			UBSAN_OPTIONS and TSAN_OPTIONS (tests/sanitize/
#			check-asan.sh exports them; sanopts.c compiles the same
#			in for the processes sshd starts with a clean
#			environment).  Nothing without a log_path.

san_mark() {
	rm -f "$1"
	: > "$1"
}

san_since() {
	for _ss_o in "${ASAN_OPTIONS:-}" "${UBSAN_OPTIONS:-}" "${TSAN_OPTIONS:-}"; do
		echo "$_ss_o" | tr ':' '\n' | sed -n 's/^log_path=//p'
	done | while read -r _ss_p; do
		_ss_d=`dirname "$_ss_p"`
		[ -d "$_ss_d" ] || continue
		find "$_ss_d" -maxdepth 1 -type f -name "`basename "$_ss_p"`*" \
		    -newer "$1"
	done | sort -u
}
