/*
 * HPN patch set: fewer, larger reads and writes per trip round the loop.
 *
 * Stock OpenSSH moves at most one packet (32 KiB) per channel per trip
 * round its poll loop: ppoll, read 32 KiB, queue one packet, write it,
 * ppoll again.  At a gigabyte per second that is 30,000 trips a second on
 * each end, each with its ppoll, two sigprocmask calls, a read and a
 * write, and on the far side a pipe write that wakes the consumer for
 * every 32-64 KiB.  The kernel's share of that dominates what a bulk
 * transfer costs once the cipher is cheap (AES-GCM with AES-NI, none).
 * Here, for channels other than terminals and datagram tunnels:
 *
 *  - a channel whose read filled what it asked for asks for twice as
 *    much next time, up to HPN_CHAN_READ_MAX; one whose read came back
 *    short asks for less again, down to the stock CHANNEL_MAX_READ (so
 *    idle and interactive channels keep stock-sized buffers);
 *  - a channel queues up to HPN_CHAN_BURST bytes of packets per trip
 *    (stock: one packet), still taking its turn with the other channels,
 *    so one write carries several packets;
 *  - a pipe the channel reads or writes (a session's stdin and stdout;
 *    hpnssh's own stdin and stdout when they are pipes) is grown to
 *    HPN_PIPE_SIZE (1 MiB, Linux's default fs.pipe-max-size), or to a
 *    quarter of that where the system allows no more, once the channel
 *    shows it moves bulk data through it (a read of HPN_PIPE_GROW_AT came
 *    back full; HPN_PIPE_GROW_AT waits to be written), so that each side
 *    wakes per megabyte rather than per 64 KiB.  The size matches what
 *    one read of the connection brings in (HPN_NET_READ_MAX): with a
 *    smaller pipe the receiver took in a megabyte a trip and wrote a
 *    quarter of it, the rest waiting in the channel's buffer, which
 *    sshbuf then moved to its start about once per megabyte (one byte
 *    copied per byte received, counted by make bench-cpu).  Pipe memory
 *    counts against a per-user budget (fs.pipe-user-pages-soft, 64 MiB by
 *    default), hence not for every channel, and not larger; when the
 *    kernel refuses both sizes, the pipe keeps its size and only speed is
 *    lost.
 *
 * What goes on the wire is unchanged but for where packets end: packets
 * still respect the peer's maximum packet size and window.
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>

#include "openbsd-compat/sys-queue.h"

#include "log.h"
#include "misc.h"
#include "channels.h"
#include "hpn.h"

/* A channel that moves bulk data; the others keep stock behaviour. */
static int
bulk_channel(const Channel *c)
{
	return !c->isatty && !c->datagram;
}

/* How much channel_handle_rfd may read from c->rfd at once. */
size_t
hpn_channel_read_len(const Channel *c)
{
	if (!bulk_channel(c) || c->hpn_read_len < CHANNEL_MAX_READ)
		return CHANNEL_MAX_READ;
	return c->hpn_read_len;
}

/*
 * Grow c's input (which: HPN_PIPE_RFD) or output (HPN_PIPE_WFD) pipe to
 * HPN_PIPE_SIZE, once per channel and side; not a pipe, or already that
 * big: nothing.  A refusal costs speed only.
 */
static void
grow_pipe(Channel *c, int which)
{
#if defined(F_GETPIPE_SZ) && defined(F_SETPIPE_SZ)
	int fd = which == HPN_PIPE_RFD ? c->rfd : c->wfd, sz, want;
	const char *name = which == HPN_PIPE_RFD ? "input" : "output";
	struct stat st;

	if ((c->hpn_pipes & which) != 0)
		return;
	c->hpn_pipes |= which;
	if (fd == -1 || fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode))
		return;
	if ((sz = fcntl(fd, F_GETPIPE_SZ)) == -1 || sz >= HPN_PIPE_SIZE)
		return;
	if (fcntl(fd, F_SETPIPE_SZ, HPN_PIPE_SIZE) != -1)
		want = HPN_PIPE_SIZE;
	else if (sz < HPN_PIPE_SIZE / 4 &&
	    fcntl(fd, F_SETPIPE_SZ, HPN_PIPE_SIZE / 4) != -1)
		want = HPN_PIPE_SIZE / 4;
	else {
		debug3_f("channel %d: %s pipe stays at %d bytes: %s", c->self,
		    name, sz, strerror(errno));
		return;
	}
	debug3_f("channel %d: %s pipe %d -> %d bytes", c->self, name, sz, want);
#endif
}

/* After a read of got bytes out of asked: adapt the next read's size. */
void
hpn_channel_read_done(Channel *c, size_t asked, size_t got)
{
	size_t cur = hpn_channel_read_len(c);

	if (!bulk_channel(c))
		return;
	if (got >= asked && asked >= HPN_PIPE_GROW_AT)
		grow_pipe(c, HPN_PIPE_RFD);
	if (got >= asked && asked >= cur && cur < HPN_CHAN_READ_MAX)
		cur *= 2;
	else if (got < cur / 4 && cur > CHANNEL_MAX_READ)
		cur /= 2;
	c->hpn_read_len = MINIMUM(cur, HPN_CHAN_READ_MAX);
}

/* Before writing len bytes of c->output to c->wfd. */
void
hpn_channel_write_backlog(Channel *c, size_t len)
{
	if (len >= HPN_PIPE_GROW_AT && bulk_channel(c))
		grow_pipe(c, HPN_PIPE_WFD);
}

/* How many packets channel_output_poll may queue for c in one trip. */
u_int
hpn_channel_burst(const Channel *c)
{
	u_int n;

	if (!bulk_channel(c) || c->remote_maxpacket == 0)
		return 1;
	n = HPN_CHAN_BURST / c->remote_maxpacket;
	if (n > HPN_CHAN_BURST_PACKETS)
		n = HPN_CHAN_BURST_PACKETS;
	return n < 1 ? 1 : n;
}
