/*
 * Fuzz harness: hpnsftp-server's request processing, fed a client's bytes.
 *
 * sftp-server.c itself is compiled in (as OpenSSH's agent harness does
 * with ssh-agent.c), so that its own process() takes the input from its
 * input queue, exactly as from the client's pipe: every request, with our
 * hash-range@ (hpn-sftp-hash.c), handle-ref@ (hpn-sftp.c, the reference
 * table, and its hooks in handle_from_string(), send_handle() and
 * handle_unused()) and tree@ (hpn-sftp-tree.c, compiled in here too, its
 * directory walk confined with sftp-server.c's) among them.  The input is the client's byte stream; an
 * INIT goes first unless the input starts with one.
 *
 * The server sees a fixture directory (a few files, a directory, links)
 * as its whole file system: every path it hands to the kernel is mapped
 * under the fixture, as a chroot would ("/" is the fixture's top, ".."
 * is refused), and symlink() is refused, so that nothing outside is read
 * or written.  Writes are allowed (WRITE, SETSTAT, RENAME, copy-data...);
 * the fixture is made again after an input that changed it, and files
 * are held to 8 MiB (RLIMIT_FSIZE).
 *
 * After each request, its replies are checked: exactly one, naming the
 * request's id, for a request sftp-server knows (VERSION for INIT), none
 * for one it does not; a hash-range reply has the number of pieces asked
 * for, and each hash equals the one of that piece hashed alone
 * (hpn_hash_range() on the same file).  After each input, every handle is
 * closed and no descriptor is left behind.  A request that makes the
 * server exit (fatal(), as upstream does on a malformed request) ends
 * the input, as it ends the session.
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/statvfs.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fuzz-common.h"

/* The file system calls sftp-server.c makes, confined to the fixture. */
int	fz_open(const char *, int, ...);
DIR	*fz_opendir(const char *);
int	fz_stat(const char *, struct stat *);
int	fz_lstat(const char *, struct stat *);
int	fz_truncate(const char *, off_t);
int	fz_chmod(const char *, mode_t);
int	fz_chown(const char *, uid_t, gid_t);
int	fz_utimes(const char *, const struct timeval *);
int	fz_unlink(const char *);
int	fz_mkdir(const char *, mode_t);
int	fz_rmdir(const char *);
int	fz_rename(const char *, const char *);
int	fz_link(const char *, const char *);
int	fz_symlink(const char *, const char *);
ssize_t	fz_readlink(const char *, char *, size_t);
int	fz_statvfs(const char *, struct statvfs *);
int	fz_fchmodat(int, const char *, mode_t, int);
int	fz_utimensat(int, const char *, const struct timespec *, int);
int	fz_fchownat(int, const char *, uid_t, gid_t, int);
char	*fz_realpath(const char *, char *);
/* ... and those that change a file through its descriptor */
int	fz_fchmod(int, mode_t);
int	fz_fchown(int, uid_t, gid_t);
int	fz_futimes(int, const struct timeval *);
int	fz_ftruncate(int, off_t);

#define open(...)		fz_open(__VA_ARGS__)
#define opendir(p)		fz_opendir(p)
#define stat(p, s)		fz_stat(p, s)
#define lstat(p, s)		fz_lstat(p, s)
#define truncate(p, l)		fz_truncate(p, l)
#define chmod(p, m)		fz_chmod(p, m)
#define chown(p, u, g)		fz_chown(p, u, g)
#define utimes(p, t)		fz_utimes(p, t)
#define unlink(p)		fz_unlink(p)
#define mkdir(p, m)		fz_mkdir(p, m)
#define rmdir(p)		fz_rmdir(p)
#define rename(a, b)		fz_rename(a, b)
#define link(a, b)		fz_link(a, b)
#define symlink(a, b)		fz_symlink(a, b)
#define readlink(p, b, l)	fz_readlink(p, b, l)
#define statvfs(p, s)		fz_statvfs(p, s)
#define fchmodat(d, p, m, f)	fz_fchmodat(d, p, m, f)
#define utimensat(d, p, t, f)	fz_utimensat(d, p, t, f)
#define fchownat(d, p, u, g, f)	fz_fchownat(d, p, u, g, f)
#define sftp_realpath(p, r)	fz_realpath(p, r)
#define fchmod(d, m)		fz_fchmod(d, m)
#define fchown(d, u, g)		fz_fchown(d, u, g)
#define futimes(d, t)		fz_futimes(d, t)
#define ftruncate(d, l)		fz_ftruncate(d, l)
#define _exit(x)		fz_exit(x)

