/*
 * Fuzz harness: channel data opened straight into its channel's buffer
 * (hpn-recvfast.patch: hpn_packet_open() in packet.c, cipher_open_*() in
 * cipher.c and cipher-chachapoly-libcrypto.c, channel_data_direct() in
 * channels.c).
 *
 * An authenticated peer chooses the plaintext of its packets: the padding
 * length, the type, the channel, the data length, whether they agree with
 * the packet's length, and the packet's length itself.  The harness
 * builds such frames from the input, encrypts them with a real key
 * (AES-128-GCM, chacha20-poly1305, or aes128-ctr with an EtM MAC, which
 * must go the old way), may flip a byte of them on the way, and hands the
 * same bytes to two receivers in the same state: one whose channel data
 * handler is channel_input_data() (the direct way open), one whose handler
 * is a wrapper that calls it (the direct way closed: every packet through
 * incoming_packet and the dispatch, as upstream).  Between deliveries the
 * input changes the channel the same way on both: its window, its packet
 * size, its type, whether its output is open, its output emptied.
 *
 * Checked after every delivery: the two receivers agree on the outcome
 * (the error, or the fatal() that ends the connection), on the channel's
 * output byte for byte, its window, its excess and its count of bytes
 * received.  Any difference aborts.
 *
 * packet.c and channels.c are compiled in, for the connection's and the
 * channels' state (the keys are made once, by a real key exchange, and
 * restored for every input with ssh_packet_set_state()).
 * HPN_FUZZ_SEEDS=DIR writes the seeds.
 */

#include "includes.h"

#include <sys/types.h>
#include <stdio.h>

#include "packet.c"
#include "fuzz-packet.h"
#include "channels.c"

#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <unistd.h>

#include "ssh_api.h"
#include "myproposal.h"
#include "sshkey.h"

#include "fuzz-common.h"

int LLVMFuzzerInitialize(int *, char ***);
int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define OPS		256
#define DATA_MAX	(64 * 1024)	/* a frame's body, at most */
#define WINDOW_MAX	(8 * 1024 * 1024)

static const struct {
	const char *cipher, *mac;
} suites[] = {
	{ "aes128-gcm@openssh.com", "hmac-sha2-256" },
	{ "chacha20-poly1305@openssh.com", "hmac-sha2-256" },
	{ "aes128-ctr", "hmac-sha2-256-etm@openssh.com" },
};
#define NSUITES	(sizeof(suites) / sizeof(suites[0]))

/* each suite's keyed state: the sender's and the receivers' */
static struct sshbuf *sender_state[NSUITES], *receiver_state[NSUITES];
static u_char filler[DATA_MAX];

/* Move what from has to send to to's input. */
static void
transfer(struct ssh *from, struct ssh *to)
{
	const u_char *p;
	size_t len;

	p = ssh_output_ptr(from, &len);
	if (len > 0 && (ssh_input_append(to, p, len) != 0 ||
	    ssh_output_consume(from, len) != 0))
		fz_bad("transfer");
}

static void
make_keys(u_int i)
{
	struct ssh *client = NULL, *server = NULL;
	struct sshkey *key = NULL, *pub = NULL;
	struct kex_params params;
	char *prop[PROPOSAL_MAX] = { KEX_CLIENT };
	u_char type;
	int n;

	if (sshkey_generate(KEY_ED25519, 0, &key) != 0 ||
	    sshkey_from_private(key, &pub) != 0)
		fz_bad("keys");
	memcpy(params.proposal, prop, sizeof(prop));
	params.proposal[PROPOSAL_KEX_ALGS] = "curve25519-sha256";
	params.proposal[PROPOSAL_ENC_ALGS_CTOS] = (char *)suites[i].cipher;
	params.proposal[PROPOSAL_ENC_ALGS_STOC] = (char *)suites[i].cipher;
	params.proposal[PROPOSAL_MAC_ALGS_CTOS] = (char *)suites[i].mac;
	params.proposal[PROPOSAL_MAC_ALGS_STOC] = (char *)suites[i].mac;
	params.proposal[PROPOSAL_SERVER_HOST_KEY_ALGS] = "ssh-ed25519";
	if (ssh_init(&client, 0, &params) != 0 ||
	    ssh_init(&server, 1, &params) != 0 ||
	    ssh_add_hostkey(server, key) != 0 ||
	    ssh_add_hostkey(client, pub) != 0)
		fz_bad("ssh_init");
	for (n = 0; n < 100 && (!server->kex->done || !client->kex->done);
	    n++) {
		if (ssh_packet_next(server, &type) != 0)
			fz_bad("kex server");
		transfer(server, client);
		if (ssh_packet_next(client, &type) != 0)
			fz_bad("kex client");
		transfer(client, server);
	}
	if (!server->kex->done || !client->kex->done)
		fz_bad("kex not done");
	if ((sender_state[i] = sshbuf_new()) == NULL ||
	    (receiver_state[i] = sshbuf_new()) == NULL ||
	    ssh_packet_get_state(client, sender_state[i]) != 0 ||
	    ssh_packet_get_state(server, receiver_state[i]) != 0)
		fz_bad("get_state");
	ssh_free(client);
	ssh_free(server);
	sshkey_free(key);
	sshkey_free(pub);
}

