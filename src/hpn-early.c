/*
 * HPN patch set: connection set-up in fewer round trips, the part shared
 * by hpnssh and hpnsshd (README.hpn section 15).  The client's side is
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
 *  - With HPN_KEX_EARLY, a guessed first key exchange packet (RFC 4253's
 *    first_kex_packet_follows) is taken when the method agreed on is the
 *    first of the client's list, whatever the host key algorithms: the
 *    packet a guess sends does not depend on them.  RFC 4253's own rule
 *    (the first method and the first host key algorithm both the same on
 *    both sides, proposals_match()) still applies too.
 *  - With HPN_KEX_EARLY, channel messages (SSH2_MSG_GLOBAL_REQUEST ..
 *    SSH2_MSG_CHANNEL_FAILURE) that hpnsshd reads while the user is not
 *    authenticated are dropped unread (stock sshd answers them with
 *    UNIMPLEMENTED): the client sends its session's CHANNEL_OPEN, requests
 *    and first data right behind a signed publickey request, and when that
 *    request fails they are dropped; when it succeeds, authentication ends
 *    there and they are read after it, as if sent a round trip later.  An
 *    early channel's requests name the server's channel id before it is
 *    known: HPN_EARLY_CHANNEL_ID, the id of the first channel a server
 *    opens (OpenSSH takes the lowest free one), so the client sends one
 *    early only when it is the first, and checks the id the server
 *    confirms: another ends the connection.  Its data, at most
 *    HPN_EARLY_DATA_MAX bytes in packets of at most HPN_EARLY_PACKET,
 *    goes behind its exec, subsystem or shell request: the window a
 *    session's request opens on hpnsshd (CHAN_SES_WINDOW_DEFAULT) holds
 *    it; the client takes it off the window adjusts that follow the
 *    confirmation.  A direct-tcpip
 *    channel (-W, ProxyJump) keeps the data that comes while it connects,
 *    and its confirmation gives the window as it was before them.
 *
 * Authentication itself is unchanged: the server reads nothing of the
 * connection protocol before the user is authenticated.
 *
 * A guess pays only when it leaves with the banner, before the server's
 * KEXINIT says what it is, and not every server skips a wrong guess as
 * RFC 4253 says (paramiko reads it as the real thing).  So hpnssh guesses
 * only towards a host:port where hpnsshd answered last time: hpnssh
 * records those in EarlyHostsFile, in lines "HASHED-NAME KEX" (the name
 * hashed as HashKnownHosts hashes known_hosts', the method agreed then).
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
#include "hostfile.h"
#include "xmalloc.h"
#include "hpn.h"

/* The messages of key exchange methods (RFC 4250 section 4.1.2). */
#define KEX_METHOD_MIN	30
#define KEX_METHOD_MAX	49

static struct {
	int	client_on;	/* client: EarlySend, HPN_EARLY_C is sent */
	char	*guess;		/* client: the method of a guessed packet */
	/* client: its early channel, until the first adjusts cover its data */
	int	chan;		/* our channel id, -1: none */
	u_int	debt;		/* bytes sent before the window was known */
	/* server: messages dropped before authentication */
	u_int	dropped;
	/* client: the guess's reply handlers, armed once KEXINIT is in */
	dispatch_fn *held[KEX_METHOD_MAX - KEX_METHOD_MIN + 1];
} early = { 0, NULL, -1, 0, 0, { NULL } };

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

/* The first name of a comma-separated list, in buf. */
static const char *
first_name(const char *list, char *buf, size_t len)
{
	size_t n = strcspn(list, ",");

	if (n >= len)
		n = len - 1;
	memcpy(buf, list, n);
	buf[n] = '\0';
	return buf;
}

/*
 * kex.c, the server's key exchange: is a guessed packet from the client
 * right by our rule (above)?  kex->name is the method agreed on.
 */
int
hpn_early_guess_ok(struct ssh *ssh, char **peer)
{
	struct kex *kex = ssh->kex;
	char first[128];

	if (!kex->server || (kex->flags & KEX_INITIAL) == 0 ||
	    !hpn_early_agreed(ssh) || kex->name == NULL)
		return 0;
	if (strcmp(first_name(peer[PROPOSAL_KEX_ALGS], first, sizeof(first)),
	    kex->name) != 0)
		return 0;
	debug_f("the client's guessed %s packet is taken", kex->name);
	return 1;
}

