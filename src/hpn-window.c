/*
 * HPN patch set: dynamic receive windows.
 *
 * Stock OpenSSH advertises at most 2 MiB of channel window, so a channel
 * moves at most 2 MiB per round trip whatever the path.  Here the window of
 * each bulk channel (sessions, forwards, multiplexed sessions) grows, never
 * shrinks, up to a cap:
 *
 *  - Over a TCP socket, with the socket's receive buffer (SO_RCVBUF), read
 *    whenever a window adjust is about to be sent, so the window follows
 *    the kernel's receive-buffer autotuning as it grows with the path's
 *    bandwidth-delay product (TcpRcvBufPoll no: read once; TcpRcvBuf: a
 *    fixed buffer asked of the kernel at connection set-up).  While no
 *    queue builds on the path (the data's round trip stays near the
 *    lowest, TCP_INFO) and the reader keeps up, the window is the buffer
 *    itself: the kernel grows it from what the reader takes each round
 *    trip, as fast as TCP's own window grows, so on a path of seconds
 *    (the bandwidth-delay product of 10 Gbit/s x 100 ms) the window
 *    never trails TCP's slow start; but not past twice the highest
 *    rate of a 100 ms span x the round trip (window_ramp()), which keeps
 *    up with slow start and stops at the product plus a queue of as much
 *    once the wire is full.  Otherwise, as a window's worth of
 *    data sits in memory whenever the consumer lags, the window is held
 *    to twice the rate the channel took data at over the last round trip
 *    times that round trip: while the window limits the transfer this
 *    doubles it every second round trip, and it settles near twice the
 *    bandwidth-delay product.  Once the rate stops growing (three round
 *    trips without growing a quarter, as BBR judges its pipe full, or a
 *    queue on the path: the data's round trip past 1.1 x the lowest), a
 *    window is held to 1.5 x the highest rate x the lowest round trip
 *    (window_hold()), shrinking to it by giving back less than was
 *    consumed: past the bandwidth-delay product a window adds no rate,
 *    only data in the bottleneck's queue (on 1 Gbit/s x 1 s with a queue
 *    of one product, windows that followed the buffer let BBR's start-up
 *    put 3 to 4 products in flight: 12,891 packets dropped at once, and
 *    seconds of stall, several times a transfer).  A transfer that fills
 *    a held window grows it again.  Otherwise a window never shrinks.
 *
 *  - Behind a relay (a jump host that the peer reaches us through, a TCP
 *    proxy or load balancer) our socket is a short hop: its buffer and RTT
 *    say nothing of the path.  When the peer answers PING (it says so, or
 *    it is an HPN peer of OpenSSH 9.5 or later), the lowest PING round
 *    trip is also measured; when it is more
 *    than twice the socket's, the window grows as over a pipe (below) from
 *    that end-to-end round trip, without the socket buffer's bound.
 *
 *  - Over Multipath TCP (UseMPTCP) TCP_INFO describes one subflow, and
 *    the connection's own buffer grows more slowly than its subflows'
 *    need: the window grows as over a pipe (below), from the PING round
 *    trip (its PONG waits, like the data, for the slowest subflow), once
 *    one is known, with no buffer bound.  The lowest of the last one or
 *    two periods of at least HPN_RTT_PERIOD (and 8 round trips) is used,
 *    so that the queue a larger window builds in the sender's buffer does
 *    not feed back into the window, times HPN_MPTCP_RTT_FACTOR: one
 *    subflow's data waits at the receiver behind the other's retries and
 *    bursts (over 2 x 500 Mbit/s, 50 ms: 1, 2, 4 and 8 gave 80-84,
 *    92-93, 104-105 and 102 MB/s of the 120 both paths carry).
 *
 *  - Over anything else (ProxyCommand, ProxyJump: a pipe), there is no
 *    receive buffer to read.  The window then grows from measurement: the
 *    round-trip time of a ping@openssh.com PING (its PONG returns behind
 *    the peer's data, so the time includes what waits in the peer's send
 *    buffer) times the rate at which the channel took data over that time,
 *    doubled for headroom.  A window that limits the transfer
 *    gives rate x RTT = window, so the target doubles each round trip
 *    until the window no longer limits (like TCP's slow start); a slow
 *    consumer gives a low rate and no growth.  Peers without ping (OpenSSH
 *    before 9.5) get doubling while the consumer keeps up.
 *
 *  - The cap is HPNBufferSize (1 GiB by default: the path decides), and
 *    below 16 MiB towards a non-HPN OpenSSH 8.4 or later: such a sender
 *    stops reading its input at 16 MiB (CHAN_INPUT_MAX), and larger
 *    windows were seen to make it collapse.  Past sshbuf's 128 MiB, the
 *    channel's data buffers are allowed the window (window_buffers()).
 *
 * Growth is sent as part of the next window adjust.  Windows of the stock
 * session size (HPN_WINDOW_GROW_MIN) and more are adjusted per 1/8 of the
 * window rather than every three packets: fewer packets, same throughput.
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "misc.h"
#include "sshbuf.h"
#include "ssherr.h"
#include "ssh2.h"
#include "packet.h"
#include "kex.h"
#include "channels.h"
#include "hpn.h"
#include "hpn-metrics.h"

/* What the configuration said, and what was learnt of the connection. */
static struct {
	int	configured;
	int	disabled;
	int	rcvbuf_poll;
	u_int	rcvbuf_asked;	/* TcpRcvBuf, bytes; 0: the kernel's */
	u_int	max_window;	/* HPNBufferSize, bytes */
	int	fd;		/* connection socket, -1 when not one */
	int	mptcp;		/* ... a Multipath TCP one */
	int	in_fd;		/* what we read the connection from */
	int	rcvbuf_read;	/* read once (TcpRcvBufPoll no) */
	u_int	rcvbuf;		/* last SO_RCVBUF reading */
	double	rtt_min;	/* lowest smoothed TCP RTT seen, seconds */
	double	rcv_rtt;	/* the receiver's RTT now (with queueing) */
	u_int	ooo;		/* out-of-order packets received so far */
	double	ooo_at;		/* when that count last grew */
	double	sampled;	/* when the socket was last read */
	u_int	cap;		/* max_window, or less for this peer */
	int	cap_known;
	/* RTT measurement over non-socket transports */
	int	ping_ok;
	int	ping_outstanding;
	u_int	ping_seq;
	double	ping_sent;
	double	rtt;		/* seconds, smoothed; 0: none yet */
	double	ping_rtt_min;	/* lowest PING round trip, seconds */
	/* the lowest PING round trip of this period and of the last one */
	double	rtt_recent, rtt_prev, rtt_since;
	/* the path's rate: its highest, whether it still grows (hold) */
	double	bw_peak;	/* highest rate measured, bytes/s */
	double	bw_mark;	/* the rate at its last growth of a quarter */
	int	bw_flat;	/* measures since then */
	int	bw_filled;	/* held: measures in a row that filled it */
	int	full;		/* the rate stopped growing: windows held */
	/* the connection's arrival rate over short spans (window_ramp()) */
	double	span_since;	/* when this span began */
	u_int64_t span_rx;	/* bytes arrived by then */
	double	span_peak;	/* highest rate of a span, bytes/s */
	u_int	chan_peak[64]; /* channels' largest windows (peak_note()) */
} hpn = { .rcvbuf_poll = 1, .max_window = HPN_WINDOW_MAX_DEFAULT, .fd = -1,
    .in_fd = -1 };

