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
 *
 * sftp-server's turns: upstream answers one request per turn of its loop
 * (poll, read, one request, write), so a client with thousands of small
 * requests in flight (a tree of small files: OPEN, WRITE, CLOSE each) gets
 * each reply in a write of its own, and sshd sends each in a packet of its
 * own.  hpn_sftp_server_more() lets it answer every whole request it has
 * read in one turn, until the turn's replies reach HPN_SFTP_TURN_OUT (or
 * the queue HPN_SFTP_OQUEUE_MAX): small replies go out together, large
 * ones (data, a tree's names) as soon as before.  The order is the same.
 */

#include "includes.h"

#include <sys/types.h>

#include "sshbuf.h"
#include "sftp-common.h"
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

/*
 * sftp-server, its output queue oq with room for a reply and holding
 * start bytes when this turn's first request was taken: may it take the
 * next request from its input queue iq now?  Yes when iq holds one whole
 * (or a length process() refuses: it ends the session), fewer than
 * HPN_SFTP_OQUEUE_MAX bytes of replies wait, and this turn's replies are
 * fewer than HPN_SFTP_TURN_OUT bytes (none yet: the first, as upstream).
 */
int
hpn_sftp_server_more(const struct sshbuf *iq, const struct sshbuf *oq,
    size_t start)
{
	const u_char *p = sshbuf_ptr(iq);
	size_t len = sshbuf_len(iq), olen = sshbuf_len(oq);
	u_int32_t mlen;

	if (olen >= HPN_SFTP_OQUEUE_MAX ||
	    (olen > start && olen - start >= HPN_SFTP_TURN_OUT) ||
	    sshbuf_check_reserve(oq, SFTP_MAX_MSG_LENGTH) != 0 || len < 5)
		return 0;
	mlen = PEEK_U32(p);
	return mlen > SFTP_MAX_MSG_LENGTH || len - 4 >= mlen;
}
