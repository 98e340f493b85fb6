/*
 * HPN patch set for OpenSSH: what the hooks in upstream files call.
 * Everything here is ours; upstream files only include this header and
 * call these functions, so a rebase touches as little as possible.
 */
#ifndef HPN_H
#define HPN_H

#include <signal.h>	/* sigset_t */

/* This patch set's version; shown in the banner as OpenSSH_x.yPz_hpnVERSION. */
#define HPN_VERSION		"0.1.0"
/* RFC 4253 software version: printable ASCII, no space, no minus sign. */
#define HPN_VERSION_TAG		"_hpn" HPN_VERSION

/* hpnsshd listens here unless told otherwise; hpnssh connects here first. */
#ifndef HPN_DEFAULT_PORT
# define HPN_DEFAULT_PORT	2222
#endif
/* hpnssh retries here once when HPN_DEFAULT_PORT refuses (FallbackPort). */
#ifndef HPN_FALLBACK_PORT
# define HPN_FALLBACK_PORT	22
#endif
#define HPN_FALLBACK_DELAY	2000	/* ms of silence before it joins in */
#define HPN_FALLBACK_DELAY_MAX	60000
/* HappyEyes: RFC 8305's Connection Attempt Delay (section 5), in ms. */
#define HPN_HAPPY_DELAY		250
#define HPN_HAPPY_DELAY_MAX	60000

/* Environment variable hpnscp sets for the ssh it runs (legacy mode). */
#define HPN_SCP_ENV		"HPNSCP_LEGACY_REMOTE"
/* scp -Z names a file in which its ssh says what the server is (a line). */
#define HPN_SCP_PEER_ENV	"HPNSCP_PEER_FILE"
#define HPN_SCP_PEER_HPNSSH	"hpn-ssh"	/* an HPN peer, not ours */
#define HPN_SCP_PEER_OURS	"hpn"		/* our EXT_INFO */
#define HPN_SCP_PEER_OTHER	"other"

/* Dynamic receive windows (hpn-window.c). */
#define HPN_WINDOW_GROW_MIN	(2 * 1024 * 1024)	/* channels that grow */
#define HPN_WINDOW_MAX_LIMIT	(1024 * 1024 * 1024)	/* HPNBufferSize */
#define HPN_WINDOW_MAX_DEFAULT	HPN_WINDOW_MAX_LIMIT	/* the path decides */
/* a channel's data buffers, past sshbuf's 128 MiB: a window and its excess */
#define HPN_SSHBUF_LARGE_MAX	(HPN_WINDOW_MAX_LIMIT + HPN_WINDOW_MAX_LIMIT / 8)
#define HPN_STOCK_PEER_WINDOW_MAX (15 * 1024 * 1024)	/* < CHAN_INPUT_MAX */
#define HPN_RCVBUF_LIMIT	(1024 * 1024 * 1024)	/* TcpRcvBuf */
#define HPN_INPUT_STAGE		(4 * 1024 * 1024)	/* unsent, per channel */
#define HPN_WINDOW_RTT_FACTOR	2	/* window <= this x rate x RTT */
#define HPN_WINDOW_BULK		(16 * 1024 * 1024) /* a bulk window's start */
#define HPN_BULK_RTT_SLACK	1.25	/* ... while the data's RTT is below this x the lowest */
#define HPN_RAMP_RTT_MIN	0.02	/* s: windows follow the buffer from this RTT */
#define HPN_OOO_SPAN		4	/* RTTs: a measure over a loss, at most */
#define HPN_HOLD_FLAT		3	/* measures not a quarter up: path full */
#define HPN_HOLD_FACTOR		1.5	/* ... windows held to this x rate x RTT */
#define HPN_HOLD_FILLED		0.8	/* ... until rate x RTT reaches this x window */
#define HPN_HOLD_QUEUE		1.1	/* data RTT past this x the lowest: full */
#define HPN_HOLD_MIN		(64 * 1024 * 1024) /* a hold is never below this */
#define HPN_RAMP_FACTOR		2	/* ramp: window <= this x short-span peak x RTT */
#define HPN_RAMP_SPAN		0.1	/* s: ... rate measured over this (the wire's) */
#define HPN_PING_RETRY		1.0	/* s: a PING unanswered is resent */
#define HPN_PING_GAP		0.01	/* s: PINGs at most this often */
#define HPN_RTT_PERIOD		2.0	/* s: MPTCP windows take the lowest PING RTT of 1-2 */
#define HPN_MPTCP_RTT_FACTOR	4	/* ... and size them to that many of it */
#define HPN_RELAY_RTT_SLACK	0.002	/* s: PING RTT beyond 2 x TCP's: relay */
#define HPN_SOCK_SAMPLE		0.02	/* s: SO_RCVBUF, TCP_INFO read at most this often */
#define HPN_RATE_SPAN		0.01	/* s: a rate is measured over at least this */

