/*
 * HPN patch set: directories in the transfer engine (src/xfer/).
 *
 * Owns: a directory's walk both ways.  A download: REALPATH, STAT and
 * OPENDIR of the top (or their answers sent with INIT), the local
 * directory made, READDIRs kept out while files are wanted, each entry
 * turned into a file, a directory or a link to look at (reply_stat():
 * what a name turns out to be), names that would leave the target
 * refused, names listed again skipped; where the server lists whole
 * subtrees (HPN_TREE_EXT), a directory the run opens itself is opened as
 * one, and what its listing names is checked against where it stands in
 * the walk (tree_entry()).  An upload: MKDIR and STAT at once
 * (or with INIT), the local directory read when files are wanted
 * (put_walk()).  Directories wait for a handle (get) or for room (put) in
 * dir_pump().  What is finished is done.c's.
 * Calls: file.c, done.c, wire.c, early.c.
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
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
#include "utf8.h"

#include "sftp.h"
#include "sftp-common.h"
#include "sftp-client.h"

#include "hpn.h"
#include "xfer.h"

extern volatile sig_atomic_t interrupted;

int
xname_cmp(struct xname *a, struct xname *b)
{
	return strcmp(a->name, b->name);
}
RB_GENERATE(xnames, xname, node, xname_cmp);

static void get_dir_started(struct xrun *, struct xdir *);
static struct xdir *get_entry(struct xrun *, struct xdir *, const char *,
    Attrib *, int);
static void erd_replay(struct xrun *);
static void tree_init(struct xdir *);
static void put_dir_started(struct xrun *, struct xdir *);

static struct xdir *
dir_alloc(struct xrun *x, struct xjob *j, struct xdir *parent,
    const char *src, const char *dst, Attrib *a, int depth)
{
	struct xdir *d;

	d = xcalloc(1, sizeof(*d));
	d->job = j;
	d->parent = parent;
	d->src = xstrdup(src);
	d->dst = xstrdup(dst);
	if (a != NULL) {
		d->a = *a;
		d->have_a = 1;
	}
	d->depth = depth;
	RB_INIT(&d->names);
	d->top = parent == NULL;
	d->pending = 1;		/* its own listing */
	d->unmade = 1;
	if (parent != NULL) {
		parent->pending++;
		parent->unmade++;
	}
	return d;
}

/* get: the REALPATH, STAT and OPENDIR that went with INIT, if d is theirs. */
static int
get_dir_early(struct xrun *x, struct xdir *d)
{
	struct early *real, *st, *op, *tr;

	if ((op = early_take(x->h, E_OPENDIR, d->src)) == NULL)
		return 0;
	real = early_peek(x->h, E_REAL, d->src);
	st = early_peek(x->h, E_STAT, d->src);
	if (real != NULL && real->status == SSH2_FX_OK) {
		free(d->src);
		d->src = xstrdup(real->str);
		d->real_ok = 1;
	} else
		d->real_ok = 0;
	if (!d->have_a && st != NULL && st->status == SSH2_FX_OK) {
		d->a = st->a;
		d->stat_ok = 1;
	}
	if (!d->stat_ok) {
		/* no stat (it went to a glob?): OPENDIR's answer stands */
		op->used = 0;
		d->real_ok = 1;
		return 0;
	}
	/* the tree, where the server lists them: the OPENDIR is closed */
	tr = early_take(x->h, E_TREE, d->src);
	if (tr != NULL && tr->status == SSH2_FX_OK && tr->handle != NULL &&
	    x->h->can_tree && x->h->can_ref) {
		early_handle_close(x, op, x->h->pf_path);
		op = tr;
		tree_init(d);
	} else if (tr != NULL)
		early_handle_close(x, tr, x->h->pf_path);
	if (op->status == SSH2_FX_OK) {
		d->handle = op->handle;
		d->hlen = op->hlen;
		op->handle = NULL;
		d->open_ok = 1;
		L0(x)->nhandles++;
		x->ndirh++;
	} else
		d->open_status = op->status;
	debug2_f("\"%s\" opened with INIT%s", d->src,
	    d->tree ? " as a tree" : "");
	erd_take(x, d->open_ok && !d->tree ? d : NULL);
	terd_take(x, d->open_ok && d->tree ? d : NULL);
	get_dir_started(x, d);	/* d lives on while READDIRs are out */
	erd_replay(x);
	return 1;
}


