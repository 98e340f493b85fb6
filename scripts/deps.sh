#!/bin/bash
# deps.sh check build|pkg|site|test|fuzz|bench   or   deps.sh install [build|pkg|site|test|fuzz|bench|all]
#
# What the build, the packages and the tests need from a Debian/Ubuntu
# machine, checked by the command or file each package provides.  "install"
# apt-gets them (root); "make deps" installs all of them, so that every
# target (make, make deb, make rpm, make check) finds what it needs.
set -euo pipefail

# package:probe  (probe: a command name, or an absolute path)
build_pkgs="gcc:cc make:make patch:patch xz-utils:xz ca-certificates:/etc/ssl/certs
libssl-dev:/usr/include/openssl/evp.h zlib1g-dev:/usr/include/zlib.h
libedit-dev:/usr/include/histedit.h pkg-config:pkg-config quilt:quilt"
test_pkgs="valgrind:valgrind putty-tools:plink dropbear-bin:dropbear iproute2:ip iputils-ping:ping
iperf3:iperf3 procps:ps psmisc:fuser openssh-client:/usr/bin/ssh
openssh-server:/usr/sbin/sshd python3:python3 groff-base:groff
python3-asyncssh:/usr/lib/python3/dist-packages/asyncssh/__init__.py
python3-paramiko:/usr/lib/python3/dist-packages/paramiko/__init__.py
python3-xxhash:/usr/lib/python3/dist-packages/xxhash/__init__.py
gnuplot-nox:gnuplot nftables:nft golang-go:go"
# make deb / make rpm: the packaging tools and what the packaged build
# (FEATURES=dist: PAM, Kerberos/GSSAPI, FIDO, SELinux, audit; XXHASH=yes:
# libxxhash, which the plain build uses where it is and does without
# otherwise, so "check build" does not ask for it) links; the package test
# (check-package) also runs a real MIT KDC.
pkg_pkgs="build-essential:/usr/share/build-essential/list debhelper:dh
dpkg-dev:dpkg-buildpackage lintian:lintian rpm:rpmbuild rpmlint:rpmlint
libpam0g-dev:/usr/include/security/pam_appl.h
libkrb5-dev:/usr/include/gssapi/gssapi_krb5.h libfido2-dev:/usr/include/fido.h
libaudit-dev:/usr/include/libaudit.h libselinux1-dev:/usr/include/selinux/selinux.h
krb5-kdc:/usr/sbin/krb5kdc krb5-admin-server:/usr/sbin/kadmin.local krb5-user:kinit
libxxhash-dev:/usr/include/xxhash.h"
bench_pkgs="jq:jq rsync:rsync linux-perf:perf"
# make fuzz: clang with libFuzzer and the sanitizers' runtime, and
# llvm-symbolizer for the reports' stacks.
fuzz_pkgs="clang-14:clang-14
libclang-rt-14-dev:/usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a
llvm-14:llvm-symbolizer-14"
# The site flavours (sshd with PAM and Kerberos) and their security tests:
# a KDC of the test's own (krb5kdc, kdb5_util, kadmin.local, kinit) and a
# GSSAPI client (python3-gssapi).
site_pkgs="libpam0g-dev:/usr/include/security/pam_appl.h
libkrb5-dev:krb5-config krb5-kdc:/usr/sbin/krb5kdc
krb5-admin-server:/usr/sbin/kadmin.local krb5-user:kinit
python3-gssapi:/usr/lib/python3/dist-packages/gssapi/__init__.py"

want() {
	case "$1" in
	build) echo "$build_pkgs" ;;
	pkg) echo "$build_pkgs $pkg_pkgs" ;;
	site) echo "$build_pkgs $site_pkgs" ;;
	fuzz) echo "$build_pkgs $fuzz_pkgs" ;;
	test) echo "$build_pkgs $pkg_pkgs $site_pkgs $test_pkgs $fuzz_pkgs" ;;
	bench|all) echo "$build_pkgs $pkg_pkgs $site_pkgs $test_pkgs $fuzz_pkgs $bench_pkgs" ;;
	*) echo "deps.sh: unknown set $1" >&2; exit 2 ;;
	esac
}

missing() {
	local p pkg probe
	for p in $(want "$1"); do
		pkg=${p%%:*} probe=${p#*:}
		case "$probe" in
		/*) compgen -G "$probe" >/dev/null && continue ;;	# a glob too
		*) command -v "$probe" >/dev/null 2>&1 && continue ;;
		esac
		echo "$pkg"
	done
}

# tests/regress/hpn-early.sh builds a Go x/crypto/ssh server
# (tests/interop/goserver) with GOPROXY=off: its module, pinned in go.mod and
# go.sum, is fetched into Go's module cache here, by Go's own client.  No
# go (golang-go is in the test set) or no module fails: the test would
# otherwise leave that server out.
go_modules() {
	case "$1" in test|bench|all) ;; *) return 0 ;; esac
	command -v go >/dev/null 2>&1 || {
		echo "deps: error: no go (golang-go) for tests/interop/goserver" >&2
		return 1
	}
	local dir
	dir="$(cd "$(dirname "$0")/.." && pwd)/tests/interop/goserver"
	if (cd "$dir" && GOFLAGS=-mod=mod GOPROXY=off go mod download) >/dev/null 2>&1; then
		return 0
	fi
	echo "deps: go mod download (tests/interop/goserver)"
	(cd "$dir" && GOFLAGS=-mod=mod go mod download) || {
		echo "deps: error: the Go module of tests/interop/goserver could not be fetched (hpn-early's Go server needs it)" >&2
		return 1
	}
}

case "${1:-}" in
check)
	m=$(missing "${2:-build}" | tr '\n' ' ')
	if [ -n "$m" ]; then
		echo "deps: missing packages for '${2:-build}': $m" >&2
		echo "deps: run 'make deps' as root, or: apt-get install $m" >&2
		exit 1
	fi
	;;
install)
	m=$(missing "${2:-all}" | tr '\n' ' ')
	if [ -z "$m" ]; then
		echo "deps: everything is installed"
		go_modules "${2:-all}" || exit 1
		exit 0
	fi
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps: need root to install: $m (try: sudo make deps)" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	echo "deps: apt-get install $m"
	apt-get update -q || echo "deps: apt-get update failed; trying the install anyway" >&2
	# The tests run Debian's sshd (openssh-server) and MIT's KDC
	# (krb5-kdc) by hand; their packages must not start system services.
	prc=/usr/sbin/policy-rc.d
	if [ ! -e "$prc" ]; then
		printf '#!/bin/sh\nexit 101\n' > "$prc"
		chmod 755 "$prc"
		trap 'rm -f "$prc"' EXIT
	fi
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $m
	go_modules "${2:-all}" || exit 1
	;;
*)
	echo "usage: $0 check build|pkg|site|test|fuzz|bench | install [build|pkg|site|test|fuzz|bench|all]" >&2
	exit 2
	;;
esac
