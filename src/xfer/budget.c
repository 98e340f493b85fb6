/*
 * HPN patch set: what each connection of a run may hold out (src/xfer/).
 *
 * Owns: the decisions of how the bytes in flight are shared among a run's
 * connections: which connection a file opens on (lane_pick()), each
 * one's budget from its own rate every round trip and the cap on all of
 * them together (lanes_tune(), on hpn-sftp.c's hpn_sftp_lane_budget() and
 * hpn_sftp_lanes_cap()), the round trip measured (lane_rtt()).  With one
 * connection its budget starts at what the path's requests were sized to
 * and grows, every round trip, as a window does (lane_grow(), on
 * hpn_sftp_budget_grow()); the READ/WRITE count follows the budget.
 * Calls: hpn-sftp.c (the library's pure logic); nothing of src/xfer/ (it
 * reads and sets struct xrun's fields).
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
 * The bytes of open file f not asked for yet: a read's worth while its
 * size is unknown (or it grew), none once its known size has been asked
 * for (the READ at the size should come back EOF: send_read() counts it
 * as nothing, and so does this).  Counting a read's worth for each file
 * whose size was all asked held a download of small files to a budget's
 * worth of read lengths a round trip: 258 files per round trip at 64 MiB.
 */
u_int64_t
file_unasked(struct xrun *x, struct xfile *f)
{
	if (is_get(f->job)) {
		if (!f->rd.size_known)
			return x->h->rbuflen;
		return f->rd.next < f->rd.size ? f->rd.size - f->rd.next : 0;
	}
	return f->size > f->off ? f->size - f->off : 0;
}

/*
 * The bytes of the open files on connection l not asked for yet (every
 * open file has its connection: with one, all of them).
 */
u_int64_t
lane_unasked(struct xrun *x, struct xlane *l)
{
	struct xfile *f;
	u_int64_t n = 0;

	TAILQ_FOREACH(f, &x->active, qnext)
		if (f->lane == l)
			n += file_unasked(x, f);
	return n;
}

/*
 * -n: the connection for the next file or part to open, the one with the
 * least work left on it (bytes not yet asked for, and in flight) that has
 * a handle to spare; NULL when none has.
 */
/* the loop */

/* Bytes of part f not asked for (read) or not sent (written) yet. */
u_int64_t
part_left(struct xfile *f)
{
	u_int64_t end;

	if (is_get(f->job)) {
		end = f->pend != UINT64_MAX ? f->pend : f->rd.size;
		return f->rd.ngaps == 0 && f->rd.next < end ?
		    end - f->rd.next : 0;
	}
	end = f->pend != UINT64_MAX ? f->pend : f->size;
	return f->off < end ? end - f->off : 0;
}

struct xlane *
lane_pick(struct xrun *x)
{
	struct xlane *l, *best = NULL;
	struct xfile *f;
	u_int64_t load[HPN_LANES_MAX];
	u_int i;

	for (i = 0; i < x->nlanes; i++)
		load[i] = x->lanes[i].inflight;
	TAILQ_FOREACH(f, &x->active, qnext)
		if (f->lane != NULL)
			load[f->lane->idx] += file_unasked(x, f);
	for (i = 0; i < x->nlanes; i++) {
		l = &x->lanes[i];
		if (l->dead || l->nhandles >= l->max_handles)
			continue;
		if (best == NULL || load[i] < load[best->idx])
			best = l;
	}
	return best;
}

/* The round trip of a data request, as the quickest reply says. */
void
lane_rtt(struct xrun *x, struct xreq *q)
{
	double t;

	if (q->sent <= 0)
		return;
	t = monotime_double() - q->sent;
	if (x->rtt <= 0 || t < x->rtt)
		x->rtt = t;
}

/*
 * -n: each connection's budget follows what it moves.  Connections share
 * the path unevenly (one may run at a tenth of another for the whole
 * transfer), and bytes asked for on a slow one wait there: at the end,
 * the others idle while they drain.  Once a round trip is known, each
 * connection's budget is sized, every round trip, to what it moved in the
 * last one (hpn_sftp_lane_budget()): room to grow as fast as TCP's slow
 * start, little left waiting on a slow one, and the rest of its parts not
 * asked for yet goes to the others (steal()).  Together they hold no more
 * than the path needs once their sum is steady (hpn_sftp_lanes_cap()).
 */
#define LANE_TICK_MIN	0.05	/* s: not more often */

/* READ/WRITE requests out on l, at most: enough for its budget. */
static void
lane_maxdata(struct xlane *l)
{
	u_int64_t n;

	if (l->dead || l->h == NULL)	/* dropped: its connection is gone */
		return;
	n = l->budget / MAXIMUM(1, MINIMUM(l->h->rbuflen, l->h->wbuflen)) + 1;
	n = MAXIMUM(n, (u_int64_t)l->h->nreq * X_DATA_REQS);
	l->maxdata = (u_int)MINIMUM(n, HPN_SFTP_DATA_REQS_MAX);
}

/*
 * One connection: its budget is its requests' window, grown every round
 * trip as a channel window is (hpn_sftp_budget_grow()).
 */
