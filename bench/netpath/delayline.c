/*
 * delayline - a cheap userspace long-fat-network path emulator.
 *
 * Joins two TUN devices, A and B, each created inside its own network
 * namespace.  Every packet read from A is written to B and vice versa,
 * after passing through a per-direction model of a path:
 *
 *	loss	    random drop with a fixed probability (seeded PRNG)
 *	queue	    bottleneck queue, tail drop, limit in bytes
 *	rate	    serialization: dep = max(now, last_dep) + bytes * 8 / rate
 *	delay	    propagation: due = dep + delay
 *
 * Since the delay is constant per direction and departures are monotonic,
 * due times are monotonic too and each direction is a plain FIFO.  Packets
 * are read straight into a mirrored byte ring (one memfd mapped twice back
 * to back, so a record never needs to be split), and written out from it.
 * One process, one thread, ppoll() with a timeout to the next due time;
 * each wake-up reads what is pending (bounded batch) and delivers every
 * packet whose time has come.
 *
 * With --offload the TUNs use IFF_VNET_HDR and TSO, so the kernel hands
 * over TCP super-packets of up to 64 KiB.  Rate and queue accounting use
 * the bytes the segments would have on the wire; a super-packet is lost
 * if any of its segments would have been lost.
 *
 * Counters are written on SIGUSR1 and at exit (SIGTERM, SIGINT, SIGHUP)
 * to stderr and, with --stats, to a file (replaced atomically).
 */

#define _GNU_SOURCE

#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#include <linux/if.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>

#include <endian.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NSEC		1000000000ULL
#define RECHDR		16		/* ring record header, keeps alignment */
#define RECALIGN	16
#define VNETSZ		((int)sizeof(struct virtio_net_hdr))
#define MAXREAD		(65536 + 64)	/* largest read: 64k GSO + vnet hdr */
#define BATCH		64		/* reads per fd per wake-up */
#define MIN_RING	(8ULL << 20)
#define MAX_RING	(2ULL << 30)

struct rec {
	uint64_t	 due;		/* ns, CLOCK_MONOTONIC */
	uint32_t	 len;		/* bytes to write, vnet header included */
	uint32_t	 pad;
};

struct stats {
	uint64_t	 rx_pkts, rx_bytes;
	uint64_t	 fwd_pkts, fwd_bytes;
	uint64_t	 drop_queue, drop_loss, drop_ring;
	uint64_t	 err_write;
	uint64_t	 max_backlog;
	uint64_t	 gso_pkts;
};

struct dir {
	const char	*name;
	int		 in, out;
	uint64_t	 rate;		/* bit/s, 0 = unlimited */
	uint64_t	 delay;		/* ns */
	uint64_t	 qlimit;	/* bytes */
	uint64_t	 lossthr;	/* drop if rand() < lossthr; 0 = never */
	double		 losspct;
	uint64_t	 last_dep;	/* ns */
	uint64_t	 rem;		/* serialization remainder, ns * rate */
	unsigned char	*ring;
	uint64_t	 cap;
	uint64_t	 head, tail;	/* free-running byte offsets */
	struct stats	 st;
};

static volatile sig_atomic_t got_term, got_usr1;
static uint64_t	 rng_state = 1;
static int	 offload;
static uint64_t	 slack_ns = 20000;
static const char *stats_path;
static uint64_t	 stats_seq;
static uint64_t	 wakeups;
static uint64_t	 wake_late;		/* ns, moving average */
static uint64_t	 start_ns;
static unsigned char scratch[MAXREAD];

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr,
	    "usage: delayline --a-dev DEV --b-dev DEV [--a-netns NS] "
	    "[--b-netns NS]\n"
	    "\t[--delay-us US[/US]] [--rate BPS[/BPS]] [--queue BYTES[/BYTES]]\n"
	    "\t[--loss PCT[/PCT]] [--seed N] [--slack-us US] [--ring-mb MB]\n"
	    "\t[--offload] [--rt PRIO] [--stats FILE] [--ready FILE]\n"
	    "A value X/Y sets A->B to X and B->A to Y; a single value sets "
	    "both.\nRates take k, M, G suffixes (powers of 1000).\n");
	exit(2);
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC + (uint64_t)ts.tv_nsec;
}

