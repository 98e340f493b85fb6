/*
 * HPN patch set: an SFTP transfer engine that keeps many files in flight
 * (src/xfer/engine.c: its top layer; the layers below are listed in
 * xfer.h, the map is in HACKING.md).
 *
 * Upstream's sftp and scp move one file at a time, and each file costs
 * round trips in series: stat, open, data, close, attributes.  On a long
 * path a tree of small files then moves at a few files per second, however
 * large the windows.  Here one event loop over the one SFTP session keeps
 * many files in flight:
 *
 *  - the OPENs of the next files go out while earlier files' data flows;
 *  - the reads and writes of all files share one budget of bytes in flight
 *    (the ~64 MiB hpn-sftp.c sizes the request count to), oldest files
 *    first so that they finish and free their handles;
 *  - CLOSE and FSETSTAT go out right behind a file's data, SETSTAT of a
 *    directory once its contents are done: nothing waits for their replies;
 *  - directories are created before the files in them: a download's local
 *    directory before its listing is read, an upload's MKDIR acknowledged
 *    before the OPENs of its files go out (SFTP lets a server reorder
 *    requests on different paths);
 *  - the handles held (files and directories, asked for or open) stay
 *    within the server's limits@openssh.com open-handles figure, or
 *    HPN_SFTP_HANDLES_DEFAULT for servers that give none;
 *  - replies are matched to requests by id; an error on one file names the
 *    file and the others carry on; the caller's status is -1.
 * For a single file the requests that do not wait on each other go out
 * together: STAT/REALPATH/OPENDIR, the reads (exactly the size, then one
 * at the end to see it) and the CLOSE, the writes, FSETSTAT and CLOSE.
 * With INIT (sftp_init) go the limits request and, for scp, the stat of
 * the first path it will look at (hpn_sftp_prefetch), answered from a
 * one-shot cache.
 *
 * It needs nothing of the server beyond SFTP version 3.  Per file it does
 * what upstream's sftp_download()/sftp_upload() and the directory walks
 * do, with the same paths and checks (names with '/' from a server's
 * listing are refused, "." and ".." skipped).  Resume (-Z, -a, reget,
 * reput) of a single file is planned before the run (hpn-sftp-resume.c)
 * and moves the rest from there; resume of trees, fsync of uploads and
 * bandwidth limits (-l) are left to upstream's code.
 * On Ctrl-C (interrupted) it stops asking, lets what is out drain,
 * truncates a partial download at its contiguous end and sets no times on
 * anything incomplete.
 *
 * This file owns: the jobs the hooks hand over (hpn_sftp_get() and the
 * others, batched by sftp's globs and scp's sources), the run
 * (run_jobs(): every job's first requests out together, then the loop),
 * scheduling (schedule(): directories, files opened within the budgets,
 * -n's steal, every open file's reads or writes), the replies dispatched
 * by the kind of request they answer, and what follows when a connection
 * breaks: another one (-n) is dropped and its files start again on the
 * others; the first one ends the run, every download in progress cut
 * where its bytes are whole (salvage()), as upstream's fatal() would.
 * Calls: every layer below (xfer.h).
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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
extern int showprogress;

/* ------------------------------------------------------------------ */
/* jobs: what the callers asked for */

static int batching;
static struct xjobs batchq = TAILQ_HEAD_INITIALIZER(batchq);
static int batch_failed;

static int run_jobs(struct hpn_sftp *, struct xjobs *);

static struct xjob *
job_new(struct sftp_conn *conn, struct hpn_sftp *h, int kind,
    const char *src, const char *dst)
{
	struct xjob *j;

	j = xcalloc(1, sizeof(*j));
	j->conn = conn;
	j->h = h;
	j->kind = kind;
	j->src = xstrdup(src);
	j->dst = xstrdup(dst);
	return j;
}

static void
job_free(struct xjob *j)
{
	free(j->src);
	free(j->dst);
	free(j);
}

/*
 * Resume (planned before the run): the job moves the bytes from `from' on,
 * written in place over what is there (checked to be the source's start,
 * and no longer than it); 0: the whole file, as without resume.
 */
static void
job_resume(struct xjob *j, u_int64_t from)
{
	j->from = from;
	if (from > 0)
		j->inplace = 1;
}

/* A job that failed before it could be queued (said). */
static int
submit_failed(void)
{
	if (batching) {
		batch_failed = 1;
		return 0;
	}
	return -1;
}