struct ssh;
struct sshbuf;
struct addrinfo;
struct Channel;

/*
 * HPN-SSH installs hpn-prefixed programs since this major version (they
 * were renamed in February 2022, before its release 16v1).
 */
#define HPNSSH_NAMES_SINCE	16

/* hpn-compat.c: what the peer is (the evidence each uses: see there). */
int	hpn_peer_is_hpn(struct ssh *);
void	hpn_peer_set_ours(int);
int	hpn_peer_is_ours(struct ssh *);
int	hpn_peer_is_hpnssh(struct ssh *);
int	hpn_peer_has_hpn_names(struct ssh *);
int	hpn_peer_mixes_rekey(struct ssh *);

/* hpn-options.c: parsing shared by ssh and sshd. */
int	hpn_parse_bytes(const char *, long long *);
int	hpn_parse_size(const char *, u_int, u_int, u_int *);

/* hpn-servconf.c: hpnsshd's options, servconf.c's five hooks */
#define HPN_SERVCONF_OTHER	(-2)	/* not one of ours */
#ifdef SERVCONF_H
void	hpn_servconf_init(ServerOptions *);
void	hpn_servconf_fill(ServerOptions *);
void	hpn_servconf_copy(ServerOptions *, ServerOptions *);
int	hpn_servconf_line(ServerOptions *, const char *, const char *,
	    const char *, int, int *, const void *);
void	hpn_servconf_dump(ServerOptions *);
#endif

/* hpn-sftp.c: requests in flight (upstream: 64) */
#define HPN_SFTP_INFLIGHT	(64 * 1024 * 1024)	/* bytes, at first */
#define HPN_SFTP_INFLIGHT_MAX	HPN_WINDOW_MAX_LIMIT	/* ... grown to */
#define HPN_SFTP_INFLIGHT_FACTOR 4	/* ... this x rate x RTT */
#define HPN_SFTP_REQUESTS_MIN	64
#define HPN_SFTP_REQUESTS_MAX	1024
#define HPN_SFTP_DATA_REQS_MAX	16384	/* READ/WRITE out, at most */
u_int	hpn_sftp_num_requests(u_int, u_int);
u_int64_t hpn_sftp_budget_grow(u_int64_t, u_int64_t, double, double);

/* hpn-sftp.c: what the transfer engine (hpn-sftp-xfer.c) plans by */
#define HPN_SFTP_HANDLES_DEFAULT 64	/* servers that give no open-handles */
#define HPN_SFTP_HANDLES_MAX	1000	/* never more, whatever they allow */
#define HPN_SFTP_FD_RESERVE	32	/* our own descriptors kept spare */
#define HPN_SFTP_RD_WINDOW	16	/* reads out, file of unknown size */
#define HPN_SFTP_RD_MIN		512	/* upstream's MIN_READ_SIZE */
#define HPN_SFTP_RD_EMPTY_MAX	64	/* empty DATA replies in a row: failed */
u_int	hpn_sftp_max_handles(u_int64_t, u_int64_t);
#define HPN_LANE_HEADROOM	4	/* -n: a connection's budget, x its rate */
#define HPN_LANE_END_HEADROOM	1.25	/* ... at the end of a transfer */
#define HPN_LANE_BUDGET_MIN	(1024 * 1024)	/* ... and at least */
#define HPN_LANE_BUDGET_START	(4 * 1024 * 1024) /* ... before an RTT */
u_int64_t hpn_sftp_lane_budget(u_int64_t, double, double, double,
	    u_int64_t);