/* splitmix64: tiny, fast, good enough to decide drops. */
static uint64_t
rng_next(void)
{
	uint64_t z;

	z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void
on_signal(int sig)
{
	if (sig == SIGUSR1)
		got_usr1 = 1;
	else
		got_term = 1;
}

/* Parse a number with an optional k/M/G suffix (powers of 1000). */
static double
parse_num(const char *s, const char *what)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || v < 0)
		errx(2, "bad %s: %s", what, s);
	switch (*end) {
	case 'k': case 'K':
		v *= 1e3; end++;
		break;
	case 'm': case 'M':
		v *= 1e6; end++;
		break;
	case 'g': case 'G':
		v *= 1e9; end++;
		break;
	}
	if (*end != '\0')
		errx(2, "bad %s: %s", what, s);
	return v;
}

/* "X" sets both directions, "X/Y" sets A->B and B->A. */
static void
parse_pair(const char *s, const char *what, double v[2])
{
	char buf[128], *slash;

	if (strlen(s) >= sizeof(buf))
		errx(2, "bad %s: %s", what, s);
	strcpy(buf, s);
	if ((slash = strchr(buf, '/')) != NULL)
		*slash++ = '\0';
	v[0] = parse_num(buf, what);
	v[1] = slash != NULL ? parse_num(slash, what) : v[0];
}

