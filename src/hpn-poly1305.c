/*
 * HPN patch set: Poly1305 for chacha20-poly1305@openssh.com from OpenSSL.
 *
 * With OpenSSL, OpenSSH runs ChaCha20 through EVP (OpenSSL's vector code)
 * but Poly1305 through its own portable C (poly1305.c, 32-bit limbs):
 * that C costs about three times as many instructions per byte as the
 * cipher itself, so it was most of what a byte cost each end.  OpenSSL
 * has Poly1305 too (vector code where the CPU has it), as an EVP_MAC since
 * 3.0.  hpn_poly1305() computes the same tag with it; where OpenSSL is
 * older or lacks Poly1305 (a FIPS provider), or any call fails, it uses
 * OpenSSH's poly1305_auth() as before.  The tag is the same either way
 * (the unit tests compare them).
 */

#include "includes.h"

#include <sys/types.h>

#include <string.h>

#ifdef WITH_OPENSSL
# include <openssl/evp.h>
# if OPENSSL_VERSION_NUMBER >= 0x30000000L
#  define HPN_POLY1305_EVP_MAC 1
# endif
#endif

#include "log.h"
#include "poly1305.h"
#include "hpn.h"

int hpn_poly1305_evp_off;	/* tests: OpenSSH's own Poly1305 only */

#ifdef HPN_POLY1305_EVP_MAC
static EVP_MAC_CTX *
mac_ctx(void)
{
	static EVP_MAC_CTX *ctx;
	static int unavailable;
	EVP_MAC *mac;

	if (ctx != NULL || unavailable)
		return ctx;
	if ((mac = EVP_MAC_fetch(NULL, "POLY1305", NULL)) != NULL)
		ctx = EVP_MAC_CTX_new(mac);
	EVP_MAC_free(mac);
	if (ctx == NULL) {
		unavailable = 1;
		debug_f("OpenSSL has no Poly1305: OpenSSH's own is used");
	}
	return ctx;
}
#endif

void
hpn_poly1305(u_char *out, const u_char *m, size_t len, const u_char *key)
{
#ifdef HPN_POLY1305_EVP_MAC
	EVP_MAC_CTX *ctx;
	size_t outlen = 0;

	if (!hpn_poly1305_evp_off && (ctx = mac_ctx()) != NULL &&
	    EVP_MAC_init(ctx, key, POLY1305_KEYLEN, NULL) == 1 &&
	    EVP_MAC_update(ctx, m, len) == 1 &&
	    EVP_MAC_final(ctx, out, &outlen, POLY1305_TAGLEN) == 1 &&
	    outlen == POLY1305_TAGLEN)
		return;
#endif
	poly1305_auth(out, m, len, key);
}