/* the other receiver's handler: the same, but not the direct way */
static int
data_wrapped(int type, u_int32_t seq, struct ssh *ssh)
{
	return channel_input_data(type, seq, ssh);
}

struct peer {
	struct ssh	*ssh;
	Channel		*c;
	int		 dead;	/* 0, an ssherr, or 1 for fatal() */
};

static struct ssh *
restore(struct sshbuf *blob, int server)
{
	struct ssh *ssh;
	struct sshbuf *copy;

	/* no ssh_init(): its proposals are not used, the state's kex is */
	if ((ssh = ssh_packet_set_connection(NULL, -1, -1)) == NULL ||
	    (copy = sshbuf_fromb(blob)) == NULL)
		fz_bad("restore");
	if (server)
		ssh_packet_set_server(ssh);
	/* ssh_packet_set_state() consumes its copy */
	if (ssh_packet_set_state(ssh, copy) != 0)
		fz_bad("set_state");
	sshbuf_free(copy);
	ssh_packet_set_authenticated(ssh);
	return ssh;
}

static void
peer_setup(struct peer *p, u_int suite, int direct, u_int window,
    u_int maxpacket)
{
	memset(p, 0, sizeof(*p));
	p->ssh = restore(receiver_state[suite], 1);
	channel_init_channels(p->ssh);
	ssh_dispatch_set(p->ssh, SSH2_MSG_CHANNEL_DATA,
	    direct ? &channel_input_data : &data_wrapped);
	/* channel 0 is some other kind; the one fuzzed is 1 */
	if (channel_new(p->ssh, "other", SSH_CHANNEL_OPENING, -1, -1, -1,
	    window, maxpacket, CHAN_EXTENDED_IGNORE, "other", 1) == NULL ||
	    (p->c = channel_new(p->ssh, "fuzzed", SSH_CHANNEL_OPEN, -1, -1,
	    -1, window, maxpacket, CHAN_EXTENDED_IGNORE, "fuzzed",
	    1)) == NULL)
		fz_bad("channel_new");
}

static void
peer_free(struct peer *p)
{
	struct ssh_channels *sc;

	if (p->ssh == NULL)
		return;
	if ((sc = p->ssh->chanctxt) != NULL) {
		channel_free_all(p->ssh);
		free(sc->channels);
		free(sc->channel_pre);
		free(sc->channel_post);
		free(sc->bulk_classifier_tty);
		free(sc->bulk_classifier_notty);
		free(sc);
		p->ssh->chanctxt = NULL;
	}
	fz_connection_free(p->ssh);
	p->ssh = NULL;
}

/*
 * What the main loop does with the packets there are: read, dispatch.  A
 * fatal() (the connection closed) frees the receiver at once, and what
 * the failed step left (fuzz-common.h).
 */
static void
peer_read(struct peer *p)
{
	u_char type;
	u_int32_t seq;
	int r = 0, i, failed = 0;

	for (i = 0; i < 4096 && p->dead == 0; i++) {
		if ((failed = FZ_STEP(r = ssh_packet_read_poll_seqnr(p->ssh,
		    &type, &seq))) != 0)
			break;
		if (r != 0) {
			p->dead = r;
			break;
		}
		if (type == SSH_MSG_NONE)
			break;
		if (type == SSH2_MSG_CHANNEL_DATA &&
		    (failed = FZ_STEP((void)(*p->ssh->dispatch[type])(type,
		    seq, p->ssh))) != 0)
			break;
	}
	if (failed) {
		p->dead = 1;
		peer_free(p);
		fz_step_release();
	}
}

