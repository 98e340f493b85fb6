/*
 * Unit tests of the HPN patch set's own code that is not about speed:
 * telling HPN peers from others (by their banner, ours by our EXT_INFO
 * extension), how the None switch proposes none, the port fallback, option
 * sizes, sftp request counts, buffer growth, how bulk channels size
 * their reads, bursts and pipes, the hashes of file ranges, the TCP
 * stack metrics (samples, their wire and CSV forms, the summary line), and
 * the early set-up's hosts file and key exchange guess.
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stddef.h>
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
#include "sftp-common.h"
#include "xmalloc.h"

#if defined(__has_feature)
# if __has_feature(address_sanitizer)
#  define TEST_ASAN 1
# endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(TEST_ASAN)
# define TEST_ASAN 1
#endif
#ifdef TEST_ASAN
# include <sanitizer/common_interface_defs.h>
#endif
#include "ssh.h"
#include "readconf.h"
#include "hpn.h"
#include "hpn-metrics.h"

Options options;	/* hpn-client.c reads hpnssh's options */

#include <openssl/evp.h>

void tests(void);

/*
 * f() on an ssh whose peer sent banner; we are the client unless server;
 * ours: the server sent our EXT_INFO extension (hpn-compat.c).
 */
static int
peer_check_ours(int (*f)(struct ssh *), const char *banner, int server,
    int ours)
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
	hpn_peer_set_ours(ours);
	r = f(&ssh);
	hpn_peer_set_ours(0);
	kex_free(kex);
	return r;
}

static int
peer_check(int (*f)(struct ssh *), const char *banner, int server)
{
	return peer_check_ours(f, banner, server, 0);
}

static int
peer_is_hpn(const char *banner, int server)
{
	return peer_check(hpn_peer_is_hpn, banner, server);
}

static int
peer_is_ours(const char *banner, int server, int ours)
{
	return peer_check_ours(hpn_peer_is_ours, banner, server, ours);
}

static int
peer_is_hpnssh(const char *banner, int server, int ours)
{
	return peer_check_ours(hpn_peer_is_hpnssh, banner, server, ours);
}

static int
peer_has_names(const char *banner, int ours)
{
	return peer_check_ours(hpn_peer_has_hpn_names, banner, 0, ours);
}

/*
 * hpn_none_plan() on a client whose server sent banner and HPN_NONE_EXT
 * with value ext (NULL: not sent), and whose KEXINIT listed the ciphers
 * ctos and stoc and the MACs macs both ways.  *mac: the none MAC wanted
 * in, allowed out.
 */
static int
none_plan2(const char *banner, const char *ext, const char *ctos,
    const char *stoc, const char *macs, int *mac)
{
	struct ssh ssh;
	struct kex *kex;
	char *prop[PROPOSAL_MAX];
	const char *why = "unset";
	int i, r;

	memset(&ssh, 0, sizeof(ssh));
	ASSERT_PTR_NE(kex = kex_new(), NULL);
	ASSERT_INT_EQ(sshbuf_put(kex->server_version, banner,
	    strlen(banner)), 0);
	ssh.kex = kex;
	for (i = 0; i < PROPOSAL_MAX; i++)
		prop[i] = "";
	prop[PROPOSAL_ENC_ALGS_CTOS] = (char *)ctos;
	prop[PROPOSAL_ENC_ALGS_STOC] = (char *)stoc;
	prop[PROPOSAL_MAC_ALGS_CTOS] = prop[PROPOSAL_MAC_ALGS_STOC] =
	    (char *)macs;
	/* what an earlier case left: no extension */
	ASSERT_INT_EQ(hpn_none_ext_parse(&ssh, HPN_NONE_EXT, "", 0), 1);
	hpn_peer_set_ours(0);
	ASSERT_INT_EQ(hpn_none_ext_parse(&ssh, "server-sig-algs", "", 0), 0);
	if (ext != NULL)
		ASSERT_INT_EQ(hpn_none_ext_parse(&ssh, HPN_NONE_EXT, ext,
		    strlen(ext)), 1);
	hpn_none_peer_proposal(&ssh, prop);
	r = hpn_none_plan(&ssh, mac, &why);
	if (r == HPN_NONE_STAY) {
		ASSERT_PTR_NE(why, NULL);
		ASSERT_INT_EQ(*mac, 0);
	} else
		ASSERT_PTR_EQ(why, NULL);
	hpn_peer_set_ours(0);
	kex_free(kex);
	return r;
}

static int
none_plan(const char *banner, const char *ext, const char *ciphers,
    const char *macs, int *mac)
{
	return none_plan2(banner, ext, ciphers, ciphers, macs, mac);
}

/* The notice of hpn_none_plan() when it stays, "" when it switches. */
static const char *
none_why(const char *banner, const char *ext, const char *ciphers)
{
	struct ssh ssh;
	struct kex *kex;
	char *prop[PROPOSAL_MAX];
	const char *why = NULL;
	int i, mac = 0;

	memset(&ssh, 0, sizeof(ssh));
	ASSERT_PTR_NE(kex = kex_new(), NULL);
	ASSERT_INT_EQ(sshbuf_put(kex->server_version, banner,
	    strlen(banner)), 0);
	ssh.kex = kex;
	for (i = 0; i < PROPOSAL_MAX; i++)
		prop[i] = (char *)ciphers;
	ASSERT_INT_EQ(hpn_none_ext_parse(&ssh, HPN_NONE_EXT, "", 0), 1);
	hpn_peer_set_ours(0);
	if (ext != NULL)
		ASSERT_INT_EQ(hpn_none_ext_parse(&ssh, HPN_NONE_EXT, ext,
		    strlen(ext)), 1);
	hpn_none_peer_proposal(&ssh, prop);
	if (hpn_none_plan(&ssh, &mac, &why) != HPN_NONE_STAY)
		why = "";
	hpn_peer_set_ours(0);
	kex_free(kex);
	return why;
}

