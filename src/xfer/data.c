/*
 * HPN patch set: a file's reads and writes in the transfer engine
 * (src/xfer/).
 *
 * Owns: a download's READs (get_pump(): within its connection's budget,
 * gaps of short reads asked again, the CLOSE right behind the last one),
 * an upload's WRITEs (put_pump(): read from the local file straight into
 * the output buffer; the size, attributes and CLOSE right behind the last
 * one; a part's size behind the last WRITEs of all: stripe.c decides),
 * their replies (reply_data(): data written where it belongs, never past
 * a part's end; write errors remembered), and an upload's first OPEN and
 * WRITEs sent with INIT, taken over (put_early(), spec_take()), as are a
 * tree upload's first files sent whole with INIT (eput_take()).
 * Calls: file.c, wire.c, stripe.c, budget.c, meter.c, early.c.
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <signal.h>
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
#include "sftp-client.h"

#include "hpn.h"
#include "xfer.h"

extern volatile sig_atomic_t interrupted;

static void
send_read(struct xrun *x, struct xfile *f, u_int64_t off, u_int len)
{
	struct xlane *l = f->lane;
	struct xreq *q;
	size_t start;
	u_int64_t cost = len;
	int r;

	/* what should come back: the probe at the end costs nothing */
	if (f->rd.size_known)
		cost = off >= f->rd.size ? 0 :
		    MINIMUM(len, f->rd.size - off);
	q = req_new(x, XR_READ, f, NULL);
	q->off = off;
	q->len = len;
	q->cost = cost;
	l->ndata++;
	l->inflight += cost;
	start = frame_start(l->obuf, SSH2_FXP_READ, q->id);
	if ((r = sshbuf_put_string(l->obuf, f->handle, f->hlen)) != 0 ||
	    (r = sshbuf_put_u64(l->obuf, off)) != 0 ||
	    (r = sshbuf_put_u32(l->obuf, len)) != 0)
		fatal_fr(r, "compose");
	frame_end(l->obuf, start);
	debug3("Request range %llu -> %llu of \"%s\" I:%u",
	    (unsigned long long)off, (unsigned long long)off + len - 1,
	    f->src, q->id);
}

/*
 * A WRITE of f's len bytes at off out on its connection, counted against
 * its budget (id: sent already, with INIT; 0: the next, to be sent now).
 */
static struct xreq *
write_out(struct xrun *x, struct xfile *f, u_int id, u_int64_t off,
    u_int len)
{
	struct xreq *q;

	q = req_add(x, XR_WRITE, f, NULL, id);
	q->off = off;
	q->len = q->cost = len;
	f->lane->ndata++;
	f->lane->inflight += len;
	f->nwrites++;
	return q;
}

/*
 * The next WRITE of f, read from the local file straight into the output
 * buffer.  Returns 1 when one went out, 0 at the end of the file, -1 on a
 * local read error (said).
 */
static int
send_write(struct xrun *x, struct xfile *f)
{
	struct xlane *l = f->lane;
	struct xreq *q;
	size_t hdr = 4 + 1 + 4 + 4 + f->hlen + 8 + 4, want = l->h->wbuflen;
	u_char *p;
	ssize_t n;
	int r;

	/* a part stops at its end; the last one reads on to the EOF */
	if (f->off >= f->pend)
		return 0;
	if (f->pend - f->off < want)
		want = f->pend - f->off;
	if ((r = sshbuf_reserve(l->obuf, hdr + want, &p)) != 0)
		fatal_fr(r, "reserve");
	do
		n = pread(xfd(f), p + hdr, want, (off_t)f->off);
	while (n == -1 && (errno == EINTR || errno == EAGAIN));
	if (n <= 0) {
		if (n == -1)
			error("read local \"%s\": %s", f->src,
			    strerror(errno));
		if ((r = sshbuf_consume_end(l->obuf, hdr + want)) != 0)
			fatal_fr(r, "consume");
		return n == 0 ? 0 : -1;
	}
	if ((size_t)n < want &&
	    (r = sshbuf_consume_end(l->obuf, want - n)) != 0)
		fatal_fr(r, "consume");
	q = write_out(x, f, 0, f->off, n);
	POKE_U32(p, hdr - 4 + n);
	p[4] = SSH2_FXP_WRITE;
	POKE_U32(p + 5, q->id);
	POKE_U32(p + 9, f->hlen);
	memcpy(p + 13, f->handle, f->hlen);
	POKE_U64(p + 13 + f->hlen, f->off);
	POKE_U32(p + 21 + f->hlen, n);
	debug3("Sent message SSH2_FXP_WRITE I:%u O:%llu S:%zd of \"%s\"",
	    q->id, (unsigned long long)f->off, n, f->src);
	f->off += n;
	return 1;
}

