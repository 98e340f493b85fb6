/*
 * Fuzz harness: tree@ (hpn-sftp-tree.c), hpnsftp-server's walk of a whole
 * subtree through one handle, against what README.hpn section 9 says a
 * tree listing is.
 *
 * The input builds a directory tree in a scratch directory (directories,
 * files, links to anything, names of any of a set of kinds, long ones
 * among them, so that paths pass PATH_MAX), then walks it as sftp-server
 * does: up to two tree handles on it at once, each opened with a depth,
 * READDIRs on either in any order, entries made or removed between them,
 * a handle closed before its end, a handle opened again over one open.
 * Every reply is parsed as the client parses it and checked: a NAME of at
 * most HPN_TREE_NAMES_MAX names and about HPN_TREE_REPLY_MAX bytes, or
 * EOF; every name relative, of non-empty components, none "." or "..";
 * each in the directory the walk stands in or one it is in (depth first,
 * a directory's entry before its own); "d" only on a directory no deeper
 * than asked, and its entries following.  Where nothing changed during
 * the walk, the names are exactly those a walk of the scratch tree finds
 * (lstat, links not followed, left out where the path would pass
 * PATH_MAX), each once.  After each input no descriptor is left open.
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

#include "xmalloc.h"
#include "sshbuf.h"
#include "ssherr.h"
#include "misc.h"
#include "sftp.h"
#include "sftp-common.h"
#include "hpn.h"

#include "fuzz-common.h"

int LLVMFuzzerInitialize(int *, char ***);
int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define BUILD_OPS	96	/* entries made, at most */
#define WALK_OPS	512	/* READDIRs and changes, at most */
#define NAMES_MAX	4096	/* names a walk may give here */

static char scratch[PATH_MAX];	/* the tree's top, in its own directory */

/* a name of kind k (i: to tell them apart) */
static void
mkname(char *buf, size_t len, uint8_t k, uint8_t i)
{
	switch (k % 6) {
	case 0:
		snprintf(buf, len, "d%u", i % 4);
		break;
	case 1:
		snprintf(buf, len, "with space %u", i % 3);
		break;
	case 2:
		snprintf(buf, len, "nl\n%u", i % 2);
		break;
	case 3:		/* long: a few levels of these pass PATH_MAX */
		memset(buf, 'L', 250);
		snprintf(buf + 250, len - 250, "%u", i % 2);
		break;
	case 4:
		snprintf(buf, len, ".h%u", i % 2);
		break;
	default:
		snprintf(buf, len, "f%u", i % 8);
		break;
	}
}

/* --- the scratch tree ------------------------------------------------ */

static int
rm_tree_at(int dfd, const char *name)
{
	DIR *d;
	struct dirent *dp;
	int fd;

	if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if ((fd = openat(dfd, name, O_RDONLY|O_DIRECTORY|O_NOFOLLOW)) == -1)
		return -1;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -1;
	}
	while ((dp = readdir(d)) != NULL) {
		if (strcmp(dp->d_name, ".") == 0 || strcmp(dp->d_name, "..") == 0)
			continue;
		if (rm_tree_at(dirfd(d), dp->d_name) != 0) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	return unlinkat(dfd, name, AT_REMOVEDIR);
}

static void
scratch_clear(void)
{
	char *top = strrchr(scratch, '/');
	int dfd;

	*top = '\0';
	if ((dfd = open(scratch, O_RDONLY|O_DIRECTORY)) == -1)
		fz_bad("open %s: %s", scratch, strerror(errno));
	*top = '/';
	if (rm_tree_at(dfd, top + 1) != 0)
		fz_bad("clearing %s: %s", scratch, strerror(errno));
	if (mkdirat(dfd, top + 1, 0755) != 0)
		fz_bad("mkdir %s: %s", scratch, strerror(errno));
	close(dfd);
}

