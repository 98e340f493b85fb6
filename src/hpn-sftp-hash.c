/*
 * HPN patch set: hashes of byte ranges of files, for verified resume.
 *
 * sftp-server answers the hash-range@hpn-patch-set.invalid extension with
 * the hash of a byte range of a file it has open for the client:
 *
 *	byte	SSH2_FXP_EXTENDED
 *	uint32	id
 *	string	"hash-range@hpn-patch-set.invalid"
 *	string	handle		(of a file opened for reading)
 *	string	algorithms	(names, comma-separated, by preference)
 *	uint64	offset
 *	uint64	length		(at most HPN_HASH_RANGE_MAX)
 *	uint32	piece		(bytes per hash, at least HPN_HASH_PIECE_MIN;
 *				 0: one hash of the whole range)
 *
 * and the reply, or a status (SSH2_FX_OP_UNSUPPORTED: none of the
 * algorithms; SSH2_FX_BAD_MESSAGE: a range too long, pieces too small):
 *
 *	byte	SSH2_FXP_EXTENDED_REPLY
 *	uint32	id
 *	string	algorithm	(the one used)
 *	uint64	length		(bytes hashed: fewer at the end of the file)
 *	uint32	count		(of pieces: the range cut at every piece bytes)
 *	string	hash		(count times, in order; a piece past the end
 *				 of the file hashes nothing)
 *
 * The algorithms (hpn_hash_names, hpn-options.c): xxh128 (XXH3's 128-bit
 * hash, from libxxhash, where the build has it: a checksum, not a
 * cryptographic hash, at 15 to 30 GB/s a core), SHA-256 and BLAKE2b-512
 * (OpenSSL's).  Pieces are hashed in parallel (HPN_HASH_THREADS threads at
 * most, one per CPU), at both ends, and the kernel is asked for the bytes
 * ahead of them, so that a large prefix is checked at the speed the disk
 * reads it rather than one core's hashing.  The request only reads,
 * through a handle the client opened (so the server's read-only mode,
 * chroot and permissions apply as they do to READ), and its cost is
 * bounded: HPN_HASH_RANGE_MAX bytes read per request (and as many asked
 * ahead of the kernel), as READs bound theirs.  The client
 * (xfer/resume.c) hashes its own copy with the same function.
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef WITH_OPENSSL
#include <openssl/evp.h>
#endif
#ifdef HPN_WITH_XXHASH
#include <xxhash.h>
#endif

#include "xmalloc.h"
#include "sshbuf.h"
#include "ssherr.h"
#include "log.h"
#include "misc.h"
#include "sftp.h"

#include "hpn.h"

#define HASH_BLOCK	(256 * 1024)	/* one read: hashed from the cache */
#define MAP_CHUNK	(8 * 1024 * 1024)	/* mapped and hashed at once */
#define HASH_ALGS_MAX	256		/* the request's list, bytes */
#define AHEAD_STEP	(4 * 1024 * 1024)	/* asked of the kernel at once */

/* One hash on its way: libxxhash's XXH3 or an OpenSSL digest. */
struct hctx {
	u_int len;			/* of the hash, bytes */
#ifdef WITH_OPENSSL
	EVP_MD_CTX *evp;
#endif
#ifdef HPN_WITH_XXHASH
	XXH3_state_t *xxh;
#endif
};

/* Is name one of hpn_hash_names?  Its entry, or NULL. */
static const char *
known(const char *name)
{
	int i;

	for (i = 0; hpn_hash_names[i] != NULL; i++) {
		if (strcmp(name, hpn_hash_names[i]) == 0)
			return hpn_hash_names[i];
	}
	return NULL;
}

static void
hctx_free(struct hctx *c)
{
#ifdef WITH_OPENSSL
	EVP_MD_CTX_free(c->evp);
#endif
#ifdef HPN_WITH_XXHASH
	if (c->xxh != NULL)
		XXH3_freeState(c->xxh);
#endif
	memset(c, 0, sizeof(*c));
}

