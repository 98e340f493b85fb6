/*
 * Copyright (c) 2025 The HPN-SSH patch set contributors.
 *
 * Permission to use, copy, modify, and distribute this software for any
 * purpose with or without fee is hereby granted, provided that the above
 * copyright notice and this permission notice appear in all copies.
 *
 * THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES
 * WITH REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF
 * MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR
 * ANY SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
 * WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN
 * ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF
 * OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THIS SOFTWARE.
 */

/*
 * Multi-threaded AES-CTR keystream generator.
 *
 * Worker threads precompute AES-CTR keystream into a ring of fixed-size
 * spans; the calling thread only XORs.  The output is byte-identical to
 * a single EVP_aes_{128,192,256}_ctr() context started at the same IV,
 * for any sequence of calls and lengths.
 *
 * A context is used by one thread at a time (the "main" thread); the
 * worker threads are private to the context.  All functions except
 * hpn_ctr_mt_auto_workers() must be called from that thread.  The
 * context must not cross fork(): worker threads do not exist in the
 * child.  No function logs; errors are reported to the caller.
 */

#ifndef HPN_CIPHER_CTR_MT_H
#define HPN_CIPHER_CTR_MT_H

#include <stddef.h>

#define HPN_CTR_MT_OK			0
#define HPN_CTR_MT_ERR_INVALID		-1	/* bad argument */
#define HPN_CTR_MT_ERR_CRYPTO		-2	/* a worker's EVP call failed */

#define HPN_CTR_MT_BLOCKSIZE		16

struct hpn_ctr_mt;

/*
 * keylen 16, 24 or 32; iv = 16-byte initial counter block;
 * nworkers 1..64.  Returns NULL (and sets *errp, if errp is non-NULL, to
 * a short static string) on any failure, including thread creation
 * failure and OpenSSL in FIPS mode ("FIPS mode"): the caller then falls
 * back to the stock EVP cipher.  Never aborts.  Worker threads start
 * immediately, block all signals, and allocate nothing after this.
 * Memory: 64 KiB x max(16, min(32, 16 * nworkers)) of keystream ring.
 */
struct hpn_ctr_mt *hpn_ctr_mt_new(const unsigned char *key, size_t keylen,
    const unsigned char *iv, int nworkers, const char **errp);

/*
 * Encrypt/decrypt len bytes (any length, any split across calls).
 * dst may equal src (in-place); partial overlap is not allowed.
 * Returns 0 or a negative HPN_CTR_MT_ERR_* value.  After an error the
 * context is unusable and must be freed.
 */
int hpn_ctr_mt_crypt(struct hpn_ctr_mt *mt, unsigned char *dst,
    const unsigned char *src, size_t len);

/*
 * Counter block of the next unused keystream block: what EVP reports
 * via EVP_CIPHER_CTX_get_updated_iv() (a partially used block counts as
 * used).
 */
void hpn_ctr_mt_get_iv(struct hpn_ctr_mt *mt,
    unsigned char iv[HPN_CTR_MT_BLOCKSIZE]);

/*
 * Signal and join all worker threads, wipe key material and keystream,
 * free everything.  NULL is allowed.
 */
void hpn_ctr_mt_free(struct hpn_ctr_mt *mt);

/*
 * Suggested number of workers: min(usable CPUs - 1, cap), from the
 * scheduler affinity mask, when at least HPN_CTR_MT_AUTO_MIN_CPUS are
 * usable; else 0 (also when cap <= 0): the caller should then stay
 * single-threaded.  A lone worker is slower than one EVP context.
 */
#define HPN_CTR_MT_AUTO_MIN_CPUS	3
int hpn_ctr_mt_auto_workers(int cap);

#endif /* HPN_CIPHER_CTR_MT_H */
