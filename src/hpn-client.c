/*
 * HPN patch set: client-side behaviour of hpnssh that is not about speed.
 *
 *  - Port fallback: hpnssh connects to HPN_DEFAULT_PORT (2222) when no port
 *    was given, FallbackPort (22) racing it (hpn-happyeyes.c), so hpnssh
 *    works against hosts that only run a stock sshd; hpn_connect_fallback()
 *    is the retry of upstream's sequential loop where that race is off.
 *  - Legacy scp: when hpnscp runs hpnssh against an HPN peer that installs
 *    hpn-prefixed programs, the remote "scp -t/-f" becomes "hpnscp -t/-f",
 *    as an HPN-only host may lack scp.
 *
 * Linked into hpnssh only (it logs and may use client-only code).
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>

#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomicio.h"
#include "log.h"
#include "misc.h"
#include "sshbuf.h"
#include "ssherr.h"
#include "packet.h"
#include "ssh.h"
#include "hostfile.h"
#include "readconf.h"
#include "hpn.h"

/*
 * Called when connecting to every address of host failed with errno err.
 * want_fallback is true only when the port was not chosen by the user and
 * the Fallback option is on.  Returns the port to retry on, after
 * rewriting the port of every address in aitop, or 0: no retry.
 */
int
hpn_connect_fallback(const char *host, struct addrinfo *aitop, int err,
    int want_fallback, int fallback_port)
{
	struct addrinfo *ai;
	int from = -1;

	if (!want_fallback || fallback_port <= 0 || aitop == NULL)
		return 0;
	if (err != ECONNREFUSED && err != ETIMEDOUT)
		return 0;
	for (ai = aitop; ai != NULL; ai = ai->ai_next) {
		switch (ai->ai_family) {
		case AF_INET:
			from = ntohs(((struct sockaddr_in *)
			    ai->ai_addr)->sin_port);
			((struct sockaddr_in *)ai->ai_addr)->sin_port =
			    htons(fallback_port);
			break;
		case AF_INET6:
			from = ntohs(((struct sockaddr_in6 *)
			    ai->ai_addr)->sin6_port);
			((struct sockaddr_in6 *)ai->ai_addr)->sin6_port =
			    htons(fallback_port);
			break;
		}
	}
	if (from == -1 || from == fallback_port)
		return 0;
	logit("hpnssh: %s port %d: %s; falling back to port %d "
	    "(set Port or Fallback no to change this)", host, from,
	    strerror(err), fallback_port);
	return fallback_port;
}

extern Options options;

/*
 * scp -Z asks (HPN_SCP_PEER_ENV: a file it made) what the server is, as
 * the session starts (authenticated, so our EXT_INFO has come or not):
 * toward HPN-SSH without hash-range@ it resumes in legacy mode with
 * HPN-SSH's exchange (hpn-scp-resume.c).  One line: HPN_SCP_PEER_*.
 */
static void
scp_peer_report(struct ssh *ssh)
{
	const char *path, *what;
	struct stat st;
	size_t len;
	int fd;

	if ((path = getenv(HPN_SCP_PEER_ENV)) == NULL || *path == '\0')
		return;
	if (hpn_peer_is_ours(ssh))
		what = HPN_SCP_PEER_OURS "\n";
	else if (hpn_peer_is_hpnssh(ssh))
		what = HPN_SCP_PEER_HPNSSH "\n";
	else
		what = HPN_SCP_PEER_OTHER "\n";
	/*
	 * The file scp made (mkstemp): never created, never through a
	 * link, and only an empty regular file of this user's, so that
	 * the variable cannot make ssh write into any other file.
	 */
	if ((fd = open(path, O_WRONLY|O_NOFOLLOW|O_CLOEXEC)) == -1) {
		debug_f("open %s: %s", path, strerror(errno));
		return;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_uid != getuid() || st.st_size != 0) {
		debug_f("%s: not an empty file of ours: not written", path);
		close(fd);
		return;
	}
	len = strlen(what);
	if (atomicio(vwrite, fd, (void *)what, len) != len)
		debug_f("write %s: %s", path, strerror(errno));
	close(fd);
	debug_f("server for scp -Z: %.*s", (int)len - 1, what);
}

/*
 * Legacy scp from hpnscp to an HPN peer: run hpnscp remotely.  Called as
 * the session starts, after authentication, so the evidence that the
 * server is ours is there (hpn_peer_has_hpn_names()).
 */
