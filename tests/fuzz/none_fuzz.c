/*
 * Fuzz harness: the None cipher switch (hpn-none.c), fed what the peer
 * sends it: the server's EXT_INFO (our none-switch@ value among the
 * others), the peer's banner (HPN, HPN-SSH, stock) and the peer's KEXINIT
 * proposals, through the packet layer and the key exchange's own
 * handlers (kex_input_ext_info(), kex_input_kexinit(): the negotiation,
 * hpn_none_kex_failed() when no cipher is agreed, the none MAC's set-up
 * in mac.c), then the NEWKEYS of what was negotiated
 * (hpn_none_newkeys(), as ssh_set_newkeys() calls it, and
 * hpn_none_rekey_blocks()).
 *
 * Either end: as hpnssh, authentication succeeding runs the switch
 * (hpn_none_client_switch(): our proposal rewritten, the re-exchange
 * started); as hpnsshd, it allows none (hpn_none_server_allow()), and a
 * session may ask for a pty (hpn_none_server_pty()).
 *
 * Checked, whatever the peer sent: none (cipher or MAC) is taken only
 * after authentication, with NoneEnabled, and never once a pty was
 * given (hpn_none_newkeys() ends the connection otherwise, which ends
 * the input); the none MAC only with the none cipher; hpn_none_active()
 * says what was taken.
 *
 * hpn-none.c is compiled in so that its state starts afresh for every
 * input, packet.c for the state of a connection after authentication.
 * HPN_FUZZ_SEEDS=DIR writes the seeds: the EXT_INFO hpnsshd sends
 * (kex_server_update_ext_info()), the KEXINITs our switch and hpnsshd
 * send (taken from the packet layer's output), OpenSSH's default ones.
 */

#include "hpn-none.c"
#include "packet.c"
#include "fuzz-packet.h"

#include "dispatch.h"
#include "myproposal.h"

#include "fuzz-common.h"

int LLVMFuzzerInitialize(int *, char ***);
int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define OPS	64

static __typeof__(none) none_fresh;	/* hpn-none.c's state at start */

/* No key exchange method runs here: the negotiation is what matters. */
static int
kex_method(struct ssh *ssh)
{
	(void)ssh;
	return 0;
}

static void
frame(struct sshbuf *b, const u_char *payload, size_t len)
{
	size_t pad = 8 - (5 + len) % 8;
	u_char zero[16] = { 0 };
	int r;

	if (pad < 4)
		pad += 8;
	if ((r = sshbuf_put_u32(b, 1 + len + pad)) != 0 ||
	    (r = sshbuf_put_u8(b, pad)) != 0 ||
	    (r = sshbuf_put(b, payload, len)) != 0 ||
	    (r = sshbuf_put(b, zero, pad)) != 0)
		fz_bad("frame: %s", ssh_err(r));
}

/* A connection of either end, its first key exchange done. */
static struct ssh *
connection(int server, const u_char *banner, size_t blen)
{
	char *prop[PROPOSAL_MAX] = { KEX_CLIENT };
	char *sprop[PROPOSAL_MAX] = { KEX_SERVER };
	struct ssh *ssh;
	const char *ours = "SSH-2.0-OpenSSH_10.3p1" HPN_VERSION_TAG;
	u_int i;
	int fd, r;

	if ((fd = open("/dev/null", O_RDWR)) == -1 ||
	    (ssh = ssh_packet_set_connection(NULL, fd, fd)) == NULL)
		fz_bad("connection");
	ssh->kex->server = server;
	if ((r = sshbuf_put(server ? ssh->kex->client_version :
	    ssh->kex->server_version, banner, blen)) != 0 ||
	    (r = sshbuf_put(server ? ssh->kex->server_version :
	    ssh->kex->client_version, ours, strlen(ours))) != 0 ||
	    (r = kex_prop2buf(ssh->kex->my, server ? sprop : prop)) != 0)
		fz_bad("kex: %s", ssh_err(r));
	for (i = 0; i < KEX_MAX; i++)
		ssh->kex->kex[i] = kex_method;
	/* as after the first NEWKEYS and authentication */
	ssh->kex->done = 1;
	ssh->state->rekeying = 0;
	ssh->state->after_authentication = 1;
	ssh_dispatch_init(ssh, &dispatch_protocol_ignore);
	ssh_dispatch_set(ssh, SSH2_MSG_KEXINIT, &kex_input_kexinit);
	if (!server)
		ssh_dispatch_set(ssh, SSH2_MSG_EXT_INFO, &kex_input_ext_info);
	return ssh;
}

