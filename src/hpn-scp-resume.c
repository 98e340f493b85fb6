/*
 * HPN patch set: legacy scp (-O) resume as HPN-SSH does it (-Z), in both
 * roles, and the choice of it toward an HPN-SSH server.
 *
 * HPN-SSH resumes in legacy scp only: its source sends the hash of each
 * file with its C line, its target answers with what it holds (the lines
 * are hpn-scp-zproto.c's).  hpnscp -Z speaks the SFTP protocol and
 * verifies with our server's hash-range@ extension (src/xfer/resume.c);
 * toward a server without it that is HPN-SSH (an HPN peer without our
 * EXT_INFO, hpn-compat.c; only ssh knows, and tells scp through a file,
 * HPN_SCP_PEER_ENV) it switches to this exchange on a new connection.
 * Remotely, hpnscp -t -Z and -f -Z speak it to HPN-SSH's hpnscp -Z.
 *
 * Linked into scp only: scp.c's hooks call these.
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xmalloc.h"
#include "atomicio.h"
#include "log.h"
#include "misc.h"
#include "sftp-common.h"
#include "sftp-client.h"
#include "hpn.h"
#include "hpn-sftp-xfer.h"

#define ZSCP_ALG	"blake2b512"

int hpn_zlegacy;		/* this scp speaks -Z in legacy mode */

static char *peer_path;		/* the file ssh writes what the server is */

/*
 * The BLAKE2b-512 of the first len bytes of fd, in hex, into hex
 * (HPN_ZSCP_HASHLEN + 1 bytes).  0, or -1 with errno set (EIO: the file
 * is shorter than len).
 */
int
hpn_zscp_hash(int fd, off_t len, char *hex)
{
	u_char md[HPN_HASH_MD_MAX];
	u_int mdlen, i;
	u_int64_t done;
	int r;

	if (len < 0) {
		errno = EINVAL;
		return -1;
	}
	if ((r = hpn_hash_range(fd, ZSCP_ALG, 0, (u_int64_t)len, md, &mdlen,
	    &done)) != 0) {
		errno = r;
		return -1;
	}
	if (done != (u_int64_t)len || mdlen * 2 != HPN_ZSCP_HASHLEN) {
		errno = EIO;
		return -1;
	}
	for (i = 0; i < mdlen; i++)
		snprintf(hex + i * 2, 3, "%02x", md[i]);
	return 0;
}

/*
 * Source: the C line with the hash of the whole file (fd, stb) into buf.
 * 0, or -1 with errno set (the file could not be read).
 */
int
hpn_zscp_cline(int fd, char *buf, size_t len, const struct stat *stb,
    const char *last)
{
	char hex[HPN_ZSCP_HASHLEN + 1];

	if (hpn_zscp_hash(fd, stb->st_size, hex) != 0)
		return -1;
	snprintf(buf, len, "C%04o %lld %s %s\n",
	    (u_int)(stb->st_mode & (S_ISUID|S_ISGID|S_IRWXU|S_IRWXG|S_IRWXO)),
	    (long long)stb->st_size, hex, last);
	return 0;
}

/*
 * Source, after its C line: read the target's answer and the
 * acknowledgement (response(), scp.c's), decide, send the match byte.
 * Returns 0 with *offp where the data starts (fd is placed there), 1 when
 * the target has the file already (nothing more is sent), -1 when the
 * target refused the file (response() said why).
 */
