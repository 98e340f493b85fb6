/*
 * HPN patch set: the None cipher switch.
 *
 * Bulk transfers of data that needs no secrecy (public data sets) may drop
 * encryption, and optionally the MAC, once the user is authenticated:
 *
 *  - The server allows it (NoneEnabled, NoneMacEnabled; Match-able).  It
 *    says so to an HPN client in the EXT_INFO it sends during user
 *    authentication, under HPN_NONE_EXT ("cipher" or "cipher,mac"; "" when
 *    it does not), so the client never asks in vain; the extension also
 *    tells the client that the server is ours (hpn-compat.c).  Other
 *    clients are told nothing.  After authentication it adds "none" to its
 *    cipher (and MAC) proposals.
 *  - The client asks for it (NoneEnabled and NoneSwitch, NoneMacEnabled
 *    for the MAC): right after authentication, for a connection whose
 *    session is non-interactive, it rekeys proposing only "none".  With a
 *    tty, a ControlMaster or no session (-N) it stays encrypted and says
 *    why; so it does when the server does not allow none.
 *  - HPN-SSH servers send no EXT_INFO for it.  With NoneEnabled they list
 *    "none" last among their ciphers (with NoneMacEnabled among their MACs
 *    too) in every KEXINIT, the first one included, and count on clients
 *    to ask for it only after authentication; without it they do not list
 *    it.  So toward a server that did not send HPN_NONE_EXT but says "hpn"
 *    in its banner, the client goes by the server's last KEXINIT
 *    (hpn_none_peer_proposal()): when it listed none, the rekey proposes
 *    "none" first and the client's lists after it (the client's order
 *    wins, so such a server picks none); when it did not, there is no
 *    rekey, only the notice (HPN-SSH's own client proposes none alone,
 *    and such a server fails that key exchange).  Stock peers are never
 *    offered none.
 *  - "none" is never proposed before authentication by either side, and
 *    never to or by a peer that is not HPN.  Should it be negotiated all
 *    the same, the connection is dropped.  While none is active the
 *    server refuses pseudo-terminals.
 *  - Every switch warns on stderr (client) and is logged with the user
 *    and address (server).  Later rekeys keep none.
 */

#include "includes.h"

#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "match.h"
#include "misc.h"
#include "sshbuf.h"
#include "ssherr.h"
#include "packet.h"
#include "cipher.h"
#include "mac.h"
#include "kex.h"
#include "canohost.h"
#include "xmalloc.h"
#include "hpn.h"

static struct {
	/* server: what this connection's configuration allows */
	int	srv_enabled;
	int	srv_mac;
	char	*user;
	/* client: what the server said in EXT_INFO */
	int	peer_allows;
	int	peer_allows_mac;
	/* client: the server's last KEXINIT listed none both ways (and MAC) */
	int	peer_lists;
	int	peer_lists_mac;
	/* client: none offered to an HPN-SSH server, its choice awaited */
	int	offered;
	/* client: the switch waits for a key exchange under way to end */
	int	pending;
	enum hpn_none_prop pending_how;
	int	pending_mac;
	/* both: none may be negotiated now (after authentication) */
	int	allowed;
	/* server: the user is authenticated */
	int	authed;
	/* both: none is active in this direction */
	int	active[MODE_MAX];
	int	mac_off[MODE_MAX];
	/* server: a session has a pty: none no more */
	int	srv_pty;
	/* both: the cipher of each direction, for logs */
	char	cipher[MODE_MAX][64];
} none;

/* Whether a comma-separated list holds name (match_list() without a leak). */
int
hpn_list_has(const char *list, const char *name)
{
	char *m;

	if (list == NULL || (m = match_list(name, list, NULL)) == NULL)
		return 0;
	free(m);
	return 1;
}

/* The cipher in use in direction mode (MODE_IN, MODE_OUT). */
const char *
hpn_cipher_name(int mode)
{
	if ((mode != MODE_IN && mode != MODE_OUT) || *none.cipher[mode] == '\0')
		return "?";
	return none.cipher[mode];
}

/*
 * packet.c, the keys of one direction set: the none cipher has no key to
 * wear out, and RFC 4344's limit for 8-byte blocks (1 GiB) would rekey it
 * about once a second at 10 Gbit/s, a round trip's stall each time.  No
 * block limit then, but RekeyLimit's when one is set.
 */
