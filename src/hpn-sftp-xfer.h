/*
 * HPN patch set: the SFTP transfer engine (hpn-sftp-xfer.c), what the
 * hooks in sftp-client.c, sftp.c and scp.c call.  Client only: linked into
 * hpnscp and hpnsftp (HPN_SFTP_OBJS), never into the library.
 */
#ifndef HPN_SFTP_XFER_H
#define HPN_SFTP_XFER_H

struct sftp_conn;
struct sftp_limits;
struct Attrib;
struct hpn_sftp;
struct sshbuf;

/* A transfer hook's answer when upstream's own code is to do the work. */
#define HPN_SFTP_UPSTREAM	(-2)

/* A server's handle: at most this long (draft-ietf-secsh-filexfer-02 3). */
#define HPN_SFTP_HANDLE_MAX	256

/* scp, sftp, -n lanes: the ssh they run reads their pipe early, and
 * shares their memory budget */
void	hpn_xfer_ssh_child(void);

/* sftp_init: the requests that need no reply to INIT ride with it. */
struct hpn_sftp *hpn_sftp_attach(int, int, u_int *);
void	hpn_sftp_early_send(struct hpn_sftp *, int);
int	hpn_sftp_early_recv(struct hpn_sftp *, int, struct sftp_limits *);
void	hpn_sftp_settle(struct hpn_sftp *, u_int, u_int, u_int, u_int,
	    u_int64_t);
void	hpn_sftp_detach(struct hpn_sftp *);

/* scp: what it will ask first, asked for with INIT, and an upload's
 * first bytes (WRITEs naming its OPENs; replies read by upstream's code
 * before the engine runs are kept for it). */
#define HPN_SFTP_SPEC		(512 * 1024)	/* bytes */
#define HPN_SFTP_SPEC_WRITE	(32 * 1024)	/* per WRITE */
int	hpn_sftp_stash(struct hpn_sftp *, struct sshbuf *);
void	hpn_sftp_prefetch_get(const char *, int);
void	hpn_sftp_prefetch_put(const char *, const char *, int, int, int);
int	hpn_sftp_cached_stat(struct hpn_sftp *, const char *, int, int,
	    struct Attrib *, int *);
char	*hpn_sftp_cached_realpath(struct hpn_sftp *, const char *);

/* sftp -b: the first command read before connecting, a get's lookups. */
void	hpn_sftp_batch_peek(FILE *, int);
char	*hpn_sftp_batch_read(char *, int, FILE *);

/* sftp: what a get will ask about its source, in one round trip. */
void	hpn_sftp_lookahead(struct hpn_sftp *, const char *, int);
struct hpn_sftp *sftp_hpn(struct sftp_conn *);	/* in sftp-client.c */

/* Transfers: run at once, or at hpn_sftp_batch_end() inside a batch. */
int	hpn_sftp_get(struct sftp_conn *, struct hpn_sftp *, const char *,
	    const char *, struct Attrib *, int, int, int, int);
int	hpn_sftp_get_dir(struct sftp_conn *, struct hpn_sftp *, const char *,
	    const char *, struct Attrib *, int, int, int, int, int, int);
int	hpn_sftp_put(struct sftp_conn *, struct hpn_sftp *, const char *,
	    const char *, int, int, int, int);
int	hpn_sftp_put_dir(struct sftp_conn *, struct hpn_sftp *, const char *,
	    const char *, int, int, int, int, int, int);
void	hpn_sftp_batch_begin(void);
int	hpn_sftp_batch_end(void);

/* Verified resume (hpn-sftp-resume.c) and the plain requests it makes. */
#define HPN_RESUME_BY_SIZE	2	/* -ZZ, -aa: size-only append allowed */
int	hpn_sftp_resume_get(struct hpn_sftp *, const u_char *, size_t,
	    const char *, int, u_int64_t, int, off_t *);
int	hpn_sftp_resume_put(struct hpn_sftp *, int, const char *, u_int64_t,
	    int, u_int64_t *);
int	hpn_sftp_resume_plan_get(struct hpn_sftp *, const char *,
	    const char *, int, u_int64_t *);
int	hpn_sftp_resume_plan_put(struct hpn_sftp *, const char *,
	    const char *, int, u_int64_t *);
int	hpn_sftp_server_ext(struct hpn_sftp *, const char *, const char *);
int	hpn_sftp_can_hash(struct hpn_sftp *);
u_int	hpn_sftp_next_id(struct hpn_sftp *);
void	hpn_sftp_send(struct hpn_sftp *, struct sshbuf *);
void	hpn_sftp_recv(struct hpn_sftp *, struct sshbuf *);
int	hpn_sftp_open_read(struct hpn_sftp *, const char *, u_char **,
	    size_t *, u_int64_t *, u_int *);
void	hpn_sftp_close_handle(struct hpn_sftp *, const u_char *, size_t);

/* The checksums verified resume offers: ResumeHash (xfer/hashalg.c) */
void	hpn_sftp_hash_ssh(char * const *);
const char *hpn_sftp_hash_offer(void);
int	hpn_sftp_hash_offered(const char *);

/* -n N: more connections for the engine (hpn-sftp-lanes.c) */
#define HPN_LANES_MAX		64	/* -n at most */
/* (the fuzz harness's build makes them small: tests/fuzz/xfer_fuzz.c) */
#ifndef HPN_STRIPE_PART
#define HPN_STRIPE_PART		(8 * 1024 * 1024) /* a file's parts: at least */
#endif
#ifndef HPN_STRIPE_SPLIT
#define HPN_STRIPE_SPLIT	(512 * 1024)	/* taken over: at least */
#endif
#define HPN_LANE_STAGGER	0.1	/* s: the others start behind the first */
int	hpn_sftp_lanes_parse(const char *);
void	hpn_sftp_lanes_cmd(char * const *);
void	hpn_sftp_lanes_ssh(char * const *, const char *, const char *,
	    const char *, int);
void	hpn_sftp_lanes_go(void);
u_int	hpn_sftp_lanes(struct hpn_sftp *, struct hpn_sftp ***);
u_int	hpn_sftp_lanes_poll(struct hpn_sftp *, struct hpn_sftp **, u_int);
u_int	hpn_sftp_lanes_waiting(struct hpn_sftp *, int *);
void	hpn_sftp_lanes_lost(struct hpn_sftp *);
void	hpn_sftp_lanes_forget(struct hpn_sftp *);
void	hpn_sftp_settle_as(struct hpn_sftp *, const struct hpn_sftp *, u_int);

#endif /* HPN_SFTP_XFER_H */
