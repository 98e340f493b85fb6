/*
 * Unit test of our fix to ssh_packet_set_connection(): when cipher_init()
 * fails (only an allocation failure can make it fail for the null cipher)
 * a caller's ssh is left to the caller.  cipher_init() is made to fail on
 * demand through the linker (-Wl,--wrap=cipher_init).  Without the fix the
 * caller's ssh is freed and the ssh_packet_free() below frees it again.
 *
 * And of privsep-state-checks.patch: ssh_packet_set_state() refuses a
 * transport state (as sshd-auth hands it to sshd-session) that no key
 * exchange makes.  The stock tree's packet.c accepts every one of these
 * blobs, and dies of SIGFPE on the block size of 0.
 * Placed in the Public Domain.
 */

#include "includes.h"

#include <sys/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_helper.h"

#include "ssherr.h"
#include "sshbuf.h"
#include "cipher.h"
#include "sshkey.h"
#include "kex.h"
#include "packet.h"

int	__real_cipher_init(struct sshcipher_ctx **, const struct sshcipher *,
    const u_char *, u_int, const u_char *, u_int, int);
int	__wrap_cipher_init(struct sshcipher_ctx **, const struct sshcipher *,
    const u_char *, u_int, const u_char *, u_int, int);

static int fail_cipher_init;
static int cipher_init_calls;

int
__wrap_cipher_init(struct sshcipher_ctx **ccp, const struct sshcipher *cipher,
    const u_char *key, u_int keylen, const u_char *iv, u_int ivlen, int do_encrypt)
{
	cipher_init_calls++;
	if (fail_cipher_init)
		return SSH_ERR_ALLOC_FAIL;
	return __real_cipher_init(ccp, cipher, key, keylen, iv, ivlen,
	    do_encrypt);
}

void benchmarks(void);
void
benchmarks(void)
{
	printf("no benchmarks\n");
}

/* One direction's keys, as newkeys_to_blob() writes them. */
static void
put_newkeys(struct sshbuf *m, const char *cipher, u_int blocksize,
    size_t keylen, size_t ivlen, const char *mac, size_t maclen)
{
	struct sshbuf *b;
	u_char buf[256];

	memset(buf, 0x5a, sizeof(buf));
	ASSERT_PTR_NE(b = sshbuf_new(), NULL);
	ASSERT_INT_EQ(sshbuf_put_cstring(b, cipher), 0);
	ASSERT_INT_EQ(sshbuf_put_u32(b, 1), 0);
	ASSERT_INT_EQ(sshbuf_put_u32(b, blocksize), 0);
	ASSERT_INT_EQ(sshbuf_put_string(b, buf, keylen), 0);
	ASSERT_INT_EQ(sshbuf_put_string(b, buf, ivlen), 0);
	if (mac != NULL) {	/* NULL: an AEAD cipher, no MAC */
		ASSERT_INT_EQ(sshbuf_put_cstring(b, mac), 0);
		ASSERT_INT_EQ(sshbuf_put_u32(b, 1), 0);
		ASSERT_INT_EQ(sshbuf_put_string(b, buf, maclen), 0);
	}
	ASSERT_INT_EQ(sshbuf_put_u32(b, 0), 0);		/* no compression */
	ASSERT_INT_EQ(sshbuf_put_cstring(b, "none"), 0);
	ASSERT_INT_EQ(sshbuf_put_stringb(m, b), 0);
	sshbuf_free(b);
}

/*
 * A whole state, as ssh_packet_get_state() writes it, both directions
 * alike; then ssh_packet_set_state()'s result on a new connection.
 */
