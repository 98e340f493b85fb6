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

/* A transfer hook's answer when upstream's own code is to do the work. */
#define HPN_SFTP_UPSTREAM	(-2)

/* sftp_init: the requests that need no reply to INIT ride with it. */
struct hpn_sftp *hpn_sftp_attach(int, int, u_int *);
void	hpn_sftp_early_send(struct hpn_sftp *, int);
int	hpn_sftp_early_recv(struct hpn_sftp *, int, struct sftp_limits *);
void	hpn_sftp_settle(struct hpn_sftp *, u_int, u_int, u_int, u_int,
	    u_int64_t);
void	hpn_sftp_detach(struct hpn_sftp *);

/* scp: what it will ask first, asked for with INIT. */
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

#endif /* HPN_SFTP_XFER_H */
