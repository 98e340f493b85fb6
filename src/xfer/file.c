/*
 * HPN patch set: one file's life in the transfer engine (src/xfer/).
 *
 * Owns: a file (or a part of one, -n) from the moment it is known to the
 * moment it is finished: made (file_new(), a download's get_file_ready(),
 * parts cut by stripe.c's decisions: file_stripe(), file_split()), queued
 * (waitq_add()), opened on a connection (file_open(), put_early() for the
 * OPEN sent with INIT, spec_take() for its WRITEs), its OPEN's, CLOSE's
 * and FSETSTAT's replies (reply_file()), closed (file_close()), checked
 * after each reply (file_check(): opened again after a short read,
 * finished once its replies are in), finished (file_finish(): a
 * download's local file cut where its whole bytes end, or its mode and
 * times set; a part's end noted in its stripe and the file finished with
 * its last part), started again on another connection (file_restart()),
 * and cut where its bytes are whole when the run must end (salvage()).
 * Its reads and writes are data.c's.
 * Calls: done.c (its directory told), wire.c, stripe.c, budget.c,
 * meter.c.
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <errno.h>
#include <fcntl.h>
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

#include "hpn.h"
#include "xfer.h"

extern volatile sig_atomic_t interrupted;

static void part_done(struct xrun *, struct xfile *);

/* The local descriptor of f: a part's is its file's. */
int
xfd(struct xfile *f)
{
	return f->st != NULL ? f->st->whole->fd : f->fd;
}

struct xfile *
file_new(struct xrun *x, struct xjob *j, struct xdir *parent,
    const char *src, const char *dst)
{
	struct xfile *f;

	f = xcalloc(1, sizeof(*f));
	f->job = j;
	f->parent = parent;
	f->src = xstrdup(src);
	f->dst = xstrdup(dst);
	f->fd = -1;
	f->pend = UINT64_MAX;
	f->step = F_WAIT;
	if (parent != NULL) {
		parent->pending++;
		parent->unmade++;
	}
	x->files_total++;
	return f;
}

/*
 * How f's reads or writes are set up, from its start: its part's, or
 * where a resumed file goes on.
 */
void
file_rd_init(struct xrun *x, struct xfile *f)
{
	if (is_get(f->job)) {
		if (f->st != NULL) {
			hpn_sftp_rd_init(&f->rd, f->pend == UINT64_MAX ?
			    f->st->whole->a.size : f->pend, 1, x->h->rbuflen);
			if (f->pend != UINT64_MAX)
				hpn_sftp_rd_limit(&f->rd, f->pend);
		} else
			hpn_sftp_rd_init(&f->rd, f->a.size,
			    (f->a.flags & SSH2_FILEXFER_ATTR_SIZE) != 0,
			    x->h->rbuflen);
		f->rd.next = f->pstart;
	} else
		hpn_sftp_rd_init(&f->rd, f->size, 1, x->h->wbuflen);
	f->rd.highwater = f->rd.maxack = f->pstart;
}

/* A part of whole, [start, end) (end UINT64_MAX: to the EOF). */
static struct xfile *
part_new(struct xrun *x, struct xfile *whole, u_int k, u_int64_t start,
    u_int64_t end)
{
	struct xfile *f;

	f = xcalloc(1, sizeof(*f));
	f->job = whole->job;
	f->st = whole->st;
	f->part = k;
	f->pstart = start;
	f->pend = end;
	f->src = xstrdup(whole->src);
	f->dst = xstrdup(whole->dst);
	f->a = whole->a;
	f->have_a = whole->have_a;
	f->mode = whole->mode;
	f->fd = -1;
	f->step = F_WAIT;
	f->opened = whole->opened;
	f->off = start;
	f->size = end == UINT64_MAX ? whole->size : end;
	file_rd_init(x, f);
	/* a download's total counts it already, but for growth at the end */
	if (is_get(f->job))
		f->counted = end == UINT64_MAX ? whole->a.size : end;
	return f;
}

/*
 * Cut whole (its size known: a download's attributes, an upload's local
 * file) into parts of psize, queued to open in order; whole itself waits
 * for them.
 */
