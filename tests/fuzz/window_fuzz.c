/*
 * Fuzz harness: what a peer's bytes drive in the dynamic windows
 * (hpn-window.c) and around them.
 *
 *  - PING/PONG: packets from the peer go through the packet layer
 *    (ssh_packet_process_incoming(), ssh_packet_read_poll_seqnr(): the
 *    framing and the transport messages it handles itself), so a PONG
 *    reaches hpn_window_pong() through its hook (hpn-window.patch), a
 *    PING is answered by upstream's code, and during a key re-exchange a
 *    message that is not the exchange's ends the connection
 *    (rekey-strict-messages.patch).
 *  - The peer's banner, as our code reads it: its OpenSSH version
 *    (the window cap towards stock 8.4+, whether it answers PING) and its
 *    HPN tag (hpn-compat.c: hpn_peer_is_hpn(), _is_hpnssh(),
 *    _has_hpn_names()).
 *  - A channel, as channels.c keeps it around our hooks: the peer's data
 *    arriving (in packets of at most our packet size, within the window,
 *    as channel_input_data() checks), our consumer taking it, the window check
 *    (hpn_window_adjust_due() deciding growth, sending PINGs, then the
 *    adjust as channel_check_window() sends it), the peer's window
 *    adjusts and initial window and packet size, and our sends
 *    (hpn_channel_sent(), hpn_channel_burst(), hpn_channel_input_max()).
 *
 * The input: the transport (a pipe-like /dev/null, a UNIX socket, a
 * loopback TCP connection), flags (the peer said ping@openssh.com; after
 * authentication; we are the server; a key re-exchange under way;
 * TcpRcvBufPoll no; HPNDisabled), the peer's
 * banner, HPNBufferSize, the channel's starting values, then operations
 * (see LLVMFuzzerTestOneInput()).  Checked: the window never shrinks
 * but to the hold of a path whose rate stopped growing (window_hold(): a
 * lowest TCP RTT of 20 ms or more, which the loopback connection here
 * never has, so that code is not reached),
 * never passes its cap (HPNBufferSize, or 15 MiB towards stock OpenSSH
 * 8.4 and later) unless it started above it, and stays at or above what
 * the peer may still send; a burst is 1 to HPN_CHAN_BURST_PACKETS
 * packets; what a channel holds unsent is at most the peer's window and
 * HPN_INPUT_STAGE.
 *
 * hpn-window.c is compiled in, so that its per-connection state starts
 * afresh for every input, and reads the harness's clock, which only the
 * input moves (PING round trips, rates); packet.c too, for the state a
 * connection is in after authentication (what ssh_packet_set_postauth()
 * sets) without a key exchange.  HPN_FUZZ_SEEDS=DIR writes the seeds: sessions
 * with real peers' banners whose PONGs echo the PINGs hpn-window.c sent
 * (taken from the packet layer's output), as a peer does.
 */

#include "includes.h"

#include <sys/types.h>
#include <stdio.h>

#include "misc.h"

/* hpn-window.c's clock is the harness's: round trips and rates as the
 * input says, not as fast as the fuzzer runs */
static double fz_now;
#define monotime_double()	(fz_now)

#include "hpn-window.c"

#undef monotime_double

/* the packet layer too: its state (after authentication, a re-exchange) */
#include "packet.c"
#include "fuzz-packet.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <unistd.h>

#include "xmalloc.h"

#include "fuzz-common.h"

int LLVMFuzzerInitialize(int *, char ***);
int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define OPS		1024
#define OUTPUT_MAX	(1024 * 1024)	/* data kept for our consumer */
#define PACKETS		4096		/* of data in one operation, at most */

static __typeof__(hpn) hpn_fresh;	/* hpn-window.c's state at start */
static struct sshbuf *chan_output;
static int tcp[2] = { -1, -1 };		/* loopback: ours, the peer's */