/* hpn_none_ext_value() on a server whose client sent banner. */
static const char *
none_ext_value(const char *banner, int enabled, int mac)
{
	struct ssh ssh;
	struct kex *kex;
	const char *v;

	memset(&ssh, 0, sizeof(ssh));
	ASSERT_PTR_NE(kex = kex_new(), NULL);
	kex->server = 1;
	ASSERT_INT_EQ(sshbuf_put(kex->client_version, banner,
	    strlen(banner)), 0);
	ssh.kex = kex;
	hpn_none_server_config(enabled, mac);
	v = hpn_none_ext_value(&ssh);
	hpn_none_server_config(0, 0);
	kex_free(kex);
	return v;
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

/* A proposal array of lists: kex, host key algorithms, the rest "x". */
static char **
prop(const char *kexalgs, const char *hkalgs)
{
	char **p = xcalloc(PROPOSAL_MAX, sizeof(*p));
	u_int i;

	for (i = 0; i < PROPOSAL_MAX; i++)
		p[i] = xstrdup("x");
	free(p[PROPOSAL_KEX_ALGS]);
	free(p[PROPOSAL_SERVER_HOST_KEY_ALGS]);
	p[PROPOSAL_KEX_ALGS] = xstrdup(kexalgs);
	p[PROPOSAL_SERVER_HOST_KEY_ALGS] = xstrdup(hkalgs);
	return p;
}

/* Count the lines of b, and those naming name (with the method in kex). */
static u_int
hosts_lines(const struct sshbuf *b)
{
	const u_char *p = sshbuf_ptr(b);
	size_t i;
	u_int n = 0;

	for (i = 0; i < sshbuf_len(b); i++)
		n += p[i] == '\n';
	return n;
}

/* Connection set-up in fewer round trips (hpn-early.c). */
static void
early_tests(void)
{
	struct sshbuf *a, *b, *c;
	struct ssh ssh;
	struct kex *kex;
	char kexn[128], **my, **peer, *cp, name[64];
	u_int i;

	TEST_START("early: hosts file, a name recorded and found");
	ASSERT_PTR_NE(a = sshbuf_new(), NULL);
	ASSERT_PTR_NE(b = sshbuf_new(), NULL);
	ASSERT_INT_EQ(hpn_early_hosts_update(NULL, "[h]:2222",
	    "mlkem768x25519-sha256", a), 0);
	ASSERT_U_INT_EQ(hosts_lines(a), 1);
	ASSERT_INT_EQ(memcmp(sshbuf_ptr(a), "|1|", 3), 0);
	/* hashed: the name itself is not in the file */
	ASSERT_PTR_EQ(memmem(sshbuf_ptr(a), sshbuf_len(a), "[h]", 3), NULL);
	ASSERT_INT_EQ(hpn_early_hosts_lookup(a, "[h]:2222", kexn,
	    sizeof(kexn)), 1);
	ASSERT_STRING_EQ(kexn, "mlkem768x25519-sha256");
	ASSERT_INT_EQ(hpn_early_hosts_lookup(a, "[h]:22", kexn,
	    sizeof(kexn)), 0);
	ASSERT_INT_EQ(hpn_early_hosts_lookup(a, "h", kexn, sizeof(kexn)), 0);
	TEST_DONE();

	TEST_START("early: hosts file, updated and forgotten, others kept");
	ASSERT_INT_EQ(hpn_early_hosts_update(a, "g", "curve25519-sha256", b),
	    0);
	sshbuf_reset(a);
	ASSERT_INT_EQ(hpn_early_hosts_update(b, "[h]:2222",
	    "sntrup761x25519-sha512", a), 0);
	ASSERT_U_INT_EQ(hosts_lines(a), 2);
	ASSERT_INT_EQ(hpn_early_hosts_lookup(a, "[h]:2222", kexn,
	    sizeof(kexn)), 1);
	ASSERT_STRING_EQ(kexn, "sntrup761x25519-sha512");
	ASSERT_INT_EQ(hpn_early_hosts_lookup(a, "g", kexn, sizeof(kexn)), 1);
	ASSERT_STRING_EQ(kexn, "curve25519-sha256");
	sshbuf_reset(b);
	ASSERT_INT_EQ(hpn_early_hosts_update(a, "[h]:2222", NULL, b), 0);
	ASSERT_U_INT_EQ(hosts_lines(b), 1);
	ASSERT_INT_EQ(hpn_early_hosts_lookup(b, "[h]:2222", kexn,
	    sizeof(kexn)), 0);
	ASSERT_INT_EQ(hpn_early_hosts_lookup(b, "g", kexn, sizeof(kexn)), 1);
	TEST_DONE();

	TEST_START("early: hosts file, lines that do not parse are dropped");
	sshbuf_reset(a);
	ASSERT_INT_EQ(sshbuf_putf(a, "garbage\n\n|1|x|y\n|1|bad|salt kex\n"
	    "g curve25519-sha256\n"), 0);
	ASSERT_INT_EQ(sshbuf_putb(a, b), 0);	/* g's line */
	ASSERT_INT_EQ(sshbuf_putf(a, "|1|AAAA|BBBB bad;kex\n"
	    "|1|AAAA|BBBB  two-spaces\n|1|AAAA|BBBB kex trailing\n"
	    "|1|AAAA|BBBB "), 0);
	for (i = 0; i < 300; i++)		/* a very long line */
		ASSERT_INT_EQ(sshbuf_put_u8(a, 'k'), 0);
	ASSERT_INT_EQ(sshbuf_putf(a, "\nno-newline-at-end"), 0);
	ASSERT_INT_EQ(hpn_early_hosts_lookup(a, "g", kexn, sizeof(kexn)), 1);
	ASSERT_STRING_EQ(kexn, "curve25519-sha256");
	ASSERT_INT_EQ(hpn_early_hosts_lookup(a, "garbage", kexn,
	    sizeof(kexn)), 0);
	sshbuf_reset(b);
	ASSERT_INT_EQ(hpn_early_hosts_update(a, "h", NULL, b), 0);
	ASSERT_U_INT_EQ(hosts_lines(b), 1);	/* g's only */
	ASSERT_INT_EQ(hpn_early_hosts_lookup(b, "g", kexn, sizeof(kexn)), 1);
	TEST_DONE();

	TEST_START("early: hosts file, at most HPN_EARLY_HOSTS_MAX lines");
	sshbuf_reset(a);
	ASSERT_PTR_NE(c = sshbuf_new(), NULL);
	for (i = 0; i < HPN_EARLY_HOSTS_MAX + 20; i++) {
		snprintf(name, sizeof(name), "host%u", i);
		sshbuf_reset(c);
		ASSERT_INT_EQ(hpn_early_hosts_update(NULL, name,
		    "curve25519-sha256", c), 0);
		ASSERT_INT_EQ(sshbuf_putb(a, c), 0);
	}
	sshbuf_reset(b);
	ASSERT_INT_EQ(hpn_early_hosts_update(a, "new",
	    "curve25519-sha256", b), 0);
	ASSERT_U_INT_EQ(hosts_lines(b), HPN_EARLY_HOSTS_MAX);
	ASSERT_INT_EQ(hpn_early_hosts_lookup(b, "new", kexn, sizeof(kexn)), 1);
	ASSERT_INT_EQ(hpn_early_hosts_lookup(b, "host0", kexn,
	    sizeof(kexn)), 1);
	ASSERT_INT_EQ(hpn_early_hosts_lookup(b, "host1019", kexn,
	    sizeof(kexn)), 0);
	sshbuf_free(a);
	sshbuf_free(b);
	sshbuf_free(c);
	TEST_DONE();

	TEST_START("early: hosts file's default, by known_hosts");
	cp = hpn_early_hosts_default("~/.ssh/known_hosts");
	ASSERT_STRING_EQ(cp, "~/.ssh/hpn_early_hosts");
	free(cp);
	cp = hpn_early_hosts_default("/a/b/kh");
	ASSERT_STRING_EQ(cp, "/a/b/hpn_early_hosts");
	free(cp);
	cp = hpn_early_hosts_default("kh");
	ASSERT_STRING_EQ(cp, "hpn_early_hosts");
	free(cp);
	cp = hpn_early_hosts_default("/dev/null");
	ASSERT_STRING_EQ(cp, "none");
	free(cp);
	cp = hpn_early_hosts_default("none");
	ASSERT_STRING_EQ(cp, "none");
	free(cp);
	TEST_DONE();

	TEST_START("early: RFC 4253's guess rule");
	my = prop("a,b", "k1,k2");
	peer = prop("a,c", "k1");
	ASSERT_INT_EQ(hpn_early_proposals_match(my, peer), 1);
	kex_prop_free(peer);
	peer = prop("a", "k2,k1");
	ASSERT_INT_EQ(hpn_early_proposals_match(my, peer), 0);
	kex_prop_free(peer);
	peer = prop("b,a", "k1");
	ASSERT_INT_EQ(hpn_early_proposals_match(my, peer), 0);
	ASSERT_STRING_EQ(my[PROPOSAL_KEX_ALGS], "a,b");	/* unchanged */
	kex_prop_free(peer);
	kex_prop_free(my);
	TEST_DONE();

	TEST_START("early: markers in the first KEXINIT, both or nothing");
	memset(&ssh, 0, sizeof(ssh));
	ASSERT_PTR_NE(kex = kex_new(), NULL);
	ssh.kex = kex;
	kex->server = 1;
	cp = xstrdup("a,b");
	hpn_early_kex_names(&ssh, &cp);
	ASSERT_STRING_EQ(cp, "a,b," HPN_EARLY_S);	/* a server: always */
	my = prop(cp, "k");
	free(cp);
	peer = prop("a," HPN_EARLY_S, "k");	/* not the client's name */
	hpn_early_kex_peer(&ssh, my, peer);
	ASSERT_INT_EQ(hpn_early_agreed(&ssh), 0);
	kex_prop_free(peer);
	peer = prop("a,ext-info-c," HPN_EARLY_C, "k");
	hpn_early_kex_peer(&ssh, my, peer);
	ASSERT_INT_EQ(hpn_early_agreed(&ssh), 1);
	kex_prop_free(my);
	kex_prop_free(peer);
	kex->server = 0;			/* a client: when configured */
	kex->flags = 0;
	cp = xstrdup("a");
	hpn_early_configure(0);
	hpn_early_kex_names(&ssh, &cp);
	ASSERT_STRING_EQ(cp, "a");
	hpn_early_configure(1);
	hpn_early_kex_names(&ssh, &cp);
	ASSERT_STRING_EQ(cp, "a," HPN_EARLY_C);
	hpn_early_configure(0);
	free(cp);
	TEST_DONE();

	TEST_START("early: the server's rule for a client's guess");
	kex->server = 1;
	kex->flags = KEX_INITIAL | HPN_KEX_EARLY;
	kex->name = xstrdup("mlkem768x25519-sha256");
	peer = prop("mlkem768x25519-sha256,curve25519-sha256", "k9,k1");
	ASSERT_INT_EQ(hpn_early_guess_ok(&ssh, peer), 1);
	kex->flags = KEX_INITIAL;		/* markers not both sent */
	ASSERT_INT_EQ(hpn_early_guess_ok(&ssh, peer), 0);
	kex->flags = HPN_KEX_EARLY;		/* not the first exchange */
	ASSERT_INT_EQ(hpn_early_guess_ok(&ssh, peer), 0);
	kex->flags = KEX_INITIAL | HPN_KEX_EARLY;
	kex->server = 0;			/* a client takes no guess */
	ASSERT_INT_EQ(hpn_early_guess_ok(&ssh, peer), 0);
	kex->server = 1;
	kex_prop_free(peer);
	peer = prop("curve25519-sha256,mlkem768x25519-sha256", "k1");
	ASSERT_INT_EQ(hpn_early_guess_ok(&ssh, peer), 0);	/* not first */
	kex_prop_free(peer);
	kex_free(kex);
	TEST_DONE();

	TEST_START("early: methods whose first packet may be guessed");
	ASSERT_INT_EQ(hpn_early_guessable("mlkem768x25519-sha256"), 1);
	ASSERT_INT_EQ(hpn_early_guessable("sntrup761x25519-sha512"), 1);
	ASSERT_INT_EQ(hpn_early_guessable("curve25519-sha256@libssh.org"), 1);
	ASSERT_INT_EQ(hpn_early_guessable("ecdh-sha2-nistp256"), 0);
	ASSERT_INT_EQ(hpn_early_guessable("diffie-hellman-group14-sha256"),
	    0);
	ASSERT_INT_EQ(hpn_early_guessable("nonsense"), 0);
	TEST_DONE();
}

/* OpenSSH's test_helper (10.1 and later) runs these with -b. */
void benchmarks(void);
/* Reads of one file as the engine plans them (hpn-sftp.c). */
static void
sftp_ref_tests(void)
{
	u_char ref[HPN_REF_LEN_MAX], bad[HPN_REF_LEN_MAX + 4];
	u_int32_t ids[HPN_REF_IDS + 1] = { 7, 9, 11, 13, 15 };
	size_t len;

	TEST_START("handle references: composed, resolved, forgotten");
	len = hpn_sftp_ref_make(ref, ids, 1);
	ASSERT_SIZE_T_EQ(len, 5);
	ASSERT_U8_EQ(ref[0], HPN_REF_MAGIC);
	ASSERT_U32_EQ(PEEK_U32(ref + 1), 7);
	/* nothing opened by request 7 yet */
	ASSERT_INT_EQ(hpn_sftp_ref_resolve(ref, len), -1);
	hpn_sftp_ref_note(7, 3);
	ASSERT_INT_EQ(hpn_sftp_ref_resolve(ref, len), 3);
	hpn_sftp_ref_forget(3);
	ASSERT_INT_EQ(hpn_sftp_ref_resolve(ref, len), -1);
	TEST_DONE();

	TEST_START("handle references: the first of several that opened");
	len = hpn_sftp_ref_make(ref, ids, 2);	/* 7, then 9 */
	ASSERT_SIZE_T_EQ(len, 9);
	hpn_sftp_ref_note(9, 0);
	ASSERT_INT_EQ(hpn_sftp_ref_resolve(ref, len), 0);
	hpn_sftp_ref_note(7, 5);
	ASSERT_INT_EQ(hpn_sftp_ref_resolve(ref, len), 5);
	hpn_sftp_ref_forget(5);
	ASSERT_INT_EQ(hpn_sftp_ref_resolve(ref, len), 0);
	hpn_sftp_ref_forget(0);
	ASSERT_INT_EQ(hpn_sftp_ref_resolve(ref, len), -1);
	TEST_DONE();

	TEST_START("handle references: an id made again, the newest wins");
	len = hpn_sftp_ref_make(ref, ids, 1);
	hpn_sftp_ref_note(7, 1);
	hpn_sftp_ref_note(7, 2);
	ASSERT_INT_EQ(hpn_sftp_ref_resolve(ref, len), 2);
	hpn_sftp_ref_forget(2);
	ASSERT_INT_EQ(hpn_sftp_ref_resolve(ref, len), -1);
	hpn_sftp_ref_forget(1);
	/* forgetting what was never noted, or out of range, is harmless */
	hpn_sftp_ref_forget(1000);
	hpn_sftp_ref_forget(-1);
	hpn_sftp_ref_note(8, -1);
	TEST_DONE();

	TEST_START("handle references: what is not one");
	/* a real handle (4 bytes) and other lengths are not references */
	ASSERT_INT_EQ(hpn_sftp_ref_resolve(ref, 4), -2);
	ASSERT_INT_EQ(hpn_sftp_ref_resolve(ref, 0), -2);
	ASSERT_INT_EQ(hpn_sftp_ref_resolve(ref, 6), -2);
	memset(bad, 0, sizeof(bad));
	bad[0] = HPN_REF_MAGIC;
	ASSERT_INT_EQ(hpn_sftp_ref_resolve(bad, 1 + 4 * (HPN_REF_IDS + 1)),
	    -2);
	bad[0] = 0;
	ASSERT_INT_EQ(hpn_sftp_ref_resolve(bad, 5), -2);
	/* four ids at most */
	ASSERT_SIZE_T_EQ(hpn_sftp_ref_make(ref, ids, HPN_REF_IDS),
	    HPN_REF_LEN_MAX);
	TEST_DONE();
}

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

	TEST_START("sftp reads: data past an early EOF: the hole asked again");
	hpn_sftp_rd_init(&rd, 96, 1, 32);
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);	/* 0 */
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);	/* 32 */
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);	/* 64 */
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);	/* probe */
	hpn_sftp_rd_data(&rd, 0, 32, 32);
	hpn_sftp_rd_eof(&rd, 32);		/* too early ... */
	hpn_sftp_rd_data(&rd, 64, 32, 32);	/* ... data beyond it */
	ASSERT_INT_EQ(hpn_sftp_rd_done(&rd), 0);
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);
	ASSERT_U64_EQ(off, 32);			/* the hole, again */
	ASSERT_U_INT_EQ(len, 32);
	hpn_sftp_rd_data(&rd, 32, 32, 32);
	hpn_sftp_rd_eof(&rd, 96);		/* the probe */
	while (hpn_sftp_rd_next(&rd, &off, &len))
		hpn_sftp_rd_eof(&rd, off);	/* reading on: EOFs */
	ASSERT_INT_EQ(hpn_sftp_rd_done(&rd), 1);
	ASSERT_U64_EQ(rd.eof, 96);
	ASSERT_U64_EQ(rd.maxack, 96);
	hpn_sftp_rd_free(&rd);
	TEST_DONE();

	TEST_START("sftp reads: a part never reads past its end");
	hpn_sftp_rd_init(&rd, 100, 1, 32);
	hpn_sftp_rd_limit(&rd, 100);
	rd.next = 40;				/* the part [40, 100) */
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);
	ASSERT_U64_EQ(off, 72);
	ASSERT_U_INT_EQ(len, 28);		/* the last one, to its end */
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 0);	/* no probe */
	hpn_sftp_rd_eof(&rd, 40);		/* an early EOF ... */
	hpn_sftp_rd_data(&rd, 72, 28, 28);	/* ... then data */
	ASSERT_U64_EQ(rd.eof, 100);		/* not "it grew" */
	ASSERT_INT_EQ(rd.size_known, 1);
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);
	ASSERT_U64_EQ(off, 40);
	ASSERT_U_INT_EQ(len, 32);		/* the hole, within the part */
	hpn_sftp_rd_data(&rd, 40, 32, 32);
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 0);
	ASSERT_INT_EQ(hpn_sftp_rd_done(&rd), 1);
	hpn_sftp_rd_limit(&rd, 64);		/* stolen from: ends sooner */
	ASSERT_U64_EQ(rd.eof, 64);
	ASSERT_U64_EQ(rd.size, 64);
	hpn_sftp_rd_free(&rd);
	TEST_DONE();

	TEST_START("sftp reads: a size near 2^64 never wraps");
	hpn_sftp_rd_init(&rd, UINT64_MAX - 20, 1, 32);
	rd.next = UINT64_MAX - 50;
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);
	ASSERT_U_INT_EQ(len, 30);
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);	/* probe */
	ASSERT_U64_EQ(off, UINT64_MAX - 20);
	ASSERT_U_INT_EQ(len, 20);		/* cut at 2^64 - 1 */
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 0);
	ASSERT_U64_EQ(rd.next, UINT64_MAX);
	hpn_sftp_rd_free(&rd);
	TEST_DONE();

	TEST_START("sftp reads: empty DATA replies are counted");
	hpn_sftp_rd_init(&rd, 100, 1, 32);
	ASSERT_INT_EQ(hpn_sftp_rd_next(&rd, &off, &len), 1);
	hpn_sftp_rd_data(&rd, 0, 32, 0);
	hpn_sftp_rd_data(&rd, 0, 32, 0);
	ASSERT_U_INT_EQ(rd.empty, 2);
	hpn_sftp_rd_data(&rd, 0, 32, 1);
	ASSERT_U_INT_EQ(rd.empty, 0);
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

/* hex of md[0..len) */
static const char *
hex(const u_char *md, u_int len)
{
	static char buf[2 * HPN_HASH_MD_MAX + 1];
	u_int i;

	for (i = 0; i < len && i < HPN_HASH_MD_MAX; i++)
		snprintf(buf + 2 * i, 3, "%02x", md[i]);
	buf[2 * i] = '\0';
	return buf;
}

/*
 * xxh128, where the build has libxxhash: digests as Python's xxhash
 * module and xxh128sum print them (computed there: big-endian), of ranges
 * across reads and at the end; pieces as their ranges.
 */