static void
file_stripe(struct xrun *x, struct xfile *whole, u_int64_t size,
    u_int64_t psize)
{
	struct xstripe *st;
	u_int k;

	st = whole->st = stripe_new(whole, size, psize);
	unlink_file(x, whole);
	whole->step = F_WAIT;
	debug2_f("\"%s\": %llu bytes in %u parts", whole->src,
	    (unsigned long long)size, st->nparts);
	for (k = 0; k < st->nparts; k++)
		waitq_add(x, part_new(x, whole, k, st->start[k],
		    k == st->nparts - 1 ? UINT64_MAX : st->start[k + 1]), 0);
}

/*
 * -n: part f is cut at mid (steal_pick()): it ends there, and the rest is
 * a new part of its own, first in the queue (for the connection that ran
 * dry).
 */
void
file_split(struct xrun *x, struct xfile *f, u_int64_t mid)
{
	struct xstripe *st = f->st;
	u_int64_t end = f->pend;
	u_int k;

	k = stripe_add(st, mid);
	/* f now ends at mid: no probe, no more */
	f->pend = mid;
	if (is_get(f->job)) {
		/* as if it had been made so: reads stop at mid */
		hpn_sftp_rd_limit(&f->rd, mid);
		f->counted = mid;
	} else
		f->size = mid;
	waitq_add(x, part_new(x, st->whole, k, mid, end), 1);
}

void
waitq_add(struct xrun *x, struct xfile *f, int front)
{
	f->step = F_WAIT;
	f->where = Q_WAIT;
	if (front)
		TAILQ_INSERT_HEAD(&x->waitq, f, qnext);
	else
		TAILQ_INSERT_TAIL(&x->waitq, f, qnext);
	x->nwait++;
}

void
unlink_file(struct xrun *x, struct xfile *f)
{
	if (f->where == Q_WAIT) {
		TAILQ_REMOVE(&x->waitq, f, qnext);
		x->nwait--;
	} else if (f->where == Q_ACTIVE)
		TAILQ_REMOVE(&x->active, f, qnext);
	else if (f->where == Q_PARKED)
		TAILQ_REMOVE(&f->st->parked, f, qnext);
	f->where = Q_NONE;
}

/* get: a file whose attributes are known; is it one to fetch? */
void
get_file_ready(struct xrun *x, struct xfile *f)
{
	u_int64_t psize;

	/* Do not preserve set[ug]id here, as we do not preserve ownership */
	f->mode = (f->a.flags & SSH2_FILEXFER_ATTR_PERMISSIONS) ?
	    (f->a.perm & 0777) : 0666;
	if ((f->a.flags & SSH2_FILEXFER_ATTR_PERMISSIONS) &&
	    !S_ISREG(f->a.perm)) {
		error("download %s: not a regular file", f->src);
		f->failed = 1;
		file_finish(x, f);
		return;
	}
	file_rd_init(x, f);
	if (f->rd.size_known) {
		f->counted = f->a.size;
		x->total_bytes += f->a.size;
	}
	if (f->rd.size_known &&
	    (psize = stripe_size(x, f, f->a.size)) != 0) {
		file_stripe(x, f, f->a.size, psize);
		return;
	}
	waitq_add(x, f, 0);
}

/* put: the local file of f (fd: already open, or -1); 0 or -1 (said). */
int
put_local_open(struct xrun *x, struct xfile *f, int fd)
{
	struct stat sb;

	if ((f->fd = fd) == -1 && (f->fd = open(f->src, O_RDONLY)) == -1) {
		error("open local \"%s\": %s", f->src, strerror(errno));
		return -1;
	}
	f->opened = 1;
	if (fstat(f->fd, &sb) == -1) {
		error("fstat local \"%s\": %s", f->src, strerror(errno));
		return -1;
	}
	if (!S_ISREG(sb.st_mode)) {
		error("local \"%s\" is not a regular file", f->src);
		return -1;
	}
	x->total_bytes = x->total_bytes - f->size + sb.st_size;
	f->size = sb.st_size;
	put_attrib(&sb, f->job->preserve, 0777, &f->a);
	file_rd_init(x, f);
	return 0;
}

/*
 * f's OPEN (request q) went out.  Where the server takes handle references
 * (HPN_REF_EXT), f's reads or writes follow at once, naming the OPEN: its
 * reply is a round trip away.
 */