/* RFC 4253's rule (kex.c proposals_match()), without changing the lists. */
int
hpn_early_proposals_match(char **my, char **peer)
{
	static const int check[] = {
		PROPOSAL_KEX_ALGS, PROPOSAL_SERVER_HOST_KEY_ALGS
	};
	char a[128], b[128];
	u_int i;

	for (i = 0; i < sizeof(check) / sizeof(check[0]); i++) {
		if (strcmp(first_name(my[check[i]], a, sizeof(a)),
		    first_name(peer[check[i]], b, sizeof(b))) != 0)
			return 0;
	}
	return 1;
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
	/* Its open callback ran when it was sent. */
	c->open_confirm = NULL;
	c->open_confirm_ctx = NULL;
	verbose("Early set-up: the server took the early %s (channel %d)",
	    strcmp(c->ctype, "session") == 0 ? "session" : "-W channel",
	    c->self);
	if (early.debt == 0)
		early.chan = -1;
	return 0;
}

/*
 * channels.c, a window adjust: what the early data used comes off it.
 * Not off one that comes before the open confirmation: the window that
 * confirmation gives replaces what such an adjust added, and the early
 * data is taken off it (hpn_early_channel_confirm()).
 */
u_int
hpn_early_window_adjust(struct Channel *c, u_int adjust)
{
	u_int take;

	if (c->self != early.chan || early.debt == 0 ||
	    c->type != SSH_CHANNEL_OPEN)
		return adjust;
	take = MINIMUM(adjust, early.debt);
	early.debt -= take;
	debug2_f("channel %d: %u of the adjust were sent early, %u left",
	    c->self, take, early.debt);
	if (early.debt == 0)
		early.chan = -1;
	return adjust - take;
}

/* Client: guess a first packet of method kexname (NULL: no guess). */
void
hpn_early_kex_want_guess(const char *kexname)
{
	free(early.guess);
	early.guess = kexname == NULL ? NULL : xstrdup(kexname);
}

/* Can a first packet of this method be guessed (and dropped cleanly)? */
int
hpn_early_guessable(const char *kexname)
{
	switch (kex_type_from_name(kexname)) {
	case KEX_KEM_MLKEM768X25519_SHA256:
	case KEX_KEM_SNTRUP761X25519_SHA512:
	case KEX_C25519_SHA256:
		return 1;
	default:
		return 0;
	}
}

/*
 * sshconnect2.c: kex_setup(), with first_kex_packet_follows set in our
 * KEXINIT when a guess goes: it is the byte before the reserved uint32
 * that ends the proposal.
 */
int
hpn_early_kex_setup(struct ssh *ssh, char *proposal[PROPOSAL_MAX])
{
	char first[128];
	u_char *p;
	size_t len;
	int r;

	if (early.guess != NULL &&
	    (strcmp(first_name(proposal[PROPOSAL_KEX_ALGS], first,
	    sizeof(first)), early.guess) != 0 ||
	    !hpn_early_guessable(early.guess)))
		hpn_early_kex_want_guess(NULL);
	if (early.guess == NULL)
		return kex_setup(ssh, proposal);
	if ((r = kex_ready(ssh, proposal)) != 0)
		return r;
	if ((len = sshbuf_len(ssh->kex->my)) < 5 ||
	    (p = sshbuf_mutable_ptr(ssh->kex->my)) == NULL)
		return SSH_ERR_INTERNAL_ERROR;
	p[len - 5] = 1;
	if ((r = kex_send_kexinit(ssh)) != 0) {
		kex_free(ssh->kex);
		ssh->kex = NULL;
		return r;
	}
	return 0;
}

/*
 * The method's first packet armed the handlers of the server's reply
 * (kexgen.c: KEX_ECDH_REPLY).  Upstream arms them only once the server's
 * KEXINIT has been read and the method agreed; a reply before it would
 * run with none of what that sets (the host key type and algorithm, the
 * keys' sizes, the new keys themselves).  So until then they are
 * kex_protocol_error(), upstream's answer to a packet out of order.
 */