int
hpn_zscp_source(int fd, off_t size, const char *name, int remin,
    int remout, int (*response)(void), int report, off_t *offp)
{
	char reply[HPN_ZSCP_REPLYLEN + 1], hex[HPN_ZSCP_HASHLEN + 1];
	struct hpn_zreply z;
	const char *why;
	u_char match = '\0';

	*offp = 0;
	if (atomicio(read, remin, reply, HPN_ZSCP_REPLYLEN) !=
	    HPN_ZSCP_REPLYLEN)
		fatal("lost connection");
	if (response() < 0)
		return -1;
	if (hpn_zscp_parse_reply(reply, HPN_ZSCP_REPLYLEN, &z, &why) != 0) {
		error("%s: bad resume answer from the target (%s): "
		    "sending it whole", name, why);
	} else if (z.kind == 'S') {
		if (report)
			logit("%s: already complete at the target (BLAKE2b-512 "
			    "of all %lld bytes matches): skipped", name,
			    (long long)size);
		return 1;
	} else if (z.kind == 'C') {
		if (report)
			logit("%s: the target's %llu bytes are %s: sending it "
			    "whole", name, z.size, z.size > (u_int64_t)size ?
			    "longer than the source" : "not the source's");
	} else if (z.size > (u_int64_t)size || !z.has_hash) {
		/* R: none there (no hash), or more than the source has */
		match = 'F';
	} else if (hpn_zscp_hash(fd, (off_t)z.size, hex) != 0) {
		error("%s: cannot hash the first %llu bytes: %s: sending "
		    "it whole", name, z.size, strerror(errno));
		match = 'F';
	} else if (strcmp(hex, z.hash) != 0) {
		if (report)
			logit("%s: the %llu bytes at the target differ from "
			    "the source (BLAKE2b-512): sending it whole", name,
			    z.size);
		match = 'F';
	} else {
		match = 'M';
		*offp = (off_t)z.size;
		if (report && z.size > 0)
			logit("%s: BLAKE2b-512 of the %llu bytes at the target "
			    "matches: resuming at %llu, %lld bytes to send",
			    name, z.size, z.size, (long long)(size - *offp));
	}
	if (atomicio(vwrite, remout, &match, 1) != 1)
		fatal("lost connection");
	if (lseek(fd, *offp, SEEK_SET) == -1)
		fatal("%s: lseek: %s", name, strerror(errno));
	return 0;
}

/*
 * Target: the file could not be opened; the source waits for an answer
 * of HPN_ZSCP_REPLYLEN bytes first ("S", skip), then reads the error
 * scp.c's run_err() sends as the acknowledgement.
 */
void
hpn_zscp_refuse(int remout)
{
	char reply[HPN_ZSCP_REPLYLEN + 1];

	hpn_zscp_compose_reply(reply, 'S', 0, 0, NULL);
	(void)atomicio(vwrite, remout, reply, HPN_ZSCP_REPLYLEN);
}

/*
 * Target: answer the C line for np (srchash the source's hash of its size
 * bytes), ofd open on np for writing, and acknowledge it.  Returns 0 with
 * *offp where the data the source sends goes (ofd is placed there), 1 when
 * the file is there already, complete and identical (nothing follows),
 * -1 when the connection was lost.
 */
int
hpn_zscp_sink(int ofd, const char *np, off_t size, const char *srchash,
    int remin, int remout, int report, off_t *offp)
{
	char reply[HPN_ZSCP_REPLYLEN + 1], hex[HPN_ZSCP_HASHLEN + 1];
	struct stat st, rst;
	int rfd = -1, hashed = 0;
	off_t have = 0;
	u_char match;
	char kind;

	*offp = 0;
	if (fstat(ofd, &st) == -1 || !S_ISREG(st.st_mode)) {
		/* a device, a FIFO: written whole, as without -Z */
		memset(&st, 0, sizeof(st));
	} else if ((have = st.st_size) <= size) {
		/* hashed through a descriptor of its own, the same file */
		if ((rfd = open(np, O_RDONLY)) == -1 ||
		    fstat(rfd, &rst) == -1 || rst.st_dev != st.st_dev ||
		    rst.st_ino != st.st_ino)
			debug_f("%s: cannot read it back", np);
		else if (hpn_zscp_hash(rfd, have, hex) != 0)
			debug_f("%s: hash: %s", np, strerror(errno));
		else
			hashed = 1;
		if (rfd != -1)
			close(rfd);
		if (!hashed && report)
			logit("%s: cannot be read back: sending it whole", np);
	}
	if (hashed && have == size && have > 0 && strcmp(hex, srchash) == 0) {
		hpn_zscp_compose_reply(reply, 'S', 0, 0, NULL);
		if (atomicio(vwrite, remout, reply, HPN_ZSCP_REPLYLEN) !=
		    HPN_ZSCP_REPLYLEN || atomicio(vwrite, remout, "", 1) != 1)
			return -1;
		if (report)
			logit("%s: already complete (BLAKE2b-512 of all %lld "
			    "bytes matches): skipped", np, (long long)have);
		return 1;
	}
	/* fewer bytes than the source, and hashed: the source decides */
	kind = hashed && have < size ? 'R' : 'C';
	hpn_zscp_compose_reply(reply, kind, st.st_mode, (u_int64_t)have,
	    hashed ? hex : NULL);
	if (atomicio(vwrite, remout, reply, HPN_ZSCP_REPLYLEN) !=
	    HPN_ZSCP_REPLYLEN || atomicio(vwrite, remout, "", 1) != 1 ||
	    atomicio(read, remin, &match, 1) != 1)
		return -1;
	if (kind == 'R' && match == 'M') {
		*offp = have;
		if (report && have > 0)
			logit("%s: BLAKE2b-512 of the %lld bytes there "
			    "matches: resuming at %lld, %lld bytes to come",
			    np, (long long)have, (long long)have,
			    (long long)(size - have));
	} else if (report && have > 0) {
		logit("%s: the %lld bytes there %s: receiving it whole", np,
		    (long long)have, have > size ? "are longer than the source" :
		    "differ from the source (BLAKE2b-512)");
	}
	if (lseek(ofd, *offp, SEEK_SET) == -1 && *offp > 0) {
		/* cannot happen to a regular file: keep sync, write whole */
		error("%s: lseek: %s", np, strerror(errno));
		return -1;
	}
	return 0;
}