/* get: reads of f within the budget, then its CLOSE as soon as it may. */
void
get_pump(struct xrun *x, struct xfile *f)
{
	u_int64_t off;
	u_int len;

	if (f->step != F_DATA)
		return;
	while (!f->failed && !interrupted && budget_left(f->lane) &&
	    hpn_sftp_rd_next(&f->rd, &off, &len))
		send_read(x, f, off, len);
	if (f->failed || interrupted || hpn_sftp_rd_planned(&f->rd) ||
	    hpn_sftp_rd_done(&f->rd))
		file_close(x, f);
}

/* put, inplace: f's file cut (or grown) to size, on its handle. */
static void
put_size(struct xrun *x, struct xfile *f, u_int64_t size)
{
	struct xreq *q;
	Attrib t;

	attrib_clear(&t);
	t.flags = SSH2_FILEXFER_ATTR_SIZE;
	t.size = size;
	debug("truncating \"%s\" at %llu", f->dst, (unsigned long long)size);
	q = req_new(x, XR_FSETSTAT, f, NULL);
	req_handle(x, SSH2_FXP_FSETSTAT, q, f->handle, f->hlen, &t);
}

/* put: writes of f within the budget, then FSETSTAT and CLOSE. */
void
put_pump(struct xrun *x, struct xfile *f)
{
	struct xreq *q;
	u_int64_t size;
	int r, stop;

	if (f->step != F_DATA)
		return;
	while (!f->failed && !interrupted && f->wstatus == SSH2_FX_OK &&
	    !f->leof && budget_left(f->lane)) {
		if ((r = send_write(x, f)) == 0)
			f->leof = 1;
		else if (r < 0)
			f->failed = 1;
	}
	stop = f->failed || interrupted || f->wstatus != SSH2_FX_OK;
	if (!f->leof && !stop)
		return;
	/* a part: attributes once all parts are in (part_done) */
	if (f->st != NULL) {
		if (stop && f->nwrites > 0)
			return;
		if (!stop && stripe_size_now(x, f, &size)) {
			debug2_f("\"%s\": size %llu with the last WRITEs",
			    f->dst, (unsigned long long)size);
			put_size(x, f, size);
			f->st->sized = 1;
		}
		file_close(x, f);
		return;
	}
	/* inplace after a failure: truncate where the acks end */
	if (stop && f->job->inplace && f->nwrites > 0)
		return;
	if (f->job->inplace) {
		f->sized = !stop;
		put_size(x, f, stop ? f->rd.highwater : f->off);
	}
	/* Override umask and utimes if asked, never on a partial file */
	if (f->job->preserve && !stop) {
		q = req_new(x, XR_FSETSTAT, f, NULL);
		req_handle(x, SSH2_FXP_FSETSTAT, q, f->handle, f->hlen, &f->a);
	}
	file_close(x, f);
}

