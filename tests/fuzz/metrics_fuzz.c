/*
 * Fuzz harness: TCP metrics (hpn-metrics.c): the answer hpnsshd gives to
 * the tcp-info@ global request, as hpnssh reads it (hpn_metrics_reply():
 * the (name, u64) pairs, the server's clock checked against ours), then
 * what hpnssh does with it: the CSV row, the summary's state
 * (hpn_mend_add()) and, at the end, the summary line
 * (hpn_metrics_summary()) over these and local samples.  The server's
 * side reads nothing of the request past its name and want-reply flag
 * (upstream's parse); what a client controls there is when it asks, which
 * drives the answer rate limit (hpn_metrics_bucket()), fuzzed too.
 *
 * The input is a sequence of operations:
 *	0  an answer: u16 milliseconds between ask and answer, u16 length,
 *	   the REQUEST_SUCCESS payload
 *	1  a local sample: u64 columns present, a u64 per column present
 *	2  a request reaching the server: u32 milliseconds since the last
 *	3  time passes: u32 milliseconds
 * Checked: a sample taken has only known columns, its time within the
 * ask-answer span; the summary fits its buffer (one the client's size,
 * one of 24 bytes) and is a line of text; the bucket answers at most its
 * burst plus its rate for the time elapsed.
 *
 * HPN_FUZZ_SEEDS=DIR writes the seeds to DIR instead (mkseeds.sh): real
 * samples of a loopback TCP connection (hpn_metrics_take()) composed by
 * hpn_msample_put(), as hpnsshd answers.
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xmalloc.h"
#include "sshbuf.h"
#include "ssherr.h"
#include "log.h"
#include "misc.h"
#include "packet.h"
#include "hpn.h"
#include "hpn-metrics.h"

#include "fuzz-common.h"

int LLVMFuzzerInitialize(int *, char ***);
int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define T0	1.7e9		/* Unix time the inputs start at */
#define OPS	1024

static FILE *devnull;

static void
check_summary(const struct hpn_mend *loc, const struct hpn_mend *rem,
    size_t len)
{
	char buf[512];
	size_t n;
	int r;

	memset(buf, 'x', sizeof(buf));
	r = hpn_metrics_summary(loc, rem, buf, len);
	if (r == -1) {
		if (loc->n != 0 || rem->n != 0)
			fz_bad("no summary of %d and %d samples", loc->n, rem->n);
		return;
	}
	if (r != 0)
		fz_bad("summary returned %d", r);
	if ((n = strnlen(buf, len)) >= len)
		fz_bad("summary not terminated in %zu bytes", len);
	if (memchr(buf, '\n', n) != NULL)
		fz_bad("summary of more than one line");
	if (len < sizeof(buf) && buf[len] != 'x')
		fz_bad("summary written past %zu bytes", len);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	struct hpn_mend loc, rem;
	struct hpn_msample s;
	const uint8_t *p;
	double now = T0, sent, tokens = HPN_M_ANSWER_BURST, last = 0;
	double start = T0;
	u_int64_t have, answered = 0;
	size_t len;
	uint32_t ms;
	uint16_t dt;
	uint8_t op;
	u_int i, k;

	memset(&loc, 0, sizeof(loc));
	memset(&rem, 0, sizeof(rem));
	for (k = 0; k < OPS && fz_u8(&in, &op) == 0; k++) {
		switch (op % 4) {
		case 0:		/* the server's answer */
			if (fz_u16(&in, &dt) != 0 ||
			    fz_bytes(&in, 65535, &p, &len) != 0)
				break;
			sent = now;
			now += dt / 1e3;
			if (hpn_metrics_reply(p, len, sent, now, &s) != 0)
				break;
			if (s.time < sent || s.time > now)
				fz_bad("answer stamped %f, asked %f, taken %f",
				    s.time, sent, now);
			if ((s.have >> HPN_M_NCOLS) != 0)
				fz_bad("unknown columns 0x%llx",
				    (unsigned long long)s.have);
			hpn_msample_row(devnull, &s);
			hpn_mend_add(&rem, &s);
			break;
		case 1:		/* a sample of this end */
			if (fz_u64(&in, &have) != 0)
				break;
			memset(&s, 0, sizeof(s));
			s.time = now;
			s.have = have & (((u_int64_t)1 << HPN_M_NCOLS) - 1);
			for (i = 0; i < HPN_M_NCOLS; i++)
				if ((s.have & ((u_int64_t)1 << i)) != 0 &&
				    fz_u64(&in, &s.v[i]) != 0)
					s.have &= ~((u_int64_t)1 << i);
			hpn_mend_add(&loc, &s);
			break;
		case 2:		/* a request reaching hpnsshd */
			if (fz_u32(&in, &ms) != 0)
				break;
			now += ms / 1e3;
			answered += hpn_metrics_bucket(&tokens, &last, now);
			if (answered > HPN_M_ANSWER_BURST +
			    (now - start) * HPN_M_ANSWER_RATE + 1e-6)
				fz_bad("%llu answers in %f s",
				    (unsigned long long)answered, now - start);
			break;
		case 3:
			if (fz_u32(&in, &ms) == 0)
				now += ms / 1e3;
			break;
		}
	}
	check_summary(&loc, &rem, 512);	/* the client's */
	check_summary(&loc, &rem, 24);
	hpn_mend_free(&loc);
	hpn_mend_free(&rem);
	return 0;
}

