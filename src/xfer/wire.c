/*
 * HPN patch set: the transfer engine's requests in flight and its
 * connections' bytes (src/xfer/).
 *
 * Owns: a run's requests from the moment one is composed to the moment
 * its reply is matched (req_*(): an id, its kind, its file or directory,
 * the bytes it counts against its connection's budget; per connection, a
 * tree by id), each connection's buffers and non-blocking reads and
 * writes (lane_write(), lane_read(), lane_next()), and what makes a
 * connection unusable: the server breaking the protocol in a reply
 * (proto_error(), req_status(), req_reply(): said with the file or
 * directory and the request), the connection closing (lane_error()).
 * Unusable is only noted here (struct xlane's broken); the engine decides
 * what follows.
 * Calls: proto.c, conn.c.
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "openbsd-compat/sys-queue.h"
#include "openbsd-compat/sys-tree.h"

#include "xmalloc.h"
#include "ssherr.h"
#include "sshbuf.h"
#include "log.h"
#include "misc.h"

#include "sftp.h"
#include "sftp-common.h"

#include "hpn.h"
#include "xfer.h"

static int
xreq_cmp(struct xreq *a, struct xreq *b)
{
	return a->id < b->id ? -1 : a->id > b->id;
}
RB_GENERATE_STATIC(xreqs, xreq, node, xreq_cmp);

/*
 * A request on f's connection (the first one for the rest); id: its id,
 * sent already, 0: the next.
 */
struct xreq *
req_add(struct xrun *x, int kind, struct xfile *f, struct xdir *d, u_int id)
{
	struct xlane *l = f != NULL && f->lane != NULL ? f->lane : L0(x);
	struct xreq *q;

	q = xcalloc(1, sizeof(*q));
	q->lane = l;
	q->id = id != 0 ? id : (*l->h->msg_id)++;
	q->kind = kind;
	q->f = f;
	q->d = d;
	/* sent before the run (with INIT): when is not known here */
	if (id == 0)
		q->sent = monotime_double();
	if (RB_INSERT(xreqs, &l->reqs, q) != NULL)
		fatal_f("request id %u in use", q->id);
	l->nout++;
	x->nout++;
	if (f != NULL)
		f->nout++;
	return q;
}

struct xreq *
req_new(struct xrun *x, int kind, struct xfile *f, struct xdir *d)
{
	return req_add(x, kind, f, d, 0);
}

void
req_path(struct xrun *x, u_char type, struct xreq *q, const char *path,
    Attrib *a)
{
	frame_path(q->lane->obuf, type, q->id, path, a, 0);
	debug3("Sent message T:%u I:%u P:%s", type, q->id, path);
}

void
req_handle(struct xrun *x, u_char type, struct xreq *q, const u_char *handle,
    size_t hlen, Attrib *a)
{
	frame_handle(q->lane->obuf, type, q->id, handle, hlen, a);
	debug3("Sent message T:%u I:%u", type, q->id);
}

void
send_stat(struct xrun *x, int kind, struct xfile *f, struct xdir *d,
    const char *path)
{
	req_path(x, x->h->version == 0 ? SSH2_FXP_STAT_VERSION_0 :
	    SSH2_FXP_STAT, req_new(x, kind, f, d), path, NULL);
}

int
budget_left(struct xlane *l)
{
	return !l->dead && l->inflight < l->budget &&
	    l->ndata < l->maxdata &&
	    sshbuf_len(l->obuf) < X_OBUF_MAX;
}

/* ------------------------------------------------------------------ */
/* a connection that breaks */

/*
 * Connection l is unusable (why: fmt): noted, the first reason kept; the
 * engine drops it (-n) or ends the run (the first one).  The caller
 * returns at once.
 */
