#	sshd-auth's seccomp sandbox went on without its filter when
#	prctl(PR_SET_SECCOMP) failed, logging it at debug level only
#	(upstream 7ab700f17, 10.4p1): a login then worked with the
#	pre-authentication process unconfined.  A preloaded library of the
#	test's own makes prctl() fail for the option HPNSEC_PRCTL_FAIL names,
#	in sshd run by ssh's ProxyCommand; sshd-session and sshd-auth inherit
#	it.  It logs each failure it makes into HPNSEC_PRCTL_LOG, a file of
#	4 KiB of zeros it maps when loaded: by then the sandbox's rlimits
#	allow no new file and no file growth.
#	  seccomp  PR_SET_SECCOMP fails: stock logs in; ours refuses
#	  both     both fail: the same
#	  nnp      PR_SET_NO_NEW_PRIVS fails: sshd-auth, unprivileged by then,
#	           cannot set the filter without it (EACCES) and stock logs
#	           in; ours refuses at the first failure
#	Control: a login with the library loaded and nothing made to fail.
#	Placed in the Public Domain.

tid="seccomp sandbox set-up failures"
fixed_in=10.4p1
[ -n "$HPN_TOP" ] || fatal "HPN_TOP not set"
. $HPN_TOP/tests/security/lib.sh

[ "`uname -s`" = Linux ] || skip "$tid: Linux's seccomp only"
for t in $BUILDDIR $HPN_STOCK_TREE; do
	grep -q '^#define SANDBOX_SECCOMP_FILTER 1' $t/config.h ||
	    fatal "$t is not built with the seccomp sandbox"
done
CC=${CC:-cc}
command -v $CC >/dev/null || fatal "no C compiler ($CC) for the preloaded library"
D=$OBJ/sec-seccomp
rm -rf $D
mkdir -p $D

cat > $D/shim.c <<'EOF'
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/prctl.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOGSZ 4096
static char *logmap;

__attribute__((constructor)) static void
shim_init(void)
{
	const char *l = getenv("HPNSEC_PRCTL_LOG");
	int fd;

	if (l == NULL || (fd = open(l, O_RDWR)) == -1)
		return;
	logmap = mmap(NULL, LOGSZ, PROT_READ|PROT_WRITE, MAP_SHARED, fd, 0);
	if (logmap == MAP_FAILED)
		logmap = NULL;
	close(fd);
}

int
prctl(int option, ...)
{
	static int (*real)(int, ...);
	const char *f = getenv("HPNSEC_PRCTL_FAIL"), *name = NULL;
	unsigned long a[4];
	va_list ap;
	size_t n;
	int i;

	va_start(ap, option);
	for (i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (option == PR_SET_SECCOMP)
		name = "seccomp";
	else if (option == PR_SET_NO_NEW_PRIVS)
		name = "nnp";
	if (name != NULL && f != NULL &&
	    (strcmp(f, name) == 0 || strcmp(f, "both") == 0)) {
		if (logmap != NULL && (n = strnlen(logmap, LOGSZ - 1)) <
		    LOGSZ - 64)
			snprintf(logmap + n, LOGSZ - n, "failed %s pid %ld\n",
			    name, (long)getpid());
		errno = EINVAL;
		return -1;
	}
	if (real == NULL)
		real = (int (*)(int, ...))dlsym(RTLD_NEXT, "prctl");
	return real(option, a[0], a[1], a[2], a[3]);
}
EOF
$CC -shared -fPIC -o $D/shim.so $D/shim.c -ldl > $D/cc.log 2>&1 || {
	cat $D/cc.log >&2
	fatal "building the preloaded library failed"
}

# login FLAVOUR FAIL: a key login through FLAVOUR's sshd with prctl()
# failing for FAIL ("none": nothing); $_rc, sshd's log in $D/sshd.log,
# the library's in $D/prctl.log.
login() {
	sec_proxy $1 seccomp
	sed -i "s|^proxycommand |proxycommand env LD_PRELOAD=$D/shim.so HPNSEC_PRCTL_FAIL=$2 HPNSEC_PRCTL_LOG=$D/prctl.log |; s|^proxycommand .*|& -E $D/sshd.log|" \
	    $OBJ/ssh_seccomp.$1
	rm -f $D/sshd.log $D/out
	head -c 4096 /dev/zero > $D/prctl.log
	timeout 60 ${REAL_SSH} -F $OBJ/ssh_seccomp.$1 somehost 'echo in' \
	    > $D/out 2> $D/err < /dev/null
	_rc=$?
}

# fired: the library made a prctl() fail
fired() {
	tr -d '\000' < $D/prctl.log | grep -q '^failed '
}

scenario() {
	_flaw=0
	login $1 none
	[ $_rc = 0 ] && grep -q '^in$' $D/out && ! fired || {
		cat $D/err $D/sshd.log >&2
		fatal "$1: a login with the library loaded, nothing failing: exit $_rc"
	}
	for f in seccomp both nnp; do
		login $1 $f
		fired || {
			cat $D/err $D/sshd.log >&2
			fatal "$1: $f: the library made no prctl() fail"
		}
		if [ $_rc = 0 ] && grep -q '^in$' $D/out; then
			verbose "$tid: $1: $f: logged in unconfined: `grep -m1 'prctl(' $D/sshd.log`"
			_flaw=1
			continue
		fi
		# the fatal, not the debug line 10.3p1 wrote
		[ $_rc = 255 ] && grep "prctl(PR_SET_" $D/sshd.log |
		    grep -qv '^debug' || {
			cat $D/err $D/sshd.log >&2
			fatal "$1: $f: exit $_rc and no prctl failure in sshd's log"
		}
		verbose "$tid: $1: $f: refused: `grep 'prctl(PR_SET_' $D/sshd.log | grep -v '^debug' | head -n 1`"
	done
	return $_flaw
}

sec_run scenario
rm -rf $D $OBJ/sshd_seccomp.* $OBJ/ssh_seccomp.*
