/*
 * HPN patch set: how hpnssh connects to a host's addresses (README.hpn
 * section 6).
 *
 * This file owns the connection attempts of a direct connection when
 * either race applies:
 *  - Happy Eyeballs (RFC 8305; HappyEyes, HappyDelay): a name with more
 *    than one address has them tried in parallel, the address families
 *    interleaved starting with the first one getaddrinfo() sorted, each
 *    next address started HappyDelay after the one before or at once when
 *    every attempt under way has failed; the first connection wins and the
 *    others are closed;
 *  - the default port 2222 raced against FallbackPort (Fallback,
 *    FallbackDelay): on each address FallbackPort joins in at once when
 *    2222 fails and after FallbackDelay of silence.
 * Both follow one schedule, so a host where IPv6 and 2222 are both dropped
 * costs at most HappyDelay plus FallbackDelay before the winning attempt
 * starts; ConnectTimeout bounds the whole (with HappyEyes no, each address,
 * as upstream's sequential loop does).
 *
 * Calls go one way: sshconnect.c calls hpn_connect_race(); this file calls
 * only the socket maker passed in, misc.c's clock and non-blocking
 * helpers, and log.c.  Linked into hpnssh only (it reads the client's
 * options).
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "misc.h"
#include "xmalloc.h"
#include "sshbuf.h"
#include "ssh.h"
#include "hostfile.h"
#include "readconf.h"
#include "hpn.h"

extern Options options;

/* At most this many addresses of a name are tried (two attempts each). */
#define HE_ADDRS_MAX	32
#define HE_TRIES_MAX	(2 * HE_ADDRS_MAX)

struct he_try {
	const struct addrinfo *ai;
	char	ntop[NI_MAXHOST];
	int	port;
	int	fd;		/* -1: not started, or over */
	int	started;
	int	err;		/* why it failed; 0: not failed */
	double	start;
	double	done;	/* when it connected */
};

struct he_race {
	struct he_try try[HE_TRIES_MAX];
	int	ntry;		/* two per address when ports race, else one */
	int	ports;		/* 2: FallbackPort races the default port */
	int	eyes;		/* Happy Eyeballs across the addresses */
	int	next;		/* the next address to start (index of try) */
	double	last;		/* when the last address started */
	double	deadline;	/* 0: none (the kernel's) */
	int	timeout_ms;	/* ConnectTimeout; 0: none */
	int	said;		/* the FallbackPort notice was given */
};

static const char *
he_family(const struct addrinfo *ai)
{
	return ai->ai_family == AF_INET6 ? "IPv6" : "IPv4";
}

/*
 * The candidate addresses of aitop, filtered by AddressFamily, interleaved
 * by family when Happy Eyeballs is on (RFC 8305 section 4: the first
 * family is the one getaddrinfo() sorted first).  Returns their count.
 */
static int
he_addresses(struct addrinfo *aitop, int interleave,
    const struct addrinfo **out)
{
	const struct addrinfo *ai, *fam[2][HE_ADDRS_MAX];
	int n[2] = { 0, 0 }, i[2] = { 0, 0 }, first = -1, f, count = 0, k;

	for (ai = aitop; ai != NULL; ai = ai->ai_next) {
		if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
		    (options.address_family != AF_UNSPEC &&
		    ai->ai_family != options.address_family))
			continue;
		f = ai->ai_family == AF_INET6;
		if (first == -1)
			first = f;
		if (!interleave) {
			if (count < HE_ADDRS_MAX)
				out[count++] = ai;
			continue;
		}
		if (n[f] < HE_ADDRS_MAX)
			fam[f][n[f]++] = ai;
	}
	if (!interleave)
		return count;
	for (f = first, k = 0; count < HE_ADDRS_MAX &&
	    (i[0] < n[0] || i[1] < n[1]); k++, f = 1 - f) {
		if (i[f] < n[f])
			out[count++] = fam[f][i[f]++];
	}
	return count;
}

/* Starts a non-blocking connect of t; on failure sets t->err. */
static void
he_start(struct he_try *t, const char *host,
    int (*create)(struct addrinfo *))
{
	struct sockaddr_storage ss;

	t->started = 1;
	t->start = monotime_double();
	debug("Connecting to %.200s [%.100s] port %d.", host, t->ntop,
	    t->port);
	memcpy(&ss, t->ai->ai_addr, t->ai->ai_addrlen);
	if (t->ai->ai_family == AF_INET6)
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(t->port);
	else
		((struct sockaddr_in *)&ss)->sin_port = htons(t->port);
	if ((t->fd = create((struct addrinfo *)t->ai)) < 0) {
		t->fd = -1;
		t->err = EINVAL;	/* create() has said why */
		return;
	}
	if (set_nonblock(t->fd) == -1 ||
	    (connect(t->fd, (struct sockaddr *)&ss, t->ai->ai_addrlen) == -1 &&
	    errno != EINPROGRESS)) {
		t->err = errno != 0 ? errno : EINVAL;
		debug("connect to address %s port %d: %s", t->ntop, t->port,
		    strerror(t->err));
		close(t->fd);
		t->fd = -1;
	}
}

