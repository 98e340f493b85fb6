/*
 * HPN patch set: for harnesses that run OpenSSH's blocking code against a
 * model of the peer (early_client, early_server; README.md).
 *
 *  - The code under test has one end of a socket pair as its connection,
 *    the harness's model of the peer the other.  The model runs inside
 *    the code's own waits: ppoll() is wrapped (-Wl,--wrap=ppoll), and
 *    when the code waits for its connection to be readable and nothing
 *    is there, the model reads what the code wrote, answers as the input
 *    says and writes it, or shuts its end (the input is over: the code
 *    reads the end of the connection).  Nothing runs beside the code and
 *    nothing waits on the clock: an input gives the same run every time.
 *  - arc4random(), arc4random_buf() and arc4random_uniform() are the
 *    harness's: fixed streams from the start of each input (KEXINIT
 *    cookies, key exchange secrets, EarlyHostsFile salts), and for the
 *    model's own key exchange values the same ones every time
 *    (fzp_rng_model()).
 *  - crypto_scalarmult_curve25519() (smult_curve25519_ref.c, 14 ms a call
 *    in the fuzz build: four a key exchange) is wrapped
 *    (-Wl,--wrap=crypto_scalarmult_curve25519): a result is kept in a
 *    table by its two inputs, compared whole, and given again for the
 *    same inputs, as the function would have computed it.  With the
 *    fixed random stream most inputs use the same few secrets.
 *  - The ML-KEM half of mlkem768x25519-sha256 (kexmlkem768x25519.c, the
 *    default key exchange: its key pair, encapsulation and decapsulation
 *    were half of early_client's time and a fifth of early_server's) is
 *    kept the same way (-Wl,--wrap=kex_kem_mlkem768x25519_keypair, _enc,
 *    _dec): a result by everything it is computed from, the random
 *    streams it draws from included (their state before the call; a
 *    result given again leaves them as the call did), compared whole.
 *    Every call the code makes is still a call with its checks: a blob of
 *    a wrong size or an invalid key is refused by the real function, as
 *    what it refused is kept with its error.
 *  - Signatures by RSA (PKCS #1 v1.5) and Ed25519 keys, both the same
 *    every time for the same key, algorithm and data, are kept the same
 *    way (-Wl,--wrap=sshkey_sign: RSA's private operation was two fifths
 *    of early_client's time), by the key's public blob, the algorithm and
 *    the data, compared whole; other keys and failures are signed again.
 *  - A private key file read without a passphrase is kept by its path and
 *    what stat() says of it (-Wl,--wrap=sshkey_load_private_type: the
 *    file's base64, decoded a byte at a time through the instrumented
 *    sshbuf, was a sixth of early_client's time), and given again as a
 *    new key: an RSA key holding a reference to the first one's EVP_PKEY
 *    (parsing it again set up its blinding each time: a third of the
 *    time once the file was kept), another parsed from its private blob.
 *    The file is still opened every time: a missing or changed file is
 *    read again.
 */
#ifndef HPN_FUZZ_PEER_H
#define HPN_FUZZ_PEER_H

#include <sys/socket.h>
#include <sys/stat.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>

#include <openssl/evp.h>

int	__real_ppoll(struct pollfd *, nfds_t, const struct timespec *,
	    const sigset_t *);
int	__wrap_ppoll(struct pollfd *, nfds_t, const struct timespec *,
	    const sigset_t *);
int	__real_crypto_scalarmult_curve25519(u_char *, const u_char *,
	    const u_char *);
int	__wrap_crypto_scalarmult_curve25519(u_char *, const u_char *,
	    const u_char *);

int	__real_kex_kem_mlkem768x25519_keypair(struct kex *);
int	__wrap_kex_kem_mlkem768x25519_keypair(struct kex *);
int	__real_kex_kem_mlkem768x25519_enc(struct kex *, const struct sshbuf *,
	    struct sshbuf **, struct sshbuf **);
int	__wrap_kex_kem_mlkem768x25519_enc(struct kex *, const struct sshbuf *,
	    struct sshbuf **, struct sshbuf **);
int	__real_kex_kem_mlkem768x25519_dec(struct kex *, const struct sshbuf *,
	    struct sshbuf **);
int	__wrap_kex_kem_mlkem768x25519_dec(struct kex *, const struct sshbuf *,
	    struct sshbuf **);

