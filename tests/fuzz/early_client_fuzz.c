/*
 * Fuzz harness: hpnssh's connection set-up with EarlySend (README.hpn
 * section 15; src/hpn-early.c, src/hpn-early-client.c), fed a server's
 * byte stream from its version string to the session's first data.
 *
 * The client is OpenSSH's own code as ssh_login() runs it, blocking reads
 * and all: hpn_early_socket(), hpn_early_kex_wanted() on an
 * EarlyHostsFile that records the host (a guess: KEXINIT with
 * first_kex_packet_follows and the method's first packet, sent with the
 * version string), kex_exchange_identification(), hpn_early_kex_banner(),
 * ssh_kex2() (sshconnect2.c compiled in: ssh_kex2_start(),
 * hpn_early_kex_setup(), hpn_early_kex_guess(), kex_gen_client()),
 * hpn_early_kex_done(), ssh_userauth2() (hpn_early_userauth(), the first
 * request with SERVICE_REQUEST, a key signed at once, hpn_early_signed()
 * and the early session behind it, hpn_early_auth_result(),
 * pubkey_early_recheck(), the "none" fallback), then the session's
 * channel messages through channels.c (hpn_early_channel_confirm(),
 * hpn_early_window_adjust()).  Not linked: sshconnect.c (its
 * verify_host_key() is the harness's: the fixed host keys are known
 * hosts, any other key fails), ssh.c (the session's opener is the
 * harness's: a session channel as ssh_session2_open() makes it, an exec
 * request as its setup sends), clientloop.c (the session's dispatch is
 * channels.c's handlers, set as client_init_dispatch() sets them; no
 * channel's data is written or read after authentication), the agent,
 * passwords and keyboard-interactive (BatchMode).
 *
 * The server is a model (fuzz-peer.h: it runs whenever the client waits
 * for data that is not there) on a second struct ssh: our server's rules
 * decide on the guess (the model's KEXINIT goes through kex_input_kexinit()
 * with kex->server set: hpn_early_kex_peer(), hpn_early_guess_ok()), the
 * model derives the keys and encrypts and decrypts through that packet
 * layer, and the input is a script of what the server does and when:
 * deliver its KEXINIT (held until then), reply to the client's
 * KEX_ECDH_INIT, send NEWKEYS, EXT_INFO, SERVICE_ACCEPT, authentication
 * answers, channel confirmations, window adjusts, data, any message
 * (through its packet layer, or as a plaintext packet of its own), raw
 * bytes, and when to let the client go on.
 *
 * Its KEX_ECDH_REPLY is computed, not taken from the input: the fuzzer
 * cannot forge a host key's signature, and a wrapped verification would
 * let through replies no server can make and hide the ones it can.  The
 * model computes the reply a server can: its own key exchange value for
 * the client's latest one (kex_c25519_enc(), kex_kem_mlkem768x25519_enc())
 * and the exchange hash (kexgen.c compiled in: kex_gen_hash()) signed with
 * a fixed host key, over either the transcript the server has (its own
 * KEXINIT) or the one the client has at that moment (what it has received
 * of the server's KEXINIT: nothing before it), with the key the input
 * picks (what the client expects: RSA before any KEXINIT, kex->hostkey_type
 * 0; Ed25519; RSA).  So a reply sent before the server's KEXINIT, signed
 * over what the client has, passes the client's checks: that is how the
 * fixed defect (bd2e809, a reply before KEXINIT ran input_kex_gen_reply()
 * with no method agreed, a heap overflow in derive_key()) is reached
 * (corpus/early_client/reply-before-kexinit: ASan reports it with
 * 301a329's src/hpn-early.c; from the other seeds, a run found it again
 * after 9,731 executions: crash-reply-before-kexinit-301a329).
 *
 * Checked, whatever the server sent:
 *  - the server's rule on the guess (hpn_early_guess_ok()) and the
 *    client's (hpn_early_guess_taken()) agree: the model sees exactly one
 *    KEX_ECDH_INIT once the client has its KEXINIT;
 *  - no channel message goes before USERAUTH_SUCCESS unless both sent
 *    their marker, and then only behind a signed publickey request; the
 *    early channel's requests name HPN_EARLY_CHANNEL_ID; its data are the
 *    first bytes of standard input when that is a regular file or a pipe
 *    that is the caller's own (in packets of at most HPN_EARLY_PACKET, at
 *    most HPN_EARLY_DATA_MAX), none from another pipe; the file's offset
 *    is where it was while the early session is not taken (0), past what
 *    went early once it is;
 *  - when the server named ext-info-s, the first authentication request
 *    waits for its EXT_INFO or SERVICE_ACCEPT, and a signed request after
 *    an EXT_INFO that offered publickey-hostbound is publickey-hostbound;
 *  - an early channel confirmed with another id than
 *    HPN_EARLY_CHANNEL_ID, or a smaller packet size, ends the connection
 *    (when no unframed bytes went before the confirmation: raw bytes, or
 *    a plaintext packet once encrypted ones are due, may swallow it;
 *    crash-harness-raw-before-confirm);
 *  - the session channel's window is the confirmed one plus the adjusts
 *    less what went early (hpn_early_channel_confirm(),
 *    hpn_early_window_adjust(); crash-adjust-before-confirm: an adjust
 *    before the confirmation took the early data off a window the
 *    confirmation then replaced, fixed in src/hpn-early.c).
 *
 * Deterministic: the random stream is the harness's (fuzz-peer.h), there
 * is no clock; sshconnect2.c's, hpn-early.c's, hpn-early-client.c's and
 * hpn-none.c's state is made afresh for every input (compiled in; two
 * function-local statics of sshconnect2.c reset by their symbols, x86-64).
 * HPN_FUZZ_SEEDS=DIR writes the seeds (scripts of real servers' orders).
 */

#include "hpn-none.c"
#include "packet.c"
#include "fuzz-packet.h"
#include "kexgen.c"
#include "hpn-early.c"
#include "hpn-early-client.c"
#include "sshconnect2.c"

#include <sys/ioctl.h>
#include <sys/stat.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "myproposal.h"

#include "fuzz-common.h"
#include "fuzz-peer.h"
#include "fuzz-keys.h"

int LLVMFuzzerInitialize(int *, char ***);
int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

Options options;

#define HOST		"fuzz.example"
#define OPS		256
#define FILE_LEN	40000		/* standard input as a regular file */
#define PIPE_LEN	1000		/* ... as a pipe */

/* The input's first byte. */
#define F_GUESS		0x03	/* none, curve25519, mlkem768, a stale record */
#define F_NO_EARLY	0x04	/* EarlySend no */
#define F_RSA_FIRST	0x08	/* the user's RSA key first */
#define F_STDIN		0x30	/* /dev/null, a file, a pipe, our own pipe */
#define F_NO_SESSION	0x40	/* -N: no session */
#define F_PREF_NONE	0x80	/* PreferredAuthentications starts with none */

/* The server's script. */
enum {
	OP_YIELD, OP_KEXINIT, OP_REPLY, OP_NEWKEYS, OP_EXT_INFO,
	OP_SERVICE_ACCEPT, OP_FAILURE, OP_SUCCESS, OP_PK_OK, OP_CONFIRM,
	OP_OPEN_FAILURE, OP_ADJUST, OP_DATA, OP_EOF_CLOSE, OP_CHAN_REPLY,
	OP_EXIT_STATUS, OP_MSG, OP_RAW, OP_BANNER, OP_KEX, OP_PLAIN,
	OP_MAX
};

/* The server's KEXINIT proposals (or the input's own: sel >= 0x80). */
static const char *server_props[][PROPOSAL_MAX] = {
	{ "mlkem768x25519-sha256,curve25519-sha256,ext-info-s,"
	  "kex-strict-s-v00@openssh.com," HPN_EARLY_S,
	  "ssh-ed25519,rsa-sha2-512,rsa-sha2-256",
	  "chacha20-poly1305@openssh.com,aes128-gcm@openssh.com,aes128-ctr",
	  "chacha20-poly1305@openssh.com,aes128-gcm@openssh.com,aes128-ctr",
	  "hmac-sha2-256-etm@openssh.com,hmac-sha2-256",
	  "hmac-sha2-256-etm@openssh.com,hmac-sha2-256",
	  "none", "none", "", "" },
	/* stock OpenSSH: no marker */
	{ "mlkem768x25519-sha256,curve25519-sha256,ext-info-s,"
	  "kex-strict-s-v00@openssh.com",
	  "ssh-ed25519,rsa-sha2-512,rsa-sha2-256",
	  "chacha20-poly1305@openssh.com,aes128-ctr",
	  "chacha20-poly1305@openssh.com,aes128-ctr",
	  "hmac-sha2-256-etm@openssh.com", "hmac-sha2-256-etm@openssh.com",
	  "none,zlib@openssh.com", "none,zlib@openssh.com", "", "" },
	/* no ML-KEM: a guess of it is wrong */
	{ "curve25519-sha256,ext-info-s,kex-strict-s-v00@openssh.com,"
	  HPN_EARLY_S,
	  "ssh-ed25519,rsa-sha2-256",
	  "aes128-gcm@openssh.com", "aes128-gcm@openssh.com",
	  "hmac-sha2-256", "hmac-sha2-256", "none", "none", "", "" },
	/* neither ext-info-s nor strict */
	{ "curve25519-sha256,mlkem768x25519-sha256," HPN_EARLY_S,
	  "ssh-ed25519", "aes128-ctr", "aes128-ctr",
	  "hmac-sha2-256-etm@openssh.com", "hmac-sha2-256",
	  "none", "none", "", "" },
	/* RSA first: RFC 4253's rule refuses the guess, ours takes it */
	{ "mlkem768x25519-sha256,curve25519-sha256,ext-info-s," HPN_EARLY_S,
	  "rsa-sha2-512,rsa-sha2-256,ssh-ed25519",
	  "aes256-gcm@openssh.com,chacha20-poly1305@openssh.com",
	  "aes256-gcm@openssh.com,chacha20-poly1305@openssh.com",
	  "hmac-sha2-512", "hmac-sha2-512", "none", "none", "", "" },
	/* strict, no ext-info-s */
	{ "curve25519-sha256,kex-strict-s-v00@openssh.com," HPN_EARLY_S,
	  "ssh-ed25519", "chacha20-poly1305@openssh.com",
	  "chacha20-poly1305@openssh.com", "hmac-sha2-256", "hmac-sha2-256",
	  "none", "none", "", "" },
	/* the client's marker named back: no early set-up */
	{ "curve25519-sha256,ext-info-s," HPN_EARLY_C,
	  "ssh-ed25519,rsa-sha2-256", "aes128-ctr", "aes128-ctr",
	  "hmac-sha2-256", "hmac-sha2-256", "none", "none", "", "" },
	/* nothing in common */
	{ "diffie-hellman-group1-sha1," HPN_EARLY_S, "ssh-dss",
	  "3des-cbc", "3des-cbc", "hmac-md5", "hmac-md5", "none", "none",
	  "", "" },
};
#define NPROPS	(sizeof(server_props) / sizeof(server_props[0]))

