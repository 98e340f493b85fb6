/*
 * Unit test of our fix to ssh_packet_set_connection(): when cipher_init()
 * fails (only an allocation failure can make it fail for the null cipher)
 * a caller's ssh is left to the caller.  cipher_init() is made to fail on
 * demand through the linker (-Wl,--wrap=cipher_init).  Without the fix the
 * caller's ssh is freed and the ssh_packet_free() below frees it again.
 * Placed in the Public Domain.
 */

#include "includes.h"

#include <sys/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_helper.h"

#include "ssherr.h"
#include "cipher.h"
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
}
