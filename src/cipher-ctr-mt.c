/*
 * Copyright (c) 2026 The HPN patch set contributors.
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
 * Multi-threaded AES-CTR.
 *
 * The keystream is cut into spans of HPN_CTR_MT_SPAN_BYTES.  Span number
 * s (s = 0, 1, 2, ...) starts at counter block iv + s * span_blocks
 * (128-bit big-endian arithmetic, wrapping at 2^128 exactly like
 * OpenSSL's CTR mode) and lives in ring slot s % nslots, so slot k of
 * generation g holds span g * nslots + k.
 *
 * Each slot has one atomic sequence word:
 *	seq == 2s	slot is empty and may be filled with span s
 *	seq == 2s + 1	slot holds the keystream of span s
 * Workers claim span numbers with an atomic counter, wait until their
 * slot is empty (seq == 2s), fill it with EVP AES-CTR over a zero
 * buffer (one EVP_CIPHER_CTX per worker, key set once, only the IV is
 * re-set per span) and publish it with a release store of 2s + 1.  The
 * main thread drains spans strictly in order: acquire load until
 * seq == 2d + 1, XOR, then release the slot for span d + nslots.  A slot
 * is therefore owned exclusively by one thread at a time.  Per 64 KiB
 * span the main thread's hot path is one acquire load, one release
 * store, one seq_cst store and one seq_cst load; no locks.
 *
 * Waiting: the main thread spins for at most HPN_CTR_MT_SPIN_NS, a
 * worker for at most HPN_CTR_MT_WORKER_SPIN_NS; then they block on a
 * condition variable.  Wakeups are "Dekker" style: the sleeper
 * publishes what it waits for (mwake/wwake, seq_cst) under the mutex
 * and re-checks the condition; the waker makes the condition true
 * (seq_cst) and then checks whether anyone waits for it, taking the
 * mutex only in that case.  Both sides use hysteresis to amortise a
 * sleep/wakeup (tens of microseconds and several microseconds of CPU
 * on a VM) over many spans: a sleeping main thread is woken when
 * nready_want spans are ready, sleeping workers when nfree_want slots
 * are empty.  All spinning is bounded in time, so an idle connection
 * leaves every worker asleep.
 *
 * Deadlock freedom: a sleeping main thread waiting for spans
 * d .. d + nready_want - 1 needs workers to fill them, and a worker may
 * be waiting for the release of span s - nslots + nfree_want - 1; with
 * released == d both are satisfiable iff
 * nready_want + nfree_want <= nslots + 1.
  */

#ifdef __linux__
# ifndef _GNU_SOURCE
#  define _GNU_SOURCE	/* sched_getaffinity, CPU_COUNT, explicit_bzero */
# endif
#endif

#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/opensslv.h>

#include "cipher-ctr-mt.h"

/*
 * Tunables; may be overridden at compile time for benchmarks and tests.
 * Defaults were chosen with bench/cipher (see bench/cipher/README.md)
 * on a 2-vCPU AMD EPYC KVM guest, where a futex sleep/wakeup costs
 * ~25 us of latency and several us of CPU: the ring must hold enough
 * keystream to ride that out.  4 x 32 KiB slots made main thread and
 * worker sleep alternately (2.3 GB/s vs 11 GB/s stock); 64 KiB spans
 * with 16 slots (1 MiB) per worker, capped at 32 slots, gave the lowest
 * main-thread CPU; 16 KiB spans or a 5 us main spin roughly doubled it.
 * The ring lives in L3 rather than L2, but the keystream has to cross
 * cores anyway and rings of 256 KiB to 4 MiB measured alike.
 */
