/*
 * HPN patch set: an SFTP transfer engine that keeps many files in flight.
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
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
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
#include "atomicio.h"
#include "misc.h"
#include "utf8.h"

#include "sftp.h"
#include "sftp-common.h"
#include "sftp-client.h"

#include "hpn.h"
#include "hpn-sftp-xfer.h"

extern volatile sig_atomic_t interrupted;
extern int showprogress;

#define MAX_DIR_DEPTH	64		/* upstream's */
#define X_OBUF_MAX	(4 * 1024 * 1024)	/* composed, not yet written */
#define X_READ_MAX	(256 * 1024)	/* one read of replies */
#define X_READDIRS	8		/* READDIRs out per directory */
#define X_WAITQ_LOW	4096		/* files waiting before listing pauses */
#define X_DATA_REQS	4		/* data requests out: nreq times this */
#define X_DUPS_MAX	1024		/* names listed again: a loop */

/* ------------------------------------------------------------------ */
/* the connection: requests that ride with INIT */

/*
 * What goes with INIT besides the limits request: scp knows the remote path
 * it will look at first, and what it will do there.
 *  - a download: LSTAT and STAT of the source (its glob, then the engine);
 *    with -r also REALPATH and OPENDIR (failing harmlessly on a file).
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
	E_LIMITS, E_DOT, E_LSTAT, E_STAT, E_REAL, E_OPENDIR, E_PREAL, E_MKDIR,
	E_PSTAT, E_OPEN, E_OPENT, E_MAX
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

struct hpn_sftp {
	int fd_in, fd_out;
	u_int *msg_id;			/* the connection's, shared */
	u_int version;
	u_int rbuflen, wbuflen, nreq;
	u_int64_t open_handles;		/* the server's figure, 0: none */
	int upstream;			/* -l: upstream's code does it all */
	int can_hash;			/* the server has HPN_HASH_EXT */
	int can_ref;			/* ... and HPN_REF_EXT */
	struct early e[E_MAX];
	char *pf_path;			/* E_LSTAT..E_OPENDIR: this path */
	char *put_src, *put_dst;	/* E_PREAL..E_OPEN: this upload */
	char *put_targ;			/* E_OPENT: or there */
	int put_fd;
	int put_preserve;
	struct spec spec[SPEC_MAX];	/* the upload's first bytes, with INIT */
	u_int nspec, spec_open;		/* ... not yet taken by the engine */
};

static struct {
	char *path;
	int lstat, getdir;
	char *put_src, *put_dst;
	int put_dir, put_fd, put_preserve, put_targ;
	Attrib put_a;
	int batch;			/* from sftp -b's first command */
} pf = { NULL, 0, 0, NULL, NULL, 0, -1, 0, 0, { 0 }, 0 };
static struct hpn_sftp *batch_h;	/* its lookups, until it has run */

static void
prefetch_clear(void)
{
	free(pf.path);
	free(pf.put_src);
	free(pf.put_dst);
	if (pf.put_fd != -1)
		close(pf.put_fd);
	memset(&pf, 0, sizeof(pf));
	pf.put_fd = -1;
}

/* upstream's prepare_remote_path(), without ~user (NULL) */
static const char *
prepare_path(const char *path)
{
	if (*path == '\0' || strcmp(path, "~") == 0)
		return ".";
	if (strncmp(path, "~/", 2) == 0) {
		path += 2 + strspn(path + 2, "/");
		return *path == '\0' ? "." : path;
	}
	return *path == '~' ? NULL : path;
}

/* scp, before it connects to download src (recursive: -r). */
void
hpn_sftp_prefetch_get(const char *src, int recursive)
{
	const char *p;

	prefetch_clear();
	if ((p = prepare_path(src)) == NULL || strpbrk(p, "*?[\\") != NULL)
		return;		/* globbed or expanded: nothing known */
	pf.path = xstrdup(p);
	pf.lstat = 1;
	pf.getdir = recursive;
}

/* scp, before it connects to upload src to targ (must_be_dir: -d...). */
void
hpn_sftp_prefetch_put(const char *targ, const char *src, int recursive,
    int preserve, int must_be_dir)
{
	const char *p;
	char *tmp, *name;
	struct stat sb;

	prefetch_clear();
	if ((p = prepare_path(targ)) == NULL)
		return;
	pf.path = xstrdup(p);
	if (stat(src, &sb) == -1)
		return;
	tmp = xstrdup(src);
	name = basename(tmp);
	if (name == NULL || strcmp(name, ".") == 0 ||
	    strcmp(name, "..") == 0 || strcmp(name, "/") == 0 ||
	    (!S_ISREG(sb.st_mode) && !(S_ISDIR(sb.st_mode) && recursive))) {
		free(tmp);
		return;
	}
	if (S_ISREG(sb.st_mode) &&
	    ((pf.put_fd = open(src, O_RDONLY)) == -1 ||
	    fstat(pf.put_fd, &sb) == -1 || !S_ISREG(sb.st_mode))) {
		if (pf.put_fd != -1)
			close(pf.put_fd);
		pf.put_fd = -1;
		free(tmp);
		return;
	}
	pf.put_dir = S_ISDIR(sb.st_mode);
	pf.put_targ = !pf.put_dir && !must_be_dir;
	pf.put_src = xstrdup(src);
	pf.put_dst = sftp_path_append(pf.path, name);
	pf.put_preserve = preserve;
	/* the attributes upstream's OPEN or MKDIR sends */
	stat_to_attrib(&sb, &pf.put_a);
	pf.put_a.flags &= ~SSH2_FILEXFER_ATTR_SIZE;
	pf.put_a.flags &= ~SSH2_FILEXFER_ATTR_UIDGID;
	pf.put_a.perm &= pf.put_dir ? 01777 : 0777;
	if (!preserve)
		pf.put_a.flags &= ~SSH2_FILEXFER_ATTR_ACMODTIME;
	if (pf.put_dir)
		pf.put_a.perm |= (S_IWUSR|S_IXUSR);
	free(tmp);
}

/*
 * sftp -b, before it connects: the batch file's first line, read with
 * read(2) so that stdio has buffered nothing yet and its own reads go on
 * after the line (at most BATCH_PEEK_MAX bytes of it).  When the line is a
 * get of one path without glob characters (relative to the remote working
 * directory or absolute), its lookups go with INIT as for scp's download,
 * and hpn_sftp_lookahead() finds them asked.  hpn_sftp_batch_read() hands
 * the bytes back as fgets() would have read them.  Input that is neither
 * a regular file nor a pipe with data waiting is left alone: a program
 * that writes its commands only once sftp has connected must not be
 * waited for.
 */
#define BATCH_PEEK_MAX	8192
static char *batch_line, *batch_next;

