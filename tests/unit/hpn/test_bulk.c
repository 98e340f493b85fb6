/*
 * Unit tests of the HPN patch set's per-byte work in bulk transfers
 * (issue 32): one function of tests for each change, called by tests().
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "test_helper.h"

#define SSHBUF_INTERNAL
#include "sshbuf.h"
#include "misc.h"
#include "ssh2.h"
#include "ssherr.h"
#include "poly1305.h"
#include "cipher.h"
#include "sshkey.h"
#include "kex.h"
#include "myproposal.h"
#include "ssh_api.h"
#include "packet.h"
#include "channels.h"
#include "hpn.h"

void tests(void);
void benchmarks(void);

void
benchmarks(void)
{
	printf("no benchmarks\n");
}

static void
poly1305_tests(void)
{
	static const size_t lens[] = { 0, 1, 15, 16, 17, 63, 64, 65, 255,
	    256, 1000, 4096, 32768 + 4 + 16, 32768 + 48, 262144 + 20 };
	u_char key[POLY1305_KEYLEN], a[POLY1305_TAGLEN], b[POLY1305_TAGLEN];
	u_char *m;
	size_t i, n, max = 262144 + 20;
	int rep;

	TEST_START("poly1305: OpenSSL's tag is OpenSSH's, any length");
	m = malloc(max);
	ASSERT_PTR_NE(m, NULL);
	for (rep = 0; rep < 4; rep++) {
		arc4random_buf(m, max);
		arc4random_buf(key, sizeof(key));
		for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			n = lens[i];
			hpn_poly1305_evp_off = 0;
			hpn_poly1305(a, m, n, key);
			poly1305_auth(b, m, n, key);
			ASSERT_MEM_EQ(a, b, sizeof(a));
			/* and the fallback is OpenSSH's own */
			hpn_poly1305_evp_off = 1;
			hpn_poly1305(a, m, n, key);
			ASSERT_MEM_EQ(a, b, sizeof(a));
		}
	}
	hpn_poly1305_evp_off = 0;
	TEST_DONE();

	TEST_START("poly1305: a changed byte or key changes the tag");
	arc4random_buf(m, 1000);
	arc4random_buf(key, sizeof(key));
	hpn_poly1305(a, m, 1000, key);
	m[999] ^= 1;
	hpn_poly1305(b, m, 1000, key);
	ASSERT_MEM_NE(a, b, sizeof(a));
	m[999] ^= 1;
	key[31] ^= 0x80;
	hpn_poly1305(b, m, 1000, key);
	ASSERT_MEM_NE(a, b, sizeof(a));
	TEST_DONE();
	free(m);
}

static int
all_zero(const u_char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != 0)
			return 0;
	return 1;
}

static void
padding_tests(void)
{
	u_char a[300], b[300], c[64];
	int i, p[2], status;
	pid_t pid;

	TEST_START("padding: random bytes, never the same twice");
	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	hpn_packet_padding(a, 255);
	hpn_packet_padding(b, 255);
	ASSERT_INT_EQ(all_zero(a, 255), 0);
	ASSERT_MEM_NE(a, b, 255);
	/* across many refills of the pool, a request larger than it */
	for (i = 0; i < 3 * HPN_PAD_POOL / 255; i++) {
		hpn_packet_padding(b, 4 + i % 252);
		ASSERT_MEM_NE(a, b, 4);
		ASSERT_INT_EQ(all_zero(b, 4), 0);
	}
	hpn_packet_padding(a, 0);
	TEST_DONE();

	TEST_START("padding: a child after fork() draws its own bytes");
	ASSERT_INT_EQ(pipe(p), 0);
	hpn_packet_padding(a, 8);	/* the pool is filled in the parent */
	if ((pid = fork()) == 0) {
		hpn_packet_padding(c, sizeof(c));
		_exit(write(p[1], c, sizeof(c)) == (ssize_t)sizeof(c) ? 0 : 1);
	}
	ASSERT_INT_GT(pid, 0);
	close(p[1]);
	ASSERT_INT_EQ(read(p[0], c, sizeof(c)), (int)sizeof(c));
	close(p[0]);
	ASSERT_INT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_INT_EQ(WIFEXITED(status) && WEXITSTATUS(status) == 0, 1);
	hpn_packet_padding(b, sizeof(c));
	ASSERT_MEM_NE(b, c, sizeof(c));
	TEST_DONE();
}

/* b's storage after d (at most its allocation): wiped? */
static int
wiped(struct sshbuf *b, size_t n)
{
	const u_char *d = sshbuf_ptr(b);

	return all_zero(d, MINIMUM(n, sshbuf_alloc(b)));
}

