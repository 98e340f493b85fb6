# Shell functions (bash) for a throwaway sshd and a matching client config,
# used by the demo and the benchmark.  Source it; nothing runs on load.
#
#   tsshd_setup DIR              keys (host and user) and known_hosts in DIR
#   tsshd_start DIR TREE PORT ADDR [PREFIX...]
#                                start TREE's sshd on ADDR:PORT (PREFIX, e.g.
#                                "ip netns exec ns", runs it elsewhere);
#                                pid in DIR/sshd-PORT.pid
#   tsshd_client_config DIR PORT ADDR > FILE
#   tsshd_stop DIR PORT          end that sshd by its pid (TERM, then KILL)
#
# Optional environment for tsshd_start: TSSHD_LOGLEVEL (ERROR), TSSHD_EXTRA
# (more sshd_config lines), TSSHD_SESSION_PATH (an sshd-session to run
# instead of TREE's, e.g. a wrapper that measures it; default TREE/sshd-session),
# TSSHD_SFTP_SERVER (the sftp subsystem; default TREE/sftp-server).

tsshd_setup() {
	local d=$1
	mkdir -p "$d"
	chmod 700 "$d"
	[ -f "$d/host_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C tsshd-host -f "$d/host_ed25519"
	[ -f "$d/id_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C tsshd-user -f "$d/id_ed25519"
	cp "$d/id_ed25519.pub" "$d/authorized_keys"
	echo "* $(cat "$d/host_ed25519.pub")" > "$d/known_hosts"
}

tsshd_start() {
	local d=$1 tree=$2 port=$3 addr=$4 i
	shift 4
	cat > "$d/sshd_config-$port" <<EOC
Port $port
ListenAddress $addr
HostKey $d/host_ed25519
PidFile $d/sshd-$port.pid
AuthorizedKeysFile $d/authorized_keys
StrictModes no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
PerSourcePenalties no
MaxStartups 100:30:200
SshdSessionPath ${TSSHD_SESSION_PATH:-$tree/sshd-session}
SshdAuthPath $tree/sshd-auth
Subsystem sftp ${TSSHD_SFTP_SERVER:-$tree/sftp-server}
LogLevel ${TSSHD_LOGLEVEL:-ERROR}
${TSSHD_EXTRA:-}
EOC
	rm -f "$d/sshd-$port.pid"
	"$@" "$tree/sshd" -f "$d/sshd_config-$port" -E "$d/sshd-$port.log" || return 1
	for i in $(seq 1 50); do
		[ -s "$d/sshd-$port.pid" ] && return 0
		sleep 0.1
	done
	echo "tsshd: sshd on $addr:$port did not start; log:" >&2
	cat "$d/sshd-$port.log" >&2
	return 1
}

tsshd_client_config() {
	local d=$1 port=$2 addr=$3
	cat <<EOC
Host *
	Hostname $addr
	Port $port
	User $(id -un)
	IdentityFile $d/id_ed25519
	IdentitiesOnly yes
	UserKnownHostsFile $d/known_hosts
	GlobalKnownHostsFile /dev/null
	StrictHostKeyChecking yes
	BatchMode yes
	LogLevel ERROR
EOC
}

tsshd_stop() {
	local d=$1 port=$2 pid i
	[ -s "$d/sshd-$port.pid" ] || return 0
	pid=$(cat "$d/sshd-$port.pid")
	kill -TERM "$pid" 2>/dev/null || { rm -f "$d/sshd-$port.pid"; return 0; }
	for i in $(seq 1 50); do
		kill -0 "$pid" 2>/dev/null || break
		# Gone but not yet reaped (a daemon's parent is init): done.
		case "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" in
		Z|"") break ;;
		esac
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	rm -f "$d/sshd-$port.pid"
}
