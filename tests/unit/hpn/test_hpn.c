/*
 * Unit tests of the HPN patch set's own code that is not about speed:
 * telling HPN peers from others by their banner, the port fallback, option
 * sizes, sftp request counts, buffer growth, how bulk channels size
 * their reads, bursts and pipes, and the hashes of file ranges.
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "openbsd-compat/sys-queue.h"
#include "test_helper.h"

#include "sshbuf.h"
#include "packet.h"
#include "kex.h"
#include "log.h"
#include "channels.h"
#include "misc.h"
#include "sftp.h"
#include "xmalloc.h"
#include "hpn.h"

#include <openssl/evp.h>

void tests(void);

/* f() on an ssh whose peer sent banner; we are the client unless server. */
static int
peer_check(int (*f)(struct ssh *), const char *banner, int server)
{
	struct ssh ssh;
	struct kex *kex;
	int r;

	memset(&ssh, 0, sizeof(ssh));
	ASSERT_PTR_NE(kex = kex_new(), NULL);
	kex->server = server;
	ASSERT_INT_EQ(sshbuf_put(server ? kex->client_version :
	    kex->server_version, banner, strlen(banner)), 0);
	ASSERT_INT_EQ(sshbuf_put(server ? kex->server_version :
	    kex->client_version, "SSH-2.0-OpenSSH_10.3p1_hpn1",
	    strlen("SSH-2.0-OpenSSH_10.3p1_hpn1")), 0);
	ssh.kex = kex;
	r = f(&ssh);
	kex_free(kex);
	return r;
}

static int
peer_is_hpn(const char *banner, int server)
{
	return peer_check(hpn_peer_is_hpn, banner, server);
}

static int
peer_has_names(const char *banner)
{
	return peer_check(hpn_peer_has_hpn_names, banner, 0);
}

static struct addrinfo *
addrs(const char *host, const char *port)
{
	struct addrinfo hints, *ai = NULL;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	ASSERT_INT_EQ(getaddrinfo(host, port, &hints, &ai), 0);
	return ai;
}

static int
port_of(struct addrinfo *ai)
{
	if (ai->ai_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)ai->ai_addr)->sin6_port);
	return ntohs(((struct sockaddr_in *)ai->ai_addr)->sin_port);
}

