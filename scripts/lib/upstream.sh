#!/bin/bash
# upstream.sh: which OpenSSH release this build uses, and its SHA-256.
#
# Sourced by scripts/*.sh (sets OPENSSH_VERSION, OPENSSH_SHA256 and defines
# upstream_check_tarball); run as "upstream.sh print" by the Makefile, which
# prints "ok VERSION SHA256" or one line that starts with "error:".
#
# The pin is upstream/openssh.mk.  A user may bring another release with
#   OPENSSH_TARBALL=/path/openssh-X.tar.gz [OPENSSH_SHA256=hash]
# Its version is read from the tarball's top directory (openssh-X/).  The
# pinned release must match the pinned hash; for any other release the hash
# must be given (from the release announcement), so that a tarball is never
# used unverified.  Without a tarball, OPENSSH_VERSION=X OPENSSH_SHA256=hash
# names another release for make fetch to find in Debian's indexes (as
# openssh_X.orig.tar.gz or .orig.tar.xz: tar reads either).  Whether our series applies to it is prepare-tree.sh's
# answer: it names the first patch that does not.

_upstream_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
_upstream_env_sha=${OPENSSH_SHA256:-}
_upstream_env_ver=${OPENSSH_VERSION:-}
. "$_upstream_top/upstream/openssh.mk"
PIN_VERSION=$OPENSSH_VERSION
PIN_SHA256=$OPENSSH_SHA256

# upstream_tarball_version FILE: the X of its openssh-X/ top directory
# (gzip or xz: tar finds out).
upstream_tarball_version() {
	tar -tf "$1" 2>/dev/null | sed -n '1{s,^\./,,;s,/.*,,;p}' | sed -n 's/^openssh-//p'
}

# upstream_orig_ext FILE: gz or xz, by its first bytes (not its name).
upstream_orig_ext() {
	case "$(head -c 6 "$1" | od -An -tx1 | tr -d ' \n')" in
	1f8b*) echo gz ;;
	fd377a585a00) echo xz ;;
	*) return 1 ;;
	esac
}

# upstream_dl_tarball DLDIR: the verified-on-fetch orig tarball of
# OPENSSH_VERSION there (openssh_X.orig.tar.gz or .tar.xz), or nothing.
upstream_dl_tarball() {
	local e
	for e in gz xz; do
		if [ -f "$1/openssh_${OPENSSH_VERSION}.orig.tar.$e" ]; then
			echo "$1/openssh_${OPENSSH_VERSION}.orig.tar.$e"
			return 0
		fi
	done
	return 1
}

# upstream_resolve: sets OPENSSH_VERSION/OPENSSH_SHA256 for OPENSSH_TARBALL;
# sets _upstream_err to the reason and returns 1 when it cannot be used.
upstream_resolve() {
	local t=$OPENSSH_TARBALL v
	if [ ! -f "$t" ]; then
		_upstream_err="error: OPENSSH_TARBALL=$t: no such file"
		return 1
	fi
	v=$(upstream_tarball_version "$t")
	if [ -z "$v" ]; then
		_upstream_err="error: OPENSSH_TARBALL=$t is not an OpenSSH release tarball (no openssh-X/ directory inside)"
		return 1
	fi
	if [ -n "$_upstream_env_ver" ] && [ "$_upstream_env_ver" != "$PIN_VERSION" ] &&
	    [ "$_upstream_env_ver" != "$v" ]; then
		_upstream_err="error: OPENSSH_VERSION=$_upstream_env_ver but $t holds openssh-$v"
		return 1
	fi
	if [ "$v" = "$PIN_VERSION" ]; then
		OPENSSH_VERSION=$v OPENSSH_SHA256=$PIN_SHA256
		return 0
	fi
	if [ -z "$_upstream_env_sha" ] || [ "$_upstream_env_sha" = "$PIN_SHA256" ]; then
		_upstream_err="error: $t is OpenSSH $v, not the pinned $PIN_VERSION: give its SHA-256 from the release announcement as OPENSSH_SHA256=... to try the patch set on it (SECURITY.md, 'Moving to the next release')"
		return 1
	fi
	OPENSSH_VERSION=$v OPENSSH_SHA256=$_upstream_env_sha
}

# upstream_check_tarball FILE: its SHA-256 is the expected one.
upstream_check_tarball() {
	local h
	h=$(sha256sum "$1" | awk '{print $1}')
	[ "$h" = "$OPENSSH_SHA256" ] && return 0
	printf 'error: SHA-256 mismatch for %s (OpenSSH %s)\n  expected %s\n  got      %s\n' \
	    "$1" "$OPENSSH_VERSION" "$OPENSSH_SHA256" "$h" >&2
	return 1
}

# Another release by version and hash, fetched (no tarball given): the
# hash is required, and must not be the pin's (_upstream_err as above).
upstream_resolve_version() {
	if [ -z "$_upstream_env_sha" ] || [ "$_upstream_env_sha" = "$PIN_SHA256" ]; then
		_upstream_err="error: OPENSSH_VERSION=$_upstream_env_ver is not the pinned $PIN_VERSION: give its SHA-256 (of the release tarball Debian lists, from the release announcement or Debian's .dsc) as OPENSSH_SHA256=... (SECURITY.md, 'Moving to the next release')"
		return 1
	fi
	OPENSSH_VERSION=$_upstream_env_ver OPENSSH_SHA256=$_upstream_env_sha
}

# A release other than the pin, named by a tarball or by version: resolved
# once; its error printed (on stdout for "upstream.sh print", which the
# Makefile reads) and fatal.
_upstream_err=
if [ -n "${OPENSSH_TARBALL:-}" ]; then
	upstream_resolve
elif [ -n "$_upstream_env_ver" ] && [ "$_upstream_env_ver" != "$PIN_VERSION" ]; then
	upstream_resolve_version
fi || {
	if [ "${1:-}" = print ] && [ "${BASH_SOURCE[0]}" = "$0" ]; then
		echo "$_upstream_err"
		exit 0
	fi
	echo "$_upstream_err" >&2
	exit 1
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	case "${1:-}" in
	print) echo "ok $OPENSSH_VERSION $OPENSSH_SHA256" ;;
	*) echo "usage: $0 print" >&2; exit 2 ;;
	esac
fi
