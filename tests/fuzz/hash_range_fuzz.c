/*
 * Fuzz harness: hash-range@'s request as sftp-server hands it to our
 * code (hpn_hash_range_reply(), hpn-sftp-hash.c), its handle already
 * resolved: the algorithm list, offset, length and piece size, against
 * files of several kinds.
 *
 * Input: one byte choosing the handle's file (a 4099-byte file, one of
 * 1 MiB + 4 KiB whose pieces are hashed in parallel, an empty one, a
 * directory opened for reading, a file opened for writing only), then the
 * request from the algorithm list on, as the client sends it.
 *
 * Checked: the status is one sftp-server may send (OK, BAD_MESSAGE,
 * OP_UNSUPPORTED, FAILURE) and nothing is composed unless OK; an OK reply
 * names the first algorithm of the list we have, holds the number of
 * pieces the length and piece size make (at most HPN_HASH_PIECES_MAX),
 * says how many bytes it hashed (no more than asked), and each hash equals
 * that piece's hashed alone, sequentially; a request the server refuses
 * (out of bounds) is one the bounds refuse.
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xmalloc.h"
#include "sshbuf.h"
#include "ssherr.h"
#include "log.h"
#include "misc.h"
#include "sftp.h"
#include "hpn.h"

#include "fuzz-common.h"

int LLVMFuzzerInitialize(int *, char ***);
int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define NFILES	5
static int fds[NFILES];
static const char *names[NFILES] = {
	"file", "big", "empty", "dir", "write-only"
};

static int
memfile(const char *name, size_t data, off_t size)
{
	char buf[4099];
	size_t i;
	int fd;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (char)(i * 13 + i / 256);
	if ((fd = memfd_create(name, 0)) == -1)
		fz_bad("memfd_create: %s", strerror(errno));
	if (data > 0 && write(fd, buf, data) != (ssize_t)data)
		fz_bad("write: %s", strerror(errno));
	if (size > (off_t)data && ftruncate(fd, size) != 0)
		fz_bad("ftruncate: %s", strerror(errno));
	return fd;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char path[] = "/tmp/hash_range_fuzz.XXXXXX";
	u_char md[HPN_HASH_MD_MAX];
	u_int mdlen;
	u_int64_t done;

	(void)argc;
	(void)argv;
	fz_init("hash_range_fuzz");
	fds[0] = memfile("file", 4099, 0);
	fds[1] = memfile("big", 4096, 1024 * 1024 + 4096);
	fds[2] = memfile("empty", 0, 0);
	if ((fds[3] = open("/", O_RDONLY|O_DIRECTORY)) == -1)
		fz_bad("open /: %s", strerror(errno));
	if ((fds[4] = mkstemp(path)) == -1)
		fz_bad("mkstemp: %s", strerror(errno));
	unlink(path);		/* opened O_RDWR by mkstemp: reopen write-only */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[4]);
	{
		int w = open(path, O_WRONLY);

		if (w == -1)
			fz_bad("open %s: %s", path, strerror(errno));
		close(fds[4]);
		fds[4] = w;
	}
	/* what libcrypto sets up once (fuzz-common.h) */
	(void)hpn_hash_range(fds[0], "sha256", 0, 1, md, &mdlen, &done);
	(void)hpn_hash_range(fds[0], "blake2b512", 0, 1, md, &mdlen, &done);
	return 0;
}

/* The request as the server read it, for the checks. */
struct req {
	char *algs;
	size_t alen;
	u_int64_t off, len;
	u_int32_t piece;
	int whole;		/* all four fields there */
};