/*
 * The peer's CHANNEL_DATA, v bytes of it in packets of at most our packet
 * size (PACKETS of them at most), as channel_input_data() takes each with
 * its output open: the bytes counted (hpn_rx), past the window fatal,
 * the window taken down, the data appended unless our consumer's buffer
 * is past OUTPUT_MAX.  Nothing of ours runs between two packets, so they
 * are counted at once, not one by one (a loop of up to PACKETS reserves
 * under the fuzzer's tracing was nine tenths of this harness's time).
 * Returns -1 if a packet was past the window (the channel is left as
 * channel_input_data() leaves it then), else 0.
 */
static int
data_packets(Channel *c, u_int v)
{
	uint64_t mp = c->local_maxpacket, extra = c->datagram ? 4 : 0;
	uint64_t full, rem, fit, keep, out, ok;
	int r, past = 0;

	if (mp == 0)
		return 0;
	full = v / mp;
	rem = v % mp;
	if (full >= PACKETS) {
		full = PACKETS;
		rem = 0;
	}
	/* the full packets the window takes, and the one it refuses */
	ok = MINIMUM(full, c->local_window / mp);
	if (ok < full) {
		past = 1;
		rem = 0;
	}
	c->hpn_rx += ok * (mp + extra) + (past ? mp + extra : 0);
	c->local_window -= ok * mp;
	out = sshbuf_len(c->output);
	fit = out <= OUTPUT_MAX ? (OUTPUT_MAX - out) / mp : 0;
	keep = MINIMUM(ok, fit) * mp;
	/* the last, short packet */
	if (rem > 0) {
		c->hpn_rx += rem + extra;
		if (rem > c->local_window)
			past = 1;
		else {
			c->local_window -= rem;
			if (out + keep + rem <= OUTPUT_MAX)
				keep += rem;
		}
	}
	if (keep > 0 && (r = sshbuf_reserve(c->output, keep, NULL)) != 0)
		fz_bad("reserve: %s", ssh_err(r));
	return past ? -1 : 0;
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
	if (fcntl(*b, F_SETFL, O_NONBLOCK) == -1)
		fz_bad("fcntl: %s", strerror(errno));
}

/* The peer's end of the loopback connection, read empty. */
static void
drain(void)
{
	char buf[65536];

	while (read(tcp[1], buf, sizeof(buf)) > 0)
		;
}

/* payload framed as an unencrypted packet (before the first NEWKEYS). */
static void
frame(struct sshbuf *b, const u_char *payload, size_t len)
{
	size_t pad = 8 - (5 + len) % 8;
	u_char zero[16] = { 0 };
	int r;

	if (pad < 4)
		pad += 8;
	if ((r = sshbuf_put_u32(b, 1 + len + pad)) != 0 ||
	    (r = sshbuf_put_u8(b, pad)) != 0 ||
	    (r = sshbuf_put(b, payload, len)) != 0 ||
	    (r = sshbuf_put(b, zero, pad)) != 0)
		fz_bad("frame: %s", ssh_err(r));
}

/*
 * The peer's packet through the packet layer, as the client and server
 * loops read (an error is fatal there: sshpkt_fatal()).
 */
static void
peer_packet(struct ssh *ssh, const u_char *payload, size_t len)
{
	struct sshbuf *b;
	u_char type;
	u_int32_t seq;
	int r, n;

	if ((b = sshbuf_new()) == NULL)
		fz_bad("sshbuf_new");
	frame(b, payload, len);
	r = ssh_packet_process_incoming(ssh, (const char *)sshbuf_ptr(b),
	    sshbuf_len(b));
	sshbuf_free(b);
	if (r != 0)
		sshpkt_fatal(ssh, r, "process_incoming");
	for (n = 0; n < 4; n++) {
		if ((r = ssh_packet_read_poll_seqnr(ssh, &type, &seq)) != 0)
			sshpkt_fatal(ssh, r, "read");
		if (type == SSH_MSG_NONE)
			break;
		/* the dispatch table's business: not ours */
	}
}