/* Starts a hash with alg: 0, or an errno (EINVAL: not an algorithm of ours) */
static int
hctx_init(struct hctx *c, const char *alg)
{
#ifdef WITH_OPENSSL
	const EVP_MD *type;
#endif

	memset(c, 0, sizeof(*c));
	if (known(alg) == NULL)
		return EINVAL;
#ifdef HPN_WITH_XXHASH
	if (strcmp(alg, "xxh128") == 0) {
		if ((c->xxh = XXH3_createState()) == NULL)
			return ENOMEM;
		if (XXH3_128bits_reset(c->xxh) != XXH_OK) {
			hctx_free(c);
			return EINVAL;
		}
		c->len = sizeof(XXH128_canonical_t);
		return 0;
	}
#endif
#ifdef WITH_OPENSSL
	if ((type = EVP_get_digestbyname(alg)) == NULL ||
	    EVP_MD_size(type) <= 0 ||
	    (u_int)EVP_MD_size(type) > HPN_HASH_MD_MAX)
		return EINVAL;
	if ((c->evp = EVP_MD_CTX_new()) == NULL)
		return ENOMEM;
	if (EVP_DigestInit_ex(c->evp, type, NULL) != 1) {
		hctx_free(c);
		return EINVAL;
	}
	c->len = (u_int)EVP_MD_size(type);
	return 0;
#else
	return EINVAL;
#endif
}

static int
hctx_update(struct hctx *c, const void *p, size_t len)
{
#ifdef HPN_WITH_XXHASH
	if (c->xxh != NULL)
		return XXH3_128bits_update(c->xxh, p, len) == XXH_OK ?
		    0 : EINVAL;
#endif
#ifdef WITH_OPENSSL
	if (c->evp != NULL)
		return EVP_DigestUpdate(c->evp, p, len) == 1 ? 0 : EINVAL;
#endif
	return EINVAL;
}

/* The hash into md (HPN_HASH_MD_MAX bytes), its length in *mdlen. */
static int
hctx_final(struct hctx *c, u_char *md, u_int *mdlen)
{
#ifdef HPN_WITH_XXHASH
	XXH128_canonical_t canon;

	if (c->xxh != NULL) {
		/* big-endian, as xxhsum -H2 and Python's xxhash print it */
		XXH128_canonicalFromHash(&canon, XXH3_128bits_digest(c->xxh));
		memcpy(md, &canon, sizeof(canon));
		*mdlen = sizeof(canon);
		return 0;
	}
#endif
#ifdef WITH_OPENSSL
	if (c->evp != NULL)
		return EVP_DigestFinal_ex(c->evp, md, mdlen) == 1 ?
		    0 : EINVAL;
#endif
	return EINVAL;
}

/* Can we hash with alg here (an algorithm of ours, and OpenSSL has it)? */
static int
available(const char *alg)
{
	struct hctx c;

	if (hctx_init(&c, alg) != 0)
		return 0;
	hctx_free(&c);
	return 1;
}

/* The first name in the comma-separated list that we have, or NULL. */
const char *
hpn_hash_pick(const char *list)
{
	char *l, *cp, *name;
	const char *ret = NULL;

	l = cp = xstrdup(list);
	while (ret == NULL && (name = strsep(&cp, ",")) != NULL) {
		if (known(name) != NULL && available(name))
			ret = known(name);
	}
	free(l);
	return ret;
}

/*
 * Every algorithm we have, comma-separated, by preference (the order of
 * hpn_hash_names): the default of ResumeHash.
 */
const char *
hpn_hash_algs(void)
{
	static char list[64];
	int i;

	if (*list != '\0')
		return list;
	for (i = 0; hpn_hash_names[i] != NULL; i++) {
		if (!available(hpn_hash_names[i]))
			continue;
		if ((*list != '\0' && strlcat(list, ",", sizeof(list)) >=
		    sizeof(list)) || strlcat(list, hpn_hash_names[i],
		    sizeof(list)) >= sizeof(list))
			fatal_f("algorithm list too long");
	}
	return list;
}

