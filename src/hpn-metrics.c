/*
 * HPN patch set: TCP stack metrics, the part both ends share.
 *
 *  - A sample is the connection socket's TCP_INFO (Linux; the fields the
 *    running kernel fills, by the length it returns) and the SSH layer's
 *    view: bytes through the packet layer, channel windows (ours and the
 *    peer's, current and peak) and how often a sender ran out of window.
 *  - hpnsshd answers a client's global request HPN_METRICS_REQUEST, only
 *    after authentication (global requests are handled by the post-auth
 *    loop only), unless PermitMetrics is no, and at most
 *    HPN_M_ANSWER_RATE times a second: a sample as a list of (name, u64)
 *    pairs, so that either end may know fields the other does not.
 *  - HPN-SSH's own request, HPN_METRICS_REQUEST_HPNSSH, is answered in its
 *    format (a binn object), and hpnssh asks an HPN-SSH server with it and
 *    reads that format (hpn_metrics_binn_put(), _reply()).
 *  - The client writes samples as CSV rows (hpn-metrics-client.c) and sums
 *    them up in one line: what limited the sending end, from the kernel's
 *    busy, receive-window-limited and send-buffer-limited times.
 *  - hpnsshd logs each session's byte counts, rate, peak window and cipher
 *    at INFO when it closes.
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"
#include "log.h"
#include "misc.h"
#include "sshbuf.h"
#include "ssherr.h"
#include "packet.h"
#include "cipher.h"
#include "kex.h"
#include "channels.h"
#include "hpn.h"
#include "hpn-metrics.h"

static const char *mcol_names[HPN_M_NCOLS] = {
	"rtt_us", "rttvar_us", "min_rtt_us", "snd_cwnd", "snd_mss",
	"snd_ssthresh", "rcv_space", "rcv_ssthresh", "rcv_rtt_us",
	"unacked", "sacked", "lost", "retrans", "total_retrans", "reordering",
	"delivery_rate", "pacing_rate", "bytes_sent", "bytes_acked",
	"bytes_received", "bytes_retrans", "notsent_bytes", "snd_wnd",
	"busy_time", "rwnd_limited", "sndbuf_limited",
	"ssh_bytes_out", "ssh_bytes_in", "window", "window_peak",
	"peer_window", "peer_window_peak", "window_stalls",
};

const char *
hpn_mcol_name(u_int i)
{
	return i < HPN_M_NCOLS ? mcol_names[i] : NULL;
}

int
hpn_mcol_find(const char *name)
{
	u_int i;

	for (i = 0; i < HPN_M_NCOLS; i++)
		if (strcmp(mcol_names[i], name) == 0)
			return (int)i;
	return -1;
}

static void
set(struct hpn_msample *s, u_int col, u_int64_t v)
{
	s->v[col] = v;
	s->have |= (u_int64_t)1 << col;
}

/* Whether a TCP_INFO of len bytes holds field f. */
#define COVERS(len, f) ((len) >= offsetof(struct hpn_tcpi, f) + \
	sizeof(((struct hpn_tcpi *)0)->f))
#define TAKE(col, f) do { \
	if (COVERS(len, f)) \
		set(s, col, ti->f); \
} while (0)

/* The TCP columns of s from a TCP_INFO of len bytes; how many were there. */
int
hpn_tcpi_sample(const struct hpn_tcpi *ti, size_t len, struct hpn_msample *s)
{
	u_int i, n = 0;

	TAKE(HPN_M_RTT, rtt);
	TAKE(HPN_M_RTTVAR, rttvar);
	TAKE(HPN_M_MIN_RTT, min_rtt);
	TAKE(HPN_M_SND_CWND, snd_cwnd);
	TAKE(HPN_M_SND_MSS, snd_mss);
	TAKE(HPN_M_SND_SSTHRESH, snd_ssthresh);
	TAKE(HPN_M_RCV_SPACE, rcv_space);
	TAKE(HPN_M_RCV_SSTHRESH, rcv_ssthresh);
	TAKE(HPN_M_RCV_RTT, rcv_rtt);
	TAKE(HPN_M_UNACKED, unacked);
	TAKE(HPN_M_SACKED, sacked);
	TAKE(HPN_M_LOST, lost);
	TAKE(HPN_M_RETRANS, retrans);
	TAKE(HPN_M_TOTAL_RETRANS, total_retrans);
	TAKE(HPN_M_REORDERING, reordering);
	TAKE(HPN_M_DELIVERY_RATE, delivery_rate);
	TAKE(HPN_M_PACING_RATE, pacing_rate);
	TAKE(HPN_M_BYTES_SENT, bytes_sent);
	TAKE(HPN_M_BYTES_ACKED, bytes_acked);
	TAKE(HPN_M_BYTES_RECEIVED, bytes_received);
	TAKE(HPN_M_BYTES_RETRANS, bytes_retrans);
	TAKE(HPN_M_NOTSENT_BYTES, notsent_bytes);
	TAKE(HPN_M_SND_WND, snd_wnd);
	TAKE(HPN_M_BUSY_TIME, busy_time);
	TAKE(HPN_M_RWND_LIMITED, rwnd_limited);
	TAKE(HPN_M_SNDBUF_LIMITED, sndbuf_limited);
	for (i = 0; i < HPN_M_TCP_COLS; i++)
		if (s->have & ((u_int64_t)1 << i))
			n++;
	return n;
}

