# HPN patch set for OpenSSH portable: top-level build.
#
#   make                  fetch, verify, patch, configure and build the hpn suite
#   make stock            the same pristine tarball, without our series
#   make site, stock-site sshd of each with PAM and Kerberos (for check-security)
#   make check            unit, security fixes, HPN regress, OpenSSH's full suite,
#                         interop, package, ASan/UBSan and TSan, fuzzing 30 s a
#                         harness (what CI runs)
#   make check-quick      unit, security, HPN regress and a subset of OpenSSH's t-exec
#   make demo             the main job: stock scp vs hpnscp on a 1 Gbit/s, 50 ms path
#   make bench            HPN vs stock vs iperf3 over RTTs, ciphers, modes (hours)
#   make bench-quick      the same at 50 ms, aes128-gcm, 256 MiB (~8 min)
#   make bench-tree       trees of files: hpnscp -r/hpnsftp vs stock, rsync, iperf3
#   make bench-bigbdp     1 Gbit/s x 1 s and x 2 s (BDP 125, 250 MB) vs iperf3 (~40 min)
#   make bench-metrics    hpnssh -o Metrics=yes on the emulated path, with plots
#   make bench-jump       through a jump host vs direct, hpn and stock (~5 min)
#   make bench-setup      connection set-up at 0, 50, 100 ms: round trips (~3 min)
#   make bench-mptcp      UseMPTCP over two emulated paths vs iperf3 (~4 min)
#   make bench-lanes      hpnscp -n 4 on a lossy and a clean path vs iperf3 (~10 min)
#   make bench-hash       verified resume's hashing of 10 GiB vs reading it (~5 min)
#   make bench-cpu        CPU-bound, loopback: instructions, copies, syscalls per GiB
#                         counted, the limits, timed runs; hpn vs stock (~40 min)
#   make bench-cipher     the threaded AES-CTR alone vs one EVP context (~2 min)
#   make install PREFIX=/usr DESTDIR=/tmp/x
#   make fuzz             every libFuzzer harness (tests/fuzz) for FUZZ_SECONDS (60)
#   make fuzz-long        ... until FUZZ_RUNS (10^7) or FUZZ_LONG_SECONDS (8 h) each
#   make dev-tree         an editable quilt tree (see HACKING.md)
#   make deps             apt-get install what the build and tests need (root)
#
# Never run the test targets with -j: OpenSSH's regress suite is serial.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := all
# Parallelism lives inside the OpenSSH build only.
.NOTPARALLEL:

include upstream/openssh.mk

# Another release than the pin: a tarball the user brings (OPENSSH_TARBALL=,
# its version read from it), or a version to fetch (OPENSSH_VERSION= on the
# command line); either with OPENSSH_SHA256= for a release other than the
# pinned one (scripts/lib/upstream.sh, SECURITY.md).
ifneq ($(strip $(OPENSSH_TARBALL))$(filter command line environment,$(origin OPENSSH_VERSION)),)
UPSTREAM_ID := $(shell OPENSSH_TARBALL='$(OPENSSH_TARBALL)' OPENSSH_VERSION='$(if $(strip $(OPENSSH_TARBALL)),,$(OPENSSH_VERSION))' OPENSSH_SHA256='$(OPENSSH_SHA256)' scripts/lib/upstream.sh print)
ifneq ($(word 1,$(UPSTREAM_ID)),ok)
$(error $(UPSTREAM_ID))
endif
override OPENSSH_VERSION := $(word 2,$(UPSTREAM_ID))
override OPENSSH_SHA256 := $(word 3,$(UPSTREAM_ID))
endif
export OPENSSH_VERSION OPENSSH_SHA256 OPENSSH_TARBALL

TOP := $(CURDIR)
B := $(TOP)/build
DL := $(B)/dl
LOGS := $(B)/logs
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

