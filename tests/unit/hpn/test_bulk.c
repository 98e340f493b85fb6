/*
 * Unit tests of the HPN patch set's per-byte work in bulk transfers
 * (issue 32): one function of tests for each change, called by tests().
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/wait.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

void
tests(void)
{
	padding_tests();
	pktbuf_tests();
	poly1305_tests();
}
