/*
 * HPN patch set: Multipath TCP (UseMPTCP, in ssh_config and sshd_config).
 *
 * With UseMPTCP the connection's socket (ssh) or the listening sockets
 * (sshd) are made with IPPROTO_MPTCP on Linux.  The kernel's path manager
 * may then add subflows over other addresses or interfaces (the "ip mptcp
 * endpoint" and "ip mptcp limits" of each end), and a peer without MPTCP
 * gets plain TCP: the kernel falls back on its own, in the handshake.  A
 * kernel that refuses MPTCP (not built in, or net.mptcp.enabled=0) gets a
 * plain TCP socket and a one-line notice.  Nothing above the socket
 * changes: SO_RCVBUF and TCP_INFO (of the first subflow) work on an MPTCP
 * socket, and the window logic (hpn-window.c) also has the round trip it
 * measures itself with PING.  hpn_mptcp_describe() says, for the logs,
 * what the connection ended up as.
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "hpn.h"

#ifdef __linux__
# ifndef IPPROTO_MPTCP
#  define IPPROTO_MPTCP		262
# endif
# ifndef SOL_MPTCP
#  define SOL_MPTCP		284
# endif
# ifndef TCP_IS_MPTCP
#  define TCP_IS_MPTCP		43
# endif
# define HPN_MPTCP_INFO		1	/* MPTCP_INFO, <linux/mptcp.h> */
/* The head of struct mptcp_info (Linux 5.16 on), all we read of it. */
struct hpn_mptcp_info {
	u_int8_t	subflows;	/* added to the first one */
	u_int8_t	add_addr_signal;
	u_int8_t	add_addr_accepted;
	u_int8_t	subflows_max;
	u_int8_t	add_addr_signal_max;
	u_int8_t	add_addr_accepted_max;
	u_int32_t	flags;
};
#endif

/*
 * A socket for ai: Multipath TCP when mptcp is set and the kernel has it,
 * else what ai asks for.
 */
int
hpn_socket(const struct addrinfo *ai, int mptcp)
{
	static int warned;

	if (mptcp > 0 && ai->ai_socktype == SOCK_STREAM &&
	    (ai->ai_family == AF_INET || ai->ai_family == AF_INET6)) {
#ifdef __linux__
		int s = socket(ai->ai_family, SOCK_STREAM, IPPROTO_MPTCP);

		if (s != -1) {
			debug_f("a Multipath TCP socket");
			return s;
		}
		if (!warned++)
			logit("UseMPTCP: the kernel refuses Multipath TCP "
			    "(%s; see sysctl net.mptcp.enabled): using TCP",
			    strerror(errno));
#else
		if (!warned++)
			logit("UseMPTCP: no Multipath TCP on this system: "
			    "using TCP");
#endif
	}
	return socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
}

/*
 * fd: -1 not a Multipath TCP socket, 0 one fallen back to TCP (the peer
 * has none), 1 Multipath TCP.
 */
static int
mptcp_state(int fd)
{
#ifdef __linux__
	socklen_t sl;
	int v = 0;

	sl = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &v, &sl) == -1 ||
	    v != IPPROTO_MPTCP)
		return -1;
	sl = sizeof(v);
	return getsockopt(fd, IPPROTO_TCP, TCP_IS_MPTCP, &v, &sl) == 0 &&
	    v != 0;
#else
	return -1;
#endif
}

/* Is the connection on fd Multipath TCP (not fallen back to TCP)? */
int
hpn_mptcp_active(int fd)
{
	return mptcp_state(fd) == 1;
}

/*
 * What the connection on fd is, for logs: NULL for a plain TCP socket (or
 * anything else), "Multipath TCP, N subflows" or "Multipath TCP socket,
 * fallen back to TCP (the peer has no MPTCP)".
 */
const char *
hpn_mptcp_describe(int fd, char *buf, size_t len)
{
#ifdef __linux__
	struct hpn_mptcp_info mi;
	socklen_t sl;
	int state = mptcp_state(fd);

	if (state == -1)
		return NULL;
	if (state == 0) {
		snprintf(buf, len, "Multipath TCP socket, fallen back to TCP "
		    "(the peer has no MPTCP)");
		return buf;
	}
	memset(&mi, 0, sizeof(mi));
	sl = sizeof(mi);
	if (getsockopt(fd, SOL_MPTCP, HPN_MPTCP_INFO, &mi, &sl) == -1 ||
	    sl < 1) {
		snprintf(buf, len, "Multipath TCP");
		return buf;
	}
	snprintf(buf, len, "Multipath TCP, %u subflow%s", mi.subflows + 1,
	    mi.subflows ? "s" : "");
	return buf;
#else
	return NULL;
#endif
}
