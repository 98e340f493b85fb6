/*
 * Fuzz harness: the SFTP engine's parser of replies (src/xfer/proto.c),
 * bytes in, a decision out, with no I/O: what every reply handler of the
 * engine (file.c, data.c, walk.c, wire.c) and early.c call first.
 *
 * The input: the type of reply the request wanted (one byte), then a
 * reply as it comes off the wire (its type, id and body).  Each is parsed
 * as a reply to a request wanting that type (sftp_reply()), then, as the
 * callers go on: a NAME's entries one by one (sftp_name_next(), or
 * sftp_name_one() for a REALPATH), an EXTENDED_REPLY as limits@'s
 * (sftp_limits()).  The rest is a server's first message
 * (sftp_version_head()).
 *
 * Checked: a reply is exactly one of SFTP_R_WANT, _STATUS, _BAD; BAD comes
 * with a message; WANT's handle is at most HPN_SFTP_HANDLE_MAX bytes and
 * within the message, its data within the message; an OK where data was
 * due is never returned as OK; every name parsed is a C string within
 * the message.
 */

#include "includes.h"

#include <sys/types.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "openbsd-compat/sys-queue.h"
#include "openbsd-compat/sys-tree.h"

#include "xmalloc.h"
#include "sshbuf.h"
#include "log.h"

#include "sftp.h"
#include "sftp-common.h"
#include "sftp-client.h"

#include "hpn.h"
#include "xfer/xfer.h"

#include "fuzz-common.h"

static const u_char wants[] = { SSH2_FXP_STATUS, SSH2_FXP_HANDLE,
    SSH2_FXP_DATA, SSH2_FXP_NAME, SSH2_FXP_ATTRS, SSH2_FXP_EXTENDED_REPLY };

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
	fz_init("xfer_proto_fuzz");
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sshbuf *m;
	struct sftp_reply r;
	struct sftp_limits lim;
	const u_char *lo, *hi;
	char err[256], *name, *longname;
	u_char want, type, head[9];
	u_int id, i, len, version;
	Attrib a;
	int ret;

	if (size < 1)
		return 0;
	want = wants[data[0] % sizeof(wants)];
	if ((m = sshbuf_from(data + 1, size - 1)) == NULL)
		abort();
	lo = data + 1;
	hi = data + size;
	if (sftp_reply_head(m, &type, &id) != 0)
		goto out;
	ret = sftp_reply(m, type, want, &r, err, sizeof(err));
	check(ret == SFTP_R_WANT || ret == SFTP_R_STATUS || ret == SFTP_R_BAD,
	    "a decision of no kind");
	if (ret == SFTP_R_BAD) {
		check(*err != '\0', "a protocol error without words");
		goto out;
	}
	if (ret == SFTP_R_STATUS) {
		check(want == SSH2_FXP_STATUS || r.status != SSH2_FX_OK,
		    "OK where data was due");
		goto out;
	}
	check(type == want, "the wanted reply of another type");
	switch (type) {
	case SSH2_FXP_HANDLE:
		check(r.hlen <= HPN_SFTP_HANDLE_MAX, "a handle too long");
		check(r.handle >= lo && r.handle + r.hlen <= hi,
		    "a handle outside the message");
		break;
	case SSH2_FXP_DATA:
		check(r.data >= lo && r.data + r.dlen <= hi,
		    "data outside the message");
		break;
	case SSH2_FXP_NAME:
		if (data[0] & 0x80) {
			if (sftp_name_one(m, &r, &name, &a, err,
			    sizeof(err)) == 0) {
				check(strlen(name) < size, "a name too long");
				free(name);
			}
			break;
		}
		for (i = 0; i < r.count; i++) {
			ret = sftp_name_next(m, &name, &longname, &a, err,
			    sizeof(err));
			if (ret != 0) {
				check(name == NULL && *err != '\0',
				    "a failed entry not said, or kept");
				break;
			}
			check(strlen(name) < size && strlen(longname) < size,
			    "a name too long");
			free(name);
			free(longname);
		}
		break;
	case SSH2_FXP_EXTENDED_REPLY:
		(void)sftp_limits(m, &lim);
		break;
	}
 out:
	if (size >= 10) {
		memcpy(head, data + 1, sizeof(head));
		if (sftp_version_head(head, &len, &version) == 0)
			check(len + 5 == PEEK_U32(head) && len <= SFTP_MAX_MSG_LENGTH,
			    "a VERSION's length");
	}
	sshbuf_free(m);
	return 0;
}