/* What the metrics show (hpn-metrics.c). */
static struct hpn_winstats stats;

/*
 * Each channel's largest window, by its number, for its summary
 * (hpn.chan_peak; channels past its size report the window at close): a
 * held window shrinks (window_hold()), so the window at close is not the
 * largest it was.
 */
#define NPEAK	(sizeof(hpn.chan_peak) / sizeof(hpn.chan_peak[0]))

static u_int *
peak_slot(Channel *c)
{
	return c->self >= 0 && (size_t)c->self < NPEAK ?
	    &hpn.chan_peak[c->self] : NULL;
}

static void
peak_note(Channel *c)
{
	u_int *p = peak_slot(c);

	if (p != NULL && c->local_window_max > *p)
		*p = c->local_window_max;
}

static u_int
peak_of(Channel *c)
{
	u_int *p = peak_slot(c);

	return p == NULL ? c->local_window_max :
	    MAXIMUM(*p, c->local_window_max);
}

void
hpn_window_stats(struct hpn_winstats *w)
{
	*w = stats;
}

void
hpn_window_setup(struct ssh *ssh, int disabled, int rcvbuf_poll,
    u_int rcvbuf, u_int max_window)
{
	int fd, v;
	socklen_t len;
	struct stat st;

	hpn.configured = 1;
	hpn.disabled = disabled;
	hpn.rcvbuf_poll = rcvbuf_poll;
	hpn.rcvbuf_asked = rcvbuf;
	hpn.max_window = max_window;
	hpn.fd = -1;
	if (disabled) {
		debug_f("HPN disabled: stock window sizes");
		return;
	}
	if (max_window < HPN_WINDOW_GROW_MIN)
		logit("HPNBufferSize %uK is below the stock window (%uK): "
		    "channel windows stay at the stock size", max_window / 1024,
		    HPN_WINDOW_GROW_MIN / 1024);
	fd = hpn.in_fd = ssh_packet_get_connection_in(ssh);
	len = sizeof(v);
	if (fd < 0 || fstat(fd, &st) == -1 || !S_ISSOCK(st.st_mode) ||
	    getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, &len) == -1) {
		debug_f("transport is not a socket: window grows by "
		    "measured rate x RTT");
		return;
	}
	hpn.fd = fd;
	if (rcvbuf != 0) {
		v = (int)MINIMUM(rcvbuf, INT_MAX / 2);
		if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)) == -1)
			error_f("setsockopt SO_RCVBUF %d: %s", v,
			    strerror(errno));
		len = sizeof(v);
		if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, &len) == 0)
			debug_f("TcpRcvBuf %u: the kernel gave %d", rcvbuf, v);
		/* A fixed buffer: nothing to follow. */
		hpn.rcvbuf_poll = 0;
	}
	if ((hpn.mptcp = hpn_mptcp_active(fd)) == 1) {
		debug_f("Multipath TCP: window grows by measured rate x "
		    "RTT, up to %u", max_window);
		return;
	}
	debug_f("window follows SO_RCVBUF (%d now)%s, up to %u", v,
	    hpn.rcvbuf_poll ? ", polled" : "", max_window);
}

