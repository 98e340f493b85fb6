/*
 * HPN patch set: SFTP request pipelining sized for long fat paths.
 *
 * An SFTP client keeps a number of read or write requests in flight; their
 * total size bounds the transfer at that much per round trip, exactly like
 * a channel window.  Upstream keeps 64 requests: 2 MiB with 32 KiB requests,
 * 16 MiB with the 255 KiB that OpenSSH servers allow.  Here the count is
 * chosen so that the requests cover HPN_SFTP_INFLIGHT at first; the
 * engine then grows what it keeps in flight with the path (rate x RTT,
 * hpn_sftp_budget_grow()) as windows grow.  The channel's own window
 * still throttles the data, so a count that is larger than needed costs
 * only a few idle request headers.  -R (sftp) and -X nrequests= (scp) still override it.
 * It is computed once the request size is settled (after the server's
 * limits@openssh.com reply), so larger requests mean fewer of them.  Like
 * upstream since 10.1, the server's open-handles figure does not bound it:
 * requests in flight do not hold handles.
 */

#include "includes.h"

#include <sys/types.h>

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"
#include "misc.h"
#include "log.h"
#include "sshbuf.h"
#include "hpn.h"

/*
 * Requests to keep in flight: enough to cover HPN_SFTP_INFLIGHT with the
 * larger of the read and write sizes (a count sized by the smaller one
 * would put up to 4 times that in flight the other way, e.g. 1024 reads of
 * 255 KiB where the server takes 32 KiB writes), within bounds.
 */
u_int
hpn_sftp_num_requests(u_int rbuflen, u_int wbuflen)
{
	u_int64_t n;
	u_int buflen = MAXIMUM(rbuflen, wbuflen);

	if (buflen == 0)
		buflen = 32 * 1024;
	n = (HPN_SFTP_INFLIGHT + buflen - 1) / buflen;
	if (n < HPN_SFTP_REQUESTS_MIN)
		n = HPN_SFTP_REQUESTS_MIN;
	if (n > HPN_SFTP_REQUESTS_MAX)
		n = HPN_SFTP_REQUESTS_MAX;
	return (u_int)n;
}

/*
 * One connection's bytes in flight (budget), every round trip: its
 * requests are its window.  While the budget limits the transfer (it
 * moved at least half the budget over the last round trip) it grows to
 * HPN_SFTP_INFLIGHT_FACTOR x the rate x the round trip, up to
 * HPN_SFTP_INFLIGHT_MAX; it never shrinks.  Four times: what arrives
 * over a round trip was asked for under the budget of the round trip
 * before, so twice would trail TCP's slow start, and the channel's
 * window (hpn-window.c), not this budget, is what holds memory at
 * either end: requests in flight past what the path carries wait in
 * TCP's and the window's queues.  What it moved is what the server took
 * or gave, so a slow disk or reader gives a low rate and no growth.
 * moved bytes in dt seconds, rtt the round trip (0: unknown).
 */
u_int64_t
hpn_sftp_budget_grow(u_int64_t budget, u_int64_t moved, double dt, double rtt)
{
	double want;

	if (dt <= 0 || rtt <= 0 || budget >= HPN_SFTP_INFLIGHT_MAX ||
	    (double)moved / dt * rtt < budget / 2)
		return budget;
	want = HPN_SFTP_INFLIGHT_FACTOR * ((double)moved / dt) * rtt;
	if (want > HPN_SFTP_INFLIGHT_MAX)
		want = HPN_SFTP_INFLIGHT_MAX;
	return want > budget ? (u_int64_t)want : budget;
}

/*
 * What the SFTP transfer engine (hpn-sftp-xfer.c) plans by: how many
 * handles it may hold, and which ranges of a file it still has to read.
 * Pure logic, kept apart from the engine's I/O so that it can be tested.
 */

/*
 * Handles the engine may hold at once (files and directories): the
 * server's limits@openssh.com figure when it gave one (stock sftp-server:
 * RLIMIT_NOFILE - 5), HPN_SFTP_HANDLES_DEFAULT when it gave none or 0 ("no
 * limit of its own"), never more than HPN_SFTP_HANDLES_MAX, and so that
 * our own descriptor limit (nofile; 0: unknown) keeps HPN_SFTP_FD_RESERVE
 * spare: every file in flight holds a local descriptor too.
 */