struct chan_start {
	u_int32_t window, maxpacket, rwindow, rmaxpacket;
	u_int8_t kind;			/* bit 0: a tty; bit 1: datagrams */
};

static Channel *
chan_new(const struct chan_start *cs)
{
	Channel *c = xcalloc(1, sizeof(*c));

	c->self = 0;
	c->type = SSH_CHANNEL_OPEN;
	c->remote_name = xstrdup("session");
	c->rfd = c->wfd = c->efd = c->sock = -1;
	c->ostate = CHAN_OUTPUT_OPEN;
	c->istate = CHAN_INPUT_OPEN;
	/* channel_new(): the values the channel was opened with */
	c->local_window = c->local_window_max = c->hpn_window_start =
	    cs->window;
	c->local_maxpacket = cs->maxpacket;
	/* channel_input_open_confirmation(): the peer's */
	c->remote_window = cs->rwindow;
	c->remote_maxpacket = cs->rmaxpacket;
	c->have_remote_id = 1;
	c->isatty = cs->kind & 1;
	c->datagram = (cs->kind & 2) != 0;
	if ((c->input = sshbuf_new()) == NULL ||
	    (c->extended = sshbuf_new()) == NULL)
		fz_bad("sshbuf_new");
	/* the consumer's backlog: one buffer of OUTPUT_MAX for all inputs
	 * (its data is never read: only how much there is matters) */
	c->output = chan_output;
	if (sshbuf_consume(c->output, sshbuf_len(c->output)) != 0)
		fz_bad("consume");
	return c;
}

static void
chan_free(Channel *c)
{
	if (c == NULL)
		return;
	sshbuf_free(c->input);
	sshbuf_free(c->extended);
	free(c->remote_name);
	free(c);
}

/* The session and its state, for cleanup after a fatal(). */
static struct ssh *ssh_now;
static Channel *chan_now;
static int unix_peer = -1;

static void
set_version(struct sshbuf *b, const u_char *v, size_t len)
{
	int r;

	sshbuf_reset(b);
	if ((r = sshbuf_put(b, v, len)) != 0)
		fz_bad("version: %s", ssh_err(r));
}

/* The window check, as channel_check_window() makes it. */
static void
window_check(struct ssh *ssh, Channel *c, u_int cap)
{
	u_int before = c->local_window_max, hold;

	if (hpn_window_adjust_due(ssh, c) && c->local_consumed > 0) {
		/* the WINDOW_ADJUST: the peer may send that much more */
		c->local_window += c->local_consumed;
		c->local_consumed = 0;
	}
	/* shrinks only while held (hpn-window.c window_hold()), to it */
	hold = window_hold();
	if (c->local_window_max < before &&
	    (hold == 0 || c->local_window_max < hold))
		fz_bad("window shrank %u -> %u (hold %u)", before,
		    c->local_window_max, hold);
	if (c->local_window_max > before && c->local_window_max > cap)
		fz_bad("window grew to %u past its cap %u", c->local_window_max,
		    cap);
	if (c->local_window > c->local_window_max)
		fz_bad("window %u over its max %u", c->local_window,
		    c->local_window_max);
}