/*
 * The peer's OpenSSH version as major * 10 + minor (e.g. 84), or -1 when
 * the peer is not OpenSSH.
 */
static int
peer_openssh_version(struct ssh *ssh)
{
	static const char tag[] = "SSH-2.0-OpenSSH_";
	const struct sshbuf *b;
	const char *p, *end;
	int major = 0, minor = 0;

	if (ssh->kex == NULL)
		return -1;
	b = ssh->kex->server ? ssh->kex->client_version :
	    ssh->kex->server_version;
	p = (const char *)sshbuf_ptr(b);
	end = p + sshbuf_len(b);
	/* "SSH-2.0-OpenSSH_9.2p1", "SSH-2.0-OpenSSH_for_Windows_8.6" */
	if (sshbuf_len(b) < sizeof(tag) ||
	    strncmp(p, tag, sizeof(tag) - 1) != 0)
		return -1;
	for (p += sizeof(tag) - 1; p < end && (*p < '0' || *p > '9'); p++)
		if (*p == ' ' || *p == '\r' || *p == '\n')
			return -1;
	for (; p < end && *p >= '0' && *p <= '9' && major < 1000; p++)
		major = major * 10 + (*p - '0');
	if (p < end && *p == '.' && p + 1 < end && p[1] >= '0' && p[1] <= '9')
		minor = p[1] - '0';
	return major * 10 + minor;
}

/* The largest window we advertise on this connection. */
static u_int
window_cap(struct ssh *ssh)
{
	int v;

	if (hpn.cap_known)
		return hpn.cap;
	hpn.cap = hpn.max_window;
	if (ssh->kex != NULL && sshbuf_len(ssh->kex->server_version) > 0 &&
	    sshbuf_len(ssh->kex->client_version) > 0) {
		hpn.cap_known = 1;
		/*
		 * Evidence: the banner (there before the first KEXINIT).  A
		 * sender of ours holds at most HPN_INPUT_STAGE unsent; HPN-SSH
		 * does not cap windows toward peers with "hpn" in their
		 * banner, nor do we.  A stock banner with "hpn" in its
		 * comment is taken for HPN, as HPN-SSH takes it.
		 */
		v = peer_openssh_version(ssh);
		if (v >= 84 && hpn.cap > HPN_STOCK_PEER_WINDOW_MAX &&
		    !hpn_peer_is_hpn(ssh)) {
			hpn.cap = HPN_STOCK_PEER_WINDOW_MAX;
			debug_f("peer is OpenSSH %d.%d without HPN: windows "
			    "capped at %u", v / 10, v % 10, hpn.cap);
		} else if (v >= 84 && hpn.cap > HPN_STOCK_PEER_WINDOW_MAX) {
			debug_f("peer is OpenSSH %d.%d with HPN (its banner): "
			    "windows not capped", v / 10, v % 10);
		}
		/*
		 * OpenSSH answers PING since 9.5, whether or not it says
		 * so (a client's EXT_INFO never does); unasked, only HPN
		 * peers (by the banner: ours and HPN-SSH, both OpenSSH) of
		 * a plausible version are pinged.
		 */
		hpn.ping_ok = (ssh->kex->flags & KEX_HAS_PING) != 0 ||
		    (hpn_peer_is_hpn(ssh) && v >= 95 && v < 1000);
	}
	return hpn.cap;
}

/* Send a PING to time a round trip (non-socket transports only). */
static void
ping_send(struct ssh *ssh)
{
	char tag[32];
	int r;

	if (!hpn.ping_ok || ssh_packet_is_rekeying(ssh))
		return;
	/*
	 * A PING that reaches the peer during its key exchange is dropped:
	 * send another once this one is overdue.
	 */
	if (hpn.ping_outstanding && monotime_double() - hpn.ping_sent <
	    MAXIMUM(HPN_PING_RETRY, 4 * hpn.rtt))
		return;
	/*
	 * One round trip at a time, and not more often than HPN_PING_GAP:
	 * on a short path a PING per window adjust costs each end a packet,
	 * a read and a wake-up per adjust, for round trips that barely
	 * change.  Paths longer than that are timed on every round trip,
	 * as before.
	 */
	if (!hpn.ping_outstanding && hpn.ping_sent > 0 &&
	    monotime_double() - hpn.ping_sent < HPN_PING_GAP)
		return;
	if (hpn.ping_outstanding)
		debug3_f("no PONG for %u: another PING", hpn.ping_seq);
	snprintf(tag, sizeof(tag), "hpn-rtt-%u", ++hpn.ping_seq);
	if ((r = sshpkt_start(ssh, SSH2_MSG_PING)) != 0 ||
	    (r = sshpkt_put_cstring(ssh, tag)) != 0 ||
	    (r = sshpkt_send(ssh)) != 0)
		fatal_fr(r, "send ping");
	hpn.ping_sent = monotime_double();
	hpn.ping_outstanding = 1;
}