#ifndef HPN_CTR_MT_SPAN_BYTES
# define HPN_CTR_MT_SPAN_BYTES		(64 * 1024)
#endif
#ifndef HPN_CTR_MT_SLOTS_PER_WORKER
# define HPN_CTR_MT_SLOTS_PER_WORKER	16
#endif
#ifndef HPN_CTR_MT_MIN_SLOTS
# define HPN_CTR_MT_MIN_SLOTS		16
#endif
#ifndef HPN_CTR_MT_MAX_SLOTS
# define HPN_CTR_MT_MAX_SLOTS		32
#endif
#ifndef HPN_CTR_MT_SPIN_NS
# define HPN_CTR_MT_SPIN_NS		1000
#endif
#ifndef HPN_CTR_MT_WORKER_SPIN_NS
# define HPN_CTR_MT_WORKER_SPIN_NS	10000
#endif
#ifndef HPN_CTR_MT_READY_DIV
# define HPN_CTR_MT_READY_DIV		2	/* nready_want = nslots / it */
#endif
#ifndef HPN_CTR_MT_FREE_DIV
# define HPN_CTR_MT_FREE_DIV		2	/* nfree_want = nslots / it */
#endif
#define HPN_CTR_MT_MAX_WORKERS		64

#if (HPN_CTR_MT_SPAN_BYTES % HPN_CTR_MT_BLOCKSIZE) != 0 || \
    HPN_CTR_MT_SPAN_BYTES <= 0 || HPN_CTR_MT_SPAN_BYTES > (1 << 24)
# error "HPN_CTR_MT_SPAN_BYTES must be a positive multiple of 16, <= 16MB"
#endif
#if HPN_CTR_MT_MIN_SLOTS < 2 || HPN_CTR_MT_MAX_SLOTS < HPN_CTR_MT_MIN_SLOTS
# error "need 2 <= HPN_CTR_MT_MIN_SLOTS <= HPN_CTR_MT_MAX_SLOTS"
#endif
#if HPN_CTR_MT_READY_DIV < 2 || HPN_CTR_MT_FREE_DIV < 2
# error "hysteresis divisors must be at least 2"
#endif

#define HPN_CTR_MT_CACHELINE		64
#define SEQ_NONE			UINT64_MAX

struct hpn_ctr_mt_slot {
	_Alignas(HPN_CTR_MT_CACHELINE) _Atomic uint64_t seq;
	unsigned char *ks;		/* span_bytes of keystream */
	unsigned char ctr[HPN_CTR_MT_BLOCKSIZE]; /* first block of span */
};

struct hpn_ctr_mt_worker {
	struct hpn_ctr_mt *mt;
	EVP_CIPHER_CTX *evp;
	pthread_t tid;
	int started;
};

struct hpn_ctr_mt {
	/* Immutable after hpn_ctr_mt_new(). */
	struct hpn_ctr_mt_slot *slots;
	struct hpn_ctr_mt_worker *workers;
	unsigned char *ksmem;		/* nslots * span bytes */
	unsigned char *zero;		/* span bytes of zeroes */
	size_t span;			/* bytes per span */
	uint64_t span_blocks;
	uint64_t nslots;
	uint64_t nready_want;		/* main hysteresis, >= 1 */
	uint64_t nfree_want;		/* worker hysteresis, >= 1 */
	int nworkers;
	int sync_init;
	unsigned long gen;		/* fork generation at creation */

	/* Main thread only. */
	_Alignas(HPN_CTR_MT_CACHELINE) uint64_t dseq; /* span draining */
	unsigned char *cur;		/* keystream of span dseq or NULL */
	size_t pos;			/* bytes of span dseq used */
	unsigned char ctr[HPN_CTR_MT_BLOCKSIZE]; /* first block of dseq */
	int error;

	/* Written by workers. */
	_Alignas(HPN_CTR_MT_CACHELINE) _Atomic uint64_t claim;
	_Atomic int failed;

	/* Written by main thread. */
	_Alignas(HPN_CTR_MT_CACHELINE) _Atomic uint64_t released;
	_Atomic int quit;

	/* Sleep/wakeup; mwake/wwake change only with lock held. */
	_Alignas(HPN_CTR_MT_CACHELINE) _Atomic uint64_t mwake;
	_Atomic uint64_t wwake;
	pthread_mutex_t lock;
	pthread_cond_t mcv;		/* main thread waits here */
	pthread_cond_t wcv;		/* workers wait here */
};

