/*
 * HPN patch set: what rides with INIT (src/xfer/).
 *
 * Owns: the requests that go out with INIT, before VERSION is known (the
 * limits request, scp's and sftp -b's first lookups, an upload's OPENs
 * and its first bytes as WRITEs naming them: spec, a tree upload's first
 * files whole: eput), their answers kept
 * one-shot (struct early, in struct hpn_sftp), what the hooks ask of them
 * (hpn_sftp_cached_stat(), _cached_realpath()), sftp's look-ahead before
 * a get, and sftp -b's batch peek.  The answers are taken by the run
 * (early_take(): file.c, walk.c) or closed by it (engine.c).  See the
 * comment on struct early in xfer.h for what goes.
 * Calls: conn.c, proto.c, lanes.c (the extra connections start behind
 * INIT).
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
	put_attrib(&sb, preserve, pf.put_dir ? 01777 : 0777, &pf.put_a);
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
		for (i = E_LSTAT; i <= E_TREE; i++)
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
 * One file of a tree upload, whole, into t: OPEN of its name under the
 * upload's target (e->a as the engine sets it), WRITEs of what fd holds
 * (e->size bytes: the file as fstat() saw it), FSETSTAT with -p, CLOSE,
 * all after the OPEN naming it.  0, or -1 when the file did not read as
 * it was (t is then dropped by the caller).
 */
static int
eput_file(struct hpn_sftp *h, struct sshbuf *t, int fd, struct eput *e)
{
	u_char ref[HPN_REF_LEN_MAX], *p;
	u_int32_t id;
	u_int64_t off;
	size_t hlen, start, want;
	ssize_t r;
	char *dst;
	int k;

	e->id = id = (*h->msg_id)++;
	dst = sftp_path_append(h->put_dst, e->name);
	frame_path(t, SSH2_FXP_OPEN, id, dst, &e->a,
	    SSH2_FXF_WRITE | SSH2_FXF_CREAT | SSH2_FXF_TRUNC);
	free(dst);
	hlen = hpn_sftp_ref_make(ref, &id, 1);
	for (off = 0; off < e->size; off += want) {
		want = MINIMUM(e->size - off, HPN_SFTP_SPEC_WRITE);
		start = frame_start(t, SSH2_FXP_WRITE, (*h->msg_id)++);
		if ((k = sshbuf_put_string(t, ref, hlen)) != 0 ||
		    (k = sshbuf_put_u64(t, off)) != 0 ||
		    (k = sshbuf_put_u32(t, want)) != 0 ||
		    (k = sshbuf_reserve(t, want, &p)) != 0)
			fatal_fr(k, "compose");
		do
			r = pread(fd, p, want, (off_t)off);
		while (r == -1 && errno == EINTR);
		if (r != (ssize_t)want)
			return -1;	/* it changed: the run sends it */
		frame_end(t, start);
		e->nw++;
	}
	if (h->put_preserve)
		frame_handle(t, SSH2_FXP_FSETSTAT, (*h->msg_id)++, ref, hlen,
		    &e->a);
	e->last = (*h->msg_id)++;
	frame_handle(t, SSH2_FXP_CLOSE, e->last, ref, hlen, NULL);
	return 0;
}

/*
 * With INIT and a tree upload's MKDIR: the first regular files of its top
 * directory that fit in HPN_SFTP_SPEC bytes, each whole (eput_file()).
 * The data moves a round trip earlier (more where the server's subsystem
 * is slow to start: its shell's start-up files), TCP's slow start with
 * it, as a single file's first bytes do (spec_send()).  Their replies
 * that come before the run are kept (hpn_sftp_stash()).
 */