# Install layout.  Changing any of these reconfigures the hpn build.
PREFIX ?= /usr/local
ifeq ($(PREFIX),/usr)
SYSCONFDIR ?= /etc/hpnssh
else
SYSCONFDIR ?= $(PREFIX)/etc/hpnssh
endif
LIBEXECDIR ?= $(PREFIX)/libexec
MANDIR ?= $(PREFIX)/share/man
PIDDIR ?= /run
PRIVSEP_USER ?= hpnsshd
PRIVSEP_PATH ?= /var/empty
DESTDIR ?=

# The optional features.  FEATURES=lean (the default: the developer build
# and the tests) leaves out PAM, Kerberos/GSSAPI, built-in FIDO security
# keys, SELinux and audit; FEATURES=dist builds them in as Debian's and
# Fedora's openssh packages do, which is how "make deb" and "make rpm" build
# (README.Debian).  PAM's service name is hpnsshd (/etc/pam.d/hpnsshd), so
# that hpnsshd never runs sshd's stack by accident.  systemd readiness
# (sd_notify) is OpenSSH's own on Linux, with no library.
FEATURES ?= lean
ifeq ($(FEATURES),lean)
FEATURE_CONFIGURE := --without-pam --without-security-key-builtin \
	--without-kerberos5 --without-selinux
else ifeq ($(FEATURES),dist)
FEATURE_CONFIGURE := --with-pam --with-pam-service=hpnsshd --with-kerberos5=/usr \
	--with-security-key-builtin --with-selinux --with-audit=linux
else
$(error FEATURES must be lean or dist, not '$(FEATURES)')
endif

# xxh128, verified resume's default checksum, from libxxhash: XXHASH=auto
# (the default) uses it where the build finds it, yes requires it (the
# packages), no leaves it out (scripts/build.sh's configure step says which).
# The header's presence is part of the configure stamp, so that installing
# libxxhash-dev (make deps) reconfigures.
XXHASH ?= auto
ifeq ($(filter auto yes no,$(XXHASH)),)
$(error XXHASH must be auto, yes or no, not '$(XXHASH)')
endif
XXHASH_STAMP := xxhash=$(XXHASH)$(if $(wildcard /usr/include/xxhash.h),+header)
export HPN_XXHASH := $(XXHASH)

# What both builds share, so that hpn and stock differ only by our series.
COMMON_CONFIGURE := --with-privsep-user=$(PRIVSEP_USER) \
	--with-privsep-path=$(PRIVSEP_PATH) --with-pid-dir=$(PIDDIR) \
	--with-zlib --with-libedit --with-mantype=doc $(FEATURE_CONFIGURE) \
	--with-xauth=/usr/bin/xauth
HPN_CONFIGURE := --prefix=$(PREFIX) --sysconfdir=$(SYSCONFDIR) \
	--libexecdir=$(LIBEXECDIR) --mandir=$(MANDIR) \
	$(COMMON_CONFIGURE) $(EXTRA_CONFIGURE)
STOCK_CONFIGURE := --prefix=/usr/local --sysconfdir=/usr/local/etc/ssh \
	$(COMMON_CONFIGURE) $(EXTRA_CONFIGURE)
# The site flavours: the hpn series (site) and the stock tarball
# (stock-site) with PAM and Kerberos/GSSAPI, which the builds above leave
# out, for the security tests of code compiled only with them
# (tests/security: CVE-2026-60000, 60001, 106553, 106555).  Only the
# server is built; it is never installed, its paths point into build/.
SITE_COMMON := $(subst --without-pam,--with-pam,$(subst --without-kerberos5,--with-kerberos5,$(COMMON_CONFIGURE)))
SITE_CONFIGURE := --prefix=$(B)/site/prefix $(SITE_COMMON) $(EXTRA_CONFIGURE)
STOCK_SITE_CONFIGURE := --prefix=$(B)/stock-site/prefix $(SITE_COMMON) $(EXTRA_CONFIGURE)
SITE_PROGS := sshd sshd-session sshd-auth