static struct ssh *ssh_now;

/* The NEWKEYS of both directions, as ssh_set_newkeys() takes them. */
static void
newkeys(struct ssh *ssh, int authed, int pty)
{
	struct newkeys *nk;
	u_int64_t hard = 1, max = 1;
	int mode, is_none;

	for (mode = MODE_OUT; mode >= MODE_IN; mode--) {
		if ((nk = ssh->kex->newkeys[mode]) == NULL)
			return;
		hpn_none_newkeys(ssh, mode, &nk->enc, &nk->mac);
		/* it went on: what it took must be allowed */
		is_none = nk->enc.name != NULL &&
		    strcmp(nk->enc.name, "none") == 0;
		if (hpn_mac_is_none(&nk->mac) && !is_none)
			fz_bad("none MAC with %s", nk->enc.name);
		if (is_none && (!authed || pty))
			fz_bad("none taken %s", pty ? "after a pty" :
			    "before authentication");
		if (is_none && !none.active[mode])
			fz_bad("none taken, not active");
		hpn_none_rekey_blocks(&nk->enc, 1 << 30, &hard, &max);
		if (is_none && hard != 0)
			fz_bad("none with a block limit");
	}
	if (hpn_none_active() != (none.active[MODE_IN] ||
	    none.active[MODE_OUT]))
		fz_bad("hpn_none_active() says otherwise");
	/* the exchange is over (kex_input_newkeys()) */
	for (mode = 0; mode < MODE_MAX; mode++) {
		kex_free_newkeys(ssh->kex->newkeys[mode]);
		ssh->kex->newkeys[mode] = NULL;
	}
	ssh->kex->flags &= ~KEX_INIT_SENT;
	ssh->kex->done = 1;
	sshbuf_reset(ssh->kex->peer);
	ssh->state->rekeying = 0;
	ssh_dispatch_set(ssh, SSH2_MSG_KEXINIT, &kex_input_kexinit);
}

static void
session(struct fz_in *in)
{
	struct ssh *ssh;
	struct sshbuf *b;
	const uint8_t *p;
	size_t len;
	uint8_t flags, op;
	u_int k;
	int server, authed = 0, pty = 0, r;

	if (fz_u8(in, &flags) != 0 || fz_bytes(in, 255, &p, &len) != 0)
		return;
	server = flags & 0x01;
	ssh = ssh_now = connection(server, p, len);
	/* NoneEnabled, NoneMacEnabled; the server's is set at user auth */
	if (server)
		hpn_none_server_config(flags & 0x02, flags & 0x04);
	for (k = 0; k < OPS && fz_u8(in, &op) == 0; k++) {
		switch (op % 4) {
		case 0:		/* a packet from the peer */
			if (fz_bytes(in, 8192, &p, &len) != 0)
				break;
			if ((b = sshbuf_new()) == NULL)
				fz_bad("sshbuf_new");
			frame(b, p, len);
			r = ssh_packet_process_incoming(ssh,
			    (const char *)sshbuf_ptr(b), sshbuf_len(b));
			sshbuf_free(b);
			if (r != 0)
				sshpkt_fatal(ssh, r, "process_incoming");
			/* as the client and server loops: an error is fatal */
			ssh_dispatch_run_fatal(ssh, DISPATCH_NONBLOCK, NULL);
			break;
		case 1:		/* the user is authenticated */
			if (authed)
				break;
			authed = 1;
			if (server) {
				/* hpnsshd tells an HPN client in EXT_INFO */
				(void)hpn_none_ext_value(ssh);
				hpn_none_server_allow(ssh, "fuzz");
			} else {
				hpn_none_client_switch(ssh, flags & 0x02,
				    flags & 0x08, flags & 0x04, (flags & 0x10) ?
				    "a tty was requested" : NULL);
			}
			break;
		case 2:		/* a session asks for a pty */
			if (server) {
				pty = 1;
				hpn_none_server_pty(ssh);
			}
			break;
		case 3:		/* NEWKEYS */
			newkeys(ssh, authed, pty);
			break;
		}
	}
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
	failed = FZ_STEP(session(&in));
	fz_connection_free(ssh_now);
	ssh_now = NULL;
	free(none.user);
	none = none_fresh;
	if (failed)
		fz_step_release();
	if ((fd = dup(0)) != base_fd)
		fz_bad("descriptor %d free after the input, %d before", fd,
		    base_fd);
	close(fd);
	return 0;
}