/*
 * get: the READDIRs that went with INIT naming d's OPENDIR (erd_send()), d
 * the directory that took that OPENDIR, opened (NULL: none).  Where the
 * server takes handle references they are d's first, out until answered
 * (d outlives them, even when it fails at its start); the replies kept
 * before the run are answered by erd_replay(), in order, the others as
 * they come.  Else their replies (failures, or names nobody wants) are
 * dropped.
 */
static void
erd_take_set(struct xrun *x, struct xdir *d, struct erd *set, u_int *np,
    const char *what)
{
	struct hpn_sftp *h = x->h;
	u_int i, n = *np;

	if (n == 0)
		return;
	*np = 0;		/* no more are kept: the run takes them */
	if (d == NULL || !h->can_ref) {
		for (i = 0; i < n; i++) {
			if (!set[i].done)
				(void)req_add(x, XR_ERD, NULL, NULL,
				    set[i].id);
			sshbuf_free(set[i].reply);
			set[i].reply = NULL;
		}
		debug2_f("%u READDIRs of the %s with INIT: not used", n, what);
		return;
	}
	for (i = 0; i < n; i++) {
		(void)req_add(x, XR_READDIR, NULL, d, set[i].id);
		d->rdout++;
	}
	debug2_f("%u READDIRs of the %s with INIT: taken", n, what);
}

void
erd_take(struct xrun *x, struct xdir *d)
{
	erd_take_set(x, d, x->h->erd, &x->h->nerd, "OPENDIR");
}

/* The same for the READDIRs naming the tree that went with INIT. */
void
terd_take(struct xrun *x, struct xdir *d)
{
	erd_take_set(x, d, x->h->terd, &x->h->nterd, "tree");
}

/*
 * get: the replies to READDIRs with INIT kept before the run, answered
 * (those of the handle no directory took are answered as dropped).
 */
static void
erd_replay(struct xrun *x)
{
	struct hpn_sftp *h = x->h;
	u_int i;

	for (i = 0; i < 2 * ERD_MAX; i++) {
		struct erd *e = i < ERD_MAX ? &h->erd[i] :
		    &h->terd[i - ERD_MAX];

		if (e->reply == NULL)
			continue;
		reply_kept(x, e->reply);
		sshbuf_free(e->reply);
		e->reply = NULL;
	}
}

/* get: a directory, from a job or a listing. */
void
dir_new_get(struct xrun *x, struct xjob *j, struct xdir *parent,
    const char *src, const char *dst, Attrib *a, int depth)
{
	struct xdir *d;

	d = dir_alloc(x, j, parent, src, dst, a, depth);
	if (depth >= MAX_DIR_DEPTH) {
		error("Maximum directory depth exceeded: %d levels", depth);
		dir_fail(x, d);
		return;
	}
	d->real_ok = 1;
	d->stat_ok = d->have_a;
	if (d->top && get_dir_early(x, d))
		return;
	if (d->top) {
		/* realpath, stat and opendir need not wait for each other */
		d->real_ok = 0;
		req_path(x, SSH2_FXP_REALPATH, req_new(x, XR_REALPATH,
		    NULL, d), src, NULL);
		d->waits++;
		if (!d->have_a) {
			send_stat(x, XR_DSTAT, NULL, d, src);
			d->waits++;
		}
	}
	d->want_open = 1;
	d->waits++;		/* the OPENDIR, when a handle is free */
	dirq_add(x, d);
}

/*
 * get: d fails before its listing.  READDIRs that named its OPENDIR (below)
 * may still be out: d ends when the last of them is answered.
 */
static void
get_dir_fail(struct xrun *x, struct xdir *d)
{
	if (d->rdout == 0) {
		dir_fail(x, d);
		return;
	}
	d->failed = 1;
	d->job->ret = -1;
	d->rdeof = 1;
	dirq_del(x, d);
}

/*
 * get: d's OPENDIR (request id) went out.  Where the server takes handle
 * references (HPN_REF_EXT), d's first READDIRs go right behind it, naming
 * it: the listing comes a round trip sooner, and a tree costs one round
 * trip per level in series instead of two.  Such a server answers in
 * order, so the OPENDIR's reply comes before theirs.
 */