static void
hash_xxh128_tests(void)
{
	char path[] = "/tmp/test_hpn.XXXXXX";
	u_char *data, md[HPN_HASH_MD_MAX], want[HPN_HASH_MD_MAX], *mds;
	u_int mdlen, wlen, np, k;
	u_int64_t done, o, piece = HPN_HASH_PIECE_MIN;
	size_t i, n = 4096 * 256;	/* bytes(range(256)) * 4096 */
	int fd;

	if (strstr(hpn_hash_algs(), "xxh128") == NULL) {
		TEST_START("hash-range: no xxh128 in this build");
		ASSERT_STRING_EQ(hpn_hash_pick("xxh128,sha256"), "sha256");
		TEST_DONE();
		return;
	}
	TEST_START("hash-range: xxh128 first, picked where asked for");
	ASSERT_STRING_EQ(hpn_hash_algs(), "xxh128,sha256,blake2b512");
	ASSERT_STRING_EQ(hpn_hash_pick("xxh128"), "xxh128");
	ASSERT_STRING_EQ(hpn_hash_pick("md5,xxh128,sha256"), "xxh128");
	ASSERT_STRING_EQ(hpn_hash_pick("sha256,xxh128"), "sha256");
	ASSERT_PTR_EQ(hpn_hash_pick("xxh3,xxh64,xxh128x"), NULL);
	TEST_DONE();

	data = xmalloc(n);
	for (i = 0; i < n; i++)
		data[i] = (u_char)i;
	ASSERT_INT_NE(fd = mkstemp(path), -1);
	ASSERT_SIZE_T_EQ((size_t)write(fd, data, n), n);

	TEST_START("hash-range: xxh128 digests as xxh128sum's");
	ASSERT_INT_EQ(hpn_hash_range(fd, "xxh128", 0, n, md, &mdlen, &done),
	    0);
	ASSERT_U64_EQ(done, n);
	ASSERT_U_INT_EQ(mdlen, 16);
	ASSERT_STRING_EQ(hex(md, mdlen), "1b208d2839093774d36c0e13a3df139e");
	ASSERT_INT_EQ(hpn_hash_range(fd, "xxh128", 1000, 700000, md, &mdlen,
	    &done), 0);
	ASSERT_U64_EQ(done, 700000);
	ASSERT_STRING_EQ(hex(md, mdlen), "edbf375a2029e46ddf75e29ad3ee9bcd");
	ASSERT_INT_EQ(hpn_hash_range(fd, "xxh128", n - 10, 1000, md, &mdlen,
	    &done), 0);
	ASSERT_U64_EQ(done, 10);
	ASSERT_STRING_EQ(hex(md, mdlen), "a34ee5cb53d0e33bab809317afce99dc");
	ASSERT_INT_EQ(hpn_hash_range(fd, "xxh128", n + 1, 1000, md, &mdlen,
	    &done), 0);
	ASSERT_U64_EQ(done, 0);
	ASSERT_STRING_EQ(hex(md, mdlen), "99aa06d3014798d86001c324468d497f");
	TEST_DONE();

	TEST_START("hash-range: xxh128 pieces, in parallel, as their ranges");
	/* 2 MiB more, then pieces of 1 MiB: the last ones past the end */
	ASSERT_INT_EQ(ftruncate(fd, 3 * n + 77), 0);
	ASSERT_INT_EQ(hpn_hash_pieces(fd, "xxh128", 5, 5 * piece, piece,
	    &mds, &np, &mdlen, &done), 0);
	ASSERT_U_INT_EQ(np, 5);
	ASSERT_U64_EQ(done, 3 * n + 77 - 5);
	for (k = 0; k < np; k++) {
		o = 5 + (u_int64_t)k * piece;
		ASSERT_INT_EQ(hpn_hash_range(fd, "xxh128", o, piece, want,
		    &wlen, &done), 0);
		ASSERT_U_INT_EQ(mdlen, wlen);
		ASSERT_MEM_EQ(mds + (size_t)k * HPN_HASH_MD_MAX, want, wlen);
	}
	free(mds);
	TEST_DONE();

	TEST_START("hash-range: the server's reply with xxh128");
	{
		struct sshbuf *msg;
		u_char type;
		u_int32_t v;
		char *alg;

		ASSERT_PTR_NE(msg = sshbuf_new(), NULL);
		ASSERT_U_INT_EQ(reply_to(fd, msg, "xxh128,sha256", 0, 3, 0),
		    SSH2_FX_OK);
		ASSERT_INT_EQ(sshbuf_get_u8(msg, &type), 0);
		ASSERT_INT_EQ(sshbuf_get_u32(msg, &v), 0);
		ASSERT_INT_EQ(sshbuf_get_cstring(msg, &alg, NULL), 0);
		ASSERT_STRING_EQ(alg, "xxh128");
		free(alg);
		ASSERT_INT_EQ(sshbuf_get_u64(msg, &done), 0);
		ASSERT_U64_EQ(done, 3);
		ASSERT_INT_EQ(sshbuf_get_u32(msg, &v), 0);
		ASSERT_U_INT_EQ(v, 1);
		ASSERT_INT_EQ(sshbuf_get_u32(msg, &v), 0);
		ASSERT_U_INT_EQ(v, 16);
		/* bytes 0, 1, 2 */
		ASSERT_STRING_EQ(hex(sshbuf_ptr(msg), 16),
		    "e3b55f57945a17cf5f4299fc161c9cbb");
		sshbuf_free(msg);
	}
	TEST_DONE();

	close(fd);
	unlink(path);
	free(data);
}

/* ResumeHash's values (hpn-options.c) */
static void
hash_option_tests(void)
{
	char why[128];
	int xxh = strstr(hpn_hash_algs(), "xxh128") != NULL;

	TEST_START("ResumeHash: the default, and lists checked");
	ASSERT_STRING_EQ(hpn_hash_default(), hpn_hash_algs());
	ASSERT_INT_EQ(hpn_parse_hash_list("sha256", why, sizeof(why)), 0);
	ASSERT_INT_EQ(hpn_parse_hash_list("blake2b512,sha256", why,
	    sizeof(why)), 0);
	ASSERT_INT_EQ(hpn_parse_hash_list("xxh128,sha256", why, sizeof(why)),
	    xxh ? 0 : -1);
	if (!xxh)
		ASSERT_PTR_NE(strstr(why, "not in this build"), NULL);
	ASSERT_INT_EQ(hpn_parse_hash_list("md5", why, sizeof(why)), -1);
	ASSERT_PTR_NE(strstr(why, "unknown algorithm \"md5\""), NULL);
	ASSERT_INT_EQ(hpn_parse_hash_list("sha256,,blake2b512", why,
	    sizeof(why)), -1);
	ASSERT_INT_EQ(hpn_parse_hash_list("sha256,", why, sizeof(why)), -1);
	ASSERT_INT_EQ(hpn_parse_hash_list("sha256,blake2b512,sha256", why,
	    sizeof(why)), -1);
	ASSERT_PTR_NE(strstr(why, "named twice"), NULL);
	ASSERT_INT_EQ(hpn_parse_hash_list("", why, sizeof(why)), -1);
	ASSERT_INT_EQ(hpn_parse_hash_list(NULL, why, sizeof(why)), -1);
	ASSERT_INT_EQ(hpn_parse_hash_list("SHA256", why, sizeof(why)), -1);
	TEST_DONE();
}

/*
 * A file cut shorter as it is hashed from its mapping (hpn_hash_test_mapped
 * cuts it once each piece is mapped, before it is hashed): its bytes past
 * the new end fault (SIGBUS) or, in the last page, read as zeros, and the
 * answer is that of the file as it now is, as read() gives it: no signal.
 * A SIGBUS that is not the hash's still ends the process as before.
 */
static off_t shrink_to;

static void
shrink(int fd)
{
	ASSERT_INT_EQ(ftruncate(fd, shrink_to), 0);
}

/* The hash of data[from, to) into want. */
static void
ref_hash(const char *alg, const u_char *data, u_int64_t from, u_int64_t to,
    u_char *want, u_int *wlen)
{
	u_int64_t done;
	char path[] = "/tmp/test_hpn.XXXXXX";
	int fd;

	if (strcmp(alg, "xxh128") != 0) {
		one_shot(alg, data + from, to > from ? to - from : 0, want,
		    wlen);
		return;
	}
	/* xxh128: libxxhash through a file not cut (checked above) */
	ASSERT_INT_NE(fd = mkstemp(path), -1);
	if (to > from)
		ASSERT_SIZE_T_EQ((size_t)write(fd, data + from, to - from),
		    to - from);
	ASSERT_INT_EQ(hpn_hash_range(fd, alg, 0, HPN_HASH_RANGE_MAX, want,
	    wlen, &done), 0);
	ASSERT_U64_EQ(done, to > from ? to - from : 0);
	close(fd);
	unlink(path);
}

/*
 * Did a child that runs f end at its SIGBUS?  Killed by it, or, where a
 * sanitizer's handler was there before ours, that handler's exit status
 * (f's own are 2: not set up, 3 and 4: went on after the signal).
 */
static int
dies_of_sigbus(void (*f)(void))
{
	struct rlimit rl = { 0, 0 };
	pid_t pid;
	int status;

#ifdef TEST_ASAN
	/*
	 * The sanitizer's report of this SIGBUS is what the test expects, not
	 * a finding: it goes to a file of the test's (path.PID), not to
	 * make check-asan's directory of reports, and is removed.
	 */
	char rpath[64], rfile[96];

	snprintf(rpath, sizeof(rpath), "/tmp/test_hpn-sigbus.%ld",
	    (long)getpid());
#endif
	ASSERT_INT_NE(pid = fork(), -1);
	if (pid == 0) {
		setrlimit(RLIMIT_CORE, &rl);	/* no core file */
#ifdef TEST_ASAN
		__sanitizer_set_report_path(rpath);
#endif
		f();
		_exit(0);
	}
	ASSERT_INT_EQ(waitpid(pid, &status, 0), pid);
#ifdef TEST_ASAN
	snprintf(rfile, sizeof(rfile), "%s.%ld", rpath, (long)pid);
	unlink(rfile);
#endif
	if (WIFSIGNALED(status))
		return WTERMSIG(status) == SIGBUS;
	return WIFEXITED(status) && WEXITSTATUS(status) != 0 &&
	    (WEXITSTATUS(status) < 2 || WEXITSTATUS(status) > 4);
}

/* A fault outside the hash, once its handler is there */
static void
bus_elsewhere(void)
{
	char path[] = "/tmp/test_hpn.XXXXXX";
	u_char md[HPN_HASH_MD_MAX], *p;
	u_int mdlen;
	u_int64_t done;
	long pg = sysconf(_SC_PAGESIZE);
	int fd;

	if ((fd = mkstemp(path)) == -1 || ftruncate(fd, 4 * pg) != 0 ||
	    hpn_hash_range(fd, "sha256", 0, 4 * pg, md, &mdlen, &done) != 0 ||
	    (p = mmap(NULL, 4 * pg, PROT_READ, MAP_SHARED, fd, 0)) ==
	    MAP_FAILED || ftruncate(fd, pg) != 0)
		_exit(2);
	unlink(path);
	if (p[2 * pg] == 7)	/* past the end: SIGBUS */
		_exit(3);
	_exit(4);
}

/* SIGBUS sent, once the handler is there */
static void
bus_sent(void)
{
	char path[] = "/tmp/test_hpn.XXXXXX";
	u_char md[HPN_HASH_MD_MAX];
	u_int mdlen;
	u_int64_t done;
	int fd;

	if ((fd = mkstemp(path)) == -1 || ftruncate(fd, 100000) != 0 ||
	    hpn_hash_range(fd, "sha256", 0, 100000, md, &mdlen, &done) != 0)
		_exit(2);
	unlink(path);
	kill(getpid(), SIGBUS);
	_exit(3);
}

/*
 * [off, off + len) of a file holding data (n bytes) hashed from a
 * mapping, the file cut to cut bytes once mapped: the hash is of
 * [off, cut), as the file now is.
 */
static void
cut_range(int fd, const char *alg, const u_char *data, size_t n,
    u_int64_t off, u_int64_t len, off_t cut)
{
	u_char md[HPN_HASH_MD_MAX], want[HPN_HASH_MD_MAX];
	u_int mdlen, wlen;
	u_int64_t done;

	ASSERT_INT_EQ(ftruncate(fd, 0), 0);
	ASSERT_SIZE_T_EQ((size_t)pwrite(fd, data, n, 0), n);
	shrink_to = cut;
	hpn_hash_test_mapped = shrink;
	ASSERT_INT_EQ(hpn_hash_range(fd, alg, off, len, md, &mdlen, &done), 0);
	hpn_hash_test_mapped = NULL;
	ASSERT_U64_EQ(done, (u_int64_t)cut - off);
	ref_hash(alg, data, off, (u_int64_t)cut, want, &wlen);
	ASSERT_U_INT_EQ(mdlen, wlen);
	ASSERT_MEM_EQ(md, want, wlen);
}

static void
hash_shrink_tests(void)
{
	char path[] = "/tmp/test_hpn.XXXXXX", *algs, *alg, *cp;
	u_char *data, *mds, want[HPN_HASH_MD_MAX];
	u_int mdlen, wlen, np, k;
	u_int64_t done, o, piece = HPN_HASH_PIECE_MIN;
	size_t i, n = 3 * 1024 * 1024 + 12345;
	int fd;

	data = xmalloc(n);
	for (i = 0; i < n; i++)
		data[i] = (u_char)(i * 13 + i / 509 + 1);	/* no zeros */
	ASSERT_INT_NE(fd = mkstemp(path), -1);
	cp = algs = xstrdup(hpn_hash_algs());
	while ((alg = strsep(&cp, ",")) != NULL) {
		TEST_START("hash-range: a file cut under the mapping, faulting");
		cut_range(fd, alg, data, n, 3, n, 1024 * 1024 + 100);
		TEST_DONE();

		TEST_START("hash-range: a file cut inside the last page mapped");
		/* [7, 2 piece + 7) cut 2 bytes short: no fault, zeros */
		cut_range(fd, alg, data, n, 7, 2 * piece, 2 * piece + 5);
		TEST_DONE();

		TEST_START("hash-range: pieces of a file cut as they are hashed");
		ASSERT_INT_EQ(ftruncate(fd, 0), 0);
		ASSERT_SIZE_T_EQ((size_t)pwrite(fd, data, n, 0), n);
		/* piece 1 is [piece + 7, 2 piece + 7): cut 2 bytes short */
		shrink_to = 2 * piece + 5;
		hpn_hash_test_mapped = shrink;
		ASSERT_INT_EQ(hpn_hash_pieces(fd, alg, 7, n - 14, piece,
		    &mds, &np, &mdlen, &done), 0);
		hpn_hash_test_mapped = NULL;
		ASSERT_U_INT_EQ(np, 4);
		ASSERT_U64_EQ(done, shrink_to - 7);
		for (k = 0; k < np; k++) {
			o = 7 + (u_int64_t)k * piece;
			ref_hash(alg, data, MINIMUM(o, (u_int64_t)shrink_to),
			    MINIMUM(o + piece, (u_int64_t)shrink_to),
			    want, &wlen);
			ASSERT_U_INT_EQ(mdlen, wlen);
			ASSERT_MEM_EQ(mds + (size_t)k * HPN_HASH_MD_MAX, want,
			    wlen);
		}
		free(mds);
		TEST_DONE();
	}
	free(algs);
	close(fd);
	unlink(path);
	free(data);

	TEST_START("hash-range: any other SIGBUS ends the process as before");
	ASSERT_INT_EQ(dies_of_sigbus(bus_elsewhere), 1);
	ASSERT_INT_EQ(dies_of_sigbus(bus_sent), 1);
	TEST_DONE();
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
	hash_xxh128_tests();
	hash_shrink_tests();
	hash_option_tests();
}

