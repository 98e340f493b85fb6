/*
 * HPN patch set: what the peer is, by what it does.
 *
 * Two kinds of evidence, known at different times:
 *
 *  - The banner, known before the first KEXINIT.  An "hpn" anywhere in it
 *    (software version or comment, in any case) makes the peer an HPN
 *    peer, as HPN-SSH itself decides.  This patch set
 *    ("SSH-2.0-OpenSSH_10.3p1_hpn0.1.0") and HPN-SSH
 *    ("SSH-2.0-OpenSSH_10.2p1_hpn18.8.0"; "-hpn16v1" in older releases)
 *    look alike there: the banner never tells one from the other.
 *  - Our EXT_INFO extension, HPN_NONE_EXT, which only our server sends, to
 *    every HPN client, in the EXT_INFO of user authentication (to clients
 *    that ask for EXT_INFO there, as OpenSSH does since 9.6).  From then on
 *    a client knows its server is ours; before it (banner, KEXINIT, the
 *    first key exchange) it cannot.  HPN-SSH never sends it.  A server has
 *    no such evidence of its client, and takes no decision that needs it.
 *
 * Which decision rests on which evidence is said where it is taken:
 * hpn-none.c (the None switch), hpn-window.c (the window cap, PING),
 * hpn-metrics-client.c (asking the server), hpn-client.c (scp's remote
 * program), hpn-cipher.c (the key exchange that brings AES-CTR's threads).
 */

#include "includes.h"

#include <string.h>

#include "sshbuf.h"
#include "packet.h"
#include "kex.h"
#include "hpn.h"

/* Client: the server sent HPN_NONE_EXT (one connection per process). */
static int peer_ours;

/*
 * The peer's identification line after "SSH-" (up to CR, LF or its end),
 * or NULL.
 */
static const char *
peer_banner(struct ssh *ssh, const char **endp)
{
	const struct sshbuf *b;
	const char *p, *end;
	size_t len;

	if (ssh == NULL || ssh->kex == NULL)
		return NULL;
	b = ssh->kex->server ? ssh->kex->client_version :
	    ssh->kex->server_version;
	if (b == NULL || (len = sshbuf_len(b)) < 4)
		return NULL;
	p = (const char *)sshbuf_ptr(b);
	if (strncmp(p, "SSH-", 4) != 0)
		return NULL;
	for (end = p + 4; end < p + len && *end != '\r' && *end != '\n' &&
	    *end != '\0'; end++)
		;
	*endp = end;
	return p + 4;
}

/* The next "hpn" (any case) at or after p, before end, or NULL. */
static const char *
next_hpn(const char *p, const char *end)
{
	for (; p != NULL && p + 3 <= end; p++) {
		if (strncasecmp(p, "hpn", 3) == 0)
			return p;
	}
	return NULL;
}

/* Evidence: the banner.  This patch set or HPN-SSH, or something like it. */
int
hpn_peer_is_hpn(struct ssh *ssh)
{
	const char *p, *end;

	return (p = peer_banner(ssh, &end)) != NULL &&
	    next_hpn(p, end) != NULL;
}

/* Client: the server sent our EXT_INFO extension (hpn_none_ext_parse()). */
void
hpn_peer_set_ours(int yes)
{
	peer_ours = yes != 0;
}

/*
 * Evidence: our EXT_INFO extension, so client only, once the first user
 * authentication request has been answered.  0 before that, and always on
 * a server.
 */
int
hpn_peer_is_ours(struct ssh *ssh)
{
	return ssh != NULL && ssh->kex != NULL && !ssh->kex->server &&
	    peer_ours;
}

/*
 * An HPN peer that is not ours: HPN-SSH, or a peer that says "hpn"
 * somewhere else in its banner.  On a client, decided only once
 * authenticated (hpn_peer_is_ours()).
 */
int
hpn_peer_is_hpnssh(struct ssh *ssh)
{
	return hpn_peer_is_hpn(ssh) && !hpn_peer_is_ours(ssh);
}

/*
 * Does the peer install hpn-prefixed programs (hpnscp...)?  Ours does (our
 * EXT_INFO extension or its early set-up marker says it is ours), and so does HPN-SSH since its
 * release 16 ("-hpn16v1", "_hpn18.8.0": an "hpn" followed by a major
 * version of at least HPNSSH_NAMES_SINCE anywhere in the banner, as
 * HPN-SSH itself looks for "hpn16", "hpn17" and "hpn18").
 */
int
hpn_peer_has_hpn_names(struct ssh *ssh)
{
	const char *p, *q, *end;
	long major;

	/*
	 * Ours: our EXT_INFO extension, or, before it comes, both early
	 * set-up markers in the first KEXINITs (hpn-early.c; only hpnsshd
	 * sends its own): EarlySend composes the session's command before
	 * authentication is answered
	 */
	if (hpn_peer_is_ours(ssh) || hpn_early_agreed(ssh))
		return 1;
	if ((p = peer_banner(ssh, &end)) == NULL)
		return 0;
	for (; (p = next_hpn(p, end)) != NULL; p += 3) {
		major = 0;
		for (q = p + 3; q < end && *q >= '0' && *q <= '9' &&
		    major < 1000; q++)
			major = major * 10 + (*q - '0');
		if (q > p + 3 && major >= HPNSSH_NAMES_SINCE)
			return 1;
	}
	return 0;
}

/*
 * Evidence: the banner.  A peer known to send connection messages between
 * its KEXINIT and its NEWKEYS in a key exchange we start (RFC 4253 7.1
 * forbids it; rekey-strict-messages.patch ends the connection for it, as
 * upstream does since 10.4p1): AsyncSSH (2.10.1, Debian 12's, opens its
 * channels there when the exchange starts right after authentication).
 * We start no key exchange of our own toward it (hpn_mt_activate()).
 */
int
hpn_peer_mixes_rekey(struct ssh *ssh)
{
	const char *p, *end;
	static const char tag[] = "2.0-AsyncSSH_";

	return (p = peer_banner(ssh, &end)) != NULL &&
	    (size_t)(end - p) >= sizeof(tag) - 1 &&
	    strncmp(p, tag, sizeof(tag) - 1) == 0;
}