/* Now, or at the end of the batch (then 0 now). */
static int
submit(struct xjob *j)
{
	struct xjobs q;
	int ret;

	if (batching) {
		TAILQ_INSERT_TAIL(&batchq, j, next);
		return 0;
	}
	TAILQ_INIT(&q);
	TAILQ_INSERT_TAIL(&q, j, next);
	ret = run_jobs(j->h, &q);
	return ret;
}

int
hpn_sftp_get(struct sftp_conn *conn, struct hpn_sftp *h, const char *src,
    const char *dst, struct Attrib *a, int preserve, int resume, int fsync,
    int inplace)
{
	struct xjob *j;
	u_int64_t from = 0;

	if (h == NULL || h->upstream)
		return HPN_SFTP_UPSTREAM;
	if (resume && hpn_sftp_resume_plan_get(h, src, dst, resume,
	    &from) != 0)
		return submit_failed();
	j = job_new(conn, h, J_GET, src, dst);
	if (a != NULL) {
		j->a = *a;
		j->have_a = 1;
	}
	j->preserve = preserve;
	j->fsync = fsync;
	j->inplace = inplace;
	job_resume(j, from);
	return submit(j);
}

int
hpn_sftp_get_dir(struct sftp_conn *conn, struct hpn_sftp *h, const char *src,
    const char *dst, struct Attrib *dirattrib, int preserve, int print_flag,
    int resume, int fsync, int follow, int inplace)
{
	struct xjob *j;

	if (h == NULL || h->upstream || resume)
		return HPN_SFTP_UPSTREAM;
	j = job_new(conn, h, J_GETDIR, src, dst);
	if (dirattrib != NULL) {
		j->a = *dirattrib;
		j->have_a = 1;
	}
	j->preserve = preserve;
	j->print_flag = print_flag;
	j->fsync = fsync;
	j->follow = follow;
	j->inplace = inplace;
	return submit(j);
}

int
hpn_sftp_put(struct sftp_conn *conn, struct hpn_sftp *h, const char *src,
    const char *dst, int preserve, int resume, int fsync, int inplace)
{
	struct xjob *j;
	u_int64_t from = 0;

	/* fsync@openssh.com: upstream's code */
	if (h == NULL || h->upstream || fsync)
		return HPN_SFTP_UPSTREAM;
	if (resume && hpn_sftp_resume_plan_put(h, src, dst, resume,
	    &from) != 0)
		return submit_failed();
	j = job_new(conn, h, J_PUT, src, dst);
	j->preserve = preserve;
	j->inplace = inplace;
	job_resume(j, from);
	return submit(j);
}

int
hpn_sftp_put_dir(struct sftp_conn *conn, struct hpn_sftp *h, const char *src,
    const char *dst, int preserve, int print_flag, int resume, int fsync,
    int follow, int inplace)
{
	struct xjob *j;

	if (h == NULL || h->upstream || resume || fsync)
		return HPN_SFTP_UPSTREAM;
	j = job_new(conn, h, J_PUTDIR, src, dst);
	j->preserve = preserve;
	j->print_flag = print_flag;
	j->follow = follow;
	j->inplace = inplace;
	return submit(j);
}

/*
 * sftp's get/put and scp's sources: the transfers asked for in between run
 * together at the end, many files in flight.  Returns -1 if any failed.
 */
void
hpn_sftp_batch_begin(void)
{
	batching = 1;
	batch_failed = 0;
}

/* Run the queued jobs of one connection (all of them: h == NULL). */
static void
batch_run(struct hpn_sftp *h)
{
	struct xjobs q;
	struct xjob *j, *nj;

	while ((j = TAILQ_FIRST(&batchq)) != NULL) {
		if (h != NULL && j->h != h)
			break;
		TAILQ_INIT(&q);
		for (j = TAILQ_FIRST(&batchq); j != NULL; j = nj) {
			nj = TAILQ_NEXT(j, next);
			if (j->h != TAILQ_FIRST(&batchq)->h && q.tqh_first)
				continue;
			if (h != NULL && j->h != h)
				continue;
			TAILQ_REMOVE(&batchq, j, next);
			TAILQ_INSERT_TAIL(&q, j, next);
		}
		if (TAILQ_EMPTY(&q))
			break;
		if (run_jobs(TAILQ_FIRST(&q)->h, &q) != 0)
			batch_failed = 1;
	}
}

int
hpn_sftp_batch_end(void)
{
	int ret;

	batching = 0;
	batch_run(NULL);
	early_lookahead_done();
	ret = batch_failed ? -1 : 0;
	batch_failed = 0;
	return ret;
}

