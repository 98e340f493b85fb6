/*
 * Fuzz harness: the parsers of HPN-SSH's legacy scp -Z lines
 * (src/hpn-scp-zproto.c), bytes in, a decision out, with no I/O: what
 * hpnscp's source reads from a target (its answer, HPN_ZSCP_REPLYLEN bytes
 * on the wire) and what its target reads from a source (the hash in a C
 * line).
 *
 * The input: a first byte choosing the parser, then its bytes: even, the
 * target's answer (all of the rest, any length: the wire's is fixed, the
 * parser's bound is the length it is given); odd, a C line's hash field
 * (the rest as a C string).
 *
 * Checked: an answer parsed is 'S', 'R' or 'C'; an answer refused has a
 * reason; a hash taken is HPN_ZSCP_HASHLEN lower-case hex digits; an
 * answer composed from what was parsed parses back to the same; a hash
 * field taken moves the cursor past exactly the hash and its space.
 */

#include "includes.h"

#include <sys/types.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"
#include "hpn.h"

#include "fuzz-common.h"

static void
check(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz harness: %s\n", what);
		abort();
	}
}

static int
lowerhex(const char *h)
{
	size_t i;

	for (i = 0; i < HPN_ZSCP_HASHLEN; i++)
		if (!((h[i] >= '0' && h[i] <= '9') || (h[i] >= 'a' &&
		    h[i] <= 'f')))
			return 0;
	return h[i] == '\0';
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_init("zscp_fuzz");
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hpn_zreply z, z2;
	char buf[HPN_ZSCP_REPLYLEN + 1], hash[HPN_ZSCP_HASHLEN + 1];
	char *line, *cp;
	const char *why;

	if (size < 1)
		return 0;
	if ((data[0] & 1) == 0) {
		if (hpn_zscp_parse_reply((const char *)data + 1, size - 1, &z,
		    &why) != 0) {
			check(why != NULL, "refused without a reason");
			return 0;
		}
		check(z.kind == 'S' || z.kind == 'R' || z.kind == 'C',
		    "unknown kind accepted");
		if (z.kind == 'S')
			return 0;
		check(z.mode <= 07777, "mode out of range");
		check(z.size < 1000000000000000000ULL, "size out of range");
		if (z.has_hash)
			check(lowerhex(z.hash), "hash not lower-case hex");
		hpn_zscp_compose_reply(buf, z.kind, z.mode, z.size,
		    z.has_hash ? z.hash : NULL);
		check(strlen(buf) == HPN_ZSCP_REPLYLEN, "composed length");
		check(hpn_zscp_parse_reply(buf, HPN_ZSCP_REPLYLEN, &z2,
		    &why) == 0, "composed answer refused");
		check(z2.kind == z.kind && z2.mode == z.mode &&
		    z2.size == z.size && z2.has_hash == z.has_hash &&
		    (!z.has_hash || strcmp(z2.hash, z.hash) == 0),
		    "round trip differs");
		return 0;
	}
	line = xcalloc(1, size);
	memcpy(line, data + 1, size - 1);
	cp = line;
	if (hpn_zscp_parse_hash(&cp, hash) == 0) {
		check(cp == line + HPN_ZSCP_HASHLEN + 1, "cursor");
		check(lowerhex(hash), "hash not lower-case hex");
	} else
		check(cp == line, "cursor moved on a refusal");
	free(line);
	return 0;
}
