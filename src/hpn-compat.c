/*
 * HPN patch set: telling HPN peers from others.
 *
 * An HPN peer (this patch set, or HPN-SSH) carries "hpn" in the software
 * version field of its banner, e.g. "SSH-2.0-OpenSSH_10.3p1_hpn0.1.0".
 * Only that field is looked at, not the free-form comment after it.
 */

#include "includes.h"

#include <string.h>

#include "sshbuf.h"
#include "packet.h"
#include "kex.h"
#include "hpn.h"

/*
 * The "hpn" in the peer's software version, or NULL.  *endp is set to the
 * end of the software version field.
 */
static const char *
peer_hpn_tag(struct ssh *ssh, const char **endp)
{
	const struct sshbuf *b;
	const char *p, *end;
	size_t len;

	if (ssh == NULL || ssh->kex == NULL)
		return NULL;
	b = ssh->kex->server ? ssh->kex->client_version :
	    ssh->kex->server_version;
	if (b == NULL || (len = sshbuf_len(b)) == 0)
		return NULL;
	p = (const char *)sshbuf_ptr(b);
	end = p + len;
	/* "SSH-2.0-softwareversion SP comments": skip protoversion. */
	if (len < 8 || strncmp(p, "SSH-", 4) != 0 ||
	    (p = memchr(p + 4, '-', len - 4)) == NULL)
		return NULL;
	for (p++; p + 3 <= end && *p != ' ' && *p != '\r' && *p != '\n'; p++) {
		if (strncasecmp(p, "hpn", 3) == 0) {
			*endp = end;
			return p;
		}
	}
	return NULL;
}

int
hpn_peer_is_hpn(struct ssh *ssh)
{
	const char *end;

	return peer_hpn_tag(ssh, &end) != NULL;
}

/* HPN-SSH ("-hpn18.8.0"), not this patch set ("_hpn0.1.0"). */
int
hpn_peer_is_hpnssh(struct ssh *ssh)
{
	const char *p, *end;

	return (p = peer_hpn_tag(ssh, &end)) != NULL && p[-1] != '_';
}

/*
 * Does the peer install hpn-prefixed programs (hpnscp...)?  This patch set
 * ("_hpn" tag) does, and so does HPN-SSH since its version 17 ("-hpn17v0",
 * "-hpn18.6.0"); older HPN-SSH ("-hpn16v1") installed plain scp.
 */
int
hpn_peer_has_hpn_names(struct ssh *ssh)
{
	const char *p, *end;
	long major = 0;

	if ((p = peer_hpn_tag(ssh, &end)) == NULL)
		return 0;
	if (p[-1] == '_')
		return 1;
	for (p += 3; p < end && *p >= '0' && *p <= '9' && major < 1000; p++)
		major = major * 10 + (*p - '0');
	return major >= HPNSSH_NAMES_SINCE;
}