static void
compare(struct peer *a, struct peer *b)
{
	Channel *ca = a->c, *cb = b->c;

	if (a->dead != b->dead)
		fz_bad("outcome: direct %d, upstream %d", a->dead, b->dead);
	if (a->dead == 1)
		return;		/* closed by fatal(): freed */
	if (sshbuf_len(ca->output) != sshbuf_len(cb->output) ||
	    memcmp(sshbuf_ptr(ca->output), sshbuf_ptr(cb->output),
	    sshbuf_len(ca->output)) != 0)
		fz_bad("output: direct %zu bytes, upstream %zu",
		    sshbuf_len(ca->output), sshbuf_len(cb->output));
	if (ca->local_window != cb->local_window ||
	    ca->local_window_exceeded != cb->local_window_exceeded ||
	    ca->local_consumed != cb->local_consumed ||
	    ca->hpn_rx != cb->hpn_rx)
		fz_bad("accounting: window %u/%u excess %u/%u consumed %u/%u "
		    "rx %llu/%llu", ca->local_window, cb->local_window,
		    ca->local_window_exceeded, cb->local_window_exceeded,
		    ca->local_consumed, cb->local_consumed,
		    (unsigned long long)ca->hpn_rx,
		    (unsigned long long)cb->hpn_rx);
}

/*
 * One frame from the sender, its plaintext as the input says: the
 * padding length byte, the type, the channel, the data length, the data
 * (the input's bytes, then filler), the padding; the packet's length
 * as it should be or as given.
 */
static void
send_frame(struct ssh *s, u_char padlen, u_char type, u_int32_t id,
    u_int32_t dlen_field, const u_char *data, size_t dlen, size_t pad,
    int len_given, u_int32_t len_field)
{
	struct session_state *st = s->state;
	struct sshenc *enc = &st->newkeys[MODE_OUT]->enc;
	struct sshmac *mac = &st->newkeys[MODE_OUT]->mac;
	u_int authlen = cipher_authlen(enc->cipher);
	u_int maclen = mac->enabled ? mac->mac_len : 0;
	struct sshbuf *plain;
	size_t body;
	u_char *cp;

	if ((plain = sshbuf_new()) == NULL)
		fz_bad("sshbuf_new");
	body = 1 + 1 + 4 + 4 + dlen + pad;
	if (sshbuf_put_u32(plain, len_given ? len_field : (u_int32_t)body) ||
	    sshbuf_put_u8(plain, padlen) != 0 ||
	    sshbuf_put_u8(plain, type) != 0 ||
	    sshbuf_put_u32(plain, id) != 0 ||
	    sshbuf_put_u32(plain, dlen_field) != 0 ||
	    sshbuf_put(plain, data, dlen) != 0 ||
	    sshbuf_reserve(plain, pad, &cp) != 0)
		fz_bad("frame");
	memset(cp, 0xa5, pad);
	/* encrypted as it stands: a length that disagrees is the peer's */
	if (sshbuf_reserve(st->output, 4 + body + authlen + maclen, &cp) != 0)
		fz_bad("reserve");
	if (cipher_crypt(st->send_context, st->p_send.seqnr, cp,
	    sshbuf_ptr(plain), body, 4, authlen) != 0)
		fz_bad("cipher_crypt %zu", body);
	if (maclen != 0 && mac_compute(mac, st->p_send.seqnr, cp, 4 + body,
	    cp + 4 + body, maclen) != 0)
		fz_bad("mac");
	st->p_send.seqnr++;
	sshbuf_free(plain);
}