void
hpn_sftp_batch_peek(FILE *f, int global_rflag)
{
	struct stat sb;
	struct pollfd pfd;
	char *line, *cp, *word, *path = NULL;
	size_t n = 0;
	ssize_t r;
	int fd = fileno(f), recursive = global_rflag, first = 1;

	if (batch_line != NULL || fd == -1 || fstat(fd, &sb) == -1)
		return;
	if (!S_ISREG(sb.st_mode)) {
		pfd.fd = fd;
		pfd.events = POLLIN;
		if (!S_ISFIFO(sb.st_mode) || poll(&pfd, 1, 0) != 1 ||
		    (pfd.revents & POLLIN) == 0)
			return;
	}
	line = xmalloc(BATCH_PEEK_MAX + 1);
	while (n < BATCH_PEEK_MAX) {
		if ((r = read(fd, line + n, 1)) == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (line[n++] == '\n')
			break;
	}
	if (n == 0) {
		free(line);
		return;
	}
	line[n] = '\0';
	batch_line = batch_next = line;

	/* [-@]* get|mget|reget [-afPpRr]... path [local] */
	cp = xstrdup(line);
	word = cp + strspn(cp, " \t");
	word += strspn(word, "-@");
	for (word = strtok(word, " \t\r\n"); word != NULL;
	    word = strtok(NULL, " \t\r\n"), first = 0) {
		if (first) {
			if (strcmp(word, "get") != 0 &&
			    strcmp(word, "mget") != 0 &&
			    strcmp(word, "reget") != 0)
				break;
		} else if (*word == '-' && path == NULL) {
			if (word[1] == '\0' ||
			    word[strspn(word + 1, "afPpRr") + 1] != '\0')
				break;	/* "-", "--", or not get's flags */
			if (strpbrk(word, "Rr") != NULL)
				recursive = 1;
		} else {
			path = word;
			break;
		}
	}
	if (path != NULL && strpbrk(path, "\"'\\*?[#~") == NULL) {
		debug3_f("\"%s\" (first batch command)", path);
		hpn_sftp_prefetch_get(path, recursive);
		pf.batch = 1;
	}
	free(cp);
}

/* sftp -b: fgets() of the batch file, the peeked bytes first. */
char *
hpn_sftp_batch_read(char *buf, int len, FILE *f)
{
	size_t n;
	int i;

	if (batch_line == NULL && batch_h != NULL) {
		/* the first command has run: its lookups serve no other */
		for (i = E_LSTAT; i <= E_OPENDIR; i++)
			batch_h->e[i].used = 1;
		batch_h = NULL;
	}
	if (batch_line == NULL || len < 2)
		return fgets(buf, len, f);
	n = strlen(batch_next);
	if (n > (size_t)len - 1)
		n = len - 1;
	memcpy(buf, batch_next, n);
	buf[n] = '\0';
	batch_next += n;
	if (*batch_next != '\0')
		return buf;
	free(batch_line);
	batch_line = batch_next = NULL;
	/* a line longer than the peek: the rest as fgets() would add it */
	if (n > 0 && buf[n - 1] != '\n' && n < (size_t)len - 1)
		(void)fgets(buf + n, len - n, f);
	return buf;
}

struct hpn_sftp *
hpn_sftp_attach(int fd_in, int fd_out, u_int *msg_id)
{
	struct hpn_sftp *h;

	h = xcalloc(1, sizeof(*h));
	h->fd_in = fd_in;
	h->fd_out = fd_out;
	h->msg_id = msg_id;
	h->version = SSH2_FILEXFER_VERSION;
	h->put_fd = -1;
	return h;
}

static size_t
frame_start(struct sshbuf *b, u_char type, u_int id)
{
	size_t start = sshbuf_len(b);
	int r;

	if ((r = sshbuf_put_u32(b, 0)) != 0 ||
	    (r = sshbuf_put_u8(b, type)) != 0 ||
	    (r = sshbuf_put_u32(b, id)) != 0)
		fatal_fr(r, "compose");
	return start;
}

static void
frame_end(struct sshbuf *b, size_t start)
{
	size_t len = sshbuf_len(b) - start - 4;

	if (len > SFTP_MAX_MSG_LENGTH)
		fatal("Outbound message too long %zu", len);
	POKE_U32(sshbuf_mutable_ptr(b) + start, len);
}

/* A path request, with attributes (a) and open flags (pflags) or not. */
static void
frame_path(struct sshbuf *b, u_char type, u_int id, const char *path,
    const Attrib *a, u_int pflags)
{
	size_t start = frame_start(b, type, id);
	int r;

	if ((r = sshbuf_put_cstring(b, path)) != 0 ||
	    (type == SSH2_FXP_OPEN && (r = sshbuf_put_u32(b, pflags)) != 0) ||
	    (a != NULL && (r = encode_attrib(b, a)) != 0))
		fatal_fr(r, "compose");
	frame_end(b, start);
}

/*
 * Framed requests in b, written out whole.  A connection closed under us
 * is an error said (EPIPE), not a signal: sftp leaves SIGPIPE at its
 * default.
 */
static void
send_blocking(struct hpn_sftp *h, struct sshbuf *b)
{
	sshsig_t opipe = ssh_signal(SIGPIPE, SIG_IGN);
	size_t n;

	n = atomicio(vwrite, h->fd_out, sshbuf_mutable_ptr(b), sshbuf_len(b));
	ssh_signal(SIGPIPE, opipe);
	if (n != sshbuf_len(b))
		fatal("Couldn't send packet: %s", strerror(errno));
}

static void
early_path(struct hpn_sftp *h, struct sshbuf *b, int kind, u_char type,
    const char *path, const Attrib *a, u_int pflags)
{
	h->e[kind].id = (*h->msg_id)++;
	frame_path(b, type, h->e[kind].id, path, a, pflags);
	debug3_f("T:%u I:%u P:%s with INIT", type, h->e[kind].id, path);
}

/*
 * With INIT and the upload's OPENs (of target/name and of target: one of
 * them can succeed), the file's first HPN_SFTP_SPEC bytes as WRITEs naming
 * those OPENs (a handle reference, HPN_REF_EXT).  Whether the server takes
 * references is known only from its VERSION, a round trip later: where it
 * does (hpnsftp-server), the data moves a round trip earlier, TCP's slow
 * start with it; where it does not, they fail as WRITEs to an unknown
 * handle and are sent again (HPN_SFTP_SPEC bytes lost, no time).  The
 * engine takes them over (spec_take()); replies that come before it runs
 * are kept (hpn_sftp_stash()).  Writes of HPN_SFTP_SPEC_WRITE bytes: what
 * every SFTP server takes, before the limits are known.
 */
static void
spec_send(struct hpn_sftp *h, struct sshbuf *b)
{
	u_char ref[HPN_REF_LEN_MAX], *p;
	u_int32_t ids[2];
	u_int n = 0;
	size_t hlen, start;
	ssize_t r;
	int e;

	if (h->put_fd == -1)
		return;
	ids[n++] = h->e[E_OPEN].id;
	if (h->e[E_OPENT].id != 0)
		ids[n++] = h->e[E_OPENT].id;
	hlen = hpn_sftp_ref_make(ref, ids, n);
	while (h->nspec < SPEC_MAX) {
		struct spec *sp = &h->spec[h->nspec];

		sp->off = (u_int64_t)h->nspec * HPN_SFTP_SPEC_WRITE;
		sp->id = (*h->msg_id)++;
		start = frame_start(b, SSH2_FXP_WRITE, sp->id);
		if ((e = sshbuf_put_string(b, ref, hlen)) != 0 ||
		    (e = sshbuf_put_u64(b, sp->off)) != 0 ||
		    (e = sshbuf_reserve(b, 4 + HPN_SFTP_SPEC_WRITE, &p)) != 0)
			fatal_fr(e, "compose");
		do
			r = pread(h->put_fd, p + 4, HPN_SFTP_SPEC_WRITE,
			    (off_t)sp->off);
		while (r == -1 && errno == EINTR);
		if (r <= 0) {
			/* the end (or an error the engine will meet) */
			(*h->msg_id)--;
			if ((e = sshbuf_consume_end(b, sshbuf_len(b) -
			    start)) != 0)
				fatal_fr(e, "consume");
			break;
		}
		POKE_U32(p, (u_int32_t)r);
		if ((e = sshbuf_consume_end(b, HPN_SFTP_SPEC_WRITE - r)) != 0)
			fatal_fr(e, "consume");
		frame_end(b, start);
		sp->len = (u_int)r;
		h->nspec++;
		if ((size_t)r < HPN_SFTP_SPEC_WRITE)
			break;
	}
	h->spec_open = h->nspec;
	debug3_f("%u WRITEs of \"%s\" with INIT", h->nspec, h->put_dst);
}

/*
 * A reply read outside the engine (m: type, id, ...): when it answers a
 * WRITE of spec_send() not yet taken over, it is noted and 1 returned
 * (the caller reads on); 0: someone else's.
 */
static int
spec_done(struct hpn_sftp *h, u_int id, u_int status)
{
	u_int i;

	for (i = 0; i < h->nspec; i++) {
		if (h->spec[i].id != id || h->spec[i].done)
			continue;
		h->spec[i].done = 1;
		h->spec[i].status = status;
		h->spec_open--;
		return 1;
	}
	return 0;
}

int
hpn_sftp_stash(struct hpn_sftp *h, struct sshbuf *m)
{
	const u_char *p = sshbuf_ptr(m);

	if (h == NULL || h->spec_open == 0 || sshbuf_len(m) < 9 ||
	    p[0] != SSH2_FXP_STATUS)
		return 0;
	return spec_done(h, PEEK_U32(p + 1), PEEK_U32(p + 5));
}

/* With INIT: the limits request, and what scp will ask first. */
void
hpn_sftp_early_send(struct hpn_sftp *h, int limited)
{
	struct sshbuf *b;
	size_t start;
	int r;

	if ((b = sshbuf_new()) == NULL)
		fatal_f("sshbuf_new failed");
	h->e[E_LIMITS].id = (*h->msg_id)++;
	start = frame_start(b, SSH2_FXP_EXTENDED, h->e[E_LIMITS].id);
	if ((r = sshbuf_put_cstring(b, "limits@openssh.com")) != 0)
		fatal_fr(r, "compose");
	frame_end(b, start);
	early_path(h, b, E_DOT, SSH2_FXP_REALPATH, ".", NULL, 0);
	if (pf.path != NULL) {
		h->pf_path = pf.path;
		pf.path = NULL;
		if (pf.lstat)
			early_path(h, b, E_LSTAT, SSH2_FXP_LSTAT, h->pf_path,
			    NULL, 0);
		early_path(h, b, E_STAT, SSH2_FXP_STAT, h->pf_path, NULL, 0);
		/* handles and changes only for the engine (not with -l) */
		if (pf.getdir && !limited) {
			early_path(h, b, E_REAL, SSH2_FXP_REALPATH,
			    h->pf_path, NULL, 0);
			early_path(h, b, E_OPENDIR, SSH2_FXP_OPENDIR,
			    h->pf_path, NULL, 0);
		}
	}
	if (pf.put_dst != NULL && !limited) {
		h->put_src = pf.put_src;
		h->put_dst = pf.put_dst;
		h->put_fd = pf.put_fd;
		h->put_preserve = pf.put_preserve;
		pf.put_src = pf.put_dst = NULL;
		pf.put_fd = -1;
		if (pf.put_dir) {
			early_path(h, b, E_PREAL, SSH2_FXP_REALPATH,
			    h->put_dst, NULL, 0);
			early_path(h, b, E_MKDIR, SSH2_FXP_MKDIR, h->put_dst,
			    &pf.put_a, 0);
			early_path(h, b, E_PSTAT, SSH2_FXP_STAT, h->put_dst,
			    NULL, 0);
		} else {
			early_path(h, b, E_OPEN, SSH2_FXP_OPEN, h->put_dst,
			    &pf.put_a, SSH2_FXF_WRITE | SSH2_FXF_CREAT);
			if (pf.put_targ) {
				h->put_targ = xstrdup(h->pf_path);
				early_path(h, b, E_OPENT, SSH2_FXP_OPEN,
				    h->put_targ, &pf.put_a,
				    SSH2_FXF_WRITE | SSH2_FXF_CREAT);
			}
			spec_send(h, b);
		}
	}
	if (pf.batch)
		batch_h = h;
	prefetch_clear();
	send_blocking(h, b);
	sshbuf_free(b);
	hpn_sftp_lanes_go();	/* -n: the others, behind this one */
}

static void
recv_blocking(struct hpn_sftp *h, struct sshbuf *m)
{
	u_char *p;
	u_int len;
	int r;

	sshbuf_reset(m);
	if ((r = sshbuf_reserve(m, 4, &p)) != 0)
		fatal_fr(r, "reserve");
	if (atomicio(read, h->fd_in, p, 4) != 4)
		fatal("Connection closed");
	if ((r = sshbuf_get_u32(m, &len)) != 0)
		fatal_fr(r, "parse");
	if (len > SFTP_MAX_MSG_LENGTH)
		fatal("Received message too long %u", len);
	if ((r = sshbuf_reserve(m, len, &p)) != 0)
		fatal_fr(r, "reserve");
	if (atomicio(read, h->fd_in, p, len) != len)
		fatal("Connection closed");
}

/* ------------------------------------------------------------------ */
/* plain requests, for verified resume (hpn-sftp-resume.c) */

/* sftp_init: a VERSION extension upstream does not know.  1: ours. */
int
hpn_sftp_server_ext(struct hpn_sftp *h, const char *name, const char *value)
{
	if (h == NULL || strcmp(value, "1") != 0)
		return 0;
	if (strcmp(name, HPN_HASH_EXT) == 0)
		h->can_hash = 1;
	else if (strcmp(name, HPN_REF_EXT) == 0)
		h->can_ref = 1;
	else
		return 0;
	return 1;
}

int
hpn_sftp_can_hash(struct hpn_sftp *h)
{
	return h != NULL && h->can_hash;
}

u_int
hpn_sftp_next_id(struct hpn_sftp *h)
{
	return (*h->msg_id)++;
}

/* A request (its body: type, id, ...), framed. */
void
hpn_sftp_send(struct hpn_sftp *h, struct sshbuf *body)
{
	struct sshbuf *b;
	int r;

	if ((b = sshbuf_new()) == NULL)
		fatal_f("sshbuf_new failed");
	if ((r = sshbuf_put_stringb(b, body)) != 0)
		fatal_fr(r, "compose");
	send_blocking(h, b);
	sshbuf_free(b);
}

/* The next reply, its body in m. */
void
hpn_sftp_recv(struct hpn_sftp *h, struct sshbuf *m)
{
	recv_blocking(h, m);
}

/* A STATUS reply's code, SSH2_FX_FAILURE for anything else. */
static u_int
reply_status(struct sshbuf *m, u_char type)
{
	u_int status;

	if (type != SSH2_FXP_STATUS || sshbuf_get_u32(m, &status) != 0)
		return SSH2_FX_FAILURE;
	return status;
}

/*
 * OPEN of path for reading and its STAT, in one round trip.  0: *handle
 * (hlen bytes) and *size; -1: *status says why (and no handle is left).
 */
int
hpn_sftp_open_read(struct hpn_sftp *h, const char *path, u_char **handle,
    size_t *hlen, u_int64_t *size, u_int *status)
{
	struct sshbuf *b, *m;
	u_int oid, sid, id, i;
	u_char type;
	Attrib a;
	int r, have_size = 0;

	*handle = NULL;
	*hlen = 0;
	*size = 0;
	*status = SSH2_FX_OK;
	if ((b = sshbuf_new()) == NULL || (m = sshbuf_new()) == NULL)
		fatal_f("sshbuf_new failed");
	attrib_clear(&a);
	oid = hpn_sftp_next_id(h);
	frame_path(b, SSH2_FXP_OPEN, oid, path, &a, SSH2_FXF_READ);
	sid = hpn_sftp_next_id(h);
	frame_path(b, SSH2_FXP_STAT, sid, path, NULL, 0);
	send_blocking(h, b);
	for (i = 0; i < 2; i++) {
		recv_blocking(h, m);
		if ((r = sshbuf_get_u8(m, &type)) != 0 ||
		    (r = sshbuf_get_u32(m, &id)) != 0)
			fatal_fr(r, "parse");
		if (id == oid && type == SSH2_FXP_HANDLE) {
			if ((r = sshbuf_get_string(m, handle, hlen)) != 0)
				fatal_fr(r, "parse handle");
		} else if (id == oid) {
			*status = reply_status(m, type);
		} else if (id == sid && type == SSH2_FXP_ATTRS) {
			if ((r = decode_attrib(m, &a)) != 0)
				fatal_fr(r, "decode_attrib");
			if (a.flags & SSH2_FILEXFER_ATTR_SIZE) {
				*size = a.size;
				have_size = 1;
			}
		} else if (id != sid)
			fatal("ID mismatch (%u)", id);
	}
	sshbuf_free(b);
	sshbuf_free(m);
	if (*handle != NULL && !have_size) {
		hpn_sftp_close_handle(h, *handle, *hlen);
		free(*handle);
		*handle = NULL;
		*status = SSH2_FX_FAILURE;	/* no size: cannot resume */
	}
	if (*handle == NULL && *status == SSH2_FX_OK)
		*status = SSH2_FX_FAILURE;
	return *handle == NULL ? -1 : 0;
}

/* CLOSE of a handle, waited for. */
void
hpn_sftp_close_handle(struct hpn_sftp *h, const u_char *handle, size_t hlen)
{
	struct sshbuf *b;
	size_t start;
	u_int id, rid, status;
	u_char type;
	int r;

	if ((b = sshbuf_new()) == NULL)
		fatal_f("sshbuf_new failed");
	id = hpn_sftp_next_id(h);
	start = frame_start(b, SSH2_FXP_CLOSE, id);
	if ((r = sshbuf_put_string(b, handle, hlen)) != 0)
		fatal_fr(r, "compose");
	frame_end(b, start);
	send_blocking(h, b);
	recv_blocking(h, b);
	if ((r = sshbuf_get_u8(b, &type)) != 0 ||
	    (r = sshbuf_get_u32(b, &rid)) != 0)
		fatal_fr(r, "parse");
	if (rid != id)
		fatal("ID mismatch (%u != %u)", rid, id);
	if ((status = reply_status(b, type)) != SSH2_FX_OK)
		debug_f("close: %s", fx2txt(status));
	sshbuf_free(b);
}

/* The reply each early request wants when it succeeds. */
static u_char
early_want(int kind)
{
	switch (kind) {
	case E_DOT:
	case E_REAL:
	case E_PREAL:
		return SSH2_FXP_NAME;
	case E_LSTAT:
	case E_STAT:
	case E_PSTAT:
		return SSH2_FXP_ATTRS;
	case E_OPENDIR:
	case E_OPEN:
	case E_OPENT:
		return SSH2_FXP_HANDLE;
	default:
		return SSH2_FXP_STATUS;		/* E_MKDIR */
	}
}

/*
 * One reply to an early request (not limits).  An answer of the kind the
 * request wants, or an error STATUS, stands for upstream's own request a
 * round trip later.  Anything else (another type, an OK STATUS where data
 * was due, a body that does not parse) is not used: upstream's code (or
 * the engine) asks again and meets the server's answer itself, with its
 * own messages.  A handle that came with such an answer is kept to close.
 */
static void
early_reply(struct early *e, int kind, u_char type, struct sshbuf *m)
{
	u_char want = early_want(kind);
	char *longname = NULL;
	u_int count;
	int r;

	e->done = 1;
	e->status = SSH2_FX_FAILURE;
	if (type == SSH2_FXP_STATUS) {
		if ((r = sshbuf_get_u32(m, &e->status)) != 0) {
			debug_fr(r, "early reply %u: status", e->id);
			e->used = 1;
		} else if (e->status == SSH2_FX_OK && want != SSH2_FXP_STATUS) {
			debug_f("early reply %u: OK without the %s asked for",
			    e->id, want == SSH2_FXP_NAME ? "name" :
			    want == SSH2_FXP_ATTRS ? "attributes" : "handle");
			e->status = SSH2_FX_BAD_MESSAGE;
			e->used = 1;
		}
		return;
	}
	if (type != want) {
		debug_f("early reply %u: type %u, wanted %u", e->id, type,
		    want);
		e->used = 1;
		return;
	}
	switch (type) {
	case SSH2_FXP_ATTRS:
		if ((r = decode_attrib(m, &e->a)) != 0) {
			debug_fr(r, "early reply %u: attributes", e->id);
			e->used = 1;
			return;
		}
		break;
	case SSH2_FXP_HANDLE:
		if ((r = sshbuf_get_string(m, &e->handle, &e->hlen)) != 0) {
			debug_fr(r, "early reply %u: handle", e->id);
			e->used = 1;
			return;
		}
		if (e->hlen > HPN_SFTP_HANDLE_MAX) {
			/* too long to name in a request: not used */
			debug_f("early reply %u: a handle of %zu bytes",
			    e->id, e->hlen);
			freezero(e->handle, e->hlen);
			e->handle = NULL;
			e->hlen = 0;
			e->used = 1;
			return;
		}
		break;
	case SSH2_FXP_NAME:
		if ((r = sshbuf_get_u32(m, &count)) != 0 || count != 1 ||
		    (r = sshbuf_get_cstring(m, &e->str, NULL)) != 0 ||
		    (r = sshbuf_get_cstring(m, &longname, NULL)) != 0 ||
		    (r = decode_attrib(m, &e->a)) != 0) {
			debug_f("early reply %u: not one name", e->id);
			free(e->str);
			e->str = NULL;
			free(longname);
			e->used = 1;
			return;
		}
		free(longname);
		break;
	}
	e->status = SSH2_FX_OK;
}

/*
 * After VERSION: the replies to hpn_sftp_early_send().  0: limits filled
 * in; 1: the server does not have the extension (its reply, an error
 * status, is dropped); -1: it has it and its reply was not one.
 */
int
hpn_sftp_early_recv(struct hpn_sftp *h, int has_limits,
    struct sftp_limits *limits)
{
	struct sshbuf *m;
	u_char type;
	u_int id, n = 0, got, st;
	int r, i, ret = 1;

	if ((m = sshbuf_new()) == NULL)
		fatal_f("sshbuf_new failed");
	for (i = 0; i < E_MAX; i++)
		n += h->e[i].id != 0;
	for (got = 0; got < n; got++) {
		recv_blocking(h, m);
		if ((r = sshbuf_get_u8(m, &type)) != 0 ||
		    (r = sshbuf_get_u32(m, &id)) != 0)
			fatal_fr(r, "parse");
		for (i = 0; i < E_MAX; i++)
			if (h->e[i].id == id && !h->e[i].done)
				break;
		if (i == E_MAX && sshbuf_len(m) > 0) {
			/* a server that answers out of order: a WRITE's */
			if ((r = sshbuf_get_u32(m, &st)) != 0)
				fatal_fr(r, "parse");
			if (type == SSH2_FXP_STATUS && spec_done(h, id, st)) {
				got--;
				continue;
			}
		}
		if (i == E_MAX)
			fatal("ID mismatch (%u != %u)", id, h->e[E_LIMITS].id);
		if (i != E_LIMITS) {
			early_reply(&h->e[i], i, type, m);
			continue;
		}
		h->e[i].done = 1;
		if (type != SSH2_FXP_EXTENDED_REPLY) {
			debug_f("limits: expected SSH2_FXP_EXTENDED_REPLY(%u), "
			    "got %u", SSH2_FXP_EXTENDED_REPLY, type);
			ret = has_limits ? -1 : 1;
			continue;
		}
		memset(limits, 0, sizeof(*limits));
		if ((r = sshbuf_get_u64(m, &limits->packet_length)) != 0 ||
		    (r = sshbuf_get_u64(m, &limits->read_length)) != 0 ||
		    (r = sshbuf_get_u64(m, &limits->write_length)) != 0 ||
		    (r = sshbuf_get_u64(m, &limits->open_handles)) != 0)
			fatal_fr(r, "parse limits");
		if (has_limits) {
			h->open_handles = limits->open_handles;
			ret = 0;
		}
	}
	sshbuf_free(m);
	return ret;
}

void
hpn_sftp_settle(struct hpn_sftp *h, u_int version, u_int rbuflen,
    u_int wbuflen, u_int nreq, u_int64_t limit_kbps)
{
	h->version = version;
	h->rbuflen = rbuflen;
	h->wbuflen = wbuflen;
	h->nreq = nreq;
	h->upstream = limit_kbps > 0;
	debug2_f("server open-handles %llu, requests %u x %u / %u bytes%s",
	    (unsigned long long)h->open_handles, nreq, rbuflen, wbuflen,
	    h->upstream ? ", limited: upstream's transfers" : "");
}

/* -n: another connection to the same server takes the first one's figures. */
void
hpn_sftp_settle_as(struct hpn_sftp *h, const struct hpn_sftp *from,
    u_int version)
{
	h->version = version;
	h->rbuflen = from->rbuflen;
	h->wbuflen = from->wbuflen;
	h->nreq = from->nreq;
	h->open_handles = from->open_handles;
	h->upstream = from->upstream;
	h->can_ref = from->can_ref;
}

/* Equal paths, but for trailing slashes ("dir/" from a glob, "dir"). */
static int
same_path(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	while (la > 1 && a[la - 1] == '/')
		la--;
	while (lb > 1 && b[lb - 1] == '/')
		lb--;
	return la == lb && strncmp(a, b, la) == 0;
}

/* The early answer for kind about path, taken or not (NULL: none). */
static struct early *
early_peek(struct hpn_sftp *h, int kind, const char *path)
{
	struct early *e;
	const char *want;

	if (h == NULL || (e = &h->e[kind])->id == 0 || !e->done)
		return NULL;
	if (kind == E_DOT)
		want = ".";
	else if (kind == E_OPENT)
		want = h->put_targ;
	else
		want = kind >= E_PREAL ? h->put_dst : h->pf_path;
	if (want == NULL || path == NULL || !same_path(path, want))
		return NULL;
	return e;
}

/* An early answer for kind about path, not taken yet: take it. */
static struct early *
early_take(struct hpn_sftp *h, int kind, const char *path)
{
	struct early *e;

	if ((e = early_peek(h, kind, path)) == NULL || e->used)
		return NULL;
	if (kind == E_LSTAT || kind == E_STAT) {
		/* lookups: only the very path asked for */
		if (strcmp(path, h->pf_path) != 0)
			return NULL;
	}
	e->used = 1;
	return e;
}

/*
 * sftp_stat()/sftp_lstat() (lstat nonzero): the prefetched answer for path,
 * once.  Returns 1 with *ret set (as upstream's, messages included), or 0.
 */
int
hpn_sftp_cached_stat(struct hpn_sftp *h, const char *path, int lstat,
    int quiet, struct Attrib *a, int *ret)
{
	struct early *e;

	if (h == NULL ||
	    (e = early_take(h, lstat ? E_LSTAT : E_STAT, path)) == NULL)
		return 0;
	debug3_f("%s \"%s\" answered with INIT", lstat ? "lstat" : "stat",
	    path);
	if (e->status != SSH2_FX_OK) {
		if (quiet)
			debug("stat remote: %s", fx2txt(e->status));
		else
			error("stat remote: %s", fx2txt(e->status));
		*ret = -1;
		return 1;
	}
	if (a != NULL)
		*a = e->a;
	*ret = 0;
	return 1;
}

/*
 * sftp's get, before its glob of path: what the glob and the transfer will
 * ask about it, all at once (see above).  Synchronous: one round trip.
 */
static struct hpn_sftp *lookahead_h;	/* answers to drop after the get */

/* Were path's lookups sent with INIT (sftp -b), and none taken yet? */
static int
early_asked(struct hpn_sftp *h, const char *path, int recursive)
{
	struct early *dot = &h->e[E_DOT];
	char *asked;
	int i, ok, kinds[] = { E_LSTAT, E_STAT, E_REAL, E_OPENDIR };

	if (h->pf_path == NULL || h->put_dst != NULL)
		return 0;
	for (i = 0; i < (recursive ? 4 : 2); i++)
		if (h->e[kinds[i]].id == 0 || !h->e[kinds[i]].done ||
		    h->e[kinds[i]].used)
			return 0;
	if (*h->pf_path == '/')
		asked = xstrdup(h->pf_path);
	else if (dot->done && dot->status == SSH2_FX_OK && dot->str != NULL)
		asked = sftp_path_append(dot->str, h->pf_path);
	else
		return 0;
	ok = strcmp(asked, path) == 0;
	free(asked);
	return ok;
}

void
hpn_sftp_lookahead(struct hpn_sftp *h, const char *path, int recursive)
{
	struct sshbuf *b, *m;
	struct early *e;
	u_char type;
	u_int id, n = 0, got, hid = 0;
	int r, i, kinds[] = { E_LSTAT, E_STAT, E_REAL, E_OPENDIR };

	if (h == NULL || h->upstream || path == NULL ||
	    strpbrk(path, "*?[\\") != NULL)
		return;
	if (early_asked(h, path, recursive)) {
		debug3_f("\"%s\" asked with INIT", path);
		free(h->pf_path);
		h->pf_path = xstrdup(path);
		lookahead_h = h;
		return;
	}
	if ((b = sshbuf_new()) == NULL || (m = sshbuf_new()) == NULL)
		fatal_f("sshbuf_new failed");
	/* earlier answers of these kinds go; so does a handle none took */
	if ((e = &h->e[E_OPENDIR])->handle != NULL) {
		size_t start;

		hid = (*h->msg_id)++;
		start = frame_start(b, SSH2_FXP_CLOSE, hid);
		if ((r = sshbuf_put_string(b, e->handle, e->hlen)) != 0)
			fatal_fr(r, "compose");
		frame_end(b, start);
		n++;
	}
	for (i = 0; i < 4; i++) {
		e = &h->e[kinds[i]];
		free(e->str);
		free(e->handle);
		memset(e, 0, sizeof(*e));
	}
	free(h->pf_path);
	h->pf_path = xstrdup(path);
	lookahead_h = h;
	early_path(h, b, E_LSTAT, SSH2_FXP_LSTAT, path, NULL, 0);
	early_path(h, b, E_STAT, SSH2_FXP_STAT, path, NULL, 0);
	n += 2;
	if (recursive) {
		early_path(h, b, E_REAL, SSH2_FXP_REALPATH, path, NULL, 0);
		early_path(h, b, E_OPENDIR, SSH2_FXP_OPENDIR, path, NULL, 0);
		n += 2;
	}
	send_blocking(h, b);
	for (got = 0; got < n; got++) {
		recv_blocking(h, m);
		if ((r = sshbuf_get_u8(m, &type)) != 0 ||
		    (r = sshbuf_get_u32(m, &id)) != 0)
			fatal_fr(r, "parse");
		if (hid != 0 && id == hid)
			continue;	/* the old handle's CLOSE */
		for (i = 0; i < 4; i++)
			if (h->e[kinds[i]].id == id && !h->e[kinds[i]].done)
				break;
		if (i == 4)
			fatal("ID mismatch (%u)", id);
		early_reply(&h->e[kinds[i]], kinds[i], type, m);
	}
	sshbuf_free(b);
	sshbuf_free(m);
}

/* sftp_realpath(): the answer for "." that went with INIT, once. */
char *
hpn_sftp_cached_realpath(struct hpn_sftp *h, const char *path)
{
	struct early *e;

	if (path == NULL || strcmp(path, ".") != 0 ||
	    (e = early_take(h, E_DOT, path)) == NULL)
		return NULL;
	if (e->status != SSH2_FX_OK) {
		e->used = 0;	/* upstream's own request, and message */
		return NULL;
	}
	debug3_f("realpath \".\" answered with INIT: %s", e->str);
	return xstrdup(e->str);
}

static void
early_free(struct hpn_sftp *h)
{
	int i;

	for (i = 0; i < E_MAX; i++) {
		free(h->e[i].str);
		free(h->e[i].handle);
		h->e[i].str = NULL;
		h->e[i].handle = NULL;
		h->e[i].used = 1;
	}
	if (h->put_fd != -1)
		close(h->put_fd);
	h->put_fd = -1;
}

/* ------------------------------------------------------------------ */
/* jobs: what the callers asked for */

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
	int i, ret;

	batching = 0;
	batch_run(NULL);
	/* a lookahead's answers serve its own get only (no stale stats) */
	if (lookahead_h != NULL) {
		for (i = 0; i < E_MAX; i++)
			lookahead_h->e[i].used = 1;
		lookahead_h = NULL;
	}
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
	if (lookahead_h == h)
		lookahead_h = NULL;
	if (batch_h == h)
		batch_h = NULL;
	hpn_sftp_lanes_forget(h);
	early_free(h);
	free(h->pf_path);
	free(h->put_src);
	free(h->put_dst);
	free(h->put_targ);
	freezero(h, sizeof(*h));
}

