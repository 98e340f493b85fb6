/*
 * meter - the benchmark's measuring helper (see README.md).
 *
 *	meter recv -o FILE -t TIMES
 *	    Copy stdin to FILE (e.g. /dev/null or a file on tmpfs), noting
 *	    when the first and the last byte arrived.  TIMES gets one line:
 *	    "first_ns last_ns bytes user_s sys_s" (CLOCK_REALTIME; the CPU
 *	    seconds are meter's own, so that the caller can subtract them).
 *
 *	meter watch FILE SIZE TIMEOUT_S TIMES
 *	    Poll FILE's size every 2 ms until it reaches SIZE bytes (or the
 *	    timeout, or SIGTERM), then write "first_ns last_ns size" to TIMES:
 *	    when the size was first seen above 0, and when it reached SIZE
 *	    (0 if it never did).  With METER_SERIES=PATH in the environment,
 *	    PATH also gets "ns size" every 100 ms while the size grows (a
 *	    time series of the transfer: make bench-bigbdp TIMESERIES=1).
 *
 *	meter watchtree DIR SIZE TIMEOUT_S TIMES
 *	    The same for a tree (the regular files under DIR, symbolic links
 *	    not followed), at less cost: their sizes are summed every 5 ms
 *	    only until the first byte is seen; at the end (SIGTERM, the
 *	    timeout, or SIZE bytes found at once) the last byte is the latest
 *	    change time (ctime) of any of them, when that is past the first
 *	    byte and the sizes add up to SIZE (0 otherwise).  ctime, not
 *	    mtime: rsync -a and -p set mtimes back.
 *
 *	meter run OUT -- CMD [ARG...]
 *	    Run CMD as a child subreaper: every descendant, also one orphaned
 *	    by its parent, is reaped here, so that their CPU time and peak
 *	    RSS land in getrusage(RUSAGE_CHILDREN).  SIGTERM, SIGINT and
 *	    SIGHUP are passed on to CMD.  When the last descendant is gone,
 *	    OUT gets "start_ns end_ns status user_s sys_s maxrss_kb" (status:
 *	    CMD's exit code, or 128+signal) and meter exits with that status.
 *	    File descriptors are passed through untouched (sshd hands
 *	    sshd-session its socket and config that way).
 *
 *	meter relay -l ADDR PORT | meter relay ADDR PORT
 *	    The cost of the pipeline around ssh without ssh: with -l, accept
 *	    one TCP connection on ADDR:PORT (IPv4, a 30 s limit) and copy it
 *	    to stdout; without, connect to ADDR:PORT and copy stdin to it.
 *	    256 KiB reads and writes, no framing, no cipher.
 *
 *	meter run -T THREADS OUT -- CMD [ARG...]
 *	    The same, and every 20 ms the CPU time of each thread of every
 *	    descendant is read from /proc; THREADS gets one line per process
 *	    seen: "pid comm main_s others_s", the CPU seconds of its main
 *	    thread and of all its other threads (worker threads that ended
 *	    early are counted as last seen).  A direct child is read once
 *	    more as a zombie, so its figures are final; a deeper descendant's
 *	    are at most 20 ms old.
 *
 * Linux only (PR_SET_CHILD_SUBREAPER).
 */

#define _GNU_SOURCE

#include <sys/prctl.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <dirent.h>
#include <ctype.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t got_signal;
static volatile pid_t child_pid = -1;