#ifdef HPN_CTR_MT_TESTING
/* Test hooks, compiled only into the unit tests. */
int hpn_ctr_mt_test_fail_create = -1;	/* n-th pthread_create fails */
_Atomic int hpn_ctr_mt_test_fail_fill = -1; /* fill after n good ones fails */

void
hpn_ctr_mt_test_geometry(struct hpn_ctr_mt *mt, size_t *span, size_t *nslots)
{
	*span = mt->span;
	*nslots = (size_t)mt->nslots;
}
#endif

/*
 * Fork: worker threads do not exist in a child.  A context made before a
 * fork is "orphaned" in the child: it then fills each span in the calling
 * thread (the workers' EVP contexts are there, unused), never waits for a
 * worker, and is freed without joining or touching its locks, which a
 * worker may have held at the fork.  The cipher stream goes on unchanged.
 */
static _Atomic unsigned long fork_gen;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void
atfork_child(void)
{
	atomic_fetch_add(&fork_gen, 1);
}

static void
register_atfork(void)
{
	(void)pthread_atfork(NULL, NULL, atfork_child);
}

static int
orphaned(const struct hpn_ctr_mt *mt)
{
	return mt->gen != atomic_load_explicit(&fork_gen, memory_order_relaxed);
}

static void
wipe(void *p, size_t len)
{
	if (p != NULL && len != 0)
		explicit_bzero(p, len);
}

/* ctr += n, 128-bit big-endian, modulo 2^128. */
static void
ctr_add(unsigned char *ctr, uint64_t n)
{
	unsigned int v, carry = 0;
	int i;

	for (i = HPN_CTR_MT_BLOCKSIZE - 1; i >= 0; i--) {
		if (n == 0 && carry == 0)
			break;
		v = ctr[i] + (unsigned int)(n & 0xff) + carry;
		ctr[i] = v & 0xff;
		carry = v >> 8;
		n >>= 8;
	}
}

/* dst = src ^ ks, n bytes; dst may equal src. */
static void
xor_bytes(unsigned char *dst, const unsigned char *src,
    const unsigned char *ks, size_t n)
{
#if defined(__GNUC__)
	typedef uint64_t vec_t __attribute__((vector_size(16)));
	vec_t a0, a1, a2, a3, b0, b1, b2, b3;
#endif
	uint64_t a, b;

#if defined(__GNUC__)
	/* 16-byte vectors: plain SSE2/NEON, no runtime dispatch needed */
	while (n >= 64) {
		memcpy(&a0, src, 16);
		memcpy(&a1, src + 16, 16);
		memcpy(&a2, src + 32, 16);
		memcpy(&a3, src + 48, 16);
		memcpy(&b0, ks, 16);
		memcpy(&b1, ks + 16, 16);
		memcpy(&b2, ks + 32, 16);
		memcpy(&b3, ks + 48, 16);
		a0 ^= b0;
		a1 ^= b1;
		a2 ^= b2;
		a3 ^= b3;
		memcpy(dst, &a0, 16);
		memcpy(dst + 16, &a1, 16);
		memcpy(dst + 32, &a2, 16);
		memcpy(dst + 48, &a3, 16);
		dst += 64;
		src += 64;
		ks += 64;
		n -= 64;
	}
#endif
	while (n >= 8) {
		memcpy(&a, src, 8);
		memcpy(&b, ks, 8);
		a ^= b;
		memcpy(dst, &a, 8);
		dst += 8;
		src += 8;
		ks += 8;
		n -= 8;
	}
	while (n > 0) {
		*dst++ = *src++ ^ *ks++;
		n--;
	}
}

#if HPN_CTR_MT_SPIN_NS > 0 || HPN_CTR_MT_WORKER_SPIN_NS > 0
static void
cpu_relax(void)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
	__asm__ __volatile__("pause" ::: "memory");
#elif defined(__GNUC__) && defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