static void
eput_send(struct hpn_sftp *h, struct sshbuf *b)
{
	DIR *dirp;
	struct dirent *dp;
	struct stat sb, fsb;
	struct sshbuf *t;
	struct eput *e;
	u_int64_t left = HPN_SFTP_SPEC;
	u_int scanned = 0, id0;
	char *src;
	int fd, r;

	if (lanes_wanted() > 1 || (dirp = opendir(h->put_src)) == NULL)
		return;
	if ((t = sshbuf_new()) == NULL)
		fatal_f("sshbuf_new failed");
	h->eput = xcalloc(EPUT_MAX, sizeof(*h->eput));
	h->eput_id0 = *h->msg_id;
	while (h->neput < EPUT_MAX && left > 0 && scanned++ < EPUT_SCAN &&
	    (dp = readdir(dirp)) != NULL) {
		if (strcmp(dp->d_name, ".") == 0 ||
		    strcmp(dp->d_name, "..") == 0)
			continue;
		src = sftp_path_append(h->put_src, dp->d_name);
		fd = -1;
		if (lstat(src, &sb) == -1 || !S_ISREG(sb.st_mode) ||
		    (u_int64_t)sb.st_size > left ||
		    (fd = open(src, O_RDONLY | O_NOFOLLOW)) == -1 ||
		    fstat(fd, &fsb) == -1 || !S_ISREG(fsb.st_mode) ||
		    fsb.st_ino != sb.st_ino || fsb.st_size != sb.st_size) {
			if (fd != -1)
				close(fd);
			free(src);
			continue;
		}
		e = &h->eput[h->neput];
		memset(e, 0, sizeof(*e));
		e->size = fsb.st_size;
		put_attrib(&fsb, h->put_preserve, 0777, &e->a);
		e->name = xstrdup(dp->d_name);
		id0 = *h->msg_id;
		sshbuf_reset(t);
		if (eput_file(h, t, fd, e) != 0) {
			*h->msg_id = id0;	/* no id of it went */
			free(e->name);
			free(src);
		} else {
			if ((r = sshbuf_putb(b, t)) != 0)
				fatal_fr(r, "compose");
			e->src = src;
			left -= e->size;
			h->neput++;
		}
		close(fd);
	}
	closedir(dirp);
	sshbuf_free(t);
	h->eput_nid = *h->msg_id - h->eput_id0;
	h->eput_reply = xcalloc(MAXIMUM(h->eput_nid, 1),
	    sizeof(*h->eput_reply));
	h->eput_open = h->neput > 0;
	debug3_f("%u files of \"%s\" with INIT", h->neput, h->put_src);
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

/*
 * With INIT and the download's OPENDIR (of the path scp or sftp -b will
 * get with -r), its first READDIRs naming it (a handle reference), before
 * the server's VERSION says whether it takes them: where it does, the top
 * directory's names come with INIT's answers, a round trip sooner; where
 * it does not, they fail as READDIRs of an unknown handle and are sent
 * again.  The engine takes them over with the OPENDIR (erd_take()); their
 * replies that come before it runs are kept (erd_keep()).
 */
static void
erd_send(struct hpn_sftp *h, struct sshbuf *b, int kind, struct erd *set,
    u_int *n)
{
	u_char ref[HPN_REF_LEN_MAX];
	u_int32_t id = h->e[kind].id;
	size_t hlen;

	hlen = hpn_sftp_ref_make(ref, &id, 1);
	if (kind == E_TREE)
		h->terd_of = id;
	else
		h->erd_of = id;
	for (*n = 0; *n < ERD_MAX; (*n)++) {
		set[*n].id = (*h->msg_id)++;
		frame_handle(b, SSH2_FXP_READDIR, set[*n].id, ref, hlen, NULL);
	}
}

/*
 * With INIT, beside the OPENDIR: the same directory opened as a tree
 * (HPN_TREE_EXT, as the engine opens one: the depth it allows below the
 * top) and its READDIRs naming it.  Where the server lists trees, the
 * engine takes this handle and the whole tree's names come with INIT's
 * answers, not a round trip after the top's listing; elsewhere the
 * EXTENDED fails (an extension the server does not have) and its READDIRs
 * with it, a few bytes each.
 */
static void
etree_send(struct hpn_sftp *h, struct sshbuf *b)
{
	h->e[E_TREE].id = (*h->msg_id)++;
	frame_tree(b, h->e[E_TREE].id, h->pf_path, MAX_DIR_DEPTH - 1);
	debug3_f("tree of %s with INIT", h->pf_path);
	erd_send(h, b, E_TREE, h->terd, &h->nterd);
}

/*
 * A reply m (type, id, body) to one of the READDIRs with INIT: kept.  One
 * that comes before the reply to the OPENDIR or tree it names, from a
 * server that takes handle references (and so answers in order), breaks
 * the protocol, as the engine finds it later (reply_dir()).
 */
int
erd_keep(struct hpn_sftp *h, const struct sshbuf *m)
{
	const u_char *p = sshbuf_ptr(m);
	u_int i, id, of;
	int kind;

	if (sshbuf_len(m) < 5)
		return 0;
	id = PEEK_U32(p + 1);
	for (i = 0; i < h->nerd + h->nterd; i++) {
		struct erd *e = i < h->nerd ? &h->erd[i] :
		    &h->terd[i - h->nerd];

		if (e->id != id || e->done)
			continue;
		kind = i < h->nerd ? E_OPENDIR : E_TREE;
		of = kind == E_TREE ? h->terd_of : h->erd_of;
		/* (a slot asked again since: its first answer came) */
		if (h->can_ref && h->e[kind].id == of && !h->e[kind].done)
			fatal("READDIR (request %u) answered before its "
			    "OPENDIR (request %u)", id, of);
		if ((e->reply = sshbuf_new()) == NULL ||
		    sshbuf_putb(e->reply, m) != 0)
			fatal_f("sshbuf failed");
		e->done = 1;
		return 1;
	}
	return 0;
}

int
hpn_sftp_stash(struct hpn_sftp *h, struct sshbuf *m)
{
	const u_char *p = sshbuf_ptr(m);
	u_int i;

	if (h == NULL)
		return 0;
	if ((h->nerd > 0 || h->nterd > 0) && erd_keep(h, m))
		return 1;
	if (h->eput_open && sshbuf_len(m) >= 5 &&
	    (i = PEEK_U32(p + 1) - h->eput_id0) < h->eput_nid &&
	    h->eput_reply[i] == NULL) {
		/* a reply to a file sent whole with INIT: for the run */
		if ((h->eput_reply[i] = sshbuf_new()) == NULL ||
		    sshbuf_putb(h->eput_reply[i], m) != 0)
			fatal_f("sshbuf failed");
		return 1;
	}
	if (h->spec_open == 0 || sshbuf_len(m) < 9 ||
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
			erd_send(h, b, E_OPENDIR, h->erd, &h->nerd);
			etree_send(h, b);
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
			eput_send(h, b);
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

/* The reply each early request wants when it succeeds. */
u_char
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
	case E_TREE:
	case E_OPEN:
	case E_OPENT:
		return SSH2_FXP_HANDLE;
	default:
		return SSH2_FXP_STATUS;		/* E_MKDIR */
	}
}

/*
 * Does e wait for the reply of this id?  An early request not sent has the
 * id 0: a reply with the id 0 answers none of them.
 */
static int
early_awaits(const struct early *e, u_int id)
{
	return e->id != 0 && e->id == id && !e->done;
}

/*
 * One reply to an early request (not limits).  An answer of the kind the
 * request wants, or an error STATUS, stands for upstream's own request a
 * round trip later.  Anything else (another type, an OK STATUS where data
 * was due, a body that does not parse) is not used: upstream's code (or
 * the engine) asks again and meets the server's answer itself, with its
 * own messages.
 */
static void
early_reply(struct early *e, int kind, u_char type, struct sshbuf *m)
{
	struct sftp_reply r;
	u_char want = early_want(kind);
	char err[256];
	int ret, ok_empty;

	e->done = 1;
	e->status = SSH2_FX_FAILURE;
	/* an OK STATUS where data was due: no answer at all */
	ok_empty = type == SSH2_FXP_STATUS && want != SSH2_FXP_STATUS &&
	    sshbuf_len(m) >= 4 && PEEK_U32(sshbuf_ptr(m)) == SSH2_FX_OK;
	ret = sftp_reply(m, type, want, &r, err, sizeof(err));
	if (ret == SFTP_R_STATUS && type == SSH2_FXP_STATUS && !ok_empty) {
		e->status = r.status;	/* as upstream's request would get */
		return;
	}
	if (ret != SFTP_R_WANT) {
		debug_f("early reply %u: not used (%s)", e->id,
		    *err != '\0' ? err : "OK without what was asked");
		e->used = 1;
		return;
	}
	switch (type) {
	case SSH2_FXP_ATTRS:
		e->a = r.a;
		break;
	case SSH2_FXP_HANDLE:
		e->handle = xmalloc(r.hlen);
		memcpy(e->handle, r.handle, r.hlen);
		e->hlen = r.hlen;
		break;
	case SSH2_FXP_NAME:
		if (sftp_name_one(m, &r, &e->str, &e->a, err,
		    sizeof(err)) != 0) {
			debug_f("early reply %u: not used: %s", e->id, err);
			e->used = 1;
			return;
		}
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
			if (early_awaits(&h->e[i], id))
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
struct early *
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
struct early *
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
	u_int id, n = 0, got, hid[2] = { 0, 0 };
	int r, i, kinds[] = { E_LSTAT, E_STAT, E_REAL, E_OPENDIR, E_TREE };

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
	/* earlier answers of these kinds go; so do handles none took */
	for (i = 0; i < 2; i++) {
		size_t start;

		if ((e = &h->e[i == 0 ? E_OPENDIR : E_TREE])->handle == NULL)
			continue;
		hid[i] = (*h->msg_id)++;
		start = frame_start(b, SSH2_FXP_CLOSE, hid[i]);
		if ((r = sshbuf_put_string(b, e->handle, e->hlen)) != 0)
			fatal_fr(r, "compose");
		frame_end(b, start);
		n++;
	}
	for (i = 0; i < 5; i++) {
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
		if ((hid[0] != 0 && id == hid[0]) ||
		    (hid[1] != 0 && id == hid[1]))
			continue;	/* an old handle's CLOSE */
		for (i = 0; i < 4; i++)
			if (early_awaits(&h->e[kinds[i]], id))
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

void
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
	for (i = 0; i < ERD_MAX; i++) {
		sshbuf_free(h->erd[i].reply);
		sshbuf_free(h->terd[i].reply);
		h->erd[i].reply = h->terd[i].reply = NULL;
	}
	h->nerd = h->nterd = 0;
	eput_free(h);
	if (h->put_fd != -1)
		close(h->put_fd);
	h->put_fd = -1;
}

/* The files of a tree upload sent with INIT, and their kept replies. */
void
eput_free(struct hpn_sftp *h)
{
	u_int i;

	for (i = 0; i < h->neput; i++) {
		free(h->eput[i].src);
		free(h->eput[i].name);
	}
	for (i = 0; h->eput_reply != NULL && i < h->eput_nid; i++)
		sshbuf_free(h->eput_reply[i]);
	free(h->eput);
	free(h->eput_reply);
	h->eput = NULL;
	h->eput_reply = NULL;
	h->neput = h->eput_nid = 0;
	h->eput_open = 0;
}

/* h goes (hpn_sftp_detach()): nothing of it is kept here. */
void
early_forget(struct hpn_sftp *h)
{
	if (lookahead_h == h)
		lookahead_h = NULL;
	if (batch_h == h)
		batch_h = NULL;
	early_free(h);
}

/* The get a look-ahead was for has run: its answers serve no other. */
void
early_lookahead_done(void)
{
	int i;

	/* a lookahead's answers serve its own get only (no stale stats) */
	if (lookahead_h != NULL) {
		for (i = 0; i < E_MAX; i++)
			lookahead_h->e[i].used = 1;
		lookahead_h = NULL;
	}
}
