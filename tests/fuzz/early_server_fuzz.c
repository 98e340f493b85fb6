/*
 * Fuzz harness: hpnsshd's pre-authentication side with EarlySend (README.hpn
 * section 15; src/hpn-early.c), fed a client's byte stream with early
 * channel messages.
 *
 * The server is OpenSSH's own code as sshd-auth runs it, blocking reads and
 * all: kex_exchange_identification(), the key exchange of do_ssh2_kex()
 * (its lines here: kex_proposal_populate_entries() with our marker,
 * hpn_early_kex_names(), kex_setup(), kex_gen_server(); the host keys and
 * their signing the harness's, as sshd-auth's come from the monitor), then
 * do_authentication2() (auth2.c and auth2-methods.c linked:
 * hpn_early_auth_dispatch(), the requests, partial success, MaxAuthTries,
 * EXT_INFO), then, once the user is authenticated, what the session reads
 * next: a dispatch that records every message, as sshd-session's would
 * read them.  Not linked: the monitor (mm_getpwnamallow() knows the user
 * "fuzz"), the methods' own files (auth2-pubkey.c, auth2-passwd.c...: the
 * harness's methods check a publickey request's signature over the
 * session id as RFC 4252 section 7 says, the fixed user keys being the
 * authorized ones, a password against a fixed one, "none" as the input
 * says), serverloop.c and session.c (no channel is opened after
 * authentication: the early direct-tcpip hooks of channels.c,
 * hpn_early_connecting() and hpn_early_open_window(), are not reached).
 *
 * The client is a model (fuzz-peer.h: it runs whenever the server waits
 * for data that is not there) on a real client struct ssh: its KEXINIT
 * with or without our marker (hpn_early_configure()), a guessed first
 * packet (hpn_early_kex_setup(), hpn_early_kex_guess(): right or wrong for
 * the server's methods, or an arbitrary packet in its place), the key
 * exchange through OpenSSH's client code, then what the input says, in
 * its order, encrypted with the client's keys: SERVICE_REQUEST, signed
 * or offered publickey requests (composed as sshconnect2.c composes
 * them, with the right key, another, a broken signature, hostbound),
 * passwords, "none", channel messages (CHANNEL_OPEN, requests, data,
 * window adjusts, EOF, CLOSE, global requests), any message, raw bytes.
 * Its version string is the input's.
 *
 * Checked, whatever the client sent:
 *  - HPN_KEX_EARLY is agreed exactly when the client's KEXINIT had its
 *    marker (the server always sends its own);
 *  - the server's rule on the guess (hpn_early_guess_ok()) and the
 *    client's (hpn_early_guess_taken()) agree: the client sends its
 *    KEX_ECDH_INIT again exactly when the server dropped the guess;
 *  - no channel message is acted on before authentication: with early
 *    set-up agreed, each one the server read before the request that
 *    authenticated the user (behind a failed request, before any) was
 *    dropped unread (hpn_early_auth_dispatch()), without it none was
 *    (upstream's UNIMPLEMENTED); and the session reads exactly the
 *    messages the client sent after that request, in their order, the
 *    first being the one right behind it.
 *
 * Deterministic: the random stream is the harness's (fuzz-peer.h), the
 * clock of auth2.c's failure delay the harness's (-Wl,--wrap=
 * monotime_double: ten seconds a look, past the delay's 5 s cap, so that
 * it never sleeps); hpn-early.c's state is made afresh for every input
 * (compiled in).  HPN_FUZZ_SEEDS=DIR writes the seeds (scripts of what
 * hpnssh sends, in its orders, and of clients that do otherwise).
 */

#include "hpn-early.c"
#include "packet.c"
#include "fuzz-packet.h"

#include <pwd.h>

#include "auth.h"
#include "channels.h"
#include "servconf.h"
#include "sshkey.h"
#include "myproposal.h"

#include "fuzz-common.h"
#include "fuzz-peer.h"
#include "fuzz-keys.h"

int LLVMFuzzerInitialize(int *, char ***);
int LLVMFuzzerTestOneInput(const uint8_t *, size_t);
double __wrap_monotime_double(void);

ServerOptions options;

#define OPS		256
#define USER		"fuzz"
#define PASSWORD	"fuzz-password"
#define SENT_MAX	1024	/* messages the client sends, recorded */

/* The input's first byte. */
#define F_MARK		0x01	/* the client's KEXINIT has HPN_EARLY_C */
#define F_GUESS		0x06	/* none, curve25519, mlkem768, a raw packet */
#define F_NO_C25519	0x08	/* the server offers no curve25519 */
#define F_RSA_FIRST	0x10	/* the client lists RSA host keys first */
#define F_METHODS	0x20	/* AuthenticationMethods publickey,password */
#define F_NONE_OK	0x40	/* "none" authenticates */
#define F_ED_ONLY	0x80	/* only the Ed25519 key is authorized */

/* The client's script. */
enum {
	OP_YIELD, OP_SERVICE, OP_SIGNED, OP_OFFER, OP_PASSWORD, OP_NONE,
	OP_OPEN, OP_REQUEST, OP_DATA, OP_ADJUST, OP_EOF_CLOSE, OP_GLOBAL,
	OP_EXT_INFO, OP_MSG, OP_RAW, OP_IGNORE,
	OP_MAX
};

static struct sshkey *host_ed25519, *host_rsa, *host_ed25519_pub,
    *host_rsa_pub, *user_ed25519, *user_rsa, *user_other;
static __typeof__(early) early_fresh;

/* The client's model and what it saw. */
static struct model {
	struct ssh *cm;		/* its end of the packet layer */
	struct fz_in ops;
	int	done_ops;
	int	vs_seen;	/* the server's version line taken */
	int	deaf;
	int	guess_sent;	/* its KEXINIT said a packet follows */
	int	kexinit_seen;	/* it read the server's KEXINIT */
	int	resent;		/* ... then sent KEX_ECDH_INIT again */
	int	kex_done;
	/* what it sent once its keys were in use: sequence numbers, types */
	u_int	nsent;
	struct {
		uint32_t seq;
		u_char	type;
	} sent[SENT_MAX];
} mdl;

/* The server and what it did. */
static struct ssh *sv;
static Authctxt *authctxt;
static int flags, sv_chosen, sv_skipped, authenticated;
static u_int nread;
static struct {
	uint32_t seq;
	u_char	type;
} readlog[SENT_MAX];
static struct passwd pw_fuzz;
static struct {
	uint32_t end;		/* its next sequence number to read */
	int	agreed;		/* HPN_KEX_EARLY */
	int	kexed;		/* a session id */
} snap;