u_int
hpn_sftp_max_handles(u_int64_t server, u_int64_t nofile)
{
	u_int64_t n = server != 0 ? server : HPN_SFTP_HANDLES_DEFAULT;

	if (n > HPN_SFTP_HANDLES_MAX)
		n = HPN_SFTP_HANDLES_MAX;
	if (nofile != 0) {
		if (nofile <= HPN_SFTP_FD_RESERVE)
			n = 1;
		else if (n > nofile - HPN_SFTP_FD_RESERVE)
			n = nofile - HPN_SFTP_FD_RESERVE;
	}
	return n < 1 ? 1 : (u_int)n;
}

/*
 * -n: the bytes one connection may have asked for and not yet got, from
 * what it moved (moved bytes in dt seconds) and the path's round trip
 * (rtt s): headroom times its rate's worth of a round trip
 * (HPN_LANE_HEADROOM: room to grow as fast as TCP's slow start; at the
 * end, HPN_LANE_END_HEADROOM), plus HPN_LANE_BUDGET_MIN; at most max (the
 * path's whole budget).
 */
u_int64_t
hpn_sftp_lane_budget(u_int64_t moved, double dt, double rtt, double headroom,
    u_int64_t max)
{
	double b;

	if (dt <= 0 || rtt <= 0)
		return max;
	b = (double)moved / dt * rtt * headroom + HPN_LANE_BUDGET_MIN;
	if (b >= (double)max)
		return max;
	return (u_int64_t)b;
}

/*
 * -n: the bytes all connections together may have asked for and not yet
 * got (0: no cap), every round trip, from their summed rate (bytes a
 * second over the last one) and the path's lowest round trip (rtt s).
 * Each connection's own budget leaves it room to grow 4x a round trip;
 * together that is N times what the path holds, and on a path with a
 * deep queue N connections then fill it up and lose packets where one
 * connection's flow control stops short of it (ssh's channel window): a
 * clean 1 Gbit/s, 100 ms path with a one-BDP queue lost 4-5 % to it.  So
 * once the sum stops growing (by HPN_LANE_GROWING a round trip) and until
 * the end, together they hold HPN_LANE_ALL_HEADROOM round trips of the
 * best sum of the last HPN_LANE_ALL_WINDOW: the link stays full, the
 * queue half empty.  The best of several, not the last: on a lossy path
 * one connection's recovery stalls its replies for a round trip, and a
 * cap that followed that dip held the others back (their rate comes in
 * bursts there, and the best of them leaves the cap above what they
 * hold).  The cap rests on the lowest round trip: should the path's round
 * trip grow (a new route, someone else's queue), it would hold the rate
 * down; so when the capped rate falls below HPN_LANE_ALL_FALL of its best
 * two round trips in a row, it is given up for the rest of the run.
 */
u_int64_t
hpn_sftp_lanes_cap(struct hpn_sftp_cap *c, double rate, double rtt, int end)
{
	double prev = c->next == 0 ? 0 :
	    c->last[(c->next - 1) % HPN_LANE_ALL_WINDOW];
	int growing = prev <= 0 || rate > HPN_LANE_GROWING * prev;
	double top = rate;
	u_int i;

	c->last[c->next++ % HPN_LANE_ALL_WINDOW] = rate;
	if (c->off || end || growing || rtt <= 0 || rate <= 0) {
		c->low = 0;
		return 0;
	}
	if (c->best > 0 && rate < HPN_LANE_ALL_FALL * c->best) {
		if (++c->low >= 2) {
			c->off = 1;
			return 0;
		}
	} else
		c->low = 0;
	if (rate > c->best)
		c->best = rate;
	for (i = 0; i < HPN_LANE_ALL_WINDOW; i++)
		top = MAXIMUM(top, c->last[i]);
	return (u_int64_t)(top * rtt * HPN_LANE_ALL_HEADROOM) +
	    HPN_LANE_BUDGET_MIN;
}

/*
 * Reads of one file.  With its size known (from its attributes) the reads
 * cover [0, size) in requests of at most buflen, and one more at size (the
 * probe) shows the end: all of them can go out at once, with the CLOSE
 * right behind.  A short read leaves a gap that is asked for again; an EOF
 * below the size (the file shrank) ends the file there; data at or past
 * the size (it grew) turns the file into one of unknown size, read on
 * until an EOF as upstream does, HPN_SFTP_RD_WINDOW reads at a time.
 * highwater/maxack/reordered are upstream's: the contiguous prefix
 * acknowledged, to truncate an interrupted file at.
 */
#define RD_NONE	(~(u_int64_t)0)