#define HPN_LANE_ALL_HEADROOM	1.5	/* -n: all of them together, x rate */
#define HPN_LANE_GROWING	1.25	/* ... unless it grew this much */
#define HPN_LANE_ALL_FALL	0.85	/* ... given up below this of the best */
#define HPN_LANE_ALL_WINDOW	8	/* ... of the best of so many RTTs */
struct hpn_sftp_cap {
	double last[HPN_LANE_ALL_WINDOW]; /* the last round trips' sums */
	u_int next;		/* ... where the next one goes */
	double best;		/* ... the highest while capped */
	u_int low;		/* round trips in a row capped and low */
	int off;		/* given up for the run */
};
u_int64_t hpn_sftp_lanes_cap(struct hpn_sftp_cap *, double, double, int);
struct hpn_sftp_gap {
	u_int64_t off, len;
};
struct hpn_sftp_rd {		/* the reads of one file */
	u_int64_t size;		/* expected, from its attributes */
	int size_known;
	u_int64_t next;		/* next offset not asked for yet */
	u_int64_t eof;		/* lowest offset an EOF came back for */
	u_int64_t highwater, maxack;	/* as upstream: contiguous, highest */
	int reordered;
	u_int64_t got;		/* bytes received */
	u_int inflight;		/* reads out */
	u_int buflen;		/* request size, shrinks after short reads */
	struct hpn_sftp_gap *gaps;	/* short reads to ask for again */
	u_int ngaps;
	u_int64_t limit;	/* a part of a file: never read past this */
	u_int empty;		/* DATA replies of 0 bytes in a row */
};
void	hpn_sftp_rd_init(struct hpn_sftp_rd *, u_int64_t, int, u_int);
void	hpn_sftp_rd_free(struct hpn_sftp_rd *);
int	hpn_sftp_rd_next(struct hpn_sftp_rd *, u_int64_t *, u_int *);
void	hpn_sftp_rd_ack(struct hpn_sftp_rd *, u_int64_t, u_int64_t);
void	hpn_sftp_rd_data(struct hpn_sftp_rd *, u_int64_t, u_int, size_t);
void	hpn_sftp_rd_eof(struct hpn_sftp_rd *, u_int64_t);
void	hpn_sftp_rd_limit(struct hpn_sftp_rd *, u_int64_t);
int	hpn_sftp_rd_planned(const struct hpn_sftp_rd *);
int	hpn_sftp_rd_done(const struct hpn_sftp_rd *);

/* hpn-sftp.c: handle references, the handle of an OPEN not answered yet */
#define HPN_REF_EXT		"handle-ref@hpn-patch-set.invalid"
#define HPN_REF_MAGIC		0xff
#define HPN_REF_IDS		4	/* request ids in one, at most */
#define HPN_REF_LEN_MAX		(1 + 4 * HPN_REF_IDS)
void	hpn_sftp_ref_note(u_int32_t, int);
void	hpn_sftp_ref_forget(int);
int	hpn_sftp_ref_resolve(const u_char *, size_t);
size_t	hpn_sftp_ref_make(u_char *, const u_int32_t *, u_int);

/* hpn-sftp-tree.c: a whole subtree listed through one handle */
#define HPN_TREE_EXT		"tree@hpn-patch-set.invalid"
#define HPN_TREE_DEPTH_MAX	64	/* levels below the top, at most */
#define HPN_TREE_NAMES_MAX	1000	/* names in one reply, at most */
#define HPN_TREE_REPLY_MAX	(64 * 1024)	/* bytes of names, about */
void	hpn_sftp_tree_start(int, const char *, u_int);
void	hpn_sftp_tree_forget(int);
int	hpn_sftp_tree_readdir(int, void *, u_int32_t, struct sshbuf *);

/* hpn-sftp-hash.c: hashes of byte ranges, for verified resume */
#define HPN_HASH_EXT		"hash-range@hpn-patch-set.invalid"
#define HPN_HASH_RANGE_MAX	(64 * 1024 * 1024)	/* per request */
#define HPN_HASH_MD_MAX		64			/* bytes */
#define HPN_HASH_PIECE_MIN	(1024 * 1024)		/* bytes per hash */
#define HPN_HASH_PIECES_MAX	64			/* per request */
#define HPN_HASH_THREADS	8			/* at most, per end */
extern const char *const hpn_hash_names[];	/* hpn-options.c */
const char *hpn_hash_default(void);			/* ResumeHash */
int	hpn_parse_hash_list(const char *, char *, size_t);
const char *hpn_hash_pick(const char *);
const char *hpn_hash_algs(void);
int	hpn_hash_range(int, const char *, u_int64_t, u_int64_t, u_char *,
	    u_int *, u_int64_t *);