static void
file_opening(struct xfile *f, struct xreq *q)
{
	u_char ref[HPN_REF_LEN_MAX];
	u_int32_t id = q->id;

	if (!f->lane->h->can_ref) {
		f->step = F_OPENING;
		return;
	}
	free(f->handle);
	f->hlen = hpn_sftp_ref_make(ref, &id, 1);
	f->handle = xmalloc(f->hlen);
	memcpy(f->handle, ref, f->hlen);
	f->ref = 1;
	f->step = F_DATA;
}

/* A file's turn for a handle on connection l: ask for it. */
void
file_open(struct xrun *x, struct xfile *f, struct xlane *l)
{
	struct xreq *q;
	struct sshbuf *b;
	Attrib junk;
	size_t start;
	u_int pflags;
	u_int64_t psize;
	int r;

	if (!is_get(f->job) && f->st == NULL) {
		/* put: the local file first (its size: parts?) */
		if (!f->opened && put_local_open(x, f, -1) != 0)
			goto fail;
		if ((psize = stripe_size(x, f, f->size)) != 0) {
			file_stripe(x, f, f->size, psize);
			return;
		}
	}
	if (f->st != NULL && f->st->whole->failed) {
		unlink_file(x, f);	/* its file failed already */
		f->failed = 1;
		file_finish(x, f);
		return;
	}
	if (!is_get(f->job) && f->st != NULL && !f->job->inplace &&
	    !f->st->created && f->st->creating) {
		/* a part waits until the first has created the file */
		unlink_file(x, f);
		f->step = F_WAIT;
		f->where = Q_PARKED;
		TAILQ_INSERT_TAIL(&f->st->parked, f, qnext);
		return;
	}
	if (f->where != Q_ACTIVE) {
		unlink_file(x, f);
		f->where = Q_ACTIVE;
		TAILQ_INSERT_TAIL(&x->active, f, qnext);
	}
	f->lane = l;
	b = l->obuf;
	meter_file(x, f);
	if (is_get(f->job)) {
		attrib_clear(&junk);
		pflags = SSH2_FXF_READ;
		q = req_new(x, XR_OPEN, f, NULL);
		start = frame_start(b, SSH2_FXP_OPEN, q->id);
		if ((r = sshbuf_put_cstring(b, f->src)) != 0 ||
		    (r = sshbuf_put_u32(b, pflags)) != 0 ||
		    (r = encode_attrib(b, &junk)) != 0)
			fatal_fr(r, "compose");
		frame_end(b, start);
		debug3("Sent remote message SSH2_FXP_OPEN I:%u P:%s M:0x%04x",
		    q->id, f->src, pflags);
		l->nhandles++;
		file_opening(f, q);
		return;
	}
	pflags = SSH2_FXF_WRITE | SSH2_FXF_CREAT;
	if (!f->job->inplace && (f->st == NULL || !f->st->created)) {
		/* the one OPEN that truncates; a part's others wait for it */
		pflags |= SSH2_FXF_TRUNC;
		if (f->st != NULL)
			f->st->creating = 1;
	}
	q = req_new(x, XR_OPEN, f, NULL);
	start = frame_start(b, SSH2_FXP_OPEN, q->id);
	if ((r = sshbuf_put_cstring(b, f->dst)) != 0 ||
	    (r = sshbuf_put_u32(b, pflags)) != 0 ||
	    (r = encode_attrib(b, &f->a)) != 0)
		fatal_fr(r, "compose");
	frame_end(b, start);
	debug3("Sent dest message SSH2_FXP_OPEN I:%u P:%s M:0x%04x",
	    q->id, f->dst, pflags);
	l->nhandles++;
	file_opening(f, q);
	file_made(x, f->st != NULL ? f->st->whole : f);
	return;
 fail:
	f->failed = 1;
	file_finish(x, f);
}

/* put: f's first OPEN went out (it makes the name): tell its directory. */
void
file_made(struct xrun *x, struct xfile *f)
{
	if (f->parent == NULL || f->made)
		return;
	f->made = 1;
	dir_child_made(x, f->parent);
}

