/*
 * HPN patch set: hpnscp -n N and hpnsftp -n N, one transfer over N
 * connections (src/xfer/).
 *
 * One TCP stream falls short on long paths with loss: each loss halves
 * that one stream's window.  With -n N the transfer engine also uses N-1
 * more SFTP sessions, each over its own ssh process and so its own TCP
 * connection ("lanes"): files are spread over them, and large files are
 * cut into parts moved on several at once (budget.c, stripe.c).
 *
 * The extra connections run the same ssh command line as the first, with
 * BatchMode (they never prompt: a password or a passphrase is asked once,
 * for the first) and without ControlMaster/ControlPath (each needs a TCP
 * connection of its own).  They are started together as the first one
 * connects, and greeted with INIT.  The transfer does not wait for them:
 * it starts on the first connection, and each extra one joins it when its
 * VERSION has come (hpn_sftp_lanes_poll(), from the engine's loop); one
 * that does not answer (authentication needs a person, the server refuses
 * more sessions) is dropped, with one notice for all of them once none is
 * left to wait for.  They take the first connection's limits (the same
 * server).  At exit their sockets are closed: the ssh of a session in use
 * then ends by itself (not waited for, like the first connection's); the
 * others are reaped by PID (bounded: then SIGTERM).
 *
 * Owns: the extra connections, one struct lane each (its ssh, its socket,
 * its greeting), from -n's option to their end.
 * Calls: conn.c, proto.c (the VERSION's first bytes), hashalg.c (the
 * command, for ResumeHash). */

#include "includes.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
#include "sshbuf.h"
#include "ssherr.h"
#include "atomicio.h"

#include "sftp.h"

#include "openbsd-compat/sys-queue.h"
#include "openbsd-compat/sys-tree.h"

#include "sftp-common.h"

#include "hpn.h"
#include "xfer.h"

#define LANE_GREET_WAIT	60	/* s: for every lane's VERSION */

enum { G_NONE, G_WAIT, G_UP, G_FAILED };	/* greeting */

/* An extra connection: its ssh, its socket, and how far its VERSION came. */
struct lane {
	struct hpn_sftp *h;	/* once greeted */
	int fd;			/* our end of its socket, -1: none */
	pid_t pid;		/* its ssh */
	int up;			/* greeted: its session was in use */
	u_int msg_id;		/* its request ids */
	int g;			/* G_* */
	u_char head[9];		/* its VERSION's first bytes ... */
	size_t have, need;	/* ... as they come, and the rest to skip */
};

static struct {
	u_int want;		/* -n */
	char **argv;		/* the first connection's command */
	int started, tried;
	int chatty;		/* -v: their stderr stays ours */
	struct hpn_sftp *owner;	/* the first connection they go with */
	struct lane l[HPN_LANES_MAX];	/* the extra ones: want - 1 */
	u_int n;		/* lanes up, in the order they joined: */
	struct hpn_sftp *h[HPN_LANES_MAX];
	double deadline;
	u_int failed;
	int told;
} lanes;

static void lanes_start(void);

/* -n's argument: 1 to HPN_LANES_MAX. */
int
hpn_sftp_lanes_parse(const char *s)
{
	const char *errstr = NULL;
	long long n;

	n = strtonum(s, 1, HPN_LANES_MAX, &errstr);
	if (errstr != NULL)
		return -1;
	lanes.want = (u_int)n;
	/* the connections' windows share one memory budget (hpn-budget.c) */
	if (n > 1)
		hpn_budget_create(HPN_BUDGET_AUTO, 1);
	return 0;
}

/* The connections -n asked for (1: none but the first). */
u_int
lanes_wanted(void)
{
	return lanes.want;
}

/*
 * The command of the first connection: argv[0] the program, then its
 * arguments up to NULL; our options go right after argv[0].  Kept by
 * hashalg.c too, with any -n.
 */