static void
check_ok(const struct req *q, int fd, struct sshbuf *m)
{
	u_char type, md[HPN_HASH_MD_MAX];
	const u_char *rmd;
	const char *want;
	char *alg = NULL;
	u_int64_t rdone, piece = q->piece, done, sum = 0, off;
	u_int32_t id, n, i;
	u_int mdlen;
	size_t rlen;
	int r;

	if (!q->whole)
		fz_bad("OK for a request cut short");
	if (q->alen > 256 || q->len > HPN_HASH_RANGE_MAX ||
	    q->off > INT64_MAX - q->len ||
	    (q->piece != 0 && q->piece < HPN_HASH_PIECE_MIN &&
	    q->piece < q->len))
		fz_bad("OK for a request out of bounds (%llu at %llu by %u)",
		    (unsigned long long)q->len, (unsigned long long)q->off,
		    q->piece);
	if (sshbuf_get_u8(m, &type) != 0 || type != SSH2_FXP_EXTENDED_REPLY ||
	    sshbuf_get_u32(m, &id) != 0 || id != 7 ||
	    sshbuf_get_cstring(m, &alg, NULL) != 0 ||
	    sshbuf_get_u64(m, &rdone) != 0 || sshbuf_get_u32(m, &n) != 0)
		fz_bad("reply malformed");
	if ((want = hpn_hash_pick(q->algs)) == NULL || strcmp(alg, want) != 0)
		fz_bad("%s for \"%s\"", alg, q->algs);
	if (piece == 0 || piece > q->len)
		piece = MAXIMUM(q->len, 1);
	if (n != (q->len == 0 ? 1 : (q->len + piece - 1) / piece) ||
	    n > HPN_HASH_PIECES_MAX)
		fz_bad("%u pieces for %llu bytes by %llu", n,
		    (unsigned long long)q->len, (unsigned long long)piece);
	for (i = 0; i < n; i++) {
		off = (u_int64_t)i * piece;
		if ((r = hpn_hash_range(fd, alg, q->off + off,
		    MINIMUM(q->len - MINIMUM(q->len, off), piece), md, &mdlen,
		    &done)) != 0)
			fz_bad("piece %u alone: %s", i, strerror(r));
		sum += done;
		if (sshbuf_get_string_direct(m, &rmd, &rlen) != 0 ||
		    rlen != mdlen || memcmp(rmd, md, mdlen) != 0)
			fz_bad("piece %u differs from its hash alone", i);
	}
	if (rdone != sum || rdone > q->len || sshbuf_len(m) != 0)
		fz_bad("%llu bytes said, %llu hashed, %llu asked",
		    (unsigned long long)rdone, (unsigned long long)sum,
		    (unsigned long long)q->len);
	free(alg);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sshbuf *req, *peek, *msg;
	struct req q;
	u_int status;
	int fd;

	if (size < 1)
		return 0;
	fd = fds[data[0] % NFILES];
	memset(&q, 0, sizeof(q));
	if ((req = sshbuf_from(data + 1, size - 1)) == NULL ||
	    (peek = sshbuf_from(data + 1, size - 1)) == NULL ||
	    (msg = sshbuf_new()) == NULL)
		fz_bad("sshbuf_new");
	q.whole = sshbuf_get_cstring(peek, &q.algs, &q.alen) == 0 &&
	    sshbuf_get_u64(peek, &q.off) == 0 &&
	    sshbuf_get_u64(peek, &q.len) == 0 &&
	    sshbuf_get_u32(peek, &q.piece) == 0;
	/* no fatal() on this path: a step that fails is a finding */
	if (FZ_STEP(status = hpn_hash_range_reply(req, fd,
	    names[data[0] % NFILES], 7, msg)))
		fz_bad("fatal() in hpn_hash_range_reply()");
	switch (status) {
	case SSH2_FX_OK:
		check_ok(&q, fd, msg);
		break;
	case SSH2_FX_BAD_MESSAGE:
	case SSH2_FX_OP_UNSUPPORTED:
	case SSH2_FX_FAILURE:
		if (sshbuf_len(msg) != 0)
			fz_bad("status %u with a reply composed", status);
		if (status == SSH2_FX_OP_UNSUPPORTED &&
		    (!q.whole || hpn_hash_pick(q.algs) != NULL))
			fz_bad("OP_UNSUPPORTED for \"%s\"", q.algs ? q.algs : "");
		break;
	default:
		fz_bad("status %u", status);
	}
	free(q.algs);
	sshbuf_free(req);
	sshbuf_free(peek);
	sshbuf_free(msg);
	return 0;
}