/* All of data at off, or the errno that stopped it. */
static int
pwrite_all(int fd, const u_char *data, size_t len, u_int64_t off)
{
	ssize_t n;

	while (len > 0) {
		n = pwrite(fd, data, len, (off_t)off);
		if (n == -1 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n == -1)
			return errno;
		if (n == 0)
			return ENOSPC;
		data += n;
		len -= n;
		off += n;
	}
	return 0;
}

/* The reply to f's READ or WRITE (request q). */
void
reply_data(struct xrun *x, struct xreq *q, u_char type, struct sshbuf *m)
{
	struct xfile *f = q->f;
	struct sftp_reply r;
	u_int status;
	int e;

	q->lane->ndata--;
	q->lane->inflight -= q->cost;
	lane_rtt(x, q);
	if (q->kind == XR_WRITE) {
		f->nwrites--;
		if (req_status(x, q, type, m, &status) != 0)
			return;
		if (status != SSH2_FX_OK) {
			if (f->wstatus == SSH2_FX_OK)
				f->wstatus = status;	/* remember errors */
		} else {
			hpn_sftp_rd_ack(&f->rd, q->off, q->len);
			x->done_bytes += q->len;
			f->moved += q->len;
			q->lane->moved += q->len;
		}
		file_check(x, f);
		return;
	}
	switch (req_reply(x, q, type, m, SSH2_FXP_DATA, &r)) {
	case SFTP_R_BAD:
		return;
	case SFTP_R_STATUS:
		if (r.status == SSH2_FX_EOF)
			hpn_sftp_rd_eof(&f->rd, q->off);
		else {
			if (f->rd.inflight > 0)
				f->rd.inflight--;
			if (f->rstatus == SSH2_FX_OK)
				f->rstatus = r.status;
			f->failed = 1;
		}
		file_check(x, f);
		return;
	}
	debug3("Received data %llu -> %llu of \"%s\"",
	    (unsigned long long)q->off,
	    (unsigned long long)q->off + r.dlen - 1, f->src);
	if (r.dlen > q->len) {
		proto_error(x, q, "Received more data than asked for "
		    "%zu > %u", r.dlen, q->len);
		return;
	}
	if (f->ref) {
		proto_error(x, q, "data before the handle: the server "
		    "broke the order of %s", HPN_REF_EXT);
		return;
	}
	if (xfd(f) != -1 && f->werrno == 0 &&
	    (e = pwrite_all(xfd(f), r.data, r.dlen, q->off)) != 0) {
		f->werrno = e;
		f->failed = 1;
	}
	if (f->werrno == 0)
		hpn_sftp_rd_data(&f->rd, q->off, q->len, r.dlen);
	else if (f->rd.inflight > 0)
		f->rd.inflight--;
	if (f->rd.empty >= HPN_SFTP_RD_EMPTY_MAX && !f->failed) {
		/* upstream asks again for ever */
		error("read remote \"%s\": %u replies in a row with "
		    "no data", f->src, f->rd.empty);
		f->failed = 1;
	}
	x->done_bytes += r.dlen;
	f->moved += r.dlen;
	q->lane->moved += r.dlen;
	if (q->off + r.dlen > f->counted) {
		/* progress: more than its size said */
		x->total_bytes += q->off + r.dlen - f->counted;
		f->counted = q->off + r.dlen;
	}
	file_check(x, f);
}

/* ------------------------------------------------------------------ */
/* an upload's OPEN and first bytes, sent with INIT (early.c) */

/*
 * put: the WRITEs that went with INIT (spec_send()) for f, just given the
 * handle of one of the OPENs they name.  Where the server takes handle
 * references they are f's first writes, in flight or answered; where it
 * does not, they are sure to fail: their replies are dropped and f is
 * written from its start.
 */