int	__real_sshkey_sign(struct sshkey *, u_char **, size_t *,
	    const u_char *, size_t, const char *, const char *, const char *,
	    u_int);
int	__wrap_sshkey_sign(struct sshkey *, u_char **, size_t *,
	    const u_char *, size_t, const char *, const char *, const char *,
	    u_int);
int	__real_sshkey_load_private_type(int, const char *, const char *,
	    struct sshkey **, char **);
int	__wrap_sshkey_load_private_type(int, const char *, const char *,
	    struct sshkey **, char **);

EVP_PKEY *__real_EVP_PKEY_new(void);
EVP_PKEY *__wrap_EVP_PKEY_new(void);
void	__real_EVP_PKEY_free(EVP_PKEY *);
void	__wrap_EVP_PKEY_free(EVP_PKEY *);

/* at most this many turns of the model an input */
#define FZP_TURNS	512

static struct {
	int	code_fd;	/* the code's end, -1: no connection */
	int	model_fd;
	int	over;		/* the input is over: shut once all is sent */
	int	shut;		/* the model's end is shut for writing */
	int	turns;
	struct sshbuf *in;	/* what the code wrote, not yet taken */
	struct sshbuf *out;	/* what the model wrote, not yet sent */
	/* the model's turn: take fzp.in, answer into fzp.out; 0: over */
	int	(*turn)(void);
} fzp = { -1, -1, 0, 0, 0, NULL, NULL, NULL };

/*
 * A stream for each size of request (up to 64 bytes: the key exchange's
 * secrets are 32 and 64), so that a secret does not depend on how much
 * padding went before it: the client's first X25519 secret is the same in
 * every input, and so are the results kept for it.
 */
#define FZP_STREAMS	66
static uint64_t fzp_rng_state[FZP_STREAMS];

static void
fzp_rng_reset(void)
{
	u_int i;

	for (i = 0; i < FZP_STREAMS; i++)
		fzp_rng_state[i] = 0x484e50206561726cULL + i;	/* "HNP earl" */
}

/*
 * The model's own secrets: the same in every reply it computes (a reply
 * does not draw from the code's streams, and a script of many replies
 * does not compute many new keys).
 */
static uint64_t fzp_rng_saved[FZP_STREAMS];

static void __attribute__((unused))
fzp_rng_model(int on)
{
	u_int i;

	if (!on) {
		memcpy(fzp_rng_state, fzp_rng_saved, sizeof(fzp_rng_state));
		return;
	}
	memcpy(fzp_rng_saved, fzp_rng_state, sizeof(fzp_rng_state));
	for (i = 0; i < FZP_STREAMS; i++)
		fzp_rng_state[i] = 0x6d6f64656c000000ULL + i;	/* "model" */
}

