/*
 * HPN patch set: SFTP request pipelining sized for long fat paths.
 *
 * An SFTP client keeps a number of read or write requests in flight; their
 * total size bounds the transfer at that much per round trip, exactly like
 * a channel window.  Upstream keeps 64 requests: 2 MiB with 32 KiB requests,
 * 16 MiB with the 255 KiB that OpenSSH servers allow.  Here the count is
 * chosen so that the requests cover the largest channel window an HPN peer
 * grows to (HPN_SFTP_INFLIGHT); the channel's own window still throttles
 * the data, so a count that is larger than needed costs only a few idle
 * request headers.  -R (sftp) and -X nrequests= (scp) still override it.
 * It is computed once the request size is settled (after the server's
 * limits@openssh.com reply), so larger requests mean fewer of them.  Like
 * upstream since 10.1, the server's open-handles figure does not bound it:
 * requests in flight do not hold handles.
 */

#include "includes.h"

#include <sys/types.h>

#include "hpn.h"

u_int
hpn_sftp_num_requests(u_int buflen)
{
	u_int64_t n;

	if (buflen == 0)
		buflen = 32 * 1024;
	n = (HPN_SFTP_INFLIGHT + buflen - 1) / buflen;
	if (n < HPN_SFTP_REQUESTS_MIN)
		n = HPN_SFTP_REQUESTS_MIN;
	if (n > HPN_SFTP_REQUESTS_MAX)
		n = HPN_SFTP_REQUESTS_MAX;
	return (u_int)n;
}