/* --- the seeds -------------------------------------------------------- */

/* An answer operation: s as hpnsshd composes it. */
static void
put_answer(struct sshbuf *b, const struct hpn_msample *s, u_int16_t ms)
{
	struct sshbuf *a;
	int r;

	if ((a = sshbuf_new()) == NULL)
		fz_bad("sshbuf_new");
	if ((r = hpn_msample_put(a, s)) != 0 ||
	    (r = sshbuf_put_u8(b, 0)) != 0 ||
	    (r = sshbuf_put_u16(b, ms)) != 0 ||
	    (r = sshbuf_put_u16(b, sshbuf_len(a))) != 0 ||
	    (r = sshbuf_putb(b, a)) != 0)
		fz_bad("compose: %s", ssh_err(r));
	sshbuf_free(a);
}

/* A connected loopback TCP pair. */
static void
tcp_pair(int *a, int *b)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int l;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((l = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
	    bind(l, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
	    listen(l, 1) != 0 ||
	    getsockname(l, (struct sockaddr *)&sin, &len) != 0 ||
	    (*a = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
	    connect(*a, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
	    (*b = accept(l, NULL, NULL)) == -1)
		fz_bad("loopback: %s", strerror(errno));
	close(l);
}

static void
write_seeds(const char *dir)
{
	struct hpn_msample s[4];
	struct sshbuf *b;
	struct ssh *ssh;
	char buf[65536];
	int a, c, i, p[2];

	tcp_pair(&a, &c);
	if ((ssh = ssh_packet_set_connection(NULL, c, c)) == NULL)
		fz_bad("ssh_packet_set_connection");
	/* a session's samples: at its start, as data flows, at its end */
	memset(buf, 'd', sizeof(buf));
	for (i = 0; i < 4; i++) {
		hpn_metrics_take(ssh, &s[i]);
		if (write(a, buf, sizeof(buf)) != sizeof(buf) ||
		    read(c, buf, sizeof(buf)) <= 0)
			fz_bad("loopback: %s", strerror(errno));
		usleep(20000);
	}
	if ((b = sshbuf_new()) == NULL)
		fz_bad("sshbuf_new");
	put_answer(b, &s[0], 12);
	fz_write_seed(dir, "one-answer", b);
	for (i = 1; i < 4; i++) {
		sshbuf_put_u8(b, 3);		/* MetricsInterval passes */
		sshbuf_put_u32(b, 5000);
		put_answer(b, &s[i], 12);
	}
	fz_write_seed(dir, "session", b);
	/* the same, with this end's samples (no TCP: a ProxyCommand) */
	for (i = 0; i < 4; i++) {
		sshbuf_put_u8(b, 1);
		sshbuf_put_u64(b, s[i].have &
		    ~(((u_int64_t)1 << HPN_M_TCP_COLS) - 1));
		for (c = HPN_M_TCP_COLS; c < HPN_M_NCOLS; c++)
			if (s[i].have & ((u_int64_t)1 << c))
				sshbuf_put_u64(b, s[i].v[c]);
	}
	fz_write_seed(dir, "session-both-ends", b);
	sshbuf_reset(b);
	/* an old kernel's answer: TCP_INFO up to pacing_rate */
	s[0].have &= ((u_int64_t)1 << HPN_M_PACING_RATE) * 2 - 1 &
	    ~((u_int64_t)1 << HPN_M_DELIVERY_RATE);
	put_answer(b, &s[0], 1);
	fz_write_seed(dir, "old-kernel", b);
	sshbuf_reset(b);
	/* requests faster than the limit */
	for (i = 0; i < 30; i++) {
		sshbuf_put_u8(b, 2);
		sshbuf_put_u32(b, 10);
	}
	fz_write_seed(dir, "requests-fast", b);
	sshbuf_free(b);
	ssh_packet_close(ssh);
	close(a);
	/* hpnsshd behind a pipe (inetd-like): no TCP fields */
	if (pipe(p) != 0 ||
	    (ssh = ssh_packet_set_connection(NULL, p[0], p[1])) == NULL)
		fz_bad("pipe: %s", strerror(errno));
	hpn_metrics_take(ssh, &s[0]);
	if ((b = sshbuf_new()) == NULL)
		fz_bad("sshbuf_new");
	put_answer(b, &s[0], 3);
	fz_write_seed(dir, "no-tcp", b);
	sshbuf_free(b);
	ssh_packet_close(ssh);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("HPN_FUZZ_SEEDS");

	(void)argc;
	(void)argv;
	fz_init("metrics_fuzz");
	if ((devnull = fopen("/dev/null", "w")) == NULL)
		fz_bad("/dev/null: %s", strerror(errno));
	if (dir != NULL) {
		write_seeds(dir);
		fflush(NULL);
		_exit(0);
	}
	return 0;
}