#include "sftp-server.c"
/* the tree@ walk opens and looks at what lies below: confined as well */
#include "hpn-sftp-tree.c"

#undef open
#undef opendir
#undef stat
#undef lstat
#undef truncate
#undef chmod
#undef chown
#undef utimes
#undef unlink
#undef mkdir
#undef rmdir
#undef rename
#undef link
#undef symlink
#undef readlink
#undef statvfs
#undef fchmodat
#undef utimensat
#undef fchownat
#undef sftp_realpath
#undef fchmod
#undef fchown
#undef futimes
#undef ftruncate
#undef _exit

char *sftp_realpath(const char *, char *);
int LLVMFuzzerInitialize(int *, char ***);
int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define FIXTURE_FSIZE	(8 * 1024 * 1024)	/* RLIMIT_FSIZE */
#define BIG_SIZE	(1024 * 1024 + 4096)	/* two pieces of hashes */
#define MAX_REQUESTS	4096			/* per input */

static char root[PATH_MAX];	/* the fixture: the server's "/" */
static size_t rootlen;
static int dirty;		/* the fixture was changed */

/* --- the fixture ------------------------------------------------------ */

static void die(const char *) __attribute__((noreturn));

static void
die(const char *what)
{
	fprintf(stderr, "sftp_server_fuzz: %s: %s\n", what, strerror(errno));
	abort();
}

static void
put_file(const char *name, const char *data, size_t len, off_t size,
    mode_t mode)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", root, name);
	if ((fd = open(path, O_WRONLY|O_CREAT|O_TRUNC, 0644)) == -1)
		die(path);
	if (len > 0 && write(fd, data, len) != (ssize_t)len)
		die(path);
	if (size > (off_t)len && ftruncate(fd, size) != 0)
		die(path);
	if (fchmod(fd, mode) != 0)
		die(path);
	close(fd);
}

static void
fixture_make(void)
{
	char path[PATH_MAX], data[4099];
	size_t i;

	if (mkdir(root, 0755) != 0 && errno != EEXIST)
		die(root);
	if (chmod(root, 0755) != 0)
		die(root);
	for (i = 0; i < sizeof(data); i++)
		data[i] = (char)(i * 7 + i / 251);
	put_file("file", data, sizeof(data), 0, 0644);
	put_file("big", data, sizeof(data), BIG_SIZE, 0644);
	put_file("empty", NULL, 0, 0, 0644);
	put_file("ro", "read-only\n", 10, 0, 0444);
	snprintf(path, sizeof(path), "%s/dir", root);
	if (mkdir(path, 0755) != 0)
		die(path);
	put_file("dir/x", "x\n", 2, 0, 0600);
	snprintf(path, sizeof(path), "%s/dir/sub", root);
	if (mkdir(path, 0700) != 0)
		die(path);
	snprintf(path, sizeof(path), "%s/link", root);
	if (symlink("file", path) != 0)
		die(path);
	snprintf(path, sizeof(path), "%s/dangling", root);
	if (symlink("nowhere", path) != 0)
		die(path);
	dirty = 0;
}

/* Empty dir (writable again first: a request may have chmod'ed it). */
static void
remove_tree(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *dp;
	struct stat st;
	DIR *d;

	(void)chmod(dir, 0700);
	if ((d = opendir(dir)) == NULL)
		return;
	while ((dp = readdir(d)) != NULL) {
		if (strcmp(dp->d_name, ".") == 0 ||
		    strcmp(dp->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, dp->d_name);
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			remove_tree(path);
			(void)rmdir(path);
		} else
			(void)unlink(path);
	}
	closedir(d);
}

static void
fixture_remove(void)
{
	remove_tree(root);
	(void)rmdir(root);
}

/* --- the confinement -------------------------------------------------- */

