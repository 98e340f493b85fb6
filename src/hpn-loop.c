/*
 * HPN patch set: the main loops block their signals once, not twice a trip,
 * and write what they queued without waiting for another ppoll().
 *
 * sshd's session loop (SIGCHLD, SIGINFO) and ssh's client loop (SIGHUP,
 * SIGINT, SIGQUIT, SIGTERM, SIGINFO) block the signals whose handlers set
 * flags that the loop checks, check the flags, then wait in ppoll() with
 * the old mask, so that a signal arriving between the check and the wait
 * wakes the wait; and unblock them again after it.  That is two
 * sigprocmask() calls on every trip round the loop: on a fast transfer as
 * many as all its reads and writes together.  Here the loop blocks them
 * once before it starts and unblocks them once after it ends; ppoll()
 * still unblocks them while it waits, so every signal is still taken
 * there, the only place it was ever acted on, and no wake-up is lost.
 *
 * What the loop starts must not inherit the blocked signals: a child of
 * fork() (sshd's session children: the user's shell and commands, and
 * what they run; ssh's askpass, ~C's local command) gets the mask from
 * before the loop back at once (pthread_atfork), and ssh puts it back
 * around the xauth commands it runs (system(), popen(): the C library
 * starts those without fork handlers) and around a prompt on the
 * terminal (read_passphrase(): ^C there acts at once, as upstream).  A
 * child of fork() that goes on with the loop (ssh's ~& escape,
 * ForkAfterAuthentication once forwardings are confirmed) blocks and
 * unblocks on every trip, as upstream does.
 *
 * Also here: packets queued after the loop's ppoll() (a bulk receiver's
 * window adjusts) are written in the same trip, not after one more
 * ppoll() (hpn_loop_write_now()).
 */

#include "includes.h"

#include <sys/types.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "log.h"
#include "packet.h"
#include "hpn.h"

static struct {
	int		active;		/* blocked for the loop */
	int		child_restore;	/* children of fork() get orig */
	int		paused;
	sigset_t	orig;		/* the mask before the loop */
	sigset_t	blocked;	/* the mask in the loop */
} lm;

static pthread_once_t lm_once = PTHREAD_ONCE_INIT;

static void
lm_atfork_child(void)
{
	if (lm.active && lm.child_restore) {
		(void)sigprocmask(SIG_SETMASK, &lm.orig, NULL);
		lm.active = 0;
	}
}

static void
lm_init(void)
{
	(void)pthread_atfork(NULL, NULL, lm_atfork_child);
}

/*
 * Before the loop: block the signals of set for as long as it runs; *osetp
 * gets the mask from before, for ppoll() to wait with.  child_restore:
 * children of fork() get that mask back.  Returns 0, or -1 when the mask
 * could not be set (the caller then blocks and unblocks on every trip as
 * upstream does).
 */
int
hpn_loop_sigblock(const sigset_t *set, sigset_t *osetp, int child_restore)
{
	(void)pthread_once(&lm_once, lm_init);
	if (sigprocmask(SIG_BLOCK, set, osetp) == -1) {
		error_f("sigprocmask: %s", strerror(errno));
		return -1;
	}
	lm.orig = *osetp;
	if (sigprocmask(SIG_BLOCK, NULL, &lm.blocked) == -1) {
		error_f("sigprocmask: %s", strerror(errno));
		(void)sigprocmask(SIG_SETMASK, osetp, NULL);
		return -1;
	}
	lm.child_restore = child_restore;
	lm.paused = 0;
	lm.active = 1;
	return 0;
}

/* Whether the loop's signals are blocked for good (no per-trip calls). */
int
hpn_loop_sigblocked(void)
{
	return lm.active;
}

/* After the loop: the mask from before it. */
void
hpn_loop_sigrestore(void)
{
	if (!lm.active)
		return;
	lm.active = 0;
	if (sigprocmask(SIG_SETMASK, &lm.orig, NULL) == -1)
		error_f("sigprocmask: %s", strerror(errno));
}

/* Around something the loop starts that fork handlers do not reach. */
void
hpn_loop_sigpause(void)
{
	if (!lm.active || lm.paused)
		return;
	if (sigprocmask(SIG_SETMASK, &lm.orig, NULL) == 0)
		lm.paused = 1;
}

void
hpn_loop_sigresume(void)
{
	if (!lm.active || !lm.paused)
		return;
	lm.paused = 0;
	if (sigprocmask(SIG_SETMASK, &lm.blocked, NULL) == -1)
		error_f("sigprocmask: %s", strerror(errno));
}

/*
 * Whether the loop should write the connection now although ppoll() did
 * not report it writable: pfd is the connection's output entry of the
 * last ppoll().  Packets queued after that ppoll() (a window adjust once
 * the channel's output went to its pipe, a reply to a request) would
 * otherwise wait for the next trip, whose ppoll() returns at once only
 * to say the socket can take them: a wake-up and a ppoll() for every
 * window adjust of a bulk receiver.  When ppoll() was asked and did not
 * report it writable, the socket is full: wait for it as upstream does.
 * A write that finds it full after all takes nothing (EAGAIN), and the
 * next ppoll() asks for POLLOUT.
 */
int
hpn_loop_write_now(struct ssh *ssh, const struct pollfd *pfd)
{
	if (pfd == NULL || (pfd->events & POLLOUT) != 0)
		return 0;
	return ssh_packet_have_data_to_write(ssh);
}
