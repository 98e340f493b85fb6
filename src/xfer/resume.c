/*
 * HPN patch set: verified resume (hpnscp -Z, hpnsftp reget, reput, -a).
 *
 * Upstream's resume appends to whatever the destination holds, by its size
 * alone: a partial file with a wrong byte stays wrong.  Here, before the
 * rest is sent, the destination's content is compared with the same-length
 * prefix of the source by hashes: the server's copy through the
 * hash-range@hpn-patch-set.invalid extension (hpn-sftp-hash.c), ours
 * locally, in pieces of HPN_HASH_RANGE_MAX that the server works on while
 * we hash ours.  For each file, one line says what applies:
 *  - the destination is missing or empty: the whole file, silently;
 *  - it matches and is complete: nothing is sent;
 *  - it matches and is shorter: the rest is sent;
 *  - it differs, or is longer than the source: the whole file is sent
 *    again (the destination is emptied first);
 *  - the server cannot hash (stock sftp-servers): the whole file is sent
 *    again, unless the user accepted a size-only append (hpnscp -ZZ,
 *    hpnsftp get -aa or reget -a and the same for put), which is then
 *    upstream's resume and says that it is not verified.
 * The transfer engine (hpn-sftp-xfer.c) then moves the rest of a single
 * file from there, over -n connections too (hpn_sftp_resume_plan_get/put,
 * before its run); upstream's download and upload code does it for trees
 * and where the engine is not used (-l, put with fsync).
 */

#include "includes.h"

#include <sys/types.h>
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
#include "sftp-common.h"

#include "hpn.h"
#include "hpn-sftp-xfer.h"

#define PIECES_OUT	4	/* hash requests the server works through */
#define PIECE		(8 * 1024 * 1024)	/* bytes per hash: 8 a request */

enum { SAME = 1, DIFFER = 0, FAILED = -1, NO_HASH = -2 };

static const char *
fmt_bytes(char *buf, size_t len, u_int64_t n)
{
	if (n >= 10ULL * 1024 * 1024 * 1024)
		snprintf(buf, len, "%.1f GiB", (double)n / (1 << 30));
	else if (n >= 10ULL * 1024 * 1024)
		snprintf(buf, len, "%.1f MiB", (double)n / (1 << 20));
	else
		snprintf(buf, len, "%llu bytes", (unsigned long long)n);
	return buf;
}

static u_int
send_hash(struct hpn_sftp *h, const u_char *handle, size_t hlen,
    u_int64_t off, u_int64_t len)
{
	struct sshbuf *b;
	u_int id = hpn_sftp_next_id(h);
	int r;

	if ((b = sshbuf_new()) == NULL)
		fatal_f("sshbuf_new failed");
	if ((r = sshbuf_put_u8(b, SSH2_FXP_EXTENDED)) != 0 ||
	    (r = sshbuf_put_u32(b, id)) != 0 ||
	    (r = sshbuf_put_cstring(b, HPN_HASH_EXT)) != 0 ||
	    (r = sshbuf_put_string(b, handle, hlen)) != 0 ||
	    (r = sshbuf_put_cstring(b, hpn_sftp_hash_offer())) != 0 ||
	    (r = sshbuf_put_u64(b, off)) != 0 ||
	    (r = sshbuf_put_u64(b, len)) != 0 ||
	    (r = sshbuf_put_u32(b, PIECE)) != 0)
		fatal_fr(r, "compose");
	hpn_sftp_send(h, b);
	sshbuf_free(b);
	return id;
}

/* Our hashes of the range [off, off + want) of lfd with alg: 0, or -1. */
static int
hash_local(int lfd, const char *alg, u_int64_t off, u_int64_t want,
    const char *name, u_char **md, u_int *n, u_int *mdlen, double *here)
{
	u_int64_t done;
	double t = monotime_double();
	int r;

	free(*md);
	*md = NULL;
	r = hpn_hash_pieces(lfd, alg, off, want, PIECE, md, n, mdlen, &done);
	*here += monotime_double() - t;
	if (r != 0) {
		error("hash local \"%s\": %s", name, strerror(r));
		return -1;
	}
	if (done != want)	/* a short file: it differs there */
		*n = 0;
	return 0;
}

/*
 * Are the first len bytes of the remote file (handle) and of the local
 * file lfd the same?  SAME, DIFFER, NO_HASH (the server has not the
 * extension or none of our algorithms), FAILED (said).  *alg: the
 * algorithm used.  Ranges of HPN_HASH_RANGE_MAX, PIECES_OUT of them asked
 * ahead, each hashed in PIECE pieces at both ends at once.
 */
