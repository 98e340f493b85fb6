/*
 * HPN patch set: a memory budget for channel windows, shared by the
 * processes of one hpnsshd (its sessions) or of one hpnscp -n run (its
 * connections).  README.hpn section 4.
 *
 * A window is a promise to hold that much of a channel's data until its
 * reader takes it: when readers stall, every grown window may fill.  So
 * a window's growth past the stock size (HPN_WINDOW_GROW_MIN, what
 * stock OpenSSH promises anyway) is taken from a budget, HPNBufferBudget
 * bytes in all (by default a quarter of the machine's memory), and given
 * back when the channel is freed: a window grows only by what is left, and
 * the first time the budget stops one, -v (hpnssh) and the log (hpnsshd)
 * say so.  A window keeps what it was given, but for what it gives back
 * when it is held down to a full path's rate (hpn-window.c).
 *
 * Shared: the process that starts the others (hpnsshd's listener; hpnscp
 * before it runs its connections) makes an anonymous shared segment
 * (memfd_create()) and hands its descriptor on across exec
 * (hpn_budget_pass(): a fixed descriptor number and HPN_BUDGET_ENV naming
 * it); each process maps it (hpn_budget_attach()) and takes a slot in it,
 * its pid and what it holds.  One that dies without giving back (a
 * crash, SIGKILL) is given back for by the process that reaps it
 * (hpn_budget_reaped()): hpnsshd's listener reaps its sessions.  A
 * session's privilege-separated child inherits the mapping and the slot.
 * Without a segment (sshd -i, -d; ssh alone; a system without memfd) a
 * process keeps its own budget of the same size.
 *
 * The segment is a few KiB; its counters are C11 atomics (lock-free on
 * the systems memfd exists on), updated with compare-and-swap so that
 * used never passes the limit.
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "misc.h"
#include "hpn.h"

#define BUDGET_MAGIC	0x48504e4275646731ULL	/* "HPNBudg1" */
#define BUDGET_SLOTS	1024

struct budget_slot {
	_Atomic pid_t pid;		/* 0: free */
	_Atomic u_int64_t held;
};

struct budget_shm {
	u_int64_t magic;
	_Atomic u_int64_t limit;	/* bytes; 0: not set yet (lanes) */
	_Atomic u_int64_t used;
	struct budget_slot slot[BUDGET_SLOTS];
};

static struct {
	struct budget_shm *shm;	/* the shared one, or &own */
	struct budget_shm own;	/* this process's alone */
	int	fd;		/* creator: the segment's descriptor */
	struct budget_slot *slot; /* ours in shm (NULL: none left) */
	u_int64_t want_limit;	/* HPNBufferBudget, resolved; 0: none */
	int	configured;
	int	server;		/* hpnsshd: its log says what limits */
	int	noted;		/* "the budget limits" said once */
} bud = { NULL, { 0 }, -1, NULL, 0, 0, 0, 0 };

/* "auto": a quarter of the machine's memory (1 GiB when unknown). */
u_int64_t
hpn_budget_auto(void)
{
	long pages = -1, psize = -1;

#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
	pages = sysconf(_SC_PHYS_PAGES);
	psize = sysconf(_SC_PAGESIZE);
#endif
	if (pages <= 0 || psize <= 0)
		return 1024ULL * 1024 * 1024;
	return (u_int64_t)pages * (u_int64_t)psize / 4;
}

/*
 * HPNBufferBudget's value: "auto", "none", or a size (KiB, or with a K,
 * M, G or T suffix) of at least HPN_BUDGET_MIN.  Sets *vp to
 * HPN_BUDGET_AUTO, 0 (none) or bytes; -1 when arg is none of these.
 */
int
hpn_parse_budget(const char *arg, long long *vp)
{
	long long v;

	if (arg != NULL && strcmp(arg, "auto") == 0) {
		*vp = HPN_BUDGET_AUTO;
		return 0;
	}
	if (arg != NULL && strcmp(arg, "none") == 0) {
		*vp = 0;
		return 0;
	}
	if (hpn_parse_bytes(arg, &v) != 0 || v < HPN_BUDGET_MIN)
		return -1;
	*vp = v;
	return 0;
}

/* The option's value in bytes: 0 for none. */
static u_int64_t
resolve(long long v)
{
	if (v == HPN_BUDGET_AUTO || v < 0)
		return hpn_budget_auto();
	return (u_int64_t)v;
}

