/*
 * Fuzz harness: ssh-agent's requests, locked or not.  OpenSSH's own agent
 * harness (regress/misc/fuzz-harness/agent_fuzz_helper.c) is compiled in,
 * and with it ssh-agent.c and its test keys; the input is one client's
 * bytes to process_message(), as there, with the agent locked or not,
 * for our fix (cve-2026-73281-agent-lock-session-bind.patch): a locked
 * agent still takes session-bind@openssh.com (is_session_bind() reads the
 * request's extension name) and refuses all else but UNLOCK.  The
 * agent's socket may be forwarded: its client is then the remote host.
 *
 * Input: one byte (bit 0: the agent starts locked), then the requests.
 * Checked: a locked agent keeps its keys (count) and stays locked (its
 * password hash is not one any input can match); every request gets at
 * most one answer.  A request ssh-agent refuses with fatal() (a LOCK it
 * cannot parse) ends the input.  The unlock failure's growing delay
 * (usleep()) is left out: time only.  So is bcrypt_pbkdf(), which LOCK
 * and UNLOCK run on the password (a key derivation, upstream's, no
 * parser): a stand-in below with its argument checks derives the hash
 * from a digest instead.
 *
 * HPN_FUZZ_SEEDS=DIR writes the seeds: requests composed as ssh composes
 * them (authfd.c: ssh_agent_bind_hostkey(), ssh_lock_agent(),
 * ssh_fetch_identitylist(), ssh_remove_all_identities()), locked and not.
 */

#include "includes.h"

#include <unistd.h>

/* ssh-agent.c's own cleanup_exit() would end the fuzzer: ours ends steps */
#define cleanup_exit	agent_cleanup_exit
#define usleep(x)	((void)(x), 0)

#include "regress/misc/fuzz-harness/agent_fuzz_helper.c"

#undef cleanup_exit
#undef usleep

#include "digest.h"
#include "fuzz-common.h"

int LLVMFuzzerInitialize(int *, char ***);
int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static int devnull = -1;

/*
 * bcrypt_pbkdf(), in its place (openbsd-compat's is not linked): the
 * arguments it refuses refused, then each 64 bytes of the key a SHA-512
 * of the block's number, the salt and the password.  The same password
 * and salt give the same key, another password another: what ssh-agent's
 * LOCK and UNLOCK need of it.  Once the corpus held inputs of many
 * UNLOCKs, the real one (a few ms a call at -O2) was 83% of the
 * harness's time.
 */
int
bcrypt_pbkdf(const char *pass, size_t passlen, const uint8_t *salt,
    size_t saltlen, uint8_t *key, size_t keylen, unsigned int rounds)
{
	u_char out[SSH_DIGEST_MAX_LENGTH];
	struct sshbuf *b;
	size_t done, n;
	u_int32_t block;

	if (rounds < 1 || passlen == 0 || saltlen == 0 ||
	    saltlen > 1024 * 1024 || keylen == 0 || keylen > 1024)
		return -1;
	if ((b = sshbuf_new()) == NULL)
		return -1;
	for (block = 0, done = 0; done < keylen; block++, done += n) {
		sshbuf_reset(b);
		if (sshbuf_put_u32(b, block) != 0 ||
		    sshbuf_put(b, salt, saltlen) != 0 ||
		    sshbuf_put(b, pass, passlen) != 0 ||
		    ssh_digest_buffer(SSH_DIGEST_SHA512, b, out,
		    sizeof(out)) != 0) {
			sshbuf_free(b);
			return -1;
		}
		n = MINIMUM(keylen - done, 64);
		memcpy(key + done, out, n);
	}
	sshbuf_free(b);
	explicit_bzero(out, sizeof(out));
	return 0;
}

/*
 * The helper's keys (reset_idtab(): each a key and its certificate),
 * parsed once and kept serialised: made again from these (a fraction of
 * what parsing their PEM text costs) when an input changed them.
 */
#define NTEMPLATES	10
static struct {
	struct sshbuf *key;
	char *comment;
	int sk;
} tmpl[NTEMPLATES];
static u_int ntmpl;