static void
hold_replies(struct ssh *ssh)
{
	u_int i, type;

	for (i = 0; i < sizeof(early.held) / sizeof(early.held[0]); i++) {
		type = KEX_METHOD_MIN + i;
		early.held[i] = NULL;
		if (ssh->dispatch[type] == &kex_protocol_error)
			continue;
		early.held[i] = ssh->dispatch[type];
		ssh_dispatch_set(ssh, type, &kex_protocol_error);
		debug3_f("type %u held until the server's KEXINIT", type);
	}
}

/* The guessed packet stands: its reply handlers are armed now. */
static void
arm_replies(struct ssh *ssh, int arm)
{
	u_int i;

	for (i = 0; i < sizeof(early.held) / sizeof(early.held[0]); i++) {
		if (early.held[i] != NULL && arm)
			ssh_dispatch_set(ssh, KEX_METHOD_MIN + i,
			    early.held[i]);
		early.held[i] = NULL;
	}
}

/* sshconnect2.c: the client's methods are set; send the guessed packet. */
int
hpn_early_kex_guess(struct ssh *ssh)
{
	struct kex *kex = ssh->kex;
	int r;

	if (early.guess == NULL)
		return 0;
	kex->kex_type = kex_type_from_name(early.guess);
	kex->hash_alg = kex_hash_from_name(early.guess);
	kex->ec_nid = kex_nid_from_name(early.guess);
	if (kex->kex_type >= KEX_MAX || kex->kex[kex->kex_type] == NULL)
		return SSH_ERR_INTERNAL_ERROR;
	if ((r = kex->kex[kex->kex_type](ssh)) != 0)
		return r;
	hold_replies(ssh);
	verbose("Early set-up: KEXINIT and a guessed %s packet sent",
	    early.guess);
	return 0;
}

/*
 * kex.c kex_input_kexinit(), the client's, after kex_choose_conf(): does
 * our guessed packet stand, by the rule the server applies?  If not, the
 * server dropped it, and so do we: the method agreed sends its own.
 */
int
hpn_early_guess_taken(struct ssh *ssh)
{
	struct kex *kex = ssh->kex;
	char **my = NULL, **peer = NULL;
	int taken = 0;

	if (kex->server || early.guess == NULL ||
	    (kex->flags & KEX_INITIAL) == 0)
		return 0;
	if (kex_buf2prop(kex->my, NULL, &my) == 0 &&
	    kex_buf2prop(kex->peer, NULL, &peer) == 0)
		taken = hpn_early_proposals_match(my, peer) ||
		    (hpn_early_agreed(ssh) && kex->name != NULL &&
		    strcmp(kex->name, early.guess) == 0);
	kex_prop_free(my);
	kex_prop_free(peer);
	arm_replies(ssh, taken);
	if (taken)
		verbose("Early set-up: the server took the guessed %s packet",
		    early.guess);
	else {
		verbose("Early set-up: the guessed %s packet was dropped "
		    "(agreed: %s); sending the first packet again",
		    early.guess, kex->name == NULL ? "?" : kex->name);
		sshbuf_free(kex->client_pub);
		kex->client_pub = NULL;
		explicit_bzero(kex->c25519_client_key,
		    sizeof(kex->c25519_client_key));
		explicit_bzero(kex->sntrup761_client_key,
		    sizeof(kex->sntrup761_client_key));
		explicit_bzero(kex->mlkem768_client_key,
		    sizeof(kex->mlkem768_client_key));
	}
	hpn_early_kex_want_guess(NULL);
	return taken;
}

/* kex.c, our banner was written: the KEXINIT (and guess) queued go too. */
int
hpn_early_flush(struct ssh *ssh)
{
	if (!ssh_packet_have_data_to_write(ssh))
		return 0;
	return ssh_packet_write_wait(ssh);
}

/*
 * EarlyHostsFile lines: "HASHED-NAME KEX", HASHED-NAME "|1|salt|hash" as
 * host_hash() makes it, KEX a method name.  Returns 1 and copies the KEX
 * when line (len bytes, no newline) is name's, 0 when it is another's, -1
 * when it is not such a line.
 */
