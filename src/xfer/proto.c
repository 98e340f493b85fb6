/*
 * HPN patch set: the SFTP engine's messages (src/sftp/, the bottom layer).
 *
 * Owns: composing requests into a buffer (frame_*()), and reading every
 * reply a server sends into a struct sftp_reply: its type and id, then
 * what the request it answers wanted (a status, a handle, file data,
 * names, attributes, an extended reply), or why it is not that (a
 * protocol error, said in words for the caller to name its request).
 * No I/O and no state: bytes in, a decision out, so that a fuzz harness
 * (tests/fuzz/) drives it directly.
 * Calls: sshbuf and sftp-common.c's attribute codec; nothing of ours.
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "openbsd-compat/sys-queue.h"
#include "openbsd-compat/sys-tree.h"

#include "xmalloc.h"
#include "ssherr.h"
#include "sshbuf.h"
#include "log.h"
#include "misc.h"

#include "sftp.h"
#include "sftp-common.h"
#include "sftp-client.h"

#include "hpn.h"
#include "xfer.h"

/* Start a request of type with id in b; returns where, for frame_end(). */
size_t
frame_start(struct sshbuf *b, u_char type, u_int id)
{
	size_t start = sshbuf_len(b);
	int r;

	if ((r = sshbuf_put_u32(b, 0)) != 0 ||
	    (r = sshbuf_put_u8(b, type)) != 0 ||
	    (r = sshbuf_put_u32(b, id)) != 0)
		fatal_fr(r, "compose");
	return start;
}

/* The request that started at start is complete: its length in front. */
void
frame_end(struct sshbuf *b, size_t start)
{
	size_t len = sshbuf_len(b) - start - 4;

	if (len > SFTP_MAX_MSG_LENGTH)
		fatal("Outbound message too long %zu", len);
	POKE_U32(sshbuf_mutable_ptr(b) + start, len);
}

/* A path request, with attributes (a) and open flags (pflags) or not. */
void
frame_path(struct sshbuf *b, u_char type, u_int id, const char *path,
    const Attrib *a, u_int pflags)
{
	size_t start = frame_start(b, type, id);
	int r;

	if ((r = sshbuf_put_cstring(b, path)) != 0 ||
	    (type == SSH2_FXP_OPEN && (r = sshbuf_put_u32(b, pflags)) != 0) ||
	    (a != NULL && (r = encode_attrib(b, a)) != 0))
		fatal_fr(r, "compose");
	frame_end(b, start);
}

/* A request on a handle, with attributes (a) or not. */
void
frame_handle(struct sshbuf *b, u_char type, u_int id, const u_char *handle,
    size_t hlen, const Attrib *a)
{
	size_t start = frame_start(b, type, id);
	int r;

	if ((r = sshbuf_put_string(b, handle, hlen)) != 0 ||
	    (a != NULL && (r = encode_attrib(b, a)) != 0))
		fatal_fr(r, "compose");
	frame_end(b, start);
}

/*
 * The attributes an upload's OPEN (mask 0777) or MKDIR (01777) sends for
 * a local file or directory st, as upstream sets them: no size, owner or
 * group; times only with -p.
 */
void
put_attrib(const struct stat *st, int preserve, u_int mask, Attrib *a)
{
	stat_to_attrib(st, a);
	a->flags &= ~SSH2_FILEXFER_ATTR_SIZE;
	a->flags &= ~SSH2_FILEXFER_ATTR_UIDGID;
	a->perm &= mask;
	if (!preserve)
		a->flags &= ~SSH2_FILEXFER_ATTR_ACMODTIME;
}

/* HPN_TREE_EXT: open path's subtree, at most depth levels below it. */
void
frame_tree(struct sshbuf *b, u_int id, const char *path, u_int depth)
{
	size_t start = frame_start(b, SSH2_FXP_EXTENDED, id);
	int r;

	if ((r = sshbuf_put_cstring(b, HPN_TREE_EXT)) != 0 ||
	    (r = sshbuf_put_cstring(b, path)) != 0 ||
	    (r = sshbuf_put_u32(b, depth)) != 0)
		fatal_fr(r, "compose");
	frame_end(b, start);
}

/* A reply's type and id, off the front of m.  0, or -1 (too short). */
int
sftp_reply_head(struct sshbuf *m, u_char *type, u_int *id)
{
	if (sshbuf_get_u8(m, type) != 0 || sshbuf_get_u32(m, id) != 0)
		return -1;
	return 0;
}

static const char *
type_name(u_char type)
{
	switch (type) {
	case SSH2_FXP_STATUS:
		return "SSH2_FXP_STATUS";
	case SSH2_FXP_HANDLE:
		return "SSH2_FXP_HANDLE";
	case SSH2_FXP_DATA:
		return "SSH2_FXP_DATA";
	case SSH2_FXP_NAME:
		return "SSH2_FXP_NAME";
	case SSH2_FXP_ATTRS:
		return "SSH2_FXP_ATTRS";
	case SSH2_FXP_EXTENDED_REPLY:
		return "SSH2_FXP_EXTENDED_REPLY";
	default:
		return "?";
	}
}

static int
bad(char *err, size_t elen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
bad(char *err, size_t elen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, elen, fmt, ap);
	va_end(ap);
	return SFTP_R_BAD;
}