/* --- the seeds -------------------------------------------------------- */

static struct sshbuf *seedbuf;

/* The payloads of the packets ssh queued (unencrypted), then emptied. */
static void
take_sent(struct ssh *ssh, u_char type, struct sshbuf *into)
{
	struct sshbuf *out = ssh_packet_get_output(ssh);
	const u_char *d;
	u_int32_t plen;
	u_int pad;

	while (sshbuf_len(out) > 5) {
		d = sshbuf_ptr(out);
		plen = PEEK_U32(d);
		pad = d[4];
		if (d[5] == type && sshbuf_put(into, d + 5,
		    plen - 1 - pad) != 0)
			fz_bad("take");
		if (sshbuf_consume(out, 4 + plen) != 0)
			fz_bad("consume");
	}
}

static void
put_packet(struct sshbuf *payload)
{
	if (sshbuf_put_u8(seedbuf, 0) != 0 ||
	    sshbuf_put_u16(seedbuf, sshbuf_len(payload)) != 0 ||
	    sshbuf_putb(seedbuf, payload) != 0)
		fz_bad("seed");
}

static void
put_head(u_int8_t flags, const char *banner)
{
	sshbuf_reset(seedbuf);
	if (sshbuf_put_u8(seedbuf, flags) != 0 ||
	    sshbuf_put_u16(seedbuf, strlen(banner)) != 0 ||
	    sshbuf_put(seedbuf, banner, strlen(banner)) != 0)
		fz_bad("seed");
}

static void
put_op(u_int8_t op)
{
	if (sshbuf_put_u8(seedbuf, op) != 0)
		fz_bad("seed");
}

