/*
 * HPN patch set: what the transfer engine has finished (src/xfer/).
 *
 * Owns: the counts that tell when a directory is done (its own listing
 * and each child: dir_child_done()), and what is done then: a downloaded
 * directory's times and mode set locally, an uploaded one's attributes
 * by SETSTAT, its parent told, or the job counted done; a directory's
 * handle closed once its listing ends (dir_end()); the queues of
 * directories waiting for a handle or being listed.  An uploaded
 * directory's SETSTAT goes as soon as all in it has been asked to be
 * made, where the server takes requests in order (dir_attr_early()).
 * Calls: wire.c.
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <errno.h>
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

#include "hpn.h"
#include "xfer.h"

extern volatile sig_atomic_t interrupted;

void
dir_free(struct xdir *d)
{
	struct xname *n, *nn;
	u_int i;

	for (i = 0; d->tstack != NULL && i <= d->tdepth; i++)
		free(d->tstack[i].rel);
	for (n = RB_MIN(xnames, &d->names); n != NULL; n = nn) {
		nn = RB_NEXT(xnames, &d->names, n);
		RB_REMOVE(xnames, &d->names, n);
		free(n->name);
		free(n);
	}
	free(d->src);
	free(d->dst);
	free(d->handle);
	free(d->tstack);
	free(d);
}

void
dirq_add(struct xrun *x, struct xdir *d)
{
	if (d->queued == DQ_NONE) {
		TAILQ_INSERT_TAIL(&x->dirq, d, qnext);
		d->queued = DQ_DIRQ;
	}
}

void
dirq_del(struct xrun *x, struct xdir *d)
{
	if (d->queued == DQ_DIRQ)
		TAILQ_REMOVE(&x->dirq, d, qnext);
	else if (d->queued == DQ_LISTING)
		TAILQ_REMOVE(&x->listing, d, qnext);
	d->queued = DQ_NONE;
}

/* put: d's attributes by SETSTAT (only errors are said). */
static void
dir_setstat(struct xrun *x, struct xdir *d)
{
	struct xreq *q;

	q = req_new(x, XR_SETSTAT, NULL, NULL);
	q->path = xstrdup(d->dst);
	req_path(x, SSH2_FXP_SETSTAT, q, d->dst, &d->a);
}

/* put: d was asked to be made (or given up): its parent is told, once. */
void
dir_made(struct xrun *x, struct xdir *d)
{
	if (d->parent == NULL || d->dmade)
		return;
	d->dmade = 1;
	dir_child_made(x, d->parent);
}

/* Everything in d is done: its own attributes, then its parent. */
static void
dir_finish(struct xrun *x, struct xdir *d)
{
	struct timeval tv[2];
	struct xdir *parent = d->parent;
	int ret = d->failed ? -1 : 0;

	if (is_get(d->job) && d->made) {
		if (d->job->preserve && !interrupted) {
			if (d->a.flags & SSH2_FILEXFER_ATTR_ACMODTIME) {
				tv[0].tv_sec = d->a.atime;
				tv[1].tv_sec = d->a.mtime;
				tv[0].tv_usec = tv[1].tv_usec = 0;
				if (utimes(d->dst, tv) == -1)
					error("local set times on \"%s\": %s",
					    d->dst, strerror(errno));
			} else
				debug("Server did not send times for "
				    "directory \"%s\"", d->dst);
		}
		if (d->mode != d->tmpmode && chmod(d->dst, d->mode) == -1)
			error("local chmod directory \"%s\": %s", d->dst,
			    strerror(errno));
	} else if (!is_get(d->job) && d->ok && !interrupted &&
	    !d->attr_sent && (d->created || d->job->preserve))
		dir_setstat(x, d);
	if (ret != 0)
		d->job->ret = -1;
	dir_made(x, d);
	if (parent != NULL)
		dir_child_done(x, parent, ret);
	else
		x->jobs_left--;
	dir_free(d);
}

/*
 * put: d's attributes (the mode its MKDIR could not give, the times of
 * -p), once every name in it has been asked for (its OPEN or MKDIR sent:
 * what changes a directory's times), not once every answer is in: on a
 * connection where the server takes requests in order (HPN_REF_EXT; one
 * connection), the SETSTAT comes after them there, and the run does not
 * end a round trip later than its data does.  A mode without write
 * permission comes after the names are made; writes to files already
 * open do not need it.  Not before the answer to d's own MKDIR: whether
 * it made d decides (dir_finish()).
 */
void
dir_attr_early(struct xrun *x, struct xdir *d)
{
	if (is_get(d->job) || d->unmade != 0 || d->attr_sent || d->ahead ||
	    !d->ok || d->failed || interrupted || x->nplan != 1 ||
	    !L0(x)->h->can_ref || (!d->created && !d->job->preserve))
		return;
	d->attr_sent = 1;
	dir_setstat(x, d);
	debug3_f("\"%s\": all in it asked for", d->dst);
}

/* put: one more name in d asked to be made (or given up, or d listed). */
void
dir_child_made(struct xrun *x, struct xdir *d)
{
	if (d->unmade == 0)
		fatal_f("\"%s\": more made than were in it", d->dst);
	if (--d->unmade == 0)
		dir_attr_early(x, d);
}

/*
 * put: d, or a directory it is in, was walked before its MKDIR's answer
 * and is not there: what fails in it is not said again.
 */
int
dir_gone(const struct xdir *d)
{
	for (; d != NULL; d = d->parent)
		if (d->gone)
			return 1;
	return 0;
}

void
dir_child_done(struct xrun *x, struct xdir *d, int ret)
{
	if (ret != 0)
		d->job->ret = -1;
	if (--d->pending == 0)
		dir_finish(x, d);
}

/* Its own listing (or walk) is over. */
void
dir_listed(struct xrun *x, struct xdir *d)
{
	d->step = D_DONE;
	dirq_del(x, d);
	dir_child_made(x, d);
	dir_child_done(x, d, d->failed ? -1 : 0);
}

/* d is done with (failed, or listed): its handle goes, then it is listed. */
void
dir_end(struct xrun *x, struct xdir *d)
{
	dirq_del(x, d);
	if (d->handle != NULL) {
		req_handle(x, SSH2_FXP_CLOSE, req_new(x, XR_DCLOSE, NULL, d),
		    d->handle, d->hlen, NULL);
		free(d->handle);
		d->handle = NULL;
		return;		/* listed when the CLOSE is answered */
	}
	dir_listed(x, d);
}

void
dir_fail(struct xrun *x, struct xdir *d)
{
	d->failed = 1;
	d->job->ret = -1;
	dir_end(x, d);
}