/* path as the server's file system sees it, under the fixture. */
static int
map(const char *path, char *out, size_t len)
{
	const char *p;

	for (p = path; *p != '\0'; ) {
		if (p[0] == '.' && p[1] == '.' && (p[2] == '/' || p[2] == '\0')) {
			errno = EACCES;		/* no way out */
			return -1;
		}
		p += strcspn(p, "/");
		p += strspn(p, "/");
	}
	if (*path == '\0') {		/* ENOENT, as it would be */
		*out = '\0';
		return 0;
	}
	path += strspn(path, "/");
	if ((size_t)snprintf(out, len, "%s/%s", root, path) >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

#define MAP(p, m) do {				\
	if (map(p, m, sizeof(m)) != 0)		\
		return -1;			\
} while (0)

int
fz_open(const char *path, int flags, ...)
{
	char m[PATH_MAX];
	mode_t mode = 0;
	va_list ap;

	if ((flags & O_CREAT) != 0) {
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	MAP(path, m);
	if ((flags & (O_WRONLY|O_RDWR|O_CREAT|O_TRUNC)) != 0)
		dirty = 1;
	return open(m, flags, mode);
}

DIR *
fz_opendir(const char *path)
{
	char m[PATH_MAX];

	if (map(path, m, sizeof(m)) != 0)
		return NULL;
	return opendir(m);
}

int
fz_stat(const char *path, struct stat *st)
{
	char m[PATH_MAX];

	MAP(path, m);
	return stat(m, st);
}

int
fz_lstat(const char *path, struct stat *st)
{
	char m[PATH_MAX];

	MAP(path, m);
	return lstat(m, st);
}

int
fz_truncate(const char *path, off_t len)
{
	char m[PATH_MAX];

	MAP(path, m);
	dirty = 1;
	return truncate(m, len);
}

int
fz_chmod(const char *path, mode_t mode)
{
	char m[PATH_MAX];

	MAP(path, m);
	dirty = 1;
	return chmod(m, mode);
}

int
fz_chown(const char *path, uid_t u, gid_t g)
{
	char m[PATH_MAX];

	MAP(path, m);
	dirty = 1;
	return chown(m, u, g);
}

int
fz_utimes(const char *path, const struct timeval *tv)
{
	char m[PATH_MAX];

	MAP(path, m);
	dirty = 1;
	return utimes(m, tv);
}

int
fz_unlink(const char *path)
{
	char m[PATH_MAX];

	MAP(path, m);
	dirty = 1;
	return unlink(m);
}

int
fz_mkdir(const char *path, mode_t mode)
{
	char m[PATH_MAX];

	MAP(path, m);
	dirty = 1;
	return mkdir(m, mode);
}

int
fz_rmdir(const char *path)
{
	char m[PATH_MAX];

	MAP(path, m);
	dirty = 1;
	return rmdir(m);
}

int
fz_rename(const char *from, const char *to)
{
	char m1[PATH_MAX], m2[PATH_MAX];

	MAP(from, m1);
	MAP(to, m2);
	dirty = 1;
	return rename(m1, m2);
}

int
fz_link(const char *from, const char *to)
{
	char m1[PATH_MAX], m2[PATH_MAX];

	MAP(from, m1);
	MAP(to, m2);
	dirty = 1;
	return link(m1, m2);
}

/* A link could point out of the fixture: refused. */
int
fz_symlink(const char *from, const char *to)
{
	(void)from;
	(void)to;
	errno = EPERM;
	return -1;
}

ssize_t
fz_readlink(const char *path, char *buf, size_t len)
{
	char m[PATH_MAX];

	MAP(path, m);
	return readlink(m, buf, len);
}

int
fz_statvfs(const char *path, struct statvfs *st)
{
	char m[PATH_MAX];

	MAP(path, m);
	return statvfs(m, st);
}

int
fz_fchmodat(int dfd, const char *path, mode_t mode, int flags)
{
	char m[PATH_MAX];

	MAP(path, m);
	dirty = 1;
	return fchmodat(dfd, m, mode, flags);
}

int
fz_utimensat(int dfd, const char *path, const struct timespec *ts, int flags)
{
	char m[PATH_MAX];

	MAP(path, m);
	dirty = 1;
	return utimensat(dfd, m, ts, flags);
}

int
fz_fchownat(int dfd, const char *path, uid_t u, gid_t g, int flags)
{
	char m[PATH_MAX];

	MAP(path, m);
	dirty = 1;
	return fchownat(dfd, m, u, g, flags);
}

/* The real path, as seen from the fixture's "/". */
char *
fz_realpath(const char *path, char *resolved)
{
	char m[PATH_MAX], *r;

	if (map(path, m, sizeof(m)) != 0)
		return NULL;
	if ((r = sftp_realpath(m, resolved)) == NULL)
		return NULL;
	if (strncmp(r, root, rootlen) == 0 &&
	    (r[rootlen] == '/' || r[rootlen] == '\0')) {
		memmove(r, r + rootlen, strlen(r + rootlen) + 1);
		if (*r == '\0')
			strlcpy(r, "/", PATH_MAX);
	}
	return r;
}

int
fz_fchmod(int fd, mode_t mode)
{
	dirty = 1;
	return fchmod(fd, mode);
}

int
fz_fchown(int fd, uid_t u, gid_t g)
{
	dirty = 1;
	return fchown(fd, u, g);
}

int
fz_futimes(int fd, const struct timeval *tv)
{
	dirty = 1;
	return futimes(fd, tv);
}

int
fz_ftruncate(int fd, off_t len)
{
	dirty = 1;
	return ftruncate(fd, len);
}

/* --- the oracle ------------------------------------------------------- */

/* The request at the head of the input queue, as far as we check it. */
struct req {
	int complete;		/* a whole message is there */
	u_char type;
	u_int32_t id;
	int known;		/* sftp-server answers it */
	int hash;		/* hash-range@, well formed: */
	int handle;		/* ... its handle resolved (else -1) */
	char *algs;
	u_int64_t off, len;
	u_int32_t piece;
};

static int
known_type(u_char type)
{
	u_int i;

	if (type == SSH2_FXP_INIT || type == SSH2_FXP_EXTENDED)
		return 1;
	for (i = 0; handlers[i].handler != NULL; i++)
		if (handlers[i].type == type)
			return 1;
	return 0;
}

static void
peek_request(struct req *q, const u_char *cp, size_t len)
{
	struct sshbuf *b;
	const u_char *h;
	u_int32_t mlen;
	size_t hlen;
	char *name = NULL;

	memset(q, 0, sizeof(*q));
	q->handle = -1;
	if (len < 5)
		return;
	mlen = PEEK_U32(cp);
	if (mlen > SFTP_MAX_MSG_LENGTH || len < 4 + (size_t)mlen)
		return;
	q->complete = 1;
	if (mlen < 1)
		return;
	q->type = cp[4];
	q->known = known_type(q->type);
	if (mlen >= 5)
		q->id = PEEK_U32(cp + 5);
	if (q->type != SSH2_FXP_EXTENDED || mlen < 5)
		return;
	if ((b = sshbuf_from(cp + 9, mlen - 5)) == NULL)
		die("sshbuf_from");
	if (sshbuf_get_cstring(b, &name, NULL) == 0 &&
	    strcmp(name, HPN_HASH_EXT) == 0 &&
	    sshbuf_get_string_direct(b, &h, &hlen) == 0 &&
	    sshbuf_get_cstring(b, &q->algs, NULL) == 0 &&
	    sshbuf_get_u64(b, &q->off) == 0 &&
	    sshbuf_get_u64(b, &q->len) == 0 &&
	    sshbuf_get_u32(b, &q->piece) == 0) {
		q->hash = 1;
		if (hlen < 256)
			q->handle = handle_from_string(h, hlen);
	}
	free(name);
	sshbuf_free(b);
}

/* A hash-range reply: the pieces asked for, each as hashed alone. */
static void
check_hashes(const struct req *q, struct sshbuf *m)
{
	u_char md[HPN_HASH_MD_MAX];
	const u_char *rmd;
	char *alg = NULL;
	u_int64_t rdone, piece = q->piece, done, sum = 0, off;
	u_int32_t n, i;
	u_int mdlen;
	size_t rlen;
	int r;

	if (q->handle < 0 || !handle_is_ok(q->handle, HANDLE_FILE))
		fz_bad("hash-range answered for a handle that is not a file's");
	if (sshbuf_get_cstring(m, &alg, NULL) != 0 ||
	    sshbuf_get_u64(m, &rdone) != 0 || sshbuf_get_u32(m, &n) != 0)
		fz_bad("hash-range reply malformed");
	if (piece == 0 || piece > q->len)
		piece = MAXIMUM(q->len, 1);
	if (n != (q->len == 0 ? 1 : (q->len + piece - 1) / piece) ||
	    n > HPN_HASH_PIECES_MAX)
		fz_bad("hash-range: %u pieces for %llu bytes by %llu", n,
		    (unsigned long long)q->len, (unsigned long long)piece);
	if (hpn_hash_pick(q->algs) == NULL ||
	    strcmp(alg, hpn_hash_pick(q->algs)) != 0)
		fz_bad("hash-range: %s for \"%s\"", alg, q->algs);
	for (i = 0; i < n; i++) {
		off = (u_int64_t)i * piece;
		if ((r = hpn_hash_range(handles[q->handle].fd, alg,
		    q->off + off, MINIMUM(q->len - MINIMUM(q->len, off),
		    piece), md, &mdlen, &done)) != 0)
			fz_bad("hash-range: piece %u alone: %s", i, strerror(r));
		sum += done;
		if (sshbuf_get_string_direct(m, &rmd, &rlen) != 0 ||
		    rlen != mdlen || memcmp(rmd, md, mdlen) != 0)
			fz_bad("hash-range: piece %u differs from its hash alone",
			    i);
	}
	if (rdone != sum || rdone > q->len || sshbuf_len(m) != 0)
		fz_bad("hash-range: %llu bytes said, %llu hashed, %llu asked",
		    (unsigned long long)rdone, (unsigned long long)sum,
		    (unsigned long long)q->len);
	free(alg);
}

/* What the request left in the output queue; emptied. */
static void
check_replies(const struct req *q)
{
	const u_char *cp;
	struct sshbuf *m;
	u_int32_t mlen;
	u_int n = 0;
	u_char type = 0;

	while (sshbuf_len(oqueue) > 0) {
		cp = sshbuf_ptr(oqueue);
		if (sshbuf_len(oqueue) < 5 ||
		    (mlen = PEEK_U32(cp)) < 1 || sshbuf_len(oqueue) < 4 + mlen)
			fz_bad("a reply is cut short");
		type = cp[4];
		if (type != SSH2_FXP_VERSION &&
		    (mlen < 5 || PEEK_U32(cp + 5) != q->id))
			fz_bad("reply %u to request %u of type %u", mlen < 5 ?
			    0 : PEEK_U32(cp + 5), q->id, q->type);
		if (q->hash && type == SSH2_FXP_EXTENDED_REPLY) {
			if ((m = sshbuf_from(cp + 9, mlen - 5)) == NULL)
				die("sshbuf_from");
			check_hashes(q, m);
			sshbuf_free(m);
		}
		if (sshbuf_consume(oqueue, 4 + mlen) != 0)
			die("consume");
		n++;
	}
	if (!q->known && n != 0)
		fz_bad("%u replies to unknown request type %u", n, q->type);
	if (q->known && n != 1)
		fz_bad("%u replies to request %u of type %u", n, q->id, q->type);
	if (q->type == SSH2_FXP_INIT && type != SSH2_FXP_VERSION)
		fz_bad("INIT answered by type %u", type);
}

/* --- the session ------------------------------------------------------ */

static void
session_reset(void)
{
	u_int i;

	for (i = 0; i < num_handles; i++)
		if (handles[i].use != HANDLE_UNUSED)
			handle_close(i);
	free(handles);
	handles = NULL;
	num_handles = 0;
	first_unused_handle = -1;
	init_done = 0;
	version = 0;
}

/*
 * One message through process(), as a step: its queues are made in the
 * step, so that a fatal() leaves nothing of the harness's that points
 * into its leftovers (a string parsed from the input queue holds a
 * reference to it).  Freed by the caller when the step returns.
 */
static void
one_message(const u_char *p, size_t len)
{
	if ((iqueue = sshbuf_from(p, len)) == NULL ||
	    (oqueue = sshbuf_new()) == NULL)
		die("sshbuf_new");
	process();
}

static void
cleanup(void)
{
	if (*root != '\0')
		fixture_remove();
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static struct passwd fpw;
	struct rlimit rl = { FIXTURE_FSIZE, FIXTURE_FSIZE };
	u_char md[HPN_HASH_MD_MAX];
	u_int mdlen;
	u_int64_t done;
	time_t now = time(NULL);
	int fd;

	(void)argc;
	(void)argv;
	fz_init("sftp_server_fuzz");
	fz_scratch(root, sizeof(root), "hpn-fuzz-sftp");
	rootlen = strlen(root);
	fixture_make();
	atexit(cleanup);
	if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
		die("setrlimit");

	fpw.pw_name = "fuzz";
	fpw.pw_passwd = "*";
	fpw.pw_uid = getuid();
	fpw.pw_gid = getgid();
	fpw.pw_gecos = "";
	fpw.pw_dir = "/";
	fpw.pw_shell = "/bin/sh";
	pw = pwcopy(&fpw);
	client_addr = xstrdup("fuzz");
	session_reset();

	/*
	 * What the C library and libcrypto set up once and keep (digests,
	 * user and group lookups, the time zone): done here, not in a step
	 * whose leftovers a fatal() would have freed (fuzz-common.h).
	 */
	if ((fd = open("/dev/null", O_RDONLY)) == -1)
		die("/dev/null");
	(void)hpn_hash_range(fd, "sha256", 0, 1, md, &mdlen, &done);
	(void)hpn_hash_range(fd, "blake2b512", 0, 1, md, &mdlen, &done);
	(void)hpn_hash_pick(hpn_hash_algs());
	close(fd);
	(void)getpwuid(0);
	(void)getpwnam("root");
	(void)getgrgid(0);
	(void)localtime(&now);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const u_char init[] = { 0, 0, 0, 5, SSH2_FXP_INIT, 0, 0, 0, 3 };
	struct fz_in in = { data, size };
	struct req q;
	const u_char *p;
	size_t len;
	u_int n;
	int fd, base_fd, ended = 0;

	/* A write past RLIMIT_FSIZE fails with EFBIG (libFuzzer's handler
	 * would end the run: it is set after LLVMFuzzerInitialize()). */
	signal(SIGXFSZ, SIG_IGN);
	/* The lowest free descriptor: the same after the input. */
	if ((base_fd = dup(0)) == -1)
		die("dup");
	close(base_fd);
	for (n = 0; n < MAX_REQUESTS && !ended; n++) {
		/*
		 * One message at a time, as its length says: a request that
		 * reads past its end fails its own parse, before it acts
		 * (fed a longer stream, sftp-server would act on the next
		 * message's bytes, then exit: the same parsing, and state
		 * changed by a step that ends in fatal()).  An INIT first
		 * unless the input starts with one.
		 */
		if (n == 0 && (size < 5 || data[4] != SSH2_FXP_INIT)) {
			p = init;
			len = sizeof(init);
		} else {
			if (in.len == 0)
				break;
			p = in.p;
			len = in.len < 4 ? in.len :
			    MINIMUM(in.len, 4 + (size_t)PEEK_U32(in.p));
			in.p += len;
			in.len -= len;
		}
		peek_request(&q, p, len);
		if ((ended = FZ_STEP(one_message(p, len))) != 0) {
			iqueue = oqueue = NULL;	/* the step's leftovers */
		} else {
			if (!q.complete)
				ended = 1;	/* the rest never came */
			else if (sshbuf_len(iqueue) != 0)
				fz_bad("%zu bytes of a request left",
				    sshbuf_len(iqueue));
			else
				check_replies(&q);
			sshbuf_free(iqueue);
			sshbuf_free(oqueue);
			iqueue = oqueue = NULL;
		}
		free(q.algs);
	}
	session_reset();
	fz_step_release();
	if (dirty) {
		fixture_remove();
		fixture_make();
	}
	if ((fd = dup(0)) != base_fd)
		fz_bad("descriptor %d free after an input, %d before", fd,
		    base_fd);
	close(fd);
	return 0;
}