/*
 * Hashing where the page cache has the bytes, from a mapping of the file,
 * rather than reading them: read() copies each byte once more before it
 * is hashed, and that copy was most of a warm xxh128 comparison's CPU
 * (README.hpn section 10).  A file cut shorter under the mapping (by
 * another process, as we hash it) makes its bytes past the new end fault
 * with SIGBUS: a handler of ours, installed on first use, jumps back out
 * of the hash for a fault inside the mapping the thread is hashing, and
 * the range is then hashed again by reading (pread() sees the file's end
 * as it now is).  Any other SIGBUS gets the disposition there was before.
 */
void (*hpn_hash_test_mapped)(int);	/* tests: called with fd once mapped */

#ifdef HAVE_MMAP
static __thread sigjmp_buf *volatile bus_env;	/* hashing from a mapping */
static __thread const u_char *volatile bus_lo, *volatile bus_hi;
static struct sigaction bus_old;
static pthread_once_t bus_once = PTHREAD_ONCE_INIT;
static int bus_ok;

static void
bus_handler(int sig, siginfo_t *si, void *ctx)
{
	const u_char *a = si->si_addr;

	if (bus_env != NULL && si->si_code > 0 && a >= bus_lo && a < bus_hi)
		siglongjmp(*bus_env, 1);
	/* not ours: as before (a fault faults again on return) */
	sigaction(SIGBUS, &bus_old, NULL);
	if (si->si_code <= 0)
		raise(sig);	/* sent: pending until we return */
}

static void
bus_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = bus_handler;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	bus_ok = sigaction(SIGBUS, &sa, &bus_old) == 0;
}

/* hctx_update() from a mapping: 0, an errno, or -1 (SIGBUS: c spoiled) */
static int
update_mapped(struct hctx *c, const u_char *map, size_t maplen, size_t skip)
{
	sigjmp_buf env;
	int r;

	if (sigsetjmp(env, 1) != 0) {
		bus_env = NULL;
		return -1;
	}
	bus_lo = map;
	bus_hi = map + maplen;
	bus_env = &env;
	r = hctx_update(c, map + skip, maplen - skip);
	bus_env = NULL;
	return r;
}

static int range_cached(int, u_int64_t, u_int64_t);

/*
 * Hashes into c the bytes of fd from off + *done up to off + len, or up
 * to the file's end as fstat() sees it, MAP_CHUNK bytes mapped at a time,
 * adding them to *done, as long as the page cache has them: a cold file
 * is read, where the read-ahead and the kernel's own keep the disk busy
 * (faulting its pages in through a mapping was slower: make bench-hash's
 * cold xxh128 1.25x cat's read, 0.91x when read).  0: what it could (the
 * caller reads the rest, if any: bytes not cached, a file that grew, a
 * file that cannot be mapped); -1: the file shrank under the mapping (a
 * fault, or fstat() after hashing), and c is spoiled; or an errno (the
 * hash).
 */
static int
hash_mapped(int fd, struct hctx *c, u_int64_t off, u_int64_t len,
    u_int64_t *done)
{
	struct stat sb;
	u_char *map;
	u_int64_t o, end, base;
	size_t n, skip, maplen;
	long pg;
	int r;

	if (pthread_once(&bus_once, bus_install) != 0 || !bus_ok ||
	    (pg = sysconf(_SC_PAGESIZE)) <= 0 || fstat(fd, &sb) == -1 ||
	    !S_ISREG(sb.st_mode) || sb.st_size <= 0 ||
	    off >= (u_int64_t)sb.st_size)
		return 0;
	end = off + MINIMUM(len, (u_int64_t)sb.st_size - off);
	while ((o = off + *done) < end) {
		base = o - o % (u_int64_t)pg;
		skip = (size_t)(o - base);
		n = (size_t)MINIMUM(end - o, MAP_CHUNK);
		if (!range_cached(fd, o, n))
			return 0;
		maplen = skip + n;
		if ((map = mmap(NULL, maplen, PROT_READ, MAP_SHARED, fd,
		    (off_t)base)) == MAP_FAILED)
			return 0;
#ifdef MADV_POPULATE_READ
		/* the page tables at once, not a fault each 64 KiB */
		(void)madvise(map, maplen, MADV_POPULATE_READ);
#endif
		if (hpn_hash_test_mapped != NULL)
			hpn_hash_test_mapped(fd);
		r = update_mapped(c, map, maplen, skip);
		munmap(map, maplen);
		if (r != 0)
			return r;
		/*
		 * Cut inside the last page: its bytes past the new end read
		 * as zeros rather than fault.  Whatever cut the file before
		 * we were done reading is seen here.
		 */
		if (fstat(fd, &sb) == -1 || (u_int64_t)sb.st_size < o + n)
			return -1;
		*done += n;
	}
	return 0;
}
#endif /* HAVE_MMAP */

