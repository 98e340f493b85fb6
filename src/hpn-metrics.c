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

/* serverloop.c: a client's HPN_METRICS_REQUEST; 1 with *respp: answer. */
int
hpn_metrics_answer(struct ssh *ssh, struct sshbuf **respp)
{
	struct hpn_msample s;
	struct sshbuf *b;
	int r;

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