static int64_t
elapsed_ns(const struct timespec *t0)
{
	struct timespec t;

	if (clock_gettime(CLOCK_MONOTONIC, &t) != 0)
		return INT64_MAX;
	return (int64_t)(t.tv_sec - t0->tv_sec) * 1000000000 +
	    (t.tv_nsec - t0->tv_nsec);
}

/*
 * Spin for at most max_ns until the slot's sequence word equals want.
 * Returns 1 on success, 0 on timeout.
 */
static int
spin_seq(struct hpn_ctr_mt_slot *slot, uint64_t want, int64_t max_ns)
{
	struct timespec t0;
	unsigned int i;

	if (clock_gettime(CLOCK_MONOTONIC, &t0) != 0)
		return 0;
	/* Iteration cap keeps this bounded even if the clock misbehaves */
	for (i = 1; i < (1U << 20); i++) {
		cpu_relax();
		if (atomic_load_explicit(&slot->seq,
		    memory_order_acquire) == want)
			return 1;
		if ((i & 15) == 0 && elapsed_ns(&t0) >= max_ns)
			break;
	}
	return 0;
}
#endif

static int
span_filled(struct hpn_ctr_mt *mt, uint64_t s, memory_order mo)
{
	struct hpn_ctr_mt_slot *slot = &mt->slots[s % mt->nslots];

	return atomic_load_explicit(&slot->seq, mo) == 2 * s + 1;
}

/* Worker: encrypt a zero buffer at the slot's counter. */
static int
fill_span(struct hpn_ctr_mt_worker *w, struct hpn_ctr_mt_slot *slot)
{
	struct hpn_ctr_mt *mt = w->mt;
	int outl = 0;

#ifdef HPN_CTR_MT_TESTING
	if (atomic_load(&hpn_ctr_mt_test_fail_fill) >= 0 &&
	    atomic_fetch_sub(&hpn_ctr_mt_test_fail_fill, 1) == 0)
		return -1;
#endif
	if (EVP_EncryptInit_ex(w->evp, NULL, NULL, NULL, slot->ctr) != 1)
		return -1;
	if (EVP_EncryptUpdate(w->evp, slot->ks, &outl, mt->zero,
	    (int)mt->span) != 1 || (size_t)outl != mt->span)
		return -1;
#ifdef HPN_CTR_MT_TESTING
	{
		/*
		 * libcrypto is not instrumented: rewrite one byte per
		 * block here so ThreadSanitizer tracks the span hand-over.
		 */
		volatile unsigned char *v = slot->ks;
		size_t i;

		for (i = 0; i < mt->span; i += 16)
			v[i] = v[i];
	}
#endif
	return 0;
}

/*
 * Worker: wait until the slot of span s is empty.  The slot becomes
 * empty when the main thread releases span s - nslots.  Spin briefly,
 * then sleep; once asleep, wait until the main thread has released
 * nfree_want spans from there on so one wakeup pays for several spans.
 * Returns 0 when the slot is empty, 1 if asked to quit, -1 on an
 * inconsistent state (cannot happen).
 */
static int
worker_wait(struct hpn_ctr_mt *mt, uint64_t s)
{
	struct hpn_ctr_mt_slot *slot = &mt->slots[s % mt->nslots];
	uint64_t target;
	int r = 0;

	if (atomic_load_explicit(&slot->seq, memory_order_acquire) == 2 * s)
		return 0;
#if HPN_CTR_MT_WORKER_SPIN_NS > 0
	if (spin_seq(slot, 2 * s, HPN_CTR_MT_WORKER_SPIN_NS))
		return 0;
#endif
	/* Slots of spans < nslots start empty, so s >= nslots here. */
	target = s - mt->nslots + mt->nfree_want;
	pthread_mutex_lock(&mt->lock);
	for (;;) {
		if (atomic_load_explicit(&mt->quit, memory_order_relaxed)) {
			r = 1;
			break;
		}
		if (atomic_load_explicit(&mt->released,
		    memory_order_seq_cst) >= target)
			break;
		if (target < atomic_load_explicit(&mt->wwake,
		    memory_order_relaxed))
			atomic_store_explicit(&mt->wwake, target,
			    memory_order_seq_cst);
		if (atomic_load_explicit(&mt->released,
		    memory_order_seq_cst) >= target)
			break;
		pthread_cond_wait(&mt->wcv, &mt->lock);
	}
	pthread_mutex_unlock(&mt->lock);
	if (r == 0 &&
	    atomic_load_explicit(&slot->seq, memory_order_acquire) != 2 * s)
		r = -1;		/* cannot happen */
	return r;
}