/* --- hpn-metrics.c: TCP stack metrics ----------------------------------- */

/* tcpi_layout.c: offsetof(struct tcp_info, tcpi_<name>) of <linux/tcp.h>,
 * -1 when not on Linux or the installed headers lack the field. */
long	hpn_test_tcpi_offset(const char *);

#define MBIT(col)	((u_int64_t)1 << (col))
#define BIG		((u_int64_t)1 << 40)	/* needs all 64 bits */

/*
 * A TCP_INFO with a distinct value in each field we read (noise in the
 * others); want[col] is what the sample's column should hold.
 */
static void
tcpi_fill(struct hpn_tcpi *ti, u_int64_t *want)
{
	memset(ti, 0xee, sizeof(*ti));
#define F(col, f, v) do { ti->f = (v); want[col] = (v); } while (0)
	F(HPN_M_RTT, rtt, 101);
	F(HPN_M_RTTVAR, rttvar, 102);
	F(HPN_M_MIN_RTT, min_rtt, 103);
	F(HPN_M_SND_CWND, snd_cwnd, 104);
	F(HPN_M_SND_MSS, snd_mss, 105);
	F(HPN_M_SND_SSTHRESH, snd_ssthresh, 106);
	F(HPN_M_RCV_SPACE, rcv_space, 107);
	F(HPN_M_RCV_SSTHRESH, rcv_ssthresh, 108);
	F(HPN_M_RCV_RTT, rcv_rtt, 109);
	F(HPN_M_UNACKED, unacked, 110);
	F(HPN_M_SACKED, sacked, 111);
	F(HPN_M_LOST, lost, 112);
	F(HPN_M_RETRANS, retrans, 113);
	F(HPN_M_TOTAL_RETRANS, total_retrans, 114);
	F(HPN_M_REORDERING, reordering, 115);
	F(HPN_M_DELIVERY_RATE, delivery_rate, BIG + 116);
	F(HPN_M_PACING_RATE, pacing_rate, BIG + 117);
	F(HPN_M_BYTES_SENT, bytes_sent, BIG + 118);
	F(HPN_M_BYTES_ACKED, bytes_acked, BIG + 119);
	F(HPN_M_BYTES_RECEIVED, bytes_received, BIG + 120);
	F(HPN_M_BYTES_RETRANS, bytes_retrans, BIG + 121);
	F(HPN_M_NOTSENT_BYTES, notsent_bytes, 122);
	F(HPN_M_SND_WND, snd_wnd, 123);
	F(HPN_M_BUSY_TIME, busy_time, BIG + 124);
	F(HPN_M_RWND_LIMITED, rwnd_limited, BIG + 125);
	F(HPN_M_SNDBUF_LIMITED, sndbuf_limited, BIG + 126);
#undef F
}

/* The columns Linux before 3.15 (no tcpi_pacing_rate) cannot give. */
static const int tcpi_new_cols[] = {
	HPN_M_PACING_RATE, HPN_M_BYTES_ACKED, HPN_M_BYTES_RECEIVED,
	HPN_M_MIN_RTT, HPN_M_DELIVERY_RATE, HPN_M_BUSY_TIME,
	HPN_M_RWND_LIMITED, HPN_M_SNDBUF_LIMITED, HPN_M_BYTES_SENT,
	HPN_M_BYTES_RETRANS, HPN_M_SND_WND, HPN_M_NOTSENT_BYTES,
};

static int
is_new_col(u_int col)
{
	size_t i;

	for (i = 0; i < sizeof(tcpi_new_cols) / sizeof(*tcpi_new_cols); i++)
		if (tcpi_new_cols[i] == (int)col)
			return 1;
	return 0;
}

static void
mset(struct hpn_msample *s, u_int col, u_int64_t v)
{
	s->v[col] = v;
	s->have |= MBIT(col);
}

static size_t
count_char(const char *p, int c)
{
	size_t n = 0;

	for (; *p != '\0'; p++)
		if (*p == c)
			n++;
	return n;
}

/* Field i (0: time) of a CSV line, in a static buffer. */
static const char *
csv_field(const char *line, u_int i)
{
	static char f[128];
	size_t n;

	for (; i > 0; i--) {
		ASSERT_PTR_NE(line = strchr(line, ','), NULL);
		line++;
	}
	n = strcspn(line, ",\n");
	ASSERT_SIZE_T_LT(n, sizeof(f));
	memcpy(f, line, n);
	f[n] = '\0';
	return f;
}

/*
 * One end's sample for the summary: the kernel's chrono counters (busy,
 * receive window limited, send buffer limited; microseconds), bytes, the
 * total of retransmits, cwnd (segments) and mss, RTT (microseconds).
 */
static void
summary_sample(struct hpn_msample *s, double t, u_int64_t busy,
    u_int64_t rwnd, u_int64_t sndbuf, u_int64_t acked, u_int64_t received,
    u_int64_t retrans, u_int64_t cwnd, u_int64_t mss, u_int64_t rtt)
{
	memset(s, 0, sizeof(*s));
	s->time = t;
	mset(s, HPN_M_BUSY_TIME, busy);
	mset(s, HPN_M_RWND_LIMITED, rwnd);
	mset(s, HPN_M_SNDBUF_LIMITED, sndbuf);
	mset(s, HPN_M_BYTES_ACKED, acked);
	mset(s, HPN_M_BYTES_RECEIVED, received);
	mset(s, HPN_M_TOTAL_RETRANS, retrans);
	mset(s, HPN_M_SND_CWND, cwnd);
	mset(s, HPN_M_SND_MSS, mss);
	mset(s, HPN_M_RTT, rtt);
}

/*
 * A sending end: 10 s, busy 8 s of it, 1 s of that limited by the receive
 * window, none by the send buffer; 7 retransmits; RTTs 120, 100, 80 ms
 * (median 100); peak cwnd 2000 * 1500 bytes; 1e9 bytes acked.
 */
static void
summary_sender(struct hpn_mend *e, double t0, u_int64_t stalls)
{
	struct hpn_msample s;

	summary_sample(&s, t0, 1000000, 500000, 0, 1000, 500, 5, 100, 1448,
	    120000);
	mset(&s, HPN_M_WINDOW_STALLS, 10);
	hpn_mend_add(e, &s);
	summary_sample(&s, t0 + 5, 5000000, 1000000, 0, 500000000, 700, 9,
	    2000, 1500, 100000);
	mset(&s, HPN_M_WINDOW_STALLS, 10 + stalls / 2);
	hpn_mend_add(e, &s);
	summary_sample(&s, t0 + 10, 9000000, 1500000, 0, 1000001000, 900, 12,
	    1000, 1500, 80000);
	mset(&s, HPN_M_WINDOW_STALLS, 10 + stalls);
	hpn_mend_add(e, &s);
}

/* A receiving end: acks little, receives 1e9 bytes; RTT 50 ms. */
static void
summary_receiver(struct hpn_mend *e, double t0, int n)
{
	struct hpn_msample s;
	int i;

	for (i = 0; i < n; i++) {
		summary_sample(&s, t0 + 10.0 * i / (n - 1 ? n - 1 : 1),
		    100 * i, 0, 0, 1000 + 100 * i, 1000000000ULL * i, 0,
		    10, 1448, 50000);
		hpn_mend_add(e, &s);
	}
}