void
hpn_sftp_detach(struct hpn_sftp *h)
{
	struct xjob *j;

	if (h == NULL)
		return;
	/* Never drop a queued transfer with its connection. */
	TAILQ_FOREACH(j, &batchq, next) {
		if (j->h == h) {
			batch_run(h);
			break;
		}
	}
	hpn_sftp_lanes_forget(h);
	early_forget(h);
	conn_free(h);
}

/* ------------------------------------------------------------------ */
/* the run */

static void lane_init(struct xrun *, struct xlane *, struct hpn_sftp *,
    u_int);

static void run_fatal(struct xrun *, const char *, ...)
    __attribute__((noreturn)) __attribute__((format(printf, 2, 3)));

/*
 * The first connection is unusable (closed, or the server broke the
 * protocol) and the program ends, as upstream's does: before it goes,
 * every download in progress is cut where its whole bytes end (salvage()),
 * so that no file is left looking complete with holes in it.
 */
static void
run_fatal(struct xrun *x, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	salvage(x);
	fatal("%s", msg);
}

/* A reply m on connection l: to the layer of the request it answers. */
static void
dispatch(struct xrun *x, struct xlane *l, struct sshbuf *m)
{
	struct xreq *q;
	u_char type;
	u_int status;

	if ((q = req_take(x, l, m, &type)) == NULL)
		return;		/* l is broken */
	switch (q->kind) {
	case XR_OPEN:
	case XR_CLOSE:
	case XR_FSETSTAT:
		reply_file(x, q, type, m);
		break;
	case XR_READ:
	case XR_WRITE:
		reply_data(x, q, type, m);
		break;
	case XR_STAT:
		reply_stat(x, q, type, m);
		break;
	case XR_SPEC:
		/* a WRITE with INIT the server could not take: sent again */
	case XR_ERD:
		/* a READDIR with INIT no download took */
		break;
	case XR_EOPEN:
		reply_eopen(x, q, type, m);
		break;
	case XR_PFCLOSE:
		if (req_status(x, q, type, m, &status) == 0)
			debug2_f("unused handle of \"%s\" closed: %s",
			    q->path, fx2txt(status));
		break;
	case XR_SETSTAT:
	case XR_FIXSIZE:
		/* SETSTAT of a finished directory or file: only errors */
		if (req_status(x, q, type, m, &status) == 0 &&
		    status != SSH2_FX_OK)
			error("remote setstat \"%s\": %s", q->path,
			    fx2txt(status));
		break;
	default:
		reply_dir(x, q, type, m);
		break;
	}
	free(q->path);
	free(q);
}

/* A reply kept before the run (a READDIR's with INIT), as if it came now. */
void
reply_kept(struct xrun *x, struct sshbuf *m)
{
	dispatch(x, L0(x), m);
}

static void
schedule(struct xrun *x)
{
	struct xfile *f, *nf;
	struct xlane *l;
	u_int64_t ahead = 0, mid;
	int ahead_known = 0;

	lanes_tune(x);
	dir_pump(x);
	/* on Ctrl-C nothing new starts: what waits is dropped */
	while (interrupted && (f = TAILQ_FIRST(&x->waitq)) != NULL)
		file_finish(x, f);
	while ((f = TAILQ_FIRST(&x->waitq)) != NULL &&
	    (l = lane_pick(x)) != NULL &&
	    sshbuf_len(l->obuf) < X_OBUF_MAX) {
		/*
		 * enough open to fill the budget: wait for one to finish.
		 * -n: each connection's own (the least loaded one's), so
		 * that every connection gets work at once.
		 */
		if (!ahead_known) {
			ahead = lane_unasked(x, l);
			ahead_known = 1;
		}
		if (ahead >= l->budget)
			break;
		file_open(x, f, l);
		ahead_known = 0;
	}
	if (x->nlanes > 1 && TAILQ_EMPTY(&x->waitq) && !interrupted &&
	    (l = steal_pick(x, &f, &mid)) != NULL) {
		file_split(x, f, mid);
		file_open(x, TAILQ_FIRST(&x->waitq), l);
	}
	for (f = TAILQ_FIRST(&x->active); f != NULL; f = nf) {
		nf = TAILQ_NEXT(f, qnext);
		if (f->step != F_DATA)
			continue;
		if (is_get(f->job))
			get_pump(x, f);
		else
			put_pump(x, f);
	}
}