static int
set_state(u_int we_need, const char *cipher, u_int blocksize, size_t keylen,
    size_t ivlen, const char *mac, size_t maclen)
{
	struct sshbuf *m;
	struct ssh *ssh;
	u_char sid[32];
	int i, r;

	memset(sid, 0x33, sizeof(sid));
	ASSERT_PTR_NE(m = sshbuf_new(), NULL);
	/* kex_to_blob() */
	ASSERT_INT_EQ(sshbuf_put_u32(m, we_need), 0);
	ASSERT_INT_EQ(sshbuf_put_cstring(m, "ssh-ed25519"), 0);
	ASSERT_INT_EQ(sshbuf_put_u32(m, KEY_ED25519), 0);
	ASSERT_INT_EQ(sshbuf_put_u32(m, 0), 0);		/* nid */
	ASSERT_INT_EQ(sshbuf_put_u32(m, KEX_C25519_SHA256), 0);
	ASSERT_INT_EQ(sshbuf_put_u32(m, 1), 0);		/* strict */
	ASSERT_INT_EQ(sshbuf_put_string(m, NULL, 0), 0);	/* my */
	ASSERT_INT_EQ(sshbuf_put_string(m, NULL, 0), 0);	/* peer */
	ASSERT_INT_EQ(sshbuf_put_cstring(m, "SSH-2.0-client"), 0);
	ASSERT_INT_EQ(sshbuf_put_cstring(m, "SSH-2.0-server"), 0);
	ASSERT_INT_EQ(sshbuf_put_string(m, sid, sizeof(sid)), 0);
	ASSERT_INT_EQ(sshbuf_put_u32(m, 0), 0);		/* flags */
	for (i = 0; i < 2; i++)
		put_newkeys(m, cipher, blocksize, keylen, ivlen, mac, maclen);
	ASSERT_INT_EQ(sshbuf_put_u64(m, 0), 0);		/* rekey limit */
	ASSERT_INT_EQ(sshbuf_put_u32(m, 0), 0);		/* interval */
	for (i = 0; i < 2; i++) {		/* p_send, p_read */
		ASSERT_INT_EQ(sshbuf_put_u32(m, 3), 0);
		ASSERT_INT_EQ(sshbuf_put_u64(m, 10), 0);
		ASSERT_INT_EQ(sshbuf_put_u32(m, 3), 0);
		ASSERT_INT_EQ(sshbuf_put_u64(m, 160), 0);
	}
	ASSERT_INT_EQ(sshbuf_put_string(m, NULL, 0), 0);	/* input */
	ASSERT_INT_EQ(sshbuf_put_string(m, NULL, 0), 0);	/* output */
	for (i = 0; i < 3; i++)		/* interactive, the two QoS */
		ASSERT_INT_EQ(sshbuf_put_u32(m, 0), 0);

	ASSERT_PTR_NE(ssh = ssh_packet_set_connection(NULL, -1, -1), NULL);
	r = ssh_packet_set_state(ssh, m);
	ssh_packet_free(ssh);
	sshbuf_free(m);
	return r;
}

static void
state_tests(void)
{
	TEST_START("packet: set_state takes what a key exchange makes");
	ASSERT_INT_EQ(set_state(32, "aes128-ctr", 16, 16, 16,
	    "hmac-sha2-256", 32), 0);
	ASSERT_INT_EQ(set_state(64, "aes256-gcm@openssh.com", 16, 32, 12,
	    NULL, 0), 0);
	TEST_DONE();

	TEST_START("packet: set_state refuses a short MAC key");
	ASSERT_INT_EQ(set_state(32, "aes128-ctr", 16, 16, 16,
	    "hmac-sha2-256", 16), SSH_ERR_INVALID_FORMAT);
	TEST_DONE();

	TEST_START("packet: set_state refuses the cipher none");
	ASSERT_INT_EQ(set_state(32, "none", 8, 0, 8,
	    "hmac-sha2-256", 32), SSH_ERR_INVALID_FORMAT);
	TEST_DONE();

	TEST_START("packet: set_state refuses a key or IV not the cipher's");
	ASSERT_INT_EQ(set_state(32, "aes128-ctr", 16, 32, 16,
	    "hmac-sha2-256", 32), SSH_ERR_INVALID_FORMAT);
	ASSERT_INT_EQ(set_state(32, "aes128-ctr", 16, 16, 32,
	    "hmac-sha2-256", 32), SSH_ERR_INVALID_FORMAT);
	TEST_DONE();

	TEST_START("packet: set_state refuses an absurd we_need");
	ASSERT_INT_EQ(set_state(1000000, "aes128-ctr", 16, 16, 16,
	    "hmac-sha2-256", 32), SSH_ERR_INVALID_FORMAT);
	TEST_DONE();

	TEST_START("packet: set_state refuses a block size not the cipher's");
	ASSERT_INT_EQ(set_state(32, "aes128-ctr", 8, 16, 16,
	    "hmac-sha2-256", 32), SSH_ERR_INVALID_FORMAT);
	/* the stock code divides by it: SIGFPE */
	ASSERT_INT_EQ(set_state(32, "aes128-ctr", 0, 16, 16,
	    "hmac-sha2-256", 32), SSH_ERR_INVALID_FORMAT);
	TEST_DONE();
}

void tests(void);
void
tests(void)
{
	struct ssh *ssh;

	TEST_START("packet: set_connection keeps a caller's ssh on failure");
	ssh = ssh_packet_set_connection(NULL, -1, -1);
	ASSERT_PTR_NE(ssh, NULL);
	ASSERT_INT_EQ(cipher_init_calls, 2);
	fail_cipher_init = 1;
	ASSERT_PTR_EQ(ssh_packet_set_connection(ssh, -1, -1), NULL);
	fail_cipher_init = 0;
	ASSERT_INT_EQ(cipher_init_calls, 3);
	/* Still the caller's: usable, and freed once, by the caller. */
	ASSERT_INT_EQ(ssh_packet_get_connection_in(ssh), -1);
	ssh_packet_free(ssh);
	TEST_DONE();

	TEST_START("packet: set_connection frees its own ssh on failure");
	fail_cipher_init = 1;
	ASSERT_PTR_EQ(ssh_packet_set_connection(NULL, -1, -1), NULL);
	fail_cipher_init = 0;
	TEST_DONE();

	state_tests();
}