/* A sample of this end of ssh's connection, now. */
int
hpn_metrics_take(struct ssh *ssh, struct hpn_msample *s)
{
	struct hpn_winstats w;
	struct timeval tv;
	u_int64_t in, out;
	int n = 0;
#if defined(__linux__) && defined(TCP_INFO)
	struct hpn_tcpi ti;
	socklen_t len = sizeof(ti);
	int fd = ssh_packet_get_connection_in(ssh);
	struct stat st;
#endif

	memset(s, 0, sizeof(*s));
	gettimeofday(&tv, NULL);
	s->time = tv.tv_sec + tv.tv_usec / 1e6;
#if defined(__linux__) && defined(TCP_INFO)
	memset(&ti, 0, sizeof(ti));
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
	    getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0)
		n = hpn_tcpi_sample(&ti, len, s);
#endif
	ssh_packet_get_bytes(ssh, &in, &out);
	set(s, HPN_M_SSH_BYTES_OUT, out);
	set(s, HPN_M_SSH_BYTES_IN, in);
	hpn_window_stats(&w);
	set(s, HPN_M_WINDOW, w.window);
	set(s, HPN_M_WINDOW_PEAK, w.window_peak);
	set(s, HPN_M_PEER_WINDOW, w.peer_window);
	set(s, HPN_M_PEER_WINDOW_PEAK, w.peer_window_peak);
	set(s, HPN_M_WINDOW_STALLS, w.stalls);
	return n;
}

/*
 * On the wire: u32 count, then (string name, u64 value) pairs: "time_us"
 * (the sender's Unix time in microseconds), then one per column present.
 */
int
hpn_msample_put(struct sshbuf *b, const struct hpn_msample *s)
{
	u_int i, n = 0;
	int r;

	for (i = 0; i < HPN_M_NCOLS; i++)
		if (s->have & ((u_int64_t)1 << i))
			n++;
	if ((r = sshbuf_put_u32(b, n + 1)) != 0 ||
	    (r = sshbuf_put_cstring(b, "time_us")) != 0 ||
	    (r = sshbuf_put_u64(b, (u_int64_t)(s->time * 1e6))) != 0)
		return r;
	for (i = 0; i < HPN_M_NCOLS; i++) {
		if ((s->have & ((u_int64_t)1 << i)) == 0)
			continue;
		if ((r = sshbuf_put_cstring(b, mcol_names[i])) != 0 ||
		    (r = sshbuf_put_u64(b, s->v[i])) != 0)
			return r;
	}
	return 0;
}

/* Names we do not know are skipped; at most 256 pairs. */
int
hpn_msample_get(struct sshbuf *b, struct hpn_msample *s)
{
	u_int32_t n, i;
	u_int64_t v;
	char *name;
	int r, col;

	memset(s, 0, sizeof(*s));
	if ((r = sshbuf_get_u32(b, &n)) != 0)
		return r;
	if (n > 256)
		return SSH_ERR_INVALID_FORMAT;
	for (i = 0; i < n; i++) {
		if ((r = sshbuf_get_cstring(b, &name, NULL)) != 0)
			return r;
		r = sshbuf_get_u64(b, &v);
		col = hpn_mcol_find(name);
		if (r == 0 && strcmp(name, "time_us") == 0)
			s->time = v / 1e6;
		free(name);
		if (r != 0)
			return r;
		if (col >= 0)
			set(s, col, v);
	}
	return 0;
}