void
spec_take(struct xrun *x, struct xfile *f)
{
	struct hpn_sftp *h = x->h;
	struct spec *sp;
	u_int i;

	for (i = 0; i < h->nspec; i++) {
		sp = &h->spec[i];
		if (!h->can_ref || f == NULL) {
			if (!sp->done)
				(void)req_add(x, XR_SPEC, NULL, NULL, sp->id);
			continue;
		}
		f->off = sp->off + sp->len;
		if (sp->done) {
			if (sp->status != SSH2_FX_OK) {
				if (f->wstatus == SSH2_FX_OK)
					f->wstatus = sp->status;
				continue;
			}
			hpn_sftp_rd_ack(&f->rd, sp->off, sp->len);
			x->done_bytes += sp->len;
			f->moved += sp->len;
			f->lane->moved += sp->len;
			continue;
		}
		(void)write_out(x, f, sp->id, sp->off, sp->len);
	}
	if (h->nspec > 0)
		debug2_f("%u WRITEs with INIT: %s", h->nspec,
		    f == NULL ? "not used" : h->can_ref ? "taken" :
		    "sent again (no handle references)");
	h->nspec = h->spec_open = 0;
}

/*
 * put: the OPEN of f that went with INIT (hpn_sftp_prefetch_put), if f is
 * that upload: it has its handle at once.  Returns 1 when taken.
 */
int
put_early(struct xrun *x, struct xfile *f)
{
	struct hpn_sftp *h = x->h;
	struct early *e;
	struct stat sb;

	if (h->put_src == NULL || strcmp(f->src, h->put_src) != 0 ||
	    !f->job->inplace || f->job->preserve != h->put_preserve)
		return 0;
	/*
	 * -n: a file to move in parts opens its own way (file_open).  Its
	 * first part taking this OPEN and the WRITEs sent with INIT was
	 * tried: 1 GiB at 100 ms went no faster (107.5-109.1 MB/s beyond
	 * set-up, 109.5 without).
	 */
	if (x->nplan > 1 && h->put_fd != -1 && fstat(h->put_fd, &sb) == 0 &&
	    stripe_size(x, f, sb.st_size) != 0)
		return 0;
	if ((e = early_take(h, E_OPEN, f->dst)) == NULL &&
	    (e = early_take(h, E_OPENT, f->dst)) == NULL)
		return 0;
	/* the local file it opened, whatever the remote answer */
	meter_file(x, f);
	unlink_file(x, f);
	f->lane = L0(x);
	f->where = Q_ACTIVE;
	TAILQ_INSERT_TAIL(&x->active, f, qnext);
	if (put_local_open(x, f, h->put_fd) != 0) {
		h->put_fd = -1;
		f->failed = 1;
		spec_take(x, NULL);
		if (e->status == SSH2_FX_OK) {
			/* the handle goes, as the file would have */
			f->handle = e->handle;
			f->hlen = e->hlen;
			e->handle = NULL;
			f->lane->nhandles++;
			file_close(x, f);
			return 1;
		}
		file_finish(x, f);
		return 1;
	}
	h->put_fd = -1;
	if (e->status != SSH2_FX_OK) {
		spec_take(x, NULL);	/* they named no open file */
		/* ask again, now that it is known where: its own OPEN */
		f->step = F_WAIT;
		f->lane = NULL;
		unlink_file(x, f);
		waitq_add(x, f, 1);
		return 1;
	}
	debug2_f("\"%s\" opened with INIT", f->dst);
	f->handle = e->handle;
	f->hlen = e->hlen;
	e->handle = NULL;
	f->lane->nhandles++;
	f->step = F_DATA;
	spec_take(x, f);
	return 1;
}

/* ------------------------------------------------------------------ */
/* a tree upload's first files, sent whole with INIT (early.c) */

/* Was the local file src (in the top directory) taken by eput_take()? */
int
eput_taken(struct hpn_sftp *h, const char *src)
{
	u_int i;

	for (i = 0; i < h->neput; i++)
		if (h->eput[i].taken && strcmp(h->eput[i].src, src) == 0)
			return 1;
	return 0;
}

