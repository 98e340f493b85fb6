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
 */

#include "includes.h"

#include <sys/types.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "openbsd-compat/openbsd-compat.h"

#include "misc.h"
#include "sshbuf.h"
#include "hpn.h"

static struct {
	u_char	 pool[HPN_PAD_POOL];
	size_t	 avail;		/* unused bytes at the pool's end */
} pad;

static pthread_once_t pad_once = PTHREAD_ONCE_INIT;


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