void
hpn_none_rekey_blocks(const struct sshenc *enc, u_int64_t rekey_limit,
    u_int64_t *hard_max_blocks, u_int64_t *max_blocks)
{
	if (enc->name == NULL || strcmp(enc->name, "none") != 0 ||
	    enc->block_size == 0)
		return;
	*hard_max_blocks = 0;		/* 0: no limit */
	*max_blocks = rekey_limit / enc->block_size;
}

/* Server: the configuration, set as the user becomes known. */
void
hpn_none_server_config(int enabled, int mac_enabled)
{
	none.srv_enabled = enabled;
	none.srv_mac = enabled && mac_enabled;
}

/*
 * Server: the value of HPN_NONE_EXT for this peer, or NULL: do not send.
 * Every HPN client (by its banner) is sent it, whether or not none is
 * allowed: it is how a client tells our server from HPN-SSH.
 */
const char *
hpn_none_ext_value(struct ssh *ssh)
{
	if (!hpn_peer_is_hpn(ssh))
		return NULL;
	if (!none.srv_enabled)
		return "";
	return none.srv_mac ? "cipher,mac" : "cipher";
}

/* Client: an EXT_INFO extension; returns 1 if it was ours. */
int
hpn_none_ext_parse(struct ssh *ssh, const char *name, const u_char *value,
    size_t vlen)
{
	char *v;

	if (strcmp(name, HPN_NONE_EXT) != 0)
		return 0;
	v = xmalloc(vlen + 1);
	memcpy(v, value, vlen);
	v[vlen] = '\0';
	hpn_peer_set_ours(1);
	none.peer_allows = hpn_list_has(v, "cipher");
	none.peer_allows_mac = none.peer_allows &&
	    hpn_list_has(v, "mac");
	debug_f("server (HPN patch set) %s the none cipher%s",
	    none.peer_allows ? "allows" : "does not allow",
	    none.peer_allows_mac ? " and the none MAC" : "");
	free(v);
	return 1;
}

/*
 * Client, kex.c, each key exchange: does the server's KEXINIT (its
 * proposal, prop) list none among its ciphers both ways, and among its
 * MACs?  HPN-SSH's does when it allows none (see the top of this file).
 */
void
hpn_none_peer_proposal(struct ssh *ssh, char **prop)
{
	if (ssh == NULL || ssh->kex == NULL || ssh->kex->server ||
	    prop == NULL)
		return;
	none.peer_lists = hpn_list_has(prop[PROPOSAL_ENC_ALGS_CTOS], "none") &&
	    hpn_list_has(prop[PROPOSAL_ENC_ALGS_STOC], "none");
	none.peer_lists_mac = none.peer_lists &&
	    hpn_list_has(prop[PROPOSAL_MAC_ALGS_CTOS], "none") &&
	    hpn_list_has(prop[PROPOSAL_MAC_ALGS_STOC], "none");
}

/*
 * Client, once authenticated: how the None switch's rekey proposes none on
 * this connection, or HPN_NONE_STAY with *why set.  *mac (the none MAC is
 * wanted) is cleared when the server does not allow it.  Evidence:
 *  - our server's HPN_NONE_EXT (EXT_INFO of user authentication, so there
 *    by now): it adds none after authentication; propose none alone;
 *  - else, for an HPN peer by its banner (HPN-SSH), the server's last
 *    KEXINIT: none listed, propose it first; not listed, do not propose
 *    it;
 *  - anything else: stock, never offered none.
 */
enum hpn_none_prop
hpn_none_plan(struct ssh *ssh, int *mac, const char **why)
{
	*why = NULL;
	if (none.peer_allows) {
		*mac = *mac && none.peer_allows_mac;
		return HPN_NONE_ONLY;
	}
	if (hpn_peer_is_hpnssh(ssh) && none.peer_lists) {
		*mac = *mac && none.peer_lists_mac;
		return HPN_NONE_FIRST;
	}
	*mac = 0;
	*why = hpn_peer_is_hpnssh(ssh) ? "the server (HPN-SSH) does not "
	    "allow the none cipher" : "the server does not allow the none "
	    "cipher";
	return HPN_NONE_STAY;
}

/*
 * Rewrite the cipher lists of our proposal for the next key exchange (and
 * the MAC lists when mac is set): "none" alone, "none," prepended, ",none"
 * appended, or none taken out.
 */