/* KexAlgorithms of the client, by F_GUESS, and the method recorded. */
static const char *client_kex[] = {
	"mlkem768x25519-sha256,curve25519-sha256,sntrup761x25519-sha512",
	"curve25519-sha256,mlkem768x25519-sha256,sntrup761x25519-sha512",
	"mlkem768x25519-sha256,curve25519-sha256,sntrup761x25519-sha512",
	"mlkem768x25519-sha256,curve25519-sha256",
};
static const char *client_record[] = {
	NULL, "curve25519-sha256", "mlkem768x25519-sha256",
	"curve25519-sha256",
};

static struct sshkey *host_ed25519, *host_rsa, *user_ed25519, *user_rsa;
static char *dir, *path_id_ed25519, *path_id_rsa, *path_hosts, *path_file;
static char *record_line[4];
static u_char file_data[FILE_LEN];
static int null_fd = -1;

/* sshconnect2.c's, hpn-early.c's, hpn-early-client.c's state at start */
static Authmethod authmethods_fresh[sizeof(authmethods) /
    sizeof(authmethods[0])];
static __typeof__(early) early_fresh;
static __typeof__(ec) ec_fresh;
static __typeof__(none) none_fresh;

/* The server's model and what it saw. */
static struct model {
	struct ssh *srv;	/* its end of the packet layer */
	struct fz_in ops;	/* the script */
	int	done_ops;
	const u_char *banner;
	size_t	banner_len;
	int	banner_sent;
	int	vc_seen;	/* the client's version line taken */
	int	early_prop;	/* our KEXINIT has HPN_EARLY_S */
	int	strict_prop;	/* ... kex-strict-s-v00@openssh.com */
	struct sshbuf *kexinit;	/* our first KEXINIT, framed, held */
	int	kexinit_sent;	/* ... delivered (in turn kexinit_turn) */
	int	kexinit_turn;
	struct sshbuf *vs;	/* our version string (the banner's SSH- line) */
	struct sshbuf *is;	/* our KEXINIT's payload, as sent */
	struct sshbuf *ic;	/* the client's (latest) */
	int	chosen;		/* kex_input_kexinit() ran on the model */
	int	guess_sent;	/* the client's KEXINIT said a packet follows */
	int	guess_skipped;	/* ... our rule dropped it */
	int	guess_checked;
	struct sshbuf *qc;	/* the client's latest KEX_ECDH_INIT value */
	u_int	n_init;
	int	replied;	/* a reply computed: its hash and secret */
	u_char	h[SSH_DIGEST_MAX_LENGTH];
	u_int	hlen;
	struct sshbuf *k;
	dispatch_fn *input_newkeys;	/* kex_input_newkeys(), once armed */
	int	newkeys_pending;	/* the client's came first */
	int	stop;
	int	deaf;		/* cannot read the client any more */
	int	keyed;		/* our NEWKEYS sent: packets go encrypted */
	/*
	 * Bytes written past our packet layer (OP_RAW; OP_PLAIN once keyed,
	 * or a plaintext KEXINIT or NEWKEYS): the client may take what
	 * follows as part of a packet of its own reckoning, or as a packet
	 * under other keys, so it need not read our later packets as sent.
	 */
	int	unframed;
	u_char	sent[256];	/* message types we sent */
	int	first_ext_or_accept;	/* 7, 6: which came first */
	int	hostbound_first;	/* ... an EXT_INFO offering hostbound */
	/* authentication */
	u_int	n_userauth;
	int	last_signed;	/* the last request was a signed publickey */
	char	*pk_alg;
	struct sshbuf *pk_blob;
	int	success_sent;
	/* the client's session channel */
	int	chan_seen;	/* its CHANNEL_OPEN */
	u_int	chan_remote;	/* its id */
	uint64_t early_data;	/* bytes of data it sent (all early) */
	int	confirmed;
	int	confirm_bad;	/* with another id or packet size */
	int	confirm_turn;
	uint64_t window;	/* confirmed, plus adjusts */
} mdl;

/* The client and the input's choices. */
static struct ssh *cl;
static int flags, stdin_kind, stdin_fd = -1, pipe_keep = -1, client_chan = -1;

/* --- the model: what the client sends ------------------------------------ */

static int
model_record(int type, uint32_t seq, struct ssh *srv)
{
	char *user = NULL, *service = NULL, *method = NULL, *ctype = NULL;
	const u_char *d;
	u_char have_sig = 0;
	u_int id, win, maxp;
	size_t len;
	int r;

	if (type >= SSH2_MSG_GLOBAL_REQUEST &&
	    type <= SSH2_MSG_CHANNEL_FAILURE && !mdl.success_sent) {
		/* a channel message before authentication: early only */
		if ((!mdl.early_prop && !mdl.sent[SSH2_MSG_KEXINIT]) ||
		    (flags & F_NO_EARLY))
			fz_bad("type %d before USERAUTH_SUCCESS, no early "
			    "set-up agreed", type);
		if (!mdl.last_signed)
			fz_bad("type %d before USERAUTH_SUCCESS, not behind "
			    "a signed request", type);
	}
	switch (type) {
	case SSH2_MSG_USERAUTH_REQUEST:
		if ((r = sshpkt_get_cstring(srv, &user, NULL)) != 0 ||
		    (r = sshpkt_get_cstring(srv, &service, NULL)) != 0 ||
		    (r = sshpkt_get_cstring(srv, &method, NULL)) != 0)
			fz_bad("USERAUTH_REQUEST: %s", ssh_err(r));
		if (mdl.n_userauth++ == 0 && cl->kex->ext_info_s &&
		    !mdl.sent[SSH2_MSG_EXT_INFO] &&
		    !mdl.sent[SSH2_MSG_SERVICE_ACCEPT])
			fz_bad("the first request (%s) went before the "
			    "server's EXT_INFO or SERVICE_ACCEPT", method);
		mdl.last_signed = 0;
		if (strncmp(method, "publickey", 9) == 0) {
			free(mdl.pk_alg);
			mdl.pk_alg = NULL;
			sshbuf_reset(mdl.pk_blob);
			/*
			 * Not always whole: upstream's client answers a
			 * second SERVICE_ACCEPT with "none"'s request under
			 * the method it is on
			 */
			if ((r = sshpkt_get_u8(srv, &have_sig)) != 0 ||
			    (r = sshpkt_get_cstring(srv, &mdl.pk_alg,
			    NULL)) != 0 ||
			    (r = sshpkt_get_string_direct(srv, &d,
			    &len)) != 0 ||
			    (r = sshbuf_put(mdl.pk_blob, d, len)) != 0) {
				debug_fr(r, "model: %s request", method);
				break;
			}
			mdl.last_signed = have_sig != 0;
			if (have_sig && mdl.hostbound_first &&
			    strcmp(method, "publickey") == 0)
				fz_bad("signed for publickey, not hostbound, "
				    "after an EXT_INFO offering it");
		}
		break;
	case SSH2_MSG_CHANNEL_OPEN:
		if ((r = sshpkt_get_cstring(srv, &ctype, NULL)) != 0 ||
		    (r = sshpkt_get_u32(srv, &id)) != 0 ||
		    (r = sshpkt_get_u32(srv, &win)) != 0 ||
		    (r = sshpkt_get_u32(srv, &maxp)) != 0)
			fz_bad("CHANNEL_OPEN: %s", ssh_err(r));
		mdl.chan_seen = 1;
		mdl.chan_remote = id;
		mdl.early_data = 0;
		mdl.confirmed = mdl.confirm_bad = 0;
		break;
	case SSH2_MSG_CHANNEL_REQUEST:
		if ((r = sshpkt_get_u32(srv, &id)) != 0)
			fz_bad("CHANNEL_REQUEST: %s", ssh_err(r));
		if (!mdl.success_sent && id != HPN_EARLY_CHANNEL_ID)
			fz_bad("an early request for channel %u", id);
		break;
	case SSH2_MSG_CHANNEL_DATA:
		if ((r = sshpkt_get_u32(srv, &id)) != 0 ||
		    (r = sshpkt_get_string_direct(srv, &d, &len)) != 0)
			fz_bad("CHANNEL_DATA: %s", ssh_err(r));
		/* no client loop here: data only ever goes early */
		if (len > HPN_EARLY_PACKET ||
		    mdl.early_data + len > HPN_EARLY_DATA_MAX)
			fz_bad("early data: %zu bytes more after %llu", len,
			    (unsigned long long)mdl.early_data);
		switch (stdin_kind) {
		case 1:
			if (mdl.early_data + len > FILE_LEN ||
			    memcmp(d, file_data + mdl.early_data, len) != 0)
				fz_bad("early data not the file's");
			break;
		case 3:
			if (mdl.early_data + len > PIPE_LEN ||
			    memcmp(d, file_data + mdl.early_data, len) != 0)
				fz_bad("early data not the pipe's");
			break;
		default:
			fz_bad("early data from %s", stdin_kind == 0 ?
			    "/dev/null" : "a pipe not the caller's");
		}
		mdl.early_data += len;
		break;
	}
	free(user);
	free(service);
	free(method);
	free(ctype);
	return 0;
}