static int
same_prefix(struct hpn_sftp *h, const u_char *handle, size_t hlen, int lfd,
    u_int64_t len, const char *name, char *alg, size_t alglen)
{
	struct sshbuf *m;
	u_int *ids, n, sent = 0, got, id, status, mdlen = 0, np = 0, rn, i;
	u_int64_t off, want, rdone;
	u_char type, *md = NULL, *rmd;
	char *ralg = NULL, lenbuf[32], lalg[32];
	size_t rmdlen;
	double start = monotime_double(), here = 0;
	int r, ret = SAME;

	*alg = '\0';
	if (!hpn_sftp_can_hash(h))
		return NO_HASH;
	n = (len + HPN_HASH_RANGE_MAX - 1) / HPN_HASH_RANGE_MAX;
	ids = xcalloc(n, sizeof(*ids));
	if ((m = sshbuf_new()) == NULL)
		fatal_f("sshbuf_new failed");
	for (got = 0; got < n; got++) {
		/* keep the server busy while we hash our range */
		while (ret == SAME && sent < n && sent < got + PIECES_OUT) {
			off = (u_int64_t)sent * HPN_HASH_RANGE_MAX;
			ids[sent] = send_hash(h, handle, hlen, off,
			    MINIMUM(len - off, HPN_HASH_RANGE_MAX));
			sent++;
		}
		if (got >= sent)
			break;		/* stopped early: all drained */
		off = (u_int64_t)got * HPN_HASH_RANGE_MAX;
		want = MINIMUM(len - off, HPN_HASH_RANGE_MAX);
		/* ours first, with our first choice until the server's is known */
		strlcpy(lalg, *alg != '\0' ? alg :
		    hpn_hash_pick(hpn_sftp_hash_offer()), sizeof(lalg));
		if (ret == SAME && hash_local(lfd, lalg, off, want, name, &md,
		    &np, &mdlen, &here) != 0)
			ret = FAILED;
		hpn_sftp_recv(h, m);
		if ((r = sshbuf_get_u8(m, &type)) != 0 ||
		    (r = sshbuf_get_u32(m, &id)) != 0)
			fatal_fr(r, "parse");
		if (id != ids[got])
			fatal("ID mismatch (%u != %u)", id, ids[got]);
		if (ret != SAME)
			continue;	/* draining after a decision */
		if (type == SSH2_FXP_STATUS) {
			if ((r = sshbuf_get_u32(m, &status)) != 0)
				fatal_fr(r, "parse status");
			if (status == SSH2_FX_OP_UNSUPPORTED && got == 0) {
				debug_f("\"%s\": the server has none of %s",
				    name, hpn_sftp_hash_offer());
				ret = NO_HASH;
			} else {
				error("hash remote \"%s\": %s", name,
				    fx2txt(status));
				ret = FAILED;
			}
			continue;
		}
		if (type != SSH2_FXP_EXTENDED_REPLY)
			fatal("Expected SSH2_FXP_EXTENDED_REPLY(%u) packet, "
			    "got %u", SSH2_FXP_EXTENDED_REPLY, type);
		free(ralg);
		ralg = NULL;
		if ((r = sshbuf_get_cstring(m, &ralg, NULL)) != 0 ||
		    (r = sshbuf_get_u64(m, &rdone)) != 0 ||
		    (r = sshbuf_get_u32(m, &rn)) != 0)
			fatal_fr(r, "parse hash reply");
		if (!hpn_sftp_hash_offered(ralg) || rn > HPN_HASH_PIECES_MAX ||
		    (*alg != '\0' && strcmp(alg, ralg) != 0)) {
			error("hash remote \"%s\": a reply we cannot use "
			    "(algorithm \"%s\", %u pieces)", name, ralg, rn);
			ret = FAILED;
			continue;
		}
		strlcpy(alg, ralg, alglen);
		if (strcmp(lalg, alg) != 0 && hash_local(lfd, alg, off, want,
		    name, &md, &np, &mdlen, &here) != 0) {
			ret = FAILED;	/* not our first choice, and failed */
			continue;
		}
		/* a short range at either end: the files differ there */
		if (rdone != want || np == 0 || rn != np)
			ret = DIFFER;
		for (i = 0; i < rn; i++) {
			if ((r = sshbuf_get_string_direct(m,
			    (const u_char **)&rmd, &rmdlen)) != 0)
				fatal_fr(r, "parse hash");
			if (ret == SAME && (mdlen == 0 || rmdlen != mdlen ||
			    timingsafe_bcmp(md + (size_t)i * HPN_HASH_MD_MAX,
			    rmd, mdlen) != 0))
				ret = DIFFER;
		}
		if (sshbuf_len(m) != 0) {
			error("hash remote \"%s\": a reply we cannot use "
			    "(trailing data)", name);
			ret = FAILED;
		}
		if (ret == DIFFER)
			debug_f("\"%s\": differs in %llu bytes at %llu",
			    name, (unsigned long long)want,
			    (unsigned long long)off);
	}
	if (ret == SAME || ret == DIFFER)
		verbose("%s: %s of %s compared in %.2f s (%.2f s of it "
		    "hashing here)", name, alg, fmt_bytes(lenbuf,
		    sizeof(lenbuf), len), monotime_double() - start, here);
	free(ralg);
	free(md);
	free(ids);
	sshbuf_free(m);
	return ret;
}

