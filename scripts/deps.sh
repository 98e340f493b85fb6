#!/bin/bash
# deps.sh check build|test|bench   or   deps.sh install [build|test|bench|all]
#
# What the build and the tests need from a Debian/Ubuntu machine, checked by
# the command or file each package provides.  "install" apt-gets them (root).
set -euo pipefail

# package:probe  (probe: a command name, or an absolute path)
build_pkgs="gcc:cc make:make patch:patch xz-utils:xz ca-certificates:/etc/ssl/certs
libssl-dev:/usr/include/openssl/evp.h zlib1g-dev:/usr/include/zlib.h
libedit-dev:/usr/include/histedit.h pkg-config:pkg-config quilt:quilt"
test_pkgs="putty-tools:plink dropbear-bin:dropbear iproute2:ip iputils-ping:ping
iperf3:iperf3 procps:ps psmisc:fuser openssh-client:/usr/bin/ssh
openssh-server:/usr/sbin/sshd python3:python3 groff-base:groff
python3-asyncssh:/usr/lib/python3/dist-packages/asyncssh/__init__.py
python3-paramiko:/usr/lib/python3/dist-packages/paramiko/__init__.py"
bench_pkgs="gnuplot-nox:gnuplot jq:jq rsync:rsync"

want() {
	case "$1" in
	build) echo "$build_pkgs" ;;
	test) echo "$build_pkgs $test_pkgs" ;;
	bench|all) echo "$build_pkgs $test_pkgs $bench_pkgs" ;;
	*) echo "deps.sh: unknown set $1" >&2; exit 2 ;;
	esac
}

missing() {
	local p pkg probe
	for p in $(want "$1"); do
		pkg=${p%%:*} probe=${p#*:}
		case "$probe" in
		/*) [ -e "$probe" ] && continue ;;
		*) command -v "$probe" >/dev/null 2>&1 && continue ;;
		esac
		echo "$pkg"
	done
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
		exit 0
	fi
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps: need root to install: $m (try: sudo make deps)" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	echo "deps: apt-get install $m"
	apt-get update -q || echo "deps: apt-get update failed; trying the install anyway" >&2
	# The tests run Debian's sshd (openssh-server) by hand as an interop
	# peer; its package must not start the system service.
	prc=/usr/sbin/policy-rc.d
	if [ ! -e "$prc" ]; then
		printf '#!/bin/sh\nexit 101\n' > "$prc"
		chmod 755 "$prc"
		trap 'rm -f "$prc"' EXIT
	fi
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $m
	;;
*)
	echo "usage: $0 check build|test|bench | install [build|test|bench|all]" >&2
	exit 2
	;;
esac
