/*
 * HPN patch set: -n, a large file moved in parts (src/xfer/).
 *
 * Owns: the decisions about parts, not their requests: whether a file is
 * cut and into what size of parts (stripe_size()), a stripe's record of
 * its parts (where each starts, how far its bytes are whole, which got
 * all of theirs: stripe_new(), stripe_add()), where the file's whole
 * bytes end over its parts (stripe_prefix()), which part a connection that
 * ran dry takes the end of, and where it is cut (steal_pick()), and when
 * an inplace upload's size may go behind its last WRITEs
 * (stripe_size_now()).  file.c makes and finishes the parts; data.c sends
 * the size.
 * Calls: budget.c (part_left()).
 */

#include "includes.h"

#include <sys/types.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/*
 * -n: a large file (of size bytes, to move from its pstart: resume) is
 * moved in parts over the connections: at least HPN_STRIPE_PART bytes
 * each, about four per connection.  Returns the part size, 0: in one
 * piece.
 */
u_int64_t
stripe_size(struct xrun *x, struct xfile *f, u_int64_t size)
{
	u_int64_t part;
	u_int live = 0, i;

	for (i = 0; i < x->nlanes; i++)
		live += !x->lanes[i].dead;
	live += x->nplan - x->nlanes;	/* those still to join */
	size = size > f->pstart ? size - f->pstart : 0;
	if (live < 2 || f->st != NULL || size < 2 * HPN_STRIPE_PART)
		return 0;
	part = size / (4 * (u_int64_t)live);
	part = MAXIMUM(part, HPN_STRIPE_PART);
	part = (part + 65535) & ~(u_int64_t)65535;
	return part < size ? part : 0;
}

/*
 * The record of whole's parts: size bytes from its pstart in parts of
 * psize (the last one to the EOF); each part's start, its whole bytes
 * ending there so far.
 */
struct xstripe *
stripe_new(struct xfile *whole, u_int64_t size, u_int64_t psize)
{
	struct xstripe *st;
	u_int64_t off, left = size - whole->pstart;
	/* (no "+ psize - 1": a size near 2^64 would wrap) */
	u_int k, n = (u_int)(left / psize + (left % psize != 0));

	st = xcalloc(1, sizeof(*st));
	st->whole = whole;
	st->nparts = st->left = n;
	st->start = xcalloc(n, sizeof(*st->start));
	st->hw = xcalloc(n, sizeof(*st->hw));
	st->complete = xcalloc(n, sizeof(*st->complete));
	TAILQ_INIT(&st->parked);
	for (k = 0, off = whole->pstart; k < n; k++, off += psize)
		st->start[k] = st->hw[k] = off;
	return st;
}

/* One more part of st, from start: its number. */
u_int
stripe_add(struct xstripe *st, u_int64_t start)
{
	st->start = xrecallocarray(st->start, st->nparts,
	    st->nparts + 1, sizeof(*st->start));
	st->hw = xrecallocarray(st->hw, st->nparts, st->nparts + 1,
	    sizeof(*st->hw));
	st->complete = xrecallocarray(st->complete, st->nparts,
	    st->nparts + 1, sizeof(*st->complete));
	st->start[st->nparts] = st->hw[st->nparts] = start;
	st->left++;
	return st->nparts++;
}

void
stripe_free(struct xstripe *st)
{
	if (st == NULL)
		return;
	free(st->start);
	free(st->hw);
	free(st->complete);
	free(st);
}

/* Where part k of st ends: the lowest start above its own. */
u_int64_t
part_end(struct xstripe *st, u_int k)
{
	u_int64_t end = UINT64_MAX;
	u_int i;

	for (i = 0; i < st->nparts; i++)
		if (st->start[i] > st->start[k] && st->start[i] < end)
			end = st->start[i];
	return end;
}

/*
 * Where the bytes of the file of st stop being whole, over its parts by
 * offset; *bad: it is not whole to its end (a part incomplete, or data
 * past where the file ended).
 */
u_int64_t
stripe_prefix(struct xstripe *st, int *bad)
{
	u_int64_t next = st->whole->pstart, hw = next;
	u_int n, k;

	*bad = 0;
	for (n = 0; n < st->nparts; n++) {
		for (k = 0; k < st->nparts; k++)
			if (st->start[k] == next)
				break;
		if (k == st->nparts) {
			*bad = 1;	/* no part starts there */
			return hw;
		}
		hw = st->hw[k];
		if (!st->complete[k]) {
			*bad = 1;
			return hw;
		}
		next = part_end(st, k);
		if (hw < next && next != UINT64_MAX) {
			/*
			 * Whole, but ended short of the next part: the
			 * file shrank (an EOF came early).  Those after
			 * must have got nothing, or the data has a hole.
			 */
			for (k = 0; k < st->nparts; k++)
				if (st->start[k] >= next &&
				    st->hw[k] > st->start[k])
					*bad = 1;
			return hw;
		}
		if (next == UINT64_MAX)
			return hw;
	}
	return hw;
}

