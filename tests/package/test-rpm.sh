#!/bin/bash
# test-rpm.sh TOP
#
# The RPM packages, built here as on a Debian machine ("make rpm":
# rpmbuild of contrib/rpm/hpnssh.spec with Debian's rpm, linking Debian's
# -dev libraries): their requirements (rpm -qpR) name what the
# distribution's openssh needs, PAM, Kerberos (GSSAPI), libfido2, audit and
# SELinux, and rpmlint reports no error on the packages and the spec
# (contrib/rpm/hpnssh.rpmlintrc holds the filtered findings, each with its
# reason); the packaged hpnsshd and hpnssh read the shipped configuration
# (-T, -G) as the distribution would have it.  Installs nothing; its output
# stays in build/pkg/rpm.  ~2 minutes.
set -euo pipefail
top=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
start=$(date +%s)
say() { printf 'rpm-test: %s\n' "$*"; }
die() { printf 'rpm-test: FAIL: %s\n' "$*" >&2; exit 1; }
t() { local s=$1; shift; timeout --kill-after=10 "$s" "$@"; }

for c in rpm rpmbuild rpmlint rpm2cpio cpio unshare; do
	command -v "$c" >/dev/null || die "$c missing (make deps: rpm rpmlint)"
done
tmp=$(mktemp -d /tmp/hpn-rpmtest.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 143' TERM INT

say "make rpm"
t 1800 make --no-print-directory -C "$top" rpm > "$tmp/rpm.log" 2>&1 ||
	{ tail -n 40 "$tmp/rpm.log"; die "make rpm failed"; }
out="$top/build/pkg/rpm"
server=$(ls "$out"/RPMS/*/hpnssh-server-*.rpm) clients=$(ls "$out"/RPMS/*/hpnssh-clients-*.rpm)

# What each package requires: sonames found by rpm's dependency generator
# in the binaries, and what the spec names.
requires() {	# requires RPM PATTERN WHAT...: rpm -qpR RPM matches each PATTERN
	local r=$1 req
	req=$(rpm -qpR "$r" 2>/dev/null)
	shift
	while [ $# -ge 2 ]; do
		echo "$req" | grep -qE "$1" || { echo "$req" | sed 's/^/  /'; die "$(basename "$r") does not require $2 ($1)"; }
		shift 2
	done
}
requires "$server" '^pam$' 'pam (package)' '^libpam\.so\.0' 'PAM (libpam)' \
    '^libgssapi_krb5\.so\.2' 'Kerberos (libgssapi_krb5)' '^libkrb5\.so\.3' 'Kerberos (libkrb5)' \
    '^libaudit\.so\.1' 'audit (libaudit)' '^libselinux\.so\.1' 'SELinux (libselinux)' \
    '^libxxhash\.so\.0' 'xxh128 of hpnsftp-server (libxxhash)'
requires "$clients" '^libfido2\.so\.1' 'FIDO (libfido2)' '^libgssapi_krb5\.so\.2' 'Kerberos (libgssapi_krb5)' \
    '^libselinux\.so\.1' 'SELinux (libselinux)' '^libxxhash\.so\.0' 'xxh128 of hpnscp (libxxhash)'
say "rpm -qpR: hpnssh-server requires pam, libpam, libgssapi_krb5, libkrb5, libaudit, libselinux," \
    "libxxhash; hpnssh-clients libfido2, libgssapi_krb5, libselinux, libxxhash"

# The spec's own BuildRequires name the -devel packages of the same.
spec="$top/contrib/rpm/hpnssh.spec"
for d in pam-devel krb5-devel libfido2-devel audit-libs-devel libselinux-devel xxhash-devel; do
	grep -qE "^BuildRequires:[[:space:]]+$d\$" "$spec" || die "hpnssh.spec: no BuildRequires: $d"
done

# The shipped configuration, read by the packaged programs themselves: the
# files unpacked (rpm2cpio) under $tmp/root, each Include pointed there;
# hpnsshd in a mount namespace of its own whose /run is empty but for its
# privilege separation directory.
mkdir -p "$tmp/root"
for r in "$server" "$clients"; do
	(cd "$tmp/root" && rpm2cpio "$r" | cpio -idm --quiet) || die "rpm2cpio $(basename "$r")"
done
r="$tmp/root"
sed "s|^Include /etc/hpnssh/|Include $r/etc/hpnssh/|" "$r/etc/hpnssh/hpnsshd_config" > "$tmp/sshd_config"
sed "s|^Include /etc/hpnssh/|Include $r/etc/hpnssh/|" "$r/etc/hpnssh/hpnssh_config" > "$tmp/ssh_config"
grep -q "^Include $r/" "$tmp/sshd_config" && grep -q "^Include $r/" "$tmp/ssh_config" ||
	die "the shipped hpnsshd_config or hpnssh_config has no Include of its .d directory"
"$r/usr/bin/hpnssh-keygen" -q -t ed25519 -N '' -f "$tmp/hostkey"
unshare --mount --propagation private sh -c \
    'mount -t tmpfs hpnrpmtest /run && mkdir -m 0755 /run/hpnsshd && "$1" -T -f "$2" -o HostKey="$3"' \
    sh "$r/usr/sbin/hpnsshd" "$tmp/sshd_config" "$tmp/hostkey" > "$tmp/sshd-T" 2>&1 ||
	{ cat "$tmp/sshd-T"; die "the packaged hpnsshd rejects the shipped configuration"; }
for kv in "usepam yes" "pamservicename hpnsshd" "gssapiauthentication yes" "syslogfacility AUTHPRIV" \
    "x11forwarding yes" "printmotd no" "acceptenv LC_\*" "subsystem sftp /usr/libexec/hpnsftp-server"; do
	grep -qx "$kv" "$tmp/sshd-T" || die "hpnsshd -T of the shipped configuration: no '$kv'"
done
"$r/usr/bin/hpnssh" -G -F "$tmp/ssh_config" host.invalid > "$tmp/ssh-G" 2>&1 ||
	{ cat "$tmp/ssh-G"; die "the packaged hpnssh rejects the shipped configuration"; }
for kv in "gssapiauthentication yes" "sendenv LC_\*" "port 2222" \
    "resumehash xxh128,sha256,blake2b512"; do
	grep -qx "$kv" "$tmp/ssh-G" || die "hpnssh -G of the shipped configuration: no '$kv'"
done
[ -f "$r/etc/pam.d/hpnsshd" ] || die "no /etc/pam.d/hpnsshd in hpnssh-server"
say "shipped configuration: hpnsshd -T has UsePAM yes (service hpnsshd), GSSAPI, AUTHPRIV, LANG LC_*;" \
    "hpnssh -G GSSAPI, SendEnv LC_*, ResumeHash xxh128 first"

rc=0
rpmlint -r "$top/contrib/rpm/hpnssh.rpmlintrc" "$spec" "$out"/RPMS/*/*.rpm > "$tmp/rpmlint.log" 2>&1 || rc=$?
sed 's/^/  /' "$tmp/rpmlint.log"
summary=$(grep -E '[0-9]+ errors?, [0-9]+ warnings?' "$tmp/rpmlint.log" | tail -n 1)
[ -n "$summary" ] || die "rpmlint printed no summary (exit $rc)"
errors=$(echo "$summary" | sed -E 's/.* ([0-9]+) errors?,.*/\1/')
[ "$errors" -eq 0 ] || die "rpmlint: $summary"
say "rpmlint: $summary"
say "passed in $(( $(date +%s) - start ))s: make rpm, requirements, rpmlint"
