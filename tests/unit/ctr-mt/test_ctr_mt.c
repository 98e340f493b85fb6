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
 * Unit tests for the multi-threaded AES-CTR core (src/cipher-ctr-mt.c).
 * Built with -DHPN_CTR_MT_TESTING for the test hooks.  Every loop is
 * bounded and a watchdog alarm kills the process if anything hangs.
 *
 * Environment: HPN_TEST_SEED (PRNG seed), HPN_TEST_SCALE (percentage
 * of the default iteration counts, e.g. 20 under ThreadSanitizer),
 * HPN_TEST_IDLE_MS (idle CPU budget, default 20).
 */

#define _GNU_SOURCE

#include <sys/types.h>
#include <sys/resource.h>

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "cipher-ctr-mt.h"

/* Test hooks in cipher-ctr-mt.c (HPN_CTR_MT_TESTING). */
extern int hpn_ctr_mt_test_fail_create;
extern _Atomic int hpn_ctr_mt_test_fail_fill;
void hpn_ctr_mt_test_geometry(struct hpn_ctr_mt *, size_t *, size_t *);

#define MAX_WORKERS	4
#define WATCHDOG_SECS	600

static int failures;
static int checks;
static uint64_t rng_state;
static int scale = 100;

static void
fail(const char *fmt, ...)
{
	va_list ap;

	failures++;
	fprintf(stderr, "FAIL: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

#define CHECK(cond, ...) do { \
	checks++; \
	if (!(cond)) \
		fail(__VA_ARGS__); \
} while (0)

static uint64_t
rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static size_t
rnd_range(size_t lo, size_t hi)	/* inclusive */
{
	return lo + (size_t)(rnd() % (uint64_t)(hi - lo + 1));
}

static void
rnd_bytes(unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)(rnd() >> 56);
}

static int
iters(int n)
{
	n = n * scale / 100;
	return n < 1 ? 1 : n;
}

static void
hex2bin(const char *hex, unsigned char *out, size_t n)
{
	size_t i;
	unsigned int v;

	for (i = 0; i < n; i++) {
		if (sscanf(hex + 2 * i, "%2x", &v) != 1) {
			fprintf(stderr, "bad hex in test vector\n");
			exit(2);
		}
		out[i] = (unsigned char)v;
	}
}

static void
hexdump16(const char *tag, const unsigned char *p)
{
	int i;

	fprintf(stderr, "  %s ", tag);
	for (i = 0; i < 16; i++)
		fprintf(stderr, "%02x", p[i]);
	fputc('\n', stderr);
}

/* iv += n blocks, 128-bit big endian (independent of the code under test) */
static void
add128(unsigned char iv[16], uint64_t n)
{
	uint64_t hi = 0, lo = 0, nlo;
	int i;

	for (i = 0; i < 8; i++) {
		hi = (hi << 8) | iv[i];
		lo = (lo << 8) | iv[8 + i];
	}
	nlo = lo + n;
	if (nlo < lo)
		hi++;
	for (i = 7; i >= 0; i--) {
		iv[i] = (unsigned char)hi;
		iv[8 + i] = (unsigned char)nlo;
		hi >>= 8;
		nlo >>= 8;
	}
}

static const EVP_CIPHER *
evp_ctr(size_t keylen)
{
	switch (keylen) {
	case 16:
		return EVP_aes_128_ctr();
	case 24:
		return EVP_aes_192_ctr();
	default:
		return EVP_aes_256_ctr();
	}
}

/* Reference: single stock EVP context. */
static EVP_CIPHER_CTX *
ref_new(const unsigned char *key, size_t keylen, const unsigned char *iv)
{
	EVP_CIPHER_CTX *ctx;

	if ((ctx = EVP_CIPHER_CTX_new()) == NULL ||
	    EVP_EncryptInit_ex(ctx, evp_ctr(keylen), NULL, key, iv) != 1) {
		fprintf(stderr, "EVP reference init failed\n");
		exit(2);
	}
	return ctx;
}

static void
ref_crypt(EVP_CIPHER_CTX *ctx, unsigned char *dst, const unsigned char *src,
    size_t len)
{
	int outl;
	size_t n;

	while (len > 0) {
		n = len > (1 << 20) ? (1 << 20) : len;
		if (EVP_EncryptUpdate(ctx, dst, &outl, src, (int)n) != 1 ||
		    (size_t)outl != n) {
			fprintf(stderr, "EVP reference update failed\n");
			exit(2);
		}
		dst += n;
		src += n;
		len -= n;
	}
}