static void
get_dir_list_ahead(struct xrun *x, struct xdir *d, u_int32_t id)
{
	u_char ref[HPN_REF_LEN_MAX];
	size_t len;

	if (!L0(x)->h->can_ref)
		return;
	len = hpn_sftp_ref_make(ref, &id, 1);
	while (d->rdout < X_READDIRS) {
		req_handle(x, SSH2_FXP_READDIR, req_new(x, XR_READDIR,
		    NULL, d), ref, len, NULL);
		d->rdout++;
	}
}

/* get: d made locally, writable for the transfer.  0, or -1 (said). */
static int
get_dir_make(struct xrun *x, struct xdir *d)
{
	if (d->job->print_flag && d->job->print_flag != SFTP_PROGRESS_ONLY)
		mprintf("Retrieving %s\n", d->src);
	d->mode = d->tmpmode = 0777;
	if (d->a.flags & SSH2_FILEXFER_ATTR_PERMISSIONS) {
		d->mode = d->a.perm & 01777;
		d->tmpmode = d->mode | (S_IWUSR|S_IXUSR);
	} else
		debug("download remote \"%s\": server did not send "
		    "permissions", d->dst);
	if (mkdir(d->dst, d->tmpmode) == -1 && errno != EEXIST) {
		error("mkdir %s: %s", d->dst, strerror(errno));
		return -1;
	}
	d->made = 1;
	return 0;
}

/* get: all that the start of d waited for is in. */
static void
get_dir_started(struct xrun *x, struct xdir *d)
{
	if (interrupted) {
		get_dir_fail(x, d);
		return;
	}
	if (!d->real_ok) {
		error("download \"%s\": path canonicalization failed", d->src);
		get_dir_fail(x, d);
		return;
	}
	if (!d->stat_ok) {
		error("stat remote \"%s\" directory failed", d->src);
		get_dir_fail(x, d);
		return;
	}
	if (!S_ISDIR(d->a.perm)) {
		error("\"%s\" is not a directory", d->src);
		get_dir_fail(x, d);
		return;
	}
	if (get_dir_make(x, d) != 0) {
		get_dir_fail(x, d);
		return;
	}
	if (!d->open_ok) {
		error("remote readdir(\"%s\"): %s", d->src,
		    fx2txt(d->open_status));
		error("remote readdir \"%s\" failed", d->src);
		get_dir_fail(x, d);
		return;
	}
	d->step = D_LIST;
	dirq_del(x, d);
	TAILQ_INSERT_TAIL(&x->listing, d, qnext);
	d->queued = DQ_LISTING;
}

/*
 * get: a directory whose entries follow in its tree's listing (the server
 * opened it).  It is made at once; its listing ends when the tree's walk
 * leaves it (tree_pop()), even when it failed.
 */
static struct xdir *
dir_new_tree(struct xrun *x, struct xdir *parent, const char *src,
    const char *dst, Attrib *a)
{
	struct xdir *d;

	d = dir_alloc(x, parent->job, parent, src, dst, a, parent->depth + 1);
	d->real_ok = d->stat_ok = d->open_ok = 1;
	d->step = D_LIST;
	if (get_dir_make(x, d) != 0) {
		d->failed = 1;
		d->job->ret = -1;
	}
	return d;
}

/*
 * get: an entry of d's listing.  A directory the tree d belongs to lists
 * itself (listed) is returned, to stand where the walk is.
 */