static void
pktbuf_tests(void)
{
	struct sshbuf *b;
	u_char *p;

	TEST_START("packet buffers: channel data keeps its buffer");
	ASSERT_PTR_NE(b = sshbuf_new(), NULL);
	hpn_packet_out_start(b, SSH2_MSG_CHANNEL_DATA);
	ASSERT_INT_EQ(sshbuf_reserve(b, 32768, &p), 0);
	memset(p, 'd', 32768);
	hpn_packet_out_sent(b, SSH2_MSG_CHANNEL_DATA);
	ASSERT_SIZE_T_EQ(sshbuf_len(b), 0);
	ASSERT_SIZE_T_GE(sshbuf_alloc(b), 32768);
	hpn_packet_out_start(b, SSH2_MSG_CHANNEL_EXTENDED_DATA);
	ASSERT_SIZE_T_EQ(sshbuf_len(b), 0);
	ASSERT_SIZE_T_GE(sshbuf_alloc(b), 32768);
	TEST_DONE();

	TEST_START("packet buffers: any other packet is wiped before and after");
	hpn_packet_out_sent(b, SSH2_MSG_CHANNEL_EXTENDED_DATA);
	hpn_packet_out_start(b, SSH2_MSG_USERAUTH_REQUEST);
	ASSERT_SIZE_T_EQ(sshbuf_alloc(b), 256);
	ASSERT_INT_EQ(wiped(b, 256), 1);
	ASSERT_INT_EQ(sshbuf_put(b, "password", 8), 0);
	hpn_packet_out_sent(b, SSH2_MSG_USERAUTH_REQUEST);
	ASSERT_SIZE_T_EQ(sshbuf_len(b), 0);
	ASSERT_INT_EQ(wiped(b, 256), 1);
	/* a data packet after it: the buffer holds nothing else */
	hpn_packet_out_start(b, SSH2_MSG_CHANNEL_DATA);
	ASSERT_INT_EQ(sshbuf_reserve(b, 65536, &p), 0);
	memset(p, 'd', 65536);
	hpn_packet_out_sent(b, SSH2_MSG_CHANNEL_DATA);
	/* a request started in it wipes the data too */
	hpn_packet_out_start(b, SSH2_MSG_CHANNEL_REQUEST);
	ASSERT_SIZE_T_EQ(sshbuf_alloc(b), 256);
	ASSERT_INT_EQ(wiped(b, 256), 1);
	TEST_DONE();

	TEST_START("packet buffers: an unsent packet is dropped, wiped");
	ASSERT_INT_EQ(sshbuf_put(b, "secret", 6), 0);
	hpn_packet_out_start(b, SSH2_MSG_CHANNEL_DATA);
	ASSERT_SIZE_T_EQ(sshbuf_len(b), 0);
	ASSERT_INT_EQ(wiped(b, 256), 1);
	sshbuf_free(b);
	TEST_DONE();

	TEST_START("packet buffers: incoming, kept after data only");
	ASSERT_PTR_NE(b = sshbuf_new(), NULL);
	hpn_packet_in_reset(b);
	ASSERT_INT_EQ(sshbuf_reserve(b, 32768, &p), 0);
	memset(p, 'd', 32768);
	hpn_packet_in_type(b, SSH2_MSG_CHANNEL_DATA);
	hpn_packet_in_reset(b);
	ASSERT_SIZE_T_EQ(sshbuf_len(b), 0);
	ASSERT_SIZE_T_GE(sshbuf_alloc(b), 32768);
	ASSERT_INT_EQ(sshbuf_put(b, "password", 8), 0);
	hpn_packet_in_type(b, SSH2_MSG_USERAUTH_REQUEST);
	hpn_packet_in_reset(b);
	ASSERT_SIZE_T_EQ(sshbuf_alloc(b), 256);
	ASSERT_INT_EQ(wiped(b, 256), 1);
	/* another buffer's type says nothing about this one */
	ASSERT_INT_EQ(sshbuf_put(b, "password", 8), 0);
	hpn_packet_in_type((struct sshbuf *)&p, SSH2_MSG_CHANNEL_DATA);
	hpn_packet_in_reset(b);
	ASSERT_INT_EQ(wiped(b, 256), 1);
	sshbuf_free(b);
	TEST_DONE();
}

/* The pieces of one plaintext, encrypted, against it whole. */
static void
parts_case(const char *name, u_int keylen, u_int ivlen)
{
	const struct sshcipher *c = cipher_by_name(name);
	struct sshcipher_ctx *a = NULL, *b = NULL;
	struct hpn_part part[4];
	u_char key[64], iv[32], *src, *da, *db;
	u_int authlen, bs, total, cut1, cut2, cut3, rep, seqnr;

	ASSERT_PTR_NE(c, NULL);
	authlen = cipher_authlen(c);
	bs = cipher_blocksize(c);
	arc4random_buf(key, sizeof(key));
	arc4random_buf(iv, sizeof(iv));
	ASSERT_INT_EQ(cipher_init(&a, c, key, keylen, iv, ivlen, 1), 0);
	ASSERT_INT_EQ(cipher_init(&b, c, key, keylen, iv, ivlen, 1), 0);
	ASSERT_INT_EQ(cipher_parts_ok(a), 1);
	src = malloc(70000);
	da = malloc(70000 + 64);
	db = malloc(70000 + 64);
	ASSERT_PTR_NE(src, NULL);
	for (rep = 0, seqnr = 7; rep < 200; rep++, seqnr++) {
		/* 4 bytes of length, then whole blocks */
		total = 4 + bs * (1 + arc4random_uniform(65536 / bs));
		arc4random_buf(src, total);
		cut1 = 4 + arc4random_uniform(total - 3);
		cut2 = cut1 + arc4random_uniform(total - cut1 + 1);
		cut3 = cut2 + arc4random_uniform(total - cut2 + 1);
		part[0].p = src;
		part[0].len = cut1;
		part[1].p = src + cut1;
		part[1].len = cut2 - cut1;
		part[2].p = src + cut2;
		part[2].len = cut3 - cut2;
		part[3].p = src + cut3;
		part[3].len = total - cut3;
		ASSERT_INT_EQ(cipher_crypt_parts(a, seqnr, da, part, 4, 4,
		    authlen), 0);
		ASSERT_INT_EQ(cipher_crypt(b, seqnr, db, src, total - 4, 4,
		    authlen), 0);
		ASSERT_MEM_EQ(da, db, total + authlen);
	}
	/* not for decryption, nor with a wrong tag length */
	cipher_free(b);
	b = NULL;
	ASSERT_INT_EQ(cipher_init(&b, c, key, keylen, iv, ivlen, 0), 0);
	ASSERT_INT_EQ(cipher_parts_ok(b), 0);
	ASSERT_INT_NE(cipher_crypt_parts(b, 1, da, part, 4, 4, authlen), 0);
	ASSERT_INT_NE(cipher_crypt_parts(a, 1, da, part, 4, 4, authlen + 1), 0);
	cipher_free(a);
	cipher_free(b);
	free(src);
	free(da);
	free(db);
}