/* ------------------------------------------------------------------ */
/* the run: files, directories, requests */

enum { F_STAT, F_WAIT, F_OPENING, F_DATA, F_CLOSING, F_CLOSED };
enum { Q_NONE, Q_WAIT, Q_ACTIVE, Q_PARKED };
enum { D_START, D_LIST, D_DONE };
enum { DQ_NONE, DQ_DIRQ, DQ_LISTING };

enum {
	XR_OPEN, XR_READ, XR_WRITE, XR_CLOSE, XR_FSETSTAT, XR_STAT,
	XR_REALPATH, XR_OPENDIR, XR_READDIR, XR_DCLOSE, XR_MKDIR, XR_DSTAT,
	XR_SETSTAT, XR_FIXSIZE, XR_PFCLOSE, XR_SPEC
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
};
TAILQ_HEAD(xfiles, xfile);

/* A name a directory listing gave (get): each may come once. */
struct xname {
	RB_ENTRY(xname) node;
	char *name;
};

static int
xname_cmp(struct xname *a, struct xname *b)
{
	return strcmp(a->name, b->name);
}
RB_HEAD(xnames, xname);
RB_GENERATE_STATIC(xnames, xname, node, xname_cmp);

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
	int failed;
	int made;			/* get: local mkdir done */
	int created;			/* put: our MKDIR made it */
	mode_t mode, tmpmode;
	struct xnames names;		/* get: the names listed so far */
	u_int dups;			/* ... and how many came again */
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