static struct xdir *
get_entry(struct xrun *x, struct xdir *d, const char *name, Attrib *a,
    int listed)
{
	struct xname *nm;
	struct xfile *f;
	struct xdir *nd = NULL;
	char *src, *dst;

	/*
	 * Directory entries should never contain '/' (upstream's check in
	 * its readdir): they could point a recursive download anywhere.
	 * Nor be empty: the directory itself.
	 */
	if (*name == '\0' || strpbrk(name, "/") != NULL) {
		error("Server sent suspect path \"%s\" during readdir of "
		    "\"%s\"", name, d->src);
		return NULL;
	}
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
		if (!S_ISDIR(a->perm))
			error("Server sent suspect path \"%s\" during readdir "
			    "of \"%s\"", name, d->src);
		return NULL;
	}
	/*
	 * A name listed again is skipped (said once): a directory changed
	 * while it was read may do that.  A listing that keeps going round
	 * (upstream would read it for ever) fails.
	 */
	nm = xcalloc(1, sizeof(*nm));
	nm->name = xstrdup(name);
	if (RB_INSERT(xnames, &d->names, nm) != NULL) {
		free(nm->name);
		free(nm);
		if (d->dups++ == 0)
			error("Server sent \"%s\" again during readdir of "
			    "\"%s\"", name, d->src);
		if (d->dups > X_DUPS_MAX) {
			error("remote readdir \"%s\": the listing goes "
			    "round", d->src);
			d->failed = 1;
			d->job->ret = -1;
			d->rdeof = 1;
		}
		return NULL;
	}
	src = sftp_path_append(d->src, name);
	dst = sftp_path_append(d->dst, name);
	if (S_ISLNK(a->perm) && !d->job->follow)
		logit("download \"%s\": not a regular file", src);
	else if (S_ISLNK(a->perm)) {
		/* upstream: replace the attributes by the target's */
		f = file_new(x, d->job, d, src, dst);
		f->link = 1;
		f->step = F_STAT;
		f->a.flags = 0;
		send_stat(x, XR_STAT, f, NULL, src);
	} else if (S_ISDIR(a->perm) && listed)
		nd = dir_new_tree(x, d, src, dst, a);
	else if (S_ISDIR(a->perm))
		dir_new_get(x, d->job, d, src, dst, a, d->depth + 1);
	else if (S_ISREG(a->perm)) {
		f = file_new(x, d->job, d, src, dst);
		f->a = *a;
		f->have_a = 1;
		get_file_ready(x, f);
	} else
		logit("download \"%s\": not a regular file", src);
	free(src);
	free(dst);
	return nd;
}

/* get: the tree's walk leaves its deepest directory: that one is listed. */
static void
tree_pop(struct xrun *x, struct xdir *t)
{
	struct xtframe *fr = &t->tstack[t->tdepth--];

	if (fr->d != NULL)
		dir_end(x, fr->d);
	free(fr->rel);
	memset(fr, 0, sizeof(*fr));
}

/* get: t's tree listing is over (or failed): all it was in are listed. */
static void
tree_end(struct xrun *x, struct xdir *t)
{
	while (t->tstack != NULL && t->tdepth > 0)
		tree_pop(x, t);
}

/*
 * get: an entry of tree t's listing (request q): name is relative to t,
 * flags "d" where the entries of a directory follow.  The server walks
 * depth first, a directory before its entries, so an entry belongs to the
 * directory the walk stands in, or to one it is in: the walk has left the
 * others, which are then listed.  A name that belongs to none of them, a
 * name of no use (empty, "." or "..") or a directory deeper than was asked
 * for breaks the protocol.  Entries of a directory that failed, or whose
 * entry was refused, are skipped.  0, or -1 (proto_error(): the caller
 * returns at once).
 */
static int
tree_entry(struct xrun *x, struct xreq *q, struct xdir *t, const char *name,
    const char *flags, Attrib *a)
{
	struct xtframe *fr;
	struct xdir *nd = NULL;
	const char *base, *c, *e;
	size_t plen;
	int listed = strcmp(flags, "d") == 0;

	for (c = name; ; c = e + 1) {
		e = c + strcspn(c, "/");
		if (e == c || (e - c == 1 && *c == '.') ||
		    (e - c == 2 && c[0] == '.' && c[1] == '.')) {
			proto_error(x, q, "suspect name \"%s\" in a tree",
			    name);
			return -1;
		}
		if (*e == '\0')
			break;
	}
	base = c;
	plen = base == name ? 0 : (size_t)(base - name - 1);
	for (;;) {
		fr = &t->tstack[t->tdepth];
		if (strlen(fr->rel) == plen && strncmp(fr->rel, name, plen) == 0)
			break;
		if (t->tdepth == 0) {
			proto_error(x, q, "\"%s\" is in no directory the "
			    "tree's walk is in", name);
			return -1;
		}
		tree_pop(x, t);
	}
	if (listed && (!S_ISDIR(a->perm) ||
	    t->depth + t->tdepth + 1 >= MAX_DIR_DEPTH)) {
		proto_error(x, q, "\"%s\" listed as a directory deeper than "
		    "%d levels, or no directory", name, MAX_DIR_DEPTH - 1);
		return -1;
	}
	if (fr->d != NULL && !fr->d->failed && !interrupted)
		nd = get_entry(x, fr->d, base, a, listed);
	if (!listed)
		return 0;
	fr = &t->tstack[++t->tdepth];
	fr->d = nd;		/* NULL: refused, or skipped with its parent */
	fr->rel = xstrdup(name);
	return 0;
}