void
hpn_scp_remote_command(struct ssh *ssh, struct sshbuf *command)
{
	static const char scp[] = "scp ";
	struct sshbuf *b;
	const char *v;
	int r;

	scp_peer_report(ssh);
	if ((v = getenv(HPN_SCP_ENV)) == NULL || strcmp(v, "1") != 0)
		return;
	if (command == NULL || sshbuf_len(command) < sizeof(scp) - 1 ||
	    memcmp(sshbuf_ptr(command), scp, sizeof(scp) - 1) != 0)
		return;
	if (!hpn_peer_has_hpn_names(ssh)) {
		debug_f("peer has no hpnscp: remote program stays scp");
		return;
	}
	if ((b = sshbuf_new()) == NULL)
		fatal_f("sshbuf_new failed");
	if ((r = sshbuf_put(b, "hpn", 3)) != 0 ||
	    (r = sshbuf_putb(b, command)) != 0)
		fatal_fr(r, "compose command");
	sshbuf_reset(command);
	if ((r = sshbuf_putb(command, b)) != 0)
		fatal_fr(r, "sshbuf_putb");
	sshbuf_free(b);
	debug_f("HPN peer: remote program is hpnscp");
}

/*
 * Why the None switch must not happen on this connection, or NULL.  The
 * none cipher (and MAC) leave in the clear, and open to injection, whatever
 * rides along: keystrokes of a tty or of a terminal on standard input, the
 * agent's requests and signatures, X11 clients' input, what remote
 * forwards bring in, and any session a ControlMaster may multiplex later.
 */
const char *
hpn_none_refusal(const Options *o, int tty)
{
	if (tty)
		return "a tty was requested";
	if (o->session_type == SESSION_TYPE_NONE &&
	    o->stdio_forward_host == NULL)
		return "no session (-N)";
	if (o->control_master != SSHCTL_MASTER_NO)
		return "ControlMaster connections may carry interactive "
		    "sessions";
	if (o->forward_agent)
		return "agent forwarding is on (-A, ForwardAgent)";
	if (o->forward_x11)
		return "X11 forwarding is on (-X, -Y, ForwardX11)";
	if (o->num_remote_forwards > 0)
		return "remote forwards are set up (-R, RemoteForward)";
	if (!o->stdin_null && isatty(STDIN_FILENO))
		return "standard input is a terminal (use -n, or redirect it)";
	return NULL;
}

/*
 * Host keys on the default port.  hpnssh connects to 2222 when no port was
 * given, and records what answers there as "[host]:2222".  Any local user
 * of a host without hpnsshd may listen on 2222, so a key for [host]:2222
 * alone would let such a squatter in under StrictHostKeyChecking
 * accept-new, even when known_hosts holds the host's real key for port 22.
 * So on the default port (sshconnect.c calls this only when no -p, Port or
 * HostKeyAlias was given), the host's port-22 entries are loaded beside
 * those of [host]:2222: the same key on 2222 is known (hpnsshd shares
 * sshd's keys: the packages arrange it), another key of the same type is a
 * changed key, refused even under accept-new, and a host known under
 * neither name is new as usual.
 */
void
hpn_hostkeys_port22(struct hostkeys *hk, const char *hostname, u_int port,
    char **user_files, u_int nuser, char **system_files, u_int nsystem)
{
	u_int i, n0 = hk->num_entries;

	if (port != HPN_DEFAULT_PORT)
		return;
	for (i = 0; i < nuser; i++)
		load_hostkeys(hk, hostname, user_files[i], 0);
	for (i = 0; i < nsystem; i++)
		load_hostkeys(hk, hostname, system_files[i], 0);
	debug("default port %u: %u known host key(s) of %s on port 22 "
	    "count too", port, hk->num_entries - n0, hostname);
}

/*
 * Whether the key checked (status: a HostStatus) is known by its port-22
 * entry only (then it is not recorded again for [host]:2222).
 */
int
hpn_hostkey_via_port22(int status, const struct hostkey_entry *found,
    const char *host)
{
	if (status != HOST_OK || found == NULL || found->host == NULL ||
	    strcmp(found->host, host) == 0)
		return 0;
	debug("host key known for %s (port 22): accepted on port %d",
	    found->host, HPN_DEFAULT_PORT);
	return 1;
}

/* A changed key: say so when the offending entry is the port-22 one. */
void
hpn_hostkey_changed(const struct hostkey_entry *found, const char *hostname,
    u_int port, const char *known_hosts)
{
	if (found == NULL || found->host == NULL ||
	    strcmp(found->host, hostname) != 0 || port != HPN_DEFAULT_PORT)
		return;
	error("%s is known with another key on port 22; on port %u, where "
	    "hpnssh connects when no port is given, something presented "
	    "the key above.", hostname, port);
	error("If %s runs hpnsshd with a host key of its own, trust it on "
	    "purpose: check its fingerprint, then add it (hpnssh-keyscan "
	    "-p %u %s >> %s), or connect with -p 22.", hostname, port,
	    hostname, known_hosts != NULL ? known_hosts : "~/.ssh/known_hosts");
}