/*
 * The hash with alg of len bytes of fd from off, or of fewer where the
 * file ends first: *done is how many.  0, or an errno (EINVAL: alg).
 */
int
hpn_hash_range(int fd, const char *alg, u_int64_t off, u_int64_t len,
    u_char *md, u_int *mdlen, u_int64_t *done)
{
	struct hctx c;
	u_char *buf = NULL;
	ssize_t n;
	size_t want, used = 0;
	int ret;

	*done = 0;
	*mdlen = 0;
	if ((ret = hctx_init(&c, alg)) != 0)
		return ret;
#ifdef HAVE_MMAP
	if ((ret = hash_mapped(fd, &c, off, len, done)) == -1) {
		/* the file shrank as we hashed it: again, by reading it */
		debug_f("file shorter than it was: hashed again by reading");
		hctx_free(&c);
		*done = 0;
		if ((ret = hctx_init(&c, alg)) != 0)
			return ret;
	}
#endif
	while (ret == 0 && *done < len) {
		if (buf == NULL)
			buf = xmalloc(HASH_BLOCK);
		want = MINIMUM(len - *done, HASH_BLOCK);
		if ((n = pread(fd, buf, want, (off_t)(off + *done))) == -1) {
			if (errno == EINTR)
				continue;
			ret = errno;
			break;
		}
		used = MAXIMUM(used, (size_t)n);
		if (n == 0)
			break;		/* end of the file */
		if ((ret = hctx_update(&c, buf, n)) != 0)
			break;
		*done += n;
	}
	if (ret == 0)
		ret = hctx_final(&c, md, mdlen);
	if (buf != NULL) {
		/* what the reads filled: the rest was never touched (zeroing
		 * all of HASH_BLOCK faulted in 64 pages for a short range) */
		explicit_bzero(buf, used);
		free(buf);
	}
	hctx_free(&c);
	return ret;
}

/*
 * Reading ahead.  A worker waits for the disk where the bytes are not
 * cached, and while it hashes the disk has only what the kernel's own
 * read-ahead queued (128 KiB by default): a thread of its own asks the
 * kernel (POSIX_FADV_WILLNEED) for the bytes of the range, in order, then
 * for as many after it, which a client reading a file through asks for
 * next, so that the disk always has reads queued and never waits on the
 * hash.  It only fills the page cache, never past the end of the file,
 * and stops with the request.  A step the cache already has (its first
 * and last bytes, as a read that does not wait finds them) is not asked
 * for: asking walks every page of it, a sixth of a warm xxh128
 * comparison's CPU when all of it was asked for.
 */
struct ahead {
	int fd;
	u_int64_t off, end;		/* what to ask for */
	atomic_int stop;		/* the request is done */
};

/* Has the page cache the byte at o of fd?  Asks without waiting. */
static int
cached(int fd, u_int64_t o)
{
#ifdef RWF_NOWAIT
	struct iovec iov;
	u_char c;

	iov.iov_base = &c;
	iov.iov_len = 1;
	return preadv2(fd, &iov, 1, (off_t)o, RWF_NOWAIT) == 1;
#else
	return 0;
#endif
}

/* Has it the first and last of the n bytes at o?  (n > 0) */
static int
range_cached(int fd, u_int64_t o, u_int64_t n)
{
	return cached(fd, o) && cached(fd, o + n - 1);
}