static int
model_kexinit(int type, uint32_t seq, struct ssh *srv)
{
	const u_char *p;
	size_t len;
	int r;

	p = sshpkt_ptr(srv, &len);
	sshbuf_reset(mdl.ic);
	if ((r = sshbuf_put(mdl.ic, p, len)) != 0)
		fz_bad("model: %s", ssh_err(r));
	if (!mdl.chosen)
		mdl.guess_sent = len >= 5 && p[len - 5] != 0;
	if ((r = kex_input_kexinit(type, seq, srv)) != 0)
		return r;
	if (!mdl.chosen)
		mdl.guess_skipped = srv->dispatch_skip_packets != 0;
	mdl.chosen = 1;
	/* strict only when our KEXINIT said so too (OpenSSH always does) */
	if (!mdl.strict_prop)
		srv->kex->kex_strict = 0;
	/* a re-exchange: our new KEXINIT goes at once */
	sshbuf_reset(mdl.is);
	if ((r = sshbuf_putb(mdl.is, srv->kex->my)) != 0)
		fz_bad("model: %s", ssh_err(r));
	return 0;
}

static int
model_ecdh_init(int type, uint32_t seq, struct ssh *srv)
{
	const u_char *p;
	size_t len;
	int r;

	/* a copy: a child of the packet would make it read-only */
	if ((r = sshpkt_get_string_direct(srv, &p, &len)) != 0)
		return r;
	if (mdl.qc == NULL && (mdl.qc = sshbuf_new()) == NULL)
		fz_bad("sshbuf_new");
	sshbuf_reset(mdl.qc);
	if ((r = sshbuf_put(mdl.qc, p, len)) != 0)
		fz_bad("model: %s", ssh_err(r));
	mdl.n_init++;
	return 0;
}

/* The method agreed: the client's value is recorded, not answered. */
static int
model_method(struct ssh *srv)
{
	ssh_dispatch_set(srv, SSH2_MSG_KEX_ECDH_INIT, &model_ecdh_init);
	return 0;
}

static int
model_newkeys(int type, uint32_t seq, struct ssh *srv)
{
	dispatch_fn *fn = mdl.input_newkeys;

	mdl.stop = 1;
	if (fn == NULL) {
		/* ours is not sent yet: its keys come with it */
		mdl.newkeys_pending = 1;
		return 0;
	}
	mdl.input_newkeys = NULL;
	return fn(type, seq, srv);
}

/* The model's dispatch once its key exchange is done. */
static void
model_kex_done(void)
{
	struct ssh *srv = mdl.srv;

	ssh_dispatch_range(srv, SSH2_MSG_TRANSPORT_MIN,
	    SSH2_MSG_TRANSPORT_MAX, &kex_protocol_error);
	ssh_dispatch_set(srv, SSH2_MSG_SERVICE_REQUEST, &model_record);
	ssh_dispatch_set(srv, SSH2_MSG_EXT_INFO, &model_record);
	ssh_dispatch_set(srv, SSH2_MSG_KEXINIT, &model_kexinit);
	ssh_dispatch_set(srv, SSH2_MSG_KEX_ECDH_INIT, &model_ecdh_init);
	ssh_dispatch_set(srv, SSH2_MSG_NEWKEYS, &model_newkeys);
}

/* What the client wrote, through the model's packet layer. */
static void
model_read(void)
{
	const u_char *p, *nl;
	int r, was_done;

	if (!mdl.vc_seen) {
		p = sshbuf_ptr(fzp.in);
		if ((nl = memchr(p, '\n', sshbuf_len(fzp.in))) == NULL)
			return;
		if ((r = sshbuf_consume(fzp.in, nl - p + 1)) != 0)
			fz_bad("model: %s", ssh_err(r));
		mdl.vc_seen = 1;
	}
	if (mdl.deaf) {
		sshbuf_reset(fzp.in);
		return;
	}
	if ((r = ssh_packet_process_incoming(mdl.srv,
	    (const char *)sshbuf_ptr(fzp.in), sshbuf_len(fzp.in))) != 0)
		fz_bad("model: %s", ssh_err(r));
	sshbuf_reset(fzp.in);
	while (!mdl.deaf && !mdl.newkeys_pending) {
		mdl.stop = 0;
		was_done = mdl.srv->kex->done;
		if ((r = ssh_dispatch_run(mdl.srv, DISPATCH_NONBLOCK,
		    &mdl.stop)) != 0) {
			debug_fr(r, "model: the client's stream");
			mdl.deaf = 1;
		}
		if (!was_done && mdl.srv->kex->done)
			model_kex_done();
		if (!mdl.stop)
			break;
	}
}

/* What the model's packet layer sent, to the client. */
static void
model_out(void)
{
	struct sshbuf *o = ssh_packet_get_output(mdl.srv);
	int r;

	if ((r = sshbuf_putb(fzp.out, o)) != 0)
		fz_bad("model: %s", ssh_err(r));
	sshbuf_reset(o);
}

/* --- the model: what the server sends ------------------------------------- */

/*
 * KEX_ECDH_REPLY to the client's latest value: over our transcript
 * (view 0) or over the one the client has now (view 1), signed with the
 * host key keysel picks: 0 the one the client expects (RSA before any
 * KEXINIT), 1 Ed25519, 2 RSA with SHA-256, 3 RSA with SHA-512.
 */
static void
model_reply(u_int how)
{
	struct kex *ck = cl->kex, *sk = mdl.srv->kex;
	struct sshbuf *qs = NULL, *k = NULL, *hkb = NULL;
	const struct sshbuf *ic, *is;
	struct sshkey *key;
	const char *alg;
	u_char h[SSH_DIGEST_MAX_LENGTH], *sig = NULL;
	size_t hlen, slen;
	int view = how & 1, type, hash_alg, r;

	if (mdl.qc == NULL || (!view && !mdl.chosen))
		return;
	type = view ? ck->kex_type : sk->kex_type;
	hash_alg = view ? ck->hash_alg : sk->hash_alg;
	ic = view ? ck->my : mdl.ic;
	is = view ? ck->peer : mdl.is;
	switch ((how >> 1) & 3) {
	case 0:
		alg = view ? ck->hostkey_alg : sk->hostkey_alg;
		if (alg != NULL && strcmp(alg, "ssh-ed25519") == 0) {
			key = host_ed25519;
			break;
		}
		key = host_rsa;
		if (alg == NULL || strncmp(alg, "rsa-sha2-", 9) != 0)
			alg = "rsa-sha2-256";
		break;
	case 1:
		key = host_ed25519;
		alg = "ssh-ed25519";
		break;
	case 2:
		key = host_rsa;
		alg = "rsa-sha2-256";
		break;
	default:
		key = host_rsa;
		alg = "rsa-sha2-512";
		break;
	}
	fzp_rng_model(1);
	switch (type) {
	case KEX_C25519_SHA256:
		r = kex_c25519_enc(sk, mdl.qc, &qs, &k);
		break;
	case KEX_KEM_MLKEM768X25519_SHA256:
		r = kex_kem_mlkem768x25519_enc(sk, mdl.qc, &qs, &k);
		break;
	default:
		r = SSH_ERR_INVALID_ARGUMENT;	/* not a method it answers */
		break;
	}
	fzp_rng_model(0);
	if (r != 0)
		goto out;
	if ((hkb = sshbuf_new()) == NULL)
		fz_bad("sshbuf_new");
	hlen = sizeof(h);
	if ((r = sshkey_putb(key, hkb)) != 0 ||
	    (r = kex_gen_hash(hash_alg, ck->client_version, mdl.vs,
	    ic, is, hkb, mdl.qc, qs, k, h, &hlen)) != 0 ||
	    (r = sshkey_sign(key, &sig, &slen, h, hlen, alg, NULL, NULL,
	    0)) != 0)
		goto out;
	if ((r = sshpkt_start(mdl.srv, SSH2_MSG_KEX_ECDH_REPLY)) != 0 ||
	    (r = sshpkt_put_stringb(mdl.srv, hkb)) != 0 ||
	    (r = sshpkt_put_stringb(mdl.srv, qs)) != 0 ||
	    (r = sshpkt_put_string(mdl.srv, sig, slen)) != 0 ||
	    (r = sshpkt_send(mdl.srv)) != 0)
		fz_bad("model reply: %s", ssh_err(r));
	memcpy(mdl.h, h, hlen);
	mdl.hlen = hlen;
	sshbuf_free(mdl.k);
	mdl.k = k;
	k = NULL;
	mdl.replied = 1;
 out:
	sshbuf_free(qs);
	sshbuf_free(k);
	sshbuf_free(hkb);
	free(sig);
}