/* one entry made in directory dfd: 1 if a directory to go into */
static int
make_one(int dfd, uint8_t op, uint8_t k, uint8_t i)
{
	char name[300];

	mkname(name, sizeof(name), k, i);
	switch (op % 4) {
	case 0:
		return mkdirat(dfd, name, 0755) == 0;
	case 1: {
		int fd = openat(dfd, name, O_WRONLY|O_CREAT|O_NOFOLLOW, 0644);

		if (fd != -1)
			close(fd);
		return 0;
	}
	case 2:		/* anywhere: it is never followed */
		(void)symlinkat(i % 2 ? "/" : "..", dfd, name);
		return 0;
	default:	/* a name that goes away: nothing */
		(void)unlinkat(dfd, name, 0);
		return 0;
	}
}

/* --- the model: the names a walk of the tree finds -------------------- */

struct names {
	char **v;
	u_int n, cap;
	int over;		/* more than NAMES_MAX */
};

static void
names_add(struct names *ns, const char *s)
{
	if (ns->n >= NAMES_MAX) {
		ns->over = 1;
		return;
	}
	if (ns->n == ns->cap) {
		/* doubling: one at a time was most of the harness's time */
		ns->v = xrecallocarray(ns->v, ns->cap, ns->cap ? 2 * ns->cap :
		    64, sizeof(*ns->v));
		ns->cap = ns->cap ? 2 * ns->cap : 64;
	}
	ns->v[ns->n++] = xstrdup(s);
}

static void
names_free(struct names *ns)
{
	u_int i;

	for (i = 0; i < ns->n; i++)
		free(ns->v[i]);
	free(ns->v);
	memset(ns, 0, sizeof(*ns));
}

static int
cmpstr(const void *a, const void *b)
{
	return strcmp(*(char * const *)a, *(char * const *)b);
}

/* path's entries (rel: their names' prefix), level: path's own */
static void
model_walk(struct names *ns, const char *path, const char *rel, u_int level,
    u_int maxdepth)
{
	DIR *d;
	struct dirent *dp;
	struct stat st;
	char *p, *r;

	if ((d = opendir(path)) == NULL)
		return;
	while ((dp = readdir(d)) != NULL) {
		if (strcmp(dp->d_name, ".") == 0 || strcmp(dp->d_name, "..") == 0)
			continue;
		xasprintf(&p, "%s/%s", path, dp->d_name);
		if (*rel == '\0')
			r = xstrdup(dp->d_name);
		else
			xasprintf(&r, "%s/%s", rel, dp->d_name);
		if (strlen(p) < PATH_MAX && strlen(r) < PATH_MAX &&
		    lstat(p, &st) == 0) {
			names_add(ns, r);
			if (S_ISDIR(st.st_mode) && level < maxdepth)
				model_walk(ns, p, r, level + 1, maxdepth);
		}
		free(p);
		free(r);
	}
	closedir(d);
}

/* --- a walk through the tree code ------------------------------------- */

struct walk {
	int open;
	int h;			/* its handle number */
	DIR *top;
	u_int maxdepth;
	int changed;		/* the tree changed during the walk */
	int eof;
	char *stack[HPN_TREE_DEPTH_MAX + 2];	/* where the walk stands */
	u_int depth;
	struct names got;
};

static struct walk walks[2];

static void
walk_close(struct walk *w)
{
	u_int i;

	if (!w->open)
		return;
	hpn_sftp_tree_forget(w->h);
	closedir(w->top);
	for (i = 1; i <= w->depth; i++)
		free(w->stack[i]);
	names_free(&w->got);
	memset(w, 0, sizeof(*w));
}

static void
walk_open(struct walk *w, int h, u_int maxdepth)
{
	walk_close(w);
	if ((w->top = opendir(scratch)) == NULL)
		fz_bad("opendir %s: %s", scratch, strerror(errno));
	w->open = 1;
	w->h = h;
	w->maxdepth = MINIMUM(maxdepth, HPN_TREE_DEPTH_MAX);
	w->stack[0] = "";
	hpn_sftp_tree_start(h, scratch, maxdepth);
}