/* CLOSE of f's handle; the handle counts until the reply. */
void
file_close(struct xrun *x, struct xfile *f)
{
	req_handle(x, SSH2_FXP_CLOSE, req_new(x, XR_CLOSE, f, NULL),
	    f->handle, f->hlen, NULL);
	free(f->handle);
	f->handle = NULL;
	f->hlen = 0;
	f->step = F_CLOSING;
}

static void
file_message(struct xfile *f)
{
	if (f->parent == NULL || dir_gone(f->parent))
		return;
	if (is_get(f->job))
		error("Download of file %s to %s failed", f->src, f->dst);
	else
		error("upload \"%s\" to \"%s\" failed", f->src, f->dst);
}

/* put: the parts that waited for the file's creation go (first). */
static void
stripe_release(struct xrun *x, struct xstripe *st)
{
	struct xfile *f;

	while ((f = TAILQ_LAST(&st->parked, xfiles)) != NULL) {
		unlink_file(x, f);
		waitq_add(x, f, 1);
	}
}

/*
 * A part is done (all its replies in): note how far it got; the last one
 * finishes the file as a whole.  Its contiguous end is where the parts'
 * contiguous bytes stop; for an upload the size and attributes go by path
 * now that every part is closed.
 */
static void
part_done(struct xrun *x, struct xfile *f)
{
	struct xstripe *st = f->st;
	struct xfile *w = st->whole;
	struct xreq *q;
	Attrib t;
	int bad;
	u_int64_t hw, end;

	unlink_file(x, f);
	if (is_get(f->job)) {
		st->complete[f->part] = hpn_sftp_rd_done(&f->rd) &&
		    f->rstatus == SSH2_FX_OK && f->werrno == 0;
		if (f->rstatus != SSH2_FX_OK && w->rstatus == SSH2_FX_OK)
			w->rstatus = f->rstatus;
		if (f->werrno != 0 && w->werrno == 0)
			w->werrno = f->werrno;
		end = f->rd.eof != ~(u_int64_t)0 ? f->rd.eof : f->rd.maxack;
	} else {
		st->complete[f->part] = f->leof && f->nwrites == 0 &&
		    f->wstatus == SSH2_FX_OK;
		if (f->wstatus != SSH2_FX_OK && w->wstatus == SSH2_FX_OK)
			w->wstatus = f->wstatus;
		end = f->off;
	}
	/* a whole part's bytes end where it ended (its own EOF) */
	st->hw[f->part] = st->complete[f->part] ? end :
	    MAXIMUM(f->rd.highwater, f->pstart);
	if (f->failed || f->close_failed || !st->complete[f->part])
		w->failed = 1;
	if (f->pend == UINT64_MAX) {	/* the last part */
		w->off = end;		/* put: the file's end */
		w->rd.eof = end;
	}
	hpn_sftp_rd_free(&f->rd);
	free(f->handle);
	free(f->src);
	free(f->dst);
	free(f);
	/* done before the file was created (it failed): none may wait */
	if (!st->created)
		stripe_release(x, st);
	if (--st->left > 0)
		return;

	/* the contiguous prefix of the file, over its parts by offset */
	hw = stripe_prefix(st, &bad);
	if (bad && !w->failed) {
		/* every part got its bytes, and still they have a hole */
		if (is_get(w->job))
			error("download \"%s\": the server sent data past "
			    "the end of the file", w->src);
		else
			error("upload \"%s\": the file changed while it was "
			    "read", w->src);
		w->failed = 1;
	}
	if (is_get(w->job)) {
		/* as if read in one piece: done at hw, or truncated at it */
		w->rd.inflight = 0;
		w->rd.ngaps = 0;
		w->rd.next = w->rd.eof = hw;
		w->rd.highwater = w->rd.maxack = hw;
	} else {
		w->rd.highwater = hw;
		attrib_clear(&t);
		if ((w->job->inplace && !st->sized) || bad) {
			/*
			 * inplace: cut an older, longer file to the new end
			 * (unless that went with the last WRITEs:
			 * stripe_size_early());
			 * incomplete: to where the parts' bytes stop being
			 * contiguous (no gaps left looking like data)
			 */
			t.flags = SSH2_FILEXFER_ATTR_SIZE;
			t.size = hw;
			q = req_new(x, XR_FIXSIZE, NULL, NULL);
			q->path = xstrdup(w->dst);
			req_path(x, SSH2_FXP_SETSTAT, q, w->dst, &t);
		}
		if (w->job->preserve && !bad && !w->failed && !interrupted) {
			q = req_new(x, XR_SETSTAT, NULL, NULL);
			q->path = xstrdup(w->dst);
			req_path(x, SSH2_FXP_SETSTAT, q, w->dst, &w->a);
		}
	}
	debug2_f("\"%s\": %u parts in%s", w->src, st->nparts,
	    bad ? ", incomplete" : "");
	w->st = NULL;
	w->step = F_CLOSED;
	stripe_free(st);
	file_finish(x, w);
}