/*
 * The rest of a reply (m: after its type and id) to a request that wants
 * a reply of type want.  Returns:
 *   SFTP_R_WANT	it is one (r: its handle, data, name count, attributes;
 *			pointers into m; an extended reply's body stays in m);
 *   SFTP_R_STATUS	a STATUS (r->status).  Where a handle, data, names
 *			or attributes were due, an OK is no answer: it is
 *			SSH2_FX_BAD_MESSAGE (upstream says "No error" and
 *			fails).  Attributes that do not decode are the same
 *			(err says how);
 *   SFTP_R_BAD		the server broke the protocol: another type, a body
 *			that does not parse, a handle no request can name
 *			(err says which, as upstream's fatal() would).
 */
int
sftp_reply(struct sshbuf *m, u_char type, u_char want, struct sftp_reply *r,
    char *err, size_t elen)
{
	int e;

	memset(r, 0, sizeof(*r));
	r->type = type;
	*err = '\0';
	if (type == SSH2_FXP_STATUS) {
		if ((e = sshbuf_get_u32(m, &r->status)) != 0)
			return bad(err, elen, "parse status: %s", ssh_err(e));
		if (r->status == SSH2_FX_OK && want != SSH2_FXP_STATUS)
			r->status = SSH2_FX_BAD_MESSAGE;
		return SFTP_R_STATUS;
	}
	if (type != want)
		return bad(err, elen, "Expected %s(%u) packet, got %u",
		    type_name(want), want, type);
	switch (type) {
	case SSH2_FXP_HANDLE:
		if ((e = sshbuf_get_string_direct(m, &r->handle,
		    &r->hlen)) != 0)
			return bad(err, elen, "parse handle: %s", ssh_err(e));
		if (r->hlen > HPN_SFTP_HANDLE_MAX)
			return bad(err, elen, "a handle of %zu bytes (at most "
			    "%d)", r->hlen, HPN_SFTP_HANDLE_MAX);
		break;
	case SSH2_FXP_DATA:
		if ((e = sshbuf_get_string_direct(m, &r->data, &r->dlen)) != 0)
			return bad(err, elen, "parse data: %s", ssh_err(e));
		break;
	case SSH2_FXP_NAME:
		if ((e = sshbuf_get_u32(m, &r->count)) != 0)
			return bad(err, elen, "parse count: %s", ssh_err(e));
		if (r->count > SSHBUF_SIZE_MAX)
			return bad(err, elen, "nonsensical number of entries");
		break;
	case SSH2_FXP_ATTRS:
		if ((e = decode_attrib(m, &r->a)) != 0) {
			snprintf(err, elen, "decode_attrib: %s", ssh_err(e));
			r->status = SSH2_FX_BAD_MESSAGE;
			return SFTP_R_STATUS;
		}
		break;
	}
	return SFTP_R_WANT;
}

/*
 * The next entry of a NAME reply (m: after its count): *name and
 * *longname (allocated) and *a.  0; 1: its attributes do not decode (err,
 * the names freed); SFTP_R_BAD: the entry does not parse (err).
 */
int
sftp_name_next(struct sshbuf *m, char **name, char **longname, Attrib *a,
    char *err, size_t elen)
{
	int e;

	*name = *longname = NULL;
	if ((e = sshbuf_get_cstring(m, name, NULL)) != 0 ||
	    (e = sshbuf_get_cstring(m, longname, NULL)) != 0) {
		free(*name);
		*name = NULL;
		return bad(err, elen, "parse filenames: %s", ssh_err(e));
	}
	if ((e = decode_attrib(m, a)) != 0) {
		snprintf(err, elen, "couldn't decode attrib: %s", ssh_err(e));
		free(*name);
		free(*longname);
		*name = *longname = NULL;
		return 1;
	}
	return 0;
}

/*
 * The one name of a REALPATH's NAME reply (r: its count read): *name
 * (allocated), its attributes in *a.  0, or SFTP_R_BAD (err).
 */
int
sftp_name_one(struct sshbuf *m, const struct sftp_reply *r, char **name,
    Attrib *a, char *err, size_t elen)
{
	char *longname;

	*name = NULL;
	if (r->count != 1)
		return bad(err, elen, "Got multiple names (%u) from "
		    "SSH2_FXP_REALPATH", r->count);
	if (sftp_name_next(m, name, &longname, a, err, elen) != 0)
		return bad(err, elen, "parse filename/attrib");
	free(longname);
	return 0;
}

/* limits@openssh.com's reply (m: after its type and id).  0, or -1. */
int
sftp_limits(struct sshbuf *m, struct sftp_limits *limits)
{
	memset(limits, 0, sizeof(*limits));
	if (sshbuf_get_u64(m, &limits->packet_length) != 0 ||
	    sshbuf_get_u64(m, &limits->read_length) != 0 ||
	    sshbuf_get_u64(m, &limits->write_length) != 0 ||
	    sshbuf_get_u64(m, &limits->open_handles) != 0)
		return -1;
	return 0;
}

/*
 * The first 9 bytes of a server's first message (length, type, version):
 * 0 with *len (the rest of it, its extensions, to read past) and
 * *version, or -1: not an SFTP VERSION.
 */
int
sftp_version_head(const u_char *head, u_int *len, u_int *version)
{
	u_int n = PEEK_U32(head);

	if (head[4] != SSH2_FXP_VERSION || n < 5 || n > SFTP_MAX_MSG_LENGTH)
		return -1;
	*len = n - 5;
	*version = PEEK_U32(head + 5);
	return 0;
}