/* NEWKEYS with the keys of the last reply; how & 1: OpenSSH's EXT_INFO. */
static void
model_newkeys_send(u_int how)
{
	struct ssh *srv = mdl.srv;
	struct kex *sk = srv->kex;
	int r;

	if (!mdl.replied || mdl.input_newkeys != NULL ||
	    sk->newkeys[MODE_OUT] == NULL || sk->newkeys[MODE_OUT]->enc.key)
		return;
	if ((how & 1) == 0)
		sk->ext_info_c = 0;
	else if (sk->ext_info_c) {
		mdl.sent[SSH2_MSG_EXT_INFO] = 1;
		if (mdl.first_ext_or_accept == 0) {
			mdl.first_ext_or_accept = SSH2_MSG_EXT_INFO;
			mdl.hostbound_first = 1;
		}
	}
	if ((r = kex_derive_keys(srv, mdl.h, mdl.hlen, mdl.k)) != 0 ||
	    (r = kex_send_newkeys(srv)) != 0)
		fz_bad("model newkeys: %s", ssh_err(r));
	mdl.keyed = 1;
	mdl.replied = 0;
	mdl.input_newkeys = srv->dispatch[SSH2_MSG_NEWKEYS];
	ssh_dispatch_set(srv, SSH2_MSG_NEWKEYS, &model_newkeys);
	ssh_dispatch_set(srv, SSH2_MSG_KEX_ECDH_INIT, &model_ecdh_init);
	ssh_dispatch_set(srv, SSH2_MSG_KEXINIT, &model_kexinit);
	if (mdl.newkeys_pending) {
		mdl.newkeys_pending = 0;
		if ((r = model_newkeys(SSH2_MSG_NEWKEYS, 0, srv)) != 0) {
			debug_fr(r, "model: the client's NEWKEYS");
			mdl.deaf = 1;
		}
		if (srv->kex->done)
			model_kex_done();
	}
}

static void
put_string_in(struct fz_in *in, size_t max)
{
	const uint8_t *p;
	size_t len;
	int r;

	if (fz_bytes(in, max, &p, &len) != 0)
		len = 0;
	if ((r = sshpkt_put_string(mdl.srv, len ? p : NULL, len)) != 0)
		fz_bad("model: %s", ssh_err(r));
}

static void
chan_start(int type)
{
	int r;

	if ((r = sshpkt_start(mdl.srv, type)) != 0 ||
	    (r = sshpkt_put_u32(mdl.srv, mdl.chan_remote)) != 0)
		fz_bad("model: %s", ssh_err(r));
}

static void
model_send(void)
{
	int r;

	if ((r = sshpkt_send(mdl.srv)) != 0)
		fz_bad("model: %s", ssh_err(r));
}

/* A plaintext packet of the model's own (before the client's keys). */
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

static const char *fail_lists[] = {
	"publickey", "publickey,password", "password", "", "none",
	"publickey,keyboard-interactive",
};

static const char *ext_sigalgs[] = {
	"ssh-ed25519,rsa-sha2-512,rsa-sha2-256", "ssh-ed25519",
	"rsa-sha2-512", "ecdsa-sha2-nistp256",
};

/*
 * The bookkeeping of a message of any type the model sent (OP_MSG,
 * OP_PLAIN): the client may take any USERAUTH_SUCCESS as upstream does,
 * and an EXT_INFO or SERVICE_ACCEPT as the first of the two.
 */
static void
model_sent_any(uint8_t type)
{
	mdl.sent[type] = 1;
	if (type == SSH2_MSG_USERAUTH_SUCCESS)
		mdl.success_sent = 1;
	if ((type == SSH2_MSG_EXT_INFO || type == SSH2_MSG_SERVICE_ACCEPT) &&
	    mdl.first_ext_or_accept == 0)
		mdl.first_ext_or_accept = type;
}

/* One operation of the script; 0: the turn is over. */
static int
model_op(struct fz_in *in, uint8_t op)
{
	struct ssh *srv = mdl.srv;
	const uint8_t *p;
	size_t len;
	uint32_t v32, w;
	uint8_t a = 0, b = 0;
	u_int n;
	int r;

	op %= OP_MAX;
	if (op != OP_YIELD && op != OP_RAW && op != OP_PLAIN &&
	    op != OP_KEXINIT && fz_u8(in, &a) != 0)
		a = 0;
	switch (op) {
	case OP_YIELD:
		return 0;
	case OP_KEXINIT:
		if (mdl.kexinit_sent)
			break;
		mdl.kexinit_sent = 1;
		mdl.kexinit_turn = fzp.turns;
		if (mdl.keyed)
			mdl.unframed = 1;
		if ((r = sshbuf_putb(fzp.out, mdl.kexinit)) != 0)
			fz_bad("model: %s", ssh_err(r));
		break;
	case OP_REPLY:
		model_reply(a);
		break;
	case OP_NEWKEYS:
		model_newkeys_send(a);
		break;
	case OP_KEX:		/* as a server does: reply, NEWKEYS, EXT_INFO */
		model_reply(0);
		model_newkeys_send(1);
		break;
	case OP_EXT_INFO:
		n = 1 + !!(a & 0x04) + !!(a & 0x08) + !!(a & 0x10);
		if ((r = sshpkt_start(srv, SSH2_MSG_EXT_INFO)) != 0 ||
		    (r = sshpkt_put_u32(srv, n)) != 0 ||
		    (r = sshpkt_put_cstring(srv, "server-sig-algs")) != 0)
			fz_bad("model: %s", ssh_err(r));
		if ((a & 0x03) == 3)
			put_string_in(in, 256);
		else if ((r = sshpkt_put_cstring(srv,
		    ext_sigalgs[a & 0x03])) != 0)
			fz_bad("model: %s", ssh_err(r));
		if ((a & 0x04) && ((r = sshpkt_put_cstring(srv,
		    "publickey-hostbound@openssh.com")) != 0 ||
		    (r = sshpkt_put_cstring(srv, "0")) != 0))
			fz_bad("model: %s", ssh_err(r));
		if ((a & 0x08) && ((r = sshpkt_put_cstring(srv,
		    "ping@openssh.com")) != 0 ||
		    (r = sshpkt_put_cstring(srv, "0")) != 0))
			fz_bad("model: %s", ssh_err(r));
		if ((a & 0x10) && ((r = sshpkt_put_cstring(srv,
		    HPN_NONE_EXT)) != 0 ||
		    (r = sshpkt_put_cstring(srv, "cipher")) != 0))
			fz_bad("model: %s", ssh_err(r));
		model_send();
		if (mdl.first_ext_or_accept == 0) {
			mdl.first_ext_or_accept = SSH2_MSG_EXT_INFO;
			mdl.hostbound_first = (a & 0x04) != 0 &&
			    (a & 0x03) < 2;
		}
		mdl.sent[SSH2_MSG_EXT_INFO] = 1;
		break;
	case OP_SERVICE_ACCEPT:
		if ((r = sshpkt_start(srv, SSH2_MSG_SERVICE_ACCEPT)) != 0 ||
		    ((a & 1) == 0 &&
		    (r = sshpkt_put_cstring(srv, "ssh-userauth")) != 0))
			fz_bad("model: %s", ssh_err(r));
		model_send();
		if (mdl.first_ext_or_accept == 0)
			mdl.first_ext_or_accept = SSH2_MSG_SERVICE_ACCEPT;
		mdl.sent[SSH2_MSG_SERVICE_ACCEPT] = 1;
		break;
	case OP_FAILURE:
		if ((r = sshpkt_start(srv, SSH2_MSG_USERAUTH_FAILURE)) != 0 ||
		    (r = sshpkt_put_cstring(srv, fail_lists[(a >> 1) %
		    (sizeof(fail_lists) / sizeof(fail_lists[0]))])) != 0 ||
		    (r = sshpkt_put_u8(srv, a & 1)) != 0)
			fz_bad("model: %s", ssh_err(r));
		model_send();
		break;
	case OP_SUCCESS:
		if ((r = sshpkt_start(srv, SSH2_MSG_USERAUTH_SUCCESS)) != 0)
			fz_bad("model: %s", ssh_err(r));
		model_send();
		mdl.success_sent = 1;
		mdl.sent[SSH2_MSG_USERAUTH_SUCCESS] = 1;
		break;
	case OP_PK_OK:
		if ((r = sshpkt_start(srv, SSH2_MSG_USERAUTH_PK_OK)) != 0 ||
		    (r = sshpkt_put_cstring(srv, mdl.pk_alg == NULL ? "" :
		    mdl.pk_alg)) != 0 ||
		    (r = sshpkt_put_stringb(srv, mdl.pk_blob)) != 0)
			fz_bad("model: %s", ssh_err(r));
		model_send();
		break;
	case OP_CONFIRM:
		if (fz_u32(in, &w) != 0 || fz_u32(in, &v32) != 0)
			return 0;
		chan_start(SSH2_MSG_CHANNEL_OPEN_CONFIRMATION);
		if ((r = sshpkt_put_u32(srv, a == 0xff ? 0x7fffffff :
		    a & 0x7f)) != 0 ||
		    (r = sshpkt_put_u32(srv, w)) != 0 ||
		    (r = sshpkt_put_u32(srv, v32)) != 0)
			fz_bad("model: %s", ssh_err(r));
		model_send();
		/* the client reads it as sent, if nothing unframed came first */
		if (mdl.chan_seen && !mdl.confirmed && !mdl.unframed &&
		    client_chan != -1 && channel_lookup(cl, client_chan) != NULL) {
			/* the client's own view: is it still its early one? */
			mdl.confirmed = 1;
			mdl.confirm_turn = fzp.turns;
			mdl.window = w;
			mdl.confirm_bad = early.chan == client_chan &&
			    ((a == 0xff ? 0x7fffffff : (a & 0x7f)) !=
			    HPN_EARLY_CHANNEL_ID || v32 < HPN_EARLY_PACKET);
		}
		break;
	case OP_OPEN_FAILURE:
		chan_start(SSH2_MSG_CHANNEL_OPEN_FAILURE);
		if ((r = sshpkt_put_u32(srv, a)) != 0 ||
		    (r = sshpkt_put_cstring(srv, "no")) != 0 ||
		    (r = sshpkt_put_cstring(srv, "")) != 0)
			fz_bad("model: %s", ssh_err(r));
		model_send();
		mdl.chan_seen = 0;
		break;
	case OP_ADJUST:
		if (fz_u32(in, &w) != 0)
			return 0;
		if (a & 1)
			w &= 0xffff;
		chan_start(SSH2_MSG_CHANNEL_WINDOW_ADJUST);
		if ((r = sshpkt_put_u32(srv, w)) != 0)
			fz_bad("model: %s", ssh_err(r));
		model_send();
		mdl.window += w;
		break;
	case OP_DATA:
		chan_start((a & 1) ? SSH2_MSG_CHANNEL_EXTENDED_DATA :
		    SSH2_MSG_CHANNEL_DATA);
		if ((a & 1) && (r = sshpkt_put_u32(srv, 1)) != 0)
			fz_bad("model: %s", ssh_err(r));
		put_string_in(in, 4096);
		model_send();
		break;
	case OP_EOF_CLOSE:
		chan_start((a & 1) ? SSH2_MSG_CHANNEL_CLOSE :
		    SSH2_MSG_CHANNEL_EOF);
		model_send();
		if (a & 1)
			mdl.chan_seen = 0;
		break;
	case OP_CHAN_REPLY:
		chan_start((a & 1) ? SSH2_MSG_CHANNEL_FAILURE :
		    SSH2_MSG_CHANNEL_SUCCESS);
		model_send();
		break;
	case OP_EXIT_STATUS:
		chan_start(SSH2_MSG_CHANNEL_REQUEST);
		if ((r = sshpkt_put_cstring(srv, "exit-status")) != 0 ||
		    (r = sshpkt_put_u8(srv, 0)) != 0 ||
		    (r = sshpkt_put_u32(srv, a)) != 0)
			fz_bad("model: %s", ssh_err(r));
		model_send();
		break;
	case OP_MSG:
		if (fz_bytes(in, 8192, &p, &len) != 0)
			return 0;
		/* its packet layer keys on these (OP_PLAIN sends them) */
		if (a == SSH2_MSG_KEXINIT || a == SSH2_MSG_NEWKEYS)
			a = SSH2_MSG_IGNORE;
		if ((r = sshpkt_start(srv, a)) != 0 ||
		    (r = sshpkt_put(srv, p, len)) != 0)
			fz_bad("model: %s", ssh_err(r));
		model_send();
		model_sent_any(a);
		break;
	case OP_PLAIN:
		if (fz_u8(in, &b) != 0 || fz_bytes(in, 8192, &p, &len) != 0)
			return 0;
		model_plain(b, p, len);
		model_sent_any(b);
		if (mdl.keyed || b == SSH2_MSG_KEXINIT ||
		    b == SSH2_MSG_NEWKEYS)
			mdl.unframed = 1;
		break;
	case OP_RAW:
		if (fz_bytes(in, 8192, &p, &len) != 0)
			return 0;
		if ((r = sshbuf_put(fzp.out, p, len)) != 0)
			fz_bad("model: %s", ssh_err(r));
		mdl.sent[SSH2_MSG_KEXINIT] = 1;	/* anything may be in it */
		mdl.unframed = 1;
		break;
	case OP_BANNER:
		if ((r = sshpkt_start(srv, SSH2_MSG_USERAUTH_BANNER)) != 0 ||
		    (r = sshpkt_put_cstring(srv, "hello")) != 0 ||
		    (r = sshpkt_put_cstring(srv, "")) != 0)
			fz_bad("model: %s", ssh_err(r));
		model_send();
		break;
	}
	return 1;
}