/* OpenSSH's test_helper (10.1 and later) runs these with -b. */
void benchmarks(void);
/* Reads of one file as the engine plans them (hpn-sftp.c). */
static void
sftp_rd_tests(void)
{
	struct hpn_sftp_rd rd;
	u_int64_t off;
	u_int len;

	TEST_START("sftp reads: the size in requests, a probe, then done");
	hpn_sftp_rd_init(&rd, 100000, 1, 32768);
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);
	ASSERT_U64_EQ(off, 0);
	ASSERT_U_INT_EQ(len, 32768);
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);
	ASSERT_INT_EQ(hpn_sftp_rd_planned(&rd), 0);
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);
	ASSERT_U64_EQ(off, 98304);
	ASSERT_U_INT_EQ(len, 100000 - 98304);	/* exactly to the size */
	ASSERT_INT_EQ(hpn_sftp_rd_planned(&rd), 0);
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);
	ASSERT_U64_EQ(off, 100000);		/* the probe */
	ASSERT_U_INT_EQ(len, 32768);
	ASSERT_INT_EQ(hpn_sftp_rd_planned(&rd), 1);	/* CLOSE may go */
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 0);
	ASSERT_U_INT_EQ(rd.inflight, 5);
	/* replies out of order: the contiguous end stays right */
	hpn_sftp_rd_data(&rd, 32768, 32768, 32768);
	ASSERT_U64_EQ(rd.highwater, 0);
	ASSERT_INT_EQ(rd.reordered, 1);
	hpn_sftp_rd_data(&rd, 0, 32768, 32768);
	hpn_sftp_rd_data(&rd, 65536, 32768, 32768);
	hpn_sftp_rd_data(&rd, 98304, 1696, 1696);
	ASSERT_INT_EQ(hpn_sftp_rd_done(&rd), 0);
	hpn_sftp_rd_eof(&rd, 100000);
	ASSERT_INT_EQ(hpn_sftp_rd_done(&rd), 1);
	ASSERT_U64_EQ(rd.maxack, 100000);
	ASSERT_U64_EQ(rd.got, 100000);
	hpn_sftp_rd_free(&rd);
	TEST_DONE();

	TEST_START("sftp reads: empty and 1-byte files, exactly one request");
	hpn_sftp_rd_init(&rd, 0, 1, 32768);
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);
	ASSERT_U64_EQ(off, 0);
	ASSERT_INT_EQ(hpn_sftp_rd_planned(&rd), 1);
	hpn_sftp_rd_eof(&rd, 0);
	ASSERT_INT_EQ(hpn_sftp_rd_done(&rd), 1);
	hpn_sftp_rd_free(&rd);
	hpn_sftp_rd_init(&rd, 1, 1, 32768);
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);
	ASSERT_U_INT_EQ(len, 1);
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);
	ASSERT_U64_EQ(off, 1);
	ASSERT_INT_EQ(hpn_sftp_rd_planned(&rd), 1);
	hpn_sftp_rd_data(&rd, 0, 1, 1);
	hpn_sftp_rd_eof(&rd, 1);
	ASSERT_INT_EQ(hpn_sftp_rd_done(&rd), 1);
	hpn_sftp_rd_free(&rd);
	hpn_sftp_rd_init(&rd, 32768, 1, 32768);
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);
	ASSERT_U_INT_EQ(len, 32768);
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);
	ASSERT_U64_EQ(off, 32768);		/* the probe */
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 0);
	hpn_sftp_rd_free(&rd);
	TEST_DONE();

	TEST_START("sftp reads: a short read is asked for again");
	hpn_sftp_rd_init(&rd, 65536, 1, 32768);
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);	/* probe */
	ASSERT_INT_EQ(hpn_sftp_rd_planned(&rd), 1);
	hpn_sftp_rd_data(&rd, 0, 32768, 20000);		/* short */
	ASSERT_INT_EQ(hpn_sftp_rd_planned(&rd), 0);	/* reopen if closed */
	ASSERT_U_INT_EQ(rd.buflen, 20000);		/* asks for less */
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);
	ASSERT_U64_EQ(off, 20000);
	ASSERT_U_INT_EQ(len, 12768);
	hpn_sftp_rd_data(&rd, 32768, 32768, 32768);
	hpn_sftp_rd_eof(&rd, 65536);
	ASSERT_INT_EQ(hpn_sftp_rd_done(&rd), 0);
	hpn_sftp_rd_data(&rd, 20000, 12768, 12768);
	ASSERT_INT_EQ(hpn_sftp_rd_done(&rd), 1);
	ASSERT_U64_EQ(rd.got, 65536);
	hpn_sftp_rd_free(&rd);
	TEST_DONE();

	TEST_START("sftp reads: a file that shrank ends at its EOF");
	hpn_sftp_rd_init(&rd, 65536, 1, 32768);
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);
	hpn_sftp_rd_data(&rd, 0, 32768, 1000);	/* gap 1000..32768 */
	hpn_sftp_rd_eof(&rd, 32768);
	hpn_sftp_rd_eof(&rd, 65536);
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);
	ASSERT_U64_EQ(off, 1000);
	hpn_sftp_rd_eof(&rd, 1000);		/* it ends there */
	ASSERT_INT_EQ(hpn_sftp_rd_done(&rd), 1);
	ASSERT_U64_EQ(rd.eof, 1000);
	hpn_sftp_rd_free(&rd);
	TEST_DONE();

	TEST_START("sftp reads: a file that grew is read on to its EOF");
	hpn_sftp_rd_init(&rd, 10, 1, 16);
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);	/* probe */
	hpn_sftp_rd_data(&rd, 0, 10, 10);
	hpn_sftp_rd_data(&rd, 10, 16, 16);	/* the probe found more */
	ASSERT_INT_EQ(rd.size_known, 0);
	ASSERT_INT_EQ(hpn_sftp_rd_planned(&rd), 0);
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);
	ASSERT_U64_EQ(off, 26);
	hpn_sftp_rd_data(&rd, 26, 16, 5);
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);
	ASSERT_U64_EQ(off, 31);			/* the rest of the short one */
	hpn_sftp_rd_eof(&rd, 31);
	ASSERT_INT_EQ(hpn_sftp_rd_done(&rd), 1);
	ASSERT_U64_EQ(rd.maxack, 31);
	hpn_sftp_rd_free(&rd);
	TEST_DONE();

	TEST_START("sftp reads: unknown size, a window of reads to EOF");
	hpn_sftp_rd_init(&rd, 0, 0, 100);
	for (len = 0; hpn_sftp_rd_next(&rd, &off, &len); )
		;
	ASSERT_U_INT_EQ(rd.inflight, HPN_SFTP_RD_WINDOW);
	ASSERT_INT_EQ(hpn_sftp_rd_planned(&rd), 0);
	hpn_sftp_rd_data(&rd, 0, 100, 100);
	hpn_sftp_rd_eof(&rd, 100);
	ASSERT_INT_EQ(hpn_sftp_rd_done(&rd), 0);	/* others still out */
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 0);
	for (off = 200; off < 100 * HPN_SFTP_RD_WINDOW; off += 100)
		hpn_sftp_rd_eof(&rd, off);
	ASSERT_INT_EQ(hpn_sftp_rd_done(&rd), 1);
	ASSERT_U64_EQ(rd.highwater, 100);
	hpn_sftp_rd_free(&rd);
	TEST_DONE();
}

