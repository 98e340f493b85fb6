/*
 * HPN patch set: the SFTP transfer engine's own header (src/xfer/): its
 * types, and each layer's functions, the lowest first.  What the hooks in
 * scp.c, sftp.c and sftp-client.c call is in ../hpn-sftp-xfer.h.
 *
 * The layers and who may call whom (a layer calls those below it only;
 * the map with a request's life is in HACKING.md):
 *
 *   engine.c   jobs, the run loop, scheduling, replies dispatched, a
 *              connection lost
 *   walk.c     directories both ways, and what a name turns out to be
 *   data.c     a file's reads and writes and their replies
 *   file.c     a file's (or part's) open, close and finish; parts made
 *   done.c     what is finished: directories' counts, their attributes
 *   wire.c     requests in flight, a connection's bytes, its errors
 *   stripe.c   parts of a large file: sizes, ends, steal (decisions only)
 *   budget.c   -n: each connection's budget and the cap (decisions only)
 *   meter.c    the progress meter
 *   early.c    what rides with INIT; the answers kept for later
 *   lanes.c    -n: the extra connections, started and greeted
 *   resume.c   verified resume: plans from hashes
 *   hashalg.c  the checksums it offers (ResumeHash, from ssh -G)
 *   conn.c     one connection: blocking I/O, ids, plain requests
 *   proto.c    messages: composed, and replies parsed into decisions
 *
 * Every .c file here includes, before this one: includes.h, sys-queue.h,
 * sys-tree.h, sshbuf.h, sftp.h, sftp-common.h, hpn.h.
 */
#ifndef HPN_XFER_H
#define HPN_XFER_H

#include "hpn-sftp-xfer.h"

struct sftp_limits;

#define MAX_DIR_DEPTH	64		/* upstream's */
#define X_OBUF_MAX	(4 * 1024 * 1024)	/* composed, not yet written */
#ifndef X_READ_MAX
#define X_READ_MAX	(256 * 1024)	/* one read of replies */
#endif
#define X_READDIRS	8		/* READDIRs out per directory */
#define X_WAITQ_LOW	4096		/* files waiting before listing pauses */
#define X_DATA_REQS	8		/* data requests out: nreq times this */
#define X_DUPS_MAX	1024		/* names listed again: a loop */

/* ------------------------------------------------------------------ */
/* proto.c: messages */

/* A reply, parsed (sftp_reply()): pointers into the message. */
struct sftp_reply {
	u_char type;
	u_int status;			/* STATUS */
	const u_char *handle;		/* HANDLE */
	size_t hlen;
	const u_char *data;		/* DATA */
	size_t dlen;
	u_int count;			/* NAME: entries (sftp_name_next()) */
	Attrib a;			/* ATTRS */
};
#define SFTP_R_WANT	0		/* the reply the request wanted */
#define SFTP_R_STATUS	1		/* a STATUS */
#define SFTP_R_BAD	(-1)		/* the server broke the protocol */

size_t	frame_start(struct sshbuf *, u_char, u_int);
void	frame_end(struct sshbuf *, size_t);
void	frame_path(struct sshbuf *, u_char, u_int, const char *,
	    const Attrib *, u_int);
void	frame_handle(struct sshbuf *, u_char, u_int, const u_char *, size_t,
	    const Attrib *);
void	frame_tree(struct sshbuf *, u_int, const char *, u_int);
struct stat;
void	put_attrib(const struct stat *, int, u_int, Attrib *);
int	sftp_reply_head(struct sshbuf *, u_char *, u_int *);
int	sftp_reply(struct sshbuf *, u_char, u_char, struct sftp_reply *,
	    char *, size_t);
int	sftp_name_next(struct sshbuf *, char **, char **, Attrib *, char *,
	    size_t);
int	sftp_name_one(struct sshbuf *, const struct sftp_reply *, char **,
	    Attrib *, char *, size_t);
int	sftp_limits(struct sshbuf *, struct sftp_limits *);
int	sftp_version_head(const u_char *, u_int *, u_int *);

/* ------------------------------------------------------------------ */
/* conn.c: one connection, and early.c's answers it keeps */