/* -G/-T: "auto", "none" or KiB. */
void
hpn_budget_dump(const char *name, long long v)
{
	if (v == HPN_BUDGET_AUTO || v < 0)
		printf("%s auto\n", name);
	else if (v == 0)
		printf("%s none\n", name);
	else
		printf("%s %lld\n", name, v / 1024);
}

/* This process's slot in the shared segment (the first free one). */
static void
take_slot(void)
{
	pid_t none, me = getpid();
	u_int i;

	for (i = 0; i < BUDGET_SLOTS; i++) {
		none = 0;
		if (atomic_compare_exchange_strong(&bud.shm->slot[i].pid,
		    &none, me)) {
			atomic_store(&bud.shm->slot[i].held, 0);
			bud.slot = &bud.shm->slot[i];
			return;
		}
	}
	debug_f("no slot left in the shared budget: windows stay at the "
	    "stock size");
}

/*
 * hpnsshd's listener, hpnscp (lanes.c): make the shared segment for the
 * processes it will start, with limit (the option's value; 0: none).
 * deferred (hpnscp, which reads no ssh_config): the first connection to
 * attach sets it from its own HPNBufferBudget.
 */
void
hpn_budget_create(long long limit, int deferred)
{
	struct budget_shm *shm;
	int fd = -1;

	if (limit == 0 || bud.fd != -1)
		return;
#if defined(__linux__) && defined(MFD_CLOEXEC)
	fd = memfd_create("hpn-budget", MFD_CLOEXEC);
#else
	errno = ENOSYS;
#endif
	if (fd == -1) {
		debug_f("no shared budget (%s): each process keeps its own",
		    strerror(errno));
		return;
	}
	if (ftruncate(fd, sizeof(*shm)) == -1 ||
	    (shm = mmap(NULL, sizeof(*shm), PROT_READ|PROT_WRITE,
	    MAP_SHARED, fd, 0)) == MAP_FAILED) {
		debug_f("shared budget: %s", strerror(errno));
		close(fd);
		return;
	}
	shm->magic = BUDGET_MAGIC;
	atomic_store(&shm->limit, deferred ? 0 : resolve(limit));
	bud.shm = shm;
	bud.fd = fd;
	debug_f("shared budget of %llu bytes for channel windows",
	    (unsigned long long)atomic_load(&shm->limit));
}

/*
 * In a child about to exec a process of ours: the segment's descriptor
 * at fd, named in the environment; returns the first descriptor after
 * what must stay open (fd + 1, or fd when there is no segment).
 */
int
hpn_budget_pass(int fd)
{
	char v[16];

	if (bud.fd == -1)
		return fd;
	if (fd == -1)		/* where it is: nothing closed after it */
		fd = bud.fd;
	if (bud.fd != fd) {
		if (dup2(bud.fd, fd) == -1) {
			debug_f("dup2: %s", strerror(errno));
			return fd;
		}
		bud.fd = fd;	/* this child's: the old one may be closed */
	}
	(void)fcntl(fd, F_SETFD, 0);
	snprintf(v, sizeof(v), "%d", fd);
	if (setenv(HPN_BUDGET_ENV, v, 1) == -1)
		return fd;
	return fd + 1;
}

/*
 * A process of ours started by the creator: map the segment its
 * descriptor names (HPN_BUDGET_ENV), take a slot; the descriptor is
 * closed and the name taken out of the environment (what we run next
 * must not see them).  Nothing to do without it.
 */
void
hpn_budget_attach(void)
{
	const char *cp = getenv(HPN_BUDGET_ENV);
	struct budget_shm *shm;
	struct stat st;
	const char *errstr = NULL;
	int fd;

	if (cp == NULL || bud.shm != NULL)
		return;
	fd = (int)strtonum(cp, STDERR_FILENO + 1, 1024, &errstr);
	(void)unsetenv(HPN_BUDGET_ENV);
	if (errstr != NULL) {
		debug_f("%s=%s: %s", HPN_BUDGET_ENV, cp, errstr);
		return;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size != (off_t)sizeof(*shm) ||
	    (shm = mmap(NULL, sizeof(*shm), PROT_READ|PROT_WRITE,
	    MAP_SHARED, fd, 0)) == MAP_FAILED) {
		debug_f("descriptor %d is no budget segment", fd);
		return;
	}
	close(fd);
	if (shm->magic != BUDGET_MAGIC) {
		munmap(shm, sizeof(*shm));
		debug_f("descriptor %d is no budget segment", fd);
		return;
	}
	bud.shm = shm;
	take_slot();
}

