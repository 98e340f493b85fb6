/*
 * match_pattern() (match-pattern-linear.patch): the same answers as a
 * table of every prefix pair (the textbook dynamic programme, written
 * here as the reference) on random patterns of '*', '?' and two letters,
 * and no exponential time on patterns of many '*'.  Built
 * against the stock tree's match.o, the last test is killed by its
 * alarm (SIGALRM).
 */

#include "includes.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_helper.h"
#include "match.h"

void tests(void);
void benchmarks(void);

void
benchmarks(void)
{
	printf("no benchmarks\n");
}

/* A small generator of our own: the same cases on every run. */
static unsigned long long rng = 0x243f6a8885a308d3ULL;

static u_int
next(u_int n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (u_int)(rng % n);
}

static void
random_word(char *buf, size_t max, const char *alphabet)
{
	size_t i, len = next(max);

	for (i = 0; i < len; i++)
		buf[i] = alphabet[next(strlen(alphabet))];
	buf[len] = '\0';
}

/* Reference: m[i][j] is whether the first i of s match the first j of p. */
static int
reference(const char *s, const char *p)
{
	u_char m[17][17];
	size_t i, j, ls = strlen(s), lp = strlen(p);

	memset(m, 0, sizeof(m));
	m[0][0] = 1;
	for (j = 1; j <= lp; j++)
		m[0][j] = p[j - 1] == '*' && m[0][j - 1];
	for (i = 1; i <= ls; i++) {
		for (j = 1; j <= lp; j++) {
			if (p[j - 1] == '*')
				m[i][j] = m[i][j - 1] || m[i - 1][j];
			else
				m[i][j] = m[i - 1][j - 1] &&
				    (p[j - 1] == '?' || p[j - 1] == s[i - 1]);
		}
	}
	return m[ls][lp];
}

static void
fixed_tests(void)
{
	TEST_START("match_pattern: empty strings and lone stars");
	ASSERT_INT_EQ(match_pattern("", ""), 1);
	ASSERT_INT_EQ(match_pattern("", "*"), 1);
	ASSERT_INT_EQ(match_pattern("", "**"), 1);
	ASSERT_INT_EQ(match_pattern("", "?"), 0);
	ASSERT_INT_EQ(match_pattern("a", ""), 0);
	ASSERT_INT_EQ(match_pattern("abc", "*"), 1);
	ASSERT_INT_EQ(match_pattern("abc", "a*"), 1);
	ASSERT_INT_EQ(match_pattern("abc", "*c"), 1);
	ASSERT_INT_EQ(match_pattern("abc", "*b"), 0);
	ASSERT_INT_EQ(match_pattern("abc", "a?c"), 1);
	ASSERT_INT_EQ(match_pattern("abc", "a??c"), 0);
	ASSERT_INT_EQ(match_pattern("user@host", "*@h*t"), 1);
	ASSERT_INT_EQ(match_pattern("a\\b", "a\\b"), 1);	/* no escapes */
	ASSERT_INT_EQ(match_pattern("ab", "a\\b"), 0);
	TEST_DONE();
}

static void
fnmatch_tests(void)
{
	char s[16], p[16];
	int i, want;

	TEST_START("match_pattern: as the reference, 200000 cases");
	for (i = 0; i < 200000; i++) {
		random_word(s, 12, "ab");
		random_word(p, 10, "ab*?");
		want = reference(s, p);
		if (match_pattern(s, p) != want) {
			fprintf(stderr, "\"%s\" against \"%s\": reference %d\n",
			    s, p, want);
			ASSERT_INT_EQ(match_pattern(s, p), want);
		}
	}
	TEST_DONE();
}

static void
cost_tests(void)
{
	char s[4096 + 2], p[2 * 40 + 2];
	int i;

	for (i = 0; i < 40; i++) {
		p[2 * i] = '*';
		p[2 * i + 1] = 'a';
	}
	p[80] = 'b';
	p[81] = '\0';
	memset(s, 'a', 4096);
	s[4096] = '\0';

	TEST_START("match_pattern: 40 \"*a\" then b against 4096 a's, 3 s");
	/* the recursion this replaced does not end here: killed */
	alarm(3);
	ASSERT_INT_EQ(match_pattern(s, p), 0);
	s[4096] = 'b';
	s[4097] = '\0';
	ASSERT_INT_EQ(match_pattern(s, p), 1);
	alarm(0);
	TEST_DONE();
}

void
tests(void)
{
	fixed_tests();
	fnmatch_tests();
	cost_tests();
}