int	hpn_hash_pieces(int, const char *, u_int64_t, u_int64_t, u_int64_t,
	    u_char **, u_int *, u_int *, u_int64_t *);
u_int	hpn_hash_range_reply(struct sshbuf *, int, const char *, u_int32_t,
	    struct sshbuf *);
extern void (*hpn_hash_test_mapped)(int);	/* tests: a file mapped */

/* hpn-buffers.c: sshbuf grows geometrically past this size */
#define HPN_SSHBUF_GEOMETRIC	(256 * 1024)
size_t	hpn_sshbuf_grow(size_t, size_t, size_t);

/* sftp-server stops taking requests while its output queue holds this. */
#define HPN_SFTP_OQUEUE_MAX	(1024 * 1024)
/* ... and takes more requests in one turn until it added this much */
#define HPN_SFTP_TURN_OUT	(16 * 1024)
int	hpn_sftp_server_more(const struct sshbuf *, const struct sshbuf *,
	    size_t);

/*
 * hpn-none.c: the None cipher switch.  HPN_NONE_EXT, sent by our server to
 * every HPN client, says what it allows ("cipher", "cipher,mac" or "") and
 * that it is ours (hpn-compat.c).
 */
#define HPN_NONE_EXT		"none-switch@hpn-patch-set.invalid"
struct sshmac;
struct sshenc;
/* What a proposal of ours does with none (hpn_none_plan(), set_proposal()) */
enum hpn_none_prop {
	HPN_NONE_STAY,		/* nothing: no switch */
	HPN_NONE_ONLY,		/* none alone */
	HPN_NONE_FIRST,		/* none first, the lists in use after it */
	HPN_NONE_ADD,		/* none last */
	HPN_NONE_REMOVE		/* none taken out */
};
void	hpn_none_server_config(int, int);
const char *hpn_none_ext_value(struct ssh *);
int	hpn_none_ext_parse(struct ssh *, const char *, const u_char *, size_t);
void	hpn_none_peer_proposal(struct ssh *, char **);
enum hpn_none_prop hpn_none_plan(struct ssh *, int *, const char **);
void	hpn_none_client_switch(struct ssh *, int, int, int, const char *);
int	hpn_none_client_pending(struct ssh *);
void	hpn_none_server_allow(struct ssh *, const char *);
void	hpn_none_server_pty(struct ssh *);
void	hpn_none_kex_failed(const char *);
int	hpn_mac_none_setup(struct sshmac *, const char *);
int	hpn_mac_is_none(const struct sshmac *);
void	hpn_none_newkeys(struct ssh *, int, const struct sshenc *,
	    const struct sshmac *);
int	hpn_none_active(void);
int	hpn_list_has(const char *, const char *);
void	hpn_none_rekey_blocks(const struct sshenc *, u_int64_t, u_int64_t *,
	    u_int64_t *);

/* hpn-cipher.c: the threaded AES-CTR (cipher-ctr-mt.c) */
#define HPN_MT_THREADS_MAX	64	/* MTAESThreads */
#define HPN_MT_THREADS_AUTO_MAX	4	/* automatic: min(CPUs - 1, this), from 3 CPUs */
struct hpn_ctr_mt;
void	hpn_mt_configure(int, int);
struct hpn_ctr_mt *hpn_mt_cipher_new(const char *, const u_char *, u_int,
	    const u_char *, u_int);
int	hpn_mt_crypt(struct hpn_ctr_mt *, u_char *, const u_char *, u_int);
void	hpn_mt_newkeys(int, const char *, int);
void	hpn_mt_rekey_early(struct ssh *);
void	hpn_mt_activate(struct ssh *);

/* hpn-window.c */
void	hpn_window_setup(struct ssh *, int, int, u_int, u_int);
int	hpn_window_adjust_due(struct ssh *, struct Channel *);
void	hpn_window_pong(struct ssh *, const u_char *, size_t);
void	hpn_channel_summary(struct Channel *);
void	hpn_channel_freed(struct Channel *);

