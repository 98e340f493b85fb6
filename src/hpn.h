/*
 * HPN patch set for OpenSSH: what the hooks in upstream files call.
 * Everything here is ours; upstream files only include this header and
 * call these functions, so a rebase touches as little as possible.
 */
#ifndef HPN_H
#define HPN_H

/* This patch set's version; shown in the banner as OpenSSH_x.yPz_hpnVERSION. */
#define HPN_VERSION		"0.1.0"
/* RFC 4253 software version: printable ASCII, no space, no minus sign. */
#define HPN_VERSION_TAG		"_hpn" HPN_VERSION

/* hpnsshd listens here unless told otherwise; hpnssh connects here first. */
#ifndef HPN_DEFAULT_PORT
# define HPN_DEFAULT_PORT	2222
#endif
/* hpnssh retries here once when HPN_DEFAULT_PORT refuses (FallbackPort). */
#ifndef HPN_FALLBACK_PORT
# define HPN_FALLBACK_PORT	22
#endif

/* Environment variable hpnscp sets for the ssh it runs (legacy mode). */
#define HPN_SCP_ENV		"HPNSCP_LEGACY_REMOTE"

struct ssh;
struct sshbuf;
struct addrinfo;

/* HPN-SSH installs hpn-prefixed programs since this major version. */
#define HPNSSH_NAMES_SINCE	17

/* hpn-compat.c: what the peer is. */
int	hpn_peer_is_hpn(struct ssh *);
int	hpn_peer_has_hpn_names(struct ssh *);

/* hpn-client.c: client only (linked into hpnssh, not the library). */
int	hpn_connect_fallback(const char *, struct addrinfo *, int, int, int);
void	hpn_scp_remote_command(struct ssh *, struct sshbuf *);

#endif /* HPN_H */
