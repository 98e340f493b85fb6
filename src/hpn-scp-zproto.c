/*
 * HPN patch set: the lines of HPN-SSH's legacy scp resume (-Z), composed
 * and parsed.  No I/O: hpn-scp-resume.c does the exchange, and the fuzz
 * harness tests/fuzz/zscp_fuzz.c feeds these parsers the peer's bytes.
 *
 * What the exchange is (HPN-SSH 18.8's hpnscp -Z, from its documentation
 * and the bytes its programs send, README.hpn section 10):
 *
 *   source -> target  "C%04o SIZE HASH NAME\n": HASH the BLAKE2b-512 of
 *                     the whole source file, 128 lowercase hex digits
 *   target -> source  an answer of exactly 191 bytes, padded with spaces,
 *                     then the usual one-byte acknowledgement:
 *                       "S"                   complete and identical: skip
 *                       "R%04o HELD HASH"     HELD bytes there (fewer than
 *                                             SIZE), HASH theirs; no HASH
 *                                             where the target has no file
 *                       "C%04o HELD [HASH]"   as long or longer: send all
 *   source -> target  (not after "S") one byte: 'M' the HELD bytes match
 *                     the start of the source, the rest follows; 'F' they
 *                     do not, the whole file follows; after a "C" answer
 *                     any other byte (HPN-SSH sends NUL), the whole file
 *   then the data, its NUL and acknowledgement as without -Z.
 */

#include "includes.h"

#include <sys/types.h>

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "hpn.h"

static int
hexdigit(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	    (c >= 'A' && c <= 'F');
}

/*
 * A decimal number of at most 18 digits (below 10^18, so it fits an off_t)
 * at p[*i], p[*i + 1]... up to n; *i moves past it.  0, or -1.
 */
static int
number(const char *p, size_t n, size_t *i, unsigned long long *v)
{
	size_t start = *i;

	*v = 0;
	while (*i < n && p[*i] >= '0' && p[*i] <= '9') {
		if (*i - start >= 18)
			return -1;
		*v = *v * 10 + (p[*i] - '0');
		(*i)++;
	}
	return *i > start ? 0 : -1;
}

/*
 * The source's hash in a C line, at *cpp (after the size and its space):
 * HPN_ZSCP_HASHLEN hex digits and a space.  The hash is copied, in lower
 * case, to hash (HPN_ZSCP_HASHLEN + 1 bytes) and *cpp moves past the
 * space.  0, or -1 (the line is left as it was).
 */
int
hpn_zscp_parse_hash(char **cpp, char *hash)
{
	const char *p = *cpp;
	size_t i;

	for (i = 0; i < HPN_ZSCP_HASHLEN; i++) {
		if (!hexdigit((u_char)p[i]))
			return -1;
		hash[i] = tolower((u_char)p[i]);
	}
	if (p[i] != ' ')
		return -1;
	hash[i] = '\0';
	*cpp += i + 1;
	return 0;
}

/*
 * The target's answer: len bytes at p (HPN_ZSCP_REPLYLEN on the wire; any
 * byte may be anything).  0 with *z filled, or -1 with *why set.
 */
int
hpn_zscp_parse_reply(const char *p, size_t len, struct hpn_zreply *z,
    const char **why)
{
	size_t i, j;
	unsigned long long v;

	memset(z, 0, sizeof(*z));
	*why = NULL;
	if (len < 1) {
		*why = "empty answer";
		return -1;
	}
	z->kind = p[0];
	if (z->kind == 'S')
		return 0;	/* what follows is padding */
	if (z->kind != 'R' && z->kind != 'C') {
		*why = "unknown answer";
		return -1;
	}
	/* a mode: four octal digits */
	for (i = 1; i < 5; i++) {
		if (i >= len || p[i] < '0' || p[i] > '7') {
			*why = "bad mode";
			return -1;
		}
		z->mode = (z->mode << 3) | (p[i] - '0');
	}
	if (i >= len || p[i++] != ' ') {
		*why = "mode not delimited";
		return -1;
	}
	if (number(p, len, &i, &v) != 0) {
		*why = "bad size";
		return -1;
	}
	z->size = v;
	/* then nothing but spaces, or a space, a hash and spaces */
	if (i < len && p[i] == ' ' && i + 1 < len && p[i + 1] != ' ') {
		i++;
		if (len - i < HPN_ZSCP_HASHLEN) {
			*why = "hash cut short";
			return -1;
		}
		for (j = 0; j < HPN_ZSCP_HASHLEN; j++, i++) {
			if (!hexdigit((u_char)p[i])) {
				*why = "bad hash";
				return -1;
			}
			z->hash[j] = tolower((u_char)p[i]);
		}
		z->hash[j] = '\0';
		z->has_hash = 1;
	}
	for (; i < len; i++) {
		if (p[i] != ' ') {
			*why = "trailing bytes";
			return -1;
		}
	}
	return 0;
}

/*
 * The target's answer into buf (HPN_ZSCP_REPLYLEN + 1 bytes): kind 'S',
 * or 'R'/'C' with the mode, the bytes held and their hash (or NULL),
 * padded with spaces to HPN_ZSCP_REPLYLEN.
 */
void
hpn_zscp_compose_reply(char *buf, char kind, u_int mode,
    unsigned long long held, const char *hash)
{
	char line[HPN_ZSCP_REPLYLEN + 1];

	if (kind == 'S')
		snprintf(line, sizeof(line), "S");
	else
		snprintf(line, sizeof(line), "%c%04o %llu%s%s", kind,
		    mode & 07777, held, hash != NULL ? " " : "",
		    hash != NULL ? hash : "");
	snprintf(buf, HPN_ZSCP_REPLYLEN + 1, "%-*s", HPN_ZSCP_REPLYLEN, line);
}