/* --- what the client must have done, at each of the model's turns --------- */

static void
check_client(void)
{
	Channel *c;
	off_t off;
	int64_t want;
	int avail;

	if (ec.taken && !mdl.sent[SSH2_MSG_USERAUTH_SUCCESS])
		fz_bad("the early session taken without USERAUTH_SUCCESS");
	/* the two rules on the guess agree */
	if (mdl.guess_sent && mdl.kexinit_sent && !mdl.guess_checked &&
	    fzp.turns > mdl.kexinit_turn && mdl.chosen && !mdl.deaf &&
	    !mdl.sent[SSH2_MSG_KEXINIT] && cl->kex->name != NULL &&
	    hpn_early_guessable(cl->kex->name)) {
		mdl.guess_checked = 1;
		if (mdl.n_init != 1)
			fz_bad("the server %s the guessed packet, the client "
			    "sent %u KEX_ECDH_INIT", mdl.guess_skipped ?
			    "dropped" : "took", mdl.n_init);
	}
	/* an early channel confirmed otherwise than assumed ends it */
	if (mdl.confirm_bad && fzp.turns > mdl.confirm_turn)
		fz_bad("an early channel confirmed with another id or a small "
		    "packet size, and the client went on");
	/* standard input: as it was while the early session is not taken */
	if (stdin_kind == 1) {
		if ((off = lseek(stdin_fd, 0, SEEK_CUR)) == -1)
			fz_bad("lseek: %s", strerror(errno));
		want = ec.taken ? (int64_t)mdl.early_data : 0;
		if (off != want)
			fz_bad("standard input at %lld, not %lld",
			    (long long)off, (long long)want);
	} else if (stdin_kind == 2) {
		if (ioctl(pipe_keep, FIONREAD, &avail) == -1 ||
		    avail != PIPE_LEN)
			fz_bad("a pipe not the caller's was read");
	}
	/* the window: what was confirmed and adjusted, less the early data */
	if (client_chan != -1 && mdl.confirmed && !mdl.confirm_bad &&
	    !mdl.unframed && fzp.turns > mdl.confirm_turn &&
	    (c = channel_lookup(cl, client_chan)) != NULL &&
	    c->type == SSH_CHANNEL_OPEN && mdl.window <= UINT32_MAX) {
		want = (int64_t)mdl.window - (int64_t)mdl.early_data;
		if ((int64_t)c->remote_window - (early.chan == c->self ?
		    (int64_t)early.debt : 0) != want)
			fz_bad("channel %d: window %u, %u to take off, not "
			    "%lld", c->self, c->remote_window,
			    early.chan == c->self ? early.debt : 0,
			    (long long)want);
	}
}

/* The model's turn (fuzz-peer.h): 0 once the script is over. */
static int
model_turn(void)
{
	int r;

	if (!mdl.banner_sent) {
		mdl.banner_sent = 1;
		if ((r = sshbuf_put(fzp.out, mdl.banner,
		    mdl.banner_len)) != 0)
			fz_bad("model: %s", ssh_err(r));
	}
	model_read();
	model_out();
	check_client();
	for (;;) {
		uint8_t op;

		if (mdl.done_ops >= OPS || fz_u8(&mdl.ops, &op) != 0)
			return 0;
		mdl.done_ops++;
		r = model_op(&mdl.ops, op);
		model_out();
		if (!r)
			return 1;
	}
}

static void
model_init(u_int sel, struct fz_in *in)
{
	char *prop[PROPOSAL_MAX];
	const uint8_t *p;
	size_t len;
	u_int i;
	int r;

	memset(&mdl, 0, sizeof(mdl));
	if ((mdl.srv = ssh_packet_set_connection(NULL, -1, -1)) == NULL ||
	    (mdl.kexinit = sshbuf_new()) == NULL ||
	    (mdl.is = sshbuf_new()) == NULL ||
	    (mdl.vs = sshbuf_new()) == NULL ||
	    (mdl.ic = sshbuf_new()) == NULL ||
	    (mdl.pk_blob = sshbuf_new()) == NULL)
		fz_bad("model");
	for (i = 0; i < PROPOSAL_MAX; i++) {
		if (sel < 0x80) {
			prop[i] = xstrdup(server_props[sel % NPROPS][i]);
			continue;
		}
		if (fz_bytes(in, 512, &p, &len) != 0)
			len = 0;
		prop[i] = xmalloc(len + 1);
		if (len > 0)
			memcpy(prop[i], p, len);
		prop[i][len] = '\0';	/* a nul in it ends it */
	}
	mdl.early_prop = kex_has_any_alg(prop[PROPOSAL_KEX_ALGS], HPN_EARLY_S);
	mdl.strict_prop = kex_has_any_alg(prop[PROPOSAL_KEX_ALGS],
	    "kex-strict-s-v00@openssh.com");
	mdl.srv->kex->server = 1;
	ssh_dispatch_init(mdl.srv, &model_record);
	if ((r = kex_ready(mdl.srv, prop)) != 0)
		fz_bad("model: %s", ssh_err(r));
	kex_proposal_free_entries(prop);
	for (i = 0; i < KEX_MAX; i++)
		mdl.srv->kex->kex[i] = model_method;
	mdl.srv->kex->server_sig_algs =
	    xstrdup("ssh-ed25519,rsa-sha2-512,rsa-sha2-256");
	ssh_dispatch_set(mdl.srv, SSH2_MSG_KEXINIT, &model_kexinit);
	ssh_dispatch_set(mdl.srv, SSH2_MSG_NEWKEYS, &model_newkeys);
	if ((r = kex_send_kexinit(mdl.srv)) != 0 ||
	    (r = sshbuf_putb(mdl.kexinit,
	    ssh_packet_get_output(mdl.srv))) != 0 ||
	    (r = sshbuf_putb(mdl.is, mdl.srv->kex->my)) != 0)
		fz_bad("model: %s", ssh_err(r));
	sshbuf_reset(ssh_packet_get_output(mdl.srv));
}