static void
worker_failed(struct hpn_ctr_mt *mt)
{
	atomic_store_explicit(&mt->failed, 1, memory_order_seq_cst);
	pthread_mutex_lock(&mt->lock);
	pthread_cond_broadcast(&mt->mcv);
	pthread_mutex_unlock(&mt->lock);
}

static void *
worker_main(void *arg)
{
	struct hpn_ctr_mt_worker *w = arg;
	struct hpn_ctr_mt *mt = w->mt;
	struct hpn_ctr_mt_slot *slot;
	sigset_t all;
	uint64_t s;
	int r;

	/* Inherited from hpn_ctr_mt_new() already; be explicit. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);

	for (;;) {
		if (atomic_load_explicit(&mt->quit, memory_order_relaxed))
			break;
		s = atomic_fetch_add_explicit(&mt->claim, 1,
		    memory_order_relaxed);
		slot = &mt->slots[s % mt->nslots];
		r = worker_wait(mt, s);
		if (r > 0)
			break;		/* quit */
		if (r == 0)
			r = fill_span(w, slot);
		if (r != 0) {
			worker_failed(mt);
			break;
		}
		atomic_store_explicit(&slot->seq, 2 * s + 1,
		    memory_order_seq_cst);
		if (atomic_load_explicit(&mt->mwake,
		    memory_order_seq_cst) == s) {
			pthread_mutex_lock(&mt->lock);
			pthread_cond_signal(&mt->mcv);
			pthread_mutex_unlock(&mt->lock);
		}
	}
	return NULL;
}

/*
 * Main: wait until span dseq is ready.  Spin briefly, then sleep; once
 * asleep, stay asleep until spans dseq .. dseq + nready_want - 1 are all
 * ready so one wakeup pays for several spans.
 */
static int
main_wait(struct hpn_ctr_mt *mt)
{
	uint64_t d = mt->dseq, last, u;
	int r = HPN_CTR_MT_OK;

	if (span_filled(mt, d, memory_order_acquire))
		return HPN_CTR_MT_OK;
#if HPN_CTR_MT_SPIN_NS > 0
	if (spin_seq(&mt->slots[d % mt->nslots], 2 * d + 1,
	    HPN_CTR_MT_SPIN_NS))
		return HPN_CTR_MT_OK;
#endif
	last = d + mt->nready_want - 1;
	pthread_mutex_lock(&mt->lock);
	for (;;) {
		if (atomic_load_explicit(&mt->failed, memory_order_relaxed)) {
			r = HPN_CTR_MT_ERR_CRYPTO;
			break;
		}
		/* Find the highest span in [d, last] not yet filled. */
		for (u = last + 1; u > d; u--) {
			if (!span_filled(mt, u - 1, memory_order_acquire))
				break;
		}
		if (u == d)
			break;			/* all ready */
		u--;
		atomic_store_explicit(&mt->mwake, u, memory_order_seq_cst);
		if (span_filled(mt, u, memory_order_seq_cst))
			continue;
		pthread_cond_wait(&mt->mcv, &mt->lock);
	}
	atomic_store_explicit(&mt->mwake, SEQ_NONE, memory_order_relaxed);
	pthread_mutex_unlock(&mt->lock);
	return r;
}

/*
 * Main, in a forked child (no workers): fill span dseq here unless it was
 * ready at the fork.
 */