static void
ref_iv(EVP_CIPHER_CTX *ctx, unsigned char iv[16])
{
	if (EVP_CIPHER_CTX_get_updated_iv(ctx, iv, 16) != 1) {
		fprintf(stderr, "EVP_CIPHER_CTX_get_updated_iv failed\n");
		exit(2);
	}
}

static int
count_threads(void)
{
	DIR *d;
	struct dirent *de;
	int n = 0;

	if ((d = opendir("/proc/self/task")) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] != '.')
			n++;
	}
	closedir(d);
	return n;
}

/*
 * pthread_join() returns once the kernel has cleared the thread id, a
 * moment before the exited task disappears from /proc/self/task; poll
 * (bounded: 2 s) until the count reaches want.  Returns the last count.
 */
static int
settle_threads(int want)
{
	struct timespec ts = { 0, 1000000 };
	int i, n = -1;

	for (i = 0; i < 2000; i++) {
		if ((n = count_threads()) == want)
			break;
		nanosleep(&ts, NULL);
	}
	return n;
}

/*
 * The threads a test starts from: the process's own, once the workers of
 * a context freed just before have left /proc/self/task (counted at once,
 * one still there made the base one too many, and every later check
 * failed: under load, 2026-11-29).  One thread alone, or what remains
 * after 2 s (a sanitizer's own thread).
 */
static int
base_threads(void)
{
	return settle_threads(1);
}

static size_t
first_diff(const unsigned char *a, const unsigned char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (a[i] != b[i])
			return i;
	return n;
}

static struct hpn_ctr_mt *
mt_new_or_die(const unsigned char *key, size_t keylen,
    const unsigned char *iv, int nworkers)
{
	struct hpn_ctr_mt *mt;
	const char *err = NULL;

	if ((mt = hpn_ctr_mt_new(key, keylen, iv, nworkers, &err)) == NULL) {
		fprintf(stderr, "hpn_ctr_mt_new failed: %s\n",
		    err ? err : "(null)");
		exit(2);
	}
	return mt;
}

/*
 * Encrypt len bytes of src with mt in random-sized pieces (mode selects
 * the piece size distribution) and compare with the reference context.
 * in-place when inplace != 0.  Also compares the IV at the end.
 */
static int
run_compare(struct hpn_ctr_mt *mt, EVP_CIPHER_CTX *ref,
    const unsigned char *src, size_t len, int mode, int inplace,
    size_t span, const char *what)
{
	unsigned char *out, *want, iv_mt[16], iv_ref[16];
	size_t off = 0, n, d;
	int r, ok = 1, guard;

	if ((out = malloc(len + 1)) == NULL ||
	    (want = malloc(len + 1)) == NULL) {
		fprintf(stderr, "malloc failed\n");
		exit(2);
	}
	if (inplace)
		memcpy(out, src, len);
	ref_crypt(ref, want, src, len);
	for (guard = 0; off < len && guard < 10000000; guard++) {
		switch (mode) {
		case 0:			/* tiny pieces */
			n = rnd_range(1, 17);
			break;
		case 1:			/* around span size */
			n = rnd_range(1, span + 33);
			break;
		case 2:			/* ssh-like packets */
			n = 16 * rnd_range(1, 2048);
			break;
		default:		/* anything */
			n = rnd_range(1, len);
			break;
		}
		if (n > len - off)
			n = len - off;
		r = hpn_ctr_mt_crypt(mt, out + off, inplace ? out + off :
		    src + off, n);
		if (r != 0) {
			fail("%s: hpn_ctr_mt_crypt returned %d", what, r);
			ok = 0;
			break;
		}
		off += n;
	}
	if (ok && (d = first_diff(out, want, len)) != len) {
		fail("%s: output differs at byte %zu of %zu (mode %d%s)",
		    what, d, len, mode, inplace ? ", in place" : "");
		ok = 0;
	}
	checks++;
	hpn_ctr_mt_get_iv(mt, iv_mt);
	ref_iv(ref, iv_ref);
	if (memcmp(iv_mt, iv_ref, 16) != 0) {
		fail("%s: IV differs from EVP after %zu bytes", what, len);
		hexdump16("mt ", iv_mt);
		hexdump16("evp", iv_ref);
		ok = 0;
	}
	checks++;
	free(out);
	free(want);
	return ok;
}