/* splitmix64 */
static uint64_t
fzp_rng(size_t n)
{
	uint64_t z = (fzp_rng_state[MINIMUM(n, FZP_STREAMS - 1)] +=
	    0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint32_t
arc4random(void)
{
	return (uint32_t)(fzp_rng(0) >> 32);
}

void
arc4random_buf(void *buf, size_t n)
{
	u_char *p = buf;
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (i % 8 == 0)
			v = fzp_rng(n);
		p[i] = (u_char)(v >> (8 * (i % 8)));
	}
}

uint32_t
arc4random_uniform(uint32_t upper)
{
	if (upper < 2)
		return 0;
	return (uint32_t)(fzp_rng(0) % upper);
}

/* FNV-1a over p[0..n) from h (FZP_FNV_BASIS to start): the tables below
 * take a slot from its top bits */
#define FZP_FNV_BASIS	0xcbf29ce484222325ULL

static uint64_t
fzp_fnv(uint64_t h, const u_char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

/* --- X25519, kept by its inputs ---------------------------------------- */

#define FZP_X25519_SLOTS	1024

static struct fzp_x25519 {
	int	used;
	u_char	scalar[32], point[32], out[32];
	int	ret;
} fzp_x25519[FZP_X25519_SLOTS];

int
__wrap_crypto_scalarmult_curve25519(u_char *out, const u_char *scalar,
    const u_char *point)
{
	struct fzp_x25519 *e;
	uint64_t h = fzp_fnv(fzp_fnv(FZP_FNV_BASIS, scalar, 32), point, 32);

	e = &fzp_x25519[(h >> 32) % FZP_X25519_SLOTS];
	if (e->used && memcmp(e->scalar, scalar, 32) == 0 &&
	    memcmp(e->point, point, 32) == 0) {
		memcpy(out, e->out, 32);
		return e->ret;
	}
	e->ret = __real_crypto_scalarmult_curve25519(out, scalar, point);
	memcpy(e->scalar, scalar, 32);
	memcpy(e->point, point, 32);
	memcpy(e->out, out, 32);
	e->used = 1;
	return e->ret;
}

/* --- ML-KEM, kept by its inputs ---------------------------------------- */

/*
 * One kept call: what it was computed from (the random streams' state
 * included, for the two that draw), compared whole, and what it gave
 * (the return value, the blobs, the key fields of struct kex it wrote,
 * the streams' state after it).  Static storage only: the table outlives
 * the step, whose allocations fz_step_release() may free.  A blob longer
 * than the largest valid one is not kept (the real function refuses it
 * every time).
 */
#define FZP_KEM_SLOTS	64
#define FZP_KEM_BLOB	(crypto_kem_mlkem768_PUBLICKEYBYTES + 64)
#define FZP_KEM_IN	(4 + 8 + 8 + 4 + FZP_KEM_BLOB + \
	crypto_kem_mlkem768_SECRETKEYBYTES + CURVE25519_SIZE)

struct fzp_kem_blob {
	int	set;
	size_t	len;
	u_char	b[FZP_KEM_BLOB];
};

struct fzp_kem {
	int	used;
	size_t	inlen;
	u_char	in[FZP_KEM_IN];
	int	ret;
	struct fzp_kem_blob out1, out2;
	u_char	mlkem_sk[crypto_kem_mlkem768_SECRETKEYBYTES];
	u_char	c25519_sk[CURVE25519_SIZE];
	uint64_t rng32, rng64;	/* the streams after the call */
};

static struct fzp_kem fzp_kem_keypair[FZP_KEM_SLOTS];
static struct fzp_kem fzp_kem_enc[FZP_KEM_SLOTS];
static struct fzp_kem fzp_kem_dec[FZP_KEM_SLOTS];
static u_char fzp_kem_in[FZP_KEM_IN];

static void
fzp_kem_add(size_t *np, const void *p, size_t len)
{
	if (*np + len > sizeof(fzp_kem_in))
		fz_bad("kem inputs: %zu bytes", *np + len);
	memcpy(fzp_kem_in + *np, p, len);
	*np += len;
}

/*
 * The inputs of a call into fzp_kem_in; the slot that holds or will hold
 * them, *hitp set when it holds them.  NULL: not to be kept.
 */
static struct fzp_kem *
fzp_kem_slot(struct fzp_kem *table, const struct kex *kex, int draws,
    const struct sshbuf *blob, int secret, size_t *inlenp, int *hitp)
{
	uint64_t h = FZP_FNV_BASIS;	/* also the streams' stand-in */
	uint32_t v32;
	struct fzp_kem *e;
	size_t n = 0;

	*hitp = 0;
	if (blob != NULL && sshbuf_len(blob) > FZP_KEM_BLOB)
		return NULL;
	v32 = (uint32_t)kex->hash_alg;
	fzp_kem_add(&n, &v32, sizeof(v32));
	fzp_kem_add(&n, draws ? &fzp_rng_state[32] : &h, sizeof(uint64_t));
	fzp_kem_add(&n, draws ? &fzp_rng_state[64] : &h, sizeof(uint64_t));
	v32 = blob == NULL ? 0 : (uint32_t)sshbuf_len(blob);
	fzp_kem_add(&n, &v32, sizeof(v32));
	if (blob != NULL)
		fzp_kem_add(&n, sshbuf_ptr(blob), sshbuf_len(blob));
	if (secret) {
		fzp_kem_add(&n, kex->mlkem768_client_key,
		    sizeof(kex->mlkem768_client_key));
		fzp_kem_add(&n, kex->c25519_client_key,
		    sizeof(kex->c25519_client_key));
	}
	h = fzp_fnv(h, fzp_kem_in, n);
	e = &table[(h >> 32) % FZP_KEM_SLOTS];
	*hitp = e->used && e->inlen == n && memcmp(e->in, fzp_kem_in, n) == 0;
	*inlenp = n;
	return e;
}

static void
fzp_kem_blob_keep(struct fzp_kem_blob *k, const struct sshbuf *b)
{
	k->set = b != NULL;
	k->len = 0;
	if (b == NULL)
		return;
	if (sshbuf_len(b) > sizeof(k->b))
		fz_bad("kem result of %zu bytes", sshbuf_len(b));
	k->len = sshbuf_len(b);
	memcpy(k->b, sshbuf_ptr(b), k->len);
}

/* A kept blob as a new buffer for the caller (NULL: none was given). */
static struct sshbuf *
fzp_kem_blob_give(const struct fzp_kem_blob *k)
{
	struct sshbuf *b;
	int r;

	if (!k->set)
		return NULL;
	if ((b = sshbuf_new()) == NULL)
		fz_bad("sshbuf_new");
	if ((r = sshbuf_put(b, k->b, k->len)) != 0)
		fz_bad("sshbuf_put: %s", ssh_err(r));
	return b;
}

/* Keep a call's results in slot e (NULL: not kept), its inputs in fzp_kem_in. */
static void
fzp_kem_keep(struct fzp_kem *e, size_t inlen, int ret,
    const struct sshbuf *out1, const struct sshbuf *out2,
    const struct kex *kex)
{
	if (e == NULL)
		return;
	e->inlen = inlen;
	memcpy(e->in, fzp_kem_in, inlen);
	e->ret = ret;
	fzp_kem_blob_keep(&e->out1, out1);
	fzp_kem_blob_keep(&e->out2, out2);
	memcpy(e->mlkem_sk, kex->mlkem768_client_key, sizeof(e->mlkem_sk));
	memcpy(e->c25519_sk, kex->c25519_client_key, sizeof(e->c25519_sk));
	e->rng32 = fzp_rng_state[32];
	e->rng64 = fzp_rng_state[64];
	e->used = 1;
}

int
__wrap_kex_kem_mlkem768x25519_keypair(struct kex *kex)
{
	struct fzp_kem *e;
	size_t inlen = 0;
	int hit, r;

	e = fzp_kem_slot(fzp_kem_keypair, kex, 1, NULL, 0, &inlen, &hit);
	if (hit) {
		if (e->ret == 0) {
			kex->client_pub = fzp_kem_blob_give(&e->out1);
			memcpy(kex->mlkem768_client_key, e->mlkem_sk,
			    sizeof(e->mlkem_sk));
			memcpy(kex->c25519_client_key, e->c25519_sk,
			    sizeof(e->c25519_sk));
		}
		fzp_rng_state[32] = e->rng32;
		fzp_rng_state[64] = e->rng64;
		return e->ret;
	}
	r = __real_kex_kem_mlkem768x25519_keypair(kex);
	fzp_kem_keep(e, inlen, r, r == 0 ? kex->client_pub : NULL, NULL, kex);
	return r;
}

int
__wrap_kex_kem_mlkem768x25519_enc(struct kex *kex,
    const struct sshbuf *client_blob, struct sshbuf **server_blobp,
    struct sshbuf **shared_secretp)
{
	struct fzp_kem *e;
	size_t inlen = 0;
	int hit, r;

	e = fzp_kem_slot(fzp_kem_enc, kex, 1, client_blob, 0, &inlen, &hit);
	if (hit) {
		*server_blobp = fzp_kem_blob_give(&e->out1);
		*shared_secretp = fzp_kem_blob_give(&e->out2);
		fzp_rng_state[32] = e->rng32;
		fzp_rng_state[64] = e->rng64;
		return e->ret;
	}
	r = __real_kex_kem_mlkem768x25519_enc(kex, client_blob, server_blobp,
	    shared_secretp);
	fzp_kem_keep(e, inlen, r, *server_blobp, *shared_secretp, kex);
	return r;
}

int
__wrap_kex_kem_mlkem768x25519_dec(struct kex *kex,
    const struct sshbuf *server_blob, struct sshbuf **shared_secretp)
{
	struct fzp_kem *e;
	size_t inlen = 0;
	int hit, r;

	e = fzp_kem_slot(fzp_kem_dec, kex, 0, server_blob, 1, &inlen, &hit);
	if (hit) {
		*shared_secretp = fzp_kem_blob_give(&e->out1);
		return e->ret;
	}
	r = __real_kex_kem_mlkem768x25519_dec(kex, server_blob,
	    shared_secretp);
	fzp_kem_keep(e, inlen, r, *shared_secretp, NULL, kex);
	return r;
}

/* --- signatures, kept by key, algorithm and data ------------------------ */

/*
 * What a signature was made from (the key's public blob, the algorithm's
 * name, the data) and the signature, in static storage.  Longer inputs
 * (a request of a very long user name) are signed every time.
 */
#define FZP_SIG_SLOTS	256
#define FZP_SIG_IN	8192
#define FZP_SIG_OUT	1024

static struct fzp_sig {
	int	used;
	size_t	inlen, siglen;
	u_char	in[FZP_SIG_IN];
	u_char	sig[FZP_SIG_OUT];
} fzp_sig[FZP_SIG_SLOTS];
static u_char fzp_sig_in[FZP_SIG_IN];

int
__wrap_sshkey_sign(struct sshkey *key, u_char **sigp, size_t *lenp,
    const u_char *data, size_t datalen, const char *alg,
    const char *sk_provider, const char *sk_pin, u_int compat)
{
	uint64_t h;
	struct sshbuf *pub = NULL;
	struct fzp_sig *e;
	size_t i, n, alen;
	int r;

	if (sigp != NULL)
		*sigp = NULL;
	if (lenp != NULL)
		*lenp = 0;
	if (key == NULL || sigp == NULL || (key->type != KEY_RSA &&
	    key->type != KEY_ED25519) || (pub = sshbuf_new()) == NULL ||
	    sshkey_putb(key, pub) != 0)
		goto sign;
	alen = alg == NULL ? 0 : strlen(alg);
	n = 3 * sizeof(size_t) + sshbuf_len(pub) + alen + datalen;
	if (n > sizeof(fzp_sig_in))
		goto sign;
	n = 0;
	i = sshbuf_len(pub);
	memcpy(fzp_sig_in + n, &i, sizeof(i)), n += sizeof(i);
	memcpy(fzp_sig_in + n, sshbuf_ptr(pub), i), n += i;
	memcpy(fzp_sig_in + n, &alen, sizeof(alen)), n += sizeof(alen);
	if (alen > 0)
		memcpy(fzp_sig_in + n, alg, alen), n += alen;
	memcpy(fzp_sig_in + n, &datalen, sizeof(datalen)), n += sizeof(datalen);
	if (datalen > 0)
		memcpy(fzp_sig_in + n, data, datalen), n += datalen;
	sshbuf_free(pub);
	pub = NULL;
	h = fzp_fnv(FZP_FNV_BASIS, fzp_sig_in, n);
	e = &fzp_sig[(h >> 32) % FZP_SIG_SLOTS];
	if (e->used && e->inlen == n && memcmp(e->in, fzp_sig_in, n) == 0) {
		if ((*sigp = malloc(e->siglen)) == NULL)
			return SSH_ERR_ALLOC_FAIL;
		memcpy(*sigp, e->sig, e->siglen);
		if (lenp != NULL)
			*lenp = e->siglen;
		return 0;
	}
	r = __real_sshkey_sign(key, sigp, lenp, data, datalen, alg,
	    sk_provider, sk_pin, compat);
	if (r == 0 && lenp != NULL && *lenp <= sizeof(e->sig)) {
		e->inlen = n;
		memcpy(e->in, fzp_sig_in, n);
		e->siglen = *lenp;
		memcpy(e->sig, *sigp, *lenp);
		e->used = 1;
	}
	return r;
 sign:
	sshbuf_free(pub);
	return __real_sshkey_sign(key, sigp, lenp, data, datalen, alg,
	    sk_provider, sk_pin, compat);
}

/* --- private key files, kept by path and stat() ------------------------- */

#define FZP_PRIV_SLOTS	8
#define FZP_PRIV_BLOB	8192
#define FZP_PRIV_PATH	1024

static struct fzp_priv {
	int	used, type;
	EVP_PKEY *rsa;		/* a reference of the cache's: RSA keys */
	char	path[FZP_PRIV_PATH];
	struct stat st;
	size_t	len;
	u_char	blob[FZP_PRIV_BLOB];
	char	comment[256];
} fzp_priv[FZP_PRIV_SLOTS];
static u_int fzp_priv_next;

static int
fzp_priv_same(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	    a->st_size == b->st_size && a->st_mode == b->st_mode &&
	    a->st_uid == b->st_uid &&
	    a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	    a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	    a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
	    a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

int
__wrap_sshkey_load_private_type(int type, const char *path,
    const char *passphrase, struct sshkey **keyp, char **commentp)
{
	struct sshbuf *b = NULL;
	struct fzp_priv *e = NULL;
	struct stat st;
	char *comment = NULL;
	u_int i;
	int fd, r;

	if (keyp != NULL)
		*keyp = NULL;
	if (commentp != NULL)
		*commentp = NULL;
	/* opened and looked at as the real function does, every time */
	if (keyp == NULL || (passphrase != NULL && *passphrase != '\0') ||
	    strlen(path) >= sizeof(e->path) ||
	    (fd = open(path, O_RDONLY)) == -1)
		goto load;
	r = fstat(fd, &st);
	close(fd);
	if (r == -1 || !S_ISREG(st.st_mode) || (st.st_mode & 077) != 0)
		goto load;
	for (i = 0; i < FZP_PRIV_SLOTS; i++) {
		e = &fzp_priv[i];
		if (e->used && e->type == type && strcmp(e->path, path) == 0 &&
		    fzp_priv_same(&e->st, &st))
			break;
	}
	if (i < FZP_PRIV_SLOTS) {
		if (e->rsa != NULL) {
			if ((*keyp = sshkey_new(KEY_UNSPEC)) == NULL)
				return SSH_ERR_ALLOC_FAIL;
			if (EVP_PKEY_up_ref(e->rsa) != 1)
				fz_bad("EVP_PKEY_up_ref");
			(*keyp)->type = KEY_RSA;
			(*keyp)->pkey = e->rsa;
		} else {
			if ((b = sshbuf_from(e->blob, e->len)) == NULL)
				return SSH_ERR_ALLOC_FAIL;
			r = sshkey_private_deserialize(b, keyp);
			sshbuf_free(b);
			if (r != 0)
				fz_bad("kept key %s: %s", path, ssh_err(r));
		}
		if (commentp != NULL && (*commentp = strdup(e->comment)) == NULL) {
			sshkey_free(*keyp);
			*keyp = NULL;
			return SSH_ERR_ALLOC_FAIL;
		}
		return 0;
	}
	r = __real_sshkey_load_private_type(type, path, passphrase, keyp,
	    &comment);
	if (r == 0 && (b = sshbuf_new()) != NULL &&
	    sshkey_private_serialize(*keyp, b) == 0 &&
	    sshbuf_len(b) <= sizeof(e->blob) &&
	    (comment == NULL || strlen(comment) < sizeof(e->comment))) {
		e = &fzp_priv[fzp_priv_next++ % FZP_PRIV_SLOTS];
		if (e->rsa != NULL)
			__real_EVP_PKEY_free(e->rsa);
		e->rsa = NULL;
		if ((*keyp)->type == KEY_RSA && (*keyp)->cert == NULL) {
			if (EVP_PKEY_up_ref((*keyp)->pkey) != 1)
				fz_bad("EVP_PKEY_up_ref");
			e->rsa = (*keyp)->pkey;
		}
		e->type = type;
		strlcpy(e->path, path, sizeof(e->path));
		e->st = st;
		e->len = sshbuf_len(b);
		memcpy(e->blob, sshbuf_ptr(b), e->len);
		strlcpy(e->comment, comment == NULL ? "" : comment,
		    sizeof(e->comment));
		e->used = 1;
	}
	sshbuf_free(b);
	if (commentp != NULL)
		*commentp = comment;
	else
		free(comment);
	return r;
 load:
	return __real_sshkey_load_private_type(type, path, passphrase, keyp,
	    commentp);
}

/* --- keys a failed step made -------------------------------------------- */

#define FZP_KEYS	256

static EVP_PKEY *fzp_keys[FZP_KEYS];
static u_int fzp_nkeys;

EVP_PKEY *
__wrap_EVP_PKEY_new(void)
{
	EVP_PKEY *k = __real_EVP_PKEY_new();

	if (k != NULL && fz_armed) {
		if (fzp_nkeys >= FZP_KEYS)
			fz_bad("more than %d keys in a step", FZP_KEYS);
		fzp_keys[fzp_nkeys++] = k;
	}
	return k;
}

void
__wrap_EVP_PKEY_free(EVP_PKEY *k)
{
	u_int i;

	for (i = 0; k != NULL && i < fzp_nkeys; i++) {
		if (fzp_keys[i] == k) {
			fzp_keys[i] = fzp_keys[--fzp_nkeys];
			break;
		}
	}
	__real_EVP_PKEY_free(k);
}

/* After a step, the state the harness knows of freed: what it left. */
static void
fzp_keys_release(int failed)
{
	while (failed && fzp_nkeys > 0)
		__real_EVP_PKEY_free(fzp_keys[--fzp_nkeys]);
	fzp_nkeys = 0;
}

/* --- the connection ---------------------------------------------------- */

/* Once, before any step: the model's buffers outlive them. */
static void
fzp_init(void)
{
	if ((fzp.in = sshbuf_new()) == NULL ||
	    (fzp.out = sshbuf_new()) == NULL)
		fz_bad("sshbuf_new");
	signal(SIGPIPE, SIG_IGN);
}

/* A socket pair: *codep for the code, the other end the model's. */
static void
fzp_open(int *codep, int (*turn)(void))
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1)
		fz_bad("socketpair: %s", strerror(errno));
	if (fcntl(sv[1], F_SETFL, O_NONBLOCK) == -1)
		fz_bad("fcntl: %s", strerror(errno));
	if (fzp.in == NULL || fzp.out == NULL)
		fz_bad("fzp_init() first");
	sshbuf_reset(fzp.in);
	sshbuf_reset(fzp.out);
	fzp.code_fd = *codep = sv[0];
	fzp.model_fd = sv[1];
	fzp.over = fzp.shut = 0;
	fzp.turns = 0;
	fzp.turn = turn;
}

