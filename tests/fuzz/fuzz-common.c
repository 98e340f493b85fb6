/*
 * HPN patch set: what every fuzz harness shares (fuzz-common.h).
 */

#include "includes.h"

#include <sys/types.h>

#include <errno.h>
#include <grp.h>
#include <link.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sanitizer/allocator_interface.h>

#ifdef WITH_OPENSSL
#include <openssl/crypto.h>
#endif

#include "log.h"
#include "misc.h"
#include "sshbuf.h"

#include "fuzz-common.h"

/* a user and group id no database has */
#define FZ_NO_ID	((uid_t)0x7ffffffe)

sigjmp_buf fz_jmp;
volatile int fz_armed;

/*
 * The allocations of the current step: an open-addressed set of pointers,
 * emptied by moving to the next generation (a slot of another generation
 * is empty), so that a step costs nothing to start.  Allocations and frees
 * may come from any thread (sftp-server's hash workers): a spin lock.
 */
#define TRACK_SLOTS	(1 << 20)
#define TRACK_TOMB	((uintptr_t)1)

static struct slot {
	uintptr_t p;
	uint32_t gen;
} track[TRACK_SLOTS];
static uint32_t gen = 1;
static size_t used;		/* slots of this generation, tombs included */
static uint32_t taken[TRACK_SLOTS / 4 * 3];	/* ... which */
static int inserting;		/* in a step: note allocations */
static int removing;		/* ... and until its leftovers are freed */
static int overflow, failed_step;
static unsigned long long loads;	/* shared objects loaded by step start */
static volatile char lock;
static __thread int untracked;	/* libcrypto allocating: not a step's */

static size_t
hash(uintptr_t p)
{
	return (size_t)(((uint64_t)p >> 4) * 0x9e3779b97f4a7c15ULL >> 44) &
	    (TRACK_SLOTS - 1);
}

static void
take(void)
{
	while (__atomic_test_and_set(&lock, __ATOMIC_ACQUIRE))
		;
}

static void
give(void)
{
	__atomic_clear(&lock, __ATOMIC_RELEASE);
}

/*
 * The hooks run on every allocation and free of the harness: not
 * instrumented (their loads are of track[] alone), 5-7% of agent's CPU.
 */
static void __attribute__((no_sanitize("address", "undefined")))
malloc_hook(const volatile void *ptr, size_t size)
{
	size_t i;

	(void)size;
	if (!inserting || untracked || ptr == NULL)
		return;
	take();
	if (used >= TRACK_SLOTS / 4 * 3) {
		overflow = 1;
		give();
		return;
	}
	for (i = hash((uintptr_t)ptr); track[i].gen == gen &&
	    track[i].p != TRACK_TOMB; i = (i + 1) & (TRACK_SLOTS - 1))
		;
	if (track[i].gen != gen)
		taken[used++] = (uint32_t)i;
	track[i].p = (uintptr_t)ptr;
	track[i].gen = gen;
	give();
}

static void __attribute__((no_sanitize("address", "undefined")))
free_hook(const volatile void *ptr)
{
	size_t i;

	if (!removing || ptr == NULL)
		return;
	take();
	for (i = hash((uintptr_t)ptr); track[i].gen == gen;
	    i = (i + 1) & (TRACK_SLOTS - 1)) {
		if (track[i].p == (uintptr_t)ptr) {
			track[i].p = TRACK_TOMB;
			break;
		}
	}
	give();
}

/* The count of shared objects the process has loaded so far. */
static int
loads_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(unsigned long long *)arg = info->dlpi_adds;
	return 1;
}

static unsigned long long
loads_now(void)
{
	unsigned long long n = 0;

	(void)dl_iterate_phdr(loads_cb, &n);
	return n;
}

void
fz_step_begin(void)
{
	if (failed_step) {
		fprintf(stderr, "fuzz harness: a failed step's allocations "
		    "were not released\n");
		abort();
	}
	take();
	if (++gen == 0) {		/* wrapped: start afresh */
		memset(track, 0, sizeof(track));
		gen = 1;
	}
	used = 0;
	overflow = 0;
	inserting = removing = 1;
	give();
	loads = loads_now();
}

void
fz_step_end(int failed)
{
	take();
	inserting = 0;
	removing = failed;
	give();
	failed_step = failed;
}

/*
 * After a step that ended in fatal(), once the harness has freed the state
 * it knows of: free what the step allocated and left, as the process's
 * exit would have.  Returns how many blocks.
 */
size_t
fz_step_release(void)
{
	size_t i, n = 0;
	void *p;

	if (!failed_step)
		return 0;
	failed_step = 0;
	if (overflow) {
		removing = 0;
		fprintf(stderr, "fuzz harness: more allocations in one step "
		    "than the tracker holds (%d)\n", TRACK_SLOTS / 4 * 3);
		abort();
	}
	/*
	 * The loader's link maps and TLS slots are among what the step
	 * allocated: freed, they break the next thread or the exit.  What
	 * loads a module (a user or group lookup, a locale) goes in
	 * fz_init() or the harness's LLVMFuzzerInitialize().
	 */
	if (loads_now() != loads) {
		removing = 0;
		fprintf(stderr, "fuzz harness: a step that ended in fatal() "
		    "loaded a shared object (%llu -> %llu): do what loaded it "
		    "before the steps\n", loads, loads_now());
		abort();
	}
	while (used > 0) {
		i = taken[--used];
		if (track[i].p == TRACK_TOMB)
			continue;
		p = (void *)track[i].p;
		track[i].p = TRACK_TOMB;
		free(p);
		n++;
	}
	removing = 0;
	return n;
}