/* --- the server's side: what sshd-auth gets from elsewhere ---------------- */

static double fz_clock;

/* auth2.c's failure delay: never a sleep (see above) */
double
__wrap_monotime_double(void)
{
	return fz_clock += 10.0;
}

struct passwd *
mm_getpwnamallow(struct ssh *ssh, const char *user)
{
	struct passwd *pw;

	if (strcmp(user, USER) != 0)
		return NULL;
	pw = xcalloc(1, sizeof(*pw));
	*pw = pw_fuzz;
	return pw;
}

void
mm_inform_authserv(char *service, char *style)
{
}

char *
mm_auth2_read_banner(void)
{
	return NULL;
}

void
auth2_challenge_stop(struct ssh *ssh)
{
}

void
auth_log(struct ssh *ssh, int authenticated, int partial,
    const char *method, const char *submethod)
{
	debug("auth_log: %s %s%s", method, authenticated ? "accepted" :
	    "failed", partial ? " (partial)" : "");
}

void
auth_maxtries_exceeded(struct ssh *ssh)
{
	ssh_packet_disconnect(ssh, "Too many authentication failures");
}

int
auth_root_allowed(struct ssh *ssh, const char *method)
{
	return 0;
}

struct passwd *
fakepw(void)
{
	static struct passwd fake;

	fake.pw_name = "NOUSER";
	fake.pw_passwd = "*";
	fake.pw_uid = fake.pw_gid = (uid_t)-1;
	fake.pw_dir = "/nonexist";
	fake.pw_shell = "/nonexist";
	return &fake;
}

/*
 * publickey and publickey-hostbound-v00@openssh.com, as RFC 4252 section 7
 * and PROTOCOL say: the fixed user keys are the authorized ones (only the
 * Ed25519 one with F_ED_ONLY); without a signature the key is answered
 * with PK_OK, with one it must verify over the session id.
 */
static int
userauth_pubkey(struct ssh *ssh, const char *method)
{
	Authctxt *ac = ssh->authctxt;
	struct sshbuf *b = NULL;
	struct sshkey *key = NULL, *hostkey = NULL;
	char *alg = NULL;
	const u_char *blob, *hkblob = NULL, *sig;
	size_t blen, hklen = 0, slen;
	u_char have_sig;
	int hostbound, authorized, ok = 0, r;

	hostbound = strcmp(method, "publickey-hostbound-v00@openssh.com") == 0;
	if ((r = sshpkt_get_u8(ssh, &have_sig)) != 0 ||
	    (r = sshpkt_get_cstring(ssh, &alg, NULL)) != 0 ||
	    (r = sshpkt_get_string_direct(ssh, &blob, &blen)) != 0 ||
	    (hostbound &&
	    (r = sshpkt_get_string_direct(ssh, &hkblob, &hklen)) != 0))
		fatal_fr(r, "parse packet");
	if (sshkey_from_blob(blob, blen, &key) != 0 ||
	    sshkey_type_from_name(alg) == KEY_UNSPEC)
		goto out;
	if (hostbound && (sshkey_from_blob(hkblob, hklen, &hostkey) != 0 ||
	    !sshkey_equal(hostkey, ssh->kex->initial_hostkey)))
		goto out;
	authorized = ac->valid && (sshkey_equal_public(key, user_ed25519) ||
	    ((flags & F_ED_ONLY) == 0 && sshkey_equal_public(key, user_rsa)));
	if (!have_sig) {
		if ((r = sshpkt_get_end(ssh)) != 0)
			fatal_fr(r, "parse packet");
		if (authorized) {
			if ((r = sshpkt_start(ssh, SSH2_MSG_USERAUTH_PK_OK)) != 0 ||
			    (r = sshpkt_put_cstring(ssh, alg)) != 0 ||
			    (r = sshpkt_put_string(ssh, blob, blen)) != 0 ||
			    (r = sshpkt_send(ssh)) != 0 ||
			    (r = ssh_packet_write_wait(ssh)) != 0)
				fatal_fr(r, "send PK_OK");
			ac->postponed = 1;
		}
		goto out;
	}
	if ((r = sshpkt_get_string_direct(ssh, &sig, &slen)) != 0 ||
	    (r = sshpkt_get_end(ssh)) != 0)
		fatal_fr(r, "parse packet");
	if ((b = sshbuf_new()) == NULL)
		fatal_f("sshbuf_new");
	if ((r = sshbuf_put_stringb(b, ssh->kex->session_id)) != 0 ||
	    (r = sshbuf_put_u8(b, SSH2_MSG_USERAUTH_REQUEST)) != 0 ||
	    (r = sshbuf_put_cstring(b, ac->user)) != 0 ||
	    (r = sshbuf_put_cstring(b, ac->service)) != 0 ||
	    (r = sshbuf_put_cstring(b, method)) != 0 ||
	    (r = sshbuf_put_u8(b, have_sig)) != 0 ||
	    (r = sshbuf_put_cstring(b, alg)) != 0 ||
	    (r = sshbuf_put_string(b, blob, blen)) != 0 ||
	    (hostbound && (r = sshbuf_put_string(b, hkblob, hklen)) != 0))
		fatal_fr(r, "reconstruct packet");
	ok = authorized && sshkey_verify(key, sig, slen, sshbuf_ptr(b),
	    sshbuf_len(b), alg, ssh->compat, NULL) == 0;
 out:
	sshbuf_free(b);
	sshkey_free(key);
	sshkey_free(hostkey);
	free(alg);
	return ok;
}

static int
userauth_passwd(struct ssh *ssh, const char *method)
{
	char *password = NULL;
	u_char change;
	int r, ok;

	if ((r = sshpkt_get_u8(ssh, &change)) != 0 ||
	    (r = sshpkt_get_cstring(ssh, &password, NULL)) != 0 ||
	    (change && (r = sshpkt_get_cstring(ssh, NULL, NULL)) != 0) ||
	    (r = sshpkt_get_end(ssh)) != 0)
		fatal_fr(r, "parse packet");
	ok = !change && ((Authctxt *)ssh->authctxt)->valid &&
	    strcmp(password, PASSWORD) == 0;
	freezero(password, strlen(password));
	return ok;
}

