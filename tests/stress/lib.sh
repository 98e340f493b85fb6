# Shell functions (bash) for tests/stress/run-stress.sh.  Source it.
#
#   ok MSG / bad MSG / info MSG     record and print a result
#   bg_track PID                    a process of ours, ended by cleanup
#   stop_pid PID [SECS]             TERM, wait up to SECS (5), then KILL
#   kids PID                        direct children (pids, one per line)
#   tree_pids PID                   PID and all its descendants
#   tree_rss_kb PID [COMM_REGEX]    sum of RSS (KiB) over that tree
#   wait_gone SECS PID...           wait until none of the PIDs exists
#   now                             seconds since the epoch, with decimals
#   mbps BYTES SECS                 MB/s (1e6 bytes)

STRESS_PASS=0
STRESS_FAIL=0
STRESS_PIDS=""

ok() {
	STRESS_PASS=$((STRESS_PASS + 1))
	printf '  ok    %s\n' "$*"
}
bad() {
	STRESS_FAIL=$((STRESS_FAIL + 1))
	printf '  FAIL  %s\n' "$*"
}
info() {
	printf '        %s\n' "$*"
}

bg_track() {
	STRESS_PIDS="$STRESS_PIDS $1"
}

stop_pid() {
	local p=$1 secs=${2:-5} i
	[ -n "$p" ] || return 0
	kill -TERM "$p" 2>/dev/null || return 0
	for i in $(seq 1 $((secs * 10))); do
		kill -0 "$p" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL "$p" 2>/dev/null || true
}

kids() {
	ps -o pid= --ppid "$1" 2>/dev/null | tr -d ' '
}

# One ps snapshot; awk walks the tree from $1.
tree_pids() {
	ps -e -o pid=,ppid= | awk -v root="$1" '
	{ kid[$2] = kid[$2] " " $1; seen[$1] = 1 }
	END {
		if (!(root in seen)) exit
		n = 1; q[1] = root
		for (i = 1; i <= n; i++) {
			print q[i]
			c = split(kid[q[i]], a, " ")
			for (j = 1; j <= c; j++) q[++n] = a[j]
		}
	}'
}

tree_rss_kb() {
	ps -e -o pid=,ppid=,rss=,comm= | awk -v root="$1" -v re="${2:-.}" '
	{ kid[$2] = kid[$2] " " $1; rss[$1] = $3; comm[$1] = $4 }
	END {
		if (!(root in rss)) { print 0; exit }
		n = 1; q[1] = root; s = 0
		for (i = 1; i <= n; i++) {
			if (comm[q[i]] ~ re) s += rss[q[i]]
			c = split(kid[q[i]], a, " ")
			for (j = 1; j <= c; j++) q[++n] = a[j]
		}
		print s
	}'
}

# tree_mem PID: "SSHD_KB ALL_KB NSESSION" in one snapshot: RSS of the
# sshd processes and sftp-server under PID, of everything under it, and the
# number of sshd-session processes (two per authenticated connection)
tree_mem() {
	ps -e -o pid=,ppid=,rss=,comm= | awk -v root="$1" '
	{ kid[$2] = kid[$2] " " $1; rss[$1] = $3; comm[$1] = $4 }
	END {
		if (!(root in rss)) { print "0 0 0"; exit }
		n = 1; q[1] = root
		for (i = 1; i <= n; i++) {
			p = q[i]; all += rss[p]
			if (comm[p] ~ /^(sshd|sshd-session|sshd-auth|sftp-server)$/) s += rss[p]
			if (comm[p] == "sshd-session") ns++
			c = split(kid[p], a, " ")
			for (j = 1; j <= c; j++) q[++n] = a[j]
		}
		print s + 0, all + 0, ns + 0
	}'
}

wait_gone() {
	local secs=$1 i p alive
	shift
	for i in $(seq 1 $((secs * 10))); do
		alive=""
		for p in "$@"; do
			kill -0 "$p" 2>/dev/null && alive="$alive $p"
		done
		[ -z "$alive" ] && return 0
		sleep 0.1
	done
	return 1
}

now() {
	date +%s.%N
}

mbps() {
	awk -v b="$1" -v s="$2" 'BEGIN { printf "%.1f", (s > 0 ? b / s / 1e6 : 0) }'
}

elapsed() {
	awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'
}

fsize() {
	stat -c %s "$1" 2>/dev/null || echo 0
}

sum_of() {
	sha256sum < "$1" | cut -d' ' -f1
}
