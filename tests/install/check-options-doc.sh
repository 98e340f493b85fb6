#!/bin/bash
# check-options-doc.sh HPNSSH HPNSSHD HPNSSHD_CONFIG HPNSSH_CONFIG.5 HPNSSHD_CONFIG.5
#
# Every keyword that "hpnssh -G" or "hpnsshd -T" prints must have its entry
# (".It Cm Keyword", compared case-insensitively) in hpnssh_config(5) or
# hpnsshd_config(5): a new option (ours or upstream's) without its man-page
# entry fails here.  -G and -T print an option only when it is set for some
# of them (forwardings, ProxyJump, AllowUsers...), so both run once with
# defaults and once with those options set.
#
# hpnsshd -T runs unprivileged (as "nobody" when run as root), so it needs
# neither the privilege separation user nor its directory.
set -euo pipefail
[ $# -eq 5 ] || { echo "usage: $0 HPNSSH HPNSSHD HPNSSHD_CONFIG HPNSSH_CONFIG.5 HPNSSHD_CONFIG.5" >&2; exit 2; }
ssh=$1 sshd=$2 sshd_config=$3 man_client=$4 man_server=$5
err=0
bad() { echo "options-doc: FAIL: $*" >&2; err=1; }

# Keywords that -G/-T print under a name that upstream documents elsewhere or
# not at all, with the reason.  Keep this list short and explicit: a keyword
# missing from the man page and not listed here fails the test.
#   keyword                 (client|server)  why
exceptions='
'
excepted() {	# excepted client|server KEYWORD
	printf '%s\n' "$exceptions" | awk -v s="$1" -v k="$2" \
	    '$1 == k && $2 == s { found = 1 } END { exit !found }'
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hpn-optdoc.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
run_as=()
if [ "$(id -u)" -eq 0 ]; then
	chmod 0755 "$tmp"
	chown nobody "$tmp"
	run_as=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
	# nobody may not reach them where they are (a private DESTDIR)
	cp "$sshd" "$tmp/hpnsshd"
	cp "$sshd_config" "$tmp/hpnsshd_config"
	chmod 0755 "$tmp/hpnsshd"
	chmod 0644 "$tmp/hpnsshd_config"
	sshd=$tmp/hpnsshd sshd_config=$tmp/hpnsshd_config
fi
"$(dirname "$ssh")/hpnssh-keygen" -q -t ed25519 -N '' -C optdoc -f "$tmp/hostkey" </dev/null
[ -z "${run_as[*]}" ] || chown nobody "$tmp/hostkey"

documented() {	# documented MANPAGE -> lower-case keywords of ".It Cm Keyword"
	awk '$1 == ".It" && $2 == "Cm" { print tolower($3) }' "$1" | sort -u
}
keywords() {	# keywords < dump -> lower-case first words
	awk 'NF { print tolower($1) }' | sort -u
}

# Client: defaults, then options that are printed only when set (ProxyJump
# and ProxyCommand exclude each other).
set_client=(-o BindAddress=127.0.0.1 -o BindInterface=lo -o CertificateFile=/nonexistent
	-o ControlPath=/nonexistent -o DynamicForward=1080 -o HostKeyAlias=alias
	-o IdentityAgent=/nonexistent -o KbdInteractiveDevices=bsdauth
	-o KnownHostsCommand=/bin/true -o LocalCommand=true -o 'LocalForward=1 h:2'
	-o PKCS11Provider=/nonexistent -o PreferredAuthentications=publickey
	-o RemoteCommand=true -o 'RemoteForward=3 h:4' -o RevokedHostKeys=/nonexistent
	-o SendEnv=HPNTEST -o SetEnv=HPNTEST=1 -o Tag=t -o ProxyJump=jump.invalid)
client=$({ "$ssh" -G -F none host.invalid
	"$ssh" -G -F none "${set_client[@]}" host.invalid
	"$ssh" -G -F none -o ProxyCommand=true host.invalid; } </dev/null 2>"$tmp/err" | keywords) ||
	{ cat "$tmp/err" >&2; bad "$ssh -G failed"; }
[ "$(printf '%s\n' "$client" | grep -c .)" -gt 50 ] || bad "$ssh -G printed too little"

set_server=(-o AcceptEnv=HPNTEST -o AllowGroups=g -o AllowUsers=u -o DenyGroups=g
	-o DenyUsers=u -o SetEnv=HPNTEST=1)
server=$({ "${run_as[@]}" "$sshd" -T -f "$sshd_config" -o HostKey="$tmp/hostkey"
	"${run_as[@]}" "$sshd" -T -f "$sshd_config" -o HostKey="$tmp/hostkey" "${set_server[@]}"; } \
	</dev/null 2>"$tmp/err" | keywords) ||
	{ cat "$tmp/err" >&2; bad "$sshd -T failed"; }
[ "$(printf '%s\n' "$server" | grep -c .)" -gt 50 ] || bad "$sshd -T printed too little"

check() {	# check client|server "KEYWORDS" MANPAGE
	local side=$1 kws=$2 man=$3 k n=0 flag=-G
	[ "$side" = server ] && flag=-T
	[ -f "$man" ] || { bad "$man missing"; return; }
	for k in $(comm -23 <(printf '%s\n' "$kws") <(documented "$man")); do
		if excepted "$side" "$k"; then continue; fi
		bad "$side option '$k' is printed by $flag but has no '.It Cm' entry in $(basename "$man")"
		n=$((n + 1))
	done
	echo "options-doc: $side: $(printf '%s\n' "$kws" | grep -c .) keywords printed, $n undocumented"
}
check client "$client" "$man_client"
check server "$server" "$man_server"
exit $err
