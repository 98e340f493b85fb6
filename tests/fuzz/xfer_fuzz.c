/*
 * Fuzz harness: the SFTP transfer engine (src/xfer/) fed a server's
 * replies.
 *
 * The engine runs as hpnscp and hpnsftp run it, on a fake connection: a
 * socketpair whose other end a responder thread serves.  The responder
 * reads every request the engine sends and answers it as the input says:
 * as a correct server would (a handle, data up to a size, attributes, a
 * listing, a status OK), or with any status, another reply type with a
 * body of its own, raw bytes, an id not waiting for one, the reply twice,
 * cut short, late (behind the next one), data of any length, names of
 * any kind, or the connection closed.  Once the input runs out it answers
 * correctly, so that every run ends.
 *
 * The input's first bytes choose the transfer: get of a file, get -r,
 * put, put -r, verified resume either way (a partial destination there
 * already), and -n 2 either way (lanes.c is replaced here by a second fake
 * connection, on its own responder: the input's second half), each with
 * or without the requests that ride with INIT (early.c), -p and inplace,
 * toward a server that takes handle references or not, that lists trees
 * (tree@: every listing then names paths below it, with flags) or not.
 * A run that ends in fatal() (the first connection broken, as upstream
 * would end) is a step that ended (fuzz-common.h).  The engine's clock is
 * the harness's: it moves a millisecond at every look.
 *
 * Checked after every run: nothing was written outside the download
 * target, the local sources are unchanged, and the descriptors opened are
 * closed again; the sanitizers and LeakSanitizer do the rest.  The
 * responder uses no memory of the heap (its allocations would be counted
 * as the step's).
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "openbsd-compat/sys-queue.h"
#include "openbsd-compat/sys-tree.h"

#include "xmalloc.h"
#include "sshbuf.h"
#include "log.h"
#include "misc.h"

#include "sftp.h"
#include "sftp-common.h"
#include "sftp-client.h"

#include "hpn.h"
#include "xfer/xfer.h"

#include "fuzz-common.h"

/* what sftp.c and scp.c define */
volatile sig_atomic_t interrupted;
int showprogress;

/* ------------------------------------------------------------------ */
/* lanes.c, replaced: -n 2's second connection is ours */

static struct hpn_sftp *lane_h, *lane_list[1];
static u_int lane_ids;

int
hpn_sftp_lanes_parse(const char *s)
{
	return 0;
}

void
hpn_sftp_lanes_cmd(char * const *argv)
{
}

void
hpn_sftp_lanes_ssh(char * const *base, const char *program,
    const char *host, const char *user, int port)
{
}

void
hpn_sftp_lanes_go(void)
{
}

u_int
hpn_sftp_lanes(struct hpn_sftp *main, struct hpn_sftp ***hp)
{
	lane_list[0] = lane_h;
	*hp = lane_list;
	return lane_h != NULL;
}

u_int
lanes_wanted(void)
{
	return lane_h != NULL ? 2 : 1;
}

u_int
hpn_sftp_lanes_poll(struct hpn_sftp *main, struct hpn_sftp **fresh,
    u_int max)
{
	return 0;
}

u_int
hpn_sftp_lanes_waiting(struct hpn_sftp *main, int *fds)
{
	return 0;
}

void
hpn_sftp_lanes_lost(struct hpn_sftp *h)
{
	if (h == lane_h) {
		conn_free(h);
		lane_h = NULL;
	}
}

void
hpn_sftp_lanes_forget(struct hpn_sftp *h)
{
}

/* ------------------------------------------------------------------ */
/*
 * The engine's clock (linked with --wrap=monotime_double): a millisecond
 * more at every look, from the same start each run.  The connections'
 * round trip and their tuning every 50 ms (budget.c) then come with the
 * engine's steps, the same steps each time, not with how long a run took
 * on a loaded machine: a run on the real clock reached the tuning only if
 * it moved megabytes.
 */
#define CLOCK_START	1000.0
#define CLOCK_STEP	0.001
static double clock_now;

double	__wrap_monotime_double(void);

double
__wrap_monotime_double(void)
{
	return clock_now += CLOCK_STEP;
}

/* ------------------------------------------------------------------ */
/* the responder: a server whose replies the input chooses */

#define RBUF	(1024 * 1024)
#define MAXREQ	(300 * 1024)
/*
 * A file's data, at most: with -n 2, enough for several parts and for the
 * connections' budgets to be tuned round trip after round trip
 * (lanes_tune(), steal_pick(); with the harness's clock a tuning comes
 * every 50 looks at it, not after megabytes: 1 MiB reaches the edges that
 * 4 MiB did, at a sixth less CPU); with one connection, whose budget is
 * set once, half of that (at 128 KiB no faster).
 */