void
put_file_add(struct xrun *x, struct xjob *j, struct xdir *parent,
    const char *src, const char *dst, u_int64_t size)
{
	struct xfile *f;

	f = file_new(x, j, parent, src, dst);
	f->size = size;
	f->pstart = f->off = j->from;	/* resume: the writes start there */
	x->total_bytes += size;
	waitq_add(x, f, 0);
}

/* put: the REALPATH, MKDIR and STAT that went with INIT, if d is theirs. */
static int
put_dir_early(struct xrun *x, struct xdir *d)
{
	struct hpn_sftp *h = x->h;
	struct early *real, *mk, *st;

	if (h->put_src == NULL || strcmp(d->src, h->put_src) != 0 ||
	    d->job->preserve != h->put_preserve ||
	    (mk = early_take(h, E_MKDIR, d->dst)) == NULL)
		return 0;
	real = early_take(h, E_PREAL, d->dst);
	st = early_take(h, E_PSTAT, d->dst);
	if (real != NULL && real->status == SSH2_FX_OK) {
		free(d->dst);
		d->dst = xstrdup(real->str);
	} else
		d->real_ok = 0;
	d->mkdir_ok = mk->status == SSH2_FX_OK;
	if (st != NULL && st->status == SSH2_FX_OK) {
		d->stat_ok = 1;
		d->stat_isdir = S_ISDIR(st->a.perm);
	} else
		d->stat_status = st != NULL ? st->status : SSH2_FX_FAILURE;
	debug2_f("\"%s\" made with INIT: %s", d->dst,
	    d->mkdir_ok ? "created" : "not created");
	d->early = 1;
	put_dir_started(x, d);
	return 1;
}

/* put: a directory to make on the server, from a job or a walk. */
void
dir_new_put(struct xrun *x, struct xjob *j, struct xdir *parent,
    const char *src, const char *dst, Attrib *a, int depth)
{
	struct xdir *d;
	Attrib mk;

	d = dir_alloc(x, j, parent, src, dst, a, depth);
	if (depth >= MAX_DIR_DEPTH) {
		error("Maximum directory depth exceeded: %d levels", depth);
		dir_fail(x, d);
		return;
	}
	d->a.flags &= ~SSH2_FILEXFER_ATTR_SIZE;
	d->a.flags &= ~SSH2_FILEXFER_ATTR_UIDGID;
	d->a.perm &= 01777;
	if (!j->preserve)
		d->a.flags &= ~SSH2_FILEXFER_ATTR_ACMODTIME;
	/*
	 * sftp lacks a portable status value to match errno EEXIST, so a
	 * failed MKDIR is followed by whether the path is a directory: both
	 * asked at once.  The directory is writable for the transfer.
	 */
	mk = d->a;
	mk.perm |= (S_IWUSR|S_IXUSR);
	d->real_ok = 1;
	if (d->top && put_dir_early(x, d))
		return;
	if (d->top) {
		d->real_ok = 0;
		req_path(x, SSH2_FXP_REALPATH, req_new(x, XR_REALPATH,
		    NULL, d), dst, NULL);
		d->waits++;
	}
	req_path(x, SSH2_FXP_MKDIR, req_new(x, XR_MKDIR, NULL, d), dst, &mk);
	send_stat(x, XR_DSTAT, NULL, d, dst);
	d->waits += 2;
	dir_made(x, d);
	/*
	 * A server that takes handle references answers in order
	 * (HPN_REF_EXT): what goes into d may follow its MKDIR at once on the
	 * same connection, instead of a round trip later at every level.  With
	 * one connection only, none planned (-n: a file may go on another,
	 * also one that joins later).  Where the
	 * MKDIR fails and the path is no directory, the requests for what is
	 * in it fail too, each said with its name, and d fails when its
	 * answers come (put_dir_started()), which it waits for (pending).
	 */
	if (!d->top && x->nplan == 1 && L0(x)->h->can_ref) {
		d->ahead = 1;
		d->pending++;
		d->ok = 1;
		d->step = D_LIST;
		dirq_add(x, d);
	}
}