HPN_DIR := $(B)/hpn
STOCK_DIR := $(B)/stock
SITE_DIR := $(B)/site
STOCK_SITE_DIR := $(B)/stock-site
TREE := openssh-$(OPENSSH_VERSION)
HPN_TREE := $(HPN_DIR)/$(TREE)
STOCK_TREE := $(STOCK_DIR)/$(TREE)
SITE_TREE := $(SITE_DIR)/$(TREE)
STOCK_SITE_TREE := $(STOCK_SITE_DIR)/$(TREE)

SERIES := patches/series $(shell sed -e 's/\#.*//' patches/series 2>/dev/null | awk 'NF {print "patches/" $$1}')
SRCS := $(wildcard src/*.c src/*.h src/*/*.c src/*/*.h src/*/*.mk)

.PHONY: all build stock site stock-site fetch deps rebase-check demo demo-loopback bench bench-quick bench-cpu bench-cipher bench-deps bench-tree bench-bigbdp bench-metrics bench-jump bench-setup bench-mptcp bench-lanes bench-hash \
	install dev-tree patch-check \
	check check-quick check-upstream check-unit check-install check-security check-hpn check-openssh check-openssh-quick \
	check-prep print-hpn-tree clean distclean FORCE

all build: $(HPN_DIR)/.built
	@echo "hpn suite built in $(HPN_TREE) ($$($(HPN_TREE)/ssh -V 2>&1))"

stock: $(STOCK_DIR)/.built
	@echo "stock OpenSSH built in $(STOCK_TREE) ($$($(STOCK_TREE)/ssh -V 2>&1))"

site: $(SITE_DIR)/.built
	@echo "hpn sshd with PAM and GSSAPI built in $(SITE_TREE) ($$($(SITE_TREE)/sshd -V 2>&1))"

stock-site: $(STOCK_SITE_DIR)/.built
	@echo "stock sshd with PAM and GSSAPI built in $(STOCK_SITE_TREE) ($$($(STOCK_SITE_TREE)/sshd -V 2>&1))"

fetch: $(DL)/.fetched

deps:
	@scripts/deps.sh install

# ---------------------------------------------------------------------------
# fetch -> verify -> patch -> configure -> build

# Which release (version and hash) the trees are made from; rewritten only
# when it changes, so that bringing another tarball rebuilds everything.
$(B)/.upstream-id: FORCE
	@mkdir -p $(@D); echo '$(OPENSSH_VERSION) $(OPENSSH_SHA256)' | cmp -s - $@ || \
	    echo '$(OPENSSH_VERSION) $(OPENSSH_SHA256)' > $@

$(DL)/.fetched: upstream/openssh.mk scripts/fetch-upstream.sh scripts/lib/upstream.sh $(B)/.upstream-id
	@scripts/deps.sh check build
	@scripts/fetch-upstream.sh $(DL)
	@touch $@

$(HPN_DIR)/.prepared: $(DL)/.fetched scripts/prepare-tree.sh scripts/lib/series.sh $(SERIES)
	@scripts/prepare-tree.sh hpn $(DL) $(HPN_DIR)
	@touch $@

$(STOCK_DIR)/.prepared: $(DL)/.fetched scripts/prepare-tree.sh scripts/lib/series.sh
	@scripts/prepare-tree.sh stock $(DL) $(STOCK_DIR)
	@touch $@

$(SITE_DIR)/.prepared: $(DL)/.fetched scripts/prepare-tree.sh scripts/lib/series.sh $(SERIES)
	@scripts/prepare-tree.sh hpn $(DL) $(SITE_DIR)
	@touch $@

$(STOCK_SITE_DIR)/.prepared: $(DL)/.fetched scripts/prepare-tree.sh scripts/lib/series.sh
	@scripts/prepare-tree.sh stock $(DL) $(STOCK_SITE_DIR)
	@touch $@

# Rewritten only when the arguments change, so they act as a dependency.
$(HPN_DIR)/.configure-args: FORCE
	@mkdir -p $(@D); echo '$(HPN_CONFIGURE) $(XXHASH_STAMP)' | cmp -s - $@ || echo '$(HPN_CONFIGURE) $(XXHASH_STAMP)' > $@