#define DATA_MAX_LANES	(1024 * 1024)
#define DATA_MAX_ONE	(512 * 1024)
/*
 * ... and in this many DATA replies on a connection: after a short read
 * the engine asks 512 bytes at a time (upstream's MIN_READ_SIZE), and 4 MiB
 * so took 8,192 round trips a connection, a third of a second a run (46
 * inputs of 1,228 were half of the corpus's CPU time).  Past it the file
 * ends where the next READ asks.
 */
#define DATA_REPLIES_MAX	512

struct resp {
	int fd;
	struct fz_in in;
	pthread_t thread;
	u_char ibuf[RBUF];
	size_t ilen;
	u_char obuf[RBUF];
	size_t olen;
	u_char held[MAXREQ + 64];	/* a reply sent late ... */
	size_t hlen;
	int hold;			/* ... the next emit() keeps it */
	u_int handles;
	u_int listed;			/* READDIRs answered with names */
	u_int64_t size;			/* the files' size, as it says */
	u_int64_t data_max;		/* ... which ends here all the same */
	u_int ndata;			/* DATA replies sent */
	int dirs;			/* get -r: paths are directories */
	int tree;			/* the server lists trees (tree@) */
	int hangup;
	int started, go, done;		/* its thread: resp_start(), _wait() */
};

static struct resp resp[2];

static void
resp_reset(struct resp *r)
{
	r->fd = -1;
	memset(&r->in, 0, sizeof(r->in));
	r->ilen = r->olen = r->hlen = 0;
	r->hold = 0;
	r->handles = r->listed = 0;
	r->size = r->data_max = 0;
	r->ndata = 0;
	r->dirs = r->hangup = r->tree = 0;
}

/*
 * Make room in r's output: write until there is, reading what comes in
 * meanwhile (the engine may be writing a batch of requests and not
 * reading).  0, or -1: the connection is gone.
 */
static int
drain(struct resp *r, size_t need)
{
	struct pollfd pfd;
	ssize_t n;

	while (r->olen + need > sizeof(r->obuf)) {
		pfd.fd = r->fd;
		pfd.events = POLLOUT |
		    (r->ilen < sizeof(r->ibuf) ? POLLIN : 0);
		if (poll(&pfd, 1, 20000) <= 0)
			return -1;
		if (pfd.revents & POLLOUT) {
			if ((n = write(r->fd, r->obuf, r->olen)) > 0) {
				memmove(r->obuf, r->obuf + n, r->olen - n);
				r->olen -= n;
			} else if (n == -1 && errno != EAGAIN &&
			    errno != EINTR)
				return -1;
		}
		if ((pfd.revents & POLLIN) && r->ilen < sizeof(r->ibuf)) {
			n = read(r->fd, r->ibuf + r->ilen,
			    sizeof(r->ibuf) - r->ilen);
			if (n == 0 || (n == -1 && errno != EAGAIN &&
			    errno != EINTR))
				return -1;
			if (n > 0)
				r->ilen += n;
		}
	}
	return 0;
}

static void
put32(u_char *p, u_int32_t v)
{
	POKE_U32(p, v);
}

/* Append a reply (type, id, body) to r's output, or to held. */
static void
emit(struct resp *r, u_char type, u_int32_t id, const u_char *body,
    size_t blen)
{
	u_char *o;
	size_t need = 9 + blen;

	if (blen > MAXREQ)
		blen = MAXREQ, need = 9 + blen;
	if (r->hold) {
		if (need > sizeof(r->held))
			return;
		o = r->held;
		r->hlen = need;
		r->hold = 0;
	} else {
		if (drain(r, need) != 0) {
			r->hangup = 1;
			return;
		}
		o = r->obuf + r->olen;
		r->olen += need;
	}
	put32(o, (u_int32_t)(need - 4));
	o[4] = type;
	put32(o + 5, id);
	if (blen > 0)
		memcpy(o + 9, body, blen);
}

static void
flush_held(struct resp *r)
{
	if (r->hlen == 0 || drain(r, r->hlen) != 0)
		return;
	memcpy(r->obuf + r->olen, r->held, r->hlen);
	r->olen += r->hlen;
	r->hlen = 0;
}