/* Our version string: the banner's first line that starts "SSH-". */
static void
model_version(const u_char *p, size_t len)
{
	const u_char *nl;
	size_t n;
	int r;

	sshbuf_reset(mdl.vs);
	for (; len > 0; len -= n + 1, p += n + 1) {
		if ((nl = memchr(p, '\n', len)) == NULL)
			return;
		n = nl - p;
		if (n > 4 && memcmp(p, "SSH-", 4) == 0) {
			if ((r = sshbuf_put(mdl.vs, p,
			    n - (p[n - 1] == '\r'))) != 0)
				fz_bad("model: %s", ssh_err(r));
			return;
		}
	}
}

static void
model_free(int failed)
{
	fz_connection_free(mdl.srv);
	if (!failed) {
		sshbuf_free(mdl.kexinit);
		sshbuf_free(mdl.is);
		sshbuf_free(mdl.vs);
		sshbuf_free(mdl.ic);
		sshbuf_free(mdl.qc);
		sshbuf_free(mdl.k);
		sshbuf_free(mdl.pk_blob);
		free(mdl.pk_alg);
	}
	memset(&mdl, 0, sizeof(mdl));
}

/* --- the client ----------------------------------------------------------- */

/* sshconnect.c's: the fixed host keys are the known ones. */
int
verify_host_key(char *host, struct sockaddr *hostaddr, struct sshkey *key,
    const struct ssh_conn_info *cinfo)
{
	return sshkey_equal_public(key, host_ed25519) ||
	    sshkey_equal_public(key, host_rsa) ? 0 : -1;
}

void
get_hostfile_hostname_ipaddr(char *hostname, struct sockaddr *hostaddr,
    u_short port, char **hostfile_hostname, char **hostfile_ipaddr)
{
	if (hostfile_hostname != NULL)
		*hostfile_hostname = put_host_port(hostname, port);
	if (hostfile_ipaddr != NULL)
		*hostfile_ipaddr = xstrdup("127.0.0.1");
}

void
load_hostkeys_command(struct hostkeys *hostkeys, const char *command_template,
    const char *invocation, const struct ssh_conn_info *cinfo,
    const struct sshkey *host_key, const char *hostfile_hostname)
{
}

void
maybe_add_key_to_agent(const char *authfile, struct sshkey *private,
    const char *comment, const char *passphrase)
{
}

/* ssh.c's session setup: an exec request. */
static void
session_setup(struct ssh *ssh, int id, int success, void *arg)
{
	int r;

	if (!success)
		return;
	channel_request_start(ssh, id, "exec", 1);
	if ((r = sshpkt_put_cstring(ssh, "true")) != 0 ||
	    (r = sshpkt_send(ssh)) != 0)
		fatal_fr(r, "exec");
}

/* ssh.c ssh_session2_open(), for hpn_early_set_opener() and after. */
static int
session_open(struct ssh *ssh)
{
	Channel *c;
	int in, out, err;

	if ((in = dup(stdin_fd)) == -1 || (out = dup(null_fd)) == -1 ||
	    (err = dup(null_fd)) == -1)
		fz_bad("dup: %s", strerror(errno));
	c = channel_new(ssh, "session", SSH_CHANNEL_OPENING, in, out, err,
	    CHAN_SES_WINDOW_DEFAULT, CHAN_SES_PACKET_DEFAULT,
	    CHAN_EXTENDED_WRITE, "client-session", CHANNEL_NONBLOCK_STDIO);
	client_chan = c->self;
	channel_send_open(ssh, c->self);
	channel_register_open_confirm(ssh, c->self, session_setup, NULL);
	hpn_early_session_opened(ssh, c);
	return c->self;
}

static int
session_channel_req(int type, uint32_t seq, struct ssh *ssh)
{
	return 0;	/* clientloop.c's: exit-status and the like */
}

/* Standard input for the session, by F_STDIN. */
static void
stdin_open(void)
{
	int p[2];

	stdin_kind = (flags & F_STDIN) >> 4;
	switch (stdin_kind) {
	case 0:
		stdin_fd = dup(null_fd);
		break;
	case 1:
		stdin_fd = open(path_file, O_RDONLY);
		break;
	default:
		if (pipe(p) == -1)
			fz_bad("pipe: %s", strerror(errno));
		if (write(p[1], file_data, PIPE_LEN) != PIPE_LEN)
			fz_bad("pipe write: %s", strerror(errno));
		close(p[1]);
		stdin_fd = p[0];
		if (stdin_kind == 2 && (pipe_keep = dup(p[0])) == -1)
			fz_bad("dup: %s", strerror(errno));
		break;
	}
	if (stdin_fd == -1)
		fz_bad("standard input: %s", strerror(errno));
}

static void
hosts_write(const char *line)
{
	int fd;

	if ((fd = open(path_hosts, O_WRONLY|O_CREAT|O_TRUNC, 0600)) == -1 ||
	    (line != NULL &&
	    write(fd, line, strlen(line)) != (ssize_t)strlen(line)) ||
	    close(fd) == -1)
		fz_bad("%s: %s", path_hosts, strerror(errno));
}

static void
session(struct fz_in *in)
{
	struct sockaddr_in sin;
	Sensitive sensitive = { NULL, 0 };
	const uint8_t *p;
	size_t len;
	uint8_t f, sel;
	int fd, r;

	if (fz_u8(in, &f) != 0 || fz_u8(in, &sel) != 0 ||
	    fz_bytes(in, 512, &p, &len) != 0)
		return;
	flags = f;
	model_init(sel, in);
	mdl.banner = p;
	mdl.banner_len = len;
	mdl.ops = *in;
	model_version(p, len);

	/* options, as ssh.c leaves them for ssh_login() */
	options.hpn_early_send = (flags & F_NO_EARLY) == 0;
	options.kex_algorithms = (char *)client_kex[flags & F_GUESS];
	options.session_type = (flags & F_NO_SESSION) ?
	    SESSION_TYPE_NONE : SESSION_TYPE_DEFAULT;
	options.preferred_authentications = (flags & F_PREF_NONE) ?
	    "none,publickey" : "publickey,keyboard-interactive,password";
	options.identity_files[0] = (flags & F_RSA_FIRST) ?
	    path_id_rsa : path_id_ed25519;
	options.identity_files[1] = (flags & F_RSA_FIRST) ?
	    path_id_ed25519 : path_id_rsa;
	if ((r = sshkey_from_private((flags & F_RSA_FIRST) ? user_rsa :
	    user_ed25519, &options.identity_keys[0])) != 0 ||
	    (r = sshkey_from_private((flags & F_RSA_FIRST) ? user_ed25519 :
	    user_rsa, &options.identity_keys[1])) != 0)
		fz_bad("identity: %s", ssh_err(r));
	options.num_identity_files = 2;
	hosts_write(record_line[flags & F_GUESS]);
	stdin_open();

	fzp_open(&fd, model_turn);
	if ((cl = ssh_packet_set_connection(NULL, fd, fd)) == NULL)
		fz_bad("ssh_packet_set_connection");
	channel_init_channels(cl);
	hpn_early_set_opener(session_open);

	/* sshconnect.c ssh_login() */
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(22);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	hpn_early_socket(cl);
	if (hpn_early_kex_wanted(HOST, 22))
		ssh_kex2_start(cl, HOST, (struct sockaddr *)&sin, 22, NULL);
	if ((r = kex_exchange_identification(cl, 3600 * 1000, NULL)) != 0)
		sshpkt_fatal(cl, r, "banner exchange");
	ssh_packet_set_nonblocking(cl);
	hpn_early_kex_banner(cl, HOST, 22);
	ssh_kex2(cl, HOST, (struct sockaddr *)&sin, 22, NULL);
	hpn_early_kex_done(cl, HOST, 22);
	ssh_userauth2(cl, "fuzz", "fuzz", HOST, &sensitive);

	/* ssh.c ssh_session2(), clientloop.c client_init_dispatch() */
	ssh_dispatch_init(cl, &dispatch_protocol_ignore);
	ssh_dispatch_set(cl, SSH2_MSG_CHANNEL_CLOSE, &channel_input_oclose);
	ssh_dispatch_set(cl, SSH2_MSG_CHANNEL_DATA, &channel_input_data);
	ssh_dispatch_set(cl, SSH2_MSG_CHANNEL_EOF, &channel_input_ieof);
	ssh_dispatch_set(cl, SSH2_MSG_CHANNEL_EXTENDED_DATA,
	    &channel_input_extended_data);
	ssh_dispatch_set(cl, SSH2_MSG_CHANNEL_OPEN_CONFIRMATION,
	    &channel_input_open_confirmation);
	ssh_dispatch_set(cl, SSH2_MSG_CHANNEL_OPEN_FAILURE,
	    &channel_input_open_failure);
	ssh_dispatch_set(cl, SSH2_MSG_CHANNEL_REQUEST, &session_channel_req);
	ssh_dispatch_set(cl, SSH2_MSG_CHANNEL_WINDOW_ADJUST,
	    &channel_input_window_adjust);
	ssh_dispatch_set(cl, SSH2_MSG_CHANNEL_SUCCESS,
	    &channel_input_status_confirm);
	ssh_dispatch_set(cl, SSH2_MSG_CHANNEL_FAILURE,
	    &channel_input_status_confirm);
	ssh_dispatch_set(cl, SSH2_MSG_KEXINIT, &kex_input_kexinit);
	if (options.session_type != SESSION_TYPE_NONE &&
	    hpn_early_session_id() == -1)
		session_open(cl);
	ssh_dispatch_run_fatal(cl, DISPATCH_BLOCK, NULL);
}

