/*
 * HPN patch set: option values shared by hpnssh and hpnsshd.
 */

#include "includes.h"

#include <sys/types.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "misc.h"
#include "xmalloc.h"
#include "log.h"
#include "hpn.h"

/*
 * A size in bytes: a plain number counts KiB, as in HPN-SSH's configuration
 * files ("HPNBufferSize 65536" is 64 MiB); a number with a K, M, G or T
 * suffix is scaled ("64M").  Returns 0 and sets *vp, or -1.
 */
int
hpn_parse_bytes(const char *arg, long long *vp)
{
	long long v;
	char *ep, *tmp;
	int r;

	if (arg == NULL || *arg == '\0')
		return -1;
	if (isdigit((u_char)arg[strlen(arg) - 1])) {
		errno = 0;
		v = strtoll(arg, &ep, 10);
		if (*ep != '\0' || errno != 0 || v < 0 || v > LLONG_MAX / 1024)
			return -1;
		v *= 1024;
	} else {
		tmp = xstrdup(arg);
		r = scan_scaled(tmp, &v);
		free(tmp);
		if (r == -1 || v < 0)
			return -1;
	}
	*vp = v;
	return 0;
}

/*
 * A buffer size (hpn_parse_bytes()); 0 is accepted and means "not set".
 * Returns 0 and sets *valp (bytes), or -1 when arg is not a size in
 * [min, max] bytes.
 */
int
hpn_parse_size(const char *arg, u_int min, u_int max, u_int *valp)
{
	long long v;

	if (hpn_parse_bytes(arg, &v) != 0)
		return -1;
	if (v != 0 && (v < min || v > max))
		return -1;
	*valp = (u_int)v;
	return 0;
}

/*
 * An interval in seconds, fractions allowed ("0.5", "2", "1.25s"), of
 * HPN_METRICS_INTERVAL_MIN to HPN_METRICS_INTERVAL_MAX ms.  Returns 0 and
 * sets *msp, or -1.
 */
int
hpn_parse_interval_ms(const char *arg, int *msp)
{
	double v;
	char *ep;

	/* digits and a point, then perhaps "s": no sign, hex or exponent */
	if (arg == NULL || *arg == '\0' ||
	    strspn(arg, "0123456789.") == 0 ||
	    (arg[strspn(arg, "0123456789.")] != '\0' &&
	    strcmp(arg + strspn(arg, "0123456789."), "s") != 0))
		return -1;
	errno = 0;
	v = strtod(arg, &ep);
	if (ep == arg || errno != 0 || (*ep != '\0' && strcmp(ep, "s") != 0))
		return -1;
	/* also refuses NaN: every comparison with it is false */
	if (!(v * 1000 + 1e-6 >= HPN_METRICS_INTERVAL_MIN &&
	    v * 1000 <= HPN_METRICS_INTERVAL_MAX))
		return -1;
	*msp = (int)(v * 1000 + 0.5);
	return 0;
}

/*
 * HappyDelay: whole milliseconds, as HPN-SSH reads it (an integer); 0
 * means the default, as in HPN-SSH, whose delay is never below 1 ms.
 * A sign, a unit, a fraction or more than HPN_HAPPY_DELAY_MAX: -1.
 */
int
hpn_parse_happy_delay(const char *arg, int *msp)
{
	const char *errstr = NULL;
	long long v;

	if (arg == NULL || *arg == '\0' ||
	    arg[strspn(arg, "0123456789")] != '\0')
		return -1;
	v = strtonum(arg, 0, HPN_HAPPY_DELAY_MAX, &errstr);
	if (errstr != NULL)
		return -1;
	*msp = v == 0 ? HPN_HAPPY_DELAY : (int)v;
	return 0;
}

/*
 * Verified resume's checksums (hpn-sftp-hash.c) by the client's
 * preference, which is ResumeHash's default: xxh128 where the build has
 * libxxhash (scripts/build.sh finds it), then the cryptographic hashes.
 */
const char *const hpn_hash_names[] = {
#ifdef HPN_WITH_XXHASH
	"xxh128",
#endif
	"sha256", "blake2b512", NULL
};

/* ResumeHash's default: hpn_hash_names, comma-separated. */
const char *
hpn_hash_default(void)
{
	static char list[64];
	int i;

	if (*list != '\0')
		return list;
	for (i = 0; hpn_hash_names[i] != NULL; i++) {
		if ((i > 0 && strlcat(list, ",", sizeof(list)) >=
		    sizeof(list)) || strlcat(list, hpn_hash_names[i],
		    sizeof(list)) >= sizeof(list))
			fatal_f("algorithm list too long");
	}
	return list;
}

/*
 * ResumeHash: a comma-separated list of names of hpn_hash_names, each at
 * most once.  0, or -1 with the reason in why.
 */
int
hpn_parse_hash_list(const char *arg, char *why, size_t whylen)
{
	char *l, *cp, *name;
	u_int seen = 0;		/* bits: hpn_hash_names[i] named */
	size_t i;
	int r = -1;

	if (arg == NULL || *arg == '\0') {
		snprintf(why, whylen, "no algorithm given");
		return -1;
	}
	l = cp = xstrdup(arg);
	while ((name = strsep(&cp, ",")) != NULL) {
		for (i = 0; hpn_hash_names[i] != NULL; i++) {
			if (strcmp(name, hpn_hash_names[i]) == 0)
				break;
		}
		if (hpn_hash_names[i] == NULL) {
			if (strcmp(name, "xxh128") == 0)
				snprintf(why, whylen, "xxh128 is not in this "
				    "build (made without libxxhash)");
			else
				snprintf(why, whylen, "unknown algorithm "
				    "\"%.32s\"", name);
			goto out;
		}
		if (seen & (1U << i)) {
			snprintf(why, whylen, "%s named twice", name);
			goto out;
		}
		seen |= 1U << i;
	}
	r = 0;
 out:
	free(l);
	return r;
}
