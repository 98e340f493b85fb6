/*
 * HPN patch set: connection set-up in fewer round trips, hpnssh's side
 * (README.hpn section 15; the part shared with hpnsshd is hpn-early.c).
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
 * Towards hpnsshd (both sent their KEXINIT marker, hpn-early.c):
 *
 *  - The session (CHANNEL_OPEN, the requests of ssh_session2_setup(): pty,
 *    environment, exec, subsystem or shell), or -W's direct-tcpip channel
 *    (ProxyJump), and the first data of its standard input (what is there
 *    to read without waiting, at most HPN_EARLY_DATA_MAX; not from a
 *    terminal: behind a jump host, the next hop's version string and
 *    KEXINIT) go right behind the first signed publickey request.  When
 *    that request does not end authentication, the server drops them and
 *    so do we: the channel opens as upstream's once authenticated, its
 *    first data from what was read then.  Only the channel of a plain
 *    connection goes early: not with -N, -f, -R, -w, ControlMaster,
 *    ControlPersist, Compression, or local forwards that
 *    ExitOnForwardFailure must see set up first.
 *
 * A guessed first key exchange packet (hpn-early.c) goes with the banner
 * towards a host:port recorded in EarlyHostsFile, where hpnsshd took early
 * set-up last time; the file is kept up to date after each key exchange.
 *
 * Linked into hpnssh only.
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
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
#include "channels.h"
#include "ssh.h"
#include "readconf.h"
#include "compat.h"
#include "atomicio.h"
#include "hpn.h"

extern Options options;

static struct {
	int	(*opener)(struct ssh *);	/* ssh.c: opens the session */
	int	in_flight;	/* the opener runs for an early session */
	int	tried;		/* an early session was considered */
	int	sess;		/* its channel while it stands, or -1 */
	int	taken;		/* ... and authentication ended with it */
	struct sshbuf *stash;	/* its data: for a session opened later */
	int	none_skipped;	/* the first request was not "none" */
	int	none_sent;
	int	kexinit_early;	/* KEXINIT went with the banner */
	int	input_own;	/* our input is our caller's pipe (scp, -W) */
	off_t	file_sent;	/* early data read from a file, offset kept */
} ec = { NULL, 0, 0, -1, 0, NULL, 0, 0, 0, 0, 0 };

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

/*
 * sshconnect.c, connected: EarlySend for the key exchange; TCP_NODELAY.
 * hpnscp and hpnsftp say in our environment that our standard input is
 * their pipe (hpn_early_input_own()); what started after the connection
 * (LocalCommand, a shell's commands) does not inherit it.
 */
void
hpn_early_socket(struct ssh *ssh)
{
	const char *cp = getenv(HPN_EARLY_INPUT_ENV);

	ec.input_own = cp != NULL && strcmp(cp, "own") == 0;
	unsetenv(HPN_EARLY_INPUT_ENV);
	hpn_early_configure(options.hpn_early_send);
	if (options.hpn_early_send && ssh_packet_connection_is_on_socket(ssh))
		set_nodelay(ssh_packet_get_connection_in(ssh));
}

/* Waiting for EXT_INFO: what came, and upstream's SERVICE_ACCEPT handler. */
static volatile sig_atomic_t waited, accepted;
static dispatch_fn *service_accept;

static int
wait_ext_info(int type, u_int32_t seq, struct ssh *ssh)
{
	waited = 1;
	return kex_input_ext_info(type, seq, ssh);
}

/* SERVICE_ACCEPT before any EXT_INFO: upstream's handler takes it. */
static int
wait_service_accept(int type, u_int32_t seq, struct ssh *ssh)
{
	waited = accepted = 1;
	return service_accept(type, seq, ssh);
}

