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
 * Micro-benchmark: stock single-threaded EVP AES-CTR versus the
 * multi-threaded core (src/cipher-ctr-mt.c) with 1..N workers.
 *
 * Data is encrypted in place in ssh-sized packets (default 16 KiB)
 * taken round-robin from a working buffer (default 1 MiB), until
 * the total (default 1 GiB) is reached.  Reported per run:
 *	MB/s		total throughput (1 MB = 10^6 bytes), median
 *	min, max	slowest and fastest run's throughput
 *	main s/GB	CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID)
 *			per 10^9 bytes
 *	proc s/GB	CPU time of the whole process per 10^9 bytes
 *	main/stock	main s/GB relative to the stock EVP run
 *	rate/stock	MB/s relative to the stock EVP run
 * Each configuration runs -r times (default 5), interleaved with the
 * others so that drift of the host affects all alike; the median of
 * each metric is shown.  The load average is printed before and after
 * (the numbers mean little on a busy machine).  The final
 * buffer of every run is compared with the first stock run's (same
 * key/IV and packet sequence), so a wrong keystream aborts the run.
 *
 * usage: bench_ctr_mt [-b bufsize] [-k bits[,bits]] [-p packet]
 *	      [-r reps] [-t total] [-w maxworkers]
 */

#define _GNU_SOURCE

#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "cipher-ctr-mt.h"

#define MAX_REPS	15
#define MAX_WORKERS	16

struct result {
	double wall, main_cpu, proc_cpu;
};

static double
now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
print_load(const char *when)
{
	FILE *f;
	char line[128];

	if ((f = fopen("/proc/loadavg", "r")) == NULL)
		return;
	if (fgets(line, sizeof(line), f) != NULL)
		printf("load average %s: %s", when, line);
	fclose(f);
}

static size_t
parse_size(const char *s)
{
	char *ep;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &ep, 10);
	if (errno != 0 || ep == s)
		goto bad;
	switch (*ep) {
	case 'k': case 'K':
		v <<= 10;
		ep++;
		break;
	case 'm': case 'M':
		v <<= 20;
		ep++;
		break;
	case 'g': case 'G':
		v <<= 30;
		ep++;
		break;
	}
	if (*ep != '\0' || v == 0)
		goto bad;
	return (size_t)v;
 bad:
	fprintf(stderr, "bad size \"%s\"\n", s);
	exit(1);
}

static const EVP_CIPHER *
evp_ctr(int bits)
{
	return bits == 128 ? EVP_aes_128_ctr() :
	    bits == 192 ? EVP_aes_192_ctr() : EVP_aes_256_ctr();
}

/* nworkers == 0: stock EVP */
static void
run_once(int bits, int nworkers, const unsigned char *key,
    const unsigned char *iv, unsigned char *buf, size_t bufsize,
    size_t pkt, size_t total, struct result *res)
{
	EVP_CIPHER_CTX *ctx = NULL;
	struct hpn_ctr_mt *mt = NULL;
	const char *err = NULL;
	size_t done, off = 0;
	double w0, m0, p0;
	int outl;

	if (nworkers == 0) {
		if ((ctx = EVP_CIPHER_CTX_new()) == NULL ||
		    EVP_EncryptInit_ex(ctx, evp_ctr(bits), NULL, key,
		    iv) != 1) {
			fprintf(stderr, "EVP init failed\n");
			exit(1);
		}
	} else if ((mt = hpn_ctr_mt_new(key, (size_t)bits / 8, iv, nworkers,
	    &err)) == NULL) {
		fprintf(stderr, "hpn_ctr_mt_new: %s\n", err);
		exit(1);
	}
	w0 = now(CLOCK_MONOTONIC);
	m0 = now(CLOCK_THREAD_CPUTIME_ID);
	p0 = now(CLOCK_PROCESS_CPUTIME_ID);
	for (done = 0; done < total; done += pkt) {
		if (off + pkt > bufsize)
			off = 0;
		if (mt != NULL) {
			if (hpn_ctr_mt_crypt(mt, buf + off, buf + off,
			    pkt) != 0) {
				fprintf(stderr, "hpn_ctr_mt_crypt failed\n");
				exit(1);
			}
		} else if (EVP_EncryptUpdate(ctx, buf + off, &outl,
		    buf + off, (int)pkt) != 1) {
			fprintf(stderr, "EVP_EncryptUpdate failed\n");
			exit(1);
		}
		off += pkt;
	}
	res->wall = now(CLOCK_MONOTONIC) - w0;
	res->main_cpu = now(CLOCK_THREAD_CPUTIME_ID) - m0;
	res->proc_cpu = now(CLOCK_PROCESS_CPUTIME_ID) - p0;
	EVP_CIPHER_CTX_free(ctx);
	hpn_ctr_mt_free(mt);
}