/* one entry of a reply: what README.hpn says of it */
static void
check_entry(struct walk *w, const char *name, const char *flags,
    const Attrib *a)
{
	const char *base, *c;
	size_t plen;

	if (*name == '\0' || *name == '/' || name[strlen(name) - 1] == '/' ||
	    strstr(name, "//") != NULL)
		fz_bad("a name with an empty component: \"%s\"", name);
	for (c = name; c != NULL; c = strchr(c, '/')) {
		if (*c == '/')
			c++;
		if (strncmp(c, ".", 1) == 0 && (c[1] == '/' || c[1] == '\0'))
			fz_bad("a \".\" component: \"%s\"", name);
		if (strncmp(c, "..", 2) == 0 && (c[2] == '/' || c[2] == '\0'))
			fz_bad("a \"..\" component: \"%s\"", name);
	}
	if (strcmp(flags, "") != 0 && strcmp(flags, "d") != 0)
		fz_bad("flags \"%s\" on \"%s\"", flags, name);
	base = strrchr(name, '/');
	plen = base == NULL ? 0 : (size_t)(base - name);
	for (;;) {
		if (strlen(w->stack[w->depth]) == plen &&
		    strncmp(w->stack[w->depth], name, plen) == 0)
			break;
		if (w->depth == 0)
			fz_bad("\"%s\" in no directory the walk is in", name);
		free(w->stack[w->depth]);
		w->stack[w->depth--] = NULL;
	}
	if (*flags == 'd') {
		if (!(a->flags & SSH2_FILEXFER_ATTR_PERMISSIONS) ||
		    !S_ISDIR(a->perm))
			fz_bad("\"%s\" flagged \"d\", not a directory", name);
		if (w->depth + 1 > w->maxdepth)
			fz_bad("\"%s\" descended at level %u, asked %u", name,
			    w->depth + 1, w->maxdepth);
		w->stack[++w->depth] = xstrdup(name);
	}
	names_add(&w->got, name);
}

static void
walk_readdir(struct walk *w, u_int32_t id)
{
	struct sshbuf *m;
	u_char type;
	u_int32_t rid, count, i;
	char *name, *flags;
	Attrib a;
	size_t len;
	int r;

	if (!w->open)
		return;
	if ((m = sshbuf_new()) == NULL)
		fz_bad("sshbuf_new");
	r = hpn_sftp_tree_readdir(w->h, w->top, id, m);
	if (r < 0)
		fz_bad("handle %d: not a tree", w->h);
	if (r == 0) {
		if (sshbuf_len(m) != 0)
			fz_bad("EOF with %zu bytes composed", sshbuf_len(m));
		w->eof = 1;
		sshbuf_free(m);
		return;
	}
	if (w->eof)
		fz_bad("names after EOF");
	len = sshbuf_len(m);
	if ((r = sshbuf_get_u8(m, &type)) != 0 ||
	    (r = sshbuf_get_u32(m, &rid)) != 0 ||
	    (r = sshbuf_get_u32(m, &count)) != 0)
		fz_bad("reply head: %s", ssh_err(r));
	if (type != SSH2_FXP_NAME || rid != id || count == 0 ||
	    count > HPN_TREE_NAMES_MAX)
		fz_bad("reply type %u id %u (asked %u) count %u", type, rid,
		    id, count);
	if (len > HPN_TREE_REPLY_MAX + 2 * PATH_MAX + 256)
		fz_bad("a reply of %zu bytes", len);
	for (i = 0; i < count; i++) {
		if ((r = sshbuf_get_cstring(m, &name, NULL)) != 0 ||
		    (r = sshbuf_get_cstring(m, &flags, NULL)) != 0 ||
		    (r = decode_attrib(m, &a)) != 0)
			fz_bad("entry %u of %u: %s", i, count, ssh_err(r));
		check_entry(w, name, flags, &a);
		free(name);
		free(flags);
	}
	if (sshbuf_len(m) != 0)
		fz_bad("%zu bytes after the names", sshbuf_len(m));
	sshbuf_free(m);
}

/* the walk ended unchanged: exactly the model's names */
static void
walk_compare(struct walk *w)
{
	struct names want = { NULL, 0, 0, 0 };
	u_int i;

	if (!w->open || !w->eof || w->changed || w->got.over)
		return;
	model_walk(&want, scratch, "", 0, w->maxdepth);
	if (want.over) {
		names_free(&want);
		return;
	}
	if (want.n > 0)
		qsort(want.v, want.n, sizeof(*want.v), cmpstr);
	if (w->got.n > 0)
		qsort(w->got.v, w->got.n, sizeof(*w->got.v), cmpstr);
	for (i = 0; i < want.n && i < w->got.n; i++)
		if (strcmp(want.v[i], w->got.v[i]) != 0)
			break;
	if (i < want.n || i < w->got.n)
		fz_bad("listed %u names, the tree has %u; first apart: "
		    "\"%s\" / \"%s\"", w->got.n, want.n,
		    i < w->got.n ? w->got.v[i] : "", i < want.n ? want.v[i] : "");
	names_free(&want);
}

