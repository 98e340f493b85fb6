/*
 * Fuzz harness: handle references (handle-ref@, hpn-sftp.c), the table
 * sftp-server keeps of which request made each open handle, against a
 * model of what README.hpn section 9 says it is.
 *
 * The input is a sequence of operations, as sftp-server makes them: a
 * handle h sent in answer to request id (hpn_sftp_ref_note(), from
 * send_handle()), a handle closed (hpn_sftp_ref_forget(), from
 * handle_unused()), and a handle string from a client resolved
 * (hpn_sftp_ref_resolve(), from handle_from_string()): raw bytes of any
 * length, or a reference to 1-4 ids composed as the client composes it
 * (hpn_sftp_ref_make()).  The model: a reference is HPN_REF_MAGIC and one
 * to HPN_REF_IDS ids; it stands for the handle of the first of its ids
 * that made a handle still open (an id sent again takes it over), else
 * for none; anything else is not a reference.  Every resolution must
 * agree with the model.  After each input every handle is closed.
 */

#include "includes.h"

#include <sys/types.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sshbuf.h"
#include "hpn.h"

#include "fuzz-common.h"

int LLVMFuzzerInitialize(int *, char ***);
int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define HANDLES	64		/* handles open at once, at most, here */
#define OPS	4096

static struct {
	u_int32_t id;
	int open;
} model[HANDLES];

static int
model_resolve(const u_char *s, size_t len)
{
	u_int k, n, i;
	u_int32_t id;

	if (len < 5 || s[0] != HPN_REF_MAGIC || (len - 1) % 4 != 0 ||
	    (n = (len - 1) / 4) > HPN_REF_IDS)
		return -2;
	for (k = 0; k < n; k++) {
		id = PEEK_U32(s + 1 + 4 * k);
		for (i = 0; i < HANDLES; i++)
			if (model[i].open && model[i].id == id)
				return (int)i;
	}
	return -1;
}

static void
resolve(const u_char *s, size_t len)
{
	int got, want;

	got = hpn_sftp_ref_resolve(s, len);
	want = model_resolve(s, len);
	if (got != want)
		fz_bad("a %zu-byte handle resolved to %d, not %d", len, got,
		    want);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_init("sftp_ref_fuzz");
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	u_char ref[HPN_REF_LEN_MAX];
	u_int32_t id, ids[HPN_REF_IDS];
	const uint8_t *p;
	size_t len;
	uint8_t op, h, n;
	u_int i, k;

	for (k = 0; k < OPS && fz_u8(&in, &op) == 0; k++) {
		switch (op % 4) {
		case 0:		/* OPEN id answered with handle h */
			if (fz_u8(&in, &h) != 0 || fz_u32(&in, &id) != 0)
				break;
			h %= HANDLES;
			if (model[h].open)	/* sftp-server reuses closed ones */
				break;
			hpn_sftp_ref_note(id, h);
			for (i = 0; i < HANDLES; i++)
				if (model[i].open && model[i].id == id)
					model[i].open = 0;
			model[h].id = id;
			model[h].open = 1;
			break;
		case 1:		/* CLOSE of handle h */
			if (fz_u8(&in, &h) != 0)
				break;
			h %= HANDLES;
			hpn_sftp_ref_forget(h);
			model[h].open = 0;
			break;
		case 2:		/* a handle string, any bytes */
			if (fz_bytes(&in, 64, &p, &len) == 0)
				resolve(p, len);
			break;
		case 3:		/* a reference as the client makes it */
			if (fz_u8(&in, &n) != 0)
				break;
			n = n % HPN_REF_IDS + 1;
			for (i = 0; i < n; i++)
				if (fz_u32(&in, &ids[i]) != 0)
					ids[i] = 0;
			len = hpn_sftp_ref_make(ref, ids, n);
			if (len != 1 + 4 * (size_t)n)
				fz_bad("a reference to %u ids of %zu bytes", n, len);
			resolve(ref, len);
			break;
		}
	}
	for (i = 0; i < HANDLES; i++) {
		hpn_sftp_ref_forget(i);
		model[i].open = 0;
	}
	return 0;
}
