/*
 * Fuzz harness: HPN-SSH's metrics answer (hpn-metrics.c), the binn object
 * an HPN-SSH server sends for stack-metrics@hpnssh.org, as hpnssh reads it
 * (hpn_metrics_binn_reply()), and hpnsshd's own answer in that format
 * (hpn_metrics_binn_put()) read back.
 *
 * The input: a first byte choosing; even, the rest is a REQUEST_SUCCESS
 * payload as it comes off the wire; odd, the rest fills a TCP_INFO (struct
 * hpn_tcpi, the length the input has, as a kernel returns fewer bytes),
 * composed and read back.
 *
 * Checked: a sample taken has only known TCP columns and its time between
 * ask and answer; what hpnsshd composes parses, and every column whose
 * field the TCP_INFO covered comes back with the field's value.
 */

#include "includes.h"

#include <sys/types.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"
#include "sshbuf.h"
#include "ssherr.h"
#include "log.h"
#include "hpn.h"
#include "hpn-metrics.h"

#include "fuzz-common.h"

int LLVMFuzzerInitialize(int *, char ***);
int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz harness: %s\n", what);
		abort();
	}
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_init("metrics_binn_fuzz");
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hpn_msample s;
	struct hpn_tcpi ti;
	struct sshbuf *b;
	size_t len;
	int r;

	if (size < 1)
		return 0;
	if ((data[0] & 1) == 0) {
		if (hpn_metrics_binn_reply(data + 1, size - 1, 100.0, 102.0,
		    &s) != 0)
			return 0;
		check((s.have >> HPN_M_TCP_COLS) == 0, "a column not TCP's");
		check(s.time >= 100.0 && s.time <= 102.0, "time");
		return 0;
	}
	len = size - 1 < sizeof(ti) ? size - 1 : sizeof(ti);
	memset(&ti, 0, sizeof(ti));
	memcpy(&ti, data + 1, len);
	if ((b = sshbuf_new()) == NULL)
		abort();
	r = hpn_metrics_binn_put(b, &ti, len, 0x61200);
	check(r == 0, "compose");
	r = hpn_metrics_binn_reply(sshbuf_ptr(b), sshbuf_len(b), 1.0, 1.0,
	    &s);
	check(r == 0, "our own answer refused");
#define SAME(col, f) do { \
	if (len >= offsetof(struct hpn_tcpi, f) + sizeof(ti.f)) \
		check((s.have & ((u_int64_t)1 << col)) && \
		    s.v[col] == ti.f, "round trip: " #f); \
	else \
		check((s.have & ((u_int64_t)1 << col)) == 0, \
		    "a field not covered: " #f); \
} while (0)
	SAME(HPN_M_RTT, rtt);
	SAME(HPN_M_SND_CWND, snd_cwnd);
	SAME(HPN_M_BYTES_ACKED, bytes_acked);
	SAME(HPN_M_SND_WND, snd_wnd);
	SAME(HPN_M_BUSY_TIME, busy_time);
#undef SAME
	sshbuf_free(b);
	return 0;
}