static int
xreq_cmp(struct xreq *a, struct xreq *b)
{
	return a->id < b->id ? -1 : a->id > b->id;
}
RB_HEAD(xreqs, xreq);
RB_GENERATE_STATIC(xreqs, xreq, node, xreq_cmp);

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
	u_int nhandles;			/* asked for or held */
	u_int max_handles;
	int fl_in, fl_out;		/* descriptor flags to restore */
	u_int64_t moved;		/* bytes it carried */
	u_int64_t tick_moved;		/* ... at the last lanes_tune() */
	double rate;			/* ... since: bytes a second */
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
	double rtt;			/* -n: quickest data reply seen */
	double tick;			/* lanes_tune() last looked */
	struct hpn_sftp_cap cap;	/* -n: all of them together */
	u_int64_t budget_max;		/* -n: a connection's at most */
	u_int64_t last_bytes;
	int drawn;
	char curname[256];
};

static void file_finish(struct xrun *, struct xfile *);
static void waitq_add(struct xrun *, struct xfile *, int);
static void unlink_file(struct xrun *, struct xfile *);
static void file_check(struct xrun *, struct xfile *);
static void dir_child_done(struct xrun *, struct xdir *, int);
static void lane_rtt(struct xrun *, struct xreq *);
static void lane_init(struct xrun *, struct xlane *, struct hpn_sftp *,
    u_int);