void
lane_error(struct xlane *l, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (l->broken != NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	l->broken = xstrdup(msg);
}

static const char *
req_name(int kind)
{
	static const char *names[] = {
		"OPEN", "READ", "WRITE", "CLOSE", "FSETSTAT", "STAT",
		"REALPATH", "OPENDIR", "READDIR", "CLOSE", "MKDIR", "STAT",
		"SETSTAT", "SETSTAT", "CLOSE", "WRITE", "READDIR"
	};

	return kind >= 0 && (size_t)kind < sizeof(names) / sizeof(*names) ?
	    names[kind] : "request";
}

/*
 * The server's reply to q breaks the protocol (fmt says how): where
 * upstream would end the program.  Said with the file or directory and
 * the request; the caller returns at once (lane_error()).
 */
void
proto_error(struct xrun *x, struct xreq *q, const char *fmt, ...)
{
	char msg[512], at[64] = "";
	const char *what = "", *path = q->path;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (q->f != NULL) {
		what = is_get(q->f->job) ? "download" : "upload";
		path = is_get(q->f->job) ? q->f->src : q->f->dst;
	} else if (q->d != NULL) {
		what = "directory";
		path = is_get(q->d->job) ? q->d->src : q->d->dst;
	}
	if (q->kind == XR_READ || q->kind == XR_WRITE)
		snprintf(at, sizeof(at), " of %u bytes at %llu", q->len,
		    (unsigned long long)q->off);
	lane_error(q->lane, "%s%s\"%s\": %s%s (request %u): %s", what,
	    *what != '\0' ? " " : "", path != NULL ? path : "",
	    req_name(q->kind), at, q->id, msg);
}

/*
 * A STATUS reply to q: its code in *status.  -1: the reply is no STATUS,
 * or does not parse (the server broke the protocol: proto_error(); the
 * caller returns at once).
 */
int
req_status(struct xrun *x, struct xreq *q, u_char type, struct sshbuf *m,
    u_int *status)
{
	struct sftp_reply r;
	char err[256];

	if (sftp_reply(m, type, SSH2_FXP_STATUS, &r, err, sizeof(err)) !=
	    SFTP_R_STATUS) {
		proto_error(x, q, "%s", err);
		return -1;
	}
	*status = r.status;
	return 0;
}

/*
 * The reply to q, which wants one of type want (proto.c's sftp_reply()):
 * SFTP_R_WANT (r filled in), SFTP_R_STATUS (r->status; an OK where data
 * was due is SSH2_FX_BAD_MESSAGE; attributes that do not decode are said
 * here), or SFTP_R_BAD (proto_error(): the caller returns at once).
 */
int
req_reply(struct xrun *x, struct xreq *q, u_char type, struct sshbuf *m,
    u_char want, struct sftp_reply *r)
{
	char err[256];
	int ret;

	ret = sftp_reply(m, type, want, r, err, sizeof(err));
	if (ret == SFTP_R_BAD)
		proto_error(x, q, "%s", err);
	else if (ret == SFTP_R_STATUS && *err != '\0')
		error("%s", err);
	return ret;
}

/*
 * The request a reply m on l answers, taken off l's tree (its type in
 * *typep, m read past its id); NULL: the reply answers none of ours
 * (lane_error()).
 */
struct xreq *
req_take(struct xrun *x, struct xlane *l, struct sshbuf *m, u_char *typep)
{
	struct xreq key, *q;
	u_int id;

	if (sftp_reply_head(m, typep, &id) != 0) {
		lane_error(l, "a reply too short to parse");
		return NULL;
	}
	debug3("Received reply T:%u I:%u", *typep, id);
	key.id = id;
	if ((q = RB_FIND(xreqs, &l->reqs, &key)) == NULL) {
		/* upstream: "ID mismatch"; none of ours is out with it */
		lane_error(l, "a reply (type %u) to request %u, which "
		    "is not waiting for one", *typep, id);
		return NULL;
	}
	RB_REMOVE(xreqs, &l->reqs, q);
	l->nout--;
	x->nout--;
	if (q->f != NULL)
		q->f->nout--;
	return q;
}

/* l is dropped: its requests are forgotten, its buffers emptied. */
void
lane_forget(struct xrun *x, struct xlane *l)
{
	struct xreq *q, *nq;

	for (q = RB_MIN(xreqs, &l->reqs); q != NULL; q = nq) {
		nq = RB_NEXT(xreqs, &l->reqs, q);
		RB_REMOVE(xreqs, &l->reqs, q);
		x->nout--;
		free(q->path);
		free(q);
	}
	l->nout = l->ndata = l->nhandles = 0;
	l->inflight = 0;
	sshbuf_reset(l->obuf);
	sshbuf_reset(l->ibuf);
}

/* ------------------------------------------------------------------ */
/* a connection's bytes */

/* What l has composed, written as far as it goes without waiting. */
void
lane_write(struct xlane *l)
{
	ssize_t n;
	int r;

	if (l->idx == 0)
		n = write(l->h->fd_out, sshbuf_ptr(l->obuf),
		    sshbuf_len(l->obuf));
	else
		n = send(l->h->fd_out, sshbuf_ptr(l->obuf),
		    sshbuf_len(l->obuf), MSG_NOSIGNAL);
	if (n == -1 && errno != EAGAIN && errno != EINTR &&
	    errno != EWOULDBLOCK) {
		lane_error(l, "Couldn't send packet: %s", strerror(errno));
		return;
	}
	if (n > 0 && (r = sshbuf_consume(l->obuf, n)) != 0)
		fatal_fr(r, "consume");
}

/* What came on l, into its buffer.  0, or -1 (lane_error()). */
int
lane_read(struct xlane *l)
{
	size_t rlen;
	int r;

	if ((r = sshbuf_read(l->h->fd_in, l->ibuf, X_READ_MAX,
	    &rlen)) == 0)
		return 0;
	if (r == SSH_ERR_SYSTEM_ERROR &&
	    (errno == EAGAIN || errno == EINTR || errno == EWOULDBLOCK))
		return 0;
	if (r == SSH_ERR_SYSTEM_ERROR && errno == EPIPE)
		lane_error(l, "Connection closed");
	else
		lane_error(l, "Couldn't read packet: %s", ssh_err(r));
	return -1;
}

/*
 * The next whole message l has read (a view into its buffer, to free; the
 * caller consumes 4 + its length from l->ibuf once done with it), or NULL
 * (none whole yet, or one too long: lane_error()).
 */
struct sshbuf *
lane_next(struct xlane *l)
{
	struct sshbuf *m;
	const u_char *p;
	u_int len;

	if (sshbuf_len(l->ibuf) < 4)
		return NULL;
	p = sshbuf_ptr(l->ibuf);
	len = PEEK_U32(p);
	if (len > SFTP_MAX_MSG_LENGTH) {
		lane_error(l, "Received message too long %u", len);
		return NULL;
	}
	if (sshbuf_len(l->ibuf) < 4 + (size_t)len)
		return NULL;
	if ((m = sshbuf_from(p + 4, len)) == NULL)
		fatal_f("sshbuf_from failed");
	return m;
}