/* hpn-sftp-hash.c: ranges hashed block by block against one-shot EVP. */
static void
one_shot(const char *alg, const u_char *p, size_t len, u_char *md,
    u_int *mdlen)
{
	ASSERT_INT_EQ(EVP_Digest(p, len, md, mdlen,
	    EVP_get_digestbyname(alg), NULL), 1);
}

/* A hash-range request (after its handle) answered about fd into msg. */
static u_int
reply_to(int fd, struct sshbuf *msg, const char *algs, u_int64_t off,
    u_int64_t len, u_int32_t piece)
{
	struct sshbuf *req;
	u_int ret;

	ASSERT_PTR_NE(req = sshbuf_new(), NULL);
	ASSERT_INT_EQ(sshbuf_put_cstring(req, algs), 0);
	ASSERT_INT_EQ(sshbuf_put_u64(req, off), 0);
	ASSERT_INT_EQ(sshbuf_put_u64(req, len), 0);
	ASSERT_INT_EQ(sshbuf_put_u32(req, piece), 0);
	sshbuf_reset(msg);
	ret = hpn_hash_range_reply(req, fd, "f", 77, msg);
	sshbuf_free(req);
	return ret;
}

static void
hash_range_tests(void)
{
	char path[] = "/tmp/test_hpn.XXXXXX";
	u_char *data, md[HPN_HASH_MD_MAX], want[HPN_HASH_MD_MAX];
	u_int mdlen, wlen;
	u_int64_t done;
	size_t i, n = 3 * 1024 * 1024 + 12345;	/* 3 pieces and a bit */
	struct sshbuf *req, *msg;
	u_char type;
	u_int32_t id;
	char *alg;
	int fd;

	TEST_START("hash-range: the algorithm picked");
	ASSERT_STRING_EQ(hpn_hash_pick("sha256"), "sha256");
	ASSERT_STRING_EQ(hpn_hash_pick("md5,blake2b512,sha256"), "blake2b512");
	ASSERT_PTR_EQ(hpn_hash_pick("md5"), NULL);
	ASSERT_PTR_EQ(hpn_hash_pick(""), NULL);
	ASSERT_PTR_EQ(hpn_hash_pick("sha256x,,xsha256"), NULL);
	TEST_DONE();

	data = xmalloc(n);
	for (i = 0; i < n; i++)
		data[i] = (u_char)(i * 7 + i / 251);
	ASSERT_INT_NE(fd = mkstemp(path), -1);
	ASSERT_SIZE_T_EQ((size_t)write(fd, data, n), n);

	TEST_START("hash-range: ranges, as one-shot digests of the bytes");
	ASSERT_INT_EQ(hpn_hash_range(fd, "sha256", 0, n, md, &mdlen, &done),
	    0);
	one_shot("sha256", data, n, want, &wlen);
	ASSERT_U64_EQ(done, n);
	ASSERT_U_INT_EQ(mdlen, wlen);
	ASSERT_MEM_EQ(md, want, wlen);
	ASSERT_INT_EQ(hpn_hash_range(fd, "blake2b512", 12345, 500000, md,
	    &mdlen, &done), 0);
	one_shot("blake2b512", data + 12345, 500000, want, &wlen);
	ASSERT_U64_EQ(done, 500000);
	ASSERT_U_INT_EQ(mdlen, 64);
	ASSERT_MEM_EQ(md, want, wlen);
	TEST_DONE();

	TEST_START("hash-range: the end of the file, and past it");
	ASSERT_INT_EQ(hpn_hash_range(fd, "sha256", n - 10, 100, md, &mdlen,
	    &done), 0);
	one_shot("sha256", data + n - 10, 10, want, &wlen);
	ASSERT_U64_EQ(done, 10);
	ASSERT_MEM_EQ(md, want, wlen);
	ASSERT_INT_EQ(hpn_hash_range(fd, "sha256", n + 5, 100, md, &mdlen,
	    &done), 0);
	one_shot("sha256", data, 0, want, &wlen);
	ASSERT_U64_EQ(done, 0);
	ASSERT_MEM_EQ(md, want, wlen);
	TEST_DONE();

	TEST_START("hash-range: errors");
	ASSERT_INT_EQ(hpn_hash_range(fd, "md5x", 0, 10, md, &mdlen, &done),
	    EINVAL);
	ASSERT_INT_EQ(hpn_hash_range(-1, "sha256", 0, 10, md, &mdlen, &done),
	    EBADF);
	TEST_DONE();

	TEST_START("hash-range: the server's reply and its bounds");
	ASSERT_PTR_NE(msg = sshbuf_new(), NULL);
	ASSERT_U_INT_EQ(reply_to(fd, msg, "md5,sha256", 3, 1000, 0),
	    SSH2_FX_OK);
	ASSERT_INT_EQ(sshbuf_get_u8(msg, &type), 0);
	ASSERT_U_INT_EQ(type, SSH2_FXP_EXTENDED_REPLY);
	ASSERT_INT_EQ(sshbuf_get_u32(msg, &id), 0);
	ASSERT_U_INT_EQ(id, 77);
	ASSERT_INT_EQ(sshbuf_get_cstring(msg, &alg, NULL), 0);
	ASSERT_STRING_EQ(alg, "sha256");
	free(alg);
	ASSERT_INT_EQ(sshbuf_get_u64(msg, &done), 0);
	ASSERT_U64_EQ(done, 1000);
	ASSERT_INT_EQ(sshbuf_get_u32(msg, &id), 0);
	ASSERT_U_INT_EQ(id, 1);		/* one piece */
	one_shot("sha256", data + 3, 1000, want, &wlen);
	ASSERT_U_INT_EQ(sshbuf_len(msg), 4 + wlen);
	ASSERT_MEM_EQ(sshbuf_ptr(msg) + 4, want, wlen);
	/* one byte over the limit, an offset that overflows, pieces under
	 * the minimum, no algorithm in common */
	ASSERT_U_INT_EQ(reply_to(fd, msg, "sha256", 0, HPN_HASH_RANGE_MAX + 1,
	    0), SSH2_FX_BAD_MESSAGE);
	ASSERT_U_INT_EQ(reply_to(fd, msg, "sha256", UINT64_MAX - 5, 10, 0),
	    SSH2_FX_BAD_MESSAGE);
	ASSERT_U_INT_EQ(reply_to(fd, msg, "sha256", 0, n, 4096),
	    SSH2_FX_BAD_MESSAGE);
	ASSERT_U_INT_EQ(reply_to(fd, msg, "md5", 0, 10, 0),
	    SSH2_FX_OP_UNSUPPORTED);
	ASSERT_SIZE_T_EQ(sshbuf_len(msg), 0);
	/* truncated */
	ASSERT_PTR_NE(req = sshbuf_new(), NULL);
	ASSERT_INT_EQ(sshbuf_put_cstring(req, "sha256"), 0);
	ASSERT_INT_EQ(sshbuf_put_u32(req, 0), 0);
	ASSERT_U_INT_EQ(hpn_hash_range_reply(req, fd, "f", 1, msg),
	    SSH2_FX_BAD_MESSAGE);
	sshbuf_free(req);
	sshbuf_free(msg);
	TEST_DONE();

	TEST_START("hash-range: pieces, hashed in parallel, as one-shot ones");
	{
		u_char *mds;
		u_int np, k;
		u_int64_t piece = HPN_HASH_PIECE_MIN, len = n - 14, o;

		/* under the minimum: refused */
		ASSERT_INT_EQ(hpn_hash_pieces(fd, "sha256", 7, len, piece / 4,
		    &mds, &np, &mdlen, &done), EINVAL);
		ASSERT_INT_EQ(hpn_hash_pieces(fd, "sha256", 7, len, piece,
		    &mds, &np, &mdlen, &done), 0);
		ASSERT_U_INT_EQ(np, 4);
		ASSERT_U64_EQ(done, len);
		for (k = 0; k < np; k++) {
			o = (u_int64_t)k * piece;
			one_shot("sha256", data + 7 + o, MINIMUM(piece, len - o),
			    want, &wlen);
			ASSERT_U_INT_EQ(mdlen, wlen);
			ASSERT_MEM_EQ(mds + (size_t)k * HPN_HASH_MD_MAX, want,
			    wlen);
		}
		free(mds);
		/* 0: one piece, the whole range */
		ASSERT_INT_EQ(hpn_hash_pieces(fd, "blake2b512", 1, n - 1, 0,
		    &mds, &np, &mdlen, &done), 0);
		ASSERT_U_INT_EQ(np, 1);
		one_shot("blake2b512", data + 1, n - 1, want, &wlen);
		ASSERT_MEM_EQ(mds, want, wlen);
		free(mds);
	}
	TEST_DONE();

	close(fd);
	unlink(path);
	free(data);
}