/*
 * How much of a local destination of size bytes (lfd) to compare: up to its
 * first hole.  A copy over several connections (-n) writes its parts at
 * their offsets, so one killed before it could truncate leaves the parts'
 * beginnings with unwritten gaps between them; what follows the first gap
 * is sent again.  Elsewhere (no holes, or no SEEK_HOLE): all of it.
 */
static u_int64_t
contiguous(int lfd, const char *dst, u_int64_t size)
{
#ifdef SEEK_HOLE
	off_t hole;
	char b1[32], b2[32];

	if ((hole = lseek(lfd, 0, SEEK_HOLE)) == -1 || hole < 0 ||
	    (u_int64_t)hole >= size)
		return size;
	logit("%s: %s there, written up to a gap at %s (an interrupted copy "
	    "in parts): what follows it is sent again", dst,
	    fmt_bytes(b1, sizeof(b1), size),
	    fmt_bytes(b2, sizeof(b2), (u_int64_t)hole));
	return (u_int64_t)hole;
#else
	return size;
#endif
}

/*
 * What to do with a destination of have bytes for a source of want:
 * *from, where to start sending (0 below have: the destination is sent
 * whole, emptied first).  lfd: the local copy (the destination of a
 * download, the source of an upload), readable.  -1: an error, said.
 */
static int
plan(struct hpn_sftp *h, const u_char *handle, size_t hlen, int lfd,
    const char *dst, u_int64_t have, u_int64_t want, int mode,
    u_int64_t *from)
{
	char alg[32], b1[32], b2[32];

	*from = 0;
	if (have == 0)
		return 0;
	if (have > want) {
		logit("%s: longer than the source (%llu > %llu bytes): "
		    "sending it whole", dst, (unsigned long long)have,
		    (unsigned long long)want);
		return 0;
	}
	switch (same_prefix(h, handle, hlen, lfd, have, dst, alg,
	    sizeof(alg))) {
	case SAME:
		*from = have;
		if (have == want)
			logit("%s: already complete (%s of all %s "
			    "matches): skipped", dst, alg,
			    fmt_bytes(b1, sizeof(b1), have));
		else
			logit("%s: %s of the %s there matches: resuming "
			    "at %llu, %s to send", dst, alg,
			    fmt_bytes(b1, sizeof(b1), have),
			    (unsigned long long)have,
			    fmt_bytes(b2, sizeof(b2), want - have));
		return 0;
	case DIFFER:
		logit("%s: the %s there differ from the source (%s): "
		    "sending it whole", dst, fmt_bytes(b1, sizeof(b1), have),
		    alg);
		return 0;
	case NO_HASH:
		if (mode >= HPN_RESUME_BY_SIZE) {
			*from = have;
			logit("%s: the server cannot hash ranges: appending "
			    "at %llu by size alone (not verified)", dst,
			    (unsigned long long)have);
		} else {
			logit("%s: the server cannot hash ranges (not an HPN "
			    "sftp-server), so the %s there cannot be "
			    "verified: sending it whole", dst,
			    fmt_bytes(b1, sizeof(b1), have));
		}
		return 0;
	default:
		return -1;
	}
}

/*
 * plan() for a download: the local destination dst (have bytes) read up
 * to its first hole.  -1: an error, said.
 */
