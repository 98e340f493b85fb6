/*
 * HPN patch set: TCP stack metrics, hpnssh's side.
 *
 * With Metrics yes, hpnssh samples its connection (hpn-metrics.c) when the
 * session starts, every MetricsInterval, and when it ends, into
 * MetricsPath.local; it asks the server for the same sample of its end
 * each time (HPN_METRICS_REQUEST; an HPN-SSH server, its own request,
 * HPN_METRICS_REQUEST_HPNSSH) and writes the answers to
 * MetricsPath.remote, stamped with the server's clock when that falls
 * between request and answer on ours (else the nearer bound; HPN-SSH's
 * answer has no clock: halfway), so that both files share one time axis.  A server
 * that does not answer (stock OpenSSH, PermitMetrics no) leaves local
 * metrics only, said in one line.  Both files are opened before
 * connecting: a path that cannot be written stops hpnssh before any data
 * moves.
 *
 * With Metrics yes or -v, one line at the end says what limited the
 * transfer (hpn_metrics_summary()); with -v alone nothing is written, and
 * only an HPN server is asked.  The session's end waits for the server's
 * last answer, at most HPN_M_FINAL_WAIT seconds.
 *
 * Linked into hpnssh only.
 */

#include "includes.h"

#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "xmalloc.h"
#include "log.h"
#include "misc.h"
#include "sshbuf.h"
#include "ssherr.h"
#include "ssh2.h"
#include "packet.h"
#include "channels.h"
#include "clientloop.h"
#include "hpn.h"
#include "hpn-metrics.h"

#define HPN_M_FINAL_WAIT	3.0	/* seconds */

struct pending {
	double	sent;		/* Unix time */
	int	final;
};

static struct {
	int	files;		/* Metrics yes */
	int	active;		/* sampling */
	int	interval_ms;
	char	*path_local, *path_remote;
	FILE	*local, *remote;
	int	ask;		/* ask the server */
	int	periodic;	/* ... at every interval, not only start, end */
	int	answers;	/* 1: the server answers; 0: not known; -1: no */
	int	hpnssh;		/* the server is HPN-SSH: its request, its format */
	u_int	outstanding;
	double	next;		/* monotonic time of the next sample */
	int	final;		/* 1: last answer asked for; 2: finished */
	double	final_by;
	int	write_failed;
	struct hpn_mend loc, rem;
} m = { .interval_ms = HPN_METRICS_INTERVAL };