void
hpn_window_pong(struct ssh *ssh, const u_char *d, size_t len)
{
	char tag[32];
	double rtt;

	snprintf(tag, sizeof(tag), "hpn-rtt-%u", hpn.ping_seq);
	if (!hpn.ping_outstanding || len != strlen(tag) ||
	    memcmp(d, tag, len) != 0)
		return;
	hpn.ping_outstanding = 0;
	rtt = monotime_double() - hpn.ping_sent;
	hpn.rtt = hpn.rtt == 0 ? rtt : 0.75 * hpn.rtt + 0.25 * rtt;
	if (hpn.ping_rtt_min == 0 || rtt < hpn.ping_rtt_min)
		hpn.ping_rtt_min = rtt;
	if (hpn.rtt_recent == 0 || hpn.ping_sent - hpn.rtt_since >
	    MAXIMUM(HPN_RTT_PERIOD, 8 * hpn.rtt_recent)) {
		hpn.rtt_prev = hpn.rtt_recent;
		hpn.rtt_recent = rtt;
		hpn.rtt_since = hpn.ping_sent;
	} else if (rtt < hpn.rtt_recent)
		hpn.rtt_recent = rtt;
	debug3_f("rtt %.1f ms (smoothed %.1f ms)", rtt * 1e3, hpn.rtt * 1e3);
}

/*
 * The connection's round-trip time in seconds from TCP_INFO, or 0: the
 * lowest smoothed RTT seen, i.e. without the queueing a full transfer
 * adds (that queueing also fills with the window it would size).  Also
 * notes the receiver's own RTT estimate now (the data's round trip, with
 * the queue it meets) and when out-of-order packets last arrived.
 */
static double
tcp_rtt(void)
{
#if defined(__linux__) && defined(TCP_INFO)
	struct hpn_tcpi ti;
	socklen_t len = sizeof(ti);
	double rtt;

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(hpn.fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0)
		return hpn.rtt_min;
	if (len >= offsetof(struct hpn_tcpi, rtt) + sizeof(ti.rtt) &&
	    ti.rtt > 0) {
		rtt = ti.rtt / 1e6;
		if (hpn.rtt_min == 0 || rtt < hpn.rtt_min)
			hpn.rtt_min = rtt;
	}
	if (len >= offsetof(struct hpn_tcpi, rcv_rtt) + sizeof(ti.rcv_rtt))
		hpn.rcv_rtt = ti.rcv_rtt / 1e6;
	if (len >= offsetof(struct hpn_tcpi, rcv_ooopack) +
	    sizeof(ti.rcv_ooopack) && ti.rcv_ooopack != hpn.ooo) {
		hpn.ooo = ti.rcv_ooopack;
		hpn.ooo_at = monotime_double();
	}
#endif
	return hpn.rtt_min;
}

/* What waits unread in the kernel on the connection (FIONREAD). */
static u_int
unread(void)
{
	int n = 0;

	if (hpn.in_fd == -1 || ioctl(hpn.in_fd, FIONREAD, &n) == -1 || n < 0)
		return 0;
	return (u_int)n;
}

/*
 * Bytes that arrived for this channel: what it received, plus what waits
 * unread in the kernel, so that the count follows the wire, not when this
 * process happened to be scheduled.  Other channels' data in the kernel's
 * queue counts too; a bulk transfer dominates it.
 */
static u_int64_t
arrived(Channel *c)
{
	return c->hpn_rx + unread();
}

/*
 * Behind a relay: the PING round trip (end to end) is more than twice our
 * socket's lowest RTT, rtt (see window_target()).
 */
static int
behind_relay(double rtt)
{
	return hpn.ping_ok &&
	    hpn.ping_rtt_min > 2 * rtt + HPN_RELAY_RTT_SLACK;
}

/* What a window may grow from without the budget: the stock size, or its
 * start where that was larger (hpn-budget.c). */
static u_int
window_base(Channel *c)
{
	return MAXIMUM(c->hpn_window_start, HPN_WINDOW_GROW_MIN);
}

static u_int window_hold(void);

/*
 * A rate measured over a round trip (rate_target()): is the path's rate
 * still growing?  As BBR judges its pipe full: once HPN_HOLD_FLAT
 * measures in a row have not grown a quarter past the last that did, the
 * rate is the path's (hpn.full) and windows are held near its
 * bandwidth-delay product (window_hold()).  A transfer that keeps filling
 * a held window (the rate x RTT near the window: the window, not the
 * path, limits it) may have more path: growth resumes.
 */