$(STOCK_DIR)/.configure-args: FORCE
	@mkdir -p $(@D); echo '$(STOCK_CONFIGURE)' | cmp -s - $@ || echo '$(STOCK_CONFIGURE)' > $@
$(SITE_DIR)/.configure-args: FORCE
	@mkdir -p $(@D); echo '$(SITE_CONFIGURE) $(XXHASH_STAMP)' | cmp -s - $@ || echo '$(SITE_CONFIGURE) $(XXHASH_STAMP)' > $@
$(STOCK_SITE_DIR)/.configure-args: FORCE
	@mkdir -p $(@D); echo '$(STOCK_SITE_CONFIGURE)' | cmp -s - $@ || echo '$(STOCK_SITE_CONFIGURE)' > $@

$(HPN_DIR)/.configured: $(HPN_DIR)/.prepared $(HPN_DIR)/.configure-args
	@scripts/build.sh configure hpn $(HPN_TREE) $(LOGS) $(HPN_CONFIGURE)
	@touch $@
$(STOCK_DIR)/.configured: $(STOCK_DIR)/.prepared $(STOCK_DIR)/.configure-args
	@scripts/build.sh configure stock $(STOCK_TREE) $(LOGS) $(STOCK_CONFIGURE)
	@touch $@
$(SITE_DIR)/.configured: $(SITE_DIR)/.prepared $(SITE_DIR)/.configure-args
	@scripts/deps.sh check site
	@scripts/build.sh configure site $(SITE_TREE) $(LOGS) $(SITE_CONFIGURE)
	@touch $@
$(STOCK_SITE_DIR)/.configured: $(STOCK_SITE_DIR)/.prepared $(STOCK_SITE_DIR)/.configure-args
	@scripts/deps.sh check site
	@scripts/build.sh configure stock-site $(STOCK_SITE_TREE) $(LOGS) $(STOCK_SITE_CONFIGURE)
	@touch $@

$(HPN_DIR)/.built: $(HPN_DIR)/.configured $(SRCS)
	@scripts/build.sh sync-src hpn $(HPN_TREE) $(LOGS)
	@scripts/build.sh make hpn $(HPN_TREE) $(LOGS) -j$(JOBS)
	@touch $@
$(STOCK_DIR)/.built: $(STOCK_DIR)/.configured
	@scripts/build.sh make stock $(STOCK_TREE) $(LOGS) -j$(JOBS)
	@touch $@
$(SITE_DIR)/.built: $(SITE_DIR)/.configured $(SRCS)
	@scripts/build.sh sync-src site $(SITE_TREE) $(LOGS)
	@scripts/build.sh make site $(SITE_TREE) $(LOGS) -j$(JOBS) $(SITE_PROGS)
	@touch $@
$(STOCK_SITE_DIR)/.built: $(STOCK_SITE_DIR)/.configured
	@scripts/build.sh make stock-site $(STOCK_SITE_TREE) $(LOGS) -j$(JOBS) $(SITE_PROGS)
	@touch $@

FORCE:

# ---------------------------------------------------------------------------
# the main job: stock scp and hpnscp over an emulated 1 Gbit/s, 50 ms path
# (bench/demo-wan.sh, bench/README.md); the benchmark behind it

bench-deps:
	@scripts/deps.sh install bench

demo: bench-deps $(HPN_DIR)/.built $(STOCK_DIR)/.built check-prep
	@HPN_TREE='$(BENCH_HPN_TREE)' STOCK_TREE='$(BENCH_STOCK_TREE)' bench/demo-wan.sh

# The smallest end-to-end run: hpnscp over loopback (no path emulation).
demo-loopback: $(HPN_DIR)/.built check-prep
	@scripts/demo-loopback.sh $(HPN_TREE)

# Other builds can be measured on the same path:
#   make bench BENCH_HPN_TREE=/path/to/tree BENCH_STOCK_TREE=/path/to/tree
# Options (RTTS, SIZE, REPS, CIPHERS, MODES...: bench/README.md) come from
# the command line or the environment.
BENCH_HPN_TREE ?= $(HPN_TREE)
BENCH_STOCK_TREE ?= $(STOCK_TREE)

