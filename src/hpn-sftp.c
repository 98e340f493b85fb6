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
 */

#include "includes.h"

#include <sys/types.h>

#include "hpn.h"

u_int
hpn_sftp_num_requests(u_int buflen, u_int64_t open_handles)
{
	u_int64_t n;

	if (buflen == 0)
		buflen = 32 * 1024;
	n = (HPN_SFTP_INFLIGHT + buflen - 1) / buflen;
	if (n < HPN_SFTP_REQUESTS_MIN)
		n = HPN_SFTP_REQUESTS_MIN;
	if (n > HPN_SFTP_REQUESTS_MAX)
		n = HPN_SFTP_REQUESTS_MAX;
	/* The server's limit, as upstream uses it: scale down only. */
	if (open_handles != 0 && n > open_handles)
		n = open_handles;
	return (u_int)n;
}