static void
parts_tests(void)
{
	const struct sshcipher *c;
	struct sshcipher_ctx *cc = NULL;
	u_char key[64], iv[32];

	TEST_START("cipher parts: aes128-gcm, pieces as one");
	parts_case("aes128-gcm@openssh.com", 16, 12);
	TEST_DONE();
	TEST_START("cipher parts: aes256-gcm, pieces as one");
	parts_case("aes256-gcm@openssh.com", 32, 12);
	TEST_DONE();
	TEST_START("cipher parts: chacha20-poly1305, pieces as one");
	parts_case("chacha20-poly1305@openssh.com", 64, 0);
	TEST_DONE();

	TEST_START("cipher parts: not for ciphers with a separate MAC");
	memset(key, 1, sizeof(key));
	memset(iv, 2, sizeof(iv));
	ASSERT_PTR_NE(c = cipher_by_name("aes128-ctr"), NULL);
	ASSERT_INT_EQ(cipher_init(&cc, c, key, 16, iv, 16, 1), 0);
	ASSERT_INT_EQ(cipher_parts_ok(cc), 0);
	cipher_free(cc);
	TEST_DONE();
}

/* Move what from has to send to to's input; 0 or an ssherr. */
static int
transfer(struct ssh *from, struct ssh *to)
{
	const u_char *p;
	size_t len;
	int r;

	p = ssh_output_ptr(from, &len);
	if (len == 0)
		return 0;
	if ((r = ssh_input_append(to, p, len)) != 0)
		return r;
	return ssh_output_consume(from, len);
}

/* The next packet other than IGNORE (ssh_packet_next() passes them on). */
static u_char
next_type(struct ssh *ssh)
{
	u_char type = 0;
	int i;

	for (i = 0; i < 4; i++) {
		ASSERT_INT_EQ(ssh_packet_next(ssh, &type), 0);
		if (type != SSH2_MSG_IGNORE)
			break;
	}
	return type;
}

static void
run_kex(struct ssh *client, struct ssh *server)
{
	u_char type;
	int i;

	for (i = 0; i < 100 && (!server->kex->done || !client->kex->done);
	    i++) {
		ASSERT_INT_EQ(ssh_packet_next(server, &type), 0);
		ASSERT_INT_EQ(transfer(server, client), 0);
		ASSERT_INT_EQ(ssh_packet_next(client, &type), 0);
		ASSERT_INT_EQ(transfer(client, server), 0);
	}
	ASSERT_INT_EQ(server->kex->done, 1);
	ASSERT_INT_EQ(client->kex->done, 1);
}

/* A client and a server through key exchange, both authenticated. */
static void
keyed_pair(const char *cipher, const char *mac, struct ssh **clientp,
    struct ssh **serverp, struct sshkey **keyp, struct sshkey **pubp)
{
	struct kex_params params;
	char *prop[PROPOSAL_MAX] = { KEX_CLIENT };

	ASSERT_INT_EQ(sshkey_generate(KEY_ED25519, 0, keyp), 0);
	ASSERT_INT_EQ(sshkey_from_private(*keyp, pubp), 0);
	memcpy(params.proposal, prop, sizeof(prop));
	params.proposal[PROPOSAL_KEX_ALGS] = "curve25519-sha256";
	params.proposal[PROPOSAL_ENC_ALGS_CTOS] = (char *)cipher;
	params.proposal[PROPOSAL_ENC_ALGS_STOC] = (char *)cipher;
	params.proposal[PROPOSAL_MAC_ALGS_CTOS] = (char *)mac;
	params.proposal[PROPOSAL_MAC_ALGS_STOC] = (char *)mac;
	params.proposal[PROPOSAL_SERVER_HOST_KEY_ALGS] = "ssh-ed25519";
	ASSERT_INT_EQ(ssh_init(clientp, 0, &params), 0);
	ASSERT_INT_EQ(ssh_init(serverp, 1, &params), 0);
	ASSERT_INT_EQ(ssh_add_hostkey(*serverp, *keyp), 0);
	ASSERT_INT_EQ(ssh_add_hostkey(*clientp, *pubp), 0);
	run_kex(*clientp, *serverp);
	ssh_packet_set_authenticated(*clientp);
	ssh_packet_set_authenticated(*serverp);
}

/*
 * A channel data packet from ssh_packet_send_data() is, byte for byte, the
 * one sshpkt_*() make of the same data (padding made the same), and the
 * far end reads it back.
 */