static void
usage(void)
{
	fprintf(stderr, "usage: meter recv -o FILE -t TIMES\n"
	    "       meter watch FILE SIZE TIMEOUT_S TIMES\n"
	    "       meter watchtree DIR SIZE TIMEOUT_S TIMES\n"
	    "       meter relay [-l] ADDR PORT\n"
	    "       meter run [-T THREADS] OUT -- CMD [ARG...]\n");
	exit(2);
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static double
tv_s(struct timeval tv)
{
	return tv.tv_sec + tv.tv_usec / 1e6;
}

/* Write TEXT to PATH through a temporary file, so readers never see half. */
static int
write_result(const char *path, const char *text)
{
	char tmp[4096];
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -1;
	if ((f = fopen(tmp, "w")) == NULL) {
		fprintf(stderr, "meter: %s: %s\n", tmp, strerror(errno));
		return -1;
	}
	fputs(text, f);
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		fprintf(stderr, "meter: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* What copy_fd saw: when the first and the last data arrived, how much. */
struct copied {
	uint64_t first, last, bytes;
};

/*
 * Copy in to out until EOF, 256 KiB at a time; note arrivals in *cp if
 * not NULL.  0 on success; -1 with errno set and *failed "read" or
 * "write" on error.
 */
static int
copy_fd(int in, int out, struct copied *cp, const char **failed)
{
	static char buf[256 * 1024];
	ssize_t n, w, off;

	for (;;) {
		n = read(in, buf, sizeof(buf));
		if (n == 0)
			return 0;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			*failed = "read";
			return -1;
		}
		if (cp != NULL) {
			cp->last = now_ns();
			if (cp->first == 0)
				cp->first = cp->last;
			cp->bytes += (uint64_t)n;
		}
		for (off = 0; off < n; off += w) {
			w = write(out, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR) {
				w = 0;
				continue;
			}
			if (w <= 0) {
				if (w == 0)
					errno = EIO;
				*failed = "write";
				return -1;
			}
		}
	}
}

static int
cmd_recv(int argc, char **argv)
{
	const char *out = NULL, *times = NULL, *failed;
	struct copied cp = { 0, 0, 0 };
	struct rusage ru;
	char line[256];
	int ch, fd;

	while ((ch = getopt(argc, argv, "o:t:")) != -1) {
		switch (ch) {
		case 'o': out = optarg; break;
		case 't': times = optarg; break;
		default: usage();
		}
	}
	if (out == NULL || times == NULL)
		usage();
	if ((fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644)) == -1) {
		fprintf(stderr, "meter: %s: %s\n", out, strerror(errno));
		return 1;
	}
	if (copy_fd(STDIN_FILENO, fd, &cp, &failed) != 0) {
		if (strcmp(failed, "read") == 0)
			fprintf(stderr, "meter: read: %s\n", strerror(errno));
		else
			fprintf(stderr, "meter: write %s: %s\n", out,
			    strerror(errno));
		return 1;
	}
	if (close(fd) != 0) {
		fprintf(stderr, "meter: close %s: %s\n", out, strerror(errno));
		return 1;
	}
	getrusage(RUSAGE_SELF, &ru);
	snprintf(line, sizeof(line), "%llu %llu %llu %.3f %.3f\n",
	    (unsigned long long)cp.first, (unsigned long long)cp.last,
	    (unsigned long long)cp.bytes, tv_s(ru.ru_utime), tv_s(ru.ru_stime));
	return write_result(times, line) == 0 ? 0 : 1;
}

static void
on_term(int sig)
{
	got_signal = sig;
}

static int
cmd_watch(int argc, char **argv)
{
	struct timespec tick = { 0, 2000000 };	/* 2 ms */
	struct sigaction sa;
	struct stat st;
	uint64_t first = 0, done = 0, deadline, next = 0;
	long long size, seen = 0;
	char line[256], *end;
	const char *spath;
	FILE *series = NULL;
	double timeout;

	if (argc != 5)
		usage();
	size = strtoll(argv[2], &end, 10);
	if (*end != '\0' || size <= 0)
		usage();
	timeout = strtod(argv[3], &end);
	if (*end != '\0' || timeout <= 0)
		usage();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if ((spath = getenv("METER_SERIES")) != NULL && *spath != '\0' &&
	    (series = fopen(spath, "w")) == NULL) {
		fprintf(stderr, "meter: %s: %s\n", spath, strerror(errno));
		return 1;
	}
	deadline = now_ns() + (uint64_t)(timeout * 1e9);
	while (!got_signal && now_ns() < deadline) {
		if (stat(argv[1], &st) == 0 && st.st_size > 0) {
			seen = st.st_size;
			if (first == 0)
				first = now_ns();
			if (series != NULL && (now_ns() >= next ||
			    st.st_size >= size)) {
				fprintf(series, "%llu %lld\n",
				    (unsigned long long)now_ns(),
				    (long long)st.st_size);
				next = now_ns() + 100000000ULL;
			}
			if (st.st_size >= size) {
				done = now_ns();
				break;
			}
		}
		nanosleep(&tick, NULL);
	}
	if (series != NULL && fclose(series) != 0) {
		fprintf(stderr, "meter: %s: %s\n", spath, strerror(errno));
		return 1;
	}
	snprintf(line, sizeof(line), "%llu %llu %lld\n",
	    (unsigned long long)first, (unsigned long long)done, seen);
	return write_result(argv[4], line) == 0 ? 0 : 1;
}

/* The sizes of the regular files under dir (at most 64 levels), and
 * their latest ctime (ns) in *latest. */
static long long
tree_bytes(int dirfd, int depth, uint64_t *latest)
{
	DIR *d;
	struct dirent *de;
	struct stat st;
	long long n = 0;
	int fd;

	if (depth > 64 || (d = fdopendir(dirfd)) == NULL) {
		close(dirfd);
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (S_ISREG(st.st_mode)) {
			uint64_t ct = (uint64_t)st.st_ctim.tv_sec * 1000000000ULL +
			    (uint64_t)st.st_ctim.tv_nsec;

			n += st.st_size;
			if (latest != NULL && ct > *latest)
				*latest = ct;
		} else if (S_ISDIR(st.st_mode) && (fd = openat(dirfd,
		    de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)) != -1)
			n += tree_bytes(fd, depth + 1, latest);
	}
	closedir(d);
	return n;
}

static int
cmd_watchtree(int argc, char **argv)
{
	struct timespec tick = { 0, 5000000 };	/* 5 ms */
	struct sigaction sa;
	uint64_t first = 0, done = 0, deadline;
	long long size, seen = 0, n;
	char line[256], *end;
	double timeout;
	int fd;

	if (argc != 5)
		usage();
	size = strtoll(argv[2], &end, 10);
	if (*end != '\0' || size <= 0)
		usage();
	timeout = strtod(argv[3], &end);
	if (*end != '\0' || timeout <= 0)
		usage();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	deadline = now_ns() + (uint64_t)(timeout * 1e9);
	/* until the first byte */
	while (!got_signal && now_ns() < deadline) {
		if ((fd = open(argv[1], O_RDONLY | O_DIRECTORY)) != -1 &&
		    (n = tree_bytes(fd, 0, NULL)) > 0) {
			seen = n;
			first = now_ns();
			break;
		}
		nanosleep(&tick, NULL);
	}
	/* then idle until told the transfer ended */
	tick.tv_nsec = 50000000;
	while (first != 0 && seen < size && !got_signal && now_ns() < deadline)
		nanosleep(&tick, NULL);
	if (first != 0 && (fd = open(argv[1], O_RDONLY | O_DIRECTORY)) != -1) {
		uint64_t latest = 0;

		seen = tree_bytes(fd, 0, &latest);
		if (seen >= size && latest > first)
			done = latest;
	}
	snprintf(line, sizeof(line), "%llu %llu %lld\n",
	    (unsigned long long)first, (unsigned long long)done, seen);
	return write_result(argv[4], line) == 0 ? 0 : 1;
}

static void
forward(int sig)
{
	got_signal = sig;
	if (child_pid > 0)
		kill(child_pid, sig);
}

/* Per-thread CPU of all descendants, sampled from /proc (meter run -T). */
#define MAX_THREADS	8192
#define MAX_PROCS	1024

struct tsample {
	pid_t			 pid, tid;
	char			 comm[32];
	unsigned long long	 ticks;		/* utime + stime */
};
static struct tsample threads[MAX_THREADS];
static int nthreads;
static pid_t procs[MAX_PROCS];
static int nprocs;

/*
 * Parse a /proc stat line: comm into comm[], and the fields after it
 * (field 3 onwards) into f[0..nf-1].  Returns the number parsed.
 */
static int
parse_stat(const char *path, char *comm, size_t commlen,
    unsigned long long *f, int nf)
{
	char buf[1024], *lp, *rp, *p, *end;
	ssize_t n;
	int fd, i;

	if ((fd = open(path, O_RDONLY)) == -1)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if ((lp = strchr(buf, '(')) == NULL ||
	    (rp = strrchr(buf, ')')) == NULL || rp < lp)
		return -1;
	if (comm != NULL) {
		snprintf(comm, commlen, "%.*s", (int)(rp - lp - 1),
		    lp + 1);
	}
	p = rp + 2;		/* the state letter */
	if (*p == '\0')
		return -1;
	p++;
	for (i = 0; i < nf; i++) {
		f[i] = strtoull(p, &end, 10);
		if (end == p)
			break;
		p = end;
	}
	return i;
}

/* The processes whose parent chain leads to us. */
static void
find_procs(void)
{
	static pid_t pid[32768], ppid[32768];
	unsigned long long f[1];
	char path[300];
	struct dirent *de;
	DIR *d;
	int n = 0, i, changed;

	if ((d = opendir("/proc")) == NULL)
		return;
	while ((de = readdir(d)) != NULL && n < 32768) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		if (parse_stat(path, NULL, 0, f, 1) != 1)
			continue;
		pid[n] = (pid_t)atol(de->d_name);
		ppid[n++] = (pid_t)f[0];
	}
	closedir(d);
	nprocs = 0;
	procs[nprocs++] = getpid();
	do {
		changed = 0;
		for (i = 0; i < n && nprocs < MAX_PROCS; i++) {
			int j, known = 0, parent = 0;

			for (j = 0; j < nprocs; j++) {
				if (procs[j] == pid[i])
					known = 1;
				if (procs[j] == ppid[i])
					parent = 1;
			}
			if (!known && parent) {
				procs[nprocs++] = pid[i];
				changed = 1;
			}
		}
	} while (changed);
}