/* Both ends closed (the code's may be closed already: closed is -1). */
static void
fzp_close(int code_closed)
{
	if (fzp.code_fd != -1 && !code_closed)
		close(fzp.code_fd);
	if (fzp.model_fd != -1)
		close(fzp.model_fd);
	fzp.code_fd = fzp.model_fd = -1;
	fzp.turn = NULL;
	/* their space may have grown in a step: new ones, outside it */
	sshbuf_free(fzp.in);
	sshbuf_free(fzp.out);
	fzp.in = fzp.out = NULL;
	fzp_init();
}

/* What the code wrote, into fzp.in. */
static void
fzp_drain(void)
{
	u_char buf[16384];
	ssize_t n;
	int r;

	for (;;) {
		if ((n = read(fzp.model_fd, buf, sizeof(buf))) == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			fz_bad("model read: %s", strerror(errno));
		}
		if (n == 0)
			return;
		if ((r = sshbuf_put(fzp.in, buf, n)) != 0)
			fz_bad("model input: %s", ssh_err(r));
	}
}

/* What the model wrote, as much as the socket takes. */
static void
fzp_flush(void)
{
	ssize_t n;
	int r;

	while (sshbuf_len(fzp.out) > 0) {
		if ((n = write(fzp.model_fd, sshbuf_ptr(fzp.out),
		    sshbuf_len(fzp.out))) == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			fz_bad("model write: %s", strerror(errno));
		}
		if ((r = sshbuf_consume(fzp.out, n)) != 0)
			fz_bad("model output: %s", ssh_err(r));
	}
}