void
hpn_sftp_rd_init(struct hpn_sftp_rd *rd, u_int64_t size, int size_known,
    u_int buflen)
{
	memset(rd, 0, sizeof(*rd));
	rd->size = size;
	rd->size_known = size_known;
	rd->eof = RD_NONE;
	rd->limit = RD_NONE;
	rd->buflen = buflen == 0 ? 32768 : buflen;
}


void
hpn_sftp_rd_free(struct hpn_sftp_rd *rd)
{
	free(rd->gaps);
	rd->gaps = NULL;
	rd->ngaps = 0;
}

/* Drop gaps at or past the end of the file. */
static void
rd_trim_gaps(struct hpn_sftp_rd *rd)
{
	u_int i, j;

	for (i = j = 0; i < rd->ngaps; i++) {
		if (rd->gaps[i].off >= rd->eof)
			continue;
		if (rd->gaps[i].off + rd->gaps[i].len > rd->eof)
			rd->gaps[i].len = rd->eof - rd->gaps[i].off;
		rd->gaps[j++] = rd->gaps[i];
	}
	rd->ngaps = j;
}

int
hpn_sftp_rd_next(struct hpn_sftp_rd *rd, u_int64_t *offp, u_int *lenp)
{
	struct hpn_sftp_gap *g;
	u_int64_t len;

	rd_trim_gaps(rd);
	if (rd->ngaps > 0) {
		g = &rd->gaps[0];
		len = g->len < rd->buflen ? g->len : rd->buflen;
		*offp = g->off;
		*lenp = (u_int)len;
		g->off += len;
		g->len -= len;
		if (g->len == 0) {
			memmove(rd->gaps, rd->gaps + 1,
			    (rd->ngaps - 1) * sizeof(*rd->gaps));
			rd->ngaps--;
		}
		rd->inflight++;
		return 1;
	}
	if (rd->next >= rd->eof)
		return 0;
	if (rd->size_known && rd->next < rd->size) {
		len = rd->size - rd->next;
		if (len > rd->buflen)
			len = rd->buflen;
	} else if (rd->size_known && rd->next == rd->size) {
		len = rd->buflen;	/* the probe */
	} else if (!rd->size_known && rd->inflight < HPN_SFTP_RD_WINDOW) {
		len = rd->buflen;
	} else
		return 0;
	if (rd->limit != RD_NONE && len > rd->limit - rd->next)
		len = rd->limit - rd->next;	/* a part: to its end */
	if (len > RD_NONE - rd->next)
		len = RD_NONE - rd->next;	/* a size near 2^64 */
	if (len == 0)
		return 0;
	*offp = rd->next;
	*lenp = (u_int)len;
	rd->next += len;
	rd->inflight++;
	return 1;
}

/* Upstream's tracking of the contiguous prefix acknowledged. */
void
hpn_sftp_rd_ack(struct hpn_sftp_rd *rd, u_int64_t off, u_int64_t len)
{
	if (rd->maxack < off + len)
		rd->maxack = off + len;
	if (!rd->reordered && off <= rd->highwater)
		rd->highwater = rd->maxack;
	else if (!rd->reordered && off > rd->highwater)
		rd->reordered = 1;
}

void
hpn_sftp_rd_data(struct hpn_sftp_rd *rd, u_int64_t off, u_int asked,
    size_t got)
{
	struct hpn_sftp_gap *g;

	if (rd->inflight > 0)
		rd->inflight--;
	rd->got += got;
	rd->empty = got == 0 ? rd->empty + 1 : 0;
	hpn_sftp_rd_ack(rd, off, got);
	if (got > 0 && rd->eof != RD_NONE && off > rd->eof) {
		/*
		 * Data past an EOF: the file grew after that read, or the
		 * server misspoke.  What lies between was answered EOF and
		 * is asked for again (else a hole in the file).
		 */
		rd->gaps = xreallocarray(rd->gaps, rd->ngaps + 1,
		    sizeof(*rd->gaps));
		g = &rd->gaps[rd->ngaps++];
		g->off = rd->eof;
		g->len = off - rd->eof;
	}
	if (got > 0 && (off + got > rd->eof ||
	    (rd->size_known && off + got > rd->size))) {
		if (rd->limit != RD_NONE) {
			/* a part: never past its end */
			rd->eof = rd->limit;
		} else {
			/* It grew: read on until an EOF, as upstream does. */
			rd->size_known = 0;
			rd->eof = RD_NONE;
		}
	}
	if (got < asked && off + got < rd->eof) {
		rd->gaps = xreallocarray(rd->gaps, rd->ngaps + 1,
		    sizeof(*rd->gaps));
		g = &rd->gaps[rd->ngaps++];
		g->off = off + got;
		g->len = asked - got;
		/* upstream: a server that sends less gets asked for less */
		if (got < rd->buflen)
			rd->buflen = got < HPN_SFTP_RD_MIN ?
			    HPN_SFTP_RD_MIN : (u_int)got;
	}
}