static void
direct_case(const char *cipher, const char *mac, int direct)
{
	static const size_t lens[] = { 0, 1, 3, 4, 5, 15, 16, 17, 31, 32, 33,
	    1000, 16384, 32768, 65536, 100000, 262144 - 1024 };
	struct ssh *client = NULL, *client2 = NULL, *server = NULL;
	struct sshkey *key = NULL, *pub = NULL;
	struct sshbuf *state, *copy;
	const u_char *pa, *pb, *got;
	u_char *data;
	size_t la, lb, glen, i;
	u_int32_t id;
	u_int64_t before;

	keyed_pair(cipher, mac, &client, &server, &key, &pub);
	/*
	 * Two clients in the first one's state: one sends the direct way,
	 * the other the old way.  (Getting the state steps the first one's
	 * AES-GCM IV: it is not used after.)
	 */
	ASSERT_PTR_NE(state = sshbuf_new(), NULL);
	ASSERT_INT_EQ(ssh_packet_get_state(client, state), 0);
	ASSERT_PTR_NE(copy = sshbuf_new(), NULL);
	ASSERT_INT_EQ(sshbuf_putb(copy, state), 0);
	ssh_free(client);
	client = NULL;
	ASSERT_INT_EQ(ssh_init(&client, 0, NULL), 0);
	ASSERT_INT_EQ(ssh_packet_set_state(client, state), 0);
	ASSERT_INT_EQ(ssh_init(&client2, 0, NULL), 0);
	ASSERT_INT_EQ(ssh_packet_set_state(client2, copy), 0);
	sshbuf_free(state);
	sshbuf_free(copy);
	ssh_packet_set_authenticated(client);
	ssh_packet_set_authenticated(client2);

	ASSERT_PTR_NE(data = malloc(262144), NULL);
	arc4random_buf(data, 262144);
	hpn_pad_test_fixed = 1;
	/* the two clients are alike: an IGNORE of each, the same bytes */
	ASSERT_INT_EQ(sshpkt_start(client, SSH2_MSG_IGNORE), 0);
	ASSERT_INT_EQ(sshpkt_put_cstring(client, "same"), 0);
	ASSERT_INT_EQ(sshpkt_send(client), 0);
	ASSERT_INT_EQ(sshpkt_start(client2, SSH2_MSG_IGNORE), 0);
	ASSERT_INT_EQ(sshpkt_put_cstring(client2, "same"), 0);
	ASSERT_INT_EQ(sshpkt_send(client2), 0);
	pa = ssh_output_ptr(client, &la);
	pb = ssh_output_ptr(client2, &lb);
	ASSERT_SIZE_T_EQ(la, lb);
	ASSERT_MEM_EQ(pa, pb, la);
	ASSERT_INT_EQ(ssh_output_consume(client2, lb), 0);
	ASSERT_INT_EQ(transfer(client, server), 0);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		id = 0x01020304 + i;
		before = hpn_data_direct;
		ASSERT_INT_EQ(ssh_packet_send_data(client, id, data, lens[i]), 0);
		ASSERT_U64_EQ(hpn_data_direct - before, direct ? 1 : 0);
		ASSERT_INT_EQ(sshpkt_start(client2, SSH2_MSG_CHANNEL_DATA), 0);
		ASSERT_INT_EQ(sshpkt_put_u32(client2, id), 0);
		ASSERT_INT_EQ(sshpkt_put_string(client2, data, lens[i]), 0);
		ASSERT_INT_EQ(sshpkt_send(client2), 0);
		pa = ssh_output_ptr(client, &la);
		pb = ssh_output_ptr(client2, &lb);
		ASSERT_SIZE_T_EQ(la, lb);
		ASSERT_MEM_EQ(pa, pb, la);
		ASSERT_INT_EQ(ssh_output_consume(client2, lb), 0);
		ASSERT_INT_EQ(transfer(client, server), 0);
		ASSERT_U_INT_EQ(next_type(server), SSH2_MSG_CHANNEL_DATA);
		ASSERT_INT_EQ(sshpkt_get_u32(server, &id), 0);
		ASSERT_U_INT_EQ(id, 0x01020304 + i);
		ASSERT_INT_EQ(sshpkt_get_string_direct(server, &got, &glen), 0);
		ASSERT_SIZE_T_EQ(glen, lens[i]);
		if (glen > 0)
			ASSERT_MEM_EQ(got, data, glen);
		ASSERT_INT_EQ(sshpkt_get_end(server), 0);
	}
	/* a packet of another kind between them: the stream stays whole */
	ASSERT_INT_EQ(sshpkt_start(client, SSH2_MSG_IGNORE), 0);
	ASSERT_INT_EQ(sshpkt_put_cstring(client, "x"), 0);
	ASSERT_INT_EQ(sshpkt_send(client), 0);
	ASSERT_INT_EQ(ssh_packet_send_data(client, 9, data, 77), 0);
	ASSERT_INT_EQ(transfer(client, server), 0);
	ASSERT_U_INT_EQ(next_type(server), SSH2_MSG_CHANNEL_DATA);
	ASSERT_INT_EQ(sshpkt_get_u32(server, &id), 0);
	ASSERT_U_INT_EQ(id, 9);
	hpn_pad_test_fixed = 0;
	free(data);
	ssh_free(client);
	ssh_free(client2);
	ssh_free(server);
	sshkey_free(key);
	sshkey_free(pub);
}