static void
sample_proc(pid_t p)
{
	unsigned long long f[13];
	char path[300], comm[32];
	struct dirent *de;
	DIR *d;
	pid_t tid;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)p);
	if (parse_stat(path, comm, sizeof(comm), f, 1) != 1)
		return;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)p);
	if ((d = opendir(path)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		tid = (pid_t)atol(de->d_name);
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat",
		    (int)p, (int)tid);
		/* fields 4..15: utime is f[10], stime f[11] */
		if (parse_stat(path, NULL, 0, f, 12) != 12)
			continue;
		for (i = 0; i < nthreads; i++)
			if (threads[i].tid == tid && threads[i].pid == p)
				break;
		if (i == nthreads) {
			if (nthreads == MAX_THREADS)
				continue;
			nthreads++;
			threads[i].pid = p;
			threads[i].tid = tid;
		}
		/* exec changes the name: keep the latest */
		snprintf(threads[i].comm, sizeof(threads[i].comm), "%s", comm);
		threads[i].ticks = f[10] + f[11];
	}
	closedir(d);
}

static void
sample_all(void)
{
	int i;

	for (i = 1; i < nprocs; i++)	/* not ourselves */
		sample_proc(procs[i]);
}

static int
write_threads(const char *path)
{
	static char text[MAX_THREADS * 64];
	double hz = (double)sysconf(_SC_CLK_TCK);
	size_t off = 0;
	int i, j, seen;

	for (i = 0; i < nthreads; i++) {
		unsigned long long main_t = 0, others = 0;
		const char *comm = "?";

		for (j = 0, seen = 0; j < i; j++)
			if (threads[j].pid == threads[i].pid)
				seen = 1;
		if (seen)
			continue;
		for (j = i; j < nthreads; j++) {
			if (threads[j].pid != threads[i].pid)
				continue;
			if (threads[j].tid == threads[j].pid) {
				main_t = threads[j].ticks;
				comm = threads[j].comm;
			} else
				others += threads[j].ticks;
		}
		if (off + 128 >= sizeof(text))
			break;
		off += snprintf(text + off, sizeof(text) - off,
		    "%d %s %.2f %.2f\n", (int)threads[i].pid, comm,
		    main_t / hz, others / hz);
	}
	return write_result(path, text);
}

