/*
 * HPN patch set: less work per packet in packet.c.
 *
 * Padding.  Every packet carries 4 to 255 bytes of random padding, which
 * upstream takes from arc4random_buf() packet by packet.  Where the C
 * library's arc4random is a thin wrapper around getrandom(2) (glibc 2.36 to
 * 2.40), that is one system call per packet: a third of all the system
 * calls of a bulk transfer's sender.  hpn_packet_padding() hands out bytes
 * of a HPN_PAD_POOL-byte pool filled from arc4random_buf() in one call, so
 * one system call serves some hundreds of packets.  The bytes are the same
 * kind (the system's random source), each used once; the pool is wiped
 * as it is used, and emptied in a child after fork() so that parent and
 * child never send the same bytes.
 *
 * Packet buffers.  upstream's sshbuf_reset() wipes a buffer's whole
 * allocation and shrinks it to 256 bytes (a new allocation, the old one
 * wiped again), and packet.c resets the outgoing packet before and after
 * every packet and the incoming one before every packet: for a bulk
 * transfer about three bytes cleared for every byte moved, and an
 * allocation per packet, on each end.  Channel data packets (the bulk)
 * now leave their buffer as it is for the next packet to overwrite; any
 * other packet (authentication, key exchange, requests) is still wiped
 * as upstream does, before and after.  The data of channel packets is
 * not wiped elsewhere either: it sits in the channel's own buffers, which
 * upstream empties without wiping.  Every buffer is still wiped when
 * freed.
 *
 * Reads of the connection.  Upstream reads at most PACKET_MAX_SIZE (256
 * KiB) of the connection per trip round the loop.  A read that filled
 * what it asked for has likely left more in the socket, which the next
 * trip's ppoll() then reports at once: a ppoll() and a read more per
 * quarter megabyte.  hpn_packet_read() asks for twice as much after a
 * read that came back full, up to HPN_NET_READ_MAX, and for less again
 * (down to upstream's size) after one that came back at a quarter or
 * less.  A trip adds at most HPN_NET_READ_MAX to the input buffer, and
 * its whole packets are processed before the next read, as before.
 */

#include "includes.h"

#include <sys/types.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "openbsd-compat/openbsd-compat.h"

#include "misc.h"
#include "ssh2.h"
#include "sshbuf.h"
#include "ssherr.h"
#include "hpn.h"

static struct {
	u_char	 pool[HPN_PAD_POOL];
	size_t	 avail;		/* unused bytes at the pool's end */
} pad;

static pthread_once_t pad_once = PTHREAD_ONCE_INIT;

int hpn_pad_test_fixed;		/* tests: padding of 0xa5 bytes */
u_int64_t hpn_data_direct;	/* data packets sent without a copy */
u_int64_t hpn_data_opened;	/* data packets opened into a channel */

static void
pad_atfork_child(void)
{
	explicit_bzero(&pad, sizeof(pad));
}

static void
pad_init(void)
{
	(void)pthread_atfork(NULL, NULL, pad_atfork_child);
}

void
hpn_packet_padding(u_char *p, size_t len)
{
	size_t n;

	if (hpn_pad_test_fixed) {
		memset(p, 0xa5, len);
		return;
	}
	(void)pthread_once(&pad_once, pad_init);
	while (len > 0) {
		if (pad.avail == 0) {
			arc4random_buf(pad.pool, sizeof(pad.pool));
			pad.avail = sizeof(pad.pool);
		}
		n = MINIMUM(len, pad.avail);
		memcpy(p, pad.pool + sizeof(pad.pool) - pad.avail, n);
		explicit_bzero(pad.pool + sizeof(pad.pool) - pad.avail, n);
		pad.avail -= n;
		p += n;
		len -= n;
	}
}