static void
direct_tests(void)
{
	TEST_START("data packets: aes128-gcm, direct = sshpkt");
	direct_case("aes128-gcm@openssh.com", "hmac-sha2-256", 1);
	TEST_DONE();
	TEST_START("data packets: chacha20-poly1305, direct = sshpkt");
	direct_case("chacha20-poly1305@openssh.com", "hmac-sha2-256", 1);
	TEST_DONE();
	TEST_START("data packets: aes128-ctr + MAC go the old way");
	direct_case("aes128-ctr", "hmac-sha2-256", 0);
	TEST_DONE();
	TEST_START("data packets: aes128-ctr + EtM MAC go the old way");
	direct_case("aes128-ctr", "hmac-sha2-256-etm@openssh.com", 0);
	TEST_DONE();
}

/*
 * Channel data opened straight into its channel's buffer (hpn-recvfast):
 * the bytes the channel gets, its window, and every case that must go the
 * old way (through incoming_packet to the caller) or fail whole.
 */
/*
 * keyed_pair(), and on the server the channels that opened_case() sends
 * to: an open one (returned) and, when c2p is set, one not yet open.
 */
static Channel *
opened_setup(const char *cipher, const char *mac, struct ssh **clientp,
    struct ssh **serverp, struct sshkey **keyp, struct sshkey **pubp,
    Channel **c2p)
{
	Channel *c;

	keyed_pair(cipher, mac, clientp, serverp, keyp, pubp);
	channel_init_channels(*serverp);
	ssh_dispatch_set(*serverp, SSH2_MSG_CHANNEL_DATA,
	    &channel_input_data);
	ASSERT_PTR_NE(c = channel_new(*serverp, "test", SSH_CHANNEL_OPEN,
	    -1, -1, -1, 1024 * 1024, 32768, CHAN_EXTENDED_IGNORE, "test",
	    1), NULL);
	if (c2p != NULL)
		ASSERT_PTR_NE(*c2p = channel_new(*serverp, "test2",
		    SSH_CHANNEL_OPENING, -1, -1, -1, 1024 * 1024, 32768,
		    CHAN_EXTENDED_IGNORE, "test2", 1), NULL);
	return c;
}