/* What one input drives: see the top of the file. */
static void
session(struct fz_in *in)
{
	struct chan_start cs;
	struct ssh *ssh;
	Channel *c;
	const uint8_t *p;
	size_t len;
	uint32_t v, max_window;
	uint16_t n16;
	uint8_t transport, flags, op;
	u_int k, cap;
	int fd[2] = { -1, -1 }, r;

	if (fz_u8(in, &transport) != 0 || fz_u8(in, &flags) != 0 ||
	    fz_bytes(in, 255, &p, &len) != 0 ||
	    fz_u32(in, &max_window) != 0 || fz_u32(in, &cs.window) != 0 ||
	    fz_u32(in, &cs.maxpacket) != 0 || fz_u32(in, &cs.rwindow) != 0 ||
	    fz_u32(in, &cs.rmaxpacket) != 0 || fz_u8(in, &cs.kind) != 0)
		return;
	switch (transport % 3) {
	case 0:		/* a pipe: ProxyCommand, ProxyJump */
		if ((fd[0] = open("/dev/null", O_RDWR)) == -1)
			fz_bad("/dev/null: %s", strerror(errno));
		fd[1] = fd[0];
		break;
	case 1:
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, fd) != 0)
			fz_bad("socketpair: %s", strerror(errno));
		unix_peer = fd[1];	/* the peer's end, never read */
		fd[1] = fd[0];
		break;
	case 2:
		if ((fd[0] = dup(tcp[0])) == -1)
			fz_bad("dup: %s", strerror(errno));
		fd[1] = fd[0];
		break;
	}
	if ((ssh = ssh_packet_set_connection(NULL, fd[0], fd[1])) == NULL ||
	    ssh->kex == NULL)
		fz_bad("ssh_packet_set_connection");
	ssh_now = ssh;
	/* the peer's banner: the server's to us, or the client's */
	ssh->kex->server = (flags & 0x04) != 0;
	set_version(ssh->kex->server ? ssh->kex->client_version :
	    ssh->kex->server_version, p, len);
	set_version(ssh->kex->server ? ssh->kex->server_version :
	    ssh->kex->client_version, (const u_char *)"SSH-2.0-OpenSSH_10.3p1"
	    HPN_VERSION_TAG, strlen("SSH-2.0-OpenSSH_10.3p1" HPN_VERSION_TAG));
	(void)hpn_peer_is_hpnssh(ssh);
	(void)hpn_peer_has_hpn_names(ssh);
	if (flags & 0x01)		/* its EXT_INFO said ping@openssh.com */
		ssh->kex->flags |= KEX_HAS_PING;
	/*
	 * After authentication, the first key exchange long done; else
	 * still in it (the packet layer's initial state).  A re-exchange:
	 * the peer's KEXINIT is in.
	 */
	if (flags & 0x02) {
		ssh->state->after_authentication = 1;
		ssh->state->rekeying = 0;
	} else
		ssh->kex->flags |= KEX_INITIAL;
	if (flags & 0x08) {
		if ((r = sshbuf_put_u8(ssh->kex->peer, SSH2_MSG_KEXINIT)) != 0)
			fz_bad("kex: %s", ssh_err(r));
	} else
		ssh->kex->done = 1;
	max_window %= HPN_WINDOW_MAX_LIMIT + 1;		/* HPNBufferSize */
	/* HPNDisabled, TcpRcvBufPoll */
	hpn_window_setup(ssh, (flags & 0x20) != 0, (flags & 0x10) == 0,
	    0, max_window);
	c = chan_now = chan_new(&cs);
	/*
	 * The cap: HPNBufferSize, or less towards a stock OpenSSH 8.4+ (a
	 * window that started above it may stay there).
	 */
	cap = MAXIMUM(window_cap(ssh), cs.window);

	for (k = 0; k < OPS && fz_u8(in, &op) == 0; k++) {
		switch (op % 8) {
		case 0:		/* a packet from the peer */
			if (fz_bytes(in, 4096, &p, &len) == 0)
				peer_packet(ssh, p, len);
			break;
		case 1:		/* CHANNEL_DATA: v bytes in packets */
			if (fz_u32(in, &v) != 0)
				break;
			if (data_packets(c, v) != 0)
				return;	/* past the window */
			break;
		case 2:		/* our consumer takes v bytes */
			if (fz_u32(in, &v) != 0)
				break;
			v = MINIMUM(v, sshbuf_len(c->output));
			if ((r = sshbuf_consume(c->output, v)) != 0)
				fz_bad("consume: %s", ssh_err(r));
			c->local_consumed += v;
			break;
		case 3:		/* the loop checks the window */
			window_check(ssh, c, cap);
			break;
		case 4:		/* the peer's WINDOW_ADJUST */
			if (fz_u32(in, &v) != 0)
				break;
			if (c->remote_window + v < c->remote_window)
				return;		/* overflow: fatal upstream */
			c->remote_window += v;
			break;
		case 5:		/* we send v bytes of our channel's input */
			if (fz_u32(in, &v) != 0)
				break;
			if (hpn_channel_burst(c) < 1 ||
			    hpn_channel_burst(c) > HPN_CHAN_BURST_PACKETS)
				fz_bad("burst of %u packets",
				    hpn_channel_burst(c));
			if (hpn_channel_input_max(c) > c->remote_window ||
			    hpn_channel_input_max(c) > HPN_INPUT_STAGE)
				fz_bad("%zu unsent held, peer's window %u",
				    hpn_channel_input_max(c),
				    c->remote_window);
			/* channel_output_poll_input_open() */
			v = MINIMUM(v, MINIMUM(c->remote_window,
			    c->remote_maxpacket));
			if ((r = sshbuf_put_u8(c->input, 0)) != 0)
				fz_bad("input: %s", ssh_err(r));
			hpn_channel_sent(c, v);
			c->remote_window -= v;
			sshbuf_reset(c->input);
			break;
		case 6:		/* our read of the channel's input */
			if (fz_u16(in, &n16) != 0)
				break;
			len = hpn_channel_read_len(c);
			hpn_channel_read_done(c, len, MINIMUM(n16 * 16, len));
			if (hpn_channel_read_len(c) > HPN_CHAN_READ_MAX)
				fz_bad("a read of %zu", hpn_channel_read_len(c));
			break;
		case 7:		/* time passes: u16 ms */
			if (fz_u16(in, &n16) == 0)
				fz_now += n16 / 1e3;
			break;
		}
	}
	hpn_channel_summary(c);		/* the peer's CHANNEL_CLOSE */
}