static void
ring_alloc(struct dir *d, uint64_t cap)
{
	unsigned char *p;
	long pg = sysconf(_SC_PAGESIZE);
	int fd;

	cap = (cap + (uint64_t)pg - 1) / (uint64_t)pg * (uint64_t)pg;
	if ((fd = memfd_create("delayline", MFD_CLOEXEC)) == -1)
		err(1, "memfd_create");
	if (ftruncate(fd, (off_t)cap) == -1)
		err(1, "ftruncate ring of %" PRIu64 " bytes", cap);
	p = mmap(NULL, 2 * cap, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
	    -1, 0);
	if (p == MAP_FAILED)
		err(1, "mmap ring reservation");
	if (mmap(p, cap, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
	    fd, 0) == MAP_FAILED ||
	    mmap(p + cap, cap, PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED)
		err(1, "mmap ring mirror");
	close(fd);
	d->ring = p;
	d->cap = cap;
}

/*
 * Create TUN device `dev' inside network namespace `netns' (a name under
 * /run/netns, or a path); the fd stays usable from our own namespace.
 */
static int
tun_open(const char *netns, const char *dev)
{
	struct ifreq ifr;
	char path[PATH_MAX];
	int self = -1, nsfd, fd;
	unsigned int off;

	if (strlen(dev) >= IFNAMSIZ)
		errx(2, "device name too long: %s", dev);
	if (netns != NULL) {
		if ((self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC))
		    == -1)
			err(1, "open /proc/self/ns/net");
		if (strchr(netns, '/') != NULL)
			snprintf(path, sizeof(path), "%s", netns);
		else
			snprintf(path, sizeof(path), "/run/netns/%s", netns);
		if ((nsfd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
			err(1, "open %s", path);
		if (setns(nsfd, CLONE_NEWNET) == -1)
			err(1, "setns %s", path);
		close(nsfd);
	}
	if ((fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC)) == -1)
		err(1, "open /dev/net/tun");
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI | (offload ? IFF_VNET_HDR : 0);
	memcpy(ifr.ifr_name, dev, strlen(dev));
	if (ioctl(fd, TUNSETIFF, &ifr) == -1)
		err(1, "TUNSETIFF %s", dev);
	if (offload) {
		off = TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_TSO_ECN;
		if (ioctl(fd, TUNSETOFFLOAD, off) == -1)
			err(1, "TUNSETOFFLOAD %s", dev);
	}
	if (self != -1) {
		if (setns(self, CLONE_NEWNET) == -1)
			err(1, "setns back to own namespace");
		close(self);
	}
	return fd;
}

/*
 * Bytes and packets a read buffer stands for on the wire.  Without
 * offload that is the packet itself.  A GSO super-packet counts each of
 * its segments with its own copy of the IP and TCP headers.
 */
static uint32_t
wire_size(const unsigned char *buf, uint32_t len, uint32_t *segs)
{
	const struct virtio_net_hdr *vh;
	const unsigned char *ip;
	uint32_t l3, hl, plen, gsz;

	*segs = 1;
	if (!offload)
		return len;
	vh = (const struct virtio_net_hdr *)buf;
	len -= VNETSZ;
	if ((vh->gso_type & ~VIRTIO_NET_HDR_GSO_ECN) ==
	    VIRTIO_NET_HDR_GSO_NONE)
		return len;
	gsz = le16toh(vh->gso_size);
	ip = buf + VNETSZ;
	if (gsz == 0 || len < 40)
		return len;
	if ((ip[0] >> 4) == 4)
		l3 = (uint32_t)(ip[0] & 0x0f) * 4;
	else
		l3 = 40;
	if (l3 + 20 > len)
		return len;
	hl = l3 + (uint32_t)(ip[l3 + 12] >> 4) * 4;
	if (hl >= len)
		return len;
	plen = len - hl;
	*segs = (plen + gsz - 1) / gsz;
	return len + (*segs - 1) * hl;
}

/* Bytes waiting in the bottleneck queue at `now' (fluid model). */
static uint64_t
backlog(const struct dir *d, uint64_t now)
{
	if (d->rate == 0 || d->last_dep <= now)
		return 0;
	return (uint64_t)((double)(d->last_dep - now) * (double)d->rate /
	    8e9);
}

static int
lost(const struct dir *d, uint32_t segs)
{
	uint32_t i;

	if (d->lossthr == 0)
		return 0;
	for (i = 0; i < segs; i++)
		if (rng_next() < d->lossthr)
			return 1;
	return 0;
}

/*
 * Run one packet through loss, queue and rate.  Returns its due time,
 * or 0 if it was dropped.
 */
static uint64_t
admit(struct dir *d, const unsigned char *buf, uint32_t len, uint64_t now)
{
	uint64_t q, num, dep;
	uint32_t wire, segs;

	wire = wire_size(buf, len, &segs);
	d->st.rx_pkts += segs;
	d->st.rx_bytes += wire;
	if (segs > 1)
		d->st.gso_pkts++;
	if (lost(d, segs)) {
		d->st.drop_loss += segs;
		return 0;
	}
	if (d->rate == 0)
		return now + d->delay;
	q = backlog(d, now);
	if (q + wire > d->qlimit) {
		d->st.drop_queue += segs;
		return 0;
	}
	if (q + wire > d->st.max_backlog)
		d->st.max_backlog = q + wire;
	num = (uint64_t)wire * 8 * NSEC + d->rem;
	dep = (d->last_dep > now ? d->last_dep : now) + num / d->rate;
	d->rem = num % d->rate;
	d->last_dep = dep;
	return dep + d->delay;
}

/* Read up to BATCH packets from d->in into the ring. */
static void
dir_input(struct dir *d)
{
	struct rec *r;
	unsigned char *buf;
	uint64_t due;
	ssize_t n;
	int i, inring;

	for (i = 0; i < BATCH; i++) {
		inring = d->cap - (d->tail - d->head) >= RECHDR + MAXREAD;
		r = (struct rec *)(d->ring + d->tail % d->cap);
		buf = inring ? (unsigned char *)(r + 1) : scratch;
		n = read(d->in, buf, MAXREAD);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return;
			err(1, "read %s", d->name);
		}
		if (n == 0 || (offload && n < VNETSZ))
			continue;
		if (!inring) {
			d->st.rx_pkts++;
			d->st.rx_bytes += (uint64_t)n;
			d->st.drop_ring++;
			continue;
		}
		if ((due = admit(d, buf, (uint32_t)n, now_ns())) == 0)
			continue;
		r->due = due;
		r->len = (uint32_t)n;
		d->tail += (RECHDR + (uint64_t)n + RECALIGN - 1) &
		    ~(uint64_t)(RECALIGN - 1);
	}
}