static void
opened_case(const char *cipher, const char *mac, int direct)
{
	static const size_t lens[] = { 0, 1, 3, 15, 16, 17, 1000, 16384,
	    32768 };
	struct ssh *client = NULL, *server = NULL;
	struct sshkey *key = NULL, *pub = NULL;
	struct sshbuf *want;
	Channel *c, *c2;
	const u_char *p, *got;
	u_char *data, *bad, type;
	size_t i, len, glen, before_len;
	u_int32_t id, win;
	u_int64_t before;

	/* a second channel, c2, not open: its data goes the old way */
	c = opened_setup(cipher, mac, &client, &server, &key, &pub, &c2);
	ASSERT_PTR_NE(data = malloc(65536), NULL);
	arc4random_buf(data, 65536);
	ASSERT_PTR_NE(want = sshbuf_new(), NULL);

	/* a run of data packets: all in the channel, nothing to dispatch */
	before = hpn_data_opened;
	win = c->local_window;
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		ASSERT_INT_EQ(ssh_packet_send_data(client, c->self, data,
		    lens[i]), 0);
		ASSERT_INT_EQ(sshbuf_put(want, data, lens[i]), 0);
	}
	ASSERT_INT_EQ(transfer(client, server), 0);
	ASSERT_INT_EQ(ssh_packet_next(server, &type), 0);
	if (direct) {
		ASSERT_U_INT_EQ(type, SSH_MSG_NONE);
		ASSERT_U64_EQ(hpn_data_opened - before,
		    sizeof(lens) / sizeof(lens[0]));
		ASSERT_SIZE_T_EQ(sshbuf_len(c->output), sshbuf_len(want));
		ASSERT_MEM_EQ(sshbuf_ptr(c->output), sshbuf_ptr(want),
		    sshbuf_len(want));
		ASSERT_U_INT_EQ(c->local_window, win - sshbuf_len(want));
		ASSERT_U64_EQ(c->hpn_rx, sshbuf_len(want));
	} else {
		/* the old way: each packet to the caller, nothing opened */
		ASSERT_U_INT_EQ(type, SSH2_MSG_CHANNEL_DATA);
		ASSERT_U64_EQ(hpn_data_opened, before);
		ASSERT_SIZE_T_EQ(sshbuf_len(c->output), 0);
		for (i = 1; i < sizeof(lens) / sizeof(lens[0]); i++)
			ASSERT_U_INT_EQ(next_type(server),
			    SSH2_MSG_CHANNEL_DATA);
		ASSERT_INT_EQ(ssh_packet_next(server, &type), 0);
		ASSERT_U_INT_EQ(type, SSH_MSG_NONE);
		goto done;
	}

	/*
	 * Between data packets: another message (returned in its place, the
	 * data before it already in), data for a channel not open, for one
	 * that does not exist, more than the window: each returned as
	 * upstream returns it, whole.
	 */
	sshbuf_reset(c->output);
	ASSERT_INT_EQ(ssh_packet_send_data(client, c->self, data, 100), 0);
	ASSERT_INT_EQ(sshpkt_start(client, SSH2_MSG_CHANNEL_EOF), 0);
	ASSERT_INT_EQ(sshpkt_put_u32(client, c->self), 0);
	ASSERT_INT_EQ(sshpkt_send(client), 0);
	ASSERT_INT_EQ(ssh_packet_send_data(client, c2->self, data, 200), 0);
	ASSERT_INT_EQ(ssh_packet_send_data(client, 4242, data, 300), 0);
	c->local_window = 500;		/* the 100 above are read after this */
	ASSERT_INT_EQ(ssh_packet_send_data(client, c->self, data, 501), 0);
	ASSERT_INT_EQ(ssh_packet_send_data(client, c->self, data + 1, 400), 0);
	ASSERT_INT_EQ(transfer(client, server), 0);
	ASSERT_U_INT_EQ(next_type(server), SSH2_MSG_CHANNEL_EOF);
	ASSERT_SIZE_T_EQ(sshbuf_len(c->output), 100);
	ASSERT_MEM_EQ(sshbuf_ptr(c->output), data, 100);
	ASSERT_INT_EQ(sshpkt_get_u32(server, &id), 0);
	ASSERT_U_INT_EQ(id, c->self);
	for (i = 0; i < 3; i++) {
		ASSERT_U_INT_EQ(next_type(server), SSH2_MSG_CHANNEL_DATA);
		ASSERT_INT_EQ(sshpkt_get_u32(server, &id), 0);
		ASSERT_U_INT_EQ(id, i == 0 ? (u_int)c2->self :
		    i == 1 ? 4242 : (u_int)c->self);
		ASSERT_INT_EQ(sshpkt_get_string_direct(server, &got, &glen), 0);
		ASSERT_SIZE_T_EQ(glen, i == 0 ? 200 : i == 1 ? 300 : 501);
		ASSERT_MEM_EQ(got, data, glen);
		ASSERT_INT_EQ(sshpkt_get_end(server), 0);
	}
	/* the channel itself was not touched by them; the last one opened */
	ASSERT_INT_EQ(ssh_packet_next(server, &type), 0);
	ASSERT_U_INT_EQ(type, SSH_MSG_NONE);
	ASSERT_SIZE_T_EQ(sshbuf_len(c->output), 500);
	ASSERT_MEM_EQ(sshbuf_ptr(c->output) + 100, data + 1, 400);
	/* the window: 500 less the 100 before the EOF and these 400 */
	ASSERT_U_INT_EQ(c->local_window, 0);

	/* a flipped bit anywhere in a data packet: an error, nothing kept */
	c->local_window = 1024 * 1024;
	for (i = 0; i < 4; i++) {
		sshbuf_reset(c->output);
		ASSERT_INT_EQ(sshbuf_put(c->output, "x", 1), 0);
		ASSERT_INT_EQ(ssh_packet_send_data(client, c->self, data,
		    1000), 0);
		p = ssh_output_ptr(client, &len);
		ASSERT_PTR_NE(bad = malloc(len), NULL);
		memcpy(bad, p, len);
		/* in the header, the data, the padding, the tag */
		bad[i == 0 ? 6 : i == 1 ? 500 : i == 2 ? len - 20 : len - 1] ^=
		    0x10;
		ASSERT_INT_EQ(ssh_output_consume(client, len), 0);
		ASSERT_INT_EQ(ssh_input_append(server, bad, len), 0);
		free(bad);
		before_len = sshbuf_len(c->output);
		ASSERT_INT_EQ(ssh_packet_next(server, &type),
		    SSH_ERR_MAC_INVALID);
		ASSERT_SIZE_T_EQ(sshbuf_len(c->output), before_len);
		ASSERT_U_INT_EQ(c->local_window, 1024 * 1024);
		/* the connection is dead now: start again for the next */
		channel_free_all(server);
		ssh_free(client);
		ssh_free(server);
		sshkey_free(key);
		sshkey_free(pub);
		client = server = NULL;
		key = pub = NULL;
		c = opened_setup(cipher, mac, &client, &server, &key, &pub,
		    NULL);
	}
 done:
	sshbuf_free(want);
	free(data);
	channel_free_all(server);
	ssh_free(client);
	ssh_free(server);
	sshkey_free(key);
	sshkey_free(pub);
}

static void
opened_tests(void)
{
	TEST_START("data packets: aes128-gcm, opened into the channel");
	opened_case("aes128-gcm@openssh.com", "hmac-sha2-256", 1);
	TEST_DONE();
	TEST_START("data packets: aes256-gcm, opened into the channel");
	opened_case("aes256-gcm@openssh.com", "hmac-sha2-256", 1);
	TEST_DONE();
	TEST_START("data packets: chacha20-poly1305, opened into the channel");
	opened_case("chacha20-poly1305@openssh.com", "hmac-sha2-256", 1);
	TEST_DONE();
	TEST_START("data packets: aes128-ctr + EtM MAC go the old way");
	opened_case("aes128-ctr", "hmac-sha2-256-etm@openssh.com", 0);
	TEST_DONE();
}

/* window: getsockopt() calls of the window's code, counted */
int __real_getsockopt(int, int, int, void *, socklen_t *);
int __wrap_getsockopt(int, int, int, void *, socklen_t *);
static int win_fd = -1, win_calls;

int
__wrap_getsockopt(int fd, int level, int name, void *v, socklen_t *len)
{
	if (fd == win_fd && win_fd != -1)
		win_calls++;
	return __real_getsockopt(fd, level, name, v, len);
}

/*
 * The window's socket figures (SO_RCVBUF, TCP_INFO) are read at most every
 * HPN_SOCK_SAMPLE however often the loop asks, and again once that passed.
 */