/*
 * hpnssh: the server's answer to a metrics request (the REQUEST_SUCCESS
 * payload, len bytes at d), asked at Unix time sent and taken at now:
 * its sample in s, stamped with the server's clock when that falls
 * between the two, else with the nearer of them.  0, or an SSH_ERR_* code
 * (malformed).
 */
int
hpn_metrics_reply(const u_char *d, size_t len, double sent, double now,
    struct hpn_msample *s)
{
	struct sshbuf *b;
	int r;

	if ((b = sshbuf_from(d, len)) == NULL)
		fatal_f("sshbuf_from failed");
	r = hpn_msample_get(b, s);
	sshbuf_free(b);
	if (r != 0)
		return r;
	if (s->time < sent || s->time > now)
		s->time = s->time < sent ? sent : now;
	return 0;
}

void
hpn_msample_header(FILE *f)
{
	u_int i;

	fputs("time", f);
	for (i = 0; i < HPN_M_NCOLS; i++)
		fprintf(f, ",%s", mcol_names[i]);
	fputc('\n', f);
}

/* A field the kernel did not give stays empty. */
void
hpn_msample_row(FILE *f, const struct hpn_msample *s)
{
	u_int i;

	fprintf(f, "%.6f", s->time);
	for (i = 0; i < HPN_M_NCOLS; i++) {
		if (s->have & ((u_int64_t)1 << i))
			fprintf(f, ",%llu", (unsigned long long)s->v[i]);
		else
			fputc(',', f);
	}
	fputc('\n', f);
}

static int
has(const struct hpn_msample *s, u_int col)
{
	return (s->have & ((u_int64_t)1 << col)) != 0;
}

void
hpn_mend_add(struct hpn_mend *e, const struct hpn_msample *s)
{
	u_int64_t cwnd;

	if (e->n++ == 0)
		e->first = *s;
	e->last = *s;
	if (has(s, HPN_M_SND_CWND) && has(s, HPN_M_SND_MSS)) {
		cwnd = s->v[HPN_M_SND_CWND] * s->v[HPN_M_SND_MSS];
		if (cwnd > e->cwnd_peak)
			e->cwnd_peak = cwnd;
	}
	if (has(s, HPN_M_RTT) && s->v[HPN_M_RTT] > 0 &&
	    e->nrtts < HPN_M_RTTS_MAX) {
		e->rtts = xrecallocarray(e->rtts, e->nrtts, e->nrtts + 1,
		    sizeof(*e->rtts));
		e->rtts[e->nrtts++] = (u_int32_t)s->v[HPN_M_RTT];
	}
}

void
hpn_mend_free(struct hpn_mend *e)
{
	free(e->rtts);
	memset(e, 0, sizeof(*e));
}

static int
cmp_u32(const void *a, const void *b)
{
	u_int32_t x = *(const u_int32_t *)a, y = *(const u_int32_t *)b;

	return x < y ? -1 : x > y;
}

/* last - first of a column, 0 when either lacks it or it went back. */
static u_int64_t
delta(const struct hpn_mend *e, u_int col)
{
	if (e->n < 2 || !has(&e->first, col) || !has(&e->last, col) ||
	    e->last.v[col] < e->first.v[col])
		return 0;
	return e->last.v[col] - e->first.v[col];
}

/* Whether an end's samples say how much its TCP sent (bytes_acked). */
static int
tcp_known(const struct hpn_mend *e)
{
	return e->n >= 2 && has(&e->first, HPN_M_BYTES_ACKED) &&
	    has(&e->last, HPN_M_BYTES_ACKED);
}

static int
pct(u_int64_t part, double whole)
{
	double p = 100.0 * (double)part / whole;

	return p > 100 ? 100 : (int)(p + 0.5);
}

/*
 * One line on what limited the transfer, from the sending end's samples
 * (the end whose TCP saw more bytes acknowledged): its median RTT, peak
 * congestion window, retransmits, and how its time went (Linux's chrono
 * counters): busy sending and limited by the congestion window (network),
 * by the peer's receive window, by its send buffer; the rest of the time
 * it had nothing to send (application: ssh, the SSH window, the disk, the
 * CPU).  rem may have no samples.  Returns 0, or -1: nothing to say.
 */