/* The input is over: the code reads the end of the connection. */
static void
fzp_shut(void)
{
	if (fzp.shut)
		return;
	fzp.shut = 1;
	if (shutdown(fzp.model_fd, SHUT_WR) == -1)
		fz_bad("shutdown: %s", strerror(errno));
}

/*
 * The code waits on its connection: it goes on at once when it can;
 * otherwise the model takes its turn first (or drains the socket, when
 * the code waits to write).  Never blocks.
 */
int
__wrap_ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *tmo,
    const sigset_t *mask)
{
	static const struct timespec zero = { 0, 0 };
	int i, r;

	if (fzp.code_fd == -1 || nfds != 1 || fds[0].fd != fzp.code_fd)
		return __real_ppoll(fds, nfds, tmo, mask);
	for (i = 0; ; i++) {
		fzp_flush();
		if (fzp.over && sshbuf_len(fzp.out) == 0)
			fzp_shut();
		if ((r = __real_ppoll(fds, nfds, &zero, NULL)) != 0)
			return r;
		if (i > 4 * FZP_TURNS)
			fz_bad("the model leaves the code waiting");
		fzp_drain();
		if ((fds[0].events & POLLIN) == 0 || sshbuf_len(fzp.out) > 0)
			continue;
		if (fzp.shut)
			fz_bad("the code waits on a connection at its end");
		if (fzp.over)
			continue;
		if (++fzp.turns >= FZP_TURNS || fzp.turn == NULL ||
		    !fzp.turn())
			fzp.over = 1;
	}
}

#endif /* HPN_FUZZ_PEER_H */