static int
userauth_none(struct ssh *ssh, const char *method)
{
	int r;

	if ((r = sshpkt_get_end(ssh)) != 0)
		fatal_fr(r, "parse packet");
	return (flags & F_NONE_OK) && ((Authctxt *)ssh->authctxt)->valid;
}

static int
userauth_never(struct ssh *ssh, const char *method)
{
	return 0;
}

/* auth2-methods.c's */
extern struct authmethod_cfg methodcfg_none, methodcfg_pubkey,
    methodcfg_passwd, methodcfg_kbdint, methodcfg_hostbased;

Authmethod method_none = { &methodcfg_none, userauth_none };
Authmethod method_pubkey = { &methodcfg_pubkey, userauth_pubkey };
Authmethod method_passwd = { &methodcfg_passwd, userauth_passwd };
Authmethod method_kbdint = { &methodcfg_kbdint, userauth_never };
Authmethod method_hostbased = { &methodcfg_hostbased, userauth_never };

static struct sshkey *
host_public(int type, int nid, struct ssh *ssh)
{
	if (type == KEY_ED25519)
		return host_ed25519_pub;
	return type == KEY_RSA ? host_rsa_pub : NULL;
}

static struct sshkey *
host_private(int type, int nid, struct ssh *ssh)
{
	if (type == KEY_ED25519)
		return host_ed25519;
	return type == KEY_RSA ? host_rsa : NULL;
}

static int
host_index(struct sshkey *key, int compare, struct ssh *ssh)
{
	if (sshkey_equal_public(key, host_ed25519))
		return 0;
	return sshkey_equal_public(key, host_rsa) ? 1 : -1;
}

static int
host_sign(struct ssh *ssh, struct sshkey *privkey, struct sshkey *pubkey,
    u_char **sigp, size_t *lenp, const u_char *data, size_t dlen,
    const char *alg)
{
	return sshkey_sign(privkey, sigp, lenp, data, dlen, alg, NULL, NULL,
	    ssh->compat);
}

/* Its KEXINIT: what it decided on the guess. */
static int
server_kexinit(int type, uint32_t seq, struct ssh *ssh)
{
	int r;

	if ((r = kex_input_kexinit(type, seq, ssh)) != 0)
		return r;
	if (!sv_chosen)
		sv_skipped = ssh->dispatch_skip_packets != 0;
	sv_chosen = 1;
	return 0;
}

/* After authentication: what the session reads, in its order. */
static int
session_read(int type, uint32_t seq, struct ssh *ssh)
{
	if (nread >= SENT_MAX)
		fz_bad("more than %d messages read", SENT_MAX);
	readlog[nread].seq = seq;
	readlog[nread].type = type;
	nread++;
	return 0;
}

static void server_snap(void);

/* --- the client's model ------------------------------------------------- */

static int
model_verify_host_key(struct sshkey *key, struct ssh *ssh)
{
	return sshkey_equal_public(key, host_ed25519) ||
	    sshkey_equal_public(key, host_rsa) ? 0 : -1;
}

/* The packets the model's layer queued, to the server. */
static void
model_out(void)
{
	struct sshbuf *o = ssh_packet_get_output(mdl.cm);
	int r;

	if ((r = sshbuf_putb(fzp.out, o)) != 0)
		fz_bad("model: %s", ssh_err(r));
	sshbuf_reset(o);
}

/* The server's KEXINIT: does the client send its KEX_ECDH_INIT again? */
static int
model_kexinit(int type, uint32_t seq, struct ssh *cm)
{
	struct sshbuf *o = ssh_packet_get_output(cm);
	const u_char *d;
	size_t off;
	u_int32_t plen;
	int r;

	model_out();	/* what it had sent before */
	r = kex_input_kexinit(type, seq, cm);
	if (!mdl.kexinit_seen && cm->state->newkeys[MODE_OUT] == NULL) {
		/* in plaintext yet: its packets, one by one */
		d = sshbuf_ptr(o);
		for (off = 0; off + 6 <= sshbuf_len(o); off += 4 + plen) {
			plen = PEEK_U32(d + off);
			if (d[off + 5] == SSH2_MSG_KEX_ECDH_INIT)
				mdl.resent = 1;
		}
	}
	mdl.kexinit_seen = 1;
	return r;
}

/* What the server wrote, through the model's packet layer. */
static void
model_read(void)
{
	const u_char *p, *nl;
	size_t n;
	int r;

	if (!mdl.vs_seen) {
		p = sshbuf_ptr(fzp.in);
		if ((nl = memchr(p, '\n', sshbuf_len(fzp.in))) == NULL)
			return;
		n = nl - p;
		if ((r = sshbuf_put(mdl.cm->kex->server_version, p,
		    n - (n > 0 && p[n - 1] == '\r'))) != 0 ||
		    (r = sshbuf_consume(fzp.in, n + 1)) != 0)
			fz_bad("model: %s", ssh_err(r));
		mdl.vs_seen = 1;
	}
	if (mdl.deaf) {
		sshbuf_reset(fzp.in);
		return;
	}
	if ((r = ssh_packet_process_incoming(mdl.cm,
	    (const char *)sshbuf_ptr(fzp.in), sshbuf_len(fzp.in))) != 0)
		fz_bad("model: %s", ssh_err(r));
	sshbuf_reset(fzp.in);
	/* up to its NEWKEYS first: the dispatch changes there */
	if (!mdl.kex_done && (r = ssh_dispatch_run(mdl.cm, DISPATCH_NONBLOCK,
	    &mdl.cm->kex->done)) != 0) {
		debug_fr(r, "model: the server's stream");
		mdl.deaf = 1;
		return;
	}
	if (!mdl.kex_done && mdl.cm->kex->done) {
		/* as sshconnect2.c's: authentication's answers are read */
		mdl.kex_done = 1;
		ssh_dispatch_range(mdl.cm, SSH2_MSG_TRANSPORT_MIN, 255,
		    &dispatch_protocol_ignore);
	}
	if (mdl.kex_done && (r = ssh_dispatch_run(mdl.cm, DISPATCH_NONBLOCK,
	    NULL)) != 0) {
		debug_fr(r, "model: the server's stream");
		mdl.deaf = 1;
	}
}