static int
run(struct fz_in *in)
{
	struct peer a, b;
	struct ssh *s;
	uint8_t suite, op, u8, padlen, type;
	uint16_t u16;
	uint32_t window, maxpacket, id, dlen, lenf, v;
	const uint8_t *d;
	size_t dl, blocks, len, i, pad;
	const u_char *out;
	u_char *flip;

	if (fz_u8(in, &suite) != 0 || fz_u32(in, &window) != 0 ||
	    fz_u32(in, &maxpacket) != 0)
		return 0;
	suite %= NSUITES;
	window %= WINDOW_MAX;
	maxpacket %= 256 * 1024;
	s = restore(sender_state[suite], 0);
	peer_setup(&a, suite, 1, window, maxpacket);
	peer_setup(&b, suite, 0, window, maxpacket);
	for (i = 0; i < OPS && fz_u8(in, &op) == 0; i++) {
		switch (op % 8) {
		case 0:		/* a well-formed data frame */
		case 1:		/* the same, for another channel */
			if (fz_u16(in, &u16) != 0 ||
			    fz_bytes(in, DATA_MAX, &d, &dl) != 0)
				goto done;
			/* the input's bytes, then filler up to u16 */
			dlen = MAXIMUM(u16, dl);
			memcpy(filler, d, dl);
			memset(filler + dl, (int)dl, dlen - dl);
			id = op % 8 == 0 ? (u_int32_t)a.c->self :
			    (u_int32_t)(op >> 3);
			/* the padding a sender picks: to the block, >= 4 */
			blocks = 16;
			pad = blocks - ((1 + 1 + 4 + 4 + dlen) % blocks);
			if (pad < 4)
				pad += blocks;
			send_frame(s, (u_char)pad, SSH2_MSG_CHANNEL_DATA, id,
			    dlen, filler, dlen, pad, 0, 0);
			break;
		case 2:		/* a frame as the input says, field by field */
			if (fz_u8(in, &padlen) != 0 || fz_u8(in, &type) != 0 ||
			    fz_u32(in, &id) != 0 || fz_u32(in, &dlen) != 0 ||
			    fz_u8(in, &u8) != 0 ||
			    fz_bytes(in, DATA_MAX, &d, &dl) != 0 ||
			    fz_u32(in, &lenf) != 0)
				goto done;
			/* whole blocks, as the cipher needs; the rest wrong */
			pad = u8 % 64;
			len = 10 + dl + pad;
			pad += (16 - len % 16) % 16;
			if (id % 4 != 3)
				id = id % 4 == 0 ? (u_int32_t)a.c->self : id;
			send_frame(s, padlen, type, id, dlen, d, dl, pad,
			    (lenf & 1) != 0, lenf >> 1);
			break;
		case 3:		/* deliver, flipping a byte on the way */
			if (fz_u32(in, &v) != 0)
				goto done;
			out = ssh_output_ptr(s, &len);
			if (len > 0) {
				if ((flip = malloc(len)) == NULL)
					fz_bad("malloc");
				memcpy(flip, out, len);
				flip[v % len] ^= (u_char)(1 << ((v >> 24) % 8));
				if (ssh_input_append(a.ssh, flip, len) != 0 ||
				    ssh_input_append(b.ssh, flip, len) != 0 ||
				    ssh_output_consume(s, len) != 0)
					fz_bad("deliver");
				free(flip);
			}
			goto read;
		case 4:		/* deliver as sent */
			out = ssh_output_ptr(s, &len);
			if (len > 0 && (ssh_input_append(a.ssh, out, len) ||
			    ssh_input_append(b.ssh, out, len) ||
			    ssh_output_consume(s, len) != 0))
				fz_bad("deliver");
 read:
			peer_read(&a);
			peer_read(&b);
			compare(&a, &b);
			if (a.dead)
				goto done;
			/* the consumer takes what the channel holds */
			if (sshbuf_consume(a.c->output,
			    sshbuf_len(a.c->output)) != 0 ||
			    sshbuf_consume(b.c->output,
			    sshbuf_len(b.c->output)) != 0)
				fz_bad("consume");
			break;
		case 5:		/* the channel's window and packet size */
			if (fz_u32(in, &window) != 0 ||
			    fz_u32(in, &maxpacket) != 0)
				goto done;
			a.c->local_window = b.c->local_window =
			    window % WINDOW_MAX;
			a.c->local_maxpacket = b.c->local_maxpacket =
			    maxpacket % (256 * 1024);
			break;
		case 6:		/* the channel's state */
			if (fz_u8(in, &u8) != 0)
				goto done;
			a.c->type = b.c->type = (u8 & 1) ? SSH_CHANNEL_OPEN :
			    (u8 & 2) ? SSH_CHANNEL_X11_OPEN :
			    SSH_CHANNEL_RDYNAMIC_OPEN;
			a.c->ostate = b.c->ostate = (u8 & 4) ?
			    CHAN_OUTPUT_WAIT_DRAIN : CHAN_OUTPUT_OPEN;
			a.c->datagram = b.c->datagram = (u8 & 8) != 0;
			break;
		case 7:		/* deliver a part: packets cut anywhere */
			if (fz_u32(in, &v) != 0)
				goto done;
			out = ssh_output_ptr(s, &len);
			len = len > 0 ? v % len : 0;
			if (len > 0 && (ssh_input_append(a.ssh, out, len) ||
			    ssh_input_append(b.ssh, out, len) ||
			    ssh_output_consume(s, len) != 0))
				fz_bad("deliver");
			goto read;
		}
	}
	/* what is left, delivered */
	out = ssh_output_ptr(s, &len);
	if (len > 0 && (ssh_input_append(a.ssh, out, len) ||
	    ssh_input_append(b.ssh, out, len) ||
	    ssh_output_consume(s, len) != 0))
		fz_bad("deliver");
	peer_read(&a);
	peer_read(&b);
	compare(&a, &b);
 done:
	peer_free(&a);
	peer_free(&b);
	fz_connection_free(s);
	fz_step_release();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };

	return run(&in);
}