static void
he_fail(struct he_try *t, int err)
{
	t->err = err;
	debug("connect to address %s port %d: %s", t->ntop, t->port,
	    strerror(err));
	close(t->fd);
	t->fd = -1;
}

/* The attempts under way. */
static int
he_running(const struct he_race *r)
{
	int i, n = 0;

	for (i = 0; i < r->ntry; i++)
		if (r->try[i].fd != -1)
			n++;
	return n;
}

/*
 * Starts what is due at now; returns when the next start is due (0: none
 * is waiting on the clock).
 */
static double
he_schedule(struct he_race *r, const char *host,
    int (*create)(struct addrinfo *), double now)
{
	struct he_try *t, *fb;
	double wake = 0, at;
	int i;

	/* the next address: after HappyDelay, or when nothing is under way */
	while (r->next < r->ntry) {
		if (r->next > 0 && he_running(r) > 0) {
			if (!r->eyes)
				break;
			at = r->last + options.hpn_happy_delay / 1000.0;
			if (now < at) {
				wake = at;
				break;
			}
		}
		t = &r->try[r->next];
		r->next += r->ports;
		r->last = now;
		if (!r->eyes && r->timeout_ms > 0)
			r->deadline = now + r->timeout_ms / 1000.0;
		he_start(t, host, create);
	}
	/* FallbackPort beside each started default port */
	for (i = 0; r->ports == 2 && i < r->next; i += 2) {
		t = &r->try[i];
		fb = &r->try[i + 1];
		if (fb->started)
			continue;
		at = t->start + options.hpn_fallback_delay / 1000.0;
		if (t->fd != -1 && now < at) {
			if (wake == 0 || at < wake)
				wake = at;
			continue;
		}
		if (!r->said) {
			logit("hpnssh: port %d %s; trying port %d too (set "
			    "Port or Fallback no to change this)", t->port,
			    t->fd == -1 ? strerror(t->err) : "is silent",
			    fb->port);
			r->said = 1;
		} else
			debug("port %d of %s %s; trying port %d too", t->port,
			    t->ntop, t->fd == -1 ? strerror(t->err) :
			    "is silent", fb->port);
		he_start(fb, host, create);
	}
	return wake;
}

/*
 * One round of attempts over every address.  Returns the connected socket
 * (the try in *wonp), or -1 with errno set.
 */
static int
he_run(struct he_race *r, const char *host, int (*create)(struct addrinfo *),
    struct he_try **wonp)
{
	struct pollfd pfd[HE_TRIES_MAX];
	struct he_try *t;
	double now, wake;
	int i, j, ms, err, last_err = 0;
	socklen_t len;

	r->next = 0;
	r->said = 0;
	r->deadline = 0;
	if (r->eyes && r->timeout_ms > 0)
		r->deadline = monotime_double() + r->timeout_ms / 1000.0;
	for (i = 0; i < r->ntry; i++) {
		r->try[i].fd = -1;
		r->try[i].started = 0;
		r->try[i].err = 0;
	}
	for (;;) {
		now = monotime_double();
		if (r->deadline > 0 && now >= r->deadline) {
			/* ConnectTimeout: all (Happy Eyeballs) or the address */
			for (i = 0; i < r->ntry; i++) {
				if (r->try[i].fd != -1)
					he_fail(&r->try[i], ETIMEDOUT);
				else if (i < r->next && !r->try[i].started) {
					/* FallbackPort not joined yet */
					r->try[i].started = 1;
					r->try[i].err = ETIMEDOUT;
				}
			}
			last_err = ETIMEDOUT;
			if (r->eyes)
				break;
			r->deadline = 0;
		}
		wake = he_schedule(r, host, create, now);
		if (he_running(r) == 0) {
			if (r->next < r->ntry)
				continue;	/* the next address, at once */
			break;
		}
		if (r->deadline > 0 && (wake == 0 || r->deadline < wake))
			wake = r->deadline;
		ms = -1;
		if (wake > 0) {
			ms = (int)((wake - now) * 1000) + 1;
			if (ms < 0)
				ms = 0;
		}
		for (i = j = 0; i < r->ntry; i++) {
			if (r->try[i].fd == -1)
				continue;
			pfd[j].fd = r->try[i].fd;
			pfd[j].events = POLLOUT;
			pfd[j].revents = 0;
			j++;
		}
		if (poll(pfd, j, ms) == -1) {
			if (errno == EINTR)
				continue;
			err = errno;
			error_f("poll: %s", strerror(err));
			for (i = 0; i < r->ntry; i++)
				if (r->try[i].fd != -1)
					he_fail(&r->try[i], err);
			errno = err;
			return -1;
		}
		/* in order: earlier addresses first, the default port first */
		for (i = j = 0; i < r->ntry; i++) {
			t = &r->try[i];
			if (t->fd == -1)
				continue;
			if (pfd[j++].revents == 0)
				continue;
			err = 0;
			len = sizeof(err);
			if (getsockopt(t->fd, SOL_SOCKET, SO_ERROR, &err,
			    &len) == -1)
				err = errno;
			if (err != 0) {
				he_fail(t, err);
				last_err = err;
				continue;
			}
			if (unset_nonblock(t->fd) == -1) {
				he_fail(t, errno);
				last_err = t->err;
				continue;
			}
			t->done = monotime_double();
			*wonp = t;
			return t->fd;
		}
	}
	/* the error of the first address's default port, as upstream */
	for (i = 0; i < r->ntry; i++)
		if (r->try[i].err != 0 && r->try[i].err != EINVAL) {
			last_err = r->try[i].err;
			break;
		}
	errno = last_err != 0 ? last_err : ECONNREFUSED;
	return -1;
}