static void
end_session(void)
{
	chan_free(chan_now);
	chan_now = NULL;
	fz_connection_free(ssh_now);
	ssh_now = NULL;
	if (unix_peer != -1)
		close(unix_peer);
	unix_peer = -1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	int fd, base_fd;

	/* the lowest free descriptor: the same after the input */
	if ((base_fd = dup(0)) == -1)
		fz_bad("dup: %s", strerror(errno));
	close(base_fd);
	hpn = hpn_fresh;
	memset(&stats, 0, sizeof(stats));
	fz_now = 1000;
	if (FZ_STEP(session(&in)) == 0)
		end_session();
	else {
		end_session();
		fz_step_release();
	}
	drain();
	if ((fd = dup(0)) != base_fd)
		fz_bad("descriptor %d free after the input, %d before", fd,
		    base_fd);
	close(fd);
	return 0;
}

/* --- the seeds -------------------------------------------------------- */

static struct sshbuf *seedbuf;

static void
put_head(u_int8_t transport, u_int8_t flags, const char *banner,
    u_int32_t max_window, u_int32_t window, u_int32_t maxpacket,
    u_int32_t rwindow, u_int32_t rmaxpacket)
{
	sshbuf_reset(seedbuf);
	if (sshbuf_put_u8(seedbuf, transport) != 0 ||
	    sshbuf_put_u8(seedbuf, flags) != 0 ||
	    sshbuf_put_u16(seedbuf, strlen(banner)) != 0 ||
	    sshbuf_put(seedbuf, banner, strlen(banner)) != 0 ||
	    sshbuf_put_u32(seedbuf, max_window) != 0 ||
	    sshbuf_put_u32(seedbuf, window) != 0 ||
	    sshbuf_put_u32(seedbuf, maxpacket) != 0 ||
	    sshbuf_put_u32(seedbuf, rwindow) != 0 ||
	    sshbuf_put_u32(seedbuf, rmaxpacket) != 0 ||
	    sshbuf_put_u8(seedbuf, 0) != 0)
		fz_bad("seed");
}