/* NIST SP 800-38A F.5.1, F.5.3, F.5.5 (CTR-AES{128,192,256}.Encrypt) */
static const struct {
	const char *name, *key, *ctr, *pt, *ct;
} kat[] = {
	{ "F.5.1 CTR-AES128.Encrypt",
	  "2b7e151628aed2a6abf7158809cf4f3c",
	  "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff",
	  "6bc1bee22e409f96e93d7e117393172a"
	  "ae2d8a571e03ac9c9eb76fac45af8e51"
	  "30c81c46a35ce411e5fbc1191a0a52ef"
	  "f69f2445df4f9b17ad2b417be66c3710",
	  "874d6191b620e3261bef6864990db6ce"
	  "9806f66b7970fdff8617187bb9fffdff"
	  "5ae4df3edbd5d35e5b4f09020db03eab"
	  "1e031dda2fbe03d1792170a0f3009cee" },
	{ "F.5.3 CTR-AES192.Encrypt",
	  "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
	  "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff",
	  "6bc1bee22e409f96e93d7e117393172a"
	  "ae2d8a571e03ac9c9eb76fac45af8e51"
	  "30c81c46a35ce411e5fbc1191a0a52ef"
	  "f69f2445df4f9b17ad2b417be66c3710",
	  "1abc932417521ca24f2b0459fe7e6e0b"
	  "090339ec0aa6faefd5ccc2c6f4ce8e94"
	  "1e36b26bd1ebc670d1bd1d665620abf7"
	  "4f78a7f6d29809585a97daec58c6b050" },
	{ "F.5.5 CTR-AES256.Encrypt",
	  "603deb1015ca71be2b73aef0857d7781"
	  "1f352c073b6108d72d9810a30914dff4",
	  "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff",
	  "6bc1bee22e409f96e93d7e117393172a"
	  "ae2d8a571e03ac9c9eb76fac45af8e51"
	  "30c81c46a35ce411e5fbc1191a0a52ef"
	  "f69f2445df4f9b17ad2b417be66c3710",
	  "601ec313775789a5b7a7f504bbf3d228"
	  "f443e3ca4d62b59aca84e990cacaf5c5"
	  "2b0930daa23de94ce87017ba2d84988d"
	  "dfc9c58db67aada613c2dd08457941a6" },
};

static void
test_kat(void)
{
	unsigned char key[32], ctr[16], pt[64], ct[64], out[64], iv[16];
	unsigned char want_iv[16];
	struct hpn_ctr_mt *mt;
	EVP_CIPHER_CTX *ref;
	size_t i, keylen, off, n, splits[] = { 64, 1, 16, 7 };
	int nw, sp;

	for (i = 0; i < sizeof(kat) / sizeof(kat[0]); i++) {
		keylen = strlen(kat[i].key) / 2;
		hex2bin(kat[i].key, key, keylen);
		hex2bin(kat[i].ctr, ctr, 16);
		hex2bin(kat[i].pt, pt, 64);
		hex2bin(kat[i].ct, ct, 64);

		/* The stock EVP agrees with the typed-in vector. */
		ref = ref_new(key, keylen, ctr);
		ref_crypt(ref, out, pt, 64);
		EVP_CIPHER_CTX_free(ref);
		CHECK(memcmp(out, ct, 64) == 0, "%s: EVP reference mismatch",
		    kat[i].name);

		for (nw = 1; nw <= MAX_WORKERS; nw++) {
			for (sp = 0; sp < 4; sp++) {
				mt = mt_new_or_die(key, keylen, ctr, nw);
				memset(out, 0, sizeof(out));
				for (off = 0; off < 64; off += n) {
					n = splits[sp];
					if (n > 64 - off)
						n = 64 - off;
					CHECK(hpn_ctr_mt_crypt(mt, out + off,
					    pt + off, n) == 0, "crypt failed");
				}
				CHECK(memcmp(out, ct, 64) == 0,
				    "%s: %d workers, split %zu: mismatch",
				    kat[i].name, nw, splits[sp]);
				/* decrypt in place with a fresh context */
				hpn_ctr_mt_get_iv(mt, iv);
				memcpy(want_iv, ctr, 16);
				add128(want_iv, 4);
				CHECK(memcmp(iv, want_iv, 16) == 0,
				    "%s: IV after 4 blocks", kat[i].name);
				hpn_ctr_mt_free(mt);
				mt = mt_new_or_die(key, keylen, ctr, nw);
				CHECK(hpn_ctr_mt_crypt(mt, out, out, 64) == 0,
				    "crypt failed");
				CHECK(memcmp(out, pt, 64) == 0,
				    "%s: %d workers: in-place decrypt mismatch",
				    kat[i].name, nw);
				hpn_ctr_mt_free(mt);
			}
		}
	}
}

