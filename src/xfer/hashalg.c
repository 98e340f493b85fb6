/*
 * HPN patch set: which checksums verified resume offers (src/xfer/).
 *
 * The client names the algorithms of a hash-range request by preference
 * (hpn-sftp-hash.c; the server takes the first it has).  The list is the
 * ResumeHash option of ssh_config (readconf.c, checked by
 * hpn_parse_hash_list()): by default every one this build has, xxh128
 * first where it has libxxhash.  scp and sftp do not read ssh_config
 * themselves, so the option is asked of ssh: the first time a resume needs
 * the list, the command of the connection (as scp or sftp put it together,
 * -F, -o and the host included) is run with -G, and its "resumehash" line
 * is read, so that Host and Match blocks apply as they do to the
 * connection.  Where there is no ssh (-D), or it does not say (-S with
 * another program), the default applies; ssh -G is bounded in time
 * (HASHALG_WAIT) and reaped by PID.
 *
 * Owns: the list offered, and the ssh -G that finds it.
 * Calls: nothing of the engine (hpn-options.c checks the list).
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <paths.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xmalloc.h"
#include "log.h"
#include "misc.h"

#include "hpn.h"
#include "hpn-sftp-xfer.h"

#define HASHALG_WAIT	10		/* s: for ssh -G's answer */
#define HASHALG_OUT_MAX	(256 * 1024)	/* bytes of it read, at most */
#define HASHALG_KEY	"resumehash "

static struct {
	char **argv;		/* the connection's ssh command */
	char *list;		/* what we offer, once known */
} ha;

/*
 * The command of a connection (argv[0] the program, then its arguments
 * up to NULL; the host and the subsystem included): the list is asked of
 * it when first needed.  A new connection forgets the last one's list.
 */
void
hpn_sftp_hash_ssh(char * const *argv)
{
	size_t i, n;

	stringlist_free(ha.argv);
	ha.argv = NULL;
	free(ha.list);
	ha.list = NULL;
	if (argv == NULL || argv[0] == NULL)
		return;
	for (n = 0; argv[n] != NULL; n++)
		;
	ha.argv = xcalloc(n + 2, sizeof(*ha.argv));
	ha.argv[0] = xstrdup(argv[0]);
	ha.argv[1] = xstrdup("-G");
	for (i = 1; i < n; i++)
		ha.argv[i + 1] = xstrdup(argv[i]);
	ha.argv[n + 1] = NULL;
}

/* ssh -G's output (NUL-terminated), or NULL (said with debug). */
static char *
ask_ssh(void)
{
	struct pollfd pfd;
	char *out;
	size_t len = 0;
	ssize_t r;
	double deadline;
	int p[2], nul, status = 0, ms;
	pid_t pid, w;

	if (pipe(p) == -1) {
		debug_f("pipe: %s", strerror(errno));
		return NULL;
	}
	if ((pid = fork()) == -1) {
		debug_f("fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return NULL;
	}
	if (pid == 0) {
		if ((nul = open(_PATH_DEVNULL, O_RDWR)) == -1 ||
		    dup2(nul, STDIN_FILENO) == -1 ||
		    dup2(p[1], STDOUT_FILENO) == -1 ||
		    dup2(nul, STDERR_FILENO) == -1)
			_exit(255);
		closefrom(STDERR_FILENO + 1);
		(void)ssh_signal(SIGPIPE, SIG_DFL);
		execvp(ha.argv[0], ha.argv);
		_exit(255);
	}
	close(p[1]);
	out = xmalloc(HASHALG_OUT_MAX + 1);
	deadline = monotime_double() + HASHALG_WAIT;
	for (;;) {
		ms = (int)((deadline - monotime_double()) * 1000);
		if (ms <= 0 || len >= HASHALG_OUT_MAX) {
			debug_f("%s -G: no end of its output in %d s",
			    ha.argv[0], HASHALG_WAIT);
			break;
		}
		pfd.fd = p[0];
		pfd.events = POLLIN;
		if (poll(&pfd, 1, ms) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		if ((r = read(p[0], out + len, HASHALG_OUT_MAX - len)) == -1) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			break;
		}
		if (r == 0)
			break;		/* its end */
		len += r;
	}
	close(p[0]);
	out[len] = '\0';
	/* bounded: it ends after its output, or it is told to */
	while ((w = waitpid(pid, &status, WNOHANG)) == 0 &&
	    monotime_double() < deadline)
		usleep(10 * 1000);
	if (w == 0) {
		debug_f("%s -G: still running after %d s: ended", ha.argv[0],
		    HASHALG_WAIT);
		kill(pid, SIGTERM);
		while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
			;
	}
	if (w <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		debug_f("%s -G failed", ha.argv[0]);
		free(out);
		return NULL;
	}
	return out;
}

/* The value of ResumeHash in ssh -G's output, or NULL. */
static char *
from_ssh(void)
{
	char *out, *line, *cp, *ret = NULL, why[128];

	if ((out = ask_ssh()) == NULL)
		return NULL;
	for (cp = out; (line = strsep(&cp, "\n")) != NULL;) {
		if (strncmp(line, HASHALG_KEY, strlen(HASHALG_KEY)) != 0)
			continue;
		line += strlen(HASHALG_KEY);
		if (hpn_parse_hash_list(line, why, sizeof(why)) != 0) {
			/* another build's ssh, or another program */
			debug_f("%s -G: resumehash \"%.64s\": %s",
			    ha.argv[0], line, why);
			break;
		}
		ret = xstrdup(line);
		break;
	}
	free(out);
	return ret;
}

/* The names of list that we can hash with (all of them, normally). */
static char *
usable(const char *list)
{
	char *l, *cp, *name, *ret;

	ret = xcalloc(1, strlen(list) + 1);
	l = cp = xstrdup(list);
	while ((name = strsep(&cp, ",")) != NULL) {
		if (hpn_hash_pick(name) == NULL) {
			debug_f("ResumeHash: %s cannot be used here", name);
			continue;
		}
		if (*ret != '\0')
			strlcat(ret, ",", strlen(list) + 1);
		strlcat(ret, name, strlen(list) + 1);
	}
	free(l);
	return ret;
}

/*
 * The algorithms a hash-range request offers, comma-separated, by
 * preference: ResumeHash, or every one we have.
 */
const char *
hpn_sftp_hash_offer(void)
{
	char *l;

	if (ha.list != NULL)
		return ha.list;
	if (ha.argv != NULL && (l = from_ssh()) != NULL) {
		ha.list = usable(l);
		free(l);
		if (*ha.list != '\0') {
			debug_f("ResumeHash %s", ha.list);
			return ha.list;
		}
		free(ha.list);
	}
	ha.list = xstrdup(hpn_hash_algs());
	return ha.list;
}

/* Is alg one of those we offer (a server's reply may name no other)? */
int
hpn_sftp_hash_offered(const char *alg)
{
	char *l, *cp, *name;
	int ret = 0;

	l = cp = xstrdup(hpn_sftp_hash_offer());
	while (!ret && (name = strsep(&cp, ",")) != NULL)
		ret = strcmp(name, alg) == 0;
	free(l);
	return ret;
}