static void
peer_cleanup(void)
{
	if (peer_path != NULL)
		unlink(peer_path);
}

/*
 * scp -Z: before the first connection, "-Z" for the remote scp in legacy
 * mode, or (SFTP) a file for ssh to say what the server is in.
 */
void
hpn_zscp_start(char *cmd, size_t cmdlen)
{
	const char *tmp;
	int fd;

	if (hpn_zlegacy) {
		if (strlcat(cmd, " -Z", cmdlen) >= cmdlen)
			fatal_f("command too long");
		return;
	}
	if ((tmp = getenv("TMPDIR")) == NULL || *tmp == '\0')
		tmp = "/tmp";
	xasprintf(&peer_path, "%s/hpnscp-peer.XXXXXX", tmp);
	if ((fd = mkstemp(peer_path)) == -1) {
		debug_f("mkstemp %s: %s", peer_path, strerror(errno));
		free(peer_path);
		peer_path = NULL;
		return;
	}
	close(fd);
	atexit(peer_cleanup);
	if (setenv(HPN_SCP_PEER_ENV, peer_path, 1) != 0)
		fatal("setenv: %s", strerror(errno));
}

/*
 * Did the ssh of the first connection find an HPN-SSH server?  The file
 * is read once and removed at once (a copy killed later leaves nothing
 * behind), so later connections of the run (several remote sources) are
 * not looked at: they resume as without it.
 */
static int
peer_is_hpnssh(void)
{
	char buf[32];
	ssize_t n;
	int fd;

	if (peer_path == NULL)
		return 0;
	fd = open(peer_path, O_RDONLY);
	unlink(peer_path);
	free(peer_path);
	peer_path = NULL;
	(void)unsetenv(HPN_SCP_PEER_ENV);
	if (fd == -1)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	debug_f("ssh says the server is: %.*s", (int)strcspn(buf, "\n"), buf);
	return strcmp(buf, HPN_SCP_PEER_HPNSSH "\n") == 0;
}

/*
 * scp -Z in the SFTP protocol, just connected: toward an HPN-SSH server
 * whose sftp-server cannot hash ranges, drop the connection and resume in
 * legacy mode with HPN-SSH's exchange (1: the caller goes on in legacy
 * mode, cmd with "-Z").  0: stay.
 */
int
hpn_zscp_switch(struct sftp_conn **connp, int *remin, int *remout,
    pid_t *pid, char *cmd, size_t cmdlen)
{
	int status, hpnssh;

	hpnssh = peer_is_hpnssh();	/* read, and removed, in any case */
	if (hpn_sftp_can_hash(sftp_hpn(*connp)) || !hpnssh)
		return 0;
	logit("the server is HPN-SSH (no verified SFTP resume): "
	    "resuming with its legacy scp -Z exchange");
	sftp_free(*connp);
	*connp = NULL;
	close(*remin);
	if (*remout != *remin)
		close(*remout);
	*remin = *remout = -1;
	if (*pid != -1) {
		while (waitpid(*pid, &status, 0) == -1 && errno == EINTR)
			;
		*pid = -1;
	}
	hpn_zlegacy = 1;
	if (strlcat(cmd, " -Z", cmdlen) >= cmdlen)
		fatal_f("command too long");
	return 1;
}