/* All replies of f are in (or it never got far): finish it locally. */
void
file_finish(struct xrun *x, struct xfile *f)
{
	struct xreq *q;
	Attrib t;
	struct timeval tv[2];
	int ret = 0, bad;

	if (f->st != NULL && f != f->st->whole) {
		part_done(x, f);
		return;
	}
	unlink_file(x, f);
	if (f->skip) {
		x->files_total--;
		goto out;
	}
	x->files_done++;
	if (is_get(f->job) && f->fd != -1) {
		bad = f->rstatus != SSH2_FX_OK || f->werrno != 0 ||
		    f->failed || interrupted || !hpn_sftp_rd_done(&f->rd);
		if (!bad)
			f->rd.highwater = f->rd.maxack;	/* got everything */
		/*
		 * Truncate at highest contiguous point to avoid holes on
		 * interrupt, or unconditionally if writing in place.
		 */
		if (f->job->inplace || bad) {
			debug("truncating \"%s\" at %llu", f->dst,
			    (unsigned long long)f->rd.highwater);
			if (ftruncate(f->fd, f->rd.highwater) == -1)
				error("local ftruncate \"%s\": %s", f->dst,
				    strerror(errno));
		}
		if (f->rstatus != SSH2_FX_OK) {
			error("read remote \"%s\" : %s", f->src,
			    fx2txt(f->rstatus));
			ret = -1;
		} else if (f->werrno != 0) {
			error("write local \"%s\": %s", f->dst,
			    strerror(f->werrno));
			ret = -1;
		} else if (bad || f->close_failed)
			ret = -1;
		else {
			/* Override umask and utimes if asked */
#ifdef HAVE_FCHMOD
			if (f->job->preserve && fchmod(f->fd, f->mode) == -1)
#else
			if (f->job->preserve && chmod(f->dst, f->mode) == -1)
#endif
				error("local chmod \"%s\": %s", f->dst,
				    strerror(errno));
			if (f->job->preserve &&
			    (f->a.flags & SSH2_FILEXFER_ATTR_ACMODTIME)) {
				tv[0].tv_sec = f->a.atime;
				tv[1].tv_sec = f->a.mtime;
				tv[0].tv_usec = tv[1].tv_usec = 0;
				if (utimes(f->dst, tv) == -1)
					error("local set times \"%s\": %s",
					    f->dst, strerror(errno));
			}
			if (f->job->fsync) {
				debug("syncing \"%s\"", f->dst);
				if (fsync(f->fd) == -1)
					error("local sync \"%s\": %s",
					    f->dst, strerror(errno));
			}
		}
		close(f->fd);
		f->fd = -1;
	} else if (is_get(f->job)) {
		ret = -1;	/* never opened */
	} else {
		if (f->wstatus != SSH2_FX_OK && !f->open_failed) {
			error("write remote \"%s\": %s", f->dst,
			    fx2txt(f->wstatus));
			ret = -1;
			if (f->job->inplace && f->step == F_CLOSED &&
			    f->sized && f->off > f->rd.highwater) {
				/* the size went before the error came back */
				attrib_clear(&t);
				t.flags = SSH2_FILEXFER_ATTR_SIZE;
				t.size = f->rd.highwater;
				debug("truncating \"%s\" at %llu", f->dst,
				    (unsigned long long)t.size);
				q = req_new(x, XR_FIXSIZE, NULL, NULL);
				q->path = xstrdup(f->dst);
				req_path(x, SSH2_FXP_SETSTAT, q, f->dst, &t);
			}
		}
		if (f->failed || f->close_failed || interrupted)
			ret = -1;
		if (f->fd != -1 && close(f->fd) == -1) {
			error("close local \"%s\": %s", f->src,
			    strerror(errno));
			ret = -1;
		}
		f->fd = -1;
	}
	if (ret != 0 && !interrupted)
		file_message(f);
 out:
	if (ret != 0)
		f->job->ret = -1;
	file_made(x, f);
	if (f->parent != NULL)
		dir_child_done(x, f->parent, ret);
	else
		x->jobs_left--;
	hpn_sftp_rd_free(&f->rd);
	free(f->handle);
	free(f->src);
	free(f->dst);
	free(f);
}

