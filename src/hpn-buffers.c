/*
 * HPN patch set: buffer growth that stays linear in the bytes moved.
 *
 * sshbuf grows a buffer to exactly what is needed (256-byte steps), and
 * every growth is a recallocarray: a new allocation, a copy of the whole
 * buffer and the old one wiped.  With the small buffers of stock OpenSSH
 * this is cheap; with the tens of MiB that large windows let accumulate
 * (a channel whose consumer lags, sftp-server's output queue) it is
 * quadratic: filling 64 MiB in 32 KiB steps copies some 64 GiB.  Past
 * HPN_SSHBUF_GEOMETRIC a buffer grows by half of its size at a time
 * instead, so each byte is copied a bounded number of times; near its
 * maximum it grows to the maximum.
 */

#include "includes.h"

#include <sys/types.h>

#include "hpn.h"

size_t
hpn_sshbuf_grow(size_t alloc, size_t want, size_t max_size)
{
	size_t geometric;

	if (want < HPN_SSHBUF_GEOMETRIC)
		return want;
	/*
	 * Near its maximum too: one last growth to the maximum, not a copy
	 * of the whole buffer for every 256 bytes more (a window's data
	 * near a channel buffer's maximum, hundreds of MiB of it).
	 */
	geometric = alloc + alloc / 2;
	if (geometric > max_size)
		geometric = max_size;
	return want > geometric ? want : geometric;
}
