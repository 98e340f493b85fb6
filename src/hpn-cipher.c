/*
 * HPN patch set: when cipher.c uses the multi-threaded AES-CTR
 * (cipher-ctr-mt.c) instead of OpenSSL's single-threaded EVP AES-CTR.
 *
 * Connections start with the stock cipher.  Once the user is authenticated
 * and the process will not fork again (the client enters its main loop,
 * after ssh -f and ControlPersist have forked; sshd's post-authentication
 * session process), hpn_mt_activate() allows the threaded cipher and, if
 * AES-CTR is in use, forces a rekey: the new keys are the first to get
 * worker threads.  Every later rekey frees the old context (joining its
 * threads) and builds a new one, honouring DisableMTAES and MTAESThreads
 * as configured then.  The sandboxed pre-authentication process never
 * gets here.  Whenever the threaded context cannot be made (too few CPUs,
 * FIPS mode, thread creation failure) the stock cipher is used and a
 * debug line says why.  The cipher stream is identical either way.
 */

#include "includes.h"

#include <sys/types.h>

#include <string.h>

#include "log.h"
#include "ssherr.h"
#include "sshbuf.h"
#include "packet.h"
#include "kex.h"
#include "cipher-ctr-mt.h"
#include "hpn.h"

static struct {
	int	disabled;	/* DisableMTAES */
	int	threads;	/* MTAESThreads; 0: automatic */
	int	active;		/* authenticated, no more forks */
	int	ctr_in_use;	/* current keys are AES-CTR */
	int	mt_in_use;	/* ... and threaded */
} mt;

void
hpn_mt_configure(int disabled, int threads)
{
	mt.disabled = disabled;
	mt.threads = threads;
}

static int
is_aes_ctr(const char *name)
{
	return name != NULL && (strcmp(name, "aes128-ctr") == 0 ||
	    strcmp(name, "aes192-ctr") == 0 || strcmp(name, "aes256-ctr") == 0);
}

static int
workers(void)
{
	if (mt.threads > 0)
		return mt.threads > HPN_MT_THREADS_MAX ?
		    HPN_MT_THREADS_MAX : mt.threads;
	return hpn_ctr_mt_auto_workers(HPN_MT_THREADS_AUTO_MAX);
}

/*
 * Called by cipher_init for every new cipher context: the threaded
 * context for AES-CTR when allowed, else NULL (the stock cipher).
 */
struct hpn_ctr_mt *
hpn_mt_cipher_new(const char *name, const u_char *key, u_int keylen,
    const u_char *iv, u_int ivlen)
{
	struct hpn_ctr_mt *ctx;
	const char *err = NULL;
	int n;

	if (!mt.active || mt.disabled || !is_aes_ctr(name) ||
	    ivlen != HPN_CTR_MT_BLOCKSIZE)
		return NULL;
	if ((n = workers()) <= 0) {
		debug_f("%s: fewer than %d CPUs: single-threaded", name,
		    HPN_CTR_MT_AUTO_MIN_CPUS);
		return NULL;
	}
	if ((ctx = hpn_ctr_mt_new(key, keylen, iv, n, &err)) == NULL) {
		debug_f("%s: threaded AES-CTR unavailable (%s): stock cipher",
		    name, err != NULL ? err : "?");
		return NULL;
	}
	debug_f("%s: %d worker thread%s", name, n, n == 1 ? "" : "s");
	return ctx;
}

int
hpn_mt_crypt(struct hpn_ctr_mt *ctx, u_char *dst, const u_char *src,
    u_int len)
{
	return hpn_ctr_mt_crypt(ctx, dst, src, len) == 0 ? 0 :
	    SSH_ERR_LIBCRYPTO_ERROR;
}

/* New keys in one direction (packet.c): remember what is in use. */
void
hpn_mt_newkeys(int mode, const char *name, int threaded)
{
	(void)mode;
	mt.ctr_in_use = is_aes_ctr(name);
	mt.mt_in_use = threaded;
}

/* Whether the keys in use are AES-CTR that would get worker threads. */
static int
wants_rekey(struct ssh *ssh)
{
	if (mt.disabled || !mt.ctr_in_use || mt.mt_in_use || ssh->kex == NULL)
		return 0;
	if (workers() <= 0) {
		debug_f("AES-CTR: fewer than %d CPUs: single-threaded",
		    HPN_CTR_MT_AUTO_MIN_CPUS);
		return 0;
	}
	return 1;
}

static void
rekey(struct ssh *ssh)
{
	int r;

	if (ssh_packet_is_rekeying(ssh)) {
		debug_f("a key exchange is under way: it brings the threads");
		return;
	}
	debug_f("rekeying to start the threaded AES-CTR");
	if ((r = kex_start_rekex(ssh)) != 0)
		fatal_fr(r, "kex_start_rekex");
}

/*
 * Client, authenticated, before its first channel or forwarding request:
 * start the key exchange that brings the threads now, so that those
 * requests wait behind it in our own queue.  Started after them, the
 * peer's answers would cross its KEXINIT, and a peer that does not hold
 * back other messages during a key exchange (RFC 4253 7.1; asyncssh
 * 2.10.1 does not) is disconnected for that since 10.4p1
 * (rekey-strict-messages.patch).  The new keys come only once the main
 * loop reads the peer's answer, after hpn_mt_activate().
 */
void
hpn_mt_rekey_early(struct ssh *ssh)
{
	if (!mt.active && wants_rekey(ssh))
		rekey(ssh);
}

/*
 * Authenticated, and no more forks: allow the threaded cipher and rekey if
 * AES-CTR is in use single-threaded.  A key exchange in progress simply
 * picks it up.  Not toward a peer that would send its channel's messages
 * inside that key exchange (hpn_peer_mixes_rekey(): a server's client may
 * send them at once, and would be disconnected for it); the next key
 * exchange, whoever starts it, brings the threads.
 */
void
hpn_mt_activate(struct ssh *ssh)
{
	if (mt.active)
		return;
	mt.active = 1;
	if (!wants_rekey(ssh))
		return;
	if (hpn_peer_mixes_rekey(ssh)) {
		/* it would open its channels inside our key exchange */
		debug_f("peer sends other messages during a key exchange: "
		    "no rekey to start the threaded AES-CTR (the next one "
		    "brings it)");
		return;
	}
	rekey(ssh);
}