static void dir_new_get(struct xrun *, struct xjob *, struct xdir *,
    const char *, const char *, Attrib *, int);
static void dir_new_put(struct xrun *, struct xjob *, struct xdir *,
    const char *, const char *, Attrib *, int);

static int
is_get(struct xjob *j)
{
	return j->kind == J_GET || j->kind == J_GETDIR;
}

/* The local descriptor of f: a part's is its file's. */
static int
xfd(struct xfile *f)
{
	return f->st != NULL ? f->st->whole->fd : f->fd;
}

/* --- requests out --- */

#define L0(x)	(&(x)->lanes[0])

/*
 * A request on f's connection (the first one for the rest); id: its id,
 * sent already, 0: the next.
 */
static struct xreq *
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
	if (x->nplan > 1 && id == 0)
		q->sent = monotime_double();
	if (RB_INSERT(xreqs, &l->reqs, q) != NULL)
		fatal_f("request id %u in use", q->id);
	l->nout++;
	x->nout++;
	if (f != NULL)
		f->nout++;
	return q;
}

static struct xreq *
req_new(struct xrun *x, int kind, struct xfile *f, struct xdir *d)
{
	return req_add(x, kind, f, d, 0);
}

static void
req_path(struct xrun *x, u_char type, struct xreq *q, const char *path,
    Attrib *a)
{
	struct sshbuf *b = q->lane->obuf;
	size_t start = frame_start(b, type, q->id);
	int r;

	if ((r = sshbuf_put_cstring(b, path)) != 0 ||
	    (a != NULL && (r = encode_attrib(b, a)) != 0))
		fatal_fr(r, "compose");
	frame_end(b, start);
	debug3("Sent message T:%u I:%u P:%s", type, q->id, path);
}

static void
req_handle(struct xrun *x, u_char type, struct xreq *q, const u_char *handle,
    size_t hlen, Attrib *a)
{
	struct sshbuf *b = q->lane->obuf;
	size_t start = frame_start(b, type, q->id);
	int r;

	if ((r = sshbuf_put_string(b, handle, hlen)) != 0 ||
	    (a != NULL && (r = encode_attrib(b, a)) != 0))
		fatal_fr(r, "compose");
	frame_end(b, start);
	debug3("Sent message T:%u I:%u", type, q->id);
}

static void
send_stat(struct xrun *x, int kind, struct xfile *f, struct xdir *d,
    const char *path)
{
	req_path(x, x->h->version == 0 ? SSH2_FXP_STAT_VERSION_0 :
	    SSH2_FXP_STAT, req_new(x, kind, f, d), path, NULL);
}

/* CLOSE of f's handle; the handle counts until the reply. */
static void
file_close(struct xrun *x, struct xfile *f)
{
	req_handle(x, SSH2_FXP_CLOSE, req_new(x, XR_CLOSE, f, NULL),
	    f->handle, f->hlen, NULL);
	free(f->handle);
	f->handle = NULL;
	f->hlen = 0;
	f->step = F_CLOSING;
}

static int
budget_left(struct xlane *l)
{
	return !l->dead && l->inflight < l->budget &&
	    l->ndata < l->h->nreq * X_DATA_REQS &&
	    sshbuf_len(l->obuf) < X_OBUF_MAX;
}

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
	q = req_new(x, XR_WRITE, f, NULL);
	q->off = f->off;
	q->len = n;
	q->cost = n;
	l->ndata++;
	l->inflight += n;
	f->nwrites++;
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

/* --- progress: the file in progress, the total and the rate --- */

static int
can_output(void)
{
	return getpgrp() == tcgetpgrp(STDOUT_FILENO);
}

static const char *
fmt_size(char *buf, size_t len, u_int64_t bytes, int rate)
{
	static const char unit[] = " KMGT";
	int i;

	if (rate) {
		bytes *= 100;
		for (i = 0; bytes >= 100 * 1000 && unit[i] != 'T'; i++)
			bytes = (bytes + 512) / 1024;
		if (i == 0) {
			i++;
			bytes = (bytes + 512) / 1024;
		}
		snprintf(buf, len, "%3llu.%1llu%cB",
		    (unsigned long long)(bytes + 5) / 100,
		    (unsigned long long)(bytes + 5) / 10 % 10, unit[i]);
	} else {
		for (i = 0; bytes >= 10000 && unit[i] != 'T'; i++)
			bytes = (bytes + 512) / 1024;
		snprintf(buf, len, "%4llu%c%s", (unsigned long long)bytes,
		    unit[i], i ? "B" : " ");
	}
	return buf;
}

static void
meter_draw(struct xrun *x, int final)
{
	struct winsize ws;
	char sz[32], rt[32], *line = NULL, *name = NULL, *out = NULL;
	double now = monotime_double(), el, r;
	int cols = 80, flen, w, pct, secs;

	if (!x->meter || !can_output())
		return;
	if (!final && now - x->last < 1.0)
		return;
	el = now - x->last;
	if (el > 0 && !final) {
		r = (x->done_bytes - x->last_bytes) / el;
		x->rate = x->rate == 0 ? r : x->rate * 0.9 + r * 0.1;
	}
	if (final && now > x->start)
		x->rate = (x->done_bytes - x->kept_bytes) / (now - x->start);
	x->last = now;
	x->last_bytes = x->done_bytes;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != -1 && ws.ws_col != 0)
		cols = MINIMUM(ws.ws_col, 512);
	pct = x->total_bytes == 0 ? 100 :
	    (int)((double)x->done_bytes / x->total_bytes * 100);
	if (pct > 100)
		pct = 100;
	if (x->files_total <= 1)
		xasprintf(&name, "%s", x->curname);
	else if (final)
		xasprintf(&name, "%u files", x->files_done);
	else
		xasprintf(&name, "%s (%u/%u)", x->curname, x->files_done,
		    x->files_total);
	flen = w = MAXIMUM(cols - 36, 8);
	asmprintf(&line, INT_MAX, &w, "%-*s", flen, name);
	if (w < flen)
		xextendf(&line, NULL, "%*s", flen - w, "");
	secs = (int)(now - x->start);
	xextendf(&line, NULL, " %3d%% %s %s/s  %02d:%02d", pct,
	    fmt_size(sz, sizeof(sz), x->done_bytes, 0),
	    fmt_size(rt, sizeof(rt), (u_int64_t)x->rate, 1),
	    secs / 60, secs % 60);
	w = cols - 1;
	asmprintf(&out, INT_MAX, &w, " %s", line);
	if (out != NULL) {
		*out = '\r';	/* asmprintf() would escape it */
		atomicio(vwrite, STDOUT_FILENO, out, strlen(out));
		if (final)
			atomicio(vwrite, STDOUT_FILENO, "\n", 1);
	}
	x->drawn = 1;
	free(name);
	free(line);
	free(out);
}

/* The meter names this file (the one last started). */
static void
meter_file(struct xrun *x, struct xfile *f)
{
	const char *base = strrchr(f->src, '/');

	base = base != NULL && base[1] != '\0' ? base + 1 : f->src;
	strlcpy(x->curname, base, sizeof(x->curname));
}

/* --- files --- */

static struct xfile *
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
	if (parent != NULL)
		parent->pending++;
	x->files_total++;
	return f;
}

/*
 * How f's reads or writes are set up, from its start: its part's, or
 * where a resumed file goes on.
 */
static void
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

/* The bytes of open file f not asked for yet (a read's worth: unknown). */
static u_int64_t
file_unasked(struct xrun *x, struct xfile *f)
{
	if (is_get(f->job))
		return f->rd.size_known && f->rd.next < f->rd.size ?
		    f->rd.size - f->rd.next : x->h->rbuflen;
	return f->size > f->off ? f->size - f->off : 0;
}

/*
 * -n: the connection for the next file or part to open, the one with the
 * least work left on it (bytes not yet asked for, and in flight) that has
 * a handle to spare; NULL when none has.
 */
static struct xlane *
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

/*
 * -n: a large file (of size bytes, to move from its pstart: resume) is
 * moved in parts over the connections: at least HPN_STRIPE_PART bytes
 * each, about four per connection.  Returns the part size, 0: in one
 * piece.
 */
static u_int64_t
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
stripe(struct xrun *x, struct xfile *whole, u_int64_t size, u_int64_t psize)
{
	struct xstripe *st;
	struct xfile *f;
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
	whole->st = st;
	unlink_file(x, whole);
	whole->step = F_WAIT;
	debug2_f("\"%s\": %llu bytes in %u parts", whole->src,
	    (unsigned long long)size, n);
	for (k = 0, off = whole->pstart; k < n; k++, off += psize) {
		f = part_new(x, whole, k, off,
		    k == n - 1 ? UINT64_MAX : off + psize);
		st->start[k] = st->hw[k] = off;
		waitq_add(x, f, 0);
	}
}

static void
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

static void
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
static void
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
		stripe(x, f, f->a.size, psize);
		return;
	}
	waitq_add(x, f, 0);
}

/* put: the local file of f (fd: already open, or -1); 0 or -1 (said). */
static int
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
	stat_to_attrib(&sb, &f->a);
	f->a.flags &= ~SSH2_FILEXFER_ATTR_SIZE;
	f->a.flags &= ~SSH2_FILEXFER_ATTR_UIDGID;
	f->a.perm &= 0777;
	if (!f->job->preserve)
		f->a.flags &= ~SSH2_FILEXFER_ATTR_ACMODTIME;
	file_rd_init(x, f);
	return 0;
}

/*
 * put: the WRITEs that went with INIT (spec_send()) for f, just given the
 * handle of one of the OPENs they name.  Where the server takes handle
 * references they are f's first writes, in flight or answered; where it
 * does not, they are sure to fail: their replies are dropped and f is
 * written from its start.
 */
static void
spec_take(struct xrun *x, struct xfile *f)
{
	struct hpn_sftp *h = x->h;
	struct spec *sp;
	struct xreq *q;
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
		q = req_add(x, XR_WRITE, f, NULL, sp->id);
		q->off = sp->off;
		q->len = q->cost = sp->len;
		f->lane->ndata++;
		f->lane->inflight += sp->len;
		f->nwrites++;
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
static int
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
static void
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
			stripe(x, f, f->size, psize);
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
	return;
 fail:
	f->failed = 1;
	file_finish(x, f);
}

/* get: reads of f within the budget, then its CLOSE as soon as it may. */
static void
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