static void
templates(void)
{
	Identity *id;

	reset_idtab();
	TAILQ_FOREACH(id, &idtab->idlist, next) {
		if (ntmpl == NTEMPLATES)
			fz_bad("more keys than templates");
		if ((tmpl[ntmpl].key = sshbuf_new()) == NULL ||
		    sshkey_private_serialize(id->key, tmpl[ntmpl].key) != 0)
			fz_bad("serialise");
		tmpl[ntmpl].comment = xstrdup(id->comment);
		tmpl[ntmpl].sk = id->sk_provider != NULL;
		ntmpl++;
	}
	cleanup_idtab();
}

/*
 * What reset_keys() made, as it made it: an input that changed none of it
 * (most: requests that list, sign, bind or fail) leaves the table to the
 * next input as is.  Made again (the keys deserialised: most of what an
 * input cost, libcrypto checking each key) only after an input that
 * added, removed or changed an identity, or that ended in fatal().
 */
static struct {
	Identity *id;
	Identity copy;
	struct sshkey key;
} kept[NTEMPLATES];
static int keys_kept;

static int
keys_unchanged(void)
{
	Identity *id;
	u_int i = 0;

	if (!keys_kept || idtab == NULL || idtab->nentries != (int)ntmpl)
		return 0;
	TAILQ_FOREACH(id, &idtab->idlist, next) {
		if (i >= ntmpl || id != kept[i].id ||
		    memcmp(id, &kept[i].copy, sizeof(*id)) != 0 ||
		    memcmp(id->key, &kept[i].key, sizeof(*id->key)) != 0)
			return 0;
		i++;
	}
	return i == ntmpl;
}

static void
reset_keys(void)
{
	struct sshbuf *b;
	Identity *id;
	u_int i;

	if (keys_unchanged())
		return;
	keys_kept = 0;
	cleanup_idtab();
	idtab_init();
	for (i = 0; i < ntmpl; i++) {
		id = xcalloc(1, sizeof(Identity));
		if ((b = sshbuf_fromb(tmpl[i].key)) == NULL ||
		    sshkey_private_deserialize(b, &id->key) != 0)
			fz_bad("deserialise");
		sshbuf_free(b);
		id->comment = xstrdup(tmpl[i].comment);
		if (tmpl[i].sk)
			id->sk_provider = xstrdup("internal");
		TAILQ_INSERT_TAIL(&idtab->idlist, id, next);
		idtab->nentries++;
	}
	i = 0;
	TAILQ_FOREACH(id, &idtab->idlist, next) {
		kept[i].id = id;
		kept[i].copy = *id;
		kept[i].key = *id->key;
		i++;
	}
	keys_kept = 1;
}