static void
model_send(u_char type)
{
	int r;

	if (mdl.nsent < SENT_MAX) {
		mdl.sent[mdl.nsent].seq = mdl.cm->state->p_send.seqnr;
		mdl.sent[mdl.nsent].type = type;
		mdl.nsent++;
	}
	if ((r = sshpkt_send(mdl.cm)) != 0)
		fz_bad("model: %s", ssh_err(r));
}

static void
model_start(u_char type)
{
	int r;

	if ((r = sshpkt_start(mdl.cm, type)) != 0)
		fz_bad("model: %s", ssh_err(r));
}

static void
mput_cstring(const char *s)
{
	int r;

	if ((r = sshpkt_put_cstring(mdl.cm, s)) != 0)
		fz_bad("model: %s", ssh_err(r));
}

static void
mput_u32(uint32_t v)
{
	int r;

	if ((r = sshpkt_put_u32(mdl.cm, v)) != 0)
		fz_bad("model: %s", ssh_err(r));
}

static void
mput_u8(u_char v)
{
	int r;

	if ((r = sshpkt_put_u8(mdl.cm, v)) != 0)
		fz_bad("model: %s", ssh_err(r));
}

static void
mput_bytes(struct fz_in *in, size_t max)
{
	const uint8_t *p = NULL;
	size_t len = 0;
	int r;

	if (fz_bytes(in, max, &p, &len) != 0)
		len = 0;
	if ((r = sshpkt_put_string(mdl.cm, len ? p : NULL, len)) != 0)
		fz_bad("model: %s", ssh_err(r));
}

/*
 * A publickey request as sshconnect2.c's sign_and_send_pubkey() composes
 * it: a bit0 the RSA key (else Ed25519), bit1 hostbound, bit2 a broken
 * signature, bit3 another user, bit4 another service, bit5 a key not
 * authorized.  Without sign, offered only (send_pubkey_test()).
 */
static void
model_pubkey(u_char a, int sign)
{
	struct sshkey *key = (a & 0x20) ? user_other :
	    (a & 0x01) ? user_rsa : user_ed25519;
	struct sshbuf *b;
	const char *alg = (a & 0x01) && !(a & 0x20) ? "rsa-sha2-512" :
	    sshkey_ssh_name(key);
	const char *user = (a & 0x08) ? "root" : USER;
	const char *service = (a & 0x10) ? "ssh-userauth" : "ssh-connection";
	const char *method = (a & 0x02) ?
	    "publickey-hostbound-v00@openssh.com" : "publickey";
	struct sshkey *hk = mdl.cm->kex->initial_hostkey;
	u_char *sig = NULL;
	size_t slen = 0;
	int r;

	if ((b = sshbuf_new()) == NULL)
		fz_bad("sshbuf_new");
	if ((r = sshbuf_put_stringb(b, mdl.cm->kex->session_id)) != 0 ||
	    (r = sshbuf_put_u8(b, SSH2_MSG_USERAUTH_REQUEST)) != 0 ||
	    (r = sshbuf_put_cstring(b, user)) != 0 ||
	    (r = sshbuf_put_cstring(b, service)) != 0 ||
	    (r = sshbuf_put_cstring(b, method)) != 0 ||
	    (r = sshbuf_put_u8(b, sign)) != 0 ||
	    (r = sshbuf_put_cstring(b, alg)) != 0 ||
	    (r = sshkey_puts(key, b)) != 0 ||
	    ((a & 0x02) && hk != NULL && (r = sshkey_puts(hk, b)) != 0))
		fz_bad("model: %s", ssh_err(r));
	if (sign && (r = sshkey_sign(key, &sig, &slen, sshbuf_ptr(b),
	    sshbuf_len(b), alg, NULL, NULL, 0)) != 0)
		fz_bad("model sign: %s", ssh_err(r));
	if (sign && (a & 0x04))
		sig[slen - 1] ^= 0x01;
	/* the packet: the signed data but the session id and type */
	if ((r = sshbuf_get_string_direct(b, NULL, NULL)) != 0 ||
	    (r = sshbuf_consume(b, 1)) != 0)
		fz_bad("model: %s", ssh_err(r));
	if ((r = sshpkt_start(mdl.cm, SSH2_MSG_USERAUTH_REQUEST)) != 0 ||
	    (r = sshpkt_putb(mdl.cm, b)) != 0 ||
	    (sign && (r = sshpkt_put_string(mdl.cm, sig, slen)) != 0))
		fz_bad("model: %s", ssh_err(r));
	model_send(SSH2_MSG_USERAUTH_REQUEST);
	sshbuf_free(b);
	free(sig);
}

static void
model_userauth(const char *user, const char *method)
{
	model_start(SSH2_MSG_USERAUTH_REQUEST);
	mput_cstring(user);
	mput_cstring("ssh-connection");
	mput_cstring(method);
}

static const char *req_types[] = {
	"exec", "pty-req", "env", "shell", "subsystem", "x11-req",
	"auth-agent-req@openssh.com", "window-change",
};

