/*
 * Fuzz harness: key options (auth-options.c), for our fix
 * (cve-2026-73283-restrict-tun.patch): "restrict" refuses tunnels unless
 * a tunnel="n" follows it, and a refusal by either set of options
 * survives their merge (an authorized_keys line's with a certificate's,
 * which the client presents).  In the style of OpenSSH's authopt_fuzz.cc,
 * with the checks of the fix.
 *
 * Input: two option strings, as on an authorized_keys line, split at the
 * first NUL (the second stands for the certificate's, parsed the same
 * way).  Checked: what each permits survives serialisation (as the
 * monitor sends it); merged, a
 * tunnel refused by either is refused, and the merge is restricted when
 * either is.
 */

#include "includes.h"

#include <sys/types.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sshbuf.h"
#include "auth-options.h"

#include "fuzz-common.h"

int LLVMFuzzerInitialize(int *, char ***);
int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/*
 * Not checked: that a refusal has a reason.  Upstream's handle_permit()
 * drops opt_dequote()'s (an unterminated permitopen="... is refused with
 * a NULL reason, which sshd logs as "(null)"): not our code.
 */
static struct sshauthopt *
parse(const char *s)
{
	const char *err = NULL;

	return sshauthopt_parse(s, &err);
}

/* The monitor's copy of o says the same of tunnels. */
static void
roundtrip(const struct sshauthopt *o)
{
	struct sshauthopt *c = NULL;
	struct sshbuf *b;

	if ((b = sshbuf_new()) == NULL)
		fz_bad("sshbuf_new");
	if (sshauthopt_serialise(o, b, 0) != 0 ||
	    sshauthopt_deserialise(b, &c) != 0)
		fz_bad("serialisation");
	if (sshauthopt_permit_tun(c) != sshauthopt_permit_tun(o) ||
	    c->restricted != o->restricted ||
	    c->force_tun_device != o->force_tun_device)
		fz_bad("serialised options permit tunnels differently");
	sshauthopt_free(c);
	sshbuf_free(b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sshauthopt *a = NULL, *b = NULL, *m;
	const char *err = NULL;
	char *s = malloc(size + 2);
	size_t n;

	if (s == NULL)
		fz_bad("malloc");
	memcpy(s, data, size);
	s[size] = s[size + 1] = '\0';
	n = strlen(s);
	if ((a = parse(s)) == NULL || (b = parse(s + n + 1)) == NULL)
		goto out;
	roundtrip(a);
	roundtrip(b);
	if ((m = sshauthopt_merge(a, b, &err)) == NULL)
		goto out;
	if ((!sshauthopt_permit_tun(a) || !sshauthopt_permit_tun(b)) &&
	    sshauthopt_permit_tun(m))
		fz_bad("a tunnel refused by one permitted by the merge");
	if ((a->restricted || b->restricted) && !m->restricted)
		fz_bad("the merge is not restricted");
	roundtrip(m);
	sshauthopt_free(m);
 out:
	sshauthopt_free(a);
	sshauthopt_free(b);
	free(s);
	return 0;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("HPN_FUZZ_SEEDS");
	static const struct {
		const char *name;
		const char *s;
		size_t len;
	} seeds[] = {
#define S(n, v) { n, v, sizeof(v) - 1 }
		/* the fix's own unit tests (regress/unittests/authopt) */
		S("restrict", "restrict\0"),
		S("restrict-tunnel", "restrict,tunnel=\"1\"\0"),
		S("tunnel-restrict", "tunnel=\"1\",restrict\0"),
		S("tunnel", "tunnel=\"1\"\0"),
		S("merge-restrict", "\0restrict"),
		S("merge-restrict-tunnel", "\0restrict,tunnel=\"6\""),
		S("merge-key-restrict", "restrict\0tunnel=\"6\""),
		/* a line of options as people write them */
		S("line", "no-pty,no-port-forwarding,permitopen=\"127.0.0.1:80\","
		    "from=\"10.0.0.0/8\",command=\"/bin/true\",environment="
		    "\"A=b\",expiry-time=\"20301231\",tunnel=\"0\"\0"
		    "restrict,pty,port-forwarding"),
#undef S
	};
	struct sshbuf *b;
	u_int i;

	(void)argc;
	(void)argv;
	fz_init("authopt_fuzz");
	if (dir == NULL)
		return 0;
	for (i = 0; i < sizeof(seeds) / sizeof(*seeds); i++) {
		if ((b = sshbuf_from(seeds[i].s, seeds[i].len)) == NULL)
			fz_bad("sshbuf_from");
		fz_write_seed(dir, seeds[i].name, b);
		sshbuf_free(b);
	}
	fflush(NULL);
	_exit(0);
}
