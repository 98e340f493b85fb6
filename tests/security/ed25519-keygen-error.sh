#	Upstream 4b5860ed2 (no CVE): ssh_ed25519_generate() ignored a failure
#	of the Ed25519 key pair generation.  With OpenSSL's Ed25519 (our
#	builds) any EVP failure (a provider or FIPS policy without Ed25519,
#	a random generator that cannot seed) left the key's buffers
#	uninitialised, and ssh-keygen wrote them out as a key, exit 0.  An
#	LD_PRELOAD shim makes EVP_PKEY_keygen() fail (and logs each call);
#	ssh-keygen -t ed25519 must then fail and write no file.
#	Placed in the Public Domain.

tid="ed25519-keygen-error: a failed Ed25519 key generation is reported"
fixed_in=10.5p1
[ -n "$HPN_TOP" ] || fatal "HPN_TOP not set"
. $HPN_TOP/tests/security/lib.sh

CC=${CC:-cc}
command -v $CC >/dev/null || fatal "a C compiler ($CC) is needed for the shim"
D=$OBJ/sec-ed25519
rm -f $D.*
cat > $D.shim.c <<'_EOF'
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* EVP_PKEY_keygen() that always fails, and says so in $ED25519_SHIM_LOG */
int
EVP_PKEY_keygen(void *ctx, void **pkey)
{
	const char msg[] = "EVP_PKEY_keygen: failed on purpose\n";
	const char *path = getenv("ED25519_SHIM_LOG");
	int fd;

	(void)ctx;
	(void)pkey;
	if (path != NULL &&
	    (fd = open(path, O_WRONLY|O_CREAT|O_APPEND, 0600)) != -1) {
		(void)write(fd, msg, strlen(msg));
		close(fd);
	}
	return 0;
}
_EOF
$CC -shared -fPIC -o $D.shim.so $D.shim.c || fatal "cannot build the shim"

scenario() {
	case "$1" in
	stock)	_kg=$HPN_STOCK_TREE/ssh-keygen ;;
	*)	_kg=${SSHKEYGEN} ;;
	esac
	rm -f $D.key $D.key.pub $D.shim.log $D.err
	ED25519_SHIM_LOG=$D.shim.log LD_PRELOAD=$D.shim.so \
	    $_kg -q -t ed25519 -N '' -C sec -f $D.key > $D.err 2>&1 < /dev/null
	_rc=$?
	grep -q "failed on purpose" $D.shim.log 2>/dev/null || {
		cat $D.err >&2
		fatal "$1: the shim's EVP_PKEY_keygen was not called (exit $_rc)"
	}
	case $_rc in
	0|1|255) ;;
	*)	cat $D.err >&2
		fatal "$1: ssh-keygen ended with status $_rc" ;;
	esac
	if [ $_rc -eq 0 ] || [ -e $D.key ] || [ -e $D.key.pub ]; then
		verbose "$tid: $1: exit $_rc with a failed key generation;" \
		    "files: `ls $D.key $D.key.pub 2>/dev/null | wc -l`"
		return 1
	fi
	verbose "$tid: $1: exit $_rc, no key written: `head -n 1 $D.err`"
	return 0
}

sec_run scenario

# without the shim, the same command makes a key that works
rm -f $D.key $D.key.pub
${SSHKEYGEN} -q -t ed25519 -N '' -C sec -f $D.key < /dev/null ||
	fail "ssh-keygen -t ed25519 without the shim failed"
[ "`${SSHKEYGEN} -y -f $D.key | cut -d' ' -f2`" = "`cut -d' ' -f2 $D.key.pub`" ] ||
	fail "the key made without the shim does not match its .pub"
rm -f $D.*