static void
put_op(u_int8_t op, u_int32_t v)
{
	int r = sshbuf_put_u8(seedbuf, op);

	if (r == 0 && (op == 6 || op == 7))
		r = sshbuf_put_u16(seedbuf, v);
	else if (r == 0 && op != 3)
		r = sshbuf_put_u32(seedbuf, v);
	if (r != 0)
		fz_bad("seed");
}

static void
put_packet(const u_char *payload, size_t len)
{
	if (sshbuf_put_u8(seedbuf, 0) != 0 ||
	    sshbuf_put_u16(seedbuf, len) != 0 ||
	    sshbuf_put(seedbuf, payload, len) != 0)
		fz_bad("seed");
}

/*
 * A bulk download over a pipe: data arrives and is consumed, the window
 * check sends PINGs (hpn-window.c), and the peer answers each with the
 * PONG it makes of it (upstream's packet.c: the PING's string echoed),
 * taken from what our packet layer queued.
 */
static void
seed_session(const char *dir, const char *name, u_int8_t transport,
    const char *banner, u_int8_t flags)
{
	struct chan_start cs = { 2 * 1024 * 1024, 32768, 2 * 1024 * 1024,
	    32768, 0 };
	struct ssh *ssh;
	struct sshbuf *out;
	Channel *c;
	const u_char *d;
	u_char *pong;
	size_t dlen;
	u_int32_t plen;
	u_int i;
	int fd;

	put_head(transport, flags, banner, HPN_WINDOW_MAX_DEFAULT, cs.window,
	    cs.maxpacket, cs.rwindow, cs.rmaxpacket);
	hpn = hpn_fresh;
	fz_now = 1000;
	if ((fd = open("/dev/null", O_RDWR)) == -1 ||
	    (ssh = ssh_packet_set_connection(NULL, fd, fd)) == NULL ||
	    ssh->kex == NULL)
		fz_bad("seed session");
	set_version(ssh->kex->server_version, (const u_char *)banner,
	    strlen(banner));
	set_version(ssh->kex->client_version, (const u_char *)"SSH-2.0-x", 9);
	if (flags & 0x01)
		ssh->kex->flags |= KEX_HAS_PING;
	if (flags & 0x02) {
		ssh->state->after_authentication = 1;
		ssh->state->rekeying = 0;
	}
	ssh->kex->done = 1;
	hpn_window_setup(ssh, 0, 1, 0, HPN_WINDOW_MAX_DEFAULT);
	c = chan_new(&cs);
	out = ssh_packet_get_output(ssh);
	for (i = 0; i < 16; i++) {
		/* a window's data arrives in a round trip, and is consumed */
		put_op(1, c->local_window);
		c->hpn_rx += c->local_window;
		c->local_consumed += c->local_window;
		put_op(2, c->local_window);
		c->local_window = 0;
		put_op(3, 0);
		window_check(ssh, c, HPN_WINDOW_MAX_DEFAULT);
		put_op(7, 100);		/* a round trip of 100 ms */
		fz_now += 0.1;
		/* the PINGs hpn-window.c queued, answered */
		while (sshbuf_len(out) > 5) {
			plen = PEEK_U32(sshbuf_ptr(out));
			d = sshbuf_ptr(out) + 5;
			if (d[0] == SSH2_MSG_PING) {
				dlen = PEEK_U32(d + 1);
				pong = xmalloc(5 + dlen);
				pong[0] = SSH2_MSG_PONG;
				memcpy(pong + 1, d + 1, 4 + dlen);
				put_packet(pong, 5 + dlen);
				hpn_window_pong(ssh, pong + 5, dlen);
				free(pong);
			}
			if (sshbuf_consume(out, 4 + plen) != 0)
				fz_bad("consume");
		}
	}
	fz_write_seed(dir, name, seedbuf);
	chan_free(c);
	ssh_packet_free(ssh);
}