bench: bench-deps $(HPN_DIR)/.built $(STOCK_DIR)/.built check-prep
	@HPN_TREE='$(BENCH_HPN_TREE)' STOCK_TREE='$(BENCH_STOCK_TREE)' bench/run-bench.sh

bench-quick: bench-deps $(HPN_DIR)/.built $(STOCK_DIR)/.built check-prep
	@HPN_TREE='$(BENCH_HPN_TREE)' STOCK_TREE='$(BENCH_STOCK_TREE)' \
	    RTTS="$${RTTS:-50}" SIZE="$${SIZE:-256M}" REPS="$${REPS:-3}" \
	    CIPHERS="$${CIPHERS:-aes128-gcm@openssh.com}" bench/run-bench.sh

# CPU-bound transfers on loopback (bench/cpu-bench.sh): instructions, bytes
# copied, system calls and context switches per GiB, counted
# (bench/cpu-count.sh: valgrind, perf), the machine's limits, then
# throughput and CPU per GB of interleaved runs; hpn against stock per
# cipher; SIZE REPS MODES CASES COUNT LIMITS COUNT_SIZE SYS_SIZE...
bench-cpu: bench-deps $(HPN_DIR)/.built $(STOCK_DIR)/.built check-prep
	@HPN_TREE='$(BENCH_HPN_TREE)' STOCK_TREE='$(BENCH_STOCK_TREE)' bench/cpu-bench.sh

# Trees of files and single files over the emulated path (bench/tree-bench.sh):
# hpnscp/hpnsftp vs stock vs rsync -e hpnssh vs iperf3; RTTS TREES BIG REPS...
bench-tree: bench-deps $(HPN_DIR)/.built $(STOCK_DIR)/.built check-prep
	@HPN_TREE='$(BENCH_HPN_TREE)' STOCK_TREE='$(BENCH_STOCK_TREE)' bench/tree-bench.sh

# The biggest paths (bench/bigbdp-bench.sh; build/bench-bigbdp/): 1 Gbit/s
# with a round trip of 1 s and 2 s, socket buffers up to 1 GiB, pipe and
# scp up, sftp both ways vs iperf3; PREV_TREE= another build of ours beside,
# HPN_ANCHOR= HPN-SSH built by hand (about 40 minutes, 14 GB of tmpfs).
bench-bigbdp: bench-deps $(HPN_DIR)/.built check-prep
	@HPN_TREE='$(BENCH_HPN_TREE)' STOCK_TREE='$(BENCH_STOCK_TREE)' \
	    bench/bigbdp-bench.sh $(B)/bench-bigbdp/$$(date +%Y%m%d-%H%M%S)

# Transfers through a jump host against direct ones (bench/jump-bench.sh;
# build/bench-jump/; about 5 minutes).
bench-jump: bench-deps $(HPN_DIR)/.built $(STOCK_DIR)/.built check-prep
	@HPN_TREE='$(HPN_TREE)' STOCK_TREE='$(STOCK_TREE)' bench/jump-bench.sh $(B)/bench-jump

# Connection set-up (EarlySend, README.hpn section 15): hpnssh, hpnscp,
# hpnsftp and stock ssh against hpnsshd, stock and Debian's sshd, -J, at
# RTTS="0 50 100" ms, medians of REPS=5; round trips beyond loopback (the
# copies: in all) and the targets, in build/bench-setup/report.txt (about
# 3 minutes).
bench-setup: bench-deps $(HPN_DIR)/.built $(STOCK_DIR)/.built check-prep
	@HPN_TREE='$(HPN_TREE)' STOCK_TREE='$(STOCK_TREE)' bench/setup-bench.sh $(B)/bench-setup