/* The state of the compiled-in files as at the start. */
static void
reset_state(int failed)
{
	u_int i;

	if (!failed) {
		free(xxx_host);
		free(supported);
		free(early.guess);
		sshbuf_free(ec.stash);
		free(options.hostkeyalgorithms);
		for (i = 0; i < 2; i++)
			sshkey_free(options.identity_keys[i]);
		free(none.user);
	}
	xxx_host = NULL;
	xxx_hostaddr = NULL;
	xxx_conn_info = NULL;
	userauth_early_sent = userauth_early_pass = 0;
	current = NULL;
	supported = preferred = NULL;
	memcpy(authmethods, authmethods_fresh, sizeof(authmethods));
	/* function-local statics of sshconnect2.c */
	__asm__ volatile("movl $0, userauth_pubkey.prepared(%%rip)\n\t"
	    "movl $0, pubkey_early_recheck.done(%%rip)" ::: "memory");
	early = early_fresh;
	ec = ec_fresh;
	waited = accepted = 0;
	service_accept = NULL;
	none = none_fresh;
	options.hostkeyalgorithms = NULL;
	for (i = 0; i < 2; i++)
		options.identity_keys[i] = NULL;
	unsetenv(HPN_EARLY_INPUT_ENV);
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
	flags = 0;
	client_chan = -1;
	/* hpnscp's own pipe: set outside the step (setenv() allocates) */
	if (size > 0 && ((data[0] & F_STDIN) >> 4) == 3)
		setenv(HPN_EARLY_INPUT_ENV, "own", 1);
	failed = FZ_STEP(session(&in));
	if (cl != NULL) {
		channel_free_channels(cl);
		fz_connection_free(cl);
	}
	fzp_close(cl != NULL);
	cl = NULL;
	model_free(failed);
	reset_state(failed);
	if (stdin_fd != -1)
		close(stdin_fd);
	if (pipe_keep != -1)
		close(pipe_keep);
	stdin_fd = pipe_keep = -1;
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
key_load(const char *text, const char *name)
{
	struct sshbuf *b;
	struct sshkey *k = NULL;
	char *path;
	int fd, r;

	if ((b = sshbuf_from(text, strlen(text))) == NULL)
		fz_bad("sshbuf_from");
	if ((r = sshkey_parse_private_fileblob(b, "", &k, NULL)) != 0)
		fz_bad("key %s: %s", name, ssh_err(r));
	sshbuf_free(b);
	if (name == NULL)
		return k;
	xasprintf(&path, "%s/%s", dir, name);
	if ((fd = open(path, O_WRONLY|O_CREAT|O_TRUNC, 0600)) == -1 ||
	    write(fd, text, strlen(text)) != (ssize_t)strlen(text) ||
	    close(fd) == -1)
		fz_bad("%s: %s", path, strerror(errno));
	if (strcmp(name, "id_rsa") == 0)
		path_id_rsa = path;
	else
		path_id_ed25519 = path;
	return k;
}

static void
cleanup(void)
{
	if (dir == NULL)
		return;
	unlink(path_id_ed25519);
	unlink(path_id_rsa);
	unlink(path_hosts);
	unlink(path_file);
	rmdir(dir);
}

static void
setup(void)
{
	char d[PATH_MAX], *name, *h;
	u_int i;
	int fd;

	fz_scratch(d, sizeof(d), "early-client");
	dir = xstrdup(d);
	atexit(cleanup);
	host_ed25519 = key_load(fz_key_host_ed25519, NULL);
	host_rsa = key_load(fz_key_host_rsa, NULL);
	user_ed25519 = key_load(fz_key_user_ed25519, "id_ed25519");
	user_rsa = key_load(fz_key_user_rsa, "id_rsa");
	xasprintf(&path_hosts, "%s/hpn_early_hosts", dir);
	xasprintf(&path_file, "%s/stdin", dir);
	for (i = 0; i < sizeof(file_data); i++)
		file_data[i] = (u_char)(i * 7 + i / 251);
	if ((fd = open(path_file, O_WRONLY|O_CREAT|O_TRUNC, 0600)) == -1 ||
	    write(fd, file_data, sizeof(file_data)) !=
	    (ssize_t)sizeof(file_data) || close(fd) == -1)
		fz_bad("%s: %s", path_file, strerror(errno));
	if ((null_fd = open(_PATH_DEVNULL, O_RDWR)) == -1)
		fz_bad("%s: %s", _PATH_DEVNULL, strerror(errno));
	/* EarlyHostsFile's lines, as hpn_early_kex_done() writes them */
	name = put_host_port(HOST, 22);
	for (i = 0; i < 4; i++) {
		if (client_record[i] == NULL)
			continue;
		if ((h = host_hash(name, NULL, 0)) == NULL)
			fz_bad("host_hash");
		xasprintf(&record_line[i], "%s %s\n", h, client_record[i]);
		free(h);
	}
	free(name);

	initialize_options(&options);
	options.batch_mode = 1;
	options.number_of_password_prompts = 0;
	options.identity_agent = xstrdup("none");
	options.hpn_early_hosts_file = xstrdup(path_hosts);
	options.identity_files[0] = path_id_ed25519;
	options.identity_files[1] = path_id_rsa;
	options.num_identity_files = 2;
	if (fill_default_options(&options) != 0)
		fz_bad("fill_default_options");
	/* no known_hosts: verify_host_key() is the harness's */
	for (i = 0; i < options.num_user_hostfiles; i++)
		free(options.user_hostfiles[i]);
	for (i = 0; i < options.num_system_hostfiles; i++)
		free(options.system_hostfiles[i]);
	options.num_user_hostfiles = options.num_system_hostfiles = 0;
	options.log_level = SYSLOG_LEVEL_QUIET;
	free(options.hostkeyalgorithms);
	options.hostkeyalgorithms = NULL;
	free(options.kex_algorithms);
	options.kex_algorithms = NULL;
	free(options.preferred_authentications);
	options.preferred_authentications = NULL;
	for (i = 0; i < 2; i++)
		options.identity_file_userprovided[i] = 1;
	unsetenv("SSH_AUTH_SOCK");
	/* kept by readconf.c once made: made before any step */
	(void)kex_default_pk_alg();
	memcpy(authmethods_fresh, authmethods, sizeof(authmethods));
	early_fresh = early;
	ec_fresh = ec;
	none_fresh = none;
	/* padding of fixed bytes: none of the random streams goes to it */
	hpn_pad_test_fixed = 1;
	fzp_init();
}

/* Seeds: scripts of what servers send, in their orders. */
static struct sshbuf *seed;

static void
seed_start(uint8_t f, uint8_t sel, const char *banner)
{
	sshbuf_reset(seed);
	if (sshbuf_put_u8(seed, f) != 0 || sshbuf_put_u8(seed, sel) != 0 ||
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
seed_u32(uint32_t v)
{
	if (sshbuf_put_u32(seed, v) != 0)
		fz_bad("seed");
}

/* hpnsshd after authentication: the early session's confirmation */
static void
seed_session(int early_ok)
{
	seed_op(OP_SUCCESS, 1, 0);
	seed_op(OP_CONFIRM, 1, early_ok ? HPN_EARLY_CHANNEL_ID : 3);
	seed_u32(CHAN_SES_WINDOW_DEFAULT);
	seed_u32(CHAN_SES_PACKET_DEFAULT);
	seed_op(OP_CHAN_REPLY, 1, 0);
	seed_op(OP_ADJUST, 1, 0);
	seed_u32(FILE_LEN);
	seed_op(OP_YIELD, 0);
	seed_op(OP_DATA, 1, 0);
	if (sshbuf_put_u16(seed, 5) != 0 || sshbuf_put(seed, "hello", 5) != 0)
		fz_bad("seed");
	seed_op(OP_EXIT_STATUS, 1, 0);
	seed_op(OP_EOF_CLOSE, 1, 0);
	seed_op(OP_EOF_CLOSE, 1, 1);
	seed_op(OP_YIELD, 0);
}

static void
write_seeds(const char *out)
{
	const char *hpn = "SSH-2.0-OpenSSH_10.3p1" HPN_VERSION_TAG "\r\n";
	const char *stock = "SSH-2.0-OpenSSH_10.2\r\n";
	const char *old = "SSH-2.0-OpenSSH_6.3\r\n";
	static const struct {
		const char *name;
		uint8_t f, sel;
	} full[] = {
		{ "known-c25519", 0x01, 0 },
		{ "known-mlkem", 0x02, 0 },
		{ "known-c25519-file", 0x11, 0 },
		{ "known-mlkem-own-pipe", 0x32, 0 },
		{ "known-c25519-pipe", 0x21, 0 },
		{ "first-hpnsshd", 0x00, 0 },
		{ "first-hpnsshd-file", 0x10, 0 },
		{ "wrong-guess", 0x02, 2 },
		{ "rsa-hostkey-first", 0x01, 4 },
		{ "stale-record", 0x03, 0 },
		{ "no-ext-info", 0x01, 3 },
		{ "strict-no-ext-info", 0x01, 5 },
		{ "early-send-no", 0x05, 0 },
		{ "rsa-user-key", 0x09, 0 },
		{ "no-session", 0x41, 0 },
	};
	u_int i;

	if ((seed = sshbuf_new()) == NULL)
		fz_bad("sshbuf_new");
	/*
	 * hpnsshd (or OpenSSH): its KEXINIT with its version string, its
	 * reply, NEWKEYS and EXT_INFO as kex_send_newkeys() sends them,
	 * SERVICE_ACCEPT, then the answer to the first request.
	 */
	for (i = 0; i < sizeof(full) / sizeof(full[0]); i++) {
		seed_start(full[i].f, full[i].sel, hpn);
		seed_op(OP_KEXINIT, 0);
		seed_op(OP_YIELD, 0);
		seed_op(OP_KEX, 1, 0);
		seed_op(OP_YIELD, 0);
		seed_op(OP_SERVICE_ACCEPT, 1, 0);
		seed_session(1);
		fz_write_seed(out, full[i].name, seed);
	}
	/* a stock server: no marker, no early session */
	seed_start(0x01, 1, stock);
	seed_op(OP_KEXINIT, 0);
	seed_op(OP_YIELD, 0);
	seed_op(OP_KEX, 1, 0);
	seed_op(OP_YIELD, 0);
	seed_op(OP_SERVICE_ACCEPT, 1, 0);
	seed_op(OP_SUCCESS, 1, 0);
	seed_op(OP_YIELD, 0);
	seed_op(OP_CONFIRM, 1, 0);
	seed_u32(CHAN_SES_WINDOW_DEFAULT);
	seed_u32(CHAN_SES_PACKET_DEFAULT);
	seed_op(OP_YIELD, 0);
	fz_write_seed(out, "stock-server", seed);
	/* the early session refused with the request, opened again */
	seed_start(0x11, 0, hpn);
	seed_op(OP_KEXINIT, 0);
	seed_op(OP_YIELD, 0);
	seed_op(OP_KEX, 1, 0);
	seed_op(OP_YIELD, 0);
	seed_op(OP_SERVICE_ACCEPT, 1, 0);
	seed_op(OP_FAILURE, 1, 2);	/* publickey,password */
	seed_op(OP_YIELD, 0);
	seed_op(OP_FAILURE, 1, 2);
	seed_op(OP_YIELD, 0);
	seed_op(OP_SUCCESS, 1, 0);
	seed_op(OP_YIELD, 0);
	seed_op(OP_CONFIRM, 1, 4);
	seed_u32(CHAN_SES_WINDOW_DEFAULT);
	seed_u32(CHAN_SES_PACKET_DEFAULT);
	seed_op(OP_YIELD, 0);
	fz_write_seed(out, "early-refused", seed);
	/* an offered RSA key (no server-sig-algs): PK_OK, then signed */
	seed_start(0x09, 3, hpn);
	seed_op(OP_KEXINIT, 0);
	seed_op(OP_YIELD, 0);
	seed_op(OP_REPLY, 1, 0);
	seed_op(OP_NEWKEYS, 1, 0);
	seed_op(OP_SERVICE_ACCEPT, 1, 0);
	seed_op(OP_YIELD, 0);
	seed_op(OP_PK_OK, 1, 0);
	seed_op(OP_YIELD, 0);
	seed_session(1);
	fz_write_seed(out, "pk-ok", seed);
	/* EXT_INFO after SERVICE_ACCEPT; hostbound; none-switch */
	seed_start(0x11, 0, hpn);
	seed_op(OP_KEXINIT, 0);
	seed_op(OP_YIELD, 0);
	seed_op(OP_REPLY, 1, 0);
	seed_op(OP_NEWKEYS, 1, 0);
	seed_op(OP_YIELD, 0);
	seed_op(OP_EXT_INFO, 1, 0x1c);
	seed_op(OP_SERVICE_ACCEPT, 1, 0);
	seed_op(OP_YIELD, 0);
	seed_session(1);
	fz_write_seed(out, "ext-info-own", seed);
	seed_start(0x11, 0, hpn);
	seed_op(OP_KEXINIT, 0);
	seed_op(OP_YIELD, 0);
	seed_op(OP_REPLY, 1, 0);
	seed_op(OP_NEWKEYS, 1, 0);
	seed_op(OP_SERVICE_ACCEPT, 1, 0);
	seed_op(OP_EXT_INFO, 1, 0x04);
	seed_op(OP_YIELD, 0);
	seed_session(1);
	fz_write_seed(out, "accept-before-ext-info", seed);
	/* the early channel confirmed with another id, a small window */
	seed_start(0x11, 0, hpn);
	seed_op(OP_KEXINIT, 0);
	seed_op(OP_YIELD, 0);
	seed_op(OP_KEX, 1, 0);
	seed_op(OP_YIELD, 0);
	seed_op(OP_SERVICE_ACCEPT, 1, 0);
	seed_session(0);
	fz_write_seed(out, "early-wrong-id", seed);
	seed_start(0x11, 0, hpn);
	seed_op(OP_KEXINIT, 0);
	seed_op(OP_YIELD, 0);
	seed_op(OP_KEX, 1, 0);
	seed_op(OP_YIELD, 0);
	seed_op(OP_SERVICE_ACCEPT, 1, 0);
	seed_op(OP_SUCCESS, 1, 0);
	seed_op(OP_CONFIRM, 1, 0);
	seed_u32(1000);
	seed_u32(CHAN_SES_PACKET_DEFAULT);
	seed_op(OP_ADJUST, 1, 0);
	seed_u32(30000);
	seed_op(OP_ADJUST, 1, 0);
	seed_u32(30000);
	seed_op(OP_YIELD, 0);
	fz_write_seed(out, "early-small-window", seed);
	/*
	 * The fixed defect: a reply before KEXINIT, signed over what the
	 * client has (no server KEXINIT) with the RSA key it expects; then
	 * the KEXINIT and the reply over it, without strict KEX.
	 */
	seed_start(0x01, 3, hpn);
	seed_op(OP_REPLY, 1, 1);
	seed_op(OP_YIELD, 0);
	seed_op(OP_KEXINIT, 0);
	seed_op(OP_KEX, 1, 0);
	seed_op(OP_YIELD, 0);
	seed_op(OP_SERVICE_ACCEPT, 1, 0);
	seed_session(1);
	fz_write_seed(out, "reply-before-kexinit", seed);
	seed_start(0x01, 0, hpn);
	seed_op(OP_REPLY, 1, 1);
	seed_op(OP_KEXINIT, 0);
	seed_op(OP_YIELD, 0);
	fz_write_seed(out, "reply-before-kexinit-strict", seed);
	/* the server's own reply before its KEXINIT (not over the client's) */
	seed_start(0x01, 3, hpn);
	seed_op(OP_REPLY, 1, 0);
	seed_op(OP_KEXINIT, 0);
	seed_op(OP_NEWKEYS, 1, 1);
	seed_op(OP_YIELD, 0);
	fz_write_seed(out, "reply-then-kexinit", seed);
	/* a version string needing workarounds after a guess */
	seed_start(0x01, 0, old);
	seed_op(OP_KEXINIT, 0);
	seed_op(OP_YIELD, 0);
	fz_write_seed(out, "guess-old-server", seed);
	/* lines before the version string, plaintext messages */
	seed_start(0x01, 3, "hello\r\nSSH-2.0-OpenSSH_10.3p1 hpn\r\n");
	seed_op(OP_PLAIN, 1, SSH2_MSG_IGNORE);
	if (sshbuf_put_u16(seed, 4) != 0 ||
	    sshbuf_put_u32(seed, 0) != 0)
		fz_bad("seed");
	seed_op(OP_KEXINIT, 0);
	seed_op(OP_YIELD, 0);
	seed_op(OP_KEX, 1, 0);
	seed_op(OP_YIELD, 0);
	seed_op(OP_SERVICE_ACCEPT, 1, 0);
	seed_session(1);
	fz_write_seed(out, "pre-banner-lines", seed);
	/* "none" first, accepted */
	seed_start(0x80, 0, hpn);
	seed_op(OP_KEXINIT, 0);
	seed_op(OP_YIELD, 0);
	seed_op(OP_KEX, 1, 0);
	seed_op(OP_YIELD, 0);
	seed_op(OP_SERVICE_ACCEPT, 1, 0);
	seed_op(OP_SUCCESS, 1, 0);
	seed_op(OP_YIELD, 0);
	fz_write_seed(out, "none-first", seed);
	/* every method refused: "none" last */
	seed_start(0x01, 0, hpn);
	seed_op(OP_KEXINIT, 0);
	seed_op(OP_YIELD, 0);
	seed_op(OP_KEX, 1, 0);
	seed_op(OP_YIELD, 0);
	seed_op(OP_SERVICE_ACCEPT, 1, 0);
	seed_op(OP_FAILURE, 1, 0);
	seed_op(OP_YIELD, 0);
	seed_op(OP_FAILURE, 1, 0);
	seed_op(OP_YIELD, 0);
	seed_op(OP_FAILURE, 1, 0);
	seed_op(OP_YIELD, 0);
	seed_op(OP_SUCCESS, 1, 0);
	seed_op(OP_YIELD, 0);
	fz_write_seed(out, "none-last", seed);
	sshbuf_free(seed);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *out = getenv("HPN_FUZZ_SEEDS");

	(void)argc;
	(void)argv;
	fz_init("early_client_fuzz");
	setup();
	if (out != NULL) {
		write_seeds(out);
		fflush(NULL);
		_exit(0);
	}
	return 0;
}