static void
write_seeds(const char *dir)
{
	static const u_char ignore[] = { SSH2_MSG_IGNORE, 0, 0, 0, 0 };
	static const u_char ping[] = { SSH2_MSG_PING, 0, 0, 0, 3, 'a', 'b',
	    'c' };
	static const u_char data[] = { 94, 0, 0, 0, 0, 0, 0, 0, 1, 'x' };
	static const char *banners[] = {
		"SSH-2.0-OpenSSH_10.3p1" HPN_VERSION_TAG,
		"SSH-2.0-OpenSSH_10.2p1_hpn18.8.0",
		"SSH-2.0-OpenSSH_9.9p1-hpn18.6.0",
		"SSH-2.0-OpenSSH_8.0p1-HPN14v16",
		"SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u6",
		"SSH-2.0-OpenSSH_8.4p1 Debian-5+deb11u3",
		"SSH-2.0-OpenSSH_7.4",
		"SSH-2.0-OpenSSH_for_Windows_8.6",
		"SSH-2.0-PuTTY_Release_0.78",
		"SSH-2.0-dropbear_2022.83",
		NULL
	};
	char name[64];
	u_int i;

	if ((seedbuf = sshbuf_new()) == NULL)
		fz_bad("sshbuf_new");
	for (i = 0; banners[i] != NULL; i++) {
		snprintf(name, sizeof(name), "pipe-%u", i);
		seed_session(dir, name, 0, banners[i], 0x03);
	}
	seed_session(dir, "pipe-no-ping-ext", 0, banners[4], 0x02);
	/* over TCP: the socket's buffer and RTT */
	put_head(2, 0x03, banners[0], HPN_WINDOW_MAX_DEFAULT, 2097152, 32768,
	    2097152, 32768);
	for (i = 0; i < 128; i++) {
		put_op(1, 32768);
		put_op(2, 32768);
		put_op(3, 0);
		put_op(5, 32768);
		put_op(4, 32768);
		put_op(7, 10);
	}
	fz_write_seed(dir, "tcp-bulk", seedbuf);
	/* a PING answered, IGNORE, and channel data in a re-exchange */
	put_head(1, 0x0b, banners[5], HPN_WINDOW_MAX_DEFAULT, 2097152, 32768,
	    0, 0);
	put_packet(ignore, sizeof(ignore));
	put_packet(ping, sizeof(ping));
	put_packet(data, sizeof(data));
	fz_write_seed(dir, "rekey-strict", seedbuf);
	put_head(1, 0x03, banners[5], HPN_WINDOW_MAX_DEFAULT, 2097152, 32768,
	    0, 0);
	put_packet(ping, sizeof(ping));
	put_packet(data, sizeof(data));
	fz_write_seed(dir, "ping", seedbuf);
	sshbuf_free(seedbuf);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("HPN_FUZZ_SEEDS");

	(void)argc;
	(void)argv;
	fz_init("window_fuzz");
	signal(SIGPIPE, SIG_IGN);	/* as ssh and sshd */
	hpn_fresh = hpn;
	tcp_pair(&tcp[0], &tcp[1]);
	/*
	 * Twice the most it holds: with that room sshbuf_allocate() packs
	 * instead of reallocating (a reallocation in a step that ended in
	 * fatal() would be freed with the step's leftovers, and the buffer,
	 * kept for every input, read after the free)
	 */
	if ((chan_output = sshbuf_new()) == NULL ||
	    sshbuf_allocate(chan_output, 2 * OUTPUT_MAX) != 0)
		fz_bad("sshbuf_allocate");
	if (dir != NULL) {
		write_seeds(dir);
		fflush(NULL);
		_exit(0);
	}
	return 0;
}