/*
 * put, inplace: part f has sent its last WRITE.  When every part still
 * open has (nothing of the file is left to send and every part done got
 * all its bytes), the file's size goes now, on f's handle behind its
 * WRITEs, as -n 1 sends it behind its data: not a round trip after the
 * last reply (part_done).  Writes still out on other connections are all
 * below that size.  If one of them fails after all, part_done cuts the
 * file where its contiguous bytes end, as without this.
 */
static void
stripe_size_early(struct xrun *x, struct xfile *f)
{
	struct xstripe *st = f->st;
	struct xfile *g;
	u_int n = 0;
	u_int64_t size = st->whole->off;

	if (!f->job->inplace || st->sized || st->whole->failed)
		return;
	TAILQ_FOREACH(g, &x->active, qnext) {
		if (g->st != st || g == st->whole)
			continue;
		if (!g->leof || g->failed || g->wstatus != SSH2_FX_OK)
			return;
		if (g->pend == UINT64_MAX)
			size = g->off;	/* the last part: the file's end */
		n++;
	}
	if (n != st->left)
		return;		/* parts wait to be opened or again */
	debug2_f("\"%s\": size %llu with the last WRITEs", f->dst,
	    (unsigned long long)size);
	put_size(x, f, size);
	st->sized = 1;
}

/* put: writes of f within the budget, then FSETSTAT and CLOSE. */
static void
put_pump(struct xrun *x, struct xfile *f)
{
	struct xreq *q;
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
		if (!stop)
			stripe_size_early(x, f);
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

static void
file_message(struct xfile *f)
{
	if (f->parent == NULL)
		return;
	if (is_get(f->job))
		error("Download of file %s to %s failed", f->src, f->dst);
	else
		error("upload \"%s\" to \"%s\" failed", f->src, f->dst);
}

/* Where part k of st ends: the lowest start above its own. */
static u_int64_t
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
static u_int64_t
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
	free(st->start);
	free(st->hw);
	free(st->complete);
	free(st);
	file_finish(x, w);
}

/* All replies of f are in (or it never got far): finish it locally. */
static void
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

/* After a reply for f: close, reopen or finish as due. */
static void
file_check(struct xrun *x, struct xfile *f)
{
	int get = is_get(f->job);

	if (f->step == F_STAT || f->step == F_WAIT || f->step == F_OPENING)
		return;
	if (f->step == F_DATA) {
		if (get)
			get_pump(x, f);
		else
			put_pump(x, f);
		return;
	}
	if (f->nout > 0)
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

/* --- directories --- */

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
	if (parent != NULL)
		parent->pending++;
	return d;
}

static void
dir_free(struct xdir *d)
{
	struct xname *n, *nn;

	for (n = RB_MIN(xnames, &d->names); n != NULL; n = nn) {
		nn = RB_NEXT(xnames, &d->names, n);
		RB_REMOVE(xnames, &d->names, n);
		free(n->name);
		free(n);
	}
	free(d->src);
	free(d->dst);
	free(d->handle);
	free(d);
}

static void
dirq_add(struct xrun *x, struct xdir *d)
{
	if (d->queued == DQ_NONE) {
		TAILQ_INSERT_TAIL(&x->dirq, d, qnext);
		d->queued = DQ_DIRQ;
	}
}

static void
dirq_del(struct xrun *x, struct xdir *d)
{
	if (d->queued == DQ_DIRQ)
		TAILQ_REMOVE(&x->dirq, d, qnext);
	else if (d->queued == DQ_LISTING)
		TAILQ_REMOVE(&x->listing, d, qnext);
	d->queued = DQ_NONE;
}

/* Everything in d is done: its own attributes, then its parent. */
static void
dir_finish(struct xrun *x, struct xdir *d)
{
	struct xreq *q;
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
	    (d->created || d->job->preserve)) {
		q = req_new(x, XR_SETSTAT, NULL, NULL);
		q->path = xstrdup(d->dst);
		req_path(x, SSH2_FXP_SETSTAT, q, d->dst, &d->a);
	}
	if (ret != 0)
		d->job->ret = -1;
	if (parent != NULL)
		dir_child_done(x, parent, ret);
	else
		x->jobs_left--;
	dir_free(d);
}

static void
dir_child_done(struct xrun *x, struct xdir *d, int ret)
{
	if (ret != 0)
		d->job->ret = -1;
	if (--d->pending == 0)
		dir_finish(x, d);
}

/* Its own listing (or walk) is over. */
static void
dir_listed(struct xrun *x, struct xdir *d)
{
	d->step = D_DONE;
	dirq_del(x, d);
	dir_child_done(x, d, d->failed ? -1 : 0);
}

/* d is done with (failed, or listed): its handle goes, then it is listed. */
static void
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

static void
dir_fail(struct xrun *x, struct xdir *d)
{
	d->failed = 1;
	d->job->ret = -1;
	dir_end(x, d);
}

static void get_dir_started(struct xrun *, struct xdir *);
static void put_dir_started(struct xrun *, struct xdir *);

/* get: the REALPATH, STAT and OPENDIR that went with INIT, if d is theirs. */
static int
get_dir_early(struct xrun *x, struct xdir *d)
{
	struct early *real, *st, *op;

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
	if (op->status == SSH2_FX_OK) {
		d->handle = op->handle;
		d->hlen = op->hlen;
		op->handle = NULL;
		d->open_ok = 1;
		L0(x)->nhandles++;
		x->ndirh++;
	} else
		d->open_status = op->status;
	debug2_f("\"%s\" opened with INIT", d->src);
	get_dir_started(x, d);
	return 1;
}

/* get: a directory, from a job or a listing. */
static void
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

/* get: all that the start of d waited for is in. */
static void
get_dir_started(struct xrun *x, struct xdir *d)
{
	if (interrupted) {
		dir_fail(x, d);
		return;
	}
	if (!d->real_ok) {
		error("download \"%s\": path canonicalization failed", d->src);
		dir_fail(x, d);
		return;
	}
	if (!d->stat_ok) {
		error("stat remote \"%s\" directory failed", d->src);
		dir_fail(x, d);
		return;
	}
	if (!S_ISDIR(d->a.perm)) {
		error("\"%s\" is not a directory", d->src);
		dir_fail(x, d);
		return;
	}
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
		dir_fail(x, d);
		return;
	}
	d->made = 1;
	if (!d->open_ok) {
		error("remote readdir(\"%s\"): %s", d->src,
		    fx2txt(d->open_status));
		error("remote readdir \"%s\" failed", d->src);
		dir_fail(x, d);
		return;
	}
	d->step = D_LIST;
	dirq_del(x, d);
	TAILQ_INSERT_TAIL(&x->listing, d, qnext);
	d->queued = DQ_LISTING;
}

/* get: an entry of d's listing. */
static void
get_entry(struct xrun *x, struct xdir *d, const char *name, Attrib *a)
{
	struct xname *nm;
	struct xfile *f;
	char *src, *dst;

	/*
	 * Directory entries should never contain '/' (upstream's check in
	 * its readdir): they could point a recursive download anywhere.
	 * Nor be empty: the directory itself.
	 */
	if (*name == '\0' || strpbrk(name, "/") != NULL) {
		error("Server sent suspect path \"%s\" during readdir of "
		    "\"%s\"", name, d->src);
		return;
	}
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
		if (!S_ISDIR(a->perm))
			error("Server sent suspect path \"%s\" during readdir "
			    "of \"%s\"", name, d->src);
		return;
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
		return;
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
	} else if (S_ISDIR(a->perm))
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
}

static void
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
	put_dir_started(x, d);
	return 1;
}

/* put: a directory to make on the server, from a job or a walk. */
static void
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
}