/* hpn-budget.c: channel windows' memory, shared by a server's sessions */
#define HPN_BUDGET_ENV		"HPNSSH_BUDGET_FD"	/* its descriptor */
#define HPN_BUDGET_AUTO		(-2LL)	/* HPNBufferBudget auto: RAM / 4 */
#define HPN_BUDGET_MIN		(16LL * 1024 * 1024)	/* ... at least */
u_int64_t hpn_budget_auto(void);
int	hpn_parse_budget(const char *, long long *);
void	hpn_budget_dump(const char *, long long);
void	hpn_budget_create(long long, int);
int	hpn_budget_pass(int);
void	hpn_budget_attach(void);
void	hpn_budget_configure(long long, int);
u_int	hpn_budget_take(u_int);
void	hpn_budget_give(u_int);
void	hpn_budget_reaped(pid_t);
void	hpn_budget_state(u_int64_t *, u_int64_t *);
size_t	hpn_channel_input_max(struct Channel *);

/* hpn-chanio.c: fewer, larger reads and writes for bulk channels */
#define HPN_CHAN_READ_MAX	(256 * 1024)	/* one read of a channel's input */
#define HPN_CHAN_BURST		(256 * 1024)	/* packets queued per trip */
#define HPN_CHAN_BURST_PACKETS	16
#define HPN_PIPE_SIZE		(1024 * 1024)	/* a bulk channel's pipes grow to */
#define HPN_PIPE_GROW_AT	(64 * 1024)	/* bulk: reads, backlog this big */
#define HPN_PIPE_RFD		0x01	/* Channel.hpn_pipes: grown (tried) */
#define HPN_PIPE_WFD		0x02
size_t	hpn_channel_read_len(const struct Channel *);
void	hpn_channel_read_done(struct Channel *, size_t, size_t);
void	hpn_channel_write_backlog(struct Channel *, size_t);
u_int	hpn_channel_burst(const struct Channel *);

/* hpn-packet.c: less work per packet in packet.c */
#define HPN_PAD_POOL		4096	/* random bytes fetched at once */
extern int hpn_pad_test_fixed;
extern u_int64_t hpn_data_direct;
void	hpn_packet_padding(u_char *, size_t);
void	hpn_packet_out_start(struct sshbuf *, u_char);
void	hpn_packet_out_sent(struct sshbuf *, u_char);
void	hpn_packet_in_type(const struct sshbuf *, u_char);
void	hpn_packet_in_reset(struct sshbuf *);
#define HPN_DATA_HDR		14	/* length, padlen, type, id, data length */
#define HPN_DATA_PAD_MAX	64	/* padding of a data packet, at most */
u_int	hpn_packet_data_parts(u_char *, u_char *, u_int, u_int32_t, size_t,
	    u_int *);
#define HPN_NET_READ_MAX	(1024 * 1024)	/* a read of the connection */
int	hpn_packet_read(int, struct sshbuf *, size_t, size_t *);
/* added to upstream files by hpn-sendfast.patch */
struct hpn_part {
	const u_char	*p;
	size_t		 len;
};
struct sshcipher_ctx;
struct chachapoly_ctx;
int	ssh_packet_send_data(struct ssh *, u_int32_t, const u_char *, size_t);
int	cipher_parts_ok(const struct sshcipher_ctx *);
int	cipher_crypt_parts(struct sshcipher_ctx *, u_int, u_char *,
	    const struct hpn_part *, u_int, u_int, u_int);
int	chachapoly_crypt_parts(struct chachapoly_ctx *, u_int, u_char *,
	    const struct hpn_part *, u_int, u_int);
/* added to upstream files by hpn-recvfast.patch */
int	cipher_open_ok(const struct sshcipher_ctx *);
int	cipher_open_start(struct sshcipher_ctx *, u_int, const u_char *, u_int,
	    u_int, u_int, u_char *, u_int);
int	cipher_open_more(struct sshcipher_ctx *, u_char *, const u_char *,
	    size_t);
int	cipher_open_end(struct sshcipher_ctx *);
int	chachapoly_open_start(struct chachapoly_ctx *, u_int, const u_char *,
	    u_int, u_int, u_char *, u_int);
int	chachapoly_open_more(struct chachapoly_ctx *, u_char *, const u_char *,
	    size_t);