/*
 * After a reply for f: reopen or finish as due.  Its reads or writes go
 * on in the run's next round (data.c's pumps, from schedule()).
 */
void
file_check(struct xrun *x, struct xfile *f)
{
	int get = is_get(f->job);

	if (f->step == F_STAT || f->step == F_WAIT || f->step == F_OPENING ||
	    f->step == F_DATA || f->nout > 0)
		return;
	/* F_CLOSED: all replies are in */
	if (get && !f->failed && !interrupted && f->rstatus == SSH2_FX_OK &&
	    f->werrno == 0 && !hpn_sftp_rd_done(&f->rd)) {
		/* a short read or a grown file after the CLOSE: again */
		debug2_f("reopening \"%s\" at %llu", f->src,
		    (unsigned long long)f->rd.highwater);
		unlink_file(x, f);
		waitq_add(x, f, 1);
		return;
	}
	file_finish(x, f);
}

/*
 * -n: a file (or part) whose connection was lost starts again from its
 * start on another, unless a download of it is complete already.
 */
void
file_restart(struct xrun *x, struct xfile *f)
{
	free(f->handle);
	f->handle = NULL;
	f->hlen = 0;
	f->ref = f->open_failed = 0;
	f->nout = 0;
	if (f->failed || (is_get(f->job) && f->step == F_CLOSING &&
	    hpn_sftp_rd_done(&f->rd))) {
		f->step = F_CLOSED;
		file_check(x, f);
		return;
	}
	x->done_bytes -= MINIMUM(x->done_bytes, f->moved);
	f->moved = 0;
	hpn_sftp_rd_free(&f->rd);
	file_rd_init(x, f);
	f->off = f->pstart;
	f->leof = 0;
	f->nwrites = 0;
	f->wstatus = SSH2_FX_OK;
	f->rstatus = SSH2_FX_OK;
	f->sized = 0;
	if (f->st != NULL && !f->st->created)
		f->st->creating = 0;	/* its TRUNC open: again */
	f->lane = NULL;
	unlink_file(x, f);
	waitq_add(x, f, 1);
	debug2_f("\"%s\" (from %llu) again", f->src,
	    (unsigned long long)f->pstart);
}

/* ------------------------------------------------------------------ */
/* the end of a run that cannot go on */

/* A download's local file, cut where its whole bytes end, said. */
static void
salvage_cut(int fd, const char *path, u_int64_t hw)
{
	struct stat sb;

	if (fd == -1 || fstat(fd, &sb) == -1 || (u_int64_t)sb.st_size <= hw)
		return;
	if (ftruncate(fd, (off_t)hw) == -1)
		error("local ftruncate \"%s\": %s", path, strerror(errno));
	else
		error("\"%s\" is incomplete: cut at %llu bytes", path,
		    (unsigned long long)hw);
}

/*
 * The first connection is unusable (closed, or the server broke the
 * protocol) and the program ends, as upstream's does: before it goes,
 * every download in progress is cut where its whole bytes end, so that
 * no file is left looking complete with holes in it.
 */