/*
 * ssh.c, sshd-session.c, the connection set up: this process's
 * HPNBufferBudget (server: hpnsshd's).  The limit of its own budget when it
 * has no shared one, and of a shared one not set yet (hpnscp's: the first
 * connection sets it).  A client attaches to hpnscp's segment here.
 */
void
hpn_budget_configure(long long v, int server)
{
	u_int64_t none = 0;

	hpn_budget_attach();
	bud.configured = 1;
	bud.server = server;
	bud.want_limit = v == 0 ? 0 : resolve(v);
	if (bud.shm == NULL) {
		bud.shm = &bud.own;
		bud.own.magic = BUDGET_MAGIC;
		atomic_store(&bud.own.limit, bud.want_limit);
		bud.slot = &bud.own.slot[0];
		return;
	}
	if (bud.want_limit != 0)
		(void)atomic_compare_exchange_strong(&bud.shm->limit, &none,
		    bud.want_limit);
}

/*
 * hpn-window.c: a window would grow by want bytes past the stock size:
 * what of it the budget gives (all of it without a budget).
 */
u_int
hpn_budget_take(u_int want)
{
	u_int64_t used, limit, give;

	if (!bud.configured || bud.shm == NULL || want == 0 ||
	    (limit = atomic_load(&bud.shm->limit)) == 0)
		return want;	/* none */
	if (bud.slot == NULL)
		return 0;
	used = atomic_load(&bud.shm->used);
	do {
		give = used >= limit ? 0 : MINIMUM(want, limit - used);
		if (give == 0)
			break;
	} while (!atomic_compare_exchange_weak(&bud.shm->used, &used,
	    used + give));
	if (give > 0)
		atomic_fetch_add(&bud.slot->held, give);
	if (give < want && !bud.noted) {
		bud.noted = 1;
		/* once a process: the server's log, the client's -v */
		do_log2(bud.server ? SYSLOG_LEVEL_INFO : SYSLOG_LEVEL_VERBOSE,
		    "HPNBufferBudget: %llu of %llu bytes are held by channel "
		    "windows; this window grows no further than %u bytes more",
		    (unsigned long long)used, (unsigned long long)limit,
		    (u_int)give);
	}
	return (u_int)give;
}

/* A channel's window, given back (n bytes past the stock size). */
void
hpn_budget_give(u_int n)
{
	u_int64_t held;

	if (!bud.configured || bud.shm == NULL || bud.slot == NULL ||
	    n == 0 || atomic_load(&bud.shm->limit) == 0)
		return;
	/* never more than the slot holds (the reaper may have taken it) */
	held = atomic_load(&bud.slot->held);
	do {
		if (held == 0)
			return;
		n = MINIMUM(n, held);
	} while (!atomic_compare_exchange_weak(&bud.slot->held, &held,
	    held - n));
	atomic_fetch_sub(&bud.shm->used, n);
}

/* Slot i's process is gone: what it held goes back, the slot is free. */
static void
slot_free(u_int i)
{
	u_int64_t held;
	pid_t pid = atomic_load(&bud.shm->slot[i].pid);

	held = atomic_exchange(&bud.shm->slot[i].held, 0);
	atomic_fetch_sub(&bud.shm->used, held);
	atomic_store(&bud.shm->slot[i].pid, 0);
	if (held > 0)
		debug_f("process %ld gave back %llu bytes", (long)pid,
		    (unsigned long long)held);
}

/*
 * The creator reaped process pid: what it held goes back, its slot is
 * free.  So do the slots of processes that are gone though the creator
 * reaped no process of theirs: one started by a child of the creator's,
 * not by the creator itself (a wrapper named by SshdSessionPath that
 * runs sshd-session as its child; a privilege-separated child that
 * outlived its monitor), which nobody here reaps.
 */
void
hpn_budget_reaped(pid_t pid)
{
	pid_t p;
	u_int i;

	if (bud.fd == -1 || bud.shm == NULL || pid <= 0)
		return;
	for (i = 0; i < BUDGET_SLOTS; i++) {
		if ((p = atomic_load(&bud.shm->slot[i].pid)) == 0)
			continue;
		if (p == pid || (kill(p, 0) == -1 && errno == ESRCH))
			slot_free(i);
	}
}

/* Tests and -v: bytes held in all, and the limit (0: none). */
void
hpn_budget_state(u_int64_t *used, u_int64_t *limit)
{
	*used = bud.shm == NULL ? 0 : atomic_load(&bud.shm->used);
	*limit = bud.shm == NULL ? 0 : atomic_load(&bud.shm->limit);
}