static void
bw_measured(Channel *c, double rate, double rtt)
{
	/*
	 * Held: only a transfer that keeps filling the held window, measure
	 * after measure, has more path.  One measure is not enough: once a
	 * loss's hole is filled the kernel hands over at once what it held,
	 * a rate the path never had (162 MB/s measured on 1 Gbit/s), and
	 * the peak is not raised by it either.
	 */
	if (hpn.full) {
		if (rate * rtt < HPN_HOLD_FILLED * c->local_window_max) {
			hpn.bw_filled = 0;
			return;
		}
		if (++hpn.bw_filled < HPN_HOLD_FLAT)
			return;
		debug_f("channel %d: rate %.1f MB/s fills the held window %u: "
		    "windows grow again", c->self, rate / 1e6,
		    c->local_window_max);
		hpn.full = 0;
		hpn.bw_flat = hpn.bw_filled = 0;
		hpn.bw_mark = rate;
		return;
	}
	if (rate > hpn.bw_peak)
		hpn.bw_peak = rate;
	if (rate >= hpn.bw_mark * 1.25) {
		hpn.bw_mark = rate;
		hpn.bw_flat = 0;
		return;
	}
	/*
	 * Not a quarter up: full after HPN_HOLD_FLAT such measures, or at
	 * once when a queue builds on the path (the data's round trip past
	 * HPN_HOLD_QUEUE x the lowest): more in flight only lengthens it.
	 */
	if (++hpn.bw_flat >= HPN_HOLD_FLAT ||
	    hpn.rcv_rtt > HPN_HOLD_QUEUE * hpn.rtt_min) {
		hpn.full = 1;
		hpn.bw_filled = 0;
		debug_f("rate stopped growing at %.1f MB/s (peak %.1f, data "
		    "rtt %.0f ms): windows held to %u bytes (%.2g x peak x "
		    "RTT %.0f ms)", rate / 1e6, hpn.bw_peak / 1e6,
		    hpn.rcv_rtt * 1e3, window_hold(), HPN_HOLD_FACTOR,
		    hpn.rtt_min * 1e3);
	}
}

/*
 * The window a held path allows (0: none, windows are not held): once
 * the rate has stopped growing (bw_measured()), HPN_HOLD_FACTOR x the
 * highest rate x the lowest round trip, not below HPN_HOLD_MIN (64 MiB:
 * held to 16 MiB, 1 Gbit/s x 50 ms moved 110 MB/s where it had moved 120
 * with the windows it grew; the hold is for the windows of hundreds of
 * MB that long paths grow).  A window is the data in flight, and a
 * window past the path's
 * bandwidth-delay product only lets the sender's congestion control fill
 * the bottleneck's queue: on 1 Gbit/s x 1 s with a queue of one
 * bandwidth-delay product, windows that followed the receive buffer
 * (5 x the product) let BBR's start-up put 3 to 4 products in flight,
 * and the queue dropped 12,891 packets at once, a stall of seconds, more
 * than once a transfer.  Over a socket of a path past HPN_RAMP_RTT_MIN
 * only (TCP_INFO's lowest RTT; not Multipath TCP, nor a relay's end).
 */
static u_int
window_hold(void)
{
	double w;

	if (!hpn.full || hpn.fd == -1 || hpn.mptcp ||
	    hpn.rtt_min < HPN_RAMP_RTT_MIN || hpn.bw_peak <= 0 ||
	    behind_relay(hpn.rtt_min))
		return 0;
	w = HPN_HOLD_FACTOR * hpn.bw_peak * hpn.rtt_min;
	if (w < HPN_HOLD_MIN)
		w = HPN_HOLD_MIN;
	return w > UINT_MAX ? UINT_MAX : (u_int)w;
}

/*
 * The connection's arrival rate over spans of HPN_RAMP_SPAN (the packets
 * read, plus what waits unread in the kernel), and the highest such rate
 * (hpn.span_peak) for window_ramp().  A span is short against a long
 * path's round trip, so the peak is the wire's rate now, not the average
 * of a round trip of slow start.  A span within HPN_OOO_SPAN round trips
 * of out-of-order packets is not counted: once a loss's hole is filled
 * the kernel hands over at once what it held, a rate the path never had.
 */
static void
span_measure(struct ssh *ssh, double t)
{
	u_int64_t in;
	double dt;

	ssh_packet_get_bytes(ssh, &in, NULL);
	in += unread();
	if (hpn.span_since == 0 || in < hpn.span_rx) {
		hpn.span_since = t;
		hpn.span_rx = in;
		return;
	}
	if ((dt = t - hpn.span_since) < HPN_RAMP_SPAN)
		return;
	if (hpn.ooo_at == 0 || t - hpn.ooo_at > HPN_OOO_SPAN * hpn.rtt_min)
		hpn.span_peak = MAXIMUM(hpn.span_peak, (in - hpn.span_rx) / dt);
	hpn.span_since = t;
	hpn.span_rx = in;
}

/*
 * The most a window that follows the receive buffer may be before the
 * path is known full (the ramp): HPN_RAMP_FACTOR x the highest rate of a
 * span x the round trip, not below HPN_HOLD_MIN.  The window a sender
 * in slow start needs is what it sent over the last round trip; the rate
 * the receiver sees now was sent half a round trip ago, and its window
 * reaches the sender half a round trip later, when the sender's rate has
 * doubled: ~1.44 x that rate x RTT, so twice it never trails slow start.
 * Once the wire is full, twice its rate x RTT is the product and a queue
 * of as much: the window no longer follows a receive buffer that Linux
 * tunes to several products (800 MB on 1 Gbit/s x 1 s, where BBR's
 * start-up then put 3-4 products in flight and the queue dropped 12,872
 * packets at once, before the hold below knew the rate had stopped).
 */