static void *
ahead_work(void *arg)
{
#ifdef POSIX_FADV_WILLNEED
	struct ahead *a = arg;
	u_int64_t o, n;

	for (o = a->off; o < a->end && !atomic_load(&a->stop);
	    o += AHEAD_STEP) {
		n = MINIMUM(AHEAD_STEP, a->end - o);
		if (range_cached(a->fd, o, n))
			continue;
		if (posix_fadvise(a->fd, (off_t)o, (off_t)n,
		    POSIX_FADV_WILLNEED) != 0)
			break;
	}
#endif
	return NULL;
}

/* Starts the thread asking for [off, off + 2 len) of fd: 0, or -1. */
static int
ahead_start(struct ahead *a, pthread_t *tid, int fd, u_int64_t off,
    u_int64_t len)
{
#ifdef POSIX_FADV_WILLNEED
	struct stat sb;

	memset(a, 0, sizeof(*a));
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode) ||
	    off >= (u_int64_t)sb.st_size)
		return -1;
	atomic_init(&a->stop, 0);
	a->fd = fd;
	a->off = off;
	a->end = off + MINIMUM((u_int64_t)sb.st_size - off, 2 * len);
	return pthread_create(tid, NULL, ahead_work, a) == 0 ? 0 : -1;
#else
	return -1;
#endif
}

struct pieces {
	int fd;
	const char *alg;
	u_int64_t off, len, piece;
	u_int n, next;			/* pieces, the next one to take */
	u_char *md;			/* n x HPN_HASH_MD_MAX */
	u_int mdlen;
	u_int64_t *done;		/* per piece */
	int err;
	pthread_mutex_t lock;
};

/* A worker: hashes the next piece not taken, until none is left. */
static void *
pieces_work(void *arg)
{
	struct pieces *p = arg;
	u_int i, mdlen;
	u_int64_t off;
	int r;

	for (;;) {
		pthread_mutex_lock(&p->lock);
		i = p->err == 0 && p->next < p->n ? p->next++ : p->n;
		pthread_mutex_unlock(&p->lock);
		if (i == p->n)
			return NULL;
		off = (u_int64_t)i * p->piece;
		r = hpn_hash_range(p->fd, p->alg, p->off + off,
		    MINIMUM(p->len - MINIMUM(p->len, off), p->piece),
		    p->md + (size_t)i * HPN_HASH_MD_MAX, &mdlen, &p->done[i]);
		if (r != 0) {
			pthread_mutex_lock(&p->lock);
			if (p->err == 0)
				p->err = r;
			pthread_mutex_unlock(&p->lock);
		}
	}
}

/*
 * The hashes with alg of len bytes of fd from off cut into pieces of
 * piece bytes (0: one piece), several at once: *n of them in md (n x
 * HPN_HASH_MD_MAX bytes, *mdlen each), *done bytes read in all.  0, or an
 * errno (EINVAL: alg, a piece below HPN_HASH_PIECE_MIN, too many pieces).
 */
