/*
 * HPN patch set: what every fuzz harness shares (tests/fuzz/README.md).
 *
 *  - fatal() and cleanup_exit() end the process in OpenSSH; under the
 *    fuzzer they end the step that called them instead: FZ_STEP() runs a
 *    statement and returns 0, or 1 when it ended in fatal() or exit (a
 *    peer's bytes that make OpenSSH close the connection).  A fatal()
 *    outside a step is a harness error and aborts.
 *  - A step that ends that way leaves behind what it had allocated (the
 *    process would have exited).  The allocations made during a step are
 *    tracked (sanitizer malloc hooks; libcrypto's are not: it keeps what
 *    it sets up on first use); once the harness has reset the state it
 *    owns, fz_step_release() frees what the step left, so that
 *    LeakSanitizer reports only real leaks: memory lost by code that went
 *    on running.
 *  - The log goes nowhere unless HPN_FUZZ_LOG is set (debug3, to stderr),
 *    to reproduce a crash with the code's own messages.
 */
#ifndef HPN_FUZZ_COMMON_H
#define HPN_FUZZ_COMMON_H

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>

extern sigjmp_buf fz_jmp;
extern volatile int fz_armed;

/* Run stmt; 1 if it ended in fatal()/cleanup_exit(), else 0. */
#define FZ_STEP(stmt) __extension__ ({				\
	int fz_r_ = 0;						\
	fz_step_begin();					\
	if (sigsetjmp(fz_jmp, 0) == 0) {			\
		fz_armed = 1;					\
		stmt;						\
	} else							\
		fz_r_ = 1;					\
	fz_armed = 0;						\
	fz_step_end(fz_r_);					\
	fz_r_;							\
})

void	fz_init(const char *progname);
/* A harness's own error (not the code's): "progname: ...", then abort(). */
void	fz_bad(const char *, ...)
	    __attribute__((noreturn)) __attribute__((format(printf, 1, 2)));
/* b written to DIR/NAME (HPN_FUZZ_SEEDS), or fz_bad(). */
struct sshbuf;
void	fz_write_seed(const char *dir, const char *name,
	    const struct sshbuf *b);
/* A new directory $TMPDIR/NAME.XXXXXX (/tmp without TMPDIR) in buf,
 * or fz_bad(); the harness removes it (atexit). */
void	fz_scratch(char *buf, size_t len, const char *name);
void	fz_step_begin(void);
void	fz_step_end(int failed);
size_t	fz_step_release(void);
void	fz_exit(int) __attribute__((noreturn));

/* A cursor over the fuzzer's input. */
struct fz_in {
	const uint8_t *p;
	size_t len;
};
int	fz_u8(struct fz_in *, uint8_t *);
int	fz_u16(struct fz_in *, uint16_t *);
int	fz_u32(struct fz_in *, uint32_t *);
int	fz_u64(struct fz_in *, uint64_t *);
/* up to max bytes, length given by a u16 before them (shortened at the end) */
int	fz_bytes(struct fz_in *, size_t max, const uint8_t **, size_t *);

#endif /* HPN_FUZZ_COMMON_H */