/*
 * What goes with INIT besides the limits request: scp knows the remote path
 * it will look at first, and what it will do there.
 *  - a download: LSTAT and STAT of the source (its glob, then the engine);
 *    with -r also REALPATH and OPENDIR (failing harmlessly on a file),
 *    and the source opened as a tree (HPN_TREE_EXT), its READDIRs naming
 *    each: a server that lists trees gives the whole tree's names with
 *    INIT's answers, and the OPENDIR is closed unread; one that does not
 *    fails the tree and its READDIRs, and the OPENDIR stands.
 *  - an upload: STAT of the target (is it a directory?) and, for the first
 *    source, the request upstream makes next when it is one: MKDIR of
 *    target/name (with -r) or OPEN of target/name (a file).  Both can only
 *    succeed where target is a directory, that is exactly where upstream
 *    makes the same request a round trip later; elsewhere they fail and
 *    change nothing.  A file also gets the OPEN of target itself, which
 *    upstream sends where target is not a directory, and which fails on a
 *    directory (unless the target must be a directory: -d, several
 *    sources).  In whatever order a server takes the two, creating a file
 *    cannot make the other one succeed.  The local file is opened first
 *    (and kept), so that a source upstream could not read creates nothing
 *    remote.
 *  - a tree upload (scp -r of one directory): also its top directory's
 *    first regular files, HPN_SFTP_SPEC bytes at most, each sent whole
 *    (struct eput): OPEN of target/name/file (it fails unless that MKDIR
 *    made, or found, a directory), then its WRITEs, FSETSTAT (-p) and
 *    CLOSE naming the OPEN (HPN_REF_EXT).  Where the server takes handle
 *    references the run takes them as those files' own (eput_take());
 *    where it does not, the OPENs' handles are closed, the rest fails
 *    unused, and the files go as any other (their bytes are sent again).
 *    One connection only (with -n a file could go on another).
 *  - sftp -b: the same lookups for a get, when the batch file's first
 *    command is a get of one path (hpn_sftp_batch_peek).
 *  - sftp: REALPATH of "." (its remote working directory).  And before
 *    the glob of a get (hpn_sftp_lookahead), in one round trip: LSTAT and
 *    STAT of a source without glob characters, REALPATH and OPENDIR with
 *    -r, where upstream would take two (the glob's lstat, then the
 *    directory's).
 * Each answer is used once, by the lookup or the transfer it stands for;
 * a handle no transfer takes is closed by the next engine run.
 */
enum {
	E_LIMITS, E_DOT, E_LSTAT, E_STAT, E_REAL, E_OPENDIR, E_TREE, E_PREAL,
	E_MKDIR, E_PSTAT, E_OPEN, E_OPENT, E_MAX
};

struct early {
	u_int id;			/* 0: not asked */
	int done;			/* answered */
	int used;			/* taken, or not to be taken */
	u_int status;			/* SSH2_FX_OK: it gave what was asked */
	Attrib a;
	char *str;			/* REALPATH */
	u_char *handle;
	size_t hlen;
};

/* A WRITE sent with INIT, naming the upload's OPENs (spec_send()). */
struct spec {
	u_int id;
	u_int64_t off;
	u_int len;
	int done;			/* answered (before the engine ran) */
	u_int status;
};
#define SPEC_MAX	(HPN_SFTP_SPEC / HPN_SFTP_SPEC_WRITE)

/*
 * A file of a tree upload sent whole with INIT (eput_send()): its OPEN
 * (id), WRITEs (id + 1 ..., nw), FSETSTAT with -p, and CLOSE (last).
 */
struct eput {
	char *src, *name;		/* local path, its name in the top */
	u_int64_t size;
	Attrib a;			/* what the OPEN (and FSETSTAT) set */
	u_int id, nw, last;
	int taken;			/* the run has it (walk: skipped) */
};
#define EPUT_MAX	64		/* files */
#define EPUT_SCAN	1024		/* directory entries looked at */

/*
 * A READDIR sent with INIT, naming the OPENDIR of the directory to
 * download (erd_send()): its reply, when it came before the engine ran.
 */
struct erd {
	u_int id;
	int done;
	struct sshbuf *reply;		/* type, id, body */
};
#define ERD_MAX		X_READDIRS

