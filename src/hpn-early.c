/*
 * HPN patch set: connection set-up in fewer round trips, the part shared
 * by hpnssh and hpnsshd (README.hpn section 14).  The client's side is
 * hpn-early-client.c.
 *
 * Two names in the key exchange's KEXINIT say who takes what:
 *
 *  - hpnssh adds HPN_EARLY_C to its KEX algorithms (EarlySend yes), and
 *    hpnsshd always adds HPN_EARLY_S.  They never match each other, and
 *    peers that know neither ignore them, as they do ext-info-c.  Only the
 *    first key exchange counts; when both were sent, kex->flags gets
 *    HPN_KEX_EARLY (kept across sshd's privilege separation with the rest
 *    of the key exchange state).
 *  - With HPN_KEX_EARLY, channel messages (SSH2_MSG_GLOBAL_REQUEST ..
 *    SSH2_MSG_CHANNEL_FAILURE) that hpnsshd reads while the user is not
 *    authenticated are dropped unread (stock sshd answers them with
 *    UNIMPLEMENTED): the client sends its session's CHANNEL_OPEN, requests
 *    and first data right behind a signed publickey request, and when that
 *    request fails they are dropped; when it succeeds, authentication ends
 *    there and they are read after it, as if sent a round trip later.  An
 *    early channel's requests name the server's channel id before it is
 *    known: HPN_EARLY_CHANNEL_ID, the id of the first channel a server
 *    opens, which hpnsshd checks.  Its data, at most HPN_EARLY_DATA_MAX
 *    bytes in packets of at most HPN_EARLY_PACKET, goes behind its exec,
 *    subsystem or shell request: the window a session's request opens on
 *    hpnsshd (CHAN_SES_WINDOW_DEFAULT) holds it; the client takes it off
 *    the window adjusts that follow the confirmation.
 *
 * Authentication itself is unchanged: the server reads nothing of the
 * connection protocol before the user is authenticated.
 */

#include "includes.h"

#include <sys/types.h>

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "misc.h"
#include "sshbuf.h"
#include "ssherr.h"
#include "ssh2.h"
#include "packet.h"
#include "dispatch.h"
#include "kex.h"
#include "channels.h"
#include "xmalloc.h"
#include "hpn.h"

static struct {
	int	client_on;	/* client: EarlySend, HPN_EARLY_C is sent */
	/* client: its early channel, until the first adjusts cover its data */
	int	chan;		/* our channel id, -1: none */
	u_int	debt;		/* bytes sent before the window was known */
	/* server: channels opened */
	u_int	srv_opened;
	/* server: messages dropped before authentication */
	u_int	dropped;
} early = { 0, -1, 0, 0, 0 };

/* hpnssh: EarlySend. */
void
hpn_early_configure(int on)
{
	early.client_on = on;
}

/* kex.c: our marker appended to the KEX algorithms of a first KEXINIT. */
void
hpn_early_kex_names(struct ssh *ssh, char **kexalgs)
{
	const char *mark;
	char *cp;

	if (ssh->kex->server)
		mark = HPN_EARLY_S;
	else if (early.client_on)
		mark = HPN_EARLY_C;
	else
		return;
	if ((cp = kex_names_cat(*kexalgs, mark)) == NULL)
		fatal_f("kex_names_cat");
	free(*kexalgs);
	*kexalgs = cp;
}

/* kex.c, the first key exchange: did both sides send their marker? */
void
hpn_early_kex_peer(struct ssh *ssh, char **my, char **peer)
{
	struct kex *kex = ssh->kex;
	const char *mine = kex->server ? HPN_EARLY_S : HPN_EARLY_C;
	const char *theirs = kex->server ? HPN_EARLY_C : HPN_EARLY_S;

	if (!kex_has_any_alg(my[PROPOSAL_KEX_ALGS], mine) ||
	    !kex_has_any_alg(peer[PROPOSAL_KEX_ALGS], theirs))
		return;
	kex->flags |= HPN_KEX_EARLY;
	debug_f("the %s takes early set-up", kex->server ? "client" : "server");
}

int
hpn_early_agreed(struct ssh *ssh)
{
	return ssh != NULL && ssh->kex != NULL &&
	    (ssh->kex->flags & HPN_KEX_EARLY) != 0;
}

/* Server: channel messages before authentication are dropped. */
static int
drop_unauthenticated(int type, uint32_t seq, struct ssh *ssh)
{
	if (early.dropped++ == 0)
		debug("early set-up: the client's channel messages before "
		    "authentication are dropped (first: type %d)", type);
	return 0;
}

/* auth2.c: the dispatch table of user authentication is set up. */
void
hpn_early_auth_dispatch(struct ssh *ssh)
{
	if (!hpn_early_agreed(ssh))
		return;
	ssh_dispatch_range(ssh, SSH2_MSG_GLOBAL_REQUEST,
	    SSH2_MSG_CHANNEL_FAILURE, &drop_unauthenticated);
}

/*
 * serverloop.c: a channel was opened at the client's request.  The first
 * one's id is what a client's early requests name.
 */
void
hpn_early_server_channel(struct ssh *ssh, struct Channel *c)
{
	if (early.srv_opened++ != 0 || !hpn_early_agreed(ssh))
		return;
	if (c->self != HPN_EARLY_CHANNEL_ID)
		ssh_packet_disconnect(ssh, "early set-up: first channel has "
		    "id %d, not %d", c->self, HPN_EARLY_CHANNEL_ID);
}

/*
 * Client: channel c went out early with debt bytes of data (or is gone:
 * c == NULL).
 */
void
hpn_early_channel_set(const struct Channel *c, u_int debt)
{
	early.chan = c == NULL ? -1 : c->self;
	early.debt = c == NULL ? 0 : debt;
}

/*
 * channels.c, an open confirmation: for the early channel, check what the
 * server confirmed against what was assumed; returns -1 (and says why)
 * when the server broke the contract.
 */
int
hpn_early_channel_confirm(struct Channel *c)
{
	u_int take;

	if (c->self != early.chan)
		return 0;
	if (c->remote_id != HPN_EARLY_CHANNEL_ID) {
		error("early set-up: the server gave channel %d the id %u, "
		    "not %d", c->self, c->remote_id, HPN_EARLY_CHANNEL_ID);
		return -1;
	}
	if (c->remote_maxpacket < HPN_EARLY_PACKET) {
		error("early set-up: the server's packets for channel %d are "
		    "at most %u bytes, less than %d", c->self,
		    c->remote_maxpacket, HPN_EARLY_PACKET);
		return -1;
	}
	/* What the early data used comes off this window, then the next. */
	take = MINIMUM(c->remote_window, early.debt);
	c->remote_window -= take;
	early.debt -= take;
	verbose("Early set-up: the server took the early session "
	    "(channel %d)", c->self);
	if (early.debt == 0)
		early.chan = -1;
	return 0;
}

/* channels.c, a window adjust: what the early data used comes off it. */
u_int
hpn_early_window_adjust(struct Channel *c, u_int adjust)
{
	u_int take;

	if (c->self != early.chan || early.debt == 0)
		return adjust;
	take = MINIMUM(adjust, early.debt);
	early.debt -= take;
	debug2_f("channel %d: %u of the adjust were sent early, %u left",
	    c->self, take, early.debt);
	if (early.debt == 0)
		early.chan = -1;
	return adjust - take;
}