/*
 * sshconnect.c, ssh_connect_direct(): connect to host's addresses aitop
 * with Happy Eyeballs when the name has several (HappyEyes) and with
 * FallbackPort racing the default port when the port was not chosen by
 * the user (Fallback), connection_attempts rounds of it, each within
 * timeout_ms (ConnectTimeout; 0: the kernel's).  Returns the socket, with
 * *hostaddr and options.port set to what connected; -1 when every attempt
 * failed (said); -2: neither race applies, connect as upstream does.
 */
int
hpn_connect_race(const char *host, struct addrinfo *aitop,
    struct sockaddr_storage *hostaddr, int connection_attempts,
    int timeout_ms, int (*create)(struct addrinfo *))
{
	const struct addrinfo *addr[HE_ADDRS_MAX];
	struct he_race *r;
	struct he_try *won = NULL, *t;
	int naddr, i, p, sock = -1, attempt, err, others = 0;

	r = xcalloc(1, sizeof(*r));
	r->ports = (options.hpn_port_defaulted && options.hpn_fallback &&
	    options.port == HPN_DEFAULT_PORT &&
	    options.hpn_fallback_port > 0 &&
	    options.hpn_fallback_port != options.port) ? 2 : 1;
	naddr = he_addresses(aitop, options.hpn_happy_eyes == 1, addr);
	r->eyes = options.hpn_happy_eyes == 1 && naddr > 1;
	if (naddr == 0 || (r->ports == 1 && !r->eyes)) {
		free(r);
		return -2;
	}
	if (r->eyes)
		debug("Happy Eyeballs: %d addresses, %s first, %d ms apart",
		    naddr, he_family(addr[0]), options.hpn_happy_delay);
	r->timeout_ms = timeout_ms;
	r->ntry = naddr * r->ports;
	for (i = 0; i < r->ntry; i++) {
		t = &r->try[i];
		t->ai = addr[i / r->ports];
		t->port = (i % r->ports) == 0 ? options.port :
		    options.hpn_fallback_port;
		if (getnameinfo(t->ai->ai_addr, t->ai->ai_addrlen, t->ntop,
		    sizeof(t->ntop), NULL, 0, NI_NUMERICHOST) != 0)
			strlcpy(t->ntop, "?", sizeof(t->ntop));
	}
	for (attempt = 0; attempt < MAXIMUM(connection_attempts, 1);
	    attempt++) {
		if (attempt > 0) {
			/* as upstream: a moment before retrying */
			sleep(1);
			debug("Trying again...");
		}
		if ((sock = he_run(r, host, create, &won)) >= 0)
			break;
	}
	if (sock < 0) {
		err = errno;
		if (r->ports == 2)
			error("ssh: connect to host %s port %d (or %d): %s",
			    host, options.port, options.hpn_fallback_port,
			    strerror(err));
		else
			error("ssh: connect to host %s port %d: %s", host,
			    options.port, strerror(err));
		free(r);
		errno = err;
		return -1;
	}
	/* the winner keeps its socket; every other attempt is closed */
	for (i = 0; i < r->ntry; i++) {
		if (&r->try[i] != won && r->try[i].fd != -1) {
			close(r->try[i].fd);
			r->try[i].fd = -1;
			others++;
		}
	}
	p = won->port;
	memcpy(hostaddr, won->ai->ai_addr, won->ai->ai_addrlen);
	if (won->ai->ai_family == AF_INET6)
		((struct sockaddr_in6 *)hostaddr)->sin6_port = htons(p);
	else
		((struct sockaddr_in *)hostaddr)->sin_port = htons(p);
	if (r->eyes)
		debug("Happy Eyeballs: %.100s port %d won (%s), started "
		    "%.3f s after the first, connected in %.3f s; %d other "
		    "attempt%s closed", won->ntop, p, he_family(won->ai),
		    won->start - r->try[0].start, won->done - won->start,
		    others, others == 1 ? "" : "s");
	if (p != options.port)
		logit("hpnssh: connected to %s on port %d", host, p);
	options.port = p;
	free(r);
	return sock;
}