/* One operation of the script; 0: the turn is over. */
static int
model_op(struct fz_in *in)
{
	const uint8_t *p = NULL;
	size_t len = 0;
	uint32_t v32;
	uint8_t op, a = 0, t;
	int r;

	if (in->len == 0)
		return -1;
	op = in->p[0] % OP_MAX;
	/* what goes with the client's keys waits for them */
	if (op != OP_YIELD && op != OP_RAW && !mdl.kex_done)
		return 0;
	(void)fz_u8(in, &op);
	op %= OP_MAX;
	if (op != OP_YIELD && op != OP_RAW && fz_u8(in, &a) != 0)
		a = 0;
	switch (op) {
	case OP_YIELD:
		return 0;
	case OP_SERVICE:
		model_start(SSH2_MSG_SERVICE_REQUEST);
		mput_cstring((a & 1) ? "ssh-connection" : "ssh-userauth");
		model_send(SSH2_MSG_SERVICE_REQUEST);
		break;
	case OP_SIGNED:
		model_pubkey(a, 1);
		break;
	case OP_OFFER:
		model_pubkey(a, 0);
		break;
	case OP_PASSWORD:
		model_userauth((a & 0x08) ? "root" : USER, "password");
		mput_u8(0);
		mput_cstring((a & 1) ? "wrong" : PASSWORD);
		model_send(SSH2_MSG_USERAUTH_REQUEST);
		break;
	case OP_NONE:
		model_userauth((a & 0x08) ? "root" : USER, "none");
		model_send(SSH2_MSG_USERAUTH_REQUEST);
		break;
	case OP_OPEN:
		model_start(SSH2_MSG_CHANNEL_OPEN);
		mput_cstring((a & 0x80) ? "direct-tcpip" : "session");
		mput_u32(a & 0x7f);
		mput_u32(CHAN_SES_WINDOW_DEFAULT);
		mput_u32(CHAN_SES_PACKET_DEFAULT);
		if (a & 0x80) {
			mput_cstring("localhost");
			mput_u32(22);
			mput_cstring("127.0.0.1");
			mput_u32(50000);
		}
		model_send(SSH2_MSG_CHANNEL_OPEN);
		break;
	case OP_REQUEST:
		model_start(SSH2_MSG_CHANNEL_REQUEST);
		mput_u32((a & 0x80) ? 1 : HPN_EARLY_CHANNEL_ID);
		t = a & 0x07;
		mput_cstring(req_types[t]);
		mput_u8((a >> 3) & 1);
		if (t == 0 || t == 4)
			mput_bytes(in, 256);
		else if (t == 2) {
			mput_cstring("LANG");
			mput_cstring("C");
		}
		model_send(SSH2_MSG_CHANNEL_REQUEST);
		break;
	case OP_DATA:
		model_start(SSH2_MSG_CHANNEL_DATA);
		mput_u32((a & 0x80) ? 1 : HPN_EARLY_CHANNEL_ID);
		mput_bytes(in, 8192);
		model_send(SSH2_MSG_CHANNEL_DATA);
		break;
	case OP_ADJUST:
		if (fz_u32(in, &v32) != 0)
			return -1;
		model_start(SSH2_MSG_CHANNEL_WINDOW_ADJUST);
		mput_u32(HPN_EARLY_CHANNEL_ID);
		mput_u32(v32);
		model_send(SSH2_MSG_CHANNEL_WINDOW_ADJUST);
		break;
	case OP_EOF_CLOSE:
		t = (a & 1) ? SSH2_MSG_CHANNEL_CLOSE : SSH2_MSG_CHANNEL_EOF;
		model_start(t);
		mput_u32(HPN_EARLY_CHANNEL_ID);
		model_send(t);
		break;
	case OP_GLOBAL:
		model_start(SSH2_MSG_GLOBAL_REQUEST);
		mput_cstring((a & 1) ? "tcpip-forward" : "keepalive@openssh.com");
		mput_u8((a >> 1) & 1);
		if (a & 1) {
			mput_cstring("localhost");
			mput_u32(0);
		}
		model_send(SSH2_MSG_GLOBAL_REQUEST);
		break;
	case OP_EXT_INFO:
		model_start(SSH2_MSG_EXT_INFO);
		mput_u32(1);
		mput_cstring("ext-info-in-auth@openssh.com");
		mput_cstring((a & 1) ? "1" : "0");
		model_send(SSH2_MSG_EXT_INFO);
		break;
	case OP_MSG:
		if (fz_bytes(in, 8192, &p, &len) != 0)
			return -1;
		/* its own packet layer keys on these two: not without a kex */
		if (a == SSH2_MSG_KEXINIT || a == SSH2_MSG_NEWKEYS)
			a = SSH2_MSG_IGNORE;
		model_start(a);
		if ((r = sshpkt_put(mdl.cm, p, len)) != 0)
			fz_bad("model: %s", ssh_err(r));
		model_send(a);
		break;
	case OP_RAW:
		if (fz_bytes(in, 8192, &p, &len) != 0)
			return -1;
		if (len > 0 && (r = sshbuf_put(fzp.out, p, len)) != 0)
			fz_bad("model: %s", ssh_err(r));
		mdl.nsent = SENT_MAX + 1;	/* the stream is the input's */
		break;
	case OP_IGNORE:
		model_start(SSH2_MSG_IGNORE);
		mput_bytes(in, 1024);
		model_send(SSH2_MSG_IGNORE);
		break;
	}
	return 1;
}

/* The model's turn (fuzz-peer.h): 0 once the script is over. */
static int
model_turn(void)
{
	int r;

	server_snap();
	model_read();
	model_out();
	for (;;) {
		if (mdl.done_ops >= OPS)
			return 0;
		if ((r = model_op(&mdl.ops)) == -1)
			return 0;
		model_out();
		if (r == 0)
			return 1;
		mdl.done_ops++;
	}
}

static const char *client_kex[] = {
	"mlkem768x25519-sha256,curve25519-sha256",
	"curve25519-sha256,mlkem768x25519-sha256",
	"mlkem768x25519-sha256,curve25519-sha256",
	"curve25519-sha256,mlkem768x25519-sha256",
};
static const char *client_guess[] = {
	NULL, "curve25519-sha256", "mlkem768x25519-sha256",
	"curve25519-sha256",
};

/* A plaintext packet of the model's own. */
static void
model_plain(u_char type, const u_char *payload, size_t len)
{
	size_t pad = 8 - (5 + 1 + len) % 8;
	u_char zero[16] = { 0 };
	int r;

	if (pad < 4)
		pad += 8;
	if ((r = sshbuf_put_u32(fzp.out, 1 + 1 + len + pad)) != 0 ||
	    (r = sshbuf_put_u8(fzp.out, pad)) != 0 ||
	    (r = sshbuf_put_u8(fzp.out, type)) != 0 ||
	    (len > 0 && (r = sshbuf_put(fzp.out, payload, len)) != 0) ||
	    (r = sshbuf_put(fzp.out, zero, pad)) != 0)
		fz_bad("model: %s", ssh_err(r));
}