/* A string of the request at *off (its length first); NULL: none. */
static const u_char *
rstr(const u_char *q, size_t qlen, size_t *off, u_int32_t *len)
{
	const u_char *s;

	if (*off + 4 > qlen)
		return NULL;
	*len = PEEK_U32(q + *off);
	if (*len > qlen - *off - 4)
		return NULL;
	s = q + *off + 4;
	*off += 4 + *len;
	return s;
}

/* Attributes of a file (or a directory) of size, into b: its length. */
static size_t
attrs(u_char *b, u_int64_t size, int dir)
{
	put32(b, SSH2_FILEXFER_ATTR_SIZE | SSH2_FILEXFER_ATTR_PERMISSIONS |
	    SSH2_FILEXFER_ATTR_ACMODTIME);
	POKE_U64(b + 4, size);
	put32(b + 12, dir ? 040755 : 0100644);
	put32(b + 16, 1700000000);
	put32(b + 20, 1700000000);
	return 24;
}

static size_t
name1(u_char *b, const char *name, u_int64_t size, int dir)
{
	size_t n = strlen(name), o = 0;

	put32(b + o, n);
	memcpy(b + o + 4, name, n);
	o += 4 + n;
	put32(b + o, n);
	memcpy(b + o + 4, name, n);
	o += 4 + n;
	return o + attrs(b + o, size, dir);
}

static u_char body[MAXREQ + 64];

/*
 * A READDIR where the server lists trees (tree@): names of one to three
 * components ("d0", "f1", "..", "" among them) with the flags "d", "" or
 * others, directories or files, as the input says; three replies of names
 * at most, then EOF.  Every READDIR is answered so, the top's own (an
 * OPENDIR's) too, where such names are suspect.
 */
static void
tree_names(struct resp *r, u_int32_t id)
{
	static const char *comp[] = { "d0", "d1", "f2", "..", "", "." };
	static const char *flags[] = { "d", "", "d", "x" };
	u_int8_t k = 3, c, i, j, nc;
	size_t o, n;
	char nm[64];

	if (r->listed++ >= 3) {
		put32(body, SSH2_FX_EOF);
		put32(body + 4, 0);
		put32(body + 8, 0);
		emit(r, SSH2_FXP_STATUS, id, body, 12);
		return;
	}
	(void)fz_u8(&r->in, &k);
	k %= 8;
	put32(body, k);
	for (i = 0, o = 4; i < k; i++) {
		c = (u_int8_t)(i * 37);
		(void)fz_u8(&r->in, &c);
		nc = c % 3 + 1;
		nm[0] = '\0';
		for (j = 0; j < nc; j++) {
			if (j > 0)
				strlcat(nm, "/", sizeof(nm));
			strlcat(nm, comp[(c >> (2 + j)) % 6], sizeof(nm));
		}
		n = strlen(nm);
		put32(body + o, n);
		memcpy(body + o + 4, nm, n);
		o += 4 + n;
		n = strlen(flags[(c >> 5) & 3]);
		put32(body + o, n);
		memcpy(body + o + 4, flags[(c >> 5) & 3], n);
		o += 4 + n;
		o += attrs(body + o, r->size, (c & 0x80) || ((c >> 5) & 3) == 0);
	}
	emit(r, SSH2_FXP_NAME, id, body, o);
}

