/*
 * The kernel's own layout of struct tcp_info, for test_hpn to compare
 * struct hpn_tcpi (hpn-metrics.h) with.  A file apart: <linux/tcp.h>
 * clashes with <netinet/tcp.h>, which OpenSSH's includes.h pulls in, so
 * this one includes neither includes.h nor anything of OpenSSH's.
 */

#include <stddef.h>
#include <string.h>

long	hpn_test_tcpi_offset(const char *);

#ifdef __linux__
#include <linux/tcp.h>
#include <linux/version.h>

#ifndef KERNEL_VERSION
#define KERNEL_VERSION(a, b, c) (((a) << 16) + ((b) << 8) + (c))
#endif
#ifndef LINUX_VERSION_CODE
#define LINUX_VERSION_CODE 0	/* unknown: only the oldest fields */
#endif
/* Whether the uapi headers are those of Linux a.b or later. */
#define HDRS_AT_LEAST(a, b) (LINUX_VERSION_CODE >= KERNEL_VERSION(a, b, 0))

#define OFF(f) do { \
	if (strcmp(name, #f) == 0) \
		return (long)offsetof(struct tcp_info, tcpi_##f); \
} while (0)

/*
 * offsetof(struct tcp_info, tcpi_<name>), or -1: not a field we know, or
 * one the installed headers (too old) do not have.  Each field is gated by
 * the release that added it to the uapi header.
 */
long
hpn_test_tcpi_offset(const char *name)
{
	OFF(rtt);
	OFF(snd_cwnd);
	OFF(snd_mss);
	OFF(total_retrans);
#if HDRS_AT_LEAST(3, 15)
	OFF(pacing_rate);
#endif
#if HDRS_AT_LEAST(4, 1)
	OFF(bytes_acked);
	OFF(bytes_received);
#endif
#if HDRS_AT_LEAST(4, 6)
	OFF(notsent_bytes);
	OFF(min_rtt);
#endif
#if HDRS_AT_LEAST(4, 9)
	OFF(delivery_rate);
#endif
#if HDRS_AT_LEAST(4, 10)
	OFF(busy_time);
	OFF(rwnd_limited);
	OFF(sndbuf_limited);
#endif
#if HDRS_AT_LEAST(4, 19)
	OFF(bytes_sent);
	OFF(bytes_retrans);
#endif
#if HDRS_AT_LEAST(5, 4)
	OFF(snd_wnd);
#endif
	return -1;
}

#else /* !__linux__ */

long
hpn_test_tcpi_offset(const char *name)
{
	(void)name;
	return -1;
}

#endif