/*
 * -n: a connection with nothing left to ask for takes over the end of
 * what another still has to ask for of a part, as a new part of its own:
 * otherwise the last parts end on one connection while the others idle.
 * The part is the one whose connection would take longest over it (its
 * bytes over that connection's rate), and it is cut so that both end
 * together: the slower keeps its rate's share.  Connections share a path
 * unevenly (one ran at a tenth of another with cubic on a clean path),
 * and halves left the slow one draining alone for seconds.  Returns the
 * connection to open the new part on, with the part to cut in *fp and
 * where in *midp (file_split() cuts it); NULL when there is none to take.
 */
struct xlane *
steal_pick(struct xrun *x, struct xfile **fp, u_int64_t *midp)
{
	struct xfile *f, *best = NULL;
	struct xlane *thief = NULL, *l;
	u_int64_t left, bleft = 0, keep, start, mid;
	u_int i, busy[HPN_LANES_MAX];
	double t, bt = -1, rv, rt;

	memset(busy, 0, sizeof(busy));
	TAILQ_FOREACH(f, &x->active, qnext)
		if (f->lane != NULL && (f->st == NULL || part_left(f) > 0))
			busy[f->lane->idx]++;
	for (i = 0; i < x->nlanes; i++) {
		l = &x->lanes[i];
		if (l->dead || busy[i] > 0 || l->nhandles >= l->max_handles)
			continue;
		if (thief == NULL || l->rate > thief->rate)
			thief = l;
	}
	if (thief == NULL)
		return NULL;
	TAILQ_FOREACH(f, &x->active, qnext) {
		if (f->st == NULL || f->step != F_DATA || f->failed ||
		    f->lane == thief ||
		    (left = part_left(f)) < 2 * HPN_STRIPE_SPLIT)
			continue;
		/* the time its connection needs for it: longest first */
		t = (double)left / MAXIMUM(f->lane->rate, 1.0);
		if (t > bt) {
			best = f;
			bleft = left;
			bt = t;
		}
	}
	if (best == NULL)
		return NULL;
	f = best;
	rv = f->lane->rate;
	rt = thief->rate;
	keep = rv > 0 && rt > 0 ? (u_int64_t)(bleft * (rv / (rv + rt))) :
	    bleft / 2;
	keep = MINIMUM(keep, bleft - HPN_STRIPE_SPLIT);
	/*
	 * At least a byte: a connection of rate ~0 would keep nothing, and
	 * a part from the start of one not yet asked for would start where
	 * that one does.
	 */
	keep = MAXIMUM(keep, 1);
	start = is_get(f->job) ? f->rd.next : f->off;
	if (start + keep < start || start + keep > UINT64_MAX - 65535)
		return NULL;
	mid = (start + keep + 65535) & ~(u_int64_t)65535;
	if (mid <= start || mid > start + bleft - HPN_STRIPE_SPLIT)
		return NULL;
	debug2_f("\"%s\": from %llu to connection %u (%.1f MB/s; "
	    "connection %u, %.1f MB/s, keeps %llu)", f->src,
	    (unsigned long long)mid, thief->idx + 1, rt / 1e6,
	    f->lane->idx + 1, rv / 1e6, (unsigned long long)(mid - start));
	*fp = f;
	*midp = mid;
	return thief;
}

/*
 * put, inplace: part f has sent its last WRITE.  When every part still
 * open has (nothing of the file is left to send and every part done got
 * all its bytes), the file's size goes now, on f's handle behind its
 * WRITEs, as -n 1 sends it behind its data: not a round trip after the
 * last reply (part_done).  Writes still out on other connections are all
 * below that size.  If one of them fails after all, part_done cuts the
 * file where its contiguous bytes end, as without this.  Returns 1 with
 * the size in *sizep when it may go now.
 */
int
stripe_size_now(struct xrun *x, struct xfile *f, u_int64_t *sizep)
{
	struct xstripe *st = f->st;
	struct xfile *g;
	u_int n = 0;
	u_int64_t size = st->whole->off;

	if (!f->job->inplace || st->sized || st->whole->failed)
		return 0;
	TAILQ_FOREACH(g, &x->active, qnext) {
		if (g->st != st || g == st->whole)
			continue;
		if (!g->leof || g->failed || g->wstatus != SSH2_FX_OK)
			return 0;
		if (g->pend == UINT64_MAX)
			size = g->off;	/* the last part: the file's end */
		n++;
	}
	if (n != st->left)
		return 0;	/* parts wait to be opened or again */
	*sizep = size;
	return 1;
}