struct hpn_sftp {
	int fd_in, fd_out;
	u_int *msg_id;			/* the connection's, shared */
	u_int version;
	u_int rbuflen, wbuflen, nreq;
	u_int64_t open_handles;		/* the server's figure, 0: none */
	int upstream;			/* -l: upstream's code does it all */
	int can_hash;			/* the server has HPN_HASH_EXT */
	int can_ref;			/* ... and HPN_REF_EXT */
	int can_tree;			/* ... and HPN_TREE_EXT */
	struct early e[E_MAX];
	char *pf_path;			/* E_LSTAT..E_TREE: this path */
	char *put_src, *put_dst;	/* E_PREAL..E_OPEN: this upload */
	char *put_targ;			/* E_OPENT: or there */
	int put_fd;
	int put_preserve;
	struct spec spec[SPEC_MAX];	/* the upload's first bytes, with INIT */
	u_int nspec, spec_open;		/* ... not yet taken by the engine */
	struct erd erd[ERD_MAX];	/* the download's first READDIRs */
	u_int nerd;			/* ... not yet taken by the engine */
	struct erd terd[ERD_MAX];	/* ... and its tree's (E_TREE) */
	u_int nterd;
	u_int erd_of, terd_of;		/* the ids of the requests they name */
	struct eput *eput;		/* the tree upload's first files */
	u_int neput;
	int eput_open;			/* ... not yet taken by the engine */
	u_int eput_id0, eput_nid;	/* ... their requests' ids */
	struct sshbuf **eput_reply;	/* ... replies before the run */
};

void	conn_free(struct hpn_sftp *);
void	send_blocking(struct hpn_sftp *, struct sshbuf *);
void	recv_blocking(struct hpn_sftp *, struct sshbuf *);
int	erd_keep(struct hpn_sftp *, const struct sshbuf *);	/* early.c */

/* ------------------------------------------------------------------ */
/* early.c: what rides with INIT */

u_char	early_want(int);
struct early *early_peek(struct hpn_sftp *, int, const char *);
struct early *early_take(struct hpn_sftp *, int, const char *);
void	early_free(struct hpn_sftp *);
void	eput_free(struct hpn_sftp *);
void	early_forget(struct hpn_sftp *);
void	early_lookahead_done(void);
u_int	lanes_wanted(void);					/* lanes.c */

/* ------------------------------------------------------------------ */
/* the run: jobs, files, directories, requests, connections */

enum { J_GET, J_GETDIR, J_PUT, J_PUTDIR };

struct xjob {
	TAILQ_ENTRY(xjob) next;
	struct sftp_conn *conn;
	struct hpn_sftp *h;
	int kind;
	char *src, *dst;
	Attrib a;
	int have_a;
	int preserve, print_flag, fsync, follow, inplace;
	u_int64_t from;			/* resume: what is there already */
	int ret;
};
TAILQ_HEAD(xjobs, xjob);

enum { F_STAT, F_WAIT, F_OPENING, F_DATA, F_CLOSING, F_CLOSED };
enum { Q_NONE, Q_WAIT, Q_ACTIVE, Q_PARKED };
enum { D_START, D_LIST, D_DONE };
enum { DQ_NONE, DQ_DIRQ, DQ_LISTING };

enum {
	XR_OPEN, XR_READ, XR_WRITE, XR_CLOSE, XR_FSETSTAT, XR_STAT,
	XR_REALPATH, XR_OPENDIR, XR_READDIR, XR_DCLOSE, XR_MKDIR, XR_DSTAT,
	XR_SETSTAT, XR_FIXSIZE, XR_PFCLOSE, XR_SPEC, XR_ERD, XR_EOPEN
};

struct xdir;
struct xlane;
struct xstripe;