void
hpn_sftp_lanes_cmd(char * const *argv)
{
	static const char *extra[] = {
		"-oBatchMode=yes", "-oControlMaster=no", "-oControlPath=none",
	};
	size_t i, n, k = 0;

	hpn_sftp_hash_ssh(argv);	/* ResumeHash is asked of it */
	if (lanes.want <= 1 || lanes.started || argv == NULL ||
	    argv[0] == NULL)
		return;
	for (n = 0; argv[n] != NULL; n++)
		;
	stringlist_free(lanes.argv);
	lanes.argv = xcalloc(n + 4, sizeof(*lanes.argv));
	lanes.argv[k++] = xstrdup(argv[0]);
	for (i = 0; i < sizeof(extra) / sizeof(*extra); i++)
		lanes.argv[k++] = xstrdup(extra[i]);
	for (i = 1; i < n; i++)
		lanes.argv[k++] = xstrdup(argv[i]);
	lanes.argv[k] = NULL;
}

/* scp: its ssh command is put together in the child; the same here. */
void
hpn_sftp_lanes_ssh(char * const *base, const char *program,
    const char *host, const char *user, int port)
{
	char **v, portbuf[16];
	size_t n, k = 0, i;

	if (base == NULL)	/* and with -n 1 too, for ResumeHash */
		return;
	for (n = 0; base[n] != NULL; n++)
		;
	v = xcalloc(n + 10, sizeof(*v));
	v[k++] = xstrdup(program);
	for (i = 1; i < n; i++)
		v[k++] = xstrdup(base[i]);
	if (port != -1) {
		snprintf(portbuf, sizeof(portbuf), "%d", port);
		v[k++] = xstrdup("-p");
		v[k++] = xstrdup(portbuf);
	}
	if (user != NULL) {
		v[k++] = xstrdup("-l");
		v[k++] = xstrdup(user);
	}
	v[k++] = xstrdup("-s");
	v[k++] = xstrdup("--");
	v[k++] = xstrdup(host);
	v[k++] = xstrdup("sftp");
	v[k] = NULL;
	hpn_sftp_lanes_cmd(v);
	stringlist_free(v);
}

/*
 * At exit: close the lanes.  The ssh of a session that was in use ends by
 * itself on that end of input, and is not waited for: as scp does not wait
 * for the first connection's ssh, whose teardown is one more round trip.
 * The others (never greeted) are reaped, bounded, then sent SIGTERM.
 */
static void
lanes_reap(void)
{
	struct lane *ln;
	u_int i, tries;
	int left;

	for (i = 0; i < HPN_LANES_MAX; i++) {
		ln = &lanes.l[i];
		if (ln->fd != -1 && ln->pid > 0) {
			close(ln->fd);
			ln->fd = -1;
		}
		if (ln->up && ln->pid > 0 &&
		    waitpid(ln->pid, NULL, WNOHANG) == 0)
			ln->pid = 0;	/* ends on its own */
		else if (ln->up && ln->pid > 0)
			hpn_budget_reaped(ln->pid);
	}
	for (tries = 0; tries < 100; tries++) {
		for (i = 0, left = 0; i < HPN_LANES_MAX; i++) {
			ln = &lanes.l[i];
			if (ln->pid <= 0)
				continue;
			if (waitpid(ln->pid, NULL, WNOHANG) != 0) {
				hpn_budget_reaped(ln->pid);
				ln->pid = 0;
			} else
				left++;
		}
		if (left == 0)
			return;
		if (tries == 50)
			for (i = 0; i < HPN_LANES_MAX; i++)
				if (lanes.l[i].pid > 0)
					kill(lanes.l[i].pid, SIGTERM);
		usleep(100 * 1000);
	}
}