static void
set_proposal(struct ssh *ssh, enum hpn_none_prop how, int mac)
{
	static const int which[] = {
		PROPOSAL_ENC_ALGS_CTOS, PROPOSAL_ENC_ALGS_STOC,
		PROPOSAL_MAC_ALGS_CTOS, PROPOSAL_MAC_ALGS_STOC
	};
	char **prop = NULL, *s;
	u_int i, n = mac ? 4 : 2;
	int r;

	if ((r = kex_buf2prop(ssh->kex->my, NULL, &prop)) != 0)
		fatal_fr(r, "parse proposal");
	for (i = 0; i < n; i++) {
		switch (how) {
		case HPN_NONE_FIRST:
			xasprintf(&s, "none,%s", prop[which[i]]);
			break;
		case HPN_NONE_ADD:
			xasprintf(&s, "%s,none", prop[which[i]]);
			break;
		case HPN_NONE_REMOVE:
			if ((s = match_filter_denylist(prop[which[i]],
			    "none")) == NULL)
				fatal_f("match_filter_denylist failed");
			break;
		default:		/* HPN_NONE_ONLY */
			s = xstrdup("none");
			break;
		}
		free(prop[which[i]]);
		prop[which[i]] = s;
	}
	sshbuf_reset(ssh->kex->my);
	if ((r = kex_prop2buf(ssh->kex->my, prop)) != 0)
		fatal_fr(r, "compose proposal");
	kex_prop_free(prop);
}

static void start_switch(struct ssh *, enum hpn_none_prop, int);

/*
 * Client, once authenticated: switch if everything allows it.  refusal:
 * why this connection must stay encrypted (hpn_none_refusal()), or NULL.
 */
void
hpn_none_client_switch(struct ssh *ssh, int enabled, int want, int mac,
    const char *refusal)
{
	enum hpn_none_prop how;
	const char *why;

	if (!want)
		return;
	if (!enabled) {
		logit("NoneSwitch needs NoneEnabled too: staying encrypted");
		return;
	}
	if (refusal != NULL) {
		logit("NoneSwitch: staying encrypted: the none cipher is only "
		    "for non-interactive sessions with nothing delegated (%s)",
		    refusal);
		return;
	}
	if ((how = hpn_none_plan(ssh, &mac, &why)) == HPN_NONE_STAY) {
		logit("NoneSwitch: %s: staying encrypted", why);
		return;
	}
	if (ssh->kex->done == 0) {
		/*
		 * A key exchange is under way (RekeyLimit reached by data sent
		 * while authenticating, EarlySend): our KEXINIT is out, so the
		 * switch starts the next one, once this one is over
		 * (hpn_none_client_pending(), from the client's loop).
		 */
		none.pending = 1;
		none.pending_how = how;
		none.pending_mac = mac;
		debug("NoneSwitch: a key exchange is under way: switching "
		    "after it");
		return;
	}
	start_switch(ssh, how, mac);
}

/* Client: the switch's key exchange, with our proposal made for it. */
static void
start_switch(struct ssh *ssh, enum hpn_none_prop how, int mac)
{
	int r;

	if (how == HPN_NONE_FIRST) {
		/* It decides in the key exchange; see the top of this file. */
		none.offered = 1;
		debug("NoneSwitch: HPN-SSH server lists the none cipher: "
		    "rekeying with it%s offered first", mac ? " and the none MAC" :
		    "");
	} else {
		debug("NoneSwitch: rekeying to the none cipher%s",
		    mac ? " and MAC" : "");
	}
	set_proposal(ssh, how, mac);
	none.allowed = 1;
	if ((r = kex_start_rekex(ssh)) != 0)
		fatal_fr(r, "kex_start_rekex");
}

/*
 * Client's loop, while no key exchange is under way: start a switch that
 * waited for one to end.  1 if it started one.
 */
int
hpn_none_client_pending(struct ssh *ssh)
{
	if (!none.pending || ssh->kex == NULL || ssh->kex->done == 0)
		return 0;
	none.pending = 0;
	start_switch(ssh, none.pending_how, none.pending_mac);
	return 1;
}

/*
 * Server: a session got a pty.  Keystrokes must never travel in the clear,
 * so none leaves our proposals, and a key exchange that still negotiates
 * it is refused (hpn_none_newkeys()).
 */
void
hpn_none_server_pty(struct ssh *ssh)
{
	if (none.srv_pty)
		return;
	none.srv_pty = 1;
	if (!none.allowed || ssh->kex == NULL)
		return;
	set_proposal(ssh, HPN_NONE_REMOVE, 1);
	debug_f("a pty: the none cipher is no longer offered");
}