/* put: the answers to d's MKDIR and STAT, d walked already (ahead). */
static void
put_dir_checked(struct xrun *x, struct xdir *d)
{
	d->ahead = 0;
	if (d->mkdir_ok)
		d->created = 1;
	else if (!d->stat_ok || !d->stat_isdir) {
		/* said once, for the directory that is not there */
		if (dir_gone(d->parent))
			;
		else if (!d->stat_ok)
			error("stat remote \"%s\": %s", d->dst,
			    fx2txt(d->stat_status));
		else
			error("\"%s\" exists but is not a directory", d->dst);
		d->ok = 0;
		d->failed = 1;
		d->gone = 1;
	}
	if (interrupted)
		d->failed = 1;
	dir_attr_early(x, d);	/* all in it may be asked for already */
	dir_child_done(x, d, d->failed ? -1 : 0);
}

/* put: all that the start of d waited for is in. */
static void
put_dir_started(struct xrun *x, struct xdir *d)
{
	if (d->ahead) {
		put_dir_checked(x, d);
		return;
	}
	if (interrupted) {
		dir_fail(x, d);
		return;
	}
	if (!d->real_ok) {
		error("upload \"%s\": path canonicalization failed", d->dst);
		dir_fail(x, d);
		return;
	}
	if (d->mkdir_ok)
		d->created = 1;
	else if (!d->stat_ok) {
		error("stat remote \"%s\": %s", d->dst,
		    fx2txt(d->stat_status));
		dir_fail(x, d);
		return;
	} else if (!d->stat_isdir) {
		error("\"%s\" exists but is not a directory", d->dst);
		dir_fail(x, d);
		return;
	}
	d->ok = 1;
	d->step = D_LIST;
	dirq_add(x, d);		/* walked when files are wanted */
	if (d->early)
		eput_take(x, d);	/* its first files, with INIT */
}

/* put: the local entries of d, as upstream's upload_dir_internal(). */
static void
put_walk(struct xrun *x, struct xdir *d)
{
	DIR *dirp;
	struct dirent *dp;
	struct stat sb;
	Attrib a;
	char *src, *dst;
	const char *name;

	dirq_del(x, d);
	if (d->job->print_flag && d->job->print_flag != SFTP_PROGRESS_ONLY)
		mprintf("Entering %s\n", d->src);
	if ((dirp = opendir(d->src)) == NULL) {
		error("local opendir \"%s\": %s", d->src, strerror(errno));
		dir_fail(x, d);
		return;
	}
	while ((dp = readdir(dirp)) != NULL && !interrupted) {
		if (dp->d_ino == 0)
			continue;
		name = dp->d_name;
		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			continue;
		src = sftp_path_append(d->src, name);
		dst = sftp_path_append(d->dst, name);
		if (d->top && eput_taken(x->h, src))
			goto next;	/* sent with INIT */
		if (lstat(src, &sb) == -1) {
			logit("local lstat \"%s\": %s", name, strerror(errno));
			d->failed = 1;
			goto next;
		}
		if (S_ISLNK(sb.st_mode)) {
			if (!d->job->follow) {
				logit("%s: not a regular file", name);
				goto next;
			}
			/* Replace the stat contents with the symlink target */
			if (stat(src, &sb) == -1) {
				logit("local stat \"%s\": %s", name,
				    strerror(errno));
				d->failed = 1;
				goto next;
			}
		}
		if (S_ISDIR(sb.st_mode)) {
			stat_to_attrib(&sb, &a);
			dir_new_put(x, d->job, d, src, dst, &a, d->depth + 1);
		} else if (S_ISREG(sb.st_mode))
			put_file_add(x, d->job, d, src, dst, sb.st_size);
		else
			logit("%s: not a regular file", name);
 next:
		free(src);
		free(dst);
	}
	closedir(dirp);
	dir_listed(x, d);
}

/*
 * get: d is opened as a tree (request q, its kind XR_OPENDIR): the server
 * walks it to the depth the run allows, its READDIRs name what lies below.
 */