static void
metrics_tests(void)
{
	struct hpn_tcpi ti;
	struct hpn_msample s, s2;
	u_int64_t want[HPN_M_NCOLS];
	u_int i;

	TEST_START("metrics: column names, one per column, found back");
	ASSERT_INT_LE(HPN_M_NCOLS, 64);		/* s.have is 64 bits */
	ASSERT_INT_EQ(HPN_M_TCP_COLS, HPN_M_SNDBUF_LIMITED + 1);
	for (i = 0; i < HPN_M_NCOLS; i++) {
		ASSERT_PTR_NE(hpn_mcol_name(i), NULL);
		ASSERT_INT_EQ(hpn_mcol_find(hpn_mcol_name(i)), (int)i);
	}
	ASSERT_PTR_EQ(hpn_mcol_name(HPN_M_NCOLS), NULL);
	ASSERT_STRING_EQ(hpn_mcol_name(HPN_M_RTT), "rtt_us");
	ASSERT_STRING_EQ(hpn_mcol_name(HPN_M_SNDBUF_LIMITED),
	    "sndbuf_limited");
	ASSERT_STRING_EQ(hpn_mcol_name(HPN_M_WINDOW_STALLS), "window_stalls");
	ASSERT_INT_EQ(hpn_mcol_find("no_such_metric"), -1);
	ASSERT_INT_EQ(hpn_mcol_find(""), -1);
	TEST_DONE();

	TEST_START("metrics: a whole TCP_INFO, every TCP column");
	memset(want, 0, sizeof(want));
	tcpi_fill(&ti, want);
	memset(&s, 0, sizeof(s));
	ASSERT_INT_EQ(hpn_tcpi_sample(&ti, sizeof(ti), &s), HPN_M_TCP_COLS);
	ASSERT_U64_EQ(s.have, MBIT(HPN_M_TCP_COLS) - 1);
	for (i = 0; i < HPN_M_TCP_COLS; i++)
		ASSERT_U64_EQ(s.v[i], want[i]);
	for (i = HPN_M_TCP_COLS; i < HPN_M_NCOLS; i++)
		ASSERT_U64_EQ(s.v[i], 0);
	/* longer than we know (a newer kernel): the same */
	memset(&s, 0, sizeof(s));
	ASSERT_INT_EQ(hpn_tcpi_sample(&ti, sizeof(ti) + 64, &s),
	    HPN_M_TCP_COLS);
	ASSERT_U64_EQ(s.have, MBIT(HPN_M_TCP_COLS) - 1);
	TEST_DONE();

	TEST_START("metrics: an old kernel's TCP_INFO, up to pacing_rate");
	memset(&s, 0, sizeof(s));
	ASSERT_INT_EQ(hpn_tcpi_sample(&ti, offsetof(struct hpn_tcpi,
	    pacing_rate), &s), HPN_M_TCP_COLS - 12);
	for (i = 0; i < HPN_M_TCP_COLS; i++) {
		if (is_new_col(i)) {
			ASSERT_U64_EQ(s.have & MBIT(i), 0);
			ASSERT_U64_EQ(s.v[i], 0);
		} else {
			ASSERT_U64_NE(s.have & MBIT(i), 0);
			ASSERT_U64_EQ(s.v[i], want[i]);
		}
	}
	ASSERT_U64_NE(s.have & MBIT(HPN_M_RTT), 0);
	ASSERT_U64_NE(s.have & MBIT(HPN_M_SND_CWND), 0);
	ASSERT_U64_NE(s.have & MBIT(HPN_M_TOTAL_RETRANS), 0);
	ASSERT_U64_EQ(s.v[HPN_M_TOTAL_RETRANS], 114);
	ASSERT_U64_EQ(s.have & MBIT(HPN_M_PACING_RATE), 0);
	ASSERT_U64_EQ(s.have & MBIT(HPN_M_BUSY_TIME), 0);
	ASSERT_U64_EQ(s.have & MBIT(HPN_M_SND_WND), 0);
	/* half of pacing_rate is not pacing_rate */
	memset(&s, 0, sizeof(s));
	hpn_tcpi_sample(&ti, offsetof(struct hpn_tcpi, pacing_rate) + 4, &s);
	ASSERT_U64_EQ(s.have & MBIT(HPN_M_PACING_RATE), 0);
	hpn_tcpi_sample(&ti, offsetof(struct hpn_tcpi, pacing_rate) + 8, &s);
	ASSERT_U64_NE(s.have & MBIT(HPN_M_PACING_RATE), 0);
	ASSERT_U64_EQ(s.v[HPN_M_PACING_RATE], BIG + 117);
	/* all but the last field, snd_wnd (Linux 5.4), by one byte */
	memset(&s, 0, sizeof(s));
	ASSERT_INT_EQ(hpn_tcpi_sample(&ti, offsetof(struct hpn_tcpi,
	    snd_wnd) + sizeof(ti.snd_wnd) - 1, &s), HPN_M_TCP_COLS - 1);
	ASSERT_U64_EQ(s.have, (MBIT(HPN_M_TCP_COLS) - 1) &
	    ~MBIT(HPN_M_SND_WND));
	TEST_DONE();

	TEST_START("metrics: an empty TCP_INFO, nothing");
	memset(&s, 0, sizeof(s));
	ASSERT_INT_EQ(hpn_tcpi_sample(&ti, 0, &s), 0);
	ASSERT_U64_EQ(s.have, 0);
	for (i = 0; i < HPN_M_NCOLS; i++)
		ASSERT_U64_EQ(s.v[i], 0);
	/* up to rtt's neighbour, and 3 bytes of rtt: not rtt itself */
	ASSERT_INT_EQ(hpn_tcpi_sample(&ti, offsetof(struct hpn_tcpi, rtt) + 3,
	    &s), 6);
	ASSERT_U64_EQ(s.have, MBIT(HPN_M_SND_MSS) | MBIT(HPN_M_UNACKED) |
	    MBIT(HPN_M_SACKED) | MBIT(HPN_M_LOST) | MBIT(HPN_M_RETRANS) |
	    MBIT(HPN_M_RCV_SSTHRESH));
	TEST_DONE();

	TEST_START("metrics: struct hpn_tcpi is the kernel's struct tcp_info");
	{
		static const struct {
			const char *name;
			size_t off;
		} f[] = {
#define O(f) { #f, offsetof(struct hpn_tcpi, f) }
			O(rtt), O(snd_cwnd), O(snd_mss), O(total_retrans),
			O(pacing_rate), O(bytes_acked), O(bytes_received),
			O(notsent_bytes), O(min_rtt), O(delivery_rate),
			O(busy_time), O(rwnd_limited), O(sndbuf_limited),
			O(bytes_sent), O(bytes_retrans), O(snd_wnd),
#undef O
		};
		long koff;
		u_int checked = 0;

		for (i = 0; i < sizeof(f) / sizeof(*f); i++) {
			if ((koff = hpn_test_tcpi_offset(f[i].name)) < 0)
				continue;	/* not in these headers */
			test_subtest_info("field %s", f[i].name);
			ASSERT_LONG_EQ((long)f[i].off, koff);
			checked++;
		}
#ifdef __linux__
		/* rtt .. total_retrans are in every Linux's headers */
		ASSERT_U_INT_GE(checked, 4);
#endif
		/* what the kernel documents, whatever the headers */
		ASSERT_SIZE_T_EQ(offsetof(struct hpn_tcpi, pacing_rate), 104);
		ASSERT_SIZE_T_EQ(offsetof(struct hpn_tcpi, busy_time), 168);
		ASSERT_SIZE_T_EQ(offsetof(struct hpn_tcpi, snd_wnd), 228);
		ASSERT_SIZE_T_EQ(sizeof(struct hpn_tcpi), 232);
	}
	TEST_DONE();

	TEST_START("metrics: a sample on the wire and back");
	{
		struct sshbuf *b, *t;
		size_t k, len;

		memset(&s, 0, sizeof(s));
		s.time = 1234.5;
		mset(&s, HPN_M_RTT, 100000);
		mset(&s, HPN_M_BYTES_ACKED, BIG * 1000 + 7);
		mset(&s, HPN_M_SNDBUF_LIMITED, 0);
		mset(&s, HPN_M_WINDOW_STALLS, UINT64_MAX);
		s.v[HPN_M_LOST] = 99;		/* absent: not sent */
		ASSERT_PTR_NE(b = sshbuf_new(), NULL);
		ASSERT_INT_EQ(hpn_msample_put(b, &s), 0);
		ASSERT_INT_EQ(hpn_msample_get(b, &s2), 0);
		ASSERT_SIZE_T_EQ(sshbuf_len(b), 0);
		ASSERT_DOUBLE_EQ(s2.time, 1234.5);	/* as time_us */
		ASSERT_U64_EQ(s2.have, s.have);
		for (i = 0; i < HPN_M_NCOLS; i++)
			ASSERT_U64_EQ(s2.v[i], (s.have & MBIT(i)) ? s.v[i] : 0);

		/* every column */
		for (i = 0; i < HPN_M_NCOLS; i++)
			mset(&s, i, BIG + i);
		sshbuf_reset(b);
		ASSERT_INT_EQ(hpn_msample_put(b, &s), 0);
		ASSERT_INT_EQ(hpn_msample_get(b, &s2), 0);
		ASSERT_U64_EQ(s2.have, MBIT(HPN_M_NCOLS) - 1);
		ASSERT_MEM_EQ(s2.v, s.v, sizeof(s.v));

		/* no column: the count and the sender's time only */
		memset(&s, 0, sizeof(s));
		s.time = 1795600559.185111;
		sshbuf_reset(b);
		ASSERT_INT_EQ(hpn_msample_put(b, &s), 0);
		ASSERT_SIZE_T_EQ(sshbuf_len(b), 4 + 4 + strlen("time_us") + 8);
		ASSERT_INT_EQ(hpn_msample_get(b, &s2), 0);
		ASSERT_U64_EQ(s2.have, 0);
		ASSERT_U64_EQ((u_int64_t)(s2.time * 1e6 + 0.5),
		    1795600559185111ULL);

		/* truncated anywhere: an error, never a crash */
		memset(&s, 0, sizeof(s));
		mset(&s, HPN_M_RTT, 1);
		mset(&s, HPN_M_SND_WND, 2);
		mset(&s, HPN_M_PEER_WINDOW, 3);
		sshbuf_reset(b);
		ASSERT_INT_EQ(hpn_msample_put(b, &s), 0);
		len = sshbuf_len(b);
		for (k = 0; k < len; k++) {
			test_subtest_info("truncated to %zu of %zu", k, len);
			ASSERT_PTR_NE(t = sshbuf_from(sshbuf_ptr(b), k), NULL);
			ASSERT_INT_NE(hpn_msample_get(t, &s2), 0);
			sshbuf_free(t);
		}
		sshbuf_free(b);
	}
	TEST_DONE();

	TEST_START("metrics: unknown names skipped, at most 256 pairs");
	{
		struct sshbuf *b;
		u_int n;

		ASSERT_PTR_NE(b = sshbuf_new(), NULL);
		ASSERT_INT_EQ(sshbuf_put_u32(b, 4), 0);
		ASSERT_INT_EQ(sshbuf_put_cstring(b, "tcpi_from_the_future"), 0);
		ASSERT_INT_EQ(sshbuf_put_u64(b, 5), 0);
		ASSERT_INT_EQ(sshbuf_put_cstring(b, "rtt_us"), 0);
		ASSERT_INT_EQ(sshbuf_put_u64(b, 7), 0);
		ASSERT_INT_EQ(sshbuf_put_cstring(b, ""), 0);
		ASSERT_INT_EQ(sshbuf_put_u64(b, 9), 0);
		ASSERT_INT_EQ(sshbuf_put_cstring(b, "RTT_US"), 0);
		ASSERT_INT_EQ(sshbuf_put_u64(b, 11), 0);
		ASSERT_INT_EQ(hpn_msample_get(b, &s2), 0);
		ASSERT_SIZE_T_EQ(sshbuf_len(b), 0);	/* all consumed */
		ASSERT_U64_EQ(s2.have, MBIT(HPN_M_RTT));
		ASSERT_U64_EQ(s2.v[HPN_M_RTT], 7);

		/* a name with a NUL in it: an error */
		sshbuf_reset(b);
		ASSERT_INT_EQ(sshbuf_put_u32(b, 1), 0);
		ASSERT_INT_EQ(sshbuf_put_string(b, "rtt_us\0x", 8), 0);
		ASSERT_INT_EQ(sshbuf_put_u64(b, 7), 0);
		ASSERT_INT_NE(hpn_msample_get(b, &s2), 0);

		/* 256 pairs: taken; 257: refused before any is read */
		for (n = 256; n <= 257; n++) {
			sshbuf_reset(b);
			ASSERT_INT_EQ(sshbuf_put_u32(b, n), 0);
			for (i = 0; i < n; i++) {
				ASSERT_INT_EQ(sshbuf_put_cstring(b,
				    i == 0 ? "snd_cwnd" : "x"), 0);
				ASSERT_INT_EQ(sshbuf_put_u64(b, i + 1), 0);
			}
			if (n == 256) {
				ASSERT_INT_EQ(hpn_msample_get(b, &s2), 0);
				ASSERT_U64_EQ(s2.have, MBIT(HPN_M_SND_CWND));
				ASSERT_U64_EQ(s2.v[HPN_M_SND_CWND], 1);
			} else
				ASSERT_INT_EQ(hpn_msample_get(b, &s2),
				    SSH_ERR_INVALID_FORMAT);
		}
		sshbuf_reset(b);
		ASSERT_INT_EQ(sshbuf_put_u32(b, UINT32_MAX), 0);
		ASSERT_INT_EQ(hpn_msample_get(b, &s2), SSH_ERR_INVALID_FORMAT);

		/* the same name twice: the last value */
		sshbuf_reset(b);
		ASSERT_INT_EQ(sshbuf_put_u32(b, 2), 0);
		ASSERT_INT_EQ(sshbuf_put_cstring(b, "lost"), 0);
		ASSERT_INT_EQ(sshbuf_put_u64(b, 1), 0);
		ASSERT_INT_EQ(sshbuf_put_cstring(b, "lost"), 0);
		ASSERT_INT_EQ(sshbuf_put_u64(b, 2), 0);
		ASSERT_INT_EQ(hpn_msample_get(b, &s2), 0);
		ASSERT_U64_EQ(s2.have, MBIT(HPN_M_LOST));
		ASSERT_U64_EQ(s2.v[HPN_M_LOST], 2);
		sshbuf_free(b);
	}
	TEST_DONE();

	TEST_START("metrics: the server's answer, stamped between ask and answer");
	{
		struct sshbuf *b;
		double t[] = { 99.5, 100.25, 101, 102.5 };
		double want[] = { 100, 100.25, 101, 101 };
		u_int i;

		for (i = 0; i < sizeof(t) / sizeof(*t); i++) {
			ASSERT_PTR_NE(b = sshbuf_new(), NULL);
			memset(&s, 0, sizeof(s));
			s.time = t[i];
			mset(&s, HPN_M_RTT, 1234);
			ASSERT_INT_EQ(hpn_msample_put(b, &s), 0);
			ASSERT_INT_EQ(hpn_metrics_reply(sshbuf_ptr(b),
			    sshbuf_len(b), 100, 101, &s2), 0);
			ASSERT_DOUBLE_EQ(s2.time, want[i]);
			ASSERT_U64_EQ(s2.v[HPN_M_RTT], 1234);
			/* cut short anywhere: malformed */
			ASSERT_INT_NE(hpn_metrics_reply(sshbuf_ptr(b),
			    sshbuf_len(b) - 1 - i, 100, 101, &s2), 0);
			sshbuf_free(b);
		}
	}
	TEST_DONE();

	TEST_START("metrics: CSV header and rows, empty fields when absent");
	{
		FILE *f;
		char line[4096], *p;

		ASSERT_PTR_NE(f = tmpfile(), NULL);
		hpn_msample_header(f);
		memset(&s, 0, sizeof(s));
		s.time = 1234.5;
		mset(&s, HPN_M_RTT, 100);
		mset(&s, HPN_M_BYTES_ACKED, BIG);
		mset(&s, HPN_M_WINDOW_STALLS, 0);
		hpn_msample_row(f, &s);
		memset(&s2, 0, sizeof(s2));	/* nothing at all */
		s2.time = 1;
		hpn_msample_row(f, &s2);
		for (i = 0; i < HPN_M_NCOLS; i++)
			mset(&s2, i, UINT64_MAX - i);
		hpn_msample_row(f, &s2);
		rewind(f);

		/* the header */
		ASSERT_PTR_NE(fgets(line, sizeof(line), f), NULL);
		ASSERT_PTR_NE(p = strchr(line, '\n'), NULL);
		ASSERT_SIZE_T_EQ(count_char(line, ','), HPN_M_NCOLS);
		ASSERT_INT_EQ(strncmp(line, "time,rtt_us,", 12), 0);
		ASSERT_STRING_EQ(csv_field(line, 0), "time");
		for (i = 0; i < HPN_M_NCOLS; i++)
			ASSERT_STRING_EQ(csv_field(line, i + 1),
			    hpn_mcol_name(i));

		/* three columns, the rest empty */
		ASSERT_PTR_NE(fgets(line, sizeof(line), f), NULL);
		ASSERT_SIZE_T_EQ(count_char(line, ','), HPN_M_NCOLS);
		ASSERT_INT_EQ(strncmp(line, "1234.500000,100,,", 17), 0);
		for (i = 0; i < HPN_M_NCOLS; i++) {
			test_subtest_info("column %s", hpn_mcol_name(i));
			if (i == HPN_M_RTT)
				ASSERT_STRING_EQ(csv_field(line, i + 1), "100");
			else if (i == HPN_M_BYTES_ACKED)
				ASSERT_STRING_EQ(csv_field(line, i + 1),
				    "1099511627776");
			else if (i == HPN_M_WINDOW_STALLS)
				ASSERT_STRING_EQ(csv_field(line, i + 1), "0");
			else
				ASSERT_STRING_EQ(csv_field(line, i + 1), "");
		}
		ASSERT_PTR_NE(strstr(line, ",0\n"), NULL);	/* the last */

		/* none: the time and commas */
		ASSERT_PTR_NE(fgets(line, sizeof(line), f), NULL);
		ASSERT_SIZE_T_EQ(count_char(line, ','), HPN_M_NCOLS);
		ASSERT_SIZE_T_EQ(strlen(line), strlen("1.000000") +
		    HPN_M_NCOLS + 1);

		/* all, at their widest */
		ASSERT_PTR_NE(fgets(line, sizeof(line), f), NULL);
		ASSERT_SIZE_T_EQ(count_char(line, ','), HPN_M_NCOLS);
		ASSERT_STRING_EQ(csv_field(line, 1), "18446744073709551615");
		ASSERT_PTR_EQ(fgets(line, sizeof(line), f), NULL);
		fclose(f);
	}
	TEST_DONE();

	TEST_START("metrics: one end's figures (mend)");
	{
		struct hpn_mend e;

		memset(&e, 0, sizeof(e));
		/* an rtt of 0 is none */
		summary_sample(&s, 1, 0, 0, 0, 0, 0, 0, 10, 1000, 0);
		hpn_mend_add(&e, &s);
		summary_sample(&s, 2, 0, 0, 0, 0, 0, 0, 30, 1000, 500);
		hpn_mend_add(&e, &s);
		memset(&s, 0, sizeof(s));	/* no cwnd, no rtt */
		s.time = 3;
		hpn_mend_add(&e, &s);
		mset(&s, HPN_M_SND_CWND, 1000);	/* a cwnd without mss */
		mset(&s, HPN_M_RTT, 700);
		hpn_mend_add(&e, &s);
		ASSERT_INT_EQ(e.n, 4);
		ASSERT_U64_EQ(e.cwnd_peak, 30000);
		ASSERT_U_INT_EQ(e.nrtts, 2);
		ASSERT_U32_EQ(e.rtts[0], 500);
		ASSERT_U32_EQ(e.rtts[1], 700);
		ASSERT_DOUBLE_EQ(e.first.time, 1);
		ASSERT_DOUBLE_EQ(e.last.time, 3);
		hpn_mend_free(&e);
		ASSERT_INT_EQ(e.n, 0);
		ASSERT_PTR_EQ(e.rtts, NULL);
	}
	TEST_DONE();

	TEST_START("metrics: summary, a download (the remote end sends)");
	{
		struct hpn_mend loc, rem;
		char buf[512];

		memset(&loc, 0, sizeof(loc));
		memset(&rem, 0, sizeof(rem));
		summary_receiver(&loc, 1000.5, 3);
		summary_sender(&rem, 1000.5, 0);
		ASSERT_INT_EQ(hpn_metrics_summary(&loc, &rem, buf, sizeof(buf)),
		    0);
		ASSERT_STRING_EQ(buf, "rtt 100.0 ms, peak cwnd 3.0 MB, "
		    "7 retransmits; limited by: network (congestion window) "
		    "70%, receive window 10%, send buffer 0%, application 20% "
		    "(sender: the remote end)");
		hpn_mend_free(&loc);
		hpn_mend_free(&rem);

		/* no local samples at all: the remote's still */
		summary_sender(&rem, 50.25, 0);
		ASSERT_INT_EQ(hpn_metrics_summary(&loc, &rem, buf, sizeof(buf)),
		    0);
		ASSERT_PTR_NE(strstr(buf, "(sender: the remote end)"), NULL);
		ASSERT_PTR_NE(strstr(buf, "rtt 100.0 ms"), NULL);
		hpn_mend_free(&rem);
	}
	TEST_DONE();

	TEST_START("metrics: summary, an upload (this end sends)");
	{
		struct hpn_mend loc, rem;
		char buf[512];

		memset(&loc, 0, sizeof(loc));
		memset(&rem, 0, sizeof(rem));
		summary_sender(&loc, 2000.5, 3);
		summary_receiver(&rem, 2000.5, 5);
		ASSERT_INT_EQ(hpn_metrics_summary(&loc, &rem, buf, sizeof(buf)),
		    0);
		ASSERT_STRING_EQ(buf, "rtt 100.0 ms, peak cwnd 3.0 MB, "
		    "7 retransmits; limited by: network (congestion window) "
		    "70%, receive window 10%, send buffer 0%, application 20%"
		    "; the SSH window ran out 3 times (sender: this end)");
		hpn_mend_free(&rem);
		/* the remote end with a single sample: still this end */
		summary_receiver(&rem, 2000.5, 1);
		ASSERT_INT_EQ(hpn_metrics_summary(&loc, &rem, buf, sizeof(buf)),
		    0);
		ASSERT_PTR_NE(strstr(buf, "(sender: this end)"), NULL);
		ASSERT_PTR_NE(strstr(buf, "rtt 100.0 ms"), NULL);
		/* and none */
		hpn_mend_free(&rem);
		ASSERT_INT_EQ(hpn_metrics_summary(&loc, &rem, buf, sizeof(buf)),
		    0);
		ASSERT_PTR_NE(strstr(buf, "(sender: this end)"), NULL);
		hpn_mend_free(&loc);
	}
	TEST_DONE();

	TEST_START("metrics: summary, receiving from a sender without metrics");
	{
		struct hpn_mend loc, rem;
		char buf[512];

		memset(&loc, 0, sizeof(loc));
		memset(&rem, 0, sizeof(rem));
		summary_receiver(&loc, 3000.5, 3);
		ASSERT_INT_EQ(hpn_metrics_summary(&loc, &rem, buf, sizeof(buf)),
		    0);
		ASSERT_PTR_NE(strstr(buf, "rtt 50.0 ms, peak cwnd 0.0 MB, "
		    "0 retransmits; "), NULL);
		ASSERT_PTR_NE(strstr(buf, "(sender: this end, receiving (the "
		    "sender gave no metrics))"), NULL);
		hpn_mend_free(&loc);
	}
	TEST_DONE();

	TEST_START("metrics: summary, a download from a server without TCP fields");
	{
		struct hpn_mend loc, rem;
		char buf[512];
		int k;

		memset(&loc, 0, sizeof(loc));
		memset(&rem, 0, sizeof(rem));
		summary_receiver(&loc, 4000.5, 3);
		for (k = 0; k < 3; k++) {	/* answers: SSH columns only */
			memset(&s, 0, sizeof(s));
			s.time = 4000.5 + 5 * k;
			mset(&s, HPN_M_SSH_BYTES_OUT, 1000000000ULL * k);
			hpn_mend_add(&rem, &s);
		}
		ASSERT_INT_EQ(hpn_metrics_summary(&loc, &rem, buf, sizeof(buf)),
		    0);
		ASSERT_PTR_NE(strstr(buf, "(sender: this end, receiving (the "
		    "sender gave no metrics))"), NULL);
		hpn_mend_free(&loc);
		hpn_mend_free(&rem);
	}
	TEST_DONE();

	TEST_START("metrics: summary, limits unknown; nothing to say");
	{
		struct hpn_mend loc, rem;
		char buf[512];

		memset(&loc, 0, sizeof(loc));
		memset(&rem, 0, sizeof(rem));
		ASSERT_INT_EQ(hpn_metrics_summary(&loc, &rem, buf, sizeof(buf)),
		    -1);
		/* a kernel without busy_time (before 4.10) */
		summary_sample(&s, 10, 0, 0, 0, 0, 0, 1, 10, 1000, 20000);
		s.have &= ~MBIT(HPN_M_BUSY_TIME);
		hpn_mend_add(&loc, &s);
		summary_sample(&s, 20, 0, 0, 0, 5000, 0, 4, 10, 1000, 20000);
		s.have &= ~MBIT(HPN_M_BUSY_TIME);
		hpn_mend_add(&loc, &s);
		ASSERT_INT_EQ(hpn_metrics_summary(&loc, &rem, buf, sizeof(buf)),
		    0);
		ASSERT_STRING_EQ(buf, "rtt 20.0 ms, peak cwnd 0.0 MB, "
		    "3 retransmits; limits unknown (no busy times from the "
		    "kernel, or a single sample) (sender: this end)");
		hpn_mend_free(&loc);
		/* a single sample */
		summary_sample(&s, 10, 5, 0, 0, 0, 0, 1, 10, 1000, 20000);
		hpn_mend_add(&loc, &s);
		ASSERT_INT_EQ(hpn_metrics_summary(&loc, &rem, buf, sizeof(buf)),
		    0);
		ASSERT_PTR_NE(strstr(buf, "limits unknown"), NULL);
		ASSERT_PTR_NE(strstr(buf, "0 retransmits"), NULL);
		hpn_mend_free(&loc);
		/* no time between the samples */
		summary_sample(&s, 10, 5, 0, 0, 0, 0, 1, 10, 1000, 20000);
		hpn_mend_add(&loc, &s);
		hpn_mend_add(&loc, &s);
		ASSERT_INT_EQ(hpn_metrics_summary(&loc, &rem, buf, sizeof(buf)),
		    0);
		ASSERT_PTR_NE(strstr(buf, "limits unknown"), NULL);
		hpn_mend_free(&loc);
		/* limited more than busy, busy more than the time: clamped */
		summary_sample(&s, 10, 0, 0, 0, 0, 0, 0, 10, 1000, 20000);
		hpn_mend_add(&loc, &s);
		summary_sample(&s, 11, 3000000, 2000000, 2000000, 0, 0, 0, 10,
		    1000, 20000);
		hpn_mend_add(&loc, &s);
		ASSERT_INT_EQ(hpn_metrics_summary(&loc, &rem, buf, sizeof(buf)),
		    0);
		ASSERT_PTR_NE(strstr(buf, "network (congestion window) 0%, "
		    "receive window 100%, send buffer 100%, application 0%"),
		    NULL);
		hpn_mend_free(&loc);
	}
	TEST_DONE();

	TEST_START("metrics: answers, a token bucket");
	{
		double tokens = HPN_M_ANSWER_BURST, last = 100;
		u_int n;

		for (i = 0; i < HPN_M_ANSWER_BURST; i++)
			ASSERT_INT_EQ(hpn_metrics_bucket(&tokens, &last, 100),
			    1);
		ASSERT_INT_EQ(hpn_metrics_bucket(&tokens, &last, 100), 0);
		ASSERT_INT_EQ(hpn_metrics_bucket(&tokens, &last, 100.01), 0);
		for (n = 0; hpn_metrics_bucket(&tokens, &last, 100.5); n++)
			ASSERT_U_INT_LT(n, 1000);
		ASSERT_U_INT_GE(n, HPN_M_ANSWER_RATE / 2 - 1);
		ASSERT_U_INT_LE(n, HPN_M_ANSWER_RATE / 2 + 1);
		/* the clock going back gives nothing */
		ASSERT_INT_EQ(hpn_metrics_bucket(&tokens, &last, 50), 0);
		/* a long pause: a burst again, not more */
		for (n = 0; hpn_metrics_bucket(&tokens, &last, 10000); n++)
			ASSERT_U_INT_LT(n, 1000);
		ASSERT_U_INT_EQ(n, HPN_M_ANSWER_BURST);
		/* the server's start: last 0, a monotonic clock */
		tokens = HPN_M_ANSWER_BURST;
		last = 0;
		for (n = 0; hpn_metrics_bucket(&tokens, &last, 12345.6); n++)
			ASSERT_U_INT_LT(n, 1000);
		ASSERT_U_INT_EQ(n, HPN_M_ANSWER_BURST);
	}
	TEST_DONE();

	TEST_START("metrics: MetricsInterval, seconds to milliseconds");
	{
		static const char *bad[] = {
			"0.05", "0", "-1", "abc", "", "nan", "inf", "1e9",
			" 1", "1x", "1s ", "1ss", "s", "-0.1", "86400.5",
			"0.0994", "-inf", "1e-400", "0x10", "1e2", "+5",
			"0.0995", "1.5.0x",
		};
		int ms;

		ASSERT_INT_EQ(hpn_parse_interval_ms("5", &ms), 0);
		ASSERT_INT_EQ(ms, 5000);
		ASSERT_INT_EQ(hpn_parse_interval_ms("0.1", &ms), 0);
		ASSERT_INT_EQ(ms, 100);
		ASSERT_INT_EQ(hpn_parse_interval_ms("0.1s", &ms), 0);
		ASSERT_INT_EQ(ms, 100);
		ASSERT_INT_EQ(hpn_parse_interval_ms("0.25", &ms), 0);
		ASSERT_INT_EQ(ms, 250);
		ASSERT_INT_EQ(hpn_parse_interval_ms("1.5s", &ms), 0);
		ASSERT_INT_EQ(ms, 1500);
		ASSERT_INT_EQ(hpn_parse_interval_ms("86400", &ms), 0);
		ASSERT_INT_EQ(ms, 86400000);
		ASSERT_INT_EQ(hpn_parse_interval_ms("0.3", &ms), 0);
		ASSERT_INT_EQ(ms, 300);
		ms = 7;
		for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
			test_subtest_info("\"%s\"", bad[i]);
			ASSERT_INT_EQ(hpn_parse_interval_ms(bad[i], &ms), -1);
		}
		ASSERT_INT_EQ(hpn_parse_interval_ms(NULL, &ms), -1);
		ASSERT_INT_EQ(ms, 7);	/* untouched on error */
	}
	TEST_DONE();

	TEST_START("HappyDelay: integer milliseconds, 0 the default");
	{
		static const char *bad[] = {
			"-1", "60001", "1.5", "250ms", "", " 1", "1 ", "+5",
			"0x10", "abc", "99999999999999999999", "-0",
		};
		int ms;

		ASSERT_INT_EQ(hpn_parse_happy_delay("250", &ms), 0);
		ASSERT_INT_EQ(ms, 250);
		ASSERT_INT_EQ(hpn_parse_happy_delay("1", &ms), 0);
		ASSERT_INT_EQ(ms, 1);
		ASSERT_INT_EQ(hpn_parse_happy_delay("0", &ms), 0);
		ASSERT_INT_EQ(ms, HPN_HAPPY_DELAY);	/* as HPN-SSH */
		ASSERT_INT_EQ(hpn_parse_happy_delay("60000", &ms), 0);
		ASSERT_INT_EQ(ms, 60000);
		ms = 7;
		for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
			test_subtest_info("\"%s\"", bad[i]);
			ASSERT_INT_EQ(hpn_parse_happy_delay(bad[i], &ms), -1);
		}
		ASSERT_INT_EQ(hpn_parse_happy_delay(NULL, &ms), -1);
		ASSERT_INT_EQ(ms, 7);	/* untouched on error */
	}
	TEST_DONE();
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

	early_tests();

	TEST_START("banner: our own tag");
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0-OpenSSH_10.3p1" HPN_VERSION_TAG, 0), 1);
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0-OpenSSH_10.3p1" HPN_VERSION_TAG, 1), 1);
	TEST_DONE();

	TEST_START("banner: HPN-SSH's tags, old and new");
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0-OpenSSH_10.2p1_hpn18.8.0", 0), 1);
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0-OpenSSH_10.2p1_hpn18.8.0", 1), 1);
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0-OpenSSH_9.9p1-hpn18.6.0", 0), 1);
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0-OpenSSH_8.0p1-HPN14v16", 0), 1);
	TEST_DONE();

	TEST_START("banner: stock peers");
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0-OpenSSH_10.0", 0), 0);
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u6", 0), 0);
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0-PuTTY_Release_0.78", 1), 0);
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0-dropbear_2022.83", 1), 0);
	TEST_DONE();

	TEST_START("banner: hpn anywhere counts, as HPN-SSH counts it");
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0-OpenSSH_9.9 hpnfoo", 0), 1);
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0-OpenSSH_10.0p1 Debian-hpn", 0), 1);
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0-OpenSSH_9.6 hpn-lookalike", 1), 1);
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0-OpenSSH_9.6 x y HPN", 0), 1);
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0-OpenSSH_9.6\r\nhpn", 0), 0);
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0-OpenSSH_9.6 hp", 0), 0);
	TEST_DONE();

	TEST_START("banner: malformed or short");
	ASSERT_INT_EQ(peer_is_hpn("", 0), 0);
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0", 0), 0);
	ASSERT_INT_EQ(peer_is_hpn("HTTP/1.1 hpn", 0), 0);
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0-hp", 0), 0);
	ASSERT_INT_EQ(peer_is_hpn("SSH-2.0-xhpn", 0), 1);
	ASSERT_INT_EQ(peer_is_hpn("SSH-hpn", 0), 1);
	ASSERT_INT_EQ(hpn_peer_is_hpn(NULL), 0);
	TEST_DONE();

	TEST_START("peer: ours by our EXT_INFO extension, not by the banner");
	ASSERT_INT_EQ(peer_is_ours("SSH-2.0-OpenSSH_10.3p1" HPN_VERSION_TAG, 0, 0), 0);
	ASSERT_INT_EQ(peer_is_ours("SSH-2.0-OpenSSH_10.3p1" HPN_VERSION_TAG, 0, 1), 1);
	/* a server never has that evidence of its client */
	ASSERT_INT_EQ(peer_is_ours("SSH-2.0-OpenSSH_10.3p1" HPN_VERSION_TAG, 1, 1), 0);
	ASSERT_INT_EQ(hpn_peer_is_ours(NULL), 0);
	TEST_DONE();

	TEST_START("peer: HPN-SSH is every other hpn banner, whatever its shape");
	ASSERT_INT_EQ(peer_is_hpnssh("SSH-2.0-OpenSSH_10.2p1_hpn18.8.0", 0, 0), 1);
	ASSERT_INT_EQ(peer_is_hpnssh("SSH-2.0-OpenSSH_10.2p1-hpn18.8.0", 0, 0), 1);
	ASSERT_INT_EQ(peer_is_hpnssh("SSH-2.0-OpenSSH_8.0p1-HPN14v16", 1, 0), 1);
	ASSERT_INT_EQ(peer_is_hpnssh("SSH-2.0-OpenSSH_9.6 -hpn18", 0, 0), 1);
	ASSERT_INT_EQ(peer_is_hpnssh("SSH-2.0-OpenSSH_10.0p1 Debian-hpn", 0, 0), 1);
	/* our shape without our extension: an HPN-SSH */
	ASSERT_INT_EQ(peer_is_hpnssh("SSH-2.0-OpenSSH_10.3p1" HPN_VERSION_TAG, 0, 0), 1);
	ASSERT_INT_EQ(peer_is_hpnssh("SSH-2.0-OpenSSH_10.3p1" HPN_VERSION_TAG, 0, 1), 0);
	ASSERT_INT_EQ(peer_is_hpnssh("SSH-2.0-OpenSSH_10.2p1_hpn18.8.0", 0, 1), 0);
	ASSERT_INT_EQ(peer_is_hpnssh("SSH-2.0-OpenSSH_10.0", 0, 0), 0);
	ASSERT_INT_EQ(peer_is_hpnssh("SSH-2.0-OpenSSH_10.0", 0, 1), 0);
	ASSERT_INT_EQ(hpn_peer_is_hpnssh(NULL), 0);
	TEST_DONE();

	TEST_START("peer: who mixes messages into a key exchange");
	ASSERT_INT_EQ(peer_check(hpn_peer_mixes_rekey,
	    "SSH-2.0-AsyncSSH_2.10.1", 1), 1);
	ASSERT_INT_EQ(peer_check(hpn_peer_mixes_rekey,
	    "SSH-2.0-AsyncSSH_2.10.1\r\n", 0), 1);
	ASSERT_INT_EQ(peer_check(hpn_peer_mixes_rekey,
	    "SSH-2.0-AsyncSSH", 1), 0);
	ASSERT_INT_EQ(peer_check(hpn_peer_mixes_rekey,
	    "SSH-2.0-OpenSSH_9.2p1 AsyncSSH_2", 1), 0);
	ASSERT_INT_EQ(peer_check(hpn_peer_mixes_rekey,
	    "SSH-2.0-paramiko_2.12.0", 1), 0);
	ASSERT_INT_EQ(hpn_peer_mixes_rekey(NULL), 0);
	TEST_DONE();

	TEST_START("peer: who installs hpnscp");
	ASSERT_INT_EQ(peer_has_names("SSH-2.0-OpenSSH_10.3p1" HPN_VERSION_TAG, 1), 1);
	ASSERT_INT_EQ(peer_has_names("SSH-2.0-OpenSSH_10.3p1_hpn0.0.1", 1), 1);
	ASSERT_INT_EQ(peer_has_names("SSH-2.0-OpenSSH_10.3p1" HPN_VERSION_TAG, 0), 0);
	ASSERT_INT_EQ(peer_has_names("SSH-2.0-OpenSSH_10.2p1_hpn18.8.0", 0), 1);
	ASSERT_INT_EQ(peer_has_names("SSH-2.0-OpenSSH_9.9p1-hpn18.6.0", 0), 1);
	ASSERT_INT_EQ(peer_has_names("SSH-2.0-OpenSSH_8.8p1-hpn17v0", 0), 1);
	ASSERT_INT_EQ(peer_has_names("SSH-2.0-OpenSSH_8.8p1-hpn16v1", 0), 1);
	ASSERT_INT_EQ(peer_has_names("SSH-2.0-OpenSSH_8.8p1-hpn15v2", 0), 0);
	ASSERT_INT_EQ(peer_has_names("SSH-2.0-OpenSSH_8.0p1-HPN14v16", 0), 0);
	ASSERT_INT_EQ(peer_has_names("SSH-2.0-OpenSSH_9.9p1-hpn", 0), 0);
	ASSERT_INT_EQ(peer_has_names("SSH-2.0-OpenSSH_9.9p1-hpn99999999999999999999", 0), 1);
	ASSERT_INT_EQ(peer_has_names("SSH-2.0-OpenSSH_10.0", 0), 0);
	ASSERT_INT_EQ(peer_has_names("SSH-2.0-OpenSSH_9.6 _hpn1", 0), 0);
	ASSERT_INT_EQ(peer_has_names("SSH-2.0-OpenSSH_10.0p1 Debian-hpn", 0), 0);
	ASSERT_INT_EQ(peer_has_names("SSH-2.0-OpenSSH_9.9 hpnfoo hpn18", 0), 1);
	ASSERT_INT_EQ(peer_has_names("SSH-2.0-OpenSSH_9.9 hpn17x", 0), 1);
	ASSERT_INT_EQ(peer_has_names("SSH-2.0-OpenSSH_9.9\rhpn18", 0), 0);
	TEST_DONE();

	TEST_START("peer: ours by both early markers, before our EXT_INFO");
	{
		struct ssh ssh;
		struct kex *kex;
		const char *b = "SSH-2.0-OpenSSH_10.3p1" HPN_VERSION_TAG;

		memset(&ssh, 0, sizeof(ssh));
		ASSERT_PTR_NE(kex = kex_new(), NULL);
		ASSERT_INT_EQ(sshbuf_put(kex->server_version, b, strlen(b)), 0);
		ssh.kex = kex;
		ASSERT_INT_EQ(hpn_peer_has_hpn_names(&ssh), 0);
		kex->flags |= HPN_KEX_EARLY;
		ASSERT_INT_EQ(hpn_peer_has_hpn_names(&ssh), 1);
		kex_free(kex);
	}
	TEST_DONE();

	TEST_START("none: what our server tells which client");
	ASSERT_STRING_EQ(none_ext_value("SSH-2.0-OpenSSH_10.3p1" HPN_VERSION_TAG,
	    1, 1), "cipher,mac");
	ASSERT_STRING_EQ(none_ext_value("SSH-2.0-OpenSSH_10.3p1" HPN_VERSION_TAG,
	    1, 0), "cipher");
	/* not allowed: said all the same (it tells our server from HPN-SSH) */
	ASSERT_STRING_EQ(none_ext_value("SSH-2.0-OpenSSH_10.3p1" HPN_VERSION_TAG,
	    0, 0), "");
	ASSERT_STRING_EQ(none_ext_value("SSH-2.0-OpenSSH_10.2p1_hpn18.8.0",
	    0, 0), "");
	ASSERT_PTR_EQ(none_ext_value("SSH-2.0-OpenSSH_10.2p1", 1, 1), NULL);
	ASSERT_PTR_EQ(none_ext_value("SSH-2.0-PuTTY_Release_0.78", 1, 0), NULL);
	TEST_DONE();

	TEST_START("none: toward our server, its EXT_INFO decides");
	{
		int mac;
		const char *ours = "SSH-2.0-OpenSSH_10.3p1" HPN_VERSION_TAG;
		const char *enc = "aes128-gcm@openssh.com,aes128-ctr";

		mac = 1;
		ASSERT_INT_EQ(none_plan(ours, "cipher,mac", enc, "hmac-sha2-256",
		    &mac), HPN_NONE_ONLY);
		ASSERT_INT_EQ(mac, 1);
		mac = 1;
		ASSERT_INT_EQ(none_plan(ours, "cipher", enc, "hmac-sha2-256",
		    &mac), HPN_NONE_ONLY);
		ASSERT_INT_EQ(mac, 0);
		mac = 0;
		ASSERT_INT_EQ(none_plan(ours, "cipher,mac", enc, "hmac-sha2-256",
		    &mac), HPN_NONE_ONLY);
		ASSERT_INT_EQ(mac, 0);
		/* not allowed: no rekey, even were none listed */
		mac = 1;
		ASSERT_INT_EQ(none_plan(ours, "", "aes128-ctr,none", "none",
		    &mac), HPN_NONE_STAY);
		ASSERT_STRING_EQ(none_why(ours, "", "aes128-ctr,none"),
		    "the server does not allow the none cipher");
		/* an unknown word allows nothing */
		mac = 1;
		ASSERT_INT_EQ(none_plan(ours, "mac", enc, "none", &mac),
		    HPN_NONE_STAY);
	}
	TEST_DONE();

	TEST_START("none: toward HPN-SSH, its KEXINIT decides");
	{
		int mac;
		const char *hs = "SSH-2.0-OpenSSH_10.2p1_hpn18.8.0";
		const char *enc = "chacha20-poly1305-mt@hpnssh.org,"
		    "aes128-gcm@openssh.com,aes128-ctr";
		const char *encn = "chacha20-poly1305-mt@hpnssh.org,"
		    "aes128-gcm@openssh.com,aes128-ctr,none";

		/* NoneEnabled and NoneMacEnabled */
		mac = 1;
		ASSERT_INT_EQ(none_plan(hs, NULL, encn, "hmac-sha2-256,none",
		    &mac), HPN_NONE_FIRST);
		ASSERT_INT_EQ(mac, 1);
		mac = 0;
		ASSERT_INT_EQ(none_plan(hs, NULL, encn, "hmac-sha2-256,none",
		    &mac), HPN_NONE_FIRST);
		ASSERT_INT_EQ(mac, 0);
		/* NoneEnabled only */
		mac = 1;
		ASSERT_INT_EQ(none_plan(hs, NULL, encn, "hmac-sha2-256", &mac),
		    HPN_NONE_FIRST);
		ASSERT_INT_EQ(mac, 0);
		/* neither: none is not proposed at all */
		mac = 1;
		ASSERT_INT_EQ(none_plan(hs, NULL, enc, "hmac-sha2-256", &mac),
		    HPN_NONE_STAY);
		ASSERT_STRING_EQ(none_why(hs, NULL, enc),
		    "the server (HPN-SSH) does not allow the none cipher");
		/* a none MAC without the none cipher is no none at all */
		mac = 1;
		ASSERT_INT_EQ(none_plan(hs, NULL, enc, "hmac-sha2-256,none",
		    &mac), HPN_NONE_STAY);
		/* none one way only */
		mac = 0;
		ASSERT_INT_EQ(none_plan2(hs, NULL, encn, enc, "none", &mac),
		    HPN_NONE_STAY);
		mac = 0;
		ASSERT_INT_EQ(none_plan2(hs, NULL, enc, encn, "none", &mac),
		    HPN_NONE_STAY);
		/* the old shape, and hpn in unexpected places */
		ASSERT_STRING_EQ(none_why("SSH-2.0-OpenSSH_10.2p1-hpn18.8.0",
		    NULL, encn), "");
		ASSERT_STRING_EQ(none_why("SSH-2.0-OpenSSH_10.0p1 Debian-hpn",
		    NULL, encn), "");
		ASSERT_STRING_EQ(none_why("SSH-2.0-OpenSSH_9.9 hpnfoo",
		    NULL, enc),
		    "the server (HPN-SSH) does not allow the none cipher");
		/* our banner's shape without our extension: HPN-SSH too */
		ASSERT_STRING_EQ(none_why("SSH-2.0-OpenSSH_10.3p1"
		    HPN_VERSION_TAG, NULL, encn), "");
	}
	TEST_DONE();

	TEST_START("none: toward stock servers, never");
	{
		int mac = 1;

		ASSERT_INT_EQ(none_plan("SSH-2.0-OpenSSH_10.2p1", NULL,
		    "aes128-ctr,none", "none", &mac), HPN_NONE_STAY);
		ASSERT_STRING_EQ(none_why("SSH-2.0-OpenSSH_10.2p1", NULL,
		    "aes128-ctr"), "the server does not allow the none cipher");
		ASSERT_STRING_EQ(none_why("SSH-2.0-dropbear_2022.83", NULL,
		    "aes128-ctr,none"),
		    "the server does not allow the none cipher");
		/* our extension decides whatever the banner */
		ASSERT_STRING_EQ(none_why("SSH-2.0-OpenSSH_10.2p1", "cipher",
		    "aes128-ctr"), "");
	}
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

	/* under check-asan-quick, LeakSanitizer sees a leaked match_list() */
	TEST_START("none: a name in a list, nothing kept");
	ASSERT_INT_EQ(hpn_list_has("aes128-ctr,none", "none"), 1);
	ASSERT_INT_EQ(hpn_list_has("cipher,mac", "mac"), 1);
	ASSERT_INT_EQ(hpn_list_has("cipher", "mac"), 0);
	ASSERT_INT_EQ(hpn_list_has("nonesuch,nonet", "none"), 0);
	ASSERT_INT_EQ(hpn_list_has("", "none"), 0);
	ASSERT_INT_EQ(hpn_list_has(NULL, "none"), 0);
	TEST_DONE();

	TEST_START("sftp: requests cover 64 MiB, within limits");
	ASSERT_U_INT_EQ(hpn_sftp_num_requests(255 * 1024, 255 * 1024), 258);
	ASSERT_U_INT_EQ(hpn_sftp_num_requests(32 * 1024, 32 * 1024), 1024);
	ASSERT_U_INT_EQ(hpn_sftp_num_requests(0, 0), 1024);
	ASSERT_U_INT_EQ(hpn_sftp_num_requests(4 << 20, 4 << 20), 64);
	/* sized by the larger request: never 1024 x 255 KiB in flight */
	ASSERT_U_INT_EQ(hpn_sftp_num_requests(255 * 1024, 32 * 1024), 258);
	ASSERT_U_INT_EQ(hpn_sftp_num_requests(32 * 1024, 255 * 1024), 258);
	TEST_DONE();

	TEST_START("sftp: one connection's bytes in flight grow as a window");
	/* 64 MiB moved in a 1 s round trip: it limits; four times that */
	ASSERT_U64_EQ(hpn_sftp_budget_grow(64 << 20, 64 << 20, 1.0, 1.0),
	    256ULL << 20);
	/* 40 MiB of the 64 a round trip: to 160 MiB */
	ASSERT_U64_EQ(hpn_sftp_budget_grow(64 << 20, 40 << 20, 1.0, 1.0),
	    160ULL << 20);
	/* less than half of it a round trip: not the limit, kept */
	ASSERT_U64_EQ(hpn_sftp_budget_grow(64 << 20, 30 << 20, 1.0, 1.0),
	    64ULL << 20);
	/* the rate over 0.5 s at a 1 s round trip */
	ASSERT_U64_EQ(hpn_sftp_budget_grow(64 << 20, 32 << 20, 0.5, 1.0),
	    256ULL << 20);
	/* never past the largest window, never less than it was */
	ASSERT_U64_EQ(hpn_sftp_budget_grow(300ULL << 20, 300ULL << 20, 1.0,
	    1.0), HPN_SFTP_INFLIGHT_MAX);
	ASSERT_U64_EQ(hpn_sftp_budget_grow(HPN_SFTP_INFLIGHT_MAX,
	    2ULL << 30, 1.0, 1.0), HPN_SFTP_INFLIGHT_MAX);
	/* nothing measured: kept */
	ASSERT_U64_EQ(hpn_sftp_budget_grow(64 << 20, 64 << 20, 0, 1.0),
	    64ULL << 20);
	ASSERT_U64_EQ(hpn_sftp_budget_grow(64 << 20, 64 << 20, 1.0, 0),
	    64ULL << 20);
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

	TEST_START("sftp engine: -n budgets follow each connection's rate");
	/* 10 MB in 0.1 s at a 0.1 s round trip: 4 x 10 MB, plus 1 MiB */
	ASSERT_U64_EQ(hpn_sftp_lane_budget(10000000, 0.1, 0.1,
	    HPN_LANE_HEADROOM, 64 << 20), 40000000 + HPN_LANE_BUDGET_MIN);
	/* the same rate measured over 0.2 s */
	ASSERT_U64_EQ(hpn_sftp_lane_budget(20000000, 0.2, 0.1,
	    HPN_LANE_HEADROOM, 64 << 20), 40000000 + HPN_LANE_BUDGET_MIN);
	/* at the end: 1.25 round trips of it */
	ASSERT_U64_EQ(hpn_sftp_lane_budget(10000000, 0.1, 0.1,
	    HPN_LANE_END_HEADROOM, 64 << 20), 12500000 + HPN_LANE_BUDGET_MIN);
	/* a connection that moved nothing keeps the least */
	ASSERT_U64_EQ(hpn_sftp_lane_budget(0, 0.1, 0.1, HPN_LANE_HEADROOM,
	    64 << 20), HPN_LANE_BUDGET_MIN);
	/* never over the path's budget */
	ASSERT_U64_EQ(hpn_sftp_lane_budget(100000000, 0.1, 0.1,
	    HPN_LANE_HEADROOM, 64 << 20), 64 << 20);
	/* nothing measured yet: the path's budget */
	ASSERT_U64_EQ(hpn_sftp_lane_budget(1000, 0, 0.1, HPN_LANE_HEADROOM,
	    64 << 20), 64 << 20);
	ASSERT_U64_EQ(hpn_sftp_lane_budget(1000, 0.1, 0, HPN_LANE_HEADROOM,
	    64 << 20), 64 << 20);
	TEST_DONE();

	TEST_START("sftp engine: -n caps them together once steady");
	{
		struct hpn_sftp_cap c;
		u_int64_t c100 = (u_int64_t)(100e6 * 0.1 *
		    HPN_LANE_ALL_HEADROOM) + HPN_LANE_BUDGET_MIN;
		u_int i;

		memset(&c, 0, sizeof(c));
		/* the first round trip, then growing: no cap */
		ASSERT_U64_EQ(hpn_sftp_lanes_cap(&c, 10e6, 0.1, 0), 0);
		ASSERT_U64_EQ(hpn_sftp_lanes_cap(&c, 40e6, 0.1, 0), 0);
		ASSERT_U64_EQ(hpn_sftp_lanes_cap(&c, 100e6, 0.1, 0), 0);
		/* steady: 1.5 round trips of the best recent sum */
		ASSERT_U64_EQ(hpn_sftp_lanes_cap(&c, 100e6, 0.1, 0), c100);
		ASSERT_U64_EQ(hpn_sftp_lanes_cap(&c, 95e6, 0.1, 0), c100);
		/* at the end: none (each connection's own end budget) */
		ASSERT_U64_EQ(hpn_sftp_lanes_cap(&c, 100e6, 0.1, 1), 0);
		ASSERT_U64_EQ(hpn_sftp_lanes_cap(&c, 100e6, 0.1, 0), c100);
		/* one round trip low is a swing: the cap stays up */
		ASSERT_U64_EQ(hpn_sftp_lanes_cap(&c, 80e6, 0.1, 0), c100);
		ASSERT_U64_EQ(hpn_sftp_lanes_cap(&c, 100e6, 0.1, 0), c100);
		/* the best of the last HPN_LANE_ALL_WINDOW, no older */
		for (i = 0; i < HPN_LANE_ALL_WINDOW; i++)
			ASSERT_U64_EQ(hpn_sftp_lanes_cap(&c, 90e6, 0.1, 0),
			    i < HPN_LANE_ALL_WINDOW - 1 ? c100 :
			    (u_int64_t)(90e6 * 0.1 * HPN_LANE_ALL_HEADROOM) +
			    HPN_LANE_BUDGET_MIN);
		ASSERT_INT_EQ(c.off, 0);
		/* two in a row below 0.85 of the best: given up for good */
		ASSERT_U64_EQ(hpn_sftp_lanes_cap(&c, 80e6, 0.1, 0),
		    (u_int64_t)(90e6 * 0.1 * HPN_LANE_ALL_HEADROOM) +
		    HPN_LANE_BUDGET_MIN);
		ASSERT_U64_EQ(hpn_sftp_lanes_cap(&c, 75e6, 0.1, 0), 0);
		ASSERT_INT_EQ(c.off, 1);
		ASSERT_U64_EQ(hpn_sftp_lanes_cap(&c, 100e6, 0.1, 0), 0);
		ASSERT_U64_EQ(hpn_sftp_lanes_cap(&c, 100e6, 0.1, 0), 0);
		/* no round trip known, or nothing moved: none */
		memset(&c, 0, sizeof(c));
		ASSERT_U64_EQ(hpn_sftp_lanes_cap(&c, 100e6, 0.1, 0), 0);
		ASSERT_U64_EQ(hpn_sftp_lanes_cap(&c, 100e6, 0, 0), 0);
		ASSERT_U64_EQ(hpn_sftp_lanes_cap(&c, 0, 0.1, 0), 0);
	}
	TEST_DONE();

	sftp_ref_tests();
	sftp_rd_tests();
	hash_range_tests();
	metrics_tests();

	TEST_START("sshbuf growth: exact when small, geometric when large");
	ASSERT_SIZE_T_EQ(hpn_sshbuf_grow(1024, 2048, 128 << 20), 2048);
	ASSERT_SIZE_T_EQ(hpn_sshbuf_grow(4 << 20, (4 << 20) + 32768,
	    128 << 20), 6 << 20);
	ASSERT_SIZE_T_EQ(hpn_sshbuf_grow(4 << 20, 10 << 20, 128 << 20),
	    10 << 20);
	/* Near the maximum: to the maximum at once, never past it. */
	ASSERT_SIZE_T_EQ(hpn_sshbuf_grow(80 << 20, (80 << 20) + 256,
	    100 << 20), 100 << 20);
	ASSERT_SIZE_T_EQ(hpn_sshbuf_grow(60 << 20, (60 << 20) + 256,
	    64 << 20), 64 << 20);
	ASSERT_SIZE_T_EQ(hpn_sshbuf_grow(600 << 20, (600 << 20) + 256,
	    HPN_SSHBUF_LARGE_MAX), 900 << 20);
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

	TEST_START("sftp-server: every whole request in a turn, while replies fit");
	{
		struct sshbuf *iq, *oq;
		u_char big[64 * 1024];

		memset(big, 0, sizeof(big));
		ASSERT_PTR_NE(iq = sshbuf_new(), NULL);
		ASSERT_PTR_NE(oq = sshbuf_new(), NULL);
		ASSERT_INT_EQ(hpn_sftp_server_more(iq, oq, 0), 0);	/* empty */
		/* a request of 9 bytes (type, id, 4 more): whole at 13 */
		ASSERT_INT_EQ(sshbuf_put_u32(iq, 9), 0);
		ASSERT_INT_EQ(sshbuf_put(iq, big, 8), 0);
		ASSERT_INT_EQ(hpn_sftp_server_more(iq, oq, 0), 0);
		ASSERT_INT_EQ(sshbuf_put_u8(iq, 0), 0);
		ASSERT_INT_EQ(hpn_sftp_server_more(iq, oq, 0), 1);
		/* and part of the next one behind it */
		ASSERT_INT_EQ(sshbuf_put_u32(iq, 100), 0);
		ASSERT_INT_EQ(hpn_sftp_server_more(iq, oq, 0), 1);
		ASSERT_INT_EQ(sshbuf_consume(iq, 13), 0);
		ASSERT_INT_EQ(hpn_sftp_server_more(iq, oq, 0), 0);
		/* a length past the limit: taken (process() refuses it) */
		sshbuf_reset(iq);
		ASSERT_INT_EQ(sshbuf_put_u32(iq, SFTP_MAX_MSG_LENGTH + 1), 0);
		ASSERT_INT_EQ(sshbuf_put_u8(iq, 1), 0);
		ASSERT_INT_EQ(hpn_sftp_server_more(iq, oq, 0), 1);
		/* this turn's replies: fewer than HPN_SFTP_TURN_OUT */
		ASSERT_INT_EQ(sshbuf_put(oq, big, HPN_SFTP_TURN_OUT - 1), 0);
		ASSERT_INT_EQ(hpn_sftp_server_more(iq, oq, 0), 1);
		ASSERT_INT_EQ(sshbuf_put_u8(oq, 0), 0);
		ASSERT_INT_EQ(hpn_sftp_server_more(iq, oq, 0), 0);
		/* ... the turn's first request: whatever waits from before */
		ASSERT_INT_EQ(hpn_sftp_server_more(iq, oq, sshbuf_len(oq)), 1);
		/* replies waiting: up to HPN_SFTP_OQUEUE_MAX */
		while (sshbuf_len(oq) + sizeof(big) < HPN_SFTP_OQUEUE_MAX)
			ASSERT_INT_EQ(sshbuf_put(oq, big, sizeof(big)), 0);
		ASSERT_INT_EQ(hpn_sftp_server_more(iq, oq, sshbuf_len(oq)), 1);
		ASSERT_INT_EQ(sshbuf_put(oq, big, sizeof(big)), 0);
		ASSERT_INT_EQ(hpn_sftp_server_more(iq, oq, sshbuf_len(oq)), 0);
		sshbuf_free(iq);
		sshbuf_free(oq);
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