/* The reply a correct server gives to request q (type t, id id). */
static void
sane(struct resp *r, u_char t, u_int32_t id, const u_char *q, size_t qlen)
{
	size_t off = 0, o;
	u_int32_t len, n;
	u_int64_t roff, end;
	const u_char *s;
	u_int8_t k, i, c;
	char nm[32];

	switch (t) {
	case SSH2_FXP_OPEN:
	case SSH2_FXP_OPENDIR:
		put32(body, 4);
		put32(body + 4, r->handles++);
		emit(r, SSH2_FXP_HANDLE, id, body, 8);
		return;
	case SSH2_FXP_READ:
		if (rstr(q, qlen, &off, &n) == NULL || off + 12 > qlen)
			break;
		roff = PEEK_U64(q + off);
		len = PEEK_U32(q + off + 8);
		/* a file said to be 2^64 bytes ends at data_max all the same */
		if (r->ndata == DATA_REPLIES_MAX) {
			r->data_max = MINIMUM(r->data_max, roff);
			r->ndata++;	/* once: gaps below are still served */
		}
		end = MINIMUM(r->size, r->data_max);
		if (roff >= end) {
			put32(body, SSH2_FX_EOF);
			put32(body + 4, 0);
			put32(body + 8, 0);
			emit(r, SSH2_FXP_STATUS, id, body, 12);
			return;
		}
		if (len > end - roff)
			len = end - roff;
		if (len > MAXREQ - 4)
			len = MAXREQ - 4;
		put32(body, len);
		memset(body + 4, (int)(roff & 0xff), len);
		r->ndata++;
		emit(r, SSH2_FXP_DATA, id, body, 4 + len);
		return;
	case SSH2_FXP_STAT:
	case SSH2_FXP_LSTAT:
	case SSH2_FXP_FSTAT:
		emit(r, SSH2_FXP_ATTRS, id, body, attrs(body, r->size,
		    r->dirs && (s = rstr(q, qlen, &off, &n)) != NULL &&
		    memmem(s, n, "dir", 3) != NULL));
		return;
	case SSH2_FXP_REALPATH:
		if ((s = rstr(q, qlen, &off, &n)) == NULL || n > 200)
			break;
		put32(body, 1);
		memcpy(nm, "/r", 3);
		o = 4 + name1(body + 4, n > 0 && *s == '/' ? "/r/dir" : nm,
		    0, 1);
		emit(r, SSH2_FXP_NAME, id, body, o);
		return;
	case SSH2_FXP_READDIR:
		if (r->tree) {
			tree_names(r, id);
			return;
		}
		if (r->listed++ > 0) {
			put32(body, SSH2_FX_EOF);
			put32(body + 4, 0);
			put32(body + 8, 0);
			emit(r, SSH2_FXP_STATUS, id, body, 12);
			return;
		}
		k = 3;
		(void)fz_u8(&r->in, &k);
		k %= 6;
		put32(body, k);
		for (i = 0, o = 4; i < k; i++) {
			c = (u_int8_t)i;
			(void)fz_u8(&r->in, &c);
			switch (c % 8) {
			case 0:
				snprintf(nm, sizeof(nm), "dir%u", i);
				break;
			case 1:
				snprintf(nm, sizeof(nm), "..");
				break;
			case 2:
				snprintf(nm, sizeof(nm), "a/b");
				break;
			case 3:
				nm[0] = '\0';
				break;
			default:
				snprintf(nm, sizeof(nm), "f%u", c % 4);
				break;
			}
			o += name1(body + o, nm, r->size, c % 8 == 0);
		}
		emit(r, SSH2_FXP_NAME, id, body, o);
		return;
	case SSH2_FXP_EXTENDED:
		if ((s = rstr(q, qlen, &off, &n)) == NULL)
			break;
		if (n == 18 && memcmp(s, "limits@openssh.com", 18) == 0) {
			POKE_U64(body, 262144);
			POKE_U64(body + 8, 32768);
			POKE_U64(body + 16, 32768);
			POKE_U64(body + 24, 16);
			emit(r, SSH2_FXP_EXTENDED_REPLY, id, body, 32);
			return;
		}
		if (n == strlen(HPN_TREE_EXT) &&
		    memcmp(s, HPN_TREE_EXT, n) == 0) {
			put32(body, 4);
			put32(body + 4, r->handles++);
			emit(r, SSH2_FXP_HANDLE, id, body, 8);
			return;
		}
		if (n == strlen(HPN_HASH_EXT) &&
		    memcmp(s, HPN_HASH_EXT, n) == 0) {
			/* an algorithm, bytes done, hashes: of nothing */
			put32(body, 6);
			memcpy(body + 4, "sha256", 6);
			POKE_U64(body + 10, 0);
			put32(body + 18, 0);
			emit(r, SSH2_FXP_EXTENDED_REPLY, id, body, 22);
			return;
		}
		put32(body, SSH2_FX_OP_UNSUPPORTED);
		put32(body + 4, 0);
		put32(body + 8, 0);
		emit(r, SSH2_FXP_STATUS, id, body, 12);
		return;
	case SSH2_FXP_INIT:
		put32(body, SSH2_FILEXFER_VERSION);
		emit(r, SSH2_FXP_VERSION, 0, body, 4);
		return;
	}
	put32(body, SSH2_FX_OK);
	put32(body + 4, 0);
	put32(body + 8, 0);
	emit(r, SSH2_FXP_STATUS, id, body, 12);
}