# UseMPTCP: one scp over two emulated paths (netpath --paths 2, 500 Mbit/s
# and 50 ms each) against iperf3 on both at once, without MPTCP and stock
# (report in build/bench-mptcp/; about 4 minutes).
bench-mptcp: bench-deps $(HPN_DIR)/.built $(STOCK_DIR)/.built check-prep
	@HPN_TREE='$(HPN_TREE)' STOCK_TREE='$(STOCK_TREE)' bench/mptcp-bench.sh $(B)/bench-mptcp

# hpnscp -n N: 1 GiB over the emulated 1 Gbit/s, 100 ms path with 0.01 %
# loss (cubic), then clean, against iperf3 -P 1 and -P N and -n 1 (report
# in build/bench-lanes/; about 10 minutes).
bench-lanes: bench-deps $(HPN_DIR)/.built $(STOCK_DIR)/.built check-prep
	@HPN_TREE='$(HPN_TREE)' STOCK_TREE='$(STOCK_TREE)' bench/lanes-bench.sh $(B)/bench-lanes

# Verified resume's comparison: a 10 GiB file on disk hashed through
# hpnsftp-server's hash-range, cold and warm, with the default checksum and
# with SHA-256, against cat reading it cold (bench/hash-bench.sh;
# build/bench-hash/; about 5 minutes, 11 GB of disk).
bench-hash: $(HPN_DIR)/.built
	@HPN_TREE='$(HPN_TREE)' bench/hash-bench.sh $(B)/bench-hash

# hpnssh -o Metrics=yes on the emulated path, clean and lossy, with plots
# (bench/metrics-demo.sh; build/bench-metrics/; about a minute).
bench-metrics: bench-deps $(HPN_DIR)/.built check-prep
	@HPN_TREE='$(HPN_TREE)' bench/metrics-demo.sh $(B)/bench-metrics

# The threaded AES-CTR core alone against one OpenSSL EVP context.
bench-cipher:
	@$(MAKE) --no-print-directory -C bench/cipher run

# ---------------------------------------------------------------------------
# install: upstream's install into a staging directory, renamed to the hpn
# names, then copied into $(DESTDIR); existing config files are kept.

install: $(HPN_DIR)/.built
	@scripts/install.sh $(HPN_TREE) "$(DESTDIR)"

# ---------------------------------------------------------------------------
# packages (contrib/, built under build/pkg/ from the verified tarballs)

.PHONY: deb rpm check-package

# Debian source and binary packages (hpnssh-client, hpnssh-server), built
# with FEATURES=dist, then lintian: build/pkg/deb/.
deb: $(DL)/.fetched
	@contrib/package.sh deb $(DL) $(B)/pkg

# rpmbuild -bb of contrib/rpm/hpnssh.spec; prints rpm -qlp: build/pkg/rpm/.
rpm: $(DL)/.fetched
	@contrib/package.sh rpm $(DL) $(B)/pkg

# As root on Debian: build the .debs, install them, host keys, log in and
# transfer with hpnssh on port 2222; PAM, Kerberos (a KDC of its own), the
# FIDO helper and systemd readiness with the real parts (test-site.sh);
# purge, nothing left (test-deb.sh).  Then build the RPMs: requirements and
# rpmlint, the shipped configuration read by the packaged programs
# (test-rpm.sh).  ~4 minutes.
check-package: $(DL)/.fetched check-prep
	@timeout --kill-after=60 2700 tests/package/test-deb.sh $(TOP)
	@timeout --kill-after=60 1800 tests/package/test-rpm.sh $(TOP)

# ---------------------------------------------------------------------------
# developer workflow (HACKING.md)

dev-tree: $(DL)/.fetched
	@scripts/dev-tree.sh $(DL) $(B)/dev

# A dry run of the next rebase (scripts/rebase-check.sh): the series onto
# UPSTREAM= a release tarball or a directory (a tree exported from
# openssh-portable), each failing hunk by patch; report and .rej files in
# build/rebase-check/.
rebase-check:
	@[ -n "$(UPSTREAM)" ] || { echo "usage: make rebase-check UPSTREAM=/path/openssh-X.tar.gz|DIR" >&2; exit 2; }
	@scripts/rebase-check.sh '$(UPSTREAM)' $(B)/rebase-check