void
salvage(struct xrun *x)
{
	struct xfiles *lists[] = { &x->active, &x->waitq };
	struct xfile *f;
	struct xstripe *st;
	u_int i;
	int bad;

	for (i = 0; i < 2; i++)
		TAILQ_FOREACH(f, lists[i], qnext)
			if (f->st != NULL && is_get(f->job))
				f->st->hw[f->part] = MAXIMUM(f->rd.highwater,
				    f->pstart);
	for (i = 0; i < 2; i++) {
		TAILQ_FOREACH(f, lists[i], qnext) {
			if (!is_get(f->job)) {
				if (f->opened && (f->st == NULL ||
				    f->part == 0))
					error("upload \"%s\" to \"%s\" is "
					    "incomplete", f->src, f->dst);
				continue;
			}
			if ((st = f->st) == NULL) {
				salvage_cut(f->fd, f->dst, f->rd.highwater);
				continue;
			}
			if (st->whole->fd == -1)
				continue;
			salvage_cut(st->whole->fd, st->whole->dst,
			    stripe_prefix(st, &bad));
			close(st->whole->fd);
			st->whole->fd = -1;
		}
	}
}

/* The reply to f's OPEN, CLOSE or FSETSTAT (request q). */
void
reply_file(struct xrun *x, struct xreq *q, u_char type, struct sshbuf *m)
{
	struct xfile *f = q->f, *w;
	struct sftp_reply r;
	u_int status;

	switch (q->kind) {
	case XR_OPEN:
		switch (req_reply(x, q, type, m, SSH2_FXP_HANDLE, &r)) {
		case SFTP_R_BAD:
			return;
		case SFTP_R_STATUS:
			q->lane->nhandles--;
			if ((f->st == NULL || !f->st->whole->failed) &&
			    !dir_gone(f->parent))
				error("%s open \"%s\": %s",
				    is_get(f->job) ? "remote" : "dest",
				    is_get(f->job) ? f->src : f->dst,
				    fx2txt(r.status));
			f->failed = 1;
			/* what named it fails too, unsaid */
			f->open_failed = f->ref;
			f->ref = 0;
			f->step = F_CLOSED;
			if (f->st != NULL) {
				f->st->whole->failed = 1;
				stripe_release(x, f->st);
			}
			file_check(x, f);
			return;
		}
		if (!f->ref || f->step == F_DATA) {
			/* the handle itself from now on (unless its CLOSE
			 * named the OPEN: that closes it) */
			free(f->handle);
			f->handle = xmalloc(r.hlen);
			memcpy(f->handle, r.handle, r.hlen);
			f->hlen = r.hlen;
			f->step = F_DATA;
		}
		f->ref = 0;
		if (f->st != NULL && !is_get(f->job) && !f->st->created) {
			/* the file is there: the other parts may open it */
			f->st->created = 1;
			f->st->creating = 0;
			stripe_release(x, f->st);
		}
		/* the local file only once the remote one opened, as upstream */
		w = f->st != NULL ? f->st->whole : f;
		if (is_get(f->job) && !w->opened && !interrupted) {
			w->opened = 1;
			w->fd = open(w->dst, O_WRONLY | O_CREAT |
			    (w->job->inplace ? 0 : O_TRUNC), w->mode | S_IWUSR);
			if (w->fd == -1) {
				error("open local \"%s\": %s", w->dst,
				    strerror(errno));
				w->failed = 1;
			}
		}
		if (w->fd == -1 && is_get(f->job))
			f->failed = 1;
		file_check(x, f);
		return;
	case XR_FSETSTAT:
		if (req_status(x, q, type, m, &status) != 0)
			return;
		if (status != SSH2_FX_OK && !f->open_failed)
			error("remote fsetstat \"%s\": %s", f->dst,
			    fx2txt(status));
		/* a part's early size: by path again at the end */
		if (status != SSH2_FX_OK && f->st != NULL)
			f->st->sized = 0;
		file_check(x, f);
		return;
	case XR_CLOSE:
		if (req_status(x, q, type, m, &status) != 0)
			return;
		if (f->open_failed) {
			/* it named an OPEN that failed: nothing was open */
			file_check(x, f);
			return;
		}
		q->lane->nhandles--;
		if (status != SSH2_FX_OK) {
			error("close remote \"%s\": %s",
			    is_get(f->job) ? f->src : f->dst, fx2txt(status));
			f->close_failed = 1;
		}
		if (f->step == F_CLOSING)
			f->step = F_CLOSED;
		file_check(x, f);
		return;
	}
	fatal_f("internal error: request kind %d", q->kind);
}