static double
now_unix(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static FILE *
open_csv(const char *path)
{
	FILE *f;

	if ((f = fopen(path, "w")) == NULL)
		fatal("MetricsPath: cannot write %s: %s", path,
		    strerror(errno));
	hpn_msample_header(f);
	if (fflush(f) != 0)
		fatal("MetricsPath: cannot write %s: %s", path,
		    strerror(errno));
	return f;
}

/* ssh.c, before connecting: the options, and the files opened. */
void
hpn_metrics_open(int on, int interval_ms, const char *path)
{
	char *p;

	m.files = on;
	m.interval_ms = interval_ms;
	if (!on)
		return;
	p = tilde_expand_filename(path, getuid());
	xasprintf(&m.path_local, "%s.local", p);
	xasprintf(&m.path_remote, "%s.remote", p);
	free(p);
	m.local = open_csv(m.path_local);
	m.remote = open_csv(m.path_remote);
}

static void
row(FILE **fp, const char *path, const struct hpn_msample *s)
{
	if (*fp == NULL)
		return;
	hpn_msample_row(*fp, s);
	if (fflush(*fp) != 0 || ferror(*fp)) {
		error("Metrics: cannot write %s: %s; no more samples are "
		    "written", path, strerror(errno));
		fclose(*fp);
		*fp = NULL;
	}
}

static void
sample_local(struct ssh *ssh)
{
	struct hpn_msample s;

	if (hpn_metrics_take(ssh, &s) == 0 && m.loc.n == 0)
		verbose("Metrics: the connection is not a TCP socket here "
		    "(ProxyCommand?): no TCP fields on this end");
	row(&m.local, m.path_local, &s);
	hpn_mend_add(&m.loc, &s);
}

static void
finish(struct ssh *ssh)
{
	char line[512];

	if (!m.active)
		return;
	sample_local(ssh);
	m.active = 0;
	m.final = 2;
	if (hpn_metrics_summary(&m.loc, &m.rem, line, sizeof(line)) == 0) {
		if (m.files)
			logit("Metrics: %s", line);
		else
			verbose("Metrics: %s", line);
	}
	if (m.local != NULL && fclose(m.local) != 0)
		error("Metrics: cannot write %s: %s", m.path_local,
		    strerror(errno));
	if (m.remote != NULL && fclose(m.remote) != 0)
		error("Metrics: cannot write %s: %s", m.path_remote,
		    strerror(errno));
	m.local = m.remote = NULL;
	hpn_mend_free(&m.loc);
	hpn_mend_free(&m.rem);
}

/* Ours, or HPN-SSH's toward an HPN-SSH server (its answer its format). */
static const char *
request_name(void)
{
	return m.hpnssh ? HPN_METRICS_REQUEST_HPNSSH : HPN_METRICS_REQUEST;
}

static void
remote_reply(struct ssh *ssh, int type, u_int32_t seq, void *ctx)
{
	struct pending *p = ctx;
	struct hpn_msample s;
	const u_char *d;
	size_t len;
	int r, final = p->final;

	if (m.outstanding > 0)
		m.outstanding--;
	if (type == SSH2_MSG_REQUEST_SUCCESS && m.answers >= 0) {
		d = sshpkt_ptr(ssh, &len);
		if ((r = (m.hpnssh ? hpn_metrics_binn_reply :
		    hpn_metrics_reply)(d, len, p->sent, now_unix(),
		    &s)) != 0) {
			error_fr(r, "Metrics: a malformed answer from the "
			    "server; ignored");
		} else {
			row(&m.remote, m.path_remote, &s);
			hpn_mend_add(&m.rem, &s);
			m.answers = 1;
		}
	} else if (m.answers == 0) {
		m.answers = -1;
		if (m.files) {
			logit("Metrics: the server gives no metrics (it does "
			    "not answer %s): local metrics only, in %s",
			    request_name(), m.path_local);
			if (m.remote != NULL)
				fclose(m.remote);
			m.remote = NULL;
			if (unlink(m.path_remote) != 0)
				debug_f("unlink %s: %s", m.path_remote,
				    strerror(errno));
		} else
			debug("Metrics: the server gives no metrics");
	} else
		debug_f("a metrics request refused (rate limit?)");
	free(p);
	if (final && m.active)
		finish(ssh);
}

static void
ask_remote(struct ssh *ssh, int final)
{
	struct pending *p;
	int r;

	if (!m.ask || m.answers < 0 || (m.outstanding > 0 && !final))
		return;
	p = xcalloc(1, sizeof(*p));
	p->sent = now_unix();
	p->final = final;
	if ((r = sshpkt_start(ssh, SSH2_MSG_GLOBAL_REQUEST)) != 0 ||
	    (r = sshpkt_put_cstring(ssh, request_name())) != 0 ||
	    (r = sshpkt_put_u8(ssh, 1)) != 0 ||	/* want reply */
	    (r = sshpkt_send(ssh)) != 0)
		fatal_fr(r, "send metrics request");
	client_register_global_confirm(remote_reply, p);
	m.outstanding++;
}

/* clientloop.c: the session starts (authenticated). */
void
hpn_metrics_start(struct ssh *ssh)
{
	if (m.active || m.final != 0 ||
	    (!m.files && log_level_get() < SYSLOG_LEVEL_VERBOSE))
		return;
	m.active = 1;
	/*
	 * -v alone: our server only (HPN-SSH does not answer our request),
	 * at the start and the end.  Evidence: our EXT_INFO extension, which
	 * came during authentication (hpn-compat.c).
	 */
	m.ask = m.files || hpn_peer_is_ours(ssh);
	/* HPN-SSH (an HPN peer without our EXT_INFO) answers its own */
	m.hpnssh = hpn_peer_is_hpnssh(ssh);
	m.periodic = m.files;
	sample_local(ssh);
	ask_remote(ssh, 0);
	m.next = monotime_double() + m.interval_ms / 1e3;
}

/* clientloop.c, before it waits: sample when due; wake up for the next. */
void
hpn_metrics_poll(struct ssh *ssh, struct timespec *timeout)
{
	double now, due;

	if (!m.active)
		return;
	now = monotime_double();
	if (m.final == 0 && now >= m.next) {
		sample_local(ssh);
		if (m.periodic)
			ask_remote(ssh, 0);
		m.next += m.interval_ms / 1e3;
		if (m.next <= now)
			m.next = now + m.interval_ms / 1e3;
	}
	due = m.final == 1 ? m.final_by : m.next;
	ptimeout_deadline_ms(timeout, due > now ?
	    (long)((due - now) * 1000) + 1 : 0);
}

/*
 * clientloop.c: the session has closed.  Returns 1 when the client may
 * end, 0 while the server's last sample is awaited.
 */
int
hpn_metrics_done(struct ssh *ssh)
{
	if (!m.active)
		return 1;
	if (m.final == 0) {
		if (m.ask && m.answers >= 0) {
			ask_remote(ssh, 1);
			m.final = 1;
			m.final_by = monotime_double() + HPN_M_FINAL_WAIT;
			return 0;
		}
		finish(ssh);
		return 1;
	}
	if (monotime_double() >= m.final_by) {
		debug("Metrics: no last answer from the server within %.0f s",
		    HPN_M_FINAL_WAIT);
		finish(ssh);
	}
	return !m.active;
}

/* clientloop.c: the client loop has ended, however. */
void
hpn_metrics_end(struct ssh *ssh)
{
	char what[128];

	/* UseMPTCP: what the connection turned out to be */
	if (hpn_mptcp_describe(ssh_packet_get_connection_in(ssh), what,
	    sizeof(what)) != NULL)
		verbose("Connection: %s", what);
	finish(ssh);
}
