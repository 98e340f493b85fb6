/*
 * Unit test of a build without libxxhash: hpn-sftp-hash.c and
 * hpn-options.c compiled again without HPN_WITH_XXHASH (this directory's
 * Makefile does not read the tree's hpn-hash.mk) and linked ahead of
 * libssh.a's, without -lxxhash.  Verified resume then offers and answers
 * SHA-256 and BLAKE2b-512 only: a client's list naming xxh128 first falls
 * back to the next, xxh128 alone is "no algorithm in common", and
 * ResumeHash xxh128 is refused with the reason.
 * Placed in the Public Domain.
 */

#include "includes.h"

#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_helper.h"

#include "sshbuf.h"
#include "sftp.h"
#include "hpn.h"

void benchmarks(void);
void
benchmarks(void)
{
	printf("no benchmarks\n");
}

/* The algorithm of the server's answer to a request naming algs. */
static u_int
answer(int fd, const char *algs, char **alg)
{
	struct sshbuf *req, *msg;
	u_char type;
	u_int32_t id;
	u_int ret;

	*alg = NULL;
	ASSERT_PTR_NE(req = sshbuf_new(), NULL);
	ASSERT_PTR_NE(msg = sshbuf_new(), NULL);
	ASSERT_INT_EQ(sshbuf_put_cstring(req, algs), 0);
	ASSERT_INT_EQ(sshbuf_put_u64(req, 0), 0);
	ASSERT_INT_EQ(sshbuf_put_u64(req, 5), 0);
	ASSERT_INT_EQ(sshbuf_put_u32(req, 0), 0);
	ret = hpn_hash_range_reply(req, fd, "f", 9, msg);
	if (ret == SSH2_FX_OK) {
		ASSERT_INT_EQ(sshbuf_get_u8(msg, &type), 0);
		ASSERT_U_INT_EQ(type, SSH2_FXP_EXTENDED_REPLY);
		ASSERT_INT_EQ(sshbuf_get_u32(msg, &id), 0);
		ASSERT_INT_EQ(sshbuf_get_cstring(msg, alg, NULL), 0);
	}
	sshbuf_free(req);
	sshbuf_free(msg);
	return ret;
}

void tests(void);
void
tests(void)
{
	char path[] = "/tmp/test_hash_plain.XXXXXX", why[128], *alg;
	u_char md[HPN_HASH_MD_MAX];
	u_int mdlen;
	u_int64_t done;
	int fd;

	TEST_START("no libxxhash: SHA-256 and BLAKE2b only");
	ASSERT_STRING_EQ(hpn_hash_algs(), "sha256,blake2b512");
	ASSERT_STRING_EQ(hpn_hash_default(), "sha256,blake2b512");
	ASSERT_STRING_EQ(hpn_hash_pick("xxh128,sha256,blake2b512"), "sha256");
	ASSERT_STRING_EQ(hpn_hash_pick("xxh128,blake2b512"), "blake2b512");
	ASSERT_PTR_EQ(hpn_hash_pick("xxh128"), NULL);
	TEST_DONE();

	TEST_START("no libxxhash: ResumeHash xxh128 refused, with the reason");
	ASSERT_INT_EQ(hpn_parse_hash_list("xxh128,sha256", why, sizeof(why)),
	    -1);
	ASSERT_PTR_NE(strstr(why, "xxh128 is not in this build"), NULL);
	ASSERT_INT_EQ(hpn_parse_hash_list("sha256,blake2b512", why,
	    sizeof(why)), 0);
	TEST_DONE();

	TEST_START("no libxxhash: the server falls back, or has none");
	ASSERT_INT_NE(fd = mkstemp(path), -1);
	ASSERT_INT_EQ(write(fd, "hello", 5), 5);
	ASSERT_U_INT_EQ(answer(fd, "xxh128,sha256", &alg), SSH2_FX_OK);
	ASSERT_STRING_EQ(alg, "sha256");
	free(alg);
	ASSERT_U_INT_EQ(answer(fd, "xxh128", &alg), SSH2_FX_OP_UNSUPPORTED);
	ASSERT_PTR_EQ(alg, NULL);
	ASSERT_INT_EQ(hpn_hash_range(fd, "xxh128", 0, 5, md, &mdlen, &done),
	    EINVAL);
	close(fd);
	unlink(path);
	TEST_DONE();
}