/* The reply the input chooses for request q. */
static void
answer(struct resp *r, const u_char *q, size_t qlen)
{
	u_char t = q[0];
	u_int32_t id = qlen >= 5 ? PEEK_U32(q + 1) : 0, v;
	u_int8_t op = 0, b;
	u_int16_t w;
	const u_int8_t *p;
	size_t n, was;
	static const u_char types[] = { SSH2_FXP_STATUS, SSH2_FXP_HANDLE,
	    SSH2_FXP_DATA, SSH2_FXP_NAME, SSH2_FXP_ATTRS,
	    SSH2_FXP_EXTENDED_REPLY, SSH2_FXP_VERSION, 0 };

	if (t == SSH2_FXP_INIT || fz_u8(&r->in, &op) != 0) {
		sane(r, t, id, q + 5, qlen > 5 ? qlen - 5 : 0);
		return;
	}
	q += 5;
	qlen = qlen > 5 ? qlen - 5 : 0;
	switch (op % 16) {
	case 4:		/* any status */
		b = 0;
		(void)fz_u8(&r->in, &b);
		put32(body, b % 12);
		put32(body + 4, 0);
		put32(body + 8, 0);
		emit(r, SSH2_FXP_STATUS, id, body, 12);
		return;
	case 5:		/* another type, a correct body of its own */
		b = 0;
		(void)fz_u8(&r->in, &b);
		was = r->olen;
		sane(r, b % 2 ? SSH2_FXP_STAT : SSH2_FXP_OPEN, id, q, qlen);
		if (r->olen > was)
			r->obuf[was + 4] = types[(b / 2) % sizeof(types)];
		return;
	case 6:		/* raw bytes */
		b = 0;
		(void)fz_u8(&r->in, &b);
		if (fz_bytes(&r->in, MAXREQ, &p, &n) != 0)
			n = 0, p = NULL;
		emit(r, b, id, p, n);
		return;
	case 7:		/* an id not waiting for one */
		v = 0;
		(void)fz_u32(&r->in, &v);
		sane(r, t, v, q, qlen);
		return;
	case 8:		/* twice */
		sane(r, t, id, q, qlen);
		sane(r, t, id, q, qlen);
		return;
	case 9:		/* cut short */
		was = r->olen;
		sane(r, t, id, q, qlen);
		w = 0;
		(void)fz_u16(&r->in, &w);
		if (r->olen > was && r->olen - was > 5 + (size_t)w % 64) {
			n = 5 + (size_t)w % 64;
			r->olen = was + 4 + n;
			put32(r->obuf + was, (u_int32_t)n);
		}
		return;
	case 10:	/* data of any length */
		w = 0;
		(void)fz_u16(&r->in, &w);
		n = (size_t)w * 8;
		if (n > MAXREQ - 4)
			n = MAXREQ - 4;
		put32(body, n);
		memset(body + 4, 'x', n);
		emit(r, SSH2_FXP_DATA, id, body, 4 + n);
		return;
	case 11:	/* late: behind the next one */
		if (r->hlen == 0)
			r->hold = 1;
		sane(r, t, id, q, qlen);
		return;
	case 12:	/* the connection closes */
		r->hangup = 1;
		return;
	case 13:	/* the files' size changes */
		v = 0;
		(void)fz_u32(&r->in, &v);
		r->size = v % 2 ? UINT64_MAX - (v % 1000) : v % (512 * 1024);
		sane(r, t, id, q, qlen);
		return;
	default:
		sane(r, t, id, q, qlen);
		return;
	}
}