int
hpn_metrics_summary(const struct hpn_mend *loc, const struct hpn_mend *rem,
    char *buf, size_t len)
{
	const struct hpn_mend *e = loc;
	const char *who = "this end";
	u_int32_t *sorted, med = 0;
	u_int64_t busy, rwnd, sndbuf, net, stalls;
	double elapsed;
	char limits[256], win[64] = "";

	if (loc->n == 0 && rem->n == 0)
		return -1;
	if (tcp_known(rem) &&
	    (!tcp_known(loc) || delta(rem, HPN_M_BYTES_ACKED) >
	    delta(loc, HPN_M_BYTES_ACKED))) {
		e = rem;
		who = "the remote end";
	} else if (!tcp_known(rem) && delta(loc, HPN_M_BYTES_RECEIVED) >
	    delta(loc, HPN_M_BYTES_ACKED)) {
		who = "this end, receiving (the sender gave no metrics)";
	}
	if (e->nrtts > 0) {
		sorted = xcalloc(e->nrtts, sizeof(*sorted));
		memcpy(sorted, e->rtts, e->nrtts * sizeof(*sorted));
		qsort(sorted, e->nrtts, sizeof(*sorted), cmp_u32);
		med = sorted[e->nrtts / 2];
		free(sorted);
	}
	elapsed = (e->last.time - e->first.time) * 1e6;
	if (e->n < 2 || elapsed <= 0 || !has(&e->last, HPN_M_BUSY_TIME) ||
	    !has(&e->last, HPN_M_RWND_LIMITED) ||
	    !has(&e->last, HPN_M_SNDBUF_LIMITED))
		strlcpy(limits, "limits unknown (no busy times from the "
		    "kernel, or a single sample)", sizeof(limits));
	else {
		busy = delta(e, HPN_M_BUSY_TIME);
		rwnd = delta(e, HPN_M_RWND_LIMITED);
		sndbuf = delta(e, HPN_M_SNDBUF_LIMITED);
		net = busy > rwnd + sndbuf ? busy - rwnd - sndbuf : 0;
		snprintf(limits, sizeof(limits), "limited by: network "
		    "(congestion window) %d%%, receive window %d%%, send "
		    "buffer %d%%, application %d%%", pct(net, elapsed),
		    pct(rwnd, elapsed), pct(sndbuf, elapsed),
		    pct((double)busy < elapsed ?
		    (u_int64_t)(elapsed - busy) : 0, elapsed));
	}
	stalls = delta(e, HPN_M_WINDOW_STALLS);
	if (stalls > 0)
		snprintf(win, sizeof(win), "; the SSH window ran out %llu "
		    "times", (unsigned long long)stalls);
	snprintf(buf, len, "rtt %.1f ms, peak cwnd %.1f MB, %llu "
	    "retransmits; %s%s (sender: %s)", med / 1e3, e->cwnd_peak / 1e6,
	    (unsigned long long)delta(e, HPN_M_TOTAL_RETRANS), limits, win,
	    who);
	return 0;
}

/* A token bucket: 1 when a token was there (and is taken). */
int
hpn_metrics_bucket(double *tokens, double *last, double now)
{
	if (now > *last) {
		*tokens += (now - *last) * HPN_M_ANSWER_RATE;
		if (*tokens > HPN_M_ANSWER_BURST)
			*tokens = HPN_M_ANSWER_BURST;
		*last = now;
	}
	if (*tokens < 1)
		return 0;
	*tokens -= 1;
	return 1;
}

/* --- hpnsshd ------------------------------------------------------------ */

static struct {
	int	permit;
	double	tokens, last;
	u_int	answered, refused;
} srv = { .permit = 1, .tokens = HPN_M_ANSWER_BURST };

void
hpn_metrics_server_config(int permit)
{
	srv.permit = permit;
}

#if defined(__linux__) && defined(TCP_INFO)
static u_int32_t kernel_version(void);
#endif

/* May a metrics request be answered now (PermitMetrics, the rate)? */
static int
answer_allowed(struct ssh *ssh)
{
	if (!srv.permit) {
		debug_f("refused: PermitMetrics no");
		return 0;
	}
	if (!hpn_metrics_bucket(&srv.tokens, &srv.last, monotime_double())) {
		if (srv.refused++ == 0)
			logit("metrics requests from %.200s port %d come "
			    "faster than %d a second: the excess is refused",
			    ssh_remote_ipaddr(ssh), ssh_remote_port(ssh),
			    HPN_M_ANSWER_RATE);
		return 0;
	}
	return 1;
}