/*
 * Connection l closed under the run.  The first one carries directories
 * and the session itself: losing it ends the program, as before.  Another
 * (-n) is dropped: its requests are forgotten and its files and parts
 * start again on the others.
 */
static void
lane_lost(struct xrun *x, struct xlane *l, const char *why)
{
	struct xfile *f, *nf;

	if (l->idx == 0)
		run_fatal(x, "%s", why);
	error("-n: connection %u of %u lost (%s): its transfers go on over "
	    "the others", l->idx + 1, x->nplan, why);
	l->dead = 1;
	lane_forget(x, l);
	for (f = TAILQ_FIRST(&x->active); f != NULL; f = nf) {
		nf = TAILQ_NEXT(f, qnext);
		if (f->lane == l)
			file_restart(x, f);
	}
	hpn_sftp_lanes_lost(l->h);
	l->h = NULL;
}

/*
 * Write what l has composed, read what came back and dispatch each whole
 * reply.  A connection that breaks (wire.c notes why) is lost.
 */
static void
lane_io(struct xrun *x, struct xlane *l, struct pollfd *pfd)
{
	struct sshbuf *m;
	size_t len;
	int r;

	if (pfd[1].revents & (POLLOUT|POLLERR|POLLHUP))
		lane_write(l);
	if (l->broken == NULL && (pfd[0].revents & (POLLIN|POLLERR|POLLHUP)) &&
	    lane_read(l) == 0) {
		while (l->broken == NULL && (m = lane_next(l)) != NULL) {
			len = sshbuf_len(m);
			dispatch(x, l, m);
			sshbuf_free(m);
			if (l->broken != NULL)
				break;
			if ((r = sshbuf_consume(l->ibuf, 4 + len)) != 0)
				fatal_fr(r, "consume");
		}
	}
	if (l->broken != NULL)
		lane_lost(x, l, l->broken);
}

/*
 * -n: connections whose VERSION came since join the run; those given up
 * leave the plan (their share goes to the others at the next tune).
 */
static void
lanes_join(struct xrun *x)
{
	struct hpn_sftp *fresh[HPN_LANES_MAX];
	u_int i, k;

	k = hpn_sftp_lanes_poll(x->h, fresh, x->nplan - x->nlanes);
	for (i = 0; i < k; i++) {
		lane_init(x, &x->lanes[x->nlanes], fresh[i], x->nlanes);
		x->nlanes++;
	}
	x->nplan = x->nlanes + hpn_sftp_lanes_waiting(x->h, NULL);
	if (k > 0)
		debug2_f("%u connections", x->nlanes);
}

static void
loop_io(struct xrun *x)
{
	struct pollfd pfd[3 * HPN_LANES_MAX];
	int wfd[HPN_LANES_MAX];
	struct xlane *l;
	u_int i, nw;
	int timeout = -1, joining = 0;

	for (i = 0; i < x->nlanes; i++) {
		l = &x->lanes[i];
		pfd[2 * i].fd = l->dead || l->nout == 0 ? -1 : l->h->fd_in;
		pfd[2 * i].events = POLLIN;
		pfd[2 * i + 1].fd = !l->dead && sshbuf_len(l->obuf) > 0 ?
		    l->h->fd_out : -1;
		pfd[2 * i + 1].events = POLLOUT;
		pfd[2 * i].revents = pfd[2 * i + 1].revents = 0;
	}
	/* -n: the connections still to join, for their VERSION */
	nw = x->nplan > x->nlanes ? hpn_sftp_lanes_waiting(x->h, wfd) : 0;
	for (i = 0; i < nw; i++) {
		pfd[2 * x->nlanes + i].fd = wfd[i];
		pfd[2 * x->nlanes + i].events = POLLIN;
		pfd[2 * x->nlanes + i].revents = 0;
	}
	if (x->meter || nw > 0)
		timeout = 1000;		/* and the lanes' give-up time */
	if (poll(pfd, 2 * x->nlanes + nw, timeout) == -1) {
		if (errno == EINTR || errno == EAGAIN)
			return;
		fatal_f("poll: %s", strerror(errno));
	}
	for (i = 0; i < nw; i++)
		joining |= pfd[2 * x->nlanes + i].revents != 0;
	for (i = 0; i < x->nlanes; i++)
		if (!x->lanes[i].dead)
			lane_io(x, &x->lanes[i], &pfd[2 * i]);
	if (nw > 0 && (joining || timeout == 1000))
		lanes_join(x);
}