/*
 * Write out every packet due by `now'.  Callers pass the current time plus
 * the slack, so one wake-up also delivers the packets due just after it.
 */
static void
dir_output(struct dir *d, uint64_t now)
{
	struct rec *r;
	uint32_t wire, segs;

	while (d->head != d->tail) {
		r = (struct rec *)(d->ring + d->head % d->cap);
		if (r->due > now)
			break;
		if (write(d->out, r + 1, r->len) == -1) {
			d->st.err_write++;
		} else {
			wire = wire_size((unsigned char *)(r + 1), r->len,
			    &segs);
			d->st.fwd_pkts += segs;
			d->st.fwd_bytes += wire;
		}
		d->head += (RECHDR + (uint64_t)r->len + RECALIGN - 1) &
		    ~(uint64_t)(RECALIGN - 1);
	}
}

static void
stats_print(FILE *f, const struct dir *d, int nd)
{
	const struct stats *s;
	int i;

	fprintf(f, "seq=%" PRIu64 " uptime_ms=%" PRIu64 " offload=%d"
	    " wakeups=%" PRIu64 " wake_late_us=%" PRIu64 "\n", stats_seq,
	    (now_ns() - start_ns) / 1000000, offload, wakeups,
	    wake_late / 1000);
	for (i = 0; i < nd; i++) {
		s = &d[i].st;
		fprintf(f, "dir=%s rx_pkts=%" PRIu64 " rx_bytes=%" PRIu64
		    " fwd_pkts=%" PRIu64 " fwd_bytes=%" PRIu64
		    " drop_queue=%" PRIu64 " drop_loss=%" PRIu64
		    " drop_ring=%" PRIu64 " err_write=%" PRIu64
		    " max_backlog=%" PRIu64 " gso_pkts=%" PRIu64
		    " queued_bytes=%" PRIu64 "\n",
		    d[i].name, s->rx_pkts, s->rx_bytes, s->fwd_pkts,
		    s->fwd_bytes, s->drop_queue, s->drop_loss, s->drop_ring,
		    s->err_write, s->max_backlog, s->gso_pkts,
		    d[i].tail - d[i].head);
	}
}

static void
stats_report(const struct dir *d, int nd, int tostderr)
{
	char tmp[PATH_MAX];
	FILE *f;

	stats_seq++;
	if (tostderr)
		stats_print(stderr, d, nd);
	if (stats_path == NULL)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", stats_path);
	if ((f = fopen(tmp, "w")) == NULL) {
		warn("%s", tmp);
		return;
	}
	stats_print(f, d, nd);
	if (fclose(f) != 0 || rename(tmp, stats_path) == -1)
		warn("write %s", stats_path);
}

static void
touch(const char *path)
{
	FILE *f;

	if ((f = fopen(path, "w")) == NULL)
		err(1, "%s", path);
	fprintf(f, "%ld\n", (long)getpid());
	if (fclose(f) != 0)
		err(1, "%s", path);
}

/*
 * Run SCHED_FIFO so that a busy machine does not add scheduling delay to
 * the path.  We never spin, and the kernel's RT throttling bounds us.
 */
static void
set_rt(int prio)
{
	struct sched_param sp;

	memset(&sp, 0, sizeof(sp));
	sp.sched_priority = prio;
	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp) == -1)
		warn("SCHED_FIFO %d (continuing without)", prio);
}