/* serverloop.c: a client's HPN_METRICS_REQUEST; 1 with *respp: answer. */
int
hpn_metrics_answer(struct ssh *ssh, struct sshbuf **respp)
{
	struct hpn_msample s;
	struct sshbuf *b;
	int r;

	if (!answer_allowed(ssh))
		return 0;
	hpn_metrics_take(ssh, &s);
	if ((b = sshbuf_new()) == NULL)
		fatal_f("sshbuf_new failed");
	if ((r = hpn_msample_put(b, &s)) != 0)
		fatal_fr(r, "compose");
	if (srv.answered++ == 0)
		debug_f("answering metrics requests");
	*respp = b;
	return 1;
}

/*
 * serverloop.c: HPN-SSH's client's HPN_METRICS_REQUEST_HPNSSH; 1 with
 * *respp: the answer in its format (hpn_metrics_binn_put()), under the
 * same PermitMetrics and rate as ours.  Without TCP_INFO refused, as
 * HPN-SSH's server does.
 */
int
hpn_metrics_answer_hpnssh(struct ssh *ssh, struct sshbuf **respp)
{
#if defined(__linux__) && defined(TCP_INFO)
	struct hpn_tcpi ti;
	socklen_t len = sizeof(ti);
	struct sshbuf *b;
	struct stat st;
	int r, fd = ssh_packet_get_connection_in(ssh);

	if (!answer_allowed(ssh))
		return 0;
	memset(&ti, 0, sizeof(ti));
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode) ||
	    getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0) {
		debug_f("no TCP_INFO: refused");
		return 0;
	}
	if ((b = sshbuf_new()) == NULL)
		fatal_f("sshbuf_new failed");
	if ((r = hpn_metrics_binn_put(b, &ti, len, kernel_version())) != 0)
		fatal_fr(r, "compose");
	if (srv.answered++ == 0)
		debug_f("answering HPN-SSH's metrics requests");
	*respp = b;
	return 1;
#else
	return 0;
#endif
}

/*
 * HPN-SSH's own metrics request, HPN_METRICS_REQUEST_HPNSSH ("stack-
 * metrics@hpnssh.org", no body), and its answer: REQUEST_SUCCESS with a
 * string holding an object of the "binn" serialisation format, which
 * HPN-SSH links as a library.  Written here from the format's published
 * description and the bytes HPN-SSH 18.8 sends (not its code):
 *
 *   object   byte 0xe2, size, count, then count items; size (all of the
 *            object, its header included) and count are one byte when
 *            below 128, else four bytes big-endian with the top bit set
 *   item     byte key length (1-255), the key, a type byte, the value
 *            big-endian: 0x20/0x21 u8/s8, 0x40/0x41 u16/s16, 0x60/0x61
 *            u32/s32, 0x80/0x81 u64/s64 (the writer stores an integer in
 *            the smallest type that holds it)
 *
 * HPN-SSH's keys are "kernel_version" (LINUX_VERSION_CODE) and TCP_INFO's
 * fields by their kernel names ("tcpi_rtt"...); its client reads each by
 * name and takes a missing one as 0.  hpnsshd answers with the fields its
 * kernel fills; hpnssh takes those it has columns for.
 */
#define BINN_OBJECT	0xe2