static void
window_tests(void)
{
	struct sockaddr_in sin;
	socklen_t slen = sizeof(sin);
	struct ssh *ssh;
	struct timespec pause = { 0, (long)(HPN_SOCK_SAMPLE * 1.2e9) };
	Channel *c;
	double t0, t1;
	int ls, cs, as, i, calls, due = 0;
	u_int samples;

	TEST_START("window: the socket is read at most every HPN_SOCK_SAMPLE");
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ASSERT_INT_NE(ls = socket(AF_INET, SOCK_STREAM, 0), -1);
	ASSERT_INT_EQ(bind(ls, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ASSERT_INT_EQ(listen(ls, 1), 0);
	ASSERT_INT_EQ(getsockname(ls, (struct sockaddr *)&sin, &slen), 0);
	ASSERT_INT_NE(cs = socket(AF_INET, SOCK_STREAM, 0), -1);
	ASSERT_INT_EQ(connect(cs, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ASSERT_INT_NE(as = accept(ls, NULL, NULL), -1);
	ASSERT_PTR_NE(ssh = ssh_packet_set_connection(NULL, as, as), NULL);
	hpn_window_setup(ssh, 0, 1, 0, HPN_WINDOW_MAX_DEFAULT);
	ASSERT_PTR_NE(c = calloc(1, sizeof(*c)), NULL);
	ASSERT_PTR_NE(c->output = sshbuf_new(), NULL);
	c->local_maxpacket = 32768;
	c->local_window_max = c->hpn_window_start = HPN_WINDOW_GROW_MIN;
	c->local_window = HPN_WINDOW_GROW_MIN / 4;
	c->local_consumed = HPN_WINDOW_GROW_MIN - c->local_window;
	c->hpn_rx = 1000000;
	win_fd = as;
	win_calls = 0;
	t0 = monotime_double();
	for (i = 0; i < 2000; i++)
		due += hpn_window_adjust_due(ssh, c);
	t1 = monotime_double();
	calls = win_calls;
	/* two calls a sample (SO_RCVBUF polled, TCP_INFO), one sample a span */
	samples = 1 + (u_int)((t1 - t0) / HPN_SOCK_SAMPLE);
	/* below its cap: every call asked for a target, none was skipped */
	ASSERT_U_INT_LT(c->local_window_max, HPN_WINDOW_MAX_DEFAULT);
	ASSERT_INT_GE(calls, 1);
	ASSERT_U_INT_LE((u_int)calls, 2 * samples);
	ASSERT_INT_GT(due, 0);
	/* once the span passed: read again */
	nanosleep(&pause, NULL);
	(void)hpn_window_adjust_due(ssh, c);
	ASSERT_INT_GT(win_calls, calls);
	win_fd = -1;
	sshbuf_free(c->output);
	free(c);
	ssh_packet_close(ssh);
	close(cs);
	close(ls);
	TEST_DONE();
}

/* Whether sig is blocked now. */
static int
blocked(int sig)
{
	sigset_t cur;

	ASSERT_INT_EQ(sigprocmask(SIG_BLOCK, NULL, &cur), 0);
	return sigismember(&cur, sig);
}

/*
 * The loop's signals: blocked from hpn_loop_sigblock() to
 * hpn_loop_sigrestore(), ppoll()'s mask the one from before; unblocked
 * around a prompt (pause/resume) and in a child of fork().
 */
static void
loop_tests(void)
{
	sigset_t set, oset, cur;
	int p[2], status;
	char c;
	pid_t pid;

	TEST_START("loop signals: blocked once for the whole loop");
	ASSERT_INT_EQ(blocked(SIGCHLD), 0);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	ASSERT_INT_EQ(hpn_loop_sigblock(&set, &oset, 1), 0);
	ASSERT_INT_EQ(hpn_loop_sigblocked(), 1);
	ASSERT_INT_EQ(blocked(SIGCHLD), 1);
	ASSERT_INT_EQ(blocked(SIGTERM), 1);
	/* the mask to wait with is the one from before */
	ASSERT_INT_EQ(sigismember(&oset, SIGCHLD), 0);
	ASSERT_INT_EQ(sigismember(&oset, SIGTERM), 0);
	TEST_DONE();

	TEST_START("loop signals: a prompt and a child of fork() get them");
	hpn_loop_sigpause();
	ASSERT_INT_EQ(blocked(SIGTERM), 0);
	hpn_loop_sigpause();		/* nested: no change */
	hpn_loop_sigresume();
	ASSERT_INT_EQ(blocked(SIGTERM), 1);
	hpn_loop_sigresume();		/* unmatched: no change */
	ASSERT_INT_EQ(blocked(SIGTERM), 1);
	ASSERT_INT_EQ(pipe(p), 0);
	if ((pid = fork()) == 0) {
		c = (!blocked(SIGCHLD) && !blocked(SIGTERM) &&
		    !hpn_loop_sigblocked()) ? 'y' : 'n';
		_exit(write(p[1], &c, 1) == 1 ? 0 : 1);
	}
	ASSERT_INT_GT(pid, 0);
	close(p[1]);
	ASSERT_INT_EQ(read(p[0], &c, 1), 1);
	close(p[0]);
	ASSERT_INT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_INT_EQ(WIFEXITED(status) && WEXITSTATUS(status) == 0, 1);
	ASSERT_U8_EQ((u_char)c, 'y');
	ASSERT_INT_EQ(blocked(SIGTERM), 1);	/* the parent's stays */
	TEST_DONE();

	TEST_START("loop signals: the mask from before after the loop");
	hpn_loop_sigrestore();
	ASSERT_INT_EQ(hpn_loop_sigblocked(), 0);
	ASSERT_INT_EQ(sigprocmask(SIG_BLOCK, NULL, &cur), 0);
	ASSERT_INT_EQ(sigismember(&cur, SIGCHLD), 0);
	ASSERT_INT_EQ(sigismember(&cur, SIGTERM), 0);
	hpn_loop_sigpause();		/* outside the loop: nothing */
	ASSERT_INT_EQ(blocked(SIGTERM), 0);
	hpn_loop_sigresume();
	ASSERT_INT_EQ(blocked(SIGTERM), 0);
	TEST_DONE();
}


/*
 * Reads of the connection: 256 KiB, twice as much after a full read up to
 * HPN_NET_READ_MAX, less again after one of a quarter or less.
 */
static void
netread_tests(void)
{
	char path[] = "/tmp/hpn-netread.XXXXXX";
	struct sshbuf *b;
	u_char *d;
	size_t got, total = 2 * HPN_NET_READ_MAX + 768 * 1024 + 1000, off;
	int fd;

	TEST_START("net read: grows after full reads, shrinks after short");
	ASSERT_INT_NE(fd = mkstemp(path), -1);
	unlink(path);
	ASSERT_PTR_NE(d = calloc(1, total), NULL);
	for (off = 0; off < total; off++)
		d[off] = (u_char)(off * 7);
	ASSERT_SIZE_T_EQ((size_t)write(fd, d, total), total);
	ASSERT_INT_EQ(lseek(fd, 0, SEEK_SET), 0);
	ASSERT_PTR_NE(b = sshbuf_new(), NULL);
	ASSERT_INT_EQ(hpn_packet_read(fd, b, 256 * 1024, &got), 0);
	ASSERT_SIZE_T_EQ(got, 256 * 1024);
	ASSERT_INT_EQ(hpn_packet_read(fd, b, 256 * 1024, &got), 0);
	ASSERT_SIZE_T_EQ(got, 512 * 1024);
	ASSERT_INT_EQ(hpn_packet_read(fd, b, 256 * 1024, &got), 0);
	ASSERT_SIZE_T_EQ(got, HPN_NET_READ_MAX);
	ASSERT_INT_EQ(hpn_packet_read(fd, b, 256 * 1024, &got), 0);
	ASSERT_SIZE_T_EQ(got, HPN_NET_READ_MAX);	/* no larger */
	/* what is left: 1000 bytes of a 1 MiB read, short */
	ASSERT_INT_EQ(hpn_packet_read(fd, b, 256 * 1024, &got), 0);
	ASSERT_SIZE_T_EQ(got, 1000);
	ASSERT_SIZE_T_EQ(sshbuf_len(b), total);
	ASSERT_MEM_EQ(sshbuf_ptr(b), d, total);
	/* the end of the file: an error, as sshbuf_read() gives */
	ASSERT_INT_EQ(hpn_packet_read(fd, b, 256 * 1024, &got),
	    SSH_ERR_SYSTEM_ERROR);
	ASSERT_SIZE_T_EQ(got, 0);
	/* after the short read: half as much is asked for (512 KiB) */
	ASSERT_INT_EQ(lseek(fd, 0, SEEK_SET), 0);
	sshbuf_reset(b);
	ASSERT_INT_EQ(hpn_packet_read(fd, b, 256 * 1024, &got), 0);
	ASSERT_SIZE_T_EQ(got, 512 * 1024);
	ASSERT_INT_EQ(hpn_packet_read(fd, b, 256 * 1024, &got), 0);
	ASSERT_SIZE_T_EQ(got, HPN_NET_READ_MAX);
	sshbuf_free(b);
	free(d);
	close(fd);
	TEST_DONE();
}

/*
 * hpn_loop_write_now(): packets queued after ppoll() go at once unless
 * ppoll() was asked about the output (it was full then).
 */
static void
writenow_tests(void)
{
	struct ssh *ssh;
	struct pollfd pfd;
	int sp[2];

	TEST_START("loop write: queued after ppoll, written in the same trip");
	ASSERT_INT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	ASSERT_PTR_NE(ssh = ssh_packet_set_connection(NULL, sp[0], sp[0]),
	    NULL);
	memset(&pfd, 0, sizeof(pfd));
	pfd.fd = sp[0];
	ASSERT_INT_EQ(hpn_loop_write_now(ssh, &pfd), 0);	/* nothing */
	ASSERT_INT_EQ(sshpkt_start(ssh, SSH2_MSG_IGNORE), 0);
	ASSERT_INT_EQ(sshpkt_put_cstring(ssh, "x"), 0);
	ASSERT_INT_EQ(sshpkt_send(ssh), 0);
	ASSERT_INT_EQ(ssh_packet_have_data_to_write(ssh), 1);
	ASSERT_INT_EQ(hpn_loop_write_now(ssh, &pfd), 1);
	/* ppoll() was asked and did not say writable: wait for it */
	pfd.events = POLLOUT;
	ASSERT_INT_EQ(hpn_loop_write_now(ssh, &pfd), 0);
	ASSERT_INT_EQ(hpn_loop_write_now(ssh, NULL), 0);
	ssh_packet_close(ssh);
	close(sp[1]);
	TEST_DONE();
}

void
tests(void)
{
	padding_tests();
	pktbuf_tests();
	poly1305_tests();
	parts_tests();
	direct_tests();
	opened_tests();
	window_tests();
	loop_tests();
	netread_tests();
	writenow_tests();
}