/* Random keys, IVs, lengths and split points vs stock EVP. */
static void
test_random(void)
{
	unsigned char key[32], iv[16], *src;
	struct hpn_ctr_mt *mt;
	EVP_CIPHER_CTX *ref;
	size_t keylen, span, nslots, len, maxlen;
	int it, n = iters(120), nw, mode, inplace, rounds, j;
	char what[64];

	for (it = 0; it < n; it++) {
		keylen = 16 + 8 * rnd_range(0, 2);
		nw = (int)rnd_range(1, MAX_WORKERS);
		rnd_bytes(key, keylen);
		rnd_bytes(iv, 16);
		mt = mt_new_or_die(key, keylen, iv, nw);
		hpn_ctr_mt_test_geometry(mt, &span, &nslots);
		ref = ref_new(key, keylen, iv);
		/* several rounds on the same context: up to ~3 rings */
		rounds = (int)rnd_range(1, 4);
		for (j = 0; j < rounds; j++) {
			maxlen = span * nslots * 3 / 2 + 100;
			if (maxlen < 256 * 1024)
				maxlen = 256 * 1024;
			len = rnd_range(1, 4) == 1 ? rnd_range(1, 100) :
			    rnd_range(1, maxlen);
			if ((src = malloc(len)) == NULL)
				exit(2);
			rnd_bytes(src, len);
			mode = (int)rnd_range(0, 3);
			if (mode == 0 && len > 64 * 1024)
				mode = 1;	/* keep the tiny mode quick */
			inplace = (int)rnd_range(0, 1);
			snprintf(what, sizeof(what),
			    "random it=%d aes%zu nw=%d", it, keylen * 8, nw);
			run_compare(mt, ref, src, len, mode, inplace, span,
			    what);
			free(src);
		}
		EVP_CIPHER_CTX_free(ref);
		hpn_ctr_mt_free(mt);
	}
}

/*
 * Counter wrap: IVs just below 2^32, 2^64 and 2^128 boundaries (of the
 * low 32 bits, low 64 bits and the whole block), at offsets that put the
 * wrap inside the first span, exactly at a span boundary and inside a
 * later span.
 */
static void
test_wrap(void)
{
	unsigned char key[32], iv[16], *src;
	struct hpn_ctr_mt *mt;
	EVP_CIPHER_CTX *ref;
	size_t span, nslots, sb, len, keylen;
	uint64_t offs[6], low;
	int b, o, nw, i;
	const int bits[] = { 32, 64, 128 };
	char what[96];

	/* probe geometry */
	memset(key, 0, sizeof(key));
	memset(iv, 0, sizeof(iv));
	mt = mt_new_or_die(key, 16, iv, 1);
	hpn_ctr_mt_test_geometry(mt, &span, &nslots);
	hpn_ctr_mt_free(mt);
	sb = span / 16;
	offs[0] = 16;		/* wrap 16 blocks into span 0 */
	offs[1] = 1;		/* wrap after the first block */
	offs[2] = sb;		/* wrap exactly at span boundary 1 */
	offs[3] = 2 * sb + 3;	/* wrap inside span 2 */
	offs[4] = nslots * sb + sb / 2 + 1; /* inside 2nd generation */
	offs[5] = sb - 1;	/* one block before span boundary */

	for (b = 0; b < 3; b++) {
		for (o = 0; o < 6; o++) {
			keylen = 16 + 8 * (size_t)((b + o) % 3);
			nw = 1 + (b * 6 + o) % MAX_WORKERS;
			rnd_bytes(key, keylen);
			/*
			 * Random high part; the low bits[b] bits are
			 * 2^bits - offs so the wrap of that field happens
			 * offs blocks in.  For 2^128 the high part is all
			 * ones, so the whole block wraps to zero.
			 */
			rnd_bytes(iv, 16);
			if (bits[b] == 128)
				memset(iv, 0xff, 8);
			low = (uint64_t)0 - offs[o];
			if (bits[b] == 32)
				low = (low & 0xffffffffULL) |
				    ((uint64_t)iv[8] << 56 |
				    (uint64_t)iv[9] << 48 |
				    (uint64_t)iv[10] << 40 |
				    (uint64_t)iv[11] << 32);
			for (i = 0; i < 8; i++)
				iv[15 - i] = (unsigned char)(low >> (8 * i));
			/* encrypt far enough past the wrap */
			len = (size_t)(offs[o] + 2 * sb) * 16 + 37;
			if ((src = malloc(len)) == NULL)
				exit(2);
			rnd_bytes(src, len);
			mt = mt_new_or_die(key, keylen, iv, nw);
			ref = ref_new(key, keylen, iv);
			snprintf(what, sizeof(what),
			    "wrap 2^%d off %" PRIu64 " aes%zu nw=%d",
			    bits[b], offs[o], keylen * 8, nw);
			run_compare(mt, ref, src, len, o % 4, o & 1, span,
			    what);
			EVP_CIPHER_CTX_free(ref);
			hpn_ctr_mt_free(mt);
			free(src);
		}
	}
}