/* As test_one(), one message at a time, checking a locked agent. */
static void
requests(const uint8_t *s, size_t slen, int lock)
{
	size_t i, olen, nlen, out;
	int keys;

	reset_keys();
	reset_sockettab(devnull);
	keys = idtab->nentries;
	locked = lock;
	/* no password opens it (LOCK_SIZE bytes that no hash gives) */
	memset(lock_pwhash, 0xa5, sizeof(lock_pwhash));
	(void)sshbuf_put(sockets[0].input, s, slen);
	for (i = 0; i < MAX_MESSAGES; i++) {
		olen = sshbuf_len(sockets[0].input);
		out = sshbuf_len(sockets[0].output);
		process_message(0);
		if (sockets[0].type == AUTH_UNUSED)
			break;		/* the agent closed the connection */
		nlen = sshbuf_len(sockets[0].input);
		if (nlen != olen && lock) {
			if (!locked)
				fz_bad("unlocked with a password no hash gives");
			if (idtab->nentries != keys)
				fz_bad("locked, %d keys became %d", keys,
				    idtab->nentries);
		}
		if (nlen == olen && sshbuf_len(sockets[0].output) != out)
			fz_bad("an answer without a request");
		if (nlen == 0 || nlen == olen)
			break;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int failed;

	if (size < 1)
		return 0;
	failed = FZ_STEP(requests(data + 1, size - 1, data[0] & 1));
	/* the keys stay for the next input unless the step ended in fatal()
	 * (reset_keys() makes them again if anything changed them) */
	if (failed) {
		cleanup_idtab();
		keys_kept = 0;
	}
	cleanup_sockettab();
	locked = 0;
	if (failed)
		fz_step_release();
	return 0;
}

/* --- the seeds -------------------------------------------------------- */

static struct sshbuf *seedbuf;

/* A request as authfd.c sends it: u32 length, then the message. */
static void
put_msg(struct sshbuf *m)
{
	if (sshbuf_put_stringb(seedbuf, m) != 0)
		fz_bad("seed");
	sshbuf_reset(m);
}

static void
write_seeds(const char *dir)
{
	struct sshbuf *m, *sig, *sid, *blob;
	struct sshkey *key = privkey_or_die(PRIV_ED25519);
	u_char *sigp = NULL;
	size_t siglen;
	int lock;

	if ((seedbuf = sshbuf_new()) == NULL || (m = sshbuf_new()) == NULL ||
	    (sid = sshbuf_new()) == NULL || (blob = sshbuf_new()) == NULL)
		fz_bad("sshbuf_new");
	/* a session id, and the host key's signature of it, as sshd makes */
	if (sshbuf_put(sid, "0123456789abcdef0123456789abcdef", 32) != 0 ||
	    sshkey_sign(key, &sigp, &siglen, sshbuf_ptr(sid), sshbuf_len(sid),
	    NULL, NULL, NULL, 0) != 0 ||
	    (sig = sshbuf_from(sigp, siglen)) == NULL ||
	    sshkey_putb(key, blob) != 0)
		fz_bad("sign");
	for (lock = 0; lock < 2; lock++) {
		sshbuf_reset(seedbuf);
		sshbuf_put_u8(seedbuf, lock);
		/* ssh_agent_bind_hostkey() */
		if (sshbuf_put_u8(m, SSH_AGENTC_EXTENSION) != 0 ||
		    sshbuf_put_cstring(m, "session-bind@openssh.com") != 0 ||
		    sshbuf_put_stringb(m, blob) != 0 ||
		    sshbuf_put_stringb(m, sid) != 0 ||
		    sshbuf_put_stringb(m, sig) != 0 ||
		    sshbuf_put_u8(m, 1) != 0)		/* forwarding */
			fz_bad("compose");
		put_msg(m);
		/* ssh_fetch_identitylist() */
		sshbuf_put_u8(m, SSH2_AGENTC_REQUEST_IDENTITIES);
		put_msg(m);
		/* ssh_lock_agent(), both ways */
		sshbuf_put_u8(m, SSH_AGENTC_UNLOCK);
		sshbuf_put_cstring(m, "secret");
		put_msg(m);
		sshbuf_put_u8(m, SSH_AGENTC_LOCK);
		sshbuf_put_cstring(m, "secret");
		put_msg(m);
		/* ssh_remove_all_identities() */
		sshbuf_put_u8(m, SSH2_AGENTC_REMOVE_ALL_IDENTITIES);
		put_msg(m);
		fz_write_seed(dir, lock ? "locked-session" : "session", seedbuf);
	}
	/* a locked agent and a session-bind of a forwarding */
	sshbuf_reset(seedbuf);
	sshbuf_put_u8(seedbuf, 1);
	sshbuf_put_u8(m, SSH_AGENTC_EXTENSION);
	sshbuf_put_cstring(m, "session-bind@openssh.com");
	sshbuf_put_stringb(m, blob);
	sshbuf_put_stringb(m, sid);
	sshbuf_put_stringb(m, sig);
	sshbuf_put_u8(m, 1);
	put_msg(m);
	fz_write_seed(dir, "locked-bind", seedbuf);
	/* another extension while locked */
	sshbuf_reset(seedbuf);
	sshbuf_put_u8(seedbuf, 1);
	sshbuf_put_u8(m, SSH_AGENTC_EXTENSION);
	sshbuf_put_cstring(m, "query");
	put_msg(m);
	fz_write_seed(dir, "locked-query", seedbuf);
	free(sigp);
	sshbuf_free(sig);
	sshbuf_free(sid);
	sshbuf_free(blob);
	sshbuf_free(m);
	sshbuf_free(seedbuf);
	sshkey_free(key);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("HPN_FUZZ_SEEDS");

	(void)argc;
	(void)argv;
	fz_init("agent_fuzz");
	/* test_one()'s set-up */
	devnull = devnull_or_die();
	allowed_providers = xstrdup("");
	websafe_allowlist = xstrdup("*");
	setenv("DISPLAY", "", 1);	/* no askpass */
	templates();
	if (dir != NULL) {
		write_seeds(dir);
		fflush(NULL);
		_exit(0);
	}
	return 0;
}