static int
cmd_run(int argc, char **argv)
{
	struct sigaction sa;
	struct rusage ru;
	uint64_t start, end = 0;
	int status, code = 255;
	char line[256];
	const char *tout = NULL;
	pid_t pid;
	siginfo_t si;
	int iter = 0;

	if (argc >= 3 && strcmp(argv[1], "-T") == 0) {
		tout = argv[2];
		argc -= 2;
		argv += 2;
	}
	if (argc < 4 || strcmp(argv[2], "--") != 0)
		usage();
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
		fprintf(stderr, "meter: PR_SET_CHILD_SUBREAPER: %s\n",
		    strerror(errno));
		return 255;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward;
	sigemptyset(&sa.sa_mask);
	start = now_ns();
	if ((pid = fork()) == -1) {
		fprintf(stderr, "meter: fork: %s\n", strerror(errno));
		return 255;
	}
	if (pid == 0) {
		execvp(argv[3], argv + 3);
		fprintf(stderr, "meter: %s: %s\n", argv[3], strerror(errno));
		_exit(127);
	}
	child_pid = pid;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* Reap the child and every orphan that comes our way. */
	for (;;) {
		pid_t p;

		if (tout != NULL) {
			/* Sample until a child is a zombie, then once more. */
			memset(&si, 0, sizeof(si));
			if (waitid(P_ALL, 0, &si,
			    WEXITED | WNOHANG | WNOWAIT) == -1) {
				if (errno == EINTR)
					continue;
				break;		/* ECHILD */
			}
			if (si.si_pid == 0) {
				struct timespec ts = { 0, 20 * 1000 * 1000 };

				if (iter++ % 5 == 0)
					find_procs();
				sample_all();
				nanosleep(&ts, NULL);
				continue;
			}
			sample_proc(si.si_pid);
		}
		p = waitpid(-1, &status, 0);

		if (p == -1) {
			if (errno == EINTR)
				continue;
			break;		/* ECHILD: nobody left */
		}
		if (p == pid) {
			end = now_ns();
			child_pid = -1;
			if (WIFEXITED(status))
				code = WEXITSTATUS(status);
			else if (WIFSIGNALED(status))
				code = 128 + WTERMSIG(status);
		}
	}
	if (child_pid != -1)
		end = now_ns();
	getrusage(RUSAGE_CHILDREN, &ru);
	snprintf(line, sizeof(line), "%llu %llu %d %.3f %.3f %ld\n",
	    (unsigned long long)start, (unsigned long long)end, code,
	    tv_s(ru.ru_utime), tv_s(ru.ru_stime), ru.ru_maxrss);
	write_result(argv[1], line);
	if (tout != NULL)
		write_threads(tout);
	return code;
}