static void
serve(struct resp *r)
{
	struct pollfd pfd;
	ssize_t n;
	size_t len, off;
	int held;

	for (;;) {
		pfd.fd = r->fd;
		pfd.events = POLLIN | (r->olen > 0 ? POLLOUT : 0);
		/*
		 * a reply held for the next request: sent if none comes
		 * within 2 ms (an engine with requests in flight sends them
		 * at once; one that waits for this reply sends nothing, and
		 * the wait is the harness's idle time: 20 ms here made a
		 * pass over the corpus a quarter slower)
		 */
		if ((n = poll(&pfd, 1, r->hlen > 0 ? 2 : 20000)) == 0 &&
		    r->hlen > 0) {
			flush_held(r);
			continue;
		}
		if (n <= 0)
			break;		/* the engine is gone, or hangs */
		if (pfd.revents & POLLOUT) {
			if ((n = write(r->fd, r->obuf, r->olen)) > 0) {
				memmove(r->obuf, r->obuf + n, r->olen - n);
				r->olen -= n;
			} else if (n == -1 && errno != EAGAIN && errno != EINTR)
				break;
		}
		if (!(pfd.revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		if (r->ilen == sizeof(r->ibuf))
			break;
		n = read(r->fd, r->ibuf + r->ilen, sizeof(r->ibuf) - r->ilen);
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			break;
		r->ilen += n;
		for (off = 0; r->ilen - off >= 4; off += 4 + len) {
			len = PEEK_U32(r->ibuf + off);
			if (len == 0 || len > MAXREQ) {
				r->hangup = 1;	/* not ours: end */
				break;
			}
			if (r->ilen - off < 4 + len)
				break;
			held = r->hlen > 0;
			answer(r, r->ibuf + off + 4, len);
			if (held)
				flush_held(r);	/* behind this one */
			if (r->hangup)
				break;
		}
		if (r->hangup) {
			shutdown(r->fd, SHUT_RDWR);
			break;
		}
		memmove(r->ibuf, r->ibuf + off, r->ilen - off);
		r->ilen -= off;
	}
	/* what is left unread: drained until the engine closes its end */
	while ((n = read(r->fd, r->ibuf, sizeof(r->ibuf))) > 0 ||
	    (n == -1 && errno == EINTR))
		;
}

/*
 * The responders' threads: started once, each serving one connection an
 * input.  A thread an input cost a seventh of the harness's CPU time (its
 * stack, ASan's fake stack and shadow, mapped, faulted in and unmapped
 * each time).
 */
static pthread_mutex_t resp_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t resp_cv = PTHREAD_COND_INITIALIZER;

static void *
resp_thread(void *arg)
{
	struct resp *r = arg;

	for (;;) {
		pthread_mutex_lock(&resp_mu);
		while (!r->go)
			pthread_cond_wait(&resp_cv, &resp_mu);
		r->go = 0;
		pthread_mutex_unlock(&resp_mu);
		serve(r);
		pthread_mutex_lock(&resp_mu);
		r->done = 1;
		pthread_cond_broadcast(&resp_cv);
		pthread_mutex_unlock(&resp_mu);
	}
	return NULL;
}

/* r's thread serves r->fd from now on. */
static void
resp_start(struct resp *r)
{
	if (!r->started) {
		if (pthread_create(&r->thread, NULL, resp_thread, r) != 0)
			fatal("pthread_create");
		r->started = 1;
	}
	pthread_mutex_lock(&resp_mu);
	r->done = 0;
	r->go = 1;
	pthread_cond_broadcast(&resp_cv);
	pthread_mutex_unlock(&resp_mu);
}

/* Until r's thread is done with its connection. */
static void
resp_wait(struct resp *r)
{
	pthread_mutex_lock(&resp_mu);
	while (!r->done)
		pthread_cond_wait(&resp_cv, &resp_mu);
	pthread_mutex_unlock(&resp_mu);
}

/* ------------------------------------------------------------------ */
/* the fixture: a local tree to upload, a target to download into */

static char base[PATH_MAX], src[PATH_MAX], dst[PATH_MAX];
static struct stat srcsb[8];
static const char *srcnames[] = { "file", "big", "tree", "tree/a",
    "tree/b", "tree/sub", "tree/sub/c", NULL };

/* The descriptors open now, as a bit map (the first FDS_MAX). */
#define FDS_MAX	1024
static void
fds_open(u_char *map)
{
	DIR *d;
	struct dirent *de;
	long n;

	memset(map, 0, FDS_MAX / 8);
	if ((d = opendir("/proc/self/fd")) == NULL)
		fatal("/proc/self/fd: %s", strerror(errno));
	while ((de = readdir(d)) != NULL) {
		n = strtol(de->d_name, NULL, 10);
		if (de->d_name[0] >= '0' && de->d_name[0] <= '9' &&
		    n >= 0 && n < FDS_MAX && n != dirfd(d))
			map[n / 8] |= 1 << (n % 8);
	}
	closedir(d);
}

/* Close what was opened since before (a fatal() left it open). */
static void
fds_close_new(const u_char *before)
{
	u_char now[FDS_MAX / 8];
	int i;

	fds_open(now);
	for (i = 0; i < FDS_MAX; i++)
		if ((now[i / 8] & (1 << (i % 8))) &&
		    !(before[i / 8] & (1 << (i % 8))))
			close(i);
}

static void
mkfile(const char *rel, size_t size)
{
	char p[PATH_MAX];
	u_char buf[4096];
	size_t i;
	int fd;

	snprintf(p, sizeof(p), "%s/%s", src, rel);
	if ((fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644)) == -1)
		fatal("%s: %s", p, strerror(errno));
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (u_char)i;
	for (i = 0; i < size; i += sizeof(buf))
		if (write(fd, buf, MINIMUM(sizeof(buf), size - i)) < 0)
			fatal("write %s", p);
	close(fd);
}

static void
snap(struct stat *sb)
{
	char p[PATH_MAX];
	int i;

	for (i = 0; srcnames[i] != NULL; i++) {
		snprintf(p, sizeof(p), "%s/%s", src, srcnames[i]);
		if (lstat(p, &sb[i]) == -1)
			fatal("lstat %s", p);
	}
}

/* Empty dir of everything under it (bounded depth). */
static void
rmtree(const char *dir, int depth)
{
	char p[PATH_MAX];
	DIR *d;
	struct dirent *de;
	struct stat sb;

	if (depth > 80 || (d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode)) {
			chmod(p, 0700);
			rmtree(p, depth + 1);
			rmdir(p);
		} else
			unlink(p);
	}
	closedir(d);
}

