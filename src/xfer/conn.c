/*
 * HPN patch set: one SFTP connection of the transfer engine (src/xfer/).
 *
 * Owns: struct hpn_sftp's life (hpn_sftp_attach(), conn_free()), its
 * blocking I/O (a request written whole, a reply read whole), its request
 * ids, what its server's VERSION and limits said (settle), the plain
 * requests verified resume makes one at a time (hpn_sftp_send/recv,
 * hpn_sftp_open_read(), hpn_sftp_close_handle()), and what the ssh under
 * a connection is told (hpn_xfer_ssh_child()).
 * Calls: proto.c.
 */

#include "includes.h"

#include <sys/types.h>

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "openbsd-compat/sys-queue.h"
#include "openbsd-compat/sys-tree.h"

#include "xmalloc.h"
#include "ssherr.h"
#include "sshbuf.h"
#include "log.h"
#include "atomicio.h"
#include "misc.h"

#include "sftp.h"
#include "sftp-common.h"

#include "hpn.h"
#include "xfer.h"

/*
 * scp.c, sftp.c, lanes.c, in the child about to run ssh with our pipe as
 * its standard input: what it reads of it before authentication is ours
 * to lose, so it may send it early (EarlySend, hpn-early-client.c): no
 * one else will read that pipe should authentication fail.  With -n, it
 * gets the memory budget its windows share with the other connections
 * (hpn-budget.c; lanes.c passes it at a low descriptor, as it closes the
 * others).
 */
void
hpn_xfer_ssh_child(void)
{
	(void)setenv(HPN_EARLY_INPUT_ENV, "own", 1);
	(void)hpn_budget_pass(-1);
}

/* A connection over fd_in/fd_out, its ids counted in *msg_id (shared). */
struct hpn_sftp *
hpn_sftp_attach(int fd_in, int fd_out, u_int *msg_id)
{
	struct hpn_sftp *h;

	h = xcalloc(1, sizeof(*h));
	h->fd_in = fd_in;
	h->fd_out = fd_out;
	h->msg_id = msg_id;
	h->version = SSH2_FILEXFER_VERSION;
	h->put_fd = -1;
	return h;
}

/* What hpn_sftp_attach() made goes (early.c's answers first: early_forget()). */
void
conn_free(struct hpn_sftp *h)
{
	free(h->pf_path);
	free(h->put_src);
	free(h->put_dst);
	free(h->put_targ);
	freezero(h, sizeof(*h));
}

/*
 * Framed requests in b, written out whole.  A connection closed under us
 * is an error said (EPIPE), not a signal: sftp leaves SIGPIPE at its
 * default.
 */
void
send_blocking(struct hpn_sftp *h, struct sshbuf *b)
{
	sshsig_t opipe = ssh_signal(SIGPIPE, SIG_IGN);
	size_t n;

	n = atomicio(vwrite, h->fd_out, sshbuf_mutable_ptr(b), sshbuf_len(b));
	ssh_signal(SIGPIPE, opipe);
	if (n != sshbuf_len(b))
		fatal("Couldn't send packet: %s", strerror(errno));
}

/* The next reply in m; one to a READDIR with INIT is kept (erd_keep()). */
void
recv_blocking(struct hpn_sftp *h, struct sshbuf *m)
{
	u_char *p;
	u_int len;
	int r;

 again:
	sshbuf_reset(m);
	if ((r = sshbuf_reserve(m, 4, &p)) != 0)
		fatal_fr(r, "reserve");
	if (atomicio(read, h->fd_in, p, 4) != 4)
		fatal("Connection closed");
	if ((r = sshbuf_get_u32(m, &len)) != 0)
		fatal_fr(r, "parse");
	if (len > SFTP_MAX_MSG_LENGTH)
		fatal("Received message too long %u", len);
	if ((r = sshbuf_reserve(m, len, &p)) != 0)
		fatal_fr(r, "reserve");
	if (atomicio(read, h->fd_in, p, len) != len)
		fatal("Connection closed");
	if ((h->nerd > 0 || h->nterd > 0) && erd_keep(h, m))
		goto again;
}

/* ------------------------------------------------------------------ */
/* plain requests, for verified resume (resume.c) */

/* plain requests, for verified resume (hpn-sftp-resume.c) */

/* sftp_init: a VERSION extension upstream does not know.  1: ours. */
int
hpn_sftp_server_ext(struct hpn_sftp *h, const char *name, const char *value)
{
	if (h == NULL || strcmp(value, "1") != 0)
		return 0;
	if (strcmp(name, HPN_HASH_EXT) == 0)
		h->can_hash = 1;
	else if (strcmp(name, HPN_REF_EXT) == 0)
		h->can_ref = 1;
	else if (strcmp(name, HPN_TREE_EXT) == 0)
		h->can_tree = 1;
	else
		return 0;
	return 1;
}

int
hpn_sftp_can_hash(struct hpn_sftp *h)
{
	return h != NULL && h->can_hash;
}

u_int
hpn_sftp_next_id(struct hpn_sftp *h)
{
	return (*h->msg_id)++;
}

/* A request (its body: type, id, ...), framed. */
void
hpn_sftp_send(struct hpn_sftp *h, struct sshbuf *body)
{
	struct sshbuf *b;
	int r;

	if ((b = sshbuf_new()) == NULL)
		fatal_f("sshbuf_new failed");
	if ((r = sshbuf_put_stringb(b, body)) != 0)
		fatal_fr(r, "compose");
	send_blocking(h, b);
	sshbuf_free(b);
}

