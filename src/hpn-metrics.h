/*
 * HPN patch set: TCP stack metrics of both ends (hpn-metrics.c, the client's
 * side in hpn-metrics-client.c).  The hooks in upstream files are declared
 * in hpn.h; this header is what the two files share, and the unit tests.
 */
#ifndef HPN_METRICS_H
#define HPN_METRICS_H

struct ssh;
struct sshbuf;

/*
 * Linux's struct tcp_info (uapi <linux/tcp.h>), as far as we read it.  The
 * kernel only ever appends to it and says how much it filled, so a field
 * is there when the length it returned covers it; declared here so that
 * older C library headers do not hide the newer fields.
 */
struct hpn_tcpi {
	u_int8_t	state, ca_state, retransmits, probes, backoff, options;
	u_int8_t	wscale, flags;		/* bit fields */
	u_int32_t	rto, ato, snd_mss, rcv_mss;
	u_int32_t	unacked, sacked, lost, retrans, fackets;
	u_int32_t	last_data_sent, last_ack_sent, last_data_recv;
	u_int32_t	last_ack_recv;
	u_int32_t	pmtu, rcv_ssthresh, rtt, rttvar, snd_ssthresh, snd_cwnd;
	u_int32_t	advmss, reordering, rcv_rtt, rcv_space, total_retrans;
	u_int64_t	pacing_rate, max_pacing_rate, bytes_acked;
	u_int64_t	bytes_received;
	u_int32_t	segs_out, segs_in, notsent_bytes, min_rtt;
	u_int32_t	data_segs_in, data_segs_out;
	u_int64_t	delivery_rate, busy_time, rwnd_limited, sndbuf_limited;
	u_int32_t	delivered, delivered_ce;
	u_int64_t	bytes_sent, bytes_retrans;
	u_int32_t	dsack_dups, reord_seen, rcv_ooopack, snd_wnd;
};

/* The columns of a sample, in file order; "time" comes first, apart. */
enum hpn_mcol {
	HPN_M_RTT, HPN_M_RTTVAR, HPN_M_MIN_RTT, HPN_M_SND_CWND, HPN_M_SND_MSS,
	HPN_M_SND_SSTHRESH, HPN_M_RCV_SPACE, HPN_M_RCV_SSTHRESH, HPN_M_RCV_RTT,
	HPN_M_UNACKED, HPN_M_SACKED, HPN_M_LOST, HPN_M_RETRANS,
	HPN_M_TOTAL_RETRANS, HPN_M_REORDERING, HPN_M_DELIVERY_RATE,
	HPN_M_PACING_RATE, HPN_M_BYTES_SENT, HPN_M_BYTES_ACKED,
	HPN_M_BYTES_RECEIVED, HPN_M_BYTES_RETRANS, HPN_M_NOTSENT_BYTES,
	HPN_M_SND_WND, HPN_M_BUSY_TIME, HPN_M_RWND_LIMITED,
	HPN_M_SNDBUF_LIMITED,
	/* the SSH layer's view */
	HPN_M_SSH_BYTES_OUT, HPN_M_SSH_BYTES_IN, HPN_M_WINDOW,
	HPN_M_WINDOW_PEAK, HPN_M_PEER_WINDOW, HPN_M_PEER_WINDOW_PEAK,
	HPN_M_WINDOW_STALLS,
	HPN_M_NCOLS
};
#define HPN_M_TCP_COLS	HPN_M_SSH_BYTES_OUT	/* columns from TCP_INFO */

struct hpn_msample {
	double		time;		/* Unix time, seconds */
	u_int64_t	have;		/* bit per column present */
	u_int64_t	v[HPN_M_NCOLS];
};

/* What the channels saw (hpn-window.c keeps it). */
struct hpn_winstats {
	u_int		window, window_peak;	/* our receive windows */
	u_int		peer_window, peer_window_peak;
	u_int64_t	stalls;		/* sends that ran out of peer window */
};
void	hpn_window_stats(struct hpn_winstats *);

const char *hpn_mcol_name(u_int);
int	hpn_mcol_find(const char *);
int	hpn_tcpi_sample(const struct hpn_tcpi *, size_t, struct hpn_msample *);
int	hpn_metrics_take(struct ssh *, struct hpn_msample *);
int	hpn_msample_put(struct sshbuf *, const struct hpn_msample *);
int	hpn_msample_get(struct sshbuf *, struct hpn_msample *);
int	hpn_metrics_reply(const u_char *, size_t, double, double,
	    struct hpn_msample *);
int	hpn_metrics_binn_put(struct sshbuf *, const struct hpn_tcpi *, size_t,
	    u_int32_t);
int	hpn_metrics_binn_reply(const u_char *, size_t, double, double,
	    struct hpn_msample *);
void	hpn_msample_header(FILE *);
void	hpn_msample_row(FILE *, const struct hpn_msample *);

/* What the summary line is made of, for one end. */
struct hpn_mend {
	int		n;			/* samples */
	struct hpn_msample first, last;
	u_int64_t	cwnd_peak;		/* bytes */
	u_int32_t	*rtts;			/* for the median, microseconds */
	u_int		nrtts;
};
#define HPN_M_RTTS_MAX	65536
void	hpn_mend_add(struct hpn_mend *, const struct hpn_msample *);
void	hpn_mend_free(struct hpn_mend *);
int	hpn_metrics_summary(const struct hpn_mend *, const struct hpn_mend *,
	    char *, size_t);

/* hpnsshd's answers to metrics requests: a token bucket */
#define HPN_M_ANSWER_RATE	20	/* per second */
#define HPN_M_ANSWER_BURST	20
int	hpn_metrics_bucket(double *, double *, double);

#endif /* HPN_METRICS_H */