static u_int
window_ramp(double rtt)
{
	double w = HPN_RAMP_FACTOR * hpn.span_peak * rtt;

	if (w < HPN_HOLD_MIN)
		w = HPN_HOLD_MIN;
	return w > UINT_MAX ? UINT_MAX : (u_int)w;
}

/*
 * HPN_WINDOW_RTT_FACTOR x the rate at which data arrived and was consumed
 * over the last round trip x the round trip: the window a transfer at that
 * rate needs, with headroom for queueing.  While the window limits the
 * transfer the rate is about window / RTT, and this grows the window
 * every round trip until it no longer limits; a slow consumer keeps the
 * window, and so the data waiting for it, small.  0: no growth now.
 */
static u_int
rate_target(Channel *c, double rtt)
{
	double t = monotime_double(), dt, rate;
	u_int64_t got, used;

	/* Consumed: received, less what still waits for the consumer. */
	used = c->hpn_rx - MINIMUM(c->hpn_rx, sshbuf_len(c->output));
	if (c->hpn_since == 0 || rtt <= 0) {
		c->hpn_since = t;
		c->hpn_rx_since = arrived(c);
		c->hpn_used_since = used;
		return 0;
	}
	/* over a round trip, and not less than HPN_RATE_SPAN */
	if ((dt = t - c->hpn_since) < MAXIMUM(rtt, HPN_RATE_SPAN))
		return 0;
	got = arrived(c);
	/*
	 * Out-of-order packets arrived meanwhile (a loss, or reordering):
	 * once the hole is filled the kernel hands over at once what it
	 * held, a burst at a rate the path never had.  Measure on, over
	 * the stall and the burst together, for up to HPN_OOO_SPAN round
	 * trips (a path that reorders all the time still gets measured).
	 */
	if (hpn.ooo_at >= c->hpn_since && dt < HPN_OOO_SPAN * rtt)
		return 0;
	/*
	 * The slower of what arrived and what was consumed: a consumer
	 * catching up on a backlog is not a faster path.
	 */
	rate = MINIMUM(got - MINIMUM(got, c->hpn_rx_since),
	    used - MINIMUM(used, c->hpn_used_since)) / dt;
	c->hpn_since = t;
	c->hpn_rx_since = got;
	c->hpn_used_since = used;
	bw_measured(c, rate, rtt);
	/*
	 * Grow only a window the transfer fills: one that carries less than
	 * half of itself per round trip does not limit it, and growing it
	 * on every fluctuation would let it creep up without bound.
	 */
	if (rate * rtt < c->local_window_max / 2)
		return 0;
	return (u_int)MINIMUM(HPN_WINDOW_RTT_FACTOR * rate * rtt, UINT_MAX);
}