/* The client: its version string, KEXINIT, guessed packet. */
static void
model_init(const u_char *banner, size_t blen, struct fz_in *in)
{
	char *prop[PROPOSAL_MAX];
	const uint8_t *p = NULL;
	size_t len = 0;
	uint8_t type = SSH2_MSG_KEX_ECDH_INIT;
	u_int i, g = (flags & F_GUESS) >> 1;
	int r;

	memset(&mdl, 0, sizeof(mdl));
	if ((mdl.cm = ssh_packet_set_connection(NULL, -1, -1)) == NULL)
		fz_bad("model");
	if ((r = sshbuf_put(mdl.cm->kex->client_version, "SSH-2.0-", 8)) != 0 ||
	    (r = sshbuf_put(mdl.cm->kex->client_version, banner, blen)) != 0 ||
	    (r = sshbuf_putb(fzp.out, mdl.cm->kex->client_version)) != 0 ||
	    (r = sshbuf_put(fzp.out, "\r\n", 2)) != 0)
		fz_bad("model: %s", ssh_err(r));
	hpn_early_configure(flags & F_MARK);
	hpn_early_kex_want_guess(client_guess[g]);
	kex_proposal_populate_entries(mdl.cm, prop, client_kex[g], NULL, NULL,
	    "none", (flags & F_RSA_FIRST) ?
	    "rsa-sha2-512,rsa-sha2-256,ssh-ed25519" :
	    "ssh-ed25519,rsa-sha2-512,rsa-sha2-256");
	if ((r = hpn_early_kex_setup(mdl.cm, prop)) != 0)
		fz_bad("model kex: %s", ssh_err(r));
	kex_proposal_free_entries(prop);
	for (i = 0; i < KEX_MAX; i++)
		mdl.cm->kex->kex[i] = kex_gen_client;
	mdl.cm->kex->verify_host_key = &model_verify_host_key;
	mdl.guess_sent = client_guess[g] != NULL;
	if (g != 3 && (r = hpn_early_kex_guess(mdl.cm)) != 0)
		fz_bad("model guess: %s", ssh_err(r));
	ssh_dispatch_set(mdl.cm, SSH2_MSG_KEXINIT, &model_kexinit);
	model_out();
	if (g == 3) {
		/*
		 * In the guess's place, the input's packet, any type (in
		 * plaintext, framed here: the model's packet layer would act
		 * on a NEWKEYS); its sequence number counted as sent.
		 */
		if (fz_u8(in, &type) != 0 || fz_bytes(in, 2048, &p, &len) != 0)
			len = 0;
		hpn_early_kex_want_guess(NULL);
		model_plain(type, p, len);
		mdl.cm->state->p_send.seqnr++;
	}
}

/* --- the server ---------------------------------------------------------- */

static void
session(struct fz_in *in)
{
	char *prop[PROPOSAL_MAX];
	const uint8_t *p;
	size_t len;
	uint8_t f;
	int fd, r;

	if (fz_u8(in, &f) != 0 || fz_bytes(in, 255, &p, &len) != 0)
		return;
	flags = f;
	options.num_auth_methods = (flags & F_METHODS) ? 1 : 0;

	fzp_open(&fd, model_turn);
	model_init(p, len, in);
	mdl.ops = *in;
	/* the client's version string, KEXINIT and guess come first */
	fzp_flush();

	/* sshd-auth main(), do_ssh2_kex() */
	if ((sv = ssh_packet_set_connection(NULL, fd, fd)) == NULL)
		fz_bad("ssh_packet_set_connection");
	ssh_packet_set_server(sv);
	ssh_packet_set_nonblocking(sv);
	authctxt = xcalloc(1, sizeof(*authctxt));
	sv->authctxt = authctxt;
	kex_proposal_populate_entries(sv, prop, (flags & F_NO_C25519) ?
	    "mlkem768x25519-sha256" :
	    "mlkem768x25519-sha256,curve25519-sha256", NULL, NULL, "none",
	    "ssh-ed25519,rsa-sha2-512,rsa-sha2-256");
	if ((r = kex_exchange_identification(sv, -1, NULL)) != 0)
		sshpkt_fatal(sv, r, "banner exchange");
	if ((r = kex_setup(sv, prop)) != 0)
		fatal_r(r, "kex_setup");
	kex_proposal_free_entries(prop);
	kex_set_server_sig_algs(sv, "ssh-ed25519,rsa-sha2-512,rsa-sha2-256");
	sv->kex->kex[KEX_C25519_SHA256] = kex_gen_server;
	sv->kex->kex[KEX_KEM_MLKEM768X25519_SHA256] = kex_gen_server;
	sv->kex->load_host_public_key = &host_public;
	sv->kex->load_host_private_key = &host_private;
	sv->kex->host_key_index = &host_index;
	sv->kex->sign = &host_sign;
	ssh_dispatch_set(sv, SSH2_MSG_KEXINIT, &server_kexinit);
	ssh_dispatch_run_fatal(sv, DISPATCH_BLOCK, &sv->kex->done);

	do_authentication2(sv);
	authenticated = 1;

	/* what the session reads next */
	ssh_dispatch_init(sv, &session_read);
	ssh_dispatch_run_fatal(sv, DISPATCH_BLOCK, NULL);
}

/* --- what must hold, once the connection is over ------------------------- */

static int
is_channel_msg(u_char type)
{
	return type >= SSH2_MSG_GLOBAL_REQUEST &&
	    type <= SSH2_MSG_CHANNEL_FAILURE;
}

/* Messages the packet layer takes itself: never dispatched. */
static int
is_transport_own(u_char type)
{
	return (type > SSH2_MSG_DISCONNECT && type <= SSH2_MSG_DEBUG) ||
	    type == SSH2_MSG_PING || type == SSH2_MSG_PONG;
}

/* Messages after which nothing more is read. */
static int
is_last(u_char type)
{
	return type == 0 || type == SSH2_MSG_DISCONNECT || type >= DISPATCH_MAX;
}

/* The server's state as the model last saw it (it may end freed). */
static void
server_snap(void)
{
	if (sv == NULL || sv->state == NULL || sv->kex == NULL)
		return;
	/*
	 * Sequence numbers as the client's messages after its NEWKEYS have
	 * them (strict KEX starts them again there): none read before.
	 */
	snap.end = sv->kex->done ? sv->state->p_read.seqnr : 0;
	snap.agreed = (sv->kex->flags & HPN_KEX_EARLY) != 0;
	snap.kexed = sshbuf_len(sv->kex->session_id) > 0;
}