/* The fixture's directory, removed at exit (a run by hand leaves none). */
static void
fixture_remove(void)
{
	rmtree(base, 0);
	rmdir(base);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char p[PATH_MAX];

	fz_init("xfer_fuzz");
	fz_scratch(base, sizeof(base), "xfer-fuzz");
	atexit(fixture_remove);
	snprintf(src, sizeof(src), "%s/src", base);
	snprintf(dst, sizeof(dst), "%s/dst", base);
	if (mkdir(src, 0755) == -1 || mkdir(dst, 0755) == -1)
		fatal("mkdir: %s", strerror(errno));
	mkfile("file", 5000);
	mkfile("big", 3 * HPN_STRIPE_PART + 777);
	snprintf(p, sizeof(p), "%s/tree", src);
	if (mkdir(p, 0755) == -1)
		fatal("mkdir %s: %s", p, strerror(errno));
	mkfile("tree/a", 100);
	mkfile("tree/b", 9000);
	snprintf(p, sizeof(p), "%s/tree/sub", src);
	if (mkdir(p, 0755) == -1)
		fatal("mkdir %s: %s", p, strerror(errno));
	mkfile("tree/sub/c", 1);
	snap(srcsb);
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

/* Nothing outside dst changed: base holds src and dst, src as it was. */
static void
check_outside(void)
{
	struct stat sb[8];
	DIR *d;
	struct dirent *de;
	int i;

	if ((d = opendir(base)) == NULL)
		fatal("opendir %s", base);
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0 &&
		    strcmp(de->d_name, "src") != 0 &&
		    strcmp(de->d_name, "dst") != 0) {
			fprintf(stderr, "fuzz harness: written outside the "
			    "target: %s/%s\n", base, de->d_name);
			abort();
		}
	closedir(d);
	snap(sb);
	for (i = 0; srcnames[i] != NULL; i++)
		if (sb[i].st_size != srcsb[i].st_size ||
		    sb[i].st_mtime != srcsb[i].st_mtime ||
		    sb[i].st_ino != srcsb[i].st_ino) {
			fprintf(stderr, "fuzz harness: the source %s "
			    "changed\n", srcnames[i]);
			abort();
		}
}