static void
lane_grow(struct xrun *x)
{
	struct xlane *l = L0(x);
	u_int64_t old = l->budget;
	double now = monotime_double(), dt;

	if (x->rtt <= 0)
		return;
	if (x->tick <= 0) {
		x->tick = now;
		l->tick_moved = l->moved;
		return;
	}
	if ((dt = now - x->tick) < MAXIMUM(x->rtt, LANE_TICK_MIN))
		return;
	l->budget = hpn_sftp_budget_grow(l->budget, l->moved - l->tick_moved,
	    dt, x->rtt);
	l->tick_moved = l->moved;
	x->tick = now;
	if (l->budget == old)
		return;
	lane_maxdata(l);
	debug2_f("bytes in flight %llu -> %llu (rtt %.3f s)",
	    (unsigned long long)old, (unsigned long long)l->budget, x->rtt);
}

void
lanes_tune(struct xrun *x)
{
	struct xlane *l;
	struct xfile *f;
	double now, dt;
	u_int64_t unasked = 0, held = 0;
	u_int64_t cap, bsum = 0;
	double rsum = 0;
	u_int i;
	int end, off;

	if (x->nplan < 2) {
		lane_grow(x);
		return;
	}
	if (x->rtt <= 0)
		return;
	now = monotime_double();
	if (x->tick <= 0) {
		x->tick = now;		/* the first measure starts */
		for (i = 0; i < x->nlanes; i++)
			x->lanes[i].tick_moved = x->lanes[i].moved;
		return;
	}
	if ((dt = now - x->tick) < MAXIMUM(x->rtt, LANE_TICK_MIN))
		return;
	/*
	 * The end: nothing waits to be opened and what the parts have not
	 * asked for yet is less than the connections may hold out.  Every
	 * byte asked for on a connection waits for it alone, so the last
	 * connection to drain decides when the transfer ends: each now
	 * holds out only HPN_LANE_END_HEADROOM round trips of its rate, and
	 * the rest stays to be taken by whichever runs dry (steal()).
	 */
	TAILQ_FOREACH(f, &x->active, qnext)
		if (f->st != NULL)
			unasked += part_left(f);
	for (i = 0; i < x->nlanes; i++)
		held += hpn_sftp_lane_budget(x->lanes[i].moved -
		    x->lanes[i].tick_moved, dt, x->rtt, HPN_LANE_HEADROOM,
		    x->budget_max);
	end = TAILQ_EMPTY(&x->waitq) && unasked < held;
	for (i = 0; i < x->nlanes; i++) {
		l = &x->lanes[i];
		/* smoothed: one round trip's count swings with its losses */
		l->rate = l->rate <= 0 ? (l->moved - l->tick_moved) / dt :
		    (l->rate + (l->moved - l->tick_moved) / dt) / 2;
		l->budget = hpn_sftp_lane_budget(l->moved - l->tick_moved, dt,
		    x->rtt, end ? HPN_LANE_END_HEADROOM : HPN_LANE_HEADROOM,
		    x->budget_max);
		lane_maxdata(l);
		rsum += (l->moved - l->tick_moved) / dt;
		bsum += l->budget;
		l->tick_moved = l->moved;
	}
	/* together: a cap once their sum stops growing */
	off = x->cap.off;
	if ((cap = hpn_sftp_lanes_cap(&x->cap, rsum, x->rtt, end)) != 0 &&
	    bsum > cap) {
		for (i = 0; i < x->nlanes; i++) {
			l = &x->lanes[i];
			l->budget = MAXIMUM(HPN_LANE_BUDGET_MIN,
			    (u_int64_t)(l->budget * ((double)cap / bsum)));
			lane_maxdata(l);
		}
	}
	if (x->cap.off && !off)
		debug2_f("the rate fell under the cap: no cap from now");
	x->tick = now;
}

/*
 * A connection's budget as it joins the run: the bytes in flight the path
 * wants (its requests times their size), shared among the connections
 * planned (-n).
 */
void
lane_budget_init(struct xrun *x, struct xlane *l)
{
	struct hpn_sftp *h = l->h;

	/*
	 * The bytes in flight the path wants, shared: each connection then
	 * holds only its share out, and a part's rest not asked for yet can
	 * go to a connection that runs dry (steal()).
	 */
	l->budget = (u_int64_t)h->nreq * MAXIMUM(h->rbuflen, h->wbuflen);
	/* -n: each may grow as one alone would (lanes_tune() caps the sum) */
	x->budget_max = MAXIMUM(x->budget_max,
	    MAXIMUM(l->budget, HPN_SFTP_INFLIGHT_MAX));
	/*
	 * -n: until a round trip is known (lanes_tune()), at most
	 * HPN_LANE_BUDGET_START: what a connection asks for before the
	 * others join stays with it, however slow it turns out to be.
	 */
	if (x->nplan > 1)
		l->budget = MAXIMUM(MINIMUM(l->budget / x->nplan,
		    HPN_LANE_BUDGET_START), 2 * HPN_STRIPE_SPLIT);
	lane_maxdata(l);
}