/* Raise our descriptor limit as far as the hard one lets us (bounded). */
static u_int64_t
fd_limit(void)
{
	struct rlimit rl;
	rlim_t want = HPN_SFTP_HANDLES_MAX + 2 * HPN_SFTP_FD_RESERVE;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		return 0;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? want :
		    MINIMUM(rl.rlim_max, want);
		(void)setrlimit(RLIMIT_NOFILE, &rl);
		if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
			return 0;
	}
	return rl.rlim_cur == RLIM_INFINITY ? 0 : (u_int64_t)rl.rlim_cur;
}

/* A handle that went with INIT (about path) and no transfer takes: closed. */
void
early_handle_close(struct xrun *x, struct early *e, const char *path)
{
	struct xreq *q;

	if (e->handle == NULL)
		return;
	q = req_new(x, XR_PFCLOSE, NULL, NULL);
	q->path = xstrdup(path);
	req_handle(x, SSH2_FXP_CLOSE, q, e->handle, e->hlen, NULL);
	free(e->handle);
	e->handle = NULL;
	e->used = 1;
}

/* Handles that went with INIT and no transfer took: closed. */
static void
early_close(struct xrun *x)
{
	struct early *e;
	int kinds[] = { E_OPENDIR, E_TREE, E_OPEN, E_OPENT }, i;

	spec_take(x, NULL);	/* WRITEs with INIT no upload took */
	erd_take(x, NULL);	/* READDIRs with INIT no download took */
	terd_take(x, NULL);
	eput_take(x, NULL);	/* files with INIT no upload took */
	for (i = 0; i < 4; i++) {
		e = &x->h->e[kinds[i]];
		early_handle_close(x, e, kinds[i] == E_OPEN ? x->h->put_dst :
		    kinds[i] == E_OPENT ? x->h->put_targ : x->h->pf_path);
	}
	if (x->h->put_fd != -1) {
		close(x->h->put_fd);
		x->h->put_fd = -1;
	}
}

static void
job_start(struct xrun *x, struct xjob *j)
{
	struct xfile *f;
	struct stat sb;
	Attrib a;
	int ret;

	j->ret = 0;
	x->jobs_left++;
	/* resume: the meter counts what is there as done, not in the rate */
	x->done_bytes += j->from;
	x->kept_bytes += j->from;
	x->last_bytes += j->from;
	switch (j->kind) {
	case J_GET:
		f = file_new(x, j, NULL, j->src, j->dst);
		f->pstart = j->from;	/* resume: the reads start there */
		if (j->have_a) {
			f->a = j->a;
			f->have_a = 1;
		} else if (hpn_sftp_cached_stat(x->h, j->src, 0, 0, &a,
		    &ret)) {
			if (ret != 0) {
				f->failed = 1;
				file_finish(x, f);
				return;
			}
			f->a = a;
			f->have_a = 1;
		}
		if (f->have_a)
			get_file_ready(x, f);
		else {
			f->step = F_STAT;
			send_stat(x, XR_STAT, f, NULL, j->src);
		}
		break;
	case J_GETDIR:
		dir_new_get(x, j, NULL, j->src, j->dst,
		    j->have_a ? &j->a : NULL, 0);
		break;
	case J_PUT:
		put_file_add(x, j, NULL, j->src, j->dst, 0);
		put_early(x, TAILQ_LAST(&x->waitq, xfiles));
		break;
	case J_PUTDIR:
		if (stat(j->src, &sb) == -1) {
			error("stat local \"%s\": %s", j->src,
			    strerror(errno));
			j->ret = -1;
			x->jobs_left--;
			return;
		}
		if (!S_ISDIR(sb.st_mode)) {
			error("\"%s\" is not a directory", j->src);
			j->ret = -1;
			x->jobs_left--;
			return;
		}
		stat_to_attrib(&sb, &a);
		dir_new_put(x, j, NULL, j->src, j->dst, &a, 0);
		break;
	}
}

/* Is anything composed and not yet written, on any live connection? */
static int
lanes_pending(struct xrun *x)
{
	u_int i;

	for (i = 0; i < x->nlanes; i++)
		if (!x->lanes[i].dead && sshbuf_len(x->lanes[i].obuf) > 0)
			return 1;
	return 0;
}