/*
 * sshconnect2.c, SERVICE_REQUEST queued: may the first authentication
 * request go now?  It is signed for, and chooses its algorithm by, what
 * the server's EXT_INFO says (publickey-hostbound, server-sig-algs), as
 * upstream's first request is.  A server that named ext-info-s in its
 * KEXINIT sends its EXT_INFO right behind its NEWKEYS (RFC 8308 2.4):
 * what already came is read, and when that is not it yet, we wait for it.
 * Should SERVICE_ACCEPT come first (a server that sends none), its
 * handler starts upstream's authentication, and nothing goes early.
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
	if (!ssh->kex->ext_info_s || ssh->kex->ext_info_received)
		return 1;
	debug("Early set-up: waiting for the server's EXT_INFO");
	if ((r = ssh_packet_write_wait(ssh)) != 0)	/* SERVICE_REQUEST */
		sshpkt_fatal(ssh, r, "%s", __func__);
	service_accept = ssh->dispatch[SSH2_MSG_SERVICE_ACCEPT];
	ssh_dispatch_set(ssh, SSH2_MSG_EXT_INFO, &wait_ext_info);
	ssh_dispatch_set(ssh, SSH2_MSG_SERVICE_ACCEPT, &wait_service_accept);
	waited = accepted = 0;
	ssh_dispatch_run_fatal(ssh, DISPATCH_BLOCK, &waited);
	ssh_dispatch_set(ssh, SSH2_MSG_SERVICE_ACCEPT, service_accept);
	if (accepted) {
		debug("Early set-up: SERVICE_ACCEPT came before any EXT_INFO: "
		    "nothing more goes early");
		return 0;
	}
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

/* ssh.c: what opens the session (ssh_session2_open() when it may go early). */
void
hpn_early_set_opener(int (*opener)(struct ssh *))
{
	ec.opener = opener;
}

/* ssh.c: may this connection's channel go before authentication ends? */
int
hpn_early_session_allowed(void)
{
	const char *why = NULL;

	if (options.session_type == SESSION_TYPE_NONE &&
	    options.stdio_forward_host == NULL)
		why = "no session (-N)";
	else if (options.control_master != SSHCTL_MASTER_NO ||
	    options.control_persist)
		why = "ControlMaster";
	else if (options.fork_after_authentication)
		why = "-f";
	else if (options.num_remote_forwards > 0)
		why = "remote forwards, set up before the session";
	else if (options.tun_open != SSH_TUNMODE_NO)
		why = "a tunnel";
	else if (options.exit_on_forward_failure &&
	    options.num_local_forwards > 0)
		why = "local forwards, checked before the session";
	else if (options.compression)
		/*
		 * zlib@openssh.com starts once authentication succeeds: the
		 * server would inflate what was sent before it, uncompressed
		 */
		why = "compression, which starts after authentication";
	if (why != NULL)
		debug("Early set-up: the session waits for authentication: %s",
		    why);
	return why == NULL;
}

/* buf[0..n) as the early channel's data. */
static void
early_packet(struct ssh *ssh, Channel *c, const u_char *buf, size_t n)
{
	int r;

	if ((r = sshpkt_start(ssh, SSH2_MSG_CHANNEL_DATA)) != 0 ||
	    (r = sshpkt_put_u32(ssh, c->remote_id)) != 0 ||
	    (r = sshpkt_put_string(ssh, buf, n)) != 0 ||
	    (r = sshpkt_send(ssh)) != 0)
		fatal_fr(r, "channel %d: early data", c->self);
	c->hpn_tx += n;		/* the channel's summary counts it */
}

/*
 * A regular file: its data from offset off on, read without moving the
 * offset (the channel moves it past them once authenticated): when
 * authentication fails, the file is where it was.
 */
static u_int
early_file(struct ssh *ssh, Channel *c, off_t off)
{
	u_char buf[HPN_EARLY_PACKET];
	ssize_t n;
	u_int sent = 0, i;

	for (i = 0; i < 256 && sent < HPN_EARLY_DATA_MAX; i++) {
		n = pread(c->rfd, buf,
		    MINIMUM(sizeof(buf), HPN_EARLY_DATA_MAX - sent), off + sent);
		if (n <= 0)	/* EOF or an error: the channel reads it later */
			break;
		early_packet(ssh, c, buf, n);
		sent += n;
	}
	ec.file_sent = sent;
	return sent;
}