struct xfile {
	TAILQ_ENTRY(xfile) qnext;	/* waitq or active */
	int where;			/* Q_* */
	struct xlane *lane;		/* its connection, once opening */
	struct xstripe *st;		/* a part of a large file, or NULL */
	u_int part;			/* ... which, from 0 */
	u_int64_t pstart, pend;		/* ... its bytes; pend: UINT64_MAX */
	struct xjob *job;
	struct xdir *parent;
	char *src, *dst;
	Attrib a;			/* get: remote; put: what to set */
	int have_a;
	int link;			/* get: a symlink, stat it first */
	int step;			/* F_* */
	int opened;			/* put: local opened; get: remote once */
	u_char *handle;
	size_t hlen;
	int ref;			/* handle: a reference to its OPEN */
	int open_failed;		/* ... which failed (said) */
	int fd;
	struct hpn_sftp_rd rd;		/* get: reads; put: write acks */
	u_int nout;			/* requests out */
	u_int nwrites;			/* put: WRITEs out */
	u_int64_t off, size;		/* put: next offset; size (progress) */
	int leof;			/* put: read to its end */
	int failed;			/* said why; no more data */
	u_int rstatus;			/* get: read error */
	int werrno;			/* get: local write error */
	u_int wstatus;			/* put: remote write error */
	int close_failed;
	int skip;			/* not one to copy after all */
	int sized;			/* put: its size went out (inplace) */
	u_int64_t counted;		/* get: bytes of it in the total */
	u_int64_t moved;		/* bytes in done_bytes */
	mode_t mode;
	int made;			/* put: counted made in its parent */
};
TAILQ_HEAD(xfiles, xfile);

/* A name a directory listing gave (get): each may come once. */
struct xname {
	RB_ENTRY(xname) node;
	char *name;
};

RB_HEAD(xnames, xname);
int	xname_cmp(struct xname *, struct xname *);
RB_PROTOTYPE(xnames, xname, node, xname_cmp);

/*
 * get: one directory a tree listing (HPN_TREE_EXT) is in: its name there,
 * and the directory to which its entries go (NULL: they are skipped).
 */
struct xtframe {
	struct xdir *d;
	char *rel;
};

struct xdir {
	TAILQ_ENTRY(xdir) qnext;	/* x->dirq or x->listing */
	int queued;			/* DQ_* */
	struct xjob *job;
	struct xdir *parent;
	char *src, *dst;		/* get: remote, local; put: local, remote */
	Attrib a;
	int have_a;
	int depth;
	int top;			/* the job's own: realpath first */
	int early;			/* put, top: made with INIT */
	int step;			/* D_* */
	u_int waits;			/* replies the start waits for */
	int real_ok, stat_ok, mkdir_ok, open_ok, stat_isdir;
	int ok;				/* put: the directory is there */
	u_int stat_status, open_status;
	u_char *handle;
	size_t hlen;
	int want_open;			/* get: OPENDIR not sent yet */
	u_int rdout;			/* READDIRs out */
	int rdeof;
	u_int pending;			/* children and own listing */
	u_int unmade;			/* put: ... of them not yet asked to
					   be made, or not yet listed */
	int dmade;			/* put: counted made in its parent */
	int attr_sent;			/* put: its SETSTAT went early */
	int failed;
	int made;			/* get: local mkdir done */
	int created;			/* put: our MKDIR made it */
	int ahead;			/* put: walked before its MKDIR's answer */
	int gone;			/* put: ... which failed (said) */
	mode_t mode, tmpmode;
	struct xnames names;		/* get: the names listed so far */
	u_int dups;			/* ... and how many came again */
	int tree;			/* get: its handle lists its subtree */
	struct xtframe *tstack;		/* ... where its walk stands */
	u_int tdepth;			/* ... below d, tstack[0] */
};
TAILQ_HEAD(xdirs, xdir);

struct xreq {
	RB_ENTRY(xreq) node;
	struct xlane *lane;
	u_int id;
	int kind;
	struct xfile *f;
	struct xdir *d;
	u_int64_t off;
	u_int len;
	u_int64_t cost;			/* bytes counted in the budget */
	char *path;			/* requests that outlive their node */
	double sent;			/* when it went out */
};

RB_HEAD(xreqs, xreq);

/*
 * A connection the run uses (-n: several; hpn-sftp-lanes.c).  Requests
 * and their ids, data in flight and handles are per connection;
 * directories are worked on the first only.
 */