/* get_iv == iv + ceil(bytes / 16) at many points */
static void
test_get_iv(void)
{
	unsigned char key[16], iv[16], want[16], got[16], evp_iv[16];
	unsigned char *buf, *ebuf;
	struct hpn_ctr_mt *mt;
	EVP_CIPHER_CTX *ref;
	size_t span, nslots, total = 0, steps[12], i;
	int rep;

	rnd_bytes(key, 16);
	for (rep = 0; rep < 3; rep++) {
		rnd_bytes(iv, 16);
		if (rep == 1)
			memset(iv, 0xff, 16);	/* wraps right away */
		mt = mt_new_or_die(key, 16, iv, 1 + rep);
		ref = ref_new(key, 16, iv);
		hpn_ctr_mt_test_geometry(mt, &span, &nslots);
		steps[0] = 0;
		steps[1] = 1;
		steps[2] = 15;
		steps[3] = 16;
		steps[4] = 17;
		steps[5] = span - 49;
		steps[6] = span;
		steps[7] = span + 1;
		steps[8] = 3 * span - 1;
		steps[9] = nslots * span;
		steps[10] = 1;
		steps[11] = 5 * nslots * span + 7;
		total = 0;
		for (i = 0; i < 12; i++) {
			if ((buf = calloc(1, steps[i] + 1)) == NULL ||
			    (ebuf = calloc(1, steps[i] + 1)) == NULL)
				exit(2);
			CHECK(hpn_ctr_mt_crypt(mt, buf, buf, steps[i]) == 0,
			    "get_iv: crypt failed");
			ref_crypt(ref, ebuf, ebuf, steps[i]);
			total += steps[i];
			memcpy(want, iv, 16);
			add128(want, (total + 15) / 16);
			hpn_ctr_mt_get_iv(mt, got);
			ref_iv(ref, evp_iv);
			CHECK(memcmp(got, want, 16) == 0,
			    "get_iv after %zu bytes: wrong counter", total);
			CHECK(memcmp(got, evp_iv, 16) == 0,
			    "get_iv after %zu bytes: differs from EVP", total);
			CHECK(memcmp(buf, ebuf, steps[i]) == 0,
			    "get_iv: keystream differs after %zu", total);
			free(buf);
			free(ebuf);
		}
		EVP_CIPHER_CTX_free(ref);
		hpn_ctr_mt_free(mt);
	}
}

/* Repeated free + new (rekey) must not accumulate threads. */
static void
test_rekey(void)
{
	unsigned char key[32], iv[16], *src, *out, *want;
	struct hpn_ctr_mt *mt = NULL, *next;
	EVP_CIPHER_CTX *ref;
	size_t keylen, len;
	int base, i, nw, n = 200, cnt;

	base = base_threads();
	CHECK(base >= 1, "cannot count threads in /proc/self/task");
	if ((src = malloc(256 * 1024)) == NULL ||
	    (out = malloc(256 * 1024)) == NULL ||
	    (want = malloc(256 * 1024)) == NULL)
		exit(2);
	rnd_bytes(src, 256 * 1024);
	for (i = 0; i < n; i++) {
		keylen = 16 + 8 * (size_t)(i % 3);
		nw = 1 + i % MAX_WORKERS;
		rnd_bytes(key, keylen);
		rnd_bytes(iv, 16);
		next = mt_new_or_die(key, keylen, iv, nw);
		/* mid-stream: old context still alive while the new starts */
		if (mt != NULL) {
			len = rnd_range(1, 4096);
			CHECK(hpn_ctr_mt_crypt(mt, out, src, len) == 0,
			    "rekey: crypt on old context failed");
			hpn_ctr_mt_free(mt);
		}
		mt = next;
		cnt = settle_threads(base + nw);
		CHECK(cnt == base + nw, "rekey %d: %d threads, want %d",
		    i, cnt, base + nw);
		len = rnd_range(1, 256 * 1024);
		ref = ref_new(key, keylen, iv);
		ref_crypt(ref, want, src, len);
		EVP_CIPHER_CTX_free(ref);
		CHECK(hpn_ctr_mt_crypt(mt, out, src, len) == 0,
		    "rekey: crypt failed");
		CHECK(memcmp(out, want, len) == 0, "rekey %d: mismatch", i);
	}
	hpn_ctr_mt_free(mt);
	cnt = settle_threads(base);
	CHECK(cnt == base, "after rekeys: %d threads, want %d", cnt, base);
	free(src);
	free(out);
	free(want);
}

