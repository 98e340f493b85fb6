/*
 * Default sanitizer options, linked into every program of the sanitizer
 * build (tests/sanitize/build-asan.sh passes this object in LIBS).
 *
 * sshd clears the environment of what it runs for the user (shells, hence
 * sftp-server and the remote scp), so ASAN_OPTIONS/UBSAN_OPTIONS set by the
 * test would not reach them; these defaults do.  Options from the
 * environment still override them key by key.  Every report goes to
 * SANLOG/{asan,ubsan}.PID, which check-asan.sh inspects after each run:
 * a file there fails the run whatever the test itself concluded (an error in
 * a daemon's child is otherwise easy to miss).
 *
 * detect_leaks=0: sshd and its helpers exit through fatal()/cleanup_exit()
 * and privsep children exit without freeing what the parent set up, by
 * design; LeakSanitizer also needs ptrace, which the privsep children lose.
 * OpenSSH's own sanitizer CI (.github/configs) runs with detect_leaks=0.
 */
#ifndef SANLOG
#error SANLOG must be defined
#endif

const char *__asan_default_options(void);
const char *__ubsan_default_options(void);

const char *
__asan_default_options(void)
{
	return "detect_leaks=0:halt_on_error=1:abort_on_error=0:"
	    "detect_stack_use_after_return=1:strict_string_checks=1:"
	    "check_initialization_order=1:log_path=" SANLOG "/asan";
}

const char *
__ubsan_default_options(void)
{
	return "print_stacktrace=1:halt_on_error=1:log_path=" SANLOG "/ubsan";
}