# Applies the series to a fresh tree: fails on a missing patch, a DEP-3
# header missing, fuzz or offset.
patch-check: $(DL)/.fetched
	@scripts/patch-check.sh $(DL) $(B)/patch-check

# ---------------------------------------------------------------------------
# tests (never with -j)

check-prep:
	@scripts/deps.sh check test
	@scripts/test-prep.sh $(PRIVSEP_USER) $(PRIVSEP_PATH)

# SUBDIR_CHECK=check-plain leaves out ctr-mt's ThreadSanitizer builds
# (make check runs them once, in check-asan-quick).
SUBDIR_CHECK ?= check
check-unit: $(HPN_DIR)/.built
	@$(MAKE) --no-print-directory -C tests/unit TREE=$(HPN_TREE) \
	    SUBDIR_CHECK=$(SUBDIR_CHECK) check

check-install: $(HPN_DIR)/.built
	@tests/install/test-install.sh $(TOP)

check-hpn: $(HPN_DIR)/.built $(STOCK_DIR)/.built check-prep
	@scripts/run-regress.sh hpn $(HPN_TREE) $(LOGS) $(STOCK_TREE)

# Another release brought by a user: refused without its hash, our fixes
# upstream has are skipped, a patch that stops applying is named.
check-upstream: $(DL)/.fetched
	@tests/upstream/test-tarball.sh $(TOP)

# Our security fixes (tests/security): each test also shows the flaw on
# the stock build of the base, so that it is known to detect it.  The
# tests of PAM and GSSAPI code run the site flavours' sshd.
check-security: $(HPN_DIR)/.built $(STOCK_DIR)/.built $(SITE_DIR)/.built \
    $(STOCK_SITE_DIR)/.built check-prep
	@HPN_SITE_TREE=$(SITE_TREE) HPN_STOCK_SITE_TREE=$(STOCK_SITE_TREE) \
	    scripts/run-regress.sh security $(HPN_TREE) $(LOGS) $(STOCK_TREE)

check-openssh: $(HPN_DIR)/.built check-prep
	@scripts/run-regress.sh openssh $(HPN_TREE) $(LOGS)

check-openssh-quick: $(HPN_DIR)/.built check-prep
	@scripts/run-regress.sh openssh-quick $(HPN_TREE) $(LOGS)

check-stock-openssh: $(STOCK_DIR)/.built check-prep
	@scripts/run-regress.sh openssh $(STOCK_TREE) $(LOGS)

# What CI runs (.ci/run: `make deps check`): patch-check, check-upstream,
# check-unit, check-install, check-security, check-hpn, check-openssh (the
# full suite), check-interop, check-asan-quick, fuzz (10 s a harness:
# CHECK_FUZZ_SECONDS) and check-package.
# OpenSSH's suite, mostly waiting, runs in the background on a copy of the
# tree in two workers, then check-asan-quick and fuzz, niced, while ours
# run in the foreground (scripts/check-all.sh); the package test runs
# last, alone.  `make stress` and the whole `make check-asan` are apart.
check:
	@MAKE='$(MAKE)' scripts/check-all.sh
	@echo "make check: all tests passed"

print-hpn-tree:
	@echo '$(HPN_TREE)'

check-quick: patch-check check-upstream check-unit check-install check-security check-hpn check-openssh-quick
	@echo "make check-quick: all tests passed"

# ---------------------------------------------------------------------------

clean:
	rm -rf $(HPN_DIR) $(STOCK_DIR) $(SITE_DIR) $(STOCK_SITE_DIR) $(B)/dev $(B)/patch-check $(LOGS)
	@$(MAKE) --no-print-directory -C tests/unit clean

# Also forgets the downloaded (verified) tarballs.
distclean: clean
	rm -rf $(B)

# ---------------------------------------------------------------------------
# interop matrix: hpnssh/hpnscp/hpnsftp and hpnsshd against Debian's OpenSSH,
# stock OpenSSH of the base (make stock), PuTTY, Dropbear, asyncssh and paramiko, on loopback and an
# emulated 50 ms path; results in build/interop/results.md (tests/interop/
# README.md; root; about 4 minutes)