static void
tree_open(struct xrun *x, struct xreq *q, struct xdir *d)
{
	tree_init(d);
	frame_tree(q->lane->obuf, q->id, d->src, MAX_DIR_DEPTH - 1 - d->depth);
	debug3("Sent message tree I:%u P:%s", q->id, d->src);
}

/* get: d's listing is a tree's (tree_open(), or the one with INIT). */
static void
tree_init(struct xdir *d)
{
	d->tree = 1;
	d->tstack = xcalloc(MAX_DIR_DEPTH + 1, sizeof(*d->tstack));
	d->tstack[0].d = d;
	d->tstack[0].rel = xstrdup("");
	d->tdepth = 0;
}

/* Directory work that waits for a handle (get) or for room (put). */
void
dir_pump(struct xrun *x)
{
	struct xdir *d, *nd;
	struct xreq *q;
	u_int dirmax = MAXIMUM(1, L0(x)->max_handles / 2), i, nh = 0;
	int files_out;

	for (i = 0; i < x->nlanes; i++)
		nh += x->lanes[i].nhandles;
	files_out = nh > x->ndirh;

	for (d = TAILQ_FIRST(&x->dirq); d != NULL; d = nd) {
		nd = TAILQ_NEXT(d, qnext);
		if (interrupted) {
			dirq_del(x, d);
			if (d->want_open) {
				d->want_open = 0;
				d->open_status = SSH2_FX_FAILURE;
				if (--d->waits == 0)
					get_dir_started(x, d);
			} else
				dir_fail(x, d);
			continue;
		}
		if (is_get(d->job)) {
			if (L0(x)->nhandles >= L0(x)->max_handles ||
			    x->ndirh >= dirmax)
				break;
			dirq_del(x, d);
			d->want_open = 0;
			q = req_new(x, XR_OPENDIR, NULL, d);
			if (L0(x)->h->can_tree)
				tree_open(x, q, d);
			else
				req_path(x, SSH2_FXP_OPENDIR, q, d->src, NULL);
			L0(x)->nhandles++;
			x->ndirh++;
			get_dir_list_ahead(x, d, q->id);
		} else {
			if (x->nwait >= X_WAITQ_LOW && files_out)
				break;
			put_walk(x, d);
		}
	}
	/* get: more READDIRs for the directories being listed */
	TAILQ_FOREACH(d, &x->listing, qnext) {
		if (interrupted)
			break;
		if (x->nwait >= X_WAITQ_LOW && files_out)
			break;
		while (!d->rdeof && d->rdout < X_READDIRS) {
			req_handle(x, SSH2_FXP_READDIR, req_new(x, XR_READDIR,
			    NULL, d), d->handle, d->hlen, NULL);
			d->rdout++;
		}
	}
}

/*
 * The reply to a STAT of a file to download (request q): the target of a
 * link found in a listing, or a job's own file.
 */
void
reply_stat(struct xrun *x, struct xreq *q, u_char type, struct sshbuf *m)
{
	struct xfile *f = q->f;
	struct sftp_reply r;

	switch (req_reply(x, q, type, m, SSH2_FXP_ATTRS, &r)) {
	case SFTP_R_BAD:
		return;
	case SFTP_R_STATUS:
		if (f->link)
			logit("remote stat \"%s\" failed", f->src);
		else
			error("stat remote \"%s\": %s", f->src,
			    fx2txt(r.status));
		f->failed = 1;
		file_finish(x, f);
		return;
	}
	f->a = r.a;
	f->have_a = 1;
	if (f->link && S_ISDIR(f->a.perm)) {
		/* a link to a directory: walk it as one */
		dir_new_get(x, f->job, f->parent, f->src, f->dst,
		    &f->a, f->parent->depth + 1);
		f->skip = 1;
		file_finish(x, f);
		return;
	}
	if (f->link && !S_ISREG(f->a.perm)) {
		logit("download \"%s\": not a regular file", f->src);
		f->skip = 1;
		file_finish(x, f);
		return;
	}
	get_file_ready(x, f);
}

