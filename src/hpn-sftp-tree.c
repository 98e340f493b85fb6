/*
 * HPN patch set: a whole subtree listed through one handle (sftp-server's
 * side of tree@hpn-patch-set.invalid).
 *
 * A client that downloads a tree lists it one directory at a time: each
 * level's names are known only once its parent's listing has come back,
 * so a tree 8 levels deep costs at least 8 round trips in series before
 * its deepest files can be asked for.  With this extension the client
 * opens the tree once ("tree" request: a path and how many levels below
 * it to descend) and reads it with ordinary READDIRs on the handle it
 * gets: the server walks depth first, each name relative to the tree's
 * top ("a/b/c"), a directory's own entry before what is in it.  The
 * long-name field of each entry carries flags: "d" for a directory whose
 * entries follow in this listing, "" otherwise (not a directory, or one
 * the server could not open or would not descend into: the client lists
 * those itself).  Names are those of lstat(), as a READDIR's: links are
 * not followed, so the walk cannot loop; its depth is bounded by the
 * request and HPN_TREE_DEPTH_MAX.  A path longer than PATH_MAX is left
 * out (with a log line), as one lstat() refuses is.
 *
 * sftp-server keeps the top directory's DIR * in its handle table; this
 * file keeps what lies below it, per handle, and composes the NAME
 * replies.  Hooks: process_readdir() asks hpn_sftp_tree_readdir() first,
 * handle_unused() calls hpn_sftp_tree_forget().
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"
#include "sshbuf.h"
#include "ssherr.h"
#include "log.h"
#include "misc.h"
#include "sftp.h"
#ifndef SFTP_MAX_MSG_LENGTH	/* no include guard of its own: the fuzz */
#include "sftp-common.h"	/* harness compiles this after sftp-server.c */
#endif
#include "hpn.h"

struct tree_level {
	DIR *dirp;		/* level 0: the handle's own, not ours */
	char *path;		/* as the server opens it */
	char *rel;		/* relative to the top, "" for the top */
};

struct tree {
	int handle;
	u_int maxdepth;		/* levels below the top it may open */
	u_int depth;		/* levels open below the top */
	struct tree_level lv[HPN_TREE_DEPTH_MAX + 1];
};

static struct tree **trees;
static u_int ntrees;

static struct tree *
tree_find(int handle)
{
	u_int i;

	for (i = 0; i < ntrees; i++)
		if (trees[i] != NULL && trees[i]->handle == handle)
			return trees[i];
	return NULL;
}

/* Handle h (opened by the "tree" request) lists path's subtree. */
void
hpn_sftp_tree_start(int h, const char *path, u_int maxdepth)
{
	struct tree *t;
	u_int i;

	hpn_sftp_tree_forget(h);
	t = xcalloc(1, sizeof(*t));
	t->handle = h;
	t->maxdepth = MINIMUM(maxdepth, HPN_TREE_DEPTH_MAX);
	t->lv[0].path = xstrdup(path);
	t->lv[0].rel = xstrdup("");
	for (i = 0; i < ntrees; i++)
		if (trees[i] == NULL)
			break;
	if (i == ntrees) {
		trees = xrecallocarray(trees, ntrees, ntrees + 1,
		    sizeof(*trees));
		ntrees++;
	}
	trees[i] = t;
	debug3_f("handle %d: \"%s\", %u levels", h, path, t->maxdepth);
}

/* Handle h is closed (or was never used): what lies below goes. */
void
hpn_sftp_tree_forget(int h)
{
	struct tree *t;
	u_int i, k;

	for (i = 0; i < ntrees; i++) {
		if ((t = trees[i]) == NULL || t->handle != h)
			continue;
		for (k = 0; k <= t->depth; k++) {
			if (k > 0 && t->lv[k].dirp != NULL)
				closedir(t->lv[k].dirp);
			free(t->lv[k].path);
			free(t->lv[k].rel);
		}
		free(t);
		trees[i] = NULL;
	}
}