void
hpn_sftp_rd_eof(struct hpn_sftp_rd *rd, u_int64_t off)
{
	if (rd->inflight > 0)
		rd->inflight--;
	if (off < rd->eof)
		rd->eof = off;
	rd_trim_gaps(rd);
}

/*
 * A part of a file (-n) ends at limit: nothing past it is asked for, and
 * data that would run past it does not make the file "grow".
 */
void
hpn_sftp_rd_limit(struct hpn_sftp_rd *rd, u_int64_t limit)
{
	rd->limit = limit;
	if (limit < rd->eof)
		rd->eof = limit;
	if (rd->size_known && rd->size > limit)
		rd->size = limit;
	rd_trim_gaps(rd);
}

/* Every read known to be needed has gone out: the CLOSE may follow. */
int
hpn_sftp_rd_planned(const struct hpn_sftp_rd *rd)
{
	if (rd->ngaps > 0)
		return 0;
	if (rd->eof != RD_NONE)
		return rd->next >= rd->eof;
	return rd->size_known && rd->next > rd->size;
}

/* All of the file is here: an EOF seen and everything before it read. */
int
hpn_sftp_rd_done(const struct hpn_sftp_rd *rd)
{
	return rd->inflight == 0 && rd->eof != RD_NONE && rd->ngaps == 0 &&
	    rd->next >= rd->eof;
}

/*
 * Handle references (HPN_REF_EXT): a request may name, in place of a
 * handle, the OPEN or OPENDIR that is to make it, before its reply is
 * back.  A reference is HPN_REF_MAGIC and one to HPN_REF_IDS request ids
 * (uint32, big-endian): the handle of the first of them that made one and
 * is still open.  A real handle of sftp-server is 4 bytes, so the two
 * never meet.  The server answers requests in order, so the OPEN is done
 * when a request naming it comes; one that failed leaves the reference
 * unresolved, and the request fails as one with an unknown handle does.
 *
 * The server's side: which request made each open handle.
 */
static struct {
	u_int32_t id;
	int set;
} *refs;
static u_int nrefs;

/* sftp-server sends handle h in answer to request id. */
void
hpn_sftp_ref_note(u_int32_t id, int h)
{
	u_int i;

	if (h < 0)
		return;
	/* ids come round again after 2^32 requests: the newest wins */
	for (i = 0; i < nrefs; i++)
		if (refs[i].set && refs[i].id == id)
			refs[i].set = 0;
	if ((u_int)h >= nrefs) {
		refs = xrecallocarray(refs, nrefs, (u_int)h + 1,
		    sizeof(*refs));
		nrefs = (u_int)h + 1;
	}
	refs[h].id = id;
	refs[h].set = 1;
}

/* Handle h is closed (or was never used). */
void
hpn_sftp_ref_forget(int h)
{
	if (h >= 0 && (u_int)h < nrefs)
		refs[h].set = 0;
}

/*
 * The handle a reference stands for, -1 when it stands for none, or -2
 * when s is not a reference (a handle to look up as usual).
 */
int
hpn_sftp_ref_resolve(const u_char *s, size_t len)
{
	u_int i, k, n;
	u_int32_t id;

	if (len < 1 + 4 || s[0] != HPN_REF_MAGIC || (len - 1) % 4 != 0 ||
	    (n = (len - 1) / 4) > HPN_REF_IDS)
		return -2;
	for (k = 0; k < n; k++) {
		id = PEEK_U32(s + 1 + 4 * k);
		for (i = 0; i < nrefs; i++)
			if (refs[i].set && refs[i].id == id)
				return (int)i;
	}
	return -1;
}

/* The client's side: a reference to the n requests ids, in buf. */
size_t
hpn_sftp_ref_make(u_char *buf, const u_int32_t *ids, u_int n)
{
	u_int k;

	if (n < 1 || n > HPN_REF_IDS)
		fatal_f("%u ids", n);
	buf[0] = HPN_REF_MAGIC;
	for (k = 0; k < n; k++)
		POKE_U32(buf + 1 + 4 * k, ids[k]);
	return 1 + 4 * n;
}