static void
test_errors(void)
{
	unsigned char key[32], iv[16], buf[32];
	struct hpn_ctr_mt *mt;
	const char *err;
	int base, i, cnt;

	memset(key, 1, sizeof(key));
	memset(iv, 2, sizeof(iv));
	memset(buf, 0, sizeof(buf));

	err = NULL;
	CHECK(hpn_ctr_mt_new(key, 17, iv, 1, &err) == NULL && err != NULL,
	    "keylen 17 accepted");
	err = NULL;
	CHECK(hpn_ctr_mt_new(key, 16, iv, 0, &err) == NULL && err != NULL,
	    "0 workers accepted");
	err = NULL;
	CHECK(hpn_ctr_mt_new(NULL, 16, iv, 1, &err) == NULL && err != NULL,
	    "NULL key accepted");
	CHECK(hpn_ctr_mt_new(key, 16, NULL, 1, NULL) == NULL,
	    "NULL iv accepted");
	CHECK(hpn_ctr_mt_crypt(NULL, buf, buf, 16) < 0, "NULL ctx crypt");
	hpn_ctr_mt_free(NULL);

	mt = mt_new_or_die(key, 16, iv, 1);
	CHECK(hpn_ctr_mt_crypt(mt, NULL, buf, 16) < 0, "NULL dst accepted");
	CHECK(hpn_ctr_mt_crypt(mt, buf, buf, 0) == 0, "len 0 rejected");
	hpn_ctr_mt_free(mt);

	/* thread creation failure: NULL + reason, nothing left behind */
	base = base_threads();
	for (i = 0; i < 4; i++) {
		hpn_ctr_mt_test_fail_create = i;
		err = NULL;
		mt = hpn_ctr_mt_new(key, 32, iv, 4, &err);
		CHECK(mt == NULL, "thread failure %d: context returned", i);
		CHECK(err != NULL && strstr(err, "thread") != NULL,
		    "thread failure %d: reason \"%s\"", i,
		    err ? err : "(null)");
		hpn_ctr_mt_free(mt);
		cnt = settle_threads(base);
		CHECK(cnt == base, "thread failure %d: %d threads left, "
		    "want %d", i, cnt, base);
	}
	hpn_ctr_mt_test_fail_create = -1;

	/* EVP failure in a worker: error, not a hang; free still joins */
	for (i = 0; i < 4; i++) {
		unsigned char *big;
		size_t span, nslots, len;
		int r1, r2;

		/* armed before the workers start filling */
		atomic_store(&hpn_ctr_mt_test_fail_fill, 3 * i);
		mt = mt_new_or_die(key, 16, iv, 1 + i);
		hpn_ctr_mt_test_geometry(mt, &span, &nslots);
		/*
		 * The (3i + 1)-th fill fails, whichever span it is for: with
		 * 1 + i workers claiming spans ahead, that can be any span up
		 * to 3i + 1 + i.  Read well past it (nslots + 8 alone was the
		 * edge for the small geometry: a late worker let a later span
		 * fail first, once, under ThreadSanitizer and load).
		 */
		len = span * (nslots + 4 * (i + 1) + 8);
		if ((big = calloc(1, len)) == NULL)
			exit(2);
		r1 = hpn_ctr_mt_crypt(mt, big, big, len);
		r2 = hpn_ctr_mt_crypt(mt, big, big, 16);
		CHECK(r1 == HPN_CTR_MT_ERR_CRYPTO, "fill failure %d: crypt "
		    "returned %d, want %d", i, r1, HPN_CTR_MT_ERR_CRYPTO);
		CHECK(r2 == HPN_CTR_MT_ERR_CRYPTO, "fill failure %d: error "
		    "not sticky (%d)", i, r2);
		hpn_ctr_mt_free(mt);
		atomic_store(&hpn_ctr_mt_test_fail_fill, -1);
		free(big);
		cnt = settle_threads(base);
		CHECK(cnt == base, "fill failure %d: %d threads left, "
		    "want %d", i, cnt, base);
	}
}