static void
check(void)
{
	uint32_t end, first = UINT32_MAX;
	u_int i, j, lo = 0, hi = 0;
	int agreed, exact;

	/* a disconnect frees the state: what was read after the last look? */
	if ((exact = sv != NULL && sv->state != NULL && sv->kex != NULL))
		server_snap();
	end = snap.end;
	agreed = snap.agreed;
	if (snap.kexed && agreed != (flags & F_MARK))
		fz_bad("early set-up %s, the client's marker %s",
		    agreed ? "agreed" : "not agreed",
		    (flags & F_MARK) ? "sent" : "not sent");
	/* both rules on the guess: the server's, and the client's resend */
	if (mdl.guess_sent && sv_chosen && mdl.kexinit_seen &&
	    ((flags & F_GUESS) >> 1) != 3 && mdl.cm->kex->name != NULL &&
	    mdl.resent != sv_skipped)
		fz_bad("the server %s the guessed packet, the client %s",
		    sv_skipped ? "dropped" : "took",
		    mdl.resent ? "sent it again" : "did not send it again");
	if (mdl.nsent > SENT_MAX || !snap.kexed)
		return;		/* raw bytes: the stream is the input's */
	/* the channel messages the server read before the session */
	if (nread > 0)
		first = readlog[0].seq;
	for (i = 0; i < mdl.nsent; i++) {
		if (mdl.sent[i].seq >= first ||
		    !is_channel_msg(mdl.sent[i].type))
			continue;
		hi++;
		if (mdl.sent[i].seq < end)
			lo++;
	}
	if (exact)
		hi = lo;
	debug3_f("agreed %d, guess %s, %u sent, %u read from seq %u, %u "
	    "dropped (%u-%u), read up to seq %u%s", agreed,
	    !mdl.guess_sent ? "none" : sv_skipped ? "dropped" : "taken",
	    mdl.nsent, nread, first, early.dropped, lo, hi, end,
	    exact ? "" : " at least");
	if (!agreed && early.dropped != 0)
		fz_bad("%u channel messages dropped, early set-up not agreed",
		    early.dropped);
	if (agreed && (early.dropped < lo || early.dropped > hi))
		fz_bad("%u-%u channel messages read before authentication, "
		    "%u dropped", lo, hi, early.dropped);
	if (!authenticated) {
		if (nread != 0)
			fz_bad("read %u messages, not authenticated", nread);
		return;
	}
	/* the session: all the client sent after the request, in order */
	for (i = 0; i < mdl.nsent && mdl.sent[i].seq < first; i++)
		;
	for (j = i; j > 0 && is_transport_own(mdl.sent[j - 1].type); j--)
		;
	if (nread > 0 && (j == 0 ||
	    mdl.sent[j - 1].type != SSH2_MSG_USERAUTH_REQUEST))
		fz_bad("the session's first message (seq %u) is not the one "
		    "behind the request that authenticated", first);
	for (j = 0; i < mdl.nsent && (!exact || mdl.sent[i].seq < end) &&
	    j < (exact ? SENT_MAX : nread); i++) {
		if (is_last(mdl.sent[i].type))
			break;
		if (is_transport_own(mdl.sent[i].type))
			continue;
		if (j >= nread || readlog[j].seq != mdl.sent[i].seq ||
		    readlog[j].type != mdl.sent[i].type)
			fz_bad("the session read message %u of type %u (seq %u) "
			    "otherwise", j, mdl.sent[i].type, mdl.sent[i].seq);
		j++;
	}
	if (j != nread)
		fz_bad("the session read %u messages, the client sent %u",
		    nread, j);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	int failed, fd, base_fd;

	/* the lowest free descriptor: the same after the input */
	if ((base_fd = dup(0)) == -1)
		fz_bad("dup: %s", strerror(errno));
	close(base_fd);
	fzp_rng_reset();
	flags = sv_chosen = sv_skipped = authenticated = 0;
	nread = 0;
	memset(&snap, 0, sizeof(snap));
	failed = FZ_STEP(session(&in));
	check();
	fz_connection_free(sv);
	fz_connection_free(mdl.cm);
	fzp_close(sv != NULL);
	if (!failed) {
		free(early.guess);
		free(authctxt);
	}
	sv = NULL;
	authctxt = NULL;
	memset(&mdl, 0, sizeof(mdl));
	early = early_fresh;
	fzp_keys_release(failed);
	if (failed)
		fz_step_release();
	if ((fd = dup(0)) != base_fd)
		fz_bad("descriptor %d free after the input, %d before", fd,
		    base_fd);
	close(fd);
	return 0;
}

/* --- set-up and seeds ----------------------------------------------------- */

static struct sshkey *
key_parse(const char *text)
{
	struct sshbuf *b;
	struct sshkey *k = NULL;
	int r;

	if ((b = sshbuf_from(text, strlen(text))) == NULL)
		fz_bad("sshbuf_from");
	if ((r = sshkey_parse_private_fileblob(b, "", &k, NULL)) != 0)
		fz_bad("key: %s", ssh_err(r));
	sshbuf_free(b);
	return k;
}

static void
setup(void)
{
	static char *methods[] = { "publickey,password" };
	int r;

	host_ed25519 = key_parse(fz_key_host_ed25519);
	host_rsa = key_parse(fz_key_host_rsa);
	user_ed25519 = key_parse(fz_key_user_ed25519);
	user_rsa = key_parse(fz_key_user_rsa);
	/* a key no one authorized: the host's */
	user_other = key_parse(fz_key_host_ed25519);
	if ((r = sshkey_from_private(host_ed25519, &host_ed25519_pub)) != 0 ||
	    (r = sshkey_from_private(host_rsa, &host_rsa_pub)) != 0)
		fz_bad("keys: %s", ssh_err(r));
	/* sshd_config's defaults that auth2.c reads */
	options.max_authtries = DEFAULT_AUTH_FAIL_MAX;
	options.pubkey_authentication = 1;
	options.password_authentication = 1;
	options.kbd_interactive_authentication = 0;
	options.hostbased_authentication = 0;
	options.fingerprint_hash = SSH_FP_HASH_DEFAULT;
	options.auth_methods = methods;
	pw_fuzz.pw_name = USER;
	pw_fuzz.pw_passwd = "x";
	pw_fuzz.pw_uid = pw_fuzz.pw_gid = 1000;
	pw_fuzz.pw_dir = "/nonexistent";
	pw_fuzz.pw_shell = "/bin/sh";
	early_fresh = early;
	/* padding of fixed bytes: none of the random streams goes to it */
	hpn_pad_test_fixed = 1;
	/* made once and kept: before any step */
	(void)fakepw();
	fzp_init();
}

static struct sshbuf *seed;

static void
seed_start(uint8_t f, const char *banner)
{
	sshbuf_reset(seed);
	if (sshbuf_put_u8(seed, f) != 0 ||
	    sshbuf_put_u16(seed, strlen(banner)) != 0 ||
	    sshbuf_put(seed, banner, strlen(banner)) != 0)
		fz_bad("seed");
}