static int
plan_local(struct hpn_sftp *h, const u_char *handle, size_t hlen,
    const char *dst, u_int64_t have, u_int64_t want, int mode,
    u_int64_t *from)
{
	int lfd, r;

	if ((lfd = open(dst, O_RDONLY)) == -1) {
		error("open local \"%s\": %s", dst, strerror(errno));
		return -1;
	}
	r = plan(h, handle, hlen, lfd, dst, contiguous(lfd, dst, have), want,
	    mode, from);
	close(lfd);
	return r;
}

/*
 * sftp_download() with resume: handle is the source's (want bytes),
 * local_fd the destination, open for writing, of *have bytes.  On return
 * *have is where the download is to start: 0 (the destination emptied)
 * up to want (nothing left to fetch).  -1: an error, said.
 */
int
hpn_sftp_resume_get(struct hpn_sftp *h, const u_char *handle, size_t hlen,
    const char *dst, int local_fd, u_int64_t want, int mode, off_t *have)
{
	u_int64_t from;

	if (h == NULL || *have <= 0)
		return 0;
	if (plan_local(h, handle, hlen, dst, (u_int64_t)*have, want, mode,
	    &from) != 0)
		return -1;
	/* sent whole: nothing of what was there may stay */
	if (from == 0 && ftruncate(local_fd, 0) == -1) {
		error("local ftruncate \"%s\": %s", dst, strerror(errno));
		return -1;
	}
	*have = (off_t)from;
	return 0;
}

/*
 * sftp_upload() with resume: local_fd is the source (want bytes), dst
 * the remote destination.  On return *have is where the upload is to
 * start: 0 (the whole file, dst truncated or created) up to want
 * (nothing left to send).  -1: an error, said.
 */
int
hpn_sftp_resume_put(struct hpn_sftp *h, int local_fd, const char *dst,
    u_int64_t want, int mode, u_int64_t *have)
{
	u_char *handle = NULL;
	size_t hlen;
	u_int status;
	u_int64_t size, from;
	int r;

	*have = 0;
	if (h == NULL)
		return 0;
	r = hpn_sftp_open_read(h, dst, &handle, &hlen, &size, &status);
	if (r != 0) {
		if (status == SSH2_FX_NO_SUCH_FILE)
			return 0;	/* not there yet: all of it */
		logit("%s: cannot be read back (%s): sending it whole", dst,
		    fx2txt(status));
		return 0;
	}
	r = plan(h, handle, hlen, local_fd, dst, size, want, mode, &from);
	hpn_sftp_close_handle(h, handle, hlen);
	free(handle);
	if (r != 0)
		return -1;
	*have = from;
	return 0;
}

/*
 * The engine's resume of a download of src to dst, planned before its run
 * (nothing else is in flight on h then): *from, where the reads are to
 * start, 0 for the whole file (also when src cannot be opened: the
 * engine's own OPEN then says why).  -1: an error, said.
 */
int
hpn_sftp_resume_plan_get(struct hpn_sftp *h, const char *src,
    const char *dst, int mode, u_int64_t *from)
{
	struct stat sb;
	u_char *handle = NULL;
	size_t hlen;
	u_int status;
	u_int64_t want;
	int r;

	*from = 0;
	if (stat(dst, &sb) == -1 || !S_ISREG(sb.st_mode) || sb.st_size <= 0)
		return 0;	/* nothing there to keep */
	if (hpn_sftp_open_read(h, src, &handle, &hlen, &want, &status) != 0)
		return 0;
	r = plan_local(h, handle, hlen, dst, (u_int64_t)sb.st_size, want,
	    mode, from);
	hpn_sftp_close_handle(h, handle, hlen);
	free(handle);
	return r;
}

/*
 * The same for an upload of src to dst: *from, where the writes start.
 * A source that cannot be read: 0 (the engine says why).
 */
int
hpn_sftp_resume_plan_put(struct hpn_sftp *h, const char *src,
    const char *dst, int mode, u_int64_t *from)
{
	struct stat sb;
	int lfd, r;

	*from = 0;
	if ((lfd = open(src, O_RDONLY)) == -1)
		return 0;
	if (fstat(lfd, &sb) == -1 || !S_ISREG(sb.st_mode)) {
		close(lfd);
		return 0;
	}
	r = hpn_sftp_resume_put(h, lfd, dst, (u_int64_t)sb.st_size, mode,
	    from);
	close(lfd);
	return r;
}