/* A connection of the run; fatal if its descriptors cannot be set up. */
static void
lane_init(struct xrun *x, struct xlane *l, struct hpn_sftp *h, u_int idx)
{
	u_int64_t nofile;

	l->h = h;
	l->idx = idx;
	if ((l->obuf = sshbuf_new()) == NULL ||
	    (l->ibuf = sshbuf_new()) == NULL)
		fatal_f("sshbuf_new failed");
	RB_INIT(&l->reqs);
	lane_budget_init(x, l);
	/* our descriptors are shared: each connection gets its share */
	nofile = x->fdmax;
	if (nofile > HPN_SFTP_FD_RESERVE && x->nplan > 1)
		nofile = HPN_SFTP_FD_RESERVE +
		    (nofile - HPN_SFTP_FD_RESERVE) / x->nplan;
	l->max_handles = hpn_sftp_max_handles(h->open_handles, nofile);
	/* Writes must not block while the server waits for us to read. */
	l->fl_in = -1;
	if ((l->fl_out = fcntl(h->fd_out, F_GETFL)) == -1 ||
	    fcntl(h->fd_out, F_SETFL, l->fl_out | O_NONBLOCK) == -1)
		fatal_f("fcntl: %s", strerror(errno));
	if (h->fd_in != h->fd_out &&
	    ((l->fl_in = fcntl(h->fd_in, F_GETFL)) == -1 ||
	    fcntl(h->fd_in, F_SETFL, l->fl_in | O_NONBLOCK) == -1))
		fatal_f("fcntl: %s", strerror(errno));
}

static void
lane_done(struct xlane *l)
{
	if (!l->dead && l->h != NULL &&
	    (fcntl(l->h->fd_out, F_SETFL, l->fl_out) == -1 ||
	    (l->fl_in != -1 && fcntl(l->h->fd_in, F_SETFL, l->fl_in) == -1)))
		fatal_f("fcntl: %s", strerror(errno));
	if (l->idx > 0 && l->moved > 0)
		debug_f("connection %u moved %llu bytes", l->idx + 1,
		    (unsigned long long)l->moved);
	sshbuf_free(l->obuf);
	sshbuf_free(l->ibuf);
	free(l->broken);
}

static int
run_jobs(struct hpn_sftp *h, struct xjobs *q)
{
	struct xrun x;
	struct xjob *j;
	struct hpn_sftp **more;
	sshsig_t opipe;
	u_int i, n;
	int ret = 0;

	/* a connection closed under the run: EPIPE, said (lane_io()) */
	opipe = ssh_signal(SIGPIPE, SIG_IGN);
	memset(&x, 0, sizeof(x));
	x.h = h;
	n = hpn_sftp_lanes(h, &more);
	x.nlanes = 1 + n;
	x.nplan = x.nlanes + hpn_sftp_lanes_waiting(h, NULL);
	x.lanes = xcalloc(x.nplan, sizeof(*x.lanes));
	x.fdmax = fd_limit();
	lane_init(&x, &x.lanes[0], h, 0);
	for (i = 0; i < n; i++)
		lane_init(&x, &x.lanes[1 + i], more[i], 1 + i);
	TAILQ_INIT(&x.waitq);
	TAILQ_INIT(&x.active);
	TAILQ_INIT(&x.dirq);
	TAILQ_INIT(&x.listing);
	x.meter = showprogress;
	x.start = x.last = monotime_double();
	debug2_f("budget %llu bytes, at most %u handles, %u connection%s",
	    (unsigned long long)x.lanes[0].budget, x.lanes[0].max_handles,
	    x.nlanes, x.nlanes == 1 ? "" : "s");

	/* every job's first requests go out together */
	TAILQ_FOREACH(j, q, next)
		job_start(&x, j);
	early_close(&x);
	for (;;) {
		schedule(&x);
		meter_draw(&x, 0);
		if (x.nout == 0 && !lanes_pending(&x)) {
			if (x.jobs_left == 0)
				break;
			if (TAILQ_EMPTY(&x.waitq) && TAILQ_EMPTY(&x.dirq))
				run_fatal(&x, "internal error: transfers "
				    "stalled");
		}
		loop_io(&x);
	}
	if (x.drawn || (x.meter && x.total_bytes > 0))
		meter_draw(&x, 1);

	for (i = 0; i < x.nlanes; i++)
		lane_done(&x.lanes[i]);
	free(x.lanes);
	early_free(h);
	while ((j = TAILQ_FIRST(q)) != NULL) {
		TAILQ_REMOVE(q, j, next);
		if (j->ret != 0)
			ret = -1;
		job_free(j);
	}
	if (interrupted)
		ret = -1;
	ssh_signal(SIGPIPE, opipe);
	return ret;
}