static char *
join(const char *dir, const char *name)
{
	char *s;

	if (*dir == '\0')
		return xstrdup(name);
	xasprintf(&s, "%s%s%s", dir, strcmp(dir, "/") == 0 ? "" : "/", name);
	return s;
}

/* The level below: dir (its entry just sent) is opened and descended. */
static int
tree_push(struct tree *t, const char *path, const char *rel)
{
	DIR *dirp;

	if (t->depth >= t->maxdepth)
		return 0;
	if ((dirp = opendir(path)) == NULL) {
		debug_f("opendir \"%s\": %s (left to the client)", path,
		    strerror(errno));
		return 0;
	}
	t->depth++;
	t->lv[t->depth].dirp = dirp;
	t->lv[t->depth].path = xstrdup(path);
	t->lv[t->depth].rel = xstrdup(rel);
	return 1;
}

static void
tree_pop(struct tree *t)
{
	struct tree_level *l = &t->lv[t->depth];

	closedir(l->dirp);
	free(l->path);
	free(l->rel);
	memset(l, 0, sizeof(*l));
	t->depth--;
}

/*
 * A READDIR of handle h, whose own DIR * is dirp (void * in hpn.h): 1 with a NAME composed
 * in msg, 0 once the whole tree is listed (the caller answers EOF), -1
 * when h is no tree handle (an ordinary READDIR).
 */
int
hpn_sftp_tree_readdir(int h, void *dirp, u_int32_t id, struct sshbuf *msg)
{
	struct tree *t;
	struct tree_level *l;
	struct dirent *dp;
	struct stat st;
	Attrib a;
	char *path, *rel, *lname;
	size_t start, countpos;
	u_int count = 0;
	int r, down;

	if ((t = tree_find(h)) == NULL)
		return -1;
	t->lv[0].dirp = dirp;
	sshbuf_reset(msg);
	if ((r = sshbuf_put_u8(msg, SSH2_FXP_NAME)) != 0 ||
	    (r = sshbuf_put_u32(msg, id)) != 0)
		fatal_fr(r, "compose");
	countpos = sshbuf_len(msg);
	if ((r = sshbuf_put_u32(msg, 0)) != 0)
		fatal_fr(r, "compose");
	start = sshbuf_len(msg);
	while (count < HPN_TREE_NAMES_MAX &&
	    sshbuf_len(msg) - start < HPN_TREE_REPLY_MAX) {
		l = &t->lv[t->depth];
		if ((dp = readdir(l->dirp)) == NULL) {
			if (t->depth == 0)
				break;		/* the whole tree */
			tree_pop(t);
			continue;
		}
		if (strcmp(dp->d_name, ".") == 0 ||
		    strcmp(dp->d_name, "..") == 0)
			continue;
		path = join(l->path, dp->d_name);
		rel = join(l->rel, dp->d_name);
		if (strlen(path) >= PATH_MAX || strlen(rel) >= PATH_MAX) {
			logit_f("\"%s/%s\": path too long, left out",
			    l->path, dp->d_name);
			goto next;
		}
		if (lstat(path, &st) == -1)
			goto next;	/* as a READDIR does */
		stat_to_attrib(&st, &a);
		down = S_ISDIR(st.st_mode) && tree_push(t, path, rel);
		lname = down ? "d" : "";
		if ((r = sshbuf_put_cstring(msg, rel)) != 0 ||
		    (r = sshbuf_put_cstring(msg, lname)) != 0 ||
		    (r = encode_attrib(msg, &a)) != 0)
			fatal_fr(r, "compose");
		count++;
 next:
		free(path);
		free(rel);
	}
	t->lv[0].dirp = NULL;
	if (count == 0) {
		sshbuf_reset(msg);
		return 0;
	}
	POKE_U32(sshbuf_mutable_ptr(msg) + countpos, count);
	debug("request %u: sent tree names count %u", id, count);
	return 1;
}