static void
setup_signals(sigset_t *orig)
{
	struct sigaction sa;
	sigset_t block;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &block, orig) == -1)
		err(1, "sigprocmask");
	sigdelset(orig, SIGTERM);
	sigdelset(orig, SIGINT);
	sigdelset(orig, SIGHUP);
	sigdelset(orig, SIGUSR1);
	if (sigaction(SIGTERM, &sa, NULL) == -1 ||
	    sigaction(SIGINT, &sa, NULL) == -1 ||
	    sigaction(SIGHUP, &sa, NULL) == -1 ||
	    sigaction(SIGUSR1, &sa, NULL) == -1)
		err(1, "sigaction");
	signal(SIGPIPE, SIG_IGN);
}

/* Due time of the first packet of any direction, or UINT64_MAX. */
static uint64_t
next_due(const struct dir *d, int nd)
{
	const struct rec *r;
	uint64_t next = UINT64_MAX;
	int i;

	for (i = 0; i < nd; i++) {
		if (d[i].head == d[i].tail)
			continue;
		r = (const struct rec *)(d[i].ring + d[i].head % d[i].cap);
		if (r->due < next)
			next = r->due;
	}
	return next;
}

/*
 * Timer wake-ups come late by some tens of microseconds.  Keep a moving
 * average of that lateness and wake that much early (never more than the
 * slack, which the delivery window covers), so the first packet of a
 * wake-up leaves close to its due time.
 */
static uint64_t
wake_time(uint64_t due)
{
	uint64_t adv;

	adv = wake_late < slack_ns ? wake_late : slack_ns;
	return due > adv ? due - adv : 0;
}

static void
wake_learn(uint64_t wake, uint64_t now)
{
	uint64_t late;

	late = now > wake ? now - wake : 0;
	if (late > 1000000)
		late = 1000000;
	wake_late = (wake_late * 7 + late) / 8;
}

static void
run(struct dir *d, const sigset_t *mask)
{
	struct pollfd pfd[2];
	struct timespec ts, *tp;
	uint64_t now, due, wake = 0;
	int i, n;

	pfd[0].fd = d[0].in;
	pfd[1].fd = d[1].in;
	pfd[0].events = pfd[1].events = POLLIN;
	while (!got_term) {
		dir_output(&d[0], now_ns() + slack_ns);
		dir_output(&d[1], now_ns() + slack_ns);
		if (got_usr1) {
			got_usr1 = 0;
			stats_report(d, 2, 1);
		}
		tp = NULL;
		if ((due = next_due(d, 2)) != UINT64_MAX) {
			wake = wake_time(due);
			now = now_ns();
			wake = wake > now ? wake - now : 0;
			ts.tv_sec = (time_t)(wake / NSEC);
			ts.tv_nsec = (long)(wake % NSEC);
			wake += now;
			tp = &ts;
		}
		n = ppoll(pfd, 2, tp, mask);
		wakeups++;
		if (n == 0 && tp != NULL)
			wake_learn(wake, now_ns());
		if (n == -1) {
			if (errno == EINTR)
				continue;
			err(1, "ppoll");
		}
		for (i = 0; i < 2; i++) {
			if (pfd[i].revents & (POLLERR | POLLNVAL))
				errx(1, "%s: device error", d[i].name);
			if (pfd[i].revents & POLLIN)
				dir_input(&d[i]);
		}
	}
}