/* Seeds: frames as our sender makes them, and ones a peer could. */
static struct sshbuf *seedbuf;

static void
seed_u8(uint8_t v)
{
	if (sshbuf_put_u8(seedbuf, v) != 0)
		fz_bad("seed");
}

static void
seed_u16(uint16_t v)
{
	if (sshbuf_put_u16(seedbuf, v) != 0)
		fz_bad("seed");
}

static void
seed_u32(uint32_t v)
{
	if (sshbuf_put_u32(seedbuf, v) != 0)
		fz_bad("seed");
}

static void
seed_bytes(const void *p, uint16_t len)
{
	seed_u16(len);
	if (sshbuf_put(seedbuf, p, len) != 0)
		fz_bad("seed");
}

static void
write_seed(const char *dir, const char *name)
{
	fz_write_seed(dir, name, seedbuf);
	sshbuf_reset(seedbuf);
}

static void
write_seeds(const char *dir)
{
	static const char text[] = "hello, channel";
	char name[64];
	u_int suite, i;

	if ((seedbuf = sshbuf_new()) == NULL)
		fz_bad("sshbuf_new");
	for (suite = 0; suite < NSUITES; suite++) {
		/* bulk: packets of 32 KiB within a 2 MiB window */
		seed_u8(suite);
		seed_u32(2 * 1024 * 1024);
		seed_u32(32768);
		for (i = 0; i < 8; i++) {
			seed_u8(0);
			seed_u16(32768);
			seed_bytes(text, sizeof(text));
		}
		seed_u8(4);
		for (i = 0; i < 4; i++) {
			seed_u8(0);
			seed_u16(i * 7);
			seed_bytes(text, i);
		}
		/* delivered in two parts, cut inside a packet */
		seed_u8(7);
		seed_u32(1000);
		seed_u8(4);
		snprintf(name, sizeof(name), "bulk-%u", suite);
		write_seed(dir, name);
		/* past the window, another channel, a closed output */
		seed_u8(suite);
		seed_u32(65536);
		seed_u32(32768);
		seed_u8(0);
		seed_u16(40000);
		seed_bytes(text, sizeof(text));
		seed_u8(1 | (1 << 3));	/* channel 1's id is ours: 0 */
		seed_u16(100);
		seed_bytes(text, sizeof(text));
		seed_u8(4);
		seed_u8(6);
		seed_u8(1 | 4);
		seed_u8(0);
		seed_u16(10);
		seed_bytes(text, sizeof(text));
		seed_u8(4);
		snprintf(name, sizeof(name), "edges-%u", suite);
		write_seed(dir, name);
		/* frames field by field: a lying data length, padding */
		seed_u8(suite);
		seed_u32(1024 * 1024);
		seed_u32(32768);
		seed_u8(2);
		seed_u8(4);
		seed_u8(SSH2_MSG_CHANNEL_DATA);
		seed_u32(0);
		seed_u32(sizeof(text) + 1);
		seed_u8(4);
		seed_bytes(text, sizeof(text));
		seed_u32(0);
		seed_u8(2);
		seed_u8(3);
		seed_u8(SSH2_MSG_CHANNEL_DATA);
		seed_u32(0);
		seed_u32(sizeof(text));
		seed_u8(0);
		seed_bytes(text, sizeof(text));
		seed_u32(0);
		seed_u8(4);
		seed_u8(0);
		seed_u16(0);
		seed_bytes(text, sizeof(text));
		seed_u8(3);
		seed_u32(40);
		snprintf(name, sizeof(name), "fields-%u", suite);
		write_seed(dir, name);
	}
	sshbuf_free(seedbuf);
}

/* HPN_FUZZ_COUNT: how many packets went the direct way, at exit */
static void
print_count(void)
{
	fprintf(stderr, "recvfast_fuzz: %llu data packets opened direct\n",
	    (unsigned long long)hpn_data_opened);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("HPN_FUZZ_SEEDS");
	u_int i;

	(void)argc;
	(void)argv;
	fz_init("recvfast_fuzz");
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < NSUITES; i++)
		make_keys(i);
	if (getenv("HPN_FUZZ_COUNT") != NULL)
		atexit(print_count);
	if (dir != NULL) {
		write_seeds(dir);
		fflush(NULL);
		_exit(0);
	}
	return 0;
}