static int
solo_fill(struct hpn_ctr_mt *mt)
{
	struct hpn_ctr_mt_slot *slot = &mt->slots[mt->dseq % mt->nslots];

	if (span_filled(mt, mt->dseq, memory_order_relaxed))
		return HPN_CTR_MT_OK;
	/* slot->ctr is span dseq's: release_span() advanced it. */
	if (fill_span(&mt->workers[0], slot) != 0)
		return HPN_CTR_MT_ERR_CRYPTO;
	atomic_store_explicit(&slot->seq, 2 * mt->dseq + 1,
	    memory_order_relaxed);
	return HPN_CTR_MT_OK;
}

/* Main: done with span dseq; hand its slot to span dseq + nslots. */
static void
release_span(struct hpn_ctr_mt *mt)
{
	struct hpn_ctr_mt_slot *slot = &mt->slots[mt->dseq % mt->nslots];
	uint64_t next = mt->dseq + 1;

	ctr_add(slot->ctr, mt->nslots * mt->span_blocks);
	atomic_store_explicit(&slot->seq, 2 * (mt->dseq + mt->nslots),
	    memory_order_release);
	atomic_store_explicit(&mt->released, next, memory_order_seq_cst);
	if (!orphaned(mt) &&
	    atomic_load_explicit(&mt->wwake, memory_order_seq_cst) <= next) {
		pthread_mutex_lock(&mt->lock);
		atomic_store_explicit(&mt->wwake, SEQ_NONE,
		    memory_order_relaxed);
		pthread_cond_broadcast(&mt->wcv);
		pthread_mutex_unlock(&mt->lock);
	}
	mt->dseq = next;
	mt->cur = NULL;
	mt->pos = 0;
	ctr_add(mt->ctr, mt->span_blocks);
}

int
hpn_ctr_mt_crypt(struct hpn_ctr_mt *mt, unsigned char *dst,
    const unsigned char *src, size_t len)
{
	size_t n;
	int r;

	if (mt == NULL || (len != 0 && (dst == NULL || src == NULL)))
		return HPN_CTR_MT_ERR_INVALID;
	if (mt->error != 0)
		return mt->error;
	while (len > 0) {
		if (mt->cur == NULL) {
			if (orphaned(mt))
				r = solo_fill(mt);
			else
				r = main_wait(mt);
			if (r != 0) {
				mt->error = r;
				return r;
			}
			mt->cur = mt->slots[mt->dseq % mt->nslots].ks;
		}
		n = mt->span - mt->pos;
		if (n > len)
			n = len;
		xor_bytes(dst, src, mt->cur + mt->pos, n);
		dst += n;
		src += n;
		len -= n;
		mt->pos += n;
		if (mt->pos == mt->span)
			release_span(mt);
	}
	return HPN_CTR_MT_OK;
}

void
hpn_ctr_mt_get_iv(struct hpn_ctr_mt *mt, unsigned char iv[HPN_CTR_MT_BLOCKSIZE])
{
	if (mt == NULL)
		return;
	memcpy(iv, mt->ctr, HPN_CTR_MT_BLOCKSIZE);
	/* a partially used block counts as used, as in EVP */
	ctr_add(iv, (mt->pos + HPN_CTR_MT_BLOCKSIZE - 1) /
	    HPN_CTR_MT_BLOCKSIZE);
}

/* Tell all workers to quit and join them. */
static void
stop_workers(struct hpn_ctr_mt *mt)
{
	int i;

	if (mt->workers == NULL)
		return;
	if (mt->sync_init) {
		pthread_mutex_lock(&mt->lock);
		atomic_store_explicit(&mt->quit, 1, memory_order_relaxed);
		pthread_cond_broadcast(&mt->wcv);
		pthread_mutex_unlock(&mt->lock);
	}
	for (i = 0; i < mt->nworkers; i++) {
		if (mt->workers[i].started) {
			pthread_join(mt->workers[i].tid, NULL);
			mt->workers[i].started = 0;
		}
	}
}