static void
test_auto_workers(void)
{
	cpu_set_t set, one;
	int ncpu, want, cap, got;

	if (sched_getaffinity(0, sizeof(set), &set) != 0) {
		fail("sched_getaffinity: %s", strerror(errno));
		return;
	}
	ncpu = CPU_COUNT(&set);
	for (cap = 0; cap <= 8; cap++) {
		want = ncpu - 1 < cap ? ncpu - 1 : cap;
		if (ncpu < HPN_CTR_MT_AUTO_MIN_CPUS)
			want = 0;
		got = hpn_ctr_mt_auto_workers(cap);
		CHECK(got == want, "auto_workers(%d) = %d, want %d (ncpu %d)",
		    cap, got, want, ncpu);
	}
	/* pinned to one CPU: stay single-threaded (and so on two) */
	CPU_ZERO(&one);
	for (cap = 0; cap < CPU_SETSIZE; cap++) {
		if (CPU_ISSET(cap, &set)) {
			CPU_SET(cap, &one);
			break;
		}
	}
	if (sched_setaffinity(0, sizeof(one), &one) == 0) {
		got = hpn_ctr_mt_auto_workers(8);
		CHECK(got == 0, "auto_workers on one CPU = %d", got);
		sched_setaffinity(0, sizeof(set), &set);
	}
}

/* Worker threads must block every (blockable) signal. */
static void
test_sigmask(void)
{
	unsigned char key[16], iv[16];
	struct hpn_ctr_mt *mt;
	DIR *d;
	struct dirent *de;
	char path[300], line[256], before[4096];
	FILE *f;
	unsigned long long blk;
	pid_t tid;
	int nchecked = 0, found;
	const int sigs[] = { SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGALRM,
	    SIGTERM, SIGCHLD, SIGUSR1, SIGUSR2, SIGWINCH, SIGTSTP };
	size_t i;

	/* remember the tasks that existed before */
	before[0] = '\0';
	if ((d = opendir("/proc/self/task")) == NULL) {
		fail("opendir /proc/self/task");
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		strncat(before, " ", sizeof(before) - strlen(before) - 1);
		strncat(before, de->d_name,
		    sizeof(before) - strlen(before) - 1);
		strncat(before, " ", sizeof(before) - strlen(before) - 1);
	}
	closedir(d);

	memset(key, 3, sizeof(key));
	memset(iv, 4, sizeof(iv));
	mt = mt_new_or_die(key, 16, iv, 3);
	if ((d = opendir("/proc/self/task")) == NULL) {
		fail("opendir /proc/self/task");
		hpn_ctr_mt_free(mt);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), " %s ", de->d_name);
		if (strstr(before, path) != NULL)
			continue;
		tid = (pid_t)atoi(de->d_name);
		snprintf(path, sizeof(path), "/proc/self/task/%d/status",
		    (int)tid);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		found = 0;
		while (fgets(line, sizeof(line), f) != NULL) {
			if (sscanf(line, "SigBlk: %llx", &blk) == 1) {
				found = 1;
				break;
			}
		}
		fclose(f);
		CHECK(found, "no SigBlk for task %d", (int)tid);
		for (i = 0; found && i < sizeof(sigs) / sizeof(sigs[0]); i++)
			CHECK((blk >> (sigs[i] - 1)) & 1,
			    "worker %d does not block signal %d", (int)tid,
			    sigs[i]);
		nchecked++;
	}
	closedir(d);
	CHECK(nchecked == 3, "found %d worker tasks, want 3", nchecked);
	hpn_ctr_mt_free(mt);
}

static double
proc_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* An idle context must leave its workers asleep. */
static void
test_idle(void)
{
	unsigned char key[32], iv[16], *buf, *want;
	struct hpn_ctr_mt *mt;
	EVP_CIPHER_CTX *ref;
	struct timespec ts = { 1, 500000000 };
	size_t len = 4 << 20;
	double c0, c1, budget_ms = 20;
	const char *e;
	int nw;

	if ((e = getenv("HPN_TEST_IDLE_MS")) != NULL)
		budget_ms = atof(e);
	if ((buf = malloc(len)) == NULL || (want = malloc(len)) == NULL)
		exit(2);
	for (nw = 1; nw <= MAX_WORKERS; nw += 3) {
		rnd_bytes(key, 32);
		rnd_bytes(iv, 16);
		rnd_bytes(buf, len);
		ref = ref_new(key, 32, iv);
		ref_crypt(ref, want, buf, len);
		mt = mt_new_or_die(key, 32, iv, nw);
		CHECK(hpn_ctr_mt_crypt(mt, buf, buf, len) == 0, "idle: crypt");
		CHECK(memcmp(buf, want, len) == 0, "idle: mismatch");
		c0 = proc_cpu();
		nanosleep(&ts, NULL);
		c1 = proc_cpu();
		CHECK((c1 - c0) * 1000 < budget_ms,
		    "idle (%d workers): process used %.1f ms CPU in 1.5 s",
		    nw, (c1 - c0) * 1000);
		printf("  idle %d workers: %.3f ms CPU over 1.5 s\n", nw,
		    (c1 - c0) * 1000);
		/* still correct after the idle period */
		rnd_bytes(buf, 100000);
		ref_crypt(ref, want, buf, 100000);
		CHECK(hpn_ctr_mt_crypt(mt, buf, buf, 100000) == 0,
		    "idle: crypt");
		CHECK(memcmp(buf, want, 100000) == 0,
		    "idle: mismatch after idle");
		EVP_CIPHER_CTX_free(ref);
		hpn_ctr_mt_free(mt);
	}
	free(buf);
	free(want);
}