void
benchmarks(void)
{
	printf("no benchmarks\n");
}

void
tests(void)
{
	struct addrinfo *ai;

	log_init("test_hpn", SYSLOG_LEVEL_QUIET, SYSLOG_FACILITY_USER, 1);

	TEST_START("banner: our own tag");
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0-OpenSSH_10.3p1" HPN_VERSION_TAG, 0), 1);
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0-OpenSSH_10.3p1" HPN_VERSION_TAG, 1), 1);
	TEST_DONE();

	TEST_START("banner: HPN-SSH style tag");
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0-OpenSSH_9.9p1-hpn18.6.0", 0), 1);
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0-OpenSSH_8.0p1-HPN14v16", 0), 1);
	TEST_DONE();

	TEST_START("banner: stock peers");
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0-OpenSSH_10.0", 0), 0);
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u6", 0), 0);
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0-PuTTY_Release_0.78", 1), 0);
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0-dropbear_2022.83", 1), 0);
	TEST_DONE();

	TEST_START("banner: hpn only in the comment does not count");
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0-OpenSSH_9.6 hpn-lookalike", 0), 0);
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0-OpenSSH_9.6\r\nhpn", 0), 0);
	TEST_DONE();

	TEST_START("banner: malformed or short");
	ASSERT_INT_EQ(peer_is_hpn("", 0), 0);
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0", 0), 0);
	ASSERT_INT_EQ(peer_is_hpn("HTTP/1.1 hpn", 0), 0);
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0-hp", 0), 0);
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0-xhpn", 0), 1);
	ASSERT_INT_EQ(hpn_peer_is_hpn(NULL), 0);
	TEST_DONE();

	TEST_START("banner: who installs hpnscp");
	ASSERT_INT_EQ(peer_has_names("SSH-2.0-OpenSSH_10.3p1" HPN_VERSION_TAG), 1);
	ASSERT_INT_EQ(peer_has_names("SSH-2.0-OpenSSH_10.3p1_hpn0.0.1"), 1);
	ASSERT_INT_EQ(peer_has_names("SSH-2.0-OpenSSH_9.9p1-hpn18.6.0"), 1);
	ASSERT_INT_EQ(peer_has_names("SSH-2.0-OpenSSH_8.8p1-hpn17v0"), 1);
	ASSERT_INT_EQ(peer_has_names("SSH-2.0-OpenSSH_8.8p1-hpn16v1"), 0);
	ASSERT_INT_EQ(peer_has_names("SSH-2.0-OpenSSH_8.0p1-HPN14v16"), 0);
	ASSERT_INT_EQ(peer_has_names("SSH-2.0-OpenSSH_9.9p1-hpn"), 0);
	ASSERT_INT_EQ(peer_has_names("SSH-2.0-OpenSSH_9.9p1-hpn99999999999999999999"), 1);
	ASSERT_INT_EQ(peer_has_names("SSH-2.0-OpenSSH_10.0"), 0);
	ASSERT_INT_EQ(peer_has_names("SSH-2.0-OpenSSH_9.6 _hpn1"), 0);
	TEST_DONE();

	TEST_START("sizes: KiB by default, suffixes, limits");
	{
		u_int v = 7;

		ASSERT_INT_EQ(hpn_parse_size("65536", 1024, 112 << 20, &v), 0);
		ASSERT_U_INT_EQ(v, 64 << 20);
		ASSERT_INT_EQ(hpn_parse_size("64M", 1024, 112 << 20, &v), 0);
		ASSERT_U_INT_EQ(v, 64 << 20);
		ASSERT_INT_EQ(hpn_parse_size("1k", 1024, 112 << 20, &v), 0);
		ASSERT_U_INT_EQ(v, 1024);
		ASSERT_INT_EQ(hpn_parse_size("0", 1024, 112 << 20, &v), 0);
		ASSERT_U_INT_EQ(v, 0);
		ASSERT_INT_EQ(hpn_parse_size("112M", 1024, 112 << 20, &v), 0);
		v = 7;
		ASSERT_INT_EQ(hpn_parse_size("113M", 1024, 112 << 20, &v), -1);
		ASSERT_INT_EQ(hpn_parse_size("1", 2048, 112 << 20, &v), -1);
		ASSERT_INT_EQ(hpn_parse_size("-1", 1024, 112 << 20, &v), -1);
		ASSERT_INT_EQ(hpn_parse_size("12x", 1024, 112 << 20, &v), -1);
		ASSERT_INT_EQ(hpn_parse_size("x", 1024, 112 << 20, &v), -1);
		ASSERT_INT_EQ(hpn_parse_size("", 1024, 112 << 20, &v), -1);
		ASSERT_INT_EQ(hpn_parse_size(NULL, 1024, 112 << 20, &v), -1);
		ASSERT_INT_EQ(hpn_parse_size("99999999999999999999", 1024,
		    112 << 20, &v), -1);
		ASSERT_U_INT_EQ(v, 7);	/* untouched on error */
	}
	TEST_DONE();

	TEST_START("sftp: requests cover 64 MiB, within limits");
	ASSERT_U_INT_EQ(hpn_sftp_num_requests(255 * 1024), 258);
	ASSERT_U_INT_EQ(hpn_sftp_num_requests(32 * 1024), 1024);
	ASSERT_U_INT_EQ(hpn_sftp_num_requests(0), 1024);
	ASSERT_U_INT_EQ(hpn_sftp_num_requests(4 << 20), 64);
	TEST_DONE();

	TEST_START("sftp engine: handles within the server's figure");
	ASSERT_U_INT_EQ(hpn_sftp_max_handles(1019, 0), 1000);
	ASSERT_U_INT_EQ(hpn_sftp_max_handles(200, 0), 200);
	ASSERT_U_INT_EQ(hpn_sftp_max_handles(1, 0), 1);
	ASSERT_U_INT_EQ(hpn_sftp_max_handles(0, 0), HPN_SFTP_HANDLES_DEFAULT);
	/* our own descriptors keep a reserve, never more than the server */
	ASSERT_U_INT_EQ(hpn_sftp_max_handles(1019, 1024), 1024 - 32);
	ASSERT_U_INT_EQ(hpn_sftp_max_handles(10, 1024), 10);
	ASSERT_U_INT_EQ(hpn_sftp_max_handles(0, 40), 8);
	ASSERT_U_INT_EQ(hpn_sftp_max_handles(500, 20), 1);
	TEST_DONE();

	sftp_rd_tests();
	hash_range_tests();

	TEST_START("sshbuf growth: exact when small, geometric when large");
	ASSERT_SIZE_T_EQ(hpn_sshbuf_grow(1024, 2048, 128 << 20), 2048);
	ASSERT_SIZE_T_EQ(hpn_sshbuf_grow(4 << 20, (4 << 20) + 32768,
	    128 << 20), 6 << 20);
	ASSERT_SIZE_T_EQ(hpn_sshbuf_grow(4 << 20, 10 << 20, 128 << 20),
	    10 << 20);
	/* Near the maximum: never past it. */
	ASSERT_SIZE_T_EQ(hpn_sshbuf_grow(80 << 20, (80 << 20) + 256,
	    100 << 20), (80 << 20) + 256);
	ASSERT_SIZE_T_EQ(hpn_sshbuf_grow(60 << 20, (60 << 20) + 256,
	    64 << 20), (60 << 20) + 256);
	ASSERT_SIZE_T_EQ(hpn_sshbuf_grow(40 << 20, (40 << 20) + 256,
	    64 << 20), 60 << 20);
	TEST_DONE();

	TEST_START("sshbuf: a large buffer filled in small steps");
	{
		struct sshbuf *b;
		u_char chunk[32768];
		size_t i;

		memset(chunk, 'x', sizeof(chunk));
		ASSERT_PTR_NE(b = sshbuf_new(), NULL);
		for (i = 0; i < 2048; i++)	/* 64 MiB */
			ASSERT_INT_EQ(sshbuf_put(b, chunk, sizeof(chunk)), 0);
		ASSERT_SIZE_T_EQ(sshbuf_len(b), (size_t)64 << 20);
		ASSERT_INT_EQ(sshbuf_consume(b, (size_t)32 << 20), 0);
		for (i = 0; i < 1024; i++)
			ASSERT_INT_EQ(sshbuf_put(b, chunk, sizeof(chunk)), 0);
		ASSERT_SIZE_T_EQ(sshbuf_len(b), (size_t)64 << 20);
		ASSERT_U8_EQ(*(sshbuf_ptr(b) + sshbuf_len(b) - 1), 'x');
		sshbuf_free(b);
	}
	TEST_DONE();

	TEST_START("channel reads: double while full, halve when short");
	{
		Channel c;

		memset(&c, 0, sizeof(c));
		c.rfd = c.wfd = c.efd = -1;
		ASSERT_SIZE_T_EQ(hpn_channel_read_len(&c), CHANNEL_MAX_READ);
		hpn_channel_read_done(&c, 32768, 32768);
		ASSERT_SIZE_T_EQ(hpn_channel_read_len(&c), 65536);
		hpn_channel_read_done(&c, 65536, 65536);
		hpn_channel_read_done(&c, 131072, 131072);
		ASSERT_SIZE_T_EQ(hpn_channel_read_len(&c), HPN_CHAN_READ_MAX);
		hpn_channel_read_done(&c, 262144, 262144);
		ASSERT_SIZE_T_EQ(hpn_channel_read_len(&c), HPN_CHAN_READ_MAX);
		/* a short read, but not very: unchanged */
		hpn_channel_read_done(&c, 262144, 100000);
		ASSERT_SIZE_T_EQ(hpn_channel_read_len(&c), HPN_CHAN_READ_MAX);
		/* very short: halves, not below the stock size */
		hpn_channel_read_done(&c, 262144, 1000);
		ASSERT_SIZE_T_EQ(hpn_channel_read_len(&c), 131072);
		hpn_channel_read_done(&c, 131072, 1);
		hpn_channel_read_done(&c, 65536, 1);
		hpn_channel_read_done(&c, 32768, 1);
		ASSERT_SIZE_T_EQ(hpn_channel_read_len(&c), CHANNEL_MAX_READ);
		/* full, but less asked than the size (window): no growth */
		hpn_channel_read_done(&c, 1000, 1000);
		ASSERT_SIZE_T_EQ(hpn_channel_read_len(&c), CHANNEL_MAX_READ);
		/* terminals and datagrams keep the stock size */
		c.isatty = 1;
		hpn_channel_read_done(&c, 32768, 32768);
		ASSERT_SIZE_T_EQ(hpn_channel_read_len(&c), CHANNEL_MAX_READ);
		c.isatty = 0;
		c.datagram = 1;
		c.hpn_read_len = HPN_CHAN_READ_MAX;
		ASSERT_SIZE_T_EQ(hpn_channel_read_len(&c), CHANNEL_MAX_READ);
	}
	TEST_DONE();

	TEST_START("channel bursts: bytes per trip, bounded in packets");
	{
		Channel c;

		memset(&c, 0, sizeof(c));
		c.remote_maxpacket = 32768;
		ASSERT_U_INT_EQ(hpn_channel_burst(&c), 8);
		c.remote_maxpacket = 16384;
		ASSERT_U_INT_EQ(hpn_channel_burst(&c), 16);
		c.remote_maxpacket = 1;		/* a hostile peer */
		ASSERT_U_INT_EQ(hpn_channel_burst(&c), HPN_CHAN_BURST_PACKETS);
		c.remote_maxpacket = 0;
		ASSERT_U_INT_EQ(hpn_channel_burst(&c), 1);
		c.remote_maxpacket = 1 << 20;
		ASSERT_U_INT_EQ(hpn_channel_burst(&c), 1);
		c.remote_maxpacket = 32768;
		c.isatty = 1;
		ASSERT_U_INT_EQ(hpn_channel_burst(&c), 1);
		c.isatty = 0;
		c.datagram = 1;
		ASSERT_U_INT_EQ(hpn_channel_burst(&c), 1);
	}
	TEST_DONE();

#if defined(F_GETPIPE_SZ) && defined(F_SETPIPE_SZ)
	TEST_START("channel pipes: grown once the channel is bulk, not ttys");
	{
		Channel c;
		int in[2], out[2], tty[2], sz0;

		ASSERT_INT_EQ(pipe(in), 0);
		ASSERT_INT_EQ(pipe(out), 0);
		ASSERT_INT_EQ(pipe(tty), 0);
		sz0 = fcntl(out[1], F_GETPIPE_SZ);
		ASSERT_INT_LT(sz0, HPN_PIPE_SIZE);
		memset(&c, 0, sizeof(c));
		c.rfd = in[0];
		c.wfd = out[1];
		c.efd = -1;
		/* a small backlog, a short read: nothing */
		hpn_channel_write_backlog(&c, 1000);
		hpn_channel_read_done(&c, 65536, 1000);
		ASSERT_INT_EQ(fcntl(out[1], F_GETPIPE_SZ), sz0);
		ASSERT_INT_EQ(fcntl(in[0], F_GETPIPE_SZ), sz0);
		hpn_channel_write_backlog(&c, HPN_PIPE_GROW_AT);
		ASSERT_INT_EQ(fcntl(out[1], F_GETPIPE_SZ), HPN_PIPE_SIZE);
		ASSERT_INT_EQ(fcntl(in[0], F_GETPIPE_SZ), sz0);
		hpn_channel_read_done(&c, HPN_PIPE_GROW_AT, HPN_PIPE_GROW_AT);
		ASSERT_INT_EQ(fcntl(in[0], F_GETPIPE_SZ), HPN_PIPE_SIZE);
		/* a terminal's channel keeps its pipe */
		memset(&c, 0, sizeof(c));
		c.rfd = tty[0];
		c.wfd = tty[1];
		c.isatty = 1;
		hpn_channel_write_backlog(&c, 1 << 20);
		hpn_channel_read_done(&c, 65536, 65536);
		ASSERT_INT_EQ(fcntl(tty[1], F_GETPIPE_SZ), sz0);
		/* not a pipe: left alone */
		memset(&c, 0, sizeof(c));
		c.rfd = c.wfd = open("/dev/null", O_RDWR);
		ASSERT_INT_GE(c.wfd, 0);
		hpn_channel_write_backlog(&c, 1 << 20);
		hpn_channel_read_done(&c, 65536, 65536);
		close(c.wfd);
		close(in[0]); close(in[1]); close(out[0]); close(out[1]);
		close(tty[0]); close(tty[1]);
	}
	TEST_DONE();
#endif

	TEST_START("fallback: refused on the default port");
	ai = addrs("127.0.0.1", "2222");
	ASSERT_INT_EQ(hpn_connect_fallback("h", ai, ECONNREFUSED, 1, 22), 22);
	ASSERT_INT_EQ(port_of(ai), 22);
	/* Once only: a second failure, now on 22, does not retry. */
	ASSERT_INT_EQ(hpn_connect_fallback("h", ai, ECONNREFUSED, 1, 22), 0);
	freeaddrinfo(ai);
	TEST_DONE();

	TEST_START("fallback: timeout falls back too, IPv6 as well");
	ai = addrs("::1", "2222");
	ASSERT_INT_EQ(hpn_connect_fallback("h", ai, ETIMEDOUT, 1, 2200), 2200);
	ASSERT_INT_EQ(port_of(ai), 2200);
	freeaddrinfo(ai);
	TEST_DONE();

	TEST_START("fallback: not wanted, or other errors");
	ai = addrs("127.0.0.1", "2222");
	ASSERT_INT_EQ(hpn_connect_fallback("h", ai, ECONNREFUSED, 0, 22), 0);
	ASSERT_INT_EQ(hpn_connect_fallback("h", ai, EHOSTUNREACH, 1, 22), 0);
	ASSERT_INT_EQ(hpn_connect_fallback("h", ai, ENETUNREACH, 1, 22), 0);
	ASSERT_INT_EQ(hpn_connect_fallback("h", ai, ECONNREFUSED, 1, 0), 0);
	ASSERT_INT_EQ(hpn_connect_fallback("h", NULL, ECONNREFUSED, 1, 22), 0);
	ASSERT_INT_EQ(port_of(ai), 2222);
	freeaddrinfo(ai);
	TEST_DONE();
}