static u_int
window_target(struct ssh *ssh, Channel *c, const char **why, int *bulk)
{
	int v;
	socklen_t len = sizeof(v);
	double rtt, t;
	u_int target, ramp;

	if (hpn.fd != -1) {
		/*
		 * The socket's buffer and TCP_INFO at most every
		 * HPN_SOCK_SAMPLE: both change over round trips, and this
		 * runs on every trip round the loop while a window fills
		 * (three system calls a trip on a fast short path).
		 */
		if ((t = monotime_double()) - hpn.sampled >= HPN_SOCK_SAMPLE ||
		    hpn.sampled == 0) {
			hpn.sampled = t;
			if (hpn.rcvbuf_poll || !hpn.rcvbuf_read) {
				if (getsockopt(hpn.fd, SOL_SOCKET, SO_RCVBUF,
				    &v, &len) == 0 && v > 0)
					hpn.rcvbuf = (u_int)v;
				hpn.rcvbuf_read = 1;
			}
			(void)tcp_rtt();
			span_measure(ssh, t);
		}
		rtt = hpn.rtt_min;
		/*
		 * The SSH-level round trip too: behind a relay (a jump host,
		 * ProxyCommand on the far side, a TCP proxy) our socket is
		 * a short hop, and its buffer and RTT say nothing of the
		 * path.  Then the window follows the end-to-end round trip.
		 */
		if (hpn.ping_ok)
			ping_send(ssh);
		/*
		 * Multipath TCP: TCP_INFO is one subflow's, and the stream
		 * waits at the receiver for the slowest subflow's data.
		 * The PING round trip sees that wait, but only its lowest:
		 * the data of one subflow waits behind the other's retries
		 * and bursts, so the window is sized to HPN_MPTCP_RTT_FACTOR
		 * such round trips.  No buffer bound (the connection's
		 * buffer trails its subflows' growth).
		 */
		if (hpn.mptcp && hpn.ping_ok && hpn.rtt_recent > 0) {
			*why = "measured rate x RTT (Multipath TCP)";
			return rate_target(c, HPN_MPTCP_RTT_FACTOR *
			    MAXIMUM(rtt, hpn.rtt_prev > 0 ?
			    MINIMUM(hpn.rtt_prev, hpn.rtt_recent) :
			    hpn.rtt_recent));
		}
		if (behind_relay(rtt)) {
			*why = "measured rate x end-to-end RTT (relay)";
			return rate_target(c, hpn.ping_rtt_min);
		}
		if (rtt <= 0) {
			*why = "TCP receive buffer";
			return hpn.rcvbuf;
		}
		*why = "TCP receive buffer, rate x RTT";
		target = rate_target(c, rtt);	/* once: it updates c */
		/*
		 * The first growth of a window that limits the transfer
		 * while no queue builds on the path (the data's round trip
		 * is still near the lowest): a bulk transfer on a long
		 * path, still in TCP's slow start.  A window sized from
		 * the rate of the last round trip doubles only every
		 * second round trip (what arrives was sent under the
		 * window of a round trip before), half as fast as TCP's
		 * slow start, so it starts at HPN_WINDOW_BULK and leaves
		 * the ramp to TCP, which governs the path.
		 */
		if (target > c->local_window_max &&
		    c->local_window_max == c->hpn_window_start &&
		    hpn.rcv_rtt > 0 && hpn.rcv_rtt < rtt * HPN_BULK_RTT_SLACK) {
			*why = "bulk transfer starting, TCP slow start";
			*bulk = 1;
			return MAXIMUM(target, HPN_WINDOW_BULK);
		}
		/*
		 * No queue on the path (the data's round trip near the
		 * lowest) and a reader that keeps up (less than 1/8 of the
		 * window waits for it): the window follows the receive
		 * buffer itself, at most doubling at a time.  The kernel
		 * grows that buffer from what the reader takes each round
		 * trip, as TCP's own window grows; a window sized from the
		 * last round trip's rate trails it by a round trip, and on
		 * a path of a second or more (10 Gbit/s x 100 ms has the
		 * BDP of 1 Gbit/s x 1 s) each round trip of slow start
		 * spent behind TCP costs seconds.  A queue, or a reader
		 * that lags, brings back the rule of the rate, and so does a
		 * queue past HPN_HOLD_QUEUE once the window is twice what
		 * the path carried and past HPN_HOLD_MIN (more window would
		 * only lengthen it; on 1 Gbit/s x 1 s a doubling to 6
		 * products came with the queue at 136 ms); so does a
		 * short path (below HPN_RAMP_RTT_MIN), where a round trip of
		 * lag costs nothing and a window past what the rate asks
		 * would only hold more of a stalled reader's data.
		 */
		if (rtt >= HPN_RAMP_RTT_MIN &&
		    hpn.rcvbuf > MAXIMUM(target, c->local_window_max) &&
		    hpn.rcv_rtt > 0 && hpn.rcv_rtt < rtt * HPN_BULK_RTT_SLACK &&
		    (hpn.rcv_rtt < rtt * HPN_HOLD_QUEUE ||
		    c->local_window_max < MAXIMUM(2 * hpn.bw_peak * rtt,
		    HPN_HOLD_MIN)) &&
		    sshbuf_len(c->output) < c->local_window_max / 8) {
			*why = "TCP receive buffer, reader keeps up";
			if (hpn.rcvbuf <= (ramp = window_ramp(rtt)))
				return hpn.rcvbuf;
			*why = "TCP receive buffer, within the ramp";
			return ramp;
		}
		return MINIMUM(hpn.rcvbuf, target);
	}
	/* No socket: time a round trip with a PING. */
	if (hpn.ping_ok) {
		ping_send(ssh);
		*why = "measured rate x RTT";
		return rate_target(c, hpn.rtt);
	}
	/* No way to time a round trip: grow while drained. */
	if (sshbuf_len(c->output) > c->local_window_max / 8)
		return 0;
	*why = "peer keeps up (no RTT measurement)";
	target = c->local_window_max;
	return target > UINT_MAX / 2 ? UINT_MAX : target * 2;
}

/*
 * A window past what sshbuf allows a buffer (SSHBUF_SIZE_MAX, 128 MiB):
 * the buffers that hold the channel's data until its reader takes it (its
 * output and extended data, both charged to the window) may grow to the
 * window, plus the tenth upstream lets a peer exceed it by, plus a packet.
 * These buffers only: every other buffer, and each packet from the peer,
 * keeps sshbuf's bounds.
 */
static void
window_buffers(Channel *c, u_int window)
{
	size_t want = (size_t)window + window / 8 + c->local_maxpacket;
	int r;

	if (want <= SSHBUF_SIZE_MAX)
		return;
	want = MINIMUM(want, HPN_SSHBUF_LARGE_MAX);
	if (sshbuf_max_size(c->output) < want &&
	    (r = sshbuf_set_max_size_large(c->output, want)) != 0)
		fatal_fr(r, "channel %d: output buffer of %zu", c->self, want);
	if (sshbuf_max_size(c->extended) < want &&
	    (r = sshbuf_set_max_size_large(c->extended, want)) != 0)
		fatal_fr(r, "channel %d: extended buffer of %zu", c->self,
		    want);
}

/*
 * Called where channels.c decides whether to send a window adjust: grows
 * the window when warranted (the growth goes out with the adjust) and
 * returns whether an adjust is due.
 */