/*
 * put: e, sent whole with INIT, is a file of d (the top directory, which
 * took the MKDIR beside it): its requests are the file's own, in flight or
 * answered (the kept replies come after, eput_take()): as if file_open()
 * and put_pump() had sent them, its CLOSE last.
 */
static void
eput_adopt(struct xrun *x, struct xdir *d, struct eput *e)
{
	struct xfile *f;
	char *dst;
	u_int64_t off;
	u_int k;

	dst = sftp_path_append(d->dst, e->name);
	f = file_new(x, d->job, d, e->src, dst);
	free(dst);
	e->taken = 1;
	f->size = e->size;
	x->total_bytes += e->size;
	f->a = e->a;
	f->opened = 1;
	file_rd_init(x, f);
	f->lane = L0(x);
	f->where = Q_ACTIVE;
	TAILQ_INSERT_TAIL(&x->active, f, qnext);
	meter_file(x, f);
	(void)req_add(x, XR_OPEN, f, NULL, e->id);
	f->lane->nhandles++;
	f->ref = 1;
	for (k = 0; k < e->nw; k++) {
		off = (u_int64_t)k * HPN_SFTP_SPEC_WRITE;
		(void)write_out(x, f, e->id + 1 + k, off,
		    MINIMUM(e->size - off, HPN_SFTP_SPEC_WRITE));
	}
	if (e->last != e->id + 1 + e->nw)
		(void)req_add(x, XR_FSETSTAT, f, NULL, e->id + 1 + e->nw);
	(void)req_add(x, XR_CLOSE, f, NULL, e->last);
	f->off = e->size;
	f->leof = 1;
	f->step = F_CLOSING;
	file_made(x, f);
}

/*
 * put: the files sent whole with INIT, d the top directory that took the
 * MKDIR they went behind, ready to be walked (NULL: none did, or it
 * failed).  Where the server takes handle references they become d's
 * files (eput_adopt()), and the walk passes them by (eput_taken()).
 * Else every reply is dropped but an OPEN's handle, closed (XR_EOPEN);
 * the walk sends those files again.  The replies kept before the run are
 * answered now, in order.
 */
void
eput_take(struct xrun *x, struct xdir *d)
{
	struct hpn_sftp *h = x->h;
	struct eput *e;
	struct xreq *q;
	u_int i, k, id;
	int take = d != NULL && h->can_ref;

	if (!h->eput_open)
		return;
	h->eput_open = 0;	/* no more are kept: the run takes them */
	for (i = 0; i < h->neput; i++) {
		e = &h->eput[i];
		if (take) {
			eput_adopt(x, d, e);
			continue;
		}
		for (id = e->id; id <= e->last; id++) {
			if (id != e->id || h->can_ref)
				q = req_add(x, XR_SPEC, NULL, NULL, id);
			else {
				q = req_add(x, XR_EOPEN, NULL, NULL, id);
				q->path = sftp_path_append(h->put_dst,
				    e->name);
			}
		}
	}
	debug2_f("%u files with INIT: %s", h->neput,
	    take ? "taken" : "not used");
	for (k = 0; k < h->eput_nid; k++) {
		if (h->eput_reply[k] == NULL)
			continue;
		reply_kept(x, h->eput_reply[k]);
		sshbuf_free(h->eput_reply[k]);
		h->eput_reply[k] = NULL;
	}
}

/* The reply to an OPEN sent with INIT that no file took: its handle goes. */
void
reply_eopen(struct xrun *x, struct xreq *q, u_char type, struct sshbuf *m)
{
	struct sftp_reply r;
	struct xreq *c;

	if (req_reply(x, q, type, m, SSH2_FXP_HANDLE, &r) != SFTP_R_WANT)
		return;
	c = req_new(x, XR_PFCLOSE, NULL, NULL);
	c->path = xstrdup(q->path);
	req_handle(x, SSH2_FXP_CLOSE, c, r.handle, r.hlen, NULL);
}
