/*
 * HPN patch set: hpnsshd's own sshd_config options, in one table.
 *
 * servconf.c calls in here from five places (initialisation, a line of
 * the configuration, defaults, Match's copy, the -T dump) instead of
 * carrying an opcode, a keyword, a case and a dump line per option, so
 * that a rebase onto a servconf.c upstream has rewritten touches five
 * lines there.  The values stay in ServerOptions (servconf.h), where the
 * rest of the server reads them.  A line is parsed as servconf.c parses
 * its own: the first value obtained wins, options not allowed in a Match
 * block are refused there, extra arguments are an error.
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"
#include "log.h"
#include "misc.h"
#include "servconf.h"
#include "hpn.h"

enum hpn_stype {
	HS_FLAG,	/* yes or no */
	HS_BUFSIZE,	/* TcpRcvBuf: a size, 0 allowed */
	HS_WINSIZE,	/* HPNBufferSize: a size, 0 refused */
	HS_BUDGET,	/* auto, none or a size (long long) */
	HS_THREADS,	/* auto or 1..HPN_MT_THREADS_MAX */
	HS_IGNORED	/* HPN-SSH's, not implemented here */
};

struct hpn_sopt {
	const char *name;	/* as -T prints it */
	enum hpn_stype type;
	size_t off;		/* in ServerOptions; unused for HS_IGNORED */
	int match;		/* allowed in Match (copied by Match) */
	long long def;		/* the default */
};

#define O(f)	offsetof(ServerOptions, f)
static const struct hpn_sopt sopts[] = {
	{ "hpndisabled",	HS_FLAG,	O(hpn_disabled),	0, 0 },
	{ "tcprcvbufpoll",	HS_FLAG,	O(hpn_tcp_rcvbuf_poll),	0, 1 },
	{ "tcprcvbuf",		HS_BUFSIZE,	O(hpn_tcp_rcvbuf),	0, 0 },
	{ "hpnbuffersize",	HS_WINSIZE,	O(hpn_buffer_size),	0,
	    HPN_WINDOW_MAX_DEFAULT },
	{ "hpnbufferbudget",	HS_BUDGET,	O(hpn_buffer_budget),	0,
	    HPN_BUDGET_AUTO },
	{ "noneenabled",	HS_FLAG,	O(hpn_none_enabled),	1, 0 },
	{ "nonemacenabled",	HS_FLAG,	O(hpn_none_mac_enabled), 1, 0 },
	{ "disablemtaes",	HS_FLAG,	O(hpn_disable_mtaes),	0, 0 },
	{ "mtaesthreads",	HS_THREADS,	O(hpn_mtaes_threads),	0, 0 },
	{ "permitmetrics",	HS_FLAG,	O(hpn_permit_metrics),	1, 1 },
	{ "usemptcp",		HS_FLAG,	O(hpn_use_mptcp),	0, 0 },
	/* HPN-SSH's metrics options: accepted, ignored (debug says so) */
	{ "metrics",		HS_IGNORED,	0,			0, 0 },
	{ "metricsinterval",	HS_IGNORED,	0,			0, 0 },
	{ "metricspath",	HS_IGNORED,	0,			0, 0 },
};
#undef O

static int *
ival(ServerOptions *o, const struct hpn_sopt *s)
{
	return (int *)((char *)o + s->off);
}

static long long *
llval(ServerOptions *o, const struct hpn_sopt *s)
{
	return (long long *)((char *)o + s->off);
}

static long long
get(ServerOptions *o, const struct hpn_sopt *s)
{
	return s->type == HS_BUDGET ? *llval(o, s) : *ival(o, s);
}

static void
set(ServerOptions *o, const struct hpn_sopt *s, long long v)
{
	if (s->type == HS_BUDGET)
		*llval(o, s) = v;
	else
		*ival(o, s) = (int)v;
}

void
hpn_servconf_init(ServerOptions *o)
{
	size_t i;

	for (i = 0; i < sizeof(sopts) / sizeof(sopts[0]); i++)
		if (sopts[i].type != HS_IGNORED)
			set(o, &sopts[i], -1);
}

void
hpn_servconf_fill(ServerOptions *o)
{
	size_t i;

	for (i = 0; i < sizeof(sopts) / sizeof(sopts[0]); i++)
		if (sopts[i].type != HS_IGNORED && get(o, &sopts[i]) == -1)
			set(o, &sopts[i], sopts[i].def);
}

/* Match: what a matching block set replaces the global value. */
void
hpn_servconf_copy(ServerOptions *dst, ServerOptions *src)
{
	size_t i;

	for (i = 0; i < sizeof(sopts) / sizeof(sopts[0]); i++)
		if (sopts[i].match && get(src, &sopts[i]) != -1)
			set(dst, &sopts[i], get(src, &sopts[i]));
}