int
hpn_window_adjust_due(struct ssh *ssh, Channel *c)
{
	u_int target, cap, old = c->local_window_max, gap, hold, base, d;
	const char *why = NULL;
	int bulk = 0;

	if (!hpn.configured || hpn.disabled ||
	    old < HPN_WINDOW_GROW_MIN || c->local_consumed == 0)
		goto stock;
	/*
	 * A window of HPN_WINDOW_GROW_MIN (the stock session window) or more
	 * is adjusted per 1/8 of itself (stock: every three packets), and
	 * whether it grows is looked at only then: the growth goes out with
	 * that adjust, and a window that limits the transfer is consumed
	 * eight times a round trip.
	 */
	gap = old - c->local_window;
	if (gap < old / 8 && c->local_window >= old / 2)
		return 0;
	cap = window_cap(ssh);		/* first: it learns of the peer */
	target = window_target(ssh, c, &why, &bulk);	/* measures too */
	/*
	 * A held path (window_hold()): no growth past the hold, and a
	 * window above it gives back less than was consumed until it is
	 * down to it (the peer keeps every byte already granted).
	 */
	if ((hold = window_hold()) != 0 && target > hold)
		target = hold;
	if (hold != 0 && old > hold) {
		d = MINIMUM(old - hold, c->local_consumed);
		c->local_window_max -= d;
		c->local_consumed -= d;
		base = window_base(c);
		if (old > base)
			hpn_budget_give(MINIMUM(d, old - base));
		debug("channel %d: window %u -> %u (held: %.2g x peak "
		    "%.1f MB/s x RTT %.0f ms)", c->self, old,
		    c->local_window_max, HPN_HOLD_FACTOR, hpn.bw_peak / 1e6,
		    hpn.rtt_min * 1e3);
		old = c->local_window_max;
		target = old;
	} else if (old < cap && target > old) {
		/* At most double per step, like TCP's slow start. */
		if (target / 2 > old && !bulk)
			target = old * 2;
		if (target > cap)
			target = cap;
		/* past the stock size, from the memory budget (hpn-budget.c) */
		target = old + hpn_budget_take(target - old);
	} else
		target = old;
	if (target > old) {
		window_buffers(c, target);
		c->local_window_max = target;
		c->local_consumed += target - old;
		debug("channel %d: window %u -> %u (%s; receive buffer %u, "
		    "rtt %.0f ms, data rtt %.0f ms)", c->self, old, target,
		    why, hpn.rcvbuf, hpn.rtt_min * 1e3, hpn.rcv_rtt * 1e3);
	}
	peak_note(c);
	stats.window = c->local_window_max;
	if (stats.window > stats.window_peak)
		stats.window_peak = stats.window;
	return 1;
 stock:
	return (c->local_window_max - c->local_window >
	    c->local_maxpacket * 3) ||
	    c->local_window < c->local_window_max / 2;
}

/*
 * channels.c sent len bytes of c's data: count them, and note when the
 * channel still has data but the peer's window is shorter than a packet
 * (the sender waits for a window adjust: a stall).
 */
void
hpn_channel_sent(Channel *c, size_t len)
{
	c->hpn_tx += len;
	stats.peer_window = c->remote_window;
	if (c->remote_window + len > stats.peer_window_peak)
		stats.peer_window_peak = c->remote_window + len;
	if (c->remote_window < c->remote_maxpacket &&
	    sshbuf_len(c->input) > 0)
		stats.stalls++;
}

/*
 * A channel closes (CLOSE received) or is freed, whichever comes first: one
 * line at verbose level on what it carried.
 */
void
hpn_channel_summary(Channel *c)
{
	if (c->hpn_reported || (c->hpn_rx == 0 && c->hpn_tx == 0))
		return;
	c->hpn_reported = 1;
	verbose("channel %d: %s: received %llu bytes, sent %llu bytes, "
	    "peak window %u (from %u)", c->self,
	    c->remote_name ? c->remote_name : "?",
	    (unsigned long long)c->hpn_rx, (unsigned long long)c->hpn_tx,
	    peak_of(c), c->hpn_window_start);
}

/*
 * channels.c, a channel freed: its summary, and what its window took of
 * the memory budget (its growth past where it started, or past the stock
 * size, hpn_window_adjust_due()) goes back.
 */
void
hpn_channel_freed(Channel *c)
{
	u_int base = window_base(c), *p;

	hpn_channel_summary(c);
	if (c->local_window_max > base)
		hpn_budget_give(c->local_window_max - base);
	if ((p = peak_slot(c)) != NULL)
		*p = 0;
}

/*
 * How much unsent data a channel may hold before it stops reading its
 * input (upstream: the peer's whole window).  Data waiting here is not in
 * flight: it is packetized only as the connection drains, so a few MiB
 * keep the packetizer fed.  Holding more harms: near its 16 MiB limit
 * (CHAN_INPUT_MAX) the buffer is compacted on every read, a memmove of
 * the whole buffer per 32 KiB, which is what makes a sender collapse when
 * the peer's window passes 16 MiB.
 */
size_t
hpn_channel_input_max(Channel *c)
{
	return MINIMUM(c->remote_window, HPN_INPUT_STAGE);
}