static int
count_fds(void)
{
	DIR *d;
	int n = 0;

	if ((d = opendir("/proc/self/fd")) == NULL)
		fz_bad("/proc/self/fd: %s", strerror(errno));
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n;
}

/* At exit: the scratch directory goes (the tree, then its parent). */
static void
scratch_remove(void)
{
	char *top = strrchr(scratch, '/');
	int dfd;

	if (top == NULL)
		return;
	*top = '\0';
	if ((dfd = open(scratch, O_RDONLY|O_DIRECTORY)) != -1) {
		(void)rm_tree_at(dfd, top + 1);
		close(dfd);
	}
	(void)rmdir(scratch);
	*top = '/';
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_init("sftp_tree_fuzz");
	fz_scratch(scratch, sizeof(scratch), "sftp_tree");
	strlcat(scratch, "/t", sizeof(scratch));
	atexit(scratch_remove);
	if (mkdir(scratch, 0755) != 0)
		fz_bad("mkdir %s: %s", scratch, strerror(errno));
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	int dfd[HPN_TREE_DEPTH_MAX + 8], depth = 0, fds, i;
	uint8_t op, k, n, nb;
	u_int32_t id = 1;
	u_int j;
	struct walk *w;

	fds = count_fds();
	scratch_clear();
	if ((dfd[0] = open(scratch, O_RDONLY|O_DIRECTORY)) == -1)
		fz_bad("open %s: %s", scratch, strerror(errno));
	/* the tree: entries made where the builder stands */
	if (fz_u8(&in, &nb) != 0)
		nb = 0;
	for (j = 0; j < nb % BUILD_OPS && fz_u8(&in, &op) == 0; j++) {
		if (fz_u8(&in, &k) != 0 || fz_u8(&in, &n) != 0)
			break;
		if (op % 8 == 7) {	/* up a level */
			if (depth > 0)
				close(dfd[depth--]);
			continue;
		}
		if (make_one(dfd[depth], op, k, n) &&
		    depth + 1 < (int)(sizeof(dfd) / sizeof(*dfd))) {
			char name[300];
			int fd;

			mkname(name, sizeof(name), k, n);
			if ((fd = openat(dfd[depth], name,
			    O_RDONLY|O_DIRECTORY)) != -1)
				dfd[++depth] = fd;
		}
	}
	/* the walks */
	for (j = 0; j < WALK_OPS && fz_u8(&in, &op) == 0; j++) {
		w = &walks[(op >> 7) & 1];
		switch (op % 8) {
		case 0:		/* a tree opened (again) */
			if (fz_u8(&in, &n) != 0)
				n = 64;
			walk_open(w, (op >> 7) & 1, n % (HPN_TREE_DEPTH_MAX + 8));
			break;
		case 1:		/* closed before its end */
			walk_close(w);
			break;
		case 2:		/* an entry made or gone where the builder is */
			if (fz_u8(&in, &k) != 0 || fz_u8(&in, &n) != 0)
				break;
			(void)make_one(dfd[depth], n, k, n);
			walks[0].changed = walks[1].changed = 1;
			break;
		default:	/* READDIR */
			walk_readdir(w, id++);
			break;
		}
	}
	/* the walks not closed: read to their end, then checked */
	for (i = 0; i < 2; i++) {
		w = &walks[i];
		for (j = 0; w->open && !w->eof && j < NAMES_MAX; j++)
			walk_readdir(w, id++);
		walk_compare(w);
		walk_close(w);
	}
	while (depth > 0)
		close(dfd[depth--]);
	close(dfd[0]);
	if (count_fds() != fds)
		fz_bad("%d descriptors open after the input, %d before",
		    count_fds(), fds);
	return 0;
}
