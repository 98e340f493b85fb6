/*
 * HPN patch set: the transfer engine's progress meter (src/xfer/).
 *
 * Owns: the one line of progress a run draws (upstream's look: the file
 * in progress, the bytes done and to do, the rate, the time left), at
 * most once a second and only in the foreground.
 * Calls: nothing of ours (it reads struct xrun).
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/time.h>

#include <errno.h>
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
#include "misc.h"
#include "atomicio.h"
#include "utf8.h"

#include "sftp.h"
#include "sftp-common.h"
#include "sftp-client.h"

#include "hpn.h"
#include "xfer.h"

extern int showprogress;

static int
can_output(void)
{
	return getpgrp() == tcgetpgrp(STDOUT_FILENO);
}

static const char *
fmt_size(char *buf, size_t len, u_int64_t bytes, int rate)
{
	static const char unit[] = " KMGT";
	int i;

	if (rate) {
		bytes *= 100;
		for (i = 0; bytes >= 100 * 1000 && unit[i] != 'T'; i++)
			bytes = (bytes + 512) / 1024;
		if (i == 0) {
			i++;
			bytes = (bytes + 512) / 1024;
		}
		snprintf(buf, len, "%3llu.%1llu%cB",
		    (unsigned long long)(bytes + 5) / 100,
		    (unsigned long long)(bytes + 5) / 10 % 10, unit[i]);
	} else {
		for (i = 0; bytes >= 10000 && unit[i] != 'T'; i++)
			bytes = (bytes + 512) / 1024;
		snprintf(buf, len, "%4llu%c%s", (unsigned long long)bytes,
		    unit[i], i ? "B" : " ");
	}
	return buf;
}

void
meter_draw(struct xrun *x, int final)
{
	struct winsize ws;
	char sz[32], rt[32], *line = NULL, *name = NULL, *out = NULL;
	double now = monotime_double(), el, r;
	int cols = 80, flen, w, pct, secs;

	if (!x->meter || !can_output())
		return;
	if (!final && now - x->last < 1.0)
		return;
	el = now - x->last;
	if (el > 0 && !final) {
		r = (x->done_bytes - x->last_bytes) / el;
		x->rate = x->rate == 0 ? r : x->rate * 0.9 + r * 0.1;
	}
	if (final && now > x->start)
		x->rate = (x->done_bytes - x->kept_bytes) / (now - x->start);
	x->last = now;
	x->last_bytes = x->done_bytes;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != -1 && ws.ws_col != 0)
		cols = MINIMUM(ws.ws_col, 512);
	pct = x->total_bytes == 0 ? 100 :
	    (int)((double)x->done_bytes / x->total_bytes * 100);
	if (pct > 100)
		pct = 100;
	if (x->files_total <= 1)
		xasprintf(&name, "%s", x->curname);
	else if (final)
		xasprintf(&name, "%u files", x->files_done);
	else
		xasprintf(&name, "%s (%u/%u)", x->curname, x->files_done,
		    x->files_total);
	flen = w = MAXIMUM(cols - 36, 8);
	asmprintf(&line, INT_MAX, &w, "%-*s", flen, name);
	if (w < flen)
		xextendf(&line, NULL, "%*s", flen - w, "");
	secs = (int)(now - x->start);
	xextendf(&line, NULL, " %3d%% %s %s/s  %02d:%02d", pct,
	    fmt_size(sz, sizeof(sz), x->done_bytes, 0),
	    fmt_size(rt, sizeof(rt), (u_int64_t)x->rate, 1),
	    secs / 60, secs % 60);
	w = cols - 1;
	asmprintf(&out, INT_MAX, &w, " %s", line);
	if (out != NULL) {
		*out = '\r';	/* asmprintf() would escape it */
		atomicio(vwrite, STDOUT_FILENO, out, strlen(out));
		if (final)
			atomicio(vwrite, STDOUT_FILENO, "\n", 1);
	}
	x->drawn = 1;
	free(name);
	free(line);
	free(out);
}

/* The meter names this file (the one last started). */
void
meter_file(struct xrun *x, struct xfile *f)
{
	const char *base = strrchr(f->src, '/');

	base = base != NULL && base[1] != '\0' ? base + 1 : f->src;
	strlcpy(x->curname, base, sizeof(x->curname));
}