void
fz_exit(int code)
{
	if (!fz_armed) {
		fprintf(stderr, "fuzz harness: exit(%d) outside a step\n",
		    code);
		abort();
	}
	fz_armed = 0;
	siglongjmp(fz_jmp, 1);
}

/* log.c's fatal() ends here (sshd, ssh and sftp-server each have one). */
void
cleanup_exit(int i)
{
	fz_exit(i);
}

#ifdef WITH_OPENSSL
/*
 * libcrypto's allocations are never a step's leftovers: it keeps what it
 * sets up on first use (fetched digests and ciphers, their locks) in its
 * own caches, and what a step got from it goes back through the state
 * the harness frees.
 */
static void *
crypto_malloc(size_t n, const char *file, int line)
{
	void *p;

	(void)file;
	(void)line;
	untracked++;
	p = malloc(n);
	untracked--;
	return p;
}

static void *
crypto_realloc(void *q, size_t n, const char *file, int line)
{
	void *p;

	(void)file;
	(void)line;
	untracked++;
	p = realloc(q, n);
	untracked--;
	return p;
}

static void
crypto_free(void *p, const char *file, int line)
{
	(void)file;
	(void)line;
	free(p);
}
#endif

static const char *fz_progname = "fuzz harness";

void
fz_bad(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: ", fz_progname);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

void
fz_scratch(char *buf, size_t len, const char *name)
{
	const char *tmp = getenv("TMPDIR");
	int n;

	n = snprintf(buf, len, "%s/%s.XXXXXX",
	    tmp != NULL && *tmp != '\0' ? tmp : "/tmp", name);
	if (n < 0 || (size_t)n >= len)
		fz_bad("scratch directory name too long");
	if (mkdtemp(buf) == NULL)
		fz_bad("mkdtemp %s: %s", buf, strerror(errno));
}

void
fz_write_seed(const char *dir, const char *name, const struct sshbuf *b)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "w")) == NULL ||
	    fwrite(sshbuf_ptr(b), 1, sshbuf_len(b), f) != sshbuf_len(b) ||
	    fclose(f) != 0)
		fz_bad("%s: %s", path, strerror(errno));
}

void
fz_init(const char *progname)
{
	const char *v = getenv("HPN_FUZZ_LOG");

	fz_progname = progname;

#ifdef WITH_OPENSSL
	if (CRYPTO_set_mem_functions(crypto_malloc, crypto_realloc,
	    crypto_free) != 1) {
		fprintf(stderr, "fuzz harness: libcrypto allocated before "
		    "fz_init()\n");
		abort();
	}
#endif

	log_init(progname, v != NULL && *v != '\0' ? SYSLOG_LEVEL_DEBUG3 :
	    SYSLOG_LEVEL_QUIET, SYSLOG_FACILITY_USER, 1);
	/*
	 * The C library's user and group databases load their modules
	 * (nsswitch.conf's services past "files": Debian's "systemd") with
	 * dlopen() on the first lookup that "files" cannot answer, and keep
	 * them, their link maps and TLS slots.  Looked up here, before any
	 * step: a step that ended in fatal() after such a lookup (an
	 * unknown gid in users-groups-by-id@) had its leftovers freed, the
	 * loader's among them, and the next pthread_create() failed the
	 * loader's TLS assertion or exit() crashed.
	 */
	(void)getpwuid(FZ_NO_ID);
	(void)getgrgid(FZ_NO_ID);
	(void)getpwnam("hpn-fuzz-nobody");
	(void)getgrnam("hpn-fuzz-nobody");
	if (__sanitizer_install_malloc_and_free_hooks(malloc_hook,
	    free_hook) == 0) {
		fprintf(stderr, "fuzz harness: cannot install malloc hooks\n");
		abort();
	}
}

int
fz_u8(struct fz_in *in, uint8_t *v)
{
	if (in->len < 1)
		return -1;
	*v = in->p[0];
	in->p++;
	in->len--;
	return 0;
}

int
fz_u16(struct fz_in *in, uint16_t *v)
{
	if (in->len < 2)
		return -1;
	*v = (uint16_t)(in->p[0] << 8 | in->p[1]);
	in->p += 2;
	in->len -= 2;
	return 0;
}

int
fz_u32(struct fz_in *in, uint32_t *v)
{
	if (in->len < 4)
		return -1;
	*v = PEEK_U32(in->p);
	in->p += 4;
	in->len -= 4;
	return 0;
}

int
fz_u64(struct fz_in *in, uint64_t *v)
{
	if (in->len < 8)
		return -1;
	*v = PEEK_U64(in->p);
	in->p += 8;
	in->len -= 8;
	return 0;
}

int
fz_bytes(struct fz_in *in, size_t max, const uint8_t **p, size_t *len)
{
	uint16_t n;

	if (fz_u16(in, &n) != 0)
		return -1;
	*len = MINIMUM(MINIMUM((size_t)n, max), in->len);
	*p = in->p;
	in->p += *len;
	in->len -= *len;
	return 0;
}