/* Server, once authenticated: offer none from the next key exchange on. */
void
hpn_none_server_allow(struct ssh *ssh, const char *user)
{
	none.authed = 1;
	if (!none.srv_enabled || !hpn_peer_is_hpn(ssh))
		return;
	free(none.user);
	none.user = xstrdup(user);
	none.allowed = 1;
	set_proposal(ssh, HPN_NONE_ADD, none.srv_mac);
	debug_f("none cipher%s allowed for %s", none.srv_mac ?
	    " and MAC" : "", user);
}

/*
 * A key exchange failed to agree on a cipher: say so plainly when the peer
 * wanted none where we do not allow it (HPN-SSH's client proposes none
 * alone after authentication, whatever the server allows).
 */
void
hpn_none_kex_failed(const char *peer_ciphers)
{
	if (peer_ciphers == NULL || none.allowed ||
	    !hpn_list_has(peer_ciphers, "none"))
		return;
	if (none.authed)
		error("peer asked for the none cipher, which is not allowed "
		    "here (NoneEnabled): no cipher in common");
	else
		error("peer proposed the none cipher before authentication: "
		    "refused");
}

/* The MAC "none": set up only for key exchange, never valid in config. */
int
hpn_mac_none_setup(struct sshmac *mac, const char *name)
{
	if (mac == NULL || strcmp(name, "none") != 0)
		return 0;
	mac->type = 0;
	mac->mac_len = mac->key_len = 0;
	mac->etm = 0;
	return 1;
}

int
hpn_mac_is_none(const struct sshmac *mac)
{
	return mac->name != NULL && strcmp(mac->name, "none") == 0;
}

/* New keys in one direction: refuse none before auth, warn on a switch. */
void
hpn_none_newkeys(struct ssh *ssh, int mode, const struct sshenc *enc,
    const struct sshmac *mac)
{
	int is_none = enc->name != NULL && strcmp(enc->name, "none") == 0;
	int mac_none = is_none && hpn_mac_is_none(mac);
	const char *dir;

	if (mode == MODE_IN || mode == MODE_OUT)
		strlcpy(none.cipher[mode], enc->name != NULL ? enc->name : "?",
		    sizeof(none.cipher[mode]));

	if (hpn_mac_is_none(mac) && !is_none)
		ssh_packet_disconnect(ssh, "the none MAC was negotiated with "
		    "the %s cipher: refused", enc->name ? enc->name : "?");
	if ((is_none || hpn_mac_is_none(mac)) && !none.allowed)
		ssh_packet_disconnect(ssh, "the none %s was negotiated "
		    "before authentication: refused",
		    is_none ? "cipher" : "MAC");
	if ((is_none || hpn_mac_is_none(mac)) && none.srv_pty)
		ssh_packet_disconnect(ssh, "the none %s was negotiated on a "
		    "connection with a pty: refused",
		    is_none ? "cipher" : "MAC");
	if (none.offered && mode == MODE_OUT) {
		none.offered = 0;
		if (!is_none)
			logit("NoneSwitch: the server (HPN-SSH) does not "
			    "allow the none cipher: staying encrypted");
	}
	if (is_none == none.active[mode] && mac_none == none.mac_off[mode])
		return;
	none.active[mode] = is_none;
	none.mac_off[mode] = mac_none;
	if (!is_none)
		return;
	dir = mode == MODE_OUT ? "sent" : "received";
	if (ssh->kex != NULL && ssh->kex->server) {
		logit("none cipher%s: data %s in the clear for user %s "
		    "from %.200s port %d", mac_none ? " and MAC" : "", dir,
		    none.user ? none.user : "?", ssh_remote_ipaddr(ssh),
		    ssh_remote_port(ssh));
	} else if (mode == MODE_OUT) {
		/* One warning per switch, when our side starts. */
		fprintf(stderr, "WARNING: NoneSwitch: data now travels "
		    "UNENCRYPTED%s (none cipher%s)\r\n", mac_none ?
		    " and UNAUTHENTICATED" : "", mac_none ?
		    ", none MAC" : "");
	}
}

/* Server: is none active (then no pseudo-terminals)? */
int
hpn_none_active(void)
{
	return none.active[MODE_IN] || none.active[MODE_OUT];
}
