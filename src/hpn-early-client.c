/*
 * HPN patch set: connection set-up in fewer round trips, hpnssh's side
 * (README.hpn section 14; the part shared with hpnsshd is hpn-early.c).
 *
 * With EarlySend yes (the default), towards any server:
 *
 *  - TCP_NODELAY from the start.  OpenSSH sets it only once the session
 *    runs, so before that a second small write waited for the ACK of the
 *    first: the key exchange's ECDH_INIT behind KEXINIT, SERVICE_REQUEST
 *    behind NEWKEYS, a round trip (or more, with a delayed ACK) each.
 *  - SERVICE_REQUEST and the first authentication request go together:
 *    RFC 4253 section 10 lets the server take them in turn.  The EXT_INFO
 *    the server sent right behind its NEWKEYS (RFC 8308) is read first
 *    when it is there, so the key's signature algorithm (server-sig-algs)
 *    and publickey-hostbound are chosen as upstream chooses them.
 *  - No "none" request to learn the methods: the first request is the
 *    first method of PreferredAuthentications when that is publickey, and
 *    the answer to it lists the methods as "none"'s would.  Otherwise it
 *    is "none", as upstream's.  A server that takes "none" is asked with
 *    it once every other method has failed.
 *  - A key is signed at once, instead of being offered without a
 *    signature first (a round trip for PK_OK), when signing needs nothing
 *    of the user: a key whose private file loads without a passphrase;
 *    not a FIDO key (touch, PIN), not an agent's key (ssh-add -c keys ask
 *    for confirmation, and the agent does not say which), not a token's,
 *    not a certificate, and an RSA key only once the server has named its
 *    signature algorithms.  The signature is upstream's, over this
 *    session's id, made once the host key has been checked.
 *
 * Linked into hpnssh only.
 */

#include "includes.h"

#include <sys/types.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xmalloc.h"
#include "log.h"
#include "misc.h"
#include "sshbuf.h"
#include "ssherr.h"
#include "ssh2.h"
#include "sshkey.h"
#include "authfile.h"
#include "packet.h"
#include "dispatch.h"
#include "kex.h"
#include "ssh.h"
#include "readconf.h"
#include "hpn.h"

extern Options options;

static struct {
	int	none_skipped;	/* the first request was not "none" */
	int	none_sent;
} ec = { 0, 0 };

/* Linux: ACK what comes next at once, not after a delay. */
static void
quickack(struct ssh *ssh)
{
#ifdef TCP_QUICKACK
	int on = 1;

	if (ssh_packet_connection_is_on_socket(ssh) &&
	    setsockopt(ssh_packet_get_connection_in(ssh), IPPROTO_TCP,
	    TCP_QUICKACK, &on, sizeof(on)) == -1)
		debug2_f("TCP_QUICKACK: %s", strerror(errno));
#endif
}

/* sshconnect.c, connected: TCP_NODELAY. */
void
hpn_early_socket(struct ssh *ssh)
{
	if (options.hpn_early_send && ssh_packet_connection_is_on_socket(ssh))
		set_nodelay(ssh_packet_get_connection_in(ssh));
}

/*
 * sshconnect2.c, SERVICE_REQUEST sent: may the first authentication
 * request go now?  Reads what already came after the server's NEWKEYS
 * (its EXT_INFO) first.
 */
int
hpn_early_userauth(struct ssh *ssh)
{
	int r;

	if (!options.hpn_early_send)
		return 0;
	r = ssh_packet_process_read(ssh, ssh_packet_get_connection_in(ssh));
	if (r != 0 && !(r == SSH_ERR_SYSTEM_ERROR &&
	    (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)))
		debug_fr(r, "read");	/* the next blocking read says it */
	if ((r = ssh_dispatch_run(ssh, DISPATCH_NONBLOCK, NULL)) != 0)
		sshpkt_fatal(ssh, r, "%s", __func__);
	return 1;
}

/*
 * sshconnect2.c: the first authentication request was queued with
 * SERVICE_REQUEST.  They go now; the server writes SERVICE_ACCEPT and its
 * answer apart, and one whose socket delays small writes (OpenSSH before
 * 10.0, Nagle's algorithm) holds the answer until SERVICE_ACCEPT is ACKed:
 * no delayed ACK then.
 */
void
hpn_early_first_request(struct ssh *ssh, const char *method)
{
	int r;

	ec.none_skipped = strcmp(method, "none") != 0;
	verbose("Early set-up: %s request sent with SERVICE_REQUEST%s",
	    method, ec.none_skipped ? " (no \"none\" request first)" : "");
	if ((r = ssh_packet_write_wait(ssh)) != 0)
		sshpkt_fatal(ssh, r, "%s", __func__);
	quickack(ssh);
}

/*
 * sshconnect2.c userauth(): every method failed.  Returns 1 when "none",
 * skipped at first, should still be tried (a server may take it).
 */
int
hpn_early_none_fallback(void)
{
	if (!ec.none_skipped || ec.none_sent)
		return 0;
	ec.none_sent = 1;
	verbose("Early set-up: trying \"none\", not sent at first");
	return 1;
}

/*
 * sshconnect2.c userauth_pubkey(): sign key (its file: file, from the
 * agent: agent) at once rather than offer it first?
 */
int
hpn_early_sign(struct ssh *ssh, const struct sshkey *key, const char *file,
    int agent)
{
	struct sshkey *prv = NULL;
	const char *why = NULL;
	int r;

	if (!options.hpn_early_send)
		return 0;
	if (sshkey_is_sk(key))
		why = "a FIDO key (touch, PIN)";
	else if (agent)
		why = "the agent's (it may ask for confirmation)";
	else if ((key->flags & SSHKEY_FLAG_EXT) != 0)
		why = "a token's";
	else if (sshkey_is_cert(key))
		why = "a certificate";
	else if (sshkey_type_plain(key->type) == KEY_RSA &&
	    ssh->kex->server_sig_algs == NULL)
		why = "RSA, and the server named no signature algorithms";
	else if (file == NULL)
		why = "no file";
	else if ((r = sshkey_load_private_type(KEY_UNSPEC, file, "", &prv,
	    NULL)) != 0)
		why = r == SSH_ERR_KEY_WRONG_PASSPHRASE ?
		    "its file needs a passphrase" : ssh_err(r);
	else if (!sshkey_equal_public(prv, key))
		why = "its file holds another key";
	sshkey_free(prv);
	if (why != NULL) {
		debug("Early set-up: key %s offered first: %s",
		    file == NULL ? "?" : file, why);
		return 0;
	}
	return 1;
}