enum { M_GET, M_GETR, M_PUT, M_PUTR, M_RSGET, M_RSPUT, M_N2GET, M_N2PUT,
	M_MAX };

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	struct hpn_sftp *h;
	struct sftp_limits lim;
	u_int8_t mode = 0, flags = 0;
	u_int16_t split = 0;
	char sp[PATH_MAX], dp[PATH_MAX];
	int sv[2][2], i, nconn, early, preserve, inplace, fd, ref, tree;
	u_int msg_id = 1;
	u_char fds[FDS_MAX / 8];

	fds_open(fds);
	clock_now = CLOCK_START;
	(void)fz_u8(&in, &mode);
	(void)fz_u8(&in, &flags);
	/* a server taking handle references (HPN_REF_EXT): the mode's
	 * fourth bit; the responder answers whatever a request names */
	ref = (mode >> 3) & 1;
	/* ... and listing trees (HPN_TREE_EXT): its fifth */
	tree = (mode >> 4) & 1;
	mode %= M_MAX;
	early = flags & 1;
	preserve = (flags >> 1) & 1;
	inplace = (flags >> 2) & 1;
	nconn = mode == M_N2GET || mode == M_N2PUT ? 2 : 1;
	/* the responders' state, not their buffers (2 x 2.3 MiB: zeroing
	 * them took a fifth of the time; ilen, olen and hlen say what of
	 * them holds anything) */
	for (i = 0; i < 2; i++)
		resp_reset(&resp[i]);
	if (nconn == 2) {
		(void)fz_u16(&in, &split);
		resp[1].in.p = in.p + (in.len ? split % in.len : 0);
		resp[1].in.len = in.len - (in.len ? split % in.len : 0);
		in.len -= resp[1].in.len;
	}
	resp[0].in = in;
	for (i = 0; i < nconn; i++) {
		resp[i].size = mode == M_N2GET ? 3 * HPN_STRIPE_PART + 999 :
		    7000 + (flags >> 3) * 4000;
		resp[i].dirs = mode == M_GETR;
		resp[i].tree = tree;
		resp[i].data_max = nconn == 2 ? DATA_MAX_LANES : DATA_MAX_ONE;
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv[i]) == -1)
			fatal("socketpair: %s", strerror(errno));
		resp[i].fd = sv[i][1];
		resp_start(&resp[i]);
	}
	if (mode == M_RSGET) {
		snprintf(dp, sizeof(dp), "%s/file", dst);
		if ((fd = open(dp, O_WRONLY | O_CREAT, 0644)) != -1) {
			if (write(fd, "0123456789", 10) != 10)
				fatal("write");
			close(fd);
		}
	}

	h = hpn_sftp_attach(sv[0][0], sv[0][0], &msg_id);
	if (nconn == 2) {
		lane_ids = 1;
		lane_h = hpn_sftp_attach(sv[1][0], sv[1][0], &lane_ids);
	}
	FZ_STEP({
		switch (mode) {
		case M_GET:
		case M_RSGET:
		case M_N2GET:
			if (early)
				hpn_sftp_prefetch_get("/r/file", 0);
			break;
		case M_GETR:
			if (early)
				hpn_sftp_prefetch_get("/r/dir", 1);
			break;
		case M_PUT:
		case M_RSPUT:
			snprintf(sp, sizeof(sp), "%s/file", src);
			if (early)
				hpn_sftp_prefetch_put("/r", sp, 0, preserve, 0);
			break;
		case M_PUTR:
			/* its MKDIR, and tree/a and tree/b whole */
			snprintf(sp, sizeof(sp), "%s/tree", src);
			if (early)
				hpn_sftp_prefetch_put("/r", sp, 1, preserve, 0);
			break;
		}
		hpn_sftp_early_send(h, 0);
		if (hpn_sftp_early_recv(h, 1, &lim) != 0)
			lim.open_handles = 0;
		hpn_sftp_settle(h, SSH2_FILEXFER_VERSION, 32768, 32768, 8, 0);
		h->can_ref = ref;
		h->can_tree = tree;
		if (lane_h != NULL)
			hpn_sftp_settle_as(lane_h, h, SSH2_FILEXFER_VERSION);
		switch (mode) {
		case M_GET:
		case M_RSGET:
		case M_N2GET:
			snprintf(dp, sizeof(dp), "%s/file", dst);
			(void)hpn_sftp_get(NULL, h, "/r/file", dp, NULL,
			    preserve, mode == M_RSGET, 0, inplace);
			break;
		case M_GETR:
			snprintf(dp, sizeof(dp), "%s/tree", dst);
			(void)hpn_sftp_get_dir(NULL, h, "/r/dir", dp, NULL,
			    preserve, 0, 0, 0, 1, inplace);
			break;
		case M_PUT:
		case M_RSPUT:
			snprintf(sp, sizeof(sp), "%s/file", src);
			(void)hpn_sftp_put(NULL, h, sp, "/r/file", preserve,
			    mode == M_RSPUT, 0, inplace || mode == M_RSPUT);
			break;
		case M_N2PUT:
			snprintf(sp, sizeof(sp), "%s/big", src);
			(void)hpn_sftp_put(NULL, h, sp, "/r/big", preserve, 0,
			    0, inplace);
			break;
		case M_PUTR:
			snprintf(sp, sizeof(sp), "%s/tree", src);
			(void)hpn_sftp_put_dir(NULL, h, sp, "/r/tree",
			    preserve, 0, 0, 0, 1, inplace);
			break;
		}
	});
	/* the engine's end closes: the responders end */
	for (i = 0; i < nconn; i++)
		close(sv[i][0]);
	for (i = 0; i < nconn; i++) {
		resp_wait(&resp[i]);
		close(sv[i][1]);
	}
	/* what a fatal() left: its connections, files and descriptors */
	if (lane_h != NULL)
		hpn_sftp_lanes_lost(lane_h);
	hpn_sftp_lanes_forget(h);
	early_forget(h);
	conn_free(h);
	(void)hpn_sftp_batch_end();
	fds_close_new(fds);
	fz_step_release();
	check_outside();
	rmtree(dst, 0);
	return 0;
}