static int
cmp_double(const void *a, const void *b)
{
	const double *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/* Per-metric medians of n runs; also min and max wall time. */
static struct result
median(const struct result *res, int n, double *wmin, double *wmax)
{
	double v[3][MAX_REPS];
	struct result m;
	int i;

	for (i = 0; i < n; i++) {
		v[0][i] = res[i].wall;
		v[1][i] = res[i].main_cpu;
		v[2][i] = res[i].proc_cpu;
	}
	for (i = 0; i < 3; i++)
		qsort(v[i], n, sizeof(double), cmp_double);
	m.wall = v[0][n / 2];
	m.main_cpu = v[1][n / 2];
	m.proc_cpu = v[2][n / 2];
	*wmin = v[0][0];
	*wmax = v[0][n - 1];
	return m;
}

static void
usage(void)
{
	fprintf(stderr, "usage: bench_ctr_mt [-b bufsize] [-k bits[,bits]] "
	    "[-p packet] [-r reps] [-t total] [-w maxworkers]\n");
	exit(1);
}

int
main(int argc, char **argv)
{
	size_t bufsize = 1 << 20, pkt = 16384, total = (size_t)1 << 30;
	int reps = 5, maxw, ch, nb = 0, bits[3], b, w, r;
	unsigned char key[32], iv[16], *buf, *init, *ref;
	struct result res[MAX_WORKERS + 1][MAX_REPS], med[MAX_WORKERS + 1];
	double wmin, wmax;
	char *cp, *tok, label[32];
	double gb;
	size_t i;

	maxw = (int)sysconf(_SC_NPROCESSORS_ONLN);
	while ((ch = getopt(argc, argv, "b:k:p:r:t:w:")) != -1) {
		switch (ch) {
		case 'b':
			bufsize = parse_size(optarg);
			break;
		case 'k':
			for (cp = optarg; (tok = strsep(&cp, ",")) != NULL;) {
				if (nb >= 3)
					usage();
				bits[nb] = atoi(tok);
				if (bits[nb] != 128 && bits[nb] != 192 &&
				    bits[nb] != 256)
					usage();
				nb++;
			}
			break;
		case 'p':
			pkt = parse_size(optarg);
			break;
		case 'r':
			reps = atoi(optarg);
			break;
		case 't':
			total = parse_size(optarg);
			break;
		case 'w':
			maxw = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if (nb == 0) {
		bits[0] = 128;
		bits[1] = 256;
		nb = 2;
	}
	if (reps < 1 || reps > MAX_REPS || maxw < 1 || maxw > MAX_WORKERS ||
	    pkt > bufsize ||
	    pkt > INT_MAX)
		usage();
	total -= total % pkt;
	gb = total / 1e9;

	if ((buf = malloc(bufsize)) == NULL ||
	    (init = malloc(bufsize)) == NULL ||
	    (ref = malloc(bufsize)) == NULL) {
		fprintf(stderr, "malloc failed\n");
		return 1;
	}
	for (i = 0; i < bufsize; i++)
		init[i] = (unsigned char)(i * 131 + 7);
	for (i = 0; i < sizeof(key); i++)
		key[i] = (unsigned char)(i * 17 + 1);
	for (i = 0; i < sizeof(iv); i++)
		iv[i] = (unsigned char)(0xf0 + i);

	printf("total %zu MiB, packet %zu bytes, working buffer %zu KiB, "
	    "%d reps (medians), %ld CPUs online\n", total >> 20, pkt,
	    bufsize >> 10, reps, sysconf(_SC_NPROCESSORS_ONLN));
	print_load("before");
	printf("%-10s %-8s %8s %8s %8s %10s %10s %11s %11s\n", "cipher",
	    "impl", "MB/s", "min", "max", "main s/GB", "proc s/GB",
	    "main/stock", "rate/stock");
	for (b = 0; b < nb; b++) {
		/* interleave configurations so host drift hits all alike */
		for (r = 0; r < reps; r++) {
			for (w = 0; w <= maxw; w++) {
				memcpy(buf, init, bufsize);
				run_once(bits[b], w, key, iv, buf, bufsize,
				    pkt, total, &res[w][r]);
				if (w == 0 && r == 0)
					memcpy(ref, buf, bufsize);
				else if (memcmp(ref, buf, bufsize) != 0) {
					fprintf(stderr, "output mismatch: "
					    "aes%d, %d workers\n", bits[b], w);
					return 1;
				}
			}
		}
		for (w = 0; w <= maxw; w++) {
			med[w] = median(res[w], reps, &wmin, &wmax);
			if (w == 0)
				snprintf(label, sizeof(label), "stock");
			else
				snprintf(label, sizeof(label), "mt w=%d", w);
			printf("aes%d-ctr %-8s %8.0f %8.0f %8.0f %10.4f %10.4f "
			    "%11.2f %11.2f\n", bits[b], label,
			    total / med[w].wall / 1e6, total / wmax / 1e6,
			    total / wmin / 1e6, med[w].main_cpu / gb,
			    med[w].proc_cpu / gb,
			    med[w].main_cpu / med[0].main_cpu,
			    med[0].wall / med[w].wall);
			fflush(stdout);
		}
	}
	print_load("after");
	free(buf);
	free(init);
	free(ref);
	return 0;
}