/*
 * fork(): in the child the workers are gone; the context must carry on
 * (filling spans itself) and be freed without hanging, and the parent's
 * context must be unaffected.
 */
static void
test_fork(void)
{
	unsigned char key[32], iv[16], *src;
	struct hpn_ctr_mt *mt;
	EVP_CIPHER_CTX *ref;
	size_t keylen, span, nslots, len;
	int it, j, nw, status;
	pid_t pid;

	for (it = 0; it < iters(12); it++) {
		keylen = 16 + 8 * rnd_range(0, 2);
		nw = (int)rnd_range(1, MAX_WORKERS);
		rnd_bytes(key, keylen);
		rnd_bytes(iv, 16);
		mt = mt_new_or_die(key, keylen, iv, nw);
		hpn_ctr_mt_test_geometry(mt, &span, &nslots);
		ref = ref_new(key, keylen, iv);
		len = span * nslots * 2 + 1000;
		if ((src = malloc(len)) == NULL)
			exit(2);
		rnd_bytes(src, len);
		run_compare(mt, ref, src, rnd_range(1, len), 1, 0, span,
		    "before fork");
		fflush(NULL);
		if ((pid = fork()) == -1) {
			fail("fork: %s", strerror(errno));
			break;
		}
		if (pid == 0) {
			failures = 0;
			for (j = 0; j < 3; j++)
				run_compare(mt, ref, src, rnd_range(1, len),
				    (int)rnd_range(1, 3), j & 1, span,
				    "child after fork");
			hpn_ctr_mt_free(mt);
			EVP_CIPHER_CTX_free(ref);
			_exit(failures == 0 ? 0 : 1);
		}
		for (j = 0; j < 3; j++)
			run_compare(mt, ref, src, rnd_range(1, len),
			    (int)rnd_range(1, 3), j & 1, span,
			    "parent after fork");
		CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		    WEXITSTATUS(status) == 0, "fork it=%d: child failed "
		    "(status %d)", it, status);
		free(src);
		EVP_CIPHER_CTX_free(ref);
		hpn_ctr_mt_free(mt);
	}
}

static void
run(const char *name, void (*fn)(void))
{
	int f0 = failures, c0 = checks;
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	fn();
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%-14s %s (%d checks, %.2f s)\n", name,
	    failures == f0 ? "ok" : "FAILED", checks - c0,
	    (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	fflush(stdout);
}

int
main(void)
{
	const char *e;
	unsigned char key[16] = { 0 }, iv[16] = { 0 };
	struct hpn_ctr_mt *mt;
	size_t span, nslots;

	alarm(WATCHDOG_SECS);	/* default action kills a hung test */
	if ((e = getenv("HPN_TEST_SEED")) != NULL)
		rng_state = strtoull(e, NULL, 0);
	else
		rng_state = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	if (rng_state == 0)
		rng_state = 1;
	if ((e = getenv("HPN_TEST_SCALE")) != NULL && atoi(e) > 0)
		scale = atoi(e);
	mt = mt_new_or_die(key, 16, iv, 1);
	hpn_ctr_mt_test_geometry(mt, &span, &nslots);
	hpn_ctr_mt_free(mt);
	printf("ctr-mt tests: seed HPN_TEST_SEED=0x%016" PRIx64
	    " span %zu bytes, %zu slots for 1 worker, scale %d%%\n",
	    rng_state, span, nslots, scale);

	run("errors", test_errors);
	run("kat", test_kat);
	run("get_iv", test_get_iv);
	run("wrap", test_wrap);
	run("random", test_random);
	run("rekey", test_rekey);
	run("sigmask", test_sigmask);
	run("auto_workers", test_auto_workers);
	run("idle", test_idle);
	run("fork", test_fork);

	printf("%s: %d checks, %d failures\n", failures ? "FAIL" : "PASS",
	    checks, failures);
	return failures ? 1 : 0;
}