static const struct binn_field {
	const char	*name;
	size_t		off;		/* in struct hpn_tcpi */
	u_int		size;		/* 1, 4, 8; 0: the wscale byte */
	int		col;		/* ours, or -1 */
} binn_fields[] = {
#define BF(f, col) { "tcpi_" #f, offsetof(struct hpn_tcpi, f), \
	sizeof(((struct hpn_tcpi *)0)->f), col }
	BF(state, -1), BF(ca_state, -1), BF(retransmits, -1),
	BF(probes, -1), BF(backoff, -1), BF(options, -1),
	{ "tcpi_snd_wscale", offsetof(struct hpn_tcpi, wscale), 0, -1 },
	{ "tcpi_rcv_wscale", offsetof(struct hpn_tcpi, wscale), 0, -1 },
	BF(rto, -1), BF(ato, -1), BF(snd_mss, HPN_M_SND_MSS),
	BF(rcv_mss, -1), BF(unacked, HPN_M_UNACKED),
	BF(sacked, HPN_M_SACKED), BF(lost, HPN_M_LOST),
	BF(retrans, HPN_M_RETRANS), BF(fackets, -1),
	BF(last_data_sent, -1), BF(last_ack_sent, -1),
	BF(last_data_recv, -1), BF(last_ack_recv, -1), BF(pmtu, -1),
	BF(rcv_ssthresh, HPN_M_RCV_SSTHRESH), BF(rtt, HPN_M_RTT),
	BF(rttvar, HPN_M_RTTVAR), BF(snd_ssthresh, HPN_M_SND_SSTHRESH),
	BF(snd_cwnd, HPN_M_SND_CWND), BF(advmss, -1),
	BF(reordering, HPN_M_REORDERING), BF(rcv_rtt, HPN_M_RCV_RTT),
	BF(rcv_space, HPN_M_RCV_SPACE),
	BF(total_retrans, HPN_M_TOTAL_RETRANS),
	BF(pacing_rate, HPN_M_PACING_RATE), BF(max_pacing_rate, -1),
	BF(bytes_acked, HPN_M_BYTES_ACKED),
	BF(bytes_received, HPN_M_BYTES_RECEIVED),
	BF(segs_out, -1), BF(segs_in, -1),
	BF(notsent_bytes, HPN_M_NOTSENT_BYTES), BF(min_rtt, HPN_M_MIN_RTT),
	BF(data_segs_in, -1), BF(data_segs_out, -1),
	BF(delivery_rate, HPN_M_DELIVERY_RATE),
	BF(busy_time, HPN_M_BUSY_TIME),
	BF(rwnd_limited, HPN_M_RWND_LIMITED),
	BF(sndbuf_limited, HPN_M_SNDBUF_LIMITED),
	BF(delivered, -1), BF(delivered_ce, -1),
	BF(bytes_sent, HPN_M_BYTES_SENT),
	BF(bytes_retrans, HPN_M_BYTES_RETRANS),
	BF(dsack_dups, -1), BF(reord_seen, -1), BF(rcv_ooopack, -1),
	BF(snd_wnd, HPN_M_SND_WND),
#undef BF
};

#if defined(__linux__) && defined(TCP_INFO)
/* The running kernel's version as LINUX_VERSION_CODE spells it; 0: none. */
static u_int32_t
kernel_version(void)
{
	struct utsname u;
	u_int a = 0, b = 0, c = 0;

	if (uname(&u) != 0 || sscanf(u.release, "%u.%u.%u", &a, &b, &c) < 2)
		return 0;
	return (MINIMUM(a, 255) << 16) | (MINIMUM(b, 255) << 8) |
	    MINIMUM(c, 255);
}
#endif

static int
binn_put_u(struct sshbuf *b, const char *key, u_int64_t v)
{
	size_t klen = strlen(key);
	int r;

	if ((r = sshbuf_put_u8(b, klen)) != 0 ||
	    (r = sshbuf_put(b, key, klen)) != 0)
		return r;
	if (v <= 0xff) {
		if ((r = sshbuf_put_u8(b, 0x20)) != 0 ||
		    (r = sshbuf_put_u8(b, v)) != 0)
			return r;
	} else if (v <= 0xffff) {
		if ((r = sshbuf_put_u8(b, 0x40)) != 0 ||
		    (r = sshbuf_put_u16(b, v)) != 0)
			return r;
	} else if (v <= 0xffffffffULL) {
		if ((r = sshbuf_put_u8(b, 0x60)) != 0 ||
		    (r = sshbuf_put_u32(b, v)) != 0)
			return r;
	} else if ((r = sshbuf_put_u8(b, 0x80)) != 0 ||
	    (r = sshbuf_put_u64(b, v)) != 0)
		return r;
	return 0;
}

static int
binn_put_len(struct sshbuf *b, u_int32_t v)
{
	return v < 128 ? sshbuf_put_u8(b, v) : sshbuf_put_u32(b, v | 0x80000000);
}

/*
 * HPN-SSH's answer to its request: the fields of a TCP_INFO of len bytes
 * that it knows, as a binn object in a string, appended to out.
 */