static void
dir_init(struct dir *d, const char *name, int in, int out, double delay_us,
    double rate, double queue, double loss, uint64_t ringsz)
{
	uint64_t bdp;

	memset(d, 0, sizeof(*d));
	d->name = name;
	d->in = in;
	d->out = out;
	d->delay = (uint64_t)(delay_us * 1000.0);
	d->rate = (uint64_t)rate;
	d->qlimit = (uint64_t)queue;
	d->losspct = loss;
	if (loss >= 100.0)
		d->lossthr = UINT64_MAX;
	else
		d->lossthr = (uint64_t)(loss / 100.0 * 18446744073709551616.0);
	if (ringsz == 0) {
		/* Room for what is in flight plus the queue, twice over to
		 * cover record headers of small packets. */
		bdp = (uint64_t)(rate / 8.0 * delay_us / 1e6);
		ringsz = 2 * (bdp + d->qlimit) + MIN_RING;
		if (d->rate == 0)
			ringsz = 64ULL << 20;
		if (ringsz > MAX_RING)
			ringsz = MAX_RING;
	}
	ring_alloc(d, ringsz);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "a-dev",	required_argument, NULL, 'a' },
		{ "b-dev",	required_argument, NULL, 'b' },
		{ "a-netns",	required_argument, NULL, 'A' },
		{ "b-netns",	required_argument, NULL, 'B' },
		{ "delay-us",	required_argument, NULL, 'd' },
		{ "rate",	required_argument, NULL, 'r' },
		{ "queue",	required_argument, NULL, 'q' },
		{ "loss",	required_argument, NULL, 'l' },
		{ "seed",	required_argument, NULL, 's' },
		{ "slack-us",	required_argument, NULL, 'S' },
		{ "ring-mb",	required_argument, NULL, 'R' },
		{ "offload",	no_argument,	   NULL, 'o' },
		{ "stats",	required_argument, NULL, 'f' },
		{ "ready",	required_argument, NULL, 'y' },
		{ "rt",		required_argument, NULL, 'P' },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL,		0,		   NULL, 0 }
	};
	struct dir d[2];
	sigset_t mask;
	const char *adev = NULL, *bdev = NULL, *ans = NULL, *bns = NULL;
	const char *ready = NULL;
	double delay[2] = { 0, 0 }, rate[2] = { 0, 0 };
	double queue[2] = { 1e6, 1e6 }, loss[2] = { 0, 0 };
	uint64_t ringsz = 0;
	int ch, fa, fb, i, rtprio = 0;

	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'a': adev = optarg; break;
		case 'b': bdev = optarg; break;
		case 'A': ans = optarg; break;
		case 'B': bns = optarg; break;
		case 'd': parse_pair(optarg, "delay", delay); break;
		case 'r': parse_pair(optarg, "rate", rate); break;
		case 'q': parse_pair(optarg, "queue", queue); break;
		case 'l': parse_pair(optarg, "loss", loss); break;
		case 's':
			rng_state = (uint64_t)strtoull(optarg, NULL, 0);
			break;
		case 'S':
			slack_ns = (uint64_t)(parse_num(optarg, "slack") *
			    1000.0);
			break;
		case 'R':
			ringsz = (uint64_t)(parse_num(optarg, "ring") *
			    1048576.0);
			break;
		case 'o': offload = 1; break;
		case 'f': stats_path = optarg; break;
		case 'y': ready = optarg; break;
		case 'P':
			rtprio = (int)parse_num(optarg, "rt priority");
			break;
		default: usage();
		}
	}
	if (optind != argc || adev == NULL || bdev == NULL)
		usage();
	for (i = 0; i < 2; i++)
		if (loss[i] > 100.0)
			errx(2, "loss above 100%%");

	fa = tun_open(ans, adev);
	fb = tun_open(bns, bdev);
	dir_init(&d[0], "a2b", fa, fb, delay[0], rate[0], queue[0], loss[0],
	    ringsz);
	dir_init(&d[1], "b2a", fb, fa, delay[1], rate[1], queue[1], loss[1],
	    ringsz);
	/* We coalesce wake-ups ourselves; ask the kernel for no slack. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (rtprio > 0)
		set_rt(rtprio);
	setup_signals(&mask);
	start_ns = now_ns();
	if (ready != NULL)
		touch(ready);
	run(d, &mask);
	stats_report(d, 2, 1);
	return 0;
}