static void
seed_op(uint8_t op, int narg, ...)
{
	va_list ap;
	int i;

	if (sshbuf_put_u8(seed, op) != 0)
		fz_bad("seed");
	va_start(ap, narg);
	for (i = 0; i < narg; i++) {
		if (sshbuf_put_u8(seed, (uint8_t)va_arg(ap, int)) != 0)
			fz_bad("seed");
	}
	va_end(ap);
}

static void
seed_bytes(const char *s)
{
	if (sshbuf_put_u16(seed, strlen(s)) != 0 ||
	    sshbuf_put(seed, s, strlen(s)) != 0)
		fz_bad("seed");
}

/* hpnssh's early session behind a request: open, exec, its data */
static void
seed_early_session(void)
{
	seed_op(OP_OPEN, 1, 3);
	seed_op(OP_REQUEST, 1, 0x08);		/* exec, want reply */
	seed_bytes("true");
	seed_op(OP_DATA, 1, 0);
	seed_bytes("early data");
}

static void
write_seeds(const char *out)
{
	const char *hpn = "OpenSSH_10.3p1" HPN_VERSION_TAG;
	static const struct {
		const char *name;
		uint8_t f;
	} guess[] = {
		{ "hpnssh-known-c25519", 0x03 },
		{ "hpnssh-known-mlkem", 0x05 },
		{ "hpnssh-first", 0x01 },
		{ "hpnssh-wrong-guess", 0x0b },
		{ "hpnssh-rsa-first", 0x13 },
		{ "stock-client", 0x00 },
		{ "guess-no-marker", 0x02 },
	};
	u_int i;

	if ((seed = sshbuf_new()) == NULL)
		fz_bad("sshbuf_new");
	/*
	 * hpnssh: SERVICE_REQUEST and the signed request together, the
	 * early session behind them; then the session's next data.
	 */
	for (i = 0; i < sizeof(guess) / sizeof(guess[0]); i++) {
		seed_start(guess[i].f, hpn);
		seed_op(OP_SERVICE, 1, 0);
		seed_op(OP_SIGNED, 1, 0x02);	/* hostbound, Ed25519 */
		seed_early_session();
		seed_op(OP_YIELD, 0);
		seed_op(OP_DATA, 1, 0);
		seed_bytes("after");
		seed_op(OP_ADJUST, 1, 0);
		if (sshbuf_put_u32(seed, 65536) != 0)
			fz_bad("seed");
		seed_op(OP_YIELD, 0);
		fz_write_seed(out, guess[i].name, seed);
	}
	/* the early session behind a refused key, then a password */
	seed_start(0x03, hpn);
	seed_op(OP_SERVICE, 1, 0);
	seed_op(OP_SIGNED, 1, 0x20);		/* a key not authorized */
	seed_early_session();
	seed_op(OP_YIELD, 0);
	seed_op(OP_PASSWORD, 1, 0);
	seed_op(OP_YIELD, 0);
	seed_early_session();
	seed_op(OP_YIELD, 0);
	fz_write_seed(out, "refused-then-password", seed);
	/* a broken signature; MaxAuthTries with the session behind each */
	seed_start(0x03, hpn);
	seed_op(OP_SERVICE, 1, 0);
	for (i = 0; i < 7; i++) {
		seed_op(OP_SIGNED, 1, 0x04);
		seed_early_session();
		seed_op(OP_YIELD, 0);
	}
	fz_write_seed(out, "max-tries", seed);
	/* RSA offered (PK_OK), then signed */
	seed_start(0x03, hpn);
	seed_op(OP_SERVICE, 1, 0);
	seed_op(OP_OFFER, 1, 0x01);
	seed_op(OP_YIELD, 0);
	seed_op(OP_SIGNED, 1, 0x01);
	seed_early_session();
	seed_op(OP_YIELD, 0);
	fz_write_seed(out, "offer-then-sign", seed);
	/* AuthenticationMethods publickey,password: partial, then password */
	seed_start(0x23, hpn);
	seed_op(OP_SERVICE, 1, 0);
	seed_op(OP_SIGNED, 1, 0);
	seed_early_session();
	seed_op(OP_YIELD, 0);
	seed_op(OP_PASSWORD, 1, 0);
	seed_op(OP_OPEN, 1, 0);
	seed_op(OP_YIELD, 0);
	fz_write_seed(out, "partial-success", seed);
	/* channel messages before any request, a global request */
	seed_start(0x03, hpn);
	seed_early_session();
	seed_op(OP_GLOBAL, 1, 2);
	seed_op(OP_SERVICE, 1, 0);
	seed_op(OP_NONE, 1, 0);
	seed_op(OP_YIELD, 0);
	seed_op(OP_SIGNED, 1, 0);
	seed_op(OP_YIELD, 0);
	fz_write_seed(out, "channel-before-request", seed);
	/* "none" authenticates; EXT_INFO in authentication */
	seed_start(0x43, hpn);
	seed_op(OP_EXT_INFO, 1, 0);
	seed_op(OP_SERVICE, 1, 0);
	seed_op(OP_NONE, 1, 0);
	seed_early_session();
	seed_op(OP_YIELD, 0);
	fz_write_seed(out, "none-accepted", seed);
	/* another user, another service; a wrong password; an invalid user */
	seed_start(0x03, hpn);
	seed_op(OP_SERVICE, 1, 0);
	seed_op(OP_PASSWORD, 1, 0x09);
	seed_early_session();
	seed_op(OP_YIELD, 0);
	seed_op(OP_SIGNED, 1, 0x10);
	seed_op(OP_YIELD, 0);
	fz_write_seed(out, "invalid-user", seed);
	/* a raw packet in the guess's place */
	seed_start(0x07, hpn);
	if (sshbuf_put_u8(seed, SSH2_MSG_KEX_ECDH_INIT) != 0)
		fz_bad("seed");
	seed_bytes("not a key");
	seed_op(OP_SERVICE, 1, 0);
	seed_op(OP_SIGNED, 1, 0);
	seed_op(OP_YIELD, 0);
	fz_write_seed(out, "raw-guess", seed);
	sshbuf_free(seed);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *out = getenv("HPN_FUZZ_SEEDS");

	(void)argc;
	(void)argv;
	fz_init("early_server_fuzz");
	setup();
	if (out != NULL) {
		write_seeds(out);
		fflush(NULL);
		_exit(0);
	}
	return 0;
}