int
hpn_metrics_binn_put(struct sshbuf *out, const struct hpn_tcpi *ti,
    size_t len, u_int32_t kver)
{
	struct sshbuf *items, *obj;
	const struct binn_field *f;
	const u_char *p = (const u_char *)ti;
	u_int64_t v;
	u_int32_t n = 0, size;
	u_int i;
	int r;

	if ((items = sshbuf_new()) == NULL || (obj = sshbuf_new()) == NULL)
		fatal_f("sshbuf_new failed");
	if ((r = binn_put_u(items, "kernel_version", kver)) != 0)
		goto out;
	n++;
	for (i = 0; i < sizeof(binn_fields) / sizeof(binn_fields[0]); i++) {
		f = &binn_fields[i];
		if (len < f->off + (f->size ? f->size : 1))
			continue;
		switch (f->size) {
		case 0:		/* snd_wscale: the low 4 bits, rcv_: high */
			v = f->name[5] == 's' ? p[f->off] & 0xf : p[f->off] >> 4;
			break;
		case 1:
			v = p[f->off];
			break;
		case 4:
			v = *(const u_int32_t *)(p + f->off);
			break;
		default:
			v = *(const u_int64_t *)(p + f->off);
			break;
		}
		if ((r = binn_put_u(items, f->name, v)) != 0)
			goto out;
		n++;
	}
	/* the header: type, size (all of it), count */
	size = 1 + (n < 128 ? 1 : 4) + sshbuf_len(items);
	size += size + 1 < 128 ? 1 : 4;
	if ((r = sshbuf_put_u8(obj, BINN_OBJECT)) != 0 ||
	    (r = binn_put_len(obj, size)) != 0 ||
	    (r = binn_put_len(obj, n)) != 0 ||
	    (r = sshbuf_putb(obj, items)) != 0)
		goto out;
	if (sshbuf_len(obj) != size) {
		r = SSH_ERR_INTERNAL_ERROR;
		goto out;
	}
	r = sshbuf_put_stringb(out, obj);
 out:
	sshbuf_free(items);
	sshbuf_free(obj);
	return r;
}

static int
binn_get_len(struct sshbuf *b, u_int32_t *v)
{
	u_char c;
	int r;

	if ((r = sshbuf_peek_u8(b, 0, &c)) != 0)
		return r;
	if ((c & 0x80) != 0) {
		if ((r = sshbuf_get_u32(b, v)) != 0)
			return r;
		*v &= 0x7fffffff;
		return 0;
	}
	if ((r = sshbuf_get_u8(b, &c)) != 0)
		return r;
	*v = c;
	return 0;
}

/*
 * hpnssh: an HPN-SSH server's answer to its request (the REQUEST_SUCCESS
 * payload, len bytes at d), asked at Unix time sent, taken at now: its
 * TCP columns in s, stamped halfway (the answer carries no time).  Keys
 * we have no column for are skipped; types other than integers, a size or
 * count that does not add up, a key twice are refused.  0, or SSH_ERR_*.
 */
int
hpn_metrics_binn_reply(const u_char *d, size_t len, double sent, double now,
    struct hpn_msample *s)
{
	struct sshbuf *b = NULL, *o = NULL;
	u_char dup[sizeof(binn_fields) / sizeof(binn_fields[0])];
	u_int32_t size, count, i, j;
	u_char type, klen, c;
	char key[256];
	u_int64_t v;
	size_t blen;
	int r, nb, neg;