struct xlane {
	struct hpn_sftp *h;
	u_int idx;			/* 0: the first connection */
	int dead;
	struct sshbuf *obuf, *ibuf;
	struct xreqs reqs;
	u_int nout;			/* requests out */
	u_int ndata;			/* READ/WRITE out */
	u_int64_t inflight;		/* their bytes (expected) */
	u_int64_t budget;		/* at most this many */
	u_int maxdata;			/* READ/WRITE out, at most */
	u_int nhandles;			/* asked for or held */
	u_int max_handles;
	int fl_in, fl_out;		/* descriptor flags to restore */
	u_int64_t moved;		/* bytes it carried */
	u_int64_t tick_moved;		/* ... at the last lanes_tune() */
	double rate;			/* ... since: bytes a second */
	char *broken;			/* unusable: why (wire.c), the engine acts */
};

/*
 * A large file moved in parts over several connections: the file itself
 * (whole: never opened, finished once every part is) and its parts.
 */
struct xstripe {
	struct xfile *whole;
	u_int nparts, left;
	int created;			/* put: the TRUNC open is done */
	int creating;			/* ... is out */
	int sized;			/* put: its size went (inplace) */
	struct xfiles parked;		/* put: parts that wait for it */
	u_int64_t *start;		/* each part's first byte */
	u_int64_t *hw;			/* ... its contiguous end */
	int *complete;			/* ... it got all of its bytes */
};

struct xrun {
	struct hpn_sftp *h;		/* the first connection's */
	struct xlane *lanes;
	u_int nlanes;
	u_int nplan;			/* ... and those still to join */
	u_int nout;			/* requests out, all connections */
	u_int ndirh;			/* directory handles (first lane) */
	u_int64_t fdmax;		/* our descriptor limit */
	u_int jobs_left;		/* not finished */
	struct xfiles waitq;		/* ready to open */
	u_int nwait;
	struct xfiles active;		/* open or opening, oldest first */
	struct xdirs dirq;		/* get: OPENDIR waits; put: to walk */
	struct xdirs listing;		/* get: READDIRs to send */
	/* progress */
	int meter;
	u_int64_t done_bytes, total_bytes;
	u_int64_t kept_bytes;		/* resume: there before, in done */
	u_int files_done, files_total;
	double start, last, rate;
	double rtt;			/* quickest data reply seen */
	double tick;			/* lanes_tune() last looked */
	struct hpn_sftp_cap cap;	/* -n: all of them together */
	u_int64_t budget_max;		/* -n: a connection's at most */
	u_int64_t last_bytes;
	int drawn;
	char curname[256];
};


#define L0(x)	(&(x)->lanes[0])

/* A download (or a directory's listing), not an upload. */
static inline int
is_get(const struct xjob *j)
{
	return j->kind == J_GET || j->kind == J_GETDIR;
}

/* ------------------------------------------------------------------ */
/* meter.c */

void	meter_draw(struct xrun *, int);
void	meter_file(struct xrun *, struct xfile *);

/* ------------------------------------------------------------------ */
/* budget.c: -n, each connection's share */

u_int64_t file_unasked(struct xrun *, struct xfile *);
u_int64_t lane_unasked(struct xrun *, struct xlane *);
u_int64_t part_left(struct xfile *);
struct xlane *lane_pick(struct xrun *);
void	lane_rtt(struct xrun *, struct xreq *);
void	lanes_tune(struct xrun *);
void	lane_budget_init(struct xrun *, struct xlane *);

/* ------------------------------------------------------------------ */
/* stripe.c: parts of a large file (decisions) */

u_int64_t stripe_size(struct xrun *, struct xfile *, u_int64_t);
struct xstripe *stripe_new(struct xfile *, u_int64_t, u_int64_t);
u_int	stripe_add(struct xstripe *, u_int64_t);
void	stripe_free(struct xstripe *);
u_int64_t part_end(struct xstripe *, u_int);
u_int64_t stripe_prefix(struct xstripe *, int *);
struct xlane *steal_pick(struct xrun *, struct xfile **, u_int64_t *);
int	stripe_size_now(struct xrun *, struct xfile *, u_int64_t *);

/* ------------------------------------------------------------------ */
/* wire.c: requests in flight, a connection's bytes */

struct xreq *req_add(struct xrun *, int, struct xfile *, struct xdir *,
	    u_int);
struct xreq *req_new(struct xrun *, int, struct xfile *, struct xdir *);
void	req_path(struct xrun *, u_char, struct xreq *, const char *,
	    Attrib *);