static int
cmd_relay(int argc, char **argv)
{
	struct sockaddr_in sin;
	struct pollfd pfd;
	int listen_mode = 0, s, c, one = 1;
	const char *failed;
	char *ep;
	long port;

	if (argc == 4 && strcmp(argv[1], "-l") == 0) {
		listen_mode = 1;
		argv++;
	} else if (argc != 3)
		usage();
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	port = strtol(argv[2], &ep, 10);
	if (inet_pton(AF_INET, argv[1], &sin.sin_addr) != 1 || *ep != '\0' ||
	    port < 1 || port > 65535) {
		fprintf(stderr, "meter relay: bad address or port\n");
		return 2;
	}
	sin.sin_port = htons((uint16_t)port);
	if ((s = socket(AF_INET, SOCK_STREAM, 0)) == -1) {
		fprintf(stderr, "meter relay: socket: %s\n", strerror(errno));
		return 1;
	}
	if (!listen_mode) {
		if (connect(s, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
			fprintf(stderr, "meter relay: connect: %s\n",
			    strerror(errno));
			return 1;
		}
		if (copy_fd(STDIN_FILENO, s, NULL, &failed) != 0) {
			fprintf(stderr, "meter relay: %s: %s\n", failed,
			    strerror(errno));
			return 1;
		}
		return close(s) == 0 ? 0 : 1;
	}
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(s, 1) == -1) {
		fprintf(stderr, "meter relay: listen: %s\n", strerror(errno));
		return 1;
	}
	pfd.fd = s;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 30 * 1000) != 1) {
		fprintf(stderr, "meter relay: no connection within 30 s\n");
		return 1;
	}
	if ((c = accept(s, NULL, NULL)) == -1) {
		fprintf(stderr, "meter relay: accept: %s\n", strerror(errno));
		return 1;
	}
	close(s);
	if (copy_fd(c, STDOUT_FILENO, NULL, &failed) != 0) {
		fprintf(stderr, "meter relay: %s: %s\n", failed,
		    strerror(errno));
		return 1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	if (strcmp(argv[1], "recv") == 0)
		return cmd_recv(argc - 1, argv + 1);
	if (strcmp(argv[1], "watch") == 0)
		return cmd_watch(argc - 1, argv + 1);
	if (strcmp(argv[1], "watchtree") == 0)
		return cmd_watchtree(argc - 1, argv + 1);
	if (strcmp(argv[1], "run") == 0)
		return cmd_run(argc - 1, argv + 1);
	if (strcmp(argv[1], "relay") == 0)
		return cmd_relay(argc - 1, argv + 1);
	usage();
	return 2;
}