void
hpn_ctr_mt_free(struct hpn_ctr_mt *mt)
{
	int i;

	if (mt == NULL)
		return;
	if (orphaned(mt))
		mt->sync_init = 0;	/* threads gone; locks in any state */
	else
		stop_workers(mt);
	if (mt->workers != NULL) {
		for (i = 0; i < mt->nworkers; i++)
			EVP_CIPHER_CTX_free(mt->workers[i].evp); /* cleanses */
		wipe(mt->workers, (size_t)mt->nworkers * sizeof(*mt->workers));
		free(mt->workers);
	}
	if (mt->ksmem != NULL) {
		wipe(mt->ksmem, mt->nslots * mt->span);
		free(mt->ksmem);
	}
	if (mt->slots != NULL) {
		wipe(mt->slots, mt->nslots * sizeof(*mt->slots));
		free(mt->slots);
	}
	free(mt->zero);
	if (mt->sync_init) {
		pthread_cond_destroy(&mt->wcv);
		pthread_cond_destroy(&mt->mcv);
		pthread_mutex_destroy(&mt->lock);
	}
	wipe(mt, sizeof(*mt));
	free(mt);
}

static int
start_workers(struct hpn_ctr_mt *mt)
{
	sigset_t all, old;
	int i, r = 0;

	/* Threads inherit the mask: no signal may ever land in a worker. */
	sigfillset(&all);
	if (pthread_sigmask(SIG_SETMASK, &all, &old) != 0)
		return -1;
	for (i = 0; i < mt->nworkers; i++) {
#ifdef HPN_CTR_MT_TESTING
		if (i == hpn_ctr_mt_test_fail_create) {
			r = EAGAIN;
			break;
		}
#endif
		r = pthread_create(&mt->workers[i].tid, NULL, worker_main,
		    &mt->workers[i]);
		if (r != 0)
			break;
		mt->workers[i].started = 1;
#ifdef __linux__
		(void)pthread_setname_np(mt->workers[i].tid, "hpn-aes-ctr");
#endif
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r == 0 ? 0 : -1;
}

static void *
alloc_aligned(size_t size)
{
	void *p = NULL;

	if (posix_memalign(&p, HPN_CTR_MT_CACHELINE, size) != 0)
		return NULL;
	memset(p, 0, size);
	return p;
}

struct hpn_ctr_mt *
hpn_ctr_mt_new(const unsigned char *key, size_t keylen,
    const unsigned char *iv, int nworkers, const char **errp)
{
	struct hpn_ctr_mt *mt = NULL;
	const EVP_CIPHER *cipher;
	const char *err = NULL;
	uint64_t k;
	int i;

	if (key == NULL || iv == NULL) {
		err = "invalid argument";
		goto fail;
	}
	switch (keylen) {
	case 16:
		cipher = EVP_aes_128_ctr();
		break;
	case 24:
		cipher = EVP_aes_192_ctr();
		break;
	case 32:
		cipher = EVP_aes_256_ctr();
		break;
	default:
		err = "unsupported key length";
		goto fail;
	}
	if (nworkers < 1 || nworkers > HPN_CTR_MT_MAX_WORKERS) {
		err = "invalid number of workers";
		goto fail;
	}
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
	if (EVP_default_properties_is_fips_enabled(NULL)) {
		err = "FIPS mode";
		goto fail;
	}
#endif
	if (cipher == NULL) {
		err = "cipher unavailable";
		goto fail;
	}

	if ((mt = alloc_aligned(sizeof(*mt))) == NULL)
		goto nomem;
	mt->nworkers = nworkers;
	mt->span = HPN_CTR_MT_SPAN_BYTES;
	mt->span_blocks = mt->span / HPN_CTR_MT_BLOCKSIZE;
	mt->nslots = (uint64_t)nworkers * HPN_CTR_MT_SLOTS_PER_WORKER;
	if (mt->nslots < HPN_CTR_MT_MIN_SLOTS)
		mt->nslots = HPN_CTR_MT_MIN_SLOTS;
	if (mt->nslots > HPN_CTR_MT_MAX_SLOTS)
		mt->nslots = HPN_CTR_MT_MAX_SLOTS;
	/* Deadlock freedom needs nready_want + nfree_want <= nslots + 1 */
	mt->nready_want = mt->nslots / HPN_CTR_MT_READY_DIV;
	mt->nfree_want = mt->nslots / HPN_CTR_MT_FREE_DIV;
	if (mt->nready_want < 1)
		mt->nready_want = 1;
	if (mt->nfree_want < 1)
		mt->nfree_want = 1;
	mt->dseq = 0;
	(void)pthread_once(&atfork_once, register_atfork);
	mt->gen = atomic_load(&fork_gen);
	memcpy(mt->ctr, iv, HPN_CTR_MT_BLOCKSIZE);
	atomic_init(&mt->claim, 0);
	atomic_init(&mt->failed, 0);
	atomic_init(&mt->released, 0);
	atomic_init(&mt->quit, 0);
	atomic_init(&mt->mwake, SEQ_NONE);
	atomic_init(&mt->wwake, SEQ_NONE);

	if ((mt->workers = calloc((size_t)nworkers,
	    sizeof(*mt->workers))) == NULL ||
	    (mt->slots = alloc_aligned(mt->nslots *
	    sizeof(*mt->slots))) == NULL ||
	    (mt->ksmem = alloc_aligned(mt->nslots * mt->span)) == NULL ||
	    (mt->zero = alloc_aligned(mt->span)) == NULL)
		goto nomem;
	for (k = 0; k < mt->nslots; k++) {
		atomic_init(&mt->slots[k].seq, 2 * k);
		mt->slots[k].ks = mt->ksmem + k * mt->span;
		memcpy(mt->slots[k].ctr, iv, HPN_CTR_MT_BLOCKSIZE);
		ctr_add(mt->slots[k].ctr, k * mt->span_blocks);
	}

	for (i = 0; i < nworkers; i++) {
		mt->workers[i].mt = mt;
		if ((mt->workers[i].evp = EVP_CIPHER_CTX_new()) == NULL)
			goto nomem;
		if (EVP_EncryptInit_ex(mt->workers[i].evp, cipher, NULL,
		    key, NULL) != 1) {
			err = "EVP cipher init failed";
			goto fail;
		}
	}

	if (pthread_mutex_init(&mt->lock, NULL) != 0)
		goto nosync;
	if (pthread_cond_init(&mt->mcv, NULL) != 0) {
		pthread_mutex_destroy(&mt->lock);
		goto nosync;
	}
	if (pthread_cond_init(&mt->wcv, NULL) != 0) {
		pthread_cond_destroy(&mt->mcv);
		pthread_mutex_destroy(&mt->lock);
		goto nosync;
	}
	mt->sync_init = 1;

	if (start_workers(mt) != 0) {
		err = "thread creation failed";
		goto fail;
	}
	return mt;

 nosync:
	err = "mutex/condvar init failed";
	goto fail;
 nomem:
	err = "out of memory";
 fail:
	hpn_ctr_mt_free(mt);
	if (errp != NULL)
		*errp = err;
	return NULL;
}

int
hpn_ctr_mt_auto_workers(int cap)
{
	long n = -1;
	int ncpu;

#if defined(__linux__) && defined(CPU_COUNT)
	cpu_set_t set;

	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		n = CPU_COUNT(&set);
#endif
#ifdef _SC_NPROCESSORS_ONLN
	if (n <= 0)
		n = sysconf(_SC_NPROCESSORS_ONLN);
#endif
	if (n <= 0)
		n = 1;
	ncpu = n > INT_MAX ? INT_MAX : (int)n;
	/*
	 * One worker does not pay: on two CPUs it makes keystream at ~0.8x
	 * the rate of one EVP context (bench/cipher), and end to end the
	 * main thread, the kernel's TCP work and the data's reader or writer
	 * already keep both CPUs busy (bench/cpu-bench.sh: 0.74-0.98x stock
	 * aes128-ctr).  So threads from three CPUs on, then as many as the
	 * other CPUs.
	 */
	if (cap <= 0 || ncpu < HPN_CTR_MT_AUTO_MIN_CPUS)
		return 0;
	return ncpu - 1 < cap ? ncpu - 1 : cap;
}