static int
hosts_line(const char *line, size_t len, const char *name, char *kex,
    size_t kexlen)
{
	char hashed[256], meth[128], *h;
	size_t n, m;
	int mine;

	n = 0;
	while (n < len && line[n] != ' ')
		n++;
	if (n == len || n >= sizeof(hashed) ||
	    strncmp(line, HASH_MAGIC, strlen(HASH_MAGIC)) != 0)
		return -1;
	m = len - n - 1;
	if (m == 0 || m >= sizeof(meth) ||
	    strspn(line + n + 1, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@.-_+") != m)
		return -1;
	memcpy(hashed, line, n);
	hashed[n] = '\0';
	memcpy(meth, line + n + 1, m);
	meth[m] = '\0';
	if ((h = host_hash(name, hashed, n)) == NULL)
		return -1;
	mine = strcmp(h, hashed) == 0;
	free(h);
	if (mine && kex != NULL)
		strlcpy(kex, meth, kexlen);
	return mine;
}

/* The method recorded for name in the file's text b, or 0. */
int
hpn_early_hosts_lookup(const struct sshbuf *b, const char *name, char *kex,
    size_t kexlen)
{
	const char *p = (const char *)sshbuf_ptr(b), *end = p + sshbuf_len(b);
	const char *nl;

	for (; p < end; p = nl + 1) {
		if ((nl = memchr(p, '\n', end - p)) == NULL)
			nl = end;
		if (hosts_line(p, nl - p, name, kex, kexlen) == 1)
			return 1;
	}
	return 0;
}

/*
 * The file's text in with name's line replaced (kex: its method) or taken
 * out (kex NULL), into out: name's line first, then the others that parse,
 * HPN_EARLY_HOSTS_MAX lines in all.
 */
int
hpn_early_hosts_update(const struct sshbuf *in, const char *name,
    const char *kex, struct sshbuf *out)
{
	const char *p = in == NULL ? NULL : (const char *)sshbuf_ptr(in);
	const char *end = p == NULL ? NULL : p + sshbuf_len(in), *nl;
	char *h;
	u_int lines = 0;
	int r;

	if (kex != NULL) {
		if ((h = host_hash(name, NULL, 0)) == NULL)
			return SSH_ERR_INTERNAL_ERROR;
		r = sshbuf_putf(out, "%s %s\n", h, kex);
		free(h);
		if (r != 0)
			return r;
		lines++;
	}
	for (; p != NULL && p < end && lines < HPN_EARLY_HOSTS_MAX;
	    p = nl + 1) {
		if ((nl = memchr(p, '\n', end - p)) == NULL)
			nl = end;
		if (hosts_line(p, nl - p, name, NULL, 0) != 0)
			continue;
		if ((r = sshbuf_put(out, p, nl - p)) != 0 ||
		    (r = sshbuf_put_u8(out, '\n')) != 0)
			return r;
		lines++;
	}
	return 0;
}

/*
 * EarlyHostsFile's default: HPN_EARLY_HOSTS_NAME in the directory of the
 * first UserKnownHostsFile, "none" when that is none or /dev/null (where
 * the user keeps no record of hosts, we keep none either).
 */
char *
hpn_early_hosts_default(const char *known_hosts)
{
	const char *slash;
	char *p;

	if (known_hosts == NULL || strcmp(known_hosts, "none") == 0 ||
	    strcmp(known_hosts, _PATH_DEVNULL) == 0)
		return xstrdup("none");
	if ((slash = strrchr(known_hosts, '/')) == NULL)
		return xstrdup(HPN_EARLY_HOSTS_NAME);
	xasprintf(&p, "%.*s/%s", (int)(slash - known_hosts), known_hosts,
	    HPN_EARLY_HOSTS_NAME);
	return p;
}

/*
 * channels.c, data for a channel that is not open: keep it when it is an
 * early client's direct-tcpip channel still connecting (hpnsshd, -W).
 */
int
hpn_early_connecting(struct ssh *ssh, struct Channel *c)
{
	return c->type == SSH_CHANNEL_CONNECTING && hpn_early_agreed(ssh);
}

/*
 * channels.c, a direct-tcpip channel connected: the window its
 * confirmation gives, the one before any data came early (nothing can
 * have been consumed yet); the client takes its early data off it.
 */
u_int
hpn_early_open_window(struct ssh *ssh, struct Channel *c)
{
	if (!hpn_early_agreed(ssh))
		return c->local_window;
	return c->local_window_max;
}