	memset(s, 0, sizeof(*s));
	memset(dup, 0, sizeof(dup));
	if ((b = sshbuf_from(d, len)) == NULL)
		fatal_f("sshbuf_from failed");
	if ((r = sshbuf_froms(b, &o)) != 0)
		goto out;
	if (sshbuf_len(b) != 0) {
		r = SSH_ERR_UNEXPECTED_TRAILING_DATA;
		goto out;
	}
	blen = sshbuf_len(o);
	if ((r = sshbuf_get_u8(o, &type)) != 0 ||
	    (r = binn_get_len(o, &size)) != 0 ||
	    (r = binn_get_len(o, &count)) != 0)
		goto out;
	if (type != BINN_OBJECT || size != blen || count > 1024) {
		r = SSH_ERR_INVALID_FORMAT;
		goto out;
	}
	for (i = 0; i < count; i++) {
		if ((r = sshbuf_get_u8(o, &klen)) != 0)
			goto out;
		if (klen == 0) {
			r = SSH_ERR_INVALID_FORMAT;
			goto out;
		}
		if ((r = sshbuf_get(o, key, klen)) != 0 ||
		    (r = sshbuf_get_u8(o, &type)) != 0)
			goto out;
		key[klen] = '\0';
		switch (type & 0xfe) {
		case 0x20:
			nb = 1;
			break;
		case 0x40:
			nb = 2;
			break;
		case 0x60:
			nb = 4;
			break;
		case 0x80:
			nb = 8;
			break;
		default:
			r = SSH_ERR_INVALID_FORMAT;	/* not an integer */
			goto out;
		}
		for (v = 0, j = 0; j < (u_int)nb; j++) {
			if ((r = sshbuf_get_u8(o, &c)) != 0)
				goto out;
			v = (v << 8) | c;
		}
		/* signed and negative: no count of ours */
		neg = (type & 1) && (v >> (nb * 8 - 1)) != 0;
		for (j = 0; j < sizeof(dup); j++) {
			if (strcmp(binn_fields[j].name, key) != 0)
				continue;
			if (dup[j]++) {
				r = SSH_ERR_INVALID_FORMAT;	/* twice */
				goto out;
			}
			if (binn_fields[j].col >= 0 && !neg)
				set(s, binn_fields[j].col, v);
			break;
		}
	}
	if (sshbuf_len(o) != 0) {
		r = SSH_ERR_UNEXPECTED_TRAILING_DATA;
		goto out;
	}
	s->time = sent <= now ? (sent + now) / 2 : now;
	r = 0;
 out:
	sshbuf_free(o);
	sshbuf_free(b);
	return r;
}

/* The session log: what each session channel runs, and since when. */
static struct hpn_session {
	int	chanid;		/* -1: free */
	double	start;
	char	*what;
} *sess;
static u_int nsess;

void
hpn_session_started(int chanid, const char *subsys, const char *command)
{
	u_int i;
	char *what;

	if (subsys != NULL)
		xasprintf(&what, "subsystem %s", subsys);
	else if (command != NULL)
		xasprintf(&what, "command \"%.100s%s\"", command,
		    strlen(command) > 100 ? "..." : "");
	else
		what = xstrdup("shell");
	for (i = 0; i < nsess; i++)
		if (sess[i].chanid == -1 || sess[i].chanid == chanid)
			break;
	if (i == nsess) {
		sess = xrecallocarray(sess, nsess, nsess + 1, sizeof(*sess));
		nsess++;
	}
	free(sess[i].what);
	sess[i].chanid = chanid;
	sess[i].start = monotime_double();
	sess[i].what = what;
}

/* session.c: a session's channel closes; one line at INFO. */
void
hpn_session_log(struct ssh *ssh, int chanid, const char *user)
{
	struct hpn_session *s = NULL;
	Channel *c;
	const char *cin, *cout, *mptcp;
	char cipher[160], mp[128];
	double dt;
	u_int i;

	for (i = 0; i < nsess; i++)
		if (sess[i].chanid == chanid)
			s = &sess[i];
	if (s == NULL || (c = channel_by_id(ssh, chanid)) == NULL)
		return;
	dt = monotime_double() - s->start;
	cin = hpn_cipher_name(MODE_IN);
	cout = hpn_cipher_name(MODE_OUT);
	if (strcmp(cin, cout) == 0)
		snprintf(cipher, sizeof(cipher), "%s", cin);
	else
		snprintf(cipher, sizeof(cipher), "%s in, %s out", cin, cout);
	mptcp = hpn_mptcp_describe(ssh_packet_get_connection_in(ssh), mp,
	    sizeof(mp));
	logit("Session transfer: user %s from %.200s port %d, %s: "
	    "%llu bytes in, %llu bytes out, %.2f s, %.1f MB/s, peak window "
	    "%u, cipher %s%s%s", user, ssh_remote_ipaddr(ssh),
	    ssh_remote_port(ssh), s->what,
	    (unsigned long long)c->hpn_rx, (unsigned long long)c->hpn_tx, dt,
	    dt > 0 ? (c->hpn_rx + c->hpn_tx) / dt / 1e6 : 0.0,
	    c->local_window_max, cipher, mptcp ? ", " : "",
	    mptcp ? mptcp : "");
	free(s->what);
	s->what = NULL;
	s->chanid = -1;
}