static pid_t
spawn(int *fdp)
{
	int sv[2], nul;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1) {
		error("-n: socketpair: %s", strerror(errno));
		return -1;
	}
	if ((pid = fork()) == -1) {
		error("-n: fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0) {
		if (dup2(sv[0], STDIN_FILENO) == -1 ||
		    dup2(sv[0], STDOUT_FILENO) == -1)
			_exit(255);
		/*
		 * Their failures are summed up in one notice (next to a
		 * password prompt, three "Permission denied" would only
		 * confuse); with -v they speak for themselves.
		 */
		if (!lanes.chatty && (nul = open(_PATH_DEVNULL, O_WRONLY)) != -1)
			(void)dup2(nul, STDERR_FILENO);
		/*
		 * Nothing else of ours: a descriptor of the first
		 * connection held here would keep its ssh from seeing its
		 * end (scp waits for it on a fatal error).
		 */
		closefrom(hpn_budget_pass(STDERR_FILENO + 1));
		(void)ssh_signal(SIGPIPE, SIG_DFL);	/* not the engine's */
		/* behind the first connection (hpn_sftp_lanes_go()) */
		usleep(HPN_LANE_STAGGER * 1000000);
		hpn_xfer_ssh_child();
		execvp(lanes.argv[0], lanes.argv);
		fprintf(stderr, "%s: %s\r\n", lanes.argv[0], strerror(errno));
		_exit(255);
	}
	close(sv[0]);
	(void)fcntl(sv[1], F_SETFD, FD_CLOEXEC);
	*fdp = sv[1];
	return pid;
}

/*
 * Lane ln's VERSION (connection n), read as far as it has come without
 * waiting: its greeting ends G_UP (the whole VERSION read: the descriptor
 * blocking again) or G_FAILED (closed, or not SFTP: proto.c says).
 */
static void
greet_step(struct lane *ln, u_int n)
{
	u_char tmp[4096];
	u_int len, version;
	ssize_t r;

	while (ln->g == G_WAIT) {
		if (ln->have < sizeof(ln->head))
			r = read(ln->fd, ln->head + ln->have,
			    sizeof(ln->head) - ln->have);
		else if (ln->need > 0)
			r = read(ln->fd, tmp, MINIMUM(ln->need, sizeof(tmp)));
		else {
			(void)unset_nonblock(ln->fd);
			ln->g = G_UP;
			return;
		}
		if (r == -1 && (errno == EAGAIN || errno == EINTR ||
		    errno == EWOULDBLOCK))
			return;
		if (r <= 0) {
			ln->g = G_FAILED;	/* no VERSION */
			return;
		}
		if (ln->have < sizeof(ln->head)) {
			ln->have += r;
			if (ln->have < sizeof(ln->head))
				continue;
			if (sftp_version_head(ln->head, &len, &version) != 0) {
				error("-n: connection %u: not an SFTP "
				    "VERSION", n);
				ln->g = G_FAILED;
				return;
			}
			ln->need = len;		/* its extensions */
		} else
			ln->need -= r;
	}
}

/*
 * Start the extra connections: right after the first one, once its INIT
 * is sent (hpn_sftp_early_send()), so that they are set up while it is
 * (and the user types a password, if asked: they never prompt), but
 * behind it: set-ups compete for the CPUs of both ends (some 0.1 s of a
 * server's CPU each for OpenSSH 10's), and the first one carries the
 * transfer's start.  INIT goes at once; VERSION is read as it comes
 * (hpn_sftp_lanes_poll()).
 */
void
hpn_sftp_lanes_go(void)
{
	lanes_start();
}

static void
lanes_start(void)
{
	static const u_char init[] = { 0, 0, 0, 5, SSH2_FXP_INIT,
	    0, 0, 0, SSH2_FILEXFER_VERSION };
	struct lane *ln;
	u_int i;

	if (lanes.started || lanes.want <= 1 || lanes.argv == NULL)
		return;
	lanes.started = 1;
	lanes.chatty = log_level_get() >= SYSLOG_LEVEL_DEBUG1;
	for (i = 0; i < HPN_LANES_MAX; i++) {
		lanes.l[i].fd = -1;
		lanes.l[i].pid = 0;
	}
	atexit(lanes_reap);
	for (i = 0; i < lanes.want - 1; i++) {
		ln = &lanes.l[i];
		if ((ln->pid = spawn(&ln->fd)) <= 0) {
			ln->pid = 0;
			ln->g = G_FAILED;
			lanes.failed++;
			continue;
		}
		if (atomicio(vwrite, ln->fd, (void *)init,
		    sizeof(init)) != sizeof(init) ||
		    set_nonblock(ln->fd) == -1) {
			close(ln->fd);
			ln->fd = -1;
			ln->g = G_FAILED;
			lanes.failed++;
			continue;
		}
		ln->g = G_WAIT;
	}
	lanes.deadline = monotime_double() + LANE_GREET_WAIT;
}