/* The next reply, its body in m. */
void
hpn_sftp_recv(struct hpn_sftp *h, struct sshbuf *m)
{
	recv_blocking(h, m);
}

/* A STATUS reply's code, SSH2_FX_FAILURE for anything else. */
static u_int
reply_status(struct sshbuf *m, u_char type)
{
	u_int status;

	if (type != SSH2_FXP_STATUS || sshbuf_get_u32(m, &status) != 0)
		return SSH2_FX_FAILURE;
	return status;
}

/*
 * OPEN of path for reading and its STAT, in one round trip.  0: *handle
 * (hlen bytes) and *size; -1: *status says why (and no handle is left).
 */
int
hpn_sftp_open_read(struct hpn_sftp *h, const char *path, u_char **handle,
    size_t *hlen, u_int64_t *size, u_int *status)
{
	struct sshbuf *b, *m;
	u_int oid, sid, id, i;
	u_char type;
	Attrib a;
	int r, have_size = 0;

	*handle = NULL;
	*hlen = 0;
	*size = 0;
	*status = SSH2_FX_OK;
	if ((b = sshbuf_new()) == NULL || (m = sshbuf_new()) == NULL)
		fatal_f("sshbuf_new failed");
	attrib_clear(&a);
	oid = hpn_sftp_next_id(h);
	frame_path(b, SSH2_FXP_OPEN, oid, path, &a, SSH2_FXF_READ);
	sid = hpn_sftp_next_id(h);
	frame_path(b, SSH2_FXP_STAT, sid, path, NULL, 0);
	send_blocking(h, b);
	for (i = 0; i < 2; i++) {
		recv_blocking(h, m);
		if ((r = sshbuf_get_u8(m, &type)) != 0 ||
		    (r = sshbuf_get_u32(m, &id)) != 0)
			fatal_fr(r, "parse");
		if (id == oid && type == SSH2_FXP_HANDLE) {
			if ((r = sshbuf_get_string(m, handle, hlen)) != 0)
				fatal_fr(r, "parse handle");
		} else if (id == oid) {
			*status = reply_status(m, type);
		} else if (id == sid && type == SSH2_FXP_ATTRS) {
			if ((r = decode_attrib(m, &a)) != 0)
				fatal_fr(r, "decode_attrib");
			if (a.flags & SSH2_FILEXFER_ATTR_SIZE) {
				*size = a.size;
				have_size = 1;
			}
		} else if (id != sid)
			fatal("ID mismatch (%u)", id);
	}
	sshbuf_free(b);
	sshbuf_free(m);
	if (*handle != NULL && !have_size) {
		hpn_sftp_close_handle(h, *handle, *hlen);
		free(*handle);
		*handle = NULL;
		*status = SSH2_FX_FAILURE;	/* no size: cannot resume */
	}
	if (*handle == NULL && *status == SSH2_FX_OK)
		*status = SSH2_FX_FAILURE;
	return *handle == NULL ? -1 : 0;
}

/* CLOSE of a handle, waited for. */
void
hpn_sftp_close_handle(struct hpn_sftp *h, const u_char *handle, size_t hlen)
{
	struct sshbuf *b;
	size_t start;
	u_int id, rid, status;
	u_char type;
	int r;

	if ((b = sshbuf_new()) == NULL)
		fatal_f("sshbuf_new failed");
	id = hpn_sftp_next_id(h);
	start = frame_start(b, SSH2_FXP_CLOSE, id);
	if ((r = sshbuf_put_string(b, handle, hlen)) != 0)
		fatal_fr(r, "compose");
	frame_end(b, start);
	send_blocking(h, b);
	recv_blocking(h, b);
	if ((r = sshbuf_get_u8(b, &type)) != 0 ||
	    (r = sshbuf_get_u32(b, &rid)) != 0)
		fatal_fr(r, "parse");
	if (rid != id)
		fatal("ID mismatch (%u != %u)", rid, id);
	if ((status = reply_status(b, type)) != SSH2_FX_OK)
		debug_f("close: %s", fx2txt(status));
	sshbuf_free(b);
}

void
hpn_sftp_settle(struct hpn_sftp *h, u_int version, u_int rbuflen,
    u_int wbuflen, u_int nreq, u_int64_t limit_kbps)
{
	h->version = version;
	h->rbuflen = rbuflen;
	h->wbuflen = wbuflen;
	h->nreq = nreq;
	h->upstream = limit_kbps > 0;
	debug2_f("server open-handles %llu, requests %u x %u / %u bytes%s",
	    (unsigned long long)h->open_handles, nreq, rbuflen, wbuflen,
	    h->upstream ? ", limited: upstream's transfers" : "");
}

/* -n: another connection to the same server takes the first one's figures. */
void
hpn_sftp_settle_as(struct hpn_sftp *h, const struct hpn_sftp *from,
    u_int version)
{
	h->version = version;
	h->rbuflen = from->rbuflen;
	h->wbuflen = from->wbuflen;
	h->nreq = from->nreq;
	h->open_handles = from->open_handles;
	h->upstream = from->upstream;
	h->can_ref = from->can_ref;
	h->can_tree = from->can_tree;
}