struct sshbuf *channel_data_direct(struct ssh *, u_int32_t, size_t);
void	channel_data_direct_done(struct ssh *, u_int32_t, size_t);
extern u_int64_t hpn_data_opened;	/* tests: data packets opened direct */

/* hpn-poly1305.c: OpenSSL's Poly1305 for chacha20-poly1305 */
extern int hpn_poly1305_evp_off;
void	hpn_poly1305(u_char *, const u_char *, size_t, const u_char *);

/* hpn-loop.c: the main loops block their signals once */
int	hpn_loop_sigblock(const sigset_t *, sigset_t *, int);
int	hpn_loop_sigblocked(void);
void	hpn_loop_sigrestore(void);
void	hpn_loop_sigpause(void);
void	hpn_loop_sigresume(void);
struct pollfd;
int	hpn_loop_write_now(struct ssh *, const struct pollfd *);

/* hpn-mptcp.c: Multipath TCP (UseMPTCP) */
struct addrinfo;
int	hpn_socket(const struct addrinfo *, int);
int	hpn_mptcp_active(int);
const char *hpn_mptcp_describe(int, char *, size_t);

/* hpn-metrics.c: TCP stack metrics (details in hpn-metrics.h) */
#define HPN_METRICS_REQUEST	"tcp-info@hpn-patch-set.invalid"
#define HPN_METRICS_REQUEST_HPNSSH "stack-metrics@hpnssh.org"	/* HPN-SSH's */
#define HPN_METRICS_INTERVAL	5000		/* ms, MetricsInterval */
#define HPN_METRICS_INTERVAL_MIN 100
#define HPN_METRICS_INTERVAL_MAX (24 * 3600 * 1000)
#define HPN_METRICS_PATH	"./ssh_stack_metrics"	/* .local, .remote */
struct timespec;
int	hpn_parse_interval_ms(const char *, int *);
int	hpn_parse_happy_delay(const char *, int *);
void	hpn_metrics_server_config(int);
int	hpn_metrics_answer(struct ssh *, struct sshbuf **);
int	hpn_metrics_answer_hpnssh(struct ssh *, struct sshbuf **);
void	hpn_channel_sent(struct Channel *, size_t);
const char *hpn_cipher_name(int);
void	hpn_session_started(int, const char *, const char *);
void	hpn_session_log(struct ssh *, int, const char *);

/*
 * hpn-early.c: connection set-up in fewer round trips (README.hpn section
 * 14); the client's side in hpn-early-client.c.
 */
#define HPN_EARLY_C		"early-c@hpn-patch-set.invalid"	/* KEXINIT */
#define HPN_EARLY_S		"early-s@hpn-patch-set.invalid"
#define HPN_KEX_EARLY		0x40000000	/* kex->flags: both sent theirs */
#define HPN_EARLY_CHANNEL_ID	0	/* the server's id of an early channel */
#define HPN_EARLY_DATA_MAX	(1024 * 1024)	/* its data before the window */
#define HPN_EARLY_PACKET	(32 * 1024)	/* ... in packets of at most */
/* "own": ssh's standard input is its caller's pipe (hpnscp, hpnsftp) */
#define HPN_EARLY_INPUT_ENV	"HPNSSH_EARLY_INPUT"
void	hpn_early_configure(int);
void	hpn_early_kex_names(struct ssh *, char **);
void	hpn_early_kex_peer(struct ssh *, char **, char **);
int	hpn_early_agreed(struct ssh *);
int	hpn_early_guess_ok(struct ssh *, char **);
int	hpn_early_proposals_match(char **, char **);
void	hpn_early_auth_dispatch(struct ssh *);
void	hpn_early_channel_set(const struct Channel *, u_int);
int	hpn_early_channel_confirm(struct Channel *);
u_int	hpn_early_window_adjust(struct Channel *, u_int);
int	hpn_early_connecting(struct ssh *, struct Channel *);
u_int	hpn_early_open_window(struct ssh *, struct Channel *);
#define HPN_EARLY_HOSTS_NAME	"hpn_early_hosts"	/* by known_hosts */
#define HPN_EARLY_HOSTS_MAX	1000	/* EarlyHostsFile: lines kept */
#define HPN_EARLY_HOSTS_SIZE	(256 * 1024)	/* ... larger: ignored */
void	hpn_early_kex_want_guess(const char *);
int	hpn_early_guessable(const char *);
#ifdef KEX_H
int	hpn_early_kex_setup(struct ssh *, char *[PROPOSAL_MAX]);
#endif
int	hpn_early_kex_guess(struct ssh *);
int	hpn_early_guess_taken(struct ssh *);
int	hpn_early_flush(struct ssh *);
int	hpn_early_hosts_lookup(const struct sshbuf *, const char *, char *,
	    size_t);