/*
 * The plaintext of a channel data packet other than the data, as
 * ssh_packet_send2_wrapped() lays it out where the packet length is not
 * encrypted with the rest (AEAD ciphers): into hdr (HPN_DATA_HDR bytes)
 * the length, padding length, type, channel and data length; into pad
 * the padding (*padlenp bytes, at most HPN_DATA_PAD_MAX).  Returns the
 * packet's length on the wire without its tag, or 0 if it cannot be
 * built.
 */
u_int
hpn_packet_data_parts(u_char *hdr, u_char *pad, u_int block_size,
    u_int32_t id, size_t len, u_int *padlenp)
{
	size_t body = 1 + 1 + 4 + 4 + len;	/* all but the length */
	u_int padlen;

	*padlenp = 0;
	if (block_size < 8 || block_size > 32 || len > UINT32_MAX - 1024)
		return 0;
	padlen = block_size - (body % block_size);
	if (padlen < 4)
		padlen += block_size;
	if (padlen > HPN_DATA_PAD_MAX)
		return 0;
	POKE_U32(hdr, body + padlen);
	hdr[4] = padlen;
	hdr[5] = SSH2_MSG_CHANNEL_DATA;
	POKE_U32(hdr + 6, id);
	POKE_U32(hdr + 10, len);
	hpn_packet_padding(pad, padlen);
	*padlenp = padlen;
	hpn_data_direct++;
	return 4 + body + padlen;
}

/* The bulk: data and extended data of a channel. */
static int
bulk_type(u_char type)
{
	return type == SSH2_MSG_CHANNEL_DATA ||
	    type == SSH2_MSG_CHANNEL_EXTENDED_DATA;
}

/* The outgoing packet buffer that holds no more than channel data. */
static const struct sshbuf *out_kept;

/*
 * Empty the outgoing packet buffer b before a packet of this type is built
 * in it: as upstream (wiped, shrunk) unless the packet is channel data and
 * b holds at most channel data.
 */
void
hpn_packet_out_start(struct sshbuf *b, u_char type)
{
	if (!bulk_type(type) || out_kept != b ||
	    sshbuf_consume(b, sshbuf_len(b)) != 0)
		sshbuf_reset(b);
	out_kept = bulk_type(type) ? b : NULL;
}

/* The same after a packet of this type went out of b. */
void
hpn_packet_out_sent(struct sshbuf *b, u_char type)
{
	if (!bulk_type(type) || out_kept != b ||
	    sshbuf_consume(b, sshbuf_len(b)) != 0)
		sshbuf_reset(b);
	out_kept = b;		/* wiped, or channel data */
}

static const struct sshbuf *in_kept;	/* last held channel data */

/* The incoming packet buffer b held a packet of this type. */
void
hpn_packet_in_type(const struct sshbuf *b, u_char type)
{
	in_kept = bulk_type(type) ? b : NULL;
}

/* Empty the incoming packet buffer b before the next packet. */
void
hpn_packet_in_reset(struct sshbuf *b)
{
	if (in_kept == b && sshbuf_consume(b, sshbuf_len(b)) == 0)
		return;
	in_kept = NULL;
	sshbuf_reset(b);
}

static size_t net_read_len;	/* the next read of the connection */

/*
 * sshbuf_read() of the connection fd into b, asking for dflt (upstream's
 * PACKET_MAX_SIZE) or more after reads that came back full.
 */
int
hpn_packet_read(int fd, struct sshbuf *b, size_t dflt, size_t *rlenp)
{
	size_t want = net_read_len < dflt ? dflt : net_read_len, got = 0;
	int r;

	if (want > HPN_NET_READ_MAX)
		want = MAXIMUM(dflt, HPN_NET_READ_MAX);
	r = sshbuf_read(fd, b, want, &got);
	if (r == 0 && got >= want && want < HPN_NET_READ_MAX)
		net_read_len = MINIMUM(want * 2, HPN_NET_READ_MAX);
	else if (r == 0 && got <= want / 4 && want > dflt)
		net_read_len = want / 2;
	if (rlenp != NULL)
		*rlenp = got;
	return r;
}