.PHONY: interop check-interop

interop: $(HPN_DIR)/.built $(STOCK_DIR)/.built check-prep
	@timeout --kill-after=30 1200 tests/interop/run.sh $(HPN_TREE) $(STOCK_TREE) $(B)/interop

check-interop: interop

# ---------------------------------------------------------------------------
# fuzzing: the libFuzzer harnesses of tests/fuzz (README.md there) on a tree
# of their own, build/fuzz/tree, configured with clang-14 and ASan + UBSan
# + the fuzzer's coverage (scripts/fuzz.sh).  make fuzz: FUZZ_SECONDS (60)
# each; make check runs it at 15 s a harness.  make fuzz-long: each until
# FUZZ_RUNS executions (10^7) or FUZZ_LONG_SECONDS (8 hours), as processes
# of FUZZ_SEGMENT seconds (1800) one after the other, FUZZ_JOBS at a time
# (1).  FUZZ_ONLY="name ..." picks harnesses.  Fails on any crash,
# leak, timeout or sanitizer report, printing it and the input.

.PHONY: fuzz fuzz-long fuzz-build

FUZZ_SECONDS ?= 60
FUZZ_LONG_SECONDS ?= 28800
FUZZ_RUNS ?= 10000000
FUZZ_SEGMENT ?= 1800
FUZZ_JOBS ?= 1

fuzz-build: $(DL)/.fetched
	@scripts/deps.sh check fuzz
	@scripts/fuzz.sh build $(DL) $(B)/fuzz $(LOGS) $(HPN_CONFIGURE)

fuzz: $(DL)/.fetched
	@scripts/deps.sh check fuzz
	@FUZZ_MODE=short FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_JOBS=$(FUZZ_JOBS) \
	    scripts/fuzz.sh all $(DL) $(B)/fuzz $(LOGS) $(HPN_CONFIGURE)

fuzz-long: $(DL)/.fetched
	@scripts/deps.sh check fuzz
	@FUZZ_MODE=long FUZZ_LONG_SECONDS=$(FUZZ_LONG_SECONDS) FUZZ_RUNS=$(FUZZ_RUNS) \
	    FUZZ_SEGMENT=$(FUZZ_SEGMENT) FUZZ_JOBS=$(FUZZ_JOBS) \
	    scripts/fuzz.sh all $(DL) $(B)/fuzz $(LOGS) $(HPN_CONFIGURE)

# ---------------------------------------------------------------------------
# fault injection (tests/stress/run-stress.sh; root: network namespaces;
# python3-paramiko for the misbehaving peers; ~4 minutes) and the sanitizer
# build: ASan+UBSan tree in build/asan/, our unit and regress tests,
# OpenSSH's t-exec subset and the hardest stress phases on it, then the
# threaded AES-CTR under ThreadSanitizer (tests/sanitize/check-asan.sh).
# STRESS_PHASES picks phases (loss rekey mux kill concurrent malformed).

.PHONY: stress check-asan check-asan-quick

stress: $(HPN_DIR)/.built check-prep
	@timeout --kill-after=30 1200 tests/stress/run-stress.sh $(HPN_TREE) $(STRESS_PHASES)

check-asan: $(DL)/.fetched $(STOCK_DIR)/.built check-prep
	@tests/sanitize/check-asan.sh $(DL) $(B)/asan $(LOGS) $(STOCK_TREE) $(HPN_CONFIGURE)

# In make check: unit tests, the malformed/kill/rekey stress phases under
# ASan+UBSan, and ThreadSanitizer (the regress suites only in check-asan).
check-asan-quick: $(DL)/.fetched $(STOCK_DIR)/.built check-prep
	@CHECK_ASAN_STEPS="unit stress tsan" \
	    tests/sanitize/check-asan.sh $(DL) $(B)/asan $(LOGS) $(STOCK_TREE) $(HPN_CONFIGURE)