/*
 * The extra lanes whose VERSION came since the last call, for main (the
 * first connection they serve): at most max of them into fresh.  Lanes
 * past LANE_GREET_WAIT are given up.  Once none is left to wait for, the
 * ones that failed are said in one notice.
 */
u_int
hpn_sftp_lanes_poll(struct hpn_sftp *main, struct hpn_sftp **fresh,
    u_int max)
{
	struct lane *ln;
	u_int i, k = 0, waiting = 0;
	int late;

	if (!lanes.started || main != lanes.owner)
		return 0;
	late = monotime_double() >= lanes.deadline;
	for (i = 0; i < lanes.want - 1 && k < max; i++) {
		ln = &lanes.l[i];
		if (ln->g != G_WAIT)
			continue;
		greet_step(ln, i + 2);
		if (ln->g == G_WAIT && late)
			ln->g = G_FAILED;
		if (ln->g == G_FAILED) {
			close(ln->fd);
			ln->fd = -1;
			lanes.failed++;
			continue;
		}
		if (ln->g == G_WAIT) {
			waiting++;
			continue;
		}
		ln->msg_id = 1;
		ln->up = 1;
		ln->h = hpn_sftp_attach(ln->fd, ln->fd, &ln->msg_id);
		hpn_sftp_settle_as(ln->h, main, PEEK_U32(ln->head + 5));
		fresh[k++] = lanes.h[lanes.n++] = ln->h;
		debug_f("connection %u joins", i + 2);
	}
	if (waiting == 0 && lanes.failed > 0 && !lanes.told) {
		lanes.told = 1;
		logit("-n %u: %u of the %u extra connections failed (they "
		    "need authentication without a prompt: keys or an "
		    "agent); going on with %u", lanes.want, lanes.failed,
		    lanes.want - 1, lanes.want - lanes.failed);
	}
	return k;
}

/*
 * The extra lanes still to greet: how many; their descriptors in fds
 * (room for HPN_LANES_MAX), unless NULL.
 */
u_int
hpn_sftp_lanes_waiting(struct hpn_sftp *main, int *fds)
{
	u_int i, k = 0;

	if (!lanes.started || main != lanes.owner)
		return 0;
	for (i = 0; i < lanes.want - 1; i++) {
		if (lanes.l[i].g != G_WAIT)
			continue;
		if (fds != NULL)
			fds[k] = lanes.l[i].fd;
		k++;
	}
	return k;
}

/*
 * The extra lanes for a run on main: those up, and on the first call
 * those whose VERSION has come already (none is waited for).  Returns
 * how many are up; *hp: their states.
 */
u_int
hpn_sftp_lanes(struct hpn_sftp *main, struct hpn_sftp ***hp)
{
	struct hpn_sftp *fresh[HPN_LANES_MAX];

	*hp = lanes.h;
	if (lanes.tried) {
		/* scp from several hosts: the lanes are the first one's */
		if (main != lanes.owner) {
			debug_f("another server: one connection");
			return 0;
		}
	} else {
		lanes.tried = 1;
		lanes.owner = main;
	}
	(void)hpn_sftp_lanes_poll(main, fresh, HPN_LANES_MAX);
	return lanes.n;
}

/* The engine lost lane h (its connection closed): drop it. */
void
hpn_sftp_lanes_lost(struct hpn_sftp *h)
{
	u_int i;

	for (i = 0; i < lanes.n; i++)
		if (lanes.h[i] == h)
			break;
	if (i == lanes.n)
		return;
	memmove(lanes.h + i, lanes.h + i + 1,
	    (lanes.n - i - 1) * sizeof(*lanes.h));
	lanes.n--;
	for (i = 0; i < HPN_LANES_MAX; i++)
		if (lanes.l[i].h == h)
			lanes.l[i].h = NULL;
	conn_free(h);		/* a lane has nothing else (early.c's) */
}

/* The first connection's state goes: its lanes serve no other. */
void
hpn_sftp_lanes_forget(struct hpn_sftp *h)
{
	if (h != NULL && h == lanes.owner)
		lanes.owner = NULL;
}