/* The value of one option's argument; fatal when it is not one. */
static long long
value(const struct hpn_sopt *s, const char *arg, const char *keyword,
    const char *filename, int linenum)
{
	const char *errstr;
	long long v;
	u_int size, max;

	if (arg == NULL || *arg == '\0')
		fatal("%s line %d: %s missing argument.", filename, linenum,
		    keyword);
	switch (s->type) {
	case HS_FLAG:
		if (strcasecmp(arg, "yes") == 0)
			return 1;
		if (strcasecmp(arg, "no") == 0)
			return 0;
		fatal("%s line %d: unsupported option \"%s\".", filename,
		    linenum, arg);
	case HS_BUFSIZE:
	case HS_WINSIZE:
		max = s->type == HS_BUFSIZE ?
		    HPN_RCVBUF_LIMIT : HPN_WINDOW_MAX_LIMIT;
		if (hpn_parse_size(arg, 1024, max, &size) != 0 ||
		    (size == 0 && s->type == HS_WINSIZE))
			fatal("%s line %d: Bad %s '%s': KiB, or a size with "
			    "a K, M or G suffix, from 1K to %uM.", filename,
			    linenum, keyword, arg, max / (1024 * 1024));
		return size;
	case HS_BUDGET:
		if (hpn_parse_budget(arg, &v) != 0)
			fatal("%s line %d: Bad %s '%s': auto, none, or a size "
			    "(KiB, or with a K, M, G or T suffix) of at least "
			    "16M.", filename, linenum, keyword, arg);
		return v;
	case HS_THREADS:
		if (strcmp(arg, "auto") == 0)
			return 0;
		v = strtonum(arg, 1, HPN_MT_THREADS_MAX, &errstr);
		if (errstr != NULL)
			fatal("%s line %d: Bad %s '%s': auto, or 1 to %d "
			    "worker threads.", filename, linenum, keyword, arg,
			    HPN_MT_THREADS_MAX);
		return v;
	case HS_IGNORED:
		break;
	}
	return 0;
}

/*
 * One line of sshd_config (or -o) whose keyword is ours: returns 0 when
 * it is taken, -1 on an error servconf.c counts as a bad option, and
 * HPN_SERVCONF_OTHER for a keyword that is not ours.  activep and
 * connectinfo as process_server_config_line_depth() has them.
 */
int
hpn_servconf_line(ServerOptions *o, const char *keyword, const char *str,
    const char *filename, int linenum, int *activep, const void *connectinfo)
{
	const struct hpn_sopt *s = NULL;
	char **oav = NULL, **av, *arg;
	int oac = 0, ac, cmdline = 1, ret = -1;
	long long v;
	size_t i;

	for (i = 0; i < sizeof(sopts) / sizeof(sopts[0]); i++) {
		if (strcasecmp(keyword, sopts[i].name) == 0) {
			s = &sopts[i];
			break;
		}
	}
	if (s == NULL)
		return HPN_SERVCONF_OTHER;
	if (activep == NULL)		/* a command line directive */
		activep = &cmdline;
	if (*activep == 0 && !s->match) {
		if (connectinfo == NULL)
			fatal("%s line %d: Directive '%s' is not allowed "
			    "within a Match block", filename, linenum, keyword);
		return 0;	/* processed already, outside the block */
	}
	if (argv_split(str, &oac, &oav, 1) != 0) {
		error("%s line %d: invalid quotes", filename, linenum);
		return -1;
	}
	ac = oac;
	av = oav;
	if (*activep)
		debug3("%s:%d setting %s %s", filename, linenum, keyword, str);
	if (s->type == HS_IGNORED) {
		debug("%s line %d: HPN-SSH option \"%s\" is not supported; "
		    "ignored", filename, linenum, keyword);
		argv_consume(&ac);
	} else {
		arg = argv_next(&ac, &av);
		v = value(s, arg, keyword, filename, linenum);
		if (*activep && get(o, s) == -1)
			set(o, s, v);
	}
	if (ac > 0) {
		error("%.200s line %d: keyword %s extra arguments "
		    "at end of line", filename, linenum, keyword);
		goto out;
	}
	ret = 0;
 out:
	argv_free(oav, oac);
	return ret;
}

/* sshd -T */
void
hpn_servconf_dump(ServerOptions *o)
{
	const struct hpn_sopt *s;
	size_t i;
	long long v;

	for (i = 0; i < sizeof(sopts) / sizeof(sopts[0]); i++) {
		s = &sopts[i];
		v = get(o, s);
		switch (s->type) {
		case HS_FLAG:
			printf("%s %s\n", s->name, v == -1 ? "unset" :
			    v == 1 ? "yes" : v == 0 ? "no" : "UNKNOWN");
			break;
		case HS_BUFSIZE:
		case HS_WINSIZE:
			printf("%s %lld\n", s->name, v / 1024);	/* KiB */
			break;
		case HS_BUDGET:
			hpn_budget_dump(s->name, v);
			break;
		case HS_THREADS:
			if (v == 0)
				printf("%s auto\n", s->name);
			else
				printf("%s %lld\n", s->name, v);
			break;
		case HS_IGNORED:
			break;
		}
	}
}