/*
 * Send what the session's standard input holds now, as the early
 * channel's data.  Returns the bytes sent.  A regular file is read
 * without moving its offset.  Anything else (a pipe, a socket, a device)
 * would lose what was read should authentication fail, so only input
 * that is our caller's own to lose goes early (ec.input_own: hpnscp's and
 * hpnsftp's pipe, -W's stream); kept in ec.stash for a session opened
 * later.
 */
static u_int
early_data(struct ssh *ssh, Channel *c)
{
	u_char buf[HPN_EARLY_PACKET];
	struct pollfd pfd;
	struct stat st;
	ssize_t n;
	off_t off;
	u_int sent = 0, i;
	int r;

	if (c->client_tty || c->rfd == -1 || isatty(c->rfd))
		return 0;
	if (fstat(c->rfd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (off = lseek(c->rfd, 0, SEEK_CUR)) != -1)
		return early_file(ssh, c, off);
	if (!ec.input_own && options.stdio_forward_host == NULL) {
		debug("Early set-up: standard input is not a regular file: "
		    "it is read once authenticated");
		return 0;
	}
	if (ec.stash == NULL && (ec.stash = sshbuf_new()) == NULL)
		fatal_f("sshbuf_new failed");
	/* A writer blocked on a full pipe writes more once we read. */
	for (i = 0; i < 256 && sent < HPN_EARLY_DATA_MAX; i++) {
		pfd.fd = c->rfd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (poll(&pfd, 1, 0) != 1 || (pfd.revents & POLLIN) == 0)
			break;
		/* EOF or an error: the channel reads it again later */
		if ((n = read(c->rfd, buf,
		    MINIMUM(sizeof(buf), HPN_EARLY_DATA_MAX - sent))) <= 0)
			break;
		early_packet(ssh, c, buf, n);
		if ((r = sshbuf_put(ec.stash, buf, n)) != 0)
			fatal_fr(r, "channel %d: early data", c->self);
		sent += n;
	}
	return sent;
}

/*
 * ssh.c ssh_session2_open(), ssh_init_stdio_forwarding(): the session (or
 * -W's) channel was created and its CHANNEL_OPEN queued.  Early: its
 * requests and first data follow at once, naming the server's id of it
 * ahead (its open callback runs now; the confirmation does not run it
 * again, a failure does).  After a dropped early channel: the data it had
 * sent go first.
 */
void
hpn_early_session_opened(struct ssh *ssh, Channel *c)
{
	channel_open_fn *cb = c->open_confirm;
	void *ctx = c->open_confirm_ctx;
	u_int sent;
	int r;

	if (!ec.in_flight) {
		if (ec.stash != NULL && sshbuf_len(ec.stash) > 0) {
			debug_f("channel %d: %zu bytes of the dropped early "
			    "session first", c->self, sshbuf_len(ec.stash));
			if ((r = sshbuf_putb(c->input, ec.stash)) != 0)
				fatal_fr(r, "channel %d: input", c->self);
		}
		sshbuf_free(ec.stash);
		ec.stash = NULL;
		return;
	}
	if (cb == NULL)
		return;
	ec.sess = c->self;
	c->remote_id = HPN_EARLY_CHANNEL_ID;
	c->have_remote_id = 1;
	cb(ssh, c->self, 1, ctx);	/* the session's requests */
	sent = early_data(ssh, c);
	c->have_remote_id = 0;		/* until the server confirms it */
	hpn_early_channel_set(c, sent);
	verbose("Early set-up: the %s (channel %d) and %u bytes of its "
	    "input sent behind the authentication request",
	    strcmp(c->ctype, "session") == 0 ? "session" : "-W channel",
	    c->self, sent);
}

/* sshconnect2.c: a signed publickey request was queued. */
void
hpn_early_signed(struct ssh *ssh)
{
	if (ec.tried || ec.opener == NULL || !options.hpn_early_send)
		return;
	ec.tried = 1;
	if (!hpn_early_agreed(ssh)) {
		debug("Early set-up: the server takes no early session");
		return;
	}
	if (!hpn_early_session_allowed())
		return;
	ec.in_flight = 1;
	(void)ec.opener(ssh);		/* hpn_early_session_opened() */
	ec.in_flight = 0;
}

/* sshconnect2.c: SUCCESS or FAILURE came for the request in flight. */
void
hpn_early_auth_result(struct ssh *ssh, int success)
{
	Channel *c;

	if (ec.sess == -1 || ec.taken)
		return;
	if (success) {
		ec.taken = 1;
		sshbuf_free(ec.stash);
		ec.stash = NULL;
		/* what went early from a file: the channel reads on after it */
		if (ec.file_sent > 0 && ((c = channel_lookup(ssh,
		    ec.sess)) == NULL || lseek(c->rfd, ec.file_sent,
		    SEEK_CUR) == -1))
			fatal("Early set-up: cannot move past the %lld bytes "
			    "of standard input sent early: %s",
			    (long long)ec.file_sent, c == NULL ?
			    "no channel" : strerror(errno));
		ec.file_sent = 0;
		return;
	}
	ec.file_sent = 0;	/* the file is where it was */
	verbose("Early set-up: the server dropped the early session with the "
	    "failed request; it opens after authentication");
	if ((c = channel_lookup(ssh, ec.sess)) != NULL)
		channel_free(ssh, c);
	hpn_early_channel_set(NULL, 0);
	ec.sess = -1;
}

/* ssh.c ssh_session2(): the session (or -W's) channel that went early. */
int
hpn_early_session_id(void)
{
	return ec.taken ? ec.sess : -1;
}

/* EarlyHostsFile, expanded; NULL: none. */
static char *
hosts_path(void)
{
	if (!options.hpn_early_send || options.hpn_early_hosts_file == NULL ||
	    strcmp(options.hpn_early_hosts_file, "none") == 0)
		return NULL;
	return tilde_expand_filename(options.hpn_early_hosts_file, getuid());
}

/*
 * The file's text (empty when missing), or NULL: unusable.  Only a regular
 * file of at most HPN_EARLY_HOSTS_SIZE is read: a FIFO or a device there
 * would block or feed us without end (opened without blocking, looked at
 * before any read).
 */
static struct sshbuf *
hosts_load(const char *path)
{
	struct sshbuf *b = NULL;
	struct stat st;
	int fd, r;

	if ((fd = open(path, O_RDONLY|O_NONBLOCK|O_NOCTTY)) == -1) {
		if (errno != ENOENT) {
			debug("Early set-up: %s: %s", path, strerror(errno));
			return NULL;
		}
		if ((b = sshbuf_new()) == NULL)
			fatal_f("sshbuf_new failed");
		return b;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size > HPN_EARLY_HOSTS_SIZE) {
		debug("Early set-up: %s is not a regular file of at most %d "
		    "bytes: not used", path, HPN_EARLY_HOSTS_SIZE);
		close(fd);
		return NULL;
	}
	r = sshbuf_load_fd(fd, &b);
	close(fd);
	if (r != 0) {
		debug_r(r, "Early set-up: %s", path);
		return NULL;
	}
	if (sshbuf_len(b) > HPN_EARLY_HOSTS_SIZE) {
		debug("Early set-up: %s is larger than %d bytes: not used",
		    path, HPN_EARLY_HOSTS_SIZE);
		sshbuf_free(b);
		return NULL;
	}
	return b;
}

/* Record name with method kex (NULL: forget it): a new file in its place. */
static void
hosts_record(const char *path, const struct sshbuf *old, const char *name,
    const char *kex)
{
	struct sshbuf *b;
	char *tmp = NULL;
	int fd = -1, r;

	if ((b = sshbuf_new()) == NULL)
		fatal_f("sshbuf_new failed");
	if ((r = hpn_early_hosts_update(old, name, kex, b)) != 0) {
		error_r(r, "Early set-up: %s", path);
		goto out;
	}
	xasprintf(&tmp, "%s.XXXXXXXXXX", path);
	if ((fd = mkstemp(tmp)) == -1) {
		debug("Early set-up: cannot write %s: %s", tmp,
		    strerror(errno));
		goto out;
	}
	if (atomicio(vwrite, fd, sshbuf_mutable_ptr(b), sshbuf_len(b)) !=
	    sshbuf_len(b)) {
		debug("Early set-up: cannot write %s: %s", tmp,
		    strerror(errno));
		close(fd);
		unlink(tmp);
		goto out;
	}
	if (close(fd) == -1 || rename(tmp, path) == -1) {
		debug("Early set-up: cannot write %s: %s", path,
		    strerror(errno));
		unlink(tmp);
		goto out;
	}
	debug("Early set-up: %s %s %s", kex == NULL ? "forgot" : "recorded",
	    name, path);
 out:
	free(tmp);
	sshbuf_free(b);
}

/*
 * sshconnect.c, connected, before the banner: is host:port a known
 * hpnsshd, whose first packet of our first method can go with the banner?
 */
int
hpn_early_kex_wanted(const char *host, u_short port)
{
	struct sshbuf *b;
	char kex[128], *path, *name, *first;
	int found;

	if ((path = hosts_path()) == NULL)
		return 0;
	if ((b = hosts_load(path)) == NULL) {
		free(path);
		return 0;
	}
	name = put_host_port(host, port);
	found = hpn_early_hosts_lookup(b, name, kex, sizeof(kex));
	first = xstrdup(options.kex_algorithms);
	first[strcspn(first, ",")] = '\0';
	if (!found)
		debug2("Early set-up: %s is not in %s", name, path);
	else if (strcmp(kex, first) != 0 || !hpn_early_guessable(kex))
		debug("Early set-up: %s agreed on %s last time, not %s: no "
		    "guess", name, kex, first);
	else {
		hpn_early_kex_want_guess(kex);
		ec.kexinit_early = 1;
	}
	free(first);
	free(name);
	free(path);
	sshbuf_free(b);
	return ec.kexinit_early;
}

/* sshconnect.c, the server's banner read. */
void
hpn_early_kex_banner(struct ssh *ssh, const char *host, u_short port)
{
	char *path, *name;
	struct sshbuf *b;

	if (!ec.kexinit_early ||
	    (ssh->compat & (SSH_BUG_CURVE25519PAD|SSH_OLD_DHGEX)) == 0)
		return;
	/* compat_kex_proposal() would have changed the KEXINIT sent */
	if ((path = hosts_path()) != NULL && (b = hosts_load(path)) != NULL) {
		name = put_host_port(host, port);
		hosts_record(path, b, name, NULL);
		free(name);
		sshbuf_free(b);
	}
	free(path);
	fatal("Early set-up: %s now runs a server that needs key exchange "
	    "workarounds, which the KEXINIT sent with the banner lacks; it "
	    "is forgotten: connect again", host);
}

/* sshconnect.c, the key exchange done: remember the server, or forget it. */
void
hpn_early_kex_done(struct ssh *ssh, const char *host, u_short port)
{
	struct sshbuf *b;
	char kex[128], *path, *name;
	int found, agreed = hpn_early_agreed(ssh);

	if ((path = hosts_path()) == NULL)
		return;
	if ((b = hosts_load(path)) == NULL) {
		free(path);
		return;
	}
	name = put_host_port(host, port);
	found = hpn_early_hosts_lookup(b, name, kex, sizeof(kex));
	if (agreed && (!found || strcmp(kex, ssh->kex->name) != 0))
		hosts_record(path, b, name, ssh->kex->name);
	else if (!agreed && found)
		hosts_record(path, b, name, NULL);
	free(name);
	free(path);
	sshbuf_free(b);
}