/* put: all that the start of d waited for is in. */
static void
put_dir_started(struct xrun *x, struct xdir *d)
{
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

/* Directory work that waits for a handle (get) or for room (put). */
static void
dir_pump(struct xrun *x)
{
	struct xdir *d, *nd;
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
			req_path(x, SSH2_FXP_OPENDIR, req_new(x, XR_OPENDIR,
			    NULL, d), d->src, NULL);
			L0(x)->nhandles++;
			x->ndirh++;
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


/* ------------------------------------------------------------------ */
/* a server that breaks the protocol */

static void lane_lost(struct xrun *, struct xlane *, const char *);

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
static void
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

static void run_fatal(struct xrun *, const char *, ...)
    __attribute__((noreturn)) __attribute__((format(printf, 2, 3)));

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

static void lane_error(struct xrun *, struct xlane *, const char *, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * Connection l is unusable (why: fmt): the first one ends the program
 * (run_fatal()), another one (-n) is dropped (lane_lost()).  The caller
 * returns at once: the files and requests of l may be gone.
 */
static void
lane_error(struct xrun *x, struct xlane *l, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	lane_lost(x, l, msg);
}

static const char *
req_name(int kind)
{
	static const char *names[] = {
		"OPEN", "READ", "WRITE", "CLOSE", "FSETSTAT", "STAT",
		"REALPATH", "OPENDIR", "READDIR", "CLOSE", "MKDIR", "STAT",
		"SETSTAT", "SETSTAT", "CLOSE", "WRITE"
	};

	return kind >= 0 && (size_t)kind < sizeof(names) / sizeof(*names) ?
	    names[kind] : "request";
}

static void proto_error(struct xrun *, struct xreq *, const char *, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * The server's reply to q breaks the protocol (fmt says how): where
 * upstream would end the program.  Said with the file or directory and
 * the request; the caller returns at once (lane_error()).
 */
static void
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
	lane_error(x, q->lane, "%s%s\"%s\": %s%s (request %u): %s", what,
	    *what != '\0' ? " " : "", path != NULL ? path : "",
	    req_name(q->kind), at, q->id, msg);
}

/* ------------------------------------------------------------------ */
/* replies */

/*
 * A STATUS reply to q: its code in *status.  -1: the reply is no STATUS,
 * or does not parse (the server broke the protocol: said and handled by
 * proto_error(); the caller returns at once).
 */
static int
get_status(struct xrun *x, struct xreq *q, u_char type, struct sshbuf *m,
    u_int *status)
{
	int r;

	if (type != SSH2_FXP_STATUS) {
		proto_error(x, q, "Expected SSH2_FXP_STATUS(%u) packet, got %u",
		    SSH2_FXP_STATUS, type);
		return -1;
	}
	if ((r = sshbuf_get_u32(m, status)) != 0) {
		proto_error(x, q, "parse status: %s", ssh_err(r));
		return -1;
	}
	return 0;
}

/*
 * A STATUS reply to q where data was due (a handle, a name, attributes,
 * file data): an OK is no answer (upstream says "No error" and fails):
 * SSH2_FX_BAD_MESSAGE in *status, so that the message says so.
 */
static int
get_data_status(struct xrun *x, struct xreq *q, u_char type,
    struct sshbuf *m, u_int *status)
{
	if (get_status(x, q, type, m, status) != 0)
		return -1;
	if (*status == SSH2_FX_OK)
		*status = SSH2_FX_BAD_MESSAGE;
	return 0;
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

static void
reply_file(struct xrun *x, struct xreq *q, u_char type, struct sshbuf *m)
{
	struct xfile *f = q->f, *w;
	const u_char *data;
	u_char *handle;
	size_t len, hlen;
	u_int status = SSH2_FX_OK;
	int r;

	switch (q->kind) {
	case XR_STAT:		/* get: the target of a link, or a job's file */
		if (type == SSH2_FXP_STATUS) {
			if (get_data_status(x, q, type, m, &status) != 0)
				return;
			if (f->link)
				logit("remote stat \"%s\" failed", f->src);
			else
				error("stat remote \"%s\": %s", f->src,
				    fx2txt(status));
			f->failed = 1;
			file_finish(x, f);
			return;
		}
		if (type != SSH2_FXP_ATTRS) {
			proto_error(x, q, "Expected SSH2_FXP_ATTRS(%u) packet, "
			    "got %u", SSH2_FXP_ATTRS, type);
			return;
		}
		if ((r = decode_attrib(m, &f->a)) != 0) {
			error_fr(r, "decode_attrib");
			f->failed = 1;
			file_finish(x, f);
			return;
		}
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
		return;
	case XR_OPEN:
		if (type == SSH2_FXP_STATUS) {
			if (get_data_status(x, q, type, m, &status) != 0)
				return;
			q->lane->nhandles--;
			if (f->st == NULL || !f->st->whole->failed)
				error("%s open \"%s\": %s",
				    is_get(f->job) ? "remote" : "dest",
				    is_get(f->job) ? f->src : f->dst,
				    fx2txt(status));
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
		if (type != SSH2_FXP_HANDLE) {
			proto_error(x, q, "Expected SSH2_FXP_HANDLE(%u) packet, "
			    "got %u", SSH2_FXP_HANDLE, type);
			return;
		}
		if ((r = sshbuf_get_string(m, &handle, &hlen)) != 0) {
			proto_error(x, q, "parse handle: %s", ssh_err(r));
			return;
		}
		if (hlen > HPN_SFTP_HANDLE_MAX) {
			/* it could not be named in a request */
			free(handle);
			proto_error(x, q, "a handle of %zu bytes (at most %d)",
			    hlen, HPN_SFTP_HANDLE_MAX);
			return;
		}
		if (f->ref && f->step != F_DATA) {
			/* its CLOSE named the OPEN: that closes it */
			free(handle);
		} else {
			/* the handle itself from now on */
			free(f->handle);
			f->handle = handle;
			f->hlen = hlen;
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
	case XR_READ:
		q->lane->ndata--;
		q->lane->inflight -= q->cost;
		lane_rtt(x, q);
		if (type == SSH2_FXP_STATUS) {
			if (get_data_status(x, q, type, m, &status) != 0)
				return;
			if (status == SSH2_FX_EOF)
				hpn_sftp_rd_eof(&f->rd, q->off);
			else {
				if (f->rd.inflight > 0)
					f->rd.inflight--;
				if (f->rstatus == SSH2_FX_OK)
					f->rstatus = status;
				f->failed = 1;
			}
			file_check(x, f);
			return;
		}
		if (type != SSH2_FXP_DATA) {
			proto_error(x, q, "Expected SSH2_FXP_DATA(%u) packet, "
			    "got %u", SSH2_FXP_DATA, type);
			return;
		}
		if ((r = sshbuf_get_string_direct(m, &data, &len)) != 0) {
			proto_error(x, q, "parse data: %s", ssh_err(r));
			return;
		}
		debug3("Received data %llu -> %llu of \"%s\"",
		    (unsigned long long)q->off,
		    (unsigned long long)q->off + len - 1, f->src);
		if (len > q->len) {
			proto_error(x, q, "Received more data than asked for "
			    "%zu > %u", len, q->len);
			return;
		}
		if (f->ref) {
			proto_error(x, q, "data before the handle: the server "
			    "broke the order of %s", HPN_REF_EXT);
			return;
		}
		if (xfd(f) != -1 && f->werrno == 0 &&
		    (r = pwrite_all(xfd(f), data, len, q->off)) != 0) {
			f->werrno = r;
			f->failed = 1;
		}
		if (f->werrno == 0)
			hpn_sftp_rd_data(&f->rd, q->off, q->len, len);
		else if (f->rd.inflight > 0)
			f->rd.inflight--;
		if (f->rd.empty >= HPN_SFTP_RD_EMPTY_MAX && !f->failed) {
			/* upstream asks again for ever */
			error("read remote \"%s\": %u replies in a row with "
			    "no data", f->src, f->rd.empty);
			f->failed = 1;
		}
		x->done_bytes += len;
		f->moved += len;
		q->lane->moved += len;
		if (q->off + len > f->counted) {
			/* progress: more than its size said */
			x->total_bytes += q->off + len - f->counted;
			f->counted = q->off + len;
		}
		file_check(x, f);
		return;
	case XR_WRITE:
		q->lane->ndata--;
		q->lane->inflight -= q->cost;
		lane_rtt(x, q);
		f->nwrites--;
		if (get_status(x, q, type, m, &status) != 0)
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
	case XR_FSETSTAT:
		if (get_status(x, q, type, m, &status) != 0)
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
		if (get_status(x, q, type, m, &status) != 0)
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

static void
reply_dir(struct xrun *x, struct xreq *q, u_char type, struct sshbuf *m)
{
	struct xdir *d = q->d;
	u_char *handle;
	size_t hlen;
	u_int status = SSH2_FX_OK, count, i;
	char *name, *longname, *real;
	Attrib a;
	int r, get = is_get(d->job);

	switch (q->kind) {
	case XR_REALPATH:
		if (type == SSH2_FXP_STATUS) {
			if (get_data_status(x, q, type, m, &status) != 0)
				return;
			error("realpath %s: %s", get ? d->src : d->dst,
			    fx2txt(status));
		} else {
			if (type != SSH2_FXP_NAME) {
				proto_error(x, q, "Expected SSH2_FXP_NAME(%u) "
				    "packet, got %u", SSH2_FXP_NAME, type);
				return;
			}
			if ((r = sshbuf_get_u32(m, &count)) != 0) {
				proto_error(x, q, "parse count: %s",
				    ssh_err(r));
				return;
			}
			if (count != 1) {
				proto_error(x, q, "Got multiple names (%u) "
				    "from SSH2_FXP_REALPATH", count);
				return;
			}
			real = longname = NULL;
			if ((r = sshbuf_get_cstring(m, &real, NULL)) != 0 ||
			    (r = sshbuf_get_cstring(m, &longname, NULL)) != 0 ||
			    (r = decode_attrib(m, &a)) != 0) {
				free(real);
				free(longname);
				proto_error(x, q, "parse filename/attrib: %s",
				    ssh_err(r));
				return;
			}
			debug3("SSH2_FXP_REALPATH %s -> %s",
			    get ? d->src : d->dst, real);
			free(longname);
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
		if (type == SSH2_FXP_STATUS) {
			if (get_data_status(x, q, type, m, &status) != 0)
				return;
			d->stat_status = status;
		} else {
			if (type != SSH2_FXP_ATTRS) {
				proto_error(x, q, "Expected SSH2_FXP_ATTRS(%u) "
				    "packet, got %u", SSH2_FXP_ATTRS, type);
				return;
			}
			if ((r = decode_attrib(m, &a)) != 0) {
				error_fr(r, "decode_attrib");
				d->stat_status = SSH2_FX_FAILURE;
			} else {
				if (get)
					d->a = a;
				d->stat_ok = 1;
				d->stat_isdir = S_ISDIR(a.perm);
			}
		}
		break;
	case XR_MKDIR:
		if (get_status(x, q, type, m, &status) != 0)
			return;
		d->mkdir_ok = status == SSH2_FX_OK;
		break;
	case XR_OPENDIR:
		if (type == SSH2_FXP_STATUS) {
			if (get_data_status(x, q, type, m, &status) != 0)
				return;
			L0(x)->nhandles--;
			x->ndirh--;
			d->open_status = status;
		} else {
			if (type != SSH2_FXP_HANDLE) {
				proto_error(x, q, "Expected SSH2_FXP_HANDLE(%u) "
				    "packet, got %u", SSH2_FXP_HANDLE, type);
				return;
			}
			if ((r = sshbuf_get_string(m, &handle, &hlen)) != 0) {
				proto_error(x, q, "parse handle: %s",
				    ssh_err(r));
				return;
			}
			if (hlen > HPN_SFTP_HANDLE_MAX) {
				free(handle);
				proto_error(x, q, "a handle of %zu bytes (at "
				    "most %d)", hlen, HPN_SFTP_HANDLE_MAX);
				return;
			}
			d->handle = handle;
			d->hlen = hlen;
			d->open_ok = 1;
		}
		break;
	case XR_READDIR:
		d->rdout--;
		if (type == SSH2_FXP_STATUS) {
			if (get_data_status(x, q, type, m, &status) != 0)
				return;
			if (status != SSH2_FX_EOF && !d->rdeof) {
				error("Couldn't read directory \"%s\": %s",
				    d->src, fx2txt(status));
				d->failed = 1;
				d->job->ret = -1;
			}
			d->rdeof = 1;
		} else {
			if (type != SSH2_FXP_NAME) {
				proto_error(x, q, "Expected SSH2_FXP_NAME(%u) "
				    "packet, got %u", SSH2_FXP_NAME, type);
				return;
			}
			if ((r = sshbuf_get_u32(m, &count)) != 0) {
				proto_error(x, q, "parse count: %s",
				    ssh_err(r));
				return;
			}
			if (count > SSHBUF_SIZE_MAX) {
				proto_error(x, q, "nonsensical number of "
				    "entries");
				return;
			}
			if (count == 0)
				d->rdeof = 1;
			for (i = 0; i < count; i++) {
				name = longname = NULL;
				if ((r = sshbuf_get_cstring(m, &name,
				    NULL)) != 0 ||
				    (r = sshbuf_get_cstring(m, &longname,
				    NULL)) != 0) {
					free(name);
					proto_error(x, q, "parse filenames: "
					    "%s", ssh_err(r));
					return;
				}
				if ((r = decode_attrib(m, &a)) != 0) {
					error_fr(r, "couldn't decode attrib");
					free(name);
					free(longname);
					d->failed = 1;
					d->job->ret = -1;
					d->rdeof = 1;
					break;
				}
				if (!interrupted && !d->failed)
					get_entry(x, d, name, &a);
				free(name);
				free(longname);
			}
		}
		if (interrupted)
			d->rdeof = 1;
		if (d->rdeof && d->rdout == 0)
			dir_end(x, d);
		return;
	case XR_DCLOSE:
		if (get_status(x, q, type, m, &status) != 0)
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

static void
reply(struct xrun *x, struct xlane *l, struct sshbuf *m)
{
	struct xreq key, *q;
	u_char type;
	u_int id, status;
	int r;

	if ((r = sshbuf_get_u8(m, &type)) != 0 ||
	    (r = sshbuf_get_u32(m, &id)) != 0) {
		lane_error(x, l, "a reply too short to parse: %s",
		    ssh_err(r));
		return;
	}
	debug3("Received reply T:%u I:%u", type, id);
	key.id = id;
	if ((q = RB_FIND(xreqs, &l->reqs, &key)) == NULL) {
		/* upstream: "ID mismatch"; none of ours is out with it */
		lane_error(x, l, "a reply (type %u) to request %u, which "
		    "is not waiting for one", type, id);
		return;
	}
	RB_REMOVE(xreqs, &l->reqs, q);
	l->nout--;
	x->nout--;
	if (q->f != NULL)
		q->f->nout--;
	if (q->f != NULL)
		reply_file(x, q, type, m);
	else if (q->d != NULL)
		reply_dir(x, q, type, m);
	else if (q->kind == XR_SPEC) {
		/* a WRITE with INIT the server could not take: sent again */
	} else if (q->kind == XR_PFCLOSE) {
		if (get_status(x, q, type, m, &status) == 0)
			debug2_f("unused handle of \"%s\" closed: %s",
			    q->path, fx2txt(status));
	} else {
		/* SETSTAT of a finished directory or file: only errors */
		if (get_status(x, q, type, m, &status) == 0 &&
		    status != SSH2_FX_OK)
			error("remote setstat \"%s\": %s", q->path,
			    fx2txt(status));
	}
	free(q->path);
	free(q);
}

/* ------------------------------------------------------------------ */
/* the loop */

/* Bytes of part f not asked for (read) or not sent (written) yet. */
static u_int64_t
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

/*
 * -n: a connection with nothing left to ask for takes over the end of
 * what another still has to ask for of a part, as a new part of its own:
 * otherwise the last parts end on one connection while the others idle.
 * The part is the one whose connection would take longest over it (its
 * bytes over that connection's rate), and it is cut so that both end
 * together: the slower keeps its rate's share.  Connections share a path
 * unevenly (one ran at a tenth of another with cubic on a clean path),
 * and halves left the slow one draining alone for seconds.  Returns the
 * connection to open the new part on, NULL when there is none to take.
 */
static struct xlane *
steal(struct xrun *x)
{
	struct xfile *f, *best = NULL, *g;
	struct xlane *thief = NULL, *l;
	struct xstripe *st;
	u_int64_t left, bleft = 0, keep, start, mid, end;
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
	st = f->st;
	end = f->pend;
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
	g = part_new(x, st->whole, st->nparts, mid, end);
	st->start = xrecallocarray(st->start, st->nparts,
	    st->nparts + 1, sizeof(*st->start));
	st->hw = xrecallocarray(st->hw, st->nparts, st->nparts + 1,
	    sizeof(*st->hw));
	st->complete = xrecallocarray(st->complete, st->nparts,
	    st->nparts + 1, sizeof(*st->complete));
	st->start[st->nparts] = st->hw[st->nparts] = mid;
	st->nparts++;
	st->left++;
	/* f now ends at mid: no probe, no more */
	f->pend = mid;
	if (is_get(f->job)) {
		/* as if it had been made so: reads stop at mid */
		hpn_sftp_rd_limit(&f->rd, mid);
		f->counted = mid;
	} else
		f->size = mid;
	debug2_f("\"%s\": %llu..%llu to connection %u (%.1f MB/s; "
	    "connection %u, %.1f MB/s, keeps %llu)", f->src,
	    (unsigned long long)mid, (unsigned long long)
	    (end != UINT64_MAX ? end : is_get(f->job) ?
	    st->whole->a.size : st->whole->size), thief->idx + 1, rt / 1e6,
	    f->lane->idx + 1, rv / 1e6, (unsigned long long)(mid - start));
	waitq_add(x, g, 1);
	return thief;
}

/*
 * The bytes of the open files on connection l not asked for yet (every
 * open file has its connection: with one, all of them).
 */
static u_int64_t
lane_unasked(struct xrun *x, struct xlane *l)
{
	struct xfile *f;
	u_int64_t n = 0;

	TAILQ_FOREACH(f, &x->active, qnext)
		if (f->lane == l)
			n += file_unasked(x, f);
	return n;
}

/* -n: the round trip of a data request, as the quickest reply says. */
static void
lane_rtt(struct xrun *x, struct xreq *q)
{
	double t;

	if (x->nplan < 2 || q->sent <= 0)
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
static void
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

	if (x->nplan < 2 || x->rtt <= 0)
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
		}
	}
	if (x->cap.off && !off)
		debug2_f("the rate fell under the cap: no cap from now");
	x->tick = now;
}

static void
schedule(struct xrun *x)
{
	struct xfile *f, *nf;
	struct xlane *l;
	u_int64_t ahead = 0;
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
	    (l = steal(x)) != NULL && (f = TAILQ_FIRST(&x->waitq)) != NULL)
		file_open(x, f, l);
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
 * -n: a file (or part) whose connection was lost starts again from its
 * start on another, unless a download of it is complete already.
 */
static void
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

/*
 * Connection l closed under the run.  The first one carries directories
 * and the session itself: losing it ends the program, as before.  Another
 * (-n) is dropped: its requests are forgotten and its files and parts
 * start again on the others.
 */
static void
lane_lost(struct xrun *x, struct xlane *l, const char *why)
{
	struct xreq *q, *nq;
	struct xfile *f, *nf;

	if (l->idx == 0)
		run_fatal(x, "%s", why);
	error("-n: connection %u of %u lost (%s): its transfers go on over "
	    "the others", l->idx + 1, x->nplan, why);
	l->dead = 1;
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
	for (f = TAILQ_FIRST(&x->active); f != NULL; f = nf) {
		nf = TAILQ_NEXT(f, qnext);
		if (f->lane == l)
			file_restart(x, f);
	}
	hpn_sftp_lanes_lost(l->h);
	l->h = NULL;
}

/* Write what l has composed, read and handle what came back. */
static void
lane_io(struct xrun *x, struct xlane *l, struct pollfd *pfd)
{
	struct sshbuf *m;
	const u_char *p;
	ssize_t n;
	size_t rlen;
	u_int len;
	int r;

	if (pfd[1].revents & (POLLOUT|POLLERR|POLLHUP)) {
		if (l->idx == 0)
			n = write(l->h->fd_out, sshbuf_ptr(l->obuf),
			    sshbuf_len(l->obuf));
		else
			n = send(l->h->fd_out, sshbuf_ptr(l->obuf),
			    sshbuf_len(l->obuf), MSG_NOSIGNAL);
		if (n == -1 && errno != EAGAIN && errno != EINTR &&
		    errno != EWOULDBLOCK) {
			lane_error(x, l, "Couldn't send packet: %s",
			    strerror(errno));
			return;
		}
		if (n > 0 && (r = sshbuf_consume(l->obuf, n)) != 0)
			fatal_fr(r, "consume");
	}
	if (!(pfd[0].revents & (POLLIN|POLLERR|POLLHUP)))
		return;
	if ((r = sshbuf_read(l->h->fd_in, l->ibuf, X_READ_MAX,
	    &rlen)) != 0) {
		if (r == SSH_ERR_SYSTEM_ERROR &&
		    (errno == EAGAIN || errno == EINTR ||
		    errno == EWOULDBLOCK))
			return;
		if (r == SSH_ERR_SYSTEM_ERROR && errno == EPIPE) {
			lane_lost(x, l, "Connection closed");
			return;
		}
		lane_error(x, l, "Couldn't read packet: %s", ssh_err(r));
		return;
	}
	while (!l->dead && sshbuf_len(l->ibuf) >= 4) {
		p = sshbuf_ptr(l->ibuf);
		len = PEEK_U32(p);
		if (len > SFTP_MAX_MSG_LENGTH) {
			lane_error(x, l, "Received message too long %u", len);
			return;
		}
		if (sshbuf_len(l->ibuf) < 4 + (size_t)len)
			break;
		if ((m = sshbuf_from(p + 4, len)) == NULL)
			fatal_f("sshbuf_from failed");
		reply(x, l, m);
		sshbuf_free(m);
		if (l->dead)
			return;		/* its buffers went with it */
		if ((r = sshbuf_consume(l->ibuf, 4 + len)) != 0)
			fatal_fr(r, "consume");
	}
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

/* Handles that went with INIT and no transfer took: closed. */
static void
early_close(struct xrun *x)
{
	struct early *e;
	struct xreq *q;
	int kinds[] = { E_OPENDIR, E_OPEN, E_OPENT }, i;

	spec_take(x, NULL);	/* WRITEs with INIT no upload took */
	for (i = 0; i < 3; i++) {
		e = &x->h->e[kinds[i]];
		if (e->handle == NULL)
			continue;
		q = req_new(x, XR_PFCLOSE, NULL, NULL);
		q->path = xstrdup(kinds[i] == E_OPEN ? x->h->put_dst :
		    kinds[i] == E_OPENT ? x->h->put_targ : x->h->pf_path);
		req_handle(x, SSH2_FXP_CLOSE, q, e->handle, e->hlen, NULL);
		free(e->handle);
		e->handle = NULL;
		e->used = 1;
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
	/*
	 * The bytes in flight the path wants, shared: each connection then
	 * holds only its share out, and a part's rest not asked for yet can
	 * go to a connection that runs dry (steal()).
	 */
	l->budget = (u_int64_t)h->nreq * MAXIMUM(h->rbuflen, h->wbuflen);
	x->budget_max = MAXIMUM(x->budget_max, l->budget);
	/*
	 * -n: until a round trip is known (lanes_tune()), at most
	 * HPN_LANE_BUDGET_START: what a connection asks for before the
	 * others join stays with it, however slow it turns out to be.
	 */
	if (x->nplan > 1)
		l->budget = MAXIMUM(MINIMUM(l->budget / x->nplan,
		    HPN_LANE_BUDGET_START), 2 * HPN_STRIPE_SPLIT);
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