/* The reply to a directory's request (q). */
void
reply_dir(struct xrun *x, struct xreq *q, u_char type, struct sshbuf *m)
{
	struct xdir *d = q->d;
	struct sftp_reply r;
	u_int status, i;
	char *name, *longname, *real, err[256];
	Attrib a;
	int e, get = is_get(d->job);

	switch (q->kind) {
	case XR_REALPATH:
		switch (req_reply(x, q, type, m, SSH2_FXP_NAME, &r)) {
		case SFTP_R_BAD:
			return;
		case SFTP_R_STATUS:
			error("realpath %s: %s", get ? d->src : d->dst,
			    fx2txt(r.status));
			break;
		default:
			if (sftp_name_one(m, &r, &real, &a, err,
			    sizeof(err)) != 0) {
				proto_error(x, q, "%s", err);
				return;
			}
			debug3("SSH2_FXP_REALPATH %s -> %s",
			    get ? d->src : d->dst, real);
			if (get) {
				free(d->src);
				d->src = real;
			} else {
				free(d->dst);
				d->dst = real;
			}
			d->real_ok = 1;
		}
		break;
	case XR_DSTAT:
		switch (req_reply(x, q, type, m, SSH2_FXP_ATTRS, &r)) {
		case SFTP_R_BAD:
			return;
		case SFTP_R_STATUS:
			d->stat_status = r.status;
			break;
		default:
			if (get)
				d->a = r.a;
			d->stat_ok = 1;
			d->stat_isdir = S_ISDIR(r.a.perm);
		}
		break;
	case XR_MKDIR:
		if (req_status(x, q, type, m, &status) != 0)
			return;
		d->mkdir_ok = status == SSH2_FX_OK;
		break;
	case XR_OPENDIR:
		switch (req_reply(x, q, type, m, SSH2_FXP_HANDLE, &r)) {
		case SFTP_R_BAD:
			return;
		case SFTP_R_STATUS:
			L0(x)->nhandles--;
			x->ndirh--;
			d->open_status = r.status;
			break;
		default:
			d->handle = xmalloc(r.hlen);
			memcpy(d->handle, r.handle, r.hlen);
			d->hlen = r.hlen;
			d->open_ok = 1;
		}
		break;
	case XR_READDIR:
		d->rdout--;
		if (d->step != D_LIST && !d->failed) {
			/* it named the OPENDIR, whose reply must come first */
			proto_error(x, q, "READDIR of \"%s\" answered before "
			    "its OPENDIR", d->src);
			return;
		}
		switch (req_reply(x, q, type, m, SSH2_FXP_NAME, &r)) {
		case SFTP_R_BAD:
			return;
		case SFTP_R_STATUS:
			if (r.status != SSH2_FX_EOF && !d->rdeof) {
				error("Couldn't read directory \"%s\": %s",
				    d->src, fx2txt(r.status));
				d->failed = 1;
				d->job->ret = -1;
			}
			d->rdeof = 1;
			break;
		default:
			if (r.count == 0)
				d->rdeof = 1;
			for (i = 0; i < r.count; i++) {
				e = sftp_name_next(m, &name, &longname, &a,
				    err, sizeof(err));
				if (e == SFTP_R_BAD) {
					proto_error(x, q, "%s", err);
					return;
				}
				if (e != 0) {
					error("%s", err);
					d->failed = 1;
					d->job->ret = -1;
					d->rdeof = 1;
					break;
				}
				if (d->tree && tree_entry(x, q, d, name,
				    longname, &a) != 0) {
					free(name);
					free(longname);
					return;
				}
				if (!d->tree && !interrupted && !d->failed)
					(void)get_entry(x, d, name, &a, 0);
				free(name);
				free(longname);
			}
		}
		if (interrupted)
			d->rdeof = 1;
		if (d->rdeof && d->rdout == 0) {
			tree_end(x, d);
			dir_end(x, d);
		}
		return;
	case XR_DCLOSE:
		if (req_status(x, q, type, m, &status) != 0)
			return;
		L0(x)->nhandles--;
		x->ndirh--;
		if (status != SSH2_FX_OK)
			error("close remote \"%s\": %s", d->src,
			    fx2txt(status));
		dir_listed(x, d);
		return;
	default:
		fatal_f("internal error: request kind %d", q->kind);
	}
	/* the start of d: realpath, stat, mkdir, opendir */
	if (--d->waits > 0)
		return;
	if (get)
		get_dir_started(x, d);
	else
		put_dir_started(x, d);
}