void	req_handle(struct xrun *, u_char, struct xreq *, const u_char *,
	    size_t, Attrib *);
void	send_stat(struct xrun *, int, struct xfile *, struct xdir *,
	    const char *);
int	budget_left(struct xlane *);
struct xreq *req_take(struct xrun *, struct xlane *, struct sshbuf *,
	    u_char *);
int	req_reply(struct xrun *, struct xreq *, u_char, struct sshbuf *,
	    u_char, struct sftp_reply *);
int	req_status(struct xrun *, struct xreq *, u_char, struct sshbuf *,
	    u_int *);
void	proto_error(struct xrun *, struct xreq *, const char *, ...)
	    __attribute__((format(printf, 3, 4)));
void	lane_error(struct xlane *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
void	lane_write(struct xlane *);
int	lane_read(struct xlane *);
struct sshbuf *lane_next(struct xlane *);
void	lane_forget(struct xrun *, struct xlane *);

/* ------------------------------------------------------------------ */
/* done.c: what is finished */

void	dir_free(struct xdir *);
void	dirq_add(struct xrun *, struct xdir *);
void	dirq_del(struct xrun *, struct xdir *);
int	dir_gone(const struct xdir *);
void	dir_child_done(struct xrun *, struct xdir *, int);
void	dir_child_made(struct xrun *, struct xdir *);
void	dir_made(struct xrun *, struct xdir *);
void	dir_attr_early(struct xrun *, struct xdir *);
void	dir_listed(struct xrun *, struct xdir *);
void	dir_end(struct xrun *, struct xdir *);
void	dir_fail(struct xrun *, struct xdir *);

/* ------------------------------------------------------------------ */
/* file.c: one file's (or part's) life */

int	xfd(struct xfile *);
struct xfile *file_new(struct xrun *, struct xjob *, struct xdir *,
	    const char *, const char *);
void	file_rd_init(struct xrun *, struct xfile *);
int	put_local_open(struct xrun *, struct xfile *, int);
void	waitq_add(struct xrun *, struct xfile *, int);
void	unlink_file(struct xrun *, struct xfile *);
void	get_file_ready(struct xrun *, struct xfile *);
void	file_open(struct xrun *, struct xfile *, struct xlane *);
void	file_close(struct xrun *, struct xfile *);
void	file_split(struct xrun *, struct xfile *, u_int64_t);
void	file_finish(struct xrun *, struct xfile *);
void	file_made(struct xrun *, struct xfile *);
void	file_check(struct xrun *, struct xfile *);
void	file_restart(struct xrun *, struct xfile *);
void	salvage(struct xrun *);
void	reply_file(struct xrun *, struct xreq *, u_char, struct sshbuf *);

/* ------------------------------------------------------------------ */
/* data.c: a file's reads and writes */

void	get_pump(struct xrun *, struct xfile *);
void	put_pump(struct xrun *, struct xfile *);
void	reply_data(struct xrun *, struct xreq *, u_char, struct sshbuf *);
void	spec_take(struct xrun *, struct xfile *);
void	early_handle_close(struct xrun *, struct early *, const char *);
void	erd_take(struct xrun *, struct xdir *);		/* walk.c */
void	terd_take(struct xrun *, struct xdir *);
void	reply_kept(struct xrun *, struct sshbuf *);	/* engine.c */
int	put_early(struct xrun *, struct xfile *);
void	eput_take(struct xrun *, struct xdir *);
int	eput_taken(struct hpn_sftp *, const char *);
void	reply_eopen(struct xrun *, struct xreq *, u_char, struct sshbuf *);

/* ------------------------------------------------------------------ */
/* walk.c: directories */

void	dir_new_get(struct xrun *, struct xjob *, struct xdir *,
	    const char *, const char *, Attrib *, int);
void	dir_new_put(struct xrun *, struct xjob *, struct xdir *,
	    const char *, const char *, Attrib *, int);
void	put_file_add(struct xrun *, struct xjob *, struct xdir *,
	    const char *, const char *, u_int64_t);
void	dir_pump(struct xrun *);
void	reply_stat(struct xrun *, struct xreq *, u_char, struct sshbuf *);
void	reply_dir(struct xrun *, struct xreq *, u_char, struct sshbuf *);

#endif /* HPN_XFER_H */