int	hpn_early_hosts_update(const struct sshbuf *, const char *,
	    const char *, struct sshbuf *);
char	*hpn_early_hosts_default(const char *);

/* hpn-client.c: client only (linked into hpnssh, not the library). */
int	hpn_connect_fallback(const char *, struct addrinfo *, int, int, int);
/* hpn-happyeyes.c: client only: a direct connection's attempts. */
struct sockaddr_storage;
int	hpn_connect_race(const char *, struct addrinfo *,
	    struct sockaddr_storage *, int, int, int (*)(struct addrinfo *));
void	hpn_scp_remote_command(struct ssh *, struct sshbuf *);

/* hpn-scp-zproto.c: HPN-SSH's legacy scp -Z lines (peer bytes) */
#define HPN_ZSCP_HASHLEN	128	/* BLAKE2b-512 in hex */
#define HPN_ZSCP_REPLYLEN	191	/* the target's answer, space padded */
struct hpn_zreply {
	char kind;			/* 'S', 'R' or 'C' */
	u_int mode;
	unsigned long long size;	/* bytes the target holds */
	int has_hash;
	char hash[HPN_ZSCP_HASHLEN + 1];	/* lower case */
};
int	hpn_zscp_parse_hash(char **, char *);
int	hpn_zscp_parse_reply(const char *, size_t, struct hpn_zreply *,
	    const char **);
void	hpn_zscp_compose_reply(char *, char, u_int, unsigned long long,
	    const char *);

/* hpn-scp-resume.c (scp only): the exchange, and the switch to it */
struct sftp_conn;
struct stat;
extern int hpn_zlegacy;
int	hpn_zscp_hash(int, off_t, char *);
int	hpn_zscp_cline(int, char *, size_t, const struct stat *, const char *);
int	hpn_zscp_source(int, off_t, const char *, int, int, int (*)(void),
	    int, off_t *);
void	hpn_zscp_refuse(int);
int	hpn_zscp_sink(int, const char *, off_t, const char *, int, int, int,
	    off_t *);
void	hpn_zscp_start(char *, size_t);
int	hpn_zscp_switch(struct sftp_conn **, int *, int *, pid_t *, char *,
	    size_t);
#ifdef READCONF_H
const char *hpn_none_refusal(const Options *, int);
#endif
struct hostkeys;
struct hostkey_entry;
void	hpn_hostkeys_port22(struct hostkeys *, const char *, u_int,
	    char **, u_int, char **, u_int);
int	hpn_hostkey_via_port22(int, const struct hostkey_entry *,
	    const char *);
void	hpn_hostkey_changed(const struct hostkey_entry *, const char *, u_int,
	    const char *);
/* hpn-metrics-client.c: client only */
void	hpn_metrics_open(int, int, const char *);
void	hpn_metrics_start(struct ssh *);
void	hpn_metrics_poll(struct ssh *, struct timespec *);
int	hpn_metrics_done(struct ssh *);
void	hpn_metrics_end(struct ssh *);

/* hpn-early-client.c: client only */
struct sshkey;
void	hpn_early_socket(struct ssh *);
int	hpn_early_userauth(struct ssh *);
void	hpn_early_first_request(struct ssh *, const char *);
int	hpn_early_sign(struct ssh *, const struct sshkey *, const char *, int);
void	hpn_early_signed(struct ssh *);
void	hpn_early_auth_result(struct ssh *, int);
int	hpn_early_none_fallback(void);
void	hpn_early_set_opener(int (*)(struct ssh *));
int	hpn_early_session_allowed(void);
int	hpn_early_session_id(void);
void	hpn_early_session_opened(struct ssh *, struct Channel *);
int	hpn_early_kex_wanted(const char *, u_short);
void	hpn_early_kex_banner(struct ssh *, const char *, u_short);
void	hpn_early_kex_done(struct ssh *, const char *, u_short);

#endif /* HPN_H */