static void
write_seeds(const char *dir)
{
	const char *hpn = "SSH-2.0-OpenSSH_10.3p1" HPN_VERSION_TAG;
	const char *hpnssh = "SSH-2.0-OpenSSH_10.2p1_hpn18.8.0";
	const char *hpnssh_dash = "SSH-2.0-OpenSSH_9.9p1-hpn18.6.0";
	const char *stock = "SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u6";
	struct sshbuf *ext, *ext0, *skex, *ckex, *ckex_hpnssh, *dflt;
	char *cprop[PROPOSAL_MAX] = { KEX_CLIENT };
	struct ssh *ssh;
	int mac;

	if ((seedbuf = sshbuf_new()) == NULL || (ext = sshbuf_new()) == NULL ||
	    (ext0 = sshbuf_new()) == NULL || (skex = sshbuf_new()) == NULL ||
	    (ckex = sshbuf_new()) == NULL || (dflt = sshbuf_new()) == NULL ||
	    (ckex_hpnssh = sshbuf_new()) == NULL)
		fz_bad("sshbuf_new");
	/* hpnsshd's EXT_INFO in authentication, NoneEnabled/NoneMacEnabled */
	for (mac = 0; mac < 2; mac++) {
		none = none_fresh;
		ssh = connection(1, (const u_char *)hpn, strlen(hpn));
		ssh->kex->flags |= KEX_HAS_EXT_INFO_IN_AUTH;
		ssh->kex->server_sig_algs = xstrdup("ssh-ed25519,rsa-sha2-512");
		hpn_none_server_config(1, mac);
		if (kex_server_update_ext_info(ssh) != 0)
			fz_bad("ext_info");
		sshbuf_reset(mac ? ext : ext0);
		take_sent(ssh, SSH2_MSG_EXT_INFO, mac ? ext : ext0);
		/* and its KEXINIT once it allows none */
		if (mac) {
			hpn_none_server_allow(ssh, "user");
			if (kex_send_kexinit(ssh) != 0)
				fz_bad("kexinit");
			take_sent(ssh, SSH2_MSG_KEXINIT, skex);
		}
		ssh_packet_free(ssh);
	}
	/* our switch's KEXINIT: to a server that allows none, to HPN-SSH */
	none = none_fresh;
	ssh = connection(0, (const u_char *)hpn, strlen(hpn));
	hpn_none_ext_parse(ssh, HPN_NONE_EXT, (const u_char *)"cipher,mac",
	    10);
	hpn_none_client_switch(ssh, 1, 1, 1, NULL);
	take_sent(ssh, SSH2_MSG_KEXINIT, ckex);
	ssh_packet_free(ssh);
	none = none_fresh;
	ssh = connection(0, (const u_char *)hpnssh_dash, strlen(hpnssh_dash));
	hpn_none_client_switch(ssh, 1, 1, 0, NULL);
	take_sent(ssh, SSH2_MSG_KEXINIT, ckex_hpnssh);
	ssh_packet_free(ssh);
	/* OpenSSH's default client KEXINIT */
	none = none_fresh;
	ssh = connection(0, (const u_char *)stock, strlen(stock));
	if (kex_prop2buf(ssh->kex->my, cprop) != 0 ||
	    kex_send_kexinit(ssh) != 0)
		fz_bad("kexinit");
	take_sent(ssh, SSH2_MSG_KEXINIT, dflt);
	ssh_packet_free(ssh);
	none = none_fresh;

	/* hpnssh: EXT_INFO, authenticated (the switch), the server's answer */
	put_head(0x0e, hpn);		/* NoneEnabled, NoneSwitch, MAC */
	put_packet(ext);
	put_op(1);
	put_packet(skex);
	put_op(3);
	fz_write_seed(dir, "client-switch-mac", seedbuf);
	put_head(0x0a, hpn);
	put_packet(ext0);
	put_op(1);
	put_packet(skex);
	put_op(3);
	fz_write_seed(dir, "client-switch", seedbuf);
	put_head(0x0a, hpnssh_dash);	/* HPN-SSH: no EXT_INFO, none first */
	put_op(1);
	put_packet(skex);
	put_op(3);
	fz_write_seed(dir, "client-hpnssh", seedbuf);
	put_head(0x0a, hpnssh);		/* HPN-SSH 18.8's banner */
	put_op(1);
	put_packet(skex);
	put_op(3);
	fz_write_seed(dir, "client-hpnssh-18.8", seedbuf);
	put_head(0x0a, stock);		/* a stock server: no switch */
	put_op(1);
	put_packet(dflt);
	put_op(3);
	fz_write_seed(dir, "client-stock", seedbuf);
	put_head(0x1a, hpn);		/* a tty: no switch */
	put_packet(ext0);
	put_op(1);
	fz_write_seed(dir, "client-tty", seedbuf);
	/* hpnsshd: the client's switch, allowed or not, a pty */
	put_head(0x07, hpn);		/* NoneEnabled, NoneMacEnabled */
	put_op(1);
	put_packet(ckex);
	put_op(3);
	fz_write_seed(dir, "server-allow-mac", seedbuf);
	put_head(0x03, hpn);
	put_op(1);
	put_packet(ckex);
	put_op(3);
	put_op(2);
	put_packet(ckex);
	put_op(3);
	fz_write_seed(dir, "server-pty-after", seedbuf);
	put_head(0x03, hpnssh_dash);
	put_op(1);
	put_op(2);
	put_packet(ckex_hpnssh);
	put_op(3);
	fz_write_seed(dir, "server-pty-first", seedbuf);
	put_head(0x01, hpn);		/* not enabled */
	put_op(1);
	put_packet(ckex);
	put_op(3);
	fz_write_seed(dir, "server-not-enabled", seedbuf);
	put_head(0x03, hpn);		/* none before authentication */
	put_packet(ckex);
	put_op(3);
	fz_write_seed(dir, "server-preauth", seedbuf);
	put_head(0x03, stock);		/* a stock client: none never added */
	put_op(1);
	put_packet(dflt);
	put_op(3);
	fz_write_seed(dir, "server-stock", seedbuf);
	sshbuf_free(ext);
	sshbuf_free(ext0);
	sshbuf_free(skex);
	sshbuf_free(ckex);
	sshbuf_free(ckex_hpnssh);
	sshbuf_free(dflt);
	sshbuf_free(seedbuf);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("HPN_FUZZ_SEEDS");

	(void)argc;
	(void)argv;
	fz_init("none_fuzz");
	none_fresh = none;
	if (dir != NULL) {
		write_seeds(dir);
		fflush(NULL);
		_exit(0);
	}
	return 0;
}