int
hpn_hash_pieces(int fd, const char *alg, u_int64_t off, u_int64_t len,
    u_int64_t piece, u_char **md, u_int *n, u_int *mdlen, u_int64_t *done)
{
	struct pieces p;
	struct ahead a;
	struct hctx c;
	pthread_t tid[HPN_HASH_THREADS], atid;
	long ncpu;
	u_int i, nt, started = 0;
	int r, ahead;

	*md = NULL;
	*n = *mdlen = 0;
	*done = 0;
	if (piece == 0 || piece > len)
		piece = MAXIMUM(len, 1);
	if (piece < HPN_HASH_PIECE_MIN && piece < len)
		return EINVAL;
	memset(&p, 0, sizeof(p));
	p.fd = fd;
	p.alg = alg;
	p.off = off;
	p.len = len;
	p.piece = piece;
	p.n = len == 0 ? 1 : (len + piece - 1) / piece;
	if (p.n > HPN_HASH_PIECES_MAX)
		return EINVAL;
	if ((r = hctx_init(&c, alg)) != 0)
		return r;
	p.mdlen = c.len;
	hctx_free(&c);
	ahead = len >= HPN_HASH_PIECE_MIN &&
	    ahead_start(&a, &atid, fd, off, len) == 0;
	p.md = xcalloc(p.n, HPN_HASH_MD_MAX);
	p.done = xcalloc(p.n, sizeof(*p.done));
	if (pthread_mutex_init(&p.lock, NULL) != 0)
		fatal_f("pthread_mutex_init failed");
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	nt = MINIMUM(p.n, (u_int)MINIMUM(MAXIMUM(ncpu, 1), HPN_HASH_THREADS));
	/* the calling thread works too */
	for (i = 1; i < nt; i++) {
		if (pthread_create(&tid[started], NULL, pieces_work, &p) != 0)
			break;
		started++;
	}
	pieces_work(&p);
	for (i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	if (ahead) {
		atomic_store(&a.stop, 1);
		pthread_join(atid, NULL);
	}
	pthread_mutex_destroy(&p.lock);
	for (i = 0; i < p.n; i++)
		*done += p.done[i];
	free(p.done);
	if (p.err != 0) {
		free(p.md);
		*done = 0;
		return p.err;
	}
	*md = p.md;
	*n = p.n;
	*mdlen = p.mdlen;
	return 0;
}

/*
 * sftp-server: a hash-range request for id, its handle already read
 * (fd: that file's).  Composes the reply in msg and returns SSH2_FX_OK, or
 * returns the status to send instead.
 */
u_int
hpn_hash_range_reply(struct sshbuf *req, int fd, const char *name,
    u_int32_t id, struct sshbuf *msg)
{
	char *list = NULL;
	const char *alg;
	u_char *md;
	u_int mdlen, n, i;
	u_int32_t piece;
	u_int64_t off, len, done;
	size_t llen;
	int r;

	if ((r = sshbuf_get_cstring(req, &list, &llen)) != 0 ||
	    (r = sshbuf_get_u64(req, &off)) != 0 ||
	    (r = sshbuf_get_u64(req, &len)) != 0 ||
	    (r = sshbuf_get_u32(req, &piece)) != 0) {
		free(list);
		error_fr(r, "hash-range: parse");
		return SSH2_FX_BAD_MESSAGE;
	}
	if (llen > HASH_ALGS_MAX || len > HPN_HASH_RANGE_MAX ||
	    off > INT64_MAX - len ||
	    (piece != 0 && piece < HPN_HASH_PIECE_MIN && piece < len)) {
		error_f("hash-range \"%s\": request out of bounds "
		    "(%zu bytes of names, %llu bytes at %llu, pieces of %u)",
		    name, llen, (unsigned long long)len,
		    (unsigned long long)off, piece);
		free(list);
		return SSH2_FX_BAD_MESSAGE;
	}
	alg = hpn_hash_pick(list);
	free(list);
	if (alg == NULL)
		return SSH2_FX_OP_UNSUPPORTED;
	if ((r = hpn_hash_pieces(fd, alg, off, len, piece, &md, &n, &mdlen,
	    &done)) != 0) {
		error_f("hash-range \"%s\": %s", name, strerror(r));
		return r == EINVAL ? SSH2_FX_BAD_MESSAGE : SSH2_FX_FAILURE;
	}
	debug_f("\"%s\": %s of %llu bytes at %llu in %u pieces", name, alg,
	    (unsigned long long)done, (unsigned long long)off, n);
	if ((r = sshbuf_put_u8(msg, SSH2_FXP_EXTENDED_REPLY)) != 0 ||
	    (r = sshbuf_put_u32(msg, id)) != 0 ||
	    (r = sshbuf_put_cstring(msg, alg)) != 0 ||
	    (r = sshbuf_put_u64(msg, done)) != 0 ||
	    (r = sshbuf_put_u32(msg, n)) != 0)
		fatal_fr(r, "compose");
	for (i = 0; i < n; i++) {
		if ((r = sshbuf_put_string(msg, md + (size_t)i *
		    HPN_HASH_MD_MAX, mdlen)) != 0)
			fatal_fr(r, "compose");
	}
	free(md);
	return SSH2_FX_OK;
}
